//! Preflight: what the cloud must be able to give a plan, checked before anything is created, so
//! a missing or short reservation is found in seconds rather than twenty minutes into an apply
//! with half a cluster built (the complaint behind Cluster Toolkit's quota validator and xpk's
//! reservation capacity check, GoogleCloudPlatform/cluster-toolkit PR #5092 and
//! AI-Hypercomputer/xpk PR #1057).
//!
//! Checks so far:
//! - every Google API the plan calls is enabled in the project (`serviceusage.services.get`; a
//!   call to a disabled API fails with `403 SERVICE_DISABLED`, possibly minutes into an apply);
//! - one per reservation a plan consumes from: the reservation exists in the pool's zone
//!   (`compute.reservations.get`), holds the pool's machine type and GPUs, and has enough free
//!   VMs (`count - inUseCount`) for every node the plan adds from it. Node pools that already
//!   exist and keep their size need nothing more. A replaced pool is a create of the new pool,
//!   checked in full; apply deletes the old pool first, so what it holds of the same reservation
//!   counts as free ([`ReplacementRoom`] says whether the new pool fits without it), and a new
//!   machine type the reservation does not hold fails with the choices.
//!
//! - quota headroom (`limit - usage`, `regions.get` / `projects.get`) for every Compute quota the
//!   plan adds to, less what it frees: networks, subnetworks, firewalls, routers and placement
//!   policies count one each; node pools count `nodes × zones` VMs of their machine type
//!   (`machineTypes.get`: vCPUs against `CPUS` and `CPUS_ALL_REGIONS`, local SSDs of 375 GB against
//!   `LOCAL_SSD_TOTAL_GB`, GPUs against `GPUS_ALL_REGIONS`, and a spot pool's GPUs against
//!   `PREEMPTIBLE_<FAMILY>_GPUS`), except pools that consume a reservation, whose VMs count
//!   against the reservation instead (<https://cloud.google.com/compute/resource-usage>);
//! - on-demand pools' GPUs against their family's Cloud Quotas quota
//!   (`GPUS-PER-GPU-FAMILY-per-project-region`; [`GpuFamilyQuotaSpec`] says how its usage is
//!   counted); unknown, not failed, when the Cloud Quotas API is off or unreadable.
//!
//! - upgrade headroom of pools whose upgrades take extra VMs (`max_surge`, or the whole pool for
//!   blue-green): the reservation's free VMs, or for on-demand and spot GPU pools the
//!   `GPUS_ALL_REGIONS` quota, after the plan's own nodes (a warning for a pool created or whose
//!   settings change, a failure for a pool the plan upgrades).
//!
//! Not checked: the cluster's one-node-per-zone bootstrap pool, and zone capacity (Google has no
//! API that says whether a zone can give N VMs; the create that meets a stockout reports it).
//!
//! Preflight only reads, concurrently.

use super::{Action, Plan};
use crate::cloud::{CloudError, Provider, Target};
use crate::resource::kinds::from_spec;
use crate::resource::kinds::gke_versions::{
    self, GkeVersionsSpec, minor_step, minors_between, node_skew,
};
use crate::resource::kinds::node_pool::NodePoolSpec;
use crate::resource::kinds::quotas::{
    GPU_FAMILY_QUOTA_ID, GpuFamilyQuotaSpec, MachineTypeSpec, QuotasSpec, gpu_family,
};
use crate::resource::kinds::reservation::ReservationSpec;
use crate::resource::{Addr, Kind};
use futures_util::future::join_all;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet, HashSet};

/// One check: what was needed, what is there, and when it fails, what to do.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Check {
    /// `reservation a3mega-reservation (us-central1-a)`.
    pub subject: String,
    /// The plan's resources that need it.
    pub for_resources: Vec<Addr>,
    pub ok: bool,
    /// `32 × a3-megagpu-8g with 8 × nvidia-h100-mega-80gb`.
    pub need: String,
    /// `32 free of 32`, or `not found`.
    pub available: String,
    /// Why it fails, and the command that fixes it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub problem: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fix: Option<String>,
    /// The check could not be made (its API is disabled, or not readable): shown, not failed.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub unknown: bool,
    /// Passed for this plan, but says what will go wrong later (a reservation without room for
    /// the surge nodes of a future upgrade): shown with its problem and fix, not failed.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub warning: bool,
    /// What it checks was made by the sandbox for the blueprint, not by the user (a reservation a
    /// project that bought its capacity would have): shown as such, since on Google Cloud it
    /// must exist already. Set by the command that runs the sandbox.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub sandbox_provided: bool,
}

impl Check {
    /// A failed check of `subject` for `for_resources`, needing `need`, until shown otherwise.
    fn new(subject: String, for_resources: Vec<Addr>, need: String) -> Check {
        Check {
            subject,
            for_resources,
            ok: false,
            need,
            available: String::new(),
            problem: None,
            fix: None,
            unknown: false,
            warning: false,
            sandbox_provided: false,
        }
    }
}

/// The checks of one plan.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Preflight {
    pub checks: Vec<Check>,
    /// The room the reservation of each pool the plan replaces has for the new pool, per zone:
    /// what the plan shows about the capacity of a replacement ([`crate::plan::GpuReplacement`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub replacements: Vec<ReplacementRoom>,
}

/// A replaced pool's reservation in one zone, as preflight read it: whether the new pool fits
/// in what is free now, or only in what the old pool's delete frees first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReplacementRoom {
    pub pool: Addr,
    pub reservation: String,
    pub zone: String,
    /// `count - inUseCount` before anything is deleted.
    pub free_now: u64,
    /// VMs the plan's replacements give back to it before their creates (delete first).
    pub freed_first: u64,
    /// VMs the plan's creates take from it in this zone.
    pub needed: u64,
}

impl ReplacementRoom {
    /// The new pool fits only because the old pool's delete frees its VMs first.
    pub fn only_after_delete(&self) -> bool {
        self.free_now < self.needed
    }
}

impl Preflight {
    pub fn failed(&self) -> impl Iterator<Item = &Check> {
        self.checks.iter().filter(|c| !c.ok && !c.unknown)
    }

    pub fn passed(&self) -> bool {
        self.failed().next().is_none()
    }
}

/// What the plan takes from one reservation in one zone.
struct Demand {
    project: String,
    zone: String,
    name: String,
    machine_type: String,
    /// `(type, count)` of each VM's GPUs.
    accelerator: Option<(String, i64)>,
    nodes: u64,
    pools: Vec<Addr>,
    /// VMs the old pools of the plan's replacements give back to this reservation in this zone
    /// before the new pools are created: apply deletes a replaced pool first
    /// ([`crate::apply::schedule`]), so they count as free for the creates.
    freed: u64,
    /// The pools replaced here, with their old machine types.
    replaced: Vec<(Addr, String)>,
}

/// The nodes each pool the plan creates, replaces or grows takes from its reservation, by
/// reservation and zone. Pools in `existing` are planned as creates but already exist (an apply
/// interrupted after GKE accepted the create; the next apply adopts or resumes them): their nodes
/// are already counted in the reservation's use.
///
/// A replaced pool is a create of the new pool, checked in full (machine type, GPUs, room) like
/// any create; what its old pool held of the same reservation in the same zone counts as freed,
/// since its delete comes first.
fn demands(
    plan: &Plan,
    project: &str,
    existing: &HashSet<Addr>,
) -> Result<Vec<Demand>, CloudError> {
    let mut by_key: BTreeMap<(String, String, String), Demand> = BTreeMap::new();
    for change in plan.actions() {
        if change.addr.kind != Kind::NodePool {
            continue;
        }
        let Some(after) = &change.after else { continue };
        let spec: NodePoolSpec = from_spec("node pool", after)?;
        let Some(reservation) = spec.consumed_reservation() else {
            continue;
        };
        if existing.contains(&change.addr) {
            continue;
        }
        // What the pool already takes from the same reservation: kept by an update, given back
        // by a replacement's delete before its create.
        let old = change
            .before
            .as_ref()
            .and_then(|b| from_spec::<NodePoolSpec>("node pool", b).ok())
            .filter(|b| b.consumed_reservation() == Some(reservation));
        // A move an interrupted apply left: the old pool, retiring, gives its nodes back as the
        // new one grows ([`super::moves`]).
        let retiring = plan
            .change(&super::moves::retiring(&change.addr))
            .filter(|c| c.action == Action::Delete)
            .and_then(|c| c.before.as_ref())
            .and_then(|b| from_spec::<NodePoolSpec>("node pool", b).ok())
            .filter(|b| b.consumed_reservation() == Some(reservation));
        let (added, freed) = match (change.action, &old) {
            (Action::Update, Some(old)) => (
                spec.node_count.saturating_sub(old.node_count),
                retiring.as_ref().map_or(0, |r| r.node_count),
            ),
            (Action::Replace, Some(old)) => (spec.node_count, old.node_count),
            _ => (spec.node_count, 0),
        };
        if added == 0 {
            continue;
        }
        let (owner, name) = reservation.owner_and_name(project);
        for zone in &spec.locations {
            let key = (owner.clone(), zone.clone(), name.clone());
            let demand = by_key.entry(key).or_insert_with(|| Demand {
                project: owner.clone(),
                zone: zone.clone(),
                name: name.clone(),
                machine_type: spec.machine_type.clone(),
                accelerator: spec.accelerator.as_ref().map(|a| (a.kind.clone(), a.count)),
                nodes: 0,
                pools: vec![],
                freed: 0,
                replaced: vec![],
            });
            demand.nodes += added;
            demand.pools.push(change.addr.clone());
            if retiring.is_some() {
                demand
                    .replaced
                    .push((change.addr.clone(), spec.machine_type.clone()));
                demand.freed += freed;
            }
            if change.action == Action::Replace {
                let old_type = change
                    .before
                    .as_ref()
                    .and_then(|b| b["machine_type"].as_str())
                    .unwrap_or_default();
                demand
                    .replaced
                    .push((change.addr.clone(), old_type.to_string()));
                if old.as_ref().is_some_and(|o| o.locations.contains(zone)) {
                    demand.freed += freed;
                }
            }
        }
    }
    Ok(by_key.into_values().collect())
}

