//! Firewall rules (`projects/p/global/firewalls`): insert, get, list, patch, update (PUT), delete.
//!
//! Defaults as Compute fills them: network `global/networks/default` (which must then exist),
//! direction INGRESS, priority 1000, source range 0.0.0.0/0 for an ingress rule without sources,
//! destination range 0.0.0.0/0 for an egress rule without destinations, `disabled: false`,
//! logging off.

use super::cidr::Cidr;
use super::collection::{Collection, Hooks, Placement, Quota, Target};
use super::{
    Kind, array_field, invalid_field, link, referenced_network, required_field, str_field,
};
use crate::error::GcpResult;
use crate::shared::Ctx;
use crate::world::World;
use serde_json::{Map, Value, json};

/// The `firewalls` collection.
pub static COLLECTION: Collection = Collection {
    name: "Firewall",
    word: "firewall",
    segment: "firewalls",
    in_use_word: "firewall",
    placement: Placement::Global,
    quota: Quota {
        metric: "FIREWALLS",
        limit: 200.0,
        limit_name: "FIREWALLS-per-project",
        regional: false,
    },
    build: insert,
    hooks: Hooks {
        patch: Some(patch),
        update: Some(update),
        ..Hooks::NONE
    },
};

pub const KIND: Kind = Kind(COLLECTION.name);

/// The fields a client may set on a firewall rule.
const SETTABLE: &[&str] = &[
    "description",
    "network",
    "priority",
    "sourceRanges",
    "destinationRanges",
    "sourceTags",
    "targetTags",
    "sourceServiceAccounts",
    "targetServiceAccounts",
    "allowed",
    "denied",
    "direction",
    "logConfig",
    "disabled",
];

/// Validates the client-settable fields in `spec` and returns the full stored rule (without the
/// output-only fields, which the caller adds).
fn build_rule(
    world: &World,
    project: &str,
    spec: &Map<String, Value>,
) -> GcpResult<Map<String, Value>> {
    let spec_value = Value::Object(spec.clone());
    let mut rule = Map::new();
    if let Some(description) = spec.get("description").filter(|d| !d.is_null()) {
        rule.insert("description".into(), description.clone());
    }
    let default_network = link(&format!("projects/{project}/global/networks/default"));
    let network_ref = str_field(&spec_value, "network").unwrap_or(&default_network);
    let network = referenced_network(&world.compute, project, network_ref)?;
    super::network_profiles::check_firewall(world, &network)?;
    rule.insert("network".into(), json!(link(&network)));
    let priority = match spec.get("priority") {
        None | Some(Value::Null) => 1000,
        Some(value) => match value.as_i64() {
            Some(p) if (0..=65535).contains(&p) => p,
            _ => {
                return Err(invalid_field(
                    "resource.priority",
                    &value.to_string(),
                    "Must be between 0 and 65535.",
                ));
            }
        },
    };
    rule.insert("priority".into(), json!(priority));
    let direction = str_field(&spec_value, "direction").unwrap_or("INGRESS");
    if direction != "INGRESS" && direction != "EGRESS" {
        return Err(invalid_field("resource.direction", direction, ""));
    }
    for key in ["sourceRanges", "destinationRanges"] {
        for (i, range) in array_field(&spec_value, key).iter().enumerate() {
            let text = range.as_str().unwrap_or("");
            if Cidr::parse_range(text).is_err() {
                return Err(invalid_field(
                    &format!("resource.{key}[{i}]"),
                    text,
                    "Must be a CIDR address range that is contained in the valid IPv4 address space.",
                ));
            }
        }
    }
    let mut sources: Vec<Value> = array_field(&spec_value, "sourceRanges").to_vec();
    let has_sources = !sources.is_empty()
        || !array_field(&spec_value, "sourceTags").is_empty()
        || !array_field(&spec_value, "sourceServiceAccounts").is_empty();
    if direction == "INGRESS" && !has_sources {
        sources.push(json!("0.0.0.0/0"));
    }
    let mut destinations: Vec<Value> = array_field(&spec_value, "destinationRanges").to_vec();
    if direction == "EGRESS" && destinations.is_empty() {
        destinations.push(json!("0.0.0.0/0"));
    }
    if !sources.is_empty() {
        rule.insert("sourceRanges".into(), Value::Array(sources));
    }
    if !destinations.is_empty() {
        rule.insert("destinationRanges".into(), Value::Array(destinations));
    }
    for key in [
        "sourceTags",
        "targetTags",
        "sourceServiceAccounts",
        "targetServiceAccounts",
    ] {
        let list = array_field(&spec_value, key);
        if !list.is_empty() {
            rule.insert(key.into(), Value::Array(list.to_vec()));
        }
    }
    let allowed = array_field(&spec_value, "allowed");
    let denied = array_field(&spec_value, "denied");
    if allowed.is_empty() == denied.is_empty() {
        return Err(invalid_field(
            "resource",
            "",
            "Exactly one of 'allowed' or 'denied' must be specified.",
        ));
    }
    let (key, rules) = if allowed.is_empty() {
        ("denied", denied)
    } else {
        ("allowed", allowed)
    };
    for (i, entry) in rules.iter().enumerate() {
        if str_field(entry, "IPProtocol").is_none_or(str::is_empty) {
            return Err(required_field(&format!("resource.{key}[{i}].IPProtocol")));
        }
    }
    rule.insert(key.into(), Value::Array(rules.to_vec()));
    rule.insert("direction".into(), json!(direction));
    rule.insert(
        "logConfig".into(),
        spec.get("logConfig")
            .filter(|v| !v.is_null())
            .cloned()
            .unwrap_or_else(|| json!({ "enable": false })),
    );
    rule.insert(
        "disabled".into(),
        json!(
            spec.get("disabled")
                .and_then(Value::as_bool)
                .unwrap_or(false)
        ),
    );
    Ok(rule)
}

