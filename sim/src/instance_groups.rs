//! The Compute managed instance groups (MIGs) behind a GKE node pool, and their VMs (one per node,
//! [`pool_vms`]): one group per zone of the pool, named
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

use crate::state::container::{Cluster, Effect, NodePool, Operation};
use crate::world::{World, compute_default_email};
use serde_json::Value;

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
    let running: Vec<&Operation> = world
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

/// One NIC of a node's VM.
#[derive(Debug, Clone, PartialEq)]
pub struct VmNic {
    /// `projects/p/global/networks/n`.
    pub network: String,
    /// `projects/p/regions/r/subnetworks/s`.
    pub subnetwork: String,
    /// Its internal address (empty when the range had none left).
    pub ip: String,
    /// `GVNIC` or `MRDMA`.
    pub nic_type: String,
}

/// A node of a GKE pool as the Compute instance it is.
#[derive(Debug, Clone, PartialEq)]
pub struct Vm {
    pub project: String,
    pub zone: String,
    /// `gke-<cluster>-<pool>-<hash>-<suffix>`, the node's name.
    pub name: String,
    /// Its managed instance group (`...-grp`) and the group's instance template (`base`).
    pub group: String,
    pub template: String,
    pub cluster: String,
    /// The cluster's location (region or zone).
    pub location: String,
    pub pool: String,
    pub machine_type: String,
    /// `(acceleratorType, acceleratorCount)` the pool attaches (`config.accelerators`), if any.
    pub attached: Option<(String, u32)>,
    /// `nic0` (the cluster's subnetwork), then the pool's additional node networks.
    pub nics: Vec<VmNic>,
    /// `projects/p/zones/z/reservations/r` the VM consumes, for a `SPECIFIC_RESERVATION` pool.
    pub reservation: Option<String>,
    /// `(key, values)` of the pool's `reservationAffinity`, when it names one.
    pub affinity: Option<(String, String, Vec<String>)>,
    /// `projects/p/regions/r/resourcePolicies/n`: the pool's compact placement policy.
    pub placement_policy: Option<String>,
    pub spot: bool,
    /// The node service account's email.
    pub service_account: String,
    /// The network tag GKE gives every node of the cluster (`gke-<cluster>-<hash>-node`).
    pub tag: String,
    /// The cluster's `createTime` (pools carry no time of their own).
    pub created: String,
}

/// The VMs of `pool` of `cluster`: one per node, in zone then suffix order.
pub fn pool_vms(world: &World, cluster: &Cluster, pool: &NodePool) -> Vec<Vm> {
    let subnets = pool_subnetworks(world, cluster, pool);
    let primary_network = cluster.resource["networkConfig"]["network"]
        .as_str()
        .unwrap_or("")
        .to_string();
    let config = &pool.resource["config"];
    let region = region_of(&cluster.location);
    let networks: Vec<(String, String)> = std::iter::once((primary_network, "GVNIC".to_string()))
        .chain(pool.nics.iter().map(|nic| {
            (
                format!(
                    "projects/{}/global/networks/{}",
                    cluster.project, nic.network
                ),
                nic.nic_type.clone(),
            )
        }))
        .collect();
    let affinity = &config["reservationAffinity"];
    let affinity = affinity["consumeReservationType"].as_str().map(|kind| {
        (
            kind.to_string(),
            affinity["key"].as_str().unwrap_or("").to_string(),
            string_list(&affinity["values"]),
        )
    });
    let placement_policy = pool.resource["placementPolicy"]["policyName"]
        .as_str()
        .filter(|n| !n.is_empty())
        .map(|name| {
            format!(
                "projects/{}/regions/{region}/resourcePolicies/{}",
                cluster.project,
                last_segment(name)
            )
        });
    let account = node_service_account(world, &cluster.project, &pool.resource["config"]);
    let cluster_id = cluster.resource["id"].as_str().unwrap_or(&cluster.name);
    let tag = format!("gke-{}-{}-node", cluster.name, fingerprint(cluster_id));
    let created = cluster.resource["createTime"]
        .as_str()
        .unwrap_or("1970-01-01T00:00:00Z")
        .to_string();
    let attached = config["accelerators"].get(0).and_then(|a| {
        let kind = a["acceleratorType"].as_str()?;
        Some((kind.to_string(), count_of(&a["acceleratorCount"]) as u32))
    });
    let prefix = node_prefix(&cluster.name, &pool.name);
    let mut out = vec![];
    for (zone, group) in &pool.groups {
        let base = format!("{prefix}-{}", group.hash);
        for suffix in &group.suffixes {
            let addresses = group.addresses.get(suffix);
            let nics = subnets
                .iter()
                .zip(&networks)
                .enumerate()
                .map(|(i, ((subnetwork, _), (network, nic_type)))| VmNic {
                    network: network.clone(),
                    subnetwork: subnetwork.clone(),
                    ip: addresses
                        .and_then(|a| a.get(i))
                        .cloned()
                        .unwrap_or_default(),
                    nic_type: nic_type.clone(),
                })
                .collect();
            out.push(Vm {
                project: cluster.project.clone(),
                zone: zone.clone(),
                name: format!("{base}-{suffix}"),
                group: format!("{base}-grp"),
                template: base.clone(),
                cluster: cluster.name.clone(),
                location: cluster.location.clone(),
                pool: pool.name.clone(),
                machine_type: config["machineType"]
                    .as_str()
                    .unwrap_or("e2-medium")
                    .to_string(),
                attached: attached.clone(),
                nics,
                reservation: pool.reserved.get(zone).map(|r| r.reservation.clone()),
                affinity: affinity.clone(),
                placement_policy: placement_policy.clone(),
                spot: config["spot"] == serde_json::json!(true),
                service_account: account.clone(),
                tag: tag.clone(),
                created: created.clone(),
            });
        }
    }
    out
}

