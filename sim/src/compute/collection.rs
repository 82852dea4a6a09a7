//! One declaration per Compute collection, and the one set of handlers that serves them all.
//!
//! A collection (`networks`, `subnetworks`, `reservations` ...) is a [`Collection`]: its scope
//! (global, regional or zonal), its URL segment, its kind words, how an insert body becomes the
//! stored resource, which changes PATCH and PUT make, what keeps it from being deleted, its latency
//! and quota. From that, [`routes`] serves Compute's standard methods at Google's paths
//! (<https://cloud.google.com/compute/docs/reference/rest/v1>):
//!
//! | method | path |
//! |---|---|
//! | `insert` | `POST projects/{project}/{scope}/{segment}` |
//! | `get` | `GET projects/{project}/{scope}/{segment}/{name}` |
//! | `list` | `GET projects/{project}/{scope}/{segment}` (`maxResults`, `pageToken`) |
//! | `aggregatedList` (regional and zonal only) | `GET projects/{project}/aggregated/{segment}` (`maxResults`, `pageToken`) |
//! | `delete` | `DELETE projects/{project}/{scope}/{segment}/{name}` |
//! | `patch` (if declared) | `PATCH projects/{project}/{scope}/{segment}/{name}` |
//! | `update` (if declared) | `PUT projects/{project}/{scope}/{segment}/{name}` |
//!
//! where `{scope}` is `global`, `regions/{region}` or `zones/{zone}`. Lists page as
//! [`super::PAGING`] says, in name order. Every mutation shares the
//! same steps: the region or zone must exist, the body must be a JSON object, a repeated
//! `requestId` returns the operation it started, the name must be RFC 1035 and free (409
//! `alreadyExists`), the target of a change must exist (404 `notFound`) and not be mid-operation
//! (400 `resourceNotReady`), and the change is carried out by a global, regional or zonal operation
//! ([`super::operations`]) whose scripted faults, latency key and quota come from the declaration.
//!
//! Special verbs (`expandIpCidrRange`) are routes of their own module ([`Hooks::routes`]) built on
//! [`target`] and [`change`], so they get the same steps.

use super::operations::{self, Effect, Scope, Start, Verb};
use super::{
    Kind, Life, Resource, already_exists, body_name, body_object, check_region, check_zone, in_use,
    link, not_found, not_ready, str_field,
};
use crate::error::GcpResult;
use crate::geo;
use crate::http::{self, Query};
use crate::quotas;
use crate::shared::Ctx;
use crate::shared::Shared;
use crate::world::World;
use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, State as AxumState};
use axum::response::Response;
use axum::routing::{MethodRouter, get, post};
use serde_json::{Map, Value, json};
use std::sync::Arc;

/// Where a collection's resources live, and so where its operations live.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Placement {
    /// `projects/p/global/<segment>`, global operations.
    Global,
    /// `projects/p/regions/r/<segment>`, regional operations, an aggregated list by region.
    Regional,
    /// `projects/p/zones/z/<segment>`, zonal operations, an aggregated list by zone.
    Zonal,
}

/// The quota an insert counts against: the metric of [`crate::quotas`] that one resource of the
/// collection takes (a reservation takes its VMs' CPUs, GPUs and local SSDs instead), and what the
/// scripted `quota_exceeded` fault names: `Quota '<metric>' exceeded.  Limit: <limit> globally.`
/// (or `in region <r>.`) with the declaration's `limit` — Google's stock figure for a new project,
/// whatever limit the simulator enforces. The enforced default of the metric is the same number
/// (a unit test keeps them equal), except for reservations, whose `CPUS` figure is only the
/// fault's.
#[derive(Debug, Clone, Copy)]
pub struct Quota {
    /// `NETWORKS`; the metric name is `compute.googleapis.com/<lowercase>`.
    pub metric: &'static str,
    /// The limit the scripted fault names (and the metric's default, see above).
    pub limit: f64,
    /// `NETWORKS-per-project`.
    pub limit_name: &'static str,
    /// A per-region limit (the region of the request's region or zone) instead of a global one.
    pub regional: bool,
}

/// The `status` words of a collection whose resources report their life in a `status` field.
/// Such resources are visible (GET, list) while their insert runs, with `creating`.
#[derive(Debug, Clone, Copy)]
pub struct Statuses {
    pub creating: &'static str,
    pub ready: &'static str,
    pub deleting: &'static str,
}

