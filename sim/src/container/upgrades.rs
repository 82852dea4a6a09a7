//! Node-pool upgrades done the way GKE does them: nodes replaced batch by batch over simulated
//! time, per the pool's `upgradeSettings`.
//!
//! **Entry points.** Every `UPGRADE_NODES` operation — `nodePools.update` with `nodeVersion`,
//! `clusters.update` with `desiredNodeVersion` + `desiredNodePoolId` (gcloud `container clusters
//! upgrade C --node-pool P [--cluster-version V]`) — gets a [`Run`] when it starts
//! ([`attach`], called by `operations::start`). Other code (auto-upgrades) upgrades a pool the
//! same way with [`super::node_pools::start_node_upgrade`]. The operation's `done_at` is the time of the run's next
//! step; `operations::finish_until` calls [`step`] until the run is over, then ends the operation
//! as usual (the version patch on success), and [`ended`] tidies the pool.
//!
//! **SURGE** (`maxSurge`, `maxUnavailable`; GKE's defaults 1 and 0): zone by zone, each batch
//! takes `a` = min(`maxSurge`, old nodes left, VMs to be had) surge VMs — from the pool's
//! reservation (its free VMs) or from the zone's capacity ([`crate::capacity`]) — and replaces
//! `b` = min(`a + maxUnavailable`, old nodes left) old nodes, at most 20 at a time (GKE limits the
//! nodes upgraded at once to 20: "The maximum number of nodes upgraded simultaneously is limited
//! to 20", the `upgrade_settings` description of terraform-provider-google's
//! `google_container_node_pool`). A batch: the `a` surge nodes are created (Ready, with the new
//! kubelet) after `container.nodePool.upgrade.create`; then `b` old nodes are cordoned
//! (`spec.unschedulable`, taint `node.kubernetes.io/unschedulable:NoSchedule`), drained and
//! removed after `container.nodePool.upgrade.drain`; the `b - a` VMs so freed are recreated with
//! the new version after another `...create`. So with maxSurge=1/maxUnavailable=0 a 4-node pool
//! never has fewer than 4 Ready nodes, and with 0/1 never more than one node unavailable.
//! Behaviour short of VMs follows "Ensure resources for node upgrades"
//! (<https://cloud.google.com/kubernetes-engine/docs/how-to/node-upgrades-quota>): with fewer
//! surge VMs than `maxSurge` fewer nodes are upgraded at once; with none and `maxUnavailable` > 0
//! nodes are recreated in place; with none and `maxUnavailable` = 0 "the upgrade fails" — the
//! simulator keeps the operation RUNNING and retries every minute (as instance groups retry) until
//! the stockout wait (`CapacityConfig::stockout_wait_secs`) has passed since it started waiting,
//! then ends it DONE with the instance-group failure GKE reports for VMs it cannot create:
//! `GCE_STOCKOUT` from the zone (the text of [`super::node_pools::stockout_error`]) or, for a pool
//! consuming a reservation, `[CONDITION_NOT_MET]: Instance '<node>' creation failed: Specified
//! reservation '<value>' does not have available resources for the request.` (as in
//! [`super::reservations`]). Surge VMs are not checked against quotas (a simplification).
//!
//! **BLUE_GREEN** (`blueGreenSettings.standardRolloutPolicy` with `batchNodeCount` or
//! `batchPercentage`, `batchSoakDuration`, `nodePoolSoakDuration`;
//! <https://cloud.google.com/kubernetes-engine/docs/concepts/node-pool-upgrade-strategies#blue-green-upgrade-strategy>):
//! the whole green set is created first (it needs VMs for the whole pool, else it waits and fails
//! as above), then every blue node is cordoned, blue nodes are drained batch by batch with
//! `batchSoakDuration` after each, then the pool soaks `nodePoolSoakDuration` (one hour when
//! unset, GKE's documented default) and the blue nodes are deleted; the operation ends then. The
//! pool's `updateInfo.blueGreenInfo` shows the phase (`CREATING_GREEN_POOL`,
//! `DRAINING_BLUE_POOL`, `NODE_POOL_SOAKING`, `DELETING_BLUE_POOL`; the enum of the container v1
//! discovery document's `BlueGreenInfo`) and the green version. Simplified: one instance group per
//! zone holds blue and green nodes (GKE makes new instance groups), drained blue nodes stay (cordoned)
//! until the blue pool is deleted, a batch without a count or percentage is one node, and
//! the autoscaled rollout policy and rollback are not simulated.
//!
//! **What clients see.** The pool is `RECONCILING` while the operation runs (the `NodePool.status`
//! enum: "some work is actively being done on the node pool, such as upgrading node software"),
//! and its `version` stays the old one until the operation ends successfully (the simulator's
//! reading of "the version of Kubernetes running on this NodePool's nodes" for a pool of mixed
//! nodes; no capture of a running upgrade's pool was found); each Node object shows its own
//! `status.nodeInfo.kubeletVersion`. The operation carries `progress.metrics` `NODES_TOTAL`,
//! `NODES_FAILED`, `NODES_COMPLETE`, `NODES_DONE`, `NODE_PDB_DELAY_SECONDS` — the names public Go
//! code that tracks GKE upgrades reads from an `UPGRADE_NODES` `containerpb.Operation`'s
//! `progress.metrics` (found with the code search; its repository could not be identified), which
//! a public incident write-up also quotes ("0 out of 2 nodes complete and a
//! NODE_PDB_DELAY_SECONDS metric present"); the v1 discovery document's `OperationProgress` only
//! says metrics are name/value pairs such as "nodes done"/"nodes total". The operation's `detail`
//! reads `Updating P, done with 3 out of 8 nodes (37.5%): 1 being processed`, modelled on the
//! detail that code quotes (`... done with 18 out of 44 nodes (40.9%): 2 being processed, 6
//! succeeded`); not verified against a capture.
//!
//! **Failures.** A batch is where the instance groups create VMs, so that is where faults land:
//! a scripted fault of kind `container.nodePool`, verb `upgrade` fires on the Nth batch started
//! since the faults were set (`stockout`: `GCE_STOCKOUT`; `operation_error`: an internal error;
//! `quota_exceeded`: `GCE_QUOTA_EXCEEDED`; `{status, message}`: that message). A failure — a
//! fault, the capacity wait running out, a scripted failure of the update request itself (which
//! lands on the first batch), or a cancel — ends the operation DONE with the error; the nodes
//! already replaced keep the new version, the others the old one (a pool of mixed versions, as
//! GKE leaves it), surge nodes of an unfinished batch are removed, cordoned nodes uncordoned, and
//! the pool is `RUNNING_WITH_ERROR` (the enum's "partially usable ... may need to ... trigger a
//! new update") with `statusMessage` and `conditions`, its `version` unchanged. Everything is in
//! the operation and the pool, so a world saved midway (`--persist`) goes on where it stopped.
//!
//! **Settings** ([`check_settings`], on `nodePools.update` with `upgradeSettings` and on pool
//! create): negative `maxSurge`/`maxUnavailable`, both 0 for SURGE, a `batchPercentage` outside
//! (0, 1] (the discovery document's range), both `batchNodeCount` and `batchPercentage`, a
//! negative `batchNodeCount`, and durations that are not google-duration strings are 400
//! `INVALID_ARGUMENT`/`badRequest`. The texts are the simulator's own: no capture of GKE's was
//! found (gcloud refuses `--enable-surge-upgrade` with `--enable-blue-green-upgrade` itself:
//! `UpgradeSettings must contain only one of: --enable-surge-upgrade, --enable-blue-green-upgrade`,
//! `api_adapter.UpdateUpgradeSettings`).

