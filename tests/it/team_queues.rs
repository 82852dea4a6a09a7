//! The Kueue queues a blueprint declares (`[[queue]]`): validate's refusals, the plan, an apply in
//! the simulator with two teams in a cohort where a team's Job borrows the other's idle GPUs
//! (kubectl as the independent client), verify, and the quotas following a pool resize.

use crate::common;

use common::TestContext;
use common::kubectl::Kubectl;
use serde_json::Value;

/// Two teams sharing the A3 High pool's 32 GPUs in cohort `research`.
const TEAMS: &str = r#"
[[queue]]
name = "team-a"
cohort = "research"
gpus = A_GPUS

[[queue]]
name = "team-b"
cohort = "research"
gpus = B_GPUS
lending_limit = B_LEND
cpu = "64"
"#;

/// The shipped A3 High blueprint (one pool `a3high`) with `nodes` GPU nodes and the two teams.
fn blueprint(cx: &TestContext, file: &str, nodes: u32, a: u32, b: u32, lend: u32) -> String {
    let text = std::fs::read_to_string(cx.path("blueprints/a3-high.toml")).unwrap();
    let resized = text.replace(
        "machine_type = \"a3-highgpu-8g\"\nnodes = 4\n",
        &format!("machine_type = \"a3-highgpu-8g\"\nnodes = {nodes}\n"),
    );
    assert!(
        resized != text || nodes == 4,
        "the shipped pool has 4 nodes"
    );
    // The queue verify's NCCL test submits to is now a team's.
    let resized = resized.replace("queue = \"a3-queue\"", "queue = \"team-a\"");
    let teams = TEAMS
        .replace("A_GPUS", &a.to_string())
        .replace("B_GPUS", &b.to_string())
        .replace("B_LEND", &lend.to_string());
    let path = format!("blueprints/{file}");
    cx.write(&path, &format!("{resized}{teams}"));
    path
}

/// `(name, cohort, GPU quota)` of every ClusterQueue, as the cluster holds them.
async fn queues(kubectl: &Kubectl) -> Vec<(String, Value, Value)> {
    kubectl
        .items(&["clusterqueues.kueue.x-k8s.io"])
        .await
        .iter()
        .map(|q| {
            (
                q["metadata"]["name"].as_str().unwrap().to_string(),
                q["spec"]["cohortName"].clone(),
                q["spec"]["resourceGroups"][0]["flavors"][0]["resources"][0]["nominalQuota"]
                    .clone(),
            )
        })
        .collect()
}

/// The plan's blocks for the queue objects and namespaces, as printed.
fn queue_blocks(stdout: &str) -> String {
    let mut out = Vec::new();
    let mut keep = false;
    for line in stdout.lines() {
        if line.trim_start().starts_with("# ") {
            keep = ["k8s.clusterqueue/", "k8s.localqueue/", "k8s.namespace/"]
                .iter()
                .any(|k| line.contains(k));
        } else if !line.starts_with(' ') {
            keep = false;
        }
        if keep {
            out.push(line);
        }
    }
    out.join("\n")
}

