//! GitHub release downloads, for the releases a3ctl installs from GitHub: Kueue's and JobSet's
//! `manifests.yaml` (`https://github.com/kubernetes-sigs/kueue/releases/download/<tag>/manifests.yaml`,
//! `https://github.com/kubernetes-sigs/jobset/releases/download/<tag>/manifests.yaml`).
//!
//! Served at `/github/<owner>/<repo>/releases/download/<tag>/<file>`, so a client pointed at
//! `<base>/github` instead of `https://github.com` downloads from the simulator. There is no
//! network here and the real release is not ours to copy, so the simulator *generates* a stand-in
//! release with the same structure as the upstream one
//! (https://github.com/kubernetes-sigs/kueue/releases): the `kueue-system` namespace, one
//! CustomResourceDefinition per Kueue kind (schemas reduced to "preserve unknown fields", the
//! served API versions of that release line), the
//! controller's ServiceAccount, webhook Service and `kueue-controller-manager` Deployment, and the
//! mutating and validating webhook configurations (`failurePolicy: Fail`) pointing at that
//! Service. Its bytes differ from upstream, so a `sha256` pinned for the real file does not match
//! it — as it should not. Kueue's carries, as upstream's does, the `kueue-manager-config`
//! ConfigMap whose `integrations.frameworks` lists `jobset.x-k8s.io/jobset`, and the `mjobset` /
//! `vjobset` webhooks for JobSets (kubernetes-sigs/kueue `config/components/manager/
//! controller_manager_config.yaml` and `config/components/webhook/manifests.yaml`).
//!
//! JobSet's stand-in (kubernetes-sigs/jobset releases from v0.2, `config/default`): the
//! `jobset-system` namespace, the `jobsets.jobset.x-k8s.io` CRD serving `v1alpha2` with a status
//! subresource, the controller's ServiceAccount, `jobset-webhook-service`, the
//! `jobset-controller-manager` Deployment, and the mutating and validating webhook configurations
//! for JobSets (`mjobset.kb.io`, `vjobset.kb.io`, `failurePolicy: Fail`; kubernetes-sigs/jobset
//! `api/jobset/v1alpha2/jobset_webhook.go`). Its pod webhooks (exclusive placement) are left out.
//!
//! Unknown repositories, files or tags answer 404 `Not Found`, as GitHub does. Documents are JSON
//! (a YAML 1.2 subset) separated by `---`.

use crate::shared::Shared;
use axum::Router;
use axum::extract::Path;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde_json::{Value, json};
use std::sync::Arc;

pub fn router() -> Router<Arc<Shared>> {
    Router::new().route(
        "/github/{owner}/{repo}/releases/download/{tag}/{file}",
        get(download),
    )
}

async fn download(
    Path((owner, repo, tag, file)): Path<(String, String, String, String)>,
) -> Response {
    match (owner.as_str(), repo.as_str(), file.as_str()) {
        ("kubernetes-sigs", "kueue", "manifests.yaml") => release(kueue_manifests(&tag)),
        ("kubernetes-sigs", "jobset", "manifests.yaml") => release(jobset_manifests(&tag)),
        _ => not_found(),
    }
}

fn release(body: Option<String>) -> Response {
    match body {
        Some(body) => (
            StatusCode::OK,
            [(header::CONTENT_TYPE, "application/octet-stream")],
            body,
        )
            .into_response(),
        None => not_found(),
    }
}

