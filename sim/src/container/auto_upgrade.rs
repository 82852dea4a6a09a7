//! Auto-upgrades: what GKE starts by itself when a release channel's auto-upgrade target
//! (`serverConfig.channels[].upgradeTargetVersion`, which the simulator keeps equal to the
//! channel's default) moves beyond a cluster's control plane.
//!
//! Only worlds whose world file has a `[gke]` table ([`super::server_config::Schedule`]) auto-
//! upgrade; others keep the versions users chose. For a cluster in a release channel, RUNNING,
//! with no operation running (one operation per cluster still holds: an auto-upgrade waits for
//! a user's operation, and a user's change meets `Cluster is running incompatible operation`
//! while an auto-upgrade runs):
//!
//! 1. the control plane moves toward the target: to the newest build of the next minor the
//!    channel offers up to the target (one minor at a time, and not when a pool would end more
//!    than two minors behind: [`super::skew`]), else to the newest newer patch of its own minor —
//!    an `UPGRADE_MASTER` operation;
//! 2. once the control plane is done, each pool with `management.autoUpgrade` behind it moves to
//!    the control plane's version, one at a time — the operation `nodePools.update` with
//!    `nodeVersion` starts (`UPGRADE_NODES`, [`super::node_pools::start_node_upgrade`]).
//!
//! Each step starts only when the cluster's maintenance policy allows that kind of upgrade
//! ([`super::maintenance::Policy::allows`]): inside the window if one is set, outside every
//! active exclusion whose scope covers it. Steps start at the simulated instant they become
//! possible (a release, a window opening, an exclusion ending, an operation ending), however
//! late the next request comes: [`next_due`] and [`start_until`] join the world's tick. A node
//! step counts as a `container.nodePool` `update` for scripted faults; one refused by a fault is
//! tried again an hour later.

use super::maintenance::{self, Support, Upgrade};
use super::operations::{self, Effect};
use super::server_config::{Offer, Schedule};
use super::skew::Version;
use super::{Cluster, node_pools};
use crate::clock::SimTime;
use crate::shared::Ctx;
use crate::world::World;
use chrono::{DateTime, Utc};
use serde_json::json;

/// How long after a refused step (a scripted fault on the pool update) it is tried again.
const RETRY_MS: u64 = 3_600_000;

/// What an auto-upgrade does next to one cluster.
#[derive(Debug, Clone, PartialEq)]
enum Step {
    Master(String),
    Pool(String),
}

fn to_sim(world: &World, t: DateTime<Utc>) -> Option<SimTime> {
    let ms = (t - world.epoch).num_milliseconds();
    u64::try_from(ms).ok().map(SimTime)
}

/// The next step for `cluster` at `t`, if one may start then.
fn step_at(world: &World, schedule: &Schedule, cluster: &Cluster, t: SimTime) -> Option<Step> {
    if cluster.status() != "RUNNING" || world.container.running_operation(&cluster.key()).is_some()
    {
        return None;
    }
    let channel = cluster.resource["releaseChannel"]["channel"].as_str()?;
    let offer = Offer::at(Some(schedule), t);
    let channel = offer.channel(channel)?;
    let master_text = cluster.resource["currentMasterVersion"].as_str()?;
    let master = Version::parse(master_text)?;
    let target = Version::parse(&channel.default)?;
    let support = Support::of(world);
    let policy = maintenance::policy_of(
        &cluster.resource["maintenancePolicy"],
        master_text,
        &support,
    );
    let instant = world.instant(t);
    if target > master {
        let pools: Vec<(&str, &str)> = cluster
            .pools
            .iter()
            .map(|p| {
                (
                    p.name.as_str(),
                    p.resource["version"].as_str().unwrap_or(""),
                )
            })
            .collect();
        let newest = |minor: u64| {
            channel
                .valid
                .iter()
                .filter_map(|v| Some((Version::parse(v)?, v)))
                .filter(|(v, _)| v.major == master.major && v.minor == minor)
                .filter(|(v, _)| *v > master && *v <= target)
                .max_by_key(|(v, _)| *v)
                .map(|(_, text)| text.clone())
        };
        let minor_step = newest(master.minor + 1).filter(|v| {
            policy.allows(Upgrade::MasterMinor, instant)
                && super::skew::check_master_change(master_text, v, &pools).is_ok()
        });
        let patch_step =
            newest(master.minor).filter(|_| policy.allows(Upgrade::MasterPatch, instant));
        if let Some(version) = minor_step.or(patch_step) {
            return Some(Step::Master(version));
        }
    }
    cluster
        .pools
        .iter()
        .filter(|p| {
            p.status() == "RUNNING" && p.resource["management"]["autoUpgrade"] == json!(true)
        })
        .find_map(|p| {
            let version = Version::parse(p.resource["version"].as_str()?)?;
            if version >= master {
                return None;
            }
            let kind = if version.minor == master.minor && version.major == master.major {
                Upgrade::NodePatch
            } else {
                Upgrade::NodeMinor
            };
            policy
                .allows(kind, instant)
                .then(|| Step::Pool(p.name.clone()))
        })
}