/// Every node VM of the world, cluster by cluster, pool by pool.
pub fn vms(world: &World) -> Vec<Vm> {
    world
        .container
        .clusters
        .values()
        .flat_map(|c| c.pools.iter().map(move |p| (c, p)))
        .flat_map(|(c, p)| pool_vms(world, c, p))
        .collect()
}

/// The node VMs of `project` in `zone`, in name order.
pub fn vms_in_zone(world: &World, project: &str, zone: &str) -> Vec<Vm> {
    let mut out: Vec<Vm> = world
        .container
        .clusters
        .values()
        .filter(|c| c.project == project)
        .flat_map(|c| c.pools.iter().map(move |p| (c, p)))
        .flat_map(|(c, p)| pool_vms(world, c, p))
        .filter(|vm| vm.zone == zone)
        .collect();
    out.sort_by(|a, b| a.name.cmp(&b.name));
    out
}

/// `gke-<cluster>-<pool>` with cluster and pool names shortened to 32 characters together, as
/// GKE shortens instance-group and node names.
pub fn node_prefix(cluster: &str, pool: &str) -> String {
    let (mut c, mut p) = (cluster.len(), pool.len());
    while c + p > 32 {
        if c >= p {
            c -= 1;
        } else {
            p -= 1;
        }
    }
    let trim = |s: &str, n: usize| s[..n].trim_end_matches('-').to_string();
    format!("gke-{}-{}", trim(cluster, c), trim(pool, p))
}

/// The last segment of a name or resource path (`projects/p/global/networks/n` → `n`).
pub fn last_segment(value: &str) -> &str {
    value.rsplit('/').next().unwrap_or(value)
}

/// An int64 field that may be a JSON string or number.
pub fn count_of(value: &Value) -> u64 {
    match value {
        Value::String(s) => s.parse().unwrap_or(0),
        other => other.as_u64().unwrap_or(0),
    }
}

/// The region of a zone or region.
pub fn region_of(location: &str) -> String {
    crate::geo::region_of_zone(location)
        .unwrap_or(location)
        .to_string()
}

/// 8 hex digits derived from `text` (label fingerprints, etags).
pub fn fingerprint(text: &str) -> String {
    let mut hash: u32 = 0x811c_9dc5;
    for byte in text.bytes() {
        hash ^= u32::from(byte);
        hash = hash.wrapping_mul(0x0100_0193);
    }
    format!("{hash:08x}")
}

/// The strings of a JSON list (missing = empty).
pub fn string_list(value: &Value) -> Vec<String> {
    value
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// `(subnetwork path, primary range)` of each NIC of `pool`'s VMs, `nic0` first: the cluster's
/// subnetwork, then the pool's additional node networks.
pub fn pool_subnetworks(
    world: &World,
    cluster: &Cluster,
    pool: &NodePool,
) -> Vec<(String, String)> {
    let primary = primary_subnetwork(cluster);
    let cidr = world
        .compute
        .resources
        .get(&primary)
        .and_then(|r| r.body["ipCidrRange"].as_str())
        .unwrap_or("")
        .to_string();
    let region = region_of(&cluster.location);
    let mut out = vec![(primary, cidr)];
    out.extend(pool.nics.iter().map(|nic| {
        (
            format!(
                "projects/{}/regions/{region}/subnetworks/{}",
                cluster.project, nic.subnetwork
            ),
            nic.cidr.clone(),
        )
    }));
    out
}

/// The relative path of the cluster's own subnetwork (`networkConfig.subnetwork`).
pub fn primary_subnetwork(cluster: &Cluster) -> String {
    cluster.resource["networkConfig"]["subnetwork"]
        .as_str()
        .unwrap_or("")
        .to_string()
}

/// The email of the service account a pool's nodes run as: its `config.serviceAccount`, with
/// `default` (or nothing) standing for the project's Compute Engine default service account.
pub fn node_service_account(world: &World, project: &str, config: &Value) -> String {
    match config["serviceAccount"].as_str() {
        None | Some("" | "default") => compute_default_email(world, project),
        Some(email) => email.to_string(),
    }
}
