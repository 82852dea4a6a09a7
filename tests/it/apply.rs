//! End to end against the simulator: apply each shipped blueprint, check what exists through the
//! simulator's own REST API (as gcloud would see it), plan again (no changes), update and
//! replace, destroy (nothing left), and survive faults, kills and concurrent runs.

use crate::common;

use a3ctl_sim::SimConfig;
use a3ctl_sim::faults::{FaultAction, FaultConfig, NamedFault, ScriptedFault, TransientFaults};
use common::TestContext;
use serde_json::Value;

const P: &str = "my-project";
const R: &str = "us-central1";

async fn get(cx: &TestContext, path: &str) -> Value {
    let url = format!("{}{path}", cx.sim.base_url());
    reqwest::get(&url).await.unwrap().json().await.unwrap()
}

async fn items(cx: &TestContext, path: &str, key: &str) -> Vec<Value> {
    get(cx, path).await[key]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

/// Everything of every API in the project, as sorted `kind/name` strings.
async fn everything(cx: &TestContext) -> Vec<String> {
    let mut out = Vec::new();
    let name = |v: &Value| {
        v["name"]
            .as_str()
            .unwrap_or("")
            .rsplit('/')
            .next()
            .unwrap_or("")
            .to_string()
    };
    for (kind, path, key) in [
        (
            "network",
            format!("/compute/v1/projects/{P}/global/networks"),
            "items",
        ),
        (
            "subnetwork",
            format!("/compute/v1/projects/{P}/regions/{R}/subnetworks"),
            "items",
        ),
        (
            "firewall",
            format!("/compute/v1/projects/{P}/global/firewalls"),
            "items",
        ),
        (
            "router",
            format!("/compute/v1/projects/{P}/regions/{R}/routers"),
            "items",
        ),
        (
            "resource_policy",
            format!("/compute/v1/projects/{P}/regions/{R}/resourcePolicies"),
            "items",
        ),
        (
            "cluster",
            format!("/container/v1/projects/{P}/locations/-/clusters"),
            "clusters",
        ),
        (
            "filestore",
            format!("/file/v1/projects/{P}/locations/-/instances"),
            "instances",
        ),
        (
            "repository",
            format!("/artifactregistry/v1/projects/{P}/locations/{R}/repositories"),
            "repositories",
        ),
        ("bucket", format!("/storage/v1/b?project={P}"), "items"),
    ] {
        for item in items(cx, &path, key).await {
            out.push(format!("{kind}/{}", name(&item)));
            if kind == "cluster" {
                for pool in item["nodePools"].as_array().cloned().unwrap_or_default() {
                    out.push(format!("node_pool/{}", name(&pool)));
                }
            }
        }
    }
    out.sort();
    out
}

fn expected_mega() -> Vec<String> {
    let mut v: Vec<String> = vec![
        "network/a3mega-net".into(),
        "subnetwork/a3mega-subnet".into(),
        "firewall/a3mega-net-allow-internal".into(),
        "router/a3mega-router".into(),
        "resource_policy/a3mega-a3mega-placement".into(),
        "cluster/a3mega".into(),
        "node_pool/system".into(),
        "node_pool/a3mega".into(),
        "filestore/a3mega-fs".into(),
        "repository/training".into(),
        "bucket/my-project-a3mega-ckpt".into(),
    ];
    for i in 1..=8 {
        v.push(format!("network/a3mega-gpunet-{i}"));
        v.push(format!("subnetwork/a3mega-gpunet-{i}-subnet"));
        v.push(format!("firewall/a3mega-gpunet-{i}-allow-internal"));
    }
    v.sort();
    v
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a3_mega_applies_the_recipe_then_plans_nothing_then_destroys_everything() {
    let cx = TestContext::new().await;
    cx.unprotect("blueprints/a3-mega.toml");
    let run = cx
        .run(&["apply", "blueprints/a3-mega.toml", "--auto-approve"])
        .await
        .expect(0);
    assert!(
        run.stderr
            .contains("Apply complete! Resources: 73 added, 0 changed, 0 destroyed."),
        "{}",
        run.stderr
    );
    assert_eq!(everything(&cx).await, expected_mega());
    // The plan names the version tuple; the outputs give workloads what they reference.
    for line in [
        "Version stack:",
        "NCCL stack             2026-01 (GPUDirect-TCPXO, tested)",
        "RxDM sidecar           us-docker.pkg.dev/gce-ai-infra/gpudirect-tcpxo/tcpgpudmarxd-dev:v1.0.21",
        "Kueue                  v0.17.1",
        "gpu_networks = [\"vpc1\", \"vpc2\", \"vpc3\", \"vpc4\", \"vpc5\", \"vpc6\", \"vpc7\", \"vpc8\"]",
        "  networking.gke.io/default-interface: eth0",
        "      {\"interfaceName\":\"eth8\",\"network\":\"vpc8\"}",
        "kueue_queue = \"a3-queue\"",
        "volume_claims = [\"a3mega-filestore\", \"gcs-my-project-a3mega-ckpt\"]",
    ] {
        assert!(run.stdout.contains(line), "{line}\n{}", run.stdout);
    }

    // The recipe's settings, as the APIs report them.
    let gpu_net = get(
        &cx,
        &format!("/compute/v1/projects/{P}/global/networks/a3mega-gpunet-5"),
    )
    .await;
    assert_eq!(gpu_net["mtu"], 8244);
    let cluster = get(
        &cx,
        &format!("/container/v1/projects/{P}/locations/{R}/clusters/a3mega"),
    )
    .await;
    assert_eq!(
        cluster["networkConfig"]["datapathProvider"],
        "ADVANCED_DATAPATH"
    );
    assert_eq!(cluster["networkConfig"]["enableMultiNetworking"], true);
    assert_eq!(cluster["resourceLabels"]["a3ctl-blueprint"], "a3mega");
    let pool = get(
        &cx,
        &format!("/container/v1/projects/{P}/locations/{R}/clusters/a3mega/nodePools/a3mega"),
    )
    .await;
    assert_eq!(pool["config"]["machineType"], "a3-megagpu-8g");
    assert_eq!(
        pool["config"]["accelerators"][0]["acceleratorType"],
        "nvidia-h100-mega-80gb"
    );
    assert_eq!(
        pool["config"]["accelerators"][0]["acceleratorCount"]
            .to_string()
            .trim_matches('"'),
        "8"
    );
    assert_eq!(
        pool["networkConfig"]["additionalNodeNetworkConfigs"]
            .as_array()
            .unwrap()
            .len(),
        8
    );
    assert_eq!(pool["placementPolicy"]["type"], "COMPACT");
    assert_eq!(pool["initialNodeCount"], 32);
    let system = get(
        &cx,
        &format!("/container/v1/projects/{P}/locations/{R}/clusters/a3mega/nodePools/system"),
    )
    .await;
    assert_eq!(system["config"]["machineType"], "e2-standard-4");

    let again = cx
        .run(&["plan", "blueprints/a3-mega.toml", "--detailed-exitcode"])
        .await
        .expect(0);
    assert!(again.stdout.contains("No changes."), "{}", again.stdout);

    let destroyed = cx
        .run(&["destroy", "blueprints/a3-mega.toml", "--auto-approve"])
        .await
        .expect(0);
    assert!(
        destroyed
            .stderr
            .contains("Destroy complete! Resources: 73 destroyed."),
        "{}",
        destroyed.stderr
    );
    assert_eq!(
        everything(&cx).await,
        Vec::<String>::new(),
        "destroy must leave the simulator empty"
    );
    let state: Value =
        serde_json::from_slice(&std::fs::read(cx.path("state/a3mega.a3state.json")).unwrap())
            .unwrap();
    assert_eq!(state["resources"].as_object().unwrap().len(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a3_high_applies_four_gpu_vpcs() {
    let cx = TestContext::new().await;
    cx.unprotect("blueprints/a3-high.toml");
    cx.run(&["apply", "blueprints/a3-high.toml", "--auto-approve"])
        .await
        .expect(0);
    let all = everything(&cx).await;
    assert_eq!(
        all.iter()
            .filter(|r| r.starts_with("network/a3high-gpunet-"))
            .count(),
        4
    );
    let pool = get(
        &cx,
        &format!("/container/v1/projects/{P}/locations/{R}/clusters/a3high/nodePools/a3high"),
    )
    .await;
    assert_eq!(
        pool["config"]["accelerators"][0]["acceleratorType"],
        "nvidia-h100-80gb"
    );
    assert_eq!(
        pool["networkConfig"]["additionalNodeNetworkConfigs"]
            .as_array()
            .unwrap()
            .len(),
        4
    );
    cx.run(&["plan", "blueprints/a3-high.toml", "--detailed-exitcode"])
        .await
        .expect(0);
    cx.run(&["destroy", "blueprints/a3-high.toml", "--auto-approve"])
        .await
        .expect(0);
    assert!(everything(&cx).await.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn node_count_updates_in_place_and_a_tier_change_replaces_naming_the_field() {
    let cx = TestContext::new().await;
    cx.unprotect("blueprints/a3-mega.toml");
    cx.run(&["apply", "blueprints/a3-mega.toml", "--auto-approve"])
        .await
        .expect(0);
    let text = std::fs::read_to_string(cx.path("blueprints/a3-mega.toml")).unwrap();

    let resized = text.replace("nodes = 32", "nodes = 16");
    cx.write("blueprints/a3-mega.toml", &resized);
    let plan = cx
        .run(&["plan", "blueprints/a3-mega.toml", "--detailed-exitcode"])
        .await
        .expect(2);
    assert!(
        plan.stdout
            .contains("# node_pool.a3mega will be updated in-place"),
        "{}",
        plan.stdout
    );
    assert!(
        plan.stdout.contains("node_count = 32 -> 16"),
        "{}",
        plan.stdout
    );
    // Kueue's GPU quota follows the pool: 16 nodes × 8 GPUs.
    assert!(
        plan.stdout.contains(
            "~ object.spec.resourceGroups[0].flavors[0].resources[0].nominalQuota = 256 -> 128"
        ),
        "{}",
        plan.stdout
    );
    assert!(
        plan.stdout
            .contains("Plan: 0 to add, 2 to change, 0 to destroy."),
        "{}",
        plan.stdout
    );
    cx.run(&["apply", "blueprints/a3-mega.toml", "--auto-approve"])
        .await
        .expect(0);
    // GKE keeps `initialNodeCount`; the pool's nodes are what changed.
    let inventory = cx.sim.inventory();
    let nodes = inventory["kube"]["clusters"]
        [format!("projects/{P}/locations/{R}/clusters/a3mega")]["nodes"]
        .clone();
    let gpu_nodes = nodes
        .as_array()
        .unwrap()
        .iter()
        .filter(|n| n.as_str().unwrap().starts_with("gke-a3mega-a3mega-"))
        .count();
    assert_eq!(gpu_nodes, 16, "{nodes}");

    let retiered = resized.replace("tier = \"BASIC_SSD\"", "tier = \"BASIC_HDD\"");
    cx.write("blueprints/a3-mega.toml", &retiered);
    let plan = cx.run(&["plan", "blueprints/a3-mega.toml"]).await.expect(0);
    assert!(
        plan.stdout.contains("# filestore.shared must be replaced"),
        "{}",
        plan.stdout
    );
    assert!(
        plan.stdout
            .contains("tier = \"BASIC_SSD\" -> \"BASIC_HDD\" # forces replacement"),
        "{}",
        plan.stdout
    );
    // The Filestore volume and its claim name the instance's IP: they are replaced with it.
    assert!(
        plan.stdout
            .contains("# k8s.persistentvolume/-/a3mega-filestore must be replaced"),
        "{}",
        plan.stdout
    );
    assert!(
        plan.stdout
            .contains("Plan: 3 to add, 0 to change, 3 to destroy."),
        "{}",
        plan.stdout
    );
    cx.run(&["apply", "blueprints/a3-mega.toml", "--auto-approve"])
        .await
        .expect(0);
    let fs = get(
        &cx,
        &format!("/file/v1/projects/{P}/locations/us-central1-a/instances/a3mega-fs"),
    )
    .await;
    assert_eq!(fs["tier"], "BASIC_HDD");
    cx.run(&["plan", "blueprints/a3-mega.toml", "--detailed-exitcode"])
        .await
        .expect(0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn apply_converges_under_twenty_percent_transient_faults() {
    let mut faults = FaultConfig {
        seed: Some(11),
        ..Default::default()
    };
    for api in [
        "compute",
        "container",
        "file",
        "artifactregistry",
        "storage",
    ] {
        faults.transient.insert(
            api.into(),
            TransientFaults {
                rate: 0.2,
                kinds: vec![],
                methods: vec![],
            },
        );
    }
    let cx = TestContext::with(SimConfig {
        faults,
        ..SimConfig::default()
    })
    .await;
    let run = cx
        .run(&["apply", "blueprints/a3-mega.toml", "--auto-approve"])
        .await
        .expect(0);
    assert!(
        run.stderr.contains("retrying"),
        "faults were injected and retried: {}",
        run.stderr
    );
    cx.sim.set_faults(FaultConfig::default());
    assert_eq!(
        everything(&cx).await,
        expected_mega(),
        "no duplicates, nothing missing"
    );
    cx.run(&["plan", "blueprints/a3-mega.toml", "--detailed-exitcode"])
        .await
        .expect(0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_quota_error_fails_only_its_branch_and_state_stays_true() {
    let faults = FaultConfig {
        scripted: vec![ScriptedFault {
            kind: "file.instance".into(),
            verb: "create".into(),
            nth: 1,
            action: FaultAction::Named(NamedFault::QuotaExceeded),
        }],
        ..Default::default()
    };
    let cx = TestContext::with(SimConfig {
        faults,
        ..SimConfig::default()
    })
    .await;
    let run = cx
        .run(&["apply", "blueprints/a3-mega.toml", "--auto-approve"])
        .await
        .expect(1);
    assert!(
        run.stderr
            .contains("error: Failed to create `filestore.shared`"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.to_lowercase().contains("quota"),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("hint:"), "{}", run.stderr);
    assert!(run.stderr.contains("run `a3ctl apply"), "{}", run.stderr);
    let mut without_fs = expected_mega();
    without_fs.retain(|r| r != "filestore/a3mega-fs");
    assert_eq!(
        everything(&cx).await,
        without_fs,
        "every other branch finished"
    );
    let state: Value =
        serde_json::from_slice(&std::fs::read(cx.path("state/a3mega.a3state.json")).unwrap())
            .unwrap();
    assert_eq!(state["resources"].as_object().unwrap().len(), 70);
    assert!(state["pending"].as_array().unwrap().is_empty());
    // The quota fault fired once; the next apply finishes the job.
    let rerun = cx
        .run(&["apply", "blueprints/a3-mega.toml", "--auto-approve"])
        .await
        .expect(0);
    // The instance, then its volume and claim.
    assert!(rerun.stderr.contains("3 added"), "{}", rerun.stderr);
    assert_eq!(everything(&cx).await, expected_mega());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_apply_killed_at_any_moment_converges_on_the_next_run() {
    // Realistic latencies on a fast clock, so operations are in flight when the kill lands.
    let cx = TestContext::with(SimConfig::realistic(0.0002)).await;
    cx.unprotect("blueprints/a3-mega.toml");
    for delay_ms in [40u64, 90, 150, 260, 420] {
        let mut child = cx
            .command(&["apply", "blueprints/a3-mega.toml", "--auto-approve"])
            .spawn()
            .unwrap();
        tokio::time::sleep(std::time::Duration::from_millis(delay_ms)).await;
        let _ = child.start_kill(); // SIGKILL
        let _ = child.wait().await;
    }
    let mut converged = false;
    let mut failures = Vec::new();
    for _ in 0..3 {
        let run = cx
            .run(&["apply", "blueprints/a3-mega.toml", "--auto-approve"])
            .await;
        if run.code == Some(0) {
            converged = true;
            break;
        }
        failures.push(run.stderr);
    }
    assert!(
        converged,
        "apply converges after kills:\n{}",
        failures.join("\n---\n")
    );
    assert_eq!(
        everything(&cx).await,
        expected_mega(),
        "no duplicate and no leaked resource"
    );
    let state: Value =
        serde_json::from_slice(&std::fs::read(cx.path("state/a3mega.a3state.json")).unwrap())
            .unwrap();
    assert_eq!(state["resources"].as_object().unwrap().len(), 73);
    assert!(state["pending"].as_array().unwrap().is_empty());
    cx.run(&["plan", "blueprints/a3-mega.toml", "--detailed-exitcode"])
        .await
        .expect(0);
    cx.run(&["destroy", "blueprints/a3-mega.toml", "--auto-approve"])
        .await
        .expect(0);
    assert!(everything(&cx).await.is_empty(), "nothing leaked");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_concurrent_applies_on_one_state_exactly_one_proceeds() {
    // Realistic latencies: an apply of A3 High lasts long enough for the two to overlap.
    let cx = TestContext::with(SimConfig::realistic(0.0005)).await;
    let apply = || {
        cx.command(&["apply", "blueprints/a3-high.toml", "--auto-approve"])
            .output()
    };
    let (a, b) = tokio::join!(apply(), apply());
    let runs = [a.unwrap(), b.unwrap()];
    let codes: Vec<Option<i32>> = runs.iter().map(|r| r.status.code()).collect();
    let winners = codes.iter().filter(|c| **c == Some(0)).count();
    let stderrs: Vec<String> = runs
        .iter()
        .map(|r| String::from_utf8_lossy(&r.stderr).into_owned())
        .collect();
    assert_eq!(winners, 1, "exactly one proceeds: {codes:?}\n{stderrs:?}");
    let loser = &stderrs[codes.iter().position(|c| *c != Some(0)).unwrap()];
    assert!(
        loser.contains("is locked by") && loser.contains("a3ctl apply"),
        "{loser}"
    );
    assert!(loser.contains("lock id"), "{loser}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_saved_plan_is_applied_exactly_and_refused_once_stale() {
    let cx = TestContext::new().await;
    cx.run(&["plan", "blueprints/a3-high.toml", "--out", "high.plan"])
        .await
        .expect(0);
    cx.run(&["apply", "high.plan"]).await.expect(0);
    // The state moved on since that plan: applying it again is refused.
    let stale = cx.run(&["apply", "high.plan"]).await.expect(1);
    assert!(stale.stderr.contains("stale"), "{}", stale.stderr);
    cx.run(&[
        "plan",
        "blueprints/a3-high.toml",
        "--out",
        "again.plan",
        "--detailed-exitcode",
    ])
    .await
    .expect(0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_minimal_blueprint_applies_plans_nothing_and_destroys_everything() {
    let cx = TestContext::new().await;
    cx.unprotect("blueprints/minimal.toml");
    cx.run(&["apply", "blueprints/minimal.toml", "--auto-approve"])
        .await
        .expect(0);
    let all = everything(&cx).await;
    assert!(all.contains(&"cluster/a3mini".to_string()), "{all:?}");
    assert_eq!(
        all.iter()
            .filter(|r| r.starts_with("network/a3mini-gpunet-"))
            .count(),
        8
    );
    let pool = get(
        &cx,
        &format!("/container/v1/projects/{P}/locations/{R}/clusters/a3mini/nodePools/gpu-0"),
    )
    .await;
    assert_eq!(pool["config"]["machineType"], "a3-megagpu-8g");
    assert_eq!(pool["placementPolicy"]["type"], "COMPACT");
    cx.run(&["plan", "blueprints/minimal.toml", "--detailed-exitcode"])
        .await
        .expect(0);
    cx.run(&["destroy", "blueprints/minimal.toml", "--auto-approve"])
        .await
        .expect(0);
    assert!(everything(&cx).await.is_empty());
}
