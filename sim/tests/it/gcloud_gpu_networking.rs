//! A3 Ultra / A4 node pools on additional node networks, driven by gcloud and watched with
//! kubectl: a second gVNIC network and the 8 subnets of a RoCE network give 10 NICs per node,
//! shown in GKE's node annotations and, once Network objects refer to them, as
//! `networking.gke.io.networks/<Network>` resources; the rules on RoCE networks (MRDMA machine
//! types, their profile's zone), on repeated networks and on NIC counts. Also the helpers of
//! [`crate::gcloud_dranet`] (GKE-managed DRANET and `resource.k8s.io`).

use crate::gcloud_support::{Gcloud, PROJECT, main_network, post_ok, send};
use crate::kube_support::latency;
use a3ctl_sim::{SimConfig, SimHandle};
use base64::Engine;
use serde_json::{Value, json};

pub(crate) const REGION: &str = "us-central1";

pub(crate) async fn start() -> SimHandle {
    let config = SimConfig {
        latency: latency(&[("kube.driver.installed", 60.0)]),
        ..SimConfig::default()
    };
    a3ctl_sim::start(config).await.expect("simulator starts")
}

pub(crate) fn container(path: &str) -> String {
    format!("/container/v1/projects/{PROJECT}/locations/{REGION}/{path}")
}

pub(crate) async fn get(sim: &SimHandle, path: &str) -> (u16, Value) {
    send(reqwest::Client::new().get(format!("{}{}", sim.base_url(), container(path)))).await
}

pub(crate) async fn post(sim: &SimHandle, path: &str, body: Value) -> (u16, Value) {
    let request = reqwest::Client::new()
        .post(format!("{}{}", sim.base_url(), container(path)))
        .json(&body);
    send(request).await
}

/// Asserts GKE's 400 `INVALID_ARGUMENT`/`badRequest` and returns its message.
pub(crate) fn bad_request(answer: &(u16, Value)) -> String {
    let (status, body) = answer;
    assert_eq!(*status, 400, "{body}");
    assert_eq!(body["error"]["status"], "INVALID_ARGUMENT", "{body}");
    assert_eq!(body["error"]["errors"][0]["reason"], "badRequest", "{body}");
    body["error"]["message"].as_str().unwrap_or("").to_string()
}

/// `gcloud container clusters create <name>` on `main` in us-central1-b with `extra` flags.
pub(crate) async fn cluster(cli: &Gcloud, name: &str, extra: &[&str]) -> Value {
    let mut args = vec![
        "container",
        "clusters",
        "create",
        name,
        "--location=us-central1",
        "--node-locations=us-central1-b",
        "--network=main",
        "--subnetwork=main-sub",
        "--num-nodes=1",
        "--machine-type=e2-standard-4",
    ];
    args.extend(extra);
    let created = cli.json(&args).await;
    created.get(0).cloned().unwrap_or(created)
}

/// A node pool request body: `machine` in us-central1-b with `network_config`.
pub(crate) fn pool(
    name: &str,
    machine: &str,
    network_config: Value,
    version: Option<&str>,
) -> Value {
    let mut pool = json!({"name": name, "initialNodeCount": 2, "locations": ["us-central1-b"],
        "config": {"machineType": machine,
            "labels": {"cloud.google.com/gke-networking-dra-driver": "true"},
            "reservationAffinity": {"consumeReservationType": "NO_RESERVATION"}},
        "networkConfig": network_config});
    if let Some(version) = version {
        pool["version"] = json!(version);
    }
    json!({ "nodePool": pool })
}

/// kubectl against one cluster of the simulator, with its CA from the cluster resource.
pub(crate) struct Kubectl {
    endpoint: String,
    ca: tempfile::NamedTempFile,
    home: tempfile::TempDir,
}

impl Kubectl {
    pub(crate) async fn new(sim: &SimHandle, cluster: &str) -> Kubectl {
        let (status, resource) = get(sim, &format!("clusters/{cluster}")).await;
        assert_eq!(status, 200, "{resource}");
        let pem = base64::engine::general_purpose::STANDARD
            .decode(
                resource["masterAuth"]["clusterCaCertificate"]
                    .as_str()
                    .unwrap(),
            )
            .unwrap();
        let ca = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(ca.path(), pem).unwrap();
        Kubectl {
            endpoint: resource["endpoint"].as_str().unwrap().to_string(),
            ca,
            home: tempfile::tempdir().unwrap(),
        }
    }

