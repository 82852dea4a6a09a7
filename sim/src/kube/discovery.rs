//! Discovery and OpenAPI: legacy discovery (`/api`, `/apis`, `/apis/{group}`, `/api/v1`,
//! `/apis/{group}/{version}`), aggregated discovery (`APIGroupDiscoveryList` v2 and v2beta1, chosen
//! from the `Accept` header as the API server does), and an OpenAPI v3 index with one document per
//! group-version whose PATCH operations declare `fieldValidation` (what kubectl checks before it
//! lets the server validate fields).
//!
//! Groups served by an aggregated APIService (Kueue's `visibility.kueue.x-k8s.io`) are listed;
//! while the APIService is unavailable their group-version answers 503 and aggregated discovery
//! marks it `Stale`, as a real cluster does while the backing Deployment is down.

use super::KubeCluster;
use super::controllers::housekeeping::api_service_available;
use super::resources::{ResourceType, VERBS, all};
use super::status::Status;
use serde_json::{Value, json};

/// Kubernetes version priority: GA > beta > alpha, higher numbers first.
fn version_rank(v: &str) -> (u8, u32, u32) {
    let Some(rest) = v.strip_prefix('v') else {
        return (0, 0, 0);
    };
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    let major = digits.parse().unwrap_or(0);
    let tail = &rest[digits.len()..];
    if tail.is_empty() {
        (3, major, 0)
    } else if let Some(n) = tail.strip_prefix("beta") {
        (2, major, n.parse().unwrap_or(0))
    } else if let Some(n) = tail.strip_prefix("alpha") {
        (1, major, n.parse().unwrap_or(0))
    } else {
        (0, major, 0)
    }
}

/// Groups in the order the API server lists them, each with its versions (preferred first).
pub fn groups(cluster: &KubeCluster) -> Vec<(String, Vec<String>)> {
    const ORDER: &[&str] = &[
        "apiregistration.k8s.io",
        "apps",
        "events.k8s.io",
        "batch",
        "networking.k8s.io",
        "policy",
        "rbac.authorization.k8s.io",
        "storage.k8s.io",
        "admissionregistration.k8s.io",
        "apiextensions.k8s.io",
        "scheduling.k8s.io",
        "coordination.k8s.io",
        "resource.k8s.io",
    ];
    let mut out: Vec<(String, Vec<String>)> = Vec::new();
    let mut add = |group: &str, version: &str| {
        if group.is_empty() {
            return;
        }
        match out.iter_mut().find(|(g, _)| g == group) {
            Some((_, versions)) => {
                if !versions.iter().any(|v| v == version) {
                    versions.push(version.to_string());
                }
            }
            None => out.push((group.to_string(), vec![version.to_string()])),
        }
    };
    let served = all(cluster);
    // Built-in groups in the API server's order, each with the versions served now (a group
    // with none, such as `resource.k8s.io` before 1.34 without beta APIs, is not listed).
    for group in ORDER {
        for r in served.iter().filter(|r| !r.custom && r.group == *group) {
            add(group, &r.version);
        }
    }
    let mut custom: Vec<(String, String)> = served
        .into_iter()
        .filter(|r| r.custom)
        .map(|r| (r.group, r.version))
        .collect();
    for api in cluster
        .store
        .list("apiregistration.k8s.io", "apiservices", None)
    {
        if !api["spec"]["service"].is_null() {
            custom.push((
                api["spec"]["group"].as_str().unwrap_or_default().into(),
                api["spec"]["version"].as_str().unwrap_or_default().into(),
            ));
        }
    }
    custom.sort();
    for (group, version) in custom {
        add(&group, &version);
    }
    for (_, versions) in out.iter_mut() {
        versions.sort_by_key(|v| std::cmp::Reverse(version_rank(v)));
    }
    out
}

fn group_versions(group: &str, versions: &[String]) -> Value {
    let list: Vec<Value> = versions
        .iter()
        .map(|v| json!({"groupVersion": format!("{group}/{v}"), "version": v}))
        .collect();
    json!({"name": group, "versions": list, "preferredVersion": list.first().cloned().unwrap_or(Value::Null)})
}

pub fn api_versions(cluster: &KubeCluster) -> Value {
    json!({"kind": "APIVersions", "versions": ["v1"],
        "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": cluster.endpoint}]})
}

pub fn group_list(cluster: &KubeCluster) -> Value {
    let groups: Vec<Value> = groups(cluster)
        .iter()
        .map(|(g, vs)| group_versions(g, vs))
        .collect();
    json!({"kind": "APIGroupList", "apiVersion": "v1", "groups": groups})
}

