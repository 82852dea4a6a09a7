//! Quotas where Compute keeps them, read only: a region's (`regions.get`,
//! <https://cloud.google.com/compute/docs/reference/rest/v1/regions/get>) and the project's
//! (`projects.get`, <https://cloud.google.com/compute/docs/reference/rest/v1/projects/get>), each a
//! list of `{metric, limit, usage}`; and a zone's machine type (`machineTypes.get`,
//! <https://cloud.google.com/compute/docs/reference/rest/v1/machineTypes/get>), whose vCPUs and
//! GPUs tell what a node pool counts against them. Preflight compares what a plan adds with
//! `limit - usage`.

use super::{ShapeError, live_str};
use crate::resource::Observed;
use crate::resource::spec::Change::InPlace;
use crate::resource::spec::{Field, f};
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

/// Never diffed: a3ctl does not change quotas.
pub const FIELDS: &[Field] = &[f("quotas", InPlace)];

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

/// Never diffed.
pub const MACHINE_TYPE_FIELDS: &[Field] = &[f("guest_cpus", InPlace)];

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
/// Monitoring: the family's GPUs held by the project's reservations in the region (reserved VMs
/// count against quota as if running, <https://cloud.google.com/compute/docs/instances/reservations-overview>)
/// plus those of its GKE node pools in the region that run on demand outside any reservation
/// (`initialNodeCount` per zone). VMs outside GKE are not seen, so the usage is a lower bound.
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

impl GpuFamilyQuotaSpec {
    pub fn headroom(&self) -> Option<u64> {
        self.limit.map(|l| l.saturating_sub(self.usage))
    }

