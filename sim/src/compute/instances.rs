//! The VMs of GKE node pools, read-only: `instances.get`, `list` and `aggregatedList`
//! (<https://cloud.google.com/compute/docs/reference/rest/v1/instances>), which `gcloud compute
//! instances list` and `describe` read.
//!
//! Every GKE node is a Compute instance in its pool's managed instance group
//! ([`super::instance_group_managers`]); like the groups, the instances are not stored but derived
//! from the world's node pools on each read ([`crate::instance_groups::vms`]), so they
//! follow a pool through create, resize, an upgrade's surge nodes and delete. An instance is v1
//! `Instance` (`compute#instance`) per the v1 discovery document (revision 20261106), with what a
//! user reads of a node:
//! - `name` is the node's (`gke-<cluster>-<pool>-<hash>-<suffix>`, GKE's naming of MIG VMs), in
//!   the zone of its group, `status` `RUNNING`, `machineType` as a zonal link;
//! - `networkInterfaces`: `nic0` in the cluster's network and subnetwork, then one per additional
//!   node network of the pool (`nic1` ...; `nicType` `GVNIC`, or `MRDMA` on a RoCE network), each
//!   with its `networkIP` in its subnetwork's primary range
//!   ([`crate::container::node_addresses`]), the address the Kubernetes Node shows;
//! - `labels`: `goog-gke-node`, `goog-k8s-cluster-name`, `goog-k8s-cluster-location` and
//!   `goog-k8s-node-pool-name` — the labels GKE puts on node VMs (GKE's cost-allocation docs,
//!   <https://cloud.google.com/kubernetes-engine/docs/how-to/cost-allocations>, name the
//!   `goog-k8s-*` keys; `goog-gke-node` is on node VMs in Terraform state dumps of them, and
//!   scripts select a pool's VMs with `gcloud compute instances list
//!   --filter=labels.goog-k8s-node-pool-name=POOL`); the network tag `gke-<cluster>-<hash>-node`;
//!   the `created-by` metadata item naming the VM's group (how a MIG marks its VMs,
//!   <https://cloud.google.com/compute/docs/instance-groups/getting-info-about-migs>);
//! - `reservationAffinity` from the pool's (Compute's default `ANY_RESERVATION` otherwise) and
//!   `resourceStatus.reservationConsumptionInfo.consumedReservation` for a pool that consumes a
//!   specific reservation; `resourcePolicies` with the pool's compact placement policy;
//! - `scheduling` (`onHostMaintenance` `TERMINATE` for VMs with GPUs, which cannot live-migrate,
//!   <https://cloud.google.com/compute/docs/instances/host-maintenance-overview>;
//!   `provisioningModel` `SPOT` for Spot pools); `serviceAccounts` with the nodes' account;
//! - `guestAccelerators`: a pool's attached GPUs, or the GPUs an accelerator-optimized machine
//!   type (A3, A4) has built in. That Compute lists built-in GPUs here is a guess (the
//!   reference documents the field for attached GPUs only).
//!
//! **Read-only.** Like the groups, a node VM is GKE's: any other method of Google's on these paths
//! (`instances.delete`, `.../stop`, `.../setLabels` ...) answers 501 "not simulated", and a method
//! Google does not have there its 404 ([`crate::discovery`]). On Google a user may delete or stop a
//! MIG's VM (the group recreates it); the simulator does not model that, so such a call fails at
//! once.

// GUESS(instance-built-in-gpus): an A3 or A4 instance lists the GPUs its machine type has built in under `guestAccelerators`
use super::regions::stable_id;
use super::{check_zone, link, not_found};
use crate::error::GcpResult;
use crate::http::{self, Query};
use crate::instance_groups::{self, Vm};
use crate::shared::Shared;
use axum::Router;
use axum::extract::{Path, State};
use axum::response::Response;
use axum::routing::get;
use serde_json::{Value, json};
use std::sync::Arc;

const SEGMENT: &str = "instances";

pub fn router() -> Router<Arc<Shared>> {
    let zone = "/compute/v1/projects/{project}/zones/{zone}";
    Router::new()
        .route(&format!("{zone}/{SEGMENT}"), get(list))
        .route(&format!("{zone}/{SEGMENT}/{{name}}"), get(get_one))
        .route(
            &format!("/compute/v1/projects/{{project}}/aggregated/{SEGMENT}"),
            get(aggregated),
        )
}

/// `projects/p/zones/z/instances/n`.
pub fn path_of(vm: &Vm) -> String {
    format!(
        "projects/{}/zones/{}/{SEGMENT}/{}",
        vm.project, vm.zone, vm.name
    )
}

