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
//! the version and sends it. [`ClusterSpec::project`] reads the live `Cluster` back.

use super::ShapeError;
use crate::resource::Observed;
use crate::resource::spec::Change::{ForceNew, InPlace, Local};
use crate::resource::spec::{Compare, Field, f, kind_fields, labels, not_diffed};
use google_cloud_container_v1::model::Cluster;
use serde::{Deserialize, Serialize};
use serde_json::json;
use std::collections::BTreeMap;

const KIND: &str = "GKE cluster";

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

/// The last segment of a resource name or URL.
fn last(value: &str) -> String {
    value.rsplit('/').next().unwrap_or(value).to_string()
}

impl ClusterSpec {
    /// The live cluster as a spec plus outputs. A cluster without a name, location, network,
    /// subnetwork or control-plane version is an error: GKE fills them in from the moment it
    /// accepts the create.
    // `currentNodeVersion` and `statusMessage` are deprecated but GKE still fills them in.
    #[allow(deprecated)]
    pub fn project(cluster: &Cluster) -> Result<Observed, ShapeError> {
        let required = |value: &str, field: &'static str| {
            if value.is_empty() {
                Err(ShapeError::Live {
                    kind: KIND,
                    name: if cluster.name.is_empty() {
                        "(unnamed)".into()
                    } else {
                        cluster.name.clone()
                    },
                    field,
                })
            } else {
                Ok(value.to_string())
            }
        };
        let private_config = cluster.private_cluster_config.as_ref();
        let private = private_config.is_some_and(|p| p.enable_private_nodes);
        let master_ipv4_cidr = private_config
            .map(|p| p.master_ipv4_cidr_block.clone())
            .filter(|c| !c.is_empty() && private);
        // gcloud (since ~v500) sets them through `controlPlaneEndpointsConfig`, which GKE keeps in
        // step with the older `masterAuthorizedNetworksConfig`; read whichever is enabled.
        let legacy = cluster.master_authorized_networks_config.as_ref();
        let authorized_config = legacy.filter(|c| c.enabled).or_else(|| {
            cluster
                .control_plane_endpoints_config
                .as_ref()?
                .ip_endpoints_config
                .as_ref()?
                .authorized_networks_config
                .as_ref()
        });
        // None enabled: the control plane takes every address, no blocks to compare.
        let authorized_networks = authorized_config
            .filter(|c| c.enabled)
            .map(|c| {
                c.cidr_blocks
                    .iter()
                    .map(|b| AuthorizedNetwork {
                        cidr: b.cidr_block.clone(),
                        name: b.display_name.clone(),
                    })
                    .collect()
            })
            .unwrap_or_default();
        let network = cluster.network_config.as_ref();
        let ranges = cluster.ip_allocation_policy.as_ref();
        let addons = cluster.addons_config.as_ref();
        let spec = ClusterSpec {
            name: required(&cluster.name, "name")?,
            location: required(&cluster.location, "location")?,
            network: last(&required(&cluster.network, "network")?),
            subnetwork: last(&required(&cluster.subnetwork, "subnetwork")?),
            // A cluster without secondary range names uses GKE-managed ranges: none to compare.
            pods_range: ranges
                .map(|r| r.cluster_secondary_range_name.clone())
                .unwrap_or_default(),
            services_range: ranges
                .map(|r| r.services_secondary_range_name.clone())
                .unwrap_or_default(),
            datapath_provider: network
                .and_then(|n| n.datapath_provider.name())
                .unwrap_or("DATAPATH_PROVIDER_UNSPECIFIED")
                .to_string(),
            multi_networking: network.is_some_and(|n| n.enable_multi_networking),
            release_channel: cluster
                .release_channel
                .as_ref()
                .and_then(|c| c.channel.name())
                .unwrap_or("UNSPECIFIED")
                .to_string(),
            version: required(&cluster.current_master_version, "currentMasterVersion")?,
            private_nodes: private,
            master_ipv4_cidr,
            authorized_networks,
            labels: cluster
                .resource_labels
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
            filestore_csi: addons
                .and_then(|a| a.gcp_filestore_csi_driver_config.as_ref())
                .is_some_and(|c| c.enabled),
            gcsfuse_csi: addons
                .and_then(|a| a.gcs_fuse_csi_driver_config.as_ref())
                .is_some_and(|c| c.enabled),
            // Absent when Workload Identity is off.
            workload_pool: cluster
                .workload_identity_config
                .as_ref()
                .map(|w| w.workload_pool.clone())
                .unwrap_or_default(),
            bootstrap_pool: if cluster.node_pools.iter().any(|p| p.name == BOOTSTRAP_POOL) {
                BootstrapPool::Present
            } else {
                BootstrapPool::Removed
            },
            gpudirect_family: None,
            managed_gpu_networking: false,
            // Not in the cloud: the recorded value is put back ([`spec::keep_local`]).
            deletion_protection: false,
            maintenance_policy: Some(project_policy(cluster)),
        };
        let outputs = json!({
            "endpoint": cluster.endpoint,
            // Absent while the control plane is provisioning; what runs inside the cluster refuses
            // a record without it (`cloud::kube::cluster_outputs`).
            "ca_certificate": cluster.master_auth.as_ref().map(|a| a.cluster_ca_certificate.clone()).unwrap_or_default(),
            // Absent on a cluster without private nodes.
            "private_endpoint": private_config.map(|p| p.private_endpoint.clone()).unwrap_or_default(),
            "current_master_version": cluster.current_master_version,
            "current_node_version": cluster.current_node_version,
            "status": cluster.status.name().unwrap_or("STATUS_UNSPECIFIED"),
            "status_message": cluster.status_message,
            "self_link": cluster.self_link,
            "id": cluster.id,
            "location": cluster.location,
            "label_fingerprint": cluster.label_fingerprint,
            "maintenance_resource_version": cluster.maintenance_policy.as_ref().map(|p| p.resource_version.clone()).unwrap_or_default(),
            "node_pools": cluster.node_pools.iter().map(|p| p.name.clone()).collect::<Vec<_>>(),
        });
        Ok(Observed {
            spec: super::to_spec(&spec),
            outputs,
        })
    }
}

