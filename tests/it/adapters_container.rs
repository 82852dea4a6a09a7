//! The GKE adapter against the in-process simulator: the A3 Mega blueprint's cluster, system pool
//! and GPU pool are created, read back equal to their desired specs, updated in place and
//! deleted; GKE's one-operation-per-cluster rule and a scripted stockout come back classified.

use a3ctl::cloud::gcp::{CredentialsMode, Endpoints, GcpConfig, GcpProvider};
use a3ctl::cloud::{ErrorClass, OpStatus, Provider, Settle, Started, Target};
use a3ctl::graph::build::{addr, resources};
use a3ctl::plan::FieldDiff;
use a3ctl::resource::{Addr, Desired, Kind, spec};
use a3ctl_sim::SimConfig;
use a3ctl_sim::faults::{FaultAction, FaultConfig, NamedFault, ScriptedFault};
use base64::Engine;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::time::Duration;

const PROJECT: &str = "my-project";
/// The shipped blueprint asks for the newest 1.32 build of the REGULAR channel.
const SHIPPED_VERSION: &str = "version = \"1.32\"";

struct Env {
    sim: a3ctl_sim::SimHandle,
    provider: GcpProvider,
    desired: Vec<Desired>,
    http: reqwest::Client,
}

fn blueprint(version: &str) -> a3ctl::blueprint::Blueprint {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/blueprints/a3-mega.toml");
    let text = std::fs::read_to_string(path).unwrap();
    assert!(text.contains(SHIPPED_VERSION));
    let text = text.replace(SHIPPED_VERSION, &format!("version = \"{version}\""));
    a3ctl::blueprint::parse(&text, path).unwrap()
}

async fn env_with(version: &str) -> Env {
    let _ = rustls::crypto::aws_lc_rs::default_provider().install_default();
    let sim = a3ctl_sim::start(SimConfig::default()).await.unwrap();
    crate::common::provide_shipped_reservations(&sim).await;
    let provider = GcpProvider::new(GcpConfig {
        project: PROJECT.into(),
        endpoints: Endpoints::simulator(sim.base_url()),
        credentials: CredentialsMode::Anonymous,
        poll: Duration::from_millis(1),
    })
    .await
    .unwrap();
    let env = Env {
        sim,
        provider,
        desired: resources(&blueprint(version)),
        http: reqwest::Client::new(),
    };
    env.create_compute_dependencies().await;
    env
}

async fn env() -> Env {
    env_with("1.32").await
}

impl Env {
    fn desired(&self, addr: &Addr) -> &Desired {
        self.desired.iter().find(|d| &d.addr == addr).unwrap()
    }

    fn target(&self, addr: &Addr, context: &[(&Addr, &Value)]) -> Target {
        let d = self.desired(addr);
        Target {
            addr: d.addr.clone(),
            id: d.id.clone(),
            spec: d.spec.clone(),
            outputs: Value::Null,
            context: context
                .iter()
                .map(|(a, v)| ((*a).clone(), (*v).clone()))
                .collect::<BTreeMap<_, _>>(),
            lifecycle: d.lifecycle.clone(),
        }
    }

    async fn post(&self, path: &str, body: Value) {
        let url = format!(
            "{}/compute/v1/projects/{PROJECT}/{path}",
            self.sim.base_url()
        );
        let response = self.http.post(url).json(&body).send().await.unwrap();
        let status = response.status();
        let text = response.text().await.unwrap();
        assert!(status.is_success(), "POST {path}: {status} {text}");
    }

