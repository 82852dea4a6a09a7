//! Node pools: preparing a pool (defaults and checks — among them that its service account exists
//! — shared with inline pools of a new cluster),
//! the `nodePools` methods, and the GKE-like nodes a pool has once its create or resize finished.

use super::accelerator_networks;
use super::capacity;
use super::nodes::shape;
pub use super::nodes::{node_prefix, sync_nodes};
use super::operations::{self, Effect, OpError};
use super::reservations;
use super::rules::{self, count_of};
use super::server_config::{self, VersionKind};
use super::{
    Cluster, NodeGroup, NodePool, bad_request, cluster_key, enum_tables, http_fault, not_found,
    region_of, self_link, string_list,
};
use crate::error::{GcpError, GcpResult};
use crate::faults::{FaultAction, NamedFault};
use crate::geo;
use crate::http::{self, Query};
pub use crate::instance_groups::node_service_account;
use crate::quotas::{self, Exceeded, Key, Shortfall};
use crate::shared::Ctx;
use crate::shared::Shared;
use crate::world::World;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::response::Response;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::sync::Arc;

const DEFAULT_SCOPES: &[&str] = &[
    "https://www.googleapis.com/auth/devstorage.read_only",
    "https://www.googleapis.com/auth/logging.write",
    "https://www.googleapis.com/auth/monitoring",
    "https://www.googleapis.com/auth/service.management.readonly",
    "https://www.googleapis.com/auth/servicecontrol",
    "https://www.googleapis.com/auth/trace.append",
];

/// Fields of `UpdateNodePoolRequest` that change something, as GKE lists them in its error.
const UPDATABLE: &[(&str, &str)] = &[
    ("nodeVersion", "node_version"),
    ("imageType", "image_type"),
    ("locations", "locations"),
    ("workloadMetadataConfig", "workload_metadata_config"),
    ("upgradeSettings", "upgrade_settings"),
    ("kubeletConfig", "kubelet_config"),
    ("linuxNodeConfig", "linux_node_config"),
    ("tags", "tags"),
    ("taints", "taints"),
    ("labels", "labels"),
    ("nodeNetworkConfig", "node_network_config"),
    ("gcfsConfig", "gcfs_config"),
    ("gvnic", "gvnic"),
    ("confidentialNodes", "confidential_nodes"),
    ("loggingConfig", "logging_config"),
    ("fastSocket", "fast_socket"),
    ("resourceLabels", "resource_labels"),
    ("accelerators", "accelerators"),
    ("windowsNodeConfig", "windows_node_config"),
    ("machineType", "machine_type"),
    ("diskType", "disk_type"),
    ("diskSizeGb", "disk_size_gb"),
    ("storagePools", "storage_pools"),
    ("containerdConfig", "containerd_config"),
    ("resourceManagerTags", "resource_manager_tags"),
    ("queuedProvisioning", "queued_provisioning"),
    ("maxRunDuration", "max_run_duration"),
    ("flexStart", "flex_start"),
    ("bootDisk", "boot_disk"),
    ("nodeDrainConfig", "node_drain_config"),
    ("taintConfig", "taint_config"),
    ("consolidationDelay", "consolidation_delay"),
];

/// The cluster-derived context a pool is prepared in.
pub struct PoolContext<'a> {
    pub project: &'a str,
    pub location: &'a str,
    pub cluster_name: &'a str,
    /// The cluster resource (network, versions, multi-networking).
    pub cluster: &'a Value,
}

