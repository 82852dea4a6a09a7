//! Compute Engine v1: VPC networks, subnetworks, firewall rules, Cloud Routers (with Cloud NAT),
//! resource policies (group placement) and the global/regional/zonal operations that every
//! mutation returns, at Google's paths under `/compute/v1/`.
//!
//! Every resource is stored as its API JSON under its relative path
//! (`projects/p/global/networks/n`) with a lifecycle: an insert reserves the name at once
//! (`Creating`, invisible to GET and list, but a second insert is a 409) and the resource becomes
//! visible when its operation is DONE; a delete marks it `Deleting` and removes it when its operation
//! is DONE; patches are applied when their operation is DONE. Operations get their duration from the
//! latency profile (`compute.<kind>.<insert|delete|patch>`) and are finished lazily by [`tick`].
//!
//! Submodules: [`operations`] (operation records, the operation endpoints, `requestId` replay),
//! `networks`, `subnetworks`, `firewalls`, `routers`, `resource_policies` (one per collection) and
//! `cidr` (IPv4 range arithmetic).

mod cidr;
mod firewalls;
mod networks;
pub mod operations;
mod resource_policies;
mod routers;
mod subnetworks;

use crate::error::{GcpError, GcpResult};
use crate::geo;
use crate::http::{self, Query};
use crate::server::Shared;
use crate::world::{Ctx, World};
use axum::Router;
use axum::response::Response;
use base64::Engine;
use md5::{Digest, Md5};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;
use std::sync::Arc;

/// Canonical prefix of every Compute self link.
pub const API_BASE: &str = "https://www.googleapis.com/compute/v1/";

/// The resource collections this module serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Kind {
    Network,
    Subnetwork,
    Firewall,
    Router,
    ResourcePolicy,
}

impl Kind {
    /// The kind name scripted faults use (`compute.network`).
    pub fn fault_kind(self) -> &'static str {
        match self {
            Kind::Network => "compute.network",
            Kind::Subnetwork => "compute.subnetwork",
            Kind::Firewall => "compute.firewall",
            Kind::Router => "compute.router",
            Kind::ResourcePolicy => "compute.resourcePolicy",
        }
    }

    /// The URL collection segment (`networks`), also the inventory key.
    pub fn collection(self) -> &'static str {
        match self {
            Kind::Network => "networks",
            Kind::Subnetwork => "subnetworks",
            Kind::Firewall => "firewalls",
            Kind::Router => "routers",
            Kind::ResourcePolicy => "resourcePolicies",
        }
    }

    /// The word Compute uses for this kind in "resource in use" messages.
    pub fn resource_word(self) -> &'static str {
        match self {
            Kind::Network => "network",
            Kind::Subnetwork => "subnetwork",
            Kind::Firewall => "firewall",
            Kind::Router => "router",
            Kind::ResourcePolicy => "resource_policy",
        }
    }

    /// `kind` of a list of this resource.
    pub fn list_kind(self) -> &'static str {
        match self {
            Kind::Network => "compute#networkList",
            Kind::Subnetwork => "compute#subnetworkList",
            Kind::Firewall => "compute#firewallList",
            Kind::Router => "compute#routerList",
            Kind::ResourcePolicy => "compute#resourcePolicyList",
        }
    }

    /// `kind` of an aggregated list of this (regional) resource.
    pub fn aggregated_kind(self) -> &'static str {
        match self {
            Kind::Subnetwork => "compute#subnetworkAggregatedList",
            Kind::Router => "compute#routerAggregatedList",
            Kind::ResourcePolicy => "compute#resourcePolicyAggregatedList",
            Kind::Network => "compute#networkAggregatedList",
            Kind::Firewall => "compute#firewallAggregatedList",
        }
    }
}

/// Where a resource is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Life {
    /// Its insert operation is not DONE yet: the name is taken but GET says 404.
    Creating,
    Ready,
    /// Its delete operation is not DONE yet: still visible.
    Deleting,
}

/// One stored resource.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Resource {
    pub kind: Kind,
    pub state: Life,
    /// The API JSON, as GET returns it.
    pub body: Value,
    /// A subnetwork created by an auto-mode network (deleted with it, not on its own).
    #[serde(default)]
    pub auto_created: bool,
}