    /// The primary and GPU networks and subnets and the placement policies, from their specs.
    async fn create_compute_dependencies(&self) {
        for d in &self.desired {
            let s = &d.spec;
            match d.addr.kind {
                Kind::Network => {
                    let body =
                        json!({"name": s["name"], "autoCreateSubnetworks": false, "mtu": s["mtu"]});
                    self.post("global/networks", body).await;
                }
                Kind::ResourcePolicy => {
                    let body = json!({"name": s["name"], "groupPlacementPolicy": {"collocation": "COLLOCATED"}});
                    self.post(
                        &format!("regions/{}/resourcePolicies", s["region"].as_str().unwrap()),
                        body,
                    )
                    .await;
                }
                _ => {}
            }
        }
        // Subnets after their networks (any request finishes the networks' operations).
        for d in self
            .desired
            .iter()
            .filter(|d| d.addr.kind == Kind::Subnetwork)
        {
            let s = &d.spec;
            let ranges: Vec<Value> = s["secondary_ranges"]
                .as_array()
                .unwrap()
                .iter()
                .map(|r| json!({"rangeName": r["name"], "ipCidrRange": r["cidr"]}))
                .collect();
            let body = json!({
                "name": s["name"], "ipCidrRange": s["ip_cidr_range"], "secondaryIpRanges": ranges,
                "network": format!("projects/{PROJECT}/global/networks/{}", s["network"].as_str().unwrap()),
            });
            self.post(
                &format!("regions/{}/subnetworks", s["region"].as_str().unwrap()),
                body,
            )
            .await;
        }
    }

    /// Polls until the operation ends.
    async fn finish(&self, started: Started) -> OpStatus {
        let Started::Operation(op) = started else {
            return OpStatus::Done;
        };
        for _ in 0..20 {
            match self.provider.poll(&op).await.unwrap() {
                OpStatus::Running { .. } => continue,
                done => return done,
            }
        }
        panic!("operation {} did not finish", op.name);
    }

    async fn create(&self, target: &Target) {
        let started = self.provider.create(target).await.unwrap();
        assert!(matches!(started, Started::Operation(_)));
        assert_eq!(
            self.finish(started).await,
            OpStatus::Done,
            "create {}",
            target.addr
        );
    }

    /// The raw API resource, as GKE returns it.
    async fn gke(&self, id: &str) -> Value {
        let url = format!("{}/container/v1/{id}", self.sim.base_url());
        self.http
            .get(url)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap()
    }

    async fn cluster(&self) -> (Target, Value) {
        let cluster = self.target(&addr::cluster(), &[]);
        self.create(&cluster).await;
        let observed = self.provider.read(&cluster).await.unwrap().unwrap();
        (cluster, observed.outputs)
    }
}