/// Checks a pool and fills in GKE's defaults; returns the pool ready to be stored (PROVISIONING).
pub fn prepare(world: &mut World, cx: &PoolContext, mut pool: Value) -> GcpResult<NodePool> {
    let name = pool["name"].as_str().unwrap_or("").to_string();
    rules::check_name("node_pool", &name)?;
    let region = region_of(cx.location);
    let mut zones = string_list(&pool["locations"]);
    if zones.is_empty() {
        zones = string_list(&cx.cluster["locations"]);
        pool["locations"] = json!(zones);
    }
    for zone in &zones {
        if geo::region_of_zone(zone) != Some(region.as_str()) {
            return Err(bad_request(format!(
                "Location \"{zone}\" is not a zone of the cluster's region \"{region}\"."
            )));
        }
    }
    if count_of(&pool["initialNodeCount"]) == 0 && pool["autoscaling"]["enabled"] != json!(true) {
        return Err(bad_request(
            "Node_pool.initial_node_count must be greater than zero.",
        ));
    }
    if !pool["config"].is_object() {
        pool["config"] = json!({});
    }
    rules::check_machine(&mut pool["config"], &zones)?;
    rules::check_placement(world, cx.project, &region, &mut pool)?;
    let reserved = reservations::check(world, cx.project, &pool, &zones)?;
    let master = cx.cluster["currentMasterVersion"].as_str().unwrap_or("");
    let version = match pool["version"].as_str() {
        None | Some("") | Some("-") => master.to_string(),
        Some(v) => {
            let offer = server_config::offer(world);
            server_config::resolve_in(&offer, v, None, VersionKind::Node)?
        }
    };
    super::skew::check_node_version(&version, master)?;
    let nics =
        accelerator_networks::check(world, cx.project, cx.cluster, cx.location, &pool, &version)?;
    pool["version"] = json!(version);
    super::upgrades::check_settings(&pool["upgradeSettings"])?;
    fill_defaults(&mut pool, cx);
    check_service_account(world, cx.project, &pool["config"])?;
    let path = format!(
        "{}/nodePools/{name}",
        cluster_key(cx.project, cx.location, cx.cluster_name)
    );
    pool["selfLink"] = json!(self_link(&path));
    pool["status"] = json!("PROVISIONING");
    let mut groups = BTreeMap::new();
    let mut urls = vec![];
    let prefix = node_prefix(cx.cluster_name, &name);
    for zone in &zones {
        let hash = world.hex(8);
        urls.push(json!(format!(
            "https://www.googleapis.com/compute/v1/projects/{}/zones/{zone}/instanceGroupManagers/{prefix}-{hash}-grp",
            cx.project
        )));
        groups.insert(
            zone.clone(),
            NodeGroup {
                hash,
                ..NodeGroup::default()
            },
        );
    }
    pool["instanceGroupUrls"] = Value::Array(urls);
    // A pool that consumes no reservation takes its VMs from its zones' capacity.
    let granted = if reserved.is_empty() {
        zones.iter().map(|z| (z.clone(), 0)).collect()
    } else {
        BTreeMap::new()
    };
    Ok(NodePool {
        name,
        resource: pool,
        node_count: 0,
        groups,
        generation: 1,
        reserved,
        granted,
        node_versions: BTreeMap::new(),
        cordoned: Default::default(),
        nics,
    })
}

fn fill_defaults(pool: &mut Value, cx: &PoolContext) {
    let config = &mut pool["config"];
    let defaults = json!({
        "machineType": "e2-medium",
        "diskSizeGb": 100,
        "diskType": "pd-balanced",
        "imageType": "COS_CONTAINERD",
        "serviceAccount": "default",
        "oauthScopes": DEFAULT_SCOPES,
        "metadata": {"disable-legacy-endpoints": "true"},
        "shieldedInstanceConfig": {"enableIntegrityMonitoring": true},
        "effectiveCgroupMode": "EFFECTIVE_CGROUP_MODE_V2",
    });
    for (k, v) in defaults.as_object().into_iter().flatten() {
        if config[k].is_null() {
            config[k] = v.clone();
        }
    }
    let model = if config["spot"] == json!(true) {
        "spot"
    } else {
        "on-demand"
    };
    config["resourceLabels"]["goog-gke-node-pool-provisioning-model"] = json!(model);
    // On a cluster with Workload Identity Federation, new pools run the GKE metadata server.
    let workload_pool = cx.cluster["workloadIdentityConfig"]["workloadPool"]
        .as_str()
        .unwrap_or_default();
    if !workload_pool.is_empty() && config["workloadMetadataConfig"]["mode"].is_null() {
        config["workloadMetadataConfig"] = json!({"mode": "GKE_METADATA"});
    }
    let pool_defaults = json!({
        "management": {"autoRepair": true, "autoUpgrade": true},
        "upgradeSettings": {"maxSurge": 1, "strategy": "SURGE"},
        "maxPodsConstraint": {"maxPodsPerNode": "110"},
        "podIpv4CidrSize": 24,
    });
    for (k, v) in pool_defaults.as_object().into_iter().flatten() {
        if pool[k].is_null() {
            pool[k] = v.clone();
        }
    }
    let network = &mut pool["networkConfig"];
    let policy = &cx.cluster["ipAllocationPolicy"];
    if network["podRange"].is_null()
        && let Some(range) = policy["clusterSecondaryRangeName"].as_str()
    {
        network["podRange"] = json!(range);
    }
    if network["podIpv4CidrBlock"].is_null() {
        network["podIpv4CidrBlock"] = cx.cluster["clusterIpv4Cidr"].clone();
    }
    if network["subnetwork"].is_null() {
        network["subnetwork"] = cx.cluster["networkConfig"]["subnetwork"].clone();
    }
}

