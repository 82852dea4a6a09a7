//! Kueue's controller, as far as a3ctl can see it: once the `kueue-system/kueue-controller-manager`
//! Deployment is available, every ClusterQueue gets an `Active` condition (true when each
//! ResourceFlavor it names exists, otherwise false with reason `FlavorNotFound`) and the workload
//! counters at zero, and every LocalQueue an `Active` condition that follows its ClusterQueue.
//! Without an available controller nothing writes status, as in a real cluster.

use super::{Clock, set_status};
use crate::kube::KubeCluster;
use crate::kube::store::object_key;
use serde_json::{Value, json};

const GROUP: &str = "kueue.x-k8s.io";

fn controller_available(cluster: &KubeCluster, clock: &Clock) -> bool {
    let key = object_key(
        "apps",
        "deployments",
        "kueue-system",
        "kueue-controller-manager",
    );
    cluster
        .controllers
        .available_since
        .get(&key)
        .is_some_and(|t| *t <= clock.now)
}

fn condition(active: bool, reason: &str, message: String, at: &Value) -> Value {
    json!({"type": "Active", "status": if active { "True" } else { "False" },
        "reason": reason, "message": message, "lastTransitionTime": at})
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
    let mut active_queues = Vec::new();
    for key in cluster.store.keys(GROUP, "clusterqueues") {
        let Some(queue) = cluster.store.objects.get(&key) else {
            continue;
        };
        let created = queue["metadata"]["creationTimestamp"].clone();
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
        let status = json!({
            "conditions": [condition],
            "admittedWorkloads": 0,
            "pendingWorkloads": 0,
            "reservingWorkloads": 0,
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
        let status = json!({"conditions": [condition], "admittedWorkloads": 0,
            "pendingWorkloads": 0, "reservingWorkloads": 0});
        set_status(&mut cluster.store, &key, status);
    }
}
