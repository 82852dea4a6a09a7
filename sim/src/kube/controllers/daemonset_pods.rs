//! The pods of every DaemonSet (GKE's own and any client's): one per node the DaemonSet wants a
//! pod on ([`super::workloads::ds_placement`]), owned by it, made and removed as nodes come and
//! go, as the DaemonSet controller does (kubernetes/kubernetes@pkg/controller/daemon).
//!
//! A pod is named `<DaemonSet>-<5 characters>` (`generateName`), labelled with the template's
//! labels plus `controller-revision-hash` and `pod-template-generation`, has the tolerations the
//! controller adds (`AddOrUpdateDaemonPodTolerations`, [`super::workloads`]) and a required
//! node affinity replaced by a `matchFields` term on `metadata.name` for its node
//! (pkg/controller/daemon/util/daemonset_util.go, `ReplaceDaemonSetPodNodeNameNodeAffinity`);
//! the scheduler can only bind it to that node, so the simulator binds it there at once
//! (`spec.nodeName`). Its status follows the DaemonSet's rollout: `ContainerCreating` until the
//! node's pod is ready, then `Running` and `Ready` — so `kubectl get pods -o wide` shows the same
//! as the DaemonSet's `numberReady`. During a rollout, the previous generation's pod stays on a
//! node until the new one is ready there, and is then replaced (the DaemonSet's status counts
//! it the same way). A pod whose node is gone, or whose DaemonSet is, is deleted.
//!
//! Not simulated for DaemonSet pods: the kubelet's stages ([`super::pods`] leaves them alone —
//! no mounts, image pulls, events or exits), a pod a client deletes (it comes back at once under
//! its name, ready), `OnDelete` updates, and a pod the API server would refuse (a missing
//! ServiceAccount: the pod is not made, and the DaemonSet's status does not show it).

use super::pod_status;
use super::pods::{PodRun, Stage, containers};
use super::workloads::{daemonset_tolerations, ds_placement};
use super::{Clock, generation_since, hash, set_status};
use crate::clock::SimTime;
use crate::kube::KubeCluster;
use crate::kube::admission;
use crate::kube::store::{object_key, split_key};
use serde_json::{Value, json};
use std::collections::{BTreeMap, BTreeSet};

/// True when the pod's controlling owner is a DaemonSet.
pub fn is_daemonset_pod(pod: &Value) -> bool {
    controller_uid(pod, "DaemonSet").is_some()
}

fn controller_uid<'a>(pod: &'a Value, kind: &str) -> Option<&'a str> {
    pod["metadata"]["ownerReferences"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|o| o["kind"] == kind && o["controller"] == true)
        .and_then(|o| o["uid"].as_str())
}

/// Five characters of the safe alphabet from `seed`, as `generateName` suffixes look.
fn suffix(seed: &str) -> String {
    const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
    let mut h = hash(seed);
    (0..5)
        .map(|_| {
            let c = ALPHABET[(h % 27) as usize] as char;
            h /= 27;
            c
        })
        .collect()
}

/// `controller-revision-hash`: the template's hash, as a ControllerRevision is named.
fn revision_hash(template: &Value) -> String {
    (hash(&template.to_string()) % 10_000_000_000).to_string()
}

/// The name of the DaemonSet's pod for `node` at `generation`.
fn pod_name(ds: &Value, node: &str, generation: i64) -> String {
    let ds_name = ds["metadata"]["name"].as_str().unwrap_or_default();
    let uid = ds["metadata"]["uid"].as_str().unwrap_or_default();
    format!(
        "{ds_name}-{}",
        suffix(&format!("{uid}/{node}/{generation}"))
    )
}

/// The pod the DaemonSet makes for `node`, before the API server's defaults.
fn new_pod(ds: &Value, node: &str, generation: i64) -> Value {
    let namespace = ds["metadata"]["namespace"].as_str().unwrap_or_default();
    let ds_name = ds["metadata"]["name"].as_str().unwrap_or_default();
    let uid = ds["metadata"]["uid"].as_str().unwrap_or_default();
    let template = &ds["spec"]["template"];
    let name = pod_name(ds, node, generation);
    let mut labels = template["metadata"]["labels"].clone();
    if !labels.is_object() {
        labels = json!({});
    }
    labels["controller-revision-hash"] = json!(revision_hash(template));
    labels["pod-template-generation"] = json!(generation.to_string());
    let mut metadata = json!({
        "name": name,
        "generateName": format!("{ds_name}-"),
        "namespace": namespace,
        "labels": labels,
        "ownerReferences": [{"apiVersion": "apps/v1", "kind": "DaemonSet", "name": ds_name,
            "uid": uid, "controller": true, "blockOwnerDeletion": true}],
    });
    if template["metadata"]["annotations"].is_object() {
        metadata["annotations"] = template["metadata"]["annotations"].clone();
    }
    let mut spec = template["spec"].clone();
    let mut tolerations = spec["tolerations"].as_array().cloned().unwrap_or_default();
    let mut extra = daemonset_tolerations();
    if spec["hostNetwork"] == true {
        extra.push(json!({"key": "node.kubernetes.io/network-unavailable",
            "operator": "Exists", "effect": "NoSchedule"}));
    }
    for toleration in extra {
        if !tolerations.contains(&toleration) {
            tolerations.push(toleration);
        }
    }
    spec["tolerations"] = json!(tolerations);
    if !spec["affinity"].is_object() {
        spec["affinity"] = json!({});
    }
    spec["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"] = json!({
        "nodeSelectorTerms": [{"matchFields": [
            {"key": "metadata.name", "operator": "In", "values": [node]}]}]});
    spec["nodeName"] = json!(node);
    json!({"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": spec})
}

