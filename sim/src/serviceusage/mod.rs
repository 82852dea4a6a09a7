//! Service Usage v1 (`/serviceusage/v1/...`): which services each project has enabled, the
//! long-running operations that change it, and ([`enforce`]) the refusal of every call to a
//! disabled API.
//!
//! Methods, paths and shapes follow the v1 REST reference
//! (<https://cloud.google.com/service-usage/docs/reference/rest>) and its discovery document
//! (googleapis/google-api-go-client `serviceusage/v1/serviceusage-api.json`):
//!
//! | method | path |
//! |---|---|
//! | `services.get` | `GET /serviceusage/v1/projects/{p}/services/{service}` |
//! | `services.list` | `GET /serviceusage/v1/projects/{p}/services` (`filter`, `pageSize`, `pageToken`) |
//! | `services.enable` | `POST /serviceusage/v1/projects/{p}/services/{service}:enable` |
//! | `services.disable` | `POST /serviceusage/v1/projects/{p}/services/{service}:disable` |
//! | `services.batchEnable` | `POST /serviceusage/v1/projects/{p}/services:batchEnable` |
//! | `operations.get` | `GET /serviceusage/v1/operations/{operation}` |
//!
//! **Projects are implicit**: any project id has the services the simulator serves enabled
//! ([`DEFAULT_ENABLED`]) until someone changes them; only changed projects are stored. `{p}` may
//! be the project id or its number (the configured one, else [`number_of`]; see [`number`] and
//! [`resolve`]); answers always name the project by number
//! (`projects/123/services/compute.googleapis.com`), as Google does.
//!
//! **Service** (`services.get`, `services.list`): `name`, `config` (`name` and `title` only; the
//! rest of the service configuration — documentation, quota, authentication, usage,
//! monitoring — is left out), `state` (`ENABLED` / `DISABLED`), `parent`. `services.list` knows
//! the services of the catalogue ([`catalogue`]), sorted by name; `filter` takes exactly
//! `state:ENABLED` or `state:DISABLED` (what `gcloud services list --enabled` sends), `pageSize`
//! defaults to 50 and cannot exceed 200, `nextPageToken` is set while more remain.
//!
//! **Enable / disable** answer a `google.longrunning.Operation` named
//! `operations/acf.p2-<number>-<uuid>` (enable, batchEnable) or `operations/acat.p2-<number>-<uuid>`
//! (disable) — the prefixes of the names `gcloud services enable` and public disable answers print;
//! their meaning is Google's — with the metadata and response types of the real answers recorded in
//! GoogleCloudPlatform/k8s-config-connector `mockgcp/mockserviceusage/testdata/service/crud/_http.log`:
//! enable's metadata is `{"@type": "type.googleapis.com/google.protobuf.Empty", "value": {}}`,
//! batchEnable's `type.googleapis.com/google.api.serviceusage.v1.OperationMetadata`; done, the
//! response is an `EnableServiceResponse` / `DisableServiceResponse` (`service`) or
//! `BatchEnableServicesResponse` (`services`) with each service's `name`, `parent` and `state`. The
//! change takes effect when the operation is done (latency keys `serviceusage.service.enable` and
//! `serviceusage.service.disable`); gcloud polls `operations.get` until then. A call that changes
//! nothing (the service is already in that state) answers the done operation
//! `operations/noop.DONE_OPERATION`, which `operations.get` does not know (404), as client code
//! written against the real API reports. The discovery document says disabling a service that is
//! not enabled is `FAILED_PRECONDITION`; clients report the noop operation instead, which the
//! simulator follows.
//!
//! Enabling a service enables what it depends on; batchEnable (at most 20 `serviceIds`) is atomic.
//! Disabling follows `DisableServiceRequest`:
//! - enabled services that depend on it: 400 `FAILED_PRECONDITION` `The service S is depended on
//!   by the following active service(s): D1,D2; Please specify disable_dependent_services=true if
//!   you want to proceed with disabling all services.` with `PreconditionFailure`
//!   `?error_code=100001&service_name=S&services=D1&services=D2` and `ErrorInfo`
//!   `COMMON_SU_SERVICE_HAS_DEPENDENT_SERVICES` (the body quoted in hashicorp/terraform-provider-google
//!   reports); with `disableDependentServices: true` they are disabled together;
//! - `checkIfServiceHasUsage: CHECK` (what `gcloud services disable` sends without `--force`) and
//!   the service or a dependent being disabled with it has usage: 400 `FAILED_PRECONDITION` `The
//!   service S has usage in the last 30 days. Please specify check_if_service_has_usage=SKIP if you
//!   want to proceed with disabling the service.` (swiss-ai-center/a-guide-to-mlops#209,
//!   GoogleCloudPlatform/magic-modules#11494: `PreconditionFailure` `?error_code=100002&service_name=S`;
//!   the `ErrorInfo` reason `COMMON_SU_SERVICE_HAS_USAGE` is the one scripts name, its metadata is
//!   guessed by analogy). The simulator's reading of "usage": the project called the API in the last
// GUESS(serviceusage-usage-errorinfo): the metadata of the `COMMON_SU_SERVICE_HAS_USAGE` ErrorInfo of a refused disable, by analogy
//!   30 simulated days, or holds resources of it now (networks, clusters, instances, repositories,
//!   buckets) — so with clusters in the project, disabling `container.googleapis.com` needs
//!   `--force`. With `SKIP` the service is disabled and its resources stay as they are, unreachable
//!   through the API until it is enabled again (Google warns that they may be deleted; the
//!   simulator deletes nothing, and GKE clusters' Kubernetes API servers keep answering).
//!
//! A service name that is not in the catalogue gets Google's answer to a service that does not
//! exist, for every method: 403 `PERMISSION_DENIED` `Not found or permission denied for
//! service(s): X.` with `PreconditionFailure` `?error_code=220002&services=X` and `ErrorInfo`
//! `SERVICE_CONFIG_NOT_FOUND_OR_PERMISSION_DENIED` (domain `serviceusage.googleapis.com`, metadata
//! `services`), as quoted in public error reports of `gcloud services enable` and Terraform.
//!
//! Service Usage's own calls are never refused: their consumer is the caller's quota project,
//! which the simulator does not model.

