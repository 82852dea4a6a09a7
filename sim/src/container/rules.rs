//! The checks GKE makes before it accepts a cluster or node pool: names, locations, machine types
//! per zone, A3 accelerators, networks and subnetworks (through the Compute module), secondary
//! ranges, multi-networking and compact placement. Additional node networks and accelerator
//! network profiles are checked in [`super::accelerator_networks`].
//!
//! Machine types come from the catalogue in [`crate::geo`]. One GKE does not know is refused with
//! 400 `machine type "<type>" does not exist.` (GKE's answer quoted in kubernetes/kubernetes#12985);
//! one a zone does not offer with `machine type "<type>" does not exist in zone <zone>.`, numbered
//! `(1) ... (2) ...` when several zones lack it — the form GKE documents for accelerator types
//! ("accelerator type \"nvidia-tesla-k80\" does not exist in zone us-west1-c.", GKE's regional
//! clusters page); the machine-type wording of that per-zone message could not be confirmed.

use super::{Cluster, bad_request, string_list};
use crate::error::{GcpError, GcpResult};
use crate::geo;
pub use crate::instance_groups::{count_of, last_segment};
use crate::world::World;
use serde_json::{Value, json};

/// GKE's name pattern for clusters and node pools.
const NAME_REGEX: &str = "(?:[a-z](?:[-a-z0-9]{0,38}[a-z0-9])?)";

/// Checks a cluster (`what` = `cluster`) or node pool (`node_pool`) name.
pub fn check_name(what: &str, name: &str) -> GcpResult<()> {
    if name.len() > 40 {
        let title = match what {
            "cluster" => "Cluster",
            _ => "NodePool",
        };
        return Err(bad_request(format!(
            "{title}.name must be less than 40 characters."
        )));
    }
    if !crate::http::valid_name(name, 40) {
        return Err(bad_request(format!(
            "Invalid value for field \"{what}.name\": \"{name}\". Must be a match of regex \
             '{NAME_REGEX}' (only alphanumerics and '-' allowed, must start with a letter and end \
             with an alphanumeric, and must be no longer than 40 characters)."
        )));
    }
    Ok(())
}

/// The location must be a known region or zone.
pub fn check_location(location: &str) -> GcpResult<()> {
    if geo::region_exists(location) || geo::zone_exists(location) {
        Ok(())
    } else {
        Err(bad_request(format!(
            "Location \"{location}\" does not exist."
        )))
    }
}

/// Finds network `name` (a name or a path) of `project`.
pub fn network<'a>(world: &'a World, project: &str, name: &str) -> GcpResult<&'a Value> {
    let short = last_segment(name);
    world
        .compute
        .network(project, short)
        .ok_or_else(|| bad_request(format!("Network \"{short}\" does not exist.")))
}

/// Finds subnetwork `name` in `region` and checks that it belongs to `network`.
pub fn subnetwork<'a>(
    world: &'a World,
    project: &str,
    region: &str,
    network: &str,
    name: &str,
) -> GcpResult<&'a Value> {
    let short = last_segment(name);
    let path = format!("projects/{project}/regions/{region}/subnetworks/{short}");
    let subnet = world
        .compute
        .subnetwork(project, region, short)
        .ok_or_else(|| bad_request(format!("Subnetwork \"{path}\" does not exist.")))?;
    let owner = subnet["network"].as_str().unwrap_or("");
    if last_segment(owner) != last_segment(network) {
        return Err(bad_request(format!(
            "Subnetwork \"{path}\" is not valid for Network \"{}\".",
            last_segment(network)
        )));
    }
    Ok(subnet)
}

/// The CIDR of secondary range `range` of `subnet`, or GKE's error.
pub fn secondary_range(subnet: &Value, subnet_name: &str, range: &str) -> GcpResult<String> {
    subnet["secondaryIpRanges"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|r| r["rangeName"] == range)
        .map(|r| r["ipCidrRange"].as_str().unwrap_or("").to_string())
        .ok_or_else(|| {
            bad_request(format!(
                "Retry budget exhausted (5 attempts): Secondary range \"{range}\" does not exist \
                 in network \"{}\", subnetwork \"{subnet_name}\".",
                last_segment(subnet["network"].as_str().unwrap_or(""))
            ))
        })
}

