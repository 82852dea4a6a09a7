//! Kueue and its queues (GoogleCloudPlatform/cluster-toolkit `modules/management/kubectl-apply`,
//! kubernetes-sigs/kueue release `manifests.yaml`).
//!
//! - `k8s.release/-/kueue`: the release manifests of the pinned version, applied as one resource
//!   (its spec names the version, where the manifests come from, the pinned sha256 and the Kueue
//!   API kinds the queue objects below need; the adapter downloads, checks and applies them, and
//!   waits for the CRDs and the controller). It depends on the cluster only: the controller's
//!   readiness wait is what waits for a node.
//! - `k8s.topology/-/gke-default`: the TAS levels block → sub-block → host → hostname.
//! - one `ResourceFlavor` per GPU pool, selecting the pool's nodes by [`POOL_LABEL`] (and the
//!   accelerator) and tolerating the GPU taint;
//! - a `ClusterQueue` named like the queue whose `nvidia.com/gpu` quota per flavor is the pool's
//!   GPUs, waited for `Active`; a `LocalQueue` of the same name in `default` — or, when the
//!   blueprint declares `[[queue]]`s, theirs instead ([`super::kueue_queues`]);
//! - the priority classes `very-low` … `very-high` the seed guides create;
//! - one `WorkloadPriorityClass` per `[[priority]]` the blueprint declares
//!   (<https://kueue.sigs.k8s.io/docs/concepts/workload_priority_class/>): cluster-scoped, its
//!   `value` and `description` changed in place, deleted when it leaves the blueprint. Kueue reads
//!   a class when it makes a job's Workload, so a changed value reaches only jobs submitted after
//!   it (kubernetes-sigs/kueue v0.17.1 `apis/kueue/v1beta2/workloadpriorityclass_types.go`).
//!
//! The queue objects depend on the release, so they are applied once its controller is
//! available; the webhook may still refuse them for a few seconds, which the executor retries.
//!
//! **Flavors across a pool move.** A flavor selects the nodes of its blueprint pool by the label
//! a3ctl puts on every pool it makes, [`POOL_LABEL`] (`a3ctl.dev/pool: <blueprint pool name>`), not
//! by GKE's `cloud.google.com/gke-nodepool`: a pool replaced create-before-destroy needs another
//! GKE name (names are unique in a cluster) but carries the same label, so the flavor, its quota
//! and the Workloads it admitted keep matching, and nothing in Kueue changes. One stable label
//! rather than two flavors per move: Kueue keeps a flavor with a topology from changing its
//! `nodeLabels` and holds it while a ClusterQueue lists it (its CRD rules and the
//! `kueue.x-k8s.io/resource-in-use` finalizer, kubernetes-sigs/kueue v0.17.1
//! `apis/kueue/v1beta2/resourceflavor_types.go`), so each move would otherwise rename a flavor in
//! every ClusterQueue and leave Workloads admitted under the old name.
//!
//! Deployments made before the label converge without replacing anything: the pool's
//! `node_labels` change in place (`nodePools.update` relabels the running nodes), then the flavor
//! is made anew under the same name while its queues list a holding flavor with no quota
//! ([`crate::cloud::kube::flavor`]: the only way Kueue allows), so for those seconds Kueue admits
//! nothing more onto the pool, and no Workload, ClusterQueue or CRD is deleted. The schedule runs
//! the flavor's update after its pools' relabelling (rule 4 of [`crate::apply::schedule`]), so the
//! flavor never selects a label its nodes lack.
//!
//! Nothing here waits for a GPU pool: the ClusterQueue's quota follows the pools' sizes by an
//! ordering the schedule chooses per plan (rule 5 of [`crate::apply::schedule`]: raised after a
//! pool's create or resize is DONE, lowered before a shrink or delete), from [`gpu_quotas`]
//! before and after. A queue created with a pool's GPUs counts as raised from 0, so a first apply
//! creates the ClusterQueue (and its LocalQueue) only once every GPU pool it has quota for is
//! created: a pool whose create stopped part-way (16 of 32 nodes on a short reservation) or
//! failed skips the queue, and the apply that completes the pool creates it. Kueue is installed
//! and its flavors made meanwhile; a Job labelled for the queue before it exists waits suspended,
//! its Workload reporting that the LocalQueue does not exist
//! (<https://kueue.sigs.k8s.io/docs/tasks/troubleshooting/troubleshooting_jobs/>), rather than
//! being admitted onto GPUs that are not there.
//!
//! Why not create the queue at once with quota 0 for the pools being created and raise it in a
//! second step once each create is DONE: the raise would be a second step for one address
//! (plans carry one change per resource), and a partial create fails its step, so the raise
//! would need to run after a *failed* create and read the live node count — an executor rule of
//! its own for a queue that, meanwhile, admits nothing anyway. Waiting keeps one create step;
//! a kill between the pool's DONE and the queue's create leaves a plan that creates the queue at
//! once (its pool is complete). The cost: no queue, rather than one at the live count, while a
//! partially created pool waits for capacity.

