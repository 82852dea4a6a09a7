//! The on-demand GPU quota of a family in a region (`gpu_family_quota`, id
//! `projects/P/regions/R/gpuFamilies/F`), read only: the limit through the Cloud Quotas API
//! (`quotaInfos.get` of `GPUS-PER-GPU-FAMILY-per-project-region` with
//! `google-cloud-api-cloudquotas-v1`,
//! <https://cloud.google.com/docs/quotas/reference/rest/v1/projects.locations.services.quotaInfos/get>),
//! the usage counted from the project's reservations (Compute `reservations.aggregatedList`), GKE
//! node pools (`projects.locations.clusters.list` at location `-`) and the managed instance groups
//! behind them (Compute `instanceGroupManagers.aggregatedList`: a pool's current size is its groups'
//! `targetSize`), with the region's preemptible limit (`regions.get`) for Spot pools, since Google
//! serves this usage only through Cloud Monitoring. [`count`] says what is
//! counted. Everything is read and counted as the client crates' typed models: `to_json` of a GKE
//! model writes its enums as numbers, so no JSON of one is compared with an enum's name.
//!
//! The on-demand H100, H100 Mega, H200 and B200 quotas exist only there: Compute's legacy
//! `Quota.metric` list (regions.get) has no on-demand row for them, and Compute names the quota
//! `GPUS_PER_GPU_FAMILY` when an insert exceeds it
//! (<https://cloud.google.com/compute/resource-usage#gpu_quota>).

use super::compute::found;
use super::{GcpConfig, classify_gax};
use crate::cloud::{CloudError, CloudResult, ErrorClass, Provider, ReadOnly};
use crate::resource::Observed;
use crate::resource::kinds::quotas::{
    GPU_FAMILY_QUOTA_ID, GpuFamilyQuotaSpec, any_affinity_vms_in_reservations, built_in_gpus,
    gpu_family, reservation_holds_quota, spot_counts_as_standard,
};
use google_cloud_api_cloudquotas_v1::client::CloudQuotas;
use google_cloud_compute_v1::client::{InstanceGroupManagers, Regions, Reservations};
use google_cloud_compute_v1::model::{InstanceGroupManager, Reservation};
use google_cloud_container_v1::client::ClusterManager;
use google_cloud_container_v1::model::Cluster;
use google_cloud_gax::paginator::Paginator as _;
use serde_json::Value;
use std::collections::BTreeMap;
use std::sync::Arc;

struct Clients {
    quotas: CloudQuotas,
    reservations: Reservations,
    groups: InstanceGroupManagers,
    regions: Regions,
    clusters: ClusterManager,
}

/// The reader of `gpu_family_quota`.
pub async fn adapter(config: &GcpConfig) -> CloudResult<Arc<dyn Provider>> {
    let creds = config.credentials()?;
    let clients = Arc::new(Clients {
        quotas: super::client!(
            CloudQuotas,
            creds.clone(),
            &config.endpoints.cloudquotas,
            "Cloud Quotas"
        ),
        reservations: super::client!(
            Reservations,
            creds.clone(),
            &config.endpoints.compute,
            "Compute Engine"
        ),
        groups: super::client!(
            InstanceGroupManagers,
            creds.clone(),
            &config.endpoints.compute,
            "Compute Engine"
        ),
        regions: super::client!(
            Regions,
            creds.clone(),
            &config.endpoints.compute,
            "Compute Engine"
        ),
        clusters: super::client!(ClusterManager, creds, &config.endpoints.container, "GKE"),
    });
    Ok(Arc::new(ReadOnly {
        read: Box::new(move |target| {
            let clients = clients.clone();
            Box::pin(async move { read(&clients, &target.id).await })
        }),
        why: "a3ctl does not change quotas",
        hint: "ask for more quota with `gcloud beta quotas preferences create` or in the console (IAM & Admin > Quotas)",
    }))
}

/// `projects/P/regions/R/gpuFamilies/F` → `(P, R, F)`.
fn parse(id: &str) -> CloudResult<(&str, &str, &str)> {
    match id.split('/').collect::<Vec<_>>().as_slice() {
        ["projects", p, "regions", r, "gpuFamilies", f] => Ok((p, r, f)),
        _ => Err(CloudError::new(
            ErrorClass::Invalid,
            format!("`{id}` is not a GPU family quota (projects/P/regions/R/gpuFamilies/F)"),
        )),
    }
}

