//! JobSets driven with kubectl 1.32 against the simulator's JobSet v0.12.0 and Kueue v0.17.1
//! releases: a JobSet labelled for a queue is made suspended, waits for quota with its Jobs
//! suspended and its one Workload pending, is admitted, runs its Jobs to an end and completes; a
//! failed Job fails a JobSet whose failure policy allows no restart.

use crate::kube_support::{Cluster, latency, node, start};
use serde_json::Value;

const QUEUES: &str = "apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata:
  name: a3mega
spec:
  nodeLabels:
    cloud.google.com/gke-accelerator: nvidia-h100-mega-80gb
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata:
  name: a3-queue
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [nvidia.com/gpu]
    flavors:
    - name: a3mega
      resources:
      - name: nvidia.com/gpu
        nominalQuota: 8
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata:
  name: a3-queue
  namespace: default
spec:
  clusterQueue: a3-queue
";

/// A JobSet of two Jobs of one 8-GPU pod each, running an NCCL all-gather test on the pool
/// `gpu` over the GPU Networks `networks` (none: over TCP); `extra` goes under `spec`.
fn jobset(name: &str, networks: &str, extra: &str) -> String {
    format!(
        r#"apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata:
  name: {name}
  labels:
    kueue.x-k8s.io/queue-name: a3-queue
spec:
{extra}
  replicatedJobs:
  - name: workers
    replicas: 2
    template:
      spec:
        parallelism: 1
        completions: 1
        backoffLimit: 0
        template:
          metadata:
            annotations:
              networking.gke.io/interfaces: '[{{"interfaceName":"eth0","network":"default"}}{networks}]'
          spec:
            restartPolicy: Never
            nodeSelector:
              cloud.google.com/gke-nodepool: gpu
            tolerations:
            - {{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}}
            containers:
            - name: nccl-test
              image: us-docker.pkg.dev/gce-ai-infra/gpudirect-tcpxo/nccl-plugin-gpudirecttcpx-dev:v1.0.8-1
              command: [/third_party/nccl-tests/build/all_gather_perf, -b, 1K, -e, 8G]
              resources:
                limits:
                  nvidia.com/gpu: 8
"#
    )
}

/// Two A3 Mega nodes in pool `gpu` and a CPU node, JobSet and Kueue installed and available, the
/// queue `a3-queue` with 8 GPUs.
async fn cluster() -> Cluster {
    let cluster = start(latency(&[("kube.nccl.test", 30.0)]), true).await;
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
    for manifests in [
        a3ctl_sim::releases::jobset_manifests("v0.12.0").unwrap(),
        a3ctl_sim::releases::kueue_manifests("v0.17.1").unwrap(),
    ] {
        let (ok, out, err) = cluster
            .kubectl_stdin(&["apply", "--server-side", "-f", "-"], Some(&manifests))
            .await;
        assert!(ok, "{out}\n{err}");
    }
    cluster.sim.advance_secs(60.0);
    let (ok, out, err) = cluster
        .kubectl_stdin(&["apply", "-f", "-"], Some(QUEUES))
        .await;
    assert!(ok, "{out}\n{err}");
    cluster
}

async fn json(cluster: &Cluster, args: &[&str]) -> Value {
    let mut all = args.to_vec();
    all.extend(["-o", "json"]);
    serde_json::from_str(&cluster.kubectl_ok(&all).await).unwrap()
}