mod catalogue;
pub mod enforce;

pub use catalogue::{CATALOGUE, DEFAULT_ENABLED, ServiceInfo, dependents, info, with_dependencies};

use crate::clock::SimTime;
use crate::error::{GcpError, GcpResult};
use crate::http::{self, Query};
use crate::shared::Ctx;
use crate::shared::Shared;
pub use crate::state::serviceusage::{Method, Operation, State};
use crate::world::World;
use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, State as AxumState};
use axum::response::Response;
use axum::routing::get;
use serde_json::{Value, json};
use std::collections::BTreeSet;
use std::sync::Arc;

/// Latency key of enable and batchEnable operations.
pub const ENABLE_LATENCY: &str = "serviceusage.service.enable";
/// Latency key of disable operations.
pub const DISABLE_LATENCY: &str = "serviceusage.service.disable";
/// How far back `checkIfServiceHasUsage: CHECK` looks.
pub const USAGE_WINDOW_MS: u64 = 30 * 24 * 3600 * 1000;
/// The name of the done operation answered when nothing changes.
pub const NOOP_OPERATION: &str = "operations/noop.DONE_OPERATION";
/// Most services one batchEnable may name.
pub const MAX_BATCH: usize = 20;

const EMPTY_TYPE: &str = "type.googleapis.com/google.protobuf.Empty";
const METADATA_TYPE: &str = "type.googleapis.com/google.api.serviceusage.v1.OperationMetadata";
const ENABLE_RESPONSE: &str =
    "type.googleapis.com/google.api.serviceusage.v1.EnableServiceResponse";
const DISABLE_RESPONSE: &str =
    "type.googleapis.com/google.api.serviceusage.v1.DisableServiceResponse";
const BATCH_RESPONSE: &str =
    "type.googleapis.com/google.api.serviceusage.v1.BatchEnableServicesResponse";

impl Method {
    fn enables(self) -> bool {
        self != Method::Disable
    }
}

/// The number of a project in `world`: its configured number, else [`number_of`].
pub fn number(world: &World, project: &str) -> String {
    world.project_number(project)
}

/// The key of the project a path names ([`World::resolve_project`]).
pub fn resolve(world: &World, segment: &str) -> String {
    world.resolve_project(segment)
}

