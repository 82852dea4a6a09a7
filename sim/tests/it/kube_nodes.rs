//! Nodes and DaemonSets: Node objects for GKE's node pools, DaemonSet status over nodes selected
//! by affinity and tolerations (a GPU-only DaemonSet lands only on GPU nodes), readiness after
//! the delay, and `nvidia.com/gpu` allocatable only once a driver is installed — by GKE (managed
//! driver) or by the COS driver-installer DaemonSet. kubectl sees the same through `get`.

use crate::kube_support;

use kube_support::{latency, node, start};
use serde_json::{Value, json};

fn daemonset(name: &str, pod_spec: Value) -> Value {
    let mut template_spec = pod_spec;
    if template_spec.get("containers").is_none() {
        template_spec["containers"] = json!([{"name": "pause", "image": "gke.gcr.io/pause:3.8"}]);
    }
    json!({"apiVersion": "apps/v1", "kind": "DaemonSet",
        "metadata": {"name": name, "namespace": "kube-system"},
        "spec": {"selector": {"matchLabels": {"app": name}},
            "template": {"metadata": {"labels": {"app": name}}, "spec": template_spec}}})
}

/// The COS driver installer as published (affinity and image as in the recipe).
fn driver_installer() -> Value {
    daemonset(
        "nvidia-driver-installer",
        json!({
            "priorityClassName": "system-node-critical",
            "hostNetwork": true, "hostPID": true,
            "tolerations": [{"operator": "Exists"}],
            "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{
                "matchExpressions": [
                    {"key": "cloud.google.com/gke-accelerator", "operator": "Exists"},
                    {"key": "cloud.google.com/gke-gpu-driver-version", "operator": "DoesNotExist"},
                    {"key": "cloud.google.com/gke-confidential-nodes-instance-type", "operator": "DoesNotExist"}]}]}}},
            "initContainers": [{"name": "nvidia-driver-installer", "image": "cos-nvidia-installer:fixed", "imagePullPolicy": "Never"}],
        }),
    )
}

async fn apply(cluster: &kube_support::Cluster, object: &Value) -> Value {
    let name = object["metadata"]["name"].as_str().unwrap();
    let response = cluster
        .http()
        .patch(cluster.url(&format!(
            "/apis/apps/v1/namespaces/kube-system/daemonsets/{name}?fieldManager=test"
        )))
        .bearer_auth("t")
        .header("Content-Type", "application/apply-patch+yaml")
        .body(object.to_string())
        .send()
        .await
        .unwrap();
    assert!(response.status().is_success());
    response.json().await.unwrap()
}

async fn get(cluster: &kube_support::Cluster, path: &str) -> Value {
    cluster
        .http()
        .get(cluster.url(path))
        .bearer_auth("t")
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap()
}

async fn ds_status(cluster: &kube_support::Cluster, name: &str) -> Value {
    get(
        cluster,
        &format!("/apis/apps/v1/namespaces/kube-system/daemonsets/{name}"),
    )
    .await["status"]
        .clone()
}

