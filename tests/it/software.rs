//! Cluster software end to end: the real binary applies the shipped blueprints against the
//! simulator, and kubectl, as an independent client of the simulated cluster (its endpoint and CA
//! taken from the simulator's GKE API), checks the GPU networks and the NCCL stack; drift made
//! with kubectl is planned and repaired; the installers finish before the GPU pool; destroy
//! leaves nothing.

use crate::common;

use a3ctl_sim::SimConfig;
use common::TestContext;
use common::kubectl::{Kubectl, P};
use serde_json::Value;

/// `vpc1..vpcN` plus GKE's own `default` network, sorted.
fn networks_with_default(n: usize) -> Vec<String> {
    let mut names: Vec<String> = (1..=n).map(|i| format!("vpc{i}")).collect();
    names.push("default".into());
    names.sort();
    names
}

async fn clusters_left(cx: &TestContext) -> usize {
    let url = format!(
        "{}/container/v1/projects/{P}/locations/-/clusters",
        cx.sim.base_url()
    );
    let list: Value = reqwest::get(&url).await.unwrap().json().await.unwrap();
    list["clusters"].as_array().map_or(0, Vec::len)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a3_mega_gets_eight_gpu_networks_and_the_tcpxo_stack_drift_is_repaired_destroy_clears() {
    let cx = TestContext::new().await;
    cx.unprotect("blueprints/a3-mega.toml");
    cx.run(&["apply", "blueprints/a3-mega.toml", "--auto-approve"])
        .await
        .expect(0);
    let kubectl = Kubectl::for_cluster(&cx, "a3mega").await;

    let networks = kubectl.items(&["networks.networking.gke.io"]).await;
    let mut names: Vec<String> = networks
        .iter()
        .map(|n| n["metadata"]["name"].as_str().unwrap().to_string())
        .collect();
    names.sort();
    assert_eq!(names, networks_with_default(8));
    for n in networks
        .iter()
        .filter(|n| n["metadata"]["name"] != "default")
    {
        assert_eq!(n["spec"]["type"], "Device", "{n}");
        assert_eq!(n["spec"]["parametersRef"]["kind"], "GKENetworkParamSet");
        assert_eq!(n["spec"]["parametersRef"]["name"], n["metadata"]["name"]);
        assert_eq!(n["metadata"]["labels"]["a3ctl-blueprint"], "a3mega");
        assert_eq!(
            n["metadata"]["labels"]["app.kubernetes.io/managed-by"],
            "a3ctl"
        );
    }
    let params = kubectl
        .items(&["gkenetworkparamsets.networking.gke.io"])
        .await;
    assert_eq!(params.len(), 8);
    for p in &params {
        let name = p["metadata"]["name"].as_str().unwrap();
        let i: usize = name.trim_start_matches("vpc").parse().unwrap();
        // One numbering: the cluster's vpc<i> is the cloud's gpunet-<i>.
        assert_eq!(p["spec"]["vpc"], format!("a3mega-gpunet-{i}"));
        assert_eq!(p["spec"]["vpcSubnet"], format!("a3mega-gpunet-{i}-subnet"));
        assert_eq!(p["spec"]["deviceMode"], "NetDevice");
    }
    // Exactly the objects the recipe needs carry the blueprint's label, nothing more or less.
    let labelled = kubectl
        .items(&[
            "networks.networking.gke.io,gkenetworkparamsets.networking.gke.io,daemonsets,configmaps,\
             topologies.kueue.x-k8s.io,resourceflavors.kueue.x-k8s.io,clusterqueues.kueue.x-k8s.io,\
             localqueues.kueue.x-k8s.io,priorityclasses,persistentvolumes,persistentvolumeclaims",
            "-A",
            "-l",
            "a3ctl-blueprint=a3mega",
        ])
        .await;
    let mut found: Vec<String> = labelled
        .iter()
        .map(|o| {
            format!(
                "{}/{}/{}",
                o["kind"].as_str().unwrap(),
                o["metadata"]["namespace"].as_str().unwrap_or("-"),
                o["metadata"]["name"].as_str().unwrap()
            )
        })
        .collect();
    found.sort();
    let mut want: Vec<String> = (1..=8)
        .flat_map(|i| {
            [
                format!("Network/-/vpc{i}"),
                format!("GKENetworkParamSet/-/vpc{i}"),
            ]
        })
        .collect();
    want.extend(
        [
            "DaemonSet/kube-system/device-injector",
            "DaemonSet/kube-system/nccl-tcpxo-installer",
            "Topology/-/gke-default",
            "ResourceFlavor/-/a3mega",
            "ClusterQueue/-/a3-queue",
            "LocalQueue/default/a3-queue",
            "PriorityClass/-/very-low",
            "PriorityClass/-/low",
            "PriorityClass/-/medium",
            "PriorityClass/-/high",
            "PriorityClass/-/very-high",
            "PersistentVolume/-/a3mega-filestore",
            "PersistentVolumeClaim/default/a3mega-filestore",
            "PersistentVolume/-/gcs-my-project-a3mega-ckpt",
            "PersistentVolumeClaim/default/gcs-my-project-a3mega-ckpt",
        ]
        .map(String::from),
    );
    want.sort();
    assert_eq!(found, want);
    // The Filestore volume names the instance's real address, and its claim is bound.
    let filestore: Value = reqwest::get(format!(
        "{}/file/v1/projects/{P}/locations/us-central1-a/instances/a3mega-fs",
        cx.sim.base_url()
    ))
    .await
    .unwrap()
    .json()
    .await
    .unwrap();
    let pv = kubectl
        .items(&["persistentvolumes", "-l", "a3ctl-blueprint=a3mega"])
        .await;
    let fs_pv = pv
        .iter()
        .find(|v| v["metadata"]["name"] == "a3mega-filestore")
        .unwrap();
    assert_eq!(
        fs_pv["spec"]["csi"]["volumeAttributes"]["ip"],
        filestore["networks"][0]["ipAddresses"][0]
    );
    let claims = kubectl
        .items(&["persistentvolumeclaims", "-n", "default"])
        .await;
    assert!(
        claims.iter().all(|c| c["status"]["phase"] == "Bound"),
        "{claims:?}"
    );
    let daemonsets = kubectl.names(&["daemonsets", "-n", "kube-system"]).await;
    for ds in ["nccl-tcpxo-installer", "device-injector"] {
        assert!(daemonsets.iter().any(|d| d == ds), "{daemonsets:?}");
    }
    assert!(
        !daemonsets
            .iter()
            .any(|d| d == "nccl-tcpx-installer" || d == "nvidia-driver-installer"),
        "{daemonsets:?}"
    );
    let (ok, _, _) = kubectl
        .run(&["get", "configmap", "nccl-configmap", "-n", "kube-system"])
        .await;
    assert!(!ok, "A3 Mega has no TCPX nccl-configmap");

    let again = cx
        .run(&["plan", "blueprints/a3-mega.toml", "--detailed-exitcode"])
        .await
        .expect(0);
    assert!(again.stdout.contains("No changes."), "{}", again.stdout);

    // Behind a3ctl's back: one GPU network object goes.
    let (ok, out, err) = kubectl
        .run(&["delete", "networks.networking.gke.io", "vpc3"])
        .await;
    assert!(ok, "{out}\n{err}");
    let plan = cx
        .run(&["plan", "blueprints/a3-mega.toml", "--detailed-exitcode"])
        .await
        .expect(2);
    assert!(
        plan.stdout
            .contains("# k8s.network/-/vpc3 has been deleted"),
        "{}",
        plan.stdout
    );
    assert!(
        plan.stdout.contains("+ k8s.network/-/vpc3"),
        "{}",
        plan.stdout
    );
    assert!(
        plan.stdout
            .contains("Plan: 1 to add, 0 to change, 0 to destroy."),
        "{}",
        plan.stdout
    );
    cx.run(&["apply", "blueprints/a3-mega.toml", "--auto-approve"])
        .await
        .expect(0);
    assert_eq!(
        kubectl.names(&["networks.networking.gke.io"]).await,
        networks_with_default(8)
    );
    cx.run(&["plan", "blueprints/a3-mega.toml", "--detailed-exitcode"])
        .await
        .expect(0);

    // The cluster takes its objects along.
    cx.run(&["destroy", "blueprints/a3-mega.toml", "--auto-approve"])
        .await
        .expect(0);
    assert_eq!(clusters_left(&cx).await, 0);
    let inventory = cx.sim.inventory();
    assert!(
        inventory["kube"]["clusters"]
            .as_object()
            .is_none_or(|c| c.is_empty()),
        "{inventory}"
    );
    let state: Value =
        serde_json::from_slice(&std::fs::read(cx.path("state/a3mega.a3state.json")).unwrap())
            .unwrap();
    assert_eq!(state["resources"].as_object().unwrap().len(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a3_high_gets_four_gpu_networks_the_tcpx_installer_and_the_nccl_configmap() {
    let cx = TestContext::new().await;
    cx.unprotect("blueprints/a3-high.toml");
    cx.run(&["apply", "blueprints/a3-high.toml", "--auto-approve"])
        .await
        .expect(0);
    let kubectl = Kubectl::for_cluster(&cx, "a3high").await;
    assert_eq!(
        kubectl.names(&["networks.networking.gke.io"]).await,
        networks_with_default(4)
    );
    let params = kubectl
        .items(&["gkenetworkparamsets.networking.gke.io"])
        .await;
    assert_eq!(params.len(), 4);
    assert!(
        params.iter().any(|p| p["metadata"]["name"] == "vpc4"
            && p["spec"]["vpcSubnet"] == "a3high-gpunet-4-subnet")
    );
    let daemonsets = kubectl.items(&["daemonsets", "-n", "kube-system"]).await;
    let tcpx = daemonsets
        .iter()
        .find(|d| d["metadata"]["name"] == "nccl-tcpx-installer")
        .expect("the TCPX installer");
    assert_eq!(
        tcpx["spec"]["template"]["spec"]["initContainers"][0]["image"],
        "us-docker.pkg.dev/gce-ai-infra/gpudirect-tcpx/nccl-plugin-gpudirecttcpx-dev:v3.1.9"
    );
    assert!(
        daemonsets
            .iter()
            .any(|d| d["metadata"]["name"] == "device-injector")
    );
    assert!(
        !daemonsets
            .iter()
            .any(|d| d["metadata"]["name"] == "nccl-tcpxo-installer")
    );
    let (ok, out, err) = kubectl
        .run(&[
            "get",
            "configmap",
            "nccl-configmap",
            "-n",
            "kube-system",
            "-o",
            "json",
        ])
        .await;
    assert!(ok, "{out}\n{err}");
    let config: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(config["data"]["NCCL_GPUDIRECTTCPX_CTRL_DEV"], "eth0");
    assert_eq!(
        config["data"]["NCCL_GPUDIRECTTCPX_SOCKET_IFNAME"],
        "eth1,eth2,eth3,eth4"
    );

    cx.run(&["plan", "blueprints/a3-high.toml", "--detailed-exitcode"])
        .await
        .expect(0);
    cx.run(&["destroy", "blueprints/a3-high.toml", "--auto-approve"])
        .await
        .expect(0);
    assert_eq!(clusters_left(&cx).await, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_nccl_installer_is_rolled_out_before_the_gpu_pool_finishes() {
    // The order is read from real-time timings on a clock scaled to real time, so the scale
    // sets the margin: at 0.002 a GPU pool's create (5-15 simulated minutes) spans 0.6-1.8 s of
    // real time, against the installer's few requests (0.0005 left 0.15-0.45 s, which a loaded
    // machine overran).
    let cx = TestContext::with(SimConfig::realistic(0.002)).await;
    cx.run(&[
        "apply",
        "blueprints/a3-mega.toml",
        "--auto-approve",
        "--timings",
        "timings.json",
    ])
    .await
    .expect(0);
    let timings: Vec<Value> =
        serde_json::from_slice(&std::fs::read(cx.path("timings.json")).unwrap()).unwrap();
    let at = |addr: &str, field: &str| {
        timings
            .iter()
            .find(|t| t["address"] == addr)
            .unwrap_or_else(|| panic!("{addr} in {timings:?}"))[field]
            .as_u64()
            .unwrap()
    };
    let installer = "k8s.daemonset/kube-system/nccl-tcpxo-installer";
    assert!(at(installer, "start_ms") >= at("cluster.main", "end_ms"));
    assert!(
        at(installer, "end_ms") < at("node_pool.a3mega", "end_ms"),
        "the installer ({}..{} ms) must finish before the GPU pool ({}..{} ms)",
        at(installer, "start_ms"),
        at(installer, "end_ms"),
        at("node_pool.a3mega", "start_ms"),
        at("node_pool.a3mega", "end_ms"),
    );
    assert!(at("k8s.network/-/vpc8", "end_ms") < at("node_pool.a3mega", "end_ms"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_daemonset_driver_mode_the_cos_installer_gives_every_gpu_node_its_gpus() {
    let cx = TestContext::new().await;
    let text = std::fs::read_to_string(cx.path("blueprints/a3-high.toml")).unwrap();
    assert!(text.contains("driver = \"default\""));
    cx.write(
        "blueprints/a3-high.toml",
        &text.replace("driver = \"default\"", "driver = \"daemonset\""),
    );
    cx.run(&["apply", "blueprints/a3-high.toml", "--auto-approve"])
        .await
        .expect(0);
    let kubectl = Kubectl::for_cluster(&cx, "a3high").await;
    let daemonsets = kubectl.names(&["daemonsets", "-n", "kube-system"]).await;
    assert!(
        daemonsets.iter().any(|d| d == "nvidia-driver-installer"),
        "{daemonsets:?}"
    );
    // The simulator gives a node its GPUs once a driver installer is ready on it.
    let nodes = kubectl.items(&["nodes"]).await;
    let gpu_nodes: Vec<&Value> = nodes
        .iter()
        .filter(|n| {
            n["metadata"]["labels"]["cloud.google.com/gke-accelerator"] == "nvidia-h100-80gb"
        })
        .collect();
    assert_eq!(gpu_nodes.len(), 4);
    for n in gpu_nodes {
        assert_eq!(n["status"]["allocatable"]["nvidia.com/gpu"], "8", "{n}");
    }
    cx.run(&["plan", "blueprints/a3-high.toml", "--detailed-exitcode"])
        .await
        .expect(0);
}