pub use crate::world::number_of;

impl State {
    /// The services `project` has enabled now.
    pub fn enabled(&self, project: &str) -> BTreeSet<String> {
        match self.projects.get(project) {
            Some(set) => set.clone(),
            None => DEFAULT_ENABLED.iter().map(|s| s.to_string()).collect(),
        }
    }

    pub fn is_enabled(&self, project: &str, service: &str) -> bool {
        match self.projects.get(project) {
            Some(set) => set.contains(service),
            None => DEFAULT_ENABLED.contains(&service),
        }
    }

    fn set(&mut self, project: &str, services: &[String], enabled: bool) {
        let mut set = self.enabled(project);
        for s in services {
            if enabled {
                set.insert(s.clone());
            } else {
                set.remove(s);
            }
        }
        self.projects.insert(project.to_string(), set);
    }

    /// Records that `project` called `service` at `now`.
    pub fn note_usage(&mut self, project: &str, service: &str, now: SimTime) {
        self.last_used
            .entry(project.to_string())
            .or_default()
            .insert(service.to_string(), now);
    }

    /// When `project` last called `service`.
    pub fn last_used(&self, project: &str, service: &str) -> Option<SimTime> {
        self.last_used.get(project)?.get(service).copied()
    }
}

/// True when `project` holds resources of the API behind `service`.
fn holds_resources(world: &World, project: &str, service: &str) -> bool {
    let prefix = format!("projects/{project}/");
    let under = |key: &String| key.starts_with(&prefix);
    match service {
        "compute.googleapis.com" => world.compute.resources.keys().any(under),
        "container.googleapis.com" => world.container.clusters.keys().any(under),
        "file.googleapis.com" => world.file.instances.keys().any(under),
        "artifactregistry.googleapis.com" => world.artifactregistry.repositories.keys().any(under),
        "iam.googleapis.com" => world.iam.accounts.values().any(|a| a.project == project),
        "storage-api.googleapis.com" => {
            world.storage.buckets.values().any(|b| b.project == project)
        }
        _ => false,
    }
}

/// Usage as `checkIfServiceHasUsage: CHECK` sees it: a call in the last 30 days, or resources.
pub fn has_usage(world: &World, project: &str, service: &str, now: SimTime) -> bool {
    let recent = world
        .serviceusage
        .last_used(project, service)
        .is_some_and(|t| now.since(t) < USAGE_WINDOW_MS);
    recent || holds_resources(world, project, service)
}

/// Routes of this API (full paths, including the simulator's prefix).
pub fn router() -> Router<Arc<Shared>> {
    let base = "/serviceusage/v1/projects/{project}";
    Router::new()
        .route(&format!("{base}/services"), get(list))
        .route(
            &format!("{base}/services:batchEnable"),
            axum::routing::post(batch_enable),
        )
        .route(
            &format!("{base}/services/{{service}}"),
            get(get_service).post(service_method),
        )
        .route(
            "/serviceusage/v1/operations/{operation}",
            get(get_operation),
        )
}

/// Finishes due operations; returns true if anything changed.
pub fn tick(world: &mut World, cx: &Ctx) -> bool {
    let mut due: Vec<(SimTime, u64, String)> = world
        .serviceusage
        .operations
        .values()
        .filter(|o| !o.done && o.done_at <= cx.now)
        .map(|o| (o.done_at, o.seq, o.name.clone()))
        .collect();
    due.sort();
    for (_, _, name) in &due {
        let state = &mut world.serviceusage;
        let Some(op) = state.operations.get_mut(name) else {
            continue;
        };
        op.done = true;
        let (project, changes, on) = (op.project.clone(), op.changes.clone(), op.method.enables());
        state.set(&project, &changes, on);
    }
    !due.is_empty()
}

/// This API's part of the admin inventory: the services of every changed project and every
/// operation (usage is left out: it moves with every read).
pub fn inventory(world: &World) -> Value {
    let state = &world.serviceusage;
    json!({
        "projects": state.projects.iter().map(|(p, s)| (p.clone(), json!(s))).collect::<serde_json::Map<_, _>>(),
        "operations": state.operations.values().map(|op| operation_json(world, op)).collect::<Vec<_>>(),
    })
}

