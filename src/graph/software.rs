//! Cluster software as Kubernetes resources: the device-mode GPU networks, the NCCL TCPX/TCPXO
//! stack and (in `daemonset` driver mode) the COS driver installer
//! (https://cloud.google.com/kubernetes-engine/docs/how-to/gpu-bandwidth-gpudirect-tcpx and the
//! manifests of GoogleCloudPlatform/container-engine-accelerators).
//!
//! Every object is a resource of kind `k8s` addressed `k8s.<kind>/<namespace or ->/<name>` with
//! an [`ObjectSpec`] (the cluster's name and the full object); the Kubernetes adapter applies
//! it server-side and waits for the kind's default readiness. All of them depend on `cluster.main`
//! only (plus, for the networks, the GCE subnets they name), never on node pools: a DaemonSet on
//! zero nodes is rolled out, so the NCCL installers are in place before the GPU nodes register.
//! They are `deleted_with` the cluster, so destroying it makes no per-object calls.
//!
//! The manifests are written here from the recipe's facts; images and tags of the NCCL plugin come
//! from the blueprint's `software.stack`, the rest are the pins below.

use super::build::{LABEL, addr};
use crate::blueprint::{Blueprint, DriverMode, GpuDirect, MachineFamily, NetworkMode};
use crate::resource::kinds::kubernetes::ObjectSpec;
use crate::resource::kinds::to_spec;
use crate::resource::{Addr, Desired, Kind, Lifecycle};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube_core::{DynamicObject, TypeMeta};
use serde_json::{Value, json};
use std::collections::BTreeMap;

/// The namespace of every DaemonSet and ConfigMap installed here.
pub const NAMESPACE: &str = "kube-system";
/// The node label GKE puts on GPU nodes, valued with the accelerator type.
pub const ACCELERATOR_LABEL: &str = "cloud.google.com/gke-accelerator";
/// The node label GKE puts on nodes whose driver it installed itself.
pub const MANAGED_DRIVER_LABEL: &str = "cloud.google.com/gke-gpu-driver-version";
/// The label key saying who manages an object.
pub const MANAGED_BY: &str = "app.kubernetes.io/managed-by";

/// The NRI device injector image (GoogleCloudPlatform/container-engine-accelerators
/// `nri_device_injector/nri-device-injector.yaml`), pinned by digest. The upstream manifest pins
/// `6e79483d…`; this is another published digest of the same image, to be checked against the
/// upstream manifest when the stack is next bumped.
pub const NRI_INJECTOR_IMAGE: &str = "gcr.io/gke-release/nri-device-injector@sha256:7704e2bd74b8edbb76b6913c7904cc2362f1fa887c4d4aba7b19778ea353537c";
/// The do-nothing main container of the installer DaemonSets (their work is in init containers).
pub const PAUSE_IMAGE: &str = "gke.gcr.io/pause:3.8";
/// The COS driver installer, preloaded on COS nodes (never pulled).
pub const COS_DRIVER_INSTALLER_IMAGE: &str = "cos-nvidia-installer:fixed";
/// The image of the TCPXO pre-installation step (it only runs `nsenter` into the host).
pub const PRE_INSTALL_IMAGE: &str = "ubuntu:22.04";

/// Where GKE keeps the NVIDIA driver and libraries on COS hosts.
const HOST_NVIDIA_DIR: &str = "/home/kubernetes/bin/nvidia";

/// The TCPX NCCL environment of A3 High (GoogleCloudPlatform/cluster-toolkit
/// `examples/gke-a3-highgpu/nccl-config.yaml`), published in `nccl-configmap`.
/// The per-NIC TX/RX CPU bindings are not set here yet (see docs/cluster-software.md).
const TCPX_NCCL_ENV: &[(&str, &str)] = &[
    ("NCCL_GPUDIRECTTCPX_SOCKET_IFNAME", "eth1,eth2,eth3,eth4"),
    ("NCCL_GPUDIRECTTCPX_CTRL_DEV", "eth0"),
    (
        "NCCL_GPUDIRECTTCPX_PROGRAM_FLOW_STEERING_WAIT_MICROS",
        "500000",
    ),
    ("NCCL_SOCKET_IFNAME", "eth0"),
    ("NCCL_CROSS_NIC", "0"),
    ("NCCL_ALGO", "Ring"),
    ("NCCL_PROTO", "Simple"),
    ("NCCL_NET_GDR_LEVEL", "PIX"),
    ("NCCL_P2P_PXN_LEVEL", "0"),
    ("NCCL_MAX_NCHANNELS", "8"),
    ("NCCL_MIN_NCHANNELS", "8"),
    ("NCCL_BUFFSIZE", "4194304"),
];