/// Builds the stored resource from an insert body. The name has been checked and is free; the
/// builder validates the rest, draws the id (`world.numeric_id()`) and returns the full API JSON
/// (with `id`, which becomes the operation's `targetId`).
pub type Build = fn(&mut World, &Ctx, &Target, &Map<String, Value>) -> GcpResult<Value>;

/// Computes the resource a PATCH, PUT or special verb leaves: `(world, cx, target, current body,
/// request body) → next body`. The target exists and is READY.
pub type Change = fn(&mut World, &Ctx, &Target, Value, Map<String, Value>) -> GcpResult<Value>;

/// What a collection may add to the standard behaviour; [`Hooks::NONE`] adds nothing.
#[derive(Clone, Copy)]
pub struct Hooks {
    /// PATCH (`patch` method); absent: Google's answer for an unserved method ([`crate::discovery`]).
    pub patch: Option<Change>,
    /// PUT (`update` method); absent: Google's answer for an unserved method ([`crate::discovery`]).
    pub update: Option<Change>,
    /// Resources with a `status` field visible during creation.
    pub statuses: Option<Statuses>,
    /// The first resource that uses the one at this path, which blocks its delete (400
    /// `resourceInUseByAnotherResource`). It sees the whole world: a reservation is used by the
    /// nodes of GKE node pools.
    pub user_of: fn(&World, &str) -> Option<String>,
    /// Where a delete of a resource in use is refused: false, by the DELETE itself (400
    /// `resourceInUseByAnotherResource`); true, by its operation, which Compute accepts and then
    /// fails with `RESOURCE_IN_USE_BY_ANOTHER_RESOURCE` (networks; see their module).
    pub in_use_fails_operation: bool,
    /// A check an insert makes after the quotas: the failure its operation ends with (Compute
    /// accepts the insert and fails its operation), e.g. a reservation asking for more VMs than
    /// the zone has ([`crate::capacity`]). It sees the built resource.
    pub insert_failure: fn(&World, &Ctx, &Target, &Value) -> Option<operations::Failure>,
    /// The same check for a change (PATCH, PUT, special verb), from the current body to the next
    /// one: a reservation resized beyond the project's quota or the zone's capacity.
    pub change_failure: fn(&World, &Ctx, &Target, &Value, &Value) -> Option<operations::Failure>,
    /// Carries what moves under a running change (a reservation's `inUseCount`, moved by its
    /// consumers) from the current body into the one the change leaves, when it is DONE.
    pub carry: fn(&Value, &mut Value),
    /// Runs when an insert is DONE and the resource at this path became READY.
    pub on_ready: fn(&mut World, &str),
    /// Runs when a delete is DONE and this resource (at this path) was removed.
    pub on_removed: fn(&mut World, &str, &Resource),
    /// Routes of the collection's special verbs.
    pub routes: fn() -> Router<Arc<Shared>>,
}

impl Hooks {
    pub const NONE: Hooks = Hooks {
        patch: None,
        update: None,
        statuses: None,
        user_of: |_, _| None,
        in_use_fails_operation: false,
        insert_failure: |_, _, _, _| None,
        change_failure: |_, _, _, _, _| None,
        carry: |_, _| {},
        on_ready: |_, _| {},
        on_removed: |_, _, _| {},
        routes: Router::new,
    };
}

/// One Compute collection.
pub struct Collection {
    /// The kind's name in persisted worlds (`Resource::kind`, `"Network"`). Never rename it: saved
    /// worlds name their resources' kinds with it.
    pub name: &'static str,
    /// The singular camelCase word of the kind (`resourcePolicy`): resources are
    /// `compute#<word>`, lists `compute#<word>List`, aggregated lists `compute#<word>AggregatedList`,
    /// scripted faults name `compute.<word>`, latency keys `compute.<word>.<verb>`.
    pub word: &'static str,
    /// The URL segment (`resourcePolicies`), also the key of the admin inventory.
    pub segment: &'static str,
    /// The word of `The <word> resource '...' is already being used by '...'` (`resource_policy`).
    pub in_use_word: &'static str,
    pub placement: Placement,
    pub quota: Quota,
    pub build: Build,
    pub hooks: Hooks,
}

