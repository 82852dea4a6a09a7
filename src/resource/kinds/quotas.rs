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
}
