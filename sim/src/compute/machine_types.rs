//! Machine types and accelerator types: `machineTypes.get`, `list` and `aggregatedList`
//! (<https://cloud.google.com/compute/docs/reference/rest/v1/machineTypes>) and the same three
//! methods of `acceleratorTypes`
//! (<https://cloud.google.com/compute/docs/reference/rest/v1/acceleratorTypes>), served from the
//! catalogue of [`crate::geo`]; both are read-only.
//!
//! A machine type is v1 `MachineType` (`compute#machineType`: `name`, `description`, `guestCpus`,
//! `memoryMb`, `zone` as a bare name, `selfLink`, `isSharedCpu`, `accelerators` of the GPU types);
//! an accelerator type is v1 `AcceleratorType` (`compute#acceleratorType`: `name`, `description`,
//! `zone` as a URL, `selfLink`, `maximumCardsPerInstance`). A zone lists exactly the types it
//! offers ([`geo::zone_offers`]); a type it does not offer is 404 `notFound` there, as Compute
//! answers (`gcloud compute machine-types describe a4-highgpu-8g --zone us-central1-a`), and an
//! unknown zone is 400 `Unknown zone.` Lists page with `maxResults`/`pageToken`
//! ([`super::page`]); `filter` is left to the client, as for every simulated Compute list.
//!
//! The accelerator descriptions are Compute's display names as far as public output shows them
//! (`NVIDIA H100 80GB`, `NVIDIA H100 80GB MEGA`, `NVIDIA H200 141GB`, `NVIDIA B200`); the H200
//! and B200 texts could not be confirmed from a real `describe`. `maximumCardsPerInstance` is the
//! count the type's machine types attach (8).

use super::regions::stable_id;
use super::{check_zone, link, not_found};
use crate::error::GcpResult;
use crate::geo;
use crate::http::{self, Query};
use crate::shared::Shared;
use axum::Router;
use axum::extract::{Path, State};
use axum::response::Response;
use axum::routing::get;
use serde_json::{Value, json};
use std::sync::Arc;

pub fn router() -> Router<Arc<Shared>> {
    let p = "/compute/v1/projects/{project}";
    Router::new()
        .route(
            &format!("{p}/zones/{{zone}}/machineTypes"),
            get(list_machine_types),
        )
        .route(
            &format!("{p}/zones/{{zone}}/machineTypes/{{name}}"),
            get(get_machine_type),
        )
        .route(
            &format!("{p}/aggregated/machineTypes"),
            get(aggregated_machine_types),
        )
        .route(
            &format!("{p}/zones/{{zone}}/acceleratorTypes"),
            get(list_accelerator_types),
        )
        .route(
            &format!("{p}/zones/{{zone}}/acceleratorTypes/{{name}}"),
            get(get_accelerator_type),
        )
        .route(
            &format!("{p}/aggregated/acceleratorTypes"),
            get(aggregated_accelerator_types),
        )
}

/// The machine type `name` as zone `zone` of `project` serves it, if the zone offers it.
pub fn machine_type(project: &str, zone: &str, name: &str) -> Option<Value> {
    let machine = geo::machine_type(name).filter(|_| geo::zone_offers(zone, name))?;
    let path = format!("projects/{project}/zones/{zone}/machineTypes/{name}");
    let mut body = json!({
        "kind": "compute#machineType",
        "id": stable_id(name),
        "creationTimestamp": "1969-12-31T16:00:00.000-08:00",
        "name": name,
        "description": format!("{} vCPUs, {} GB RAM", machine.cpus, machine.memory_mb / 1024),
        "guestCpus": machine.cpus,
        "memoryMb": machine.memory_mb,
        "maximumPersistentDisks": 128,
        "maximumPersistentDisksSizeGb": "263168",
        "zone": zone,
        "selfLink": link(&path),
        "isSharedCpu": matches!(name, "e2-micro" | "e2-small" | "e2-medium"),
    });
    if let Some((accelerator, count)) = machine.accelerator {
        body["accelerators"] =
            json!([{"guestAcceleratorType": accelerator, "guestAcceleratorCount": count}]);
    }
    Some(body)
}

/// The machine types zone `zone` offers, in name order.
fn machine_types_in(project: &str, zone: &str) -> Vec<(String, Value)> {
    let mut names: Vec<String> = geo::machine_types()
        .into_iter()
        .map(|m| m.name)
        .filter(|name| geo::zone_offers(zone, name))
        .collect();
    names.sort();
    names
        .into_iter()
        .filter_map(|name| machine_type(project, zone, &name).map(|body| (name, body)))
        .collect()
}

/// Compute's display name of an accelerator type.
fn accelerator_description(accelerator: &str) -> &'static str {
    match accelerator {
        "nvidia-h100-80gb" => "NVIDIA H100 80GB",
        "nvidia-h100-mega-80gb" => "NVIDIA H100 80GB MEGA",
        "nvidia-h200-141gb" => "NVIDIA H200 141GB",
        "nvidia-b200" => "NVIDIA B200",
        _ => "",
    }
}

