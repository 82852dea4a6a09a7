//! Compute operations: the record every mutation leaves behind, its rendering as
//! `compute#operation` (PENDING → RUNNING → DONE, with `error`, `httpErrorStatusCode` and
//! `httpErrorMessage` on failure), the global/regional/zonal `get`, `list`, `delete` and
//! `POST .../wait` endpoints, the aggregated operation list, scripted faults, and `requestId`
//! replay.

use super::{Kind, Life, Resource, State, apply_effect, link};
use crate::clock::SimTime;
use crate::error::{GcpError, GcpResult};
use crate::faults::{FaultAction, NamedFault};
use crate::geo;
use crate::http::{self, Query};
pub use crate::quotas::quota_exceeded;
use crate::shared::Ctx;
use crate::shared::Shared;
pub use crate::state::compute::{Effect, Failure, Operation};
use crate::world::World;
use axum::Router;
use axum::extract::{Path, State as AxumState};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Where an operation lives.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Scope {
    Global,
    Region(String),
    Zone(String),
}

impl Scope {
    /// `global`, `regions/r` or `zones/z`.
    pub fn segment(&self) -> String {
        match self {
            Scope::Global => "global".into(),
            Scope::Region(r) => format!("regions/{r}"),
            Scope::Zone(z) => format!("zones/{z}"),
        }
    }
}

/// What a mutation does, and so which latency key, fault verb and `operationType` it has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verb {
    Insert,
    Delete,
    Patch,
    Update,
    /// A collection's special verb (`expandIpCidrRange`): its `operationType`; faults count it as
    /// an `update`, its latency is the collection's `patch`.
    Special(&'static str),
}

impl Verb {
    fn operation_type(self) -> &'static str {
        match self {
            Verb::Insert => "insert",
            Verb::Delete => "delete",
            Verb::Patch => "patch",
            Verb::Update => "update",
            Verb::Special(name) => name,
        }
    }

    fn fault_verb(self) -> &'static str {
        match self {
            Verb::Insert => "create",
            Verb::Delete => "delete",
            Verb::Patch | Verb::Update | Verb::Special(_) => "update",
        }
    }

    fn latency_verb(self) -> &'static str {
        match self {
            Verb::Insert => "insert",
            Verb::Delete => "delete",
            Verb::Patch | Verb::Update | Verb::Special(_) => "patch",
        }
    }
}

impl Operation {
    /// The operation as the API returns it now.
    pub fn render(&self, world: &World) -> Value {
        let mut body = self.body.clone();
        let status = if self.finished {
            "DONE"
        } else if self.running_at <= world.compute.last_tick.max(self.created_at) {
            "RUNNING"
        } else {
            "PENDING"
        };
        body["status"] = json!(status);
        body["progress"] = json!(if self.finished { 100 } else { 0 });
        if status != "PENDING" {
            body["startTime"] = json!(world.compute_timestamp(self.running_at));
        }
        if self.finished {
            body["endTime"] = json!(world.compute_timestamp(self.done_at));
            if let Some(failure) = &self.failure {
                let mut error = json!({ "code": failure.code, "message": failure.message });
                if let Some(details) = &failure.details {
                    error["errorDetails"] = details.clone();
                }
                body["error"] = json!({ "errors": [error] });
                body["httpErrorStatusCode"] = json!(failure.http_status);
                body["httpErrorMessage"] = json!(failure.http_message);
            }
        }
        body
    }
}

/// Everything [`start`] needs to begin an operation.
pub struct Start<'a> {
    pub project: &'a str,
    pub scope: Scope,
    pub kind: Kind,
    pub verb: Verb,
    /// Relative path of the target resource.
    pub target: String,
    pub target_id: String,
    pub effect: Effect,
    pub request_id: Option<&'a str>,
    /// The failure a check made before the operation started (an exceeded quota): the operation
    /// ends DONE with it, unless a scripted fault decides otherwise.
    pub failure: Option<Failure>,
}

