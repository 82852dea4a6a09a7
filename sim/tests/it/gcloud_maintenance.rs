//! GKE maintenance policies, release channels that publish builds over simulated time, and the
//! auto-upgrades they lead to, driven by gcloud (reqwest where gcloud 528 has no flag: an
//! exclusion until end of support, a stale `resourceVersion`, `desiredMaintenancePolicy`, more
//! than 20 exclusions). Every world here starts on Monday 2026-03-02T00:00:00Z with a manual
//! clock; time moves only through `advance_secs`.

use crate::gcloud_support::{Gcloud, PROJECT, send};
use a3ctl_sim::latency::{LatencyProfile, Span};
use a3ctl_sim::{SimConfig, SimHandle, WorldSpec};
use serde_json::{Value, json};

const HOUR: f64 = 3600.0;
const DAY: f64 = 24.0 * HOUR;

/// 1.33.6 reaches REGULAR on day 1 and becomes its default on day 2; 1.34 reaches it on day 9
/// and becomes its default on day 10.
const WORLD: &str = r#"
start_time = "2026-03-02T00:00:00Z"

[gke]
end_of_support = { "1.33" = "2026-09-30T00:00:00Z", "1.34" = "2027-02-28T00:00:00Z" }

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
"#;

fn world() -> WorldSpec {
    WorldSpec::parse(WORLD, "world.toml").expect("world file parses")
}

async fn start_with(config: SimConfig) -> SimHandle {
    a3ctl_sim::start(config).await.expect("simulator starts")
}

async fn start() -> SimHandle {
    start_with(SimConfig {
        world: world(),
        ..SimConfig::default()
    })
    .await
}

/// The network, and a REGULAR cluster `name` with one e2 pool, at 1.33.5 unless `extra` says
/// `--cluster-version`.
async fn cluster(cli: &Gcloud, name: &str, extra: &[&str]) -> Value {
    let (ok, _, _) = cli
        .run(&["compute", "networks", "describe", "main", "--format=json"])
        .await;
    if !ok {
        cli.ok(&[
            "compute",
            "networks",
            "create",
            "main",
            "--subnet-mode=custom",
        ])
        .await;
        cli.ok(&[
            "compute",
            "networks",
            "subnets",
            "create",
            "main-sub",
            "--network=main",
            "--region=us-central1",
            "--range=10.128.0.0/20",
        ])
        .await;
    }
    let mut args = vec![
        "container",
        "clusters",
        "create",
        name,
        "--location=us-central1",
        "--network=main",
        "--subnetwork=main-sub",
        "--release-channel=regular",
        "--node-locations=us-central1-a",
        "--num-nodes=1",
        "--machine-type=e2-standard-4",
    ];
    if !extra.iter().any(|a| a.starts_with("--cluster-version")) {
        args.push("--cluster-version=1.33.5-gke.1080000");
    }
    args.extend(extra);
    let created = cli.json(&args).await;
    created
        .as_array()
        .and_then(|a| a.first())
        .cloned()
        .unwrap_or(created)
}

async fn describe(cli: &Gcloud, name: &str) -> Value {
    cli.json(&[
        "container",
        "clusters",
        "describe",
        name,
        "--location=us-central1",
    ])
    .await
}

