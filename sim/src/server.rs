//! Starting the simulator: the HTTP front door for the Google APIs (the request log, transient
//! faults, persistence after each request), the router of every API in [`crate::apis::ALL`], and
//! the [`SimHandle`] a test or the binary holds. Nothing below imports this module.
//!
//! Connections are served with hyper directly (not `axum::serve`, [`serve_connection`]) so that a
//! "dropped connection" fault can close the socket without sending any response, exactly as a
//! network failure would.

use crate::apis;
use crate::clock::{Clock, ClockMode, SimTime};
use crate::config::SimConfig;
use crate::error::GcpError;
use crate::faults::{FaultConfig, RequestInfo, TransientKind};
use crate::world::World;
use crate::{kube, persist, serviceusage};
use axum::Router;
use axum::extract::{Request, State};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use tokio::net::TcpListener;
use tokio::sync::watch;

pub use crate::shared::{
    DropConnection, LogEntry, RequestLog, Shared, dropped, round_trip, run_request,
    serve_connection,
};

/// Which API a request path belongs to ([`crate::apis::ALL`]).
pub fn api_of(path: &str) -> &'static str {
    crate::shared::api_of(apis::ALL, path)
}

/// `/compute/v1/projects/p/global/networks/n` → `/compute/v1/projects/{}/global/networks/{}`
/// ([`crate::shared::endpoint_template`] over [`crate::apis::ALL`]).
pub fn endpoint_template(path: &str) -> String {
    crate::shared::endpoint_template(apis::ALL, path)
}

/// Logs, faults and answers every Google API request. It runs before routing, so it can name a
/// project number's project in the path ([`crate::project_numbers`]) before the routes see it.
async fn front_door(State(shared): State<Arc<Shared>>, mut req: Request, next: Next) -> Response {
    let path = req.uri().path().to_string();
    let method = req.method().to_string();
    let api = api_of(&path);
    if api == "admin" {
        return next.run(req).await;
    }
    let endpoint = endpoint_template(&path);
    let request = RequestInfo {
        api,
        scope: "",
        method: &method,
        path: &path,
        endpoint: &endpoint,
    };
    let applicable: Vec<TransientKind> = TransientKind::ALL
        .into_iter()
        .filter(|k| k.applies_to_api(api))
        .collect();
    let decision = shared.faults.lock().decide(&request, &applicable);
    let numbered = crate::project_numbers::resolve(&shared, &mut req);
    round_trip(&shared, "request.google").await;
    let mut entry = LogEntry {
        seq: 0,
        at: shared.clock.now(),
        api: api.to_string(),
        method,
        endpoint,
        path,
        status: 0,
        fault: None,
    };
    let (response, fault) = run_request(&shared, decision, req, next, |kind| match kind {
        TransientKind::RateLimit => GcpError::rate_limited().into_response(),
        TransientKind::ServerError => GcpError::server_error().into_response(),
        _ => GcpError::unavailable().into_response(),
    })
    .await;
    // A handler that does not serve this method or verb on its route answers as Google would.
    let response = if response
        .extensions()
        .get::<crate::error::Unrouted>()
        .is_some()
    {
        crate::discovery::unserved(&entry.method, &entry.path).into_response()
    } else {
        response
    };
    let response = match &numbered {
        Some(resolved) => crate::project_numbers::echo(response, resolved).await,
        None => response,
    };
    shared.persist_if_dirty();
    entry.fault = fault;
    entry.status = response.status().as_u16();
    shared.record(entry);
    response
}

/// A request no route serves, or a method its route does not serve (axum would answer an empty
/// 405): 501 for a method Google's discovery documents list, Google's 404 for any other method
/// and URL ([`crate::discovery`]).
async fn fallback(req: Request) -> GcpError {
    crate::discovery::unserved(req.method().as_str(), req.uri().path())
}

/// The router for every Google API and the admin endpoint, behind the front door.
pub fn router(shared: Arc<Shared>) -> Router {
    let routes = apis::ALL
        .iter()
        .filter_map(|api| api.router)
        .fold(Router::new(), |routes, router| routes.merge(router()))
        .fallback(fallback)
        .method_not_allowed_fallback(fallback)
        // Bodies are checked against the discovery documents before any handler runs.
        .layer(middleware::from_fn(crate::discovery::schema::check))
        // Inside the front door: a refused call is logged, and faults apply to it, as to any.
        .layer(middleware::from_fn_with_state(
            shared.clone(),
            serviceusage::enforce::enforce,
        ))
        .with_state(shared.clone());
    // The front door wraps the routes whole, so it runs before routing (a layer on `routes`
    // would run after it).
    Router::new()
        .fallback_service(routes)
        .layer(middleware::from_fn_with_state(shared, front_door))
}

