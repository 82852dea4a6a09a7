//! The JobSet controller (kubernetes-sigs/jobset v0.12, `pkg/controllers/jobset_controller.go`)
//! and what JobSet's and Kueue's webhooks do to a new JobSet; Kueue's quota and admission of a
//! JobSet are [`super::kueue`]'s, the child Jobs run as [`super::jobs`] runs any Job.
//!
//! **Webhooks** ([`on_create`]). While JobSet's mutating webhook configuration exists, a new
//! JobSet gets JobSet's defaults (`api/jobset/v1alpha2/jobset_webhook.go`, `Default`):
//! `successPolicy.operator: All`, `startupPolicy.startupPolicyOrder: AnyOrder`,
//! `network.enableDNSHostnames: true`, and per replicated Job `completionMode: Indexed` and the
//! pod `restartPolicy: OnFailure`. While Kueue's JobSet integration is active ([`kueue_active`]),
//! a JobSet labelled `kueue.x-k8s.io/queue-name` is made suspended (Kueue's `mjobset.kb.io`,
//! kubernetes-sigs/kueue `pkg/controller/jobframework/base_webhook.go`).
//!
//! **Kueue's JobSet integration is active** once Kueue's controller is available, its
//! `kueue-manager-config` lists `jobset.x-k8s.io/jobset` in `integrations.frameworks` (an absent
//! ConfigMap counts as Kueue's default list, which has it), and the JobSet CRD is Established:
//! at Kueue's start if the CRD was there, otherwise at the first of Kueue's 20-second polls for the
//! API after it appeared (kubernetes-sigs/kueue `pkg/controller/jobframework/setup.go`,
//! `waitForAPI`, `APIRetryInterval`). That the ConfigMap is read at every tick rather than at
//! Kueue's start is the simulator's shortcut (Kueue reads it once; a guess that nobody edits it
//! without restarting Kueue).
//!
//! **The controller** runs while `jobset-system/jobset-controller-manager` is available; nothing
//! happens to a JobSet before. For each `replicatedJobs[]` entry it makes `replicas` (default 1)
//! Jobs named `<jobset>-<replicatedJob>-<index>` from the entry's template, with the JobSet's
//! labels and annotations on the Job and its pod template (`labelAndAnnotateObject`):
//! `jobset.sigs.k8s.io/jobset-name`, `replicatedjob-name`, `replicatedjob-replicas`,
//! `global-replicas`, `job-index`, `job-global-index`, `job-key` (SHA-1 of `<namespace>/<job>`)
//! and `restart-attempt`; an owner reference to the JobSet; the pod template's `subdomain` when
//! DNS hostnames are on; and `suspend` equal to the JobSet's. With DNS hostnames (the default) it
//! makes a headless Service named `network.subdomain` or the JobSet's name, selecting
//! `jobset-name`, `publishNotReadyAddresses: true`. When the JobSet is resumed (Kueue admitted it)
//! its suspended Jobs are resumed with the node selector of their replicated Job's template
//! (where Kueue put its flavor's labels); a JobSet suspended again suspends its running Jobs.
//!
//! **Status**: `replicatedJobsStatus` (per replicated Job: `ready`, `succeeded`, `failed`,
//! `active`, `suspended` child Jobs), `restarts`, the `Suspended` condition (reasons
//! `SuspendedJobs` / `ResumeJobs`), and the end: `Completed` (`AllJobsCompleted`, "jobset
//! completed successfully") once the success policy holds — `All` (the default): every Job of the
//! targeted replicated Jobs (all when none is named) succeeded; `Any`: one did — or `Failed` once a
//! Job failed and the failure policy allows no more restarts: no `failurePolicy` fails at once
//! (`FailedJobs`, "jobset failed due to one or more job failures"), `maxRestarts` (default 0)
//! reached fails with `ReachedMaxRestarts` ("jobset failed due to reaching max number of
//! restarts"), below it the JobSet restarts: its Jobs are deleted and made anew with the next
//! `restart-attempt` (`pkg/constants/constants.go`). `terminalState` says which. A finished
//! JobSet deletes its still-active Jobs.
//!
//! **Kueue's Workload**: a queued JobSet gets one Workload `jobset-<name>-<hash>` (the hash: the
//! first 5 hex digits of SHA-1 of kind, group, name and uid, `workload_names.go`) with one pod set
//! per replicated Job, `count` = `replicas × min(parallelism, completions)` (kubernetes-sigs/kueue
//! `pkg/controller/jobs/jobset/jobset_controller.go`, `podsCount`), and status conditions
//! `QuotaReserved` and `Admitted` with the admission (`clusterQueue`, `podSetAssignments`) once
//! [`super::kueue::admit`] admitted the JobSet, and `Finished` once it ended. The message of a
//! Workload still waiting for quota is the simulator's own (a guess; Kueue names the pod set and
//! the missing quantity).
//!
//! Not simulated: `startupPolicy: InOrder`, `dependsOn`, `coordinator`, exclusive placement, the
//! failure policy's `rules` (every failure counts), `ttlSecondsAfterFinished`, `managedBy`,
//! `volumeClaimPolicies`, in-place restarts, and events.

