//! GKE node pools: create, projection onto the spec, updates, and the live node count.
//!
//! Spec → API:
//! - `labels` are the VMs' GCP labels (`config.resourceLabels`); GKE's own `goog-gke-*` labels
//!   are left out of the projection.
//! - `capacity`: `spot` → `config.spot`, `flex-start` → `config.flexStart`, `reservation` →
//!   `config.reservationAffinity` (`SPECIFIC_RESERVATION` on
//!   `projects/P/reservations/R[/reservationBlocks/B]`), `on-demand` → nothing.
//! - `host_maintenance` is not part of the spec: GKE v1 has no `hostMaintenancePolicy` (v1beta1
//!   only) and rejects unknown fields; the blueprint only validates it.
//! - `node_count` is per zone, read from the pool's managed instance groups as
//!   terraform-provider-google reads it (`flattenNodePool` in
//!   hashicorp/terraform-provider-google@`google/services/container/resource_container_node_pool.go`:
//!   "Node pools don't expose the current node count in their API, so read the instance groups
//!   instead"): each of the pool's `instanceGroupUrls` is a zonal `instanceGroupManagers.get`
//!   (<https://cloud.google.com/compute/docs/reference/rest/v1/instanceGroupManagers/get>), their
//!   `targetSize`s are summed and divided (rounding down) by the groups found, one per zone of the
//!   pool. A URL whose group answers 404 is stale and left out, as the provider does; any other
//!   failure of a group's read fails the pool's read (refresh retries it like every read), never
//!   a guess. GKE's `initialNodeCount` is used only while the pool has no `instanceGroupUrls` at
//!   all: GKE has not made its groups yet (early in a create), and the size asked at the create
//!   is all there is. `setSize` never changes `initialNodeCount`, and the cluster's Kubernetes
//!   API (which may be private, behind authorized networks, or slow) is not asked: a3ctl reads
//!   Nodes there only to wait for them to be Ready ([`ContainerAdapter::count_ready_nodes`]).

use super::operations::started;
use super::{ContainerAdapter, absent_or, parse_pool, typed};
use crate::cloud::gcp::classify_gax;
use crate::cloud::gcp::compute::found;
use crate::cloud::{CloudError, CloudResult, ErrorClass, Started, Target, UpdateStep};
use crate::resource::FieldDiff;
use crate::resource::Observed;
use crate::resource::kinds::from_spec;
use crate::resource::kinds::node_pool::{NodePoolField, NodePoolSpec, UpgradeSettings};
use base64::Engine;
use google_cloud_container_v1::model::{NodeManagement, NodePool, UpdateNodePoolRequest};
use serde_json::{Value, json};

const RESERVATION_KEY: &str = "compute.googleapis.com/reservation-name";
const SCOPES: &[&str] = &["https://www.googleapis.com/auth/cloud-platform"];

