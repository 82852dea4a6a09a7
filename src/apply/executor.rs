//! The executor: runs the steps of a plan against a [`Provider`], as many at once as the order
//! and the lanes allow, journaling every operation in state before waiting on it.
//!
//! Per step:
//! - **create**: journal the intent, call create (retrying transient errors, but re-reading first:
//!   a create whose answer was lost may have happened), journal the operation, wait for it, read the
//!   result and record it. A 409 on a resource that carries a3ctl's mark for this blueprint is
//!   adopted (waiting until it is usable); one that does not is an error with an import hint. A
//!   failed operation that left an object behind records it as tainted, so nothing is forgotten.
//! - **update**: one call per [`crate::cloud::UpdateStep`], each waited on; the record is updated
//!   after each call, so a failure half-way leaves state true.
//! - **delete**: journal, call, wait, forget; a 404 means already gone.
//! - **deleted with**: forget the record once its container's delete succeeded.

mod pool_move;

use super::schedule::{self, Step, StepKind};
use super::sink::StateSink;
use super::{ApplyReport, Options, Outcome, Reporter, StepReport};
use crate::cloud::retry::{Jitter, Look, Poller, Waited};
use crate::cloud::{
    CloudError, CloudResult, ErrorClass, OpStatus, Polled, Provider, Settle, Started, Target,
};
use crate::plan::{Action, Change, Plan};
use crate::resource::{Addr, Api, Observed};
use crate::state::{OperationRef, PendingAction, PendingOperation, Record, State};
use futures_util::future::BoxFuture;
use parking_lot::Mutex;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;
use tokio::sync::Semaphore;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

/// The two interrupt levels.
#[derive(Clone, Default)]
pub struct Stop {
    /// First interrupt: start nothing new.
    pub starting: CancellationToken,
    /// Second interrupt: stop waiting on operations now.
    pub waiting: CancellationToken,
}

/// Runs plans. Cheap to clone into tasks.
pub struct Executor {
    provider: Arc<dyn Provider>,
    sink: Arc<StateSink>,
    reporter: Arc<dyn Reporter>,
    options: Options,
    stop: Stop,
    lanes: BTreeMap<Api, Arc<Semaphore>>,
    serial_lanes: Mutex<BTreeMap<String, Arc<tokio::sync::Mutex<()>>>>,
    jitter: Jitter,
    started: Instant,
    state_error: Mutex<Option<String>>,
    /// How long the operations of each running step ran by the cloud's timestamps, summed
    /// ([`Reporter::step_operations`]). A resource has one step running at a time.
    operations_ran: Mutex<BTreeMap<Addr, Duration>>,
}

/// How one journaled call and its operation ended ([`Executor::operate`]).
enum Operated {
    /// The call did the work, or the operation it started finished.
    Done,
    /// The operation ran and failed.
    OperationFailed(CloudError),
    /// The step ends here with this outcome.
    Ended(Outcome),
}

/// What to do about a failed call.
enum Recover {
    /// Back off and send it again.
    Retry,
    /// The step ends with this outcome.
    End(Outcome),
}

/// A wait's own result, or the outcome that ends its step (failed, interrupted, or timed out
/// `waiting_for` what it names).
fn waited_for<T>(waited: Waited<T>, waiting_for: impl FnOnce() -> String) -> Result<T, Outcome> {
    match waited {
        Waited::Done(value) => Ok(value),
        Waited::Failed(e) => Err(Outcome::Failed(e)),
        Waited::Interrupted => Err(Outcome::Interrupted),
        Waited::TimedOut => Err(Outcome::TimedOut {
            operation: waiting_for(),
        }),
    }
}

impl Executor {
    pub fn new(
        provider: Arc<dyn Provider>,
        sink: Arc<StateSink>,
        reporter: Arc<dyn Reporter>,
        options: Options,
        stop: Stop,
    ) -> Arc<Executor> {
        let lanes = options
            .lanes
            .iter()
            .map(|(api, n)| (*api, Arc::new(Semaphore::new((*n).max(1)))))
            .collect();
        let jitter = Jitter::new(options.seed);
        Arc::new(Executor {
            provider,
            sink,
            reporter: Arc::new(super::Traced(reporter)),
            options,
            stop,
            lanes,
            serial_lanes: Mutex::new(BTreeMap::new()),
            jitter,
            started: Instant::now(),
            state_error: Mutex::new(None),
            operations_ran: Mutex::new(BTreeMap::new()),
        })
    }

