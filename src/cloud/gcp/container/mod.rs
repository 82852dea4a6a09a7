//! GKE (container v1, `ClusterManager` over REST): clusters and node pools.
//!
//! Requests are built as the API's JSON and converted into the client's typed models (the models
//! accept enum names and keep fields they do not know), reads work on the typed models. Every
//! mutation returns a GKE `Operation`; its [`OperationRef`] name is the full
//! `projects/P/locations/L/operations/OP`, polled with `get_operation` ([`operations`]).
//!
//! Files: [`cluster`] (create with a bootstrap pool, projection, one-field updates, version
//! resolution), [`node_pool`] (create, projection, updates, the live size from the pool's Compute
//! instance groups, the Ready nodes a pool move waits for), [`operations`]
//! (polling, failure classification, removal of the bootstrap pool after a cluster create),
//! [`project`] (the live cluster and pool read back onto their specs).

mod cluster;
mod node_pool;
mod operations;
mod project;

pub(crate) use operations::rpc_code_name;

use super::{GcpConfig, classify_gax};
use crate::cloud::Provider;
use crate::cloud::{
    CloudError, CloudResult, ErrorClass, OpStatus, Polled, Settle, Started, Target, UpdateStep,
};
use crate::resource::FieldDiff;
use crate::resource::OperationRef;
use crate::resource::{Kind, Observed};
use google_cloud_compute_v1::client::InstanceGroupManagers;
use google_cloud_container_v1::client::ClusterManager;
use std::sync::Arc;

/// How the Kubernetes API of a cluster is authenticated when counting a pool's Ready nodes.
#[derive(Clone)]
enum KubeAuth {
    /// A fixed bearer token (simulators accept any).
    Static(String),
    /// An OAuth access token from Application Default Credentials.
    Adc(google_cloud_auth::credentials::AccessTokenCredentials),
}

/// GKE's client, shared by the cluster and node-pool adapters.
pub struct ContainerAdapter {
    client: ClusterManager,
    /// Compute's managed instance groups: a pool's size is theirs ([`node_pool`]).
    groups: InstanceGroupManagers,
    kube_auth: KubeAuth,
    /// When an exclusion without a start begins ([`super::clock`]).
    clock: super::clock::Clock,
}

impl ContainerAdapter {
    pub async fn new(config: &GcpConfig) -> CloudResult<ContainerAdapter> {
        let creds = config.credentials()?;
        let groups = super::client!(
            InstanceGroupManagers,
            creds.clone(),
            &config.endpoints.compute,
            "Compute Engine"
        );
        let client = super::client!(ClusterManager, creds, &config.endpoints.container, "GKE");
        let kube_auth = match config.credentials {
            super::CredentialsMode::Anonymous => KubeAuth::Static("a3ctl-anonymous".into()),
            super::CredentialsMode::Adc => KubeAuth::Adc(
                google_cloud_auth::credentials::Builder::default()
                    .build_access_token_credentials()
                    .map_err(|e| {
                        CloudError::new(
                            ErrorClass::Permission,
                            format!("cannot load Application Default Credentials: {e}"),
                        )
                    })?,
            ),
        };
        Ok(ContainerAdapter {
            client,
            groups,
            kube_auth,
            clock: super::clock::Clock::new(config.endpoints.clock.clone()),
        })
    }

    /// The bearer token for a cluster's Kubernetes API.
    async fn kube_token(&self) -> CloudResult<String> {
        match &self.kube_auth {
            KubeAuth::Static(token) => Ok(token.clone()),
            KubeAuth::Adc(credentials) => credentials
                .access_token()
                .await
                .map(|t| t.token)
                .map_err(|e| {
                    CloudError::new(ErrorClass::Permission, format!("no access token: {e}"))
                }),
        }
    }
}

/// `projects/P/locations/L/clusters/C`, split.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ClusterPath {
    pub project: String,
    pub location: String,
    pub name: String,
}

impl ClusterPath {
    pub fn parse(id: &str) -> CloudResult<ClusterPath> {
        match id.split('/').collect::<Vec<_>>().as_slice() {
            ["projects", p, "locations", l, "clusters", c] => Ok(ClusterPath {
                project: p.to_string(),
                location: l.to_string(),
                name: c.to_string(),
            }),
            _ => Err(CloudError::new(
                ErrorClass::Invalid,
                format!("`{id}` is not a GKE cluster name (projects/P/locations/L/clusters/C)"),
            )),
        }
    }

    /// `projects/P/locations/L`.
    pub fn parent(&self) -> String {
        format!("projects/{}/locations/{}", self.project, self.location)
    }

