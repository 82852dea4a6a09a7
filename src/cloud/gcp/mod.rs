//! Google Cloud adapters: the official google-cloud-rust clients (Compute, GKE, Filestore,
//! Artifact Registry) and the Cloud Storage JSON API over reqwest (the Rust storage crate manages
//! buckets only over gRPC).
//!
//! [`GcpProvider`] implements [`Provider`] by handing each resource kind to its API's [`Adapter`]
//! (Kubernetes objects go to [`crate::cloud::kube::KubeAdapter`])
//! (`compute/`, `container/`, `filestore.rs`, `artifactregistry.rs`, `storage.rs`). What all
//! of them share lives here: where each API is ([`Endpoints`], overridable by environment
//! variables), which credentials to send ([`Credentials`]), how an error is classified for the
//! executor ([`classify_status`]), and what the user is told to do about it ([`hints`]: one hint
//! per resource kind and error case, put in place by the provider, which knows the resource).
//!
//! Every adapter keeps one contract: `read` projects the live resource onto exactly the spec
//! fields the graph produces (`crate::graph::build`), so that reading back what was just created
//! gives the same spec — otherwise every plan would show a change.

/// Builds a client of one of the official crates (`$client`, e.g. `ServiceUsage`) with `$creds`,
/// at `$endpoint` when set (simulators), and without the crate's own retries: the executor
/// retries, re-reading before it retries a mutation, so a transient error is retried once, on its
/// policy, and shown. An error names `$api`.
macro_rules! client {
    ($client:ty, $creds:expr, $endpoint:expr, $api:literal) => {{
        let mut builder = <$client>::builder()
            .with_credentials($creds)
            .with_retry_policy(google_cloud_gax::retry_policy::NeverRetry);
        if let Some(endpoint) = $endpoint {
            builder = builder.with_endpoint(endpoint.clone());
        }
        builder.build().await.map_err(|e| {
            $crate::cloud::CloudError::new(
                $crate::cloud::ErrorClass::Other,
                format!("cannot build the {} client: {e}", $api),
            )
        })?
    }};
}
pub(crate) use client;

pub mod artifactregistry;
pub mod clock;
pub mod cloudquotas;
pub mod compute;
pub mod container;
pub mod filestore;
pub mod hints;
pub mod iam;
pub mod lro;
pub mod serviceusage;
pub mod storage;

pub use hints::{Subject, hint, refine};

use super::{
    CloudError, CloudResult, ErrorClass, OpStatus, Polled, Provider, Settle, Started, Target,
    UpdateStep,
};
use crate::resource::FieldDiff;
use crate::resource::OperationRef;
use crate::resource::{Api, Kind, Observed};
use parking_lot::Mutex;
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::time::Duration;

/// Environment variables that point a3ctl at other endpoints (a simulator, a proxy).
pub mod env {
    pub const COMPUTE_ENDPOINT: &str = "A3CTL_COMPUTE_ENDPOINT";
    pub const CONTAINER_ENDPOINT: &str = "A3CTL_CONTAINER_ENDPOINT";
    pub const FILESTORE_ENDPOINT: &str = "A3CTL_FILESTORE_ENDPOINT";
    pub const ARTIFACTREGISTRY_ENDPOINT: &str = "A3CTL_ARTIFACTREGISTRY_ENDPOINT";
    pub const STORAGE_ENDPOINT: &str = "A3CTL_STORAGE_ENDPOINT";
    pub const SERVICEUSAGE_ENDPOINT: &str = "A3CTL_SERVICEUSAGE_ENDPOINT";
    pub const CLOUDQUOTAS_ENDPOINT: &str = "A3CTL_CLOUDQUOTAS_ENDPOINT";
    pub const IAM_ENDPOINT: &str = "A3CTL_IAM_ENDPOINT";
    pub const RESOURCEMANAGER_ENDPOINT: &str = "A3CTL_RESOURCEMANAGER_ENDPOINT";
    /// Replaces `https://github.com` in release download URLs (mirrors, simulators).
    pub const GITHUB_ENDPOINT: &str = "A3CTL_GITHUB_ENDPOINT";
    /// Where a3ctl reads the current time instead of this machine's clock (a simulator's
    /// `/_sim/clock`, whose time moves as the simulator says).
    pub const CLOCK_ENDPOINT: &str = "A3CTL_CLOCK_ENDPOINT";
    /// Send no credentials at all (for simulators).
    pub const ANONYMOUS_CREDENTIALS: &str = "A3CTL_ANONYMOUS_CREDENTIALS";
}

