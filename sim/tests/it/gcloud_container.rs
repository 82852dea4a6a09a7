//! GKE (container v1) driven by gcloud, and by reqwest where gcloud cannot reach a case, against
//! the in-process simulator: the A3 Mega multi-network scenario, GKE's checks with their exact
//! errors, the machine-type catalogue, the one-operation-at-a-time rule, integer enums, scripted
//! faults (answers lost by scripted drops included), tripwires, simulated time, node pools that
//! consume Compute reservations, and the version-skew rules of upgrades.

use a3ctl_sim::faults::{FaultAction, FaultConfig, NamedFault, ScriptedFault, TripWhen, Tripwire};
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
        // `clusters create` writes a kubeconfig entry (Service Usage, which it also asks, is in
        // `gcloud_env`).
        env.push(("KUBECONFIG".into(), path("kubeconfig")));
        Cli { env, _dir: dir }
    }

    async fn run(&self, args: &[&str]) -> Output {
        let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
        crate::gcloud_support::gcloud_output(args, self.env.clone()).await
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
            gcs_fuse_csi: true,
            from_gke: true,
            pd_csi: true,
            dataplane_v2: true,
            workload_identity: true,
            logging: true,
            monitoring: true,
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
    // The pool's boot disk type, as GKE labels its nodes.
    assert_eq!(
        node.labels["cloud.google.com/gke-boot-disk"],
        mega["config"]["diskType"].as_str().unwrap()
    );
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
    let system_nodes = |sim: &SimHandle| {
        kube_nodes(sim, "a3-mega")
            .into_iter()
            .filter(|n| n.pool == "system")
            .collect::<Vec<_>>()
    };
    assert!(system_nodes(&sim).iter().all(|n| n.labels["team"] == "ml"));
    // The labels are replaced on the same nodes, none re-created (issue 25: a3ctl labels the
    // pools of earlier deployments this way).
    let names: Vec<String> = system_nodes(&sim).into_iter().map(|n| n.name).collect();
    let updated = cli
        .json(&[
            "container",
            "node-pools",
            "update",
            "system",
            "--cluster=a3-mega",
            "--location=us-central1",
            "--node-labels=a3ctl.dev/pool=system",
        ])
        .await;
    assert_eq!(
        updated["config"]["labels"],
        json!({"a3ctl.dev/pool": "system"}),
        "{updated}"
    );
    let relabelled = system_nodes(&sim);
    assert_eq!(
        relabelled
            .iter()
            .map(|n| n.name.clone())
            .collect::<Vec<_>>(),
        names
    );
    assert!(
        relabelled
            .iter()
            .all(|n| n.labels["a3ctl.dev/pool"] == "system"
                && !n.labels.contains_key("team")
                && n.labels["cloud.google.com/gke-nodepool"] == "system")
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

/// Networks for the reqwest tests: `main` (pods/services ranges), `gpu-0`, a placement policy.
async fn networks(http: &Http) {
    http.network("main", "10.128.0.0/20", true).await;
    http.network("gpu-0", "192.168.0.0/24", false).await;
    http.placement_policy("a3-compact").await;
}

#[tokio::test]
async fn cluster_rules_answer_gke_errors() {
    let sim = a3ctl_sim::start(SimConfig::default()).await.unwrap();
    let http = Http::new(&sim);
    networks(&http).await;
    let clusters = format!("{REGION}/clusters");

    let (s, b) = http
        .post(
            &clusters,
            cluster_body(&"c".repeat(41), true, json!([e2_pool("p")])),
        )
        .await;
    let m = error(s, &b, 400, "INVALID_ARGUMENT", "badRequest");
    assert_eq!(m, "Cluster.name must be less than 40 characters.");
    let (s, b) = http
        .post(
            &clusters,
            cluster_body("My_Cluster", true, json!([e2_pool("p")])),
        )
        .await;
    let m = error(s, &b, 400, "INVALID_ARGUMENT", "badRequest");
    assert!(m.starts_with("Invalid value for field \"cluster.name\": \"My_Cluster\". Must be a match of regex '(?:[a-z](?:[-a-z0-9]{0,38}[a-z0-9])?)'"), "{m}");

    let mut body = cluster_body("c1", true, json!([e2_pool("p")]));
    body["cluster"]["network"] = json!("nope");
    let (s, b) = http.post(&clusters, body).await;
    assert_eq!(
        error(s, &b, 400, "INVALID_ARGUMENT", "badRequest"),
        "Network \"nope\" does not exist."
    );
    let mut body = cluster_body("c1", true, json!([e2_pool("p")]));
    body["cluster"]["subnetwork"] = json!("gpu-0-sub");
    let (s, b) = http.post(&clusters, body).await;
    let m = error(s, &b, 400, "INVALID_ARGUMENT", "badRequest");
    assert!(m.contains("is not valid for Network \"main\""), "{m}");
    let mut body = cluster_body("c1", true, json!([e2_pool("p")]));
    body["cluster"]["ipAllocationPolicy"]["clusterSecondaryRangeName"] = json!("pods-x");
    let (s, b) = http.post(&clusters, body).await;
    let m = error(s, &b, 400, "INVALID_ARGUMENT", "badRequest");
    assert!(
        m.contains("Secondary range \"pods-x\" does not exist"),
        "{m}"
    );
    let mut body = cluster_body("c1", true, json!([e2_pool("p")]));
    body["cluster"]["networkConfig"]["datapathProvider"] = json!("LEGACY_DATAPATH");
    let (s, b) = http.post(&clusters, body).await;
    let m = error(s, &b, 400, "INVALID_ARGUMENT", "badRequest");
    assert!(
        m.starts_with("Multi-networking requires GKE Dataplane V2"),
        "{m}"
    );
    let mut body = cluster_body("c1", true, json!([e2_pool("p")]));
    body["cluster"]["initialClusterVersion"] = json!("1.99");
    let (s, b) = http.post(&clusters, body).await;
    assert_eq!(
        error(s, &b, 400, "INVALID_ARGUMENT", "badRequest"),
        "Master version \"1.99\" is unsupported."
    );
    let (s, b) = http
        .post(&clusters, cluster_body("c1", true, json!([])))
        .await;
    assert_eq!(
        error(s, &b, 400, "INVALID_ARGUMENT", "badRequest"),
        "Cluster.initial_node_count must be greater than zero."
    );
    let mut body = cluster_body("c1", true, json!([e2_pool("p")]));
    body["cluster"]["networkConfig"]["datapathProvider"] = json!("FAST_PATH");
    let (s, b) = http.post(&clusters, body).await;
    let m = error(s, &b, 400, "INVALID_ARGUMENT", "badRequest");
    assert_eq!(
        m,
        "Invalid value at 'cluster.network_config.datapath_provider' (TYPE_ENUM), FAST_PATH"
    );

    // A good cluster, then duplicates and missing resources.
    let (s, op) = http
        .post(&clusters, cluster_body("c1", true, json!([e2_pool("p")])))
        .await;
    assert_eq!(s, 200, "{op}");
    assert_eq!(op["operationType"], "CREATE_CLUSTER");
    assert_eq!(op["status"], "RUNNING");
    assert!(op["name"].as_str().unwrap().starts_with("operation-"));
    let (s, b) = http
        .post(&clusters, cluster_body("c1", true, json!([e2_pool("p")])))
        .await;
    let m = error(s, &b, 409, "ALREADY_EXISTS", "alreadyExists");
    assert_eq!(
        m,
        "Already exists: projects/a3-sim-test/locations/us-central1/clusters/c1."
    );
    let (s, b) = http.get(&format!("{clusters}/nope")).await;
    let m = error(s, &b, 404, "NOT_FOUND", "notFound");
    assert_eq!(
        m,
        "Not found: projects/a3-sim-test/locations/us-central1/clusters/nope."
    );
    let (s, b) = http.delete(&format!("{clusters}/nope")).await;
    error(s, &b, 404, "NOT_FOUND", "notFound");
    let (s, cluster) = http.get(&format!("{clusters}/c1")).await;
    assert_eq!(
        (s, cluster["status"].as_str()),
        (200, Some("RUNNING")),
        "{cluster}"
    );
    let (s, all) = http.get("-/clusters").await;
    assert_eq!(
        (s, all["clusters"].as_array().map(Vec::len)),
        (200, Some(1))
    );

    // Cluster updates take exactly one field.
    let (s, b) = http
        .put(&format!("{clusters}/c1"), json!({"update": {}}))
        .await;
    error(s, &b, 400, "INVALID_ARGUMENT", "badRequest");
    let two = json!({"update": {"desiredMasterVersion": "1.33", "desiredLoggingService": "none"}});
    let (s, b) = http.put(&format!("{clusters}/c1"), two).await;
    error(s, &b, 400, "INVALID_ARGUMENT", "badRequest");
    let upgrade = json!({"update": {"desiredMasterVersion": "1.33"}});
    let (s, op) = http.put(&format!("{clusters}/c1"), upgrade).await;
    assert_eq!(
        (s, op["operationType"].as_str()),
        (200, Some("UPGRADE_MASTER")),
        "{op}"
    );
    let (_, cluster) = http.get(&format!("{clusters}/c1")).await;
    assert_eq!(cluster["currentMasterVersion"], "1.33.5-gke.1080000");
    let addons = json!({"addonsConfig": {"gcsFuseCsiDriverConfig": {"enabled": true}}});
    let (s, op) = http.post(&format!("{clusters}/c1:setAddons"), addons).await;
    assert_eq!(s, 200, "{op}");
    let key = format!("projects/{PROJECT}/locations/{REGION}/clusters/c1");
    let addons = sim
        .shared
        .read_world(|w, _| w.kube.cluster(&key).map(|c| c.addons));
    assert_eq!(addons.map(|a| a.gcs_fuse_csi), Some(true));
    let policy = json!({"maintenancePolicy": {"window": {"dailyMaintenanceWindow": {"startTime": "03:00"}}}});
    let (s, op) = http
        .post(&format!("{clusters}/c1:setMaintenancePolicy"), policy)
        .await;
    assert_eq!(
        (s, op["operationType"].as_str()),
        (200, Some("SET_MAINTENANCE_POLICY"))
    );
    let (_, cluster) = http.get(&format!("{clusters}/c1")).await;
    assert_eq!(
        cluster["maintenancePolicy"]["window"]["dailyMaintenanceWindow"]["startTime"],
        "03:00"
    );
}

#[tokio::test]
async fn node_pool_rules_answer_gke_errors() {
    let sim = a3ctl_sim::start(SimConfig::default()).await.unwrap();
    let http = Http::new(&sim);
    networks(&http).await;
    let clusters = format!("{REGION}/clusters");
    let (s, op) = http
        .post(&clusters, cluster_body("c1", true, json!([e2_pool("p")])))
        .await;
    assert_eq!(s, 200, "{op}");
    let (s, op) = http
        .post(
            &clusters,
            cluster_body("flat", false, json!([e2_pool("p")])),
        )
        .await;
    assert_eq!(s, 200, "{op}");
    let pools = format!("{clusters}/c1/nodePools");
    let gpu = |name: &str, machine: &str, accelerators: Value| {
        json!({"nodePool": {"name": name, "initialNodeCount": 1, "locations": ["us-central1-a"],
               "config": {"machineType": machine, "accelerators": accelerators}}})
    };

    // A3 accelerators.
    let wrong = json!([{"acceleratorType": "nvidia-h100-mega-80gb", "acceleratorCount": "8"}]);
    let (s, b) = http.post(&pools, gpu("a", "a3-highgpu-8g", wrong)).await;
    let m = error(s, &b, 400, "INVALID_ARGUMENT", "badRequest");
    assert_eq!(
        m,
        "[nvidia-h100-mega-80gb, a3-highgpu-8g] features are not compatible for creating instance."
    );
    let few = json!([{"acceleratorType": "nvidia-h100-80gb", "acceleratorCount": "4"}]);
    let (s, b) = http.post(&pools, gpu("a", "a3-highgpu-8g", few)).await;
    error(s, &b, 400, "INVALID_ARGUMENT", "badRequest");
    let (s, op) = http
        .post(&pools, gpu("high", "a3-highgpu-8g", json!(null)))
        .await;
    assert_eq!(
        (s, op["operationType"].as_str()),
        (200, Some("CREATE_NODE_POOL")),
        "{op}"
    );
    let (_, high) = http.get(&format!("{pools}/high")).await;
    assert_eq!(
        high["config"]["accelerators"][0]["acceleratorType"],
        "nvidia-h100-80gb"
    );
    assert_eq!(high["config"]["accelerators"][0]["acceleratorCount"], "8");
    // Machine types only where offered.
    let mut elsewhere = gpu("b", "a3-megagpu-8g", json!(null));
    elsewhere["nodePool"]["locations"] = json!(["us-central1-b"]);
    let (s, b) = http.post(&pools, elsewhere).await;
    let m = error(s, &b, 400, "INVALID_ARGUMENT", "badRequest");
    assert_eq!(
        m,
        "machine type \"a3-megagpu-8g\" does not exist in zone us-central1-b."
    );
    // Names.
    let (s, b) = http
        .post(&pools, json!({"nodePool": e2_pool(&"p".repeat(41))}))
        .await;
    let m = error(s, &b, 400, "INVALID_ARGUMENT", "badRequest");
    assert_eq!(m, "NodePool.name must be less than 40 characters.");
    let (s, b) = http.post(&pools, json!({"nodePool": e2_pool("p")})).await;
    let m = error(s, &b, 409, "ALREADY_EXISTS", "alreadyExists");
    assert_eq!(
        m,
        "Already exists: projects/a3-sim-test/locations/us-central1/clusters/c1/nodePools/p."
    );
    let (s, b) = http.get(&format!("{pools}/nope")).await;
    let m = error(s, &b, 404, "NOT_FOUND", "notFound");
    assert_eq!(
        m,
        "Not found: projects/a3-sim-test/locations/us-central1/clusters/c1/nodePools/nope."
    );
    let (s, b) = http.delete(&format!("{pools}/nope")).await;
    error(s, &b, 404, "NOT_FOUND", "notFound");
    let (s, b) = http
        .post(
            &format!("{clusters}/nope/nodePools"),
            json!({"nodePool": e2_pool("p")}),
        )
        .await;
    error(s, &b, 404, "NOT_FOUND", "notFound");

    // Additional node networks.
    let networked = |name: &str, network: &str, subnet: &str| {
        let mut pool = e2_pool(name);
        pool["networkConfig"] =
            json!({"additionalNodeNetworkConfigs": [{"network": network, "subnetwork": subnet}]});
        json!({ "nodePool": pool })
    };
    let (s, b) = http
        .post(&pools, networked("n", "gpu-9", "gpu-9-sub"))
        .await;
    assert_eq!(
        error(s, &b, 400, "INVALID_ARGUMENT", "badRequest"),
        "Network \"gpu-9\" does not exist."
    );
    let (s, b) = http
        .post(&pools, networked("n", "gpu-0", "gpu-9-sub"))
        .await;
    let m = error(s, &b, 400, "INVALID_ARGUMENT", "badRequest");
    assert_eq!(
        m,
        "Subnetwork \"projects/a3-sim-test/regions/us-central1/subnetworks/gpu-9-sub\" does not exist."
    );
    let (s, b) = http
        .post(
            &format!("{clusters}/flat/nodePools"),
            networked("n", "gpu-0", "gpu-0-sub"),
        )
        .await;
    let m = error(s, &b, 400, "INVALID_ARGUMENT", "badRequest");
    assert!(m.contains("multi-networking"), "{m}");
    let (s, op) = http
        .post(&pools, networked("n", "gpu-0", "gpu-0-sub"))
        .await;
    assert_eq!(s, 200, "{op}");
    let add = json!({"nodeNetworkConfig": {"additionalNodeNetworkConfigs": [{"network": "gpu-0", "subnetwork": "gpu-0-sub"}]}});
    let (s, b) = http.put(&format!("{pools}/p"), add).await;
    let m = error(s, &b, 400, "INVALID_ARGUMENT", "badRequest");
    assert!(
        m.starts_with("Additional node network configs cannot be added"),
        "{m}"
    );

    // Compact placement.
    let placed = |zones: Value, policy: &str| {
        let mut pool = e2_pool("placed");
        pool["locations"] = zones;
        pool["placementPolicy"] = json!({"type": "COMPACT", "policyName": policy});
        json!({ "nodePool": pool })
    };
    let (s, b) = http
        .post(
            &pools,
            placed(json!(["us-central1-a", "us-central1-b"]), "a3-compact"),
        )
        .await;
    let m = error(s, &b, 400, "INVALID_ARGUMENT", "badRequest");
    assert!(
        m.starts_with("Compact placement policy requires exactly one zone"),
        "{m}"
    );
    let (s, b) = http
        .post(&pools, placed(json!(["us-central1-a"]), "missing"))
        .await;
    let m = error(s, &b, 400, "INVALID_ARGUMENT", "badRequest");
    assert!(m.contains("resourcePolicies/missing"), "{m}");
    let (s, op) = http
        .post(&pools, placed(json!(["us-central1-a"]), "a3-compact"))
        .await;
    assert_eq!(s, 200, "{op}");

    // Node pool updates need at least one field; setSize/setManagement/setAutoscaling work.
    let (s, b) = http.put(&format!("{pools}/p"), json!({"name": "x"})).await;
    let m = error(s, &b, 400, "INVALID_ARGUMENT", "badRequest");
    assert!(
        m.starts_with("At least one of ['node_version', 'image_type', 'locations'"),
        "{m}"
    );
    let (s, op) = http
        .post(&format!("{pools}/p:setSize"), json!({"nodeCount": 3}))
        .await;
    assert_eq!(
        (s, op["operationType"].as_str()),
        (200, Some("SET_NODE_POOL_SIZE")),
        "{op}"
    );
    let (s, op) = http
        .post(
            &format!("{pools}/p:setManagement"),
            json!({"management": {"autoRepair": false, "autoUpgrade": true}}),
        )
        .await;
    assert_eq!(
        (s, op["operationType"].as_str()),
        (200, Some("SET_NODE_POOL_MANAGEMENT")),
        "{op}"
    );
    let scaling = json!({"autoscaling": {"enabled": true, "minNodeCount": 1, "maxNodeCount": 4, "locationPolicy": "ANY"}});
    let (s, op) = http
        .post(&format!("{pools}/p:setAutoscaling"), scaling)
        .await;
    assert_eq!(s, 200, "{op}");
    let (_, pool) = http.get(&format!("{pools}/p")).await;
    assert_eq!(pool["management"]["autoRepair"], false);
    assert_eq!(pool["autoscaling"]["locationPolicy"], "ANY");
    assert_eq!(pool["status"], "RUNNING");
    let (_, cluster) = http.get(&format!("{clusters}/c1")).await;
    // p: 3 nodes, high: 1, n: 1, placed: 1.
    assert_eq!(cluster["currentNodeCount"], 6, "{cluster}");
    let (s, op) = http.delete(&format!("{pools}/placed")).await;
    assert_eq!(
        (s, op["operationType"].as_str()),
        (200, Some("DELETE_NODE_POOL"))
    );
    let (s, _) = http.get(&format!("{pools}/placed")).await;
    assert_eq!(s, 404);
}

#[tokio::test]
async fn statuses_move_with_simulated_time_and_one_operation_runs_at_a_time() {
    let config = SimConfig {
        latency: LatencyProfile::realistic(),
        ..SimConfig::default()
    };
    let sim = a3ctl_sim::start(config).await.unwrap();
    let http = Http::new(&sim);
    // Compute takes its time too: let each step finish.
    http.compute(
        "global/networks",
        json!({"name": "main", "autoCreateSubnetworks": false}),
    )
    .await;
    sim.advance_secs(60.0);
    http.compute(
        &format!("regions/{REGION}/subnetworks"),
        json!({"name": "main-sub", "network": format!("projects/{PROJECT}/global/networks/main"),
               "ipCidrRange": "10.128.0.0/20",
               "secondaryIpRanges": [{"rangeName": "pods", "ipCidrRange": "10.4.0.0/14"},
                                     {"rangeName": "services", "ipCidrRange": "10.0.32.0/20"}]}),
    )
    .await;
    sim.advance_secs(60.0);
    let clusters = format!("{REGION}/clusters");
    let (s, op) = http
        .post(&clusters, cluster_body("c1", false, json!([e2_pool("p")])))
        .await;
    assert_eq!(s, 200, "{op}");
    let op_name = op["name"].as_str().unwrap().to_string();
    let (_, cluster) = http.get(&format!("{clusters}/c1")).await;
    assert_eq!(cluster["status"], "PROVISIONING");
    assert_eq!(cluster["nodePools"][0]["status"], "PROVISIONING");

    // While it is being created, nothing else may run on it.
    let (s, b) = http
        .post(
            &format!("{clusters}/c1/nodePools"),
            json!({"nodePool": e2_pool("q")}),
        )
        .await;
    let m = error(s, &b, 400, "FAILED_PRECONDITION", "failedPrecondition");
    assert_eq!(
        m,
        format!("Cluster is running incompatible operation {op_name}.")
    );
    let (s, b) = http.delete(&format!("{clusters}/c1")).await;
    error(s, &b, 400, "FAILED_PRECONDITION", "failedPrecondition");

    // The API server answers 503 until the cluster is RUNNING, then /version over TLS.
    let endpoint = cluster["endpoint"].as_str().unwrap().to_string();
    let pem = base64::engine::general_purpose::STANDARD
        .decode(
            cluster["masterAuth"]["clusterCaCertificate"]
                .as_str()
                .unwrap(),
        )
        .unwrap();
    let kube = reqwest::Client::builder()
        .tls_built_in_root_certs(false)
        .add_root_certificate(reqwest::Certificate::from_pem(&pem).unwrap())
        .build()
        .unwrap();
    let version = |k: reqwest::Client| {
        let url = format!("https://{endpoint}/version");
        async move { k.get(url).bearer_auth("token").send().await.unwrap() }
    };
    assert_eq!(version(kube.clone()).await.status(), 503);
    sim.advance_secs(359.0);
    let (_, cluster) = http.get(&format!("{clusters}/c1")).await;
    assert_eq!(
        cluster["status"], "PROVISIONING",
        "cluster create takes at least 6 minutes"
    );
    let (_, running) = http.get(&format!("{REGION}/operations/{op_name}")).await;
    assert_eq!(running["status"], "RUNNING");
    assert!(running["endTime"].is_null());
    sim.advance_secs(241.0);
    let (_, cluster) = http.get(&format!("{clusters}/c1")).await;
    assert_eq!(cluster["status"], "RUNNING");
    assert_eq!(cluster["nodePools"][0]["status"], "RUNNING");
    let (_, done) = http.get(&format!("{REGION}/operations/{op_name}")).await;
    assert_eq!(done["status"], "DONE");
    assert!(done["endTime"].is_string());
    let response = version(kube.clone()).await;
    assert_eq!(response.status(), 200);
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["gitVersion"], "v1.33.5-gke.1080000");

    // A GPU pool takes 5 to 15 minutes.
    let gpu = json!({"nodePool": {"name": "gpu", "initialNodeCount": 2, "locations": ["us-central1-a"],
                     "config": {"machineType": "a3-highgpu-8g"}}});
    let (s, op) = http.post(&format!("{clusters}/c1/nodePools"), gpu).await;
    assert_eq!(s, 200, "{op}");
    sim.advance_secs(299.0);
    let (_, pool) = http.get(&format!("{clusters}/c1/nodePools/gpu")).await;
    assert_eq!(pool["status"], "PROVISIONING");
    assert!(kube_nodes(&sim, "c1").iter().all(|n| n.pool != "gpu"));
    sim.advance_secs(601.0);
    let (_, pool) = http.get(&format!("{clusters}/c1/nodePools/gpu")).await;
    assert_eq!(pool["status"], "RUNNING");
    assert_eq!(
        kube_nodes(&sim, "c1")
            .iter()
            .filter(|n| n.pool == "gpu")
            .count(),
        2
    );

    // Updates put the cluster in RECONCILING; a cancelled operation ends DONE with an error.
    let labels = json!({"resourceLabels": {"team": "ml"}});
    let (s, op) = http
        .post(&format!("{clusters}/c1:setResourceLabels"), labels)
        .await;
    assert_eq!((s, op["operationType"].as_str()), (200, Some("SET_LABELS")));
    let (_, cluster) = http.get(&format!("{clusters}/c1")).await;
    assert_eq!(cluster["status"], "RECONCILING");
    let name = op["name"].as_str().unwrap();
    let (s, empty) = http
        .post(&format!("{REGION}/operations/{name}:cancel"), json!({}))
        .await;
    assert_eq!((s, empty), (200, json!({})));
    let (_, cancelled) = http.get(&format!("{REGION}/operations/{name}")).await;
    assert_eq!(cancelled["status"], "DONE");
    assert_eq!(cancelled["error"]["code"], 1);
    let (_, cluster) = http.get(&format!("{clusters}/c1")).await;
    assert_eq!(cluster["status"], "RUNNING");
    assert!(cluster["resourceLabels"]["team"].is_null());
    let (s, b) = http
        .post(&format!("{REGION}/operations/{name}:cancel"), json!({}))
        .await;
    error(s, &b, 400, "FAILED_PRECONDITION", "failedPrecondition");

    // Delete: STOPPING, then gone, and the API server stops.
    let (_, op) = http.delete(&format!("{clusters}/c1")).await;
    let (_, cluster) = http.get(&format!("{clusters}/c1")).await;
    assert_eq!(cluster["status"], "STOPPING", "{op}");
    sim.advance_secs(361.0);
    let (s, _) = http.get(&format!("{clusters}/c1")).await;
    assert_eq!(s, 404);
    let gone = kube
        .get(format!("https://{endpoint}/version"))
        .bearer_auth("token")
        .send()
        .await;
    assert!(gone.map(|r| r.status() != 200).unwrap_or(true));
    let inventory = sim.inventory();
    assert_eq!(inventory["container"]["clusters"], json!([]));
    assert!(
        inventory["container"]["operations"]
            .as_array()
            .unwrap()
            .len()
            >= 4
    );
}

#[tokio::test]
async fn integer_enums_round_trip() {
    let sim = a3ctl_sim::start(SimConfig::default()).await.unwrap();
    let http = Http::new(&sim);
    networks(&http).await;
    let ints = "%24alt=json%3Benum-encoding%3Dint";
    let mut body = cluster_body("c1", false, json!([e2_pool("p")]));
    // ADVANCED_DATAPATH = 2, STABLE = 3; taint NO_EXECUTE = 3; LATEST = 3.
    body["cluster"]["networkConfig"] =
        json!({"datapathProvider": 2, "enableMultiNetworking": true});
    body["cluster"]["releaseChannel"] = json!({"channel": 3});
    body["cluster"]["nodePools"][0]["config"]["taints"] =
        json!([{"key": "k", "value": "v", "effect": 3}]);
    let (s, op) = http.post(&format!("{REGION}/clusters?{ints}"), body).await;
    assert_eq!(s, 200, "{op}");
    assert_eq!(op["operationType"], 1);
    assert_eq!(op["status"], 2);
    let (_, cluster) = http.get(&format!("{REGION}/clusters/c1?{ints}")).await;
    assert_eq!(cluster["status"], 2);
    assert_eq!(cluster["networkConfig"]["datapathProvider"], 2);
    assert_eq!(cluster["releaseChannel"]["channel"], 3);
    assert_eq!(cluster["nodePools"][0]["config"]["taints"][0]["effect"], 3);
    assert_eq!(cluster["nodePools"][0]["upgradeSettings"]["strategy"], 3);
    let (_, named) = http.get(&format!("{REGION}/clusters/c1")).await;
    assert_eq!(named["status"], "RUNNING");
    assert_eq!(
        named["networkConfig"]["datapathProvider"],
        "ADVANCED_DATAPATH"
    );
    assert_eq!(named["releaseChannel"]["channel"], "STABLE");
    assert_eq!(named["currentMasterVersion"], "1.32.12-gke.1050000");
    assert_eq!(
        named["nodePools"][0]["config"]["taints"][0]["effect"],
        "NO_EXECUTE"
    );
    let gpu = json!({"nodePool": {"name": "gpu", "initialNodeCount": 1, "locations": ["us-central1-a"],
        "config": {"machineType": "a3-megagpu-8g", "accelerators": [{"acceleratorType": "nvidia-h100-mega-80gb",
        "acceleratorCount": "8", "gpuDriverInstallationConfig": {"gpuDriverVersion": 3}}]}}});
    let (s, op) = http
        .post(&format!("{REGION}/clusters/c1/nodePools?{ints}"), gpu)
        .await;
    assert_eq!((s, op["operationType"].clone()), (200, json!(7)), "{op}");
    let (_, pool) = http
        .get(&format!("{REGION}/clusters/c1/nodePools/gpu?{ints}"))
        .await;
    assert_eq!(pool["status"], 2);
    assert_eq!(
        pool["config"]["accelerators"][0]["gpuDriverInstallationConfig"]["gpuDriverVersion"],
        3
    );
    let (_, pools) = http
        .get(&format!("{REGION}/clusters/c1/nodePools?{ints}"))
        .await;
    assert_eq!(pools["nodePools"][1]["status"], 2);
    let (_, ops) = http.get(&format!("{REGION}/operations?{ints}")).await;
    assert_eq!(ops["operations"][0]["status"], 3);
    let (_, config) = http.get(&format!("{REGION}/serverConfig?{ints}")).await;
    assert_eq!(config["channels"][0]["channel"], 1);
    let (s, b) = http
        .post(
            &format!("{REGION}/clusters/c1/nodePools/gpu:setSize?{ints}"),
            json!({"nodeCount": 2}),
        )
        .await;
    assert_eq!((s, b["operationType"].clone()), (200, json!(14)));
}

#[tokio::test]
async fn scripted_faults_fail_like_gke() {
    let scripted = |nth: u32, action: FaultAction| ScriptedFault {
        kind: "container.nodePool".into(),
        verb: "create".into(),
        nth,
        action,
    };
    let config = SimConfig {
        faults: FaultConfig {
            scripted: vec![
                scripted(1, FaultAction::Named(NamedFault::Stockout)),
                scripted(2, FaultAction::Named(NamedFault::QuotaExceeded)),
                scripted(3, FaultAction::Named(NamedFault::OperationError)),
                scripted(
                    4,
                    FaultAction::Http {
                        status: 503,
                        reason: "backendError".into(),
                        message: "The service is currently unavailable.".into(),
                    },
                ),
            ],
            ..FaultConfig::default()
        },
        ..SimConfig::default()
    };
    let sim = a3ctl_sim::start(config).await.unwrap();
    let http = Http::new(&sim);
    let cli = Cli::new(&sim);
    networks(&http).await;
    let (s, op) = http
        .post(
            &format!("{REGION}/clusters"),
            cluster_body("c1", false, json!([e2_pool("p")])),
        )
        .await;
    assert_eq!(s, 200, "{op}");
    let mega = |name: &str| {
        json!({"nodePool": {"name": name, "initialNodeCount": 2, "locations": ["us-central1-a"],
               "config": {"machineType": "a3-megagpu-8g"}}})
    };
    let pools = format!("{REGION}/clusters/c1/nodePools");

    // 1: GCE_STOCKOUT, seen by gcloud; the pool stays, in ERROR.
    let stderr = cli
        .fails(&[
            "container",
            "node-pools",
            "create",
            "mega",
            "--cluster=c1",
            "--location=us-central1",
            "--node-locations=us-central1-a",
            "--machine-type=a3-megagpu-8g",
            "--num-nodes=2",
        ])
        .await;
    assert!(stderr.contains("GCE_STOCKOUT"), "{stderr}");
    let (_, pool) = http.get(&format!("{pools}/mega")).await;
    assert_eq!(pool["status"], "ERROR", "{pool}");
    assert_eq!(pool["conditions"][0]["code"], "GCE_STOCKOUT");
    let (_, ops) = http.get(&format!("{REGION}/operations")).await;
    let failed = ops["operations"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["operationType"] == "CREATE_NODE_POOL")
        .unwrap()
        .clone();
    assert_eq!(failed["status"], "DONE");
    assert_eq!(failed["error"]["code"], 8);
    assert!(
        failed["statusMessage"]
            .as_str()
            .unwrap()
            .contains("[GCE_STOCKOUT]")
    );
    assert_eq!(failed["nodepoolConditions"][0]["code"], "GCE_STOCKOUT");
    assert!(kube_nodes(&sim, "c1").iter().all(|n| n.pool != "mega"));

    // 2: quota, refused at once.
    let (s, b) = http.post(&pools, mega("mega2")).await;
    let m = error(s, &b, 403, "PERMISSION_DENIED", "forbidden");
    assert!(m.starts_with("Insufficient regional quota to satisfy request: resource \"NVIDIA_H100_MEGA_GPUS\": request requires '16.0'"), "{m}");
    let (s, _) = http.get(&format!("{pools}/mega2")).await;
    assert_eq!(s, 404);

    // 3: the operation ends DONE with an error.
    let (s, op) = http.post(&pools, mega("mega3")).await;
    assert_eq!(s, 200, "{op}");
    let (_, done) = http
        .get(&format!(
            "{REGION}/operations/{}",
            op["name"].as_str().unwrap()
        ))
        .await;
    assert_eq!(done["status"], "DONE");
    assert_eq!(done["error"]["code"], 13);
    assert!(done["statusMessage"].is_string());
    let (_, pool) = http.get(&format!("{pools}/mega3")).await;
    assert_eq!(pool["status"], "ERROR");

    // 4: the scripted HTTP error.
    let (s, b) = http.post(&pools, mega("mega4")).await;
    error(s, &b, 503, "UNAVAILABLE", "backendError");
}

#[tokio::test]
async fn only_catalogue_machine_types_are_accepted() {
    let sim = a3ctl_sim::start(SimConfig::default()).await.unwrap();
    let http = Http::new(&sim);
    let cli = Cli::new(&sim);
    networks(&http).await;
    let clusters = format!("{REGION}/clusters");
    let (s, op) = http
        .post(&clusters, cluster_body("c1", false, json!([e2_pool("p")])))
        .await;
    assert_eq!(s, 200, "{op}");
    let pool = |machine: &str| {
        let name = format!("pool-{}", machine.replace('-', ""));
        vec![
            "container".to_string(),
            "node-pools".into(),
            "create".into(),
            name,
            "--cluster=c1".into(),
            format!("--location={REGION}"),
            "--node-locations=us-central1-a".into(),
            format!("--machine-type={machine}"),
            "--num-nodes=1".into(),
        ]
    };
    // A machine type Compute Engine does not have.
    let args = pool("e2-standard-3");
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let stderr = cli.fails(&args).await;
    assert!(
        stderr.contains("machine type \"e2-standard-3\" does not exist."),
        "{stderr}"
    );
    assert!(stderr.contains("code=400"), "{stderr}");
    // Known types still work.
    for machine in ["e2-standard-2", "n2-highmem-8"] {
        let created = cli.json_owned(pool(machine)).await;
        assert_eq!(created["config"]["machineType"], machine, "{created}");
    }
    // The same check on a cluster's inline pools.
    let mut bad = e2_pool("p");
    bad["config"]["machineType"] = json!("e2-standard-3");
    let (s, b) = http
        .post(&clusters, cluster_body("c2", false, json!([bad])))
        .await;
    let m = error(s, &b, 400, "INVALID_ARGUMENT", "badRequest");
    assert_eq!(m, "machine type \"e2-standard-3\" does not exist.");
    let (s, _) = http.get(&format!("{clusters}/c2")).await;
    assert_eq!(s, 404);
    // A type that exists, but not in every zone asked for.
    let mut mega = e2_pool("mega");
    mega["config"]["machineType"] = json!("a3-megagpu-8g");
    mega["locations"] = json!(["us-central1-b", "us-central1-f"]);
    let (s, b) = http
        .post(
            &format!("{clusters}/c1/nodePools"),
            json!({ "nodePool": mega }),
        )
        .await;
    let m = error(s, &b, 400, "INVALID_ARGUMENT", "badRequest");
    assert_eq!(
        m,
        "(1) machine type \"a3-megagpu-8g\" does not exist in zone us-central1-b.\n\
         (2) machine type \"a3-megagpu-8g\" does not exist in zone us-central1-f."
    );
}

/// A POST whose answer may never come: `Err` when the connection closed without one.
async fn post_raw(sim: &SimHandle, path: &str, body: Value) -> Result<u16, reqwest::Error> {
    let url = format!(
        "{}/container/v1/projects/{PROJECT}/locations/{path}",
        sim.base_url()
    );
    reqwest::Client::new()
        .post(url)
        .json(&body)
        .send()
        .await
        .map(|r| r.status().as_u16())
}

#[tokio::test]
async fn scripted_drops_lose_the_answer_of_a_cluster_create() {
    let drop = |nth: u32, action: NamedFault| ScriptedFault {
        kind: "container.cluster".into(),
        verb: "create".into(),
        nth,
        action: FaultAction::Named(action),
    };
    let faults = FaultConfig {
        scripted: vec![
            drop(1, NamedFault::DropAfter),
            drop(2, NamedFault::DropBefore),
        ],
        ..FaultConfig::default()
    };
    faults.check().unwrap();
    let sim = a3ctl_sim::start(SimConfig {
        faults,
        ..SimConfig::default()
    })
    .await
    .unwrap();
    let http = Http::new(&sim);
    networks(&http).await;
    let clusters = format!("{REGION}/clusters");

    // 1: created, answer lost.
    let lost = post_raw(
        &sim,
        &clusters,
        cluster_body("c1", false, json!([e2_pool("p")])),
    )
    .await;
    assert!(lost.is_err(), "no answer: {lost:?}");
    let (s, cluster) = http.get(&format!("{clusters}/c1")).await;
    assert_eq!(s, 200, "the cluster exists: {cluster}");
    let (_, ops) = http.get(&format!("{REGION}/operations")).await;
    assert!(
        ops["operations"]
            .as_array()
            .unwrap()
            .iter()
            .any(|o| o["operationType"] == "CREATE_CLUSTER"),
        "{ops}"
    );
    // 2: nothing created, no answer either.
    let lost = post_raw(
        &sim,
        &clusters,
        cluster_body("c2", false, json!([e2_pool("p")])),
    )
    .await;
    assert!(lost.is_err(), "no answer: {lost:?}");
    let (s, _) = http.get(&format!("{clusters}/c2")).await;
    assert_eq!(s, 404);
    // 3: normal.
    let (s, op) = http
        .post(&clusters, cluster_body("c3", false, json!([e2_pool("p")])))
        .await;
    assert_eq!(s, 200, "{op}");
    let log: Value = reqwest::get(format!("{}/_sim/requests", sim.base_url()))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let faults: Vec<&str> = log["entries"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|e| e["fault"].as_str())
        .collect();
    assert_eq!(faults, ["scripted drop_after", "scripted drop_before"]);
}

#[tokio::test]
async fn tripwires_hold_a_cluster_create_before_or_after_it_happens() {
    let sim = a3ctl_sim::start(SimConfig::default()).await.unwrap();
    let http = Http::new(&sim);
    networks(&http).await;
    let clusters = format!("{REGION}/clusters");
    let wire = |when| FaultConfig {
        tripwires: vec![Tripwire {
            api: "container".into(),
            method: Some("POST".into()),
            path: Some("/locations/{}/clusters".into()),
            nth: 1,
            when,
        }],
        ..FaultConfig::default()
    };
    let wait = || async {
        tokio::time::timeout(std::time::Duration::from_secs(10), sim.wait_tripped())
            .await
            .expect("the tripwire fires")
    };

    // After: the cluster is created, the answer held; replacing the faults releases it unanswered.
    sim.set_faults(wire(TripWhen::After));
    let base = sim.base_url().to_string();
    let body = cluster_body("c1", false, json!([e2_pool("p")]));
    let client = tokio::spawn(async move {
        reqwest::Client::new()
            .post(format!(
                "{base}/container/v1/projects/{PROJECT}/locations/{REGION}/clusters"
            ))
            .json(&body)
            .send()
            .await
            .map(|r| r.status().as_u16())
    });
    assert_eq!(wait().await, [0]);
    assert_eq!(sim.held(), 1);
    let (s, cluster) = http.get(&format!("{clusters}/c1")).await;
    assert_eq!(s, 200, "{cluster}");
    sim.set_faults(wire(TripWhen::Before));
    let answer = tokio::time::timeout(std::time::Duration::from_secs(10), client)
        .await
        .expect("released")
        .unwrap();
    assert!(answer.is_err(), "{answer:?}");

    // Before: nothing happens; stopping the simulator releases the request unanswered.
    let base = sim.base_url().to_string();
    let body = cluster_body("c2", false, json!([e2_pool("p")]));
    let client = tokio::spawn(async move {
        reqwest::Client::new()
            .post(format!(
                "{base}/container/v1/projects/{PROJECT}/locations/{REGION}/clusters"
            ))
            .json(&body)
            .send()
            .await
            .map(|r| r.status().as_u16())
    });
    assert_eq!(wait().await, [0]);
    let (s, _) = http.get(&format!("{clusters}/c2")).await;
    assert_eq!(s, 404);
    assert_eq!(sim.held(), 1);
    let faults: Value = reqwest::get(format!("{}/_sim/faults", sim.base_url()))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(faults["tripped"], json!([0]));
    assert_eq!(faults["held"], json!(1));
    assert_eq!(faults["config"]["tripwire"][0]["when"], "before");
    drop(sim);
    let answer = tokio::time::timeout(std::time::Duration::from_secs(10), client)
        .await
        .expect("released when the simulator stopped")
        .unwrap();
    assert!(answer.is_err(), "{answer:?}");
}

/// `pause`: the request waits before the handler until released, then goes on and is answered,
/// so a test can act between a client's read and its write.
#[tokio::test]
async fn a_paused_request_goes_on_when_released() {
    let sim = a3ctl_sim::start(SimConfig::default()).await.unwrap();
    let http = Http::new(&sim);
    networks(&http).await;
    sim.set_faults(FaultConfig {
        tripwires: vec![Tripwire {
            api: "container".into(),
            method: Some("POST".into()),
            path: Some("/locations/{}/clusters".into()),
            nth: 1,
            when: TripWhen::Pause,
        }],
        ..FaultConfig::default()
    });
    let base = sim.base_url().to_string();
    let body = cluster_body("c1", false, json!([e2_pool("p")]));
    let client = tokio::spawn(async move {
        reqwest::Client::new()
            .post(format!(
                "{base}/container/v1/projects/{PROJECT}/locations/{REGION}/clusters"
            ))
            .json(&body)
            .send()
            .await
            .map(|r| r.status().as_u16())
    });
    let tripped = tokio::time::timeout(std::time::Duration::from_secs(10), sim.wait_tripped())
        .await
        .expect("the tripwire fires");
    assert_eq!(tripped, [0]);
    let (s, _) = http.get(&format!("{REGION}/clusters/c1")).await;
    assert_eq!(s, 404, "nothing happened while paused");
    sim.release_held();
    let answer = tokio::time::timeout(std::time::Duration::from_secs(10), client)
        .await
        .expect("released")
        .unwrap();
    assert_eq!(answer.unwrap(), 200);
    assert_eq!(sim.held(), 0);
    let (s, _) = http.get(&format!("{REGION}/clusters/c1")).await;
    assert_eq!(s, 200, "the request went on");
}

/// The reservation `project/zone/name` as Compute returns it.
async fn reservation(http: &Http, project: &str, zone: &str, name: &str) -> (u16, Value) {
    let path = format!("/compute/v1/projects/{project}/zones/{zone}/reservations/{name}");
    http.send(reqwest::Method::GET, &path, None).await
}

/// `specificReservation.inUseCount` of a reservation of the test project in us-central1-a.
async fn in_use(http: &Http, name: &str) -> Value {
    let (status, body) = reservation(http, PROJECT, "us-central1-a", name).await;
    assert_eq!(status, 200, "{body}");
    body["specificReservation"]["inUseCount"].clone()
}

/// `gcloud container node-pools create NAME --cluster=c1` in us-central1-a with `extra` flags.
fn pool_args(name: &str, extra: &[&str]) -> Vec<String> {
    let mut args: Vec<String> = [
        "container",
        "node-pools",
        "create",
        name,
        "--cluster=c1",
        "--location=us-central1",
        "--node-locations=us-central1-a",
    ]
    .iter()
    .map(|a| a.to_string())
    .collect();
    args.extend(extra.iter().map(|a| a.to_string()));
    args
}

/// `gcloud compute reservations create NAME --zone=us-central1-a` with `extra` flags.
fn reservation_args(name: &str, extra: &[&str]) -> Vec<String> {
    let mut args: Vec<String> = [
        "compute",
        "reservations",
        "create",
        name,
        "--zone=us-central1-a",
    ]
    .iter()
    .map(|a| a.to_string())
    .collect();
    args.extend(extra.iter().map(|a| a.to_string()));
    args
}

fn strs(args: &[String]) -> Vec<&str> {
    args.iter().map(String::as_str).collect()
}

const MEGA: &[&str] = &[
    "--machine-type=a3-megagpu-8g",
    "--accelerator=type=nvidia-h100-mega-80gb,count=8",
    "--reservation-affinity=specific",
];

#[tokio::test]
async fn node_pools_consume_reservations_with_gcloud() {
    let sim = a3ctl_sim::start(SimConfig::default()).await.unwrap();
    let http = Http::new(&sim);
    let cli = Cli::new(&sim);
    networks(&http).await;
    let (s, op) = http
        .post(
            &format!("{REGION}/clusters"),
            cluster_body("c1", false, json!([e2_pool("p")])),
        )
        .await;
    assert_eq!(s, 200, "{op}");
    let created = cli
        .json(&strs(&reservation_args(
            "a3-res",
            &[
                "--vm-count=3",
                "--machine-type=a3-megagpu-8g",
                "--accelerator=count=8,type=nvidia-h100-mega-80gb",
                "--require-specific-reservation",
            ],
        )))
        .await;
    assert_eq!(
        created["specificReservation"]["inUseCount"], "0",
        "{created}"
    );

    // Two nodes from the reservation.
    let mut flags = MEGA.to_vec();
    flags.extend(["--reservation=a3-res", "--num-nodes=2"]);
    let pool = cli.json(&strs(&pool_args("mega", &flags))).await;
    assert_eq!(pool["status"], "RUNNING", "{pool}");
    assert_eq!(
        pool["config"]["reservationAffinity"],
        json!({"consumeReservationType": "SPECIFIC_RESERVATION",
               "key": "compute.googleapis.com/reservation-name", "values": ["a3-res"]})
    );
    let described = cli
        .json(&[
            "compute",
            "reservations",
            "describe",
            "a3-res",
            "--zone=us-central1-a",
        ])
        .await;
    assert_eq!(
        described["specificReservation"]["inUseCount"], "2",
        "{described}"
    );
    assert_eq!(described["specificReservation"]["count"], "3");
    let mega_nodes = |sim: &SimHandle| {
        kube_nodes(sim, "c1")
            .iter()
            .filter(|n| n.pool == "mega")
            .count()
    };
    assert_eq!(mega_nodes(&sim), 2);

    // A specifically targeted reservation in use cannot be deleted.
    let stderr = cli
        .fails(&[
            "compute",
            "reservations",
            "delete",
            "a3-res",
            "--zone=us-central1-a",
            "--quiet",
        ])
        .await;
    assert!(
        stderr.contains(&format!(
            "The reservation resource 'projects/{PROJECT}/zones/us-central1-a/reservations/a3-res' \
             is already being used by 'projects/{PROJECT}/zones/us-central1-a/instances/gke-c1-mega-"
        )),
        "{stderr}"
    );

    // Resizing moves the count; growing past the reservation fails with the nodes it could get.
    let resize = |n: &str| {
        vec![
            "container".to_string(),
            "clusters".into(),
            "resize".into(),
            "c1".into(),
            "--node-pool=mega".into(),
            format!("--location={REGION}"),
            format!("--num-nodes={n}"),
            "--quiet".into(),
        ]
    };
    cli.json_owned(resize("3")).await;
    assert_eq!(in_use(&http, "a3-res").await, "3");
    assert_eq!(mega_nodes(&sim), 3);
    let stderr = cli.fails(&strs(&resize("4"))).await;
    assert!(
        stderr.contains(
            "Current errors: [CONDITION_NOT_MET]: Instance 'gke-c1-mega-"
        ) && stderr.contains(
            "creation failed: Specified reservation 'a3-res' does not have available resources for the request."
        ),
        "{stderr}"
    );
    assert_eq!(in_use(&http, "a3-res").await, "3");
    assert_eq!(mega_nodes(&sim), 3);
    let (_, pool) = http
        .get(&format!("{REGION}/clusters/c1/nodePools/mega"))
        .await;
    assert_eq!(pool["status"], "RUNNING", "{pool}");
    cli.json_owned(resize("1")).await;
    assert_eq!(in_use(&http, "a3-res").await, "1");
    assert_eq!(mega_nodes(&sim), 1);

    // Deleting the pool frees the reservation, which can then be deleted.
    let out = cli
        .run(&[
            "container",
            "node-pools",
            "delete",
            "mega",
            "--cluster=c1",
            "--location=us-central1",
            "--quiet",
        ])
        .await;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let described = cli
        .json(&[
            "compute",
            "reservations",
            "describe",
            "a3-res",
            "--zone=us-central1-a",
        ])
        .await;
    assert_eq!(described["specificReservation"]["inUseCount"], "0");
    let out = cli
        .run(&[
            "compute",
            "reservations",
            "delete",
            "a3-res",
            "--zone=us-central1-a",
            "--quiet",
        ])
        .await;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[tokio::test]
async fn reservation_affinity_answers_gke_errors() {
    let sim = a3ctl_sim::start(SimConfig::default()).await.unwrap();
    let http = Http::new(&sim);
    let cli = Cli::new(&sim);
    networks(&http).await;
    let (s, op) = http
        .post(
            &format!("{REGION}/clusters"),
            cluster_body("c1", false, json!([e2_pool("p")])),
        )
        .await;
    assert_eq!(s, 200, "{op}");
    for args in [
        reservation_args(
            "a3-res",
            &[
                "--vm-count=2",
                "--machine-type=a3-megagpu-8g",
                "--require-specific-reservation",
            ],
        ),
        reservation_args("auto", &["--vm-count=2", "--machine-type=a3-megagpu-8g"]),
    ] {
        cli.json_owned(args).await;
    }
    let pools = format!("{REGION}/clusters/c1/nodePools");

    // No such reservation: GKE's 404, nothing created.
    let mut flags = MEGA.to_vec();
    flags.extend(["--reservation=nope", "--num-nodes=1"]);
    let stderr = cli.fails(&strs(&pool_args("missing", &flags))).await;
    assert!(
        stderr.contains("code=404")
            && stderr.contains(
                "Google Compute Engine: reservation \"nope\" not found for node pool \"missing\" at zone \"us-central1-a\"."
            ),
        "{stderr}"
    );
    assert_eq!(http.get(&format!("{pools}/missing")).await.0, 404);

    // Another machine type than the reservation's.
    let stderr = cli
        .fails(&strs(&pool_args(
            "wrong",
            &[
                "--machine-type=n2-standard-8",
                "--reservation-affinity=specific",
                "--reservation=a3-res",
                "--num-nodes=1",
            ],
        )))
        .await;
    assert!(
        stderr.contains("code=400")
            && stderr.contains(
                "Google Compute Engine: Invalid value for field 'resource.reservationAffinity': '{  \"consumeReservationType\": \"SPECIFIC_ALLOCATION\",  \"key\": \"compute.googleapis.com/reservation-name...'. No available resources in specified reservations 'a3-res'"
            ),
        "{stderr}"
    );
    assert_eq!(http.get(&format!("{pools}/wrong")).await.0, 404);

    // A reservation that is not specifically targeted.
    let mut flags = MEGA.to_vec();
    flags.extend(["--reservation=auto", "--num-nodes=1"]);
    let stderr = cli.fails(&strs(&pool_args("auto", &flags))).await;
    assert!(
        stderr.contains(
            "Specified reservations [auto] can not be targeted as specificReservationRequired is not set"
        ),
        "{stderr}"
    );
    assert_eq!(in_use(&http, "a3-res").await, "0");

    // More nodes than the reservation has: accepted, then the operation fails with the nodes it
    // could get.
    let mut flags = MEGA.to_vec();
    flags.extend(["--reservation=a3-res", "--num-nodes=3"]);
    let stderr = cli.fails(&strs(&pool_args("short", &flags))).await;
    assert!(
        stderr.contains("Expected 3, running 2, transitioning 1.")
            && stderr.contains(
                "Specified reservation 'a3-res' does not have available resources for the request."
            ),
        "{stderr}"
    );
    let (_, pool) = http.get(&format!("{pools}/short")).await;
    assert_eq!(pool["status"], "RUNNING_WITH_ERROR", "{pool}");
    assert_eq!(
        kube_nodes(&sim, "c1")
            .iter()
            .filter(|n| n.pool == "short")
            .count(),
        2
    );
    assert_eq!(in_use(&http, "a3-res").await, "2");
    let (_, ops) = http.get(&format!("{REGION}/operations")).await;
    let failed = ops["operations"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["operationType"] == "CREATE_NODE_POOL" && o["error"].is_object())
        .cloned()
        .unwrap();
    assert_eq!(failed["status"], "DONE");
    assert_eq!(failed["error"]["code"], 9);
    assert_eq!(
        failed["nodepoolConditions"][0]["canonicalCode"],
        "FAILED_PRECONDITION"
    );
    // Now the reservation is full: a pool gets no node at all, and ends in ERROR.
    let mut flags = MEGA.to_vec();
    flags.extend(["--reservation=a3-res", "--num-nodes=1"]);
    cli.fails(&strs(&pool_args("none", &flags))).await;
    let (_, pool) = http.get(&format!("{pools}/none")).await;
    assert_eq!(pool["status"], "ERROR", "{pool}");
    for name in ["short", "none"] {
        let (s, op) = http.delete(&format!("{pools}/{name}")).await;
        assert_eq!(s, 200, "{op}");
    }
    assert_eq!(in_use(&http, "a3-res").await, "0");
}

/// `gcloud container clusters resize c1 --node-pool=POOL --num-nodes=N`.
fn resize_args(pool: &str, nodes: u32) -> Vec<String> {
    [
        "container".to_string(),
        "clusters".into(),
        "resize".into(),
        "c1".into(),
        format!("--node-pool={pool}"),
        "--location=us-central1".into(),
        format!("--num-nodes={nodes}"),
        "--quiet".into(),
    ]
    .to_vec()
}

/// The names of pool `pool`'s Kubernetes nodes in cluster `c1`, sorted.
fn pool_node_names(sim: &SimHandle, pool: &str) -> Vec<String> {
    let mut names: Vec<String> = kube_nodes(sim, "c1")
        .into_iter()
        .filter(|n| n.pool == pool)
        .map(|n| n.name)
        .collect();
    names.sort();
    names
}

#[tokio::test]
async fn a_pool_in_error_is_completed_by_a_resize_keeping_its_nodes() {
    let sim = a3ctl_sim::start(SimConfig::default()).await.unwrap();
    let http = Http::new(&sim);
    let cli = Cli::new(&sim);
    networks(&http).await;
    let (s, op) = http
        .post(
            &format!("{REGION}/clusters"),
            cluster_body("c1", false, json!([e2_pool("p")])),
        )
        .await;
    assert_eq!(s, 200, "{op}");
    cli.json_owned(reservation_args(
        "a3-res",
        &[
            "--vm-count=2",
            "--machine-type=a3-megagpu-8g",
            "--require-specific-reservation",
        ],
    ))
    .await;
    let pools = format!("{REGION}/clusters/c1/nodePools");
    // A create short of the reservation keeps 2 of its 4 nodes; one with none left is in ERROR.
    let mut flags = MEGA.to_vec();
    flags.extend(["--reservation=a3-res", "--num-nodes=4"]);
    cli.fails(&strs(&pool_args("short", &flags))).await;
    let mut flags = MEGA.to_vec();
    flags.extend(["--reservation=a3-res", "--num-nodes=1"]);
    cli.fails(&strs(&pool_args("none", &flags))).await;
    let first = pool_node_names(&sim, "short");
    assert_eq!(first.len(), 2, "{first:?}");

    // Resized while the reservation is still full: the resize fails naming the first instance
    // it could not create (the group's third), and each pool stays in error with the resize's
    // error, keeping its nodes.
    let stderr = cli.fails(&strs(&resize_args("short", 4))).await;
    assert!(
        stderr.contains("Expected 4, running 2, transitioning 2.")
            && stderr.contains(&format!(
                "Instance '{}' creation failed: Specified reservation 'a3-res' does not have available resources for the request.",
                first[0].rsplit_once('-').map(|(group, _)| group).unwrap_or_default().to_string() + "-0003"
            )),
        "{stderr}"
    );
    let (_, pool) = http.get(&format!("{pools}/short")).await;
    assert_eq!(pool["status"], "RUNNING_WITH_ERROR", "{pool}");
    assert!(
        pool["statusMessage"]
            .as_str()
            .is_some_and(|m| m.contains("Expected 4, running 2")),
        "{pool}"
    );
    assert_eq!(pool_node_names(&sim, "short"), first);
    cli.fails(&strs(&resize_args("none", 1))).await;
    let (_, pool) = http.get(&format!("{pools}/none")).await;
    assert_eq!(pool["status"], "ERROR", "{pool}");
    assert!(
        pool["statusMessage"]
            .as_str()
            .is_some_and(|m| m.contains("Expected 1, running 0")),
        "{pool}"
    );

    // With room again, the resizes complete both pools: RUNNING, the create's error gone, the
    // first nodes still there.
    cli.json(&[
        "compute",
        "reservations",
        "update",
        "a3-res",
        "--zone=us-central1-a",
        "--vm-count=5",
    ])
    .await;
    cli.json_owned(resize_args("short", 4)).await;
    let (_, pool) = http.get(&format!("{pools}/short")).await;
    assert_eq!(pool["status"], "RUNNING", "{pool}");
    assert!(pool["statusMessage"].is_null(), "{pool}");
    assert!(pool["conditions"].is_null(), "{pool}");
    let all = pool_node_names(&sim, "short");
    assert_eq!(all.len(), 4, "{all:?}");
    assert!(first.iter().all(|n| all.contains(n)), "{all:?}");
    cli.json_owned(resize_args("none", 1)).await;
    let (_, pool) = http.get(&format!("{pools}/none")).await;
    assert_eq!(pool["status"], "RUNNING", "{pool}");
    assert_eq!(pool_node_names(&sim, "none").len(), 1);
    assert_eq!(in_use(&http, "a3-res").await, "5");
}

#[tokio::test]
async fn reservations_are_per_zone_shared_across_projects_and_used_by_inline_pools() {
    let sim = a3ctl_sim::start(SimConfig::default()).await.unwrap();
    let http = Http::new(&sim);
    networks(&http).await;
    let clusters = format!("{REGION}/clusters");
    let compute = |project: &str, zone: &str, name: &str, share: Value| {
        let path = format!("/compute/v1/projects/{project}/zones/{zone}/reservations");
        let body = json!({
            "name": name,
            "specificReservation": {"count": "4", "instanceProperties": {"machineType": "n2-standard-8"}},
            "specificReservationRequired": true,
            "shareSettings": share,
        });
        (path, body)
    };
    for (project, zone, name, share) in [
        (
            PROJECT,
            "us-central1-a",
            "cpu",
            json!({"shareType": "LOCAL"}),
        ),
        (
            "owner",
            "us-central1-a",
            "shared",
            json!({"shareType": "SPECIFIC_PROJECTS", "projectMap": {PROJECT: {"projectId": PROJECT}}}),
        ),
        (
            "owner",
            "us-central1-a",
            "private",
            json!({"shareType": "LOCAL"}),
        ),
    ] {
        let (path, body) = compute(project, zone, name, share);
        let (s, op) = http.send(reqwest::Method::POST, &path, Some(body)).await;
        assert_eq!(s, 200, "{op}");
    }
    let cpu_pool = |name: &str, value: &str, zones: Value, nodes: u32| {
        json!({"name": name, "initialNodeCount": nodes, "locations": zones,
               "config": {"machineType": "n2-standard-8", "reservationAffinity": {
                   "consumeReservationType": "SPECIFIC_RESERVATION",
                   "key": "compute.googleapis.com/reservation-name", "values": [value]}}})
    };

    // A cluster's inline pool consumes at creation; a missing reservation refuses the cluster.
    let one_zone = json!(["us-central1-a"]);
    let (s, op) = http
        .post(
            &clusters,
            cluster_body(
                "c1",
                false,
                json!([cpu_pool("p", "cpu", one_zone.clone(), 3)]),
            ),
        )
        .await;
    assert_eq!(s, 200, "{op}");
    assert_eq!(in_use(&http, "cpu").await, "3");
    let (s, b) = http
        .post(
            &clusters,
            cluster_body(
                "c2",
                false,
                json!([cpu_pool("p", "gone", one_zone.clone(), 1)]),
            ),
        )
        .await;
    let m = error(s, &b, 404, "NOT_FOUND", "notFound");
    assert_eq!(
        m,
        "Google Compute Engine: reservation \"gone\" not found for node pool \"p\" at zone \"us-central1-a\"."
    );
    assert_eq!(http.get(&format!("{clusters}/c2")).await.0, 404);

    // Every zone of the pool needs the reservation.
    let pools = format!("{clusters}/c1/nodePools");
    let two_zones = json!(["us-central1-a", "us-central1-b"]);
    let (s, b) = http
        .post(
            &pools,
            json!({"nodePool": cpu_pool("two", "cpu", two_zones, 1)}),
        )
        .await;
    let m = error(s, &b, 404, "NOT_FOUND", "notFound");
    assert!(m.ends_with("at zone \"us-central1-b\"."), "{m}");

    // Another project's reservation: only if it is shared with this one.
    let (s, op) = http
        .post(
            &pools,
            json!({"nodePool": cpu_pool("shared", "projects/owner/reservations/shared", one_zone.clone(), 2)}),
        )
        .await;
    assert_eq!(s, 200, "{op}");
    let (_, shared) = reservation(&http, "owner", "us-central1-a", "shared").await;
    assert_eq!(shared["specificReservation"]["inUseCount"], "2", "{shared}");
    let (s, b) = http
        .post(
            &pools,
            json!({"nodePool": cpu_pool("private", "projects/owner/reservations/private", one_zone, 1)}),
        )
        .await;
    error(s, &b, 404, "NOT_FOUND", "notFound");

    // Deleting the cluster frees both.
    let (s, op) = http.delete(&format!("{clusters}/c1")).await;
    assert_eq!(s, 200, "{op}");
    assert_eq!(http.get(&format!("{clusters}/c1")).await.0, 404);
    assert_eq!(in_use(&http, "cpu").await, "0");
    let (_, shared) = reservation(&http, "owner", "us-central1-a", "shared").await;
    assert_eq!(shared["specificReservation"]["inUseCount"], "0", "{shared}");
}

/// The service account the nodes of each pool run as, on the cluster's Kubernetes side.
fn node_accounts(sim: &SimHandle, cluster: &str) -> Vec<(String, String)> {
    let key = format!("projects/{PROJECT}/locations/{REGION}/clusters/{cluster}");
    sim.shared.read_world(|w, _| {
        w.kube
            .cluster(&key)
            .map(|c| c.pool_accounts.clone().into_iter().collect())
            .unwrap_or_default()
    })
}

#[tokio::test]
async fn node_pools_need_an_existing_service_account_and_their_nodes_run_as_it() {
    let sim = a3ctl_sim::start(SimConfig::default()).await.unwrap();
    let http = Http::new(&sim);
    networks(&http).await;
    let cli = Cli::new(&sim);
    let number = sim.shared.read_world(|w, _| w.project_number(PROJECT));
    let compute = format!("{number}-compute@developer.gserviceaccount.com");
    let missing = format!("missing@{PROJECT}.iam.gserviceaccount.com");
    let cluster = |name: &str| {
        [
            "container",
            "clusters",
            "create",
            name,
            "--location=us-central1",
            "--network=main",
            "--subnetwork=main-sub",
            "--node-locations=us-central1-a",
            "--num-nodes=1",
            "--machine-type=e2-standard-4",
            "--workload-pool=a3-sim-test.svc.id.goog",
        ]
        .map(String::from)
        .to_vec()
    };

    // While nobody made an account in the project, the simulator keeps none of its identities
    // and takes the pool's account to exist.
    let mut args = cluster("free");
    args.push(format!(
        "--service-account=free-nodes@{PROJECT}.iam.gserviceaccount.com"
    ));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    cli.json(&args).await;
    // Once the project's identities are in use (it has an account), pools' accounts are checked.
    cli.json(&["iam", "service-accounts", "create", "a3-runner"])
        .await;
    // The default pool of a cluster create names an account that does not exist: nothing made.
    let mut args = cluster("c0");
    args.push(format!("--service-account={missing}"));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let err = cli.fails(&args).await;
    assert!(
        err.contains(&format!(
            "code=400, message=Service account \"{missing}\" does not exist."
        )),
        "{err}"
    );
    let (_, listed) = http.get(&format!("{REGION}/clusters")).await;
    let names: Vec<&Value> = listed["clusters"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| &c["name"])
        .collect();
    assert_eq!(names, [&json!("free")], "{listed}");

    // `default`: the project's Compute Engine default account. On a Workload Identity cluster the
    // pool runs the GKE metadata server and its nodes carry GKE's label for it.
    let args = cluster("c1");
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let created = cli.json(&args).await;
    assert_eq!(created["status"], "RUNNING", "{created}");
    let pool = &created["nodePools"][0];
    assert_eq!(pool["config"]["serviceAccount"], "default");
    assert_eq!(
        pool["config"]["workloadMetadataConfig"]["mode"],
        "GKE_METADATA"
    );
    assert_eq!(
        node_accounts(&sim, "c1"),
        vec![("default-pool".to_string(), compute.clone())]
    );
    let node = &kube_nodes(&sim, "c1")[0];
    assert_eq!(
        node.labels
            .get("iam.gke.io/gke-metadata-server-enabled")
            .map(String::as_str),
        Some("true")
    );

    // A pool of a missing account is refused at once.
    let pool_args = |name: &str, account: Option<&str>| {
        let mut args = [
            "container",
            "node-pools",
            "create",
            name,
            "--cluster=c1",
            "--location=us-central1",
            "--num-nodes=1",
            "--machine-type=e2-standard-4",
        ]
        .map(String::from)
        .to_vec();
        if let Some(account) = account {
            args.push(format!("--service-account={account}"));
        }
        args
    };
    let args = pool_args("p2", Some(&missing));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let err = cli.fails(&args).await;
    assert!(
        err.contains(&format!(
            "code=400, message=Service account \"{missing}\" does not exist."
        )),
        "{err}"
    );

    // Once the account exists the same pool is made, and its nodes run as that account.
    cli.json(&["iam", "service-accounts", "create", "missing"])
        .await;
    let args = pool_args("p2", Some(&missing));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let pool = cli.json(&args).await;
    assert_eq!(pool["config"]["serviceAccount"], missing.as_str());
    assert_eq!(
        node_accounts(&sim, "c1"),
        vec![
            ("default-pool".to_string(), compute.clone()),
            ("p2".to_string(), missing.clone()),
        ]
    );

    // Without the Compute Engine default account, `default` names an account that does not
    // exist either.
    cli.json(&["iam", "service-accounts", "delete", &compute, "--quiet"])
        .await;
    let args = pool_args("p3", None);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let err = cli.fails(&args).await;
    assert!(
        err.contains(&format!(
            "code=400, message=Service account \"{compute}\" does not exist."
        )),
        "{err}"
    );
}

/// `gcloud container clusters upgrade CLUSTER --quiet` in us-central1 with `extra` flags.
fn upgrade_args<'a>(cluster: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec![
        "container",
        "clusters",
        "upgrade",
        cluster,
        "--location=us-central1",
        "--quiet",
    ];
    args.extend(extra);
    args
}

