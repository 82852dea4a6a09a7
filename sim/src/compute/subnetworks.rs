//! Subnetworks (`projects/p/regions/r/subnetworks`): insert, get, list, aggregated list, patch
//! (optimistic locking on `fingerprint`), `expandIpCidrRange`, delete.
//!
//! Range checks follow Compute: a valid IPv4 CIDR with no host bits, a prefix between /4 and /29,
//! no overlap between any primary or secondary range of the subnetworks of one VPC network (in any
//! region), unique secondary range names, no overlap with 10.128.0.0/9 in auto-mode networks, and
//! secondary ranges that are only ever added or removed, never changed.
//!
//! A subnetwork that a VM (a GKE node: [`super::instances`]) has a NIC in, or that a router's NAT
//! lists, cannot be deleted: the DELETE itself is refused with 400
//! `resourceInUseByAnotherResource`, "The subnetwork resource 'projects/…/regions/…/subnetworks/…'
//! is already being used by 'projects/…/zones/…/instances/…'" (captured in
//! genevieve/leftovers#6, where a client's delete of a subnet still holding a VM fails at once
//! with `googleapi: Error 400: … resourceInUseByAnotherResource`, not in an operation).

use super::cidr::{Cidr, CidrError};
use super::collection::{self, Collection, Hooks, Placement, Quota, Target};
use super::networks::AUTO_MODE_RANGE;
use super::operations::Verb;
use super::{
    Kind, Resource, State as ComputeState, array_field, body_object, check_name, fingerprint,
    invalid_field, last_segment, link, referenced_network, relative_path, required_field,
    same_bytes, str_field,
};
use crate::error::{GcpError, GcpResult};
use crate::http::Query;
use crate::shared::Shared;
use crate::shared::Ctx;
use crate::world::World;
use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::response::Response;
use axum::routing::post;
use serde_json::{Map, Value, json};
use std::sync::Arc;

/// The `subnetworks` collection.
pub static COLLECTION: Collection = Collection {
    name: "Subnetwork",
    word: "subnetwork",
    segment: "subnetworks",
    in_use_word: "subnetwork",
    placement: Placement::Regional,
    quota: Quota {
        metric: "SUBNETWORKS",
        limit: 175.0,
        limit_name: "SUBNETWORKS-per-project",
        regional: false,
    },
    build: insert,
    hooks: Hooks {
        patch: Some(patch),
        user_of,
        on_ready,
        on_removed,
        routes,
        ..Hooks::NONE
    },
};

pub const KIND: Kind = Kind(COLLECTION.name);

