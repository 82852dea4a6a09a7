//! Executor behaviour against the in-memory fake provider, on Tokio's paused clock (so waiting is
//! instant and deterministic).

use super::executor::{Executor, Stop};
use super::sink::{Discard, StateSink};
use super::{Backoff, Options, Outcome, Reporter, Silent, StepKind};
use crate::cloud::fake::FakeProvider;
use crate::cloud::{CloudError, ErrorClass};
use crate::plan::planner::{Refreshed, plan};
use crate::resource::{Addr, Desired, Kind, Lifecycle};
use crate::state::{OperationRef, PendingAction, PendingOperation, State};
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;

fn options() -> Options {
    Options {
        poll: Backoff {
            initial: Duration::from_secs(1),
            max: Duration::from_secs(5),
            multiplier: 1.5,
        },
        retry: Backoff {
            initial: Duration::from_secs(1),
            max: Duration::from_secs(5),
            multiplier: 2.0,
        },
        seed: 7,
        ..Options::default()
    }
}

fn d(kind: Kind, name: &str, spec: Value, deps: &[&Addr]) -> Desired {
    let mut spec = spec;
    spec["owner"] = json!("bp");
    spec["name"] = json!(name);
    Desired {
        addr: Addr::new(kind, name),
        id: format!("projects/p/{kind}/{name}"),
        spec,
        dependencies: deps.iter().map(|a| (*a).clone()).collect(),
        lifecycle: Lifecycle::default(),
    }
}

/// network.a, network.b (independent), subnet.a → network.a, cluster.c → subnet.a,
/// node_pool.p1 / p2 → cluster.c (deleted with it).
fn blueprint() -> Vec<Desired> {
    let net_a = Addr::new(Kind::Network, "a");
    let subnet = Addr::new(Kind::Subnetwork, "a");
    let cluster = Addr::new(Kind::Cluster, "c");
    let mut pools: Vec<Desired> = ["p1", "p2"]
        .iter()
        .map(|p| {
            d(
                Kind::NodePool,
                p,
                json!({"cluster": "c", "node_count": 2}),
                &[&cluster],
            )
        })
        .collect();
    for p in &mut pools {
        p.lifecycle.deleted_with = Some(cluster.clone());
    }
    let mut all = vec![
        d(Kind::Network, "a", json!({}), &[]),
        d(Kind::Network, "b", json!({}), &[]),
        d(Kind::Subnetwork, "a", json!({}), &[&net_a]),
        d(Kind::Cluster, "c", json!({}), &[&subnet]),
    ];
    all.extend(pools);
    all
}

async fn run(
    fake: &FakeProvider,
    state: State,
    desired: &[Desired],
    destroy: bool,
) -> (super::ApplyReport, State) {
    run_reporting(fake, state, desired, destroy, Arc::new(Silent)).await
}

async fn run_reporting(
    fake: &FakeProvider,
    state: State,
    desired: &[Desired],
    destroy: bool,
    reporter: Arc<dyn Reporter>,
) -> (super::ApplyReport, State) {
    let p = plan(desired, &state, &Refreshed::new(), destroy).unwrap();
    let sink = Arc::new(StateSink::new(state, Box::new(Discard)));
    let exec = Executor::new(
        Arc::new(fake.clone()),
        sink.clone(),
        reporter,
        options(),
        Stop::default(),
    );
    let report = exec.apply(&p).await;
    drop(exec);
    let state = Arc::try_unwrap(sink)
        .ok()
        .expect("executor dropped")
        .into_state();
    (report, state)
}

#[tokio::test(start_paused = true)]
async fn applies_everything_in_order_and_serialises_each_cluster() {
    let fake = FakeProvider::new(3);
    let (report, state) = run(&fake, State::new("bp", "l".into()), &blueprint(), false).await;
    assert!(report.succeeded(), "{:?}", report.steps);
    assert_eq!(state.resources.len(), 6);
    assert!(state.pending.is_empty());
    let log = fake.log();
    let pos = |s: &str| log.iter().position(|l| l == s).unwrap();
    assert!(pos("create network.a") < pos("create subnetwork.a"));
    assert!(pos("create subnetwork.a") < pos("create cluster.c"));
    assert!(pos("create cluster.c") < pos("create node_pool.p1"));
    // Independent branches start together; node pools share the cluster's lane.
    assert_eq!(&log[..2], ["create network.a", "create network.b"]);
    assert_eq!(fake.lane_max().get("c"), Some(&1));
    // A second plan against the same cloud is empty.
    let again = plan(&blueprint(), &state, &Refreshed::new(), false).unwrap();
    assert!(again.is_empty());
}

