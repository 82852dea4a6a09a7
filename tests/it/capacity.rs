//! Zone capacity: a stockout cannot be seen before the create that meets it (Google publishes no
//! way to ask a zone for N VMs), so preflight passes; GKE keeps the node pool's create waiting for
//! capacity, then fails it with `GCE_STOCKOUT`. The apply reports it with what to do, records the
//! half-built pool (nothing is forgotten), and the next plan replaces it.

use crate::common;

use a3ctl_sim::SimConfig;
use a3ctl_sim::capacity::CapacityConfig;
use common::{Run, TestContext};
use std::time::Duration;

const HIGH: &str = "blueprints/a3-high.toml";

/// Runs `a3ctl ARGS` while simulated time moves a minute every 20 ms of real time, so GKE's
/// wait for capacity runs out.
async fn run_with_time_moving(cx: &TestContext, args: &[&str]) -> Run {
    let ticker = async {
        loop {
            tokio::time::sleep(Duration::from_millis(20)).await;
            cx.sim.advance_secs(60.0);
        }
    };
    tokio::select! {
        run = cx.run(args) => run,
        _ = ticker => unreachable!("the ticker never ends"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stockout_fails_the_pool_with_what_to_do_and_the_next_plan_replaces_it() {
    // Room for 2 of the blueprint's 4 on-demand A3 High nodes in its zone.
    let cx = TestContext::with(SimConfig {
        capacity: CapacityConfig::default().with_on_demand("us-central1-c", "a3-highgpu-8g", 2),
        ..Default::default()
    })
    .await;
    let plan = cx.run(&["plan", HIGH]).await.expect(0);
    assert!(!plan.stdout.contains("✗"), "{}", plan.stdout);

    let apply = run_with_time_moving(&cx, &["apply", HIGH, "--auto-approve"]).await;
    let apply = apply.expect(1);
    assert!(
        apply.stderr.contains("Failed to create `node_pool.a3high`"),
        "{}",
        apply.stderr
    );
    assert!(
        apply.stderr.contains("[GCE_STOCKOUT]") && apply.stderr.contains("Expected 4, running 2"),
        "{}",
        apply.stderr
    );
    assert!(
        apply
            .stderr
            .contains("hint: us-central1-c has no a3-highgpu-8g capacity for this request now (a stockout, not a quota): use a reservation (`capacity = \"reservation\"` and `reservation` in [[gpu_pool]] `a3high`)"),
        "{}",
        apply.stderr
    );
    // The pool GKE left half-built is in the cloud and in state; the rest of the deployment is up.
    let inventory = cx.sim.inventory();
    let pools = inventory.to_string();
    assert!(pools.contains("RUNNING_WITH_ERROR"), "{pools}");
    let list = cx.run(&["state", "list", HIGH]).await.expect(0);
    for addr in ["cluster.main", "node_pool.a3high", "node_pool.system"] {
        assert!(list.stdout.contains(addr), "{addr}: {}", list.stdout);
    }
    let again = cx.run(&["plan", HIGH]).await.expect(0);
    assert!(
        again
            .stdout
            .contains("  # node_pool.a3high must be replaced\n"),
        "{}",
        again.stdout
    );
}
