//! Filestore v1 (`/file/v1/...`): instances and their `google.longrunning` operations.
//!
//! Creates, updates and deletes are operations whose duration comes from the latency keys
//! `file.instance.create|update|delete`. An instance is `CREATING` until its create finishes,
//! then `READY`; a delete puts it in `DELETING` and removes it when done; an update keeps it
//! `READY` and applies the change when done. Requests are checked as the real API does: instance
//! id and share name rules, tier × location (zonal tiers need a zone, `ENTERPRISE`/`REGIONAL` a
//! region), capacity range and step per tier, the network must exist in Compute, duplicates (409)
//! and missing instances (404). Enums are accepted as names or proto numbers and answered as
//! numbers when the caller asks for `enum-encoding=int`.

use crate::aip151;
use crate::enums;
use crate::error::{GcpError, GcpResult};
use crate::faults::{FaultAction, NamedFault};
use crate::geo;
pub use crate::state::filestore::{Pending, State};
use rules::*;
pub use rules::{INSTANCE_ENUMS, LIST_ENUMS, capacity_bands, check_capacity};

mod rules;
use crate::http::{self, Query};
use crate::lro::{self, LroApi, Operations};
use crate::shared::Ctx;
use crate::shared::Shared;
use crate::world::World;
use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, State as AxumState};
use axum::response::Response;
use axum::routing::get;
use serde_json::{Value, json};
use std::sync::Arc;

/// Type URLs of Filestore operations.
/// How `instances.list` pages: `pageSize` "The maximum number of items to return" (the
/// discovery document); Filestore publishes no default or maximum (1,000 for both: a guess).
const PAGING: crate::paging::Rules = crate::paging::aip158(1000, 1000);

pub const LRO: LroApi = LroApi {
    metadata_type: "type.googleapis.com/google.cloud.common.OperationMetadata",
    resource_type: "type.googleapis.com/google.cloud.filestore.v1.Instance",
    detailed_metadata: true,
    resource_enums: INSTANCE_ENUMS,
};

/// Routes of this API (full paths, including the simulator's prefix).
pub fn router() -> Router<Arc<Shared>> {
    let base = "/file/v1/projects/{project}/locations";
    Router::new()
        .route(base, get(list_locations))
        .route(&format!("{base}/{{location}}"), get(get_location))
        .route(
            &format!("{base}/{{location}}/instances"),
            get(list_instances).post(create_instance),
        )
        .route(
            &format!("{base}/{{location}}/instances/{{instance}}"),
            get(get_instance)
                .patch(patch_instance)
                .delete(delete_instance),
        )
        .merge(aip151::routes::<Api>(
            &format!("{base}/{{location}}"),
            aip151::Methods::All,
        ))
}

/// Filestore's operations, served by [`aip151`].
pub struct Api;

impl aip151::Service for Api {
    const LRO: LroApi = LRO;
    fn operations(world: &World) -> &Operations {
        &world.file.operations
    }
    fn operations_mut(world: &mut World) -> &mut Operations {
        &mut world.file.operations
    }
}

/// Finishes due operations; returns true if anything changed.
pub fn tick(world: &mut World, cx: &Ctx) -> bool {
    let due = world.file.operations.due(cx.now);
    for name in &due {
        let pending = world.file.pending.remove(name);
        let state = &mut world.file;
        let Some(op) = state.operations.by_name.get_mut(name) else {
            continue;
        };
        let target = op.target.clone();
        match pending {
            Some(Pending::Create { error: None }) | None => {
                let response = state.instances.get_mut(&target).map(|instance| {
                    instance["state"] = json!("READY");
                    instance.clone()
                });
                op.succeed(cx.now, response);
            }
            Some(Pending::Create {
                error: Some((code, message)),
            }) => {
                state.instances.remove(&target);
                op.fail(cx.now, code, message);
            }
            Some(Pending::Update { resource }) => {
                let response = match state.instances.get_mut(&target) {
                    Some(instance) => {
                        *instance = resource;
                        Some(instance.clone())
                    }
                    None => None,
                };
                op.succeed(cx.now, response);
            }
            Some(Pending::Delete) => {
                state.instances.remove(&target);
                op.succeed(cx.now, None);
            }
        }
    }
    !due.is_empty()
}

/// This API's part of the admin inventory.
pub fn inventory(world: &World) -> Value {
    json!({
        "instances": world.file.instances.values().collect::<Vec<_>>(),
        "operations": aip151::inventory::<Api>(world),
    })
}