/// Google's answer to service names that do not exist.
pub fn not_found_services(names: &[&str]) -> GcpError {
    let list = names.join(",");
    let subject = names.iter().fold("?error_code=220002".to_string(), |s, n| {
        format!("{s}&services={n}")
    });
    GcpError::new(
        403,
        "PERMISSION_DENIED",
        "forbidden",
        format!("Not found or permission denied for service(s): {list}."),
    )
    .with_detail(json!({
        "@type": "type.googleapis.com/google.rpc.PreconditionFailure",
        "violations": [{ "subject": subject, "type": "googleapis.com" }],
    }))
    .with_detail(json!({
        "@type": "type.googleapis.com/google.rpc.ErrorInfo",
        "reason": "SERVICE_CONFIG_NOT_FOUND_OR_PERMISSION_DENIED",
        "domain": "serviceusage.googleapis.com",
        "metadata": { "services": list },
    }))
}

fn has_dependents(service: &str, enabled: &[&str]) -> GcpError {
    let list = enabled.join(",");
    let subject = enabled.iter().fold(
        format!("?error_code=100001&service_name={service}"),
        |s, n| format!("{s}&services={n}"),
    );
    GcpError::new(
        400,
        "FAILED_PRECONDITION",
        "failedPrecondition",
        format!(
            "The service {service} is depended on by the following active service(s): {list}; Please specify disable_dependent_services=true if you want to proceed with disabling all services."
        ),
    )
    .with_detail(json!({
        "@type": "type.googleapis.com/google.rpc.PreconditionFailure",
        "violations": [{ "subject": subject, "type": "googleapis.com" }],
    }))
    .with_detail(json!({
        "@type": "type.googleapis.com/google.rpc.ErrorInfo",
        "reason": "COMMON_SU_SERVICE_HAS_DEPENDENT_SERVICES",
        "domain": "serviceusage.googleapis.com",
        "metadata": { "service_name": service, "services": list },
    }))
}

fn has_usage_error(service: &str) -> GcpError {
    GcpError::new(
        400,
        "FAILED_PRECONDITION",
        "failedPrecondition",
        format!(
            "The service {service} has usage in the last 30 days. Please specify check_if_service_has_usage=SKIP if you want to proceed with disabling the service."
        ),
    )
    .with_detail(json!({
        "@type": "type.googleapis.com/google.rpc.PreconditionFailure",
        "violations": [{
            "subject": format!("?error_code=100002&service_name={service}"),
            "type": "googleapis.com",
        }],
    }))
    .with_detail(json!({
        "@type": "type.googleapis.com/google.rpc.ErrorInfo",
        "reason": "COMMON_SU_SERVICE_HAS_USAGE",
        "domain": "serviceusage.googleapis.com",
        "metadata": { "service_name": service },
    }))
}

/// How `services.list` pages ([`crate::paging`]): `pageSize` 50 by default, at most 200 (a larger
/// one is refused), tokens in catalogue order.
const PAGING: crate::paging::Rules = crate::paging::Rules {
    size_param: "pageSize",
    default: 50,
    max: 200,
    too_large: Some(|raw| bad_request(format!("Requested page size {raw} cannot exceed 200."))),
    bad_size: |raw| {
        bad_request(format!(
            "Invalid value at 'page_size' (TYPE_INT32), \"{raw}\""
        ))
    },
    bad_token: |token| bad_request(format!("Invalid page token \"{token}\".")),
};

fn bad_request(message: impl Into<String>) -> GcpError {
    GcpError::invalid_reason("badRequest", message)
}

/// A `Service` as `services.get` and `services.list` answer it.
pub fn service_json(number: &str, info: &ServiceInfo, enabled: bool) -> Value {
    json!({
        "name": format!("projects/{number}/services/{}", info.name),
        "config": { "name": info.name, "title": info.title },
        "state": if enabled { "ENABLED" } else { "DISABLED" },
        "parent": format!("projects/{number}"),
    })
}

/// A `Service` as an operation's response carries it.
fn brief(number: &str, service: &str, enabled: bool) -> Value {
    json!({
        "name": format!("projects/{number}/services/{service}"),
        "parent": format!("projects/{number}"),
        "state": if enabled { "ENABLED" } else { "DISABLED" },
    })
}

