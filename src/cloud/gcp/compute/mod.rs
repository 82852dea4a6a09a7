//! Compute Engine: VPC networks, subnetworks, firewall rules, Cloud Routers with their Cloud NAT,
//! and group placement (resource) policies, through the `google-cloud-compute-v1` REST clients;
//! reservations, quotas and machine types are only read. Each kind has its adapter (`NetworkAdapter` ...,
//! listed by [`adapters`]), sharing one [`ComputeAdapter`]: the clients, the `requestId`s and the
//! operation polling.
//!
//! Request bodies are built as the API's JSON and turned into the crate's models with serde (the
//! models serialize exactly as the REST API spells them); live resources are turned back into JSON
//! the same way and projected onto the graph's spec fields (`project_*` in the submodules).
//!
//! Every mutation returns a Compute operation. [`OperationRef::name`] holds the operation's
//! relative path (`projects/p/global/operations/op` or `projects/p/regions/r/operations/op`), which
//! [`ComputeAdapter::poll_operation`] turns back into one GET on `GlobalOperations` or `RegionOperations`.
//! A failed operation is `DONE` with `error`; it becomes [`OpStatus::Failed`]. A `DONE` operation's
//! `insertTime` (or, without one, `startTime`) and `endTime` tell how long it ran
//! ([`crate::cloud::optime`]).
//!
//! Mutations carry a `requestId` (a UUID) that stays the same for every retry of the same call in
//! this process, so a retried insert whose first answer was lost is deduplicated by Compute
//! ([`RequestIds`]). The ids are forgotten when the opposite call is made (a delete forgets the
//! create's id), so a resource destroyed and created again gets a fresh create.

mod firewall;
mod network;
mod router;

use super::{GcpConfig, classify_gax, classify_status};
use crate::cloud::Provider;
use crate::cloud::{
    CloudError, CloudResult, ErrorClass, OpStatus, Polled, Settle, Started, Target, UpdateStep,
};
use crate::resource::FieldDiff;
use crate::resource::OperationRef;
use crate::resource::kinds::firewall::FirewallField;
use crate::resource::kinds::network::NetworkField;
use crate::resource::kinds::quotas::{MachineTypeSpec, QuotasSpec};
use crate::resource::kinds::reservation::ReservationSpec;
use crate::resource::kinds::router::RouterField;
use crate::resource::kinds::subnetwork::SubnetworkField;
use crate::resource::{Api, Kind, Observed};
use google_cloud_compute_v1::client::{
    Firewalls, GlobalOperations, MachineTypes, Networks, Projects, RegionOperations, Regions,
    Reservations, ResourcePolicies, Routers, Subnetworks,
};
use google_cloud_compute_v1::model;
use google_cloud_gax::paginator::Paginator as _;
use parking_lot::Mutex;
use serde_json::Value;
use std::collections::HashMap;
use std::sync::Arc;

/// The Compute clients a3ctl uses, built once.
pub struct ComputeAdapter {
    networks: Networks,
    subnetworks: Subnetworks,
    firewalls: Firewalls,
    routers: Routers,
    policies: ResourcePolicies,
    reservations: Reservations,
    regions: Regions,
    projects: Projects,
    machine_types: MachineTypes,
    global_ops: GlobalOperations,
    region_ops: RegionOperations,
    request_ids: RequestIds,
}

macro_rules! build_client {
    ($client:ty, $config:expr, $creds:expr) => {{
        super::client!(
            $client,
            $creds.clone(),
            &$config.endpoints.compute,
            "Compute Engine"
        )
    }};
}

impl ComputeAdapter {
    pub async fn new(config: &GcpConfig) -> CloudResult<ComputeAdapter> {
        let creds = config.credentials()?;
        Ok(ComputeAdapter {
            networks: build_client!(Networks, config, creds),
            subnetworks: build_client!(Subnetworks, config, creds),
            firewalls: build_client!(Firewalls, config, creds),
            routers: build_client!(Routers, config, creds),
            policies: build_client!(ResourcePolicies, config, creds),
            reservations: build_client!(Reservations, config, creds),
            regions: build_client!(Regions, config, creds),
            projects: build_client!(Projects, config, creds),
            machine_types: build_client!(MachineTypes, config, creds),
            global_ops: build_client!(GlobalOperations, config, creds),
            region_ops: build_client!(RegionOperations, config, creds),
            request_ids: RequestIds::default(),
        })
    }
}

