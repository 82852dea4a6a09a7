//! Carrying out a plan. Deciding what to do lives in [`crate::plan`]; this module acts and never
//! diffs.
//!
//! The contract of [`executor::Executor::apply`]:
//! - everything that can run at once does: a step starts as soon as the steps it waits for
//!   ([`schedule`]) have succeeded; calls to each API share a concurrency lane, but no lane slot is
//!   held while merely waiting on an operation; mutations of one GKE cluster (the cluster and its
//!   node pools) run one at a time, as GKE requires;
//! - state is saved after every started operation and every finished step, through one writer
//!   ([`sink::StateSink`]); the operation name is journaled before waiting on it, so a killed apply
//!   resumes waiting on the next run ([`executor::Executor::resume`]) instead of creating again;
//! - a failure stops only its dependents; independent branches finish; the report says what
//!   failed, why, and what was skipped because of it;
//! - the first interrupt stops starting new steps and lets in-flight ones finish; the second stops
//!   waiting at once (operations stay journaled). State is saved either way.

pub mod estimate;
pub mod executor;
pub mod schedule;
pub mod sink;
#[cfg(test)]
mod tests;

use crate::cloud::CloudError;
use crate::resource::{Addr, Api, Kind};
pub use schedule::StepKind;
use serde::Serialize;
use std::collections::BTreeMap;
use std::time::Duration;

/// How a step ended.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    Done,
    /// The resource already existed with a3ctl's mark and was taken into state.
    Adopted,
    /// Removed together with the resource it lives in.
    Subsumed,
    Failed(CloudError),
    /// Not attempted because a step it waits for did not succeed.
    Skipped {
        because: Addr,
    },
    /// Stopped by an interrupt; its operation (if any) stays journaled.
    Interrupted,
    /// Never started because of an interrupt.
    NotStarted,
    /// The operation outlived the kind's deadline; it stays journaled.
    TimedOut {
        operation: String,
    },
}

impl Outcome {
    pub fn is_success(&self) -> bool {
        matches!(self, Outcome::Done | Outcome::Adopted | Outcome::Subsumed)
    }
}

/// One step's result, with its start and end relative to the start of the apply.
#[derive(Debug, Clone, PartialEq)]
pub struct StepReport {
    pub addr: Addr,
    pub kind: StepKind,
    pub outcome: Outcome,
    pub start: Duration,
    pub end: Duration,
}

/// The result of an apply.
#[derive(Debug, Clone, Default)]
pub struct ApplyReport {
    pub steps: Vec<StepReport>,
    /// The state could not be saved (the apply stopped starting new steps).
    pub state_error: Option<String>,
    /// How long the apply's cloud operations took by their own timestamps, as the longer of
    /// their longest dependency chain and their chain through the cluster (GKE runs one operation
    /// at a time per cluster); `None` when no step reported an operation's time. In the sandbox
    /// this is the simulated time the apply would take against the cloud.
    pub cloud_time: Option<Duration>,
}

impl ApplyReport {
    pub fn succeeded(&self) -> bool {
        self.state_error.is_none() && self.steps.iter().all(|s| s.outcome.is_success())
    }

    pub fn failures(&self) -> impl Iterator<Item = (&StepReport, &CloudError)> {
        self.steps.iter().filter_map(|s| match &s.outcome {
            Outcome::Failed(e) => Some((s, e)),
            _ => None,
        })
    }

    /// Entries for `--timings FILE`.
    pub fn timings(&self) -> Vec<Timing> {
        self.steps
            .iter()
            .map(|s| Timing {
                address: s.addr.to_string(),
                step: s.kind.label().to_string(),
                start_ms: s.start.as_millis() as u64,
                end_ms: s.end.as_millis() as u64,
                outcome: s.outcome.label().to_string(),
            })
            .collect()
    }
}

impl Outcome {
    pub fn label(&self) -> &'static str {
        match self {
            Outcome::Done => "done",
            Outcome::Adopted => "adopted",
            Outcome::Subsumed => "deleted-with-container",
            Outcome::Failed(_) => "failed",
            Outcome::Skipped { .. } => "skipped",
            Outcome::Interrupted => "interrupted",
            Outcome::NotStarted => "not-started",
            Outcome::TimedOut { .. } => "timed-out",
        }
    }
}

impl StepKind {
    pub fn label(self) -> &'static str {
        match self {
            StepKind::Create => "create",
            StepKind::Update => "update",
            StepKind::Delete => "delete",
            StepKind::DeletedWith => "delete",
            StepKind::Forget => "forget",
            StepKind::Resume => "resume",
        }
    }
}

/// One line of `--timings` output.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Timing {
    pub address: String,
    pub step: String,
    pub start_ms: u64,
    pub end_ms: u64,
    pub outcome: String,
}

/// Backoff delays live with every other retry rule in [`crate::cloud::retry`].
pub use crate::cloud::retry::Backoff;