/// Runs every check of `plan` (a plan of `project`) against the cloud, concurrently. An error
/// is a read that failed (after the provider's retries), not a failed check.
///
/// `journaled` are the resources an interrupted apply's journal names: a create of one of them
/// may already have happened, so it is read, and one that exists already counts in the cloud's
/// usage rather than in the plan's needs.
pub async fn run(
    provider: &dyn Provider,
    plan: &Plan,
    project: &str,
    region: &str,
    journaled: &HashSet<Addr>,
    delete_first: &BTreeSet<Addr>,
) -> Result<Preflight, (String, CloudError)> {
    if plan.destroy {
        return Ok(Preflight::default());
    }
    // Two rounds of concurrent reads: what the plan needs to know first (which APIs are on, which
    // creates already happened), then every quota and reservation at once.
    let (services, existing) = futures_util::future::join(
        services(provider, plan, project),
        existing_creates(provider, plan, journaled),
    )
    .await;
    let ((mut checks, pending), existing) = (services?, existing?);
    let demands =
        demands(plan, project, &existing).map_err(|e| ("the plan's node pools".to_string(), e))?;
    // What reads an API the plan has yet to enable is shown as unknown rather than read.
    let compute = "compute.googleapis.com";
    if pending.contains(compute) {
        checks.push(not_yet_enabled(
            compute,
            "Compute quotas and reservations",
            project,
        ));
        return Ok(Preflight {
            checks,
            replacements: vec![],
        });
    }
    let families_readable = ["cloudquotas.googleapis.com", "container.googleapis.com"]
        .into_iter()
        .find(|s| pending.contains(*s));
    let (quotas, reservations, versions) = futures_util::future::join3(
        quotas(
            provider,
            plan,
            project,
            region,
            &existing,
            families_readable,
            delete_first,
        ),
        reservations(provider, &demands),
        gke_versions(provider, plan, project, &pending),
    )
    .await;
    checks.extend(quotas?);
    let (reserved, replacements) = reservations?;
    checks.extend(reserved);
    checks.extend(surge(provider, plan, project, &demands).await?);
    checks.extend(versions?);
    for check in &checks {
        tracing::debug!(
            subject = %check.subject,
            ok = check.ok,
            unknown = check.unknown,
            need = %check.need,
            available = %check.available,
            "preflight check"
        );
    }
    Ok(Preflight {
        checks,
        replacements,
    })
}

/// A reservation's id (`zone` `-`: wherever it is).
fn reservation_target(project: &str, zone: &str, name: &str) -> Target {
    Target {
        addr: Addr::new(Kind::Reservation, name),
        id: format!("projects/{project}/zones/{zone}/reservations/{name}"),
        spec: serde_json::Value::Null,
        outputs: serde_json::Value::Null,
        context: Default::default(),
        lifecycle: Default::default(),
    }
}

/// One check per demand on a reservation; a reservation missing from the pool's zone is looked
/// for in the project's other zones, so the check can say where it is. Also the room each
/// replaced pool's reservation has for the new pool.
async fn reservations(
    provider: &dyn Provider,
    demands: &[Demand],
) -> Result<(Vec<Check>, Vec<ReplacementRoom>), (String, CloudError)> {
    let reads = demands.iter().map(|d| async move {
        let target = reservation_target(&d.project, &d.zone, &d.name);
        let read = super::refresh::read(provider, &target)
            .await
            .map_err(|e| (format!("reservation `{}` ({})", d.name, target.id), e))?;
        let elsewhere = match read {
            Some(_) => None,
            None => super::refresh::read(provider, &reservation_target(&d.project, "-", &d.name))
                .await
                // Only a better message: a failed search is no reason to stop.
                .ok()
                .flatten()
                .and_then(|o| from_spec::<ReservationSpec>("reservation", &o.spec).ok()),
        };
        Ok::<_, (String, CloudError)>((read, elsewhere))
    });
    let mut checks = Vec::new();
    let mut rooms = Vec::new();
    for (demand, read) in demands.iter().zip(join_all(reads).await) {
        let (observed, elsewhere) = read?;
        // The projection always reports it (0 until a VM consumes the reservation).
        let in_use = observed
            .as_ref()
            .and_then(|o| o.outputs["in_use_count"].as_u64())
            .unwrap_or(0);
        if let Some(count) = observed.as_ref().and_then(|o| o.spec["count"].as_u64()) {
            rooms.extend(demand.replaced.iter().map(|(pool, _)| ReplacementRoom {
                pool: pool.clone(),
                reservation: demand.name.clone(),
                zone: demand.zone.clone(),
                free_now: count.saturating_sub(in_use),
                freed_first: demand.freed,
                needed: demand.nodes,
            }));
        }
        let mut check = check(demand, observed.as_ref().map(|o| &o.spec), in_use);
        if let Some(found) = elsewhere.filter(|f| f.zone != demand.zone) {
            check.available = format!("not found (it is in {})", found.zone);
            check.problem = Some(format!(
                "reservation `{}` of project {} is in zone {}, not in the pool's zone {}",
                demand.name, demand.project, found.zone, demand.zone
            ));
            check.fix = Some(format!(
                "set the pool's `zones` to [\"{}\"] in the blueprint (a reservation serves only its own zone), or create one in {}",
                found.zone, demand.zone
            ));
        }
        checks.push(check);
    }
    Ok((checks, rooms))
}

/// What preflight says now of the reservation GPU pool `pool` (spec `spec`, of `project`)
/// consumes, for the `missing` nodes per zone it still lacks: one check per zone, none for a pool
/// that consumes no reservation or lacks nothing. An apply whose create or resize of the pool
/// failed shows these, so its failure is as specific as preflight's ("0 free of 32", with the
/// fix), counted after what the failed operation left.
pub async fn reservation_room(
    provider: &dyn Provider,
    project: &str,
    pool: &Addr,
    spec: &NodePoolSpec,
    missing: u64,
) -> Result<Vec<Check>, (String, CloudError)> {
    let Some(reservation) = spec.consumed_reservation() else {
        return Ok(vec![]);
    };
    if missing == 0 {
        return Ok(vec![]);
    }
    let (owner, name) = reservation.owner_and_name(project);
    let demands: Vec<Demand> = spec
        .locations
        .iter()
        .map(|zone| Demand {
            project: owner.clone(),
            zone: zone.clone(),
            name: name.clone(),
            machine_type: spec.machine_type.clone(),
            accelerator: spec.accelerator.as_ref().map(|a| (a.kind.clone(), a.count)),
            nodes: missing,
            pools: vec![pool.clone()],
            freed: 0,
            replaced: vec![],
        })
        .collect();
    Ok(reservations(provider, &demands).await?.0)
}

/// The extra VMs one pool's upgrades take from its reservation in one zone.
struct Surge {
    pool: Addr,
    project: String,
    zone: String,
    name: String,
    /// `max_surge`, or the whole zone's nodes again for blue-green.
    extra: u64,
    blue_green: bool,
    /// The plan upgrades the pool (changes its `version`): no room fails the plan.
    upgrading: bool,
}