use super::nodes::{node_prefix, node_specs};
use super::operations::{OpError, Operation};
use super::{NodePool, bad_request};
use crate::clock::SimTime;
use crate::compute::reservations as compute_reservations;
use crate::error::GcpResult;
use crate::faults::{FaultAction, NamedFault};
use crate::shared::Ctx;
pub use crate::state::container::{Phase, Run, Strategy};
use crate::world::World;
use rand::Rng;
use serde_json::{Value, json};
use std::collections::BTreeSet;

/// Latency key: a VM created and its node Ready.
pub const CREATE_KEY: &str = "container.nodePool.upgrade.create";
/// Latency key: a node cordoned, drained and deleted.
pub const DRAIN_KEY: &str = "container.nodePool.upgrade.drain";
/// How often a batch short of VMs asks again.
const RETRY_MS: u64 = 60_000;
/// GKE upgrades at most this many nodes at once.
const MAX_PARALLEL: u32 = 20;
/// `nodePoolSoakDuration` when unset.
const DEFAULT_POOL_SOAK_MS: u64 = 3_600_000;

/// Parses a google-duration (`"10s"`, `"1.5s"`) into milliseconds.
pub fn parse_duration(text: &str) -> Option<u64> {
    let number = text.strip_suffix('s')?;
    if number.is_empty() || number.starts_with('-') || number.starts_with('+') {
        return None;
    }
    let secs: f64 = number.parse().ok()?;
    (secs.is_finite() && secs >= 0.0).then(|| (secs * 1000.0).round() as u64)
}

fn int(value: &Value) -> Option<i64> {
    value
        .as_i64()
        .or_else(|| value.as_str().and_then(|s| s.parse().ok()))
}

/// Checks `upgradeSettings` as GKE does (texts the simulator's own, see the module doc).
pub fn check_settings(settings: &Value) -> GcpResult<()> {
    if settings.is_null() {
        return Ok(());
    }
    let surge = int(&settings["maxSurge"]).unwrap_or(0);
    let unavailable = int(&settings["maxUnavailable"]).unwrap_or(0);
    if surge < 0 {
        return Err(bad_request(format!(
            "upgrade_settings.max_surge must be non-negative, got {surge}."
        )));
    }
    if unavailable < 0 {
        return Err(bad_request(format!(
            "upgrade_settings.max_unavailable must be non-negative, got {unavailable}."
        )));
    }
    let strategy = settings["strategy"].as_str().unwrap_or("SURGE");
    if strategy != "BLUE_GREEN" && surge == 0 && unavailable == 0 {
        return Err(bad_request(
            "upgrade_settings.max_surge and upgrade_settings.max_unavailable cannot both be 0.",
        ));
    }
    let blue_green = &settings["blueGreenSettings"];
    let policy = &blue_green["standardRolloutPolicy"];
    let count = &policy["batchNodeCount"];
    let percentage = &policy["batchPercentage"];
    if !count.is_null() && !percentage.is_null() {
        return Err(bad_request(
            "Only one of batch_percentage and batch_node_count can be set in \
             upgrade_settings.blue_green_settings.standard_rollout_policy.",
        ));
    }
    if int(count).is_some_and(|n| n < 0) {
        return Err(bad_request(
            "upgrade_settings.blue_green_settings.standard_rollout_policy.batch_node_count must \
             be non-negative.",
        ));
    }
    if let Some(p) = percentage.as_f64()
        && !(p > 0.0 && p <= 1.0)
    {
        return Err(bad_request(format!(
            "upgrade_settings.blue_green_settings.standard_rollout_policy.batch_percentage must \
             be in (0.0, 1.0], got {p}."
        )));
    }
    for (value, field) in [
        (
            &policy["batchSoakDuration"],
            "standard_rollout_policy.batch_soak_duration",
        ),
        (
            &blue_green["nodePoolSoakDuration"],
            "node_pool_soak_duration",
        ),
    ] {
        if let Some(text) = value.as_str()
            && parse_duration(text).is_none()
        {
            return Err(bad_request(format!(
                "Invalid value for upgrade_settings.blue_green_settings.{field}: \"{text}\"."
            )));
        }
    }
    Ok(())
}

