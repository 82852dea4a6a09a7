//! Zone capacity driven by gcloud, and reservation resizes: a node pool asking for more VMs than
//! its zone has waits for them and fails with `GCE_STOCKOUT` keeping what it got, or completes
//! when another pool frees them; a resize waits the same way; a reservation beyond the zone's capacity fails with
//! `ZONE_RESOURCE_POOL_EXHAUSTED`; Spot and on-demand VMs are counted apart and reserved VMs
//! take nothing more from the zone; `gcloud compute reservations update --vm-count` resizes a
//! reservation, moving quota and capacity, never below the VMs that consume it.

use crate::gcloud_support::{Gcloud, main_network, post_ok, send};
use a3ctl_sim::capacity::CapacityConfig;
use a3ctl_sim::faults::FaultConfig;
use a3ctl_sim::quotas::QuotaConfig;
use a3ctl_sim::{SimConfig, SimHandle};
use serde_json::{Value, json};

const PROJECT: &str = "cap-test";
const REGION: &str = "us-central1";
const ZONE: &str = "us-central1-a";

async fn start(capacity: CapacityConfig) -> SimHandle {
    a3ctl_sim::start(SimConfig {
        capacity,
        ..SimConfig::default()
    })
    .await
    .expect("simulator starts")
}

/// The `main` network and subnet, and clusters with one `e2-standard-4` node in us-central1-a.
async fn clusters(sim: &SimHandle, names: &[&str]) {
    main_network(sim, PROJECT, REGION).await;
    for name in names {
        let body = json!({"cluster": {
            "name": name, "network": "main", "subnetwork": "main-sub",
            "locations": [ZONE],
            "nodePools": [{"name": "sys", "initialNodeCount": 1,
                           "config": {"machineType": "e2-standard-4"}}],
        }});
        post_ok(
            sim,
            &format!("/container/v1/projects/{PROJECT}/locations/{REGION}/clusters"),
            body,
        )
        .await;
    }
    sim.advance_secs(1.0);
}

fn owned(args: &[&str]) -> Vec<String> {
    args.iter().map(|a| a.to_string()).collect()
}

fn strs(args: &[String]) -> Vec<&str> {
    args.iter().map(String::as_str).collect()
}

/// Creates pool `name` of `cluster` with gcloud ([`pool`]) and asserts that it is RUNNING.
async fn assert_running(cli: &Gcloud, cluster: &str, name: &str, extra: &[&str]) {
    let created = cli.json(&strs(&pool(cluster, name, extra))).await;
    let created = created.get(0).unwrap_or(&created);
    assert_eq!(created["status"], "RUNNING", "{created}");
}

/// `gcloud container node-pools create NAME --cluster=CLUSTER` in us-central1-a with `extra`.
fn pool(cluster: &str, name: &str, extra: &[&str]) -> Vec<String> {
    let mut args = owned(&[
        "container",
        "node-pools",
        "create",
        name,
        &format!("--cluster={cluster}"),
        "--location=us-central1",
        "--node-locations=us-central1-a",
    ]);
    args.extend(owned(extra));
    args
}

/// The name of the one RUNNING GKE operation (gcloud's `operations list`).
async fn running_operation(cli: &Gcloud) -> String {
    let ops = cli
        .json(&[
            "container",
            "operations",
            "list",
            "--location=us-central1",
            "--filter=status=RUNNING",
        ])
        .await;
    let ops = ops.as_array().expect("a list");
    assert_eq!(ops.len(), 1, "{ops:?}");
    ops[0]["name"].as_str().expect("name").to_string()
}

async fn describe_operation(cli: &Gcloud, name: &str) -> Value {
    cli.json(&[
        "container",
        "operations",
        "describe",
        name,
        "--location=us-central1",
    ])
    .await
}

