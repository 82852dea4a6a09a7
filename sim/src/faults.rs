//! Fault injection: transient errors at a rate per API, scripted faults on the Nth mutation of a
//! kind, and tripwires that hold one chosen request so a chaos test can interrupt its client
//! exactly there.
//!
//! # Transient faults
//!
//! Decided per request by the front door of the Google APIs ([`crate::server`]) and of every
//! cluster's Kubernetes API server ([`crate::kube::server`]):
//!
//! | kind | Google APIs | Kubernetes API servers | processed? |
//! |---|---|---|---|
//! | `rate_limit` | 429 `RESOURCE_EXHAUSTED` / `rateLimitExceeded` | 429, `Retry-After: 1`, plain-text body | no |
//! | `unavailable` | 503 `UNAVAILABLE` / `backendError` | 503 `ServiceUnavailable` Status | no |
//! | `server_error` | 500 `INTERNAL` / `backendError` | 500 Status `etcdserver: request timed out` | no |
//! | `drop_before` | connection closed, no response | same | no |
//! | `drop_after` | handler runs, then connection closed | same | **yes** |
//! | `webhook_no_endpoints` | never | 500 `InternalError` `failed calling webhook ... no endpoints available for service` | no |
//! | `webhook_timeout` | never | 500 `InternalError` `failed calling webhook ... context deadline exceeded` | no |
//!
//! The Kubernetes shapes are kube-apiserver's own:
//! - 429: the max-in-flight and priority-and-fairness filters answer
//!   `http.Error(w, "Too many requests, please try again later.", 429)` with `Retry-After` (`"1"`
//!   in `maxinflight.go`), i.e. `text/plain`, not a `Status` — client-go turns that into a
//!   `TooManyRequests` error carrying `retryAfterSeconds` from the header
//!   (k8s.io/apiserver `pkg/server/filters/maxinflight.go` and `priority-and-fairness.go`,
//!   `tooManyRequests`).
//! - 500 `server_error`: an etcd error the API server does not map passes through `ErrorToAPIStatus`
//!   as a 500 with an empty reason (kubectl prints `Error from server: etcdserver: request timed
//!   out`, kubernetes/kubeadm#3095).
//! - webhook failures: a webhook with `failurePolicy: Fail` that cannot be called rejects the request
//!   with `apierrors.NewInternalError(&ErrCallingWebhook{...})` (`mutating/dispatcher.go`), i.e.
//!   `Internal error occurred: failed calling webhook "<name>": failed to call webhook: Post
//!   "https://<svc>.<ns>.svc:<port><path>?timeout=<n>s": <cause>` with the cause `no endpoints
//!   available for service "<svc>"` (kubernetes-sigs/kueue#7601, kubernetes-sigs/jobset#67) or
//!   `context deadline exceeded` (VictoriaMetrics/operator#1094). They hit only create, update and
//!   patch requests of objects a webhook configuration in that cluster guards (rules, namespace
//!   selector; the object selector is not looked at), naming that webhook.
//!
//! With `kinds` empty, every kind that can hit a request is drawn from: the webhook kinds only on
//! guarded Kubernetes writes, never on the Google APIs.
//!
//! **Determinism.** Whether a request gets a fault, and which, is a pure function of the seed, the
//! API (for Kubernetes: the cluster), the method, the path without its query and the ordinal of
//! this (API, method, path) among the requests seen so far (hashed with a fixed FNV-1a/SplitMix64
//! mix, never std's randomly keyed hasher). Concurrent clients therefore get the same faults however
//! their requests interleave; only identical requests racing each other can swap theirs.
//!
//! # Scripted faults
//!
//! Fire on the Nth mutation of a kind, for example "the 2nd create of a GKE node pool fails with
//! GCE_STOCKOUT". Modules ask [`FaultState::scripted`] (through [`crate::world::Ctx`]) when they
//! start a mutation; counting happens there. Kubernetes kinds are `kube.<Kind>` with the request's
//! verb as kube-apiserver names it: `create` (POST), `update` (PUT), `patch` (any PATCH, server-side
//! apply included, also when the apply creates the object) and `delete`. The actions `drop_before`
//! (no change, connection closed) and `drop_after` (change made, connection closed) work for every
//! API.
//!
//! # Tripwires
//!
//! A tripwire matches requests by API, method and path (substring, or an endpoint template such as
//! `/container/v1/projects/{}/locations/{}/clusters` matched against the end of the request's
//! template). On its Nth match it records that it fired ([`FaultState::tripped`]) and holds the
//! request without answering: `before` holds it before the handler runs (no change), `after` once
//! the handler ran (the change is made and saved). Held requests are released — their connection
//! closed, no response — when the faults are replaced, on [`FaultState::release_held`], or when the
//! simulator stops.
//!
//! Configuration file (TOML), also accepted as JSON on `PUT /_sim/faults`:
//! ```toml
//! seed = 7
//! [transient.compute]
//! rate = 0.2
//! kinds = ["rate_limit", "unavailable", "server_error", "drop_before", "drop_after"]
//! [[scripted]]
//! kind = "container.nodePool"
//! verb = "create"
//! nth = 1
//! action = "stockout"
//! [[tripwire]]
//! api = "container"
//! method = "POST"
//! path = "/clusters"
//! when = "after"
//! [extra_latency]
//! "container.cluster.create" = 120
//! ```

