//! A GKE Standard cluster (<https://cloud.google.com/kubernetes-engine/docs/reference/rest/v1/projects.locations.clusters>).
//! The network, subnet, secondary ranges, Dataplane V2, multi-networking and private nodes are
//! fixed at creation (hashicorp/terraform-provider-google,
//! `google/services/container/resource_container_cluster.go`, `ForceNew` on `network`,
//! `subnetwork`, `ip_allocation_policy`, `datapath_provider`, `enable_multi_networking`,
//! `private_cluster_config`); the release channel, the control plane's version, the authorized
//! networks, the CSI add-ons, Workload Identity and labels change with `clusters.update` /
//! `setResourceLabels`, one field group per call; the maintenance policy with
//! `setMaintenancePolicy` (with the live `resourceVersion`).
//!
//! The maintenance policy (`maintenancePolicy.window`): a recurring window and the exclusions,
//! a map by name. GKE fills in what a3ctl leaves open — an exclusion until end of support gets
//! its end (the version's end of support) and, when a3ctl gave none, its start (when it was
//! set) — and writes times in its own spelling, so [`policy_matches`] compares what the
//! blueprint fixes and nothing else, with every time read as an instant.
//!
//! The spec is built by the graph; the GKE adapter (`cloud::gcp::container::cluster`) resolves
//! the version and sends it, and reads the live `Cluster` back onto the spec
//! (`cloud::gcp::container::project::cluster`).

use crate::resource::spec::Change::{ForceNew, InPlace, Local};
use crate::resource::spec::{Compare, Field, f, kind_fields, labels, not_diffed};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The pool a cluster is created with and that is deleted right after: a Standard cluster cannot
/// be created without one, and a3ctl's pools are separate `node_pool` resources (what
/// `remove_default_node_pool` does in Terraform).
pub const BOOTSTRAP_POOL: &str = "a3ctl-bootstrap";

/// A CIDR block allowed to reach the control plane.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AuthorizedNetwork {
    pub cidr: String,
    /// The display name; empty when none was given (gcloud cannot set one).
    pub name: String,
}

/// Whether the pool the cluster was created with is still there.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BootstrapPool {
    /// While the pool a cluster is created with is still there (a create whose answer was lost,
    /// then adopted): removing it is an in-place update.
    Present,
    Removed,
}

/// `maintenancePolicy` as a3ctl manages it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct MaintenancePolicy {
    /// The recurring window; `None`: GKE may maintain at any time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window: Option<RecurringWindow>,
    /// By name (the API's `maintenanceExclusions` map).
    #[serde(default)]
    pub exclusions: BTreeMap<String, Exclusion>,
}

/// `recurringWindow`: the first occurrence (RFC 3339, UTC) and its RRULE.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RecurringWindow {
    pub start: String,
    pub end: String,
    pub recurrence: String,
}

/// One maintenance exclusion.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Exclusion {
    /// `NO_UPGRADES`, `NO_MINOR_UPGRADES` or `NO_MINOR_OR_NODE_UPGRADES`.
    pub scope: String,
    /// Desired: `None` when it starts as it is applied; live: always set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start: Option<String>,
    /// Desired: `None` until end of support; live: GKE's end.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end: Option<String>,
    /// `endTimeBehavior: UNTIL_END_OF_SUPPORT`.
    #[serde(default)]
    pub until_end_of_support: bool,
}

/// Whether the `live` policy means what `desired` asks: the same window (times as instants) and
/// the same exclusion names, each with its scope, its end behaviour, and the start and end the
/// blueprint fixes (an exclusion until end of support has GKE's end; one without a start, the
/// time it was set).
pub fn policy_matches(desired: &serde_json::Value, live: &serde_json::Value) -> bool {
    let at = instant;
    let (Ok(desired), Ok(live)) = (
        serde_json::from_value::<MaintenancePolicy>(desired.clone()),
        serde_json::from_value::<MaintenancePolicy>(live.clone()),
    ) else {
        return desired == live;
    };
    let window = match (&desired.window, &live.window) {
        (None, None) => true,
        (Some(d), Some(l)) => {
            at(&d.start) == at(&l.start) && at(&d.end) == at(&l.end) && d.recurrence == l.recurrence
        }
        _ => false,
    };
    window
        && desired.exclusions.len() == live.exclusions.len()
        && desired.exclusions.iter().all(|(name, d)| {
            live.exclusions.get(name).is_some_and(|l| {
                d.scope == l.scope
                    && d.until_end_of_support == l.until_end_of_support
                    && (d.start.is_none()
                        || d.start.as_deref().map(at) == l.start.as_deref().map(at))
                    && (d.until_end_of_support
                        || d.end.as_deref().map(at) == l.end.as_deref().map(at))
            })
        })
}