async fn describe_pool(cli: &Gcloud, cluster: &str, name: &str) -> Value {
    cli.json(&[
        "container",
        "node-pools",
        "describe",
        name,
        &format!("--cluster={cluster}"),
        "--location=us-central1",
    ])
    .await
}

/// The Kubernetes nodes of pool `pool` of cluster `cluster`.
fn nodes(sim: &SimHandle, cluster: &str, pool: &str) -> usize {
    let key = format!("projects/{PROJECT}/locations/{REGION}/clusters/{cluster}");
    sim.shared.read_world(|w, _| {
        w.kube.cluster(&key).map_or(0, |c| {
            c.nodes
                .values()
                .flatten()
                .filter(|n| n.pool == pool)
                .count()
        })
    })
}

/// Seconds between an operation's `startTime` and `endTime`.
fn took_secs(op: &Value) -> i64 {
    let at = |field: &str| {
        chrono::DateTime::parse_from_rfc3339(op[field].as_str().expect(field)).expect("RFC 3339")
    };
    (at("endTime") - at("startTime")).num_seconds()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_node_pool_beyond_the_zone_waits_then_fails_with_gce_stockout() {
    let capacity = CapacityConfig::default().with_on_demand(ZONE, "n2-standard-8", 1);
    let sim = start(capacity).await;
    let cli = Gcloud::in_project(&sim, PROJECT);
    clusters(&sim, &["c1"]).await;

    // Two VMs of a type the zone has one of: GKE accepts the pool, and its operation keeps running.
    let args = pool(
        "c1",
        "big",
        &["--machine-type=n2-standard-8", "--num-nodes=2", "--async"],
    );
    cli.ok(&strs(&args)).await;
    let op = running_operation(&cli).await;
    sim.advance_secs(1800.0);
    let running = describe_operation(&cli, &op).await;
    assert_eq!(running["status"], "RUNNING", "{running}");
    assert_eq!(
        describe_pool(&cli, "c1", "big").await["status"],
        "PROVISIONING"
    );
    assert_eq!(nodes(&sim, "c1", "big"), 0);

    // After the stockout wait (35m4.033429035s by default) it fails, keeping the VM it got.
    sim.advance_secs(305.0);
    let stderr = cli
        .fails(&[
            "container",
            "operations",
            "wait",
            &op,
            "--location=us-central1",
        ])
        .await;
    assert!(
        stderr.contains(
            "Google Compute Engine: Not all instances running in IGM after 35m4.033429035s. \
             Expected 2, running 1, transitioning 1. Current errors: [GCE_STOCKOUT]: Instance \
             'gke-c1-big-"
        ),
        "{stderr}"
    );
    assert!(
        stderr.contains(&format!(
            "-0002' creation failed: The zone 'projects/{PROJECT}/zones/{ZONE}' does not have \
             enough resources available to fulfill the request. '(resource type:compute)'."
        )),
        "{stderr}"
    );
    let done = describe_operation(&cli, &op).await;
    assert_eq!(done["status"], "DONE");
    assert_eq!(
        done["nodepoolConditions"][0]["code"], "GCE_STOCKOUT",
        "{done}"
    );
    assert_eq!(
        done["nodepoolConditions"][0]["canonicalCode"],
        "RESOURCE_EXHAUSTED"
    );
    assert_eq!(took_secs(&done), 2104, "{done}");
    let failed = describe_pool(&cli, "c1", "big").await;
    assert_eq!(failed["status"], "RUNNING_WITH_ERROR", "{failed}");
    assert_eq!(failed["conditions"][0]["code"], "GCE_STOCKOUT");
    assert_eq!(nodes(&sim, "c1", "big"), 1);

    // The zone is full: another pool of that type gets nothing, and ends in ERROR.
    let args = pool(
        "c1",
        "more",
        &["--machine-type=n2-standard-8", "--num-nodes=1", "--async"],
    );
    cli.ok(&strs(&args)).await;
    let op = running_operation(&cli).await;
    sim.advance_secs(2105.0);
    let stderr = cli
        .fails(&[
            "container",
            "operations",
            "wait",
            &op,
            "--location=us-central1",
        ])
        .await;
    assert!(
        stderr.contains("Expected 1, running 0, transitioning 1. Current errors: [GCE_STOCKOUT]"),
        "{stderr}"
    );
    assert_eq!(describe_pool(&cli, "c1", "more").await["status"], "ERROR");
    assert_eq!(nodes(&sim, "c1", "more"), 0);

    // Other machine types are not limited.
    assert_running(
        &cli,
        "c1",
        "other",
        &["--machine-type=n2-standard-4", "--num-nodes=3"],
    )
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn capacity_freed_before_the_wait_ends_completes_the_waiting_pool_and_resize() {
    let capacity = CapacityConfig::default()
        .with_on_demand(ZONE, "n2-standard-8", 2)
        .with_stockout_wait(1200.0);
    let sim = start(capacity).await;
    let cli = Gcloud::in_project(&sim, PROJECT);
    clusters(&sim, &["c1", "c2"]).await;
    // Another cluster holds one of the zone's two VMs.
    let args = pool(
        "c2",
        "hog",
        &["--machine-type=n2-standard-8", "--num-nodes=1"],
    );
    cli.ok(&strs(&args)).await;
    assert_eq!(nodes(&sim, "c2", "hog"), 1);

    let args = pool(
        "c1",
        "big",
        &["--machine-type=n2-standard-8", "--num-nodes=2", "--async"],
    );
    cli.ok(&strs(&args)).await;
    let op = running_operation(&cli).await;
    sim.advance_secs(300.0);
    assert_eq!(describe_operation(&cli, &op).await["status"], "RUNNING");

    // Deleting the other pool (in the other cluster: GKE runs one operation per cluster) frees
    // its VM, which the waiting pool gets at once.
    cli.ok(&[
        "container",
        "node-pools",
        "delete",
        "hog",
        "--cluster=c2",
        "--location=us-central1",
        "--quiet",
    ])
    .await;
    cli.ok(&[
        "container",
        "operations",
        "wait",
        &op,
        "--location=us-central1",
    ])
    .await;
    let done = describe_operation(&cli, &op).await;
    assert_eq!(done["status"], "DONE");
    assert!(done["error"].is_null(), "{done}");
    assert_eq!(took_secs(&done), 300, "ends when the VM freed: {done}");
    assert_eq!(describe_pool(&cli, "c1", "big").await["status"], "RUNNING");
    assert_eq!(nodes(&sim, "c1", "big"), 2);

    // A resize past the zone waits the same way, and fails keeping the pool's nodes.
    let resize = |n: &str| {
        owned(&[
            "container",
            "clusters",
            "resize",
            "c1",
            "--node-pool=big",
            "--location=us-central1",
            &format!("--num-nodes={n}"),
            "--async",
            "--quiet",
        ])
    };
    cli.ok(&strs(&resize("3"))).await;
    let op = running_operation(&cli).await;
    sim.advance_secs(1199.0);
    assert_eq!(describe_operation(&cli, &op).await["status"], "RUNNING");
    sim.advance_secs(1.0);
    let stderr = cli
        .fails(&[
            "container",
            "operations",
            "wait",
            &op,
            "--location=us-central1",
        ])
        .await;
    assert!(
        stderr.contains(
            "Not all instances running in IGM after 20m0s. Expected 3, running 2, transitioning \
             1. Current errors: [GCE_STOCKOUT]"
        ),
        "{stderr}"
    );
    assert_eq!(describe_pool(&cli, "c1", "big").await["status"], "RUNNING");
    assert_eq!(nodes(&sim, "c1", "big"), 2);

    // Shrinking frees a VM, which a pool of the other cluster gets.
    cli.ok(&strs(&resize("1"))).await;
    sim.advance_secs(1.0);
    assert_eq!(nodes(&sim, "c1", "big"), 1);
    assert_running(
        &cli,
        "c2",
        "again",
        &["--machine-type=n2-standard-8", "--num-nodes=1"],
    )
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn reservations_hold_zone_capacity_and_spot_is_counted_apart() {
    let capacity = CapacityConfig::default()
        .with_on_demand(ZONE, "a3-megagpu-8g", 2)
        .with_spot(ZONE, "a3-megagpu-8g", 1)
        .with_stockout_wait(600.0);
    let sim = start(capacity).await;
    let cli = Gcloud::in_project(&sim, PROJECT);
    clusters(&sim, &["c1"]).await;
    let reservation = |name: &str, count: &str| {
        owned(&[
            "compute",
            "reservations",
            "create",
            name,
            "--zone=us-central1-a",
            &format!("--vm-count={count}"),
            "--machine-type=a3-megagpu-8g",
            "--require-specific-reservation",
        ])
    };
    // Three VMs of a zone that has two: Compute fails the insert's operation (gcloud prints it
    // as YAML, the message folded).
    let stderr = cli
        .fails(&strs(&reservation("big", "3")))
        .await
        .replace("\n  ", " ");
    assert!(
        stderr.contains("code: ZONE_RESOURCE_POOL_EXHAUSTED"),
        "{stderr}"
    );
    assert!(
        stderr.contains(&format!(
            "The zone 'projects/{PROJECT}/zones/{ZONE}' does not have enough resources available \
             to fulfill the request.  Try a different zone, or try again later."
        )),
        "{stderr}"
    );
    let ops = cli
        .json(&["compute", "operations", "list", "--zones=us-central1-a"])
        .await;
    let failed = &ops.as_array().expect("list")[0];
    assert_eq!(failed["operationType"], "insert", "{failed}");
    assert_eq!(
        failed["error"]["errors"][0]["code"],
        "ZONE_RESOURCE_POOL_EXHAUSTED"
    );
    assert_eq!(failed["httpErrorStatusCode"], 503);
    assert_eq!(
        failed["error"]["errors"][0]["errorDetails"][0]["help"]["links"][0]["url"],
        "https://cloud.google.com/compute/docs/resource-error"
    );
    cli.fails(&[
        "compute",
        "reservations",
        "describe",
        "big",
        "--zone=us-central1-a",
    ])
    .await;
    // Two fit, and hold the zone's on-demand capacity.
    cli.ok(&strs(&reservation("res", "2"))).await;
    let stderr = cli.fails(&strs(&reservation("one-more", "1"))).await;
    assert!(
        stderr.contains("does not have enough resources"),
        "{stderr}"
    );

    let mega = [
        "--machine-type=a3-megagpu-8g",
        "--accelerator=type=nvidia-h100-mega-80gb,count=8",
    ];
    // The reservation's VMs take nothing more from the zone.
    let mut flags = mega.to_vec();
    flags.extend([
        "--num-nodes=2",
        "--reservation-affinity=specific",
        "--reservation=res",
    ]);
    let reserved = cli.json(&strs(&pool("c1", "reserved", &flags))).await;
    let reserved = reserved.get(0).unwrap_or(&reserved);
    assert_eq!(reserved["status"], "RUNNING", "{reserved}");
    // Spot has its own capacity: one Spot VM fits while on demand is full.
    let mut flags = mega.to_vec();
    flags.extend(["--num-nodes=1", "--spot"]);
    let spot = cli.json(&strs(&pool("c1", "spot", &flags))).await;
    let spot = spot.get(0).unwrap_or(&spot);
    assert_eq!(spot["status"], "RUNNING", "{spot}");
    assert_eq!(nodes(&sim, "c1", "spot"), 1);
    // An on-demand VM outside the reservation does not fit.
    let mut flags = mega.to_vec();
    flags.extend(["--num-nodes=1", "--async"]);
    cli.ok(&strs(&pool("c1", "ondemand", &flags))).await;
    let op = running_operation(&cli).await;
    sim.advance_secs(600.0);
    let stderr = cli
        .fails(&[
            "container",
            "operations",
            "wait",
            &op,
            "--location=us-central1",
        ])
        .await;
    assert!(
        stderr.contains(
            "after 10m0s. Expected 1, running 0, transitioning 1. Current errors: [GCE_STOCKOUT]"
        ),
        "{stderr}"
    );
    assert_eq!(
        describe_pool(&cli, "c1", "ondemand").await["status"],
        "ERROR"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_cluster_whose_pools_do_not_fit_waits_then_fails_keeping_nothing() {
    let capacity = CapacityConfig::default()
        .with_on_demand(ZONE, "n2-standard-8", 1)
        .with_stockout_wait(900.0);
    let sim = start(capacity).await;
    let cli = Gcloud::in_project(&sim, PROJECT);
    clusters(&sim, &[]).await;
    cli.ok(&[
        "container",
        "clusters",
        "create",
        "c3",
        "--location=us-central1",
        "--node-locations=us-central1-a",
        "--network=main",
        "--subnetwork=main-sub",
        "--machine-type=n2-standard-8",
        "--num-nodes=2",
        "--async",
    ])
    .await;
    let op = running_operation(&cli).await;
    sim.advance_secs(899.0);
    assert_eq!(describe_operation(&cli, &op).await["status"], "RUNNING");
    sim.advance_secs(1.0);
    let stderr = cli
        .fails(&[
            "container",
            "operations",
            "wait",
            &op,
            "--location=us-central1",
        ])
        .await;
    assert!(
        stderr.contains("after 15m0s. Expected 2, running 1, transitioning 1. Current errors: [GCE_STOCKOUT]: Instance 'gke-c3-default-pool-"),
        "{stderr}"
    );
    let done = describe_operation(&cli, &op).await;
    assert_eq!(
        done["clusterConditions"][0]["code"], "GCE_STOCKOUT",
        "{done}"
    );
    let cluster = cli
        .json(&[
            "container",
            "clusters",
            "describe",
            "c3",
            "--location=us-central1",
        ])
        .await;
    assert_eq!(cluster["status"], "ERROR", "{cluster}");
    assert_eq!(nodes(&sim, "c3", "default-pool"), 0);
    // Nothing is held: a pool of another cluster gets the zone's VM.
    clusters_again(&sim).await;
    assert_running(
        &cli,
        "c4",
        "one",
        &["--machine-type=n2-standard-8", "--num-nodes=1"],
    )
    .await;
}

/// A cluster `c4` on the existing network.
async fn clusters_again(sim: &SimHandle) {
    let body = json!({"cluster": {
        "name": "c4", "network": "main", "subnetwork": "main-sub", "locations": [ZONE],
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

#[tokio::test(flavor = "multi_thread")]
async fn reservations_resize_with_gcloud_moving_quota_and_capacity() {
    let sim = a3ctl_sim::start(SimConfig {
        capacity: CapacityConfig::default()
            .with_on_demand(ZONE, "a3-megagpu-8g", 3)
            .with_stockout_wait(600.0),
        quotas: QuotaConfig::default().with_in("CPUS", REGION, 1000.0),
        ..SimConfig::default()
    })
    .await
    .expect("simulator starts");
    let cli = Gcloud::in_project(&sim, PROJECT);
    cli.ok(&[
        "compute",
        "reservations",
        "create",
        "res",
        "--zone=us-central1-a",
        "--vm-count=1",
        "--machine-type=a3-megagpu-8g",
        "--require-specific-reservation",
    ])
    .await;
    let update = |count: &str| {
        owned(&[
            "compute",
            "reservations",
            "update",
            "res",
            "--zone=us-central1-a",
            &format!("--vm-count={count}"),
        ])
    };
    let describe = || {
        cli.json(&[
            "compute",
            "reservations",
            "describe",
            "res",
            "--zone=us-central1-a",
        ])
    };
    let cpus = || async {
        let region = cli.json(&["compute", "regions", "describe", REGION]).await;
        region["quotas"]
            .as_array()
            .expect("quotas")
            .iter()
            .find(|q| q["metric"] == "CPUS")
            .map(|q| q["usage"].clone())
            .expect("CPUS")
    };

    // `update --vm-count` resizes: a zonal `resize` operation; quota follows.
    cli.ok(&strs(&update("3"))).await;
    assert_eq!(describe().await["specificReservation"]["count"], "3");
    let ops = cli
        .json(&["compute", "operations", "list", "--zones=us-central1-a"])
        .await;
    let last = ops.as_array().and_then(|o| o.last()).expect("operations");
    assert_eq!(last["operationType"], "resize", "{last}");
    assert_eq!(last["status"], "DONE");
    assert_eq!(
        last["targetLink"],
        format!(
            "https://www.googleapis.com/compute/v1/projects/{PROJECT}/zones/{ZONE}/reservations/res"
        )
    );
    assert_eq!(cpus().await, json!(624.0));

    // Beyond the zone's capacity, then beyond the CPU quota (checked first): the count stays.
    let stderr = cli.fails(&strs(&update("4"))).await.replace("\n  ", " ");
    assert!(
        stderr.contains("code: ZONE_RESOURCE_POOL_EXHAUSTED")
            && stderr.contains("does not have enough resources available to fulfill the request."),
        "{stderr}"
    );
    let stderr = cli.fails(&strs(&update("5"))).await;
    assert!(
        stderr.contains("Quota 'CPUS' exceeded.  Limit: 1000.0 in region us-central1."),
        "{stderr}"
    );
    assert_eq!(describe().await["specificReservation"]["count"], "3");
    assert_eq!(cpus().await, json!(624.0));

    // Two nodes consume it: it cannot shrink below them.
    clusters(&sim, &["c1"]).await;
    let reserved = pool(
        "c1",
        "reserved",
        &[
            "--machine-type=a3-megagpu-8g",
            "--accelerator=type=nvidia-h100-mega-80gb,count=8",
            "--num-nodes=2",
            "--reservation-affinity=specific",
            "--reservation=res",
        ],
    );
    cli.ok(&strs(&reserved)).await;
    assert_eq!(describe().await["specificReservation"]["inUseCount"], "2");
    let stderr = cli.fails(&strs(&update("1"))).await;
    assert!(
        stderr.contains(
            "Invalid value for field 'resource.specificSkuCount': '1'. The reservation 'res' has \
             2 VMs in use; its count cannot be reduced below that."
        ),
        "{stderr}"
    );

    // An on-demand pool waits for the zone; shrinking the reservation frees a VM for it.
    let waiting = pool(
        "c1",
        "ondemand",
        &[
            "--machine-type=a3-megagpu-8g",
            "--accelerator=type=nvidia-h100-mega-80gb,count=8",
            "--num-nodes=1",
            "--async",
        ],
    );
    cli.ok(&strs(&waiting)).await;
    let op = running_operation(&cli).await;
    sim.advance_secs(120.0);
    assert_eq!(describe_operation(&cli, &op).await["status"], "RUNNING");
    cli.ok(&strs(&update("2"))).await;
    cli.ok(&[
        "container",
        "operations",
        "wait",
        &op,
        "--location=us-central1",
    ])
    .await;
    assert_eq!(nodes(&sim, "c1", "ondemand"), 1);
    let shrunk = describe().await;
    assert_eq!(shrunk["specificReservation"]["count"], "2", "{shrunk}");
    assert_eq!(shrunk["specificReservation"]["inUseCount"], "2");
    assert_eq!(cpus().await, json!(4.0 + 416.0 + 208.0));

    // Over REST: a repeated requestId answers the first operation; the body is checked.
    let path = format!(
        "{}/compute/v1/projects/{PROJECT}/zones/{ZONE}/reservations/res/resize",
        sim.base_url()
    );
    let http = reqwest::Client::new();
    let post = |body: Value, request_id: Option<&str>| {
        let mut url = path.clone();
        if let Some(id) = request_id {
            url.push_str(&format!("?requestId={id}"));
        }
        send(http.post(url).json(&body))
    };
    let id = "5f0c1f4e-5d2a-4c8e-9d63-2f6b1a7c9e01";
    let (status, first) = post(json!({"specificSkuCount": "2"}), Some(id)).await;
    assert_eq!(status, 200, "{first}");
    assert_eq!(first["kind"], "compute#operation");
    assert_eq!(first["operationType"], "resize");
    let (_, again) = post(json!({"specificSkuCount": "2"}), Some(id)).await;
    assert_eq!(again["name"], first["name"]);
    let (status, missing) = post(json!({}), None).await;
    assert_eq!(status, 400, "{missing}");
    assert_eq!(
        missing["error"]["message"],
        "Required field 'resource.specificSkuCount' not specified"
    );
    let (status, zero) = post(json!({"specificSkuCount": "0"}), None).await;
    assert_eq!(status, 400, "{zero}");
    let (status, _) = send(
        http.post(format!(
            "{}/compute/v1/projects/{PROJECT}/zones/{ZONE}/reservations/nope/resize",
            sim.base_url()
        ))
        .json(&json!({"specificSkuCount": "1"})),
    )
    .await;
    assert_eq!(status, 404);
}

#[tokio::test(flavor = "multi_thread")]
async fn capacity_freed_after_the_deadline_comes_too_late_however_late_the_next_read() {
    let capacity = CapacityConfig::default()
        .with_on_demand(ZONE, "n2-standard-8", 1)
        .with_stockout_wait(600.0);
    let sim = start(capacity).await;
    let cli = Gcloud::in_project(&sim, PROJECT);
    clusters(&sim, &["c1"]).await;
    cli.ok(&[
        "compute",
        "reservations",
        "create",
        "hold",
        "--zone=us-central1-a",
        "--vm-count=1",
        "--machine-type=n2-standard-8",
    ])
    .await;
    let args = pool(
        "c1",
        "late",
        &["--machine-type=n2-standard-8", "--num-nodes=1", "--async"],
    );
    cli.ok(&strs(&args)).await;
    let op = running_operation(&cli).await;
    // The reservation's delete takes 900 s: it frees the VM after the pool's deadline (600 s).
    sim.set_faults(FaultConfig {
        extra_latency: [("compute.reservation.delete".to_string(), 900.0)].into(),
        ..FaultConfig::default()
    });
    sim.advance_secs(100.0);
    let request = reqwest::Client::new().delete(format!(
        "{}/compute/v1/projects/{PROJECT}/zones/{ZONE}/reservations/hold",
        sim.base_url()
    ));
    let (status, deleting) = send(request).await;
    assert_eq!(status, 200, "{deleting}");
    // One jump past both: the pool's operation still failed at its deadline.
    sim.advance_secs(2000.0);
    let stderr = cli
        .fails(&[
            "container",
            "operations",
            "wait",
            &op,
            "--location=us-central1",
        ])
        .await;
    assert!(
        stderr.contains("after 10m0s. Expected 1, running 0"),
        "{stderr}"
    );
    assert_eq!(took_secs(&describe_operation(&cli, &op).await), 600);
    assert_eq!(sim.inventory()["compute"]["reservations"], json!([]));
    // The freed VM is there for the next pool.
    assert_running(
        &cli,
        "c1",
        "next",
        &["--machine-type=n2-standard-8", "--num-nodes=1"],
    )
    .await;
}