fn response_json(number: &str, method: Method, requested: &[String]) -> Value {
    match method {
        Method::Enable => json!({
            "@type": ENABLE_RESPONSE,
            "service": brief(number, &requested[0], true),
        }),
        Method::Disable => json!({
            "@type": DISABLE_RESPONSE,
            "service": brief(number, &requested[0], false),
        }),
        Method::BatchEnable => json!({
            "@type": BATCH_RESPONSE,
            "services": requested.iter().map(|s| brief(number, s, true)).collect::<Vec<_>>(),
        }),
    }
}

/// An operation as `operations.get` and the enable/disable calls answer it.
pub fn operation_json(world: &World, op: &Operation) -> Value {
    let metadata = match op.method {
        Method::BatchEnable => json!({ "@type": METADATA_TYPE }),
        _ => json!({ "@type": EMPTY_TYPE, "value": {} }),
    };
    let mut out = json!({ "name": op.name, "metadata": metadata });
    if op.done {
        out["done"] = json!(true);
        out["response"] = response_json(&number(world, &op.project), op.method, &op.requested);
    }
    out
}

/// The done operation of a call that changes nothing.
fn noop(number: &str, method: Method, requested: &[String]) -> Response {
    http::json(json!({
        "name": NOOP_OPERATION,
        "done": true,
        "response": response_json(number, method, requested),
    }))
}

/// Starts an operation; answers it.
fn start(
    world: &mut World,
    cx: &Ctx,
    project: &str,
    method: Method,
    requested: Vec<String>,
    changes: Vec<String>,
) -> Response {
    let number = number(world, project);
    let prefix = if method == Method::Disable {
        "acat"
    } else {
        "acf"
    };
    let uuid = format!(
        "{}-{}-{}-{}-{}",
        world.hex(8),
        world.hex(4),
        world.hex(4),
        world.hex(4),
        world.hex(12)
    );
    let latency = if method.enables() {
        ENABLE_LATENCY
    } else {
        DISABLE_LATENCY
    };
    let duration = world.duration_ms(cx, latency);
    let op = Operation {
        name: format!("operations/{prefix}.p2-{number}-{uuid}"),
        project: project.to_string(),
        method,
        requested,
        changes,
        seq: world.next_seq(),
        created: cx.now,
        done_at: cx.now.plus_ms(duration),
        done: false,
    };
    let answer = operation_json(world, &op);
    world.serviceusage.operations.insert(op.name.clone(), op);
    http::json(answer)
}

async fn get_service(
    AxumState(shared): AxumState<Arc<Shared>>,
    Path((project, service)): Path<(String, String)>,
) -> GcpResult<Response> {
    let info = info(&service).ok_or_else(|| not_found_services(&[&service]))?;
    shared.read_world(|world, _| {
        let project = resolve(world, &project);
        let enabled = world.serviceusage.is_enabled(&project, info.name);
        Ok(http::json(service_json(
            &number(world, &project),
            info,
            enabled,
        )))
    })
}

async fn list(
    AxumState(shared): AxumState<Arc<Shared>>,
    Path(project): Path<String>,
    query: Query,
) -> GcpResult<Response> {
    let wanted = match query.get("filter").map(str::trim) {
        None | Some("") => None,
        Some("state:ENABLED") => Some(true),
        Some("state:DISABLED") => Some(false),
        Some(other) => {
            return Err(bad_request(format!(
                "Invalid filter \"{other}\": the allowed filters are state:ENABLED and state:DISABLED."
            )));
        }
    };
    shared.read_world(|world, _| {
        let project = resolve(world, &project);
        let number = number(world, &project);
        let all: Vec<(String, Value)> = CATALOGUE
            .iter()
            .enumerate()
            .filter_map(|(at, info)| {
                let enabled = world.serviceusage.is_enabled(&project, info.name);
                (wanted.is_none() || wanted == Some(enabled)).then(|| {
                    (
                        crate::paging::numbered(at as u64),
                        service_json(&number, info, enabled),
                    )
                })
            })
            .collect();
        let page = crate::paging::page(&PAGING, &query, crate::paging::cap(&shared), all)?;
        let mut out = json!({});
        if !page.items.is_empty() {
            out["services"] = json!(page.items);
        }
        if let Some(next) = page.next {
            out["nextPageToken"] = json!(next);
        }
        Ok(http::json(out))
    })
}