/// The strategy a pool's settings ask for, for a pool of `nodes` nodes.
pub fn strategy_of(settings: &Value, nodes: u32) -> Strategy {
    if settings.is_null() {
        return Strategy::Surge {
            max_surge: 1,
            max_unavailable: 0,
        };
    }
    let clamp = |v: &Value| int(v).unwrap_or(0).clamp(0, i64::from(u32::MAX)) as u32;
    if settings["strategy"] == json!("BLUE_GREEN") {
        let blue_green = &settings["blueGreenSettings"];
        let policy = &blue_green["standardRolloutPolicy"];
        let batch = match (
            int(&policy["batchNodeCount"]),
            policy["batchPercentage"].as_f64(),
        ) {
            (Some(n), _) if n > 0 => n.min(i64::from(u32::MAX)) as u32,
            (_, Some(p)) if p > 0.0 => ((f64::from(nodes) * p).ceil() as u32).max(1),
            _ => 1,
        };
        let ms = |v: &Value| v.as_str().and_then(parse_duration);
        return Strategy::BlueGreen {
            batch,
            batch_soak_ms: ms(&policy["batchSoakDuration"]).unwrap_or(0),
            pool_soak_ms: ms(&blue_green["nodePoolSoakDuration"]).unwrap_or(DEFAULT_POOL_SOAK_MS),
        };
    }
    Strategy::Surge {
        max_surge: clamp(&settings["maxSurge"]),
        max_unavailable: clamp(&settings["maxUnavailable"]),
    }
}

/// Gives a starting `UPGRADE_NODES` operation its run: the first step is due at once.
pub fn attach(world: &World, op: &mut Operation) {
    let super::operations::Effect::UpdateNodePool { pool, patch } = &op.effect else {
        return;
    };
    let Some(version) = patch["version"].as_str() else {
        return;
    };
    let Some(p) = world
        .container
        .clusters
        .get(&op.cluster_key)
        .and_then(|c| c.pool(pool))
    else {
        return;
    };
    let total = p.total_nodes();
    op.upgrade = Some(Run {
        pool: pool.clone(),
        version: version.to_string(),
        strategy: strategy_of(&p.resource["upgradeSettings"], total),
        total,
        done: 0,
        phase: Phase::Start,
        zone: String::new(),
        batch: vec![],
        vms: 0,
        wanted: 0,
        fresh: BTreeSet::new(),
        deadline: None,
    });
    op.done_at = op.start;
}

/// Whether operation `op` is an upgrade with steps left.
pub fn in_progress(op: &Operation) -> bool {
    op.upgrade.as_ref().is_some_and(|r| r.phase != Phase::Done)
}

/// Node names of a pool, per zone in order.
fn names(cluster: &str, pool: &NodePool) -> Vec<(String, String)> {
    let prefix = node_prefix(cluster, &pool.name);
    let prefix = &prefix;
    pool.groups
        .iter()
        .flat_map(|(zone, g)| {
            g.suffixes
                .iter()
                .map(move |s| (zone.clone(), format!("{prefix}-{}-{s}", g.hash)))
        })
        .collect()
}

/// The run's context: cluster name and a mutable pool.
struct Place<'a> {
    world: &'a mut World,
    key: String,
}

