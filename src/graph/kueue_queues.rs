//! The Kueue queues a blueprint declares (`[[queue]]`, rules in `crate::blueprint::queues`): per
//! queue a ClusterQueue and a LocalQueue of the same name in the team's namespace, and the
//! namespaces themselves. Without declared queues [`super::kueue`] makes its one queue instead.
//!
//! Each ClusterQueue (<https://kueue.sigs.k8s.io/docs/concepts/cluster_queue/>, kubernetes-sigs/kueue
//! v0.17 `apis/kueue/v1beta2/clusterqueue_types.go`):
//! - admits from its team's namespace only: `namespaceSelector` matches the
//!   `kubernetes.io/metadata.name` label Kubernetes puts on every namespace
//!   (<https://kubernetes.io/docs/reference/labels-annotations-taints/#kubernetes-io-metadata-name>);
//! - joins its cohort (`spec.cohortName` in v1beta2, `spec.cohort` in v1beta1), where the
//!   members borrow each other's unused quota;
//! - has one resource group covering `nvidia.com/gpu` (and `cpu`, `memory` when declared) with
//!   the flavor of its pool: `nominalQuota` the queue's `gpus`, and on the GPU resource the
//!   `borrowingLimit` and `lendingLimit` when declared;
//! - preempts lower-priority workloads of its own queue and, in a cohort, reclaims its lent quota
//!   from borrowers (`reclaimWithinCohort: Any`): without it, a team whose idle GPUs were borrowed
//!   would wait for the borrower's jobs to end (<https://kueue.sigs.k8s.io/docs/concepts/preemption/>).
//!
//! The flavors are the pools' ([`super::kueue`]), with their topology: Kueue's topology-aware
//! scheduling works for queues in a cohort as for one alone.
//!
//! **Namespaces** are a3ctl's to create but never to delete: a namespace holds whatever a team put
//! in it, which deleting it would delete too, so a namespace whose queue leaves the blueprint is
//! forgotten, not deleted (`lifecycle.keep_on_destroy`), and the cluster's delete takes the rest.
//! `default` is never created.

use super::build::addr;
use super::kueue::{GPU_RESOURCE, QUEUE_NAMESPACE, queue_pair};
use super::software::Context;
use crate::resource::{Addr, Desired, Kind, Lifecycle};
use serde_json::{Value, json};
use std::collections::BTreeMap;

/// The label Kubernetes sets on every namespace to its name.
const NAMESPACE_NAME_LABEL: &str = "kubernetes.io/metadata.name";

/// The namespaces, ClusterQueues and LocalQueues of `bp.queues` (which must not be empty).
pub(super) fn declared(cx: &Context, out: &mut Vec<Desired>, release: &Addr, queues_api: &str) {
    let bp = cx.bp;
    let mut namespaces: BTreeMap<&str, Addr> = BTreeMap::new();
    for queue in &bp.queues {
        let ns = queue.namespace.as_str();
        if ns == QUEUE_NAMESPACE || namespaces.contains_key(ns) {
            continue;
        }
        let mut namespace = cx.object("v1", "Namespace", None, ns, json!({}));
        namespace.lifecycle = Lifecycle {
            deleted_with: Some(addr::cluster()),
            keep_on_destroy: true,
            ..Default::default()
        };
        namespaces.insert(ns, namespace.addr.clone());
        out.push(namespace);
    }
    for queue in &bp.queues {
        let Some(pool) = bp.gpu_pools.iter().find(|p| p.name == queue.pool) else {
            continue;
        };
        let mut covered = vec![GPU_RESOURCE];
        let mut gpu = json!({"name": GPU_RESOURCE, "nominalQuota": queue.gpus});
        if let Some(limit) = queue.borrowing_limit {
            gpu["borrowingLimit"] = json!(limit);
        }
        if let Some(limit) = queue.lending_limit {
            gpu["lendingLimit"] = json!(limit);
        }
        let mut resources = vec![gpu];
        for (name, quota) in [("cpu", &queue.cpu), ("memory", &queue.memory)] {
            if let Some(quota) = quota {
                covered.push(name);
                resources.push(json!({"name": name, "nominalQuota": quota}));
            }
        }
        let mut spec = json!({
            "namespaceSelector": {"matchLabels": {NAMESPACE_NAME_LABEL: queue.namespace}},
            "preemption": {
                "reclaimWithinCohort": if queue.cohort.is_some() { "Any" } else { "Never" },
                "withinClusterQueue": "LowerPriority",
            },
            "resourceGroups": [{"coveredResources": covered,
                "flavors": [{"name": pool.name, "resources": resources}]}],
        });
        if let Some(cohort) = &queue.cohort {
            let field = if queues_api.ends_with("/v1beta1") {
                "cohort"
            } else {
                "cohortName"
            };
            spec[field] = Value::String(cohort.clone());
        }
        let flavor = Addr::new(Kind::Kubernetes, format!("resourceflavor/-/{}", pool.name));
        queue_pair(
            cx,
            out,
            release,
            &[flavor],
            &queue.name,
            &queue.namespace,
            spec,
            namespaces.get(queue.namespace.as_str()),
        );
    }
}

