//! `regions.get`, `regions.list` and `projects.get`: the simulated regions and project with their
//! quotas (<https://cloud.google.com/compute/docs/reference/rest/v1/regions>,
//! <https://cloud.google.com/compute/docs/reference/rest/v1/projects/get>).
//!
//! A region is the v1 `Region` resource (`compute#region`: `id`, `creationTimestamp`, `name`,
//! `description`, `status` `UP`, `zones` as URLs, `quotas`, `selfLink`, `supportsPzs`); a project
//! the v1 `Project` resource (`compute#project`: `id`, `name`, `creationTimestamp`,
//! `commonInstanceMetadata`, `defaultServiceAccount`, `defaultNetworkTier`,
//! `xpnProjectStatus`, `quotas`, `selfLink`). `quotas` is `[{metric, limit, usage}]` with
//! `limit` and `usage` as JSON numbers (the schema's `double`): the regional metrics in a region,
//! the project-wide ones in the project, each with its limit in force and the usage computed from
//! the world ([`crate::quotas`]). Every project exists (there is no project lifecycle); an unknown
//! region is 404 `notFound`.
//! Machine and accelerator types are [`super::machine_types`].

use super::{link, not_found};
use crate::error::GcpResult;
use crate::geo;
use crate::http::{self, Query};
use crate::quotas;
use crate::shared::Shared;
use crate::world::World;
use axum::Router;
use axum::extract::{Path, State};
use axum::response::Response;
use axum::routing::get;
use serde_json::{Value, json};
use std::sync::Arc;

pub fn router() -> Router<Arc<Shared>> {
    let p = "/compute/v1/projects/{project}";
    Router::new()
        .route(p, get(get_project))
        .route(&format!("{p}/regions"), get(list_regions))
        .route(&format!("{p}/regions/{{region}}"), get(get_region))
}

/// A stable numeric id derived from `text` (uint64 as a decimal string).
pub(super) fn stable_id(text: &str) -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for b in text.bytes() {
        hash ^= u64::from(b);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    (hash >> 1).to_string()
}

/// The region as `regions.get` returns it.
fn region(world: &World, shared: &Shared, project: &str, region: &str) -> Value {
    let zones: Vec<String> = geo::zones_of(region)
        .iter()
        .map(|z| link(&format!("projects/{project}/zones/{z}")))
        .collect();
    json!({
        "kind": "compute#region",
        "id": stable_id(region),
        "creationTimestamp": "1969-12-31T16:00:00.000-08:00",
        "name": region,
        "description": region,
        "status": "UP",
        "zones": zones,
        "quotas": quotas::legacy_quotas(world, &shared.config.quotas, project, Some(region)),
        "selfLink": link(&format!("projects/{project}/regions/{region}")),
        "supportsPzs": false,
    })
}

async fn get_region(
    State(shared): State<Arc<Shared>>,
    Path((project, name)): Path<(String, String)>,
) -> GcpResult<Response> {
    if !geo::region_exists(&name) {
        return Err(not_found(&format!("projects/{project}/regions/{name}")));
    }
    shared.read_world(|world, _| Ok(http::json(region(world, &shared, &project, &name))))
}

async fn list_regions(
    State(shared): State<Arc<Shared>>,
    Path(project): Path<String>,
    query: Query,
) -> GcpResult<Response> {
    shared.read_world(|world, _| {
        let items = geo::REGIONS
            .iter()
            .map(|(name, _)| (name.to_string(), region(world, &shared, &project, name)))
            .collect();
        super::list_page(
            "compute#regionList",
            &format!("projects/{project}/regions"),
            items,
            &query,
            crate::paging::cap(&shared),
        )
    })
}

async fn get_project(
    State(shared): State<Arc<Shared>>,
    Path(project): Path<String>,
) -> GcpResult<Response> {
    shared.read_world(|world, _| {
        let number = world.project_number(&project);
        let metadata = json!({ "kind": "compute#metadata" });
        Ok(http::json(json!({
            "kind": "compute#project",
            "id": stable_id(&format!("project/{project}")),
            "creationTimestamp": "1969-12-31T16:00:00.000-08:00",
            "name": project,
            "commonInstanceMetadata": {
                "kind": metadata["kind"],
                "fingerprint": super::fingerprint(&metadata),
            },
            "quotas": quotas::legacy_quotas(world, &shared.config.quotas, &project, None),
            "selfLink": link(&format!("projects/{project}")),
            "defaultServiceAccount": format!("{number}-compute@developer.gserviceaccount.com"),
            "xpnProjectStatus": "UNSPECIFIED_XPN_PROJECT_STATUS",
            "defaultNetworkTier": "PREMIUM",
        })))
    })
}
