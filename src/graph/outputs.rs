//! What a blueprint gives its users beyond resources: the version stack a plan shows, and the
//! names and annotations a workload needs (printed after an apply, like Terraform's outputs).
//! Pure functions of the blueprint; formatting for humans lives in `ui/`.

use super::kueue::QUEUE_NAMESPACE;
use super::volumes::{bucket_volume, filestore_volume};
use crate::blueprint::{Blueprint, DriverMode, NetworkMode};
use serde::Serialize;

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
    /// The Network objects, in GPU NIC order (`eth1`..).
    pub gpu_networks: Vec<String>,
    /// The pod interfaces the annotations ask for: `(interface, network)`, `eth0` first.
    pub interfaces: Vec<(String, String)>,
    /// The pod annotations that attach the GPU NICs: `(key, value)`.
    pub pod_annotations: Vec<(String, String)>,
    /// The LocalQueue to name in `kueue.x-k8s.io/queue-name`, and its namespace.
    pub queue: Option<(String, String)>,
    /// PersistentVolumeClaims in `default` for the shared storage.
    pub volume_claims: Vec<String>,
}

/// `eth0` on GKE's `default` network, then `eth1`.. on the blueprint's GPU networks.
pub fn interfaces(bp: &Blueprint) -> Vec<(String, String)> {
    let networks = bp.software.network_names(bp.network.gpu_subnets.len());
    std::iter::once(("eth0".to_string(), "default".to_string()))
        .chain(
            networks
                .into_iter()
                .enumerate()
                .map(|(i, n)| (format!("eth{}", i + 1), n)),
        )
        .collect()
}

/// One `networking.gke.io/interfaces` entry.
pub fn interface_json(interface: &str, network: &str) -> String {
    serde_json::json!({"interfaceName": interface, "network": network}).to_string()
}

/// The annotations a pod needs to get the GPU NICs as `eth1`.. on the blueprint's networks.
pub fn pod_annotations(bp: &Blueprint) -> Vec<(String, String)> {
    let interfaces: Vec<String> = interfaces(bp)
        .iter()
        .map(|(i, n)| interface_json(i, n))
        .collect();
    vec![
        ("networking.gke.io/default-interface".into(), "eth0".into()),
        (
            "networking.gke.io/interfaces".into(),
            format!("[{}]", interfaces.join(",")),
        ),
    ]
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
        gpu_networks: bp.software.network_names(bp.network.gpu_subnets.len()),
        interfaces: interfaces(bp),
        pod_annotations: pod_annotations(bp),
        queue: bp
            .software
            .kueue
            .enabled
            .then(|| (bp.software.kueue.queue.clone(), QUEUE_NAMESPACE.to_string())),
        volume_claims: claims,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::blueprint::testing::shipped;

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
    }
}
