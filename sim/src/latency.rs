//! The latency profile: how long each simulated operation takes, in simulated seconds.
//!
//! Defaults follow the field figures of AI-Hypercomputer/gpu-recipes and the resource timeouts of
//! hashicorp/terraform-provider-google (cluster 6–10 min, GPU node pool 5–15 min, Filestore
//! 10–15 min, network 20–40 s ...). A duration is drawn uniformly from `[min, max]` with the
//! world's seeded random generator, so a given seed always gives the same timings.
//!
//! A profile file (TOML) overrides any subset of keys:
//! ```toml
//! [latency]
//! "container.cluster.create" = [360, 600]
//! "compute.network.insert" = 30          # a single number means a fixed duration
//! ```
//! The `zero` profile makes every operation finish at the next read, for unit tests.

use rand::Rng;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// A range of simulated seconds.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Span {
    Fixed(f64),
    Range([f64; 2]),
}

impl Span {
    fn bounds(self) -> (f64, f64) {
        match self {
            Span::Fixed(s) => (s, s),
            Span::Range([a, b]) => (a.min(b), a.max(b)),
        }
    }
}

/// Every latency key, with its realistic default in simulated seconds.
pub const DEFAULTS: &[(&str, f64, f64)] = &[
    // Compute: `compute.<word>.insert|delete|patch` of each collection
    // ([`crate::compute::COLLECTIONS`]; PUT and special verbs use `patch`; a unit test there
    // checks that every collection has its three).
    ("compute.network.insert", 20.0, 40.0),
    ("compute.network.delete", 20.0, 40.0),
    ("compute.network.patch", 5.0, 15.0),
    ("compute.subnetwork.insert", 10.0, 25.0),
    ("compute.subnetwork.delete", 10.0, 25.0),
    ("compute.subnetwork.patch", 5.0, 15.0),
    ("compute.firewall.insert", 5.0, 15.0),
    ("compute.firewall.delete", 5.0, 15.0),
    ("compute.firewall.patch", 5.0, 15.0),
    ("compute.router.insert", 10.0, 20.0),
    ("compute.router.delete", 10.0, 20.0),
    ("compute.router.patch", 10.0, 20.0),
    ("compute.resourcePolicy.insert", 5.0, 10.0),
    ("compute.resourcePolicy.delete", 5.0, 10.0),
    ("compute.resourcePolicy.patch", 5.0, 10.0),
    ("compute.reservation.insert", 10.0, 30.0),
    ("compute.reservation.delete", 10.0, 30.0),
    ("compute.reservation.patch", 10.0, 30.0),
    // GKE.
    ("container.cluster.create", 360.0, 600.0),
    ("container.cluster.delete", 180.0, 360.0),
    ("container.cluster.update", 30.0, 120.0),
    ("container.nodePool.create", 120.0, 240.0),
    ("container.nodePool.create.gpu", 300.0, 900.0),
    ("container.nodePool.delete", 120.0, 300.0),
    ("container.nodePool.update", 60.0, 300.0),
    ("container.nodePool.setSize", 60.0, 180.0),
    // How long a pool's instance groups keep trying VMs that cannot be made (a reservation
    // without room, no quota, a stockout) before GKE fails the operation: the
    // `Not all instances running in IGM after 35m4.033429035s` that public reports quote
    // (akka/akka-core#32992). A create or resize that fails so lasts at least this long, and its
    // message says how long it ran (`container::operations::IGM_AFTER`).
    ("container.nodePool.igmWait", 2104.033429035, 2104.033429035),
    // A node upgrade's steps (container/upgrades.rs): a new VM up and its node Ready; a node
    // cordoned, drained and deleted (guesses: GKE publishes no figures; drains wait for
    // PodDisruptionBudgets up to an hour, not simulated).
    // GUESS(latency-node-upgrade-steps): how long a node upgrade's new VM and drain take (GKE publishes no figures)
    ("container.nodePool.upgrade.create", 60.0, 180.0),
    ("container.nodePool.upgrade.drain", 30.0, 120.0),
    ("container.nodePool.setSize.gpu", 300.0, 600.0),
    ("container.nodePool.setAutoscaling", 10.0, 30.0),
    ("container.nodePool.setManagement", 10.0, 30.0),
    // Filestore.
    ("file.instance.create", 600.0, 900.0),
    ("file.instance.delete", 300.0, 600.0),
    ("file.instance.update", 60.0, 300.0),
    // Artifact Registry.
    ("artifactregistry.repository.create", 5.0, 15.0),
    ("artifactregistry.repository.delete", 5.0, 15.0),
    // One request's round trip (network and front end), before the API handles it: to Google's
    // APIs 50–250 ms, to a cluster's API server less (a regional endpoint, no global front end).
    // Waited in real time under a scaled clock only, so plan and refresh speed can be measured.
    ("request.google", 0.05, 0.25),
    ("request.kube", 0.005, 0.03),
    // Service Usage: enabling an API takes seconds to a minute or two.
    ("serviceusage.service.enable", 5.0, 60.0),
    ("serviceusage.service.disable", 5.0, 30.0),
    // Kubernetes objects.
    ("kube.crd.established", 1.0, 3.0),
    ("kube.daemonset.ready", 20.0, 60.0),
    ("kube.deployment.available", 20.0, 60.0),
    ("kube.webhook.ready", 5.0, 15.0),
    ("kube.driver.installed", 60.0, 120.0),
    ("kube.node.ready", 0.0, 0.0),
    // A pod's image pull and container start, once its volumes are mounted.
    ("kube.pod.start", 2.0, 8.0),
    // An NCCL test, from the moment every host's test container runs to the leader's exit
    // (`kube::controllers::runs`).
    ("kube.nccl.test", 60.0, 180.0),
];

