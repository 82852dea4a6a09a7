//! GKE operations: starting one for a mutation, finishing it when its time has come (applying its
//! effect, or its scripted failure), and the `operations.get/list/cancel` methods.

use super::{capacity, enum_tables, node_pools, not_found, reservations, self_link};
use crate::clock::SimTime;
use crate::error::{GcpError, GcpResult};
use crate::http::{self, Query};
use crate::kube;
use crate::shared::Ctx;
use crate::shared::Shared;
pub use crate::state::container::{Effect, OpError, Operation};
use crate::world::World;
use axum::extract::{Path, State};
use axum::response::Response;
use serde_json::{Value, json};
use std::sync::Arc;

/// Starts an operation and returns it as the API shows it.
#[allow(clippy::too_many_arguments)]
pub fn start(
    world: &mut World,
    cx: &Ctx,
    project: &str,
    location: &str,
    op_type: &str,
    target: String,
    effect: Effect,
    latency_key: &str,
    failure: Option<OpError>,
) -> Value {
    let millis = world.instant(cx.now).timestamp_millis();
    let name = format!(
        "operation-{millis}-{}-{}-{}-{}-{}",
        world.hex(8),
        world.hex(4),
        world.hex(4),
        world.hex(4),
        world.hex(12)
    );
    let duration = world.duration_ms(cx, latency_key);
    let cluster_key = target
        .split("/nodePools/")
        .next()
        .unwrap_or(&target)
        .to_string();
    let op = Operation {
        name,
        project: project.to_string(),
        location: location.to_string(),
        op_type: op_type.to_string(),
        status: "RUNNING".to_string(),
        target,
        cluster_key,
        start: cx.now,
        done_at: cx.now.plus_ms(duration),
        end: None,
        effect,
        failure,
        error: None,
        keeps_nodes: false,
        capacity_deadline: None,
        waiting: false,
        upgrade: None,
    };
    let mut op = op;
    igm_wait(world, cx, &mut op);
    if op.op_type == "UPGRADE_NODES" {
        super::upgrades::attach(world, &mut op);
    }
    let out = to_json(world, &op, cx.now);
    world.container.operations.push(op);
    out
}

/// Makes the operation `op` (as [`start`] returned it) end with `error` — a reservation that had too
/// few VMs left, found when it started — unless it already fails for a scripted fault; the nodes
/// the reservation gave stay.
pub fn fail_later(world: &mut World, cx: &Ctx, op: &Value, error: OpError) {
    let name = op["name"].as_str().unwrap_or("");
    let Some(index) = world
        .container
        .operations
        .iter()
        .position(|o| o.name == name)
    else {
        return;
    };
    let mut stored = world.container.operations[index].clone();
    if stored.failure.is_none() {
        stored.failure = Some(error);
        stored.keeps_nodes = true;
        igm_wait(world, cx, &mut stored);
        world.container.operations[index] = stored;
    }
}

/// Makes the operation `op` (as [`start`] returned it), whose VMs did not all fit their zones'
/// capacity, wait for more until the configured stockout wait has passed since it started —
/// unless it already fails for another reason.
pub fn wait_for_capacity(world: &mut World, cx: &Ctx, op: &Value) {
    let name = op["name"].as_str().unwrap_or("");
    let wait = cx.capacity.wait_ms();
    if let Some(stored) = world
        .container
        .operations
        .iter_mut()
        .find(|o| o.name == name)
        && stored.failure.is_none()
    {
        stored.capacity_deadline = Some(stored.start.plus_ms(wait));
    }
}

/// Makes the operation `op` (as [`start`] returned it) end with `error` — found when it started,
/// such as VMs the project has no quota for — unless it already fails; nothing it was to create
/// is kept.
pub fn fail_at_end(world: &mut World, cx: &Ctx, op: &Value, error: OpError) {
    let name = op["name"].as_str().unwrap_or("");
    let Some(index) = world
        .container
        .operations
        .iter()
        .position(|o| o.name == name)
    else {
        return;
    };
    let mut stored = world.container.operations[index].clone();
    if stored.failure.is_none() {
        stored.failure = Some(error);
        igm_wait(world, cx, &mut stored);
        world.container.operations[index] = stored;
    }
}