// GUESS(jobset-kueue-config-read): Kueue's `kueue-manager-config` is read at every tick, not once at Kueue's start
// GUESS(jobset-pending-message): the message of a JobSet's Workload still waiting for quota
use super::jobs::QUEUE_LABEL;
use super::{Clock, generation_since, set_status};
use crate::clock::SimTime;
use crate::kube::KubeCluster;
use crate::kube::store::{object_key, split_key};
pub use crate::state::kube::JobSetRun;
use serde_json::{Value, json};
use std::collections::BTreeMap;

pub const GROUP: &str = "jobset.x-k8s.io";
pub const API_VERSION: &str = "jobset.x-k8s.io/v1alpha2";
const JOBSET_NAME: &str = "jobset.sigs.k8s.io/jobset-name";
const RESTARTS: &str = "jobset.sigs.k8s.io/restart-attempt";
/// Kueue's poll for an integration's API that was not served at its start.
const KUEUE_API_RETRY_MS: u64 = 20_000;

fn available_since(cluster: &KubeCluster, namespace: &str, name: &str) -> Option<SimTime> {
    let key = object_key("apps", "deployments", namespace, name);
    cluster.controllers.available_since.get(&key).copied()
}

/// When the JobSet CRD was Established, if it is.
fn crd_established(cluster: &KubeCluster) -> Option<SimTime> {
    let key = object_key(
        "apiextensions.k8s.io",
        "customresourcedefinitions",
        "",
        "jobsets.jobset.x-k8s.io",
    );
    cluster
        .controllers
        .delays
        .get(&key)
        .map(|r| r.since.plus_ms(r.delay_ms))
}

/// Whether Kueue's configuration enables its JobSet integration (see the module doc).
fn kueue_lists_jobset(cluster: &KubeCluster) -> bool {
    let Some(config) = cluster
        .store
        .get("", "configmaps", "kueue-system", "kueue-manager-config")
    else {
        return true;
    };
    let text = config["data"]["controller_manager_config.yaml"]
        .as_str()
        .unwrap_or_default();
    let parsed: Value = serde_saphyr::from_str(text).unwrap_or(Value::Null);
    parsed["integrations"]["frameworks"]
        .as_array()
        .is_some_and(|f| f.iter().any(|f| f == "jobset.x-k8s.io/jobset"))
}

/// When Kueue's JobSet integration became active, if it has by `now` (see the module doc).
pub fn kueue_active(cluster: &KubeCluster, now: SimTime) -> Option<SimTime> {
    let kueue = available_since(cluster, "kueue-system", "kueue-controller-manager")?;
    let crd = crd_established(cluster)?;
    if !kueue_lists_jobset(cluster) {
        return None;
    }
    let at = if crd <= kueue {
        kueue
    } else {
        let polls = (crd.0 - kueue.0).div_ceil(KUEUE_API_RETRY_MS);
        kueue.plus_ms(polls * KUEUE_API_RETRY_MS)
    };
    (at <= now).then_some(at)
}

/// Sets the field at `pointer` to `value` unless it has one, making the objects on the way
/// (array indexes on the way must exist).
fn set_default(object: &mut Value, pointer: &str, value: Value) {
    if !object.pointer(pointer).is_none_or(Value::is_null) {
        return;
    }
    let mut slot = object;
    for part in pointer.split('/').filter(|p| !p.is_empty()) {
        slot = match (slot, part.parse::<usize>()) {
            (Value::Array(items), Ok(i)) => match items.get_mut(i) {
                Some(item) => item,
                None => return,
            },
            (Value::Array(_), Err(_)) => return,
            (other, _) => &mut other[part],
        };
    }
    *slot = value;
}