/// The instance as `instances.get` returns it.
pub fn render(vm: &Vm) -> Value {
    let path = path_of(vm);
    let zone = format!("projects/{}/zones/{}", vm.project, vm.zone);
    let nics: Vec<Value> = vm
        .nics
        .iter()
        .enumerate()
        .map(|(i, nic)| {
            let mut body = json!({
                "kind": "compute#networkInterface",
                "network": link(&nic.network),
                "subnetwork": link(&nic.subnetwork),
                "networkIP": nic.ip,
                "name": format!("nic{i}"),
                "stackType": "IPV4_ONLY",
                "nicType": nic.nic_type,
            });
            body["fingerprint"] = json!(super::fingerprint(&body));
            body
        })
        .collect();
    let accelerators = accelerators(vm);
    let mut scheduling = json!({
        "onHostMaintenance": if accelerators.is_some() { "TERMINATE" } else { "MIGRATE" },
        "automaticRestart": !vm.spot,
        "preemptible": false,
        "provisioningModel": if vm.spot { "SPOT" } else { "STANDARD" },
    });
    if vm.spot {
        scheduling["instanceTerminationAction"] = json!("STOP");
    }
    let labels = json!({
        "goog-gke-node": "",
        "goog-k8s-cluster-name": vm.cluster,
        "goog-k8s-cluster-location": vm.location,
        "goog-k8s-node-pool-name": vm.pool,
    });
    let tags = json!({"items": [vm.tag]});
    let metadata = json!({
        "kind": "compute#metadata",
        "items": [
            {"key": "cluster-name", "value": vm.cluster},
            {"key": "cluster-location", "value": vm.location},
            {"key": "created-by", "value": format!("{zone}/instanceGroupManagers/{}", vm.group)},
        ],
    });
    let affinity = match &vm.affinity {
        Some((kind, key, values)) if !key.is_empty() => {
            json!({"consumeReservationType": kind, "key": key, "values": values})
        }
        Some((kind, _, _)) => json!({"consumeReservationType": kind}),
        None => json!({"consumeReservationType": "ANY_RESERVATION"}),
    };
    let mut body = json!({
        "kind": "compute#instance",
        "id": stable_id(&path),
        "creationTimestamp": vm.created,
        "name": vm.name,
        "tags": with_fingerprint(tags),
        "machineType": link(&format!("{zone}/machineTypes/{}", vm.machine_type)),
        "status": "RUNNING",
        "zone": link(&zone),
        "canIpForward": true,
        "networkInterfaces": nics,
        "metadata": with_fingerprint(metadata),
        "serviceAccounts": [{
            "email": vm.service_account,
            "scopes": ["https://www.googleapis.com/auth/cloud-platform"],
        }],
        "selfLink": link(&path),
        "scheduling": scheduling,
        "labels": labels.clone(),
        "labelFingerprint": super::fingerprint(&labels),
        "startRestricted": false,
        "deletionProtection": false,
        "reservationAffinity": affinity,
    });
    if let Some((accelerator, count)) = accelerators {
        body["guestAccelerators"] = json!([{
            "acceleratorType": link(&format!("{zone}/acceleratorTypes/{accelerator}")),
            "acceleratorCount": count,
        }]);
    }
    if let Some(reservation) = &vm.reservation {
        body["resourceStatus"] =
            json!({"reservationConsumptionInfo": {"consumedReservation": link(reservation)}});
    }
    if let Some(policy) = &vm.placement_policy {
        body["resourcePolicies"] = json!([link(policy)]);
    }
    body["fingerprint"] = json!(super::fingerprint(&body));
    body
}

/// A `tags` or `metadata` object with its own `fingerprint`.
fn with_fingerprint(mut value: Value) -> Value {
    value["fingerprint"] = json!(super::fingerprint(&value));
    value
}

/// The GPUs of the VM: those an accelerator-optimized machine type has built in, else those
/// the pool attaches (none for most).
fn accelerators(vm: &Vm) -> Option<(String, u32)> {
    crate::geo::machine_type(&vm.machine_type)
        .and_then(|m| m.accelerator)
        .map(|(kind, count)| (kind.to_string(), count))
        .or_else(|| vm.attached.clone())
}

async fn get_one(
    State(shared): State<Arc<Shared>>,
    Path((project, zone, name)): Path<(String, String, String)>,
) -> GcpResult<Response> {
    check_zone(&zone)?;
    shared.read_world(|world, _| {
        instance_groups::vms_in_zone(world, &project, &zone)
            .iter()
            .find(|vm| vm.name == name)
            .map(|vm| http::json(render(vm)))
            .ok_or_else(|| not_found(&format!("projects/{project}/zones/{zone}/{SEGMENT}/{name}")))
    })
}

async fn list(
    State(shared): State<Arc<Shared>>,
    Path((project, zone)): Path<(String, String)>,
    query: Query,
) -> GcpResult<Response> {
    check_zone(&zone)?;
    let items = shared.read_world(|world, _| {
        instance_groups::vms_in_zone(world, &project, &zone)
            .iter()
            .map(|vm| (vm.name.clone(), render(vm)))
            .collect()
    });
    super::list_page(
        "compute#instanceList",
        &format!("projects/{project}/zones/{zone}/{SEGMENT}"),
        items,
        &query,
        crate::paging::cap(&shared),
    )
}

async fn aggregated(
    State(shared): State<Arc<Shared>>,
    Path(project): Path<String>,
    query: Query,
) -> GcpResult<Response> {
    shared.read_world(|world, _| {
        super::aggregated_page(
            "compute#instanceAggregatedList",
            SEGMENT,
            &project,
            super::zone_scopes(|zone| {
                instance_groups::vms_in_zone(world, &project, zone)
                    .iter()
                    .map(|vm| (vm.name.clone(), render(vm)))
                    .collect()
            }),
            &query,
            crate::paging::cap(&shared),
        )
    })
}
