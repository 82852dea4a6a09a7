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

use crate::enums::{self, EnumField, EnumTable};
use crate::error::{GcpError, GcpResult};
use crate::faults::{FaultAction, NamedFault};
use crate::geo;
use crate::http::{self, Query};
use crate::lro::{self, LroApi, Operations};
use crate::server::Shared;
use crate::world::{Ctx, World};
use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, State as AxumState};
use axum::response::Response;
use axum::routing::get;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::sync::Arc;

/// Enum fields of `google.cloud.filestore.v1.Instance`, with the proto numbers of the
/// `google-cloud-filestore-v1` crate. Names that the discovery document lists but the crate
/// does not know yet (`MODE_IPV6`, `PRIVATE_SERVICE_CONNECT`, replica `PAUSING`...) carry the
/// next free numbers of their enum; they are marked "assumed".
pub const INSTANCE_ENUMS: EnumTable = &[
    EnumField {
        path: "state",
        values: &[
            (0, "STATE_UNSPECIFIED"),
            (1, "CREATING"),
            (2, "READY"),
            (3, "REPAIRING"),
            (4, "DELETING"),
            (6, "ERROR"),
            (7, "RESTORING"),
            (8, "SUSPENDED"),
            (9, "SUSPENDING"),
            (10, "RESUMING"),
            (12, "REVERTING"),
            (13, "PROMOTING"),
        ],
    },
    EnumField {
        path: "tier",
        values: &[
            (0, "TIER_UNSPECIFIED"),
            (1, "STANDARD"),
            (2, "PREMIUM"),
            (3, "BASIC_HDD"),
            (4, "BASIC_SSD"),
            (5, "HIGH_SCALE_SSD"),
            (6, "ENTERPRISE"),
            (7, "ZONAL"),
            (8, "REGIONAL"),
        ],
    },
    EnumField {
        path: "protocol",
        values: &[
            (0, "FILE_PROTOCOL_UNSPECIFIED"),
            (1, "NFS_V3"),
            (2, "NFS_V4_1"),
        ],
    },
    EnumField {
        path: "suspensionReasons[]",
        values: &[(0, "SUSPENSION_REASON_UNSPECIFIED"), (1, "KMS_KEY_ISSUE")],
    },
    EnumField {
        path: "networks[].modes[]",
        // MODE_IPV6 = 2 assumed.
        values: &[
            (0, "ADDRESS_MODE_UNSPECIFIED"),
            (1, "MODE_IPV4"),
            (2, "MODE_IPV6"),
        ],
    },
    EnumField {
        path: "networks[].connectMode",
        // PRIVATE_SERVICE_CONNECT = 3 assumed.
        values: &[
            (0, "CONNECT_MODE_UNSPECIFIED"),
            (1, "DIRECT_PEERING"),
            (2, "PRIVATE_SERVICE_ACCESS"),
            (3, "PRIVATE_SERVICE_CONNECT"),
        ],
    },
    EnumField {
        path: "fileShares[].nfsExportOptions[].accessMode",
        values: &[
            (0, "ACCESS_MODE_UNSPECIFIED"),
            (1, "READ_ONLY"),
            (2, "READ_WRITE"),
        ],
    },
    EnumField {
        path: "fileShares[].nfsExportOptions[].squashMode",
        values: &[
            (0, "SQUASH_MODE_UNSPECIFIED"),
            (1, "NO_ROOT_SQUASH"),
            (2, "ROOT_SQUASH"),
        ],
    },
    EnumField {
        path: "replication.role",
        values: &[(0, "ROLE_UNSPECIFIED"), (1, "ACTIVE"), (2, "STANDBY")],
    },
    EnumField {
        path: "replication.replicas[].state",
        // PROMOTING..RESUMING = 6..9 assumed.
        values: &[
            (0, "STATE_UNSPECIFIED"),
            (1, "CREATING"),
            (3, "READY"),
            (4, "REMOVING"),
            (5, "FAILED"),
            (6, "PROMOTING"),
            (7, "PAUSING"),
            (8, "PAUSED"),
            (9, "RESUMING"),
        ],
    },
    EnumField {
        path: "replication.replicas[].stateReasons[]",
        // PAUSE_FAILED, RESUME_FAILED = 3, 4 assumed.
        values: &[
            (0, "STATE_REASON_UNSPECIFIED"),
            (1, "PEER_INSTANCE_UNREACHABLE"),
            (2, "REMOVE_FAILED"),
            (3, "PAUSE_FAILED"),
            (4, "RESUME_FAILED"),
        ],
    },
];

