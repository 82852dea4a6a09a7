//! The verbs on objects: get, list, create, update (PUT), patch (server-side apply, merge,
//! strategic merge, JSON patch), delete, deletecollection — with the API server's metadata
//! handling (uid, resourceVersion, generation, creationTimestamp, managedFields), status
//! subresource semantics, dry runs, finalizers and admission.

use super::KubeCluster;
use super::admission::{self, Operation};
use super::controllers::Clock;
use super::fields::{self, Scope, Writer};
use super::patches;
use super::resources::{ResourceType, split_api_version};
use super::selectors::{FieldSelector, LabelSelector};
use super::status::Status;
use super::store::object_key;
use crate::http::Query;
use base64::Engine as _;
use serde_json::{Value, json};

/// One request against one resource type.
pub struct Call<'a> {
    pub rt: ResourceType,
    /// Empty for cluster-scoped objects and all-namespace lists.
    pub namespace: String,
    pub name: Option<String>,
    pub subresource: Option<String>,
    pub query: &'a Query,
    pub user_agent: String,
    pub clock: Clock,
}

impl Call<'_> {
    fn name(&self) -> &str {
        self.name.as_deref().unwrap_or_default()
    }

    fn dry_run(&self) -> bool {
        self.query.get("dryRun").is_some_and(|v| v == "All")
    }

    fn not_found(&self) -> Status {
        Status::not_found(&self.rt.group, &self.rt.plural, self.name())
    }

    /// `fieldManager`, or the User-Agent up to its first `/` as the API server defaults it.
    fn manager(&self) -> String {
        match self.query.get("fieldManager").filter(|m| !m.is_empty()) {
            Some(m) => m.to_string(),
            None => self
                .user_agent
                .split('/')
                .next()
                .filter(|s| !s.is_empty())
                .unwrap_or("unknown")
                .to_string(),
        }
    }

    fn scope(&self) -> Scope {
        if self.subresource.as_deref() == Some("status") {
            Scope::Status
        } else if self.rt.status {
            Scope::MainWithoutStatus
        } else {
            Scope::Main
        }
    }
}

/// The object as served at the request's version.
pub fn present(rt: &ResourceType, object: &Value) -> Value {
    let mut out = if rt.group == super::dra::GROUP {
        super::dra::convert(&rt.kind, object, &rt.version)
    } else if super::eventsv1::is_events(rt) {
        super::eventsv1::to_events(object)
    } else {
        object.clone()
    };
    out["apiVersion"] = json!(rt.api_version());
    out["kind"] = json!(rt.kind);
    if let Some(map) = out.as_object_mut() {
        // apiVersion and kind first, as the API server prints them.
        let mut ordered = serde_json::Map::new();
        for k in ["apiVersion", "kind"] {
            if let Some(v) = map.remove(k) {
                ordered.insert(k.into(), v);
            }
        }
        ordered.append(map);
        return Value::Object(ordered);
    }
    out
}

pub fn get(cluster: &KubeCluster, call: &Call) -> Result<Value, Status> {
    cluster
        .store
        .get(
            call.rt.store_group(),
            &call.rt.plural,
            &call.namespace,
            call.name(),
        )
        .map(|o| present(&call.rt, o))
        .ok_or_else(|| call.not_found())
}

/// The matching objects of a list (or watch) request.
pub fn selected<'a>(cluster: &'a KubeCluster, call: &Call) -> Result<Vec<&'a Value>, Status> {
    let labels = LabelSelector::parse(call.query.get("labelSelector").unwrap_or_default())?;
    let fields = FieldSelector::parse(call.query.get("fieldSelector").unwrap_or_default())?;
    let namespace = (!call.namespace.is_empty()).then_some(call.namespace.as_str());
    Ok(cluster
        .store
        .list(call.rt.store_group(), &call.rt.plural, namespace)
        .into_iter()
        .filter(|o| labels.matches(&o["metadata"]["labels"]) && fields.matches(o))
        .collect())
}

