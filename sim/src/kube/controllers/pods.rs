//! Pods: the default scheduler binds each pod to a node, and that node's kubelet mounts the pod's
//! volumes, pulls its images and starts its containers — with the statuses, conditions and
//! events a real cluster shows, and the retries that let a pod start once what it waited for is
//! fixed. This is about every Pod, created directly or by the Job controller ([`super::jobs`]),
//! except DaemonSet pods, whose controller runs them ([`super::daemonset_pods`]); Deployments
//! make none (their controller only computes their status).
//!
//! **Scheduling** (kube-scheduler's default plugins, in their order): volumes first — a claim
//! that does not exist or is not bound fails the pod on every node (`persistentvolumeclaim "C"
//! not found`, `pod has unbound immediate PersistentVolumeClaims`); then per node
//! `spec.unschedulable` (`node(s) were unschedulable`), taints the pod does not tolerate
//! (`node(s) had untolerated taint {KEY: VALUE}`), nodeSelector and required node affinity
//! (`node(s) didn't match Pod's node affinity/selector`) and requests beyond what the node has
//! left of its allocatable `cpu`, `memory` and `nvidia.com/gpu` after the pods bound to it
//! (`Insufficient nvidia.com/gpu`, `Too many pods`). An unschedulable pod stays Pending with the
//! `PodScheduled` condition False, reason `Unschedulable`, and a `FailedScheduling` event whose
//! message is the scheduler's `FitError` (`pkg/scheduler/framework/types.go`):
//! `0/3 nodes are available: 1 Insufficient nvidia.com/gpu, 2 node(s) didn't match Pod's node
//! affinity/selector. preemption: 0/3 nodes are available: 1 No preemption victims found for
//! incoming pod, 2 Preemption is not helpful for scheduling.` (`no nodes available to schedule
//! pods` without nodes). The scheduler retries when something changes and every five minutes
//! (`podMaxInUnschedulablePodsDuration`); the event counts those retries. A feasible pod is bound
//! to the feasible node with the fewest pods (ties by name), with a `Scheduled` event
//! `Successfully assigned NS/POD to NODE`, at the later of its creation, the node's appearance
//! and the last check that found it unschedulable. A pod that names its `nodeName` skips the
//! scheduler. A pod bound to a node that is gone is deleted (the pod garbage collector).
//!
//! **The kubelet** (`pkg/kubelet`): volumes are mounted first ([`super::access`] says which
//! cannot be), then every container's image is pulled as the node's IAM service account
//! ([`super::access::pull_failure`] says which cannot be), then
//! the containers start `kube.pod.start` later (image pull and container start together; drawn
//! once per pod). Until the volumes mount the containers wait as `ContainerCreating` and the pod
//! is `Pending`, with a `FailedMount` warning per volume: `MountVolume.SetUp failed for volume
//! ...`. A failed pull makes the container wait as `ErrImagePull` (the error as its message)
//! after each attempt and `ImagePullBackOff` (`Back-off pulling image "IMAGE"`) between them,
//! with the events `Pulling`, `Failed` (`Failed to pull image "IMAGE": ERROR`), `Failed`
//! (`Error: ErrImagePull`), `BackOff` (`Back-off pulling image "IMAGE"`) and `Failed` (`Error:
//! ImagePullBackOff`) (`pkg/kubelet/images/image_manager.go`, `kuberuntime_container.go`). A
//! started container is `Running` and ready (probes are not simulated), and a pod whose
//! containers all run is `Running` and `Ready`. Containers exit as [`super::runs`] (NCCL tests) and
//! [`super::outcomes`] (everything else) decide — when, with what exit code and log, once every
//! pod has been advanced): a container that ended
//! is `terminated` (`Completed` or `Error`), and once every regular container has ended the pod
//! is `Succeeded` (all exit 0) or `Failed`, its native sidecars stopped at that moment (exit 0),
//! `Ready` and `ContainersReady` False with reason `PodCompleted` (`PodFailed`).
//!
//! **Retries** follow the kubelet's back-offs, as attempts at fixed simulated times from the
//! moment the stage began: volume mounts at +0, +0.5 s, +1.5 s, +3.5 s ..., the gap doubling up to
//! 2m2s (`pkg/util/goroutinemap/exponentialbackoff`: 500 ms initial, 2m2s maximum), image pulls
//! at +0, +10 s, +30 s, +70 s ..., the gap doubling up to 300 s (`flowcontrol.NewBackOff(10s,
//! 300s)` of `pkg/kubelet/kubelet.go`), with a pod sync every 10 s between attempts (what
//! `ImagePullBackOff` and the `BackOff` events count). What an attempt finds — IAM, buckets,
//! repositories, ConfigMaps — is read at the tick that follows it; every change to those comes
//! through a request, and every request first brings the world to its time, so the state an
//! attempt would have seen is the state of that tick. A fix therefore takes effect at the first
//! attempt after it was made: a binding added at 10:00 lets a pod whose mounts are retried every
//! 2m2s start at its next attempt after 10:00, and only once the clock has passed it.
//!
//! Not simulated: the projected service-account token volume, init containers running one after
//! another (they are pulled with the others and count as completed when the pod starts), probes,
//! restarts, resource limits, `Container image "X" already present on machine` (every container
//! pulls its image), the event correlator's spam filter and aggregation, and the GCS FUSE sidecar
//! the driver's webhook would inject.

