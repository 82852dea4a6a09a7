//! Compute Engine's allocation quotas: which metrics exist and where they are kept, their limits
//! (defaults, and overrides from [`QuotaConfig`]), their usage computed from the world, and the
//! checks that Compute inserts and GKE node pools make against them.
//!
//! Sources: "Allocation quotas" (<https://cloud.google.com/compute/resource-usage>), the v1
//! `Quota` schema (`metric`, `limit`, `usage`) of `Region.quotas` and `Project.quotas`
//! (<https://cloud.google.com/compute/docs/reference/rest/v1/regions/get>,
//! <https://cloud.google.com/compute/docs/reference/rest/v1/projects/get>), and the Cloud Quotas
//! API (<https://cloud.google.com/docs/quotas/reference/rest/v1/projects.locations.services.quotaInfos>).
//!
//! **Where each metric is kept.** Per region (`Region.quotas`): `CPUS`, `LOCAL_SSD_TOTAL_GB`,
//! `RESOURCE_POLICIES` and the Spot/preemptible GPU metrics `PREEMPTIBLE_NVIDIA_H100_GPUS`,
//! `PREEMPTIBLE_NVIDIA_H100_MEGA_GPUS`, `PREEMPTIBLE_NVIDIA_H200_GPUS` and
//! `PREEMPTIBLE_NVIDIA_B200_GPUS`. Per
//! project (`Project.quotas`): `NETWORKS`, `SUBNETWORKS`, `FIREWALLS`, `ROUTERS`,
//! `CPUS_ALL_REGIONS` and `GPUS_ALL_REGIONS` — the metrics `gcloud compute project-info describe`
//! lists globally (a real project's list, as pasted in public reports, has `NETWORKS`,
//! `FIREWALLS`, `ROUTERS`, `SUBNETWORKS`, `CPUS_ALL_REGIONS` and `GPUS_ALL_REGIONS` there, and
//! `CPUS`, `LOCAL_SSD_TOTAL_GB`, the GPU metrics under `gcloud compute regions describe`).
//!
//! **On-demand H100 and H100 Mega GPUs are not legacy metrics.** The v1 `Quota.metric` enum has
//! `PREEMPTIBLE_NVIDIA_H100_GPUS` and `COMMITTED_NVIDIA_H100_GPUS` but no `NVIDIA_H100_GPUS`, and
//! projects report that `gcloud compute regions describe` shows no on-demand H100, H100 Mega, H200
//! or B200 row: those families are counted by one Cloud Quotas quota,
//! `GPUS-PER-GPU-FAMILY-per-project-region`, with the dimensions `region` and `gpu_family`
//! (`NVIDIA_H100`, `NVIDIA_H100_MEGA`; Google's Cloud Quotas "common use cases" page sets it per
//! region), and Compute names it `GPUS_PER_GPU_FAMILY` when an insert exceeds it (`Quota
//! 'GPUS_PER_GPU_FAMILY' exceeded.  Limit: 16.0 in region europe-west1`, quoted in public test
//! suites and reports). The simulator follows that: the family quota is served only by the Cloud
//! Quotas API ([`crate::cloudquotas`]), never in `Region.quotas`; its usage is not served at all
//! (Google serves it through Cloud Monitoring), so a client computes it from the world — the
//! reservations and node pools of the project, counted as below. `PREEMPTIBLE_NVIDIA_H100_MEGA_GPUS`
//! is not in the v1 enum either; that it is a regional metric like its H100 sibling is inferred.
//! The same holds for A3 Ultra (`gpu_family` `NVIDIA_H200`, Spot metric
//! `PREEMPTIBLE_NVIDIA_H200_GPUS`) and A4 (`NVIDIA_B200`, `PREEMPTIBLE_NVIDIA_B200_GPUS`): neither
//! metric is in the v1 enum (revision 20261106), and both names are the ones public projects request
//! and report per region (a Spot `a4-highgpu-8g` MIG reporting `PREEMPTIBLE_NVIDIA_B200_GPUS` limit
//! 64 in asia-southeast1; quota runbooks listing `PREEMPTIBLE_NVIDIA_H200_GPUS` beside
//! `PREEMPTIBLE_NVIDIA_H100_MEGA_GPUS`). The `COMMITTED_NVIDIA_*` metrics of committed-use
//! discounts are not simulated for any family.
//!
//! **What counts.** Each network, subnetwork (also those an auto-mode network creates), firewall
//! rule, router and resource policy counts one, from its insert until its delete is DONE (an
//! insert whose operation fails counts nothing). A VM counts its machine type's vCPUs (every
//! series against `CPUS`: the simulator does not split `N2_CPUS`, `C3_CPUS` ... off), its GPUs
//! (on demand: the family quota; Spot, preemptible or flex-start: `PREEMPTIBLE_<FAMILY>_GPUS`;
//! all: `GPUS_ALL_REGIONS`) and its local SSDs at 375 GB each (`LOCAL_SSD_TOTAL_GB`). A reservation
//! counts `count` such VMs, with its `localSsds`, from its insert until its delete is DONE — "VMs
//! in a reservation consume quota as if they were running"; a resize that grows it counts the new
//! `count` from its start (and fails with `QUOTA_EXCEEDED` past a limit), one that shrinks it
//! when it is DONE. A VM that consumes a reservation
//! counts nothing more. The VMs are GKE nodes (the simulator has no Compute instances): a pool
//! counts, per zone, the larger of the nodes its instance group has and the group's `targetSize`
//! (the nodes an unfailed create or resize is bringing it to), the numbers
//! `instanceGroupManagers.get` serves ([`crate::instance_groups`]). Not simulated: a
//! pool with `ANY_RESERVATION` affinity never lands in an open reservation (it counts on demand),
//! a Spot VM in a project whose preemptible limit is 0 still counts against the preemptible
//! metric (Compute would take standard quota), and calendar-mode reservations (v1 `Reservation`
//! has no `reservationMode`) do not exist.
//!
//! **Checks.** A Compute insert that would take a metric past its limit ends its operation DONE
//! with `QUOTA_EXCEEDED` ([`compute_failure`]); the first metric exceeded, in [`METRICS`] order,
//! is named. A GKE node pool (or a cluster's pools) is checked when it is created against the
//! regional legacy metrics (`Insufficient regional quota to satisfy request: ...`, 403 at once,
//! [`gke_insufficient`]); the family and project-wide quotas, which GKE's check does not see, fail
//! the operation when the instance groups create the VMs (`[GCE_QUOTA_EXCEEDED]`). See
//! `docs/simulator.md` for the texts and their sources.