/// The `NodePool` a spec asks for.
pub(super) fn create_body(project: &str, spec: &NodePoolSpec) -> Value {
    let mut config = json!({
        "machineType": spec.machine_type,
        "diskSizeGb": spec.disk_size_gb,
        "imageType": spec.image_type,
        "resourceLabels": spec.labels,
        "taints": spec.taints,
        "gvnic": {"enabled": spec.gvnic},
        "oauthScopes": SCOPES,
        "workloadMetadataConfig": {"mode": "GKE_METADATA"},
        "serviceAccount": spec.service_account,
    });
    if let Some(acc) = &spec.accelerator {
        config["accelerators"] = json!([{
            "acceleratorType": acc.kind,
            "acceleratorCount": acc.count,
            "gpuDriverInstallationConfig": {"gpuDriverVersion": acc.driver},
        }]);
    }
    if !spec.node_labels.is_empty() {
        config["labels"] = json!(spec.node_labels);
    }
    if spec.local_ssd_count > 0 {
        config["ephemeralStorageLocalSsdConfig"] = json!({"localSsdCount": spec.local_ssd_count});
    }
    match (spec.capacity.as_str(), &spec.reservation) {
        ("spot", _) => config["spot"] = json!(true),
        ("flex-start", _) => config["flexStart"] = json!(true),
        ("reservation", Some(reservation)) => {
            config["reservationAffinity"] = json!({
                "consumeReservationType": "SPECIFIC_RESERVATION",
                "key": RESERVATION_KEY,
                "values": [reservation.value(project)],
            });
        }
        _ => {}
    }
    let mut pool = json!({
        "name": spec.name,
        "initialNodeCount": spec.node_count,
        "locations": spec.locations,
        "config": config,
        "management": {
            "autoRepair": spec.auto_repair,
            "autoUpgrade": spec.auto_upgrade,
        },
    });
    if let Some(settings) = &spec.upgrade_settings {
        pool["upgradeSettings"] = upgrade_settings(settings);
    }
    if !spec.additional_networks.is_empty() {
        pool["networkConfig"] = json!({"additionalNodeNetworkConfigs": spec.additional_networks});
    }
    if let Some(profile) = &spec.accelerator_network_profile {
        pool["networkConfig"]["acceleratorNetworkProfile"] = json!(profile);
    }
    if let Some(policy) = &spec.placement_policy {
        pool["placementPolicy"] = json!({"type": "COMPACT", "policyName": policy});
    }
    // GKE resolves a prefix (`1.33`) to its newest build the control plane allows; without a
    // version the pool gets the control plane's.
    if let Some(version) = pinned(&spec.version) {
        pool["version"] = json!(version);
    }
    pool
}

/// The API's `upgradeSettings` (blue-green batches as `standardRolloutPolicy`, durations as
/// `"<seconds>s"`, a percent as the fraction GKE takes).
pub(super) fn upgrade_settings(settings: &UpgradeSettings) -> Value {
    let mut body = json!({
        "strategy": settings.strategy,
        "maxSurge": settings.max_surge,
        "maxUnavailable": settings.max_unavailable,
    });
    if let Some(bg) = &settings.blue_green {
        let mut rollout = json!({"batchSoakDuration": format!("{}s", bg.batch_soak_seconds)});
        match (bg.batch_node_count, bg.batch_percent) {
            (Some(n), _) => rollout["batchNodeCount"] = json!(n),
            (None, Some(p)) => rollout["batchPercentage"] = json!(f64::from(p) / 100.0),
            (None, None) => {}
        }
        body["blueGreenSettings"] = json!({
            "standardRolloutPolicy": rollout,
            "nodePoolSoakDuration": format!("{}s", bg.pool_soak_seconds),
        });
    }
    body
}

/// The version a pool asks for, `None` when it follows the control plane (`default`, `latest`,
/// unset: a pool is never newer than its control plane).
fn pinned(version: &str) -> Option<&str> {
    (!matches!(version, "" | "default" | "latest" | "-")).then_some(version)
}

/// The build a pool moves to: the control plane's when the pool follows it or the pin names the
/// control plane's minor or build prefix, else the newest build with the prefix the location
/// offers nodes that is not newer than the control plane (`validNodeVersions`).
fn node_version(wanted: &str, master: &str, valid: &[String]) -> CloudResult<String> {
    use crate::resource::kinds::gke_versions::version_key;
    let Some(prefix) = pinned(wanted) else {
        return Ok(master.to_string());
    };
    let has = |v: &str| {
        v == prefix || v.starts_with(&format!("{prefix}.")) || v.starts_with(&format!("{prefix}-"))
    };
    if has(master) {
        return Ok(master.to_string());
    }
    if prefix.contains("-gke.") {
        return Ok(prefix.to_string());
    }
    valid
        .iter()
        .filter(|v| has(v) && version_key(v) <= version_key(master))
        .max_by_key(|v| version_key(v))
        .cloned()
        .ok_or_else(|| {
            CloudError::new(
                ErrorClass::Invalid,
                format!("GKE offers no node version {prefix} that its control plane ({master}) allows"),
            )
            .with_hint("set the pool's `version` to the control plane's minor or up to two minors below it")
        })
}