/// `gcloud container clusters update NAME --location=us-central1 ARGS...`.
fn update<'a>(name: &'a str, args: &[&'a str]) -> Vec<&'a str> {
    let mut all = vec![
        "container",
        "clusters",
        "update",
        name,
        "--location=us-central1",
        "--quiet",
    ];
    all.extend(args);
    all
}

/// `(operationType, startTime, targetLink's last segments)` of every operation, oldest first.
async fn operations(cli: &Gcloud) -> Vec<(String, String, String)> {
    let ops = cli
        .json(&["container", "operations", "list", "--location=us-central1"])
        .await;
    let mut out: Vec<(String, String, String)> = ops
        .as_array()
        .into_iter()
        .flatten()
        .map(|o| {
            let target = o["targetLink"].as_str().unwrap_or("");
            let tail = target.split("/clusters/").nth(1).unwrap_or(target);
            (
                o["operationType"].as_str().unwrap_or("").to_string(),
                o["startTime"].as_str().unwrap_or("").to_string(),
                tail.to_string(),
            )
        })
        .collect();
    out.sort_by(|a, b| a.1.cmp(&b.1));
    out
}

fn upgrades(ops: &[(String, String, String)]) -> Vec<(String, String, String)> {
    ops.iter()
        .filter(|(t, _, _)| t.starts_with("UPGRADE_"))
        .cloned()
        .collect()
}

fn cluster_url(sim: &SimHandle, name: &str) -> String {
    format!(
        "{}/container/v1/projects/{PROJECT}/locations/us-central1/clusters/{name}",
        sim.base_url()
    )
}

async fn set_policy(sim: &SimHandle, name: &str, policy: Value) -> (u16, Value) {
    let url = format!("{}:setMaintenancePolicy", cluster_url(sim, name));
    send(
        reqwest::Client::new()
            .post(url)
            .json(&json!({ "maintenancePolicy": policy })),
    )
    .await
}

#[tokio::test]
async fn maintenance_policies_are_checked_as_gke_checks_them_with_gcloud() {
    let sim = start().await;
    let cli = Gcloud::new(&sim);

    // A weekend window on create, stored in UTC with its resource version.
    let created = cluster(
        &cli,
        "c",
        &[
            "--maintenance-window-start=2026-03-07T02:00:00Z",
            "--maintenance-window-end=2026-03-07T10:00:00Z",
            "--maintenance-window-recurrence=FREQ=WEEKLY;BYDAY=SA,SU",
        ],
    )
    .await;
    let recurring = &created["maintenancePolicy"]["window"]["recurringWindow"];
    assert_eq!(
        recurring["recurrence"], "FREQ=WEEKLY;BYDAY=SA,SU",
        "{created}"
    );
    assert_eq!(recurring["window"]["startTime"], "2026-03-07T02:00:00Z");
    assert_eq!(recurring["window"]["endTime"], "2026-03-07T10:00:00Z");
    let version = created["maintenancePolicy"]["resourceVersion"].clone();
    assert!(version.as_str().is_some_and(|v| v.len() == 8), "{created}");

    // Four hours on Saturdays is under 48 hours in 32 days: GKE's own answer.
    let err = cli
        .fails(&update(
            "c",
            &[
                "--maintenance-window-start=2026-03-07T02:00:00Z",
                "--maintenance-window-end=2026-03-07T06:00:00Z",
                "--maintenance-window-recurrence=FREQ=WEEKLY;BYDAY=SA",
            ],
        ))
        .await;
    assert!(
        err.contains(
            "code=400, message=maintenance policy would go longer than 32d without 48h \
             maintenance availability"
        ),
        "{err}"
    );
    // Hourly recurrences are not supported.
    let err = cli
        .fails(&update(
            "c",
            &[
                "--maintenance-window-start=2026-03-07T02:00:00Z",
                "--maintenance-window-end=2026-03-07T06:00:00Z",
                "--maintenance-window-recurrence=FREQ=HOURLY",
            ],
        ))
        .await;
    assert!(err.contains("FREQ=HOURLY is not supported"), "{err}");

    // Exclusions: a NO_UPGRADES one of 31 days, one that ends before it starts, one past the end
    // of support of 1.33.
    let exclusion =
        |name: &'static str, start: &'static str, end: &'static str, scope: &'static str| {
            update("c", &[name, start, end, scope])
        };
    let err = cli
        .fails(&exclusion(
            "--add-maintenance-exclusion-name=long",
            "--add-maintenance-exclusion-start=2026-03-02T00:00:00Z",
            "--add-maintenance-exclusion-end=2026-04-02T00:00:00Z",
            "--add-maintenance-exclusion-scope=no_upgrades",
        ))
        .await;
    assert!(
        err.contains(
            "message=Maintenance exclusion \"long\" of scope NO_UPGRADES cannot be longer than 30 \
             days."
        ),
        "{err}"
    );
    let err = cli
        .fails(&exclusion(
            "--add-maintenance-exclusion-name=backwards",
            "--add-maintenance-exclusion-start=2026-03-10T00:00:00Z",
            "--add-maintenance-exclusion-end=2026-03-09T00:00:00Z",
            "--add-maintenance-exclusion-scope=no_minor_upgrades",
        ))
        .await;
    assert!(
        err.contains("message=Maintenance exclusion \"backwards\" must end after it starts."),
        "{err}"
    );
    let err = cli
        .fails(&exclusion(
            "--add-maintenance-exclusion-name=late",
            "--add-maintenance-exclusion-start=2026-09-01T00:00:00Z",
            "--add-maintenance-exclusion-end=2026-10-15T00:00:00Z",
            "--add-maintenance-exclusion-scope=no_minor_upgrades",
        ))
        .await;
    assert!(
        err.contains(
            "message=Maintenance exclusion \"late\" ends at 2026-10-15T00:00:00Z, after the end \
             of support of version 1.33 at 2026-09-30T00:00:00Z."
        ),
        "{err}"
    );
    // Nothing changed.
    assert_eq!(
        describe(&cli, "c").await["maintenancePolicy"]["resourceVersion"],
        version
    );

    // A valid one is kept next to the window, with its scope.
    cli.ok(&exclusion(
        "--add-maintenance-exclusion-name=freeze",
        "--add-maintenance-exclusion-start=2026-03-02T00:00:00Z",
        "--add-maintenance-exclusion-end=2026-05-01T00:00:00Z",
        "--add-maintenance-exclusion-scope=no_minor_or_node_upgrades",
    ))
    .await;
    let policy = describe(&cli, "c").await["maintenancePolicy"].clone();
    let freeze = &policy["window"]["maintenanceExclusions"]["freeze"];
    assert_eq!(freeze["endTime"], "2026-05-01T00:00:00Z", "{policy}");
    assert_eq!(
        freeze["maintenanceExclusionOptions"]["scope"],
        "NO_MINOR_OR_NODE_UPGRADES"
    );
    assert!(policy["window"]["recurringWindow"].is_object(), "{policy}");
    assert_ne!(policy["resourceVersion"], version);

    // Until the end of support (no gcloud 528 flag): only with a minor scope; its end is the end
    // of support of the cluster's minor.
    let mut with_eos = policy.clone();
    with_eos["window"]["maintenanceExclusions"]["lts"] = json!({
        "startTime": "2026-03-02T00:00:00Z",
        "maintenanceExclusionOptions": {"scope": "NO_UPGRADES", "endTimeBehavior": "UNTIL_END_OF_SUPPORT"},
    });
    let (status, body) = set_policy(&sim, "c", with_eos.clone()).await;
    assert_eq!(status, 400, "{body}");
    assert_eq!(
        body["error"]["message"],
        "Maintenance exclusion \"lts\": end time behavior UNTIL_END_OF_SUPPORT needs the scope \
         NO_MINOR_UPGRADES or NO_MINOR_OR_NODE_UPGRADES."
    );
    with_eos["window"]["maintenanceExclusions"]["lts"]["maintenanceExclusionOptions"]["scope"] =
        json!("NO_MINOR_UPGRADES");
    let (status, body) = set_policy(&sim, "c", with_eos.clone()).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["operationType"], "SET_MAINTENANCE_POLICY");
    let policy = describe(&cli, "c").await["maintenancePolicy"].clone();
    assert_eq!(
        policy["window"]["maintenanceExclusions"]["lts"]["endTime"], "2026-09-30T00:00:00Z",
        "{policy}"
    );
    // The policy read before that change carries a resource version that is no longer current.
    let (status, body) = set_policy(&sim, "c", with_eos).await;
    assert_eq!(status, 400, "{body}");
    assert_eq!(body["error"]["status"], "FAILED_PRECONDITION", "{body}");
    // Twenty exclusions at most.
    let many: serde_json::Map<String, Value> = (0..21)
        .map(|i| {
            (
                format!("x{i}"),
                json!({"startTime": "2026-03-02T00:00:00Z", "endTime": "2026-03-03T00:00:00Z"}),
            )
        })
        .collect();
    let (status, body) = set_policy(
        &sim,
        "c",
        json!({"window": {"maintenanceExclusions": many}}),
    )
    .await;
    assert_eq!(status, 400, "{body}");
    assert_eq!(
        body["error"]["message"],
        "A cluster can have at most 20 maintenance exclusions; got 21."
    );
    // `ClusterUpdate` has no maintenance policy.
    let (status, body) = send(
        reqwest::Client::new()
            .put(cluster_url(&sim, "c"))
            .json(&json!({"update": {"desiredMaintenancePolicy": {"window": {}}}})),
    )
    .await;
    assert_eq!(status, 400, "{body}");
    assert_eq!(
        body["error"]["message"],
        "Invalid JSON payload received. Unknown name \"desiredMaintenancePolicy\" at 'update': \
         Cannot find field."
    );

    // Removing an exclusion, then the window, keeps the rest.
    cli.ok(&update("c", &["--remove-maintenance-exclusion=freeze"]))
        .await;
    let policy = describe(&cli, "c").await["maintenancePolicy"].clone();
    assert!(
        policy["window"]["maintenanceExclusions"]["freeze"].is_null(),
        "{policy}"
    );
    assert!(
        policy["window"]["maintenanceExclusions"]["lts"].is_object(),
        "{policy}"
    );
    cli.ok(&update("c", &["--clear-maintenance-window"])).await;
    let policy = describe(&cli, "c").await["maintenancePolicy"].clone();
    assert!(policy["window"]["recurringWindow"].is_null(), "{policy}");
    assert!(
        policy["window"]["maintenanceExclusions"]["lts"].is_object(),
        "{policy}"
    );
    // A daily window lasts four hours.
    cli.ok(&update("c", &["--maintenance-window=03:30"])).await;
    let policy = describe(&cli, "c").await["maintenancePolicy"].clone();
    assert_eq!(
        policy["window"]["dailyMaintenanceWindow"],
        json!({"startTime": "03:30", "duration": "PT4H0M0S"}),
        "{policy}"
    );
}