use super::build::addr;
use super::software::{ACCELERATOR_LABEL, Context, WithDependency};
use crate::blueprint::ManifestSource;
use crate::blueprint::presets::kueue_api_versions;
use crate::resource::kinds::kubernetes::{ManifestRef, Release, ReleaseSpec};
use crate::resource::kinds::to_spec;
use crate::resource::{Addr, Desired, Kind, Lifecycle};
use serde_json::json;
use std::collections::BTreeMap;

/// The Topology every flavor refers to (the name Cluster Toolkit and xpk use).
pub const TOPOLOGY: &str = "gke-default";
/// The node labels of the TAS levels, coarsest first.
pub const TOPOLOGY_LEVELS: [&str; 4] = [
    "cloud.google.com/gce-topology-block",
    "cloud.google.com/gce-topology-subblock",
    "cloud.google.com/gce-topology-host",
    "kubernetes.io/hostname",
];
/// The node label a3ctl sets to the blueprint's pool name, which each flavor selects.
pub use crate::resource::kinds::node_pool::POOL_LABEL;
/// The GPU resource name.
pub const GPU_RESOURCE: &str = "nvidia.com/gpu";
/// Priority classes: (name, value).
pub const PRIORITY_CLASSES: [(&str, i64); 5] = [
    ("very-low", 100),
    ("low", 250),
    ("medium", 500),
    ("high", 750),
    ("very-high", 1000),
];
/// The namespace of the LocalQueue.
pub const QUEUE_NAMESPACE: &str = "default";

/// The address of the Kueue release resource.
pub fn release_addr() -> Addr {
    Addr::new(Kind::Kubernetes, "release/-/kueue")
}

