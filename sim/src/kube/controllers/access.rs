//! What a pod's volumes need from the cluster and from Google Cloud before the kubelet can mount
//! them: ConfigMaps and Secrets that exist, and Cloud Storage FUSE buckets the pod may list.
//!
//! **Cloud Storage FUSE volumes** are a CSI ephemeral volume (`csi.driver:
//! gcsfuse.csi.storage.gke.io`, the bucket in `volumeAttributes.bucketName`) or a claim bound to a
//! PersistentVolume of that driver (the bucket is its `csi.volumeHandle`). The kubelet calls the
//! driver's `NodePublishVolume`, which checks, in this order (GoogleCloudPlatform/gcs-fuse-csi-driver
//! `pkg/csi_driver/node.go`; its `docs/troubleshooting.md` lists the events):
//! 1. the driver is registered on the node — it is when the cluster's
//!    `addonsConfig.gcsFuseCsiDriverConfig.enabled` is set; else the kubelet itself fails:
//!    `MountVolume.SetUp failed for volume "V" : kubernetes.io/csi: mounter.SetUpAt failed to get
//!    CSI client: driver name gcsfuse.csi.storage.gke.io not found in the list of registered CSI
//!    drivers`;
//! 2. unless the bucket is `_` (every bucket), the bucket's objects can be listed with the pod's
//!    identity (`CheckBucketExists` lists one object: `storage.objects.list`). The identity is
//!    the pod's Kubernetes service account through Workload Identity Federation
//!    ([`iam::Principal::KubernetesServiceAccount`] of the pod's namespace and
//!    `serviceAccountName`), or the IAM service account its `iam.gke.io/gcp-service-account`
//!    annotation names (whose `roles/iam.workloadIdentityUser` is not checked: service accounts'
//!    own policies are not simulated). Failures:
//!    - the cluster has no workload pool (`workloadIdentityConfig.workloadPool`): no token can be
//!      had, `rpc error: code = Unauthenticated desc = failed to prepare storage service: storage
//!      service manager failed to setup service: timed out waiting for the condition` (the
//!      troubleshooting page's text; that this is what a cluster without a pool shows is
//!      inferred);
//!    - no such bucket: `rpc error: code = NotFound desc = failed to get GCS bucket "B": storage:
//!      bucket doesn't exist` (troubleshooting page; the driver's e2e test expects the same);
//!    - no role with `storage.objects.list` on the bucket ([`LIST_OBJECTS`], in the bucket's
//!      policy or the project's, conditions not counted): `rpc error: code = PermissionDenied
//!      desc = failed to get GCS bucket "B": googleapi: Error 403: Caller does not have
//!      storage.objects.list access to the Google Cloud Storage bucket. Permission
//!      'storage.objects.list' denied on resource (or it may not exist)., forbidden` — Cloud
//!      Storage names a federated principal `Caller` (gcs-fuse-csi-driver#1356) and an IAM
//!      service account by its email (troubleshooting page);
//! 3. the node runs the GKE metadata server (its label `iam.gke.io/gke-metadata-server-enabled:
//!    "true"`, on nodes of `GKE_METADATA` pools), unless the pod uses the host network:
//!    `rpc error: code = FailedPrecondition desc = Workload Identity Federation is not enabled on
//!    node. Please make sure this is enabled on both cluster and node pool level
//!    (https://cloud.google.com/kubernetes-engine/docs/how-to/workload-identity)`;
//! 4. the sidecar was injected, which the driver's webhook does for pods annotated
//!    `gke-gcsfuse/volumes: "true"`: `rpc error: code = FailedPrecondition desc = failed to find
//!    the sidecar container in Pod spec`. The sidecar itself is not injected into the stored pod.
//!
//! Each message is prefixed `MountVolume.SetUp failed for volume "V" : ` (the kubelet's
//! operation generator), `V` being the pod's volume name, or the PersistentVolume's name for a
//! claim.
//!
//! **ConfigMap and Secret volumes** (not `optional`) need their object in the pod's namespace:
//! `MountVolume.SetUp failed for volume "V" : configmap "C" not found` (`secret "S" not found`).

use crate::iam::{self, KubernetesServiceAccount, Principal, Resource};
use crate::kube::KubeCluster;
use crate::world::World;
use serde_json::Value;