/// The Kubernetes resources of `bp`'s cluster software; `cluster_id` is the cluster's cloud id.
pub fn resources(bp: &Blueprint, cluster_id: &str) -> Vec<Desired> {
    let cx = Context { bp, cluster_id };
    let mut out = Vec::new();
    // 1. The device-mode networks pods attach to, named as workloads reference them: one
    //    GKENetworkParamSet + Network pair per gVNIC GPU VPC (`vpc1`..), and per RDMA subnet
    //    (`rdma-0`..`rdma-7`, device mode RDMA). None in managed mode: GKE's DRA driver hands out
    //    the RDMA NICs, which pods claim through the ResourceClaimTemplate below.
    for network in device_networks(bp) {
        let params = cx.object(
            "networking.gke.io/v1",
            "GKENetworkParamSet",
            None,
            &network.name,
            json!({"spec": {"vpc": network.vpc, "vpcSubnet": network.subnet, "deviceMode": network.device_mode}}),
        );
        let params_addr = params.addr.clone();
        out.push(params.with_dependency(network.subnet_addr.clone()));
        let object = cx.object(
            "networking.gke.io/v1",
            "Network",
            None,
            &network.name,
            json!({"spec": {"type": "Device", "parametersRef": {
                "group": "networking.gke.io", "kind": "GKENetworkParamSet", "name": network.name}}}),
        );
        out.push(object.with_dependency(params_addr));
    }
    if bp.network.mode == NetworkMode::Managed {
        out.push(cx.rdma_claim_template());
    }
    // 2. The NCCL stack: the family's plugin installer (and, for TCPX/TCPXO, the NRI device
    //    injector the RxDM sidecar needs).
    if bp.software.nccl {
        match bp.software.stack.gpudirect {
            GpuDirect::Tcpx => {
                out.push(cx.device_injector());
                out.push(cx.tcpx_installer());
                out.push(cx.nccl_configmap());
            }
            GpuDirect::Tcpxo => {
                out.push(cx.device_injector());
                out.push(cx.tcpxo_installer());
            }
            GpuDirect::Rdma => out.push(cx.gib_installer()),
        }
    }
    // 3. The COS driver installer, only when GKE is told not to install a driver.
    if bp.software.driver == DriverMode::Daemonset {
        out.push(cx.driver_installer());
    }
    // 4. JobSet, then Kueue (whose JobSet integration needs JobSet's CRD), its queues and the
    //    priority classes.
    super::jobset::resources(&cx, &mut out);
    super::kueue::resources(&cx, &mut out);
    // 5. Shared storage: a PersistentVolume and claim per Filestore share and mounted bucket.
    super::volumes::resources(&cx, &mut out);
    out
}

/// The API version, name and device class of the RDMA NICs' ResourceClaimTemplate in managed
/// mode. `resource.k8s.io/v1` is served from Kubernetes 1.34 on, below which managed networking
/// is refused (https://kubernetes.io/docs/concepts/scheduling-eviction/dynamic-resource-allocation/).
pub const CLAIM_API_VERSION: &str = "resource.k8s.io/v1";
pub const CLAIM_TEMPLATE: &str = "rdma-nics";
/// The DeviceClass of GKE's DRA networking driver for RDMA NICs
/// (GoogleCloudPlatform/container-engine-accelerators `gpudirect-rdma/nccl-test-managed-rdma.yaml`).
pub const RDMA_DEVICE_CLASS: &str = "mrdma.google.com";
/// Where the claim template lives: the namespace of the blueprint's LocalQueue and volumes.
pub const CLAIM_NAMESPACE: &str = "default";