/// Creates a cluster by reqwest, with its release channel, version and first pool's version
/// (`None`: the master's), and lets its creation finish.
async fn versioned_cluster(
    http: &Http,
    name: &str,
    channel: &str,
    version: &str,
    pool: Option<&str>,
) {
    let mut p = e2_pool("p");
    if let Some(v) = pool {
        p["version"] = json!(v);
    }
    let mut body = cluster_body(name, false, json!([p]));
    body["cluster"]["releaseChannel"] = json!({"channel": channel});
    body["cluster"]["initialClusterVersion"] = json!(version);
    let (s, op) = http.post(&format!("{REGION}/clusters"), body).await;
    assert_eq!(s, 200, "{op}");
    let (_, cluster) = http.get(&format!("{REGION}/clusters/{name}")).await;
    assert_eq!(cluster["status"], "RUNNING", "{cluster}");
}

#[tokio::test]
async fn upgrades_follow_gke_version_skew_with_gcloud() {
    let sim = a3ctl_sim::start(SimConfig::default()).await.unwrap();
    let http = Http::new(&sim);
    networks(&http).await;
    let cli = Cli::new(&sim);
    let get = |name: &'static str| {
        let http = &http;
        async move { http.get(&format!("{REGION}/clusters/{name}")).await.1 }
    };

    // REGULAR at 1.32: the master goes one minor up, to the newest 1.33 build.
    versioned_cluster(&http, "up", "REGULAR", "1.32", None).await;
    let out = cli
        .run(&upgrade_args("up", &["--master", "--cluster-version=1.33"]))
        .await;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let cluster = get("up").await;
    assert_eq!(cluster["currentMasterVersion"], "1.33.5-gke.1080000");
    assert_eq!(cluster["nodePools"][0]["version"], "1.32.12-gke.1050000");
    let ops = cli
        .json(&["container", "operations", "list", "--location=us-central1"])
        .await;
    let last = ops.as_array().and_then(|o| o.last()).cloned().unwrap();
    assert_eq!(last["operationType"], "UPGRADE_MASTER", "{last}");
    assert_eq!(last["status"], "DONE", "{last}");
    // A pool cannot pass the master: 1.34 is a valid node version, but of a newer minor.
    let err = cli
        .fails(&upgrade_args(
            "up",
            &["--node-pool=p", "--cluster-version=1.34"],
        ))
        .await;
    assert!(
        err.contains(
            "Node version \"1.34.1-gke.1829001\" must not have a greater minor version than \
             master version \"1.33.5-gke.1080000\"."
        ),
        "{err}"
    );
    // The master may go back to an earlier patch of its minor (reqwest from here to the
    // channel check: the API's own fields); a pool may then not take the newer patch.
    let down = json!({"update": {"desiredMasterVersion": "1.33.4-gke.1245000"}});
    let (s, op) = http.put(&format!("{REGION}/clusters/up"), down).await;
    assert_eq!(
        (s, op["operationType"].as_str()),
        (200, Some("UPGRADE_MASTER")),
        "{op}"
    );
    assert_eq!(
        get("up").await["currentMasterVersion"],
        "1.33.4-gke.1245000"
    );
    let newer = json!({"nodeVersion": "1.33.5-gke.1080000"});
    let (s, b) = http
        .put(&format!("{REGION}/clusters/up/nodePools/p"), newer)
        .await;
    assert_eq!(
        error(s, &b, 400, "INVALID_ARGUMENT", "badRequest"),
        "desired node version \"1.33.5-gke.1080000\" cannot be greater than current master \
         version \"1.33.4-gke.1245000\"."
    );
    let newer = json!({"update": {"desiredNodePoolId": "p", "desiredNodeVersion": "1.34"}});
    let (s, b) = http.put(&format!("{REGION}/clusters/up"), newer).await;
    let m = error(s, &b, 400, "INVALID_ARGUMENT", "badRequest");
    assert!(m.contains("must not have a greater minor version"), "{m}");
    let follow = json!({"update": {"desiredNodePoolId": "p", "desiredNodeVersion": "-"}});
    let (s, op) = http.put(&format!("{REGION}/clusters/up"), follow).await;
    assert_eq!(
        (s, op["operationType"].as_str()),
        (200, Some("UPGRADE_NODES")),
        "{op}"
    );
    assert_eq!(
        get("up").await["nodePools"][0]["version"],
        "1.33.4-gke.1245000"
    );
    // In its channel a cluster takes only the channel's versions.
    let err = cli
        .fails(&upgrade_args("up", &["--master", "--cluster-version=1.34"]))
        .await;
    assert!(
        err.contains(
            "Master version must be one of \"REGULAR\" channel supported versions \
             [1.32.12-gke.1050000, 1.33.4-gke.1245000, 1.33.5-gke.1080000]."
        ),
        "{err}"
    );

    // Outside any channel every version is offered, and the skew rules alone decide.
    versioned_cluster(&http, "pinned", "UNSPECIFIED", "1.32", None).await;
    let err = cli
        .fails(&upgrade_args(
            "pinned",
            &["--master", "--cluster-version=1.34"],
        ))
        .await;
    assert!(
        err.contains(
            "Master cannot be upgraded to \"1.34.1-gke.1829001\": cannot upgrade the master \
             more than a minor version at a time."
        ),
        "{err}"
    );
    let err = cli
        .fails(&upgrade_args(
            "pinned",
            &["--master", "--cluster-version=1.31"],
        ))
        .await;
    assert!(
        err.contains(
            "Master cannot be upgraded to \"1.31.14-gke.1243000\": specified version is not \
             newer than the current version."
        ),
        "{err}"
    );
    // An earlier patch of the same minor is a downgrade GKE allows.
    let out = cli
        .run(&upgrade_args(
            "pinned",
            &["--master", "--cluster-version=1.32.4-gke.1767000"],
        ))
        .await;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        get("pinned").await["currentMasterVersion"],
        "1.32.4-gke.1767000"
    );

    // A pool two minors behind holds the master at its minor until the pool moves.
    versioned_cluster(&http, "lag", "UNSPECIFIED", "1.31", Some("1.29")).await;
    let cluster = get("lag").await;
    assert_eq!(cluster["currentMasterVersion"], "1.31.14-gke.1243000");
    assert_eq!(cluster["nodePools"][0]["version"], "1.29.15-gke.2467000");
    let err = cli
        .fails(&upgrade_args(
            "lag",
            &["--master", "--cluster-version=1.32"],
        ))
        .await;
    assert!(
        err.contains(
            "Master cannot be upgraded to \"1.32.12-gke.1050000\": node pool \"p\" version \
             \"1.29.15-gke.2467000\" would be more than 2 minor versions older than the master; \
             upgrade the node pool first."
        ),
        "{err}"
    );
    let out = cli
        .run(&upgrade_args(
            "lag",
            &["--node-pool=p", "--cluster-version=1.30"],
        ))
        .await;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let ops = cli
        .json(&["container", "operations", "list", "--location=us-central1"])
        .await;
    let last = ops.as_array().and_then(|o| o.last()).cloned().unwrap();
    assert_eq!(last["operationType"], "UPGRADE_NODES", "{last}");
    let out = cli
        .run(&upgrade_args(
            "lag",
            &["--master", "--cluster-version=1.32"],
        ))
        .await;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let cluster = get("lag").await;
    assert_eq!(cluster["currentMasterVersion"], "1.32.12-gke.1050000");
    assert_eq!(cluster["nodePools"][0]["version"], "1.30.14-gke.1922000");

    // A new pool with an explicit version obeys the same rules.
    let pool = |version: &'static str| {
        vec![
            "container",
            "node-pools",
            "create",
            "extra",
            "--cluster=lag",
            "--location=us-central1",
            "--node-locations=us-central1-a",
            "--machine-type=e2-standard-4",
            "--num-nodes=1",
            version,
        ]
    };
    let err = cli.fails(&pool("--node-version=1.29")).await;
    assert!(
        err.contains(
            "Node version \"1.29.15-gke.2467000\" must not be more than 2 minor versions older \
             than master version \"1.32.12-gke.1050000\"."
        ),
        "{err}"
    );
    let err = cli.fails(&pool("--node-version=1.33")).await;
    assert!(
        err.contains("must not have a greater minor version than master version"),
        "{err}"
    );
    let created = cli.json(&pool("--node-version=1.30")).await;
    assert_eq!(created["version"], "1.30.14-gke.1922000", "{created}");
}

