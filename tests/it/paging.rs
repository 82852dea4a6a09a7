//! a3ctl's readers follow `nextPageToken` through every page: against a simulator whose world
//! file caps every page of every list at one item (`[lists] max_page_size = 1`, docs/simulator.md;
//! Google may answer fewer items than asked), nothing is missed. See: issue 27 ("a3ctl's readers
//! with page size 1 read everything").

use crate::common::{self, TestContext};
use a3ctl::cloud::Provider;
use a3ctl::cloud::Target;
use a3ctl::cloud::gcp::{CredentialsMode, Endpoints, GcpConfig, GcpProvider};
use a3ctl::resource::Kind;
use a3ctl_sim::{SimConfig, WorldSpec};
use serde_json::{Value, json};
use std::time::Duration;

const P: &str = "my-project";

fn one_per_page() -> SimConfig {
    SimConfig {
        world: WorldSpec::parse("[lists]\nmax_page_size = 1\n", "world.toml").expect("parses"),
        ..SimConfig::default()
    }
}

/// GETs the simulator answered for `path` (a collection, without its query).
fn gets_of(cx: &TestContext, path: &str) -> u64 {
    let endpoint = a3ctl_sim::server::endpoint_template(path);
    cx.sim
        .request_counts()
        .get(&format!("GET {endpoint}"))
        .copied()
        .unwrap_or(0)
}

#[test]
fn a_reservation_in_any_zone_is_found_on_whichever_page_it_comes() {
    common::on_app_runtime(async {
        let cx = TestContext::without_reservations(one_per_page()).await;
        let client = reqwest::Client::new();
        // One reservation in each of three zones: the aggregated list answers one per page.
        for (name, zone) in [
            ("r-1", "us-central1-a"),
            ("r-2", "us-central1-c"),
            ("r-3", "us-east4-a"),
        ] {
            let body = json!({
                "name": name,
                "specificReservationRequired": true,
                "specificReservation": {"count": "1", "instanceProperties": {
                    "machineType": "a3-megagpu-8g",
                    "guestAccelerators": [{"acceleratorType": "nvidia-h100-mega-80gb",
                                           "acceleratorCount": 8}],
                }},
            });
            let answer = client
                .post(format!(
                    "{}/compute/v1/projects/{P}/zones/{zone}/reservations",
                    cx.sim.base_url()
                ))
                .json(&body)
                .send()
                .await
                .expect("insert");
            assert!(
                answer.status().is_success(),
                "{}",
                answer.text().await.unwrap()
            );
        }
        cx.sim.advance_secs(60.0);
        let adapter = GcpProvider::new(GcpConfig {
            project: P.into(),
            endpoints: Endpoints::simulator(cx.sim.base_url()),
            credentials: CredentialsMode::Anonymous,
            poll: Duration::from_millis(1),
        })
        .await
        .expect("adapter");
        let target = Target {
            addr: a3ctl::resource::Addr::new(Kind::Reservation, "r-3"),
            id: format!("projects/{P}/zones/-/reservations/r-3"),
            spec: Value::Null,
            outputs: Value::Null,
            context: Default::default(),
            lifecycle: Default::default(),
        };
        let aggregated = format!("/compute/v1/projects/{P}/aggregated/reservations");
        let before = gets_of(&cx, &aggregated);
        let observed = adapter
            .read(&target)
            .await
            .expect("read")
            .expect("r-3 is found, on the third page");
        assert_eq!(observed.spec["zone"], "us-east4-a");
        assert_eq!(gets_of(&cx, &aggregated) - before, 3);
    });
}

