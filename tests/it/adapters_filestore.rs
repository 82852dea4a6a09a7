//! The Filestore adapter against the in-process simulator: the A3 Mega blueprint's share is
//! created, read back equal to its desired spec, grown and relabeled in place, and deleted.

use a3ctl::cloud::gcp::{CredentialsMode, Endpoints, GcpConfig, GcpProvider};
use a3ctl::cloud::{ErrorClass, OpStatus, Provider, Settle, Started, Target};
use a3ctl::graph::build::{addr, resources};
use a3ctl::plan::FieldDiff;
use a3ctl::resource::{Addr, Kind};
use a3ctl_sim::SimConfig;
use a3ctl_sim::faults::{FaultAction, FaultConfig, NamedFault, ScriptedFault};
use serde_json::{Value, json};
use std::time::Duration;

const PROJECT: &str = "my-project";

struct Env {
    sim: a3ctl_sim::SimHandle,
    provider: GcpProvider,
    target: Target,
}

async fn env() -> Env {
    let _ = rustls::crypto::aws_lc_rs::default_provider().install_default();
    let sim = a3ctl_sim::start(SimConfig::default()).await.unwrap();
    let provider = GcpProvider::new(GcpConfig {
        project: PROJECT.into(),
        endpoints: Endpoints::simulator(sim.base_url()),
        credentials: CredentialsMode::Anonymous,
        poll: Duration::from_millis(1),
    })
    .await
    .unwrap();
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/blueprints/a3-mega.toml");
    let desired = resources(&a3ctl::blueprint::load(std::path::Path::new(path)).unwrap());
    // The share's network must exist.
    let network = desired
        .iter()
        .find(|d| d.addr == addr::primary_network())
        .unwrap();
    let response = reqwest::Client::new()
        .post(format!(
            "{}/compute/v1/projects/{PROJECT}/global/networks",
            sim.base_url()
        ))
        .json(&json!({"name": network.spec["name"], "autoCreateSubnetworks": false}))
        .send()
        .await
        .unwrap();
    assert!(response.status().is_success());
    let fs = desired
        .iter()
        .find(|d| d.addr == Addr::new(Kind::Filestore, "shared"))
        .unwrap();
    let target = Target {
        addr: fs.addr.clone(),
        id: fs.id.clone(),
        spec: fs.spec.clone(),
        outputs: Value::Null,
        context: Default::default(),
        lifecycle: fs.lifecycle.clone(),
    };
    Env {
        sim,
        provider,
        target,
    }
}

impl Env {
    async fn finish(&self, started: Started) -> OpStatus {
        let Started::Operation(op) = started else {
            panic!("Filestore calls are operations");
        };
        assert!(op.name.starts_with("projects/my-project/locations/"));
        for _ in 0..20 {
            match self.provider.poll(&op).await.unwrap() {
                OpStatus::Running { .. } => continue,
                done => return done,
            }
        }
        panic!("operation {} did not finish", op.name);
    }
}

fn diff(field: &str, before: Value, after: Value) -> FieldDiff {
    FieldDiff {
        field: field.into(),
        before,
        after,
        forces_replacement: false,
    }
}

