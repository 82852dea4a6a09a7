//! A node pool's extra NICs: the networks of `networkConfig.additionalNodeNetworkConfigs`
//! (gVNIC VPCs, and RDMA over Converged Ethernet (RoCE) VPCs whose NICs are MRDMA), and
//! GKE-managed GPU networking (`networkConfig.acceleratorNetworkProfile`, "DRANET"). The checks
//! GKE makes on both, and the NICs the pool's nodes get ([`PoolNic`]), which the Kubernetes side
//! shows on the nodes (`crate::kube::controllers::nodes`, `crate::kube::controllers::dranet`).
//!
//! What the rules rest on:
//! - A3 Ultra (`a3-ultragpu-8g`) and A4 (`a4-highgpu-8g`) have 2 gVNIC NICs and 8 MRDMA NICs,
//!   10 in all: cluster-toolkit `examples/gke-a3-ultragpu/gke-a3-ultragpu.yaml` and
//!   `examples/gke-a4/gke-a4.yaml` attach `net-1` (the second gVNIC VPC) and the 8 subnets of
//!   one RDMA VPC made with the zone's `<zone>-vpc-roce` network profile
//!   (`modules/network/gpu-rdma-vpc`, `nic_type = "MRDMA"`); container-engine-accelerators
//!   `gpudirect-rdma/nccl-test.yaml` maps `eth2..eth9` to `rdma-0..rdma-7`. Other machine types
//!   have no MRDMA NIC, and a VM has at most one NIC per VPC except on a RoCE VPC (one per
//!   subnet there), and at most 8 NICs (2 with 2 vCPUs or fewer) unless its type says otherwise
//!   (Compute Engine's "Multiple network interfaces" specifications; A3 Mega: 9, A3 High: 5).
//! - A network profile is zonal: a RoCE network serves VMs of its profile's zone only.
//! - Multi-network pools need a multi-networking cluster, which needs Dataplane V2
//!   ([`super::rules::check_multi_networking`]).
//! - `acceleratorNetworkProfile`: "For now the only valid value is \"auto\"" (container v1
//!   discovery, `NodeNetworkConfig`); it needs GKE 1.34.1-gke.1829001 or later and Dataplane V2,
//!   and cannot be combined with explicit additional networks (cluster-toolkit
//!   `modules/compute/gke-node-pool`, its `accelerator_network_profile` preconditions); it exists
//!   for the machine types with MRDMA NICs (A3 Ultra, A4; A4X, which the catalogue lacks).
//!
//! GKE's exact error texts for these refusals could not be found in public sources; the
//! messages here are the simulator's own, with GKE's shape (400 `INVALID_ARGUMENT`,
//! reason `badRequest`).

use super::rules::{self, last_segment};
use super::{bad_request, region_of, string_list};
use crate::compute::network_profiles;
use crate::error::GcpResult;
pub use crate::state::container::PoolNic;
use crate::world::World;
use serde_json::{Value, json};

/// The only value `acceleratorNetworkProfile` takes.
pub const AUTO: &str = "auto";

/// The first GKE version with GKE-managed GPU networking.
pub const MIN_PROFILE_VERSION: &str = "1.34.1-gke.1829001";

pub use crate::kube::controllers::dranet::DRA_DRIVER_LABEL;

/// The gVNIC and MRDMA NICs of a machine type with MRDMA NICs ([`crate::geo::is_rdma_machine`]).
const RDMA_MACHINE_NICS: (u32, u32) = (2, 8);

/// The MRDMA NICs of a machine type (0 for most).
pub fn mrdma_nics(machine: &str) -> u32 {
    if crate::geo::is_rdma_machine(machine) {
        RDMA_MACHINE_NICS.1
    } else {
        0
    }
}

/// How many NICs a VM of `machine` may have in all.
fn max_nics(machine: &str) -> u32 {
    if crate::geo::is_rdma_machine(machine) {
        return RDMA_MACHINE_NICS.0 + RDMA_MACHINE_NICS.1;
    }
    match machine {
        "a3-megagpu-8g" => 9,
        "a3-highgpu-8g" => 5,
        _ => {
            let cpus = crate::geo::machine_type(machine).map_or(2, |m| m.cpus);
            if cpus <= 2 { 2 } else { cpus.min(8) }
        }
    }
}