/// `POST .../services/{service}:enable|:disable` (axum sees `{service}` as `<name>:<verb>`).
async fn service_method(
    AxumState(shared): AxumState<Arc<Shared>>,
    Path((project, service)): Path<(String, String)>,
    body: Bytes,
) -> GcpResult<Response> {
    let body = http::parse_json(&body)?;
    if let Some(service) = service.strip_suffix(":enable") {
        enable(&shared, &project, service)
    } else if let Some(service) = service.strip_suffix(":disable") {
        disable(&shared, &project, service, &body)
    } else {
        Err(GcpError::unrouted())
    }
}

fn enable(shared: &Shared, project: &str, service: &str) -> GcpResult<Response> {
    let info = info(service).ok_or_else(|| not_found_services(&[service]))?;
    shared.with_world(|world, cx| {
        let project = resolve(world, project);
        let changes: Vec<String> = with_dependencies(info.name)
            .into_iter()
            .filter(|s| !world.serviceusage.is_enabled(&project, s))
            .map(str::to_string)
            .collect();
        let requested = vec![info.name.to_string()];
        if changes.is_empty() {
            return Ok(noop(&number(world, &project), Method::Enable, &requested));
        }
        Ok(start(
            world,
            cx,
            &project,
            Method::Enable,
            requested,
            changes,
        ))
    })
}

/// `checkIfServiceHasUsage`: true for `CHECK`.
fn check_usage(body: &Value) -> GcpResult<bool> {
    match body.get("checkIfServiceHasUsage") {
        None | Some(Value::Null) => Ok(false),
        Some(v) if v == "CHECK" || v == 2 => Ok(true),
        Some(v)
            if v == "SKIP" || v == 1 || v == "CHECK_IF_SERVICE_HAS_USAGE_UNSPECIFIED" || v == 0 =>
        {
            Ok(false)
        }
        Some(v) => Err(bad_request(format!(
            "Invalid value at 'check_if_service_has_usage' (type.googleapis.com/google.api.serviceusage.v1.DisableServiceRequest.CheckIfServiceHasUsage), {v}"
        ))),
    }
}

fn disable(shared: &Shared, project: &str, service: &str, body: &Value) -> GcpResult<Response> {
    let info = info(service).ok_or_else(|| not_found_services(&[service]))?;
    let with_dependents = match body.get("disableDependentServices") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(v) => {
            return Err(bad_request(format!(
                "Invalid value at 'disable_dependent_services' (TYPE_BOOL), {v}"
            )));
        }
    };
    let check = check_usage(body)?;
    shared.with_world(|world, cx| {
        let project = resolve(world, project);
        let requested = vec![info.name.to_string()];
        if !world.serviceusage.is_enabled(&project, info.name) {
            return Ok(noop(&number(world, &project), Method::Disable, &requested));
        }
        let active: Vec<&str> = dependents(info.name)
            .into_iter()
            .filter(|d| world.serviceusage.is_enabled(&project, d))
            .collect();
        if !active.is_empty() && !with_dependents {
            return Err(has_dependents(info.name, &active));
        }
        let mut changes = vec![info.name];
        changes.extend(active);
        if let Some(used) = changes
            .iter()
            .find(|s| check && has_usage(world, &project, s, cx.now))
        {
            return Err(has_usage_error(used));
        }
        let changes = changes.into_iter().map(str::to_string).collect();
        Ok(start(
            world,
            cx,
            &project,
            Method::Disable,
            requested,
            changes,
        ))
    })
}