/// Upgrade headroom: a surge upgrade creates `max_surge` extra VMs per zone
/// before it drains old ones, and blue-green the whole pool again; a reservation rarely has them
/// spare (<https://cloud.google.com/kubernetes-engine/docs/concepts/node-pool-upgrade-strategies>).
/// Checked for pools the plan creates or whose upgrade settings it changes (a warning: the
/// upgrade is later) and for pools whose `version` it changes (a failure: the upgrade is this
/// plan's). The room is what the reservation has free after the plan's own nodes (`demands`);
/// for on-demand and spot GPU pools, what the project's `GPUS_ALL_REGIONS` quota has free after
/// the plan's own GPUs.
async fn surge(
    provider: &dyn Provider,
    plan: &Plan,
    project: &str,
    demands: &[Demand],
) -> Result<Vec<Check>, (String, CloudError)> {
    let mut surges = Vec::new();
    let mut gpu_surges = Vec::new();
    for change in plan.actions() {
        if change.addr.kind != Kind::NodePool {
            continue;
        }
        let touched = |f: &str| change.diffs.iter().any(|d| d.field == f);
        let upgrading = change.action == Action::Update && touched("version");
        if !(upgrading
            || matches!(change.action, Action::Create | Action::Replace)
            || touched("upgrade_settings"))
        {
            continue;
        }
        let Some(spec) = change
            .after
            .as_ref()
            .and_then(|a| from_spec::<NodePoolSpec>("node pool", a).ok())
        else {
            continue;
        };
        let Some(settings) = spec.upgrade_settings.as_ref() else {
            continue;
        };
        let blue_green = settings.strategy == "BLUE_GREEN";
        let extra = if blue_green {
            spec.node_count
        } else {
            u64::from(settings.max_surge)
        };
        if extra == 0 {
            continue;
        }
        let Some(reservation) = spec.consumed_reservation() else {
            // On demand or spot: the surge nodes' GPUs come out of the project's GPU quota.
            if let Some(acc) = spec
                .accelerator
                .as_ref()
                .filter(|_| matches!(spec.capacity.as_str(), "on-demand" | "spot"))
            {
                let zones = spec.locations.len().max(1) as u64;
                gpu_surges.push(Surge {
                    pool: change.addr.clone(),
                    project: project.to_string(),
                    zone: String::new(),
                    name: GPU_QUOTA.into(),
                    extra: extra * zones * acc.count.max(0) as u64,
                    blue_green,
                    upgrading,
                });
            }
            continue;
        };
        let (owner, name) = reservation.owner_and_name(project);
        for zone in &spec.locations {
            surges.push(Surge {
                pool: change.addr.clone(),
                project: owner.clone(),
                zone: zone.clone(),
                name: name.clone(),
                extra,
                blue_green,
                upgrading,
            });
        }
    }
    let reads = surges.iter().map(|s| async move {
        let target = reservation_target(&s.project, &s.zone, &s.name);
        super::refresh::read(provider, &target)
            .await
            .map_err(|e| (format!("reservation `{}` ({})", s.name, target.id), e))
    });
    let mut checks = Vec::new();
    for (s, read) in surges.iter().zip(join_all(reads).await) {
        let Some(observed) = read? else {
            // The capacity check of the same reservation says it is missing.
            continue;
        };
        let count = observed.spec["count"].as_u64().unwrap_or(0);
        let in_use = observed.outputs["in_use_count"].as_u64().unwrap_or(0);
        let planned: u64 = demands
            .iter()
            .filter(|d| d.project == s.project && d.zone == s.zone && d.name == s.name)
            // A replaced pool's VMs are freed before its new pool takes them again.
            .map(|d| d.nodes.saturating_sub(d.freed.min(in_use)))
            .sum();
        let check = surge_check(s, count, in_use, planned);
        checks.push(check);
    }
    if !gpu_surges.is_empty()
        && let Some(quota) = look(provider, Kind::Project, format!("projects/{project}"))
            .await?
            .and_then(|v| from_spec::<QuotasSpec>("quotas", &v).ok())
            .and_then(|q| q.quotas.get(GPU_QUOTA).cloned())
    {
        let planned = planned_gpus(plan);
        for s in &gpu_surges {
            checks.push(gpu_surge_check(s, quota.limit, quota.usage, planned));
        }
    }
    Ok(checks)
}

/// The project-wide GPU quota surge nodes of on-demand and spot pools count against.
const GPU_QUOTA: &str = "GPUS_ALL_REGIONS";

/// GPUs the plan's node pools outside reservations add (after less before).
fn planned_gpus(plan: &Plan) -> f64 {
    let gpus = |spec: &Option<serde_json::Value>| -> f64 {
        spec.as_ref()
            .and_then(|v| from_spec::<NodePoolSpec>("node pool", v).ok())
            .filter(|s| s.consumed_reservation().is_none())
            .and_then(|s| {
                let acc = s.accelerator.as_ref()?;
                Some((s.node_count * s.locations.len() as u64) as f64 * acc.count as f64)
            })
            .unwrap_or(0.0)
    };
    plan.actions()
        .filter(|c| c.addr.kind == Kind::NodePool)
        .map(|c| gpus(&c.after) - gpus(&c.before))
        .sum()
}

/// The check of one pool's surge GPUs (`s.extra`) against the project's GPU quota of `limit`,
/// `usage` used and `planned` more taken by this plan.
fn gpu_surge_check(s: &Surge, limit: f64, usage: f64, planned: f64) -> Check {
    let free = (limit - usage - planned).max(0.0);
    let what = if s.blue_green {
        "blue-green upgrade (the whole pool again)"
    } else {
        "surge upgrade (max_surge)"
    };
    let mut check = Check::new(
        format!("upgrade headroom of {} on quota {GPU_QUOTA}", s.pool),
        vec![s.pool.clone()],
        format!("{} GPUs during a {what}", s.extra),
    );
    check.available = format!("{free} free after this plan");
    check.ok = true;
    if free < s.extra as f64 {
        check.problem = Some(format!(
            "{GPU_QUOTA} has {free} GPUs free after this plan; {}{} needs {} more, so the upgrade would stall on quota",
            s.pool,
            if s.upgrading {
                "'s upgrade in this plan"
            } else {
                "'s next upgrade"
            },
            s.extra
        ));
        check.fix = Some(format!(
            "set `max_surge = 0` and `max_unavailable = 1` in the pool's `upgrade` table (nodes are replaced in place, one down at a time), or ask for a {GPU_QUOTA} limit of at least {} (https://console.cloud.google.com/iam-admin/quotas?project={})",
            usage + planned + s.extra as f64,
            s.project
        ));
        if s.upgrading {
            check.ok = false;
        } else {
            check.warning = true;
        }
    }
    check
}

/// The check of one pool's upgrade headroom on a reservation of `count` VMs, `in_use` of them
/// used and `planned` more taken by this plan.
fn surge_check(s: &Surge, count: u64, in_use: u64, planned: u64) -> Check {
    let free = count.saturating_sub(in_use).saturating_sub(planned);
    let what = if s.blue_green {
        "blue-green upgrade (the whole pool again)"
    } else {
        "surge upgrade (max_surge)"
    };
    let mut check = Check::new(
        format!(
            "upgrade headroom of {} on reservation {} ({})",
            s.pool, s.name, s.zone
        ),
        vec![s.pool.clone()],
        format!("{} extra VM(s) during a {what}", s.extra),
    );
    check.available = format!("{free} free after this plan");
    check.ok = true;
    if free < s.extra {
        check.problem = Some(format!(
            "reservation `{}` has {free} free VM(s) after this plan; {}{} needs {} more, so the upgrade would stall waiting for capacity",
            s.name,
            s.pool,
            if s.upgrading {
                "'s upgrade in this plan"
            } else {
                "'s next upgrade"
            },
            s.extra
        ));
        check.fix = Some(format!(
            "set `max_surge = 0` and `max_unavailable = 1` in the pool's `upgrade` table (nodes are replaced in place, one down at a time), or resize the reservation: gcloud compute reservations update {} --zone={} --vm-count={} --project={}",
            s.name,
            s.zone,
            count + (s.extra - free),
            s.project
        ));
        if s.upgrading {
            check.ok = false;
        } else {
            check.warning = true;
        }
    }
    check
}

/// The APIs the plan itself enables (its `service` creates and updates, with `enable_services`).
fn enabled_by_plan(plan: &Plan) -> BTreeSet<String> {
    plan.actions()
        .filter(|c| c.addr.kind == Kind::Service)
        .filter(|c| matches!(c.action, Action::Create | Action::Update))
        .filter_map(|c| c.after.as_ref()?["name"].as_str().map(str::to_string))
        .collect()
}

