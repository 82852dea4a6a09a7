//! Jobs driven with kubectl 1.32: the Job controller's pods (names, labels, hostnames, owner
//! references), an Indexed NCCL test that completes on the manual clock and logs the bus
//! bandwidth set through `/_sim/workloads`, a test whose pods miss their GPU NICs, failed pods
//! replaced until `backoffLimit`, Jobs queued in Kueue until their ClusterQueue has quota, and
//! deletion with kubectl's background propagation and with `--cascade=orphan`.

use crate::kube_support::{Cluster, latency, node, start};
use serde_json::{Value, json};

/// A headless Service and an Indexed Job of two GPU pods running an NCCL all-gather test, as
/// a3ctl's `verify --nccl-test` makes it: pod 0 runs `all_gather_perf`, pod 1 waits for it; an
/// RxDM native sidecar; the pods join the Networks `networks` (eth1, eth2, ...).
fn nccl_job(name: &str, networks: &[&str], extra_labels: &str) -> String {
    let mut interfaces = vec![json!({"interfaceName": "eth0", "network": "default"})];
    for (i, n) in networks.iter().enumerate() {
        interfaces.push(json!({"interfaceName": format!("eth{}", i + 1), "network": n}));
    }
    let interfaces = serde_json::to_string(&Value::Array(interfaces)).unwrap();
    format!(
        r#"apiVersion: v1
kind: Service
metadata:
  name: {name}
spec:
  clusterIP: None
  selector:
    job-name: {name}
---
apiVersion: batch/v1
kind: Job
metadata:
  name: {name}
  labels: {{{extra_labels}}}
spec:
  completionMode: Indexed
  completions: 2
  parallelism: 2
  backoffLimit: 0
  template:
    metadata:
      annotations:
        networking.gke.io/default-interface: eth0
        networking.gke.io/interfaces: '{interfaces}'
    spec:
      subdomain: {name}
      restartPolicy: Never
      nodeSelector:
        cloud.google.com/gke-nodepool: gpu
      tolerations:
      - key: nvidia.com/gpu
        operator: Exists
        effect: NoSchedule
      initContainers:
      - name: tcpxo-daemon
        image: us-docker.pkg.dev/gce-ai-infra/gpudirect-tcpxo/tcpgpudmarxd-dev:v1.0.14
        restartPolicy: Always
        command: [/bin/sh, -c, "exec /fts/entrypoint_rxdm_container.sh --num_hops=2"]
      containers:
      - name: nccl-test
        image: us-docker.pkg.dev/gce-ai-infra/gpudirect-tcpxo/nccl-plugin-gpudirecttcpx-dev:v1.0.8-1
        command:
        - /bin/bash
        - -c
        - |
          if [ "$JOB_COMPLETION_INDEX" != 0 ]; then while [ ! -e /tmp/done ]; do sleep 5; done; exit 0; fi
          BENCHMARK=all_gather_perf NHOSTS=2 DATA_MIN=1K DATA_MAX=8G /scripts/demo-run-nccl-test-tcpxo-via-mpi.sh
        resources:
          limits:
            nvidia.com/gpu: 8
"#
    )
}

/// The mean bus bandwidth of a log's 2G–8G rows, out-of-place and in-place: the figure the
/// configured bandwidth sets (and a3ctl judges).
fn busbw_2g_8g(log: &str) -> f64 {
    let cells: Vec<f64> = log
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| l.split_whitespace().collect::<Vec<_>>())
        .filter(|cells| cells[0].parse::<u64>().unwrap() >= 2 << 30)
        .flat_map(|cells| [cells[7].parse::<f64>().unwrap(), cells[11].parse().unwrap()])
        .collect();
    assert_eq!(cells.len(), 6, "{log}");
    cells.iter().sum::<f64>() / cells.len() as f64
}

const NETWORKS: &str = "apiVersion: networking.gke.io/v1
kind: Network
metadata:
  name: vpc1
spec:
  type: Device
  parametersRef: {group: networking.gke.io, kind: GKENetworkParamSet, name: vpc1}
---
apiVersion: networking.gke.io/v1
kind: Network
metadata:
  name: vpc2
spec:
  type: Device
  parametersRef: {group: networking.gke.io, kind: GKENetworkParamSet, name: vpc2}
";

