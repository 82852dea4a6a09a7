//! The seeded chaos test (issue: converge under every fault). For each shipped blueprint: apply
//! then destroy under 20% transient faults on every API, the Kubernetes API servers included,
//! for 5 fixed seeds; and 10 fixed interruption points each in the apply and in the destroy,
//! among them the GKE cluster's delete. Every trial must converge within two re-runs, with no
//! duplicate, no leaked resource and nothing left after the destroy. Manual clock and zero
//! latency, fixed seeds: the faults a request gets depend on the seed and the request, not on
//! timing (`docs/simulator.md`). `cargo bench --bench chaos` runs the same at realistic latency.

use crate::trials as chaos;

use a3ctl_sim::SimConfig;
use chaos::{BLUEPRINTS, Interrupt, Outcome, Pace, Trial, interrupts, trial};

const SEEDS: [u64; 5] = [1, 2, 3, 4, 5];
const RATE: f64 = 0.2;

fn report(name: &str, outcomes: &[(String, Outcome)]) -> String {
    let mut text = format!("{name}:\n");
    for (label, o) in outcomes {
        text.push_str(&format!(
            "  {label}: converged={} reruns={} duplicates={} leaks={} orphans={} interrupted={} {:.1}s {}\n",
            o.converged,
            o.reruns,
            o.duplicates,
            o.leaks,
            o.orphans,
            o.interrupted,
            o.real.as_secs_f64(),
            o.notes.join(" | ")
        ));
    }
    text
}

/// a3ctl runs on 16 MiB worker stacks (a cluster read deep in an apply step needs more than 2 MiB
/// in debug builds); so do the trials.
fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_stack_size(16 * 1024 * 1024)
        .enable_all()
        .build()
        .expect("runtime")
}

async fn run_all(blueprint: &'static str, trials: Vec<(String, Trial)>) {
    let mut set = tokio::task::JoinSet::new();
    for (label, t) in trials {
        set.spawn(async move {
            let o = trial(&t, SimConfig::default(), Pace::FAST).await;
            (label, o)
        });
    }
    let mut outcomes = Vec::new();
    while let Some(joined) = set.join_next().await {
        outcomes.push(joined.expect("trial task"));
    }
    outcomes.sort_by(|a, b| a.0.cmp(&b.0));
    let text = report(blueprint, &outcomes);
    eprintln!("{text}");
    for (label, o) in &outcomes {
        assert!(
            o.converged && o.duplicates == 0 && o.leaks == 0 && o.orphans == 0,
            "{label} did not converge cleanly\n{text}"
        );
    }
}

fn faults_only(blueprint: &'static str) -> Vec<(String, Trial)> {
    SEEDS
        .iter()
        .map(|&seed| {
            (
                format!("seed {seed}"),
                Trial {
                    blueprint,
                    seed,
                    rate: RATE,
                    interrupt: None,
                },
            )
        })
        .collect()
}

fn interrupted(blueprint: &'static str) -> Vec<(String, Trial)> {
    interrupts()
        .into_iter()
        .enumerate()
        .map(|(i, interrupt): (usize, Interrupt)| {
            (
                format!("{:?} {i:02} {}", interrupt.phase, interrupt.name),
                Trial {
                    blueprint,
                    seed: 100 + i as u64,
                    rate: RATE,
                    interrupt: Some(interrupt),
                },
            )
        })
        .collect()
}

#[test]
fn chaos_minimal() {
    let mut trials = faults_only(BLUEPRINTS[0]);
    trials.extend(interrupted(BLUEPRINTS[0]));
    runtime().block_on(run_all(BLUEPRINTS[0], trials));
}

#[test]
fn chaos_a3_high() {
    let mut trials = faults_only(BLUEPRINTS[1]);
    trials.extend(interrupted(BLUEPRINTS[1]));
    runtime().block_on(run_all(BLUEPRINTS[1], trials));
}

#[test]
fn chaos_a3_mega() {
    let mut trials = faults_only(BLUEPRINTS[2]);
    trials.extend(interrupted(BLUEPRINTS[2]));
    runtime().block_on(run_all(BLUEPRINTS[2], trials));
}