/// Type URLs of Filestore operations.
pub const LRO: LroApi = LroApi {
    metadata_type: "type.googleapis.com/google.cloud.common.OperationMetadata",
    resource_type: "type.googleapis.com/google.cloud.filestore.v1.Instance",
    detailed_metadata: true,
    resource_enums: INSTANCE_ENUMS,
};

/// What a running operation does when it finishes.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Pending {
    /// The instance becomes READY, or is removed and the operation fails with `error`.
    Create { error: Option<(i32, String)> },
    /// The instance takes this new value.
    Update { resource: Value },
    /// The instance is removed.
    Delete,
}

/// Everything Filestore holds.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct State {
    /// Instances by full name, stored with enum names.
    pub instances: BTreeMap<String, Value>,
    pub operations: Operations,
    /// Work of running operations, by operation name.
    pub pending: BTreeMap<String, Pending>,
    /// Counter behind the reserved IP ranges handed out to instances.
    pub ip_blocks: u32,
}

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
        .route(
            &format!("{base}/{{location}}/operations"),
            get(list_operations),
        )
        .route(
            &format!("{base}/{{location}}/operations/{{operation}}"),
            get(get_operation)
                .delete(delete_operation)
                .post(cancel_operation),
        )
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
        "operations": world
            .file
            .operations
            .by_name
            .values()
            .map(|o| o.to_json(world, &LRO, false))
            .collect::<Vec<_>>(),
    })
}

fn instance_not_found(name: &str) -> GcpError {
    GcpError::not_found(format!("Resource '{name}' was not found"))
}

fn invalid(message: impl Into<String>) -> GcpError {
    GcpError::invalid_reason("badRequest", message)
}

/// The capacity rule of a tier: `(bands of (min, max, step))` in GiB.
pub fn capacity_bands(tier: &str) -> &'static [(i64, i64, i64)] {
    match tier {
        "BASIC_HDD" | "STANDARD" => &[(1024, 65433, 1)],
        "BASIC_SSD" | "PREMIUM" => &[(2560, 65433, 1)],
        "HIGH_SCALE_SSD" => &[(10240, 102400, 2560)],
        "ZONAL" | "REGIONAL" => &[(1024, 9984, 256), (10240, 102400, 2560)],
        "ENTERPRISE" => &[(1024, 10240, 256)],
        _ => &[],
    }
}

/// Checks a share capacity against the tier's bands.
pub fn check_capacity(tier: &str, capacity: i64) -> GcpResult<()> {
    let bands = capacity_bands(tier);
    if bands.iter().any(|(min, max, step)| {
        capacity >= *min && capacity <= *max && (capacity - min) % step == 0
    }) {
        return Ok(());
    }
    let min = bands.first().map(|b| b.0).unwrap_or(0);
    let max = bands.last().map(|b| b.1).unwrap_or(0);
    if capacity < min || capacity > max {
        return Err(invalid(format!(
            "Invalid capacity {capacity} GB for tier {tier}: the capacity must be between {min} GB and {max} GB."
        )));
    }
    let rule = bands
        .iter()
        .map(|(min, max, step)| format!("in steps of {step} GB from {min} GB to {max} GB"))
        .collect::<Vec<_>>()
        .join(", or ");
    Err(invalid(format!(
        "Invalid capacity {capacity} GB for tier {tier}: the capacity must be {rule}."
    )))
}

/// True if the tier's instances live in a zone (the others live in a region).
fn tier_is_zonal(tier: &str) -> bool {
    matches!(
        tier,
        "BASIC_HDD" | "BASIC_SSD" | "STANDARD" | "PREMIUM" | "HIGH_SCALE_SSD" | "ZONAL"
    )
}

fn is_basic(tier: &str) -> bool {
    matches!(tier, "BASIC_HDD" | "BASIC_SSD" | "STANDARD" | "PREMIUM")
}

/// Share names: a lowercase letter, then lowercase letters, digits or underscores; at most 16
/// characters on basic tiers and 63 on the others.
fn check_share_name(tier: &str, name: &str) -> GcpResult<()> {
    let max = if is_basic(tier) { 16 } else { 63 };
    let bytes = name.as_bytes();
    let ok = !bytes.is_empty()
        && bytes.len() <= max
        && bytes[0].is_ascii_lowercase()
        && bytes
            .iter()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || *b == b'_');
    if ok {
        return Ok(());
    }
    Err(invalid(format!(
        "Invalid file share name '{name}': the name must be 1 to {max} characters long, start with a lowercase letter and contain only lowercase letters, numbers and underscores."
    )))
}

