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
pub mod store;
pub mod table;
pub mod tls;
pub mod verbs;
pub mod watch;

use crate::clock::SimTime;
use crate::server::Shared;
use crate::world::{Ctx, World};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::sync::Arc;

pub use server::ServerHandle;

/// Every simulated cluster's Kubernetes side.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct State {
    pub clusters: BTreeMap<String, KubeCluster>,
}

/// One cluster's API server state.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct KubeCluster {
    pub name: String,
    pub location: String,
    pub version: String,
    pub multi_networking: bool,
    /// The Kubernetes beta APIs the cluster enabled (`enableK8sBetaApis.enabledApis`, e.g.
    /// `resource.k8s.io/v1beta1/deviceclasses`); the `resource.k8s.io` ones are served
    /// ([`dra::served`]). Absent from worlds saved before clusters carried them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub beta_apis: Vec<String>,
    /// `127.0.0.1:PORT`.
    pub endpoint: String,
    pub certs: tls::ClusterCerts,
    /// The control plane answers (cluster RUNNING).
    pub ready: bool,
    pub addons: Addons,
    /// Nodes by node pool.
    pub nodes: BTreeMap<String, Vec<NodeSpec>>,
    /// What clients wrote on GKE's Node objects (`kubectl cordon`, `kubectl taint`), by node
    /// name, kept over GKE's own spec of the node ([`controllers::nodes::client_edit`]).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub node_edits: BTreeMap<String, NodeEdits>,
    /// When each pool's nodes appeared, for driver-installation delays.
    pub nodes_since: BTreeMap<String, SimTime>,
    /// When each node appeared (node name → time).
    #[serde(default)]
    pub node_since: BTreeMap<String, SimTime>,
    /// The email of the IAM service account each node pool's nodes run as (the pool's
    /// `config.serviceAccount`, `default` resolved to the project's Compute Engine default
    /// account), by pool; a pool not listed (not made by GKE, or saved before pools carried it)
    /// runs as that default account.
    #[serde(default)]
    pub pool_accounts: BTreeMap<String, String>,
    /// The project the cluster lives in (from its key).
    #[serde(default)]
    pub project: String,
    /// Every Kubernetes object of the cluster.
    #[serde(default)]
    pub store: store::Store,
    /// What the simulated controllers remember.
    #[serde(default)]
    pub controllers: controllers::ControllerState,
    /// The simulated time and store version after the last controller pass, cleared by every
    /// change made from outside the store (readiness, nodes, add-ons). A pass at the same time
    /// over the same objects would change nothing, so it is skipped.
    #[serde(skip)]
    pub ticked: Option<(SimTime, u64)>,
}

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

/// A node of a node pool, as GKE creates it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NodeSpec {
    pub name: String,
    pub pool: String,
    pub machine_type: String,
    pub zone: String,
    /// GKE's labels: `cloud.google.com/gke-nodepool`, `cloud.google.com/gke-accelerator`,
    /// `node.kubernetes.io/instance-type`, `topology.kubernetes.io/zone`, placement topology ...
    pub labels: BTreeMap<String, String>,
    /// `(key, value, effect)`, e.g. `("nvidia.com/gpu", "present", "NoSchedule")`.
    pub taints: Vec<(String, String, String)>,
    /// GPUs on the machine (8 for A3); allocatable only once a driver is installed.
    pub gpus: u32,
    /// GKE installs the driver itself (`gpuDriverInstallationConfig` DEFAULT or LATEST).
    pub managed_driver: bool,
    pub cpu: String,
    pub memory: String,
    /// The node's own GKE version (its kubelet's); empty: the control plane's. Absent from worlds
    /// saved before nodes carried it.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub version: String,
    /// Cordoned (`spec.unschedulable`), as an upgrade leaves a node it is about to drain.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub unschedulable: bool,
    /// The address of the node's VM on its primary NIC (`nic0`, in the cluster's subnetwork):
    /// its `InternalIP`. Empty in worlds saved before nodes were VMs.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub internal_ip: String,
    /// The node's NICs after `eth0` (the pool's `additionalNodeNetworkConfigs`, in order: `eth1`,
    /// `eth2` ...), which GKE shows in the node's `networking.gke.io/nic-info` annotation and,
    /// once a Network object refers to their VPC, as `networking.gke.io.networks/<Network>`
    /// resources ([`controllers::nodes`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub nics: Vec<NodeNic>,
    /// RDMA NICs GKE manages itself for the pool's `acceleratorNetworkProfile` (GKE-managed
    /// DRANET): published as devices of a ResourceSlice ([`controllers::dranet`]); 0 for none.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub managed_rdma_nics: u32,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// What a client set on a GKE node's spec beyond what GKE sets: a cordon, and its own taints.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct NodeEdits {
    /// `spec.unschedulable` set by a client (`kubectl cordon`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub unschedulable: bool,
    /// Taints a client added (`kubectl taint nodes`), as written.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub taints: Vec<serde_json::Value>,
}

/// One additional NIC of a node.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NodeNic {
    /// The VPC network's name.
    pub network: String,
    /// The subnetwork's name.
    pub subnetwork: String,
    /// `GVNIC`, or `MRDMA` on a network with a RoCE network profile.
    pub nic_type: String,
    /// The NIC's address in its subnetwork.
    pub ip: String,
}

/// Cluster add-ons and settings whose Kubernetes side the simulator models (the CSI drivers'
/// objects, and the DaemonSets GKE runs for them: [`controllers::gke_daemonsets`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Addons {
    pub filestore_csi: bool,
    pub gcs_fuse_csi: bool,
    /// The rest is absent from worlds saved before GKE's DaemonSets were simulated. `from_gke`:
    /// GKE told these settings (a cluster provisioned without GKE, or saved before, runs none of
    /// GKE's DaemonSets).
    #[serde(default)]
    pub from_gke: bool,
    /// `addonsConfig.gcePersistentDiskCsiDriverConfig.enabled`.
    #[serde(default)]
    pub pd_csi: bool,
    /// `networkConfig.datapathProvider: ADVANCED_DATAPATH`.
    #[serde(default)]
    pub dataplane_v2: bool,
    /// `workloadIdentityConfig.workloadPool` set.
    #[serde(default)]
    pub workload_identity: bool,
    /// `loggingService` other than `none`.
    #[serde(default)]
    pub logging: bool,
    /// `monitoringService` other than `none`.
    #[serde(default)]
    pub monitoring: bool,
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
pub fn deprovision(shared: &Shared, world: &mut World, key: &str) {
    if let Some(handle) = shared.kube_servers.lock().remove(key) {
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
