//! A change of a cluster's GKE version or release channel is checked against GKE's offer before
//! anything changes (preflight reads the location's `getServerConfig`): a version the channel
//! does not offer, a minor downgrade and a move through a minor the channel does not offer are
//! refused with what to do, and no mutating request is made. An upgrade is planned and applied in
//! GKE's order: the control plane one minor at a time, then its node pools (whose versions follow
//! `[cluster] version`), each step recorded as it is reached, so a killed apply resumes.

use crate::common::{self, TestContext};
use a3ctl_sim::faults::{FaultConfig, TripWhen, Tripwire};
use serde_json::Value;
use std::time::Duration;

const HIGH: &str = "blueprints/a3-high.toml";

fn with_cluster(cx: &TestContext, channel: &str, version: &str) {
    let text = std::fs::read_to_string(cx.path(HIGH)).unwrap();
    cx.write("changed.toml", &with_versions(&text, channel, version));
}

/// The A3 High blueprint `text` with `[cluster]`'s channel and version set.
fn with_versions(text: &str, channel: &str, version: &str) -> String {
    let mut changed = text
        .replace(
            "release_channel = \"regular\"",
            &format!("release_channel = \"{channel}\""),
        )
        .replace("version = \"1.33\"", &format!("version = \"{version}\""));
    assert!(changed.contains(&format!("version = \"{version}\"")));
    if version.starts_with("1.34") {
        // A3 High's NCCL stack is not tested on 1.34 (validate refuses it unless forced, see
        // `an_untested_stack_is_refused_before_any_request`); these tests are about GKE's rules.
        changed = changed.replace(
            "stack = \"2026-01\"",
            "stack = \"2026-01\"\nforce_stack = true",
        );
    }
    changed
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_untested_stack_is_refused_before_any_request() {
    let cx = TestContext::new().await;
    let text = std::fs::read_to_string(cx.path(HIGH))
        .unwrap()
        .replace("version = \"1.33\"", "version = \"1.34\"");
    cx.write("changed.toml", &text);
    let before = cx.sim.request_total();
    let plan = cx.run(&["plan", "changed.toml"]).await.expect(1);
    assert!(
        plan.stderr
            .contains("Stack `2026-01` is not tested on GKE 1.34 for A3 High"),
        "{}",
        plan.stderr
    );
    assert!(plan.stderr.contains("changed.toml:"), "{}", plan.stderr);
    assert!(
        plan.stderr.contains("force_stack = true"),
        "{}",
        plan.stderr
    );
    assert_eq!(
        cx.sim.request_total(),
        before,
        "validation makes no request"
    );
}

async fn master_version(cx: &TestContext) -> String {
    let g = common::gcloud::Gcloud::in_project(&cx.sim, "my-project");
    let (ok, out, err) = g
        .run(&[
            "container",
            "clusters",
            "describe",
            "a3high",
            "--location=us-central1",
            "--format=value(currentMasterVersion)",
        ])
        .await;
    assert!(ok, "{err}");
    out.trim().to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_version_gke_would_refuse_is_refused_before_any_change() {
    let cx = TestContext::new().await;
    // The blueprint's state is what `changed.toml` plans against.
    std::fs::copy(cx.path(HIGH), cx.path("changed.toml")).unwrap();
    cx.run(&["apply", "changed.toml", "--auto-approve"])
        .await
        .expect(0);
    assert_eq!(master_version(&cx).await, "1.33.5-gke.1080000");

    // 1.34 is not in the REGULAR channel: named, with the channel that offers it.
    with_cluster(&cx, "regular", "1.34");
    let before = common::mutations(&cx);
    let plan = cx.run(&["plan", "changed.toml"]).await.expect(1);
    assert!(
        plan.stdout.contains(
            "  ✗ GKE version 1.34 (REGULAR channel, us-central1): need 1.34 offered by REGULAR, available 1.33.5-gke.1080000, 1.33.4-gke.1245000, 1.32.12-gke.1050000"
        ),
        "{}",
        plan.stdout
    );
    assert!(
        plan.stderr
            .contains("`release_channel = \"rapid\"` (1.34.1-gke.1829001)"),
        "{}",
        plan.stderr
    );
    let apply = cx
        .run(&["apply", "changed.toml", "--auto-approve"])
        .await
        .expect(1);
    assert!(
        apply.stderr.contains("Preflight failed"),
        "{}",
        apply.stderr
    );

    // A build of an earlier minor, asked for exactly: GKE does not move a control plane there.
    // (A minor pin below what runs is the channel having moved ahead: a note, see below.)
    with_cluster(&cx, "regular", "1.32.12-gke.1050000");
    let plan = cx.run(&["plan", "changed.toml"]).await.expect(1);
    assert!(
        plan.stdout.contains(
            "GKE does not downgrade a control plane to an earlier minor version (1.33 → 1.32)"
        ),
        "{}",
        plan.stdout
    );
    assert_eq!(
        common::mutations(&cx),
        before,
        "a refused plan made a change"
    );
    assert_eq!(master_version(&cx).await, "1.33.5-gke.1080000");

    // One minor up, in a channel that offers it: planned with its build, then applied.
    with_cluster(&cx, "rapid", "1.34");
    let plan = cx.run(&["plan", "changed.toml"]).await.expect(0);
    assert!(
        plan.stdout.contains(
            "  ✓ GKE version 1.34 (RAPID channel, us-central1): need 1.34 offered by RAPID, available 1.34.1-gke.1829001"
        ),
        "{}",
        plan.stdout
    );
    cx.run(&["apply", "changed.toml", "--auto-approve"])
        .await
        .expect(0);
    assert_eq!(master_version(&cx).await, "1.34.1-gke.1829001");
    cx.run(&["plan", "changed.toml", "--detailed-exitcode"])
        .await
        .expect(0);
}

/// `name version` of each node pool of the cluster, sorted.
async fn pool_versions(cx: &TestContext) -> Vec<String> {
    let g = common::gcloud::Gcloud::in_project(&cx.sim, "my-project");
    let (ok, out, err) = g
        .run(&[
            "container",
            "node-pools",
            "list",
            "--cluster=a3high",
            "--location=us-central1",
            "--format=value(name,version)",
        ])
        .await;
    assert!(ok, "{err}");
    let mut pools: Vec<String> = out
        .lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
        .collect();
    pools.sort();
    pools
}

/// `METHOD path` of every mutating GKE request so far, in order.
async fn gke_mutations(cx: &TestContext) -> Vec<String> {
    common::request_log(cx)
        .await
        .iter()
        .filter(|e| e["api"] == "container" && e["method"] != "GET")
        .map(|e| {
            let path = e["path"].as_str().unwrap();
            let short = path.rsplit("/clusters/").next().unwrap_or(path);
            format!("{} {short}", e["method"].as_str().unwrap())
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_move_through_a_minor_the_channel_does_not_offer_is_refused() {
    let cx = TestContext::new().await;
    with_cluster(&cx, "regular", "1.32");
    cx.run(&["apply", "changed.toml", "--auto-approve"])
        .await
        .expect(0);
    assert_eq!(master_version(&cx).await, "1.32.12-gke.1050000");
    // RAPID offers only 1.34 builds: the control plane cannot pass through 1.33 in it.
    with_cluster(&cx, "rapid", "1.34");
    let before = common::mutations(&cx);
    let plan = cx.run(&["plan", "changed.toml"]).await.expect(1);
    assert!(
        plan.stdout.contains(
            "GKE upgrades a control plane one minor version at a time, and the RAPID channel offers no 1.33 build to pass through from 1.32.12-gke.1050000"
        ),
        "{}",
        plan.stdout
    );
    assert!(
        plan.stderr
            .contains("choose a release channel that offers 1.33"),
        "{}",
        plan.stderr
    );
    assert_eq!(common::mutations(&cx), before);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_one_minor_upgrade_moves_the_control_plane_then_its_pools() {
    let cx = TestContext::new().await;
    std::fs::copy(cx.path(HIGH), cx.path("changed.toml")).unwrap();
    cx.run(&["apply", "changed.toml", "--auto-approve"])
        .await
        .expect(0);
    assert_eq!(
        pool_versions(&cx).await,
        ["a3high 1.33.5-gke.1080000", "system 1.33.5-gke.1080000"]
    );
    let applied = gke_mutations(&cx).await.len();

    with_cluster(&cx, "rapid", "1.34");
    let plan = cx.run(&["plan", "changed.toml"]).await.expect(0);
    for line in [
        "2026-01 (GPUDirect-TCPX, not tested on GKE 1.34, forced)",
        "Upgrade order:",
        "  1. cluster.main: control plane 1.33.5-gke.1080000 → 1.34 (the blueprint's `[cluster] version`)",
        "node_pool.a3high: nodes 1.33.5-gke.1080000 → 1.34 (after the control plane: a node pool is never newer than it)",
        "node_pool.system: nodes 1.33.5-gke.1080000 → 1.34",
        "  ✓ GKE version 1.34 of node_pool.a3high: need 1.34 within two minors below the control plane, available control plane 1.34.1-gke.1829001",
    ] {
        assert!(plan.stdout.contains(line), "{line}\n{}", plan.stdout);
    }
    let json = cx.run(&["plan", "changed.toml", "--json"]).await.expect(0);
    let json: Value = serde_json::from_str(&json.stdout).unwrap();
    assert_eq!(
        json["upgrade_order"].as_array().map(Vec::len),
        Some(3),
        "{json}"
    );

    cx.run(&["apply", "changed.toml", "--auto-approve"])
        .await
        .expect(0);
    assert_eq!(master_version(&cx).await, "1.34.1-gke.1829001");
    assert_eq!(
        pool_versions(&cx).await,
        ["a3high 1.34.1-gke.1829001", "system 1.34.1-gke.1829001"]
    );
    // The channel, then the control plane, then the pools, one operation at a time.
    let upgrade = gke_mutations(&cx).await.split_off(applied);
    assert_eq!(upgrade.len(), 4, "{upgrade:?}");
    assert_eq!(upgrade[..2], ["PUT a3high", "PUT a3high"], "{upgrade:?}");
    let mut pools = upgrade[2..].to_vec();
    pools.sort();
    assert_eq!(
        pools,
        ["PUT a3high/nodePools/a3high", "PUT a3high/nodePools/system"]
    );
    cx.run(&["plan", "changed.toml", "--detailed-exitcode"])
        .await
        .expect(0);

    // Pinned back to 1.33: a3ctl's own upgrade is what moved it (state says so), not the channel
    // or GKE's node auto-upgrade (the GPU pool has it off), and nothing moves back down.
    with_cluster(&cx, "rapid", "1.33");
    let back = cx
        .run(&["plan", "changed.toml", "--detailed-exitcode"])
        .await
        .expect(0);
    for line in [
        "Note: cluster.main runs 1.34.1-gke.1829001, ahead of the blueprint's version = \"1.33\": a3ctl itself upgraded it in an earlier apply (state records version = \"1.34\"), and GKE does not move a control plane back down a minor version. Not a change; set version = \"1.34\" to pin what runs.",
        "Note: node_pool.a3high runs 1.34.1-gke.1829001, ahead of the blueprint's version = \"1.33\": a3ctl itself upgraded it in an earlier apply (state records version = \"1.34\"), and a3ctl does not downgrade a node pool.",
    ] {
        assert!(back.stdout.contains(line), "{line}\n{}", back.stdout);
    }
    assert!(
        !back.stdout.contains("release channel upgraded"),
        "{}",
        back.stdout
    );
    assert!(
        !back.stdout.contains("auto-upgrade moved"),
        "{}",
        back.stdout
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_two_minor_upgrade_is_two_control_plane_steps_and_resumes_after_a_kill() {
    let cx = TestContext::new().await;
    with_cluster(&cx, "stable", "1.31");
    cx.run(&["apply", "changed.toml", "--auto-approve"])
        .await
        .expect(0);
    assert_eq!(master_version(&cx).await, "1.31.14-gke.1243000");
    let applied = gke_mutations(&cx).await.len();

    with_cluster(&cx, "regular", "1.33");
    let plan = cx.run(&["plan", "changed.toml"]).await.expect(0);
    for line in [
        "  1. cluster.main: control plane 1.31.14-gke.1243000 → 1.32 (GKE upgrades a control plane one minor version at a time)",
        "  2. cluster.main: control plane 1.32 → 1.33 (the blueprint's `[cluster] version`)",
        "need 1.33 offered by REGULAR, available 1.32.12-gke.1050000 then 1.33.5-gke.1080000 (one minor at a time)",
    ] {
        assert!(plan.stdout.contains(line), "{line}\n{}", plan.stdout);
    }

    // The third cluster update (channel, 1.32, then 1.33) is made and its answer lost: the
    // process dies with the control plane on its way to 1.33.
    cx.sim.set_faults(FaultConfig {
        tripwires: vec![Tripwire {
            api: "container".into(),
            method: Some("PUT".into()),
            path: Some("/clusters/a3high".into()),
            nth: 3,
            when: TripWhen::After,
        }],
        ..Default::default()
    });
    let mut child = cx
        .command(&["apply", "changed.toml", "--auto-approve"])
        .spawn()
        .expect("a3ctl starts");
    tokio::time::timeout(Duration::from_secs(120), cx.sim.wait_tripped())
        .await
        .expect("the apply reaches the last control-plane step");
    child.start_kill().expect("SIGKILL");
    let _ = child.wait().await;
    cx.sim.set_faults(FaultConfig::default());
    // State holds the step it saw through: the control plane reached 1.32.
    let state: Value = serde_json::from_str(
        &std::fs::read_to_string(cx.path("state/a3high.a3state.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(
        state["resources"]["cluster.main"]["spec"]["version"],
        "1.32"
    );
    assert_eq!(
        state["resources"]["cluster.main"]["spec"]["release_channel"],
        "REGULAR"
    );

    // The next apply finishes the upgrade without asking for a step twice.
    cx.run(&["apply", "changed.toml", "--auto-approve"])
        .await
        .expect(0);
    assert_eq!(master_version(&cx).await, "1.33.5-gke.1080000");
    assert_eq!(
        pool_versions(&cx).await,
        ["a3high 1.33.5-gke.1080000", "system 1.33.5-gke.1080000"]
    );
    // The log holds answered requests: the channel and 1.32 steps. The 1.33 step was made by the
    // killed run (held unanswered by the tripwire), and the resumed run asked for no step again.
    let upgrade = gke_mutations(&cx).await.split_off(applied);
    let cluster_updates = upgrade.iter().filter(|m| *m == "PUT a3high").count();
    assert_eq!(cluster_updates, 2, "{upgrade:?}");
    assert_eq!(upgrade.len(), 4, "and one upgrade per pool: {upgrade:?}");
    cx.run(&["plan", "changed.toml", "--detailed-exitcode"])
        .await
        .expect(0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_control_plane_the_channel_moved_ahead_is_noted_not_planned() {
    let cx = TestContext::new().await;
    with_cluster(&cx, "regular", "1.32");
    cx.run(&["apply", "changed.toml", "--auto-approve"])
        .await
        .expect(0);
    // The channel's upgrade (here done with gcloud, as GKE's auto-upgrade would) moves the
    // control plane a minor ahead of the blueprint's pin.
    let g = common::gcloud::Gcloud::in_project(&cx.sim, "my-project");
    let (ok, _, err) = g
        .run(&[
            "container",
            "clusters",
            "upgrade",
            "a3high",
            "--master",
            "--cluster-version=1.33",
            "--location=us-central1",
            "--quiet",
        ])
        .await;
    assert!(ok, "{err}");
    assert_eq!(master_version(&cx).await, "1.33.5-gke.1080000");

    // Not a change (GKE would not move it back), and not drift: a note says what happened.
    let plan = cx
        .run(&["plan", "changed.toml", "--detailed-exitcode"])
        .await
        .expect(0);
    assert!(
        plan.stdout.contains(
            "Note: cluster.main runs 1.33.5-gke.1080000, ahead of the blueprint's version = \"1.32\": its release channel upgraded it"
        ),
        "{}",
        plan.stdout
    );
    assert!(
        plan.stdout
            .contains("set version = \"1.33\" to pin what runs"),
        "{}",
        plan.stdout
    );
    assert!(!plan.stdout.contains("~ version"), "{}", plan.stdout);
    assert!(!plan.stdout.contains("has changed"), "{}", plan.stdout);
    let json = cx.run(&["plan", "changed.toml", "--json"]).await.expect(0);
    let json: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    assert_eq!(json["notes"].as_array().map(Vec::len), Some(1), "{json}");

    // Pinned to what runs: nothing to note; the pools, which follow the pin, catch up with the
    // control plane (gcloud moved only the control plane).
    with_cluster(&cx, "regular", "1.33");
    let plan = cx
        .run(&["plan", "changed.toml", "--detailed-exitcode"])
        .await
        .expect(2);
    assert!(!plan.stdout.contains("Note:"), "{}", plan.stdout);
    assert!(!plan.stdout.contains("cluster.main:"), "{}", plan.stdout);
    assert!(
        plan.stdout
            .contains("node_pool.a3high: nodes 1.32.12-gke.1050000 → 1.33"),
        "{}",
        plan.stdout
    );
    assert!(
        plan.stdout
            .contains("Plan: 0 to add, 2 to change, 0 to destroy."),
        "{}",
        plan.stdout
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stack_bump_with_an_upgrade_rolls_the_installer_after_the_pools() {
    let cx = TestContext::new().await;
    const MEGA: &str = "blueprints/a3-mega.toml";
    let text = std::fs::read_to_string(cx.path(MEGA))
        .unwrap()
        .replace("nodes = 32", "nodes = 4")
        .replace("stack = \"2026-01\"", "stack = \"2025-11\"");
    cx.write("mega.toml", &text);
    cx.run(&["apply", "mega.toml", "--auto-approve"])
        .await
        .expect(0);
    cx.run(&["verify", "mega.toml"]).await.expect(0);
    let kubectl = common::kubectl::Kubectl::for_cluster(&cx, "a3mega").await;
    // The installer DaemonSet's plugin image, and on how many nodes its current template runs
    // (the simulator computes DaemonSet status; it makes no DaemonSet pods).
    let installer = || async {
        let ds = kubectl
            .items(&[
                "daemonsets",
                "-n",
                "kube-system",
                "--field-selector",
                "metadata.name=nccl-tcpxo-installer",
            ])
            .await;
        let ds = ds.first().cloned().expect("the installer DaemonSet");
        let image = ds["spec"]["template"]["spec"]["initContainers"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|c| c["image"].as_str())
            .find(|i| i.contains("nccl-plugin"))
            .unwrap_or_default()
            .to_string();
        (image, ds["status"]["updatedNumberScheduled"].as_u64())
    };
    assert_eq!(
        installer().await,
        (
            "us-docker.pkg.dev/gce-ai-infra/gpudirect-tcpxo/nccl-plugin-gpudirecttcpx-dev:v1.0.14"
                .to_string(),
            Some(4)
        )
    );
    let log_len = |cx: &TestContext| cx.sim.request_total();
    let before = log_len(&cx);

    // GKE 1.32 → 1.33 and the stack 2025-11 → 2026-01 in one plan.
    let bumped = text
        .replace("version = \"1.32\"", "version = \"1.33\"")
        .replace("stack = \"2025-11\"", "stack = \"2026-01\"");
    cx.write("mega.toml", &bumped);
    let plan = cx.run(&["plan", "mega.toml"]).await.expect(0);
    let order = plan
        .stdout
        .split("Upgrade order:")
        .nth(1)
        .and_then(|rest| rest.split("\n\n").next())
        .unwrap_or_else(|| panic!("{}", plan.stdout))
        .to_string();
    let position = |what: &str| {
        order
            .find(what)
            .unwrap_or_else(|| panic!("{what} not in the order:{order}"))
    };
    assert!(position("cluster.main: control plane") < position("node_pool.a3mega: nodes"));
    assert!(
        position("node_pool.a3mega: nodes")
            < position("nccl-tcpxo-installer: updated on the upgraded nodes")
    );

    cx.run(&["apply", "mega.toml", "--auto-approve"])
        .await
        .expect(0);
    // The installer's new template reached the API server after the last pool upgrade was
    // asked for (and waited on).
    let log = common::request_log(&cx).await;
    let entries = &log[before..];
    let last_pool = entries
        .iter()
        .rposition(|e| e["method"] == "PUT" && e["path"].as_str().unwrap().contains("/nodePools/"))
        .expect("the pools were upgraded");
    let changed = entries
        .iter()
        .position(|e| {
            e["method"] == "PATCH"
                && e["path"]
                    .as_str()
                    .unwrap()
                    .ends_with("/daemonsets/nccl-tcpxo-installer")
        })
        .expect("the installer was changed");
    assert!(last_pool < changed, "{last_pool} < {changed}");
    assert_eq!(
        installer().await.0,
        "us-docker.pkg.dev/gce-ai-infra/gpudirect-tcpxo/nccl-plugin-gpudirecttcpx-dev:v1.0.15"
    );
    // Nodes on the new version, the installer rolled out everywhere, the queue active.
    let verify = cx.run(&["verify", "mega.toml"]).await.expect(0);
    assert!(
        verify.stdout.contains("on GKE 1.33.5-gke.1080000"),
        "{}",
        verify.stdout
    );
    cx.run(&["plan", "mega.toml", "--detailed-exitcode"])
        .await
        .expect(0);
}

/// What an upgrade apply looked like from the cluster, sampled at every 20-second step of the
/// manual clock until the apply ended.
struct Watched {
    /// The fewest nodes of the GPU pool that were Ready and schedulable at once.
    fewest: usize,
    /// The most nodes of the GPU pool at once (surge and green nodes included).
    most: usize,
    /// A sample saw nodes of the old and the new version together.
    mixed: bool,
}

/// Applies `changed.toml` in the background, moving the manual clock 20 simulated seconds at a
/// time, and samples the GPU pool's nodes and Kueue's ClusterQueue at every step: the queue must
/// stay active throughout.
async fn apply_watching(cx: &TestContext) -> Watched {
    let kubectl = common::kubectl::Kubectl::for_cluster(cx, "a3high").await;
    let mut child = cx
        .command(&["apply", "changed.toml", "--auto-approve"])
        .spawn()
        .expect("a3ctl starts");
    let mut watched = Watched {
        fewest: usize::MAX,
        most: 0,
        mixed: false,
    };
    let mut samples = 0;
    let status = loop {
        if let Some(status) = child.try_wait().expect("the apply's status") {
            break status;
        }
        samples += 1;
        assert!(samples < 2000, "the upgrade did not end");
        let nodes = kubectl
            .items(&["nodes", "-l", "cloud.google.com/gke-nodepool=a3high"])
            .await;
        let serving = nodes
            .iter()
            .filter(|n| {
                n["spec"]["unschedulable"] != true
                    && n["status"]["conditions"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .any(|c| c["type"] == "Ready" && c["status"] == "True")
            })
            .count();
        watched.fewest = watched.fewest.min(serving);
        watched.most = watched.most.max(nodes.len());
        let mut versions: Vec<&str> = nodes
            .iter()
            .filter_map(|n| n["status"]["nodeInfo"]["kubeletVersion"].as_str())
            .collect();
        versions.sort();
        versions.dedup();
        watched.mixed |= versions.len() > 1;
        let queue = kubectl
            .items(&["clusterqueues.kueue.x-k8s.io"])
            .await
            .into_iter()
            .next()
            .expect("the ClusterQueue");
        let active = queue["status"]["conditions"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|c| c["type"] == "Active" && c["status"] == "True");
        assert!(active, "the queue stopped admitting: {queue}");
        cx.sim.advance_secs(20.0);
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert!(status.success(), "the apply failed");
    watched
}

/// A test world where a new VM takes 60 simulated seconds to come up and a node 30 to drain: a
/// batch spans several of [`apply_watching`]'s steps.
async fn slow_nodes() -> TestContext {
    use a3ctl_sim::SimConfig;
    use a3ctl_sim::latency::{LatencyProfile, Span};
    let mut latency = LatencyProfile::zero();
    for (key, secs) in [
        ("container.nodePool.upgrade.create", 60.0),
        ("container.nodePool.upgrade.drain", 30.0),
    ] {
        latency.spans.insert(key.to_string(), Span::Fixed(secs));
    }
    TestContext::with(SimConfig {
        latency,
        ..SimConfig::default()
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_surge_upgrade_replaces_nodes_in_batches_with_the_queue_active_throughout() {
    let cx = slow_nodes().await;
    std::fs::copy(cx.path(HIGH), cx.path("changed.toml")).unwrap();
    cx.run(&["apply", "changed.toml", "--auto-approve"])
        .await
        .expect(0);
    with_cluster(&cx, "rapid", "1.34");
    let watched = apply_watching(&cx).await;
    // The on-demand pool's default, GKE's surge (one new node, none taken away first): never
    // fewer than 4 nodes serving, never more than one extra, one batch at a time.
    assert_eq!(watched.fewest, 4);
    assert_eq!(watched.most, 5);
    assert!(watched.mixed, "no sample saw old and new nodes together");
    assert_eq!(
        pool_versions(&cx).await,
        ["a3high 1.34.1-gke.1829001", "system 1.34.1-gke.1829001"]
    );
    cx.run(&["verify", "changed.toml"]).await.expect(0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_blue_green_upgrade_keeps_every_node_serving_until_the_green_pool_is_up() {
    let cx = slow_nodes().await;
    let text = std::fs::read_to_string(cx.path(HIGH)).unwrap().replace(
        "placement = \"compact\"\n",
        "placement = \"compact\"\n\n[gpu_pool.upgrade]\nstrategy = \"blue-green\"\nbatch_nodes = 2\nbatch_soak = \"60s\"\npool_soak = \"120s\"\n",
    );
    assert!(text.contains("blue-green"));
    cx.write("changed.toml", &text);
    cx.run(&["apply", "changed.toml", "--auto-approve"])
        .await
        .expect(0);
    cx.write("changed.toml", &with_versions(&text, "rapid", "1.34"));
    let watched = apply_watching(&cx).await;
    // The green pool (4 new nodes) came up next to the blue one before any blue node drained.
    assert_eq!(watched.most, 8);
    assert_eq!(watched.fewest, 4);
    assert!(watched.mixed);
    assert_eq!(
        pool_versions(&cx).await,
        ["a3high 1.34.1-gke.1829001", "system 1.34.1-gke.1829001"]
    );
    cx.run(&["verify", "changed.toml"]).await.expect(0);
}

/// The auto-upgrade case at a start time of day every three hours, so the suite passes whatever
/// hour it runs at: simulated time starts at `hour`:00 UTC on 2026-03-02 (a Monday).
macro_rules! exclusion_then_window_at {
    ($($name:ident: $hour:expr,)*) => {$(
        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn $name() {
            exclusion_then_window($hour).await;
        }
    )*};
}

exclusion_then_window_at! {
    the_default_exclusion_holds_off_an_auto_upgrade_that_a_window_then_lets_through_at_00h: 0,
    the_default_exclusion_holds_off_an_auto_upgrade_that_a_window_then_lets_through_at_03h: 3,
    the_default_exclusion_holds_off_an_auto_upgrade_that_a_window_then_lets_through_at_06h: 6,
    the_default_exclusion_holds_off_an_auto_upgrade_that_a_window_then_lets_through_at_09h: 9,
    the_default_exclusion_holds_off_an_auto_upgrade_that_a_window_then_lets_through_at_12h: 12,
    the_default_exclusion_holds_off_an_auto_upgrade_that_a_window_then_lets_through_at_15h: 15,
    the_default_exclusion_holds_off_an_auto_upgrade_that_a_window_then_lets_through_at_18h: 18,
    the_default_exclusion_holds_off_an_auto_upgrade_that_a_window_then_lets_through_at_21h: 21,
}

async fn exclusion_then_window(hour: u32) {
    use a3ctl_sim::{SimConfig, Start, WorldSpec};
    use chrono::TimeZone;
    // REGULAR publishes 1.33.6 (its default from day 2) and 1.34 (its default from day 10).
    // a3ctl reads the simulator's clock: an exclusion without a start in the blueprint starts
    // when a3ctl applies it, as gcloud's do.
    let world = WorldSpec::parse(
        r#"
[gke]
[[gke.releases]]
channel = "REGULAR"
version = "1.33.6-gke.1100000"
valid_after_secs = 86400
default_after_secs = 172800
[[gke.releases]]
channel = "REGULAR"
version = "1.34.1-gke.1829001"
valid_after_secs = 777600
default_after_secs = 864000
"#,
        "test world",
    )
    .expect("a valid world");
    let start = chrono::Utc
        .with_ymd_and_hms(2026, 3, 2, hour, 0, 0)
        .single()
        .expect("a valid start");
    let cx = TestContext::with(SimConfig {
        world,
        start: Start::At(start),
        ..SimConfig::default()
    })
    .await;
    const DAY: f64 = 86_400.0;
    let g = common::gcloud::Gcloud::in_project(&cx.sim, "my-project");
    let operations = || async {
        let (ok, out, err) = g
            .run(&[
                "container",
                "operations",
                "list",
                "--location=us-central1",
                "--format=value(operationType,targetLink.basename())",
            ])
            .await;
        assert!(ok, "{err}");
        out.lines()
            .filter(|l| l.starts_with("UPGRADE_"))
            .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
            .collect::<Vec<_>>()
    };
    std::fs::copy(cx.path(HIGH), cx.path("changed.toml")).unwrap();
    cx.run(&["apply", "changed.toml", "--auto-approve"])
        .await
        .expect(0);

    // Twelve days on, 1.34 is REGULAR's target, but the default exclusion (no minor or node
    // upgrades until end of support) let only the control plane's patch through, and no node
    // moved.
    cx.sim.advance_secs(12.0 * DAY);
    assert_eq!(master_version(&cx).await, "1.33.6-gke.1100000");
    assert_eq!(operations().await, ["UPGRADE_MASTER a3high"]);
    assert_eq!(
        pool_versions(&cx).await,
        ["a3high 1.33.5-gke.1080000", "system 1.33.5-gke.1080000"]
    );
    cx.run(&["plan", "changed.toml", "--detailed-exitcode"])
        .await
        .expect(0);

    // The blueprint lifts the exclusion and allows 00:00–12:00 UTC each day: within a day (the
    // window may already be open, or open only hours later) the control plane goes to 1.34, then the pool that auto-upgrades (the system pool; a3ctl
    // creates GPU pools without auto-upgrade), in the same window.
    let text = std::fs::read_to_string(cx.path("changed.toml")).unwrap();
    let lifted = text.replace(
        "\n[system_pool]",
        "\n[cluster.maintenance]\ndefault_exclusion = false\n\n[cluster.maintenance.window]\nstart = 2026-01-01T00:00:00Z\nduration = \"12h\"\nrecurrence = \"FREQ=DAILY\"\n\n[system_pool]",
    );
    cx.write("changed.toml", &lifted);
    cx.run(&["apply", "changed.toml", "--auto-approve"])
        .await
        .expect(0);
    cx.sim.advance_secs(DAY);
    assert_eq!(master_version(&cx).await, "1.34.1-gke.1829001");
    assert_eq!(
        pool_versions(&cx).await,
        ["a3high 1.33.5-gke.1080000", "system 1.34.1-gke.1829001"]
    );
    assert_eq!(
        operations().await,
        [
            "UPGRADE_MASTER a3high",
            "UPGRADE_MASTER a3high",
            "UPGRADE_NODES system"
        ]
    );
    // GKE moved what the blueprint pins to "1.33" ahead: noted, not a change, not drift.
    let plan = cx
        .run(&["plan", "changed.toml", "--detailed-exitcode"])
        .await
        .expect(0);
    for note in [
        "Note: cluster.main runs 1.34.1-gke.1829001, ahead of the blueprint's version = \"1.33\"",
        "Note: node_pool.system runs 1.34.1-gke.1829001, ahead of the blueprint's version = \"1.33\": GKE's node auto-upgrade moved it",
    ] {
        assert!(plan.stdout.contains(note), "{note}\n{}", plan.stdout);
    }
}
