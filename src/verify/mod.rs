//! `a3ctl verify` without I/O: what a blueprint's cluster must look like ([`Expected`], derived
//! from the blueprint and its resource graph), what was read from the cluster ([`Snapshot`]), and
//! the checks that compare them ([`check`], in [`checks`]; Kueue's quotas against the nodes in
//! [`queues`]; JobSet and Kueue's JobSet integration in [`jobset`]). [`live`] is the only I/O: it reads the
//! snapshot and runs the NCCL test through the cluster's Kubernetes API; the UI renders the
//! [`Report`].
//!
//! [`nccl`] builds the two-node NCCL all-gather test and judges its 2G–8G bus bandwidth, which
//! [`nccl_output`] reads from nccl-tests' output.

pub mod access;
pub mod checks;
pub mod jobset;
pub mod live;
pub mod nccl;
pub mod nccl_output;
pub mod queues;

pub use checks::check;

use crate::blueprint::{Blueprint, DriverMode, MachineFamily};
use crate::graph::ResourceGraph;
use crate::resource::Kind;
use serde::Serialize;
use serde_json::Value;

/// The format version of `verify --json`.
pub const REPORT_FORMAT: u32 = 1;

/// The resource name GKE gives GPUs.
pub const GPU_RESOURCE: &str = "nvidia.com/gpu";
/// The node label naming a node's pool.
pub const NODE_POOL_LABEL: &str = "cloud.google.com/gke-nodepool";
/// The label a3ctl puts on every pool's nodes: the pool's name in the blueprint, kept when the
/// pool moves to a new GKE name.
pub use crate::resource::kinds::node_pool::POOL_LABEL;
/// The API group of Kueue.
pub const KUEUE_GROUP: &str = "kueue.x-k8s.io";
/// The Kueue versions whose ClusterQueue and LocalQueue shapes the checks understand, preferred
/// first.
pub const KUEUE_VERSIONS: [&str; 2] = ["v1beta2", "v1beta1"];
/// The namespace of the LocalQueue a3ctl creates when the blueprint declares no queues.
pub const LOCAL_QUEUE_NAMESPACE: &str = "default";

/// One GPU pool as the blueprint declares it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExpectedPool {
    pub name: String,
    pub nodes: u32,
    /// The GKE version the blueprint asks of the pool's nodes (`1.34`, `default`, an exact
    /// build): the pool's own `version`, else `[cluster] version`.
    pub version: String,
}

/// One Network + GKENetworkParamSet pair.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExpectedNetwork {
    pub name: String,
    /// The GCE VPC (`<name>-gpunet-<i>`, `<name>-rdma-net`).
    pub vpc: String,
    /// Its subnet.
    pub subnet: String,
    /// `NetDevice` (gVNIC) or `RDMA`.
    pub device_mode: String,
}

/// What every GPU node of an RDMA family (A3 Ultra, A4) must show.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ExpectedRdma {
    /// a3ctl's networks: `host_nics` NICs in `networking.gke.io/nic-info` (the primary, the
    /// gVNIC GPU VPCs and one per RDMA subnet), and the RDMA Networks as node resources.
    Explicit {
        host_nics: usize,
        rdma_networks: Vec<String>,
    },
    /// GKE's: the nodes run the DRA networking driver (its label), which publishes `nics` RDMA
    /// devices per node in a ResourceSlice of the `device_class` driver; the DeviceClass and
    /// a3ctl's ResourceClaimTemplate exist.
    Managed {
        nics: usize,
        device_class: String,
        claim_template: (String, String),
    },
}

/// A Kueue queue the blueprint asks for: its one queue, or each `[[queue]]` it declares.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExpectedQueue {
    /// The ClusterQueue's and the LocalQueue's name.
    pub name: String,
    /// The LocalQueue's namespace.
    pub namespace: String,
    /// The ClusterQueue's GPU quota: every GPU pool's GPUs at its declared size for the one
    /// queue, a declared queue's `gpus`.
    pub gpus: u64,
    /// The ResourceFlavors apply creates for the GPU pools (their names, from the graph): each
    /// one's quota, summed over every ClusterQueue of the cluster, is checked against its nodes.
    pub flavors: Vec<String>,
}

/// JobSet, when the blueprint enables it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExpectedJobSet {
    /// Kueue is enabled too, so its JobSet integration must be active.
    pub kueue: bool,
}