/// Where a Compute resource is, parsed from its id (`projects/p/global/networks/n`,
/// `projects/p/regions/r/subnetworks/s`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Loc {
    pub project: String,
    /// `None` for global and zonal resources.
    pub region: Option<String>,
    /// The zone of a zonal resource (a reservation).
    pub zone: Option<String>,
    pub name: String,
}

impl Loc {
    pub fn parse(id: &str) -> CloudResult<Loc> {
        let rel = relative(id);
        let parts: Vec<&str> = rel.split('/').collect();
        match parts.as_slice() {
            ["projects", p, "global", _, name] => Ok(Loc {
                project: p.to_string(),
                region: None,
                zone: None,
                name: name.to_string(),
            }),
            ["projects", p, "regions", r, _, name] => Ok(Loc {
                project: p.to_string(),
                region: Some(r.to_string()),
                zone: None,
                name: name.to_string(),
            }),
            ["projects", p, "zones", z, _, name] => Ok(Loc {
                project: p.to_string(),
                region: None,
                zone: Some(z.to_string()),
                name: name.to_string(),
            }),
            _ => Err(CloudError::new(
                ErrorClass::Invalid,
                format!("`{id}` is not a Compute Engine resource name"),
            )),
        }
    }

    /// The region of a regional resource.
    pub fn region(&self) -> CloudResult<&str> {
        self.region.as_deref().ok_or_else(|| {
            CloudError::new(
                ErrorClass::Invalid,
                format!("`{}` should be a regional resource", self.name),
            )
        })
    }

    /// The network reference Compute accepts in request bodies.
    pub fn network_ref(&self, network: &str) -> String {
        format!("projects/{}/global/networks/{network}", self.project)
    }
}

/// The part of a Compute URL from `projects/` on (a relative path is returned as is).
fn relative(url: &str) -> &str {
    match url.find("projects/") {
        Some(i) => &url[i..],
        None => url,
    }
}

/// The last segment of a URL or path (`.../global/networks/n` → `n`).
pub(crate) fn last_segment(url: &str) -> &str {
    url.rsplit('/').next().unwrap_or(url)
}

/// JSON → a Compute model (request bodies).
pub(crate) fn to_model<T: serde::de::DeserializeOwned>(body: Value) -> CloudResult<T> {
    serde_json::from_value(body).map_err(|e| {
        CloudError::new(
            ErrorClass::Invalid,
            format!("cannot build the Compute request body: {e}"),
        )
    })
}

/// A Compute model → JSON, as the REST API spells it.
pub(crate) fn to_json<T: serde::Serialize>(resource: &T) -> Value {
    serde_json::to_value(resource).unwrap_or(Value::Null)
}

/// `Ok(None)` for a 404, the classified error otherwise.
pub(crate) fn found<T>(
    result: Result<T, google_cloud_gax::error::Error>,
) -> CloudResult<Option<T>> {
    match result {
        Ok(v) => Ok(Some(v)),
        Err(e) => {
            let e = classify_gax(&e);
            if e.class == ErrorClass::NotFound {
                Ok(None)
            } else {
                Err(e)
            }
        }
    }
}

pub(crate) fn gax<T>(result: Result<T, google_cloud_gax::error::Error>) -> CloudResult<T> {
    result.map_err(|e| classify_gax(&e))
}

/// A string field of a JSON object, `""` when absent: for optional fields of operations and
/// errors (`code`, `message`, `statusMessage`), whose absence the callers handle.
pub(crate) fn text(v: &Value, key: &str) -> String {
    v.get(key)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string()
}

/// Turns the operation a mutation returned into something the executor can wait on.
pub(crate) fn started(op: model::Operation, loc: &Loc) -> CloudResult<Started> {
    let json = to_json(&op);
    // A call refused inside its operation may come back already DONE with an error.
    if let Some(error) = operation_error(&json) {
        return Err(error);
    }
    let name = match json.get("selfLink").and_then(Value::as_str) {
        Some(link) => relative(link).to_string(),
        None => {
            let op_name = text(&json, "name");
            let region = json
                .get("region")
                .and_then(Value::as_str)
                .map(last_segment)
                .map(str::to_string)
                .or_else(|| loc.region.clone());
            match region {
                Some(r) => format!("projects/{}/regions/{r}/operations/{op_name}", loc.project),
                None => format!("projects/{}/global/operations/{op_name}", loc.project),
            }
        }
    };
    Ok(Started::Operation(OperationRef {
        api: Api::Compute,
        name,
    }))
}

