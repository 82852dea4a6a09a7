//! Kueue's controller, as far as a3ctl can see it: once the `kueue-system/kueue-controller-manager`
//! Deployment is available, every ClusterQueue gets an `Active` condition (true when each
//! ResourceFlavor it names exists, otherwise false with reason `FlavorNotFound`) and the workload
//! counters, and every LocalQueue an `Active` condition that follows its ClusterQueue.
//! Without an available controller nothing writes status, as in a real cluster.
//!
//! **Jobs** (Kueue's batch/v1 Job integration). While Kueue's Deployment exists, a Job made with
//! the label `kueue.x-k8s.io/queue-name` is made suspended (Kueue's mutating webhook; see
//! [`super::jobs::on_create`]). Once the controller is available, the queued Jobs are admitted
//! highest priority first, then in creation order (see **Priorities**): a Job is admitted when its LocalQueue (in the Job's namespace) points at an
//! active ClusterQueue that takes Jobs from the Job's namespace and whose quota (with its
//! cohort's, see **Cohorts**) covers what the Job's pods request (`requests`, else
//! `limits`, of every container and native sidecar, times `min(parallelism, completions)`): for
//! every requested resource, a resource group covering it, and in that group the first flavor
//! (in order) with that much of its `nominalQuota` left after the Jobs admitted before. Admission
//! unsuspends the Job and adds the flavor's `nodeLabels` to its pod template's `nodeSelector`; the
//! quota is held until the Job completes or fails (or is deleted). A Job that does not fit stays
//! suspended — `pendingWorkloads` of its ClusterQueue and LocalQueue — and is admitted when quota
//! frees up or grows. The admission is dated at the latest of: the Job's last write, the
//! controller becoming available, the last write of the LocalQueue, the ClusterQueue and its
//! flavors, and the end of the last Job that held quota of the same ClusterQueue.
//!
//! **Flavors in use** (kubernetes-sigs/kueue v0.17.1 `pkg/webhooks/resourceflavor_webhook.go`,
//! `pkg/controller/core/resourceflavor_controller.go`): Kueue's defaulting webhook gives every
//! ResourceFlavor it admits the finalizer `kueue.x-k8s.io/resource-in-use`. A deleted flavor
//! keeps it (and stays, `Terminating`) while any ClusterQueue lists it; once none does and the
//! controller is available, the controller removes it and the flavor is gone. The controller's
//! fallback that adds the finalizer to flavors the webhook missed is not simulated.
//!
//! **Namespaces**: a Job is admitted only when its ClusterQueue's `namespaceSelector` selects
//! the Job's namespace (by the namespace's labels); a ClusterQueue without one admits from no
//! namespace, `{}` from every one (kubernetes-sigs/kueue `apis/kueue/v1beta2/clusterqueue_types.go`,
//! `ClusterQueueSpec.NamespaceSelector`).
//!
//! **Cohorts** (<https://kueue.sigs.k8s.io/docs/concepts/cluster_queue/#cohort>,
//! `#borrowinglimit`, `#lendinglimit`): ClusterQueues naming the same cohort (`spec.cohortName`,
//! `spec.cohort` in v1beta1) share their unused quota, per flavor and resource. A member keeps
//! `nominalQuota − lendingLimit` for itself (nothing without a `lendingLimit`) and lends the rest
//! to the cohort's pool; it can take what it keeps and has not used, plus what is left of the pool
//! after every member's use beyond what it keeps; and, with a `borrowingLimit`, never more than
//! `nominalQuota + borrowingLimit` in all. A queue without a cohort takes only its nominal quota.
//! A guess where Kueue's docs are silent: flat cohorts only (no Cohort objects, no hierarchy, no
//! cohort-level quota), and admission by priority then creation order across queues rather than by Kueue's
//! per-ClusterQueue heads and fair sharing.
//!
//! **JobSets** (Kueue's `jobset.x-k8s.io/jobset` integration, [`super::jobsets`]) queue with the
//! Jobs, in creation order, once the integration is active: a JobSet asks for what all its
//! replicated Jobs' pods request, its admission unsuspends it and puts the flavor's `nodeLabels`
//! in every replicated Job's pod template, and it holds the quota until it completes or fails.
//!
//! **Priorities** (<https://kueue.sigs.k8s.io/docs/concepts/workload_priority_class/>): each
//! queued Job or JobSet has its Workload's priority ([`super::kueue_priority`]: the
//! `kueue.x-k8s.io/priority-class` label's WorkloadPriorityClass, else its pods' PriorityClass),
//! and the queued ones are taken highest priority first, then in creation order, as Kueue orders
//! a ClusterQueue's pending Workloads and the heads it admits in one pass (kubernetes-sigs/kueue
//! v0.17.1 `pkg/cache/queue/cluster_queue.go`, `queueOrderingFunc`; `pkg/scheduler/scheduler.go`,
//! `makeClassicalIterator`). One naming a class that does not exist has no Workload: it stays
//! suspended, is not counted as pending, and is admitted only once the class exists.
//!
//! Not simulated: Workload objects for Jobs (`kubectl get workloads` shows only JobSets'),
//! preemption (so quota a queue lent is reclaimed only when the borrower's Jobs end, not by
//! `reclaimWithinCohort`, and a higher priority never evicts a running lower one), borrowing
//! Workloads going after those within nominal quota in one pass, hierarchical cohorts, fair sharing, `flavorFungibility`, admission
//! checks, `waitForPodsReady`, and integrations other than batch/v1 Jobs and JobSets.

