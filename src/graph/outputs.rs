//! What a blueprint gives its users beyond resources: the version stack a plan shows, and the
//! names and annotations a workload needs (printed after an apply, like Terraform's outputs).
//! Pure functions of the blueprint; formatting for humans lives in `ui/`.

use super::software::{CLAIM_NAMESPACE, CLAIM_TEMPLATE, device_networks};
use super::volumes::{bucket_volume, filestore_volume};
use crate::blueprint::families::PodWiring;
use crate::blueprint::{Blueprint, DriverMode, GpuDirect, NetworkMode};
use serde::Serialize;
use serde_json::{Value, json};

/// The versions that must fit together, in the order a plan shows them: `(component, version)`.
pub fn version_stack(bp: &Blueprint) -> Vec<(String, String)> {
    let mut out = vec![(
        "GKE".to_string(),
        format!(
            "{} ({} channel)",
            bp.cluster.version,
            bp.cluster.release_channel.api_value().to_ascii_lowercase()
        ),
    )];
    let driver = match bp.software.driver {
        DriverMode::Default => "installed by GKE (DEFAULT)".to_string(),
        DriverMode::Latest => "installed by GKE (LATEST)".to_string(),
        DriverMode::Daemonset => "COS driver-installer DaemonSet".to_string(),
    };
    out.push(("NVIDIA driver".into(), driver));
    out.push(("GPU networks".into(), gpu_networks(bp)));
    if bp.software.nccl {
        let stack = &bp.software.stack;
        let flavour = stack.gpudirect.display();
        let tested = match crate::blueprint::software::untested_gke_minor(bp) {
            _ if stack.forced => "untested combination, forced".to_string(),
            Some(minor) => format!("not tested on GKE {minor}, forced"),
            None => "tested".to_string(),
        };
        out.push((
            "NCCL stack".into(),
            format!("{} ({flavour}, {tested})", stack.id),
        ));
        out.push((
            "NCCL plugin installer".into(),
            format!("{}:{}", stack.plugin_image, stack.plugin_tag),
        ));
        if let Some(rxdm) = &stack.rxdm {
            out.push((
                "RxDM sidecar".into(),
                format!("{}:{}", rxdm.image, rxdm.tag),
            ));
        }
        if let Some(nccl) = &stack.nccl {
            out.push(("NCCL".into(), nccl.clone()));
        }
    }
    if bp.software.kueue.enabled {
        out.push(("Kueue".into(), bp.software.kueue.version.clone()));
    }
    if bp.software.jobset.enabled {
        out.push(("JobSet".into(), bp.software.jobset.version.clone()));
    }
    out
}

/// Who makes the GPU networks, and what they are.
fn gpu_networks(bp: &Blueprint) -> String {
    let nics = bp.family.spec().nics;
    match bp.network.mode {
        NetworkMode::Managed => format!(
            "managed by GKE (accelerator network profile `auto`, {} RDMA NICs per node through a ResourceClaim)",
            nics.rdma_subnets
        ),
        NetworkMode::Explicit if nics.rdma_subnets > 0 => format!(
            "explicit ({} gVNIC VPC, 1 RDMA VPC with {} subnets)",
            nics.gvnic_vpcs, nics.rdma_subnets
        ),
        NetworkMode::Explicit => format!("explicit ({} gVNIC GPU VPCs)", nics.gvnic_vpcs),
    }
}

/// What workloads on the cluster reference.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WorkloadOutputs {
    /// The Network objects a pod attaches, in the order of its GPU interfaces (`vpc1`.. on A3
    /// High and Mega, `rdma-0`.. on A3 Ultra and A4); none in managed mode.
    pub gpu_networks: Vec<String>,
    /// The pod interfaces the annotations ask for: `(interface, network)`, `eth0` first.
    pub interfaces: Vec<(String, String)>,
    /// The pod annotations that attach the GPU NICs: `(key, value)`; none in managed mode.
    pub pod_annotations: Vec<(String, String)>,
    /// In managed mode, the claim that gives a pod the node's RDMA NICs.
    pub rdma_claim: Option<RdmaClaim>,
    /// On A3 Ultra and A4 with the NCCL stack, where the gIB plugin is and how NCCL is set up.
    pub nccl_plugin: Option<GibPlugin>,
    /// The LocalQueue to name in `kueue.x-k8s.io/queue-name`, and its namespace.
    pub queue: Option<(String, String)>,
    /// PersistentVolumeClaims in `default` for the shared storage.
    pub volume_claims: Vec<String>,
}

