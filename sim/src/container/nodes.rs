//! The nodes of a node pool as GKE creates them: instance groups per zone, node names
//! (`gke-<cluster>-<pool>-<8 hex>-<4 chars>`), GKE's labels and taints, their extra NICs, the
//! service account the nodes run as, and the hand-over to the Kubernetes side.

use super::rules::count_of;
use super::{NodePool, fingerprint, region_of};
pub use crate::instance_groups::node_prefix;
use crate::kube::{NodeNic, NodeSpec};
use crate::shared::Ctx;
use crate::world::World;
use rand::Rng;
use serde_json::{Value, json};
use std::collections::BTreeMap;

/// Brings a pool's instance groups to its node count and tells Kubernetes about its nodes.
pub fn sync_nodes(world: &mut World, cx: &Ctx, key: &str, pool_name: &str) {
    let Some(pool) = world
        .container
        .clusters
        .get(key)
        .and_then(|c| c.pool(pool_name))
    else {
        return;
    };
    let has_nodes = matches!(
        pool.status(),
        "RUNNING" | "RECONCILING" | "RUNNING_WITH_ERROR"
    );
    let mut groups = pool.groups.clone();
    for (zone, group) in groups.iter_mut() {
        // A group consuming a reservation has the nodes the reservation gave it.
        let wanted = if has_nodes {
            pool.nodes_in(zone) as usize
        } else {
            0
        };
        group.suffixes.truncate(wanted);
        while group.suffixes.len() < wanted {
            let suffix: String = (0..4)
                .map(|_| {
                    let n = world.rng.random_range(0..36u32);
                    char::from_digit(n, 36).unwrap_or('a')
                })
                .collect();
            if !group.suffixes.contains(&suffix) {
                group.suffixes.push(suffix);
            }
        }
    }
    let account = super::node_pools::node_service_account(
        world,
        &world.container.clusters[key].project,
        &pool.resource["config"],
    );
    let Some(cluster) = world.container.clusters.get_mut(key) else {
        return;
    };
    let cluster_name = cluster.name.clone();
    let Some(pool) = cluster.pool_mut(pool_name) else {
        return;
    };
    pool.groups = groups;
    super::node_addresses::assign(world, key, pool_name);
    let Some(pool) = world
        .container
        .clusters
        .get(key)
        .and_then(|c| c.pool(pool_name))
    else {
        return;
    };
    let nodes = node_specs(&cluster_name, pool);
    let has_nodes = !nodes.is_empty();
    world.kube.set_pool_nodes(key, pool_name, nodes, cx.now);
    if has_nodes {
        world.kube.set_pool_account(key, pool_name, &account);
    }
}

/// `(vCPUs, memory)` of a machine type.
pub fn shape(machine: &str) -> (u32, String) {
    if let Some(catalogued) = crate::geo::machine_type(machine)
        && catalogued.accelerator.is_some()
    {
        return (
            catalogued.cpus,
            format!("{}Gi", catalogued.memory_mb / 1024),
        );
    }
    if machine.starts_with("a3-") {
        return (208, "1872Gi".into());
    }
    if machine == "e2-medium" {
        return (2, "4Gi".into());
    }
    let cpus: u32 = machine
        .rsplit('-')
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or(2);
    let per_cpu = if machine.contains("highmem") {
        8
    } else if machine.contains("highcpu") {
        1
    } else {
        4
    };
    (cpus, format!("{}Gi", cpus * per_cpu))
}