    /// Finishes what an earlier, interrupted apply left journaled, with nothing else to do: the
    /// same as applying an empty plan (see [`Executor::apply`]).
    pub async fn resume(self: &Arc<Self>) -> Vec<StepReport> {
        let state = self.sink.snapshot().await;
        let plan = Plan {
            format: crate::plan::PLAN_FORMAT,
            blueprint: state.blueprint.clone(),
            lineage: state.lineage.clone(),
            serial: state.serial,
            destroy: false,
            changes: vec![],
            drift: vec![],
            versions: vec![],
            adoptions: vec![],
            preflight: None,
            notes: vec![],
            moves: vec![],
        };
        self.apply(&plan).await.steps
    }

    /// Journal entries an earlier run left, settled before the plan's steps are scheduled:
    /// entries without an operation are dropped (the process died before the cloud answered; the
    /// refresh behind the plan showed whether the resource exists, and a create of one that does
    /// is adopted), and so are entries of a resource whose container (its cluster) is gone or is
    /// created or deleted by this plan — what lived inside went with it. Every other entry is
    /// resumed inside the plan: by the step of its own resource, or by a step of its own (a
    /// [`StepKind::Resume`]) when the plan has nothing else to do for it. Returns the plan with a
    /// no-op change for every entry that has none, so the schedule can place its step.
    async fn settle_journal(&self, plan: &Plan) -> Plan {
        let state = self.sink.snapshot().await;
        let touched = |addr: &Addr| {
            plan.changes.iter().any(|c| {
                &c.addr == addr
                    && matches!(c.action, Action::Create | Action::Replace | Action::Delete)
            })
        };
        let dropped: Vec<Addr> = state
            .pending
            .iter()
            .filter(|p| {
                p.operation.is_none()
                    || p.lifecycle
                        .deleted_with
                        .as_ref()
                        .is_some_and(|c| !state.resources.contains_key(c) || touched(c))
            })
            .map(|p| p.addr.clone())
            .collect();
        if !dropped.is_empty() {
            self.save(|s| {
                for addr in &dropped {
                    s.clear_pending(addr);
                }
            })
            .await;
        }
        let mut plan = plan.clone();
        for p in &state.pending {
            if dropped.contains(&p.addr) || plan.changes.iter().any(|c| c.addr == p.addr) {
                continue;
            }
            // A destroy deletes what a resumed create or update leaves behind.
            let action = if plan.destroy && p.action != PendingAction::Delete {
                Action::Delete
            } else {
                Action::NoOp
            };
            plan.changes.push(Change {
                addr: p.addr.clone(),
                action,
                id: p.id.clone(),
                before: None,
                after: Some(p.spec.clone()),
                diffs: vec![],
                reason: None,
                dependencies: p.dependencies.clone(),
                lifecycle: p.lifecycle.clone(),
            });
        }
        plan
    }

    /// Waits on the operation an earlier run journaled for the step's resource, if any, and
    /// records its result. `Ok(true)` when that finished the step's work (the step creates what
    /// the journaled create made, or deletes what the journaled delete removed), `Ok(false)` when
    /// the step goes on with its own calls, `Err` when the step ends here.
    async fn finish_journaled(&self, addr: &Addr, kind: StepKind) -> Result<bool, Outcome> {
        let Some(p) = self.sink.snapshot().await.pending_for(addr).cloned() else {
            return Ok(false);
        };
        let Some(op) = &p.operation else {
            self.save(|s| s.clear_pending(addr)).await;
            return Ok(false);
        };
        let target = Target {
            addr: p.addr.clone(),
            id: p.id.clone(),
            spec: p.spec.clone(),
            outputs: serde_json::Value::Null,
            context: self.context_of(&p.dependencies).await,
            lifecycle: p.lifecycle.clone(),
        };
        // Look before waiting: it reconnects clients that are built per target (a cluster's
        // Kubernetes API) after a restart. Its answer is not needed.
        let _ = self.read(&target).await;
        match self.wait(&target, op).await {
            Waited::Done(()) => match p.action {
                PendingAction::Delete => {
                    self.save(|s| {
                        s.resources.remove(addr);
                        s.clear_pending(addr);
                    })
                    .await
                }
                _ => {
                    let outcome = self.record_created(&target, &p.dependencies, false).await;
                    if outcome != Outcome::Done {
                        return Err(outcome);
                    }
                }
            },
            Waited::Failed(e) => {
                self.after_failed_operation(&target, &p.dependencies, p.action)
                    .await;
                return Err(Outcome::Failed(e));
            }
            Waited::Interrupted => return Err(Outcome::Interrupted),
            Waited::TimedOut => {
                return Err(Outcome::TimedOut {
                    operation: op.name.clone(),
                });
            }
        }
        if self.state_error.lock().is_some() {
            return Err(self.state_failure());
        }
        Ok(matches!(
            (p.action, kind),
            (_, StepKind::Resume)
                | (PendingAction::Create, StepKind::Create)
                | (PendingAction::Delete, StepKind::Delete)
        ))
    }