pub use crate::config::quotas::{QuotaConfig, QuotaLimit};
use crate::error::GcpError;
use crate::geo;
use crate::instance_groups;
use crate::state::compute::{Effect, Failure, Kind, Life, RESERVATION};
use crate::state::container::{Cluster, NodePool};
use crate::world::World;
use serde_json::{Value, json};
use std::collections::{BTreeMap, BTreeSet};

/// Where a metric's limit applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Place {
    /// One limit per project (`Project.quotas`, `...-per-project`).
    Global,
    /// One limit per project and region (`Region.quotas`, `...-per-project-region`).
    Region,
}

/// One quota metric.
#[derive(Debug)]
pub struct Metric {
    /// The name Compute uses (`Quota.metric`, and `Quota '<name>' exceeded.`).
    pub name: &'static str,
    /// The Cloud Quotas `quotaId`, also `limitName` in Compute's `errorDetails`.
    pub quota_id: &'static str,
    pub place: Place,
    /// Listed in `Region.quotas` / `Project.quotas` (false: only in Cloud Quotas).
    pub legacy: bool,
    /// Dimensioned by `gpu_family` too.
    pub per_family: bool,
    /// GKE checks it when a node pool is created (the regional legacy metrics).
    pub gke_precheck: bool,
    /// The limit of a fresh simulated project.
    pub default: f64,
    /// Cloud Quotas `metricDisplayName`.
    pub display: &'static str,
    /// Cloud Quotas `quotaDisplayName`.
    pub quota_display: &'static str,
    /// Cloud Quotas `metricUnit`.
    pub unit: &'static str,
}

impl Metric {
    /// `compute.googleapis.com/<lowercase name>`.
    pub fn metric_name(&self) -> String {
        format!("compute.googleapis.com/{}", self.name.to_lowercase())
    }
}

const fn metric(
    name: &'static str,
    quota_id: &'static str,
    place: Place,
    default: f64,
    display: &'static str,
    quota_display: &'static str,
) -> Metric {
    Metric {
        name,
        quota_id,
        place,
        legacy: true,
        per_family: false,
        gke_precheck: matches!(place, Place::Region),
        default,
        display,
        quota_display,
        unit: "1",
    }
}

/// The family quota's name in Compute's errors.
pub const GPUS_PER_GPU_FAMILY: &str = "GPUS_PER_GPU_FAMILY";