/// Everything this API holds.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct State {
    /// Resources by relative path (`projects/p/regions/r/subnetworks/s`).
    pub resources: BTreeMap<String, Resource>,
    /// Operations by relative path (`projects/p/global/operations/operation-...`).
    pub operations: BTreeMap<String, operations::Operation>,
    /// `project/requestId` → operation path, for idempotent retries.
    pub request_ids: BTreeMap<String, String>,
    /// Simulated time of the last tick: unfinished operations are RUNNING once it passes their
    /// start.
    #[serde(default)]
    pub last_tick: crate::clock::SimTime,
}

/// Routes of this API (full paths, including the simulator's prefix).
pub fn router() -> Router<Arc<Shared>> {
    Router::new()
        .merge(networks::router())
        .merge(subnetworks::router())
        .merge(firewalls::router())
        .merge(routers::router())
        .merge(resource_policies::router())
        .merge(operations::router())
}

/// Finishes due operations; returns true if anything changed.
pub fn tick(world: &mut World, cx: &Ctx) -> bool {
    operations::tick(world, cx)
}

/// This API's part of the admin inventory: every resource by kind, and every operation.
pub fn inventory(world: &World) -> Value {
    let mut out = Map::new();
    for kind in [
        Kind::Network,
        Kind::Subnetwork,
        Kind::Firewall,
        Kind::Router,
        Kind::ResourcePolicy,
    ] {
        let items: Vec<Value> = world
            .compute
            .resources
            .iter()
            .filter(|(_, r)| r.kind == kind)
            .map(|(path, r)| {
                json!({
                    "name": r.body["name"],
                    "path": path,
                    "selfLink": r.body["selfLink"],
                    "state": format!("{:?}", r.state).to_uppercase(),
                })
            })
            .collect();
        out.insert(kind.collection().to_string(), Value::Array(items));
    }
    let mut ops: Vec<&operations::Operation> = world.compute.operations.values().collect();
    ops.sort_by_key(|o| o.seq);
    let ops: Vec<Value> = ops
        .into_iter()
        .map(|o| {
            let rendered = o.render(world);
            json!({
                "name": rendered["name"],
                "operationType": rendered["operationType"],
                "status": rendered["status"],
                "targetLink": rendered["targetLink"],
                "selfLink": rendered["selfLink"],
                "error": rendered.get("error").cloned().unwrap_or(Value::Null),
            })
        })
        .collect();
    out.insert("operations".into(), Value::Array(ops));
    Value::Object(out)
}

impl State {
    /// A resource that exists (its insert finished), whether or not it is being deleted.
    pub fn visible(&self, path: &str) -> Option<&Resource> {
        self.resources
            .get(path)
            .filter(|r| r.state != Life::Creating)
    }

    /// Visible resources of `kind` whose path starts with `prefix`, in name order.
    pub fn visible_under<'a>(
        &'a self,
        kind: Kind,
        prefix: &'a str,
    ) -> impl Iterator<Item = (&'a String, &'a Resource)> + 'a {
        self.resources
            .range(prefix.to_string()..)
            .take_while(move |(path, _)| path.starts_with(prefix))
            .filter(move |(_, r)| r.kind == kind && r.state != Life::Creating)
    }

    /// The network `name` of `project` as its API resource, if it exists (its insert finished).
    /// Used by GKE and Filestore to check references.
    pub fn network(&self, project: &str, name: &str) -> Option<&Value> {
        self.visible(&format!("projects/{project}/global/networks/{name}"))
            .map(|r| &r.body)
    }

    /// The subnetwork `name` in `region`, if it exists.
    pub fn subnetwork(&self, project: &str, region: &str, name: &str) -> Option<&Value> {
        self.visible(&format!(
            "projects/{project}/regions/{region}/subnetworks/{name}"
        ))
        .map(|r| &r.body)
    }

    /// The resource policy `name` in `region`, if it exists.
    pub fn resource_policy(&self, project: &str, region: &str, name: &str) -> Option<&Value> {
        self.visible(&format!(
            "projects/{project}/regions/{region}/resourcePolicies/{name}"
        ))
        .map(|r| &r.body)
    }
}