/// Field groups of node-pool updates: `setSize`, one `nodePools.update`, `setManagement`, and the
/// upgrade settings as a `nodePools.update` of their own (`update(upgradeSettings)`).
const STEPS: &[(&str, &[NodePoolField])] = &[
    // First: nodes added by a resize would come up on the old version and be upgraded again.
    ("update(nodeVersion)", &[NodePoolField::Version]),
    ("setSize", &[NodePoolField::NodeCount]),
    (
        "update",
        &[
            NodePoolField::Labels,
            NodePoolField::Taints,
            NodePoolField::Gvnic,
            NodePoolField::ImageType,
            NodePoolField::DiskSizeGb,
        ],
    ),
    (
        "setManagement",
        &[NodePoolField::AutoRepair, NodePoolField::AutoUpgrade],
    ),
    ("update(upgradeSettings)", &[NodePoolField::UpgradeSettings]),
    // The nodes' Kubernetes labels, replaced as a whole on the running nodes.
    ("update(labels)", &[NodePoolField::NodeLabels]),
];

pub(super) fn update_steps(diffs: &[FieldDiff]) -> Vec<UpdateStep> {
    UpdateStep::per_call(diffs, STEPS)
}

/// The `UpdateNodePoolRequest` for the fields of an `update` step.
fn update_body(id: &str, spec: &NodePoolSpec, fields: &[NodePoolField]) -> Value {
    let mut request = json!({"name": id});
    for field in fields {
        match field {
            NodePoolField::Labels => request["resourceLabels"] = json!({"labels": spec.labels}),
            NodePoolField::Taints => request["taints"] = json!({"taints": spec.taints}),
            NodePoolField::Gvnic => request["gvnic"] = json!({"enabled": spec.gvnic}),
            NodePoolField::ImageType => request["imageType"] = json!(spec.image_type),
            NodePoolField::DiskSizeGb => request["diskSizeGb"] = json!(spec.disk_size_gb),
            NodePoolField::NodeLabels => {
                request["labels"] = json!({"labels": spec.node_labels});
            }
            NodePoolField::UpgradeSettings => {
                if let Some(settings) = &spec.upgrade_settings {
                    request["upgradeSettings"] = upgrade_settings(settings);
                }
            }
            // Changed by calls of their own (`update(nodeVersion)`, `setSize`,
            // `setManagement`), or replaced: never in an `update` body.
            NodePoolField::Version
            | NodePoolField::NodeCount
            | NodePoolField::AutoRepair
            | NodePoolField::AutoUpgrade
            | NodePoolField::Cluster
            | NodePoolField::Location
            | NodePoolField::Name
            | NodePoolField::MachineType
            | NodePoolField::Locations
            | NodePoolField::Accelerator
            | NodePoolField::AdditionalNetworks
            | NodePoolField::AcceleratorNetworkProfile
            | NodePoolField::PlacementPolicy
            | NodePoolField::Reservation
            | NodePoolField::Capacity
            | NodePoolField::LocalSsdCount
            | NodePoolField::ServiceAccount => {}
        }
    }
    request
}

/// `(project, zone, name)` of an instance group manager's URL
/// (`https://www.googleapis.com/compute/v1/projects/P/zones/Z/instanceGroupManagers/N`, as GKE's
/// `instanceGroupUrls` name them, or the same path without the host).
fn group_of(url: &str) -> CloudResult<(&str, &str, &str)> {
    let path = url.find("projects/").map_or(url, |at| &url[at..]);
    match path.split('/').collect::<Vec<_>>().as_slice() {
        ["projects", p, "zones", z, "instanceGroupManagers", n] => Ok((p, z, n)),
        _ => Err(CloudError::new(
            ErrorClass::Invalid,
            format!(
                "`{url}` in the node pool's instanceGroupUrls is not an instance group manager (projects/P/zones/Z/instanceGroupManagers/N)"
            ),
        )),
    }
}

/// Nodes per zone from the `targetSize` of each of a pool's groups (`None`: a stale URL, its
/// group gone): their sum divided by the groups found, rounding down, as
/// terraform-provider-google averages them (the groups of a pool have one size unless a resize
/// failed part-way). No group found is no node.
fn per_zone(sizes: &[Option<i32>]) -> u64 {
    let found: Vec<u64> = sizes
        .iter()
        .flatten()
        .map(|n| u64::try_from(*n).unwrap_or(0))
        .collect();
    if found.is_empty() {
        return 0;
    }
    found.iter().sum::<u64>() / found.len() as u64
}

