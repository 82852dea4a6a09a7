//! Node pools that consume a Compute reservation: `config.reservationAffinity` with
//! `consumeReservationType: SPECIFIC_RESERVATION`, `key: "compute.googleapis.com/reservation-name"`
//! and one value, `R`, `projects/Q/reservations/R` or `projects/Q/reservations/R/reservationBlocks/B`
//! (<https://cloud.google.com/kubernetes-engine/docs/reference/rest/v1/NodeConfig#reservationaffinity>,
//! <https://cloud.google.com/kubernetes-engine/docs/how-to/consuming-reservations>; gcloud's
//! `--reservation-affinity=specific --reservation=R` sends exactly that key and value, in its
//! `api_adapter._AddReservationAffinityToNodeConfig`).
//!
//! **At request time** (node pool create, and the pools of a cluster create), every zone of the
//! pool must hold a reservation of that name — GKE creates one instance group per zone, each
//! consuming in its own zone — in the pool's project, or in project `Q` when that reservation is
//! shared with the pool's project (`SPECIFIC_PROJECTS` listing it, or `ORGANIZATION`). Otherwise
//! 404 `NOT_FOUND`: `Google Compute Engine: reservation "<value>" not found for node pool "<pool>"
//! at zone "<zone>".`, the answer GKE gave in GoogleCloudPlatform/cluster-toolkit#5043 (2025). The
//! reservation must also be specifically targeted and match the pool's VMs: its
//! `specificReservationRequired` set, its machine type the pool's, and its `guestAccelerators`,
//! when it lists any, the pool's accelerators. Otherwise 400 `INVALID_ARGUMENT`/`badRequest` with
//! the instance error Compute gives for the VMs' `reservationAffinity`, which GKE relays with its
//! `Google Compute Engine: ` prefix:
//! `Google Compute Engine: Invalid value for field 'resource.reservationAffinity': '{  "consumeReservationType": "SPECIFIC_ALLOCATION",  "key": "compute.googleapis.com/reservation-name...'. <why>`
//! — the affinity as Compute prints it, cut at 100 characters with `...` (the form quoted in
//! skypilot-org/skypilot#3327), and `<why>`:
//! - not specifically targeted: `Specified reservations [<value>] can not be targeted as
//!   specificReservationRequired is not set` (skypilot-org/skypilot#3327,
//!   superserve-ai/sandbox#238);
//! - another shape: `No available resources in specified reservations '<value>'`, the VM error that
//!   the cluster autoscaler classifies as `RESERVATION_INCOMPATIBLE`
//!   (kubernetes/autoscaler, `cloudprovider/gce/autoscaling_gce_client_test.go`).
//!
//! That GKE checks these at request time, and with these codes, is a guess for the mismatches: the
//! texts are Compute's VM errors. A wrong `key` or a number of values other than one is refused
//! with 400 `badRequest` too (texts guessed; cluster-toolkit notes that the node pool API takes one
//! reservation). A reservation block is accepted as part of the value, but blocks are not
// GUESS(gke-reservation-request-checks): GKE checks a pool's reservation affinity at request time with Compute's VM error texts, and a wrong key or number of values with 400 `badRequest` (texts guessed)
//! simulated: the reservation itself is what is checked and booked.
//!
//! **Capacity is not checked at request time.** GKE accepts a pool that asks for more VMs than the
//! reservation has left and fails when its instance groups cannot create them: "if you ask for more
//! machines than are available in a reservation, the cluster setup process only fails much later,
//! when it tries to actually create those machines" (GoogleCloudPlatform/cluster-toolkit#4372,
//! 2025; AI-Hypercomputer/xpk#1034 likewise). In 2020 GKE refused such a pool at once with 429
//! `Reservation does not have enough resources for the request: specific reservation "R" is
//! insufficient for node pool "P" at zone "Z": required 1 and short of 1 VM count of machine type
//! M.` (GoogleCloudPlatform/gsutil#1000); the simulator follows the newer reports. So at request
//! time each zone's group books what the reservation has free, up to the pool's nodes in that zone
//! (the reservation's `inUseCount` rises at once: the VMs are being created), and when that is not
//! enough the operation ends DONE with
//! `Google Compute Engine: Not all instances running in IGM after 35m4.033429035s. Expected <n>,
//! running <m>, transitioning <n-m>. Current errors: [CONDITION_NOT_MET]: Instance '<node>'
//! creation failed: Specified reservation '<value>' does not have available resources for the
//! request.` — GKE's instance-group failure as for a stockout, with Compute's VM error for an
//! exhausted reservation (skypilot-org/skypilot#2352, kubernetes/autoscaler's
//! `RESERVATION_CAPACITY_EXCEEDED`); code 9 `FAILED_PRECONDITION` (Compute's `CONDITION_NOT_MET`;
//! GKE's own code could not be confirmed). A reservation still `CREATING` (or `DELETING`) gives no
//! VMs: `Cannot insert instance to a reservation with status: CREATING, as it requires reservation
//! to be in READY state.` (kubernetes/autoscaler's `RESERVATION_NOT_READY`). The VMs that could be
//! created stay: a new pool ends `RUNNING_WITH_ERROR` with them (`ERROR` with none), the status
//! terraform-provider-google#10823 reports for a partly created pool; a resize (`setSize`) that
//! grows past the reservation fails the same way and leaves the pool `RUNNING` with the nodes it
//! got. A failing cluster create keeps nothing (cluster and pools in `ERROR`). Instance groups
//! that keep retrying are not simulated: nodes never appear later by themselves.
//!
//! **A pool in error is completed by a resize.** `RUNNING_WITH_ERROR` is "partially usable ...
//! Customer may need to reissue a request or trigger a new update" (the `NodePool.status` enum,
//! <https://cloud.google.com/kubernetes-engine/docs/reference/rest/v1/projects.locations.clusters.nodePools#status>),
//! and Terraform's provider updates and resizes pools in error states
//! (GoogleCloudPlatform/magic-modules#3114), so `setSize` is accepted on a pool in
//! `RUNNING_WITH_ERROR` or `ERROR` like on any other, its nodes kept. A resize that gets every
//! node makes the pool `RUNNING` and removes the create's `statusMessage` and `conditions`
//! ("fully usable", the enum says of `RUNNING`). One that fails again leaves the pool in error —
//! `RUNNING_WITH_ERROR` with nodes, `ERROR` without — now with the resize's error as its
//! `statusMessage` and `conditions`. GKE documents neither rule for a pool in error: both are
//! guesses, as is accepting `setSize` on a pool in `ERROR`.
// GUESS(gke-pool-in-error-resize): a resize is accepted on a pool in `RUNNING_WITH_ERROR` or `ERROR` and completes or keeps it in error
//!
//! **Consumption** follows the nodes: when an operation ends, every group holds exactly its nodes
//! ([`settle`]) — a shrink, a failed or cancelled operation give back what they booked — and
//! deleting the pool or the cluster gives back everything ([`release`]).

