//! Admission: defaulting, the validation the simulator performs, and admission webhooks.
//!
//! Webhooks fail closed as in a real cluster: an object matching a webhook's rules whose
//! `clientConfig.service` has no ready endpoint is rejected (HTTP 500, `InternalError`) when the
//! webhook's `failurePolicy` is `Fail` (the default). Endpoints exist once an available Deployment
//! in the Service's namespace has pod labels the Service selects; they answer once that has been
//! available for the `kube.webhook.ready` delay (before that the call is "connection refused").
//! Mutating webhooks are called before validating ones, as the API server does. Once they answer,
//! the only mutation simulated is Kueue's ResourceFlavor defaulting (its finalizer, see
//! [`super::controllers::kueue`]); nothing else is really validated or mutated by webhooks.

use super::KubeCluster;
use super::resources::ResourceType;
use super::selectors::{label_selector_matches, map_selector_matches};
use super::status::Status;
use crate::clock::SimTime;
use serde_json::{Value, json};

/// The admission operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Operation {
    Create,
    Update,
    Delete,
}

impl Operation {
    fn as_str(self) -> &'static str {
        match self {
            Operation::Create => "CREATE",
            Operation::Update => "UPDATE",
            Operation::Delete => "DELETE",
        }
    }
}

fn set_default(object: &mut Value, pointer: &str, value: Value) {
    if object.pointer(pointer).is_some() {
        return;
    }
    let mut current = object;
    let parts: Vec<&str> = pointer.trim_start_matches('/').split('/').collect();
    for (i, part) in parts.iter().enumerate() {
        if !current.is_object() {
            return;
        }
        if i == parts.len() - 1 {
            current[*part] = value;
            return;
        }
        if current.get(*part).is_none() {
            current[*part] = json!({});
        }
        current = &mut current[*part];
    }
}