/// The accelerator type `name` as zone `zone` of `project` serves it, if a machine type the zone
/// offers carries it.
pub fn accelerator_type(project: &str, zone: &str, name: &str) -> Option<Value> {
    let zones = geo::accelerator_types()
        .into_iter()
        .find(|(accelerator, _)| *accelerator == name)
        .map(|(_, zones)| zones)?;
    if !zones.contains(&zone) {
        return None;
    }
    let cards = geo::GPU_ACCELERATORS
        .iter()
        .filter(|(_, accelerator, _)| *accelerator == name)
        .map(|(_, _, count)| *count)
        .max()
        .unwrap_or(0);
    let path = format!("projects/{project}/zones/{zone}/acceleratorTypes/{name}");
    Some(json!({
        "kind": "compute#acceleratorType",
        "id": stable_id(&format!("acceleratorTypes/{name}")),
        "creationTimestamp": "1969-12-31T16:00:00.000-08:00",
        "name": name,
        "description": accelerator_description(name),
        "zone": link(&format!("projects/{project}/zones/{zone}")),
        "selfLink": link(&path),
        "maximumCardsPerInstance": cards,
    }))
}

/// The accelerator types zone `zone` offers, in name order.
fn accelerator_types_in(project: &str, zone: &str) -> Vec<(String, Value)> {
    let mut names: Vec<&str> = geo::accelerator_types()
        .into_iter()
        .filter(|(_, zones)| zones.contains(&zone))
        .map(|(accelerator, _)| accelerator)
        .collect();
    names.sort_unstable();
    names.dedup();
    names
        .into_iter()
        .filter_map(|name| accelerator_type(project, zone, name).map(|b| (name.to_string(), b)))
        .collect()
}

async fn get_machine_type(
    Path((project, zone, name)): Path<(String, String, String)>,
) -> GcpResult<Response> {
    check_zone(&zone)?;
    machine_type(&project, &zone, &name)
        .map(http::json)
        .ok_or_else(|| {
            not_found(&format!(
                "projects/{project}/zones/{zone}/machineTypes/{name}"
            ))
        })
}

async fn list_machine_types(
    State(shared): State<Arc<Shared>>,
    Path((project, zone)): Path<(String, String)>,
    query: Query,
) -> GcpResult<Response> {
    check_zone(&zone)?;
    super::list_page(
        "compute#machineTypeList",
        &format!("projects/{project}/zones/{zone}/machineTypes"),
        machine_types_in(&project, &zone),
        &query,
        crate::paging::cap(&shared),
    )
}

async fn aggregated_machine_types(
    State(shared): State<Arc<Shared>>,
    Path(project): Path<String>,
    query: Query,
) -> GcpResult<Response> {
    super::aggregated_page(
        "compute#machineTypeAggregatedList",
        "machineTypes",
        &project,
        super::zone_scopes(|zone| machine_types_in(&project, zone)),
        &query,
        crate::paging::cap(&shared),
    )
}

async fn get_accelerator_type(
    Path((project, zone, name)): Path<(String, String, String)>,
) -> GcpResult<Response> {
    check_zone(&zone)?;
    accelerator_type(&project, &zone, &name)
        .map(http::json)
        .ok_or_else(|| {
            not_found(&format!(
                "projects/{project}/zones/{zone}/acceleratorTypes/{name}"
            ))
        })
}

async fn list_accelerator_types(
    State(shared): State<Arc<Shared>>,
    Path((project, zone)): Path<(String, String)>,
    query: Query,
) -> GcpResult<Response> {
    check_zone(&zone)?;
    super::list_page(
        "compute#acceleratorTypeList",
        &format!("projects/{project}/zones/{zone}/acceleratorTypes"),
        accelerator_types_in(&project, &zone),
        &query,
        crate::paging::cap(&shared),
    )
}

async fn aggregated_accelerator_types(
    State(shared): State<Arc<Shared>>,
    Path(project): Path<String>,
    query: Query,
) -> GcpResult<Response> {
    super::aggregated_page(
        "compute#acceleratorTypeAggregatedList",
        "acceleratorTypes",
        &project,
        super::zone_scopes(|zone| accelerator_types_in(&project, zone)),
        &query,
        crate::paging::cap(&shared),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zones_list_only_what_they_offer() {
        let central_b = machine_types_in("p", "us-central1-b");
        assert!(central_b.iter().any(|(n, _)| n == "a3-ultragpu-8g"));
        assert!(central_b.iter().any(|(n, _)| n == "a4-highgpu-8g"));
        assert!(!central_b.iter().any(|(n, _)| n == "a3-megagpu-8g"));
        let a4 = machine_type("p", "us-central1-b", "a4-highgpu-8g").unwrap();
        assert_eq!(a4["guestCpus"], 224);
        assert_eq!(a4["memoryMb"], 4_063_232);
        assert_eq!(a4["accelerators"][0]["guestAcceleratorType"], "nvidia-b200");
        assert!(machine_type("p", "us-central1-a", "a4-highgpu-8g").is_none());
        let accelerators: Vec<String> = accelerator_types_in("p", "us-central1-b")
            .into_iter()
            .map(|(n, _)| n)
            .collect();
        assert_eq!(accelerators, ["nvidia-b200", "nvidia-h200-141gb"]);
        let h200 = accelerator_type("p", "europe-west1-b", "nvidia-h200-141gb").unwrap();
        assert_eq!(h200["maximumCardsPerInstance"], 8);
        assert_eq!(
            h200["zone"],
            "https://www.googleapis.com/compute/v1/projects/p/zones/europe-west1-b"
        );
        assert!(accelerator_type("p", "europe-west1-c", "nvidia-h200-141gb").is_none());
    }
}
