//! The Compute Engine adapters (one per kind, through the provider's registry) against the
//! simulator: every Compute resource of the A3 Mega
//! blueprint is created, polled and read back equal to its desired spec; each updatable field is
//! changed in place; errors are classified; everything is deleted again.

use a3ctl::cloud::Provider;
use a3ctl::cloud::gcp::GcpProvider;
use a3ctl::cloud::gcp::{CredentialsMode, Endpoints, GcpConfig};
use a3ctl::cloud::{ErrorClass, OpStatus, Started, Target};
use a3ctl::plan::FieldDiff;
use a3ctl::resource::{Desired, Kind};
use a3ctl::state::OperationRef;
use a3ctl_sim::faults::{FaultAction, FaultConfig, NamedFault, ScriptedFault};
use serde_json::{Value, json};
use std::time::Duration;

const PROJECT: &str = "my-project";

fn config(sim: &a3ctl_sim::SimHandle) -> GcpConfig {
    GcpConfig {
        project: PROJECT.into(),
        endpoints: Endpoints::simulator(sim.base_url()),
        credentials: CredentialsMode::Anonymous,
        poll: Duration::from_millis(1),
    }
}

fn blueprint_resources() -> Vec<Desired> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("blueprints/a3-mega.toml");
    let bp = a3ctl::blueprint::load(&path).expect("the shipped blueprint loads");
    a3ctl::graph::build::resources(&bp)
}

fn target(d: &Desired) -> Target {
    Target {
        addr: d.addr.clone(),
        id: d.id.clone(),
        spec: d.spec.clone(),
        outputs: Value::Null,
        context: Default::default(),
        lifecycle: d.lifecycle.clone(),
    }
}

/// Polls until the operation is no longer running (the simulator's zero-latency operations finish
/// at the next read).
async fn wait(adapter: &GcpProvider, op: &OperationRef) -> OpStatus {
    for _ in 0..20 {
        match adapter.poll(op).await.expect("poll") {
            OpStatus::Running { .. } => continue,
            other => return other,
        }
    }
    panic!("operation {} never finished", op.name);
}

async fn run(adapter: &GcpProvider, started: Started) {
    match started {
        Started::Done => {}
        Started::Operation(op) => {
            assert_eq!(wait(adapter, &op).await, OpStatus::Done, "{}", op.name)
        }
    }
}

fn diff(field: &str, before: &Value, after: &Value) -> FieldDiff {
    FieldDiff {
        field: field.into(),
        before: before.clone(),
        after: after.clone(),
        forces_replacement: false,
    }
}

/// Changes `changes` on `t` in place through the adapter's update steps, then reads it back.
async fn update(adapter: &GcpProvider, t: &mut Target, changes: Value, expected_steps: &[&str]) {
    let mut diffs = Vec::new();
    for (field, value) in changes.as_object().unwrap() {
        diffs.push(diff(field, &t.spec[field], value));
        t.spec[field] = value.clone();
    }
    let steps = adapter.update_steps(t, &diffs);
    let names: Vec<&str> = steps.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, expected_steps, "{}", t.addr);
    for step in &steps {
        let started = adapter.update(t, step).await.expect("update call");
        run(adapter, started).await;
    }
    let live = adapter.read(t).await.unwrap().expect("still there");
    assert_eq!(live.spec, t.spec, "{} after {:?}", t.addr, names);
}

async fn get_raw(sim: &a3ctl_sim::SimHandle, path: &str) -> Value {
    reqwest::get(format!("{}/compute/v1/{path}", sim.base_url()))
        .await
        .unwrap()
        .json()
        .await
        .unwrap()
}

