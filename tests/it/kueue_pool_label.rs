//! Kueue across a pool move (issue 25): every pool a3ctl makes carries `a3ctl.dev/pool`, and each
//! GPU pool's ResourceFlavor selects it instead of GKE's pool name. A deployment made before that
//! (pools without the label, flavors selecting `cloud.google.com/gke-nodepool`) converges without
//! replacing a pool: the pools are relabelled in place, then each flavor is made anew while its
//! ClusterQueue holds, and a queued Workload is still there.
//!
//! The earlier deployment is made by applying the shipped A3 High blueprint with this a3ctl, then
//! rewriting what differs to what the earlier a3ctl made and recorded: in the simulator's world,
//! the pools' node labels (and so their Nodes) and the flavor's node labels; in the state, the
//! same fields of their records. Everything else (the release, its CRDs with Kueue's rules, the
//! flavor's in-use finalizer, the queues) is what either version makes.

use crate::common;

use common::TestContext;
use common::kubectl::Kubectl;
use serde_json::{Value, json};

const BLUEPRINT: &str = "blueprints/a3-high.toml";
const STATE: &str = "state/a3high.a3state.json";
const FLAVOR: &str = "k8s.resourceflavor/-/a3high";
const FLAVOR_PATH: &str = "/apis/kueue.x-k8s.io/v1beta2/resourceflavors";

/// What the earlier a3ctl's flavor selected.
fn old_node_labels() -> Value {
    json!({"cloud.google.com/gke-nodepool": "a3high", "cloud.google.com/gke-accelerator": "nvidia-h100-80gb"})
}

/// Rewrites the applied deployment to what the earlier a3ctl made (see the module doc).
fn make_it_old(cx: &TestContext) {
    let key = a3ctl_sim::container::cluster_key("my-project", "us-central1", "a3high");
    cx.sim.shared.with_world(|world, ctx| {
        for pool in ["system", "a3high"] {
            let cluster = world.container.clusters.get_mut(&key).unwrap();
            let pool_mut = cluster.pool_mut(pool).unwrap();
            pool_mut.resource["config"]
                .as_object_mut()
                .unwrap()
                .remove("labels");
            a3ctl_sim::container::sync_nodes(world, ctx, &key, pool);
        }
        let kube = world.kube.clusters.get_mut(&key).unwrap();
        let flavor_key =
            a3ctl_sim::kube::store::object_key("kueue.x-k8s.io", "resourceflavors", "", "a3high");
        let mut flavor = kube.store.objects[&flavor_key].clone();
        flavor["spec"]["nodeLabels"] = old_node_labels();
        kube.store
            .put("kueue.x-k8s.io", "resourceflavors", "", "a3high", flavor);
        kube.ticked = None;
    });
    let mut state: Value = serde_json::from_slice(&std::fs::read(cx.path(STATE)).unwrap()).unwrap();
    let resources = &mut state["resources"];
    for pool in ["node_pool.system", "node_pool.a3high"] {
        resources[pool]["spec"]
            .as_object_mut()
            .unwrap()
            .remove("node_labels");
    }
    resources[FLAVOR]["spec"]["object"]["spec"]["nodeLabels"] = old_node_labels();
    std::fs::write(cx.path(STATE), serde_json::to_vec_pretty(&state).unwrap()).unwrap();
}

/// A Job asking for 64 GPUs of the 32 the queue has: it stays queued (suspended).
const QUEUED_JOB: &str = r#"{"apiVersion": "batch/v1", "kind": "Job",
  "metadata": {"name": "big-train", "namespace": "default",
    "labels": {"kueue.x-k8s.io/queue-name": "a3-queue"}},
  "spec": {"parallelism": 8, "completions": 8, "template": {"spec": {
    "restartPolicy": "Never",
    "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
    "containers": [{"name": "train", "image": "busybox:1.36",
      "resources": {"limits": {"nvidia.com/gpu": "8"}}}]}}}}"#;

fn position(log: &[Value], from: usize, method: &str, path: &str) -> Option<usize> {
    log.iter()
        .enumerate()
        .skip(from)
        .find(|(_, e)| e["method"] == method && e["path"].as_str().unwrap_or("").ends_with(path))
        .map(|(i, _)| i)
}