#[tokio::test]
async fn server_config_follows_the_release_schedule() {
    let sim = start().await;
    let cli = Gcloud::new(&sim);
    let regular = |config: &Value| {
        config["channels"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|c| c["channel"] == "REGULAR")
            .cloned()
            .unwrap_or(Value::Null)
    };
    let args = ["container", "get-server-config", "--location=us-central1"];
    let config = cli.json(&args).await;
    let at_zero = regular(&config);
    assert_eq!(at_zero["defaultVersion"], "1.33.5-gke.1080000", "{config}");
    assert_eq!(
        at_zero["validVersions"],
        json!([
            "1.33.5-gke.1080000",
            "1.33.4-gke.1245000",
            "1.32.12-gke.1050000"
        ])
    );
    // Day 1: offered; day 2: the default and the auto-upgrade target.
    sim.advance_secs(DAY);
    let day1 = regular(&cli.json(&args).await);
    assert_eq!(day1["defaultVersion"], "1.33.5-gke.1080000");
    assert_eq!(day1["validVersions"][0], "1.33.6-gke.1100000");
    sim.advance_secs(DAY);
    let config = cli.json(&args).await;
    let day2 = regular(&config);
    assert_eq!(day2["defaultVersion"], "1.33.6-gke.1100000");
    assert_eq!(day2["upgradeTargetVersion"], "1.33.6-gke.1100000");
    assert_eq!(config["defaultClusterVersion"], "1.33.6-gke.1100000");
    // A cluster may now be created at the new build, not yet at 1.34 (RAPID's only).
    let created = cluster(&cli, "late", &["--cluster-version=1.33.6-gke.1100000"]).await;
    assert_eq!(created["currentMasterVersion"], "1.33.6-gke.1100000");
    let err = cli
        .fails(&[
            "container",
            "clusters",
            "create",
            "early",
            "--location=us-central1",
            "--network=main",
            "--subnetwork=main-sub",
            "--release-channel=regular",
            "--cluster-version=1.34.1-gke.1829001",
            "--node-locations=us-central1-a",
            "--num-nodes=1",
        ])
        .await;
    assert!(err.contains("channel supported versions"), "{err}");
}