#[tokio::test]
async fn a3_mega_share_round_trip() {
    let env = env().await;
    let t = &env.target;
    assert_eq!(env.provider.read(t).await.unwrap(), None);
    let started = env.provider.create(t).await.unwrap();
    assert_eq!(env.finish(started).await, OpStatus::Done);
    let observed = env.provider.read(t).await.unwrap().unwrap();
    assert_eq!(observed.spec, t.spec);
    assert_eq!(env.provider.settle(t, &observed), Settle::Ready);
    assert!(!observed.outputs["ip_address"].as_str().unwrap().is_empty());
    assert_eq!(observed.outputs["share"], "nfsshare");

    let inventory = env.sim.inventory();
    let instance = &inventory["file"]["instances"][0];
    assert_eq!(instance["tier"], "BASIC_SSD");
    assert_eq!(instance["fileShares"][0]["capacityGb"], "2560");
    assert_eq!(instance["networks"][0]["modes"], json!(["MODE_IPV4"]));
    assert_eq!(instance["state"], "READY");

    let again = env.provider.create(t).await.unwrap_err();
    assert_eq!(again.class, ErrorClass::AlreadyExists);

    // Capacity grows in place, then labels.
    let mut grown = t.clone();
    grown.spec["capacity_gb"] = json!(4096);
    grown.spec["labels"]["team"] = json!("ml");
    let steps = env.provider.update_steps(
        &grown,
        &[
            diff("capacity_gb", json!(2560), json!(4096)),
            diff(
                "labels",
                t.spec["labels"].clone(),
                grown.spec["labels"].clone(),
            ),
        ],
    );
    let names: Vec<&str> = steps.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["patch(file_shares)", "patch(labels)"]);
    for step in &steps {
        let started = env.provider.update(&grown, step).await.unwrap();
        assert_eq!(env.finish(started).await, OpStatus::Done, "{}", step.name);
    }
    let observed = env.provider.read(&grown).await.unwrap().unwrap();
    assert_eq!(observed.spec, grown.spec);
    assert_eq!(
        env.sim.inventory()["file"]["instances"][0]["fileShares"][0]["capacityGb"],
        "4096"
    );

    // Deletion protection (on, as the blueprint's default asks) refuses the delete until an
    // update turns it off.
    assert_eq!(instance["deletionProtectionEnabled"], true);
    assert!(
        instance["deletionProtectionReason"]
            .as_str()
            .unwrap()
            .starts_with("a3ctl")
    );
    let refused = env.provider.delete(t).await.unwrap_err();
    assert_eq!(refused.status, "FAILED_PRECONDITION", "{refused:?}");
    let mut lifted = grown.clone();
    lifted.spec["deletion_protection"] = json!(false);
    let steps = env.provider.update_steps(
        &lifted,
        &[diff("deletion_protection", json!(true), json!(false))],
    );
    assert_eq!(steps.len(), 1);
    assert_eq!(steps[0].name, "patch(deletion_protection_enabled)");
    let started = env.provider.update(&lifted, &steps[0]).await.unwrap();
    assert_eq!(env.finish(started).await, OpStatus::Done);
    let observed = env.provider.read(&lifted).await.unwrap().unwrap();
    assert_eq!(observed.spec, lifted.spec);
    // proto3 JSON leaves out a false boolean.
    assert_ne!(
        env.sim.inventory()["file"]["instances"][0]["deletionProtectionEnabled"],
        true
    );

    let started = env.provider.delete(t).await.unwrap();
    assert_eq!(env.finish(started).await, OpStatus::Done);
    assert_eq!(env.provider.read(t).await.unwrap(), None);
    let gone = env.provider.delete(t).await.unwrap_err();
    assert_eq!(gone.class, ErrorClass::NotFound);
}

#[tokio::test]
async fn failures_are_classified() {
    let env = env().await;
    env.sim.set_faults(FaultConfig {
        scripted: vec![
            ScriptedFault {
                kind: "file.instance".into(),
                verb: "create".into(),
                nth: 1,
                action: FaultAction::Named(NamedFault::QuotaExceeded),
            },
            ScriptedFault {
                kind: "file.instance".into(),
                verb: "create".into(),
                nth: 2,
                action: FaultAction::Named(NamedFault::Stockout),
            },
        ],
        ..FaultConfig::default()
    });
    let quota = env.provider.create(&env.target).await.unwrap_err();
    assert_eq!(quota.class, ErrorClass::Quota, "{quota:?}");
    let started = env.provider.create(&env.target).await.unwrap();
    let OpStatus::Failed(error) = env.finish(started).await else {
        panic!("the create should fail");
    };
    assert_eq!(error.class, ErrorClass::Capacity, "{error:?}");
    assert_eq!(env.provider.read(&env.target).await.unwrap(), None);
}