/// The operation a `requestId` already started in this project, if any.
pub fn replay(world: &World, project: &str, query: &Query) -> Option<Value> {
    let request_id = query.get("requestId").filter(|r| !r.is_empty())?;
    let key = world
        .compute
        .request_ids
        .get(&format!("{project}/{request_id}"))?;
    world.compute.operations.get(key).map(|op| op.render(world))
}

/// The canonical status for an HTTP code, for errors from scripted HTTP faults.
fn canonical_status(code: u16) -> &'static str {
    match code {
        400 => "INVALID_ARGUMENT",
        401 => "UNAUTHENTICATED",
        403 => "PERMISSION_DENIED",
        404 => "NOT_FOUND",
        409 => "ALREADY_EXISTS",
        412 => "FAILED_PRECONDITION",
        429 => "RESOURCE_EXHAUSTED",
        501 => "UNIMPLEMENTED",
        503 => "UNAVAILABLE",
        504 => "DEADLINE_EXCEEDED",
        _ => "INTERNAL",
    }
}

/// The quota the kind's declaration names, at the limit the declaration gives, in its region or
/// globally: what the scripted `quota_exceeded` fault pretends was exceeded.
fn quota_failure(kind: Kind, scope: &Scope) -> Failure {
    let quota = kind.quota;
    let region = match scope {
        Scope::Global => None,
        Scope::Region(r) => Some(r.as_str()),
        Scope::Zone(z) => geo::region_of_zone(z),
    };
    quota_exceeded(
        quota.metric,
        quota.limit_name,
        quota.limit,
        region.filter(|_| quota.regional),
        None,
    )
}

fn named_failure(fault: NamedFault, kind: Kind, project: &str, scope: &Scope) -> Failure {
    match fault {
        NamedFault::QuotaExceeded => quota_failure(kind, scope),
        NamedFault::Stockout => {
            // In a zone: the failure of the real capacity check.
            if let Scope::Zone(zone) = scope {
                return crate::capacity::compute_exhausted(project, zone);
            }
            let place = match scope {
                Scope::Global => "global".to_string(),
                Scope::Region(r) => format!("region '{r}'"),
                Scope::Zone(z) => format!("zone '{z}'"),
            };
            Failure {
                http_status: 503,
                http_message: "SERVICE UNAVAILABLE".into(),
                code: "ZONE_RESOURCE_POOL_EXHAUSTED".into(),
                message: format!(
                    "The {place} does not have enough resources available to fulfill the request.  Try a different zone, or try again later."
                ),
                details: None,
            }
        }
        NamedFault::OperationError | NamedFault::DropBefore | NamedFault::DropAfter => Failure {
            http_status: 500,
            http_message: "INTERNAL SERVER ERROR".into(),
            code: "INTERNAL_ERROR".into(),
            message: "Internal error. Please try again or contact Google Support.".into(),
            details: None,
        },
    }
}