/// The status of a DaemonSet pod made at `created` whose containers run from `ready_at` (never
/// when `None`).
fn pod_status_at(
    pod: &Value,
    node: &Value,
    created: SimTime,
    ready_at: Option<SimTime>,
    clock: &Clock,
) -> Value {
    let done = Stage {
        done: Some(created),
        ..Stage::default()
    };
    let run = PodRun {
        uid: pod["metadata"]["uid"]
            .as_str()
            .unwrap_or_default()
            .to_string(),
        node: node["metadata"]["name"].as_str().map(str::to_string),
        scheduled: Some(created),
        mount: done.clone(),
        pulls: match ready_at {
            Some(_) => containers(pod)
                .iter()
                .map(|c| (c.name.clone(), done.clone()))
                .collect(),
            None => BTreeMap::new(),
        },
        start_delay_ms: ready_at.map_or(0, |t| t.0.saturating_sub(created.0)),
        ..PodRun::default()
    };
    let mut status = pod_status::status(pod, &run, Some(node), clock);
    // A pod on the host network has its node's address.
    if pod["spec"]["hostNetwork"] == true && status["hostIP"].is_string() {
        status["podIP"] = status["hostIP"].clone();
        status["podIPs"] = status["hostIPs"].clone();
    }
    status
}

/// A DaemonSet pod as the pass needs it: its store key, name and node.
struct Owned {
    key: String,
    name: String,
    node: String,
}

fn signature(cluster: &KubeCluster) -> (u64, u64, u64) {
    let store = &cluster.store;
    (
        store.rev("", "nodes"),
        store.rev("apps", "daemonsets"),
        store.rev("", "pods"),
    )
}

fn remove_pod(cluster: &mut KubeCluster, pod_key: &str) {
    if let Some((_, _, ns, name)) = split_key(pod_key) {
        let (ns, name) = (ns.to_string(), name.to_string());
        cluster.store.remove("", "pods", &ns, &name);
    }
}

