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

/// A Kueue ClusterQueue `name` in `cohort` with `gpus` of flavor `a3mega` (`limits`: extra fields
/// of the GPU resource, like `lendingLimit: 4`), taking Jobs from `default`, and its LocalQueue
/// there.
fn cohort_queue(name: &str, cohort: &str, gpus: u32, limits: &str) -> String {
    let cohort = if cohort.is_empty() {
        String::new()
    } else {
        format!("  cohortName: {cohort}\n")
    };
    format!(
        "apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata:
  name: {name}
spec:
{cohort}  namespaceSelector:
    matchLabels:
      kubernetes.io/metadata.name: default
  resourceGroups:
  - coveredResources: [nvidia.com/gpu]
    flavors:
    - name: a3mega
      resources:
      - name: nvidia.com/gpu
        nominalQuota: {gpus}
        {limits}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata:
  name: {name}
  namespace: default
spec:
  clusterQueue: {name}
"
    )
}

/// A Job in `default` for LocalQueue `queue` whose one pod asks for `gpus` GPUs.
fn gpu_job(name: &str, queue: &str, gpus: u32) -> String {
    format!(
        "apiVersion: batch/v1
kind: Job
metadata:
  name: {name}
  namespace: default
  labels:
    kueue.x-k8s.io/queue-name: {queue}
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: main
        image: busybox
        resources:
          limits:
            nvidia.com/gpu: {gpus}
"
    )
}

// See: issue 26 item 11 (the queues teams declare: cohorts, borrowing and lending).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn queues_of_a_cohort_borrow_unused_quota_within_their_limits_and_a_lone_queue_does_not() {
    let cluster = start(latency(&[]), true).await;
    cluster.set_pool(
        "default-pool",
        vec![node("gke-c1-default-0", "default-pool", 0, false)],
    );
    let manifests = a3ctl_sim::releases::kueue_manifests("v0.17.1").unwrap();
    cluster
        .kubectl_stdin(&["apply", "--server-side", "-f", "-"], Some(&manifests))
        .await;
    cluster.sim.advance_secs(5.0);
    let objects = [
        flavor("a3ctl.dev/pool: a3mega", "nvidia.com/gpu"),
        // team-a lends nothing beyond 4 of its 8; team-b may borrow at most 2.
        cohort_queue("team-a", "research", 8, "lendingLimit: 4"),
        cohort_queue("team-b", "research", 8, "borrowingLimit: 2"),
        cohort_queue("team-c", "research", 0, ""),
        cohort_queue("alone", "", 8, ""),
    ];
    for object in objects {
        let (ok, out, err) = cluster
            .kubectl_stdin(&["apply", "--server-side", "-f", "-"], Some(&object))
            .await;
        assert!(ok, "{out}\n{err}");
    }
    let suspended = |name: &'static str| {
        let cluster = &cluster;
        async move {
            cluster
                .kubectl_ok(&["get", "job", name, "-o", "jsonpath={.spec.suspend}"])
                .await
        }
    };
    let submit = |name: &'static str, queue: &'static str, gpus: u32| {
        let cluster = &cluster;
        async move {
            let (ok, out, err) = cluster
                .kubectl_stdin(&["apply", "-f", "-"], Some(&gpu_job(name, queue, gpus)))
                .await;
            assert!(ok, "{out}\n{err}");
            cluster.sim.advance_secs(1.0);
        }
    };

    // team-b borrows: 8 of its own and 2 of team-a's lendable 4, no more.
    submit("b-11", "team-b", 11).await;
    assert_eq!(suspended("b-11").await, "true", "past its borrowing limit");
    submit("b-10", "team-b", 10).await;
    assert_eq!(suspended("b-10").await, "false", "8 own + 2 borrowed");
    // team-c has no quota of its own: it borrows what the cohort has left (2 of team-a's
    // lendable 4), not team-a's 4 kept for itself.
    submit("c-3", "team-c", 3).await;
    assert_eq!(suspended("c-3").await, "true");
    submit("c-2", "team-c", 2).await;
    assert_eq!(suspended("c-2").await, "false");
    // team-a still has the 4 it keeps.
    submit("a-4", "team-a", 4).await;
    assert_eq!(suspended("a-4").await, "false");
    submit("a-1", "team-a", 1).await;
    assert_eq!(suspended("a-1").await, "true", "the cohort is used up");
    // Without a cohort a queue takes its nominal quota only.
    submit("alone-9", "alone", 9).await;
    assert_eq!(suspended("alone-9").await, "true");
    let queue = cluster
        .kubectl_ok(&[
            "get",
            "clusterqueue",
            "team-b",
            "-o",
            "jsonpath={.status.admittedWorkloads}/{.status.pendingWorkloads}",
        ])
        .await;
    assert_eq!(queue, "1/1");

    // A queue whose namespaceSelector does not select the Job's namespace admits nothing.
    let elsewhere = cohort_queue("elsewhere", "", 8, "").replace(
        "kubernetes.io/metadata.name: default",
        "kubernetes.io/metadata.name: team-x",
    );
    cluster
        .kubectl_stdin(&["apply", "--server-side", "-f", "-"], Some(&elsewhere))
        .await;
    submit("x-1", "elsewhere", 1).await;
    assert_eq!(suspended("x-1").await, "true");
}
