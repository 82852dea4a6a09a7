//! The I/O side of `a3ctl verify`, through a cluster's Kubernetes API ([`ClusterApi`]): reading
//! the [`Snapshot`] the checks judge (GET and LIST only), and running the two-node NCCL test
//! ([`run_nccl_test`]). It never prints: progress goes to a callback, failures are typed
//! ([`NcclError`]) and worded by the command.

use super::nccl::{self, NAME, TEST_CONTAINER, TEST_NAMESPACE};
use super::{
    DraSnapshot, Expected, ExpectedRdma, JobSetSnapshot, KUEUE_GROUP, KUEUE_VERSIONS,
    KueueSnapshot, Snapshot,
};
use crate::cloud::CloudError;
use crate::cloud::kube::read::ClusterApi;
use crate::cloud::retry::{Backoff, Jitter, Look, Poller, Waited};
use crate::graph::software::NAMESPACE;
use serde_json::Value;
use std::time::Duration;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

const NETWORKING: &str = "networking.gke.io/v1";
/// Dynamic Resource Allocation's group; a3ctl reads its `v1` (Kubernetes 1.34+, which managed GPU
/// networking needs).
const DRA_GROUP: &str = "resource.k8s.io";

/// Reads everything the checks need.
pub async fn fetch(api: &ClusterApi<'_>, expected: &Expected) -> Result<Snapshot, CloudError> {
    // A list the cluster does not serve is `None`; an empty one is `Some([])`. Nodes and
    // DaemonSets are core kinds every cluster serves.
    let nodes = api.list("v1", "Node", None).await?.unwrap_or_default();
    // Served by every cluster; `None` would mean none exist.
    let daemonsets = api
        .list("apps/v1", "DaemonSet", Some(NAMESPACE))
        .await?
        .unwrap_or_default();
    let networks = api.list(NETWORKING, "Network", None).await?;
    let param_sets = api.list(NETWORKING, "GKENetworkParamSet", None).await?;
    let kueue = match expected.kueue.is_empty() {
        true => KueueSnapshot::Skipped,
        false => {
            let served = api.group_versions(KUEUE_GROUP).await?;
            // The server's preferred version when the checks understand it, else the newest
            // understood one it serves.
            let version = served
                .iter()
                .find(|v| KUEUE_VERSIONS.contains(&v.as_str()))
                .cloned();
            match version {
                None => KueueSnapshot::NotServed,
                Some(version) => {
                    let api_version = format!("{KUEUE_GROUP}/{version}");
                    // Each expected LocalQueue in its own namespace (a list is per namespace).
                    let mut local_queues = Vec::new();
                    for queue in &expected.kueue {
                        let found = api
                            .get(
                                &api_version,
                                "LocalQueue",
                                Some(&queue.namespace),
                                &queue.name,
                            )
                            .await?;
                        local_queues.extend(found);
                    }
                    let cluster_queues = api
                        .list(&api_version, "ClusterQueue", None)
                        .await?
                        .unwrap_or_default();
                    let flavors = api
                        .list(&api_version, "ResourceFlavor", None)
                        .await?
                        .unwrap_or_default();
                    KueueSnapshot::Served {
                        version,
                        local_queues,
                        cluster_queues,
                        flavors,
                    }
                }
            }
        }
    };
    let dra = match &expected.rdma {
        Some(ExpectedRdma::Managed {
            device_class,
            claim_template: (namespace, template),
            ..
        }) => {
            let served = api.group_versions(DRA_GROUP).await?;
            match served.iter().find(|v| v.as_str() == "v1") {
                None => DraSnapshot::default(),
                Some(version) => {
                    let api_version = format!("{DRA_GROUP}/{version}");
                    DraSnapshot {
                        version: Some(version.clone()),
                        device_class: api
                            .get(&api_version, "DeviceClass", None, device_class)
                            .await?,
                        claim_template: api
                            .get(
                                &api_version,
                                "ResourceClaimTemplate",
                                Some(namespace),
                                template,
                            )
                            .await?,
                        slices: api
                            .list(&api_version, "ResourceSlice", None)
                            .await?
                            .unwrap_or_default(),
                    }
                }
            }
        }
        _ => DraSnapshot::default(),
    };
    let jobset = match &expected.jobset {
        None => JobSetSnapshot::default(),
        Some(jobset) => {
            use crate::graph::jobset::{CONTROLLER, CRD, NAMESPACE as JOBSET_NAMESPACE};
            let (namespace, config, _) = super::jobset::KUEUE_CONFIG;
            JobSetSnapshot {
                crd: api
                    .get(
                        "apiextensions.k8s.io/v1",
                        "CustomResourceDefinition",
                        None,
                        CRD,
                    )
                    .await?,
                controller: api
                    .get("apps/v1", "Deployment", Some(JOBSET_NAMESPACE), CONTROLLER)
                    .await?,
                kueue_config: match jobset.kueue {
                    true => api.get("v1", "ConfigMap", Some(namespace), config).await?,
                    false => None,
                },
            }
        }
    };
    Ok(Snapshot {
        nodes,
        daemonsets,
        networks,
        param_sets,
        kueue,
        dra,
        jobset,
    })
}