// ---------------------------------------------------------------------------------------------
// Links, references and the errors Compute answers with.

/// The canonical URL of a relative path.
pub fn link(path: &str) -> String {
    format!("{API_BASE}{path}")
}

/// The relative path (`projects/...`) of a Compute URL or relative path, if it has one.
pub fn relative_path(reference: &str) -> Option<&str> {
    if reference.starts_with("projects/") {
        return Some(reference);
    }
    // Any URL form: `https://www.googleapis.com/compute/v1/projects/...`, the
    // `compute.googleapis.com` form, or an endpoint override (gcloud builds references from it).
    if !reference.contains("://") {
        return None;
    }
    reference.find("/projects/").map(|at| &reference[at + 1..])
}

/// Resolves a network reference (URL, `projects/p/global/networks/n`, `global/networks/n` or a
/// bare name) to its relative path.
pub fn network_path(project: &str, reference: &str) -> Option<String> {
    if let Some(path) = relative_path(reference) {
        let parts: Vec<&str> = path.split('/').collect();
        return match parts.as_slice() {
            ["projects", _, "global", "networks", name] if !name.is_empty() => {
                Some(path.to_string())
            }
            _ => None,
        };
    }
    match reference.split('/').collect::<Vec<_>>().as_slice() {
        ["global", "networks", name] if !name.is_empty() => {
            Some(format!("projects/{project}/global/networks/{name}"))
        }
        [name] if !name.is_empty() => Some(format!("projects/{project}/global/networks/{name}")),
        _ => None,
    }
}

/// Resolves a subnetwork reference to its relative path (bare names are taken in `region`).
pub fn subnetwork_path(project: &str, region: &str, reference: &str) -> Option<String> {
    if let Some(path) = relative_path(reference) {
        let parts: Vec<&str> = path.split('/').collect();
        return match parts.as_slice() {
            ["projects", _, "regions", _, "subnetworks", name] if !name.is_empty() => {
                Some(path.to_string())
            }
            _ => None,
        };
    }
    match reference.split('/').collect::<Vec<_>>().as_slice() {
        ["regions", r, "subnetworks", name] if !name.is_empty() => {
            Some(format!("projects/{project}/regions/{r}/subnetworks/{name}"))
        }
        [name] if !name.is_empty() => Some(format!(
            "projects/{project}/regions/{region}/subnetworks/{name}"
        )),
        _ => None,
    }
}

