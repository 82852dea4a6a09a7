//! Validation rules of CustomResourceDefinitions (`x-kubernetes-validations`, CEL expressions the
//! API server evaluates on every create and update of a custom resource;
//! <https://kubernetes.io/docs/tasks/extend-kubernetes/custom-resources/custom-resource-definitions/#validation-rules>).
//!
//! The simulator has no CEL interpreter. It reads the rules of the installed CRD's schema for the
//! version the request uses, at `spec` (the only level whose rules it knows), and evaluates the
//! rules it knows **by their exact text**: Kueue's ResourceFlavor rules
//! (kubernetes-sigs/kueue `apis/kueue/v1beta1/resourceflavor_types.go` at v0.12.2, whole spec
//! immutable with a topology; `apis/kueue/v1beta2/resourceflavor_types.go` at v0.17.1, node
//! labels, tolerations and topology immutable with a topology). A rule it does not know is
//! skipped — a guess that it holds. A rule that reads `oldSelf` (a transition rule) is only
// GUESS(cel-unknown-rule-holds): a CEL validation rule the simulator does not know is taken to hold
//! evaluated on update, as the API server does.
//!
//! A broken rule answers as the API server words it: 422 `Invalid`, `<Kind>.<group> "<name>" is
//! invalid: spec: Invalid value: "object": <the rule's message>`.

use super::KubeCluster;
use super::admission::invalid;
use super::resources::ResourceType;
use super::status::Status;
use serde_json::Value;

/// `has(x.field)`: present and not null.
fn has(object: &Value, field: &str) -> bool {
    object.get(field).is_some_and(|v| !v.is_null())
}

/// `!has(self.<f>) == !has(oldSelf.<f>) && (!has(self.<f>) || self.<f> == oldSelf.<f>)`: the
/// field kept exactly as it was (absent stays absent).
fn kept(new: &Value, old: &Value, field: &str) -> bool {
    has(new, field) == has(old, field) && (!has(new, field) || new[field] == old[field])
}

type Rule = fn(&Value, Option<&Value>) -> bool;

/// The rules the simulator evaluates, by their text: `(rule, evaluation of (self, oldSelf))`.
/// Transition rules hold without an `oldSelf` (they are not evaluated on create).
const KNOWN: &[(&str, Rule)] = &[
    (
        "!has(self.topologyName) || self.nodeLabels.size() >= 1",
        |new, _| {
            !has(new, "topologyName")
                || new["nodeLabels"].as_object().is_some_and(|m| !m.is_empty())
        },
    ),
    (
        "!has(oldSelf.topologyName) || self == oldSelf",
        |new, old| old.is_none_or(|old| !has(old, "topologyName") || new == old),
    ),
    (
        "!has(oldSelf.topologyName) || (has(self.nodeLabels) == has(oldSelf.nodeLabels) && (!has(self.nodeLabels) || self.nodeLabels == oldSelf.nodeLabels))",
        |new, old| old.is_none_or(|old| !has(old, "topologyName") || kept(new, old, "nodeLabels")),
    ),
    (
        "!has(oldSelf.topologyName) || (has(self.tolerations) == has(oldSelf.tolerations) && (!has(self.tolerations) || self.tolerations == oldSelf.tolerations))",
        |new, old| old.is_none_or(|old| !has(old, "topologyName") || kept(new, old, "tolerations")),
    ),
    (
        "!has(oldSelf.topologyName) || (has(self.topologyName) && self.topologyName == oldSelf.topologyName)",
        |new, old| {
            old.is_none_or(|old| {
                !has(old, "topologyName")
                    || (has(new, "topologyName") && new["topologyName"] == old["topologyName"])
            })
        },
    ),
];

/// The `spec` rules of the CRD serving `rt` at `rt.version`, if it is a custom resource.
fn spec_rules(cluster: &KubeCluster, rt: &ResourceType) -> Vec<Value> {
    if !rt.custom {
        return vec![];
    }
    let Some(crd) = cluster.store.get(
        "apiextensions.k8s.io",
        "customresourcedefinitions",
        "",
        &rt.qualified(),
    ) else {
        return vec![];
    };
    crd["spec"]["versions"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|v| v["name"] == rt.version.as_str())
        .and_then(|v| v.pointer("/schema/openAPIV3Schema/properties/spec/x-kubernetes-validations"))
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default()
}

/// Checks `object` (and, on update, its `old` self) against the CRD's `spec` rules it knows.
pub fn check(
    cluster: &KubeCluster,
    rt: &ResourceType,
    object: &Value,
    old: Option<&Value>,
) -> Result<(), Status> {
    let Some(spec) = object.get("spec") else {
        return Ok(());
    };
    let old_spec = old.and_then(|o| o.get("spec"));
    for rule in spec_rules(cluster, rt) {
        let text = rule["rule"].as_str().unwrap_or_default();
        let Some((_, holds)) = KNOWN.iter().find(|(known, _)| *known == text) else {
            continue;
        };
        if text.contains("oldSelf") && old_spec.is_none() {
            continue;
        }
        if !holds(spec, old_spec) {
            let name = object["metadata"]["name"].as_str().unwrap_or_default();
            let message = rule["message"]
                .as_str()
                .map(str::to_string)
                .unwrap_or_else(|| format!("failed rule: {text}"));
            return Err(invalid(
                rt,
                name,
                "spec",
                &format!("Invalid value: \"object\": {message}"),
                "FieldValueInvalid",
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn rule(text: &str) -> Rule {
        KNOWN.iter().find(|(t, _)| *t == text).unwrap().1
    }

    #[test]
    fn kueue_flavor_rules_hold_only_while_a_topology_flavor_keeps_its_selection() {
        let tas = json!({"nodeLabels": {"a3ctl.dev/pool": "a3"}, "topologyName": "gke-default"});
        let moved = json!({"nodeLabels": {"cloud.google.com/gke-nodepool": "a3"}, "topologyName": "gke-default"});
        let labels = rule(KNOWN[2].0);
        assert!(labels(&moved, None), "not evaluated on create");
        assert!(labels(&tas, Some(&tas)));
        assert!(!labels(&moved, Some(&tas)));
        // Without a topology, the labels may change.
        let plain = json!({"nodeLabels": {"a": "b"}});
        assert!(labels(&json!({"nodeLabels": {"a": "c"}}), Some(&plain)));
        // The whole spec (v0.12 line).
        let whole = rule(KNOWN[1].0);
        assert!(!whole(&moved, Some(&tas)));
        assert!(whole(&tas, Some(&tas)));
        // A topology needs a node label.
        let needs = rule(KNOWN[0].0);
        assert!(!needs(&json!({"topologyName": "t"}), None));
        assert!(needs(&tas, None));
        // Topology kept.
        let topology = rule(KNOWN[4].0);
        assert!(!topology(&json!({"nodeLabels": {"a": "b"}}), Some(&tas)));
    }
}