fn instance_not_found(name: &str) -> GcpError {
    GcpError::not_found(format!("Resource '{name}' was not found"))
}

fn fault_error(action: FaultAction, tier: &str) -> Result<Option<(i32, String)>, GcpError> {
    match action {
        FaultAction::Named(NamedFault::QuotaExceeded) => Err(GcpError::new(
            429,
            "RESOURCE_EXHAUSTED",
            "rateLimitExceeded",
            format!("Quota limit for {tier} storage (GB) per region has been exceeded for this project."),
        )),
        FaultAction::Named(NamedFault::Stockout) => Ok(Some((
            lro::rpc_code("RESOURCE_EXHAUSTED"),
            "The zone does not have enough resources available to fulfill the request. Try a different zone, or try again later.".to_string(),
        ))),
        FaultAction::Named(NamedFault::OperationError) => Ok(Some((
            lro::rpc_code("INTERNAL"),
            "An internal error has occurred.".to_string(),
        ))),
        // Drops never reach the modules ([`crate::world::Ctx::scripted_fault`]).
        FaultAction::Named(NamedFault::DropBefore | NamedFault::DropAfter) => Ok(None),
        FaultAction::Http {
            status,
            reason,
            message,
        } => Err(GcpError::new(status, lro::status_for_http(status), reason, message)),
    }
}

/// Fills the output-only fields of a new instance.
fn assign_outputs(world: &mut World, cx: &Ctx, name: &str, tier: &str, instance: &mut Value) {
    instance["name"] = json!(name);
    instance["state"] = json!("CREATING");
    instance["createTime"] = json!(world.rfc3339(cx.now));
    instance["etag"] = json!(world.hex(16));
    if let Some(bands) = capacity_bands(tier).first()
        && !is_basic(tier)
    {
        instance["capacityStepSizeGb"] = json!(bands.2.to_string());
        instance["minCapacityGb"] = json!(bands.0.to_string());
        let max = capacity_bands(tier).last().map(|b| b.1).unwrap_or(bands.1);
        instance["maxCapacityGb"] = json!(max.to_string());
    }
    world.file.ip_blocks += 1;
    let block = world.file.ip_blocks;
    let (second, third) = (block / 32 % 256, (block % 32) * 8);
    if let Some(networks) = instance.get_mut("networks").and_then(Value::as_array_mut) {
        for network in networks {
            let given = network
                .get("reservedIpRange")
                .and_then(Value::as_str)
                .filter(|r| r.contains('/'))
                .map(str::to_string);
            let range = given.unwrap_or_else(|| format!("10.{second}.{third}.0/29"));
            let base = range.split('/').next().unwrap_or("10.0.0.0");
            let octets: Vec<u8> = base.split('.').filter_map(|o| o.parse().ok()).collect();
            let address = match octets.as_slice() {
                [a, b, c, d] => format!("{a}.{b}.{c}.{}", d.saturating_add(2)),
                _ => format!("10.{second}.{third}.2"),
            };
            network["reservedIpRange"] = json!(range);
            network["ipAddresses"] = json!([address]);
            if network.get("modes").is_none() {
                network["modes"] = json!(["MODE_IPV4"]);
            }
            if network.get("connectMode").is_none() {
                network["connectMode"] = json!("DIRECT_PEERING");
            }
        }
    }
}

async fn create_instance(
    AxumState(shared): AxumState<Arc<Shared>>,
    Path((project, location)): Path<(String, String)>,
    query: Query,
    body: Bytes,
) -> GcpResult<Response> {
    let mut instance = http::parse_json(&body)?;
    enums::normalize(&mut instance, INSTANCE_ENUMS, "instance")?;
    let id = query.get("instanceId").unwrap_or("").to_string();
    check_instance_id(&id)?;
    check_location(&location)?;
    let tier = instance
        .get("tier")
        .and_then(Value::as_str)
        .filter(|t| *t != "TIER_UNSPECIFIED")
        .ok_or_else(|| invalid("The instance tier must be specified."))?
        .to_string();
    let zonal_location = geo::zone_exists(&location);
    if tier_is_zonal(&tier) != zonal_location {
        let needs = if tier_is_zonal(&tier) {
            "a zone"
        } else {
            "a region"
        };
        return Err(invalid(format!(
            "Invalid location '{location}' for tier {tier}: instances of tier {tier} must be created in {needs}."
        )));
    }
    check_file_shares(&tier, &mut instance)?;
    let networks = instance
        .get("networks")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    if networks.len() != 1 {
        return Err(invalid("Exactly one network must be specified."));
    }
    let network = networks[0]
        .get("network")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    let ints = query.enum_ints();
    shared.with_world(|world, cx| {
        let (network_project, network_name) = network_ref(&project, &network);
        if network_name.is_empty() || world.compute.network(network_project, network_name).is_none() {
            return Err(invalid(format!(
                "Network 'projects/{network_project}/global/networks/{network_name}' does not exist."
            )));
        }
        let parent = format!("projects/{project}/locations/{location}");
        let name = format!("{parent}/instances/{id}");
        if world.file.instances.contains_key(&name) {
            return Err(GcpError::already_exists(format!(
                "Resource '{name}' already exists"
            )));
        }
        let error = match cx.scripted_fault("file.instance", "create") {
            Some(action) => fault_error(action, &tier)?,
            None => None,
        };
        assign_outputs(world, cx, &name, &tier, &mut instance);
        world.file.instances.insert(name.clone(), instance);
        let duration = world.duration_ms(cx, "file.instance.create");
        let op = lro::new_operation(world, cx, &parent, &name, "create", duration);
        let op_name = world.file.operations.insert(op);
        world
            .file
            .pending
            .insert(op_name.clone(), Pending::Create { error });
        Ok(render_operation(world, &op_name, ints))
    })
}