/// The last segment of a path or URL.
pub fn last_segment(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// 404 `notFound`: `The resource 'projects/p/global/networks/x' was not found`.
pub fn not_found(path: &str) -> GcpError {
    GcpError::not_found(format!("The resource '{path}' was not found"))
}

/// 409 `alreadyExists`.
pub fn already_exists(path: &str) -> GcpError {
    GcpError::already_exists(format!("The resource '{path}' already exists"))
}

/// 400 `invalid`: `Invalid value for field 'F': 'V'. WHY`.
pub fn invalid_field(field: &str, value: &str, why: &str) -> GcpError {
    let message = if why.is_empty() {
        format!("Invalid value for field '{field}': '{value}'.")
    } else {
        format!("Invalid value for field '{field}': '{value}'. {why}")
    };
    GcpError::invalid(message)
}

/// 400 `required`: `Required field 'F' not specified`.
pub fn required_field(field: &str) -> GcpError {
    GcpError::invalid_reason(
        "required",
        format!("Required field '{field}' not specified"),
    )
}

/// 400 `resourceNotReady`: the resource is still being created or deleted.
pub fn not_ready(path: &str) -> GcpError {
    GcpError::new(
        400,
        "FAILED_PRECONDITION",
        "resourceNotReady",
        format!("The resource '{path}' is not ready"),
    )
}

/// 400 `resourceInUseByAnotherResource`.
pub fn in_use(kind: Kind, path: &str, user: &str) -> GcpError {
    GcpError::new(
        400,
        "FAILED_PRECONDITION",
        "resourceInUseByAnotherResource",
        format!(
            "The {} resource '{path}' is already being used by '{user}'",
            kind.resource_word()
        ),
    )
}

/// The RFC 1035 name rule, with Compute's message.
pub fn check_name(field: &str, name: &str) -> GcpResult<()> {
    if http::valid_name(name, 63) {
        Ok(())
    } else {
        Err(invalid_field(
            field,
            name,
            "Must be a match of regex '(?:[a-z](?:[-a-z0-9]{0,61}[a-z0-9])?)'",
        ))
    }
}

/// The region of a regional URL must be one the simulated geography knows.
pub fn check_region(region: &str) -> GcpResult<()> {
    if geo::region_exists(region) {
        Ok(())
    } else {
        Err(invalid_field("region", region, "Unknown region."))
    }
}

/// The `name` of a request body: required and RFC 1035.
pub fn body_name(body: &Value) -> GcpResult<String> {
    match body.get("name") {
        None | Some(Value::Null) => Err(required_field("resource.name")),
        Some(Value::String(name)) => {
            check_name("resource.name", name)?;
            Ok(name.clone())
        }
        Some(other) => Err(invalid_field("resource.name", &other.to_string(), "")),
    }
}

/// A JSON request body that must be an object.
pub fn body_object(bytes: &[u8]) -> GcpResult<Map<String, Value>> {
    match http::parse_json(bytes)? {
        Value::Object(map) => Ok(map),
        _ => Err(GcpError::invalid_reason(
            "parseError",
            "Invalid JSON payload received. Expected an object.",
        )),
    }
}

/// Compute's `fingerprint`: a short hash of the resource's content in URL-safe base64, as Compute
/// sends it (`--KE24GB4T0=`); the google-cloud-rust models refuse `+` and `/` here.
pub fn fingerprint(body: &Value) -> String {
    let mut content = body.clone();
    if let Some(map) = content.as_object_mut() {
        map.remove("fingerprint");
    }
    let digest = Md5::digest(content.to_string().as_bytes());
    base64::engine::general_purpose::URL_SAFE.encode(&digest[..8])
}

/// True when two `format: byte` values hold the same bytes. Google's JSON parsers accept standard
/// and URL-safe base64, with or without padding (gcloud's apitools re-encodes URL-safe), so a
/// fingerprint read in one alphabet and sent back in the other still matches.
pub fn same_bytes(given: &str, current: Option<&str>) -> bool {
    let Some(current) = current else { return false };
    let decode = |s: &str| {
        use base64::Engine as _;
        let trimmed = s.trim_end_matches('=');
        base64::engine::general_purpose::STANDARD_NO_PAD
            .decode(trimmed)
            .or_else(|_| base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(trimmed))
            .ok()
    };
    match (decode(given), decode(current)) {
        (Some(a), Some(b)) => a == b,
        _ => given == current,
    }
}

/// A string field of a JSON object.
pub fn str_field<'a>(body: &'a Value, key: &str) -> Option<&'a str> {
    body.get(key).and_then(Value::as_str)
}

/// An array field of a JSON object (absent or null = empty).
pub fn array_field<'a>(body: &'a Value, key: &str) -> &'a [Value] {
    body.get(key)
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or(&[])
}

/// Looks up the network a body refers to: it must exist and be ready.
pub fn referenced_network(state: &State, project: &str, reference: &str) -> GcpResult<String> {
    let not_found = || {
        invalid_field(
            "resource.network",
            reference,
            "The referenced network resource cannot be found.",
        )
    };
    let path = network_path(project, reference).ok_or_else(not_found)?;
    match state.resources.get(&path) {
        Some(r) if r.kind == Kind::Network && r.state == Life::Ready => Ok(path),
        Some(r) if r.kind == Kind::Network => Err(not_ready(&path)),
        _ => Err(not_found()),
    }
}

// ---------------------------------------------------------------------------------------------
// Shared handler bodies.

/// GET of one resource.
pub fn get_resource(shared: &Shared, path: &str) -> GcpResult<Response> {
    shared.read_world(|world, _| {
        world
            .compute
            .visible(path)
            .map(|r| http::json(r.body.clone()))
            .ok_or_else(|| not_found(path))
    })
}

