//! Disabled APIs refuse every call, as Google's front end refuses them before the API sees them.
//!
//! Each request to a served API is mapped to its service and its consumer project: the project
//! in the path (`/compute/v1/projects/P/...`, `/container/v1/projects/P/...`, ...), for Cloud
//! Storage the bucket's project or, for bucket lists and inserts, the `project` query parameter.
//! When that service is not enabled for that project the request is answered, without reaching
//! the API, with Google's SERVICE_DISABLED error: the body of Google's API design guide
//! (<https://cloud.google.com/apis/design/errors>, the `ErrorInfo` / `LocalizedMessage` / `Help`
//! example of a disabled API), with the `metadata` keys (`activationUrl`, `serviceTitle`,
//! `containerInfo`) and the v1 `errors[]` entry (`usageLimits` / `accessNotConfigured` with
//! `extendedHelp`) that real answers of Compute, GKE, Cloud Storage and Drive carry (googleapi's
//! one-line rendering `..., accessNotConfigured` in terraform-provider-google reports):
//!
//! ```json
//! {"error": {"code": 403,
//!   "message": "Cloud Filestore API has not been used in project 123 before or it is disabled. Enable it by visiting https://console.developers.google.com/apis/api/file.googleapis.com/overview?project=123 then retry. If you enabled this API recently, wait a few minutes for the action to propagate to our systems and retry.",
//!   "errors": [{"message": "<the same>", "domain": "usageLimits", "reason": "accessNotConfigured",
//!               "extendedHelp": "https://console.developers.google.com"}],
//!   "status": "PERMISSION_DENIED",
//!   "details": [
//!     {"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "SERVICE_DISABLED",
//!      "domain": "googleapis.com", "metadata": {"service": "file.googleapis.com",
//!      "consumer": "projects/123", "activationUrl": "<the console URL>",
//!      "serviceTitle": "Cloud Filestore API", "containerInfo": "123"}},
//!     {"@type": "type.googleapis.com/google.rpc.LocalizedMessage", "locale": "en-US",
//!      "message": "<the same>"},
//!     {"@type": "type.googleapis.com/google.rpc.Help", "links": [{"description":
//!      "Google developers console API activation", "url": "<the console URL>"}]}]}}
//! ```
//!
//! gcloud recognises the message (`API_ENABLEMENT_REGEX` in its `api_lib/util/api_enablement.py`)
//! and offers to enable the API; with prompts disabled it prints the error. A refused request
//! changes nothing and is logged like any other. A request the API does answer counts as usage of
//! the service by the project (see `services.disable`'s usage check).

use super::catalogue;
use crate::error::GcpError;
use crate::http::Query;
use crate::shared::Shared;
use crate::world::World;
use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use serde_json::json;
use std::sync::Arc;

/// The service behind a request path of a served API (`None` for Service Usage itself, the
/// admin endpoint and anything else).
pub fn service_of_path(path: &str) -> Option<&'static str> {
    let first = path.trim_start_matches('/').split('/').next().unwrap_or("");
    match first {
        "compute" => Some("compute.googleapis.com"),
        "container" => Some("container.googleapis.com"),
        "file" => Some("file.googleapis.com"),
        "artifactregistry" => Some("artifactregistry.googleapis.com"),
        "cloudquotas" => Some("cloudquotas.googleapis.com"),
        "iam" => Some("iam.googleapis.com"),
        "cloudresourcemanager" => Some("cloudresourcemanager.googleapis.com"),
        "storage" | "upload" | "resumable" | "download" => Some("storage-api.googleapis.com"),
        _ => None,
    }
}

/// The consumer project of a request to `service` as it appears in the request: the segment
/// after `projects/` (for IAM's `projects/-`, the project of the account's email), or for Cloud Storage the bucket's project (`None` for a bucket that does
/// not exist: the API answers 404) or the `project` parameter of a bucket list or insert.
pub fn consumer_segment(world: &World, path: &str, query: &Query) -> Option<String> {
    let segments: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    if let Some(i) = segments.iter().position(|s| *s == "projects") {
        // `projects/p:getIamPolicy` names project `p`.
        let project = segments
            .get(i + 1)
            .map(|p| p.split(':').next().unwrap_or(p))?;
        if project == "-" {
            // IAM's `projects/-/serviceAccounts/EMAIL`: the account's project, when its email
            // tells it.
            return segments
                .get(i + 3)
                .filter(|_| segments.get(i + 2) == Some(&"serviceAccounts"))
                .and_then(|email| {
                    crate::iam::project_of_email(&crate::storage::percent_decode(email))
                });
        }
        return Some(project.to_string());
    }
    match segments.iter().position(|s| *s == "b") {
        Some(i) => match segments.get(i + 1) {
            Some(bucket) => world
                .storage
                .buckets
                .get(*bucket)
                .map(|b| b.project.clone()),
            None => query.get("project").map(str::to_string),
        },
        None => None,
    }
}

