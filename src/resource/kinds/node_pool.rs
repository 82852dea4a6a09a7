//! A GKE node pool (<https://cloud.google.com/kubernetes-engine/docs/reference/rest/v1/projects.locations.clusters.nodePools>).
//! What the machines are (type, zones, accelerators, extra networks, placement, reservation,
//! capacity, local SSDs, pods per node) is fixed at creation (hashicorp/terraform-provider-google,
//! `google/services/container/node_config.go` and `resource_container_node_pool.go`); the size,
//! labels, taints, gVNIC, image, disk size and management change in place.
//!
//! The spec is built by the graph; the GKE adapter turns it into a `NodePool` and projects the
//! live pool back (`cloud::gcp::container::node_pool`).

use crate::resource::spec::Change::{ForceNew, InPlace};
use crate::resource::spec::{Field, f, labels, set};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// GPUs on each node and how their driver is installed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Accelerator {
    /// `nvidia-h100-80gb`, `nvidia-h100-mega-80gb`.
    #[serde(rename = "type")]
    pub kind: String,
    pub count: i64,
    /// `gpuDriverVersion`: `DEFAULT`, `LATEST`, `INSTALLATION_DISABLED`.
    pub driver: String,
}

/// A GPU NIC's network and subnet (`networkConfig.additionalNodeNetworkConfigs[]`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AdditionalNetwork {
    pub network: String,
    pub subnetwork: String,
}

/// A specific reservation (and block) the pool consumes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Reservation {
    /// The reservation's name, or its full path when it lives in another project.
    pub name: String,
    pub block: Option<String>,
}

/// A node taint.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Taint {
    pub key: String,
    pub value: String,
    /// `NO_SCHEDULE`, `PREFER_NO_SCHEDULE`, `NO_EXECUTE`.
    pub effect: String,
}

/// What a3ctl declares about a node pool.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NodePoolSpec {
    pub cluster: String,
    pub location: String,
    pub name: String,
    pub machine_type: String,
    pub locations: Vec<String>,
    /// Nodes per zone.
    pub node_count: u64,
    pub accelerator: Option<Accelerator>,
    pub additional_networks: Vec<AdditionalNetwork>,
    /// The compact placement policy's name.
    pub placement_policy: Option<String>,
    pub reservation: Option<Reservation>,
    /// `on-demand`, `spot`, `flex-start` or `reservation`.
    pub capacity: String,
    pub local_ssd_count: u64,
    /// The VMs' labels (GKE's own `goog-gke-*` left out), sorted.
    pub labels: BTreeMap<String, String>,
    pub taints: Vec<Taint>,
    pub gvnic: bool,
    pub image_type: String,
    pub disk_size_gb: i64,
    pub auto_repair: bool,
    pub auto_upgrade: bool,
}

/// How each field of [`NodePoolSpec`] may change.
pub const FIELDS: &[Field] = &[
    f("cluster", ForceNew),
    f("name", ForceNew),
    f("machine_type", ForceNew),
    f("locations", ForceNew),
    f("accelerator", ForceNew),
    f("additional_networks", ForceNew),
    f("placement_policy", ForceNew),
    f("reservation", ForceNew),
    f("capacity", ForceNew),
    f("local_ssd_count", ForceNew),
    f("max_pods", ForceNew),
    f("node_count", InPlace),
    labels(),
    set("taints", InPlace),
    f("gvnic", InPlace),
    f("image_type", InPlace),
    f("disk_size_gb", InPlace),
    f("auto_repair", InPlace),
    f("auto_upgrade", InPlace),
];
