//! Kubernetes API servers, one per simulated GKE cluster: to be implemented.
//!
//! Contract with the GKE module (`crate::container`), which owns cluster and node-pool lifecycles:
//! - when a cluster is created, GKE calls [`provision`] (binds a port, generates the cluster's CA,
//!   starts the HTTPS server) and puts the returned endpoint and CA into the cluster resource;
//! - when the cluster becomes RUNNING, GKE calls [`State::set_ready`]; before that the server
//!   answers 503;
//! - when a node pool's nodes exist (create or resize finished), GKE calls
//!   [`State::set_pool_nodes`] with the full list of that pool's nodes (empty when deleted);
//! - when add-ons change, GKE calls [`State::set_addons`];
//! - when the cluster is deleted, GKE calls [`deprovision`].
//! Cluster keys are `projects/P/locations/L/clusters/C`.

use crate::clock::SimTime;
use crate::server::Shared;
use crate::world::{Ctx, World};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::sync::Arc;

/// Every simulated cluster's Kubernetes objects.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct State {}

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
#[derive(Debug, Clone, PartialEq)]
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
}

/// Cluster add-ons whose Kubernetes side the simulator models.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Addons {
    pub filestore_csi: bool,
    pub gcs_fuse_csi: bool,
}

impl State {
    /// Marks the cluster's API server as up (cluster RUNNING).
    pub fn set_ready(&mut self, _key: &str, _ready: bool) {}

    /// Replaces the nodes of one node pool.
    pub fn set_pool_nodes(
        &mut self,
        _key: &str,
        _pool: &str,
        _nodes: Vec<NodeSpec>,
        _now: SimTime,
    ) {
    }

    pub fn set_addons(&mut self, _key: &str, _addons: Addons) {}
}

/// A running API server.
#[derive(Debug)]
pub struct ServerHandle {}

impl ServerHandle {
    pub fn stop(self) {}
}

/// Creates a cluster's Kubernetes side and starts its API server.
pub fn provision(
    _shared: &Arc<Shared>,
    _world: &mut World,
    spec: ClusterSpec,
) -> std::io::Result<Provisioned> {
    Err(std::io::Error::other(format!(
        "Kubernetes API server for {} not implemented yet",
        spec.key
    )))
}

/// Stops a cluster's API server and forgets its objects.
pub fn deprovision(_shared: &Shared, _world: &mut World, _key: &str) {}

/// Restarts the API servers of clusters loaded from a persisted world.
pub fn restore_servers(_shared: &Arc<Shared>) -> Result<(), (String, std::io::Error)> {
    Ok(())
}

/// Moves DaemonSet/Deployment status, CRD conditions and node readiness along.
pub fn tick(_world: &mut World, _cx: &Ctx) -> bool {
    false
}

pub fn inventory(_world: &World) -> Value {
    json!({})
}
