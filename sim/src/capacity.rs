//! Zone capacity: how many VMs of each machine type a zone can still give, on demand and Spot,
//! and what Compute and GKE answer when it cannot give enough (stockouts).
//!
//! Google does not publish capacity, so a fresh simulator has no limit anywhere: every existing
//! test and shipped blueprint fits. [`CapacityConfig`] sets limits per zone and machine type
//! (`SimConfig::capacity`, or the `[capacity]` table of a world file, [`crate::worldspec`]).
//! Capacity is the zone's, not a project's: every project's VMs share it.
//!
//! **What holds capacity** (computed from the world, as quotas are, [`used`]):
//! - a Compute reservation holds its `specificReservation.count` on-demand VMs of its machine type
//!   in its zone, from its insert until its delete is DONE (an insert whose operation is going to
//!   fail holds nothing; a resize that grows it holds the new count from its start, one that
//!   shrinks it frees VMs when it is DONE); the VMs that consume it (GKE nodes of pools with a `SPECIFIC_RESERVATION`
//!   affinity) take nothing more from the zone;
//! - each instance group (zone) of a GKE node pool that consumes no reservation holds the VMs it
//!   was granted: its nodes, plus those an unfinished create or resize is creating — on demand, or
//!   Spot when the pool's `config.spot` or `config.preemptible` is set. Deleting nodes (a pool or
//!   cluster delete, a shrink, a failed or cancelled operation) gives them back when the operation
//!   ends.
//!
//! **Compute** refuses a reservation insert (or resize) that asks for more VMs than the zone has
//! left the way it refuses a VM insert in a stocked-out zone: the operation ends DONE with code
//! `ZONE_RESOURCE_POOL_EXHAUSTED`, `httpErrorStatusCode` 503 and the message `The zone
//! 'projects/P/zones/Z' does not have enough resources available to fulfill the request.  Try a
//! different zone, or try again later.` ([`compute_exhausted`]) — Compute's text for that code as
//! pasted in public reports of VM inserts (CCExtractor/sample-platform#901, with the
//! `https://cloud.google.com/compute/docs/resource-error` help link in `errorDetails`;
//! googlefonts/fontbakery-dashboard#81; GoogleCloudPlatform/compute-image-tools#1960). A reservation
//! insert that hit a stockout was reported with the `_WITH_DETAILS` wording (`... fulfill the
//! request.  '(resource type:compute)'.`, terraform-google-modules/terraform-docs-samples#974,
//! whose code was not shown); that the simulator answers the plain code for reservations is a
//! choice, marked as such.
//!
//! **GKE** does not refuse at once: the pool's instance groups create the VMs that fit and keep
//! trying for the rest. The simulator grants what fits when the create or resize starts; an
//! operation still short when its own duration has passed keeps RUNNING, waiting for capacity,
//! until `stockout_wait_secs` after it started. If capacity frees up meanwhile (another pool or
//! cluster is deleted, a reservation deleted or shrunk) the VMs are granted at that moment and the
//! operation completes then; otherwise it ends DONE with GKE's instance-group failure, code 8
//! `RESOURCE_EXHAUSTED`, condition `GCE_STOCKOUT`: `Google Compute Engine: Not all instances
//! running in IGM after 35m4.033429035s. Expected 5, running 2, transitioning 3. Current errors:
//! [GCE_STOCKOUT]: Instance '<node>' creation failed: The zone 'projects/P/zones/Z' does not have
//! enough resources available to fulfill the request. '(resource type:compute)'.`
//! (akka/akka-core#32992, a cluster create; tranquilitybase-io/tb-gcp#589 shows a node pool create
//! failing the same way after another duration). The duration printed is the configured wait,
//! in Go's duration format; the default wait, 2104.033429035 s, prints exactly the duration of
//! those reports. The VMs granted stay, as with a reservation that is too small: a new pool ends
//! `RUNNING_WITH_ERROR` with them (`ERROR` with none), a resize leaves the pool `RUNNING` with the
//! nodes it got (a pool in error stays in error, and one that gets all its nodes is `RUNNING`
//! again, as `container/reservations.rs` says), a failing cluster create keeps nothing. Waiting
//! operations get freed capacity in the order they started, before any new request. Changing a
//! pool's machine type is not checked against capacity (a simplification).

pub use crate::clock::go_duration;
pub use crate::config::capacity::{CapacityConfig, DEFAULT_STOCKOUT_WAIT_SECS, ZoneCapacity};
use crate::geo;
use crate::quotas;
use crate::state::compute::{Failure, Life, RESERVATION};
use crate::world::World;
use serde_json::{Value, json};

/// How a VM is provisioned, for capacity.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Model {
    OnDemand,
    /// Spot or preemptible.
    Spot,
}