use super::nodes::node_prefix;
use super::operations::OpError;
use super::rules::{count_of, last_segment};
use super::{NodePool, Reserved, bad_request};
use crate::compute::reservations::{self as compute, Reservation};
use crate::error::{GcpError, GcpResult};
use crate::world::World;
use serde_json::Value;
use std::collections::BTreeMap;

/// The only key GKE takes for a specific reservation.
pub const KEY: &str = "compute.googleapis.com/reservation-name";

/// The reservation affinity as Compute prints it in an error: its JSON cut at 100 characters.
const COMPUTE_AFFINITY: &str = "{  \"consumeReservationType\": \"SPECIFIC_ALLOCATION\",  \"key\": \"compute.googleapis.com/reservation-name";

/// The reservation a pool names: the value as given, and where it points.
struct Named {
    value: String,
    /// `(project, name)`, or `None` for a value of no known form (found nowhere).
    place: Option<(String, String)>,
}

/// The specific reservation a pool config names, or `None` for any other affinity.
fn named(project: &str, config: &Value) -> GcpResult<Option<Named>> {
    let affinity = &config["reservationAffinity"];
    if affinity["consumeReservationType"] != "SPECIFIC_RESERVATION" {
        return Ok(None);
    }
    let key = affinity["key"].as_str().unwrap_or("");
    if key != KEY {
        return Err(bad_request(format!(
            "Reservation affinity key must be \"{KEY}\" to consume a specific reservation, got \
             \"{key}\"."
        )));
    }
    let values = super::string_list(&affinity["values"]);
    let [value] = values.as_slice() else {
        return Err(bad_request(format!(
            "Exactly one reservation must be given to consume a specific reservation, got {}.",
            values.len()
        )));
    };
    let parts: Vec<&str> = value.split('/').collect();
    let place = match parts.as_slice() {
        [name] if !name.is_empty() => Some((project.to_string(), name.to_string())),
        ["projects", q, "reservations", name]
        | ["projects", q, "reservations", name, "reservationBlocks", _]
            if !q.is_empty() && !name.is_empty() =>
        {
            Some((q.to_string(), name.to_string()))
        }
        _ => None,
    };
    Ok(Some(Named {
        value: value.clone(),
        place,
    }))
}

