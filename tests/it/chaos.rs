//! The seeded chaos test (issue: converge under every fault). Apply then destroy a shipped
//! blueprint under 20% transient faults on every API, the Kubernetes API servers included: once
//! per blueprint with faults only, and once at each of the fixed interruption points, among them
//! the GKE cluster's delete, each point on one blueprint (`POINTS`), every trial under the same
//! transient faults. Every trial must converge within two re-runs, with no duplicate, no leaked
//! resource and nothing left after the destroy; every interruption must land; every kind of
//! transient fault must be injected on Compute and Kubernetes, and faults on every API the
//! blueprint uses. Manual clock and zero latency, fixed seeds: the faults a request gets depend
//! on the seed and the request, not on timing (`docs/simulator.md`).
//!
//! `cargo bench --bench chaos` runs the full matrix at realistic latency: every blueprint × 20
//! seeds × (faults only + every interruption point), with the numbers. The suite keeps one trial
//! per failure class: each interruption point (which request, before or after it is handled, in
//! the apply or the destroy) and each transient fault kind, on each API.

use crate::trials as chaos;

use a3ctl_sim::SimConfig;
use a3ctl_sim::faults::TransientKind;
use chaos::{APIS, BLUEPRINTS, Interrupt, Outcome, Pace, Trial, interrupts, trial};
use std::collections::BTreeMap;

/// The seed of each blueprint's faults-only trial.
const SEED: u64 = 1;
const RATE: f64 = 0.2;

/// Which blueprint each interruption point runs on: the cheapest one that makes the request
/// (the bucket points need A3 Mega's bucket, the second and third network deletes its GPU
/// networks), spread so that each blueprint is interrupted in its apply and in its destroy.
const POINTS: [(&str, &str); 20] = [
    ("first network insert", "minimal.toml"),
    ("subnetwork insert answered lost", "a3-high.toml"),
    ("router insert answered lost", "minimal.toml"),
    ("cluster create sent, answer lost", "a3-high.toml"),
    ("while polling the cluster create", "minimal.toml"),
    ("bucket insert answer lost", "a3-mega.toml"),
    ("first Kubernetes apply", "a3-high.toml"),
    ("a Kubernetes apply answered lost", "minimal.toml"),
    ("a later Kubernetes apply", "a3-mega.toml"),
    ("first Kubernetes read", "a3-high.toml"),
    ("first delete", "minimal.toml"),
    ("cluster delete sent, answer lost", "a3-high.toml"),
    ("while polling the cluster delete", "a3-mega.toml"),
    ("a firewall delete answered lost", "minimal.toml"),
    ("a subnetwork delete answered lost", "a3-high.toml"),
    ("a network delete", "minimal.toml"),
    ("a network delete answered lost", "a3-high.toml"),
    ("bucket delete answered lost", "a3-mega.toml"),
    ("router delete", "a3-high.toml"),
    ("the last network delete", "a3-mega.toml"),
];