fn not_found() -> Response {
    (
        StatusCode::NOT_FOUND,
        [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
        "Not Found",
    )
        .into_response()
}

/// `(major, minor, patch)` of a `vX.Y.Z` tag.
fn parse_tag(tag: &str) -> Option<(u32, u32, u32)> {
    let mut parts = tag.strip_prefix('v')?.split('.');
    let version = (
        parts.next()?.parse().ok()?,
        parts.next()?.parse().ok()?,
        parts.next()?.parse().ok()?,
    );
    parts.next().is_none().then_some(version)
}

/// The Kueue kinds: (plural, kind, namespaced, alpha until the v1beta2 line).
const KINDS: &[(&str, &str, bool, bool)] = &[
    ("admissionchecks", "AdmissionCheck", false, false),
    ("clusterqueues", "ClusterQueue", false, false),
    ("cohorts", "Cohort", false, true),
    ("localqueues", "LocalQueue", true, false),
    ("multikueueclusters", "MultiKueueCluster", false, false),
    ("multikueueconfigs", "MultiKueueConfig", false, false),
    (
        "provisioningrequestconfigs",
        "ProvisioningRequestConfig",
        false,
        false,
    ),
    ("resourceflavors", "ResourceFlavor", false, false),
    ("topologies", "Topology", false, true),
    (
        "workloadpriorityclasses",
        "WorkloadPriorityClass",
        false,
        false,
    ),
    ("workloads", "Workload", true, false),
];

const GROUP: &str = "kueue.x-k8s.io";
const NAMESPACE: &str = "kueue-system";
const SERVICE: &str = "kueue-webhook-service";

/// The served versions of a kind in a release line, storage version last. Releases before
/// v0.15 serve `v1beta1` (`v1alpha1` for Cohort and Topology); from v0.15 every kind is stored
/// as `v1beta2`, with the previous version still served.
fn versions(minor: u32, alpha: bool) -> Vec<&'static str> {
    let old = if alpha { "v1alpha1" } else { "v1beta1" };
    if minor >= 15 {
        vec![old, "v1beta2"]
    } else {
        vec![old]
    }
}

/// The validation rules of the ResourceFlavor spec in a release line, as its CRD carries them
/// (kubernetes-sigs/kueue `apis/kueue/v1beta1/resourceflavor_types.go`; from v0.17,
/// `apis/kueue/v1beta2/resourceflavor_types.go`, the same for both served versions): a flavor
/// with a topology needs a node label, and keeps its spec (before v0.17) or its node labels,
/// tolerations and topology (from v0.17). The simulator evaluates them ([`crate::kube::cel`]).
fn flavor_rules(minor: u32) -> Value {
    let rule = |rule: &str, message: &str| json!({"rule": rule, "message": message});
    let mut rules = vec![rule(
        "!has(self.topologyName) || self.nodeLabels.size() >= 1",
        "at least one nodeLabel is required when topology is set",
    )];
    if minor >= 17 {
        for field in ["nodeLabels", "tolerations"] {
            rules.push(rule(
                &format!(
                    "!has(oldSelf.topologyName) || (has(self.{field}) == has(oldSelf.{field}) && (!has(self.{field}) || self.{field} == oldSelf.{field}))"
                ),
                &format!("{field} are immutable when topologyName is set"),
            ));
        }
        rules.push(rule(
            "!has(oldSelf.topologyName) || (has(self.topologyName) && self.topologyName == oldSelf.topologyName)",
            "topologyName is immutable when topologyName is set",
        ));
    } else {
        rules.push(rule(
            "!has(oldSelf.topologyName) || self == oldSelf",
            "resourceFlavorSpec are immutable when topologyName is set",
        ));
    }
    Value::Array(rules)
}