/// The classified error of a DONE operation that failed, if any.
fn operation_error(op: &Value) -> Option<CloudError> {
    let errors = op
        .get("error")
        .and_then(|e| e.get("errors"))
        .and_then(Value::as_array);
    let http = op
        .get("httpErrorStatusCode")
        .and_then(Value::as_u64)
        .and_then(|c| u16::try_from(c).ok());
    if errors.is_none_or(|e| e.is_empty()) && http.is_none() {
        return None;
    }
    let first = errors.and_then(|e| e.first());
    // An operation may fail with only an HTTP status: no code, and the message below.
    let code = first.map(|e| text(e, "code")).unwrap_or_default();
    let mut message = errors
        .map(|all| {
            all.iter()
                .map(|e| text(e, "message"))
                .filter(|m| !m.is_empty())
                .collect::<Vec<_>>()
                .join("; ")
        })
        // No messages: the fallback below names the HTTP status.
        .unwrap_or_default();
    if message.is_empty() {
        message = text(op, "httpErrorMessage");
    }
    if !code.is_empty() {
        message = format!("[{code}] {message}");
    }
    // A stockout is reported with 503, which alone would read as transient: it is not.
    let capacity = matches!(
        code.as_str(),
        "ZONE_RESOURCE_POOL_EXHAUSTED"
            | "ZONE_RESOURCE_POOL_EXHAUSTED_WITH_DETAILS"
            | "GCE_STOCKOUT"
    );
    let mut error = classify_status(if capacity { None } else { http }, &code, "", &message);
    error.http_status = http;
    Some(error)
}

/// Request ids that stay the same for the retries of one call (see the module doc).
#[derive(Default)]
pub(crate) struct RequestIds {
    ids: Mutex<HashMap<String, String>>,
    /// The call (its key in `ids`) that started each operation, by operation name.
    operations: Mutex<HashMap<String, String>>,
}

impl RequestIds {
    /// The key of call `verb` on resource `id` with `payload`.
    fn key(id: &str, verb: &str, payload: &Value) -> String {
        format!("{id}|{verb}|{payload}")
    }

    /// Records that the call `key` started operation `operation`.
    fn started(&self, operation: &str, key: String) {
        self.operations.lock().insert(operation.to_string(), key);
    }

    /// Forgets the id of the call that started `operation`, which failed: Compute answers a
    /// repeated `requestId` with the operation it started, so the call made again (once what
    /// failed it is fixed: a subnet deleted before its network) must be a new request, or it
    /// would get that failed operation back.
    fn failed(&self, operation: &str) {
        if let Some(key) = self.operations.lock().remove(operation) {
            self.forget(&key);
        }
    }

    /// Forgets the id of call `key`: the next call is a new request.
    fn forget(&self, key: &str) {
        self.ids.lock().remove(key);
    }

    /// The id of call `verb` on resource `id` with `payload`.
    pub fn get(&self, id: &str, verb: &str, payload: &Value) -> String {
        let key = Self::key(id, verb, payload);
        let mut ids = self.ids.lock();
        // A create forgets the previous delete, and a delete the previous create and updates.
        let forget: &[&str] = match verb {
            "create" => &["delete"],
            "delete" => &["create", "update"],
            _ => &[],
        };
        ids.retain(|k, _| !forget.iter().any(|f| k.starts_with(&format!("{id}|{f}"))));
        ids.entry(key)
            .or_insert_with(|| uuid::Uuid::new_v4().to_string())
            .clone()
    }
}

/// The spec values of `fields`, for update request ids.
pub(crate) fn payload(target: &Target, step: &UpdateStep) -> Value {
    let mut out = serde_json::Map::new();
    out.insert("step".into(), Value::String(step.name.clone()));
    for f in &step.fields {
        out.insert(
            f.clone(),
            target.spec.get(f).cloned().unwrap_or(Value::Null),
        );
    }
    Value::Object(out)
}

pub(crate) fn no_update(target: &Target, step: &UpdateStep) -> CloudError {
    CloudError::new(
        ErrorClass::Invalid,
        format!(
            "{} cannot be updated in place with `{}`",
            target.addr, step.name
        ),
    )
}

