//! Releases: a set of upstream manifests (Kueue's `manifests.yaml`) applied and tracked as one
//! resource.
//!
//! A release spec is `{"cluster", "release": {"name", "version", "manifest": {"kind": "url" |
//! "path", "location"}, "sha256": <pinned or null>, "requires": ["<group>/<version>/<Kind>", …]},
//! "missing": []}`.
//! - create / update: download (or read) the manifests, check the pinned sha256, check that their
//!   CustomResourceDefinitions serve every `requires` entry, then server-side apply every object
//!   as field manager `a3ctl` — Namespaces and CRDs first — and delete the objects an earlier
//!   version had that this one does not; the returned operation waits for every CRD to be
//!   Established and every Deployment to be Available (and fails when a Deployment's rollout
//!   passes its progress deadline).
//! - Object by object: every apply, delete and list is one call retried on its own
//!   ([`crate::cloud::retry`]) — a 429, a 5xx, a dropped connection or a webhook that is not
//!   answering costs that call a retry, never the release. Applies are idempotent, so a release
//!   found partly installed (an earlier run killed half-way, an answer lost) is finished by
//!   applying it again: the executor retries a create whose answer was lost instead of adopting
//!   what it finds, and a plan shows a partial release's `missing` objects as drift.
//! - read: look for every object of the release (the list recorded in the outputs, or the
//!   downloaded manifests right after a create) with one LIST per kind and namespace, not a GET
//!   per object (66 objects, 16 kinds for Kueue); the projected spec is the recorded release with `missing`
//!   listing the objects deleted behind a3ctl's back, so the plan shows them as drift and an
//!   update re-applies the release. Outputs: version, sha256, objects, readiness.
//! - delete: the objects in reverse order (webhooks and the controller before the CRDs, the
//!   namespace last).
//!
//! `https://github.com/` URLs go to the `github` endpoint when one is configured (mirrors; the
//! sandbox's simulator), so air-gapped users and tests never need the internet.

use super::client::Clients;
use super::conditions::Condition;
use super::read::ClusterApi;
use super::{cluster_outputs, parse_manifests};
use crate::cloud::retry::{Jitter, RetryPolicy, retry};
use crate::cloud::{CloudError, CloudResult, ErrorClass, OpStatus, Started, Target};
use crate::resource::OperationRef;
use crate::resource::kinds;
use crate::resource::{Api, Observed};
use futures_util::stream::{self, StreamExt, TryStreamExt};
use parking_lot::Mutex;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use std::collections::HashMap;

/// The scheme of a release's wait operation.
const SCHEME: &str = "k8s-release://";
/// Objects applied at once after the namespaces and CRDs.
const APPLY_CONCURRENCY: usize = 8;

/// A release spec, checked.
#[derive(Debug, Clone, PartialEq)]
pub struct ReleaseSpec {
    pub cluster: String,
    pub name: String,
    pub version: String,
    /// `url` or `path`.
    pub source_kind: String,
    pub location: String,
    pub sha256: Option<String>,
    pub requires: Vec<String>,
}

impl ReleaseSpec {
    /// `None` when the spec is not a release.
    pub fn from_spec(spec: &Value) -> Option<CloudResult<ReleaseSpec>> {
        spec.get("release").filter(|r| !r.is_null())?;
        Some(Self::decode(spec))
    }

    fn decode(spec: &Value) -> CloudResult<ReleaseSpec> {
        let typed: kinds::kubernetes::ReleaseSpec = kinds::from_spec("Kubernetes release", spec)?;
        let release = typed.release;
        if typed.cluster.is_empty()
            || release.name.is_empty()
            || release.manifest.location.is_empty()
        {
            return Err(CloudError::new(
                ErrorClass::Invalid,
                "bad release spec: `cluster`, `release.name` and `release.manifest` are required",
            ));
        }
        Ok(ReleaseSpec {
            cluster: typed.cluster,
            name: release.name,
            version: release.version,
            source_kind: release.manifest.kind,
            location: release.manifest.location,
            sha256: release.sha256,
            requires: release.requires,
        })
    }
}

/// One object of a release: what identifies it across processes.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ObjectRef {
    pub api_version: String,
    pub kind: String,
    pub namespace: Option<String>,
    pub name: String,
}