    pub fn id(&self) -> String {
        format!("{}/clusters/{}", self.parent(), self.name)
    }

    /// The full name of one of this location's operations.
    pub fn operation(&self, short: &str) -> String {
        if short.starts_with("projects/") {
            short.to_string()
        } else {
            format!("{}/operations/{short}", self.parent())
        }
    }
}

/// `projects/P/locations/L/clusters/C/nodePools/NP`, split.
pub(crate) fn parse_pool(id: &str) -> CloudResult<(ClusterPath, String)> {
    let bad = || {
        CloudError::new(
            ErrorClass::Invalid,
            format!("`{id}` is not a GKE node pool name (…/clusters/C/nodePools/NP)"),
        )
    };
    let (cluster, pool) = id.split_once("/nodePools/").ok_or_else(bad)?;
    if pool.is_empty() || pool.contains('/') {
        return Err(bad());
    }
    Ok((ClusterPath::parse(cluster)?, pool.to_string()))
}

/// GKE runs one operation per cluster at a time: a cluster and its node pools share a lane.
pub(crate) fn serial_lane(target: &Target) -> Option<String> {
    match target.addr.kind {
        Kind::Cluster => Some(target.id.clone()),
        Kind::NodePool => target.id.split("/nodePools/").next().map(str::to_string),
        _ => None,
    }
}

/// A read's 404 is `None`; anything else is classified.
pub(crate) fn absent_or<T>(
    result: Result<T, google_cloud_gax::error::Error>,
) -> CloudResult<Option<T>> {
    match result {
        Ok(v) => Ok(Some(v)),
        Err(e) => {
            let classified = classify_gax(&e);
            if classified.class == ErrorClass::NotFound {
                Ok(None)
            } else {
                Err(classified)
            }
        }
    }
}

/// Converts a request built as API JSON into the client's typed model.
pub(crate) fn typed<T: serde::de::DeserializeOwned>(
    what: &str,
    value: serde_json::Value,
) -> CloudResult<T> {
    serde_json::from_value(value).map_err(|e| {
        CloudError::new(
            ErrorClass::Invalid,
            format!("cannot build the {what} request: {e}"),
        )
    })
}

impl ContainerAdapter {
    async fn delete_cluster(&self, target: &Target) -> CloudResult<Started> {
        let path = ClusterPath::parse(&target.id)?;
        let op = self
            .client
            .delete_cluster()
            .set_name(&target.id)
            .send()
            .await
            .map_err(|e| classify_gax(&e))?;
        Ok(operations::started(&path, &op))
    }

    async fn delete_pool(&self, target: &Target) -> CloudResult<Started> {
        let (path, _) = parse_pool(&target.id)?;
        let op = self
            .client
            .delete_node_pool()
            .set_name(&target.id)
            .send()
            .await
            .map_err(|e| classify_gax(&e))?;
        Ok(operations::started(&path, &op))
    }
}

/// The adapters of GKE's kinds, sharing one client.
pub async fn adapters(config: &GcpConfig) -> CloudResult<Vec<(Kind, Arc<dyn Provider>)>> {
    let shared = Arc::new(ContainerAdapter::new(config).await?);
    Ok(vec![
        (Kind::Cluster, Arc::new(ClusterAdapter(shared.clone()))),
        (Kind::NodePool, Arc::new(NodePoolAdapter(shared.clone()))),
        (Kind::GkeVersions, versions_reader(shared)),
    ])
}

/// `gke_versions`: a location's `serverConfig` (`projects/P/locations/L/serverConfig`).
fn versions_reader(shared: Arc<ContainerAdapter>) -> Arc<dyn Provider> {
    use crate::resource::kinds::gke_versions::GkeVersionsSpec;
    Arc::new(crate::cloud::ReadOnly {
        read: Box::new(move |target| {
            let c = shared.clone();
            Box::pin(async move {
                let Some(parent) = target.id.strip_suffix("/serverConfig") else {
                    return Err(CloudError::new(
                        ErrorClass::Invalid,
                        format!(
                            "`{}` is not a location's serverConfig (projects/P/locations/L/serverConfig)",
                            target.id
                        ),
                    ));
                };
                let location = parent.rsplit('/').next().unwrap_or("").to_string();
                let config = c
                    .client
                    .get_server_config()
                    .set_name(parent)
                    .send()
                    .await
                    .map_err(|e| classify_gax(&e))?;
                let live = cluster::server_config_json(&config);
                Ok(Some(GkeVersionsSpec::project(&live, &location)?))
            })
        }),
        why: "GKE's versions are its release channels' offer",
        hint: "choose a version or release channel the location offers",
    })
}