impl ComputeAdapter {
    /// Reads a global, regional or zonal operation once.
    pub(crate) async fn poll_operation(&self, operation: &OperationRef) -> CloudResult<Polled> {
        let rel = relative(&operation.name);
        let parts: Vec<&str> = rel.split('/').collect();
        let op = match parts.as_slice() {
            ["projects", p, "global", "operations", name] => {
                self.global_ops
                    .get()
                    .set_project(*p)
                    .set_operation(*name)
                    .send()
                    .await
            }
            ["projects", p, "regions", r, "operations", name] => {
                self.region_ops
                    .get()
                    .set_project(*p)
                    .set_region(*r)
                    .set_operation(*name)
                    .send()
                    .await
            }
            _ => {
                return Err(CloudError::new(
                    ErrorClass::Invalid,
                    format!(
                        "`{}` is not a global or regional Compute operation",
                        operation.name
                    ),
                ));
            }
        };
        let op = to_json(&gax(op)?);
        let status = text(&op, "status");
        if status != "DONE" {
            let mut progress = if status.is_empty() {
                "PENDING".to_string()
            } else {
                status
            };
            if let Some(p) = op
                .get("progress")
                .and_then(Value::as_i64)
                .filter(|p| *p > 0)
            {
                progress.push_str(&format!(" {p}%"));
            }
            let message = text(&op, "statusMessage");
            if !message.is_empty() {
                progress.push_str(&format!(": {message}"));
            }
            return Ok(OpStatus::Running {
                progress: Some(progress),
            }
            .into());
        }
        let status = match operation_error(&op) {
            Some(e) => {
                self.request_ids.failed(&text(&op, "name"));
                OpStatus::Failed(e)
            }
            None => OpStatus::Done,
        };
        Ok(Polled {
            status,
            ran: ran(&op),
        })
    }

    /// One mutation: its `requestId` (the same for every retry of the same call), the call, and
    /// the operation it started.
    async fn mutation(
        &self,
        target: &Target,
        verb: &str,
        payload: &Value,
        call: impl AsyncFnOnce(&Loc, String) -> CloudResult<model::Operation>,
    ) -> CloudResult<Started> {
        let loc = Loc::parse(&target.id)?;
        let request_id = self.request_ids.get(&target.id, verb, payload);
        let key = RequestIds::key(&target.id, verb, payload);
        let op = call(&loc, request_id).await?;
        let name = text(&to_json(&op), "name");
        let result = started(op, &loc);
        match &result {
            // Refused inside an operation that came back already DONE.
            Err(_) => self.request_ids.forget(&key),
            Ok(_) => self.request_ids.started(&name, key),
        }
        result
    }
}

/// How long a `DONE` operation took, as the user waited for it: from `insertTime` ("the time that
/// this operation was requested"), which counts the time it was `PENDING`, or `startTime` ("the
/// time that this operation was started by the server") when it has none, to `endTime` ("the time
/// that this operation was completed"), all "in RFC3339 text format"
/// (<https://cloud.google.com/compute/docs/reference/rest/v1/globalOperations>).
fn ran(op: &Value) -> Option<std::time::Duration> {
    let end = op.get("endTime").and_then(Value::as_str);
    ["insertTime", "startTime"]
        .iter()
        .find_map(|start| crate::cloud::optime::between(op.get(*start)?.as_str(), end))
}

/// Compute resources are usable once their insert is DONE; policies and reservations also report a
/// status.
fn settle(observed: &Observed) -> Settle {
    // Compute resources are usable once their insert is DONE; policies also report a status.
    match observed.outputs.get("status").and_then(Value::as_str) {
        None | Some("READY") => Settle::Ready,
        Some("EXPIRED") => Settle::Failed {
            message: "the resource policy has expired".into(),
        },
        Some(other) => Settle::Pending {
            status: other.to_string(),
        },
    }
}

