//! Taking over what exists: resources built by hand with gcloud (following the seed guides'
//! commands) in the simulator, then adopted (`plan --adopt`, `apply --adopt`) or imported
//! (`a3ctl import`), plan no change when they match the blueprint and a precise diff when they do
//! not; and changes made with gcloud behind a3ctl's back are accepted into state by
//! `--refresh-only` without a single mutating request.

use crate::common;

use common::gcloud::Gcloud;
use common::{Run, TestContext};
use futures_util::future::join_all;
use serde_json::Value;

const P: &str = "my-project";
const R: &str = "us-central1";
/// The nodes' service account the A3 High blueprint's `[identity]` names.
const SA: &str = "a3high-nodes@my-project.iam.gserviceaccount.com";
const BLUEPRINT: &str = "blueprints/a3-high.toml";

fn gcloud(cx: &TestContext) -> Gcloud {
    Gcloud::in_project(&cx.sim, P)
}

/// Runs gcloud commands concurrently; each must succeed.
async fn all(g: &Gcloud, commands: Vec<Vec<String>>) {
    join_all(commands.iter().map(|c| {
        let args: Vec<&str> = c.iter().map(String::as_str).collect();
        let run = g.run(&args);
        async move {
            let (ok, out, err) = run.await;
            assert!(ok, "gcloud {c:?} failed:\n{out}\n{err}");
        }
    }))
    .await;
}

fn cmd(text: &str) -> Vec<String> {
    text.split_whitespace().map(str::to_string).collect()
}

/// A network as the guides create it: custom subnet mode, MTU as given.
fn network(name: &str, mtu: u32) -> Vec<String> {
    cmd(&format!(
        "compute networks create {name} --subnet-mode=custom --mtu={mtu}"
    ))
}

fn gpu_subnet(i: usize, range: &str) -> Vec<String> {
    cmd(&format!(
        "compute networks subnets create a3high-gpunet-{i}-subnet --network=a3high-gpunet-{i} --region={R} --range={range}"
    ))
}

fn internal_firewall(name: &str, network: &str, ranges: &str) -> Vec<String> {
    cmd(&format!(
        "compute firewall-rules create {name} --network={network} --allow=tcp:0-65535,udp:0-65535,icmp --source-ranges={ranges}"
    ))
}