/// Starts an operation: consults scripted faults, reserves a created resource, draws the
/// duration, records the `requestId`, and returns the operation as the API answers the call.
pub fn start(world: &mut World, cx: &Ctx, start: Start) -> GcpResult<Value> {
    let failure = match cx.scripted_fault(&start.kind.fault_kind(), start.verb.fault_verb()) {
        Some(FaultAction::Http {
            status,
            reason,
            message,
        }) => {
            return Err(GcpError::new(
                status,
                canonical_status(status),
                reason,
                message,
            ));
        }
        // Drops never reach the modules ([`crate::world::Ctx::scripted_fault`]).
        Some(FaultAction::Named(NamedFault::DropBefore | NamedFault::DropAfter)) | None => {
            start.failure
        }
        Some(FaultAction::Named(fault)) => Some(named_failure(
            fault,
            start.kind,
            start.project,
            &start.scope,
        )),
    };
    let key = start.kind.latency_key(start.verb.latency_verb());
    let duration = world.duration_ms(cx, &key);
    let now = cx.now;
    match &start.effect {
        Effect::Create(body) => {
            world.compute.resources.insert(
                start.target.clone(),
                Resource {
                    kind: start.kind,
                    state: Life::Creating,
                    body: body.clone(),
                    auto_created: false,
                },
            );
        }
        Effect::Delete => {
            if let Some(resource) = world.compute.resources.get_mut(&start.target) {
                resource.set_life(Life::Deleting);
            }
        }
        Effect::Replace(_) | Effect::None => {}
    }
    let millis = world.instant(now).timestamp_millis();
    let name = format!(
        "operation-{millis}-{}-{}-{}",
        world.hex(13),
        world.hex(8),
        world.hex(8)
    );
    let path = format!(
        "projects/{}/{}/operations/{name}",
        start.project,
        start.scope.segment()
    );
    let mut body = json!({
        "kind": "compute#operation",
        "id": world.numeric_id(),
        "name": name,
        "operationType": start.verb.operation_type(),
        "targetLink": link(&start.target),
        "targetId": start.target_id,
        "user": "user@example.com",
        "insertTime": world.compute_timestamp(now),
        "selfLink": link(&path),
    });
    match &start.scope {
        Scope::Global => {}
        Scope::Region(r) => {
            body["region"] = json!(link(&format!("projects/{}/regions/{r}", start.project)))
        }
        Scope::Zone(z) => {
            body["zone"] = json!(link(&format!("projects/{}/zones/{z}", start.project)))
        }
    }
    if let Some(request_id) = start.request_id.filter(|r| !r.is_empty()) {
        body["clientOperationId"] = json!(request_id);
        world
            .compute
            .request_ids
            .insert(format!("{}/{request_id}", start.project), path.clone());
    }
    let seq = world.next_seq();
    let op = Operation {
        seq,
        body,
        target: start.target,
        effect: start.effect,
        created_at: now,
        running_at: now.plus_ms((duration / 10).min(1000)),
        done_at: now.plus_ms(duration),
        finished: false,
        failure,
    };
    let rendered = op.render(world);
    world.compute.operations.insert(path, op);
    Ok(rendered)
}

/// The earliest time, not after `now`, at which an unfinished operation is due.
pub fn next_due(world: &World, now: SimTime) -> Option<SimTime> {
    world
        .compute
        .operations
        .values()
        .filter(|op| !op.finished && op.done_at <= now)
        .map(|op| op.done_at)
        .min()
}

/// Finishes every operation due by `at`, oldest deadline first.
pub fn tick_until(world: &mut World, _cx: &Ctx, at: SimTime) -> bool {
    let mut due: Vec<(SimTime, u64, String)> = world
        .compute
        .operations
        .iter()
        .filter(|(_, op)| !op.finished && op.done_at <= at)
        .map(|(key, op)| (op.done_at, op.seq, key.clone()))
        .collect();
    if due.is_empty() {
        return false;
    }
    due.sort();
    for (_, _, key) in due {
        let Some(op) = world.compute.operations.get_mut(&key) else {
            continue;
        };
        op.finished = true;
        let effect = std::mem::replace(&mut op.effect, Effect::None);
        let failed = op.failure.is_some();
        let target = op.target.clone();
        apply_effect(world, &target, effect, failed);
    }
    true
}

// ---------------------------------------------------------------------------------------------
// Endpoints.

const WAIT_LIMIT: Duration = Duration::from_secs(120);

pub fn router() -> Router<Arc<Shared>> {
    let p = "/compute/v1/projects/{project}";
    Router::new()
        .route(&format!("{p}/global/operations"), get(list_global))
        .route(
            &format!("{p}/global/operations/{{operation}}"),
            get(get_global).delete(delete_global),
        )
        .route(
            &format!("{p}/global/operations/{{operation}}/wait"),
            post(wait_global),
        )
        .route(
            &format!("{p}/regions/{{region}}/operations"),
            get(list_region),
        )
        .route(
            &format!("{p}/regions/{{region}}/operations/{{operation}}"),
            get(get_region).delete(delete_region),
        )
        .route(
            &format!("{p}/regions/{{region}}/operations/{{operation}}/wait"),
            post(wait_region),
        )
        .route(&format!("{p}/zones/{{zone}}/operations"), get(list_zone))
        .route(
            &format!("{p}/zones/{{zone}}/operations/{{operation}}"),
            get(get_zone).delete(delete_zone),
        )
        .route(
            &format!("{p}/zones/{{zone}}/operations/{{operation}}/wait"),
            post(wait_zone),
        )
        .route(&format!("{p}/aggregated/operations"), get(aggregated))
}