/// The first instant in `[from, until]` (`from` itself only for operation ends) at which a step
/// may start for `cluster`, with that step, judged on the world as it is (an operation that ends
/// before that instant but is not finished yet holds it back: its end is an instant too).
fn first_step(
    world: &World,
    schedule: &Schedule,
    cluster: &Cluster,
    from: SimTime,
    until: SimTime,
) -> Option<(SimTime, Step)> {
    candidates(world, schedule, cluster, from, until)
        .into_iter()
        .find_map(|t| step_at(world, schedule, cluster, t).map(|step| (t, step)))
}

/// The instants in `(from, until]`, and operation ends in `[from, until]`, at which what an
/// auto-upgrade may do changes: releases, window openings, exclusion starts and ends.
fn candidates(
    world: &World,
    schedule: &Schedule,
    cluster: &Cluster,
    from: SimTime,
    until: SimTime,
) -> Vec<SimTime> {
    if until < from {
        return vec![];
    }
    let key = cluster.key();
    let mut candidates: Vec<SimTime> = schedule
        .change_times()
        .into_iter()
        .filter(|t| *t > from && *t <= until)
        .collect();
    candidates.extend(
        world
            .container
            .operations
            .iter()
            .filter(|o| o.cluster_key == key)
            .filter_map(|o| o.end)
            .filter(|t| *t <= until)
            .filter(|t| {
                *t > from || (*t == from && world.container.auto_failed.get(&key) != Some(&from))
            }),
    );
    // A step a scripted fault refused is tried again an hour later.
    if let Some(failed) = world.container.auto_failed.get(&key) {
        let retry = failed.plus_ms(RETRY_MS);
        if retry > from && retry <= until {
            candidates.push(retry);
        }
    }
    let master = cluster.resource["currentMasterVersion"]
        .as_str()
        .unwrap_or("");
    let policy = maintenance::policy_of(
        &cluster.resource["maintenancePolicy"],
        master,
        &Support::of(world),
    );
    candidates.extend(
        policy
            .changes_between(world.instant(from), world.instant(until))
            .into_iter()
            .filter_map(|t| to_sim(world, t)),
    );
    candidates.sort();
    candidates.dedup();
    candidates
}

/// The earliest time, not after `now`, at which an auto-upgrade is to start.
pub fn next_due(world: &World, now: SimTime) -> Option<SimTime> {
    let schedule = world.container.schedule.as_ref()?;
    let from = world.container.auto_checked;
    world
        .container
        .clusters
        .values()
        .filter_map(|c| first_step(world, schedule, c, from, now).map(|(t, _)| t))
        .min()
}

/// Starts the auto-upgrades due at `at`, once the operations due by then have finished; returns
/// true if it started any. Earlier instants were judged by [`next_due`] (which made `at` the
/// earliest due time), so only `at` itself is looked at here: a later state must not decide an
/// earlier instant.
pub fn start_until(world: &mut World, cx: &Ctx, at: SimTime) -> bool {
    let Some(schedule) = world.container.schedule.clone() else {
        return false;
    };
    let from = world.container.auto_checked;
    let keys: Vec<String> = world.container.clusters.keys().cloned().collect();
    let mut started = false;
    for key in keys {
        let Some(cluster) = world.container.clusters.get(&key) else {
            continue;
        };
        let due = candidates(world, &schedule, cluster, from, at).contains(&at);
        let Some(step) = due
            .then(|| step_at(world, &schedule, cluster, at))
            .flatten()
        else {
            continue;
        };
        let t = at;
        let (project, location, name) = (
            cluster.project.clone(),
            cluster.location.clone(),
            cluster.name.clone(),
        );
        let cx_t = Ctx { now: t, ..*cx };
        match step {
            Step::Master(version) => {
                let mut patch = json!({"currentMasterVersion": version});
                if let Some(c) = world.container.clusters.get_mut(&key) {
                    c.set_status("RECONCILING");
                    let support = Support {
                        schedule: schedule.clone(),
                        epoch: world.epoch,
                    };
                    if let Some(policy) = maintenance::follow_minor(
                        &c.resource["maintenancePolicy"],
                        &version,
                        &support,
                    ) {
                        patch["maintenancePolicy"] = policy;
                    }
                }
                operations::start(
                    world,
                    &cx_t,
                    &project,
                    &location,
                    "UPGRADE_MASTER",
                    key.clone(),
                    Effect::UpdateCluster { patch },
                    "container.cluster.update",
                    None,
                );
                started = true;
            }
            Step::Pool(pool) => {
                let result = node_pools::start_node_upgrade(
                    world,
                    &cx_t,
                    (&project, &location, &name),
                    &pool,
                );
                match result {
                    Ok(_) => started = true,
                    // A scripted fault refused it: not again at this instant.
                    Err(_) => {
                        world.container.auto_failed.insert(key.clone(), t);
                    }
                }
            }
        }
    }
    world.container.auto_checked = world.container.auto_checked.max(at);
    started
}