/// The GPU pool create operation of `pool` on cluster c1, after its start: its status, its
/// duration by its own timestamps (seconds), and its error message.
async fn pool_create(http: &Http, pool: &str) -> (String, Option<f64>, String) {
    let (_, ops) = http.get(&format!("{REGION}/operations")).await;
    let op = ops["operations"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|o| {
            o["operationType"] == "CREATE_NODE_POOL"
                && o["targetLink"]
                    .as_str()
                    .is_some_and(|t| t.ends_with(&format!("/nodePools/{pool}")))
        })
        .cloned()
        .unwrap_or_else(|| panic!("no create of {pool}: {ops}"));
    let time = |key: &str| {
        op[key]
            .as_str()
            .and_then(|t| chrono::DateTime::parse_from_rfc3339(t).ok())
    };
    let ran = match (time("startTime"), time("endTime")) {
        (Some(start), Some(end)) => Some((end - start).num_milliseconds() as f64 / 1000.0),
        _ => None,
    };
    let message = op["error"]["message"].as_str().unwrap_or("").to_string();
    (
        op["status"].as_str().unwrap_or("").to_string(),
        ran,
        message,
    )
}

/// A cluster `c1` with an e2 pool, RUNNING, on a simulator whose GPU pool creates take `gpu_secs`.
async fn cluster_with_gpu_latency(gpu_secs: f64) -> (SimHandle, Http, Cli) {
    let mut latency = LatencyProfile::realistic();
    latency.spans.insert(
        "container.nodePool.create.gpu".into(),
        a3ctl_sim::latency::Span::Fixed(gpu_secs),
    );
    let sim = a3ctl_sim::start(SimConfig {
        latency,
        ..SimConfig::default()
    })
    .await
    .unwrap();
    let http = Http::new(&sim);
    let cli = Cli::new(&sim);
    http.compute(
        "global/networks",
        json!({"name": "main", "autoCreateSubnetworks": false}),
    )
    .await;
    sim.advance_secs(60.0);
    http.compute(
        &format!("regions/{REGION}/subnetworks"),
        json!({"name": "main-sub", "network": format!("projects/{PROJECT}/global/networks/main"),
               "ipCidrRange": "10.128.0.0/20",
               "secondaryIpRanges": [{"rangeName": "pods", "ipCidrRange": "10.4.0.0/14"},
                                     {"rangeName": "services", "ipCidrRange": "10.0.32.0/20"}]}),
    )
    .await;
    sim.advance_secs(60.0);
    let (s, op) = http
        .post(
            &format!("{REGION}/clusters"),
            cluster_body("c1", false, json!([e2_pool("p")])),
        )
        .await;
    assert_eq!(s, 200, "{op}");
    sim.advance_secs(700.0);
    let (_, cluster) = http.get(&format!("{REGION}/clusters/c1")).await;
    assert_eq!(cluster["status"], "RUNNING", "{cluster}");
    (sim, http, cli)
}