/// A running simulator. Dropping it stops the servers.
pub struct SimHandle {
    pub shared: Arc<Shared>,
    pub addr: SocketAddr,
    shutdown: watch::Sender<bool>,
}

impl SimHandle {
    /// `http://127.0.0.1:PORT`.
    pub fn base_url(&self) -> &str {
        &self.shared.base_url
    }

    /// The endpoint a Google API client should use for `api` (`compute`, `container`, `file`,
    /// `artifactregistry`, `storage`, `serviceusage`, `cloudquotas`, `iam`,
    /// `cloudresourcemanager`, `github`): what google-cloud-rust's `with_endpoint` takes; the
    /// base URL followed by the API's prefix, or the base URL itself for an API with none
    /// ([`crate::shared::Api::a3ctl`]).
    pub fn endpoint(&self, api: &str) -> String {
        match apis::ALL.iter().find(|a| a.name == api) {
            Some(crate::shared::Api {
                a3ctl: Some((_, path)),
                ..
            }) => format!("{}{path}", self.base_url()),
            _ => format!("{}/{api}", self.base_url()),
        }
    }

    /// Environment that points gcloud at this simulator (with credentials disabled): each API's
    /// endpoint override ([`crate::shared::Api::gcloud`]), then gcloud's own settings.
    pub fn gcloud_env(&self) -> Vec<(String, String)> {
        let base = self.base_url();
        let overrides = apis::ALL
            .iter()
            .filter_map(|api| api.gcloud)
            .map(|(var, path)| (var.to_string(), format!("{base}{path}")));
        overrides
            .chain(
                [
                    ("CLOUDSDK_AUTH_DISABLE_CREDENTIALS", "true"),
                    ("CLOUDSDK_CORE_DISABLE_PROMPTS", "1"),
                    ("CLOUDSDK_COMPONENT_MANAGER_DISABLE_UPDATE_CHECK", "true"),
                    ("CLOUDSDK_CORE_DISABLE_USAGE_REPORTING", "true"),
                    ("CLOUDSDK_SURVEY_DISABLE_PROMPTS", "true"),
                ]
                .map(|(k, v)| (k.to_string(), v.to_string())),
            )
            .collect()
    }

    /// Environment that points a3ctl at this simulator: each API's endpoint variable
    /// ([`crate::shared::Api::a3ctl`]), then the clock and anonymous credentials.
    pub fn a3ctl_env(&self) -> Vec<(String, String)> {
        let endpoints = apis::ALL.iter().filter_map(|api| {
            api.a3ctl
                .map(|(var, _)| (var.to_string(), self.endpoint(api.name)))
        });
        endpoints
            .chain([
                (
                    "A3CTL_CLOCK_ENDPOINT".into(),
                    format!("{}/_sim/clock", self.base_url()),
                ),
                ("A3CTL_ANONYMOUS_CREDENTIALS".into(), "1".into()),
            ])
            .collect()
    }

    /// The current simulated time.
    pub fn now(&self) -> SimTime {
        self.shared.clock.now()
    }

    /// Moves simulated time forward.
    pub fn advance_secs(&self, secs: f64) -> SimTime {
        self.shared.clock.advance((secs * 1000.0) as u64)
    }

    /// The whole inventory (after bringing the world up to date).
    pub fn inventory(&self) -> serde_json::Value {
        self.shared.inventory()
    }

    /// Per-endpoint request counts so far.
    pub fn request_counts(&self) -> BTreeMap<String, u64> {
        self.shared.log.lock().counts.clone()
    }

    /// Number of requests answered so far (admin requests excluded).
    pub fn request_total(&self) -> usize {
        self.shared.log.lock().entries.len()
    }

    /// Replaces the fault configuration (counters and fired tripwires start over); requests held
    /// by tripwires are released, their connections closed without an answer.
    pub fn set_faults(&self, faults: FaultConfig) {
        self.shared
            .faults
            .lock()
            .replace(faults, self.shared.config.seed);
    }

    /// The tripwires that fired so far, in firing order, as indices into
    /// [`FaultConfig::tripwires`] of the current configuration.
    pub fn tripped(&self) -> Vec<usize> {
        self.shared.faults.lock().tripped.clone()
    }

    /// Waits until a tripwire of the current configuration has fired (at once if one has);
    /// returns [`SimHandle::tripped`]. For `when = "after"` the request's change is made and
    /// saved by then.
    pub async fn wait_tripped(&self) -> Vec<usize> {
        let mut trips = self.shared.trips.subscribe();
        loop {
            let tripped = self.tripped();
            if !tripped.is_empty() {
                return tripped;
            }
            if trips.changed().await.is_err() {
                return tripped;
            }
        }
    }

