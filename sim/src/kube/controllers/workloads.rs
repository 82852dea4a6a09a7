//! DaemonSet and Deployment status.
//!
//! A DaemonSet wants a pod on every node its pod template can run on (nodeSelector, required node
//! affinity, tolerations against NoSchedule/NoExecute taints, plus the tolerations the DaemonSet
//! controller adds itself). Each pod of the current generation is ready `kube.daemonset.ready`
//! after the later of the generation's write and the node's appearance; pods of the previous
//! generation stay ready meanwhile but do not count as updated.
//!
//! A Deployment's pods become available `kube.deployment.available` after the later of its
//! generation's write and the first node they can run on; without such a node they stay Pending
//! and the Deployment unavailable (and after `progressDeadlineSeconds`, ProgressDeadlineExceeded).

use super::{Clock, Rollout, generation_since, hash, set_status};
use crate::clock::SimTime;
use crate::kube::KubeCluster;
use crate::kube::selectors::{node_selected, tolerates_node};
use crate::kube::store::split_key;
use serde_json::{Value, json};
use std::collections::BTreeSet;

/// Tolerations the DaemonSet controller adds to every DaemonSet pod.
pub fn daemonset_tolerations() -> Vec<Value> {
    [
        ("node.kubernetes.io/not-ready", "NoExecute"),
        ("node.kubernetes.io/unreachable", "NoExecute"),
        ("node.kubernetes.io/disk-pressure", "NoSchedule"),
        ("node.kubernetes.io/memory-pressure", "NoSchedule"),
        ("node.kubernetes.io/pid-pressure", "NoSchedule"),
        ("node.kubernetes.io/unschedulable", "NoSchedule"),
    ]
    .iter()
    .map(|(k, e)| json!({"key": k, "operator": "Exists", "effect": e}))
    .collect()
}

/// True when the pod template runs the COS (or Ubuntu) NVIDIA driver installer image.
pub fn is_driver_installer(ds: &Value) -> bool {
    let spec = &ds["spec"]["template"]["spec"];
    ["initContainers", "containers"].iter().any(|list| {
        spec[*list].as_array().into_iter().flatten().any(|c| {
            c["image"].as_str().is_some_and(|image| {
                image.contains("cos-nvidia-installer")
                    || image.contains("nvidia-driver-installer")
                    || image.contains("cos-gpu-installer")
            })
        })
    })
}

/// Where a DaemonSet runs and where its pods are ready.
#[derive(Debug, Default)]
pub struct Placement {
    /// Nodes the DaemonSet wants a pod on.
    pub desired: Vec<String>,
    /// Nodes with a ready pod of the current generation.
    pub ready_updated: BTreeSet<String>,
    /// Nodes with a ready pod of any generation.
    pub ready_any: BTreeSet<String>,
}

fn node_since(cluster: &KubeCluster, node: &Value, now: SimTime) -> SimTime {
    let name = node["metadata"]["name"].as_str().unwrap_or_default();
    cluster.node_since.get(name).copied().unwrap_or(now)
}

/// The placement of one DaemonSet over `nodes` at `now`.
pub fn ds_placement(
    cluster: &KubeCluster,
    key: &str,
    ds: &Value,
    nodes: &[Value],
    now: SimTime,
) -> Placement {
    let (generation, _) = generation_since(&cluster.store, key);
    let rollout = cluster
        .controllers
        .delays
        .get(key)
        .filter(|r| r.generation == generation)
        .copied();
    placement_for(cluster, key, ds, rollout, nodes, now)
}

