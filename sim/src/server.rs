//! Starting the simulator: the shared state, the HTTP front door for the Google APIs, the request
//! log, transient faults, and persistence after each request.
//!
//! Connections are served with hyper directly (not `axum::serve`) so that a "dropped connection"
//! fault can close the socket without sending any response, exactly as a network failure would.
//! [`run_request`] applies a request's fault decision (transient fault, scripted drop, tripwire)
//! around its handler, for the Google APIs and the Kubernetes API servers alike.

use crate::clock::{Clock, ClockMode, SimTime};
use crate::config::SimConfig;
use crate::error::GcpError;
use crate::faults::{
    self, Decision, FaultConfig, FaultState, NamedFault, RequestInfo, TransientKind, TripWhen,
};
use crate::latency::LatencyProfile;
use crate::world::{Ctx, World};
use crate::{
    admin, artifactregistry, compute, container, filestore, iam, kube, persist, serviceusage,
    storage,
};
use axum::Router;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use parking_lot::Mutex;
use serde::Serialize;
use std::collections::BTreeMap;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use tokio::net::TcpListener;
use tokio::sync::watch;
use tower::ServiceExt;

/// Marker put on a response to make the connection close without sending it.
#[derive(Clone, Copy, Debug)]
pub struct DropConnection;

/// One logged request. Headers are never logged, so tokens never reach the log.
#[derive(Debug, Clone, Serialize)]
pub struct LogEntry {
    pub seq: u64,
    pub at: SimTime,
    pub api: String,
    pub method: String,
    pub path: String,
    /// The path with resource names replaced by `{}`: the key of the per-endpoint counts.
    pub endpoint: String,
    pub status: u16,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fault: Option<String>,
}

/// Every request the simulator answered, with per-endpoint counts.
#[derive(Debug, Default, Serialize)]
pub struct RequestLog {
    pub entries: Vec<LogEntry>,
    pub counts: BTreeMap<String, u64>,
}

impl RequestLog {
    pub fn record(&mut self, mut entry: LogEntry) {
        entry.seq = self.entries.len() as u64 + 1;
        *self
            .counts
            .entry(format!("{} {}", entry.method, entry.endpoint))
            .or_default() += 1;
        self.entries.push(entry);
    }
}

/// State shared by every handler and every Kubernetes API server.
pub struct Shared {
    pub config: SimConfig,
    pub clock: Clock,
    pub latency: LatencyProfile,
    pub world: Mutex<World>,
    pub faults: Mutex<FaultState>,
    /// What NCCL tests report ([`crate::kube::controllers::runs`]): the world file's
    /// `[workloads]`, replaced by `PUT /_sim/workloads`.
    pub workloads: Mutex<crate::kube::controllers::runs::WorkloadConfig>,
    pub log: Mutex<RequestLog>,
    /// Running Kubernetes API servers, by cluster key.
    pub kube_servers: Mutex<BTreeMap<String, kube::ServerHandle>>,
    /// `http://host:port` of the Google APIs.
    pub base_url: String,
    /// Bumped every time a tripwire fires, so tests can wait for it.
    pub trips: watch::Sender<u64>,
    /// Requests held by tripwires right now.
    pub held: AtomicUsize,
    /// Requests seen so far (seeds each one's round trip).
    pub requests: std::sync::atomic::AtomicU64,
    dirty: AtomicBool,
}

impl Shared {
    /// Runs `f` on the world brought up to the current simulated time. Marks the world dirty, so
    /// it is persisted after the request.
    pub fn with_world<R>(&self, f: impl FnOnce(&mut World, &Ctx) -> R) -> R {
        let mut world = self.world.lock();
        let cx = Ctx {
            now: self.clock.now(),
            shared: self,
        };
        world.tick(&cx);
        self.dirty.store(true, Ordering::Relaxed);
        f(&mut world, &cx)
    }

    /// Like [`Shared::with_world`] for reads: persists only if the tick changed something.
    pub fn read_world<R>(&self, f: impl FnOnce(&World, &Ctx) -> R) -> R {
        let mut world = self.world.lock();
        let cx = Ctx {
            now: self.clock.now(),
            shared: self,
        };
        if world.tick(&cx) {
            self.dirty.store(true, Ordering::Relaxed);
        }
        f(&world, &cx)
    }

