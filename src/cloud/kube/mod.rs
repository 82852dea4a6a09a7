//! Kubernetes objects inside GKE clusters, through kube-rs: server-side apply, readiness waits,
//! drift-free reads.
//!
//! A resource of kind `k8s` has the spec `{"cluster": "<cluster name>", "object": <a full
//! Kubernetes object>}` (optionally `"ready": "<condition>"`, see [`Condition`]), and
//! `target.context` holds its cluster's recorded outputs (`endpoint`, `ca_certificate` as the GKE
//! adapter records them). [`KubeAdapter`] implements the same [`Provider`] trait as the Google
//! adapters:
//! - `create` / `update`: server-side apply with field manager `a3ctl` (forced), then an
//!   [`OperationRef`] (`api: Kubernetes`) whose name says what to wait for ([`operation`]); kinds
//!   with nothing to wait for return [`Started::Done`];
//! - `poll`: one GET of the object, `Done` once its condition holds;
//! - `read`: the live object projected onto the desired object's paths ([`project`]);
//! - `delete`: DELETE (foreground for workloads);
//! - a Kueue ResourceFlavor whose selection changes is made anew while the ClusterQueues hold
//!   ([`flavor`]): Kueue refuses the change in place.
//!
//! Files: [`client`] (clients per endpoint, CA, token, discovery), [`conditions`] (readiness),
//! [`errors`] (classification), [`flavor`] (moving a Kueue flavor), [`operation`] (the operation
//! name), [`paging`] (every list, page by page), [`project`] (projection), [`release`] (upstream manifests applied as one resource, e.g.
//! Kueue), [`read`] (direct reads and applies for `a3ctl verify`).
//!
//! A string value `${<address>.<output>}` anywhere in an object (e.g. a Filestore volume's IP,
//! `${filestore.shared.ip_address}`) is replaced by that output of a resource the object depends
//! on before it is applied; reads put the reference back where the live value equals it, so the
//! plan compares like with like.

pub mod client;
pub mod conditions;
pub mod errors;
pub mod flavor;
pub mod operation;
pub mod paging;
pub mod project;
pub mod read;
pub mod release;

pub use conditions::Condition;
pub use operation::WaitFor;

use super::gcp::GcpConfig;
use super::{CloudError, CloudResult, ErrorClass, OpStatus, Settle, Started, Target, UpdateStep};
use crate::resource::FieldDiff;
use crate::resource::OperationRef;
use crate::resource::kinds::{self, kubernetes::ObjectSpec};
use crate::resource::{Api, Kind, Observed};
use client::{Clients, Served};
use errors::classify;
use kube::api::{Api as KubeApi, DeleteParams, DynamicObject, Patch, PatchParams};
use release::ReleaseSpec;
use serde_json::{Value, json};

/// The field manager of every apply.
pub const FIELD_MANAGER: &str = "a3ctl";

/// Kinds deleted with foreground propagation (their pods go first).
const WORKLOADS: [&str; 6] = [
    "Deployment",
    "DaemonSet",
    "StatefulSet",
    "ReplicaSet",
    "Job",
    "CronJob",
];

/// The Kubernetes adapter.
pub struct KubeAdapter {
    clients: Clients,
    releases: release::Releases,
}

/// A `k8s` resource's spec, checked.
#[derive(Debug, Clone, PartialEq)]
pub struct Desired {
    pub cluster: String,
    pub object: Value,
    pub api_version: String,
    pub kind: String,
    pub name: String,
    /// As written in the object (`None` for cluster-scoped objects, or namespaced ones that
    /// rely on `default`).
    pub namespace: Option<String>,
    pub condition: Condition,
}

impl Desired {
    pub fn from_spec(spec: &Value) -> CloudResult<Desired> {
        let bad = |why: &str| {
            CloudError::new(
                ErrorClass::Invalid,
                format!("bad Kubernetes object spec: {why}"),
            )
        };
        let typed: ObjectSpec = kinds::from_spec("Kubernetes object", spec)?;
        let types = typed.object.types.as_ref();
        let text = |v: Option<&String>, what: &str| {
            v.filter(|s| !s.is_empty())
                .cloned()
                .ok_or_else(|| bad(&format!("the object has no {what}")))
        };
        let api_version = text(types.map(|t| &t.api_version), "apiVersion")?;
        let kind = text(types.map(|t| &t.kind), "kind")?;
        let name = text(typed.object.metadata.name.as_ref(), "metadata.name")?;
        let namespace = typed
            .object
            .metadata
            .namespace
            .clone()
            .filter(|s| !s.is_empty());
        let condition = match typed.ready.as_deref() {
            Some(c) => Condition::parse(c)
                .ok_or_else(|| bad(&format!("unknown readiness condition `{c}`")))?,
            None => Condition::default_for(&api_version, &kind),
        };
        let object = kinds::to_spec(&typed)["object"].take();
        Ok(Desired {
            cluster: typed.cluster,
            object,
            api_version,
            kind,
            name,
            namespace,
            condition,
        })
    }
}