/// Stands for the duration in GKE's instance-group failure (`Not all instances running in IGM
/// after <duration>. Expected …`) until the operation ends; it is then replaced with how long the
/// operation ran, so the message and the operation's own start and end times agree.
pub const IGM_AFTER: &str = "{igm-after}";

/// An operation that is to fail with GKE's instance-group failure runs at least as long as the
/// instance groups keep trying (latency key `container.nodePool.igmWait`, 35m4s by default; zero
/// in the `zero` profile).
fn igm_wait(world: &mut World, cx: &Ctx, op: &mut Operation) {
    if op
        .failure
        .as_ref()
        .is_some_and(|f| f.message.contains(IGM_AFTER))
    {
        let wait = op
            .start
            .plus_ms(world.duration_ms(cx, "container.nodePool.igmWait"));
        if wait > op.done_at {
            op.done_at = wait;
        }
    }
}

/// Makes operation `op` (as [`start`] returned it), which brings up `nodes` new GPU nodes, last
/// [`crate::latency::pool_size_factor`] times its drawn duration.
pub fn scale_for_nodes(world: &mut World, op: &Value, nodes: u64) {
    let name = op["name"].as_str().unwrap_or("");
    if let Some(stored) = world
        .container
        .operations
        .iter_mut()
        .find(|o| o.name == name)
    {
        let drawn = stored.done_at.since(stored.start) as f64;
        let scaled = (drawn * crate::latency::pool_size_factor(nodes)).round() as u64;
        stored.done_at = stored.done_at.max(stored.start.plus_ms(scaled));
    }
}

/// The operation as the API returns it.
pub fn to_json(world: &World, op: &Operation, now: SimTime) -> Value {
    // The links name the project by its number: "https://container.googleapis.com/v1/projects/123/
    // zones/us-central1-c/clusters/my-cluster/nodePools/my-np" (`Operation.targetLink` and
    // `selfLink` in the container v1 discovery document and
    // <https://cloud.google.com/kubernetes-engine/docs/reference/rest/v1/projects.locations.operations#Operation>),
    // where Compute's links carry the project id.
    let number = world.project_number(&op.project);
    let path = format!(
        "projects/{number}/locations/{}/operations/{}",
        op.location, op.name
    );
    let target = match op.target.strip_prefix(&format!("projects/{}/", op.project)) {
        Some(rest) => format!("projects/{number}/{rest}"),
        None => op.target.clone(),
    };
    let mut out = json!({
        "name": op.name,
        "zone": op.location,
        "location": op.location,
        "operationType": op.op_type,
        "status": op.status,
        "selfLink": self_link(&path),
        "targetLink": self_link(&target),
        "startTime": world.rfc3339(op.start),
    });
    if let Some(end) = op.end {
        out["endTime"] = json!(world.rfc3339(end));
    }
    if op.op_type == "CREATE_CLUSTER" {
        out["progress"] = progress(op, now);
    }
    if let Some((progress, detail)) = super::upgrades::progress(op) {
        out["progress"] = progress;
        out["detail"] = json!(detail);
    }
    if let Some(error) = &op.error {
        out["error"] = json!({"code": error.code, "message": error.message, "details": []});
        out["statusMessage"] = json!(error.message);
        out["detail"] = json!(error.message);
        let condition = json!([{
            "code": error.condition,
            "message": error.message,
            "canonicalCode": error.canonical,
        }]);
        if op.target.contains("/nodePools/") {
            out["nodepoolConditions"] = condition;
        } else {
            out["clusterConditions"] = condition;
        }
    }
    out
}