use super::access::{self, Gke};
use super::events::{self, Occurrence, Source};
use super::nodes::parse_quantity;
use super::pod_status;
use super::runs::{self};
use super::{Clock, hash, set_status};
use crate::clock::SimTime;
use crate::kube::KubeCluster;
use crate::kube::selectors::{node_selected, untolerated_taint};
use crate::kube::store::split_key;
pub use crate::state::kube::{PodRun, Stage};
use crate::world::World;
use serde_json::{Value, json};
use std::collections::{BTreeMap, BTreeSet};

/// Attempts at `start`, then after gaps of `first_ms` doubling up to `cap_ms`.
#[derive(Debug, Clone, Copy)]
struct Backoff {
    first_ms: u64,
    cap_ms: u64,
}

/// Volume mounts (`exponentialbackoff`: 500 ms, doubling, at most 2m2s).
const MOUNT: Backoff = Backoff {
    first_ms: 500,
    cap_ms: 122_000,
};
/// Image pulls (the kubelet's image back-off: 10 s, doubling, at most 300 s).
const PULL: Backoff = Backoff {
    first_ms: 10_000,
    cap_ms: 300_000,
};
/// The scheduler's retries of an unschedulable pod without a cluster change (5 min).
const SCHEDULE: Backoff = Backoff {
    first_ms: 300_000,
    cap_ms: 300_000,
};
/// How often the kubelet syncs a pod whose last sync failed (`backOffPeriod`, 10 s).
const SYNC_MS: u64 = 10_000;

impl Backoff {
    fn attempts(self, start: SimTime) -> impl Iterator<Item = SimTime> {
        let mut next = start;
        let mut gap = self.first_ms;
        std::iter::from_fn(move || {
            let t = next;
            next = t.plus_ms(gap);
            gap = (gap * 2).min(self.cap_ms);
            Some(t)
        })
    }

    /// The first attempt after `after` (the first of all when `None`).
    fn first_after(self, start: SimTime, after: Option<SimTime>) -> SimTime {
        self.attempts(start)
            .find(|t| after.is_none_or(|a| *t > a))
            .unwrap_or(start)
    }

    /// The attempts in `[from, to]`: how many, and the last.
    fn between(self, start: SimTime, from: SimTime, to: SimTime) -> (u64, Option<SimTime>) {
        let mut count = 0;
        let mut last = None;
        for t in self.attempts(start).take_while(|t| *t <= to) {
            if t >= from {
                count += 1;
                last = Some(t);
            }
        }
        (count, last)
    }
}

impl Stage {
    /// Moves the stage to `now`, given what an attempt would find now (`failures` empty: it
    /// succeeds). Attempts follow `backoff` from `start`; nothing happens before the first
    /// attempt after the last failing check.
    fn advance(&mut self, backoff: Backoff, start: SimTime, now: SimTime, failures: Vec<String>) {
        if self.done.is_some() {
            return;
        }
        let next = backoff.first_after(start, self.checked);
        if next > now {
            return;
        }
        if failures.is_empty() {
            self.done = Some(next);
        } else {
            if self.failing != failures {
                self.failing = failures;
                self.failing_since = next;
            }
            self.checked = Some(now);
        }
    }

