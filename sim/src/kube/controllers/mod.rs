//! The controllers of a simulated cluster, evaluated lazily in `tick` (nothing runs in the
//! background): Node objects and GPU drivers ([`nodes`]), GKE-managed RDMA NICs as DRA devices
//! ([`dranet`]), DaemonSet and Deployment status ([`workloads`]), the DaemonSets GKE runs
//! ([`gke_daemonsets`]) and every DaemonSet's pods ([`daemonset_pods`]), Kueue's queue status, in-use flavors and
//! admission ([`kueue`]), Jobs and their pods ([`jobs`]), JobSets and their Jobs ([`jobsets`]), Pods — scheduler and kubelet
//! ([`pods`]), with what their volumes need ([`access`]), their events ([`events`]), how their
//! containers end ([`runs`] for NCCL tests, [`outcomes`] for the rest) and the status that results ([`pod_status`]) — and the cluster
//! housekeeping — CRD conditions, namespace and CRD deletion, per-namespace defaults, add-on
//! objects, PV/PVC binding, APIService availability
//! ([`housekeeping`]).
//!
//! Every status is computed from simulated times (when a generation was written, when a node
//! appeared, the delay drawn for it), never from when the tick happened to run, so results do not
//! depend on how often clients look. Statuses are only written when they change.

pub mod access;
pub mod daemonset_pods;
pub mod dranet;
pub mod events;
pub mod gke_daemonsets;
pub mod housekeeping;
pub mod jobs;
pub mod jobsets;
pub mod kueue;
pub mod kueue_priority;
pub mod nodes;
pub mod outcomes;
pub mod pod_status;
pub mod pods;
pub mod runs;
pub mod workloads;

use super::KubeCluster;
use super::store::Store;
use crate::clock::SimTime;
use crate::world::{Ctx, World};
use chrono::{DateTime, SecondsFormat, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};

/// What the controllers remember between ticks (persisted with the world).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct ControllerState {
    /// Object key → the rollout of its current generation.
    pub delays: BTreeMap<String, Rollout>,
    /// Deployment key → when its pods became available (kept across rollouts).
    pub available_since: BTreeMap<String, SimTime>,
    /// Deployment key → how long after becoming available its pods answer webhook calls.
    pub webhook_delay: BTreeMap<String, u64>,
    /// DaemonSet key → nodes that had a ready pod of the previous generation when it changed.
    pub previous_ready: BTreeMap<String, BTreeSet<String>>,
    /// Node pool → driver installation delay for GKE-managed drivers.
    pub driver_delay: BTreeMap<String, u64>,
    /// Pod key → how far the scheduler and the kubelet have brought it; absent from worlds
    /// saved before pods were run.
    #[serde(default)]
    pub pods: BTreeMap<String, pods::PodRun>,
    /// Job key → what the Job controller (and Kueue's admission) did with it.
    #[serde(default)]
    pub jobs: BTreeMap<String, jobs::JobRun>,
    /// Declared fault outcome → how many containers it decided ([`outcomes`]).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub outcome_uses: BTreeMap<String, u32>,
    /// JobSet key → what the JobSet controller (and Kueue's admission) did with it.
    #[serde(default)]
    pub jobsets: BTreeMap<String, jobsets::JobSetRun>,
    /// The (nodes, DaemonSets, pods) revisions after the last DaemonSet pass, and the moment a
    /// rollout moves on by itself (none: never): until one of them moves (or a change from
    /// outside the store), the next pass would change nothing ([`daemonset_pods::sync`]).
    #[serde(skip)]
    pub ds_pods_settled: Option<((u64, u64, u64), Option<SimTime>)>,
}

impl ControllerState {
    /// When the pods of a Deployment answer on their ports (available + webhook delay).
    pub fn endpoint_ready_at(&self, key: &str) -> Option<SimTime> {
        let since = *self.available_since.get(key)?;
        Some(since.plus_ms(self.webhook_delay.get(key).copied().unwrap_or(0)))
    }

    /// A stable pod IP for a workload (for error messages).
    pub fn pod_ip(&self, key: &str) -> String {
        let h = hash(key);
        format!(
            "10.{}.{}.{}",
            8 + (h % 8),
            (h >> 8) % 250,
            2 + (h >> 16) % 250
        )
    }
}

/// One generation of a workload (or a CRD) on its way to ready.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Rollout {
    pub generation: i64,
    /// When the generation was written.
    pub since: SimTime,
    /// How long its pods take to become ready.
    pub delay_ms: u64,
}