/// The stage counters GKE reports while creating a cluster.
fn progress(op: &Operation, now: SimTime) -> Value {
    let total = op.done_at.since(op.start).max(1);
    let now = op.end.unwrap_or(now);
    let fraction = (now.since(op.start) as f64 / total as f64).min(1.0);
    let stage = |name: &str, max: u32| {
        let done = (f64::from(max) * fraction).round() as u32;
        [
            json!({"name": name, "intValue": done.to_string()}),
            json!({"name": format!("{name}_TOTAL"), "intValue": max.to_string()}),
        ]
    };
    let metrics: Vec<Value> = [
        stage("CLUSTER_CONFIGURING", 8),
        stage("CLUSTER_DEPLOYING", 12),
        stage("CLUSTER_HEALTHCHECKING", 2),
    ]
    .into_iter()
    .flatten()
    .collect();
    json!({ "metrics": metrics })
}

/// The earliest time, not after `now`, at which an unfinished operation is due.
pub fn next_due(world: &World, now: SimTime) -> Option<SimTime> {
    world
        .container
        .operations
        .iter()
        .filter(|o| o.status != "DONE" && o.done_at <= now)
        .map(|o| o.done_at)
        .min()
}

/// Finishes every operation due by `at`, in order (an operation waiting for capacity is granted
/// what freed up first, and postponed if it still lacks some). Returns true if anything changed.
pub fn finish_until(world: &mut World, cx: &Ctx, at: SimTime) -> bool {
    let mut changed = false;
    loop {
        changed |= capacity::retry(world, cx, at);
        let next = world
            .container
            .operations
            .iter()
            .enumerate()
            .filter(|(_, o)| o.status != "DONE" && o.done_at <= at)
            .min_by_key(|(i, o)| (o.done_at, *i))
            .map(|(i, _)| i);
        let Some(index) = next else {
            break;
        };
        if super::upgrades::in_progress(&world.container.operations[index]) {
            super::upgrades::step(world, cx, index);
            changed = true;
            continue;
        }
        finish(world, cx, index, None);
        changed = true;
    }
    changed
}

/// When an operation that ends at `now` ended, for its `endTime`: when it was due (its start plus
/// its duration, or its capacity deadline), however much later the world was brought up to date
/// (a tick runs when a request comes, not when an operation is due); a cancelled one ends when
/// it is cancelled.
fn end_time(done_at: SimTime, now: SimTime, cancelled: bool) -> SimTime {
    if cancelled { now } else { done_at.min(now) }
}

/// Ends operation `index`: with its scripted failure or `forced` (cancel), else with its effect.
/// An operation still short of capacity waits (its `done_at` moves to its deadline) until its
/// deadline, then fails with `GCE_STOCKOUT`.
fn finish(world: &mut World, cx: &Ctx, index: usize, forced: Option<OpError>) {
    let op = world.container.operations[index].clone();
    let cancelled = forced.is_some();
    let mut failure = forced.or(op.failure.clone());
    let mut keeps_nodes = op.keeps_nodes;
    if failure.is_none()
        && let Some(deadline) = op.capacity_deadline
    {
        let config = &cx.capacity;
        let (complete, _) = capacity::book_op(world, config, &op);
        if !complete {
            if op.done_at < deadline {
                let stored = &mut world.container.operations[index];
                stored.done_at = deadline;
                stored.waiting = true;
                return;
            }
            failure = Some(capacity::stockout(world, config, &op));
            keeps_nodes = true;
        }
    }
    {
        let stored = &mut world.container.operations[index];
        stored.status = "DONE".to_string();
        stored.waiting = false;
        let end = end_time(stored.done_at, cx.now, cancelled);
        stored.end = Some(end);
        if let Some(f) = failure.as_mut() {
            let ran = end.since(stored.start) as f64 / 1000.0;
            f.message = f
                .message
                .replace(IGM_AFTER, &crate::capacity::go_duration(ran));
        }
        stored.error = failure.clone();
    }
    let key = op.cluster_key.clone();
    // A cancelled operation creates nothing.
    let keeps_nodes = keeps_nodes && !cancelled;
    match &failure {
        Some(error) => fail(world, cx, &key, &op.effect, error, keeps_nodes),
        None => succeed(world, cx, &key, &op.effect),
    }
    if op.upgrade.is_some() {
        let ended = world.container.operations[index].clone();
        super::upgrades::ended(world, cx, &key, &ended, failure.as_ref());
    }
    reservations::settle(world, &key);
    capacity::settle(world, &key);
}

