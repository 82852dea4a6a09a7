//! The HTTPS front of each cluster's Kubernetes API server: TLS with the cluster's certificate,
//! bearer-token authentication, "not ready yet" while the cluster is provisioning, and the
//! request log. The API itself is [`super::api::router`].

use super::status::Status;
use crate::server::{LogEntry, Shared, endpoint_template, serve_connection};
use axum::Router;
use axum::extract::{Request, State};
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

/// A running API server; dropping or stopping it closes the listener.
#[derive(Debug)]
pub struct ServerHandle {
    stop: watch::Sender<bool>,
    pub port: u16,
}

impl ServerHandle {
    pub fn stop(self) {
        let _ = self.stop.send(true);
    }
}

async fn gate(State(cx): State<KubeCtx>, req: Request, next: Next) -> Response {
    let path = req.uri().path().to_string();
    let mut entry = LogEntry {
        seq: 0,
        at: cx.shared.clock.now(),
        api: "kube".to_string(),
        method: req.method().to_string(),
        endpoint: endpoint_template(&path),
        path,
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
    let authorized = match (&cx.shared.config.kube_token, token) {
        (_, None) => false,
        (Some(expected), Some(got)) => expected == got,
        (None, Some(_)) => true,
    };
    let fault = if authorized {
        cx.shared
            .faults
            .lock()
            .transient("kube", req.method().as_str())
    } else {
        None
    };
    entry.fault = fault.map(|k| format!("{k:?}"));
    let ready = cx.shared.read_world(|w, _| w.kube.is_ready(&cx.key));
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
        use crate::faults::TransientKind;
        match fault {
            Some(TransientKind::RateLimit) => Status::failure(
                429,
                "TooManyRequests",
                "too many requests, please try again later",
            )
            .into_response(),
            Some(TransientKind::Unavailable) => Status::failure(
                503,
                "ServiceUnavailable",
                "the server is currently unable to handle the request",
            )
            .into_response(),
            Some(TransientKind::DropBefore) => dropped(),
            Some(TransientKind::DropAfter) => {
                let _ = next.run(req).await;
                dropped()
            }
            None => next.run(req).await,
        }
    };
    cx.shared.persist_if_dirty();
    entry.status = response.status().as_u16();
    cx.shared.record(entry);
    response
}

fn dropped() -> Response {
    let mut response = Response::new(axum::body::Body::empty());
    response
        .extensions_mut()
        .insert(crate::server::DropConnection);
    response
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
    Ok(ServerHandle { stop, port })
}