/// The stored JSON: output-only fields first, as Compute orders them.
fn assemble(id: &str, created: &str, name: &str, path: &str, rule: Map<String, Value>) -> Value {
    let mut body = Map::new();
    body.insert("kind".into(), json!("compute#firewall"));
    body.insert("id".into(), json!(id));
    body.insert("creationTimestamp".into(), json!(created));
    body.insert("name".into(), json!(name));
    body.extend(rule);
    body.insert("selfLink".into(), json!(link(path)));
    Value::Object(body)
}

fn insert(
    world: &mut World,
    cx: &Ctx,
    target: &Target,
    spec: &Map<String, Value>,
) -> GcpResult<Value> {
    let rule = build_rule(world, &target.project, spec)?;
    let id = world.numeric_id();
    let created = world.compute_timestamp(cx.now);
    Ok(assemble(&id, &created, &target.name, &target.path, rule))
}

/// PATCH merges the given fields into the rule.
fn patch(
    world: &mut World,
    _cx: &Ctx,
    target: &Target,
    current: Value,
    body: Map<String, Value>,
) -> GcpResult<Value> {
    change(world, target, current, body, true)
}

/// PUT replaces every settable field.
fn update(
    world: &mut World,
    _cx: &Ctx,
    target: &Target,
    current: Value,
    body: Map<String, Value>,
) -> GcpResult<Value> {
    change(world, target, current, body, false)
}

/// The rule a PATCH (`merge`) or PUT leaves; the name and direction cannot change.
fn change(
    world: &World,
    target: &Target,
    current_body: Value,
    body: Map<String, Value>,
    merge: bool,
) -> GcpResult<Value> {
    let name = target.name.as_str();
    if let Some(given) = body.get("name").and_then(Value::as_str)
        && given != name
    {
        return Err(invalid_field(
            "resource.name",
            given,
            "Resource name cannot be changed.",
        ));
    }
    let mut spec: Map<String, Value> = Map::new();
    if merge {
        for key in SETTABLE {
            if let Some(value) = current_body.get(*key) {
                spec.insert((*key).to_string(), value.clone());
            }
        }
        // Setting one action replaces the other.
        if body.contains_key("allowed") {
            spec.remove("denied");
        }
        if body.contains_key("denied") {
            spec.remove("allowed");
        }
        // Sources given by the client replace the defaulted source range.
        if body.contains_key("sourceTags") || body.contains_key("sourceServiceAccounts") {
            spec.remove("sourceRanges");
        }
    } else {
        spec.insert("network".into(), current_body["network"].clone());
    }
    for (key, value) in &body {
        if SETTABLE.contains(&key.as_str()) {
            spec.insert(key.clone(), value.clone());
        }
    }
    if str_field(&Value::Object(spec.clone()), "direction")
        != str_field(&current_body, "direction").or(Some("INGRESS"))
        && spec.contains_key("direction")
    {
        return Err(invalid_field(
            "resource.direction",
            str_field(&Value::Object(spec.clone()), "direction").unwrap_or(""),
            "The direction of a firewall rule cannot be changed.",
        ));
    }
    let rule = build_rule(world, &target.project, &spec)?;
    let id = str_field(&current_body, "id").unwrap_or("").to_string();
    let created = str_field(&current_body, "creationTimestamp")
        .unwrap_or("")
        .to_string();
    Ok(assemble(&id, &created, name, &target.path, rule))
}
