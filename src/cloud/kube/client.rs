//! Kubernetes clients, one per cluster endpoint, and the kinds each cluster serves.
//!
//! A client is built from `https://<endpoint>`, the cluster CA that GKE records (base64 of PEM,
//! the `ca_certificate` output of the cluster) and a bearer token: an access token from
//! Application Default Credentials, or a fixed placeholder for simulators. TLS is always verified
//! against the cluster CA alone. ADC tokens live about an hour, so ADC clients are rebuilt (with a
//! fresh token, from the remembered CA) after [`TOKEN_REFRESH`]. The token is only handed to
//! kube-rs (as a `SecretString`): never logged, never stored in state.
//!
//! Kinds are resolved per group-version with `discovery::pinned_kind` (one request for the
//! group-version's resource list, no aggregated discovery — which a server answering with a legacy
//! `APIGroupList` turns into "0 groups"). Hits are cached; a miss always asks the server again, so a
//! kind whose CRD was applied earlier in the same run is found once it is served.

use super::errors::{chain, classify};
use crate::cloud::gcp::{CredentialsMode, GcpConfig};
use crate::cloud::{CloudError, CloudResult, ErrorClass};
use base64::Engine as _;
use kube::api::{ApiResource, GroupVersionKind};
use kube::discovery::Scope;
use parking_lot::Mutex;
use rustls_pki_types::CertificateDer;
use rustls_pki_types::pem::PemObject;
use std::collections::HashMap;
use std::time::{Duration, Instant};

/// ADC clients are rebuilt with a fresh token after this long.
pub const TOKEN_REFRESH: Duration = Duration::from_secs(30 * 60);

/// The placeholder bearer token sent in [`CredentialsMode::Anonymous`].
pub const ANONYMOUS_TOKEN: &str = "a3ctl-anonymous";

enum Auth {
    Static,
    Adc(google_cloud_auth::credentials::AccessTokenCredentials),
}

struct Cached {
    client: kube::Client,
    /// DER certificates of the cluster CA (public; kept to rebuild the client).
    ca: Vec<Vec<u8>>,
    built: Instant,
}

/// A served kind: where its objects live.
#[derive(Debug, Clone)]
pub struct Served {
    pub resource: ApiResource,
    pub namespaced: bool,
}

/// Clients and discovered kinds, per endpoint.
pub struct Clients {
    auth: Auth,
    /// Objects per page of every list ([`super::paging`]).
    page_size: u32,
    clients: Mutex<HashMap<String, Cached>>,
    kinds: Mutex<HashMap<(String, String, String), Served>>,
}

/// Decodes GKE's `clusterCaCertificate` (base64 of PEM; plain PEM is accepted too) into DER.
pub fn ca_der(ca: &str) -> CloudResult<Vec<Vec<u8>>> {
    let bad = |why: String| {
        CloudError::new(
            ErrorClass::Invalid,
            format!("the cluster's CA certificate is unusable: {why}"),
        )
    };
    let pem = if ca.trim_start().starts_with("-----BEGIN") {
        ca.as_bytes().to_vec()
    } else {
        base64::engine::general_purpose::STANDARD
            .decode(ca.trim())
            .map_err(|e| bad(e.to_string()))?
    };
    let certs = CertificateDer::pem_slice_iter(&pem)
        .map(|c| c.map(|c| c.to_vec()))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| bad(e.to_string()))?;
    if certs.is_empty() {
        return Err(bad("no certificate in it".into()));
    }
    Ok(certs)
}

/// How an error about a kind the cluster does not serve begins.
const UNSERVED: &str = "the cluster does not serve";

/// Whether `error` says the cluster does not serve the object's kind (its CRD is not installed):
/// for a read, the object does not exist.
pub fn is_unserved(error: &CloudError) -> bool {
    error.class == ErrorClass::Invalid && error.message.starts_with(UNSERVED)
}

impl Clients {
    pub fn new(config: &GcpConfig) -> CloudResult<Clients> {
        let auth = match config.credentials {
            CredentialsMode::Anonymous => Auth::Static,
            CredentialsMode::Adc => Auth::Adc(
                google_cloud_auth::credentials::Builder::default()
                    .build_access_token_credentials()
                    .map_err(|e| {
                        CloudError::new(
                            ErrorClass::Permission,
                            format!("cannot load Application Default Credentials: {e}"),
                        )
                        .with_hint("run `gcloud auth application-default login`, or set GOOGLE_APPLICATION_CREDENTIALS")
                    })?,
            ),
        };
        Ok(Clients {
            auth,
            page_size: super::paging::page_size_from_env(),
            clients: Mutex::new(HashMap::new()),
            kinds: Mutex::new(HashMap::new()),
        })
    }

    /// Objects per page of every list ([`super::paging`]).
    pub fn page_size(&self) -> u32 {
        self.page_size
    }

