//! GKE (container v1): clusters, node pools, operations and the server config, at Google's paths
//! under `/container/v1/projects/{project}/locations/{location}/...`.
//!
//! Resources are kept as the JSON the API returns (enum names, camelCase), so anything a client
//! sends that the simulator does not reason about is stored and echoed back as GKE does. Every
//! mutation starts a GKE `Operation` with a duration drawn from the latency profile; [`tick`]
//! finishes the due ones and applies their effect (statuses, node counts, versions, add-ons) and
//! tells the cluster's Kubernetes side ([`crate::kube`]) about nodes, readiness and add-ons.
//!
//! Files: [`clusters`] (cluster handlers and defaults), [`node_pools`] (pool handlers), [`nodes`]
//! (GKE-like nodes, the service account they run as), [`operations`] (operations, their completion, the one-operation-at-a-time rule),
//! [`reservations`] (pools that consume Compute reservations), [`capacity`] (pools that take VMs
//! from a zone's capacity, and stockouts), [`server_config`] (versions), [`skew`] (the
//! version-skew rules of upgrades and node pools), [`upgrades`] (node-pool upgrades batch by
//! batch: surge and blue-green),
//! [`maintenance`] (maintenance policies: their
//! checks, and when they let an upgrade run), [`auto_upgrade`] (the upgrades GKE starts when a
//! channel's target moves), [`instance_groups`] (the pools' instance groups and VMs, which
//! Compute serves), [`node_addresses`] (the VMs' internal addresses),
//! [`rules`] (the checks GKE makes), [`enums`] and [`enum_tables`] (proto enum numbers), `zonal`
//! (the `projects.zones.*` routes, served by the location handlers).

pub mod accelerator_networks;
mod auto_upgrade;
mod beta_apis;
mod capacity;
mod clusters;
pub mod enum_tables;
pub mod enums;
pub mod maintenance;
pub mod node_addresses;
mod node_pools;
mod nodes;
mod operations;
mod reservations;
mod rules;
pub mod server_config;
pub mod skew;
pub mod upgrades;
mod zonal;

use crate::error::GcpError;
use crate::shared::Ctx;
use crate::shared::Shared;
pub use crate::state::container::{Cluster, NodeGroup, NodePool, Reserved, State};
use crate::world::World;
use axum::Router;
use axum::routing::get;
use serde_json::{Value, json};
use std::sync::Arc;

pub use crate::instance_groups::{self, fingerprint, region_of, string_list};
pub use node_pools::sync_nodes;
pub use operations::{Effect, Operation};

impl Cluster {
    pub fn key(&self) -> String {
        cluster_key(&self.project, &self.location, &self.name)
    }

    pub fn status(&self) -> &str {
        self.resource["status"].as_str().unwrap_or("")
    }

    pub fn set_status(&mut self, status: &str) {
        self.resource["status"] = json!(status);
    }

    pub fn pool(&self, name: &str) -> Option<&NodePool> {
        self.pools.iter().find(|p| p.name == name)
    }

    pub fn pool_mut(&mut self, name: &str) -> Option<&mut NodePool> {
        self.pools.iter_mut().find(|p| p.name == name)
    }

    /// The region the cluster lives in.
    pub fn region(&self) -> String {
        region_of(&self.location)
    }

    /// The cluster as the API returns it: the resource with its node pools and node count.
    pub fn to_json(&self) -> Value {
        let mut out = self.resource.clone();
        let pools: Vec<Value> = self.pools.iter().map(NodePool::to_json).collect();
        let nodes: u32 = self.pools.iter().map(NodePool::total_nodes).sum();
        if let Some(obj) = out.as_object_mut() {
            obj.insert("currentNodeCount".into(), json!(nodes));
            let urls: Vec<Value> = self
                .pools
                .iter()
                .flat_map(|p| p.resource["instanceGroupUrls"].as_array().cloned())
                .flatten()
                .collect();
            obj.insert("instanceGroupUrls".into(), Value::Array(urls));
            obj.insert("nodePools".into(), Value::Array(pools));
        }
        out
    }
}

