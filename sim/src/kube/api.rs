//! The Kubernetes API proper: discovery, objects, server-side apply (to be implemented).

use super::server::KubeCtx;
use axum::Router;
use axum::extract::State;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde_json::json;

pub fn router() -> Router<KubeCtx> {
    Router::new()
        .route("/version", get(version))
        .route("/healthz", get(|| async { "ok" }))
}

async fn version(State(cx): State<KubeCtx>) -> Response {
    let version = cx
        .shared
        .read_world(|w, _| w.kube.cluster(&cx.key).map(|c| c.version.clone()))
        .unwrap_or_default();
    axum::Json(json!({ "gitVersion": format!("v{version}"), "platform": "linux/amd64" }))
        .into_response()
}