/// `kind/namespace/name` (`kind//name` for cluster-scoped objects): a stable key for an object.
pub fn object_key(object: &Value) -> String {
    format!(
        "{}/{}/{}",
        // Objects come from specs or `parse_manifests`, which require kind and name; a
        // cluster-scoped object has no namespace.
        object["kind"].as_str().unwrap_or_default(),
        object["metadata"]["namespace"].as_str().unwrap_or_default(),
        object["metadata"]["name"].as_str().unwrap_or_default()
    )
}

/// Parses multi-document YAML (release manifests) into objects; empty documents are skipped.
pub fn parse_manifests(yaml: &str) -> CloudResult<Vec<Value>> {
    let documents: Vec<Value> = serde_saphyr::from_multiple(yaml).map_err(|e| {
        CloudError::new(
            ErrorClass::Invalid,
            format!("cannot parse the manifests: {e}"),
        )
    })?;
    let mut objects = Vec::new();
    for document in documents {
        match document {
            Value::Null => {}
            Value::Object(ref m) if m.is_empty() => {}
            Value::Object(_) => {
                // What every Kubernetes object needs (the API server refuses one without them),
                // so the code reading the objects can count on them.
                for (field, value) in [
                    ("apiVersion", &document["apiVersion"]),
                    ("kind", &document["kind"]),
                    ("metadata.name", &document["metadata"]["name"]),
                ] {
                    if value.as_str().is_none_or(str::is_empty) {
                        return Err(CloudError::new(
                            ErrorClass::Invalid,
                            format!(
                                "a manifest object ({}) has no `{field}`",
                                object_key(&document)
                            ),
                        ));
                    }
                }
                objects.push(document)
            }
            other => {
                return Err(CloudError::new(
                    ErrorClass::Invalid,
                    format!("a manifest document is not an object: {other}"),
                ));
            }
        }
    }
    Ok(objects)
}

/// The cluster's `(endpoint, ca_certificate)` from the target's context: the `cluster` entry
/// named like the spec's cluster (by address name or self link), or the only entry that has an
/// endpoint.
pub fn cluster_outputs(target: &Target, cluster: &str) -> CloudResult<(String, String)> {
    let usable = |v: &Value| v["endpoint"].as_str().is_some_and(|e| !e.is_empty());
    let named = target.context.iter().find(|(addr, v)| {
        addr.kind == Kind::Cluster
            && usable(v)
            && (addr.name == cluster
                || v["self_link"]
                    .as_str()
                    .is_some_and(|l| l.ends_with(&format!("/clusters/{cluster}"))))
    });
    let candidates: Vec<_> = target.context.iter().filter(|(_, v)| usable(v)).collect();
    let outputs = match (named, candidates.as_slice()) {
        (Some((_, v)), _) => v,
        (None, [(_, v)]) => *v,
        _ => {
            return Err(CloudError::new(
                ErrorClass::Other,
                format!(
                    "{}: the endpoint of cluster `{cluster}` is not known (it is not among the recorded outputs this object depends on)",
                    target.addr
                ),
            )
            .with_hint("the cluster is not recorded with an endpoint yet: run `a3ctl apply` to create it (or `a3ctl plan` to refresh it) before what runs inside it"));
        }
    };
    // `usable` checked the endpoint; a cluster that has one always has its CA certificate, and
    // TLS without it could not verify the API server: say so rather than connect without it.
    let endpoint = outputs["endpoint"].as_str().unwrap_or("").to_string();
    match outputs["ca_certificate"].as_str() {
        Some(ca) if !ca.is_empty() => Ok((endpoint, ca.to_string())),
        _ => Err(CloudError::new(
            ErrorClass::Other,
            format!(
                "{}: the CA certificate of cluster `{cluster}` is not recorded, so its API server at {endpoint} cannot be verified",
                target.addr
            ),
        )
        .with_hint("run `a3ctl plan` to refresh the cluster's record (GKE reports the certificate once the control plane is up), then apply again")),
    }
}

