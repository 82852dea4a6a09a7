//! Zonal reservations (`projects/p/zones/z/reservations`) of specific VM shapes: insert, get,
//! list, aggregated list, delete, resize
//! (<https://cloud.google.com/compute/docs/reference/rest/v1/reservations>), and their consumption
//! by GKE node pools. An insert takes its VMs' quota (vCPUs, GPUs, local SSDs in its region, see
//! [`crate::quotas`]) and fails with `QUOTA_EXCEEDED` past a limit; it holds its VMs of the zone's
//! on-demand capacity and fails with `ZONE_RESOURCE_POOL_EXHAUSTED` when the zone has fewer left
//! ([`crate::capacity`]).
//!
//! Shapes are those of the v1 `Reservation` resource: `specificReservation` (an
//! `AllocationSpecificSKUReservation`: `count` and `inUseCount` as int64 strings,
//! `instanceProperties` with `machineType`, `guestAccelerators[{acceleratorType,
//! acceleratorCount}]`, `localSsds[{diskSizeGb, interface}]`, `minCpuPlatform`),
//! `specificReservationRequired`, `shareSettings` (`LOCAL` unless given), `deploymentType` and
//! `status`. A reservation is listed while its insert runs, with status `CREATING`, then `READY`;
//! `DELETING` while its delete runs — the statuses the API reference describes.
//!
//! Checks: a `specificReservation` with `count` ≥ 1 and `instanceProperties.machineType`, a machine
//! type of the simulated catalogue that the reservation's zone offers, an A3 machine type's own
//! accelerators if accelerators are given (none on other types), local SSD interfaces `NVME` or
//! `SCSI`, share types `LOCAL` (without projects), `SPECIFIC_PROJECTS` (with a `projectMap`) or
//! `ORGANIZATION`, and
//! `deploymentType` from v1's enum (`DENSE`, `DEPLOYMENT_TYPE_UNSPECIFIED`). `sourceInstanceTemplate`
//! is refused: the simulator has no instance templates. The messages follow Compute's forms
//! (`Required field '...' not specified`, `Invalid value for field '...': '...'.`, the instances
//! API's `Machine type with name '...' does not exist in zone '...'.`); their exact texts for
//! reservations could not be confirmed.
//!
//! Resize (`POST .../reservations/{r}/resize`, a `ReservationsResizeRequest` `{"specificSkuCount":
//! "N"}`, what `gcloud compute reservations update R --vm-count=N` sends — gcloud's `update`
//! command calls `Resize` for `--vm-count`) changes `specificReservation.count` when its zonal
//! operation is DONE (latency `compute.reservation.patch`), `requestId` honoured as for every
//! Compute change. Its `operationType` is `resize`, as the Config Connector mock of Compute has it
//! (GoogleCloudPlatform/k8s-config-connector `mockgcp/mockcompute/computereservations.go`; no
//! recorded real answer was found). `specificSkuCount` must be 1 to 1000 (the discovery document's
//! range). VMs added are checked like an insert's: past a quota the operation ends with
//! `QUOTA_EXCEEDED`, past the zone's capacity with `ZONE_RESOURCE_POOL_EXHAUSTED`, and they are
//! held from the resize's start; VMs removed are freed when it is DONE. A count below the VMs that
//! consume the reservation now is refused at once with 400 `invalid` `Invalid value for field
//! 'resource.specificSkuCount': 'N'. The reservation 'R' has M VMs in use; its count cannot be
//! reduced below that.` — a guess: that Compute refuses it, its wording and the field's path could
//! not be confirmed. `inUseCount` moved by consumers while the resize runs is kept.
// GUESS(compute-reservation-shrink): a reservation resized below its VMs in use is refused at once with 400 `invalid`; that Compute refuses it, its text and the field's path are unconfirmed
//!
//! Consumption: the simulator has no Compute instances, so the only consumers are the nodes of GKE
//! node pools with a `SPECIFIC_RESERVATION` affinity (`crate::container` checks and books them,
//! see its `reservations` module). Each VM held raises `specificReservation.inUseCount` by one and
//! each VM deleted lowers it, so `count - inUseCount` is what is left to consume. Deleting follows
//! "Delete reservations" (<https://cloud.google.com/compute/docs/instances/reservations-delete>):
//! "You can only delete a specifically targeted reservation if no Compute Engine instances consume
//! it", while the VMs of a deleted automatically consumed reservation keep running. So a
//! reservation with `specificReservationRequired` and VMs in use cannot be deleted: 400
//! `resourceInUseByAnotherResource`, `The reservation resource '<path>' is already being used by
//! 'projects/p/zones/z/instances/<node>'` (Compute's generic in-use form; the text Compute gives
//! for reservations could not be confirmed). Nodes of a pool whose reservation was deleted anyway
//! (not possible for a specific one) keep running and book nothing.

