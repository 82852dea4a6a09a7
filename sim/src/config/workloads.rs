//! What the simulated workloads report: the bus bandwidths of NCCL tests and how other containers
//! end (a world file's `[workloads]`, `PUT /_sim/workloads`); how they are run is
//! [`crate::kube::controllers::runs`]' and [`crate::kube::controllers::outcomes`]'.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The bus bandwidths NCCL tests report (world file `[workloads]`, `GET`/`PUT /_sim/workloads`):
/// each is the mean bus bandwidth of a test's 2G–8G rows; smaller sizes get less
/// ([`crate::kube::controllers::runs::bus_bandwidth_at`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WorkloadConfig {
    /// GB/s an NCCL test reports between nodes of one accelerator
    /// (`cloud.google.com/gke-accelerator`) over their GPU NICs.
    pub nccl_bus_bandwidth_gbps: BTreeMap<String, f64>,
    /// GB/s it reports over plain TCP on eth0 (no device Networks, or an accelerator without an
    /// entry above).
    pub tcp_bus_bandwidth_gbps: f64,
    /// How other containers end, first match first ([`crate::kube::controllers::outcomes`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub outcomes: Vec<Declared>,
}

impl Default for WorkloadConfig {
    /// Illustrative values, not measurements: above a3ctl's floors (Cluster Health Scanner's 60
    /// GB/s A3 High, 150 GB/s A3 Mega, 250 GB/s A3 Ultra and A4) as a healthy GPUDirect pair
    /// would be, and TCP far below all of them.
    fn default() -> Self {
        WorkloadConfig {
            nccl_bus_bandwidth_gbps: BTreeMap::from([
                ("nvidia-h100-80gb".to_string(), 80.0),
                ("nvidia-h100-mega-80gb".to_string(), 180.0),
                ("nvidia-h200-141gb".to_string(), 320.0),
                ("nvidia-b200".to_string(), 360.0),
            ]),
            tcp_bus_bandwidth_gbps: 2.5,
            outcomes: vec![],
        }
    }
}

/// What a world file or an admin request sets: entries given replace the defaults' entries for
/// the same accelerators (the others keep theirs).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WorkloadSpec {
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub nccl_bus_bandwidth_gbps: BTreeMap<String, f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tcp_bus_bandwidth_gbps: Option<f64>,
    /// Declared outcomes of other containers ([`crate::kube::controllers::outcomes`]); replace the (empty) default.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub outcomes: Vec<Declared>,
}

/// One declared outcome (see the module doc).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Declared {
    /// The container's image: equal, or its repository when this has no tag or digest.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image: Option<String>,
    /// Text found in the container's command and args, joined by spaces.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// Seconds from the container's start to its end.
    pub duration_secs: f64,
    #[serde(default)]
    pub exit_code: i32,
    /// Its whole log.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub log: String,
    /// A fault: only the first N matching containers of each cluster.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub times: Option<u32>,
}
