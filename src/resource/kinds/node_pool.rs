//! A GKE node pool (<https://cloud.google.com/kubernetes-engine/docs/reference/rest/v1/projects.locations.clusters.nodePools>).
//! What the machines are (type, zones, accelerators, extra networks, placement, reservation,
//! capacity, local SSDs, pods per node) is fixed at creation (hashicorp/terraform-provider-google,
//! `google/services/container/node_config.go` and `resource_container_node_pool.go`); the size,
//! labels (GCP and Kubernetes), taints, gVNIC, image, disk size and management change in place.
//! Every pool's nodes carry [`POOL_LABEL`].
//!
//! The spec is built by the graph; the GKE adapter (`cloud::gcp::container::node_pool`) turns it
//! into a `NodePool` and reads the live pool back (`cloud::gcp::container::project::node_pool`):
//! - `labels` are the VMs' GCP labels (`config.resourceLabels`); GKE's own `goog-gke-*` labels
//!   are left out.
//! - `capacity`: `spot` ↔ `config.spot`, `flex-start` ↔ `config.flexStart`, `reservation` ↔
//!   `config.reservationAffinity` (`SPECIFIC_RESERVATION` on
//!   `projects/P/reservations/R[/reservationBlocks/B]`), `on-demand` ↔ none of them.
//! - `node_count` is per zone; GKE only returns `initialNodeCount`, which `setSize` does not
//!   change, so the adapter passes the size it read from the pool's Compute instance groups
//!   (their `targetSize`), and `initialNodeCount` stands only for a pool GKE has made no group
//!   for yet.

use crate::resource::spec::Change::{ForceNew, InPlace};
use crate::resource::spec::{Compare, Field, f, kind_fields, labels, set};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The Kubernetes node label a3ctl puts on the nodes of every pool it makes, set to the
/// blueprint's pool name: a stable identity that outlives the GKE pool name
/// (`cloud.google.com/gke-nodepool`), which a replacement pool must change (pool names are unique
/// in a cluster). Kueue's ResourceFlavors select it ([`crate::graph::kueue`]).
pub const POOL_LABEL: &str = "a3ctl.dev/pool";

/// The node labels of a pool named `name` in the blueprint: [`POOL_LABEL`], then `extra`.
pub fn pool_node_labels(
    name: &str,
    extra: impl IntoIterator<Item = (String, String)>,
) -> BTreeMap<String, String> {
    let mut labels: BTreeMap<String, String> = extra.into_iter().collect();
    labels.insert(POOL_LABEL.to_string(), name.to_string());
    labels
}

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

impl Reservation {
    /// `projects/P/reservations/R[/reservationBlocks/B]`, as `reservationAffinity.values` holds
    /// it; a name that is already a path (another project's reservation) is kept.
    pub fn value(&self, project: &str) -> String {
        let mut value = if self.name.starts_with("projects/") {
            self.name.clone()
        } else {
            format!("projects/{project}/reservations/{}", self.name)
        };
        if let Some(block) = &self.block {
            value.push_str(&format!("/reservationBlocks/{block}"));
        }
        value
    }

    /// `(project, name)` of the reservation: its own project when named by a path
    /// (`projects/Q/reservations/R`, a shared reservation), else `project`.
    pub fn owner_and_name(&self, project: &str) -> (String, String) {
        self.name
            .strip_prefix("projects/")
            .and_then(|rest| rest.split_once("/reservations/"))
            .map(|(owner, name)| (owner.to_string(), name.to_string()))
            .unwrap_or_else(|| (project.to_string(), self.name.clone()))
    }

    /// The reservation a `reservationAffinity` value names, short when it is in `project`.
    pub fn from_value(project: &str, value: &str) -> Reservation {
        let (path, block) = match value.split_once("/reservationBlocks/") {
            Some((p, b)) => (p, Some(b.to_string())),
            None => (value, None),
        };
        let name = match path.strip_prefix(&format!("projects/{project}/reservations/")) {
            Some(short) => short.to_string(),
            None => path.to_string(),
        };
        Reservation { name, block }
    }
}

/// A node taint.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Taint {
    pub key: String,
    pub value: String,
    /// `NO_SCHEDULE`, `PREFER_NO_SCHEDULE`, `NO_EXECUTE`.
    pub effect: String,
}

/// `upgradeSettings`: how GKE replaces the nodes when it upgrades them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UpgradeSettings {
    /// `SURGE` or `BLUE_GREEN`.
    pub strategy: String,
    pub max_surge: u32,
    pub max_unavailable: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blue_green: Option<BlueGreenSettings>,
}

/// `blueGreenSettings` with its `standardRolloutPolicy`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BlueGreenSettings {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub batch_node_count: Option<u32>,
    /// Percent (1–100) of the old nodes per batch; the API's `batchPercentage` is a fraction.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub batch_percent: Option<u32>,
    pub batch_soak_seconds: u64,
    pub pool_soak_seconds: u64,
}

impl UpgradeSettings {
    /// Nodes down at once during an upgrade of a pool of `nodes` nodes (per zone), and how many
    /// batches that takes: surge replaces `max_surge + max_unavailable` nodes at a time, blue-green
    /// drains a batch of old nodes at a time.
    pub fn batches(&self, nodes: u64) -> (u64, u64) {
        let at_once = match &self.blue_green {
            Some(bg) if self.strategy == "BLUE_GREEN" => {
                match (bg.batch_node_count, bg.batch_percent) {
                    (Some(n), _) => u64::from(n),
                    (None, Some(p)) => (nodes * u64::from(p)).div_ceil(100),
                    (None, None) => 1,
                }
            }
            _ => u64::from(self.max_surge) + u64::from(self.max_unavailable),
        }
        .clamp(1, nodes.max(1));
        (at_once, nodes.div_ceil(at_once))
    }
}