/// FNV-1a, for stable names and addresses.
pub fn hash(s: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in s.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// Simulated time and how to print it.
#[derive(Debug, Clone, Copy)]
pub struct Clock {
    pub epoch: DateTime<Utc>,
    pub now: SimTime,
}

impl Clock {
    /// RFC 3339 with seconds, as Kubernetes prints `metav1.Time`.
    pub fn ts(&self, t: SimTime) -> String {
        timestamp(self.epoch, t)
    }
}

pub fn timestamp(epoch: DateTime<Utc>, t: SimTime) -> String {
    (epoch + chrono::Duration::milliseconds(t.0 as i64)).to_rfc3339_opts(SecondsFormat::Secs, true)
}

/// Replaces an object's `status` if it differs; returns true when it changed.
pub fn set_status(store: &mut Store, key: &str, status: Value) -> bool {
    let Some(object) = store.objects.get(key) else {
        return false;
    };
    if object["status"] == status {
        return false;
    }
    let mut object = object.clone();
    object["status"] = status;
    let Some((group, resource, namespace, name)) = super::store::split_key(key) else {
        return false;
    };
    let (group, resource, namespace, name) = (
        group.to_string(),
        resource.to_string(),
        namespace.to_string(),
        name.to_string(),
    );
    store.put(&group, &resource, &namespace, &name, object);
    true
}

/// The current generation of an object and when it was written.
pub fn generation_since(store: &Store, key: &str) -> (i64, SimTime) {
    let generation = store
        .objects
        .get(key)
        .and_then(|o| o["metadata"]["generation"].as_i64())
        .unwrap_or(1);
    match store.generation_since.get(key) {
        Some((g, t)) if *g == generation => (generation, *t),
        _ => (generation, SimTime(0)),
    }
}

/// Draws the rollout delays that new generations need (before the cluster is borrowed).
fn draw_delays(world: &mut World, cx: &Ctx, cluster: &mut KubeCluster) {
    let mut wanted: Vec<(String, i64, &'static str)> = Vec::new();
    for (group, resource, latency) in [
        ("apps", "daemonsets", "kube.daemonset.ready"),
        ("apps", "deployments", "kube.deployment.available"),
        (
            "apiextensions.k8s.io",
            "customresourcedefinitions",
            "kube.crd.established",
        ),
    ] {
        for key in cluster.store.keys(group, resource) {
            let (generation, _) = generation_since(&cluster.store, &key);
            let known = cluster.controllers.delays.get(&key).map(|d| d.generation);
            // CRDs are established once, whatever their later generations.
            let needed = if resource == "customresourcedefinitions" {
                known.is_none()
            } else {
                known != Some(generation)
            };
            if needed {
                wanted.push((key, generation, latency));
            }
        }
    }
    for (key, generation, latency) in wanted {
        if latency == "kube.daemonset.ready" {
            workloads::remember_previous_ready(cluster, &key, cx.now);
        }
        let delay_ms = world.duration_ms(cx, latency);
        let (_, since) = generation_since(&cluster.store, &key);
        let rollout = Rollout {
            generation,
            since,
            delay_ms,
        };
        cluster.controllers.delays.insert(key.clone(), rollout);
        if latency == "kube.deployment.available"
            && !cluster.controllers.webhook_delay.contains_key(&key)
        {
            let webhook = world.duration_ms(cx, "kube.webhook.ready");
            cluster.controllers.webhook_delay.insert(key, webhook);
        }
    }
    for pool in cluster.nodes.keys() {
        if !cluster.controllers.driver_delay.contains_key(pool) {
            let delay = world.duration_ms(cx, "kube.driver.installed");
            cluster.controllers.driver_delay.insert(pool.clone(), delay);
        }
    }
    let known: BTreeSet<String> = cluster.store.objects.keys().cloned().collect();
    cluster.controllers.delays.retain(|k, _| known.contains(k));
    cluster
        .controllers
        .available_since
        .retain(|k, _| known.contains(k));
    cluster
        .controllers
        .webhook_delay
        .retain(|k, _| known.contains(k));
    cluster
        .controllers
        .previous_ready
        .retain(|k, _| known.contains(k));
}

/// Brings one cluster's (key `key`) objects up to `cx.now`; true if anything changed.
pub fn tick_cluster(world: &mut World, cx: &Ctx, key: &str, cluster: &mut KubeCluster) -> bool {
    if !cluster.ready || cluster.ticked == Some((cx.now, cluster.store.resource_version)) {
        return false;
    }
    let clock = Clock {
        epoch: world.epoch,
        now: cx.now,
    };
    if cluster.ticked.is_none() {
        // Changed from outside the store (nodes, readiness, add-ons): no pass is settled.
        cluster.controllers.ds_pods_settled = None;
    }
    let before = cluster.store.resource_version;
    housekeeping::finish_deletions(cluster);
    // Before the delays are drawn: GKE's DaemonSets come with theirs.
    gke_daemonsets::sync(cluster, &clock);
    draw_delays(world, cx, cluster);
    housekeeping::crds(cluster, &clock);
    housekeeping::namespaces(cluster, &clock);
    housekeeping::addons(cluster, &clock);
    nodes::sync(cluster, &clock);
    dranet::sync(cluster, &clock);
    workloads::daemonsets(cluster, &clock);
    daemonset_pods::sync(cluster, &clock);
    workloads::deployments(cluster, &clock);
    housekeeping::api_services(cluster, &clock);
    kueue::flavor_finalizers(cluster, &clock);
    kueue::admit(cluster, &clock);
    kueue::queues(cluster, &clock);
    housekeeping::volumes(cluster, &clock);
    jobsets::sync(cluster, &clock);
    jobs::sync(cluster, &clock);
    pods::pods(world, cx, key, cluster);
    jobs::sync(cluster, &clock);
    jobsets::sync(cluster, &clock);
    // Jobs that ended now give their quota back now.
    kueue::admit(cluster, &clock);
    kueue::queues(cluster, &clock);
    cluster.ticked = Some((cx.now, cluster.store.resource_version));
    cluster.store.resource_version != before
}