pub fn list(cluster: &KubeCluster, call: &Call) -> Result<Value, Status> {
    let mut items: Vec<&Value> = selected(cluster, call)?;
    let mut metadata = json!({"resourceVersion": cluster.store.resource_version.to_string()});
    if let Some(token) = call.query.get("continue").filter(|t| !t.is_empty()) {
        let after = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(token)
            .ok()
            .and_then(|b| String::from_utf8(b).ok())
            .ok_or_else(|| Status::bad_request("continue key is not valid: illegal base64 data"))?;
        items.retain(|o| object_sort_key(o) > after);
    }
    if let Some(limit) = call
        .query
        .get("limit")
        .and_then(|l| l.parse::<usize>().ok())
        .filter(|l| *l > 0)
        && items.len() > limit
    {
        let remaining = items.len() - limit;
        items.truncate(limit);
        if let Some(last) = items.last() {
            let token =
                base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(object_sort_key(last));
            metadata["continue"] = json!(token);
            metadata["remainingItemCount"] = json!(remaining);
        }
    }
    let items: Vec<Value> = items.into_iter().map(|o| present(&call.rt, o)).collect();
    Ok(json!({
        "kind": format!("{}List", call.rt.kind),
        "apiVersion": call.rt.api_version(),
        "metadata": metadata,
        "items": items,
    }))
}

fn object_sort_key(object: &Value) -> String {
    format!(
        "{}/{}",
        object["metadata"]["namespace"].as_str().unwrap_or_default(),
        object["metadata"]["name"].as_str().unwrap_or_default()
    )
}

/// The body's apiVersion and kind must be the resource's (when given).
fn check_type(rt: &ResourceType, object: &Value, required: bool) -> Result<(), Status> {
    if !object.is_object() {
        return Err(Status::bad_request(
            "the body of the request was in an unknown format - accepted media types include: application/json, application/yaml",
        ));
    }
    let kind = object["kind"].as_str().unwrap_or_default();
    let api_version = object["apiVersion"].as_str().unwrap_or_default();
    if required && (kind.is_empty() || api_version.is_empty()) {
        return Err(Status::bad_request("invalid object type: /, Kind="));
    }
    if !kind.is_empty() && kind != rt.kind {
        return Err(Status::bad_request(format!(
            "the kind of the object ({kind}) does not match the kind of the resource ({})",
            rt.kind
        )));
    }
    if !api_version.is_empty() {
        let (group, _) = split_api_version(api_version);
        if group != rt.group {
            return Err(Status::bad_request(format!(
                "the API version in the data ({api_version}) does not match the expected API version ({})",
                rt.api_version()
            )));
        }
    }
    Ok(())
}

/// The namespace must exist and not be terminating before something is created in it.
fn check_namespace(cluster: &KubeCluster, call: &Call, name: &str) -> Result<(), Status> {
    if !call.rt.namespaced {
        return Ok(());
    }
    let Some(ns) = cluster.store.get("", "namespaces", "", &call.namespace) else {
        return Err(Status::not_found("", "namespaces", &call.namespace));
    };
    if ns["metadata"].get("deletionTimestamp").is_some() {
        let mut details = json!({"name": name, "kind": call.rt.plural,
            "causes": [{"reason": "NamespaceTerminating", "message": format!("namespace {} is being terminated", call.namespace), "field": "metadata.namespace"}]});
        if !call.rt.group.is_empty() {
            details["group"] = json!(call.rt.group);
        }
        return Err(Status {
            code: 403,
            reason: "Forbidden".into(),
            message: format!(
                "{} \"{name}\" is forbidden: unable to create new content in namespace {} because it is being terminated",
                call.rt.qualified(),
                call.namespace
            ),
            details: Some(details),
        });
    }
    Ok(())
}

fn random_suffix(cluster: &mut KubeCluster) -> String {
    const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
    let uid = cluster.store.next_uid();
    let mut h = super::controllers::hash(&uid);
    (0..5)
        .map(|_| {
            let c = ALPHABET[(h % 27) as usize] as char;
            h /= 27;
            c
        })
        .collect()
}