    /// Failing now (not done, and some attempt failed).
    pub(super) fn is_failing(&self) -> bool {
        self.done.is_none() && !self.failing.is_empty()
    }
}

/// Parses a `metav1.Time` into simulated time (0 when unparsable or before the epoch).
fn sim_time(clock: &Clock, value: &Value) -> SimTime {
    value
        .as_str()
        .and_then(|t| chrono::DateTime::parse_from_rfc3339(t).ok())
        .map(|t| (t.with_timezone(&chrono::Utc) - clock.epoch).num_milliseconds())
        .map_or(SimTime(0), |ms| SimTime(ms.max(0) as u64))
}

/// A pod's containers as the kubelet handles them: init containers first.
pub(super) struct Container<'a> {
    pub spec: &'a Value,
    pub name: String,
    pub init: bool,
    /// A restartable init container (native sidecar).
    pub sidecar: bool,
}

pub(super) fn containers(pod: &Value) -> Vec<Container<'_>> {
    let mut out = vec![];
    for (list, init) in [("initContainers", true), ("containers", false)] {
        for spec in pod["spec"][list].as_array().into_iter().flatten() {
            out.push(Container {
                spec,
                name: spec["name"].as_str().unwrap_or_default().to_string(),
                init,
                sidecar: init && spec["restartPolicy"] == "Always",
            });
        }
    }
    out
}

fn field_path(container: &Container) -> String {
    let list = if container.init {
        "initContainers"
    } else {
        "containers"
    };
    format!("spec.{list}{{{}}}", container.name)
}

/// `cpu`, `memory`, `nvidia.com/gpu` and pods a pod asks of a node.
fn requests(pod: &Value) -> BTreeMap<String, f64> {
    let mut out = BTreeMap::new();
    for c in pod["spec"]["containers"].as_array().into_iter().flatten() {
        for (resource, quantity) in c["resources"]["requests"].as_object().into_iter().flatten() {
            let value = quantity
                .as_str()
                .and_then(parse_quantity)
                .or_else(|| quantity.as_f64())
                .unwrap_or(0.0);
            *out.entry(resource.clone()).or_insert(0.0) += value;
        }
        // A GPU limit without a request requests as much.
        if c["resources"]["requests"]["nvidia.com/gpu"].is_null()
            && let Some(limit) = c["resources"]["limits"]["nvidia.com/gpu"]
                .as_str()
                .and_then(parse_quantity)
                .or_else(|| c["resources"]["limits"]["nvidia.com/gpu"].as_f64())
        {
            *out.entry("nvidia.com/gpu".into()).or_insert(0.0) += limit;
        }
    }
    out.insert("pods".into(), 1.0);
    out
}

fn allocatable(node: &Value, resource: &str) -> f64 {
    let value = &node["status"]["allocatable"][resource];
    value
        .as_str()
        .and_then(parse_quantity)
        .or_else(|| value.as_f64())
        .unwrap_or(0.0)
}

