//! Day two as desired state: a new cluster gets the GPU default exclusion (no minor or node
//! upgrades until end of support), a maintenance window declared later is one
//! `setMaintenancePolicy` call and a no-op plan afterwards; pools get upgrade settings that fit
//! their capacity (a reservation: no surge node, one down at a time), changed with one
//! `nodePools.update`; preflight warns when a reservation has no room for surge nodes.

use crate::common::gcloud::Gcloud;
use crate::common::{self, TestContext};
use serde_json::Value;

const HIGH: &str = "blueprints/a3-high.toml";
const MEGA: &str = "blueprints/a3-mega.toml";

async fn describe(cx: &TestContext, args: &[&str]) -> Value {
    let g = Gcloud::in_project(&cx.sim, "my-project");
    let mut all = vec!["container"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--location=us-central1", "--format=json"]);
    let (ok, out, err) = g.run(&all).await;
    assert!(ok, "{err}");
    serde_json::from_str(&out).unwrap()
}

/// The mutating requests since the log was last cleared, as `METHOD endpoint`.
async fn mutations(cx: &TestContext) -> Vec<String> {
    let url = format!("{}/_sim/requests", cx.sim.base_url());
    let log: Value = reqwest::get(&url).await.unwrap().json().await.unwrap();
    log["entries"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .iter()
        .map(|e| {
            (
                e["method"].as_str().unwrap_or("").to_string(),
                e["endpoint"].as_str().unwrap_or("").to_string(),
            )
        })
        .filter(|(method, endpoint)| common::is_mutation(method, endpoint))
        .map(|(method, endpoint)| format!("{method} {endpoint}"))
        .collect()
}

async fn clear_requests(cx: &TestContext) {
    let url = format!("{}/_sim/requests", cx.sim.base_url());
    reqwest::Client::new().delete(&url).send().await.unwrap();
}

fn edit(cx: &TestContext, path: &str, from: &str, to: &str) {
    let text = std::fs::read_to_string(cx.path(path)).unwrap();
    assert!(text.contains(from), "{path} lacks {from:?}");
    cx.write(path, &text.replacen(from, to, 1));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_cluster_gets_the_default_exclusion_and_a_window_is_one_call() {
    let cx = TestContext::new().await;
    cx.run(&["apply", HIGH, "--auto-approve"]).await.expect(0);
    let cluster = describe(&cx, &["clusters", "describe", "a3high"]).await;
    let window = &cluster["maintenancePolicy"]["window"];
    let default = &window["maintenanceExclusions"]["a3ctl-no-minor-or-node-upgrades"];
    let options = &default["maintenanceExclusionOptions"];
    // Stored by name, whichever encoding the client sent; GKE sets the end: the end of support
    // of the cluster's minor.
    assert_eq!(options["scope"], "NO_MINOR_OR_NODE_UPGRADES", "{cluster:#}");
    assert_eq!(
        options["endTimeBehavior"], "UNTIL_END_OF_SUPPORT",
        "{cluster:#}"
    );
    assert!(
        default["endTime"]
            .as_str()
            .is_some_and(|t| t.ends_with('Z')),
        "{cluster:#}"
    );
    let started = default["startTime"].clone();
    assert!(started.is_string(), "{default}");
    assert!(window.get("recurringWindow").is_none(), "{window}");

    // A weekend window, declared after the cluster exists.
    edit(
        &cx,
        HIGH,
        "\n[system_pool]",
        "\n[cluster.maintenance.window]\nstart = 2026-01-03T02:00:00Z\nduration = \"8h\"\nrecurrence = \"FREQ=WEEKLY;BYDAY=SA,SU\"\n\n[system_pool]",
    );
    let plan = cx.run(&["plan", HIGH]).await.expect(0);
    assert!(plan.stdout.contains("~ cluster.main"), "{}", plan.stdout);
    assert!(
        plan.stdout.contains(
            "window: 2026-01-03T02:00:00Z to 2026-01-03T10:00:00Z (UTC), repeating FREQ=WEEKLY;BYDAY=SA,SU"
        ),
        "{}",
        plan.stdout
    );
    assert!(
        plan.stdout
            .contains("Plan: 0 to add, 1 to change, 0 to destroy."),
        "{}",
        plan.stdout
    );
    clear_requests(&cx).await;
    cx.run(&["apply", HIGH, "--auto-approve"]).await.expect(0);
    let changed = mutations(&cx).await;
    assert_eq!(changed.len(), 1, "{changed:#?}");
    assert!(
        changed[0].ends_with(":setMaintenancePolicy"),
        "{changed:#?}"
    );
    let cluster = describe(&cx, &["clusters", "describe", "a3high"]).await;
    let window = &cluster["maintenancePolicy"]["window"];
    assert_eq!(
        window["recurringWindow"]["recurrence"],
        "FREQ=WEEKLY;BYDAY=SA,SU"
    );
    assert!(
        window["maintenanceExclusions"]
            .get("a3ctl-no-minor-or-node-upgrades")
            .is_some(),
        "the default exclusion stays: {window}"
    );
    assert_eq!(
        window["maintenanceExclusions"]["a3ctl-no-minor-or-node-upgrades"]["startTime"], started,
        "the default exclusion keeps its start"
    );
    let again = cx.run(&["plan", HIGH, "--detailed-exitcode"]).await;
    assert_eq!(again.code, Some(0), "{}\n{}", again.stdout, again.stderr);

    // Turning the default off is one more call, and GKE holds no exclusion afterwards.
    edit(
        &cx,
        HIGH,
        "[cluster.maintenance.window]",
        "[cluster.maintenance]\ndefault_exclusion = false\n\n[cluster.maintenance.window]",
    );
    clear_requests(&cx).await;
    cx.run(&["apply", HIGH, "--auto-approve"]).await.expect(0);
    assert_eq!(mutations(&cx).await.len(), 1);
    let cluster = describe(&cx, &["clusters", "describe", "a3high"]).await;
    let exclusions = &cluster["maintenancePolicy"]["window"]["maintenanceExclusions"];
    assert!(
        exclusions.as_object().is_none_or(|m| m.is_empty()),
        "{exclusions}"
    );
    cx.run(&["plan", HIGH, "--detailed-exitcode"])
        .await
        .expect(0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn upgrade_settings_fit_the_capacity_and_change_with_one_update() {
    let cx = TestContext::new().await;
    cx.run(&["apply", MEGA, "--auto-approve"]).await.expect(0);
    let pool = |name: &'static str| {
        let cx = &cx;
        async move {
            describe(
                cx,
                &["node-pools", "describe", name, "--cluster=a3mega"],
            )
            .await["upgradeSettings"]
                .clone()
        }
    };
    // On the reservation: no surge node, one down at a time. The on-demand system pool: GKE's
    // default surge. (A zero is left out of the API's JSON.)
    let reserved = pool("a3mega").await;
    assert_eq!(reserved["maxUnavailable"], 1, "{reserved}");
    assert!(
        reserved["maxSurge"].as_i64().unwrap_or(0) == 0,
        "{reserved}"
    );
    let system = pool("system").await;
    assert_eq!(system["maxSurge"], 1, "{system}");

    // Four down at a time: one `nodePools.update` of the GPU pool, then nothing to do.
    edit(
        &cx,
        MEGA,
        "placement = \"compact\"\n",
        "placement = \"compact\"\n\n[gpu_pool.upgrade]\nmax_unavailable = 4\n",
    );
    let plan = cx.run(&["plan", MEGA]).await.expect(0);
    assert!(
        plan.stdout.contains("~ node_pool.a3mega"),
        "{}",
        plan.stdout
    );
    assert!(
        plan.stdout.contains(
            "node_pool.a3mega: surge, 4 nodes at a time per zone (0 extra, 4 down): 32 nodes in 8 batches"
        ),
        "{}",
        plan.stdout
    );
    clear_requests(&cx).await;
    cx.run(&["apply", MEGA, "--auto-approve"]).await.expect(0);
    let changed = mutations(&cx).await;
    assert_eq!(changed.len(), 1, "{changed:#?}");
    assert!(
        changed[0].starts_with("PUT ") && changed[0].contains("/nodePools/"),
        "{changed:#?}"
    );
    assert_eq!(pool("a3mega").await["maxUnavailable"], 4);
    cx.run(&["plan", MEGA, "--detailed-exitcode"])
        .await
        .expect(0);

    // Surge nodes the full reservation cannot give: a warning with the fix, nothing refused.
    edit(
        &cx,
        MEGA,
        "max_unavailable = 4\n",
        "max_unavailable = 4\nmax_surge = 2\n",
    );
    let plan = cx.run(&["plan", MEGA]).await.expect(0);
    assert!(
        plan.stdout.contains(
            "  ! upgrade headroom of node_pool.a3mega on reservation a3mega-reservation (us-central1-a): need 2 extra VM(s) during a surge upgrade (max_surge), available 0 free after this plan"
        ),
        "{}",
        plan.stdout
    );
    assert!(
        plan.stdout
            .contains("fix: set `max_surge = 0` and `max_unavailable = 1`"),
        "{}",
        plan.stdout
    );
}