impl ObjectRef {
    fn of(object: &Value) -> ObjectRef {
        // `parse_manifests` refuses objects without apiVersion, kind or name.
        let text = |v: &Value| v.as_str().unwrap_or_default().to_string();
        ObjectRef {
            api_version: text(&object["apiVersion"]),
            kind: text(&object["kind"]),
            namespace: object["metadata"]["namespace"]
                .as_str()
                .filter(|s| !s.is_empty())
                .map(str::to_string),
            name: text(&object["metadata"]["name"]),
        }
    }

    /// `apiVersion|Kind|namespace or -|name`.
    pub fn to_key(&self) -> String {
        format!(
            "{}|{}|{}|{}",
            self.api_version,
            self.kind,
            self.namespace.as_deref().unwrap_or("-"),
            self.name
        )
    }

    pub fn parse(key: &str) -> Option<ObjectRef> {
        let mut parts = key.split('|');
        let (api_version, kind, namespace, name) =
            (parts.next()?, parts.next()?, parts.next()?, parts.next()?);
        if parts.next().is_some() || [api_version, kind, name].iter().any(|p| p.is_empty()) {
            return None;
        }
        Some(ObjectRef {
            api_version: api_version.into(),
            kind: kind.into(),
            namespace: (namespace != "-").then(|| namespace.to_string()),
            name: name.into(),
        })
    }

    /// `Kind namespace/name` for messages.
    pub fn display(&self) -> String {
        match &self.namespace {
            Some(ns) => format!("{} {ns}/{}", self.kind, self.name),
            None => format!("{} {}", self.kind, self.name),
        }
    }
}

/// Downloaded manifests.
#[derive(Debug, Clone)]
pub struct Manifests {
    pub sha256: String,
    pub objects: Vec<Value>,
}

/// Downloads and applies releases.
pub struct Releases {
    http: reqwest::Client,
    github: Option<String>,
    cache: Mutex<HashMap<String, Manifests>>,
    retry: Retrier,
}

/// How each object's calls are retried.
struct Retrier {
    policy: RetryPolicy,
    jitter: Jitter,
}

/// One call about one object, retried on its own.
async fn each<T, Fut>(retrier: &Retrier, call: impl FnMut() -> Fut) -> CloudResult<T>
where
    Fut: std::future::Future<Output = CloudResult<T>>,
{
    retry(&retrier.policy, &retrier.jitter, |_, _, _| {}, call).await
}

/// Install order: namespaces, then CRDs, then everything else.
fn rank(kind: &str) -> u8 {
    match kind {
        "Namespace" => 0,
        "CustomResourceDefinition" => 1,
        _ => 2,
    }
}

/// What a release waits for after applying: its CRDs Established, its Deployments Available.
fn wait_condition(kind: &str) -> Option<Condition> {
    match kind {
        "CustomResourceDefinition" => Some(Condition::Established),
        "Deployment" => Some(Condition::Available),
        _ => None,
    }
}

impl Releases {
    pub fn new(github: Option<String>) -> Releases {
        Releases {
            http: reqwest::Client::new(),
            github: github.map(|g| g.trim_end_matches('/').to_string()),
            cache: Mutex::new(HashMap::new()),
            retry: Retrier {
                policy: RetryPolicy::CALLS,
                jitter: Jitter::new(0x6b75_6575),
            },
        }
    }

    /// Retries each object's calls with `policy`.
    pub fn with_retry(mut self, policy: RetryPolicy) -> Releases {
        self.retry.policy = policy;
        self
    }

    /// The URL to download: `https://github.com/...` moved to the configured endpoint.
    fn url(&self, location: &str) -> String {
        match (&self.github, location.strip_prefix("https://github.com/")) {
            (Some(base), Some(rest)) => format!("{base}/{rest}"),
            _ => location.to_string(),
        }
    }

