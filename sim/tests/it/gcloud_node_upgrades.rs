//! Node-pool upgrades batch by batch, driven by gcloud and watched with kubectl: surge with
//! maxSurge=1/maxUnavailable=0 (never fewer Ready nodes than the pool has) and 0/1 (never more
//! than one down), blue-green with its phases and soaks, a surge upgrade in a full reservation
//! that waits and fails as GKE does, the settings checks, a persisted world reloaded midway, and
//! a fault midway leaving a pool of mixed versions. The manual clock moves every step.

use crate::gcloud_support::{Gcloud, PROJECT, main_network, post_ok, send};
use crate::kube_support::latency;
use a3ctl_sim::capacity::CapacityConfig;
use a3ctl_sim::faults::{FaultAction, FaultConfig, NamedFault, ScriptedFault};
use a3ctl_sim::{SimConfig, SimHandle};
use base64::Engine;
use serde_json::{Value, json};

const REGION: &str = "us-central1";
const OLD: &str = "1.32.12-gke.1050000";
const NEW: &str = "1.33.5-gke.1080000";

/// A VM up in 60 s, a node drained in 30 s, DaemonSet pods ready 20 s after their node.
fn config(capacity: CapacityConfig) -> SimConfig {
    SimConfig {
        latency: latency(&[
            ("container.nodePool.upgrade.create", 60.0),
            ("container.nodePool.upgrade.drain", 30.0),
            ("kube.daemonset.ready", 20.0),
        ]),
        capacity,
        ..SimConfig::default()
    }
}

/// Network, subnet and cluster `c1` (REGULAR, 1.33) with a one-node `sys` pool in
/// us-central1-a, all by REST.
async fn cluster(sim: &SimHandle) {
    main_network(sim, PROJECT, REGION).await;
    let body = json!({"cluster": {
        "name": "c1", "network": "main", "subnetwork": "main-sub",
        "locations": ["us-central1-a"],
        "releaseChannel": {"channel": "REGULAR"}, "initialClusterVersion": "1.33",
        "nodePools": [{"name": "sys", "initialNodeCount": 1,
                       "config": {"machineType": "e2-standard-4"}}],
    }});
    post_ok(
        sim,
        &format!("/container/v1/projects/{PROJECT}/locations/{REGION}/clusters"),
        body,
    )
    .await;
    sim.advance_secs(1.0);
}

/// `gcloud container node-pools create work` with 4 nodes at 1.32 and `extra` flags.
async fn work_pool(cli: &Gcloud, extra: &[&str]) -> Value {
    let mut args = vec![
        "container",
        "node-pools",
        "create",
        "work",
        "--cluster=c1",
        "--location=us-central1",
        "--node-locations=us-central1-a",
        "--machine-type=e2-standard-4",
        "--num-nodes=4",
        "--node-version=1.32",
    ];
    args.extend(extra);
    let created = cli.json(&args).await;
    created.get(0).cloned().unwrap_or(created)
}

async fn update_pool(cli: &Gcloud, flags: &[&str]) -> (bool, String, String) {
    let mut args = vec![
        "container",
        "node-pools",
        "update",
        "work",
        "--cluster=c1",
        "--location=us-central1",
    ];
    args.extend(flags);
    cli.run(&args).await
}

/// Starts `gcloud container clusters upgrade c1 --node-pool=work --cluster-version=1.33 --async`
/// and returns the running operation's name.
async fn upgrade(cli: &Gcloud) -> String {
    cli.ok(&[
        "container",
        "clusters",
        "upgrade",
        "c1",
        "--node-pool=work",
        "--cluster-version=1.33",
        "--location=us-central1",
        "--quiet",
        "--async",
    ])
    .await;
    let ops = cli
        .json(&[
            "container",
            "operations",
            "list",
            "--location=us-central1",
            "--filter=status=RUNNING",
        ])
        .await;
    let ops = ops.as_array().expect("a list").clone();
    assert_eq!(ops.len(), 1, "{ops:?}");
    assert_eq!(ops[0]["operationType"], "UPGRADE_NODES");
    ops[0]["name"].as_str().expect("name").to_string()
}