impl CapacityConfig {
    fn entry(&mut self, zone: &str, machine_type: &str) -> &mut ZoneCapacity {
        let at = self
            .zones
            .iter()
            .position(|z| z.zone == zone && z.machine_type == machine_type);
        let at = match at {
            Some(at) => at,
            None => {
                self.zones.push(ZoneCapacity {
                    zone: zone.to_string(),
                    machine_type: machine_type.to_string(),
                    on_demand: None,
                    spot: None,
                });
                self.zones.len() - 1
            }
        };
        &mut self.zones[at]
    }

    /// `zone` has room for `vms` on-demand VMs of `machine_type`.
    pub fn with_on_demand(mut self, zone: &str, machine_type: &str, vms: u64) -> Self {
        self.entry(zone, machine_type).on_demand = Some(vms);
        self
    }

    /// `zone` has room for `vms` Spot VMs of `machine_type`.
    pub fn with_spot(mut self, zone: &str, machine_type: &str, vms: u64) -> Self {
        self.entry(zone, machine_type).spot = Some(vms);
        self
    }

    /// A GKE create or resize short of capacity waits `secs` simulated seconds for it.
    pub fn with_stockout_wait(mut self, secs: f64) -> Self {
        self.stockout_wait_secs = secs;
        self
    }

    /// The stockout wait in simulated milliseconds.
    pub fn wait_ms(&self) -> u64 {
        (self.stockout_wait_secs * 1000.0).round() as u64
    }

    /// The VMs `zone` can hold of `machine_type` for `model`, or `None` when unlimited.
    pub fn limit(&self, zone: &str, machine_type: &str, model: Model) -> Option<u64> {
        let entry = self
            .zones
            .iter()
            .find(|z| z.zone == zone && z.machine_type == machine_type)?;
        match model {
            Model::OnDemand => entry.on_demand,
            Model::Spot => entry.spot,
        }
    }

    /// Refuses unknown zones, machine types the zone does not offer, a zone and machine type
    /// listed twice, and a negative or non-finite wait.
    pub fn check(&self) -> Result<(), String> {
        if !(self.stockout_wait_secs.is_finite() && self.stockout_wait_secs >= 0.0) {
            return Err(format!(
                "stockout_wait_secs must be a number ≥ 0, got {}",
                self.stockout_wait_secs
            ));
        }
        for (i, entry) in self.zones.iter().enumerate() {
            if !geo::zone_exists(&entry.zone) {
                return Err(format!("unknown zone `{}` in capacity", entry.zone));
            }
            if !geo::machine_type_known(&entry.machine_type) {
                return Err(format!(
                    "unknown machine type `{}` in the capacity of {}",
                    entry.machine_type, entry.zone
                ));
            }
            if !geo::zone_offers(&entry.zone, &entry.machine_type) {
                return Err(format!(
                    "zone {} does not offer machine type `{}`",
                    entry.zone, entry.machine_type
                ));
            }
            if self.zones[..i]
                .iter()
                .any(|z| z.zone == entry.zone && z.machine_type == entry.machine_type)
            {
                return Err(format!(
                    "the capacity of `{}` in {} is given twice",
                    entry.machine_type, entry.zone
                ));
            }
        }
        Ok(())
    }
}

/// The zone of a zonal Compute path (`projects/p/zones/z/...`).
fn zone_of_path(path: &str) -> Option<&str> {
    match path.split('/').collect::<Vec<_>>().as_slice() {
        ["projects", _, "zones", zone, ..] => Some(zone),
        _ => None,
    }
}

/// The machine type and VM count a reservation body holds.
pub fn reservation_vms(body: &Value) -> (String, u64) {
    let (shape, count) = quotas::reservation_shape(body);
    (shape.machine, count.max(0.0) as u64)
}

/// The machine type and provisioning model of a node pool resource's VMs.
pub fn pool_vm(pool: &Value) -> (String, Model) {
    let shape = quotas::pool_shape(pool);
    let model = if shape.spot {
        Model::Spot
    } else {
        Model::OnDemand
    };
    (shape.machine, model)
}

/// The VMs of `machine_type` and `model` held in `zone` now, by every project: reservations
/// (on demand) and the instance groups of node pools that consume none.
pub fn used(world: &World, zone: &str, machine_type: &str, model: Model) -> u64 {
    let mut total = 0;
    if model == Model::OnDemand {
        let failing = quotas::failing_creates(world);
        for (path, resource) in &world.compute.resources {
            if resource.kind != RESERVATION || zone_of_path(path) != Some(zone) {
                continue;
            }
            if resource.state == Life::Creating && failing.contains(path.as_str()) {
                continue;
            }
            let held = quotas::held_body(world, path, &resource.body);
            let (machine, count) = reservation_vms(held);
            if machine == machine_type {
                total += count;
            }
        }
    }
    for cluster in world.container.clusters.values() {
        for pool in &cluster.pools {
            if !pool.reserved.is_empty() {
                continue;
            }
            if pool_vm(&pool.resource) != (machine_type.to_string(), model) {
                continue;
            }
            total += u64::from(pool.held_in(zone));
        }
    }
    total
}

