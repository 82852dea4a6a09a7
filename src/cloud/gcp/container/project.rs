//! The live GKE objects (the client crate's typed `Cluster` and `NodePool`) read back onto
//! a3ctl's specs ([`ClusterSpec`], [`NodePoolSpec`]) plus their outputs: the vocabulary in
//! `resource/` does not name the client crate (tests/it/layers.rs), so the projection lives with
//! the adapter.

use crate::resource::Observed;
use crate::resource::kinds::ShapeError;
use crate::resource::kinds::cluster::{
    AuthorizedNetwork, BOOTSTRAP_POOL, BootstrapPool, ClusterSpec, Exclusion, MaintenancePolicy,
    RecurringWindow, instant,
};
use crate::resource::kinds::node_pool::{
    Accelerator, AdditionalNetwork, BlueGreenSettings, NodePoolSpec, Reservation, Taint,
    UpgradeSettings, default_account,
};
use crate::resource::kinds::to_spec;
use google_cloud_container_v1::model::{Cluster, NodePool};
use serde_json::json;

/// What a cluster that comes back without a required field is called in the error.
const CLUSTER: &str = "GKE cluster";
/// What a node pool that comes back without a required field is called in the error.
const NODE_POOL: &str = "GKE node pool";

/// The last segment of a resource name or URL.
fn last(value: &str) -> String {
    value.rsplit('/').next().unwrap_or(value).to_string()
}