/// The CSI driver of Cloud Storage FUSE volumes.
pub const GCSFUSE_DRIVER: &str = "gcsfuse.csi.storage.gke.io";
/// The pod annotation that has the driver's webhook inject its sidecar.
pub const GCSFUSE_ANNOTATION: &str = "gke-gcsfuse/volumes";
/// The node label of nodes that run the GKE metadata server.
pub const METADATA_LABEL: &str = "iam.gke.io/gke-metadata-server-enabled";
/// The Kubernetes service account annotation naming the IAM service account it acts as.
pub const GSA_ANNOTATION: &str = "iam.gke.io/gcp-service-account";

/// Roles whose permissions include `storage.objects.list` (Cloud Storage's roles,
/// <https://cloud.google.com/storage/docs/access-control/iam-roles>). Basic roles on a project
/// do not include it; project owners, editors and viewers list a bucket's objects through the
/// bucket's `roles/storage.legacyBucket*` bindings of `projectOwner:`/`projectEditor:`/
/// `projectViewer:`, which the evaluation follows.
pub const LIST_OBJECTS: &[&str] = &[
    "roles/storage.objectViewer",
    "roles/storage.objectUser",
    "roles/storage.objectAdmin",
    "roles/storage.admin",
    "roles/storage.legacyBucketReader",
    "roles/storage.legacyBucketWriter",
    "roles/storage.legacyBucketOwner",
];

/// The GKE cluster behind a Kubernetes cluster, what the checks need of it.
#[derive(Debug, Clone, Default)]
pub struct Gke {
    pub project: String,
    pub location: String,
    pub name: String,
    /// `workloadIdentityConfig.workloadPool`, empty when Workload Identity Federation is off.
    pub workload_pool: String,
}

impl Gke {
    /// The cluster of `key` (`projects/P/locations/L/clusters/C`); without a GKE cluster (a
    /// Kubernetes side provisioned alone, in tests) the names come from the key.
    pub fn of(world: &World, key: &str, cluster: &KubeCluster) -> Gke {
        let gke = world.container.clusters.get(key);
        Gke {
            project: cluster.project.clone(),
            location: cluster.location.clone(),
            name: cluster.name.clone(),
            workload_pool: gke
                .and_then(|c| c.resource["workloadIdentityConfig"]["workloadPool"].as_str())
                .unwrap_or_default()
                .to_string(),
        }
    }
}

fn set_up_failed(volume: &str, error: &str) -> String {
    format!("MountVolume.SetUp failed for volume \"{volume}\" : {error}")
}

/// A Cloud Storage FUSE volume of a pod: the volume name the kubelet reports and the bucket.
#[derive(Debug, Clone, PartialEq)]
struct GcsVolume {
    volume: String,
    bucket: String,
}