/// Applies the defaults the real API server fills in for the kinds the simulator models.
pub fn defaults(rt: &ResourceType, object: &mut Value, cluster_ip: impl FnOnce() -> String) {
    let name = object["metadata"]["name"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    if rt.group == super::dra::GROUP {
        super::dra::defaults(rt, object);
    }
    match (rt.group.as_str(), rt.plural.as_str()) {
        ("", "namespaces") => {
            object["metadata"]["labels"]["kubernetes.io/metadata.name"] = Value::String(name);
            set_default(object, "/spec/finalizers", json!(["kubernetes"]));
            set_default(object, "/status/phase", json!("Active"));
        }
        ("", "services") => {
            set_default(object, "/spec/type", json!("ClusterIP"));
            if object.pointer("/spec/clusterIP").is_none() {
                let ip = cluster_ip();
                object["spec"]["clusterIP"] = json!(ip);
                object["spec"]["clusterIPs"] = json!([ip]);
            }
            set_default(object, "/spec/sessionAffinity", json!("None"));
            set_default(object, "/spec/ipFamilies", json!(["IPv4"]));
            set_default(object, "/spec/ipFamilyPolicy", json!("SingleStack"));
            set_default(object, "/spec/internalTrafficPolicy", json!("Cluster"));
            if let Some(ports) = object
                .pointer_mut("/spec/ports")
                .and_then(Value::as_array_mut)
            {
                for port in ports {
                    set_default(port, "/protocol", json!("TCP"));
                    if port.get("targetPort").is_none() {
                        port["targetPort"] = port["port"].clone();
                    }
                }
            }
            set_default(object, "/status/loadBalancer", json!({}));
        }
        ("", "secrets") => {
            set_default(object, "/type", json!("Opaque"));
            if let Some(string_data) = object.as_object_mut().and_then(|m| m.remove("stringData")) {
                use base64::Engine as _;
                if let Some(map) = string_data.as_object() {
                    for (k, v) in map {
                        let encoded = base64::engine::general_purpose::STANDARD
                            .encode(v.as_str().unwrap_or_default());
                        object["data"][k] = json!(encoded);
                    }
                }
            }
        }
        ("", "persistentvolumes") => {
            set_default(
                object,
                "/spec/persistentVolumeReclaimPolicy",
                json!("Retain"),
            );
            set_default(object, "/spec/volumeMode", json!("Filesystem"));
            set_default(object, "/status/phase", json!("Available"));
        }
        ("", "persistentvolumeclaims") => {
            set_default(object, "/spec/volumeMode", json!("Filesystem"));
            set_default(object, "/status/phase", json!("Pending"));
        }
        ("apps", "deployments") => {
            set_default(object, "/spec/replicas", json!(1));
            set_default(object, "/spec/revisionHistoryLimit", json!(10));
            set_default(object, "/spec/progressDeadlineSeconds", json!(600));
            set_default(
                object,
                "/spec/strategy",
                json!({"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}}),
            );
        }
        ("apps", "daemonsets") => {
            set_default(object, "/spec/revisionHistoryLimit", json!(10));
            set_default(
                object,
                "/spec/updateStrategy",
                json!({"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 0, "maxUnavailable": 1}}),
            );
        }
        ("batch", "jobs") => {
            set_default(object, "/spec/parallelism", json!(1));
            set_default(object, "/spec/completions", json!(1));
            set_default(object, "/spec/backoffLimit", json!(6));
            set_default(object, "/spec/completionMode", json!("NonIndexed"));
            set_default(object, "/spec/suspend", json!(false));
        }
        ("scheduling.k8s.io", "priorityclasses") => {
            set_default(object, "/preemptionPolicy", json!("PreemptLowerPriority"));
        }
        ("storage.k8s.io", "storageclasses") => {
            set_default(object, "/reclaimPolicy", json!("Delete"));
            set_default(object, "/volumeBindingMode", json!("Immediate"));
        }
        ("admissionregistration.k8s.io", _) => {
            if let Some(hooks) = object["webhooks"].as_array_mut() {
                for hook in hooks {
                    set_default(hook, "/failurePolicy", json!("Fail"));
                    set_default(hook, "/matchPolicy", json!("Equivalent"));
                    set_default(hook, "/namespaceSelector", json!({}));
                    set_default(hook, "/objectSelector", json!({}));
                    set_default(hook, "/timeoutSeconds", json!(10));
                    if hook.pointer("/clientConfig/service").is_some() {
                        set_default(hook, "/clientConfig/service/port", json!(443));
                    }
                    if let Some(rules) = hook["rules"].as_array_mut() {
                        for rule in rules {
                            set_default(rule, "/scope", json!("*"));
                        }
                    }
                    if rt.plural == "mutatingwebhookconfigurations" {
                        set_default(hook, "/reinvocationPolicy", json!("Never"));
                    }
                }
            }
        }
        _ => {}
    }
}

/// What the API server does to a new Pod: its defaults (`pkg/apis/core/v1/defaults.go`), the
/// ServiceAccount admission plugin (the account must exist: `pods "P" is forbidden: error looking
/// up service account NS/SA: serviceaccount "SA" not found`, 403), DefaultTolerationSeconds (300 s
/// for `not-ready` and `unreachable`), and a fresh status (`Pending`, the QoS class). The projected
/// token volume the ServiceAccount plugin adds is not.
pub fn pod_create(cluster: &KubeCluster, namespace: &str, pod: &mut Value) -> Result<(), Status> {
    let name = pod["metadata"]["name"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let account = pod["spec"]["serviceAccountName"]
        .as_str()
        .or(pod["spec"]["serviceAccount"].as_str())
        .filter(|a| !a.is_empty())
        .unwrap_or("default")
        .to_string();
    if cluster
        .store
        .get("", "serviceaccounts", namespace, &account)
        .is_none()
    {
        return Err(Status {
            code: 403,
            reason: "Forbidden".into(),
            message: format!(
                "pods \"{name}\" is forbidden: error looking up service account \
                 {namespace}/{account}: serviceaccount \"{account}\" not found"
            ),
            details: Some(json!({"name": name, "kind": "pods"})),
        });
    }
    pod["spec"]["serviceAccountName"] = json!(account);
    pod["spec"]["serviceAccount"] = json!(account);
    for (pointer, value) in [
        ("/spec/restartPolicy", json!("Always")),
        ("/spec/dnsPolicy", json!("ClusterFirst")),
        ("/spec/schedulerName", json!("default-scheduler")),
        ("/spec/terminationGracePeriodSeconds", json!(30)),
        ("/spec/securityContext", json!({})),
        ("/spec/enableServiceLinks", json!(true)),
        ("/spec/priority", json!(0)),
        ("/spec/preemptionPolicy", json!("PreemptLowerPriority")),
    ] {
        set_default(pod, pointer, value);
    }
    let mut tolerations = pod["spec"]["tolerations"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    for key in [
        "node.kubernetes.io/not-ready",
        "node.kubernetes.io/unreachable",
    ] {
        let tolerated = tolerations.iter().any(|t| {
            (t["key"] == key || (t["key"].is_null() && t["operator"] == "Exists"))
                && (t["effect"].is_null() || t["effect"] == "NoExecute")
        });
        if !tolerated {
            tolerations.push(
                json!({"key": key, "operator": "Exists", "effect": "NoExecute",
                "tolerationSeconds": 300}),
            );
        }
    }
    pod["spec"]["tolerations"] = Value::Array(tolerations);
    for list in ["initContainers", "containers"] {
        if let Some(containers) = pod["spec"].get_mut(list).and_then(Value::as_array_mut) {
            for c in containers {
                let image = c["image"].as_str().unwrap_or_default();
                let last = image.rsplit('/').next().unwrap_or_default();
                let latest = !image.contains('@')
                    && last.split_once(':').is_none_or(|(_, tag)| tag == "latest");
                let policy = if latest { "Always" } else { "IfNotPresent" };
                set_default(c, "/imagePullPolicy", json!(policy));
                set_default(c, "/terminationMessagePath", json!("/dev/termination-log"));
                set_default(c, "/terminationMessagePolicy", json!("File"));
                set_default(c, "/resources", json!({}));
            }
        }
    }
    pod["status"] = json!({"phase": "Pending", "qosClass": qos_class(pod)});
    Ok(())
}

/// `BestEffort` without requests or limits, `Guaranteed` when every container limits CPU and
/// memory to what it requests, `Burstable` otherwise (`pkg/apis/core/helper/qos`).
fn qos_class(pod: &Value) -> &'static str {
    let containers: Vec<&Value> = ["initContainers", "containers"]
        .iter()
        .flat_map(|l| pod["spec"][*l].as_array().into_iter().flatten())
        .collect();
    let empty = |v: &Value| v.as_object().is_none_or(|m| m.is_empty());
    if containers
        .iter()
        .all(|c| empty(&c["resources"]["requests"]) && empty(&c["resources"]["limits"]))
    {
        return "BestEffort";
    }
    let guaranteed = containers.iter().all(|c| {
        let (requests, limits) = (&c["resources"]["requests"], &c["resources"]["limits"]);
        ["cpu", "memory"].iter().all(|r| {
            !limits[*r].is_null() && (requests[*r].is_null() || requests[*r] == limits[*r])
        })
    });
    if guaranteed {
        "Guaranteed"
    } else {
        "Burstable"
    }
}

const SUBDOMAIN_MESSAGE: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const LABEL_MESSAGE: &str = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";

fn is_label(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 63
        && s.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !s.starts_with('-')
        && !s.ends_with('-')
}

fn is_subdomain(s: &str) -> bool {
    s.len() <= 253 && s.split('.').all(is_label)
}

/// A 422 Invalid naming one field.
pub fn invalid(rt: &ResourceType, name: &str, field: &str, detail: &str, reason: &str) -> Status {
    Status {
        code: 422,
        reason: "Invalid".into(),
        message: format!(
            "{} \"{}\" is invalid: {}: {}",
            rt.qualified_kind(),
            name,
            field,
            detail
        ),
        details: Some(json!({
            "name": name,
            "group": rt.group,
            "kind": rt.kind,
            "causes": [{"reason": reason, "message": detail, "field": field}],
        })),
    }
}

/// The checks the simulator makes before storing an object.
pub fn validate(rt: &ResourceType, object: &Value) -> Result<(), Status> {
    let name = object["metadata"]["name"].as_str().unwrap_or_default();
    if name.is_empty() {
        return Err(invalid(
            rt,
            name,
            "metadata.name",
            "Required value: name or generateName is required",
            "FieldValueRequired",
        ));
    }
    let label_only = matches!(rt.plural.as_str(), "namespaces" | "services");
    let ok = if label_only {
        is_label(name)
    } else if rt.is("rbac.authorization.k8s.io", "clusterroles")
        || rt.is("rbac.authorization.k8s.io", "roles")
        || rt.is("rbac.authorization.k8s.io", "clusterrolebindings")
        || rt.is("rbac.authorization.k8s.io", "rolebindings")
        || rt.is("apiregistration.k8s.io", "apiservices")
    {
        !name.contains('/') && !name.contains('%') && name != "." && name != ".."
    } else {
        is_subdomain(name)
    };
    if !ok {
        let message = if label_only {
            LABEL_MESSAGE
        } else {
            SUBDOMAIN_MESSAGE
        };
        return Err(invalid(
            rt,
            name,
            "metadata.name",
            &format!("Invalid value: \"{name}\": {message}"),
            "FieldValueInvalid",
        ));
    }
    if rt.is("apiextensions.k8s.io", "customresourcedefinitions") {
        let expected = format!(
            "{}.{}",
            object
                .pointer("/spec/names/plural")
                .and_then(Value::as_str)
                .unwrap_or_default(),
            object
                .pointer("/spec/group")
                .and_then(Value::as_str)
                .unwrap_or_default()
        );
        if name != expected {
            return Err(invalid(
                rt,
                name,
                "metadata.name",
                &format!("Invalid value: \"{name}\": must be spec.names.plural+\".\"+spec.group"),
                "FieldValueInvalid",
            ));
        }
    }
    if (rt.is("apps", "deployments") || rt.is("apps", "daemonsets"))
        && object.pointer("/spec/selector").is_none()
    {
        return Err(invalid(
            rt,
            name,
            "spec.selector",
            "Required value",
            "FieldValueRequired",
        ));
    }
    if rt.group == super::dra::GROUP {
        super::dra::validate(rt, object)?;
    }
    Ok(())
}

fn rule_matches(rule: &Value, rt: &ResourceType, subresource: Option<&str>, op: Operation) -> bool {
    let has = |field: &str, wanted: &str| {
        rule[field]
            .as_array()
            .is_some_and(|a| a.iter().any(|v| v == "*" || v == wanted))
    };
    let resource = match subresource {
        Some(sub) => format!("{}/{sub}", rt.plural),
        None => rt.plural.clone(),
    };
    let resource_ok = rule["resources"].as_array().is_some_and(|a| {
        a.iter().filter_map(Value::as_str).any(|r| {
            r == resource
                || r == "*/*"
                || (r == "*" && subresource.is_none())
                || (subresource.is_some_and(|s| r == format!("*/{s}")))
                || (subresource.is_some() && r == format!("{}/*", rt.plural))
        })
    });
    let scope_ok = match rule["scope"].as_str().unwrap_or("*") {
        "Cluster" => !rt.namespaced,
        "Namespaced" => rt.namespaced,
        _ => true,
    };
    has("apiGroups", &rt.group)
        && has("apiVersions", &rt.version)
        && has("operations", op.as_str())
        && resource_ok
        && scope_ok
}

/// Why a webhook's service cannot be called right now, if it cannot.
pub fn service_failure(
    cluster: &KubeCluster,
    namespace: &str,
    name: &str,
    now: SimTime,
) -> Option<String> {
    let store = &cluster.store;
    let Some(service) = store.get("", "services", namespace, name) else {
        return Some(format!("service \"{name}\" not found"));
    };
    let selector = &service["spec"]["selector"];
    let mut best: Option<(SimTime, String)> = None;
    for deployment in store.list("apps", "deployments", Some(namespace)) {
        let labels = &deployment["spec"]["template"]["metadata"]["labels"];
        if !map_selector_matches(selector, labels) {
            continue;
        }
        let deployment_name = deployment["metadata"]["name"].as_str().unwrap_or_default();
        let key = super::store::object_key("apps", "deployments", namespace, deployment_name);
        if let Some(ready) = cluster.controllers.endpoint_ready_at(&key)
            && best.as_ref().is_none_or(|(t, _)| ready < *t)
        {
            best = Some((ready, cluster.controllers.pod_ip(&key)));
        }
    }
    match best {
        None => Some(format!("no endpoints available for service \"{name}\"")),
        Some((ready, _)) if ready <= now => None,
        Some((_, ip)) => {
            let target = service["spec"]["ports"][0]["targetPort"]
                .as_i64()
                .unwrap_or(443);
            Some(format!(
                "dial tcp {ip}:{target}: connect: connection refused"
            ))
        }
    }
}

/// A webhook that a request meets, with what its call needs.
#[derive(Debug, Clone, PartialEq)]
pub struct GuardingHook {
    /// The webhook's `name` (e.g. `mresourceflavor.kb.io`).
    pub name: String,
    pub service_namespace: String,
    pub service_name: String,
    pub port: i64,
    pub path: String,
    pub timeout: i64,
    /// `failurePolicy` is `Fail` (the default): a failed call rejects the request.
    pub fail: bool,
}

impl GuardingHook {
    /// kube-apiserver's rejection when calling this webhook failed with `cause`:
    /// `apierrors.NewInternalError(&ErrCallingWebhook{..., Reason: "failed to call webhook: " +
    /// <the client's error>})` (k8s.io/apiserver `admission/plugin/webhook/mutating/dispatcher.go`).
    pub fn call_error(&self, cause: &str) -> Status {
        let cause = format!(
            "failed calling webhook \"{}\": failed to call webhook: Post \"https://{}.{}.svc:{}{}?timeout={}s\": {cause}",
            self.name,
            self.service_name,
            self.service_namespace,
            self.port,
            self.path,
            self.timeout
        );
        Status {
            code: 500,
            reason: "InternalError".into(),
            message: format!("Internal error occurred: {cause}"),
            details: Some(json!({"causes": [{"message": cause}]})),
        }
    }
}

/// Both kinds of webhook configuration, mutating first (the order the API server calls them in).
const ALL_HOOKS: &[&str] = &[
    "mutatingwebhookconfigurations",
    "validatingwebhookconfigurations",
];

/// The service-backed webhooks of configurations of `kinds` that match a request, in `kinds`'
/// order. `object_labels: None` skips the object selectors (not known yet).
fn matching_hooks(
    cluster: &KubeCluster,
    kinds: &[&str],
    (rt, subresource, op): (&ResourceType, Option<&str>, Operation),
    namespace_labels: &Value,
    object_labels: Option<&Value>,
) -> Vec<GuardingHook> {
    let mut hooks = Vec::new();
    if rt.group == "admissionregistration.k8s.io" {
        return hooks;
    }
    for kind in kinds {
        for config in cluster
            .store
            .list("admissionregistration.k8s.io", kind, None)
        {
            for hook in config["webhooks"].as_array().into_iter().flatten() {
                let rules = hook["rules"].as_array().into_iter().flatten();
                if !rules
                    .into_iter()
                    .any(|r| rule_matches(r, rt, subresource, op))
                {
                    continue;
                }
                let namespace_ok = if rt.namespaced || rt.is("", "namespaces") {
                    label_selector_matches(&hook["namespaceSelector"], namespace_labels)
                } else {
                    true
                };
                let object_ok = object_labels
                    .is_none_or(|labels| label_selector_matches(&hook["objectSelector"], labels));
                if !namespace_ok || !object_ok {
                    continue;
                }
                let Some(service) = hook.pointer("/clientConfig/service") else {
                    continue;
                };
                hooks.push(GuardingHook {
                    name: hook["name"].as_str().unwrap_or_default().to_string(),
                    service_namespace: service["namespace"]
                        .as_str()
                        .unwrap_or_default()
                        .to_string(),
                    service_name: service["name"].as_str().unwrap_or_default().to_string(),
                    port: service["port"].as_i64().unwrap_or(443),
                    path: service["path"].as_str().unwrap_or_default().to_string(),
                    timeout: hook["timeoutSeconds"].as_i64().unwrap_or(10),
                    fail: hook["failurePolicy"] != "Ignore",
                });
            }
        }
    }
    hooks
}

/// The labels of `namespace` (of the object itself for a namespace).
fn namespace_labels(cluster: &KubeCluster, rt: &ResourceType, object: &Value) -> Value {
    if rt.is("", "namespaces") {
        return object["metadata"]["labels"].clone();
    }
    let namespace = object["metadata"]["namespace"].as_str().unwrap_or_default();
    cluster
        .store
        .get("", "namespaces", "", namespace)
        .map(|n| n["metadata"]["labels"].clone())
        .unwrap_or(Value::Null)
}

/// Calls (in the simulated sense) every webhook that matches the request; the first failing one
/// with `failurePolicy: Fail` rejects it.
pub fn webhooks(
    cluster: &KubeCluster,
    rt: &ResourceType,
    subresource: Option<&str>,
    op: Operation,
    object: &Value,
    now: SimTime,
) -> Result<(), Status> {
    let namespace_labels = namespace_labels(cluster, rt, object);
    let hooks = matching_hooks(
        cluster,
        ALL_HOOKS,
        (rt, subresource, op),
        &namespace_labels,
        Some(&object["metadata"]["labels"]),
    );
    for hook in hooks {
        let Some(failure) =
            service_failure(cluster, &hook.service_namespace, &hook.service_name, now)
        else {
            continue;
        };
        if hook.fail {
            return Err(hook.call_error(&failure));
        }
    }
    Ok(())
}

/// Whether a mutating webhook matches the request, so that what it does to the object is done
/// (call it after [`webhooks`] let the request through: every such webhook answered).
pub fn mutated(cluster: &KubeCluster, rt: &ResourceType, op: Operation, object: &Value) -> bool {
    let namespace_labels = namespace_labels(cluster, rt, object);
    !matching_hooks(
        cluster,
        &ALL_HOOKS[..1],
        (rt, None, op),
        &namespace_labels,
        Some(&object["metadata"]["labels"]),
    )
    .is_empty()
}

/// The first webhook with `failurePolicy: Fail` that a request on `namespace`/`name` would meet,
/// whether or not it can be called right now (object selectors are not looked at): the webhook a
/// transient webhook fault names.
pub fn guarding_hook(
    cluster: &KubeCluster,
    rt: &ResourceType,
    subresource: Option<&str>,
    op: Operation,
    namespace: &str,
    name: &str,
) -> Option<GuardingHook> {
    let object = json!({"metadata": {"namespace": namespace, "name": name}});
    let namespace_labels = if rt.is("", "namespaces") {
        cluster
            .store
            .get("", "namespaces", "", name)
            .map(|n| n["metadata"]["labels"].clone())
            .unwrap_or(Value::Null)
    } else {
        namespace_labels(cluster, rt, &object)
    };
    matching_hooks(
        cluster,
        ALL_HOOKS,
        (rt, subresource, op),
        &namespace_labels,
        None,
    )
    .into_iter()
    .find(|hook| hook.fail)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_validated() {
        let rt = super::super::resources::builtins()
            .into_iter()
            .find(|r| r.plural == "configmaps")
            .unwrap();
        let err = validate(&rt, &json!({"metadata": {"name": "Bad_Name"}})).unwrap_err();
        assert_eq!(err.code, 422);
        assert!(err.message.starts_with("ConfigMap \"Bad_Name\" is invalid: metadata.name: Invalid value: \"Bad_Name\": a lowercase RFC 1123 subdomain"));
        assert!(validate(&rt, &json!({"metadata": {"name": "ok.name-1"}})).is_ok());
    }
}
