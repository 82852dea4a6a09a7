//! The DaemonSets GKE itself runs in `kube-system`, made and removed as the cluster's settings
//! change (what [`crate::kube::Addons`] holds, told by the GKE side); their pods are made by the
//! DaemonSet controller like any other's ([`super::daemonset_pods`]).
//!
//! Which DaemonSets, with which node selectors, from published `kubectl get ds -n kube-system`
//! captures of GKE clusters — GoogleCloudPlatform/kubeflow-distribution#379 (`fluentbit-gke`
//! on `kubernetes.io/os=linux`; `gke-metadata-server` on
//! `beta.kubernetes.io/os=linux,iam.gke.io/gke-metadata-server-enabled=true`;
//! `gke-metrics-agent` with no selector), GoogleCloudPlatform/pubsec-declarative-toolkit#457
//! (`anetd`, `filestore-node` with 3 containers, `fluentbit-gke`), #580 (`gcsfusecsi-node` with
//! 2 containers, `gke-metadata-server`, `gke-metrics-agent` with 2), rapidsai/deployment#572
//! (`nvidia-gpu-device-plugin-medium-cos` pods with 2 containers), and a capture of a GKE 1.3x
//! cluster listing `kube-proxy` on
//! `kubernetes.io/os=linux,node.kubernetes.io/kube-proxy-ds-ready=true` with 0 desired, `netd` on
//! `cloud.google.com/gke-netd-ready=true,kubernetes.io/os=linux`, `pdcsi-node` on
//! `kubernetes.io/os=linux` and the six device-plugin variants
//! (`nvidia-gpu-device-plugin-{small,medium,large}-{cos,ubuntu}`, no node selector: they select by
//! affinity) present with 0 desired on a cluster without GPU nodes:
//! - `anetd` with Dataplane V2 (`networkConfig.datapathProvider: ADVANCED_DATAPATH`): "GKE
//!   deploys the GKE Dataplane V2 controller as a DaemonSet named anetd to each node in the
//!   cluster" and such clusters use no kube-proxy
//!   (<https://cloud.google.com/kubernetes-engine/docs/concepts/dataplane-v2>). Without it the
//!   `kube-proxy` DaemonSet exists but runs nowhere: GKE runs kube-proxy as a static pod, and
//!   only nodes of a cluster with `KUBE_PROXY_DAEMONSET` carry the label it selects
//!   (kubernetes/kubernetes@cluster/gce/util.sh, `build-linux-node-labels`); static pods are not
//!   simulated;
//! - `gke-metadata-server` with Workload Identity Federation
//!   (`workloadIdentityConfig.workloadPool`), on the nodes of `GKE_METADATA` pools, which carry
//!   its label;
//! - `gcsfusecsi-node` with `addonsConfig.gcsFuseCsiDriverConfig`, `filestore-node` with
//!   `gcpFilestoreCsiDriverConfig`, `pdcsi-node` with `gcePersistentDiskCsiDriverConfig` (on by
//!   default); their templates tolerate every taint, as the drivers' own node manifests do
//!   (GoogleCloudPlatform/gcs-fuse-csi-driver@deploy/base/node/node.yaml,
//!   kubernetes-sigs/gcp-compute-persistent-disk-csi-driver@deploy/kubernetes/base/node_linux/node.yaml);
//! - `fluentbit-gke` unless logging is off (`loggingService: none`), `gke-metrics-agent` unless
//!   monitoring is off (`monitoringService: none`), `netd` always;
//! - the NVIDIA GPU device plugin, only on nodes with `cloud.google.com/gke-accelerator`
//!   (kubernetes/kubernetes@cluster/addons/device-plugins/nvidia-gpu/daemonset.yaml; "daemonset
//!   pods are only scheduled on nodes with accelerators attached",
//!   GoogleCloudPlatform/container-engine-accelerators@cmd/nvidia_gpu/README.md), in the variant
//!   for the node's OS image; on 8-GPU A3 nodes `large-cos` runs (a published capture of an
//!   `a3-highgpu-8g` pool).
//!
//! Every GKE DaemonSet is labelled `addonmanager.kubernetes.io/mode: Reconcile`, runs at
//! `system-node-critical` priority, and is ready on a node [`READY_MS`] after the node appears —
//! drawn from no random source, so that worlds that did not have them draw as before.

use super::housekeeping::create;
use super::{Clock, Rollout};
use crate::kube::KubeCluster;
use crate::kube::store::object_key;
use serde_json::{Value, json};

