//! What every handler and every Kubernetes API server shares, below every API: the [`Shared`]
//! state, the [`Ctx`] a handler or a tick gets, what an API declares to be served ([`Api`]), the
//! request log, and running a request under its fault decision.
//!
//! [`run_request`] applies a request's fault decision (transient fault, scripted drop, tripwire)
//! around its handler, for the Google APIs and the Kubernetes API servers alike; a response
//! carrying [`DropConnection`] closes its connection without an answer ([`serve_connection`]).
//!
//! Nothing here names an API: the list of APIs ([`crate::apis::ALL`]) is handed in when the
//! simulator starts ([`Shared::new`]), and [`World::tick`] and [`World::inventory`] go through it.

use crate::clock::{Clock, SimTime};
use crate::config::SimConfig;
use crate::config::capacity::CapacityConfig;
use crate::config::quotas::QuotaConfig;
use crate::config::workloads::WorkloadConfig;
use crate::faults::{self, Decision, FaultAction, FaultState, NamedFault, TransientKind, TripWhen};
use crate::latency::LatencyProfile;
use crate::world::World;
use axum::Router;
use axum::body::Body;
use axum::extract::Request;
use axum::middleware::Next;
use axum::response::Response;
use parking_lot::Mutex;
use serde::Serialize;
use std::collections::BTreeMap;
use std::convert::Infallible;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use tokio::sync::watch;
use tower::ServiceExt;

/// An API's part of the admin inventory, from the world.
pub type InventoryFn = fn(&World) -> serde_json::Value;

/// What one API declares to the simulator: one entry of [`crate::apis::ALL`].
pub struct Api {
    /// The API's name in the request log and in fault configurations (`compute`, `container`,
    /// `file`, ...).
    pub name: &'static str,
    /// The first path segments it serves on the simulator's port (`/compute/...`; Cloud Storage
    /// also `/upload/...`, `/download/...`, `/resumable/...`); none for an API served elsewhere
    /// (each cluster's Kubernetes API server).
    pub prefixes: &'static [&'static str],
    /// Its routes (full paths, including the simulator's prefix), if it is served on the
    /// simulator's port.
    pub router: Option<fn() -> Router<Arc<Shared>>>,
    /// How it brings its state up to the current simulated time ([`World::tick`]).
    pub tick: Tick,
    /// Its key and part in the admin inventory ([`World::inventory`]): `(key, part)`.
    pub inventory: Option<(&'static str, InventoryFn)>,
    /// Collection names after which a path segment is a resource name in its paths, for the
    /// request log's endpoints ([`endpoint_template`]).
    pub collections: &'static [&'static str],
    /// Further collection names, by a function (Compute's, from its collection table).
    pub is_collection: Option<fn(&str) -> bool>,
    /// The gcloud endpoint override variable and the path after the base URL it is set to (with
    /// its trailing `/`), e.g. `("CLOUDSDK_API_ENDPOINT_OVERRIDES_FILE", "/file/")`.
    pub gcloud: Option<(&'static str, &'static str)>,
    /// a3ctl's endpoint variable and the path after the base URL it is set to (no trailing `/`;
    /// empty for the base URL itself), e.g. `("A3CTL_FILESTORE_ENDPOINT", "/file")`.
    pub a3ctl: Option<(&'static str, &'static str)>,
}

/// How an API is brought up to the current simulated time, in [`World::tick`]'s order: the
/// [`Tick::First`] ones in list order, then the [`Tick::Capacity`] ones together, then the
/// [`Tick::After`] ones in list order.
pub enum Tick {
    /// Nothing moves on its own.
    None,
    /// Before any other API (Service Usage: what is enabled is settled first).
    First(fn(&mut World, &Ctx) -> bool),
    /// Its operations take from the zones' capacity ([`crate::capacity`]), so they finish in one
    /// time order with those of the other `Capacity` APIs (a reservation deleted frees VMs a node
    /// pool waits for): the earliest due time of any goes first.
    Capacity {
        /// The earliest time, not after `now`, at which something is due.
        next_due: fn(&World, SimTime) -> Option<SimTime>,
        /// Finishes what is due by the time given; true if anything changed.
        until: fn(&mut World, &Ctx, SimTime) -> bool,
        /// Records that the world is up to date at `now` (after every due time was ticked).
        ticked: fn(&mut World, SimTime),
    },
    /// After the `Capacity` ones, in list order (Kubernetes last: a GKE cluster that becomes
    /// RUNNING during a tick has its Kubernetes objects updated in the same tick).
    After(fn(&mut World, &Ctx) -> bool),
}

