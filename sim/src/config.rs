//! The simulator's configuration: where it listens, how time moves, latencies, faults, quotas,
//! zone capacity, the world file, persistence.

use crate::capacity::CapacityConfig;
use crate::clock::ClockMode;
use crate::faults::FaultConfig;
use crate::latency::LatencyProfile;
use crate::quotas::QuotaConfig;
use crate::worldspec::WorldSpec;
use std::net::IpAddr;
use std::path::PathBuf;

/// Everything [`crate::start`] needs. `SimConfig::default()` listens on a random loopback port with
/// a manual clock and zero latency, which is what most tests want.
#[derive(Debug, Clone)]
pub struct SimConfig {
    /// Address to bind (loopback by default).
    pub host: IpAddr,
    /// Port for the Google APIs; 0 picks a free one.
    pub port: u16,
    pub clock: ClockMode,
    pub latency: LatencyProfile,
    pub faults: FaultConfig,
    /// When set, the whole world is loaded from and saved to this file.
    pub persist: Option<PathBuf>,
    /// Seed for every random choice (ids, latencies, faults).
    pub seed: u64,
    /// When set, the Kubernetes API servers accept only this bearer token besides each cluster's
    /// own static token ([`crate::kube::auth`]); otherwise any non-empty bearer token is accepted.
    /// A request without a token is always refused with 401.
    pub kube_token: Option<String>,
    /// Compute quota limits that replace the defaults ([`crate::quotas`]), per project, region,
    /// metric and GPU family.
    pub quotas: QuotaConfig,
    /// Zone capacity per machine type, on demand and Spot, and how long GKE waits for it
    /// ([`crate::capacity`]); unlimited by default.
    pub capacity: CapacityConfig,
    /// The world file's settings ([`crate::worldspec`]): its project numbers, quotas and capacity
    /// apply at every start (its quotas after [`SimConfig::quotas`]' limits, its capacity, when
    /// given, instead of [`SimConfig::capacity`]); its services and reservations are seeded into a
    /// fresh world only, never into one loaded from [`SimConfig::persist`].
    pub world: WorldSpec,
}

impl Default for SimConfig {
    fn default() -> Self {
        SimConfig {
            host: IpAddr::from([127, 0, 0, 1]),
            port: 0,
            clock: ClockMode::Manual,
            latency: LatencyProfile::zero(),
            faults: FaultConfig::default(),
            persist: None,
            seed: 42,
            kube_token: None,
            quotas: QuotaConfig::default(),
            capacity: CapacityConfig::default(),
            world: WorldSpec::default(),
        }
    }
}

impl SimConfig {
    /// Realistic latencies at the given time scale (1.0 = real time).
    pub fn realistic(scale: f64) -> SimConfig {
        SimConfig {
            clock: ClockMode::Scaled { scale },
            latency: LatencyProfile::realistic(),
            ..SimConfig::default()
        }
    }
}
