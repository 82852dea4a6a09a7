//! The resource types a cluster serves: the built-in kinds (a fixed table, plus the
//! `resource.k8s.io` versions of the cluster's minor and beta APIs, [`super::dra`]) and the kinds
//! of every established CustomResourceDefinition, with what discovery says about them (plural, singular,
//! kind, scope, short names, categories, verbs, `/status` subresource).

use super::KubeCluster;
use serde_json::Value;

/// One resource type at one served version.
#[derive(Debug, Clone, PartialEq)]
pub struct ResourceType {
    pub group: String,
    pub version: String,
    pub plural: String,
    pub singular: String,
    pub kind: String,
    pub namespaced: bool,
    pub short_names: Vec<String>,
    pub categories: Vec<String>,
    /// Served with a `/status` subresource (status is ignored on the main resource).
    pub status: bool,
    /// `metadata.generation` is maintained (bumped on spec changes).
    pub generation: bool,
    /// Defined by a CustomResourceDefinition.
    pub custom: bool,
    /// A CRD's `additionalPrinterColumns` for this version.
    pub printer_columns: Vec<Value>,
}

impl ResourceType {
    /// `apps/v1`, or `v1` for the core group.
    pub fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.clone()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }

    /// `deployments.apps`, or `pods` for the core group: how errors name the resource.
    pub fn qualified(&self) -> String {
        if self.group.is_empty() {
            self.plural.clone()
        } else {
            format!("{}.{}", self.plural, self.group)
        }
    }

    /// `Deployment.apps`, or `Pod`: how validation errors name the kind.
    pub fn qualified_kind(&self) -> String {
        if self.group.is_empty() {
            self.kind.clone()
        } else {
            format!("{}.{}", self.kind, self.group)
        }
    }

    /// The group its objects are stored under: its own, except `events.k8s.io` Events, which
    /// live with the core Events ([`super::eventsv1`]).
    pub fn store_group(&self) -> &str {
        if super::eventsv1::is_events(self) {
            ""
        } else {
            &self.group
        }
    }

    pub fn is(&self, group: &str, plural: &str) -> bool {
        self.group == group && self.plural == plural
    }
}

/// The verbs every served resource supports.
pub const VERBS: &[&str] = &[
    "create",
    "delete",
    "deletecollection",
    "get",
    "list",
    "patch",
    "update",
    "watch",
];

/// (group, version, plural, singular, kind, namespaced, short names, categories, status, generation)
type Builtin = (
    &'static str,
    &'static str,
    &'static str,
    &'static str,
    &'static str,
    bool,
    &'static [&'static str],
    &'static [&'static str],
    bool,
    bool,
);

const ALL: &[&str] = &["all"];
const NONE: &[&str] = &[];

