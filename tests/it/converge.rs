//! Convergence through the real binary where the chaos trials drop futures: a destroy killed
//! with SIGKILL while the GKE cluster's delete runs, a cluster deleted with gcloud behind a3ctl's
//! back, and a system pool that fails on quota (Kueue's controller has nowhere to run). Each
//! must end, name what failed, and be finished by running a3ctl again, leaving nothing behind.

use crate::common;
use crate::trials as chaos;

use a3ctl_sim::SimConfig;
use a3ctl_sim::faults::{FaultAction, FaultConfig, NamedFault, ScriptedFault, TripWhen, Tripwire};
use common::gcloud::Gcloud;
use common::{Run, TestContext};
use serde_json::Value;
use std::time::Duration;

const PROJECT: &str = "my-project";
const REGION: &str = "us-central1";
const HIGH: &str = "blueprints/a3-high.toml";

/// A run that takes longer than this has hung (the simulator's operations take milliseconds).
const HANG: Duration = Duration::from_secs(120);

async fn run(cx: &TestContext, args: &[&str]) -> Run {
    tokio::time::timeout(HANG, cx.run(args))
        .await
        .unwrap_or_else(|_| panic!("`a3ctl {}` hung", args.join(" ")))
}

fn state(cx: &TestContext, name: &str) -> Value {
    let path = cx.path(&format!("state/{name}.a3state.json"));
    serde_json::from_slice(&std::fs::read(path).expect("state file")).expect("state JSON")
}

