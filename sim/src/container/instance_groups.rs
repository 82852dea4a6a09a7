//! The Compute managed instance groups (MIGs) behind a node pool: one per zone of the pool, named
//! as the pool's `instanceGroupUrls` name them (`gke-<cluster>-<pool>-<hash>-grp`), derived from
//! the pool each time they are read — never stored — so they cannot drift from it. Compute serves
//! them read-only ([`crate::compute::instance_group_managers`]); the simulator's quota usage counts
//! a pool's VMs from the same numbers ([`crate::quotas`]).
//!
//! A group's `targetSize` is the size GKE asked of it: while a create (of the pool or of its
//! cluster) or a resize (`setSize`) of the pool runs and is not going to fail, that operation's
//! nodes per zone (GKE resizes the MIG when the operation starts and waits for its VMs); otherwise
//! the nodes the zone has (after an upgrade's surge nodes are added, the group counts them too).
//! A shrink's target is below the nodes still there: those are `currentActions.deleting` until the
//! operation ends. A scripted failure makes the simulator's operation keep nothing, so its target
//! is not shown (Compute's group would keep retrying; the simulator's groups do not retry).

use super::operations::Effect;
use super::rules::count_of;
use super::{Cluster, NodePool, nodes::node_prefix};
use crate::world::World;

/// One zone's managed instance group of a node pool.
#[derive(Debug, Clone, PartialEq)]
pub struct GroupManager {
    pub project: String,
    pub zone: String,
    /// `gke-<cluster>-<pool>-<hash>-grp`.
    pub name: String,
    /// `gke-<cluster>-<pool>-<hash>`: the nodes' name prefix, and the instance template's name.
    pub base_instance_name: String,
    /// The VMs GKE asked for.
    pub target_size: u64,
    /// The VMs (nodes) the zone has now.
    pub size: u64,
    /// No operation of the pool's (create, resize, upgrade, delete) is running.
    pub stable: bool,
    /// The cluster's `createTime` (pools carry no time of their own).
    pub created: String,
}

impl GroupManager {
    /// VMs being created: the target not reached yet.
    pub fn creating(&self) -> u64 {
        self.target_size.saturating_sub(self.size)
    }

    /// VMs being deleted by a shrink: still there, above the target.
    pub fn deleting(&self) -> u64 {
        self.size.saturating_sub(self.target_size)
    }

    /// The VMs that exist or are being created: what counts against quota.
    pub fn vms(&self) -> u64 {
        self.target_size.max(self.size)
    }
}

/// The groups of `pool` of `cluster`, one per zone, in zone order.
pub fn managers(world: &World, cluster: &Cluster, pool: &NodePool) -> Vec<GroupManager> {
    let key = cluster.key();
    let running: Vec<&super::Operation> = world
        .container
        .operations
        .iter()
        .filter(|op| op.status != "DONE" && op.cluster_key == key)
        .collect();
    let initial = count_of(&pool.resource["initialNodeCount"]);
    // The nodes per zone a running create or resize of the pool brings it to.
    let pending = running
        .iter()
        .filter(|op| op.failure.is_none())
        .filter_map(|op| match &op.effect {
            Effect::CreateCluster => Some(initial),
            Effect::CreateNodePool { pool: p } if *p == pool.name => Some(initial),
            Effect::SetNodePoolSize { pool: p, count } if *p == pool.name => {
                Some(u64::from(*count))
            }
            _ => None,
        })
        .max();
    let busy = running.iter().any(|op| match &op.effect {
        Effect::CreateCluster | Effect::DeleteCluster => true,
        Effect::CreateNodePool { pool: p }
        | Effect::DeleteNodePool { pool: p }
        | Effect::SetNodePoolSize { pool: p, .. }
        | Effect::UpdateNodePool { pool: p, .. } => *p == pool.name,
        Effect::UpdateCluster { .. } => false,
    });
    let prefix = node_prefix(&cluster.name, &pool.name);
    let created = cluster.resource["createTime"]
        .as_str()
        .unwrap_or("1970-01-01T00:00:00Z")
        .to_string();
    pool.groups
        .iter()
        .map(|(zone, group)| {
            let size = group.suffixes.len() as u64;
            let base = format!("{prefix}-{}", group.hash);
            GroupManager {
                project: cluster.project.clone(),
                zone: zone.clone(),
                name: format!("{base}-grp"),
                base_instance_name: base,
                target_size: pending.unwrap_or(size),
                size,
                stable: !busy,
                created: created.clone(),
            }
        })
        .collect()
}

/// Every node pool group of `project` in `zone`, in name order.
pub fn in_zone(world: &World, project: &str, zone: &str) -> Vec<GroupManager> {
    let mut out: Vec<GroupManager> = world
        .container
        .clusters
        .values()
        .filter(|c| c.project == project)
        .flat_map(|c| c.pools.iter().map(move |p| (c, p)))
        .flat_map(|(c, p)| managers(world, c, p))
        .filter(|m| m.zone == zone)
        .collect();
    out.sort_by(|a, b| a.name.cmp(&b.name));
    out
}