/// Brings the pods of every DaemonSet to `clock.now`.
///
/// Between passes, only nodes, DaemonSets, pods and time move what this pass does, and time only
/// where a pod waits for its rollout: a DaemonSet pod's status is the same until its containers
/// start (`ready_at`), and so is an old generation's pod kept until the new one is ready. So a
/// pass records those three revisions and the earliest such moment, and the next pass is skipped
/// while neither moved ([`super::ControllerState::ds_pods_settled`]). On 34-node clusters with
/// GKE's dozen DaemonSets this pass was half of the simulator's work.
pub fn sync(cluster: &mut KubeCluster, clock: &Clock) {
    if let Some((revisions, until)) = cluster.controllers.ds_pods_settled
        && revisions == signature(cluster)
        && until.is_none_or(|t| clock.now < t)
    {
        return;
    }
    // The earliest moment a pod's rollout moves on by itself; `blocked` when something outside
    // the three revisions may move the pass (a pod the API server refused, a node without its
    // start time).
    let mut until: Option<SimTime> = None;
    let mut blocked = false;
    let mut wake = |at: Option<SimTime>| {
        if let Some(at) = at {
            until = Some(until.map_or(at, |u| u.min(at)));
        }
    };
    let node_list: Vec<Value> = cluster
        .store
        .list("", "nodes", None)
        .into_iter()
        .cloned()
        .collect();
    let nodes: BTreeMap<&str, &Value> = node_list
        .iter()
        .filter_map(|n| Some((n["metadata"]["name"].as_str()?, n)))
        .collect();
    // Pods by their controlling DaemonSet's uid.
    let mut owned: BTreeMap<String, Vec<Owned>> = BTreeMap::new();
    for pod in cluster.store.list("", "pods", None) {
        if let Some(uid) = controller_uid(pod, "DaemonSet") {
            let namespace = pod["metadata"]["namespace"].as_str().unwrap_or_default();
            let name = pod["metadata"]["name"].as_str().unwrap_or_default();
            owned.entry(uid.to_string()).or_default().push(Owned {
                key: object_key("", "pods", namespace, name),
                name: name.to_string(),
                node: pod["spec"]["nodeName"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
            });
        }
    }
    let mut live = BTreeSet::new();
    for key in cluster.store.keys("apps", "daemonsets") {
        let Some(ds) = cluster.store.objects.get(&key).cloned() else {
            continue;
        };
        let uid = ds["metadata"]["uid"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        if ds["metadata"].get("deletionTimestamp").is_some() {
            // Its pods go with it (below).
            continue;
        }
        live.insert(uid.clone());
        let mut pods = owned.remove(&uid).unwrap_or_default();
        let placement = ds_placement(cluster, &key, &ds, &node_list, clock.now);
        let (generation, since) = generation_since(&cluster.store, &key);
        let rollout = cluster
            .controllers
            .delays
            .get(&key)
            .filter(|r| r.generation == generation)
            .copied();
        let namespace = ds["metadata"]["namespace"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        for node_name in &placement.desired {
            let Some(node) = nodes.get(node_name.as_str()).copied() else {
                continue;
            };
            let node_since = match cluster.node_since.get(node_name) {
                Some(since) => *since,
                None => {
                    // Counted from now, which moves: no pass is settled.
                    blocked = true;
                    clock.now
                }
            };
            let ready_at = rollout.map(|r| r.since.max(node_since).plus_ms(r.delay_ms));
            let wanted_name = pod_name(&ds, node_name, generation);
            let here: Vec<usize> = (0..pods.len())
                .filter(|i| pods[*i].node == *node_name)
                .collect();
            let current = here.iter().copied().find(|i| pods[*i].name == wanted_name);
            let keep_old = !placement.ready_updated.contains(node_name)
                && placement.ready_any.contains(node_name)
                && current.is_none()
                && !here.is_empty();
            if keep_old {
                // The previous generation's pod serves until the new one is ready.
                wake(ready_at);
                let keep = here[0];
                pods.remove(keep);
                continue;
            }
            // Any other pod on this node (an older generation's) goes.
            let mut remove: Vec<usize> = here
                .iter()
                .copied()
                .filter(|i| Some(*i) != current)
                .collect();
            remove.sort_unstable_by(|a, b| b.cmp(a));
            for i in remove {
                let old = pods.remove(i);
                remove_pod(cluster, &old.key);
            }
            let created = since.max(node_since).min(clock.now);
            let pod_key = object_key("", "pods", &namespace, &wanted_name);
            let exists = cluster.store.objects.contains_key(&pod_key);
            if !exists {
                let mut pod = new_pod(&ds, node_name, generation);
                if admission::pod_create(cluster, &namespace, &mut pod).is_err() {
                    // It may be admitted once what it lacks is made.
                    blocked = true;
                    continue;
                }
                pod["metadata"]["uid"] = json!(cluster.store.next_uid());
                pod["metadata"]["creationTimestamp"] = json!(clock.ts(created));
                cluster.store.put("", "pods", &namespace, &wanted_name, pod);
            }
            pods.retain(|p| p.key != pod_key);
            let Some(pod) = cluster.store.objects.get(&pod_key) else {
                continue;
            };
            // A running DaemonSet pod stays as it is (its containers never end).
            if pod["status"]["phase"] == "Running" {
                continue;
            }
            let made = pods_created(pod, clock).unwrap_or(created);
            let status = pod_status_at(pod, node, made, ready_at, clock);
            if status["phase"] != "Running" {
                wake(ready_at);
            }
            set_status(&mut cluster.store, &pod_key, status);
        }
        // Pods on nodes the DaemonSet no longer wants.
        for old in pods {
            remove_pod(cluster, &old.key);
        }
    }
    // Pods whose DaemonSet is gone (the garbage collector).
    for (uid, pods) in owned {
        if live.contains(&uid) {
            continue;
        }
        for old in pods {
            remove_pod(cluster, &old.key);
        }
    }
    cluster.controllers.ds_pods_settled = (!blocked).then(|| (signature(cluster), until));
}

/// When a pod was made, from its `creationTimestamp`.
fn pods_created(pod: &Value, clock: &Clock) -> Option<SimTime> {
    let at = chrono::DateTime::parse_from_rfc3339(pod["metadata"]["creationTimestamp"].as_str()?)
        .ok()?;
    let ms = (at.with_timezone(&chrono::Utc) - clock.epoch).num_milliseconds();
    Some(SimTime(ms.max(0) as u64))
}