/// A pool's nodes need their service account to exist (a user-managed account of IAM, or a
/// Compute Engine default account that was not deleted): else GKE refuses the create with 400
/// `Service account "EMAIL" does not exist.` — its text for a node pool
/// (sassoftware/viya4-iac-gcp#148) and for a cluster whose default pool names a deleted Compute
/// Engine default account (gruntwork-io/terraform-google-gke#56, midl-dev/tezos-on-gke#45).
///
/// The simulator checks this only where it keeps the project's identities
/// ([`iam_in_use`]): an account of a project in which nobody created an account, wrote a policy or
/// deleted the Compute Engine default account, and that the world file does not name, is taken to
/// exist (a simulator boundary, not GKE's behaviour: callers that never model identities keep
/// working). An email that names no project (`someone@example.com`) never exists.
fn check_service_account(world: &World, project: &str, config: &Value) -> GcpResult<()> {
    let email = node_service_account(world, project, config);
    let exists = crate::iam::find_account(world, &email).is_some()
        || crate::iam::default_account(world, &email).is_some();
    let checked = crate::iam::project_of_email(&email).is_none_or(|p| iam_in_use(world, &p));
    if exists || !checked {
        Ok(())
    } else {
        Err(bad_request(format!(
            "Service account \"{email}\" does not exist."
        )))
    }
}

/// Whether the simulated world keeps the identities of `project` (id or number): the world file
/// names it, or it has a user-managed service account, a written IAM policy or a deleted Compute
/// Engine default account.
pub fn iam_in_use(world: &World, project: &str) -> bool {
    let key = crate::iam::project_key(world, project);
    world.project_numbers.contains_key(&key)
        || world.iam.accounts.values().any(|a| a.project == key)
        || world.iam.project_policies.contains_key(&key)
        || world
            .iam
            .deleted_defaults
            .contains(&crate::iam::compute_default_email(world, &key))
}

/// The cluster behind a request, or GKE's 404.
pub fn cluster<'a>(
    world: &'a World,
    project: &str,
    location: &str,
    name: &str,
) -> GcpResult<&'a Cluster> {
    let key = cluster_key(project, location, name);
    world
        .container
        .clusters
        .get(&key)
        .ok_or_else(|| not_found(&key))
}

fn pool_of<'a>(cluster: &'a Cluster, pool: &str) -> GcpResult<&'a NodePool> {
    cluster
        .pool(pool)
        .ok_or_else(|| not_found(&format!("{}/nodePools/{pool}", cluster.key())))
}

/// The failure a scripted fault on a node-pool or cluster create turns into, or its immediate
/// error. `zone` and `node` name the first instance GKE would create.
pub fn create_fault(
    action: Option<FaultAction>,
    project: &str,
    zone: &str,
    node: &str,
    machine: &str,
    gpus: u64,
    nodes: u64,
) -> GcpResult<Option<OpError>> {
    match action {
        // Drops never reach the modules ([`crate::world::Ctx::scripted_fault`]).
        None | Some(FaultAction::Named(NamedFault::DropBefore | NamedFault::DropAfter)) => Ok(None),
        Some(FaultAction::Http {
            status,
            reason,
            message,
        }) => Err(http_fault(status, &reason, &message)),
        Some(FaultAction::Named(NamedFault::QuotaExceeded)) => {
            // GKE's refusal of a pool whose VMs do not fit, as if the project had none of the
            // quota the pool's VMs need.
            let (metric, per_node) = match machine {
                "a3-megagpu-8g" => ("NVIDIA_H100_MEGA_GPUS", gpus),
                "a3-highgpu-8g" => ("NVIDIA_H100_GPUS", gpus),
                m => ("CPUS", u64::from(shape(m).0)),
            };
            let need = per_node * nodes.max(1);
            Err(quotas::gke_insufficient(
                project,
                &[Shortfall {
                    resource: metric.to_string(),
                    need: need as f64,
                    limit: 0.0,
                    available: 0.0,
                }],
            ))
        }
        Some(FaultAction::Named(NamedFault::Stockout)) => Ok(Some(stockout_error(
            project,
            zone,
            node,
            nodes,
            0,
            operations::IGM_AFTER,
        ))),
        Some(FaultAction::Named(NamedFault::OperationError)) => Ok(Some(OpError {
            code: 13,
            canonical: "INTERNAL".into(),
            message: "Internal error. Please try again or contact Google Support.".into(),
            condition: "UNKNOWN".into(),
        })),
    }
}