/// The zone of the RoCE profile network `network` of `project` was made with, or `None` for a
/// network without one: its NICs are MRDMA ones
/// ([`crate::compute::network_profiles::interface_types`]).
fn roce_zone(world: &World, project: &str, network: &str) -> Option<&'static str> {
    let profile = network_profiles::network_profile_of(world, project, network)?;
    if !network_profiles::interface_types(&profile).contains(&"MRDMA") {
        return None;
    }
    network_profiles::zone_of(&profile)
}

/// GKE's version order (`1.34.1-gke.1829001` → `[1, 34, 1, 1829001]`).
fn version_key(version: &str) -> Vec<u64> {
    version
        .split(|c: char| !c.is_ascii_digit())
        .filter_map(|s| s.parse().ok())
        .collect()
}

/// Checks a pool's additional node networks and accelerator network profile against the cluster
/// (`version` is the pool's resolved GKE version); returns the NICs its nodes get after `eth0`.
pub fn check(
    world: &World,
    project: &str,
    cluster: &Value,
    location: &str,
    pool: &Value,
    version: &str,
) -> GcpResult<Vec<PoolNic>> {
    let network_config = &pool["networkConfig"];
    let configs = network_config["additionalNodeNetworkConfigs"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let machine = pool["config"]["machineType"]
        .as_str()
        .unwrap_or("e2-medium");
    let zones = string_list(&pool["locations"]);
    if let Some(profile) = network_config.get("acceleratorNetworkProfile")
        && !profile.is_null()
    {
        check_profile(cluster, profile, machine, version, !configs.is_empty())?;
    }
    if configs.is_empty() {
        return Ok(vec![]);
    }
    if !rules::multi_networking(cluster) {
        return Err(bad_request(
            "Additional node networks can only be used on clusters with multi-networking \
             enabled.",
        ));
    }
    let region = region_of(location);
    let primary = cluster["network"].as_str().unwrap_or("");
    let mut nics: Vec<PoolNic> = vec![];
    for config in &configs {
        let net = config["network"].as_str().unwrap_or("");
        let sub = config["subnetwork"].as_str().unwrap_or("");
        let name = last_segment(net).to_string();
        if name == last_segment(primary) {
            return Err(bad_request(format!(
                "Additional node network \"{name}\" cannot be the cluster's primary network."
            )));
        }
        rules::network(world, project, net)?;
        let subnet = rules::subnetwork(world, project, &region, net, sub)?;
        let nic_type = match roce_zone(world, project, &name) {
            Some(zone) => {
                if mrdma_nics(machine) == 0 {
                    return Err(bad_request(format!(
                        "Network \"{name}\" has an RDMA (RoCE) network profile; machine type \
                         \"{machine}\" has no MRDMA network interfaces to attach to it."
                    )));
                }
                if let Some(other) = zones.iter().find(|z| z.as_str() != zone) {
                    return Err(bad_request(format!(
                        "Network \"{name}\" has the network profile of zone {zone}; it cannot \
                         be attached to nodes in zone {other}."
                    )));
                }
                "MRDMA"
            }
            None => {
                if nics.iter().any(|n| n.network == name) {
                    return Err(bad_request(format!(
                        "Additional node network \"{name}\" is given more than once; a node \
                         has one network interface per VPC network."
                    )));
                }
                "GVNIC"
            }
        };
        nics.push(PoolNic {
            network: name,
            subnetwork: last_segment(sub).to_string(),
            nic_type: nic_type.into(),
            cidr: subnet["ipCidrRange"].as_str().unwrap_or("").to_string(),
        });
    }
    let mrdma = nics.iter().filter(|n| n.nic_type == "MRDMA").count() as u32;
    if mrdma > mrdma_nics(machine) {
        return Err(bad_request(format!(
            "Machine type \"{machine}\" has {} MRDMA network interfaces; {mrdma} additional \
             node networks need one.",
            mrdma_nics(machine)
        )));
    }
    let total = nics.len() as u32 + 1;
    if total > max_nics(machine) {
        return Err(bad_request(format!(
            "Machine type \"{machine}\" supports at most {} network interfaces; the node pool \
             asks for {total} (the primary one and {} additional node networks).",
            max_nics(machine),
            nics.len()
        )));
    }
    Ok(nics)
}

/// The checks of `acceleratorNetworkProfile`.
fn check_profile(
    cluster: &Value,
    profile: &Value,
    machine: &str,
    version: &str,
    additional_networks: bool,
) -> GcpResult<()> {
    let value = profile.as_str().unwrap_or("");
    if value != AUTO {
        return Err(bad_request(format!(
            "Invalid value for field \"node_pool.network_config.accelerator_network_profile\": \
             \"{value}\". The only supported value is \"{AUTO}\"."
        )));
    }
    if additional_networks {
        return Err(bad_request(
            "Accelerator network profile cannot be used together with additional node network \
             configs; GKE manages the node pool's accelerator networks.",
        ));
    }
    if mrdma_nics(machine) == 0 {
        return Err(bad_request(format!(
            "Accelerator network profile \"{AUTO}\" is not supported for machine type \
             \"{machine}\"."
        )));
    }
    if version_key(version) < version_key(MIN_PROFILE_VERSION) {
        return Err(bad_request(format!(
            "Accelerator network profile requires GKE version {MIN_PROFILE_VERSION} or later; \
             the node pool's version is {version}."
        )));
    }
    if cluster["networkConfig"]["datapathProvider"] != json!("ADVANCED_DATAPATH") {
        return Err(bad_request(
            "Accelerator network profile requires GKE Dataplane V2 to be enabled \
             (datapathProvider ADVANCED_DATAPATH).",
        ));
    }
    Ok(())
}

/// The RDMA NICs GKE manages for a pool with an accelerator network profile (0 without one).
pub fn managed_rdma_nics(pool: &Value) -> u32 {
    if pool["networkConfig"]["acceleratorNetworkProfile"] == json!(AUTO) {
        mrdma_nics(pool["config"]["machineType"].as_str().unwrap_or(""))
    } else {
        0
    }
}

/// The address of the `index`-th node's NIC in a subnetwork's range (`10.0.0.0/21`, 5 →
/// `10.0.0.7`): the range's third address on, skipping the gateway, as Compute hands them out.
pub fn nic_address(cidr: &str, index: u64) -> String {
    let base = cidr.split('/').next().unwrap_or("");
    let octets: Vec<u64> = base.split('.').filter_map(|o| o.parse().ok()).collect();
    if octets.len() != 4 {
        return String::new();
    }
    let start = (octets[0] << 24) | (octets[1] << 16) | (octets[2] << 8) | octets[3];
    let address = start + 2 + index;
    format!(
        "{}.{}.{}.{}",
        (address >> 24) & 255,
        (address >> 16) & 255,
        (address >> 8) & 255,
        address & 255
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nic_limits_and_addresses() {
        assert_eq!(max_nics("a4-highgpu-8g"), 10);
        assert_eq!(max_nics("e2-standard-4"), 4);
        assert_eq!(max_nics("e2-medium"), 2);
        assert_eq!(nic_address("192.168.128.0/21", 0), "192.168.128.2");
        assert_eq!(nic_address("10.0.0.0/24", 300), "10.0.1.46");
    }

    #[test]
    fn the_profile_needs_its_version_and_dataplane_v2() {
        let dpv2 = json!({"networkConfig": {"datapathProvider": "ADVANCED_DATAPATH"}});
        let auto = json!("auto");
        assert!(check_profile(&dpv2, &auto, "a4-highgpu-8g", "1.34.1-gke.1829001", false).is_ok());
        let old = check_profile(&dpv2, &auto, "a4-highgpu-8g", "1.34.1-gke.1828000", false);
        assert!(old.unwrap_err().message.contains("1.34.1-gke.1829001"));
        let legacy = json!({"networkConfig": {}});
        let err = check_profile(&legacy, &auto, "a4-highgpu-8g", "1.35.0-gke.1", false);
        assert!(err.unwrap_err().message.contains("Dataplane V2"));
        let both = check_profile(&dpv2, &auto, "a4-highgpu-8g", "1.35.0-gke.1", true);
        assert!(
            both.unwrap_err()
                .message
                .contains("additional node network")
        );
        let machine = check_profile(&dpv2, &auto, "a3-megagpu-8g", "1.35.0-gke.1", false);
        assert!(machine.unwrap_err().message.contains("a3-megagpu-8g"));
        let value = check_profile(
            &dpv2,
            &json!("manual"),
            "a4-highgpu-8g",
            "1.35.0-gke.1",
            false,
        );
        assert!(value.unwrap_err().message.contains("\"manual\""));
    }
}