#[tokio::test]
async fn an_exclusion_holds_an_auto_upgrade_that_the_window_lets_through_once_removed() {
    let sim = start().await;
    let cli = Gcloud::new(&sim);
    // A daily window 02:00–08:00 UTC and a freeze of minor and node upgrades until March 25.
    cluster(
        &cli,
        "held",
        &[
            "--maintenance-window-start=2026-03-02T02:00:00Z",
            "--maintenance-window-end=2026-03-02T08:00:00Z",
            "--maintenance-window-recurrence=FREQ=DAILY",
        ],
    )
    .await;
    cli.ok(&update(
        "held",
        &[
            "--add-maintenance-exclusion-name=freeze",
            "--add-maintenance-exclusion-start=2026-03-02T00:00:00Z",
            "--add-maintenance-exclusion-end=2026-03-25T00:00:00Z",
            "--add-maintenance-exclusion-scope=no_minor_or_node_upgrades",
        ],
    ))
    .await;
    assert!(upgrades(&operations(&cli).await).is_empty());

    // Day 2 00:00: 1.33.6 becomes REGULAR's target, outside the window. The control plane's patch
    // waits for the window (02:00) and is allowed by the freeze; the pool's upgrade is not.
    sim.advance_secs(2.0 * DAY + HOUR);
    assert!(
        upgrades(&operations(&cli).await).is_empty(),
        "outside the window"
    );
    sim.advance_secs(2.0 * HOUR);
    let ops = upgrades(&operations(&cli).await);
    assert_eq!(
        ops,
        vec![(
            "UPGRADE_MASTER".to_string(),
            "2026-03-04T02:00:00.000Z".to_string(),
            "held".to_string()
        )]
    );
    let held = describe(&cli, "held").await;
    assert_eq!(held["currentMasterVersion"], "1.33.6-gke.1100000");
    assert_eq!(held["nodePools"][0]["version"], "1.33.5-gke.1080000");

    // Day 10: 1.34 becomes the target; the freeze holds the minor upgrade through the windows.
    sim.advance_secs(9.0 * DAY);
    assert_eq!(upgrades(&operations(&cli).await).len(), 1);
    assert_eq!(
        describe(&cli, "held").await["currentMasterVersion"],
        "1.33.6-gke.1100000"
    );

    // Now 2026-03-13T03:00 (in a window). Removing the freeze lets the upgrade through at once:
    // control plane to 1.34, then the pool (auto-upgrade is on by default).
    cli.ok(&update("held", &["--remove-maintenance-exclusion=freeze"]))
        .await;
    let ops = upgrades(&operations(&cli).await);
    assert_eq!(
        ops.iter()
            .map(|(t, s, x)| (t.as_str(), s.as_str(), x.as_str()))
            .collect::<Vec<_>>(),
        vec![
            ("UPGRADE_MASTER", "2026-03-04T02:00:00.000Z", "held"),
            ("UPGRADE_MASTER", "2026-03-13T03:00:00.000Z", "held"),
            (
                "UPGRADE_NODES",
                "2026-03-13T03:00:00.000Z",
                "held/nodePools/default-pool"
            ),
        ]
    );
    let held = describe(&cli, "held").await;
    assert_eq!(held["currentMasterVersion"], "1.34.1-gke.1829001");
    assert_eq!(held["nodePools"][0]["version"], "1.34.1-gke.1829001");
    assert_eq!(held["status"], "RUNNING");
}