/// A cluster with a pool `gpu` of two A3 Mega nodes (drivers installed at once) and a CPU node,
/// NCCL tests running `test_secs`.
async fn gpu_cluster(test_secs: f64) -> Cluster {
    let cluster = start(latency(&[("kube.nccl.test", test_secs)]), true).await;
    cluster.set_pool(
        "gpu",
        vec![
            node("gke-c1-gpu-0", "gpu", 8, true),
            node("gke-c1-gpu-1", "gpu", 8, true),
        ],
    );
    cluster.set_pool(
        "default-pool",
        vec![node("gke-c1-default-0", "default-pool", 0, false)],
    );
    cluster
}

async fn json(cluster: &Cluster, args: &[&str]) -> Value {
    let mut all = args.to_vec();
    all.extend(["-o", "json"]);
    serde_json::from_str(&cluster.kubectl_ok(&all).await).unwrap()
}

/// The Job's pods, by completion index (or name for NonIndexed Jobs).
async fn pods(cluster: &Cluster, job: &str) -> Vec<Value> {
    let list = json(cluster, &["get", "pods", "-l", &format!("job-name={job}")]).await;
    list["items"].as_array().cloned().unwrap_or_default()
}

async fn set_bandwidth(cluster: &Cluster, body: Value) -> reqwest::Response {
    reqwest::Client::new()
        .put(format!("{}/_sim/workloads", cluster.sim.base_url()))
        .json(&body)
        .send()
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_indexed_nccl_job_makes_its_pods_completes_and_logs_the_injected_bandwidth() {
    let cluster = gpu_cluster(90.0).await;
    let response = set_bandwidth(
        &cluster,
        json!({"nccl_bus_bandwidth_gbps": {"nvidia-h100-mega-80gb": 49.9}}),
    )
    .await;
    assert_eq!(response.status(), 200);
    let settings: Value = response.json().await.unwrap();
    assert_eq!(
        settings["nccl_bus_bandwidth_gbps"]["nvidia-h100-mega-80gb"],
        49.9
    );
    // The other defaults stay.
    assert_eq!(
        settings["nccl_bus_bandwidth_gbps"]["nvidia-h100-80gb"],
        80.0
    );
    cluster
        .kubectl_stdin(&["apply", "-f", "-"], Some(NETWORKS))
        .await;
    let (ok, out, err) = cluster
        .kubectl_stdin(
            &["apply", "-f", "-"],
            Some(&nccl_job("nccl", &["vpc1", "vpc2"], "")),
        )
        .await;
    assert!(ok, "{out}\n{err}");
    assert!(out.contains("job.batch/nccl created"), "{out}");

    // The API server's selector and labels.
    let job = json(&cluster, &["get", "job", "nccl"]).await;
    let uid = job["metadata"]["uid"].as_str().unwrap().to_string();
    assert_eq!(
        job["spec"]["selector"],
        json!({"matchLabels": {"batch.kubernetes.io/controller-uid": uid}})
    );
    assert_eq!(
        job["spec"]["template"]["metadata"]["labels"]["job-name"],
        "nccl"
    );

    // Two pods, one per index, running on the two GPU nodes.
    let pods = pods(&cluster, "nccl").await;
    assert_eq!(pods.len(), 2, "{pods:#?}");
    for (i, pod) in pods.iter().enumerate() {
        let name = pod["metadata"]["name"].as_str().unwrap();
        let prefix = format!("nccl-{i}-");
        assert!(
            name.starts_with(&prefix) && name.len() == prefix.len() + 5,
            "{name}"
        );
        let labels = &pod["metadata"]["labels"];
        assert_eq!(
            labels["batch.kubernetes.io/job-completion-index"],
            i.to_string()
        );
        assert_eq!(labels["batch.kubernetes.io/controller-uid"], uid.as_str());
        assert_eq!(labels["job-name"], "nccl");
        assert_eq!(
            pod["metadata"]["annotations"]["batch.kubernetes.io/job-completion-index"],
            i.to_string()
        );
        assert_eq!(pod["metadata"]["generateName"], prefix.as_str());
        assert_eq!(pod["spec"]["hostname"], format!("nccl-{i}"));
        assert_eq!(pod["spec"]["subdomain"], "nccl");
        assert_eq!(
            pod["metadata"]["ownerReferences"],
            json!([{"apiVersion": "batch/v1", "kind": "Job", "name": "nccl", "uid": uid,
                "controller": true, "blockOwnerDeletion": true}])
        );
        assert_eq!(
            pod["metadata"]["finalizers"],
            json!(["batch.kubernetes.io/job-tracking"])
        );
        let env = &pod["spec"]["containers"][0]["env"];
        assert_eq!(env[0]["name"], "JOB_COMPLETION_INDEX", "{env}");
        assert_eq!(pod["status"]["phase"], "Running", "{pod:#}");
    }
    let nodes: std::collections::BTreeSet<&str> = pods
        .iter()
        .map(|p| p["spec"]["nodeName"].as_str().unwrap())
        .collect();
    assert_eq!(nodes.len(), 2, "{nodes:?}");
    let out = cluster.kubectl_ok(&["get", "job", "nccl"]).await;
    assert!(out.contains("Running"), "{out}");
    assert!(out.contains("0/2"), "{out}");
    let job = json(&cluster, &["get", "job", "nccl"]).await;
    assert_eq!(job["status"]["active"], 2, "{:#}", job["status"]);
    assert_eq!(job["status"]["ready"], 2);

    // A running container has printed nothing yet; a container that is not there is refused.
    let leader = pods[0]["metadata"]["name"].as_str().unwrap().to_string();
    let log = cluster
        .kubectl_ok(&["logs", &leader, "-c", "nccl-test"])
        .await;
    assert_eq!(log, "");
    let (ok, _, err) = cluster.kubectl(&["logs", &leader, "-c", "nope"]).await;
    assert!(!ok);
    assert!(err.contains("container nope is not valid for pod"), "{err}");

    // 90 simulated seconds later the test is over.
    cluster.sim.advance_secs(89.0);
    let job = json(&cluster, &["get", "job", "nccl"]).await;
    assert!(job["status"]["conditions"].is_null(), "{:#}", job["status"]);
    cluster.sim.advance_secs(1.0);
    let job = json(&cluster, &["get", "job", "nccl"]).await;
    let status = &job["status"];
    assert_eq!(status["succeeded"], 2, "{status:#}");
    assert_eq!(status["completedIndexes"], "0-1");
    assert!(status["active"].is_null());
    assert_eq!(status["ready"], 0);
    assert_eq!(status["uncountedTerminatedPods"], json!({}));
    let kinds: Vec<&str> = status["conditions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["type"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["SuccessCriteriaMet", "Complete"]);
    assert_eq!(status["conditions"][1]["reason"], "CompletionsReached");
    assert_eq!(
        status["conditions"][1]["message"],
        "Reached expected number of succeeded pods"
    );
    assert_eq!(
        status["completionTime"],
        status["conditions"][1]["lastTransitionTime"]
    );
    let out = cluster.kubectl_ok(&["get", "job", "nccl"]).await;
    let row = out.lines().nth(1).unwrap();
    let cells: Vec<&str> = row.split_whitespace().collect();
    assert_eq!(&cells[..4], ["nccl", "Complete", "2/2", "90s"], "{out}");

    // The pods succeeded, the sidecar stopped with them, and the Job let go of them.
    let done = pods_of(&cluster).await;
    for pod in &done {
        assert_eq!(pod["status"]["phase"], "Succeeded", "{pod:#}");
        assert!(pod["metadata"]["finalizers"].is_null());
        let sidecar = &pod["status"]["initContainerStatuses"][0]["state"]["terminated"];
        assert_eq!(sidecar["reason"], "Completed", "{pod:#}");
        let test = &pod["status"]["containerStatuses"][0]["state"]["terminated"];
        assert_eq!(test["exitCode"], 0);
    }
    let out = cluster
        .kubectl_ok(&["get", "pods", "-l", "job-name=nccl"])
        .await;
    assert_eq!(out.matches("Completed").count(), 2, "{out}");

    let log = cluster
        .kubectl_ok(&["logs", &leader, "-c", "nccl-test"])
        .await;
    assert!(
        log.starts_with(
            "# nccl-tests version 2.19.6 nccl-headers=22809 nccl-library=22809\n# Collective test starting: all_gather_perf\n# nThread 1 nGpus 1 minBytes 1024 maxBytes 8589934592 "
        ),
        "{log}"
    );
    assert!(log.contains("#  Rank 15 Group  0 Pid"), "{log}");
    assert!(log.contains(" on     nccl-1 device  7 "), "{log}");
    // 1K to 8G (the script's DATA_MIN and DATA_MAX), the injected bandwidth at 2G–8G.
    assert_eq!(
        log.lines().filter(|l| !l.starts_with('#')).count(),
        24,
        "{log}"
    );
    let busbw = busbw_2g_8g(&log);
    assert!((busbw - 49.9).abs() < 0.005, "{busbw}");
    assert!(log.contains("\n# Out of bounds values : 0 OK\n# Avg bus bandwidth    : "));
    assert!(
        log.ends_with("\n#\n# Collective test concluded: all_gather_perf\n#\n"),
        "{log}"
    );
    let tail = cluster
        .kubectl_ok(&["logs", &leader, "-c", "nccl-test", "--tail=2"])
        .await;
    assert_eq!(tail, "# Collective test concluded: all_gather_perf\n#\n");
    // The peer's log is empty.
    let peer = done[1]["metadata"]["name"].as_str().unwrap();
    assert_eq!(
        cluster.kubectl_ok(&["logs", peer, "-c", "nccl-test"]).await,
        ""
    );

    // A later change of the setting does not rewrite a finished test's log.
    set_bandwidth(
        &cluster,
        json!({"nccl_bus_bandwidth_gbps": {"nvidia-h100-mega-80gb": 50.1}}),
    )
    .await;
    let later = cluster
        .kubectl_ok(&["logs", &leader, "-c", "nccl-test"])
        .await;
    assert_eq!(later, log);

    // kubectl deletes in the background: the pods go with the Job.
    let out = cluster.kubectl_ok(&["delete", "job", "nccl"]).await;
    assert!(out.contains("job.batch \"nccl\" deleted"), "{out}");
    assert!(pods_of(&cluster).await.is_empty());
}

async fn pods_of(cluster: &Cluster) -> Vec<Value> {
    pods(cluster, "nccl").await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_nccl_test_whose_networks_are_missing_fails_its_job() {
    let cluster = gpu_cluster(30.0).await;
    // vpc1 and vpc2 were never made: the pods have no GPU NICs.
    cluster
        .kubectl_stdin(
            &["apply", "-f", "-"],
            Some(&nccl_job("nccl", &["vpc1", "vpc2"], "")),
        )
        .await;
    let leader = pods_of(&cluster).await[0]["metadata"]["name"]
        .as_str()
        .unwrap()
        .to_string();
    cluster.sim.advance_secs(30.0);
    let job = json(&cluster, &["get", "job", "nccl"]).await;
    let status = &job["status"];
    // The leader failed; the peer stopped with it, as it does after any test.
    assert_eq!(status["failed"], 1, "{status:#}");
    assert_eq!(status["succeeded"], 1, "{status:#}");
    let kinds: Vec<&str> = status["conditions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["type"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["FailureTarget", "Failed"]);
    assert_eq!(status["conditions"][1]["reason"], "BackoffLimitExceeded");
    assert_eq!(
        status["conditions"][1]["message"],
        "Job has reached the specified backoff limit"
    );
    assert!(status["completionTime"].is_null());
    let out = cluster.kubectl_ok(&["get", "job", "nccl"]).await;
    assert!(out.contains("Failed"), "{out}");
    let left = pods_of(&cluster).await;
    assert_eq!(left.len(), 2, "{left:#?}");
    assert_eq!(left[0]["status"]["phase"], "Failed");
    assert_eq!(left[1]["status"]["phase"], "Succeeded");
    let test = &left[0]["status"]["containerStatuses"][0]["state"]["terminated"];
    assert_eq!(
        (test["exitCode"].as_i64(), test["reason"].as_str()),
        (Some(1), Some("Error"))
    );
    let log = cluster
        .kubectl_ok(&["logs", &leader, "-c", "nccl-test"])
        .await;
    assert!(
        log.contains("NCCL WARN NET/GPUDirect : no device found for the GPU NICs (Networks not found: vpc1, vpc2)"),
        "{log}"
    );
    assert!(!log.contains("Avg bus bandwidth"), "{log}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failed_pods_are_replaced_after_the_back_off_until_the_backoff_limit() {
    let cluster = gpu_cluster(5.0).await;
    // An NCCL test on a node without GPUs fails every time.
    let job = "apiVersion: batch/v1
kind: Job
metadata:
  name: flaky
spec:
  backoffLimit: 2
  template:
    spec:
      restartPolicy: Never
      nodeSelector:
        cloud.google.com/gke-nodepool: default-pool
      containers:
      - name: test
        image: busybox:1.36
        command: [/opt/nccl-tests/build/all_reduce_perf, -b, '8', -e, 1G]
";
    cluster
        .kubectl_stdin(&["apply", "-f", "-"], Some(job))
        .await;
    let names = |pods: &[Value]| -> Vec<String> {
        pods.iter()
            .map(|p| p["metadata"]["name"].as_str().unwrap().to_string())
            .collect()
    };
    let first = pods(&cluster, "flaky").await;
    assert_eq!(first.len(), 1);
    let name = &names(&first)[0];
    assert!(
        name.starts_with("flaky-") && name.len() == "flaky-".len() + 5,
        "{name}"
    );
    assert!(first[0]["metadata"]["labels"]["batch.kubernetes.io/job-completion-index"].is_null());

    // Fails at 5 s; replaced 10 s later; that one fails at 20 s, replaced 20 s later (40 s).
    cluster.sim.advance_secs(5.0);
    let job = json(&cluster, &["get", "job", "flaky"]).await;
    assert_eq!(job["status"]["failed"], 1, "{:#}", job["status"]);
    assert!(job["status"]["active"].is_null());
    cluster.sim.advance_secs(10.0);
    assert_eq!(pods(&cluster, "flaky").await.len(), 2);
    cluster.sim.advance_secs(5.0);
    let job = json(&cluster, &["get", "job", "flaky"]).await;
    assert_eq!(job["status"]["failed"], 2, "{:#}", job["status"]);
    cluster.sim.advance_secs(19.0);
    assert_eq!(pods(&cluster, "flaky").await.len(), 2);
    cluster.sim.advance_secs(1.0);
    assert_eq!(pods(&cluster, "flaky").await.len(), 3);
    cluster.sim.advance_secs(5.0);
    let job = json(&cluster, &["get", "job", "flaky"]).await;
    assert_eq!(job["status"]["failed"], 3, "{:#}", job["status"]);
    assert_eq!(job["status"]["conditions"][1]["type"], "Failed");
    let log = cluster.kubectl_ok(&["logs", "job/flaky"]).await;
    assert!(
        log.contains("'no CUDA-capable device is detected'"),
        "{log}"
    );
    // No more pods once the Job failed.
    cluster.sim.advance_secs(600.0);
    assert_eq!(pods(&cluster, "flaky").await.len(), 3);

    // --cascade=orphan keeps the pods, without their owner.
    cluster
        .kubectl_ok(&["delete", "job", "flaky", "--cascade=orphan"])
        .await;
    let left = pods(&cluster, "flaky").await;
    assert_eq!(left.len(), 3);
    assert!(
        left.iter()
            .all(|p| p["metadata"]["ownerReferences"].is_null())
    );
}

const QUEUES: &str = "apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata:
  name: a3-mega
spec:
  nodeLabels:
    cloud.google.com/gke-accelerator: nvidia-h100-mega-80gb
---
apiVersion: kueue.x-k8s.io/v1beta1
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
        nominalQuota: 8
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
async fn a_queued_job_stays_suspended_without_quota_and_runs_once_admitted() {
    let cluster = gpu_cluster(60.0).await;
    let manifests = a3ctl_sim::releases::kueue_manifests("v0.12.2").unwrap();
    cluster
        .kubectl_stdin(&["apply", "--server-side", "-f", "-"], Some(&manifests))
        .await;
    cluster.sim.advance_secs(5.0);
    cluster
        .kubectl_stdin(&["apply", "-f", "-"], Some(NETWORKS))
        .await;
    let (ok, out, err) = cluster
        .kubectl_stdin(&["apply", "-f", "-"], Some(QUEUES))
        .await;
    assert!(ok, "{out}\n{err}");
    let (ok, out, err) = cluster
        .kubectl_stdin(
            &["apply", "-f", "-"],
            Some(&nccl_job(
                "nccl",
                &["vpc1", "vpc2"],
                "kueue.x-k8s.io/queue-name: a3-mega",
            )),
        )
        .await;
    assert!(ok, "{out}\n{err}");

    // 16 GPUs wanted, 8 in the ClusterQueue: suspended, no pods.
    cluster.sim.advance_secs(120.0);
    let job = json(&cluster, &["get", "job", "nccl"]).await;
    assert_eq!(job["spec"]["suspend"], true);
    assert_eq!(job["status"]["conditions"][0]["type"], "Suspended");
    assert_eq!(job["status"]["conditions"][0]["reason"], "JobSuspended");
    assert!(pods_of(&cluster).await.is_empty());
    let out = cluster.kubectl_ok(&["get", "job", "nccl"]).await;
    assert!(out.contains("Suspended"), "{out}");
    let queue = json(&cluster, &["get", "clusterqueue", "a3-mega"]).await;
    assert_eq!(
        queue["status"]["pendingWorkloads"], 1,
        "{:#}",
        queue["status"]
    );
    assert_eq!(queue["status"]["admittedWorkloads"], 0);

    // Quota for two nodes: admitted, unsuspended, the flavor's labels added, pods made.
    cluster
        .kubectl_ok(&[
            "patch",
            "clusterqueue",
            "a3-mega",
            "--type=json",
            "-p",
            r#"[{"op": "replace", "path": "/spec/resourceGroups/0/flavors/0/resources/0/nominalQuota", "value": 16}]"#,
        ])
        .await;
    let job = json(&cluster, &["get", "job", "nccl"]).await;
    assert_eq!(job["spec"]["suspend"], false);
    assert_eq!(
        job["spec"]["template"]["spec"]["nodeSelector"]["cloud.google.com/gke-accelerator"],
        "nvidia-h100-mega-80gb"
    );
    assert_eq!(job["status"]["conditions"][0]["type"], "Suspended");
    assert_eq!(job["status"]["conditions"][0]["status"], "False");
    assert_eq!(job["status"]["conditions"][0]["reason"], "JobResumed");
    assert_eq!(pods_of(&cluster).await.len(), 2);
    let queue = json(&cluster, &["get", "clusterqueue", "a3-mega"]).await;
    assert_eq!(
        queue["status"]["admittedWorkloads"], 1,
        "{:#}",
        queue["status"]
    );
    assert_eq!(queue["status"]["pendingWorkloads"], 0);

    cluster.sim.advance_secs(60.0);
    let job = json(&cluster, &["get", "job", "nccl"]).await;
    assert_eq!(job["status"]["succeeded"], 2, "{:#}", job["status"]);
    let leader = pods_of(&cluster).await[0]["metadata"]["name"]
        .as_str()
        .unwrap()
        .to_string();
    let log = cluster
        .kubectl_ok(&["logs", &leader, "-c", "nccl-test"])
        .await;
    // The default for A3 Mega.
    let busbw = busbw_2g_8g(&log);
    assert!((busbw - 180.0).abs() < 0.005, "{busbw}");
    let queue = json(&cluster, &["get", "clusterqueue", "a3-mega"]).await;
    assert_eq!(
        queue["status"]["admittedWorkloads"], 0,
        "{:#}",
        queue["status"]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_workloads_endpoint_refuses_bad_bandwidths() {
    let cluster = gpu_cluster(1.0).await;
    let response = set_bandwidth(&cluster, json!({"tcp_bus_bandwidth_gbps": -1.0})).await;
    assert_eq!(response.status(), 400);
    let body: Value = response.json().await.unwrap();
    assert_eq!(
        body["error"],
        "`tcp_bus_bandwidth_gbps` must be a positive number of GB/s, not -1"
    );
    let response = set_bandwidth(&cluster, json!({"nccl_gbps": 1.0})).await;
    assert_eq!(response.status(), 400);
    let current: Value = reqwest::get(format!("{}/_sim/workloads", cluster.sim.base_url()))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(current["tcp_bus_bandwidth_gbps"], 2.5);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_world_file_sets_the_bandwidths_over_the_defaults() {
    let world = a3ctl_sim::WorldSpec::parse(
        "[workloads]\ntcp_bus_bandwidth_gbps = 3.5\n[workloads.nccl_bus_bandwidth_gbps]\n\"nvidia-h100-80gb\" = 24.9\n",
        "world.toml",
    )
    .unwrap();
    let sim = a3ctl_sim::start(a3ctl_sim::SimConfig {
        world,
        ..a3ctl_sim::SimConfig::default()
    })
    .await
    .unwrap();
    let current: Value = reqwest::get(format!("{}/_sim/workloads", sim.base_url()))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(
        current,
        json!({"nccl_bus_bandwidth_gbps": {"nvidia-b200": 360.0, "nvidia-h100-80gb": 24.9,
            "nvidia-h100-mega-80gb": 180.0, "nvidia-h200-141gb": 320.0},
            "tcp_bus_bandwidth_gbps": 3.5})
    );
    let bad = a3ctl_sim::WorldSpec::parse(
        "start_time = \"2026-03-02T00:00:00Z\"\n[workloads]\ntcp_bus_bandwidth_gbps = 0.0\n",
        "world.toml",
    );
    assert_eq!(
        bad.unwrap_err(),
        "world.toml:2:1: [workloads]: `tcp_bus_bandwidth_gbps` must be a positive number of GB/s, not 0"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deleted_pod_counts_as_a_failure_and_is_replaced_after_the_back_off() {
    let cluster = gpu_cluster(30.0).await;
    cluster
        .kubectl_stdin(&["apply", "-f", "-"], Some(NETWORKS))
        .await;
    let job = nccl_job("nccl", &["vpc1", "vpc2"], "").replace("backoffLimit: 0", "backoffLimit: 3");
    cluster
        .kubectl_stdin(&["apply", "-f", "-"], Some(&job))
        .await;
    let first = pods_of(&cluster).await;
    let peer = first[1]["metadata"]["name"].as_str().unwrap().to_string();
    // kubectl waits until the pod is gone: the Job controller lets go of it.
    let out = cluster.kubectl_ok(&["delete", "pod", &peer]).await;
    assert!(out.contains(&format!("pod \"{peer}\" deleted")), "{out}");
    let job = json(&cluster, &["get", "job", "nccl"]).await;
    assert_eq!(job["status"]["failed"], 1, "{:#}", job["status"]);
    assert_eq!(job["status"]["active"], 1);
    assert_eq!(pods_of(&cluster).await.len(), 1);

    // A new pod for index 1 after 10 s; the test then runs 30 s.
    cluster.sim.advance_secs(10.0);
    let now = pods_of(&cluster).await;
    assert_eq!(now.len(), 2);
    let replacement = now[1]["metadata"]["name"].as_str().unwrap();
    assert!(
        replacement.starts_with("nccl-1-") && replacement != peer,
        "{replacement}"
    );
    let wait = cluster.kubectl(&[
        "wait",
        "--for=condition=complete",
        "--timeout=30s",
        "job/nccl",
    ]);
    let advance = async {
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
        cluster.sim.advance_secs(30.0);
    };
    let ((ok, out, err), ()) = tokio::join!(wait, advance);
    assert!(ok, "{out}\n{err}");
    assert!(out.contains("job.batch/nccl condition met"), "{out}");
    let job = json(&cluster, &["get", "job", "nccl"]).await;
    assert_eq!(
        (&job["status"]["succeeded"], &job["status"]["failed"]),
        (&json!(2), &json!(1))
    );
    let out = cluster.kubectl_ok(&["get", "job", "nccl"]).await;
    assert!(out.contains("Complete   2/2           40s"), "{out}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn logs_of_a_container_that_has_not_started_are_refused() {
    let cluster = gpu_cluster(30.0).await;
    // Three GPU pods for two nodes: the third cannot be scheduled.
    let job = nccl_job("nccl", &[], "")
        .replace("completions: 2", "completions: 3")
        .replace("parallelism: 2", "parallelism: 3");
    cluster
        .kubectl_stdin(&["apply", "-f", "-"], Some(&job))
        .await;
    let pods = pods_of(&cluster).await;
    assert_eq!(pods.len(), 3);
    let pending = pods[2]["metadata"]["name"].as_str().unwrap();
    assert_eq!(pods[2]["status"]["phase"], "Pending");
    let (ok, _, err) = cluster.kubectl(&["logs", pending, "-c", "nccl-test"]).await;
    assert!(!ok);
    assert!(
        err.contains(&format!("pod {pending} does not have a host assigned")),
        "{err}"
    );
    // The leader waits for its third host: nothing ends.
    cluster.sim.advance_secs(600.0);
    let job = json(&cluster, &["get", "job", "nccl"]).await;
    assert!(job["status"]["conditions"].is_null(), "{:#}", job["status"]);
    assert_eq!(job["status"]["active"], 3);
    assert_eq!(job["status"]["ready"], 2);
}
