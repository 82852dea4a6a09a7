//! GKE clusters: create, projection onto the spec, one-field updates, version resolution.
//!
//! A Standard cluster cannot be created without a node pool, and a3ctl's pools are separate
//! `node_pool` resources. So a cluster is created with a one-node-per-zone [`BOOTSTRAP_POOL`]
//! (small machines, standard disks) which the create's polling deletes once the cluster is up
//! (see [`super::operations`]) — what `remove_default_node_pool` does in Terraform. The bootstrap
//! pool is never part of the spec.
//!
//! Versions: the spec holds `default`, `latest`, a prefix (`1.32`, `1.32.4`) or an exact build.
//! Create resolves it against the location's `serverConfig` within the release channel (the newest
//! valid build with the prefix) and read projects the live `currentMasterVersion`, which the
//! planner compares by prefix (`resource::spec::matches`).

use super::operations::started;
use super::{ClusterPath, ContainerAdapter, absent_or, typed};
use crate::cloud::gcp::classify_gax;
use crate::cloud::{CloudError, CloudResult, ErrorClass, Started, Target, UpdateStep};
use crate::resource::FieldDiff;
use crate::resource::Observed;
pub use crate::resource::kinds::cluster::BOOTSTRAP_POOL;
use crate::resource::kinds::cluster::{
    AuthorizedNetwork, ClusterField, ClusterSpec, MaintenancePolicy,
};
use crate::resource::kinds::from_spec;
use crate::resource::kinds::gke_versions::{minor_of, minors_between};
use crate::resource::spec::OWNERSHIP_LABEL as LABEL;
use google_cloud_container_v1::model::{Cluster, ClusterUpdate};
use serde_json::{Value, json};

/// The `Cluster` a spec asks for (the version already resolved).
/// `now` is when an exclusion without a start begins ([`super::super::clock`]).
pub(super) fn create_body(
    path: &ClusterPath,
    spec: &ClusterSpec,
    version: &str,
    now: &str,
) -> Value {
    let project = &path.project;
    let mut cluster = json!({
        "name": path.name,
        "network": format!("projects/{project}/global/networks/{}", spec.network),
        "subnetwork": format!("projects/{project}/regions/{}/subnetworks/{}", spec.location, spec.subnetwork),
        "ipAllocationPolicy": {
            "useIpAliases": true,
            "clusterSecondaryRangeName": spec.pods_range,
            "servicesSecondaryRangeName": spec.services_range,
        },
        "networkConfig": {
            "datapathProvider": spec.datapath_provider,
            "enableMultiNetworking": spec.multi_networking,
        },
        "releaseChannel": {"channel": spec.release_channel},
        "initialClusterVersion": version,
        "masterAuthorizedNetworksConfig": authorized_networks(&spec.authorized_networks),
        "resourceLabels": spec.labels,
        "addonsConfig": addons(spec),
        "workloadIdentityConfig": {"workloadPool": spec.workload_pool},
        "nodePools": [{
            "name": BOOTSTRAP_POOL,
            "initialNodeCount": 1,
            "config": {
                "machineType": "e2-medium",
                "diskSizeGb": 30,
                "diskType": "pd-standard",
                "resourceLabels": spec.labels,
            },
            "management": {"autoRepair": false, "autoUpgrade": false},
        }],
    });
    if let Some(policy) = &spec.maintenance_policy {
        cluster["maintenancePolicy"] = maintenance_policy(policy, now);
    }
    if spec.private_nodes {
        cluster["privateClusterConfig"] = json!({
            "enablePrivateNodes": true,
            "enablePrivateEndpoint": false,
            "masterIpv4CidrBlock": spec.master_ipv4_cidr,
        });
    }
    cluster
}

/// `[{cidr, name}]` → `masterAuthorizedNetworksConfig` (off when empty).
fn authorized_networks(list: &[AuthorizedNetwork]) -> Value {
    let blocks: Vec<Value> = list
        .iter()
        .map(|n| json!({"cidrBlock": n.cidr, "displayName": n.name}))
        .collect();
    json!({"enabled": !blocks.is_empty(), "cidrBlocks": blocks})
}

