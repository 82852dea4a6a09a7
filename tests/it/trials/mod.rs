//! Chaos trials, shared by the suite's seeded chaos test (`tests/it/chaos.rs`, manual clock) and
//! the chaos benchmark (`benches/chaos.rs`, realistic latency): apply a shipped blueprint, then
//! destroy it, against an in-process simulator that injects transient faults on every API — the
//! Kubernetes API servers included — and, optionally, interrupts one run at an exact request.
//!
//! A run is what one `a3ctl apply` / `a3ctl destroy` does, minus the terminal: fresh clients, the
//! state loaded from its file, refresh, plan, execute (`Executor::apply`, which resumes what an
//! interrupted run journaled). An interruption is a simulator tripwire: the chosen request is held
//! (before or after the simulator handled it) and the run's future is dropped as soon as it fires.
//! Dropping the future is the in-process equivalent of SIGKILL: every task of the run is
//! cancelled where it stands and only what reached the state file remains (`converge.rs` also
//! kills the real binary with SIGKILL during a cluster delete).
//!
//! After each phase the trial compares the simulator's inventory with the state: a resource the
//! simulator has twice (by kind and name) is a duplicate, one it has that the state does not
//! record is a leak, and anything left after the destroy is an orphan.

#![allow(dead_code)]

use a3ctl::apply::executor::{Executor, Stop};
use a3ctl::apply::sink::StateSink;
use a3ctl::apply::{Backoff, Options, Silent};
use a3ctl::cloud::gcp::{CredentialsMode, Endpoints, GcpConfig, GcpProvider};
use a3ctl::graph::ResourceGraph;
use a3ctl::plan::planner::plan;
use a3ctl::plan::refresh::refresh;
use a3ctl::state::State;
use a3ctl::state::store::LocalStore;
use a3ctl_sim::faults::{FaultConfig, TransientFaults, Tripwire};
use a3ctl_sim::{SimConfig, SimHandle};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// Every API the simulator serves, Kubernetes included.
pub const APIS: [&str; 6] = [
    "compute",
    "container",
    "file",
    "artifactregistry",
    "storage",
    "kube",
];

/// The shipped blueprints.
pub const BLUEPRINTS: [&str; 3] = ["minimal.toml", "a3-high.toml", "a3-mega.toml"];

/// Which run an interruption lands in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    Apply,
    Destroy,
}

/// An interruption point: the phase and the request it lands on.
#[derive(Debug, Clone)]
pub struct Interrupt {
    pub name: &'static str,
    pub phase: Phase,
    pub wire: Tripwire,
}

/// One trial.
#[derive(Debug, Clone)]
pub struct Trial {
    pub blueprint: &'static str,
    /// Seed of the simulator's faults and of the executor's jitter.
    pub seed: u64,
    /// Probability of a transient fault per request, on every API.
    pub rate: f64,
    pub interrupt: Option<Interrupt>,
}

/// What a trial found.
#[derive(Debug, Clone, Default)]
pub struct Outcome {
    /// Apply and destroy each finished cleanly within two re-runs of an interrupted or failed
    /// run.
    pub converged: bool,
    /// Re-runs needed (apply + destroy).
    pub reruns: u32,
    pub duplicates: usize,
    pub leaks: usize,
    pub orphans: usize,
    /// Whether the interruption point was reached.
    pub interrupted: bool,
    /// Wall time of the whole trial.
    pub real: Duration,
    /// Transient faults the simulator injected, by `api.kind` (its `/_sim/faults` counts, summed
    /// over the trial's runs).
    pub injected: BTreeMap<String, u64>,
    /// What went wrong, for the report.
    pub notes: Vec<String>,
}

/// The transient faults of a trial: `rate` on every API, every kind of fault the API has.
pub fn transient(seed: u64, rate: f64) -> FaultConfig {
    let mut faults = FaultConfig {
        seed: Some(seed),
        ..Default::default()
    };
    for api in APIS {
        faults.transient.insert(
            api.to_string(),
            TransientFaults {
                rate,
                kinds: vec![],
                methods: vec![],
            },
        );
    }
    faults
}

