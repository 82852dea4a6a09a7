//! Cloud adapters: the one place that talks to Google Cloud and Kubernetes.
//!
//! The engine sees every API through [`Provider`]: read a resource, start a create / update /
//! delete, poll an operation. A call either finishes at once ([`Started::Done`]) or returns an
//! operation handle ([`Started::Operation`]) that the executor journals in state *before* waiting
//! on it. Errors come back classified ([`ErrorClass`], after
//! https://cloud.google.com/apis/design/errors) so the executor can decide between retrying,
//! adopting and failing without knowing any API.

pub mod fake;
pub mod gcp;
pub mod kube;
pub mod optime;
pub mod retry;

use crate::resource::FieldDiff;
use crate::resource::OperationRef;
use crate::resource::spec::KindField;
use crate::resource::{Addr, Lifecycle, Observed};
use serde_json::Value;
use std::collections::BTreeMap;

/// What an adapter needs to act on one resource.
#[derive(Debug, Clone, PartialEq)]
pub struct Target {
    pub addr: Addr,
    /// Identity in the cloud, e.g. `projects/p/global/networks/a3mega-net`.
    pub id: String,
    /// Desired spec (create, update) or last recorded spec (delete).
    pub spec: Value,
    /// Outputs recorded by the last apply, if any.
    pub outputs: Value,
    /// Recorded outputs of the resources this one depends on (a cluster's endpoint and CA for its
    /// Kubernetes objects, for instance).
    pub context: BTreeMap<Addr, Value>,
    pub lifecycle: Lifecycle,
}

impl Target {
    /// The target of a resource as `state` records it (`record` at `addr`): its recorded spec,
    /// outputs and lifecycle, with the recorded outputs of what it depends on as context.
    pub fn recorded(
        addr: &Addr,
        record: &crate::state::Record,
        state: &crate::state::State,
    ) -> Target {
        Target {
            addr: addr.clone(),
            id: record.id.clone(),
            spec: record.spec.clone(),
            outputs: record.outputs.clone(),
            context: state.context(&record.dependencies),
            lifecycle: record.lifecycle.clone(),
        }
    }
}

/// The result of a call that starts work.
#[derive(Debug, Clone, PartialEq)]
pub enum Started {
    /// The change is complete.
    Done,
    /// The change continues in this long-running operation.
    Operation(OperationRef),
}

/// Where a long-running operation is.
#[derive(Debug, Clone, PartialEq)]
pub enum OpStatus {
    Running { progress: Option<String> },
    Done,
    Failed(CloudError),
}

/// One poll's answer ([`Provider::poll_timed`]): the operation's status and, once it has ended,
/// how long it ran by the cloud's own timestamps ([`optime`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Polled {
    pub status: OpStatus,
    /// From the operation's start to its end as the API recorded them; `None` while it runs, and
    /// when the API gives no times or times a3ctl cannot read.
    pub ran: Option<std::time::Duration>,
}

impl From<OpStatus> for Polled {
    /// A status without times.
    fn from(status: OpStatus) -> Polled {
        Polled { status, ran: None }
    }
}

/// Whether a resource that exists has reached a usable state.
#[derive(Debug, Clone, PartialEq)]
pub enum Settle {
    Ready,
    Pending {
        status: String,
    },
    Failed {
        message: String,
    },
    /// Being deleted (a GKE cluster STOPPING, a Filestore instance DELETING): whatever lives
    /// inside it is going with it.
    Deleting {
        status: String,
    },
}

/// One API call of an in-place update (GKE takes one field per `clusters.update`, node pool size
/// goes through `setSize` ...).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct UpdateStep {
    /// A short name for progress lines and errors, e.g. `setSize`.
    pub name: String,
    /// The fields this call changes.
    pub fields: Vec<String>,
    /// For a step on the way to the desired value (a control plane's intermediate minor version:
    /// GKE moves it one minor at a time), the value its one field reaches, which the executor
    /// records once the call is done; `None` when the call reaches the desired spec.
    pub reaches: Option<serde_json::Value>,
}