/// A generated stand-in for Kueue's `manifests.yaml` of `tag`, or `None` for tags that are not
/// Kueue releases (before v0.9, or not `vX.Y.Z`).
pub fn kueue_manifests(tag: &str) -> Option<String> {
    let (major, minor, _) = parse_tag(tag)?;
    if major != 0 || minor < 9 {
        return None;
    }
    let labels = json!({"control-plane": "controller-manager", "app.kubernetes.io/name": "kueue"});
    let mut documents = vec![json!({
        "apiVersion": "v1", "kind": "Namespace",
        "metadata": {"name": NAMESPACE, "labels": labels},
    })];
    for (plural, kind, namespaced, alpha) in KINDS {
        let served = versions(minor, *alpha);
        let storage = served.len() - 1;
        let mut schema = json!({"type": "object", "x-kubernetes-preserve-unknown-fields": true});
        if *kind == "ResourceFlavor" {
            schema["properties"]["spec"] = json!({
                "type": "object", "x-kubernetes-preserve-unknown-fields": true,
                "x-kubernetes-validations": flavor_rules(minor),
            });
        }
        let versions: Vec<Value> = served
            .iter()
            .enumerate()
            .map(|(i, v)| {
                json!({
                    "name": v, "served": true, "storage": i == storage,
                    "schema": {"openAPIV3Schema": schema},
                    "subresources": {"status": {}},
                })
            })
            .collect();
        let singular = kind.to_ascii_lowercase();
        documents.push(json!({
            "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": format!("{plural}.{GROUP}"), "labels": {"app.kubernetes.io/name": "kueue"}},
            "spec": {
                "group": GROUP,
                "names": {"plural": plural, "singular": singular, "kind": kind, "listKind": format!("{kind}List")},
                "scope": if *namespaced { "Namespaced" } else { "Cluster" },
                "versions": versions,
            },
        }));
    }
    documents.extend(controller_manager(
        "kueue", NAMESPACE, SERVICE, tag, &labels,
    ));
    let storage = if minor >= 15 { "v1beta2" } else { "v1beta1" };
    let webhook = |kind: &str, plural: &str, verb: &str| {
        json!({
            "name": format!("{verb}-{}.{GROUP}", kind.to_ascii_lowercase()),
            "admissionReviewVersions": ["v1"],
            "sideEffects": "None",
            "failurePolicy": "Fail",
            "clientConfig": {"service": {"name": SERVICE, "namespace": NAMESPACE,
                "path": format!("/{verb}-{}-{storage}-{}", GROUP.replace('.', "-"), kind.to_ascii_lowercase())}},
            "rules": [{"apiGroups": [GROUP], "apiVersions": [storage],
                       "operations": ["CREATE", "UPDATE"], "resources": [plural]}],
        })
    };
    let checked = [
        ("ClusterQueue", "clusterqueues"),
        ("ResourceFlavor", "resourceflavors"),
        ("Workload", "workloads"),
    ];
    // Kueue's webhooks for JobSets, served by Kueue's own service (upstream's `mjobset.kb.io` and
    // `vjobset.kb.io`).
    let jobset_hook = |verb: &str| {
        json!({
            "name": format!("{}jobset.kb.io", &verb[..1]),
            "admissionReviewVersions": ["v1"],
            "sideEffects": "None",
            "failurePolicy": "Fail",
            "clientConfig": {"service": {"name": SERVICE, "namespace": NAMESPACE,
                "path": format!("/{verb}-jobset-x-k8s-io-v1alpha2-jobset")}},
            "rules": [{"apiGroups": [JOBSET_GROUP], "apiVersions": ["v1alpha2"],
                       "operations": ["CREATE", "UPDATE"], "resources": ["jobsets"]}],
        })
    };
    for (kind, verb) in [
        ("MutatingWebhookConfiguration", "mutate"),
        ("ValidatingWebhookConfiguration", "validate"),
    ] {
        let mut webhooks: Vec<Value> = checked.iter().map(|(k, p)| webhook(k, p, verb)).collect();
        webhooks.push(jobset_hook(verb));
        let name = format!(
            "kueue-{}-webhook-configuration",
            &kind[..kind.len() - "WebhookConfiguration".len()].to_ascii_lowercase()
        );
        documents.push(json!({
            "apiVersion": "admissionregistration.k8s.io/v1", "kind": kind,
            "metadata": {"name": name, "labels": {"app.kubernetes.io/name": "kueue"}},
            "webhooks": webhooks,
        }));
    }
    documents.push(json!({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "kueue-manager-config", "namespace": NAMESPACE, "labels": labels},
        "data": {"controller_manager_config.yaml": KUEUE_MANAGER_CONFIG},
    }));
    Some(render(&format!("Kueue {tag}"), documents))
}