/// Tuning of the executor.
#[derive(Debug, Clone)]
pub struct Options {
    /// Concurrent API calls per API (not waits).
    pub lanes: BTreeMap<Api, usize>,
    /// Delay between polls of one operation.
    pub poll: Backoff,
    /// Delay between retries of a call that failed transiently.
    pub retry: Backoff,
    /// Attempts per call before a transient error is reported.
    pub max_attempts: u32,
    /// How long an operation of each kind may run.
    pub deadlines: BTreeMap<Kind, Duration>,
    /// Seed of the jitter.
    pub seed: u64,
}

impl Default for Options {
    fn default() -> Self {
        let lanes = [
            (Api::Compute, 8),
            (Api::Container, 4),
            (Api::Filestore, 2),
            (Api::ArtifactRegistry, 4),
            (Api::Storage, 4),
            (Api::Kubernetes, 8),
        ]
        .into_iter()
        .collect();
        let minutes = |m: u64| Duration::from_secs(m * 60);
        let deadlines = Kind::ALL
            .iter()
            .map(|kind| (*kind, minutes(kind.info().deadline_minutes)))
            .collect();
        Options {
            lanes,
            poll: Backoff {
                initial: Duration::from_secs(2),
                max: Duration::from_secs(30),
                multiplier: 1.5,
            },
            retry: Backoff {
                initial: Duration::from_secs(1),
                max: Duration::from_secs(60),
                multiplier: 2.0,
            },
            max_attempts: 8,
            deadlines,
            seed: rand::random(),
        }
    }
}

/// Observer of an apply; the UI implements it, the engine never prints.
pub trait Reporter: Send + Sync {
    fn step_started(&self, _addr: &Addr, _kind: StepKind) {}
    /// The operation's status, e.g. `RUNNING`.
    fn step_progress(&self, _addr: &Addr, _status: &str) {}
    fn step_retry(&self, _addr: &Addr, _error: &CloudError, _attempt: u32, _delay: Duration) {}
    /// How long the step's long-running operations ran by the cloud's own timestamps
    /// ([`crate::cloud::Polled::ran`]), not by a3ctl's clock: the sum over every operation of the
    /// step that reported its start and end (a step may wait on several: one per call of an
    /// update, an interrupted run's operation and then its own). Sent once, just before
    /// [`Reporter::step_finished`], and only when at least one operation reported its times: a
    /// step of synchronous calls (Kubernetes objects, buckets, IAM members), or of operations
    /// without times (Artifact Registry, Service Usage), sends none.
    fn step_operations(&self, _addr: &Addr, _ran: Duration) {}
    fn step_finished(&self, _addr: &Addr, _kind: StepKind, _outcome: &Outcome, _elapsed: Duration) {
    }
    fn warning(&self, _message: &str) {}
}

/// A reporter that reports nothing.
pub struct Silent;
impl Reporter for Silent {}

/// Logs every event of an apply ([`crate::logging`]) and passes it on to the reporter it wraps.
pub struct Traced(pub std::sync::Arc<dyn Reporter>);

impl Reporter for Traced {
    fn step_started(&self, addr: &Addr, kind: StepKind) {
        tracing::info!(addr = %addr, step = ?kind, "step started");
        self.0.step_started(addr, kind);
    }
    fn step_progress(&self, addr: &Addr, status: &str) {
        tracing::debug!(addr = %addr, status, "operation status");
        self.0.step_progress(addr, status);
    }
    fn step_retry(&self, addr: &Addr, error: &CloudError, attempt: u32, delay: Duration) {
        tracing::warn!(
            addr = %addr,
            attempt,
            delay_ms = delay.as_millis() as u64,
            http_status = error.http_status,
            status = %error.status,
            reason = %error.reason,
            class = ?error.class,
            "retrying after: {}",
            error.message
        );
        self.0.step_retry(addr, error, attempt, delay);
    }
    fn step_operations(&self, addr: &Addr, ran: Duration) {
        tracing::info!(addr = %addr, ran_ms = ran.as_millis() as u64, "operations ran (cloud's times)");
        self.0.step_operations(addr, ran);
    }
    fn step_finished(&self, addr: &Addr, kind: StepKind, outcome: &Outcome, elapsed: Duration) {
        let elapsed_ms = elapsed.as_millis() as u64;
        match outcome {
            Outcome::Failed(error) => tracing::error!(
                addr = %addr,
                step = ?kind,
                elapsed_ms,
                http_status = error.http_status,
                status = %error.status,
                reason = %error.reason,
                "step failed: {}",
                error.message
            ),
            other => {
                tracing::info!(addr = %addr, step = ?kind, elapsed_ms, outcome = ?other, "step finished")
            }
        }
        self.0.step_finished(addr, kind, outcome, elapsed);
    }
    fn warning(&self, message: &str) {
        tracing::warn!("{message}");
        self.0.warning(message);
    }
}