// GUESS(kueue-flat-cohorts): flat cohorts only (no Cohort objects or hierarchy), and admission by priority then creation order across queues
use super::jobs::{JobRun, QUEUE_LABEL};
use super::nodes::parse_quantity;
use super::{Clock, generation_since, set_status};
use crate::clock::SimTime;
use crate::kube::KubeCluster;
use crate::kube::store::{object_key, split_key};
pub use crate::state::kube::Admission;
use serde_json::{Value, json};
use std::collections::BTreeMap;

pub const GROUP: &str = "kueue.x-k8s.io";

/// The finalizer that keeps a ResourceFlavor while a ClusterQueue uses it.
pub const IN_USE_FINALIZER: &str = "kueue.x-k8s.io/resource-in-use";

fn controller_key() -> String {
    object_key(
        "apps",
        "deployments",
        "kueue-system",
        "kueue-controller-manager",
    )
}

/// When Kueue's controller became available, if it is.
fn available_since(cluster: &KubeCluster, clock: &Clock) -> Option<SimTime> {
    cluster
        .controllers
        .available_since
        .get(&controller_key())
        .copied()
        .filter(|t| *t <= clock.now)
}

fn controller_available(cluster: &KubeCluster, clock: &Clock) -> bool {
    available_since(cluster, clock).is_some()
}

/// Kueue is installed (its Deployment exists), so its webhook suspends queued Jobs.
pub fn installed(cluster: &KubeCluster) -> bool {
    cluster.store.objects.contains_key(&controller_key())
}

fn condition(active: bool, reason: &str, message: String, at: &Value) -> Value {
    json!({"type": "Active", "status": if active { "True" } else { "False" },
        "reason": reason, "message": message, "lastTransitionTime": at})
}