    /// Saves the world if a persistence file is configured and something changed.
    pub fn persist_if_dirty(&self) {
        let Some(path) = &self.config.persist else {
            return;
        };
        if !self.dirty.swap(false, Ordering::Relaxed) {
            return;
        }
        let mut world = self.world.lock();
        world.saved_at = self.clock.now();
        if let Err(e) = persist::save(path, &world) {
            tracing::error!("{e}");
        }
    }

    pub fn record(&self, entry: LogEntry) {
        self.log.lock().record(entry);
    }

    /// Records that tripwire `index` fired and wakes whoever waits for it.
    pub fn trip(&self, index: usize) {
        self.faults.lock().trip(index);
        self.trips.send_modify(|n| *n += 1);
    }
}

/// Waits one request's round trip (latency key `request.google` or `request.kube`, drawn from the
/// seed and the request's number): in real time under a scaled clock; not at all under a manual
/// clock (where waiting would never end) or in the `zero` profile.
pub async fn round_trip(shared: &Shared, key: &str) {
    use rand::SeedableRng;
    let n = shared.requests.fetch_add(1, Ordering::SeqCst);
    let mut rng = rand::rngs::StdRng::seed_from_u64(shared.config.seed.wrapping_add(n));
    let ms = shared.latency.sample_ms(key, &mut rng);
    if let Some(real) = shared.clock.real_duration(ms).filter(|d| !d.is_zero()) {
        tokio::time::sleep(real).await;
    }
}

/// Runs a request under its fault decision. A tripwire that fires holds the request (before or
/// after `next`) until released, then drops the connection; `drop_before`/`drop_after` close the
/// connection without an answer (after running the handler for `drop_after`); other transient
/// kinds are answered by `answer` without running the handler; a scripted drop met by the handler
/// drops the connection. Returns the response and the fault to log.
pub async fn run_request(
    shared: &Shared,
    decision: Decision,
    req: Request,
    next: Next,
    answer: impl FnOnce(TransientKind) -> Response,
) -> (Response, Option<String>) {
    if let Some(trip) = decision.tripwire {
        let label = format!(
            "tripwire#{} {}",
            trip.index,
            match trip.when {
                TripWhen::Before => "before",
                TripWhen::After => "after",
                TripWhen::Pause => "pause",
            }
        );
        let mut pending = Some((next, req));
        if trip.when == TripWhen::After
            && let Some((next, req)) = pending.take()
        {
            let _ = faults::with_scripted_drops(next.run(req)).await;
            shared.persist_if_dirty();
        }
        shared.trip(trip.index);
        // Counted while held; hyper drops this future when the client goes away first.
        struct Held<'a>(&'a AtomicUsize);
        impl Drop for Held<'_> {
            fn drop(&mut self) {
                self.0.fetch_sub(1, Ordering::SeqCst);
            }
        }
        shared.held.fetch_add(1, Ordering::SeqCst);
        let held = Held(&shared.held);
        let when = trip.when;
        trip.held().await;
        drop(held);
        // Paused, then released: the request goes on.
        return match pending.filter(|_| when == TripWhen::Pause) {
            Some((next, req)) => match faults::with_scripted_drops(next.run(req)).await {
                (response, None) => (response, Some(label)),
                (_, Some(_)) => (dropped(), Some(label)),
            },
            None => (dropped(), Some(label)),
        };
    }
    match decision.transient {
        Some(TransientKind::DropBefore) => (dropped(), Some("drop_before".into())),
        Some(TransientKind::DropAfter) => {
            let _ = faults::with_scripted_drops(next.run(req)).await;
            (dropped(), Some("drop_after".into()))
        }
        Some(kind) => (answer(kind), Some(kind.name().to_string())),
        None => match faults::with_scripted_drops(next.run(req)).await {
            (response, None) => (response, None),
            (_, Some(NamedFault::DropAfter)) => (dropped(), Some("scripted drop_after".into())),
            (_, Some(_)) => (dropped(), Some("scripted drop_before".into())),
        },
    }
}