/// The manager configuration of Kueue's release (the part a client can see of it): the
/// integrations it sets up, as upstream's default configuration lists them.
const KUEUE_MANAGER_CONFIG: &str = "apiVersion: config.kueue.x-k8s.io/v1beta1
kind: Configuration
webhook:
  port: 9443
integrations:
  frameworks:
  - \"batch/job\"
  - \"kubeflow.org/mpijob\"
  - \"ray.io/rayjob\"
  - \"ray.io/raycluster\"
  - \"jobset.x-k8s.io/jobset\"
  - \"kubeflow.org/paddlejob\"
  - \"kubeflow.org/pytorchjob\"
  - \"kubeflow.org/tfjob\"
  - \"kubeflow.org/xgboostjob\"
  - \"kubeflow.org/jaxjob\"
";

const JOBSET_GROUP: &str = "jobset.x-k8s.io";
const JOBSET_NAMESPACE: &str = "jobset-system";
const JOBSET_SERVICE: &str = "jobset-webhook-service";

/// A generated stand-in for JobSet's `manifests.yaml` of `tag` (see the module doc), or `None`
/// for tags that are not JobSet releases with the `v1alpha2` API (before v0.2, or not `vX.Y.Z`).
pub fn jobset_manifests(tag: &str) -> Option<String> {
    let (major, minor, _) = parse_tag(tag)?;
    if major == 0 && minor < 2 {
        return None;
    }
    let labels = json!({"control-plane": "controller-manager", "app.kubernetes.io/name": "jobset"});
    let mut documents = vec![json!({
        "apiVersion": "v1", "kind": "Namespace",
        "metadata": {"name": JOBSET_NAMESPACE, "labels": labels},
    })];
    documents.push(json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": format!("jobsets.{JOBSET_GROUP}"), "labels": {"app.kubernetes.io/name": "jobset"}},
        "spec": {
            "group": JOBSET_GROUP,
            "names": {"plural": "jobsets", "singular": "jobset", "kind": "JobSet", "listKind": "JobSetList"},
            "scope": "Namespaced",
            "versions": [{
                "name": "v1alpha2", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}},
                "subresources": {"status": {}},
                "additionalPrinterColumns": [
                    {"name": "TerminalState", "type": "string", "jsonPath": ".status.terminalState"},
                    {"name": "Restarts", "type": "string", "jsonPath": ".status.restarts"},
                    {"name": "Completed", "type": "string", "jsonPath": ".status.conditions[?(@.type==\"Completed\")].status"},
                    {"name": "Suspended", "type": "string", "jsonPath": ".spec.suspend"},
                    {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"},
                ],
            }],
        },
    }));
    documents.extend(controller_manager(
        "jobset",
        JOBSET_NAMESPACE,
        JOBSET_SERVICE,
        tag,
        &labels,
    ));
    let hook = |verb: &str| {
        json!({
            "name": format!("{}jobset.kb.io", &verb[..1]),
            "admissionReviewVersions": ["v1"],
            "sideEffects": "None",
            "failurePolicy": "Fail",
            "clientConfig": {"service": {"name": JOBSET_SERVICE, "namespace": JOBSET_NAMESPACE,
                "path": format!("/{verb}-jobset-x-k8s-io-v1alpha2-jobset")}},
            "rules": [{"apiGroups": [JOBSET_GROUP], "apiVersions": ["v1alpha2"],
                       "operations": ["CREATE", "UPDATE"], "resources": ["jobsets"]}],
        })
    };
    documents.push(json!({
        "apiVersion": "admissionregistration.k8s.io/v1", "kind": "MutatingWebhookConfiguration",
        "metadata": {"name": "jobset-mutating-webhook-configuration", "labels": {"app.kubernetes.io/name": "jobset"}},
        "webhooks": [hook("mutate")],
    }));
    documents.push(json!({
        "apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingWebhookConfiguration",
        "metadata": {"name": "jobset-validating-webhook-configuration", "labels": {"app.kubernetes.io/name": "jobset"}},
        "webhooks": [hook("validate")],
    }));
    Some(render(&format!("JobSet {tag}"), documents))
}