fn next_cluster_ip(cluster: &mut KubeCluster) -> String {
    let n = cluster.store.uid_counter + 10;
    format!("34.118.{}.{}", 224 + (n / 250) % 16, 2 + n % 250)
}

/// Create (POST, or server-side apply of a missing object). `managed` says the managedFields are
/// already computed (apply); otherwise the creator's Update entry is recorded.
pub fn create(
    cluster: &mut KubeCluster,
    call: &Call,
    mut object: Value,
    managed: bool,
) -> Result<Value, Status> {
    check_type(&call.rt, &object, false)?;
    let rt = call.rt.clone();
    if super::eventsv1::is_events(&rt) {
        super::eventsv1::validate_create(&rt, &object)?;
        object = super::eventsv1::to_core(&object);
    }
    if object["metadata"]["name"]
        .as_str()
        .is_none_or(str::is_empty)
        && let Some(prefix) = object["metadata"]["generateName"]
            .as_str()
            .map(String::from)
    {
        object["metadata"]["name"] = json!(format!("{prefix}{}", random_suffix(cluster)));
    }
    let name = object["metadata"]["name"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    if let Some(url_name) = &call.name
        && *url_name != name
    {
        return Err(Status::bad_request(format!(
            "the name of the object ({name}) does not match the name on the URL ({url_name})"
        )));
    }
    if rt.namespaced {
        match object["metadata"]["namespace"].as_str() {
            Some(ns) if !ns.is_empty() && ns != call.namespace => {
                return Err(Status::bad_request(
                    "the namespace of the provided object does not match the namespace sent on the request",
                ));
            }
            _ => object["metadata"]["namespace"] = json!(call.namespace),
        }
    } else if let Some(meta) = object["metadata"].as_object_mut() {
        meta.remove("namespace");
    }
    admission::validate(&rt, &object)?;
    super::cel::check(cluster, &rt, &object, None)?;
    check_namespace(cluster, call, &name)?;
    if cluster
        .store
        .get(rt.store_group(), &rt.plural, &call.namespace, &name)
        .is_some()
    {
        return Err(Status::already_exists(&rt.group, &rt.plural, &name));
    }
    if rt.status
        && !matches!(
            rt.plural.as_str(),
            "namespaces"
                | "nodes"
                | "pods"
                | "services"
                | "persistentvolumes"
                | "persistentvolumeclaims"
        )
        && let Some(map) = object.as_object_mut()
    {
        map.remove("status");
    }
    if rt.is("", "persistentvolumeclaims") && object.pointer("/spec/storageClassName").is_none() {
        let default_class = cluster
            .store
            .list("storage.k8s.io", "storageclasses", None)
            .into_iter()
            .find(|sc| {
                sc.pointer("/metadata/annotations/storageclass.kubernetes.io~1is-default-class")
                    == Some(&json!("true"))
            })
            .and_then(|sc| sc["metadata"]["name"].as_str().map(String::from));
        if let Some(class) = default_class {
            object["spec"]["storageClassName"] = json!(class);
        }
    }
    let ip = next_cluster_ip(cluster);
    admission::defaults(&rt, &mut object, || ip);
    if rt.is("", "pods") {
        admission::pod_create(cluster, &call.namespace, &mut object)?;
    }
    let meta = &mut object["metadata"];
    if let Some(m) = meta.as_object_mut() {
        for k in [
            "resourceVersion",
            "deletionTimestamp",
            "deletionGracePeriodSeconds",
            "selfLink",
        ] {
            m.remove(k);
        }
    }
    object["metadata"]["uid"] = json!(cluster.store.next_uid());
    object["metadata"]["creationTimestamp"] = json!(call.clock.ts(call.clock.now));
    if rt.is("batch", "jobs") {
        super::controllers::jobs::on_create(cluster, &mut object);
    }
    if rt.is(super::controllers::jobsets::GROUP, "jobsets") {
        super::controllers::jobsets::on_create(cluster, &mut object, call.clock.now);
    }
    if rt.generation {
        object["metadata"]["generation"] = json!(1);
    }
    if !managed {
        let time = call.clock.ts(call.clock.now);
        let manager = call.manager();
        let api_version = rt.api_version();
        let writer = Writer {
            manager: &manager,
            api_version: &api_version,
            time: &time,
            scope: call.scope(),
        };
        fields::track_update(None, &mut object, &writer);
    }
    admission::webhooks(
        cluster,
        &rt,
        None,
        Operation::Create,
        &object,
        call.clock.now,
    )?;
    if rt.is(super::controllers::kueue::GROUP, "resourceflavors")
        && admission::mutated(cluster, &rt, Operation::Create, &object)
    {
        super::controllers::kueue::on_flavor_create(&mut object);
    }
    let object = stored_form(&rt, &object);
    if call.dry_run() {
        return Ok(present(&rt, &object));
    }
    // When a pod was made, to the millisecond (its creationTimestamp has seconds): what the
    // scheduler and the kubelet count from.
    if rt.generation || rt.is("", "pods") {
        let key = object_key(rt.store_group(), &rt.plural, &call.namespace, &name);
        cluster
            .store
            .generation_since
            .insert(key, (1, call.clock.now));
    }
    let stored = cluster
        .store
        .put(rt.store_group(), &rt.plural, &call.namespace, &name, object);
    Ok(present(&rt, &stored))
}

/// The object as the store keeps it: at its request's version, except `events.k8s.io` Events,
/// kept as core Events ([`super::eventsv1`]).
fn stored_form(rt: &ResourceType, object: &Value) -> Value {
    let object = present(rt, object);
    if super::eventsv1::is_events(rt) {
        super::eventsv1::to_core(&object)
    } else {
        object
    }
}

/// Everything but metadata and status: what a generation covers.
fn spec_part(object: &Value) -> Value {
    let mut out = object.clone();
    if let Some(map) = out.as_object_mut() {
        for k in ["metadata", "status", "apiVersion", "kind"] {
            map.remove(k);
        }
    }
    out
}

fn without_bookkeeping(object: &Value) -> Value {
    let mut out = object.clone();
    if let Some(meta) = out["metadata"].as_object_mut() {
        meta.remove("managedFields");
        meta.remove("resourceVersion");
    }
    out
}

/// Update of an existing object to `new` (PUT, patches, apply). `managed`: managedFields are
/// already computed (apply).
pub fn update(
    cluster: &mut KubeCluster,
    call: &Call,
    old: Value,
    mut new: Value,
    managed: bool,
) -> Result<Value, Status> {
    let rt = call.rt.clone();
    let name = call.name().to_string();
    check_type(&rt, &new, false)?;
    if super::eventsv1::is_events(&rt) {
        new = super::eventsv1::to_core(&new);
    }
    if let Some(body_name) = new["metadata"]["name"].as_str()
        && body_name != name
    {
        return Err(Status::bad_request(format!(
            "the name of the object ({body_name}) does not match the name on the URL ({name})"
        )));
    }
    if rt.namespaced
        && let Some(ns) = new["metadata"]["namespace"].as_str()
        && ns != call.namespace
    {
        return Err(Status::bad_request(
            "the namespace of the provided object does not match the namespace sent on the request",
        ));
    }
    let requested_version = new["metadata"]["resourceVersion"]
        .as_str()
        .map(String::from);
    if let Some(version) = requested_version.filter(|v| !v.is_empty())
        && Some(version.as_str()) != old["metadata"]["resourceVersion"].as_str()
    {
        return Err(Status::stale(&rt.qualified(), &rt.group, &rt.plural, &name));
    }
    let scope = call.scope();
    match scope {
        Scope::Status => {
            let status = new["status"].clone();
            let managed_fields = new["metadata"]["managedFields"].clone();
            new = old.clone();
            new["status"] = status;
            if managed {
                new["metadata"]["managedFields"] = managed_fields;
            }
        }
        Scope::MainWithoutStatus => new["status"] = old["status"].clone(),
        Scope::Main => {}
    }
    if new["status"].is_null()
        && let Some(map) = new.as_object_mut()
    {
        map.remove("status");
    }
    for k in [
        "name",
        "uid",
        "creationTimestamp",
        "deletionTimestamp",
        "generation",
        "namespace",
    ] {
        match old["metadata"].get(k) {
            Some(v) => new["metadata"][k] = v.clone(),
            None => {
                if let Some(m) = new["metadata"].as_object_mut() {
                    m.remove(k);
                }
            }
        }
    }
    let ip = String::new();
    admission::defaults(&rt, &mut new, || ip);
    admission::validate(&rt, &new)?;
    super::cel::check(cluster, &rt, &new, Some(&old))?;
    let generation = old["metadata"]["generation"].as_i64().unwrap_or(1);
    let spec_changed = spec_part(&old) != spec_part(&new);
    if rt.generation && spec_changed {
        new["metadata"]["generation"] = json!(generation + 1);
    }
    if !managed {
        let time = call.clock.ts(call.clock.now);
        let manager = call.manager();
        let api_version = rt.api_version();
        let writer = Writer {
            manager: &manager,
            api_version: &api_version,
            time: &time,
            scope,
        };
        fields::track_update(Some(&old), &mut new, &writer);
    }
    new["metadata"]["resourceVersion"] = old["metadata"]["resourceVersion"].clone();
    let new = stored_form(&rt, &new);
    if without_bookkeeping(&new) == without_bookkeeping(&stored_form(&rt, &old)) {
        return Ok(present(&rt, &old));
    }
    admission::webhooks(
        cluster,
        &rt,
        call.subresource.as_deref(),
        Operation::Update,
        &new,
        call.clock.now,
    )?;
    if call.dry_run() {
        return Ok(present(&rt, &new));
    }
    let finished = new["metadata"].get("deletionTimestamp").is_some()
        && new["metadata"]["finalizers"]
            .as_array()
            .is_none_or(Vec::is_empty)
        && !rt.is("", "namespaces");
    if finished {
        let removed = cluster
            .store
            .remove(rt.store_group(), &rt.plural, &call.namespace, &name);
        return Ok(present(&rt, &removed.unwrap_or(new)));
    }
    if rt.generation && spec_changed {
        let key = object_key(rt.store_group(), &rt.plural, &call.namespace, &name);
        cluster
            .store
            .generation_since
            .insert(key, (generation + 1, call.clock.now));
    }
    let stored = cluster
        .store
        .put(rt.store_group(), &rt.plural, &call.namespace, &name, new);
    if rt.is("", "nodes") && scope != Scope::Status {
        super::controllers::nodes::client_edit(cluster, &name, &stored);
    }
    Ok(present(&rt, &stored))
}

/// PUT.
pub fn replace(cluster: &mut KubeCluster, call: &Call, body: Value) -> Result<Value, Status> {
    let old = cluster
        .store
        .get(
            call.rt.store_group(),
            &call.rt.plural,
            &call.namespace,
            call.name(),
        )
        .cloned()
        .ok_or_else(|| call.not_found())?;
    update(cluster, call, old, body, false)
}

/// Parses a body that may be JSON or YAML.
pub fn parse_body(body: &[u8]) -> Result<Value, Status> {
    if let Ok(v) = serde_json::from_slice::<Value>(body) {
        return Ok(v);
    }
    serde_saphyr::from_slice::<Value>(body)
        .map_err(|e| Status::bad_request(format!("error decoding YAML: {e}")))
}

/// PATCH, by content type. Returns the object and whether it was created (apply only).
pub fn patch(
    cluster: &mut KubeCluster,
    call: &Call,
    content_type: &str,
    body: &[u8],
) -> Result<(Value, bool), Status> {
    let content_type = content_type.split(';').next().unwrap_or_default().trim();
    let old = cluster
        .store
        .get(
            call.rt.store_group(),
            &call.rt.plural,
            &call.namespace,
            call.name(),
        )
        .cloned();
    let is_apply = content_type == "application/apply-patch+yaml";
    if !is_apply && call.query.get("force").is_some() {
        return Err(Status {
            code: 422,
            reason: "Invalid".into(),
            message: "PatchOptions.meta.k8s.io \"\" is invalid: force: Forbidden: may not be specified for non-apply patch".into(),
            details: Some(json!({"group": "meta.k8s.io", "kind": "PatchOptions", "causes": [{"reason": "FieldValueForbidden", "message": "Forbidden: may not be specified for non-apply patch", "field": "force"}]})),
        });
    }
    match content_type {
        "application/apply-patch+yaml" => {
            let manager = call.query.get("fieldManager").unwrap_or_default();
            if manager.is_empty() {
                return Err(Status {
                    code: 422,
                    reason: "Invalid".into(),
                    message: "PatchOptions.meta.k8s.io \"\" is invalid: fieldManager: Required value: is required for apply patch".into(),
                    details: Some(json!({"group": "meta.k8s.io", "kind": "PatchOptions", "causes": [{"reason": "FieldValueRequired", "message": "Required value: is required for apply patch", "field": "fieldManager"}]})),
                });
            }
            let applied = parse_body(body)?;
            check_type(&call.rt, &applied, true)?;
            let time = call.clock.ts(call.clock.now);
            let api_version = call.rt.api_version();
            let writer = Writer {
                manager,
                api_version: &api_version,
                time: &time,
                scope: call.scope(),
            };
            let force = call.query.flag("force");
            match old {
                None => {
                    if call.subresource.is_some() {
                        return Err(call.not_found());
                    }
                    let mut object = fields::apply(None, &applied, &writer, force)?;
                    object["apiVersion"] = applied["apiVersion"].clone();
                    object["kind"] = applied["kind"].clone();
                    if object["metadata"]["name"].is_null() {
                        object["metadata"]["name"] = applied["metadata"]["name"].clone();
                    }
                    if let Some(ns) = applied["metadata"]["namespace"].as_str() {
                        object["metadata"]["namespace"] = json!(ns);
                    }
                    create(cluster, call, object, true).map(|o| (o, true))
                }
                Some(old) => {
                    let object = fields::apply(Some(&old), &applied, &writer, force)?;
                    update(cluster, call, old, object, true).map(|o| (o, false))
                }
            }
        }
        "application/merge-patch+json"
        | "application/strategic-merge-patch+json"
        | "application/json-patch+json" => {
            let old = old.ok_or_else(|| call.not_found())?;
            let patch_body: Value = serde_json::from_slice(body)
                .map_err(|e| Status::bad_request(format!("error decoding patch: {e}")))?;
            let mut new = old.clone();
            match content_type {
                "application/merge-patch+json" => patches::merge_patch(&mut new, &patch_body),
                "application/strategic-merge-patch+json" => fields::merge(&mut new, &patch_body),
                _ => patches::json_patch(&mut new, &patch_body)?,
            }
            update(cluster, call, old, new, false).map(|o| (o, false))
        }
        other => Err(Status::failure(
            415,
            "UnsupportedMediaType",
            format!(
                "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml; got {other:?}"
            ),
        )),
    }
}

/// Namespaces the API server refuses to delete.
const IMMORTAL_NAMESPACES: &[&str] = &["default", "kube-system", "kube-public"];

/// DELETE of one object: the deleted object or a success Status; namespaces, CRDs and objects
/// with finalizers are only marked for deletion (the controllers finish the job).
pub fn delete(cluster: &mut KubeCluster, call: &Call, options: &Value) -> Result<Value, Status> {
    let rt = call.rt.clone();
    let name = call.name().to_string();
    let old = cluster
        .store
        .get(rt.store_group(), &rt.plural, &call.namespace, &name)
        .cloned()
        .ok_or_else(|| call.not_found())?;
    let preconditions = &options["preconditions"];
    for (field, label) in [("uid", "UID"), ("resourceVersion", "ResourceVersion")] {
        if let Some(wanted) = preconditions[field].as_str() {
            let actual = old["metadata"][field].as_str().unwrap_or_default();
            if wanted != actual {
                return Err(Status {
                    code: 409,
                    reason: "Conflict".into(),
                    message: format!(
                        "Operation cannot be fulfilled on {} \"{name}\": Precondition failed: {label} in precondition: {wanted}, {label} in object meta: {actual}",
                        rt.qualified()
                    ),
                    details: Some(json!({"name": name, "group": rt.group, "kind": rt.plural})),
                });
            }
        }
    }
    if rt.is("", "namespaces") && IMMORTAL_NAMESPACES.contains(&name.as_str()) {
        return Err(Status {
            code: 403,
            reason: "Forbidden".into(),
            message: format!(
                "namespaces \"{name}\" is forbidden: this namespace may not be deleted"
            ),
            details: Some(json!({"name": name, "kind": "namespaces"})),
        });
    }
    admission::webhooks(cluster, &rt, None, Operation::Delete, &old, call.clock.now)?;
    let mut marked = old.clone();
    if marked["metadata"].get("deletionTimestamp").is_none() {
        marked["metadata"]["deletionTimestamp"] = json!(call.clock.ts(call.clock.now));
        marked["metadata"]["deletionGracePeriodSeconds"] = json!(0);
    }
    let has_finalizers = old["metadata"]["finalizers"]
        .as_array()
        .is_some_and(|f| !f.is_empty());
    if rt.is("", "namespaces") {
        marked["status"]["phase"] = json!("Terminating");
    } else if rt.is("apiextensions.k8s.io", "customresourcedefinitions") {
        let mut finalizers = marked["metadata"]["finalizers"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let cleanup = json!("customresourcecleanup.apiextensions.k8s.io");
        if !finalizers.contains(&cleanup) {
            finalizers.push(cleanup);
        }
        marked["metadata"]["finalizers"] = Value::Array(finalizers);
    } else if !has_finalizers {
        if call.dry_run() {
            return Ok(present(&rt, &old));
        }
        if rt.is("batch", "jobs") {
            let policy = options["propagationPolicy"]
                .as_str()
                .or(call.query.get("propagationPolicy"));
            super::controllers::jobs::on_delete(cluster, &old, policy);
        }
        let removed = cluster
            .store
            .remove(rt.store_group(), &rt.plural, &call.namespace, &name)
            .unwrap_or(old);
        if rt.custom {
            return Ok(present(&rt, &removed));
        }
        let mut details =
            json!({"name": name, "kind": rt.plural, "uid": removed["metadata"]["uid"]});
        if !rt.group.is_empty() {
            details["group"] = json!(rt.group);
        }
        return Ok(
            json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "details": details}),
        );
    }
    if call.dry_run() {
        return Ok(present(&rt, &marked));
    }
    let stored = if marked == old {
        old
    } else {
        cluster
            .store
            .put(rt.store_group(), &rt.plural, &call.namespace, &name, marked)
    };
    Ok(present(&rt, &stored))
}

/// DELETE of a collection (with labelSelector/fieldSelector).
pub fn delete_collection(cluster: &mut KubeCluster, call: &Call) -> Result<Value, Status> {
    let names: Vec<(String, String)> = selected(cluster, call)?
        .into_iter()
        .map(|o| {
            (
                o["metadata"]["namespace"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
                o["metadata"]["name"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
            )
        })
        .collect();
    for (namespace, name) in names {
        let one = Call {
            rt: call.rt.clone(),
            namespace,
            name: Some(name),
            subresource: None,
            query: call.query,
            user_agent: call.user_agent.clone(),
            clock: call.clock,
        };
        delete(cluster, &one, &Value::Null)?;
    }
    Ok(json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success"}))
}