use serde::{Deserialize, Serialize};
use std::cell::Cell;
use std::collections::{BTreeMap, HashMap};
use std::future::Future;
use tokio::sync::watch;

/// What a transient fault does to one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TransientKind {
    /// 429 (Google: RESOURCE_EXHAUSTED / `rateLimitExceeded`; Kubernetes: `Retry-After: 1`); the
    /// request is not processed.
    RateLimit,
    /// 503 (Google: UNAVAILABLE / `backendError`; Kubernetes: `ServiceUnavailable`); the request is
    /// not processed.
    Unavailable,
    /// The connection is closed without a response; the request is not processed.
    DropBefore,
    /// The request is processed, then the connection is closed without a response.
    DropAfter,
    /// 500 (Google: INTERNAL / `backendError`; Kubernetes: `etcdserver: request timed out`); the
    /// request is not processed.
    ServerError,
    /// Kubernetes only, on writes a webhook guards: 500 `InternalError` "failed calling webhook
    /// ... no endpoints available for service ..."; the request is not processed.
    WebhookNoEndpoints,
    /// Kubernetes only, on writes a webhook guards: 500 `InternalError` "failed calling webhook
    /// ... context deadline exceeded"; the request is not processed.
    WebhookTimeout,
}

impl TransientKind {
    /// Every kind, in the order a draw picks from.
    pub const ALL: [TransientKind; 7] = [
        TransientKind::RateLimit,
        TransientKind::Unavailable,
        TransientKind::DropBefore,
        TransientKind::DropAfter,
        TransientKind::ServerError,
        TransientKind::WebhookNoEndpoints,
        TransientKind::WebhookTimeout,
    ];