/// `operations.get` over REST, as the API answers it (enum names, int64s as strings).
async fn operation_by_rest(sim: &SimHandle, name: &str) -> Value {
    let short = name.rsplit('/').next().unwrap_or(name);
    let request = reqwest::Client::new().get(format!(
        "{}/container/v1/projects/{PROJECT}/locations/{REGION}/operations/{short}",
        sim.base_url()
    ));
    let (status, answer) = send(request).await;
    assert_eq!(status, 200, "{answer}");
    answer
}

async fn operation(cli: &Gcloud, name: &str) -> Value {
    cli.json(&[
        "container",
        "operations",
        "describe",
        name,
        "--location=us-central1",
    ])
    .await
}

async fn pool(cli: &Gcloud) -> Value {
    cli.json(&[
        "container",
        "node-pools",
        "describe",
        "work",
        "--cluster=c1",
        "--location=us-central1",
    ])
    .await
}

fn metric(op: &Value, name: &str) -> i64 {
    op["progress"]["metrics"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|m| m["name"] == name)
        .and_then(|m| m["intValue"].as_str())
        .and_then(|v| v.parse().ok())
        .unwrap_or(-1)
}

/// kubectl against cluster c1, with its CA from the cluster resource.
struct Kubectl {
    endpoint: String,
    ca: tempfile::NamedTempFile,
    home: tempfile::TempDir,
}

impl Kubectl {
    async fn new(sim: &SimHandle) -> Kubectl {
        let url = format!(
            "{}/container/v1/projects/{PROJECT}/locations/{REGION}/clusters/c1",
            sim.base_url()
        );
        let (status, cluster) = send(reqwest::Client::new().get(url)).await;
        assert_eq!(status, 200, "{cluster}");
        let pem = base64::engine::general_purpose::STANDARD
            .decode(
                cluster["masterAuth"]["clusterCaCertificate"]
                    .as_str()
                    .unwrap(),
            )
            .unwrap();
        let ca = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(ca.path(), pem).unwrap();
        Kubectl {
            endpoint: cluster["endpoint"].as_str().unwrap().to_string(),
            ca,
            home: tempfile::tempdir().unwrap(),
        }
    }

