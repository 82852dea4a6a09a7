//! Kueue end to end: the real binary installs the release manifests (the v0.12.2 manifests of the
//! reference, from a local file pinned by sha256, or the simulator's generated release through the
//! GitHub endpoint), then the queue objects; kubectl, as an independent client, checks what the
//! cluster holds. Covers the webhook race, a wrong pin, drift inside the release, pruning on
//! upgrade and uninstalling.

use crate::common;

use a3ctl_sim::SimConfig;
use a3ctl_sim::faults::{FaultAction, FaultConfig, NamedFault, ScriptedFault};
use a3ctl_sim::latency::Span;
use common::TestContext;
use common::kubectl::Kubectl;
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::time::Duration;

/// `../shared/reference/kueue/...` beside the project, found from the crate upwards.
fn reference_manifests() -> std::path::PathBuf {
    let relative = "shared/reference/kueue/kueue-v0.12.2-manifests.yaml";
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .map(|dir| dir.join(relative))
        .find(|path| path.exists())
        .expect("the Kueue manifests are in ../shared/reference/kueue")
}

fn sha256_of(path: &std::path::Path) -> String {
    Sha256::digest(std::fs::read(path).unwrap())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The shipped A3 High blueprint with its `[software.kueue]` section replaced by `kueue`.
fn a3_high_with(cx: &TestContext, file: &str, kueue: &str) -> String {
    let text = std::fs::read_to_string(cx.path("blueprints/a3-high.toml")).unwrap();
    let edited = text.replace(
        "[software.kueue]\nenabled = true\nqueue = \"a3-queue\"\n",
        &format!("[software.kueue]\n{kueue}\n"),
    );
    assert_ne!(
        edited, text,
        "the shipped blueprint has the expected Kueue section"
    );
    let path = format!("blueprints/{file}");
    cx.write(&path, &edited);
    path
}

fn state(cx: &TestContext) -> Value {
    serde_json::from_slice(&std::fs::read(cx.path("state/a3high.a3state.json")).unwrap()).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_pinned_reference_release_installs_and_the_queue_admits_every_gpu() {
    let cx = TestContext::new().await;
    let manifests = reference_manifests();
    let sha = sha256_of(&manifests);
    let bp = a3_high_with(
        &cx,
        "kueue-012.toml",
        &format!(
            "version = \"v0.12.2\"\nmanifest = \"{}\"\nsha256 = \"{sha}\"",
            manifests.display()
        ),
    );
    cx.run(&["apply", &bp, "--auto-approve"]).await.expect(0);
    let kubectl = Kubectl::for_cluster(&cx, "a3high").await;

    let crds = kubectl.items(&["customresourcedefinitions"]).await;
    let kueue: Vec<&Value> = crds
        .iter()
        .filter(|c| c["spec"]["group"] == "kueue.x-k8s.io")
        .collect();
    assert_eq!(kueue.len(), 11);
    for crd in &kueue {
        let established = crd["status"]["conditions"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["type"] == "Established" && c["status"] == "True");
        assert!(established, "{}", crd["metadata"]["name"]);
    }
    let deployment = kubectl.items(&["deployments", "-n", "kueue-system"]).await;
    assert_eq!(
        deployment[0]["metadata"]["name"],
        "kueue-controller-manager"
    );
    assert_eq!(
        deployment[0]["spec"]["template"]["spec"]["containers"][0]["image"],
        "registry.k8s.io/kueue/kueue:v0.12.2"
    );

    let queues = kubectl.items(&["clusterqueues.kueue.x-k8s.io"]).await;
    assert_eq!(queues.len(), 1);
    let queue = &queues[0];
    assert_eq!(queue["metadata"]["name"], "a3-queue");
    // 4 nodes × 8 GPUs, one flavor for the one GPU pool.
    let flavors = &queue["spec"]["resourceGroups"][0]["flavors"];
    assert_eq!(flavors[0]["name"], "a3high");
    assert_eq!(flavors[0]["resources"][0]["name"], "nvidia.com/gpu");
    assert_eq!(flavors[0]["resources"][0]["nominalQuota"], 32);
    assert_eq!(queue["status"]["conditions"][0]["type"], "Active");
    assert_eq!(queue["status"]["conditions"][0]["status"], "True");
    let local = kubectl
        .items(&["localqueues.kueue.x-k8s.io", "-n", "default"])
        .await;
    assert_eq!(local[0]["spec"]["clusterQueue"], "a3-queue");
    // Topology is v1alpha1 in the v0.12 line.
    let topology = kubectl.items(&["topologies.v1alpha1.kueue.x-k8s.io"]).await;
    assert_eq!(topology[0]["metadata"]["name"], "gke-default");
    assert_eq!(
        topology[0]["spec"]["levels"][0]["nodeLabel"],
        "cloud.google.com/gce-topology-block"
    );
    // The flavor selects the label a3ctl puts on the pool's nodes, and the nodes carry it.
    let flavor = kubectl.items(&["resourceflavors.kueue.x-k8s.io"]).await;
    assert_eq!(flavor[0]["spec"]["nodeLabels"]["a3ctl.dev/pool"], "a3high");
    assert_eq!(
        kubectl
            .names(&["nodes", "-l", "a3ctl.dev/pool=a3high"])
            .await
            .len(),
        4
    );
    let mut classes = kubectl.names(&["priorityclasses"]).await;
    classes.retain(|c| !c.starts_with("system-"));
    assert_eq!(classes, ["high", "low", "medium", "very-high", "very-low"]);

    // The release is recorded with its digest and every object, no secrets.
    let st = state(&cx);
    let release = &st["resources"]["k8s.release/-/kueue"];
    assert_eq!(release["outputs"]["sha256"], sha.as_str());
    assert_eq!(release["outputs"]["objects"].as_array().unwrap().len(), 66);
    cx.run(&["plan", &bp, "--detailed-exitcode"])
        .await
        .expect(0);

    // The controller deleted behind a3ctl's back: drift, then repaired.
    let (ok, _, err) = kubectl
        .run(&[
            "delete",
            "deployment",
            "kueue-controller-manager",
            "-n",
            "kueue-system",
        ])
        .await;
    assert!(ok, "{err}");
    let plan = cx
        .run(&["plan", &bp, "--detailed-exitcode"])
        .await
        .expect(2);
    assert!(
        plan.stdout
            .contains("Deployment kueue-system/kueue-controller-manager"),
        "{}",
        plan.stdout
    );
    assert!(
        plan.stdout
            .contains("# k8s.release/-/kueue will be updated in-place"),
        "{}",
        plan.stdout
    );
    cx.run(&["apply", &bp, "--auto-approve"]).await.expect(0);
    assert_eq!(
        kubectl.names(&["deployments", "-n", "kueue-system"]).await,
        ["kueue-controller-manager"]
    );
    cx.run(&["plan", &bp, "--detailed-exitcode"])
        .await
        .expect(0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pin_that_does_not_match_stops_kueue_and_only_kueue() {
    let cx = TestContext::new().await;
    let manifests = reference_manifests();
    let bp = a3_high_with(
        &cx,
        "bad-pin.toml",
        &format!(
            "version = \"v0.12.2\"\nmanifest = \"{}\"\nsha256 = \"{}\"",
            manifests.display(),
            "0".repeat(64)
        ),
    );
    let run = cx.run(&["apply", &bp, "--auto-approve"]).await.expect(1);
    assert!(run.stderr.contains("have sha256"), "{}", run.stderr);
    assert!(
        run.stderr
            .contains(&format!("but the blueprint pins {}", "0".repeat(64))),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("hint:"), "{}", run.stderr);
    let kubectl = Kubectl::for_cluster(&cx, "a3high").await;
    assert!(
        kubectl
            .names(&["namespaces"])
            .await
            .iter()
            .all(|n| n != "kueue-system")
    );
    // Everything that does not need Kueue was applied.
    assert_eq!(
        kubectl.items(&["networks.networking.gke.io"]).await.len(),
        5
    );
    let st = state(&cx);
    assert!(st["resources"].get("k8s.release/-/kueue").is_none());
    assert!(st["resources"].get("k8s.priorityclass/-/high").is_some());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn queue_objects_refused_by_the_starting_webhook_are_retried_until_it_answers() {
    // Every operation is instant except Kueue's webhook, which answers 30 simulated seconds
    // after its controller is available: on a manual clock, never until the test moves it.
    let mut config = SimConfig::default();
    config
        .latency
        .spans
        .insert("kube.webhook.ready".into(), Span::Fixed(30.0));
    let cx = TestContext::with(config).await;
    let mut apply = cx.command(&["apply", "blueprints/a3-high.toml", "--auto-approve"]);
    // Retries spread over seconds, so the test has time to see the refusal and move the clock.
    apply.env("A3CTL_POLL_INTERVAL_MS", "100");
    let child = apply
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let requests = format!("{}/_sim/requests", cx.sim.base_url());
    let refused = async {
        loop {
            let log: Value = reqwest::get(&requests).await.unwrap().json().await.unwrap();
            let hit = log["entries"].as_array().unwrap().iter().any(|e| {
                e["status"] == 500
                    && e["path"]
                        .as_str()
                        .unwrap_or("")
                        .contains("/apis/kueue.x-k8s.io/")
            });
            if hit {
                return;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    };
    tokio::time::timeout(Duration::from_secs(120), refused)
        .await
        .expect("the webhook refused a queue object");
    cx.sim.advance_secs(60.0);
    let out = child.wait_with_output().await.unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("Apply complete!"), "{stderr}");
    let kubectl = Kubectl::for_cluster(&cx, "a3high").await;
    assert_eq!(
        kubectl.names(&["clusterqueues.kueue.x-k8s.io"]).await,
        ["a3-queue"]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_release_prunes_what_it_dropped_and_disabling_kueue_removes_it() {
    let cx = TestContext::new().await;
    // The simulator's v0.17.1 release, saved locally with one extra object.
    let url = format!(
        "{}/github/kubernetes-sigs/kueue/releases/download/v0.17.1/manifests.yaml",
        cx.sim.base_url()
    );
    let release = reqwest::get(&url).await.unwrap().text().await.unwrap();
    let extra = "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: extra\n  namespace: kueue-system\ndata:\n  a: \"1\"\n";
    cx.write("kueue-a.yaml", &format!("{release}{extra}"));
    cx.write("kueue-b.yaml", &release);
    let first = a3_high_with(
        &cx,
        "kueue-a.toml",
        "version = \"v0.17.1\"\nmanifest = \"kueue-a.yaml\"",
    );
    cx.run(&["apply", &first, "--auto-approve"]).await.expect(0);
    let kubectl = Kubectl::for_cluster(&cx, "a3high").await;
    assert!(
        kubectl
            .names(&["configmaps", "-n", "kueue-system"])
            .await
            .contains(&"extra".to_string())
    );
    // v0.17 queues are written as v1beta2.
    let queue = kubectl
        .items(&["clusterqueues.v1beta2.kueue.x-k8s.io"])
        .await;
    assert_eq!(queue[0]["apiVersion"], "kueue.x-k8s.io/v1beta2");

    let second = a3_high_with(
        &cx,
        "kueue-b.toml",
        "version = \"v0.17.1\"\nmanifest = \"kueue-b.yaml\"",
    );
    let plan = cx.run(&["plan", &second]).await.expect(0);
    assert!(
        plan.stdout
            .contains("~ release.manifest.location = \"kueue-a.yaml\" -> \"kueue-b.yaml\""),
        "{}",
        plan.stdout
    );
    cx.run(&["apply", &second, "--auto-approve"])
        .await
        .expect(0);
    assert!(
        !kubectl
            .names(&["configmaps", "-n", "kueue-system"])
            .await
            .contains(&"extra".to_string())
    );

    let off = a3_high_with(&cx, "kueue-off.toml", "enabled = false");
    let plan = cx.run(&["plan", &off]).await.expect(0);
    assert!(
        plan.stdout
            .contains("Plan: 0 to add, 0 to change, 10 to destroy."),
        "{}",
        plan.stdout
    );
    cx.run(&["apply", &off, "--auto-approve"]).await.expect(0);
    assert!(
        kubectl
            .names(&["namespaces"])
            .await
            .iter()
            .all(|n| n != "kueue-system")
    );
    let crds = kubectl.items(&["customresourcedefinitions"]).await;
    assert!(crds.iter().all(|c| c["spec"]["group"] != "kueue.x-k8s.io"));
    assert!(
        kubectl
            .names(&["priorityclasses"])
            .await
            .iter()
            .all(|n| n.starts_with("system-"))
    );
    cx.run(&["plan", &off, "--detailed-exitcode"])
        .await
        .expect(0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_release_that_does_not_exist_or_a_missing_file_fails_kueue_with_the_reason() {
    let cx = TestContext::new().await;
    // A tag with no release: GitHub (here the simulator) answers 404.
    let missing = a3_high_with(&cx, "no-release.toml", "version = \"v0.8.0\"");
    let run = cx
        .run(&["apply", &missing, "--auto-approve"])
        .await
        .expect(1);
    assert!(
        run.stderr
            .contains("error: Failed to create `k8s.release/-/kueue`"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr
            .contains("/kubernetes-sigs/kueue/releases/download/v0.8.0/manifests.yaml does not exist (404): is `v0.8.0` a kueue release?"),
        "{}",
        run.stderr
    );
    // A local file that is not there.
    let file = a3_high_with(
        &cx,
        "no-file.toml",
        "version = \"v0.17.1\"\nmanifest = \"vendor/kueue.yaml\"",
    );
    let run = cx.run(&["apply", &file, "--auto-approve"]).await.expect(1);
    assert!(
        run.stderr
            .contains("cannot read the kueue manifests `vendor/kueue.yaml`"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr
            .contains("`manifest` paths are relative to the directory a3ctl runs in"),
        "{}",
        run.stderr
    );
    // Everything else of the blueprint is in place; nothing of Kueue is.
    let st = state(&cx);
    assert!(st["resources"].get("k8s.release/-/kueue").is_none());
    assert!(st["resources"].get("k8s.network/-/vpc4").is_some());
}

/// The shipped A3 High blueprint (one GPU pool, `a3high`, Kueue on) with the GPU pool at `nodes`.
fn a3_high_nodes(cx: &TestContext, nodes: u32) -> String {
    let text = std::fs::read_to_string(cx.path("blueprints/a3-high.toml")).unwrap();
    let edited = text.replace(
        "machine_type = \"a3-highgpu-8g\"\nnodes = 4\n",
        &format!("machine_type = \"a3-highgpu-8g\"\nnodes = {nodes}\n"),
    );
    assert!(
        edited != text || nodes == 4,
        "the shipped blueprint has the expected GPU pool"
    );
    let path = format!("blueprints/a3high-{nodes}.toml");
    cx.write(&path, &edited);
    path
}

/// Where the request log holds the first request matching `method` and `path` (a substring), from
/// `from` on.
fn position(log: &[Value], from: usize, method: &str, path: &str) -> Option<usize> {
    log.iter()
        .enumerate()
        .skip(from)
        .find(|(_, e)| e["method"] == method && e["path"].as_str().unwrap_or("").contains(path))
        .map(|(i, _)| i)
}

/// The ClusterQueue's writes (not reads) in the request log, from `from` on.
fn queue_writes(log: &[Value], from: usize) -> Vec<usize> {
    log.iter()
        .enumerate()
        .skip(from)
        .filter(|(_, e)| {
            e["method"] != "GET"
                && e["path"]
                    .as_str()
                    .unwrap_or("")
                    .contains("/apis/kueue.x-k8s.io/v1beta2/clusterqueues")
        })
        .map(|(i, _)| i)
        .collect()
}

const SET_SIZE: &str = "/nodePools/a3high:setSize";

/// The request log's index of the last operation read after `set_size` (or a pool's create): the
/// one that read that operation DONE, at the latest, so a request after it follows the DONE.
fn resize_done(log: &[Value], set_size: usize) -> usize {
    log.iter()
        .enumerate()
        .skip(set_size + 1)
        .rfind(|(_, e)| {
            e["method"] == "GET" && e["path"].as_str().unwrap_or("").contains("/operations/")
        })
        .map(|(i, _)| i)
        .expect("the resize operation is polled")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_raised_quota_follows_the_resize_and_a_lowered_one_goes_first() {
    let (cx, two, kubectl) = applied_with_two_nodes().await;
    assert_eq!(gpu_quota(&kubectl).await, 16);

    // 2 → 4 nodes: the quota is written once the resize operation reads DONE.
    let start = common::request_log(&cx).await.len();
    let four = a3_high_nodes(&cx, 4);
    cx.run(&["apply", &four, "--auto-approve"]).await.expect(0);
    let log = common::request_log(&cx).await;
    let set_size = position(&log, start, "POST", SET_SIZE).expect("the pool is resized");
    let writes = queue_writes(&log, start);
    assert_eq!(writes.len(), 1, "one ClusterQueue write");
    assert!(
        writes[0] > resize_done(&log, set_size),
        "the quota is raised after the resize is DONE: {:?}",
        &log[set_size..=writes[0]]
    );
    assert_eq!(gpu_quota(&kubectl).await, 32);

    // 4 → 2 nodes: the quota is lowered before the resize starts.
    let start = log.len();
    cx.run(&["apply", &two, "--auto-approve"]).await.expect(0);
    let log = common::request_log(&cx).await;
    let set_size = position(&log, start, "POST", SET_SIZE).expect("the pool is resized");
    let writes = queue_writes(&log, start);
    assert_eq!(writes.len(), 1, "one ClusterQueue write");
    assert!(writes[0] < set_size, "the quota is lowered first");
    assert_eq!(gpu_quota(&kubectl).await, 16);
    cx.run(&["plan", &two, "--detailed-exitcode"])
        .await
        .expect(0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_scale_up_leaves_the_quota_at_what_exists_and_the_next_apply_converges() {
    let (cx, _two, kubectl) = applied_with_two_nodes().await;

    // The resize runs out of capacity: the quota is not raised.
    cx.sim.set_faults(FaultConfig {
        scripted: vec![ScriptedFault {
            kind: "container.nodePool".into(),
            verb: "update".into(),
            nth: 1,
            action: FaultAction::Named(NamedFault::Stockout),
        }],
        ..FaultConfig::default()
    });
    let start = common::request_log(&cx).await.len();
    let four = a3_high_nodes(&cx, 4);
    let failed = cx.run(&["apply", &four, "--auto-approve"]).await;
    assert_ne!(failed.code, Some(0), "{}", failed.stderr);
    assert!(failed.stderr.contains("GCE_STOCKOUT"), "{}", failed.stderr);
    let log = common::request_log(&cx).await;
    assert!(position(&log, start, "POST", SET_SIZE).is_some());
    assert_eq!(
        queue_writes(&log, start),
        Vec::<usize>::new(),
        "no ClusterQueue write"
    );
    assert_eq!(gpu_quota(&kubectl).await, 16);

    // Capacity is back: the next apply resizes, then raises the quota.
    cx.sim.set_faults(FaultConfig::default());
    let start = log.len();
    cx.run(&["apply", &four, "--auto-approve"]).await.expect(0);
    let log = common::request_log(&cx).await;
    let writes = queue_writes(&log, start);
    assert_eq!(writes.len(), 1, "one ClusterQueue write");
    let set_size = position(&log, start, "POST", SET_SIZE).expect("the pool is resized again");
    assert!(writes[0] > resize_done(&log, set_size));
    assert_eq!(gpu_quota(&kubectl).await, 32);
    cx.run(&["plan", &four, "--detailed-exitcode"])
        .await
        .expect(0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn targeting_keeps_a_pool_and_the_quota_that_follows_it_together() {
    let (cx, _two, kubectl) = applied_with_two_nodes().await;
    let four = a3_high_nodes(&cx, 4);

    // Excluding the pool leaves its quota alone: no ClusterQueue write.
    let start = common::request_log(&cx).await.len();
    cx.run(&[
        "apply",
        &four,
        "--auto-approve",
        "--exclude",
        "node_pool.a3high",
    ])
    .await
    .expect(0);
    let log = common::request_log(&cx).await;
    assert_eq!(position(&log, start, "POST", SET_SIZE), None);
    assert_eq!(queue_writes(&log, start), Vec::<usize>::new());
    assert_eq!(gpu_quota(&kubectl).await, 16);

    // Excluding the queue while the pool grows is refused, naming both.
    let refused = cx
        .run(&["plan", &four, "--exclude", "k8s.clusterqueue/-/a3-queue"])
        .await;
    assert_ne!(refused.code, Some(0));
    assert!(
        refused.stderr.contains(
            "`--exclude k8s.clusterqueue/-/a3-queue` conflicts with the change of node_pool.a3high: the GPU quota of k8s.clusterqueue/-/a3-queue follows node_pool.a3high's size"
        ),
        "{}",
        refused.stderr
    );

    // Targeting the pool brings the quota, raised once the resize is DONE.
    let start = common::request_log(&cx).await.len();
    cx.run(&[
        "apply",
        &four,
        "--auto-approve",
        "--target",
        "node_pool.a3high",
    ])
    .await
    .expect(0);
    let log = common::request_log(&cx).await;
    let set_size = position(&log, start, "POST", SET_SIZE).expect("the pool is resized");
    let writes = queue_writes(&log, start);
    assert_eq!(writes.len(), 1);
    assert!(writes[0] > resize_done(&log, set_size));
    assert_eq!(gpu_quota(&kubectl).await, 32);
    cx.run(&["plan", &four, "--detailed-exitcode"])
        .await
        .expect(0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn destroying_a_pool_lowers_its_quota_first_and_recreating_it_raises_it_after() {
    let (cx, two, kubectl) = applied_with_two_nodes().await;

    let start = common::request_log(&cx).await.len();
    let run = cx
        .run(&[
            "destroy",
            &two,
            "--auto-approve",
            "--target",
            "node_pool.a3high",
        ])
        .await
        .expect(0);
    let log = common::request_log(&cx).await;
    let delete = position(&log, start, "DELETE", "/nodePools/a3high").expect("the pool is deleted");
    let writes = queue_writes(&log, start);
    assert_eq!(writes.len(), 1, "{}", run.stdout);
    assert!(writes[0] < delete, "the quota is lowered first");
    assert!(
        run.stdout
            .contains("# k8s.clusterqueue/-/a3-queue will be updated in-place")
            && run
                .stdout
                .contains("node_pool.a3high is destroyed: its GPUs leave the queue's quota first"),
        "{}",
        run.stdout
    );
    assert_eq!(gpu_quota(&kubectl).await, 0);

    // Created again: the quota is raised once the pool exists.
    let start = log.len();
    cx.run(&["apply", &two, "--auto-approve"]).await.expect(0);
    let log = common::request_log(&cx).await;
    let create = position(&log, start, "POST", "/clusters/a3high/nodePools").expect("created");
    let writes = queue_writes(&log, start);
    assert_eq!(writes.len(), 1);
    assert!(writes[0] > resize_done(&log, create));
    assert_eq!(gpu_quota(&kubectl).await, 16);
    cx.run(&["plan", &two, "--detailed-exitcode"])
        .await
        .expect(0);
}

/// The A3 High blueprint applied with 2 GPU nodes, and kubectl on its cluster.
async fn applied_with_two_nodes() -> (TestContext, String, Kubectl) {
    let cx = TestContext::new().await;
    let two = a3_high_nodes(&cx, 2);
    cx.run(&["apply", &two, "--auto-approve"]).await.expect(0);
    let kubectl = Kubectl::for_cluster(&cx, "a3high").await;
    (cx, two, kubectl)
}

/// The ClusterQueue's `nvidia.com/gpu` nominal quota, as the cluster holds it.
async fn gpu_quota(kubectl: &Kubectl) -> serde_json::Value {
    let queues = kubectl.items(&["clusterqueues.kueue.x-k8s.io"]).await;
    queues[0]["spec"]["resourceGroups"][0]["flavors"][0]["resources"][0]["nominalQuota"].clone()
}

const MEGA: &str = "blueprints/a3-mega.toml";
const MEGA_QUEUE: &str = "k8s.clusterqueue/-/a3-queue";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_first_apply_creates_the_queue_only_once_its_gpu_pool_is_complete() {
    let cx = TestContext::new().await;
    // Someone else holds 16 of the reservation's 32 VMs: the pool's create stops at 16 nodes.
    common::resize_mega_reservation(&cx, 16).await;
    let apply = cx
        .run(&["apply", MEGA, "--auto-approve", "--skip-preflight"])
        .await
        .expect(1);
    assert!(
        apply.stderr.contains("Expected 32, running 16")
            && apply.stderr.contains(&format!(
                "Skipped because of these failures: `{MEGA_QUEUE}`, `k8s.localqueue/default/a3-queue`\n"
            )),
        "{}",
        apply.stderr
    );
    // Kueue is up, but no queue admits 256 GPUs of work onto 128.
    let log = common::request_log(&cx).await;
    assert_eq!(
        queue_writes(&log, 0),
        Vec::<usize>::new(),
        "no ClusterQueue write"
    );
    let kubectl = Kubectl::for_cluster(&cx, "a3mega").await;
    assert_eq!(
        kubectl.items(&["clusterqueues.kueue.x-k8s.io"]).await,
        Vec::<Value>::new()
    );
    assert!(
        !kubectl
            .items(&["resourceflavors.kueue.x-k8s.io"])
            .await
            .is_empty(),
        "the flavor is there: only the quota waits"
    );

    // The reservation has room again: the next apply completes the pool, then creates the queue
    // with the pool's 256 GPUs.
    common::resize_mega_reservation(&cx, 32).await;
    let start = log.len();
    cx.run(&["apply", MEGA, "--auto-approve"]).await.expect(0);
    let log = common::request_log(&cx).await;
    let set_size =
        position(&log, start, "POST", "/nodePools/a3mega:setSize").expect("the pool is completed");
    let writes = queue_writes(&log, start);
    assert_eq!(writes.len(), 1, "one ClusterQueue write");
    assert!(
        writes[0] > resize_done(&log, set_size),
        "the queue is created once the pool is complete: {:?}",
        &log[set_size..=writes[0]]
    );
    assert_eq!(gpu_quota(&kubectl).await, 256);
    cx.run(&["plan", MEGA, "--detailed-exitcode"])
        .await
        .expect(0);
}

/// `blueprint` (a path under the test's directory) with a second on-demand GPU pool, `a3high2`,
/// of one node, written as `blueprints/two-pools.toml`.
fn with_second_pool(cx: &TestContext, blueprint: &str) -> String {
    let text = std::fs::read_to_string(cx.path(blueprint)).unwrap();
    let edited = text.replace(
        "\n[identity]\n",
        "\n[[gpu_pool]]\nname = \"a3high2\"\nmachine_type = \"a3-highgpu-8g\"\nnodes = 1\ncapacity = \"on-demand\"\n\n[identity]\n",
    );
    assert_ne!(edited, text, "the blueprint has an [identity] section");
    let path = "blueprints/two-pools.toml".to_string();
    cx.write(&path, &edited);
    path
}

/// The ClusterQueue's `nvidia.com/gpu` nominal quota per flavor, as the cluster holds it.
async fn gpu_quotas(kubectl: &Kubectl) -> Vec<(String, Value)> {
    let queues = kubectl.items(&["clusterqueues.kueue.x-k8s.io"]).await;
    queues[0]["spec"]["resourceGroups"][0]["flavors"]
        .as_array()
        .expect("the queue's flavors")
        .iter()
        .map(|f| {
            (
                f["name"].as_str().unwrap_or("").to_string(),
                f["resources"][0]["nominalQuota"].clone(),
            )
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_gpu_pool_gets_its_quota_only_once_its_create_is_done() {
    let (cx, two, kubectl) = applied_with_two_nodes().await;
    let both = with_second_pool(&cx, &two);

    // The new pool's create runs out of capacity: the queue keeps its one flavor.
    cx.sim.set_faults(FaultConfig {
        scripted: vec![ScriptedFault {
            kind: "container.nodePool".into(),
            verb: "create".into(),
            nth: 1,
            action: FaultAction::Named(NamedFault::Stockout),
        }],
        ..FaultConfig::default()
    });
    let start = common::request_log(&cx).await.len();
    let failed = cx.run(&["apply", &both, "--auto-approve"]).await;
    assert_ne!(failed.code, Some(0), "{}", failed.stderr);
    let log = common::request_log(&cx).await;
    assert!(position(&log, start, "POST", "/clusters/a3high/nodePools").is_some());
    assert_eq!(
        queue_writes(&log, start),
        Vec::<usize>::new(),
        "no ClusterQueue write"
    );
    assert_eq!(
        gpu_quotas(&kubectl).await,
        [("a3high".to_string(), 16.into())]
    );

    // Capacity is back: the quota for the new flavor is raised once the pool is up.
    cx.sim.set_faults(FaultConfig::default());
    let start = common::request_log(&cx).await.len();
    cx.run(&["apply", &both, "--auto-approve"]).await.expect(0);
    let log = common::request_log(&cx).await;
    // The pool GKE left empty is made anew beside the old one (create, nodes Ready, delete).
    let create = position(&log, start, "POST", "/clusters/a3high/nodePools")
        .expect("the new pool is created");
    let writes = queue_writes(&log, start);
    assert_eq!(writes.len(), 1, "one ClusterQueue write");
    let between = &log[create..writes[0]];
    let read = |path: &str| {
        between
            .iter()
            .any(|e| e["method"] == "GET" && e["path"].as_str().unwrap_or("").contains(path))
    };
    assert!(
        read("/operations/") && read("/api/v1/nodes"),
        "the quota is raised after the pool's create is DONE and its nodes read: {between:?}"
    );
    assert_eq!(
        gpu_quotas(&kubectl).await,
        [
            ("a3high".to_string(), 16.into()),
            ("a3high2".to_string(), 8.into())
        ]
    );
    cx.run(&["plan", &both, "--detailed-exitcode"])
        .await
        .expect(0);
}