impl UpdateStep {
    /// One step per entry of `calls` (`(call name, the fields it changes)`, in call order) that
    /// has a changed field; fields whose change forces replacement are never updated in place.
    pub fn per_call<F: KindField>(diffs: &[FieldDiff], calls: &[(&str, &[F])]) -> Vec<UpdateStep> {
        calls
            .iter()
            .filter_map(|(name, fields)| {
                let changed: Vec<String> = diffs
                    .iter()
                    .filter(|d| {
                        !d.forces_replacement
                            && F::from_name(&d.field).is_some_and(|f| fields.contains(&f))
                    })
                    .map(|d| d.field.clone())
                    .collect();
                (!changed.is_empty()).then(|| UpdateStep {
                    name: name.to_string(),
                    fields: changed,
                    reaches: None,
                })
            })
            .collect()
    }

    /// A step named `name` that changes `fields`.
    pub fn of<F: KindField>(name: &str, fields: &[F]) -> UpdateStep {
        UpdateStep {
            name: name.to_string(),
            fields: fields.iter().map(|f| f.as_str().to_string()).collect(),
            reaches: None,
        }
    }

    /// Whether this step changes `field`.
    pub fn changes<F: KindField>(&self, field: F) -> bool {
        self.fields.iter().any(|f| f == field.as_str())
    }

    /// The fields this step changes, as the kind's field values. A name that is not a field of
    /// the kind is refused, never dropped: a call built from what is left would send nothing
    /// for it and report success.
    pub fn fields_of<F: KindField>(&self) -> CloudResult<Vec<F>> {
        self.fields
            .iter()
            .map(|name| {
                F::from_name(name).ok_or_else(|| {
                    CloudError::new(
                        ErrorClass::Invalid,
                        format!(
                            "the update `{}` names `{name}`, which is not a field of a {}",
                            self.name,
                            F::KIND
                        ),
                    )
                })
            })
            .collect()
    }
}

/// A spec or live object of the wrong shape: never retried, and named so the user can tell a
/// hand-edited state (spec) from an API answer a3ctl does not understand (live).
impl From<crate::resource::kinds::ShapeError> for CloudError {
    fn from(e: crate::resource::kinds::ShapeError) -> CloudError {
        use crate::resource::kinds::ShapeError;
        let hint = match &e {
            ShapeError::Spec { .. } => {
                "the recorded spec was edited by hand or written by another a3ctl version: `a3ctl state show ADDR BLUEPRINT` shows it; `a3ctl state rm` then `a3ctl import` records it afresh"
            }
            ShapeError::Live { .. } => {
                "the API answered without a field a3ctl relies on: check the resource with gcloud, and report the answer if it looks right"
            }
        };
        CloudError::new(ErrorClass::Invalid, e.to_string()).with_hint(hint)
    }
}

/// How the executor should treat an error (https://cloud.google.com/apis/design/errors).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorClass {
    /// 429 rate limit, 5xx, dropped connection: retry with backoff. A mutation may already have
    /// happened; the executor re-reads before retrying it.
    Transient,
    /// GKE's "Cluster is running incompatible operation": retry on the cluster's lane.
    Busy,
    /// 409 alreadyExists on create.
    AlreadyExists,
    /// 404.
    NotFound,
    /// Quota exhausted: permanent.
    Quota,
    /// No capacity in the zone (GCE_STOCKOUT, ZONE_RESOURCE_POOL_EXHAUSTED): permanent here.
    Capacity,
    /// 400 invalid argument / failed precondition that a retry cannot fix.
    Invalid,
    /// Still used by another resource (a network with subnets, a non-empty bucket).
    InUse,
    /// 401/403.
    Permission,
    /// 412 precondition failed (a fingerprint or generation moved).
    Conflict,
    Other,
}

impl ErrorClass {
    pub fn is_retryable(self) -> bool {
        matches!(self, ErrorClass::Transient | ErrorClass::Busy)
    }
}

/// An error from a cloud API, classified.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{message}")]
pub struct CloudError {
    pub class: ErrorClass,
    /// HTTP status, when there was a response.
    pub http_status: Option<u16>,
    /// Canonical status (`NOT_FOUND`) or the operation's error code.
    pub status: String,
    /// v1 reason (`notFound`, `resourceInUseByAnotherResource` ...), when given.
    pub reason: String,
    pub message: String,
    /// What the user can do about it.
    pub hint: Option<String>,
    /// How long the server asked to wait before trying again (`Retry-After`), if it did.
    pub retry_after: Option<std::time::Duration>,
}

