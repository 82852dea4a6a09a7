//! GKE (container v1) driven by gcloud, and by reqwest where gcloud cannot reach a case, against
//! the in-process simulator: the A3 Mega multi-network scenario, GKE's checks with their exact
//! errors, the one-operation-at-a-time rule, integer enums, scripted faults and simulated time.

use a3ctl_sim::faults::{FaultAction, FaultConfig, NamedFault, ScriptedFault};
use a3ctl_sim::latency::LatencyProfile;
use a3ctl_sim::{SimConfig, SimHandle};
use base64::Engine;
use futures_util::future::join_all;
use serde_json::{Value, json};
use std::process::Output;

const PROJECT: &str = "a3-sim-test";
const REGION: &str = "us-central1";

struct Cli {
    env: Vec<(String, String)>,
    _dir: tempfile::TempDir,
}

impl Cli {
    fn new(handle: &SimHandle) -> Cli {
        let dir = tempfile::tempdir().expect("temp dir");
        let mut env = handle.gcloud_env();
        let path = |name: &str| dir.path().join(name).to_string_lossy().into_owned();
        env.push(("CLOUDSDK_CONFIG".into(), path("gcloud")));
        env.push(("CLOUDSDK_CORE_PROJECT".into(), PROJECT.into()));
        // `clusters create` writes a kubeconfig entry and asks Service Usage whether the API is
        // enabled (a 404 there is only logged).
        env.push(("KUBECONFIG".into(), path("kubeconfig")));
        env.push((
            "CLOUDSDK_API_ENDPOINT_OVERRIDES_SERVICEUSAGE".into(),
            format!("{}/serviceusage/", handle.base_url()),
        ));
        Cli { env, _dir: dir }
    }

    async fn run(&self, args: &[&str]) -> Output {
        let env = self.env.clone();
        let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
        tokio::task::spawn_blocking(move || {
            std::process::Command::new("gcloud")
                .args(&args)
                .envs(env)
                .output()
                .expect("gcloud runs")
        })
        .await
        .expect("join")
    }

    /// Runs a gcloud command with `--format=json` that must succeed; a one-item list is unwrapped.
    async fn json(&self, args: &[&str]) -> Value {
        let mut all: Vec<&str> = args.to_vec();
        all.push("--format=json");
        let out = self.run(&all).await;
        assert!(
            out.status.success(),
            "gcloud {args:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let value: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
        match value {
            Value::Array(items) if items.len() == 1 && !args.contains(&"list") => items[0].clone(),
            other => other,
        }
    }

    /// [`Cli::json`] with owned arguments, so that many calls can be joined.
    async fn json_owned(&self, args: Vec<String>) -> Value {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        self.json(&args).await
    }

    /// Runs a gcloud command that must fail; returns its stderr.
    async fn fails(&self, args: &[&str]) -> String {
        let out = self.run(args).await;
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(!out.status.success(), "gcloud {args:?} succeeded: {stderr}");
        stderr
    }
}

/// reqwest against the simulator's GKE and Compute paths.
struct Http {
    base: String,
    client: reqwest::Client,
}

impl Http {
    fn new(handle: &SimHandle) -> Http {
        Http {
            base: handle.base_url().to_string(),
            client: reqwest::Client::new(),
        }
    }

    async fn send(&self, method: reqwest::Method, path: &str, body: Option<Value>) -> (u16, Value) {
        let mut request = self.client.request(method, format!("{}{path}", self.base));
        if let Some(body) = body {
            request = request.json(&body);
        }
        let response = request.send().await.expect("request");
        let status = response.status().as_u16();
        let text = response.text().await.expect("body");
        (status, serde_json::from_str(&text).unwrap_or(Value::Null))
    }

    /// `GET /container/v1/projects/P/locations/<path>`.
    async fn get(&self, path: &str) -> (u16, Value) {
        let path = format!("/container/v1/projects/{PROJECT}/locations/{path}");
        self.send(reqwest::Method::GET, &path, None).await
    }

    async fn post(&self, path: &str, body: Value) -> (u16, Value) {
        let path = format!("/container/v1/projects/{PROJECT}/locations/{path}");
        self.send(reqwest::Method::POST, &path, Some(body)).await
    }

    async fn put(&self, path: &str, body: Value) -> (u16, Value) {
        let path = format!("/container/v1/projects/{PROJECT}/locations/{path}");
        self.send(reqwest::Method::PUT, &path, Some(body)).await
    }