    /// Runs kubectl; returns (success, stdout, stderr).
    pub(crate) async fn run(&self, args: &[&str], stdin: Option<&str>) -> (bool, String, String) {
        use tokio::io::AsyncWriteExt;
        let mut child = tokio::process::Command::new("kubectl")
            .args([
                "--server",
                &format!("https://{}", self.endpoint),
                "--token",
                "t",
                "--certificate-authority",
                self.ca.path().to_str().unwrap(),
            ])
            .args(args)
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("HOME", self.home.path())
            .env("KUBECONFIG", self.home.path().join("kubeconfig"))
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("kubectl is installed");
        let mut input = child.stdin.take().unwrap();
        if let Some(text) = stdin {
            input.write_all(text.as_bytes()).await.unwrap();
        }
        drop(input);
        let out = child.wait_with_output().await.unwrap();
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }

    pub(crate) async fn ok(&self, args: &[&str]) -> String {
        self.ok_stdin(args, None).await
    }

    pub(crate) async fn ok_stdin(&self, args: &[&str], stdin: Option<&str>) -> String {
        let (ok, out, err) = self.run(args, stdin).await;
        assert!(ok, "kubectl {args:?} failed:\n{out}\n{err}");
        out
    }

    pub(crate) async fn json(&self, args: &[&str]) -> Value {
        let mut all = args.to_vec();
        all.extend(["-o", "json"]);
        serde_json::from_str(&self.ok(&all).await).unwrap()
    }

    /// The Node objects of one node pool.
    pub(crate) async fn pool_nodes(&self, pool: &str) -> Vec<Value> {
        let selector = format!("cloud.google.com/gke-nodepool={pool}");
        let list = self.json(&["get", "nodes", "-l", &selector]).await;
        list["items"].as_array().cloned().unwrap_or_default()
    }

    /// `kubectl api-versions`, the `resource.k8s.io` lines.
    pub(crate) async fn resource_versions(&self) -> Vec<String> {
        self.ok(&["api-versions"])
            .await
            .lines()
            .filter(|l| l.starts_with("resource.k8s.io/"))
            .map(str::to_string)
            .collect()
    }
}

/// A custom-mode network `name` with one subnet `<name>-sub` of `cidr` in us-central1, by REST.
async fn network(sim: &SimHandle, name: &str, cidr: &str, extra: Value) {
    let compute = |path: &str| format!("/compute/v1/projects/{PROJECT}/{path}");
    let mut body = json!({"name": name, "autoCreateSubnetworks": false, "mtu": 8896});
    if let (Some(body), Some(extra)) = (body.as_object_mut(), extra.as_object()) {
        body.extend(extra.clone());
    }
    post_ok(sim, &compute("global/networks"), body).await;
    let _ = get(sim, "clusters").await;
    post_ok(
        sim,
        &compute(&format!("regions/{REGION}/subnetworks")),
        json!({"name": format!("{name}-sub"), "network": format!("global/networks/{name}"),
            "ipCidrRange": cidr}),
    )
    .await;
    let _ = get(sim, "clusters").await;
}

/// A GKENetworkParamSet and a Network of `kind` (`Device` or `L3`) for `vpc`'s subnet.
fn network_objects(name: &str, vpc: &str, kind: &str) -> String {
    format!(
        r#"
apiVersion: networking.gke.io/v1
kind: GKENetworkParamSet
metadata:
  name: {name}
spec:
  vpc: {vpc}
  vpcSubnet: {vpc}-sub
  deviceMode: NetDevice
---
apiVersion: networking.gke.io/v1
kind: Network
metadata:
  name: {name}
spec:
  type: {kind}
  parametersRef:
    group: networking.gke.io
    kind: GKENetworkParamSet
    name: {name}
"#
    )
}

