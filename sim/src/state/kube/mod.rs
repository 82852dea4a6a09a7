//! The Kubernetes side of every simulated cluster: its API server's state (certificates,
//! readiness, add-ons), the nodes GKE made, every object ([`store`]), and what the simulated
//! controllers remember. The API servers and controllers are [`crate::kube`].

pub mod store;

use crate::clock::SimTime;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

/// Every simulated cluster's Kubernetes side.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct State {
    pub clusters: BTreeMap<String, KubeCluster>,
}

/// One cluster's API server state.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct KubeCluster {
    pub name: String,
    pub location: String,
    pub version: String,
    pub multi_networking: bool,
    /// The Kubernetes beta APIs the cluster enabled (`enableK8sBetaApis.enabledApis`, e.g.
    /// `resource.k8s.io/v1beta1/deviceclasses`); the `resource.k8s.io` ones are served
    /// ([`crate::kube::dra::served`]). Absent from worlds saved before clusters carried them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub beta_apis: Vec<String>,
    /// `127.0.0.1:PORT`.
    pub endpoint: String,
    pub certs: ClusterCerts,
    /// The control plane answers (cluster RUNNING).
    pub ready: bool,
    pub addons: Addons,
    /// Nodes by node pool.
    pub nodes: BTreeMap<String, Vec<NodeSpec>>,
    /// What clients wrote on GKE's Node objects (`kubectl cordon`, `kubectl taint`), by node
    /// name, kept over GKE's own spec of the node ([`crate::kube::controllers::nodes::client_edit`]).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub node_edits: BTreeMap<String, NodeEdits>,
    /// When each pool's nodes appeared, for driver-installation delays.
    pub nodes_since: BTreeMap<String, SimTime>,
    /// When each node appeared (node name → time).
    #[serde(default)]
    pub node_since: BTreeMap<String, SimTime>,
    /// The email of the IAM service account each node pool's nodes run as (the pool's
    /// `config.serviceAccount`, `default` resolved to the project's Compute Engine default
    /// account), by pool; a pool not listed (not made by GKE, or saved before pools carried it)
    /// runs as that default account.
    #[serde(default)]
    pub pool_accounts: BTreeMap<String, String>,
    /// The project the cluster lives in (from its key).
    #[serde(default)]
    pub project: String,
    /// Every Kubernetes object of the cluster.
    #[serde(default)]
    pub store: store::Store,
    /// What the simulated controllers remember.
    #[serde(default)]
    pub controllers: ControllerState,
    /// The simulated time and store version after the last controller pass, cleared by every
    /// change made from outside the store (readiness, nodes, add-ons). A pass at the same time
    /// over the same objects would change nothing, so it is skipped.
    #[serde(skip)]
    pub ticked: Option<(SimTime, u64)>,
}

/// A node of a node pool, as GKE creates it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NodeSpec {
    pub name: String,
    pub pool: String,
    pub machine_type: String,
    pub zone: String,
    /// GKE's labels: `cloud.google.com/gke-nodepool`, `cloud.google.com/gke-accelerator`,
    /// `node.kubernetes.io/instance-type`, `topology.kubernetes.io/zone`, placement topology ...
    pub labels: BTreeMap<String, String>,
    /// `(key, value, effect)`, e.g. `("nvidia.com/gpu", "present", "NoSchedule")`.
    pub taints: Vec<(String, String, String)>,
    /// GPUs on the machine (8 for A3); allocatable only once a driver is installed.
    pub gpus: u32,
    /// GKE installs the driver itself (`gpuDriverInstallationConfig` DEFAULT or LATEST).
    pub managed_driver: bool,
    pub cpu: String,
    pub memory: String,
    /// The node's own GKE version (its kubelet's); empty: the control plane's. Absent from worlds
    /// saved before nodes carried it.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub version: String,
    /// Cordoned (`spec.unschedulable`), as an upgrade leaves a node it is about to drain.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub unschedulable: bool,
    /// The address of the node's VM on its primary NIC (`nic0`, in the cluster's subnetwork):
    /// its `InternalIP`. Empty in worlds saved before nodes were VMs.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub internal_ip: String,
    /// The node's NICs after `eth0` (the pool's `additionalNodeNetworkConfigs`, in order: `eth1`,
    /// `eth2` ...), which GKE shows in the node's `networking.gke.io/nic-info` annotation and,
    /// once a Network object refers to their VPC, as `networking.gke.io.networks/<Network>`
    /// resources ([`crate::kube::controllers::nodes`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub nics: Vec<NodeNic>,
    /// RDMA NICs GKE manages itself for the pool's `acceleratorNetworkProfile` (GKE-managed
    /// DRANET): published as devices of a ResourceSlice ([`crate::kube::controllers::dranet`]); 0 for none.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub managed_rdma_nics: u32,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// What a client set on a GKE node's spec beyond what GKE sets: a cordon, and its own taints.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct NodeEdits {
    /// `spec.unschedulable` set by a client (`kubectl cordon`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub unschedulable: bool,
    /// Taints a client added (`kubectl taint nodes`), as written.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub taints: Vec<serde_json::Value>,
}

