//! Quotas where Compute keeps them, read only: a region's (`regions.get`,
//! <https://cloud.google.com/compute/docs/reference/rest/v1/regions/get>) and the project's
//! (`projects.get`, <https://cloud.google.com/compute/docs/reference/rest/v1/projects/get>), each a
//! list of `{metric, limit, usage}`; and a zone's machine type (`machineTypes.get`,
//! <https://cloud.google.com/compute/docs/reference/rest/v1/machineTypes/get>), whose vCPUs and
//! GPUs tell what a node pool counts against them. Preflight compares what a plan adds with
//! `limit - usage`.

use super::{ShapeError, live_str};
use crate::resource::Observed;
use crate::resource::spec::Change::{ForceNew, InPlace};
use crate::resource::spec::{Field, f, kind_fields};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::collections::BTreeMap;

/// One metric's limit and usage.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Quota {
    pub limit: f64,
    pub usage: f64,
}

impl Quota {
    pub fn headroom(&self) -> f64 {
        (self.limit - self.usage).max(0.0)
    }
}

/// The quotas of a region or of the project, by metric (`CPUS`, `NETWORKS` ...).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QuotasSpec {
    /// The region's name, or the project's id.
    pub name: String,
    pub quotas: BTreeMap<String, Quota>,
}

/// Never diffed: a3ctl does not change quotas (a read-only kind is never recorded).
pub const FIELDS: &[Field] = &[f("name", ForceNew), f("quotas", InPlace)];

/// A region's quotas (`region`).
pub const REGION_INFO: super::KindInfo = super::KindInfo {
    kind: super::Kind::Region,
    name: "region",
    api: super::Api::Compute,
    fields: FIELDS,
    deadline_minutes: 5,
    create_latency: None,
    service: Some("compute.googleapis.com"),
};

/// The project's quotas (`project`).
pub const PROJECT_INFO: super::KindInfo = super::KindInfo {
    kind: super::Kind::Project,
    name: "project",
    api: super::Api::Compute,
    fields: FIELDS,
    deadline_minutes: 5,
    create_latency: None,
    service: Some("compute.googleapis.com"),
};

impl QuotasSpec {
    /// A live `Region` or `Project` as its quotas. An entry without a metric, limit or usage is
    /// an error: Compute always sends all three.
    pub fn project(kind: &'static str, live: &Value) -> Result<Observed, ShapeError> {
        let name = live_str(kind, live, "name")?.to_string();
        let missing = |field| ShapeError::Live {
            kind,
            name: name.clone(),
            field,
        };
        let mut quotas = BTreeMap::new();
        // Compute leaves out an empty list.
        for entry in live["quotas"].as_array().into_iter().flatten() {
            let metric = entry["metric"]
                .as_str()
                .ok_or_else(|| missing("quotas[].metric"))?;
            let limit = entry["limit"]
                .as_f64()
                .ok_or_else(|| missing("quotas[].limit"))?;
            let usage = entry["usage"]
                .as_f64()
                .ok_or_else(|| missing("quotas[].usage"))?;
            quotas.insert(metric.to_string(), Quota { limit, usage });
        }
        Ok(Observed {
            spec: super::to_spec(&QuotasSpec {
                name: name.clone(),
                quotas,
            }),
            outputs: json!({"self_link": live["selfLink"]}),
        })
    }
}

/// A machine type of a zone: what one VM counts against quotas.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MachineTypeSpec {
    pub name: String,
    pub guest_cpus: u64,
    /// `(type, count)` of the GPUs each VM comes with (A3 types), if any.
    pub accelerators: Vec<(String, u64)>,
}

kind_fields! {
    /// The fields of [`MachineTypeSpec`]; never diffed.
    pub enum MachineTypeField for MachineType in MACHINE_TYPE_FIELDS {
        Name => f("name", ForceNew),
        GuestCpus => f("guest_cpus", InPlace),
        Accelerators => f("accelerators", InPlace),
    }
}

/// A zone's machine type (`machine_type`).
pub const MACHINE_TYPE_INFO: super::KindInfo = super::KindInfo {
    kind: super::Kind::MachineType,
    name: "machine_type",
    api: super::Api::Compute,
    fields: MACHINE_TYPE_FIELDS,
    deadline_minutes: 5,
    create_latency: None,
    service: Some("compute.googleapis.com"),
};

impl MachineTypeSpec {
    /// A live `MachineType`; one without a name or `guestCpus` is an error.
    pub fn project(live: &Value) -> Result<Observed, ShapeError> {
        let name = live_str("machine type", live, "name")?.to_string();
        let guest_cpus = live["guestCpus"].as_u64().ok_or_else(|| ShapeError::Live {
            kind: "machine type",
            name: name.clone(),
            field: "guestCpus",
        })?;
        let accelerators = live["accelerators"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|a| {
                Some((
                    a["guestAcceleratorType"].as_str()?.to_string(),
                    a["guestAcceleratorCount"].as_u64()?,
                ))
            })
            .collect();
        Ok(Observed {
            spec: super::to_spec(&MachineTypeSpec {
                name,
                guest_cpus,
                accelerators,
            }),
            outputs: Value::Null,
        })
    }
}