/// The API's `MaintenancePolicy` for `policy` (without `resourceVersion`); an exclusion without a
/// start starts at `now`, one until end of support gets its end from GKE.
pub(super) fn maintenance_policy(policy: &MaintenancePolicy, now: &str) -> Value {
    let exclusions: serde_json::Map<String, Value> = policy
        .exclusions
        .iter()
        .map(|(name, e)| {
            let mut window = json!({
                "startTime": e.start.as_deref().unwrap_or(now),
                "maintenanceExclusionOptions": {"scope": e.scope},
            });
            if e.until_end_of_support {
                window["maintenanceExclusionOptions"]["endTimeBehavior"] =
                    json!("UNTIL_END_OF_SUPPORT");
            } else if let Some(end) = &e.end {
                window["endTime"] = json!(end);
            }
            (name.clone(), window)
        })
        .collect();
    let mut window = json!({"maintenanceExclusions": exclusions});
    if let Some(w) = &policy.window {
        window["recurringWindow"] = json!({
            "window": {"startTime": w.start, "endTime": w.end},
            "recurrence": w.recurrence,
        });
    }
    json!({"window": window})
}

fn addons(spec: &ClusterSpec) -> Value {
    json!({
        "gcpFilestoreCsiDriverConfig": {"enabled": spec.filestore_csi},
        "gcsFuseCsiDriverConfig": {"enabled": spec.gcsfuse_csi},
    })
}

/// `(step name, fields)` for every in-place cluster field.
const STEPS: &[(&str, &[ClusterField])] = &[
    (
        "updateCluster(desiredReleaseChannel)",
        &[ClusterField::ReleaseChannel],
    ),
    (
        "updateCluster(desiredMasterVersion)",
        &[ClusterField::Version],
    ),
    (
        "updateCluster(desiredMasterAuthorizedNetworksConfig)",
        &[ClusterField::AuthorizedNetworks],
    ),
    (
        "updateCluster(desiredAddonsConfig)",
        &[ClusterField::FilestoreCsi, ClusterField::GcsfuseCsi],
    ),
    (
        "updateCluster(desiredWorkloadIdentityConfig)",
        &[ClusterField::WorkloadPool],
    ),
    ("setResourceLabels", &[ClusterField::Labels]),
    ("setMaintenancePolicy", &[ClusterField::MaintenancePolicy]),
    (
        "deleteNodePool(a3ctl-bootstrap)",
        &[ClusterField::BootstrapPool],
    ),
];

/// One `clusters.update` per field group, labels last (GKE takes one field per update). A
/// control-plane upgrade of more than one minor version is one update per minor, each step
/// reaching its minor ([`minors_between`]): GKE refuses a jump.
pub(super) fn update_steps(diffs: &[FieldDiff]) -> Vec<UpdateStep> {
    let mut steps = Vec::new();
    for step in UpdateStep::per_call(diffs, STEPS) {
        let version = diffs
            .iter()
            .find(|d| d.field == ClusterField::Version.as_str());
        if let (true, Some(diff)) = (step.changes(ClusterField::Version), version) {
            let (live, target) = (
                diff.before.as_str().unwrap_or(""),
                diff.after.as_str().unwrap_or(""),
            );
            for minor in minors_between(live, target) {
                steps.push(UpdateStep {
                    name: format!("updateCluster(desiredMasterVersion {minor})"),
                    fields: step.fields.clone(),
                    reaches: Some(Value::from(minor)),
                });
            }
            steps.push(UpdateStep {
                name: format!("updateCluster(desiredMasterVersion {target})"),
                ..step
            });
        } else {
            steps.push(step);
        }
    }
    steps
}

/// Picks the build a requested version means in `channel`, from the location's serverConfig.
/// GPUDirect needs a minimum GKE build per machine family (GoogleCloudPlatform/cluster-toolkit
/// `modules/compute/gke-node-pool/gpu_direct.tf`, `gpudirect-tcpxo/README.md` of
/// GoogleCloudPlatform/container-engine-accelerators). `validate` checks versions it can bound
/// offline; `default` and `latest` are checked here, once resolved, before anything is created.
/// The spec's `gpudirect_family` names the family's machine type.
fn check_gpudirect(spec: &ClusterSpec, version: &str) -> CloudResult<()> {
    use crate::blueprint::{GkeVersion, MachineFamily, versions::check_resolved};
    let Some(family) = spec
        .gpudirect_family
        .as_deref()
        .and_then(MachineFamily::from_machine_type)
    else {
        return Ok(());
    };
    let Some(resolved) = GkeVersion::parse(version) else {
        return Ok(());
    };
    let managed_min = crate::blueprint::families::MANAGED_NETWORKING_MIN_GKE;
    if spec.managed_gpu_networking && resolved < managed_min {
        return Err(CloudError::new(
            ErrorClass::Invalid,
            format!(
                "GKE {version}, which `version = \"{}\"` resolves to in this release channel, is older than GKE-managed GPU networking needs ({managed_min} or later)",
                spec.version,
            ),
        )
        .with_hint("set `[cluster] version = \"1.34\"` or later, choose a release channel that offers it, or use `network_mode = \"explicit\"`"));
    }
    check_resolved(family, resolved).map_err(|violation| {
        CloudError::new(
            ErrorClass::Invalid,
            format!(
                "GKE {version}, which `version = \"{}\"` resolves to in this release channel, is older than GPUDirect on {} needs ({} or later)",
                spec.version,
                family.display_name(),
                violation.required
            ),
        )
        .with_hint("set `[cluster] version` to a newer minor (e.g. \"1.32\" or later) or choose a release channel that offers one")
    })
}