/// The live cluster as a spec plus outputs. A cluster without a name, location, network,
/// subnetwork or control-plane version is an error: GKE fills them in from the moment it
/// accepts the create.
// `currentNodeVersion` and `statusMessage` are deprecated but GKE still fills them in.
#[allow(deprecated)]
pub(super) fn observed_cluster(cluster: &Cluster) -> Result<Observed, ShapeError> {
    let required = |value: &str, field: &'static str| {
        if value.is_empty() {
            Err(ShapeError::Live {
                kind: CLUSTER,
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
        spec: to_spec(&spec),
        outputs,
    })
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

/// The live pool of cluster `cluster` in `location` (project `project`) as a spec plus
/// outputs; `nodes_per_zone` is the size read from the pool's instance groups, `None` while it
/// has none (then `initialNodeCount`, the size its create asked for). A pool
/// without its node config or machine type is an error: GKE always returns them.
// `statusMessage` is deprecated in favour of `conditions` but GKE still fills it in.
#[allow(deprecated)]
pub(super) fn observed_pool(
    project: &str,
    cluster: &str,
    location: &str,
    pool: &NodePool,
    nodes_per_zone: Option<u64>,
) -> Result<Observed, ShapeError> {
    let missing = |field| ShapeError::Live {
        kind: NODE_POOL,
        name: pool.name.clone(),
        field,
    };
    let config = pool.config.as_ref().ok_or_else(|| missing("config"))?;
    if config.machine_type.is_empty() {
        return Err(missing("config.machineType"));
    }
    let accelerator = config.accelerators.first().map(|a| Accelerator {
        kind: a.accelerator_type.clone(),
        count: a.accelerator_count,
        driver: a
            .gpu_driver_installation_config
            .as_ref()
            .and_then(|d| d.gpu_driver_version.as_ref())
            .and_then(|v| v.name())
            .unwrap_or("GPU_DRIVER_VERSION_UNSPECIFIED")
            .to_string(),
    });
    let additional_networks = pool
        .network_config
        .iter()
        .flat_map(|n| n.additional_node_network_configs.iter())
        .map(|n| AdditionalNetwork {
            network: last(&n.network),
            subnetwork: last(&n.subnetwork),
        })
        .collect();
    let placement_policy = pool
        .placement_policy
        .as_ref()
        .filter(|p| p.r#type.name() == Some("COMPACT") && !p.policy_name.is_empty())
        .map(|p| last(&p.policy_name));
    let reservation = config
        .reservation_affinity
        .as_ref()
        .filter(|a| a.consume_reservation_type.name() == Some("SPECIFIC_RESERVATION"))
        .and_then(|a| a.values.first())
        .map(|v| Reservation::from_value(project, v));
    let capacity = if reservation.is_some() {
        "reservation"
    } else if config.spot {
        "spot"
    } else if config.flex_start == Some(true) {
        "flex-start"
    } else {
        "on-demand"
    };
    let management = pool.management.as_ref();
    let spec = NodePoolSpec {
        cluster: cluster.to_string(),
        location: location.to_string(),
        name: pool.name.clone(),
        machine_type: config.machine_type.clone(),
        locations: pool.locations.clone(),
        node_count: nodes_per_zone.unwrap_or(pool.initial_node_count.max(0) as u64),
        accelerator,
        additional_networks,
        placement_policy,
        reservation,
        capacity: capacity.into(),
        local_ssd_count: config
            .ephemeral_storage_local_ssd_config
            .as_ref()
            .map_or(0, |c| c.local_ssd_count.max(0) as u64),
        labels: config
            .resource_labels
            .iter()
            .filter(|(k, _)| !k.starts_with("goog-gke-"))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect(),
        taints: config
            .taints
            .iter()
            .map(|t| Taint {
                key: t.key.clone(),
                value: t.value.clone(),
                effect: t.effect.name().unwrap_or("EFFECT_UNSPECIFIED").to_string(),
            })
            .collect(),
        gvnic: config.gvnic.as_ref().is_some_and(|g| g.enabled),
        image_type: config.image_type.clone(),
        disk_size_gb: config.disk_size_gb.into(),
        auto_repair: management.is_some_and(|m| m.auto_repair),
        auto_upgrade: management.is_some_and(|m| m.auto_upgrade),
        service_account: match config.service_account.as_str() {
            "" => default_account(),
            email => email.to_string(),
        },
        upgrade_settings: Some(project_upgrade(pool)),
        version: pool.version.clone(),
        accelerator_network_profile: pool
            .network_config
            .as_ref()
            .map(|n| n.accelerator_network_profile.clone())
            .filter(|p| !p.is_empty()),
        node_labels: config
            .labels
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect(),
    };
    let outputs = json!({
        "status": pool.status.name().unwrap_or("STATUS_UNSPECIFIED"),
        "status_message": pool.status_message,
        "self_link": pool.self_link,
        "version": pool.version,
        "initial_node_count": pool.initial_node_count,
        "instance_group_urls": pool.instance_group_urls,
    });
    Ok(Observed {
        spec: to_spec(&spec),
        outputs,
    })
}

/// The live `upgradeSettings`; absent fields are GKE's defaults (surge, 1 extra node, 0 down).
fn project_upgrade(pool: &NodePool) -> UpgradeSettings {
    use google_cloud_container_v1::model::blue_green_settings::RolloutPolicy;
    use google_cloud_container_v1::model::blue_green_settings::standard_rollout_policy::UpdateBatchSize;
    let Some(settings) = pool.upgrade_settings.as_ref() else {
        return UpgradeSettings {
            strategy: "SURGE".into(),
            max_surge: 1,
            max_unavailable: 0,
            blue_green: None,
        };
    };
    let strategy = match settings.strategy.as_ref().and_then(|s| s.name()) {
        Some("BLUE_GREEN") => "BLUE_GREEN",
        _ => "SURGE",
    };
    let seconds = |d: &Option<google_cloud_wkt::Duration>| {
        d.as_ref().map_or(0, |d| d.seconds().max(0) as u64)
    };
    let blue_green = settings.blue_green_settings.as_ref().map(|bg| {
        let standard = match &bg.rollout_policy {
            Some(RolloutPolicy::StandardRolloutPolicy(p)) => Some(p),
            _ => None,
        };
        let (batch_node_count, batch_percent) = match standard
            .and_then(|p| p.update_batch_size.as_ref())
        {
            Some(UpdateBatchSize::BatchNodeCount(n)) => (Some((*n).max(0) as u32), None),
            Some(UpdateBatchSize::BatchPercentage(p)) => (None, Some((p * 100.0).round() as u32)),
            _ => (None, None),
        };
        BlueGreenSettings {
            batch_node_count,
            batch_percent,
            batch_soak_seconds: standard.map_or(0, |p| seconds(&p.batch_soak_duration)),
            pool_soak_seconds: seconds(&bg.node_pool_soak_duration),
        }
    });
    UpgradeSettings {
        strategy: strategy.into(),
        max_surge: settings.max_surge.max(0) as u32,
        max_unavailable: settings.max_unavailable.max(0) as u32,
        blue_green,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resource::kinds::cluster::policy_matches;
    use crate::resource::kinds::from_spec;
    use crate::resource::kinds::node_pool::upgrade_matches;

    fn live_cluster() -> Cluster {
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
        let observed = observed_cluster(&live_cluster()).unwrap();
        let spec: ClusterSpec = from_spec("cluster", &observed.spec).unwrap();
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
        let mut cluster = live_cluster();
        cluster.current_master_version.clear();
        assert_eq!(
            observed_cluster(&cluster).unwrap_err(),
            ShapeError::Live {
                kind: CLUSTER,
                name: "a3mega".into(),
                field: "currentMasterVersion"
            }
        );
        let mut cluster = live_cluster();
        cluster.network.clear();
        let err = observed_cluster(&cluster).unwrap_err();
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
        let mut cluster = live_cluster();
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
        let observed = observed_cluster(&cluster).unwrap();
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
        let bare = observed_cluster(&live_cluster()).unwrap().spec["maintenance_policy"].clone();
        assert_eq!(bare, json!({"exclusions": {}}));
        assert!(!policy_matches(&desired, &bare));
        assert!(policy_matches(&json!({"exclusions": {}}), &bare));
    }

    fn live_pool() -> NodePool {
        serde_json::from_value(json!({
            "name": "a3mega",
            "locations": ["us-central1-a"],
            "initialNodeCount": 2,
            "config": {
                "machineType": "a3-megagpu-8g",
                "imageType": "COS_CONTAINERD",
                "diskSizeGb": 200,
                "accelerators": [{"acceleratorType": "nvidia-h100-mega-80gb", "acceleratorCount": "8",
                    "gpuDriverInstallationConfig": {"gpuDriverVersion": "LATEST"}}],
                "reservationAffinity": {"consumeReservationType": "SPECIFIC_RESERVATION",
                    "key": "compute.googleapis.com/reservation-name",
                    "values": ["projects/p/reservations/res"]},
                "resourceLabels": {"goog-gke-node-pool-provisioning-model": "reservation", "a3ctl-blueprint": "a3mega"},
                "ephemeralStorageLocalSsdConfig": {"localSsdCount": 16},
                "taints": [{"key": "nvidia.com/gpu", "value": "present", "effect": "NO_SCHEDULE"}],
            },
            "networkConfig": {"additionalNodeNetworkConfigs": [
                {"network": "projects/p/global/networks/n0", "subnetwork": "projects/p/regions/r/subnetworks/s0"}]},
            "placementPolicy": {"type": "COMPACT", "policyName": "projects/p/regions/r/resourcePolicies/pp"},
            "status": "RUNNING",
        }))
        .unwrap()
    }

    #[test]
    fn the_live_pool_projects_onto_the_spec() {
        let observed = observed_pool("p", "c", "r", &live_pool(), Some(4)).unwrap();
        let spec: NodePoolSpec = from_spec("node pool", &observed.spec).unwrap();
        assert_eq!(spec.node_count, 4);
        assert_eq!(spec.capacity, "reservation");
        assert_eq!(
            spec.reservation,
            Some(Reservation {
                name: "res".into(),
                block: None
            })
        );
        assert_eq!(spec.placement_policy.as_deref(), Some("pp"));
        assert_eq!(spec.additional_networks[0].subnetwork, "s0");
        assert_eq!(spec.accelerator.as_ref().unwrap().driver, "LATEST");
        assert_eq!(spec.local_ssd_count, 16);
        assert_eq!(spec.taints[0].effect, "NO_SCHEDULE");
        assert_eq!(spec.labels.keys().collect::<Vec<_>>(), ["a3ctl-blueprint"]);
        // Without instance groups yet, the size GKE was asked for.
        let observed = observed_pool("p", "c", "r", &live_pool(), None).unwrap();
        assert_eq!(observed.spec["node_count"], 2);
    }

    #[test]
    fn a_pool_without_its_config_is_an_error() {
        let mut pool = live_pool();
        pool.config = None;
        assert_eq!(
            observed_pool("p", "c", "r", &pool, None)
                .unwrap_err()
                .to_string(),
            "the GKE node pool `a3mega` the API returned has no `config`"
        );
    }

    #[test]
    fn upgrade_settings_project_and_compare_by_strategy() {
        // Absent: GKE's default surge.
        let observed = observed_pool("p", "c", "r", &live_pool(), None).unwrap();
        assert_eq!(
            observed.spec["upgrade_settings"],
            json!({"strategy": "SURGE", "max_surge": 1, "max_unavailable": 0})
        );
        let mut pool = live_pool();
        pool.upgrade_settings = serde_json::from_value(json!({
            "maxUnavailable": 1, "strategy": "BLUE_GREEN",
            "blueGreenSettings": {"standardRolloutPolicy": {"batchPercentage": 0.25, "batchSoakDuration": "600s"}, "nodePoolSoakDuration": "3600s"},
        }))
        .unwrap();
        let live_settings =
            observed_pool("p", "c", "r", &pool, None).unwrap().spec["upgrade_settings"].clone();
        let desired = json!({"strategy": "BLUE_GREEN", "max_surge": 0, "max_unavailable": 1,
            "blue_green": {"batch_percent": 25, "batch_soak_seconds": 600, "pool_soak_seconds": 3600}});
        assert!(upgrade_matches(&desired, &live_settings), "{live_settings}");
        // Surge numbers do not matter to blue-green, the batches do.
        let mut other = desired.clone();
        other["max_surge"] = json!(3);
        assert!(upgrade_matches(&other, &live_settings));
        other["blue_green"]["batch_soak_seconds"] = json!(0);
        assert!(!upgrade_matches(&other, &live_settings));
        let surge = json!({"strategy": "SURGE", "max_surge": 0, "max_unavailable": 1});
        assert!(!upgrade_matches(&surge, &live_settings));
        assert!(upgrade_matches(
            &surge,
            &json!({"strategy": "SURGE", "max_surge": 0, "max_unavailable": 1, "blue_green": {"batch_soak_seconds": 1, "pool_soak_seconds": 1}})
        ));
        let settings: UpgradeSettings = serde_json::from_value(surge).unwrap();
        assert_eq!(settings.batches(4), (1, 4));
        let bg: UpgradeSettings = serde_json::from_value(desired).unwrap();
        assert_eq!(bg.batches(32), (8, 4));
    }
}
