//! Resource policies (`projects/p/regions/r/resourcePolicies`): insert, get, list, aggregated
//! list, delete. Group placement policies are checked as v1 does: `collocation` is COLLOCATED or
//! UNSPECIFIED_COLLOCATION, counts are positive, a compact (COLLOCATED) policy spreads over no
//! availability domains. `maxDistance`, which only the beta and alpha APIs know, is an unknown
//! field in v1: the body check against the v1 discovery document refuses it
//! ([`crate::discovery::schema`]).
//!
//! A policy that a VM (a GKE node of a pool with compact placement, [`super::instances`]) uses
//! cannot be deleted: 400 `resourceInUseByAnotherResource`, "The resource_policy resource '…' is
//! already being used by 'projects/…/zones/…/instances/…'", and a pool that names the policy but
//! has no node holds it through its instance group. Where Compute refuses it — the DELETE, like a
//! subnetwork, or its operation, like a network — is not published, nor is the word for the kind
//! in the message: both are guesses (refused by the DELETE, worded `resource_policy` like
//! the API's error catalogue words other kinds in snake case).

// GUESS(placement-policy-in-use): a placement policy its VMs use is refused by the DELETE itself, worded like the subnetwork's refusal
use super::collection::{Collection, Hooks, Placement, Quota, Target};
use super::{invalid_field, link};
use crate::error::{GcpError, GcpResult};
use crate::shared::Ctx;
use crate::world::World;
use serde_json::{Map, Value, json};

/// The `resourcePolicies` collection.
pub static COLLECTION: Collection = Collection {
    name: "ResourcePolicy",
    word: "resourcePolicy",
    segment: "resourcePolicies",
    in_use_word: "resource_policy",
    placement: Placement::Regional,
    quota: Quota {
        metric: "RESOURCE_POLICIES",
        limit: 10.0,
        limit_name: "RESOURCE-POLICIES-per-project-region",
        regional: true,
    },
    build: insert,
    hooks: Hooks {
        user_of,
        ..Hooks::NONE
    },
};

/// The first node VM placed by the policy at `path`, else the instance group of a pool that
/// names it and has no node now.
fn user_of(world: &World, path: &str) -> Option<String> {
    use crate::instance_groups;
    let vms = instance_groups::vms(world);
    if let Some(vm) = vms
        .iter()
        .find(|vm| vm.placement_policy.as_deref() == Some(path))
    {
        return Some(super::instances::path_of(vm));
    }
    world.container.clusters.values().find_map(|cluster| {
        cluster.pools.iter().find_map(|pool| {
            let named = pool.resource["placementPolicy"]["policyName"].as_str()?;
            let wanted = path.rsplit('/').next()?;
            let region = crate::instance_groups::region_of(&cluster.location);
            let same = path.starts_with(&format!("projects/{}/regions/{region}/", cluster.project))
                && named.rsplit('/').next() == Some(wanted);
            if !same {
                return None;
            }
            let group = instance_groups::managers(world, cluster, pool).into_iter().next()?;
            Some(format!(
                "projects/{}/zones/{}/instanceGroupManagers/{}",
                group.project, group.zone, group.name
            ))
        })
    })
}

/// The policy kinds v1 knows; a policy has exactly one of them.
const POLICY_KINDS: &[&str] = &[
    "groupPlacementPolicy",
    "snapshotSchedulePolicy",
    "instanceSchedulePolicy",
    "diskConsistencyGroupPolicy",
    "workloadPolicy",
];

fn positive_count(policy: &Map<String, Value>, key: &str) -> GcpResult<Option<i64>> {
    match policy.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(value) => match value.as_i64() {
            Some(n) if n >= 1 => Ok(Some(n)),
            _ => Err(invalid_field(
                &format!("resource.groupPlacementPolicy.{key}"),
                &value.to_string(),
                "Must be greater than or equal to 1.",
            )),
        },
    }
}

fn check_group_placement(policy: &Value) -> GcpResult<Value> {
    let Some(policy) = policy.as_object() else {
        return Err(invalid_field(
            "resource.groupPlacementPolicy",
            &policy.to_string(),
            "",
        ));
    };
    let collocation = match policy.get("collocation") {
        None | Some(Value::Null) => None,
        Some(Value::String(c)) if c == "COLLOCATED" || c == "UNSPECIFIED_COLLOCATION" => {
            Some(c.as_str())
        }
        Some(other) => {
            return Err(GcpError::invalid(format!(
                "Invalid value at 'resource_policy_resource.group_placement_policy.collocation' (type.googleapis.com/compute.ResourcePolicyGroupPlacementPolicy.Collocation), {other}"
            )));
        }
    };
    positive_count(policy, "vmCount")?;
    if let Some(count) = positive_count(policy, "availabilityDomainCount")? {
        if collocation == Some("COLLOCATED") {
            return Err(invalid_field(
                "resource.groupPlacementPolicy.availabilityDomainCount",
                &count.to_string(),
                "Availability domain count cannot be set for a COLLOCATED placement policy.",
            ));
        }
        if count > 8 {
            return Err(invalid_field(
                "resource.groupPlacementPolicy.availabilityDomainCount",
                &count.to_string(),
                "Must be less than or equal to 8.",
            ));
        }
    }
    Ok(Value::Object(policy.clone()))
}

/// Exactly one policy kind; a group placement policy is checked.
fn insert(
    world: &mut World,
    cx: &Ctx,
    target: &Target,
    spec: &Map<String, Value>,
) -> GcpResult<Value> {
    let given: Vec<&str> = POLICY_KINDS
        .iter()
        .copied()
        .filter(|k| spec.get(*k).is_some_and(|v| !v.is_null()))
        .collect();
    if given.len() != 1 {
        return Err(invalid_field(
            "resource",
            "",
            "Exactly one policy type must be specified in a resource policy.",
        ));
    }
    let id = world.numeric_id();
    let mut policy = json!({
        "kind": "compute#resourcePolicy",
        "id": id,
        "creationTimestamp": world.compute_timestamp(cx.now),
        "selfLink": link(&target.path),
        "region": target.scope_link(),
        "name": target.name,
    });
    if let Some(description) = spec.get("description").filter(|d| !d.is_null()) {
        policy["description"] = description.clone();
    }
    let kind = given[0];
    policy[kind] = if kind == "groupPlacementPolicy" {
        check_group_placement(&spec[kind])?
    } else {
        spec[kind].clone()
    };
    policy["status"] = json!("READY");
    Ok(policy)
}