/// A `${<address>.<output>}` reference: the address and the output key.
fn reference(text: &str) -> Option<(&str, &str)> {
    text.strip_prefix("${")?.strip_suffix('}')?.rsplit_once('.')
}

/// The object with every reference replaced by the recorded output it names.
pub fn resolve_references(object: &Value, target: &Target) -> CloudResult<Value> {
    Ok(match object {
        Value::String(text) => match reference(text) {
            Some((addr, key)) => {
                let value = target
                    .context
                    .iter()
                    .find(|(a, _)| a.to_string() == addr)
                    .map(|(_, outputs)| &outputs[key])
                    .filter(|v| !v.is_null() && *v != "");
                match value {
                    Some(v) => v.clone(),
                    None => {
                        return Err(CloudError::new(
                            ErrorClass::Other,
                            format!(
                                "{}: `{text}` names an output that `{addr}` has not recorded (yet)",
                                target.addr
                            ),
                        )
                        .with_hint("the object must depend on that resource; apply it again once the resource exists"));
                    }
                }
            }
            None => object.clone(),
        },
        Value::Array(items) => Value::Array(
            items
                .iter()
                .map(|v| resolve_references(v, target))
                .collect::<CloudResult<_>>()?,
        ),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| Ok((k.clone(), resolve_references(v, target)?)))
                .collect::<CloudResult<_>>()?,
        ),
        other => other.clone(),
    })
}

/// Puts references back into a projected live object where the live value is what the
/// reference resolved to.
fn restore_references(desired: &Value, resolved: &Value, projected: &mut Value) {
    match (desired, resolved, projected) {
        (Value::String(text), _, live) if reference(text).is_some() && live == resolved => {
            *live = desired.clone();
        }
        (Value::Array(d), Value::Array(r), Value::Array(p)) => {
            for ((d, r), p) in d.iter().zip(r).zip(p.iter_mut()) {
                restore_references(d, r, p);
            }
        }
        (Value::Object(d), Value::Object(r), Value::Object(p)) => {
            for (key, d) in d {
                if let (Some(r), Some(p)) = (r.get(key), p.get_mut(key)) {
                    restore_references(d, r, p);
                }
            }
        }
        _ => {}
    }
}

fn dynamic_api(
    client: kube::Client,
    served: &Served,
    namespace: Option<&str>,
) -> KubeApi<DynamicObject> {
    if served.namespaced {
        KubeApi::namespaced_with(client, namespace.unwrap_or("default"), &served.resource)
    } else {
        KubeApi::all_with(client, &served.resource)
    }
}

fn to_value(object: &DynamicObject) -> CloudResult<Value> {
    serde_json::to_value(object)
        .map_err(|e| CloudError::new(ErrorClass::Other, format!("cannot encode an object: {e}")))
}

/// Outputs of a live object: identity, and a short status summary.
pub fn outputs(live: &Value, condition: Condition) -> Value {
    let status = &live["status"];
    let mut out = json!({
        "uid": live["metadata"]["uid"],
        "resource_version": live["metadata"]["resourceVersion"],
        "generation": live["metadata"]["generation"],
        "condition": condition.name(),
        "ready": condition.holds(live),
        "summary": condition.progress(live),
    });
    // An object the API server returned always has its kind; an unknown one gets no more outputs.
    match live["kind"].as_str().unwrap_or_default() {
        "DaemonSet" => {
            out["daemonset"] = json!({
                "desired": status["desiredNumberScheduled"].as_i64().unwrap_or(0),
                "ready": status["numberReady"].as_i64().unwrap_or(0),
                "updated": status["updatedNumberScheduled"].as_i64().unwrap_or(0),
                "available": status["numberAvailable"].as_i64().unwrap_or(0),
            })
        }
        "Deployment" => {
            out["deployment"] = json!({
                "available": conditions::is_deployment_available(live),
                "available_replicas": status["availableReplicas"].as_i64().unwrap_or(0),
            })
        }
        "CustomResourceDefinition" => {
            out["crd"] = json!({"established": conditions::is_crd_established(live)})
        }
        _ => {}
    }
    out
}