/// A time as an instant (`2026-01-03T02:00:00.000Z` = `2026-01-03T03:00:00+01:00`); text that is
/// not RFC 3339 stays as it is.
pub fn instant(text: &str) -> String {
    chrono::DateTime::parse_from_rfc3339(text)
        .map(|t| {
            t.with_timezone(&chrono::Utc)
                .format("%Y-%m-%dT%H:%M:%SZ")
                .to_string()
        })
        .unwrap_or_else(|_| text.to_string())
}

/// What a3ctl declares about a cluster.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClusterSpec {
    pub name: String,
    /// The region.
    pub location: String,
    /// The primary VPC's name.
    pub network: String,
    /// The primary subnet's name.
    pub subnetwork: String,
    /// The subnet's secondary range names of pods and services.
    pub pods_range: String,
    pub services_range: String,
    /// `ADVANCED_DATAPATH` (Dataplane V2).
    pub datapath_provider: String,
    pub multi_networking: bool,
    /// `RAPID`, `REGULAR`, `STABLE`, `EXTENDED` or `UNSPECIFIED`.
    pub release_channel: String,
    /// `default`, `latest`, a prefix (`1.32`) or an exact build; live, the control plane's build.
    pub version: String,
    pub private_nodes: bool,
    /// The control plane's range; only with private nodes.
    pub master_ipv4_cidr: Option<String>,
    pub authorized_networks: Vec<AuthorizedNetwork>,
    /// Includes the ownership label.
    pub labels: BTreeMap<String, String>,
    pub filestore_csi: bool,
    pub gcsfuse_csi: bool,
    /// `PROJECT.svc.id.goog`; empty when Workload Identity is off.
    pub workload_pool: String,
    pub bootstrap_pool: BootstrapPool,
    /// Not diffed and never read back: the GPU family's machine type, so the adapter can check
    /// the resolved version's GPUDirect minimum before anything is created.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpudirect_family: Option<String>,
    /// Not diffed and never read back: the GPU pools use GKE-managed GPU networking, so the
    /// adapter checks the resolved version against its minimum before anything is created.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub managed_gpu_networking: bool,
    /// a3ctl's deletion protection (not GKE's: its API has none): a plan that would delete or
    /// replace the cluster is refused while the recorded value is on.
    #[serde(default)]
    pub deletion_protection: bool,
    /// The maintenance policy; `None` (a record made before a3ctl managed it, or a deployment
    /// whose blueprint leaves it alone): not managed, never diffed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub maintenance_policy: Option<MaintenancePolicy>,
}

/// What a3ctl knows about the kind.
pub const INFO: super::KindInfo = super::KindInfo {
    kind: super::Kind::Cluster,
    name: "cluster",
    api: super::Api::Container,
    fields: FIELDS,
    deadline_minutes: 90,
    create_latency: Some("container.cluster.create"),
    service: Some("container.googleapis.com"),
};

kind_fields! {
    /// The fields of [`ClusterSpec`].
    pub enum ClusterField for Cluster in FIELDS {
        Name => f("name", ForceNew),
        Location => f("location", ForceNew),
        Network => f("network", ForceNew),
        Subnetwork => f("subnetwork", ForceNew),
        PodsRange => f("pods_range", ForceNew),
        ServicesRange => f("services_range", ForceNew),
        DatapathProvider => f("datapath_provider", ForceNew),
        MultiNetworking => f("multi_networking", ForceNew),
        PrivateNodes => f("private_nodes", ForceNew),
        MasterIpv4Cidr => f("master_ipv4_cidr", ForceNew),
        ReleaseChannel => f("release_channel", InPlace),
        Version => Field {
            name: "version",
            change: InPlace,
            compare: Compare::VersionPrefix,
        },
        AuthorizedNetworks => Field {
            name: "authorized_networks",
            change: InPlace,
            compare: Compare::CidrBlocks,
        },
        Labels => labels(),
        FilestoreCsi => f("filestore_csi", InPlace),
        GcsfuseCsi => f("gcsfuse_csi", InPlace),
        WorkloadPool => f("workload_pool", InPlace),
        BootstrapPool => f("bootstrap_pool", InPlace),
        // The adapter's inputs for its GPUDirect version checks.
        GpudirectFamily => not_diffed("gpudirect_family"),
        ManagedGpuNetworking => not_diffed("managed_gpu_networking"),
        DeletionProtection => f("deletion_protection", Local),
        MaintenancePolicy => Field {
            name: "maintenance_policy",
            change: InPlace,
            compare: Compare::MaintenancePolicy,
        },
    }
}
