//! GKE's state: clusters with their node pools (and the instance groups, reservations and VMs of
//! each pool), every operation (with a node-pool upgrade's progress), and the world file's
//! schedule of releases. The API is [`crate::container`].

use crate::clock::SimTime;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};

/// Everything GKE holds.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct State {
    /// By key `projects/P/locations/L/clusters/C`.
    pub clusters: BTreeMap<String, Cluster>,
    /// Every operation, oldest first.
    pub operations: Vec<Operation>,
    /// The world file's `[gke]` schedule of releases (seeded into a fresh world, kept with it);
    /// `None`: the fixed offer of time zero and no auto-upgrades.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schedule: Option<Schedule>,
    /// Simulated time of the last tick (the offer's time for handlers).
    #[serde(default)]
    pub last_tick: SimTime,
    /// Auto-upgrades were decided up to this time.
    #[serde(default)]
    pub auto_checked: SimTime,
    /// Clusters whose auto-upgrade step could not start at that instant (a scripted fault on the
    /// pool update): not retried at the same instant, so the tick ends.
    #[serde(skip)]
    pub auto_failed: BTreeMap<String, SimTime>,
}

/// One cluster.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Cluster {
    pub project: String,
    pub location: String,
    pub name: String,
    /// The `Cluster` resource without `nodePools`.
    pub resource: Value,
    pub pools: Vec<NodePool>,
}

/// One node pool.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct NodePool {
    pub name: String,
    /// The `NodePool` resource.
    pub resource: Value,
    /// Nodes per zone that exist now (the API only shows `initialNodeCount`).
    pub node_count: u32,
    /// Per zone: the instance group's 8-hex hash and the 4-character suffixes of its nodes.
    pub groups: BTreeMap<String, NodeGroup>,
    /// Bumped on every change; the `etag` derives from it.
    pub generation: u64,
    /// Per zone, the Compute reservation a `SPECIFIC_RESERVATION` pool consumes there (empty for
    /// other pools; absent from worlds saved before pools consumed reservations).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub reserved: BTreeMap<String, Reserved>,
    /// Per zone, the VMs of the zone's capacity the instance group holds: its nodes, plus those
    /// being created (see [`crate::capacity`]). Empty for pools that consume a reservation; absent
    /// from worlds saved before zone capacity, whose groups hold their nodes.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub granted: BTreeMap<String, u32>,
    /// Nodes (by name) whose version differs from the pool's `version`: those an upgrade has
    /// replaced so far ([`crate::container::upgrades`]). Absent from worlds saved before upgrades ran in batches.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub node_versions: BTreeMap<String, String>,
    /// Nodes (by name) an upgrade has cordoned.
    #[serde(default, skip_serializing_if = "BTreeSet::is_empty")]
    pub cordoned: BTreeSet<String>,
    /// The NICs its nodes have after `eth0` (its additional node networks, checked when it was
    /// created); absent from worlds saved before pools carried them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub nics: Vec<PoolNic>,
}

/// What a pool's instance group in one zone holds of a Compute reservation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Reserved {
    /// `projects/Q/zones/Z/reservations/R`.
    pub reservation: String,
    /// The reservation's `id`: a reservation deleted and created again under the same name is
    /// another one, and is not touched.
    pub id: String,
    /// VMs counted in the reservation's `inUseCount`: the group's nodes, plus those being created.
    pub count: u32,
}

/// The managed instance group of a node pool in one zone.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct NodeGroup {
    pub hash: String,
    pub suffixes: Vec<String>,
    /// Per node (by suffix), its VM's internal addresses, one per NIC in
    /// [`crate::container::node_addresses::pool_subnetworks`] order; absent from worlds saved before nodes were
    /// VMs (their nodes get addresses at the pool's next change).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub addresses: BTreeMap<String, Vec<String>>,
}

/// One GKE operation.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Operation {
    /// `operation-<millis>-<uuid>`.
    pub name: String,
    pub project: String,
    pub location: String,
    /// `CREATE_CLUSTER`, `SET_NODE_POOL_SIZE` ...
    pub op_type: String,
    /// `RUNNING` or `DONE`.
    pub status: String,
    /// Path of the target resource (`projects/P/locations/L/clusters/C[/nodePools/NP]`).
    pub target: String,
    pub cluster_key: String,
    pub start: SimTime,
    pub done_at: SimTime,
    pub end: Option<SimTime>,
    pub effect: Effect,
    /// Set when the operation was scripted to fail; becomes `error` when it ends.
    pub failure: Option<OpError>,
    pub error: Option<OpError>,
    /// The failure is a reservation that had too few VMs left: the nodes it gave stay
    /// (`crate::container::operations::fail_later`). Absent from worlds saved before.
    #[serde(default)]
    pub keeps_nodes: bool,
    /// Set when the operation's VMs did not all fit their zones' capacity: until then it waits
    /// for more, after it fails with `GCE_STOCKOUT` (`crate::container::operations::wait_for_capacity`). Absent from worlds
    /// saved before zone capacity.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capacity_deadline: Option<SimTime>,
    /// The operation's own duration has passed and it is waiting for capacity (its `done_at` is
    /// then the deadline).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub waiting: bool,
    /// A node-pool upgrade replacing nodes batch by batch: while it has steps left, `done_at` is
    /// when the next is due ([`crate::container::upgrades`]). Absent from other operations and from worlds
    /// saved before upgrades ran in batches.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub upgrade: Option<Run>,
}

