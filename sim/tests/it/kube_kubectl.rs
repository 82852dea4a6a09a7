//! kubectl 1.32 against a simulated cluster: server-side apply of the Kueue v0.12.2 release
//! manifests, CRDs established, the fail-closed admission webhooks while the Kueue controller
//! has nowhere to run, then the controller rolling out once a node it tolerates exists, and
//! create/get/list/delete of Kueue custom resources.

use crate::kube_support;

use kube_support::{latency, node, start};
use std::time::Duration;

/// `../shared/reference/kueue/...` beside the project (found from the crate upwards, so the test
/// also runs from a worktree nested one level deeper).
fn kueue_manifests() -> String {
    let relative = "shared/reference/kueue/kueue-v0.12.2-manifests.yaml";
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .map(|dir| dir.join(relative))
        .find(|path| path.exists())
        .expect("the Kueue manifests are in ../shared/reference/kueue")
        .to_string_lossy()
        .into_owned()
}

const FLAVOR: &str = "apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata:
  name: a3-mega
spec:
  nodeLabels:
    cloud.google.com/gke-accelerator: nvidia-h100-mega-80gb
  tolerations:
  - key: nvidia.com/gpu
    operator: Exists
    effect: NoSchedule
";

const QUEUES: &str = "apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata:
  name: a3-mega
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [nvidia.com/gpu]
    flavors:
    - name: a3-mega
      resources:
      - name: nvidia.com/gpu
        nominalQuota: 16
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata:
  name: a3-mega
  namespace: default
spec:
  clusterQueue: a3-mega