/// One device-mode network pods attach to, and the GCE subnet behind it.
#[derive(Debug, Clone, PartialEq)]
pub struct DeviceNetwork {
    /// The Network and GKENetworkParamSet name (`vpc1`, `rdma-0`).
    pub name: String,
    pub vpc: String,
    pub subnet: String,
    /// `NetDevice` (gVNIC) or `RDMA`.
    pub device_mode: &'static str,
    /// The graph addresses of the GCE VPC and subnet.
    pub vpc_addr: Addr,
    pub subnet_addr: Addr,
}

/// The blueprint's device networks in NIC order: gVNIC GPU VPCs, then RDMA subnets.
pub fn device_networks(bp: &Blueprint) -> Vec<DeviceNetwork> {
    let (gvnic, rdma) = bp.gpu_subnet_split();
    let gvnic_networks = bp
        .software
        .network_names(gvnic.len())
        .into_iter()
        .enumerate()
        .map(|(i, name)| {
            let vpc = bp.network.gpu_vpc_name(&bp.name, i);
            DeviceNetwork {
                name,
                subnet: format!("{vpc}-subnet"),
                vpc,
                device_mode: "NetDevice",
                vpc_addr: addr::gpu_network(i),
                subnet_addr: addr::gpu_subnet(i),
            }
        });
    let rdma_networks = (0..rdma.len()).map(|j| DeviceNetwork {
        name: format!("rdma-{j}"),
        vpc: super::build::rdma_network_name(bp),
        subnet: super::build::rdma_subnet_name(bp, j),
        device_mode: "RDMA",
        vpc_addr: addr::rdma_network(),
        subnet_addr: addr::rdma_subnet(j),
    });
    gvnic_networks.chain(rdma_networks).collect()
}

/// What every object needs from the blueprint.
pub(super) struct Context<'a> {
    pub(super) bp: &'a Blueprint,
    pub(super) cluster_id: &'a str,
}

pub(super) trait WithDependency {
    fn with_dependency(self, dep: Addr) -> Self;
}

impl WithDependency for Desired {
    fn with_dependency(mut self, dep: Addr) -> Desired {
        self.dependencies.push(dep);
        self
    }
}