type Shr = AxumState<Arc<Shared>>;

fn get_op(shared: &Shared, path: &str) -> GcpResult<Response> {
    shared.read_world(|world, _| {
        world
            .compute
            .operations
            .get(path)
            .map(|op| http::json(op.render(world)))
            .ok_or_else(|| super::not_found(path))
    })
}

fn delete_op(shared: &Shared, path: &str) -> GcpResult<Response> {
    shared.with_world(|world, _| {
        world
            .compute
            .operations
            .remove(path)
            .ok_or_else(|| super::not_found(path))?;
        world.compute.request_ids.retain(|_, p| p != path);
        Ok(StatusCode::NO_CONTENT.into_response())
    })
}

/// The operations under `prefix` (`projects/p/zones/z/operations/`), oldest first, keyed for
/// paging by their sequence number.
fn ops_under(world: &World, prefix: &str) -> Vec<(String, Value)> {
    let mut ops: Vec<&Operation> = world
        .compute
        .operations
        .iter()
        .filter(|(k, _)| k.starts_with(prefix))
        .map(|(_, op)| op)
        .collect();
    ops.sort_by_key(|op| op.seq);
    ops.into_iter()
        .map(|op| (crate::paging::numbered(op.seq), op.render(world)))
        .collect()
}

fn list_ops(shared: &Shared, collection: &str, query: &Query) -> GcpResult<Response> {
    shared.read_world(|world, _| {
        let items = ops_under(world, &format!("{collection}/"));
        super::list_page(
            "compute#operationList",
            collection,
            items,
            query,
            crate::paging::cap(shared),
        )
    })
}

/// `wait`: returns when the operation is DONE, at once with a manual clock, or after at most two
/// minutes. With a scaled clock it sleeps (without the world lock) for the real time the rest of
/// the operation takes, then looks again.
async fn wait_op(shared: Arc<Shared>, path: String) -> GcpResult<Response> {
    let deadline = Instant::now() + WAIT_LIMIT;
    loop {
        let (op, remaining) = shared.read_world(|world, cx| {
            let op = world
                .compute
                .operations
                .get(&path)
                .ok_or_else(|| super::not_found(&path))?;
            let remaining = if op.finished {
                None
            } else {
                Some(op.done_at.since(cx.now))
            };
            Ok::<_, GcpError>((op.render(world), remaining))
        })?;
        let Some(remaining) = remaining else {
            return Ok(http::json(op));
        };
        let Some(real) = shared.clock.real_duration(remaining) else {
            return Ok(http::json(op));
        };
        let now = Instant::now();
        if now >= deadline {
            return Ok(http::json(op));
        }
        let nap = (real + Duration::from_millis(2)).min(deadline - now);
        tokio::time::sleep(nap).await;
    }
}

async fn get_global(
    AxumState(shared): Shr,
    Path((project, operation)): Path<(String, String)>,
) -> GcpResult<Response> {
    get_op(
        &shared,
        &format!("projects/{project}/global/operations/{operation}"),
    )
}

async fn delete_global(
    AxumState(shared): Shr,
    Path((project, operation)): Path<(String, String)>,
) -> GcpResult<Response> {
    delete_op(
        &shared,
        &format!("projects/{project}/global/operations/{operation}"),
    )
}

async fn wait_global(
    AxumState(shared): Shr,
    Path((project, operation)): Path<(String, String)>,
) -> GcpResult<Response> {
    wait_op(
        shared,
        format!("projects/{project}/global/operations/{operation}"),
    )
    .await
}

