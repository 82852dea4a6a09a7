//! The Kueue WorkloadPriorityClasses a blueprint declares (`[[priority]]`), end to end on the
//! minimal blueprint (one A3 Mega node, 8 GPUs): the plan, the apply, kubectl (the independent
//! client) seeing the classes and the simulated Kueue admitting the higher priority first and
//! holding back a job that names a class that does not exist, a value changed in place and a
//! class removed in one apply, and destroy.

use crate::common;

use common::TestContext;
use common::kubectl::Kubectl;
use serde_json::{Value, json};

const BP: &str = "blueprints/minimal.toml";

/// The minimal blueprint, unprotected, with `priorities` appended.
fn blueprint(cx: &TestContext, priorities: &str) {
    let shipped = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(BP);
    let text = std::fs::read_to_string(shipped).unwrap();
    cx.write(BP, &format!("{text}\n{priorities}"));
    cx.unprotect(BP);
}

const TWO: &str = r#"[[priority]]
name = "production"
value = 1000
description = "Jobs a release waits for"

[[priority]]
name = "dev"
value = DEV
"#;

/// The plan's blocks for the WorkloadPriorityClasses, as printed.
fn class_blocks(stdout: &str) -> String {
    let mut out = Vec::new();
    let mut keep = false;
    for line in stdout.lines() {
        if line.trim_start().starts_with("# ") {
            keep = line.contains("k8s.workloadpriorityclass/");
        } else if !line.starts_with(' ') {
            keep = false;
        }
        if keep {
            out.push(line);
        }
    }
    out.join("\n")
}

/// `(name, value)` of every WorkloadPriorityClass in the cluster.
async fn classes(kubectl: &Kubectl) -> Vec<(String, Value)> {
    kubectl
        .items(&["workloadpriorityclasses.kueue.x-k8s.io"])
        .await
        .iter()
        .map(|c| {
            (
                c["metadata"]["name"].as_str().unwrap().to_string(),
                c["value"].clone(),
            )
        })
        .collect()
}

/// A Job (or, with `jobset`, a JobSet of one such Job) of one pod asking for the node's 8 GPUs,
/// queued to the blueprint's queue, with `class` in its priority-class label (JSON, which
/// kubectl reads as YAML).
fn job(name: &str, class: Option<&str>, jobset: bool) -> String {
    let mut labels = json!({"kueue.x-k8s.io/queue-name": "a3-queue"});
    if let Some(class) = class {
        labels["kueue.x-k8s.io/priority-class"] = json!(class);
    }
    let metadata = json!({"name": name, "namespace": "default", "labels": labels});
    let spec = json!({"parallelism": 1, "completions": 1, "template": {"spec": {
        "restartPolicy": "Never",
        "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
        "containers": [{"name": "main", "image": "busybox", "command": ["sleep", "3600"],
            "resources": {"limits": {"nvidia.com/gpu": 8}}}],
    }}});
    let object = if jobset {
        json!({"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet", "metadata": metadata,
            "spec": {"replicatedJobs": [{"name": "workers", "template": {"spec": spec}}]}})
    } else {
        json!({"apiVersion": "batch/v1", "kind": "Job", "metadata": metadata, "spec": spec})
    };
    object.to_string()
}

async fn submit(cx: &TestContext, kubectl: &Kubectl, name: &str, yaml: &str) {
    let file = format!("{name}.yaml");
    cx.write(&file, yaml);
    kubectl
        .ok(&["apply", "-f", cx.path(&file).to_str().unwrap()])
        .await;
    cx.sim.advance_secs(1.0);
}

async fn suspended(kubectl: &Kubectl, resource: &str, name: &str) -> Value {
    let object: Value =
        serde_json::from_str(&kubectl.ok(&["get", resource, name, "-o", "json"]).await).unwrap();
    object["spec"]["suspend"].clone()
}