    /// The snake_case name used in fault files, the request log and the injected counts.
    pub fn name(self) -> &'static str {
        match self {
            TransientKind::RateLimit => "rate_limit",
            TransientKind::Unavailable => "unavailable",
            TransientKind::DropBefore => "drop_before",
            TransientKind::DropAfter => "drop_after",
            TransientKind::ServerError => "server_error",
            TransientKind::WebhookNoEndpoints => "webhook_no_endpoints",
            TransientKind::WebhookTimeout => "webhook_timeout",
        }
    }

    /// A failure of an admission webhook call (Kubernetes only).
    pub fn is_webhook(self) -> bool {
        matches!(
            self,
            TransientKind::WebhookNoEndpoints | TransientKind::WebhookTimeout
        )
    }

    /// Whether this kind can hit requests to `api` at all.
    pub fn applies_to_api(self, api: &str) -> bool {
        !self.is_webhook() || api == "kube"
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TransientFaults {
    /// Probability in [0, 1] that a request to this API gets a fault.
    pub rate: f64,
    /// Which faults to draw from (uniformly, among those that can hit the request); every kind
    /// that can hit it when empty.
    #[serde(default)]
    pub kinds: Vec<TransientKind>,
    /// Only requests with these HTTP methods are affected (all when empty).
    #[serde(default)]
    pub methods: Vec<String>,
}

/// What a scripted fault does.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", untagged)]
pub enum FaultAction {
    /// A named fault: `quota_exceeded`, `stockout`, `operation_error`, `drop_before` or
    /// `drop_after`.
    Named(NamedFault),
    /// An immediate HTTP error with this status, reason and message (on the Kubernetes API servers:
    /// a `Status` object with this code, reason and message).
    Http {
        status: u16,
        reason: String,
        message: String,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NamedFault {
    /// The call is refused at once with the API's quota error (Kubernetes: 403 `exceeded quota`
    /// from the ResourceQuota admission plugin).
    QuotaExceeded,
    /// The operation starts, then ends DONE with a capacity error (GCE_STOCKOUT /
    /// ZONE_RESOURCE_POOL_EXHAUSTED); for GKE node pools the pool is left in ERROR. Not for
    /// Kubernetes kinds.
    Stockout,
    /// The operation starts, then ends DONE with an internal error. Not for Kubernetes kinds.
    OperationError,
    /// Nothing is changed and the connection is closed without a response.
    DropBefore,
    /// The call is processed (the operation starts, the object is written), then the connection
    /// is closed without a response: the client never learns the answer.
    DropAfter,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScriptedFault {
    /// Resource kind, e.g. `compute.network`, `container.cluster`, `container.nodePool`,
    /// `file.instance`, `artifactregistry.repository`, `storage.bucket`, `kube.Deployment`.
    pub kind: String,
    /// `create`, `update`, `delete`, or (Kubernetes only) `patch`: any PATCH request, server-side
    /// apply included, also when the apply creates the object; or (`container.nodePool` only)
    /// `upgrade`: a batch of a node-pool upgrade creating its VMs.
    pub verb: String,
    /// Fire on the Nth matching call (1-based).
    pub nth: u32,
    pub action: FaultAction,
}

/// When a tripwire holds its request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TripWhen {
    /// Before the handler runs: nothing is changed.
    #[default]
    Before,
    /// After the handler ran: the change is made (and persisted), the answer is never sent.
    After,
    /// Before the handler runs, until released; then the request goes on and is answered as if
    /// nothing happened. Lets a test act in between (another client writing the same policy
    /// between this client's read and its write).
    Pause,
}

fn first() -> u32 {
    1
}

/// An interruption point: the Nth request matching it is recorded and held without an answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Tripwire {
    /// `compute`, `container`, `file`, `artifactregistry`, `storage` or `kube`.
    pub api: String,
    /// HTTP method (any when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub method: Option<String>,
    /// A substring of the request path, or an endpoint template (with `{}` for names) that the
    /// request's template must end with. Any path when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// Fire on the Nth matching request (1-based, default 1).
    #[serde(default = "first")]
    pub nth: u32,
    #[serde(default)]
    pub when: TripWhen,
}

impl Tripwire {
    /// Whether `request` is one this tripwire counts.
    pub fn matches(&self, request: &RequestInfo) -> bool {
        if self.api != request.api {
            return false;
        }
        if let Some(method) = &self.method
            && !method.eq_ignore_ascii_case(request.method)
        {
            return false;
        }
        match &self.path {
            None => true,
            Some(p) if p.contains("{}") => request.endpoint.ends_with(p.as_str()),
            Some(p) => request.path.contains(p.as_str()),
        }
    }
}

/// The whole fault configuration.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FaultConfig {
    #[serde(default)]
    pub seed: Option<u64>,
    /// Per API: `compute`, `container`, `file`, `artifactregistry`, `storage`, `kube`.
    #[serde(default)]
    pub transient: BTreeMap<String, TransientFaults>,
    #[serde(default)]
    pub scripted: Vec<ScriptedFault>,
    /// Interruption points (`[[tripwire]]` in TOML, `"tripwire": [...]` in JSON).
    #[serde(default, rename = "tripwire", skip_serializing_if = "Vec::is_empty")]
    pub tripwires: Vec<Tripwire>,
    /// Extra simulated seconds added to every duration drawn for a latency key.
    #[serde(default)]
    pub extra_latency: BTreeMap<String, f64>,
}

pub const APIS: &[&str] = &[
    "compute",
    "container",
    "file",
    "artifactregistry",
    "storage",
    "kube",
];

const VERBS: &[&str] = &["create", "update", "delete", "patch", "upgrade"];

impl FaultConfig {
    pub fn load(path: &str) -> Result<FaultConfig, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read fault file `{path}`: {e}"))?;
        let config: FaultConfig =
            toml::from_str(&text).map_err(|e| format!("invalid fault file `{path}`: {e}"))?;
        config
            .check()
            .map_err(|e| format!("invalid fault file `{path}`: {e}"))?;
        Ok(config)
    }

    pub fn check(&self) -> Result<(), String> {
        for (api, t) in &self.transient {
            if !APIS.contains(&api.as_str()) {
                return Err(format!(
                    "unknown API `{api}` in [transient] (expected one of {})",
                    APIS.join(", ")
                ));
            }
            if !(0.0..=1.0).contains(&t.rate) {
                return Err(format!(
                    "transient rate for `{api}` must be between 0 and 1, got {}",
                    t.rate
                ));
            }
            if let Some(kind) = t.kinds.iter().find(|k| !k.applies_to_api(api)) {
                return Err(format!(
                    "transient kind `{}` applies only to the Kubernetes API servers (`kube`), not `{api}`",
                    kind.name()
                ));
            }
        }
        for s in &self.scripted {
            if s.nth == 0 {
                return Err(format!(
                    "scripted fault for `{}` has nth = 0; counting starts at 1",
                    s.kind
                ));
            }
            if !VERBS.contains(&s.verb.as_str()) {
                return Err(format!(
                    "scripted fault verb must be create, update, patch, delete or upgrade, got `{}`",
                    s.verb
                ));
            }
            let kube = s.kind.starts_with("kube.");
            if s.verb == "upgrade" && s.kind != "container.nodePool" {
                return Err(format!(
                    "scripted fault verb `upgrade` (a batch of a node-pool upgrade) is for `container.nodePool`, not `{}`",
                    s.kind
                ));
            }
            if s.verb == "patch" && !kube {
                return Err(format!(
                    "scripted fault verb `patch` is for Kubernetes kinds (`kube.<Kind>`), not `{}`",
                    s.kind
                ));
            }
            if kube
                && matches!(
                    s.action,
                    FaultAction::Named(NamedFault::Stockout | NamedFault::OperationError)
                )
            {
                return Err(format!(
                    "scripted fault for `{}`: Kubernetes writes have no operation to fail; use \
                     quota_exceeded, drop_before, drop_after or {{ status, reason, message }}",
                    s.kind
                ));
            }
        }
        for (i, t) in self.tripwires.iter().enumerate() {
            if !APIS.contains(&t.api.as_str()) {
                return Err(format!(
                    "unknown API `{}` in tripwire {i} (expected one of {})",
                    t.api,
                    APIS.join(", ")
                ));
            }
            if t.nth == 0 {
                return Err(format!("tripwire {i} has nth = 0; counting starts at 1"));
            }
        }
        Ok(())
    }
}