/// The whole lifecycle of the shipped A3 Mega blueprint with one item per page: nothing a3ctl
/// reads is missed (its reservation is consumed, so preflight needs no GPU-family quota and reads
/// the reservation by name; the lists above are where paging decides).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a3_mega_applies_plans_nothing_and_destroys_with_one_item_per_page() {
    let cx = TestContext::with(one_per_page()).await;
    cx.unprotect("blueprints/a3-mega.toml");
    let applied = cx
        .run(&["apply", "blueprints/a3-mega.toml", "--auto-approve"])
        .await
        .expect(0);
    assert!(
        applied
            .stderr
            .contains("Apply complete! Resources: 73 added, 0 changed, 0 destroyed."),
        "{}",
        applied.stderr
    );
    let plan = cx
        .run(&["plan", "blueprints/a3-mega.toml", "--detailed-exitcode"])
        .await
        .expect(0);
    assert!(plan.stdout.contains("No changes."), "{}", plan.stdout);
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
    let inventory = cx.sim.inventory();
    for kind in ["networks", "subnetworks", "firewalls", "routers"] {
        assert_eq!(
            inventory["compute"][kind]
                .as_array()
                .map(Vec::len)
                .unwrap_or(0),
            0,
            "{kind} left: {inventory}"
        );
    }
    assert_eq!(
        inventory["container"]["clusters"]
            .as_array()
            .map(Vec::len)
            .unwrap_or(0),
        0,
        "{inventory}"
    );
}

/// Requests the simulator answered so far for `endpoint` (`GET /api/v1/nodes`).
fn count(cx: &TestContext, endpoint: &str) -> u64 {
    cx.sim.request_counts().get(endpoint).copied().unwrap_or(0)
}

/// a3ctl's Kubernetes readers follow `metadata.continue` to the last page
/// (`src/cloud/kube/paging.rs`): with `A3CTL_KUBE_PAGE_SIZE=1` every list comes one object a page,
/// and apply, plan and verify still see every object — one request per object is the proof that
/// they paged.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubernetes_lists_come_one_object_a_page_and_nothing_is_missed() {
    let cx = TestContext::new().await;
    let blueprint = "blueprints/minimal.toml";
    let run = |args: &'static [&'static str]| {
        let mut command = cx.command(args);
        command.env(a3ctl::env_vars::KUBE_PAGE_SIZE, "1");
        async move { common::Run::from(command.output().await.expect("a3ctl runs")) }
    };
    let applied = run(&["apply", "blueprints/minimal.toml", "--auto-approve"])
        .await
        .expect(0);
    assert!(
        applied.stderr.contains("Apply complete!"),
        "{}",
        applied.stderr
    );
    let crds = "GET /apis/apiextensions.k8s.io/v1/customresourcedefinitions";
    let nodes = "GET /api/v1/nodes";
    let (crds_before, nodes_before) = (count(&cx, crds), count(&cx, nodes));
    // Plan reads the releases' objects kind by kind: all of them are there, nothing to change.
    let plan = run(&["plan", "blueprints/minimal.toml", "--detailed-exitcode"])
        .await
        .expect(0);
    assert!(plan.stdout.contains("No changes."), "{}", plan.stdout);
    let crds_read = count(&cx, crds) - crds_before;
    // Verify counts the GPU nodes from the list of every node.
    let verified = run(&["verify", "blueprints/minimal.toml", "--json"])
        .await
        .expect(0);
    let nodes_read = count(&cx, nodes) - nodes_before;
    let report: Value = serde_json::from_str(&verified.stdout).expect("a JSON report");
    assert_eq!(report["passed"], true, "{report}");
    let kubectl = common::kubectl::Kubectl::for_cluster(&cx, "a3mini").await;
    let all_nodes = kubectl.names(&["nodes"]).await.len() as u64;
    let all_crds = kubectl.names(&["customresourcedefinitions"]).await.len() as u64;
    assert!(
        all_nodes > 1 && all_crds > 1,
        "{all_nodes} nodes, {all_crds} CRDs"
    );
    assert_eq!(nodes_read, all_nodes, "one request a node");
    assert!(
        crds_read >= all_crds,
        "{crds_read} CRD list requests for {all_crds} CRDs: {blueprint}"
    );
}
