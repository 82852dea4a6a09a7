//! Kubernetes API servers, one per simulated GKE cluster.
//!
//! Contract with the GKE module (`crate::container`), which owns cluster and node-pool lifecycles:
//! - when a cluster is created, GKE calls [`provision`] (binds a port, generates the cluster's CA,
//!   starts the HTTPS server) and puts the returned endpoint and CA into the cluster resource;
//! - when the cluster becomes RUNNING, GKE calls [`State::set_ready`]; before that the server
//!   answers 503;
//! - when a node pool's nodes exist (create or resize finished), GKE calls
//!   [`State::set_pool_nodes`] with the full list of that pool's nodes (empty when deleted) and
//!   [`State::set_pool_account`] with the service account they run as;
//! - when add-ons change, GKE calls [`State::set_addons`];
//! - when the cluster is deleted, GKE calls [`deprovision`].
//!
//! Cluster keys are `projects/P/locations/L/clusters/C`. Files: [`tls`] (certificates),
//! [`auth`] (who may call), [`server`] (HTTPS, readiness gate), [`status`] (error objects), [`api`] (routing),
//! [`discovery`] (discovery and OpenAPI), [`resources`] (the served kinds), [`dra`] (the
//! `resource.k8s.io` versions a cluster serves, their conversion and checks), [`store`] (objects,
//! resourceVersions, change log), [`verbs`] (get/list/create/update/patch/delete), [`fields`]
//! (managedFields and server-side apply), [`patches`] (merge and JSON patches), [`admission`] (defaults, validation, webhooks),
//! [`selectors`], [`watch`], [`table`] (server-side printing) and [`controllers`] (nodes,
//! DaemonSets, Deployments, CRDs, namespaces, add-ons, volumes, pods and their events), run lazily
//! by [`tick`].

// Handlers return `Result<_, Status>`; a Status is a few strings and rarely built, so its size
// on the error path does not matter.
#![allow(clippy::result_large_err)]

pub mod admission;
pub mod api;
pub mod auth;
pub mod cel;
pub mod controllers;
pub mod discovery;
pub mod dra;
pub mod eventsv1;
pub mod fields;
pub mod logs;
pub mod patches;
pub mod resources;
pub mod selectors;
pub mod server;
pub mod status;

pub mod table;
pub mod tls;
pub mod verbs;
pub mod watch;

use crate::clock::SimTime;
use crate::shared::Ctx;
use crate::shared::Shared;
pub use crate::state::kube::{Addons, KubeCluster, NodeEdits, NodeNic, NodeSpec, State, store};
use crate::world::World;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::sync::Arc;

pub use server::ServerHandle;

impl KubeCluster {
    /// The project id, for provider IDs.
    pub fn key_project(&self) -> &str {
        &self.project
    }

    /// Number of Node objects.
    pub fn node_count(&self) -> usize {
        self.store.list("", "nodes", None).len()
    }
}

/// What GKE tells the Kubernetes side about a new cluster.
#[derive(Debug, Clone)]
pub struct ClusterSpec {
    pub key: String,
    pub name: String,
    pub location: String,
    /// GKE version, e.g. `1.32.4-gke.1767000` (served by `/version`).
    pub version: String,
    /// Multi-networking clusters serve `networking.gke.io/v1` Network and GKENetworkParamSet.
    pub multi_networking: bool,
    /// `enableK8sBetaApis.enabledApis`.
    pub beta_apis: Vec<String>,
}

/// Where the new API server listens and the CA that signs its certificate.
#[derive(Debug, Clone)]
pub struct Provisioned {
    /// `127.0.0.1:PORT`, what GKE returns as the cluster's `endpoint`.
    pub endpoint: String,
    /// PEM of the cluster CA; GKE returns it base64-encoded as `masterAuth.clusterCaCertificate`.
    pub ca_pem: String,
}

impl State {
    pub fn cluster(&self, key: &str) -> Option<&KubeCluster> {
        self.clusters.get(key)
    }

