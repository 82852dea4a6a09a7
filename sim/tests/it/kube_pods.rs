//! Pods on a GKE cluster made with gcloud, driven with kubectl: the scheduler and the kubelet, Cloud
//! Storage FUSE volumes that mount only with Workload Identity Federation, the driver, the GKE
//! metadata server, the sidecar annotation and a role on the bucket — each failure with GKE's
//! `FailedMount` text —, images of the project's Artifact Registry that the node's service account
//! must be allowed to pull (`ErrImagePull`, `ImagePullBackOff`), and the retries that start a pod
//! once IAM is fixed.

use crate::gcloud_support::{Gcloud, PROJECT};
use crate::kube_support::Cluster;
use a3ctl_sim::SimConfig;
use base64::Engine;
use serde_json::Value;

/// A simulator with a GKE cluster `c1` in `PROJECT` (one `e2-standard-4` node in us-central1-a),
/// made with gcloud with `flags` added, and kubectl pointed at it.
pub async fn gke_cluster(flags: &[&str]) -> (Cluster, Gcloud) {
    gke_cluster_after(&[], flags).await
}

/// [`gke_cluster`], running the gcloud commands `first` before the cluster is made.
pub async fn gke_cluster_after(first: &[&[&str]], flags: &[&str]) -> (Cluster, Gcloud) {
    let sim = a3ctl_sim::start(SimConfig::default())
        .await
        .expect("simulator starts");
    let gcloud = Gcloud::new(&sim);
    for command in first {
        gcloud.ok(command).await;
    }
    gcloud
        .ok(&[
            "compute",
            "networks",
            "create",
            "main",
            "--subnet-mode=custom",
        ])
        .await;
    gcloud
        .ok(&[
            "compute",
            "networks",
            "subnets",
            "create",
            "main-sub",
            "--network=main",
            "--region=us-central1",
            "--range=10.0.0.0/20",
        ])
        .await;
    let mut args = vec![
        "container",
        "clusters",
        "create",
        "c1",
        "--location=us-central1",
        "--network=main",
        "--subnetwork=main-sub",
        "--node-locations=us-central1-a",
        "--num-nodes=1",
        "--machine-type=e2-standard-4",
    ];
    args.extend_from_slice(flags);
    gcloud.ok(&args).await;
    let described = gcloud
        .json(&[
            "container",
            "clusters",
            "describe",
            "c1",
            "--location=us-central1",
        ])
        .await;
    let endpoint = described["endpoint"].as_str().unwrap().to_string();
    let ca = base64::engine::general_purpose::STANDARD
        .decode(
            described["masterAuth"]["clusterCaCertificate"]
                .as_str()
                .unwrap(),
        )
        .unwrap();
    let ca_pem = String::from_utf8(ca).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let ca_path = dir.path().join("ca.pem");
    std::fs::write(&ca_path, &ca_pem).unwrap();
    std::fs::write(dir.path().join("kubeconfig"), "").unwrap();
    let cluster = Cluster {
        sim,
        endpoint,
        ca_pem,
        dir,
        ca_path,
    };
    (cluster, gcloud)
}

/// A pod of `busybox` mounting `volume` at `/data`, with `annotations` and `extra` spec fields
/// (YAML lines under `spec:`).
fn pod(name: &str, annotations: &str, volume: &str, extra: &str) -> String {
    format!(
        "apiVersion: v1
kind: Pod
metadata:
  name: {name}
  annotations: {{{annotations}}}
spec:
{extra}  containers:
  - name: main
    image: busybox:1.36
    command: [sleep, infinity]
    volumeMounts:
    - name: data
      mountPath: /data
  volumes:
  - name: data
{volume}"
    )
}

fn gcs_volume(bucket: &str) -> String {
    format!(
        "    csi:
      driver: gcsfuse.csi.storage.gke.io
      volumeAttributes:
        bucketName: {bucket}
"
    )
}

const ANNOTATED: &str = "gke-gcsfuse/volumes: \"true\"";

