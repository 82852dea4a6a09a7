//! The Kubernetes adapter against the simulator's API server (in process, manual clock, zero
//! latency): server-side apply and readiness waits, read == desired projection, drift, delete,
//! the Kueue release manifests with the fail-closed webhook race, and TLS verification.

use a3ctl::cloud::Provider;
use a3ctl::cloud::gcp::{CredentialsMode, Endpoints, GcpConfig};
use a3ctl::cloud::kube::{KubeAdapter, WaitFor, object_key, parse_manifests};
use a3ctl::cloud::{ErrorClass, OpStatus, Started, Target};
use a3ctl::resource::{Addr, Kind, Lifecycle};
use a3ctl_sim::kube::{self, NodeSpec};
use a3ctl_sim::{SimConfig, SimHandle};
use base64::Engine as _;
use serde_json::{Value, json};
use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

const KEY: &str = "projects/p/locations/us-central1/clusters/c1";

struct Cluster {
    sim: SimHandle,
    endpoint: String,
    ca_pem: String,
    adapter: KubeAdapter,
}

async fn start(multi_networking: bool) -> Cluster {
    start_with(SimConfig::default(), multi_networking).await
}

async fn start_with(config: SimConfig, multi_networking: bool) -> Cluster {
    let _ = rustls::crypto::aws_lc_rs::default_provider().install_default();
    let sim = a3ctl_sim::start(config).await.unwrap();
    let shared = sim.shared.clone();
    let spec = kube::ClusterSpec {
        key: KEY.into(),
        name: "c1".into(),
        location: "us-central1".into(),
        version: "1.32.4-gke.1767000".into(),
        multi_networking,
        beta_apis: Vec::new(),
    };
    let provisioned = sim
        .shared
        .with_world(|w, _| kube::provision(&shared, w, spec))
        .unwrap();
    sim.shared.with_world(|w, _| w.kube.set_ready(KEY, true));
    let config = GcpConfig {
        project: "p".into(),
        endpoints: Endpoints::simulator(sim.base_url()),
        credentials: CredentialsMode::Anonymous,
        poll: Duration::from_millis(10),
    };
    Cluster {
        adapter: KubeAdapter::new(&config).unwrap(),
        sim,
        endpoint: provisioned.endpoint,
        ca_pem: provisioned.ca_pem,
    }
}

/// A node as GKE describes it: 8 H100 Mega GPUs with their taint, or a small CPU node.
fn node(name: &str, pool: &str, gpus: u32) -> NodeSpec {
    let mut labels = BTreeMap::new();
    labels.insert(
        "cloud.google.com/gke-nodepool".to_string(),
        pool.to_string(),
    );
    let mut taints = vec![];
    if gpus > 0 {
        labels.insert(
            "cloud.google.com/gke-accelerator".into(),
            "nvidia-h100-mega-80gb".into(),
        );
        taints.push((
            "nvidia.com/gpu".into(),
            "present".into(),
            "NoSchedule".into(),
        ));
    }
    NodeSpec {
        name: name.into(),
        pool: pool.into(),
        machine_type: if gpus > 0 {
            "a3-megagpu-8g"
        } else {
            "e2-standard-8"
        }
        .into(),
        zone: "us-central1-a".into(),
        labels,
        taints,
        gpus,
        managed_driver: true,
        cpu: if gpus > 0 { "208" } else { "8" }.into(),
        memory: if gpus > 0 { "1872Gi" } else { "32Gi" }.into(),
        // The control plane's version, not cordoned.
        version: String::new(),
        unschedulable: false,
        internal_ip: String::new(),
        nics: Vec::new(),
        managed_rdma_nics: 0,
    }
}

impl Cluster {
    fn set_pool(&self, pool: &str, nodes: Vec<NodeSpec>) {
        self.sim
            .shared
            .with_world(|w, cx| w.kube.set_pool_nodes(KEY, pool, nodes, cx.now));
    }

    /// The cluster's outputs as the GKE adapter records them (CA: base64 of PEM).
    fn context(&self, ca_pem: &str) -> BTreeMap<Addr, Value> {
        let mut context = BTreeMap::new();
        context.insert(
            Addr::new(Kind::Cluster, "main"),
            json!({
                "endpoint": self.endpoint,
                "ca_certificate": base64::engine::general_purpose::STANDARD.encode(ca_pem),
                "self_link": format!("https://container.googleapis.com/v1/{KEY}"),
                "status": "RUNNING",
            }),
        );
        context
    }