async fn live(cx: &TestContext) -> Vec<String> {
    chaos::inventory(&cx.sim, PROJECT, REGION).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_destroy_killed_during_the_cluster_delete_is_finished_by_the_next_run() {
    // Realistic latencies on a fast clock: the cluster is still being deleted (STOPPING) when
    // the next commands look at it, or already gone; both must work.
    let cx = TestContext::with(SimConfig::realistic(0.0005)).await;
    cx.unprotect(HIGH);
    run(&cx, &["apply", HIGH, "--auto-approve"]).await.expect(0);
    assert!(live(&cx).await.contains(&"cluster/a3high".to_string()));

    // The cluster's DELETE is handled, then its answer held: the process waits for it.
    cx.sim.set_faults(FaultConfig {
        tripwires: vec![Tripwire {
            api: "container".into(),
            method: Some("DELETE".into()),
            path: Some("/clusters/".into()),
            nth: 1,
            when: TripWhen::After,
        }],
        ..Default::default()
    });
    let mut child = cx
        .command(&["destroy", HIGH, "--auto-approve"])
        .spawn()
        .expect("a3ctl starts");
    tokio::time::timeout(HANG, cx.sim.wait_tripped())
        .await
        .expect("the destroy reaches the cluster's delete");
    child.start_kill().expect("SIGKILL");
    let _ = child.wait().await;
    cx.sim.set_faults(FaultConfig::default());
    let recorded = state(&cx, "a3high");
    assert!(
        recorded["resources"]
            .as_object()
            .unwrap()
            .keys()
            .any(|k| k.starts_with("k8s.")),
        "the kill left the cluster's objects recorded: the case under test"
    );

    // Plan never needs the endpoint of a cluster that is going or gone.
    let plan = run(&cx, &["plan", HIGH]).await;
    assert_eq!(plan.code, Some(0), "{}", plan.stderr);
    assert!(!plan.stderr.contains("endpoint"), "{}", plan.stderr);

    let destroy = run(&cx, &["destroy", HIGH, "--auto-approve"]).await;
    assert_eq!(destroy.code, Some(0), "{}", destroy.stderr);
    assert_eq!(live(&cx).await, Vec::<String>::new(), "nothing is left");
    let after = state(&cx, "a3high");
    assert!(after["resources"].as_object().unwrap().is_empty());
    assert!(after["pending"].as_array().unwrap().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cluster_deleted_with_gcloud_is_planned_with_its_objects_and_destroy_finishes() {
    let cx = TestContext::new().await;
    run(&cx, &["apply", HIGH, "--auto-approve"]).await.expect(0);
    let gcloud = Gcloud::in_project(&cx.sim, PROJECT);
    gcloud
        .ok(&[
            "container",
            "clusters",
            "delete",
            "a3high",
            "--location",
            REGION,
            "--quiet",
        ])
        .await;
    assert!(!live(&cx).await.contains(&"cluster/a3high".to_string()));

    // The cluster, its pools and every object in it are planned again; no endpoint is needed.
    let plan = run(&cx, &["plan", HIGH, "--detailed-exitcode"]).await;
    assert_eq!(plan.code, Some(2), "{}\n{}", plan.stdout, plan.stderr);
    assert!(
        plan.stdout.contains("# cluster.main will be created"),
        "{}",
        plan.stdout
    );
    assert!(
        plan.stdout
            .contains("# k8s.daemonset/kube-system/nccl-tcpx-installer will be created"),
        "{}",
        plan.stdout
    );

    // Destroy without re-creating: what is left goes, the cluster's records are forgotten.
    let destroy = run(&cx, &["destroy", HIGH, "--auto-approve"]).await;
    assert_eq!(destroy.code, Some(0), "{}", destroy.stderr);
    assert_eq!(live(&cx).await, Vec::<String>::new());
    assert!(
        state(&cx, "a3high")["resources"]
            .as_object()
            .unwrap()
            .is_empty()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_system_pool_refused_on_quota_fails_kueue_at_once_and_the_next_apply_finishes() {
    // Both node pool creates fail once on quota (their order on the cluster's lane is the
    // schedule's): no node anywhere can run Kueue's controller.
    let cx = TestContext::with(SimConfig {
        faults: FaultConfig {
            scripted: [1, 2]
                .into_iter()
                .map(|nth| ScriptedFault {
                    kind: "container.nodePool".into(),
                    verb: "create".into(),
                    nth,
                    action: FaultAction::Named(NamedFault::QuotaExceeded),
                })
                .collect(),
            ..Default::default()
        },
        ..SimConfig::default()
    })
    .await;
    let first = run(&cx, &["apply", HIGH, "--auto-approve"]).await.expect(1);
    assert!(
        first
            .stderr
            .contains("error: Failed to create `node_pool.system`"),
        "{}",
        first.stderr
    );
    assert!(
        first.stderr.contains(&format!(
            "Fix the cause above, then run `a3ctl apply {HIGH}` to continue."
        )),
        "{}",
        first.stderr
    );
    // Kueue is not installed to wait for a controller that cannot be scheduled.
    let skipped = first
        .stderr
        .lines()
        .find(|l| l.starts_with("Skipped because of these failures:"))
        .unwrap_or_else(|| panic!("no skipped line:\n{}", first.stderr));
    assert!(skipped.contains("`k8s.release/-/kueue`"), "{skipped}");
    let recorded = state(&cx, "a3high");
    assert!(recorded["resources"].get("k8s.release/-/kueue").is_none());
    assert!(recorded["pending"].as_array().unwrap().is_empty());

    // The quota is fixed (the faults fired once): the next apply creates the pools, then Kueue.
    let second = run(&cx, &["apply", HIGH, "--auto-approve"]).await;
    assert_eq!(second.code, Some(0), "{}", second.stderr);
    let recorded = state(&cx, "a3high");
    for addr in [
        "node_pool.system",
        "node_pool.a3high",
        "k8s.release/-/kueue",
        "k8s.clusterqueue/-/a3-queue",
    ] {
        assert!(recorded["resources"].get(addr).is_some(), "{addr} recorded");
    }
    run(&cx, &["plan", HIGH, "--detailed-exitcode"])
        .await
        .expect(0);
}

/// Filestore instance DELETE requests the simulator has answered so far.
fn filestore_deletes(cx: &TestContext) -> u64 {
    cx.sim
        .request_counts()
        .iter()
        .filter(|(endpoint, _)| {
            endpoint.starts_with("DELETE /file/") && endpoint.contains("/instances/")
        })
        .map(|(_, n)| n)
        .sum()
}

/// Runs `a3ctl ARGS` on the manual clock, which stands still until the run has sent a Filestore
/// delete of its own (more than `before`); from then on simulated time moves `step` seconds every
/// 20 ms of real time. So the run always meets the instance still being deleted, however slow
/// the machine.
async fn run_moving_time_after_a_delete(
    cx: &TestContext,
    args: &[&str],
    before: u64,
    step: f64,
) -> Run {
    let ticker = async {
        loop {
            tokio::time::sleep(Duration::from_millis(20)).await;
            if filestore_deletes(cx) > before {
                cx.sim.advance_secs(step);
            }
        }
    };
    tokio::select! {
        run = run(cx, args) => run,
        _ = ticker => unreachable!("the ticker never ends"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_destroy_killed_after_filestore_took_its_delete_waits_for_it_next_time() {
    // Manual clock: the Filestore delete (made 6,000 simulated seconds long) runs until the test
    // moves time, which it does only once the next destroy has sent its own delete. So that
    // destroy always finds the instance DELETING, and Filestore refuses a second delete while the
    // first runs (FAILED_PRECONDITION, as the cargo bench --bench chaos trials found at realistic
    // latency).
    let mut faults = FaultConfig::default();
    faults
        .extra_latency
        .insert("file.instance.delete".into(), 6000.0);
    let cx = TestContext::with(SimConfig {
        faults: faults.clone(),
        ..SimConfig::default()
    })
    .await;
    const MEGA: &str = "blueprints/a3-mega.toml";
    cx.unprotect(MEGA);
    run(&cx, &["apply", MEGA, "--auto-approve"]).await.expect(0);

    // The instance's DELETE is handled (the delete runs), its answer held; the process dies.
    cx.sim.set_faults(FaultConfig {
        tripwires: vec![Tripwire {
            api: "file".into(),
            method: Some("DELETE".into()),
            path: Some("/instances/".into()),
            nth: 1,
            when: TripWhen::After,
        }],
        ..faults.clone()
    });
    let mut child = cx
        .command(&["destroy", MEGA, "--auto-approve"])
        .spawn()
        .expect("a3ctl starts");
    tokio::time::timeout(HANG, cx.sim.wait_tripped())
        .await
        .expect("the destroy reaches the Filestore delete");
    child.start_kill().expect("SIGKILL");
    let _ = child.wait().await;
    cx.sim.set_faults(faults);
    let instance = chaos::inventory(&cx.sim, PROJECT, REGION).await;
    assert!(instance.contains(&"filestore/a3mega-fs".to_string()));

    // The next destroy waits for the running delete instead of failing on the refused one.
    let before = filestore_deletes(&cx);
    let destroy =
        run_moving_time_after_a_delete(&cx, &["destroy", MEGA, "--auto-approve"], before, 60.0)
            .await;
    assert!(
        filestore_deletes(&cx) > before,
        "the run sent its own delete"
    );
    assert_eq!(destroy.code, Some(0), "{}", destroy.stderr);
    assert_eq!(live(&cx).await, Vec::<String>::new());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_apply_killed_half_way_through_the_kueue_release_installs_the_rest_next_time() {
    let cx = TestContext::new().await;
    // The releases are applied one object at a time, CRDs early, JobSet's (one CRD) before
    // Kueue's: the sixth CRD's apply (Kueue's fifth) is made, its answer held, and the process
    // killed, leaving a partly installed Kueue release.
    cx.sim.set_faults(FaultConfig {
        tripwires: vec![Tripwire {
            api: "kube".into(),
            method: Some("PATCH".into()),
            path: Some("customresourcedefinitions".into()),
            nth: 6,
            when: TripWhen::After,
        }],
        ..Default::default()
    });
    let mut child = cx
        .command(&["apply", HIGH, "--auto-approve"])
        .spawn()
        .expect("a3ctl starts");
    tokio::time::timeout(HANG, cx.sim.wait_tripped())
        .await
        .expect("the apply reaches the Kueue CRDs");
    child.start_kill().expect("SIGKILL");
    let _ = child.wait().await;
    cx.sim.set_faults(FaultConfig::default());

    let kubectl = crate::common::kubectl::Kubectl::for_cluster(&cx, "a3high").await;
    let kueue_crds = |crds: Vec<Value>| {
        crds.iter()
            .filter(|c| c["spec"]["group"] == "kueue.x-k8s.io")
            .count()
    };
    let partial = kueue_crds(kubectl.items(&["customresourcedefinitions"]).await);
    assert_eq!(partial, 5, "the kill left a partly installed release");
    assert!(
        state(&cx, "a3high")["resources"]
            .get("k8s.release/-/kueue")
            .is_none()
    );

    // The next apply finds the partial release and installs what is missing.
    let rerun = run(&cx, &["apply", HIGH, "--auto-approve"]).await;
    assert_eq!(rerun.code, Some(0), "{}", rerun.stderr);
    let installed = kueue_crds(kubectl.items(&["customresourcedefinitions"]).await);
    assert!(installed > partial, "{installed} CRDs after the re-run");
    let release = &state(&cx, "a3high")["resources"]["k8s.release/-/kueue"];
    assert_eq!(
        release["spec"]["missing"],
        serde_json::json!([]),
        "{release}"
    );
    let deployments = kubectl.names(&["deployments", "-n", "kueue-system"]).await;
    assert!(
        deployments
            .iter()
            .any(|d| d.contains("kueue-controller-manager")),
        "{deployments:?}"
    );
    run(&cx, &["plan", HIGH, "--detailed-exitcode"])
        .await
        .expect(0);
}

/// See: issue 27. A firewall rule made with gcloud on a3ctl's network keeps the network in use.
/// As on Google, the network's DELETE is accepted and its operation fails; destroy names the
/// rule, says how to find such rules, and the next destroy, once the rule is gone, finishes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_network_a_foreign_rule_keeps_in_use_fails_in_its_operation_and_destroy_says_why() {
    let cx = TestContext::new().await;
    cx.unprotect(HIGH);
    run(&cx, &["apply", HIGH, "--auto-approve"]).await.expect(0);
    let gcloud = Gcloud::in_project(&cx.sim, PROJECT);
    gcloud
        .ok(&[
            "compute",
            "firewall-rules",
            "create",
            "stray-ssh",
            "--network=a3high-net",
            "--allow=tcp:22",
        ])
        .await;

    let destroy = run(&cx, &["destroy", HIGH, "--auto-approve"]).await;
    assert_eq!(destroy.code, Some(1), "{}", destroy.stderr);
    assert!(
        destroy.stderr.contains(
            "The network resource 'projects/my-project/global/networks/a3high-net' is already \
             being used by 'projects/my-project/global/firewalls/stray-ssh'"
        ),
        "{}",
        destroy.stderr
    );
    assert!(
        destroy
            .stderr
            .contains("gcloud compute firewall-rules list --filter=network:a3high-net"),
        "{}",
        destroy.stderr
    );
    // The DELETE was answered with an operation: the refusal came in it.
    let deletes: Vec<u64> = common::request_log(&cx)
        .await
        .iter()
        .filter(|r| {
            r["method"] == "DELETE"
                && r["path"]
                    .as_str()
                    .is_some_and(|p| p.ends_with("/global/networks/a3high-net"))
        })
        .map(|r| r["status"].as_u64().unwrap_or(0))
        .collect();
    assert_eq!(deletes, [200]);
    let mut left = live(&cx).await;
    left.sort();
    assert_eq!(left, ["firewall/stray-ssh", "network/a3high-net"]);

    gcloud
        .ok(&[
            "compute",
            "firewall-rules",
            "delete",
            "stray-ssh",
            "--quiet",
        ])
        .await;
    run(&cx, &["destroy", HIGH, "--auto-approve"])
        .await
        .expect(0);
    assert_eq!(live(&cx).await, Vec::<String>::new());
}