/// Every spec field of `kind` matches as the planner compares it, and no field is extra.
fn assert_matches(kind: Kind, desired: &Value, live: &Value) {
    // Fields that are never diffed (e.g. `gpudirect_family`) are inputs to the adapter only.
    let names: Vec<&str> = spec::fields(kind)
        .iter()
        .filter(|f| f.compare != spec::Compare::Never)
        .map(|f| f.name)
        .collect();
    for field in spec::fields(kind) {
        // a3ctl's own settings are not in the cloud: the planner puts the recorded ones back.
        if desired.get(field.name).is_none() || field.change == spec::Change::Local {
            continue;
        }
        assert!(
            spec::matches(field, &desired[field.name], &live[field.name]),
            "{kind:?}.{}: desired {} live {}",
            field.name,
            desired[field.name],
            live[field.name]
        );
    }
    let diffed = |k: &&String| names.contains(&k.as_str());
    let desired_keys: Vec<&String> = desired.as_object().unwrap().keys().filter(diffed).collect();
    let live_keys: Vec<&String> = live.as_object().unwrap().keys().filter(diffed).collect();
    assert_eq!(
        desired_keys.len(),
        live_keys.len(),
        "{desired_keys:?} vs {live_keys:?}"
    );
    for k in desired_keys {
        assert!(live.get(k).is_some(), "{kind:?}: live lacks {k}");
        let local = spec::fields(kind)
            .iter()
            .any(|f| f.name == k.as_str() && f.change == spec::Change::Local);
        let field = spec::fields(kind).iter().find(|f| f.name == k.as_str());
        // A maintenance policy is compared by meaning: GKE fills in an exclusion's start.
        if let Some(field) = field.filter(|f| f.compare == spec::Compare::MaintenancePolicy) {
            assert!(
                spec::matches(field, &desired[k], &live[k]),
                "{kind:?}.{k}: {} vs {}",
                desired[k],
                live[k]
            );
        } else if names.contains(&k.as_str()) && k != "version" && !local {
            assert_eq!(desired[k], live[k], "{kind:?}.{k}");
        }
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

#[test]
fn a3_mega_cluster_and_pools_round_trip() {
    crate::common::on_app_runtime(async {
        let env = env().await;
        let cluster_addr = addr::cluster();
        let (cluster, outputs) = env.cluster().await;

        // Read == desired; the version is the live build, matched by prefix.
        let observed = env.provider.read(&cluster).await.unwrap().unwrap();
        assert_matches(Kind::Cluster, &cluster.spec, &observed.spec);
        assert!(
            observed.spec["version"]
                .as_str()
                .unwrap()
                .starts_with("1.32.")
        );
        assert_eq!(env.provider.settle(&cluster, &observed), Settle::Ready);
        assert_eq!(
            observed.outputs["node_pools"],
            json!([]),
            "bootstrap pool removed"
        );
        let endpoint = outputs["endpoint"].as_str().unwrap();
        let ca = outputs["ca_certificate"].as_str().unwrap();
        assert!(!endpoint.is_empty() && !ca.is_empty());
        assert!(
            outputs["self_link"]
                .as_str()
                .unwrap()
                .starts_with("https://container.googleapis.com/v1/")
        );

        // The real resource has the recipe's settings.
        let raw = env.gke(&cluster.id).await;
        assert_eq!(
            raw["networkConfig"]["datapathProvider"],
            "ADVANCED_DATAPATH"
        );
        assert_eq!(raw["networkConfig"]["enableMultiNetworking"], true);
        assert_eq!(raw["privateClusterConfig"]["enablePrivateNodes"], true);
        assert_eq!(
            raw["addonsConfig"]["gcsFuseCsiDriverConfig"]["enabled"],
            true
        );
        assert_eq!(
            raw["workloadIdentityConfig"]["workloadPool"],
            "my-project.svc.id.goog"
        );
        let inventory = env.sim.inventory();
        assert_eq!(inventory["container"]["clusters"][0]["status"], "RUNNING");
        assert_eq!(
            inventory["container"]["clusters"][0]["nodePools"],
            json!([])
        );

        // The Kubernetes API answers over TLS with the recorded CA.
        let pem = base64::engine::general_purpose::STANDARD
            .decode(ca)
            .unwrap();
        let kube = reqwest::Client::builder()
            .add_root_certificate(reqwest::Certificate::from_pem(&pem).unwrap())
            .build()
            .unwrap();
        let version: Value = kube
            .get(format!("https://{endpoint}/version"))
            .bearer_auth("anything")
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        assert!(
            version["gitVersion"]
                .as_str()
                .unwrap()
                .starts_with("v1.32.")
        );

        // A second create of this blueprint's cluster (an earlier run's answer or journal lost)
        // continues the first create's operation, already done, instead of failing.
        let again = env.provider.create(&cluster).await.unwrap();
        let Started::Operation(op) = &again else {
            panic!("{again:?}")
        };
        assert!(op.name.contains("/operations/"), "{op:?}");
        assert_eq!(env.finish(again).await, OpStatus::Done);
        // The same name in another blueprint's hands is a 409.
        let mut foreign = cluster.clone();
        foreign.spec["labels"]["a3ctl-blueprint"] = json!("someone-else");
        let refused = env.provider.create(&foreign).await.unwrap_err();
        assert_eq!(refused.class, ErrorClass::AlreadyExists);

        // System and GPU pools.
        let context = [(&cluster_addr, &outputs)];
        let system = env.target(&Addr::new(Kind::NodePool, "system"), &context);
        let gpu = env.target(&Addr::new(Kind::NodePool, "a3mega"), &context);
        for pool in [&system, &gpu] {
            env.create(pool).await;
            let observed = env.provider.read(pool).await.unwrap().unwrap();
            assert_matches(Kind::NodePool, &pool.spec, &observed.spec);
            assert_eq!(env.provider.settle(pool, &observed), Settle::Ready);
        }
        let raw = env.gke(&gpu.id).await;
        assert_eq!(raw["config"]["machineType"], "a3-megagpu-8g");
        assert_eq!(
            raw["config"]["accelerators"][0]["acceleratorType"],
            "nvidia-h100-mega-80gb"
        );
        assert_eq!(raw["config"]["accelerators"][0]["acceleratorCount"], "8");
        assert_eq!(
            raw["networkConfig"]["additionalNodeNetworkConfigs"]
                .as_array()
                .unwrap()
                .len(),
            8
        );
        assert_eq!(raw["placementPolicy"]["type"], "COMPACT");
        assert_eq!(
            raw["placementPolicy"]["policyName"],
            "a3mega-a3mega-placement"
        );
        assert_eq!(
            raw["config"]["reservationAffinity"]["consumeReservationType"],
            "SPECIFIC_RESERVATION"
        );
        let pools = env.sim.inventory()["container"]["clusters"][0]["nodePools"].clone();
        let inv_gpu = pools
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["name"] == "a3mega")
            .unwrap();
        assert_eq!(inv_gpu["nodes"], 32);
        assert_eq!(inv_gpu["status"], "RUNNING");

        // node_count through setSize; the live count is the pool's instance groups' targetSize.
        let mut resized = gpu.clone();
        resized.spec["node_count"] = json!(30);
        let steps = env
            .provider
            .update_steps(&resized, &[diff("node_count", json!(32), json!(30))]);
        assert_eq!(steps.len(), 1);
        assert_eq!(steps[0].name, "setSize");
        let started = env.provider.update(&resized, &steps[0]).await.unwrap();
        assert_eq!(env.finish(started).await, OpStatus::Done);
        let observed = env.provider.read(&resized).await.unwrap().unwrap();
        assert_matches(Kind::NodePool, &resized.spec, &observed.spec);
        assert_eq!(observed.spec["node_count"], 30);

        // Pool labels, gvnic and management in place.
        let mut relabeled = system.clone();
        relabeled.spec["labels"]["team"] = json!("ml");
        relabeled.spec["auto_upgrade"] = json!(false);
        let steps = env.provider.update_steps(
            &relabeled,
            &[
                diff(
                    "labels",
                    system.spec["labels"].clone(),
                    relabeled.spec["labels"].clone(),
                ),
                diff("auto_upgrade", json!(true), json!(false)),
            ],
        );
        assert_eq!(
            steps.iter().map(|s| s.name.as_str()).collect::<Vec<_>>(),
            ["update", "setManagement"]
        );
        for step in &steps {
            let started = env.provider.update(&relabeled, step).await.unwrap();
            assert_eq!(env.finish(started).await, OpStatus::Done, "{}", step.name);
        }
        let observed = env.provider.read(&relabeled).await.unwrap().unwrap();
        assert_matches(Kind::NodePool, &relabeled.spec, &observed.spec);

        // Cluster labels through setResourceLabels, authorized networks through one clusters.update.
        let mut labeled = cluster.clone();
        labeled.spec["labels"]["team"] = json!("ml");
        labeled.spec["authorized_networks"] = json!([{"cidr": "10.0.0.0/8", "name": "corp"}]);
        let steps = env.provider.update_steps(
            &labeled,
            &[
                diff(
                    "labels",
                    cluster.spec["labels"].clone(),
                    labeled.spec["labels"].clone(),
                ),
                diff(
                    "authorized_networks",
                    cluster.spec["authorized_networks"].clone(),
                    labeled.spec["authorized_networks"].clone(),
                ),
            ],
        );
        assert_eq!(
            steps.iter().map(|s| s.name.as_str()).collect::<Vec<_>>(),
            [
                "updateCluster(desiredMasterAuthorizedNetworksConfig)",
                "setResourceLabels"
            ]
        );
        for step in &steps {
            let started = env.provider.update(&labeled, step).await.unwrap();
            assert_eq!(env.finish(started).await, OpStatus::Done, "{}", step.name);
        }
        let observed = env.provider.read(&labeled).await.unwrap().unwrap();
        assert_matches(Kind::Cluster, &labeled.spec, &observed.spec);

        // Deleting the cluster takes its pools.
        let started = env.provider.delete(&cluster).await.unwrap();
        assert_eq!(env.finish(started).await, OpStatus::Done);
        assert_eq!(env.provider.read(&cluster).await.unwrap(), None);
        assert_eq!(env.provider.read(&gpu).await.unwrap(), None);
        let gone = env.provider.delete(&cluster).await.unwrap_err();
        assert_eq!(gone.class, ErrorClass::NotFound);
    });
}

#[test]
fn one_operation_per_cluster_is_busy() {
    crate::common::on_app_runtime(async {
        let env = env().await;
        let (_, outputs) = env.cluster().await;
        let cluster_addr = addr::cluster();
        let context = [(&cluster_addr, &outputs)];
        env.sim.set_faults(FaultConfig {
            extra_latency: [("container.nodePool.create".to_string(), 600.0)].into(),
            ..FaultConfig::default()
        });
        let system = env.target(&Addr::new(Kind::NodePool, "system"), &context);
        let gpu = env.target(&Addr::new(Kind::NodePool, "a3mega"), &context);
        let first = env.provider.create(&system).await.unwrap();
        let Started::Operation(op) = &first else {
            panic!("no operation");
        };
        assert!(matches!(
            env.provider.poll(op).await.unwrap(),
            OpStatus::Running { .. }
        ));
        let busy = env.provider.create(&gpu).await.unwrap_err();
        assert_eq!(busy.class, ErrorClass::Busy, "{busy:?}");
        assert!(busy.class.is_retryable());
        let pending = env.provider.read(&system).await.unwrap().unwrap();
        assert!(matches!(
            env.provider.settle(&system, &pending),
            Settle::Pending { .. }
        ));
        env.sim.advance_secs(700.0);
        assert_eq!(env.finish(first).await, OpStatus::Done);
        env.create(&gpu).await;
    });
}

#[test]
fn a_stockout_fails_the_pool_with_capacity() {
    crate::common::on_app_runtime(async {
        let env = env().await;
        let (_, outputs) = env.cluster().await;
        let cluster_addr = addr::cluster();
        env.sim.set_faults(FaultConfig {
            scripted: vec![ScriptedFault {
                kind: "container.nodePool".into(),
                verb: "create".into(),
                nth: 1,
                action: FaultAction::Named(NamedFault::Stockout),
            }],
            ..FaultConfig::default()
        });
        let gpu = env.target(
            &Addr::new(Kind::NodePool, "a3mega"),
            &[(&cluster_addr, &outputs)],
        );
        let started = env.provider.create(&gpu).await.unwrap();
        let OpStatus::Failed(error) = env.finish(started).await else {
            panic!("the create should fail");
        };
        assert_eq!(error.class, ErrorClass::Capacity, "{error:?}");
        assert!(error.message.contains("GCE_STOCKOUT"), "{}", error.message);
        assert!(error.hint.unwrap().contains("reservation"));
        let observed = env.provider.read(&gpu).await.unwrap().unwrap();
        match env.provider.settle(&gpu, &observed) {
            Settle::Failed { message } => assert!(message.contains("GCE_STOCKOUT"), "{message}"),
            other => panic!("settle gave {other:?}"),
        }
    });
}

#[test]
fn a_version_outside_the_channel_is_invalid_with_the_valid_ones() {
    crate::common::on_app_runtime(async {
        let env = env_with("1.32.11-gke.1174000").await;
        let cluster = env.target(&addr::cluster(), &[]);
        let error = env.provider.create(&cluster).await.unwrap_err();
        assert_eq!(error.class, ErrorClass::Invalid);
        assert!(error.hint.unwrap().contains("1.32.12-gke.1050000"));
    });
}

#[test]
fn a_create_whose_operation_was_lost_is_continued_and_the_bootstrap_pool_removed() {
    crate::common::on_app_runtime(async {
        let env = env().await;
        let cluster = env.target(&addr::cluster(), &[]);
        // An earlier run started the create and died before recording its operation: the cluster
        // exists with the bootstrap pool it had to be created with.
        let first = env.provider.create(&cluster).await.unwrap();
        assert!(matches!(first, Started::Operation(_)));
        let pools = |raw: &Value| -> Vec<String> {
            raw["nodePools"]
                .as_array()
                .cloned()
                .unwrap_or_default()
                .iter()
                .map(|p| p["name"].as_str().unwrap().to_string())
                .collect()
        };
        assert_eq!(pools(&env.gke(&cluster.id).await), ["a3ctl-bootstrap"]);
        // The next run's create meets it, continues that create and removes the pool.
        let again = env.provider.create(&cluster).await.unwrap();
        assert_eq!(env.finish(again).await, OpStatus::Done);
        assert!(pools(&env.gke(&cluster.id).await).is_empty());
        let observed = env.provider.read(&cluster).await.unwrap().unwrap();
        assert_eq!(env.provider.settle(&cluster, &observed), Settle::Ready);
    });
}