#[tokio::test]
async fn additional_node_networks_show_on_the_nodes_as_gke_shows_them() {
    let sim = start().await;
    let cli = Gcloud::new(&sim);
    main_network(&sim, PROJECT, REGION).await;
    network(&sim, "net-1", "192.168.64.0/24", json!({})).await;
    network(&sim, "net-2", "192.168.65.0/24", json!({})).await;
    cluster(
        &cli,
        "c1",
        &[
            "--enable-dataplane-v2",
            "--enable-multi-networking",
            "--enable-ip-alias",
        ],
    )
    .await;
    // An A3 Ultra pool on the second gVNIC network, with gcloud.
    let created = cli
        .json(&[
            "container",
            "node-pools",
            "create",
            "ultra",
            "--cluster=c1",
            "--location=us-central1",
            "--node-locations=us-central1-b",
            "--machine-type=a3-ultragpu-8g",
            "--num-nodes=2",
            "--accelerator=type=nvidia-h200-141gb,count=8,gpu-driver-version=latest",
            "--enable-gvnic",
            "--reservation-affinity=none",
            "--additional-node-network=network=net-1,subnetwork=net-1-sub",
        ])
        .await;
    let created = created.get(0).cloned().unwrap_or(created);
    assert_eq!(created["status"], "RUNNING", "{created}");
    assert_eq!(
        created["config"]["accelerators"][0]["acceleratorType"],
        "nvidia-h200-141gb"
    );
    sim.advance_secs(120.0);
    let kubectl = Kubectl::new(&sim, "c1").await;
    let listed = kubectl.pool_nodes("ultra").await;
    assert_eq!(listed.len(), 2);
    let mut addresses = vec![];
    for node in &listed {
        assert_eq!(
            node["metadata"]["labels"]["cloud.google.com/gke-accelerator"],
            "nvidia-h200-141gb"
        );
        assert_eq!(node["status"]["allocatable"]["nvidia.com/gpu"], "8");
        assert_eq!(node["status"]["capacity"]["cpu"], "224");
        let info: Value = serde_json::from_str(
            node["metadata"]["annotations"]["networking.gke.io/nic-info"]
                .as_str()
                .unwrap(),
        )
        .unwrap();
        let names: Vec<&str> = info
            .as_array()
            .unwrap()
            .iter()
            .map(|n| n["birthName"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["eth0", "eth1"]);
        let ip = info[1]["birthIP"].as_str().unwrap().to_string();
        assert!(ip.starts_with("192.168.64."), "{ip}");
        addresses.push(ip);
        // No Network object refers to net-1 yet.
        assert!(
            node["metadata"]["annotations"]["networking.gke.io/north-interfaces"].is_null(),
            "{node}"
        );
    }
    assert_ne!(addresses[0], addresses[1]);

    // Once a Network refers to net-1's subnet, the nodes carry it.
    kubectl
        .ok_stdin(
            &["apply", "-f", "-"],
            Some(&network_objects("gvnic-1", "net-1", "L3")),
        )
        .await;
    for node in kubectl.pool_nodes("ultra").await {
        let north: Value = serde_json::from_str(
            node["metadata"]["annotations"]["networking.gke.io/north-interfaces"]
                .as_str()
                .unwrap(),
        )
        .unwrap();
        assert_eq!(north[0]["network"], "gvnic-1");
        assert!(addresses.contains(&north[0]["ipAddress"].as_str().unwrap().to_string()));
        let allocatable = &node["status"]["allocatable"];
        assert_eq!(allocatable["networking.gke.io.networks/gvnic-1"], "1");
        assert_eq!(allocatable["networking.gke.io.networks/gvnic-1.IP"], "1");
    }

    // Refusals: a network twice, and more NICs than the machine type has.
    let twice = json!({"additionalNodeNetworkConfigs": [
        {"network": "net-1", "subnetwork": "net-1-sub"},
        {"network": "net-1", "subnetwork": "net-1-sub"}]});
    let answer = post(
        &sim,
        "clusters/c1/nodePools",
        pool("twice", "a3-ultragpu-8g", twice, None),
    )
    .await;
    assert_eq!(
        bad_request(&answer),
        "Additional node network \"net-1\" is given more than once; a node has one network \
         interface per VPC network."
    );
    let many = json!({"additionalNodeNetworkConfigs": [
        {"network": "net-1", "subnetwork": "net-1-sub"},
        {"network": "net-2", "subnetwork": "net-2-sub"}]});
    let mut small = pool("small", "e2-medium", many, None);
    small["nodePool"]["locations"] = json!(["us-central1-a"]);
    let answer = post(&sim, "clusters/c1/nodePools", small).await;
    assert_eq!(
        bad_request(&answer),
        "Machine type \"e2-medium\" supports at most 2 network interfaces; the node pool asks \
         for 3 (the primary one and 2 additional node networks)."
    );
}

/// The RoCE network `name` of `zone`'s profile with `subnets` /21 subnets `<name>-sub-<i>` from
/// 192.168.128.0, as cluster-toolkit's `gpu-rdma-vpc` lays them out, by REST.
async fn roce_network(sim: &SimHandle, name: &str, zone: &str, region: &str, subnets: usize) {
    let compute = |path: &str| format!("/compute/v1/projects/{PROJECT}/{path}");
    let profile = format!("projects/{PROJECT}/global/networkProfiles/{zone}-vpc-roce");
    post_ok(
        sim,
        &compute("global/networks"),
        json!({"name": name, "autoCreateSubnetworks": false, "networkProfile": profile}),
    )
    .await;
    let _ = get(sim, "clusters").await;
    for i in 0..subnets {
        post_ok(
            sim,
            &compute(&format!("regions/{region}/subnetworks")),
            json!({"name": format!("{name}-sub-{i}"), "network": format!("global/networks/{name}"),
                "ipCidrRange": format!("192.168.{}.0/21", 128 + 8 * i)}),
        )
        .await;
    }
    let _ = get(sim, "clusters").await;
}

/// `additionalNodeNetworkConfigs` for subnets `from..to` of RoCE network `name`.
fn roce_configs(name: &str, subnets: std::ops::Range<usize>) -> Vec<Value> {
    subnets
        .map(|i| json!({"network": name, "subnetwork": format!("{name}-sub-{i}")}))
        .collect()
}

#[tokio::test]
async fn a3_ultra_nodes_have_two_gvnic_and_eight_mrdma_nics_on_a_roce_network() {
    let sim = start().await;
    let cli = Gcloud::new(&sim);
    main_network(&sim, PROJECT, REGION).await;
    network(&sim, "net-1", "192.168.64.0/24", json!({})).await;
    roce_network(&sim, "rdma", "us-central1-b", REGION, 9).await;
    cluster(
        &cli,
        "c1",
        &[
            "--enable-dataplane-v2",
            "--enable-multi-networking",
            "--enable-ip-alias",
        ],
    )
    .await;
    // The cluster-toolkit layout: net-1's subnet, then the RoCE network's 8 subnets.
    let mut args: Vec<String> = [
        "container",
        "node-pools",
        "create",
        "ultra",
        "--cluster=c1",
        "--location=us-central1",
        "--node-locations=us-central1-b",
        "--machine-type=a3-ultragpu-8g",
        "--num-nodes=2",
        "--accelerator=type=nvidia-h200-141gb,count=8,gpu-driver-version=latest",
        "--enable-gvnic",
        "--reservation-affinity=none",
        "--additional-node-network=network=net-1,subnetwork=net-1-sub",
    ]
    .map(String::from)
    .to_vec();
    for i in 0..8 {
        args.push(format!(
            "--additional-node-network=network=rdma,subnetwork=rdma-sub-{i}"
        ));
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let created = cli.json(&args).await;
    let created = created.get(0).cloned().unwrap_or(created);
    assert_eq!(created["status"], "RUNNING", "{created}");
    assert_eq!(
        created["networkConfig"]["additionalNodeNetworkConfigs"]
            .as_array()
            .unwrap()
            .len(),
        9
    );

    // Ten NICs per node: eth0 and eth1 (gVNIC), eth2..eth9 in the RoCE subnets.
    sim.advance_secs(120.0);
    let kubectl = Kubectl::new(&sim, "c1").await;
    let nodes = kubectl.pool_nodes("ultra").await;
    assert_eq!(nodes.len(), 2);
    for node in &nodes {
        let info: Value = serde_json::from_str(
            node["metadata"]["annotations"]["networking.gke.io/nic-info"]
                .as_str()
                .unwrap(),
        )
        .unwrap();
        let info = info.as_array().unwrap();
        assert_eq!(info.len(), 10, "{info:?}");
        for (i, nic) in info.iter().enumerate().skip(2) {
            assert_eq!(nic["birthName"], format!("eth{i}"));
            let subnet = format!("192.168.{}.", 128 + 8 * (i - 2));
            assert!(
                nic["birthIP"].as_str().unwrap().starts_with(&subnet),
                "{nic}"
            );
        }
    }

    // The RDMA Networks (one per subnet, Device type) make the NICs schedulable resources.
    let mut objects = String::new();
    for i in 0..8 {
        let set = network_objects(&format!("rdma-{i}"), "rdma", "Device")
            .replace("vpcSubnet: rdma-sub", &format!("vpcSubnet: rdma-sub-{i}"))
            .replace("deviceMode: NetDevice", "deviceMode: RDMA");
        objects.push_str(&set);
        objects.push_str("---\n");
    }
    kubectl
        .ok_stdin(&["apply", "-f", "-"], Some(&objects))
        .await;
    for node in kubectl.pool_nodes("ultra").await {
        let allocatable = &node["status"]["allocatable"];
        for i in 0..8 {
            assert_eq!(
                allocatable[format!("networking.gke.io.networks/rdma-{i}")],
                "1",
                "{allocatable}"
            );
        }
        let north: Value = serde_json::from_str(
            node["metadata"]["annotations"]["networking.gke.io/north-interfaces"]
                .as_str()
                .unwrap(),
        )
        .unwrap();
        assert_eq!(north.as_array().unwrap().len(), 8);
    }

    // Nine RoCE subnets are one more than an A3 Ultra has MRDMA NICs.
    let nine = json!({"additionalNodeNetworkConfigs": roce_configs("rdma", 0..9)});
    let answer = post(
        &sim,
        "clusters/c1/nodePools",
        pool("nine", "a3-ultragpu-8g", nine, None),
    )
    .await;
    assert_eq!(
        bad_request(&answer),
        "Machine type \"a3-ultragpu-8g\" has 8 MRDMA network interfaces; 9 additional node \
         networks need one."
    );
    // A machine type without MRDMA NICs on the RoCE network.
    let one = json!({"additionalNodeNetworkConfigs": roce_configs("rdma", 0..1)});
    let mut mega = pool("mega", "a3-megagpu-8g", one, None);
    mega["nodePool"]["locations"] = json!(["us-central1-a"]);
    let answer = post(&sim, "clusters/c1/nodePools", mega).await;
    assert_eq!(
        bad_request(&answer),
        "Network \"rdma\" has an RDMA (RoCE) network profile; machine type \"a3-megagpu-8g\" \
         has no MRDMA network interfaces to attach to it."
    );
}

#[tokio::test]
async fn a_roce_network_serves_nodes_of_its_profiles_zone_only() {
    // us-west3 offers A4 in two zones, each with its own RoCE profile.
    let sim = start().await;
    let cli = Gcloud::new(&sim);
    main_network(&sim, PROJECT, "us-west3").await;
    roce_network(&sim, "rdma-b", "us-west3-b", "us-west3", 1).await;
    cli.json(&[
        "container",
        "clusters",
        "create",
        "west",
        "--location=us-west3",
        "--node-locations=us-west3-b",
        "--network=main",
        "--subnetwork=main-sub",
        "--num-nodes=1",
        "--machine-type=e2-standard-4",
        "--enable-dataplane-v2",
        "--enable-multi-networking",
        "--enable-ip-alias",
    ])
    .await;
    let err = cli
        .fails(&[
            "container",
            "node-pools",
            "create",
            "a4",
            "--cluster=west",
            "--location=us-west3",
            "--node-locations=us-west3-c",
            "--machine-type=a4-highgpu-8g",
            "--num-nodes=1",
            "--reservation-affinity=none",
            "--additional-node-network=network=rdma-b,subnetwork=rdma-b-sub-0",
        ])
        .await;
    assert!(
        err.contains(
            "Network \"rdma-b\" has the network profile of zone us-west3-b; it cannot be \
             attached to nodes in zone us-west3-c."
        ),
        "{err}"
    );
    // In the profile's zone the same pool is accepted.
    let created = cli
        .json(&[
            "container",
            "node-pools",
            "create",
            "a4",
            "--cluster=west",
            "--location=us-west3",
            "--node-locations=us-west3-b",
            "--machine-type=a4-highgpu-8g",
            "--num-nodes=1",
            "--reservation-affinity=none",
            "--additional-node-network=network=rdma-b,subnetwork=rdma-b-sub-0",
        ])
        .await;
    let created = created.get(0).cloned().unwrap_or(created);
    assert_eq!(created["status"], "RUNNING", "{created}");
}