/// Which API a request path belongs to.
pub fn api_of(path: &str) -> &'static str {
    let first = path.trim_start_matches('/').split('/').next().unwrap_or("");
    match first {
        "compute" => "compute",
        "container" => "container",
        "file" => "file",
        "artifactregistry" => "artifactregistry",
        "storage" | "upload" | "download" | "resumable" => "storage",
        "serviceusage" => "serviceusage",
        "cloudquotas" => "cloudquotas",
        "iam" => "iam",
        "cloudresourcemanager" => "cloudresourcemanager",
        "github" => "github",
        "_sim" => "admin",
        _ => "unknown",
    }
}

/// Collection names after which a path segment is a resource name (with those of the Compute
/// collections, [`crate::compute::is_collection_segment`]).
const COLLECTIONS: &[&str] = &[
    "projects",
    "regions",
    "zones",
    "operations",
    "locations",
    "clusters",
    "nodePools",
    "instances",
    "repositories",
    "b",
    "o",
    "namespaces",
    "customresourcedefinitions",
    "nodes",
    "daemonsets",
    "deployments",
    "services",
    "configmaps",
    "secrets",
    "serviceaccounts",
    "serviceAccounts",
];

/// `/compute/v1/projects/p/global/networks/n` → `/compute/v1/projects/{}/global/networks/{}`.
pub fn endpoint_template(path: &str) -> String {
    let mut out = Vec::new();
    let mut prev = "";
    for seg in path.split('/') {
        if (COLLECTIONS.contains(&prev) || crate::compute::is_collection_segment(prev))
            && !seg.is_empty()
        {
            match seg.split_once(':') {
                Some((_, method)) => out.push(format!("{{}}:{method}")),
                None => out.push("{}".to_string()),
            }
        } else {
            out.push(seg.to_string());
        }
        prev = seg;
    }
    out.join("/")
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

/// A response that makes the connection close without sending anything.
pub fn dropped() -> Response {
    let mut response = Response::new(Body::empty());
    response.extensions_mut().insert(DropConnection);
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
    let routes = Router::new()
        .merge(compute::router())
        .merge(container::router())
        .merge(filestore::router())
        .merge(artifactregistry::router())
        .merge(storage::router())
        .merge(serviceusage::router())
        .merge(crate::cloudquotas::router())
        .merge(iam::router())
        .merge(crate::resourcemanager::router())
        .merge(crate::releases::router())
        .merge(admin::router())
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

/// Serves one accepted connection (plain or TLS) with `router`; a response carrying
/// [`DropConnection`] closes the connection instead of being sent.
pub fn serve_connection<IO>(io: IO, router: Router)
where
    IO: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    tokio::spawn(async move {
        let service =
            hyper::service::service_fn(move |req: hyper::Request<hyper::body::Incoming>| {
                let router = router.clone();
                async move {
                    let response = router
                        .oneshot(req.map(Body::new))
                        .await
                        .unwrap_or_else(|e: Infallible| match e {});
                    if response.extensions().get::<DropConnection>().is_some() {
                        return Err(std::io::Error::other(
                            "connection dropped by fault injection",
                        ));
                    }
                    Ok::<_, std::io::Error>(response)
                }
            });
        let io = hyper_util::rt::TokioIo::new(io);
        let _ = hyper::server::conn::http1::Builder::new()
            .keep_alive(true)
            .serve_connection(io, service)
            .await;
    });
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
    /// `cloudresourcemanager`): what google-cloud-rust's `with_endpoint` takes.
    pub fn endpoint(&self, api: &str) -> String {
        match api {
            "compute" | "storage" => self.base_url().to_string(),
            other => format!("{}/{other}", self.base_url()),
        }
    }

    /// Environment that points gcloud at this simulator (with credentials disabled).
    pub fn gcloud_env(&self) -> Vec<(String, String)> {
        let base = self.base_url();
        vec![
            (
                "CLOUDSDK_API_ENDPOINT_OVERRIDES_COMPUTE".into(),
                format!("{base}/"),
            ),
            (
                "CLOUDSDK_API_ENDPOINT_OVERRIDES_CONTAINER".into(),
                format!("{base}/container/"),
            ),
            (
                "CLOUDSDK_API_ENDPOINT_OVERRIDES_FILE".into(),
                format!("{base}/file/"),
            ),
            (
                "CLOUDSDK_API_ENDPOINT_OVERRIDES_ARTIFACTREGISTRY".into(),
                format!("{base}/artifactregistry/"),
            ),
            (
                "CLOUDSDK_API_ENDPOINT_OVERRIDES_STORAGE".into(),
                format!("{base}/"),
            ),
            // gcloud asks Service Usage whether an API is enabled before some creates.
            (
                "CLOUDSDK_API_ENDPOINT_OVERRIDES_SERVICEUSAGE".into(),
                format!("{base}/serviceusage/"),
            ),
            (
                "CLOUDSDK_API_ENDPOINT_OVERRIDES_CLOUDQUOTAS".into(),
                format!("{base}/cloudquotas/"),
            ),
            (
                "CLOUDSDK_API_ENDPOINT_OVERRIDES_IAM".into(),
                format!("{base}/iam/"),
            ),
            (
                "CLOUDSDK_API_ENDPOINT_OVERRIDES_CLOUDRESOURCEMANAGER".into(),
                format!("{base}/cloudresourcemanager/"),
            ),
            ("CLOUDSDK_AUTH_DISABLE_CREDENTIALS".into(), "true".into()),
            ("CLOUDSDK_CORE_DISABLE_PROMPTS".into(), "1".into()),
            (
                "CLOUDSDK_COMPONENT_MANAGER_DISABLE_UPDATE_CHECK".into(),
                "true".into(),
            ),
            (
                "CLOUDSDK_CORE_DISABLE_USAGE_REPORTING".into(),
                "true".into(),
            ),
            ("CLOUDSDK_SURVEY_DISABLE_PROMPTS".into(), "true".into()),
        ]
    }

    /// Environment that points a3ctl at this simulator.
    pub fn a3ctl_env(&self) -> Vec<(String, String)> {
        vec![
            ("A3CTL_COMPUTE_ENDPOINT".into(), self.endpoint("compute")),
            (
                "A3CTL_CONTAINER_ENDPOINT".into(),
                self.endpoint("container"),
            ),
            ("A3CTL_FILESTORE_ENDPOINT".into(), self.endpoint("file")),
            (
                "A3CTL_ARTIFACTREGISTRY_ENDPOINT".into(),
                self.endpoint("artifactregistry"),
            ),
            ("A3CTL_STORAGE_ENDPOINT".into(), self.endpoint("storage")),
            (
                "A3CTL_SERVICEUSAGE_ENDPOINT".into(),
                self.endpoint("serviceusage"),
            ),
            (
                "A3CTL_CLOUDQUOTAS_ENDPOINT".into(),
                self.endpoint("cloudquotas"),
            ),
            ("A3CTL_IAM_ENDPOINT".into(), self.endpoint("iam")),
            (
                "A3CTL_RESOURCEMANAGER_ENDPOINT".into(),
                self.endpoint("cloudresourcemanager"),
            ),
            ("A3CTL_GITHUB_ENDPOINT".into(), self.endpoint("github")),
            (
                "A3CTL_CLOCK_ENDPOINT".into(),
                format!("{}/_sim/clock", self.base_url()),
            ),
            ("A3CTL_ANONYMOUS_CREDENTIALS".into(), "1".into()),
        ]
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
        self.shared.read_world(|w, _| w.inventory())
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
        self.shared.dirty.store(true, Ordering::Relaxed);
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
    let shared = Arc::new(Shared {
        clock,
        latency: config.latency.clone(),
        world: Mutex::new(world),
        faults: Mutex::new(FaultState::new(config.faults.clone(), config.seed)),
        workloads: Mutex::new(config.world.workloads.clone().unwrap_or_default().resolve()),
        log: Mutex::new(RequestLog::default()),
        kube_servers: Mutex::new(BTreeMap::new()),
        base_url: format!("http://{addr}"),
        trips: watch::channel(0).0,
        held: AtomicUsize::new(0),
        requests: std::sync::atomic::AtomicU64::new(0),
        dirty: AtomicBool::new(false),
        config,
    });
    // Its state parts (services, reservations) go into a fresh world only.
    if fresh {
        shared
            .with_world(|world, cx| crate::worldspec::seed(world, cx, &cx.shared.config.world))
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