    async fn run(&self, args: &[&str], stdin: Option<&str>) -> String {
        use tokio::io::AsyncWriteExt;
        let mut child = tokio::process::Command::new("kubectl")
            .args([
                "--server",
                &format!("https://{}", self.endpoint),
                "--token",
                "t",
                "--certificate-authority",
                self.ca.path().to_str().unwrap(),
            ])
            .args(args)
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("HOME", self.home.path())
            .env("KUBECONFIG", self.home.path().join("kubeconfig"))
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("kubectl is installed");
        let mut input = child.stdin.take().unwrap();
        if let Some(text) = stdin {
            input.write_all(text.as_bytes()).await.unwrap();
        }
        drop(input);
        let out = child.wait_with_output().await.unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(
            out.status.success(),
            "kubectl {args:?}: {stdout}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        stdout
    }

    /// The `work` pool's nodes: (name, kubelet version, Ready, cordoned).
    async fn nodes(&self) -> Vec<Node> {
        let out = self
            .run(
                &[
                    "get",
                    "nodes",
                    "-l",
                    "cloud.google.com/gke-nodepool=work",
                    "-o",
                    "json",
                ],
                None,
            )
            .await;
        let list: Value = serde_json::from_str(&out).unwrap();
        list["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|n| {
                let ready = n["status"]["conditions"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .any(|c| c["type"] == "Ready" && c["status"] == "True");
                let cordoned = n["spec"]["unschedulable"] == json!(true);
                if cordoned {
                    let taints = n["spec"]["taints"].to_string();
                    assert!(
                        taints.contains("node.kubernetes.io/unschedulable"),
                        "{taints}"
                    );
                }
                Node {
                    name: n["metadata"]["name"].as_str().unwrap().to_string(),
                    version: n["status"]["nodeInfo"]["kubeletVersion"]
                        .as_str()
                        .unwrap()
                        .to_string(),
                    ready,
                    cordoned,
                }
            })
            .collect()
    }
}

#[derive(Debug)]
struct Node {
    name: String,
    version: String,
    ready: bool,
    cordoned: bool,
}

/// What was seen while an upgrade ran.
#[derive(Debug, Default)]
struct Watch {
    min_available: usize,
    max_nodes: usize,
    mixed: bool,
    cordoned: bool,
    steps: usize,
}

/// Moves the clock `step` seconds at a time until operation `op` is DONE (at most `limit`
/// seconds), checking the nodes with kubectl after every move.
async fn watch(
    sim: &SimHandle,
    cli: &Gcloud,
    kubectl: &Kubectl,
    op: &str,
    step: f64,
    limit: f64,
) -> (Watch, Value) {
    let mut seen = Watch {
        min_available: usize::MAX,
        ..Watch::default()
    };
    let mut elapsed = 0.0;
    let mut last_done = 0;
    loop {
        let nodes = kubectl.nodes().await;
        let available = nodes.iter().filter(|n| n.ready && !n.cordoned).count();
        seen.min_available = seen.min_available.min(available);
        seen.max_nodes = seen.max_nodes.max(nodes.len());
        let new = nodes
            .iter()
            .filter(|n| n.version == format!("v{NEW}"))
            .count();
        seen.mixed |= new > 0 && new < nodes.len();
        seen.cordoned |= nodes.iter().any(|n| n.cordoned);
        // Read over REST at every step (gcloud's own describe costs a second of CPU a call);
        // gcloud reads the operation that started and the one that ended.
        let described = if seen.steps == 0 {
            operation(cli, op).await
        } else {
            operation_by_rest(sim, op).await
        };
        let done = metric(&described, "NODES_DONE");
        assert!(done >= last_done, "progress went back: {described}");
        last_done = done;
        if described["status"] == "DONE" {
            // The operation that ended, as gcloud shows it.
            return (seen, operation(cli, op).await);
        }
        assert_eq!(metric(&described, "NODES_TOTAL"), 4, "{described}");
        assert!(
            elapsed < limit,
            "still running after {limit} s: {described}"
        );
        sim.advance_secs(step);
        elapsed += step;
        seen.steps += 1;
    }
}

async fn setup(capacity: CapacityConfig) -> (SimHandle, Gcloud, Kubectl) {
    let sim = a3ctl_sim::start(config(capacity)).await.unwrap();
    cluster(&sim).await;
    let cli = Gcloud::new(&sim);
    let kubectl = Kubectl::new(&sim).await;
    (sim, cli, kubectl)
}

#[tokio::test]
async fn a_surge_upgrade_replaces_one_node_at_a_time_keeping_four_ready() {
    let (sim, cli, kubectl) = setup(CapacityConfig::default()).await;
    let created = work_pool(&cli, &[]).await;
    assert_eq!(created["version"], OLD, "{created}");
    // gcloud sends GKE's defaults itself (maxUnavailable 0 is left out, as proto3 JSON does).
    assert_eq!(created["upgradeSettings"], json!({"maxSurge": 1}));
    let ds = r#"{"apiVersion": "apps/v1", "kind": "DaemonSet",
        "metadata": {"name": "agent", "namespace": "default"},
        "spec": {"selector": {"matchLabels": {"app": "agent"}},
                 "template": {"metadata": {"labels": {"app": "agent"}},
                              "spec": {"nodeSelector": {"cloud.google.com/gke-nodepool": "work"},
                                       "containers": [{"name": "a", "image": "busybox"}]}}}}"#;
    kubectl.run(&["apply", "-f", "-"], Some(ds)).await;
    sim.advance_secs(30.0);
    let before: Vec<String> = kubectl.nodes().await.into_iter().map(|n| n.name).collect();
    assert_eq!(before.len(), 4);