#[tokio::test(start_paused = true)]
async fn a_failure_stops_only_its_dependents_and_state_stays_true() {
    let mut fake = FakeProvider::new(2);
    fake.fail_operation = Some(Arc::new(|verb, addr, _| {
        (verb == "create" && addr.kind == Kind::Subnetwork).then(|| {
            let mut e = CloudError::new(
                ErrorClass::Quota,
                "Quota 'SUBNETWORKS' exceeded.  Limit: 15.0 globally.",
            );
            e.status = "QUOTA_EXCEEDED".into();
            e
        })
    }));
    let (report, state) = run(&fake, State::new("bp", "l".into()), &blueprint(), false).await;
    assert!(!report.succeeded());
    let outcome = |name: &str| {
        report
            .steps
            .iter()
            .find(|s| s.addr.to_string() == name)
            .unwrap()
            .outcome
            .clone()
    };
    assert!(matches!(outcome("subnetwork.a"), Outcome::Failed(e) if e.class == ErrorClass::Quota));
    assert!(
        matches!(outcome("cluster.c"), Outcome::Skipped { because } if because.to_string() == "subnetwork.a")
    );
    assert!(matches!(outcome("node_pool.p1"), Outcome::Skipped { .. }));
    assert_eq!(outcome("network.b"), Outcome::Done);
    let recorded: Vec<String> = state.resources.keys().map(|a| a.to_string()).collect();
    assert_eq!(recorded, ["network.a", "network.b"]);
    assert!(state.pending.is_empty());
}

#[tokio::test(start_paused = true)]
async fn transient_errors_are_retried_and_lost_creates_are_not_repeated() {
    let mut fake = FakeProvider::new(1);
    // Every first create answers 503, as if the response was lost.
    fake.fail_call = Some(Arc::new(|verb, _, n| {
        (verb == "create" && n == 1)
            .then(|| CloudError::new(ErrorClass::Transient, "503 backendError"))
    }));
    let (report, state) = run(&fake, State::new("bp", "l".into()), &blueprint(), false).await;
    assert!(report.succeeded(), "{:?}", report.steps);
    assert_eq!(state.resources.len(), 6);
    let creates = fake
        .log()
        .iter()
        .filter(|l| l.starts_with("create"))
        .count();
    assert_eq!(creates, 6, "{:?}", fake.log());
}

#[tokio::test(start_paused = true)]
async fn conflicts_adopt_our_resources_and_refuse_foreign_ones() {
    let fake = FakeProvider::new(1);
    let ours = d(Kind::Network, "b", json!({}), &[]);
    fake.insert_live(&ours.addr, ours.spec.clone());
    let foreign = Addr::new(Kind::Network, "a");
    fake.insert_live(&foreign, json!({"name": "a", "owner": "someone-else"}));
    let (report, state) = run(&fake, State::new("bp", "l".into()), &blueprint(), false).await;
    let outcome = |name: &str| {
        report
            .steps
            .iter()
            .find(|s| s.addr.to_string() == name)
            .unwrap()
            .outcome
            .clone()
    };
    assert_eq!(outcome("network.b"), Outcome::Adopted);
    let Outcome::Failed(e) = outcome("network.a") else {
        panic!("{:?}", outcome("network.a"))
    };
    assert!(e.hint.unwrap().contains("a3ctl import network.a"));
    assert!(state.resources.contains_key(&ours.addr));
    assert!(!state.resources.contains_key(&foreign));
}