    /// Carries out `plan`. Always returns a report; state has been saved along the way.
    ///
    /// Operations journaled by an interrupted run are resumed inside the plan, by the step of
    /// their resource and in its place in the order, never before it and never blocking
    /// unrelated steps ([`Executor::settle_journal`]).
    pub async fn apply(self: &Arc<Self>, plan: &Plan) -> ApplyReport {
        let plan = &self.settle_journal(plan).await;
        let plan = &self.expand_moves(plan).await;
        self.refresh_containers(plan).await;
        let state = self.sink.snapshot().await;
        let steps = Arc::new(schedule::steps(plan, &state));
        let mut outcomes: Vec<Option<StepReport>> = vec![None; steps.len()];
        let mut running = vec![false; steps.len()];
        // The cloud's own time for each step's operations, by their timestamps.
        let mut ran_by_step: Vec<Option<Duration>> = vec![None; steps.len()];
        let mut tasks = tokio::task::JoinSet::new();
        loop {
            let stopping = self.stop.starting.is_cancelled() || self.state_error.lock().is_some();
            if !stopping {
                for i in 0..steps.len() {
                    if running[i] || outcomes[i].is_some() {
                        continue;
                    }
                    let ready = steps[i]
                        .after
                        .iter()
                        .all(|&j| outcomes[j].as_ref().is_some_and(|r| r.outcome.is_success()));
                    if !ready {
                        continue;
                    }
                    running[i] = true;
                    let this = self.clone();
                    let change = plan.changes[steps[i].change].clone();
                    let step = steps[i].clone();
                    let moved = Self::move_of(plan, &step.addr).cloned();
                    tasks.spawn(async move {
                        let start = this.started.elapsed();
                        this.operations_ran.lock().remove(&step.addr);
                        this.reporter.step_started(&step.addr, step.kind);
                        let outcome = this.run_step(&step, &change, moved.as_ref()).await;
                        let end = this.started.elapsed();
                        let ran = this.operations_ran.lock().remove(&step.addr);
                        if let Some(ran) = ran {
                            this.reporter.step_operations(&step.addr, ran);
                        }
                        this.reporter
                            .step_finished(&step.addr, step.kind, &outcome, end - start);
                        (
                            i,
                            StepReport {
                                addr: step.addr.clone(),
                                kind: step.kind,
                                outcome,
                                start,
                                end,
                            },
                            ran,
                        )
                    });
                }
            }
            let Some(joined) = tasks.join_next().await else {
                break;
            };
            let (i, report, ran) = match joined {
                Ok(r) => r,
                Err(e) => {
                    // A task panicked: the step's state is unknown, but the journal still has it.
                    self.reporter
                        .warning(&format!("internal error in a step: {e}"));
                    continue;
                }
            };
            running[i] = false;
            ran_by_step[i] = ran;
            let failed = !report.outcome.is_success();
            let addr = report.addr.clone();
            outcomes[i] = Some(report);
            if failed {
                for j in schedule::dependents_of(&steps, i) {
                    if outcomes[j].is_none() {
                        let now = self.started.elapsed();
                        outcomes[j] = Some(StepReport {
                            addr: steps[j].addr.clone(),
                            kind: steps[j].kind,
                            outcome: Outcome::Skipped {
                                because: addr.clone(),
                            },
                            start: now,
                            end: now,
                        });
                    }
                }
            }
        }
        let now = self.started.elapsed();
        let steps_report = outcomes
            .into_iter()
            .enumerate()
            .map(|(i, r)| {
                r.unwrap_or_else(|| StepReport {
                    addr: steps[i].addr.clone(),
                    kind: steps[i].kind,
                    outcome: Outcome::NotStarted,
                    start: now,
                    end: now,
                })
            })
            .collect();
        // The apply's time in the cloud: the longer of its operations' longest chain and their
        // chain through the cluster, as `super::estimate` bounds an apply before it runs.
        let cloud_time = ran_by_step.iter().any(Option::is_some).then(|| {
            let index: std::collections::HashMap<(&Addr, StepKind), usize> = steps
                .iter()
                .enumerate()
                .map(|(i, s)| ((&s.addr, s.kind), i))
                .collect();
            let secs = super::estimate::estimate_by(&steps, |s| {
                index
                    .get(&(&s.addr, s.kind))
                    .and_then(|&i| ran_by_step[i])
                    .map_or(0.0, |d| d.as_secs_f64())
            });
            Duration::from_secs_f64(secs.seconds())
        });
        ApplyReport {
            steps: steps_report,
            state_error: self.state_error.lock().clone(),
            cloud_time,
        }
    }