/// Why an operation failed (a `google.rpc.Status` plus the deprecated condition code).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OpError {
    /// `google.rpc.Code` number.
    pub code: i32,
    /// `google.rpc.Code` name, e.g. `RESOURCE_EXHAUSTED`.
    pub canonical: String,
    pub message: String,
    /// `StatusCondition.Code`, e.g. `GCE_STOCKOUT`.
    pub condition: String,
}

/// What happens when an operation finishes successfully.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub enum Effect {
    CreateCluster,
    DeleteCluster,
    /// Replace these top-level fields of the cluster (computed in full when it started).
    UpdateCluster {
        patch: Value,
    },
    /// Replace these top-level fields of a pool (and recompute its nodes).
    UpdateNodePool {
        pool: String,
        patch: Value,
    },
    CreateNodePool {
        pool: String,
    },
    DeleteNodePool {
        pool: String,
    },
    SetNodePoolSize {
        pool: String,
        count: u32,
    },
}

/// How a pool's nodes are replaced.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Strategy {
    Surge {
        max_surge: u32,
        max_unavailable: u32,
    },
    BlueGreen {
        /// Blue nodes drained per batch.
        batch: u32,
        batch_soak_ms: u64,
        pool_soak_ms: u64,
    },
}

/// Where a run is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Phase {
    /// Next step starts a batch (surge) or the green pool (blue-green).
    Start,
    /// Surge VMs are being created.
    Surging,
    /// Cordoned old nodes are being drained.
    Draining,
    /// VMs of drained nodes are being recreated with the new version.
    Recreating,
    /// Green nodes are being created.
    CreatingGreen,
    /// Blue nodes are drained batch by batch.
    DrainingBlue,
    /// All blue nodes drained: the pool soaks.
    PoolSoaking,
    /// Blue nodes are being deleted.
    DeletingBlue,
    /// Over (the operation ends at its `done_at`).
    Done,
}

/// A node-pool upgrade in progress, kept in its operation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Run {
    pub pool: String,
    /// The version nodes are upgraded to.
    pub version: String,
    pub strategy: Strategy,
    /// Nodes to replace.
    pub total: u32,
    /// Nodes replaced (blue-green: blue nodes drained).
    pub done: u32,
    pub phase: Phase,
    /// Zone of the current batch.
    #[serde(default)]
    pub zone: String,
    /// Old nodes of the current batch (names).
    #[serde(default)]
    pub batch: Vec<String>,
    /// Surge VMs booked for the current batch, or green VMs still to be had.
    #[serde(default)]
    pub vms: u32,
    /// New nodes still to be created in the current batch (Recreating), or wanted (waiting).
    #[serde(default)]
    pub wanted: u32,
    /// Nodes this run created (they are not replaced again).
    #[serde(default)]
    pub fresh: BTreeSet<String>,
    /// Waiting for VMs until then.
    #[serde(default)]
    pub deadline: Option<SimTime>,
}

/// One release of a [`Schedule`]: a build that becomes valid in a channel, and optionally its
/// default (and auto-upgrade target), at given simulated times.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Release {
    /// `RAPID`, `REGULAR`, `STABLE` or `EXTENDED`.
    pub channel: String,
    /// A GKE build, `1.33.6-gke.1100000`.
    pub version: String,
    /// Simulated seconds after time zero from which the channel offers the build.
    #[serde(default)]
    pub valid_after_secs: u64,
    /// Simulated seconds after time zero from which the build is the channel's default and
    /// `upgradeTargetVersion`; unset: never.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_after_secs: Option<u64>,
}

/// The `[gke]` table of the world file: builds that release channels publish over simulated
/// time, and each minor's end of support. A world with a schedule (even an empty one) also
/// auto-upgrades its clusters (`crate::container::auto_upgrade`); a world without one keeps the fixed
/// offer of time zero and never auto-upgrades.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Schedule {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub releases: Vec<Release>,
    /// Per minor (`"1.33"`), the RFC 3339 instant its support ends; a minor not listed ends
    /// [`crate::container::server_config::DEFAULT_SUPPORT_DAYS`] after the world's time zero.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub end_of_support: BTreeMap<String, String>,
}

/// One extra NIC of a pool's nodes, in order after `eth0`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PoolNic {
    pub network: String,
    pub subnetwork: String,
    /// `GVNIC` or `MRDMA`.
    pub nic_type: String,
    /// The subnetwork's primary range, where the NIC's address comes from.
    pub cidr: String,
}