/// Every metric the simulator keeps, in the order checks report them. Defaults fit both shipped
/// blueprints at once in one region (A3 Mega: a reservation of 32 `a3-megagpu-8g` = 6,656 vCPUs
/// and 256 H100 Mega GPUs; A3 High: 4 on-demand `a3-highgpu-8g` = 832 vCPUs, 32 H100 GPUs and
/// 64 local SSDs; system pools) with room to spare; the network metrics keep the limits of the
/// collections' declarations (`sim/src/compute/<collection>.rs`).
pub static METRICS: &[Metric] = &[
    metric(
        "CPUS",
        "CPUS-per-project-region",
        Place::Region,
        12_000.0,
        "CPUs",
        "CPUs per project per region",
    ),
    Metric {
        legacy: false,
        per_family: true,
        gke_precheck: false,
        ..metric(
            GPUS_PER_GPU_FAMILY,
            "GPUS-PER-GPU-FAMILY-per-project-region",
            Place::Region,
            512.0,
            "GPUs (per GPU family)",
            "GPUs per GPU family per project per region",
        )
    },
    metric(
        "PREEMPTIBLE_NVIDIA_H100_GPUS",
        "PREEMPTIBLE-NVIDIA-H100-GPUS-per-project-region",
        Place::Region,
        128.0,
        "Preemptible NVIDIA H100 GPUs",
        "Preemptible NVIDIA H100 GPUs per project per region",
    ),
    metric(
        "PREEMPTIBLE_NVIDIA_H100_MEGA_GPUS",
        "PREEMPTIBLE-NVIDIA-H100-MEGA-GPUS-per-project-region",
        Place::Region,
        128.0,
        "Preemptible NVIDIA H100 MEGA GPUs",
        "Preemptible NVIDIA H100 MEGA GPUs per project per region",
    ),
    metric(
        "PREEMPTIBLE_NVIDIA_H200_GPUS",
        "PREEMPTIBLE-NVIDIA-H200-GPUS-per-project-region",
        Place::Region,
        128.0,
        "Preemptible NVIDIA H200 GPUs",
        "Preemptible NVIDIA H200 GPUs per project per region",
    ),
    metric(
        "PREEMPTIBLE_NVIDIA_B200_GPUS",
        "PREEMPTIBLE-NVIDIA-B200-GPUS-per-project-region",
        Place::Region,
        128.0,
        "Preemptible NVIDIA B200 GPUs",
        "Preemptible NVIDIA B200 GPUs per project per region",
    ),
    Metric {
        unit: "GBy",
        ..metric(
            "LOCAL_SSD_TOTAL_GB",
            "LOCAL-SSD-TOTAL-GB-per-project-region",
            Place::Region,
            65_536.0,
            "Local SSD (GB)",
            "Local SSD (GB) per project per region",
        )
    },
    Metric {
        gke_precheck: false,
        ..metric(
            "RESOURCE_POLICIES",
            "RESOURCE-POLICIES-per-project-region",
            Place::Region,
            10.0,
            "Resource policies",
            "Resource policies per project per region",
        )
    },
    metric(
        "CPUS_ALL_REGIONS",
        "CPUS-ALL-REGIONS-per-project",
        Place::Global,
        24_000.0,
        "CPUs (all regions)",
        "CPUs (all regions) per project",
    ),
    metric(
        "GPUS_ALL_REGIONS",
        "GPUS-ALL-REGIONS-per-project",
        Place::Global,
        1_024.0,
        "GPUs (all regions)",
        "GPUs (all regions) per project",
    ),
    metric(
        "NETWORKS",
        "NETWORKS-per-project",
        Place::Global,
        15.0,
        "VPC networks",
        "VPC networks per project",
    ),
    metric(
        "SUBNETWORKS",
        "SUBNETWORKS-per-project",
        Place::Global,
        175.0,
        "Subnetworks",
        "Subnetworks per project",
    ),
    metric(
        "FIREWALLS",
        "FIREWALLS-per-project",
        Place::Global,
        200.0,
        "Firewall rules",
        "Firewall rules per project",
    ),
    metric(
        "ROUTERS",
        "ROUTERS-per-project",
        Place::Global,
        20.0,
        "Cloud Routers",
        "Cloud Routers per project",
    ),
];

/// The GPU families the simulator knows: accelerator type, `gpu_family`, and the metric its Spot
/// and preemptible VMs count against.
pub const FAMILIES: &[(&str, &str, &str)] = &[
    (
        "nvidia-h100-80gb",
        "NVIDIA_H100",
        "PREEMPTIBLE_NVIDIA_H100_GPUS",
    ),
    (
        "nvidia-h100-mega-80gb",
        "NVIDIA_H100_MEGA",
        "PREEMPTIBLE_NVIDIA_H100_MEGA_GPUS",
    ),
    (
        "nvidia-h200-141gb",
        "NVIDIA_H200",
        "PREEMPTIBLE_NVIDIA_H200_GPUS",
    ),
    ("nvidia-b200", "NVIDIA_B200", "PREEMPTIBLE_NVIDIA_B200_GPUS"),
];

/// GB of one local SSD partition.
pub const LOCAL_SSD_GB: f64 = 375.0;

/// The metric named `name`.
pub fn metric_named(name: &str) -> Option<&'static Metric> {
    METRICS.iter().find(|m| m.name == name)
}

/// The metric whose Cloud Quotas id is `quota_id`.
pub fn metric_by_id(quota_id: &str) -> Option<&'static Metric> {
    METRICS.iter().find(|m| m.quota_id == quota_id)
}

/// One limit or usage cell: a metric, in a region (regional metrics), for a GPU family (the family
/// quota).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Key {
    pub metric: &'static str,
    pub region: Option<String>,
    pub family: Option<String>,
}

impl Key {
    pub fn global(metric: &'static str) -> Key {
        Key {
            metric,
            region: None,
            family: None,
        }
    }

    pub fn regional(metric: &'static str, region: &str) -> Key {
        Key {
            metric,
            region: Some(region.to_string()),
            family: None,
        }
    }

    /// The metric of this key (every key is built from [`METRICS`]).
    pub fn metric(&self) -> &'static Metric {
        metric_named(self.metric).unwrap_or(&METRICS[0])
    }

    fn rank(&self) -> usize {
        METRICS
            .iter()
            .position(|m| m.name == self.metric)
            .unwrap_or(usize::MAX)
    }
}