/// The adapters of Compute's kinds, sharing one set of clients (and `requestId`s).
pub async fn adapters(config: &GcpConfig) -> CloudResult<Vec<(Kind, Arc<dyn Provider>)>> {
    let shared = Arc::new(ComputeAdapter::new(config).await?);
    Ok(vec![
        (Kind::Network, Arc::new(NetworkAdapter(shared.clone()))),
        (
            Kind::Subnetwork,
            Arc::new(SubnetworkAdapter(shared.clone())),
        ),
        (Kind::Firewall, Arc::new(FirewallAdapter(shared.clone()))),
        (Kind::Router, Arc::new(RouterAdapter(shared.clone()))),
        (
            Kind::ResourcePolicy,
            Arc::new(PolicyAdapter(shared.clone())),
        ),
        (Kind::Reservation, reservation_reader(shared.clone())),
        (Kind::Region, quotas_reader(shared.clone(), Kind::Region)),
        (Kind::Project, quotas_reader(shared.clone(), Kind::Project)),
        (Kind::MachineType, machine_type_reader(shared)),
    ])
}

/// `projects/P/regions/R` or `projects/P` (by `kind`) → `(P, R)`.
fn quota_scope(kind: Kind, id: &str) -> CloudResult<(String, Option<String>)> {
    let parts: Vec<&str> = id.split('/').collect();
    match (kind, parts.as_slice()) {
        (Kind::Region, ["projects", p, "regions", r]) => Ok((p.to_string(), Some(r.to_string()))),
        (Kind::Project, ["projects", p]) => Ok((p.to_string(), None)),
        _ => Err(CloudError::new(
            ErrorClass::Invalid,
            format!("`{id}` is not a Compute {kind}"),
        )),
    }
}

/// The quotas of a region (`regions.get`) or of the project (`projects.get`).
fn quotas_reader(shared: Arc<ComputeAdapter>, kind: Kind) -> Arc<dyn Provider> {
    Arc::new(crate::cloud::ReadOnly {
        read: Box::new(move |target| {
            let c = shared.clone();
            Box::pin(async move {
                let (project, region) = quota_scope(kind, &target.id)?;
                let live = match region {
                    Some(region) => found(
                        c.regions
                            .get()
                            .set_project(&project)
                            .set_region(&region)
                            .send()
                            .await,
                    )?
                    .map(|r| to_json(&r)),
                    None => found(c.projects.get().set_project(&project).send().await)?
                        .map(|p| to_json(&p)),
                };
                Ok(live
                    .map(|l| QuotasSpec::project(kind.as_str(), &l))
                    .transpose()?)
            })
        }),
        why: "a3ctl does not change quotas",
        hint: "ask for more quota in the console (IAM & Admin > Quotas) or with `gcloud beta quotas preferences create`",
    })
}

/// A zone's machine type (`machineTypes.get`, id `projects/P/zones/Z/machineTypes/M`).
fn machine_type_reader(shared: Arc<ComputeAdapter>) -> Arc<dyn Provider> {
    Arc::new(crate::cloud::ReadOnly {
        read: Box::new(move |target| {
            let c = shared.clone();
            Box::pin(async move {
                let loc = Loc::parse(&target.id)?;
                let zone = loc.zone.clone().ok_or_else(|| {
                    CloudError::new(
                        ErrorClass::Invalid,
                        format!("`{}` is not a zonal Compute Engine resource", target.id),
                    )
                })?;
                let live = found(
                    c.machine_types
                        .get()
                        .set_project(&loc.project)
                        .set_zone(zone)
                        .set_machine_type(&loc.name)
                        .send()
                        .await,
                )?;
                Ok(live
                    .map(|m| MachineTypeSpec::project(&to_json(&m)))
                    .transpose()?)
            })
        }),
        why: "machine types are Compute's catalogue",
        hint: "choose another machine type in the blueprint",
    })
}

/// What differs between Compute's kinds: their calls. Everything else — `requestId`s, the
/// operation started, polling, readiness — is the same for every kind and lives in the one
/// `Provider` implementation below.
#[async_trait::async_trait]
trait ComputeKind: Send + Sync {
    fn compute(&self) -> &ComputeAdapter;
    async fn get(&self, loc: &Loc) -> CloudResult<Option<Observed>>;
    async fn insert(
        &self,
        loc: &Loc,
        target: &Target,
        rid: String,
    ) -> CloudResult<model::Operation>;
    /// The API calls that carry out `diffs` in place, in order (none: nothing changes in place).
    fn steps(&self, diffs: &[FieldDiff]) -> Vec<UpdateStep>;
    async fn patch(
        &self,
        loc: &Loc,
        target: &Target,
        step: &UpdateStep,
        rid: String,
    ) -> CloudResult<model::Operation>;
    async fn remove(&self, loc: &Loc, rid: String) -> CloudResult<model::Operation>;
}