/// Whether the `live` upgrade settings are what `desired` asks: the strategy, then its numbers
/// (surge: `max_surge` and `max_unavailable`; blue-green: the batches and soaks).
pub fn upgrade_matches(desired: &serde_json::Value, live: &serde_json::Value) -> bool {
    let (Ok(d), Ok(l)) = (
        serde_json::from_value::<UpgradeSettings>(desired.clone()),
        serde_json::from_value::<UpgradeSettings>(live.clone()),
    ) else {
        return desired == live;
    };
    d.strategy == l.strategy
        && if d.strategy == "BLUE_GREEN" {
            d.blue_green == l.blue_green
        } else {
            (d.max_surge, d.max_unavailable) == (l.max_surge, l.max_unavailable)
        }
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
    /// The nodes' service account: an email, or `default` (the Compute Engine default account,
    /// also what records made before this field read as).
    #[serde(default = "default_account")]
    pub service_account: String,
    /// `None` (a record made before a3ctl managed it, or a pool whose blueprint leaves it alone):
    /// not managed, never diffed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub upgrade_settings: Option<UpgradeSettings>,
    /// `default`, `latest`, a prefix (`1.33`) or an exact build, as `[cluster] version`; live,
    /// the pool's build. Records made before pool versions were managed have none, which never
    /// differs.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub version: String,
    /// GKE-managed GPU networking: the accelerator network profile (`auto`), with which GKE
    /// creates the pool's RDMA networks itself. Immutable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub accelerator_network_profile: Option<String>,
    /// Kubernetes labels of the pool's nodes (`config.labels`): [`POOL_LABEL`], and e.g. the DRA
    /// networking driver's `cloud.google.com/gke-networking-dra-driver=true` of a
    /// managed-networking pool. Records made before a3ctl labelled its pools have none.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub node_labels: BTreeMap<String, String>,
}

/// The service account of a pool that names none: the Compute default one.
pub fn default_account() -> String {
    "default".into()
}

/// What a3ctl knows about the kind.
pub const INFO: super::KindInfo = super::KindInfo {
    kind: super::Kind::NodePool,
    name: "node_pool",
    api: super::Api::Container,
    fields: FIELDS,
    deadline_minutes: 120,
    create_latency: Some("container.nodePool.create"),
    service: Some("container.googleapis.com"),
};

kind_fields! {
    /// The fields of [`NodePoolSpec`].
    pub enum NodePoolField for NodePool in FIELDS {
        Cluster => f("cluster", ForceNew),
        // The cluster's location: a pool cannot move.
        Location => f("location", ForceNew),
        Name => f("name", ForceNew),
        MachineType => f("machine_type", ForceNew),
        Locations => f("locations", ForceNew),
        Accelerator => f("accelerator", ForceNew),
        AdditionalNetworks => f("additional_networks", ForceNew),
        // "Immutable" in GKE's NodeNetworkConfig reference.
        AcceleratorNetworkProfile => f("accelerator_network_profile", ForceNew),
        // `nodePools.update` with `labels` replaces the nodes' Kubernetes labels on the running nodes
        // (https://cloud.google.com/kubernetes-engine/docs/how-to/update-existing-nodepools; the
        // container v1 `UpdateNodePoolRequest.labels`): a pool of an earlier a3ctl gains
        // `POOL_LABEL` without being replaced.
        NodeLabels => f("node_labels", InPlace),
        PlacementPolicy => f("placement_policy", ForceNew),
        Reservation => f("reservation", ForceNew),
        Capacity => f("capacity", ForceNew),
        LocalSsdCount => f("local_ssd_count", ForceNew),
        // GKE cannot change a pool's service account (`gcloud container node-pools update` has no
        // flag for it; terraform-provider-google marks `node_config.service_account` ForceNew).
        ServiceAccount => f("service_account", ForceNew),
        NodeCount => f("node_count", InPlace),
        Labels => labels(),
        Taints => set("taints", InPlace),
        Gvnic => f("gvnic", InPlace),
        ImageType => f("image_type", InPlace),
        DiskSizeGb => f("disk_size_gb", InPlace),
        AutoRepair => f("auto_repair", InPlace),
        AutoUpgrade => f("auto_upgrade", InPlace),
        UpgradeSettings => Field {
            name: "upgrade_settings",
            change: InPlace,
            compare: Compare::UpgradeSettings,
        },
        // `nodePools.update` with `nodeVersion`: GKE upgrades the nodes in place (surge or
        // blue-green), never a new pool.
        Version => Field {
            name: "version",
            change: InPlace,
            compare: Compare::VersionPrefix,
        },
    }
}

impl NodePoolSpec {
    /// The reservation the pool consumes, when its capacity is `reservation`.
    pub fn consumed_reservation(&self) -> Option<&Reservation> {
        self.reservation
            .as_ref()
            .filter(|_| self.capacity == "reservation")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reservations_round_trip() {
        let reservation = |name: &str, block: Option<&str>| Reservation {
            name: name.into(),
            block: block.map(str::to_string),
        };
        for r in [
            reservation("res", Some("b1")),
            reservation("res", None),
            reservation("projects/q/reservations/res", None),
        ] {
            assert_eq!(Reservation::from_value("p", &r.value("p")), r);
        }
        assert_eq!(
            reservation("res", Some("b1")).value("p"),
            "projects/p/reservations/res/reservationBlocks/b1"
        );
    }
}
