//! Clusters: create (inline node pools or the legacy `initialNodeCount`/`nodeConfig` default
//! pool), get, list, update (exactly one `desired*` field), delete, and the `:set*` methods.

use super::capacity;
use super::maintenance;
use super::node_pools::{self, PoolContext, create_fault};
use super::operations::{self, Effect};
use super::reservations;
use super::rules::{self, count_of, last_segment};
use super::server_config::{self, VersionKind};
use super::skew;
use super::{
    Cluster, bad_request, cluster_key, enum_tables, fingerprint, is_zone, merge, not_found,
    region_of, self_link, string_list,
};
use crate::error::{GcpError, GcpResult};
use crate::http::{self, Query};
use crate::kube;
use crate::shared::Ctx;
use crate::shared::Shared;
use crate::world::World;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::response::Response;
use base64::Engine;
use serde_json::{Value, json};
use std::sync::Arc;

/// `GET .../clusters/{cluster}`.
pub async fn get(
    State(shared): State<Arc<Shared>>,
    Path((project, location, name)): Path<(String, String, String)>,
    query: Query,
) -> GcpResult<Response> {
    let cluster = shared.read_world(|world, _| {
        node_pools::cluster(world, &project, &location, &name).map(Cluster::to_json)
    })?;
    Ok(http::proto_json(cluster, enum_tables::CLUSTER, &query))
}

/// `GET .../clusters` (`locations/-` lists every location).
pub async fn list(
    State(shared): State<Arc<Shared>>,
    Path((project, location)): Path<(String, String)>,
    query: Query,
) -> GcpResult<Response> {
    if location != "-" {
        rules::check_location(&location)?;
    }
    let mut clusters: Vec<Value> = shared.read_world(|world, _| {
        world
            .container
            .clusters
            .values()
            .filter(|c| c.project == project && (location == "-" || c.location == location))
            .map(Cluster::to_json)
            .collect()
    });
    if query.enum_ints() {
        for cluster in &mut clusters {
            crate::enums::encode_ints(cluster, enum_tables::CLUSTER);
        }
    }
    Ok(http::json(json!({ "clusters": clusters })))
}

