//! kubectl against Kueue's ResourceFlavors in a simulated cluster, with the simulator's v0.17.1
//! release (the version a3ctl pins): what Kueue enforces when a flavor changes or goes — its CRD's
//! validation rules (a flavor with a topology keeps its node labels, tolerations and topology) and
//! the `kueue.x-k8s.io/resource-in-use` finalizer (a flavor stays while a ClusterQueue lists it).

use crate::kube_support;

use kube_support::{latency, node, start};

fn flavor(labels: &str, toleration: &str) -> String {
    format!(
        "apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata:
  name: a3mega
spec:
  nodeLabels:
    {labels}
    cloud.google.com/gke-accelerator: nvidia-h100-mega-80gb
  topologyName: gke-default
  tolerations:
  - key: {toleration}
    operator: Exists
    effect: NoSchedule
"
    )
}

fn queue(flavor: &str) -> String {
    format!(
        "apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata:
  name: a3-queue
spec:
  namespaceSelector: {{}}
  resourceGroups:
  - coveredResources: [nvidia.com/gpu]
    flavors:
    - name: {flavor}
      resources:
      - name: nvidia.com/gpu
        nominalQuota: 16
"
    )
}

// See: issue 25 (GPUs are scarce: Kueue across a pool move).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_topology_flavor_keeps_its_node_labels_and_stays_while_a_cluster_queue_lists_it() {
    let cluster = start(latency(&[]), true).await;
    cluster.set_pool(
        "default-pool",
        vec![node("gke-c1-default-0", "default-pool", 0, false)],
    );
    let manifests = cluster.dir.path().join("kueue.yaml");
    std::fs::write(
        &manifests,
        a3ctl_sim::releases::kueue_manifests("v0.17.1").unwrap(),
    )
    .unwrap();
    cluster
        .kubectl_ok(&["apply", "--server-side", "-f", manifests.to_str().unwrap()])
        .await;
    cluster.sim.advance_secs(1.0);
    cluster
        .kubectl_ok(&[
            "rollout",
            "status",
            "deployment/kueue-controller-manager",
            "-n",
            "kueue-system",
        ])
        .await;

    let pool_label = "a3ctl.dev/pool: a3mega";
    let (ok, out, err) = cluster
        .kubectl_stdin(
            &["apply", "--server-side", "-f", "-"],
            Some(&flavor(pool_label, "nvidia.com/gpu")),
        )
        .await;
    assert!(ok, "{out}\n{err}");
    // Kueue's defaulting webhook added its finalizer.
    let finalizers = cluster
        .kubectl_ok(&[
            "get",
            "resourceflavor",
            "a3mega",
            "-o",
            "jsonpath={.metadata.finalizers}",
        ])
        .await;
    assert_eq!(finalizers, "[\"kueue.x-k8s.io/resource-in-use\"]");

    // Other node labels, or other tolerations: refused by the CRD's rules.
    let (ok, _, err) = cluster
        .kubectl_stdin(
            &["apply", "--server-side", "-f", "-"],
            Some(&flavor(
                "cloud.google.com/gke-nodepool: a3mega-2",
                "nvidia.com/gpu",
            )),
        )
        .await;
    assert!(!ok);
    assert!(
        err.contains(
            "The ResourceFlavor \"a3mega\" is invalid: spec: Invalid value: \"object\": nodeLabels are immutable when topologyName is set"
        ),
        "{err}"
    );
    let (ok, _, err) = cluster
        .kubectl_stdin(
            &["apply", "--server-side", "-f", "-"],
            Some(&flavor(pool_label, "example.com/other")),
        )
        .await;
    assert!(!ok);
    assert!(
        err.contains("tolerations are immutable when topologyName is set"),
        "{err}"
    );
    let labels = cluster
        .kubectl_ok(&[
            "get",
            "resourceflavor",
            "a3mega",
            "-o",
            "jsonpath={.spec.nodeLabels}",
        ])
        .await;
    assert!(labels.contains("a3ctl.dev/pool"), "{labels}");

    // Listed by a ClusterQueue, a deleted flavor stays, Terminating.
    cluster
        .kubectl_stdin(
            &["apply", "--server-side", "-f", "-"],
            Some(&queue("a3mega")),
        )
        .await;
    let out = cluster
        .kubectl_ok(&["delete", "resourceflavor", "a3mega", "--wait=false"])
        .await;
    assert!(out.contains("deleted"), "{out}");
    cluster.sim.advance_secs(60.0);
    let deleted_at = cluster
        .kubectl_ok(&[
            "get",
            "resourceflavor",
            "a3mega",
            "-o",
            "jsonpath={.metadata.deletionTimestamp}",
        ])
        .await;
    assert!(!deleted_at.is_empty(), "still there, being deleted");
    // The same name cannot be made anew meanwhile.
    let (ok, _, err) = cluster
        .kubectl_stdin(
            &["create", "-f", "-"],
            Some(&flavor(
                "cloud.google.com/gke-nodepool: a3mega",
                "nvidia.com/gpu",
            )),
        )
        .await;
    assert!(!ok);
    assert!(err.contains("AlreadyExists"), "{err}");

    // Once the queue lists another flavor, Kueue lets it go; then it can be made with new labels.
    cluster
        .kubectl_stdin(
            &["apply", "--server-side", "-f", "-"],
            Some(&queue("a3mega-held")),
        )
        .await;
    let (ok, _, err) = cluster.kubectl(&["get", "resourceflavor", "a3mega"]).await;
    assert!(!ok);
    assert!(err.contains("NotFound"), "{err}");
    let (ok, out, err) = cluster
        .kubectl_stdin(
            &["create", "-f", "-"],
            Some(&flavor(
                "cloud.google.com/gke-nodepool: a3mega",
                "nvidia.com/gpu",
            )),
        )
        .await;
    assert!(ok, "{out}\n{err}");
}
