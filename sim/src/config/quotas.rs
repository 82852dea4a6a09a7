//! Compute quota limits that replace the defaults (`SimConfig::quotas`, `--quotas`, a world
//! file's `[[quotas]]`); the metrics and what they count are [`crate::quotas`]'s.

use serde::{Deserialize, Serialize};

/// Limits that replace the defaults: `SimConfig::quotas`, or the `--quotas` TOML file
/// (`[[limits]] metric = "NETWORKS" limit = 2`); a world file's `[[quotas]]` entries
/// ([`crate::worldspec`]) are added after these.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct QuotaConfig {
    #[serde(default)]
    pub limits: Vec<QuotaLimit>,
}

/// One override. Unset `project`, `region`, `gpu_family` match every value; the most specific
/// matching override wins (the later one among equally specific ones).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct QuotaLimit {
    /// A metric of [`crate::quotas::METRICS`]: `CPUS`, `NETWORKS`, `GPUS_PER_GPU_FAMILY` ...
    pub metric: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project: Option<String>,
    /// Regional metrics only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub region: Option<String>,
    /// `GPUS_PER_GPU_FAMILY` only: `NVIDIA_H100`, `NVIDIA_H100_MEGA`, `NVIDIA_H200`, `NVIDIA_B200`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu_family: Option<String>,
    pub limit: f64,
}