async fn read(clients: &Clients, id: &str) -> CloudResult<Option<Observed>> {
    let (project, region, family) = parse(id)?;
    let name = format!(
        "projects/{project}/locations/global/services/compute.googleapis.com/quotaInfos/{GPU_FAMILY_QUOTA_ID}"
    );
    let info = found(clients.quotas.get_quota_info().set_name(name).send().await)?;
    let (reservations, clusters, groups, preemptible_limit) = futures_util::future::join4(
        reservations(clients, project),
        clusters(clients, project),
        groups(clients, project),
        preemptible_limit(clients, project, region, family),
    )
    .await;
    let inputs = GpuFamilyInputs {
        info,
        reservations: reservations?,
        clusters: clusters?,
        groups: groups?,
        preemptible_limit: preemptible_limit?,
    };
    let spec = count(region, family, &inputs);
    Ok(Some(Observed {
        spec: crate::resource::kinds::to_spec(&spec),
        outputs: Value::Null,
    }))
}

/// Every reservation of the project, in any zone (every page, through the crate's paginator).
async fn reservations(clients: &Clients, project: &str) -> CloudResult<Vec<Reservation>> {
    let mut pages = clients
        .reservations
        .aggregated_list()
        .set_project(project)
        .by_page();
    let mut out = Vec::new();
    while let Some(page) = pages.next().await {
        let page = page.map_err(|e| classify_gax(&e))?;
        out.extend(page.items.into_values().flat_map(|s| s.reservations));
    }
    Ok(out)
}

/// Every zonal managed instance group of the project (every page): those of GKE node pools among
/// them.
async fn groups(clients: &Clients, project: &str) -> CloudResult<Vec<InstanceGroupManager>> {
    let mut pages = clients
        .groups
        .aggregated_list()
        .set_project(project)
        .by_page();
    let mut out = Vec::new();
    while let Some(page) = pages.next().await {
        let page = page.map_err(|e| classify_gax(&e))?;
        out.extend(
            page.items
                .into_values()
                .flat_map(|s| s.instance_group_managers),
        );
    }
    Ok(out)
}

/// The region's `PREEMPTIBLE_<FAMILY>_GPUS` limit, if the region lists the metric.
async fn preemptible_limit(
    clients: &Clients,
    project: &str,
    region: &str,
    family: &str,
) -> CloudResult<Option<f64>> {
    let metric = format!("PREEMPTIBLE_{family}_GPUS");
    let Some(region) = found(
        clients
            .regions
            .get()
            .set_project(project)
            .set_region(region)
            .send()
            .await,
    )?
    else {
        return Ok(None);
    };
    Ok(region
        .quotas
        .iter()
        .find(|q| q.metric.as_ref().and_then(|m| m.name()) == Some(metric.as_str()))
        .and_then(|q| q.limit))
}

/// Every GKE cluster of the project, in any location, with its node pools.
async fn clusters(clients: &Clients, project: &str) -> CloudResult<Vec<Cluster>> {
    let answer = clients
        .clusters
        .list_clusters()
        .set_parent(format!("projects/{project}/locations/-"))
        .send()
        .await
        .map_err(|e| classify_gax(&e))?;
    Ok(answer.clusters)
}

/// What the project has that the family quota's usage is counted from, as the client crates'
/// typed models (never their JSON: `to_json` of a GKE model writes its enums as numbers, so
/// `consumeReservationType` reads `3`, not `"SPECIFIC_RESERVATION"`).
#[derive(Debug, Clone, Default)]
pub struct GpuFamilyInputs {
    /// The Cloud Quotas `QuotaInfo` of `GPUS-PER-GPU-FAMILY-per-project-region` (`None`: 404).
    pub info: Option<google_cloud_api_cloudquotas_v1::model::QuotaInfo>,
    /// The project's Compute reservations, any zone.
    pub reservations: Vec<google_cloud_compute_v1::model::Reservation>,
    /// The project's GKE clusters, any location, with their node pools.
    pub clusters: Vec<google_cloud_container_v1::model::Cluster>,
    /// The project's zonal managed instance groups, any zone: the groups behind the pools'
    /// `instanceGroupUrls`.
    pub groups: Vec<google_cloud_compute_v1::model::InstanceGroupManager>,
    /// The region's `PREEMPTIBLE_<FAMILY>_GPUS` limit (`None`: the region lists no such metric).
    pub preemptible_limit: Option<f64>,
}

