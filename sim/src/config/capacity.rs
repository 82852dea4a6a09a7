//! Zone capacity limits and the stockout wait (`SimConfig::capacity`, a world file's
//! `[capacity]`); what they limit is [`crate::capacity`]'s.

use serde::{Deserialize, Serialize};

/// The default stockout wait: the duration GKE prints in its instance-group failures
/// (`35m4.033429035s`).
pub const DEFAULT_STOCKOUT_WAIT_SECS: f64 = 2104.033429035;

fn default_wait() -> f64 {
    DEFAULT_STOCKOUT_WAIT_SECS
}

/// Zone capacity limits and the stockout wait: `SimConfig::capacity`, or the `[capacity]` table of
/// a world file. The default is unlimited capacity everywhere.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CapacityConfig {
    /// Simulated seconds a GKE create or resize that is short of capacity waits for it before
    /// failing with `GCE_STOCKOUT` (counted from the operation's start).
    #[serde(default = "default_wait")]
    pub stockout_wait_secs: f64,
    /// Limits per zone and machine type; a zone and machine type not listed is unlimited.
    #[serde(default)]
    pub zones: Vec<ZoneCapacity>,
}

impl Default for CapacityConfig {
    fn default() -> Self {
        CapacityConfig {
            stockout_wait_secs: DEFAULT_STOCKOUT_WAIT_SECS,
            zones: vec![],
        }
    }
}

/// The capacity of one zone for one machine type, in VMs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ZoneCapacity {
    pub zone: String,
    pub machine_type: String,
    /// On-demand VMs (reservations included); unset = unlimited.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub on_demand: Option<u64>,
    /// Spot and preemptible VMs; unset = unlimited.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spot: Option<u64>,
}