pub fn group(cluster: &KubeCluster, name: &str) -> Option<Value> {
    groups(cluster)
        .iter()
        .find(|(g, _)| g == name)
        .map(|(g, vs)| {
            let mut out = group_versions(g, vs);
            out["kind"] = json!("APIGroup");
            out["apiVersion"] = json!("v1");
            out
        })
}

/// The resource types of one group-version.
fn types_of(cluster: &KubeCluster, group: &str, version: &str) -> Vec<ResourceType> {
    all(cluster)
        .into_iter()
        .filter(|r| r.group == group && r.version == version)
        .collect()
}

/// Whether an aggregated (APIService) group-version is down: `Some(false)` when it is.
fn aggregated_state(cluster: &KubeCluster, group: &str, version: &str) -> Option<bool> {
    if !types_of(cluster, group, version).is_empty() {
        return None;
    }
    api_service_available(cluster, group, version)
}

fn unavailable() -> Status {
    Status::failure(
        503,
        "ServiceUnavailable",
        "the server is currently unable to handle the request",
    )
}

pub fn resource_list(cluster: &KubeCluster, group: &str, version: &str) -> Result<Value, Status> {
    let group_version = if group.is_empty() {
        version.to_string()
    } else {
        format!("{group}/{version}")
    };
    match aggregated_state(cluster, group, version) {
        Some(false) => return Err(unavailable()),
        Some(true) => {
            return Ok(
                json!({"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": group_version, "resources": []}),
            );
        }
        None => {}
    }
    let types = types_of(cluster, group, version);
    if types.is_empty() {
        return Err(Status::no_route());
    }
    let mut resources = Vec::new();
    for rt in types {
        let mut entry = json!({
            "name": rt.plural,
            "singularName": rt.singular,
            "namespaced": rt.namespaced,
            "kind": rt.kind,
            "verbs": VERBS,
            "storageVersionHash": storage_hash(&rt),
        });
        if !rt.short_names.is_empty() {
            entry["shortNames"] = json!(rt.short_names);
        }
        if !rt.categories.is_empty() {
            entry["categories"] = json!(rt.categories);
        }
        resources.push(entry);
        if rt.status {
            resources.push(
                json!({"name": format!("{}/status", rt.plural), "singularName": "",
                "namespaced": rt.namespaced, "kind": rt.kind, "verbs": ["get", "patch", "update"]}),
            );
        }
    }
    Ok(
        json!({"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": group_version, "resources": resources}),
    )
}

fn storage_hash(rt: &ResourceType) -> String {
    use base64::Engine as _;
    let h = super::controllers::hash(&format!("{}/{}/{}", rt.group, rt.version, rt.kind));
    base64::engine::general_purpose::STANDARD.encode(&h.to_be_bytes()[..8])[..11].to_string()
}

/// The aggregated discovery version the client accepts first, if any (`v2` or `v2beta1`).
pub fn aggregated_version(accept: &str) -> Option<&'static str> {
    for media in accept.split(',') {
        let params: Vec<&str> = media.split(';').map(str::trim).collect();
        if params
            .first()
            .is_some_and(|t| *t == "application/json" || *t == "*/*")
            && !params.contains(&"as=APIGroupDiscoveryList")
        {
            return None;
        }
        if params.contains(&"as=APIGroupDiscoveryList") && params.contains(&"g=apidiscovery.k8s.io")
        {
            if params.contains(&"v=v2") {
                return Some("v2");
            }
            if params.contains(&"v=v2beta1") {
                return Some("v2beta1");
            }
        }
    }
    None
}

fn aggregated_resource(rt: &ResourceType) -> Value {
    let kind = json!({"group": rt.group, "version": rt.version, "kind": rt.kind});
    let mut entry = json!({
        "resource": rt.plural,
        "responseKind": kind,
        "scope": if rt.namespaced { "Namespaced" } else { "Cluster" },
        "singularResource": rt.singular,
        "verbs": VERBS,
    });
    if !rt.short_names.is_empty() {
        entry["shortNames"] = json!(rt.short_names);
    }
    if !rt.categories.is_empty() {
        entry["categories"] = json!(rt.categories);
    }
    if rt.status {
        entry["subresources"] = json!([{"subresource": "status", "responseKind": kind, "verbs": ["get", "patch", "update"]}]);
    }
    entry
}