#[tokio::test]
async fn the_a3_mega_compute_resources_round_trip_update_and_delete() {
    let sim = a3ctl_sim::start(a3ctl_sim::SimConfig::default())
        .await
        .unwrap();
    let adapter = GcpProvider::new(config(&sim)).await.unwrap();
    let desired: Vec<Desired> = blueprint_resources()
        .into_iter()
        .filter(|d| {
            matches!(
                d.addr.kind,
                Kind::Network
                    | Kind::Subnetwork
                    | Kind::Firewall
                    | Kind::Router
                    | Kind::ResourcePolicy
            )
        })
        .collect();
    // 9 networks, 9 subnets, 9 firewalls, the router and the placement policy.
    assert_eq!(desired.len(), 29);

    // Create in the graph's order (networks come before what references them).
    for d in &desired {
        let t = target(d);
        assert_eq!(adapter.read(&t).await.unwrap(), None, "{}", d.addr);
        let started = adapter.create(&t).await.expect("create");
        let Started::Operation(op) = &started else {
            panic!("Compute creates are operations")
        };
        assert!(op.name.starts_with("projects/my-project/"), "{}", op.name);
        run(&adapter, started).await;
        let live = adapter.read(&t).await.unwrap().expect("created");
        assert_eq!(live.spec, d.spec, "{} reads back as desired", d.addr);
        assert!(
            live.outputs["self_link"].as_str().unwrap().ends_with(&d.id),
            "{}",
            d.addr
        );
        assert!(live.outputs["id"].is_string());
        assert_eq!(
            adapter.settle(&t, &live),
            a3ctl::cloud::Settle::Ready,
            "{}",
            d.addr
        );
    }

    // The simulator holds what the recipe needs: 8 GPU VPCs with MTU 8244, a NAT, a compact policy.
    let inventory = sim.inventory();
    let networks = inventory["compute"]["networks"].as_array().unwrap();
    assert_eq!(networks.len(), 9);
    assert!(networks.iter().all(|n| n["state"] == "READY"));
    for i in 1..=8 {
        let net = get_raw(
            &sim,
            &format!("projects/{PROJECT}/global/networks/a3mega-gpunet-{i}"),
        )
        .await;
        assert_eq!(net["mtu"], 8244);
        assert_eq!(net["autoCreateSubnetworks"], false);
    }
    let router = get_raw(
        &sim,
        &format!("projects/{PROJECT}/regions/us-central1/routers/a3mega-router"),
    )
    .await;
    assert_eq!(router["nats"][0]["name"], "a3mega-nat");
    assert_eq!(router["nats"][0]["natIpAllocateOption"], "AUTO_ONLY");
    let policy = get_raw(
        &sim,
        &format!("projects/{PROJECT}/regions/us-central1/resourcePolicies/a3mega-a3mega-placement"),
    )
    .await;
    assert_eq!(policy["groupPlacementPolicy"]["collocation"], "COLLOCATED");

    // A retried create (same adapter, same spec) carries the same requestId: Compute answers with
    // the first operation instead of a 409.
    let primary = target(&desired[0]);
    assert!(adapter.create(&primary).await.is_ok());
    // Another process (a fresh adapter) gets the 409.
    let other = GcpProvider::new(config(&sim)).await.unwrap();
    let e = other.create(&primary).await.unwrap_err();
    assert_eq!(e.class, ErrorClass::AlreadyExists, "{e:?}");

    // In-place updates of every updatable field.
    let find = |kind: Kind, name: &str| {
        target(
            desired
                .iter()
                .find(|d| d.addr.kind == kind && d.addr.name == name)
                .unwrap(),
        )
    };
    let mut net = find(Kind::Network, "gpu-1");
    update(&adapter, &mut net, json!({"mtu": 8896}), &["patch"]).await;
    update(
        &adapter,
        &mut net,
        json!({"routing_mode": "GLOBAL"}),
        &["patch"],
    )
    .await;

    let mut subnet = find(Kind::Subnetwork, "primary");
    update(
        &adapter,
        &mut subnet,
        json!({
            "ip_cidr_range": "10.0.0.0/19",
            "secondary_ranges": [
                {"name": "pods", "cidr": "10.4.0.0/14"},
                {"name": "services", "cidr": "10.0.32.0/20"},
                {"name": "extra", "cidr": "10.8.0.0/20"},
            ],
            "private_ip_google_access": false,
        }),
        &["expandIpCidrRange", "patch"],
    )
    .await;

    let mut fw = find(Kind::Firewall, "gpu-1-internal");
    update(
        &adapter,
        &mut fw,
        json!({
            "priority": 900,
            "description": "changed",
            "allowed": [{"protocol": "tcp", "ports": ["22", "8000-9000"]}],
            "source_ranges": ["10.0.0.0/8", "192.168.1.0/24"],
        }),
        &["patch"],
    )
    .await;

    let mut router = find(Kind::Router, "primary");
    let mut nat = router.spec["nat"].clone();
    nat["source_ranges"] = json!("ALL_SUBNETWORKS_ALL_PRIMARY_IP_RANGES");
    update(&adapter, &mut router, json!({ "nat": nat }), &["patch"]).await;
    update(&adapter, &mut router, json!({ "nat": null }), &["patch"]).await;
    let live = get_raw(
        &sim,
        &format!("projects/{PROJECT}/regions/us-central1/routers/a3mega-router"),
    )
    .await;
    assert!(live.get("nats").is_none_or(|n| n == &json!([])), "{live}");

    // Placement policies have nothing to update in place.
    let policy = find(Kind::ResourcePolicy, "a3mega");
    assert!(
        adapter
            .update_steps(
                &policy,
                &[diff("collocation", &json!("COLLOCATED"), &json!("x"))]
            )
            .is_empty()
    );

    // A network that still has a subnetwork cannot go: InUse, in its operation as on Google. Its
    // failed operation does not come back when the network is deleted for real below: the
    // failed call's requestId is forgotten.
    let e = match adapter.delete(&net).await {
        Err(e) => e,
        Ok(Started::Operation(op)) => match wait(&adapter, &op).await {
            OpStatus::Failed(e) => e,
            other => panic!("deleting a used network: {other:?}"),
        },
        Ok(Started::Done) => panic!("deleting a used network succeeded"),
    };
    assert_eq!(e.class, ErrorClass::InUse, "{e:?}");

    // Delete everything, dependants first.
    for d in desired.iter().rev() {
        let t = target(d);
        let started = adapter.delete(&t).await.expect("delete");
        run(&adapter, started).await;
        assert_eq!(adapter.read(&t).await.unwrap(), None, "{} is gone", d.addr);
        // (The same adapter would replay its delete; another one hears 404.)
        let e = other.delete(&t).await.unwrap_err();
        assert_eq!(e.class, ErrorClass::NotFound, "{}: {e:?}", d.addr);
    }
    let inventory = sim.inventory();
    assert!(
        inventory["compute"]["networks"]
            .as_array()
            .unwrap()
            .is_empty()
    );

    // Created again after the delete: a fresh requestId, so a real create (not a replay).
    let t = target(&desired[0]);
    run(&adapter, adapter.create(&t).await.unwrap()).await;
    assert!(adapter.read(&t).await.unwrap().is_some());
    sim.shutdown();
}