    let op = upgrade(&cli).await;
    // After the first surge node: 5 nodes, one old cordoned, the pool still at the old version.
    sim.advance_secs(61.0);
    let nodes = kubectl.nodes().await;
    assert_eq!(nodes.len(), 5, "{nodes:?}");
    assert_eq!(nodes.iter().filter(|n| n.cordoned).count(), 1, "{nodes:?}");
    let during = pool(&cli).await;
    assert_eq!(during["status"], "RECONCILING", "{during}");
    assert_eq!(during["version"], OLD, "{during}");
    let described = operation(&cli, &op).await;
    assert_eq!(described["status"], "RUNNING");
    assert_eq!(metric(&described, "NODES_DONE"), 0, "{described}");
    assert!(
        described["detail"]
            .as_str()
            .unwrap_or("")
            .starts_with("Updating work, done with 0 out of 4 nodes"),
        "{described}"
    );
    // The one-operation-per-cluster rule holds while it runs.
    let (ok, _, err) = update_pool(
        &cli,
        &["--max-surge-upgrade=2", "--max-unavailable-upgrade=0"],
    )
    .await;
    assert!(!ok && err.contains("incompatible operation"), "{err}");

    let (seen, done) = watch(&sim, &cli, &kubectl, &op, 15.0, 1200.0).await;
    assert!(seen.min_available >= 4, "{seen:?}");
    assert!(seen.max_nodes <= 5, "{seen:?}");
    assert!(seen.mixed && seen.steps > 4, "{seen:?}");
    assert!(done["error"].is_null(), "{done}");
    assert_eq!(metric(&done, "NODES_DONE"), 4, "{done}");
    assert_eq!(metric(&done, "NODES_COMPLETE"), 4, "{done}");
    let after = kubectl.nodes().await;
    assert_eq!(after.len(), 4, "{after:?}");
    assert!(
        after
            .iter()
            .all(|n| n.version == format!("v{NEW}") && n.ready && !n.cordoned),
        "{after:?}"
    );
    assert!(after.iter().all(|n| !before.contains(&n.name)), "{after:?}");
    let finished = pool(&cli).await;
    assert_eq!(
        (finished["status"].as_str(), finished["version"].as_str()),
        (Some("RUNNING"), Some(NEW)),
        "{finished}"
    );
    // The DaemonSet follows the new nodes.
    sim.advance_secs(30.0);
    let ds: Value = serde_json::from_str(
        &kubectl
            .run(&["get", "daemonset", "agent", "-o", "json"], None)
            .await,
    )
    .unwrap();
    assert_eq!(ds["status"]["desiredNumberScheduled"], 4, "{ds}");
    assert_eq!(ds["status"]["numberReady"], 4, "{ds}");
}

#[tokio::test]
async fn max_unavailable_one_recreates_nodes_in_place_never_more_than_one_down() {
    let (sim, cli, kubectl) = setup(CapacityConfig::default()).await;
    work_pool(&cli, &[]).await;
    let (ok, _, err) = update_pool(
        &cli,
        &["--max-surge-upgrade=0", "--max-unavailable-upgrade=1"],
    )
    .await;
    assert!(ok, "{err}");
    sim.advance_secs(600.0);
    let settings = pool(&cli).await["upgradeSettings"].clone();
    assert_eq!(
        (
            settings["maxSurge"].as_i64().unwrap_or(0),
            &settings["maxUnavailable"]
        ),
        (0, &json!(1)),
        "{settings}"
    );
    let op = upgrade(&cli).await;
    let (seen, done) = watch(&sim, &cli, &kubectl, &op, 15.0, 1200.0).await;
    assert!(seen.min_available >= 3, "{seen:?}");
    assert!(seen.max_nodes <= 4, "{seen:?}");
    assert!(seen.mixed && seen.cordoned, "{seen:?}");
    assert!(done["error"].is_null(), "{done}");
    let after = kubectl.nodes().await;
    assert!(
        after.len() == 4 && after.iter().all(|n| n.version == format!("v{NEW}")),
        "{after:?}"
    );
}