/// Where each API is; `None` means Google's default endpoint.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Endpoints {
    pub compute: Option<String>,
    pub container: Option<String>,
    pub filestore: Option<String>,
    pub artifactregistry: Option<String>,
    pub storage: Option<String>,
    pub serviceusage: Option<String>,
    pub cloudquotas: Option<String>,
    pub iam: Option<String>,
    pub resourcemanager: Option<String>,
    /// Where `https://github.com/...` release downloads go instead.
    pub github: Option<String>,
    /// Where the current time is read instead of this machine's clock ([`clock::Clock`]).
    pub clock: Option<String>,
}

/// The Google APIs a3ctl calls: (environment variable, Google's endpoint). Either all of them
/// are overridden or none ([`Endpoints::from_env`]).
pub const API_ENDPOINTS: [(&str, &str); 9] = [
    (env::COMPUTE_ENDPOINT, "https://compute.googleapis.com"),
    (env::CONTAINER_ENDPOINT, "https://container.googleapis.com"),
    (env::FILESTORE_ENDPOINT, "https://file.googleapis.com"),
    (
        env::ARTIFACTREGISTRY_ENDPOINT,
        "https://artifactregistry.googleapis.com",
    ),
    (env::STORAGE_ENDPOINT, "https://storage.googleapis.com"),
    (
        env::SERVICEUSAGE_ENDPOINT,
        "https://serviceusage.googleapis.com",
    ),
    (
        env::CLOUDQUOTAS_ENDPOINT,
        "https://cloudquotas.googleapis.com",
    ),
    (env::IAM_ENDPOINT, "https://iam.googleapis.com"),
    (
        env::RESOURCEMANAGER_ENDPOINT,
        "https://cloudresourcemanager.googleapis.com",
    ),
];

/// Some API endpoints are overridden and others are not: the others would silently go to Google
/// (a simulator's world and a real project mixed in one apply).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartialEndpoints {
    /// (variable, value) of those set.
    pub set: Vec<(&'static str, String)>,
    /// (variable, Google's endpoint) of those not set.
    pub unset: Vec<(&'static str, &'static str)>,
}

impl std::fmt::Display for PartialEndpoints {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} of the {} API endpoint variables are set ({}); the other {} would go to Google: {}",
            self.set.len(),
            API_ENDPOINTS.len(),
            self.set
                .iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect::<Vec<_>>()
                .join(", "),
            self.unset.len(),
            self.unset
                .iter()
                .map(|(k, _)| *k)
                .collect::<Vec<_>>()
                .join(", ")
        )
    }
}

impl Endpoints {
    /// Endpoints from the `A3CTL_*_ENDPOINT` environment variables: all nine API endpoints or
    /// none (an API left out would silently reach Google; to send one there on purpose, set it to
    /// Google's endpoint, [`API_ENDPOINTS`]). `A3CTL_GITHUB_ENDPOINT` and `A3CTL_CLOCK_ENDPOINT`
    /// are optional either way.
    pub fn from_env() -> Result<Endpoints, PartialEndpoints> {
        Endpoints::from_vars(|k| std::env::var(k).ok())
    }

    /// [`Endpoints::from_env`] over any source of variables.
    pub fn from_vars(get: impl Fn(&str) -> Option<String>) -> Result<Endpoints, PartialEndpoints> {
        let var = |k: &str| get(k).filter(|v| !v.trim().is_empty());
        let (set, unset): (Vec<_>, Vec<_>) = API_ENDPOINTS
            .iter()
            .map(|(k, google)| (*k, *google, var(k)))
            .partition(|(_, _, v)| v.is_some());
        if !set.is_empty() && !unset.is_empty() {
            return Err(PartialEndpoints {
                set: set
                    .into_iter()
                    .map(|(k, _, v)| (k, v.unwrap_or_default()))
                    .collect(),
                unset: unset
                    .into_iter()
                    .map(|(k, google, _)| (k, google))
                    .collect(),
            });
        }
        Ok(Endpoints {
            compute: var(env::COMPUTE_ENDPOINT),
            container: var(env::CONTAINER_ENDPOINT),
            filestore: var(env::FILESTORE_ENDPOINT),
            artifactregistry: var(env::ARTIFACTREGISTRY_ENDPOINT),
            storage: var(env::STORAGE_ENDPOINT),
            serviceusage: var(env::SERVICEUSAGE_ENDPOINT),
            cloudquotas: var(env::CLOUDQUOTAS_ENDPOINT),
            iam: var(env::IAM_ENDPOINT),
            resourcemanager: var(env::RESOURCEMANAGER_ENDPOINT),
            github: var(env::GITHUB_ENDPOINT),
            clock: var(env::CLOCK_ENDPOINT),
        })
    }

