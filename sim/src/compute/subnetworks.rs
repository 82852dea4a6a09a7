//! Subnetworks (`projects/p/regions/r/subnetworks`): insert, get, list, aggregated list, patch
//! (optimistic locking on `fingerprint`), `expandIpCidrRange`, delete.
//!
//! Range checks follow Compute: a valid IPv4 CIDR with no host bits, a prefix between /4 and /29,
//! no overlap between any primary or secondary range of the subnetworks of one VPC network (in any
//! region), unique secondary range names, no overlap with 10.128.0.0/9 in auto-mode networks, and
//! secondary ranges that are only ever added or removed, never changed.

use super::cidr::{Cidr, CidrError};
use super::networks::AUTO_MODE_RANGE;
use super::operations::{self, Effect, Scope, Start, Verb};
use super::{
    Kind, Life, State as ComputeState, aggregated_resources, already_exists, array_field,
    body_name, body_object, check_name, check_region, delete_resource, fingerprint, get_resource,
    invalid_field, last_segment, link, list_resources, not_found, not_ready, referenced_network,
    required_field, str_field,
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
    let base = "/compute/v1/projects/{project}/regions/{region}/subnetworks";
    Router::new()
        .route(base, post(insert).get(list))
        .route(
            &format!("{base}/{{subnetwork}}"),
            get(get_one).delete(delete).patch(patch),
        )
        .route(
            &format!("{base}/{{subnetwork}}/expandIpCidrRange"),
            post(expand),
        )
        .route(
            "/compute/v1/projects/{project}/aggregated/subnetworks",
            get(aggregated),
        )
}

fn path_of(project: &str, region: &str, name: &str) -> String {
    format!("projects/{project}/regions/{region}/subnetworks/{name}")
}

/// Parses a subnetwork range given in `field`, with Compute's messages.
fn parse_range(field: &str, text: &str) -> GcpResult<Cidr> {
    let cidr = match Cidr::parse(text) {
        Ok(cidr) => cidr,
        Err(CidrError::Malformed) => {
            return Err(invalid_field(
                field,
                text,
                &format!("Invalid IPCidrRange: {text}."),
            ));
        }
        Err(CidrError::HostBitsSet) => {
            return Err(invalid_field(
                field,
                text,
                &format!(
                    "Invalid IPCidrRange: {text}. The address range must not have host bits set."
                ),
            ));
        }
    };
    if !(4..=29).contains(&cidr.prefix) {
        return Err(invalid_field(
            field,
            text,
            &format!("Invalid IPCidrRange: {text}. The prefix length must be between /4 and /29."),
        ));
    }
    Ok(cidr)
}

/// One range of a subnetwork being checked: the request field it came from and its value.
struct Range {
    field: String,
    cidr: Cidr,
}

/// Checks the ranges of the subnetwork at `self_path` against each other and against every other
/// subnetwork of the same network.
fn check_ranges(
    state: &ComputeState,
    network_path: &str,
    self_path: &str,
    self_name: &str,
    region: &str,
    ranges: &[Range],
) -> GcpResult<()> {
    let conflict = |range: &Range, name: &str, region: &str| {
        invalid_field(
            &range.field,
            &range.cidr.to_string(),
            &format!(
                "Invalid IPCidrRange: {} conflicts with existing subnetwork '{name}' in region '{region}'.",
                range.cidr
            ),
        )
    };
    for (i, range) in ranges.iter().enumerate() {
        if ranges[..i].iter().any(|r| r.cidr.overlaps(range.cidr)) {
            return Err(conflict(range, self_name, region));
        }
    }
    let network = state.resources.get(network_path);
    if network.is_some_and(|n| n.body["autoCreateSubnetworks"].as_bool() == Some(true)) {
        let auto = Cidr::parse(AUTO_MODE_RANGE).map_err(|_| GcpError::invalid("auto range"))?;
        let is_auto_subnet = state
            .resources
            .get(self_path)
            .is_some_and(|r| r.auto_created);
        if let Some(range) = ranges
            .iter()
            .find(|r| !is_auto_subnet && r.cidr.overlaps(auto))
        {
            return Err(invalid_field(
                &range.field,
                &range.cidr.to_string(),
                &format!(
                    "Extended subnetworks in auto subnet mode networks cannot overlap with {AUTO_MODE_RANGE}."
                ),
            ));
        }
    }
    let network_link = link(network_path);
    for (path, other) in &state.resources {
        if other.kind != Kind::Subnetwork
            || path == self_path
            || str_field(&other.body, "network") != Some(network_link.as_str())
        {
            continue;
        }
        let mut theirs: Vec<&str> = str_field(&other.body, "ipCidrRange").into_iter().collect();
        theirs.extend(
            array_field(&other.body, "secondaryIpRanges")
                .iter()
                .filter_map(|s| str_field(s, "ipCidrRange")),
        );
        for text in theirs {
            let Ok(cidr) = Cidr::parse(text) else {
                continue;
            };
            if let Some(range) = ranges.iter().find(|r| r.cidr.overlaps(cidr)) {
                let name = str_field(&other.body, "name").unwrap_or("");
                let region = str_field(&other.body, "region")
                    .map(last_segment)
                    .unwrap_or("");
                return Err(conflict(range, name, region));
            }
        }
    }
    Ok(())
}