/// Why the scheduler cannot place `pod` now, or the node it picks.
fn schedule(cluster: &KubeCluster, pod: &Value, nodes: &[Value]) -> Result<String, String> {
    let n = nodes.len();
    if n == 0 {
        return Err("no nodes available to schedule pods".into());
    }
    let namespace = pod["metadata"]["namespace"].as_str().unwrap_or_default();
    let not_helpful = format!(
        "preemption: 0/{n} nodes are available: {n} Preemption is not helpful for scheduling."
    );
    for volume in pod["spec"]["volumes"].as_array().into_iter().flatten() {
        let Some(claim) = volume["persistentVolumeClaim"]["claimName"].as_str() else {
            continue;
        };
        let reason = match cluster
            .store
            .get("", "persistentvolumeclaims", namespace, claim)
        {
            None => format!("persistentvolumeclaim \"{claim}\" not found"),
            Some(pvc) if pvc["status"]["phase"] != "Bound" => {
                "pod has unbound immediate PersistentVolumeClaims".into()
            }
            Some(_) => continue,
        };
        return Err(format!(
            "0/{n} nodes are available: {reason}. {not_helpful}"
        ));
    }
    let spec = &pod["spec"];
    let wanted = requests(pod);
    // What the pods bound to each node already ask.
    let mut used: BTreeMap<String, BTreeMap<String, f64>> = BTreeMap::new();
    let uid = &pod["metadata"]["uid"];
    for other in cluster.store.list("", "pods", None) {
        let Some(node) = other["spec"]["nodeName"].as_str() else {
            continue;
        };
        if other["metadata"]["uid"] == *uid
            || matches!(
                other["status"]["phase"].as_str(),
                Some("Succeeded" | "Failed")
            )
        {
            continue;
        }
        let entry = used.entry(node.to_string()).or_default();
        for (resource, value) in requests(other) {
            *entry.entry(resource).or_insert(0.0) += value;
        }
    }
    let mut reasons: BTreeMap<String, usize> = BTreeMap::new();
    let mut preemption: BTreeMap<&str, usize> = BTreeMap::new();
    let mut feasible: Vec<(usize, String)> = vec![];
    for node in nodes {
        let name = node["metadata"]["name"].as_str().unwrap_or_default();
        let unschedulable_tolerated =
            spec["tolerations"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|t| {
                    t["operator"] == "Exists"
                        && (t["key"].is_null() || t["key"] == "node.kubernetes.io/unschedulable")
                });
        let mut node_reasons: Vec<String> = vec![];
        let mut resolvable = false;
        if node["spec"]["unschedulable"] == true && !unschedulable_tolerated {
            node_reasons.push("node(s) were unschedulable".into());
        } else if let Some(taint) = untolerated_taint(spec, node) {
            node_reasons.push(format!(
                "node(s) had untolerated taint {{{}: {}}}",
                taint["key"].as_str().unwrap_or_default(),
                taint["value"].as_str().unwrap_or_default()
            ));
        } else if !node_selected(spec, node) {
            node_reasons.push("node(s) didn't match Pod's node affinity/selector".into());
        } else {
            let node_used = used.get(name);
            let left = |resource: &str| {
                allocatable(node, resource)
                    - node_used
                        .and_then(|u| u.get(resource))
                        .copied()
                        .unwrap_or(0.0)
            };
            if left("pods") < 1.0 {
                node_reasons.push("Too many pods".into());
            }
            for (resource, amount) in &wanted {
                if resource != "pods" && *amount > 0.0 && left(resource) + 1e-9 < *amount {
                    node_reasons.push(format!("Insufficient {resource}"));
                }
            }
            resolvable = !node_reasons.is_empty();
        }
        if node_reasons.is_empty() {
            let pods = cluster
                .store
                .list("", "pods", None)
                .into_iter()
                .filter(|p| p["spec"]["nodeName"] == name && p["metadata"]["uid"] != *uid)
                .count();
            feasible.push((pods, name.to_string()));
            continue;
        }
        for reason in node_reasons {
            *reasons.entry(reason).or_insert(0) += 1;
        }
        let outcome = if resolvable {
            "No preemption victims found for incoming pod"
        } else {
            "Preemption is not helpful for scheduling"
        };
        *preemption.entry(outcome).or_insert(0) += 1;
    }
    if let Some((_, node)) = feasible.into_iter().min() {
        return Ok(node);
    }
    let histogram = |counts: Vec<String>| {
        let mut counts = counts;
        counts.sort();
        counts.join(", ")
    };
    let filters = histogram(reasons.iter().map(|(r, c)| format!("{c} {r}")).collect());
    let victims = histogram(preemption.iter().map(|(r, c)| format!("{c} {r}")).collect());
    Err(format!(
        "0/{n} nodes are available: {filters}. preemption: 0/{n} nodes are available: {victims}."
    ))
}

/// When a container starts (possibly after now), once its image is pulled: `start_delay_ms`
/// after the pull, and a regular container not before every init container has started.
pub fn started_at(pod: &Value, run: &PodRun, name: &str) -> Option<SimTime> {
    let all = containers(pod);
    let own = |c: &Container| pulled_at(run, &c.name).map(|t| t.plus_ms(run.start_delay_ms));
    let container = all.iter().find(|c| c.name == name)?;
    let mut at = own(container)?;
    if !container.init {
        for init in all.iter().filter(|c| c.init) {
            at = at.max(own(init)?);
        }
    }
    Some(at)
}