    /// Every API at one simulator base URL, with the simulator's path prefixes.
    pub fn simulator(base: &str) -> Endpoints {
        Endpoints {
            compute: Some(base.to_string()),
            container: Some(format!("{base}/container")),
            filestore: Some(format!("{base}/file")),
            artifactregistry: Some(format!("{base}/artifactregistry")),
            storage: Some(base.to_string()),
            serviceusage: Some(format!("{base}/serviceusage")),
            cloudquotas: Some(format!("{base}/cloudquotas")),
            iam: Some(format!("{base}/iam")),
            resourcemanager: Some(format!("{base}/cloudresourcemanager")),
            github: Some(format!("{base}/github")),
            clock: Some(format!("{base}/_sim/clock")),
        }
    }
}

/// Which credentials requests carry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CredentialsMode {
    /// Application Default Credentials.
    Adc,
    /// None (simulators).
    Anonymous,
}

impl CredentialsMode {
    pub fn from_env() -> CredentialsMode {
        match std::env::var(env::ANONYMOUS_CREDENTIALS) {
            Ok(v) if !v.is_empty() && v != "0" && v != "false" => CredentialsMode::Anonymous,
            _ => CredentialsMode::Adc,
        }
    }
}

/// Everything needed to build the clients.
#[derive(Debug, Clone)]
pub struct GcpConfig {
    pub project: String,
    pub endpoints: Endpoints,
    pub credentials: CredentialsMode,
    /// Delay between polls inside adapters that wait on their own (e.g. bucket consistency).
    pub poll: Duration,
}

/// Whether Application Default Credentials can come from anywhere: the environment variable, the
/// well-known file gcloud writes, or a metadata server (on Google Cloud, or `GCE_METADATA_HOST`).
/// Without any, the auth library would fall back to a metadata server that does not exist and
/// every call would fail only after its retries.
fn adc_available() -> bool {
    if std::env::var_os("GOOGLE_APPLICATION_CREDENTIALS").is_some()
        || std::env::var_os("GCE_METADATA_HOST").is_some()
    {
        return true;
    }
    let config_dir = std::env::var_os("CLOUDSDK_CONFIG")
        .map(std::path::PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME").map(|h| std::path::Path::new(&h).join(".config/gcloud"))
        });
    if config_dir.is_some_and(|d| d.join("application_default_credentials.json").exists()) {
        return true;
    }
    // On Google Cloud the machine says so.
    std::fs::read_to_string("/sys/class/dmi/id/product_name").is_ok_and(|p| p.contains("Google"))
}

/// Credentials as the google-cloud-rust clients take them.
pub type Credentials = google_cloud_auth::credentials::Credentials;

impl GcpConfig {
    /// Builds the credentials: anonymous, or Application Default Credentials.
    pub fn credentials(&self) -> CloudResult<Credentials> {
        match self.credentials {
            CredentialsMode::Anonymous => Ok(google_cloud_auth::credentials::anonymous::Builder::new().build()),
            CredentialsMode::Adc if !adc_available() => Err(CloudError::new(
                ErrorClass::Permission,
                "no Application Default Credentials found (no GOOGLE_APPLICATION_CREDENTIALS, no gcloud application-default login, and not on Google Cloud)",
            )
            .with_hint("run `gcloud auth application-default login`, set GOOGLE_APPLICATION_CREDENTIALS, or try a3ctl with --sandbox")),
            CredentialsMode::Adc => google_cloud_auth::credentials::Builder::default().build().map_err(|e| {
                CloudError::new(ErrorClass::Permission, format!("cannot load Application Default Credentials: {e}"))
                    .with_hint("run `gcloud auth application-default login`, or set GOOGLE_APPLICATION_CREDENTIALS")
            }),
        }
    }
}