use super::collection::{self, Collection, Hooks, Placement, Quota, Statuses, Target};
use super::operations::{Scope, Verb};
use super::{
    Kind, Life, State, array_field, body_object, invalid_field, last_segment, link,
    required_field, str_field,
};
use crate::capacity::{self, Model};
use crate::error::{GcpError, GcpResult};
use crate::geo;
use crate::http::Query;
use crate::quotas;
use crate::shared::Shared;
use crate::shared::Ctx;
use crate::world::World;
use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, State as AxumState};
use axum::response::Response;
use axum::routing::post;
use serde_json::{Map, Value, json};
use std::sync::Arc;

/// The `reservations` collection.
pub static COLLECTION: Collection = Collection {
    name: "Reservation",
    word: "reservation",
    segment: "reservations",
    in_use_word: "reservation",
    placement: Placement::Zonal,
    // A reservation holds its VMs' resources against the region's quota, so it fails on CPUS.
    quota: Quota {
        metric: "CPUS",
        limit: 24.0,
        limit_name: "CPUS-per-project-region",
        regional: true,
    },
    build: insert,
    hooks: Hooks {
        statuses: Some(Statuses {
            creating: "CREATING",
            ready: "READY",
            deleting: "DELETING",
        }),
        user_of,
        insert_failure,
        change_failure,
        carry,
        routes,
        ..Hooks::NONE
    },
};

fn routes() -> Router<Arc<Shared>> {
    Router::new().route(
        &format!("{}/resize", COLLECTION.item_route()),
        post(resize),
    )
}

/// `resize` (`POST .../reservations/{r}/resize`, a `ReservationsResizeRequest`): a zonal
/// operation whose `operationType` is `resize`, `requestId` honoured as for any change.
async fn resize(
    AxumState(shared): AxumState<Arc<Shared>>,
    Path(params): Path<Vec<(String, String)>>,
    query: Query,
    body: Bytes,
) -> GcpResult<Response> {
    let target = collection::target(&COLLECTION, &params)?;
    let body = body_object(&body)?;
    collection::change(
        &shared,
        &COLLECTION,
        &target,
        &query,
        body,
        Verb::Special("resize"),
        resized,
    )
}

/// The reservation a resize leaves: `specificSkuCount` between 1 and 1000, not below the VMs
/// that consume it now.
fn resized(
    _world: &mut World,
    _cx: &Ctx,
    target: &Target,
    current: Value,
    body: Map<String, Value>,
) -> GcpResult<Value> {
    const FIELD: &str = "resource.specificSkuCount";
    let count = match body.get("specificSkuCount").filter(|v| !v.is_null()) {
        None => return Err(required_field(FIELD)),
        Some(value) => match int64(value) {
            Some(n) if (1..=1000).contains(&n) => n,
            _ => {
                return Err(invalid_field(
                    FIELD,
                    &text(value),
                    "Must be between 1 and 1000.",
                ));
            }
        },
    };
    let specific = &current["specificReservation"];
    let in_use = specific.get("inUseCount").and_then(int64).unwrap_or(0);
    if count < in_use {
        return Err(invalid_field(
            FIELD,
            &count.to_string(),
            &format!(
                "The reservation '{}' has {in_use} VMs in use; its count cannot be reduced below \
                 that.",
                target.name
            ),
        ));
    }
    let mut next = current.clone();
    next["specificReservation"]["count"] = json!(count.to_string());
    Ok(next)
}