/// Kueue's resources, when the blueprint enables it.
pub(super) fn resources(cx: &Context, out: &mut Vec<Desired>) {
    let bp = cx.bp;
    let kueue = &bp.software.kueue;
    if !kueue.enabled {
        return;
    }
    let (queues_api, topology_api) = kueue_api_versions(&kueue.version);
    // WorkloadPriorityClass only when the blueprint declares one, so deployments without any
    // keep their release spec as it was.
    let requires: Vec<String> = [
        (topology_api, "Topology"),
        (queues_api, "ResourceFlavor"),
        (queues_api, "ClusterQueue"),
        (queues_api, "LocalQueue"),
    ]
    .into_iter()
    .chain((!bp.priorities.is_empty()).then_some((queues_api, "WorkloadPriorityClass")))
    .map(|(api, kind)| format!("{api}/{kind}"))
    .collect();
    let release = release_addr();
    out.push(Desired {
        addr: release.clone(),
        id: format!("{}/k8s/release/kueue", cx.cluster_id),
        spec: to_spec(&ReleaseSpec {
            cluster: bp.name.clone(),
            release: Release {
                name: "kueue".into(),
                version: kueue.version.clone(),
                manifest: match &kueue.manifest {
                    ManifestSource::Url(url) => ManifestRef {
                        kind: "url".into(),
                        location: url.clone(),
                    },
                    // Blueprint paths come from TOML text, so they are UTF-8.
                    ManifestSource::Path(path) => ManifestRef {
                        kind: "path".into(),
                        location: path.to_string_lossy().into_owned(),
                    },
                },
                sha256: kueue.sha256.clone(),
                requires,
            },
            missing: vec![],
            ready: None,
        }),
        // The controller's pods run on the system pool (the GPU pools are tainted): without it
        // the wait for the controller could never end, so it waits for that pool, and a failed
        // system pool skips Kueue with the reason instead. It needs the pool's nodes, not its
        // identity: replacing the system pool replaces nothing of Kueue
        // (`crate::plan::planner::identity_dependency`).
        // With JobSet enabled, after JobSet's release, so Kueue's JobSet integration is active
        // from Kueue's start ([`super::jobset`]).
        dependencies: [
            addr::cluster(),
            Addr::new(Kind::NodePool, bp.system_pool.name.clone()),
        ]
        .into_iter()
        .chain(bp.software.jobset.enabled.then(super::jobset::release_addr))
        .collect(),
        lifecycle: Lifecycle {
            deleted_with: Some(addr::cluster()),
            ..Default::default()
        },
    });

    let topology = cx
        .object(
            topology_api,
            "Topology",
            None,
            TOPOLOGY,
            json!({"spec": {"levels": TOPOLOGY_LEVELS.iter().map(|l| json!({"nodeLabel": l})).collect::<Vec<_>>()}}),
        )
        .with_dependency(release.clone());
    let topology_addr = topology.addr.clone();
    out.push(topology);

    let mut flavor_addrs = Vec::new();
    for pool in &bp.gpu_pools {
        let flavor = cx
            .object(
                queues_api,
                "ResourceFlavor",
                None,
                &pool.name,
                json!({"spec": {
                    "nodeLabels": {POOL_LABEL: pool.name, ACCELERATOR_LABEL: pool.family.accelerator_type()},
                    "topologyName": TOPOLOGY,
                    "tolerations": [{"key": GPU_RESOURCE, "operator": "Exists", "effect": "NoSchedule"}],
                }}),
            )
            .with_dependency(release.clone())
            .with_dependency(topology_addr.clone());
        flavor_addrs.push(flavor.addr.clone());
        out.push(flavor);
    }

    if bp.queues.is_empty() {
        let flavors = bp.gpu_pools.iter().map(|pool| {
            json!({"name": pool.name, "resources": [
                {"name": GPU_RESOURCE, "nominalQuota": pool.gpus()},
            ]})
        });
        let spec = json!({
            "namespaceSelector": {},
            "preemption": {"reclaimWithinCohort": "Never", "withinClusterQueue": "LowerPriority"},
            "resourceGroups": [{"coveredResources": [GPU_RESOURCE], "flavors": flavors.collect::<Vec<_>>()}],
        });
        queue_pair(
            cx,
            out,
            &release,
            &flavor_addrs,
            &kueue.queue,
            QUEUE_NAMESPACE,
            spec,
            None,
        );
    } else {
        super::kueue_queues::declared(cx, out, &release, queues_api);
    }

    for (name, value) in PRIORITY_CLASSES {
        out.push(cx.object(
            "scheduling.k8s.io/v1",
            "PriorityClass",
            None,
            name,
            json!({"value": value, "globalDefault": false,
                "description": format!("Kueue workload priority `{name}` (a3ctl)")}),
        ));
    }

    for priority in &bp.priorities {
        let mut body = json!({"value": priority.value});
        if let Some(description) = &priority.description {
            body["description"] = json!(description);
        }
        out.push(
            cx.object(
                queues_api,
                "WorkloadPriorityClass",
                None,
                &priority.name,
                body,
            )
            .with_dependency(release.clone()),
        );
    }
}

/// A ClusterQueue `name` with `spec` (waited for `Active`, after its flavors) and its LocalQueue
/// in `namespace` (after `namespace_addr`, the Namespace a3ctl makes for it, if any).
#[allow(clippy::too_many_arguments)]
pub(super) fn queue_pair(
    cx: &Context,
    out: &mut Vec<Desired>,
    release: &Addr,
    flavors: &[Addr],
    name: &str,
    namespace: &str,
    spec: serde_json::Value,
    namespace_addr: Option<&Addr>,
) {
    let (queues_api, _) = kueue_api_versions(&cx.bp.software.kueue.version);
    let mut cluster_queue = cx
        .object(
            queues_api,
            "ClusterQueue",
            None,
            name,
            json!({"spec": spec}),
        )
        .with_dependency(release.clone());
    cluster_queue.spec["ready"] = json!("queue_active");
    for flavor in flavors {
        cluster_queue = cluster_queue.with_dependency(flavor.clone());
    }
    let cluster_queue_addr = cluster_queue.addr.clone();
    out.push(cluster_queue);
    let mut local = cx
        .object(
            queues_api,
            "LocalQueue",
            Some(namespace),
            name,
            json!({"spec": {"clusterQueue": name}}),
        )
        .with_dependency(release.clone())
        .with_dependency(cluster_queue_addr);
    if let Some(ns) = namespace_addr {
        local = local.with_dependency(ns.clone());
    }
    out.push(local);
}

