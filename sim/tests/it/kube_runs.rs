//! Workloads that run to an end, driven with kubectl: a GPU smoke-test Job (`nvidia-smi -L`) that
//! completes and logs its node's GPUs, a Job whose script fails, a declared outcome with a fault
//! that fails the first run and lets the retry succeed, and a long-running container that keeps
//! running ([`a3ctl_sim::kube::controllers::outcomes`]).

use crate::kube_support::{Cluster, latency, node, start};
use serde_json::{Value, json};

/// A cluster with a pool `gpu` of one A3 Mega node (driver installed at once) and a CPU node;
/// containers start 2 s after their pull.
async fn cluster() -> Cluster {
    let cluster = start(latency(&[("kube.pod.start", 2.0)]), false).await;
    cluster.set_pool("gpu", vec![node("gke-c1-gpu-0", "gpu", 8, true)]);
    cluster.set_pool(
        "default-pool",
        vec![node("gke-c1-default-0", "default-pool", 0, false)],
    );
    cluster
}

/// A Job of one pod running `command` in the pool `pool` (GPU pods ask for `gpus`).
fn job(name: &str, pool: &str, gpus: u32, command: &str, backoff_limit: u32) -> String {
    let limits = if gpus > 0 {
        format!("        resources:\n          limits:\n            nvidia.com/gpu: {gpus}\n")
    } else {
        String::new()
    };
    format!(
        r#"apiVersion: batch/v1
kind: Job
metadata:
  name: {name}
spec:
  backoffLimit: {backoff_limit}
  template:
    spec:
      restartPolicy: Never
      nodeSelector:
        cloud.google.com/gke-nodepool: {pool}
      tolerations:
      - key: nvidia.com/gpu
        operator: Exists
        effect: NoSchedule
      containers:
      - name: main
        image: us-docker.pkg.dev/p/r/train:v1
        command: {command}
{limits}"#
    )
}

/// `kubectl wait --for=condition=CONDITION job/NAME` while the clock moves `secs`.
async fn wait_while_advancing(cluster: &Cluster, condition: &str, job: &str, secs: f64) {
    let condition = format!("--for=condition={condition}");
    let target = format!("job/{job}");
    let args = ["wait", &condition, "--timeout=30s", &target];
    let wait = cluster.kubectl(&args);
    let advance = async {
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
        cluster.sim.advance_secs(secs);
    };
    let ((ok, out, err), ()) = tokio::join!(wait, advance);
    assert!(ok, "{out}\n{err}");
    assert!(
        out.contains(&format!("job.batch/{job} condition met")),
        "{out}"
    );
}