/// What JobSet's and Kueue's mutating webhooks do to a new JobSet (see the module doc).
pub fn on_create(cluster: &KubeCluster, jobset: &mut Value, now: SimTime) {
    let defaulting = cluster
        .store
        .get(
            "admissionregistration.k8s.io",
            "mutatingwebhookconfigurations",
            "",
            "jobset-mutating-webhook-configuration",
        )
        .is_some();
    if defaulting {
        set_default(jobset, "/spec/successPolicy/operator", json!("All"));
        set_default(
            jobset,
            "/spec/startupPolicy/startupPolicyOrder",
            json!("AnyOrder"),
        );
        let jobs = jobset["spec"]["replicatedJobs"]
            .as_array_mut()
            .map(|a| a.len())
            .unwrap_or(0);
        for i in 0..jobs {
            let template = format!("/spec/replicatedJobs/{i}/template/spec");
            set_default(
                jobset,
                &format!("{template}/completionMode"),
                json!("Indexed"),
            );
            set_default(
                jobset,
                &format!("{template}/template/spec/restartPolicy"),
                json!("OnFailure"),
            );
        }
        if jobs > 0 {
            set_default(jobset, "/spec/network/enableDNSHostnames", json!(true));
        }
    }
    let queued = jobset["metadata"]["labels"][QUEUE_LABEL]
        .as_str()
        .is_some_and(|q| !q.is_empty());
    if queued && kueue_active(cluster, now).is_some() {
        jobset["spec"]["suspend"] = json!(true);
    }
}

fn suspended(jobset: &Value) -> bool {
    jobset["spec"]["suspend"] == true
}