const BUILTINS: &[Builtin] = &[
    (
        "",
        "v1",
        "configmaps",
        "configmap",
        "ConfigMap",
        true,
        &["cm"],
        NONE,
        false,
        false,
    ),
    (
        "",
        "v1",
        "endpoints",
        "endpoints",
        "Endpoints",
        true,
        &["ep"],
        NONE,
        false,
        false,
    ),
    (
        "",
        "v1",
        "events",
        "event",
        "Event",
        true,
        &["ev"],
        NONE,
        false,
        false,
    ),
    (
        "",
        "v1",
        "limitranges",
        "limitrange",
        "LimitRange",
        true,
        &["limits"],
        NONE,
        false,
        false,
    ),
    (
        "",
        "v1",
        "namespaces",
        "namespace",
        "Namespace",
        false,
        &["ns"],
        NONE,
        true,
        false,
    ),
    (
        "",
        "v1",
        "nodes",
        "node",
        "Node",
        false,
        &["no"],
        NONE,
        true,
        false,
    ),
    (
        "",
        "v1",
        "persistentvolumeclaims",
        "persistentvolumeclaim",
        "PersistentVolumeClaim",
        true,
        &["pvc"],
        NONE,
        true,
        false,
    ),
    (
        "",
        "v1",
        "persistentvolumes",
        "persistentvolume",
        "PersistentVolume",
        false,
        &["pv"],
        NONE,
        true,
        false,
    ),
    (
        "",
        "v1",
        "pods",
        "pod",
        "Pod",
        true,
        &["po"],
        ALL,
        true,
        true,
    ),
    (
        "",
        "v1",
        "resourcequotas",
        "resourcequota",
        "ResourceQuota",
        true,
        &["quota"],
        NONE,
        true,
        false,
    ),
    (
        "", "v1", "secrets", "secret", "Secret", true, NONE, NONE, false, false,
    ),
    (
        "",
        "v1",
        "serviceaccounts",
        "serviceaccount",
        "ServiceAccount",
        true,
        &["sa"],
        NONE,
        false,
        false,
    ),
    (
        "",
        "v1",
        "services",
        "service",
        "Service",
        true,
        &["svc"],
        ALL,
        true,
        false,
    ),
    (
        "admissionregistration.k8s.io",
        "v1",
        "mutatingwebhookconfigurations",
        "mutatingwebhookconfiguration",
        "MutatingWebhookConfiguration",
        false,
        NONE,
        &["api-extensions"],
        false,
        true,
    ),
    (
        "admissionregistration.k8s.io",
        "v1",
        "validatingwebhookconfigurations",
        "validatingwebhookconfiguration",
        "ValidatingWebhookConfiguration",
        false,
        NONE,
        &["api-extensions"],
        false,
        true,
    ),
    (
        "apiextensions.k8s.io",
        "v1",
        "customresourcedefinitions",
        "customresourcedefinition",
        "CustomResourceDefinition",
        false,
        &["crd", "crds"],
        &["api-extensions"],
        true,
        true,
    ),
    (
        "apiregistration.k8s.io",
        "v1",
        "apiservices",
        "apiservice",
        "APIService",
        false,
        NONE,
        &["api-extensions"],
        true,
        false,
    ),
    (
        "apps",
        "v1",
        "daemonsets",
        "daemonset",
        "DaemonSet",
        true,
        &["ds"],
        ALL,
        true,
        true,
    ),
    (
        "apps",
        "v1",
        "deployments",
        "deployment",
        "Deployment",
        true,
        &["deploy"],
        ALL,
        true,
        true,
    ),
    (
        "apps",
        "v1",
        "replicasets",
        "replicaset",
        "ReplicaSet",
        true,
        &["rs"],
        ALL,
        true,
        true,
    ),
    (
        "apps",
        "v1",
        "statefulsets",
        "statefulset",
        "StatefulSet",
        true,
        &["sts"],
        ALL,
        true,
        true,
    ),
    (
        "batch",
        "v1",
        "cronjobs",
        "cronjob",
        "CronJob",
        true,
        &["cj"],
        ALL,
        true,
        true,
    ),
    (
        "batch", "v1", "jobs", "job", "Job", true, NONE, ALL, true, true,
    ),
    (
        "coordination.k8s.io",
        "v1",
        "leases",
        "lease",
        "Lease",
        true,
        NONE,
        NONE,
        false,
        false,
    ),
    (
        "networking.k8s.io",
        "v1",
        "networkpolicies",
        "networkpolicy",
        "NetworkPolicy",
        true,
        &["netpol"],
        NONE,
        false,
        true,
    ),
    (
        "policy",
        "v1",
        "poddisruptionbudgets",
        "poddisruptionbudget",
        "PodDisruptionBudget",
        true,
        &["pdb"],
        NONE,
        true,
        true,
    ),
    (
        "rbac.authorization.k8s.io",
        "v1",
        "clusterrolebindings",
        "clusterrolebinding",
        "ClusterRoleBinding",
        false,
        NONE,
        NONE,
        false,
        false,
    ),
    (
        "rbac.authorization.k8s.io",
        "v1",
        "clusterroles",
        "clusterrole",
        "ClusterRole",
        false,
        NONE,
        NONE,
        false,
        false,
    ),
    (
        "rbac.authorization.k8s.io",
        "v1",
        "rolebindings",
        "rolebinding",
        "RoleBinding",
        true,
        NONE,
        NONE,
        false,
        false,
    ),
    (
        "rbac.authorization.k8s.io",
        "v1",
        "roles",
        "role",
        "Role",
        true,
        NONE,
        NONE,
        false,
        false,
    ),
    (
        "scheduling.k8s.io",
        "v1",
        "priorityclasses",
        "priorityclass",
        "PriorityClass",
        false,
        &["pc"],
        NONE,
        false,
        false,
    ),
    (
        "storage.k8s.io",
        "v1",
        "csidrivers",
        "csidriver",
        "CSIDriver",
        false,
        NONE,
        NONE,
        false,
        false,
    ),
    (
        "storage.k8s.io",
        "v1",
        "csinodes",
        "csinode",
        "CSINode",
        false,
        NONE,
        NONE,
        false,
        false,
    ),
    (
        "events.k8s.io",
        "v1",
        "events",
        "event",
        "Event",
        true,
        &["ev"],
        NONE,
        false,
        false,
    ),
    (
        "storage.k8s.io",
        "v1",
        "storageclasses",
        "storageclass",
        "StorageClass",
        false,
        &["sc"],
        NONE,
        false,
        false,
    ),
];

