//! The internal IPv4 addresses of a node pool's VMs: one per NIC — `nic0` in the cluster's
//! subnetwork, then one in the subnetwork of each additional node network — kept per node in its
//! instance group ([`super::NodeGroup::addresses`]) for the node's whole life, so the Compute
//! instance ([`super::instance_groups::vms`]) and the Kubernetes Node's `InternalIP` and
//! `nic-info` ([`crate::kube::controllers::nodes`]) show the same address.
//!
//! A new node takes, in each subnetwork, the lowest address of the primary range that no other VM
//! of the world holds there, after the four Compute reserves: the network and gateway addresses
//! (first two) and the last two ("Reserved IPv4 addresses in IPv4 subnet ranges",
//! <https://cloud.google.com/vpc/docs/subnets#unusable-ip-addresses-in-every-subnet>). Lowest-free
//! is the simulator's own order (a guess: Compute does not publish how it picks an ephemeral
//! internal address); a full range leaves the NIC without an address instead of failing the VM.

// GUESS(node-address-order): a new node takes the lowest free address of each of its subnetworks after the four Compute reserves
pub use crate::instance_groups::{pool_subnetworks, primary_subnetwork};
use crate::world::World;
use std::collections::{BTreeMap, BTreeSet};

/// Gives every node of `pool_name` that has none its addresses, and forgets those of nodes that
/// are gone.
pub fn assign(world: &mut World, key: &str, pool_name: &str) {
    let Some(cluster) = world.container.clusters.get(key) else {
        return;
    };
    let Some(pool) = cluster.pool(pool_name) else {
        return;
    };
    let subnets = pool_subnetworks(world, cluster, pool);
    let mut taken = taken_addresses(world);
    let mut groups = pool.groups.clone();
    for group in groups.values_mut() {
        let live: BTreeSet<&String> = group.suffixes.iter().collect();
        group.addresses.retain(|suffix, _| live.contains(suffix));
        for suffix in &group.suffixes {
            if group
                .addresses
                .get(suffix)
                .is_some_and(|a| a.len() == subnets.len())
            {
                continue;
            }
            let addresses = subnets
                .iter()
                .map(|(path, cidr)| {
                    let used = taken.entry(path.clone()).or_default();
                    let address = lowest_free(cidr, used).unwrap_or_default();
                    used.insert(address.clone());
                    address
                })
                .collect();
            group.addresses.insert(suffix.clone(), addresses);
        }
    }
    if let Some(pool) = world
        .container
        .clusters
        .get_mut(key)
        .and_then(|c| c.pool_mut(pool_name))
    {
        pool.groups = groups;
    }
}

/// Every address a node holds, by subnetwork path.
fn taken_addresses(world: &World) -> BTreeMap<String, BTreeSet<String>> {
    let mut taken: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for cluster in world.container.clusters.values() {
        for pool in &cluster.pools {
            let subnets = pool_subnetworks(world, cluster, pool);
            for group in pool.groups.values() {
                for addresses in group.addresses.values() {
                    for ((path, _), address) in subnets.iter().zip(addresses) {
                        taken
                            .entry(path.clone())
                            .or_default()
                            .insert(address.clone());
                    }
                }
            }
        }
    }
    taken
}

/// The lowest usable address of `cidr` not in `used`.
fn lowest_free(cidr: &str, used: &BTreeSet<String>) -> Option<String> {
    let (base, prefix) = cidr.split_once('/')?;
    let prefix: u32 = prefix.parse().ok()?;
    let octets: Vec<u32> = base.split('.').filter_map(|o| o.parse().ok()).collect();
    if octets.len() != 4 || !(1..=29).contains(&prefix) {
        return None;
    }
    let start = (octets[0] << 24) | (octets[1] << 16) | (octets[2] << 8) | octets[3];
    let size = 1u64 << (32 - prefix);
    (2..size.saturating_sub(2))
        .map(|offset| {
            let a = start.wrapping_add(offset as u32);
            format!(
                "{}.{}.{}.{}",
                (a >> 24) & 255,
                (a >> 16) & 255,
                (a >> 8) & 255,
                a & 255
            )
        })
        .find(|address| !used.contains(address))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn new_nodes_take_the_lowest_free_usable_address() {
        let mut used = BTreeSet::new();
        assert_eq!(
            lowest_free("10.0.0.0/29", &used).as_deref(),
            Some("10.0.0.2")
        );
        used.insert("10.0.0.2".to_string());
        used.insert("10.0.0.4".to_string());
        assert_eq!(
            lowest_free("10.0.0.0/29", &used).as_deref(),
            Some("10.0.0.3")
        );
        used.insert("10.0.0.3".to_string());
        used.insert("10.0.0.5".to_string());
        // .6 and .7 are Compute's: a /29 holds 4 VMs.
        assert_eq!(lowest_free("10.0.0.0/29", &used), None);
        assert_eq!(lowest_free("nonsense", &used), None);
    }
}