    /// The manifests of a release, downloaded once per process and checked against the pin.
    pub async fn manifests(&self, spec: &ReleaseSpec) -> CloudResult<Manifests> {
        let key = format!("{}:{}", spec.source_kind, spec.location);
        let cached = self.cache.lock().get(&key).cloned();
        let manifests = match cached {
            Some(m) => m,
            None => {
                let bytes = self.fetch(spec).await?;
                let sha256 = hex(&Sha256::digest(&bytes));
                let text = String::from_utf8(bytes).map_err(|_| {
                    CloudError::new(
                        ErrorClass::Invalid,
                        format!(
                            "the {} manifests at {} are not UTF-8 text",
                            spec.name, spec.location
                        ),
                    )
                })?;
                let objects = parse_manifests(&text).map_err(|e| {
                    CloudError::new(
                        ErrorClass::Invalid,
                        format!(
                            "the {} manifests at {}: {}",
                            spec.name, spec.location, e.message
                        ),
                    )
                })?;
                let m = Manifests { sha256, objects };
                self.cache.lock().insert(key, m.clone());
                m
            }
        };
        if let Some(pinned) = &spec.sha256
            && !pinned.eq_ignore_ascii_case(&manifests.sha256)
        {
            return Err(CloudError::new(
                ErrorClass::Invalid,
                format!(
                    "the {} {} manifests at {} have sha256 {}, but the blueprint pins {pinned}",
                    spec.name, spec.version, spec.location, manifests.sha256
                ),
            )
            .with_hint(format!("the file changed or is not the release you pinned: check where it comes from, then update `sha256` in [software.{}] (or remove it)", spec.name)));
        }
        check_requires(spec, &manifests.objects)?;
        Ok(manifests)
    }

    async fn fetch(&self, spec: &ReleaseSpec) -> CloudResult<Vec<u8>> {
        if spec.source_kind == "path" {
            return std::fs::read(&spec.location).map_err(|e| {
                CloudError::new(
                    ErrorClass::Invalid,
                    format!(
                        "cannot read the {} manifests `{}`: {e}",
                        spec.name, spec.location
                    ),
                )
                .with_hint("`manifest` paths are relative to the directory a3ctl runs in")
            });
        }
        let url = self.url(&spec.location);
        let response = self.http.get(&url).send().await.map_err(|e| {
            CloudError::new(
                ErrorClass::Transient,
                format!("cannot download the {} manifests from {url}: {e}", spec.name),
            )
            .with_hint(format!("without internet access, point `manifest` in [software.{}] at a local copy or a mirror URL", spec.name))
        })?;
        let status = response.status();
        if status == reqwest::StatusCode::NOT_FOUND {
            return Err(CloudError::new(
                ErrorClass::Invalid,
                format!(
                    "{url} does not exist (404): is `{}` a {} release?",
                    spec.version, spec.name
                ),
            ));
        }
        if !status.is_success() {
            let class = if status.is_server_error() || status.as_u16() == 429 {
                ErrorClass::Transient
            } else {
                ErrorClass::Other
            };
            return Err(CloudError::new(
                class,
                format!("downloading {url} failed: HTTP {status}"),
            ));
        }
        response.bytes().await.map(|b| b.to_vec()).map_err(|e| {
            CloudError::new(
                ErrorClass::Transient,
                format!("downloading {url} was cut off: {e}"),
            )
        })
    }

    /// Applies the release and returns the wait for its CRDs and controllers.
    pub async fn apply(&self, clients: &Clients, target: &Target) -> CloudResult<Started> {
        let spec = spec_of(target)?;
        let manifests = self.manifests(&spec).await?;
        let (endpoint, ca) = cluster_outputs(target, &spec.cluster)?;
        let api = ClusterApi::connect(clients, &endpoint, Some(&ca)).await?;
        // Every object has its kind (`parse_manifests`).
        let (first, rest): (Vec<&Value>, Vec<&Value>) = manifests
            .objects
            .iter()
            .partition(|o| rank(o["kind"].as_str().unwrap_or_default()) < 2);
        let mut first = first;
        first.sort_by_key(|o| rank(o["kind"].as_str().unwrap_or_default()));
        for object in first {
            each(&self.retry, || api.apply(object)).await?;
        }
        let api = &api;
        let applies: Vec<_> = rest
            .into_iter()
            .map(|o| each(&self.retry, move || api.apply(o)))
            .collect();
        stream::iter(applies)
            .buffer_unordered(APPLY_CONCURRENCY)
            .try_collect::<Vec<()>>()
            .await?;
        // Objects an earlier version installed that this one no longer has.
        let now: Vec<String> = manifests
            .objects
            .iter()
            .map(|o| ObjectRef::of(o).to_key())
            .collect();
        let stale: Vec<ObjectRef> = recorded_objects(target)
            .into_iter()
            .filter(|o| !now.contains(&o.to_key()))
            .collect();
        delete_all(api, &self.retry, stale).await?;
        let waits: Vec<String> = manifests
            .objects
            .iter()
            .filter_map(|o| {
                // Every object has its kind (`parse_manifests`).
                let c = wait_condition(o["kind"].as_str().unwrap_or_default())?;
                Some(format!("{}|{}", ObjectRef::of(o).to_key(), c.name()))
            })
            .collect();
        if waits.is_empty() {
            return Ok(Started::Done);
        }
        Ok(Started::Operation(OperationRef {
            api: Api::Kubernetes,
            name: format!("{SCHEME}{endpoint}/{}?wait={}", spec.name, waits.join(",")),
        }))
    }

