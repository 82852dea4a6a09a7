//! GKE's own DaemonSets in `kube-system`, driven by gcloud and watched with kubectl: which ones a
//! cluster runs follows its settings (Dataplane V2, Workload Identity, the CSI drivers), the GPU
//! device plugin runs only on GPU nodes, and every DaemonSet's pods are made per node, owned by
//! it, and follow the node pool's resizes.

use crate::gcloud_gpu_networking::{Kubectl, REGION, cluster, start};
use crate::gcloud_support::{Gcloud, PROJECT, main_network};
use std::collections::BTreeMap;

/// `kubectl -n kube-system get ds`: name → (DESIRED, READY).
async fn daemonsets(kubectl: &Kubectl) -> BTreeMap<String, (String, String)> {
    let out = kubectl
        .ok(&["-n", "kube-system", "get", "ds", "--no-headers"])
        .await;
    out.lines()
        .map(|line| {
            let cells: Vec<&str> = line.split_whitespace().collect();
            (
                cells[0].to_string(),
                (cells[1].to_string(), cells[3].to_string()),
            )
        })
        .collect()
}

fn counts(desired: &str, ready: &str) -> (String, String) {
    (desired.to_string(), ready.to_string())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kube_system_daemonsets_follow_the_cluster_settings() {
    let sim = start().await;
    let cli = Gcloud::new(&sim);
    main_network(&sim, PROJECT, REGION).await;
    cluster(&cli, "plain", &[]).await;
    let pool = format!("--workload-pool={PROJECT}.svc.id.goog");
    cluster(
        &cli,
        "full",
        &[
            "--enable-dataplane-v2",
            &pool,
            "--addons=GcsFuseCsiDriver,GcpFilestoreCsiDriver",
        ],
    )
    .await;
    sim.advance_secs(30.0);

    let plain = daemonsets(&Kubectl::new(&sim, "plain").await).await;
    let names: Vec<&str> = plain.keys().map(String::as_str).collect();
    assert_eq!(
        names,
        [
            "fluentbit-gke",
            "gke-metrics-agent",
            "kube-proxy",
            "netd",
            "nvidia-gpu-device-plugin-large-cos",
            "nvidia-gpu-device-plugin-large-ubuntu",
            "nvidia-gpu-device-plugin-medium-cos",
            "nvidia-gpu-device-plugin-medium-ubuntu",
            "nvidia-gpu-device-plugin-small-cos",
            "nvidia-gpu-device-plugin-small-ubuntu",
            "pdcsi-node",
        ]
    );
    // One node, no GPUs: node agents run on it, kube-proxy (a static pod on GKE) and the device
    // plugins nowhere.
    assert_eq!(plain["netd"], counts("1", "1"));
    assert_eq!(plain["pdcsi-node"], counts("1", "1"));
    assert_eq!(plain["kube-proxy"], counts("0", "0"));
    assert_eq!(
        plain["nvidia-gpu-device-plugin-large-cos"],
        counts("0", "0")
    );

    let full = daemonsets(&Kubectl::new(&sim, "full").await).await;
    for name in [
        "anetd",
        "filestore-node",
        "gcsfusecsi-node",
        "gke-metadata-server",
    ] {
        assert_eq!(full.get(name), Some(&counts("1", "1")), "{name}: {full:?}");
        assert!(!plain.contains_key(name), "{name}");
    }
    // Dataplane V2 replaces kube-proxy.
    assert!(!full.contains_key("kube-proxy"), "{full:?}");

    // The node selectors as GKE sets them.
    let wide = Kubectl::new(&sim, "full")
        .await
        .ok(&[
            "-n",
            "kube-system",
            "get",
            "ds",
            "gke-metadata-server",
            "netd",
            "-o",
            "wide",
        ])
        .await;
    assert!(
        wide.contains("beta.kubernetes.io/os=linux,iam.gke.io/gke-metadata-server-enabled=true"),
        "{wide}"
    );
    assert!(
        wide.contains("cloud.google.com/gke-netd-ready=true,kubernetes.io/os=linux"),
        "{wide}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_gpu_device_plugin_runs_on_gpu_nodes_and_a_resized_pool_gets_its_pods() {
    let sim = start().await;
    let cli = Gcloud::new(&sim);
    main_network(&sim, PROJECT, REGION).await;
    cluster(&cli, "c1", &[]).await;
    cli.ok(&[
        "container",
        "node-pools",
        "create",
        "a3",
        "--cluster=c1",
        "--location=us-central1",
        "--node-locations=us-central1-a",
        "--machine-type=a3-highgpu-8g",
        "--num-nodes=1",
        "--accelerator=type=nvidia-h100-80gb,count=8,gpu-driver-version=latest",
        "--reservation-affinity=none",
    ])
    .await;
    sim.advance_secs(5.0);
    let kubectl = Kubectl::new(&sim, "c1").await;
    let plugin = "nvidia-gpu-device-plugin-large-cos";
    let selector = format!("k8s-app={plugin}");
    // Before the pod is ready: made, bound to the GPU node, its containers creating.
    let pods = kubectl
        .json(&["-n", "kube-system", "get", "pods", "-l", &selector])
        .await;
    let items = pods["items"].as_array().unwrap();
    assert_eq!(items.len(), 1, "{pods}");
    assert_eq!(items[0]["status"]["phase"], "Pending", "{}", items[0]);
    sim.advance_secs(30.0);

    let gpu_nodes = kubectl
        .ok(&[
            "get",
            "nodes",
            "-l",
            "cloud.google.com/gke-accelerator",
            "-o",
            "name",
        ])
        .await;
    let gpu_nodes: Vec<&str> = gpu_nodes
        .lines()
        .map(|l| l.trim_start_matches("node/"))
        .collect();
    assert_eq!(gpu_nodes.len(), 1);
    // `kubectl get pods -o wide`: the plugin's one pod Running on the GPU node, owned by its
    // DaemonSet; netd on both nodes; no other device plugin anywhere.
    let wide = kubectl
        .ok(&[
            "-n",
            "kube-system",
            "get",
            "pods",
            "-o",
            "wide",
            "--no-headers",
        ])
        .await;
    let rows: Vec<Vec<&str>> = wide
        .lines()
        .map(|l| l.split_whitespace().collect())
        .collect();
    let plugin_rows: Vec<&Vec<&str>> = rows
        .iter()
        .filter(|r| r[0].starts_with("nvidia-gpu-device-plugin"))
        .collect();
    assert_eq!(plugin_rows.len(), 1, "{wide}");
    let row = plugin_rows[0];
    assert!(row[0].starts_with(&format!("{plugin}-")), "{wide}");
    assert_eq!(
        (row[1], row[2], row[6]),
        ("2/2", "Running", gpu_nodes[0]),
        "{wide}"
    );
    let netd_nodes: Vec<&str> = rows
        .iter()
        .filter(|r| r[0].starts_with("netd-"))
        .map(|r| r[6])
        .collect();
    assert_eq!(netd_nodes.len(), 2, "{wide}");
    assert!(netd_nodes.contains(&gpu_nodes[0]), "{wide}");
    let pod = kubectl
        .json(&["-n", "kube-system", "get", "pod", row[0]])
        .await;
    assert_eq!(pod["metadata"]["ownerReferences"][0]["kind"], "DaemonSet");
    assert_eq!(pod["metadata"]["ownerReferences"][0]["name"], plugin);
    assert_eq!(pod["metadata"]["labels"]["pod-template-generation"], "1");
    assert_eq!(
        pod["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
            [0]["matchFields"][0]["values"][0],
        gpu_nodes[0]
    );

    // A resize adds a GPU node, and the node its pod.
    cli.ok(&[
        "container",
        "clusters",
        "resize",
        "c1",
        "--node-pool=a3",
        "--location=us-central1",
        "--num-nodes=2",
        "--quiet",
    ])
    .await;
    sim.advance_secs(30.0);
    let status = kubectl
        .json(&["-n", "kube-system", "get", "ds", plugin])
        .await["status"]
        .clone();
    assert_eq!(
        (
            &status["desiredNumberScheduled"],
            &status["numberReady"],
            &status["updatedNumberScheduled"]
        ),
        (&2.into(), &2.into(), &2.into()),
        "{status}"
    );
    let pods = kubectl
        .json(&["-n", "kube-system", "get", "pods", "-l", &selector])
        .await;
    let mut nodes: Vec<&str> = pods["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["status"]["phase"] == "Running")
        .map(|p| p["spec"]["nodeName"].as_str().unwrap())
        .collect();
    nodes.sort();
    nodes.dedup();
    assert_eq!(nodes.len(), 2, "{pods}");

    // Shrunk again: the pod of the node that went goes with it.
    cli.ok(&[
        "container",
        "clusters",
        "resize",
        "c1",
        "--node-pool=a3",
        "--location=us-central1",
        "--num-nodes=1",
        "--quiet",
    ])
    .await;
    sim.advance_secs(600.0);
    let pods = kubectl
        .json(&["-n", "kube-system", "get", "pods", "-l", &selector])
        .await;
    assert_eq!(pods["items"].as_array().unwrap().len(), 1, "{pods}");
}

/// `kubectl -n kube-system get pods -l k8s-app=netd`: (name, phase) of each.
async fn netd_pods(kubectl: &Kubectl) -> Vec<(String, String)> {
    let pods = kubectl
        .json(&["-n", "kube-system", "get", "pods", "-l", "k8s-app=netd"])
        .await;
    pods["items"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|p| {
            (
                p["metadata"]["name"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
                p["status"]["phase"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
            )
        })
        .collect()
}

/// The DaemonSet pass is skipped while nothing it reads has moved (the pods settled): a pod a
/// client deletes then is still made again, under its name, running.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_settled_daemonset_pod_deleted_by_a_client_comes_back() {
    let sim = start().await;
    let cli = Gcloud::new(&sim);
    main_network(&sim, PROJECT, REGION).await;
    cluster(&cli, "plain", &[]).await;
    sim.advance_secs(30.0);
    let kubectl = Kubectl::new(&sim, "plain").await;
    let before = netd_pods(&kubectl).await;
    assert_eq!(before.len(), 1, "{before:?}");
    assert_eq!(before[0].1, "Running", "{before:?}");
    // Settled: later passes at later times change nothing.
    sim.advance_secs(60.0);
    assert_eq!(netd_pods(&kubectl).await, before);
    kubectl
        .ok(&[
            "-n",
            "kube-system",
            "delete",
            "pod",
            &before[0].0,
            "--wait=false",
        ])
        .await;
    assert_eq!(netd_pods(&kubectl).await, before);
}