/// The nodes of a pool, with GKE's labels and taints.
pub fn node_specs(cluster_name: &str, pool: &NodePool) -> Vec<NodeSpec> {
    let config = &pool.resource["config"];
    let machine = config["machineType"].as_str().unwrap_or("e2-medium");
    let accelerator = config["accelerators"]
        .get(0)
        .cloned()
        .unwrap_or(Value::Null);
    let accelerator_type = accelerator["acceleratorType"].as_str().unwrap_or("");
    let gpus = count_of(&accelerator["acceleratorCount"]) as u32;
    let driver = accelerator["gpuDriverInstallationConfig"]["gpuDriverVersion"]
        .as_str()
        .unwrap_or("");
    let managed_driver = matches!(driver, "DEFAULT" | "LATEST");
    let compact = pool.resource["placementPolicy"]["type"] == json!("COMPACT");
    let (cpus, memory) = shape(machine);
    let prefix = node_prefix(cluster_name, &pool.name);
    let mut taints = vec![];
    if gpus > 0 {
        taints.push((
            "nvidia.com/gpu".into(),
            "present".into(),
            "NoSchedule".into(),
        ));
    }
    for taint in config["taints"].as_array().into_iter().flatten() {
        let effect = match taint["effect"].as_str().unwrap_or("") {
            "PREFER_NO_SCHEDULE" => "PreferNoSchedule",
            "NO_EXECUTE" => "NoExecute",
            _ => "NoSchedule",
        };
        taints.push((
            taint["key"].as_str().unwrap_or("").to_string(),
            taint["value"].as_str().unwrap_or("").to_string(),
            effect.to_string(),
        ));
    }
    let managed_rdma_nics = super::accelerator_networks::managed_rdma_nics(&pool.resource);
    let mut nodes = vec![];
    let mut ordinal = 0u64;
    for (zone, group) in &pool.groups {
        let block = format!("{}{}", fingerprint(&group.hash), fingerprint(zone));
        for (index, suffix) in group.suffixes.iter().enumerate() {
            let name = format!("{prefix}-{}-{suffix}", group.hash);
            let addresses = group.addresses.get(suffix).cloned().unwrap_or_default();
            let mut labels = BTreeMap::new();
            let mut label = |k: &str, v: &str| {
                labels.insert(k.to_string(), v.to_string());
            };
            label("cloud.google.com/gke-nodepool", &pool.name);
            label(
                "cloud.google.com/machine-family",
                machine.split('-').next().unwrap_or(""),
            );
            label("cloud.google.com/gke-os-distribution", "cos");
            // The pool's boot disk type (GKE's default `pd-balanced`), as GKE labels its nodes
            // (<https://cloud.google.com/kubernetes-engine/docs/how-to/custom-boot-disks>).
            label(
                "cloud.google.com/gke-boot-disk",
                config["diskType"].as_str().unwrap_or("pd-balanced"),
            );
            label("node.kubernetes.io/instance-type", machine);
            label("beta.kubernetes.io/instance-type", machine);
            label("topology.kubernetes.io/zone", zone);
            label("topology.kubernetes.io/region", &region_of(zone));
            label("kubernetes.io/hostname", &name);
            label("kubernetes.io/os", "linux");
            label("kubernetes.io/arch", "amd64");
            if config["spot"] == json!(true) {
                label("cloud.google.com/gke-spot", "true");
            }
            // The label GKE puts on nodes that run the GKE metadata server, which the GCS FUSE
            // CSI driver reads (`clientset.GkeMetaDataServerKey`).
            if config["workloadMetadataConfig"]["mode"] == json!("GKE_METADATA") {
                label(crate::kube::controllers::access::METADATA_LABEL, "true");
            }
            if gpus > 0 {
                label("cloud.google.com/gke-accelerator", accelerator_type);
                if managed_driver {
                    label(
                        "cloud.google.com/gke-gpu-driver-version",
                        &driver.to_ascii_lowercase(),
                    );
                }
            }
            if compact {
                let subblock = format!("{}{}", fingerprint(&block), index / 16);
                label("cloud.google.com/gce-topology-block", &block);
                label(
                    "cloud.google.com/gce-topology-subblock",
                    &fingerprint(&subblock),
                );
                label("cloud.google.com/gce-topology-host", &fingerprint(&name));
            }
            for (k, v) in config["labels"].as_object().into_iter().flatten() {
                label(k, v.as_str().unwrap_or(""));
            }
            nodes.push(NodeSpec {
                name: name.clone(),
                pool: pool.name.clone(),
                machine_type: machine.to_string(),
                zone: zone.clone(),
                labels,
                taints: taints.clone(),
                gpus,
                managed_driver,
                cpu: cpus.to_string(),
                memory: memory.clone(),
                version: pool
                    .node_versions
                    .get(&name)
                    .cloned()
                    .or_else(|| pool.resource["version"].as_str().map(str::to_string))
                    .unwrap_or_default(),
                unschedulable: pool.cordoned.contains(&name),
                internal_ip: addresses.first().cloned().unwrap_or_default(),
                nics: pool
                    .nics
                    .iter()
                    .enumerate()
                    .map(|(i, nic)| NodeNic {
                        network: nic.network.clone(),
                        subnetwork: nic.subnetwork.clone(),
                        nic_type: nic.nic_type.clone(),
                        // Worlds saved before nodes were VMs: the address by the node's place.
                        ip: addresses.get(i + 1).cloned().unwrap_or_else(|| {
                            super::accelerator_networks::nic_address(&nic.cidr, ordinal)
                        }),
                    })
                    .collect(),
                managed_rdma_nics,
            });
            ordinal += 1;
        }
    }
    nodes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn node_names_are_shortened_like_gke() {
        assert_eq!(node_prefix("c1", "default-pool"), "gke-c1-default-pool");
        assert_eq!(
            node_prefix("akka-multi-node-34798375657", "default-pool"),
            "gke-akka-multi-node-3479-default-pool"
        );
        let long = node_prefix(&"c".repeat(40), &"p".repeat(40));
        assert_eq!(long, format!("gke-{}-{}", "c".repeat(16), "p".repeat(16)));
    }
}