#[tokio::test]
async fn daemonsets_follow_affinity_and_taints_and_install_gpu_drivers() {
    let cluster = start(
        latency(&[
            ("kube.daemonset.ready", 20.0),
            ("kube.driver.installed", 90.0),
        ]),
        false,
    )
    .await;
    cluster.set_pool(
        "default-pool",
        vec![node("cpu-0", "default-pool", 0, false)],
    );
    cluster.set_pool(
        "gpu",
        vec![
            node("gpu-0", "gpu", 8, false),
            node("gpu-1", "gpu", 8, false),
        ],
    );
    cluster.set_pool("managed", vec![node("managed-0", "managed", 8, true)]);

    let gpu0 = get(&cluster, "/api/v1/nodes/gpu-0").await;
    assert_eq!(
        gpu0["metadata"]["labels"]["cloud.google.com/gke-nodepool"],
        "gpu"
    );
    assert_eq!(
        gpu0["metadata"]["labels"]["node.kubernetes.io/instance-type"],
        "a3-megagpu-8g"
    );
    assert_eq!(
        gpu0["spec"]["taints"][0],
        json!({"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"})
    );
    assert_eq!(
        gpu0["status"]["nodeInfo"]["kubeletVersion"],
        "v1.32.4-gke.1767000"
    );
    assert!(
        gpu0["status"]["allocatable"]
            .get("nvidia.com/gpu")
            .is_none()
    );
    assert!(gpu0["status"]["conditions"][0]["type"] == "Ready");

    // No tolerations: only the untainted CPU node. Tolerate all: every node.
    apply(&cluster, &daemonset("plain", json!({}))).await;
    apply(
        &cluster,
        &daemonset(
            "everywhere",
            json!({"tolerations": [{"operator": "Exists"}]}),
        ),
    )
    .await;
    // GPU-only by affinity + GPU toleration (like the NRI device injector).
    let gpu_only = daemonset(
        "gpu-only",
        json!({
        "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
        "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{
            "matchExpressions": [{"key": "cloud.google.com/gke-accelerator", "operator": "In", "values": ["nvidia-h100-mega-80gb"]}]}]}}}}),
    );
    apply(&cluster, &gpu_only).await;
    apply(&cluster, &driver_installer()).await;

    let status = ds_status(&cluster, "gpu-only").await;
    assert_eq!(status["desiredNumberScheduled"], 3);
    assert_eq!(status["numberReady"], 0);
    assert_eq!(status["numberUnavailable"], 3);
    assert_eq!(status["observedGeneration"], 1);
    assert_eq!(
        ds_status(&cluster, "plain").await["desiredNumberScheduled"],
        1
    );
    assert_eq!(
        ds_status(&cluster, "everywhere").await["desiredNumberScheduled"],
        4
    );
    // The installer skips the node whose driver GKE manages.
    assert_eq!(
        ds_status(&cluster, "nvidia-driver-installer").await["desiredNumberScheduled"],
        2
    );

    cluster.sim.advance_secs(21.0);
    let status = ds_status(&cluster, "gpu-only").await;
    assert_eq!(status["numberReady"], 3);
    assert_eq!(status["numberAvailable"], 3);
    assert_eq!(status["updatedNumberScheduled"], 3);
    assert!(status.get("numberUnavailable").is_none());
    // The installer is ready on gpu-0/1: GPUs become allocatable there; not yet on the managed node.
    let gpu0 = get(&cluster, "/api/v1/nodes/gpu-0").await;
    assert_eq!(gpu0["status"]["allocatable"]["nvidia.com/gpu"], "8");
    let managed = get(&cluster, "/api/v1/nodes/managed-0").await;
    assert!(
        managed["status"]["allocatable"]
            .get("nvidia.com/gpu")
            .is_none()
    );
    assert_eq!(
        managed["metadata"]["labels"]["cloud.google.com/gke-gpu-driver-version"],
        "default"
    );
    cluster.sim.advance_secs(70.0);
    let managed = get(&cluster, "/api/v1/nodes/managed-0").await;
    assert_eq!(managed["status"]["allocatable"]["nvidia.com/gpu"], "8");
    assert_eq!(managed["status"]["capacity"]["nvidia.com/gpu"], "8");

    // A new generation: not updated until its pods are ready again, old pods keep serving.
    let mut changed = gpu_only.clone();
    changed["spec"]["template"]["spec"]["containers"][0]["image"] = json!("gke.gcr.io/pause:3.9");
    let applied = apply(&cluster, &changed).await;
    assert_eq!(applied["metadata"]["generation"], 2);
    let status = ds_status(&cluster, "gpu-only").await;
    assert_eq!(status["observedGeneration"], 2);
    assert_eq!(status["numberReady"], 3);
    assert!(status.get("updatedNumberScheduled").is_none());
    cluster.sim.advance_secs(21.0);
    assert_eq!(
        ds_status(&cluster, "gpu-only").await["updatedNumberScheduled"],
        3
    );

    // A pool going away takes its Node objects and pods along.
    cluster.set_pool("gpu", vec![]);
    assert_eq!(
        ds_status(&cluster, "gpu-only").await["desiredNumberScheduled"],
        1
    );
    let (ok, out, err) = cluster.kubectl(&["get", "nodes", "-o", "name"]).await;
    assert!(ok, "{err}");
    assert_eq!(out, "node/cpu-0\nnode/managed-0\n");
    let out = cluster
        .kubectl_ok(&["get", "ds", "-n", "kube-system"])
        .await;
    assert!(out.contains("gpu-only"), "{out}");
    let inventory = cluster.sim.inventory();
    assert_eq!(
        inventory["kube"]["clusters"][kube_support::KEY]["node_count"],
        2
    );
    assert!(
        inventory["kube"]["clusters"][kube_support::KEY]["objects"]
            .as_array()
            .unwrap()
            .contains(&json!("DaemonSet/kube-system/gpu-only"))
    );
}