fn replicated_jobs(jobset: &Value) -> Vec<Value> {
    jobset["spec"]["replicatedJobs"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

fn replicas(rjob: &Value) -> u64 {
    rjob["replicas"].as_u64().unwrap_or(1)
}

/// Pods one Job of a replicated Job runs at once: `min(parallelism, completions)`.
fn pods_per_job(rjob: &Value) -> u64 {
    let spec = &rjob["template"]["spec"];
    let parallelism = spec["parallelism"].as_u64().unwrap_or(1);
    spec["completions"]
        .as_u64()
        .map_or(parallelism, |c| c.min(parallelism))
}

fn subdomain(jobset: &Value) -> String {
    jobset["spec"]["network"]["subdomain"]
        .as_str()
        .filter(|s| !s.is_empty())
        .or(jobset["metadata"]["name"].as_str())
        .unwrap_or_default()
        .to_string()
}

fn dns_hostnames(jobset: &Value) -> bool {
    jobset["spec"]["network"]["enableDNSHostnames"] == true
}

fn owner_reference(jobset: &Value) -> Value {
    json!({"apiVersion": API_VERSION, "kind": "JobSet",
        "name": jobset["metadata"]["name"], "uid": jobset["metadata"]["uid"],
        "controller": true, "blockOwnerDeletion": true})
}

fn controlled_by(object: &Value, uid: &str) -> bool {
    object["metadata"]["ownerReferences"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|o| o["controller"] == true && o["uid"] == uid)
}

fn owner_uid(object: &Value, kind: &str) -> Option<String> {
    object["metadata"]["ownerReferences"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|o| o["controller"] == true && o["kind"] == kind)
        .and_then(|o| o["uid"].as_str().map(str::to_string))
}

/// The resources one pod of a template asks for, and what a JobSet's pods ask for in all, for
/// Kueue: every replicated Job's pod requests × its pods.
pub fn requests(jobset: &Value) -> BTreeMap<String, f64> {
    let mut out = BTreeMap::new();
    for rjob in replicated_jobs(jobset) {
        let pods = (replicas(&rjob) * pods_per_job(&rjob)) as f64;
        for (resource, amount) in super::kueue::pod_requests(&rjob["template"]["spec"]["template"])
        {
            *out.entry(resource).or_insert(0.0) += amount * pods;
        }
    }
    out
}

/// Brings every JobSet to `clock.now` (see the module doc). Runs before the Job controller (so
/// Jobs made or resumed now start now) and after it (so Jobs that ended now end their JobSet now).
pub fn sync(cluster: &mut KubeCluster, clock: &Clock) {
    let keys = cluster.store.keys(GROUP, "jobsets");
    let uids: Vec<String> = keys
        .iter()
        .filter_map(|k| cluster.store.objects.get(k))
        .filter_map(|j| j["metadata"]["uid"].as_str().map(str::to_string))
        .collect();
    collect_garbage(cluster, &uids);
    cluster.controllers.jobsets.retain(|k, _| keys.contains(k));
    let Some(since) = available_since(cluster, "jobset-system", "jobset-controller-manager")
        .filter(|t| *t <= clock.now)
    else {
        return;
    };
    for key in &keys {
        sync_jobset(cluster, clock, key, since);
        workload(cluster, clock, key);
    }
}

/// Background deletion of what a deleted JobSet owned: its Jobs, its Service, its Workload.
fn collect_garbage(cluster: &mut KubeCluster, live: &[String]) {
    for (group, resource, kind) in [
        ("batch", "jobs", "JobSet"),
        ("", "services", "JobSet"),
        (super::kueue::GROUP, "workloads", "JobSet"),
    ] {
        for key in cluster.store.keys(group, resource) {
            let Some(object) = cluster.store.objects.get(&key) else {
                continue;
            };
            if owner_uid(object, kind).is_some_and(|uid| !live.contains(&uid))
                && let Some((_, _, namespace, name)) = split_key(&key)
            {
                let (namespace, name) = (namespace.to_string(), name.to_string());
                cluster.store.remove(group, resource, &namespace, &name);
            }
        }
    }
}

/// The child Jobs of a JobSet, by name.
fn child_jobs(cluster: &KubeCluster, namespace: &str, uid: &str) -> BTreeMap<String, Value> {
    cluster
        .store
        .list("batch", "jobs", Some(namespace))
        .into_iter()
        .filter(|j| controlled_by(j, uid))
        .filter_map(|j| Some((j["metadata"]["name"].as_str()?.to_string(), j.clone())))
        .collect()
}

fn job_condition(job: &Value, kind: &str) -> bool {
    job["status"]["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|c| c["type"] == kind && c["status"] == "True")
}

/// When a child Job ended, from the Job controller's record (else `now`).
fn job_end(cluster: &KubeCluster, namespace: &str, name: &str, now: SimTime) -> SimTime {
    let key = object_key("batch", "jobs", namespace, name);
    cluster
        .controllers
        .jobs
        .get(&key)
        .and_then(|r| r.finished.as_ref())
        .map_or(now, |f| f.at.min(now))
}

fn sync_jobset(cluster: &mut KubeCluster, clock: &Clock, key: &str, controller: SimTime) {
    let Some(jobset) = cluster.store.objects.get(key).cloned() else {
        return;
    };
    if jobset["metadata"].get("deletionTimestamp").is_some() {
        return;
    }
    let Some((_, _, namespace, name)) = split_key(key) else {
        return;
    };
    let (namespace, name) = (namespace.to_string(), name.to_string());
    let uid = jobset["metadata"]["uid"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let mut run = match cluster.controllers.jobsets.get(key) {
        Some(run) if run.uid == uid => run.clone(),
        _ => JobSetRun {
            uid: uid.clone(),
            ..JobSetRun::default()
        },
    };
    let (_, written) = generation_since(&cluster.store, key);
    let at = written.max(controller).min(clock.now);
    let is_suspended = suspended(&jobset);
    if is_suspended {
        run.suspended.get_or_insert(at);
    } else if run.suspended.take().is_some() {
        run.resumed = Some(at);
    }

    // The headless Service.
    if dns_hostnames(&jobset) {
        let service = subdomain(&jobset);
        if cluster
            .store
            .get("", "services", &namespace, &service)
            .is_none()
        {
            let object = json!({"apiVersion": "v1", "kind": "Service",
                "metadata": {"name": service, "namespace": namespace,
                    "uid": cluster.store.next_uid(), "creationTimestamp": clock.ts(at),
                    "ownerReferences": [owner_reference(&jobset)]},
                "spec": {"clusterIP": "None", "clusterIPs": ["None"], "type": "ClusterIP",
                    "selector": {JOBSET_NAME: name}, "publishNotReadyAddresses": true,
                    "sessionAffinity": "None", "ipFamilies": ["IPv4"],
                    "ipFamilyPolicy": "SingleStack", "internalTrafficPolicy": "Cluster"},
                "status": {"loadBalancer": {}}});
            cluster
                .store
                .put("", "services", &namespace, &service, object);
        }
    }

    let rjobs = replicated_jobs(&jobset);
    let mut children = child_jobs(cluster, &namespace, &uid);

    // The end, from the Jobs as they stand.
    if run.finished.is_none() {
        let failed: Vec<SimTime> = children
            .iter()
            .filter(|(_, j)| job_condition(j, "Failed"))
            .map(|(n, _)| job_end(cluster, &namespace, n, clock.now))
            .collect();
        if let Some(first) = failed.iter().min().copied() {
            let policy = &jobset["spec"]["failurePolicy"];
            let max = policy["maxRestarts"].as_u64().unwrap_or(0) as u32;
            if policy.is_null() {
                run.finished = Some((
                    first,
                    false,
                    "FailedJobs".into(),
                    "jobset failed due to one or more job failures".into(),
                ));
            } else if run.restarts >= max {
                run.finished = Some((
                    first,
                    false,
                    "ReachedMaxRestarts".into(),
                    "jobset failed due to reaching max number of restarts".into(),
                ));
            } else {
                run.restarts += 1;
                for job in children.keys() {
                    cluster.store.remove("batch", "jobs", &namespace, job);
                }
                children.clear();
            }
        } else if success(&jobset, &rjobs, &children) {
            let end = children
                .keys()
                .map(|n| job_end(cluster, &namespace, n, clock.now))
                .max()
                .unwrap_or(clock.now);
            run.finished = Some((
                end,
                true,
                "AllJobsCompleted".into(),
                "jobset completed successfully".into(),
            ));
        }
        if run.finished.as_ref().is_some_and(|f| !f.1) {
            for (job, object) in &children {
                if !job_condition(object, "Complete") && !job_condition(object, "Failed") {
                    cluster.store.remove("batch", "jobs", &namespace, job);
                }
            }
            children = child_jobs(cluster, &namespace, &uid);
        }
    }

    if run.finished.is_none() {
        make_and_resume_jobs(cluster, clock, &jobset, &rjobs, &children, &run, at);
        children = child_jobs(cluster, &namespace, &uid);
    }
    let status = status(clock, &rjobs, &children, &run);
    set_status(&mut cluster.store, key, status);
    cluster.controllers.jobsets.insert(key.to_string(), run);
}

/// Whether the success policy holds over the child Jobs.
fn success(jobset: &Value, rjobs: &[Value], children: &BTreeMap<String, Value>) -> bool {
    let policy = &jobset["spec"]["successPolicy"];
    let targets: Vec<&str> = policy["targetReplicatedJobs"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    let name = jobset["metadata"]["name"].as_str().unwrap_or_default();
    let wanted: Vec<String> = rjobs
        .iter()
        .filter(|r| targets.is_empty() || targets.contains(&r["name"].as_str().unwrap_or_default()))
        .flat_map(|r| {
            let rname = r["name"].as_str().unwrap_or_default().to_string();
            (0..replicas(r)).map(move |i| format!("{name}-{rname}-{i}"))
        })
        .collect();
    let done = |job: &String| {
        children
            .get(job)
            .is_some_and(|j| job_condition(j, "Complete"))
    };
    if policy["operator"] == "Any" {
        wanted.iter().any(done)
    } else {
        !wanted.is_empty() && wanted.iter().all(done)
    }
}

/// Makes the Jobs a JobSet lacks, and suspends or resumes the ones it has to match it.
fn make_and_resume_jobs(
    cluster: &mut KubeCluster,
    clock: &Clock,
    jobset: &Value,
    rjobs: &[Value],
    children: &BTreeMap<String, Value>,
    run: &JobSetRun,
    at: SimTime,
) {
    let namespace = jobset["metadata"]["namespace"].as_str().unwrap_or_default();
    let name = jobset["metadata"]["name"].as_str().unwrap_or_default();
    let is_suspended = suspended(jobset);
    let global: u64 = rjobs.iter().map(replicas).sum();
    let mut global_index = 0u64;
    for rjob in rjobs {
        let rname = rjob["name"].as_str().unwrap_or_default();
        for index in 0..replicas(rjob) {
            let job_name = format!("{name}-{rname}-{index}");
            let this_global = global_index;
            global_index += 1;
            if let Some(job) = children.get(&job_name) {
                if job_condition(job, "Complete") || job_condition(job, "Failed") {
                    continue;
                }
                if (job["spec"]["suspend"] == true) != is_suspended {
                    let mut job = job.clone();
                    job["spec"]["suspend"] = json!(is_suspended);
                    if !is_suspended {
                        // JobSet copies the template's scheduling fields when it resumes a Job
                        // (`resumeJobsIfNecessary`): Kueue's flavor node selector arrives here.
                        let selector =
                            &rjob["template"]["spec"]["template"]["spec"]["nodeSelector"];
                        if selector.is_object() {
                            job["spec"]["template"]["spec"]["nodeSelector"] = selector.clone();
                        }
                    }
                    let generation = job["metadata"]["generation"].as_i64().unwrap_or(1) + 1;
                    job["metadata"]["generation"] = json!(generation);
                    let key = object_key("batch", "jobs", namespace, &job_name);
                    cluster.store.generation_since.insert(key, (generation, at));
                    cluster
                        .store
                        .put("batch", "jobs", namespace, &job_name, job);
                }
                continue;
            }
            let mut labels: BTreeMap<&str, String> = BTreeMap::new();
            labels.insert(JOBSET_NAME, name.to_string());
            labels.insert("jobset.sigs.k8s.io/replicatedjob-name", rname.to_string());
            labels.insert(RESTARTS, run.restarts.to_string());
            labels.insert(
                "jobset.sigs.k8s.io/replicatedjob-replicas",
                replicas(rjob).to_string(),
            );
            labels.insert("jobset.sigs.k8s.io/global-replicas", global.to_string());
            labels.insert("jobset.sigs.k8s.io/job-index", index.to_string());
            labels.insert(
                "jobset.sigs.k8s.io/job-key",
                sha1::hex(format!("{namespace}/{job_name}").as_bytes()),
            );
            labels.insert(
                "jobset.sigs.k8s.io/job-global-index",
                this_global.to_string(),
            );
            let template = &rjob["template"];
            let mut job = json!({"apiVersion": "batch/v1", "kind": "Job",
                "metadata": {"name": job_name, "namespace": namespace,
                    "labels": template["metadata"]["labels"].clone(),
                    "annotations": template["metadata"]["annotations"].clone(),
                    "ownerReferences": [owner_reference(jobset)]},
                "spec": template["spec"].clone()});
            for (key, value) in &labels {
                for meta in ["metadata", "template"] {
                    let meta = match meta {
                        "metadata" => &mut job["metadata"],
                        _ => &mut job["spec"]["template"]["metadata"],
                    };
                    meta["labels"][*key] = json!(value);
                    meta["annotations"][*key] = json!(value);
                }
            }
            if dns_hostnames(jobset) {
                job["spec"]["template"]["spec"]["subdomain"] = json!(subdomain(jobset));
            }
            job["spec"]["suspend"] = json!(is_suspended);
            job["metadata"]["uid"] = json!(cluster.store.next_uid());
            job["metadata"]["creationTimestamp"] = json!(clock.ts(at));
            job["metadata"]["generation"] = json!(1);
            super::jobs::on_create(cluster, &mut job);
            // Kueue's Job webhook leaves a Job whose owner Kueue manages alone.
            job["spec"]["suspend"] = json!(is_suspended);
            let key = object_key("batch", "jobs", namespace, &job_name);
            cluster.store.generation_since.insert(key, (1, at));
            cluster
                .store
                .put("batch", "jobs", namespace, &job_name, job);
        }
    }
}

fn condition(kind: &str, status: bool, reason: &str, message: &str, at: &str) -> Value {
    json!({"type": kind, "status": if status { "True" } else { "False" },
        "reason": reason, "message": message, "lastTransitionTime": at})
}

fn status(
    clock: &Clock,
    rjobs: &[Value],
    children: &BTreeMap<String, Value>,
    run: &JobSetRun,
) -> Value {
    let mut per_rjob = vec![];
    for rjob in rjobs {
        let rname = rjob["name"].as_str().unwrap_or_default();
        let jobs: Vec<&Value> = children
            .values()
            .filter(|j| j["metadata"]["labels"]["jobset.sigs.k8s.io/replicatedjob-name"] == rname)
            .collect();
        let count = |f: &dyn Fn(&Value) -> bool| jobs.iter().filter(|j| f(j)).count();
        let finished = |j: &Value| job_condition(j, "Complete") || job_condition(j, "Failed");
        let expected = pods_per_job(rjob);
        per_rjob.push(json!({
            "name": rname,
            "ready": count(&|j| !finished(j) && j["status"]["ready"].as_u64().unwrap_or(0)
                + j["status"]["succeeded"].as_u64().unwrap_or(0) >= expected),
            "succeeded": count(&|j| job_condition(j, "Complete")),
            "failed": count(&|j| job_condition(j, "Failed")),
            "active": count(&|j| !finished(j) && j["status"]["active"].as_u64().unwrap_or(0) > 0),
            "suspended": count(&|j| !finished(j) && j["spec"]["suspend"] == true),
        }));
    }
    let mut conditions = vec![];
    if let Some(at) = run.suspended {
        conditions.push(condition(
            "Suspended",
            true,
            "SuspendedJobs",
            "jobset is suspended",
            &clock.ts(at),
        ));
    } else if let Some(at) = run.resumed {
        conditions.push(condition(
            "Suspended",
            false,
            "ResumeJobs",
            "jobset is resumed",
            &clock.ts(at),
        ));
    }
    let mut status = json!({"restarts": run.restarts, "replicatedJobsStatus": per_rjob});
    if let Some((at, completed, reason, message)) = &run.finished {
        let kind = if *completed { "Completed" } else { "Failed" };
        conditions.push(condition(kind, true, reason, message, &clock.ts(*at)));
        status["terminalState"] = json!(kind);
    }
    if !conditions.is_empty() {
        status["conditions"] = Value::Array(conditions);
    }
    status
}

/// The name of Kueue's Workload for `jobset`: `jobset-<name>-<hash>` (see the module doc).
fn workload_name(jobset: &Value) -> String {
    let name = jobset["metadata"]["name"].as_str().unwrap_or_default();
    let uid = jobset["metadata"]["uid"].as_str().unwrap_or_default();
    let hash = sha1::hex(format!("JobSet\n{GROUP}\n{name}\n{uid}").as_bytes());
    format!("jobset-{name}-{}", &hash[..5])
}

/// The priority Kueue gives `jobset`'s Workload: the one its Workload holds once made, else
/// what its labels and pod templates name ([`super::kueue_priority`]); `Err` names a class
/// that does not exist.
pub fn priority(
    cluster: &KubeCluster,
    jobset: &Value,
) -> Result<super::kueue_priority::Priority, String> {
    let namespace = jobset["metadata"]["namespace"].as_str().unwrap_or_default();
    if let Some(made) = cluster.store.get(
        super::kueue::GROUP,
        "workloads",
        namespace,
        &workload_name(jobset),
    ) {
        return Ok(super::kueue_priority::Priority {
            value: made["spec"]["priority"].as_i64().unwrap_or(0),
            source: None,
        });
    }
    let rjobs = replicated_jobs(jobset);
    let templates: Vec<&Value> = rjobs
        .iter()
        .map(|r| &r["template"]["spec"]["template"])
        .collect();
    super::kueue_priority::of(cluster, &jobset["metadata"]["labels"], &templates)
}

/// Kueue's Workload of a queued JobSet (see the module doc).
fn workload(cluster: &mut KubeCluster, clock: &Clock, key: &str) {
    let Some(jobset) = cluster.store.objects.get(key).cloned() else {
        return;
    };
    let Some(queue) = jobset["metadata"]["labels"][QUEUE_LABEL]
        .as_str()
        .filter(|q| !q.is_empty())
    else {
        return;
    };
    let Some(active) = kueue_active(cluster, clock.now) else {
        return;
    };
    let Some(version) = workload_version(cluster) else {
        return;
    };
    let namespace = jobset["metadata"]["namespace"].as_str().unwrap_or_default();
    let uid = jobset["metadata"]["uid"].as_str().unwrap_or_default();
    let workload_name = workload_name(&jobset);
    let run = cluster
        .controllers
        .jobsets
        .get(key)
        .cloned()
        .unwrap_or_default();
    let (_, written) = generation_since(&cluster.store, key);
    let created = written.max(active).min(clock.now);
    let existing = cluster
        .store
        .get(super::kueue::GROUP, "workloads", namespace, &workload_name)
        .cloned();
    let mut object = match existing {
        Some(object) => object,
        None => {
            // A priority class that does not exist: Kueue makes no Workload (and retries).
            let Ok(priority) = priority(cluster, &jobset) else {
                return;
            };
            let pod_sets: Vec<Value> = replicated_jobs(&jobset)
                .iter()
                .map(|r| {
                    json!({"name": r["name"], "count": replicas(r) * pods_per_job(r),
                        "template": r["template"]["spec"]["template"]})
                })
                .collect();
            let mut spec = json!({"queueName": queue, "podSets": pod_sets, "active": true});
            super::kueue_priority::write(&mut spec, &priority, &version);
            json!({"apiVersion": format!("{}/{version}", super::kueue::GROUP), "kind": "Workload",
                "metadata": {"name": workload_name, "namespace": namespace,
                    "uid": cluster.store.next_uid(), "creationTimestamp": clock.ts(created),
                    "generation": 1,
                    "labels": {"kueue.x-k8s.io/job-uid": uid},
                    "ownerReferences": [owner_reference(&jobset)]},
                "spec": spec})
        }
    };
    let mut conditions = vec![];
    let mut status = json!({});
    match &run.admission {
        Some(admission) => {
            let at = clock.ts(admission.at);
            let message = format!("Quota reserved in ClusterQueue {}", admission.cluster_queue);
            conditions.push(condition(
                "QuotaReserved",
                true,
                "QuotaReserved",
                &message,
                &at,
            ));
            conditions.push(condition(
                "Admitted",
                true,
                "Admitted",
                "The workload is admitted",
                &at,
            ));
            let assignments: Vec<Value> = replicated_jobs(&jobset)
                .iter()
                .map(|r| {
                    let pods = replicas(r) * pods_per_job(r);
                    let per_pod = super::kueue::pod_requests(&r["template"]["spec"]["template"]);
                    let mut flavors = json!({});
                    let mut usage = json!({});
                    for (resource, amount) in per_pod.iter().filter(|(_, a)| **a > 0.0) {
                        if let Some(flavor) = admission
                            .usage
                            .keys()
                            .find(|k| k.ends_with(&format!("/{resource}")))
                            .and_then(|k| k.split('/').next())
                        {
                            flavors[resource] = json!(flavor);
                        }
                        usage[resource] = json!(quantity(amount * pods as f64));
                    }
                    json!({"name": r["name"], "flavors": flavors, "resourceUsage": usage,
                        "count": pods})
                })
                .collect();
            status["admission"] = json!({"clusterQueue": admission.cluster_queue,
                "podSetAssignments": assignments});
        }
        None => {
            // The simulator's own wording (see the module doc).
            conditions.push(condition(
                "QuotaReserved",
                false,
                "Pending",
                &format!("Waiting for quota in the ClusterQueue of LocalQueue {queue}"),
                &clock.ts(created),
            ));
        }
    }
    if let Some((at, completed, _, message)) = &run.finished {
        let reason = if *completed { "Succeeded" } else { "Failed" };
        conditions.push(condition("Finished", true, reason, message, &clock.ts(*at)));
    }
    status["conditions"] = Value::Array(conditions);
    if object["status"] != status {
        object["status"] = status;
        cluster.store.put(
            super::kueue::GROUP,
            "workloads",
            namespace,
            &workload_name,
            object,
        );
    }
}

/// The version Workloads are stored in (the CRD's storage version), if Kueue's CRD exists.
fn workload_version(cluster: &KubeCluster) -> Option<String> {
    let crd = cluster.store.get(
        "apiextensions.k8s.io",
        "customresourcedefinitions",
        "",
        "workloads.kueue.x-k8s.io",
    )?;
    crd["spec"]["versions"]
        .as_array()?
        .iter()
        .find(|v| v["storage"] == true)
        .and_then(|v| v["name"].as_str().map(str::to_string))
}

/// A quantity as Kubernetes prints a whole one (`16`), else with millis (`1500m`).
fn quantity(amount: f64) -> String {
    if (amount - amount.round()).abs() < 1e-9 {
        format!("{}", amount.round() as i64)
    } else {
        format!("{}m", (amount * 1000.0).round() as i64)
    }
}

/// SHA-1 (FIPS 180-4), for the names JobSet and Kueue derive from it (`job-key`, Workload
/// names); no dependency of the simulator provides it.
mod sha1 {
    pub fn hex(data: &[u8]) -> String {
        let mut h: [u32; 5] = [
            0x6745_2301,
            0xEFCD_AB89,
            0x98BA_DCFE,
            0x1032_5476,
            0xC3D2_E1F0,
        ];
        let mut message = data.to_vec();
        let bits = (data.len() as u64).wrapping_mul(8);
        message.push(0x80);
        while message.len() % 64 != 56 {
            message.push(0);
        }
        message.extend_from_slice(&bits.to_be_bytes());
        for block in message.chunks(64) {
            let mut w = [0u32; 80];
            for (i, word) in block.chunks(4).enumerate() {
                w[i] = u32::from_be_bytes([word[0], word[1], word[2], word[3]]);
            }
            for i in 16..80 {
                w[i] = (w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16]).rotate_left(1);
            }
            let [mut a, mut b, mut c, mut d, mut e] = h;
            for (i, word) in w.iter().enumerate() {
                let (f, k) = match i {
                    0..=19 => ((b & c) | (!b & d), 0x5A82_7999),
                    20..=39 => (b ^ c ^ d, 0x6ED9_EBA1),
                    40..=59 => ((b & c) | (b & d) | (c & d), 0x8F1B_BCDC),
                    _ => (b ^ c ^ d, 0xCA62_C1D6),
                };
                let t = a
                    .rotate_left(5)
                    .wrapping_add(f)
                    .wrapping_add(e)
                    .wrapping_add(k)
                    .wrapping_add(*word);
                e = d;
                d = c;
                c = b.rotate_left(30);
                b = a;
                a = t;
            }
            for (slot, v) in h.iter_mut().zip([a, b, c, d, e]) {
                *slot = slot.wrapping_add(v);
            }
        }
        h.iter().map(|v| format!("{v:08x}")).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sha1_matches_the_standard_test_vectors() {
        assert_eq!(
            sha1::hex(b"abc"),
            "a9993e364706816aba3e25717850c26c9cd0d89d"
        );
        assert_eq!(sha1::hex(b""), "da39a3ee5e6b4b0d3255bfef95601890afd80709");
        assert_eq!(
            sha1::hex(b"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "84983e441c3bd26ebaae4aa1f95129e5e54670f1"
        );
    }
}