#[tokio::test]
async fn a_blue_green_upgrade_creates_the_green_pool_then_drains_blue_in_batches() {
    let (sim, cli, kubectl) = setup(CapacityConfig::default()).await;
    work_pool(&cli, &[]).await;
    let (ok, _, err) = update_pool(
        &cli,
        &[
            "--enable-blue-green-upgrade",
            "--standard-rollout-policy=batch-node-count=1,batch-soak-duration=10s",
            "--node-pool-soak-duration=30s",
        ],
    )
    .await;
    assert!(ok, "{err}");
    sim.advance_secs(600.0);
    let settings = pool(&cli).await["upgradeSettings"].clone();
    assert_eq!(settings["strategy"], "BLUE_GREEN", "{settings}");
    assert_eq!(
        settings["blueGreenSettings"],
        json!({"nodePoolSoakDuration": "30s",
               "standardRolloutPolicy": {"batchNodeCount": 1, "batchSoakDuration": "10s"}}),
        "{settings}"
    );
    let op = upgrade(&cli).await;
    sim.advance_secs(1.0);
    assert_eq!(
        pool(&cli).await["updateInfo"]["blueGreenInfo"]["phase"],
        "CREATING_GREEN_POOL"
    );
    sim.advance_secs(60.0);
    // The whole green set, every blue node cordoned.
    let nodes = kubectl.nodes().await;
    assert_eq!(nodes.len(), 8, "{nodes:?}");
    let cordoned: Vec<&Node> = nodes.iter().filter(|n| n.cordoned).collect();
    assert_eq!(cordoned.len(), 4, "{nodes:?}");
    assert!(cordoned.iter().all(|n| n.version == format!("v{OLD}")));
    let info = pool(&cli).await["updateInfo"]["blueGreenInfo"].clone();
    assert_eq!(
        (info["phase"].as_str(), info["greenPoolVersion"].as_str()),
        (Some("DRAINING_BLUE_POOL"), Some(NEW)),
        "{info}"
    );
    // Four batches of one (30 s drain + 10 s soak), then the 30 s pool soak.
    sim.advance_secs(4.0 * 40.0);
    let info = pool(&cli).await["updateInfo"]["blueGreenInfo"].clone();
    assert_eq!(info["phase"], "NODE_POOL_SOAKING", "{info}");
    assert_eq!(metric(&operation(&cli, &op).await, "NODES_DONE"), 4);
    let (seen, done) = watch(&sim, &cli, &kubectl, &op, 10.0, 600.0).await;
    assert!(seen.min_available >= 4 && seen.max_nodes == 8, "{seen:?}");
    assert!(done["error"].is_null(), "{done}");
    let after = kubectl.nodes().await;
    assert!(
        after.len() == 4
            && after
                .iter()
                .all(|n| n.version == format!("v{NEW}") && !n.cordoned),
        "{after:?}"
    );
    let finished = pool(&cli).await;
    assert!(finished["updateInfo"].is_null(), "{finished}");
    assert_eq!(finished["version"], NEW);
    // Back to surge.
    let (ok, _, err) = update_pool(&cli, &["--enable-surge-upgrade"]).await;
    assert!(ok, "{err}");
    sim.advance_secs(600.0);
    assert_eq!(pool(&cli).await["upgradeSettings"]["strategy"], "SURGE");
}