/// `Google Compute Engine: Invalid value for field 'resource.reservationAffinity': ...`.
fn invalid_affinity(why: &str) -> GcpError {
    bad_request(format!(
        "Google Compute Engine: Invalid value for field 'resource.reservationAffinity': \
         '{COMPUTE_AFFINITY}...'. {why}"
    ))
}

/// The accelerators of a pool config or reservation, as `(type, count)`, sorted.
fn sorted(mut accelerators: Vec<(String, u64)>) -> Vec<(String, u64)> {
    accelerators.sort();
    accelerators
}

/// Checks the reservation a prepared pool (`pool`, with its zones and machine filled in) names, in
/// every zone of the pool; returns the groups' bookings, empty (count 0) — nothing for a pool that
/// consumes no specific reservation.
pub fn check(
    world: &World,
    project: &str,
    pool: &Value,
    zones: &[String],
) -> GcpResult<BTreeMap<String, Reserved>> {
    let config = &pool["config"];
    let Some(named) = named(project, config)? else {
        return Ok(BTreeMap::new());
    };
    let pool_name = pool["name"].as_str().unwrap_or("");
    let machine = config["machineType"].as_str().unwrap_or("e2-medium");
    let accelerators: Vec<(String, u64)> = config["accelerators"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|a| {
            (
                last_segment(a["acceleratorType"].as_str().unwrap_or("")).to_string(),
                count_of(&a["acceleratorCount"]),
            )
        })
        .collect();
    let mut booked = BTreeMap::new();
    for zone in zones {
        let found = named.place.as_ref().and_then(|(owner, name)| {
            compute::find(
                &world.compute,
                &format!("projects/{owner}/zones/{zone}/reservations/{name}"),
            )
        });
        let Some(reservation) = found.filter(|r| r.usable_by(project)) else {
            return Err(GcpError::not_found(format!(
                "Google Compute Engine: reservation \"{}\" not found for node pool \
                 \"{pool_name}\" at zone \"{zone}\".",
                named.value
            )));
        };
        if !reservation.specific_required {
            return Err(invalid_affinity(&format!(
                "Specified reservations [{}] can not be targeted as specificReservationRequired \
                 is not set",
                named.value
            )));
        }
        if !matches(&reservation, machine, &accelerators) {
            return Err(invalid_affinity(&format!(
                "No available resources in specified reservations '{}'",
                named.value
            )));
        }
        booked.insert(
            zone.clone(),
            Reserved {
                reservation: reservation.path.clone(),
                id: reservation.id.clone(),
                count: 0,
            },
        );
    }
    Ok(booked)
}

/// Whether the pool's VMs fit the reservation's shape.
fn matches(reservation: &Reservation, machine: &str, accelerators: &[(String, u64)]) -> bool {
    reservation.machine_type == machine
        && (reservation.accelerators.is_empty()
            || sorted(reservation.accelerators.clone()) == sorted(accelerators.to_vec()))
}

/// Why a group could not book all its VMs.
enum Shortfall {
    /// The reservation has fewer VMs left.
    Short,
    /// The reservation is `CREATING` or `DELETING`.
    NotReady(String),
    /// The reservation is gone (deleted, or deleted and created again).
    Gone,
}