/// The Cloud Quotas family of an accelerator type, as the `gpu_family` dimension of
/// `GPUS-PER-GPU-FAMILY-per-project-region` spells it: `nvidia-h100-mega-80gb` → `NVIDIA_H100_MEGA`,
/// `nvidia-b200` → `NVIDIA_B200` (the memory suffix is not part of the family).
pub fn gpu_family(accelerator: &str) -> String {
    let mut parts: Vec<&str> = accelerator.split('-').collect();
    if parts.len() > 2 && parts.last().is_some_and(|p| p.ends_with("gb")) {
        parts.pop();
    }
    parts.join("_").to_ascii_uppercase()
}

/// The GPUs built into an accelerator-optimized machine type, for a reservation or pool that does
/// not list them (Compute fills `guestAccelerators` in only when they are asked for):
/// <https://cloud.google.com/compute/docs/accelerator-optimized-machines>.
pub fn built_in_gpus(machine_type: &str) -> Option<(&'static str, u64)> {
    match machine_type {
        "a3-highgpu-8g" | "a3-edgegpu-8g" => Some(("nvidia-h100-80gb", 8)),
        "a3-megagpu-8g" => Some(("nvidia-h100-mega-80gb", 8)),
        "a3-ultragpu-8g" => Some(("nvidia-h200-141gb", 8)),
        "a4-highgpu-8g" => Some(("nvidia-b200", 8)),
        _ => None,
    }
}

/// The Cloud Quotas id of the on-demand GPU family quota.
pub const GPU_FAMILY_QUOTA_ID: &str = "GPUS-PER-GPU-FAMILY-per-project-region";

/// On-demand GPUs of one family in one region (`gpu_family_quota`, id
/// `projects/P/regions/R/gpuFamilies/F`, a3ctl's own name for this view): the limit the Cloud
/// Quotas API serves for `GPUS-PER-GPU-FAMILY-per-project-region`
/// (<https://cloud.google.com/docs/quotas/reference/rest/v1/projects.locations.services.quotaInfos>),
/// and the usage a3ctl counts itself, since Google serves that usage only through Cloud
/// Monitoring ([`GpuFamilyQuotaSpec::count`] says how). VMs outside GKE are not seen, so the usage
/// is a lower bound.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GpuFamilyQuotaSpec {
    pub region: String,
    /// `NVIDIA_H100_MEGA`.
    pub family: String,
    /// `None`: no limit applies to this region and family (Cloud Quotas lists none).
    pub limit: Option<u64>,
    pub usage: u64,
    /// GPUs of `usage` held by reservations (the rest: GKE node pools).
    pub reserved: u64,
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

/// Which quota a Spot (or preemptible) VM's GPUs count against: the preemptible one where the
/// project has preemptible quota in the region, else the standard (on-demand) one — "If you don't
/// have preemptible quota, Spot VMs and preemptible VMs consume standard quota" (Compute
/// "Preemptible quotas", <https://cloud.google.com/compute/resource-usage#preemptible_quotas>;
/// "Create and use Spot VMs", <https://cloud.google.com/compute/docs/instances/create-use-spot#quotas>).
/// A limit of 0, or no such metric in the region, is no preemptible quota.
pub fn spot_counts_as_standard(preemptible_limit: Option<f64>) -> bool {
    preemptible_limit.is_none_or(|limit| limit <= 0.0)
}

/// Whether a reservation holds quota for its VMs. A reservation does, "as if they were running"
/// (<https://cloud.google.com/compute/docs/instances/reservations-overview>), except one delivered
/// by a future reservation in calendar mode: "No quota is charged" (AI Hypercomputer "Capacity
/// overview", consumption options, <https://cloud.google.com/ai-hypercomputer/docs/obtain-capacity>).
/// `mode` is the reservation's `reservationMode` (`CALENDAR`, `DEFAULT`), which only Compute's
/// beta API serves: v1's `Reservation`, what a3ctl reads, has no such field, so every reservation
/// a3ctl sees is counted as `DEFAULT` until the field reaches v1.
pub fn reservation_holds_quota(mode: Option<&str>) -> bool {
    mode != Some("CALENDAR")
}

/// VMs of pools with `ANY_RESERVATION` affinity that land in open reservations (those without
/// `specificReservationRequired`, which any matching VM consumes first,
/// <https://cloud.google.com/compute/docs/instances/reservations-consume#consuming_instances_from_any_matching_reservation>):
/// per zone and machine type, no more than the pools' VMs there and no more than those
/// reservations' `inUseCount` — the reservation already holds their quota. An approximation:
/// other VMs (outside GKE) in the same open reservations are taken for the pools'.
pub fn any_affinity_vms_in_reservations(pool_vms: u64, open_in_use: u64) -> u64 {
    pool_vms.min(open_in_use)
}