/// Creates `t` through a fresh adapter (a new requestId, as another run would send).
async fn other_create(sim: &a3ctl_sim::SimHandle, t: &Target) -> Started {
    let fresh = GcpProvider::new(config(sim)).await.unwrap();
    fresh.create(t).await.expect("create")
}

#[tokio::test]
async fn operation_failures_are_classified() {
    let sim = a3ctl_sim::start(a3ctl_sim::SimConfig::default())
        .await
        .unwrap();
    let adapter = GcpProvider::new(config(&sim)).await.unwrap();
    let scripted = |kind: &str, action| ScriptedFault {
        kind: kind.into(),
        verb: "create".into(),
        nth: 1,
        action,
    };
    sim.set_faults(FaultConfig {
        scripted: vec![
            scripted(
                "compute.network",
                FaultAction::Named(NamedFault::QuotaExceeded),
            ),
            scripted(
                "compute.resourcePolicy",
                FaultAction::Named(NamedFault::OperationError),
            ),
            scripted(
                "compute.firewall",
                FaultAction::Http {
                    status: 403,
                    reason: "forbidden".into(),
                    message: "Required 'compute.firewalls.create' permission".into(),
                },
            ),
        ],
        ..FaultConfig::default()
    });
    let all = blueprint_resources();
    let of = |kind: Kind| target(all.iter().find(|d| d.addr.kind == kind).unwrap());

    // Quota: the insert starts, its operation ends DONE with QUOTA_EXCEEDED.
    let net = of(Kind::Network);
    let outcome = match adapter.create(&net).await {
        Ok(Started::Operation(op)) => wait(&adapter, &op).await,
        other => panic!("{other:?}"),
    };
    let OpStatus::Failed(e) = outcome else {
        panic!("{outcome:?}")
    };
    assert_eq!(e.class, ErrorClass::Quota, "{e:?}");
    assert!(e.message.contains("NETWORKS"), "{}", e.message);
    assert!(e.hint.is_some());
    assert_eq!(adapter.read(&net).await.unwrap(), None);
    // The next insert of the network goes through.
    run(&adapter, other_create(&sim, &net).await).await;

    // An internal error inside the operation is reported with its code.
    let policy = of(Kind::ResourcePolicy);
    let Ok(Started::Operation(op)) = adapter.create(&policy).await else {
        panic!()
    };
    let OpStatus::Failed(e) = wait(&adapter, &op).await else {
        panic!()
    };
    assert_eq!(e.status, "INTERNAL_ERROR");
    assert_eq!(e.class, ErrorClass::Transient, "{e:?}");

    // An immediate 403 is a permission error with a hint.
    let fw = of(Kind::Firewall);
    let e = adapter.create(&fw).await.unwrap_err();
    assert_eq!(e.class, ErrorClass::Permission, "{e:?}");
    assert!(e.message.contains("compute.firewalls.create"));

    // Bad ids and bad operation names are refused before any call.
    let mut bad = of(Kind::Network);
    bad.id = "networks/x".into();
    assert_eq!(
        adapter.read(&bad).await.unwrap_err().class,
        ErrorClass::Invalid
    );
    let e = adapter
        .poll(&OperationRef {
            api: a3ctl::resource::Api::Compute,
            name: "operation-1".into(),
        })
        .await
        .unwrap_err();
    assert_eq!(e.class, ErrorClass::Invalid);
    sim.shutdown();
}