/// When a container's image was pulled, if it was.
pub(super) fn pulled_at(run: &PodRun, name: &str) -> Option<SimTime> {
    run.pulls.get(name).and_then(|s| s.done)
}

/// The latest kubelet sync of a failing pull at or before `now`: whether it was a pull attempt
/// (else a back-off sync), and the attempt it follows.
pub(super) fn pull_sync(stage: &Stage, start: SimTime, now: SimTime) -> (bool, SimTime) {
    let (_, last) = PULL.between(start, stage.failing_since, now);
    let last = last.unwrap_or(stage.failing_since);
    let next = PULL.first_after(start, Some(last));
    let since = now.0.saturating_sub(last.0);
    let attempt = since < SYNC_MS || next.0.saturating_sub(last.0) <= SYNC_MS;
    (attempt, last)
}

/// Back-off syncs of a failing pull in `[from, now]`: how many, the first and the last.
fn backoff_syncs(
    start: SimTime,
    from: SimTime,
    now: SimTime,
) -> (u64, Option<SimTime>, Option<SimTime>) {
    let mut count = 0;
    let (mut first, mut last) = (None, None);
    let attempts: Vec<SimTime> = PULL.attempts(start).take_while(|t| *t <= now).collect();
    for a in &attempts {
        let next = PULL.first_after(start, Some(*a));
        let mut sync = a.plus_ms(SYNC_MS);
        while sync < next && sync <= now {
            if sync >= from {
                count += 1;
                first = first.or(Some(sync));
                last = Some(sync);
            }
            sync = sync.plus_ms(SYNC_MS);
        }
    }
    (count, first, last)
}