/// A `ServerConfig` as the API's JSON, channels by name (the client's model writes enums as
/// numbers).
pub(super) fn server_config_json(config: &google_cloud_container_v1::model::ServerConfig) -> Value {
    json!({
        "defaultClusterVersion": config.default_cluster_version,
        "validMasterVersions": config.valid_master_versions,
        "channels": config
            .channels
            .iter()
            .map(|c| json!({
                "channel": c.channel.name().unwrap_or(""),
                "defaultVersion": c.default_version,
                "validVersions": c.valid_versions,
            }))
            .collect::<Vec<_>>(),
    })
}

pub(super) fn resolve_version(
    config: &google_cloud_container_v1::model::ServerConfig,
    channel: &str,
    wanted: &str,
) -> CloudResult<String> {
    use crate::resource::kinds::gke_versions::GkeVersionsSpec;
    let live = server_config_json(config);
    let offer: GkeVersionsSpec = GkeVersionsSpec::project(&live, "")
        .ok()
        .and_then(|o| serde_json::from_value(o.spec).ok())
        .unwrap_or_default();
    offer.resolve(channel, wanted).map_err(|valid| {
        CloudError::new(
            ErrorClass::Invalid,
            format!("GKE version `{wanted}` is not available in the {channel} release channel"),
        )
        .with_hint(format!(
            "valid versions in {channel}: {valid}; change `cluster.version` or `cluster.release_channel`"
        ))
    })
}

impl ContainerAdapter {
    /// The current time as GKE writes it: when an exclusion without a `start` begins.
    async fn now(&self) -> CloudResult<String> {
        let now = self.clock.now().await?;
        Ok(crate::resource::kinds::cluster::instant(&now.to_rfc3339()))
    }

    pub(super) async fn read_cluster(&self, target: &Target) -> CloudResult<Option<Observed>> {
        let cluster = absent_or(self.client.get_cluster().set_name(&target.id).send().await)?;
        Ok(cluster
            .as_ref()
            .map(super::project::observed_cluster)
            .transpose()?)
    }

    /// The cluster as GKE has it now (a 404 is an error: the caller acts on a cluster that must
    /// exist).
    pub(super) async fn live_cluster(&self, path: &ClusterPath) -> CloudResult<Cluster> {
        self.client
            .get_cluster()
            .set_name(path.id())
            .send()
            .await
            .map_err(|e| classify_gax(&e))
    }

    async fn resolve(
        &self,
        path: &ClusterPath,
        channel: &str,
        wanted: &str,
    ) -> CloudResult<String> {
        let config = self
            .client
            .get_server_config()
            .set_name(path.parent())
            .send()
            .await
            .map_err(|e| classify_gax(&e))?;
        resolve_version(&config, channel, wanted)
    }

    pub(super) async fn create_cluster(&self, target: &Target) -> CloudResult<Started> {
        let path = ClusterPath::parse(&target.id)?;
        let spec: ClusterSpec = from_spec("cluster", &target.spec)?;
        let version = self
            .resolve(&path, &spec.release_channel, &spec.version)
            .await?;
        check_gpudirect(&spec, &version)?;
        let now = self.now().await?;
        let cluster: Cluster = typed("cluster", create_body(&path, &spec, &version, &now))?;
        match self
            .client
            .create_cluster()
            .set_parent(path.parent())
            .set_cluster(cluster)
            .send()
            .await
        {
            Ok(op) => Ok(started(&path, &op)),
            Err(e) => {
                let e = classify_gax(&e);
                if e.class != ErrorClass::AlreadyExists {
                    return Err(e);
                }
                // An earlier run's create (its answer or its journal entry lost to a crash):
                // continue it, so the bootstrap pool is removed like after any create.
                // Boxed: the client futures are large, and this path runs deep in the executor.
                match Box::pin(self.continue_create(&path, &spec)).await? {
                    Some(started) => Ok(started),
                    None => Err(e),
                }
            }
        }
    }