/// The VMs a resize adds must fit the project's quotas and the zone's capacity, as an insert's.
fn change_failure(
    world: &World,
    cx: &Ctx,
    target: &Target,
    current: &Value,
    next: &Value,
) -> Option<super::operations::Failure> {
    let (shape, before) = quotas::reservation_shape(current);
    let (_, after) = quotas::reservation_shape(next);
    let more = after - before;
    if more <= 0.0 {
        return None;
    }
    let mut demand = vec![];
    shape.uses(target.region(), more, &mut demand);
    if let Some(exceeded) =
        quotas::check(world, cx.quotas, &target.project, &demand).first()
    {
        return Some(quotas::compute_failure(exceeded));
    }
    let Scope::Zone(zone) = &target.scope else {
        return None;
    };
    let config = &cx.capacity;
    (!capacity::fits(world, config, zone, &shape.machine, Model::OnDemand, more as u64))
        .then(|| capacity::compute_exhausted(&target.project, zone))
}

/// A resize replaces the body when it is DONE; the VMs consumed meanwhile stay counted.
fn carry(current: &Value, next: &mut Value) {
    if let Some(in_use) = current["specificReservation"].get("inUseCount") {
        next["specificReservation"]["inUseCount"] = in_use.clone();
    }
}

/// The kind of stored reservations.
pub const KIND: Kind = Kind(COLLECTION.name);

/// A specifically targeted reservation is used by the first node (else instance group) of a GKE
/// pool that holds some of it; an automatically consumed one can always be deleted.
fn user_of(world: &World, path: &str) -> Option<String> {
    let reservation = world.compute.resources.get(path)?;
    if reservation.body["specificReservationRequired"] != json!(true) {
        return None;
    }
    world.container.reservation_user(path)
}

/// A reservation holds its VMs of the zone's on-demand capacity: asking for more than the zone has
/// left fails the insert's operation with `ZONE_RESOURCE_POOL_EXHAUSTED` ([`crate::capacity`]).
fn insert_failure(
    world: &World,
    cx: &Ctx,
    target: &Target,
    resource: &Value,
) -> Option<super::operations::Failure> {
    let Scope::Zone(zone) = &target.scope else {
        return None;
    };
    let (machine, count) = capacity::reservation_vms(resource);
    let config = &cx.capacity;
    (!capacity::fits(world, config, zone, &machine, Model::OnDemand, count))
        .then(|| capacity::compute_exhausted(&target.project, zone))
}

/// A reservation as its consumers see it.
#[derive(Debug, Clone, PartialEq)]
pub struct Reservation {
    /// `projects/p/zones/z/reservations/r`.
    pub path: String,
    pub id: String,
    /// `CREATING`, `READY` or `DELETING`.
    pub status: String,
    pub machine_type: String,
    /// `(acceleratorType, acceleratorCount)` as the reservation lists them (often none).
    pub accelerators: Vec<(String, u64)>,
    pub specific_required: bool,
    /// `count - inUseCount`.
    pub free: u64,
    /// `shareSettings.shareType`.
    share_type: String,
    /// The projects of a `SPECIFIC_PROJECTS` reservation (keys and `projectId`s of `projectMap`).
    shared_projects: Vec<String>,
}

impl Reservation {
    /// Whether `project` may consume it: its own project, a project it is shared with, or any
    /// project for an `ORGANIZATION` reservation (the simulator has no organizations).
    pub fn usable_by(&self, project: &str) -> bool {
        let owner = self.path.split('/').nth(1).unwrap_or("");
        owner == project
            || self.share_type == "ORGANIZATION"
            || (self.share_type == "SPECIFIC_PROJECTS"
                && self.shared_projects.iter().any(|p| p == project))
    }
}

/// The reservation at `path`, if it exists (`CREATING` and `DELETING` ones included).
pub fn find(state: &State, path: &str) -> Option<Reservation> {
    let resource = state.visible(path).filter(|r| r.kind == KIND)?;
    let body = &resource.body;
    let specific = &body["specificReservation"];
    let properties = &specific["instanceProperties"];
    let accelerators = array_field(properties, "guestAccelerators")
        .iter()
        .map(|a| {
            let kind = str_field(a, "acceleratorType").unwrap_or("");
            let count = a.get("acceleratorCount").and_then(int64).unwrap_or(0);
            (last_segment(kind).to_string(), count.max(0) as u64)
        })
        .collect();
    let count = specific.get("count").and_then(int64).unwrap_or(0);
    let in_use = specific.get("inUseCount").and_then(int64).unwrap_or(0);
    let share = &body["shareSettings"];
    let shared_projects = share["projectMap"]
        .as_object()
        .into_iter()
        .flatten()
        .flat_map(|(key, config)| {
            [Some(key.clone()), str_field(config, "projectId").map(str::to_string)]
        })
        .flatten()
        .collect();
    let status = match resource.state {
        Life::Creating => "CREATING",
        Life::Ready => "READY",
        Life::Deleting => "DELETING",
    };
    Some(Reservation {
        path: path.to_string(),
        id: str_field(body, "id").unwrap_or("").to_string(),
        status: status.to_string(),
        machine_type: last_segment(str_field(properties, "machineType").unwrap_or("")).to_string(),
        accelerators,
        specific_required: body["specificReservationRequired"] == json!(true),
        free: (count - in_use).max(0) as u64,
        share_type: str_field(share, "shareType").unwrap_or("LOCAL").to_string(),
        shared_projects,
    })
}