/// Which API of `apis` a request path belongs to (by its first segment); `admin` for `/_sim/...`,
/// `unknown` for any other.
pub fn api_of(apis: &[Api], path: &str) -> &'static str {
    let first = path.trim_start_matches('/').split('/').next().unwrap_or("");
    apis.iter()
        .find(|api| api.prefixes.contains(&first))
        .map_or("unknown", |api| api.name)
}

/// Collection names after which a path segment is a resource name in every API's paths.
const COMMON_COLLECTIONS: &[&str] = &["projects", "regions", "zones", "operations", "locations"];

/// `/compute/v1/projects/p/global/networks/n` → `/compute/v1/projects/{}/global/networks/{}`: the
/// path with resource names (the segments after a collection name of any of `apis`) replaced by
/// `{}`.
pub fn endpoint_template(apis: &[Api], path: &str) -> String {
    let is_collection = |segment: &str| {
        COMMON_COLLECTIONS.contains(&segment)
            || apis.iter().any(|api| {
                api.collections.contains(&segment) || api.is_collection.is_some_and(|f| f(segment))
            })
    };
    let mut out = Vec::new();
    let mut prev = "";
    for seg in path.split('/') {
        if is_collection(prev) && !seg.is_empty() {
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

impl World {
    /// Brings every API of `apis` up to `cx.now` ([`Tick`]): finishes due operations and moves
    /// statuses along. Returns true if anything changed.
    pub fn tick(&mut self, cx: &Ctx, apis: &[Api]) -> bool {
        let mut changed = false;
        for api in apis {
            if let Tick::First(tick) = api.tick {
                changed |= tick(self, cx);
            }
        }
        let capacity: Vec<_> = apis
            .iter()
            .filter_map(|api| match api.tick {
                Tick::Capacity {
                    next_due,
                    until,
                    ticked,
                } => Some((next_due, until, ticked)),
                _ => None,
            })
            .collect();
        while let Some(at) = capacity
            .iter()
            .filter_map(|(next_due, _, _)| next_due(self, cx.now))
            .min()
        {
            for (_, until, _) in &capacity {
                changed |= until(self, cx, at);
            }
        }
        for (_, _, ticked) in &capacity {
            ticked(self, cx.now);
        }
        for api in apis {
            if let Tick::After(tick) = api.tick {
                changed |= tick(self, cx);
            }
        }
        changed
    }

    /// The whole inventory, for the admin endpoint and tests: each API's part under its key, in
    /// the order of `apis`.
    pub fn inventory(&self, apis: &[Api]) -> serde_json::Value {
        let parts: serde_json::Map<String, serde_json::Value> = apis
            .iter()
            .filter_map(|api| api.inventory)
            .map(|(key, part)| (key.to_string(), part(self)))
            .collect();
        serde_json::Value::Object(parts)
    }

    /// Draws the simulated duration of an operation in milliseconds: the latency profile's value
    /// for `key` plus any extra latency injected for it.
    pub fn duration_ms(&mut self, cx: &Ctx, key: &str) -> u64 {
        let base = cx.latency.sample_ms(key, &mut self.rng);
        base + cx.faults.lock().extra_latency_ms(key)
    }
}

/// What a handler or a tick needs besides the world itself: the time, and the parts of the
/// configuration and the shared state they read.
#[derive(Clone, Copy)]
pub struct Ctx<'a> {
    pub now: SimTime,
    pub latency: &'a LatencyProfile,
    pub faults: &'a Mutex<FaultState>,
    /// Zone capacity ([`crate::capacity`]).
    pub capacity: &'a CapacityConfig,
    /// Compute quota limits ([`crate::quotas`]).
    pub quotas: &'a QuotaConfig,
    /// What NCCL tests report ([`crate::kube::controllers::runs`]).
    pub workloads: &'a Mutex<WorkloadConfig>,
    /// Running Kubernetes API servers, by cluster key (a deleted cluster's is stopped).
    pub kube_servers: &'a Mutex<BTreeMap<String, ServerHandle>>,
}

impl Ctx<'_> {
    /// Counts one mutation of `kind` and returns its scripted fault, if one is configured.
    ///
    /// The drop actions never reach the modules: `drop_after` lets the mutation happen (None) and
    /// `drop_before` refuses it with an error; both mark the request so that its front door
    /// closes the connection instead of answering.
    pub fn scripted_fault(&self, kind: &str, verb: &str) -> Option<FaultAction> {
        let action = self.faults.lock().scripted(kind, verb);
        match action {
            Some(FaultAction::Named(NamedFault::DropAfter)) => {
                faults::request_drop(NamedFault::DropAfter);
                None
            }
            Some(FaultAction::Named(NamedFault::DropBefore)) => {
                faults::request_drop(NamedFault::DropBefore);
                Some(FaultAction::Http {
                    status: 503,
                    reason: "backendError".into(),
                    message: "dropped by a scripted fault".into(),
                })
            }
            other => other,
        }
    }
}

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
    pub workloads: Mutex<WorkloadConfig>,
    pub log: Mutex<RequestLog>,
    /// Running Kubernetes API servers, by cluster key.
    pub kube_servers: Mutex<BTreeMap<String, ServerHandle>>,
    /// `http://host:port` of the Google APIs.
    pub base_url: String,
    /// Bumped every time a tripwire fires, so tests can wait for it.
    pub trips: watch::Sender<u64>,
    /// Requests held by tripwires right now.
    pub held: AtomicUsize,
    /// Requests seen so far (seeds each one's round trip).
    pub requests: AtomicU64,
    /// Every API, in [`crate::apis::ALL`]'s order.
    pub apis: &'static [Api],
    dirty: AtomicBool,
}