/// A reservation is read-only: one made with gcloud reads back as its spec, a missing one is
/// absent, and every change is refused before any request.
#[tokio::test]
async fn a_reservation_made_with_gcloud_reads_back_and_is_never_changed() {
    let sim = a3ctl_sim::start(a3ctl_sim::SimConfig::default())
        .await
        .unwrap();
    let gcloud = crate::common::gcloud::Gcloud::in_project(&sim, PROJECT);
    gcloud
        .json(&[
            "compute",
            "reservations",
            "create",
            "a3mega-res",
            "--zone=us-central1-a",
            "--vm-count=4",
            "--machine-type=a3-megagpu-8g",
            "--accelerator=count=8,type=nvidia-h100-mega-80gb",
            "--require-specific-reservation",
        ])
        .await;
    let adapter = GcpProvider::new(config(&sim)).await.unwrap();
    let reservation = |name: &str| Target {
        addr: a3ctl::resource::Addr::new(Kind::Reservation, name),
        id: format!("projects/{PROJECT}/zones/us-central1-a/reservations/{name}"),
        spec: Value::Null,
        outputs: Value::Null,
        context: Default::default(),
        lifecycle: Default::default(),
    };
    let target = reservation("a3mega-res");
    let observed = adapter.read(&target).await.unwrap().expect("it exists");
    assert_eq!(
        observed.spec,
        json!({
            "name": "a3mega-res", "zone": "us-central1-a", "machine_type": "a3-megagpu-8g",
            "count": 4,
            "accelerators": [{"type": "nvidia-h100-mega-80gb", "count": 8}],
            "local_ssds": 0, "specific_reservation_required": true, "deployment_type": "",
            "share_type": "LOCAL",
        })
    );
    assert_eq!(observed.outputs["in_use_count"], 0);
    assert_eq!(observed.outputs["status"], "READY");
    assert!(adapter.read(&reservation("other")).await.unwrap().is_none());

    let mutations = || {
        sim.request_counts()
            .iter()
            .filter(|(endpoint, _)| {
                endpoint.contains("/reservations") && !endpoint.starts_with("GET")
            })
            .map(|(_, n)| n)
            .sum::<u64>()
    };
    let before = mutations();
    assert_eq!(before, 1, "gcloud's insert is counted");
    let refused = adapter.delete(&target).await.unwrap_err();
    assert_eq!(refused.class, ErrorClass::Invalid);
    assert_eq!(
        refused.message,
        "reservation.a3mega-res is read-only: a3ctl never creates, changes or deletes a reservation"
    );
    assert!(
        refused
            .hint
            .unwrap()
            .contains("gcloud compute reservations")
    );
    assert_eq!(
        adapter.create(&target).await.unwrap_err().class,
        ErrorClass::Invalid
    );
    assert_eq!(mutations(), before, "no mutating reservation request");
    // Still there.
    assert!(adapter.read(&target).await.unwrap().is_some());
}
