//! The HTTPS front of each cluster's Kubernetes API server: TLS with the cluster's certificate,
//! bearer-token authentication ([`super::auth`]), "not ready yet" while the cluster is provisioning, fault
//! injection (transient faults in kube-apiserver's own shapes, scripted drops, tripwires; see
//! [`crate::faults`]) and the request log. The API itself is [`super::api::router`].

use super::admission::GuardingHook;
use super::status::Status;
use crate::faults::{RequestInfo, TransientKind};
pub use crate::shared::ServerHandle;
use crate::shared::{LogEntry, Shared, run_request, serve_connection};
use axum::Router;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, Method, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use std::sync::Arc;
use tokio::sync::watch;

/// What a cluster's router handlers get as state.
#[derive(Clone)]
pub struct KubeCtx {
    pub shared: Arc<Shared>,
    /// `projects/P/locations/L/clusters/C`.
    pub key: Arc<str>,
}

async fn gate(State(cx): State<KubeCtx>, req: Request, next: Next) -> Response {
    let path = req.uri().path().to_string();
    let method = req.method().clone();
    let endpoint = cx.shared.endpoint_template(&path);
    let mut entry = LogEntry {
        seq: 0,
        at: cx.shared.clock.now(),
        api: "kube".to_string(),
        method: method.to_string(),
        endpoint: endpoint.clone(),
        path: path.clone(),
        status: 0,
        fault: None,
    };
    let token = req
        .headers()
        .get(axum::http::header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::trim)
        .filter(|t| !t.is_empty());
    let (ready, own) = cx.shared.read_world(|w, _| {
        (
            w.kube.is_ready(&cx.key),
            w.kube
                .cluster(&cx.key)
                .map(|c| super::auth::cluster_token(&c.certs, &cx.key)),
        )
    });
    let authorized = super::auth::authorized(
        token,
        own.as_deref(),
        cx.shared.config.kube_token.as_deref(),
    );
    let response = if !authorized {
        Status::failure(401, "Unauthorized", "Unauthorized").into_response()
    } else if !ready {
        Status::failure(
            503,
            "ServiceUnavailable",
            "the cluster's control plane is still being provisioned",
        )
        .into_response()
    } else {
        // The webhook kinds can only hit a write that a webhook guards.
        let guard = if webhook_faults_possible(&cx, &method) {
            super::api::webhook_guard(&cx, &method, &path)
        } else {
            None
        };
        let applicable: Vec<TransientKind> = TransientKind::ALL
            .into_iter()
            .filter(|k| !k.is_webhook() || guard.is_some())
            .collect();
        let request = RequestInfo {
            api: "kube",
            scope: &cx.key,
            method: method.as_str(),
            path: &path,
            endpoint: &endpoint,
        };
        let decision = cx.shared.faults.lock().decide(&request, &applicable);
        crate::shared::round_trip(&cx.shared, "request.kube").await;
        let (response, fault) = run_request(&cx.shared, decision, req, next, |kind| {
            transient_response(kind, guard.as_ref())
        })
        .await;
        entry.fault = fault;
        response
    };
    cx.shared.persist_if_dirty();
    entry.status = response.status().as_u16();
    cx.shared.record(entry);
    response
}

/// Whether webhook faults could hit a `method` request here (saves looking for a guard).
fn webhook_faults_possible(cx: &KubeCtx, method: &Method) -> bool {
    if !matches!(*method, Method::POST | Method::PUT | Method::PATCH) {
        return false;
    }
    let faults = cx.shared.faults.lock();
    faults.config.transient.get("kube").is_some_and(|t| {
        t.rate > 0.0 && (t.kinds.is_empty() || t.kinds.iter().any(|k| k.is_webhook()))
    })
}

/// kube-apiserver's answer for a transient fault (see [`crate::faults`] for the sources).
fn transient_response(kind: TransientKind, guard: Option<&GuardingHook>) -> Response {
    match (kind, guard) {
        (TransientKind::RateLimit, _) => {
            // The max-in-flight / priority-and-fairness filters: `http.Error` with Retry-After.
            let mut response = (
                StatusCode::TOO_MANY_REQUESTS,
                "Too many requests, please try again later.\n",
            )
                .into_response();
            let headers = response.headers_mut();
            for (name, value) in [
                ("content-type", "text/plain; charset=utf-8"),
                ("x-content-type-options", "nosniff"),
                ("retry-after", "1"),
                (
                    "x-kubernetes-pf-flowschema-uid",
                    "7d3c6c4e-2b1a-4f6e-9c61-1f0b7e4f3a01",
                ),
                (
                    "x-kubernetes-pf-prioritylevel-uid",
                    "0a6b9a5e-8f2d-4c1b-b3e7-5d2c9e8f4b02",
                ),
            ] {
                headers.insert(name, HeaderValue::from_static(value));
            }
            response
        }
        (TransientKind::ServerError, _) => {
            Status::failure(500, "", "etcdserver: request timed out").into_response()
        }
        (TransientKind::WebhookNoEndpoints, Some(hook)) => hook
            .call_error(&format!(
                "no endpoints available for service \"{}\"",
                hook.service_name
            ))
            .into_response(),
        (TransientKind::WebhookTimeout, Some(hook)) => {
            hook.call_error("context deadline exceeded").into_response()
        }
        _ => Status::failure(
            503,
            "ServiceUnavailable",
            "the server is currently unable to handle the request",
        )
        .into_response(),
    }
}

/// Serves the cluster `key` on `listener` with TLS until stopped.
pub fn spawn(
    shared: &Arc<Shared>,
    key: &str,
    listener: std::net::TcpListener,
    tls: Arc<rustls::ServerConfig>,
) -> std::io::Result<ServerHandle> {
    listener.set_nonblocking(true)?;
    let port = listener.local_addr()?.port();
    let listener = tokio::net::TcpListener::from_std(listener)?;
    let cx = KubeCtx {
        shared: shared.clone(),
        key: Arc::from(key),
    };
    let app: Router = super::api::router()
        .layer(middleware::from_fn_with_state(cx.clone(), gate))
        .with_state(cx);
    let acceptor = tokio_rustls::TlsAcceptor::from(tls);
    let (stop, mut stopped) = watch::channel(false);
    tokio::spawn(async move {
        loop {
            tokio::select! {
                _ = stopped.changed() => break,
                accepted = listener.accept() => {
                    let Ok((stream, _)) = accepted else { continue };
                    let _ = stream.set_nodelay(true);
                    let acceptor = acceptor.clone();
                    let app = app.clone();
                    tokio::spawn(async move {
                        if let Ok(tls) = acceptor.accept(stream).await {
                            serve_connection(tls, app);
                        }
                    });
                }
            }
        }
    });
    Ok(ServerHandle::new(stop, port))
}