/// `POST .../clusters`.
pub async fn create(
    State(shared): State<Arc<Shared>>,
    Path((project, location)): Path<(String, String)>,
    query: Query,
    body: Bytes,
) -> GcpResult<Response> {
    let mut body = http::parse_json(&body)?;
    let mut cluster = body["cluster"].take();
    if !cluster.is_object() {
        return Err(bad_request("Cluster field is required."));
    }
    crate::enums::normalize(&mut cluster, enum_tables::CLUSTER, "cluster")?;
    rules::check_location(&location)?;
    let name = cluster["name"].as_str().unwrap_or("").to_string();
    rules::check_name("cluster", &name)?;
    let arc = shared.clone();
    let op = shared.with_world(|world, cx| {
        let key = cluster_key(&project, &location, &name);
        if world.container.clusters.contains_key(&key) {
            return Err(GcpError::already_exists(format!("Already exists: {key}.")));
        }
        let (resource, pools) = build(world, &project, &location, cluster)?;
        let first = pools
            .first()
            .map(|p| p.resource.clone())
            .unwrap_or_default();
        let zones = string_list(&first["locations"]);
        let first_zone = zones.first().cloned().unwrap_or_default();
        let failure = create_fault(
            cx.scripted_fault("container.cluster", "create"),
            &project,
            &first_zone,
            &format!("{}-0001", node_pools::node_prefix(&name, "default-pool")),
            first["config"]["machineType"].as_str().unwrap_or(""),
            count_of(&first["config"]["accelerators"][0]["acceleratorCount"]),
            count_of(&first["initialNodeCount"]) * zones.len() as u64,
        )?;
        // The pools' VMs must fit the project's quotas, as for a node pool create.
        let region = crate::geo::region_of_zone(&first_zone)
            .unwrap_or(&location)
            .to_string();
        let mut demand = vec![];
        let mut vms = 0;
        for pool in &pools {
            let n = count_of(&pool.resource["initialNodeCount"]) * pool.groups.len() as u64;
            demand.extend(node_pools::pool_demand(pool, &region, n));
            vms += n;
        }
        let first_node = format!(
            "{}-{}-0001",
            node_pools::node_prefix(&name, pools.first().map_or("default-pool", |p| &p.name)),
            pools
                .first()
                .and_then(|p| p.groups.values().next())
                .map(|g| g.hash.clone())
                .unwrap_or_default()
        );
        let quota_failure =
            node_pools::quota_check(world, cx, &project, &demand, &first_node, vms)?;
        let failure = failure.or(quota_failure);
        let spec = kube::ClusterSpec {
            key: key.clone(),
            name: name.clone(),
            location: location.clone(),
            version: resource["currentMasterVersion"]
                .as_str()
                .unwrap_or("")
                .to_string(),
            multi_networking: rules::multi_networking(&resource),
            beta_apis: super::beta_apis::enabled(&resource),
        };
        let provisioned = kube::provision(&arc, world, spec).map_err(|e| {
            GcpError::new(
                500,
                "INTERNAL",
                "backendError",
                format!("Internal error: {e}"),
            )
        })?;
        let mut stored = Cluster {
            project: project.clone(),
            location: location.clone(),
            name: name.clone(),
            resource,
            pools,
        };
        connect(&mut stored.resource, &provisioned, world, cx);
        // Pools that consume a reservation book their VMs now; a pool that gets too few fails the
        // cluster's creation (and gives everything back when it ends).
        let mut shortfall = None;
        for pool in &mut stored.pools {
            let wanted = count_of(&pool.resource["initialNodeCount"]) as u32;
            let short = reservations::book(world, &name, pool, wanted);
            shortfall = shortfall.or(short);
        }
        let failure = failure.or(shortfall);
        let pools: Vec<(String, u32)> = stored
            .pools
            .iter()
            .map(|p| {
                (
                    p.name.clone(),
                    count_of(&p.resource["initialNodeCount"]) as u32,
                )
            })
            .collect();
        world.container.clusters.insert(key.clone(), stored);
        // The other pools take their VMs from the zones' capacity; too few make the creation
        // wait for more.
        let mut complete = true;
        if failure.is_none() {
            for (pool, wanted) in pools {
                let config = &cx.capacity;
                complete &= capacity::book(world, config, &key, &pool, wanted).0;
            }
        }
        let op = operations::start(
            world,
            cx,
            &project,
            &location,
            "CREATE_CLUSTER",
            key,
            Effect::CreateCluster,
            "container.cluster.create",
            failure,
        );
        if !complete {
            operations::wait_for_capacity(world, cx, &op);
        }
        Ok(op)
    })?;
    Ok(http::proto_json(op, enum_tables::OPERATION, &query))
}

/// Puts the Kubernetes endpoint, CA and the other generated fields into a new cluster.
fn connect(resource: &mut Value, provisioned: &kube::Provisioned, world: &mut World, cx: &Ctx) {
    let ca = base64::engine::general_purpose::STANDARD.encode(&provisioned.ca_pem);
    let endpoint = provisioned.endpoint.clone();
    let private = format!("10.{}.0.2", 100 + world.next_seq() % 100);
    resource["endpoint"] = json!(endpoint);
    merge(
        &mut resource["masterAuth"],
        &json!({"clusterCaCertificate": ca, "clientCertificateConfig": {}}),
    );
    merge(
        &mut resource["privateClusterConfig"],
        &json!({"privateEndpoint": private, "publicEndpoint": endpoint}),
    );
    let authorized = resource["masterAuthorizedNetworksConfig"].clone();
    merge(
        &mut resource["controlPlaneEndpointsConfig"],
        &json!({"ipEndpointsConfig": {
            "enabled": true,
            "enablePublicEndpoint": true,
            "privateEndpoint": private,
            "publicEndpoint": endpoint,
            "authorizedNetworksConfig": authorized,
        }}),
    );
    resource["createTime"] = json!(world.rfc3339(cx.now));
    resource["id"] = json!(world.hex(64));
    resource["etag"] = json!(fingerprint(&world.hex(8)));
}