impl Place<'_> {
    fn pool(&mut self, name: &str) -> Option<&mut NodePool> {
        self.world
            .container
            .clusters
            .get_mut(&self.key)
            .and_then(|c| c.pool_mut(name))
    }

    fn cluster_name(&self) -> String {
        self.world
            .container
            .clusters
            .get(&self.key)
            .map(|c| c.name.clone())
            .unwrap_or_default()
    }

    /// Tells the Kubernetes side about the pool's nodes as they are at `at`.
    fn publish(&mut self, pool_name: &str, at: SimTime) {
        let cluster_name = self.cluster_name();
        super::node_addresses::assign(self.world, &self.key, pool_name);
        let Some(pool) = self
            .world
            .container
            .clusters
            .get(&self.key)
            .and_then(|c| c.pool(pool_name))
        else {
            return;
        };
        let nodes = node_specs(&cluster_name, pool);
        self.world
            .kube
            .set_pool_nodes(&self.key, pool_name, nodes, at);
    }

    /// Adds `n` nodes of `version` in `zone`; returns their names.
    fn add_nodes(&mut self, pool_name: &str, zone: &str, n: u32, version: &str) -> Vec<String> {
        let cluster_name = self.cluster_name();
        let mut added = vec![];
        for _ in 0..n {
            let Some(pool) = self
                .world
                .container
                .clusters
                .get(&self.key)
                .and_then(|c| c.pool(pool_name))
            else {
                return added;
            };
            let Some(group) = pool.groups.get(zone) else {
                return added;
            };
            let hash = group.hash.clone();
            let taken: BTreeSet<String> = group.suffixes.iter().cloned().collect();
            let suffix = loop {
                let s: String = (0..4)
                    .map(|_| {
                        let n = self.world.rng.random_range(0..36u32);
                        char::from_digit(n, 36).unwrap_or('a')
                    })
                    .collect();
                if !taken.contains(&s) {
                    break s;
                }
            };
            let name = format!("{}-{hash}-{suffix}", node_prefix(&cluster_name, pool_name));
            if let Some(pool) = self.pool(pool_name) {
                if let Some(group) = pool.groups.get_mut(zone) {
                    group.suffixes.push(suffix);
                }
                pool.node_versions.insert(name.clone(), version.to_string());
            }
            added.push(name);
        }
        added
    }

    /// Removes the named nodes (and what they held).
    fn remove_nodes(&mut self, pool_name: &str, nodes: &[String]) {
        let cluster_name = self.cluster_name();
        let Some(pool) = self.pool(pool_name) else {
            return;
        };
        let prefix = node_prefix(&cluster_name, pool_name);
        for group in pool.groups.values_mut() {
            let hash = group.hash.clone();
            group
                .suffixes
                .retain(|s| !nodes.contains(&format!("{prefix}-{hash}-{s}")));
        }
        for node in nodes {
            pool.node_versions.remove(node);
            pool.cordoned.remove(node);
        }
    }
}

/// VMs the pool's group in `zone` can get beyond what it holds, up to `want`; books them.
fn book(world: &mut World, cx: &Ctx, key: &str, pool_name: &str, zone: &str, want: u32) -> u32 {
    if want == 0 {
        return 0;
    }
    let Some(pool) = world
        .container
        .clusters
        .get(key)
        .and_then(|c| c.pool(pool_name))
    else {
        return 0;
    };
    if let Some(held) = pool.reserved.get(zone).cloned() {
        let free = compute_reservations::find(&world.compute, &held.reservation)
            .filter(|r| r.id == held.id && r.status == "READY")
            .map_or(0, |r| r.free);
        let take = want.min(u32::try_from(free).unwrap_or(u32::MAX));
        if take > 0 {
            compute_reservations::add_in_use(
                &mut world.compute,
                &held.reservation,
                &held.id,
                i64::from(take),
            );
            if let Some(r) = world
                .container
                .clusters
                .get_mut(key)
                .and_then(|c| c.pool_mut(pool_name))
                .and_then(|p| p.reserved.get_mut(zone))
            {
                r.count += take;
            }
        }
        return take;
    }
    let held = pool.held_in(zone);
    super::capacity::take_from_zone(world, cx.capacity, (key, pool_name), zone, held, want)
}

/// Gives back `n` VMs of the group in `zone` (nodes deleted).
fn release(world: &mut World, key: &str, pool_name: &str, zone: &str, n: u32) {
    let Some(pool) = world
        .container
        .clusters
        .get_mut(key)
        .and_then(|c| c.pool_mut(pool_name))
    else {
        return;
    };
    if let Some(r) = pool.reserved.get_mut(zone) {
        let back = n.min(r.count);
        r.count -= back;
        let (path, id) = (r.reservation.clone(), r.id.clone());
        compute_reservations::add_in_use(&mut world.compute, &path, &id, -i64::from(back));
        return;
    }
    if pool.reserved.is_empty() {
        let held = pool.held_in(zone);
        pool.granted
            .insert(zone.to_string(), held.saturating_sub(n));
    }
}

/// The failure a scripted `upgrade` fault on a batch asks for, if any.
fn batch_fault(cx: &Ctx, project: &str, zone: &str, node: &str, vms: u32) -> Option<OpError> {
    let action = cx.faults.lock().scripted("container.nodePool", "upgrade")?;
    match action {
        FaultAction::Named(NamedFault::DropBefore | NamedFault::DropAfter) => None,
        FaultAction::Named(NamedFault::Stockout) => Some(super::node_pools::stockout_error(
            project,
            zone,
            node,
            u64::from(vms.max(1)),
            0,
            &crate::capacity::go_duration(cx.capacity.stockout_wait_secs),
        )),
        FaultAction::Named(NamedFault::QuotaExceeded) => Some(OpError {
            code: 8,
            canonical: "RESOURCE_EXHAUSTED".into(),
            message: format!(
                "Google Compute Engine: Not all instances running in IGM after {}. Expected {n}, \
                 running 0, transitioning {n}. Current errors: [GCE_QUOTA_EXCEEDED]: Instance \
                 '{node}' creation failed: Quota 'CPUS' exceeded.  Limit: 0.0 in region {}.",
                crate::capacity::go_duration(cx.capacity.stockout_wait_secs),
                super::region_of(zone),
                n = vms.max(1),
            ),
            condition: "GCE_QUOTA_EXCEEDED".into(),
        }),
        FaultAction::Named(NamedFault::OperationError) => Some(OpError {
            code: 13,
            canonical: "INTERNAL".into(),
            message: "Internal error. Please try again or contact Google Support.".into(),
            condition: "UNKNOWN".into(),
        }),
        FaultAction::Http {
            status, message, ..
        } => {
            let e = super::http_fault(status, "", &message);
            Some(OpError {
                code: grpc_code(e.status),
                canonical: e.status.to_string(),
                message,
                condition: "UNKNOWN".into(),
            })
        }
    }
}