fn capacity_of(share: &Value) -> GcpResult<i64> {
    match share.get("capacityGb") {
        Some(Value::String(s)) => s.parse::<i64>().map_err(|_| {
            invalid(format!(
                "Invalid value at 'instance.file_shares[0].capacity_gb' (TYPE_INT64), \"{s}\""
            ))
        }),
        Some(Value::Number(n)) => n.as_i64().ok_or_else(|| {
            invalid(format!(
                "Invalid value at 'instance.file_shares[0].capacity_gb' (TYPE_INT64), {n}"
            ))
        }),
        None | Some(Value::Null) => Ok(0),
        Some(other) => Err(invalid(format!(
            "Invalid value at 'instance.file_shares[0].capacity_gb' (TYPE_INT64), {other}"
        ))),
    }
}

/// Checks the single file share of an instance and normalises `capacityGb` to a string.
fn check_file_shares(tier: &str, instance: &mut Value) -> GcpResult<()> {
    let shares = instance
        .get_mut("fileShares")
        .and_then(Value::as_array_mut)
        .filter(|s| !s.is_empty())
        .ok_or_else(|| invalid("Exactly one file share must be specified."))?;
    if shares.len() != 1 {
        return Err(invalid("Exactly one file share must be specified."));
    }
    let share = &mut shares[0];
    let name = share.get("name").and_then(Value::as_str).unwrap_or("");
    check_share_name(tier, name)?;
    let capacity = capacity_of(share)?;
    check_capacity(tier, capacity)?;
    share["capacityGb"] = json!(capacity.to_string());
    Ok(())
}

/// Splits a network reference (`name` or `projects/P/global/networks/N`) into project and name.
fn network_ref<'a>(project: &'a str, network: &'a str) -> (&'a str, &'a str) {
    let parts: Vec<&str> = network.split('/').collect();
    match parts.as_slice() {
        [.., "projects", p, "global", "networks", n] => (p, n),
        _ => (project, network),
    }
}

fn check_instance_id(id: &str) -> GcpResult<()> {
    if http::valid_name(id, 63) {
        return Ok(());
    }
    Err(invalid(format!(
        "Invalid instance_id '{id}': the id must be 1 to 63 characters long, start with a lowercase letter, contain only lowercase letters, numbers and hyphens, and not end with a hyphen."
    )))
}

fn check_location(location: &str) -> GcpResult<()> {
    if geo::zone_exists(location) || geo::region_exists(location) {
        return Ok(());
    }
    Err(invalid(format!(
        "Location '{location}' is not a valid location."
    )))
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
    if let Some(bands) = capacity_bands(tier).first() {
        if !is_basic(tier) {
            instance["capacityStepSizeGb"] = json!(bands.2.to_string());
            instance["minCapacityGb"] = json!(bands.0.to_string());
            let max = capacity_bands(tier).last().map(|b| b.1).unwrap_or(bands.1);
            instance["maxCapacityGb"] = json!(max.to_string());
        }
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
    let value = world
        .file
        .operations
        .by_name
        .get(name)
        .map(|o| o.to_json(world, &LRO, ints))
        .unwrap_or(Value::Null);
    http::json(value)
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
        let items: Vec<Value> = world
            .file
            .instances
            .iter()
            .filter(|(name, _)| {
                name.strip_prefix(&prefix).is_some_and(|rest| {
                    location == "-" || rest.starts_with(&format!("{location}/"))
                })
            })
            .map(|(_, v)| v.clone())
            .collect();
        let mut out = json!({});
        if !items.is_empty() {
            out["instances"] = Value::Array(items);
        }
        Ok(http::proto_json(out, LIST_ENUMS, &query))
    })
}