/// Checks a new cluster and fills in GKE's defaults; returns the resource and its pools.
fn build(
    world: &mut World,
    project: &str,
    location: &str,
    mut cluster: Value,
) -> GcpResult<(Value, Vec<super::NodePool>)> {
    let name = cluster["name"].as_str().unwrap_or("").to_string();
    let region = region_of(location);
    // Node pools: inline, or the legacy default pool.
    let has_pools = cluster["nodePools"]
        .as_array()
        .is_some_and(|a| !a.is_empty());
    let legacy_count = count_of(&cluster["initialNodeCount"]);
    let legacy = legacy_count > 0 || cluster["nodeConfig"].is_object();
    let pools: Vec<Value> = match (has_pools, legacy) {
        (true, true) => {
            return Err(bad_request(
                "Cluster.initial_node_count and Cluster.node_config cannot be set when \
                 Cluster.node_pools is set; use node_pools only.",
            ));
        }
        (true, false) => cluster["nodePools"].as_array().cloned().unwrap_or_default(),
        (false, _) if legacy_count == 0 => {
            return Err(bad_request(
                "Cluster.initial_node_count must be greater than zero.",
            ));
        }
        (false, _) => vec![json!({
            "name": "default-pool",
            "initialNodeCount": legacy_count,
            "config": cluster["nodeConfig"].clone(),
        })],
    };
    if let Some(obj) = cluster.as_object_mut() {
        obj.remove("nodePools");
        obj.remove("initialNodeCount");
    }
    // Network and subnetwork.
    let network_name = cluster["network"]
        .as_str()
        .or(cluster["networkConfig"]["network"].as_str())
        .map(|n| last_segment(n).to_string())
        .unwrap_or_else(|| "default".to_string());
    rules::network(world, project, &network_name)?;
    let subnet_name = cluster["subnetwork"]
        .as_str()
        .or(cluster["networkConfig"]["subnetwork"].as_str())
        .map(|n| last_segment(n).to_string())
        .unwrap_or_else(|| network_name.clone());
    let subnet = rules::subnetwork(world, project, &region, &network_name, &subnet_name)?.clone();
    let policy = &mut cluster["ipAllocationPolicy"];
    if policy["useIpAliases"].is_null() {
        policy["useIpAliases"] = json!(true);
    }
    let pods = match policy["clusterSecondaryRangeName"].as_str() {
        Some(range) => rules::secondary_range(&subnet, &subnet_name, range)?,
        None => format!("10.{}.0.0/14", 4 * (world.next_seq() % 60)),
    };
    let services = match policy["servicesSecondaryRangeName"].as_str() {
        Some(range) => rules::secondary_range(&subnet, &subnet_name, range)?,
        None => "34.118.224.0/20".to_string(),
    };
    merge(
        policy,
        &json!({
            "clusterIpv4Cidr": pods, "clusterIpv4CidrBlock": pods,
            "servicesIpv4Cidr": services, "servicesIpv4CidrBlock": services,
            "stackType": "IPV4",
        }),
    );
    cluster["clusterIpv4Cidr"] = json!(pods);
    cluster["servicesIpv4Cidr"] = json!(services);
    cluster["network"] = json!(network_name);
    cluster["subnetwork"] = json!(subnet_name);
    merge(
        &mut cluster["networkConfig"],
        &json!({
            "network": format!("projects/{project}/global/networks/{network_name}"),
            "subnetwork": format!("projects/{project}/regions/{region}/subnetworks/{subnet_name}"),
        }),
    );
    rules::check_multi_networking(&cluster)?;
    // Release channel and version.
    if cluster["releaseChannel"]["channel"].is_null() {
        cluster["releaseChannel"] = json!({"channel": "REGULAR"});
    }
    let channel = channel_of(&cluster);
    let offer = server_config::offer(world);
    let version = server_config::resolve_in(
        &offer,
        cluster["initialClusterVersion"].as_str().unwrap_or(""),
        channel.as_deref(),
        VersionKind::Master,
    )?;
    cluster["initialClusterVersion"] = json!(version);
    cluster["currentMasterVersion"] = json!(version);
    if !cluster["enableK8sBetaApis"].is_null() {
        let apis = super::beta_apis::check(&cluster["enableK8sBetaApis"]["enabledApis"], &version)?;
        cluster["enableK8sBetaApis"] = json!({ "enabledApis": apis });
    }
    cluster["currentNodeVersion"] = json!(version);
    if !cluster["maintenancePolicy"].is_null() {
        let support = maintenance::Support::of(world);
        cluster["maintenancePolicy"] =
            maintenance::check_policy(&cluster["maintenancePolicy"], &version, &support)?;
    }
    // Locations.
    let mut zones = string_list(&cluster["locations"]);
    if zones.is_empty() {
        zones = if is_zone(location) {
            vec![location.to_string()]
        } else {
            crate::geo::zones_of(location)
                .iter()
                .take(3)
                .map(|z| z.to_string())
                .collect()
        };
    }
    for zone in &zones {
        if crate::geo::region_of_zone(zone) != Some(region.as_str()) {
            return Err(bad_request(format!(
                "Location \"{zone}\" is not a zone of the cluster's region \"{region}\"."
            )));
        }
    }
    cluster["locations"] = json!(zones);
    fill_defaults(&mut cluster, project, location, &name);
    // Node pools, checked with the finished cluster as their context.
    let mut prepared: Vec<super::NodePool> = vec![];
    for pool in pools {
        let context = PoolContext {
            project,
            location,
            cluster_name: &name,
            cluster: &cluster,
        };
        let pool = node_pools::prepare(world, &context, pool)?;
        if prepared.iter().any(|p| p.name == pool.name) {
            return Err(bad_request(format!(
                "Node pool \"{}\" is specified more than once.",
                pool.name
            )));
        }
        prepared.push(pool);
    }
    if let Some(first) = prepared.first() {
        cluster["nodeConfig"] = first.resource["config"].clone();
    }
    Ok((cluster, prepared))
}