/// Whether a cluster or pool is usable, from its `status`: GKE's `RUNNING`; `ERROR`, `DEGRADED`
/// and `RUNNING_WITH_ERROR` fail with GKE's message; `STOPPING` is being deleted.
fn settle(observed: &Observed) -> Settle {
    let status = observed.outputs["status"].as_str().unwrap_or("");
    let message = observed.outputs["status_message"]
        .as_str()
        .filter(|m| !m.is_empty())
        .unwrap_or(status)
        .to_string();
    match status {
        "RUNNING" => Settle::Ready,
        "ERROR" | "DEGRADED" | "RUNNING_WITH_ERROR" => Settle::Failed { message },
        "STOPPING" => Settle::Deleting {
            status: status.to_string(),
        },
        other => Settle::Pending {
            status: other.to_string(),
        },
    }
}

/// GKE clusters (`cluster`).
pub struct ClusterAdapter(Arc<ContainerAdapter>);

#[async_trait::async_trait]
impl Provider for ClusterAdapter {
    fn serial_lane(&self, target: &Target) -> Option<String> {
        serial_lane(target)
    }
    async fn read(&self, target: &Target) -> CloudResult<Option<Observed>> {
        self.0.read_cluster(target).await
    }
    async fn create(&self, target: &Target) -> CloudResult<Started> {
        self.0.create_cluster(target).await
    }
    fn update_steps(&self, _target: &Target, diffs: &[FieldDiff]) -> Vec<UpdateStep> {
        cluster::update_steps(diffs)
    }
    async fn update(&self, target: &Target, step: &UpdateStep) -> CloudResult<Started> {
        self.0.update_cluster(target, step).await
    }
    async fn delete(&self, target: &Target) -> CloudResult<Started> {
        self.0.delete_cluster(target).await
    }
    async fn poll(&self, operation: &OperationRef) -> CloudResult<OpStatus> {
        Ok(self.0.poll_operation(operation).await?.status)
    }
    async fn poll_timed(&self, operation: &OperationRef) -> CloudResult<Polled> {
        self.0.poll_operation(operation).await
    }
    fn settle(&self, _target: &Target, observed: &Observed) -> Settle {
        settle(observed)
    }
}

/// GKE node pools (`node_pool`).
pub struct NodePoolAdapter(Arc<ContainerAdapter>);

#[async_trait::async_trait]
impl Provider for NodePoolAdapter {
    fn serial_lane(&self, target: &Target) -> Option<String> {
        serial_lane(target)
    }
    async fn read(&self, target: &Target) -> CloudResult<Option<Observed>> {
        self.0.read_pool(target).await
    }
    async fn create(&self, target: &Target) -> CloudResult<Started> {
        self.0.create_pool(target).await
    }
    fn update_steps(&self, _target: &Target, diffs: &[FieldDiff]) -> Vec<UpdateStep> {
        node_pool::update_steps(diffs)
    }
    async fn update(&self, target: &Target, step: &UpdateStep) -> CloudResult<Started> {
        self.0.update_pool(target, step).await
    }
    async fn delete(&self, target: &Target) -> CloudResult<Started> {
        self.0.delete_pool(target).await
    }
    async fn ready_nodes(&self, target: &Target) -> CloudResult<Option<u64>> {
        let (_, pool) = parse_pool(&target.id)?;
        Ok(self.0.count_ready_nodes(target, &pool).await)
    }
    async fn poll(&self, operation: &OperationRef) -> CloudResult<OpStatus> {
        Ok(self.0.poll_operation(operation).await?.status)
    }
    async fn poll_timed(&self, operation: &OperationRef) -> CloudResult<Polled> {
        self.0.poll_operation(operation).await
    }
    fn settle(&self, _target: &Target, observed: &Observed) -> Settle {
        settle(observed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse() {
        let c = ClusterPath::parse("projects/p/locations/us-central1/clusters/a3").unwrap();
        assert_eq!(c.parent(), "projects/p/locations/us-central1");
        assert_eq!(
            c.operation("operation-1"),
            "projects/p/locations/us-central1/operations/operation-1"
        );
        let (c2, pool) =
            parse_pool("projects/p/locations/us-central1/clusters/a3/nodePools/gpu").unwrap();
        assert_eq!((c2, pool.as_str()), (c, "gpu"));
        assert!(parse_pool("projects/p/locations/l/clusters/a3").is_err());
        assert!(ClusterPath::parse("projects/p/clusters/a3").is_err());
    }
}