impl NodePool {
    pub fn status(&self) -> &str {
        self.resource["status"].as_str().unwrap_or("")
    }

    pub fn set_status(&mut self, status: &str) {
        self.resource["status"] = json!(status);
    }

    pub fn zones(&self) -> Vec<String> {
        string_list(&self.resource["locations"])
    }

    /// Nodes in one zone: the node count, or what the reservation (else the zone's capacity) gave
    /// there.
    pub fn nodes_in(&self, zone: &str) -> u32 {
        match (self.reserved.get(zone), self.granted.get(zone)) {
            (Some(r), _) => r.count.min(self.node_count),
            (None, Some(granted)) => (*granted).min(self.node_count),
            (None, None) => self.node_count,
        }
    }

    /// The VMs of zone capacity the group in `zone` holds (none for a pool that consumes a
    /// reservation): what it was granted, else (worlds saved before capacity) its nodes.
    pub fn held_in(&self, zone: &str) -> u32 {
        if !self.reserved.is_empty() {
            return 0;
        }
        match self.granted.get(zone) {
            Some(granted) => *granted,
            None => self.groups.get(zone).map_or(0, |g| g.suffixes.len() as u32),
        }
    }

    /// Whether some group holds VMs, from a reservation or the zone's capacity.
    pub fn holds_vms(&self) -> bool {
        self.reserved.values().any(|r| r.count > 0) || self.granted.values().any(|g| *g > 0)
    }

    /// Nodes across all zones.
    pub fn total_nodes(&self) -> u32 {
        self.groups.values().map(|g| g.suffixes.len() as u32).sum()
    }

    pub fn to_json(&self) -> Value {
        let mut out = self.resource.clone();
        out["etag"] = json!(fingerprint(&format!("{}/{}", self.name, self.generation)));
        out
    }
}

/// `projects/P/locations/L/clusters/C`.
pub fn cluster_key(project: &str, location: &str, name: &str) -> String {
    format!("projects/{project}/locations/{location}/clusters/{name}")
}

/// True if `location` is a zone (`us-central1-a`), false for a region.
pub fn is_zone(location: &str) -> bool {
    crate::geo::zone_exists(location)
}

/// GKE's canonical link for a resource path `projects/P/locations/L/...`: zonal resources use
/// `/zones/Z/`, regional ones `/locations/R/`.
pub fn self_link(path: &str) -> String {
    let mut parts: Vec<&str> = path.split('/').collect();
    if parts.len() > 3 && parts[2] == "locations" && is_zone(parts[3]) {
        parts[2] = "zones";
    }
    format!("https://container.googleapis.com/v1/{}", parts.join("/"))
}

/// Merges `patch` into `target`: objects recursively, everything else replaced.
pub fn merge(target: &mut Value, patch: &Value) {
    match (target, patch) {
        (Value::Object(t), Value::Object(p)) => {
            for (k, v) in p {
                match t.get_mut(k) {
                    Some(existing) if existing.is_object() && v.is_object() => merge(existing, v),
                    _ => {
                        t.insert(k.clone(), v.clone());
                    }
                }
            }
        }
        (t, p) => *t = p.clone(),
    }
}

/// 400 INVALID_ARGUMENT with GKE's reason `badRequest`.
pub fn bad_request(message: impl Into<String>) -> GcpError {
    GcpError::invalid_reason("badRequest", message)
}

/// GKE's 404.
pub fn not_found(path: &str) -> GcpError {
    GcpError::not_found(format!("Not found: {path}."))
}

/// The error a scripted `Http` fault asks for.
pub fn http_fault(status: u16, reason: &str, message: &str) -> GcpError {
    let canonical = match status {
        400 => "INVALID_ARGUMENT",
        401 => "UNAUTHENTICATED",
        403 => "PERMISSION_DENIED",
        404 => "NOT_FOUND",
        409 => "ALREADY_EXISTS",
        412 => "FAILED_PRECONDITION",
        429 => "RESOURCE_EXHAUSTED",
        500 => "INTERNAL",
        501 => "UNIMPLEMENTED",
        503 => "UNAVAILABLE",
        504 => "DEADLINE_EXCEEDED",
        _ => "UNKNOWN",
    };
    GcpError::new(status, canonical, reason, message)
}