#[tokio::test]
async fn a_surge_upgrade_in_a_full_reservation_waits_then_fails_keeping_the_pool() {
    let (sim, cli, kubectl) = setup(CapacityConfig::default().with_stockout_wait(600.0)).await;
    cli.ok(&[
        "compute",
        "reservations",
        "create",
        "full",
        "--zone=us-central1-a",
        "--vm-count=4",
        "--machine-type=e2-standard-4",
        "--require-specific-reservation",
    ])
    .await;
    work_pool(
        &cli,
        &["--reservation-affinity=specific", "--reservation=full"],
    )
    .await;
    let op = upgrade(&cli).await;
    sim.advance_secs(300.0);
    let described = operation(&cli, &op).await;
    assert_eq!(described["status"], "RUNNING", "{described}");
    assert_eq!(metric(&described, "NODES_DONE"), 0);
    let nodes = kubectl.nodes().await;
    assert!(
        nodes.len() == 4
            && nodes
                .iter()
                .all(|n| n.version == format!("v{OLD}") && !n.cordoned),
        "{nodes:?}"
    );
    sim.advance_secs(400.0);
    let failed = operation(&cli, &op).await;
    assert_eq!(failed["status"], "DONE", "{failed}");
    let message = failed["statusMessage"].as_str().unwrap_or("");
    assert!(
        message.contains("Expected 1, running 0")
            && message.contains("[CONDITION_NOT_MET]: Instance 'gke-c1-work-")
            && message.ends_with(
                "creation failed: Specified reservation 'full' does not have available \
                 resources for the request."
            ),
        "{message}"
    );
    assert_eq!(metric(&failed, "NODES_DONE"), 0);
    let after = pool(&cli).await;
    assert_eq!(after["status"], "RUNNING_WITH_ERROR", "{after}");
    assert_eq!(after["version"], OLD);
    assert_eq!(after["statusMessage"].as_str(), Some(message));
    let in_use = cli
        .json(&[
            "compute",
            "reservations",
            "describe",
            "full",
            "--zone=us-central1-a",
        ])
        .await;
    assert_eq!(in_use["specificReservation"]["inUseCount"], "4", "{in_use}");
    // With room for nodes to go one at a time, the same upgrade goes through.
    let (ok, _, err) = update_pool(
        &cli,
        &["--max-surge-upgrade=0", "--max-unavailable-upgrade=1"],
    )
    .await;
    assert!(ok, "{err}");
    sim.advance_secs(600.0);
    let op = upgrade(&cli).await;
    let (_, done) = watch(&sim, &cli, &kubectl, &op, 30.0, 1200.0).await;
    assert!(done["error"].is_null(), "{done}");
    assert_eq!(pool(&cli).await["version"], NEW);
}

#[tokio::test]
async fn upgrade_settings_are_checked() {
    let (_sim, cli, _kubectl) = setup(CapacityConfig::default()).await;
    work_pool(&cli, &[]).await;
    let refused = |flags: &'static [&'static str], text: &'static str| {
        let cli = &cli;
        async move {
            let (ok, _, err) = update_pool(cli, flags).await;
            assert!(!ok, "{flags:?} was accepted");
            assert!(err.contains(text), "{flags:?}: {err}");
        }
    };
    refused(
        &["--max-surge-upgrade=0", "--max-unavailable-upgrade=0"],
        "upgrade_settings.max_surge and upgrade_settings.max_unavailable cannot both be 0.",
    )
    .await;
    refused(
        &["--enable-surge-upgrade", "--enable-blue-green-upgrade"],
        "UpgradeSettings must contain only one of: --enable-surge-upgrade, \
         --enable-blue-green-upgrade",
    )
    .await;
    refused(
        &[
            "--enable-blue-green-upgrade",
            "--standard-rollout-policy=batch-percent=1.5",
        ],
        "batch_percentage must be in (0.0, 1.0], got 1.5.",
    )
    .await;
    refused(
        &[
            "--enable-blue-green-upgrade",
            "--standard-rollout-policy=batch-node-count=1,batch-percent=0.5",
        ],
        // gcloud's own check (the API's is a unit test of `upgrades::check_settings`).
        "StandardRolloutPolicy must contain only one of: batch-node-count, batch-percent",
    )
    .await;
    refused(
        &[
            "--enable-blue-green-upgrade",
            "--node-pool-soak-duration=soon",
        ],
        "node_pool_soak_duration",
    )
    .await;
    // Nothing was stored.
    assert_eq!(pool(&cli).await["upgradeSettings"], json!({"maxSurge": 1}));
}