#[tokio::test(start_paused = true)]
async fn resume_waits_on_journaled_operations_instead_of_creating_again() {
    let fake = FakeProvider::new(2);
    let net = d(Kind::Network, "a", json!({}), &[]);
    // Simulate a killed apply: the create was sent and journaled, then the process died.
    let (_, _) = {
        let target = crate::cloud::Target {
            addr: net.addr.clone(),
            id: net.id.clone(),
            spec: net.spec.clone(),
            outputs: Value::Null,
            context: Default::default(),
            lifecycle: Lifecycle::default(),
        };
        use crate::cloud::Provider;
        let crate::cloud::Started::Operation(op) = fake.create(&target).await.unwrap() else {
            panic!()
        };
        (op, target)
    };
    let mut state = State::new("bp", "l".into());
    state.set_pending(PendingOperation {
        addr: net.addr.clone(),
        action: PendingAction::Create,
        id: net.id.clone(),
        operation: Some(OperationRef {
            api: crate::resource::Api::Compute,
            name: "op-1".into(),
        }),
        spec: net.spec.clone(),
        dependencies: vec![],
        lifecycle: Lifecycle::default(),
        started_at: String::new(),
    });
    let sink = Arc::new(StateSink::new(state, Box::new(Discard)));
    let exec = Executor::new(
        Arc::new(fake.clone()),
        sink.clone(),
        Arc::new(Silent),
        options(),
        Stop::default(),
    );
    let resumed = exec.resume().await;
    assert_eq!(resumed[0].outcome, Outcome::Done);
    let state = sink.snapshot().await;
    assert!(state.resources.contains_key(&net.addr));
    assert!(state.pending.is_empty());
    let p = plan(&[net], &state, &Refreshed::new(), false).unwrap();
    assert!(p.is_empty());
    assert_eq!(
        fake.log()
            .iter()
            .filter(|l| l.starts_with("create"))
            .count(),
        1
    );
}

#[tokio::test(start_paused = true)]
async fn destroy_deletes_in_reverse_and_pools_go_with_their_cluster() {
    let fake = FakeProvider::new(1);
    let (_, state) = run(&fake, State::new("bp", "l".into()), &blueprint(), false).await;
    let (report, state) = run(&fake, state, &[], true).await;
    assert!(report.succeeded(), "{:?}", report.steps);
    assert!(state.resources.is_empty());
    let deletes: Vec<String> = fake
        .log()
        .into_iter()
        .filter(|l| l.starts_with("delete"))
        .collect();
    assert!(
        !deletes.iter().any(|l| l.contains("node_pool")),
        "{deletes:?}"
    );
    let pos = |s: &str| deletes.iter().position(|l| l == s).unwrap();
    assert!(pos("delete cluster.c") < pos("delete subnetwork.a"));
    assert!(pos("delete subnetwork.a") < pos("delete network.a"));
    // The fake cloud kept the pools; a real cluster delete takes them along.
    let live: Vec<String> = fake.live().keys().map(|a| a.to_string()).collect();
    assert_eq!(live, ["node_pool.p1", "node_pool.p2"]);
}

#[tokio::test(start_paused = true)]
async fn first_interrupt_stops_new_steps_and_keeps_state_true() {
    let fake = FakeProvider::new(3);
    let p = plan(
        &blueprint(),
        &State::new("bp", "l".into()),
        &Refreshed::new(),
        false,
    )
    .unwrap();
    let sink = Arc::new(StateSink::new(
        State::new("bp", "l".into()),
        Box::new(Discard),
    ));
    let stop = Stop::default();
    stop.starting.cancel();
    let exec = Executor::new(
        Arc::new(fake.clone()),
        sink.clone(),
        Arc::new(Silent),
        options(),
        stop,
    );
    let report = exec.apply(&p).await;
    assert!(
        report
            .steps
            .iter()
            .all(|s| s.outcome == Outcome::NotStarted)
    );
    assert!(fake.log().is_empty());
    assert!(sink.snapshot().await.pending.is_empty());
}

/// Starts a create in the fake cloud and journals it, as an apply killed while waiting leaves it.
async fn journaled_create(fake: &FakeProvider, desired: &Desired, state: &mut State) {
    use crate::cloud::Provider;
    let target = crate::cloud::Target {
        addr: desired.addr.clone(),
        id: desired.id.clone(),
        spec: desired.spec.clone(),
        outputs: Value::Null,
        context: Default::default(),
        lifecycle: desired.lifecycle.clone(),
    };
    let crate::cloud::Started::Operation(op) = fake.create(&target).await.unwrap() else {
        panic!("the fake always starts an operation")
    };
    state.set_pending(PendingOperation {
        addr: desired.addr.clone(),
        action: PendingAction::Create,
        id: desired.id.clone(),
        operation: Some(op),
        spec: desired.spec.clone(),
        dependencies: desired.dependencies.clone(),
        lifecycle: desired.lifecycle.clone(),
        started_at: String::new(),
    });
}