    fn target(&self, object: Value) -> Target {
        self.target_with(json!({"cluster": "c1", "object": object}))
    }

    fn target_with(&self, spec: Value) -> Target {
        let key = object_key(&spec["object"]);
        Target {
            addr: Addr::new(Kind::Kubernetes, key.replace('/', ".")),
            id: key,
            spec,
            outputs: Value::Null,
            context: self.context(&self.ca_pem),
            lifecycle: Lifecycle::default(),
        }
    }

    /// Polls until Done, advancing the simulated clock by a second between polls.
    async fn wait(&self, started: Started) -> Vec<String> {
        let mut progress = vec![];
        let Started::Operation(op) = started else {
            return progress;
        };
        assert_eq!(op.api, a3ctl::resource::Api::Kubernetes);
        WaitFor::parse(&op.name).unwrap();
        for _ in 0..120 {
            match self.adapter.poll(&op).await.unwrap() {
                OpStatus::Done => return progress,
                OpStatus::Running { progress: p } => progress.extend(p),
                OpStatus::Failed(e) => panic!("{} failed: {e:?}", op.name),
            }
            self.sim.advance_secs(1.0);
        }
        panic!("{} never finished: {progress:?}", op.name);
    }

    async fn apply(&self, target: &Target) -> Vec<String> {
        let started = self.adapter.create(target).await.unwrap();
        self.wait(started).await
    }

    /// A raw request to the API server (behind the adapter's back).
    async fn raw(&self, method: reqwest::Method, path: &str, body: Option<Value>) -> Value {
        let http = reqwest::Client::builder()
            .tls_built_in_root_certs(false)
            .add_root_certificate(reqwest::Certificate::from_pem(self.ca_pem.as_bytes()).unwrap())
            .build()
            .unwrap();
        let mut request = http
            .request(method, format!("https://{}{path}", self.endpoint))
            .bearer_auth("t");
        if let Some(body) = body {
            request = request
                .header("Content-Type", "application/merge-patch+json")
                .body(body.to_string());
        }
        let response = request.send().await.unwrap();
        assert!(
            response.status().is_success(),
            "{path}: {}",
            response.status()
        );
        response.json().await.unwrap()
    }
}

