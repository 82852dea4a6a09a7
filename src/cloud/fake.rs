//! An in-memory [`Provider`] for engine tests: resources appear after a configurable number of
//! polls, and any call can be made to fail through replaceable hooks (after Pulumi's
//! `deploytest` provider: each test overrides only what it needs).

use super::{
    CloudError, CloudResult, ErrorClass, OpStatus, Polled, Provider, Settle, Started, Target,
    UpdateStep,
};
use crate::resource::FieldDiff;
use crate::resource::OperationRef;
use crate::resource::{Addr, Api, Observed};
use parking_lot::Mutex;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

/// What a hook can make a call do instead of succeeding.
pub type Hook = Arc<dyn Fn(&str, &Addr, u32) -> Option<CloudError> + Send + Sync>;

#[derive(Default)]
struct World {
    live: BTreeMap<Addr, Value>,
    /// Operation name → (target, remaining polls, effect on completion, failure).
    operations: BTreeMap<String, FakeOperation>,
    next_op: u64,
    /// Calls per `verb addr`.
    calls: BTreeMap<String, u32>,
    /// Every mutation in order, as `verb addr`.
    log: Vec<String>,
    /// Concurrently running operations per serial lane, and the maximum seen.
    lane_running: BTreeMap<String, u32>,
    pub lane_max: BTreeMap<String, u32>,
}

/// An operation in flight: what it acts on, polls left, what it does, how it fails, its lane.
struct FakeOperation {
    addr: Addr,
    remaining: u32,
    effect: Effect,
    failure: Option<CloudError>,
    lane: Option<String>,
}

#[derive(Clone)]
enum Effect {
    Put(Value),
    Remove,
}

/// The fake cloud.
#[derive(Clone, Default)]
pub struct FakeProvider {
    world: Arc<Mutex<World>>,
    /// Polls an operation takes before it is done.
    pub polls: u32,
    /// Called before each mutation with `(verb, addr, nth call)`; an error fails the call.
    pub fail_call: Option<Hook>,
    /// Called when an operation completes; an error makes it end failed.
    pub fail_operation: Option<Hook>,
    /// Simulated latency of each poll.
    pub poll_delay: Duration,
    /// How long every ended operation ran by its timestamps ([`Provider::poll_timed`]); `None`:
    /// operations without times.
    pub operation_time: Option<Duration>,
}

impl FakeProvider {
    pub fn new(polls: u32) -> FakeProvider {
        FakeProvider {
            polls,
            ..Default::default()
        }
    }

    /// Puts a resource in the fake cloud directly (something created outside a3ctl).
    pub fn insert_live(&self, addr: &Addr, spec: Value) {
        self.world.lock().live.insert(addr.clone(), spec);
    }

    pub fn remove_live(&self, addr: &Addr) {
        self.world.lock().live.remove(addr);
    }

    pub fn live(&self) -> BTreeMap<Addr, Value> {
        self.world.lock().live.clone()
    }

    /// Every mutation, as `create network.a`, in the order they were made.
    pub fn log(&self) -> Vec<String> {
        self.world.lock().log.clone()
    }

    /// The most operations that ran at once on each serial lane.
    pub fn lane_max(&self) -> BTreeMap<String, u32> {
        self.world.lock().lane_max.clone()
    }

    fn start(&self, verb: &str, target: &Target, effect: Effect) -> CloudResult<Started> {
        let mut w = self.world.lock();
        let key = format!("{verb} {}", target.addr);
        let n = {
            let c = w.calls.entry(key.clone()).or_default();
            *c += 1;
            *c
        };
        if let Some(hook) = &self.fail_call
            && let Some(err) = hook(verb, &target.addr, n)
        {
            return Err(err);
        }
        w.log.push(key);
        let lane = lane_of(target);
        if let Some(lane) = lane.clone() {
            let running = w.lane_running.entry(lane.clone()).or_default();
            *running += 1;
            let now = *running;
            let max = w.lane_max.entry(lane).or_default();
            *max = (*max).max(now);
        }
        w.next_op += 1;
        let name = format!("op-{}", w.next_op);
        let failure = self
            .fail_operation
            .as_ref()
            .and_then(|h| h(verb, &target.addr, n));
        w.operations.insert(
            name.clone(),
            FakeOperation {
                addr: target.addr.clone(),
                remaining: self.polls,
                effect,
                failure,
                lane,
            },
        );
        Ok(Started::Operation(OperationRef {
            api: Api::Compute,
            name,
        }))
    }
}