/// Books, in every zone of `pool`, the VMs it needs to have `wanted` nodes there (those it holds
/// already count). Returns the operation's failure when some group got fewer.
pub fn book(
    world: &mut World,
    cluster_name: &str,
    pool: &mut NodePool,
    wanted: u32,
) -> Option<OpError> {
    let mut shortfalls = vec![];
    for (zone, held) in pool.reserved.iter_mut() {
        if held.count >= wanted {
            continue;
        }
        let need = wanted - held.count;
        let current = compute::find(&world.compute, &held.reservation).filter(|r| r.id == held.id);
        let shortfall = match current {
            None => Some(Shortfall::Gone),
            Some(r) if r.status != "READY" => Some(Shortfall::NotReady(r.status)),
            Some(r) => {
                let take = need.min(u32::try_from(r.free).unwrap_or(u32::MAX));
                compute::add_in_use(
                    &mut world.compute,
                    &held.reservation,
                    &held.id,
                    i64::from(take),
                );
                held.count += take;
                (take < need).then_some(Shortfall::Short)
            }
        };
        if let Some(shortfall) = shortfall {
            shortfalls.push((zone.clone(), held.count, shortfall));
        }
    }
    let (zone, got, shortfall) = shortfalls.into_iter().next()?;
    let value = super::string_list(&pool.resource["config"]["reservationAffinity"]["values"])
        .into_iter()
        .next()
        .unwrap_or_default();
    let expected: u32 = wanted * pool.reserved.len() as u32;
    let running: u32 = pool.reserved.values().map(|r| r.count.min(wanted)).sum();
    let why = match shortfall {
        Shortfall::Short => format!(
            "Specified reservation '{value}' does not have available resources for the request."
        ),
        Shortfall::NotReady(status) => format!(
            "Cannot insert instance to a reservation with status: {status}, as it requires \
             reservation to be in READY state."
        ),
        Shortfall::Gone => format!("Specified reservation '{value}' does not exist."),
    };
    let hash = pool
        .groups
        .get(&zone)
        .map(|g| g.hash.clone())
        .unwrap_or_default();
    // The first instance that could not be created: the one after those the group has.
    let node = format!(
        "{}-{hash}-{:04}",
        node_prefix(cluster_name, &pool.name),
        got + 1
    );
    Some(OpError {
        code: 9,
        canonical: "FAILED_PRECONDITION".into(),
        message: format!(
            "Google Compute Engine: Not all instances running in IGM after {}. Expected \
             {expected}, running {running}, transitioning {}. Current errors: \
             [CONDITION_NOT_MET]: Instance '{node}' creation failed: {why}",
            super::operations::IGM_AFTER,
            expected - running
        ),
        condition: "UNKNOWN".into(),
    })
}

/// Makes every group of the cluster's pools hold exactly its nodes: what was booked for VMs that
/// were not created (a failed or cancelled operation, a shrink) goes back to the reservation.
pub fn settle(world: &mut World, key: &str) {
    let Some(cluster) = world.container.clusters.get_mut(key) else {
        return;
    };
    let mut changes = vec![];
    for pool in &mut cluster.pools {
        for (zone, held) in pool.reserved.iter_mut() {
            let nodes = pool
                .groups
                .get(zone)
                .map(|g| g.suffixes.len() as u32)
                .unwrap_or(0);
            if nodes != held.count {
                changes.push((
                    held.reservation.clone(),
                    held.id.clone(),
                    i64::from(nodes) - i64::from(held.count),
                ));
                held.count = nodes;
            }
        }
    }
    for (path, id, delta) in changes {
        compute::add_in_use(&mut world.compute, &path, &id, delta);
    }
}

/// Gives back everything a pool holds (its VMs are deleted).
pub fn release(world: &mut World, pool: &NodePool) {
    for held in pool.reserved.values() {
        compute::add_in_use(
            &mut world.compute,
            &held.reservation,
            &held.id,
            -i64::from(held.count),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compute_cuts_the_affinity_at_100_characters() {
        assert_eq!(COMPUTE_AFFINITY.chars().count(), 100);
        let full = "{  \"consumeReservationType\": \"SPECIFIC_ALLOCATION\",  \"key\": \
                    \"compute.googleapis.com/reservation-name\",  \"values\": [\"r\"]}";
        assert!(full.starts_with(COMPUTE_AFFINITY));
    }

    #[test]
    fn values_name_a_reservation_in_a_project() {
        let config = |value: &str| {
            serde_json::json!({"reservationAffinity": {
                "consumeReservationType": "SPECIFIC_RESERVATION", "key": KEY, "values": [value]}})
        };
        let place = |value: &str| named("p", &config(value)).unwrap().unwrap().place;
        assert_eq!(place("r"), Some(("p".into(), "r".into())));
        assert_eq!(
            place("projects/q/reservations/r"),
            Some(("q".into(), "r".into()))
        );
        assert_eq!(
            place("projects/q/reservations/r/reservationBlocks/b"),
            Some(("q".into(), "r".into()))
        );
        assert_eq!(place("r/reservationBlocks/b"), None);
        let any = serde_json::json!({"reservationAffinity": {"consumeReservationType": "ANY_RESERVATION"}});
        assert!(named("p", &any).unwrap().is_none());
        let two = serde_json::json!({"reservationAffinity": {
            "consumeReservationType": "SPECIFIC_RESERVATION", "key": KEY, "values": ["a", "b"]}});
        assert!(named("p", &two).is_err());
    }
}