/// The fixed interruption points of the suite and the benchmark: requests every shipped
/// blueprint makes, `before` (nothing happened) or `after` (it happened, the answer is lost).
pub fn interrupts() -> Vec<Interrupt> {
    use a3ctl_sim::faults::TripWhen::{After, Before};
    let wire = |api: &str, method: &str, path: &str, nth: u32, when| Tripwire {
        api: api.into(),
        method: Some(method.into()),
        path: Some(path.into()),
        nth,
        when,
    };
    let apply = |name, wire| Interrupt {
        name,
        phase: Phase::Apply,
        wire,
    };
    let destroy = |name, wire| Interrupt {
        name,
        phase: Phase::Destroy,
        wire,
    };
    vec![
        apply(
            "first network insert",
            wire("compute", "POST", "/global/networks", 1, Before),
        ),
        apply(
            "subnetwork insert answered lost",
            wire("compute", "POST", "/subnetworks", 1, After),
        ),
        apply(
            "router insert answered lost",
            wire("compute", "POST", "/routers", 1, After),
        ),
        apply(
            "cluster create sent, answer lost",
            wire("container", "POST", "/clusters", 1, After),
        ),
        apply(
            "while polling the cluster create",
            wire("container", "GET", "/operations/", 2, Before),
        ),
        apply(
            "bucket insert answer lost",
            wire("storage", "POST", "/b", 1, After),
        ),
        apply(
            "first Kubernetes apply",
            wire("kube", "PATCH", "/", 1, Before),
        ),
        apply(
            "a Kubernetes apply answered lost",
            wire("kube", "PATCH", "/", 3, After),
        ),
        apply(
            "a later Kubernetes apply",
            wire("kube", "PATCH", "/", 12, After),
        ),
        apply("first Kubernetes read", wire("kube", "GET", "/", 5, Before)),
        destroy("first delete", wire("compute", "DELETE", "/", 1, Before)),
        destroy(
            "cluster delete sent, answer lost",
            wire("container", "DELETE", "/clusters/", 1, After),
        ),
        destroy(
            "while polling the cluster delete",
            wire("container", "GET", "/operations/", 1, Before),
        ),
        destroy(
            "a firewall delete answered lost",
            wire("compute", "DELETE", "/firewalls/", 1, After),
        ),
        destroy(
            "a subnetwork delete answered lost",
            wire("compute", "DELETE", "/subnetworks/", 1, After),
        ),
        destroy(
            "a network delete",
            wire("compute", "DELETE", "/global/networks/", 1, Before),
        ),
        destroy(
            "a network delete answered lost",
            wire("compute", "DELETE", "/global/networks/", 2, After),
        ),
        destroy(
            "bucket delete answered lost",
            wire("storage", "DELETE", "/b/", 1, After),
        ),
        destroy(
            "router delete",
            wire("compute", "DELETE", "/routers/", 1, Before),
        ),
        destroy(
            "the last network delete",
            wire("compute", "DELETE", "/global/networks/", 3, After),
        ),
    ]
}

/// How one run ended.
#[derive(Debug, Clone, PartialEq)]
enum Run {
    Converged,
    Failed(String),
    Interrupted,
}

/// Tuning of a trial's runs.
#[derive(Debug, Clone, Copy)]
pub struct Pace {
    /// First delay between polls and retries.
    pub poll: Duration,
    /// A run taking longer than this (real time) is a hang. It catches a run that never ends,
    /// not a slow one: it is far above what a run takes (seconds alone, tens of seconds on a
    /// machine loaded by other test binaries, where 60 s failed runs that were only slow).
    pub run_limit: Duration,
}

impl Pace {
    pub const FAST: Pace = Pace {
        poll: Duration::from_millis(1),
        run_limit: Duration::from_secs(300),
    };
}

struct Bench<'a> {
    sim: &'a SimHandle,
    graph: &'a ResourceGraph,
    project: String,
    state_path: PathBuf,
    seed: u64,
    pace: Pace,
}

