//! A Compute Engine reservation (`compute.reservations`,
//! <https://cloud.google.com/compute/docs/reference/rest/v1/reservations>): capacity held in one
//! zone for a number of VMs of one machine type, with their GPUs and local SSDs. a3ctl only
//! reads reservations (node pools consume them; whoever bought the capacity owns them), so the
//! adapter refuses to create, change or delete one.
//!
//! What replaces one follows `google_compute_reservation`
//! (hashicorp/terraform-provider-google, `google/services/compute/resource_compute_reservation.go`):
//! everything but the VM count (`reservations.resize`) and the share settings is fixed.

use super::{ShapeError, live_last, live_str};
use crate::resource::Observed;
use crate::resource::spec::Change::{ForceNew, InPlace};
use crate::resource::spec::{f, kind_fields, set};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

const KIND: &str = "reservation";

/// GPUs of each reserved VM.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReservedAccelerator {
    /// `nvidia-h100-mega-80gb`.
    #[serde(rename = "type")]
    pub kind: String,
    pub count: i64,
}

/// What a reservation holds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReservationSpec {
    pub name: String,
    pub zone: String,
    pub machine_type: String,
    /// VMs reserved.
    pub count: u64,
    pub accelerators: Vec<ReservedAccelerator>,
    /// Local SSD partitions of each VM.
    pub local_ssds: u64,
    /// Only VMs that name the reservation may use it.
    pub specific_reservation_required: bool,
    /// `DENSE` (A3 Mega capacity), `FLEXIBLE`, or empty when Compute does not say.
    pub deployment_type: String,
    /// `LOCAL`, `SPECIFIC_PROJECTS` or `ORGANIZATION`.
    pub share_type: String,
}

/// What a3ctl knows about the kind.
pub const INFO: super::KindInfo = super::KindInfo {
    kind: super::Kind::Reservation,
    name: "reservation",
    api: super::Api::Compute,
    fields: FIELDS,
    deadline_minutes: 20,
    // Never created by a3ctl.
    create_latency: None,
    service: Some("compute.googleapis.com"),
};

kind_fields! {
    /// The fields of [`ReservationSpec`].
    pub enum ReservationField for Reservation in FIELDS {
        Name => f("name", ForceNew),
        Zone => f("zone", ForceNew),
        MachineType => f("machine_type", ForceNew),
        Accelerators => set("accelerators", ForceNew),
        LocalSsds => f("local_ssds", ForceNew),
        SpecificReservationRequired => f("specific_reservation_required", ForceNew),
        DeploymentType => f("deployment_type", ForceNew),
        Count => f("count", InPlace),
        ShareType => f("share_type", InPlace),
    }
}

/// An int64 of Compute's JSON (a string) or a number.
fn int64(v: &Value) -> Option<u64> {
    v.as_u64().or_else(|| v.as_str()?.parse().ok())
}

impl ReservationSpec {
    /// The live reservation (the API's JSON) as a spec, with its outputs: how many reserved VMs
    /// are in use, its status and self link. A reservation without a name, zone, self link, VM
    /// count or machine type is an error (a3ctl reads only specific-SKU reservations, the kind
    /// GPU node pools consume).
    pub fn project(live: &Value) -> Result<Observed, ShapeError> {
        let missing = |field| ShapeError::Live {
            kind: KIND,
            name: live["name"].as_str().unwrap_or("(unnamed)").to_string(),
            field,
        };
        let sku = &live["specificReservation"];
        let properties = &sku["instanceProperties"];
        let spec = ReservationSpec {
            name: live_str(KIND, live, "name")?.to_string(),
            zone: live_last(KIND, live, "zone")?,
            machine_type: properties["machineType"]
                .as_str()
                .map(|m| m.rsplit('/').next().unwrap_or(m).to_string())
                .ok_or_else(|| missing("specificReservation.instanceProperties.machineType"))?,
            count: int64(&sku["count"]).ok_or_else(|| missing("specificReservation.count"))?,
            accelerators: properties["guestAccelerators"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|a| ReservedAccelerator {
                    kind: a["acceleratorType"].as_str().unwrap_or("").to_string(),
                    count: a["acceleratorCount"].as_i64().unwrap_or(0),
                })
                .collect(),
            local_ssds: properties["localSsds"]
                .as_array()
                .map_or(0, |d| d.len() as u64),
            // Compute leaves booleans out when false.
            specific_reservation_required: live["specificReservationRequired"]
                .as_bool()
                .unwrap_or(false),
            deployment_type: live["deploymentType"].as_str().unwrap_or("").to_string(),
            // Compute's default: usable by this project only.
            share_type: live["shareSettings"]["shareType"]
                .as_str()
                .unwrap_or("LOCAL")
                .to_string(),
        };
        Ok(Observed {
            spec: super::to_spec(&spec),
            outputs: json!({
                // Absent until a VM consumes the reservation.
                "in_use_count": int64(&sku["inUseCount"]).unwrap_or(0),
                "status": live["status"],
                "self_link": live_str(KIND, live, "selfLink")?,
                "id": live["id"],
            }),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_live_reservation_projects_onto_the_spec() {
        let live = json!({
            "name": "a3mega-res",
            "zone": "https://www.googleapis.com/compute/v1/projects/p/zones/us-central1-a",
            "selfLink": "https://www.googleapis.com/compute/v1/projects/p/zones/us-central1-a/reservations/a3mega-res",
            "status": "READY",
            "specificReservationRequired": true,
            "deploymentType": "DENSE",
            "specificReservation": {
                "count": "4", "inUseCount": "2",
                "instanceProperties": {
                    "machineType": "a3-megagpu-8g",
                    "guestAccelerators": [{"acceleratorType": "nvidia-h100-mega-80gb", "acceleratorCount": 8}],
                    "localSsds": [{"diskSizeGb": "375", "interface": "NVME"}, {"diskSizeGb": "375", "interface": "NVME"}],
                },
            },
        });
        let observed = ReservationSpec::project(&live).unwrap();
        let spec: ReservationSpec = super::super::from_spec(KIND, &observed.spec).unwrap();
        assert_eq!(spec.zone, "us-central1-a");
        assert_eq!(spec.count, 4);
        assert_eq!(spec.local_ssds, 2);
        assert_eq!(spec.accelerators[0].count, 8);
        assert_eq!(spec.share_type, "LOCAL");
        assert_eq!(observed.outputs["in_use_count"], 2);
    }

    #[test]
    fn a_reservation_without_a_vm_count_or_machine_type_is_an_error() {
        let live = json!({"name": "r", "zone": "z", "selfLink": "x", "specificReservation": {
            "instanceProperties": {"machineType": "a3-megagpu-8g"}}});
        assert_eq!(
            ReservationSpec::project(&live).unwrap_err().to_string(),
            "the reservation `r` the API returned has no `specificReservation.count`"
        );
        let live = json!({"name": "r", "zone": "z", "selfLink": "x", "specificReservation": {"count": "1"}});
        assert!(
            ReservationSpec::project(&live)
                .unwrap_err()
                .to_string()
                .ends_with("`specificReservation.instanceProperties.machineType`")
        );
    }
}