fn builtin(entry: &Builtin) -> ResourceType {
    let (group, version, plural, singular, kind, namespaced, short, categories, status, generation) =
        *entry;
    ResourceType {
        group: group.into(),
        version: version.into(),
        plural: plural.into(),
        singular: singular.into(),
        kind: kind.into(),
        namespaced,
        short_names: short.iter().map(|s| s.to_string()).collect(),
        categories: categories.iter().map(|s| s.to_string()).collect(),
        status,
        generation,
        custom: false,
        printer_columns: Vec::new(),
    }
}

/// Every built-in resource type.
pub fn builtins() -> Vec<ResourceType> {
    BUILTINS.iter().map(builtin).collect()
}

fn strings(value: &Value) -> Vec<String> {
    value
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default()
}

/// True once the CRD's `Established` condition is `True`.
pub fn crd_established(crd: &Value) -> bool {
    crd.pointer("/status/conditions")
        .and_then(Value::as_array)
        .is_some_and(|conds| {
            conds
                .iter()
                .any(|c| c["type"] == "Established" && c["status"] == "True")
        })
}

/// The resource types a CRD defines, one per served version.
pub fn from_crd(crd: &Value) -> Vec<ResourceType> {
    let spec = &crd["spec"];
    let names = &spec["names"];
    let group = spec["group"].as_str().unwrap_or_default();
    let plural = names["plural"].as_str().unwrap_or_default();
    let kind = names["kind"].as_str().unwrap_or_default();
    let singular = names["singular"]
        .as_str()
        .map(String::from)
        .unwrap_or_else(|| kind.to_lowercase());
    spec["versions"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|v| v["served"].as_bool().unwrap_or(true))
        .map(|v| ResourceType {
            group: group.into(),
            version: v["name"].as_str().unwrap_or_default().into(),
            plural: plural.into(),
            singular: singular.clone(),
            kind: kind.into(),
            namespaced: spec["scope"] != "Cluster",
            short_names: strings(&names["shortNames"]),
            categories: strings(&names["categories"]),
            status: v.pointer("/subresources/status").is_some(),
            generation: true,
            custom: true,
            printer_columns: v["additionalPrinterColumns"]
                .as_array()
                .cloned()
                .unwrap_or_default(),
        })
        .collect()
}

/// Every resource type the cluster serves right now: built-ins, the versions of
/// `resource.k8s.io` its Kubernetes minor and enabled beta APIs give it ([`super::dra`]), then
/// established CRDs.
pub fn all(cluster: &KubeCluster) -> Vec<ResourceType> {
    let mut out = builtins();
    out.extend(super::dra::served(&cluster.version, &cluster.beta_apis));
    for crd in cluster
        .store
        .list("apiextensions.k8s.io", "customresourcedefinitions", None)
    {
        if crd_established(crd) {
            out.extend(from_crd(crd));
        }
    }
    out
}

/// The resource type served at `group/version/plural`, if any.
pub fn resolve(
    cluster: &KubeCluster,
    group: &str,
    version: &str,
    plural: &str,
) -> Option<ResourceType> {
    if let Some(entry) = BUILTINS
        .iter()
        .find(|b| b.0 == group && b.1 == version && b.2 == plural)
    {
        return Some(builtin(entry));
    }
    all(cluster)
        .into_iter()
        .find(|r| r.group == group && r.version == version && r.plural == plural)
}

/// The resource type of `apiVersion`/`kind`, if served.
pub fn by_kind(cluster: &KubeCluster, api_version: &str, kind: &str) -> Option<ResourceType> {
    let (group, version) = split_api_version(api_version);
    all(cluster)
        .into_iter()
        .find(|r| r.group == group && r.version == version && r.kind == kind)
}

/// `apps/v1` → (`apps`, `v1`); `v1` → (``, `v1`).
pub fn split_api_version(api_version: &str) -> (&str, &str) {
    match api_version.split_once('/') {
        Some((g, v)) => (g, v),
        None => ("", api_version),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn crd_versions_become_resource_types() {
        let crd = json!({"spec": {"group": "kueue.x-k8s.io", "scope": "Cluster",
            "names": {"plural": "resourceflavors", "singular": "resourceflavor", "kind": "ResourceFlavor", "shortNames": ["rf"]},
            "versions": [{"name": "v1beta1", "served": true, "storage": true}]}});
        let types = from_crd(&crd);
        assert_eq!(types.len(), 1);
        assert_eq!(types[0].qualified(), "resourceflavors.kueue.x-k8s.io");
        assert!(!types[0].namespaced);
        assert_eq!(types[0].short_names, vec!["rf"]);
    }
}