async fn json(cluster: &Cluster, args: &[&str]) -> Value {
    let mut all = args.to_vec();
    all.extend(["-o", "json"]);
    serde_json::from_str(&cluster.kubectl_ok(&all).await).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gpu_smoke_test_job_completes_and_logs_its_gpus() {
    let cluster = cluster().await;
    let manifest = job("smoke", "gpu", 8, "[nvidia-smi, -L]", 0);
    cluster
        .kubectl_stdin(&["apply", "-f", "-"], Some(&manifest))
        .await;
    // Started at 2 s, nvidia-smi runs 1 s: still running at 2.5 s.
    cluster.sim.advance_secs(2.5);
    let job_status = json(&cluster, &["get", "job", "smoke"]).await;
    assert_eq!(
        job_status["status"]["active"], 1,
        "{:#}",
        job_status["status"]
    );
    wait_while_advancing(&cluster, "complete", "smoke", 1.0).await;
    let log = cluster.kubectl_ok(&["logs", "job/smoke"]).await;
    let lines: Vec<&str> = log.lines().collect();
    assert_eq!(lines.len(), 8, "{log}");
    for (i, line) in lines.iter().enumerate() {
        assert!(
            line.starts_with(&format!("GPU {i}: NVIDIA H100 80GB HBM3 (UUID: GPU-")),
            "{line}"
        );
    }
    let out = cluster.kubectl_ok(&["get", "job", "smoke"]).await;
    assert!(out.contains("Complete   1/1           3s"), "{out}");
    let pods = json(&cluster, &["get", "pods", "-l", "job-name=smoke"]).await;
    let terminated = &pods["items"][0]["status"]["containerStatuses"][0]["state"]["terminated"];
    assert_eq!(
        (&terminated["exitCode"], &terminated["reason"]),
        (&json!(0), &json!("Completed"))
    );

    // The same program on the CPU node finds no driver.
    let manifest = job("nogpu", "default-pool", 0, "[nvidia-smi, -L]", 0);
    cluster
        .kubectl_stdin(&["apply", "-f", "-"], Some(&manifest))
        .await;
    wait_while_advancing(&cluster, "failed", "nogpu", 3.0).await;
    let log = cluster.kubectl_ok(&["logs", "job/nogpu"]).await;
    assert_eq!(
        log,
        "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the latest NVIDIA driver is installed and running.\n"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_job_whose_script_fails_fails_with_its_exit_code_and_log() {
    let cluster = cluster().await;
    let manifest = job(
        "boom",
        "default-pool",
        0,
        r#"[/bin/sh, -c, "echo starting; sleep 5 && echo failing && exit 3"]"#,
        0,
    );
    cluster
        .kubectl_stdin(&["apply", "-f", "-"], Some(&manifest))
        .await;
    cluster.sim.advance_secs(6.0);
    let job_status = json(&cluster, &["get", "job", "boom"]).await;
    assert_eq!(
        job_status["status"]["active"], 1,
        "{:#}",
        job_status["status"]
    );
    wait_while_advancing(&cluster, "failed", "boom", 1.0).await;
    assert_eq!(
        cluster.kubectl_ok(&["logs", "job/boom"]).await,
        "starting\nfailing\n"
    );
    let pods = json(&cluster, &["get", "pods", "-l", "job-name=boom"]).await;
    let status = &pods["items"][0]["status"];
    assert_eq!(status["phase"], "Failed");
    let terminated = &status["containerStatuses"][0]["state"]["terminated"];
    assert_eq!(
        (&terminated["exitCode"], &terminated["reason"]),
        (&json!(3), &json!("Error"))
    );
    let job_status = json(&cluster, &["get", "job", "boom"]).await;
    assert_eq!(
        job_status["status"]["conditions"][1]["reason"],
        "BackoffLimitExceeded"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_declared_fault_fails_the_first_run_and_the_retry_succeeds() {
    let cluster = cluster().await;
    let body = json!({"outcomes": [
        {"image": "us-docker.pkg.dev/p/r/train", "duration_secs": 5.0, "exit_code": 137,
         "log": "Killed\n", "times": 1},
        {"command": "train.py", "duration_secs": 60.0, "exit_code": 0, "log": "epoch 1 loss 0.5\n"},
    ]});
    let response = reqwest::Client::new()
        .put(format!("{}/_sim/workloads", cluster.sim.base_url()))
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let current: Value = response.json().await.unwrap();
    assert_eq!(current["outcomes"][0]["times"], 1);
    let manifest = job("train", "gpu", 8, "[python, train.py]", 1);
    cluster
        .kubectl_stdin(&["apply", "-f", "-"], Some(&manifest))
        .await;
    // The first pod starts at 2 s and is killed at 7 s; the replacement comes 10 s later and
    // runs 60 s.
    cluster.sim.advance_secs(7.0);
    let job_status = json(&cluster, &["get", "job", "train"]).await;
    assert_eq!(
        job_status["status"]["failed"], 1,
        "{:#}",
        job_status["status"]
    );
    cluster.sim.advance_secs(10.0);
    wait_while_advancing(&cluster, "complete", "train", 62.0).await;
    let job_status = json(&cluster, &["get", "job", "train"]).await;
    assert_eq!(
        (
            &job_status["status"]["succeeded"],
            &job_status["status"]["failed"]
        ),
        (&json!(1), &json!(1))
    );
    let pods = json(&cluster, &["get", "pods", "-l", "job-name=train"]).await;
    let mut logs = vec![];
    for pod in pods["items"].as_array().unwrap() {
        let name = pod["metadata"]["name"].as_str().unwrap();
        logs.push(cluster.kubectl_ok(&["logs", name]).await);
    }
    logs.sort();
    assert_eq!(logs, ["Killed\n", "epoch 1 loss 0.5\n"]);

    // A bad entry is refused and the outcomes stay.
    let response = reqwest::Client::new()
        .put(format!("{}/_sim/workloads", cluster.sim.base_url()))
        .json(&json!({"outcomes": [{"duration_secs": 1.0}]}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 400);
    let body: Value = response.json().await.unwrap();
    assert_eq!(
        body["error"],
        "`outcomes[0]` must name an `image` or a `command`"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_container_with_no_known_end_keeps_running() {
    let cluster = cluster().await;
    let manifest = job("server", "default-pool", 0, "[sleep, infinity]", 0);
    cluster
        .kubectl_stdin(&["apply", "-f", "-"], Some(&manifest))
        .await;
    cluster.sim.advance_secs(3600.0);
    let pods = json(&cluster, &["get", "pods", "-l", "job-name=server"]).await;
    assert_eq!(pods["items"][0]["status"]["phase"], "Running");
    let job_status = json(&cluster, &["get", "job", "server"]).await;
    assert_eq!(job_status["status"]["active"], 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_world_file_declares_outcomes() {
    let world = a3ctl_sim::WorldSpec::parse(
        "[[workloads.outcomes]]\nimage = \"trainer\"\nduration_secs = 30\nexit_code = 1\n",
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
        current["outcomes"],
        json!([{"image": "trainer", "duration_secs": 30.0, "exit_code": 1}])
    );
    let bad = a3ctl_sim::WorldSpec::parse(
        "[[workloads.outcomes]]\ncommand = \"x\"\nduration_secs = 1\nexit_code = 300\n",
        "world.toml",
    );
    assert!(
        bad.unwrap_err()
            .ends_with("[workloads]: `outcomes[0].exit_code` must be 0-255, not 300"),
    );
}