#[async_trait::async_trait]
impl<K: ComputeKind> Provider for K {
    async fn read(&self, target: &Target) -> CloudResult<Option<Observed>> {
        self.get(&Loc::parse(&target.id)?).await
    }
    async fn create(&self, target: &Target) -> CloudResult<Started> {
        self.compute()
            .mutation(target, "create", &target.spec, async |loc, rid| {
                self.insert(loc, target, rid).await
            })
            .await
    }
    fn update_steps(&self, _target: &Target, diffs: &[FieldDiff]) -> Vec<UpdateStep> {
        self.steps(diffs)
    }
    async fn update(&self, target: &Target, step: &UpdateStep) -> CloudResult<Started> {
        self.compute()
            .mutation(
                target,
                "update",
                &payload(target, step),
                async |loc, rid| self.patch(loc, target, step, rid).await,
            )
            .await
    }
    async fn delete(&self, target: &Target) -> CloudResult<Started> {
        self.compute()
            .mutation(target, "delete", &Value::Null, async |loc, rid| {
                self.remove(loc, rid).await
            })
            .await
    }
    async fn poll(&self, operation: &OperationRef) -> CloudResult<OpStatus> {
        Ok(self.compute().poll_operation(operation).await?.status)
    }
    async fn poll_timed(&self, operation: &OperationRef) -> CloudResult<Polled> {
        self.compute().poll_operation(operation).await
    }
    fn settle(&self, _target: &Target, observed: &Observed) -> Settle {
        settle(observed)
    }
}

/// VPC networks (`network`).
pub struct NetworkAdapter(Arc<ComputeAdapter>);

#[async_trait::async_trait]
impl ComputeKind for NetworkAdapter {
    fn compute(&self) -> &ComputeAdapter {
        &self.0
    }
    async fn get(&self, loc: &Loc) -> CloudResult<Option<Observed>> {
        self.0.read_network(loc).await
    }
    async fn insert(
        &self,
        loc: &Loc,
        target: &Target,
        rid: String,
    ) -> CloudResult<model::Operation> {
        self.0.create_network(loc, target, rid).await
    }
    fn steps(&self, diffs: &[FieldDiff]) -> Vec<UpdateStep> {
        UpdateStep::per_call(
            diffs,
            &[("patch", &[NetworkField::Mtu, NetworkField::RoutingMode])],
        )
    }
    async fn patch(
        &self,
        loc: &Loc,
        target: &Target,
        step: &UpdateStep,
        rid: String,
    ) -> CloudResult<model::Operation> {
        self.0.update_network(loc, target, step, rid).await
    }
    async fn remove(&self, loc: &Loc, rid: String) -> CloudResult<model::Operation> {
        gax(self
            .0
            .networks
            .delete()
            .set_project(&loc.project)
            .set_network(&loc.name)
            .set_request_id(rid)
            .send()
            .await)
    }
}

/// Subnetworks (`subnetwork`).
pub struct SubnetworkAdapter(Arc<ComputeAdapter>);

#[async_trait::async_trait]
impl ComputeKind for SubnetworkAdapter {
    fn compute(&self) -> &ComputeAdapter {
        &self.0
    }
    async fn get(&self, loc: &Loc) -> CloudResult<Option<Observed>> {
        self.0.read_subnetwork(loc).await
    }
    async fn insert(
        &self,
        loc: &Loc,
        target: &Target,
        rid: String,
    ) -> CloudResult<model::Operation> {
        self.0.create_subnetwork(loc, target, rid).await
    }
    fn steps(&self, diffs: &[FieldDiff]) -> Vec<UpdateStep> {
        UpdateStep::per_call(
            diffs,
            &[
                ("expandIpCidrRange", &[SubnetworkField::IpCidrRange]),
                (
                    "patch",
                    &[
                        SubnetworkField::SecondaryRanges,
                        SubnetworkField::PrivateIpGoogleAccess,
                    ],
                ),
            ],
        )
    }
    async fn patch(
        &self,
        loc: &Loc,
        target: &Target,
        step: &UpdateStep,
        rid: String,
    ) -> CloudResult<model::Operation> {
        self.0.update_subnetwork(loc, target, step, rid).await
    }
    async fn remove(&self, loc: &Loc, rid: String) -> CloudResult<model::Operation> {
        gax(self
            .0
            .subnetworks
            .delete()
            .set_project(&loc.project)
            .set_region(loc.region()?)
            .set_subnetwork(&loc.name)
            .set_request_id(rid)
            .send()
            .await)
    }
}