/// The release channel of a cluster resource, `None` when it is in no channel.
fn channel_of(cluster: &Value) -> Option<String> {
    match cluster["releaseChannel"]["channel"].as_str() {
        None | Some("UNSPECIFIED") => None,
        Some(c) => Some(c.to_string()),
    }
}

fn fill_defaults(cluster: &mut Value, project: &str, location: &str, name: &str) {
    let mut addons = json!({
        "gcePersistentDiskCsiDriverConfig": {"enabled": true},
        "kubernetesDashboard": {"disabled": true},
        "networkPolicyConfig": {"disabled": true},
    });
    // A request without add-ons keeps GKE's defaults (merging a missing object would drop them).
    if cluster["addonsConfig"].is_object() {
        merge(&mut addons, &cluster["addonsConfig"]);
    }
    cluster["addonsConfig"] = addons;
    let defaults = json!({
        "loggingService": "logging.googleapis.com/kubernetes",
        "monitoringService": "monitoring.googleapis.com/kubernetes",
        "legacyAbac": {},
        "nodeIpv4CidrSize": 24,
        "shieldedNodes": {"enabled": true},
        "databaseEncryption": {"state": "DECRYPTED", "currentState": "CURRENT_STATE_DECRYPTED"},
        "masterAuthorizedNetworksConfig": {"gcpPublicCidrsAccessEnabled": true},
        "defaultMaxPodsConstraint": {"maxPodsPerNode": "110"},
    });
    for (k, v) in defaults.as_object().into_iter().flatten() {
        if cluster[k].is_null() {
            cluster[k] = v.clone();
        }
    }
    let labels = cluster["resourceLabels"].clone();
    cluster["labelFingerprint"] = json!(label_fingerprint(&labels));
    cluster["selfLink"] = json!(self_link(&cluster_key(project, location, name)));
    cluster["zone"] = json!(location);
    cluster["location"] = json!(location);
    cluster["status"] = json!("PROVISIONING");
}