impl GpuFamilyQuotaSpec {
    pub fn headroom(&self) -> Option<u64> {
        self.limit.map(|l| l.saturating_sub(self.usage))
    }

    /// The view from its parts. The limit is that of the first `dimensionsInfos` entry (Google
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
}

kind_fields! {
    /// The fields of [`GpuFamilyQuotaSpec`]; never diffed.
    pub enum GpuFamilyQuotaField for GpuFamilyQuota in GPU_FAMILY_FIELDS {
        Region => f("region", ForceNew),
        Family => f("family", ForceNew),
        Limit => f("limit", InPlace),
        Usage => f("usage", InPlace),
        Reserved => f("reserved", InPlace),
    }
}

/// On-demand GPUs of a family in a region (`gpu_family_quota`).
pub const GPU_FAMILY_INFO: super::KindInfo = super::KindInfo {
    kind: super::Kind::GpuFamilyQuota,
    name: "gpu_family_quota",
    api: super::Api::CloudQuotas,
    fields: GPU_FAMILY_FIELDS,
    deadline_minutes: 5,
    create_latency: None,
    service: Some("cloudquotas.googleapis.com"),
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotas_and_machine_types_project() {
        let live = json!({"name": "us-central1", "quotas": [
            {"metric": "CPUS", "limit": 24.0, "usage": 8.0},
            {"metric": "NETWORKS", "limit": 15.0, "usage": 15.0}]});
        let spec: QuotasSpec = super::super::from_spec(
            "region",
            &QuotasSpec::project("region", &live).unwrap().spec,
        )
        .unwrap();
        assert_eq!(spec.quotas["CPUS"].headroom(), 16.0);
        assert_eq!(spec.quotas["NETWORKS"].headroom(), 0.0);
        let bad = json!({"name": "r", "quotas": [{"metric": "CPUS", "limit": 1.0}]});
        assert_eq!(
            QuotasSpec::project("region", &bad).unwrap_err().to_string(),
            "the region `r` the API returned has no `quotas[].usage`"
        );
        let mega = json!({"name": "a3-megagpu-8g", "guestCpus": 208,
            "accelerators": [{"guestAcceleratorType": "nvidia-h100-mega-80gb", "guestAcceleratorCount": 8}]});
        let spec: MachineTypeSpec = super::super::from_spec(
            "machine type",
            &MachineTypeSpec::project(&mega).unwrap().spec,
        )
        .unwrap();
        assert_eq!(spec.guest_cpus, 208);
        assert_eq!(
            spec.accelerators,
            [("nvidia-h100-mega-80gb".to_string(), 8)]
        );
    }

    #[test]
    fn gpu_families_are_named_as_cloud_quotas_does() {
        assert_eq!(gpu_family("nvidia-h100-mega-80gb"), "NVIDIA_H100_MEGA");
        assert_eq!(gpu_family("nvidia-h100-80gb"), "NVIDIA_H100");
        assert_eq!(gpu_family("nvidia-h200-141gb"), "NVIDIA_H200");
        assert_eq!(gpu_family("nvidia-b200"), "NVIDIA_B200");
        assert_eq!(gpu_family("nvidia-l4"), "NVIDIA_L4");
    }

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
        let spec = GpuFamilyQuotaSpec::count("us-central1", "NVIDIA_H100_MEGA", &inputs);
        assert_eq!(
            (spec.limit, spec.usage, spec.reserved),
            (Some(320), 256 + 16 + 48 + 8 + 8, 272)
        );
        assert_eq!(spec.headroom(), Some(0));
        // Without preemptible quota, the Spot pool counts here (flex-start still does not).
        inputs.preemptible_limit = Some(0.0);
        let spec = GpuFamilyQuotaSpec::count("us-central1", "NVIDIA_H100_MEGA", &inputs);
        assert_eq!(spec.usage, 336 + 40);
        // The region's entry, then the default.
        let h100 = GpuFamilyQuotaSpec::count("us-central1", "NVIDIA_H100", &inputs);
        assert_eq!((h100.limit, h100.usage), (Some(16), 16));
        let elsewhere = GpuFamilyQuotaSpec::count("europe-west4", "NVIDIA_H100", &inputs);
        assert_eq!((elsewhere.limit, elsewhere.usage), (Some(0), 0));
        let none = GpuFamilyQuotaSpec::count("r", "F", &GpuFamilyInputs::default());
        assert_eq!(none.limit, None);
    }

    #[test]
    fn counting_rules_without_a_place_in_the_models() {
        assert!(reservation_holds_quota(None));
        assert!(reservation_holds_quota(Some("DEFAULT")));
        assert!(!reservation_holds_quota(Some("CALENDAR")));
        assert!(spot_counts_as_standard(None));
        assert!(spot_counts_as_standard(Some(0.0)));
        assert!(!spot_counts_as_standard(Some(8.0)));
        assert_eq!(any_affinity_vms_in_reservations(3, 2), 2);
        assert_eq!(any_affinity_vms_in_reservations(3, 10), 3);
    }
}