impl KubeAdapter {
    pub fn new(config: &GcpConfig) -> CloudResult<KubeAdapter> {
        Ok(KubeAdapter {
            clients: Clients::new(config)?,
            releases: release::Releases::new(config.endpoints.github.clone())
                .with_retry(crate::cloud::retry::RetryPolicy::for_poll(config.poll)),
        })
    }

    /// Builds (or refreshes) the client of the target's cluster, so that operations on that
    /// cluster can be polled (call it before polling an operation journaled by an earlier
    /// process). Returns the cluster endpoint.
    pub async fn connect(&self, target: &Target) -> CloudResult<String> {
        let cluster = target.spec["cluster"].as_str().ok_or_else(|| {
            CloudError::new(
                ErrorClass::Invalid,
                format!("bad Kubernetes spec of {}: no `cluster`", target.addr),
            )
        })?;
        let (endpoint, ca) = cluster_outputs(target, cluster)?;
        self.clients.client(&endpoint, Some(&ca)).await?;
        Ok(endpoint)
    }

    /// The client, the kind's place and the object's API for a target.
    async fn api_for(
        &self,
        target: &Target,
    ) -> CloudResult<(Desired, String, KubeApi<DynamicObject>)> {
        let desired = Desired::from_spec(&target.spec)?;
        let (endpoint, ca) = cluster_outputs(target, &desired.cluster)?;
        let client = self.clients.client(&endpoint, Some(&ca)).await?;
        let served = self
            .clients
            .resolve(&client, &endpoint, &desired.api_version, &desired.kind)
            .await?;
        let api = dynamic_api(client, &served, desired.namespace.as_deref());
        Ok((desired, endpoint, api))
    }

    fn is_flavor(&self, target: &Target) -> bool {
        ReleaseSpec::from_spec(&target.spec).is_none() && flavor::is_flavor(&target.spec["object"])
    }

    /// The flavor's and the ClusterQueues' APIs of a flavor's cluster.
    async fn flavor_apis(&self, target: &Target) -> CloudResult<(Desired, String, flavor::Apis)> {
        let (desired, endpoint, flavors) = self.api_for(target).await?;
        let (_, ca) = cluster_outputs(target, &desired.cluster)?;
        let client = self.clients.client(&endpoint, Some(&ca)).await?;
        let served = self
            .clients
            .resolve(&client, &endpoint, &desired.api_version, "ClusterQueue")
            .await?;
        let queues = dynamic_api(client, &served, None);
        let apis = flavor::Apis {
            flavors,
            queues,
            page_size: self.clients.page_size(),
        };
        Ok((desired, endpoint, apis))
    }

    /// A flavor move's first step ([`flavor`]): the queues hold, the flavor is deleted; waits
    /// until Kueue lets it go.
    async fn hold_flavor(&self, target: &Target) -> CloudResult<Started> {
        let (desired, endpoint, apis) = self.flavor_apis(target).await?;
        flavor::hold(&apis, &desired).await?;
        let wait = WaitFor {
            endpoint,
            api_version: desired.api_version,
            kind: desired.kind,
            namespace: None,
            name: desired.name,
            condition: Condition::Gone,
        };
        Ok(Started::Operation(OperationRef {
            api: Api::Kubernetes,
            name: wait.to_name(),
        }))
    }

    /// A flavor move's second step ([`flavor`]): the flavor anew, the queues back.
    async fn recreate_flavor(&self, target: &Target) -> CloudResult<Started> {
        let started = self.apply(target).await?;
        let (desired, _, apis) = self.flavor_apis(target).await?;
        flavor::restore(&apis, &desired).await?;
        Ok(started)
    }

    /// Server-side apply of the desired object.
    async fn apply(&self, target: &Target) -> CloudResult<Started> {
        if ReleaseSpec::from_spec(&target.spec).is_some() {
            return self.releases.apply(&self.clients, target).await;
        }
        let (desired, endpoint, api) = self.api_for(target).await?;
        let object = resolve_references(&desired.object, target)?;
        let params = PatchParams::apply(FIELD_MANAGER).force();
        api.patch(&desired.name, &params, &Patch::Apply(&object))
            .await
            .map_err(|e| classify(&e))?;
        if desired.condition == Condition::Exists {
            return Ok(Started::Done);
        }
        let wait = WaitFor {
            endpoint,
            api_version: desired.api_version,
            kind: desired.kind,
            namespace: desired.namespace,
            name: desired.name,
            condition: desired.condition,
        };
        Ok(Started::Operation(OperationRef {
            api: Api::Kubernetes,
            name: wait.to_name(),
        }))
    }
}

