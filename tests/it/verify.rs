//! `a3ctl verify` end to end: the real binary applies the shipped blueprints against the
//! simulator and verifies them; damage made with kubectl behind a3ctl's back (a Network, an
//! installer DaemonSet, the driver installer) fails exactly the check that names it, plan shows
//! the drift and apply repairs it. Kueue is checked against queue objects made with kubectl
//! (this branch's apply does not install Kueue yet). `--nccl-test` writes a manifest the
//! simulated API server accepts; `--run` times out with a clear message while a pod cannot be
//! scheduled, and passes once it can, judging the 2G-8G rows of the simulated run's per-size
//! table (shown, and in `--json`); `rdma.rs` judges it against every family's floor.

use crate::common;

use common::TestContext;
use common::kubectl::Kubectl;
use serde_json::Value;

const HIGH: &str = "blueprints/a3-high.toml";
const MEGA: &str = "blueprints/a3-mega.toml";

/// The failing checks of a `verify --json` report.
fn failed(report: &Value) -> Vec<String> {
    report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["status"] == "fail")
        .map(|c| c["name"].as_str().unwrap().to_string())
        .collect()
}

/// The check `name` of a report.
fn check<'a>(report: &'a Value, name: &str) -> &'a Value {
    report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == name)
        .unwrap_or_else(|| panic!("{name} in {report}"))
}

async fn verify_json(cx: &TestContext, blueprint: &str, code: i32) -> Value {
    let run = cx.run(&["verify", blueprint, "--json"]).await.expect(code);
    serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("{e}: {}", run.stdout))
}