/// GKE's 8-hex label fingerprint.
fn label_fingerprint(labels: &Value) -> String {
    fingerprint(&serde_json::to_string(labels).unwrap_or_default())
}

/// `DELETE .../clusters/{cluster}`.
pub async fn delete(
    State(shared): State<Arc<Shared>>,
    Path((project, location, name)): Path<(String, String, String)>,
    query: Query,
) -> GcpResult<Response> {
    let op = shared.with_world(|world, cx| {
        let cluster = node_pools::cluster(world, &project, &location, &name)?.clone();
        rules::check_no_running_operation(world, &cluster)?;
        let failure = node_pools::change_fault(cx.scripted_fault("container.cluster", "delete"))?;
        let key = cluster.key();
        if let Some(c) = world.container.clusters.get_mut(&key) {
            c.set_status("STOPPING");
            for pool in &mut c.pools {
                pool.set_status("STOPPING");
            }
        }
        Ok(operations::start(
            world,
            cx,
            &project,
            &location,
            "DELETE_CLUSTER",
            key,
            Effect::DeleteCluster,
            "container.cluster.delete",
            failure,
        ))
    })?;
    Ok(http::proto_json(op, enum_tables::OPERATION, &query))
}

/// What a cluster change does when it finishes.
enum Change {
    /// Replace these top-level fields of the cluster.
    Cluster(Value),
    /// Replace these top-level fields of a pool.
    Pool(String, Value),
}

/// Starts a change: one-operation rule, scripted fault, RECONCILING, operation.
fn start_change(
    world: &mut World,
    cx: &Ctx,
    path: (&str, &str, &str),
    op_type: &str,
    change: impl FnOnce(&Cluster) -> GcpResult<Change>,
) -> GcpResult<Value> {
    let (project, location, name) = path;
    let cluster = node_pools::cluster(world, project, location, name)?.clone();
    rules::check_no_running_operation(world, &cluster)?;
    let change = change(&cluster)?;
    let failure = node_pools::change_fault(cx.scripted_fault("container.cluster", "update"))?;
    let key = cluster.key();
    let (effect, target) = match change {
        Change::Cluster(patch) => {
            if let Some(c) = world.container.clusters.get_mut(&key) {
                c.set_status("RECONCILING");
            }
            (Effect::UpdateCluster { patch }, key.clone())
        }
        Change::Pool(pool, patch) => {
            if let Some(p) = world
                .container
                .clusters
                .get_mut(&key)
                .and_then(|c| c.pool_mut(&pool))
            {
                p.set_status("RECONCILING");
            }
            let target = format!("{key}/nodePools/{pool}");
            (Effect::UpdateNodePool { pool, patch }, target)
        }
    };
    Ok(operations::start(
        world,
        cx,
        project,
        location,
        op_type,
        target,
        effect,
        "container.cluster.update",
        failure,
    ))
}

/// An add-ons update: every add-on message present replaces that add-on's configuration
/// wholesale. Proto3 JSON leaves out default values, so `{"gcpFilestoreCsiDriverConfig": {}}` —
/// what the Rust client sends for `enabled: false` — turns the add-on off, as on real GKE.
fn replace_addons(current: &Value, update: &Value) -> Value {
    let mut addons = current.clone();
    if let (Some(target), Some(changes)) = (addons.as_object_mut(), update.as_object()) {
        for (addon, config) in changes {
            target.insert(addon.clone(), config.clone());
        }
    } else if addons.is_null() {
        addons = update.clone();
    }
    addons
}

/// `desiredFooBar` → `fooBar`.
fn undesired(key: &str) -> String {
    let rest = key.strip_prefix("desired").unwrap_or(key);
    let mut chars = rest.chars();
    match chars.next() {
        Some(first) => first.to_ascii_lowercase().to_string() + chars.as_str(),
        None => String::new(),
    }
}