// See: issue 26 item 11 ("priorities" among the queues teams declare).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn declared_priority_classes_order_admission_change_in_place_and_go_with_the_blueprint() {
    let cx = TestContext::new().await;
    blueprint(&cx, &TWO.replace("DEV", "100"));
    let plan = cx.run(&["plan", BP, "--verbose"]).await.expect(0);
    insta::with_settings!({
        snapshot_path => "snapshots/output",
        prepend_module_to_snapshot => false,
        omit_expression => true,
    }, {
        insta::assert_snapshot!("priority-classes-plan", class_blocks(&plan.stdout));
    });
    cx.run(&["apply", BP, "--auto-approve"]).await.expect(0);
    let kubectl = Kubectl::for_cluster(&cx, "a3mini").await;
    assert_eq!(
        classes(&kubectl).await,
        [
            ("dev".into(), 100.into()),
            ("production".into(), 1000.into())
        ]
    );

    // The node's 8 GPUs are taken; then a dev JobSet, a dev Job and a production Job wait.
    cx.sim.advance_secs(30.0);
    submit(&cx, &kubectl, "blocker", &job("blocker", None, false)).await;
    assert_eq!(suspended(&kubectl, "job", "blocker").await, false);
    submit(&cx, &kubectl, "dev-set", &job("dev-set", Some("dev"), true)).await;
    submit(
        &cx,
        &kubectl,
        "dev-job",
        &job("dev-job", Some("dev"), false),
    )
    .await;
    submit(
        &cx,
        &kubectl,
        "prod-job",
        &job("prod-job", Some("production"), false),
    )
    .await;
    // A typo: accepted, but Kueue makes it no Workload, so it never waits in the queue.
    submit(
        &cx,
        &kubectl,
        "typo-set",
        &job("typo-set", Some("prodution"), true),
    )
    .await;
    let queue = &kubectl.items(&["clusterqueues.kueue.x-k8s.io"]).await[0];
    assert_eq!(
        (
            &queue["status"]["admittedWorkloads"],
            &queue["status"]["pendingWorkloads"]
        ),
        (&1.into(), &3.into()),
        "{:#}",
        queue["status"]
    );
    let workloads = kubectl.items(&["workloads", "-n", "default"]).await;
    assert_eq!(workloads.len(), 1, "only dev-set's: {workloads:#?}");
    let spec = &workloads[0]["spec"];
    assert_eq!(spec["priority"], 100);
    assert_eq!(
        spec["priorityClassRef"],
        json!({"group": "kueue.x-k8s.io", "kind": "WorkloadPriorityClass", "name": "dev"})
    );

    // The GPUs come free: the production Job goes first although it came last.
    kubectl.ok(&["delete", "job", "blocker"]).await;
    cx.sim.advance_secs(5.0);
    assert_eq!(suspended(&kubectl, "job", "prod-job").await, false);
    assert_eq!(suspended(&kubectl, "job", "dev-job").await, true);
    assert_eq!(suspended(&kubectl, "jobset", "dev-set").await, true);
    assert_eq!(suspended(&kubectl, "jobset", "typo-set").await, true);

    // dev's value changed and production removed: dev updated in place, production deleted.
    blueprint(&cx, "[[priority]]\nname = \"dev\"\nvalue = 50\n");
    let plan = cx.run(&["plan", BP, "--detailed-exitcode"]).await.expect(2);
    insta::with_settings!({
        snapshot_path => "snapshots/output",
        prepend_module_to_snapshot => false,
        omit_expression => true,
    }, {
        insta::assert_snapshot!("priority-classes-update", class_blocks(&plan.stdout));
    });
    let start = common::request_log(&cx).await.len();
    cx.run(&["apply", BP, "--auto-approve"]).await.expect(0);
    // The two steps are independent and run side by side: their order is not the plan's.
    let mut writes: Vec<(String, String)> = common::request_log(&cx).await[start..]
        .iter()
        .filter(|e| e["method"] != "GET")
        .filter_map(|e| {
            let path = e["path"].as_str()?;
            path.contains("/workloadpriorityclasses")
                .then(|| (e["method"].as_str().unwrap().to_string(), path.to_string()))
        })
        .collect();
    writes.sort();
    let class = "/apis/kueue.x-k8s.io/v1beta2/workloadpriorityclasses";
    assert_eq!(
        writes,
        [
            ("DELETE".to_string(), format!("{class}/production")),
            ("PATCH".to_string(), format!("{class}/dev")),
        ],
        "{writes:?}"
    );
    assert_eq!(classes(&kubectl).await, [("dev".into(), 50.into())]);
    // Kueue read the class when it made the Workload: the one made keeps 100.
    let workloads = kubectl.items(&["workloads", "-n", "default"]).await;
    assert_eq!(workloads[0]["spec"]["priority"], 100);
    cx.run(&["plan", BP, "--detailed-exitcode"]).await.expect(0);

    cx.run(&["destroy", BP, "--auto-approve"]).await.expect(0);
    let (ok, _, _) = kubectl
        .run(&["get", "workloadpriorityclasses.kueue.x-k8s.io"])
        .await;
    assert!(!ok, "the cluster and its classes are gone");
}