/// What Kueue's ResourceFlavor defaulting webhook does to a new flavor: adds the in-use finalizer.
pub fn on_flavor_create(flavor: &mut Value) {
    let mut finalizers = flavor["metadata"]["finalizers"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    if !finalizers.iter().any(|f| f == IN_USE_FINALIZER) {
        finalizers.push(json!(IN_USE_FINALIZER));
    }
    flavor["metadata"]["finalizers"] = Value::Array(finalizers);
}

/// The names of the flavors some ClusterQueue lists.
fn listed_flavors(cluster: &KubeCluster) -> Vec<String> {
    cluster
        .store
        .list(GROUP, "clusterqueues", None)
        .iter()
        .flat_map(|q| q["spec"]["resourceGroups"].as_array().into_iter().flatten())
        .flat_map(|g| g["flavors"].as_array().into_iter().flatten())
        .filter_map(|f| f["name"].as_str().map(str::to_string))
        .collect()
}

/// Lets deleted flavors that no ClusterQueue lists go: the controller removes the in-use finalizer
/// (and the flavor is gone once no finalizer is left).
pub fn flavor_finalizers(cluster: &mut KubeCluster, clock: &Clock) {
    if !controller_available(cluster, clock) {
        return;
    }
    let listed = listed_flavors(cluster);
    for key in cluster.store.keys(GROUP, "resourceflavors") {
        let Some(flavor) = cluster.store.objects.get(&key) else {
            continue;
        };
        let name = flavor["metadata"]["name"].as_str().unwrap_or_default();
        let holds = flavor["metadata"]["finalizers"]
            .as_array()
            .is_some_and(|f| f.iter().any(|f| f == IN_USE_FINALIZER));
        if flavor["metadata"].get("deletionTimestamp").is_none()
            || !holds
            || listed.iter().any(|l| l == name)
        {
            continue;
        }
        let name = name.to_string();
        let mut flavor = flavor.clone();
        let finalizers = flavor["metadata"]["finalizers"]
            .as_array_mut()
            .expect("checked above: the flavor has finalizers");
        finalizers.retain(|f| f != IN_USE_FINALIZER);
        if finalizers.is_empty() {
            cluster.store.remove(GROUP, "resourceflavors", "", &name);
        } else {
            cluster
                .store
                .put(GROUP, "resourceflavors", "", &name, flavor);
        }
    }
}

/// Writes ClusterQueue and LocalQueue status.
pub fn queues(cluster: &mut KubeCluster, clock: &Clock) {
    if !controller_available(cluster, clock) {
        return;
    }
    let flavors: Vec<String> = cluster
        .store
        .list(GROUP, "resourceflavors", None)
        .iter()
        .filter_map(|f| f["metadata"]["name"].as_str().map(str::to_string))
        .collect();
    let counts = workload_counts(cluster, clock.now);
    let mut active_queues = Vec::new();
    for key in cluster.store.keys(GROUP, "clusterqueues") {
        let Some(queue) = cluster.store.objects.get(&key) else {
            continue;
        };
        let created = queue["metadata"]["creationTimestamp"].clone();
        let missing = missing_flavors(queue, &flavors);
        let condition = if missing.is_empty() {
            if let Some(name) = queue["metadata"]["name"].as_str() {
                active_queues.push(name.to_string());
            }
            condition(true, "Ready", "Can admit new workloads".into(), &created)
        } else {
            condition(
                false,
                "FlavorNotFound",
                format!(
                    "Can't admit new workloads: references missing ResourceFlavor(s): {}.",
                    missing.join(",")
                ),
                &created,
            )
        };
        let name = queue["metadata"]["name"].as_str().unwrap_or_default();
        let (admitted, pending) = counts
            .get(&(None, name.to_string()))
            .copied()
            .unwrap_or((0, 0));
        let status = json!({
            "conditions": [condition],
            "admittedWorkloads": admitted,
            "pendingWorkloads": pending,
            "reservingWorkloads": admitted,
        });
        set_status(&mut cluster.store, &key, status);
    }
    for key in cluster.store.keys(GROUP, "localqueues") {
        let Some(queue) = cluster.store.objects.get(&key) else {
            continue;
        };
        let created = queue["metadata"]["creationTimestamp"].clone();
        let target = queue["spec"]["clusterQueue"].as_str().unwrap_or_default();
        let exists = cluster
            .store
            .get(GROUP, "clusterqueues", "", target)
            .is_some();
        let condition = if active_queues.iter().any(|q| q == target) {
            condition(
                true,
                "Ready",
                "Can submit new workloads to localQueue".into(),
                &created,
            )
        } else if exists {
            condition(
                false,
                "ClusterQueueIsInactive",
                "Can't submit new workloads to clusterQueue".into(),
                &created,
            )
        } else {
            condition(
                false,
                "ClusterQueueDoesNotExist",
                "Can't submit new workloads to clusterQueue".into(),
                &created,
            )
        };
        let namespace = queue["metadata"]["namespace"].as_str().unwrap_or_default();
        let name = queue["metadata"]["name"].as_str().unwrap_or_default();
        let (admitted, pending) = counts
            .get(&(Some(namespace.to_string()), name.to_string()))
            .copied()
            .unwrap_or((0, 0));
        let status = json!({"conditions": [condition], "admittedWorkloads": admitted,
            "pendingWorkloads": pending, "reservingWorkloads": admitted});
        set_status(&mut cluster.store, &key, status);
    }
}

/// The ResourceFlavors a ClusterQueue names that do not exist.
fn missing_flavors(queue: &Value, flavors: &[String]) -> Vec<String> {
    let mut missing: Vec<String> = queue["spec"]["resourceGroups"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|g| g["flavors"].as_array().into_iter().flatten())
        .filter_map(|f| f["name"].as_str())
        .filter(|name| !flavors.iter().any(|f| f == name))
        .map(str::to_string)
        .collect();
    missing.dedup();
    missing
}

/// A queued Job (or JobSet) as Kueue sees it.
struct Queued {
    key: String,
    /// A JobSet rather than a Job.
    jobset: bool,
    namespace: String,
    local_queue: String,
    suspended: bool,
    finished: bool,
    admission: Option<Admission>,
    /// Its Workload's priority; `None` while the priority class it names does not exist, so
    /// Kueue has made no Workload for it ([`super::kueue_priority`]).
    priority: Option<i64>,
}

fn queued_jobs(cluster: &KubeCluster, now: SimTime) -> Vec<Queued> {
    let mut jobs: Vec<(String, Queued)> = vec![];
    let jobsets = super::jobsets::kueue_active(cluster, now)
        .map(|_| cluster.store.keys(super::jobsets::GROUP, "jobsets"))
        .unwrap_or_default();
    for key in jobsets {
        let Some(jobset) = cluster.store.objects.get(&key) else {
            continue;
        };
        let Some(queue) = jobset["metadata"]["labels"][QUEUE_LABEL].as_str() else {
            continue;
        };
        let run = cluster
            .controllers
            .jobsets
            .get(&key)
            .filter(|r| jobset["metadata"]["uid"].as_str() == Some(r.uid.as_str()));
        let created = jobset["metadata"]["creationTimestamp"]
            .as_str()
            .unwrap_or_default();
        jobs.push((
            format!("{created}/{key}"),
            Queued {
                key: key.clone(),
                jobset: true,
                namespace: jobset["metadata"]["namespace"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
                local_queue: queue.to_string(),
                suspended: jobset["spec"]["suspend"] == true,
                finished: run.is_some_and(|r| r.finished.is_some()),
                admission: run.and_then(|r| r.admission.clone()),
                priority: super::jobsets::priority(cluster, jobset)
                    .ok()
                    .map(|p| p.value),
            },
        ));
    }
    for key in cluster.store.keys("batch", "jobs") {
        let Some(job) = cluster.store.objects.get(&key) else {
            continue;
        };
        let Some(queue) = job["metadata"]["labels"][QUEUE_LABEL].as_str() else {
            continue;
        };
        let run = cluster
            .controllers
            .jobs
            .get(&key)
            .filter(|r| job["metadata"]["uid"].as_str() == Some(r.uid.as_str()));
        let finished = job["status"]["conditions"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|c| (c["type"] == "Complete" || c["type"] == "Failed") && c["status"] == "True")
            || run.is_some_and(|r| r.finished.is_some());
        let created = job["metadata"]["creationTimestamp"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        jobs.push((
            format!("{created}/{key}"),
            Queued {
                key: key.clone(),
                jobset: false,
                namespace: job["metadata"]["namespace"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
                local_queue: queue.to_string(),
                suspended: job["spec"]["suspend"] == true,
                finished,
                admission: run.and_then(|r| r.admission.clone()),
                priority: super::kueue_priority::of(
                    cluster,
                    &job["metadata"]["labels"],
                    &[&job["spec"]["template"]],
                )
                .ok()
                .map(|p| p.value),
            },
        ));
    }
    // Higher priority first, then creation order (see **Priorities** in the module doc).
    jobs.sort_by(|a, b| {
        b.1.priority
            .unwrap_or(i64::MIN)
            .cmp(&a.1.priority.unwrap_or(i64::MIN))
            .then_with(|| a.0.cmp(&b.0))
    });
    jobs.into_iter().map(|(_, j)| j).collect()
}

/// Admitted and pending Jobs by ClusterQueue (`(None, name)`) and LocalQueue
/// (`(Some(namespace), name)`).
fn workload_counts(
    cluster: &KubeCluster,
    now: SimTime,
) -> BTreeMap<(Option<String>, String), (u64, u64)> {
    let mut counts: BTreeMap<(Option<String>, String), (u64, u64)> = BTreeMap::new();
    for job in queued_jobs(cluster, now) {
        // Without a Workload (its priority class does not exist) it is not pending.
        if job.finished || (job.admission.is_none() && job.priority.is_none()) {
            continue;
        }
        let Some(lq) = cluster
            .store
            .get(GROUP, "localqueues", &job.namespace, &job.local_queue)
        else {
            continue;
        };
        let cq = lq["spec"]["clusterQueue"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        let (admitted, pending) = match (&job.admission, job.suspended) {
            (Some(_), false) => (1, 0),
            (_, true) => (0, 1),
            _ => continue,
        };
        for key in [
            (None, cq.clone()),
            (Some(job.namespace.clone()), job.local_queue.clone()),
        ] {
            let entry = counts.entry(key).or_insert((0, 0));
            entry.0 += admitted;
            entry.1 += pending;
        }
    }
    counts
}

/// What one pod of a Job asks for: requests (limits where a resource has no request) of its
/// containers and native sidecars.
pub fn pod_requests(template: &Value) -> BTreeMap<String, f64> {
    let mut out = BTreeMap::new();
    let spec = &template["spec"];
    let sidecars = spec["initContainers"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|c| c["restartPolicy"] == "Always");
    let containers = spec["containers"].as_array().into_iter().flatten();
    for c in containers.chain(sidecars) {
        let resources = &c["resources"];
        let mut names: Vec<&String> = vec![];
        for kind in ["requests", "limits"] {
            names.extend(
                resources[kind]
                    .as_object()
                    .into_iter()
                    .flatten()
                    .map(|(k, _)| k),
            );
        }
        names.sort();
        names.dedup();
        for name in names {
            let value = if resources["requests"][name].is_null() {
                &resources["limits"][name]
            } else {
                &resources["requests"][name]
            };
            let amount = value
                .as_str()
                .and_then(parse_quantity)
                .or_else(|| value.as_f64())
                .unwrap_or(0.0);
            *out.entry(name.clone()).or_insert(0.0) += amount;
        }
    }
    out
}

/// A quota field (`nominalQuota`, `borrowingLimit`, `lendingLimit`) of `resource` in `flavor` of
/// a ClusterQueue, as a number; `None` when the queue does not list it.
fn quota_field(queue: &Value, flavor: &str, resource: &str, field: &str) -> Option<f64> {
    queue["spec"]["resourceGroups"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|g| g["flavors"].as_array().into_iter().flatten())
        .filter(|f| f["name"] == flavor)
        .flat_map(|f| f["resources"].as_array().into_iter().flatten())
        .find(|r| r["name"] == resource)
        .map(|r| &r[field])
        .and_then(|q| q.as_str().and_then(parse_quantity).or_else(|| q.as_f64()))
}

/// A ClusterQueue's cohort: `spec.cohortName` (v1beta2) or `spec.cohort` (v1beta1).
fn cohort_of(queue: &Value) -> Option<&str> {
    let spec = &queue["spec"];
    spec["cohortName"]
        .as_str()
        .or_else(|| spec["cohort"].as_str())
        .filter(|c| !c.is_empty())
}

/// How much of `flavor/resource` a ClusterQueue can still take (see the module doc's
/// **Cohorts**): its nominal quota less its usage alone; in a cohort, what it keeps for itself
/// (nominal less `lendingLimit`) plus what the cohort's lendable quota has left, capped by its
/// `borrowingLimit`.
fn available(
    name: &str,
    queue: &Value,
    members: &[(String, Value)],
    key: (&str, &str),
    used: &BTreeMap<String, BTreeMap<String, f64>>,
) -> f64 {
    let (flavor, resource) = key;
    let usage = |q: &str| {
        used.get(q)
            .and_then(|u| u.get(&format!("{flavor}/{resource}")))
            .copied()
            .unwrap_or(0.0)
    };
    let nominal = |q: &Value| quota_field(q, flavor, resource, "nominalQuota").unwrap_or(0.0);
    let own_usage = usage(name);
    if cohort_of(queue).is_none() {
        return nominal(queue) - own_usage;
    }
    let lendable = |q: &Value| {
        let n = nominal(q);
        quota_field(q, flavor, resource, "lendingLimit").map_or(n, |l| l.min(n))
    };
    let (mut pool, mut pool_used) = (0.0, 0.0);
    for (member, q) in members {
        let guaranteed = nominal(q) - lendable(q);
        pool += lendable(q);
        pool_used += (usage(member) - guaranteed).max(0.0);
    }
    let guaranteed = nominal(queue) - lendable(queue);
    let mut left = (guaranteed - own_usage).max(0.0) + (pool - pool_used).max(0.0);
    if let Some(limit) = quota_field(queue, flavor, resource, "borrowingLimit") {
        left = left.min(nominal(queue) + limit - own_usage);
    }
    left
}

/// The flavor of each resource a Job needs from ClusterQueue `name` (whose cohort's members,
/// itself included, are `members`), given what is in use per ClusterQueue (`flavor/resource` →
/// amount); `None` when it does not fit.
fn fit(
    name: &str,
    queue: &Value,
    members: &[(String, Value)],
    wanted: &BTreeMap<String, f64>,
    used: &BTreeMap<String, BTreeMap<String, f64>>,
) -> Option<BTreeMap<String, f64>> {
    let mut usage = BTreeMap::new();
    let groups: Vec<&Value> = queue["spec"]["resourceGroups"]
        .as_array()
        .into_iter()
        .flatten()
        .collect();
    let covered = |g: &Value, r: &str| {
        g["coveredResources"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|c| c == r)
    };
    for resource in wanted.iter().filter(|(_, a)| **a > 0.0).map(|(r, _)| r) {
        groups.iter().find(|g| covered(g, resource))?;
    }
    for group in groups {
        let needed: Vec<(&String, f64)> = wanted
            .iter()
            .filter(|(r, a)| **a > 0.0 && covered(group, r))
            .map(|(r, a)| (r, *a))
            .collect();
        if needed.is_empty() {
            continue;
        }
        let flavor = group["flavors"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|f| {
                let flavor = f["name"].as_str().unwrap_or_default();
                needed.iter().all(|(resource, amount)| {
                    *amount <= available(name, queue, members, (flavor, resource), used) + 1e-9
                })
            })?;
        let flavor = flavor["name"].as_str().unwrap_or_default();
        for (resource, amount) in needed {
            usage.insert(format!("{flavor}/{resource}"), amount);
        }
    }
    Some(usage)
}

/// Whether ClusterQueue `queue` takes workloads from `namespace`: its `namespaceSelector`
/// selects the namespace's labels; no selector selects none (Kueue's `ClusterQueueSpec`).
fn admits_namespace(cluster: &KubeCluster, queue: &Value, namespace: &str) -> bool {
    let selector = &queue["spec"]["namespaceSelector"];
    if selector.is_null() {
        return false;
    }
    let labels = cluster
        .store
        .get("", "namespaces", "", namespace)
        .map(|ns| ns["metadata"]["labels"].clone())
        .unwrap_or(Value::Null);
    crate::kube::selectors::label_selector_matches(selector, &labels)
}

fn written(cluster: &KubeCluster, key: &str) -> SimTime {
    generation_since(&cluster.store, key).1
}

/// Admits queued Jobs whose ClusterQueue has quota for them (see the module doc).
pub fn admit(cluster: &mut KubeCluster, clock: &Clock) {
    let Some(available) = available_since(cluster, clock) else {
        return;
    };
    let flavors: Vec<String> = cluster
        .store
        .list(GROUP, "resourceflavors", None)
        .iter()
        .filter_map(|f| f["metadata"]["name"].as_str().map(str::to_string))
        .collect();
    // Quota in use, and when quota was last given back, by ClusterQueue.
    let mut used: BTreeMap<String, BTreeMap<String, f64>> = BTreeMap::new();
    let mut freed: BTreeMap<String, SimTime> = BTreeMap::new();
    let jobs = queued_jobs(cluster, clock.now);
    for job in &jobs {
        let Some(admission) = &job.admission else {
            continue;
        };
        let end = if job.jobset {
            cluster
                .controllers
                .jobsets
                .get(&job.key)
                .and_then(|r| r.finished.as_ref())
                .map(|f| f.0)
        } else {
            cluster
                .controllers
                .jobs
                .get(&job.key)
                .and_then(|r| r.finished.as_ref())
                .map(|f| f.at)
        };
        if job.finished || job.suspended {
            let at = end.unwrap_or(clock.now);
            let entry = freed.entry(admission.cluster_queue.clone()).or_insert(at);
            *entry = (*entry).max(at);
            continue;
        }
        let entry = used.entry(admission.cluster_queue.clone()).or_default();
        for (k, v) in &admission.usage {
            *entry.entry(k.clone()).or_insert(0.0) += v;
        }
    }
    for job in jobs {
        if !job.suspended || job.finished || job.priority.is_none() {
            continue;
        }
        let Some(lq) = cluster
            .store
            .get(GROUP, "localqueues", &job.namespace, &job.local_queue)
        else {
            continue;
        };
        let cq_name = lq["spec"]["clusterQueue"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        let Some(cq) = cluster.store.get(GROUP, "clusterqueues", "", &cq_name) else {
            continue;
        };
        if !missing_flavors(cq, &flavors).is_empty()
            || !admits_namespace(cluster, cq, &job.namespace)
        {
            continue;
        }
        // The cohort's members, itself included (alone when it has no cohort).
        let members: Vec<(String, Value)> = match cohort_of(cq) {
            None => vec![(cq_name.clone(), cq.clone())],
            Some(cohort) => cluster
                .store
                .list(GROUP, "clusterqueues", None)
                .into_iter()
                .filter(|q| cohort_of(q) == Some(cohort))
                .map(|q| {
                    let name = q["metadata"]["name"].as_str().unwrap_or_default();
                    (name.to_string(), q.clone())
                })
                .collect(),
        };
        let Some(object) = cluster.store.objects.get(&job.key) else {
            continue;
        };
        let spec = &object["spec"];
        let pods = spec["parallelism"]
            .as_u64()
            .unwrap_or(1)
            .min(spec["completions"].as_u64().unwrap_or(u64::MAX)) as f64;
        let wanted: BTreeMap<String, f64> = if job.jobset {
            super::jobsets::requests(object)
        } else {
            pod_requests(&spec["template"])
                .into_iter()
                .map(|(r, a)| (r, a * pods))
                .collect()
        };
        let Some(usage) = fit(&cq_name, cq, &members, &wanted, &used) else {
            continue;
        };
        let in_use = used.entry(cq_name.clone()).or_default();
        for (k, v) in &usage {
            *in_use.entry(k.clone()).or_insert(0.0) += v;
        }
        // Dated at the last change that could have let it in.
        let mut at = written(cluster, &job.key).max(available);
        at = at.max(written(
            cluster,
            &object_key(GROUP, "localqueues", &job.namespace, &job.local_queue),
        ));
        at = at.max(written(
            cluster,
            &object_key(GROUP, "clusterqueues", "", &cq_name),
        ));
        for flavor in usage.keys().filter_map(|k| k.split('/').next()) {
            at = at.max(written(
                cluster,
                &object_key(GROUP, "resourceflavors", "", flavor),
            ));
        }
        // Quota given back by any member of its cohort may be what let it in.
        for (member, _) in &members {
            if let Some(t) = freed.get(member) {
                at = at.max(*t);
            }
        }
        let at = at.min(clock.now);
        let mut object = object.clone();
        object["spec"]["suspend"] = json!(false);
        let templates: Vec<String> = if job.jobset {
            let count = object["spec"]["replicatedJobs"]
                .as_array()
                .map_or(0, Vec::len);
            (0..count)
                .map(|i| format!("/spec/replicatedJobs/{i}/template/spec/template/spec"))
                .collect()
        } else {
            vec!["/spec/template/spec".to_string()]
        };
        for flavor in usage.keys().filter_map(|k| k.split('/').next()) {
            let labels = cluster
                .store
                .get(GROUP, "resourceflavors", "", flavor)
                .map(|f| f["spec"]["nodeLabels"].clone())
                .unwrap_or(Value::Null);
            for (k, v) in labels.as_object().into_iter().flatten() {
                for pointer in &templates {
                    if let Some(spec) = object.pointer_mut(pointer) {
                        spec["nodeSelector"][k] = v.clone();
                    }
                }
            }
        }
        let generation = object["metadata"]["generation"].as_i64().unwrap_or(1) + 1;
        object["metadata"]["generation"] = json!(generation);
        let Some((group, resource, namespace, name)) = split_key(&job.key) else {
            continue;
        };
        let (group, resource, namespace, name) = (
            group.to_string(),
            resource.to_string(),
            namespace.to_string(),
            name.to_string(),
        );
        cluster
            .store
            .generation_since
            .insert(job.key.clone(), (generation, at));
        cluster
            .store
            .put(&group, &resource, &namespace, &name, object);
        let admission = Admission {
            cluster_queue: cq_name,
            local_queue: job.local_queue.clone(),
            usage,
            at,
        };
        if job.jobset {
            let uid = cluster.store.objects[&job.key]["metadata"]["uid"]
                .as_str()
                .unwrap_or_default()
                .to_string();
            let run = cluster
                .controllers
                .jobsets
                .entry(job.key.clone())
                .or_default();
            if run.uid != uid {
                *run = super::jobsets::JobSetRun {
                    uid,
                    ..Default::default()
                };
            }
            run.admission = Some(admission);
            continue;
        }
        let uid = cluster.store.objects[&job.key]["metadata"]["uid"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        let run = cluster
            .controllers
            .jobs
            .entry(job.key.clone())
            .or_insert_with(|| JobRun {
                uid: uid.clone(),
                ..JobRun::default()
            });
        if run.uid != uid {
            *run = JobRun {
                uid,
                ..JobRun::default()
            };
        }
        run.admission = Some(admission);
    }
}