/// `desired*` fields that live in `networkConfig`.
const NETWORK_FIELDS: &[&str] = &[
    "desiredDatapathProvider",
    "desiredEnableMultiNetworking",
    "desiredPrivateIpv6GoogleAccess",
    "desiredDnsConfig",
    "desiredGatewayApiConfig",
    "desiredInTransitEncryptionConfig",
    "desiredDefaultSnatStatus",
    "desiredEnableFqdnNetworkPolicy",
    "desiredEnableCiliumClusterwideNetworkPolicy",
    "desiredServiceExternalIpsConfig",
    "desiredDisableL4LbFirewallReconciliation",
    "desiredDefaultEnablePrivateNodes",
];

/// The change a `ClusterUpdate` with exactly one field makes, and its operation type.
fn plan_update(
    offer: &server_config::Offer,
    support: &maintenance::Support,
    cluster: &Cluster,
    update: &Value,
) -> GcpResult<(Change, &'static str)> {
    let fields: Vec<(&String, &Value)> = update
        .as_object()
        .into_iter()
        .flatten()
        .filter(|(k, v)| !v.is_null() && !matches!(k.as_str(), "desiredNodePoolId" | "etag"))
        .collect();
    let [(key, value)] = fields.as_slice() else {
        return Err(bad_request(if fields.is_empty() {
            "Must specify a field to update.".to_string()
        } else {
            format!(
                "At most one update can be applied to a cluster at a time; got {} fields.",
                fields.len()
            )
        }));
    };
    let resource = &cluster.resource;
    let pool_id = update["desiredNodePoolId"].as_str().unwrap_or("");
    let pool = || {
        cluster
            .pool(pool_id)
            .map(|p| p.name.clone())
            .ok_or_else(|| not_found(&format!("{}/nodePools/{pool_id}", cluster.key())))
    };
    let changed = |field: &str, new: Value| Change::Cluster(json!({ field: new }));
    let deep = |field: &str| {
        let mut current = resource[field].clone();
        merge(&mut current, value);
        current
    };
    Ok(match key.as_str() {
        "desiredMasterVersion" => {
            let current = resource["currentMasterVersion"].as_str().unwrap_or("");
            let version = server_config::resolve_upgrade_in(
                offer,
                value.as_str().unwrap_or(""),
                channel_of(resource).as_deref(),
                current,
            )?;
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
            skew::check_master_change(current, &version, &pools)?;
            let mut patch = json!({"currentMasterVersion": version});
            if let Some(policy) =
                maintenance::follow_minor(&resource["maintenancePolicy"], &version, support)
            {
                patch["maintenancePolicy"] = policy;
            }
            (Change::Cluster(patch), "UPGRADE_MASTER")
        }
        "desiredNodeVersion" => {
            let version = match value.as_str().unwrap_or("") {
                "" | "-" => resource["currentMasterVersion"]
                    .as_str()
                    .unwrap_or("")
                    .to_string(),
                v => server_config::resolve_in(offer, v, None, VersionKind::Node)?,
            };
            let pool = pool()?;
            skew::check_node_version(
                &version,
                resource["currentMasterVersion"].as_str().unwrap_or(""),
            )?;
            (
                Change::Pool(pool, json!({"version": version})),
                "UPGRADE_NODES",
            )
        }
        "desiredNodePoolAutoscaling" => (
            Change::Pool(pool()?, json!({"autoscaling": value})),
            "UPDATE_CLUSTER",
        ),
        "desiredMasterAuthorizedNetworksConfig" => {
            let mut endpoints = resource["controlPlaneEndpointsConfig"].clone();
            endpoints["ipEndpointsConfig"]["authorizedNetworksConfig"] = (*value).clone();
            (
                Change::Cluster(json!({
                    "masterAuthorizedNetworksConfig": value,
                    "controlPlaneEndpointsConfig": endpoints,
                })),
                "UPDATE_CLUSTER",
            )
        }
        "desiredControlPlaneEndpointsConfig" => {
            let endpoints = deep("controlPlaneEndpointsConfig");
            let authorized = endpoints["ipEndpointsConfig"]["authorizedNetworksConfig"].clone();
            (
                Change::Cluster(json!({
                    "controlPlaneEndpointsConfig": endpoints,
                    "masterAuthorizedNetworksConfig": authorized,
                })),
                "UPDATE_CLUSTER",
            )
        }
        "desiredLocations" => {
            let region = cluster.region();
            for zone in string_list(value) {
                if crate::geo::region_of_zone(&zone) != Some(region.as_str()) {
                    return Err(bad_request(format!(
                        "Location \"{zone}\" is not a zone of the cluster's region \"{region}\"."
                    )));
                }
            }
            (changed("locations", (*value).clone()), "UPDATE_CLUSTER")
        }
        "desiredEnablePrivateEndpoint" => {
            let mut private = resource["privateClusterConfig"].clone();
            private["enablePrivateEndpoint"] = (*value).clone();
            (changed("privateClusterConfig", private), "UPDATE_CLUSTER")
        }
        "desiredL4ilbSubsettingConfig" | "desiredIntraNodeVisibilityConfig" => {
            let field = if key.as_str() == "desiredL4ilbSubsettingConfig" {
                "enableL4ilbSubsetting"
            } else {
                "enableIntraNodeVisibility"
            };
            let mut network = resource["networkConfig"].clone();
            network[field] = value["enabled"].clone();
            (changed("networkConfig", network), "UPDATE_CLUSTER")
        }
        network_field if NETWORK_FIELDS.contains(&network_field) => {
            let mut network = resource["networkConfig"].clone();
            network[undesired(network_field)] = (*value).clone();
            let mut probe = resource.clone();
            probe["networkConfig"] = network.clone();
            rules::check_multi_networking(&probe)?;
            (changed("networkConfig", network), "UPDATE_CLUSTER")
        }
        "desiredK8sBetaApis" | "enableK8sBetaApis" => (
            changed(
                "enableK8sBetaApis",
                super::beta_apis::enable_more(resource, value)?,
            ),
            "UPDATE_CLUSTER",
        ),
        "desiredAddonsConfig" => (
            changed(
                "addonsConfig",
                replace_addons(&resource["addonsConfig"], value),
            ),
            "UPDATE_CLUSTER",
        ),
        other => {
            let field = undesired(other);
            let new = if value.is_object() {
                deep(&field)
            } else {
                (*value).clone()
            };
            (changed(&field, new), "UPDATE_CLUSTER")
        }
    })
}