/// Documents as one file: a comment line, then each document after `---`.
/// The controller of a kubebuilder project's release (`kueue`, `jobset`): its ServiceAccount,
/// its webhook Service `service` and its Deployment `<project>-controller-manager` in `namespace`,
/// running `registry.k8s.io/<project>/<project>:<tag>`, as both projects' `manifests.yaml` lay
/// them out.
fn controller_manager(
    project: &str,
    namespace: &str,
    service: &str,
    tag: &str,
    labels: &Value,
) -> [Value; 3] {
    let manager = format!("{project}-controller-manager");
    [
        json!({
            "apiVersion": "v1", "kind": "ServiceAccount",
            "metadata": {"name": manager, "namespace": namespace, "labels": labels},
        }),
        json!({
            "apiVersion": "v1", "kind": "Service",
            "metadata": {"name": service, "namespace": namespace, "labels": labels},
            "spec": {"ports": [{"port": 443, "protocol": "TCP", "targetPort": 9443}],
                     "selector": {"control-plane": "controller-manager"}},
        }),
        json!({
            "apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": manager, "namespace": namespace, "labels": labels},
            "spec": {
                "replicas": 1,
                "selector": {"matchLabels": {"control-plane": "controller-manager"}},
                "template": {
                    "metadata": {"labels": labels},
                    "spec": {
                        "serviceAccountName": manager,
                        "containers": [{
                            "name": "manager",
                            "image": format!("registry.k8s.io/{project}/{project}:{tag}"),
                            "args": ["--config=/controller_manager_config.yaml", "--zap-log-level=2"],
                            "ports": [{"containerPort": 9443, "name": "webhook-server", "protocol": "TCP"}],
                        }],
                    },
                },
            },
        }),
    ]
}

fn render(what: &str, documents: Vec<Value>) -> String {
    let mut out = format!(
        "# {what} release manifests, generated by a3ctl-sim as a stand-in for the upstream file.\n"
    );
    for document in documents {
        out.push_str("---\n");
        out.push_str(&serde_json::to_string_pretty(&document).unwrap_or_default());
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn release_lines_serve_their_api_versions() {
        let old = kueue_manifests("v0.12.2").unwrap();
        assert!(old.contains("\"v1alpha1\"") && !old.contains("v1beta2"));
        let new = kueue_manifests("v0.17.1").unwrap();
        assert!(new.contains("\"v1beta2\"") && new.contains("registry.k8s.io/kueue/kueue:v0.17.1"));
        assert_eq!(new.matches("\"CustomResourceDefinition\"").count(), 11);
        assert!(kueue_manifests("v0.8.0").is_none());
        assert!(kueue_manifests("0.17.1").is_none());
        assert!(kueue_manifests("v0.17").is_none());
        assert!(new.contains("jobset.x-k8s.io/jobset") && new.contains("mjobset.kb.io"));
    }

    #[test]
    fn jobset_releases_serve_v1alpha2_jobsets_and_guard_them_with_webhooks() {
        let text = jobset_manifests("v0.12.0").unwrap();
        assert_eq!(text.matches("\"CustomResourceDefinition\"").count(), 1);
        for needle in [
            "\"jobsets.jobset.x-k8s.io\"",
            "\"v1alpha2\"",
            "registry.k8s.io/jobset/jobset:v0.12.0",
            "\"jobset-controller-manager\"",
            "\"mjobset.kb.io\"",
            "\"vjobset.kb.io\"",
        ] {
            assert!(text.contains(needle), "{needle}");
        }
        assert!(jobset_manifests("v0.1.3").is_none());
        assert!(jobset_manifests("0.12.0").is_none());
    }
}