impl CloudError {
    pub fn new(class: ErrorClass, message: impl Into<String>) -> CloudError {
        CloudError {
            class,
            http_status: None,
            status: String::new(),
            reason: String::new(),
            message: message.into(),
            hint: None,
            retry_after: None,
        }
    }

    pub fn with_hint(mut self, hint: impl Into<String>) -> CloudError {
        self.hint = Some(hint.into());
        self
    }

    /// `503 UNAVAILABLE (backendError)`-style summary for messages.
    pub fn code(&self) -> String {
        let mut parts = Vec::new();
        if let Some(s) = self.http_status {
            parts.push(s.to_string());
        }
        if !self.status.is_empty() {
            parts.push(self.status.clone());
        }
        let mut code = parts.join(" ");
        if !self.reason.is_empty() {
            code.push_str(&format!(" ({})", self.reason));
        }
        code
    }
}

pub type CloudResult<T> = Result<T, CloudError>;

/// The blueprint whose ownership mark `spec` carries: its [`crate::resource::spec::OWNERSHIP_LABEL`]
/// label, or (Compute resources, which take no labels) the `a3ctl-blueprint=<name>` in its
/// description. `None` for a spec without either.
pub fn mark_of(spec: &Value) -> Option<&str> {
    spec.get("labels")
        .and_then(|l| l.get(crate::resource::spec::OWNERSHIP_LABEL))
        .and_then(|v| v.as_str())
        .or_else(|| {
            spec.get("description")
                .and_then(|d| d.as_str())
                .and_then(|d| {
                    d.split_once(&format!("{}=", crate::resource::spec::OWNERSHIP_LABEL))
                        .map(|(_, rest)| rest.trim_end_matches(')'))
                })
        })
}

/// A live resource is ours when it carries the blueprint's label, or (for Compute resources, which
/// take no labels) the blueprint's mark in its description. Node pools belong to their cluster.
pub fn owned(target: &Target, observed: &Observed) -> bool {
    let Some(blueprint) = mark_of(&target.spec) else {
        return false;
    };
    let live = &observed.spec;
    live.get("labels")
        .and_then(|l| l.get(crate::resource::spec::OWNERSHIP_LABEL))
        .and_then(|v| v.as_str())
        == Some(blueprint)
        || live.get("description").and_then(|d| d.as_str())
            == Some(crate::resource::mark(blueprint).as_str())
}

/// Everything the engine needs from the clouds. Implemented by each API's adapter, by
/// [`gcp::GcpProvider`], which hands each call to the adapter of its kind or operation, and by
/// [`fake::FakeProvider`] in tests.
#[async_trait::async_trait]
pub trait Provider: Send + Sync {
    /// Reads the live resource; `Ok(None)` when it does not exist.
    async fn read(&self, target: &Target) -> CloudResult<Option<Observed>>;

    async fn create(&self, target: &Target) -> CloudResult<Started>;

    /// The API calls that carry out `diffs` in place, in order.
    fn update_steps(&self, target: &Target, diffs: &[FieldDiff]) -> Vec<UpdateStep>;

    async fn update(&self, target: &Target, step: &UpdateStep) -> CloudResult<Started>;

    async fn delete(&self, target: &Target) -> CloudResult<Started>;

    async fn poll(&self, operation: &OperationRef) -> CloudResult<OpStatus>;

    /// [`Provider::poll`], with how long an ended operation ran by the cloud's own record. The
    /// executor polls through this; an adapter whose API stamps its operations with times
    /// implements it (and `poll` as its status alone); the default reports no time.
    async fn poll_timed(&self, operation: &OperationRef) -> CloudResult<Polled> {
        self.poll(operation).await.map(Polled::from)
    }

    /// Whether an existing resource has become usable (used after adopting one whose creation
    /// may still be running).
    fn settle(&self, target: &Target, observed: &Observed) -> Settle;

    /// Whether a live resource carries a3ctl's ownership mark for this blueprint, so a 409 on
    /// create can adopt it.
    fn owned(&self, target: &Target, observed: &Observed) -> bool {
        owned(target, observed)
    }