/// `PUT .../clusters/{cluster}` (`UpdateClusterRequest`).
pub async fn update(
    State(shared): State<Arc<Shared>>,
    Path((project, location, name)): Path<(String, String, String)>,
    query: Query,
    body: Bytes,
) -> GcpResult<Response> {
    let mut request = http::parse_json(&body)?;
    crate::enums::normalize(&mut request, enum_tables::UPDATE_CLUSTER_REQUEST, "")?;
    let update = request["update"].clone();
    let op = shared.with_world(|world, cx| {
        let cluster = node_pools::cluster(world, &project, &location, &name)?.clone();
        let offer = server_config::offer(world);
        let support = maintenance::Support::of(world);
        let (change, op_type) = plan_update(&offer, &support, &cluster, &update)?;
        start_change(world, cx, (&project, &location, &name), op_type, |_| {
            Ok(change)
        })
    })?;
    Ok(http::proto_json(op, enum_tables::OPERATION, &query))
}

/// `POST .../clusters/{cluster}:setResourceLabels|:setMaintenancePolicy|:setAddons|...`.
pub async fn post_method(
    State(shared): State<Arc<Shared>>,
    Path((project, location, segment)): Path<(String, String, String)>,
    query: Query,
    body: Bytes,
) -> GcpResult<Response> {
    let Some((name, method)) = segment.split_once(':') else {
        return Err(GcpError::unrouted());
    };
    let mut request = http::parse_json(&body)?;
    let table = match method {
        "setMaintenancePolicy" => enum_tables::SET_MAINTENANCE_POLICY_REQUEST,
        "setAddons" => enum_tables::SET_ADDONS_CONFIG_REQUEST,
        "setNetworkPolicy" => enum_tables::SET_NETWORK_POLICY_REQUEST,
        "setMasterAuth" => enum_tables::SET_MASTER_AUTH_REQUEST,
        _ => &[],
    };
    crate::enums::normalize(&mut request, table, "")?;
    let op_type = match method {
        "setResourceLabels" => "SET_LABELS",
        "setMaintenancePolicy" => "SET_MAINTENANCE_POLICY",
        "setNetworkPolicy" => "SET_NETWORK_POLICY",
        "setMasterAuth" => "SET_MASTER_AUTH",
        "updateMaster" => "UPGRADE_MASTER",
        "setAddons" | "setLegacyAbac" | "setLogging" | "setMonitoring" | "setLocations"
        | "startIpRotation" | "completeIpRotation" => "UPDATE_CLUSTER",
        // A verb GKE has but the simulator does not serve is 501; any other is GKE's 404.
        other => {
            return Err(crate::discovery::unserved(
                "POST",
                &format!(
                    "/container/v1/projects/{project}/locations/{location}/clusters/{name}:{other}"
                ),
            ));
        }
    };
    let op = shared.with_world(|world, cx| {
        let offer = server_config::offer(world);
        let support = maintenance::Support::of(world);
        start_change(world, cx, (&project, &location, name), op_type, |cluster| {
            set_method(&offer, &support, cluster, method, &request)
        })
    })?;
    Ok(http::proto_json(op, enum_tables::OPERATION, &query))
}