fn succeed(world: &mut World, cx: &Ctx, key: &str, effect: &Effect) {
    match effect {
        Effect::CreateCluster => {
            let pools: Vec<String> = match world.container.clusters.get_mut(key) {
                Some(cluster) => {
                    cluster.set_status("RUNNING");
                    for pool in &mut cluster.pools {
                        pool.set_status("RUNNING");
                        pool.node_count =
                            super::rules::count_of(&pool.resource["initialNodeCount"]) as u32;
                    }
                    cluster.pools.iter().map(|p| p.name.clone()).collect()
                }
                None => return,
            };
            world.kube.set_ready(key, true);
            sync_addons(world, key);
            for pool in pools {
                node_pools::sync_nodes(world, cx, key, &pool);
            }
        }
        Effect::DeleteCluster => {
            if let Some(cluster) = world.container.clusters.remove(key) {
                for pool in &cluster.pools {
                    reservations::release(world, pool);
                }
            }
            kube::deprovision(cx.kube_servers, world, key);
        }
        Effect::UpdateCluster { patch } => {
            let Some(cluster) = world.container.clusters.get_mut(key) else {
                return;
            };
            apply_top(&mut cluster.resource, patch);
            cluster.set_status("RUNNING");
            let version = cluster.resource["currentMasterVersion"]
                .as_str()
                .map(str::to_string);
            let beta_apis = super::beta_apis::enabled(&cluster.resource);
            if let (Some(v), Some(k)) = (version, world.kube.clusters.get_mut(key)) {
                k.version = v;
            }
            world.kube.set_beta_apis(key, beta_apis);
            sync_addons(world, key);
        }
        Effect::UpdateNodePool { pool, patch } => {
            if let Some(p) = pool_mut(world, key, pool) {
                apply_top(&mut p.resource, patch);
                p.set_status("RUNNING");
                p.generation += 1;
            }
            node_pools::sync_nodes(world, cx, key, pool);
        }
        Effect::CreateNodePool { pool } => {
            if let Some(p) = pool_mut(world, key, pool) {
                p.set_status("RUNNING");
                p.node_count = super::rules::count_of(&p.resource["initialNodeCount"]) as u32;
                p.generation += 1;
            }
            node_pools::sync_nodes(world, cx, key, pool);
        }
        Effect::DeleteNodePool { pool } => {
            let removed = world.container.clusters.get_mut(key).and_then(|cluster| {
                let index = cluster.pools.iter().position(|p| &p.name == pool)?;
                Some(cluster.pools.remove(index))
            });
            if let Some(removed) = removed {
                reservations::release(world, &removed);
            }
            world.kube.set_pool_nodes(key, pool, vec![], cx.now);
        }
        Effect::SetNodePoolSize { pool, count } => {
            if let Some(p) = pool_mut(world, key, pool) {
                p.node_count = *count;
                p.set_status("RUNNING");
                // A pool a failed create left in error is whole now: its error goes.
                if let Some(obj) = p.resource.as_object_mut() {
                    obj.remove("statusMessage");
                    obj.remove("conditions");
                }
                p.generation += 1;
            }
            node_pools::sync_nodes(world, cx, key, pool);
        }
    }
}