#[tokio::test]
async fn an_auto_upgrade_waits_for_a_users_operation_and_refuses_one_while_it_runs() {
    let mut latency = LatencyProfile::zero();
    latency
        .spans
        .insert("container.cluster.update".into(), Span::Fixed(HOUR));
    let sim = start_with(SimConfig {
        world: world(),
        latency,
        ..SimConfig::default()
    })
    .await;
    let cli = Gcloud::new(&sim);
    cluster(&cli, "busy", &[]).await;
    // The window is set by an operation of an hour.
    cli.ok(&update(
        "busy",
        &[
            "--maintenance-window-start=2026-03-02T02:00:00Z",
            "--maintenance-window-end=2026-03-02T08:00:00Z",
            "--maintenance-window-recurrence=FREQ=DAILY",
            "--async",
        ],
    ))
    .await;
    sim.advance_secs(2.0 * HOUR);
    // 2026-03-04T01:30: a label change runs until 02:30, into the window that opens at 02:00
    // with 1.33.6 as the target.
    sim.advance_secs(2.0 * DAY - 30.0 * 60.0);
    cli.ok(&update("busy", &["--update-labels=team=ml", "--async"]))
        .await;
    sim.advance_secs(1.5 * HOUR);
    let ops = upgrades(&operations(&cli).await);
    assert_eq!(
        ops,
        vec![(
            "UPGRADE_MASTER".to_string(),
            "2026-03-04T02:30:00.000Z".to_string(),
            "busy".to_string()
        )],
        "the upgrade starts when the user's operation ends"
    );
    // It runs until 03:30: a user's change is refused meanwhile.
    let err = cli
        .fails(&update("busy", &["--update-labels=team=infra"]))
        .await;
    assert!(
        err.contains("Cluster is running incompatible operation operation-"),
        "{err}"
    );
    sim.advance_secs(HOUR);
    let busy = describe(&cli, "busy").await;
    assert_eq!(busy["currentMasterVersion"], "1.33.6-gke.1100000");
    assert_eq!(busy["nodePools"][0]["version"], "1.33.6-gke.1100000");
    let ops = upgrades(&operations(&cli).await);
    assert_eq!(ops.len(), 2, "{ops:?}");
    assert_eq!(ops[1].0, "UPGRADE_NODES");
    assert_eq!(ops[1].1, "2026-03-04T03:30:00.000Z");
}

