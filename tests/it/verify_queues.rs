//! `a3ctl verify` checks Kueue's quotas against the nodes behind them (`src/verify/queues.rs`):
//! the `nvidia.com/gpu` quota of a GPU pool's ResourceFlavor, summed over every ClusterQueue of
//! the cluster, must fit the GPUs of the flavor's Ready, schedulable nodes. Broken the ways a team
//! breaks it behind a3ctl's back — a second ClusterQueue made with kubectl, a node cordoned with
//! kubectl, the pool resized down with gcloud — the one check fails saying which, and a3ctl's
//! own apply puts lost nodes back.

use crate::common;

use common::TestContext;
use common::gcloud::Gcloud;
use common::kubectl::Kubectl;
use serde_json::Value;

const HIGH: &str = "blueprints/a3-high.toml";
const CHECK: &str = "kueue/flavor/a3high";

/// The shipped A3 High blueprint (4 nodes, 32 GPUs, Kueue on) applied, and kubectl on it.
async fn applied() -> (TestContext, Kubectl) {
    let cx = TestContext::new().await;
    cx.run(&["apply", HIGH, "--auto-approve", "-q"])
        .await
        .expect(0);
    let kubectl = Kubectl::for_cluster(&cx, "a3high").await;
    (cx, kubectl)
}

/// `verify --json`, ending with `code`: the report.
async fn report(cx: &TestContext, code: i32) -> Value {
    let run = cx.run(&["verify", HIGH, "--json"]).await.expect(code);
    serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("{e}: {}", run.stdout))
}

/// The names of the failed checks, and the flavor check's status and message.
fn outcome(report: &Value) -> (Vec<String>, String, String) {
    let checks = report["checks"].as_array().unwrap();
    let failed = checks
        .iter()
        .filter(|c| c["status"] == "fail")
        .map(|c| c["name"].as_str().unwrap().to_string())
        .collect();
    let flavor = checks
        .iter()
        .find(|c| c["name"] == CHECK)
        .unwrap_or_else(|| panic!("{CHECK} in {report}"));
    (
        failed,
        flavor["status"].as_str().unwrap().to_string(),
        flavor["message"].as_str().unwrap().to_string(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_cluster_queue_on_the_gpu_flavor_is_summed_and_verify_names_both() {
    let (cx, kubectl) = applied().await;
    let (failed, status, message) = outcome(&report(&cx, 0).await);
    assert!(failed.is_empty(), "{failed:?}");
    assert_eq!(status, "pass");
    assert_eq!(
        message,
        "ClusterQueue `a3-queue` (32) holds 32 of the 32 nvidia.com/gpu of 4 Ready, schedulable node(s)"
    );

    // A team adds its own queue on the same flavor, as kubectl users do.
    let ours: Value = serde_json::from_str(
        &kubectl
            .ok(&["get", "clusterqueue", "a3-queue", "-o", "json"])
            .await,
    )
    .unwrap();
    let api_version = ours["apiVersion"].as_str().unwrap();
    let team = format!(
        "apiVersion: {api_version}
kind: ClusterQueue
metadata:
  name: team-b
spec:
  namespaceSelector: {{}}
  resourceGroups:
  - coveredResources: [\"nvidia.com/gpu\"]
    flavors:
    - name: a3high
      resources:
      - name: nvidia.com/gpu
        nominalQuota: 16
"
    );
    let file = cx.write("team-b.yaml", &team);
    kubectl.ok(&["create", "-f", file.to_str().unwrap()]).await;

    let (failed, _, message) = outcome(&report(&cx, 1).await);
    assert_eq!(failed, [CHECK], "only the flavor's check sees it");
    assert_eq!(
        message,
        "ClusterQueues `a3-queue` (32) and `team-b` (16) hold 48 nvidia.com/gpu of ResourceFlavor `a3high`, more than the 32 GPUs of its 4 Ready, schedulable node(s)"
    );
    // The table says the same, with what to do.
    let run = cx.run(&["verify", HIGH]).await.expect(1);
    assert!(
        run.stdout.contains(
            "FAIL  ClusterQueues `a3-queue` (32) and `team-b` (16) hold 48 nvidia.com/gpu"
        ),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains(
            "lower the quotas (`kubectl edit clusterqueue NAME`) until they sum to at most 32"
        ),
        "{}",
        run.stdout
    );

    // The team lowers its quota to what is left: none.
    kubectl
        .ok(&[
            "patch",
            "clusterqueue",
            "team-b",
            "--type=json",
            "-p",
            r#"[{"op": "replace", "path": "/spec/resourceGroups/0/flavors/0/resources/0/nominalQuota", "value": 0}]"#,
        ])
        .await;
    let (failed, _, message) = outcome(&report(&cx, 0).await);
    assert!(failed.is_empty(), "{failed:?}");
    assert_eq!(
        message,
        "ClusterQueues `a3-queue` (32) and `team-b` (0) hold 32 of the 32 nvidia.com/gpu of 4 Ready, schedulable node(s)"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cordoned_node_is_named_apart_and_nodes_lost_behind_a3ctls_back_fail_the_flavor() {
    let (cx, kubectl) = applied().await;
    let nodes = kubectl
        .names(&["nodes", "-l", "cloud.google.com/gke-nodepool=a3high"])
        .await;
    assert_eq!(nodes.len(), 4, "{nodes:?}");

    // One node cordoned: its GPUs do not count, and it is named.
    kubectl.ok(&["cordon", &nodes[0]]).await;
    let (failed, _, message) = outcome(&report(&cx, 1).await);
    assert_eq!(failed, [CHECK]);
    assert_eq!(
        message,
        format!(
            "ClusterQueue `a3-queue` (32) holds 32 nvidia.com/gpu of ResourceFlavor `a3high`, more than the 24 GPUs of its 3 Ready, schedulable node(s); not counted: 1 node cordoned (`{}`)",
            nodes[0]
        )
    );
    kubectl.ok(&["uncordon", &nodes[0]]).await;
    assert!(outcome(&report(&cx, 0).await).0.is_empty());

    // The pool resized down with gcloud: 32 of quota on 16 GPUs.
    Gcloud::in_project(&cx.sim, "my-project")
        .ok(&[
            "container",
            "clusters",
            "resize",
            "a3high",
            "--location=us-central1",
            "--node-pool=a3high",
            "--num-nodes=2",
            "--quiet",
        ])
        .await;
    let (failed, _, message) = outcome(&report(&cx, 1).await);
    assert_eq!(failed, ["nodes/a3high", CHECK]);
    assert_eq!(
        message,
        "ClusterQueue `a3-queue` (32) holds 32 nvidia.com/gpu of ResourceFlavor `a3high`, more than the 16 GPUs of its 2 Ready, schedulable node(s)"
    );

    // a3ctl's apply brings the nodes back, and the quota fits again.
    cx.run(&["apply", HIGH, "--auto-approve", "-q"])
        .await
        .expect(0);
    let (failed, _, message) = outcome(&report(&cx, 0).await);
    assert!(failed.is_empty(), "{failed:?}");
    assert!(
        message.ends_with("of 4 Ready, schedulable node(s)"),
        "{message}"
    );
}