fn render_operation(world: &World, name: &str, ints: bool) -> Response {
    aip151::render::<Api>(world, name, ints)
}

async fn get_instance(
    AxumState(shared): AxumState<Arc<Shared>>,
    Path((project, location, instance)): Path<(String, String, String)>,
    query: Query,
) -> GcpResult<Response> {
    let name = format!("projects/{project}/locations/{location}/instances/{instance}");
    shared.read_world(|world, _| {
        let value = world
            .file
            .instances
            .get(&name)
            .ok_or_else(|| instance_not_found(&name))?;
        Ok(http::proto_json(value.clone(), INSTANCE_ENUMS, &query))
    })
}

async fn list_instances(
    AxumState(shared): AxumState<Arc<Shared>>,
    Path((project, location)): Path<(String, String)>,
    query: Query,
) -> GcpResult<Response> {
    if location != "-" {
        check_location(&location)?;
    }
    let prefix = format!("projects/{project}/locations/");
    shared.read_world(|world, _| {
        let items: Vec<(String, Value)> = world
            .file
            .instances
            .iter()
            .filter(|(name, _)| {
                name.strip_prefix(&prefix).is_some_and(|rest| {
                    location == "-" || rest.starts_with(&format!("{location}/"))
                })
            })
            .map(|(name, v)| (name.clone(), v.clone()))
            .collect();
        let page = crate::paging::page(&PAGING, &query, crate::paging::cap(&shared), items)?;
        let mut out = json!({});
        if !page.items.is_empty() {
            out["instances"] = Value::Array(page.items);
        }
        if let Some(next) = page.next {
            out["nextPageToken"] = json!(next);
        }
        Ok(http::proto_json(out, LIST_ENUMS, &query))
    })
}

/// Fields `UpdateInstance` accepts in its mask.
const UPDATABLE: &[&str] = &[
    "description",
    "fileShares",
    "labels",
    "performanceConfig",
    "deletionProtectionEnabled",
    "deletionProtectionReason",
];