// ---------------------------------------------------------------------------------------------
// Limits.

impl QuotaConfig {
    fn push(
        mut self,
        metric: &str,
        region: Option<&str>,
        family: Option<&str>,
        limit: f64,
    ) -> Self {
        self.limits.push(QuotaLimit {
            metric: metric.to_string(),
            project: None,
            region: region.map(str::to_string),
            gpu_family: family.map(str::to_string),
            limit,
        });
        self
    }

    /// `metric` limited to `limit` in every project (and every region of a regional metric).
    pub fn with(self, metric: &str, limit: f64) -> Self {
        self.push(metric, None, None, limit)
    }

    /// A regional `metric` limited to `limit` in `region` of every project.
    pub fn with_in(self, metric: &str, region: &str, limit: f64) -> Self {
        self.push(metric, Some(region), None, limit)
    }

    /// The GPU family quota of `family` (`NVIDIA_H100_MEGA`) limited to `limit` in `region` (every
    /// region when `None`).
    pub fn with_gpu_family(self, family: &str, region: Option<&str>, limit: f64) -> Self {
        self.push(GPUS_PER_GPU_FAMILY, region, Some(family), limit)
    }

    /// Refuses unknown metrics, regions and families, a region on a global metric, a family on
    /// another metric, and negative or non-finite limits.
    pub fn check(&self) -> Result<(), String> {
        for rule in &self.limits {
            let names: Vec<&str> = METRICS.iter().map(|m| m.name).collect();
            let metric = metric_named(&rule.metric).ok_or_else(|| {
                format!(
                    "unknown quota metric `{}` (one of {})",
                    rule.metric,
                    names.join(", ")
                )
            })?;
            if !(rule.limit.is_finite() && rule.limit >= 0.0) {
                return Err(format!(
                    "quota limit of `{}` must be a number ≥ 0",
                    rule.metric
                ));
            }
            if let Some(region) = &rule.region {
                if metric.place == Place::Global {
                    return Err(format!(
                        "`{}` is a project-wide quota: it takes no region",
                        rule.metric
                    ));
                }
                if !geo::region_exists(region) {
                    return Err(format!("unknown region `{region}` for `{}`", rule.metric));
                }
            }
            if let Some(family) = &rule.gpu_family {
                if !metric.per_family {
                    return Err(format!(
                        "`gpu_family` applies to {GPUS_PER_GPU_FAMILY} only, not `{}`",
                        rule.metric
                    ));
                }
                if !FAMILIES.iter().any(|(_, f, _)| f == family) {
                    return Err(format!("unknown GPU family `{family}`"));
                }
            }
        }
        Ok(())
    }

    /// The limit in force for `key` in `project`.
    pub fn limit(&self, project: &str, key: &Key) -> f64 {
        let mut best: Option<(usize, f64)> = None;
        for rule in &self.limits {
            let matches = rule.metric == key.metric
                && rule.project.as_deref().is_none_or(|p| p == project)
                && rule
                    .region
                    .as_deref()
                    .is_none_or(|r| Some(r) == key.region.as_deref())
                && rule
                    .gpu_family
                    .as_deref()
                    .is_none_or(|f| Some(f) == key.family.as_deref());
            if !matches {
                continue;
            }
            let specificity = [
                rule.project.is_some(),
                rule.region.is_some(),
                rule.gpu_family.is_some(),
            ]
            .iter()
            .filter(|s| **s)
            .count();
            if best.is_none_or(|(s, _)| specificity >= s) {
                best = Some((specificity, rule.limit));
            }
        }
        best.map(|(_, limit)| limit)
            .unwrap_or_else(|| key.metric().default)
    }
}

// ---------------------------------------------------------------------------------------------
// What a VM, a reservation, a node pool uses.

/// The shape of the VMs of a reservation or a node pool.
#[derive(Debug, Clone, PartialEq)]
pub struct VmShape {
    pub machine: String,
    /// `(accelerator type, count)`.
    pub gpus: Option<(String, u64)>,
    /// Spot, preemptible or flex-start: its GPUs count against `PREEMPTIBLE_<FAMILY>_GPUS`, not
    /// the family's on-demand quota ("You must request preemptible quota for the GPU machine type"
    /// for Flex-start as for Spot, AI Hypercomputer "Capacity overview",
    /// <https://cloud.google.com/ai-hypercomputer/docs/obtain-capacity>).
    pub spot: bool,
    pub local_ssd_gb: f64,
}

impl VmShape {
    /// What `n` such VMs in `region` use.
    pub fn uses(&self, region: &str, n: f64, out: &mut Vec<(Key, f64)>) {
        if n <= 0.0 {
            return;
        }
        let cpus = geo::machine_type(&self.machine).map_or(0, |m| m.cpus);
        out.push((Key::regional("CPUS", region), f64::from(cpus) * n));
        out.push((Key::global("CPUS_ALL_REGIONS"), f64::from(cpus) * n));
        if let Some((kind, count)) = &self.gpus
            && *count > 0
        {
            let gpus = *count as f64 * n;
            if let Some((_, family, preemptible)) = FAMILIES.iter().find(|(t, _, _)| t == kind) {
                let key = if self.spot {
                    let metric = metric_named(preemptible).map_or("", |m| m.name);
                    Key::regional(metric, region)
                } else {
                    Key {
                        metric: GPUS_PER_GPU_FAMILY,
                        region: Some(region.to_string()),
                        family: Some(family.to_string()),
                    }
                };
                out.push((key, gpus));
            }
            out.push((Key::global("GPUS_ALL_REGIONS"), gpus));
        }
        if self.local_ssd_gb > 0.0 {
            out.push((
                Key::regional("LOCAL_SSD_TOTAL_GB", region),
                self.local_ssd_gb * n,
            ));
        }
    }
}