/// The family's quota view from its parts. The limit is that of the first `dimensionsInfos` entry (Google
/// orders them from most to least specific) whose dimensions all match the region and family.
///
/// The usage, in GPUs of the family in the region:
/// - a reservation holds its `count` VMs' GPUs once, whether or not anything runs in it
///   ([`reservation_holds_quota`]); the pools that consume it add nothing: `SPECIFIC_RESERVATION`
///   pools, and `ANY_RESERVATION` pools as far as they land in open reservations
///   ([`any_affinity_vms_in_reservations`]);
/// - every other pool counts its current VMs times its GPUs per VM. A pool's current size is
///   its instance groups': `targetSize` summed over its `instanceGroupUrls`, as
///   terraform-provider-google reads a node pool's `node_count` (`flattenNodePool` in
///   `google/services/container/resource_container_node_pool.go`: "Node pools don't expose the
///   current node count in their API, so read the instance groups instead"; a URL without a
///   group is stale and skipped), plus the VMs a shrink is still deleting
///   (`currentActions.deleting`), which hold quota until they are gone. `initialNodeCount`
///   is never used: `setSize` does not change it;
/// - flex-start pools count against preemptible quota, not this one ("You must request
///   preemptible quota", AI Hypercomputer "Capacity overview"); Spot and preemptible pools
///   too, unless the project has no preemptible quota in the region
///   ([`spot_counts_as_standard`]).
pub fn count(region: &str, family: &str, inputs: &GpuFamilyInputs) -> GpuFamilyQuotaSpec {
    use google_cloud_container_v1::model::reservation_affinity::Type;
    let limit = inputs.info.as_ref().and_then(|info| {
        info.dimensions_infos
            .iter()
            .find(|d| {
                d.dimensions.iter().all(|(k, v)| match k.as_str() {
                    "region" => v == region,
                    "gpu_family" => v == family,
                    _ => false,
                })
            })
            .and_then(|d| u64::try_from(d.details.as_ref()?.value).ok())
    });
    let last = |s: &str| s.rsplit('/').next().unwrap_or(s).to_string();
    let in_region = |zone: &str| {
        let zone = last(zone);
        zone.rsplit_once('-').is_some_and(|(r, _)| r == region)
    };
    // GPUs of the family per VM: those listed, else the machine type's own.
    let of_family = |machine: &str, listed: Option<(String, u64)>| -> u64 {
        let machine = last(machine);
        let gpus = listed
            .filter(|(_, n)| *n > 0)
            .or_else(|| built_in_gpus(&machine).map(|(k, n)| (k.to_string(), n)));
        match gpus {
            Some((kind, n)) if gpu_family(&last(&kind)) == family => n,
            _ => 0,
        }
    };
    let mut reserved = 0;
    // Open reservations' VMs in use, by (zone, machine type).
    let mut open_in_use: BTreeMap<(String, String), u64> = BTreeMap::new();
    for r in &inputs.reservations {
        let zone = last(r.zone.as_deref().unwrap_or(""));
        if !in_region(&zone) || !reservation_holds_quota(None) {
            continue;
        }
        let Some(specific) = &r.specific_reservation else {
            continue;
        };
        let properties = specific.instance_properties.as_ref();
        let machine = properties
            .and_then(|p| p.machine_type.as_deref())
            .unwrap_or("");
        let listed = properties
            .and_then(|p| p.guest_accelerators.first())
            .and_then(|a| {
                Some((
                    a.accelerator_type.clone()?,
                    u64::try_from(a.accelerator_count?).ok()?,
                ))
            });
        let per_vm = of_family(machine, listed);
        let count = specific
            .count
            .and_then(|c| u64::try_from(c).ok())
            .unwrap_or(0);
        reserved += per_vm * count;
        if per_vm > 0 && r.specific_reservation_required != Some(true) {
            let in_use = specific
                .in_use_count
                .and_then(|c| u64::try_from(c).ok())
                .unwrap_or(0);
            *open_in_use.entry((zone, last(machine))).or_default() += in_use;
        }
    }
    // Each group's VMs, by its relative path (`projects/P/zones/Z/instanceGroupManagers/N`).
    let relative = |url: &str| -> String {
        url.find("projects/")
            .map_or(url, |at| &url[at..])
            .to_string()
    };
    let groups: BTreeMap<String, u64> = inputs
        .groups
        .iter()
        .filter_map(|g| {
            let target = u64::try_from(g.target_size?).ok()?;
            let deleting = g
                .current_actions
                .as_ref()
                .and_then(|a| a.deleting)
                .and_then(|d| u64::try_from(d).ok())
                .unwrap_or(0);
            Some((relative(g.self_link.as_deref()?), target + deleting))
        })
        .collect();
    let standard_spot = spot_counts_as_standard(inputs.preemptible_limit);
    let mut pools = 0;
    // ANY_RESERVATION pools' VMs, by (zone, machine type), and their GPUs per VM.
    let mut any_affinity: BTreeMap<(String, String), (u64, u64)> = BTreeMap::new();
    for cluster in &inputs.clusters {
        for pool in &cluster.node_pools {
            let Some(config) = &pool.config else { continue };
            if config.flex_start == Some(true) {
                continue;
            }
            if (config.spot || config.preemptible) && !standard_spot {
                continue;
            }
            let affinity = config
                .reservation_affinity
                .as_ref()
                .map(|a| &a.consume_reservation_type);
            if affinity == Some(&Type::SpecificReservation) {
                continue;
            }
            let listed = config.accelerators.first().and_then(|a| {
                Some((
                    a.accelerator_type.clone(),
                    u64::try_from(a.accelerator_count).ok()?,
                ))
            });
            let per_vm = of_family(&config.machine_type, listed);
            if per_vm == 0 {
                continue;
            }
            for url in &pool.instance_group_urls {
                let path = relative(url);
                // `projects/P/zones/Z/instanceGroupManagers/N`.
                let zone = path.split('/').nth(3).unwrap_or("").to_string();
                if !in_region(&zone) {
                    continue;
                }
                // A URL without a group is stale: nothing runs there.
                let Some(vms) = groups.get(&path) else {
                    continue;
                };
                let spot = config.spot || config.preemptible;
                if affinity == Some(&Type::AnyReservation) && !spot {
                    let entry = any_affinity
                        .entry((zone, last(&config.machine_type)))
                        .or_default();
                    entry.0 += vms;
                    entry.1 = per_vm;
                }
                pools += per_vm * vms;
            }
        }
    }
    for (key, (vms, per_vm)) in any_affinity {
        let in_use = open_in_use.get(&key).copied().unwrap_or(0);
        pools -= per_vm * any_affinity_vms_in_reservations(vms, in_use);
    }
    GpuFamilyQuotaSpec {
        region: region.to_string(),
        family: family.to_string(),
        limit,
        usage: reserved + pools,
        reserved,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn model<T: serde::de::DeserializeOwned>(v: Value) -> T {
        serde_json::from_value(v).expect("the crate reads it")
    }

    /// A node pool as the GKE crate writes it (`to_json` of its model): enums as numbers, the
    /// reservation affinity `3` for `SPECIFIC_RESERVATION`, `2` for `ANY_RESERVATION`.
    fn pool(name: &str, zones: &[&str], config: Value) -> Value {
        let urls: Vec<String> = zones
            .iter()
            .map(|z| {
                format!(
                    "https://www.googleapis.com/compute/v1/projects/p/zones/{z}/instanceGroupManagers/gke-c-{name}-0000-grp"
                )
            })
            .collect();
        json!({"name": name, "initialNodeCount": 1, "locations": zones, "config": config,
               "instanceGroupUrls": urls, "status": 2})
    }

    fn group(name: &str, zone: &str, target: i32, deleting: i32) -> Value {
        json!({"selfLink": format!(
                   "https://www.googleapis.com/compute/v1/projects/p/zones/{zone}/instanceGroupManagers/gke-c-{name}-0000-grp"),
               "targetSize": target, "currentActions": {"deleting": deleting}})
    }

    #[test]
    fn the_gke_crate_writes_enums_as_numbers() {
        // The trap the usage count fell into: a string comparison never matches.
        let affinity: google_cloud_container_v1::model::ReservationAffinity =
            model(json!({"consumeReservationType": "SPECIFIC_RESERVATION"}));
        assert_eq!(
            serde_json::to_value(&affinity).unwrap()["consumeReservationType"],
            json!(3)
        );
    }

    #[test]
    fn gpu_family_usage_counts_reservations_once_and_pools_from_their_groups() {
        let info = json!({"dimensionsInfos": [
            {"dimensions": {"region": "us-central1", "gpu_family": "NVIDIA_H100_MEGA"},
             "details": {"value": "320"}},
            {"dimensions": {"region": "us-central1"}, "details": {"value": "16"}},
            {"details": {"value": "0"}}]});
        let reservations = vec![
            // 32 VMs of 8 built-in GPUs, in the region, specifically targeted: 256.
            json!({"zone": "https://x/compute/v1/projects/p/zones/us-central1-a",
                   "specificReservationRequired": true,
                   "specificReservation": {"count": "32", "inUseCount": "32",
                     "instanceProperties": {"machineType": "a3-megagpu-8g"}}}),
            // An open one of 2 VMs, both in use (by the ANY pool below): 16.
            json!({"zone": "us-central1-c", "specificReservationRequired": false,
                   "specificReservation": {"count": "2", "inUseCount": "2",
                     "instanceProperties": {"machineType": "a3-megagpu-8g"}}}),
            // Another region, another family: nothing.
            json!({"zone": "us-east5-a", "specificReservation": {"count": "9",
                     "instanceProperties": {"machineType": "a3-megagpu-8g"}}}),
            json!({"zone": "us-central1-b", "specificReservation": {"count": "2",
                     "instanceProperties": {"machineType": "a3-highgpu-8g"}}}),
        ];
        let mega = json!({"machineType": "a3-megagpu-8g", "accelerators": [
            {"acceleratorType": "nvidia-h100-mega-80gb", "acceleratorCount": "8"}]});
        let with = |extra: Value| {
            let mut config = mega.clone();
            for (k, v) in extra.as_object().unwrap() {
                config[k] = v.clone();
            }
            config
        };
        let specific = with(json!({"reservationAffinity": {"consumeReservationType": 3,
            "key": "compute.googleapis.com/reservation-name", "values": ["a3mega-reservation"]}}));
        let clusters = vec![json!({"name": "c", "nodePools": [
            // 32 nodes in the reservation: counted there (256), not again.
            pool("reserved", &["us-central1-a"], specific),
            // On demand, 2 zones, resized from 1 to 4 and 2 per zone (initialNodeCount stays 1):
            // (4 + 2) × 8 = 48; one zone still deleting 1 VM of a shrink: + 8.
            pool("ondemand", &["us-central1-a", "us-central1-b"], mega.clone()),
            // ANY_RESERVATION, 3 VMs, 2 of them in the open reservation: 1 × 8.
            pool("any", &["us-central1-c"], with(json!({"reservationAffinity": {"consumeReservationType": 2}}))),
            // Spot and flex-start: the preemptible quota.
            pool("spot", &["us-central1-a"], with(json!({"spot": true}))),
            pool("flex", &["us-central1-a"], with(json!({"flexStart": true}))),
            // No GPUs of the family.
            pool("cpu", &["us-central1-a"], json!({"machineType": "e2-standard-8"})),
            // A stale URL: no group.
            pool("gone", &["us-central1-f"], mega.clone()),
        ]})];
        let groups = vec![
            group("reserved", "us-central1-a", 32, 0),
            group("ondemand", "us-central1-a", 4, 0),
            group("ondemand", "us-central1-b", 2, 1),
            group("any", "us-central1-c", 3, 0),
            group("spot", "us-central1-a", 5, 0),
            group("flex", "us-central1-a", 5, 0),
            group("cpu", "us-central1-a", 3, 0),
        ];
        let mut inputs = GpuFamilyInputs {
            info: Some(model(info)),
            reservations: reservations.into_iter().map(model).collect(),
            clusters: clusters.into_iter().map(model).collect(),
            groups: groups.into_iter().map(model).collect(),
            preemptible_limit: Some(128.0),
        };
        let spec = count("us-central1", "NVIDIA_H100_MEGA", &inputs);
        assert_eq!(
            (spec.limit, spec.usage, spec.reserved),
            (Some(320), 256 + 16 + 48 + 8 + 8, 272)
        );
        assert_eq!(spec.headroom(), Some(0));
        // Without preemptible quota, the Spot pool counts here (flex-start still does not).
        inputs.preemptible_limit = Some(0.0);
        let spec = count("us-central1", "NVIDIA_H100_MEGA", &inputs);
        assert_eq!(spec.usage, 336 + 40);
        // The region's entry, then the default.
        let h100 = count("us-central1", "NVIDIA_H100", &inputs);
        assert_eq!((h100.limit, h100.usage), (Some(16), 16));
        let elsewhere = count("europe-west4", "NVIDIA_H100", &inputs);
        assert_eq!((elsewhere.limit, elsewhere.usage), (Some(0), 0));
        let none = count("r", "F", &GpuFamilyInputs::default());
        assert_eq!(none.limit, None);
    }

    #[test]
    fn ids_parse() {
        assert_eq!(
            parse("projects/p/regions/us-central1/gpuFamilies/NVIDIA_H100").unwrap(),
            ("p", "us-central1", "NVIDIA_H100")
        );
        assert!(
            parse("projects/p/regions/us-central1")
                .unwrap_err()
                .message
                .contains("not a GPU family quota")
        );
    }
}