    async fn run_step(
        self: &Arc<Self>,
        step: &Step,
        change: &Change,
        moved: Option<&crate::plan::moves::PoolMove>,
    ) -> Outcome {
        let target = self.target_for(change, step.kind).await;
        let _serial = match (step.kind, self.provider.serial_lane(&target)) {
            (StepKind::DeletedWith | StepKind::Forget, _) | (_, None) => None,
            (_, Some(key)) => {
                let lane = self.serial_lanes.lock().entry(key).or_default().clone();
                Some(lane.lock_owned().await)
            }
        };
        if !matches!(step.kind, StepKind::DeletedWith | StepKind::Forget) {
            match self.finish_journaled(&step.addr, step.kind).await {
                Ok(true) => return Outcome::Done,
                Ok(false) => {}
                Err(outcome) => return outcome,
            }
        }
        // The journaled operation may have changed the record the target was built from.
        let target = self.target_for(change, step.kind).await;
        match step.kind {
            StepKind::Resume => Outcome::Done,
            StepKind::DeletedWith | StepKind::Forget => {
                self.save(|s| {
                    s.resources.remove(&change.addr);
                    s.clear_pending(&change.addr);
                })
                .await;
                Outcome::Subsumed
            }
            StepKind::Create => match moved {
                Some(m) if !m.continued => self.create_moved(&target, change, m).await,
                _ => self.create(&target, change).await,
            },
            StepKind::Update => match moved {
                // An interrupted move continues: the batches first, then anything else.
                Some(m) => {
                    let grown = self.grow_in_batches(&target, change, m).await;
                    if grown != Outcome::Done {
                        return grown;
                    }
                    let mut rest = change.clone();
                    rest.diffs.retain(|d| d.field != "node_count");
                    self.update(&target, &rest).await
                }
                None => self.update(&target, change).await,
            },
            StepKind::Delete if crate::plan::moves::successor(&step.addr).is_some() => {
                self.delete_retired(&target, change).await
            }
            StepKind::Delete => self.delete(&target, change).await,
        }
    }

    async fn target_for(&self, change: &Change, kind: StepKind) -> Target {
        let state = self.sink.snapshot().await;
        let record = state.resources.get(&change.addr);
        let spec = match kind {
            StepKind::Create | StepKind::Update => change.after.clone(),
            StepKind::Delete | StepKind::DeletedWith | StepKind::Forget | StepKind::Resume => {
                record
                    .map(|r| r.spec.clone())
                    .or_else(|| change.before.clone())
            }
        }
        .unwrap_or(serde_json::Value::Null);
        let deps = match kind {
            StepKind::Create | StepKind::Update => change.dependencies.clone(),
            // A delete of something only journaled (never recorded) orders by nothing.
            _ => record.map(|r| r.dependencies.clone()).unwrap_or_default(),
        };
        Target {
            addr: change.addr.clone(),
            id: change.id.clone(),
            spec,
            outputs: record
                .map(|r| r.outputs.clone())
                .unwrap_or(serde_json::Value::Null),
            context: state.context(&deps),
            lifecycle: change.lifecycle.clone(),
        }
    }

    /// Reads again each recorded container (a cluster) that the plan keeps and that something
    /// the plan acts on lives in, and records its outputs: what lives inside is reached through
    /// them (a cluster's endpoint and CA), and they may have moved since they were recorded —
    /// even a saved plan, carried out without a refresh, then reaches the cluster where it is. A
    /// read that fails leaves the record as it is; the step that needs it says what failed.
    async fn refresh_containers(&self, plan: &Plan) {
        let state = self.sink.snapshot().await;
        let touched = |addr: &Addr| {
            plan.changes.iter().any(|c| {
                &c.addr == addr
                    && matches!(c.action, Action::Create | Action::Replace | Action::Delete)
            })
        };
        let containers: BTreeSet<Addr> = plan
            .actions()
            .filter_map(|c| c.lifecycle.deleted_with.clone())
            .filter(|container| state.resources.contains_key(container) && !touched(container))
            .collect();
        for container in containers {
            let record = &state.resources[&container];
            let target = Target::recorded(&container, record, &state);
            if let Ok(Some(observed)) = self.read(&target).await
                && observed.outputs != record.outputs
            {
                self.save(|s| {
                    if let Some(r) = s.resources.get_mut(&container) {
                        r.outputs = observed.outputs;
                    }
                })
                .await;
            }
        }
    }

    async fn context_of(&self, deps: &[Addr]) -> BTreeMap<Addr, serde_json::Value> {
        self.sink.snapshot().await.context(deps)
    }

    // ----- one operation ---------------------------------------------------------------------

    /// Whether a call that failed with `e` on its `attempt`-th try (0-based) is sent again.
    fn can_retry(&self, e: &CloudError, attempt: u32) -> bool {
        e.class.is_retryable() && attempt + 1 < self.options.max_attempts
    }