/// Routes of this API (full paths, including the simulator's prefix).
pub fn router() -> Router<Arc<Shared>> {
    let base = "/container/v1/projects/{project}/locations/{location}";
    Router::new()
        .route(
            &format!("{base}/serverConfig"),
            get(server_config::get_server_config),
        )
        .route(
            &format!("{base}/clusters"),
            get(clusters::list).post(clusters::create),
        )
        .route(
            &format!("{base}/clusters/{{cluster}}"),
            get(clusters::get)
                .put(clusters::update)
                .delete(clusters::delete)
                .post(clusters::post_method),
        )
        .route(
            &format!("{base}/clusters/{{cluster}}/nodePools"),
            get(node_pools::list).post(node_pools::create),
        )
        .route(
            &format!("{base}/clusters/{{cluster}}/nodePools/{{pool}}"),
            get(node_pools::get)
                .put(node_pools::update)
                .delete(node_pools::delete)
                .post(node_pools::post_method),
        )
        .route(&format!("{base}/operations"), get(operations::list))
        .route(
            &format!("{base}/operations/{{operation}}"),
            get(operations::get).post(operations::post_method),
        )
        .merge(zonal::router())
}

/// The earliest time, not after `now`, at which an operation is due or an auto-upgrade is to
/// start.
pub fn next_due(world: &World, now: crate::clock::SimTime) -> Option<crate::clock::SimTime> {
    [
        operations::next_due(world, now),
        auto_upgrade::next_due(world, now),
    ]
    .into_iter()
    .flatten()
    .min()
}

/// Finishes the operations due by `at`, then starts the auto-upgrades due by then; returns true
/// if anything changed.
pub fn tick_until(world: &mut World, cx: &Ctx, at: crate::clock::SimTime) -> bool {
    let mut changed = operations::finish_until(world, cx, at);
    changed |= auto_upgrade::start_until(world, cx, at);
    changed
}

/// Records that the world is up to date at `now` (after every due time was ticked).
pub fn ticked(world: &mut World, now: crate::clock::SimTime) {
    let state = &mut world.container;
    state.last_tick = state.last_tick.max(now);
    state.auto_checked = state.auto_checked.max(now);
}

/// This API's part of the admin inventory.
pub fn inventory(world: &World) -> Value {
    let clusters: Vec<Value> = world
        .container
        .clusters
        .values()
        .map(|c| {
            let pools: Vec<Value> = c
                .pools
                .iter()
                .map(|p| {
                    json!({
                        "name": p.name,
                        "status": p.status(),
                        "version": p.resource["version"],
                        "machineType": p.resource["config"]["machineType"],
                        "nodeCountPerZone": p.node_count,
                        "nodes": p.total_nodes(),
                        "locations": p.resource["locations"],
                    })
                })
                .collect();
            json!({
                "key": c.key(),
                "status": c.status(),
                "currentMasterVersion": c.resource["currentMasterVersion"],
                "endpoint": c.resource["endpoint"],
                "nodePools": pools,
            })
        })
        .collect();
    let operations: Vec<Value> = world
        .container
        .operations
        .iter()
        .map(|o| {
            json!({
                "name": o.name,
                "location": o.location,
                "operationType": o.op_type,
                "status": o.status,
                "target": o.target,
                "error": o.error.as_ref().map(|e| e.message.clone()),
            })
        })
        .collect();
    json!({ "clusters": clusters, "operations": operations })
}