/// The ResourceClaim a pod makes for the RDMA NICs in managed mode: the pod lists it under
/// `spec.resourceClaims`, the container under `resources.claims`
/// (GoogleCloudPlatform/container-engine-accelerators `gpudirect-rdma/nccl-test-managed-rdma.yaml`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RdmaClaim {
    /// The claim's name inside the pod (`rdma`).
    pub name: String,
    /// The ResourceClaimTemplate a3ctl applies (`rdma-nics`).
    pub template: String,
    /// The template's namespace: a pod can only use a template of its own namespace.
    pub namespace: String,
}

impl RdmaClaim {
    /// The pod's `spec.resourceClaims`.
    pub fn pod_resource_claims(&self) -> Value {
        json!([{"name": self.name, "resourceClaimTemplateName": self.template}])
    }

    /// The container's `resources.claims`.
    pub fn container_claims(&self) -> Value {
        json!([{"name": self.name}])
    }
}

/// Where the gIB NCCL plugin's installer leaves it on the node, where a pod mounts it, and the
/// script a pod sources before NCCL starts (container-engine-accelerators
/// `gpudirect-rdma/nccl-test.yaml`; the installer copies it there, see `graph::software`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GibPlugin {
    /// The volume's name in the pod (`gib`).
    pub volume: String,
    /// The node directory, mounted as a hostPath volume (`/home/kubernetes/bin/gib`).
    pub host_path: String,
    /// Where the container mounts it (`/usr/local/gib`).
    pub mount_path: String,
    /// The script setting NCCL's environment for gIB, to `source` in the container's command.
    pub env_script: String,
}

impl GibPlugin {
    /// The pod's volume, as a `spec.volumes` entry.
    pub fn volume(&self) -> Value {
        json!({"name": self.volume, "hostPath": {"path": self.host_path}})
    }

    /// The container's mount, as a `volumeMounts` entry.
    pub fn volume_mount(&self) -> Value {
        json!({"name": self.volume, "mountPath": self.mount_path})
    }

    /// The line a container's command runs first.
    pub fn source_line(&self) -> String {
        format!("source {}", self.env_script)
    }
}

/// The node directory the gIB installer fills (cluster-toolkit
/// `examples/gke-a3-ultragpu/nccl-installer.yaml.tftpl` copies `/var/lib/gib` there).
pub const GIB_HOST_DIR: &str = "/home/kubernetes/bin/gib";
/// Where pods mount it, as container-engine-accelerators' `gpudirect-rdma/nccl-test.yaml` does.
pub const GIB_MOUNT_PATH: &str = "/usr/local/gib";

/// The interfaces a pod asks for in its `networking.gke.io/interfaces` annotation: `eth0` on
/// GKE's `default` network, then the GPU interfaces. On A3 High and Mega they are `eth1`.. on
/// the gVNIC GPU networks. On A3 Ultra and A4, `eth1` is the node's second gVNIC, which stays
/// with the host, and the eight RDMA NICs are `eth2`..`eth9` on `rdma-0`..`rdma-7`
/// (container-engine-accelerators `gpudirect-rdma/nccl-test.yaml`). Empty in managed mode,
/// where the RDMA NICs come through a ResourceClaim instead.
pub fn interfaces(bp: &Blueprint) -> Vec<(String, String)> {
    if bp.network.mode == NetworkMode::Managed {
        return Vec::new();
    }
    // The first interface number of the pod's GPU NICs.
    let first = match bp.family.spec().pod_wiring {
        PodWiring::GvnicNetworks => 1,
        PodWiring::RdmaNetworks => 1 + bp.family.spec().nics.gvnic_vpcs,
    };
    std::iter::once(("eth0".to_string(), "default".to_string()))
        .chain(
            pod_networks(bp)
                .into_iter()
                .enumerate()
                .map(|(i, n)| (format!("eth{}", i + first), n)),
        )
        .collect()
}

