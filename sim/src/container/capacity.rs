//! Node pools and zone capacity: the VMs a pool's instance groups are granted from their zones'
//! capacity when a create or resize starts, the operations that wait for more, and the
//! `GCE_STOCKOUT` failure of those that wait in vain. The rules and their sources are in
//! [`crate::capacity`].
//!
//! Mechanics, as for reservations ([`super::reservations`]): each group's grant
//! ([`super::NodePool::granted`]) rises when an operation starts creating VMs, by what the zone has
//! left; when an operation ends, every group holds exactly its nodes ([`settle`]); a deleted pool or
//! cluster holds nothing. An operation short of VMs records its deadline
//! ([`super::Operation::capacity_deadline`]); it is granted freed capacity at the moment it frees
//! ([`retry`]), and once its own duration has passed it waits (`waiting`) until it has everything
//! or the deadline comes.

use super::nodes::node_prefix;
use super::operations::{Effect, OpError, Operation};
use super::rules::count_of;
use crate::capacity::{self, CapacityConfig};
use crate::clock::SimTime;
use crate::shared::Ctx;
use crate::world::World;

/// Grants, in every zone of the stored pool `pool_name` of cluster `key`, the VMs it needs to have
/// `wanted` there (what it holds counts), as far as the zone's capacity goes. Returns whether every
/// zone has them all, and whether anything was granted. A pool that consumes a reservation takes
/// nothing from the zones.
pub fn book(
    world: &mut World,
    config: &CapacityConfig,
    key: &str,
    pool_name: &str,
    wanted: u32,
) -> (bool, bool) {
    let Some(pool) = world
        .container
        .clusters
        .get(key)
        .and_then(|c| c.pool(pool_name))
    else {
        return (true, false);
    };
    if !pool.reserved.is_empty() {
        return (true, false);
    }
    let zones: Vec<String> = pool.groups.keys().cloned().collect();
    let (mut complete, mut took) = (true, false);
    for zone in zones {
        let Some(held) = world
            .container
            .clusters
            .get(key)
            .and_then(|c| c.pool(pool_name))
            .map(|p| p.held_in(&zone))
        else {
            break;
        };
        if held >= wanted {
            continue;
        }
        let need = wanted - held;
        let take = take_from_zone(world, config, (key, pool_name), &zone, held, need);
        took |= take > 0;
        complete &= take == need;
    }
    (complete, took)
}

/// The pools an operation creates VMs for, with the VMs each wants per zone.
fn demand(world: &World, op: &Operation) -> Vec<(String, u32)> {
    let Some(cluster) = world.container.clusters.get(&op.cluster_key) else {
        return vec![];
    };
    let initial = |name: &str| {
        cluster
            .pool(name)
            .map_or(0, |p| count_of(&p.resource["initialNodeCount"]) as u32)
    };
    match &op.effect {
        Effect::CreateCluster => cluster
            .pools
            .iter()
            .map(|p| (p.name.clone(), initial(&p.name)))
            .collect(),
        Effect::CreateNodePool { pool } => vec![(pool.clone(), initial(pool))],
        Effect::SetNodePoolSize { pool, count } => vec![(pool.clone(), *count)],
        _ => vec![],
    }
}

/// Grants what `op` still lacks, as far as capacity goes. Returns whether it has everything, and
/// whether anything was granted.
pub fn book_op(world: &mut World, config: &CapacityConfig, op: &Operation) -> (bool, bool) {
    let (mut complete, mut took) = (true, false);
    for (pool, wanted) in demand(world, op) {
        let (all, some) = book(world, config, &op.cluster_key, &pool, wanted);
        complete &= all;
        took |= some;
    }
    (complete, took)
}

/// Gives freed capacity, at time `at`, to the operations short of it, oldest first; one that
/// waits past its own duration and now has everything ends at `at`. Returns true if anything was
/// granted.
pub fn retry(world: &mut World, cx: &Ctx, at: SimTime) -> bool {
    let config = &cx.capacity;
    let short: Vec<usize> = world
        .container
        .operations
        .iter()
        .enumerate()
        .filter(|(_, o)| o.status != "DONE" && o.capacity_deadline.is_some() && o.failure.is_none())
        .map(|(i, _)| i)
        .collect();
    let mut changed = false;
    for index in short {
        let op = world.container.operations[index].clone();
        let (complete, took) = book_op(world, config, &op);
        changed |= took;
        if complete && op.waiting {
            let stored = &mut world.container.operations[index];
            stored.waiting = false;
            stored.done_at = at;
            changed = true;
        }
    }
    changed
}

/// GKE's failure for an operation whose instance groups could not get all their VMs: the first
/// group short names its next instance.
pub fn stockout(world: &World, config: &CapacityConfig, op: &Operation) -> OpError {
    let (mut expected, mut running) = (0u64, 0u64);
    let mut first: Option<(String, String)> = None;
    if let Some(cluster) = world.container.clusters.get(&op.cluster_key) {
        for (name, wanted) in demand(world, op) {
            let Some(pool) = cluster.pool(&name) else {
                continue;
            };
            for (zone, group) in &pool.groups {
                let held = pool.held_in(zone).min(wanted);
                expected += u64::from(wanted);
                running += u64::from(held);
                if held < wanted && first.is_none() {
                    let node = format!(
                        "{}-{}-{:04}",
                        node_prefix(&cluster.name, &pool.name),
                        group.hash,
                        held + 1
                    );
                    first = Some((zone.clone(), node));
                }
            }
        }
    }
    let (zone, node) = first.unwrap_or_default();
    let project = op.cluster_key.split('/').nth(1).unwrap_or(&op.project);
    super::node_pools::stockout_error(
        project,
        &zone,
        &node,
        expected,
        running,
        &capacity::go_duration(config.stockout_wait_secs),
    )
}

/// Makes every group of the cluster's pools that consume no reservation hold exactly its nodes:
/// what was granted for VMs that were not created (a failed or cancelled operation, a shrink)
/// goes back to the zone.
pub fn settle(world: &mut World, key: &str) {
    let Some(cluster) = world.container.clusters.get_mut(key) else {
        return;
    };
    for pool in &mut cluster.pools {
        if !pool.reserved.is_empty() {
            continue;
        }
        for (zone, group) in &pool.groups {
            pool.granted
                .insert(zone.clone(), group.suffixes.len() as u32);
        }
    }
}

/// Takes up to `need` more VMs of the zone's capacity for pool `pool_name` of cluster `key`,
/// which holds `held` there, and records the grant; returns how many it got (all of them when
/// the zone's capacity is unlimited).
pub fn take_from_zone(
    world: &mut World,
    config: &CapacityConfig,
    (key, pool_name): (&str, &str),
    zone: &str,
    held: u32,
    need: u32,
) -> u32 {
    let Some(pool) = world
        .container
        .clusters
        .get(key)
        .and_then(|c| c.pool(pool_name))
    else {
        return 0;
    };
    let (machine, model) = capacity::pool_vm(&pool.resource);
    let take = match capacity::free(world, config, zone, &machine, model) {
        None => need,
        Some(free) => need.min(u32::try_from(free).unwrap_or(u32::MAX)),
    };
    if let Some(pool) = world
        .container
        .clusters
        .get_mut(key)
        .and_then(|c| c.pool_mut(pool_name))
    {
        pool.granted.insert(zone.to_string(), held + take);
    }
    take
}