/// How long after its node appears a GKE DaemonSet's pod is ready.
// GUESS(gke-ds-ready): GKE's system pods are ready 10 s after their node appears (GKE publishes no figure).
pub const READY_MS: u64 = 10_000;

/// Machine types whose nodes run the `large` device plugin (8 GPUs or more), and the `medium`
/// one (2 or 4).
// GUESS(gke-device-plugin-size): the device plugin variant follows the node's GPU count: `large` for 8 or more, `medium` for 2–4, `small` for 1.
const LARGE_GPU_MACHINES: &[&str] = &[
    "a2-highgpu-8g",
    "a2-megagpu-16g",
    "a2-ultragpu-8g",
    "a3-highgpu-8g",
    "a3-megagpu-8g",
    "a3-ultragpu-8g",
    "a4-highgpu-8g",
    "g2-standard-96",
];
const MEDIUM_GPU_MACHINES: &[&str] = &[
    "a2-highgpu-2g",
    "a2-highgpu-4g",
    "a2-ultragpu-2g",
    "a2-ultragpu-4g",
    "a3-highgpu-2g",
    "a3-highgpu-4g",
    "g2-standard-24",
    "g2-standard-48",
];

/// One GKE DaemonSet: name, whether the cluster runs it, its pod template's spec (selectors and
/// containers).
struct GkeDaemonSet {
    name: String,
    wanted: bool,
    spec: Value,
}

// GUESS(gke-ds-containers): the names and images of the containers of GKE's DaemonSets (their counts are the captures' READY columns where one shows them).
fn containers(names: &[&str], image: &str) -> Value {
    names
        .iter()
        .map(|name| json!({"name": name, "image": format!("gke.gcr.io/{image}")}))
        .collect()
}

fn linux() -> Value {
    json!({"kubernetes.io/os": "linux"})
}

fn affinity(expressions: Value) -> Value {
    json!({"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchExpressions": expressions}]}}})
}

/// The device plugin variant `size`-`os`: nodes with an accelerator, of that OS image, of the
/// variant's machine types.
fn device_plugin(size: &str, os: &str) -> Value {
    let mut expressions = vec![
        json!({"key": "cloud.google.com/gke-accelerator", "operator": "Exists"}),
        json!({"key": "cloud.google.com/gke-os-distribution", "operator": "In", "values": [os]}),
    ];
    let sized = |operator: &str, machines: Vec<&str>| json!({"key": "node.kubernetes.io/instance-type", "operator": operator, "values": machines});
    match size {
        "large" => expressions.push(sized("In", LARGE_GPU_MACHINES.to_vec())),
        "medium" => expressions.push(sized("In", MEDIUM_GPU_MACHINES.to_vec())),
        _ => expressions.push(sized(
            "NotIn",
            LARGE_GPU_MACHINES
                .iter()
                .chain(MEDIUM_GPU_MACHINES)
                .copied()
                .collect(),
        )),
    }
    json!({"affinity": affinity(json!(expressions)),
        "containers": containers(&["nvidia-gpu-device-plugin", "metrics-exporter"], "nvidia-gpu-device-plugin:v1.0.0-gke.0")})
}