/// Books `delta` VMs (negative: frees them) on the reservation at `path`, if it is still the one
/// with this `id`: `inUseCount` stays an int64 string between 0 and `count`.
pub fn add_in_use(state: &mut State, path: &str, id: &str, delta: i64) {
    let Some(resource) = state.resources.get_mut(path).filter(|r| r.kind == KIND) else {
        return;
    };
    if str_field(&resource.body, "id") != Some(id) {
        return;
    }
    let specific = &mut resource.body["specificReservation"];
    let count = specific.get("count").and_then(int64).unwrap_or(0);
    let in_use = specific.get("inUseCount").and_then(int64).unwrap_or(0);
    let next = (in_use + delta).clamp(0, count.max(0));
    specific["inUseCount"] = json!(next.to_string());
}

/// The error Google's JSON front end gives for an enum value it does not know.
fn bad_enum(at: &str, type_name: &str, value: &Value) -> GcpError {
    GcpError::invalid(format!(
        "Invalid value at '{at}' (type.googleapis.com/{type_name}), {value}"
    ))
}

/// An int64 field given as a JSON string (as gcloud sends it) or number.
fn int64(value: &Value) -> Option<i64> {
    match value {
        Value::String(s) => s.parse().ok(),
        other => other.as_i64(),
    }
}

fn text(value: &Value) -> String {
    value
        .as_str()
        .map(str::to_string)
        .unwrap_or_else(|| value.to_string())
}

fn insert(
    world: &mut World,
    cx: &Ctx,
    target: &Target,
    spec: &Map<String, Value>,
) -> GcpResult<Value> {
    let id = world.numeric_id();
    let created = world.compute_timestamp(cx.now);
    build(target, spec, id, created)
}

/// A reservation that exists from the start (a world file's, [`crate::worldspec`]): `spec` is an
/// insert body, checked as an insert's; the reservation is READY at once. Returns its path and
/// body; the caller checks quota and capacity and stores it.
pub fn seed(
    world: &mut World,
    project: &str,
    zone: &str,
    name: &str,
    spec: &Value,
) -> GcpResult<(String, Value)> {
    let target = seed_target(project, zone, name)?;
    let spec = spec.as_object().cloned().unwrap_or_default();
    let id = world.numeric_id();
    let created = world.compute_timestamp(crate::clock::SimTime(0));
    let mut body = build(&target, &spec, id, created)?;
    body["status"] = json!("READY");
    Ok((target.path, body))
}

/// Checks a reservation insert body for `project`, `zone` and `name` as an insert would, without
/// a world (the world file's loader).
pub fn check_spec(project: &str, zone: &str, name: &str, spec: &Value) -> GcpResult<()> {
    let target = seed_target(project, zone, name)?;
    let spec = spec.as_object().cloned().unwrap_or_default();
    build(&target, &spec, "0".into(), String::new()).map(|_| ())
}

fn seed_target(project: &str, zone: &str, name: &str) -> GcpResult<Target> {
    super::check_zone(zone)?;
    super::check_name("resource.name", name)?;
    let path = format!("projects/{project}/zones/{zone}/reservations/{name}");
    Ok(Target {
        project: project.to_string(),
        scope: Scope::Zone(zone.to_string()),
        name: name.to_string(),
        path,
    })
}