    async fn delete(&self, path: &str) -> (u16, Value) {
        let path = format!("/container/v1/projects/{PROJECT}/locations/{path}");
        self.send(reqwest::Method::DELETE, &path, None).await
    }

    async fn compute(&self, path: &str, body: Value) {
        let path = format!("/compute/v1/projects/{PROJECT}/{path}");
        let (status, op) = self.send(reqwest::Method::POST, &path, Some(body)).await;
        assert_eq!(status, 200, "{path}: {op}");
    }

    /// A network with one subnet (pods/services secondary ranges on the primary one).
    async fn network(&self, name: &str, cidr: &str, secondary: bool) {
        self.compute(
            "global/networks",
            json!({"name": name, "autoCreateSubnetworks": false, "mtu": 8244}),
        )
        .await;
        // Compute operations finish at the next read; this read lets the network exist.
        let _ = self.get(&format!("{REGION}/clusters")).await;
        let ranges = if secondary {
            json!([{"rangeName": "pods", "ipCidrRange": "10.4.0.0/14"},
                   {"rangeName": "services", "ipCidrRange": "10.0.32.0/20"}])
        } else {
            json!([])
        };
        self.compute(
            &format!("regions/{REGION}/subnetworks"),
            json!({
                "name": format!("{name}-sub"),
                "network": format!("https://www.googleapis.com/compute/v1/projects/{PROJECT}/global/networks/{name}"),
                "ipCidrRange": cidr,
                "secondaryIpRanges": ranges,
            }),
        )
        .await;
        let _ = self.get(&format!("{REGION}/clusters")).await;
    }