/// What a healthy cluster of the blueprint has.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Expected {
    /// The blueprint file as given on the command line, which the hints' commands name; the
    /// command completes them with its flags (`ui::invocation`) so they can be pasted.
    pub blueprint_path: String,
    pub family: MachineFamily,
    pub pools: Vec<ExpectedPool>,
    /// `kube-system` DaemonSets that must run on every GPU node.
    pub daemonsets: Vec<String>,
    pub driver: DriverMode,
    pub networks: Vec<ExpectedNetwork>,
    /// The fewest device Networks a working cluster of the family can have (one per GPU NIC):
    /// from the machine family, not from the names above, so an empty list cannot pass.
    pub min_networks: usize,
    /// Empty when the blueprint does not enable Kueue.
    pub kueue: Vec<ExpectedQueue>,
    pub jobset: Option<ExpectedJobSet>,
    /// `None` for the TCPX/TCPXO families.
    pub rdma: Option<ExpectedRdma>,
}

impl Expected {
    /// Expectations of `bp`, with names and specs taken from its resource graph (the objects
    /// apply creates).
    pub fn new(bp: &Blueprint, graph: &ResourceGraph, blueprint_path: &str) -> Expected {
        let spec_name = |a| {
            graph
                .get(&a)
                .and_then(|r| r.spec["name"].as_str())
                // For the report's labels only: a kind without a `name` field shows none.
                .unwrap_or_default()
                .to_string()
        };
        // The names apply gave the GCE objects, from the graph, so a drifted graph shows.
        let networks: Vec<ExpectedNetwork> = crate::graph::software::device_networks(bp)
            .into_iter()
            .map(|network| {
                let (vpc, subnet) = (spec_name(network.vpc_addr), spec_name(network.subnet_addr));
                ExpectedNetwork {
                    name: network.name,
                    vpc,
                    subnet,
                    device_mode: network.device_mode.to_string(),
                }
            })
            .collect();
        let nics = bp.family.spec().nics;
        let managed = bp.network.mode == crate::blueprint::NetworkMode::Managed;
        let rdma = (nics.rdma_subnets > 0).then(|| {
            if managed {
                ExpectedRdma::Managed {
                    nics: nics.rdma_subnets,
                    device_class: crate::graph::software::RDMA_DEVICE_CLASS.to_string(),
                    claim_template: (
                        crate::graph::software::CLAIM_NAMESPACE.to_string(),
                        crate::graph::software::CLAIM_TEMPLATE.to_string(),
                    ),
                }
            } else {
                ExpectedRdma::Explicit {
                    host_nics: 1 + nics.subnets(),
                    rdma_networks: networks
                        .iter()
                        .filter(|n| n.device_mode == "RDMA")
                        .map(|n| n.name.clone())
                        .collect(),
                }
            }
        });
        let daemonsets = graph
            .resources()
            .iter()
            .filter(|r| r.addr.kind == Kind::Kubernetes)
            .map(|r| &r.spec["object"])
            .filter(|o| o["kind"] == "DaemonSet")
            .filter_map(|o| o["metadata"]["name"].as_str().map(str::to_string))
            .collect();
        let flavors: Vec<String> = graph
            .resources()
            .iter()
            .filter(|r| r.addr.kind == Kind::Kubernetes)
            .map(|r| &r.spec["object"])
            .filter(|o| o["kind"] == "ResourceFlavor")
            .filter_map(|o| o["metadata"]["name"].as_str().map(str::to_string))
            .collect();
        let kueue = match (bp.software.kueue.enabled, bp.queues.as_slice()) {
            (false, _) => vec![],
            (true, []) => vec![ExpectedQueue {
                name: bp.software.kueue.queue.clone(),
                namespace: LOCAL_QUEUE_NAMESPACE.to_string(),
                gpus: bp.gpu_pools.iter().map(|p| u64::from(p.gpus())).sum(),
                flavors,
            }],
            (true, declared) => declared
                .iter()
                .map(|q| ExpectedQueue {
                    name: q.name.clone(),
                    namespace: q.namespace.clone(),
                    gpus: u64::from(q.gpus),
                    flavors: flavors.clone(),
                })
                .collect(),
        };
        Expected {
            blueprint_path: blueprint_path.to_string(),
            family: bp.family,
            pools: bp
                .gpu_pools
                .iter()
                .map(|p| ExpectedPool {
                    name: p.name.clone(),
                    nodes: p.nodes,
                    version: p.version.unwrap_or(bp.cluster.version).to_string(),
                })
                .collect(),
            daemonsets,
            driver: bp.software.driver,
            networks,
            min_networks: if managed { 0 } else { bp.family.gpu_nics() },
            kueue,
            jobset: bp.software.jobset.enabled.then_some(ExpectedJobSet {
                kueue: bp.software.kueue.enabled,
            }),
            rdma,
        }
    }