/// Ends a failed operation. `keeps_nodes`: a pool create or resize that a reservation could not
/// fully serve keeps the nodes it got (a new pool is then `RUNNING_WITH_ERROR`, `ERROR` with none).
fn fail(
    world: &mut World,
    cx: &Ctx,
    key: &str,
    effect: &Effect,
    error: &OpError,
    keeps_nodes: bool,
) {
    let Some(cluster) = world.container.clusters.get_mut(key) else {
        return;
    };
    let condition = json!([{
        "code": error.condition,
        "message": error.message,
        "canonicalCode": error.canonical,
    }]);
    match effect {
        Effect::CreateCluster => {
            cluster.set_status("ERROR");
            cluster.resource["statusMessage"] = json!(error.message);
            cluster.resource["conditions"] = condition;
            for pool in &mut cluster.pools {
                pool.set_status("ERROR");
            }
        }
        Effect::CreateNodePool { pool } => {
            if let Some(p) = cluster.pool_mut(pool) {
                let mut status = "ERROR";
                if keeps_nodes {
                    p.node_count = super::rules::count_of(&p.resource["initialNodeCount"]) as u32;
                    if p.holds_vms() {
                        status = "RUNNING_WITH_ERROR";
                    }
                }
                p.set_status(status);
                p.resource["statusMessage"] = json!(error.message);
                p.resource["conditions"] = condition;
                p.generation += 1;
            }
        }
        Effect::SetNodePoolSize { pool, count } => {
            if let Some(p) = cluster.pool_mut(pool) {
                if keeps_nodes {
                    p.node_count = *count;
                    p.generation += 1;
                }
                // A pool still carrying a failed create's (or upgrade's) error stays in error,
                // now the resize's; a healthy pool stays RUNNING with the nodes it has.
                if p.resource["statusMessage"].is_string() {
                    let status = if p.holds_vms() || p.total_nodes() > 0 {
                        "RUNNING_WITH_ERROR"
                    } else {
                        "ERROR"
                    };
                    p.set_status(status);
                    p.resource["statusMessage"] = json!(error.message);
                    p.resource["conditions"] = condition;
                } else {
                    p.set_status("RUNNING");
                }
            }
        }
        Effect::UpdateNodePool { pool, .. } | Effect::DeleteNodePool { pool } => {
            if let Some(p) = cluster.pool_mut(pool) {
                p.set_status("RUNNING");
            }
        }
        Effect::DeleteCluster | Effect::UpdateCluster { .. } => cluster.set_status("RUNNING"),
    }
    if keeps_nodes
        && let Effect::CreateNodePool { pool } | Effect::SetNodePoolSize { pool, .. } = effect
    {
        node_pools::sync_nodes(world, cx, key, pool);
    }
}

/// Replaces the top-level fields of `target` by those of `patch` (the values were computed in
/// full when the operation started).
fn apply_top(target: &mut Value, patch: &Value) {
    if let (Some(t), Some(p)) = (target.as_object_mut(), patch.as_object()) {
        for (k, v) in p {
            t.insert(k.clone(), v.clone());
        }
    }
}

fn pool_mut<'a>(world: &'a mut World, key: &str, pool: &str) -> Option<&'a mut super::NodePool> {
    world.container.clusters.get_mut(key)?.pool_mut(pool)
}

/// Tells the Kubernetes side which add-ons the cluster has.
pub fn sync_addons(world: &mut World, key: &str) {
    let Some(cluster) = world.container.clusters.get(key) else {
        return;
    };
    let resource = &cluster.resource;
    let addons = &resource["addonsConfig"];
    let service_on = |field: &str| resource[field].as_str().is_some_and(|s| s != "none");
    let value = kube::Addons {
        filestore_csi: addons["gcpFilestoreCsiDriverConfig"]["enabled"] == json!(true),
        gcs_fuse_csi: addons["gcsFuseCsiDriverConfig"]["enabled"] == json!(true),
        from_gke: true,
        pd_csi: addons["gcePersistentDiskCsiDriverConfig"]["enabled"] == json!(true),
        dataplane_v2: resource["networkConfig"]["datapathProvider"] == json!("ADVANCED_DATAPATH"),
        workload_identity: resource["workloadIdentityConfig"]["workloadPool"]
            .as_str()
            .is_some_and(|p| !p.is_empty()),
        logging: service_on("loggingService"),
        monitoring: service_on("monitoringService"),
    };
    world.kube.set_addons(key, value);
}

