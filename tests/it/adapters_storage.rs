//! The Cloud Storage and Artifact Registry adapters against the simulator: the A3 Mega
//! blueprint's checkpoint bucket and Docker repository are created and read back equal to their
//! desired specs, updated in place, refused a second create, and deleted; a non-empty bucket is
//! refused without `force_destroy` and emptied (every object version) with it.

use a3ctl::cloud::Provider;
use a3ctl::cloud::gcp::artifactregistry::ArtifactRegistryAdapter;
use a3ctl::cloud::gcp::storage::StorageAdapter;
use a3ctl::cloud::gcp::{CredentialsMode, Endpoints, GcpConfig};
use a3ctl::cloud::{ErrorClass, OpStatus, Settle, Started, Target};
use a3ctl::plan::FieldDiff;
use a3ctl::resource::{Addr, Desired, Kind, Lifecycle};
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

fn desired(kind: Kind) -> Desired {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("blueprints/a3-mega.toml");
    let bp = a3ctl::blueprint::load(&path).expect("the shipped blueprint loads");
    a3ctl::graph::build::resources(&bp)
        .into_iter()
        .find(|d| d.addr.kind == kind)
        .expect("the blueprint has one")
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

fn diffs(t: &mut Target, changes: Value) -> Vec<FieldDiff> {
    let mut out = Vec::new();
    for (field, value) in changes.as_object().unwrap() {
        out.push(FieldDiff {
            field: field.clone(),
            before: t.spec[field].clone(),
            after: value.clone(),
            forces_replacement: false,
        });
        t.spec[field] = value.clone();
    }
    out
}

async fn finish(adapter: &dyn Provider, started: Started) -> OpStatus {
    match started {
        Started::Done => OpStatus::Done,
        Started::Operation(op) => {
            for _ in 0..20 {
                match adapter.poll(&op).await.expect("poll") {
                    OpStatus::Running { .. } => continue,
                    other => return other,
                }
            }
            panic!("operation {} never finished", op.name)
        }
    }
}

async fn upload(sim: &a3ctl_sim::SimHandle, bucket: &str, name: &str, data: &str) {
    let response = reqwest::Client::new()
        .post(format!("{}/upload/storage/v1/b/{bucket}/o", sim.base_url()))
        .query(&[("uploadType", "media"), ("name", name)])
        .body(data.to_string())
        .send()
        .await
        .unwrap();
    assert!(
        response.status().is_success(),
        "{:?}",
        response.text().await
    );
}

fn objects_in(sim: &a3ctl_sim::SimHandle, bucket: &str) -> Option<usize> {
    let inventory = sim.inventory();
    inventory["storage"]["buckets"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["bucket"]["name"] == bucket)
        .map(|b| b["objects"].as_array().map_or(0, Vec::len))
}

#[tokio::test]
async fn the_checkpoint_bucket_round_trips_updates_and_is_deleted() {
    let sim = a3ctl_sim::start(a3ctl_sim::SimConfig::default())
        .await
        .unwrap();
    let adapter = StorageAdapter::new(&config(&sim)).await.unwrap();
    let d = desired(Kind::Bucket);
    let t = target(&d);
    assert_eq!(adapter.read(&t).await.unwrap(), None);
    assert_eq!(adapter.create(&t).await.unwrap(), Started::Done);
    let live = adapter.read(&t).await.unwrap().expect("created");
    assert_eq!(live.spec, d.spec);
    assert_eq!(live.spec["location"], "US-CENTRAL1");
    assert_eq!(live.outputs["url"], "gs://my-project-a3mega-ckpt");
    assert_eq!(adapter.settle(&t, &live), Settle::Ready);

    // What the simulator holds: HNS with uniform access, the ownership label.
    let inventory = sim.inventory();
    let bucket = &inventory["storage"]["buckets"][0]["bucket"];
    assert_eq!(bucket["hierarchicalNamespace"]["enabled"], true);
    assert_eq!(
        bucket["iamConfiguration"]["uniformBucketLevelAccess"]["enabled"],
        true
    );
    assert_eq!(bucket["labels"]["a3ctl-blueprint"], "a3mega");

    // Bucket names are global: a second create is a 409.
    let e = adapter.create(&t).await.unwrap_err();
    assert_eq!(e.class, ErrorClass::AlreadyExists, "{e:?}");

    // In place: storage class and labels (one PATCH; a dropped label is removed).
    let mut u = t.clone();
    let changes = diffs(
        &mut u,
        json!({"storage_class": "NEARLINE", "labels": {"team": "ml"}}),
    );
    let steps = adapter.update_steps(&u, &changes);
    assert_eq!(steps.len(), 1);
    assert_eq!(steps[0].fields, ["storage_class", "labels"]);
    assert_eq!(adapter.update(&u, &steps[0]).await.unwrap(), Started::Done);
    assert_eq!(adapter.read(&u).await.unwrap().unwrap().spec, u.spec);

    // A bucket with an object is not deleted without force_destroy.
    upload(
        &sim,
        "my-project-a3mega-ckpt",
        "ckpt/step-1/model.pt",
        "weights",
    )
    .await;
    let e = adapter.delete(&u).await.unwrap_err();
    assert_eq!(e.class, ErrorClass::InUse, "{e:?}");
    assert!(
        e.hint.as_deref().unwrap().contains("force_destroy = true"),
        "{e:?}"
    );
    assert_eq!(objects_in(&sim, "my-project-a3mega-ckpt"), Some(1));
    u.lifecycle.force_destroy = true;
    assert_eq!(adapter.delete(&u).await.unwrap(), Started::Done);
    assert_eq!(adapter.read(&u).await.unwrap(), None);
    assert_eq!(objects_in(&sim, "my-project-a3mega-ckpt"), None);
    let e = adapter.delete(&u).await.unwrap_err();
    assert_eq!(e.class, ErrorClass::NotFound);
    sim.shutdown();
}

#[tokio::test]
async fn a_versioned_bucket_is_emptied_of_every_generation_with_force_destroy() {
    let sim = a3ctl_sim::start(a3ctl_sim::SimConfig::default())
        .await
        .unwrap();
    let adapter = StorageAdapter::new(&config(&sim)).await.unwrap();
    let mut t = Target {
        addr: Addr::new(Kind::Bucket, "scratch"),
        id: "projects/_/buckets/my-project-scratch".into(),
        spec: json!({
            "name": "my-project-scratch", "location": "US", "storage_class": "STANDARD",
            "uniform_access": false, "hierarchical_namespace": false, "versioning": false,
            "labels": {"a3ctl-blueprint": "a3mega", "old": "x"},
        }),
        outputs: Value::Null,
        context: Default::default(),
        lifecycle: Lifecycle::default(),
    };
    adapter.create(&t).await.unwrap();
    assert_eq!(adapter.read(&t).await.unwrap().unwrap().spec, t.spec);

    // Uniform access and versioning on, one label dropped.
    let changes = diffs(
        &mut t,
        json!({"uniform_access": true, "versioning": true, "labels": {"a3ctl-blueprint": "a3mega"}}),
    );
    for step in adapter.update_steps(&t, &changes) {
        adapter.update(&t, &step).await.unwrap();
    }
    assert_eq!(adapter.read(&t).await.unwrap().unwrap().spec, t.spec);

    // Three generations of one object (two noncurrent) and another object.
    for data in ["v1", "v2", "v3"] {
        upload(&sim, "my-project-scratch", "data/shard 0", data).await;
    }
    upload(&sim, "my-project-scratch", "other", "x").await;
    assert_eq!(objects_in(&sim, "my-project-scratch"), Some(4));
    assert_eq!(
        adapter.delete(&t).await.unwrap_err().class,
        ErrorClass::InUse
    );
    t.lifecycle.force_destroy = true;
    assert_eq!(adapter.delete(&t).await.unwrap(), Started::Done);
    assert_eq!(objects_in(&sim, "my-project-scratch"), None);
    sim.shutdown();
}

#[tokio::test]
async fn bucket_errors_are_classified() {
    let sim = a3ctl_sim::start(a3ctl_sim::SimConfig::default())
        .await
        .unwrap();
    let adapter = StorageAdapter::new(&config(&sim)).await.unwrap();
    sim.set_faults(FaultConfig {
        scripted: vec![ScriptedFault {
            kind: "storage.bucket".into(),
            verb: "create".into(),
            nth: 1,
            action: FaultAction::Named(NamedFault::QuotaExceeded),
        }],
        ..FaultConfig::default()
    });
    let t = target(&desired(Kind::Bucket));
    // Cloud Storage's bucket create/delete rate limit: retry later.
    let e = adapter.create(&t).await.unwrap_err();
    assert_eq!(e.class, ErrorClass::Transient, "{e:?}");
    assert_eq!(e.http_status, Some(429));
    assert_eq!(adapter.create(&t).await.unwrap(), Started::Done);

    // An invalid setting is refused as such.
    let mut bad = t.clone();
    bad.spec["name"] = json!("my-project-bad");
    bad.spec["uniform_access"] = json!(false);
    let e = adapter.create(&bad).await.unwrap_err();
    assert_eq!(e.class, ErrorClass::Invalid, "{e:?}");
    assert!(e.message.contains("uniform bucket-level access"), "{e:?}");
    sim.shutdown();
}

#[tokio::test]
async fn the_docker_repository_round_trips_updates_and_is_deleted() {
    let sim = a3ctl_sim::start(a3ctl_sim::SimConfig::default())
        .await
        .unwrap();
    let adapter = ArtifactRegistryAdapter::new(&config(&sim)).await.unwrap();
    let d = desired(Kind::Repository);
    assert_eq!(d.spec["format"], "DOCKER");
    let t = target(&d);
    assert_eq!(adapter.read(&t).await.unwrap(), None);
    let started = adapter.create(&t).await.unwrap();
    let Started::Operation(op) = &started else {
        panic!("a repository create is an operation")
    };
    assert!(
        op.name
            .starts_with("projects/my-project/locations/us-central1/operations/"),
        "{}",
        op.name
    );
    assert_eq!(finish(&adapter, started).await, OpStatus::Done);
    let live = adapter.read(&t).await.unwrap().expect("created");
    assert_eq!(live.spec, d.spec);
    assert_eq!(
        live.outputs["registry_uri"],
        "us-central1-docker.pkg.dev/my-project/training"
    );
    let inventory = sim.inventory();
    assert!(
        inventory["artifactregistry"]
            .to_string()
            .contains("projects/my-project/locations/us-central1/repositories/training"),
        "{inventory}"
    );

    let e = adapter.create(&t).await.unwrap_err();
    assert_eq!(e.class, ErrorClass::AlreadyExists, "{e:?}");

    // Labels and description in one synchronous update.
    let mut u = t.clone();
    let changes = diffs(
        &mut u,
        json!({"description": "training images", "labels": {"a3ctl-blueprint": "a3mega", "team": "ml"}}),
    );
    let steps = adapter.update_steps(&u, &changes);
    assert_eq!(steps.len(), 1);
    assert_eq!(adapter.update(&u, &steps[0]).await.unwrap(), Started::Done);
    assert_eq!(adapter.read(&u).await.unwrap().unwrap().spec, u.spec);
    assert!(
        adapter
            .update_steps(&u, &diffs(&mut u.clone(), json!({"format": "MAVEN"})))
            .is_empty()
    );

    let started = adapter.delete(&u).await.unwrap();
    assert!(matches!(started, Started::Operation(_)));
    assert_eq!(finish(&adapter, started).await, OpStatus::Done);
    assert_eq!(adapter.read(&u).await.unwrap(), None);
    assert_eq!(
        adapter.delete(&u).await.unwrap_err().class,
        ErrorClass::NotFound
    );
    sim.shutdown();
}

#[tokio::test]
async fn repository_errors_are_classified() {
    let sim = a3ctl_sim::start(a3ctl_sim::SimConfig::default())
        .await
        .unwrap();
    let adapter = ArtifactRegistryAdapter::new(&config(&sim)).await.unwrap();
    let scripted = |nth, action| ScriptedFault {
        kind: "artifactregistry.repository".into(),
        verb: "create".into(),
        nth,
        action,
    };
    sim.set_faults(FaultConfig {
        scripted: vec![
            scripted(1, FaultAction::Named(NamedFault::QuotaExceeded)),
            scripted(2, FaultAction::Named(NamedFault::OperationError)),
        ],
        ..FaultConfig::default()
    });
    let t = target(&desired(Kind::Repository));
    // The per-minute request quota is a rate limit: transient.
    let e = adapter.create(&t).await.unwrap_err();
    assert_eq!(e.class, ErrorClass::Transient, "{e:?}");
    // An operation that ends with an error fails with its message.
    let started = adapter.create(&t).await.unwrap();
    let OpStatus::Failed(e) = finish(&adapter, started).await else {
        panic!("the operation should fail")
    };
    assert_eq!(e.status, "INTERNAL");
    assert!(e.message.contains("Internal error"), "{e:?}");
    assert_eq!(adapter.read(&t).await.unwrap(), None);
    sim.shutdown();
}