/// The LocalQueue jobs are pointed at by a3ctl (the `kueue_queue` output, `verify
/// --nccl-test`), as (name, namespace): `[software.kueue] queue`, in `default` or, when the
/// blueprint declares queues, in that queue's namespace. `None` without Kueue.
pub fn job_queue(bp: &crate::blueprint::Blueprint) -> Option<(String, String)> {
    let kueue = &bp.software.kueue;
    if !kueue.enabled {
        return None;
    }
    let namespace = bp
        .queues
        .iter()
        .find(|q| q.name == kueue.queue)
        .map_or(QUEUE_NAMESPACE, |q| q.namespace.as_str());
    Some((kueue.queue.clone(), namespace.to_string()))
}

/// Whether `addr` is a Kueue `ClusterQueue`.
pub fn is_cluster_queue(addr: &Addr) -> bool {
    addr.kind == Kind::Kubernetes && addr.name.starts_with("clusterqueue/")
}

/// The `nvidia.com/gpu` nominal quota of each flavor of a ClusterQueue's spec (as built above or
/// as read back), by flavor name: the GPU pool's name.
pub fn gpu_quotas(spec: &serde_json::Value) -> BTreeMap<String, i64> {
    let mut out = BTreeMap::new();
    let groups = spec["object"]["spec"]["resourceGroups"].as_array();
    for group in groups.into_iter().flatten() {
        for flavor in group["flavors"].as_array().into_iter().flatten() {
            let Some(name) = flavor["name"].as_str() else {
                continue;
            };
            for resource in flavor["resources"].as_array().into_iter().flatten() {
                if resource["name"] == GPU_RESOURCE {
                    let quota = resource["nominalQuota"].as_i64().unwrap_or(0);
                    out.insert(name.to_string(), quota);
                }
            }
        }
    }
    out
}

