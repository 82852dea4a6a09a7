//! Field ownership (`metadata.managedFields`, FieldsV1) and server-side apply.
//!
//! A field set is a set of leaf paths. Path elements use FieldsV1 syntax: `f:name` for a map key,
//! `k:{"name":"x"}` for an item of an associative list (lists of objects that all carry a `name`),
//! and `.` for "the list item itself". Other lists are atomic (one leaf), as structured-merge-diff
//! treats lists without a schema.
//!
//! [`apply`] implements server-side apply: conflicts with other managers that set a field to a
//! different value (409 unless forced), removal of fields the applier stopped applying when no
//! one else owns them, and a merge of the applied configuration. [`track_update`] records
//! ownership for the non-apply writes (create, update, merge patches).

use super::status::Status;
use serde_json::{Map, Value, json};
use std::collections::BTreeSet;

pub type Path = Vec<String>;
pub type FieldSet = BTreeSet<Path>;

/// Metadata fields the server owns; never tracked, never taken from applied configurations.
const SYSTEM_METADATA: &[&str] = &[
    "name",
    "namespace",
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "managedFields",
    "selfLink",
];

/// Which part of an object a write covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// Everything but status (resources with a status subresource).
    MainWithoutStatus,
    /// Everything (resources without a status subresource).
    Main,
    /// Only `.status` (the status subresource).
    Status,
}

fn associative_key(items: &[Value]) -> bool {
    !items.is_empty()
        && items
            .iter()
            .all(|i| i.get("name").and_then(Value::as_str).is_some())
}

fn item_element(item: &Value) -> String {
    format!(
        "k:{}",
        json!({"name": item["name"].as_str().unwrap_or_default()})
    )
}

fn collect(value: &Value, prefix: &mut Path, out: &mut FieldSet) {
    match value {
        Value::Object(map) if !map.is_empty() => {
            for (k, v) in map {
                prefix.push(format!("f:{k}"));
                collect(v, prefix, out);
                prefix.pop();
            }
        }
        Value::Array(items) if associative_key(items) => {
            for item in items {
                prefix.push(item_element(item));
                prefix.push(".".into());
                out.insert(prefix.clone());
                prefix.pop();
                collect(item, prefix, out);
                prefix.pop();
            }
        }
        _ => {
            out.insert(prefix.clone());
        }
    }
}

/// The leaf paths an object sets, within `scope`.
pub fn fields_of(object: &Value, scope: Scope) -> FieldSet {
    let mut out = FieldSet::new();
    let Some(map) = object.as_object() else {
        return out;
    };
    let mut prefix = Path::new();
    for (k, v) in map {
        match (k.as_str(), scope) {
            ("apiVersion" | "kind", _) => continue,
            ("status", Scope::MainWithoutStatus) => continue,
            ("status", Scope::Status) => {}
            (_, Scope::Status) => continue,
            ("metadata", _) => {
                let Some(meta) = v.as_object() else { continue };
                for (mk, mv) in meta {
                    if SYSTEM_METADATA.contains(&mk.as_str()) {
                        continue;
                    }
                    prefix.extend(["f:metadata".to_string(), format!("f:{mk}")]);
                    collect(mv, &mut prefix, &mut out);
                    prefix.clear();
                }
                continue;
            }
            _ => {}
        }
        prefix.push(format!("f:{k}"));
        collect(v, &mut prefix, &mut out);
        prefix.clear();
    }
    out
}

/// The value at a path, if present (`.` elements are the list item itself).
pub fn value_at<'a>(object: &'a Value, path: &[String]) -> Option<&'a Value> {
    let mut current = object;
    for element in path {
        if element == "." {
            continue;
        }
        if let Some(key) = element.strip_prefix("f:") {
            current = current.get(key)?;
        } else if let Some(key) = element.strip_prefix("k:") {
            let wanted: Value = serde_json::from_str(key).ok()?;
            let name = wanted["name"].as_str()?;
            current = current
                .as_array()?
                .iter()
                .find(|i| i["name"].as_str() == Some(name))?;
        } else {
            return None;
        }
    }
    Some(current)
}