/// Firewall rules (`firewall`).
pub struct FirewallAdapter(Arc<ComputeAdapter>);

#[async_trait::async_trait]
impl ComputeKind for FirewallAdapter {
    fn compute(&self) -> &ComputeAdapter {
        &self.0
    }
    async fn get(&self, loc: &Loc) -> CloudResult<Option<Observed>> {
        self.0.read_firewall(loc).await
    }
    async fn insert(
        &self,
        loc: &Loc,
        target: &Target,
        rid: String,
    ) -> CloudResult<model::Operation> {
        self.0.create_firewall(loc, target, rid).await
    }
    fn steps(&self, diffs: &[FieldDiff]) -> Vec<UpdateStep> {
        UpdateStep::per_call(
            diffs,
            &[(
                "patch",
                &[
                    FirewallField::Description,
                    FirewallField::Priority,
                    FirewallField::Allowed,
                    FirewallField::SourceRanges,
                ],
            )],
        )
    }
    async fn patch(
        &self,
        loc: &Loc,
        target: &Target,
        step: &UpdateStep,
        rid: String,
    ) -> CloudResult<model::Operation> {
        self.0.update_firewall(loc, target, step, rid).await
    }
    async fn remove(&self, loc: &Loc, rid: String) -> CloudResult<model::Operation> {
        gax(self
            .0
            .firewalls
            .delete()
            .set_project(&loc.project)
            .set_firewall(&loc.name)
            .set_request_id(rid)
            .send()
            .await)
    }
}

/// Cloud Routers with their Cloud NAT (`router`).
pub struct RouterAdapter(Arc<ComputeAdapter>);

#[async_trait::async_trait]
impl ComputeKind for RouterAdapter {
    fn compute(&self) -> &ComputeAdapter {
        &self.0
    }
    async fn get(&self, loc: &Loc) -> CloudResult<Option<Observed>> {
        self.0.read_router(loc).await
    }
    async fn insert(
        &self,
        loc: &Loc,
        target: &Target,
        rid: String,
    ) -> CloudResult<model::Operation> {
        self.0.create_router(loc, target, rid).await
    }
    fn steps(&self, diffs: &[FieldDiff]) -> Vec<UpdateStep> {
        UpdateStep::per_call(diffs, &[("patch", &[RouterField::Nat])])
    }
    async fn patch(
        &self,
        loc: &Loc,
        target: &Target,
        step: &UpdateStep,
        rid: String,
    ) -> CloudResult<model::Operation> {
        self.0.update_router(loc, target, step, rid).await
    }
    async fn remove(&self, loc: &Loc, rid: String) -> CloudResult<model::Operation> {
        gax(self
            .0
            .routers
            .delete()
            .set_project(&loc.project)
            .set_region(loc.region()?)
            .set_router(&loc.name)
            .set_request_id(rid)
            .send()
            .await)
    }
}

/// Group placement policies (`resource_policy`): created and deleted, never changed.
pub struct PolicyAdapter(Arc<ComputeAdapter>);

#[async_trait::async_trait]
impl ComputeKind for PolicyAdapter {
    fn compute(&self) -> &ComputeAdapter {
        &self.0
    }
    async fn get(&self, loc: &Loc) -> CloudResult<Option<Observed>> {
        self.0.read_policy(loc).await
    }
    async fn insert(
        &self,
        loc: &Loc,
        target: &Target,
        rid: String,
    ) -> CloudResult<model::Operation> {
        self.0.create_policy(loc, target, rid).await
    }
    fn steps(&self, _diffs: &[FieldDiff]) -> Vec<UpdateStep> {
        vec![]
    }
    async fn patch(
        &self,
        _loc: &Loc,
        target: &Target,
        step: &UpdateStep,
        _rid: String,
    ) -> CloudResult<model::Operation> {
        Err(no_update(target, step))
    }
    async fn remove(&self, loc: &Loc, rid: String) -> CloudResult<model::Operation> {
        gax(self
            .0
            .policies
            .delete()
            .set_project(&loc.project)
            .set_region(loc.region()?)
            .set_resource_policy(&loc.name)
            .set_request_id(rid)
            .send()
            .await)
    }
}