fn report(name: &str, outcomes: &[(String, Outcome)]) -> String {
    let mut text = format!("{name}:\n");
    for (label, o) in outcomes {
        text.push_str(&format!(
            "  {label}: converged={} reruns={} duplicates={} leaks={} orphans={} interrupted={} faults={} {:.1}s {}\n",
            o.converged,
            o.reruns,
            o.duplicates,
            o.leaks,
            o.orphans,
            o.interrupted,
            o.injected.values().sum::<u64>(),
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

/// Runs `trials` side by side; returns their outcomes by label and the faults injected over all
/// of them.
async fn run_all(blueprint: &'static str, trials: Vec<(String, Trial)>) -> BTreeMap<String, u64> {
    let mut set = tokio::task::JoinSet::new();
    for (label, t) in trials {
        set.spawn(async move {
            let o = trial(&t, SimConfig::default(), Pace::FAST).await;
            (label, t.interrupt.is_some(), o)
        });
    }
    let mut outcomes = Vec::new();
    let mut armed = Vec::new();
    while let Some(joined) = set.join_next().await {
        let (label, interrupted, o) = joined.expect("trial task");
        if interrupted {
            armed.push(label.clone());
        }
        outcomes.push((label, o));
    }
    outcomes.sort_by(|a, b| a.0.cmp(&b.0));
    let text = report(blueprint, &outcomes);
    eprintln!("{text}");
    let mut injected = BTreeMap::new();
    for (label, o) in &outcomes {
        assert!(
            o.converged && o.duplicates == 0 && o.leaks == 0 && o.orphans == 0,
            "{label} did not converge cleanly\n{text}"
        );
        // A point the run never reaches would prove nothing.
        assert!(
            o.interrupted || !armed.contains(label),
            "{label} was never interrupted\n{text}"
        );
        for (key, n) in &o.injected {
            *injected.entry(key.clone()).or_default() += n;
        }
    }
    injected
}

fn faults_only(blueprint: &'static str) -> (String, Trial) {
    (
        format!("seed {SEED}"),
        Trial {
            blueprint,
            seed: SEED,
            rate: RATE,
            interrupt: None,
        },
    )
}

/// The interruption points `POINTS` gives `blueprint`, each with the seed the full matrix of
/// earlier versions gave it (100 + its index).
fn interrupted(blueprint: &'static str) -> Vec<(String, Trial)> {
    interrupts()
        .into_iter()
        .enumerate()
        .filter(|(_, interrupt)| on(interrupt) == blueprint)
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

fn on(interrupt: &Interrupt) -> &'static str {
    POINTS
        .iter()
        .find(|(name, _)| *name == interrupt.name)
        .map(|(_, blueprint)| *blueprint)
        .unwrap_or_else(|| panic!("`{}` has no blueprint in POINTS", interrupt.name))
}

/// Runs `blueprint`'s trials; asserts that every kind of transient fault any request can get hit
/// Compute and Kubernetes (each kind dozens of times over the trials), and that every API of
/// the blueprint got faults. (GKE gets a few dozen faults, not each kind every time; the webhook
/// failures hit only writes that a webhook guards, Kueue's few objects: a trial meets them now
/// and then, `adapters_kube` and the simulator's `kube_faults` always.)
fn chaos(blueprint: &'static str, apis: &[&str]) {
    let mut trials = vec![faults_only(blueprint)];
    trials.extend(interrupted(blueprint));
    let injected = runtime().block_on(run_all(blueprint, trials));
    let count = |key: &str| injected.get(key).copied().unwrap_or(0);
    for api in ["compute", "kube"] {
        for kind in TransientKind::ALL.into_iter().filter(|k| !k.is_webhook()) {
            let key = format!("{api}.{}", kind.name());
            assert!(
                count(&key) > 0,
                "no {key} fault in {blueprint}'s trials: {injected:?}"
            );
        }
    }
    for api in apis {
        let faults: u64 = TransientKind::ALL
            .into_iter()
            .map(|kind| count(&format!("{api}.{}", kind.name())))
            .sum();
        assert!(
            faults > 0,
            "no {api} fault in {blueprint}'s trials: {injected:?}"
        );
    }
}

#[test]
fn every_interruption_point_runs_on_a_shipped_blueprint() {
    let points = interrupts();
    assert_eq!(points.len(), POINTS.len());
    for point in &points {
        assert!(BLUEPRINTS.contains(&on(point)), "{}", point.name);
    }
    for (name, _) in POINTS {
        assert!(
            points.iter().any(|p| p.name == name),
            "POINTS names `{name}`, no interruption point"
        );
    }
    // Every API's faults are on in every trial.
    let faults = chaos::transient(SEED, RATE);
    for api in APIS {
        assert_eq!(faults.transient[api].rate, RATE, "{api}");
        assert!(faults.transient[api].kinds.is_empty(), "{api}: every kind");
    }
}

#[test]
fn chaos_minimal() {
    chaos(BLUEPRINTS[0], &["compute", "container", "kube"]);
}

#[test]
fn chaos_a3_high() {
    chaos(BLUEPRINTS[1], &["compute", "container", "kube"]);
}

#[test]
fn chaos_a3_mega() {
    chaos(BLUEPRINTS[2], &APIS);
}