async fn batch_enable(
    AxumState(shared): AxumState<Arc<Shared>>,
    Path(project): Path<String>,
    body: Bytes,
) -> GcpResult<Response> {
    let body = http::parse_json(&body)?;
    let ids: Vec<String> = match body.get("serviceIds") {
        None | Some(Value::Null) => vec![],
        Some(Value::Array(items)) => items
            .iter()
            .map(|v| {
                v.as_str().map(str::to_string).ok_or_else(|| {
                    bad_request(format!("Invalid value at 'service_ids' (TYPE_STRING), {v}"))
                })
            })
            .collect::<GcpResult<_>>()?,
        Some(v) => {
            return Err(bad_request(format!(
                "Invalid value at 'service_ids' (TYPE_STRING), {v}"
            )));
        }
    };
    if ids.is_empty() {
        return Err(bad_request("No service ids were given to enable."));
    }
    if ids.len() > MAX_BATCH {
        return Err(bad_request(format!(
            "A single request can enable a maximum of {MAX_BATCH} services at a time; {} were given.",
            ids.len()
        )));
    }
    let unknown: Vec<&str> = ids
        .iter()
        .map(String::as_str)
        .filter(|s| info(s).is_none())
        .collect();
    if !unknown.is_empty() {
        return Err(not_found_services(&unknown));
    }
    shared.with_world(|world, cx| {
        let project = resolve(world, &project);
        let mut changes: Vec<String> = Vec::new();
        for id in &ids {
            for s in with_dependencies(id) {
                if !world.serviceusage.is_enabled(&project, s) && !changes.iter().any(|c| c == s) {
                    changes.push(s.to_string());
                }
            }
        }
        let mut requested: Vec<String> = Vec::new();
        for id in ids {
            if !requested.contains(&id) {
                requested.push(id);
            }
        }
        if changes.is_empty() {
            return Ok(noop(
                &number(world, &project),
                Method::BatchEnable,
                &requested,
            ));
        }
        Ok(start(
            world,
            cx,
            &project,
            Method::BatchEnable,
            requested,
            changes,
        ))
    })
}

async fn get_operation(
    AxumState(shared): AxumState<Arc<Shared>>,
    Path(operation): Path<String>,
) -> GcpResult<Response> {
    let name = format!("operations/{operation}");
    shared.read_world(|world, _| {
        world
            .serviceusage
            .operations
            .get(&name)
            .map(|op| http::json(operation_json(world, op)))
            .ok_or_else(|| GcpError::not_found(format!("Operation '{name}' not found.")))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fresh_projects_have_the_served_apis_enabled() {
        let state = State::default();
        assert!(state.is_enabled("any-project", "compute.googleapis.com"));
        assert!(state.is_enabled("any-project", "storage-api.googleapis.com"));
        assert!(!state.is_enabled("any-project", "bigquery.googleapis.com"));
        assert_eq!(state.enabled("p").len(), DEFAULT_ENABLED.len());
    }

    #[test]
    fn numbers_resolve_to_known_projects() {
        let mut state = State::default();
        state.set("my-proj", &["bigquery.googleapis.com".to_string()], true);
        let number = number_of("my-proj");
        assert_eq!(state.resolve(&number), "my-proj");
        assert_eq!(state.resolve("my-proj"), "my-proj");
        assert_eq!(state.resolve("12345"), "12345");
        assert_eq!(number_of("12345"), "12345");
    }

    #[test]
    fn errors_carry_service_usage_details() {
        let body = not_found_services(&["nosuch.googleapis.com"]).body();
        assert_eq!(body["error"]["code"], 403);
        assert_eq!(
            body["error"]["message"],
            "Not found or permission denied for service(s): nosuch.googleapis.com."
        );
        assert_eq!(
            body["error"]["details"][0]["violations"][0]["subject"],
            "?error_code=220002&services=nosuch.googleapis.com"
        );
        assert_eq!(
            body["error"]["details"][1]["reason"],
            "SERVICE_CONFIG_NOT_FOUND_OR_PERMISSION_DENIED"
        );
        let body = has_dependents("compute.googleapis.com", &["container.googleapis.com"]).body();
        assert_eq!(body["error"]["status"], "FAILED_PRECONDITION");
        assert_eq!(
            body["error"]["details"][0]["violations"][0]["subject"],
            "?error_code=100001&service_name=compute.googleapis.com&services=container.googleapis.com"
        );
    }

    #[test]
    fn worlds_saved_before_service_usage_load_with_defaults() {
        let world = World::new(1, crate::clock::default_start());
        let mut saved = serde_json::to_value(&world).unwrap();
        saved.as_object_mut().unwrap().remove("serviceusage");
        let loaded: World = serde_json::from_value(saved).unwrap();
        assert!(loaded.serviceusage.projects.is_empty());
        assert!(
            loaded
                .serviceusage
                .is_enabled("old-project", "container.googleapis.com")
        );
    }
}