    async fn placement_policy(&self, name: &str) {
        self.compute(
            &format!("regions/{REGION}/resourcePolicies"),
            json!({"name": name, "groupPlacementPolicy": {"collocation": "COLLOCATED", "vmCount": 2}}),
        )
        .await;
        let _ = self.get(&format!("{REGION}/clusters")).await;
    }
}

/// Asserts a Google error body's code, status and reason; returns its message.
fn error(status: u16, body: &Value, code: u16, canonical: &str, reason: &str) -> String {
    assert_eq!(status, code, "{body}");
    assert_eq!(body["error"]["code"], code, "{body}");
    assert_eq!(body["error"]["status"], canonical, "{body}");
    assert_eq!(body["error"]["errors"][0]["reason"], reason, "{body}");
    body["error"]["message"].as_str().unwrap_or("").to_string()
}

/// A cluster request body on the `main` network with the given inline pools.
fn cluster_body(name: &str, multi_network: bool, pools: Value) -> Value {
    let mut cluster = json!({
        "name": name,
        "network": "main",
        "subnetwork": "main-sub",
        "ipAllocationPolicy": {"useIpAliases": true, "clusterSecondaryRangeName": "pods",
                               "servicesSecondaryRangeName": "services"},
        "locations": ["us-central1-a"],
        "nodePools": pools,
    });
    if multi_network {
        cluster["networkConfig"] =
            json!({"datapathProvider": "ADVANCED_DATAPATH", "enableMultiNetworking": true});
    }
    json!({ "cluster": cluster })
}

fn e2_pool(name: &str) -> Value {
    json!({"name": name, "initialNodeCount": 1, "config": {"machineType": "e2-standard-4"}})
}

fn kube_nodes(sim: &SimHandle, cluster: &str) -> Vec<a3ctl_sim::kube::NodeSpec> {
    let key = format!("projects/{PROJECT}/locations/{REGION}/clusters/{cluster}");
    sim.shared.read_world(|w, _| {
        w.kube
            .cluster(&key)
            .map(|c| c.nodes.values().flatten().cloned().collect())
            .unwrap_or_default()
    })
}

#[tokio::test]
async fn a3_mega_multi_network_cluster_with_gcloud() {
    let sim = a3ctl_sim::start(SimConfig::default()).await.unwrap();
    let cli = Cli::new(&sim);
    // The primary VPC and 8 GPU VPCs (MTU 8244), then their subnets and the placement policy.
    let owned = |args: &[&str]| args.iter().map(|a| a.to_string()).collect::<Vec<String>>();
    let gpu: Vec<String> = (0..8).map(|i| format!("gpu-{i}")).collect();
    let mut nets = vec![owned(&[
        "compute",
        "networks",
        "create",
        "main",
        "--subnet-mode=custom",
        "--mtu=8244",
    ])];
    for name in &gpu {
        nets.push(owned(&[
            "compute",
            "networks",
            "create",
            name,
            "--subnet-mode=custom",
            "--mtu=8244",
        ]));
    }
    for net in join_all(nets.into_iter().map(|a| cli.json_owned(a))).await {
        assert_eq!(net["mtu"], 8244, "{net}");
    }
    let mut subnets = vec![owned(&[
        "compute",
        "networks",
        "subnets",
        "create",
        "main-sub",
        "--network=main",
        "--region=us-central1",
        "--range=10.128.0.0/20",
        "--secondary-range=pods=10.4.0.0/14,services=10.0.32.0/20",
    ])];
    for (i, name) in gpu.iter().enumerate() {
        subnets.push(owned(&[
            "compute",
            "networks",
            "subnets",
            "create",
            &format!("{name}-sub"),
            &format!("--network={name}"),
            "--region=us-central1",
            &format!("--range=192.168.{i}.0/24"),
        ]));
    }
    subnets.push(owned(&[
        "compute",
        "resource-policies",
        "create",
        "group-placement",
        "a3-compact",
        "--region=us-central1",
        "--collocation=collocated",
        "--vm-count=2",
    ]));
    assert_eq!(
        join_all(subnets.into_iter().map(|a| cli.json_owned(a)))
            .await
            .len(),
        10
    );

    // The Dataplane V2 multi-network cluster.
    let cluster = cli
        .json(&[
            "container",
            "clusters",
            "create",
            "a3-mega",
            "--location=us-central1",
            "--enable-dataplane-v2",
            "--enable-multi-networking",
            "--enable-ip-alias",
            "--network=main",
            "--subnetwork=main-sub",
            "--cluster-secondary-range-name=pods",
            "--services-secondary-range-name=services",
            "--release-channel=regular",
            "--cluster-version=1.32",
            "--node-locations=us-central1-a",
            "--num-nodes=1",
            "--machine-type=e2-standard-4",
            "--workload-pool=a3-sim-test.svc.id.goog",
            "--addons=GcpFilestoreCsiDriver,GcsFuseCsiDriver",
        ])
        .await;
    assert_eq!(cluster["status"], "RUNNING", "{cluster}");
    assert_eq!(cluster["currentMasterVersion"], "1.32.12-gke.1050000");
    assert_eq!(
        cluster["networkConfig"]["datapathProvider"],
        "ADVANCED_DATAPATH"
    );
    assert_eq!(cluster["networkConfig"]["enableMultiNetworking"], true);
    assert_eq!(
        cluster["networkConfig"]["subnetwork"],
        "projects/a3-sim-test/regions/us-central1/subnetworks/main-sub"
    );
    assert_eq!(cluster["clusterIpv4Cidr"], "10.4.0.0/14");
    assert_eq!(cluster["servicesIpv4Cidr"], "10.0.32.0/20");
    assert_eq!(
        cluster["addonsConfig"]["gcpFilestoreCsiDriverConfig"]["enabled"],
        true
    );
    assert_eq!(
        cluster["workloadIdentityConfig"]["workloadPool"],
        "a3-sim-test.svc.id.goog"
    );
    assert_eq!(
        cluster["selfLink"],
        "https://container.googleapis.com/v1/projects/a3-sim-test/locations/us-central1/clusters/a3-mega"
    );
    assert!(
        cluster["endpoint"]
            .as_str()
            .unwrap()
            .starts_with("127.0.0.1:")
    );
    let ca = base64::engine::general_purpose::STANDARD
        .decode(
            cluster["masterAuth"]["clusterCaCertificate"]
                .as_str()
                .unwrap(),
        )
        .unwrap();
    assert!(
        String::from_utf8(ca)
            .unwrap()
            .starts_with("-----BEGIN CERTIFICATE-----")
    );
    let key = format!("projects/{PROJECT}/locations/{REGION}/clusters/a3-mega");
    let addons = sim
        .shared
        .read_world(|w, _| w.kube.cluster(&key).map(|c| c.addons));
    assert_eq!(
        addons,
        Some(a3ctl_sim::kube::Addons {
            filestore_csi: true,
            gcs_fuse_csi: true
        })
    );

    // The A3 Mega pool on the 8 GPU networks with compact placement, and an E2 pool.
    let extra: Vec<String> = gpu
        .iter()
        .map(|n| format!("--additional-node-network=network={n},subnetwork={n}-sub"))
        .collect();
    let mut args = vec![
        "container",
        "node-pools",
        "create",
        "a3-mega-pool",
        "--cluster=a3-mega",
        "--location=us-central1",
        "--node-locations=us-central1-a",
        "--machine-type=a3-megagpu-8g",
        "--num-nodes=2",
        "--accelerator=type=nvidia-h100-mega-80gb,count=8,gpu-driver-version=latest",
        "--placement-type=COMPACT",
        "--placement-policy=a3-compact",
        "--enable-gvnic",
        "--ephemeral-storage-local-ssd=count=16",
        "--reservation-affinity=none",
    ];
    args.extend(extra.iter().map(String::as_str));
    // One operation at a time per cluster: the pools are created one after the other.
    let created = cli.json(&args).await;
    assert_eq!(created["status"], "RUNNING", "{created}");
    cli.json(&[
        "container",
        "node-pools",
        "create",
        "system",
        "--cluster=a3-mega",
        "--location=us-central1",
        "--machine-type=e2-standard-8",
        "--num-nodes=1",
        "--node-taints=components.gke.io/gke-managed-components=true:NoSchedule",
    ])
    .await;
    let pools = cli
        .json(&[
            "container",
            "node-pools",
            "list",
            "--cluster=a3-mega",
            "--location=us-central1",
        ])
        .await;
    let names: Vec<&str> = pools
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"default-pool"), "{names:?}");
    assert!(names.contains(&"a3-mega-pool"), "{names:?}");
    assert!(names.contains(&"system"), "{names:?}");
    let mega = cli
        .json(&[
            "container",
            "node-pools",
            "describe",
            "a3-mega-pool",
            "--cluster=a3-mega",
            "--location=us-central1",
        ])
        .await;
    assert_eq!(mega["status"], "RUNNING", "{mega}");
    assert_eq!(
        mega["config"]["accelerators"][0]["acceleratorType"],
        "nvidia-h100-mega-80gb"
    );
    assert_eq!(mega["config"]["accelerators"][0]["acceleratorCount"], "8");
    assert_eq!(
        mega["config"]["accelerators"][0]["gpuDriverInstallationConfig"]["gpuDriverVersion"],
        "LATEST"
    );
    assert_eq!(mega["placementPolicy"]["type"], "COMPACT");
    assert_eq!(mega["placementPolicy"]["policyName"], "a3-compact");
    assert_eq!(
        mega["networkConfig"]["additionalNodeNetworkConfigs"]
            .as_array()
            .unwrap()
            .len(),
        8
    );
    assert_eq!(mega["config"]["gvnic"]["enabled"], true);
    assert_eq!(
        mega["config"]["reservationAffinity"]["consumeReservationType"],
        "NO_RESERVATION"
    );
    assert_eq!(mega["version"], "1.32.12-gke.1050000");
    assert!(mega["etag"].is_string());
    assert_eq!(mega["instanceGroupUrls"].as_array().unwrap().len(), 1);

    // The Kubernetes side has GKE-like nodes.
    let nodes = kube_nodes(&sim, "a3-mega");
    let gpu_nodes: Vec<_> = nodes.iter().filter(|n| n.pool == "a3-mega-pool").collect();
    assert_eq!(gpu_nodes.len(), 2);
    let node = gpu_nodes[0];
    assert!(
        node.name.starts_with("gke-a3-mega-a3-mega-pool-"),
        "{}",
        node.name
    );
    assert_eq!(node.name.rsplit('-').next().unwrap().len(), 4);
    assert_eq!(node.gpus, 8);
    assert!(node.managed_driver);
    for (label, value) in [
        ("cloud.google.com/gke-nodepool", "a3-mega-pool"),
        ("cloud.google.com/gke-accelerator", "nvidia-h100-mega-80gb"),
        ("cloud.google.com/gke-gpu-driver-version", "latest"),
        ("cloud.google.com/machine-family", "a3"),
        ("node.kubernetes.io/instance-type", "a3-megagpu-8g"),
        ("topology.kubernetes.io/zone", "us-central1-a"),
        ("topology.kubernetes.io/region", "us-central1"),
    ] {
        assert_eq!(
            node.labels.get(label).map(String::as_str),
            Some(value),
            "{label}"
        );
    }
    assert_eq!(node.labels["kubernetes.io/hostname"], node.name);
    for label in ["block", "subblock", "host"] {
        assert!(
            node.labels
                .contains_key(&format!("cloud.google.com/gce-topology-{label}"))
        );
    }
    assert!(node.taints.contains(&(
        "nvidia.com/gpu".into(),
        "present".into(),
        "NoSchedule".into()
    )));
    let system: Vec<_> = nodes.iter().filter(|n| n.pool == "system").collect();
    assert_eq!(system.len(), 1);
    assert_eq!(
        system[0].taints,
        vec![(
            "components.gke.io/gke-managed-components".into(),
            "true".into(),
            "NoSchedule".into()
        )]
    );

    // Resize, update the pool and the cluster.
    cli.json(&[
        "container",
        "clusters",
        "resize",
        "a3-mega",
        "--location=us-central1",
        "--node-pool=system",
        "--num-nodes=3",
        "--quiet",
    ])
    .await;
    assert_eq!(
        kube_nodes(&sim, "a3-mega")
            .iter()
            .filter(|n| n.pool == "system")
            .count(),
        3
    );
    let updated = cli
        .json(&[
            "container",
            "node-pools",
            "update",
            "system",
            "--cluster=a3-mega",
            "--location=us-central1",
            "--node-labels=team=ml",
        ])
        .await;
    assert_eq!(updated["config"]["labels"]["team"], "ml", "{updated}");
    assert!(
        kube_nodes(&sim, "a3-mega")
            .iter()
            .filter(|n| n.pool == "system")
            .all(|n| n.labels["team"] == "ml")
    );
    cli.json(&[
        "container",
        "clusters",
        "update",
        "a3-mega",
        "--location=us-central1",
        "--update-labels=env=test",
    ])
    .await;

    let described = cli
        .json(&[
            "container",
            "clusters",
            "describe",
            "a3-mega",
            "--location=us-central1",
        ])
        .await;
    assert_eq!(described["currentNodeCount"], 1 + 2 + 3);
    assert_eq!(described["resourceLabels"]["env"], "test", "{described}");
    assert_ne!(described["labelFingerprint"], cluster["labelFingerprint"]);
    let listed = cli.json(&["container", "clusters", "list"]).await;
    assert_eq!(listed[0]["name"], "a3-mega");

    // Server config and operations.
    let config = cli
        .json(&["container", "get-server-config", "--location=us-central1"])
        .await;
    assert_eq!(config["defaultClusterVersion"], "1.33.5-gke.1080000");
    let rapid = config["channels"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["channel"] == "RAPID")
        .unwrap();
    assert_eq!(rapid["defaultVersion"], "1.34.1-gke.1829001");
    let ops = cli
        .json(&["container", "operations", "list", "--location=us-central1"])
        .await;
    let types: Vec<&str> = ops
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["operationType"].as_str().unwrap())
        .collect();
    for t in [
        "CREATE_CLUSTER",
        "CREATE_NODE_POOL",
        "SET_NODE_POOL_SIZE",
        "SET_LABELS",
    ] {
        assert!(types.contains(&t), "{types:?}");
    }
    let first = ops[0]["name"].as_str().unwrap();
    assert!(first.starts_with("operation-"));
    let op = cli
        .json(&[
            "container",
            "operations",
            "describe",
            first,
            "--location=us-central1",
        ])
        .await;
    assert_eq!(op["status"], "DONE");
    assert_eq!(op["operationType"], "CREATE_CLUSTER");
    assert!(
        op["targetLink"]
            .as_str()
            .unwrap()
            .ends_with("/clusters/a3-mega")
    );

    // gcloud shows GKE's errors.
    let missing = cli
        .fails(&[
            "container",
            "clusters",
            "describe",
            "nope",
            "--location=us-central1",
        ])
        .await;
    assert!(
        missing.contains("Not found: projects/a3-sim-test/locations/us-central1/clusters/nope."),
        "{missing}"
    );
    let dup = cli
        .fails(&[
            "container",
            "node-pools",
            "create",
            "system",
            "--cluster=a3-mega",
            "--location=us-central1",
        ])
        .await;
    assert!(
        dup.contains("code=409") && dup.contains("Already exists"),
        "{dup}"
    );

    // Delete the pools and the cluster.
    cli.run(&[
        "container",
        "node-pools",
        "delete",
        "a3-mega-pool",
        "--cluster=a3-mega",
        "--location=us-central1",
        "--quiet",
    ])
    .await;
    assert!(
        kube_nodes(&sim, "a3-mega")
            .iter()
            .all(|n| n.pool != "a3-mega-pool")
    );
    let out = cli
        .run(&[
            "container",
            "clusters",
            "delete",
            "a3-mega",
            "--location=us-central1",
            "--quiet",
        ])
        .await;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let after = cli.json(&["container", "clusters", "list"]).await;
    assert_eq!(after, json!([]));
    assert!(sim.shared.read_world(|w, _| w.kube.cluster(&key).is_none()));
}