/// Everything `blueprints/a3-high.toml` declares in Google Cloud, built with gcloud the way the
/// seed guides do (Cluster Toolkit's names), except the Kubernetes objects.
async fn build_a3_high_by_hand(g: &Gcloud) {
    let mut first = vec![
        network("a3high-net", 8244),
        cmd(&format!(
            "compute resource-policies create group-placement a3high-a3high-placement --collocation=collocated --region={R}"
        )),
    ];
    first.extend((1..=4).map(|i| network(&format!("a3high-gpunet-{i}"), 8244)));
    all(g, first).await;
    let mut second = vec![
        cmd(&format!(
            "compute networks subnets create a3high-subnet --network=a3high-net --region={R} --range=10.0.0.0/20 --secondary-range=pods=10.4.0.0/14,services=10.0.32.0/20 --enable-private-ip-google-access"
        )),
        internal_firewall(
            "a3high-net-allow-internal",
            "a3high-net",
            "10.0.0.0/20,10.4.0.0/14,10.0.32.0/20",
        ),
        cmd(&format!(
            "compute routers create a3high-router --network=a3high-net --region={R}"
        )),
    ];
    // GPU NICs count from 1 (`vpc1`, `eth1`); their ranges are carved from 192.168.0.0/24 on.
    for i in 1..=4 {
        let range = format!("192.168.{}.0/24", i - 1);
        second.push(gpu_subnet(i, &range));
        second.push(internal_firewall(
            &format!("a3high-gpunet-{i}-allow-internal"),
            &format!("a3high-gpunet-{i}"),
            &range,
        ));
    }
    all(g, second).await;
    all(
        g,
        vec![
            cmd(&format!(
                "compute routers nats create a3high-nat --router=a3high-router --region={R} --auto-allocate-nat-external-ips --nat-all-subnet-ip-ranges"
            )),
            cmd(&format!(
                "container clusters create a3high --location={R} --node-locations={R}-c --network=a3high-net --subnetwork=a3high-subnet --enable-ip-alias --cluster-secondary-range-name=pods --services-secondary-range-name=services --enable-dataplane-v2 --enable-multi-networking --release-channel=regular --cluster-version=1.33 --enable-private-nodes --master-ipv4-cidr=172.16.0.32/28 --enable-master-authorized-networks --master-authorized-networks=203.0.113.0/24 --workload-pool={P}.svc.id.goog --num-nodes=1 --machine-type=e2-standard-4"
            )),
        ],
    )
    .await;
    // The nodes' service account and its role, as `[identity]` asks.
    let mut account = cmd("iam service-accounts create a3high-nodes");
    account.push("--display-name=a3high GKE nodes".into());
    all(g, vec![account]).await;
    all(
        g,
        vec![cmd(&format!(
            "projects add-iam-policy-binding {P} --member=serviceAccount:{SA} --role=roles/container.defaultNodeServiceAccount --condition=None"
        ))],
    )
    .await;
    // GKE runs one operation per cluster at a time: the pools one after the other.
    all(
        g,
        vec![cmd(&format!(
            "container node-pools create system --cluster=a3high --location={R} --node-locations={R}-c --machine-type=e2-standard-4 --num-nodes=2 --enable-gvnic --disk-size=100 --image-type=COS_CONTAINERD --service-account={SA}"
        ))],
    )
    .await;
    let networks: Vec<String> = (1..=4)
        .map(|i| {
            format!(
                "--additional-node-network=network=a3high-gpunet-{i},subnetwork=a3high-gpunet-{i}-subnet"
            )
        })
        .collect();
    let mut pool = cmd(&format!(
        "container node-pools create a3high --cluster=a3high --location={R} --node-locations={R}-c --machine-type=a3-highgpu-8g --num-nodes=4 --accelerator=type=nvidia-h100-80gb,count=8,gpu-driver-version=default --placement-type=COMPACT --placement-policy=a3high-a3high-placement --enable-gvnic --ephemeral-storage-local-ssd=count=16 --disk-size=200 --image-type=COS_CONTAINERD --no-enable-autoupgrade --service-account={SA}"
    ));
    pool.extend(networks);
    all(g, vec![pool]).await;
}

/// Asserts that `text` contains `part`, showing the whole text when it does not.
#[track_caller]
fn has(text: &str, part: &str) {
    assert!(text.contains(part), "expected {part:?} in:\n{text}");
}

/// Lines of a plan that announce an action (`  # addr will be created` ...).
fn headlines(run: &Run) -> Vec<String> {
    run.stdout
        .lines()
        .filter(|l| l.starts_with("  # ") && !l.starts_with("  # (because"))
        .map(|l| l.trim().to_string())
        .collect()
}

fn state(cx: &TestContext, blueprint: &str) -> Value {
    let path = cx.path(&format!("state/{blueprint}.a3state.json"));
    serde_json::from_slice(&std::fs::read(&path).expect("state file")).expect("state JSON")
}

async fn requests(cx: &TestContext) -> Vec<Value> {
    let url = format!("{}/_sim/requests", cx.sim.base_url());
    let log: Value = reqwest::get(&url).await.unwrap().json().await.unwrap();
    log["entries"].as_array().cloned().unwrap_or_default()
}