    async fn token(&self) -> CloudResult<String> {
        match &self.auth {
            Auth::Static => Ok(ANONYMOUS_TOKEN.to_string()),
            Auth::Adc(credentials) => {
                credentials
                    .access_token()
                    .await
                    .map(|t| t.token)
                    .map_err(|e| {
                        CloudError::new(
                            ErrorClass::Permission,
                            format!("no access token from Application Default Credentials: {e}"),
                        )
                    })
            }
        }
    }

    /// The client for `endpoint`. `ca` (GKE's base64 PEM) is required the first time and replaces
    /// the remembered CA when it differs; without it, the cached client (or its CA) is used.
    pub async fn client(&self, endpoint: &str, ca: Option<&str>) -> CloudResult<kube::Client> {
        let ca = ca
            .filter(|c| !c.trim().is_empty())
            .map(ca_der)
            .transpose()?;
        let remembered = {
            let clients = self.clients.lock();
            match clients.get(endpoint) {
                Some(cached)
                    if ca.as_ref().is_none_or(|c| *c == cached.ca)
                        && (matches!(self.auth, Auth::Static)
                            || cached.built.elapsed() < TOKEN_REFRESH) =>
                {
                    return Ok(cached.client.clone());
                }
                Some(cached) => Some(cached.ca.clone()),
                None => None,
            }
        };
        let Some(ca) = ca.or(remembered) else {
            return Err(CloudError::new(
                ErrorClass::Other,
                format!("no client for the Kubernetes API at {endpoint}: its cluster's CA is not known yet"),
            )
            .with_hint("a Kubernetes operation is polled before any call on its cluster: call KubeAdapter::connect (or read) with the target first"));
        };
        let client = self.build(endpoint, ca.clone()).await?;
        self.clients.lock().insert(
            endpoint.to_string(),
            Cached {
                client: client.clone(),
                ca,
                built: Instant::now(),
            },
        );
        Ok(client)
    }

    async fn build(&self, endpoint: &str, ca: Vec<Vec<u8>>) -> CloudResult<kube::Client> {
        // kube-rs builds its TLS config with the process-default provider; with both aws-lc-rs and
        // ring compiled in (reqwest brings ring) there is none unless someone installs it. main()
        // does; do it here too for library users and tests (idempotent, same provider).
        if rustls::crypto::CryptoProvider::get_default().is_none() {
            let _ = rustls::crypto::aws_lc_rs::default_provider().install_default();
        }
        let url = format!("https://{endpoint}");
        let mut config = kube::Config::new(url.parse().map_err(|e| {
            CloudError::new(
                ErrorClass::Invalid,
                format!("bad cluster endpoint `{endpoint}`: {e}"),
            )
        })?);
        config.root_cert = Some(ca);
        config.accept_invalid_certs = false;
        // The executor retries with backoff and re-reads first; no hidden retries of mutations.
        config.default_retry = false;
        config.connect_timeout = Some(Duration::from_secs(20));
        config.read_timeout = Some(Duration::from_secs(60));
        config.auth_info = kube::config::AuthInfo {
            token: Some(self.token().await?.into()),
            ..Default::default()
        };
        kube::Client::try_from(config).map_err(|e| {
            CloudError::new(
                ErrorClass::Other,
                format!(
                    "cannot build a Kubernetes client for {endpoint}: {}",
                    chain(&e)
                ),
            )
        })
    }

    /// Where objects of `api_version`/`kind` live on this cluster.
    pub async fn resolve(
        &self,
        client: &kube::Client,
        endpoint: &str,
        api_version: &str,
        kind: &str,
    ) -> CloudResult<Served> {
        let key = (
            endpoint.to_string(),
            api_version.to_string(),
            kind.to_string(),
        );
        if let Some(served) = self.kinds.lock().get(&key) {
            return Ok(served.clone());
        }
        let (group, version) = match api_version.split_once('/') {
            Some((g, v)) => (g, v),
            None => ("", api_version),
        };
        let gvk = GroupVersionKind::gvk(group, version, kind);
        let unknown = || {
            let hint = if group == "resource.k8s.io" {
                // Dynamic Resource Allocation is GA (`v1`, on by default) from Kubernetes 1.34;
                // older minors serve beta versions only when enabled.
                "resource.k8s.io/v1 is served from GKE 1.34 on: check the cluster's version (`a3ctl plan` shows it), and that the blueprint asks for 1.34 or later"
            } else {
                "for a custom resource, its CustomResourceDefinition must be applied and Established first; GKE's networking.gke.io kinds need a multi-networking cluster"
            };
            CloudError::new(
                ErrorClass::Invalid,
                format!("{UNSERVED} {kind} ({api_version})"),
            )
            .with_hint(hint)
        };
        let (resource, caps) = match kube::discovery::pinned_kind(client, &gvk).await {
            Ok(found) => found,
            Err(kube::Error::Discovery(_)) => return Err(unknown()),
            Err(e) => {
                let classified = classify(&e);
                return Err(if classified.class == ErrorClass::NotFound {
                    unknown()
                } else {
                    classified
                });
            }
        };
        let served = Served {
            resource,
            namespaced: caps.scope == Scope::Namespaced,
        };
        self.kinds.lock().insert(key, served.clone());
        Ok(served)
    }
}