#[tokio::test]
async fn a_gpu_pool_create_takes_longer_as_its_node_count_grows() {
    // A fixed 600 s for a GPU pool's create: 8 nodes take it, 32 nodes twice it
    // (`latency::pool_size_factor`, which `a3ctl init`'s estimate uses too).
    let (sim, http, cli) = cluster_with_gpu_latency(600.0).await;
    // Over plain HTTP: gcloud would wait for the operation on a clock no one moves.
    http.compute(
        "zones/us-central1-a/reservations",
        json!({"name": "big", "specificReservationRequired": true,
               "specificReservation": {"count": "40",
                   "instanceProperties": {"machineType": "a3-megagpu-8g"}}}),
    )
    .await;
    sim.advance_secs(60.0);
    for (pool, nodes, secs) in [("eight", 8, 600.0), ("thirtytwo", 32, 1200.0)] {
        let mut flags = MEGA.to_vec();
        let count = format!("--num-nodes={nodes}");
        flags.extend(["--reservation=big", count.as_str(), "--async"]);
        cli.json_owned(pool_args(pool, &flags)).await;
        sim.advance_secs(secs - 1.0);
        let (status, _, _) = pool_create(&http, pool).await;
        assert_eq!(status, "RUNNING", "{pool} after {}s", secs - 1.0);
        sim.advance_secs(2.0);
        let (status, ran, message) = pool_create(&http, pool).await;
        assert_eq!(status, "DONE", "{pool}: {message}");
        assert_eq!(ran, Some(secs), "{pool}");
    }
}