fn installer_daemonset() -> Value {
    json!({
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": "nccl-tcpxo-installer", "namespace": "kube-system",
            "labels": {"k8s-app": "nccl-tcpxo-installer"}},
        "spec": {
            "selector": {"matchLabels": {"name": "nccl-tcpxo-installer"}},
            "updateStrategy": {"type": "RollingUpdate"},
            "template": {
                "metadata": {"labels": {"name": "nccl-tcpxo-installer"}},
                "spec": {
                    "priorityClassName": "system-node-critical",
                    "hostNetwork": true,
                    "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [{"matchExpressions": [{"key": "cloud.google.com/gke-accelerator",
                            "operator": "In", "values": ["nvidia-h100-mega-80gb"]}]}]}}},
                    "tolerations": [{"operator": "Exists"}],
                    "containers": [{"name": "pause", "image": "gke.gcr.io/pause:3.8"}],
                },
            },
        },
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn objects_apply_read_back_as_desired_show_drift_and_delete() {
    let c = start(true).await;
    c.set_pool("gpu", vec![node("gke-c1-gpu-0", "gpu", 8)]);

    let namespace = c.target(json!({"apiVersion": "v1", "kind": "Namespace",
        "metadata": {"name": "training", "labels": {"a3ctl-blueprint": "bp"}}}));
    let config_map = c.target(json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "nccl-configmap", "namespace": "training"},
        "data": {"NCCL_SOCKET_IFNAME": "eth0", "NCCL_CROSS_NIC": "0"}}));
    let daemonset = c.target(installer_daemonset());
    let param_set = c.target(json!({"apiVersion": "networking.gke.io/v1", "kind": "GKENetworkParamSet",
        "metadata": {"name": "vpc1"},
        "spec": {"vpc": "a3mega-gpu-1", "vpcSubnet": "a3mega-gpu-1-sub", "deviceMode": "NetDevice"}}));
    let network = c.target(
        json!({"apiVersion": "networking.gke.io/v1", "kind": "Network",
        "metadata": {"name": "vpc1"},
        "spec": {"type": "Device", "parametersRef": {"group": "networking.gke.io",
            "kind": "GKENetworkParamSet", "name": "vpc1"}}}),
    );

    for target in [&namespace, &config_map, &daemonset, &param_set, &network] {
        c.apply(target).await;
        let observed = c
            .adapter
            .read(target)
            .await
            .unwrap()
            .expect("exists after apply");
        assert_eq!(observed.spec, target.spec, "{}", target.id);
        assert!(
            observed.outputs["uid"]
                .as_str()
                .is_some_and(|u| !u.is_empty())
        );
        assert!(observed.outputs["resource_version"].is_string());
        assert_eq!(observed.outputs["ready"], true, "{}", target.id);
        assert_eq!(
            c.adapter.settle(target, &observed),
            a3ctl::cloud::Settle::Ready
        );
    }

    // The installer runs on the GPU node.
    let ds = c.adapter.read(&daemonset).await.unwrap().unwrap();
    assert_eq!(ds.outputs["daemonset"]["desired"], 1, "{}", ds.outputs);
    assert_eq!(ds.outputs["daemonset"]["available"], 1);
    // Re-applying the same object is a no-op apply that waits for nothing new.
    let steps = c.adapter.update_steps(&daemonset, &[]);
    assert!(steps.is_empty());

    // The kinds really are in the cluster, with what a3ctl sent.
    let live = c
        .raw(
            reqwest::Method::GET,
            "/apis/networking.gke.io/v1/gkenetworkparamsets/vpc1",
            None,
        )
        .await;
    assert_eq!(live["spec"]["vpcSubnet"], "a3mega-gpu-1-sub");
    let fields = live["metadata"]["managedFields"].as_array().unwrap();
    assert!(
        fields
            .iter()
            .any(|f| f["manager"] == "a3ctl" && f["operation"] == "Apply")
    );

    // Someone edits a managed field: read shows it, an apply repairs it.
    c.raw(
        reqwest::Method::PATCH,
        "/api/v1/namespaces/training/configmaps/nccl-configmap",
        Some(json!({"data": {"NCCL_CROSS_NIC": "1", "EXTRA": "x"}})),
    )
    .await;
    let drifted = c.adapter.read(&config_map).await.unwrap().unwrap();
    assert_eq!(drifted.spec["object"]["data"]["NCCL_CROSS_NIC"], "1");
    assert!(drifted.spec["object"]["data"].get("EXTRA").is_none());
    assert_ne!(drifted.spec, config_map.spec);
    let diffs = vec![a3ctl::plan::FieldDiff {
        field: "object.data.NCCL_CROSS_NIC".into(),
        before: json!("1"),
        after: json!("0"),
        forces_replacement: false,
    }];
    let steps = c.adapter.update_steps(&config_map, &diffs);
    assert_eq!(steps.len(), 1);
    assert_eq!(steps[0].name, "apply");
    let started = c.adapter.update(&config_map, &steps[0]).await.unwrap();
    c.wait(started).await;
    assert_eq!(
        c.adapter.read(&config_map).await.unwrap().unwrap().spec,
        config_map.spec
    );

    // A removed managed field shows as removed.
    c.raw(
        reqwest::Method::PATCH,
        "/apis/apps/v1/namespaces/kube-system/daemonsets/nccl-tcpxo-installer",
        Some(json!({"spec": {"template": {"spec": {"priorityClassName": null}}}})),
    )
    .await;
    let drifted = c.adapter.read(&daemonset).await.unwrap().unwrap();
    assert!(
        drifted.spec["object"]["spec"]["template"]["spec"]
            .get("priorityClassName")
            .is_none()
    );

    // Delete: gone, and a second delete is NotFound.
    for target in [&network, &param_set, &daemonset, &config_map] {
        assert_eq!(c.adapter.delete(target).await.unwrap(), Started::Done);
        c.sim.advance_secs(1.0);
        assert_eq!(c.adapter.read(target).await.unwrap(), None, "{}", target.id);
        let again = c.adapter.delete(target).await.unwrap_err();
        assert_eq!(again.class, ErrorClass::NotFound, "{again:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn daemonsets_on_no_matching_nodes_are_rolled_out_but_not_on_matching_nodes() {
    let c = start(false).await;
    let mut spec = json!({"cluster": "c1", "object": installer_daemonset()});
    c.apply(&c.target_with(spec.clone())).await;

    // Asked for at least one node, it waits until a GPU node exists.
    spec["ready"] = json!("on_matching_nodes(1)");
    let target = c.target_with(spec);
    let Started::Operation(op) = c.adapter.create(&target).await.unwrap() else {
        panic!("a DaemonSet is waited for");
    };
    assert!(
        op.name.ends_with("?until=on_matching_nodes(1)"),
        "{}",
        op.name
    );
    c.sim.advance_secs(5.0);
    assert!(matches!(
        c.adapter.poll(&op).await.unwrap(),
        OpStatus::Running { .. }
    ));
    let observed = c.adapter.read(&target).await.unwrap().unwrap();
    assert_eq!(observed.spec, target.spec);
    assert!(matches!(
        c.adapter.settle(&target, &observed),
        a3ctl::cloud::Settle::Pending { .. }
    ));
    c.set_pool("gpu", vec![node("gke-c1-gpu-0", "gpu", 8)]);
    c.wait(Started::Operation(op)).await;

    // GKE's multi-network kinds are not served on this cluster.
    let network = c.target(
        json!({"apiVersion": "networking.gke.io/v1", "kind": "Network",
        "metadata": {"name": "vpc1"}, "spec": {"type": "Device"}}),
    );
    let err = c.adapter.create(&network).await.unwrap_err();
    assert_eq!(err.class, ErrorClass::Invalid, "{err:?}");
}

/// `../shared/reference/kueue/...` beside the project, found from the crate upwards.
fn kueue_manifests() -> String {
    let relative = "shared/reference/kueue/kueue-v0.12.2-manifests.yaml";
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .map(|dir| dir.join(relative))
        .find(|path| path.exists())
        .expect("the Kueue manifests are in ../shared/reference/kueue");
    std::fs::read_to_string(path).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kueue_installs_object_by_object_and_its_webhook_race_is_transient() {
    let c = start(false).await;
    // GPU nodes only: their taint keeps the Kueue controller off them.
    c.set_pool("gpu", vec![node("gke-c1-gpu-0", "gpu", 8)]);

    let objects = parse_manifests(&kueue_manifests()).unwrap();
    assert_eq!(objects.len(), 66);
    let keys: BTreeSet<String> = objects.iter().map(object_key).collect();
    assert_eq!(keys.len(), 66, "object keys are unique");

    let rank = |o: &Value| match o["kind"].as_str().unwrap() {
        "Namespace" => 0,
        "CustomResourceDefinition" => 1,
        _ => 2,
    };
    let mut ordered = objects.clone();
    ordered.sort_by_key(rank);
    let mut deployment = None;
    let mut established = 0;
    for object in ordered {
        let target = c.target(object.clone());
        let started = c
            .adapter
            .create(&target)
            .await
            .unwrap_or_else(|e| panic!("{}: {e:?}", target.id));
        match object["kind"].as_str().unwrap() {
            // Nowhere to run yet: waited for below.
            "Deployment" => deployment = Some((target, started)),
            kind => {
                let progress = c.wait(started).await;
                if kind == "CustomResourceDefinition" {
                    established += 1;
                    assert!(
                        progress.iter().all(|p| p.contains("established")),
                        "{progress:?}"
                    );
                }
                let observed = c.adapter.read(&target).await.unwrap().unwrap();
                assert_eq!(observed.spec, target.spec, "{}", target.id);
            }
        }
    }
    assert_eq!(established, 11);
    let (controller, started) = deployment.expect("the manifests have the controller");
    let Started::Operation(op) = started else {
        panic!("a Deployment is waited for");
    };
    assert!(
        op.name
            .ends_with("/apps/v1/Deployment/kueue-system/kueue-controller-manager?until=available")
    );

    // The kinds the CRDs added are discovered; the webhooks fail closed.
    let flavor = c.target(json!({"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "ResourceFlavor",
        "metadata": {"name": "a3-mega"},
        "spec": {"nodeLabels": {"cloud.google.com/gke-accelerator": "nvidia-h100-mega-80gb"},
            "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]}}));
    let rejected = c.adapter.create(&flavor).await.unwrap_err();
    assert_eq!(rejected.class, ErrorClass::Transient, "{rejected:?}");
    assert_eq!(rejected.http_status, Some(500));
    assert!(
        rejected.message.contains("failed calling webhook"),
        "{rejected:?}"
    );

    c.sim.advance_secs(60.0);
    assert!(matches!(
        c.adapter.poll(&op).await.unwrap(),
        OpStatus::Running { .. }
    ));
    assert_eq!(
        c.adapter.create(&flavor).await.unwrap_err().class,
        ErrorClass::Transient
    );

    // A node the controller tolerates: the Deployment becomes available, the webhook answers.
    c.set_pool(
        "default-pool",
        vec![node("gke-c1-default-0", "default-pool", 0)],
    );
    c.wait(Started::Operation(op)).await;
    let observed = c.adapter.read(&controller).await.unwrap().unwrap();
    assert_eq!(observed.spec, controller.spec);
    assert_eq!(observed.outputs["deployment"]["available"], true);
    c.sim.advance_secs(1.0);
    assert_eq!(c.adapter.create(&flavor).await.unwrap(), Started::Done);
    let observed = c.adapter.read(&flavor).await.unwrap().unwrap();
    assert_eq!(observed.spec, flavor.spec);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tls_is_verified_against_the_cluster_ca() {
    let c = start(false).await;
    // Another cluster's CA does not vouch for this API server.
    let shared = c.sim.shared.clone();
    let other = c
        .sim
        .shared
        .with_world(|w, _| {
            kube::provision(
                &shared,
                w,
                kube::ClusterSpec {
                    key: "projects/p/locations/us-central1/clusters/c2".into(),
                    name: "c2".into(),
                    location: "us-central1".into(),
                    version: "1.32.4-gke.1767000".into(),
                    multi_networking: false,
                    beta_apis: Vec::new(),
                },
            )
        })
        .unwrap();
    let mut target = c.target(json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "x", "namespace": "default"}, "data": {}}));
    target.context = c.context(&other.ca_pem);
    let err = c.adapter.create(&target).await.unwrap_err();
    assert_eq!(err.class, ErrorClass::Permission, "{err:?}");
    assert!(
        err.message.contains("TLS") || err.message.contains("certificate"),
        "{err:?}"
    );

    // With the right CA the same call works (the client for the endpoint is rebuilt).
    target.context = c.context(&c.ca_pem);
    assert_eq!(c.adapter.create(&target).await.unwrap(), Started::Done);

    // An unusable CA is refused before any connection.
    let mut bad = target.clone();
    bad.context
        .values_mut()
        .for_each(|v| v["ca_certificate"] = json!("not base64!"));
    assert_eq!(
        c.adapter.read(&bad).await.unwrap_err().class,
        ErrorClass::Invalid
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn overload_and_dropped_connections_are_transient_and_a_refused_token_is_permission() {
    use a3ctl_sim::faults::{FaultConfig, TransientFaults, TransientKind};
    let c = start(false).await;
    let target = c.target(json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "x", "namespace": "default"}, "data": {"a": "1"}}));
    // Discovery first, so the faults hit the apply itself.
    c.adapter.read(&target).await.unwrap();
    for (kind, status) in [
        (TransientKind::Unavailable, Some(503)),
        (TransientKind::RateLimit, Some(429)),
        (TransientKind::DropBefore, None),
    ] {
        let mut faults = FaultConfig::default();
        faults.transient.insert(
            "kube".into(),
            TransientFaults {
                rate: 1.0,
                kinds: vec![kind],
                methods: vec!["PATCH".into()],
            },
        );
        c.sim.set_faults(faults);
        let err = c.adapter.create(&target).await.unwrap_err();
        assert_eq!(err.class, ErrorClass::Transient, "{kind:?}: {err:?}");
        assert_eq!(err.http_status, status, "{kind:?}: {err:?}");
    }
    c.sim.set_faults(FaultConfig::default());
    assert_eq!(c.adapter.create(&target).await.unwrap(), Started::Done);

    // An API server that does not accept the token.
    let strict = start_with(
        SimConfig {
            kube_token: Some("the-right-token".into()),
            ..SimConfig::default()
        },
        false,
    )
    .await;
    let err = strict
        .adapter
        .read(&strict.target(target.spec["object"].clone()))
        .await
        .unwrap_err();
    assert_eq!(err.class, ErrorClass::Permission, "{err:?}");
    // A 401 is about credentials, not reachability.
    let hint = err.hint.unwrap();
    assert!(
        hint.contains("gcloud auth application-default login"),
        "{hint}"
    );
    assert!(!hint.contains("authorized_networks"), "{hint}");
}
