//! Compute Engine v1 at Google's paths under `/compute/v1/`: the collections listed in
//! `collections!` below (VPC networks, subnetworks, firewall rules, Cloud Routers with Cloud NAT,
//! group-placement resource policies, ...; each module's doc says what it serves) and the
//! global/regional/zonal operations that every mutation returns.
//!
//! Each collection is declared once, as a [`collection::Collection`] in its own module, and listed
//! in [`COLLECTIONS`] (the `collections!` list below); one set of handlers ([`collection`]) serves
//! every collection's insert, get, list, aggregated list, delete, patch and update, and the module
//! keeps only its own rules and special verbs.
//!
//! Every resource is stored as its API JSON under its relative path
//! (`projects/p/global/networks/n`) with a lifecycle: an insert reserves the name at once
//! (`Creating`: invisible to GET and list unless the collection reports a `status`, but a second
//! insert is a 409) and the resource becomes visible (READY) when its operation is DONE; a delete
//! marks it `Deleting` and removes it when its operation is DONE; patches are applied when their
//! operation is DONE. Operations get their duration from the latency profile
//! (`compute.<word>.<insert|delete|patch>`, defaults from the declarations) and are finished lazily
//! by [`tick`].
//!
//! Submodules: [`collection`] (the declaration and the shared handlers), [`operations`] (operation
//! records, the operation endpoints, `requestId` replay), [`regions`] (`regions.get`/`list` and
//! `projects.get`, with the quotas of [`crate::quotas`]; machine and accelerator types),
//! [`network_profiles`] (the read-only network profiles and what they allow), one module per
//! collection, [`instance_group_managers`] and [`instances`] (the read-only groups and VMs of GKE
//! node pools, derived from the pools), and `cidr` (IPv4 range arithmetic).

mod cidr;
pub mod collection;
pub mod instance_group_managers;
pub mod instances;
pub mod machine_types;
pub mod network_profiles;
pub mod operations;
pub mod regions;

/// Declares the collections this API serves: each `module` is `pub(crate) mod module;` (GKE reads
/// reservations through [`reservations`]) and its
/// `pub static COLLECTION` ([`Collection`]) joins [`COLLECTIONS`], which routes it, ticks it,
/// inventories it, loads its saved resources and names its latency keys. Adding a collection is
/// one module and one name here, its name in [`crate::state::compute::KINDS`] (what saved worlds
/// may name) and its latency rows in [`crate::latency::DEFAULTS`] (unit tests below check both).
macro_rules! collections {
    ($($module:ident),* $(,)?) => {
        $(pub(crate) mod $module;)*
        /// Every collection this API serves, in inventory order.
        pub static COLLECTIONS: &[&Collection] = &[$(&$module::COLLECTION),*];
    };
}

collections! {
    networks,
    subnetworks,
    firewalls,
    routers,
    resource_policies,
    reservations,
}

use crate::error::{GcpError, GcpResult};
use crate::geo;
use crate::http;
use crate::shared::Ctx;
use crate::shared::Shared;
use crate::world::World;
use axum::Router;
use base64::Engine;
use collection::Collection;
use md5::{Digest, Md5};
use serde_json::{Map, Value, json};
use std::sync::Arc;

/// Canonical prefix of every Compute self link.
pub const API_BASE: &str = "https://www.googleapis.com/compute/v1/";

pub use crate::state::compute::{Kind, Life, Resource, State};

impl Kind {
    /// The collection whose [`Collection::name`] is `name`.
    pub fn named(name: &str) -> Option<Kind> {
        COLLECTIONS
            .iter()
            .find(|c| c.name == name)
            .map(|c| Kind(c.name))
    }
}

/// A kind is its collection's declaration.
impl std::ops::Deref for Kind {
    type Target = Collection;
    fn deref(&self) -> &Collection {
        COLLECTIONS
            .iter()
            .find(|c| c.name == self.0)
            .expect("every kind names a collection (state::compute::KINDS)")
    }
}

/// True when `segment` is the URL segment of a Compute collection (the next segment is a name).
pub fn is_collection_segment(segment: &str) -> bool {
    COLLECTIONS.iter().any(|c| c.segment == segment)
}

impl Resource {
    /// Moves the resource to `life`; a collection with [`collection::Statuses`] shows it in
    /// `status`.
    pub fn set_life(&mut self, life: Life) {
        self.state = life;
        if let Some(statuses) = self.kind.hooks.statuses {
            let word = match life {
                Life::Creating => statuses.creating,
                Life::Ready => statuses.ready,
                Life::Deleting => statuses.deleting,
            };
            self.body["status"] = json!(word);
        }
    }

    /// Whether GET and list show it: once its insert is DONE, or at once for a collection with
    /// [`collection::Statuses`].
    pub fn is_visible(&self) -> bool {
        self.state != Life::Creating || self.kind.hooks.statuses.is_some()
    }
}

