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
/// Monitoring (`cloud::gcp::cloudquotas::count` says how). VMs outside GKE are not seen, so the usage
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