/// One check per Google API the plan's changes call (by their kinds' services), that it is
/// enabled in `project`, or enabled by the plan before anything calls it. Also returns the APIs
/// that are off now and that the plan enables: what preflight cannot read yet.
async fn services(
    provider: &dyn Provider,
    plan: &Plan,
    project: &str,
) -> Result<(Vec<Check>, BTreeSet<String>), (String, CloudError)> {
    let mut needed: BTreeMap<&'static str, Vec<Addr>> = BTreeMap::new();
    for change in plan.actions() {
        if let Some(service) = change.addr.kind.info().service {
            needed.entry(service).or_default().push(change.addr.clone());
        }
    }
    let enabling = enabled_by_plan(plan);
    let mut pending = BTreeSet::new();
    let reads = needed.iter().map(|(service, addrs)| async move {
        let id = format!("projects/{project}/services/{service}");
        (service, addrs, read_kind(provider, Kind::Service, id).await)
    });
    let mut checks = Vec::new();
    for (service, addrs, read) in join_all(reads).await {
        let mut check = Check::new(format!("API {service}"), addrs.clone(), "enabled".into());
        let enable = format!("gcloud services enable {service} --project={project}");
        match read {
            Ok(Some(observed)) if observed.spec["enabled"] == true => {
                check.ok = true;
                check.available = "enabled".into();
            }
            Ok(Some(_)) if enabling.contains(*service) => {
                check.ok = true;
                check.available = "disabled now, enabled by this plan first".into();
                pending.insert(service.to_string());
            }
            Ok(Some(_)) => {
                check.available = "disabled".into();
                check.problem = Some(format!(
                    "{service} is disabled in project {project}: every call to it would fail"
                ));
                check.fix = Some(format!(
                    "enable it: {enable} (or set `enable_services = true` in the blueprint)"
                ));
            }
            Ok(None) => {
                check.available = "project not found".into();
                check.problem = Some(format!("Service Usage does not know project {project}"));
                check.fix = Some("check `project` in the blueprint".into());
            }
            // Without permission to read services, the check cannot say; other errors are
            // errors of the plan.
            Err(e) if e.class == crate::cloud::ErrorClass::Permission => {
                check.available = "unknown".into();
                check.problem = Some(format!(
                    "cannot read whether {service} is enabled: {}",
                    e.message
                ));
                check.fix = Some(format!(
                    "grant roles/serviceusage.serviceUsageConsumer on {project}, or {enable}"
                ));
            }
            Err(e) => return Err((format!("whether {service} is enabled"), e)),
        }
        checks.push(check);
    }
    // The APIs the plan enables that no change of the plan calls (Cloud Quotas) still count.
    let extra = enabling
        .iter()
        .filter(|s| !needed.contains_key(s.as_str()))
        .map(|service| async move {
            let id = format!("projects/{project}/services/{service}");
            (service, read_kind(provider, Kind::Service, id).await)
        });
    for (service, read) in join_all(extra).await {
        if let Ok(Some(observed)) = read
            && observed.spec["enabled"] != true
        {
            pending.insert(service.clone());
        }
    }
    Ok((checks, pending))
}

/// The check that stands for the checks that read `service` while the plan has yet to enable it.
fn not_yet_enabled(service: &str, subject: &str, project: &str) -> Check {
    let mut check = Check::new(subject.to_string(), vec![], "readable".into());
    check.unknown = true;
    check.available = "unknown".into();
    check.problem = Some(format!(
        "{service} is disabled until this plan enables it, so {subject} cannot be read yet"
    ));
    check.fix = Some(format!(
        "apply, then plan again to check them; or first enable it alone: gcloud services enable {service} --project={project}"
    ));
    check
}

/// The GKE version of a cluster the plan creates, replaces or moves to another version or
/// channel: offered by its release channel in its location (`getServerConfig`), and, for a
/// cluster that exists, a move GKE makes ([`minor_step`]: no minor down): a move of several
/// minors up is one upgrade per minor, each of which the channel must offer, and none of which
/// may leave a node pool more than two minors behind ([`node_skew`]; pools are upgraded after
/// their control plane). A node pool the plan upgrades must fit the control plane it will run
/// under. Without this, a version the channel does not offer fails at the `clusters.update` or
/// `create` call, after everything before it was applied.
async fn gke_versions(
    provider: &dyn Provider,
    plan: &Plan,
    project: &str,
    pending: &BTreeSet<String>,
) -> Result<Vec<Check>, (String, CloudError)> {
    if pending.contains("container.googleapis.com") {
        return Ok(vec![]);
    }
    let mut checks = Vec::new();
    for change in plan.changes.iter().filter(|c| c.addr.kind == Kind::Cluster) {
        let moves = change
            .diffs
            .iter()
            .any(|d| d.field == "version" || d.field == "release_channel");
        let existing = match change.action {
            Action::Create | Action::Replace => false,
            Action::Update if moves => true,
            _ => {
                // The control plane stays: its pools' upgrades must fit what it runs.
                checks.extend(pool_checks(plan, change, &version_of(&change.before)));
                continue;
            }
        };
        let Some(after) = &change.after else { continue };
        let location = after["location"].as_str().unwrap_or("").to_string();
        let offer = match look(
            provider,
            Kind::GkeVersions,
            gke_versions::id(project, &location),
        )
        .await?
        {
            Some(spec) => from_spec::<GkeVersionsSpec>("GKE versions", &spec)
                .map_err(|e| (format!("GKE versions of {location}"), CloudError::from(e)))?,
            None => continue,
        };
        checks.extend(cluster_version_checks(
            &offer, plan, change, existing, &location,
        ));
    }
    Ok(checks)
}

/// The `version` of a change's spec (before or after), empty when it has none.
fn version_of(spec: &Option<serde_json::Value>) -> String {
    spec.as_ref()
        .and_then(|v| v["version"].as_str())
        .unwrap_or("")
        .to_string()
}

/// The checks of one cluster's GKE version against its location's `offer` (see
/// [`gke_versions`]); `existing` when the plan moves a cluster that exists.
fn cluster_version_checks(
    offer: &GkeVersionsSpec,
    plan: &Plan,
    change: &crate::plan::Change,
    existing: bool,
    location: &str,
) -> Vec<Check> {
    let text = |field: &str| {
        change
            .after
            .as_ref()
            .and_then(|a| a[field].as_str())
            .unwrap_or("")
            .to_string()
    };
    let (wanted, channel) = (text("version"), text("release_channel"));
    let mut check = Check::new(
        format!("GKE version {wanted} ({channel} channel, {location})"),
        vec![change.addr.clone()],
        format!("{wanted} offered by {channel}"),
    );
    let build = match offer.resolve(&channel, &wanted) {
        Err(valid) => {
            check.available = if valid.is_empty() {
                "none".into()
            } else {
                valid
            };
            check.problem = Some(format!(
                "the {channel} release channel does not offer GKE {wanted} in {location}"
            ));
            let elsewhere: Vec<String> = offer
                .elsewhere(&channel, &wanted)
                .into_iter()
                .map(|(c, build)| format!("`release_channel = \"{}\"` ({build})", c.to_lowercase()))
                .collect();
            check.fix = Some(if elsewhere.is_empty() {
                "set `[cluster] version` to a version the channel offers (listed above)".into()
            } else {
                format!(
                    "set `[cluster] version` to one the channel offers, or choose a channel that offers {wanted}: {}",
                    elsewhere.join(" or ")
                )
            });
            return vec![check];
        }
        Ok(build) => build,
    };
    check.available = build.clone();
    let live = version_of(&change.before);
    if existing {
        if let Some(reason) = minor_step(&live, &build) {
            check.problem = Some(format!("the control plane runs {live}"));
            check.fix = Some(reason);
            return vec![check];
        }
        // One upgrade per minor on the way, each offered by the channel.
        let mut path = Vec::new();
        for minor in minors_between(&live, &build) {
            match offer.resolve(&channel, &minor) {
                Ok(step) => path.push(step),
                Err(valid) => {
                    check.problem = Some(format!(
                        "GKE upgrades a control plane one minor version at a time, and the {channel} channel offers no {minor} build to pass through from {live}"
                    ));
                    check.available = valid;
                    check.fix = Some(format!(
                        "choose a release channel that offers {minor}, or move to it in smaller steps"
                    ));
                    break;
                }
            }
        }
        if check.problem.is_some() {
            return vec![check];
        }
        if !path.is_empty() {
            path.push(build.clone());
            check.available = format!("{} (one minor at a time)", path.join(" then "));
        }
        // Pools are upgraded after the control plane: each of its steps must keep them
        // within GKE's skew.
        let behind = plan
            .changes
            .iter()
            .filter(|c| {
                c.addr.kind == Kind::NodePool
                    && c.lifecycle.deleted_with.as_ref() == Some(&change.addr)
                    && c.action != Action::Delete
            })
            .find_map(|pool| {
                let pool_live = version_of(&pool.before);
                path.iter().chain(std::iter::once(&build)).find_map(|step| {
                    node_skew(&pool_live, step).map(|r| (pool, pool_live.clone(), step.clone(), r))
                })
            });
        if let Some((pool, pool_live, step, reason)) = behind {
            let next = minors_between(&pool_live, &step)
                .into_iter()
                .take(gke_versions::MAX_NODE_MINOR_SKEW as usize)
                .next_back()
                .unwrap_or_default();
            check.problem = Some(format!(
                "{} runs {pool_live}: the control plane's upgrade to {step} would break GKE's version skew ({reason})",
                pool.addr
            ));
            check.fix = Some(format!(
                "upgrade in two applies: set `[cluster] version = \"{next}\"` and apply (the pools follow it), then the version you want"
            ));
            return vec![check];
        }
    }
    check.ok = true;
    let mut checks = vec![check];
    checks.extend(pool_checks(plan, change, &build));
    checks
}