/// The change one of the `:set*` methods makes.
fn set_method(
    offer: &server_config::Offer,
    support: &maintenance::Support,
    cluster: &Cluster,
    method: &str,
    request: &Value,
) -> GcpResult<Change> {
    let resource = &cluster.resource;
    let patch = match method {
        "setResourceLabels" => {
            if let Some(given) = request["labelFingerprint"].as_str()
                && !given.is_empty()
                && json!(given) != resource["labelFingerprint"]
            {
                return Err(GcpError::failed_precondition(
                    "Labels could not be set due to fingerprint mismatch; try again with the \
                     current labelFingerprint.",
                ));
            }
            let labels = request["resourceLabels"].clone();
            json!({"labelFingerprint": label_fingerprint(&labels), "resourceLabels": labels})
        }
        "setMaintenancePolicy" => {
            let given = &request["maintenancePolicy"];
            maintenance::check_resource_version(given, &resource["maintenancePolicy"])?;
            let master = resource["currentMasterVersion"].as_str().unwrap_or("");
            json!({ "maintenancePolicy": maintenance::check_policy(given, master, support)? })
        }
        "setAddons" => {
            json!({ "addonsConfig": replace_addons(&resource["addonsConfig"], &request["addonsConfig"]) })
        }
        "setLegacyAbac" => json!({"legacyAbac": {"enabled": request["enabled"]}}),
        "setLogging" => json!({"loggingService": request["loggingService"]}),
        "setMonitoring" => json!({"monitoringService": request["monitoringService"]}),
        "setNetworkPolicy" => json!({"networkPolicy": request["networkPolicy"]}),
        "setLocations" => {
            let update = json!({"desiredLocations": request["locations"]});
            return plan_update(offer, support, cluster, &update).map(|(change, _)| change);
        }
        "updateMaster" => {
            let update = json!({"desiredMasterVersion": request["masterVersion"]});
            return plan_update(offer, support, cluster, &update).map(|(change, _)| change);
        }
        _ => json!({}),
    };
    Ok(Change::Cluster(patch))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_empty_addon_message_turns_the_addon_off() {
        let current = json!({
            "gcpFilestoreCsiDriverConfig": {"enabled": true},
            "gcsFuseCsiDriverConfig": {"enabled": true},
        });
        let updated = replace_addons(&current, &json!({"gcpFilestoreCsiDriverConfig": {}}));
        assert_eq!(updated["gcpFilestoreCsiDriverConfig"], json!({}));
        assert_eq!(updated["gcsFuseCsiDriverConfig"]["enabled"], true);
    }
}