/// Why the NCCL test did not produce a bandwidth.
#[derive(Debug)]
pub enum NcclError {
    /// A call failed: `what` names it, and the test's object ends the sentence (`read Job`,
    /// `apply Service`, `list the pods of Job`).
    Cloud { what: String, error: CloudError },
    /// The Job of an earlier run was still being deleted at the deadline.
    PreviousStillDeleting,
    /// The Job vanished while waiting for it.
    Disappeared,
    /// The deadline passed; `progress` is the Job's last reported state.
    TimedOut { progress: String },
    /// The Job failed; the last lines of pod 0's log.
    Failed { progress: String, log_tail: String },
    /// Pod 0 is gone, so its log cannot be read.
    LeaderGone,
    /// Pod 0's log is not nccl-tests output with a result table; the last lines of the log.
    Unreadable {
        error: super::nccl_output::ParseError,
        log_tail: String,
    },
}

fn cloud(what: &str) -> impl FnOnce(CloudError) -> NcclError + '_ {
    move |error| NcclError::Cloud {
        what: what.to_string(),
        error,
    }
}

/// Replaces any earlier test, applies `objects` (the Job and its Service), waits until the Job
/// completes or fails or `timeout` passes, polling every `poll`, and returns what pod 0's
/// nccl-tests printed (its per-size table and footer; [`nccl::judge`] compares it with the
/// floor). `progress` is told each new state of the Job.
pub async fn run_nccl_test(
    api: &ClusterApi<'_>,
    objects: &[Value],
    timeout: Duration,
    poll: Duration,
    progress: &(dyn Fn(&str) + Sync),
) -> Result<super::nccl_output::Output, NcclError> {
    let jitter = Jitter::new(0);
    let never = CancellationToken::new();
    let poller = Poller {
        // Every `poll`: between half of it and all of it.
        backoff: Backoff {
            initial: poll,
            max: poll,
            multiplier: 1.0,
        },
        jitter: &jitter,
        stop: &never,
        deadline: Instant::now() + timeout,
    };
    // The namespace the objects name (the declared queue's, [`nccl::test_namespace`]).
    let namespace = objects
        .iter()
        .find_map(|o| o["metadata"]["namespace"].as_str())
        .unwrap_or(TEST_NAMESPACE)
        .to_string();
    let namespace = namespace.as_str();
    let job = || api.get("batch/v1", "Job", Some(namespace), NAME);

    // A Job's pod template cannot change: an earlier run is deleted first.
    if job().await.map_err(cloud("read Job"))?.is_some() {
        progress("Deleting the previous test...");
        api.delete("batch/v1", "Job", Some(namespace), NAME)
            .await
            .map_err(cloud("delete Job"))?;
        let gone = poller
            .until(true, |_| async {
                match job().await {
                    Ok(None) => Look::Done(()),
                    Ok(Some(_)) => Look::Pending,
                    Err(e) => Look::Failed(e),
                }
            })
            .await;
        match gone {
            Waited::Done(()) => {}
            Waited::Failed(error) => return Err(cloud("read Job")(error)),
            Waited::TimedOut | Waited::Interrupted => return Err(NcclError::PreviousStillDeleting),
        }
    }
    for object in objects {
        let kind = object["kind"].as_str().unwrap_or("object");
        api.apply(object).await.map_err(|error| NcclError::Cloud {
            what: format!("apply {kind}"),
            error,
        })?;
    }

    let last = parking_lot::Mutex::new(String::new());
    let finished = poller
        .until(false, |_| async {
            let job = match job().await {
                Ok(Some(job)) => job,
                Ok(None) => return Look::Done(Err(NcclError::Disappeared)),
                Err(error) => return Look::Done(Err(cloud("read Job")(error))),
            };
            let status = &job["status"];
            // Counts a Job has not reported yet are zero.
            let count = |f: &str| status[f].as_u64().unwrap_or(0);
            let condition = |t: &str| {
                status["conditions"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .any(|c| c["type"] == t && c["status"] == "True")
            };
            let now = format!(
                "{} of {} pods succeeded, {} running, {} failed",
                count("succeeded"),
                nccl::HOSTS,
                count("active"),
                count("failed")
            );
            if condition("Complete") {
                return Look::Done(Ok(()));
            }
            if condition("Failed") {
                return Look::Done(Err(NcclError::Failed {
                    progress: now,
                    log_tail: String::new(),
                }));
            }
            let mut last = last.lock();
            if *last != now {
                progress(&now);
                *last = now;
            }
            Look::Pending
        })
        .await;
    let outcome = match finished {
        Waited::Done(outcome) => outcome,
        Waited::Failed(error) => Err(cloud("read Job")(error)),
        Waited::TimedOut | Waited::Interrupted => {
            return Err(NcclError::TimedOut {
                progress: last.into_inner(),
            });
        }
    };
    match outcome {
        Ok(()) => {
            let log = leader_log(api, namespace).await?;
            super::nccl_output::parse(&log).map_err(|error| NcclError::Unreadable {
                error,
                log_tail: tail(&log),
            })
        }
        Err(NcclError::Failed { progress, .. }) => {
            let log = leader_log(api, namespace).await?;
            Err(NcclError::Failed {
                progress,
                log_tail: tail(&log),
            })
        }
        Err(other) => Err(other),
    }
}

/// The last 20 lines of a log.
fn tail(log: &str) -> String {
    let tail: Vec<&str> = log.lines().rev().take(20).collect();
    tail.into_iter().rev().collect::<Vec<_>>().join("\n")
}

/// The test container's log of the Job's pod 0.
async fn leader_log(api: &ClusterApi<'_>, namespace: &str) -> Result<String, NcclError> {
    let pods = api
        .list("v1", "Pod", Some(namespace))
        .await
        .map_err(cloud("list the pods of Job"))?
        // Pods are a core kind: `None` (not served) cannot happen; read it as no pods.
        .unwrap_or_default();
    let label = |p: &Value, k: &str| p["metadata"]["labels"][k].as_str().map(str::to_string);
    let pod = pods
        .iter()
        .find(|p| {
            label(p, "job-name").as_deref() == Some(NAME)
                && label(p, "batch.kubernetes.io/job-completion-index").as_deref() == Some("0")
        })
        .ok_or(NcclError::LeaderGone)?;
    let name = pod["metadata"]["name"]
        .as_str()
        .ok_or(NcclError::LeaderGone)?;
    api.logs(namespace, name, TEST_CONTAINER)
        .await
        .map_err(|error| NcclError::Cloud {
            what: format!("read the log of pod `{namespace}/{name}` of Job"),
            error,
        })
}

/// Runs the access probes ([`super::access`]): replaces each probe pod, waits until every probe
/// is decided or `timeout` passes (polling every `poll`), deletes the pods, and returns one check
/// per probe (a probe still undecided at the deadline fails, with where its pod was).
pub async fn run_access_probes(
    api: &ClusterApi<'_>,
    probes: &[super::access::Probe],
    timeout: Duration,
    poll: Duration,
) -> Result<Vec<super::Check>, CloudError> {
    for probe in probes {
        api.delete("v1", "Pod", Some(&probe.namespace), probe.pod_name())
            .await?;
    }
    // A pod being deleted keeps its name for a moment: wait until the old one is gone.
    for probe in probes {
        for _ in 0..100 {
            if api
                .get("v1", "Pod", Some(&probe.namespace), probe.pod_name())
                .await?
                .is_none()
            {
                break;
            }
            tokio::time::sleep(poll).await;
        }
        api.apply(&probe.pod).await?;
    }
    let jitter = Jitter::new(0);
    let never = CancellationToken::new();
    let poller = Poller {
        backoff: Backoff {
            initial: poll,
            max: poll,
            multiplier: 1.0,
        },
        jitter: &jitter,
        stop: &never,
        deadline: Instant::now() + timeout,
    };
    let decided = parking_lot::Mutex::new(vec![None; probes.len()]);
    let last = parking_lot::Mutex::new(vec![String::new(); probes.len()]);
    let waited = poller
        .until(false, |_| async {
            for (i, probe) in probes.iter().enumerate() {
                if decided.lock()[i].is_some() {
                    continue;
                }
                let pod = match api
                    .get("v1", "Pod", Some(&probe.namespace), probe.pod_name())
                    .await
                {
                    Ok(Some(pod)) => pod,
                    Ok(None) => continue,
                    Err(e) => return Look::Failed(e),
                };
                let events = match api.list("v1", "Event", Some(&probe.namespace)).await {
                    Ok(events) => events.unwrap_or_default(),
                    Err(e) => return Look::Failed(e),
                };
                last.lock()[i] = pod["status"]["phase"]
                    .as_str()
                    .unwrap_or("Pending")
                    .to_string();
                decided.lock()[i] = super::access::judge(probe, &pod, &events);
            }
            if decided.lock().iter().all(Option::is_some) {
                Look::Done(())
            } else {
                Look::Pending
            }
        })
        .await;
    // The probe pods go whatever happened; a read that failed is reported after that.
    for probe in probes {
        let deleted = api
            .delete("v1", "Pod", Some(&probe.namespace), probe.pod_name())
            .await;
        if let (Err(e), false) = (deleted, matches!(waited, Waited::Failed(_))) {
            return Err(e);
        }
    }
    if let Waited::Failed(e) = waited {
        return Err(e);
    }
    let last = last.into_inner();
    Ok(decided
        .into_inner()
        .into_iter()
        .zip(probes)
        .zip(last)
        .map(|((check, probe), phase)| {
            check.unwrap_or_else(|| {
                super::Check::fail(
                    &probe.check,
                    format!(
                        "the probe pod {}/{} was still {} after {}s",
                        probe.namespace,
                        probe.pod_name(),
                        if phase.is_empty() { "Pending" } else { &phase },
                        timeout.as_secs()
                    ),
                    "see `kubectl describe pod` of the probe; a node pool without room keeps it Pending",
                )
            })
        })
        .collect())
}