#[cfg(test)]
mod tests {
    use crate::blueprint::{Queue, testing::shipped};
    use crate::graph::ResourceGraph;
    use crate::resource::Addr;
    use serde_json::json;

    fn team(name: &str, namespace: &str, gpus: u32) -> Queue {
        Queue {
            name: name.into(),
            namespace: namespace.into(),
            cohort: Some("research".into()),
            pool: "a3high".into(),
            gpus,
            borrowing_limit: None,
            lending_limit: None,
            cpu: None,
            memory: None,
        }
    }

    #[test]
    fn declared_queues_replace_the_one_queue_with_a_cohort_namespaces_and_limits() {
        let mut bp = shipped("a3-high.toml");
        let mut a = team("team-a", "team-a", 16);
        a.borrowing_limit = Some(16);
        a.cpu = Some("96".into());
        let mut b = team("team-b", "default", 16);
        b.lending_limit = Some(8);
        bp.queues = vec![a, b];
        let g = ResourceGraph::from_blueprint(&bp).unwrap();
        let get = |addr: &str| g.get(&addr.parse::<Addr>().unwrap());
        assert!(get("k8s.clusterqueue/-/a3-queue").is_none());
        assert!(get("k8s.localqueue/default/a3-queue").is_none());
        let queue = get("k8s.clusterqueue/-/team-a").expect("team-a's ClusterQueue");
        let spec = &queue.spec["object"]["spec"];
        assert_eq!(spec["cohortName"], "research");
        assert_eq!(spec["preemption"]["reclaimWithinCohort"], "Any");
        assert_eq!(
            spec["namespaceSelector"],
            json!({"matchLabels": {"kubernetes.io/metadata.name": "team-a"}})
        );
        assert_eq!(
            spec["resourceGroups"],
            json!([{"coveredResources": ["nvidia.com/gpu", "cpu"], "flavors": [{"name": "a3high",
                "resources": [{"name": "nvidia.com/gpu", "nominalQuota": 16, "borrowingLimit": 16},
                              {"name": "cpu", "nominalQuota": "96"}]}]}])
        );
        assert_eq!(queue.spec["ready"], "queue_active");
        let b = get("k8s.clusterqueue/-/team-b").unwrap();
        assert_eq!(
            b.spec["object"]["spec"]["resourceGroups"][0]["flavors"][0]["resources"][0]["lendingLimit"],
            8
        );
        // team-a's namespace is made, never deleted; `default` is not made.
        let ns = get("k8s.namespace/-/team-a").expect("team-a's namespace");
        assert!(ns.lifecycle.keep_on_destroy);
        assert!(get("k8s.namespace/-/default").is_none());
        let local = get("k8s.localqueue/team-a/team-a").unwrap();
        assert!(local.dependencies.contains(&ns.addr));
        assert_eq!(local.spec["object"]["spec"]["clusterQueue"], "team-a");
        assert!(get("k8s.localqueue/default/team-b").is_some());
        // Rule 5's quota reading sees each queue's share of the pool.
        assert_eq!(crate::graph::kueue::gpu_quotas(&queue.spec)["a3high"], 16);
        // The older API names the cohort `cohort`.
        bp.software.kueue.version = "v0.12.2".into();
        let old = ResourceGraph::from_blueprint(&bp).unwrap();
        let queue = old
            .get(&"k8s.clusterqueue/-/team-a".parse().unwrap())
            .unwrap();
        assert_eq!(queue.spec["object"]["spec"]["cohort"], "research");
    }
}