/// Validates `secondaryIpRanges` (names and ranges) and returns them as checked ranges.
fn secondary_ranges(secondaries: &[Value]) -> GcpResult<Vec<Range>> {
    let mut names: Vec<&str> = Vec::new();
    let mut out = Vec::new();
    for (i, secondary) in secondaries.iter().enumerate() {
        let name_field = format!("resource.secondaryIpRanges[{i}].rangeName");
        let name = str_field(secondary, "rangeName").ok_or_else(|| required_field(&name_field))?;
        check_name(&name_field, name)?;
        if names.contains(&name) {
            return Err(invalid_field(
                &name_field,
                name,
                "The secondary range name must be unique within the subnetwork.",
            ));
        }
        names.push(name);
        let range_field = format!("resource.secondaryIpRanges[{i}].ipCidrRange");
        let text =
            str_field(secondary, "ipCidrRange").ok_or_else(|| required_field(&range_field))?;
        out.push(Range {
            cidr: parse_range(&range_field, text)?,
            field: range_field,
        });
    }
    Ok(out)
}

fn normalized_secondaries(secondaries: &[Value], ranges: &[Range]) -> Value {
    Value::Array(
        secondaries
            .iter()
            .zip(ranges)
            .map(|(s, r)| json!({ "rangeName": s["rangeName"], "ipCidrRange": r.cidr.to_string() }))
            .collect(),
    )
}