impl State {
    /// Records a new endpoint (`127.0.0.1:PORT`) for a cluster whose Kubernetes API server had to
    /// move to another port after a restart. `key` is `projects/P/locations/L/clusters/C`.
    pub fn set_endpoint(&mut self, key: &str, endpoint: &str) {
        let Some(cluster) = self.clusters.get_mut(key) else {
            return;
        };
        let r = &mut cluster.resource;
        r["endpoint"] = json!(endpoint);
        if r["privateClusterConfig"].is_object() {
            r["privateClusterConfig"]["publicEndpoint"] = json!(endpoint);
        }
        if r["controlPlaneEndpointsConfig"]["ipEndpointsConfig"].is_object() {
            r["controlPlaneEndpointsConfig"]["ipEndpointsConfig"]["publicEndpoint"] =
                json!(endpoint);
        }
    }

    /// What keeps the reservation at `path` in use: the first node (else the instance group) of a
    /// pool that holds some of it, as a Compute path.
    pub fn reservation_user(&self, path: &str) -> Option<String> {
        self.clusters.values().find_map(|cluster| {
            cluster.pools.iter().find_map(|pool| {
                let (zone, _) = pool
                    .reserved
                    .iter()
                    .find(|(_, r)| r.reservation == path && r.count > 0)?;
                let group = pool.groups.get(zone)?;
                let prefix = nodes::node_prefix(&cluster.name, &pool.name);
                Some(match group.suffixes.first() {
                    Some(suffix) => format!(
                        "projects/{}/zones/{zone}/instances/{prefix}-{}-{suffix}",
                        cluster.project, group.hash
                    ),
                    None => format!(
                        "projects/{}/zones/{zone}/instanceGroupManagers/{prefix}-{}-grp",
                        cluster.project, group.hash
                    ),
                })
            })
        })
    }

    /// The operation still running on a cluster (or any of its pools), if any.
    pub fn running_operation(&self, cluster_key: &str) -> Option<&Operation> {
        self.operations
            .iter()
            .find(|o| o.cluster_key == cluster_key && o.status != "DONE")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_use_zones_for_zonal_resources() {
        assert_eq!(
            self_link("projects/p/locations/us-central1-a/clusters/c"),
            "https://container.googleapis.com/v1/projects/p/zones/us-central1-a/clusters/c"
        );
        assert_eq!(
            self_link("projects/p/locations/us-central1/clusters/c"),
            "https://container.googleapis.com/v1/projects/p/locations/us-central1/clusters/c"
        );
    }

    #[test]
    fn worlds_saved_before_reservations_load() {
        // A pool and an operation as they were saved before pools consumed reservations.
        let pool = json!({"name": "p", "resource": {"name": "p"}, "node_count": 1,
                          "groups": {"us-central1-a": {"hash": "0123abcd", "suffixes": ["x1y2"]}},
                          "generation": 2});
        let loaded: NodePool = serde_json::from_value(pool.clone()).expect("old pool loads");
        assert!(loaded.reserved.is_empty());
        assert_eq!(loaded.nodes_in("us-central1-a"), 1);
        // Saved before zone capacity: its group holds its node.
        assert!(loaded.granted.is_empty());
        assert_eq!(loaded.held_in("us-central1-a"), 1);
        assert_eq!(serde_json::to_value(&loaded).unwrap(), pool);
        let op = json!({"name": "operation-1", "project": "p", "location": "us-central1",
                        "op_type": "CREATE_NODE_POOL", "status": "RUNNING",
                        "target": "projects/p/locations/us-central1/clusters/c/nodePools/p",
                        "cluster_key": "projects/p/locations/us-central1/clusters/c",
                        "start": 0, "done_at": 1000, "end": null,
                        "effect": {"CreateNodePool": {"pool": "p"}},
                        "failure": null, "error": null});
        let loaded: Operation = serde_json::from_value(op).expect("old operation loads");
        assert!(!loaded.keeps_nodes);
        assert!(loaded.capacity_deadline.is_none() && !loaded.waiting);
    }

    #[test]
    fn merge_is_recursive_for_objects_only() {
        let mut v = json!({"a": {"b": 1, "c": [1, 2]}, "d": 1});
        merge(&mut v, &json!({"a": {"c": [3]}, "e": 2}));
        assert_eq!(v, json!({"a": {"b": 1, "c": [3]}, "d": 1, "e": 2}));
    }
}