/// The Google Cloud provider: the registry of every kind's adapter, which it hands each call to
/// (each API module declares its kinds' adapters: `compute::adapters`, `container::adapters` ...),
/// with the hint of a failed call or operation refined for its resource.
pub struct GcpProvider {
    adapters: BTreeMap<Kind, Arc<dyn Provider>>,
    /// The adapter that polls each API's operations (any adapter of that API).
    pollers: BTreeMap<Api, Arc<dyn Provider>>,
    /// The resource of each operation this process started, by operation name, so that the hint
    /// of a failed operation speaks of that resource. An operation resumed from the journal after
    /// a restart is not here: its hint falls back to its API's kind ([`Subject::of_api`]).
    operations: Mutex<HashMap<String, Subject>>,
    retry: crate::cloud::retry::RetryPolicy,
}

impl GcpProvider {
    pub async fn new(config: GcpConfig) -> CloudResult<GcpProvider> {
        let mut adapters: Vec<(Kind, Arc<dyn Provider>)> = Vec::new();
        adapters.extend(compute::adapters(&config).await?);
        adapters.extend(container::adapters(&config).await?);
        adapters.push((
            Kind::Filestore,
            Arc::new(filestore::FilestoreAdapter::new(&config).await?),
        ));
        adapters.push((
            Kind::Repository,
            Arc::new(artifactregistry::ArtifactRegistryAdapter::new(&config).await?),
        ));
        adapters.push((
            Kind::Bucket,
            Arc::new(storage::StorageAdapter::new(&config).await?),
        ));
        adapters.push((
            Kind::Service,
            Arc::new(serviceusage::ServiceAdapter::new(&config).await?),
        ));
        adapters.push((Kind::GpuFamilyQuota, cloudquotas::adapter(&config).await?));
        adapters.push((
            Kind::ServiceAccount,
            Arc::new(iam::ServiceAccountAdapter::new(&config).await?),
        ));
        adapters.push((
            Kind::IamMember,
            Arc::new(iam::IamMemberAdapter::new(&config).await?),
        ));
        adapters.push((
            Kind::Kubernetes,
            Arc::new(crate::cloud::kube::KubeAdapter::new(&config)?),
        ));
        let mut pollers = BTreeMap::new();
        for (kind, adapter) in &adapters {
            pollers.entry(kind.api()).or_insert_with(|| adapter.clone());
        }
        Ok(GcpProvider {
            adapters: adapters.into_iter().collect(),
            pollers,
            operations: Mutex::new(HashMap::new()),
            retry: crate::cloud::retry::RetryPolicy::for_poll(config.poll),
        })
    }

    /// The answer of a call that may start an operation, with the hint for `target`'s resource on
    /// an error; a started operation remembers that resource for [`Provider::poll`].
    fn started(&self, target: &Target, result: CloudResult<Started>) -> CloudResult<Started> {
        match result {
            Ok(Started::Operation(op)) => {
                self.operations
                    .lock()
                    .insert(op.name.clone(), Subject::of(target));
                Ok(Started::Operation(op))
            }
            Ok(done) => Ok(done),
            Err(e) => Err(refine(&Subject::of(target), e)),
        }
    }

    fn adapter(&self, kind: Kind) -> CloudResult<&Arc<dyn Provider>> {
        self.adapters.get(&kind).ok_or_else(|| {
            CloudError::new(
                ErrorClass::Other,
                format!("a3ctl has no Google Cloud adapter for `{kind}` resources"),
            )
        })
    }

    fn for_api(&self, api: Api) -> CloudResult<&Arc<dyn Provider>> {
        self.pollers.get(&api).ok_or_else(|| {
            CloudError::new(
                ErrorClass::Other,
                format!("a3ctl has no adapter polling {api:?} operations"),
            )
        })
    }
}

