//! JobSet end to end (issue 26 item 10): the real binary installs JobSet's release before
//! Kueue's from the shipped A3 Mega blueprint; a JobSet of 2 × 8-GPU pods labelled for the queue,
//! applied with kubectl, is admitted by Kueue as one Workload and completes once its NCCL tests
//! end; `verify` checks JobSet and Kueue's JobSet integration and says what to paste when the
//! controller is gone; `enabled = false` installs nothing of JobSet.

use crate::common;

use common::TestContext;
use common::kubectl::Kubectl;
use serde_json::Value;

const MEGA: &str = "blueprints/a3-mega.toml";

/// A JobSet of two Jobs of one pod each, every pod asking for the node's 8 GPUs and running
/// nccl-tests' all-gather, labelled for the blueprint's queue.
const JOBSET: &str = r#"apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata:
  name: nccl-allgather
  namespace: default
  labels:
    kueue.x-k8s.io/queue-name: a3-queue
spec:
  failurePolicy:
    maxRestarts: 0
  replicatedJobs:
  - name: workers
    replicas: 2
    template:
      spec:
        parallelism: 1
        completions: 1
        backoffLimit: 0
        template:
          spec:
            restartPolicy: Never
            tolerations:
            - {key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}
            containers:
            - name: nccl-test
              image: us-docker.pkg.dev/gce-ai-infra/gpudirect-tcpxo/nccl-plugin-gpudirecttcpx-dev:v1.0.8-1
              command: [/third_party/nccl-tests/build/all_gather_perf, -b, 1K, -e, 8G, -g, "8"]
              resources:
                limits:
                  nvidia.com/gpu: 8
"#;

fn condition<'a>(object: &'a Value, kind: &str) -> &'a Value {
    object["status"]["conditions"]
        .as_array()
        .and_then(|c| c.iter().find(|c| c["type"] == kind))
        .unwrap_or(&Value::Null)
}

fn check<'a>(report: &'a Value, name: &str) -> &'a Value {
    report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == name)
        .unwrap_or_else(|| panic!("{name} in {report}"))
}