/// `spec` (a ClusterQueue's) with the `nvidia.com/gpu` nominal quota of `flavor` set to `quota`.
pub fn with_gpu_quota(spec: &serde_json::Value, flavor: &str, quota: i64) -> serde_json::Value {
    let mut out = spec.clone();
    let groups = out["object"]["spec"]["resourceGroups"].as_array_mut();
    for group in groups.into_iter().flatten() {
        for f in group["flavors"].as_array_mut().into_iter().flatten() {
            if f["name"] != flavor {
                continue;
            }
            for resource in f["resources"].as_array_mut().into_iter().flatten() {
                if resource["name"] == GPU_RESOURCE {
                    resource["nominalQuota"] = json!(quota);
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::blueprint::testing::shipped;
    use crate::graph::ResourceGraph;

    fn graph(name: &str, edit: impl FnOnce(&mut crate::blueprint::Blueprint)) -> ResourceGraph {
        let mut bp = shipped(name);
        edit(&mut bp);
        ResourceGraph::from_blueprint(&bp).unwrap()
    }

    fn get<'a>(g: &'a ResourceGraph, addr: &str) -> &'a Desired {
        g.get(&addr.parse().unwrap())
            .unwrap_or_else(|| panic!("{addr} is declared"))
    }

    #[test]
    fn a3_mega_gets_the_release_a_flavor_per_pool_and_a_queue_with_every_gpu() {
        let g = graph("a3-mega.toml", |_| {});
        let release = get(&g, "k8s.release/-/kueue");
        assert_eq!(release.spec["release"]["version"], "v0.17.1");
        assert_eq!(
            release.spec["release"]["manifest"]["location"],
            "https://github.com/kubernetes-sigs/kueue/releases/download/v0.17.1/manifests.yaml"
        );
        assert_eq!(release.spec["missing"], json!([]));
        // The controller runs on the system pool: the release waits for it (and for JobSet's).
        assert_eq!(
            release.dependencies,
            vec![
                addr::cluster(),
                Addr::new(Kind::NodePool, "system"),
                crate::graph::jobset::release_addr()
            ]
        );
        assert_eq!(release.lifecycle.deleted_with, Some(addr::cluster()));
        let queue = get(&g, "k8s.clusterqueue/-/a3-queue");
        assert_eq!(queue.spec["object"]["apiVersion"], "kueue.x-k8s.io/v1beta2");
        assert_eq!(queue.spec["ready"], "queue_active");
        // 32 nodes × 8 GPUs.
        let flavors = &queue.spec["object"]["spec"]["resourceGroups"][0]["flavors"];
        assert_eq!(flavors[0]["resources"][0]["nominalQuota"], 256);
        assert!(
            queue
                .dependencies
                .contains(&"k8s.resourceflavor/-/a3mega".parse().unwrap())
        );
        let flavor = get(&g, "k8s.resourceflavor/-/a3mega");
        assert_eq!(
            flavor.spec["object"]["spec"]["nodeLabels"],
            json!({"a3ctl.dev/pool": "a3mega", "cloud.google.com/gke-accelerator": "nvidia-h100-mega-80gb"})
        );
        // The pool's nodes carry the label the flavor selects.
        assert_eq!(
            get(&g, "node_pool.a3mega").spec["node_labels"],
            json!({"a3ctl.dev/pool": "a3mega"})
        );
        assert_eq!(
            get(&g, "node_pool.system").spec["node_labels"],
            json!({"a3ctl.dev/pool": "system"})
        );
        assert_eq!(flavor.spec["object"]["spec"]["topologyName"], TOPOLOGY);
        let local = get(&g, "k8s.localqueue/default/a3-queue");
        assert_eq!(local.spec["object"]["spec"]["clusterQueue"], "a3-queue");
        let topology = get(&g, "k8s.topology/-/gke-default");
        assert_eq!(
            topology.spec["object"]["spec"]["levels"][3]["nodeLabel"],
            "kubernetes.io/hostname"
        );
        assert_eq!(
            get(&g, "k8s.priorityclass/-/very-high").spec["object"]["value"],
            1000
        );
        // Only the releases wait for a pool (the system pool their controllers run on); nothing
        // in the cluster waits for a GPU pool.
        let on_pools: Vec<String> = g
            .resources()
            .iter()
            .filter(|r| r.addr.kind == Kind::Kubernetes)
            .filter(|r| r.dependencies.iter().any(|d| d.kind == Kind::NodePool))
            .map(|r| r.addr.to_string())
            .collect();
        assert_eq!(
            on_pools,
            vec![
                "k8s.release/-/jobset".to_string(),
                "k8s.release/-/kueue".to_string()
            ]
        );
    }

    #[test]
    fn older_releases_get_their_api_versions_and_disabled_kueue_nothing() {
        let g = graph("a3-high.toml", |bp| {
            bp.software.kueue.version = "v0.12.2".into()
        });
        assert_eq!(
            get(&g, "k8s.topology/-/gke-default").spec["object"]["apiVersion"],
            "kueue.x-k8s.io/v1alpha1"
        );
        assert_eq!(
            get(&g, "k8s.release/-/kueue").spec["release"]["requires"][2],
            "kueue.x-k8s.io/v1beta1/ClusterQueue"
        );
        let off = graph("a3-high.toml", |bp| bp.software.kueue.enabled = false);
        assert!(off.get(&release_addr()).is_none());
        assert!(
            off.get(&"k8s.priorityclass/-/low".parse().unwrap())
                .is_none()
        );
    }

    #[test]
    fn declared_priorities_are_workload_priority_classes_after_the_release() {
        let plain = graph("a3-high.toml", |_| {});
        let requires = |g: &ResourceGraph| {
            get(g, "k8s.release/-/kueue").spec["release"]["requires"]
                .as_array()
                .unwrap()
                .len()
        };
        assert_eq!(requires(&plain), 4, "no class, the release as before");
        let g = graph("a3-high.toml", |bp| {
            bp.priorities = vec![
                crate::blueprint::Priority {
                    name: "production".into(),
                    value: 1000,
                    description: Some("release jobs".into()),
                },
                crate::blueprint::Priority {
                    name: "dev".into(),
                    value: -5,
                    description: None,
                },
            ]
        });
        let production = get(&g, "k8s.workloadpriorityclass/-/production");
        let object = &production.spec["object"];
        assert_eq!(object["apiVersion"], "kueue.x-k8s.io/v1beta2");
        assert_eq!(object["kind"], "WorkloadPriorityClass");
        assert_eq!(
            (&object["value"], &object["description"]),
            (&json!(1000), &json!("release jobs"))
        );
        assert!(object["metadata"].get("namespace").is_none());
        assert!(production.dependencies.contains(&release_addr()));
        assert_eq!(production.lifecycle.deleted_with, Some(addr::cluster()));
        let dev = &get(&g, "k8s.workloadpriorityclass/-/dev").spec["object"];
        assert_eq!(dev["value"], -5);
        assert!(dev.get("description").is_none());
        // The release checks that its manifests serve the kind.
        assert_eq!(
            get(&g, "k8s.release/-/kueue").spec["release"]["requires"][4],
            "kueue.x-k8s.io/v1beta2/WorkloadPriorityClass"
        );
        assert_eq!(requires(&g), 5);
    }
}