#[async_trait::async_trait]
impl crate::cloud::Provider for KubeAdapter {
    /// Server-side apply with force takes an existing object over: it is always adoptable.
    fn owned(&self, _target: &Target, _observed: &Observed) -> bool {
        true
    }

    async fn read(&self, target: &Target) -> CloudResult<Option<Observed>> {
        if ReleaseSpec::from_spec(&target.spec).is_some() {
            return self.releases.read(&self.clients, target).await;
        }
        let (desired, _, api) = match self.api_for(target).await {
            Ok(found) => found,
            // No CRD for the kind, so no object of it.
            Err(e) if client::is_unserved(&e) => return Ok(None),
            Err(e) => return Err(e),
        };
        let Some(live) = api.get_opt(&desired.name).await.map_err(|e| classify(&e))? else {
            return Ok(None);
        };
        let live = to_value(&live)?;
        let resolved = resolve_references(&desired.object, target)?;
        let mut projected = project::project(&resolved, &live);
        restore_references(&desired.object, &resolved, &mut projected);
        let spec = json!({
            "cluster": desired.cluster,
            "object": projected,
            "ready": target.spec.get("ready"),
        });
        // The projection has the desired object's shape, so it decodes as the kind's spec.
        let spec = kinds::to_spec(&kinds::from_spec::<ObjectSpec>("Kubernetes object", &spec)?);
        Ok(Some(Observed {
            spec,
            outputs: outputs(&live, desired.condition),
        }))
    }

    async fn create(&self, target: &Target) -> CloudResult<Started> {
        if self.is_flavor(target) {
            // A flavor found missing may be one a move left half done: finish it.
            return self.recreate_flavor(target).await;
        }
        self.apply(target).await
    }

    fn update_steps(&self, target: &Target, diffs: &[FieldDiff]) -> Vec<UpdateStep> {
        if diffs.is_empty() {
            return vec![];
        }
        if let Some(steps) = flavor::move_steps(&target.spec["object"], diffs) {
            return steps;
        }
        vec![UpdateStep {
            name: "apply".into(),
            fields: diffs.iter().map(|d| d.field.clone()).collect(),
            reaches: None,
        }]
    }

    async fn update(&self, target: &Target, step: &UpdateStep) -> CloudResult<Started> {
        match step.name.as_str() {
            "hold" => self.hold_flavor(target).await,
            "recreate" => self.recreate_flavor(target).await,
            _ => self.apply(target).await,
        }
    }

    async fn delete(&self, target: &Target) -> CloudResult<Started> {
        if ReleaseSpec::from_spec(&target.spec).is_some() {
            return self.releases.delete(&self.clients, target).await;
        }
        let (desired, _, api) = self.api_for(target).await?;
        let params = if WORKLOADS.contains(&desired.kind.as_str()) {
            DeleteParams::foreground()
        } else {
            DeleteParams::default()
        };
        api.delete(&desired.name, &params)
            .await
            .map_err(|e| classify(&e))?;
        Ok(Started::Done)
    }

    async fn poll(&self, operation: &OperationRef) -> CloudResult<OpStatus> {
        if release::is_release_wait(&operation.name) {
            return release::poll(&self.clients, &operation.name).await;
        }
        let wait = WaitFor::parse(&operation.name)?;
        let client = self.clients.client(&wait.endpoint, None).await?;
        let served = self
            .clients
            .resolve(&client, &wait.endpoint, &wait.api_version, &wait.kind)
            .await?;
        let api = dynamic_api(client, &served, wait.namespace.as_deref());
        let Some(live) = api.get_opt(&wait.name).await.map_err(|e| classify(&e))? else {
            if wait.condition == Condition::Gone {
                return Ok(OpStatus::Done);
            }
            return Ok(OpStatus::Failed(CloudError::new(
                ErrorClass::NotFound,
                format!(
                    "{} {} disappeared while waiting for it to be {}",
                    wait.kind,
                    wait.name,
                    wait.condition.name()
                ),
            )));
        };
        let live = to_value(&live)?;
        if wait.condition.holds(&live) {
            Ok(OpStatus::Done)
        } else if let Some(why) = wait.condition.failed(&live) {
            Ok(OpStatus::Failed(
                CloudError::new(
                    ErrorClass::Other,
                    format!("{} {}: {why}", wait.kind, wait.name),
                )
                .with_hint(format!(
                    "look at its pods (`kubectl describe {} {}{}`): a missing node pool or an untolerated taint leaves them Pending",
                    wait.kind.to_ascii_lowercase(),
                    wait.name,
                    // No `-n` for a cluster-scoped object.
            wait.namespace.as_deref().map(|n| format!(" -n {n}")).unwrap_or_default()
                )),
            ))
        } else {
            Ok(OpStatus::Running {
                progress: Some(format!(
                    "{} {}: waiting for {} ({})",
                    wait.kind,
                    wait.name,
                    wait.condition.name(),
                    wait.condition.progress(&live)
                )),
            })
        }
    }