fn placement_for(
    cluster: &KubeCluster,
    key: &str,
    ds: &Value,
    rollout: Option<Rollout>,
    nodes: &[Value],
    now: SimTime,
) -> Placement {
    let pod_spec = &ds["spec"]["template"]["spec"];
    let extra = daemonset_tolerations();
    let previous = cluster.controllers.previous_ready.get(key);
    let mut placement = Placement::default();
    for node in nodes {
        if !node_selected(pod_spec, node) || !tolerates_node(pod_spec, &extra, node) {
            continue;
        }
        let name = node["metadata"]["name"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        let ready = rollout.is_some_and(|r| {
            r.since
                .max(node_since(cluster, node, now))
                .plus_ms(r.delay_ms)
                <= now
        });
        if ready {
            placement.ready_updated.insert(name.clone());
            placement.ready_any.insert(name.clone());
        } else if previous.is_some_and(|p| p.contains(&name)) {
            placement.ready_any.insert(name.clone());
        }
        placement.desired.push(name);
    }
    placement
}

/// Before a DaemonSet's new generation gets its rollout, remembers where pods of the old one are
/// ready (they keep serving until replaced). The old pod template is gone by then, so the old
/// generation's nodes are those the new template selects (DaemonSet updates rarely move nodes).
pub fn remember_previous_ready(cluster: &mut KubeCluster, key: &str, now: SimTime) {
    let Some(ds) = cluster.store.objects.get(key) else {
        return;
    };
    let Some(old) = cluster.controllers.delays.get(key).copied() else {
        return;
    };
    let nodes: Vec<Value> = cluster
        .store
        .list("", "nodes", None)
        .into_iter()
        .cloned()
        .collect();
    let ready = placement_for(cluster, key, ds, Some(old), &nodes, now).ready_any;
    cluster
        .controllers
        .previous_ready
        .insert(key.to_string(), ready);
}

fn omit_zero(status: &mut Value, field: &str, value: usize) {
    if value > 0 {
        status[field] = json!(value);
    }
}

/// Recomputes every DaemonSet's status.
pub fn daemonsets(cluster: &mut KubeCluster, clock: &Clock) {
    let nodes: Vec<Value> = cluster
        .store
        .list("", "nodes", None)
        .into_iter()
        .cloned()
        .collect();
    for key in cluster.store.keys("apps", "daemonsets") {
        let Some(ds) = cluster.store.objects.get(&key) else {
            continue;
        };
        let placement = ds_placement(cluster, &key, ds, &nodes, clock.now);
        let (generation, _) = generation_since(&cluster.store, &key);
        let desired = placement.desired.len();
        let ready = placement.ready_any.len();
        let updated = placement.ready_updated.len();
        let mut status = json!({
            "currentNumberScheduled": desired,
            "desiredNumberScheduled": desired,
            "numberMisscheduled": 0,
            "numberReady": ready,
            "observedGeneration": generation,
        });
        omit_zero(&mut status, "updatedNumberScheduled", updated);
        omit_zero(&mut status, "numberAvailable", ready);
        omit_zero(
            &mut status,
            "numberUnavailable",
            desired - ready.min(desired),
        );
        if updated == desired && desired > 0 {
            cluster.controllers.previous_ready.remove(&key);
        }
        set_status(&mut cluster.store, &key, status);
    }
}

/// `pod-template-hash`: 10 characters from the safe alphabet.
fn template_hash(template: &Value) -> String {
    const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
    let mut h = hash(&template.to_string());
    (0..10)
        .map(|_| {
            let c = ALPHABET[(h % ALPHABET.len() as u64) as usize] as char;
            h /= ALPHABET.len() as u64;
            c
        })
        .collect()
}

fn condition(kind: &str, status: &str, reason: &str, message: String, at: &str) -> Value {
    json!({
        "type": kind,
        "status": status,
        "lastUpdateTime": at,
        "lastTransitionTime": at,
        "reason": reason,
        "message": message,
    })
}

/// Recomputes every Deployment's status and when its pods became available.
pub fn deployments(cluster: &mut KubeCluster, clock: &Clock) {
    let nodes: Vec<Value> = cluster
        .store
        .list("", "nodes", None)
        .into_iter()
        .filter(|n| {
            n["status"]["conditions"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|c| c["type"] == "Ready" && c["status"] == "True")
        })
        .cloned()
        .collect();
    let now = clock.now;
    for key in cluster.store.keys("apps", "deployments") {
        let Some(deployment) = cluster.store.objects.get(&key) else {
            continue;
        };
        let pod_spec = &deployment["spec"]["template"]["spec"];
        let replicas = deployment["spec"]["replicas"].as_i64().unwrap_or(1).max(0);
        let (generation, since) = generation_since(&cluster.store, &key);
        let delay = cluster
            .controllers
            .delays
            .get(&key)
            .filter(|r| r.generation == generation)
            .map(|r| r.delay_ms);
        let first_node = nodes
            .iter()
            .filter(|n| node_selected(pod_spec, n) && tolerates_node(pod_spec, &[], n))
            .map(|n| node_since(cluster, n, now))
            .min();
        let deadline_ms = deployment["spec"]["progressDeadlineSeconds"]
            .as_u64()
            .unwrap_or(600)
            * 1000;
        let name = split_key(&key).map(|k| k.3).unwrap_or_default().to_string();
        let rs_name = format!("{name}-{}", template_hash(&deployment["spec"]["template"]));
        let new_ready_at = match (first_node, delay) {
            _ if replicas == 0 => Some(since),
            (Some(node), Some(d)) => Some(since.max(node).plus_ms(d)),
            _ => None,
        };
        let new_ready = new_ready_at.filter(|t| *t <= now);
        match (first_node, new_ready) {
            (None, _) if replicas > 0 => {
                cluster.controllers.available_since.remove(&key);
            }
            (_, Some(t)) => {
                cluster
                    .controllers
                    .available_since
                    .entry(key.clone())
                    .or_insert(t);
            }
            _ => {}
        }
        let available = cluster
            .controllers
            .available_since
            .get(&key)
            .is_some_and(|t| *t <= now);
        let old_running = available && new_ready.is_none();
        let since_ts = clock.ts(since);
        let mut status = json!({"observedGeneration": generation});
        let (total, ready) = match (new_ready, old_running) {
            (Some(_), _) => (replicas, replicas),
            (None, true) => (replicas * 2, replicas),
            (None, false) => (replicas, 0),
        };
        for (field, value) in [
            ("replicas", total),
            ("updatedReplicas", replicas),
            ("readyReplicas", ready),
            ("availableReplicas", ready),
            (
                "unavailableReplicas",
                total - ready - if old_running { replicas } else { 0 },
            ),
        ] {
            if value > 0 {
                status[field] = json!(value);
            }
        }
        let available_condition = if available {
            let at = clock.ts(cluster.controllers.available_since[&key]);
            condition(
                "Available",
                "True",
                "MinimumReplicasAvailable",
                "Deployment has minimum availability.".into(),
                &at,
            )
        } else {
            condition(
                "Available",
                "False",
                "MinimumReplicasUnavailable",
                "Deployment does not have minimum availability.".into(),
                &since_ts,
            )
        };
        let progressing = match new_ready {
            Some(t) => condition(
                "Progressing",
                "True",
                "NewReplicaSetAvailable",
                format!("ReplicaSet \"{rs_name}\" has successfully progressed."),
                &clock.ts(t),
            ),
            None if since.plus_ms(deadline_ms) <= now => condition(
                "Progressing",
                "False",
                "ProgressDeadlineExceeded",
                format!("ReplicaSet \"{rs_name}\" has timed out progressing."),
                &clock.ts(since.plus_ms(deadline_ms)),
            ),
            None => condition(
                "Progressing",
                "True",
                "ReplicaSetUpdated",
                format!("ReplicaSet \"{rs_name}\" is progressing."),
                &since_ts,
            ),
        };
        status["conditions"] = json!([available_condition, progressing]);
        set_status(&mut cluster.store, &key, status);
    }
}