#[tokio::test]
async fn a_saved_world_keeps_its_policies_and_release_schedule() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("world.json");
    {
        let sim = start_with(SimConfig {
            world: world(),
            persist: Some(path.clone()),
            ..SimConfig::default()
        })
        .await;
        let cli = Gcloud::new(&sim);
        cluster(
            &cli,
            "kept",
            &[
                "--maintenance-window-start=2026-03-07T02:00:00Z",
                "--maintenance-window-end=2026-03-07T10:00:00Z",
                "--maintenance-window-recurrence=FREQ=WEEKLY;BYDAY=SA,SU",
            ],
        )
        .await;
        sim.advance_secs(DAY);
    }
    // Restarted without the world file: the saved world has its schedule and policy.
    let sim = start_with(SimConfig {
        persist: Some(path),
        ..SimConfig::default()
    })
    .await;
    let cli = Gcloud::new(&sim);
    let kept = describe(&cli, "kept").await;
    assert_eq!(
        kept["maintenancePolicy"]["window"]["recurringWindow"]["recurrence"],
        "FREQ=WEEKLY;BYDAY=SA,SU",
        "{kept}"
    );
    // Day 2 (Wednesday) brings 1.33.6; the upgrade waits for Saturday 02:00.
    sim.advance_secs(3.0 * DAY);
    assert!(upgrades(&operations(&cli).await).is_empty());
    sim.advance_secs(2.0 * DAY);
    let ops = upgrades(&operations(&cli).await);
    assert_eq!(
        ops.first().map(|o| o.1.as_str()),
        Some("2026-03-07T02:00:00.000Z"),
        "{ops:?}"
    );
    assert_eq!(
        describe(&cli, "kept").await["currentMasterVersion"],
        "1.33.6-gke.1100000"
    );
}