    /// For a cluster that already exists and carries this blueprint's label: its create
    /// operation (still running, or done, then polled to remove the bootstrap pool), or when GKE
    /// no longer lists it and the bootstrap pool is still there, that pool's delete. `None` for a
    /// cluster that is someone else's or needs nothing more (the executor adopts or refuses it).
    async fn continue_create(
        &self,
        path: &ClusterPath,
        spec: &ClusterSpec,
    ) -> CloudResult<Option<Started>> {
        let Some(live) = absent_or(self.client.get_cluster().set_name(path.id()).send().await)?
        else {
            return Ok(None);
        };
        let ours = spec
            .labels
            .get(LABEL)
            .is_some_and(|mark| live.resource_labels.get(LABEL) == Some(mark));
        if !ours {
            return Ok(None);
        }
        let listed = self
            .client
            .list_operations()
            .set_parent(path.parent())
            .send()
            .await
            .map_err(|e| classify_gax(&e))?;
        let suffix = format!("/clusters/{}", path.name);
        let create = listed
            .operations
            .into_iter()
            .filter(|op| {
                op.operation_type.name() == Some("CREATE_CLUSTER")
                    && op.target_link.ends_with(&suffix)
            })
            .max_by(|a, b| a.start_time.cmp(&b.start_time));
        if let Some(op) = create {
            return Ok(Some(started(path, &op)));
        }
        if !live.node_pools.iter().any(|p| p.name == BOOTSTRAP_POOL) {
            return Ok(None);
        }
        let op = self
            .client
            .delete_node_pool()
            .set_name(format!("{}/nodePools/{BOOTSTRAP_POOL}", path.id()))
            .send()
            .await
            .map_err(|e| classify_gax(&e))?;
        Ok(Some(started(path, &op)))
    }

    pub(super) async fn update_cluster(
        &self,
        target: &Target,
        step: &UpdateStep,
    ) -> CloudResult<Started> {
        let path = ClusterPath::parse(&target.id)?;
        let spec: ClusterSpec = from_spec("cluster", &target.spec)?;
        // `UpdateStep::per_call` never makes a step without fields.
        let Some(&field) = step.fields_of::<ClusterField>()?.first() else {
            return Err(crate::cloud::gcp::compute::no_update(target, step));
        };
        let update = match field {
            // Boxed: a read then a call each; the client futures are large, and this path runs
            // deep in the executor.
            ClusterField::Labels => return Box::pin(self.set_labels(&path, &spec)).await,
            ClusterField::MaintenancePolicy => {
                return Box::pin(self.set_maintenance_policy(&path, &spec)).await;
            }
            ClusterField::BootstrapPool => {
                return Box::pin(self.delete_bootstrap_pool(&path)).await;
            }
            ClusterField::ReleaseChannel => {
                json!({"desiredReleaseChannel": {"channel": spec.release_channel}})
            }
            ClusterField::Version => {
                // Boxed: the client futures are large, and this path runs deep in the executor.
                match Box::pin(self.master_version_step(&path, &spec, step)).await? {
                    Some(version) => json!({"desiredMasterVersion": version}),
                    None => return Ok(Started::Done),
                }
            }
            ClusterField::AuthorizedNetworks => json!({
                "desiredMasterAuthorizedNetworksConfig": authorized_networks(&spec.authorized_networks),
            }),
            ClusterField::FilestoreCsi | ClusterField::GcsfuseCsi => {
                json!({"desiredAddonsConfig": addons(&spec)})
            }
            ClusterField::WorkloadPool => json!({
                "desiredWorkloadIdentityConfig": {"workloadPool": spec.workload_pool},
            }),
            // Replaced, a3ctl's own (deletion protection), or never a difference.
            ClusterField::Name
            | ClusterField::Location
            | ClusterField::Network
            | ClusterField::Subnetwork
            | ClusterField::PodsRange
            | ClusterField::ServicesRange
            | ClusterField::DatapathProvider
            | ClusterField::MultiNetworking
            | ClusterField::PrivateNodes
            | ClusterField::MasterIpv4Cidr
            | ClusterField::GpudirectFamily
            | ClusterField::ManagedGpuNetworking
            | ClusterField::DeletionProtection => {
                return Err(CloudError::new(
                    ErrorClass::Invalid,
                    format!(
                        "cluster field `{}` cannot be updated in place",
                        field.as_str()
                    ),
                ));
            }
        };
        let update: ClusterUpdate = typed("cluster update", update)?;
        let op = self
            .client
            .update_cluster()
            .set_name(path.id())
            .set_update(update)
            .send()
            .await
            .map_err(|e| classify_gax(&e))?;
        Ok(started(&path, &op))
    }

