//! What happens between applies: drift made behind a3ctl's back, machine-readable plans, timings,
//! and interrupts.

use crate::common;

use a3ctl_sim::SimConfig;
use common::TestContext;
use serde_json::{Value, json};

const P: &str = "my-project";

async fn rest(cx: &TestContext, method: reqwest::Method, path: &str, body: Option<Value>) -> Value {
    let mut request =
        reqwest::Client::new().request(method, format!("{}{path}", cx.sim.base_url()));
    if let Some(body) = body {
        request = request.json(&body);
    }
    request.send().await.unwrap().json().await.unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn drift_is_shown_and_apply_repairs_it() {
    let cx = TestContext::new().await;
    cx.run(&["apply", "blueprints/a3-high.toml", "--auto-approve"])
        .await
        .expect(0);
    // Behind a3ctl's back: a GPU firewall is deleted and a GPU VPC's MTU lowered.
    rest(
        &cx,
        reqwest::Method::DELETE,
        &format!("/compute/v1/projects/{P}/global/firewalls/a3high-gpunet-2-allow-internal"),
        None,
    )
    .await;
    rest(
        &cx,
        reqwest::Method::PATCH,
        &format!("/compute/v1/projects/{P}/global/networks/a3high-gpunet-1"),
        Some(json!({"mtu": 1460})),
    )
    .await;
    // Let the operations finish.
    rest(
        &cx,
        reqwest::Method::GET,
        &format!("/compute/v1/projects/{P}/global/networks"),
        None,
    )
    .await;

    let plan = cx
        .run(&["plan", "blueprints/a3-high.toml", "--detailed-exitcode"])
        .await
        .expect(2);
    assert!(
        plan.stdout
            .contains("Objects have changed outside of a3ctl"),
        "{}",
        plan.stdout
    );
    assert!(
        plan.stdout
            .contains("# firewall.gpu-2-internal has been deleted"),
        "{}",
        plan.stdout
    );
    assert!(
        plan.stdout.contains("# network.gpu-1 has changed"),
        "{}",
        plan.stdout
    );
    assert!(
        plan.stdout.contains("mtu = 8244 -> 1460"),
        "{}",
        plan.stdout
    );
    assert!(
        plan.stdout.contains("+ firewall.gpu-2-internal"),
        "{}",
        plan.stdout
    );
    assert!(
        plan.stdout.contains("mtu = 1460 -> 8244"),
        "{}",
        plan.stdout
    );
    assert!(
        plan.stdout
            .contains("Plan: 1 to add, 1 to change, 0 to destroy."),
        "{}",
        plan.stdout
    );

    cx.run(&["apply", "blueprints/a3-high.toml", "--auto-approve"])
        .await
        .expect(0);
    let net = rest(
        &cx,
        reqwest::Method::GET,
        &format!("/compute/v1/projects/{P}/global/networks/a3high-gpunet-1"),
        None,
    )
    .await;
    assert_eq!(net["mtu"], 8244);
    cx.run(&["plan", "blueprints/a3-high.toml", "--detailed-exitcode"])
        .await
        .expect(0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plan_json_and_timings_are_machine_readable() {
    let cx = TestContext::new().await;
    let plan = cx
        .run(&["plan", "blueprints/a3-mega.toml", "--json"])
        .await
        .expect(0);
    let json: Value = serde_json::from_str(&plan.stdout).expect("plan --json prints JSON");
    assert_eq!(json["summary"]["add"], 73);
    // The version tuple travels with the plan.
    let versions = json["versions"].as_array().unwrap();
    let version = |component: &str| {
        versions
            .iter()
            .find(|v| v["component"] == component)
            .map(|v| v["version"].clone())
    };
    assert_eq!(version("Kueue"), Some(Value::from("v0.17.1")));
    assert_eq!(version("NCCL"), Some(Value::from("2.28.7-1")));
    assert_eq!(
        version("NCCL stack"),
        Some(Value::from("2026-01 (GPUDirect-TCPXO, tested)"))
    );
    let changes = json["resource_changes"].as_array().unwrap();
    assert!(changes.iter().all(|c| c["action"] == "create"));
    assert!(
        changes
            .iter()
            .any(|c| c["address"] == "node_pool.a3mega" && c["after"]["node_count"] == 32)
    );

    cx.run(&[
        "apply",
        "blueprints/a3-mega.toml",
        "--auto-approve",
        "--timings",
        "timings.json",
    ])
    .await
    .expect(0);
    let timings: Vec<Value> =
        serde_json::from_slice(&std::fs::read(cx.path("timings.json")).unwrap()).unwrap();
    assert_eq!(timings.len(), 73);
    for t in &timings {
        assert!(
            t["start_ms"].as_u64().unwrap() <= t["end_ms"].as_u64().unwrap(),
            "{t}"
        );
        assert_eq!(t["outcome"], "done");
    }
    let end = |addr: &str| {
        timings.iter().find(|t| t["address"] == addr).unwrap()["end_ms"]
            .as_u64()
            .unwrap()
    };
    let start = |addr: &str| {
        timings.iter().find(|t| t["address"] == addr).unwrap()["start_ms"]
            .as_u64()
            .unwrap()
    };
    assert!(start("cluster.main") >= end("subnetwork.primary"));
    assert!(start("node_pool.a3mega") >= end("cluster.main"));
}

#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn interrupts_save_state_and_the_next_apply_finishes() {
    let cx = TestContext::with(SimConfig::realistic(0.0005)).await;
    use tokio::io::{AsyncBufReadExt, AsyncReadExt, BufReader};
    let interrupt = |pid: u32| {
        std::process::Command::new("kill")
            .args(["-INT", &pid.to_string()])
            .status()
            .unwrap();
    };
    // Starts an apply and returns it once its first step has started.
    let start = || async {
        let mut child = cx
            .command(&["apply", "blueprints/a3-mega.toml", "--auto-approve"])
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut lines = BufReader::new(child.stderr.take().unwrap());
        let mut seen = String::new();
        loop {
            let mut line = String::new();
            if lines.read_line(&mut line).await.unwrap() == 0 {
                panic!("apply ended before starting: {seen}");
            }
            seen.push_str(&line);
            if line.contains("Creating...") {
                return (child, lines, seen);
            }
        }
    };
    let finish = |child: tokio::process::Child,
                  mut lines: BufReader<tokio::process::ChildStderr>,
                  mut seen: String| async move {
        lines.read_to_string(&mut seen).await.unwrap();
        let status = child.wait_with_output().await.unwrap().status;
        (status.code(), seen)
    };

    // First run: one interrupt — running steps finish, nothing new starts.
    let (child, lines, seen) = start().await;
    interrupt(child.id().unwrap());
    let (code, stderr) = finish(child, lines, seen).await;
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.contains("Interrupt received"), "{stderr}");
    // Nothing failed, so nothing to fix: the command that continues, to paste.
    assert!(
        stderr.contains("Run `a3ctl apply blueprints/a3-mega.toml` to continue."),
        "{stderr}"
    );
    assert!(!stderr.contains("Fix the cause"), "{stderr}");
    let state: Value =
        serde_json::from_slice(&std::fs::read(cx.path("state/a3mega.a3state.json")).unwrap())
            .unwrap();
    assert!(
        state["pending"].as_array().unwrap().is_empty(),
        "in-flight steps were waited for"
    );
    let recorded = state["resources"].as_object().unwrap().len();
    assert!(recorded > 0 && recorded < 73, "{recorded}");

    // Second run: two interrupts — it stops waiting at once, leaving operations journaled.
    let (child, lines, seen) = start().await;
    let pid = child.id().unwrap();
    interrupt(pid);
    tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    interrupt(pid);
    let (code, stderr) = finish(child, lines, seen).await;
    assert_eq!(code, Some(1), "{stderr}");

    // The next apply resumes whatever is journaled and finishes.
    let done = cx
        .run(&["apply", "blueprints/a3-mega.toml", "--auto-approve"])
        .await
        .expect(0);
    assert!(done.stderr.contains("Apply complete!"), "{}", done.stderr);
    let state: Value =
        serde_json::from_slice(&std::fs::read(cx.path("state/a3mega.a3state.json")).unwrap())
            .unwrap();
    assert_eq!(state["resources"].as_object().unwrap().len(), 73);
    cx.run(&["plan", "blueprints/a3-mega.toml", "--detailed-exitcode"])
        .await
        .expect(0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_channel_default_below_the_gpudirect_minimum_stops_before_the_cluster_is_created() {
    let cx = TestContext::new().await;
    // EXTENDED's default is 1.31.14-gke.1243000: below A3 Mega's 1.32.4-gke.1767000 floor.
    let text = std::fs::read_to_string(cx.path("blueprints/minimal.toml")).unwrap();
    cx.write(
        "old.toml",
        &format!("{text}\n[cluster]\nrelease_channel = \"extended\"\nversion = \"default\"\n"),
    );
    cx.run(&["validate", "old.toml"]).await.expect(0);
    let run = cx
        .run(&["apply", "old.toml", "--auto-approve"])
        .await
        .expect(1);
    assert!(
        run.stderr
            .contains("error: Failed to create `cluster.main`"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("older than GPUDirect on A3 Mega needs"),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("1.31.14-gke.1243000"), "{}", run.stderr);
    let clusters = reqwest::get(format!(
        "{}/container/v1/projects/{P}/locations/-/clusters",
        cx.sim.base_url()
    ))
    .await
    .unwrap()
    .json::<Value>()
    .await
    .unwrap();
    assert!(
        clusters["clusters"].as_array().is_none_or(|c| c.is_empty()),
        "{clusters}"
    );
}