// See: issue 26 item 10 ("A JobSet of 2 × 8-GPU pods, labelled for the queue, is admitted by
// Kueue and completes in the sandbox").
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_jobset_of_two_8_gpu_pods_labelled_for_the_queue_is_admitted_and_completes() {
    let cx = TestContext::new().await;
    let run = cx.run(&["apply", MEGA, "--auto-approve"]).await.expect(0);
    assert!(
        run.stderr.contains("k8s.release/-/jobset"),
        "{}",
        run.stderr
    );
    // JobSet's manifests came from its GitHub release (the simulator's), before Kueue's.
    let downloads: Vec<String> = common::request_log(&cx)
        .await
        .iter()
        .filter_map(|r| r["path"].as_str())
        .filter(|p| p.contains("/releases/download/"))
        .map(str::to_string)
        .collect();
    assert_eq!(
        downloads,
        [
            "/github/kubernetes-sigs/jobset/releases/download/v0.12.0/manifests.yaml",
            "/github/kubernetes-sigs/kueue/releases/download/v0.17.1/manifests.yaml",
        ]
    );
    let kubectl = Kubectl::for_cluster(&cx, "a3mega").await;
    assert_eq!(
        kubectl.names(&["deployments", "-n", "jobset-system"]).await,
        ["jobset-controller-manager"]
    );

    // verify: JobSet served, its controller available, Kueue's integration on.
    let run = cx.run(&["verify", MEGA, "--json"]).await.expect(0);
    let report: Value = serde_json::from_str(&run.stdout).unwrap();
    for name in ["jobset/crd", "jobset/controller", "jobset/kueue"] {
        assert_eq!(check(&report, name)["status"], "pass", "{report:#}");
    }

    cx.write("jobset.yaml", JOBSET);
    let file = cx.path("jobset.yaml");
    kubectl.ok(&["apply", "-f", file.to_str().unwrap()]).await;
    let jobset = &kubectl.items(&["jobsets"]).await[0];
    assert_eq!(jobset["metadata"]["name"], "nccl-allgather");

    // Admitted at once (256 GPUs of quota, 16 asked), the pods run, the tests end.
    cx.sim.advance_secs(300.0);
    kubectl
        .ok(&[
            "wait",
            "--for=condition=Completed",
            "jobset/nccl-allgather",
            "--timeout=10s",
        ])
        .await;
    let jobset = &kubectl.items(&["jobsets"]).await[0];
    assert_eq!(jobset["status"]["terminalState"], "Completed", "{jobset:#}");
    assert_eq!(jobset["status"]["replicatedJobsStatus"][0]["succeeded"], 2);
    let jobs = kubectl
        .names(&[
            "jobs",
            "-l",
            "jobset.sigs.k8s.io/jobset-name=nccl-allgather",
        ])
        .await;
    assert_eq!(
        jobs,
        ["nccl-allgather-workers-0", "nccl-allgather-workers-1"]
    );
    // Each pod ran on its own A3 Mega node, chosen by the flavor Kueue admitted it to.
    let pods = kubectl
        .items(&[
            "pods",
            "-l",
            "jobset.sigs.k8s.io/jobset-name=nccl-allgather",
        ])
        .await;
    assert_eq!(pods.len(), 2);
    let nodes: std::collections::BTreeSet<&str> = pods
        .iter()
        .map(|p| p["spec"]["nodeName"].as_str().unwrap())
        .collect();
    assert_eq!(nodes.len(), 2, "{nodes:?}");
    assert!(pods.iter().all(|p| {
        p["spec"]["nodeSelector"]["a3ctl.dev/pool"] == "a3mega"
            && p["status"]["phase"] == "Succeeded"
    }));

    // One Workload, admitted to the blueprint's ClusterQueue with 16 GPUs of flavor `a3mega`.
    let workloads = kubectl.items(&["workloads", "-n", "default"]).await;
    assert_eq!(workloads.len(), 1, "{workloads:#?}");
    let workload = &workloads[0];
    assert_eq!(workload["spec"]["podSets"][0]["count"], 2);
    assert_eq!(condition(workload, "Admitted")["status"], "True");
    assert_eq!(condition(workload, "Finished")["reason"], "Succeeded");
    let assignment = &workload["status"]["admission"];
    assert_eq!(assignment["clusterQueue"], "a3-queue");
    assert_eq!(
        assignment["podSetAssignments"][0]["flavors"]["nvidia.com/gpu"],
        "a3mega"
    );
    assert_eq!(
        assignment["podSetAssignments"][0]["resourceUsage"]["nvidia.com/gpu"],
        "16"
    );

    // Without its controller, verify fails the checks that need it and says what to paste.
    kubectl
        .ok(&[
            "-n",
            "jobset-system",
            "delete",
            "deployment",
            "jobset-controller-manager",
        ])
        .await;
    let run = cx.run(&["verify", MEGA, "--json"]).await.expect(1);
    let report: Value = serde_json::from_str(&run.stdout).unwrap();
    let controller = check(&report, "jobset/controller");
    assert_eq!(controller["status"], "fail");
    assert_eq!(
        controller["hint"],
        "JobSet is enabled in the blueprint (`software.jobset`); run `a3ctl plan blueprints/a3-mega.toml` to see what is missing and `a3ctl apply blueprints/a3-mega.toml` to install it"
    );
    assert_eq!(check(&report, "jobset/kueue")["status"], "fail");
    // The hint's apply puts it back.
    cx.run(&["apply", MEGA, "--auto-approve"]).await.expect(0);
    cx.sim.advance_secs(120.0);
    let run = cx.run(&["verify", MEGA, "--json"]).await.expect(0);
    let report: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(check(&report, "jobset/controller")["status"], "pass");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn jobset_turned_off_installs_nothing_of_it_and_verify_does_not_check_it() {
    let cx = TestContext::new().await;
    let text = std::fs::read_to_string(cx.path(MEGA)).unwrap();
    let edited = text.replace(
        "[software.jobset]\nenabled = true\n",
        "[software.jobset]\nenabled = false\n",
    );
    assert_ne!(
        edited, text,
        "the shipped blueprint has the expected JobSet section"
    );
    cx.write("blueprints/no-jobset.toml", &edited);
    let run = cx
        .run(&["apply", "blueprints/no-jobset.toml", "--auto-approve"])
        .await
        .expect(0);
    assert!(!run.stderr.contains("jobset"), "{}", run.stderr);
    let kubectl = Kubectl::for_cluster(&cx, "a3mega").await;
    let crds = kubectl.names(&["customresourcedefinitions"]).await;
    assert!(crds.iter().all(|c| !c.contains("jobset")), "{crds:?}");
    let run = cx
        .run(&["verify", "blueprints/no-jobset.toml", "--json"])
        .await
        .expect(0);
    let report: Value = serde_json::from_str(&run.stdout).unwrap();
    let names: Vec<&str> = report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert!(names.iter().all(|n| !n.starts_with("jobset/")), "{names:?}");
}