/// A number given as a JSON number or an int64 string.
fn number(value: &Value) -> f64 {
    match value {
        Value::String(s) => s.parse().unwrap_or(0.0),
        other => other.as_f64().unwrap_or(0.0),
    }
}

fn last_segment(s: &str) -> &str {
    s.rsplit('/').next().unwrap_or(s)
}

/// The accelerators of a machine: those listed, else the A3 type's own.
fn gpus_of(machine: &str, listed: Option<(String, u64)>) -> Option<(String, u64)> {
    listed
        .filter(|(_, n)| *n > 0)
        .or_else(|| geo::required_accelerator(machine).map(|(t, n)| (t.to_string(), u64::from(n))))
}

/// The VM shape of a reservation body and its VM count.
pub fn reservation_shape(body: &Value) -> (VmShape, f64) {
    let specific = &body["specificReservation"];
    let properties = &specific["instanceProperties"];
    let machine = last_segment(properties["machineType"].as_str().unwrap_or("")).to_string();
    let listed = properties["guestAccelerators"]
        .as_array()
        .and_then(|a| a.first())
        .map(|a| {
            (
                last_segment(a["acceleratorType"].as_str().unwrap_or("")).to_string(),
                number(&a["acceleratorCount"]) as u64,
            )
        });
    let local_ssd_gb = properties["localSsds"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|d| number(&d["diskSizeGb"]))
        .sum();
    let shape = VmShape {
        gpus: gpus_of(&machine, listed),
        machine,
        spot: false,
        local_ssd_gb,
    };
    (shape, number(&specific["count"]))
}

/// The VM shape of a GKE node pool resource.
pub fn pool_shape(pool: &Value) -> VmShape {
    let config = &pool["config"];
    let machine = config["machineType"]
        .as_str()
        .unwrap_or("e2-medium")
        .to_string();
    let listed = config["accelerators"]
        .as_array()
        .and_then(|a| a.first())
        .map(|a| {
            (
                last_segment(a["acceleratorType"].as_str().unwrap_or("")).to_string(),
                number(&a["acceleratorCount"]) as u64,
            )
        });
    let disks = number(&config["localSsdCount"])
        + number(&config["ephemeralStorageLocalSsdConfig"]["localSsdCount"])
        + number(&config["localNvmeSsdBlockConfig"]["localSsdCount"]);
    VmShape {
        gpus: gpus_of(&machine, listed),
        machine,
        spot: config["spot"] == Value::Bool(true)
            || config["preemptible"] == Value::Bool(true)
            || config["flexStart"] == Value::Bool(true),
        local_ssd_gb: disks * LOCAL_SSD_GB,
    }
}

/// The metric one resource of each Compute collection takes (by [`Kind`]; the collection's
/// declared `quota`, [`crate::compute::collection::Quota`], names the same: a unit test there
/// keeps them equal). A reservation takes its VMs' CPUs, GPUs and local SSDs instead
/// ([`insert_demand`]).
pub const KIND_METRICS: &[(&str, &str)] = &[
    ("Network", "NETWORKS"),
    ("Subnetwork", "SUBNETWORKS"),
    ("Firewall", "FIREWALLS"),
    ("Router", "ROUTERS"),
    ("ResourcePolicy", "RESOURCE_POLICIES"),
    ("Reservation", "CPUS"),
];

/// What a Compute insert of `body` into collection `kind` at `path` asks for: a reservation its
/// VMs, any other resource one of its collection's metric.
pub fn insert_demand(kind: Kind, path: &str, body: &Value) -> Vec<(Key, f64)> {
    let mut out = vec![];
    let region = region_of_path(path);
    if kind == RESERVATION {
        let (shape, count) = reservation_shape(body);
        shape.uses(region.unwrap_or(""), count, &mut out);
        return out;
    }
    if let Some(metric) = KIND_METRICS
        .iter()
        .find(|(k, _)| *k == kind.0)
        .and_then(|(_, m)| metric_named(m))
    {
        let key = match (metric.place, region) {
            (Place::Region, Some(r)) => Key::regional(metric.name, r),
            _ => Key::global(metric.name),
        };
        out.push((key, 1.0));
    }
    out
}

/// The region of a Compute path (`projects/p/regions/r/...` or `projects/p/zones/z/...`).
fn region_of_path(path: &str) -> Option<&str> {
    let parts: Vec<&str> = path.split('/').collect();
    match parts.as_slice() {
        ["projects", _, "regions", r, ..] => {
            geo::REGIONS.iter().find(|(x, _)| x == r).map(|(x, _)| *x)
        }
        ["projects", _, "zones", z, ..] => geo::region_of_zone(z),
        _ => None,
    }
}