// See: issue 26 item 11 (the queues teams declare).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_teams_in_a_cohort_get_their_queues_and_one_borrows_the_others_idle_gpus() {
    let cx = TestContext::new().await;

    // Quotas that do not add up to the pool's 32 GPUs are refused before anything, with the line.
    let over = blueprint(&cx, "over.toml", 4, 24, 16, 8);
    let refused = cx.run(&["validate", &over]).await.expect(1);
    // miette wraps the help: compare words.
    let words = refused
        .stderr
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    for said in [
        "The queues of pool `a3high` hold 40 GPUs (`team-a` 24, `team-b` 16), the pool has 32",
        "[blueprints/over.toml:67:8]",
        "4 nodes × 8 GPUs",
        "help: over a pool's queues, `gpus` must add up to its GPUs",
        "lower the queues' `gpus` by 8 in all",
        "set the pool's `nodes` to 5",
    ] {
        assert!(words.contains(said), "{said}:\n{}", refused.stderr);
    }

    let bp = blueprint(&cx, "teams.toml", 4, 16, 16, 8);
    let plan = cx.run(&["plan", &bp, "--verbose"]).await.expect(0);
    insta::with_settings!({
        snapshot_path => "snapshots/output",
        prepend_module_to_snapshot => false,
        omit_expression => true,
    }, {
        insta::assert_snapshot!("team-queues-plan", queue_blocks(&plan.stdout));
    });

    cx.run(&["apply", &bp, "--auto-approve"]).await.expect(0);
    let kubectl = Kubectl::for_cluster(&cx, "a3high").await;
    let namespaces = kubectl.names(&["namespaces"]).await;
    assert!(
        namespaces.contains(&"team-a".to_string()) && namespaces.contains(&"team-b".to_string()),
        "{namespaces:?}"
    );
    assert_eq!(
        queues(&kubectl).await,
        [
            ("team-a".into(), "research".into(), 16.into()),
            ("team-b".into(), "research".into(), 16.into()),
        ],
        "the two teams' queues replace the one queue"
    );
    let local = kubectl
        .items(&["localqueues.kueue.x-k8s.io", "-n", "team-a"])
        .await;
    assert_eq!(local[0]["spec"]["clusterQueue"], "team-a");

    // team-a asks for 3 nodes' GPUs (24) with 16 of its own: it borrows 8 of team-b's idle ones.
    cx.write(
        "job.yaml",
        r#"apiVersion: batch/v1
kind: Job
metadata:
  name: train
  namespace: team-a
  labels:
    kueue.x-k8s.io/queue-name: team-a
spec:
  parallelism: 3
  completions: 3
  template:
    spec:
      restartPolicy: Never
      tolerations:
      - {key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}
      containers:
      - name: main
        image: busybox
        resources:
          limits:
            nvidia.com/gpu: 8
"#,
    );
    let job_file = cx.path("job.yaml");
    kubectl
        .ok(&["apply", "-f", job_file.to_str().unwrap()])
        .await;
    cx.sim.advance_secs(5.0);
    let job = kubectl.items(&["jobs", "-n", "team-a"]).await;
    assert_eq!(job[0]["spec"]["suspend"], false, "admitted by borrowing");
    let a = kubectl
        .items(&["clusterqueues.kueue.x-k8s.io"])
        .await
        .into_iter()
        .find(|q| q["metadata"]["name"] == "team-a")
        .unwrap();
    assert_eq!(a["status"]["admittedWorkloads"], 1, "{:#}", a["status"]);

    let verified = cx.run(&["verify", &bp]).await.expect(0);
    for check in [
        "kueue/clusterqueue/team-a",
        "kueue/localqueue/team-a/team-a",
        "kueue/clusterqueue/team-b",
        "kueue/localqueue/team-b/team-b",
    ] {
        assert!(
            verified.stdout.contains(check),
            "{check}:\n{}",
            verified.stdout
        );
    }
    cx.run(&["plan", &bp, "--detailed-exitcode"])
        .await
        .expect(0);
}

// See: issue 26 item 11 (quotas still follow the pools, summed over ClusterQueues).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pool_resize_needs_its_queues_rebalanced_and_their_quotas_follow_it() {
    let cx = TestContext::new().await;
    let four = blueprint(&cx, "four.toml", 4, 16, 16, 8);
    cx.run(&["apply", &four, "--auto-approve"]).await.expect(0);
    let kubectl = Kubectl::for_cluster(&cx, "a3high").await;

    // The pool shrinks to 2 nodes but the queues still hold 32 GPUs: refused, pointing at both.
    let stale = blueprint(&cx, "stale.toml", 2, 16, 16, 8);
    let refused = cx.run(&["plan", &stale]).await.expect(1);
    assert!(
        refused
            .stderr
            .contains("hold 32 GPUs (`team-a` 16, `team-b` 16), the pool has 16")
            && refused.stderr.contains("2 nodes × 8 GPUs"),
        "{}",
        refused.stderr
    );

    // Re-balanced: both quotas are lowered before the pool shrinks.
    let two = blueprint(&cx, "two.toml", 2, 8, 8, 4);
    let start = common::request_log(&cx).await.len();
    cx.run(&["apply", &two, "--auto-approve"]).await.expect(0);
    let log = common::request_log(&cx).await;
    let at = |pred: &dyn Fn(&Value) -> bool| -> Vec<usize> {
        log.iter()
            .enumerate()
            .skip(start)
            .filter(|(_, e)| pred(e))
            .map(|(i, _)| i)
            .collect()
    };
    let set_size =
        at(&|e| e["method"] == "POST" && e["path"].as_str().unwrap_or("").contains(":setSize"));
    let writes = at(&|e| {
        e["method"] != "GET"
            && e["path"]
                .as_str()
                .unwrap_or("")
                .contains("/apis/kueue.x-k8s.io/v1beta2/clusterqueues/team-")
    });
    assert_eq!(set_size.len(), 1, "the pool is resized");
    assert_eq!(writes.len(), 2, "one write per team's queue");
    assert!(
        writes.iter().all(|w| *w < set_size[0]),
        "the quotas are lowered first: {writes:?} {set_size:?}"
    );
    assert_eq!(
        queues(&kubectl).await,
        [
            ("team-a".into(), "research".into(), 8.into()),
            ("team-b".into(), "research".into(), 8.into()),
        ]
    );
    cx.run(&["verify", &two]).await.expect(0);
    cx.run(&["plan", &two, "--detailed-exitcode"])
        .await
        .expect(0);
}
