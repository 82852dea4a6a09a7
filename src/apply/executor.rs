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

use super::schedule::{self, Step, StepKind};
use super::sink::StateSink;
use super::{ApplyReport, Options, Outcome, Reporter, StepReport};
use crate::cloud::{
    CloudError, CloudResult, ErrorClass, OpStatus, Provider, Settle, Started, Target,
};
use crate::plan::{Change, Plan};
use crate::resource::{Addr, Api, Observed};
use crate::state::{OperationRef, PendingAction, PendingOperation, Record, State};
use parking_lot::Mutex;
use rand::{Rng, SeedableRng, rngs::StdRng};
use std::collections::BTreeMap;
use std::sync::Arc;
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
    rng: Mutex<StdRng>,
    started: Instant,
    state_error: Mutex<Option<String>>,
}

/// Why a wait ended without the operation finishing.
enum Waited {
    Done,
    Failed(CloudError),
    Interrupted,
    TimedOut,
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
        let rng = Mutex::new(StdRng::seed_from_u64(options.seed));
        Arc::new(Executor {
            provider,
            sink,
            reporter,
            options,
            stop,
            lanes,
            serial_lanes: Mutex::new(BTreeMap::new()),
            rng,
            started: Instant::now(),
            state_error: Mutex::new(None),
        })
    }

    /// Finishes what an earlier, interrupted apply left journaled: waits on every recorded
    /// operation and records its result. Entries without an operation (the process died before the
    /// cloud answered) are dropped: the next refresh shows whether the resource exists, and a
    /// create of a resource that does exists with a3ctl's mark is adopted.
    pub async fn resume(self: &Arc<Self>) -> Vec<StepReport> {
        let pending = self.sink.snapshot().await.pending;
        let mut reports = Vec::new();
        for p in pending {
            let start = self.started.elapsed();
            let kind = match p.action {
                PendingAction::Create => StepKind::Create,
                PendingAction::Update => StepKind::Update,
                PendingAction::Delete => StepKind::Delete,
            };
            let target = Target {
                addr: p.addr.clone(),
                id: p.id.clone(),
                spec: p.spec.clone(),
                outputs: serde_json::Value::Null,
                context: self.context_of(&p.dependencies).await,
                lifecycle: p.lifecycle.clone(),
            };
            let outcome = match &p.operation {
                None => {
                    self.save(|s| s.clear_pending(&p.addr)).await;
                    continue;
                }
                Some(op) => {
                    self.reporter.step_started(&p.addr, kind);
                    // Look before waiting: it reconnects clients that are built per target (a
                    // cluster's Kubernetes API) after a restart. Its answer is not needed.
                    let _ = self.read(&target).await;
                    match self.wait(&target, op).await {
                        Waited::Done => match p.action {
                            PendingAction::Delete => {
                                self.save(|s| {
                                    s.resources.remove(&p.addr);
                                    s.clear_pending(&p.addr);
                                })
                                .await;
                                Outcome::Done
                            }
                            _ => self.record_created(&target, &p.dependencies, false).await,
                        },
                        Waited::Failed(e) => {
                            self.after_failed_operation(&target, &p.dependencies, p.action)
                                .await;
                            Outcome::Failed(e)
                        }
                        Waited::Interrupted => Outcome::Interrupted,
                        Waited::TimedOut => Outcome::TimedOut {
                            operation: op.name.clone(),
                        },
                    }
                }
            };
            let end = self.started.elapsed();
            self.reporter
                .step_finished(&p.addr, kind, &outcome, end - start);
            reports.push(StepReport {
                addr: p.addr.clone(),
                kind,
                outcome,
                start,
                end,
            });
        }
        reports
    }

    /// Carries out `plan`. Always returns a report; state has been saved along the way.
    pub async fn apply(self: &Arc<Self>, plan: &Plan) -> ApplyReport {
        let state = self.sink.snapshot().await;
        let steps = Arc::new(schedule::steps(plan, &state));
        let mut outcomes: Vec<Option<StepReport>> = vec![None; steps.len()];
        let mut running = vec![false; steps.len()];
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
                    tasks.spawn(async move {
                        let start = this.started.elapsed();
                        this.reporter.step_started(&step.addr, step.kind);
                        let outcome = this.run_step(&step, &change).await;
                        let end = this.started.elapsed();
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
                        )
                    });
                }
            }
            let Some(joined) = tasks.join_next().await else {
                break;
            };
            let (i, report) = match joined {
                Ok(r) => r,
                Err(e) => {
                    // A task panicked: the step's state is unknown, but the journal still has it.
                    self.reporter
                        .warning(&format!("internal error in a step: {e}"));
                    continue;
                }
            };
            running[i] = false;
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
        ApplyReport {
            steps: steps_report,
            state_error: self.state_error.lock().clone(),
        }
    }

    async fn run_step(self: &Arc<Self>, step: &Step, change: &Change) -> Outcome {
        let target = self.target_for(change, step.kind).await;
        let _serial = match (step.kind, self.provider.serial_lane(&target)) {
            (StepKind::DeletedWith, _) | (_, None) => None,
            (_, Some(key)) => {
                let lane = self.serial_lanes.lock().entry(key).or_default().clone();
                Some(lane.lock_owned().await)
            }
        };
        match step.kind {
            StepKind::DeletedWith => {
                self.save(|s| {
                    s.resources.remove(&change.addr);
                })
                .await;
                Outcome::Subsumed
            }
            StepKind::Create => self.create(&target, change).await,
            StepKind::Update => self.update(&target, change).await,
            StepKind::Delete => self.delete(&target, change).await,
        }
    }

    async fn target_for(&self, change: &Change, kind: StepKind) -> Target {
        let state = self.sink.snapshot().await;
        let record = state.resources.get(&change.addr);
        let spec = match kind {
            StepKind::Create | StepKind::Update => change.after.clone(),
            StepKind::Delete | StepKind::DeletedWith => record
                .map(|r| r.spec.clone())
                .or_else(|| change.before.clone()),
        }
        .unwrap_or(serde_json::Value::Null);
        let deps = match kind {
            StepKind::Create | StepKind::Update => change.dependencies.clone(),
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

    async fn context_of(&self, deps: &[Addr]) -> BTreeMap<Addr, serde_json::Value> {
        self.sink.snapshot().await.context(deps)
    }

    // ----- create ---------------------------------------------------------------------------

    async fn create(self: &Arc<Self>, target: &Target, change: &Change) -> Outcome {
        if !self
            .journal(target, change, PendingAction::Create, None)
            .await
        {
            return self.state_failure();
        }
        let mut attempt = 0;
        loop {
            let result = self.with_lane(target, self.provider.create(target)).await;
            match result {
                Ok(Started::Done) => {
                    return self
                        .record_created(target, &change.dependencies, false)
                        .await;
                }
                Ok(Started::Operation(op)) => {
                    if !self
                        .journal(target, change, PendingAction::Create, Some(op.clone()))
                        .await
                    {
                        return self.state_failure();
                    }
                    return match self.wait(target, &op).await {
                        Waited::Done => {
                            self.record_created(target, &change.dependencies, false)
                                .await
                        }
                        Waited::Failed(e) => {
                            self.after_failed_operation(
                                target,
                                &change.dependencies,
                                PendingAction::Create,
                            )
                            .await;
                            Outcome::Failed(e)
                        }
                        Waited::Interrupted => Outcome::Interrupted,
                        Waited::TimedOut => Outcome::TimedOut { operation: op.name },
                    };
                }
                Err(e) if e.class == ErrorClass::AlreadyExists => {
                    return match self.read(target).await {
                        Ok(Some(observed)) if self.provider.owned(target, &observed) => {
                            self.adopt(target, &change.dependencies).await
                        }
                        Ok(Some(_)) => {
                            self.save(|s| s.clear_pending(&target.addr)).await;
                            Outcome::Failed(e.with_hint(format!(
                                "`{}` exists but was not created by this blueprint; take it over with `a3ctl import {} {} BLUEPRINT` (or everything at once with `a3ctl apply --adopt BLUEPRINT`), or give the blueprint another name",
                                target.id, target.addr, target.id
                            )))
                        }
                        Ok(None) | Err(_) if attempt + 1 < self.options.max_attempts => {
                            attempt += 1;
                            self.backoff(target, &e, attempt).await;
                            continue;
                        }
                        Ok(None) => {
                            self.save(|s| s.clear_pending(&target.addr)).await;
                            Outcome::Failed(e)
                        }
                        Err(read_error) => {
                            self.save(|s| s.clear_pending(&target.addr)).await;
                            Outcome::Failed(read_error)
                        }
                    };
                }
                Err(e) if e.class.is_retryable() && attempt + 1 < self.options.max_attempts => {
                    attempt += 1;
                    self.backoff(target, &e, attempt).await;
                    if self.stop.waiting.is_cancelled() {
                        return Outcome::Interrupted;
                    }
                    // The lost answer may hide a create that happened: look before retrying.
                    if e.class == ErrorClass::Transient
                        && let Ok(Some(observed)) = self.read(target).await
                        && self.provider.owned(target, &observed)
                    {
                        return self.adopt(target, &change.dependencies).await;
                    }
                }
                Err(e) => {
                    self.save(|s| s.clear_pending(&target.addr)).await;
                    return Outcome::Failed(e);
                }
            }
        }
    }

    /// Takes an existing, a3ctl-marked resource into state once it is usable.
    async fn adopt(self: &Arc<Self>, target: &Target, deps: &[Addr]) -> Outcome {
        let deadline = self.deadline(target);
        let mut attempt = 0;
        loop {
            match self.read(target).await {
                Ok(Some(observed)) => match self.provider.settle(target, &observed) {
                    Settle::Ready => {
                        let outcome = self.record_created(target, deps, false).await;
                        return if outcome == Outcome::Done {
                            Outcome::Adopted
                        } else {
                            outcome
                        };
                    }
                    Settle::Failed { message } => {
                        self.record_observed(target, deps, observed, true).await;
                        return Outcome::Failed(CloudError::new(ErrorClass::Other, message));
                    }
                    Settle::Pending { status } => {
                        self.reporter.step_progress(&target.addr, &status)
                    }
                },
                Ok(None) => {}
                Err(e) if e.class.is_retryable() => {}
                Err(e) => return Outcome::Failed(e),
            }
            if Instant::now() >= deadline {
                return Outcome::TimedOut {
                    operation: format!("waiting for {} to become ready", target.id),
                };
            }
            if !self.sleep_poll(attempt).await {
                return Outcome::Interrupted;
            }
            attempt += 1;
        }
    }

    /// Reads a freshly created resource and records it; retries reads that come back empty
    /// (eventual consistency) a few times.
    async fn record_created(&self, target: &Target, deps: &[Addr], tainted: bool) -> Outcome {
        for attempt in 0..self.options.max_attempts {
            match self.read(target).await {
                Ok(Some(observed)) => {
                    self.record_observed(target, deps, observed, tainted).await;
                    return if self.state_error.lock().is_some() {
                        self.state_failure()
                    } else {
                        Outcome::Done
                    };
                }
                Ok(None) => {}
                Err(e) if e.class.is_retryable() => {}
                Err(e) => return Outcome::Failed(e),
            }
            if !self.sleep_poll(attempt).await {
                return Outcome::Interrupted;
            }
        }
        Outcome::Failed(CloudError::new(
            ErrorClass::Other,
            format!(
                "`{}` was reported created but cannot be read back",
                target.id
            ),
        ))
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
            if !self
                .journal(target, change, PendingAction::Update, None)
                .await
            {
                return self.state_failure();
            }
            let mut attempt = 0;
            let started = loop {
                match self
                    .with_lane(target, self.provider.update(target, &step))
                    .await
                {
                    Ok(s) => break s,
                    Err(e) if e.class.is_retryable() && attempt + 1 < self.options.max_attempts => {
                        attempt += 1;
                        self.backoff(target, &e, attempt).await;
                        if self.stop.waiting.is_cancelled() {
                            return Outcome::Interrupted;
                        }
                    }
                    Err(e) => {
                        self.save(|s| s.clear_pending(&target.addr)).await;
                        return Outcome::Failed(
                            e.with_hint(format!("the `{}` call failed", step.name)),
                        );
                    }
                }
            };
            if let Started::Operation(op) = started {
                if !self
                    .journal(target, change, PendingAction::Update, Some(op.clone()))
                    .await
                {
                    return self.state_failure();
                }
                match self.wait(target, &op).await {
                    Waited::Done => {}
                    Waited::Failed(e) => {
                        self.save(|s| s.clear_pending(&target.addr)).await;
                        return Outcome::Failed(e);
                    }
                    Waited::Interrupted => return Outcome::Interrupted,
                    Waited::TimedOut => return Outcome::TimedOut { operation: op.name },
                }
            }
            // Record what this call changed, so state stays true if a later call fails.
            let fields = step.fields.clone();
            let desired = target.spec.clone();
            self.save(|s| {
                if let Some(r) = s.resources.get_mut(&target.addr) {
                    for f in &fields {
                        r.spec[f.as_str()] = desired[f.as_str()].clone();
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
        if !self
            .journal(target, change, PendingAction::Delete, None)
            .await
        {
            return self.state_failure();
        }
        let forget = |this: &Arc<Self>| {
            let this = this.clone();
            let addr = target.addr.clone();
            async move {
                this.save(|s| {
                    s.resources.remove(&addr);
                    s.clear_pending(&addr);
                })
                .await;
            }
        };
        let mut attempt = 0;
        loop {
            match self.with_lane(target, self.provider.delete(target)).await {
                Ok(Started::Done) => {
                    forget(self).await;
                    return Outcome::Done;
                }
                Ok(Started::Operation(op)) => {
                    if !self
                        .journal(target, change, PendingAction::Delete, Some(op.clone()))
                        .await
                    {
                        return self.state_failure();
                    }
                    return match self.wait(target, &op).await {
                        Waited::Done => {
                            forget(self).await;
                            Outcome::Done
                        }
                        Waited::Failed(e) => {
                            self.after_failed_operation(target, &[], PendingAction::Delete)
                                .await;
                            Outcome::Failed(e)
                        }
                        Waited::Interrupted => Outcome::Interrupted,
                        Waited::TimedOut => Outcome::TimedOut { operation: op.name },
                    };
                }
                Err(e) if e.class == ErrorClass::NotFound => {
                    forget(self).await;
                    return Outcome::Done;
                }
                Err(e) if e.class.is_retryable() && attempt + 1 < self.options.max_attempts => {
                    attempt += 1;
                    self.backoff(target, &e, attempt).await;
                    if self.stop.waiting.is_cancelled() {
                        return Outcome::Interrupted;
                    }
                    if e.class == ErrorClass::Transient
                        && matches!(self.read(target).await, Ok(None))
                    {
                        forget(self).await;
                        return Outcome::Done;
                    }
                }
                Err(e) => {
                    self.save(|s| s.clear_pending(&target.addr)).await;
                    return Outcome::Failed(e);
                }
            }
        }
    }

    // ----- plumbing -------------------------------------------------------------------------

    /// Waits for an operation, polling with backoff, without holding an API lane between polls.
    async fn wait(&self, target: &Target, op: &OperationRef) -> Waited {
        let deadline = self.deadline(target);
        let mut attempt = 0;
        let mut errors = 0;
        loop {
            if !self.sleep_poll(attempt).await {
                return Waited::Interrupted;
            }
            attempt += 1;
            let polled = self.with_lane(target, self.provider.poll(op)).await;
            match polled {
                Ok(OpStatus::Done) => return Waited::Done,
                Ok(OpStatus::Failed(e)) => return Waited::Failed(e),
                Ok(OpStatus::Running { progress }) => {
                    errors = 0;
                    if let Some(p) = progress {
                        self.reporter.step_progress(&target.addr, &p);
                    }
                }
                // Pollers must tolerate throttling and brief 404s of the operation itself.
                Err(e)
                    if e.class.is_retryable()
                        || (e.class == ErrorClass::NotFound && errors < 3) =>
                {
                    errors += 1;
                    self.reporter
                        .step_retry(&target.addr, &e, errors, Duration::ZERO);
                }
                Err(e) => return Waited::Failed(e),
            }
            if Instant::now() >= deadline {
                return Waited::TimedOut;
            }
        }
    }

    /// Sleeps before the `attempt`-th poll; false when interrupted.
    async fn sleep_poll(&self, attempt: u32) -> bool {
        let delay = self.jitter(self.options.poll.ceiling(attempt));
        tokio::select! {
            _ = self.stop.waiting.cancelled() => false,
            _ = tokio::time::sleep(delay) => true,
        }
    }

    async fn backoff(&self, target: &Target, error: &CloudError, attempt: u32) {
        let delay = self.jitter(self.options.retry.ceiling(attempt - 1));
        self.reporter
            .step_retry(&target.addr, error, attempt, delay);
        tokio::select! {
            _ = self.stop.waiting.cancelled() => {}
            _ = tokio::time::sleep(delay) => {}
        }
    }

    /// Between half the ceiling and the ceiling.
    fn jitter(&self, ceiling: Duration) -> Duration {
        let fraction: f64 = self.rng.lock().random_range(0.5..=1.0);
        ceiling.mul_f64(fraction)
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