// ---------------------------------------------------------------------------------------------
// Usage.

/// Everything `project` uses now, by key.
pub fn usage(world: &World, project: &str) -> BTreeMap<Key, f64> {
    let mut uses = vec![];
    // Compute inserts that are going to fail take nothing.
    let failing = failing_creates(world);
    let prefix = format!("projects/{project}/");
    for (path, resource) in world
        .compute
        .resources
        .range(prefix.clone()..)
        .take_while(|(p, _)| p.starts_with(&prefix))
    {
        if resource.state == Life::Creating && failing.contains(path.as_str()) {
            continue;
        }
        let body = if resource.kind == RESERVATION {
            held_body(world, path, &resource.body)
        } else {
            &resource.body
        };
        uses.extend(insert_demand(resource.kind, path, body));
    }
    for cluster in world.container.clusters.values() {
        if cluster.project != project {
            continue;
        }
        let region = cluster.region();
        for pool in &cluster.pools {
            let vms = pool_vms(world, cluster, pool);
            pool_shape(&pool.resource).uses(&region, vms as f64, &mut uses);
        }
    }
    let mut total = BTreeMap::new();
    for (key, amount) in uses {
        *total.entry(key).or_insert(0.0) += amount;
    }
    total
}

/// The paths of Compute resources whose insert is running and going to fail: they take nothing.
pub fn failing_creates(world: &World) -> BTreeSet<&str> {
    world
        .compute
        .operations
        .values()
        .filter(|op| !op.finished && op.failure.is_some() && matches!(op.effect, Effect::Create(_)))
        .map(|op| op.target.as_str())
        .collect()
}

/// The VMs of a pool that count against quota: none when it consumes a reservation (its VMs are
/// the reservation's), else those of its zones' instance groups — the nodes each has, or the
/// target an unfailed create or resize is bringing it to ([`instance_groups::managers`], the
/// numbers `instanceGroupManagers.get` serves as `targetSize` and `currentActions.deleting`).
fn pool_vms(world: &World, cluster: &Cluster, pool: &NodePool) -> u64 {
    if !pool.reserved.is_empty() {
        return 0;
    }
    instance_groups::managers(world, cluster, pool)
        .iter()
        .map(|m| m.vms())
        .sum()
}

// ---------------------------------------------------------------------------------------------
// Checks.

/// A metric a request would take past its limit.
#[derive(Debug, Clone, PartialEq)]
pub struct Exceeded {
    pub key: Key,
    pub limit: f64,
    pub usage: f64,
    /// What the request asks for.
    pub need: f64,
}

impl Exceeded {
    /// What is left (never negative).
    pub fn available(&self) -> f64 {
        (self.limit - self.usage).max(0.0)
    }
}

/// The metrics `demand` would take past their limits in `project`, in [`METRICS`] order.
pub fn check(
    world: &World,
    config: &QuotaConfig,
    project: &str,
    demand: &[(Key, f64)],
) -> Vec<Exceeded> {
    let mut need: BTreeMap<&Key, f64> = BTreeMap::new();
    for (key, amount) in demand {
        *need.entry(key).or_insert(0.0) += amount;
    }
    if need.values().all(|n| *n <= 0.0) {
        return vec![];
    }
    let used = usage(world, project);
    let mut out: Vec<Exceeded> = need
        .into_iter()
        .filter(|(_, n)| *n > 0.0)
        .filter_map(|(key, need)| {
            let limit = config.limit(project, key);
            let usage = used.get(key).copied().unwrap_or(0.0);
            (usage + need > limit).then(|| Exceeded {
                key: key.clone(),
                limit,
                usage,
                need,
            })
        })
        .collect();
    out.sort_by(|a, b| (a.key.rank(), &a.key).cmp(&(b.key.rank(), &b.key)));
    out
}

/// Compute's failure for an exceeded quota, the one the scripted `quota_exceeded` fault gives too.
pub fn compute_failure(exceeded: &Exceeded) -> Failure {
    let metric = exceeded.key.metric();
    quota_exceeded(
        metric.name,
        metric.quota_id,
        exceeded.limit,
        exceeded.key.region.as_deref(),
        exceeded.key.family.as_deref(),
    )
}

/// `Quota '<metric>' exceeded.  Limit: <limit> in region <region>.` (or `globally.`).
pub fn compute_message(exceeded: &Exceeded) -> String {
    compute_failure(exceeded).message
}

/// One line of GKE's regional quota refusal.
#[derive(Debug, Clone, PartialEq)]
pub struct Shortfall {
    pub resource: String,
    pub need: f64,
    pub limit: f64,
    pub available: f64,
}

impl From<&Exceeded> for Shortfall {
    fn from(e: &Exceeded) -> Shortfall {
        Shortfall {
            resource: e.key.metric.to_string(),
            need: e.need,
            limit: e.limit,
            available: e.available(),
        }
    }
}