    /// The view from its parts, as JSON the APIs answer: the `QuotaInfo` (`None`: 404), the
    /// project's reservations (Compute `Reservation`s, any zone) and GKE clusters (any location,
    /// with their `nodePools`). The limit is that of the first `dimensionsInfos` entry (Google
    /// orders them from most to least specific) whose dimensions all match the region and family.
    pub fn count(
        region: &str,
        family: &str,
        info: Option<&Value>,
        reservations: &[Value],
        clusters: &[Value],
    ) -> GpuFamilyQuotaSpec {
        let wanted = |key: &str| match key {
            "region" => Some(region),
            "gpu_family" => Some(family),
            _ => None,
        };
        let limit = info.and_then(|info| {
            info["dimensionsInfos"]
                .as_array()?
                .iter()
                .find(|d| {
                    d["dimensions"].as_object().is_none_or(|dims| {
                        dims.iter()
                            .all(|(k, v)| wanted(k).is_some_and(|w| v.as_str() == Some(w)))
                    })
                })
                .and_then(|d| int(&d["details"]["value"]))
        });
        let in_region = |zone: &str| {
            let zone = zone.rsplit('/').next().unwrap_or(zone);
            zone.rsplit_once('-').is_some_and(|(r, _)| r == region)
        };
        let of_family = |machine: &str, listed: &Value| -> u64 {
            let listed = listed.as_array().and_then(|a| a.first()).and_then(|a| {
                let kind = a["acceleratorType"].as_str()?;
                Some((
                    kind.rsplit('/').next().unwrap_or(kind).to_string(),
                    int(&a["acceleratorCount"])?,
                ))
            });
            let machine = machine.rsplit('/').next().unwrap_or(machine);
            let gpus = listed.or_else(|| built_in_gpus(machine).map(|(k, n)| (k.to_string(), n)));
            match gpus {
                Some((kind, n)) if gpu_family(&kind) == family => n,
                _ => 0,
            }
        };
        let mut reserved = 0;
        for r in reservations {
            if !in_region(r["zone"].as_str().unwrap_or("")) {
                continue;
            }
            let specific = &r["specificReservation"];
            let properties = &specific["instanceProperties"];
            let per_vm = of_family(
                properties["machineType"].as_str().unwrap_or(""),
                &properties["guestAccelerators"],
            );
            reserved += per_vm * int(&specific["count"]).unwrap_or(0);
        }
        let mut pools = 0;
        for cluster in clusters {
            for pool in cluster["nodePools"].as_array().into_iter().flatten() {
                let config = &pool["config"];
                let spot = config["spot"] == true || config["preemptible"] == true;
                let reserved = config["reservationAffinity"]["consumeReservationType"]
                    == "SPECIFIC_RESERVATION";
                if spot || reserved {
                    continue;
                }
                let zones: Vec<&str> = pool["locations"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(Value::as_str)
                    .filter(|z| in_region(z))
                    .collect();
                let per_vm = of_family(
                    config["machineType"].as_str().unwrap_or(""),
                    &config["accelerators"],
                );
                pools += per_vm * int(&pool["initialNodeCount"]).unwrap_or(0) * zones.len() as u64;
            }
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

/// A JSON integer, or an int64 as Google writes it (a string).
fn int(v: &Value) -> Option<u64> {
    v.as_u64().or_else(|| v.as_str()?.parse().ok())
}

/// Never diffed.
pub const GPU_FAMILY_FIELDS: &[Field] = &[f("limit", InPlace)];

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

    #[test]
    fn gpu_family_usage_counts_reservations_and_on_demand_pools_of_the_region() {
        let info = json!({"dimensionsInfos": [
            {"dimensions": {"region": "us-central1", "gpu_family": "NVIDIA_H100_MEGA"},
             "details": {"value": "64"}},
            {"dimensions": {"region": "us-central1"}, "details": {"value": "16"}},
            {"details": {"value": "0"}}]});
        let reservations = [
            // 4 VMs of 8 built-in GPUs, in the region: 32.
            json!({"zone": "https://x/compute/v1/projects/p/zones/us-central1-a",
                   "specificReservation": {"count": "4",
                     "instanceProperties": {"machineType": "a3-megagpu-8g"}}}),
            // Another region, another family: nothing.
            json!({"zone": "us-east5-a", "specificReservation": {"count": "9",
                     "instanceProperties": {"machineType": "a3-megagpu-8g"}}}),
            json!({"zone": "us-central1-b", "specificReservation": {"count": "2",
                     "instanceProperties": {"machineType": "a3-highgpu-8g"}}}),
        ];
        let pool = |count: u64, config: Value| {
            json!({"initialNodeCount": count, "locations": ["us-central1-a", "us-central1-b"],
                   "config": config})
        };
        let mega = json!({"machineType": "a3-megagpu-8g", "accelerators": [
            {"acceleratorType": "nvidia-h100-mega-80gb", "acceleratorCount": "8"}]});
        let mut spot = mega.clone();
        spot["spot"] = json!(true);
        let mut reserved = mega.clone();
        reserved["reservationAffinity"] = json!({"consumeReservationType": "SPECIFIC_RESERVATION"});
        let clusters = [json!({"nodePools": [
            pool(1, mega.clone()),       // 2 zones × 1 × 8 = 16
            pool(5, spot),               // spot: the preemptible quota
            pool(5, reserved),           // in a reservation: counted there
            pool(3, json!({"machineType": "e2-standard-8"})),
        ]})];
        let spec = GpuFamilyQuotaSpec::count(
            "us-central1",
            "NVIDIA_H100_MEGA",
            Some(&info),
            &reservations,
            &clusters,
        );
        assert_eq!((spec.limit, spec.usage, spec.reserved), (Some(64), 48, 32));
        assert_eq!(spec.headroom(), Some(16));
        // The region's entry, then the default.
        let h100 = GpuFamilyQuotaSpec::count(
            "us-central1",
            "NVIDIA_H100",
            Some(&info),
            &reservations,
            &[],
        );
        assert_eq!((h100.limit, h100.usage), (Some(16), 16));
        let elsewhere =
            GpuFamilyQuotaSpec::count("europe-west4", "NVIDIA_H100", Some(&info), &[], &[]);
        assert_eq!(elsewhere.limit, Some(0));
        assert_eq!(
            GpuFamilyQuotaSpec::count("r", "F", None, &[], &[]).limit,
            None
        );
    }
}