async fn clear_requests(cx: &TestContext) {
    let url = format!("{}/_sim/requests", cx.sim.base_url());
    reqwest::Client::new().delete(&url).send().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hand_built_a3_high_is_adopted_and_then_plans_no_changes() {
    let cx = TestContext::new().await;
    let g = gcloud(&cx);
    build_a3_high_by_hand(&g).await;

    clear_requests(&cx).await;
    let plan = cx
        .run(&["plan", "--adopt", "--out", "adopt.plan", BLUEPRINT])
        .await
        .expect(0);
    // Adoption is a refresh-time read: the plan makes no mutating request.
    let log = requests(&cx).await;
    let mutating: Vec<&Value> = log
        .iter()
        .filter(|e| {
            common::is_mutation(
                e["method"].as_str().unwrap_or(""),
                e["endpoint"].as_str().unwrap_or(""),
            )
        })
        .collect();
    assert!(mutating.is_empty(), "plan --adopt mutated: {mutating:?}");
    for (addr, id) in [
        (
            "network.primary",
            format!("projects/{P}/global/networks/a3high-net"),
        ),
        (
            "subnetwork.gpu-4",
            format!("projects/{P}/regions/{R}/subnetworks/a3high-gpunet-4-subnet"),
        ),
        (
            "firewall.primary-internal",
            format!("projects/{P}/global/firewalls/a3high-net-allow-internal"),
        ),
        (
            "router.primary",
            format!("projects/{P}/regions/{R}/routers/a3high-router"),
        ),
        (
            "resource_policy.a3high",
            format!("projects/{P}/regions/{R}/resourcePolicies/a3high-a3high-placement"),
        ),
        (
            "cluster.main",
            format!("projects/{P}/locations/{R}/clusters/a3high"),
        ),
        (
            "node_pool.system",
            format!("projects/{P}/locations/{R}/clusters/a3high/nodePools/system"),
        ),
        (
            "node_pool.a3high",
            format!("projects/{P}/locations/{R}/clusters/a3high/nodePools/a3high"),
        ),
    ] {
        has(&plan.stdout, &format!("{addr}: adopted existing {id}"));
    }
    // 5 networks, 5 subnets, 5 firewalls, router, placement, cluster, 2 pools, the nodes'
    // service account and its role.
    has(&plan.stdout, "Plan: 22 to adopt,");
    // Only what gcloud did not build (the cluster's Kubernetes objects) is created; nothing
    // adopted is replaced, nor updated for the ownership marks gcloud never wrote. The pools are
    // updated in place for one thing only: the node label a3ctl's Kueue flavors select
    // (`a3ctl.dev/pool`, issue 25), without which the queue would admit onto no node.
    let actions = headlines(&plan);
    assert!(!actions.is_empty(), "{}", plan.stdout);
    for line in &actions {
        assert!(
            (line.starts_with("# k8s.") && line.ends_with("will be created"))
                || line == "# node_pool.system will be updated in-place"
                || line == "# node_pool.a3high will be updated in-place",
            "unexpected action `{line}`:\n{}",
            plan.stdout
        );
    }
    let updates: Vec<&str> = plan
        .stdout
        .lines()
        .filter(|l| l.starts_with("      ~ "))
        .collect();
    assert_eq!(updates.len(), 2, "{}", plan.stdout);
    assert!(
        updates.iter().all(|l| l.contains("node_labels")),
        "{}",
        plan.stdout
    );
    // A plan records nothing.
    assert!(!cx.path("state/a3high.a3state.json").exists());

    // The saved plan carries the adoptions: applying it records them, then creates the rest.
    let inventory_before = cx.inventory_text();
    let apply = cx.run(&["apply", "adopt.plan"]).await.expect(0);
    has(&apply.stderr, "cluster.main: adopted existing");
    has(&apply.stderr, "Resources: 22 adopted,");
    let recorded = state(&cx, "a3high");
    assert_eq!(
        recorded["resources"]["network.gpu-1"]["id"],
        format!("projects/{P}/global/networks/a3high-gpunet-1")
    );
    assert_eq!(recorded["resources"]["network.gpu-1"]["spec"]["mtu"], 8244);
    assert_eq!(
        recorded["resources"]["node_pool.a3high"]["dependencies"]
            .as_array()
            .map(Vec::len),
        Some(9),
        "cluster, router, the nodes' account and its role, 4 GPU subnets and the placement policy"
    );
    // The adopted Google Cloud resources are untouched: only Kubernetes objects were added, and
    // the pools were relabelled by one `nodePools.update` each (their only operations).
    let strip = |v: &str| -> (Value, Vec<String>) {
        let mut v: Value = serde_json::from_str(v).unwrap();
        if let Some(o) = v.as_object_mut() {
            o.retain(|k, _| !k.contains("kube"));
        }
        let mut relabels = vec![];
        if let Some(ops) = v["container"]["operations"].as_array_mut() {
            ops.retain(|op| {
                let target = op["target"].as_str().unwrap_or_default();
                let relabel =
                    op["operationType"] == "UPDATE_CLUSTER" && target.contains("/nodePools/");
                if relabel {
                    relabels.push(target.rsplit('/').next().unwrap_or_default().to_string());
                }
                !relabel
            });
        }
        relabels.sort();
        (v, relabels)
    };
    let (before, none) = strip(&inventory_before);
    assert_eq!(none, Vec::<String>::new());
    let (after, relabels) = strip(&cx.inventory_text());
    assert_eq!(before, after);
    assert_eq!(relabels, ["a3high", "system"]);

    let again = cx
        .run(&["plan", "--detailed-exitcode", BLUEPRINT])
        .await
        .expect(0);
    has(
        &again.stdout,
        "No changes. Your infrastructure matches the blueprint.",
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn adopting_resources_that_differ_shows_the_precise_fields() {
    let cx = TestContext::new().await;
    let g = gcloud(&cx);
    // GPU VPC 0 at the default MTU, GPU subnet 1 with another range.
    all(
        &g,
        vec![
            network("a3high-gpunet-1", 1460),
            network("a3high-gpunet-2", 8244),
        ],
    )
    .await;
    all(&g, vec![gpu_subnet(2, "192.168.11.0/24")]).await;

    let plan = cx
        .run(&["plan", "--adopt", "--detailed-exitcode", BLUEPRINT])
        .await
        .expect(2);
    let out = &plan.stdout;
    has(out, "network.gpu-1: adopted existing");
    has(out, "subnetwork.gpu-2: adopted existing");
    has(out, "# network.gpu-1 will be updated in-place");
    has(out, "~ mtu = 1460 -> 8244\n");
    has(out, "# subnetwork.gpu-2 must be replaced");
    has(
        out,
        "~ ip_cidr_range = \"192.168.11.0/24\" -> \"192.168.1.0/24\" # forces replacement",
    );
    // network.gpu-2 matches: adopted, no action.
    assert!(!out.contains("# network.gpu-2 "), "{out}");
    has(out, "# network.gpu-3 will be created");

    // The saved plan carries the adoptions; applying it records them before anything else.
    cx.run(&["plan", "--adopt", "--out", "adopt.plan", BLUEPRINT])
        .await
        .expect(0);
    let file: Value =
        serde_json::from_slice(&std::fs::read(cx.path("adopt.plan")).unwrap()).unwrap();
    let adopted: Vec<&str> = file["plan"]["adoptions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["addr"].as_str().unwrap())
        .collect();
    assert_eq!(
        adopted,
        ["network.gpu-1", "network.gpu-2", "subnetwork.gpu-2"]
    );
    let refused = cx
        .run(&["apply", "--adopt", "--auto-approve", "adopt.plan"])
        .await
        .expect(1);
    has(&refused.stderr, "--adopt cannot be used with a saved plan");

    // Applying adopts, then changes exactly what differs: the MTU in place, the subnet replaced.
    let apply = cx
        .run(&["apply", "--adopt", "--auto-approve", BLUEPRINT])
        .await
        .expect(0);
    has(&apply.stderr, "subnetwork.gpu-2: adopted existing");
    has(&apply.stderr, "Resources: 3 adopted,");
    let net = g
        .json(&["compute", "networks", "describe", "a3high-gpunet-1"])
        .await;
    assert_eq!(net["mtu"], 8244);
    let subnet = g
        .json(&[
            "compute",
            "networks",
            "subnets",
            "describe",
            "a3high-gpunet-2-subnet",
            &format!("--region={R}"),
        ])
        .await;
    assert_eq!(subnet["ipCidrRange"], "192.168.1.0/24");
    cx.run(&["plan", "--detailed-exitcode", BLUEPRINT])
        .await
        .expect(0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn import_takes_over_one_resource_and_refuses_what_it_cannot() {
    let cx = TestContext::new().await;
    let g = gcloud(&cx);
    all(
        &g,
        vec![
            network("a3high-net", 8244),
            network("a3high-gpunet-1", 1460),
        ],
    )
    .await;

    // Bad input: no cloud call at all.
    let before = cx.sim.request_total();
    let unknown = cx
        .run(&["import", "network.primay", "a3high-net", BLUEPRINT])
        .await
        .expect(1);
    has(
        &unknown.stderr,
        "Blueprint `a3high` declares no resource `network.primay`",
    );
    has(&unknown.stderr, "did you mean `network.primary`?");
    let garbled = cx
        .run(&["import", "netwrk.primary", "x", BLUEPRINT])
        .await
        .expect(1);
    has(&garbled.stderr, "is not a resource address");
    has(&garbled.stderr, "did you mean `network.primary`?");
    let other = cx
        .run(&["import", "network.primary", "someone-elses-net", BLUEPRINT])
        .await
        .expect(1);
    has(
        &other.stderr,
        "`someone-elses-net` is not the object the blueprint calls `network.primary`",
    );
    has(
        &other.stderr,
        &format!("projects/{P}/global/networks/a3high-net"),
    );
    let orphan = cx
        .run(&["import", "k8s.network/-/vpc1", "vpc1", BLUEPRINT])
        .await
        .expect(1);
    has(
        &orphan.stderr,
        "`k8s.network/-/vpc1` lives in `cluster.main`, which is not in state yet",
    );
    assert_eq!(cx.sim.request_total(), before, "bad input made cloud calls");

    // Nothing under that name.
    let missing = cx
        .run(&["import", "network.gpu-2", "a3high-gpunet-2", BLUEPRINT])
        .await
        .expect(1);
    has(
        &missing.stderr,
        &format!(
            "`projects/{P}/global/networks/a3high-gpunet-2` does not exist, so there is nothing to import"
        ),
    );
    assert!(!cx.path("state/a3high.a3state.json").exists());

    // The selfLink, as `gcloud compute networks describe` prints it.
    let link =
        format!("https://www.googleapis.com/compute/v1/projects/{P}/global/networks/a3high-net");
    let ok = cx
        .run(&["import", "network.primary", &link, BLUEPRINT])
        .await
        .expect(0);
    has(&ok.stderr, "Import successful!");
    has(&ok.stderr, "a3ctl plan blueprints/a3-high.toml");
    let recorded = state(&cx, "a3high");
    let record = &recorded["resources"]["network.primary"];
    assert_eq!(
        record["id"],
        format!("projects/{P}/global/networks/a3high-net")
    );
    assert_eq!(
        record["spec"]["description"], "",
        "the live value, not the blueprint's"
    );
    assert_eq!(recorded["serial"], 1);

    let again = cx
        .run(&["import", "network.primary", "a3high-net", BLUEPRINT])
        .await
        .expect(1);
    has(&again.stderr, "`network.primary` is already managed");

    cx.run(&["import", "network.gpu-1", "a3high-gpunet-1", BLUEPRINT])
        .await
        .expect(0);
    let plan = cx.run(&["plan", BLUEPRINT]).await.expect(0);
    let actions = headlines(&plan);
    assert!(
        !actions.iter().any(|l| l.starts_with("# network.primary ")),
        "{}",
        plan.stdout
    );
    has(&plan.stdout, "# network.gpu-1 will be updated in-place");
    has(&plan.stdout, "~ mtu = 1460 -> 8244\n");
    has(&plan.stdout, "# network.gpu-2 will be created");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refresh_only_accepts_drift_into_state_without_changing_the_cloud() {
    let cx = TestContext::new().await;
    let bp = "blueprints/minimal.toml";
    cx.run(&["apply", "--auto-approve", bp]).await.expect(0);
    let g = gcloud(&cx);
    all(
        &g,
        vec![
            cmd(&format!(
                "container clusters resize a3mini --node-pool=system --num-nodes=3 --location={R} --quiet"
            )),
            cmd("compute firewall-rules update a3mini-net-allow-internal --source-ranges=10.0.0.0/8"),
            cmd("compute firewall-rules delete a3mini-gpunet-1-allow-internal --quiet"),
        ],
    )
    .await;

    let plan = cx
        .run(&["plan", "--refresh-only", "--detailed-exitcode", bp])
        .await
        .expect(2);
    let out = &plan.stdout;
    has(out, "# node_pool.system has changed");
    has(out, "~ node_count = 2 -> 3");
    has(out, "# firewall.primary-internal has changed");
    has(out, "# firewall.gpu-1-internal has been deleted");
    has(out, "forgets the 1 deleted resource(s)");
    assert!(
        !out.contains("will be"),
        "a refresh-only plan plans no action:\n{out}"
    );

    // A saved plan is not what refresh-only applies; an interrupted apply must finish first.
    cx.run(&["plan", "--out", "p.json", bp]).await.expect(0);
    let saved = cx
        .run(&["apply", "--refresh-only", "--auto-approve", "p.json"])
        .await
        .expect(1);
    has(
        &saved.stderr,
        "`p.json` is a saved plan; --refresh-only takes a blueprint",
    );
    let path = cx.path("state/a3mini.a3state.json");
    let clean = std::fs::read(&path).unwrap();
    let mut journaled: Value = serde_json::from_slice(&clean).unwrap();
    journaled["pending"] = serde_json::json!([{
        "addr": "network.gpu-2", "action": "update", "id": "x", "operation": null,
        "started_at": "2026-11-21T00:00:00Z"
    }]);
    std::fs::write(&path, serde_json::to_vec(&journaled).unwrap()).unwrap();
    let pending = cx
        .run(&["apply", "--refresh-only", "--auto-approve", bp])
        .await
        .expect(1);
    has(
        &pending.stderr,
        "1 operation(s) from an interrupted apply are still recorded in state",
    );
    std::fs::write(&path, clean).unwrap();

    clear_requests(&cx).await;
    let apply = cx
        .run(&["apply", "--refresh-only", "--auto-approve", bp])
        .await
        .expect(0);
    has(
        &apply.stderr,
        "Forgot 1 resource(s) that no longer exist: `firewall.gpu-1-internal`",
    );
    let log = requests(&cx).await;
    assert!(!log.is_empty());
    let mutating: Vec<&Value> = log
        .iter()
        .filter(|e| {
            common::is_mutation(
                e["method"].as_str().unwrap_or(""),
                e["endpoint"].as_str().unwrap_or(""),
            )
        })
        .collect();
    assert!(mutating.is_empty(), "mutating requests: {mutating:?}");

    let recorded = state(&cx, "a3mini");
    assert!(
        recorded["resources"]
            .get("firewall.gpu-1-internal")
            .is_none()
    );
    assert_eq!(
        recorded["resources"]["node_pool.system"]["spec"]["node_count"],
        3
    );
    assert_eq!(
        recorded["resources"]["firewall.primary-internal"]["spec"]["source_ranges"],
        serde_json::json!(["10.0.0.0/8"])
    );

    // Accepted: no drift any more; a normal plan now puts the blueprint back.
    cx.run(&["plan", "--refresh-only", "--detailed-exitcode", bp])
        .await
        .expect(0);
    let plan = cx.run(&["plan", bp]).await.expect(0);
    assert!(!plan.stdout.contains("changed outside"), "{}", plan.stdout);
    has(&plan.stdout, "# node_pool.system will be updated in-place");
    has(&plan.stdout, "# firewall.gpu-1-internal will be created");
    has(
        &plan.stdout,
        "# firewall.primary-internal will be updated in-place",
    );
}

const MEGA: &str = "blueprints/a3-mega.toml";

/// The note `plan` opens with when its creates exist already: up to the first empty line.
fn opening_note(stdout: &str) -> String {
    stdout.split("\n\n").next().unwrap_or_default().to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lost_state_is_named_before_the_quota_check_with_the_adopt_command() {
    let cx = TestContext::new().await;
    cx.run(&["apply", MEGA, "--auto-approve"]).await.expect(0);
    for file in ["a3mega.a3state.json", "a3mega.a3state.json.backup"] {
        let _ = std::fs::remove_file(cx.path(&format!("state/{file}")));
    }
    assert!(!cx.path("state/a3mega.a3state.json").exists());

    clear_requests(&cx).await;
    // The deployment's 9 networks count against NETWORKS again: preflight refuses, but what the
    // user reads first is that everything is there and how to take it over.
    let plan = cx.run(&["plan", MEGA]).await.expect(1);
    let note = opening_note(&plan.stdout);
    insta::assert_snapshot!("lost-state-plan-note", note);
    let adopt = "a3ctl plan --adopt blueprints/a3-mega.toml";
    let at = plan.stdout.find(adopt).expect("the adopt command");
    let preflight = plan.stdout.find("Preflight:").expect("the preflight");
    assert!(at < preflight, "{}", plan.stdout);
    has(&plan.stdout, "Plan: 73 to add, 0 to change, 0 to destroy.");
    has(&plan.stderr, "quota NETWORKS");
    has(
        &plan.stderr,
        "these needs assume creating all 73 resource(s) of the plan, but 73 of them already exist with this blueprint's mark",
    );
    has(
        &plan.stderr,
        &format!("hint: take the existing resources over first: `{adopt}`"),
    );
    // Looking is reading: nothing changed, nothing recorded.
    let mutating = requests(&cx)
        .await
        .into_iter()
        .filter(|e| {
            common::is_mutation(
                e["method"].as_str().unwrap_or(""),
                e["endpoint"].as_str().unwrap_or(""),
            )
        })
        .count();
    assert_eq!(mutating, 0);
    assert!(!cx.path("state/a3mega.a3state.json").exists());

    // Every name, with -v; the JSON carries the list and the command.
    let all = cx.run(&["plan", MEGA, "-v"]).await.expect(1);
    has(
        &all.stdout,
        "  node_pool.a3mega (projects/my-project/locations/us-central1/clusters/a3mega/nodePools/a3mega)\n",
    );
    has(
        &all.stdout,
        "  firewall.gpu-8-internal (projects/my-project/global/firewalls/a3mega-gpunet-8-allow-internal)\n",
    );
    let json = cx.run(&["plan", MEGA, "--json"]).await.expect(1);
    let value: Value = serde_json::from_str(&json.stdout).expect("plan JSON");
    assert_eq!(
        value["existing"]["adoptable"].as_array().map(Vec::len),
        Some(73)
    );
    assert_eq!(value["existing"]["adopt_command"], adopt);
    assert_eq!(value["existing"]["foreign"], serde_json::json!([]));

    // The command recovers them, and the plan after is empty.
    let adopted = cx.run(&["plan", "--adopt", MEGA]).await.expect(0);
    has(
        &adopted.stdout,
        "Plan: 73 to adopt, 0 to add, 0 to change, 0 to destroy.",
    );
    assert!(!adopted.stdout.contains("Note: 73"), "{}", adopted.stdout);
    cx.run(&["apply", "--adopt", MEGA, "--auto-approve"])
        .await
        .expect(0);
    let after = cx
        .run(&["plan", MEGA, "--detailed-exitcode"])
        .await
        .expect(0);
    has(&after.stdout, "No changes.");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn same_named_resources_of_something_else_are_named_but_not_proposed_for_adoption() {
    let cx = TestContext::new().await;
    let g = Gcloud::in_project(&cx.sim, P);
    // Made by hand (no mark), and by another blueprint (its mark), under A3 Mega's names.
    all(
        &g,
        vec![network("a3mega-net", 8244), {
            let mut c = network("a3mega-gpunet-1", 8244);
            c.push("--description=Managed by a3ctl (a3ctl-blueprint=other)".into());
            c
        }],
    )
    .await;
    let plan = cx.run(&["plan", MEGA]).await.expect(0);
    let note = opening_note(&plan.stdout);
    has(
        &note,
        "Note: 2 resources this plan would create already exist under the blueprint's names but are not this blueprint's, so creating them will fail:",
    );
    has(
        &note,
        "network.primary (projects/my-project/global/networks/a3mega-net): no a3ctl mark",
    );
    has(
        &note,
        "network.gpu-1 (projects/my-project/global/networks/a3mega-gpunet-1): marked for blueprint `other`",
    );
    assert!(!plan.stdout.contains("--adopt"), "{}", plan.stdout);
    assert!(!plan.stderr.contains("--adopt"), "{}", plan.stderr);
    has(&plan.stdout, "Plan: 73 to add, 0 to change, 0 to destroy.");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_import_in_the_sandbox_names_the_plan_to_paste_with_its_flag() {
    let cx = TestContext::new().await;
    let run = |args: &'static [&'static str]| cx.sandbox(args);
    run(&["apply", "blueprints/minimal.toml", "--auto-approve"])
        .await
        .expect(0);
    run(&["state", "rm", "network.primary", "blueprints/minimal.toml"])
        .await
        .expect(0);
    let imported = run(&[
        "import",
        "network.primary",
        "a3mini-net",
        "blueprints/minimal.toml",
    ])
    .await
    .expect(0);
    assert!(
        imported
            .stderr
            .contains("Run `a3ctl --sandbox plan blueprints/minimal.toml` to see how it differs"),
        "{}",
        imported.stderr
    );
}