/// The node pools of `cluster` whose version the plan changes, checked against the build its
/// control plane will run (`control_plane`): never a newer minor, at most two minors behind.
fn pool_checks(plan: &Plan, cluster: &crate::plan::Change, control_plane: &str) -> Vec<Check> {
    plan.changes
        .iter()
        .filter(|c| {
            c.addr.kind == Kind::NodePool
                && c.lifecycle.deleted_with.as_ref() == Some(&cluster.addr)
                && c.action == Action::Update
        })
        .filter_map(|pool| {
            let diff = pool.diffs.iter().find(|d| d.field == "version")?;
            let wanted = diff.after.as_str().unwrap_or("");
            let mut check = Check::new(
                format!("GKE version {wanted} of {}", pool.addr),
                vec![pool.addr.clone()],
                format!("{wanted} within two minors below the control plane"),
            );
            check.available = format!("control plane {control_plane}");
            match node_skew(wanted, control_plane) {
                Some(reason) => {
                    check.problem = Some(reason);
                    check.fix = Some(format!(
                        "set the pool's `version` within two minors below {control_plane}, or remove it to follow the control plane"
                    ));
                }
                None => check.ok = true,
            }
            Some(check)
        })
        .collect()
}

/// Reads one object of a read-only kind (a service, quotas, a machine type) by its id.
async fn read_kind(
    provider: &dyn Provider,
    kind: Kind,
    id: String,
) -> Result<Option<crate::resource::Observed>, CloudError> {
    let target = Target {
        addr: Addr::new(kind, id.rsplit('/').next().unwrap_or(&id)),
        id,
        spec: serde_json::Value::Null,
        outputs: serde_json::Value::Null,
        context: Default::default(),
        lifecycle: Default::default(),
    };
    super::refresh::read(provider, &target).await
}

/// [`read_kind`]'s spec, the error naming what was read.
async fn look(
    provider: &dyn Provider,
    kind: Kind,
    id: String,
) -> Result<Option<serde_json::Value>, (String, CloudError)> {
    read_kind(provider, kind, id.clone())
        .await
        .map(|o| o.map(|o| o.spec))
        .map_err(|e| (format!("{kind} {id}"), e))
}

/// A key of [`quota_needs`]: a Compute metric (regional or project-wide), or the on-demand GPU
/// family quota of Cloud Quotas.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum Metric {
    Regional(String),
    Global(String),
    /// `NVIDIA_H100_MEGA`.
    GpuFamily(String),
}

/// What the plan adds to each quota, less what it frees, with the resources that add to it.
async fn quota_needs(
    provider: &dyn Provider,
    plan: &Plan,
    project: &str,
    existing: &HashSet<Addr>,
    delete_first: &BTreeSet<Addr>,
) -> Result<BTreeMap<Metric, (f64, Vec<Addr>)>, (String, CloudError)> {
    // A replaced pool stands beside its new one until the new one is up (create before
    // destroy, [`super::moves`]) unless the user let it go first, or its cluster goes with it.
    let containers_replaced: BTreeSet<&Addr> = plan
        .changes
        .iter()
        .filter(|c| matches!(c.action, Action::Replace | Action::Create))
        .map(|c| &c.addr)
        .collect();
    let frees_first = |change: &super::Change| {
        change.action != Action::Replace
            || delete_first.contains(&change.addr)
            || change
                .lifecycle
                .deleted_with
                .as_ref()
                .is_some_and(|c| containers_replaced.contains(c))
    };
    let mut needs: BTreeMap<Metric, (f64, Vec<Addr>)> = BTreeMap::new();
    let mut add = |metric: Metric, amount: f64, addr: &Addr| {
        let entry = needs.entry(metric).or_default();
        entry.0 += amount;
        if amount > 0.0 && !entry.1.contains(addr) {
            entry.1.push(addr.clone());
        }
    };
    let sign = |action: Action| match action {
        Action::Create => 1.0,
        Action::Delete => -1.0,
        _ => 0.0,
    };
    // Node pools' VMs outside reservations, before (-1) and after (+1) each change.
    let mut vms: Vec<(&Addr, NodePoolSpec, f64)> = Vec::new();
    for change in plan.actions() {
        let counted = match change.addr.kind {
            Kind::Network => Some(Metric::Global("NETWORKS".into())),
            Kind::Subnetwork => Some(Metric::Global("SUBNETWORKS".into())),
            Kind::Firewall => Some(Metric::Global("FIREWALLS".into())),
            Kind::Router => Some(Metric::Global("ROUTERS".into())),
            Kind::ResourcePolicy => Some(Metric::Regional("RESOURCE_POLICIES".into())),
            _ => None,
        };
        if let Some(metric) = counted {
            if !existing.contains(&change.addr) {
                add(metric, sign(change.action), &change.addr);
            }
            continue;
        }
        if change.addr.kind != Kind::NodePool || existing.contains(&change.addr) {
            continue;
        }
        let outside =
            |spec: &Option<serde_json::Value>| -> Result<Option<NodePoolSpec>, CloudError> {
                Ok(match spec {
                    Some(v) => Some(from_spec::<NodePoolSpec>("node pool", v)?)
                        .filter(|s| s.consumed_reservation().is_none()),
                    None => None,
                })
            };
        let err = |e| (change.addr.to_string(), e);
        if change.action != Action::Create
            && frees_first(change)
            && let Some(before) = outside(&change.before).map_err(err)?
        {
            vms.push((&change.addr, before, -1.0));
        }
        if change.action != Action::Delete
            && let Some(after) = outside(&change.after).map_err(err)?
        {
            vms.push((&change.addr, after, 1.0));
        }
    }
    // Each machine type once, all at once.
    let keys: std::collections::BTreeSet<(String, String)> = vms
        .iter()
        .filter_map(|(_, spec, _)| {
            Some((spec.machine_type.clone(), spec.locations.first()?.clone()))
        })
        .collect();
    let reads = keys.iter().map(|(machine, zone)| async move {
        let id = format!("projects/{project}/zones/{zone}/machineTypes/{machine}");
        look(provider, Kind::MachineType, id)
            .await
            .map(|found| found.and_then(|v| from_spec::<MachineTypeSpec>("machine type", &v).ok()))
    });
    let mut machine_types = BTreeMap::new();
    for (key, read) in keys.iter().zip(join_all(reads).await) {
        machine_types.insert(key.clone(), read?);
    }
    for (addr, spec, factor) in vms {
        let Some(zone) = spec.locations.first() else {
            continue;
        };
        let Some(Some(machine)) = machine_types.get(&(spec.machine_type.clone(), zone.clone()))
        else {
            continue;
        };
        let count = factor * (spec.node_count * spec.locations.len() as u64) as f64;
        let cpus = count * machine.guest_cpus as f64;
        add(Metric::Regional("CPUS".into()), cpus, addr);
        add(Metric::Global("CPUS_ALL_REGIONS".into()), cpus, addr);
        let ssd = count * (spec.local_ssd_count * 375) as f64;
        add(Metric::Regional("LOCAL_SSD_TOTAL_GB".into()), ssd, addr);
        if let Some(acc) = &spec.accelerator {
            let gpus = count * acc.count as f64;
            let family = gpu_family(&acc.kind);
            add(Metric::Global("GPUS_ALL_REGIONS".into()), gpus, addr);
            match spec.capacity.as_str() {
                "spot" => add(
                    Metric::Regional(format!("PREEMPTIBLE_{family}_GPUS")),
                    gpus,
                    addr,
                ),
                "on-demand" => add(Metric::GpuFamily(family), gpus, addr),
                _ => {}
            }
        }
    }
    Ok(needs)
}

/// One check per quota the plan adds to: the addition against `limit - usage`. The region's,
/// the project's and each GPU family's quotas are read at once.
async fn quotas(
    provider: &dyn Provider,
    plan: &Plan,
    project: &str,
    region: &str,
    existing: &HashSet<Addr>,
    // An API the GPU family quota's read needs that the plan has yet to enable.
    families_pending: Option<&str>,
    delete_first: &BTreeSet<Addr>,
) -> Result<Vec<Check>, (String, CloudError)> {
    let needs = quota_needs(provider, plan, project, existing, delete_first).await?;
    let needs: Vec<(Metric, (f64, Vec<Addr>))> = needs
        .into_iter()
        .filter(|(_, (amount, _))| *amount > 0.0)
        .collect();
    if needs.is_empty() {
        return Ok(vec![]);
    }
    let families = needs.iter().filter_map(|(metric, _)| match metric {
        Metric::GpuFamily(_) if families_pending.is_some() => None,
        Metric::GpuFamily(family) => Some(async move {
            let id = format!("projects/{project}/regions/{region}/gpuFamilies/{family}");
            (
                family.clone(),
                read_kind(provider, Kind::GpuFamilyQuota, id).await,
            )
        }),
        _ => None,
    });
    let (regional, global, families) = futures_util::future::join3(
        look(
            provider,
            Kind::Region,
            format!("projects/{project}/regions/{region}"),
        ),
        look(provider, Kind::Project, format!("projects/{project}")),
        join_all(families),
    )
    .await;
    let quotas_of = |read: Option<serde_json::Value>| {
        read.and_then(|v| from_spec::<QuotasSpec>("quotas", &v).ok())
            .map(|q| q.quotas)
            .unwrap_or_default()
    };
    let (regional, global) = (quotas_of(regional?), quotas_of(global?));
    let families: BTreeMap<String, _> = families.into_iter().collect();
    let mut checks = Vec::new();
    for (metric, (amount, addrs)) in needs {
        let (name, quotas, scope) = match &metric {
            Metric::Regional(name) => (name, &regional, format!(" in region {region}")),
            Metric::Global(name) => (name, &global, String::new()),
            Metric::GpuFamily(family) if families_pending.is_some() => {
                let service = families_pending.unwrap_or_default();
                let subject = format!("quota GPUS_PER_GPU_FAMILY ({family}) in region {region}");
                let mut check = not_yet_enabled(service, &subject, project);
                check.for_resources = addrs;
                check.need = format!("{amount}");
                checks.push(check);
                continue;
            }
            Metric::GpuFamily(family) => {
                checks.push(
                    family_check(project, region, family, amount, addrs, &families[family])
                        .map_err(|e| *e)?,
                );
                continue;
            }
        };
        // A metric Compute does not report for the project has no limit to check.
        let Some(quota) = quotas.get(name) else {
            continue;
        };
        let mut check = Check::new(format!("quota {name}{scope}"), addrs, format!("{amount}"));
        check.ok = amount <= quota.headroom();
        check.available = format!("{} free of {}", quota.headroom(), quota.limit);
        if !check.ok {
            check.problem = Some(format!(
                "the plan adds {amount} to {name}{scope}, where {} of {} are in use",
                quota.usage, quota.limit
            ));
            check.fix = Some(format!(
                "ask for a {name} limit of at least {} (https://console.cloud.google.com/iam-admin/quotas?project={project}), or make the plan smaller",
                quota.usage + amount
            ));
        }
        checks.push(check);
    }
    Ok(checks)
}