impl Collection {
    /// `compute.<word>`: the kind scripted faults name.
    pub fn fault_kind(&self) -> String {
        format!("compute.{}", self.word)
    }

    /// `compute.<word>.<verb>`.
    pub fn latency_key(&self, verb: &str) -> String {
        format!("compute.{}.{verb}", self.word)
    }

    /// `compute#<word>List`.
    pub fn list_kind(&self) -> String {
        format!("compute#{}List", self.word)
    }

    /// `compute#<word>AggregatedList`.
    pub fn aggregated_kind(&self) -> String {
        format!("compute#{}AggregatedList", self.word)
    }

    /// The route of the collection (`/compute/v1/projects/{project}/regions/{region}/routers`).
    pub fn collection_route(&self) -> String {
        let scope = match self.placement {
            Placement::Global => "global",
            Placement::Regional => "regions/{region}",
            Placement::Zonal => "zones/{zone}",
        };
        format!("/compute/v1/projects/{{project}}/{scope}/{}", self.segment)
    }

    /// The route of one resource (`.../routers/{name}`); special verbs append to it.
    pub fn item_route(&self) -> String {
        format!("{}/{{name}}", self.collection_route())
    }

    /// The relative path of the collection in `project` and `scope`.
    pub fn collection_path(&self, project: &str, scope: &Scope) -> String {
        format!("projects/{project}/{}/{}", scope.segment(), self.segment)
    }
}

/// The resource a request is about.
#[derive(Debug, Clone)]
pub struct Target {
    pub project: String,
    pub scope: Scope,
    pub name: String,
    /// `projects/p/regions/r/subnetworks/s`.
    pub path: String,
}

impl Target {
    /// The region of a regional target, or of a zonal target's zone (empty when global).
    pub fn region(&self) -> &str {
        match &self.scope {
            Scope::Global => "",
            Scope::Region(r) => r,
            Scope::Zone(z) => geo::region_of_zone(z).unwrap_or(""),
        }
    }

    /// The canonical URL of the target's region or zone (`.../projects/p/zones/z`), if any.
    pub fn scope_link(&self) -> Option<String> {
        match &self.scope {
            Scope::Global => None,
            scope => Some(link(&format!(
                "projects/{}/{}",
                self.project,
                scope.segment()
            ))),
        }
    }
}

/// Path parameters, in order: project, then region or zone, then the resource name.
type Params = Path<Vec<(String, String)>>;
type Shr = AxumState<Arc<Shared>>;

fn param<'a>(params: &'a [(String, String)], key: &str) -> &'a str {
    params
        .iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.as_str())
        .unwrap_or("")
}

/// The project and scope of a request; the region or zone must exist.
fn place(c: &Collection, params: &[(String, String)]) -> GcpResult<(String, Scope)> {
    let project = param(params, "project").to_string();
    let scope = match c.placement {
        Placement::Global => Scope::Global,
        Placement::Regional => {
            let region = param(params, "region");
            check_region(region)?;
            Scope::Region(region.to_string())
        }
        Placement::Zonal => {
            let zone = param(params, "zone");
            check_zone(zone)?;
            Scope::Zone(zone.to_string())
        }
    };
    Ok((project, scope))
}

fn target_named(c: &Collection, project: String, scope: Scope, name: String) -> Target {
    let path = format!("{}/{name}", c.collection_path(&project, &scope));
    Target {
        project,
        scope,
        name,
        path,
    }
}

/// The resource a request on [`Collection::item_route`] (or a special verb under it) is about;
/// its region or zone must exist.
pub fn target(c: &Collection, params: &[(String, String)]) -> GcpResult<Target> {
    let (project, scope) = place(c, params)?;
    let name = param(params, "name").to_string();
    Ok(target_named(c, project, scope, name))
}

