//! The Kubernetes surface a user's code touches, driven with kubectl: `/version/` with the slash
//! (what the official Python client requests), `events.k8s.io/v1` sharing the core Events'
//! storage, GKE's node labels and GKE's managed DaemonSets in `kube-system`.

use crate::kube_support::{Cluster, latency, node, start};
use serde_json::{Value, json};

async fn json(cluster: &Cluster, args: &[&str]) -> Value {
    let mut all = args.to_vec();
    all.extend(["-o", "json"]);
    serde_json::from_str(&cluster.kubectl_ok(&all).await).unwrap()
}

async fn cluster() -> Cluster {
    let cluster = start(latency(&[]), false).await;
    cluster.set_pool(
        "default-pool",
        vec![node("gke-c1-default-0", "default-pool", 0, false)],
    );
    cluster
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn version_answers_with_and_without_the_slash() {
    let cluster = cluster().await;
    for path in ["/version", "/version/"] {
        let body: Value =
            serde_json::from_str(&cluster.kubectl_ok(&["get", "--raw", path]).await).unwrap();
        assert_eq!(body["gitVersion"], "v1.32.4-gke.1767000", "{path}");
        assert_eq!(body["minor"], "32");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn events_are_served_through_events_k8s_io_from_the_core_storage() {
    let cluster = cluster().await;
    let resources = cluster
        .kubectl_ok(&["api-resources", "--api-group=events.k8s.io"])
        .await;
    assert!(
        resources.contains("events") && resources.contains("events.k8s.io/v1"),
        "{resources}"
    );
    cluster
        .kubectl_ok(&["run", "web", "--image=nginx", "--restart=Never"])
        .await;
    cluster.sim.advance_secs(1.0);
    // The scheduler's and the kubelet's events, in the events.k8s.io shape.
    let list = json(&cluster, &["get", "events.v1.events.k8s.io"]).await;
    let items = list["items"].as_array().unwrap();
    assert!(
        items.iter().all(|e| e["apiVersion"] == "events.k8s.io/v1"),
        "{list:#}"
    );
    let reasons: Vec<&str> = items.iter().filter_map(|e| e["reason"].as_str()).collect();
    for reason in ["Scheduled", "Pulling", "Pulled", "Created", "Started"] {
        assert!(reasons.contains(&reason), "{reasons:?}");
    }
    let scheduled = items.iter().find(|e| e["reason"] == "Scheduled").unwrap();
    assert_eq!(scheduled["regarding"]["name"], "web");
    assert_eq!(
        scheduled["note"],
        "Successfully assigned default/web to gke-c1-default-0"
    );
    assert_eq!(scheduled["reportingController"], "default-scheduler");
    assert!(scheduled.get("message").is_none());
    let started = items.iter().find(|e| e["reason"] == "Started").unwrap();
    assert_eq!(started["deprecatedSource"]["component"], "kubelet");
    // The same objects through core v1, and through the table printer.
    let name = scheduled["metadata"]["name"].as_str().unwrap();
    let core = json(&cluster, &["get", "events", name]).await;
    assert_eq!(core["apiVersion"], "v1");
    assert_eq!(
        core["message"],
        "Successfully assigned default/web to gke-c1-default-0"
    );
    let table = cluster
        .kubectl_ok(&["get", "events.v1.events.k8s.io"])
        .await;
    assert!(
        table.contains("Successfully assigned default/web"),
        "{table}"
    );

    // One created through events.k8s.io reads back through core v1 ...
    let event = json!({"apiVersion": "events.k8s.io/v1", "kind": "Event",
        "metadata": {"name": "mine", "namespace": "default"},
        "eventTime": scheduled["eventTime"], "reportingController": "example.com/ctl",
        "reportingInstance": "ctl-0", "action": "Check", "reason": "Checked", "type": "Normal",
        "note": "all good", "regarding": {"kind": "Pod", "name": "web", "namespace": "default"}});
    let (ok, out, err) = cluster
        .kubectl_stdin(&["create", "-f", "-"], Some(&event.to_string()))
        .await;
    assert!(ok, "{out}{err}");
    let core = json(&cluster, &["get", "events", "mine"]).await;
    assert_eq!(
        (&core["message"], &core["involvedObject"]["name"]),
        (&json!("all good"), &json!("web"))
    );
    // ... and one without what events.k8s.io/v1 requires is refused.
    let mut bad = event.clone();
    bad["metadata"]["name"] = json!("bad");
    bad.as_object_mut().unwrap().remove("reportingController");
    let (ok, _, err) = cluster
        .kubectl_stdin(&["create", "-f", "-"], Some(&bad.to_string()))
        .await;
    assert!(!ok);
    assert!(
        err.contains("The Event \"bad\" is invalid: reportingController: Required value"),
        "{err}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nodes_carry_gke_labels() {
    let cluster = cluster().await;
    let out = cluster
        .kubectl_ok(&[
            "get",
            "nodes",
            "-L",
            "cloud.google.com/gke-container-runtime,cloud.google.com/gke-os-distribution,cloud.google.com/gke-boot-disk,cloud.google.com/gke-cpu-scaling-level,cloud.google.com/gke-max-pods-per-node,node.kubernetes.io/instance-type,topology.kubernetes.io/zone",
        ])
        .await;
    let header: Vec<&str> = out.lines().next().unwrap().split_whitespace().collect();
    assert_eq!(
        header[5..],
        [
            "GKE-CONTAINER-RUNTIME",
            "GKE-OS-DISTRIBUTION",
            "GKE-BOOT-DISK",
            "GKE-CPU-SCALING-LEVEL",
            "GKE-MAX-PODS-PER-NODE",
            "INSTANCE-TYPE",
            "ZONE"
        ]
    );
    let row: Vec<&str> = out.lines().nth(1).unwrap().split_whitespace().collect();
    assert_eq!(
        row[5..],
        [
            "containerd",
            "cos",
            "pd-balanced",
            "8",
            "110",
            "e2-standard-8",
            "us-central1-a"
        ],
        "{out}"
    );
}