    /// How many requests tripwires hold right now.
    pub fn held(&self) -> usize {
        self.shared.held.load(Ordering::SeqCst)
    }

    /// Releases the requests tripwires hold (their connections close without an answer),
    /// keeping the fault configuration and its counters.
    pub fn release_held(&self) {
        self.shared.faults.lock().release_held();
    }

    /// Stops the servers and saves the world.
    pub fn shutdown(self) {
        drop(self);
    }
}

impl Drop for SimHandle {
    fn drop(&mut self) {
        let _ = self.shutdown.send(true);
        self.shared.faults.lock().release_held();
        for (_, server) in std::mem::take(&mut *self.shared.kube_servers.lock()) {
            server.stop();
        }
        self.shared.mark_dirty();
        self.shared.persist_if_dirty();
    }
}

#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error(transparent)]
    Persist(#[from] persist::PersistError),
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        addr: String,
        source: std::io::Error,
    },
    #[error("world file: {0}")]
    World(String),
    #[error("cannot start Kubernetes API server for {cluster}: {source}")]
    Kube {
        cluster: String,
        source: std::io::Error,
    },
}

/// Starts the simulator on `config.host:config.port` (port 0 picks a free port). Must be called
/// inside a Tokio runtime.
pub async fn start(mut config: SimConfig) -> Result<SimHandle, StartError> {
    // The world file's configuration parts apply at every start.
    config.world.check().map_err(StartError::World)?;
    let extra = config.world.quotas.clone();
    config.quotas.limits.extend(extra);
    if let Some(capacity) = &config.world.capacity {
        config.capacity = capacity.clone();
    }
    let loaded = match &config.persist {
        Some(path) => persist::load(path)?,
        None => None,
    };
    let fresh = loaded.is_none();
    let epoch = config
        .world
        .start_time
        .as_deref()
        .and_then(|t| chrono::DateTime::parse_from_rfc3339(t).ok())
        .map_or_else(|| config.start.instant(), |t| t.with_timezone(&chrono::Utc));
    let mut world = loaded.unwrap_or_else(|| World::new(config.seed, epoch));
    world.project_numbers = config.world.project_numbers();
    let clock = Clock::new(config.clock, world.saved_at);
    let bind = SocketAddr::new(config.host, config.port);
    let listener = TcpListener::bind(bind)
        .await
        .map_err(|source| StartError::Bind {
            addr: bind.to_string(),
            source,
        })?;
    let addr = listener.local_addr().map_err(|source| StartError::Bind {
        addr: bind.to_string(),
        source,
    })?;
    let base_url = format!("http://{addr}");
    let shared = Arc::new(Shared::new(config, clock, world, apis::ALL, base_url));
    // Its state parts (services, reservations) go into a fresh world only.
    if fresh {
        shared
            .with_world(|world, cx| crate::worldspec::seed(world, cx, &shared.config.world))
            .map_err(StartError::World)?;
    }
    // Clusters loaded from a persisted world get their API servers back (on their old port when
    // it is free).
    kube::restore_servers(&shared)
        .map_err(|(cluster, source)| StartError::Kube { cluster, source })?;

    let (shutdown, mut stop) = watch::channel(false);
    let app = router(shared.clone());
    tokio::spawn(async move {
        loop {
            tokio::select! {
                _ = stop.changed() => break,
                accepted = listener.accept() => {
                    let Ok((stream, _)) = accepted else { continue };
                    let _ = stream.set_nodelay(true);
                    serve_connection(stream, app.clone());
                }
            }
        }
    });
    Ok(SimHandle {
        shared,
        addr,
        shutdown,
    })
}

/// The clock mode a time scale stands for: `0` means a manual clock.
pub fn clock_mode_for_scale(scale: f64) -> ClockMode {
    if scale <= 0.0 {
        ClockMode::Manual
    } else {
        ClockMode::Scaled { scale }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_discovery_subset_is_generated_from_the_documents_and_the_served_methods() {
        let sim = start(SimConfig::default()).await.expect("simulator");
        crate::discovery::schema::tests::the_subset_is_generated_from_the_discovery_documents(
            router(sim.shared.clone()),
        )
        .await;
    }

    #[test]
    fn endpoint_templates_hide_names() {
        assert_eq!(
            endpoint_template("/compute/v1/projects/p/global/networks/n1"),
            "/compute/v1/projects/{}/global/networks/{}"
        );
        assert_eq!(
            endpoint_template(
                "/container/v1/projects/p/locations/us/clusters/c/nodePools/gpu:setSize"
            ),
            "/container/v1/projects/{}/locations/{}/clusters/{}/nodePools/{}:setSize"
        );
        assert_eq!(
            endpoint_template("/storage/v1/b/bkt/o/a%2Fb"),
            "/storage/v1/b/{}/o/{}"
        );
    }
}