#[async_trait::async_trait]
impl Provider for GcpProvider {
    async fn read(&self, target: &Target) -> CloudResult<Option<Observed>> {
        self.adapter(target.addr.kind)?
            .read(target)
            .await
            .map_err(|e| refine(&Subject::of(target), e))
    }
    async fn create(&self, target: &Target) -> CloudResult<Started> {
        let result = self.adapter(target.addr.kind)?.create(target).await;
        self.started(target, result)
    }
    fn update_steps(&self, target: &Target, diffs: &[FieldDiff]) -> Vec<UpdateStep> {
        self.adapter(target.addr.kind)
            .map(|a| a.update_steps(target, diffs))
            // No adapter for the kind: no steps, and `update` reports the missing adapter.
            .unwrap_or_default()
    }
    async fn update(&self, target: &Target, step: &UpdateStep) -> CloudResult<Started> {
        let result = self.adapter(target.addr.kind)?.update(target, step).await;
        self.started(target, result)
    }
    async fn delete(&self, target: &Target) -> CloudResult<Started> {
        let result = self.adapter(target.addr.kind)?.delete(target).await;
        self.started(target, result)
    }
    async fn poll(&self, operation: &OperationRef) -> CloudResult<OpStatus> {
        Ok(self.poll_timed(operation).await?.status)
    }
    async fn poll_timed(&self, operation: &OperationRef) -> CloudResult<Polled> {
        let polled = self.for_api(operation.api)?.poll_timed(operation).await;
        let subject = || {
            self.operations
                .lock()
                .get(&operation.name)
                .cloned()
                .unwrap_or_else(|| Subject::of_api(operation.api))
        };
        match polled {
            Ok(Polled {
                status: OpStatus::Failed(e),
                ran,
            }) => {
                let subject = subject();
                self.operations.lock().remove(&operation.name);
                Ok(Polled {
                    status: OpStatus::Failed(refine(&subject, e)),
                    ran,
                })
            }
            Ok(
                done @ Polled {
                    status: OpStatus::Done,
                    ..
                },
            ) => {
                self.operations.lock().remove(&operation.name);
                Ok(done)
            }
            Ok(running) => Ok(running),
            Err(e) => Err(refine(&subject(), e)),
        }
    }
    async fn ready_nodes(&self, target: &Target) -> CloudResult<Option<u64>> {
        self.adapter(target.addr.kind)?.ready_nodes(target).await
    }
    fn settle(&self, target: &Target, observed: &Observed) -> Settle {
        match self.adapter(target.addr.kind) {
            Ok(a) => a.settle(target, observed),
            Err(e) => Settle::Failed { message: e.message },
        }
    }
    fn owned(&self, target: &Target, observed: &Observed) -> bool {
        self.adapter(target.addr.kind)
            .is_ok_and(|a| a.owned(target, observed))
    }
    fn serial_lane(&self, target: &Target) -> Option<String> {
        self.adapter(target.addr.kind)
            .ok()
            .and_then(|a| a.serial_lane(target))
    }
    fn retry_policy(&self) -> crate::cloud::retry::RetryPolicy {
        self.retry
    }
}

/// Classifies a Google API error from its HTTP status, canonical status, reason and message
/// (https://cloud.google.com/apis/design/errors,
/// https://cloud.google.com/kubernetes-engine/docs/troubleshooting/concurrent-operations).
pub fn classify_status(http: Option<u16>, status: &str, reason: &str, message: &str) -> CloudError {
    let lower = message.to_ascii_lowercase();
    let class = if message.contains("incompatible operation")
        || lower.contains("is currently being created, deleted, updated or repaired")
        || lower.contains("please wait and try again once it is done")
    {
        ErrorClass::Busy
    } else if lower.contains("gce_stockout")
        || status == "ZONE_RESOURCE_POOL_EXHAUSTED"
        || status == "GCE_STOCKOUT"
        || lower.contains("does not have enough resources")
        || lower.contains("resource pool exhausted")
        // A specific reservation with no VM left ("Specified reservation 'R' does not have
        // available resources for the request", the VM error kubernetes/autoscaler classifies as
        // RESERVATION_CAPACITY_EXCEEDED): capacity, although GKE fails it FAILED_PRECONDITION.
        || lower.contains("does not have available resources")
    {
        // Before the transient checks: Compute reports stockouts with HTTP 503.
        ErrorClass::Capacity
    } else if reason == "resourceInUseByAnotherResource"
        || lower.contains("is already being used by")
        || lower.contains("not empty")
    {
        ErrorClass::InUse
    } else if reason == "rateLimitExceeded"
        || reason == "userRateLimitExceeded"
        || reason == "backendError"
        || reason == "resourceNotReady"
        || lower.contains("quota exceeded for quota metric") && lower.contains("per minute")
        || matches!(http, Some(500 | 502 | 503 | 504))
        || status == "UNAVAILABLE"
        || status == "DEADLINE_EXCEEDED"
    {
        ErrorClass::Transient
    } else if reason == "quotaExceeded"
        || status == "QUOTA_EXCEEDED"
        || status == "GCE_QUOTA_EXCEEDED"
        || lower.contains("insufficient regional quota")
        || lower.contains("quota")
    {
        ErrorClass::Quota
    } else if http == Some(429) || status == "RESOURCE_EXHAUSTED" {
        ErrorClass::Transient
    } else if http == Some(409)
        && (reason == "alreadyExists"
            || status == "ALREADY_EXISTS"
            || lower.contains("already exists"))
    {
        ErrorClass::AlreadyExists
    } else if http == Some(404) || status == "NOT_FOUND" {
        ErrorClass::NotFound
    } else if http == Some(412) || reason == "conditionNotMet" || status == "ABORTED" {
        ErrorClass::Conflict
    } else if matches!(http, Some(401 | 403))
        || status == "PERMISSION_DENIED"
        || status == "UNAUTHENTICATED"
    {
        ErrorClass::Permission
    } else if matches!(http, Some(400))
        || status == "INVALID_ARGUMENT"
        || status == "FAILED_PRECONDITION"
    {
        ErrorClass::Invalid
    } else {
        ErrorClass::Other
    };
    let mut error = CloudError {
        class,
        http_status: http,
        status: status.to_string(),
        reason: reason.to_string(),
        message: message.to_string(),
        hint: None,
        retry_after: None,
    };
    // The resource is not known here: the kind-less row. The provider, which knows it, puts the
    // row of its kind in place (`refine`).
    if matches!(
        class,
        ErrorClass::Quota | ErrorClass::Capacity | ErrorClass::Permission
    ) {
        error.hint = hint(&Subject::default(), &error);
    }
    error
}