/// GKE's 403 for a node pool (or cluster) whose VMs do not fit the regional quota:
/// `Insufficient regional quota to satisfy request: resource "CPUS": request requires '144.0' and
/// is short '109.0'. project has a quota of '128.0' with '35.0' available. View and manage quotas
/// at https://console.cloud.google.com/iam-admin/quotas?usage=USED&project=P.` (m-lab/etl#798);
/// several are numbered `(1) insufficient ...`, one per line (terraform-google-modules and
/// googlecodelabs/feedback#950 show that form; the exact whitespace before each number could not
/// be confirmed).
pub fn gke_insufficient(project: &str, shortfalls: &[Shortfall]) -> GcpError {
    let line = |s: &Shortfall, first: &str| {
        format!(
            "{first}nsufficient regional quota to satisfy request: resource \"{}\": request \
             requires '{:.1}' and is short '{:.1}'. project has a quota of '{:.1}' with '{:.1}' \
             available. View and manage quotas at \
             https://console.cloud.google.com/iam-admin/quotas?usage=USED&project={project}",
            s.resource,
            s.need,
            (s.need - s.available).max(0.0),
            s.limit,
            s.available,
        )
    };
    let message = match shortfalls {
        [one] => format!("{}.", line(one, "I")),
        many => {
            let lines: Vec<String> = many
                .iter()
                .enumerate()
                .map(|(i, s)| format!("({}) {}", i + 1, line(s, "i")))
                .collect();
            format!("\n\t{}.", lines.join("\n\t"))
        }
    };
    GcpError::new(403, "PERMISSION_DENIED", "forbidden", message)
}

/// Splits what a new pool would exceed into GKE's request-time refusal (the regional legacy
/// metrics) and what fails later, when its instance groups create the VMs.
pub fn gke_split(exceeded: Vec<Exceeded>) -> (Vec<Exceeded>, Vec<Exceeded>) {
    exceeded
        .into_iter()
        .partition(|e| e.key.metric().gke_precheck)
}

/// Region.quotas or Project.quotas of `project`: `[{metric, limit, usage}]` of the legacy
/// metrics in that place.
pub fn legacy_quotas(
    world: &World,
    config: &QuotaConfig,
    project: &str,
    region: Option<&str>,
) -> Vec<Value> {
    let used = usage(world, project);
    METRICS
        .iter()
        .filter(|m| m.legacy)
        .filter(|m| (m.place == Place::Region) == region.is_some())
        .map(|m| {
            let key = match region {
                Some(r) => Key::regional(m.name, r),
                None => Key::global(m.name),
            };
            serde_json::json!({
                "metric": m.name,
                "limit": config.limit(project, &key),
                "usage": used.get(&key).copied().unwrap_or(0.0),
            })
        })
        .collect()
}

/// The body the reservation at `path` holds quota and capacity for: the one an unfinished resize
/// that grows it leaves (its VMs are held from the resize's start), else `body`.
pub fn held_body<'a>(world: &'a World, path: &str, body: &'a Value) -> &'a Value {
    let count = |b: &Value| {
        b["specificReservation"]
            .get("count")
            .and_then(|c| match c {
                Value::String(s) => s.parse::<i64>().ok(),
                other => other.as_i64(),
            })
            .unwrap_or(0)
    };
    world
        .compute
        .operations
        .values()
        .filter(|op| !op.finished && op.failure.is_none() && op.target == path)
        .filter_map(|op| match &op.effect {
            Effect::Replace(next) => Some(next),
            _ => None,
        })
        .filter(|next| count(next) > count(body))
        .max_by_key(|next| count(next))
        .unwrap_or(body)
}