/// Routes of this API (full paths, including the simulator's prefix).
pub fn router() -> Router<Arc<Shared>> {
    COLLECTIONS
        .iter()
        .fold(Router::new(), |router, c| {
            router.merge(collection::routes(c))
        })
        .merge(operations::router())
        .merge(regions::router())
        .merge(network_profiles::router())
        .merge(machine_types::router())
        .merge(instance_group_managers::router())
        .merge(instances::router())
}

/// The earliest time, not after `now`, at which an operation is due.
pub fn next_due(world: &World, now: crate::clock::SimTime) -> Option<crate::clock::SimTime> {
    operations::next_due(world, now)
}

/// Finishes the operations due by `at`; returns true if anything changed.
pub fn tick_until(world: &mut World, cx: &Ctx, at: crate::clock::SimTime) -> bool {
    operations::tick_until(world, cx, at)
}

/// Records that the world was brought up to `now`: unfinished operations that have started are
/// RUNNING.
pub fn ticked(world: &mut World, now: crate::clock::SimTime) {
    world.compute.last_tick = world.compute.last_tick.max(now);
}

/// This API's part of the admin inventory: every resource by kind, and every operation.
pub fn inventory(world: &World) -> Value {
    let mut out = Map::new();
    for c in COLLECTIONS {
        let kind = Kind(c.name);
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
        out.insert(c.segment.to_string(), Value::Array(items));
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
    /// A resource that exists (its insert finished, or it shows its `status` while being
    /// created), whether or not it is being deleted.
    pub fn visible(&self, path: &str) -> Option<&Resource> {
        self.resources.get(path).filter(|r| r.is_visible())
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
            .filter(move |(_, r)| r.kind == kind && r.is_visible())
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
pub fn in_use(kind: &Collection, path: &str, user: &str) -> GcpError {
    GcpError::new(
        400,
        "FAILED_PRECONDITION",
        "resourceInUseByAnotherResource",
        format!(
            "The {} resource '{path}' is already being used by '{user}'",
            kind.in_use_word
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

/// The zone of a zonal URL must be one the simulated geography knows.
pub fn check_zone(zone: &str) -> GcpResult<()> {
    if geo::zone_exists(zone) {
        Ok(())
    } else {
        Err(invalid_field("zone", zone, "Unknown zone."))
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
        Some(r) if r.kind == networks::KIND && r.state == Life::Ready => Ok(path),
        Some(r) if r.kind == networks::KIND => Err(not_ready(&path)),
        _ => Err(not_found()),
    }
}

// ---------------------------------------------------------------------------------------------
// Shared pieces of the handlers.

/// A Compute list response.
pub fn list_body(kind: &str, collection: &str, items: Vec<Value>) -> Value {
    let mut body = json!({ "kind": kind, "id": collection });
    if !items.is_empty() {
        body["items"] = Value::Array(items);
    }
    body["selfLink"] = Value::String(link(collection));
    body
}

/// How Compute pages its lists ([`crate::paging`]): `maxResults` 0–500, default 500 (the
/// discovery document's `maxResults`); a size outside the range and a token Compute did not give
/// out are 400 `invalid` (guesses: neither answer is published).
pub const PAGING: crate::paging::Rules = crate::paging::Rules {
    size_param: "maxResults",
    default: 500,
    max: 500,
    too_large: Some(|raw| invalid_field("maxResults", raw, "Must be between 0 and 500.")),
    bad_size: |raw| invalid_field("maxResults", raw, "Must be between 0 and 500."),
    bad_token: |raw| invalid_field("pageToken", raw, "Invalid page token."),
};

/// One page of a Compute list of `(key, item)` (keys in list order: names, or numbered
/// operations) as `query` asks for it, capped by the world file's `[lists]`.
pub fn page<T>(
    items: Vec<(String, T)>,
    query: &http::Query,
    cap: Option<usize>,
) -> GcpResult<crate::paging::Page<T>> {
    crate::paging::page(&PAGING, query, cap, items)
}

/// A Compute list response of one page of `items` (`(key, item)`, see [`page`]).
pub fn list_page(
    kind: &str,
    collection: &str,
    items: Vec<(String, Value)>,
    query: &http::Query,
    cap: Option<usize>,
) -> GcpResult<axum::response::Response> {
    let page = page(items, query, cap)?;
    let mut body = list_body(kind, collection, page.items);
    if let Some(next) = page.next {
        body["nextPageToken"] = json!(next);
    }
    Ok(http::json(body))
}

/// An aggregated list response of one page: `scopes` are every scope in Compute's order
/// (`regions/r`, `zones/z`, `global`) with their items (`(key, item)`, keys in order within the
/// scope). A page takes items across scopes in that order; a scope with no item on the page
/// carries Compute's `NO_RESULTS_ON_PAGE` warning.
pub fn aggregated_page(
    kind: &str,
    segment: &str,
    project: &str,
    scopes: Vec<(String, Vec<(String, Value)>)>,
    query: &http::Query,
    cap: Option<usize>,
) -> GcpResult<axum::response::Response> {
    let keyed: Vec<(String, (usize, Value))> = scopes
        .iter()
        .enumerate()
        .flat_map(|(at, (_, items))| {
            items
                .iter()
                .map(move |(key, item)| (format!("{at:04}/{key}"), (at, item.clone())))
        })
        .collect();
    let page = page(keyed, query, cap)?;
    let mut found: Vec<Vec<Value>> = vec![Vec::new(); scopes.len()];
    for (at, item) in page.items {
        found[at].push(item);
    }
    let mut items = Map::new();
    for ((scope, _), found) in scopes.into_iter().zip(found) {
        let entry = if found.is_empty() {
            no_results(&scope)
        } else {
            json!({ segment: found })
        };
        items.insert(scope, entry);
    }
    let collection = format!("projects/{project}/aggregated/{segment}");
    let mut body = json!({
        "kind": kind,
        "id": collection,
        "items": items,
        "selfLink": link(&collection),
    });
    if let Some(next) = page.next {
        body["nextPageToken"] = json!(next);
    }
    Ok(http::json(body))
}

/// Every zone of the simulated geography as an aggregated list's scope (`zones/z`), with the
/// items `items_in(zone)` gives.
pub fn zone_scopes(
    items_in: impl Fn(&str) -> Vec<(String, Value)>,
) -> Vec<(String, Vec<(String, Value)>)> {
    geo::REGIONS
        .iter()
        .flat_map(|(_, zones)| zones.iter())
        .map(|zone| (format!("zones/{zone}"), items_in(zone)))
        .collect()
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
            resource.set_life(Life::Ready);
            let kind = resource.kind;
            (kind.hooks.on_ready)(world, target);
        }
        Effect::Delete if failed => {
            if let Some(resource) = world.compute.resources.get_mut(target) {
                resource.set_life(Life::Ready);
            }
        }
        Effect::Delete => {
            let Some(resource) = world.compute.resources.remove(target) else {
                return;
            };
            (resource.kind.hooks.on_removed)(world, target, &resource);
        }
        Effect::Replace(_) if failed => {}
        Effect::Replace(mut body) => {
            if let Some(resource) = world.compute.resources.get_mut(target) {
                (resource.kind.hooks.carry)(&resource.body, &mut body);
                resource.body = body;
            }
        }
        Effect::None => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_collection_has_its_latencies() {
        for c in COLLECTIONS {
            for verb in ["insert", "delete", "patch"] {
                let key = c.latency_key(verb);
                assert!(
                    crate::latency::DEFAULTS.iter().any(|(k, _, _)| *k == key),
                    "{key} is not in latency::DEFAULTS"
                );
            }
        }
    }

    #[test]
    fn declared_network_limits_are_the_defaults() {
        for c in COLLECTIONS {
            if c.name == "Reservation" {
                continue;
            }
            let m = crate::quotas::metric_named(c.quota.metric).expect("collection metric is kept");
            assert_eq!(m.default, c.quota.limit, "{}", c.name);
            assert_eq!(m.quota_id, c.quota.limit_name, "{}", c.name);
            assert_eq!(
                m.place == crate::quotas::Place::Region,
                c.quota.regional,
                "{}",
                c.name
            );
        }
    }

    #[test]
    fn quotas_count_each_collection_against_its_metric() {
        let declared: Vec<(&str, &str)> = COLLECTIONS
            .iter()
            .map(|c| (c.name, c.quota.metric))
            .collect();
        assert_eq!(declared, crate::quotas::KIND_METRICS);
        assert_eq!(reservations::KIND, crate::state::compute::RESERVATION);
    }

    #[test]
    fn saved_kinds_are_the_collections() {
        let names: Vec<&str> = COLLECTIONS.iter().map(|c| c.name).collect();
        assert_eq!(names, crate::state::compute::KINDS);
        for c in COLLECTIONS {
            assert_eq!(Kind::named(c.name).map(|k| k.segment), Some(c.segment));
        }
    }

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
    fn saved_kinds_keep_their_names() {
        // How worlds saved before the collections were declarations name their kinds.
        let mut resources = Map::new();
        for name in [
            "Network",
            "Subnetwork",
            "Firewall",
            "Router",
            "ResourcePolicy",
        ] {
            resources.insert(
                format!("projects/p/x/{name}"),
                json!({"kind": name, "state": "Ready", "body": {}, "auto_created": false}),
            );
        }
        let saved = json!({"resources": resources, "operations": {}, "request_ids": {}});
        let state: State = serde_json::from_value(saved.clone()).expect("old world loads");
        assert_eq!(state.resources["projects/p/x/Network"].kind, networks::KIND);
        assert_eq!(
            serde_json::to_value(&state).unwrap()["resources"],
            saved["resources"]
        );
        let unknown = json!({"resources": {"a": {"kind": "Nope", "state": "Ready", "body": {}}}});
        assert!(serde_json::from_value::<State>(unknown).is_err());
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