    /// The idiom every create, update and delete shares: journal the intent, make the call
    /// (again after a backoff while `recover` says so), journal the operation the cloud started,
    /// and wait for it. `recover` decides about each failed call, given how many retries came
    /// before it.
    async fn operate<'a>(
        &'a self,
        target: &'a Target,
        change: &'a Change,
        action: PendingAction,
        mut call: impl FnMut() -> BoxFuture<'a, CloudResult<Started>>,
        mut recover: impl FnMut(CloudError, u32) -> BoxFuture<'a, Recover>,
    ) -> Operated {
        if !self.journal(target, change, action, None).await {
            return Operated::Ended(self.state_failure());
        }
        let mut attempt = 0;
        loop {
            match self.with_lane(target, call()).await {
                Ok(Started::Done) => return Operated::Done,
                Ok(Started::Operation(op)) => {
                    if !self.journal(target, change, action, Some(op.clone())).await {
                        return Operated::Ended(self.state_failure());
                    }
                    return match self.wait(target, &op).await {
                        Waited::Done(()) => Operated::Done,
                        Waited::Failed(e) => Operated::OperationFailed(e),
                        Waited::Interrupted => Operated::Ended(Outcome::Interrupted),
                        Waited::TimedOut => {
                            Operated::Ended(Outcome::TimedOut { operation: op.name })
                        }
                    };
                }
                Err(e) => match recover(e.clone(), attempt).await {
                    Recover::Retry => {
                        attempt += 1;
                        self.backoff(target, &e, attempt).await;
                        if self.stop.waiting.is_cancelled() {
                            return Operated::Ended(Outcome::Interrupted);
                        }
                    }
                    Recover::End(outcome) => return Operated::Ended(outcome),
                },
            }
        }
    }

    /// Ends a step that failed: the journal entry goes (nothing is in flight).
    async fn failed(&self, target: &Target, e: CloudError) -> Outcome {
        self.save(|s| s.clear_pending(&target.addr)).await;
        Outcome::Failed(e)
    }

    // ----- create ---------------------------------------------------------------------------

    async fn create(self: &Arc<Self>, target: &Target, change: &Change) -> Outcome {
        let deps = &change.dependencies;
        let operated = self
            .operate(
                target,
                change,
                PendingAction::Create,
                || self.provider.create(target),
                |e, attempt| Box::pin(async move {
                    if e.class == ErrorClass::AlreadyExists {
                        return match self.read(target).await {
                            Ok(Some(observed)) if self.provider.owned(target, &observed) => {
                                Recover::End(self.adopt(target, deps).await)
                            }
                            Ok(Some(_)) => Recover::End(self.failed(target, e.with_hint(format!(
                                "`{}` exists but was not created by this blueprint; take it over with `a3ctl import {} {} BLUEPRINT` (or everything at once with `a3ctl apply --adopt BLUEPRINT`), or give the blueprint another name",
                                target.id, target.addr, target.id
                            ))).await),
                            // Listed as existing, not readable yet: ask again.
                            Ok(None) | Err(_) if attempt + 1 < self.options.max_attempts => {
                                Recover::Retry
                            }
                            Ok(None) => Recover::End(self.failed(target, e).await),
                            Err(read_error) => Recover::End(self.failed(target, read_error).await),
                        };
                    }
                    if self.can_retry(&e, attempt) {
                        // The lost answer may hide a create that happened. The create is
                        // retried, not the resource adopted at once: the retry meets it (409, or
                        // the same operation for a Compute insert with the same request id) and
                        // the adapter continues what a create still has to do — a GKE cluster's
                        // create removes its bootstrap pool — before the 409 path adopts it.
                        return Recover::Retry;
                    }
                    Recover::End(self.failed(target, e).await)
                }),
            )
            .await;
        match operated {
            Operated::Done => self.record_created(target, deps, false).await,
            Operated::OperationFailed(e) => {
                self.after_failed_operation(target, deps, PendingAction::Create)
                    .await;
                Outcome::Failed(e)
            }
            Operated::Ended(outcome) => outcome,
        }
    }

    /// Takes an existing, a3ctl-marked resource into state once it is usable.
    async fn adopt(self: &Arc<Self>, target: &Target, deps: &[Addr]) -> Outcome {
        let waited = self
            .poller(target)
            .until(false, |_| async move {
                match self.read(target).await {
                    Ok(Some(observed)) => match self.provider.settle(target, &observed) {
                        Settle::Ready => {
                            let outcome = self.record_created(target, deps, false).await;
                            Look::Done(if outcome == Outcome::Done {
                                Outcome::Adopted
                            } else {
                                outcome
                            })
                        }
                        Settle::Failed { message } => {
                            self.record_observed(target, deps, observed, true).await;
                            Look::Failed(CloudError::new(ErrorClass::Other, message))
                        }
                        Settle::Pending { status } => {
                            self.reporter.step_progress(&target.addr, &status);
                            Look::Pending
                        }
                        Settle::Deleting { status } => {
                            self.save(|s| s.clear_pending(&target.addr)).await;
                            Look::Failed(
                                CloudError::new(
                                    ErrorClass::Other,
                                    format!("`{}` exists but is being deleted ({status})", target.id),
                                )
                                .with_hint("wait until it is gone (an earlier destroy or someone else is deleting it), then run `a3ctl apply` again"),
                            )
                        }
                    },
                    Ok(None) => Look::Pending,
                    Err(e) if e.class.is_retryable() => Look::Pending,
                    Err(e) => Look::Failed(e),
                }
            })
            .await;
        waited_for(waited, || {
            format!("waiting for {} to become ready", target.id)
        })
        .unwrap_or_else(|ended| ended)
    }

    /// Reads a freshly created resource and records it; retries reads that come back empty
    /// (eventual consistency) a few times.
    async fn record_created(&self, target: &Target, deps: &[Addr], tainted: bool) -> Outcome {
        let attempts = self.options.max_attempts;
        let waited = self
            .poller(target)
            .until(false, |attempt| async move {
                match self.read(target).await {
                    Ok(Some(observed)) => {
                        self.record_observed(target, deps, observed, tainted).await;
                        Look::Done(())
                    }
                    Err(e) if !e.class.is_retryable() => Look::Failed(e),
                    // Empty (eventual consistency) or a transient error: again, a few times.
                    _ if attempt + 1 < attempts => Look::Pending,
                    _ => Look::Failed(CloudError::new(
                        ErrorClass::Other,
                        format!(
                            "`{}` was reported created but cannot be read back",
                            target.id
                        ),
                    )),
                }
            })
            .await;
        match waited_for(waited, || format!("reading {} back", target.id)) {
            Ok(()) if self.state_error.lock().is_some() => self.state_failure(),
            Ok(()) => Outcome::Done,
            Err(ended) => ended,
        }
    }

    async fn record_observed(
        &self,
        target: &Target,
        deps: &[Addr],
        observed: Observed,
        tainted: bool,
    ) {
        let record = Record {
            kind: target.addr.kind,
            id: target.id.clone(),
            spec: target.spec.clone(),
            outputs: observed.outputs,
            dependencies: deps.to_vec(),
            tainted,
            lifecycle: target.lifecycle.clone(),
            updated_at: now_rfc3339(),
        };
        self.save(|s| {
            s.resources.insert(target.addr.clone(), record);
            s.clear_pending(&target.addr);
        })
        .await;
    }

    /// A failed create may have left an object (a GKE node pool in ERROR): record it tainted so the
    /// next plan replaces it rather than forgetting it.
    async fn after_failed_operation(&self, target: &Target, deps: &[Addr], action: PendingAction) {
        match self.read(target).await {
            Ok(Some(observed)) if action == PendingAction::Create => {
                self.record_observed(target, deps, observed, true).await;
            }
            Ok(None) if action == PendingAction::Delete => {
                self.save(|s| {
                    s.resources.remove(&target.addr);
                    s.clear_pending(&target.addr);
                })
                .await;
            }
            _ => self.save(|s| s.clear_pending(&target.addr)).await,
        }
    }

    // ----- update ---------------------------------------------------------------------------

    async fn update(self: &Arc<Self>, target: &Target, change: &Change) -> Outcome {
        let diffs: Vec<_> = change
            .diffs
            .iter()
            .filter(|d| !d.forces_replacement)
            .cloned()
            .collect();
        for step in self.provider.update_steps(target, &diffs) {
            let name = step.name.as_str();
            let operated = self
                .operate(
                    target,
                    change,
                    PendingAction::Update,
                    || self.provider.update(target, &step),
                    |mut e, attempt| {
                        Box::pin(async move {
                            if self.can_retry(&e, attempt) {
                                return Recover::Retry;
                            }
                            // Keep the kind's hint; say which call of the update failed.
                            let hint = match e.hint.take() {
                                Some(h) => format!("the `{name}` call failed: {h}"),
                                None => format!("the `{name}` call failed"),
                            };
                            Recover::End(self.failed(target, e.with_hint(hint)).await)
                        })
                    },
                )
                .await;
            match operated {
                Operated::Done => {}
                Operated::OperationFailed(e) => return self.failed(target, e).await,
                Operated::Ended(outcome) => return outcome,
            }
            // Record what this call changed, so state stays true if a later call fails: the
            // desired value, or the one a step on the way reached.
            let fields = step.fields.clone();
            let desired = target.spec.clone();
            let reached = step.reaches.clone();
            self.save(|s| {
                if let Some(r) = s.resources.get_mut(&target.addr) {
                    for f in &fields {
                        r.spec[f.as_str()] = match &reached {
                            Some(value) => value.clone(),
                            None => desired[f.as_str()].clone(),
                        };
                    }
                    r.updated_at = now_rfc3339();
                }
                s.clear_pending(&target.addr);
            })
            .await;
        }
        self.record_created(target, &change.dependencies, false)
            .await
    }

    // ----- delete ---------------------------------------------------------------------------

    async fn delete(self: &Arc<Self>, target: &Target, change: &Change) -> Outcome {
        let operated = self
            .operate(
                target,
                change,
                PendingAction::Delete,
                || self.provider.delete(target),
                |e, attempt| {
                    Box::pin(async move {
                        if e.class == ErrorClass::NotFound {
                            return Recover::End(Outcome::Done);
                        }
                        // A lost answer may hide a delete that happened, and a resource refusing a
                        // delete may already be going: a destroy killed during the delete of a GKE
                        // cluster, whose operation was never journaled, or Filestore refusing
                        // (FAILED_PRECONDITION, "cannot be deleted while operation ... is in
                        // progress") the delete of an instance whose own delete, started by a run
                        // that died before the answer came, still runs. Wait for it to be gone.
                        let going = e.class.is_retryable()
                            || matches!(e.class, ErrorClass::Invalid | ErrorClass::Conflict);
                        if going && let Some(outcome) = self.already_going(target).await {
                            return Recover::End(outcome);
                        }
                        if self.can_retry(&e, attempt) {
                            return Recover::Retry;
                        }
                        Recover::End(self.failed(target, e).await)
                    })
                },
            )
            .await;
        let outcome = match operated {
            Operated::Done => Outcome::Done,
            Operated::OperationFailed(e) => {
                self.after_failed_operation(target, &[], PendingAction::Delete)
                    .await;
                return Outcome::Failed(e);
            }
            Operated::Ended(outcome) => outcome,
        };
        if outcome == Outcome::Done {
            self.save(|s| {
                s.resources.remove(&target.addr);
                s.clear_pending(&target.addr);
            })
            .await;
        }
        outcome
    }

    /// When a resource whose delete was refused or lost is gone (`Done`) or being deleted (the
    /// outcome of waiting until it is gone); `None` when it still stands.
    async fn already_going(&self, target: &Target) -> Option<Outcome> {
        match self.read(target).await {
            Ok(None) => Some(Outcome::Done),
            Ok(Some(observed))
                if matches!(
                    self.provider.settle(target, &observed),
                    Settle::Deleting { .. }
                ) =>
            {
                Some(self.wait_gone(target).await)
            }
            _ => None,
        }
    }

    /// For a resource that lives inside another (a Kubernetes object in its cluster): the reason
    /// it can no longer be reached, when that container is gone or being deleted.
    async fn container_gone(&self, target: &Target) -> Option<CloudError> {
        let container = target.lifecycle.deleted_with.as_ref()?;
        let state = self.sink.snapshot().await;
        let why = match state.resources.get(container) {
            None => "is no longer recorded".to_string(),
            Some(record) => {
                let parent = Target::recorded(container, record, &state);
                match self.read(&parent).await {
                    Ok(None) => "no longer exists".to_string(),
                    Ok(Some(observed)) => match self.provider.settle(&parent, &observed) {
                        Settle::Deleting { status } => format!("is being deleted ({status})"),
                        _ => return None,
                    },
                    Err(_) => return None,
                }
            }
        };
        Some(
            CloudError::new(
                ErrorClass::NotFound,
                format!("{} cannot be reached: `{container}` {why}", target.addr),
            )
            .with_hint(format!(
                "run `a3ctl apply` again: the plan creates `{container}` and what lives in it again (or `a3ctl destroy` to remove the rest)"
            )),
        )
    }

    /// Waits until a resource that is being deleted is gone.
    async fn wait_gone(&self, target: &Target) -> Outcome {
        let waited = self
            .poller(target)
            .until(true, |_| async move {
                match self.read(target).await {
                    Ok(None) => Look::Done(()),
                    Ok(Some(observed)) => {
                        if let Settle::Deleting { status } = self.provider.settle(target, &observed)
                        {
                            self.reporter.step_progress(&target.addr, &status);
                        }
                        Look::Pending
                    }
                    Err(e) if e.class.is_retryable() => Look::Pending,
                    Err(e) => Look::Failed(e),
                }
            })
            .await;
        waited_for(waited, || {
            format!("waiting for {} to be deleted", target.id)
        })
        .map_or_else(|ended| ended, |()| Outcome::Done)
    }

    // ----- plumbing -------------------------------------------------------------------------

    /// Waits for an operation, polling with backoff, without holding an API lane between polls.
    /// How long it ran by the cloud's timestamps, when the last poll tells, is added to the step's
    /// sum ([`Reporter::step_operations`]).
    async fn wait(&self, target: &Target, op: &OperationRef) -> Waited<()> {
        // Errors in a row; a running operation resets the count.
        let errors = AtomicU32::new(0);
        let errors = &errors;
        self.poller(target)
            .until(true, |_| async move {
                let polled = self.with_lane(target, self.provider.poll_timed(op)).await;
                if let Ok(Polled { ran: Some(ran), .. }) = &polled {
                    *self
                        .operations_ran
                        .lock()
                        .entry(target.addr.clone())
                        .or_default() += *ran;
                }
                match polled.map(|p| p.status) {
                    Ok(OpStatus::Done) => Look::Done(()),
                    Ok(OpStatus::Failed(e)) => Look::Failed(e),
                    Ok(OpStatus::Running { progress }) => {
                        errors.store(0, Ordering::SeqCst);
                        if let Some(p) = progress {
                            self.reporter.step_progress(&target.addr, &p);
                        }
                        Look::Pending
                    }
                    // Pollers must tolerate throttling and brief 404s of the operation itself.
                    Err(e)
                        if e.class.is_retryable()
                            || (e.class == ErrorClass::NotFound
                                && errors.load(Ordering::SeqCst) < 3) =>
                    {
                        let n = errors.fetch_add(1, Ordering::SeqCst) + 1;
                        self.reporter
                            .step_retry(&target.addr, &e, n, Duration::ZERO);
                        // A wait inside a cluster cannot progress once the cluster is gone.
                        if n.is_multiple_of(3)
                            && let Some(gone) = self.container_gone(target).await
                        {
                            return Look::Failed(gone);
                        }
                        Look::Pending
                    }
                    Err(e) => Look::Failed(e),
                }
            })
            .await
    }

    /// The pace, deadline and stop signal of a wait for `target` (its kind's deadline).
    fn poller(&self, target: &Target) -> Poller<'_> {
        Poller {
            backoff: self.options.poll,
            jitter: &self.jitter,
            stop: &self.stop.waiting,
            deadline: self.deadline(target),
        }
    }

    async fn backoff(&self, target: &Target, error: &CloudError, attempt: u32) {
        let delay = self.jitter.retry_delay(&self.options.retry, attempt, error);
        self.reporter
            .step_retry(&target.addr, error, attempt, delay);
        tokio::select! {
            _ = self.stop.waiting.cancelled() => {}
            _ = tokio::time::sleep(delay) => {}
        }
    }

    fn deadline(&self, target: &Target) -> Instant {
        let d = self
            .options
            .deadlines
            .get(&target.addr.kind)
            .copied()
            .unwrap_or(Duration::from_secs(3600));
        Instant::now() + d
    }

    async fn read(&self, target: &Target) -> CloudResult<Option<Observed>> {
        let mut attempt = 0;
        loop {
            match self.with_lane(target, self.provider.read(target)).await {
                Err(e)
                    if e.class == ErrorClass::Transient
                        && attempt + 1 < self.options.max_attempts =>
                {
                    attempt += 1;
                    self.backoff(target, &e, attempt).await;
                }
                other => return other,
            }
        }
    }

    /// Runs one API call inside the target's API lane.
    async fn with_lane<T>(&self, target: &Target, call: impl std::future::Future<Output = T>) -> T {
        let lane = self.lanes.get(&target.addr.kind.api()).cloned();
        let _permit = match &lane {
            Some(l) => l.acquire().await.ok(),
            None => None,
        };
        call.await
    }

    /// Writes a journal entry; false if state could not be saved.
    async fn journal(
        &self,
        target: &Target,
        change: &Change,
        action: PendingAction,
        op: Option<OperationRef>,
    ) -> bool {
        let entry = PendingOperation {
            addr: target.addr.clone(),
            action,
            id: target.id.clone(),
            operation: op,
            spec: target.spec.clone(),
            dependencies: change.dependencies.clone(),
            lifecycle: target.lifecycle.clone(),
            started_at: now_rfc3339(),
        };
        self.save(|s| s.set_pending(entry)).await;
        self.state_error.lock().is_none()
    }

    async fn save(&self, f: impl FnOnce(&mut State)) {
        if let Err(e) = self.sink.update(f).await {
            let message = match e.hint() {
                Some(h) => format!("{e} ({h})"),
                None => e.to_string(),
            };
            self.reporter.warning(&message);
            self.state_error.lock().get_or_insert(message);
        }
    }

    fn state_failure(&self) -> Outcome {
        // Only called once a save failed, which stored its message.
        let message = self.state_error.lock().clone().unwrap_or_default();
        Outcome::Failed(CloudError::new(
            ErrorClass::Other,
            format!("cannot save state: {message}"),
        ))
    }
}

/// The current time as state records it (RFC 3339, seconds).
pub(crate) fn now_rfc3339() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}
