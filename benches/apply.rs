//! `cargo bench --bench apply`: applies each shipped blueprint against the simulator with its
//! realistic latency profile (on a fast clock) and prints, in simulated time, the apply makespan
//! against two lower bounds of the graph — its critical path, and the critical path once GKE's
//! one-operation-per-cluster rule serialises a cluster's node pools — plus the API requests made per
//! resource. Numbers, not assertions: this is a benchmark, not a test.

use a3ctl::apply::estimate;
use a3ctl::apply::executor::{Executor, Stop};
use a3ctl::apply::schedule;
use a3ctl::apply::sink::{Discard, StateSink};
use a3ctl::apply::{Backoff, Options, Silent};
use a3ctl::cloud::gcp::{CredentialsMode, Endpoints, GcpConfig, GcpProvider};
use a3ctl::graph::ResourceGraph;
use a3ctl::plan::planner::{Refreshed, plan};
use a3ctl::state::State;
use a3ctl_sim::SimConfig;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

/// Real seconds per simulated second.
const SCALE: f64 = 0.001;

async fn bench(name: &str) {
    let blueprint = a3ctl::blueprint::load(
        &Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("blueprints")
            .join(name),
    )
    .expect("shipped blueprint");
    let graph = ResourceGraph::from_blueprint(&blueprint).expect("graph");
    let sim = a3ctl_sim::start(SimConfig {
        port: 0,
        ..SimConfig::realistic(SCALE)
    })
    .await
    .expect("simulator");
    // The project holds the reservations the blueprint names, as the sandbox's does.
    let client = reqwest::Client::new();
    for operation in
        a3ctl::commands::session::provide_reservations(sim.base_url(), graph.resources())
            .await
            .expect("reservations")
    {
        a3ctl::commands::session::wait_for_operation(&client, sim.base_url(), &operation)
            .await
            .expect("reservation ready");
    }
    let provider = GcpProvider::new(GcpConfig {
        project: blueprint.project.clone(),
        endpoints: Endpoints::simulator(sim.base_url()),
        credentials: CredentialsMode::Anonymous,
        poll: Duration::from_millis(2),
    })
    .await
    .expect("clients");
    let state = State::new(&blueprint.name, "bench".into());
    let the_plan = plan(graph.resources(), &state, &Refreshed::new(), false).expect("plan");

    // Lower bounds from the graph with the typical durations' means (the simulator's profile has
    // the same figures).
    let steps = schedule::steps(&the_plan, &state);
    let bounds = estimate::estimate(&the_plan, &steps);
    let (critical, laned) = (bounds.critical_path, bounds.seconds());

    let options = Options {
        poll: Backoff {
            initial: Duration::from_millis(2),
            max: Duration::from_millis(10),
            multiplier: 1.5,
        },
        retry: Backoff {
            initial: Duration::from_millis(2),
            max: Duration::from_millis(20),
            multiplier: 2.0,
        },
        seed: 1,
        ..Options::default()
    };
    let sink = Arc::new(StateSink::new(state, Box::new(Discard)));
    let executor = Executor::new(
        Arc::new(provider),
        sink,
        Arc::new(Silent),
        options,
        Stop::default(),
    );
    let started = sim.now();
    let real = std::time::Instant::now();
    let report = executor.apply(&the_plan).await;
    let makespan = sim.now().since(started) as f64 / 1000.0;
    assert!(
        report.succeeded(),
        "the benchmark apply failed: {:?}",
        report.failures().next()
    );
    let resources = the_plan.changes.len();
    let requests = sim.request_total();
    let mut per_api: std::collections::BTreeMap<String, u64> = Default::default();
    for (endpoint, n) in sim.request_counts() {
        let api = match endpoint.split('/').nth(1).unwrap_or("?") {
            "api" | "apis" => "kube".to_string(),
            other => other.to_string(),
        };
        *per_api.entry(api).or_default() += n;
    }
    println!(
        "{name:<14} {resources:>9} {:>12} {:>14} {:>16} {:>9.2} {:>13.2} {requests:>8} {:>12.1}   {}",
        fmt(makespan),
        fmt(critical),
        fmt(laned),
        makespan / laned,
        real.elapsed().as_secs_f64(),
        requests as f64 / resources as f64,
        per_api
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(" "),
    );
}

fn fmt(secs: f64) -> String {
    format!("{}m{:02}s", (secs / 60.0) as u64, (secs % 60.0) as u64)
}

fn main() {
    let _ = rustls::crypto::aws_lc_rs::default_provider().install_default();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    println!(
        "Apply makespan under the realistic latency profile (simulated time; clock scale {SCALE}):"
    );
    println!(
        "{:<14} {:>9} {:>12} {:>14} {:>16} {:>9} {:>13} {:>8} {:>12}   requests by API",
        "blueprint",
        "resources",
        "makespan",
        "critical path",
        "+ GKE one-op",
        "ratio",
        "real seconds",
        "requests",
        "req/resource"
    );
    for name in ["a3-high.toml", "a3-mega.toml", "minimal.toml"] {
        runtime.block_on(bench(name));
    }
    println!("\n`critical path`: longest dependency chain with the profile's mean durations;");
    println!(
        "`+ GKE one-op`: the same once GKE's one-operation-per-cluster rule serialises the cluster and its pools;"
    );
    println!(
        "`ratio`: makespan / the larger bound (1.0 = no time lost to scheduling; random draws can put it below 1)."
    );
}
