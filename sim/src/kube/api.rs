//! The Kubernetes API proper: routes every request path (`/api`, `/apis/...`, `/openapi/v3/...`,
//! `/version`) to discovery ([`super::discovery`]), the verbs ([`super::verbs`]), a watch
//! ([`super::watch`]) or a pod's log ([`super::logs`]), inside the world lock, and renders
//! results and errors.
//!
//! Scripted faults apply to mutations: kind `kube.<Kind>` (e.g. `kube.ResourceFlavor`), verb
//! `create` (POST), `update` (PUT), `patch` (any PATCH, server-side apply included even when it
//! creates the object: the verb kube-apiserver's request info and audit log give it) or `delete`.

use super::admission;
use super::controllers::Clock;
use super::discovery;
use super::logs;
use super::resources::{self, ResourceType};
use super::server::KubeCtx;
use super::status::Status;
use super::table;
use super::verbs::{self, Call};
use super::watch;
use crate::faults::{FaultAction, NamedFault};
use crate::http::Query;
use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde_json::{Value, json};

pub fn router() -> Router<KubeCtx> {
    Router::new()
        // The official Python client asks for `/version/`; kube-apiserver serves both
        // (kubernetes-client/python `VersionApi.get_code`).
        .route("/version", get(version))
        .route("/version/", get(version))
        .route("/healthz", get(|| async { "ok" }))
        .route("/livez", get(|| async { "ok" }))
        .route("/readyz", get(|| async { "ok" }))
        .fallback(dispatch)
}

async fn version(State(cx): State<KubeCtx>) -> Response {
    let version = cx
        .shared
        .read_world(|w, _| w.kube.cluster(&cx.key).map(|c| c.version.clone()))
        .unwrap_or_default();
    let minor = version.split('.').nth(1).unwrap_or_default().to_string();
    axum::Json(json!({
        "major": "1",
        "minor": minor,
        "gitVersion": format!("v{version}"),
        "gitCommit": "0000000000000000000000000000000000000000",
        "gitTreeState": "clean",
        "buildDate": "2026-01-01T00:00:00Z",
        "goVersion": "go1.23.8 X:boringcrypto",
        "compiler": "gc",
        "platform": "linux/amd64",
    }))
    .into_response()
}

/// What a request path names.
#[derive(Debug, Clone, PartialEq)]
enum Target {
    Api,
    Apis,
    Group(String),
    Resources(String, String),
    Object {
        group: String,
        version: String,
        namespace: String,
        plural: String,
        name: Option<String>,
        subresource: Option<String>,
    },
    OpenApiRoot,
    OpenApiDocument(String, String),
}

fn object_target(group: &str, version: &str, rest: &[&str]) -> Option<Target> {
    let make =
        |namespace: &str, plural: &str, name: Option<&&str>, sub: Option<&&str>| Target::Object {
            group: group.into(),
            version: version.into(),
            namespace: namespace.into(),
            plural: plural.into(),
            name: name.map(|s| s.to_string()),
            subresource: sub.map(|s| s.to_string()),
        };
    match rest {
        [] => Some(Target::Resources(group.into(), version.into())),
        ["namespaces", ns, plural, tail @ ..] if *plural != "status" && *plural != "finalize" => {
            (tail.len() <= 2).then(|| make(ns, plural, tail.first(), tail.get(1)))
        }
        [plural] => Some(make("", plural, None, None)),
        [plural, name] => Some(make("", plural, Some(name), None)),
        [plural, name, sub] => Some(make("", plural, Some(name), Some(sub))),
        _ => None,
    }
}

fn parse_target(path: &str) -> Option<Target> {
    let segments: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    match segments.as_slice() {
        ["api"] => Some(Target::Api),
        ["api", "v1", rest @ ..] => object_target("", "v1", rest),
        ["apis"] => Some(Target::Apis),
        ["apis", group] => Some(Target::Group(group.to_string())),
        ["apis", group, version, rest @ ..] => object_target(group, version, rest),
        ["openapi", "v3"] => Some(Target::OpenApiRoot),
        ["openapi", "v3", "api", "v1"] => Some(Target::OpenApiDocument(String::new(), "v1".into())),
        ["openapi", "v3", "apis", group, version] => Some(Target::OpenApiDocument(
            group.to_string(),
            version.to_string(),
        )),
        _ => None,
    }
}

