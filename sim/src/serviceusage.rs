//! Service Usage v1, just `services.get`: gcloud asks whether an API is enabled before some
//! commands (`gcloud container clusters create` checks `container.googleapis.com`). Every API the
//! simulator serves is ENABLED; any other is DISABLED, as in a fresh project.

use crate::error::GcpResult;
use crate::http::json;
use crate::server::Shared;
use crate::storage::buckets::project_number;
use axum::Router;
use axum::extract::Path;
use axum::response::Response;
use axum::routing::get;
use serde_json::json as value;
use std::sync::Arc;

/// The APIs the simulator serves.
pub const ENABLED: &[&str] = &[
    "compute.googleapis.com",
    "container.googleapis.com",
    "file.googleapis.com",
    "artifactregistry.googleapis.com",
    "storage.googleapis.com",
    "storage-api.googleapis.com",
    "serviceusage.googleapis.com",
];

pub fn router() -> Router<Arc<Shared>> {
    Router::new().route(
        "/serviceusage/v1/projects/{project}/services/{service}",
        get(service),
    )
}

async fn service(Path((project, service)): Path<(String, String)>) -> GcpResult<Response> {
    let number = project_number(&project);
    let state = if ENABLED.contains(&service.as_str()) {
        "ENABLED"
    } else {
        "DISABLED"
    };
    Ok(json(value!({
        "name": format!("projects/{number}/services/{service}"),
        "parent": format!("projects/{number}"),
        "config": { "name": service },
        "state": state,
    })))
}