/// GET of a collection (`projects/p/global/networks`).
pub fn list_resources(shared: &Shared, kind: Kind, collection: &str) -> GcpResult<Response> {
    shared.read_world(|world, _| {
        let prefix = format!("{collection}/");
        let items: Vec<Value> = world
            .compute
            .visible_under(kind, &prefix)
            .map(|(_, r)| r.body.clone())
            .collect();
        Ok(http::json(list_body(kind.list_kind(), collection, items)))
    })
}

/// A Compute list response.
pub fn list_body(kind: &str, collection: &str, items: Vec<Value>) -> Value {
    let mut body = json!({ "kind": kind, "id": collection });
    if !items.is_empty() {
        body["items"] = Value::Array(items);
    }
    body["selfLink"] = Value::String(link(collection));
    body
}

/// The empty-scope warning of an aggregated list.
pub fn no_results(scope: &str) -> Value {
    json!({
        "warning": {
            "code": "NO_RESULTS_ON_PAGE",
            "message": format!("There are no results for scope '{scope}' on this page."),
            "data": [{ "key": "scope", "value": scope }],
        }
    })
}

/// GET of an aggregated list of a regional collection (`projects/p/aggregated/subnetworks`).
pub fn aggregated_resources(shared: &Shared, kind: Kind, project: &str) -> GcpResult<Response> {
    shared.read_world(|world, _| {
        let mut items = Map::new();
        for (region, _) in geo::REGIONS {
            let prefix = format!("projects/{project}/regions/{region}/{}/", kind.collection());
            let found: Vec<Value> = world
                .compute
                .visible_under(kind, &prefix)
                .map(|(_, r)| r.body.clone())
                .collect();
            let scope = format!("regions/{region}");
            let entry = if found.is_empty() {
                no_results(&scope)
            } else {
                json!({ kind.collection(): found })
            };
            items.insert(scope, entry);
        }
        let collection = format!("projects/{project}/aggregated/{}", kind.collection());
        Ok(http::json(json!({
            "kind": kind.aggregated_kind(),
            "id": collection,
            "items": items,
            "selfLink": link(&collection),
        })))
    })
}

/// The first resource that uses `path` and so blocks its deletion.
fn user_of(state: &State, kind: Kind, path: &str) -> Option<String> {
    let url = link(path);
    match kind {
        Kind::Network => {
            let project_prefix = path.split("/global/").next().unwrap_or(path).to_string();
            let uses_network =
                |r: &Resource| r.body.get("network").and_then(Value::as_str) == Some(url.as_str());
            for wanted in [Kind::Subnetwork, Kind::Firewall, Kind::Router] {
                let user = state
                    .resources
                    .range(format!("{project_prefix}/")..)
                    .take_while(|(p, _)| p.starts_with(&format!("{project_prefix}/")))
                    .find(|(_, r)| r.kind == wanted && !r.auto_created && uses_network(r));
                if let Some((user, _)) = user {
                    return Some(user.clone());
                }
            }
            None
        }
        Kind::Subnetwork => {
            let subnet = state.resources.get(path)?;
            if subnet.auto_created {
                let network = str_field(&subnet.body, "network").and_then(relative_path)?;
                return Some(network.to_string());
            }
            state
                .resources
                .iter()
                .find(|(_, r)| {
                    r.kind == Kind::Router
                        && array_field(&r.body, "nats").iter().any(|nat| {
                            array_field(nat, "subnetworks")
                                .iter()
                                .filter_map(|s| str_field(s, "name"))
                                .any(|name| relative_path(name) == Some(path))
                        })
                })
                .map(|(p, _)| p.clone())
        }
        Kind::Firewall | Kind::Router | Kind::ResourcePolicy => None,
    }
}