#[tokio::test]
async fn a_pool_too_far_behind_holds_the_control_planes_minor_until_it_is_upgraded() {
    let sim = start().await;
    let cli = Gcloud::new(&sim);
    cluster(&cli, "skew", &[]).await;
    // A pool two minors behind, not auto-upgraded.
    cli.ok(&[
        "container",
        "node-pools",
        "create",
        "old",
        "--cluster=skew",
        "--location=us-central1",
        "--node-version=1.31.14-gke.1243000",
        "--no-enable-autoupgrade",
        "--num-nodes=1",
        "--machine-type=e2-standard-4",
        "--quiet",
    ])
    .await;
    // Day 11: the patch of day 2 went through (no window: at once), the control plane and the
    // default pool; 1.34 (day 10) would leave `old` three minors behind, so it waits.
    sim.advance_secs(11.0 * DAY);
    let skew = describe(&cli, "skew").await;
    assert_eq!(skew["currentMasterVersion"], "1.33.6-gke.1100000", "{skew}");
    let version = |cluster: &Value, pool: &str| {
        cluster["nodePools"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|p| p["name"] == pool)
            .map(|p| p["version"].clone())
            .unwrap_or(Value::Null)
    };
    assert_eq!(version(&skew, "default-pool"), "1.33.6-gke.1100000");
    assert_eq!(version(&skew, "old"), "1.31.14-gke.1243000");
    let day2 = "2026-03-04T00:00:00.000Z";
    let expected_day2 = vec![
        (
            "UPGRADE_MASTER".to_string(),
            day2.to_string(),
            "skew".to_string(),
        ),
        (
            "UPGRADE_NODES".to_string(),
            day2.to_string(),
            "skew/nodePools/default-pool".to_string(),
        ),
    ];
    assert_eq!(upgrades(&operations(&cli).await), expected_day2);

    // Auto-upgrade on for `old`: it catches up with the control plane, which then takes 1.34,
    // and both pools follow.
    cli.ok(&[
        "container",
        "node-pools",
        "update",
        "old",
        "--cluster=skew",
        "--location=us-central1",
        "--enable-autoupgrade",
        "--quiet",
    ])
    .await;
    let day11 = "2026-03-13T00:00:00.000Z";
    let ops = upgrades(&operations(&cli).await);
    let later: Vec<(&str, &str, &str)> = ops[2..]
        .iter()
        .map(|(t, s, x)| (t.as_str(), s.as_str(), x.as_str()))
        .collect();
    assert_eq!(
        later,
        vec![
            ("UPGRADE_NODES", day11, "skew/nodePools/old"),
            ("UPGRADE_MASTER", day11, "skew"),
            ("UPGRADE_NODES", day11, "skew/nodePools/default-pool"),
            ("UPGRADE_NODES", day11, "skew/nodePools/old"),
        ]
    );
    let skew = describe(&cli, "skew").await;
    assert_eq!(skew["currentMasterVersion"], "1.34.1-gke.1829001");
    assert_eq!(version(&skew, "default-pool"), "1.34.1-gke.1829001");
    assert_eq!(version(&skew, "old"), "1.34.1-gke.1829001");
}

#[tokio::test]
async fn a_node_auto_upgrade_refused_by_a_fault_is_tried_again_an_hour_later() {
    use a3ctl_sim::faults::{FaultAction, FaultConfig, ScriptedFault};
    let sim = start_with(SimConfig {
        world: world(),
        faults: FaultConfig {
            scripted: vec![ScriptedFault {
                kind: "container.nodePool".into(),
                verb: "update".into(),
                nth: 1,
                action: FaultAction::Http {
                    status: 503,
                    reason: "backendError".into(),
                    message: "scripted".into(),
                },
            }],
            ..FaultConfig::default()
        },
        ..SimConfig::default()
    })
    .await;
    let cli = Gcloud::new(&sim);
    cluster(&cli, "retry", &[]).await;
    // Day 2 00:00: the control plane moves; its pool's upgrade is refused, then runs at 01:00.
    sim.advance_secs(2.0 * DAY + 30.0 * 60.0);
    let ops = upgrades(&operations(&cli).await);
    assert_eq!(ops.len(), 1, "{ops:?}");
    assert_eq!(
        describe(&cli, "retry").await["nodePools"][0]["version"],
        "1.33.5-gke.1080000"
    );
    sim.advance_secs(HOUR);
    let ops = upgrades(&operations(&cli).await);
    let got: Vec<(&str, &str)> = ops
        .iter()
        .map(|(t, s, _)| (t.as_str(), s.as_str()))
        .collect();
    assert_eq!(
        got,
        vec![
            ("UPGRADE_MASTER", "2026-03-04T00:00:00.000Z"),
            ("UPGRADE_NODES", "2026-03-04T01:00:00.000Z"),
        ]
    );
    assert_eq!(
        describe(&cli, "retry").await["nodePools"][0]["version"],
        "1.33.6-gke.1100000"
    );
}