impl Bench<'_> {
    async fn run(&self, destroy: bool, interrupt: bool) -> Run {
        let one = self.run_inner(destroy);
        let limited = tokio::time::timeout(self.pace.run_limit, one);
        if interrupt {
            tokio::select! {
                result = limited => result.unwrap_or_else(|_| Run::Failed("the run hung".into())),
                _ = self.sim.wait_tripped() => Run::Interrupted,
            }
        } else {
            limited
                .await
                .unwrap_or_else(|_| Run::Failed("the run hung".into()))
        }
    }

    async fn run_inner(&self, destroy: bool) -> Run {
        let store = LocalStore::new(&self.state_path);
        let state = match store.load() {
            Ok(Some(s)) => s,
            Ok(None) => State::new(self.graph_name(), format!("chaos-{}", self.seed)),
            Err(e) => return Run::Failed(format!("state: {e}")),
        };
        let provider = match GcpProvider::new(GcpConfig {
            project: self.project.clone(),
            endpoints: Endpoints::simulator(self.sim.base_url()),
            credentials: CredentialsMode::Anonymous,
            poll: self.pace.poll,
        })
        .await
        {
            Ok(p) => Arc::new(p),
            Err(e) => return Run::Failed(format!("clients: {}", e.message)),
        };
        let refreshed = match refresh(provider.as_ref(), &state, 16).await {
            Ok(r) => r,
            Err((addr, e)) => return Run::Failed(format!("refresh {addr}: {}", e.message)),
        };
        let the_plan = match plan(self.graph.resources(), &state, &refreshed, destroy) {
            Ok(p) => p,
            Err(e) => return Run::Failed(format!("plan: {e}")),
        };
        let options = Options {
            poll: Backoff {
                initial: self.pace.poll,
                max: self.pace.poll * 15,
                multiplier: 1.5,
            },
            retry: Backoff {
                initial: self.pace.poll,
                max: self.pace.poll * 30,
                multiplier: 2.0,
            },
            seed: self.seed,
            ..Options::default()
        };
        let sink = Arc::new(StateSink::new(state, Box::new(store)));
        let executor = Executor::new(provider, sink, Arc::new(Silent), options, Stop::default());
        let report = executor.apply(&the_plan).await;
        if report.succeeded() {
            Run::Converged
        } else {
            let failures: Vec<String> = report
                .steps
                .iter()
                .filter(|s| !s.outcome.is_success())
                .take(3)
                .map(|s| format!("{} {}: {:?}", s.kind.label(), s.addr, s.outcome))
                .collect();
            Run::Failed(failures.join("; "))
        }
    }

    fn graph_name(&self) -> &str {
        self.state_path
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or("chaos")
    }
}

/// Runs one trial on a fresh simulator built from `sim`.
pub async fn trial(trial: &Trial, sim: SimConfig, pace: Pace) -> Outcome {
    let started = std::time::Instant::now();
    let mut out = Outcome::default();
    let mut blueprint = a3ctl::blueprint::load(
        &Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("blueprints")
            .join(trial.blueprint),
    )
    .expect("shipped blueprint");
    // Every trial ends with a destroy: a deployment meant to be thrown away.
    blueprint.cluster.deletion_protection = Some(false);
    let graph = ResourceGraph::from_blueprint(&blueprint).expect("graph");
    let faults = transient(trial.seed, trial.rate);
    let sim = a3ctl_sim::start(SimConfig {
        seed: trial.seed,
        ..sim
    })
    .await
    .expect("simulator starts");
    // The project's reservations exist before the trial (and its faults) begin.
    let client = reqwest::Client::new();
    for operation in
        a3ctl::commands::session::provide_reservations(sim.base_url(), graph.resources())
            .await
            .expect("the blueprint's reservations are created")
    {
        a3ctl::commands::session::wait_for_operation(&client, sim.base_url(), &operation)
            .await
            .expect("the reservation's insert finishes");
    }
    sim.set_faults(faults.clone());
    let dir = tempfile::tempdir().expect("temp dir");
    let bench = Bench {
        sim: &sim,
        graph: &graph,
        project: blueprint.project.clone(),
        state_path: dir.path().join(format!("{}.a3state.json", blueprint.name)),
        seed: trial.seed,
        pace,
    };
    let armed = |phase: Phase| {
        trial
            .interrupt
            .as_ref()
            .filter(|i| i.phase == phase)
            .map(|i| FaultConfig {
                tripwires: vec![i.wire.clone()],
                ..faults.clone()
            })
    };
    let mut converged = true;
    for (phase, destroy) in [(Phase::Apply, false), (Phase::Destroy, true)] {
        let mut runs = Vec::new();
        if let Some(config) = armed(phase) {
            sim.set_faults(config);
            let first = bench.run(destroy, true).await;
            out.interrupted |= first == Run::Interrupted || !sim.tripped().is_empty();
            // The tripwire is spent; held requests are released with it.
            add_injected(&sim, &mut out.injected).await;
            sim.set_faults(faults.clone());
            runs.push(first);
        }
        // The first run (uninterrupted), or the interrupted run's two re-runs.
        let allowed = if runs.is_empty() { 3 } else { 2 };
        let mut done = matches!(runs.last(), Some(Run::Converged));
        for _ in 0..allowed {
            if done {
                break;
            }
            let run = bench.run(destroy, false).await;
            done = run == Run::Converged;
            runs.push(run);
        }
        out.reruns += runs.len().saturating_sub(1) as u32;
        for run in &runs {
            if let Run::Failed(why) = run {
                out.notes.push(format!("{phase:?}: {why}"));
            }
        }
        if !done {
            converged = false;
        }
        // Look without faults.
        add_injected(&sim, &mut out.injected).await;
        sim.set_faults(FaultConfig::default());
        let live = inventory(&sim, &blueprint.project, &blueprint.region).await;
        let state = LocalStore::new(&bench.state_path)
            .load()
            .ok()
            .flatten()
            .unwrap_or_else(|| State::new(&blueprint.name, String::new()));
        let mut counts: BTreeMap<&String, usize> = BTreeMap::new();
        for item in &live {
            *counts.entry(item).or_default() += 1;
        }
        out.duplicates += counts.values().filter(|&&n| n > 1).count();
        let recorded: Vec<String> = state
            .resources
            .values()
            .map(|r| last_segment(&r.id))
            .collect();
        match phase {
            Phase::Apply => {
                let leaked: Vec<&String> = live
                    .iter()
                    .filter(|item| {
                        let name = item.split_once('/').map(|(_, n)| n).unwrap_or(item);
                        !recorded.iter().any(|r| r == name)
                    })
                    .collect();
                if !leaked.is_empty() {
                    out.notes.push(format!("leaked after apply: {leaked:?}"));
                }
                out.leaks += leaked.len();
                if done && state.resources.len() != graph.resources().len() {
                    out.notes.push(format!(
                        "state records {} of {} resources",
                        state.resources.len(),
                        graph.resources().len()
                    ));
                    converged = false;
                }
                if done && !state.pending.is_empty() {
                    out.notes.push("journal not empty after apply".into());
                    converged = false;
                }
            }
            Phase::Destroy => {
                if !live.is_empty() {
                    out.notes.push(format!("left after destroy: {live:?}"));
                }
                out.orphans += live.len();
                if !state.resources.is_empty() {
                    out.notes.push(format!(
                        "state still records {} resources after destroy",
                        state.resources.len()
                    ));
                    converged = false;
                }
            }
        }
        sim.set_faults(faults.clone());
    }
    out.converged = converged;
    out.real = started.elapsed();
    drop(sim);
    out
}