    /// How many of the resource's Kubernetes nodes are Ready (a node pool's, read through its
    /// cluster's Kubernetes API); `None` for a kind without nodes, or when they cannot be read.
    async fn ready_nodes(&self, _target: &Target) -> CloudResult<Option<u64>> {
        Ok(None)
    }

    /// Mutations sharing a serial lane run one at a time (GKE: one operation per cluster).
    fn serial_lane(&self, _target: &Target) -> Option<String> {
        None
    }

    /// How calls made outside an apply's own retries (refresh reads) are retried.
    fn retry_policy(&self) -> retry::RetryPolicy {
        retry::RetryPolicy::CALLS
    }
}

/// The reader of a read-only kind.
pub type Reader = Box<
    dyn Fn(Target) -> futures_util::future::BoxFuture<'static, CloudResult<Option<Observed>>>
        + Send
        + Sync,
>;

/// The adapter of a kind a3ctl only reads (quotas, machine types): `read` is the kind's reader;
/// every change is refused before any request, naming `why`.
pub struct ReadOnly {
    pub read: Reader,
    /// `a3ctl does not change quotas`.
    pub why: &'static str,
    pub hint: &'static str,
}

#[async_trait::async_trait]
impl Provider for ReadOnly {
    async fn read(&self, target: &Target) -> CloudResult<Option<Observed>> {
        (self.read)(target.clone()).await
    }
    async fn create(&self, target: &Target) -> CloudResult<Started> {
        Err(self.refused(target))
    }
    fn update_steps(&self, _target: &Target, _diffs: &[FieldDiff]) -> Vec<UpdateStep> {
        vec![]
    }
    async fn update(&self, target: &Target, _step: &UpdateStep) -> CloudResult<Started> {
        Err(self.refused(target))
    }
    async fn delete(&self, target: &Target) -> CloudResult<Started> {
        Err(self.refused(target))
    }
    async fn poll(&self, operation: &OperationRef) -> CloudResult<OpStatus> {
        Err(CloudError::new(
            ErrorClass::Invalid,
            format!("a read-only kind started no operation `{}`", operation.name),
        ))
    }
    fn settle(&self, _target: &Target, _observed: &Observed) -> Settle {
        Settle::Ready
    }
}

impl ReadOnly {
    fn refused(&self, target: &Target) -> CloudError {
        CloudError::new(
            ErrorClass::Invalid,
            format!("{} is read-only: {}", target.addr, self.why),
        )
        .with_hint(self.hint)
    }
}

#[cfg(test)]
mod update_step_tests {
    use super::*;
    use crate::resource::kinds::network::NetworkField;
    use serde_json::json;

    fn diff(field: &str, forces_replacement: bool) -> FieldDiff {
        FieldDiff {
            field: field.into(),
            before: json!(1),
            after: json!(2),
            forces_replacement,
        }
    }

    #[test]
    fn steps_name_fields_as_the_kind_spells_them_and_refuse_other_names() {
        let steps = UpdateStep::per_call(
            &[
                diff("routing_mode", false),
                diff("name", true),
                diff("mtu", false),
            ],
            &[("patch", &[NetworkField::Mtu, NetworkField::RoutingMode])],
        );
        assert_eq!(steps.len(), 1);
        assert_eq!(steps[0].fields, ["routing_mode", "mtu"]);
        assert!(steps[0].changes(NetworkField::Mtu));
        assert!(!steps[0].changes(NetworkField::Name));
        assert_eq!(
            steps[0].fields_of::<NetworkField>().unwrap(),
            [NetworkField::RoutingMode, NetworkField::Mtu]
        );
        assert_eq!(
            UpdateStep::of("patch", &[NetworkField::Mtu]).fields,
            ["mtu"]
        );
        // A step naming what the kind does not have (a saved plan written by hand) is refused,
        // not sent as an empty PATCH.
        let typo = UpdateStep {
            name: "patch".into(),
            fields: vec!["mtu".into(), "routing_mod".into()],
            reaches: None,
        };
        let err = typo.fields_of::<NetworkField>().unwrap_err();
        assert_eq!(err.class, ErrorClass::Invalid);
        assert_eq!(
            err.message,
            "the update `patch` names `routing_mod`, which is not a field of a network"
        );
    }
}