";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kueue_manifests_apply_and_custom_resources_work_once_the_controller_is_available() {
    let cluster = start(
        latency(&[
            ("kube.crd.established", 2.0),
            ("kube.deployment.available", 30.0),
            ("kube.webhook.ready", 10.0),
        ]),
        true,
    )
    .await;
    // Only GPU nodes at first: their taint keeps the Kueue controller off them.
    cluster.set_pool("gpu", vec![node("gke-c1-gpu-0", "gpu", 8, true)]);

    let out = cluster
        .kubectl_ok(&["apply", "--server-side", "-f", &kueue_manifests()])
        .await;
    assert!(
        out.contains("customresourcedefinition.apiextensions.k8s.io/resourceflavors.kueue.x-k8s.io serverside-applied"),
        "{out}"
    );
    assert!(
        out.contains("deployment.apps/kueue-controller-manager serverside-applied"),
        "{out}"
    );

    // The CRDs become established while kubectl waits (the watch sees the status change).
    let wait = cluster.kubectl(&[
        "wait",
        "--for=condition=established",
        "--timeout=30s",
        "crd/resourceflavors.kueue.x-k8s.io",
        "crd/clusterqueues.kueue.x-k8s.io",
        "crd/localqueues.kueue.x-k8s.io",
    ]);
    let advance = async {
        tokio::time::sleep(Duration::from_millis(300)).await;
        cluster.sim.advance_secs(3.0);
    };
    let ((ok, out, err), ()) = tokio::join!(wait, advance);
    assert!(ok, "{out}\n{err}");
    assert!(out.contains("condition met"), "{out}");

    // No node the controller tolerates: the mutating webhook has no endpoints.
    let (ok, _, err) = cluster
        .kubectl_stdin(&["create", "-f", "-"], Some(FLAVOR))
        .await;
    assert!(!ok);
    assert!(
        err.contains("Error from server (InternalError): error when creating \"STDIN\": Internal error occurred: failed calling webhook \"mresourceflavor.kb.io\": failed to call webhook: Post \"https://kueue-webhook-service.kueue-system.svc:443/mutate-kueue-x-k8s-io-v1beta1-resourceflavor?timeout=10s\": no endpoints available for service \"kueue-webhook-service\""),
        "{err}"
    );
    // Still unavailable long after the apply.
    cluster.sim.advance_secs(120.0);
    let out = cluster
        .kubectl_ok(&[
            "get",
            "deployment",
            "kueue-controller-manager",
            "-n",
            "kueue-system",
            "-o",
            "jsonpath={.status.conditions[?(@.type==\"Available\")].status}",
        ])
        .await;
    assert_eq!(out, "False");

    // A CPU node pool: the controller rolls out 30 s later.
    cluster.set_pool(
        "default-pool",
        vec![node("gke-c1-default-0", "default-pool", 0, false)],
    );
    let rollout = cluster.kubectl(&[
        "rollout",
        "status",
        "deployment/kueue-controller-manager",
        "-n",
        "kueue-system",
        "--timeout=30s",
    ]);
    let advance = async {
        tokio::time::sleep(Duration::from_millis(300)).await;
        cluster.sim.advance_secs(31.0);
    };
    let ((ok, out, err), ()) = tokio::join!(rollout, advance);
    assert!(ok, "{out}\n{err}");
    assert!(
        out.contains("deployment \"kueue-controller-manager\" successfully rolled out"),
        "{out}"
    );

    // Endpoints exist but the webhook server is still starting.
    let (ok, _, err) = cluster
        .kubectl_stdin(&["create", "-f", "-"], Some(FLAVOR))
        .await;
    assert!(!ok);
    assert!(
        err.contains("failed calling webhook \"mresourceflavor.kb.io\""),
        "{err}"
    );
    assert!(err.contains(":9443: connect: connection refused"), "{err}");

    cluster.sim.advance_secs(10.0);
    let out = cluster
        .kubectl_stdin(&["create", "-f", "-"], Some(FLAVOR))
        .await;
    assert!(out.0, "{}\n{}", out.1, out.2);
    assert_eq!(
        out.1.trim(),
        "resourceflavor.kueue.x-k8s.io/a3-mega created"
    );

    let (ok, out, err) = cluster
        .kubectl_stdin(&["apply", "--server-side", "-f", "-"], Some(QUEUES))
        .await;
    assert!(ok, "{out}\n{err}");
    assert!(
        out.contains("clusterqueue.kueue.x-k8s.io/a3-mega serverside-applied"),
        "{out}"
    );
    assert!(
        out.contains("localqueue.kueue.x-k8s.io/a3-mega serverside-applied"),
        "{out}"
    );

    // get (table and JSON), list by short name.
    let table = cluster.kubectl_ok(&["get", "rf"]).await;
    assert!(table.starts_with("NAME"), "{table}");
    assert!(table.contains("a3-mega"), "{table}");
    let queues = cluster.kubectl_ok(&["get", "cq", "-o", "json"]).await;
    let queues: serde_json::Value = serde_json::from_str(&queues).unwrap();
    assert_eq!(queues["items"][0]["metadata"]["name"], "a3-mega");
    assert_eq!(
        queues["items"][0]["spec"]["resourceGroups"][0]["flavors"][0]["resources"][0]["nominalQuota"],
        16
    );
    let local = cluster.kubectl_ok(&["get", "lq", "-A"]).await;
    assert!(
        local.contains("default") && local.contains("a3-mega"),
        "{local}"
    );

    // delete.
    let out = cluster
        .kubectl_ok(&["delete", "localqueue", "a3-mega", "-n", "default"])
        .await;
    assert_eq!(out.trim(), "localqueue.kueue.x-k8s.io \"a3-mega\" deleted");
    cluster
        .kubectl_ok(&["delete", "clusterqueue", "a3-mega"])
        .await;
    cluster
        .kubectl_ok(&["delete", "resourceflavor", "a3-mega"])
        .await;
    let (ok, _, err) = cluster.kubectl(&["get", "resourceflavor", "a3-mega"]).await;
    assert!(!ok);
    assert!(
        err.contains(
            "Error from server (NotFound): resourceflavors.kueue.x-k8s.io \"a3-mega\" not found"
        ),
        "{err}"
    );
}