#[tokio::test]
async fn an_upgrade_goes_on_after_the_persisted_world_is_reloaded() {
    let dir = tempfile::tempdir().unwrap();
    let config = SimConfig {
        persist: Some(dir.path().join("world.json")),
        ..config(CapacityConfig::default())
    };
    let sim = a3ctl_sim::start(config.clone()).await.unwrap();
    cluster(&sim).await;
    let cli = Gcloud::new(&sim);
    work_pool(&cli, &[]).await;
    let op = upgrade(&cli).await;
    // Two batches of 90 s, and the third's surge node.
    sim.advance_secs(245.0);
    let kubectl = Kubectl::new(&sim).await;
    let midway = kubectl.nodes().await;
    assert_eq!(
        metric(&operation(&cli, &op).await, "NODES_DONE"),
        2,
        "{midway:?}"
    );
    drop(sim);

    let sim = a3ctl_sim::start(config).await.unwrap();
    let cli = Gcloud::new(&sim);
    let kubectl = Kubectl::new(&sim).await;
    let reloaded = kubectl.nodes().await;
    let names = |nodes: &[Node]| {
        let mut v: Vec<(String, String, bool)> = nodes
            .iter()
            .map(|n| (n.name.clone(), n.version.clone(), n.cordoned))
            .collect();
        v.sort();
        v
    };
    assert_eq!(names(&reloaded), names(&midway));
    let described = operation(&cli, &op).await;
    assert_eq!(described["status"], "RUNNING", "{described}");
    assert_eq!(metric(&described, "NODES_DONE"), 2);
    let (seen, done) = watch(&sim, &cli, &kubectl, &op, 15.0, 600.0).await;
    assert!(seen.min_available >= 4, "{seen:?}");
    assert!(done["error"].is_null(), "{done}");
    let after = kubectl.nodes().await;
    assert!(
        after.len() == 4 && after.iter().all(|n| n.version == format!("v{NEW}")),
        "{after:?}"
    );
}

#[tokio::test]
async fn a_fault_midway_fails_the_upgrade_leaving_mixed_versions() {
    let (sim, cli, kubectl) = setup(CapacityConfig::default()).await;
    work_pool(&cli, &[]).await;
    let op = upgrade(&cli).await;
    // One batch done (60 s surge + 30 s drain), the second not started yet at 90 s.
    sim.advance_secs(89.0);
    sim.set_faults(FaultConfig {
        scripted: vec![ScriptedFault {
            kind: "container.nodePool".into(),
            verb: "upgrade".into(),
            nth: 1,
            action: FaultAction::Named(NamedFault::Stockout),
        }],
        ..FaultConfig::default()
    });
    sim.advance_secs(5.0);
    let failed = operation(&cli, &op).await;
    assert_eq!(failed["status"], "DONE", "{failed}");
    assert!(
        failed["statusMessage"]
            .as_str()
            .unwrap_or("")
            .contains("[GCE_STOCKOUT]"),
        "{failed}"
    );
    assert_eq!(metric(&failed, "NODES_DONE"), 1, "{failed}");
    assert_eq!(metric(&failed, "NODES_FAILED"), 1, "{failed}");
    let after = pool(&cli).await;
    assert_eq!(
        (after["status"].as_str(), after["version"].as_str()),
        (Some("RUNNING_WITH_ERROR"), Some(OLD)),
        "{after}"
    );
    let nodes = kubectl.nodes().await;
    let new = nodes
        .iter()
        .filter(|n| n.version == format!("v{NEW}"))
        .count();
    assert_eq!((nodes.len(), new), (4, 1), "{nodes:?}");
    assert!(nodes.iter().all(|n| n.ready && !n.cordoned), "{nodes:?}");
    // A new upgrade may start: the cluster runs no operation.
    sim.set_faults(FaultConfig::default());
    let op = upgrade(&cli).await;
    let (_, done) = watch(&sim, &cli, &kubectl, &op, 15.0, 1200.0).await;
    assert!(done["error"].is_null(), "{done}");
    let finished = pool(&cli).await;
    assert_eq!(
        (finished["status"].as_str(), finished["version"].as_str()),
        (Some("RUNNING"), Some(NEW)),
        "{finished}"
    );
}