/// The routes of one collection: its standard methods, then its special verbs.
pub fn routes(c: &'static Collection) -> Router<Arc<Shared>> {
    let mut item: MethodRouter<Arc<Shared>> =
        get(
            move |AxumState(shared): Shr, Path(params): Params| async move {
                get_one(c, &shared, &params)
            },
        )
        .delete(
            move |AxumState(shared): Shr, Path(params): Params, query: Query| async move {
                delete(c, &shared, &params, &query)
            },
        );
    for (verb, hook) in [(Verb::Patch, c.hooks.patch), (Verb::Update, c.hooks.update)] {
        let Some(hook) = hook else { continue };
        let handler = move |AxumState(shared): Shr,
                            Path(params): Params,
                            query: Query,
                            body: Bytes| async move {
            let target = target(c, &params)?;
            let body = body_object(&body)?;
            change(&shared, c, &target, &query, body, verb, hook)
        };
        item = match verb {
            Verb::Patch => item.patch(handler),
            _ => item.put(handler),
        };
    }
    let mut router =
        Router::new()
            .route(
                &c.collection_route(),
                post(
                    move |AxumState(shared): Shr,
                          Path(params): Params,
                          query: Query,
                          body: Bytes| async move {
                        insert(c, &shared, &params, &query, &body)
                    },
                )
                .get(
                    move |AxumState(shared): Shr, Path(params): Params, query: Query| async move {
                        list(c, &shared, &params, &query)
                    },
                ),
            )
            .route(&c.item_route(), item);
    if c.placement != Placement::Global {
        router = router.route(
            &format!("/compute/v1/projects/{{project}}/aggregated/{}", c.segment),
            get(
                move |AxumState(shared): Shr, Path(project): Path<String>, query: Query| async move {
                    aggregated(c, &shared, &project, &query)
                },
            ),
        );
    }
    router.merge((c.hooks.routes)())
}

/// `insert`: checks the name and that it is free, builds the resource, starts the operation. The
/// resource is reserved at once and appears when the operation is DONE (at once, with its
/// `creating` status, for collections with [`Hooks::statuses`]).
fn insert(
    c: &'static Collection,
    shared: &Shared,
    params: &[(String, String)],
    query: &Query,
    body: &[u8],
) -> GcpResult<Response> {
    let (project, scope) = place(c, params)?;
    let spec = body_object(body)?;
    shared.with_world(|world, cx| {
        if let Some(op) = operations::replay(world, &project, query) {
            return Ok(http::json(op));
        }
        let name = body_name(&Value::Object(spec.clone()))?;
        let target = target_named(c, project.clone(), scope.clone(), name);
        if world.compute.resources.contains_key(&target.path) {
            return Err(already_exists(&target.path));
        }
        let mut resource = (c.build)(world, cx, &target, &spec)?;
        if let Some(statuses) = c.hooks.statuses {
            resource["status"] = json!(statuses.creating);
        }
        let target_id = str_field(&resource, "id").unwrap_or("").to_string();
        // What the new resource takes must fit the project's quotas; the operation fails if not.
        let demand = quotas::insert_demand(Kind(c.name), &target.path, &resource);
        let failure = quotas::check(world, cx.quotas, &target.project, &demand)
            .first()
            .map(quotas::compute_failure)
            .or_else(|| (c.hooks.insert_failure)(world, cx, &target, &resource));
        let op = operations::start(
            world,
            cx,
            Start {
                project: &target.project,
                scope: target.scope.clone(),
                kind: Kind(c.name),
                verb: Verb::Insert,
                target: target.path.clone(),
                target_id,
                effect: Effect::Create(resource),
                request_id: query.get("requestId"),
                failure,
            },
        )?;
        Ok(http::json(op))
    })
}

/// `get`.
fn get_one(c: &Collection, shared: &Shared, params: &[(String, String)]) -> GcpResult<Response> {
    let target = target(c, params)?;
    shared.read_world(|world, _| {
        world
            .compute
            .visible(&target.path)
            .map(|r| http::json(r.body.clone()))
            .ok_or_else(|| not_found(&target.path))
    })
}

/// `list`: the visible resources of the collection in this scope, in name order, one page at a
/// time ([`super::PAGING`]).
fn list(
    c: &'static Collection,
    shared: &Shared,
    params: &[(String, String)],
    query: &Query,
) -> GcpResult<Response> {
    let (project, scope) = place(c, params)?;
    let collection = c.collection_path(&project, &scope);
    shared.read_world(|world, _| {
        let prefix = format!("{collection}/");
        let items: Vec<(String, Value)> = world
            .compute
            .visible_under(Kind(c.name), &prefix)
            .map(|(path, r)| (path.clone(), r.body.clone()))
            .collect();
        super::list_page(
            &c.list_kind(),
            &collection,
            items,
            query,
            crate::paging::cap(shared),
        )
    })
}

