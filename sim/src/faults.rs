//! Fault injection: transient errors at a rate per API, and scripted faults.
//!
//! Transient faults are decided per request, before the handler runs (`rate_limit`, `unavailable`,
//! `drop_before`) or after it ran (`drop_after`: the change happened but the client never hears
//! about it, which is what makes retries of mutations dangerous). They are drawn from a seeded
//! generator, so a seed gives the same faults for the same sequence of requests.
//!
//! Scripted faults fire on the Nth mutation of a kind, for example "the 2nd create of a GKE node
//! pool fails with GCE_STOCKOUT". Modules ask [`FaultState::scripted`] when they start a mutation;
//! counting happens there.
//!
//! Configuration file (TOML), also accepted as JSON on `PUT /_sim/faults`:
//! ```toml
//! seed = 7
//! [transient.compute]
//! rate = 0.2
//! kinds = ["rate_limit", "unavailable", "drop_before", "drop_after"]
//! [[scripted]]
//! kind = "container.nodePool"
//! verb = "create"
//! nth = 1
//! action = "stockout"
//! [extra_latency]
//! "container.cluster.create" = 120
//! ```

use rand::{Rng, SeedableRng, rngs::StdRng};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// What a transient fault does to one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TransientKind {
    /// 429 RESOURCE_EXHAUSTED, reason `rateLimitExceeded`; the request is not processed.
    RateLimit,
    /// 503 UNAVAILABLE, reason `backendError`; the request is not processed.
    Unavailable,
    /// The connection is closed without a response; the request is not processed.
    DropBefore,
    /// The request is processed, then the connection is closed without a response.
    DropAfter,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TransientFaults {
    /// Probability in [0, 1] that a request to this API gets a fault.
    pub rate: f64,
    /// Which faults to draw from (uniformly); all of them when empty.
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
    /// A named fault: `quota_exceeded`, `stockout`, or `operation_error` (the operation starts and
    /// ends DONE with an error).
    Named(NamedFault),
    /// An immediate HTTP error with this status, reason and message.
    Http {
        status: u16,
        reason: String,
        message: String,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NamedFault {
    /// The call is refused at once with the API's quota error.
    QuotaExceeded,
    /// The operation starts, then ends DONE with a capacity error (GCE_STOCKOUT /
    /// ZONE_RESOURCE_POOL_EXHAUSTED); for GKE node pools the pool is left in ERROR.
    Stockout,
    /// The operation starts, then ends DONE with an internal error.
    OperationError,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScriptedFault {
    /// Resource kind, e.g. `compute.network`, `container.cluster`, `container.nodePool`,
    /// `file.instance`, `artifactregistry.repository`, `storage.bucket`.
    pub kind: String,
    /// `create`, `update`, `delete`, or `patch` (Kubernetes server-side apply of an existing object).
    pub verb: String,
    /// Fire on the Nth matching call (1-based).
    pub nth: u32,
    pub action: FaultAction,
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
        }
        for s in &self.scripted {
            if s.nth == 0 {
                return Err(format!(
                    "scripted fault for `{}` has nth = 0; counting starts at 1",
                    s.kind
                ));
            }
            if !["create", "update", "delete"].contains(&s.verb.as_str()) {
                return Err(format!(
                    "scripted fault verb must be create, update or delete, got `{}`",
                    s.verb
                ));
            }
        }
        Ok(())
    }
}

/// Live fault state: the configuration plus counters and the generator.
#[derive(Debug)]
pub struct FaultState {
    pub config: FaultConfig,
    rng: StdRng,
    counts: BTreeMap<(String, String), u32>,
    /// How many faults of each kind were injected, for the admin endpoint.
    pub injected: BTreeMap<String, u64>,
}

impl FaultState {
    pub fn new(config: FaultConfig, default_seed: u64) -> FaultState {
        let rng = StdRng::seed_from_u64(config.seed.unwrap_or(default_seed));
        FaultState {
            config,
            rng,
            counts: BTreeMap::new(),
            injected: BTreeMap::new(),
        }
    }

    /// Replaces the configuration and resets counters.
    pub fn replace(&mut self, config: FaultConfig, default_seed: u64) {
        *self = FaultState::new(config, default_seed);
    }

    /// Decides whether this request gets a transient fault.
    pub fn transient(&mut self, api: &str, method: &str) -> Option<TransientKind> {
        let t = self.config.transient.get(api)?;
        if !t.methods.is_empty() && !t.methods.iter().any(|m| m.eq_ignore_ascii_case(method)) {
            return None;
        }
        if t.rate <= 0.0 || self.rng.random::<f64>() >= t.rate {
            return None;
        }
        const ALL: [TransientKind; 4] = [
            TransientKind::RateLimit,
            TransientKind::Unavailable,
            TransientKind::DropBefore,
            TransientKind::DropAfter,
        ];
        let kinds: &[TransientKind] = if t.kinds.is_empty() { &ALL } else { &t.kinds };
        let kind = kinds[self.rng.random_range(0..kinds.len())];
        *self.injected.entry(format!("{api}.{kind:?}")).or_default() += 1;
        Some(kind)
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
    fn transient_rate_is_respected_and_deterministic() {
        let mut config = FaultConfig::default();
        config.transient.insert(
            "compute".into(),
            TransientFaults {
                rate: 0.2,
                kinds: vec![],
                methods: vec![],
            },
        );
        let run = |seed| {
            let mut s = FaultState::new(config.clone(), seed);
            (0..1000)
                .filter(|_| s.transient("compute", "GET").is_some())
                .count()
        };
        let hits = run(3);
        assert!((120..=280).contains(&hits), "{hits}");
        assert_eq!(hits, run(3));
        let mut s = FaultState::new(config.clone(), 3);
        assert!((0..100).all(|_| s.transient("container", "GET").is_none()));
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
    }
}