impl ContainerAdapter {
    pub(super) async fn read_pool(&self, target: &Target) -> CloudResult<Option<Observed>> {
        let (path, _) = parse_pool(&target.id)?;
        let Some(pool) = absent_or(
            self.client
                .get_node_pool()
                .set_name(&target.id)
                .send()
                .await,
        )?
        else {
            return Ok(None);
        };
        let per_zone = self.nodes_per_zone(&pool).await?;
        Ok(Some(super::project::observed_pool(
            &path.project,
            &path.name,
            &path.location,
            &pool,
            per_zone,
        )?))
    }

    /// The pool's nodes per zone from its managed instance groups' `targetSize` (module doc),
    /// `None` while GKE has made no group for it yet. The zones' groups are read at once.
    async fn nodes_per_zone(&self, pool: &NodePool) -> CloudResult<Option<u64>> {
        if pool.instance_group_urls.is_empty() {
            return Ok(None);
        }
        let reads = pool.instance_group_urls.iter().map(|url| async move {
            let (project, zone, name) = group_of(url)?;
            let group = found(
                self.groups
                    .get()
                    .set_project(project)
                    .set_zone(zone)
                    .set_instance_group_manager(name)
                    .send()
                    .await,
            )?;
            Ok::<_, CloudError>(group.map(|g| g.target_size.unwrap_or(0)))
        });
        let sizes = futures_util::future::try_join_all(reads).await?;
        Ok(Some(per_zone(&sizes)))
    }

    /// Nodes of `pool` registered in the cluster's Kubernetes API whose `Ready` condition is
    /// `True`, when it can be reached with the endpoint and CA recorded for the cluster: what a
    /// pool move waits for before it drains the old pool. Never a pool's size (module doc).
    pub(super) async fn count_ready_nodes(&self, target: &Target, pool: &str) -> Option<u64> {
        let cluster = target
            .context
            .values()
            .find(|o| o["endpoint"].is_string() && o["ca_certificate"].is_string())?;
        let endpoint = cluster["endpoint"].as_str()?;
        let pem = base64::engine::general_purpose::STANDARD
            .decode(cluster["ca_certificate"].as_str()?)
            .ok()?;
        let ca = reqwest::Certificate::from_pem(&pem).ok()?;
        let client = reqwest::Client::builder()
            .add_root_certificate(ca)
            .timeout(std::time::Duration::from_secs(10))
            .build()
            .ok()?;
        let token = self.kube_token().await.ok()?;
        let response = client
            .get(format!("https://{endpoint}/api/v1/nodes"))
            .query(&[(
                "labelSelector",
                format!("cloud.google.com/gke-nodepool={pool}"),
            )])
            .bearer_auth(token)
            .send()
            .await
            .ok()?;
        if !response.status().is_success() {
            return None;
        }
        let list: Value = response.json().await.ok()?;
        let items = list["items"].as_array()?;
        let is_ready = |node: &&Value| {
            node["status"]["conditions"].as_array().is_some_and(|c| {
                c.iter()
                    .any(|c| c["type"] == "Ready" && c["status"] == "True")
            })
        };
        Some(items.iter().filter(is_ready).count() as u64)
    }

    /// The control plane's build, the pool's build, and the node versions the location offers.
    async fn versions_for(
        &self,
        path: &super::ClusterPath,
        pool: &str,
    ) -> CloudResult<(String, String, Vec<String>)> {
        let cluster = self.live_cluster(path).await?;
        let live = self
            .client
            .get_node_pool()
            .set_name(pool)
            .send()
            .await
            .map_err(|e| classify_gax(&e))?;
        let config = self
            .client
            .get_server_config()
            .set_name(path.parent())
            .send()
            .await
            .map_err(|e| classify_gax(&e))?;
        Ok((
            cluster.current_master_version,
            live.version,
            config.valid_node_versions,
        ))
    }