fn find<'a>(world: &'a World, project: &str, location: &str, name: &str) -> Option<&'a Operation> {
    world.container.operations.iter().find(|o| {
        o.project == project && o.name == name && (location == "-" || o.location == location)
    })
}

/// `GET .../operations/{operation}`.
pub async fn get(
    State(shared): State<Arc<Shared>>,
    Path((project, location, name)): Path<(String, String, String)>,
    query: Query,
) -> GcpResult<Response> {
    let op = shared.read_world(|world, cx| {
        find(world, &project, &location, &name)
            .map(|op| to_json(world, op, cx.now))
            .ok_or_else(|| {
                not_found(&format!(
                    "projects/{project}/locations/{location}/operations/{name}"
                ))
            })
    })?;
    Ok(http::proto_json(op, enum_tables::OPERATION, &query))
}

/// `GET .../operations`.
pub async fn list(
    State(shared): State<Arc<Shared>>,
    Path((project, location)): Path<(String, String)>,
    query: Query,
) -> GcpResult<Response> {
    if location != "-" {
        super::rules::check_location(&location)?;
    }
    let mut ops: Vec<Value> = shared.read_world(|world, cx| {
        world
            .container
            .operations
            .iter()
            .filter(|o| o.project == project && (location == "-" || o.location == location))
            .map(|o| to_json(world, o, cx.now))
            .collect()
    });
    if query.enum_ints() {
        for op in &mut ops {
            crate::enums::encode_ints(op, enum_tables::OPERATION);
        }
    }
    Ok(http::json(json!({ "operations": ops })))
}

/// `POST .../operations/{operation}:cancel`.
pub async fn post_method(
    State(shared): State<Arc<Shared>>,
    Path((project, location, segment)): Path<(String, String, String)>,
) -> GcpResult<Response> {
    let Some((name, "cancel")) = segment.split_once(':') else {
        return Err(GcpError::unrouted());
    };
    shared.with_world(|world, cx| {
        let index = world
            .container
            .operations
            .iter()
            .position(|o| o.project == project && o.name == name && o.location == location)
            .ok_or_else(|| {
                not_found(&format!(
                    "projects/{project}/locations/{location}/operations/{name}"
                ))
            })?;
        if world.container.operations[index].status == "DONE" {
            return Err(GcpError::failed_precondition(format!(
                "Operation {name} is already done and cannot be cancelled."
            )));
        }
        let cancelled = OpError {
            code: 1,
            canonical: "CANCELLED".to_string(),
            message: "Operation was cancelled.".to_string(),
            condition: "UNKNOWN".to_string(),
        };
        finish(world, cx, index, Some(cancelled));
        // What the cancelled operation held is free for those waiting.
        capacity::retry(world, cx, cx.now);
        Ok(http::json(json!({})))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_operation_ends_when_it_was_due_not_when_the_world_caught_up() {
        // Due at 400 s, finished by a tick at 1000 s (the next request): it ended at 400 s,
        // whether it succeeded or failed.
        assert_eq!(
            end_time(SimTime(400_000), SimTime(1_000_000), false),
            SimTime(400_000)
        );
        assert_eq!(
            end_time(SimTime(400_000), SimTime(400_000), false),
            SimTime(400_000)
        );
        // Cancelled at 100 s, before it was due: it ended then.
        assert_eq!(
            end_time(SimTime(400_000), SimTime(100_000), true),
            SimTime(100_000)
        );
    }
}