impl Context<'_> {
    fn family(&self) -> MachineFamily {
        self.bp.family
    }

    /// The labels every object carries.
    fn labels(&self) -> BTreeMap<String, String> {
        [
            (LABEL.to_string(), self.bp.name.clone()),
            (MANAGED_BY.to_string(), "a3ctl".to_string()),
        ]
        .into_iter()
        .collect()
    }

    /// A resource for the object `apiVersion`/`kind` named `name`, whose other top-level fields
    /// (`spec`, `data` ...) are those of `body`.
    pub(super) fn object(
        &self,
        api_version: &str,
        kind: &str,
        namespace: Option<&str>,
        name: &str,
        body: Value,
    ) -> Desired {
        let object = DynamicObject {
            types: Some(TypeMeta {
                api_version: api_version.into(),
                kind: kind.into(),
            }),
            metadata: ObjectMeta {
                name: Some(name.into()),
                labels: Some(self.labels()),
                namespace: namespace.map(str::to_string),
                ..Default::default()
            },
            data: body,
        };
        let ns = namespace.unwrap_or("-");
        Desired {
            addr: Addr::new(
                Kind::Kubernetes,
                format!("{}/{ns}/{name}", kind.to_ascii_lowercase()),
            ),
            id: format!("{}/k8s/{api_version}/{kind}/{ns}/{name}", self.cluster_id),
            spec: to_spec(&ObjectSpec {
                cluster: self.bp.name.clone(),
                object,
                ready: None,
            }),
            dependencies: vec![addr::cluster()],
            lifecycle: Lifecycle {
                deleted_with: Some(addr::cluster()),
                ..Default::default()
            },
        }
    }

    /// A `kube-system` DaemonSet named `name` running `pod` (a pod spec) on its pods labelled
    /// `name=<name>`.
    fn daemonset(&self, name: &str, pod: Value) -> Desired {
        self.object(
            "apps/v1",
            "DaemonSet",
            Some(NAMESPACE),
            name,
            json!({"spec": {
                "selector": {"matchLabels": {"name": name}},
                "updateStrategy": {"type": "RollingUpdate"},
                "template": {"metadata": {"labels": {"name": name, MANAGED_BY: "a3ctl"}}, "spec": pod},
            }}),
        )
    }

    /// Node affinity to the GPU nodes of the blueprint's machine family.
    fn gpu_affinity(&self) -> Value {
        required_affinity(json!([
            {"key": ACCELERATOR_LABEL, "operator": "In", "values": [self.family().accelerator_type()]},
        ]))
    }

    /// `kube-system/device-injector`: the NRI plugin that honours `devices.gke.io/container.*`
    /// pod annotations (the RxDM sidecar needs the GPU device nodes).
    fn device_injector(&self) -> Desired {
        self.daemonset(
            "device-injector",
            json!({
                "priorityClassName": "system-node-critical",
                "affinity": self.gpu_affinity(),
                "tolerations": tolerate_all(),
                "containers": [{
                    "name": "device-injector",
                    "image": NRI_INJECTOR_IMAGE,
                    "securityContext": {"privileged": true},
                    "volumeMounts": [
                        {"name": "dev", "mountPath": "/dev"},
                        {"name": "nri", "mountPath": "/var/run/nri"},
                    ],
                }],
                "volumes": [
                    host_path("dev", "/dev"),
                    host_path("nri", "/var/run/nri"),
                ],
            }),
        )
    }

    /// The plugin image of the blueprint's stack, with its tag.
    fn plugin_image(&self) -> String {
        let stack = &self.bp.software.stack;
        format!("{}:{}", stack.plugin_image, stack.plugin_tag)
    }

    /// The init container that installs the NCCL plugin (and NCCL) from the stack's image and
    /// copies the libraries next to the driver's, where workloads find them.
    fn plugin_installer(&self, lib_dir: &str) -> Value {
        json!({
            "name": "nccl-plugin-installer",
            "image": self.plugin_image(),
            "securityContext": {"privileged": true},
            "command": ["/bin/sh", "-c"],
            "args": [format!(
                "set -ex\n/scripts/container_entry.sh install --install-nccl\n\
                 mkdir -p /usr/local/nvidia/lib64\ncp -r {lib_dir}/lib64/. /usr/local/nvidia/lib64\n\
                 echo \"installed the NCCL plugin into {HOST_NVIDIA_DIR}/lib64\""
            )],
            "volumeMounts": [
                {"name": "var-lib", "mountPath": "/var/lib"},
                {"name": "plugin", "mountPath": lib_dir},
                {"name": "kubernetes-bin", "mountPath": "/usr/local"},
            ],
        })
    }

    /// The pod spec shared by both installers: host namespaces, every GPU node, a pause main
    /// container; `init` does the work.
    fn installer_pod(&self, init: Vec<Value>, volumes: Vec<Value>) -> Value {
        json!({
            "priorityClassName": "system-node-critical",
            "hostNetwork": true,
            "hostPID": true,
            "affinity": self.gpu_affinity(),
            "tolerations": tolerate_all(),
            "initContainers": init,
            "containers": [{"name": "pause", "image": PAUSE_IMAGE}],
            "volumes": volumes,
        })
    }

    /// `default/rdma-nics`: the claim a managed-networking pod names to get its node's RDMA NICs:
    /// exactly as many `mrdma.google.com` devices as the family has RDMA NICs, as Google's own
    /// managed test asks (container-engine-accelerators `gpudirect-rdma/nccl-test-managed-rdma.yaml`).
    fn rdma_claim_template(&self) -> Desired {
        self.object(
            CLAIM_API_VERSION,
            "ResourceClaimTemplate",
            Some(CLAIM_NAMESPACE),
            CLAIM_TEMPLATE,
            json!({"spec": {"spec": {"devices": {"requests": [{
                "name": "rdma",
                "exactly": {
                    "deviceClassName": RDMA_DEVICE_CLASS,
                    "allocationMode": "ExactCount",
                    "count": self.family().spec().nics.rdma_subnets,
                },
            }]}}}}),
        )
    }

    /// `kube-system/nccl-rdma-installer` (A3 Ultra, A4): turns off martian-packet logging on
    /// the RDMA NICs, then installs the gIB NCCL plugin and NCCL next to the driver's libraries
    /// and under `/home/kubernetes/bin/gib`, where workloads source `set_nccl_env.sh`
    /// (GoogleCloudPlatform/cluster-toolkit `examples/gke-a3-ultragpu/nccl-installer.yaml.tftpl`).
    fn gib_installer(&self) -> Desired {
        let nics = self.family().spec().nics.rdma_subnets;
        let martians: String = (0..nics)
            .map(|i| format!("echo 0 > /proc/sys/net/ipv4/conf/gpu{i}rdma0/log_martians\n"))
            .collect();
        let quiet = json!({
            "name": "disable-log-martian",
            "image": PRE_INSTALL_IMAGE,
            "securityContext": {"privileged": true},
            "command": ["/bin/sh", "-c", format!("set -e\n{martians}")],
        });
        let install = json!({
            "name": "nccl-rdma-installer",
            "image": self.plugin_image(),
            "securityContext": {"privileged": true},
            "resources": {"requests": {"cpu": "150m"}},
            "command": ["/bin/sh", "-c"],
            "args": [
                "set -ex\n/scripts/container_entry.sh install --install-nccl\n\
                 cp -r /var/lib/gib/lib64/. /usr/local/home/kubernetes/bin/nvidia/lib64\n\
                 cp -r /var/lib/gib/. /usr/local/home/kubernetes/bin/gib\n\
                 echo \"installed the gIB NCCL plugin\""
            ],
            "volumeMounts": [
                {"name": "library-dir-host", "mountPath": "/usr/local/home/kubernetes/bin/nvidia/lib64"},
                {"name": "gib", "mountPath": "/usr/local/home/kubernetes/bin/gib"},
            ],
        });
        self.daemonset(
            self.family().spec().installer,
            self.installer_pod(
                vec![quiet, install],
                vec![
                    json!({"name": "library-dir-host", "hostPath": {"path": format!("{HOST_NVIDIA_DIR}/lib64"), "type": "DirectoryOrCreate"}}),
                    host_path("gib", "/home/kubernetes/bin/gib"),
                ],
            ),
        )
    }

    /// `kube-system/nccl-tcpx-installer` (A3 High; `gpudirect-tcpx/nccl-tcpx-installer.yaml` of
    /// GoogleCloudPlatform/container-engine-accelerators).
    fn tcpx_installer(&self) -> Desired {
        self.daemonset(
            "nccl-tcpx-installer",
            self.installer_pod(
                vec![self.plugin_installer("/var/lib/tcpx")],
                vec![
                    host_path("var-lib", "/var/lib"),
                    host_path("plugin", "/var/lib/tcpx"),
                    host_path("kubernetes-bin", "/home/kubernetes/bin"),
                    host_path("tcpx-socket", "/run/tcpx"),
                ],
            ),
        )
    }

    /// `kube-system/nccl-tcpxo-installer` (A3 Mega; `gpudirect-tcpxo/nccl-tcpxo-installer.yaml` of
    /// GoogleCloudPlatform/container-engine-accelerators): a host preparation step (TCP input
    /// allowed, the import helper module loaded, the aperture devices exposed) then the plugin.
    fn tcpxo_installer(&self) -> Desired {
        let prepare = json!({
            "name": "pre-installation",
            "image": PRE_INSTALL_IMAGE,
            "securityContext": {"privileged": true},
            "command": ["nsenter", "-at", "1", "--", "sh", "-c", TCPXO_HOST_SETUP],
        });
        self.daemonset(
            "nccl-tcpxo-installer",
            self.installer_pod(
                vec![prepare, self.plugin_installer("/var/lib/tcpxo")],
                vec![
                    host_path("var-lib", "/var/lib"),
                    host_path("plugin", "/var/lib/tcpxo"),
                    host_path("kubernetes-bin", "/home/kubernetes/bin"),
                ],
            ),
        )
    }

    /// `kube-system/nccl-configmap`: the TCPX NCCL environment for A3 High workloads, as
    /// `KEY=value` lines (`nccl-env.sh`, to source) and one key per variable (for `envFrom`).
    fn nccl_configmap(&self) -> Desired {
        let mut data = serde_json::Map::new();
        let mut script = String::from("# GPUDirect-TCPX NCCL settings for A3 High, from a3ctl\n");
        for (key, value) in TCPX_NCCL_ENV {
            data.insert((*key).to_string(), json!(value));
            script.push_str(&format!("export {key}=\"{value}\"\n"));
        }
        data.insert("nccl-env.sh".into(), json!(script));
        self.object(
            "v1",
            "ConfigMap",
            Some(NAMESPACE),
            "nccl-configmap",
            json!({ "data": data }),
        )
    }

    /// `kube-system/nvidia-driver-installer` (GoogleCloudPlatform/container-engine-accelerators
    /// `nvidia-driver-installer/cos/daemonset-preloaded.yaml`): the COS installer on GPU nodes
    /// whose driver GKE did not install.
    fn driver_installer(&self) -> Desired {
        let install_dir = "/usr/local/nvidia";
        let script = format!(
            "if lsmod | grep -q nvidia; then echo 'the NVIDIA driver is already loaded'; exit 0; fi\n\
             /cos-gpu-installer install\nchmod 755 {install_dir}"
        );
        let pod = json!({
            "priorityClassName": "system-node-critical",
            "hostNetwork": true,
            "hostPID": true,
            "affinity": required_affinity(json!([
                {"key": ACCELERATOR_LABEL, "operator": "Exists"},
                {"key": MANAGED_DRIVER_LABEL, "operator": "DoesNotExist"},
                {"key": "cloud.google.com/gke-confidential-nodes-instance-type", "operator": "DoesNotExist"},
            ])),
            "tolerations": tolerate_all(),
            "initContainers": [{
                "name": "nvidia-driver-installer",
                "image": COS_DRIVER_INSTALLER_IMAGE,
                "imagePullPolicy": "Never",
                "securityContext": {"privileged": true},
                "command": ["/bin/bash", "-c", script],
                "env": [
                    {"name": "NVIDIA_INSTALL_DIR_HOST", "value": HOST_NVIDIA_DIR},
                    {"name": "NVIDIA_INSTALL_DIR_CONTAINER", "value": install_dir},
                    {"name": "COS_TOOLS_DIR_HOST", "value": "/var/lib/cos-tools"},
                    {"name": "ROOT_MOUNT_DIR", "value": "/root"},
                ],
                "volumeMounts": [
                    {"name": "nvidia-install-dir-host", "mountPath": install_dir},
                    {"name": "dev", "mountPath": "/dev"},
                    {"name": "root-mount", "mountPath": "/root"},
                    {"name": "cos-tools", "mountPath": "/var/lib/cos-tools"},
                    {"name": "nvidia-config", "mountPath": "/etc/nvidia"},
                ],
            }],
            "containers": [{"name": "pause", "image": PAUSE_IMAGE}],
            "volumes": [
                host_path("dev", "/dev"),
                host_path("nvidia-install-dir-host", HOST_NVIDIA_DIR),
                host_path("root-mount", "/"),
                host_path("cos-tools", "/var/lib/cos-tools"),
                host_path("nvidia-config", "/etc/nvidia"),
            ],
        });
        self.daemonset("nvidia-driver-installer", pod)
    }
}