#[tokio::test]
async fn an_instance_group_failure_lasts_as_long_as_its_message_says() {
    // A reservation of 2 VMs and a pool of 4: the instance groups try for 35m4s before GKE fails
    // the operation, and the message's "after" is the operation's own duration (it said 35m4s
    // after a 6-minute operation before).
    let (sim, http, cli) = cluster_with_gpu_latency(400.0).await;
    // Over plain HTTP: gcloud would wait for the operation on a clock no one moves.
    http.compute(
        "zones/us-central1-a/reservations",
        json!({"name": "small", "specificReservationRequired": true,
               "specificReservation": {"count": "2",
                   "instanceProperties": {"machineType": "a3-megagpu-8g"}}}),
    )
    .await;
    sim.advance_secs(60.0);
    let mut flags = MEGA.to_vec();
    flags.extend(["--reservation=small", "--num-nodes=4", "--async"]);
    cli.json_owned(pool_args("short", &flags)).await;
    sim.advance_secs(2100.0);
    let (status, _, _) = pool_create(&http, "short").await;
    assert_eq!(status, "RUNNING", "still trying after 35 minutes");
    sim.advance_secs(10.0);
    let (status, ran, message) = pool_create(&http, "short").await;
    assert_eq!(status, "DONE");
    let ran = ran.expect("an end time");
    assert!((2104.0..2105.0).contains(&ran), "{ran}");
    let after = a3ctl_sim::capacity::go_duration(ran);
    assert!(
        message.starts_with(&format!(
            "Google Compute Engine: Not all instances running in IGM after {after}. Expected 4, running 2,"
        )),
        "{after}: {message}"
    );
}