/// The check of the on-demand GPUs of `family` the plan adds, against the family's quota.
fn family_check(
    project: &str,
    region: &str,
    family: &str,
    amount: f64,
    addrs: Vec<Addr>,
    read: &Result<Option<crate::resource::Observed>, CloudError>,
) -> Result<Check, Box<(String, CloudError)>> {
    let mut check = Check::new(
        format!("quota GPUS_PER_GPU_FAMILY ({family}) in region {region}"),
        addrs,
        format!("{amount}"),
    );
    let observed = match read {
        Ok(observed) => observed,
        // The Cloud Quotas API is off, or not readable: say so, and let the apply find out.
        Err(e)
            if e.class == crate::cloud::ErrorClass::Permission
                || e.reason == "SERVICE_DISABLED" =>
        {
            check.unknown = true;
            check.available = "unknown".into();
            check.problem = Some(format!(
                "cannot read the {family} GPU quota through the Cloud Quotas API: {}",
                e.message
            ));
            check.fix = Some(format!(
                "gcloud services enable cloudquotas.googleapis.com --project={project}, so that preflight can check it"
            ));
            return Ok(check);
        }
        Err(e) => {
            return Err(Box::new((
                format!("the {family} GPU quota in {region}"),
                e.clone(),
            )));
        }
    };
    let spec = observed
        .as_ref()
        .and_then(|o| from_spec::<GpuFamilyQuotaSpec>("GPU family quota", &o.spec).ok());
    let Some(GpuFamilyQuotaSpec {
        limit: Some(limit),
        usage,
        reserved,
        ..
    }) = spec
    else {
        // No limit is served for the family: nothing to check against.
        check.ok = true;
        check.available = "no limit".into();
        return Ok(check);
    };
    let headroom = limit.saturating_sub(usage) as f64;
    check.ok = amount <= headroom;
    check.available = format!("{headroom} free of {limit}");
    if !check.ok {
        check.problem = Some(format!(
            "the plan adds {amount} on-demand {family} GPUs in {region}, where {usage} of {limit} are in use ({reserved} held by reservations, the rest by GKE node pools)"
        ));
        check.fix = Some(format!(
            "gcloud beta quotas preferences create --service=compute.googleapis.com --quota-id={GPU_FAMILY_QUOTA_ID} --dimensions=region={region},gpu_family={family} --preferred-value={} --project={project}, or consume a reservation (`reservation = \"NAME\"` on the pool)",
            usage + amount as u64
        ));
    }
    Ok(check)
}

/// The resources the plan creates that exist already (read, concurrently): those an interrupted
/// apply journaled, and every node pool that consumes a reservation (a lost create answer would
/// otherwise hold the reservation against the pool itself forever).
async fn existing_creates(
    provider: &dyn Provider,
    plan: &Plan,
    journaled: &HashSet<Addr>,
) -> Result<HashSet<Addr>, (String, CloudError)> {
    let creates = plan
        .actions()
        .filter(|c| c.action == Action::Create)
        .filter(|c| {
            // Only the kinds preflight counts (reading a Kubernetes object needs its cluster).
            let counted = matches!(
                c.addr.kind,
                Kind::Network
                    | Kind::Subnetwork
                    | Kind::Firewall
                    | Kind::Router
                    | Kind::ResourcePolicy
                    | Kind::NodePool
            );
            (counted && journaled.contains(&c.addr))
                || (c.addr.kind == Kind::NodePool
                    && c.after
                        .as_ref()
                        .and_then(|a| from_spec::<NodePoolSpec>("node pool", a).ok())
                        .is_some_and(|spec| spec.consumed_reservation().is_some()))
        });
    let reads = creates.map(|change| async move {
        let target = Target {
            addr: change.addr.clone(),
            id: change.id.clone(),
            spec: change.after.clone().unwrap_or_default(),
            outputs: serde_json::Value::Null,
            context: Default::default(),
            lifecycle: Default::default(),
        };
        match super::refresh::read(provider, &target).await {
            Ok(found) => Ok(found.map(|_| change.addr.clone())),
            // Its API is off: nothing of it can be found (the services check says the rest).
            Err(e) if e.reason == "SERVICE_DISABLED" => Ok(None),
            Err(e) => Err((format!("{} ({})", change.addr, change.id), e)),
        }
    });
    let mut existing = HashSet::new();
    for read in join_all(reads).await {
        existing.extend(read?);
    }
    Ok(existing)
}

/// What the check of reservation `name` in `zone` is of: `reservation a3mega-reservation
/// (us-central1-a)`.
pub fn reservation_subject(name: &str, zone: &str) -> String {
    format!("reservation {name} ({zone})")
}