async fn patch_instance(
    AxumState(shared): AxumState<Arc<Shared>>,
    Path((project, location, instance)): Path<(String, String, String)>,
    query: Query,
    body: Bytes,
) -> GcpResult<Response> {
    let mut patch = http::parse_json(&body)?;
    enums::normalize(&mut patch, INSTANCE_ENUMS, "instance")?;
    let paths = lro::mask_paths(query.get("updateMask").unwrap_or(""));
    if paths.is_empty() {
        return Err(invalid("update_mask must contain at least one field path."));
    }
    if let Some(bad) = paths.iter().find(|p| {
        !UPDATABLE
            .iter()
            .any(|u| *p == u || p.starts_with(&format!("{u}.")))
    }) {
        return Err(invalid(format!(
            "Invalid update_mask path '{bad}': only description, file_shares, labels, performance_config, deletion_protection_enabled and deletion_protection_reason can be updated."
        )));
    }
    let name = format!("projects/{project}/locations/{location}/instances/{instance}");
    let ints = query.enum_ints();
    shared.with_world(|world, cx| {
        let current = world
            .file
            .instances
            .get(&name)
            .cloned()
            .ok_or_else(|| instance_not_found(&name))?;
        if current["state"] != "READY" || world.file.operations.running_on(&name).is_some() {
            return Err(GcpError::failed_precondition(format!(
                "Instance '{name}' is not ready: an operation is in progress on it."
            )));
        }
        let tier = current["tier"].as_str().unwrap_or("").to_string();
        let mut updated = current.clone();
        lro::apply_mask(&mut updated, &patch, &paths);
        if paths.iter().any(|p| p.starts_with("fileShares")) {
            check_file_shares(&tier, &mut updated)?;
            let old_share = &current["fileShares"][0];
            let new_share = &updated["fileShares"][0];
            if old_share["name"] != new_share["name"] {
                return Err(invalid(
                    "The file share name cannot be changed: file_shares[0].name is immutable.",
                ));
            }
            let old = capacity_of(old_share)?;
            let new = capacity_of(new_share)?;
            if new < old && is_basic(&tier) {
                return Err(invalid(format!(
                    "Invalid capacity {new} GB: the capacity of a {tier} instance cannot be decreased (current capacity {old} GB)."
                )));
            }
        }
        if let Some(action) = cx.scripted_fault("file.instance", "update")
            && let Some((code, message)) = fault_error(action, &tier)? {
                let duration = world.duration_ms(cx, "file.instance.update");
                let parent = format!("projects/{project}/locations/{location}");
                let mut op = lro::new_operation(world, cx, &parent, &name, "update", duration);
                op.fail(cx.now, code, message);
                let op_name = world.file.operations.insert(op);
                return Ok(render_operation(world, &op_name, ints));
            }
        updated["etag"] = json!(world.hex(16));
        let duration = world.duration_ms(cx, "file.instance.update");
        let parent = format!("projects/{project}/locations/{location}");
        let op = lro::new_operation(world, cx, &parent, &name, "update", duration);
        let op_name = world.file.operations.insert(op);
        world
            .file
            .pending
            .insert(op_name.clone(), Pending::Update { resource: updated });
        Ok(render_operation(world, &op_name, ints))
    })
}

async fn delete_instance(
    AxumState(shared): AxumState<Arc<Shared>>,
    Path((project, location, instance)): Path<(String, String, String)>,
    query: Query,
) -> GcpResult<Response> {
    let name = format!("projects/{project}/locations/{location}/instances/{instance}");
    let ints = query.enum_ints();
    shared.with_world(|world, cx| {
        let current = world
            .file
            .instances
            .get(&name)
            .ok_or_else(|| instance_not_found(&name))?;
        if current["deletionProtectionEnabled"] == true {
            return Err(GcpError::failed_precondition(format!(
                "Instance '{name}' has deletion protection enabled; disable it before deleting the instance."
            )));
        }
        if let Some(running) = world.file.operations.running_on(&name) {
            return Err(GcpError::failed_precondition(format!(
                "Instance '{name}' cannot be deleted while operation '{}' is in progress.",
                running.name
            )));
        }
        let tier = current["tier"].as_str().unwrap_or("").to_string();
        if let Some(action) = cx.scripted_fault("file.instance", "delete")
            && let Some((code, message)) = fault_error(action, &tier)? {
                let duration = world.duration_ms(cx, "file.instance.delete");
                let parent = format!("projects/{project}/locations/{location}");
                let mut op = lro::new_operation(world, cx, &parent, &name, "delete", duration);
                op.fail(cx.now, code, message);
                let op_name = world.file.operations.insert(op);
                return Ok(render_operation(world, &op_name, ints));
            }
        if let Some(instance) = world.file.instances.get_mut(&name) {
            instance["state"] = json!("DELETING");
        }
        let duration = world.duration_ms(cx, "file.instance.delete");
        let parent = format!("projects/{project}/locations/{location}");
        let op = lro::new_operation(world, cx, &parent, &name, "delete", duration);
        let op_name = world.file.operations.insert(op);
        world.file.pending.insert(op_name.clone(), Pending::Delete);
        Ok(render_operation(world, &op_name, ints))
    })
}

fn location_json(project: &str, location: &str) -> Value {
    json!({
        "name": format!("projects/{project}/locations/{location}"),
        "locationId": location,
    })
}

async fn list_locations(Path(project): Path<String>) -> Response {
    let mut locations = Vec::new();
    for (region, zones) in geo::REGIONS {
        locations.push(location_json(&project, region));
        for zone in *zones {
            locations.push(location_json(&project, zone));
        }
    }
    http::json(json!({ "locations": locations }))
}

async fn get_location(Path((project, location)): Path<(String, String)>) -> GcpResult<Response> {
    check_location(&location)?;
    Ok(http::json(location_json(&project, &location)))
}