/// GKE's failure of an operation whose instance groups could not create every VM for want of
/// capacity in the zone: `Google Compute Engine: Not all instances running in IGM after <after>.
/// Expected <n>, running <m>, transitioning <n-m>. Current errors: [GCE_STOCKOUT]: Instance
/// '<node>' creation failed: The zone 'projects/<p>/zones/<z>' does not have enough resources
/// available to fulfill the request. '(resource type:compute)'.` (akka/akka-core#32992), code 8
/// `RESOURCE_EXHAUSTED`, condition `GCE_STOCKOUT`. Shared by the scripted `stockout` fault and the
/// real capacity check ([`crate::capacity`]).
pub fn stockout_error(
    project: &str,
    zone: &str,
    node: &str,
    expected: u64,
    running: u64,
    after: &str,
) -> OpError {
    OpError {
        code: 8,
        canonical: "RESOURCE_EXHAUSTED".into(),
        message: format!(
            "Google Compute Engine: Not all instances running in IGM after {after}. Expected \
             {expected}, running {running}, transitioning {}. Current errors: [GCE_STOCKOUT]: \
             Instance '{node}' creation failed: The zone 'projects/{project}/zones/{zone}' does \
             not have enough resources available to fulfill the request. '(resource \
             type:compute)'.",
            expected.saturating_sub(running)
        ),
        condition: "GCE_STOCKOUT".into(),
    }
}

/// A scripted fault on a pool update or delete: an immediate error, or a failure at the end.
pub fn change_fault(action: Option<FaultAction>) -> GcpResult<Option<OpError>> {
    match action {
        Some(FaultAction::Named(NamedFault::Stockout)) => {
            create_fault(action, "", "", "", "", 0, 0)
        }
        other => create_fault(other, "", "", "", "e2-medium", 0, 0),
    }
}

/// What `vms` new VMs of a prepared pool ask of the project's quotas in `region` (nothing when
/// they consume a reservation: the reservation holds their quota).
pub fn pool_demand(pool: &NodePool, region: &str, vms: u64) -> Vec<(Key, f64)> {
    let mut demand = vec![];
    if pool.reserved.is_empty() {
        quotas::pool_shape(&pool.resource).uses(region, vms as f64, &mut demand);
    }
    demand
}

/// Checks new VMs against the project's quotas as GKE does: the regional quotas its own check
/// sees are refused at once with 403 (`Insufficient regional quota to satisfy request: ...`);
/// the others (the GPU family quota, the project-wide CPU and GPU quotas) only fail when the
/// instance groups create the VMs, so they become the operation's failure ([`quota_op_error`]).
/// `node` names the first VM, `vms` how many are created.
pub fn quota_check(
    world: &World,
    cx: &Ctx,
    project: &str,
    demand: &[(Key, f64)],
    node: &str,
    vms: u64,
) -> GcpResult<Option<OpError>> {
    let exceeded = quotas::check(world, cx.quotas, project, demand);
    let (now, later) = quotas::gke_split(exceeded);
    if !now.is_empty() {
        let shortfalls: Vec<Shortfall> = now.iter().map(Shortfall::from).collect();
        return Err(quotas::gke_insufficient(project, &shortfalls));
    }
    Ok(later.first().map(|e| quota_op_error(e, node, vms)))
}

/// The failure of an operation whose instance groups could not create their VMs for quota: GKE's
/// instance-group failure (as for a stockout) with Compute's quota error, condition
/// `GCE_QUOTA_EXCEEDED`; no VM is created.
pub fn quota_op_error(exceeded: &Exceeded, node: &str, vms: u64) -> OpError {
    OpError {
        code: 8,
        canonical: "RESOURCE_EXHAUSTED".into(),
        message: format!(
            "Google Compute Engine: Not all instances running in IGM after {}. Expected {vms}, \
             running 0, transitioning {vms}. Current errors: [GCE_QUOTA_EXCEEDED]: Instance \
             '{node}' creation failed: {}",
            operations::IGM_AFTER,
            quotas::compute_message(exceeded)
        ),
        condition: "GCE_QUOTA_EXCEEDED".into(),
    }
}

/// `GET .../nodePools`.
pub async fn list(
    State(shared): State<Arc<Shared>>,
    Path((project, location, cluster_name)): Path<(String, String, String)>,
    query: Query,
) -> GcpResult<Response> {
    let mut pools: Vec<Value> = shared.read_world(|world, _| {
        cluster(world, &project, &location, &cluster_name)
            .map(|c| c.pools.iter().map(NodePool::to_json).collect())
    })?;
    if query.enum_ints() {
        for pool in &mut pools {
            crate::enums::encode_ints(pool, enum_tables::NODE_POOL);
        }
    }
    Ok(http::json(json!({ "nodePools": pools })))
}

/// `GET .../nodePools/{pool}`.
pub async fn get(
    State(shared): State<Arc<Shared>>,
    Path((project, location, cluster_name, pool)): Path<(String, String, String, String)>,
    query: Query,
) -> GcpResult<Response> {
    let pool = shared.read_world(|world, _| {
        let c = cluster(world, &project, &location, &cluster_name)?;
        pool_of(c, &pool).map(NodePool::to_json)
    })?;
    Ok(http::proto_json(pool, enum_tables::NODE_POOL, &query))
}