/// The reservation an insert body makes, with its `id` and `creationTimestamp`.
fn build(
    target: &Target,
    spec: &Map<String, Value>,
    id: String,
    created: String,
) -> GcpResult<Value> {
    let zone = match &target.scope {
        super::operations::Scope::Zone(z) => z.clone(),
        _ => String::new(),
    };
    let zone_link = target.scope_link().unwrap_or_default();
    if let Some(given) = spec.get("zone").and_then(Value::as_str)
        && last_segment(given) != zone
    {
        return Err(invalid_field(
            "resource.zone",
            given,
            "The zone of the reservation must be the zone of the request.",
        ));
    }
    let specific = specific_reservation(&zone, spec.get("specificReservation"))?;
    let share_settings = share_settings(spec.get("shareSettings"))?;
    let required = match spec.get("specificReservationRequired") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(other) => {
            return Err(invalid_field(
                "resource.specificReservationRequired",
                &text(other),
                "",
            ));
        }
    };
    let deployment = match spec.get("deploymentType") {
        None | Some(Value::Null) => None,
        Some(Value::String(d)) if d == "DENSE" || d == "DEPLOYMENT_TYPE_UNSPECIFIED" => {
            Some(d.clone())
        }
        Some(other) => {
            return Err(bad_enum(
                "reservation_resource.deployment_type",
                "compute.Reservation.DeploymentType",
                other,
            ));
        }
    };
    let mut reservation = json!({
        "kind": "compute#reservation",
        "id": id,
        "creationTimestamp": created,
        "selfLink": link(&target.path),
        "zone": zone_link,
        "name": target.name,
    });
    if let Some(description) = spec.get("description").filter(|d| !d.is_null()) {
        reservation["description"] = description.clone();
    }
    reservation["specificReservation"] = specific;
    reservation["specificReservationRequired"] = json!(required);
    reservation["status"] = json!("CREATING");
    reservation["shareSettings"] = share_settings;
    if let Some(deployment) = deployment {
        reservation["deploymentType"] = json!(deployment);
    }
    Ok(reservation)
}

/// `specificReservation`: the VM shape and how many.
fn specific_reservation(zone: &str, given: Option<&Value>) -> GcpResult<Value> {
    const AT: &str = "resource.specificReservation";
    let Some(given) = given.filter(|v| !v.is_null()) else {
        return Err(required_field(AT));
    };
    if let Some(template) = str_field(given, "sourceInstanceTemplate") {
        return Err(invalid_field(
            &format!("{AT}.sourceInstanceTemplate"),
            template,
            "The referenced instance template resource cannot be found.",
        ));
    }
    let count = match given.get("count").filter(|v| !v.is_null()) {
        None => return Err(required_field(&format!("{AT}.count"))),
        Some(value) => match int64(value) {
            Some(n) if n >= 1 => n,
            _ => {
                return Err(invalid_field(
                    &format!("{AT}.count"),
                    &text(value),
                    "Must be greater than or equal to 1.",
                ));
            }
        },
    };
    let Some(properties) = given.get("instanceProperties").filter(|v| v.is_object()) else {
        return Err(required_field(&format!("{AT}.instanceProperties")));
    };
    Ok(json!({
        "instanceProperties": instance_properties(zone, properties)?,
        "count": count.to_string(),
        "inUseCount": "0",
    }))
}

