//! Resource policies (`projects/p/regions/r/resourcePolicies`): insert, get, list, aggregated
//! list, delete. Group placement policies are checked as v1 does: `collocation` is COLLOCATED or
//! UNSPECIFIED_COLLOCATION, counts are positive, a compact (COLLOCATED) policy spreads over no
//! availability domains, and `maxDistance`, which only the beta and alpha APIs know, is an unknown
//! field in v1.

use super::operations::{self, Effect, Scope, Start, Verb};
use super::{
    Kind, aggregated_resources, already_exists, body_name, body_object, check_region,
    delete_resource, get_resource, invalid_field, link, list_resources,
};
use crate::error::{GcpError, GcpResult};
use crate::http::{self, Query};
use crate::server::Shared;
use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::response::Response;
use axum::routing::{get, post};
use serde_json::{Map, Value, json};
use std::sync::Arc;

pub fn router() -> Router<Arc<Shared>> {
    let base = "/compute/v1/projects/{project}/regions/{region}/resourcePolicies";
    Router::new()
        .route(base, post(insert).get(list))
        .route(&format!("{base}/{{policy}}"), get(get_one).delete(delete))
        .route(
            "/compute/v1/projects/{project}/aggregated/resourcePolicies",
            get(aggregated),
        )
}

fn path_of(project: &str, region: &str, name: &str) -> String {
    format!("projects/{project}/regions/{region}/resourcePolicies/{name}")
}

/// The policy kinds v1 knows; a policy has exactly one of them.
const POLICY_KINDS: &[&str] = &[
    "groupPlacementPolicy",
    "snapshotSchedulePolicy",
    "instanceSchedulePolicy",
    "diskConsistencyGroupPolicy",
    "workloadPolicy",
];

/// Fields of `ResourcePolicyGroupPlacementPolicy` in v1.
const GROUP_PLACEMENT_FIELDS: &[&str] = &[
    "vmCount",
    "availabilityDomainCount",
    "collocation",
    "gpuTopology",
    "acceleratorTopologyMode",
];

/// The error Google's JSON front end gives for a field the API version does not have.
fn unknown_field(name: &str, at: &str) -> GcpError {
    GcpError::invalid(format!(
        "Invalid JSON payload received. Unknown name \"{name}\" at '{at}': Cannot find field."
    ))
    .with_detail(json!({
        "@type": "type.googleapis.com/google.rpc.BadRequest",
        "fieldViolations": [{
            "field": at,
            "description": format!("Invalid JSON payload received. Unknown name \"{name}\" at '{at}': Cannot find field."),
        }],
    }))
}

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
    for key in policy.keys() {
        if !GROUP_PLACEMENT_FIELDS.contains(&key.as_str()) {
            return Err(unknown_field(
                key,
                "resource_policy_resource.group_placement_policy",
            ));
        }
    }
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

async fn insert(
    State(shared): State<Arc<Shared>>,
    Path((project, region)): Path<(String, String)>,
    query: Query,
    body: Bytes,
) -> GcpResult<Response> {
    check_region(&region)?;
    let spec = body_object(&body)?;
    shared.with_world(|world, cx| {
        if let Some(op) = operations::replay(world, &project, &query) {
            return Ok(http::json(op));
        }
        let spec_value = Value::Object(spec.clone());
        let name = body_name(&spec_value)?;
        let path = path_of(&project, &region, &name);
        if world.compute.resources.contains_key(&path) {
            return Err(already_exists(&path));
        }
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
            "selfLink": link(&path),
            "region": link(&format!("projects/{project}/regions/{region}")),
            "name": name,
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
        let op = operations::start(
            world,
            cx,
            Start {
                project: &project,
                scope: Scope::Region(region.clone()),
                kind: Kind::ResourcePolicy,
                verb: Verb::Insert,
                target: path,
                target_id: id,
                effect: Effect::Create(policy),
                request_id: query.get("requestId"),
            },
        )?;
        Ok(http::json(op))
    })
}

async fn get_one(
    State(shared): State<Arc<Shared>>,
    Path((project, region, name)): Path<(String, String, String)>,
) -> GcpResult<Response> {
    check_region(&region)?;
    get_resource(&shared, &path_of(&project, &region, &name))
}

async fn list(
    State(shared): State<Arc<Shared>>,
    Path((project, region)): Path<(String, String)>,
) -> GcpResult<Response> {
    check_region(&region)?;
    list_resources(
        &shared,
        Kind::ResourcePolicy,
        &format!("projects/{project}/regions/{region}/resourcePolicies"),
    )
}

async fn aggregated(
    State(shared): State<Arc<Shared>>,
    Path(project): Path<String>,
) -> GcpResult<Response> {
    aggregated_resources(&shared, Kind::ResourcePolicy, &project)
}

async fn delete(
    State(shared): State<Arc<Shared>>,
    Path((project, region, name)): Path<(String, String, String)>,
    query: Query,
) -> GcpResult<Response> {
    check_region(&region)?;
    delete_resource(
        &shared,
        &query,
        &project,
        Scope::Region(region.clone()),
        Kind::ResourcePolicy,
        &path_of(&project, &region, &name),
    )
}