/// What GKE runs in `kube-system` for the cluster's settings, in name order.
fn wanted(cluster: &KubeCluster) -> Vec<GkeDaemonSet> {
    let addons = &cluster.addons;
    let mut out = vec![
        GkeDaemonSet {
            name: "anetd".into(),
            wanted: addons.dataplane_v2,
            // GUESS(gke-anetd-selector): anetd selects `kubernetes.io/os=linux` (the captures show its pods, not its selector).
            spec: json!({"nodeSelector": linux(), "hostNetwork": true,
                "containers": containers(&["cilium-agent"], "cilium/cilium:v1.15.0-gke.0")}),
        },
        GkeDaemonSet {
            name: "filestore-node".into(),
            wanted: addons.filestore_csi,
            spec: json!({"nodeSelector": linux(), "hostNetwork": true,
                "containers": containers(&["csi-driver-registrar", "gcp-filestore-driver", "nfs-services"], "gcp-filestore-csi-driver:v1.0.0-gke.0")}),
        },
        GkeDaemonSet {
            name: "fluentbit-gke".into(),
            wanted: addons.logging,
            spec: json!({"nodeSelector": linux(), "hostNetwork": true,
                "containers": containers(&["fluentbit", "fluentbit-gke"], "fluent-bit:v1.8.0-gke.0")}),
        },
        GkeDaemonSet {
            name: "gcsfusecsi-node".into(),
            wanted: addons.gcs_fuse_csi,
            spec: json!({"nodeSelector": linux(),
                "containers": containers(&["gcs-fuse-csi-driver", "csi-driver-registrar"], "gcs-fuse-csi-driver:v1.0.0-gke.0")}),
        },
        GkeDaemonSet {
            name: "gke-metadata-server".into(),
            wanted: addons.workload_identity,
            spec: json!({"nodeSelector": {"beta.kubernetes.io/os": "linux",
                    crate::kube::controllers::access::METADATA_LABEL: "true"}, "hostNetwork": true,
                "containers": containers(&["gke-metadata-server"], "gke-metadata-server:v0.4.0-gke.0")}),
        },
        GkeDaemonSet {
            name: "gke-metrics-agent".into(),
            wanted: addons.monitoring,
            spec: json!({"containers": containers(&["gke-metrics-agent", "core-metrics-exporter"], "gke-metrics-agent:v1.0.0-gke.0")}),
        },
        GkeDaemonSet {
            name: "kube-proxy".into(),
            // GUESS(gke-kube-proxy-ds): a Dataplane V2 cluster has no `kube-proxy` DaemonSet at all (the captures with one are of clusters without it).
            wanted: !addons.dataplane_v2,
            spec: json!({"nodeSelector": {"kubernetes.io/os": "linux",
                    "node.kubernetes.io/kube-proxy-ds-ready": "true"}, "hostNetwork": true,
                "containers": containers(&["kube-proxy"], "kube-proxy-amd64:v1.32.0-gke.0")}),
        },
        GkeDaemonSet {
            name: "netd".into(),
            // GUESS(gke-netd-always): netd runs on every cluster, with Dataplane V2 too (the capture with it is of a cluster without).
            wanted: true,
            spec: json!({"nodeSelector": {"cloud.google.com/gke-netd-ready": "true",
                    "kubernetes.io/os": "linux"}, "hostNetwork": true,
                "containers": containers(&["netd"], "netd:v0.4.0-gke.0")}),
        },
    ];
    for size in ["large", "medium", "small"] {
        for os in ["cos", "ubuntu"] {
            out.push(GkeDaemonSet {
                name: format!("nvidia-gpu-device-plugin-{size}-{os}"),
                wanted: true,
                spec: device_plugin(size, os),
            });
        }
    }
    out.push(GkeDaemonSet {
        name: "pdcsi-node".into(),
        wanted: addons.pd_csi,
        spec: json!({"nodeSelector": linux(), "hostNetwork": true,
            "containers": containers(&["csi-driver-registrar", "gce-pd-driver"], "gcp-compute-persistent-disk-csi-driver:v1.0.0-gke.0")}),
    });
    out
}

/// The DaemonSet object GKE keeps for `ds`.
fn object(ds: &GkeDaemonSet) -> Value {
    let mut spec = ds.spec.clone();
    spec["priorityClassName"] = json!("system-node-critical");
    spec["tolerations"] = json!([{"operator": "Exists"}]);
    json!({"apiVersion": "apps/v1", "kind": "DaemonSet",
        "metadata": {"name": ds.name, "namespace": "kube-system",
            "labels": {"addonmanager.kubernetes.io/mode": "Reconcile", "k8s-app": ds.name}},
        "spec": {"selector": {"matchLabels": {"k8s-app": ds.name}},
            "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0}},
            "revisionHistoryLimit": 10,
            "template": {"metadata": {"labels": {"k8s-app": ds.name}}, "spec": spec}}})
}

/// Makes the GKE DaemonSets the cluster's settings call for and removes those they no longer do
/// (nothing for a cluster whose settings GKE never told).
pub fn sync(cluster: &mut KubeCluster, clock: &Clock) {
    if !cluster.addons.from_gke {
        return;
    }
    for ds in wanted(cluster) {
        let key = object_key("apps", "daemonsets", "kube-system", &ds.name);
        let present = cluster.store.objects.get(&key);
        let ours = present.is_some_and(|o| {
            o["metadata"]["labels"]["addonmanager.kubernetes.io/mode"] == "Reconcile"
        });
        match (ds.wanted, present.is_some()) {
            (true, false) => {
                create(cluster, clock, "apps", "daemonsets", object(&ds));
                // Ready on each node READY_MS after the node appears, without a random draw.
                cluster.controllers.delays.insert(
                    key,
                    Rollout {
                        generation: 1,
                        since: crate::clock::SimTime(0),
                        delay_ms: READY_MS,
                    },
                );
            }
            (false, true) if ours => {
                cluster
                    .store
                    .remove("apps", "daemonsets", "kube-system", &ds.name);
            }
            _ => {}
        }
    }
}
