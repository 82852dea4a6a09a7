//! What the sandbox's project holds when no world file is given: a project that bought its GPUs in
//! advance and has room to rehearse day two. Every shipped blueprint (`blueprints/*.toml`) fits
//! side by side in it, and so does each one with its GPU pools at twice their nodes.
//!
//! - **Reservations** ([`RESERVATION_ROOM`]): the reservation a GPU pool names and the sandbox
//!   lacks is made for twice the pool's nodes (`session::provide_reservations_with_room`), so
//!   scaling a reserved pool up is a plan, not a support ticket. One that exists is left as it is.
//! - **Quotas** ([`quotas`]): Compute's limits raised over the simulator's defaults (which stand
//!   for a fresh project and stay what the tests and `--world` files get). The numbers are not
//!   Google's: a real project asks for them (the quota increase requests of
//!   <https://cloud.google.com/docs/quotas/help/request_increase>); they are the shipped
//!   blueprints' needs at 2× with room left. At 2× the shipped blueprints need 9 + 5 + 9 + 3 + 1
//!   VPC networks (A3 Mega, A3 High, the minimal A3 Mega, A3 Ultra's gVNIC and RDMA VPCs, A4),
//!   about 18,100 vCPUs in us-central1 (64 + 2 `a3-megagpu-8g`, 8 `a3-highgpu-8g`, 8
//!   `a3-ultragpu-8g`, 4 `a4-highgpu-8g` at 208 or 224 vCPUs, and the system pools), 528 H100 Mega
//!   GPUs and 688 GPUs in all.
//!
//! `docs/simulator.md` ("The sandbox's world") lists the same numbers for users; the
//! `sandbox_room` integration test applies every shipped blueprint into one such world and scales
//! each to 2×. A world file (`--world`) replaces all of this: it is the sandbox's truth, and what
//! it does not raise keeps the simulator's defaults.

use a3ctl_sim::SimConfig;
use a3ctl_sim::quotas::QuotaConfig;

/// How many times a GPU pool's nodes the reservation the sandbox makes for it holds.
pub const RESERVATION_ROOM: u32 = 2;

/// The sandbox's quota limits, per project (and every region of a regional metric), as
/// `(metric, limit)`: the simulator's names ([`a3ctl_sim::quotas::METRICS`]).
pub const LIMITS: [(&str, f64); 14] = [
    ("CPUS", 40_000.0),
    ("CPUS_ALL_REGIONS", 80_000.0),
    ("GPUS_PER_GPU_FAMILY", 2_048.0),
    ("GPUS_ALL_REGIONS", 4_096.0),
    ("LOCAL_SSD_TOTAL_GB", 1_000_000.0),
    ("RESOURCE_POLICIES", 50.0),
    ("NETWORKS", 60.0),
    ("SUBNETWORKS", 500.0),
    ("FIREWALLS", 500.0),
    ("ROUTERS", 50.0),
    ("PREEMPTIBLE_NVIDIA_H100_GPUS", 512.0),
    ("PREEMPTIBLE_NVIDIA_H100_MEGA_GPUS", 512.0),
    ("PREEMPTIBLE_NVIDIA_H200_GPUS", 512.0),
    ("PREEMPTIBLE_NVIDIA_B200_GPUS", 512.0),
];

/// `config` with the sandbox's quotas: the simulator `--sandbox` starts when no world file is
/// given (its reservations are made per blueprint, when a command opens it).
pub fn with_room(config: SimConfig) -> SimConfig {
    SimConfig {
        quotas: quotas(),
        ..config
    }
}

/// [`LIMITS`] as the simulator's quota configuration.
pub fn quotas() -> QuotaConfig {
    LIMITS
        .iter()
        .fold(QuotaConfig::default(), |config, (metric, limit)| {
            config.with(metric, *limit)
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_limit_names_a_metric_of_the_simulator_and_raises_its_default() {
        quotas().check().expect("the sandbox's quotas are valid");
        for (name, limit) in LIMITS {
            let metric = a3ctl_sim::quotas::metric_named(name).expect("a simulated metric");
            assert!(
                limit > metric.default,
                "{name}: {limit} ≤ {}",
                metric.default
            );
        }
    }
}