fn grpc_code(canonical: &str) -> i32 {
    match canonical {
        "INVALID_ARGUMENT" => 3,
        "NOT_FOUND" => 5,
        "ALREADY_EXISTS" => 6,
        "PERMISSION_DENIED" => 7,
        "RESOURCE_EXHAUSTED" => 8,
        "FAILED_PRECONDITION" => 9,
        "ABORTED" => 10,
        "UNIMPLEMENTED" => 12,
        "INTERNAL" => 13,
        "UNAVAILABLE" => 14,
        "UNAUTHENTICATED" => 16,
        "DEADLINE_EXCEEDED" => 4,
        _ => 2,
    }
}

/// The failure of a batch that waited in vain for `want` VMs (it got `got`).
fn short_of_vms(
    world: &World,
    cx: &Ctx,
    key: &str,
    pool: &NodePool,
    zone: &str,
    want: u32,
    got: u32,
) -> OpError {
    let cluster = world.container.clusters.get(key);
    let project = cluster.map(|c| c.project.clone()).unwrap_or_default();
    let cluster_name = cluster.map(|c| c.name.clone()).unwrap_or_default();
    let hash = pool
        .groups
        .get(zone)
        .map(|g| g.hash.clone())
        .unwrap_or_default();
    let node = format!(
        "{}-{hash}-{:04}",
        node_prefix(&cluster_name, &pool.name),
        pool.groups.get(zone).map_or(0, |g| g.suffixes.len()) + 1
    );
    let after = crate::capacity::go_duration(cx.capacity.stockout_wait_secs);
    if pool.reserved.is_empty() {
        return super::node_pools::stockout_error(
            &project,
            zone,
            &node,
            u64::from(want),
            u64::from(got),
            &after,
        );
    }
    let value = super::string_list(&pool.resource["config"]["reservationAffinity"]["values"])
        .into_iter()
        .next()
        .unwrap_or_default();
    OpError {
        code: 9,
        canonical: "FAILED_PRECONDITION".into(),
        message: format!(
            "Google Compute Engine: Not all instances running in IGM after {after}. Expected \
             {want}, running {got}, transitioning {}. Current errors: [CONDITION_NOT_MET]: \
             Instance '{node}' creation failed: Specified reservation '{value}' does not have \
             available resources for the request.",
            want.saturating_sub(got)
        ),
        condition: "UNKNOWN".into(),
    }
}

/// Carries out the due step of the upgrade in operation `index`, at its `done_at`.
/// An upgrade short of VMs in `zone` (`got` of the `need` it asked for) waits for capacity,
/// asking again every minute, until the stockout wait that started with its first try runs out;
/// then it fails with the instance groups' error. The time of the next try, or the failure.
fn wait_for_vms(
    world: &World,
    cx: &Ctx,
    run: &mut Run,
    at: SimTime,
    (key, pool_name): (&str, &str),
    zone: &str,
    (need, got): (u32, u32),
) -> (SimTime, Option<OpError>) {
    let deadline = *run
        .deadline
        .get_or_insert(at.plus_ms(cx.capacity.wait_ms()));
    if at < deadline {
        return (at.plus_ms(RETRY_MS).min(deadline), None);
    }
    let pool = world
        .container
        .clusters
        .get(key)
        .and_then(|c| c.pool(pool_name))
        .cloned();
    let error = pool.map(|p| short_of_vms(world, cx, key, &p, zone, need, got));
    (at, error)
}

pub fn step(world: &mut World, cx: &Ctx, index: usize) {
    let op = world.container.operations[index].clone();
    let Some(mut run) = op.upgrade.clone() else {
        return;
    };
    let at = op.done_at;
    let key = op.cluster_key.clone();
    let pool_exists = world
        .container
        .clusters
        .get(&key)
        .and_then(|c| c.pool(&run.pool))
        .is_some();
    let mut failure = None;
    let mut next = at;
    if !pool_exists {
        run.phase = Phase::Done;
    } else if op.failure.is_some() {
        // Failed when requested: the first batch fails, nothing is replaced.
        run.phase = Phase::Done;
    } else {
        match run.strategy.clone() {
            Strategy::Surge {
                max_surge,
                max_unavailable,
            } => {
                (next, failure) =
                    surge_step(world, cx, &key, &mut run, at, max_surge, max_unavailable)
            }
            Strategy::BlueGreen {
                batch,
                batch_soak_ms,
                pool_soak_ms,
            } => {
                (next, failure) = blue_green_step(
                    world,
                    cx,
                    &key,
                    &mut run,
                    at,
                    batch,
                    batch_soak_ms,
                    pool_soak_ms,
                )
            }
        }
    }
    if failure.is_some() {
        run.phase = Phase::Done;
    }
    let blue_green = match run.phase {
        Phase::CreatingGreen => Some("CREATING_GREEN_POOL"),
        Phase::DrainingBlue => Some("DRAINING_BLUE_POOL"),
        Phase::PoolSoaking => Some("NODE_POOL_SOAKING"),
        Phase::DeletingBlue => Some("DELETING_BLUE_POOL"),
        _ => None,
    };
    if let Some(p) = world
        .container
        .clusters
        .get_mut(&key)
        .and_then(|c| c.pool_mut(&run.pool))
    {
        match blue_green {
            Some(phase) => {
                p.resource["updateInfo"] = json!({"blueGreenInfo": {
                    "phase": phase,
                    "greenPoolVersion": run.version,
                    "blueInstanceGroupUrls": p.resource["instanceGroupUrls"],
                    "greenInstanceGroupUrls": p.resource["instanceGroupUrls"],
                }});
            }
            None => {
                if let Some(obj) = p.resource.as_object_mut() {
                    obj.remove("updateInfo");
                }
            }
        }
    }
    let stored = &mut world.container.operations[index];
    if let Some(error) = failure
        && stored.failure.is_none()
    {
        stored.failure = Some(error);
    }
    stored.done_at = next;
    stored.upgrade = Some(run);
}

