//! `cargo bench --bench chaos`: the suite's chaos trials (`tests/it/trials/mod.rs`) at realistic
//! latency, wide: for each shipped blueprint, every seed alone (transient faults on every API,
//! the Kubernetes API servers included) and every seed × every interruption point (the apply or
//! destroy dropped at an exact request, some of them with the answer lost). Prints, per
//! blueprint, how many trials converged within two re-runs, duplicates, leaked resources,
//! orphans after destroy and the slowest convergence, then every trial that did not converge.
//! Numbers, not assertions: the suite's `tests/it/chaos.rs` is the gate.
//!
//! Environment: `CHAOS_SEEDS` (default 20), `CHAOS_RATE` (fault probability per request, default
//! 0.2), `CHAOS_BLUEPRINTS` (comma-separated file names, default all three), `CHAOS_PARALLEL`
//! (trials at once, default 6), `CHAOS_SCALE` (real seconds per simulated second, default
//! 0.0005: a 10-minute cluster create takes 0.3 s).

#[path = "../tests/it/trials/mod.rs"]
mod chaos;

use a3ctl_sim::SimConfig;
use chaos::{BLUEPRINTS, Outcome, Pace, Trial, interrupts, trial};
use std::sync::Arc;
use std::time::{Duration, Instant};

fn env<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Every trial of one blueprint: each seed without interruption, and each seed at each
/// interruption point.
fn trials(blueprint: &'static str, seeds: u64, rate: f64) -> Vec<(String, Trial)> {
    let points = interrupts();
    let mut out = Vec::new();
    for seed in 1..=seeds {
        out.push((
            format!("seed {seed:>2} faults only"),
            Trial {
                blueprint,
                seed,
                rate,
                interrupt: None,
            },
        ));
        for (i, point) in points.iter().enumerate() {
            out.push((
                format!("seed {seed:>2} {:?} {i:02} {}", point.phase, point.name),
                Trial {
                    blueprint,
                    seed,
                    rate,
                    interrupt: Some(point.clone()),
                },
            ));
        }
    }
    out
}

async fn bench(blueprint: &'static str, seeds: u64, rate: f64, parallel: usize, scale: f64) {
    let all = trials(blueprint, seeds, rate);
    let total = all.len();
    let started = Instant::now();
    let pace = Pace {
        poll: Duration::from_millis(2),
        run_limit: Duration::from_secs(300),
    };
    let permits = Arc::new(tokio::sync::Semaphore::new(parallel));
    let mut set = tokio::task::JoinSet::new();
    for (label, t) in all {
        let permits = permits.clone();
        set.spawn(async move {
            let _permit = permits.acquire_owned().await.expect("semaphore");
            let o = trial(&t, SimConfig::realistic(scale), pace).await;
            (label, o)
        });
    }
    let mut outcomes: Vec<(String, Outcome)> = Vec::with_capacity(total);
    while let Some(joined) = set.join_next().await {
        outcomes.push(joined.expect("trial task"));
    }
    outcomes.sort_by(|a, b| a.0.cmp(&b.0));

    let converged = outcomes.iter().filter(|(_, o)| o.converged).count();
    let reached = outcomes.iter().filter(|(_, o)| o.interrupted).count();
    let interruptible = outcomes
        .iter()
        .filter(|(l, _)| !l.ends_with("faults only"))
        .count();
    let sum = |f: fn(&Outcome) -> usize| outcomes.iter().map(|(_, o)| f(o)).sum::<usize>();
    let reruns: u32 = outcomes.iter().map(|(_, o)| o.reruns).sum();
    let slowest = outcomes
        .iter()
        .filter(|(_, o)| o.converged)
        .max_by_key(|(_, o)| o.real);
    let mut times: Vec<Duration> = outcomes.iter().map(|(_, o)| o.real).collect();
    times.sort();
    let median = times.get(times.len() / 2).copied().unwrap_or_default();

    println!(
        "{blueprint}: {total} trials ({seeds} seeds x (1 + {} interruption points)), fault rate {rate}, time scale {scale}",
        interruptible / seeds.max(1) as usize
    );
    println!("  converged          {converged} / {total}");
    println!("  duplicates         {}", sum(|o| o.duplicates));
    println!("  leaked resources   {}", sum(|o| o.leaks));
    println!("  orphans (destroy)  {}", sum(|o| o.orphans));
    println!("  interruptions hit  {reached} / {interruptible}");
    println!("  re-runs            {reruns}");
    println!("  median trial       {:.2} s", median.as_secs_f64());
    if let Some((label, o)) = slowest {
        println!(
            "  slowest converged  {:.2} s ({label}, {} re-runs)",
            o.real.as_secs_f64(),
            o.reruns
        );
    }
    println!(
        "  wall time          {:.1} s",
        started.elapsed().as_secs_f64()
    );
    for (label, o) in outcomes
        .iter()
        .filter(|(_, o)| !o.converged || o.duplicates > 0 || o.leaks > 0 || o.orphans > 0)
    {
        println!(
            "  NOT CLEAN {label}: converged={} duplicates={} leaks={} orphans={} {}",
            o.converged,
            o.duplicates,
            o.leaks,
            o.orphans,
            o.notes.join(" | ")
        );
    }
}

fn main() {
    // `cargo bench` passes `--bench`; this target takes no arguments of its own.
    let seeds: u64 = env("CHAOS_SEEDS", 20);
    let rate: f64 = env("CHAOS_RATE", 0.2);
    let parallel: usize = env("CHAOS_PARALLEL", 6).max(1);
    let scale: f64 = env("CHAOS_SCALE", 0.0005);
    let wanted: Vec<&'static str> = match std::env::var("CHAOS_BLUEPRINTS") {
        Ok(list) => BLUEPRINTS
            .iter()
            .copied()
            .filter(|b| list.split(',').any(|w| w.trim() == *b))
            .collect(),
        Err(_) => BLUEPRINTS.to_vec(),
    };
    // a3ctl runs on 16 MiB worker stacks (a cluster read deep in an apply step needs more than
    // 2 MiB in debug builds); so do the trials.
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .thread_stack_size(16 * 1024 * 1024)
        .enable_all()
        .build()
        .expect("runtime");
    for blueprint in wanted {
        runtime.block_on(bench(blueprint, seeds, rate, parallel, scale));
    }
}