// See: issue 25 (GPUs are scarce: Kueue across a pool move).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deployment_of_the_earlier_a3ctl_relabels_its_pools_in_place_then_moves_its_flavor() {
    let cx = TestContext::new().await;
    cx.run(&["apply", BLUEPRINT, "--auto-approve"])
        .await
        .expect(0);
    make_it_old(&cx);
    let kubectl = Kubectl::for_cluster(&cx, "a3high").await;
    let job = cx.write("big-train.json", QUEUED_JOB);
    kubectl.ok(&["create", "-f", job.to_str().unwrap()]).await;
    let job_uid = kubectl.items(&["jobs", "-n", "default"]).await[0]["metadata"]["uid"].clone();
    let nodes = kubectl
        .items(&["nodes", "-l", "cloud.google.com/gke-nodepool=a3high"])
        .await;
    assert_eq!(nodes.len(), 4);
    assert!(
        nodes
            .iter()
            .all(|n| n["metadata"]["labels"].get("a3ctl.dev/pool").is_none()),
        "the earlier deployment's nodes have no a3ctl label"
    );
    let names = |nodes: &[Value]| -> Vec<String> {
        nodes
            .iter()
            .map(|n| n["metadata"]["name"].as_str().unwrap().to_string())
            .collect()
    };
    let node_names = names(&nodes);

    // The plan: both pools relabelled in place, the flavor updated; nothing replaced.
    let plan = cx.run(&["plan", BLUEPRINT, "--detailed-exitcode"]).await;
    assert_eq!(plan.code, Some(2), "{}\n{}", plan.stdout, plan.stderr);
    for line in [
        "# node_pool.a3high will be updated in-place",
        "# node_pool.system will be updated in-place",
        "# k8s.resourceflavor/-/a3high will be updated in-place",
        "Plan: 0 to add, 3 to change, 0 to destroy.",
    ] {
        assert!(plan.stdout.contains(line), "{line}\n{}", plan.stdout);
    }
    assert!(!plan.stdout.contains("replaced"), "{}", plan.stdout);

    let start = common::request_log(&cx).await.len();
    cx.run(&["apply", BLUEPRINT, "--auto-approve"])
        .await
        .expect(0);
    let log = common::request_log(&cx).await;
    let mutations: Vec<String> = log[start..]
        .iter()
        .filter(|e| e["method"] != "GET")
        .map(|e| format!("{} {}", e["method"], e["path"]))
        .collect();
    // No pool deleted or created; each updated in place (`nodePools.update`).
    assert!(
        !mutations.iter().any(|m| m.contains("/nodePools")
            && (m.starts_with("\"DELETE\"") || m.starts_with("\"POST\""))),
        "{mutations:#?}"
    );
    let relabel = position(&log, start, "PUT", "/nodePools/a3high").expect("relabelled");
    assert!(position(&log, start, "PUT", "/nodePools/system").is_some());
    // Then the flavor: the holding flavor, the queue holding, the delete, the flavor anew, the
    // queue back, the holding flavor deleted. No CRD, ClusterQueue or Job deleted.
    let held = position(
        &log,
        relabel,
        "PATCH",
        &format!("{FLAVOR_PATH}/a3high-held"),
    )
    .expect("the holding flavor is applied after the relabelling");
    let queue_path = "/apis/kueue.x-k8s.io/v1beta2/clusterqueues/a3-queue";
    let hold = position(&log, held, "PATCH", queue_path).expect("the queue holds");
    let delete = position(&log, hold, "DELETE", &format!("{FLAVOR_PATH}/a3high"))
        .expect("the flavor is deleted once the queue holds");
    let anew = position(&log, delete, "PATCH", &format!("{FLAVOR_PATH}/a3high"))
        .expect("the flavor is applied anew");
    let back = position(&log, anew, "PATCH", queue_path).expect("the queue is put back");
    position(&log, back, "DELETE", &format!("{FLAVOR_PATH}/a3high-held"))
        .expect("the holding flavor goes");
    let deletes: Vec<&String> = mutations
        .iter()
        .filter(|m| m.starts_with("\"DELETE\""))
        .collect();
    assert_eq!(deletes.len(), 2, "{deletes:#?}");

    // The same nodes, now labelled; the flavor selects the label; the Job still waits.
    let nodes = kubectl
        .items(&["nodes", "-l", "a3ctl.dev/pool=a3high"])
        .await;
    assert_eq!(names(&nodes), node_names);
    let flavor = &kubectl.items(&["resourceflavors.kueue.x-k8s.io"]).await;
    assert_eq!(flavor.len(), 1, "the holding flavor is gone");
    assert_eq!(
        flavor[0]["spec"]["nodeLabels"],
        json!({"a3ctl.dev/pool": "a3high", "cloud.google.com/gke-accelerator": "nvidia-h100-80gb"})
    );
    let queue = &kubectl.items(&["clusterqueues.kueue.x-k8s.io"]).await[0];
    assert_eq!(
        queue["spec"]["resourceGroups"][0]["flavors"],
        json!([{"name": "a3high", "resources": [{"name": "nvidia.com/gpu", "nominalQuota": 32}]}])
    );
    assert_eq!(queue["status"]["conditions"][0]["status"], "True");
    assert_eq!(queue["status"]["pendingWorkloads"], 1);
    let jobs = kubectl.items(&["jobs", "-n", "default"]).await;
    assert_eq!(jobs.len(), 1);
    assert_eq!(jobs[0]["metadata"]["uid"], job_uid, "the same Job");
    assert_eq!(jobs[0]["spec"]["suspend"], true, "still queued");

    cx.run(&["plan", BLUEPRINT, "--detailed-exitcode"])
        .await
        .expect(0);
}
