//! `events.k8s.io/v1` Events: the same objects as core `v1` Events, served under another shape.
//! kube-apiserver stores both in one place — the `events.k8s.io` REST storage is the core event
//! storage (kubernetes/kubernetes `pkg/registry/events/rest/storage_events.go` builds it with
//! `eventstore.NewREST`) — and converts between the two versions field by field
//! (`pkg/apis/events/v1/conversion.go`): `involvedObject` ↔ `regarding`, `message` ↔ `note`,
//! `reportingComponent` ↔ `reportingController`, `source` ↔ `deprecatedSource`,
//! `firstTimestamp` ↔ `deprecatedFirstTimestamp`, `lastTimestamp` ↔ `deprecatedLastTimestamp`,
//! `count` ↔ `deprecatedCount`; the rest (`eventTime`, `series`, `action`, `reason`, `related`,
//! `reportingInstance`, `type`) keeps its name. So an event the simulated kubelet or scheduler
//! records ([`super::controllers::events`]) is listed, watched and read through both groups, and
//! one created through either is seen through the other.
//!
//! Creating through `events.k8s.io/v1` requires what `ValidateEventCreate` requires of that
//! version (`pkg/apis/core/validation/events.go`): `eventTime`, `reportingController`,
//! `reportingInstance`, `action` and `reason`, and `type` `Normal` or `Warning`. A patch is
//! applied to the stored (core) shape: patching an `events.k8s.io` field by its own name is not
//! simulated.

use super::admission::invalid;
use super::resources::ResourceType;
use super::status::Status;
use serde_json::{Map, Value};

pub const GROUP: &str = "events.k8s.io";

/// (core `v1` name, `events.k8s.io/v1` name) of the renamed fields.
const RENAMED: &[(&str, &str)] = &[
    ("involvedObject", "regarding"),
    ("message", "note"),
    ("reportingComponent", "reportingController"),
    ("source", "deprecatedSource"),
    ("firstTimestamp", "deprecatedFirstTimestamp"),
    ("lastTimestamp", "deprecatedLastTimestamp"),
    ("count", "deprecatedCount"),
];

/// Whether `rt` is `events.k8s.io` Events, kept in the core Events' storage.
pub fn is_events(rt: &ResourceType) -> bool {
    rt.group == GROUP && rt.plural == "events"
}

fn rename(object: &Value, to_events: bool, api_version: &str) -> Value {
    let Some(map) = object.as_object() else {
        return object.clone();
    };
    let mut out = Map::new();
    for (key, value) in map {
        let renamed = RENAMED
            .iter()
            .find(|(core, events)| if to_events { core } else { events } == key)
            .map(|(core, events)| if to_events { *events } else { *core });
        out.insert(renamed.unwrap_or(key).to_string(), value.clone());
    }
    out.insert("apiVersion".into(), Value::from(api_version));
    Value::Object(out)
}

/// A stored (core) Event as `events.k8s.io/v1` serves it.
pub fn to_events(object: &Value) -> Value {
    rename(object, true, "events.k8s.io/v1")
}

/// An `events.k8s.io/v1` Event in the stored (core `v1`) shape.
pub fn to_core(object: &Value) -> Value {
    rename(object, false, "v1")
}

/// `ValidateEventCreate`'s checks of an `events.k8s.io/v1` Event (see the module doc).
pub fn validate_create(rt: &ResourceType, object: &Value) -> Result<(), Status> {
    let name = object["metadata"]["name"].as_str().unwrap_or_default();
    let required = |field: &str| -> Result<(), Status> {
        if object[field].as_str().is_none_or(str::is_empty) {
            return Err(invalid(
                rt,
                name,
                field,
                "Required value",
                "FieldValueRequired",
            ));
        }
        Ok(())
    };
    for field in [
        "eventTime",
        "reportingController",
        "reportingInstance",
        "action",
        "reason",
    ] {
        required(field)?;
    }
    match object["type"].as_str() {
        Some("Normal" | "Warning") => Ok(()),
        other => Err(invalid(
            rt,
            name,
            "type",
            &format!(
                "Unsupported value: \"{}\": supported values: \"Normal\", \"Warning\"",
                other.unwrap_or_default()
            ),
            "FieldValueNotSupported",
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_two_shapes_convert_both_ways() {
        let core = json!({"apiVersion": "v1", "kind": "Event", "metadata": {"name": "p.1"},
            "involvedObject": {"kind": "Pod", "name": "p"}, "message": "Pulling image",
            "reason": "Pulling", "source": {"component": "kubelet"}, "count": 2,
            "firstTimestamp": "t1", "lastTimestamp": "t2", "reportingComponent": "kubelet",
            "reportingInstance": "n", "type": "Normal", "eventTime": null});
        let events = to_events(&core);
        assert_eq!(events["apiVersion"], "events.k8s.io/v1");
        assert_eq!(events["regarding"]["name"], "p");
        assert_eq!(events["note"], "Pulling image");
        assert_eq!(events["deprecatedCount"], 2);
        assert_eq!(events["reportingController"], "kubelet");
        assert!(events.get("message").is_none());
        assert_eq!(to_core(&events), core);
    }
}
