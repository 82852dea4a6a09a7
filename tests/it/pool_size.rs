//! A node pool's live size is its Compute instance groups' `targetSize`, never GKE's
//! `initialNodeCount` (which `setSize` does not change) and never a count of the cluster's Nodes:
//! a cluster whose Kubernetes API does not answer (private endpoint, authorized networks, a loaded
//! API server) still plans a resized pool right, both ways.

use crate::common;

use a3ctl_sim::faults::{FaultConfig, TripWhen, Tripwire};
use common::TestContext;

const MINI: &str = "blueprints/minimal.toml";

/// Holds every request for the cluster's Nodes without answering, as an API server a client
/// cannot reach: more tripwires than a plan of the blueprint's two pools could meet.
fn kube_nodes_never_answer(cx: &TestContext) {
    cx.sim.set_faults(FaultConfig {
        tripwires: (1..=4)
            .map(|nth| Tripwire {
                api: "kube".into(),
                method: Some("GET".into()),
                path: Some("/api/v1/nodes".into()),
                nth,
                when: TripWhen::Before,
            })
            .collect(),
        ..Default::default()
    });
}

/// The minimal blueprint applied with its system pool at 2 nodes (the size its create asks for,
/// GKE's `initialNodeCount` for good), then resized by a3ctl to 4.
async fn system_pool_created_at_2_and_resized_to_4(cx: &TestContext) -> String {
    let text = std::fs::read_to_string(cx.path(MINI)).unwrap();
    cx.run(&["apply", "--auto-approve", MINI]).await.expect(0);
    cx.write(MINI, &format!("{text}\n[system_pool]\nnodes = 4\n"));
    let apply = cx.run(&["apply", "--auto-approve", MINI]).await.expect(0);
    assert!(
        apply.stdout.contains("node_count = 2 -> 4"),
        "{}",
        apply.stdout
    );
    assert_eq!(system_nodes(cx), 4);
    text
}

/// The system pool's nodes in the simulator's inventory.
fn system_nodes(cx: &TestContext) -> u64 {
    let inventory = cx.sim.inventory();
    inventory["container"]["clusters"][0]["nodePools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "system")
        .and_then(|p| p["nodes"].as_u64())
        .unwrap_or_else(|| panic!("{inventory}"))
}

/// The Compute instance group reads since the request log was cleared.
async fn group_reads(cx: &TestContext) -> usize {
    common::request_log(cx)
        .await
        .iter()
        .filter(|r| {
            r["method"] == "GET"
                && r["path"]
                    .as_str()
                    .is_some_and(|p| p.contains("/instanceGroupManagers/gke-a3mini-system-"))
        })
        .count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_scaled_up_pool_shows_no_drift_while_its_kubernetes_api_does_not_answer() {
    let cx = TestContext::new().await;
    system_pool_created_at_2_and_resized_to_4(&cx).await;
    kube_nodes_never_answer(&cx);
    let before = group_reads(&cx).await;
    let plan = cx
        .run(&["plan", "--detailed-exitcode", MINI])
        .await
        .expect(0);
    assert!(
        !plan.stdout.contains("node_count") && !plan.stdout.contains("has changed"),
        "{}",
        plan.stdout
    );
    // The size came from the pool's instance group, not from the cluster's Nodes.
    assert!(group_reads(&cx).await > before);
    assert_eq!(cx.sim.tripped(), Vec::<usize>::new());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_scale_down_to_the_created_size_is_planned_while_its_kubernetes_api_does_not_answer() {
    let cx = TestContext::new().await;
    let text = system_pool_created_at_2_and_resized_to_4(&cx).await;
    // Back to the default 2: the size the create asked for, which `initialNodeCount` still says.
    cx.write(MINI, &text);
    kube_nodes_never_answer(&cx);
    let plan = cx
        .run(&["plan", "--detailed-exitcode", MINI])
        .await
        .expect(2);
    assert!(
        plan.stdout
            .contains("  # node_pool.system will be updated in-place\n")
            && plan.stdout.contains("      ~ node_count = 4 -> 2\n"),
        "{}",
        plan.stdout
    );
    cx.sim.set_faults(FaultConfig::default());
    cx.run(&["apply", "--auto-approve", MINI]).await.expect(0);
    assert_eq!(system_nodes(&cx), 2);
    cx.run(&["plan", "--detailed-exitcode", MINI])
        .await
        .expect(0);
}