impl Shared {
    /// The shared state of a simulator serving `apis` at `base_url` with `config`, its clock and
    /// its world as given.
    pub fn new(
        config: SimConfig,
        clock: Clock,
        world: World,
        apis: &'static [Api],
        base_url: String,
    ) -> Shared {
        Shared {
            clock,
            latency: config.latency.clone(),
            world: Mutex::new(world),
            faults: Mutex::new(FaultState::new(config.faults.clone(), config.seed)),
            workloads: Mutex::new(config.world.workloads.clone().unwrap_or_default().resolve()),
            log: Mutex::new(RequestLog::default()),
            kube_servers: Mutex::new(BTreeMap::new()),
            base_url,
            trips: watch::channel(0).0,
            held: AtomicUsize::new(0),
            requests: AtomicU64::new(0),
            apis,
            dirty: AtomicBool::new(false),
            config,
        }
    }

    /// The context of a handler or a tick at the current simulated time.
    pub fn ctx(&self) -> Ctx<'_> {
        Ctx {
            now: self.clock.now(),
            latency: &self.latency,
            faults: &self.faults,
            capacity: &self.config.capacity,
            quotas: &self.config.quotas,
            workloads: &self.workloads,
            kube_servers: &self.kube_servers,
        }
    }

    /// Marks the world changed, so that [`Shared::persist_if_dirty`] saves it.
    pub fn mark_dirty(&self) {
        self.dirty.store(true, Ordering::Relaxed);
    }

    /// The whole inventory (after bringing the world up to date).
    pub fn inventory(&self) -> serde_json::Value {
        self.read_world(|w, _| w.inventory(self.apis))
    }

    /// [`endpoint_template`] over the APIs served.
    pub fn endpoint_template(&self, path: &str) -> String {
        endpoint_template(self.apis, path)
    }
    /// Runs `f` on the world brought up to the current simulated time. Marks the world dirty, so
    /// it is persisted after the request.
    pub fn with_world<R>(&self, f: impl FnOnce(&mut World, &Ctx) -> R) -> R {
        let mut world = self.world.lock();
        let cx = self.ctx();
        world.tick(&cx, self.apis);
        self.dirty.store(true, Ordering::Relaxed);
        f(&mut world, &cx)
    }

    /// Like [`Shared::with_world`] for reads: persists only if the tick changed something.
    pub fn read_world<R>(&self, f: impl FnOnce(&World, &Ctx) -> R) -> R {
        let mut world = self.world.lock();
        let cx = self.ctx();
        if world.tick(&cx, self.apis) {
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
        if let Err(e) = crate::persist::save(path, &world) {
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

/// A response that makes the connection close without sending anything.
pub fn dropped() -> Response {
    let mut response = Response::new(Body::empty());
    response.extensions_mut().insert(DropConnection);
    response
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

/// A running Kubernetes API server ([`crate::kube::server`]); dropping or stopping it closes the
/// listener.
#[derive(Debug)]
pub struct ServerHandle {
    stop: watch::Sender<bool>,
    pub port: u16,
}

impl ServerHandle {
    /// The handle of a server listening on `port` that stops when `stop` is sent `true`.
    pub fn new(stop: watch::Sender<bool>, port: u16) -> ServerHandle {
        ServerHandle { stop, port }
    }

    pub fn stop(self) {
        let _ = self.stop.send(true);
    }
}