fn lane_of(target: &Target) -> Option<String> {
    target
        .spec
        .get("cluster")
        .and_then(Value::as_str)
        .map(str::to_string)
        .or_else(|| {
            (target.addr.kind == crate::resource::Kind::Cluster)
                .then(|| target.spec["name"].as_str().unwrap_or("").to_string())
        })
}

#[async_trait::async_trait]
impl Provider for FakeProvider {
    async fn read(&self, target: &Target) -> CloudResult<Option<Observed>> {
        let w = self.world.lock();
        Ok(w.live.get(&target.addr).map(|spec| Observed {
            spec: spec.clone(),
            outputs: json!({"id": target.id}),
        }))
    }

    async fn create(&self, target: &Target) -> CloudResult<Started> {
        if self.world.lock().live.contains_key(&target.addr) {
            let mut err = CloudError::new(
                ErrorClass::AlreadyExists,
                format!("{} already exists", target.id),
            );
            err.http_status = Some(409);
            self.world
                .lock()
                .log
                .push(format!("create {} (409)", target.addr));
            return Err(err);
        }
        self.start("create", target, Effect::Put(target.spec.clone()))
    }

    fn update_steps(&self, _target: &Target, diffs: &[FieldDiff]) -> Vec<UpdateStep> {
        diffs
            .iter()
            .map(|d| UpdateStep {
                name: format!("set_{}", d.field),
                fields: vec![d.field.clone()],
                reaches: None,
            })
            .collect()
    }

    async fn update(&self, target: &Target, step: &UpdateStep) -> CloudResult<Started> {
        let mut spec = self
            .world
            .lock()
            .live
            .get(&target.addr)
            .cloned()
            .unwrap_or_else(|| json!({}));
        for field in &step.fields {
            spec[field] = target.spec[field].clone();
        }
        self.start("update", target, Effect::Put(spec))
    }

    async fn delete(&self, target: &Target) -> CloudResult<Started> {
        if !self.world.lock().live.contains_key(&target.addr) {
            let mut err = CloudError::new(ErrorClass::NotFound, format!("{} not found", target.id));
            err.http_status = Some(404);
            return Err(err);
        }
        self.start("delete", target, Effect::Remove)
    }

    async fn poll_timed(&self, operation: &OperationRef) -> CloudResult<Polled> {
        let status = self.poll(operation).await?;
        let ran = match status {
            OpStatus::Running { .. } => None,
            OpStatus::Done | OpStatus::Failed(_) => self.operation_time,
        };
        Ok(Polled { status, ran })
    }

    async fn poll(&self, operation: &OperationRef) -> CloudResult<OpStatus> {
        if !self.poll_delay.is_zero() {
            tokio::time::sleep(self.poll_delay).await;
        }
        let mut w = self.world.lock();
        let Some(op) = w.operations.get_mut(&operation.name) else {
            return Err(CloudError::new(
                ErrorClass::NotFound,
                format!("operation {} not found", operation.name),
            ));
        };
        if op.remaining > 0 {
            op.remaining -= 1;
            return Ok(OpStatus::Running {
                progress: Some(format!("{} polls left", op.remaining)),
            });
        }
        let Some(FakeOperation {
            addr,
            effect,
            failure,
            lane,
            ..
        }) = w.operations.remove(&operation.name)
        else {
            return Err(CloudError::new(
                ErrorClass::NotFound,
                format!("operation {} not found", operation.name),
            ));
        };
        if let Some(lane) = lane
            && let Some(r) = w.lane_running.get_mut(&lane)
        {
            *r = r.saturating_sub(1);
        }
        if let Some(err) = failure {
            return Ok(OpStatus::Failed(err));
        }
        match effect {
            Effect::Put(spec) => {
                w.live.insert(addr, spec);
            }
            Effect::Remove => {
                w.live.remove(&addr);
            }
        }
        Ok(OpStatus::Done)
    }

    fn settle(&self, _target: &Target, _observed: &Observed) -> Settle {
        Settle::Ready
    }

    fn owned(&self, target: &Target, observed: &Observed) -> bool {
        observed.spec.get("owner") == target.spec.get("owner")
            && observed.spec.get("owner").is_some()
    }

    fn serial_lane(&self, target: &Target) -> Option<String> {
        lane_of(target)
    }
}