/// Google's answer to a call of `service` by a project (number `number`) that has not enabled it.
pub fn service_disabled(number: &str, service: &str) -> GcpError {
    let title = catalogue::info(service).map_or(service, |s| s.title);
    let url = format!(
        "https://console.developers.google.com/apis/api/{service}/overview?project={number}"
    );
    let message = format!(
        "{title} has not been used in project {number} before or it is disabled. Enable it by visiting {url} then retry. If you enabled this API recently, wait a few minutes for the action to propagate to our systems and retry."
    );
    GcpError::new(
        403,
        "PERMISSION_DENIED",
        "accessNotConfigured",
        message.clone(),
    )
    .with_domain("usageLimits")
    .with_extended_help("https://console.developers.google.com")
    .with_detail(json!({
        "@type": "type.googleapis.com/google.rpc.ErrorInfo",
        "reason": "SERVICE_DISABLED",
        "domain": "googleapis.com",
        "metadata": {
            "service": service,
            "consumer": format!("projects/{number}"),
            "activationUrl": url,
            "serviceTitle": title,
            "containerInfo": number,
        },
    }))
    .with_detail(json!({
        "@type": "type.googleapis.com/google.rpc.LocalizedMessage",
        "locale": "en-US",
        "message": message,
    }))
    .with_detail(json!({
        "@type": "type.googleapis.com/google.rpc.Help",
        "links": [{
            "description": "Google developers console API activation",
            "url": url,
        }],
    }))
}

/// The middleware: refuses calls to disabled APIs, records usage of enabled ones.
pub async fn enforce(State(shared): State<Arc<Shared>>, req: Request, next: Next) -> Response {
    let path = req.uri().path().to_string();
    let Some(service) = service_of_path(&path) else {
        return next.run(req).await;
    };
    let query = Query::parse(req.uri().query());
    let refused = shared.read_world(|world, _| {
        let segment = consumer_segment(world, &path, &query)?;
        let project = super::resolve(world, &segment);
        if world.serviceusage.is_enabled(&project, service) {
            Some(Ok(project))
        } else {
            Some(Err(super::number(world, &project)))
        }
    });
    match refused {
        None => next.run(req).await,
        Some(Err(number)) => service_disabled(&number, service).into_response(),
        Some(Ok(project)) => {
            let response = next.run(req).await;
            // Usage is kept without marking the world dirty: it is saved with the next change
            // or when the simulator stops, so reads stay reads.
            let now = shared.clock.now();
            shared
                .world
                .lock()
                .serviceusage
                .note_usage(&project, service, now);
            response
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_map_to_services() {
        assert_eq!(
            service_of_path("/compute/v1/projects/p/global/networks"),
            Some("compute.googleapis.com")
        );
        assert_eq!(
            service_of_path("/upload/storage/v1/b/x/o"),
            Some("storage-api.googleapis.com")
        );
        assert_eq!(
            service_of_path("/serviceusage/v1/projects/p/services"),
            None
        );
        assert_eq!(service_of_path("/_sim/inventory"), None);
    }

    #[test]
    fn consumers_of_iam_paths() {
        let world = World::new(1, crate::clock::default_start());
        let q = Query::default();
        let seg = |path: &str| consumer_segment(&world, path, &q);
        assert_eq!(
            seg("/iam/v1/projects/p1/serviceAccounts").as_deref(),
            Some("p1")
        );
        assert_eq!(
            seg("/iam/v1/projects/-/serviceAccounts/sa-1@p2.iam.gserviceaccount.com").as_deref(),
            Some("p2")
        );
        assert_eq!(
            seg("/iam/v1/projects/-/serviceAccounts/12-compute@developer.gserviceaccount.com")
                .as_deref(),
            Some("12")
        );
        assert_eq!(
            seg("/iam/v1/projects/-/serviceAccounts/x@example.com"),
            None
        );
        assert_eq!(
            seg("/cloudresourcemanager/v1/projects/p3:getIamPolicy").as_deref(),
            Some("p3")
        );
        assert_eq!(
            service_of_path("/iam/v1/projects/p/serviceAccounts"),
            Some("iam.googleapis.com")
        );
    }

    #[test]
    fn disabled_error_has_googles_shape() {
        let body = service_disabled("123", "file.googleapis.com").body();
        let error = &body["error"];
        assert_eq!(error["code"], 403);
        assert_eq!(error["status"], "PERMISSION_DENIED");
        assert_eq!(
            error["message"],
            "Cloud Filestore API has not been used in project 123 before or it is disabled. Enable it by visiting https://console.developers.google.com/apis/api/file.googleapis.com/overview?project=123 then retry. If you enabled this API recently, wait a few minutes for the action to propagate to our systems and retry."
        );
        assert_eq!(error["errors"][0]["reason"], "accessNotConfigured");
        assert_eq!(error["errors"][0]["domain"], "usageLimits");
        assert_eq!(
            error["errors"][0]["extendedHelp"],
            "https://console.developers.google.com"
        );
        let info = &error["details"][0];
        assert_eq!(info["@type"], "type.googleapis.com/google.rpc.ErrorInfo");
        assert_eq!(info["reason"], "SERVICE_DISABLED");
        assert_eq!(info["domain"], "googleapis.com");
        assert_eq!(info["metadata"]["consumer"], "projects/123");
        assert_eq!(info["metadata"]["containerInfo"], "123");
        assert_eq!(info["metadata"]["serviceTitle"], "Cloud Filestore API");
        assert_eq!(
            error["details"][2]["links"][0]["url"],
            "https://console.developers.google.com/apis/api/file.googleapis.com/overview?project=123"
        );
    }
}
