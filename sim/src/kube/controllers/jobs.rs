//! The Job controller (`pkg/controller/job`, Kubernetes 1.32): it makes a Job's pods, counts them
//! as they finish, and writes the Job's status; plus what the API server adds to a new Job, the
//! garbage collection of a deleted Job's pods, and the TTL-after-finished controller. The pods
//! themselves are scheduled and run by [`super::pods`]; how their containers end is
//! [`super::runs`]; Kueue's admission (which unsuspends queued Jobs) is [`super::kueue`].
//!
//! **Pods.** A running (not suspended) Job keeps `min(parallelism, what is left)` pods active.
//! An `Indexed` Job gives each completion index `0..completions` its own pod
//! `<job>-<index>-<5 characters>`, with the label and annotation
//! `batch.kubernetes.io/job-completion-index`, `hostname` `<job>-<index>` (the template's
//! `subdomain` is kept) and `JOB_COMPLETION_INDEX` in every container's environment; a
//! `NonIndexed` Job's pods are `<job>-<5 characters>`. Every pod carries the template's labels
//! (with the four selector labels the API server added to it), an owner reference to the Job
//! (`controller`, `blockOwnerDeletion`) and the finalizer `batch.kubernetes.io/job-tracking`,
//! removed once the pod is counted. The first pods are made when the Job starts (its creation, or
//! the write that unsuspended it); a failed pod is replaced after the controller's back-off (10 s,
//! doubling with each failure since the last success, at most 6 min).
//!
//! **Counting.** A pod that is `Succeeded` counts as a success (for its index), one that is
//! `Failed` or deleted before it succeeded as a failure. When the failures exceed `backoffLimit`
//! (or `activeDeadlineSeconds` passes) the Job fails — `FailureTarget`, then `Failed`, reason
//! `BackoffLimitExceeded` (`DeadlineExceeded`) — and its active pods are deleted; when every index
//! (or `completions` pods) succeeded it completes — `SuccessCriteriaMet`, then `Complete`, reason
//! `CompletionsReached`, and `completionTime`. The status carries `active`, `ready`,
//! `terminating`, `succeeded`, `failed`, `completedIndexes`, `startTime` and
//! `uncountedTerminatedPods`, as 1.32 writes them. A suspended Job has the condition `Suspended`
//! and no pods (a Job suspended while running loses its active pods, not counted as failures).
//!
//! **Deletion.** `propagationPolicy: Background` (kubectl's default) deletes the Job at once and
//! its pods at the next controller pass; `Foreground` deletes the pods with it; `Orphan` — and
//! no policy, batch/v1's default — leaves them, without their owner reference and finalizer.
//! `ttlSecondsAfterFinished` deletes a finished Job (and its pods) that long after it finished.
//!
//! Not simulated: `backoffLimitPerIndex`, `podFailurePolicy`, `successPolicy`,
//! `podReplacementPolicy: Failed` (pods are removed as soon as they are deleted, so nothing is
//! ever `terminating`), `managedBy`, restarts under `restartPolicy: OnFailure` (a failing
//! container fails its pod), the Job's events, and pods the API server refuses (a Job whose
//! ServiceAccount is missing makes no pods and says nothing).

use super::runs::{JOB_INDEX, JOB_UID};
use super::{Clock, generation_since, hash, set_status};
use crate::clock::SimTime;
use crate::kube::KubeCluster;
use crate::kube::admission;
use crate::kube::store::{object_key, split_key};
pub use crate::state::kube::{Counted, Finish, JobRun};
use serde_json::{Value, json};
use std::collections::BTreeSet;

/// The finalizer that keeps a Job's pod until the controller counted it.
pub const FINALIZER: &str = "batch.kubernetes.io/job-tracking";
/// Kueue's queue label.
pub const QUEUE_LABEL: &str = "kueue.x-k8s.io/queue-name";