/// The instance table under `instances[]`, for list responses.
const LIST_ENUMS: EnumTable = &[
    EnumField {
        path: "instances[].state",
        values: INSTANCE_ENUMS[0].values,
    },
    EnumField {
        path: "instances[].tier",
        values: INSTANCE_ENUMS[1].values,
    },
    EnumField {
        path: "instances[].protocol",
        values: INSTANCE_ENUMS[2].values,
    },
    EnumField {
        path: "instances[].suspensionReasons[]",
        values: INSTANCE_ENUMS[3].values,
    },
    EnumField {
        path: "instances[].networks[].modes[]",
        values: INSTANCE_ENUMS[4].values,
    },
    EnumField {
        path: "instances[].networks[].connectMode",
        values: INSTANCE_ENUMS[5].values,
    },
    EnumField {
        path: "instances[].fileShares[].nfsExportOptions[].accessMode",
        values: INSTANCE_ENUMS[6].values,
    },
    EnumField {
        path: "instances[].fileShares[].nfsExportOptions[].squashMode",
        values: INSTANCE_ENUMS[7].values,
    },
    EnumField {
        path: "instances[].replication.role",
        values: INSTANCE_ENUMS[8].values,
    },
];

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
        if let Some(action) = cx.scripted_fault("file.instance", "update") {
            if let Some((code, message)) = fault_error(action, &tier)? {
                let duration = world.duration_ms(cx, "file.instance.update");
                let parent = format!("projects/{project}/locations/{location}");
                let mut op = lro::new_operation(world, cx, &parent, &name, "update", duration);
                op.fail(cx.now, code, message);
                let op_name = world.file.operations.insert(op);
                return Ok(render_operation(world, &op_name, ints));
            }
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
        if let Some(action) = cx.scripted_fault("file.instance", "delete") {
            if let Some((code, message)) = fault_error(action, &tier)? {
                let duration = world.duration_ms(cx, "file.instance.delete");
                let parent = format!("projects/{project}/locations/{location}");
                let mut op = lro::new_operation(world, cx, &parent, &name, "delete", duration);
                op.fail(cx.now, code, message);
                let op_name = world.file.operations.insert(op);
                return Ok(render_operation(world, &op_name, ints));
            }
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

async fn get_operation(
    AxumState(shared): AxumState<Arc<Shared>>,
    Path((project, location, operation)): Path<(String, String, String)>,
    query: Query,
) -> GcpResult<Response> {
    let name = format!("projects/{project}/locations/{location}/operations/{operation}");
    shared.read_world(|world, _| {
        let op = world.file.operations.get(&name)?;
        Ok(http::json(op.to_json(world, &LRO, query.enum_ints())))
    })
}

async fn list_operations(
    AxumState(shared): AxumState<Arc<Shared>>,
    Path((project, location)): Path<(String, String)>,
    query: Query,
) -> GcpResult<Response> {
    let parent = format!("projects/{project}/locations/{location}");
    shared.read_world(|world, _| {
        Ok(http::json(
            world.file.operations.list(world, &LRO, &parent, &query),
        ))
    })
}

async fn delete_operation(
    AxumState(shared): AxumState<Arc<Shared>>,
    Path((project, location, operation)): Path<(String, String, String)>,
) -> GcpResult<Response> {
    let name = format!("projects/{project}/locations/{location}/operations/{operation}");
    shared.with_world(|world, _| {
        world.file.operations.delete(&name)?;
        Ok(http::json(json!({})))
    })
}

async fn cancel_operation(
    AxumState(shared): AxumState<Arc<Shared>>,
    Path((project, location, operation)): Path<(String, String, String)>,
) -> GcpResult<Response> {
    let Some(operation) = operation.strip_suffix(":cancel") else {
        return Err(GcpError::method_not_allowed());
    };
    let name = format!("projects/{project}/locations/{location}/operations/{operation}");
    shared.with_world(|world, _| {
        world.file.operations.cancel(&name)?;
        Ok(http::json(json!({})))
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capacity_follows_tier_bands() {
        assert!(check_capacity("BASIC_HDD", 1024).is_ok());
        assert!(check_capacity("BASIC_HDD", 1023).is_err());
        assert!(check_capacity("BASIC_HDD", 65433).is_ok());
        assert!(check_capacity("BASIC_HDD", 65434).is_err());
        assert!(check_capacity("BASIC_SSD", 2559).is_err());
        assert!(check_capacity("BASIC_SSD", 2560).is_ok());
        assert!(check_capacity("HIGH_SCALE_SSD", 12800).is_ok());
        assert!(check_capacity("HIGH_SCALE_SSD", 11000).is_err());
        assert!(check_capacity("ZONAL", 1280).is_ok());
        assert!(check_capacity("ZONAL", 1300).is_err());
        assert!(check_capacity("ZONAL", 9984).is_ok());
        assert!(check_capacity("ZONAL", 10000).is_err());
        assert!(check_capacity("REGIONAL", 102400).is_ok());
        assert!(check_capacity("ENTERPRISE", 10240).is_ok());
        let err = check_capacity("BASIC_SSD", 1024).unwrap_err();
        assert_eq!((err.code, err.status), (400, "INVALID_ARGUMENT"));
    }

    #[test]
    fn share_names_and_network_refs() {
        assert!(check_share_name("BASIC_SSD", "nfsshare").is_ok());
        assert!(check_share_name("BASIC_SSD", "a_very_long_share_name").is_err());
        assert!(check_share_name("ZONAL", "a_very_long_share_name").is_ok());
        assert!(check_share_name("ZONAL", "Share").is_err());
        assert!(check_share_name("ZONAL", "1share").is_err());
        assert_eq!(network_ref("p", "net"), ("p", "net"));
        assert_eq!(
            network_ref("p", "projects/host/global/networks/shared"),
            ("host", "shared")
        );
    }
}
