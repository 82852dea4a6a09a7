//! The simulator's configuration: where it listens, how time moves, latencies, faults, quotas,
//! zone capacity, the world file, persistence. The types only, below every API: what they
//! configure is the business of the modules each names.

pub mod capacity;
pub mod quotas;
pub mod workloads;
pub mod world;

use crate::clock::ClockMode;
use crate::faults::FaultConfig;
use crate::latency::LatencyProfile;
use capacity::CapacityConfig;
use chrono::{DateTime, Utc};
use quotas::QuotaConfig;
use std::net::IpAddr;
use std::path::PathBuf;
use world::WorldSpec;

pub use crate::clock::{DEFAULT_START, default_start};

/// Where a fresh world's simulated time starts when its world file names no `start_time`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Start {
    /// At this instant (tests: [`default_start`] unless they pin another).
    At(DateTime<Utc>),
    /// At the wall clock's time when the simulator starts (the sandbox, `a3ctl-sim`), so what a
    /// person sees carries today's dates.
    WallClock,
}

impl Start {
    /// The instant this start stands for, read now.
    pub fn instant(self) -> DateTime<Utc> {
        match self {
            Start::At(t) => t,
            Start::WallClock => Utc::now(),
        }
    }
}

/// Everything [`crate::start`] needs. `SimConfig::default()` listens on a random loopback port with
/// a manual clock and zero latency, which is what most tests want.
#[derive(Debug, Clone)]
pub struct SimConfig {
    /// Address to bind (loopback by default).
    pub host: IpAddr,
    /// Port for the Google APIs; 0 picks a free one.
    pub port: u16,
    pub clock: ClockMode,
    /// Where simulated time starts in a fresh world whose world file names no `start_time` (a
    /// loaded world goes on from where it was saved).
    pub start: Start,
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
            start: Start::At(default_start()),
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
