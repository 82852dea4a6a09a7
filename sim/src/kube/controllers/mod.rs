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
use crate::shared::Ctx;
pub use crate::state::kube::{ControllerState, Rollout};
use crate::world::World;
use chrono::{DateTime, SecondsFormat, Utc};
use serde_json::Value;
use std::collections::BTreeSet;

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