/// Removes the field at `path` (a `.` path removes the list item).
fn remove_path(object: &mut Value, path: &[String]) {
    let (parent_path, last) = match path.split_last() {
        Some((last, rest)) if last == "." => match rest.split_last() {
            Some((item, parent)) => (parent, item),
            None => return,
        },
        Some((last, rest)) => (rest, last),
        None => return,
    };
    let mut current = object;
    for element in parent_path {
        let next = if let Some(key) = element.strip_prefix("f:") {
            current.get_mut(key)
        } else if let Some(key) = element.strip_prefix("k:") {
            let wanted: Value = serde_json::from_str(key).unwrap_or(Value::Null);
            let name = wanted["name"].as_str().map(String::from);
            current
                .as_array_mut()
                .and_then(|a| a.iter_mut().find(|i| i["name"].as_str() == name.as_deref()))
        } else {
            None
        };
        match next {
            Some(n) => current = n,
            None => return,
        }
    }
    if let Some(key) = last.strip_prefix("f:") {
        if let Some(map) = current.as_object_mut() {
            map.remove(key);
        }
    } else if let Some(key) = last.strip_prefix("k:") {
        let wanted: Value = serde_json::from_str(key).unwrap_or(Value::Null);
        if let Some(items) = current.as_array_mut() {
            items.retain(|i| i["name"] != wanted["name"]);
        }
    }
}

/// Deep merge of an applied configuration into an object: maps merge, associative lists merge by
/// name, everything else is replaced; `null` removes.
pub fn merge(base: &mut Value, applied: &Value) {
    match (base, applied) {
        (Value::Object(base), Value::Object(applied)) => {
            for (k, v) in applied {
                if v.is_null() {
                    base.remove(k);
                } else if let Some(existing) = base.get_mut(k) {
                    merge(existing, v);
                } else {
                    base.insert(k.clone(), v.clone());
                }
            }
        }
        (Value::Array(base), Value::Array(applied))
            if associative_key(applied) && associative_key(base) =>
        {
            for item in applied {
                match base.iter_mut().find(|b| b["name"] == item["name"]) {
                    Some(existing) => merge(existing, item),
                    None => base.push(item.clone()),
                }
            }
        }
        (base, applied) => *base = applied.clone(),
    }
}

/// `.spec.template.spec.containers[name="x"].image`: how conflicts print paths.
pub fn display_path(path: &[String]) -> String {
    let mut out = String::new();
    for element in path {
        if let Some(key) = element.strip_prefix("f:") {
            out.push('.');
            out.push_str(key);
        } else if let Some(key) = element.strip_prefix("k:") {
            let wanted: Value = serde_json::from_str(key).unwrap_or(Value::Null);
            out.push_str(&format!(
                "[name=\"{}\"]",
                wanted["name"].as_str().unwrap_or_default()
            ));
        }
    }
    out
}

/// One `managedFields` entry.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    pub manager: String,
    pub operation: String,
    pub api_version: String,
    pub time: String,
    pub subresource: String,
    pub fields: FieldSet,
}

fn decode(value: &Value, prefix: &mut Path, out: &mut FieldSet) {
    let Some(map) = value.as_object() else {
        return;
    };
    for (k, v) in map {
        prefix.push(k.clone());
        if k == "." || v.as_object().is_none_or(Map::is_empty) {
            out.insert(prefix.clone());
        } else {
            decode(v, prefix, out);
        }
        prefix.pop();
    }
}

fn encode(fields: &FieldSet) -> Value {
    let mut root = Map::new();
    for path in fields {
        let mut current = &mut root;
        for element in path {
            let entry = current
                .entry(element.clone())
                .or_insert_with(|| Value::Object(Map::new()));
            match entry.as_object_mut() {
                Some(m) => current = m,
                None => break,
            }
        }
    }
    Value::Object(root)
}

/// The entries of an object's `metadata.managedFields`.
pub fn entries(object: &Value) -> Vec<Entry> {
    object["metadata"]["managedFields"]
        .as_array()
        .map(|items| {
            items
                .iter()
                .map(|e| {
                    let mut fields = FieldSet::new();
                    decode(&e["fieldsV1"], &mut Path::new(), &mut fields);
                    Entry {
                        manager: e["manager"].as_str().unwrap_or_default().into(),
                        operation: e["operation"].as_str().unwrap_or_default().into(),
                        api_version: e["apiVersion"].as_str().unwrap_or_default().into(),
                        time: e["time"].as_str().unwrap_or_default().into(),
                        subresource: e["subresource"].as_str().unwrap_or_default().into(),
                        fields,
                    }
                })
                .collect()
        })
        .unwrap_or_default()
}

fn set_entries(object: &mut Value, entries: &[Entry]) {
    let items: Vec<Value> = entries
        .iter()
        .filter(|e| !e.fields.is_empty())
        .map(|e| {
            let mut item = json!({
                "manager": e.manager,
                "operation": e.operation,
                "apiVersion": e.api_version,
                "time": e.time,
                "fieldsType": "FieldsV1",
                "fieldsV1": encode(&e.fields),
            });
            if !e.subresource.is_empty() {
                item["subresource"] = Value::String(e.subresource.clone());
            }
            item
        })
        .collect();
    object["metadata"]["managedFields"] = Value::Array(items);
}