fn json_response(code: StatusCode, body: &Value) -> Response {
    let mut response = (code, body.to_string()).into_response();
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

fn header_str(headers: &HeaderMap, name: header::HeaderName) -> &str {
    headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
}

fn discovery_response(cx: &KubeCtx, target: &Target, accept: &str) -> Response {
    let aggregated = discovery::aggregated_version(accept);
    let result = cx.shared.read_world(|world, _| {
        let Some(cluster) = world.kube.clusters.get(&*cx.key) else {
            return Err(Status::no_route());
        };
        match (target, aggregated) {
            (Target::Api, Some(v)) => Ok((discovery::aggregated(cluster, true, v), Some(v))),
            (Target::Apis, Some(v)) => Ok((discovery::aggregated(cluster, false, v), Some(v))),
            (Target::Api, None) => Ok((discovery::api_versions(cluster), None)),
            (Target::Apis, None) => Ok((discovery::group_list(cluster), None)),
            (Target::Group(g), _) => discovery::group(cluster, g)
                .map(|v| (v, None))
                .ok_or_else(Status::no_route),
            (Target::Resources(g, v), _) => {
                discovery::resource_list(cluster, g, v).map(|v| (v, None))
            }
            (Target::OpenApiRoot, _) => Ok((discovery::openapi_root(cluster), None)),
            (Target::OpenApiDocument(g, v), _) => {
                Ok((discovery::openapi_document(cluster, g, v), None))
            }
            _ => Err(Status::no_route()),
        }
    });
    match result {
        Err(status) => status.into_response(),
        Ok((body, aggregated)) => {
            let mut response = json_response(StatusCode::OK, &body);
            if let Some(v) = aggregated {
                let content_type = format!(
                    "application/json;g=apidiscovery.k8s.io;v={v};as=APIGroupDiscoveryList"
                );
                if let Ok(value) = HeaderValue::from_str(&content_type) {
                    response.headers_mut().insert(header::CONTENT_TYPE, value);
                }
            }
            response
        }
    }
}

/// A scripted fault's answer: the configured Status, or ResourceQuota's refusal for
/// `quota_exceeded` (`<resource> "<name>" is forbidden: exceeded quota: ...`, the admission plugin's
/// `admission.NewForbidden(a, fmt.Errorf("exceeded quota: %s, requested: %s, used: %s, limited:
/// %s", ...))`, with GKE's per-namespace quota object `gke-resource-quotas`).
fn fault_status(action: FaultAction, rt: &ResourceType, name: &str, used: usize) -> Status {
    match action {
        FaultAction::Http {
            status,
            reason,
            message,
        } => Status::failure(status, &reason, message),
        FaultAction::Named(NamedFault::QuotaExceeded) => {
            let counted = format!("count/{}", rt.qualified());
            let mut details = json!({"name": name, "kind": rt.plural});
            if !rt.group.is_empty() {
                details["group"] = json!(rt.group);
            }
            Status {
                code: 403,
                reason: "Forbidden".into(),
                message: format!(
                    "{} \"{name}\" is forbidden: exceeded quota: gke-resource-quotas, requested: {counted}=1, used: {counted}={used}, limited: {counted}={used}",
                    rt.qualified()
                ),
                details: Some(details),
            }
        }
        FaultAction::Named(named) => Status::failure(
            500,
            "InternalError",
            format!("Internal error occurred: injected fault {named:?}"),
        ),
    }
}

/// The webhook that guards a create/update/patch request on `path` (see
/// [`admission::guarding_hook`]): what a transient webhook fault names. A PATCH of a missing
/// object is a create (server-side apply).
pub fn webhook_guard(cx: &KubeCtx, method: &Method, path: &str) -> Option<admission::GuardingHook> {
    let Some(Target::Object {
        group,
        version,
        namespace,
        plural,
        name,
        subresource,
    }) = parse_target(path)
    else {
        return None;
    };
    cx.shared.read_world(|world, _| {
        let cluster = world.kube.clusters.get(&*cx.key)?;
        let rt = resources::resolve(cluster, &group, &version, &plural)?;
        let name = name.unwrap_or_default();
        let exists = || {
            cluster
                .store
                .get(&rt.group, &rt.plural, &namespace, &name)
                .is_some()
        };
        let op = match *method {
            Method::POST => admission::Operation::Create,
            Method::PUT => admission::Operation::Update,
            Method::PATCH if exists() => admission::Operation::Update,
            Method::PATCH => admission::Operation::Create,
            _ => return None,
        };
        admission::guarding_hook(cluster, &rt, subresource.as_deref(), op, &namespace, &name)
    })
}

async fn dispatch(
    State(cx): State<KubeCtx>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let Some(target) = parse_target(uri.path()) else {
        return Status::no_route().into_response();
    };
    let accept = header_str(&headers, header::ACCEPT).to_string();
    let Target::Object {
        group,
        version,
        namespace,
        plural,
        name,
        subresource,
    } = target.clone()
    else {
        if method != Method::GET {
            return Status::method_not_allowed().into_response();
        }
        return discovery_response(&cx, &target, &accept);
    };
    let query = Query::parse(uri.query());
    let resolved = cx.shared.read_world(|world, _| {
        let cluster = world.kube.clusters.get(&*cx.key)?;
        match resources::resolve(cluster, &group, &version, &plural) {
            Some(rt) => Some(Ok(rt)),
            None => {
                let down = super::controllers::housekeeping::api_service_available(
                    cluster, &group, &version,
                ) == Some(false);
                Some(Err(if down {
                    Status::failure(
                        503,
                        "ServiceUnavailable",
                        "the server is currently unable to handle the request",
                    )
                } else {
                    Status::no_route()
                }))
            }
        }
    });
    let rt: ResourceType = match resolved {
        Some(Ok(rt)) => rt,
        Some(Err(status)) => return status.into_response(),
        None => return Status::no_route().into_response(),
    };
    let wrong_scope = (!rt.namespaced && !namespace.is_empty())
        || (rt.namespaced && namespace.is_empty() && name.is_some());
    let is_log = subresource.as_deref() == Some("log") && rt.is("", "pods");
    let bad_subresource = subresource
        .as_deref()
        .is_some_and(|s| s != "status" && !(s == "finalize" && rt.is("", "namespaces")) && !is_log);
    if wrong_scope || bad_subresource {
        return Status::no_route().into_response();
    }
    if is_log {
        if method != Method::GET {
            return Status::method_not_allowed().into_response();
        }
        let query = Query::parse(uri.query());
        let pod = name.clone().unwrap_or_default();
        let result = cx.shared.read_world(|world, _| {
            let cluster = world
                .kube
                .clusters
                .get(&*cx.key)
                .ok_or_else(Status::no_route)?;
            logs::read(cluster, &namespace, &pod, &query)
        });
        return match result {
            Ok(text) => {
                let mut response = (StatusCode::OK, text).into_response();
                response
                    .headers_mut()
                    .insert(header::CONTENT_TYPE, HeaderValue::from_static("text/plain"));
                response
            }
            Err(status) => status.into_response(),
        };
    }
    if method == Method::GET && name.is_none() && query.flag("watch") {
        return watch::watch(cx.shared.clone(), cx.key.clone(), rt, namespace, &query);
    }
    let user_agent = header_str(&headers, header::USER_AGENT).to_string();
    let content_type = header_str(&headers, header::CONTENT_TYPE).to_string();
    let verb = match (&method, name.is_some()) {
        (&Method::GET, _) => "get",
        (&Method::POST, false) => "create",
        (&Method::PUT, true) => "update",
        (&Method::PATCH, true) => "patch",
        (&Method::DELETE, _) => "delete",
        _ => return Status::method_not_allowed().into_response(),
    };
    if verb == "create" && rt.namespaced && namespace.is_empty() {
        return Status::method_not_allowed().into_response();
    }
    let fault_kind = format!("kube.{}", rt.kind);
    let result = cx.shared.with_world(|world, sim| {
        let clock = Clock {
            epoch: world.epoch,
            now: sim.now,
        };
        let Some(cluster) = world.kube.clusters.get_mut(&*cx.key) else {
            return Err(Status::no_route());
        };
        if verb != "get"
            && let Some(action) = sim.scripted_fault(&fault_kind, verb)
        {
            let object_name = name.clone().unwrap_or_else(|| {
                verbs::parse_body(&body)
                    .ok()
                    .and_then(|o| o["metadata"]["name"].as_str().map(String::from))
                    .unwrap_or_default()
            });
            let scope = (!namespace.is_empty()).then_some(namespace.as_str());
            let used = cluster.store.list(&rt.group, &rt.plural, scope).len();
            return Err(fault_status(action, &rt, &object_name, used));
        }
        let call = Call {
            rt: rt.clone(),
            namespace: namespace.clone(),
            name: name.clone(),
            subresource: subresource.clone(),
            query: &query,
            user_agent,
            clock,
        };
        let parse = |body: &[u8]| -> Result<Value, Status> {
            if body.iter().all(u8::is_ascii_whitespace) {
                return Ok(Value::Null);
            }
            verbs::parse_body(body)
        };
        let out = match verb {
            "get" if name.is_some() => verbs::get(cluster, &call).map(|v| (StatusCode::OK, v)),
            "get" => verbs::list(cluster, &call).map(|v| (StatusCode::OK, v)),
            "create" => {
                let object = parse(&body)?;
                verbs::create(cluster, &call, object, false).map(|v| (StatusCode::CREATED, v))
            }
            "update" => {
                let object = parse(&body)?;
                verbs::replace(cluster, &call, object).map(|v| (StatusCode::OK, v))
            }
            "patch" => verbs::patch(cluster, &call, &content_type, &body).map(|(v, created)| {
                let code = if created {
                    StatusCode::CREATED
                } else {
                    StatusCode::OK
                };
                (code, v)
            }),
            _ if name.is_some() => {
                let options = parse(&body)?;
                verbs::delete(cluster, &call, &options).map(|v| (StatusCode::OK, v))
            }
            _ => verbs::delete_collection(cluster, &call).map(|v| (StatusCode::OK, v)),
        };
        out.map(|(code, value)| {
            let value = if verb == "get" && table::wants_table(&accept) {
                table::to_table(
                    &rt,
                    &value,
                    &clock,
                    query.get("includeObject").unwrap_or_default(),
                )
            } else {
                value
            };
            (code, value)
        })
    });
    match result {
        Ok((code, value)) => {
            let mut response = json_response(code, &value);
            if value["kind"] == "Table" {
                response.headers_mut().insert(
                    header::CONTENT_TYPE,
                    HeaderValue::from_static("application/json;as=Table;v=v1;g=meta.k8s.io"),
                );
            }
            response
        }
        Err(status) => status.into_response(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_parse() {
        assert_eq!(
            parse_target("/apis/apps/v1/namespaces/ns/deployments/d/status"),
            Some(Target::Object {
                group: "apps".into(),
                version: "v1".into(),
                namespace: "ns".into(),
                plural: "deployments".into(),
                name: Some("d".into()),
                subresource: Some("status".into()),
            })
        );
        assert!(matches!(
            parse_target("/api/v1/namespaces/ns/status"),
            Some(Target::Object { ref plural, ref subresource, .. }) if plural == "namespaces" && subresource.as_deref() == Some("status")
        ));
        assert_eq!(
            parse_target("/apis/kueue.x-k8s.io/v1beta1"),
            Some(Target::Resources("kueue.x-k8s.io".into(), "v1beta1".into()))
        );
    }
}