/// The old nodes (not made by this run) of the pool, per zone in order.
fn old_nodes(world: &World, key: &str, run: &Run) -> Vec<(String, String)> {
    let Some(cluster) = world.container.clusters.get(key) else {
        return vec![];
    };
    let Some(pool) = cluster.pool(&run.pool) else {
        return vec![];
    };
    names(&cluster.name, pool)
        .into_iter()
        .filter(|(_, n)| !run.fresh.contains(n))
        .collect()
}

/// A surge upgrade's step at `at`: returns when the next is due, or a failure.
fn surge_step(
    world: &mut World,
    cx: &Ctx,
    key: &str,
    run: &mut Run,
    at: SimTime,
    max_surge: u32,
    max_unavailable: u32,
) -> (SimTime, Option<OpError>) {
    let pool_name = run.pool.clone();
    match run.phase {
        Phase::Start => {
            let old = old_nodes(world, key, run);
            let Some((zone, _)) = old.first().cloned() else {
                run.phase = Phase::Done;
                return (at, None);
            };
            let in_zone: Vec<String> = old
                .iter()
                .filter(|(z, _)| *z == zone)
                .map(|(_, n)| n.clone())
                .collect();
            let left = in_zone.len() as u32;
            let want = max_surge.min(left).min(MAX_PARALLEL);
            let project = world
                .container
                .clusters
                .get(key)
                .map(|c| c.project.clone())
                .unwrap_or_default();
            if run.deadline.is_none()
                && let Some(error) = batch_fault(cx, &project, &zone, &in_zone[0], want)
            {
                return (at, Some(error));
            }
            let got = book(world, cx, key, &pool_name, &zone, want);
            let parallel = (got + max_unavailable).min(left).min(MAX_PARALLEL);
            if parallel == 0 {
                // No surge VM and no node may go: wait for capacity, then fail.
                run.wanted = want;
                return wait_for_vms(world, cx, run, at, (key, &pool_name), &zone, (want, 0));
            }
            run.deadline = None;
            run.zone = zone;
            run.batch = in_zone.into_iter().take(parallel as usize).collect();
            run.vms = got;
            if got > 0 {
                run.phase = Phase::Surging;
                let ms = world.duration_ms(cx, CREATE_KEY);
                (at.plus_ms(ms), None)
            } else {
                cordon_batch(world, key, run, at);
                run.phase = Phase::Draining;
                let ms = world.duration_ms(cx, DRAIN_KEY);
                (at.plus_ms(ms), None)
            }
        }
        Phase::Surging => {
            let mut place = Place {
                world,
                key: key.to_string(),
            };
            let zone = run.zone.clone();
            let added = place.add_nodes(&pool_name, &zone, run.vms, &run.version);
            run.fresh.extend(added);
            place.publish(&pool_name, at);
            cordon_batch(world, key, run, at);
            run.phase = Phase::Draining;
            let ms = world.duration_ms(cx, DRAIN_KEY);
            (at.plus_ms(ms), None)
        }
        Phase::Draining => {
            let batch = std::mem::take(&mut run.batch);
            let removed = batch.len() as u32;
            let recreate = removed.saturating_sub(run.vms);
            let mut place = Place {
                world,
                key: key.to_string(),
            };
            place.remove_nodes(&pool_name, &batch);
            place.publish(&pool_name, at);
            // The deleted nodes' VMs: as many as were surged go back, the rest are recreated.
            release(world, key, &pool_name, &run.zone, removed - recreate);
            run.done += removed;
            run.vms = 0;
            if recreate > 0 {
                run.wanted = recreate;
                run.phase = Phase::Recreating;
                let ms = world.duration_ms(cx, CREATE_KEY);
                (at.plus_ms(ms), None)
            } else {
                run.phase = Phase::Start;
                (at, None)
            }
        }
        Phase::Recreating => {
            let mut place = Place {
                world,
                key: key.to_string(),
            };
            let zone = run.zone.clone();
            let added = place.add_nodes(&pool_name, &zone, run.wanted, &run.version);
            run.fresh.extend(added);
            place.publish(&pool_name, at);
            run.wanted = 0;
            run.phase = Phase::Start;
            (at, None)
        }
        _ => {
            run.phase = Phase::Done;
            (at, None)
        }
    }
}