/// One additional NIC of a node.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NodeNic {
    /// The VPC network's name.
    pub network: String,
    /// The subnetwork's name.
    pub subnetwork: String,
    /// `GVNIC`, or `MRDMA` on a network with a RoCE network profile.
    pub nic_type: String,
    /// The NIC's address in its subnetwork.
    pub ip: String,
}

/// Cluster add-ons and settings whose Kubernetes side the simulator models (the CSI drivers'
/// objects, and the DaemonSets GKE runs for them: [`crate::kube::controllers::gke_daemonsets`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Addons {
    pub filestore_csi: bool,
    pub gcs_fuse_csi: bool,
    /// The rest is absent from worlds saved before GKE's DaemonSets were simulated. `from_gke`:
    /// GKE told these settings (a cluster provisioned without GKE, or saved before, runs none of
    /// GKE's DaemonSets).
    #[serde(default)]
    pub from_gke: bool,
    /// `addonsConfig.gcePersistentDiskCsiDriverConfig.enabled`.
    #[serde(default)]
    pub pd_csi: bool,
    /// `networkConfig.datapathProvider: ADVANCED_DATAPATH`.
    #[serde(default)]
    pub dataplane_v2: bool,
    /// `workloadIdentityConfig.workloadPool` set.
    #[serde(default)]
    pub workload_identity: bool,
    /// `loggingService` other than `none`.
    #[serde(default)]
    pub logging: bool,
    /// `monitoringService` other than `none`.
    #[serde(default)]
    pub monitoring: bool,
}

/// PEM material of one cluster's CA and serving certificate.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ClusterCerts {
    pub ca_cert_pem: String,
    pub ca_key_pem: String,
    pub server_cert_pem: String,
    pub server_key_pem: String,
}

/// What the controllers remember between ticks (persisted with the world).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct ControllerState {
    /// Object key → the rollout of its current generation.
    pub delays: BTreeMap<String, Rollout>,
    /// Deployment key → when its pods became available (kept across rollouts).
    pub available_since: BTreeMap<String, SimTime>,
    /// Deployment key → how long after becoming available its pods answer webhook calls.
    pub webhook_delay: BTreeMap<String, u64>,
    /// DaemonSet key → nodes that had a ready pod of the previous generation when it changed.
    pub previous_ready: BTreeMap<String, BTreeSet<String>>,
    /// Node pool → driver installation delay for GKE-managed drivers.
    pub driver_delay: BTreeMap<String, u64>,
    /// Pod key → how far the scheduler and the kubelet have brought it; absent from worlds
    /// saved before pods were run.
    #[serde(default)]
    pub pods: BTreeMap<String, PodRun>,
    /// Job key → what the Job controller (and Kueue's admission) did with it.
    #[serde(default)]
    pub jobs: BTreeMap<String, JobRun>,
    /// Declared fault outcome → how many containers it decided ([`crate::kube::controllers::outcomes`]).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub outcome_uses: BTreeMap<String, u32>,
    /// JobSet key → what the JobSet controller (and Kueue's admission) did with it.
    #[serde(default)]
    pub jobsets: BTreeMap<String, JobSetRun>,
    /// The (nodes, DaemonSets, pods) revisions after the last DaemonSet pass, and the moment a
    /// rollout moves on by itself (none: never): until one of them moves (or a change from
    /// outside the store), the next pass would change nothing ([`crate::kube::controllers::daemonset_pods::sync`]).
    #[serde(skip)]
    pub ds_pods_settled: Option<((u64, u64, u64), Option<SimTime>)>,
}