async fn list_global(
    AxumState(shared): Shr,
    Path(project): Path<String>,
    query: Query,
) -> GcpResult<Response> {
    list_ops(
        &shared,
        &format!("projects/{project}/global/operations"),
        &query,
    )
}

async fn get_region(
    AxumState(shared): Shr,
    Path((project, region, operation)): Path<(String, String, String)>,
) -> GcpResult<Response> {
    super::check_region(&region)?;
    get_op(
        &shared,
        &format!("projects/{project}/regions/{region}/operations/{operation}"),
    )
}

async fn delete_region(
    AxumState(shared): Shr,
    Path((project, region, operation)): Path<(String, String, String)>,
) -> GcpResult<Response> {
    super::check_region(&region)?;
    delete_op(
        &shared,
        &format!("projects/{project}/regions/{region}/operations/{operation}"),
    )
}

async fn wait_region(
    AxumState(shared): Shr,
    Path((project, region, operation)): Path<(String, String, String)>,
) -> GcpResult<Response> {
    super::check_region(&region)?;
    wait_op(
        shared,
        format!("projects/{project}/regions/{region}/operations/{operation}"),
    )
    .await
}

async fn list_region(
    AxumState(shared): Shr,
    Path((project, region)): Path<(String, String)>,
    query: Query,
) -> GcpResult<Response> {
    super::check_region(&region)?;
    list_ops(
        &shared,
        &format!("projects/{project}/regions/{region}/operations"),
        &query,
    )
}

async fn get_zone(
    AxumState(shared): Shr,
    Path((project, zone, operation)): Path<(String, String, String)>,
) -> GcpResult<Response> {
    super::check_zone(&zone)?;
    get_op(
        &shared,
        &format!("projects/{project}/zones/{zone}/operations/{operation}"),
    )
}

async fn delete_zone(
    AxumState(shared): Shr,
    Path((project, zone, operation)): Path<(String, String, String)>,
) -> GcpResult<Response> {
    super::check_zone(&zone)?;
    delete_op(
        &shared,
        &format!("projects/{project}/zones/{zone}/operations/{operation}"),
    )
}

async fn wait_zone(
    AxumState(shared): Shr,
    Path((project, zone, operation)): Path<(String, String, String)>,
) -> GcpResult<Response> {
    super::check_zone(&zone)?;
    wait_op(
        shared,
        format!("projects/{project}/zones/{zone}/operations/{operation}"),
    )
    .await
}

async fn list_zone(
    AxumState(shared): Shr,
    Path((project, zone)): Path<(String, String)>,
    query: Query,
) -> GcpResult<Response> {
    super::check_zone(&zone)?;
    list_ops(
        &shared,
        &format!("projects/{project}/zones/{zone}/operations"),
        &query,
    )
}

/// `GET projects/p/aggregated/operations`: every scope, one page at a time; a scope with nothing
/// on the page carries a warning.
async fn aggregated(
    AxumState(shared): Shr,
    Path(project): Path<String>,
    query: Query,
) -> GcpResult<Response> {
    shared.read_world(|world, _| {
        let mut scopes = vec!["global".to_string()];
        for (region, zones) in geo::REGIONS {
            scopes.push(format!("regions/{region}"));
            scopes.extend(zones.iter().map(|z| format!("zones/{z}")));
        }
        let scoped = scopes
            .into_iter()
            .map(|scope| {
                let items = ops_under(world, &format!("projects/{project}/{scope}/operations/"));
                (scope, items)
            })
            .collect();
        super::aggregated_page(
            "compute#operationAggregatedList",
            "operations",
            &project,
            scoped,
            &query,
            crate::paging::cap(&shared),
        )
    })
}

impl State {
    /// Operations not yet DONE (for tests and the inventory).
    pub fn pending_operations(&self) -> usize {
        self.operations.values().filter(|op| !op.finished).count()
    }
}