/// How the API server names a manager in conflict messages.
fn print_manager(entry: &Entry) -> String {
    let mut out = format!("{:?}", entry.manager);
    if !entry.subresource.is_empty() {
        out.push_str(&format!(" with subresource {:?}", entry.subresource));
    }
    if entry.operation == "Update" {
        out.push_str(&format!(" using {}", entry.api_version));
    }
    out
}

fn conflict_status(conflicts: &[(Entry, Path)]) -> Status {
    let causes: Vec<Value> = conflicts
        .iter()
        .map(|(e, p)| {
            json!({"reason": "FieldManagerConflict", "message": format!("conflict with {}", print_manager(e)), "field": display_path(p)})
        })
        .collect();
    let message = if let [(entry, path)] = conflicts {
        format!(
            "Apply failed with 1 conflict: conflict with {}: {}",
            print_manager(entry),
            display_path(path)
        )
    } else {
        let mut managers: Vec<(String, Vec<String>)> = Vec::new();
        for (e, p) in conflicts {
            let key = print_manager(e);
            match managers.iter_mut().find(|(k, _)| *k == key) {
                Some((_, paths)) => paths.push(display_path(p)),
                None => managers.push((key, vec![display_path(p)])),
            }
        }
        managers.sort();
        let lines: Vec<String> = managers
            .iter()
            .flat_map(|(m, paths)| {
                std::iter::once(format!("conflicts with {m}:"))
                    .chain(paths.iter().map(|p| format!("- {p}")))
            })
            .collect();
        format!(
            "Apply failed with {} conflicts: {}",
            conflicts.len(),
            lines.join("\n")
        )
    };
    Status {
        code: 409,
        reason: "Conflict".into(),
        message,
        details: Some(json!({"causes": causes})),
    }
}

/// Who is writing and how.
#[derive(Debug, Clone)]
pub struct Writer<'a> {
    pub manager: &'a str,
    pub api_version: &'a str,
    pub time: &'a str,
    pub scope: Scope,
}

impl Writer<'_> {
    fn subresource(&self) -> &'static str {
        if self.scope == Scope::Status {
            "status"
        } else {
            ""
        }
    }

    fn is(&self, e: &Entry, operation: &str) -> bool {
        e.manager == self.manager && e.operation == operation && e.subresource == self.subresource()
    }
}

/// The applied configuration without the server-owned metadata.
fn strip_system(applied: &Value, scope: Scope) -> Value {
    let mut out = applied.clone();
    if let Some(map) = out.as_object_mut() {
        match scope {
            Scope::Status => map.retain(|k, _| k == "status"),
            Scope::MainWithoutStatus => {
                map.remove("status");
            }
            Scope::Main => {}
        }
    }
    if let Some(meta) = out.get_mut("metadata").and_then(Value::as_object_mut) {
        for k in SYSTEM_METADATA {
            meta.remove(*k);
        }
    }
    out
}

/// Server-side apply of `applied` over `live` (None: create). Returns the new object with its
/// managedFields, or a 409 Conflict naming every conflicting field and manager.
pub fn apply(
    live: Option<&Value>,
    applied: &Value,
    writer: &Writer,
    force: bool,
) -> Result<Value, Status> {
    let empty = json!({});
    let live_value = live.unwrap_or(&empty);
    let mut all = entries(live_value);
    let applied_set = fields_of(applied, writer.scope);
    let mut conflicts = Vec::new();
    for entry in all.iter().filter(|e| !writer.is(e, "Apply")) {
        for path in entry.fields.intersection(&applied_set) {
            if path.last().is_some_and(|l| l == ".") {
                continue;
            }
            if value_at(live_value, path) != value_at(applied, path) {
                conflicts.push((entry.clone(), path.clone()));
            }
        }
    }
    if !conflicts.is_empty() {
        if !force {
            return Err(conflict_status(&conflicts));
        }
        for entry in all.iter_mut().filter(|e| !writer.is(e, "Apply")) {
            for (_, path) in &conflicts {
                entry.fields.remove(path);
            }
        }
    }
    let previous: FieldSet = all
        .iter()
        .find(|e| writer.is(e, "Apply"))
        .map(|e| e.fields.clone())
        .unwrap_or_default();
    let others: FieldSet = all
        .iter()
        .filter(|e| !writer.is(e, "Apply"))
        .flat_map(|e| e.fields.iter().cloned())
        .collect();
    let mut object = live.cloned().unwrap_or_else(|| json!({"metadata": {}}));
    for path in previous.difference(&applied_set) {
        let owned_elsewhere = if path.last().is_some_and(|l| l == ".") {
            let item = &path[..path.len() - 1];
            others.iter().any(|o| o.starts_with(item))
        } else {
            others.contains(path)
        };
        if !owned_elsewhere {
            remove_path(&mut object, path);
        }
    }
    merge(&mut object, &strip_system(applied, writer.scope));
    for entry in all.iter_mut() {
        entry.fields.retain(|p| value_at(&object, p).is_some());
    }
    all.retain(|e| !writer.is(e, "Apply"));
    all.push(Entry {
        manager: writer.manager.into(),
        operation: "Apply".into(),
        api_version: writer.api_version.into(),
        time: writer.time.into(),
        subresource: writer.subresource().into(),
        fields: applied_set,
    });
    set_entries(&mut object, &all);
    Ok(object)
}