/// Reservations (`reservation`, `projects/P/zones/Z/reservations/R`): read only, they belong to
/// whoever bought the capacity. Zone `-` finds the reservation in whichever zone the project has it
/// (`reservations.aggregatedList` filtered by name).
fn reservation_reader(shared: Arc<ComputeAdapter>) -> Arc<dyn Provider> {
    Arc::new(crate::cloud::ReadOnly {
        read: Box::new(move |target| {
            let c = shared.clone();
            Box::pin(async move {
                let loc = Loc::parse(&target.id)?;
                let zone = loc.zone.clone().ok_or_else(|| {
                    CloudError::new(
                        ErrorClass::Invalid,
                        format!("`{}` is not a zonal Compute Engine resource", target.id),
                    )
                })?;
                let live = if zone == "-" {
                    // Zone `-`: wherever the project has it (the first zone that does), on
                    // whichever page of the aggregated list it comes.
                    let mut pages = c
                        .reservations
                        .aggregated_list()
                        .set_project(&loc.project)
                        .set_filter(format!("name = \"{}\"", loc.name))
                        .by_page();
                    let mut live = None;
                    while let Some(page) = pages.next().await {
                        let page = page.map_err(|e| classify_gax(&e))?;
                        live = page
                            .items
                            .into_values()
                            .flat_map(|scoped| scoped.reservations)
                            .find(|r| r.name.as_deref() == Some(loc.name.as_str()));
                        if live.is_some() {
                            break;
                        }
                    }
                    live
                } else {
                    found(
                        c.reservations
                            .get()
                            .set_project(&loc.project)
                            .set_zone(zone)
                            .set_reservation(&loc.name)
                            .send()
                            .await,
                    )?
                };
                Ok(live
                    .map(|r| ReservationSpec::project(&to_json(&r)))
                    .transpose()?)
            })
        }),
        why: "a3ctl never creates, changes or deletes a reservation",
        hint: "manage reservations with `gcloud compute reservations` or the console",
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn ids_and_operation_links_parse() {
        let n = Loc::parse("projects/p/global/networks/n").unwrap();
        assert_eq!(
            (n.project.as_str(), n.region, n.name.as_str()),
            ("p", None, "n")
        );
        let s =
            Loc::parse("https://www.googleapis.com/compute/v1/projects/p/regions/r/subnetworks/s")
                .unwrap();
        assert_eq!(s.region.as_deref(), Some("r"));
        assert!(Loc::parse("projects/p/zones").is_err());
        assert_eq!(last_segment("https://x/projects/p/global/networks/n"), "n");
    }

    #[test]
    fn failed_operations_are_classified() {
        let quota = json!({"status": "DONE", "httpErrorStatusCode": 403,
            "error": {"errors": [{"code": "QUOTA_EXCEEDED", "message": "Quota 'NETWORKS' exceeded.  Limit: 15.0 globally."}]}});
        assert_eq!(operation_error(&quota).unwrap().class, ErrorClass::Quota);
        let stockout = json!({"status": "DONE", "httpErrorStatusCode": 503,
            "error": {"errors": [{"code": "ZONE_RESOURCE_POOL_EXHAUSTED", "message": "The zone 'z' does not have enough resources"}]}});
        let e = operation_error(&stockout).unwrap();
        assert_eq!(e.class, ErrorClass::Capacity);
        assert_eq!(e.http_status, Some(503));
        assert!(operation_error(&json!({"status": "DONE"})).is_none());
    }

    #[test]
    fn request_ids_are_stable_for_retries_and_fresh_after_a_delete() {
        let ids = RequestIds::default();
        let spec = json!({"name": "n"});
        let a = ids.get("projects/p/global/networks/n", "create", &spec);
        assert_eq!(a, ids.get("projects/p/global/networks/n", "create", &spec));
        assert!(uuid::Uuid::parse_str(&a).is_ok());
        let d = ids.get("projects/p/global/networks/n", "delete", &Value::Null);
        assert_eq!(
            d,
            ids.get("projects/p/global/networks/n", "delete", &Value::Null)
        );
        assert_ne!(a, ids.get("projects/p/global/networks/n", "create", &spec));
    }
}
