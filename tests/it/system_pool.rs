//! The system pool is just capacity: replacing it replaces no object inside the cluster. Kueue's
//! CRDs, controller objects, queues and the Workloads they hold live in the API server, not on a
//! node, so a queued Job (and its Workload) submitted before the replacement is still queued after
//! it, and no CustomResourceDefinition or Kueue object is deleted.

use crate::common;

use common::TestContext;
use common::kubectl::Kubectl;
use serde_json::Value;

/// A Job of 8 pods × 8 GPUs (64, more than the 32 GPUs of the queue's quota) for the queue: Kueue
/// keeps it suspended, pending in its queues.
const QUEUED_JOB: &str = "\
apiVersion: batch/v1
kind: Job
metadata:
  name: waits-for-gpus
  namespace: default
  labels:
    kueue.x-k8s.io/queue-name: a3-queue
spec:
  parallelism: 8
  completions: 8
  suspend: true
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: train
        image: us-docker.pkg.dev/my-project/train/train:1
        resources:
          limits:
            nvidia.com/gpu: 8
";

/// A Workload as Kueue makes one for a queued Job.
const WORKLOAD: &str = "\
apiVersion: kueue.x-k8s.io/v1beta1
kind: Workload
metadata:
  name: job-waits-for-gpus-1a2b3
  namespace: default
spec:
  queueName: a3-queue
  podSets:
  - name: main
    count: 8
    template:
      spec:
        restartPolicy: Never
        containers:
        - name: train
          image: us-docker.pkg.dev/my-project/train/train:1
          resources:
            limits:
              nvidia.com/gpu: 8
";

fn a3_high_system_pool(cx: &TestContext, machine_type: &str) -> String {
    let text = std::fs::read_to_string(cx.path("blueprints/a3-high.toml")).unwrap();
    let edited = text.replace(
        "[system_pool]\nmachine_type = \"e2-standard-4\"\n",
        &format!("[system_pool]\nmachine_type = \"{machine_type}\"\n"),
    );
    assert!(
        edited != text || machine_type == "e2-standard-4",
        "the shipped blueprint has the expected system pool"
    );
    let path = format!("blueprints/a3high-system-{machine_type}.toml");
    cx.write(&path, &edited);
    path
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replacing_the_system_pool_keeps_kueue_its_crds_and_the_queued_work() {
    let cx = TestContext::new().await;
    let before = a3_high_system_pool(&cx, "e2-standard-4");
    cx.run(&["apply", &before, "--auto-approve"])
        .await
        .expect(0);
    let kubectl = Kubectl::for_cluster(&cx, "a3high").await;
    for (file, manifest) in [("job.yaml", QUEUED_JOB), ("workload.yaml", WORKLOAD)] {
        let path = cx.write(file, manifest);
        kubectl.ok(&["apply", "-f", path.to_str().unwrap()]).await;
    }
    let job: Value = serde_json::from_str(
        &kubectl
            .ok(&["get", "job", "waits-for-gpus", "-o", "json"])
            .await,
    )
    .unwrap();
    assert_eq!(job["spec"]["suspend"], true, "{job}");
    let crds_before = kubectl.names(&["customresourcedefinitions"]).await;
    assert!(crds_before.iter().any(|c| c == "workloads.kueue.x-k8s.io"));

    let after = a3_high_system_pool(&cx, "e2-standard-8");
    let plan = cx.run(&["plan", &after]).await.expect(0);
    assert!(
        plan.stdout.contains("node_pool.system must be replaced"),
        "{}",
        plan.stdout
    );
    // Only the pool: nothing inside the cluster is replaced, updated or deleted because of it.
    assert!(
        plan.stdout
            .contains("Plan: 1 to add, 0 to change, 1 to destroy."),
        "{}",
        plan.stdout
    );
    assert!(!plan.stdout.contains("k8s."), "{}", plan.stdout);

    let from = common::request_log(&cx).await.len();
    cx.run(&["apply", &after, "--auto-approve"]).await.expect(0);
    let log = common::request_log(&cx).await;
    let deletes: Vec<&str> = log[from..]
        .iter()
        .filter(|e| e["method"] == "DELETE")
        .filter_map(|e| e["path"].as_str())
        .collect();
    assert_eq!(deletes.len(), 1, "{deletes:?}");
    assert!(deletes[0].ends_with("/nodePools/system"), "{deletes:?}");

    assert_eq!(
        kubectl.names(&["customresourcedefinitions"]).await,
        crds_before
    );
    let job: Value = serde_json::from_str(
        &kubectl
            .ok(&["get", "job", "waits-for-gpus", "-o", "json"])
            .await,
    )
    .unwrap();
    assert_eq!(job["spec"]["suspend"], true, "still queued: {job}");
    assert_eq!(
        kubectl.names(&["workloads.kueue.x-k8s.io"]).await,
        vec!["job-waits-for-gpus-1a2b3".to_string()]
    );
    let queues = kubectl.items(&["clusterqueues.kueue.x-k8s.io"]).await;
    assert_eq!(queues.len(), 1);
    assert_eq!(queues[0]["metadata"]["name"], "a3-queue");
    // The next plan has nothing left to do.
    cx.run(&["plan", &after, "--detailed-exitcode"])
        .await
        .expect(0);
}