/// `aggregatedList`: every region (or zone) of the simulated geography, one page at a time; a
/// scope with nothing on the page carries Compute's `NO_RESULTS_ON_PAGE` warning.
fn aggregated(
    c: &'static Collection,
    shared: &Shared,
    project: &str,
    query: &Query,
) -> GcpResult<Response> {
    let scopes: Vec<String> = match c.placement {
        Placement::Global => Vec::new(),
        Placement::Regional => geo::REGIONS
            .iter()
            .map(|(region, _)| format!("regions/{region}"))
            .collect(),
        Placement::Zonal => geo::REGIONS
            .iter()
            .flat_map(|(_, zones)| zones.iter().map(|zone| format!("zones/{zone}")))
            .collect(),
    };
    shared.read_world(|world, _| {
        let scoped = scopes
            .into_iter()
            .map(|scope| {
                let prefix = format!("projects/{project}/{scope}/{}/", c.segment);
                let found: Vec<(String, Value)> = world
                    .compute
                    .visible_under(Kind(c.name), &prefix)
                    .map(|(path, r)| (path.clone(), r.body.clone()))
                    .collect();
                (scope, found)
            })
            .collect();
        super::aggregated_page(
            &c.aggregated_kind(),
            c.segment,
            project,
            scoped,
            query,
            crate::paging::cap(shared),
        )
    })
}

/// `delete`: the resource must exist, be READY and be used by nothing (or, for a collection whose
/// in-use refusal comes in the operation, the operation fails).
fn delete(
    c: &'static Collection,
    shared: &Shared,
    params: &[(String, String)],
    query: &Query,
) -> GcpResult<Response> {
    let target = target(c, params)?;
    let path = &target.path;
    shared.with_world(|world, cx| {
        if let Some(op) = operations::replay(world, &target.project, query) {
            return Ok(http::json(op));
        }
        let resource = world.compute.visible(path).ok_or_else(|| not_found(path))?;
        if resource.state != Life::Ready {
            return Err(not_ready(path));
        }
        let target_id = str_field(&resource.body, "id").unwrap_or("").to_string();
        let mut failure = None;
        if let Some(user) = (c.hooks.user_of)(world, path) {
            let refusal = in_use(c, path, &user);
            if !c.hooks.in_use_fails_operation {
                return Err(refusal);
            }
            failure = Some(operations::Failure {
                http_status: 400,
                http_message: "BAD_REQUEST".into(),
                code: "RESOURCE_IN_USE_BY_ANOTHER_RESOURCE".into(),
                message: refusal.message,
                details: None,
            });
        }
        let op = operations::start(
            world,
            cx,
            Start {
                project: &target.project,
                scope: target.scope.clone(),
                kind: Kind(c.name),
                verb: Verb::Delete,
                target: path.clone(),
                target_id,
                effect: Effect::Delete,
                request_id: query.get("requestId"),
                failure,
            },
        )?;
        Ok(http::json(op))
    })
}

/// A change of an existing resource (PATCH, PUT or a special verb): a repeated `requestId` returns
/// its operation; the resource must exist and be READY; `hook` computes the new body, which
/// replaces the old one when the operation is DONE.
pub fn change(
    shared: &Shared,
    c: &'static Collection,
    target: &Target,
    query: &Query,
    body: Map<String, Value>,
    verb: Verb,
    hook: Change,
) -> GcpResult<Response> {
    shared.with_world(|world, cx| {
        if let Some(op) = operations::replay(world, &target.project, query) {
            return Ok(http::json(op));
        }
        let path = &target.path;
        let current = world.compute.visible(path).ok_or_else(|| not_found(path))?;
        if current.state != Life::Ready {
            return Err(not_ready(path));
        }
        let current = current.body.clone();
        let next = hook(world, cx, target, current.clone(), body)?;
        let failure = (c.hooks.change_failure)(world, cx, target, &current, &next);
        let target_id = str_field(&next, "id").unwrap_or("").to_string();
        let op = operations::start(
            world,
            cx,
            Start {
                project: &target.project,
                scope: target.scope.clone(),
                kind: Kind(c.name),
                verb,
                target: path.clone(),
                target_id,
                effect: Effect::Replace(next),
                request_id: query.get("requestId"),
                failure,
            },
        )?;
        Ok(http::json(op))
    })
}