/// Nodes a GPU pool brings up in the time the profile gives its create (or a resize its
/// `setSize.gpu`).
const FIRST_BATCH: f64 = 8.0;
/// The share of a GPU pool's create each doubling of its nodes beyond the first batch adds.
const PER_DOUBLING: f64 = 0.5;

/// How much longer than the profile's `container.nodePool.create.gpu` (or `setSize.gpu`) a GPU
/// pool create (resize) of `nodes` new nodes takes: 1× up to 8 nodes, then half as much again for
/// each doubling (16 nodes 1.5×, 32 nodes 2×, 1,000 nodes about 4.5×). GKE brings large pools up
/// in batches, and big pools outrun the 10-minute default timeouts: Cluster Toolkit raised its
/// node pool timeouts for 96-node pools (GoogleCloudPlatform/cluster-toolkit, `gke-node-pool`
/// module, `timeouts`), and terraform-provider-google's node pool create timeout is 30 min. The
/// factor itself is this simulator's model, not a published figure: a guess. The simulator's GPU
/// pools and `a3ctl init`'s estimate both use it, so the two agree.
// GUESS(gpu-pool-size-factor): how a GPU pool's create and resize grow with its nodes: 1× up to 8 nodes, half as much again per doubling
pub fn pool_size_factor(nodes: u64) -> f64 {
    let batches = (nodes as f64 / FIRST_BATCH).ceil().max(1.0);
    1.0 + PER_DOUBLING * batches.log2()
}

/// A latency profile: the defaults, a named preset, or a file's overrides on top of them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LatencyProfile {
    pub spans: BTreeMap<String, Span>,
}

#[derive(Debug, thiserror::Error)]
pub enum ProfileError {
    #[error("unknown latency preset `{0}` (expected `realistic`, `zero` or a path to a TOML file)")]
    UnknownPreset(String),
    #[error("cannot read latency profile `{path}`: {source}")]
    Read {
        path: String,
        source: std::io::Error,
    },
    #[error("invalid latency profile `{path}`: {message}")]
    Parse { path: String, message: String },
    #[error("latency profile `{path}` sets unknown key `{key}`")]
    UnknownKey { path: String, key: String },
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ProfileFile {
    latency: BTreeMap<String, Span>,
}

/// Every latency key the simulator knows, with its realistic default in simulated seconds.
pub fn defaults() -> Vec<(String, f64, f64)> {
    DEFAULTS
        .iter()
        .map(|(k, a, b)| (k.to_string(), *a, *b))
        .collect()
}

impl Default for LatencyProfile {
    fn default() -> Self {
        Self::realistic()
    }
}

impl LatencyProfile {
    /// The realistic defaults.
    pub fn realistic() -> LatencyProfile {
        let spans = defaults()
            .into_iter()
            .map(|(k, a, b)| (k, Span::Range([a, b])))
            .collect();
        LatencyProfile { spans }
    }