#[tokio::test(start_paused = true)]
async fn a_journaled_operation_is_resumed_inside_the_plan_without_holding_back_other_work() {
    // The journaled create takes 40 polls; network.b and its neighbours take 1.
    let slow = FakeProvider::new(40);
    let net_a = d(Kind::Network, "a", json!({}), &[]);
    let mut state = State::new("bp", "l".into());
    journaled_create(&slow, &net_a, &mut state).await;
    let mut fake = slow.clone();
    fake.polls = 1;
    let (report, state) = run(&fake, state, &blueprint(), false).await;
    assert!(report.succeeded(), "{:?}", report.steps);
    let step = |addr: &str| {
        report
            .steps
            .iter()
            .find(|s| s.addr.to_string() == addr)
            .unwrap_or_else(|| panic!("no step for {addr}"))
    };
    // network.b did not wait for the journaled create; subnetwork.a, which needs network.a, did.
    assert!(step("network.b").end < step("network.a").end);
    assert!(step("subnetwork.a").start >= step("network.a").end);
    assert_eq!(
        fake.log()
            .iter()
            .filter(|l| *l == "create network.a")
            .count(),
        1,
        "the journaled create is waited on, never sent again"
    );
    assert_eq!(state.resources.len(), 6);
    assert!(state.pending.is_empty());
}

#[tokio::test(start_paused = true)]
async fn a_journaled_operation_inside_a_cluster_that_is_gone_is_dropped_without_waiting() {
    let fake = FakeProvider::new(1);
    let cluster = Addr::new(Kind::Cluster, "c");
    let mut state = State::new("bp", "l".into());
    state.set_pending(PendingOperation {
        addr: Addr::new(Kind::Kubernetes, "queue"),
        action: PendingAction::Create,
        id: "k8s/queue".into(),
        // No such operation: polling it would fail (or, for a real cluster, never answer).
        operation: Some(OperationRef {
            api: crate::resource::Api::Kubernetes,
            name: "k8s://10.0.0.1/v1/Namespace/-/gone?until=active".into(),
        }),
        spec: json!({}),
        dependencies: vec![cluster.clone()],
        lifecycle: Lifecycle {
            deleted_with: Some(cluster),
            ..Default::default()
        },
        started_at: String::new(),
    });
    let (report, state) = run(&fake, state, &[], true).await;
    assert!(report.succeeded(), "{:?}", report.steps);
    assert!(report.steps.is_empty(), "{:?}", report.steps);
    assert!(state.pending.is_empty());
}

#[tokio::test(start_paused = true)]
async fn a_destroy_finishes_a_journaled_create_and_deletes_what_it_made() {
    let fake = FakeProvider::new(2);
    let net_b = d(Kind::Network, "b", json!({}), &[]);
    let mut state = State::new("bp", "l".into());
    journaled_create(&fake, &net_b, &mut state).await;
    let (report, state) = run(&fake, state, &[], true).await;
    assert!(report.succeeded(), "{:?}", report.steps);
    assert!(state.resources.is_empty() && state.pending.is_empty());
    assert!(fake.live().is_empty(), "nothing leaks: {:?}", fake.live());
    assert_eq!(fake.log(), ["create network.b", "delete network.b"]);
}

#[tokio::test(start_paused = true)]
async fn refresh_knows_what_lived_in_a_cluster_that_is_gone_without_reading_it() {
    use crate::plan::refresh::refresh;
    let fake = FakeProvider::new(1);
    let (_, state) = run(&fake, State::new("bp", "l".into()), &blueprint(), false).await;
    let cluster = Addr::new(Kind::Cluster, "c");
    // Deleted behind a3ctl's back; the fake keeps the pools (a real delete takes them along).
    fake.remove_live(&cluster);
    let refreshed = refresh(&fake, &state, 4).await.unwrap();
    assert_eq!(refreshed[&cluster], None);
    for pool in ["p1", "p2"] {
        assert_eq!(refreshed[&Addr::new(Kind::NodePool, pool)], None, "{pool}");
    }
    // The pools' cluster is no longer recorded (a destroy deleted it, then was killed).
    let mut forgotten = state.clone();
    forgotten.resources.remove(&cluster);
    let refreshed = refresh(&fake, &forgotten, 4).await.unwrap();
    assert_eq!(refreshed[&Addr::new(Kind::NodePool, "p1")], None);
    // A destroy of that state forgets the pools and deletes the rest, reading no cluster.
    let (report, state) = run(&fake, forgotten, &[], true).await;
    assert!(report.succeeded(), "{:?}", report.steps);
    assert!(state.resources.is_empty());
}