/// `POST .../nodePools`.
pub async fn create(
    State(shared): State<Arc<Shared>>,
    Path((project, location, cluster_name)): Path<(String, String, String)>,
    query: Query,
    body: Bytes,
) -> GcpResult<Response> {
    let mut body = http::parse_json(&body)?;
    let mut pool = body["nodePool"].take();
    if !pool.is_object() {
        return Err(bad_request("Node_pool field is required."));
    }
    crate::enums::normalize(&mut pool, enum_tables::NODE_POOL, "node_pool")?;
    let op = shared.with_world(|world, cx| {
        let c = cluster(world, &project, &location, &cluster_name)?.clone();
        let name = pool["name"].as_str().unwrap_or("").to_string();
        rules::check_name("node_pool", &name)?;
        if c.pool(&name).is_some() {
            return Err(GcpError::already_exists(format!(
                "Already exists: {}/nodePools/{name}.",
                c.key()
            )));
        }
        rules::check_no_running_operation(world, &c)?;
        let context = PoolContext {
            project: &project,
            location: &location,
            cluster_name: &cluster_name,
            cluster: &c.resource,
        };
        let mut prepared = prepare(world, &context, pool)?;
        let config = &prepared.resource["config"];
        let machine = config["machineType"].as_str().unwrap_or("").to_string();
        let gpus = count_of(&config["accelerators"][0]["acceleratorCount"]);
        let zones = prepared.zones();
        let per_zone = count_of(&prepared.resource["initialNodeCount"]);
        let first_zone = zones.first().cloned().unwrap_or_default();
        let first_node = format!(
            "{}-{}-0001",
            node_prefix(&cluster_name, &name),
            prepared
                .groups
                .get(&first_zone)
                .map(|g| g.hash.clone())
                .unwrap_or_default()
        );
        let failure = create_fault(
            cx.scripted_fault("container.nodePool", "create"),
            &project,
            &first_zone,
            &first_node,
            &machine,
            gpus,
            per_zone * zones.len() as u64,
        )?;
        let vms = per_zone * zones.len() as u64;
        let demand = pool_demand(&prepared, &region_of(&location), vms);
        let quota_failure = quota_check(world, cx, &project, &demand, &first_node, vms)?;
        let failure = failure.or(quota_failure);
        // The instance groups book their VMs in the reservation now; too few fail the operation.
        let shortfall = reservations::book(world, &cluster_name, &mut prepared, per_zone as u32);
        let key = c.key();
        if let Some(stored) = world.container.clusters.get_mut(&key) {
            stored.pools.push(prepared);
        }
        // Or they take them from the zones' capacity; too few make the operation wait for more.
        let (complete, _) = if failure.is_none() && shortfall.is_none() {
            capacity::book(world, cx.capacity, &key, &name, per_zone as u32)
        } else {
            (true, false)
        };
        let latency = if gpus > 0 {
            "container.nodePool.create.gpu"
        } else {
            "container.nodePool.create"
        };
        let op = operations::start(
            world,
            cx,
            &project,
            &location,
            "CREATE_NODE_POOL",
            format!("{key}/nodePools/{name}"),
            Effect::CreateNodePool { pool: name },
            latency,
            failure,
        );
        if gpus > 0 {
            operations::scale_for_nodes(world, &op, vms);
        }
        if let Some(shortfall) = shortfall {
            operations::fail_later(world, cx, &op, shortfall);
        }
        if !complete {
            operations::wait_for_capacity(world, cx, &op);
        }
        Ok(op)
    })?;
    Ok(http::proto_json(op, enum_tables::OPERATION, &query))
}