/// The live `maintenancePolicy` (absent: no window, no exclusion). A daily window (which a3ctl
/// never sets; gcloud's `--maintenance-window`) reads as a window repeating `FREQ=DAILY` from its
/// start time, so it differs from any recurring window the blueprint asks for.
fn project_policy(cluster: &Cluster) -> MaintenancePolicy {
    use google_cloud_container_v1::model::maintenance_window::Policy;
    use google_cloud_container_v1::model::time_window::Options;
    let text = |t: &Option<google_cloud_wkt::Timestamp>| -> Option<String> {
        t.as_ref()
            .and_then(|t| serde_json::to_value(t).ok())
            .and_then(|v| v.as_str().map(instant))
    };
    let Some(window) = cluster
        .maintenance_policy
        .as_ref()
        .and_then(|p| p.window.as_ref())
    else {
        return MaintenancePolicy::default();
    };
    let recurring = match &window.policy {
        Some(Policy::RecurringWindow(r)) => Some(RecurringWindow {
            start: r
                .window
                .as_ref()
                .and_then(|w| text(&w.start_time))
                .unwrap_or_default(),
            end: r
                .window
                .as_ref()
                .and_then(|w| text(&w.end_time))
                .unwrap_or_default(),
            recurrence: r.recurrence.clone(),
        }),
        Some(Policy::DailyMaintenanceWindow(d)) => Some(RecurringWindow {
            start: d.start_time.clone(),
            end: d.duration.clone(),
            recurrence: "FREQ=DAILY".into(),
        }),
        _ => None,
    };
    let exclusions = window
        .maintenance_exclusions
        .iter()
        .map(|(name, w)| {
            let options = match &w.options {
                Some(Options::MaintenanceExclusionOptions(o)) => Some(o),
                _ => None,
            };
            (
                name.clone(),
                Exclusion {
                    // GKE's default scope when none is given.
                    scope: options
                        .and_then(|o| o.scope.name())
                        .unwrap_or("NO_UPGRADES")
                        .to_string(),
                    start: text(&w.start_time),
                    end: text(&w.end_time),
                    until_end_of_support: options.and_then(|o| o.end_time_behavior.name())
                        == Some("UNTIL_END_OF_SUPPORT"),
                },
            )
        })
        .collect();
    MaintenancePolicy {
        window: recurring,
        exclusions,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn live() -> Cluster {
        serde_json::from_value(json!({
            "name": "a3mega",
            "location": "us-central1",
            "network": "projects/p/global/networks/a3mega-net",
            "subnetwork": "projects/p/regions/us-central1/subnetworks/a3mega-subnet",
            "currentMasterVersion": "1.33.5-gke.1080000",
            "ipAllocationPolicy": {"clusterSecondaryRangeName": "pods", "servicesSecondaryRangeName": "services"},
            "networkConfig": {"datapathProvider": "ADVANCED_DATAPATH", "enableMultiNetworking": true},
            "releaseChannel": {"channel": "REGULAR"},
            "resourceLabels": {"z": "1", "a3ctl-blueprint": "a3mega"},
            "controlPlaneEndpointsConfig": {"ipEndpointsConfig": {"authorizedNetworksConfig": {
                "enabled": true, "cidrBlocks": [{"cidrBlock": "10.0.0.0/8"}]}}},
            "addonsConfig": {"gcsFuseCsiDriverConfig": {"enabled": true}},
            "workloadIdentityConfig": {"workloadPool": "p.svc.id.goog"},
            "nodePools": [{"name": BOOTSTRAP_POOL}],
            "endpoint": "10.0.0.2",
            "status": "RUNNING",
        }))
        .unwrap()
    }

    #[test]
    fn the_live_cluster_projects_onto_the_spec() {
        let observed = ClusterSpec::project(&live()).unwrap();
        let spec: ClusterSpec = super::super::from_spec("cluster", &observed.spec).unwrap();
        assert_eq!(spec.network, "a3mega-net");
        assert_eq!(spec.subnetwork, "a3mega-subnet");
        assert_eq!(spec.datapath_provider, "ADVANCED_DATAPATH");
        assert_eq!(spec.release_channel, "REGULAR");
        assert_eq!(spec.master_ipv4_cidr, None);
        assert_eq!(
            spec.authorized_networks,
            [AuthorizedNetwork {
                cidr: "10.0.0.0/8".into(),
                name: String::new()
            }]
        );
        assert_eq!(spec.bootstrap_pool, BootstrapPool::Present);
        assert!(spec.gcsfuse_csi && !spec.filestore_csi);
        // Labels sorted, the never-read-back family left out of the JSON.
        assert_eq!(
            observed.spec["labels"].to_string(),
            r#"{"a3ctl-blueprint":"a3mega","z":"1"}"#
        );
        assert!(observed.spec.get("gpudirect_family").is_none());
        assert_eq!(observed.spec["bootstrap_pool"], "present");
        assert_eq!(observed.outputs["endpoint"], "10.0.0.2");
        assert_eq!(observed.outputs["status"], "RUNNING");
    }

    #[test]
    fn a_cluster_without_its_version_or_network_is_an_error() {
        let mut cluster = live();
        cluster.current_master_version.clear();
        assert_eq!(
            ClusterSpec::project(&cluster).unwrap_err(),
            ShapeError::Live {
                kind: KIND,
                name: "a3mega".into(),
                field: "currentMasterVersion"
            }
        );
        let mut cluster = live();
        cluster.network.clear();
        let err = ClusterSpec::project(&cluster).unwrap_err();
        assert_eq!(
            err.to_string(),
            "the GKE cluster `a3mega` the API returned has no `network`"
        );
    }

    #[test]
    fn a_live_policy_equal_in_meaning_is_no_difference() {
        let desired = json!({
            "window": {"start": "2026-01-03T02:00:00Z", "end": "2026-01-03T10:00:00Z", "recurrence": "FREQ=WEEKLY;BYDAY=SA,SU"},
            "exclusions": {
                "a3ctl-no-minor-or-node-upgrades": {"scope": "NO_MINOR_OR_NODE_UPGRADES", "until_end_of_support": true},
                "launch": {"scope": "NO_UPGRADES", "start": "2026-03-01T00:00:00Z", "end": "2026-03-08T00:00:00Z", "until_end_of_support": false},
            },
        });
        let mut cluster = live();
        cluster.maintenance_policy = serde_json::from_value(json!({
            "resourceVersion": "abc",
            "window": {
                "recurringWindow": {
                    "window": {"startTime": "2026-01-03T03:00:00+01:00", "endTime": "2026-01-03T10:00:00.000Z"},
                    "recurrence": "FREQ=WEEKLY;BYDAY=SA,SU",
                },
                "maintenanceExclusions": {
                    // GKE filled in the start (when it was set) and the end (end of support).
                    "a3ctl-no-minor-or-node-upgrades": {
                        "startTime": "2026-11-26T10:00:00Z", "endTime": "2027-10-01T00:00:00Z",
                        "maintenanceExclusionOptions": {"scope": "NO_MINOR_OR_NODE_UPGRADES", "endTimeBehavior": "UNTIL_END_OF_SUPPORT"},
                    },
                    // No options: GKE's default scope.
                    "launch": {"startTime": "2026-03-01T00:00:00Z", "endTime": "2026-03-08T00:00:00Z"},
                },
            },
        }))
        .unwrap();
        let observed = ClusterSpec::project(&cluster).unwrap();
        let live_policy = &observed.spec["maintenance_policy"];
        assert_eq!(live_policy["window"]["start"], "2026-01-03T02:00:00Z");
        assert_eq!(live_policy["exclusions"]["launch"]["scope"], "NO_UPGRADES");
        assert_eq!(observed.outputs["maintenance_resource_version"], "abc");
        assert!(policy_matches(&desired, live_policy));
        // What the blueprint fixes differs: a window moved by an hour, an exclusion's scope, a
        // missing or extra exclusion.
        let mut moved = desired.clone();
        moved["window"]["start"] = json!("2026-01-03T01:00:00Z");
        assert!(!policy_matches(&moved, live_policy));
        let mut scope = desired.clone();
        scope["exclusions"]["launch"]["scope"] = json!("NO_MINOR_UPGRADES");
        assert!(!policy_matches(&scope, live_policy));
        let mut fewer = desired.clone();
        fewer["exclusions"]
            .as_object_mut()
            .unwrap()
            .remove("launch");
        assert!(!policy_matches(&fewer, live_policy));
        let mut ends = desired.clone();
        ends["exclusions"]["launch"]["end"] = json!("2026-03-09T00:00:00Z");
        assert!(!policy_matches(&ends, live_policy));
        // A cluster without a policy reads as none, which the default exclusion is not.
        let bare = ClusterSpec::project(&live()).unwrap().spec["maintenance_policy"].clone();
        assert_eq!(bare, json!({"exclusions": {}}));
        assert!(!policy_matches(&desired, &bare));
        assert!(policy_matches(&json!({"exclusions": {}}), &bare));
    }
}