/// `expandIpCidrRange`.
fn routes() -> Router<Arc<Shared>> {
    Router::new().route(
        &format!("{}/expandIpCidrRange", COLLECTION.item_route()),
        post(expand),
    )
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
        if other.kind != KIND
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

fn insert(
    world: &mut World,
    cx: &Ctx,
    target: &Target,
    spec: &Map<String, Value>,
) -> GcpResult<Value> {
    let body = Value::Object(spec.clone());
    let (project, region, name, path) = (&target.project, target.region(), &target.name, &target.path);
    let network_ref =
        str_field(&body, "network").ok_or_else(|| required_field("resource.network"))?;
    let network_path = referenced_network(&world.compute, project, network_ref)?;
    super::network_profiles::check_subnetwork(world, &network_path, region, spec)?;
    let primary_text =
        str_field(&body, "ipCidrRange").ok_or_else(|| required_field("resource.ipCidrRange"))?;
    let primary = parse_range("resource.ipCidrRange", primary_text)?;
    let secondaries = array_field(&body, "secondaryIpRanges");
    let mut ranges = vec![Range {
        field: "resource.ipCidrRange".into(),
        cidr: primary,
    }];
    ranges.extend(secondary_ranges(secondaries)?);
    check_ranges(&world.compute, &network_path, path, name, region, &ranges)?;
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
    subnet["region"] = json!(target.scope_link());
    subnet["selfLink"] = json!(link(path));
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
    Ok(subnet)
}

/// A changed subnetwork after checking its new ranges, with its new gateway and fingerprint.
fn checked(world: &World, target: &Target, mut next: Value) -> GcpResult<Value> {
    let network_path = str_field(&next, "network")
        .and_then(relative_path)
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
    if let Some(map) = next.as_object() {
        super::network_profiles::check_subnetwork(world, &network_path, target.region(), map)?;
    }
    check_ranges(
        &world.compute,
        &network_path,
        &target.path,
        &name,
        target.region(),
        &ranges,
    )?;
    if let Some(map) = next.as_object_mut() {
        map.insert(
            "gatewayAddress".into(),
            json!(primary.gateway().to_string()),
        );
    }
    next["fingerprint"] = json!(fingerprint(&next));
    Ok(next)
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
fn patch(
    world: &mut World,
    _cx: &Ctx,
    target: &Target,
    current: Value,
    body: Map<String, Value>,
) -> GcpResult<Value> {
    match body.get("fingerprint").and_then(Value::as_str) {
        None | Some("") => return Err(required_field("resource.fingerprint")),
        Some(given) if !same_bytes(given, str_field(&current, "fingerprint")) => {
            return Err(GcpError::condition_not_met(
                "Supplied fingerprint does not match current metadata fingerprint.",
            ));
        }
        Some(_) => {}
    }
    let mut next = current.clone();
    if body.contains_key("secondaryIpRanges") {
        let wanted = array_field(&Value::Object(body.clone()), "secondaryIpRanges").to_vec();
        let secondaries =
            patched_secondaries(array_field(&current, "secondaryIpRanges"), &wanted)?;
        let map = next
            .as_object_mut()
            .ok_or_else(|| super::not_found(&target.path))?;
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
    checked(world, target, next)
}

/// `expandIpCidrRange`: the new primary range must strictly contain the current one.
async fn expand(
    State(shared): State<Arc<Shared>>,
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
        Verb::Special("expandIpCidrRange"),
        expanded,
    )
}

fn expanded(
    world: &mut World,
    _cx: &Ctx,
    target: &Target,
    current: Value,
    body: Map<String, Value>,
) -> GcpResult<Value> {
    let body = Value::Object(body);
    let text = str_field(&body, "ipCidrRange").ok_or_else(|| required_field("ipCidrRange"))?;
    let wanted = parse_range("ipCidrRange", text)?;
    let old_text = str_field(&current, "ipCidrRange").unwrap_or("");
    let old = Cidr::parse(old_text).map_err(|_| super::not_found(&target.path))?;
    if !(wanted.contains(old) && wanted.prefix < old.prefix) {
        return Err(invalid_field(
            "ipCidrRange",
            text,
            &format!(
                "The new range must be a superset of the current range {old_text} of subnetwork '{}'.",
                target.name
            ),
        ));
    }
    let mut next = current.clone();
    next["ipCidrRange"] = json!(wanted.to_string());
    checked(world, target, next)
}

/// An auto-mode subnetwork is used by its network; any subnetwork by a VM with a NIC in it (a GKE
/// node), then by a router whose NAT lists it.
fn user_of(world: &World, path: &str) -> Option<String> {
    let state = &world.compute;
    let subnet = state.resources.get(path)?;
    if subnet.auto_created {
        let network = str_field(&subnet.body, "network").and_then(relative_path)?;
        return Some(network.to_string());
    }
    if let Some(vm) = crate::instance_groups::vms(world)
        .iter()
        .find(|vm| vm.nics.iter().any(|nic| nic.subnetwork == path))
    {
        return Some(super::instances::path_of(vm));
    }
    state
        .resources
        .iter()
        .find(|(_, r)| {
            r.kind == super::routers::KIND
                && array_field(&r.body, "nats").iter().any(|nat| {
                    array_field(nat, "subnetworks")
                        .iter()
                        .filter_map(|s| str_field(s, "name"))
                        .any(|name| relative_path(name) == Some(path))
                })
        })
        .map(|(p, _)| p.clone())
}

/// A created subnetwork joins its network's `subnetworks[]`.
fn on_ready(world: &mut World, path: &str) {
    if let Some(subnet) = world.compute.resources.get(path) {
        let body = subnet.body.clone();
        attach_subnetwork(&mut world.compute, &body, true);
    }
}

/// A deleted subnetwork leaves its network's `subnetworks[]`.
fn on_removed(world: &mut World, _path: &str, subnet: &Resource) {
    attach_subnetwork(&mut world.compute, &subnet.body, false);
}

/// Adds (or removes) a subnetwork's URL to (from) its network's `subnetworks[]`.
fn attach_subnetwork(state: &mut ComputeState, subnetwork: &Value, add: bool) {
    let Some(self_link) = str_field(subnetwork, "selfLink").map(str::to_string) else {
        return;
    };
    let Some(network_path) = str_field(subnetwork, "network")
        .and_then(relative_path)
        .map(str::to_string)
    else {
        return;
    };
    let Some(network) = state.resources.get_mut(&network_path) else {
        return;
    };
    let Some(map) = network.body.as_object_mut() else {
        return;
    };
    let mut links: Vec<Value> = map
        .get("subnetworks")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    links.retain(|l| l.as_str() != Some(self_link.as_str()));
    if add {
        links.push(Value::String(self_link));
    }
    if links.is_empty() {
        map.remove("subnetworks");
    } else {
        map.insert("subnetworks".into(), Value::Array(links));
    }
}