/// Starts a change of an existing pool: checks the one-operation rule and scripted faults, sets
/// the pool RECONCILING (STOPPING for a delete) and starts the operation.
#[allow(clippy::too_many_arguments)]
fn start_change(
    world: &mut World,
    cx: &Ctx,
    project: &str,
    location: &str,
    cluster_name: &str,
    pool_name: &str,
    op_type: &str,
    effect: impl FnOnce(&NodePool) -> GcpResult<(Effect, &'static str)>,
    verb: &str,
) -> GcpResult<Value> {
    let c = cluster(world, project, location, cluster_name)?.clone();
    let pool = pool_of(&c, pool_name)?.clone();
    rules::check_no_running_operation(world, &c)?;
    let (effect, latency) = effect(&pool)?;
    let failure = change_fault(cx.scripted_fault("container.nodePool", verb))?;
    let status = if op_type == "DELETE_NODE_POOL" {
        "STOPPING"
    } else {
        "RECONCILING"
    };
    if let Some(p) = world
        .container
        .clusters
        .get_mut(&c.key())
        .and_then(|c| c.pool_mut(pool_name))
    {
        p.set_status(status);
    }
    Ok(operations::start(
        world,
        cx,
        project,
        location,
        op_type,
        format!("{}/nodePools/{pool_name}", c.key()),
        effect,
        latency,
        failure,
    ))
}

fn is_gpu(pool: &NodePool) -> bool {
    count_of(&pool.resource["config"]["accelerators"][0]["acceleratorCount"]) > 0
}

/// `DELETE .../nodePools/{pool}`.
pub async fn delete(
    State(shared): State<Arc<Shared>>,
    Path((project, location, cluster_name, pool)): Path<(String, String, String, String)>,
    query: Query,
) -> GcpResult<Response> {
    let op = shared.with_world(|world, cx| {
        start_change(
            world,
            cx,
            &project,
            &location,
            &cluster_name,
            &pool,
            "DELETE_NODE_POOL",
            |p| {
                Ok((
                    Effect::DeleteNodePool {
                        pool: p.name.clone(),
                    },
                    "container.nodePool.delete",
                ))
            },
            "delete",
        )
    })?;
    Ok(http::proto_json(op, enum_tables::OPERATION, &query))
}

/// `PUT .../nodePools/{pool}` (`UpdateNodePoolRequest`).
pub async fn update(
    State(shared): State<Arc<Shared>>,
    Path((project, location, cluster_name, pool_name)): Path<(String, String, String, String)>,
    query: Query,
    body: Bytes,
) -> GcpResult<Response> {
    let mut request = http::parse_json(&body)?;
    crate::enums::normalize(&mut request, enum_tables::UPDATE_NODE_POOL_REQUEST, "")?;
    let present: Vec<&str> = UPDATABLE
        .iter()
        .filter(|(k, _)| !request[*k].is_null())
        .map(|(k, _)| *k)
        .collect();
    if present.is_empty() {
        let names: Vec<String> = UPDATABLE.iter().map(|(_, s)| format!("'{s}'")).collect();
        return Err(bad_request(format!(
            "At least one of [{}] must be specified.",
            names.join(", ")
        )));
    }
    if request["nodeNetworkConfig"]["additionalNodeNetworkConfigs"].is_array() {
        return Err(bad_request(
            "Additional node network configs cannot be added to or removed from an existing \
             node pool; create a new node pool instead.",
        ));
    }
    let op_type = if request["nodeVersion"].is_null() {
        "UPDATE_CLUSTER"
    } else {
        "UPGRADE_NODES"
    };
    let op = shared.with_world(|world, cx| {
        let master =
            cluster(world, &project, &location, &cluster_name)?.resource["currentMasterVersion"]
                .clone();
        let offer = server_config::offer(world);
        start_change(
            world,
            cx,
            &project,
            &location,
            &cluster_name,
            &pool_name,
            op_type,
            |p| {
                if let Some(etag) = request["etag"].as_str() {
                    let current = p.to_json()["etag"].clone();
                    if current != json!(etag) {
                        return Err(GcpError::new(
                            409,
                            "ABORTED",
                            "aborted",
                            format!(
                                "Provided etag \"{etag}\" does not match the current etag of \
                                 node pool \"{}\".",
                                p.name
                            ),
                        ));
                    }
                }
                Ok((
                    Effect::UpdateNodePool {
                        pool: p.name.clone(),
                        patch: update_patch(&offer, p, &request, &master)?,
                    },
                    "container.nodePool.update",
                ))
            },
            "update",
        )
    })?;
    Ok(http::proto_json(op, enum_tables::OPERATION, &query))
}

/// Starts what `nodePools.update` with `nodeVersion: "-"` starts (an `UPGRADE_NODES` operation
/// moving the pool to the control plane's version), for GKE's node auto-upgrades
/// ([`super::auto_upgrade`]).
pub fn start_node_upgrade(
    world: &mut World,
    cx: &Ctx,
    (project, location, cluster_name): (&str, &str, &str),
    pool_name: &str,
) -> GcpResult<Value> {
    let master =
        cluster(world, project, location, cluster_name)?.resource["currentMasterVersion"].clone();
    let offer = server_config::offer(world);
    let request = json!({"nodeVersion": "-"});
    start_change(
        world,
        cx,
        project,
        location,
        cluster_name,
        pool_name,
        "UPGRADE_NODES",
        |p| {
            Ok((
                Effect::UpdateNodePool {
                    pool: p.name.clone(),
                    patch: update_patch(&offer, p, &request, &master)?,
                },
                "container.nodePool.update",
            ))
        },
        "update",
    )
}

/// The pool's top-level fields after an `UpdateNodePoolRequest`.
fn update_patch(
    offer: &server_config::Offer,
    pool: &NodePool,
    request: &Value,
    master: &Value,
) -> GcpResult<Value> {
    let mut config = pool.resource["config"].clone();
    let mut patch = serde_json::Map::new();
    for (key, _) in UPDATABLE {
        let value = &request[*key];
        if value.is_null() {
            continue;
        }
        match *key {
            "nodeVersion" => {
                let version = match value.as_str().unwrap_or("") {
                    "" | "-" => master.as_str().unwrap_or("").to_string(),
                    v => server_config::resolve_in(offer, v, None, VersionKind::Node)?,
                };
                super::skew::check_node_version(&version, master.as_str().unwrap_or(""))?;
                patch.insert("version".into(), json!(version));
            }
            "locations" => {
                let zones = string_list(value);
                let mut probe = config.clone();
                rules::check_machine(&mut probe, &zones)?;
                if pool.resource["placementPolicy"]["type"] == json!("COMPACT") && zones.len() != 1
                {
                    return Err(bad_request(format!(
                        "Compact placement policy requires exactly one zone in node pool \
                         locations, got {}.",
                        zones.len()
                    )));
                }
                patch.insert("locations".into(), value.clone());
            }
            "upgradeSettings" => {
                super::upgrades::check_settings(value)?;
                patch.insert((*key).into(), value.clone());
            }
            "queuedProvisioning" | "nodeDrainConfig" => {
                patch.insert((*key).into(), value.clone());
            }
            "nodeNetworkConfig" => {
                let profile = &value["acceleratorNetworkProfile"];
                if !profile.is_null()
                    && *profile != pool.resource["networkConfig"]["acceleratorNetworkProfile"]
                {
                    // "Immutable" in the container v1 discovery document.
                    return Err(bad_request(
                        "The accelerator network profile of an existing node pool cannot be \
                         changed; create a new node pool instead.",
                    ));
                }
                let mut network = pool.resource["networkConfig"].clone();
                super::merge(&mut network, value);
                patch.insert("networkConfig".into(), network);
            }
            "tags" => config["tags"] = value["tags"].clone(),
            "taints" => config["taints"] = value["taints"].clone(),
            "labels" => config["labels"] = value["labels"].clone(),
            "resourceLabels" => {
                let mut labels = value["labels"].clone();
                labels["goog-gke-node-pool-provisioning-model"] =
                    config["resourceLabels"]["goog-gke-node-pool-provisioning-model"].clone();
                config["resourceLabels"] = labels;
            }
            "diskSizeGb" => config["diskSizeGb"] = json!(count_of(value)),
            "machineType" => {
                let mut probe = config.clone();
                probe["machineType"] = value.clone();
                probe["accelerators"] = Value::Null;
                rules::check_machine(&mut probe, &pool.zones())?;
                config["machineType"] = value.clone();
            }
            other => config[other] = value.clone(),
        }
    }
    patch.insert("config".into(), config);
    Ok(Value::Object(patch))
}

/// `POST .../nodePools/{pool}:setSize|:setAutoscaling|:setManagement`.
pub async fn post_method(
    State(shared): State<Arc<Shared>>,
    Path((project, location, cluster_name, segment)): Path<(String, String, String, String)>,
    query: Query,
    body: Bytes,
) -> GcpResult<Response> {
    let Some((pool_name, method)) = segment.split_once(':') else {
        return Err(GcpError::unrouted());
    };
    let mut request = http::parse_json(&body)?;
    let op_type = match method {
        "setSize" => "SET_NODE_POOL_SIZE",
        "setAutoscaling" => {
            crate::enums::normalize(
                &mut request,
                enum_tables::SET_NODE_POOL_AUTOSCALING_REQUEST,
                "",
            )?;
            "UPDATE_CLUSTER"
        }
        "setManagement" => "SET_NODE_POOL_MANAGEMENT",
        // A verb GKE has but the simulator does not serve (`rollback`, ...) is 501; any other is
        // GKE's 404.
        other => {
            return Err(crate::discovery::unserved(
                "POST",
                &format!(
                    "/container/v1/projects/{project}/locations/{location}/clusters/{cluster_name}/nodePools/{pool_name}:{other}"
                ),
            ));
        }
    };
    if method == "setSize" {
        let size = &request["nodeCount"];
        if size.as_i64().is_some_and(|n| n < 0) {
            return Err(bad_request("Node_count must be non-negative."));
        }
    }
    let op = shared.with_world(|world, cx| {
        // Checked before the resize starts, so the usage does not count the VMs it adds yet.
        let quota_error = if method == "setSize" {
            let count = count_of(&request["nodeCount"]) as u32;
            resize_quota(
                world,
                cx,
                &project,
                &location,
                &cluster_name,
                pool_name,
                count,
            )
        } else {
            None
        };
        let op = start_change(
            world,
            cx,
            &project,
            &location,
            &cluster_name,
            pool_name,
            op_type,
            |p| {
                let pool = p.name.clone();
                Ok(match method {
                    "setSize" => (
                        Effect::SetNodePoolSize {
                            pool,
                            count: count_of(&request["nodeCount"]) as u32,
                        },
                        if is_gpu(p) {
                            "container.nodePool.setSize.gpu"
                        } else {
                            "container.nodePool.setSize"
                        },
                    ),
                    "setAutoscaling" => (
                        Effect::UpdateNodePool {
                            pool,
                            patch: json!({"autoscaling": request["autoscaling"]}),
                        },
                        "container.nodePool.setAutoscaling",
                    ),
                    _ => (
                        Effect::UpdateNodePool {
                            pool,
                            patch: json!({"management": request["management"]}),
                        },
                        "container.nodePool.setManagement",
                    ),
                })
            },
            "update",
        )?;
        if method == "setSize" {
            let count = count_of(&request["nodeCount"]) as u32;
            // A GPU pool's resize brings its new nodes up as a create does.
            if let Some(pool) = world
                .container
                .clusters
                .get(&cluster_key(&project, &location, &cluster_name))
                .and_then(|c| c.pool(pool_name))
                .filter(|p| is_gpu(p))
            {
                let zones = pool.groups.len().max(1) as u64;
                let added = u64::from(count.saturating_sub(pool.node_count)) * zones;
                operations::scale_for_nodes(world, &op, added);
            }
            let over_quota = quota_error.is_some();
            if let Some(error) = quota_error {
                operations::fail_at_end(world, cx, &op, error);
            }
            grow(
                world,
                cx,
                (&project, &location, &cluster_name),
                pool_name,
                count,
                &op,
                over_quota,
            );
        }
        Ok(op)
    })?;
    Ok(http::proto_json(op, enum_tables::OPERATION, &query))
}

/// A resize that adds VMs outside any reservation needs their quota; when the project lacks it,
/// the resize operation is to fail at its end with the returned [`quota_op_error`] and the pool
/// keeps its size (GKE does not check a resize up front: its instance groups fail to create the
/// VMs).
fn resize_quota(
    world: &World,
    cx: &Ctx,
    project: &str,
    location: &str,
    cluster_name: &str,
    pool_name: &str,
    count: u32,
) -> Option<OpError> {
    let key = super::cluster_key(project, location, cluster_name);
    let pool = world
        .container
        .clusters
        .get(&key)
        .and_then(|c| c.pool(pool_name))?;
    let zones = pool.groups.len().max(1) as u64;
    let wanted = u64::from(count) * zones;
    let have = u64::from(pool.total_nodes());
    if wanted <= have {
        return None;
    }
    let demand = pool_demand(pool, &region_of(location), wanted - have);
    let zone = pool.groups.keys().next().cloned().unwrap_or_default();
    let node = format!(
        "{}-{}-{:04}",
        node_prefix(cluster_name, pool_name),
        pool.groups
            .get(&zone)
            .map(|g| g.hash.clone())
            .unwrap_or_default(),
        have + 1
    );
    quotas::check(world, cx.quotas, project, &demand)
        .first()
        .map(|first| quota_op_error(first, &node, wanted - have))
}

/// A resize books the VMs it adds at once: in the reservation a pool consumes, where too few fail
/// the resize operation `op` when it ends; else, unless the project lacks their quota
/// (`over_quota`), from the zones' capacity, where too few make the operation wait for more.
/// Shrinking gives VMs back when the operation ends.
fn grow(
    world: &mut World,
    cx: &Ctx,
    (project, location, cluster_name): (&str, &str, &str),
    pool_name: &str,
    count: u32,
    op: &Value,
    over_quota: bool,
) {
    let key = super::cluster_key(project, location, cluster_name);
    let Some(pool) = world
        .container
        .clusters
        .get(&key)
        .and_then(|c| c.pool(pool_name))
    else {
        return;
    };
    if pool.reserved.is_empty() {
        if over_quota {
            return;
        }
        let config = &cx.capacity;
        let (complete, _) = capacity::book(world, config, &key, pool_name, count);
        if !complete {
            operations::wait_for_capacity(world, cx, op);
        }
        return;
    }
    let mut pool = pool.clone();
    let shortfall = reservations::book(world, cluster_name, &mut pool, count);
    if let Some(stored) = world
        .container
        .clusters
        .get_mut(&key)
        .and_then(|c| c.pool_mut(pool_name))
    {
        stored.reserved = pool.reserved;
    }
    if let Some(shortfall) = shortfall {
        operations::fail_later(world, cx, op, shortfall);
    }
}