/// The Network objects a pod attaches, in interface order: the gVNIC GPU networks (TCPX,
/// TCPXO) or the RDMA ones; none in managed mode.
fn pod_networks(bp: &Blueprint) -> Vec<String> {
    if bp.network.mode == NetworkMode::Managed {
        return Vec::new();
    }
    let networks = device_networks(bp).into_iter();
    match bp.family.spec().pod_wiring {
        PodWiring::GvnicNetworks => networks.map(|n| n.name).collect(),
        PodWiring::RdmaNetworks => networks
            .filter(|n| n.device_mode == "RDMA")
            .map(|n| n.name)
            .collect(),
    }
}

/// One `networking.gke.io/interfaces` entry.
pub fn interface_json(interface: &str, network: &str) -> String {
    serde_json::json!({"interfaceName": interface, "network": network}).to_string()
}

/// The annotations a pod needs to get the GPU NICs on the blueprint's networks; none in managed
/// mode, where the pod claims them instead ([`rdma_claim`]).
pub fn pod_annotations(bp: &Blueprint) -> Vec<(String, String)> {
    let interfaces: Vec<String> = interfaces(bp)
        .iter()
        .map(|(i, n)| interface_json(i, n))
        .collect();
    if interfaces.is_empty() {
        return Vec::new();
    }
    vec![
        ("networking.gke.io/default-interface".into(), "eth0".into()),
        (
            "networking.gke.io/interfaces".into(),
            format!("[{}]", interfaces.join(",")),
        ),
    ]
}

/// The claim a pod makes for the RDMA NICs, in managed mode.
pub fn rdma_claim(bp: &Blueprint) -> Option<RdmaClaim> {
    (bp.network.mode == NetworkMode::Managed).then(|| RdmaClaim {
        name: "rdma".into(),
        template: CLAIM_TEMPLATE.into(),
        namespace: CLAIM_NAMESPACE.into(),
    })
}

/// The gIB plugin's mount and environment script, when the blueprint installs it.
pub fn nccl_plugin(bp: &Blueprint) -> Option<GibPlugin> {
    (bp.software.nccl && bp.software.stack.gpudirect == GpuDirect::Rdma).then(|| GibPlugin {
        volume: "gib".into(),
        host_path: GIB_HOST_DIR.into(),
        mount_path: GIB_MOUNT_PATH.into(),
        env_script: format!("{GIB_MOUNT_PATH}/scripts/set_nccl_env.sh"),
    })
}