/// What the fault machinery needs to know about one request.
#[derive(Debug, Clone, Copy)]
pub struct RequestInfo<'a> {
    /// `compute`, `container`, `file`, `artifactregistry`, `storage`, `kube`, ...
    pub api: &'a str,
    /// Narrows the API: the cluster key for Kubernetes requests, empty for Google APIs.
    pub scope: &'a str,
    pub method: &'a str,
    /// The path without the query.
    pub path: &'a str,
    /// The path with resource names replaced by `{}` ([`crate::server::endpoint_template`]).
    pub endpoint: &'a str,
}

/// A tripwire that fired on this request: record it (at the right moment) and hold the request.
#[derive(Debug)]
pub struct Trip {
    /// Position of the tripwire in [`FaultConfig::tripwires`].
    pub index: usize,
    pub when: TripWhen,
    release: watch::Receiver<bool>,
}

impl Trip {
    /// Waits until held requests are released (faults replaced, released, or simulator stopped).
    pub async fn held(mut self) {
        let _ = self.release.wait_for(|released| *released).await;
    }
}

/// What happens to one request.
#[derive(Debug, Default)]
pub struct Decision {
    pub transient: Option<TransientKind>,
    pub tripwire: Option<Trip>,
}

/// Live fault state: the configuration plus counters.
#[derive(Debug)]
pub struct FaultState {
    pub config: FaultConfig,
    seed: u64,
    /// Requests seen so far per (API, scope, method, path).
    ordinals: HashMap<String, u64>,
    counts: BTreeMap<(String, String), u32>,
    trip_counts: Vec<u32>,
    /// Tripwires that fired, in firing order (indices into [`FaultConfig::tripwires`]).
    pub tripped: Vec<usize>,
    /// How many faults of each kind were injected, for the admin endpoint.
    pub injected: BTreeMap<String, u64>,
    release: watch::Sender<bool>,
}