/// Classifies an error of a google-cloud-rust client call.
pub fn classify_gax(error: &google_cloud_gax::error::Error) -> CloudError {
    use google_cloud_gax::error::rpc::StatusDetails;
    let http = error.http_status_code();
    if let Some(status) = error.status() {
        let reason = status
            .details
            .iter()
            .find_map(|d| match d {
                StatusDetails::ErrorInfo(info) => Some(info.reason.clone()),
                _ => None,
            })
            // `ErrorInfo` is optional; the classification falls back to the canonical code.
            .unwrap_or_default();
        let name = status.code.name();
        return classify_status(http, name, &reason, &status.message);
    }
    if error.is_io() || error.is_connect() || error.is_timeout() || error.is_transport() {
        let mut e = CloudError::new(ErrorClass::Transient, format!("connection error: {error}"));
        e.http_status = http;
        return e;
    }
    if let Some(code) = http {
        return classify_status(Some(code), "", "", &error.to_string());
    }
    if error.is_authentication() {
        return CloudError::new(
            ErrorClass::Permission,
            format!("authentication failed: {error}"),
        )
        .with_hint(
            "run `gcloud auth application-default login`, or set GOOGLE_APPLICATION_CREDENTIALS",
        );
    }
    CloudError::new(ErrorClass::Other, error.to_string())
}

#[cfg(test)]
mod tests {

    #[test]
    fn endpoints_are_all_overridden_or_none() {
        use std::collections::HashMap;
        let from = |vars: &[(&str, &str)]| {
            let map: HashMap<String, String> = vars
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
            Endpoints::from_vars(|k| map.get(k).cloned())
        };
        assert_eq!(from(&[]), Ok(Endpoints::default()));
        // The optional two alone are fine.
        let github = from(&[(env::GITHUB_ENDPOINT, "http://mirror")]).unwrap();
        assert_eq!(github.github.as_deref(), Some("http://mirror"));
        let all: Vec<(&str, &str)> = API_ENDPOINTS
            .iter()
            .map(|(k, _)| (*k, "http://sim"))
            .collect();
        assert_eq!(from(&all).unwrap().iam.as_deref(), Some("http://sim"));
        // A blank value counts as unset.
        let mut blank = all.clone();
        blank[7].1 = " ";
        let partial = from(&blank).unwrap_err();
        assert_eq!(partial.set.len(), 8);
        assert_eq!(
            partial.unset,
            vec![(env::IAM_ENDPOINT, "https://iam.googleapis.com")]
        );
        assert!(
            partial.to_string().starts_with(
                "8 of the 9 API endpoint variables are set (A3CTL_COMPUTE_ENDPOINT=http://sim,"
            ),
            "{partial}"
        );
    }
    use super::*;
    use crate::cloud::owned;
    use crate::resource::mark;
    use crate::resource::spec::OWNERSHIP_LABEL as LABEL;
    use crate::resource::{Addr, Lifecycle};
    use container::serial_lane;
    use serde_json::json;