/// `instanceProperties`: a machine type the zone offers, its accelerators, local SSDs.
fn instance_properties(zone: &str, given: &Value) -> GcpResult<Value> {
    const AT: &str = "resource.specificReservation.instanceProperties";
    let machine_field = format!("{AT}.machineType");
    let machine_given = str_field(given, "machineType")
        .filter(|m| !m.is_empty())
        .ok_or_else(|| required_field(&machine_field))?;
    let machine = last_segment(machine_given);
    if !geo::zone_offers(zone, machine) {
        return Err(invalid_field(
            &machine_field,
            machine_given,
            &format!("Machine type with name '{machine}' does not exist in zone '{zone}'."),
        ));
    }
    let mut out = json!({ "machineType": machine });
    let accelerators = array_field(given, "guestAccelerators");
    if !accelerators.is_empty() {
        let required = geo::required_accelerator(machine);
        let mut normalized = Vec::new();
        for (i, accelerator) in accelerators.iter().enumerate() {
            let field = |f: &str| format!("{AT}.guestAccelerators[{i}].{f}");
            let kind = str_field(accelerator, "acceleratorType")
                .filter(|k| !k.is_empty())
                .ok_or_else(|| required_field(&field("acceleratorType")))?;
            let count = accelerator
                .get("acceleratorCount")
                .and_then(int64)
                .unwrap_or(0);
            if count < 1 {
                return Err(invalid_field(
                    &field("acceleratorCount"),
                    &count.to_string(),
                    "Must be greater than or equal to 1.",
                ));
            }
            let name = last_segment(kind);
            match required {
                Some((wanted, _)) if name != wanted => {
                    return Err(GcpError::invalid(format!(
                        "[{name}, {machine}] features are not compatible for creating instance."
                    )));
                }
                Some((_, wanted)) if count != i64::from(wanted) => {
                    return Err(invalid_field(
                        &field("acceleratorCount"),
                        &count.to_string(),
                        &format!(
                            "Machine type {machine} requires {wanted} accelerators of type {name}."
                        ),
                    ));
                }
                Some(_) => {}
                None => {
                    return Err(GcpError::invalid(format!(
                        "[{name}, {machine}] features are not compatible for creating instance."
                    )));
                }
            }
            normalized.push(json!({ "acceleratorType": name, "acceleratorCount": count }));
        }
        out["guestAccelerators"] = Value::Array(normalized);
    }
    let ssds = array_field(given, "localSsds");
    if !ssds.is_empty() {
        let mut normalized = Vec::new();
        for (i, ssd) in ssds.iter().enumerate() {
            let field = |f: &str| format!("{AT}.localSsds[{i}].{f}");
            let size = match ssd.get("diskSizeGb").filter(|v| !v.is_null()) {
                None => return Err(required_field(&field("diskSizeGb"))),
                Some(value) => match int64(value) {
                    Some(n) if n >= 1 => n,
                    _ => {
                        return Err(invalid_field(
                            &field("diskSizeGb"),
                            &text(value),
                            "Must be greater than or equal to 1.",
                        ));
                    }
                },
            };
            let interface = match ssd.get("interface") {
                None | Some(Value::Null) => "SCSI".to_string(),
                Some(Value::String(i)) if i == "NVME" || i == "SCSI" => i.clone(),
                Some(other) => {
                    return Err(bad_enum(
                        "reservation_resource.specific_reservation.instance_properties.local_ssds.interface",
                        "compute.AllocationSpecificSKUAllocationAllocatedInstancePropertiesReservedDisk.Interface",
                        other,
                    ));
                }
            };
            normalized.push(json!({ "diskSizeGb": size.to_string(), "interface": interface }));
        }
        out["localSsds"] = Value::Array(normalized);
    }
    if let Some(platform) = str_field(given, "minCpuPlatform") {
        out["minCpuPlatform"] = json!(platform);
    }
    Ok(out)
}

/// `shareSettings`: `LOCAL` by default (also for `SHARE_TYPE_UNSPECIFIED`); `SPECIFIC_PROJECTS`
/// needs the projects; `ORGANIZATION` is kept as given.
fn share_settings(given: Option<&Value>) -> GcpResult<Value> {
    let Some(given) = given.filter(|v| !v.is_null()) else {
        return Ok(json!({ "shareType": "LOCAL" }));
    };
    let projects = given
        .get("projectMap")
        .and_then(Value::as_object)
        .filter(|m| !m.is_empty());
    match given.get("shareType") {
        None | Some(Value::Null) => Ok(json!({ "shareType": "LOCAL" })),
        Some(Value::String(t)) if t == "LOCAL" || t == "SHARE_TYPE_UNSPECIFIED" => match projects {
            None => Ok(json!({ "shareType": "LOCAL" })),
            Some(_) => Err(invalid_field(
                "resource.shareSettings.projectMap",
                "",
                "Projects cannot be specified for a reservation that is not shared.",
            )),
        },
        Some(Value::String(t)) if t == "SPECIFIC_PROJECTS" => {
            let Some(projects) = projects else {
                return Err(required_field("resource.shareSettings.projectMap"));
            };
            let map: Map<String, Value> = projects
                .iter()
                .map(|(key, config)| {
                    let id = str_field(config, "projectId").unwrap_or(key);
                    (key.clone(), json!({ "projectId": id }))
                })
                .collect();
            Ok(json!({ "shareType": "SPECIFIC_PROJECTS", "projectMap": map }))
        }
        Some(Value::String(t)) if t == "ORGANIZATION" => Ok(json!({ "shareType": "ORGANIZATION" })),
        Some(other) => Err(bad_enum(
            "reservation_resource.share_settings.share_type",
            "compute.ShareSettings.ShareType",
            other,
        )),
    }
}