/// `APIGroupDiscoveryList` for `/api` (core) or `/apis` (everything else).
pub fn aggregated(cluster: &KubeCluster, core: bool, version: &str) -> Value {
    let items: Vec<Value> = if core {
        let resources: Vec<Value> = types_of(cluster, "", "v1")
            .iter()
            .map(aggregated_resource)
            .collect();
        vec![json!({"metadata": {"creationTimestamp": null},
            "versions": [{"version": "v1", "resources": resources, "freshness": "Current"}]})]
    } else {
        groups(cluster)
            .iter()
            .map(|(g, versions)| {
                let versions: Vec<Value> = versions
                    .iter()
                    .map(|v| match aggregated_state(cluster, g, v) {
                        Some(false) => json!({"version": v, "freshness": "Stale"}),
                        Some(true) => {
                            json!({"version": v, "resources": [], "freshness": "Current"})
                        }
                        None => {
                            let resources: Vec<Value> = types_of(cluster, g, v)
                                .iter()
                                .map(aggregated_resource)
                                .collect();
                            json!({"version": v, "resources": resources, "freshness": "Current"})
                        }
                    })
                    .collect();
                json!({"metadata": {"name": g, "creationTimestamp": null}, "versions": versions})
            })
            .collect()
    };
    json!({"kind": "APIGroupDiscoveryList", "apiVersion": format!("apidiscovery.k8s.io/{version}"),
        "metadata": {}, "items": items})
}

/// `/openapi/v3`: one entry per served group-version.
pub fn openapi_root(cluster: &KubeCluster) -> Value {
    let mut paths = serde_json::Map::new();
    let mut gvs = vec![("api/v1".to_string(), "".to_string(), "v1".to_string())];
    for (g, versions) in groups(cluster) {
        for v in versions {
            if !types_of(cluster, &g, &v).is_empty() {
                gvs.push((format!("apis/{g}/{v}"), g.clone(), v));
            }
        }
    }
    for (path, g, v) in gvs {
        let hash = super::controllers::hash(&openapi_document(cluster, &g, &v).to_string());
        paths.insert(
            path.clone(),
            json!({"serverRelativeURL": format!("/openapi/v3/{path}?hash={hash:016X}")}),
        );
    }
    json!({"paths": paths})
}

/// The OpenAPI v3 document of one group-version: its operations, with the query parameters the
/// API server accepts (schemas are open objects).
pub fn openapi_document(cluster: &KubeCluster, group: &str, version: &str) -> Value {
    let prefix = if group.is_empty() {
        "/api/v1".to_string()
    } else {
        format!("/apis/{group}/{version}")
    };
    let parameter = |name: &str, kind: &str| json!({"name": name, "in": "query", "schema": {"type": kind, "uniqueItems": true}});
    let mut paths = serde_json::Map::new();
    let mut schemas = serde_json::Map::new();
    for rt in types_of(cluster, group, version) {
        let gvk = json!({"group": rt.group, "version": rt.version, "kind": rt.kind});
        let schema_name = format!(
            "{}.{}.{}",
            if rt.group.is_empty() {
                "core"
            } else {
                &rt.group
            },
            rt.version,
            rt.kind
        );
        schemas.insert(
            schema_name.clone(),
            json!({"type": "object", "x-kubernetes-preserve-unknown-fields": true,
            "x-kubernetes-group-version-kind": [gvk]}),
        );
        let reference = json!({"$ref": format!("#/components/schemas/{schema_name}")});
        let ok = json!({"200": {"description": "OK", "content": {"application/json": {"schema": reference}}}});
        let item = if rt.namespaced {
            format!("{prefix}/namespaces/{{namespace}}/{}/{{name}}", rt.plural)
        } else {
            format!("{prefix}/{}/{{name}}", rt.plural)
        };
        let op = |action: &str, params: Vec<Value>| {
            json!({"x-kubernetes-action": action, "x-kubernetes-group-version-kind": gvk,
                "operationId": format!("{action}{}", rt.kind), "parameters": params, "responses": ok})
        };
        let write_params = || {
            vec![
                parameter("dryRun", "string"),
                parameter("fieldManager", "string"),
                parameter("fieldValidation", "string"),
            ]
        };
        let mut patch_params = write_params();
        patch_params.push(parameter("force", "boolean"));
        paths.insert(
            item,
            json!({
                "get": op("get", vec![]),
                "put": op("put", write_params()),
                "patch": op("patch", patch_params),
                "delete": op("delete", vec![parameter("dryRun", "string")]),
            }),
        );
    }
    json!({"openapi": "3.0.0", "info": {"title": "Kubernetes", "version": format!("v{}", cluster.version)},
        "paths": paths, "components": {"schemas": schemas}})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accept_negotiation_and_version_order() {
        let kubectl = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json";
        assert_eq!(aggregated_version(kubectl), Some("v2"));
        assert_eq!(aggregated_version("application/json, */*"), None);
        let mut versions = vec!["v1alpha1", "v1beta1", "v1", "v1beta2"];
        versions.sort_by_key(|v| std::cmp::Reverse(version_rank(v)));
        assert_eq!(versions, vec!["v1", "v1beta2", "v1beta1", "v1alpha1"]);
    }
}