    /// Reads the release's objects: one LIST per kind and namespace.
    pub async fn read(&self, clients: &Clients, target: &Target) -> CloudResult<Option<Observed>> {
        let spec = spec_of(target)?;
        let mut objects = recorded_objects(target);
        let mut sha256 = target.outputs["sha256"].as_str().map(str::to_string);
        if objects.is_empty() {
            let manifests = self.manifests(&spec).await?;
            objects = manifests.objects.iter().map(ObjectRef::of).collect();
            sha256 = Some(manifests.sha256);
        }
        let (endpoint, ca) = cluster_outputs(target, &spec.cluster)?;
        let api = ClusterApi::connect(clients, &endpoint, Some(&ca)).await?;
        let live = Live::list(&api, &self.retry, objects.iter()).await?;
        let mut missing = Vec::new();
        let mut waiting = Vec::new();
        for object in &objects {
            match live.get(object) {
                None => missing.push(object.display()),
                Some(found) => {
                    if let Some(c) = wait_condition(&object.kind)
                        && !c.holds(found)
                    {
                        waiting.push(format!("{}: {}", object.display(), c.progress(found)));
                    }
                }
            }
        }
        if missing.len() == objects.len() {
            return Ok(None);
        }
        let ready = missing.is_empty() && waiting.is_empty();
        let summary = if ready {
            format!("{} objects installed", objects.len())
        } else if let Some(first) = missing.first() {
            format!("{first} is missing")
        } else {
            // Not ready, nothing missing: something is waiting.
            waiting.first().cloned().unwrap_or_default()
        };
        let desired: kinds::kubernetes::ReleaseSpec =
            kinds::from_spec("Kubernetes release", &target.spec)?;
        let spec_out = kinds::to_spec(&kinds::kubernetes::ReleaseSpec { missing, ..desired });
        Ok(Some(Observed {
            spec: spec_out,
            outputs: json!({
                "version": spec.version,
                "sha256": sha256,
                "objects": objects.iter().map(ObjectRef::to_key).collect::<Vec<_>>(),
                "ready": ready,
                "summary": summary,
            }),
        }))
    }

    /// Deletes every recorded object of the release.
    pub async fn delete(&self, clients: &Clients, target: &Target) -> CloudResult<Started> {
        let spec = spec_of(target)?;
        let (endpoint, ca) = cluster_outputs(target, &spec.cluster)?;
        let api = ClusterApi::connect(clients, &endpoint, Some(&ca)).await?;
        let mut objects = recorded_objects(target);
        if objects.is_empty() {
            objects = self
                .manifests(&spec)
                .await?
                .objects
                .iter()
                .map(ObjectRef::of)
                .collect();
        }
        delete_all(&api, &self.retry, objects).await?;
        Ok(Started::Done)
    }
}

/// The live objects of some kinds: one LIST per `(apiVersion, kind, namespace)`.
struct Live {
    /// `(apiVersion, kind, namespace)` → name → object.
    by_kind: HashMap<(String, String, Option<String>), HashMap<String, Value>>,
}