async fn insert(
    State(shared): State<Arc<Shared>>,
    Path((project, region)): Path<(String, String)>,
    query: Query,
    body: Bytes,
) -> GcpResult<Response> {
    check_region(&region)?;
    let body = Value::Object(body_object(&body)?);
    shared.with_world(|world, cx| {
        if let Some(op) = operations::replay(world, &project, &query) {
            return Ok(http::json(op));
        }
        let name = body_name(&body)?;
        let path = path_of(&project, &region, &name);
        if world.compute.resources.contains_key(&path) {
            return Err(already_exists(&path));
        }
        let network_ref =
            str_field(&body, "network").ok_or_else(|| required_field("resource.network"))?;
        let network_path = referenced_network(&world.compute, &project, network_ref)?;
        let primary_text = str_field(&body, "ipCidrRange")
            .ok_or_else(|| required_field("resource.ipCidrRange"))?;
        let primary = parse_range("resource.ipCidrRange", primary_text)?;
        let secondaries = array_field(&body, "secondaryIpRanges");
        let mut ranges = vec![Range {
            field: "resource.ipCidrRange".into(),
            cidr: primary,
        }];
        ranges.extend(secondary_ranges(secondaries)?);
        check_ranges(
            &world.compute,
            &network_path,
            &path,
            &name,
            &region,
            &ranges,
        )?;
        let id = world.numeric_id();
        let mut subnet = json!({
            "kind": "compute#subnetwork",
            "id": id,
            "creationTimestamp": world.compute_timestamp(cx.now),
            "name": name,
        });
        if let Some(description) = body.get("description").filter(|d| !d.is_null()) {
            subnet["description"] = description.clone();
        }
        subnet["network"] = json!(link(&network_path));
        subnet["ipCidrRange"] = json!(primary.to_string());
        subnet["gatewayAddress"] = json!(primary.gateway().to_string());
        subnet["region"] = json!(link(&format!("projects/{project}/regions/{region}")));
        subnet["selfLink"] = json!(link(&path));
        subnet["privateIpGoogleAccess"] =
            json!(body["privateIpGoogleAccess"].as_bool().unwrap_or(false));
        if !secondaries.is_empty() {
            subnet["secondaryIpRanges"] = normalized_secondaries(secondaries, &ranges[1..]);
        }
        for key in ["logConfig", "enableFlowLogs"] {
            if let Some(value) = body.get(key).filter(|v| !v.is_null()) {
                subnet[key] = value.clone();
            }
        }
        subnet["stackType"] = body.get("stackType").cloned().unwrap_or(json!("IPV4_ONLY"));
        subnet["purpose"] = body.get("purpose").cloned().unwrap_or(json!("PRIVATE"));
        subnet["privateIpv6GoogleAccess"] = json!("DISABLE_GOOGLE_ACCESS");
        subnet["fingerprint"] = json!(fingerprint(&subnet));
        let op = operations::start(
            world,
            cx,
            Start {
                project: &project,
                scope: Scope::Region(region.clone()),
                kind: Kind::Subnetwork,
                verb: Verb::Insert,
                target: path,
                target_id: id,
                effect: Effect::Create(subnet),
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
        Kind::Subnetwork,
        &format!("projects/{project}/regions/{region}/subnetworks"),
    )
}

async fn aggregated(
    State(shared): State<Arc<Shared>>,
    Path(project): Path<String>,
) -> GcpResult<Response> {
    aggregated_resources(&shared, Kind::Subnetwork, &project)
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
        Kind::Subnetwork,
        &path_of(&project, &region, &name),
    )
}

/// Starts a change of a subnetwork after checking its new ranges.
#[allow(clippy::too_many_arguments)]
fn start_change(
    world: &mut crate::world::World,
    cx: &crate::world::Ctx,
    project: &str,
    region: &str,
    path: &str,
    mut next: Value,
    verb: Verb,
    query: &Query,
) -> GcpResult<Response> {
    let network_path = str_field(&next, "network")
        .and_then(super::relative_path)
        .unwrap_or("")
        .to_string();
    let name = str_field(&next, "name").unwrap_or("").to_string();
    let primary = parse_range(
        "resource.ipCidrRange",
        str_field(&next, "ipCidrRange").unwrap_or(""),
    )?;
    let mut ranges = vec![Range {
        field: "resource.ipCidrRange".into(),
        cidr: primary,
    }];
    ranges.extend(secondary_ranges(array_field(&next, "secondaryIpRanges"))?);
    check_ranges(&world.compute, &network_path, path, &name, region, &ranges)?;
    if let Some(map) = next.as_object_mut() {
        map.insert(
            "gatewayAddress".into(),
            json!(primary.gateway().to_string()),
        );
    }
    next["fingerprint"] = json!(fingerprint(&next));
    let target_id = str_field(&next, "id").unwrap_or("").to_string();
    let op = operations::start(
        world,
        cx,
        Start {
            project,
            scope: Scope::Region(region.to_string()),
            kind: Kind::Subnetwork,
            verb,
            target: path.to_string(),
            target_id,
            effect: Effect::Replace(next),
            request_id: query.get("requestId"),
        },
    )?;
    Ok(http::json(op))
}

/// The secondary ranges a patch asks for: ranges are added or removed, never both at once, and an
/// existing range keeps its CIDR.
fn patched_secondaries(current: &[Value], wanted: &[Value]) -> GcpResult<Vec<Value>> {
    let range_of = |list: &[Value], name: &str| {
        list.iter()
            .find(|s| str_field(s, "rangeName") == Some(name))
            .and_then(|s| str_field(s, "ipCidrRange"))
            .map(str::to_string)
    };
    for (i, secondary) in wanted.iter().enumerate() {
        let Some(name) = str_field(secondary, "rangeName") else {
            continue;
        };
        if let (Some(old), Some(new)) =
            (range_of(current, name), str_field(secondary, "ipCidrRange"))
            && old != new
        {
            return Err(invalid_field(
                &format!("resource.secondaryIpRanges[{i}].ipCidrRange"),
                new,
                &format!("Existing secondary range cannot be modified: {new}."),
            ));
        }
    }
    let names = |list: &[Value]| -> Vec<String> {
        list.iter()
            .filter_map(|s| str_field(s, "rangeName").map(str::to_string))
            .collect()
    };
    let added: Vec<String> = wanted
        .iter()
        .filter(|s| {
            str_field(s, "rangeName").is_some_and(|n| !names(current).contains(&n.to_string()))
        })
        .filter_map(|s| str_field(s, "ipCidrRange").map(str::to_string))
        .collect();
    let removed: Vec<String> = current
        .iter()
        .filter(|s| {
            str_field(s, "rangeName").is_some_and(|n| !names(wanted).contains(&n.to_string()))
        })
        .filter_map(|s| str_field(s, "ipCidrRange").map(str::to_string))
        .collect();
    if !added.is_empty() && !removed.is_empty() {
        return Err(invalid_field(
            "resource.secondaryIpRanges",
            "",
            &format!(
                "Cannot add and remove secondary IP ranges in the same request. Added ranges: [{}]. Removed ranges: [{}].",
                added.join(", "),
                removed.join(", ")
            ),
        ));
    }
    Ok(wanted.to_vec())
}

/// PATCH: needs the current `fingerprint`; changes `privateIpGoogleAccess`, `secondaryIpRanges`,
/// flow logs and the IPv6 settings.
async fn patch(
    State(shared): State<Arc<Shared>>,
    Path((project, region, name)): Path<(String, String, String)>,
    query: Query,
    body: Bytes,
) -> GcpResult<Response> {
    check_region(&region)?;
    let body: Map<String, Value> = body_object(&body)?;
    shared.with_world(|world, cx| {
        if let Some(op) = operations::replay(world, &project, &query) {
            return Ok(http::json(op));
        }
        let path = path_of(&project, &region, &name);
        let current = world
            .compute
            .visible(&path)
            .ok_or_else(|| not_found(&path))?;
        if current.state == Life::Deleting {
            return Err(not_ready(&path));
        }
        match body.get("fingerprint").and_then(Value::as_str) {
            None | Some("") => return Err(required_field("resource.fingerprint")),
            Some(given) if Some(given) != str_field(&current.body, "fingerprint") => {
                return Err(GcpError::condition_not_met(
                    "Supplied fingerprint does not match current metadata fingerprint.",
                ));
            }
            Some(_) => {}
        }
        let mut next = current.body.clone();
        if body.contains_key("secondaryIpRanges") {
            let wanted = array_field(&Value::Object(body.clone()), "secondaryIpRanges").to_vec();
            let secondaries =
                patched_secondaries(array_field(&current.body, "secondaryIpRanges"), &wanted)?;
            let map = next.as_object_mut().ok_or_else(|| not_found(&path))?;
            if secondaries.is_empty() {
                map.remove("secondaryIpRanges");
            } else {
                map.insert("secondaryIpRanges".into(), Value::Array(secondaries));
            }
        }
        for key in [
            "privateIpGoogleAccess",
            "logConfig",
            "enableFlowLogs",
            "stackType",
            "ipv6AccessType",
            "privateIpv6GoogleAccess",
            "allowSubnetCidrRoutesOverlap",
        ] {
            if let Some(value) = body.get(key).filter(|v| !v.is_null()) {
                next[key] = value.clone();
            }
        }
        start_change(
            world,
            cx,
            &project,
            &region,
            &path,
            next,
            Verb::Patch,
            &query,
        )
    })
}

/// `expandIpCidrRange`: the new primary range must strictly contain the current one.
async fn expand(
    State(shared): State<Arc<Shared>>,
    Path((project, region, name)): Path<(String, String, String)>,
    query: Query,
    body: Bytes,
) -> GcpResult<Response> {
    check_region(&region)?;
    let body = Value::Object(body_object(&body)?);
    shared.with_world(|world, cx| {
        if let Some(op) = operations::replay(world, &project, &query) {
            return Ok(http::json(op));
        }
        let path = path_of(&project, &region, &name);
        let current = world.compute.visible(&path).ok_or_else(|| not_found(&path))?;
        if current.state == Life::Deleting {
            return Err(not_ready(&path));
        }
        let text = str_field(&body, "ipCidrRange").ok_or_else(|| required_field("ipCidrRange"))?;
        let wanted = parse_range("ipCidrRange", text)?;
        let old_text = str_field(&current.body, "ipCidrRange").unwrap_or("");
        let old = Cidr::parse(old_text).map_err(|_| not_found(&path))?;
        if !(wanted.contains(old) && wanted.prefix < old.prefix) {
            return Err(invalid_field(
                "ipCidrRange",
                text,
                &format!("The new range must be a superset of the current range {old_text} of subnetwork '{name}'."),
            ));
        }
        let mut next = current.body.clone();
        next["ipCidrRange"] = json!(wanted.to_string());
        start_change(
            world,
            cx,
            &project,
            &region,
            &path,
            next,
            Verb::ExpandIpCidrRange,
            &query,
        )
    })
}