/// Records ownership of a non-apply write that turned `old` (None: create) into `new`.
pub fn track_update(old: Option<&Value>, new: &mut Value, writer: &Writer) {
    let empty = json!({});
    let old_value = old.unwrap_or(&empty);
    let mut all = entries(old_value);
    let old_set = fields_of(old_value, writer.scope);
    let new_set = fields_of(new, writer.scope);
    let changed: FieldSet = new_set
        .iter()
        .filter(|p| value_at(old_value, p) != value_at(new, p))
        .cloned()
        .collect();
    let removed: FieldSet = old_set.difference(&new_set).cloned().collect();
    if changed.is_empty() && removed.is_empty() && old.is_some() {
        set_entries(new, &all);
        return;
    }
    for entry in all.iter_mut().filter(|e| !writer.is(e, "Update")) {
        entry
            .fields
            .retain(|p| !changed.contains(p) && !removed.contains(p));
    }
    let mine = match all.iter().position(|e| writer.is(e, "Update")) {
        Some(i) => i,
        None => {
            all.push(Entry {
                manager: writer.manager.into(),
                operation: "Update".into(),
                api_version: writer.api_version.into(),
                time: writer.time.into(),
                subresource: writer.subresource().into(),
                fields: FieldSet::new(),
            });
            all.len() - 1
        }
    };
    let entry = &mut all[mine];
    entry.fields.extend(changed);
    entry.fields.retain(|p| !removed.contains(p));
    entry.time = writer.time.into();
    entry.api_version = writer.api_version.into();
    set_entries(new, &all);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn writer(manager: &str) -> Writer<'_> {
        Writer {
            manager,
            api_version: "v1",
            time: "2026-01-01T00:00:00Z",
            scope: Scope::Main,
        }
    }

    #[test]
    fn apply_conflicts_force_and_removal() {
        let a1 = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"x": "1", "y": "2"}});
        let obj = apply(None, &a1, &writer("a"), false).unwrap();
        assert_eq!(obj["data"], json!({"x": "1", "y": "2"}));
        // Same value from another manager: shared ownership, no conflict.
        let b1 = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"x": "1"}});
        let obj = apply(Some(&obj), &b1, &writer("b"), false).unwrap();
        // Different value: conflict.
        let b2 = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"y": "3"}});
        let err = apply(Some(&obj), &b2, &writer("b"), false).unwrap_err();
        assert_eq!(err.code, 409);
        assert_eq!(
            err.message,
            "Apply failed with 1 conflict: conflict with \"a\": .data.y"
        );
        let forced = apply(Some(&obj), &b2, &writer("b"), true).unwrap();
        assert_eq!(forced["data"], json!({"x": "1", "y": "3"}));
        // `a` stops applying x and y: x is still owned by nobody else? b dropped x, so it goes.
        let a2 = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"z": "9"}});
        let after = apply(Some(&forced), &a2, &writer("a"), false).unwrap();
        assert_eq!(after["data"], json!({"y": "3", "z": "9"}));
    }

    #[test]
    fn fields_v1_round_trip_and_associative_lists() {
        let obj = json!({"spec": {"containers": [{"name": "m", "image": "i"}], "tolerations": [{"operator": "Exists"}]}});
        let set = fields_of(&obj, Scope::Main);
        let image: Path = vec![
            "f:spec".into(),
            "f:containers".into(),
            "k:{\"name\":\"m\"}".into(),
            "f:image".into(),
        ];
        assert!(set.contains(&image), "{set:?}");
        assert!(set.contains(&vec!["f:spec".to_string(), "f:tolerations".into()]));
        let mut decoded = FieldSet::new();
        decode(&encode(&set), &mut Path::new(), &mut decoded);
        assert_eq!(decoded, set);
        assert_eq!(display_path(&image), ".spec.containers[name=\"m\"].image");
    }
}