/// Cordons the old nodes of the current batch.
fn cordon_batch(world: &mut World, key: &str, run: &Run, at: SimTime) {
    let mut place = Place {
        world,
        key: key.to_string(),
    };
    if let Some(pool) = place.pool(&run.pool) {
        pool.cordoned.extend(run.batch.iter().cloned());
    }
    place.publish(&run.pool, at);
}

/// A blue-green upgrade's step at `at`.
#[allow(clippy::too_many_arguments)]
fn blue_green_step(
    world: &mut World,
    cx: &Ctx,
    key: &str,
    run: &mut Run,
    at: SimTime,
    batch: u32,
    batch_soak_ms: u64,
    pool_soak_ms: u64,
) -> (SimTime, Option<OpError>) {
    let pool_name = run.pool.clone();
    match run.phase {
        Phase::Start => {
            // Green VMs for every blue node, zone by zone; short: wait, then fail.
            let old = old_nodes(world, key, run);
            if old.is_empty() {
                run.phase = Phase::Done;
                return (at, None);
            }
            let project = world
                .container
                .clusters
                .get(key)
                .map(|c| c.project.clone())
                .unwrap_or_default();
            if run.deadline.is_none()
                && let Some(error) =
                    batch_fault(cx, &project, &old[0].0, &old[0].1, old.len() as u32)
            {
                return (at, Some(error));
            }
            let zones: BTreeSet<String> = old.iter().map(|(z, _)| z.clone()).collect();
            let mut short: Option<(String, u32, u32)> = None;
            for zone in &zones {
                let need = old.iter().filter(|(z, _)| z == zone).count() as u32;
                let have = world
                    .container
                    .clusters
                    .get(key)
                    .and_then(|c| c.pool(&pool_name))
                    .map_or(0, |p| held(p, zone))
                    .saturating_sub(old.iter().filter(|(z, _)| z == zone).count() as u32);
                let got = have + book(world, cx, key, &pool_name, zone, need.saturating_sub(have));
                if got < need && short.is_none() {
                    short = Some((zone.clone(), need, got));
                }
            }
            match short {
                None => {
                    run.deadline = None;
                    run.phase = Phase::CreatingGreen;
                    let ms = world.duration_ms(cx, CREATE_KEY);
                    (at.plus_ms(ms), None)
                }
                Some((zone, need, got)) => {
                    wait_for_vms(world, cx, run, at, (key, &pool_name), &zone, (need, got))
                }
            }
        }
        Phase::CreatingGreen => {
            let old = old_nodes(world, key, run);
            let mut place = Place {
                world,
                key: key.to_string(),
            };
            let zones: BTreeSet<String> = old.iter().map(|(z, _)| z.clone()).collect();
            for zone in zones {
                let n = old.iter().filter(|(z, _)| *z == zone).count() as u32;
                let added = place.add_nodes(&pool_name, &zone, n, &run.version);
                run.fresh.extend(added);
            }
            // Every blue node is cordoned.
            let blue: Vec<String> = old.into_iter().map(|(_, n)| n).collect();
            if let Some(pool) = place.pool(&pool_name) {
                pool.cordoned.extend(blue.iter().cloned());
            }
            place.publish(&pool_name, at);
            run.batch = blue;
            run.phase = Phase::DrainingBlue;
            let ms = world.duration_ms(cx, DRAIN_KEY);
            (at.plus_ms(ms), None)
        }
        Phase::DrainingBlue => {
            // A batch drained (blue nodes stay, cordoned, until the pool is deleted).
            run.done = (run.done + batch.max(1)).min(run.total);
            if run.done < run.total {
                let ms = world.duration_ms(cx, DRAIN_KEY);
                (at.plus_ms(batch_soak_ms + ms), None)
            } else {
                run.phase = Phase::PoolSoaking;
                (at.plus_ms(batch_soak_ms + pool_soak_ms), None)
            }
        }
        Phase::PoolSoaking => {
            run.phase = Phase::DeletingBlue;
            let ms = world.duration_ms(cx, DRAIN_KEY);
            (at.plus_ms(ms), None)
        }
        Phase::DeletingBlue => {
            let blue = std::mem::take(&mut run.batch);
            let zones: Vec<(String, u32)> = {
                let old = old_nodes(world, key, run);
                let set: BTreeSet<String> = old.iter().map(|(z, _)| z.clone()).collect();
                set.into_iter()
                    .map(|z| {
                        let n = old.iter().filter(|(zz, _)| *zz == z).count() as u32;
                        (z, n)
                    })
                    .collect()
            };
            let mut place = Place {
                world,
                key: key.to_string(),
            };
            place.remove_nodes(&pool_name, &blue);
            place.publish(&pool_name, at);
            for (zone, n) in zones {
                release(world, key, &pool_name, &zone, n);
            }
            run.phase = Phase::Done;
            (at, None)
        }
        _ => {
            run.phase = Phase::Done;
            (at, None)
        }
    }
}

/// VMs the group in `zone` holds: the reservation's count, else its grant.
fn held(pool: &NodePool, zone: &str) -> u32 {
    match pool.reserved.get(zone) {
        Some(r) => r.count,
        None => pool.held_in(zone),
    }
}