/// Machine type and accelerators of a node pool config, in its zones. Fills in the A3
/// accelerators when they were omitted, as GKE does.
pub fn check_machine(config: &mut Value, zones: &[String]) -> GcpResult<()> {
    let machine = config["machineType"]
        .as_str()
        .unwrap_or("e2-medium")
        .to_string();
    if !geo::machine_type_known(&machine) {
        return Err(bad_request(format!(
            "machine type \"{machine}\" does not exist."
        )));
    }
    let missing: Vec<String> = zones
        .iter()
        .filter(|zone| !geo::zone_offers(zone, &machine))
        .map(|zone| format!("machine type \"{machine}\" does not exist in zone {zone}."))
        .collect();
    match missing.as_slice() {
        [] => {}
        [one] => return Err(bad_request(one.clone())),
        many => {
            let numbered: Vec<String> = many
                .iter()
                .enumerate()
                .map(|(i, m)| format!("({}) {m}", i + 1))
                .collect();
            return Err(bad_request(numbered.join("\n")));
        }
    }
    let accelerators = config["accelerators"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    match geo::required_accelerator(&machine) {
        Some((required_type, required_count)) => {
            if accelerators.is_empty() {
                config["accelerators"] = json!([{
                    "acceleratorCount": required_count.to_string(),
                    "acceleratorType": required_type,
                }]);
                return Ok(());
            }
            for accelerator in &accelerators {
                let kind = accelerator["acceleratorType"].as_str().unwrap_or("");
                let count = count_of(&accelerator["acceleratorCount"]);
                if kind != required_type {
                    return Err(bad_request(format!(
                        "[{kind}, {machine}] features are not compatible for creating instance."
                    )));
                }
                if count != u64::from(required_count) {
                    return Err(bad_request(format!(
                        "Accelerator count {count} of type {kind} is not valid for machine type \
                         {machine}: it requires {required_count} accelerators of type \
                         {required_type}."
                    )));
                }
            }
        }
        None => {
            if let Some(first) = accelerators.first() {
                let kind = first["acceleratorType"].as_str().unwrap_or("");
                if config["machineType"].is_null() {
                    return Err(bad_request(
                        "Cannot use default machine type (e2-medium) with GPUs; choose a \
                         different machine type.",
                    ));
                }
                return Err(bad_request(format!(
                    "[{kind}, {machine}] features are not compatible for creating instance."
                )));
            }
        }
    }
    Ok(())
}

/// Whether the cluster (resource JSON) has multi-networking on.
pub fn multi_networking(cluster: &Value) -> bool {
    cluster["networkConfig"]["enableMultiNetworking"] == json!(true)
}

/// Multi-networking requires GKE Dataplane V2.
pub fn check_multi_networking(cluster: &Value) -> GcpResult<()> {
    if multi_networking(cluster)
        && cluster["networkConfig"]["datapathProvider"] != json!("ADVANCED_DATAPATH")
    {
        return Err(bad_request(
            "Multi-networking requires GKE Dataplane V2 to be enabled \
             (datapathProvider ADVANCED_DATAPATH).",
        ));
    }
    Ok(())
}

/// Compact placement: exactly one zone, and a named resource policy must exist in the region.
/// A pool that names a policy without a type gets type COMPACT.
pub fn check_placement(
    world: &World,
    project: &str,
    region: &str,
    pool: &mut Value,
) -> GcpResult<()> {
    let policy = &mut pool["placementPolicy"];
    if !policy.is_object() {
        return Ok(());
    }
    let name = policy["policyName"].as_str().unwrap_or("").to_string();
    if policy["type"].is_null() && !name.is_empty() {
        policy["type"] = json!("COMPACT");
    }
    if policy["type"] != json!("COMPACT") {
        return Ok(());
    }
    let zones = string_list(&pool["locations"]);
    if zones.len() != 1 {
        return Err(bad_request(format!(
            "Compact placement policy requires exactly one zone in node pool locations, got {}.",
            zones.len()
        )));
    }
    if !name.is_empty()
        && world
            .compute
            .resource_policy(project, region, &name)
            .is_none()
    {
        return Err(bad_request(format!(
            "Resource policy \"projects/{project}/regions/{region}/resourcePolicies/{name}\" was \
             not found."
        )));
    }
    Ok(())
}

/// GKE's one-operation-at-a-time rule.
pub fn check_no_running_operation(world: &World, cluster: &Cluster) -> GcpResult<()> {
    match world.container.running_operation(&cluster.key()) {
        Some(op) => Err(GcpError::failed_precondition(format!(
            "Cluster is running incompatible operation {}.",
            op.name
        ))),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_gke_rules() {
        assert!(check_name("cluster", "a3-mega").is_ok());
        assert!(check_name("cluster", &"a".repeat(40)).is_ok());
        let long = check_name("cluster", &"a".repeat(41)).unwrap_err();
        assert_eq!(
            long.message,
            "Cluster.name must be less than 40 characters."
        );
        let bad = check_name("cluster", "1c").unwrap_err();
        assert!(
            bad.message
                .starts_with("Invalid value for field \"cluster.name\": \"1c\"")
        );
        assert_eq!(bad.reason, "badRequest");
    }

    #[test]
    fn a3_needs_its_accelerators() {
        let zones = vec!["us-central1-a".to_string()];
        let mut omitted = json!({"machineType": "a3-megagpu-8g"});
        check_machine(&mut omitted, &zones).unwrap();
        assert_eq!(
            omitted["accelerators"][0]["acceleratorType"],
            "nvidia-h100-mega-80gb"
        );
        let mut wrong = json!({"machineType": "a3-megagpu-8g", "accelerators": [
            {"acceleratorType": "nvidia-h100-80gb", "acceleratorCount": "8"}]});
        assert!(check_machine(&mut wrong, &zones).is_err());
        let mut few = json!({"machineType": "a3-highgpu-8g", "accelerators": [
            {"acceleratorType": "nvidia-h100-80gb", "acceleratorCount": "4"}]});
        assert!(check_machine(&mut few, &zones).is_err());
        let mut elsewhere = json!({"machineType": "a3-megagpu-8g"});
        let err = check_machine(&mut elsewhere, &["us-central1-b".to_string()]).unwrap_err();
        assert!(err.message.contains("us-central1-b"), "{}", err.message);
    }
}