    /// Every operation takes no simulated time.
    pub fn zero() -> LatencyProfile {
        let spans = defaults()
            .into_iter()
            .map(|(k, _, _)| (k, Span::Fixed(0.0)))
            .collect();
        LatencyProfile { spans }
    }

    /// `realistic`, `zero`, or a TOML file of overrides on top of the realistic defaults.
    pub fn load(spec: &str) -> Result<LatencyProfile, ProfileError> {
        match spec {
            "realistic" | "default" => return Ok(Self::realistic()),
            "zero" => return Ok(Self::zero()),
            _ => {}
        }
        if !std::path::Path::new(spec).exists() {
            return Err(ProfileError::UnknownPreset(spec.to_string()));
        }
        let text = std::fs::read_to_string(spec).map_err(|source| ProfileError::Read {
            path: spec.to_string(),
            source,
        })?;
        let file: ProfileFile = toml::from_str(&text).map_err(|e| ProfileError::Parse {
            path: spec.to_string(),
            message: e.to_string(),
        })?;
        let mut profile = Self::realistic();
        for (key, span) in file.latency {
            if !profile.spans.contains_key(&key) {
                return Err(ProfileError::UnknownKey {
                    path: spec.to_string(),
                    key,
                });
            }
            profile.spans.insert(key, span);
        }
        Ok(profile)
    }

    /// Draws a duration in simulated milliseconds for `key`. Unknown keys take no time, so a module
    /// can ask for a key that a test's profile leaves out.
    pub fn sample_ms(&self, key: &str, rng: &mut impl Rng) -> u64 {
        let Some(span) = self.spans.get(key) else {
            return 0;
        };
        let (lo, hi) = span.bounds();
        let secs = if hi > lo {
            rng.random_range(lo..=hi)
        } else {
            lo
        };
        (secs * 1000.0).round().max(0.0) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn realistic_cluster_create_is_six_to_ten_minutes() {
        let profile = LatencyProfile::realistic();
        let mut rng = rand::rngs::StdRng::seed_from_u64(1);
        for _ in 0..50 {
            let ms = profile.sample_ms("container.cluster.create", &mut rng);
            assert!((360_000..=600_000).contains(&ms), "{ms}");
        }
    }

    #[test]
    fn gpu_pools_take_longer_as_they_grow_past_eight_nodes() {
        assert_eq!(pool_size_factor(0), 1.0);
        assert_eq!(pool_size_factor(2), 1.0);
        assert_eq!(pool_size_factor(8), 1.0);
        assert_eq!(pool_size_factor(16), 1.5);
        assert_eq!(pool_size_factor(32), 2.0);
        assert!((4.4..4.6).contains(&pool_size_factor(1000)));
    }

    #[test]
    fn a_request_round_trip_is_tens_of_milliseconds_and_none_in_zero() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(1);
        let realistic = LatencyProfile::realistic();
        for _ in 0..50 {
            let google = realistic.sample_ms("request.google", &mut rng);
            assert!((50..=250).contains(&google), "{google}");
            let kube = realistic.sample_ms("request.kube", &mut rng);
            assert!((5..=30).contains(&kube), "{kube}");
        }
        assert_eq!(
            LatencyProfile::zero().sample_ms("request.google", &mut rng),
            0
        );
    }

    #[test]
    fn profile_file_overrides_and_rejects_unknown_keys() {
        let dir = tempfile::tempdir().unwrap();
        let good = dir.path().join("p.toml");
        std::fs::write(&good, "[latency]\n\"compute.network.insert\" = 3\n").unwrap();
        let profile = LatencyProfile::load(good.to_str().unwrap()).unwrap();
        let mut rng = rand::rngs::StdRng::seed_from_u64(1);
        assert_eq!(profile.sample_ms("compute.network.insert", &mut rng), 3000);
        let bad = dir.path().join("bad.toml");
        std::fs::write(&bad, "[latency]\n\"compute.netwrk.insert\" = 3\n").unwrap();
        let err = LatencyProfile::load(bad.to_str().unwrap()).unwrap_err();
        assert!(err.to_string().contains("compute.netwrk.insert"), "{err}");
        assert!(matches!(
            LatencyProfile::load("fast"),
            Err(ProfileError::UnknownPreset(_))
        ));
    }
}