impl Live {
    async fn list<'o>(
        api: &ClusterApi<'_>,
        retrier: &Retrier,
        objects: impl Iterator<Item = &'o ObjectRef>,
    ) -> CloudResult<Live> {
        let mut by_kind = HashMap::new();
        for object in objects {
            let key = (
                object.api_version.clone(),
                object.kind.clone(),
                object.namespace.clone(),
            );
            if by_kind.contains_key(&key) {
                continue;
            }
            let items = each(retrier, || {
                api.list(
                    &object.api_version,
                    &object.kind,
                    object.namespace.as_deref(),
                )
            })
            .await?
            // `None`: the kind is not served (yet), so none of its objects exist.
            .unwrap_or_default();
            let named: HashMap<String, Value> = items
                .into_iter()
                .filter_map(|o| Some((o["metadata"]["name"].as_str()?.to_string(), o)))
                .collect();
            by_kind.insert(key, named);
        }
        Ok(Live { by_kind })
    }

    fn get(&self, object: &ObjectRef) -> Option<&Value> {
        let key = (
            object.api_version.clone(),
            object.kind.clone(),
            object.namespace.clone(),
        );
        self.by_kind.get(&key)?.get(&object.name)
    }
}

/// Whether an operation name is a release wait.
pub fn is_release_wait(name: &str) -> bool {
    name.starts_with(SCHEME)
}

/// Polls a release wait: done when every listed object holds its condition.
pub async fn poll(clients: &Clients, name: &str) -> CloudResult<OpStatus> {
    let bad = || {
        CloudError::new(
            ErrorClass::Invalid,
            format!("`{name}` is not a release wait ({SCHEME}ENDPOINT/NAME?wait=...)"),
        )
    };
    let rest = name.strip_prefix(SCHEME).ok_or_else(bad)?;
    let (path, query) = rest.split_once('?').ok_or_else(bad)?;
    let endpoint = path.split('/').next().ok_or_else(bad)?;
    let list = query.strip_prefix("wait=").ok_or_else(bad)?;
    let mut waits = Vec::new();
    for item in list.split(',') {
        let (key, condition) = item.rsplit_once('|').ok_or_else(bad)?;
        let object = ObjectRef::parse(key).ok_or_else(bad)?;
        waits.push((object, Condition::parse(condition).ok_or_else(bad)?));
    }
    let api = ClusterApi::connect(clients, endpoint, None).await?;
    // The executor retries a poll that failed; one LIST per kind is tried once here.
    let once = Retrier {
        policy: RetryPolicy {
            max_attempts: 1,
            ..RetryPolicy::CALLS
        },
        jitter: Jitter::new(0),
    };
    let live = Live::list(&api, &once, waits.iter().map(|(o, _)| o)).await?;
    for (object, condition) in &waits {
        match live.get(object) {
            None => {
                return Ok(OpStatus::Failed(CloudError::new(
                    ErrorClass::NotFound,
                    format!(
                        "{} disappeared while waiting for it to be {}",
                        object.display(),
                        condition.name()
                    ),
                )));
            }
            Some(found) if !condition.holds(found) => {
                if let Some(why) = condition.failed(found) {
                    return Ok(OpStatus::Failed(CloudError::new(
                        ErrorClass::Other,
                        format!("{}: {why}", object.display()),
                    )));
                }
                return Ok(OpStatus::Running {
                    progress: Some(format!(
                        "{}: waiting for {} ({})",
                        object.display(),
                        condition.name(),
                        condition.progress(found)
                    )),
                });
            }
            Some(_) => {}
        }
    }
    Ok(OpStatus::Done)
}

fn spec_of(target: &Target) -> CloudResult<ReleaseSpec> {
    ReleaseSpec::from_spec(&target.spec).unwrap_or_else(|| {
        Err(CloudError::new(
            ErrorClass::Invalid,
            format!("{}: not a release spec", target.addr),
        ))
    })
}

fn recorded_objects(target: &Target) -> Vec<ObjectRef> {
    target.outputs["objects"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|k| k.as_str().and_then(ObjectRef::parse))
        .collect()
}