    pub fn is_ready(&self, key: &str) -> bool {
        self.clusters.get(key).is_some_and(|c| c.ready)
    }

    /// Marks the cluster's API server as up (cluster RUNNING) or down.
    pub fn set_ready(&mut self, key: &str, ready: bool) {
        if let Some(c) = self.clusters.get_mut(key) {
            c.ready = ready;
            c.ticked = None;
        }
    }

    /// Replaces the nodes of one node pool (an empty list removes the pool's nodes).
    pub fn set_pool_nodes(&mut self, key: &str, pool: &str, nodes: Vec<NodeSpec>, now: SimTime) {
        let Some(c) = self.clusters.get_mut(key) else {
            return;
        };
        c.ticked = None;
        if let Some(old) = c.nodes.get(pool) {
            for node in old {
                if !nodes.iter().any(|n| n.name == node.name) {
                    c.node_since.remove(&node.name);
                }
            }
        }
        for node in &nodes {
            c.node_since.entry(node.name.clone()).or_insert(now);
        }
        if nodes.is_empty() {
            c.nodes.remove(pool);
            c.nodes_since.remove(pool);
            c.pool_accounts.remove(pool);
            c.controllers.driver_delay.remove(pool);
        } else {
            c.nodes_since.entry(pool.to_string()).or_insert(now);
            c.nodes.insert(pool.to_string(), nodes);
        }
    }

    /// Records the IAM service account (email) the nodes of one node pool run as.
    pub fn set_pool_account(&mut self, key: &str, pool: &str, email: &str) {
        if let Some(c) = self.clusters.get_mut(key) {
            c.pool_accounts.insert(pool.to_string(), email.to_string());
            c.ticked = None;
        }
    }

    /// Records the beta APIs the cluster enabled (they are never disabled again).
    pub fn set_beta_apis(&mut self, key: &str, apis: Vec<String>) {
        if let Some(c) = self.clusters.get_mut(key) {
            c.beta_apis = apis;
            c.ticked = None;
        }
    }

    pub fn set_addons(&mut self, key: &str, addons: Addons) {
        if let Some(c) = self.clusters.get_mut(key) {
            c.addons = addons;
            c.ticked = None;
        }
    }
}

/// Binds a loopback listener, on `preferred` when it is free, else on any free port.
fn bind(preferred: Option<u16>) -> std::io::Result<std::net::TcpListener> {
    if let Some(port) = preferred
        && let Ok(listener) = std::net::TcpListener::bind(("127.0.0.1", port))
    {
        return Ok(listener);
    }
    std::net::TcpListener::bind(("127.0.0.1", 0))
}

/// Creates a cluster's Kubernetes side and starts its API server (not ready until
/// [`State::set_ready`]).
pub fn provision(
    shared: &Arc<Shared>,
    world: &mut World,
    spec: ClusterSpec,
) -> std::io::Result<Provisioned> {
    let certs = tls::generate(&spec.name).map_err(std::io::Error::other)?;
    let listener = bind(None)?;
    let endpoint = format!("127.0.0.1:{}", listener.local_addr()?.port());
    let handle = server::spawn(shared, &spec.key, listener, tls::server_config(&certs)?)?;
    if let Some(old) = shared.kube_servers.lock().insert(spec.key.clone(), handle) {
        old.stop();
    }
    let ca_pem = certs.ca_cert_pem.clone();
    let project = spec
        .key
        .strip_prefix("projects/")
        .and_then(|rest| rest.split('/').next())
        .unwrap_or_default()
        .to_string();
    let uid_seed = world.seed ^ controllers::hash(&spec.key);
    let mut cluster = KubeCluster {
        name: spec.name,
        location: spec.location,
        version: spec.version,
        multi_networking: spec.multi_networking,
        beta_apis: spec.beta_apis,
        endpoint: endpoint.clone(),
        certs,
        ready: false,
        addons: Addons::default(),
        nodes: BTreeMap::new(),
        node_edits: BTreeMap::new(),
        nodes_since: BTreeMap::new(),
        node_since: BTreeMap::new(),
        pool_accounts: BTreeMap::new(),
        project,
        store: store::Store::new(uid_seed),
        controllers: controllers::ControllerState::default(),
        ticked: None,
    };
    let clock = controllers::Clock {
        epoch: world.epoch,
        now: shared.clock.now(),
    };
    controllers::housekeeping::seed(&mut cluster, &clock);
    world.kube.clusters.insert(spec.key, cluster);
    Ok(Provisioned { endpoint, ca_pem })
}