/// After the operation of an upgrade ended (its effect or failure applied): on success every
/// node has the pool's version; on failure the pool keeps its mixed nodes, an unfinished batch
/// undone, and is `RUNNING_WITH_ERROR`.
pub fn ended(world: &mut World, cx: &Ctx, key: &str, op: &Operation, error: Option<&OpError>) {
    let Some(run) = &op.upgrade else {
        return;
    };
    let at = op.end.unwrap_or(cx.now);
    let Some(cluster) = world.container.clusters.get_mut(key) else {
        return;
    };
    let cluster_name = cluster.name.clone();
    let Some(pool) = cluster.pool_mut(&run.pool) else {
        return;
    };
    if let Some(obj) = pool.resource.as_object_mut() {
        obj.remove("updateInfo");
    }
    match error {
        None => {
            pool.node_versions.clear();
            pool.cordoned.clear();
            // A pool a failed upgrade left RUNNING_WITH_ERROR is whole again.
            if let Some(obj) = pool.resource.as_object_mut() {
                obj.remove("statusMessage");
                obj.remove("conditions");
            }
        }
        Some(error) => {
            // Undo the batch in flight: surplus nodes go (cordoned old ones first), the rest
            // are uncordoned.
            let per_zone = pool.node_count as usize;
            let cordoned = pool.cordoned.clone();
            let prefix = node_prefix(&cluster_name, &pool.name);
            for group in pool.groups.values_mut() {
                while group.suffixes.len() > per_zone {
                    let hash = group.hash.clone();
                    let name = |s: &String| format!("{prefix}-{hash}-{s}");
                    let index = group
                        .suffixes
                        .iter()
                        .position(|s| cordoned.contains(&name(s)))
                        .unwrap_or(group.suffixes.len() - 1);
                    let gone = group.suffixes.remove(index);
                    pool.node_versions.remove(&name(&gone));
                }
            }
            pool.cordoned.clear();
            let version = pool.resource["version"].clone();
            pool.node_versions.retain(|_, v| json!(v) != version);
            pool.set_status("RUNNING_WITH_ERROR");
            pool.resource["statusMessage"] = json!(error.message);
            pool.resource["conditions"] = json!([{
                "code": error.condition,
                "message": error.message,
                "canonicalCode": error.canonical,
            }]);
            pool.generation += 1;
        }
    }
    super::node_addresses::assign(world, key, &run.pool);
    let Some(pool) = world
        .container
        .clusters
        .get(key)
        .and_then(|c| c.pool(&run.pool))
    else {
        return;
    };
    let nodes = node_specs(&cluster_name, pool);
    world.kube.set_pool_nodes(key, &run.pool, nodes, at);
}

/// `progress` and `detail` of an upgrade operation.
pub fn progress(op: &Operation) -> Option<(Value, String)> {
    let run = op.upgrade.as_ref()?;
    let metric = |name: &str, v: u32| json!({"name": name, "intValue": v.to_string()});
    let failed = u32::from(op.error.is_some() && run.done < run.total);
    let metrics = json!([
        metric("NODES_TOTAL", run.total),
        metric("NODES_FAILED", failed),
        metric("NODES_COMPLETE", run.done),
        metric("NODES_DONE", run.done),
        metric("NODE_PDB_DELAY_SECONDS", 0),
    ]);
    let processing = run.batch.len().max(run.wanted as usize);
    let pct = if run.total == 0 {
        100.0
    } else {
        f64::from(run.done) * 100.0 / f64::from(run.total)
    };
    let detail = format!(
        "Updating {}, done with {} out of {} nodes ({pct:.1}%): {processing} being processed",
        run.pool, run.done, run.total
    );
    Some((json!({ "metrics": metrics }), detail))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_and_settings() {
        assert_eq!(parse_duration("10s"), Some(10_000));
        assert_eq!(parse_duration("1.5s"), Some(1_500));
        assert_eq!(parse_duration("10"), None);
        assert_eq!(parse_duration("-1s"), None);
        assert!(check_settings(&json!({"maxSurge": 1})).is_ok());
        let both = check_settings(&json!({"maxSurge": 0, "maxUnavailable": 0})).unwrap_err();
        assert!(
            both.message.contains("cannot both be 0"),
            "{}",
            both.message
        );
        assert!(check_settings(&json!({"maxSurge": -1, "maxUnavailable": 1})).is_err());
        let bg = |policy: Value| json!({"strategy": "BLUE_GREEN", "blueGreenSettings": {"standardRolloutPolicy": policy}});
        assert!(
            check_settings(&bg(
                json!({"batchNodeCount": 1, "batchSoakDuration": "10s"})
            ))
            .is_ok()
        );
        assert!(check_settings(&bg(json!({"batchNodeCount": 1, "batchPercentage": 0.5}))).is_err());
        assert!(check_settings(&bg(json!({"batchPercentage": 1.5}))).is_err());
        assert!(check_settings(&bg(json!({"batchSoakDuration": "ten"}))).is_err());
        assert_eq!(
            strategy_of(&bg(json!({"batchPercentage": 0.25})), 8),
            Strategy::BlueGreen {
                batch: 2,
                batch_soak_ms: 0,
                pool_soak_ms: DEFAULT_POOL_SOAK_MS
            }
        );
        assert_eq!(
            strategy_of(&Value::Null, 4),
            Strategy::Surge {
                max_surge: 1,
                max_unavailable: 0
            }
        );
    }
}