/// The pod's volumes the kubelet cannot mount now, one message per volume (empty: all mount).
/// `node` is the pod's Node object.
pub fn mount_failures(
    world: &World,
    gke: &Gke,
    cluster: &KubeCluster,
    pod: &Value,
    node: &Value,
) -> Vec<String> {
    let namespace = pod["metadata"]["namespace"].as_str().unwrap_or_default();
    let mut failures = vec![];
    for volume in pod["spec"]["volumes"].as_array().into_iter().flatten() {
        let name = volume["name"].as_str().unwrap_or_default();
        for (field, kind, resource, key) in [
            ("configMap", "configmap", "configmaps", "name"),
            ("secret", "secret", "secrets", "secretName"),
        ] {
            let source = &volume[field];
            let Some(object) = source[key].as_str() else {
                continue;
            };
            if source["optional"] != true
                && cluster.store.get("", resource, namespace, object).is_none()
            {
                failures.push(set_up_failed(
                    name,
                    &format!("{kind} \"{object}\" not found"),
                ));
            }
        }
        let gcs = if volume["csi"]["driver"] == GCSFUSE_DRIVER {
            Some(GcsVolume {
                volume: name.to_string(),
                bucket: volume["csi"]["volumeAttributes"]["bucketName"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
            })
        } else if let Some(claim) = volume["persistentVolumeClaim"]["claimName"].as_str() {
            cluster
                .store
                .get("", "persistentvolumeclaims", namespace, claim)
                .and_then(|pvc| pvc["spec"]["volumeName"].as_str())
                .and_then(|pv| cluster.store.get("", "persistentvolumes", "", pv))
                .filter(|pv| pv["spec"]["csi"]["driver"] == GCSFUSE_DRIVER)
                .map(|pv| GcsVolume {
                    volume: pv["metadata"]["name"]
                        .as_str()
                        .unwrap_or_default()
                        .to_string(),
                    bucket: pv["spec"]["csi"]["volumeHandle"]
                        .as_str()
                        .unwrap_or_default()
                        .to_string(),
                })
        } else {
            None
        };
        if let Some(gcs) = gcs
            && let Some(error) = gcsfuse_failure(world, gke, cluster, pod, node, &gcs.bucket)
        {
            failures.push(set_up_failed(&gcs.volume, &error));
        }
    }
    failures
}

/// Why the GCS FUSE CSI driver refuses to publish `bucket` for `pod` on `node`, if it does.
fn gcsfuse_failure(
    world: &World,
    gke: &Gke,
    cluster: &KubeCluster,
    pod: &Value,
    node: &Value,
    bucket: &str,
) -> Option<String> {
    if !cluster.addons.gcs_fuse_csi {
        return Some(format!(
            "kubernetes.io/csi: mounter.SetUpAt failed to get CSI client: driver name \
             {GCSFUSE_DRIVER} not found in the list of registered CSI drivers"
        ));
    }
    if bucket != "_" {
        if gke.workload_pool.is_empty() {
            return Some(
                "rpc error: code = Unauthenticated desc = failed to prepare storage service: \
                 storage service manager failed to setup service: timed out waiting for the \
                 condition"
                    .into(),
            );
        }
        if !world.storage.buckets.contains_key(bucket) {
            return Some(format!(
                "rpc error: code = NotFound desc = failed to get GCS bucket \"{bucket}\": \
                 storage: bucket doesn't exist"
            ));
        }
        let (principal, caller) = pod_identity(gke, cluster, pod);
        let resource = Resource::Bucket(bucket.to_string());
        if !iam::has_any_role(world, &principal, &resource, LIST_OBJECTS) {
            return Some(format!(
                "rpc error: code = PermissionDenied desc = failed to get GCS bucket \
                 \"{bucket}\": googleapi: Error 403: {caller} does not have storage.objects.list \
                 access to the Google Cloud Storage bucket. Permission 'storage.objects.list' \
                 denied on resource (or it may not exist)., forbidden"
            ));
        }
    }
    let metadata_server = node["metadata"]["labels"][METADATA_LABEL] == "true";
    if !metadata_server && pod["spec"]["hostNetwork"] != true {
        return Some(
            "rpc error: code = FailedPrecondition desc = Workload Identity Federation is not \
             enabled on node. Please make sure this is enabled on both cluster and node pool \
             level (https://cloud.google.com/kubernetes-engine/docs/how-to/workload-identity)"
                .into(),
        );
    }
    let annotated = pod["metadata"]["annotations"][GCSFUSE_ANNOTATION]
        .as_str()
        .is_some_and(|v| v.eq_ignore_ascii_case("true"));
    if !annotated {
        return Some(
            "rpc error: code = FailedPrecondition desc = failed to find the sidecar container \
             in Pod spec"
                .into(),
        );
    }
    None
}

/// The Google identity a pod's workloads reach Cloud Storage as, and how Cloud Storage names it
/// in a refusal: its Kubernetes service account through Workload Identity Federation
/// (`Caller`), or the IAM service account that account's `iam.gke.io/gcp-service-account`
/// annotation names (its email).
fn pod_identity(gke: &Gke, cluster: &KubeCluster, pod: &Value) -> (Principal, String) {
    let namespace = pod["metadata"]["namespace"].as_str().unwrap_or_default();
    let name = pod["spec"]["serviceAccountName"]
        .as_str()
        .filter(|n| !n.is_empty())
        .unwrap_or("default");
    let account = cluster.store.get("", "serviceaccounts", namespace, name);
    if let Some(gsa) = account
        .and_then(|a| a["metadata"]["annotations"][GSA_ANNOTATION].as_str())
        .filter(|e| !e.is_empty())
    {
        return (
            Principal::Member(format!("serviceAccount:{gsa}")),
            gsa.to_string(),
        );
    }
    let ksa = KubernetesServiceAccount {
        project: gke.project.clone(),
        location: gke.location.clone(),
        cluster: gke.name.clone(),
        namespace: namespace.to_string(),
        name: name.to_string(),
        uid: account
            .and_then(|a| a["metadata"]["uid"].as_str())
            .map(str::to_string),
    };
    (Principal::KubernetesServiceAccount(ksa), "Caller".into())
}

/// Why the kubelet, acting as the IAM service account `account`, cannot pull `image`, if it
/// cannot (for now every image pulls).
pub fn pull_failure(world: &World, account: &str, image: &str) -> Option<String> {
    let _ = (world, account, image);
    None
}