/// The TCPXO host preparation, run in the host's namespaces: accept TCP input (the FasTrak data
/// path), load the DMA-buf import helper, and expose each `1ae0:0084` PCI device (the A3 Mega
/// GPU NICs' aperture) under `/dev/aperture_devices/<BDF>` with writable `resource*` files.
const TCPXO_HOST_SETUP: &str = r#"set -e
iptables -I INPUT -p tcp -m tcp -j ACCEPT
modprobe import-helper
mkdir -p /dev/aperture_devices
for dev in /sys/bus/pci/devices/*; do
  [ "$(cat "$dev/vendor")" = 0x1ae0 ] && [ "$(cat "$dev/device")" = 0x0084 ] || continue
  target=/dev/aperture_devices/$(basename "$dev")
  mkdir -p "$target"
  mountpoint -q "$target" || mount --bind "$(readlink -f "$dev")" "$target"
  chmod 0666 "$target"/resource*
done
"#;

/// Tolerates every taint (GPU nodes carry `nvidia.com/gpu=present:NoSchedule`).
fn tolerate_all() -> Value {
    json!([{"operator": "Exists"}])
}

/// A required node affinity with one term of `expressions`.
fn required_affinity(expressions: Value) -> Value {
    json!({"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchExpressions": expressions}]}}})
}

/// A hostPath volume.
fn host_path(name: &str, path: &str) -> Value {
    json!({"name": name, "hostPath": {"path": path}})
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::blueprint::testing::shipped;
    use crate::graph::ResourceGraph;

    fn k8s(g: &ResourceGraph) -> Vec<&Desired> {
        g.resources()
            .iter()
            .filter(|r| r.addr.kind == Kind::Kubernetes)
            .collect()
    }

    fn get<'a>(g: &'a ResourceGraph, addr: &str) -> &'a Desired {
        g.get(&addr.parse().unwrap())
            .unwrap_or_else(|| panic!("{addr} is declared"))
    }

    #[test]
    fn every_builtin_object_of_the_shipped_blueprints_is_valid_for_its_type() {
        for name in ["minimal.toml", "a3-high.toml", "a3-mega.toml"] {
            let g = ResourceGraph::from_blueprint(&shipped(name)).unwrap();
            let mut checked = 0;
            for r in k8s(&g)
                .into_iter()
                .filter(|r| r.spec.get("object").is_some())
            {
                let spec: ObjectSpec = crate::resource::kinds::from_spec("k8s", &r.spec).unwrap();
                spec.check_builtin()
                    .unwrap_or_else(|e| panic!("{name}: {}: {e}", r.addr));
                checked += usize::from(matches!(
                    spec.kind(),
                    "DaemonSet"
                        | "ConfigMap"
                        | "PersistentVolume"
                        | "PersistentVolumeClaim"
                        | "PriorityClass"
                ));
            }
            assert!(checked > 0, "{name} has built-in objects to check");
        }
    }

    #[test]
    fn a3_mega_gets_eight_network_pairs_the_injector_and_the_tcpxo_installer() {
        let g = ResourceGraph::from_blueprint(&shipped("a3-mega.toml")).unwrap();
        // 8 network pairs, the injector and the installer; then JobSet's release, Kueue (release,
        // topology, one flavor, the two queues, five priority classes) and the Filestore and
        // bucket volumes.
        assert_eq!(k8s(&g).len(), 18 + 1 + 10 + 4);
        let params = get(&g, "k8s.gkenetworkparamset/-/vpc3");
        assert_eq!(params.spec["cluster"], "a3mega");
        let spec = &params.spec["object"]["spec"];
        assert_eq!(spec["vpc"], "a3mega-gpunet-3");
        assert_eq!(spec["vpcSubnet"], "a3mega-gpunet-3-subnet");
        assert_eq!(spec["deviceMode"], "NetDevice");
        assert!(params.dependencies.contains(&addr::gpu_subnet(2)));
        let network = get(&g, "k8s.network/-/vpc8");
        assert_eq!(network.spec["object"]["spec"]["type"], "Device");
        assert_eq!(
            network.spec["object"]["spec"]["parametersRef"]["name"],
            "vpc8"
        );
        assert!(
            network
                .dependencies
                .contains(&"k8s.gkenetworkparamset/-/vpc8".parse().unwrap())
        );
        let installer = get(&g, "k8s.daemonset/kube-system/nccl-tcpxo-installer");
        assert_eq!(installer.dependencies, vec![addr::cluster()]);
        assert_eq!(installer.lifecycle.deleted_with, Some(addr::cluster()));
        let pod = &installer.spec["object"]["spec"]["template"]["spec"];
        assert_eq!(
            pod["initContainers"][1]["image"],
            "us-docker.pkg.dev/gce-ai-infra/gpudirect-tcpxo/nccl-plugin-gpudirecttcpx-dev:v1.0.15"
        );
        assert_eq!(pod["priorityClassName"], "system-node-critical");
        let term = &pod["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
            ["nodeSelectorTerms"][0]["matchExpressions"][0];
        assert_eq!(term["values"][0], "nvidia-h100-mega-80gb");
        let injector = get(&g, "k8s.daemonset/kube-system/device-injector");
        assert_eq!(injector.dependencies, vec![addr::cluster()]);
        for r in k8s(&g)
            .into_iter()
            .filter(|r| r.spec.get("release").is_none())
        {
            assert_eq!(r.spec["object"]["metadata"]["labels"][LABEL], "a3mega");
            assert_eq!(r.spec["object"]["metadata"]["labels"][MANAGED_BY], "a3ctl");
            assert!(r.dependencies.iter().all(|d| d.kind != Kind::NodePool));
        }
        assert!(
            g.get(&"k8s.configmap/kube-system/nccl-configmap".parse().unwrap())
                .is_none()
        );
        assert!(
            g.get(
                &"k8s.daemonset/kube-system/nvidia-driver-installer"
                    .parse()
                    .unwrap()
            )
            .is_none()
        );
    }

    #[test]
    fn a3_high_gets_four_pairs_the_tcpx_installer_and_the_configmap() {
        let g = ResourceGraph::from_blueprint(&shipped("a3-high.toml")).unwrap();
        // 4 pairs, injector, installer, configmap; JobSet; Kueue; no shared storage.
        assert_eq!(k8s(&g).len(), 11 + 1 + 10);
        let installer = get(&g, "k8s.daemonset/kube-system/nccl-tcpx-installer");
        let pod = &installer.spec["object"]["spec"]["template"]["spec"];
        assert_eq!(
            pod["initContainers"][0]["image"],
            "us-docker.pkg.dev/gce-ai-infra/gpudirect-tcpx/nccl-plugin-gpudirecttcpx-dev:v3.1.9"
        );
        let config = get(&g, "k8s.configmap/kube-system/nccl-configmap");
        let data = &config.spec["object"]["data"];
        assert_eq!(
            data["NCCL_GPUDIRECTTCPX_SOCKET_IFNAME"],
            "eth1,eth2,eth3,eth4"
        );
        assert_eq!(data["NCCL_BUFFSIZE"], "4194304");
        assert!(g.get(&"k8s.network/-/vpc5".parse().unwrap()).is_none());
    }

    #[test]
    fn the_driver_daemonset_only_in_daemonset_mode_and_nothing_without_nccl() {
        let mut bp = shipped("a3-mega.toml");
        bp.software.driver = DriverMode::Daemonset;
        bp.software.nccl = false;
        let g = ResourceGraph::from_blueprint(&bp).unwrap();
        let installer = get(&g, "k8s.daemonset/kube-system/nvidia-driver-installer");
        let terms = &installer.spec["object"]["spec"]["template"]["spec"]["affinity"]["nodeAffinity"]
            ["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"][0]["matchExpressions"];
        assert_eq!(terms[0]["key"], ACCELERATOR_LABEL);
        assert_eq!(terms[0]["operator"], "Exists");
        assert_eq!(terms[1]["key"], MANAGED_DRIVER_LABEL);
        assert_eq!(terms[1]["operator"], "DoesNotExist");
        // Networks (8 pairs) and the driver installer; no NCCL stack; JobSet, Kueue and volumes.
        assert_eq!(k8s(&g).len(), 17 + 1 + 10 + 4);
        assert!(
            g.get(&"k8s.daemonset/kube-system/device-injector".parse().unwrap())
                .is_none()
        );
    }

    #[test]
    fn custom_network_prefix_names_the_objects() {
        let mut bp = shipped("a3-high.toml");
        bp.software.network_prefix = "gpu".into();
        let g = ResourceGraph::from_blueprint(&bp).unwrap();
        let network = get(&g, "k8s.network/-/gpu4");
        assert_eq!(
            network.spec["object"]["spec"]["parametersRef"]["name"],
            "gpu4"
        );
    }
}