/// Adds the transient faults injected since the fault configuration was last set (`api.kind`
/// counts of `/_sim/faults`; the counts start over with each configuration).
async fn add_injected(sim: &SimHandle, into: &mut BTreeMap<String, u64>) {
    let faults: Value = reqwest::get(format!("{}/_sim/faults", sim.base_url()))
        .await
        .expect("the simulator's fault counts")
        .json()
        .await
        .expect("the fault counts' JSON");
    for (key, n) in faults["injected"].as_object().cloned().unwrap_or_default() {
        if !key.starts_with("tripwire#") {
            *into.entry(key).or_default() += n.as_u64().unwrap_or(0);
        }
    }
}

fn last_segment(id: &str) -> String {
    id.rsplit('/').next().unwrap_or(id).to_string()
}

/// Everything of every Google API in the project, as `kind/name` (node pools included).
pub async fn inventory(sim: &SimHandle, project: &str, region: &str) -> Vec<String> {
    let http = reqwest::Client::new();
    let mut out = Vec::new();
    for (kind, path, key) in [
        (
            "network",
            format!("/compute/v1/projects/{project}/global/networks"),
            "items",
        ),
        (
            "subnetwork",
            format!("/compute/v1/projects/{project}/regions/{region}/subnetworks"),
            "items",
        ),
        (
            "firewall",
            format!("/compute/v1/projects/{project}/global/firewalls"),
            "items",
        ),
        (
            "router",
            format!("/compute/v1/projects/{project}/regions/{region}/routers"),
            "items",
        ),
        (
            "resource_policy",
            format!("/compute/v1/projects/{project}/regions/{region}/resourcePolicies"),
            "items",
        ),
        (
            "cluster",
            format!("/container/v1/projects/{project}/locations/-/clusters"),
            "clusters",
        ),
        (
            "filestore",
            format!("/file/v1/projects/{project}/locations/-/instances"),
            "instances",
        ),
        (
            "repository",
            format!("/artifactregistry/v1/projects/{project}/locations/{region}/repositories"),
            "repositories",
        ),
        (
            "bucket",
            format!("/storage/v1/b?project={project}"),
            "items",
        ),
    ] {
        let url = format!("{}{path}", sim.base_url());
        let body: Value = match http.get(&url).send().await {
            Ok(r) => r.json().await.unwrap_or(Value::Null),
            Err(_) => Value::Null,
        };
        for item in body[key].as_array().cloned().unwrap_or_default() {
            out.push(format!(
                "{kind}/{}",
                last_segment(item["name"].as_str().unwrap_or(""))
            ));
            if kind == "cluster" {
                for pool in item["nodePools"].as_array().cloned().unwrap_or_default() {
                    out.push(format!(
                        "node_pool/{}",
                        last_segment(pool["name"].as_str().unwrap_or(""))
                    ));
                }
            }
        }
    }
    out.sort();
    out
}