/// DELETE of one resource: checks it exists and is not in use, then starts the operation.
pub fn delete_resource(
    shared: &Shared,
    query: &Query,
    project: &str,
    scope: operations::Scope,
    kind: Kind,
    path: &str,
) -> GcpResult<Response> {
    shared.with_world(|world, cx| {
        if let Some(op) = operations::replay(world, project, query) {
            return Ok(http::json(op));
        }
        let resource = world.compute.visible(path).ok_or_else(|| not_found(path))?;
        if resource.state == Life::Deleting {
            return Err(not_ready(path));
        }
        let target_id = str_field(&resource.body, "id").unwrap_or("").to_string();
        if let Some(user) = user_of(&world.compute, kind, path) {
            return Err(in_use(kind, path, &user));
        }
        let op = operations::start(
            world,
            cx,
            operations::Start {
                project,
                scope,
                kind,
                verb: operations::Verb::Delete,
                target: path.to_string(),
                target_id,
                effect: operations::Effect::Delete,
                request_id: query.get("requestId"),
            },
        )?;
        Ok(http::json(op))
    })
}

/// Applies a finished operation's effect to the resources (`failed`: the operation ended in error).
fn apply_effect(world: &mut World, target: &str, effect: operations::Effect, failed: bool) {
    use operations::Effect;
    match effect {
        Effect::Create(_) if failed => {
            world.compute.resources.remove(target);
        }
        Effect::Create(_) => {
            let Some(resource) = world.compute.resources.get_mut(target) else {
                return;
            };
            resource.state = Life::Ready;
            let kind = resource.kind;
            let body = resource.body.clone();
            match kind {
                Kind::Subnetwork => attach_subnetwork(&mut world.compute, &body, true),
                Kind::Network => networks::create_auto_subnetworks(world, target),
                _ => {}
            }
        }
        Effect::Delete if failed => {
            if let Some(resource) = world.compute.resources.get_mut(target) {
                resource.state = Life::Ready;
            }
        }
        Effect::Delete => {
            let Some(resource) = world.compute.resources.remove(target) else {
                return;
            };
            match resource.kind {
                Kind::Subnetwork => attach_subnetwork(&mut world.compute, &resource.body, false),
                Kind::Network => {
                    let url = link(target);
                    world.compute.resources.retain(|_, r| {
                        !(r.auto_created
                            && r.body.get("network").and_then(Value::as_str) == Some(url.as_str()))
                    });
                }
                _ => {}
            }
        }
        Effect::Replace(_) if failed => {}
        Effect::Replace(body) => {
            if let Some(resource) = world.compute.resources.get_mut(target) {
                resource.body = body;
            }
        }
        Effect::None => {}
    }
}

/// Adds (or removes) a subnetwork's URL to (from) its network's `subnetworks[]`.
fn attach_subnetwork(state: &mut State, subnetwork: &Value, add: bool) {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn references_resolve_to_relative_paths() {
        assert_eq!(
            network_path(
                "p",
                "https://www.googleapis.com/compute/v1/projects/q/global/networks/n"
            ),
            Some("projects/q/global/networks/n".into())
        );
        assert_eq!(
            network_path("p", "global/networks/n"),
            Some("projects/p/global/networks/n".into())
        );
        assert_eq!(
            network_path("p", "n"),
            Some("projects/p/global/networks/n".into())
        );
        assert_eq!(
            network_path("p", "projects/p/regions/r/subnetworks/s"),
            None
        );
        assert_eq!(
            subnetwork_path("p", "us-east4", "s"),
            Some("projects/p/regions/us-east4/subnetworks/s".into())
        );
    }

    #[test]
    fn fingerprints_match_in_either_base64_alphabet() {
        assert!(same_bytes("+/+/AAAAAA8=", Some("+/+/AAAAAA8=")));
        assert!(same_bytes("-_-_AAAAAA8=", Some("+/+/AAAAAA8=")));
        assert!(same_bytes("-_-_AAAAAA8", Some("+/+/AAAAAA8=")));
        assert!(!same_bytes("AAAAAAAAAAA=", Some("+/+/AAAAAA8=")));
        assert!(!same_bytes("AAAAAAAAAAA=", None));
    }

    #[test]
    fn fingerprint_changes_with_content_only() {
        let a = json!({"name": "s", "ipCidrRange": "10.0.0.0/24"});
        let mut b = a.clone();
        b["fingerprint"] = json!(fingerprint(&a));
        assert_eq!(fingerprint(&a), fingerprint(&b));
        b["ipCidrRange"] = json!("10.0.0.0/23");
        assert_ne!(fingerprint(&a), fingerprint(&b));
    }
}