    pub(super) async fn create_pool(&self, target: &Target) -> CloudResult<Started> {
        let (path, _) = parse_pool(&target.id)?;
        let spec: NodePoolSpec = from_spec("node pool", &target.spec)?;
        let pool: NodePool = typed("node pool", create_body(&path.project, &spec))?;
        let op = self
            .client
            .create_node_pool()
            .set_parent(path.id())
            .set_node_pool(pool)
            .send()
            .await
            .map_err(|e| classify_gax(&e))?;
        Ok(started(&path, &op))
    }

    pub(super) async fn update_pool(
        &self,
        target: &Target,
        step: &UpdateStep,
    ) -> CloudResult<Started> {
        let (path, _) = parse_pool(&target.id)?;
        let spec: NodePoolSpec = from_spec("node pool", &target.spec)?;
        let op = match step.name.as_str() {
            "setSize" => {
                let count = i32::try_from(spec.node_count).map_err(|_| {
                    CloudError::new(
                        ErrorClass::Invalid,
                        format!("{} nodes per zone is more than GKE takes", spec.node_count),
                    )
                })?;
                self.client
                    .set_node_pool_size()
                    .set_name(&target.id)
                    .set_node_count(count)
                    .send()
                    .await
            }
            "setManagement" => {
                let management = NodeManagement::new()
                    .set_auto_repair(spec.auto_repair)
                    .set_auto_upgrade(spec.auto_upgrade);
                self.client
                    .set_node_pool_management()
                    .set_name(&target.id)
                    .set_management(management)
                    .send()
                    .await
            }
            "update(nodeVersion)" => {
                // Boxed: the client futures are large, and this path runs deep in the executor.
                let (master, live, valid) = Box::pin(self.versions_for(&path, &target.id)).await?;
                let version = node_version(&spec.version, &master, &valid)?;
                // An upgrade an earlier, interrupted run already saw through.
                if live == version {
                    return Ok(Started::Done);
                }
                let request: UpdateNodePoolRequest = typed(
                    "node pool upgrade",
                    json!({"name": target.id, "nodeVersion": version}),
                )?;
                self.client
                    .update_node_pool()
                    .with_request(request)
                    .send()
                    .await
            }
            // Before the old pool of a move is deleted: GKE's own drain of its nodes honours
            // their PodDisruptionBudgets (`nodeDrainConfig.respectPdbDuringNodePoolDeletion`,
            // NodePool in the container v1 reference,
            // <https://cloud.google.com/kubernetes-engine/docs/reference/rest/v1/projects.locations.clusters.nodePools#NodeDrainConfig>).
            "update(nodeDrainConfig)" => {
                let request: UpdateNodePoolRequest = typed(
                    "node pool drain",
                    json!({"name": target.id, "nodeDrainConfig": {"respectPdbDuringNodePoolDeletion": true}}),
                )?;
                self.client
                    .update_node_pool()
                    .with_request(request)
                    .send()
                    .await
            }
            "update" | "update(upgradeSettings)" | "update(labels)" => {
                let request: UpdateNodePoolRequest = typed(
                    "node pool update",
                    update_body(&target.id, &spec, &step.fields_of()?),
                )?;
                self.client
                    .update_node_pool()
                    .with_request(request)
                    .send()
                    .await
            }
            other => {
                return Err(CloudError::new(
                    ErrorClass::Invalid,
                    format!("unknown node pool update `{other}`"),
                ));
            }
        };
        let op = op.map_err(|e| classify_gax(&e))?;
        Ok(started(&path, &op))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pool_moves_to_its_control_planes_build_or_the_newest_it_allows() {
        let valid: Vec<String> = [
            "1.34.1-gke.1829001",
            "1.33.5-gke.1080000",
            "1.33.4-gke.1245000",
            "1.32.12-gke.1050000",
        ]
        .map(String::from)
        .to_vec();
        let master = "1.33.4-gke.1245000";
        assert_eq!(node_version("1.33", master, &valid).unwrap(), master);
        assert_eq!(node_version("default", master, &valid).unwrap(), master);
        assert_eq!(
            node_version("1.32", master, &valid).unwrap(),
            "1.32.12-gke.1050000"
        );
        // Never newer than the control plane, even within its minor.
        let e = node_version("1.34", master, &valid).unwrap_err();
        assert_eq!(e.class, ErrorClass::Invalid);
        assert!(e.message.contains("no node version 1.34"), "{}", e.message);
        assert_eq!(
            node_version("1.32.12-gke.1050000", master, &valid).unwrap(),
            "1.32.12-gke.1050000"
        );
        let steps = update_steps(&[FieldDiff {
            field: "version".into(),
            before: json!("1.32.12-gke.1050000"),
            after: json!("1.33"),
            forces_replacement: false,
        }]);
        assert_eq!(steps[0].name, "update(nodeVersion)");
    }

    #[test]
    fn a_pools_size_is_its_groups_target_size_per_zone() {
        // Three zones resized to 4 nodes each: 4 per zone, whatever `initialNodeCount` says.
        assert_eq!(per_zone(&[Some(4), Some(4), Some(4)]), 4);
        // A resize that failed part-way in one zone: the groups' average, rounded down.
        assert_eq!(per_zone(&[Some(64), Some(63)]), 63);
        assert_eq!(per_zone(&[Some(2), Some(3), Some(3)]), 2);
        // A stale URL (its group 404) is left out, not counted as an empty zone.
        assert_eq!(per_zone(&[Some(8), None]), 8);
        // No group left: no node.
        assert_eq!(per_zone(&[None, None]), 0);
        assert_eq!(per_zone(&[Some(0)]), 0);
    }

    #[test]
    fn group_urls_name_a_zonal_instance_group_manager() {
        assert_eq!(
            group_of("https://www.googleapis.com/compute/v1/projects/p/zones/us-central1-a/instanceGroupManagers/gke-c-gpu-1a2b3c4d-grp").unwrap(),
            ("p", "us-central1-a", "gke-c-gpu-1a2b3c4d-grp")
        );
        assert_eq!(
            group_of("projects/p/zones/z/instanceGroupManagers/g").unwrap(),
            ("p", "z", "g")
        );
        let e =
            group_of("https://www.googleapis.com/compute/v1/projects/p/zones/z/instanceGroups/g")
                .unwrap_err();
        assert_eq!(e.class, ErrorClass::Invalid);
        assert!(
            e.message.contains("not an instance group manager"),
            "{}",
            e.message
        );
    }

    #[test]
    fn updates_group_fields() {
        let diff = |f: &str| FieldDiff {
            field: f.into(),
            before: json!(1),
            after: json!(2),
            forces_replacement: false,
        };
        let steps = update_steps(&[
            diff("labels"),
            diff("node_count"),
            diff("gvnic"),
            diff("auto_repair"),
        ]);
        let names: Vec<&str> = steps.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["setSize", "update", "setManagement"]);
        assert_eq!(steps[1].fields, ["labels", "gvnic"]);
        let spec: NodePoolSpec = from_spec(
            "node pool",
            &json!({
                "cluster": "c", "location": "l", "name": "p", "machine_type": "e2-standard-4",
                "locations": ["z"], "node_count": 1, "accelerator": null, "additional_networks": [],
                "placement_policy": null, "reservation": null, "capacity": "on-demand",
                "local_ssd_count": 0, "labels": {"a": "b"}, "taints": [], "gvnic": true,
                "image_type": "COS_CONTAINERD", "disk_size_gb": 100, "auto_repair": true,
                "auto_upgrade": true,
            }),
        )
        .unwrap();
        let body = update_body("x", &spec, &steps[1].fields_of().unwrap());
        assert_eq!(body["resourceLabels"], json!({"labels": {"a": "b"}}));
        assert_eq!(body["gvnic"], json!({"enabled": true}));
        // The nodes' Kubernetes labels: a call of their own, the whole set.
        let steps = update_steps(&[diff("node_labels"), diff("labels")]);
        assert_eq!(steps[1].name, "update(labels)");
        let mut spec = spec;
        spec.node_labels = [("a3ctl.dev/pool".to_string(), "p".to_string())].into();
        let body = update_body("x", &spec, &steps[1].fields_of().unwrap());
        assert_eq!(body["labels"], json!({"labels": {"a3ctl.dev/pool": "p"}}));
        assert!(body["resourceLabels"].is_null());
    }
}