/// `kubectl cordon` and `kubectl taint` on GKE's nodes stay there as the simulated time moves on
/// (GKE's controller rewrites the rest of the node), bring the cordon's taint, show in `get nodes`,
/// and go with `uncordon` and `taint ...-`; GKE's own GPU taint stays throughout.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_clients_cordon_and_taints_stay_on_gke_nodes_until_lifted() {
    let cluster = start(latency(&[]), false).await;
    cluster.set_pool(
        "gpu",
        vec![
            node("gke-c1-gpu-0", "gpu", 8, true),
            node("gke-c1-gpu-1", "gpu", 8, true),
        ],
    );
    let taints = |name: &'static str| {
        let cluster = &cluster;
        async move {
            cluster
                .kubectl_ok(&[
                    "get",
                    "node",
                    name,
                    "-o",
                    "jsonpath={.spec.unschedulable} {range .spec.taints[*]}{.key}={.value}:{.effect} {end}",
                ])
                .await
        }
    };
    assert_eq!(
        taints("gke-c1-gpu-0").await.trim(),
        "nvidia.com/gpu=present:NoSchedule"
    );

    let out = cluster.kubectl_ok(&["cordon", "gke-c1-gpu-0"]).await;
    assert!(out.contains("node/gke-c1-gpu-0 cordoned"), "{out}");
    let out = cluster
        .kubectl_ok(&[
            "taint",
            "nodes",
            "gke-c1-gpu-1",
            "maintenance=soon:NoExecute",
        ])
        .await;
    assert!(out.contains("node/gke-c1-gpu-1 tainted"), "{out}");
    cluster.sim.advance_secs(600.0);
    assert_eq!(
        taints("gke-c1-gpu-0").await.trim(),
        "true nvidia.com/gpu=present:NoSchedule node.kubernetes.io/unschedulable=:NoSchedule"
    );
    assert_eq!(
        taints("gke-c1-gpu-1").await.trim(),
        "nvidia.com/gpu=present:NoSchedule maintenance=soon:NoExecute"
    );
    let out = cluster.kubectl_ok(&["get", "nodes"]).await;
    let status = |name: &str| {
        out.lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().nth(1))
            .map(str::to_string)
    };
    assert_eq!(
        status("gke-c1-gpu-0").as_deref(),
        Some("Ready,SchedulingDisabled"),
        "{out}"
    );
    assert_eq!(status("gke-c1-gpu-1").as_deref(), Some("Ready"), "{out}");

    // Lifted: GKE's own spec again.
    cluster.kubectl_ok(&["uncordon", "gke-c1-gpu-0"]).await;
    cluster
        .kubectl_ok(&["taint", "nodes", "gke-c1-gpu-1", "maintenance-"])
        .await;
    cluster.sim.advance_secs(600.0);
    for name in ["gke-c1-gpu-0", "gke-c1-gpu-1"] {
        assert_eq!(
            taints(name).await.trim(),
            "nvidia.com/gpu=present:NoSchedule",
            "{name}"
        );
    }
}
