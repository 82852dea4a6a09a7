//! `cargo bench --bench preflight`: how fast a3ctl says no, and how fast it says "no changes",
//! against the simulator on a real-time clock (one simulated second per second) with its realistic
//! latency profile, where every request to a Google API takes a 50–250 ms round trip and every
//! request to a cluster's API server 5–30 ms.
//!
//! 1. `a3ctl apply --auto-approve` of the shipped A3 Mega blueprint naming a reservation the
//!    project does not have: wall time from start to its refusal (exit 1, before any change). The
//!    existing tools find this out when the node pool's create fails, 10–20 minutes in.
//! 2. `a3ctl plan` of the applied A3 Mega blueprint (applied on a fast clock first, then the world
//!    reopened on the real-time clock): wall time of the no-op plan against the slowest single
//!    read it made and the sum of all of them (each GET of the plan's request log issued again,
//!    one at a time).
//!
//! Numbers, not assertions. `PREFLIGHT_RUNS` (default 3) repeats each measurement.

use a3ctl_sim::SimConfig;
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_a3ctl");

async fn a3ctl(dir: &Path, sim: &a3ctl_sim::SimHandle, args: &[&str]) -> (Option<i32>, String) {
    let out = tokio::process::Command::new(BIN)
        .args(args)
        .current_dir(dir)
        .env_remove("A3CTL_SANDBOX")
        .env("A3CTL_NO_PROGRESS", "1")
        .env("NO_COLOR", "1")
        .env("A3CTL_POLL_INTERVAL_MS", "20")
        .envs(sim.a3ctl_env())
        .stdin(Stdio::null())
        .output()
        .await
        .expect("a3ctl runs");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A working directory with the shipped blueprints, and `mega-missing.toml` naming a reservation
/// nobody made.
fn workdir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    let shipped = Path::new(env!("CARGO_MANIFEST_DIR")).join("blueprints");
    std::fs::create_dir_all(dir.path().join("blueprints")).expect("dir");
    let name = "a3-mega.toml";
    std::fs::copy(shipped.join(name), dir.path().join("blueprints").join(name)).expect("copy");
    let text = std::fs::read_to_string(shipped.join("a3-mega.toml"))
        .expect("blueprint")
        .replace(
            "reservation = \"a3mega-reservation\"",
            "reservation = \"nobody-made-this\"",
        );
    std::fs::write(dir.path().join("blueprints/mega-missing.toml"), text).expect("write");
    dir
}

async fn provide(sim: &a3ctl_sim::SimHandle) {
    let blueprint = a3ctl::blueprint::load(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("blueprints/a3-mega.toml"),
    )
    .expect("blueprint");
    let client = reqwest::Client::new();
    for operation in a3ctl::commands::session::provide_reservations(
        sim.base_url(),
        &a3ctl::graph::build::resources(&blueprint),
    )
    .await
    .expect("reservations")
    {
        a3ctl::commands::session::wait_for_operation(&client, sim.base_url(), &operation)
            .await
            .expect("reservation ready");
    }
}

fn secs(d: Duration) -> String {
    format!("{:.2} s", d.as_secs_f64())
}

#[tokio::main]
async fn main() {
    let _ = rustls::crypto::aws_lc_rs::default_provider().install_default();
    let runs: usize = std::env::var("PREFLIGHT_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3);
    let dir = workdir();
    let world = dir.path().join("world.json");

    // 1. Time to refusal, real-time clock.
    let sim = a3ctl_sim::start(SimConfig {
        port: 0,
        persist: Some(world.clone()),
        ..SimConfig::realistic(1.0)
    })
    .await
    .expect("simulator");
    for run in 1..=runs {
        let started = Instant::now();
        let (code, stderr) = a3ctl(
            dir.path(),
            &sim,
            &["apply", "blueprints/mega-missing.toml", "--auto-approve"],
        )
        .await;
        let took = started.elapsed();
        let refused = code == Some(1) && stderr.contains("Preflight failed");
        println!(
            "refusal     run {run}: {} from start to exit {code:?}{}",
            secs(took),
            if refused {
                " (preflight refused, nothing changed)"
            } else {
                " (NOT a preflight refusal)"
            }
        );
    }
    sim.shutdown();

    // 2. Apply on a fast clock, then a no-op plan on the real-time clock.
    let fast = a3ctl_sim::start(SimConfig {
        port: 0,
        persist: Some(world.clone()),
        ..SimConfig::realistic(0.0005)
    })
    .await
    .expect("simulator");
    provide(&fast).await;
    let (code, stderr) = a3ctl(
        dir.path(),
        &fast,
        &["apply", "blueprints/a3-mega.toml", "--auto-approve"],
    )
    .await;
    assert_eq!(code, Some(0), "the apply on the fast clock: {stderr}");
    fast.shutdown();
    let sim = a3ctl_sim::start(SimConfig {
        port: 0,
        persist: Some(world.clone()),
        ..SimConfig::realistic(1.0)
    })
    .await
    .expect("simulator");
    let http = reqwest::Client::new();
    for run in 1..=runs {
        let cleared = http
            .delete(format!("{}/_sim/requests", sim.base_url()))
            .send()
            .await
            .expect("clear the log");
        assert!(cleared.status().is_success());
        let started = Instant::now();
        let (code, stderr) = a3ctl(dir.path(), &sim, &["plan", "blueprints/a3-mega.toml"]).await;
        let took = started.elapsed();
        assert_eq!(code, Some(0), "the no-op plan: {stderr}");
        // Every GET the plan made, again, one at a time.
        let log: serde_json::Value = http
            .get(format!("{}/_sim/requests", sim.base_url()))
            .send()
            .await
            .expect("log")
            .json()
            .await
            .expect("log JSON");
        let gets: Vec<String> = log["entries"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|e| e["method"] == "GET" && e["api"] != "kube")
            .filter_map(|e| e["path"].as_str().map(str::to_string))
            .collect();
        let mut slowest = Duration::ZERO;
        let mut total = Duration::ZERO;
        for path in &gets {
            let started = Instant::now();
            let _ = http
                .get(format!("{}{path}", sim.base_url()))
                .send()
                .await
                .expect("read");
            let one = started.elapsed();
            slowest = slowest.max(one);
            total += one;
        }
        println!(
            "no-op plan  run {run}: {} wall; its {} Google API reads: slowest {}, one after another {}",
            secs(took),
            gets.len(),
            secs(slowest),
            secs(total)
        );
    }
    sim.shutdown();
}