/// Stops a cluster's API server and forgets its objects.
pub fn deprovision(
    servers: &parking_lot::Mutex<BTreeMap<String, ServerHandle>>,
    world: &mut World,
    key: &str,
) {
    if let Some(handle) = servers.lock().remove(key) {
        handle.stop();
    }
    world.kube.clusters.remove(key);
}

/// Restarts the API servers of clusters loaded from a persisted world, on their old port when it
/// is free; a cluster whose port moved gets its new endpoint recorded on the GKE side too.
pub fn restore_servers(shared: &Arc<Shared>) -> Result<(), (String, std::io::Error)> {
    let clusters: Vec<(String, String, tls::ClusterCerts)> = {
        let world = shared.world.lock();
        world
            .kube
            .clusters
            .iter()
            .map(|(k, c)| (k.clone(), c.endpoint.clone(), c.certs.clone()))
            .collect()
    };
    for (key, endpoint, certs) in clusters {
        let fail = |e: std::io::Error| (key.clone(), e);
        let preferred = endpoint.rsplit(':').next().and_then(|p| p.parse().ok());
        let listener = bind(preferred).map_err(fail)?;
        let new_endpoint = format!("127.0.0.1:{}", listener.local_addr().map_err(fail)?.port());
        let handle = server::spawn(
            shared,
            &key,
            listener,
            tls::server_config(&certs).map_err(fail)?,
        )
        .map_err(fail)?;
        shared.kube_servers.lock().insert(key.clone(), handle);
        if new_endpoint != endpoint {
            let mut world = shared.world.lock();
            if let Some(c) = world.kube.clusters.get_mut(&key) {
                c.endpoint = new_endpoint.clone();
            }
            world.container.set_endpoint(&key, &new_endpoint);
        }
    }
    Ok(())
}

/// Moves DaemonSet/Deployment status, CRD conditions and node readiness along.
pub fn tick(world: &mut World, cx: &Ctx) -> bool {
    if world.kube.clusters.is_empty() {
        return false;
    }
    // The clusters are taken out while they tick so that delays can be drawn from the world.
    let mut clusters = std::mem::take(&mut world.kube.clusters);
    let mut changed = false;
    for (key, cluster) in clusters.iter_mut() {
        changed |= controllers::tick_cluster(world, cx, key, cluster);
    }
    world.kube.clusters = clusters;
    changed
}

pub fn inventory(world: &World) -> Value {
    let clusters: serde_json::Map<String, Value> = world
        .kube
        .clusters
        .iter()
        .map(|(k, c)| {
            let nodes: Vec<&str> = c
                .nodes
                .values()
                .flatten()
                .map(|n| n.name.as_str())
                .collect();
            let objects: Vec<String> = c
                .store
                .objects
                .iter()
                .map(|(key, o)| {
                    let (_, _, namespace, name) = store::split_key(key).unwrap_or_default();
                    let kind = o["kind"].as_str().unwrap_or_default();
                    format!("{kind}/{namespace}/{name}")
                })
                .collect();
            (
                k.clone(),
                json!({"endpoint": c.endpoint, "ready": c.ready, "nodes": nodes,
                    "node_count": c.node_count(), "resource_version": c.store.resource_version.to_string(),
                    "objects": objects}),
            )
        })
        .collect();
    json!({ "clusters": clusters })
}