/// Compute's failure for an exceeded quota: `Quota '<metric>' exceeded.  Limit: <limit> in region
/// <region>.` (`globally.` for a project-wide quota), `QUOTA_EXCEEDED`, 403, and the `quotaInfo`
/// error detail (`metricName` `compute.googleapis.com/<metric in lowercase>`, `limitName`, the
/// dimensions `region` and, for the GPU family quota, `gpu_family`, and `limit`). Shared by the
/// scripted `quota_exceeded` fault and the real check ([`crate::quotas`]).
pub fn quota_exceeded(
    metric: &str,
    limit_name: &str,
    limit: f64,
    region: Option<&str>,
    gpu_family: Option<&str>,
) -> Failure {
    let (place, mut dimensions) = match region {
        Some(r) => (format!("in region {r}"), json!({ "region": r })),
        None => ("globally".to_string(), json!({ "global": "global" })),
    };
    if let Some(family) = gpu_family {
        dimensions["gpu_family"] = json!(family);
    }
    Failure {
        http_status: 403,
        http_message: "FORBIDDEN".into(),
        code: "QUOTA_EXCEEDED".into(),
        message: format!("Quota '{metric}' exceeded.  Limit: {limit:.1} {place}."),
        details: Some(json!([{
            "quotaInfo": {
                "metricName": format!("compute.googleapis.com/{}", metric.to_lowercase()),
                "limitName": limit_name,
                "dimensions": dimensions,
                "limit": limit,
            }
        }])),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shipped_blueprints_fit_the_defaults() {
        let mut uses = vec![];
        let mega = VmShape {
            machine: "a3-megagpu-8g".into(),
            gpus: Some(("nvidia-h100-mega-80gb".into(), 8)),
            spot: false,
            local_ssd_gb: 0.0,
        };
        mega.uses("us-central1", 32.0, &mut uses);
        let high = VmShape {
            machine: "a3-highgpu-8g".into(),
            gpus: Some(("nvidia-h100-80gb".into(), 8)),
            spot: false,
            local_ssd_gb: 16.0 * LOCAL_SSD_GB,
        };
        high.uses("us-central1", 4.0, &mut uses);
        let e2 = VmShape {
            machine: "e2-standard-4".into(),
            gpus: None,
            spot: false,
            local_ssd_gb: 0.0,
        };
        e2.uses("us-central1", 4.0, &mut uses);
        let config = QuotaConfig::default();
        let mut total: BTreeMap<Key, f64> = BTreeMap::new();
        for (k, n) in uses {
            *total.entry(k).or_default() += n;
        }
        assert_eq!(
            total[&Key::regional("CPUS", "us-central1")],
            6656.0 + 832.0 + 16.0
        );
        for (key, used) in &total {
            let limit = config.limit("p", key);
            assert!(used * 1.5 <= limit, "{key:?}: {used} of {limit}");
        }
    }

    #[test]
    fn a3_ultra_and_a4_count_against_their_own_families() {
        let mut uses = vec![];
        VmShape {
            machine: "a3-ultragpu-8g".into(),
            gpus: gpus_of("a3-ultragpu-8g", None),
            spot: true,
            local_ssd_gb: 0.0,
        }
        .uses("us-central1", 2.0, &mut uses);
        VmShape {
            machine: "a4-highgpu-8g".into(),
            gpus: gpus_of("a4-highgpu-8g", None),
            spot: false,
            local_ssd_gb: 0.0,
        }
        .uses("us-central1", 1.0, &mut uses);
        let find = |key: &Key| uses.iter().find(|(k, _)| k == key).map(|(_, n)| *n);
        assert_eq!(
            find(&Key::regional("CPUS", "us-central1")),
            Some(448.0),
            "{uses:?}"
        );
        assert_eq!(
            find(&Key {
                metric: GPUS_PER_GPU_FAMILY,
                region: Some("us-central1".into()),
                family: Some("NVIDIA_B200".into()),
            }),
            Some(8.0)
        );
        assert_eq!(
            find(&Key::regional(
                "PREEMPTIBLE_NVIDIA_H200_GPUS",
                "us-central1"
            )),
            Some(16.0)
        );
        assert_eq!(find(&Key::global("GPUS_ALL_REGIONS")), Some(16.0));
        for (_, _, preemptible) in FAMILIES {
            assert!(metric_named(preemptible).is_some(), "{preemptible}");
        }
    }

    #[test]
    fn the_most_specific_limit_wins() {
        let config = QuotaConfig::default()
            .with("CPUS", 100.0)
            .with_in("CPUS", "us-east4", 8.0)
            .with_gpu_family("NVIDIA_H100_MEGA", Some("us-central1"), 16.0);
        assert_eq!(config.limit("p", &Key::regional("CPUS", "us-east4")), 8.0);
        assert_eq!(config.limit("p", &Key::regional("CPUS", "us-west1")), 100.0);
        assert_eq!(config.limit("p", &Key::global("NETWORKS")), 15.0);
        let family = |f: &str, r: &str| Key {
            metric: GPUS_PER_GPU_FAMILY,
            region: Some(r.into()),
            family: Some(f.into()),
        };
        assert_eq!(
            config.limit("p", &family("NVIDIA_H100_MEGA", "us-central1")),
            16.0
        );
        assert_eq!(
            config.limit("p", &family("NVIDIA_H100", "us-central1")),
            512.0
        );
        assert!(config.check().is_ok());
        assert!(QuotaConfig::default().with("NOPE", 1.0).check().is_err());
        assert!(
            QuotaConfig::default()
                .with_in("NETWORKS", "us-east4", 1.0)
                .check()
                .is_err()
        );
        assert!(QuotaConfig::default().with("CPUS", -1.0).check().is_err());
    }

    #[test]
    fn gke_names_each_short_resource() {
        let one = Shortfall {
            resource: "CPUS".into(),
            need: 144.0,
            limit: 128.0,
            available: 35.0,
        };
        let err = gke_insufficient("mlab-staging", std::slice::from_ref(&one));
        assert_eq!(
            err.message,
            "Insufficient regional quota to satisfy request: resource \"CPUS\": request requires \
             '144.0' and is short '109.0'. project has a quota of '128.0' with '35.0' available. \
             View and manage quotas at \
             https://console.cloud.google.com/iam-admin/quotas?usage=USED&project=mlab-staging."
        );
        let two = gke_insufficient("p", &[one.clone(), one]);
        assert!(
            two.message
                .starts_with("\n\t(1) insufficient regional quota"),
            "{}",
            two.message
        );
        assert!(
            two.message.contains("project=p\n\t(2) insufficient"),
            "{}",
            two.message
        );
        assert!(two.message.ends_with("project=p."), "{}", two.message);
    }
}