    /// The build a control-plane version step asks for, or `None` when the control plane is
    /// there already: a step an earlier, interrupted run carried out (its operation ended while
    /// no one waited).
    async fn master_version_step(
        &self,
        path: &ClusterPath,
        spec: &ClusterSpec,
        step: &UpdateStep,
    ) -> CloudResult<Option<String>> {
        let wanted = step
            .reaches
            .as_ref()
            .and_then(Value::as_str)
            .unwrap_or(&spec.version);
        let version = self.resolve(path, &spec.release_channel, wanted).await?;
        let live = self.live_cluster(path).await?;
        let reached = live.current_master_version == version
            || (step.reaches.is_some()
                && minor_of(&live.current_master_version) >= minor_of(wanted));
        Ok((!reached).then_some(version))
    }

    /// Deletes the pool the cluster was created with; done at once when it is already gone.
    async fn delete_bootstrap_pool(&self, path: &ClusterPath) -> CloudResult<Started> {
        match self
            .client
            .delete_node_pool()
            .set_name(format!("{}/nodePools/{BOOTSTRAP_POOL}", path.id()))
            .send()
            .await
        {
            Ok(op) => Ok(started(path, &op)),
            Err(e) => match classify_gax(&e) {
                e if e.class == ErrorClass::NotFound => Ok(Started::Done),
                e => Err(e),
            },
        }
    }

    /// `setMaintenancePolicy` with the current `resourceVersion` (GKE refuses a stale one, as
    /// it refuses labels with a stale fingerprint). A policy a3ctl does not manage is not sent.
    async fn set_maintenance_policy(
        &self,
        path: &ClusterPath,
        spec: &ClusterSpec,
    ) -> CloudResult<Started> {
        let Some(policy) = &spec.maintenance_policy else {
            return Ok(Started::Done);
        };
        let current = self.live_cluster(path).await?;
        let mut body = maintenance_policy(policy, &self.now().await?);
        // An exclusion whose start the blueprint leaves open keeps the start it already has.
        if let Some(live) = current
            .maintenance_policy
            .as_ref()
            .and_then(|p| p.window.as_ref())
        {
            for (name, window) in &live.maintenance_exclusions {
                let fixed = policy
                    .exclusions
                    .get(name)
                    .is_some_and(|e| e.start.is_some());
                let start = window
                    .start_time
                    .as_ref()
                    .and_then(|t| serde_json::to_value(t).ok());
                if let (false, Some(start), Some(sent)) = (
                    fixed,
                    start,
                    body["window"]["maintenanceExclusions"].get_mut(name),
                ) {
                    sent["startTime"] = start;
                }
            }
        }
        body["resourceVersion"] = json!(
            current
                .maintenance_policy
                .map(|p| p.resource_version)
                .unwrap_or_default()
        );
        let policy: google_cloud_container_v1::model::MaintenancePolicy =
            typed("maintenance policy", body)?;
        let op = self
            .client
            .set_maintenance_policy()
            .set_name(path.id())
            .set_maintenance_policy(policy)
            .send()
            .await
            .map_err(|e| classify_gax(&e))?;
        Ok(started(path, &op))
    }