/// What the API server adds to a Job it creates (the Job strategy's `generateSelector`: the
/// selector on the Job's uid and the four labels on its pod template; the 1.32 defaults), and
/// Kueue's mutating webhook: a Job with a queue label is made suspended while Kueue runs.
pub fn on_create(cluster: &KubeCluster, job: &mut Value) {
    let uid = job["metadata"]["uid"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let name = job["metadata"]["name"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    if job["spec"]["manualSelector"] != true {
        job["spec"]["selector"] = json!({"matchLabels": {JOB_UID: uid}});
        for (key, value) in [
            (JOB_UID, &uid),
            ("batch.kubernetes.io/job-name", &name),
            ("controller-uid", &uid),
            ("job-name", &name),
        ] {
            job["spec"]["template"]["metadata"]["labels"][key] = json!(value);
        }
    }
    if job["spec"]["podReplacementPolicy"].is_null() {
        job["spec"]["podReplacementPolicy"] = json!("TerminatingOrFailed");
    }
    if job["spec"]["completionMode"] == "Indexed" && job["spec"]["completions"].is_null() {
        job["spec"]["completions"] = job["spec"]["parallelism"].clone();
    }
    let queued = job["metadata"]["labels"][QUEUE_LABEL]
        .as_str()
        .is_some_and(|q| !q.is_empty());
    if queued && super::kueue::installed(cluster) {
        job["spec"]["suspend"] = json!(true);
    }
}

/// What a Job's deletion does to its pods (`propagationPolicy` from the delete options or the
/// query; batch/v1 orphans them by default).
pub fn on_delete(cluster: &mut KubeCluster, job: &Value, policy: Option<&str>) {
    let uid = job["metadata"]["uid"].as_str().unwrap_or_default();
    let namespace = job["metadata"]["namespace"].as_str().unwrap_or_default();
    let pods = owned_pods(cluster, namespace, uid);
    for (name, mut pod) in pods {
        match policy {
            Some("Background") => {}
            Some("Foreground") => {
                cluster.store.remove("", "pods", namespace, &name);
            }
            _ => {
                if let Some(owners) = pod["metadata"]["ownerReferences"].as_array_mut() {
                    owners.retain(|o| o["uid"] != uid);
                    if owners.is_empty()
                        && let Some(meta) = pod["metadata"].as_object_mut()
                    {
                        meta.remove("ownerReferences");
                    }
                }
                drop_finalizer(&mut pod);
                cluster.store.put("", "pods", namespace, &name, pod);
            }
        }
    }
}

fn drop_finalizer(pod: &mut Value) {
    if let Some(finalizers) = pod["metadata"]["finalizers"].as_array_mut() {
        finalizers.retain(|f| f != FINALIZER);
        if finalizers.is_empty()
            && let Some(meta) = pod["metadata"].as_object_mut()
        {
            meta.remove("finalizers");
        }
    }
}

/// The pods (name → object) whose controlling owner is the Job `uid`.
fn owned_pods(cluster: &KubeCluster, namespace: &str, uid: &str) -> Vec<(String, Value)> {
    cluster
        .store
        .list("", "pods", Some(namespace))
        .into_iter()
        .filter(|p| owner_uid(p) == Some(uid))
        .map(|p| {
            let name = p["metadata"]["name"].as_str().unwrap_or_default();
            (name.to_string(), p.clone())
        })
        .collect()
}

/// The uid of a pod's controlling Job.
fn owner_uid(pod: &Value) -> Option<&str> {
    pod["metadata"]["ownerReferences"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|o| o["kind"] == "Job" && o["controller"] == true)
        .and_then(|o| o["uid"].as_str())
}

fn index_of(pod: &Value) -> Option<u32> {
    pod["metadata"]["annotations"][JOB_INDEX]
        .as_str()
        .and_then(|i| i.parse().ok())
}

fn phase(pod: &Value) -> &str {
    pod["status"]["phase"].as_str().unwrap_or_default()
}

fn deleted(object: &Value) -> bool {
    object["metadata"].get("deletionTimestamp").is_some()
}

/// When a pod finished: its last container's end, else `now`.
fn finished_at(cluster: &KubeCluster, key: &str, now: SimTime) -> SimTime {
    cluster
        .controllers
        .pods
        .get(key)
        .and_then(|r| r.ends.values().map(|e| e.at).max())
        .unwrap_or(now)
        .min(now)
}

/// Deletes pods whose Job is gone (the garbage collector, background propagation) and Jobs whose
/// `ttlSecondsAfterFinished` passed.
fn collect_garbage(cluster: &mut KubeCluster, now: SimTime) {
    let expired: Vec<(String, String, String)> = cluster
        .store
        .keys("batch", "jobs")
        .into_iter()
        .filter_map(|key| {
            let job = cluster.store.objects.get(&key)?;
            let ttl = job["spec"]["ttlSecondsAfterFinished"].as_u64()?;
            let run = cluster.controllers.jobs.get(&key)?;
            let finish = run.finished.as_ref()?;
            (finish.at.plus_ms(ttl * 1000) <= now).then(|| {
                let (_, _, ns, name) = split_key(&key)?;
                Some((key.clone(), ns.to_string(), name.to_string()))
            })?
        })
        .collect();
    for (key, namespace, name) in expired {
        cluster.store.remove("batch", "jobs", &namespace, &name);
        cluster.controllers.jobs.remove(&key);
    }
    let jobs: BTreeSet<String> = cluster
        .store
        .list("batch", "jobs", None)
        .into_iter()
        .filter_map(|j| j["metadata"]["uid"].as_str().map(str::to_string))
        .collect();
    let orphans: Vec<(String, String)> = cluster
        .store
        .list("", "pods", None)
        .into_iter()
        .filter(|p| owner_uid(p).is_some_and(|uid| !jobs.contains(uid)))
        .map(|p| {
            let ns = p["metadata"]["namespace"].as_str().unwrap_or_default();
            let name = p["metadata"]["name"].as_str().unwrap_or_default();
            (ns.to_string(), name.to_string())
        })
        .collect();
    for (namespace, name) in orphans {
        cluster.store.remove("", "pods", &namespace, &name);
    }
}

/// Brings every Job to `clock.now`: counts finished and deleted pods, decides the Job's end,
/// makes the pods it still needs and writes its status. Runs before and after the pods are
/// advanced, so pods made now are scheduled now and pods that finished now are counted now.
pub fn sync(cluster: &mut KubeCluster, clock: &Clock) {
    collect_garbage(cluster, clock.now);
    let keys = cluster.store.keys("batch", "jobs");
    let live: BTreeSet<&String> = keys.iter().collect();
    cluster.controllers.jobs.retain(|k, _| live.contains(k));
    for key in &keys {
        sync_job(cluster, clock, key);
    }
}

fn sync_job(cluster: &mut KubeCluster, clock: &Clock, key: &str) {
    let now = clock.now;
    let Some(job) = cluster.store.objects.get(key).cloned() else {
        return;
    };
    if deleted(&job) {
        return;
    }
    let Some((_, _, namespace, _)) = split_key(key) else {
        return;
    };
    let namespace = namespace.to_string();
    let uid = job["metadata"]["uid"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let mut run = match cluster.controllers.jobs.get(key) {
        Some(run) if run.uid == uid => run.clone(),
        _ => JobRun {
            uid: uid.clone(),
            ..JobRun::default()
        },
    };
    let spec = &job["spec"];
    let indexed = spec["completionMode"] == "Indexed";
    let completions = spec["completions"].as_u64().map(|c| c as u32);
    let parallelism = spec["parallelism"].as_u64().unwrap_or(1) as u32;
    let backoff_limit = spec["backoffLimit"].as_u64().unwrap_or(6) as usize;
    let (_, written) = generation_since(&cluster.store, key);

    // Suspension.
    let suspended = spec["suspend"] == true;
    if suspended {
        if run.suspended.is_none() {
            run.suspended = Some(written.min(now));
        }
        if run.finished.is_none() {
            for (pod_name, pod) in owned_pods(cluster, &namespace, &uid) {
                if !matches!(phase(&pod), "Succeeded" | "Failed") {
                    cluster.store.remove("", "pods", &namespace, &pod_name);
                }
            }
        }
    } else {
        if run.suspended.take().is_some() {
            run.resumed = Some(written.min(now));
        }
        if run.started.is_none() || run.resumed.is_some_and(|r| run.started < Some(r)) {
            run.started = Some(written.min(now));
        }
    }

    // Counting.
    for (pod_name, mut pod) in owned_pods(cluster, &namespace, &uid) {
        let pod_uid = pod["metadata"]["uid"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        let pod_key = object_key("", "pods", &namespace, &pod_name);
        let outcome = match phase(&pod) {
            "Succeeded" => Some(true),
            "Failed" => Some(false),
            _ if deleted(&pod) => Some(false),
            _ => None,
        };
        let Some(succeeded) = outcome else {
            continue;
        };
        run.counted.entry(pod_uid).or_insert_with(|| Counted {
            index: index_of(&pod),
            at: if deleted(&pod) && !succeeded {
                now
            } else {
                finished_at(cluster, &pod_key, now)
            },
            succeeded,
        });
        if deleted(&pod) {
            cluster.store.remove("", "pods", &namespace, &pod_name);
        } else if pod["metadata"]["finalizers"]
            .as_array()
            .is_some_and(|f| f.iter().any(|x| x == FINALIZER))
        {
            drop_finalizer(&mut pod);
            cluster.store.put("", "pods", &namespace, &pod_name, pod);
        }
    }
    let succeeded: Vec<&Counted> = run.counted.values().filter(|c| c.succeeded).collect();
    let failed: Vec<&Counted> = run.counted.values().filter(|c| !c.succeeded).collect();
    let done_indexes: BTreeSet<u32> = succeeded.iter().filter_map(|c| c.index).collect();

    // The end.
    if run.finished.is_none() && !suspended {
        let wanted = completions.unwrap_or(1);
        let complete = if indexed {
            (0..wanted).all(|i| done_indexes.contains(&i))
        } else {
            succeeded.len() as u32 >= wanted
        };
        let mut failures: Vec<SimTime> = failed.iter().map(|c| c.at).collect();
        failures.sort();
        let deadline = spec["activeDeadlineSeconds"]
            .as_u64()
            .zip(run.started)
            .map(|(secs, started)| started.plus_ms(secs * 1000));
        if complete {
            let at = succeeded.iter().map(|c| c.at).max().unwrap_or(now);
            run.finished = Some(Finish {
                at,
                complete: true,
                reason: "CompletionsReached".into(),
                message: "Reached expected number of succeeded pods".into(),
            });
        } else if failures.len() > backoff_limit {
            run.finished = Some(Finish {
                at: failures[backoff_limit],
                complete: false,
                reason: "BackoffLimitExceeded".into(),
                message: "Job has reached the specified backoff limit".into(),
            });
        } else if let Some(deadline) = deadline.filter(|d| *d <= now) {
            run.finished = Some(Finish {
                at: deadline,
                complete: false,
                reason: "DeadlineExceeded".into(),
                message: "Job was active longer than specified deadline".into(),
            });
        }
        if run.finished.is_some() {
            for (pod_name, pod) in owned_pods(cluster, &namespace, &uid) {
                if !matches!(phase(&pod), "Succeeded" | "Failed") {
                    cluster.store.remove("", "pods", &namespace, &pod_name);
                }
            }
        }
    }

    // New pods.
    if run.finished.is_none()
        && !suspended
        && let Some(started) = run.started
    {
        let active: Vec<Value> = owned_pods(cluster, &namespace, &uid)
            .into_iter()
            .map(|(_, p)| p)
            .filter(|p| !deleted(p) && !matches!(phase(p), "Succeeded" | "Failed"))
            .collect();
        // The back-off after failures since the last success.
        let last_success = succeeded.iter().map(|c| c.at).max();
        let mut recent: Vec<SimTime> = failed
            .iter()
            .map(|c| c.at)
            .filter(|t| last_success.is_none_or(|s| *t > s))
            .collect();
        recent.sort();
        let at = match recent.last() {
            Some(last) => {
                let shift = (recent.len() as u32 - 1).min(6);
                last.plus_ms((10_000u64 << shift).min(360_000)).max(started)
            }
            None => started,
        };
        if at <= now {
            let wanted: Vec<Option<u32>> = if indexed {
                let busy: BTreeSet<u32> = active.iter().filter_map(index_of).collect();
                (0..completions.unwrap_or(1))
                    .filter(|i| !done_indexes.contains(i) && !busy.contains(i))
                    .map(Some)
                    .collect()
            } else {
                let left =
                    completions.map_or(parallelism, |c| c.saturating_sub(succeeded.len() as u32));
                vec![None; left.min(parallelism) as usize]
            };
            let room = (parallelism as usize).saturating_sub(active.len());
            for index in wanted.into_iter().take(room) {
                run.made += 1;
                make_pod(cluster, clock, &job, index, run.made, at);
            }
        }
    }

    let status = job_status(cluster, clock, &job, &run);
    set_status(&mut cluster.store, key, status);
    cluster.controllers.jobs.insert(key.to_string(), run);
}

/// Makes one pod of `job` (for `index`), as made at `at`.
fn make_pod(
    cluster: &mut KubeCluster,
    clock: &Clock,
    job: &Value,
    index: Option<u32>,
    serial: u64,
    at: SimTime,
) {
    let namespace = job["metadata"]["namespace"].as_str().unwrap_or_default();
    let job_name = job["metadata"]["name"].as_str().unwrap_or_default();
    let uid = job["metadata"]["uid"].as_str().unwrap_or_default();
    let template = &job["spec"]["template"];
    let prefix = match index {
        Some(i) => format!("{job_name}-{i}-"),
        None => format!("{job_name}-"),
    };
    const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
    let mut h = hash(&format!("{uid}/{serial}"));
    let suffix: String = (0..5)
        .map(|_| {
            let c = ALPHABET[(h % 27) as usize] as char;
            h /= 27;
            c
        })
        .collect();
    let name = format!("{prefix}{suffix}");
    let mut labels = template["metadata"]["labels"].clone();
    let mut annotations = template["metadata"]["annotations"].clone();
    let mut spec = template["spec"].clone();
    if let Some(i) = index {
        labels[JOB_INDEX] = json!(i.to_string());
        annotations[JOB_INDEX] = json!(i.to_string());
        if spec["hostname"].as_str().is_none_or(str::is_empty) {
            spec["hostname"] = json!(format!("{job_name}-{i}"));
        }
        let env = json!({"name": "JOB_COMPLETION_INDEX", "valueFrom": {"fieldRef": {
            "apiVersion": "v1",
            "fieldPath": format!("metadata.annotations['{JOB_INDEX}']")}}});
        for list in ["initContainers", "containers"] {
            for c in spec[list].as_array_mut().into_iter().flatten() {
                match c["env"].as_array_mut() {
                    Some(vars) => vars.push(env.clone()),
                    None => c["env"] = json!([env.clone()]),
                }
            }
        }
    }
    let mut metadata = json!({
        "name": name,
        "generateName": prefix,
        "namespace": namespace,
        "labels": labels,
        "ownerReferences": [{"apiVersion": "batch/v1", "kind": "Job", "name": job_name,
            "uid": uid, "controller": true, "blockOwnerDeletion": true}],
        "finalizers": [FINALIZER],
    });
    if annotations.is_object() {
        metadata["annotations"] = annotations;
    }
    let mut pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": spec});
    if admission::pod_create(cluster, namespace, &mut pod).is_err() {
        return;
    }
    pod["metadata"]["uid"] = json!(cluster.store.next_uid());
    pod["metadata"]["creationTimestamp"] = json!(clock.ts(at));
    let key = object_key("", "pods", namespace, &name);
    cluster.store.generation_since.insert(key, (1, at));
    cluster.store.put("", "pods", namespace, &name, pod);
}

/// `0-2,4`: sorted indexes as ranges.
fn ranges(indexes: &BTreeSet<u32>) -> String {
    let mut out: Vec<String> = vec![];
    let mut iter = indexes.iter().copied().peekable();
    while let Some(first) = iter.next() {
        let mut last = first;
        while iter.peek() == Some(&(last + 1)) {
            last += 1;
            iter.next();
        }
        out.push(if first == last {
            first.to_string()
        } else {
            format!("{first}-{last}")
        });
    }
    out.join(",")
}

fn condition(kind: &str, status: bool, reason: &str, message: &str, at: &str) -> Value {
    json!({"type": kind, "status": if status { "True" } else { "False" },
        "lastProbeTime": at, "lastTransitionTime": at, "reason": reason, "message": message})
}

/// The Job's status, from its run and its pods.
fn job_status(cluster: &KubeCluster, clock: &Clock, job: &Value, run: &JobRun) -> Value {
    let namespace = job["metadata"]["namespace"].as_str().unwrap_or_default();
    let pods = owned_pods(cluster, namespace, &run.uid);
    let active: Vec<&Value> = pods
        .iter()
        .map(|(_, p)| p)
        .filter(|p| !deleted(p) && !matches!(phase(p), "Succeeded" | "Failed"))
        .collect();
    let ready = active
        .iter()
        .filter(|p| {
            p["status"]["conditions"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|c| c["type"] == "Ready" && c["status"] == "True")
        })
        .count();
    let succeeded = run.counted.values().filter(|c| c.succeeded).count();
    let failed = run.counted.len() - succeeded;
    let mut status = json!({});
    let mut conditions: Vec<Value> = vec![];
    if let Some(at) = run.suspended {
        conditions.push(condition(
            "Suspended",
            true,
            "JobSuspended",
            "Job suspended",
            &clock.ts(at),
        ));
    } else if let Some(at) = run.resumed {
        conditions.push(condition(
            "Suspended",
            false,
            "JobResumed",
            "Job resumed",
            &clock.ts(at),
        ));
    }
    if let Some(finish) = &run.finished {
        let at = clock.ts(finish.at);
        let (target, last) = if finish.complete {
            ("SuccessCriteriaMet", "Complete")
        } else {
            ("FailureTarget", "Failed")
        };
        conditions.push(condition(
            target,
            true,
            &finish.reason,
            &finish.message,
            &at,
        ));
        conditions.push(condition(last, true, &finish.reason, &finish.message, &at));
        if finish.complete {
            status["completionTime"] = json!(at);
        }
    }
    if !conditions.is_empty() {
        status["conditions"] = Value::Array(conditions);
    }
    if let Some(started) = run.started.filter(|_| run.suspended.is_none()) {
        status["startTime"] = json!(clock.ts(started));
    }
    if !active.is_empty() {
        status["active"] = json!(active.len());
    }
    if succeeded > 0 {
        status["succeeded"] = json!(succeeded);
    }
    if failed > 0 {
        status["failed"] = json!(failed);
    }
    if job["spec"]["completionMode"] == "Indexed" {
        let done: BTreeSet<u32> = run
            .counted
            .values()
            .filter(|c| c.succeeded)
            .filter_map(|c| c.index)
            .collect();
        if !done.is_empty() {
            status["completedIndexes"] = json!(ranges(&done));
        }
    }
    status["ready"] = json!(ready);
    status["terminating"] = json!(0);
    status["uncountedTerminatedPods"] = json!({});
    status
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn completed_indexes_print_as_ranges() {
        let set = |v: &[u32]| v.iter().copied().collect::<BTreeSet<u32>>();
        assert_eq!(ranges(&set(&[0, 1])), "0-1");
        assert_eq!(ranges(&set(&[0, 2, 3, 4, 7])), "0,2-4,7");
        assert_eq!(ranges(&set(&[])), "");
    }
}