    fn target(kind: Kind, id: &str, spec: serde_json::Value) -> Target {
        Target {
            addr: Addr::new(kind, "x"),
            id: id.into(),
            spec,
            outputs: json!(null),
            context: Default::default(),
            lifecycle: Lifecycle::default(),
        }
    }

    #[test]
    fn errors_are_classified_as_the_executor_needs() {
        let c = |http, status, reason, message| {
            classify_status(Some(http), status, reason, message).class
        };
        assert_eq!(
            c(
                400,
                "FAILED_PRECONDITION",
                "failedPrecondition",
                "Cluster is running incompatible operation operation-1."
            ),
            ErrorClass::Busy
        );
        assert_eq!(
            c(
                429,
                "RESOURCE_EXHAUSTED",
                "rateLimitExceeded",
                "Rate Limit Exceeded"
            ),
            ErrorClass::Transient
        );
        assert_eq!(
            c(503, "UNAVAILABLE", "backendError", "x"),
            ErrorClass::Transient
        );
        assert_eq!(
            c(
                403,
                "PERMISSION_DENIED",
                "quotaExceeded",
                "Quota 'NETWORKS' exceeded.  Limit: 15.0 globally."
            ),
            ErrorClass::Quota
        );
        assert_eq!(
            c(
                409,
                "ALREADY_EXISTS",
                "alreadyExists",
                "The resource already exists"
            ),
            ErrorClass::AlreadyExists
        );
        assert_eq!(c(404, "NOT_FOUND", "notFound", "x"), ErrorClass::NotFound);
        assert_eq!(
            c(
                400,
                "FAILED_PRECONDITION",
                "resourceInUseByAnotherResource",
                "x"
            ),
            ErrorClass::InUse
        );
        assert_eq!(
            c(
                409,
                "",
                "conflict",
                "The bucket you tried to delete is not empty."
            ),
            ErrorClass::InUse
        );
        assert_eq!(
            c(412, "FAILED_PRECONDITION", "conditionNotMet", "x"),
            ErrorClass::Conflict
        );
        assert_eq!(
            c(400, "INVALID_ARGUMENT", "badRequest", "x"),
            ErrorClass::Invalid
        );
        let stockout = classify_status(
            None,
            "",
            "",
            "[GCE_STOCKOUT] The zone does not have enough resources",
        );
        assert_eq!(stockout.class, ErrorClass::Capacity);
        assert!(stockout.hint.unwrap().contains("reservation"));
        let reservation_full = classify_status(
            None,
            "FAILED_PRECONDITION",
            "",
            "Google Compute Engine: Not all instances running in IGM after 35m4s. Expected 32, running 16, transitioning 16. Current errors: [CONDITION_NOT_MET]: Instance 'gke-x-0017' creation failed: Specified reservation 'projects/p/reservations/r' does not have available resources for the request.",
        );
        assert_eq!(reservation_full.class, ErrorClass::Capacity);
    }

    #[test]
    fn ownership_follows_labels_or_the_compute_description_mark() {
        let t = target(Kind::Bucket, "b", json!({"labels": {LABEL: "bp"}}));
        assert!(owned(
            &t,
            &Observed {
                spec: json!({"labels": {LABEL: "bp"}}),
                outputs: json!({})
            }
        ));
        assert!(!owned(
            &t,
            &Observed {
                spec: json!({"labels": {LABEL: "other"}}),
                outputs: json!({})
            }
        ));
        let n = target(Kind::Network, "n", json!({"description": mark("bp")}));
        assert!(owned(
            &n,
            &Observed {
                spec: json!({"description": mark("bp")}),
                outputs: json!({})
            }
        ));
        assert!(!owned(
            &n,
            &Observed {
                spec: json!({"description": ""}),
                outputs: json!({})
            }
        ));
    }

    #[test]
    fn a_cluster_and_its_pools_share_a_lane() {
        let c = target(
            Kind::Cluster,
            "projects/p/locations/r/clusters/c",
            json!({}),
        );
        let p = target(
            Kind::NodePool,
            "projects/p/locations/r/clusters/c/nodePools/gpu",
            json!({}),
        );
        assert_eq!(serial_lane(&c), serial_lane(&p));
        assert_eq!(serial_lane(&target(Kind::Network, "n", json!({}))), None);
    }
}