    fn settle(&self, _target: &Target, observed: &Observed) -> Settle {
        if observed.outputs["ready"].as_bool().unwrap_or(false) {
            Settle::Ready
        } else {
            Settle::Pending {
                status: observed.outputs["summary"]
                    .as_str()
                    .unwrap_or("not ready")
                    .to_string(),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resource::Addr;

    #[test]
    fn manifests_parse_and_keys_are_stable() {
        let objects = parse_manifests(
            "---\n# comment only\n---\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: kueue-system\n---\n\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  namespace: kueue-system\ndata:\n  a: \"1\"\n",
        )
        .unwrap();
        assert_eq!(objects.len(), 2);
        assert_eq!(object_key(&objects[0]), "Namespace//kueue-system");
        assert_eq!(object_key(&objects[1]), "ConfigMap/kueue-system/c");
        assert_eq!(objects[1]["data"]["a"], "1");
        let err = parse_manifests("apiVersion: v1\nmetadata:\n  name: x\n").unwrap_err();
        assert_eq!(err.message, "a manifest object (//x) has no `kind`");
        let err = parse_manifests("apiVersion: v1\nkind: ConfigMap\nmetadata: {}\n").unwrap_err();
        assert_eq!(
            err.message,
            "a manifest object (ConfigMap//) has no `metadata.name`"
        );
    }

    #[test]
    fn specs_are_checked() {
        let spec = json!({"cluster": "c", "object": {"apiVersion": "apps/v1", "kind": "DaemonSet",
            "metadata": {"name": "d", "namespace": "kube-system"}}});
        let d = Desired::from_spec(&spec).unwrap();
        assert_eq!(d.condition, Condition::RolledOut);
        let mut s2 = spec.clone();
        s2["ready"] = json!("on_matching_nodes(2)");
        assert_eq!(
            Desired::from_spec(&s2).unwrap().condition,
            Condition::OnMatchingNodes(2)
        );
        assert!(Desired::from_spec(&json!({"cluster": "c", "object": {"kind": "X"}})).is_err());
    }

    #[test]
    fn a_cluster_without_endpoint_or_ca_is_an_error_with_a_hint() {
        let target = |outputs: Value| Target {
            addr: "k8s.namespace/-/x".parse().unwrap(),
            id: String::new(),
            spec: json!({}),
            outputs: Value::Null,
            context: [(Addr::new(Kind::Cluster, "main"), outputs)]
                .into_iter()
                .collect(),
            lifecycle: Default::default(),
        };
        let ok = target(json!({"endpoint": "10.0.0.2", "ca_certificate": "Q0E="}));
        assert_eq!(
            cluster_outputs(&ok, "main").unwrap(),
            ("10.0.0.2".to_string(), "Q0E=".to_string())
        );
        let no_ca = cluster_outputs(&target(json!({"endpoint": "10.0.0.2"})), "main").unwrap_err();
        assert!(
            no_ca
                .message
                .contains("CA certificate of cluster `main` is not recorded")
        );
        assert!(no_ca.hint.unwrap().contains("a3ctl plan"));
        let empty = json!({"endpoint": "10.0.0.2", "ca_certificate": ""});
        assert!(cluster_outputs(&target(empty), "main").is_err());
        let no_endpoint = cluster_outputs(&target(json!({"endpoint": ""})), "main").unwrap_err();
        assert!(
            no_endpoint
                .message
                .contains("endpoint of cluster `main` is not known")
        );
        assert!(no_endpoint.hint.is_some());
    }
}