fn condition<'a>(object: &'a Value, kind: &str) -> &'a Value {
    object["status"]["conditions"]
        .as_array()
        .and_then(|c| c.iter().find(|c| c["type"] == kind))
        .unwrap_or(&Value::Null)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_queued_jobset_waits_suspended_for_quota_then_its_jobs_run_and_it_completes() {
    let cluster = cluster().await;
    let (ok, out, err) = cluster
        .kubectl_stdin(&["apply", "-f", "-"], Some(&jobset("nccl", "", "")))
        .await;
    assert!(ok, "{out}\n{err}");
    cluster.sim.advance_secs(60.0);

    // Kueue's webhook suspended it; JobSet's defaulted it and made both Jobs, suspended.
    let js = json(&cluster, &["get", "jobset", "nccl"]).await;
    assert_eq!(js["spec"]["suspend"], true, "{js:#}");
    assert_eq!(js["spec"]["network"]["enableDNSHostnames"], true);
    assert_eq!(js["spec"]["successPolicy"]["operator"], "All");
    assert_eq!(condition(&js, "Suspended")["status"], "True");
    let jobs = json(
        &cluster,
        &["get", "jobs", "-l", "jobset.sigs.k8s.io/jobset-name=nccl"],
    )
    .await;
    let jobs = jobs["items"].as_array().unwrap().clone();
    let names: Vec<&str> = jobs
        .iter()
        .map(|j| j["metadata"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["nccl-workers-0", "nccl-workers-1"]);
    let labels = &jobs[1]["spec"]["template"]["metadata"]["labels"];
    assert_eq!(labels["jobset.sigs.k8s.io/replicatedjob-name"], "workers");
    assert_eq!(labels["jobset.sigs.k8s.io/job-index"], "1");
    assert_eq!(labels["jobset.sigs.k8s.io/global-replicas"], "2");
    assert_eq!(labels["jobset.sigs.k8s.io/job-global-index"], "1");
    assert_eq!(
        labels["jobset.sigs.k8s.io/job-key"].as_str().unwrap().len(),
        40
    );
    assert_eq!(jobs[0]["spec"]["suspend"], true);
    assert_eq!(jobs[0]["spec"]["template"]["spec"]["subdomain"], "nccl");
    assert_eq!(jobs[0]["metadata"]["ownerReferences"][0]["kind"], "JobSet");
    let service = json(&cluster, &["get", "service", "nccl"]).await;
    assert_eq!(service["spec"]["clusterIP"], "None");
    assert_eq!(
        service["spec"]["selector"]["jobset.sigs.k8s.io/jobset-name"],
        "nccl"
    );
    let pods = json(&cluster, &["get", "pods"]).await;
    assert_eq!(pods["items"].as_array().unwrap().len(), 0);

    // One Workload, one pod set of 2 pods, waiting: 16 GPUs wanted, 8 in the queue.
    let workloads = json(&cluster, &["get", "workloads"]).await;
    let workloads = workloads["items"].as_array().unwrap().clone();
    assert_eq!(workloads.len(), 1, "{workloads:#?}");
    let workload = &workloads[0];
    let name = workload["metadata"]["name"].as_str().unwrap();
    assert!(name.starts_with("jobset-nccl-") && name.len() == "jobset-nccl-".len() + 5);
    assert_eq!(workload["spec"]["podSets"][0]["name"], "workers");
    assert_eq!(workload["spec"]["podSets"][0]["count"], 2);
    assert_eq!(condition(workload, "QuotaReserved")["status"], "False");
    let queue = json(&cluster, &["get", "clusterqueue", "a3-queue"]).await;
    assert_eq!(
        queue["status"]["pendingWorkloads"], 1,
        "{:#}",
        queue["status"]
    );

    // Quota for both: admitted, resumed with the flavor's labels, pods made.
    cluster
        .kubectl_ok(&[
            "patch",
            "clusterqueue",
            "a3-queue",
            "--type=json",
            "-p",
            r#"[{"op": "replace", "path": "/spec/resourceGroups/0/flavors/0/resources/0/nominalQuota", "value": 16}]"#,
        ])
        .await;
    let js = json(&cluster, &["get", "jobset", "nccl"]).await;
    assert_eq!(js["spec"]["suspend"], false, "{js:#}");
    let job = json(&cluster, &["get", "job", "nccl-workers-0"]).await;
    assert_eq!(job["spec"]["suspend"], false);
    assert_eq!(
        job["spec"]["template"]["spec"]["nodeSelector"]["cloud.google.com/gke-accelerator"],
        "nvidia-h100-mega-80gb"
    );
    let workload = json(&cluster, &["get", "workload", name]).await;
    assert_eq!(condition(&workload, "Admitted")["status"], "True");
    assert_eq!(workload["status"]["admission"]["clusterQueue"], "a3-queue");
    let assignment = &workload["status"]["admission"]["podSetAssignments"][0];
    assert_eq!(assignment["flavors"]["nvidia.com/gpu"], "a3mega");
    assert_eq!(assignment["resourceUsage"]["nvidia.com/gpu"], "16");
    let pods = json(
        &cluster,
        &["get", "pods", "-l", "jobset.sigs.k8s.io/jobset-name=nccl"],
    )
    .await;
    assert_eq!(pods["items"].as_array().unwrap().len(), 2);

    // The tests end; both Jobs complete; the JobSet completes and gives its quota back.
    cluster.sim.advance_secs(120.0);
    cluster
        .kubectl_ok(&[
            "wait",
            "--for=condition=Completed",
            "jobset/nccl",
            "--timeout=5s",
        ])
        .await;
    let js = json(&cluster, &["get", "jobset", "nccl"]).await;
    assert_eq!(js["status"]["terminalState"], "Completed");
    assert_eq!(condition(&js, "Completed")["reason"], "AllJobsCompleted");
    assert_eq!(js["status"]["replicatedJobsStatus"][0]["succeeded"], 2);
    let workload = json(&cluster, &["get", "workload", name]).await;
    assert_eq!(condition(&workload, "Finished")["reason"], "Succeeded");
    let queue = json(&cluster, &["get", "clusterqueue", "a3-queue"]).await;
    assert_eq!(
        queue["status"]["admittedWorkloads"], 0,
        "{:#}",
        queue["status"]
    );
    let table = cluster.kubectl_ok(&["get", "jobsets"]).await;
    assert!(table.contains("Completed"), "{table}");

    // Deleting the JobSet takes its Jobs, Service and Workload with it.
    cluster.kubectl_ok(&["delete", "jobset", "nccl"]).await;
    for kind in ["jobs", "services", "workloads"] {
        let left = json(&cluster, &["get", kind, "-l", ""]).await;
        let owned = left["items"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|o| o["metadata"]["ownerReferences"][0]["kind"] == "JobSet")
            .count();
        assert_eq!(owned, 0, "{kind}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_job_fails_a_jobset_whose_failure_policy_allows_no_restart() {
    let cluster = cluster().await;
    cluster
        .kubectl_ok(&[
            "patch",
            "clusterqueue",
            "a3-queue",
            "--type=json",
            "-p",
            r#"[{"op": "replace", "path": "/spec/resourceGroups/0/flavors/0/resources/0/nominalQuota", "value": 16}]"#,
        ])
        .await;
    // The GPU Network `vpc1` does not exist: the tests find no GPU NIC and exit 1.
    let (ok, out, err) = cluster
        .kubectl_stdin(
            &["apply", "-f", "-"],
            Some(&jobset(
                "broken",
                r#",{"interfaceName":"eth1","network":"vpc1"}"#,
                "  failurePolicy:\n    maxRestarts: 0",
            )),
        )
        .await;
    assert!(ok, "{out}\n{err}");
    cluster.sim.advance_secs(120.0);
    cluster
        .kubectl_ok(&[
            "wait",
            "--for=condition=Failed",
            "jobset/broken",
            "--timeout=5s",
        ])
        .await;
    let js = json(&cluster, &["get", "jobset", "broken"]).await;
    assert_eq!(
        js["status"]["terminalState"], "Failed",
        "{:#}",
        js["status"]
    );
    assert_eq!(condition(&js, "Failed")["reason"], "ReachedMaxRestarts");
    assert!(condition(&js, "Completed").is_null());
    assert_eq!(js["status"]["restarts"], 0);
    let queue = json(&cluster, &["get", "clusterqueue", "a3-queue"]).await;
    assert_eq!(
        queue["status"]["admittedWorkloads"], 0,
        "{:#}",
        queue["status"]
    );
}