/// The VMs of `machine_type` and `model` that `zone` can still give, or `None` when unlimited.
pub fn free(
    world: &World,
    config: &CapacityConfig,
    zone: &str,
    machine_type: &str,
    model: Model,
) -> Option<u64> {
    let limit = config.limit(zone, machine_type, model)?;
    Some(limit.saturating_sub(used(world, zone, machine_type, model)))
}

/// Whether `zone` has room for `vms` more on-demand VMs of `machine_type`.
pub fn fits(
    world: &World,
    config: &CapacityConfig,
    zone: &str,
    machine_type: &str,
    model: Model,
    vms: u64,
) -> bool {
    free(world, config, zone, machine_type, model).is_none_or(|free| vms <= free)
}

/// Compute's failure for an insert that asks for more than the zone has:
/// `ZONE_RESOURCE_POOL_EXHAUSTED`, 503, with the troubleshooting link Compute attaches.
pub fn compute_exhausted(project: &str, zone: &str) -> Failure {
    Failure {
        http_status: 503,
        http_message: "SERVICE UNAVAILABLE".into(),
        code: "ZONE_RESOURCE_POOL_EXHAUSTED".into(),
        message: format!(
            "The zone 'projects/{project}/zones/{zone}' does not have enough resources available \
             to fulfill the request.  Try a different zone, or try again later."
        ),
        details: Some(json!([{
            "help": {"links": [{
                "description": "Troubleshooting documentation",
                "url": "https://cloud.google.com/compute/docs/resource-error",
            }]}
        }])),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_print_as_go_does() {
        assert_eq!(go_duration(DEFAULT_STOCKOUT_WAIT_SECS), "35m4.033429035s");
        assert_eq!(go_duration(14.691006793), "14.691006793s");
        assert_eq!(go_duration(600.0), "10m0s");
        assert_eq!(go_duration(3600.0), "1h0m0s");
        assert_eq!(go_duration(0.0), "0s");
        assert_eq!(go_duration(1.5), "1.5s");
    }

    #[test]
    fn limits_are_per_zone_machine_type_and_model() {
        let config = CapacityConfig::default()
            .with_on_demand("us-central1-a", "n2-standard-8", 2)
            .with_spot("us-central1-a", "n2-standard-8", 5);
        assert_eq!(config.zones.len(), 1);
        let limit = |zone, machine, model| config.limit(zone, machine, model);
        assert_eq!(
            limit("us-central1-a", "n2-standard-8", Model::OnDemand),
            Some(2)
        );
        assert_eq!(
            limit("us-central1-a", "n2-standard-8", Model::Spot),
            Some(5)
        );
        assert_eq!(
            limit("us-central1-b", "n2-standard-8", Model::OnDemand),
            None
        );
        assert_eq!(limit("us-central1-a", "e2-medium", Model::OnDemand), None);
        assert!(config.check().is_ok());
        assert!(CapacityConfig::default().check().is_ok());
        let bad = |c: CapacityConfig| c.check().unwrap_err();
        assert!(
            bad(CapacityConfig::default().with_on_demand("mars-1a", "e2-medium", 1))
                .contains("unknown zone")
        );
        assert!(
            bad(CapacityConfig::default().with_on_demand("us-central1-b", "a3-megagpu-8g", 1))
                .contains("does not offer")
        );
        assert!(
            bad(CapacityConfig::default().with_on_demand("us-central1-a", "e2-standard-3", 1))
                .contains("unknown machine type")
        );
        assert!(bad(CapacityConfig::default().with_stockout_wait(-1.0)).contains("≥ 0"));
        let mut twice = config.clone();
        twice.zones.push(twice.zones[0].clone());
        assert!(bad(twice).contains("twice"));
    }

    #[test]
    fn a3_ultra_and_a4_capacity_is_set_in_their_zones_only() {
        let config = CapacityConfig::default()
            .with_on_demand("us-central1-b", "a3-ultragpu-8g", 2)
            .with_spot("europe-west4-b", "a4-highgpu-8g", 1);
        assert!(config.check().is_ok());
        assert_eq!(
            config.limit("europe-west4-b", "a4-highgpu-8g", Model::Spot),
            Some(1)
        );
        let bad = |c: CapacityConfig| c.check().unwrap_err();
        assert!(
            bad(CapacityConfig::default().with_on_demand("us-central1-a", "a3-ultragpu-8g", 1))
                .contains("does not offer")
        );
        assert!(
            bad(CapacityConfig::default().with_on_demand("europe-west4-a", "a4-highgpu-8g", 1))
                .contains("does not offer")
        );
    }

    #[test]
    fn the_exhausted_failure_is_computes() {
        let failure = compute_exhausted("p", "us-central1-a");
        assert_eq!(failure.code, "ZONE_RESOURCE_POOL_EXHAUSTED");
        assert_eq!(failure.http_status, 503);
        assert_eq!(
            failure.message,
            "The zone 'projects/p/zones/us-central1-a' does not have enough resources available \
             to fulfill the request.  Try a different zone, or try again later."
        );
    }
}