pub fn workload_outputs(bp: &Blueprint) -> WorkloadOutputs {
    let mut claims = Vec::new();
    if bp.filestore.is_some() {
        claims.push(filestore_volume(&bp.name));
    }
    claims.extend(
        bp.buckets
            .iter()
            .filter(|b| b.mount)
            .map(|b| bucket_volume(&b.name)),
    );
    WorkloadOutputs {
        gpu_networks: pod_networks(bp),
        interfaces: interfaces(bp),
        pod_annotations: pod_annotations(bp),
        rdma_claim: rdma_claim(bp),
        nccl_plugin: nccl_plugin(bp),
        queue: super::kueue::job_queue(bp),
        volume_claims: claims,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::blueprint::MachineFamily;
    use crate::blueprint::testing::{rdma, shipped};

    #[test]
    fn the_mega_stack_and_its_workload_outputs() {
        let bp = shipped("a3-mega.toml");
        let stack = version_stack(&bp);
        let get = |k: &str| stack.iter().find(|(c, _)| c == k).map(|(_, v)| v.as_str());
        assert_eq!(get("GKE"), Some("1.32 (regular channel)"));
        assert_eq!(get("NCCL stack"), Some("2026-01 (GPUDirect-TCPXO, tested)"));
        assert!(get("NCCL plugin installer").unwrap().ends_with(":v1.0.15"));
        assert!(get("RxDM sidecar").unwrap().ends_with(":v1.0.21"));
        assert_eq!(get("Kueue"), Some("v0.17.1"));
        let out = workload_outputs(&bp);
        assert_eq!(out.gpu_networks.len(), 8);
        let interfaces = &out.pod_annotations[1].1;
        let parsed: serde_json::Value = serde_json::from_str(interfaces).unwrap();
        assert_eq!(parsed[8]["interfaceName"], "eth8");
        assert_eq!(parsed[8]["network"], "vpc8");
        assert_eq!(out.queue, Some(("a3-queue".into(), "default".into())));
        assert_eq!(out.volume_claims[0], "a3mega-filestore");
        assert_eq!(out.rdma_claim, None);
        assert_eq!(out.nccl_plugin, None);
    }

    #[test]
    fn a3_high_pods_get_eth1_to_eth4_on_the_gvnic_networks() {
        let bp = shipped("a3-high.toml");
        let out = workload_outputs(&bp);
        assert_eq!(out.gpu_networks, ["vpc1", "vpc2", "vpc3", "vpc4"]);
        let names: Vec<&str> = out.interfaces.iter().map(|(i, _)| i.as_str()).collect();
        assert_eq!(names, ["eth0", "eth1", "eth2", "eth3", "eth4"]);
        assert_eq!(out.interfaces[1].1, "vpc1");
        assert_eq!(out.rdma_claim, None);
        assert_eq!(out.nccl_plugin, None);
    }

    #[test]
    fn rdma_pods_get_eth2_to_eth9_on_rdma_networks_and_leave_eth1_to_the_host() {
        for family in [MachineFamily::A3Ultra, MachineFamily::A4] {
            let bp = rdma(family, NetworkMode::Explicit);
            let out = workload_outputs(&bp);
            let rdma: Vec<String> = (0..8).map(|j| format!("rdma-{j}")).collect();
            assert_eq!(out.gpu_networks, rdma);
            let expected: Vec<(String, String)> =
                std::iter::once(("eth0".to_string(), "default".to_string()))
                    .chain(
                        rdma.iter()
                            .enumerate()
                            .map(|(j, n)| (format!("eth{}", j + 2), n.clone())),
                    )
                    .collect();
            assert_eq!(out.interfaces, expected);
            assert!(!out.interfaces.iter().any(|(i, _)| i == "eth1"));
            let parsed: serde_json::Value =
                serde_json::from_str(&out.pod_annotations[1].1).unwrap();
            assert_eq!(parsed[1]["interfaceName"], "eth2");
            assert_eq!(parsed[1]["network"], "rdma-0");
            assert_eq!(parsed[8]["interfaceName"], "eth9");
            assert_eq!(parsed[8]["network"], "rdma-7");
            assert_eq!(out.pod_annotations[0].1, "eth0");
            assert_eq!(out.rdma_claim, None);
            let gib = out.nccl_plugin.expect("the gIB plugin is installed");
            assert_eq!(
                gib.source_line(),
                "source /usr/local/gib/scripts/set_nccl_env.sh"
            );
            assert_eq!(
                gib.volume(),
                json!({"name": "gib", "hostPath": {"path": "/home/kubernetes/bin/gib"}})
            );
            assert_eq!(
                gib.volume_mount(),
                json!({"name": "gib", "mountPath": "/usr/local/gib"})
            );
        }
    }

    #[test]
    fn managed_pods_claim_the_rdma_nics_instead_of_annotating_interfaces() {
        for family in [MachineFamily::A3Ultra, MachineFamily::A4] {
            let bp = rdma(family, NetworkMode::Managed);
            let out = workload_outputs(&bp);
            assert!(out.gpu_networks.is_empty());
            assert!(out.interfaces.is_empty());
            assert!(out.pod_annotations.is_empty());
            let claim = out.rdma_claim.expect("managed mode claims the NICs");
            assert_eq!(
                claim.pod_resource_claims(),
                json!([{"name": "rdma", "resourceClaimTemplateName": "rdma-nics"}])
            );
            assert_eq!(claim.container_claims(), json!([{"name": "rdma"}]));
            assert_eq!(claim.namespace, "default");
            assert!(out.nccl_plugin.is_some());
        }
    }

    #[test]
    fn without_the_nccl_stack_there_is_no_gib_plugin_to_mount() {
        let mut bp = rdma(MachineFamily::A4, NetworkMode::Explicit);
        bp.software.nccl = false;
        let out = workload_outputs(&bp);
        assert_eq!(out.nccl_plugin, None);
        // The networks are still there to attach.
        assert_eq!(out.gpu_networks.len(), 8);
    }
}