/// No failed check.
const NONE: [&str; 0] = [];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn verify_before_any_apply_is_a_clear_error_without_cloud_calls() {
    let cx = TestContext::new().await;
    let before = cx.sim.request_total();
    let run = cx.run(&["verify", HIGH]).await.expect(1);
    assert!(run.stdout.is_empty(), "{}", run.stdout);
    assert!(
        run.stderr.contains(
            "error: Cluster `a3high` is not in state `state/a3high.a3state.json`: nothing has been applied yet"
        ),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr
            .contains("hint: run `a3ctl apply blueprints/a3-high.toml` first"),
        "{}",
        run.stderr
    );
    assert_eq!(cx.sim.request_total(), before);
    let run = cx
        .run(&["verify", HIGH, "--nccl-test", "--run", "--timeout", "soon"])
        .await
        .expect(1);
    assert!(
        run.stderr.contains("error: `soon` is not a duration"),
        "{}",
        run.stderr
    );
    assert_eq!(cx.sim.request_total(), before);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a3_high_verifies_drift_fails_the_named_check_and_apply_repairs_it() {
    let cx = TestContext::new().await;
    cx.run(&["apply", HIGH, "--auto-approve"]).await.expect(0);
    let kubectl = Kubectl::for_cluster(&cx, "a3high").await;

    // Everything a3ctl installs passes.
    let run = cx.run(&["verify", HIGH]).await.expect(0);
    for line in [
        "nodes/a3high                         ok    4/4 node(s) Ready with 8 allocatable nvidia.com/gpu each, on GKE 1.33.5-gke.1080000",
        "daemonset/kube-system/device-injector  ok    ready on 4/4 GPU node(s)",
        "network/vpc4                         ok    Device network on `a3high-gpunet-4` / `a3high-gpunet-4-subnet`",
        "networks/count                       ok    4 device Network object(s), 4 needed on A3 High",
        "kueue/clusterqueue/a3-queue          ok    Active with a quota of 32 nvidia.com/gpu",
    ] {
        let words: Vec<&str> = line.split_whitespace().collect();
        assert!(
            run.stdout
                .lines()
                .any(|l| l.split_whitespace().collect::<Vec<_>>() == words),
            "{line}\n{}",
            run.stdout
        );
    }
    assert!(
        run.stdout.ends_with("All 14 checks passed.\n"),
        "{}",
        run.stdout
    );
    assert_eq!(failed(&verify_json(&cx, HIGH, 0).await), NONE);

    // A Network deleted behind a3ctl's back.
    kubectl
        .ok(&["delete", "networks.networking.gke.io", "vpc3"])
        .await;
    let run = cx.run(&["verify", HIGH]).await.expect(1);
    assert!(run.stdout.contains("network/vpc3"), "{}", run.stdout);
    assert!(
        run.stdout.contains("FAIL  Network `vpc3` is missing\n"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("hint: it was deleted outside a3ctl; run `a3ctl plan blueprints/a3-high.toml` to see the drift and `a3ctl apply blueprints/a3-high.toml` to put it back"),
        "{}",
        run.stdout
    );
    drift_is_named_planned_and_repaired(
        &cx,
        &kubectl,
        &[],
        &["network/vpc3", "networks/count"],
        "k8s.network/-/vpc3",
    )
    .await;

    // The NCCL installer deleted behind a3ctl's back.
    let report = drift_is_named_planned_and_repaired(
        &cx,
        &kubectl,
        &[
            "delete",
            "daemonset",
            "nccl-tcpx-installer",
            "-n",
            "kube-system",
        ],
        &["daemonset/kube-system/nccl-tcpx-installer"],
        "k8s.daemonset/kube-system/nccl-tcpx-installer",
    )
    .await;
    let ds = check(&report, "daemonset/kube-system/nccl-tcpx-installer");
    assert_eq!(
        ds["message"],
        "DaemonSet `kube-system/nccl-tcpx-installer` is missing"
    );
    assert!(
        ds["hint"]
            .as_str()
            .unwrap()
            .contains("a3ctl apply blueprints/a3-high.toml")
    );

    // Kueue's quota changed behind a3ctl's back: named, planned as drift, repaired.
    kubectl
        .ok(&[
            "patch",
            "clusterqueues.kueue.x-k8s.io",
            "a3-queue",
            "--type=json",
            "-p",
            r#"[{"op":"replace","path":"/spec/resourceGroups/0/flavors/0/resources/0/nominalQuota","value":16}]"#,
        ])
        .await;
    let report = verify_json(&cx, HIGH, 1).await;
    assert_eq!(failed(&report), ["kueue/clusterqueue/a3-queue"]);
    let message = |r: &Value, name: &str| check(r, name)["message"].as_str().unwrap().to_string();
    assert_eq!(
        message(&report, "kueue/clusterqueue/a3-queue"),
        "ClusterQueue `a3-queue` has a nvidia.com/gpu quota of 16, the GPU pools have 32 GPUs"
    );
    let plan = cx
        .run(&["plan", HIGH, "--detailed-exitcode"])
        .await
        .expect(2);
    assert!(
        plan.stdout.contains(
            "~ object.spec.resourceGroups[0].flavors[0].resources[0].nominalQuota = 16 -> 32"
        ),
        "{}",
        plan.stdout
    );
    cx.run(&["apply", HIGH, "--auto-approve"]).await.expect(0);
    let report = verify_json(&cx, HIGH, 0).await;
    assert_eq!(
        message(&report, "kueue/clusterqueue/a3-queue"),
        "Active with a quota of 32 nvidia.com/gpu"
    );
    // The LocalQueue deleted.
    drift_is_named_planned_and_repaired(
        &cx,
        &kubectl,
        &[
            "delete",
            "localqueues.kueue.x-k8s.io",
            "a3-queue",
            "-n",
            "default",
        ],
        &["kueue/localqueue/default/a3-queue"],
        "k8s.localqueue/default/a3-queue",
    )
    .await;

    // The NCCL test: written without cloud calls, accepted by the API server. With the queue's
    // GPU quota cut below the test's two nodes, Kueue holds the Job, so --run times out clearly.
    let text = nccl_test_is_accepted(&cx, &kubectl, HIGH).await;
    assert!(
        text.contains("us-docker.pkg.dev/gce-ai-infra/gpudirect-tcpx/tcpgpudmarxd-dev:v2.0.12")
    );
    kubectl
        .ok(&[
            "patch",
            "clusterqueues.kueue.x-k8s.io",
            "a3-queue",
            "--type=json",
            "-p",
            r#"[{"op": "replace", "path": "/spec/resourceGroups/0/flavors/0/resources/0/nominalQuota", "value": 8}]"#,
        ])
        .await;
    let run = cx
        .run(&["verify", HIGH, "--nccl-test", "--run", "--timeout", "300ms"])
        .await
        .expect(1);
    assert!(
        run.stderr.contains("error: The NCCL test did not finish within 300ms: Job `default/a3ctl-nccl-test` has 0 of 2 pods succeeded"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr
            .contains("kubectl -n default delete job,service a3ctl-nccl-test"),
        "{}",
        run.stderr
    );
    let jobs = kubectl
        .items(&["jobs", "-n", "default", "--show-managed-fields"])
        .await;
    assert_eq!(jobs.len(), 1);
    assert_eq!(jobs[0]["metadata"]["managedFields"][0]["manager"], "a3ctl");
    // A second run replaces the first Job.
    cx.run(&["verify", HIGH, "--nccl-test", "--run", "--timeout", "300ms"])
        .await
        .expect(1);
    assert_eq!(kubectl.items(&["jobs", "-n", "default"]).await.len(), 1);
    // apply puts the quota back; the test then runs to completion above A3 High's floor.
    cx.run(&["apply", HIGH, "--auto-approve"]).await.expect(0);
    let run = cx
        .run(&["verify", HIGH, "--nccl-test", "--run", "--timeout", "20m"])
        .await
        .expect(0);
    // The per-size table of the TCPX script's 1M-8G run, the 2G-8G rows marked, then the verdict
    // on those rows: the simulator's A3 High default, 80 GB/s, against Cluster Health Scanner's
    // 60 GB/s.
    let rows: Vec<&str> = run
        .stdout
        .lines()
        .skip_while(|l| !l.trim_start().starts_with("SIZE"))
        .skip(1)
        .take_while(|l| !l.starts_with("NCCL"))
        .collect();
    assert_eq!(rows.len(), 14, "{}", run.stdout);
    assert!(rows[0].trim_start().starts_with("1M "), "{}", run.stdout);
    let judged: Vec<&str> = rows
        .iter()
        .filter(|r| r.ends_with("  *"))
        .copied()
        .collect();
    assert_eq!(judged.len(), 3, "{}", run.stdout);
    assert!(judged[0].trim_start().starts_with("2G "), "{}", run.stdout);
    assert!(
        run.stdout
            .contains("NCCL all-gather over 2 nodes: bus bandwidth 80.0 GB/s at 2G-8G (all sizes "),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("), floor 60 GB/s (BANDWIDTH_THRESHOLD of a 2G-8G all-gather, GoogleCloudPlatform/cluster-health-scanner@81c525d897f4e85a4f69dd1e389379de6f1e07c2 deploy/helm/health_checks/nccl_healthcheck/a3.yaml): ok"),
        "{}",
        run.stdout
    );
    assert!(run.stdout.trim_end().ends_with("ok"), "{}", run.stdout);
    // --json: the verdict with the same table.
    let run = cx
        .run(&[
            "verify",
            HIGH,
            "--nccl-test",
            "--run",
            "--timeout",
            "20m",
            "--json",
        ])
        .await
        .expect(0);
    let verdict: Value =
        serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("{e}: {}", run.stdout));
    let keys: Vec<&str> = verdict
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        keys,
        [
            "format",
            "blueprint",
            "cluster",
            "test",
            "hosts",
            "simulated",
            "passed",
            "busbw_gbps",
            "floor_gbps",
            "floor_source",
            "judged_min_bytes",
            "judged_max_bytes",
            "all_sizes_busbw_gbps",
            "out_of_bounds",
            "rows",
            "message",
            "hint"
        ]
    );
    assert_eq!(verdict["passed"], true);
    // Not under --sandbox: a3ctl cannot tell this simulator from a real cluster.
    assert_eq!(verdict["simulated"], false);
    assert_eq!(verdict["floor_gbps"], 60.0);
    assert_eq!(verdict["judged_min_bytes"], 2u64 << 30);
    assert_eq!(verdict["judged_max_bytes"], 8u64 << 30);
    assert!(
        (verdict["busbw_gbps"].as_f64().unwrap() - 80.0).abs() < 0.005,
        "{verdict}"
    );
    assert!(
        verdict["all_sizes_busbw_gbps"].as_f64().unwrap() < 80.0,
        "{verdict}"
    );
    assert_eq!(
        verdict["out_of_bounds"],
        serde_json::json!({"count": 0, "ok": true})
    );
    let rows = verdict["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 14);
    assert_eq!(
        rows[11],
        serde_json::json!({"size": 2u64 << 30, "busbw_out": rows[11]["busbw_out"], "busbw_in": rows[11]["busbw_in"], "judged": true})
    );
    assert_eq!(rows[10]["judged"], false);
    assert!(verdict["message"].is_null() && verdict["hint"].is_null());
}

/// Runs `kubectl DELETE` (when given), then: verify fails exactly `failing`, plan shows `addr` as
/// deleted, apply repairs it and verify passes again.
/// Returns the report of the damaged cluster.
async fn drift_is_named_planned_and_repaired(
    cx: &TestContext,
    kubectl: &Kubectl,
    delete: &[&str],
    failing: &[&str],
    addr: &str,
) -> Value {
    if !delete.is_empty() {
        kubectl.ok(delete).await;
    }
    let report = verify_json(cx, HIGH, 1).await;
    assert_eq!(failed(&report), failing);
    let plan = cx
        .run(&["plan", HIGH, "--detailed-exitcode"])
        .await
        .expect(2);
    assert!(
        plan.stdout.contains(&format!("# {addr} has been deleted")),
        "{}",
        plan.stdout
    );
    cx.run(&["apply", HIGH, "--auto-approve"]).await.expect(0);
    assert_eq!(failed(&verify_json(cx, HIGH, 0).await), NONE);
    report
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a3_mega_verifies_eight_networks_and_the_json_report_has_its_documented_shape() {
    let cx = TestContext::new().await;
    cx.run(&["apply", MEGA, "--auto-approve"]).await.expect(0);
    let report = verify_json(&cx, MEGA, 0).await;
    assert_eq!(failed(&report), NONE);
    let keys: Vec<&str> = report
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        keys,
        [
            "format",
            "blueprint",
            "cluster",
            "endpoint",
            "passed",
            "checks"
        ]
    );
    assert_eq!(report["format"], 1);
    assert_eq!(report["blueprint"], "a3mega");
    assert_eq!(report["cluster"], "a3mega");
    assert_eq!(report["passed"], true);
    let checks = report["checks"].as_array().unwrap();
    for check in checks {
        let keys: Vec<&str> = check
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(keys, ["name", "status", "message", "hint"]);
        assert_eq!(
            check["hint"].is_null(),
            check["status"] == "pass",
            "{check}"
        );
    }
    let names: Vec<&str> = checks.iter().map(|c| c["name"].as_str().unwrap()).collect();
    let mut want = vec![
        "nodes/a3mega",
        "daemonset/kube-system/device-injector",
        "daemonset/kube-system/nccl-tcpxo-installer",
    ];
    let networks: Vec<String> = (1..=8).map(|i| format!("network/vpc{i}")).collect();
    want.extend(networks.iter().map(String::as_str));
    want.extend([
        "networks/count",
        "jobset/crd",
        "jobset/controller",
        "jobset/kueue",
        "kueue/clusterqueue/a3-queue",
        "kueue/localqueue/default/a3-queue",
        "kueue/flavor/a3mega",
    ]);
    assert_eq!(names, want);
    assert_eq!(
        checks[0]["message"],
        "32/32 node(s) Ready with 8 allocatable nvidia.com/gpu each, on GKE 1.32.12-gke.1050000"
    );
    assert_eq!(checks[2]["message"], "ready on 32/32 GPU node(s)");

    let kubectl = Kubectl::for_cluster(&cx, "a3mega").await;
    let text = nccl_test_is_accepted(&cx, &kubectl, MEGA).await;
    assert!(
        text.contains("devices.gke.io/container.tcpxo-daemon"),
        "{text}"
    );
}

/// Writes the NCCL test of `blueprint` (`--nccl-test --out`), checks that the API server accepts
/// it (`kubectl apply --dry-run=server`) and returns its text. Writing it makes no cloud call.
async fn nccl_test_is_accepted(cx: &TestContext, kubectl: &Kubectl, blueprint: &str) -> String {
    let before = cx.sim.request_total();
    cx.run(&["verify", blueprint, "--nccl-test", "--out", "nccl.yaml"])
        .await
        .expect(0);
    assert_eq!(cx.sim.request_total(), before);
    let path = cx.path("nccl.yaml");
    let out = kubectl
        .ok(&["apply", "--dry-run=server", "-f", path.to_str().unwrap()])
        .await;
    assert!(
        out.contains("service/a3ctl-nccl-test created (server dry run)"),
        "{out}"
    );
    assert!(
        out.contains("job.batch/a3ctl-nccl-test created (server dry run)"),
        "{out}"
    );
    std::fs::read_to_string(path).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_the_driver_daemonset_the_gpus_are_not_allocatable_and_verify_says_why() {
    let cx = TestContext::new().await;
    let text = std::fs::read_to_string(cx.path(HIGH)).unwrap();
    cx.write(
        HIGH,
        &text.replace("driver = \"default\"", "driver = \"daemonset\""),
    );
    cx.run(&["apply", HIGH, "--auto-approve"]).await.expect(0);
    assert_eq!(failed(&verify_json(&cx, HIGH, 0).await), NONE);
    let kubectl = Kubectl::for_cluster(&cx, "a3high").await;
    kubectl
        .ok(&[
            "delete",
            "daemonset",
            "nvidia-driver-installer",
            "-n",
            "kube-system",
        ])
        .await;
    let run = cx.run(&["verify", HIGH]).await.expect(1);
    assert!(
        run.stdout.contains(
            "FAIL  4 of 4 node(s) of pool `a3high` do not have 8 allocatable nvidia.com/gpu (gke-"
        ),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("hint: the NVIDIA driver is installed by DaemonSet `kube-system/nvidia-driver-installer` (driver = \"daemonset\")"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout
            .contains("FAIL  DaemonSet `kube-system/nvidia-driver-installer` is missing"),
        "{}",
        run.stdout
    );
    cx.run(&["apply", HIGH, "--auto-approve"]).await.expect(0);
    assert_eq!(failed(&verify_json(&cx, HIGH, 0).await), NONE);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unreachable_cluster_is_a_clear_error() {
    let cx = TestContext::new().await;
    cx.run(&["apply", HIGH, "--auto-approve"]).await.expect(0);
    // The recorded endpoint now points at a closed port.
    let path = cx.path("state/a3high.a3state.json");
    let mut state: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    state["resources"]["cluster.main"]["outputs"]["endpoint"] = Value::from("127.0.0.1:1");
    std::fs::write(&path, serde_json::to_vec(&state).unwrap()).unwrap();
    let run = cx.run(&["verify", HIGH]).await.expect(1);
    assert!(run.stdout.is_empty(), "{}", run.stdout);
    assert!(
        run.stderr.contains(
            "error: Cannot read cluster `a3high` through its Kubernetes API at https://127.0.0.1:1"
        ),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr
            .contains("hint: `a3ctl plan blueprints/a3-high.toml` refreshes the cluster"),
        "{}",
        run.stderr
    );
}

/// `verify --access` proves `[identity]` from inside the cluster: a pod of the workload mounts
/// the bucket and a pod pulls from the repository. Without the bucket's grant (removed behind
/// a3ctl's back) the mount fails naming the bucket; without the repository's, the pull fails with
/// 403; each time `apply` grants it again and the probe passes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn verify_access_proves_the_grants_and_names_a_missing_one() {
    let cx = TestContext::new().await;
    cx.run(&["apply", MEGA, "--auto-approve"]).await.expect(0);
    let run = cx
        .run(&["verify", MEGA, "--access", "--json", "--timeout", "20s"])
        .await
        .expect(0);
    let report: Value = serde_json::from_str(&run.stdout).unwrap();
    let mount = "access/mount/my-project-a3mega-ckpt/default/default";
    assert_eq!(check(&report, mount)["status"], "pass", "{report}");
    assert_eq!(
        check(&report, "access/pull/training")["status"],
        "pass",
        "{report}"
    );

    let gcloud = common::gcloud::Gcloud::in_project(&cx.sim, "my-project");
    let described = gcloud
        .run(&[
            "projects",
            "describe",
            "my-project",
            "--format=value(projectNumber)",
        ])
        .await;
    assert!(described.0, "{}", described.2);
    let member = format!(
        "principal://iam.googleapis.com/projects/{}/locations/global/workloadIdentityPools/my-project.svc.id.goog/subject/ns/default/sa/default",
        described.1.trim()
    );
    let removed = gcloud
        .run(&[
            "storage",
            "buckets",
            "remove-iam-policy-binding",
            "gs://my-project-a3mega-ckpt",
            &format!("--member={member}"),
            "--role=roles/storage.objectUser",
        ])
        .await;
    assert!(removed.0, "{}", removed.2);
    let run = cx
        .run(&["verify", MEGA, "--access", "--json", "--timeout", "20s"])
        .await
        .expect(1);
    let report: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(failed(&report), [mount], "{report}");
    assert!(
        check(&report, mount)["message"]
            .as_str()
            .unwrap()
            .contains("cannot mount gs://my-project-a3mega-ckpt"),
        "{report}"
    );
    cx.run(&["apply", MEGA, "--auto-approve"]).await.expect(0);
    cx.run(&["verify", MEGA, "--access", "--timeout", "20s"])
        .await
        .expect(0);

    // Without the nodes' reader grant on the repository, the pull is refused with 403.
    let removed = gcloud
        .run(&[
            "artifacts",
            "repositories",
            "remove-iam-policy-binding",
            "training",
            "--location=us-central1",
            "--member=serviceAccount:a3mega-nodes@my-project.iam.gserviceaccount.com",
            "--role=roles/artifactregistry.reader",
        ])
        .await;
    assert!(removed.0, "{}", removed.2);
    let run = cx
        .run(&["verify", MEGA, "--access", "--json", "--timeout", "20s"])
        .await
        .expect(1);
    let report: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(failed(&report), ["access/pull/training"], "{report}");
    let message = check(&report, "access/pull/training")["message"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        message.contains("the nodes cannot read us-central1-docker.pkg.dev/my-project/training")
            && message.contains("403"),
        "{message}"
    );
    cx.run(&["apply", MEGA, "--auto-approve"]).await.expect(0);
    cx.run(&["verify", MEGA, "--access", "--timeout", "20s"])
        .await
        .expect(0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_the_sandbox_the_checks_hints_are_commands_to_paste() {
    let cx = TestContext::new().await;
    // Two nodes, the fewest the NCCL test runs on.
    let text = std::fs::read_to_string(cx.path("blueprints/minimal.toml")).unwrap();
    let two = text.replacen("nodes = 1", "nodes = 2", 1);
    assert_ne!(two, text);
    cx.write("blueprints/minimal.toml", &two);
    cx.sandbox(&["apply", "blueprints/minimal.toml", "--auto-approve"])
        .await
        .expect(0);
    // See: issue 26 item 13 — the sandbox's NCCL verdict says its numbers are the simulator's.
    let nccl = cx
        .sandbox(&["verify", "blueprints/minimal.toml", "--nccl-test", "--run"])
        .await
        .expect(0);
    assert!(
        nccl.stdout.contains(
            "\n  simulated: the sandbox has no GPUs; these numbers are the simulator's model of the stack, not a measurement (run the test on a real cluster to measure)\n"
        ),
        "{}",
        nccl.stdout
    );
    // The blueprint now declares a node the pool does not have.
    let three = two.replacen("nodes = 2", "nodes = 3", 1);
    cx.write("blueprints/minimal.toml", &three);
    let run = cx
        .sandbox(&["verify", "blueprints/minimal.toml"])
        .await
        .expect(1);
    assert!(
        run.stdout.contains(
            "`a3ctl --sandbox plan blueprints/minimal.toml` shows whether the pool was resized"
        ),
        "{}",
        run.stdout
    );
}