/// Every `requires` entry (`group/version/Kind`) must be served by a CRD of the manifests.
fn check_requires(spec: &ReleaseSpec, objects: &[Value]) -> CloudResult<()> {
    for required in &spec.requires {
        let Some((api_version, kind)) = required.rsplit_once('/') else {
            continue;
        };
        let (group, version) = api_version.split_once('/').unwrap_or(("", api_version));
        let crd = objects.iter().find(|o| {
            o["kind"] == "CustomResourceDefinition"
                && o["spec"]["group"] == group
                && o["spec"]["names"]["kind"] == kind
        });
        let served: Vec<&str> = crd
            .and_then(|c| c["spec"]["versions"].as_array())
            .into_iter()
            .flatten()
            .filter(|v| v["served"].as_bool().unwrap_or(false))
            .filter_map(|v| v["name"].as_str())
            .collect();
        if !served.contains(&version) {
            let found = if served.is_empty() {
                "does not define it".to_string()
            } else {
                format!("serves {}", served.join(", "))
            };
            return Err(CloudError::new(
                ErrorClass::Invalid,
                format!(
                    "the {} {} manifests do not serve {kind} as {api_version} ({found})",
                    spec.name, spec.version
                ),
            )
            .with_hint(format!(
                "a3ctl writes {kind} objects as {api_version} for {} {}; pick a {} version whose API matches, or report the mismatch",
                spec.name, spec.version, spec.name
            )));
        }
    }
    Ok(())
}

/// Deletes objects in reverse install order; already-gone objects (or kinds) are fine.
async fn delete_all(
    api: &ClusterApi<'_>,
    retrier: &Retrier,
    mut objects: Vec<ObjectRef>,
) -> CloudResult<()> {
    objects.sort_by_key(|o| std::cmp::Reverse(rank(&o.kind)));
    for object in objects {
        each(retrier, || {
            api.delete(
                &object.api_version,
                &object.kind,
                object.namespace.as_deref(),
                &object.name,
            )
        })
        .await?;
    }
    Ok(())
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn object_refs_round_trip() {
        let o = ObjectRef::of(&json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "kueue-controller-manager", "namespace": "kueue-system"}}));
        assert_eq!(ObjectRef::parse(&o.to_key()), Some(o.clone()));
        assert_eq!(
            o.display(),
            "Deployment kueue-system/kueue-controller-manager"
        );
        let c = ObjectRef::of(&json!({"apiVersion": "apiextensions.k8s.io/v1",
            "kind": "CustomResourceDefinition", "metadata": {"name": "topologies.kueue.x-k8s.io"}}));
        assert_eq!(
            c.to_key(),
            "apiextensions.k8s.io/v1|CustomResourceDefinition|-|topologies.kueue.x-k8s.io"
        );
        assert_eq!(ObjectRef::parse(&c.to_key()), Some(c));
        assert_eq!(ObjectRef::parse("v1|Namespace"), None);
    }

    #[test]
    fn requires_are_checked_against_the_crds() {
        let crd = json!({"kind": "CustomResourceDefinition", "spec": {"group": "kueue.x-k8s.io",
            "names": {"kind": "Topology"}, "versions": [{"name": "v1alpha1", "served": true}]}});
        let spec = ReleaseSpec {
            cluster: "c".into(),
            name: "kueue".into(),
            version: "v0.12.2".into(),
            source_kind: "path".into(),
            location: "k.yaml".into(),
            sha256: None,
            requires: vec!["kueue.x-k8s.io/v1alpha1/Topology".into()],
        };
        assert!(check_requires(&spec, std::slice::from_ref(&crd)).is_ok());
        let wrong = ReleaseSpec {
            requires: vec!["kueue.x-k8s.io/v1beta2/Topology".into()],
            ..spec.clone()
        };
        let e = check_requires(&wrong, &[crd]).unwrap_err();
        assert!(
            e.message
                .contains("do not serve Topology as kueue.x-k8s.io/v1beta2 (serves v1alpha1)"),
            "{}",
            e.message
        );
        let e = check_requires(&wrong, &[]).unwrap_err();
        assert!(e.message.contains("does not define it"));
    }

    #[test]
    fn github_urls_go_to_the_configured_endpoint() {
        let r = Releases::new(Some("http://127.0.0.1:9/github/".into()));
        assert_eq!(
            r.url(
                "https://github.com/kubernetes-sigs/kueue/releases/download/v0.17.1/manifests.yaml"
            ),
            "http://127.0.0.1:9/github/kubernetes-sigs/kueue/releases/download/v0.17.1/manifests.yaml"
        );
        assert_eq!(
            r.url("https://mirror.internal/k.yaml"),
            "https://mirror.internal/k.yaml"
        );
        assert_eq!(
            Releases::new(None).url("https://github.com/x"),
            "https://github.com/x"
        );
    }
}