/// The SplitMix64 finaliser.
fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// FNV-1a over `bytes`, continuing from `h`.
fn fnv1a(mut h: u64, bytes: &[u8]) -> u64 {
    for b in bytes {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// A number in [0, 1) that depends only on its arguments; `stream` separates independent draws
/// for the same request.
fn draw(seed: u64, request: &RequestInfo, method: &str, ordinal: u64, stream: u64) -> f64 {
    let mut h = 0xcbf2_9ce4_8422_2325 ^ mix64(seed);
    for part in [request.api, request.scope, method, request.path] {
        h = fnv1a(h, part.as_bytes());
        h = fnv1a(h, &[0xff]);
    }
    let v = mix64(mix64(h) ^ mix64(ordinal ^ stream.wrapping_mul(0x9e37_79b9_7f4a_7c15)));
    (v >> 11) as f64 / (1u64 << 53) as f64
}

tokio::task_local! {
    /// A drop asked for by a scripted fault during the current request.
    static SCRIPTED_DROP: Cell<Option<NamedFault>>;
}

/// Runs a request's handler so that a scripted `drop_before`/`drop_after` it meets can be seen
/// afterwards.
pub async fn with_scripted_drops<F: Future>(handler: F) -> (F::Output, Option<NamedFault>) {
    SCRIPTED_DROP
        .scope(Cell::new(None), async move {
            let out = handler.await;
            (out, SCRIPTED_DROP.with(Cell::get))
        })
        .await
}

/// Marks the current request's connection to be dropped (no-op outside a request).
pub fn request_drop(drop: NamedFault) {
    let _ = SCRIPTED_DROP.try_with(|cell| cell.set(Some(drop)));
}

impl FaultState {
    pub fn new(config: FaultConfig, default_seed: u64) -> FaultState {
        let trip_counts = vec![0; config.tripwires.len()];
        FaultState {
            seed: config.seed.unwrap_or(default_seed),
            config,
            ordinals: HashMap::new(),
            counts: BTreeMap::new(),
            trip_counts,
            tripped: Vec::new(),
            injected: BTreeMap::new(),
            release: watch::channel(false).0,
        }
    }

    /// Replaces the configuration and resets counters; requests held by tripwires are released.
    pub fn replace(&mut self, config: FaultConfig, default_seed: u64) {
        self.release_held();
        *self = FaultState::new(config, default_seed);
    }

    /// Releases every request held by a tripwire (their connections close without an answer).
    pub fn release_held(&mut self) {
        self.release.send_replace(true);
        self.release = watch::channel(false).0;
    }

    /// Records that tripwire `index` fired.
    pub fn trip(&mut self, index: usize) {
        self.tripped.push(index);
    }

    /// Decides what happens to one request: a tripwire that fires on it, or a transient fault
    /// drawn from the kinds in `applicable` (the kinds that can hit this request).
    pub fn decide(&mut self, request: &RequestInfo, applicable: &[TransientKind]) -> Decision {
        let method = request.method.to_ascii_uppercase();
        let key = format!(
            "{}\0{}\0{}\0{}",
            request.api, request.scope, method, request.path
        );
        let counter = self.ordinals.entry(key).or_default();
        let ordinal = *counter;
        *counter += 1;
        let mut fired = None;
        for (index, wire) in self.config.tripwires.iter().enumerate() {
            if wire.matches(request) {
                self.trip_counts[index] += 1;
                if self.trip_counts[index] == wire.nth && fired.is_none() {
                    fired = Some(Trip {
                        index,
                        when: wire.when,
                        release: self.release.subscribe(),
                    });
                }
            }
        }
        if let Some(trip) = fired {
            *self
                .injected
                .entry(format!("tripwire#{}", trip.index))
                .or_default() += 1;
            return Decision {
                transient: None,
                tripwire: Some(trip),
            };
        }
        Decision {
            transient: self.transient_for(request, &method, ordinal, applicable),
            tripwire: None,
        }
    }

    fn transient_for(
        &mut self,
        request: &RequestInfo,
        method: &str,
        ordinal: u64,
        applicable: &[TransientKind],
    ) -> Option<TransientKind> {
        let t = self.config.transient.get(request.api)?;
        if !t.methods.is_empty() && !t.methods.iter().any(|m| m.eq_ignore_ascii_case(method)) {
            return None;
        }
        if t.rate <= 0.0 || draw(self.seed, request, method, ordinal, 0) >= t.rate {
            return None;
        }
        let configured: &[TransientKind] = if t.kinds.is_empty() {
            &TransientKind::ALL
        } else {
            &t.kinds
        };
        let pool: Vec<TransientKind> = configured
            .iter()
            .copied()
            .filter(|k| k.applies_to_api(request.api) && applicable.contains(k))
            .collect();
        if pool.is_empty() {
            return None;
        }
        let pick = draw(self.seed, request, method, ordinal, 1) * pool.len() as f64;
        let kind = pool[(pick as usize).min(pool.len() - 1)];
        *self
            .injected
            .entry(format!("{}.{}", request.api, kind.name()))
            .or_default() += 1;
        Some(kind)
    }

    /// Decides whether a request with no path gets a transient fault (kept for callers of the
    /// first version; [`FaultState::decide`] is what the servers use).
    pub fn transient(&mut self, api: &str, method: &str) -> Option<TransientKind> {
        let request = RequestInfo {
            api,
            scope: "",
            method,
            path: "",
            endpoint: "",
        };
        let applicable: Vec<TransientKind> = TransientKind::ALL
            .into_iter()
            .filter(|k| !k.is_webhook())
            .collect();
        self.decide(&request, &applicable).transient
    }

    /// Counts one `verb` of `kind` and returns the scripted fault for it, if any.
    pub fn scripted(&mut self, kind: &str, verb: &str) -> Option<FaultAction> {
        let n = self
            .counts
            .entry((kind.to_string(), verb.to_string()))
            .or_default();
        *n += 1;
        let n = *n;
        let hit = self
            .config
            .scripted
            .iter()
            .find(|s| s.kind == kind && s.verb == verb && s.nth == n)?
            .action
            .clone();
        *self
            .injected
            .entry(format!("{kind}.{verb}#{n}"))
            .or_default() += 1;
        Some(hit)
    }

    /// Extra simulated milliseconds for a latency key.
    pub fn extra_latency_ms(&self, key: &str) -> u64 {
        self.config
            .extra_latency
            .get(key)
            .map(|s| (s * 1000.0).max(0.0) as u64)
            .unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request<'a>(api: &'a str, method: &'a str, path: &'a str) -> RequestInfo<'a> {
        RequestInfo {
            api,
            scope: "",
            method,
            path,
            endpoint: path,
        }
    }

    fn with_transient(api: &str, rate: f64, kinds: Vec<TransientKind>) -> FaultConfig {
        let mut config = FaultConfig::default();
        config.transient.insert(
            api.into(),
            TransientFaults {
                rate,
                kinds,
                methods: vec![],
            },
        );
        config
    }

    const GOOGLE: [TransientKind; 5] = [
        TransientKind::RateLimit,
        TransientKind::Unavailable,
        TransientKind::DropBefore,
        TransientKind::DropAfter,
        TransientKind::ServerError,
    ];

    #[test]
    fn scripted_fault_fires_on_the_nth_call_only() {
        let config = FaultConfig {
            scripted: vec![ScriptedFault {
                kind: "container.nodePool".into(),
                verb: "create".into(),
                nth: 2,
                action: FaultAction::Named(NamedFault::Stockout),
            }],
            ..Default::default()
        };
        let mut state = FaultState::new(config, 1);
        assert_eq!(state.scripted("container.nodePool", "create"), None);
        assert_eq!(
            state.scripted("container.nodePool", "create"),
            Some(FaultAction::Named(NamedFault::Stockout))
        );
        assert_eq!(state.scripted("container.nodePool", "create"), None);
    }

    #[test]
    fn transient_rate_is_respected_over_many_paths_and_deterministic() {
        let config = with_transient("compute", 0.2, vec![]);
        let run = |seed| {
            let mut s = FaultState::new(config.clone(), seed);
            (0..5000)
                .map(|i| {
                    let path = format!("/compute/v1/projects/p/global/networks/n{}", i % 1000);
                    s.decide(&request("compute", "GET", &path), &GOOGLE)
                        .transient
                })
                .collect::<Vec<_>>()
        };
        let hits = run(3).iter().filter(|k| k.is_some()).count();
        // 5000 draws at 0.2: mean 1000, sd ~28.
        assert!((880..=1120).contains(&hits), "{hits}");
        assert_eq!(run(3), run(3));
        assert_ne!(run(3), run(4));
        // Every kind of a Google API is drawn, roughly evenly; never a webhook kind.
        let drawn = run(3);
        for kind in GOOGLE {
            let n = drawn.iter().filter(|k| **k == Some(kind)).count();
            assert!((120..=290).contains(&n), "{kind:?}: {n}");
        }
        // Other APIs are untouched.
        let mut s = FaultState::new(config, 3);
        assert!((0..100).all(|i| {
            let path = format!("/container/v1/x{i}");
            s.decide(&request("container", "GET", &path), &GOOGLE)
                .transient
                .is_none()
        }));
    }

    #[test]
    fn decisions_do_not_depend_on_how_requests_interleave() {
        let config = with_transient("container", 0.3, vec![]);
        // Ten clients, each polling its own operation 20 times.
        let requests: Vec<(String, u32)> = (0..10)
            .flat_map(|client| {
                (0..20).map(move |poll| (format!("/container/v1/operations/op-{client}"), poll))
            })
            .collect();
        let decide_all = |order: &[(String, u32)]| {
            let mut s = FaultState::new(config.clone(), 42);
            let mut seen: BTreeMap<(String, u32), Option<TransientKind>> = BTreeMap::new();
            let mut ordinals: BTreeMap<String, u32> = BTreeMap::new();
            for (path, _) in order {
                let ordinal = ordinals.entry(path.clone()).or_default();
                let kind = s
                    .decide(&request("container", "GET", path), &GOOGLE)
                    .transient;
                seen.insert((path.clone(), *ordinal), kind);
                *ordinal += 1;
            }
            seen
        };
        let sequential = decide_all(&requests);
        // Round-robin interleaving, and a reversed one (client 9 first).
        let mut round_robin = requests.clone();
        round_robin.sort_by_key(|(path, poll)| (*poll, path.clone()));
        let mut reversed = requests.clone();
        reversed.sort_by_key(|(path, poll)| (std::cmp::Reverse(path.clone()), *poll));
        assert_eq!(sequential, decide_all(&round_robin));
        assert_eq!(sequential, decide_all(&reversed));
        assert!(sequential.values().any(Option::is_some));
    }

    #[test]
    fn webhook_kinds_hit_only_requests_they_apply_to() {
        let config = with_transient("kube", 1.0, vec![]);
        let mut s = FaultState::new(config, 1);
        let mut kinds = std::collections::HashSet::new();
        for i in 0..400 {
            let path = format!("/apis/kueue.x-k8s.io/v1beta1/clusterqueues/q{i}");
            kinds.insert(
                s.decide(&request("kube", "PATCH", &path), &TransientKind::ALL)
                    .transient
                    .unwrap(),
            );
            let unguarded = s
                .decide(&request("kube", "GET", &path), &GOOGLE)
                .transient
                .unwrap();
            assert!(!unguarded.is_webhook());
        }
        assert_eq!(kinds.len(), 7, "{kinds:?}");
        // Only webhook kinds configured, and the request is not guarded: no fault.
        let config = with_transient("kube", 1.0, vec![TransientKind::WebhookTimeout]);
        let mut s = FaultState::new(config, 1);
        assert!(
            s.decide(
                &request("kube", "POST", "/api/v1/namespaces/d/configmaps"),
                &GOOGLE
            )
            .transient
            .is_none()
        );
    }

    #[test]
    fn tripwires_fire_on_their_nth_match_and_take_precedence() {
        let mut config = with_transient("container", 1.0, vec![TransientKind::Unavailable]);
        config.tripwires = vec![Tripwire {
            api: "container".into(),
            method: Some("POST".into()),
            path: Some("/locations/{}/clusters".into()),
            nth: 2,
            when: TripWhen::After,
        }];
        let mut s = FaultState::new(config, 1);
        let create = |s: &mut FaultState| {
            let path = "/container/v1/projects/p/locations/us-central1/clusters";
            s.decide(
                &RequestInfo {
                    api: "container",
                    scope: "",
                    method: "post",
                    path,
                    endpoint: "/container/v1/projects/{}/locations/{}/clusters",
                },
                &GOOGLE,
            )
        };
        let first = create(&mut s);
        assert!(first.tripwire.is_none());
        assert_eq!(first.transient, Some(TransientKind::Unavailable));
        let second = create(&mut s);
        let trip = second.tripwire.expect("fires on the 2nd match");
        assert_eq!((trip.index, trip.when), (0, TripWhen::After));
        assert_eq!(second.transient, None);
        assert!(create(&mut s).tripwire.is_none());
        // Held until released.
        let held = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        held.block_on(async {
            let wait = tokio::spawn(trip.held());
            tokio::task::yield_now().await;
            assert!(!wait.is_finished());
            s.release_held();
            tokio::time::timeout(std::time::Duration::from_secs(5), wait)
                .await
                .expect("released")
                .unwrap();
        });
    }

    #[test]
    fn fault_file_is_checked() {
        let toml = "[transient.compte]\nrate = 0.1\n";
        let config: FaultConfig = toml::from_str(toml).unwrap();
        assert!(config.check().unwrap_err().contains("compte"));
        let toml = "[[scripted]]\nkind = \"container.nodePool\"\nverb = \"create\"\nnth = 1\naction = \"stockout\"\n";
        let config: FaultConfig = toml::from_str(toml).unwrap();
        config.check().unwrap();
        assert_eq!(
            config.scripted[0].action,
            FaultAction::Named(NamedFault::Stockout)
        );
        // Kubernetes verbs, patch included, and the drop actions.
        let toml = "[[scripted]]\nkind = \"kube.Deployment\"\nverb = \"patch\"\nnth = 1\n\
                    action = { status = 500, reason = \"InternalError\", message = \"boom\" }\n\
                    [[scripted]]\nkind = \"container.cluster\"\nverb = \"create\"\nnth = 1\n\
                    action = \"drop_after\"\n\
                    [[tripwire]]\napi = \"kube\"\npath = \"/clusterqueues\"\nwhen = \"after\"\n\
                    [transient.kube]\nrate = 0.2\nkinds = [\"server_error\", \"webhook_timeout\", \"webhook_no_endpoints\"]\n";
        let config: FaultConfig = toml::from_str(toml).unwrap();
        config.check().unwrap();
        assert_eq!(
            config.scripted[1].action,
            FaultAction::Named(NamedFault::DropAfter)
        );
        assert_eq!(config.tripwires[0].nth, 1);
        assert_eq!(config.tripwires[0].when, TripWhen::After);
        let refused = |toml: &str| {
            toml::from_str::<FaultConfig>(toml)
                .unwrap()
                .check()
                .unwrap_err()
        };
        assert!(
            refused("[[scripted]]\nkind = \"container.cluster\"\nverb = \"patch\"\nnth = 1\naction = \"stockout\"\n")
                .contains("Kubernetes kinds")
        );
        assert!(
            refused("[[scripted]]\nkind = \"kube.Job\"\nverb = \"create\"\nnth = 1\naction = \"stockout\"\n")
                .contains("no operation")
        );
        assert!(
            refused("[transient.compute]\nrate = 0.1\nkinds = [\"webhook_timeout\"]\n")
                .contains("kube")
        );
        assert!(refused("[[tripwire]]\napi = \"gke\"\n").contains("gke"));
        // JSON (PUT /_sim/faults) uses the same names.
        let json: FaultConfig = serde_json::from_str(
            r#"{"tripwire": [{"api": "container", "method": "POST", "path": "/clusters", "when": "before"}]}"#,
        )
        .unwrap();
        assert_eq!(json.tripwires[0].path.as_deref(), Some("/clusters"));
    }
}