/// The check of one demand against the live reservation (`None`: not found).
fn check(demand: &Demand, live: Option<&serde_json::Value>, in_use: u64) -> Check {
    let gpus = demand
        .accelerator
        .as_ref()
        .map(|(kind, count)| format!(" with {count} × {kind}"))
        .unwrap_or_default();
    let need = format!("{} × {}{gpus}", demand.nodes, demand.machine_type);
    let mut check = Check::new(
        reservation_subject(&demand.name, &demand.zone),
        demand.pools.clone(),
        need,
    );
    let project_flag = format!("--project={}", demand.project);
    let create = format!(
        "gcloud compute reservations create {} --zone={} --vm-count={} --machine-type={}{} --require-specific-reservation {project_flag}",
        demand.name,
        demand.zone,
        demand.nodes,
        demand.machine_type,
        demand
            .accelerator
            .as_ref()
            .map(|(kind, count)| format!(" --accelerator=count={count},type={kind}"))
            .unwrap_or_default()
    );
    let Some(live) = live else {
        check.available = "not found".into();
        check.problem = Some(format!(
            "no reservation `{}` in zone {} of project {}",
            demand.name, demand.zone, demand.project
        ));
        check.fix = Some(format!(
            "create it ({create}), or name an existing reservation of that zone in the blueprint (`gcloud compute reservations list {project_flag}`)"
        ));
        return check;
    };
    let live: ReservationSpec = match from_spec("reservation", live) {
        Ok(spec) => spec,
        Err(e) => {
            check.available = "unreadable".into();
            check.problem = Some(e.to_string());
            return check;
        }
    };
    // A replaced pool's delete comes first: what it gives back is free for the creates.
    let free = live.count.saturating_sub(in_use) + demand.freed.min(in_use);
    check.available = if demand.freed > 0 {
        format!(
            "{free} free of {} once the replaced pool's {} VM(s) are deleted",
            live.count,
            demand.freed.min(in_use)
        )
    } else {
        format!("{free} free of {}", live.count)
    };
    // A pool names its reservation (SPECIFIC_RESERVATION affinity), which GKE accepts only for a
    // reservation that VMs must name: "Specified reservations [R] can not be targeted as
    // specificReservationRequired is not set"
    // (<https://cloud.google.com/kubernetes-engine/docs/how-to/consuming-reservations>).
    if !live.specific_reservation_required {
        check.available = format!("{free} free of {}, open to any VM", live.count);
        check.problem = Some(format!(
            "reservation `{}` does not require VMs to name it (specificReservationRequired is not set), so GKE refuses a pool that targets it",
            demand.name
        ));
        check.fix = Some(format!(
            "use a reservation created with --require-specific-reservation, or create one: {create}"
        ));
        return check;
    }
    if live.machine_type != demand.machine_type {
        check.available = format!("{} × {}", live.count, live.machine_type);
        // A replacement that changes the machine type: its delete would give back VMs the new
        // pool cannot use.
        if let Some((pool, _)) = demand
            .replaced
            .iter()
            .find(|(_, old)| *old == live.machine_type)
        {
            check.problem = Some(format!(
                "reservation {} holds {} VMs; the new pool asks for {}. {pool} is replaced: whether the new pool stands beside the old one or follows its delete, it cannot use this reservation's VMs",
                demand.name, live.machine_type, demand.machine_type
            ));
            check.fix = Some(format!(
                "give the pool a reservation of {} VMs: name it with `reservation = \"NAME\"` in [[gpu_pool]] `{}` (or create one: {create}); or keep `machine_type = \"{}\"`",
                demand.machine_type, pool.name, live.machine_type
            ));
            return check;
        }
        check.problem = Some(format!(
            "reservation `{}` holds {} VMs, the pool needs {}",
            demand.name, live.machine_type, demand.machine_type
        ));
        check.fix = Some(format!(
            "name a reservation of {} VMs in the blueprint, or create one: {create}",
            demand.machine_type
        ));
        return check;
    }
    let held: Vec<(String, i64)> = live
        .accelerators
        .iter()
        .map(|a| (a.kind.clone(), a.count))
        .collect();
    if let Some(wanted) = &demand.accelerator
        && !held.is_empty()
        && !held.contains(wanted)
    {
        check.problem = Some(format!(
            "reservation `{}` holds VMs with {}, the pool needs {} × {}",
            demand.name,
            held.iter()
                .map(|(kind, count)| format!("{count} × {kind}"))
                .collect::<Vec<_>>()
                .join(", "),
            wanted.1,
            wanted.0
        ));
        check.fix = Some(format!("create a matching reservation: {create}"));
        return check;
    }
    if free < demand.nodes {
        let freed = match demand.freed.min(in_use) {
            0 => String::new(),
            n => format!(", {n} of them freed first by the replaced pool's delete"),
        };
        check.problem = Some(format!(
            "reservation `{}` has {free} free VMs ({} reserved, {in_use} in use{freed}); the plan adds {} nodes from it",
            demand.name, live.count, demand.nodes
        ));
        check.fix = Some(format!(
            "resize it: gcloud compute reservations update {} --zone={} --vm-count={} {project_flag} (if the capacity is available), or lower the pool's `nodes`",
            demand.name,
            demand.zone,
            in_use - demand.freed.min(in_use) + demand.nodes
        ));
        return check;
    }
    check.ok = true;
    check
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn demand(nodes: u64) -> Demand {
        Demand {
            project: "p".into(),
            zone: "us-central1-a".into(),
            name: "res".into(),
            machine_type: "a3-megagpu-8g".into(),
            accelerator: Some(("nvidia-h100-mega-80gb".into(), 8)),
            nodes,
            pools: vec![Addr::new(Kind::NodePool, "a3mega")],
            freed: 0,
            replaced: vec![],
        }
    }

    fn live(machine: &str, count: u64, gpus: &str) -> serde_json::Value {
        json!({
            "name": "res", "zone": "us-central1-a", "machine_type": machine, "count": count,
            "accelerators": [{"type": gpus, "count": 8}], "local_ssds": 0,
            "specific_reservation_required": true, "deployment_type": "DENSE", "share_type": "LOCAL",
        })
    }

    fn pool(name: &str, nodes: u64) -> serde_json::Value {
        json!({
            "cluster": "c", "location": "us-central1", "name": name, "machine_type": "a3-megagpu-8g",
            "locations": ["us-central1-a"], "node_count": nodes,
            "accelerator": {"type": "nvidia-h100-mega-80gb", "count": 8, "driver": "LATEST"},
            "additional_networks": [], "placement_policy": null,
            "reservation": {"name": "res", "block": null}, "capacity": "reservation",
            "local_ssd_count": 0, "labels": {}, "taints": [], "gvnic": true,
            "image_type": "COS_CONTAINERD", "disk_size_gb": 200, "auto_repair": true,
            "auto_upgrade": true,
        })
    }

    fn change(name: &str, action: Action, before: Option<u64>, after: u64) -> super::super::Change {
        super::super::Change {
            addr: Addr::new(Kind::NodePool, name),
            action,
            id: format!("projects/p/locations/us-central1/clusters/c/nodePools/{name}"),
            before: before.map(|n| pool(name, n)),
            after: Some(pool(name, after)),
            diffs: vec![],
            reason: None,
            dependencies: vec![],
            lifecycle: Default::default(),
        }
    }

    /// An update of cluster `c` from `live` to `wanted` in `channel`, with pool `gpu` on
    /// `pool_live`, following `wanted`.
    fn upgrade(live: &str, wanted: &str, channel: &str, pool_live: &str) -> Plan {
        let cluster = Addr::new(Kind::Cluster, "c");
        let diff = |before: &str, after: &str| crate::resource::FieldDiff {
            field: "version".into(),
            before: json!(before),
            after: json!(after),
            forces_replacement: false,
        };
        let mut gpu = change("gpu", Action::Update, Some(2), 2);
        gpu.before.as_mut().unwrap()["version"] = json!(pool_live);
        gpu.after.as_mut().unwrap()["version"] = json!(wanted);
        gpu.diffs = vec![diff(pool_live, wanted)];
        gpu.lifecycle.deleted_with = Some(cluster.clone());
        let spec = |version: &str| json!({"version": version, "release_channel": channel, "location": "us-central1"});
        Plan {
            format: 1,
            blueprint: "bp".into(),
            lineage: String::new(),
            serial: 0,
            destroy: false,
            changes: vec![
                super::super::Change {
                    addr: cluster,
                    action: Action::Update,
                    id: "projects/p/locations/us-central1/clusters/c".into(),
                    before: Some(spec(live)),
                    after: Some(spec(wanted)),
                    diffs: vec![diff(live, wanted)],
                    reason: None,
                    dependencies: vec![],
                    lifecycle: Default::default(),
                },
                gpu,
            ],
            drift: vec![],
            versions: vec![],
            adoptions: vec![],
            preflight: None,
            notes: vec![],
            moves: vec![],
        }
    }

    fn offer() -> GkeVersionsSpec {
        let channel = |valid: &[&str]| gke_versions::ChannelVersions {
            default: valid[0].to_string(),
            valid: valid.iter().map(|v| v.to_string()).collect(),
        };
        GkeVersionsSpec {
            location: "us-central1".into(),
            channels: [
                (
                    "RAPID".to_string(),
                    channel(&[
                        "1.34.1-gke.1829001",
                        "1.33.5-gke.1080000",
                        "1.32.12-gke.1050000",
                    ]),
                ),
                // No 1.32 between its 1.31 and 1.33.
                (
                    "STABLE".to_string(),
                    channel(&["1.33.5-gke.1080000", "1.31.14-gke.1243000"]),
                ),
            ]
            .into(),
            unspecified: channel(&["1.34.1-gke.1829001"]),
        }
    }

    fn checks_of(plan: &Plan) -> Vec<Check> {
        cluster_version_checks(&offer(), plan, &plan.changes[0], true, "us-central1")
    }

    #[test]
    fn a_control_plane_passes_each_minor_and_keeps_its_pools_within_two() {
        let plan = upgrade(
            "1.32.12-gke.1050000",
            "1.34",
            "RAPID",
            "1.32.12-gke.1050000",
        );
        let checks = checks_of(&plan);
        assert!(checks.iter().all(|c| c.ok), "{checks:#?}");
        assert_eq!(
            checks[0].available,
            "1.33.5-gke.1080000 then 1.34.1-gke.1829001 (one minor at a time)"
        );
        assert_eq!(checks[1].subject, "GKE version 1.34 of node_pool.gpu");

        // A pool on 1.31 would be three minors behind 1.34: upgrade to 1.33 first.
        let plan = upgrade(
            "1.32.12-gke.1050000",
            "1.34",
            "RAPID",
            "1.31.14-gke.1243000",
        );
        let checks = checks_of(&plan);
        assert_eq!(checks.len(), 1, "{checks:#?}");
        assert!(!checks[0].ok);
        let problem = checks[0].problem.as_deref().unwrap();
        assert!(
            problem.starts_with("node_pool.gpu runs 1.31.14-gke.1243000: the control plane's upgrade to 1.34.1-gke.1829001 would break GKE's version skew"),
            "{problem}"
        );
        assert_eq!(
            checks[0].fix.as_deref(),
            Some(
                "upgrade in two applies: set `[cluster] version = \"1.33\"` and apply (the pools follow it), then the version you want"
            )
        );

        // STABLE offers no 1.32 to pass through.
        let plan = upgrade(
            "1.31.14-gke.1243000",
            "1.33",
            "STABLE",
            "1.31.14-gke.1243000",
        );
        let checks = checks_of(&plan);
        assert_eq!(
            checks[0].problem.as_deref(),
            Some(
                "GKE upgrades a control plane one minor version at a time, and the STABLE channel offers no 1.32 build to pass through from 1.31.14-gke.1243000"
            )
        );
    }

    #[test]
    fn a_plan_needs_what_it_adds_and_not_what_exists() {
        let plan = Plan {
            format: 1,
            blueprint: "bp".into(),
            lineage: String::new(),
            serial: 0,
            destroy: false,
            changes: vec![
                change("new", Action::Create, None, 4),
                change("grown", Action::Update, Some(2), 5),
                change("replaced", Action::Replace, Some(4), 4),
                change("adopted", Action::Create, None, 8),
            ],
            drift: vec![],
            versions: vec![],
            adoptions: vec![],
            preflight: None,
            notes: vec![],
            moves: vec![],
        };
        let existing: HashSet<Addr> = [Addr::new(Kind::NodePool, "adopted")].into();
        let demands = demands(&plan, "p", &existing).unwrap();
        assert_eq!(demands.len(), 1);
        // The replaced pool is a create of 4 nodes, whose old pool's 4 are freed first.
        assert_eq!(demands[0].nodes, 4 + 3 + 4);
        assert_eq!(demands[0].freed, 4);
        assert_eq!(
            demands[0].pools,
            [
                Addr::new(Kind::NodePool, "new"),
                Addr::new(Kind::NodePool, "grown"),
                Addr::new(Kind::NodePool, "replaced")
            ]
        );
        assert_eq!(
            demands[0].replaced,
            [(
                Addr::new(Kind::NodePool, "replaced"),
                "a3-megagpu-8g".into()
            )]
        );
    }

    #[test]
    fn a_replacement_is_checked_as_a_create_of_the_new_pool() {
        // Same machine type, the reservation full with the old pool's 32: fits once they are freed.
        let mut same = demand(32);
        same.freed = 32;
        same.replaced = vec![(Addr::new(Kind::NodePool, "a3mega"), "a3-megagpu-8g".into())];
        let ok = check(
            &same,
            Some(&live("a3-megagpu-8g", 32, "nvidia-h100-mega-80gb")),
            32,
        );
        assert!(ok.ok, "{ok:?}");
        assert_eq!(
            ok.available,
            "32 free of 32 once the replaced pool's 32 VM(s) are deleted"
        );
        // 36 reserved, all in use (4 by another consumer): the new 32 fit in what the delete
        // frees, 34 do not.
        let short = check(
            &same,
            Some(&live("a3-megagpu-8g", 36, "nvidia-h100-mega-80gb")),
            36,
        );
        assert!(short.ok, "{short:?}");
        let mut more = same;
        more.nodes = 34;
        let short = check(
            &more,
            Some(&live("a3-megagpu-8g", 36, "nvidia-h100-mega-80gb")),
            36,
        );
        assert_eq!(
            short.problem.as_deref(),
            Some(
                "reservation `res` has 32 free VMs (36 reserved, 36 in use, 32 of them freed first by the replaced pool's delete); the plan adds 34 nodes from it"
            )
        );
        assert!(short.fix.unwrap().contains("--vm-count=38"));

        // A new machine type: the reservation cannot serve it, whatever the delete frees.
        let mut other = demand(32);
        other.machine_type = "a3-highgpu-8g".into();
        other.accelerator = Some(("nvidia-h100-80gb".into(), 8));
        other.freed = 32;
        other.replaced = vec![(Addr::new(Kind::NodePool, "a3mega"), "a3-megagpu-8g".into())];
        let refused = check(
            &other,
            Some(&live("a3-megagpu-8g", 32, "nvidia-h100-mega-80gb")),
            32,
        );
        assert!(!refused.ok);
        assert_eq!(refused.available, "32 × a3-megagpu-8g");
        assert!(
            refused.problem.as_deref().unwrap().starts_with(
                "reservation res holds a3-megagpu-8g VMs; the new pool asks for a3-highgpu-8g. node_pool.a3mega is replaced"
            ),
            "{refused:?}"
        );
        let fix = refused.fix.unwrap();
        assert!(
            fix.starts_with(
                "give the pool a reservation of a3-highgpu-8g VMs: name it with `reservation = \"NAME\"` in [[gpu_pool]] `a3mega`"
            ),
            "{fix}"
        );
        assert!(
            fix.ends_with("or keep `machine_type = \"a3-megagpu-8g\"`"),
            "{fix}"
        );
    }

    #[test]
    fn each_shortfall_names_need_available_and_fix() {
        let ok = check(
            &demand(4),
            Some(&live("a3-megagpu-8g", 4, "nvidia-h100-mega-80gb")),
            0,
        );
        assert!(ok.ok, "{ok:?}");
        assert_eq!(ok.available, "4 free of 4");
        assert_eq!(ok.need, "4 × a3-megagpu-8g with 8 × nvidia-h100-mega-80gb");

        let missing = check(&demand(4), None, 0);
        assert!(!missing.ok);
        assert_eq!(missing.available, "not found");
        assert!(missing.fix.unwrap().contains(
            "gcloud compute reservations create res --zone=us-central1-a --vm-count=4 --machine-type=a3-megagpu-8g --accelerator=count=8,type=nvidia-h100-mega-80gb"
        ));

        let short = check(
            &demand(4),
            Some(&live("a3-megagpu-8g", 4, "nvidia-h100-mega-80gb")),
            2,
        );
        assert_eq!(
            short.problem.as_deref(),
            Some(
                "reservation `res` has 2 free VMs (4 reserved, 2 in use); the plan adds 4 nodes from it"
            )
        );
        assert!(short.fix.unwrap().contains("--vm-count=6"));

        let wrong = check(
            &demand(1),
            Some(&live("a3-highgpu-8g", 4, "nvidia-h100-80gb")),
            0,
        );
        assert_eq!(
            wrong.problem.as_deref(),
            Some("reservation `res` holds a3-highgpu-8g VMs, the pool needs a3-megagpu-8g")
        );

        let gpus = check(
            &demand(1),
            Some(&live("a3-megagpu-8g", 4, "nvidia-h100-80gb")),
            0,
        );
        assert!(
            gpus.problem
                .unwrap()
                .contains("holds VMs with 8 × nvidia-h100-80gb")
        );
    }

    #[test]
    fn surge_nodes_need_room_in_the_reservation_after_the_plan() {
        let surge = |extra: u64, upgrading: bool, blue_green: bool| Surge {
            pool: Addr::new(Kind::NodePool, "a3mega"),
            project: "p".into(),
            zone: "us-central1-a".into(),
            name: "res".into(),
            extra,
            blue_green,
            upgrading,
        };
        // Room: 34 reserved, 32 in use.
        let ok = surge_check(&surge(2, true, false), 34, 32, 0);
        assert!(ok.ok && !ok.warning && ok.problem.is_none(), "{ok:?}");
        assert_eq!(ok.available, "2 free after this plan");
        // A full reservation, the pool's upgrade in this plan: refused, with the fix.
        let full = surge_check(&surge(2, true, false), 32, 32, 0);
        assert!(!full.ok && !full.warning);
        assert_eq!(
            full.problem.as_deref(),
            Some(
                "reservation `res` has 0 free VM(s) after this plan; node_pool.a3mega's upgrade in this plan needs 2 more, so the upgrade would stall waiting for capacity"
            )
        );
        let fix = full.fix.clone().unwrap();
        assert!(
            fix.starts_with("set `max_surge = 0` and `max_unavailable = 1`"),
            "{fix}"
        );
        assert!(fix.contains("--vm-count=34"), "{fix}");
        // At creation (the plan's own 32 nodes take the room): a warning, the plan goes on.
        let created = surge_check(&surge(32, false, true), 32, 0, 32);
        assert!(created.ok && created.warning);
        assert_eq!(
            created.need,
            "32 extra VM(s) during a blue-green upgrade (the whole pool again)"
        );
        assert!(
            created
                .problem
                .as_deref()
                .unwrap()
                .contains("node_pool.a3mega's next upgrade needs 32 more")
        );
        let preflight = Preflight {
            checks: vec![created.clone()],
            ..Default::default()
        };
        assert!(preflight.passed());
        let preflight = Preflight {
            checks: vec![created, full],
            ..Default::default()
        };
        assert!(!preflight.passed());
    }

    #[test]
    fn surge_gpus_need_room_in_the_gpu_quota_after_the_plan() {
        let surge = |upgrading: bool| Surge {
            pool: Addr::new(Kind::NodePool, "a3high"),
            project: "p".into(),
            zone: String::new(),
            name: GPU_QUOTA.into(),
            extra: 8,
            blue_green: false,
            upgrading,
        };
        let ok = gpu_surge_check(&surge(false), 64.0, 0.0, 32.0);
        assert!(ok.ok && !ok.warning, "{ok:?}");
        assert_eq!(
            ok.subject,
            "upgrade headroom of node_pool.a3high on quota GPUS_ALL_REGIONS"
        );
        assert_eq!(ok.available, "32 free after this plan");
        let short = gpu_surge_check(&surge(false), 36.0, 0.0, 32.0);
        assert!(short.ok && short.warning);
        assert!(short.problem.as_deref().unwrap().contains(
            "has 4 GPUs free after this plan; node_pool.a3high's next upgrade needs 8 more"
        ));
        assert!(
            short
                .fix
                .as_deref()
                .unwrap()
                .contains("GPUS_ALL_REGIONS limit of at least 40")
        );
        let upgrading = gpu_surge_check(&surge(true), 36.0, 0.0, 32.0);
        assert!(!upgrading.ok && !upgrading.warning);
    }
}