/// One generation of a workload (or a CRD) on its way to ready.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Rollout {
    pub generation: i64,
    /// When the generation was written.
    pub since: SimTime,
    /// How long its pods take to become ready.
    pub delay_ms: u64,
}

/// How far one pod has come (persisted with the world).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PodRun {
    /// The pod's uid: a pod deleted and made again under its name starts over.
    pub uid: String,
    /// The scheduler's failures.
    #[serde(default)]
    pub scheduling: Stage,
    /// The node the scheduler bound the pod to (or its own `nodeName`), and when.
    #[serde(default)]
    pub node: Option<String>,
    #[serde(default)]
    pub scheduled: Option<SimTime>,
    /// Volume mounts.
    #[serde(default)]
    pub mount: Stage,
    /// Image pulls, by container name (init containers included).
    #[serde(default)]
    pub pulls: BTreeMap<String, Stage>,
    /// Image pull and container start, after a successful pull.
    #[serde(default)]
    pub start_delay_ms: u64,
    /// How long an NCCL test runs once every host is up ([`crate::kube::controllers::runs`]).
    #[serde(default)]
    pub test_ms: u64,
    /// Containers that ended, by name ([`crate::kube::controllers::runs`]).
    #[serde(default)]
    pub ends: BTreeMap<String, End>,
}

/// A step that is retried until it succeeds.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Stage {
    /// What the last attempt failed with (one message per failing item), and the attempt at which
    /// those failures began.
    #[serde(default)]
    pub failing: Vec<String>,
    #[serde(default)]
    pub failing_since: SimTime,
    /// The last tick that found it failing.
    #[serde(default)]
    pub checked: Option<SimTime>,
    /// The attempt that succeeded.
    #[serde(default)]
    pub done: Option<SimTime>,
}

/// How a container ended (persisted with the pod's run).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct End {
    pub at: SimTime,
    pub exit_code: i32,
    /// Its whole log.
    pub log: String,
}

/// What the Job controller remembers about one Job (persisted with the world).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct JobRun {
    pub uid: String,
    /// When the Job started running: made unsuspended, or unsuspended later.
    #[serde(default)]
    pub started: Option<SimTime>,
    /// When it was last suspended, if it is.
    #[serde(default)]
    pub suspended: Option<SimTime>,
    /// When it was last resumed after a suspension.
    #[serde(default)]
    pub resumed: Option<SimTime>,
    /// Pods counted, by uid.
    #[serde(default)]
    pub counted: BTreeMap<String, Counted>,
    /// Pods made so far (what their names are drawn from).
    #[serde(default)]
    pub made: u64,
    /// How the Job finished.
    #[serde(default)]
    pub finished: Option<Finish>,
    /// Kueue's admission: the ClusterQueue and the quota it holds while the Job runs.
    #[serde(default)]
    pub admission: Option<Admission>,
}

/// A pod the controller counted.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Counted {
    pub index: Option<u32>,
    pub at: SimTime,
    pub succeeded: bool,
}

/// A Job's end.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Finish {
    pub at: SimTime,
    pub complete: bool,
    pub reason: String,
    pub message: String,
}

/// What the JobSet controller (and Kueue's admission) did with one JobSet (persisted).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct JobSetRun {
    pub uid: String,
    /// Kueue's admission: the ClusterQueue and the quota the JobSet holds while it runs.
    #[serde(default)]
    pub admission: Option<Admission>,
    /// How it ended: `(at, completed, reason, message)`.
    #[serde(default)]
    pub finished: Option<(SimTime, bool, String, String)>,
    /// Restarts done so far.
    #[serde(default)]
    pub restarts: u32,
    /// When it was last suspended and resumed.
    #[serde(default)]
    pub suspended: Option<SimTime>,
    #[serde(default)]
    pub resumed: Option<SimTime>,
}

/// The quota a Job holds from its admission until it ends.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Admission {
    pub cluster_queue: String,
    pub local_queue: String,
    /// `flavor/resource` → amount.
    pub usage: BTreeMap<String, f64>,
    pub at: SimTime,
}