#[tokio::test(start_paused = true)]
async fn a_destroy_interrupted_after_the_cluster_went_forgets_its_pools_without_calls() {
    let fake = FakeProvider::new(1);
    let (_, mut state) = run(&fake, State::new("bp", "l".into()), &blueprint(), false).await;
    // The cluster's delete finished and was saved; the process died before its pools were
    // forgotten.
    let cluster = Addr::new(Kind::Cluster, "c");
    state.resources.remove(&cluster);
    fake.remove_live(&cluster);
    let (report, state) = run(&fake, state, &[], true).await;
    assert!(report.succeeded(), "{:?}", report.steps);
    assert!(state.resources.is_empty());
    assert!(
        !fake.log().iter().any(|l| l.starts_with("delete node_pool")),
        "{:?}",
        fake.log()
    );
}

/// Records the operation times and the ends of steps, in order, as `addr ran 90s` and
/// `addr finished`.
#[derive(Default)]
struct OperationTimes(parking_lot::Mutex<Vec<String>>);

impl Reporter for OperationTimes {
    fn step_operations(&self, addr: &Addr, ran: Duration) {
        self.0.lock().push(format!("{addr} ran {}s", ran.as_secs()));
    }
    fn step_finished(&self, addr: &Addr, _kind: StepKind, _outcome: &Outcome, _took: Duration) {
        self.0.lock().push(format!("{addr} finished"));
    }
}

#[tokio::test(start_paused = true)]
async fn each_step_reports_the_sum_of_its_operations_times_just_before_it_finishes() {
    let mut fake = FakeProvider::new(2);
    fake.operation_time = Some(Duration::from_secs(90));
    let times = Arc::new(OperationTimes::default());
    let (report, state) = run_reporting(
        &fake,
        State::new("bp", "l".into()),
        &blueprint(),
        false,
        times.clone(),
    )
    .await;
    assert!(report.succeeded(), "{:?}", report.steps);
    let events = std::mem::take(&mut *times.0.lock());
    // One operation each: its time, then the step's end.
    for addr in ["network.a", "subnetwork.a", "cluster.c", "node_pool.p1"] {
        let ran = events.iter().position(|e| *e == format!("{addr} ran 90s"));
        let finished = events.iter().position(|e| *e == format!("{addr} finished"));
        assert!(
            ran.is_some() && ran.map(|r| r + 1) == finished,
            "{addr}: {events:?}"
        );
    }
    assert_eq!(events.len(), 12, "{events:?}");

    // An update of two fields (two calls in the fake) waits on two operations: their sum.
    let mut desired = blueprint();
    let pool = desired
        .iter_mut()
        .find(|d| d.addr == Addr::new(Kind::NodePool, "p1"))
        .unwrap();
    pool.spec["node_count"] = json!(4);
    pool.spec["disk_size_gb"] = json!(200);
    let (report, _) = run_reporting(&fake, state, &desired, false, times.clone()).await;
    assert!(report.succeeded(), "{:?}", report.steps);
    assert_eq!(
        *times.0.lock(),
        ["node_pool.p1 ran 180s", "node_pool.p1 finished"]
    );

    // Operations without times: no event at all.
    let fake = FakeProvider::new(2);
    let times = Arc::new(OperationTimes::default());
    let (report, _) = run_reporting(
        &fake,
        State::new("bp", "l".into()),
        &blueprint(),
        false,
        times.clone(),
    )
    .await;
    assert!(report.succeeded(), "{:?}", report.steps);
    assert!(times.0.lock().iter().all(|e| e.ends_with(" finished")));
}