/// The `FailedMount` messages of a pod's events, with their counts.
async fn failed_mounts(cluster: &Cluster, pod: &str) -> Vec<(String, i64)> {
    let events: Value = serde_json::from_str(
        &cluster
            .kubectl_ok(&[
                "get",
                "events",
                "--field-selector",
                &format!("involvedObject.name={pod}"),
                "-o",
                "json",
            ])
            .await,
    )
    .unwrap();
    events["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["reason"] == "FailedMount")
        .map(|e| {
            (
                e["message"].as_str().unwrap().to_string(),
                e["count"].as_i64().unwrap(),
            )
        })
        .collect()
}

async fn phase(cluster: &Cluster, pod: &str) -> String {
    cluster
        .kubectl_ok(&["get", "pod", pod, "-o", "jsonpath={.status.phase}"])
        .await
}

/// `kubectl get pod NAME` without headers: NAME READY STATUS RESTARTS AGE.
async fn row(cluster: &Cluster, pod: &str) -> Vec<String> {
    cluster
        .kubectl_ok(&["get", "pod", pod, "--no-headers"])
        .await
        .split_whitespace()
        .map(String::from)
        .collect()
}

fn set_up_failed(volume: &str, error: &str) -> String {
    format!("MountVolume.SetUp failed for volume \"{volume}\" : {error}")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gcs_fuse_mounts_wait_for_workload_identity_and_a_role_on_the_bucket() {
    let (cluster, gcloud) = gke_cluster(&[
        "--workload-pool=sim-proj.svc.id.goog",
        "--addons=GcsFuseCsiDriver",
    ])
    .await;
    let number = cluster
        .sim
        .shared
        .read_world(|w, _| w.project_number(PROJECT));
    gcloud
        .ok(&[
            "storage",
            "buckets",
            "create",
            "gs://sim-proj-data",
            "--location=us-central1",
            "--uniform-bucket-level-access",
        ])
        .await;

    // The default service account of `default` may not list the bucket: the pod is scheduled
    // but its volume does not mount.
    let reader = pod("reader", ANNOTATED, &gcs_volume("sim-proj-data"), "");
    let out = cluster
        .kubectl_stdin(&["apply", "-f", "-"], Some(&reader))
        .await;
    assert!(out.0, "{out:?}");
    assert_eq!(phase(&cluster, "reader").await, "Pending");
    assert_eq!(
        row(&cluster, "reader").await[1..4],
        ["0/1", "ContainerCreating", "0"]
    );
    let denied = set_up_failed(
        "data",
        "rpc error: code = PermissionDenied desc = failed to get GCS bucket \"sim-proj-data\": \
         googleapi: Error 403: Caller does not have storage.objects.list access to the Google \
         Cloud Storage bucket. Permission 'storage.objects.list' denied on resource (or it may \
         not exist)., forbidden",
    );
    let events = cluster.kubectl_ok(&["get", "events"]).await;
    assert!(events.contains("FailedMount"), "{events}");
    assert!(events.contains(&denied), "{events}");
    assert!(
        events.contains("Successfully assigned default/reader to gke-c1-default-pool-"),
        "{events}"
    );
    let described = cluster.kubectl_ok(&["describe", "pod", "reader"]).await;
    assert!(
        described.contains("Warning  FailedMount") && described.contains(&denied),
        "{described}"
    );

    // Ten minutes of retries, the gap doubling from 0.5 s to 2m2s: 12 attempts so far.
    cluster.sim.advance_secs(600.0);
    assert_eq!(
        failed_mounts(&cluster, "reader").await,
        vec![(denied.clone(), 12)]
    );
    // The namespace's default Kubernetes service account gets object access on the bucket.
    let member = format!(
        "principal://iam.googleapis.com/projects/{number}/locations/global/workloadIdentityPools/sim-proj.svc.id.goog/subject/ns/default/sa/default"
    );
    gcloud
        .ok(&[
            "storage",
            "buckets",
            "add-iam-policy-binding",
            "gs://sim-proj-data",
            &format!("--member={member}"),
            "--role=roles/storage.objectUser",
        ])
        .await;
    // The next attempt is at 615.5 s: not yet.
    cluster.sim.advance_secs(10.0);
    assert_eq!(row(&cluster, "reader").await[2], "ContainerCreating");
    cluster.sim.advance_secs(10.0);
    assert_eq!(phase(&cluster, "reader").await, "Running");
    assert_eq!(row(&cluster, "reader").await[1..4], ["1/1", "Running", "0"]);
    let status: Value = serde_json::from_str(
        &cluster
            .kubectl_ok(&["get", "pod", "reader", "-o", "json"])
            .await,
    )
    .unwrap();
    let started = &status["status"]["containerStatuses"][0]["state"]["running"]["startedAt"];
    // The first attempt after the grant, at 615.5 s.
    let epoch = cluster.sim.shared.read_world(|w, _| w.epoch);
    let at = a3ctl_sim::kube::controllers::timestamp(epoch, a3ctl_sim::clock::SimTime(615_500));
    assert_eq!(started, &Value::String(at));
    assert_eq!(
        failed_mounts(&cluster, "reader").await,
        vec![(denied.clone(), 12)],
        "no failure after the grant"
    );
    let events = cluster
        .kubectl_ok(&[
            "get",
            "events",
            "--field-selector",
            "involvedObject.name=reader",
        ])
        .await;
    for reason in ["Scheduled", "Pulling", "Pulled", "Created", "Started"] {
        assert!(events.contains(reason), "{reason}: {events}");
    }

    // A bucket that does not exist.
    let missing = pod("missing", ANNOTATED, &gcs_volume("sim-proj-nope"), "");
    cluster
        .kubectl_stdin(&["apply", "-f", "-"], Some(&missing))
        .await;
    assert_eq!(
        failed_mounts(&cluster, "missing").await,
        vec![(
            set_up_failed(
                "data",
                "rpc error: code = NotFound desc = failed to get GCS bucket \"sim-proj-nope\": \
                 storage: bucket doesn't exist"
            ),
            1
        )]
    );

    // Without the annotation the driver's webhook injects no sidecar.
    let bare = pod("bare", "", &gcs_volume("sim-proj-data"), "");
    cluster
        .kubectl_stdin(&["apply", "-f", "-"], Some(&bare))
        .await;
    assert_eq!(
        failed_mounts(&cluster, "bare").await,
        vec![(
            set_up_failed(
                "data",
                "rpc error: code = FailedPrecondition desc = failed to find the sidecar \
                 container in Pod spec"
            ),
            1
        )]
    );

    // A claim bound to a PersistentVolume of the driver: the volume is named by the PV, and
    // another Kubernetes service account has no role on the bucket.
    let claim = "apiVersion: v1
kind: PersistentVolume
metadata:
  name: data-pv
spec:
  accessModes: [ReadWriteMany]
  capacity: {storage: 5Gi}
  storageClassName: gcs
  csi:
    driver: gcsfuse.csi.storage.gke.io
    volumeHandle: sim-proj-data
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: data-claim
spec:
  accessModes: [ReadWriteMany]
  resources: {requests: {storage: 5Gi}}
  storageClassName: gcs
  volumeName: data-pv
---
apiVersion: v1
kind: ServiceAccount
metadata:
  name: trainer
";
    cluster
        .kubectl_stdin(&["apply", "-f", "-"], Some(claim))
        .await;
    let trainer = pod(
        "trainer",
        ANNOTATED,
        "    persistentVolumeClaim:\n      claimName: data-claim\n",
        "  serviceAccountName: trainer\n",
    );
    cluster
        .kubectl_stdin(&["apply", "-f", "-"], Some(&trainer))
        .await;
    assert_eq!(
        failed_mounts(&cluster, "trainer").await,
        vec![(denied.replace("\"data\"", "\"data-pv\""), 1)]
    );
    // The default account's pod mounts the same claim.
    let claimant = pod(
        "claimant",
        ANNOTATED,
        "    persistentVolumeClaim:\n      claimName: data-claim\n",
        "",
    );
    cluster
        .kubectl_stdin(&["apply", "-f", "-"], Some(&claimant))
        .await;
    assert_eq!(phase(&cluster, "claimant").await, "Running");

    // A pool without the GKE metadata server.
    gcloud
        .ok(&[
            "container",
            "node-pools",
            "create",
            "plain",
            "--cluster=c1",
            "--location=us-central1",
            "--num-nodes=1",
            "--machine-type=e2-standard-4",
            "--workload-metadata=GCE_METADATA",
        ])
        .await;
    let plain = pod(
        "plain",
        ANNOTATED,
        &gcs_volume("sim-proj-data"),
        "  nodeSelector: {cloud.google.com/gke-nodepool: plain}\n",
    );
    cluster
        .kubectl_stdin(&["apply", "-f", "-"], Some(&plain))
        .await;
    assert_eq!(
        failed_mounts(&cluster, "plain").await,
        vec![(
            set_up_failed(
                "data",
                "rpc error: code = FailedPrecondition desc = Workload Identity Federation is not \
                 enabled on node. Please make sure this is enabled on both cluster and node pool \
                 level (https://cloud.google.com/kubernetes-engine/docs/how-to/workload-identity)"
            ),
            1
        )]
    );

    // The driver disabled: the kubelet finds no such CSI driver.
    gcloud
        .ok(&[
            "container",
            "clusters",
            "update",
            "c1",
            "--location=us-central1",
            "--update-addons=GcsFuseCsiDriver=DISABLED",
        ])
        .await;
    let late = pod("late", ANNOTATED, &gcs_volume("sim-proj-data"), "");
    cluster
        .kubectl_stdin(&["apply", "-f", "-"], Some(&late))
        .await;
    assert_eq!(
        failed_mounts(&cluster, "late").await,
        vec![(
            set_up_failed(
                "data",
                "kubernetes.io/csi: mounter.SetUpAt failed to get CSI client: driver name \
                 gcsfuse.csi.storage.gke.io not found in the list of registered CSI drivers"
            ),
            1
        )]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_workload_identity_no_token_can_be_had() {
    let (cluster, gcloud) = gke_cluster(&["--addons=GcsFuseCsiDriver"]).await;
    gcloud
        .ok(&[
            "storage",
            "buckets",
            "create",
            "gs://sim-proj-data",
            "--location=us-central1",
        ])
        .await;
    let reader = pod("reader", ANNOTATED, &gcs_volume("sim-proj-data"), "");
    cluster
        .kubectl_stdin(&["apply", "-f", "-"], Some(&reader))
        .await;
    assert_eq!(
        failed_mounts(&cluster, "reader").await,
        vec![(
            set_up_failed(
                "data",
                "rpc error: code = Unauthenticated desc = failed to prepare storage service: \
                 storage service manager failed to setup service: timed out waiting for the \
                 condition"
            ),
            1
        )]
    );
    // A ConfigMap volume waits for its ConfigMap.
    let config = pod("config", "", "    configMap:\n      name: settings\n", "");
    cluster
        .kubectl_stdin(&["apply", "-f", "-"], Some(&config))
        .await;
    assert_eq!(
        failed_mounts(&cluster, "config").await,
        vec![(set_up_failed("data", "configmap \"settings\" not found"), 1)]
    );
    cluster
        .kubectl_stdin(
            &["apply", "-f", "-"],
            Some("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata: {a: b}\n"),
        )
        .await;
    cluster.sim.advance_secs(1.0);
    assert_eq!(phase(&cluster, "config").await, "Running");
    // A pod naming a Kubernetes service account that does not exist is refused.
    let (ok, _, err) = cluster
        .kubectl_stdin(
            &["apply", "-f", "-"],
            Some(&pod(
                "ghost",
                "",
                "    emptyDir: {}\n",
                "  serviceAccountName: ghost\n",
            )),
        )
        .await;
    assert!(!ok);
    assert!(
        err.contains(
            "pods \"ghost\" is forbidden: error looking up service account default/ghost: serviceaccount \"ghost\" not found"
        ),
        "{err}"
    );
}

/// A pod running `image`, with `extra` spec fields (YAML lines under `spec:`).
fn image_pod(name: &str, image: &str, extra: &str) -> String {
    format!(
        "apiVersion: v1
kind: Pod
metadata:
  name: {name}
spec:
{extra}  containers:
  - name: main
    image: {image}
"
    )
}

/// `(reason, message, count)` of a pod's events with `reason`.
async fn events_of(cluster: &Cluster, pod: &str, reason: &str) -> Vec<(String, i64)> {
    let events: Value = serde_json::from_str(
        &cluster
            .kubectl_ok(&[
                "get",
                "events",
                "--field-selector",
                &format!("involvedObject.name={pod}"),
                "-o",
                "json",
            ])
            .await,
    )
    .unwrap();
    let mut out: Vec<(String, i64)> = events["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["reason"] == reason)
        .map(|e| {
            (
                e["message"].as_str().unwrap().to_string(),
                e["count"].as_i64().unwrap_or(1),
            )
        })
        .collect();
    out.sort();
    out
}

async fn waiting(cluster: &Cluster, pod: &str) -> Value {
    let pod: Value =
        serde_json::from_str(&cluster.kubectl_ok(&["get", "pod", pod, "-o", "json"]).await)
            .unwrap();
    pod["status"]["containerStatuses"][0]["state"]["waiting"].clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn images_of_the_projects_registry_need_a_reader_role_for_the_nodes_account() {
    let nodes = format!("gpu-nodes@{PROJECT}.iam.gserviceaccount.com");
    let (cluster, gcloud) = gke_cluster_after(
        &[&["iam", "service-accounts", "create", "gpu-nodes"]],
        &[&format!("--service-account={nodes}")],
    )
    .await;
    gcloud
        .ok(&[
            "artifacts",
            "repositories",
            "create",
            "images",
            "--location=us-central1",
            "--repository-format=docker",
        ])
        .await;
    let image = "us-central1-docker.pkg.dev/sim-proj/images/trainer:v1";
    cluster
        .kubectl_stdin(&["apply", "-f", "-"], Some(&image_pod("app", image, "")))
        .await;
    let forbidden = format!(
        "failed to pull and unpack image \"{image}\": failed to resolve reference \"{image}\": \
         failed to authorize: failed to fetch oauth token: unexpected status from GET request to \
         https://us-central1-docker.pkg.dev/v2/token?scope=repository%3Asim-proj%2Fimages%2Ftrainer%3Apull&service=us-central1-docker.pkg.dev: \
         403 Forbidden"
    );
    assert_eq!(phase(&cluster, "app").await, "Pending");
    assert_eq!(row(&cluster, "app").await[1..3], ["0/1", "ErrImagePull"]);
    assert_eq!(
        waiting(&cluster, "app").await,
        serde_json::json!({"reason": "ErrImagePull", "message": forbidden})
    );
    let failed = events_of(&cluster, "app", "Failed").await;
    assert_eq!(
        failed,
        vec![
            ("Error: ErrImagePull".to_string(), 1),
            (format!("Failed to pull image \"{image}\": {forbidden}"), 1),
        ]
    );
    let events = cluster.kubectl_ok(&["get", "events"]).await;
    assert!(events.contains("Warning   Failed"), "{events}");

    // Attempts at 0 and 10 s, a back-off sync at 20 s: at 25 s the container backs off.
    cluster.sim.advance_secs(25.0);
    assert_eq!(row(&cluster, "app").await[2], "ImagePullBackOff");
    assert_eq!(
        waiting(&cluster, "app").await,
        serde_json::json!({"reason": "ImagePullBackOff",
            "message": format!("Back-off pulling image \"{image}\"")})
    );
    assert_eq!(
        events_of(&cluster, "app", "Pulling").await,
        vec![(format!("Pulling image \"{image}\""), 2)]
    );
    assert_eq!(
        events_of(&cluster, "app", "BackOff").await,
        vec![(format!("Back-off pulling image \"{image}\""), 1)]
    );
    assert_eq!(
        events_of(&cluster, "app", "Failed").await,
        vec![
            ("Error: ErrImagePull".to_string(), 2),
            ("Error: ImagePullBackOff".to_string(), 1),
            (format!("Failed to pull image \"{image}\": {forbidden}"), 2),
        ]
    );

    // The nodes' account becomes a reader of the repository: the next attempt, at 30 s, pulls.
    gcloud
        .ok(&[
            "artifacts",
            "repositories",
            "add-iam-policy-binding",
            "images",
            "--location=us-central1",
            &format!("--member=serviceAccount:{nodes}"),
            "--role=roles/artifactregistry.reader",
        ])
        .await;
    cluster.sim.advance_secs(4.0);
    assert_eq!(row(&cluster, "app").await[2], "ImagePullBackOff");
    cluster.sim.advance_secs(2.0);
    assert_eq!(row(&cluster, "app").await[1..3], ["1/1", "Running"]);
    let pulled = events_of(&cluster, "app", "Pulled").await;
    assert_eq!(pulled.len(), 1);
    assert!(
        pulled[0]
            .0
            .starts_with(&format!("Successfully pulled image \"{image}\" in 0s")),
        "{pulled:?}"
    );

    // A repository that does not exist; an image without a tag is pulled as `:latest`.
    let nope = "us-central1-docker.pkg.dev/sim-proj/nope/app";
    cluster
        .kubectl_stdin(&["apply", "-f", "-"], Some(&image_pod("nope", nope, "")))
        .await;
    assert_eq!(
        waiting(&cluster, "nope").await["message"],
        format!(
            "failed to pull and unpack image \"{nope}:latest\": failed to resolve reference \
             \"{nope}:latest\": failed to authorize: failed to fetch oauth token: unexpected \
             status from GET request to \
             https://us-central1-docker.pkg.dev/v2/token?scope=repository%3Asim-proj%2Fnope%2Fapp%3Apull&service=us-central1-docker.pkg.dev: \
             404 Not Found"
        )
    );

    // Public images, and images of projects outside the simulated world, pull as before.
    for (name, image) in [
        ("public", "busybox:1.36"),
        (
            "gpudirect",
            "us-docker.pkg.dev/gce-ai-infra/gpudirect-tcpx/tcpgpudmarxd-dev:v2.0.12",
        ),
    ] {
        cluster
            .kubectl_stdin(&["apply", "-f", "-"], Some(&image_pod(name, image, "")))
            .await;
        assert_eq!(phase(&cluster, name).await, "Running", "{name}");
    }

    // A pool running as the Compute Engine default account, an editor of the project.
    gcloud
        .ok(&[
            "container",
            "node-pools",
            "create",
            "std",
            "--cluster=c1",
            "--location=us-central1",
            "--num-nodes=1",
            "--machine-type=e2-standard-4",
        ])
        .await;
    let on_default = image_pod(
        "on-default",
        image,
        "  nodeSelector: {cloud.google.com/gke-nodepool: std}\n",
    );
    cluster
        .kubectl_stdin(&["apply", "-f", "-"], Some(&on_default))
        .await;
    assert_eq!(phase(&cluster, "on-default").await, "Running");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_scheduler_explains_why_a_pod_fits_no_node() {
    use crate::kube_support::{latency, node, start};
    let cluster = start(latency(&[("kube.driver.installed", 90.0)]), false).await;
    let gpu_pod = |name: &str, tolerate: bool| {
        let toleration = if tolerate {
            "  tolerations:\n  - {key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}\n"
        } else {
            ""
        };
        format!(
            "apiVersion: v1
kind: Pod
metadata:
  name: {name}
spec:
{toleration}  containers:
  - name: main
    image: busybox:1.36
    resources:
      limits: {{nvidia.com/gpu: 8}}
"
        )
    };
    cluster
        .kubectl_stdin(&["apply", "-f", "-"], Some(&gpu_pod("intolerant", false)))
        .await;
    let scheduling = |pod: &'static str| {
        let cluster = &cluster;
        async move {
            let pod: Value =
                serde_json::from_str(&cluster.kubectl_ok(&["get", "pod", pod, "-o", "json"]).await)
                    .unwrap();
            pod["status"]["conditions"][0].clone()
        }
    };
    let condition = scheduling("intolerant").await;
    assert_eq!(condition["type"], "PodScheduled");
    assert_eq!(condition["reason"], "Unschedulable");
    assert_eq!(condition["message"], "no nodes available to schedule pods");

    // A CPU node and a GPU node whose driver is not installed yet.
    cluster.set_pool("cpu", vec![node("gke-c1-cpu-0", "cpu", 0, false)]);
    cluster.set_pool("gpu", vec![node("gke-c1-gpu-0", "gpu", 8, true)]);
    cluster
        .kubectl_stdin(&["apply", "-f", "-"], Some(&gpu_pod("tolerant", true)))
        .await;
    assert_eq!(
        scheduling("intolerant").await["message"],
        "0/2 nodes are available: 1 Insufficient nvidia.com/gpu, 1 node(s) had untolerated taint \
         {nvidia.com/gpu: present}. preemption: 0/2 nodes are available: 1 No preemption \
         victims found for incoming pod, 1 Preemption is not helpful for scheduling."
    );
    let message = "0/2 nodes are available: 2 Insufficient nvidia.com/gpu. preemption: 0/2 nodes \
                   are available: 2 No preemption victims found for incoming pod.";
    assert_eq!(scheduling("tolerant").await["message"], message);
    let events = cluster
        .kubectl_ok(&[
            "get",
            "events",
            "--field-selector",
            "involvedObject.name=tolerant",
        ])
        .await;
    assert!(
        events.contains("Warning   FailedScheduling   pod/tolerant") && events.contains(message),
        "{events}"
    );
    assert_eq!(row(&cluster, "tolerant").await[1..3], ["0/1", "Pending"]);

    // GKE installs the driver: the GPUs become allocatable and the tolerant pod is bound there.
    cluster.sim.advance_secs(90.0);
    assert_eq!(phase(&cluster, "tolerant").await, "Running");
    let bound = cluster
        .kubectl_ok(&["get", "pod", "tolerant", "-o", "jsonpath={.spec.nodeName}"])
        .await;
    assert_eq!(bound, "gke-c1-gpu-0");
    // The node's eight GPUs are taken.
    cluster
        .kubectl_stdin(&["apply", "-f", "-"], Some(&gpu_pod("second", true)))
        .await;
    assert_eq!(scheduling("second").await["message"], message);
}
