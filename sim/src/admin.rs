//! The admin endpoint, outside Google's paths: `/_sim/...`.
//!
//! | route | what |
//! |---|---|
//! | `GET /_sim/health` | `{"status":"ok"}` |
//! | `GET /_sim/inventory` | every resource of every API and every Kubernetes object |
//! | `GET /_sim/requests` | the request log and per-endpoint counts; `DELETE` clears it |
//! | `GET /_sim/clock` | simulated time: `now_ms` since the world's epoch and `now`, the instant it stands for (RFC 3339; a3ctl's clock in the sandbox, `A3CTL_CLOCK_ENDPOINT`); `POST /_sim/clock/advance?seconds=N` moves it |
//! | `GET /_sim/workloads` | what NCCL tests report ([`crate::kube::controllers::runs`]) and how other containers end (`outcomes`, [`crate::kube::controllers::outcomes`]); `PUT` replaces it (JSON, the world file's `[workloads]` fields over the defaults), for the tests that end from then on |
//! | `GET /_sim/faults` | fault configuration, injected counts, fired tripwires (`tripped`) and held requests (`held`); `PUT` replaces it (JSON), releasing held requests |

use crate::clock::ClockMode;
use crate::faults::FaultConfig;
use crate::http::{Query, json};
use crate::kube::controllers::runs::WorkloadSpec;
use crate::shared::{RequestLog, Shared};
use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::json;
use std::sync::Arc;

pub fn router() -> Router<Arc<Shared>> {
    Router::new()
        .route(
            "/_sim/health",
            get(|| async { json(json!({"status": "ok"})) }),
        )
        .route("/_sim/inventory", get(inventory))
        .route("/_sim/requests", get(requests).delete(clear_requests))
        .route("/_sim/clock", get(clock))
        .route("/_sim/clock/advance", post(advance))
        .route("/_sim/faults", get(faults).put(put_faults))
        .route("/_sim/workloads", get(workloads).put(put_workloads))
}

async fn inventory(State(shared): State<Arc<Shared>>) -> Response {
    json(shared.inventory())
}

async fn requests(State(shared): State<Arc<Shared>>) -> Response {
    json(serde_json::to_value(&*shared.log.lock()).unwrap_or_default())
}

async fn clear_requests(State(shared): State<Arc<Shared>>) -> Response {
    *shared.log.lock() = RequestLog::default();
    StatusCode::NO_CONTENT.into_response()
}

async fn clock(State(shared): State<Arc<Shared>>) -> Response {
    let mode = match shared.clock.mode() {
        ClockMode::Manual => json!({"manual": true}),
        ClockMode::Scaled { scale } => json!({"scale": scale}),
    };
    let now = shared.clock.now();
    let instant = shared.world.lock().instant(now);
    json(json!({
        "now_ms": now.0,
        "now": instant.to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
        "mode": mode,
    }))
}

async fn advance(State(shared): State<Arc<Shared>>, query: Query) -> Response {
    let Some(secs) = query
        .get("seconds")
        .and_then(|s| s.parse::<f64>().ok())
        .filter(|s| *s >= 0.0)
    else {
        return (
            StatusCode::BAD_REQUEST,
            json(json!({"error": "pass ?seconds=N with N >= 0"})),
        )
            .into_response();
    };
    let now = shared.clock.advance((secs * 1000.0) as u64);
    shared.with_world(|_, _| ());
    shared.persist_if_dirty();
    json(json!({"now_ms": now.0}))
}

async fn faults(State(shared): State<Arc<Shared>>) -> Response {
    let held = shared.held.load(std::sync::atomic::Ordering::SeqCst);
    let state = shared.faults.lock();
    json(json!({
        "config": state.config,
        "injected": state.injected,
        "tripped": state.tripped,
        "held": held,
    }))
}

async fn put_faults(State(shared): State<Arc<Shared>>, body: Bytes) -> Response {
    let config: FaultConfig = match serde_json::from_slice(&body) {
        Ok(c) => c,
        Err(e) => {
            return (
                StatusCode::BAD_REQUEST,
                json(json!({"error": e.to_string()})),
            )
                .into_response();
        }
    };
    if let Err(e) = config.check() {
        return (StatusCode::BAD_REQUEST, json(json!({"error": e}))).into_response();
    }
    shared.faults.lock().replace(config, shared.config.seed);
    StatusCode::NO_CONTENT.into_response()
}

async fn workloads(State(shared): State<Arc<Shared>>) -> Response {
    json(serde_json::to_value(&*shared.workloads.lock()).unwrap_or_default())
}

/// Replaces the NCCL settings. The world is first brought to the current time, so tests that
/// ended before the change keep what they reported.
async fn put_workloads(State(shared): State<Arc<Shared>>, body: Bytes) -> Response {
    let spec: WorkloadSpec = match serde_json::from_slice(&body) {
        Ok(s) => s,
        Err(e) => {
            return (
                StatusCode::BAD_REQUEST,
                json(json!({"error": e.to_string()})),
            )
                .into_response();
        }
    };
    if let Err(e) = spec.check() {
        return (StatusCode::BAD_REQUEST, json(json!({"error": e}))).into_response();
    }
    shared.with_world(|_, _| ());
    *shared.workloads.lock() = spec.resolve();
    shared.persist_if_dirty();
    json(serde_json::to_value(&*shared.workloads.lock()).unwrap_or_default())
}