    /// GPUs each node of the family has.
    pub fn gpus_per_node(&self) -> u32 {
        self.family.gpus_per_node()
    }
}

/// Kueue as read from the cluster.
#[derive(Debug, Clone, PartialEq)]
pub enum KueueSnapshot {
    /// Not read (the blueprint does not enable Kueue).
    Skipped,
    /// The cluster serves no `kueue.x-k8s.io` version the checks understand.
    NotServed,
    Served {
        /// The version read, e.g. `v1beta2`.
        version: String,
        /// The expected LocalQueues found, each read in its namespace.
        local_queues: Vec<Value>,
        /// Every ClusterQueue of the cluster (a3ctl's and any a team made), whose quotas for a
        /// flavor add up.
        cluster_queues: Vec<Value>,
        /// Every ResourceFlavor of the cluster.
        flavors: Vec<Value>,
    },
}

/// Everything the checks look at, as read from the cluster (GET and LIST only).
#[derive(Debug, Clone, PartialEq)]
pub struct Snapshot {
    pub nodes: Vec<Value>,
    /// DaemonSets of `kube-system`.
    pub daemonsets: Vec<Value>,
    /// `None` when the cluster does not serve `networking.gke.io` Networks.
    pub networks: Option<Vec<Value>>,
    pub param_sets: Option<Vec<Value>>,
    pub kueue: KueueSnapshot,
    /// Managed RDMA only (else `Default`): what `resource.k8s.io` shows.
    pub dra: DraSnapshot,
    /// JobSet only (else `Default`).
    pub jobset: JobSetSnapshot,
}

/// What JobSet and Kueue's JobSet integration rest on, as read (`None`: not found).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct JobSetSnapshot {
    /// The `jobsets.jobset.x-k8s.io` CustomResourceDefinition.
    pub crd: Option<Value>,
    /// The `jobset-system/jobset-controller-manager` Deployment.
    pub controller: Option<Value>,
    /// Kueue's `kueue-system/kueue-manager-config` ConfigMap (read when Kueue is enabled).
    pub kueue_config: Option<Value>,
}

/// The `resource.k8s.io` objects managed GPU networking relies on.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct DraSnapshot {
    /// The `resource.k8s.io` version read, `None` when the cluster serves none a3ctl reads.
    pub version: Option<String>,
    pub device_class: Option<Value>,
    pub claim_template: Option<Value>,
    pub slices: Vec<Value>,
}

/// How a check ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Pass,
    Fail,
}

/// One line of the report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Check {
    /// Stable identifier, e.g. `nodes/a3mega`, `daemonset/kube-system/device-injector`,
    /// `network/vpc3`, `networks/count`, `kueue/clusterqueue/a3-queue`.
    pub name: String,
    pub status: Status,
    /// What was found; on failure, which object is wrong and how.
    pub message: String,
    /// What to do about a failure.
    pub hint: Option<String>,
}

impl Check {
    pub fn pass(name: impl Into<String>, message: impl Into<String>) -> Check {
        Check {
            name: name.into(),
            status: Status::Pass,
            message: message.into(),
            hint: None,
        }
    }

    pub fn fail(
        name: impl Into<String>,
        message: impl Into<String>,
        hint: impl Into<String>,
    ) -> Check {
        Check {
            name: name.into(),
            status: Status::Fail,
            message: message.into(),
            hint: Some(hint.into()),
        }
    }
}

/// The result of `a3ctl verify`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Report {
    pub format: u32,
    pub blueprint: String,
    pub cluster: String,
    pub endpoint: String,
    pub passed: bool,
    pub checks: Vec<Check>,
}

impl Report {
    pub fn new(blueprint: &str, cluster: &str, endpoint: &str, checks: Vec<Check>) -> Report {
        Report {
            format: REPORT_FORMAT,
            blueprint: blueprint.to_string(),
            cluster: cluster.to_string(),
            endpoint: endpoint.to_string(),
            passed: checks.iter().all(|c| c.status == Status::Pass),
            checks,
        }
    }

    pub fn failed(&self) -> usize {
        self.checks
            .iter()
            .filter(|c| c.status == Status::Fail)
            .count()
    }
}

/// Parses a Kubernetes integer quantity (`"8"`, `8`, `"1k"`); fractional or unknown forms give
/// `None`.
pub fn integer_quantity(v: &Value) -> Option<u64> {
    if let Some(n) = v.as_u64() {
        return Some(n);
    }
    let text = v.as_str()?.trim();
    let (number, factor) = match text.strip_suffix('k') {
        Some(n) => (n, 1000),
        None => (text, 1),
    };
    number.parse::<u64>().ok().map(|n| n * factor)
}

#[cfg(test)]
mod tests;