    /// `setResourceLabels` with the current fingerprint.
    async fn set_labels(&self, path: &ClusterPath, spec: &ClusterSpec) -> CloudResult<Started> {
        let current = self.live_cluster(path).await?;
        let labels = spec.labels.clone();
        let op = self
            .client
            .set_labels()
            .set_name(path.id())
            .set_resource_labels(labels)
            .set_label_fingerprint(current.label_fingerprint)
            .send()
            .await
            .map_err(|e| classify_gax(&e))?;
        Ok(started(path, &op))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use google_cloud_container_v1::model::ServerConfig;

    fn config() -> ServerConfig {
        serde_json::from_value(json!({
            "defaultClusterVersion": "1.33.5-gke.1080000",
            "validMasterVersions": ["1.33.5-gke.1080000", "1.32.12-gke.1050000", "1.32.4-gke.1767000"],
            "channels": [{
                "channel": "REGULAR", "defaultVersion": "1.33.5-gke.1080000",
                "validVersions": ["1.33.5-gke.1080000", "1.33.4-gke.1245000", "1.32.12-gke.1050000"],
            }],
        }))
        .unwrap()
    }

    #[test]
    fn versions_resolve_within_the_channel() {
        let c = config();
        assert_eq!(
            resolve_version(&c, "REGULAR", "default").unwrap(),
            "1.33.5-gke.1080000"
        );
        assert_eq!(
            resolve_version(&c, "REGULAR", "latest").unwrap(),
            "1.33.5-gke.1080000"
        );
        assert_eq!(
            resolve_version(&c, "REGULAR", "1.32").unwrap(),
            "1.32.12-gke.1050000"
        );
        assert_eq!(
            resolve_version(&c, "REGULAR", "1.33").unwrap(),
            "1.33.5-gke.1080000"
        );
        let e = resolve_version(&c, "REGULAR", "1.32.4-gke.1767000").unwrap_err();
        assert_eq!(e.class, ErrorClass::Invalid);
        assert!(e.hint.unwrap().contains("1.32.12-gke.1050000"));
        assert_eq!(
            resolve_version(&c, "STABLE", "1.32.4").unwrap(),
            "1.32.4-gke.1767000"
        );
        assert!(resolve_version(&c, "REGULAR", "1.3").is_err());
    }

    #[test]
    fn managed_gpu_networking_is_checked_against_the_resolved_build() {
        let bp = crate::blueprint::testing::shipped("a4.toml");
        let cluster = crate::graph::build::resources(&bp)
            .into_iter()
            .find(|r| r.addr == crate::graph::build::addr::cluster())
            .unwrap();
        let mut spec: ClusterSpec = serde_json::from_value(cluster.spec).unwrap();
        spec.version = "default".into();
        let e = check_gpudirect(&spec, "1.34.0-gke.2201000").unwrap_err();
        assert_eq!(e.class, ErrorClass::Invalid);
        assert!(
            e.message.contains("GKE 1.34.0-gke.2201000, which `version = \"default\"` resolves to in this release channel, is older than GKE-managed GPU networking needs (1.34.1-gke.1829001 or later)"),
            "{}",
            e.message
        );
        assert!(e.hint.unwrap().contains("network_mode = \"explicit\""));
        assert!(check_gpudirect(&spec, "1.34.1-gke.1829001").is_ok());
        spec.managed_gpu_networking = false;
        assert!(check_gpudirect(&spec, "1.34.0-gke.2201000").is_ok());
    }

    #[test]
    fn one_call_per_field_group() {
        let diff = |f: &str| FieldDiff {
            field: f.into(),
            before: json!(1),
            after: json!(2),
            forces_replacement: false,
        };
        let steps = update_steps(&[diff("labels"), diff("filestore_csi"), diff("gcsfuse_csi")]);
        let names: Vec<&str> = steps.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(
            names,
            ["updateCluster(desiredAddonsConfig)", "setResourceLabels"]
        );
        assert_eq!(steps[0].fields, ["filestore_csi", "gcsfuse_csi"]);
    }

    #[test]
    fn a_control_plane_upgrade_is_one_step_per_minor() {
        let diff = |f: &str, before: &str, after: &str| FieldDiff {
            field: f.into(),
            before: json!(before),
            after: json!(after),
            forces_replacement: false,
        };
        let steps = update_steps(&[
            diff("release_channel", "REGULAR", "RAPID"),
            diff("version", "1.31.14-gke.1243000", "1.34"),
        ]);
        let names: Vec<&str> = steps.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "updateCluster(desiredReleaseChannel)",
                "updateCluster(desiredMasterVersion 1.32)",
                "updateCluster(desiredMasterVersion 1.33)",
                "updateCluster(desiredMasterVersion 1.34)",
            ]
        );
        assert_eq!(steps[1].reaches, Some(json!("1.32")));
        assert_eq!(steps[2].reaches, Some(json!("1.33")));
        assert_eq!(
            steps[3].reaches, None,
            "the last step reaches the blueprint's"
        );
        let one = update_steps(&[diff("version", "1.33.5-gke.1080000", "1.34")]);
        assert_eq!(one.len(), 1);
        assert_eq!(one[0].fields, ["version"]);
    }
}