/// Brings every pod of the cluster (key `key`) to `clock.now`.
pub fn pods(world: &mut World, cx: &crate::shared::Ctx, key: &str, cluster: &mut KubeCluster) {
    let clock = Clock {
        epoch: world.epoch,
        now: cx.now,
    };
    // DaemonSet pods are the DaemonSet controller's to run ([`super::daemonset_pods`]).
    let keys: Vec<String> = cluster
        .store
        .keys("", "pods")
        .into_iter()
        .filter(|k| {
            cluster
                .store
                .objects
                .get(k)
                .is_some_and(|p| !super::daemonset_pods::is_daemonset_pod(p))
        })
        .collect();
    let live: BTreeSet<String> = keys.iter().cloned().collect();
    cluster.controllers.pods.retain(|k, _| live.contains(k));
    for pod_key in &keys {
        let Some(pod) = cluster.store.objects.get(pod_key) else {
            continue;
        };
        if pod["metadata"].get("deletionTimestamp").is_some() {
            continue;
        }
        let uid = pod["metadata"]["uid"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        let fresh = cluster
            .controllers
            .pods
            .get(pod_key)
            .is_none_or(|r| r.uid != uid);
        if fresh {
            // Drawn only for pods that run an NCCL test, so that other worlds draw as before.
            let nccl = pod["spec"]["containers"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|c| runs::nccl_benchmark(pod, c).is_some());
            let start_delay_ms = world.duration_ms(cx, "kube.pod.start");
            let test_ms = if nccl {
                world.duration_ms(cx, "kube.nccl.test")
            } else {
                0
            };
            cluster.controllers.pods.insert(
                pod_key.clone(),
                PodRun {
                    uid,
                    start_delay_ms,
                    test_ms,
                    ..PodRun::default()
                },
            );
        }
    }
    let gke = Gke::of(world, key, cluster);
    for pod_key in &keys {
        tick_pod(world, &gke, cluster, &clock, pod_key);
    }
    let config = cx.workloads.lock().clone();
    runs::decide_ends(cluster, &config, cx.now);
    for pod_key in &keys {
        report_pod(cluster, &clock, pod_key);
    }
    events::expire(cluster, &clock);
}

fn tick_pod(world: &World, gke: &Gke, cluster: &mut KubeCluster, clock: &Clock, pod_key: &str) {
    let Some(pod) = cluster.store.objects.get(pod_key).cloned() else {
        return;
    };
    if pod["metadata"].get("deletionTimestamp").is_some() {
        return;
    }
    let Some(mut run) = cluster.controllers.pods.get(pod_key).cloned() else {
        return;
    };
    let Some((_, _, namespace, name)) = split_key(pod_key) else {
        return;
    };
    let (namespace, name) = (namespace.to_string(), name.to_string());
    let now = clock.now;
    let created = cluster
        .store
        .generation_since
        .get(pod_key)
        .map(|(_, t)| *t)
        .unwrap_or_else(|| sim_time(clock, &pod["metadata"]["creationTimestamp"]));
    let nodes: Vec<Value> = cluster
        .store
        .list("", "nodes", None)
        .into_iter()
        .cloned()
        .collect();
    let mut pod = pod;

    // The scheduler.
    if run.scheduled.is_none() {
        match pod["spec"]["nodeName"].as_str().filter(|n| !n.is_empty()) {
            // Bound by its author: the kubelet of that node takes it once the node exists.
            Some(node) => {
                if let Some(since) = nodes
                    .iter()
                    .any(|o| o["metadata"]["name"] == node)
                    .then(|| cluster.node_since.get(node).copied().unwrap_or(created))
                {
                    run.node = Some(node.to_string());
                    run.scheduled = Some(created.max(since).min(now));
                }
            }
            None => match schedule(cluster, &pod, &nodes) {
                Ok(node) => {
                    let since = cluster.node_since.get(&node).copied().unwrap_or(created);
                    let at = created
                        .max(since)
                        .max(run.scheduling.checked.unwrap_or(created))
                        .min(now);
                    run.node = Some(node.clone());
                    run.scheduled = Some(at);
                    run.scheduling.done = Some(at);
                    pod["spec"]["nodeName"] = json!(node);
                    pod = cluster.store.put("", "pods", &namespace, &name, pod);
                    events::record(
                        cluster,
                        clock,
                        &pod,
                        &Occurrence {
                            source: Source::Scheduler("Binding"),
                            kind: "Normal",
                            reason: "Scheduled",
                            message: &format!("Successfully assigned {namespace}/{name} to {node}"),
                            field_path: None,
                            first: at,
                            last: at,
                            count: 1,
                        },
                    );
                }
                Err(message) => {
                    let stage = &mut run.scheduling;
                    if stage.failing != [message.clone()] {
                        stage.failing = vec![message];
                        stage.failing_since = stage.checked.unwrap_or(created).max(created);
                    }
                    stage.checked = Some(now);
                }
            },
        }
    }
    let node_name = run.node.clone();
    let node = node_name
        .as_deref()
        .and_then(|n| nodes.iter().find(|o| o["metadata"]["name"] == n));
    if run.scheduled.is_some() && node.is_none() {
        // Bound to a node that is gone: the pod garbage collector deletes it.
        cluster.store.remove("", "pods", &namespace, &name);
        cluster.controllers.pods.remove(pod_key);
        return;
    }

    // The kubelet: volumes, then images.
    if let (Some(node), Some(scheduled)) = (node, run.scheduled) {
        if run.mount.done.is_none() {
            let failures = access::mount_failures(world, gke, cluster, &pod, node);
            run.mount.advance(MOUNT, scheduled, now, failures);
        }
        if let Some(mounted) = run.mount.done {
            let account = node_account(world, gke, cluster, node);
            for container in containers(&pod) {
                let stage = run.pulls.entry(container.name.clone()).or_default();
                if stage.done.is_some() {
                    continue;
                }
                let image = container.spec["image"].as_str().unwrap_or_default();
                let failure = access::pull_failure(world, &account, image);
                stage.advance(PULL, mounted, now, failure.into_iter().collect());
            }
        }
    }

    cluster.controllers.pods.insert(pod_key.to_string(), run);
}

/// Records a pod's events and writes its status at `clock.now`, once every pod has been
/// advanced and the containers' ends decided.
fn report_pod(cluster: &mut KubeCluster, clock: &Clock, pod_key: &str) {
    let Some(pod) = cluster.store.objects.get(pod_key).cloned() else {
        return;
    };
    if pod["metadata"].get("deletionTimestamp").is_some() {
        return;
    }
    let Some(run) = cluster.controllers.pods.get(pod_key).cloned() else {
        return;
    };
    let now = clock.now;
    let node_name = run.node.clone();
    let node = node_name
        .as_deref()
        .and_then(|n| cluster.store.get("", "nodes", "", n))
        .cloned();
    let node = node.as_ref();
    // Events and status.
    let node_label = node_name.clone().unwrap_or_default();
    let mut due: Vec<Due> = vec![];
    if run.scheduled.is_none() && run.scheduling.is_failing() {
        let since = run.scheduling.failing_since;
        let (count, last) = SCHEDULE.between(since, since, now);
        for message in &run.scheduling.failing {
            due.push(Due {
                kubelet: false,
                kind: "Warning",
                reason: "FailedScheduling",
                message: message.clone(),
                path: None,
                first: since,
                last: last.unwrap_or(since),
                count,
            });
        }
    }
    if let Some(scheduled) = run.scheduled {
        if run.mount.is_failing() {
            let since = run.mount.failing_since;
            let (count, last) = MOUNT.between(scheduled, since, now);
            for message in &run.mount.failing {
                due.push(
                    Due::kubelet("Warning", "FailedMount", message.clone(), None).at(
                        since,
                        last.unwrap_or(since),
                        count,
                    ),
                );
            }
        }
        if let Some(mounted) = run.mount.done {
            for container in containers(&pod) {
                if let Some(stage) = run.pulls.get(&container.name) {
                    container_events(
                        &container,
                        stage,
                        mounted,
                        run.start_delay_ms,
                        now,
                        &mut due,
                    );
                }
            }
        }
    }
    for d in due {
        let source = if d.kubelet {
            Source::Kubelet(&node_label)
        } else {
            Source::Scheduler("Scheduling")
        };
        events::record(
            cluster,
            clock,
            &pod,
            &Occurrence {
                source,
                kind: d.kind,
                reason: d.reason,
                message: &d.message,
                field_path: d.path,
                first: d.first,
                last: d.last,
                count: d.count,
            },
        );
    }
    let status = pod_status::status(&pod, &run, node, clock);
    set_status(&mut cluster.store, pod_key, status);
}

/// An event to record, with its occurrences so far.
struct Due {
    kubelet: bool,
    kind: &'static str,
    reason: &'static str,
    message: String,
    path: Option<String>,
    first: SimTime,
    last: SimTime,
    count: u64,
}

impl Due {
    fn kubelet(
        kind: &'static str,
        reason: &'static str,
        message: String,
        path: Option<String>,
    ) -> Due {
        Due {
            kubelet: true,
            kind,
            reason,
            message,
            path,
            first: SimTime(0),
            last: SimTime(0),
            count: 1,
        }
    }

    fn at(mut self, first: SimTime, last: SimTime, count: u64) -> Due {
        self.first = first;
        self.last = last;
        self.count = count;
        self
    }
}

/// The kubelet's events about one container's image and start.
fn container_events(
    container: &Container,
    stage: &Stage,
    mounted: SimTime,
    delay_ms: u64,
    now: SimTime,
    due: &mut Vec<Due>,
) {
    let image = container.spec["image"].as_str().unwrap_or_default();
    let path = Some(field_path(container));
    let event = |kind, reason, message: String| Due::kubelet(kind, reason, message, path.clone());
    if stage.is_failing() {
        let since = stage.failing_since;
        let (count, last) = PULL.between(mounted, since, now);
        let last = last.unwrap_or(since);
        due.push(
            event("Normal", "Pulling", format!("Pulling image \"{image}\"")).at(since, last, count),
        );
        for message in &stage.failing {
            due.push(
                event(
                    "Warning",
                    "Failed",
                    format!("Failed to pull image \"{image}\": {message}"),
                )
                .at(since, last, count),
            );
        }
        due.push(event("Warning", "Failed", "Error: ErrImagePull".into()).at(since, last, count));
        let (syncs, first, last) = backoff_syncs(mounted, since, now);
        if let (Some(first), Some(last)) = (first, last) {
            due.push(
                event(
                    "Normal",
                    "BackOff",
                    format!("Back-off pulling image \"{image}\""),
                )
                .at(first, last, syncs),
            );
            due.push(
                event("Warning", "Failed", "Error: ImagePullBackOff".into()).at(first, last, syncs),
            );
        }
    } else if let Some(pulled) = stage.done {
        due.push(
            event("Normal", "Pulling", format!("Pulling image \"{image}\"")).at(pulled, pulled, 1),
        );
        let started = pulled.plus_ms(delay_ms);
        if started <= now {
            let took = crate::clock::go_duration(delay_ms as f64 / 1000.0);
            let size = 20_000_000 + hash(image) % 900_000_000;
            due.push(
                event(
                    "Normal",
                    "Pulled",
                    format!(
                        "Successfully pulled image \"{image}\" in {took} ({took} including waiting). Image size: {size} bytes."
                    ),
                )
                .at(started, started, 1),
            );
            due.push(
                event(
                    "Normal",
                    "Created",
                    format!("Created container: {}", container.name),
                )
                .at(started, started, 1),
            );
            due.push(
                event(
                    "Normal",
                    "Started",
                    format!("Started container {}", container.name),
                )
                .at(started, started, 1),
            );
        }
    }
}

/// The IAM service account the kubelet of `node` pulls images as: its pool's account, the
/// cluster project's Compute Engine default account for `default` (and for nodes made before
/// nodes carried their account, or not by GKE).
fn node_account(world: &World, gke: &Gke, cluster: &KubeCluster, node: &Value) -> String {
    let pool = node["metadata"]["labels"]["cloud.google.com/gke-nodepool"]
        .as_str()
        .unwrap_or_default();
    cluster
        .pool_accounts
        .get(pool)
        .filter(|a| !a.is_empty())
        .cloned()
        .unwrap_or_else(|| crate::iam::compute_default_email(world, &gke.project))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoffs_follow_the_kubelet() {
        let start = SimTime(1_000);
        let mounts: Vec<u64> = MOUNT.attempts(start).take(11).map(|t| t.0).collect();
        assert_eq!(
            mounts,
            [
                1_000, 1_500, 2_500, 4_500, 8_500, 16_500, 32_500, 64_500, 128_500, 250_500,
                372_500
            ]
        );
        let pulls: Vec<u64> = PULL
            .attempts(SimTime(0))
            .take(8)
            .map(|t| t.0 / 1000)
            .collect();
        assert_eq!(pulls, [0, 10, 30, 70, 150, 310, 610, 910]);
        assert_eq!(PULL.first_after(SimTime(0), None), SimTime(0));
        assert_eq!(
            PULL.first_after(SimTime(0), Some(SimTime(10_000))),
            SimTime(30_000)
        );
        assert_eq!(
            PULL.between(SimTime(0), SimTime(10_000), SimTime(70_000)),
            (3, Some(SimTime(70_000)))
        );
        // Syncs between attempts: none between 0 and 10, one (20) between 10 and 30.
        let (count, first, last) = backoff_syncs(SimTime(0), SimTime(0), SimTime(30_000));
        assert_eq!(
            (count, first, last),
            (1, Some(SimTime(20_000)), Some(SimTime(20_000)))
        );
    }

    #[test]
    fn stages_succeed_at_the_first_attempt_after_the_last_failing_check() {
        let mut stage = Stage::default();
        stage.advance(MOUNT, SimTime(0), SimTime(0), vec!["no".into()]);
        assert_eq!(
            (stage.failing_since, stage.checked),
            (SimTime(0), Some(SimTime(0)))
        );
        stage.advance(MOUNT, SimTime(0), SimTime(200_000), vec!["no".into()]);
        assert_eq!(stage.checked, Some(SimTime(200_000)));
        // Fixed at 200 s: attempts at 127.5 s and 249.5 s; the next one after 200 s succeeds,
        // however late the next look.
        stage.advance(MOUNT, SimTime(0), SimTime(240_000), vec![]);
        assert_eq!(stage.done, None);
        stage.advance(MOUNT, SimTime(0), SimTime(900_000), vec![]);
        assert_eq!(stage.done, Some(SimTime(249_500)));
    }
}
