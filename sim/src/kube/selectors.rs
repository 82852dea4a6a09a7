//! Selectors: `labelSelector` and `fieldSelector` query strings, `LabelSelector` objects
//! (matchLabels / matchExpressions), and the scheduling predicates that decide which nodes a pod
//! template can run on (nodeSelector, required node affinity, tolerations against taints).

use super::status::Status;
use serde_json::Value;
use std::collections::BTreeMap;

/// One requirement of a label selector string.
#[derive(Debug, Clone, PartialEq)]
enum Requirement {
    Equals(String, String),
    NotEquals(String, String),
    In(String, Vec<String>),
    NotIn(String, Vec<String>),
    Exists(String),
    DoesNotExist(String),
}

/// A parsed `labelSelector` (`a=b,c!=d,e in (x,y),f notin (z),g,!h`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LabelSelector(Vec<Requirement>);

/// Splits on commas that are not inside parentheses.
fn split_top_level(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut depth = 0;
    let mut current = String::new();
    for c in s.chars() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                out.push(std::mem::take(&mut current));
                continue;
            }
            _ => {}
        }
        current.push(c);
    }
    out.push(current);
    out.into_iter()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .collect()
}

fn set_values(s: &str) -> Option<Vec<String>> {
    let inner = s.trim().strip_prefix('(')?.strip_suffix(')')?;
    Some(
        inner
            .split(',')
            .map(|v| v.trim().to_string())
            .filter(|v| !v.is_empty())
            .collect(),
    )
}

impl LabelSelector {
    pub fn parse(raw: &str) -> Result<LabelSelector, Status> {
        let bad = || {
            Status::failure(
                400,
                "BadRequest",
                format!("unable to parse requirement: found '{raw}', expected: identifier"),
            )
        };
        let mut reqs = Vec::new();
        for part in split_top_level(raw) {
            if let Some(key) = part.strip_prefix('!') {
                reqs.push(Requirement::DoesNotExist(key.trim().into()));
            } else if let Some((k, v)) = part.split_once("!=") {
                reqs.push(Requirement::NotEquals(k.trim().into(), v.trim().into()));
            } else if let Some((k, v)) = part.split_once("==") {
                reqs.push(Requirement::Equals(k.trim().into(), v.trim().into()));
            } else if let Some((k, v)) = part.split_once('=') {
                reqs.push(Requirement::Equals(k.trim().into(), v.trim().into()));
            } else if let Some((k, v)) = part.split_once(" notin ") {
                reqs.push(Requirement::NotIn(
                    k.trim().into(),
                    set_values(v).ok_or_else(bad)?,
                ));
            } else if let Some((k, v)) = part.split_once(" in ") {
                reqs.push(Requirement::In(
                    k.trim().into(),
                    set_values(v).ok_or_else(bad)?,
                ));
            } else if part.contains(char::is_whitespace) {
                return Err(bad());
            } else {
                reqs.push(Requirement::Exists(part));
            }
        }
        Ok(LabelSelector(reqs))
    }

    pub fn matches(&self, labels: &Value) -> bool {
        let get = |k: &str| labels.get(k).and_then(Value::as_str);
        self.0.iter().all(|r| match r {
            Requirement::Equals(k, v) => get(k) == Some(v.as_str()),
            Requirement::NotEquals(k, v) => get(k) != Some(v.as_str()),
            Requirement::In(k, vs) => get(k).is_some_and(|x| vs.iter().any(|v| v == x)),
            Requirement::NotIn(k, vs) => get(k).is_none_or(|x| !vs.iter().any(|v| v == x)),
            Requirement::Exists(k) => get(k).is_some(),
            Requirement::DoesNotExist(k) => get(k).is_none(),
        })
    }
}

/// A parsed `fieldSelector` (`metadata.name=x,spec.nodeName!=y`), matched against the object's
/// fields by dotted path.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FieldSelector(Vec<(String, bool, String)>);

impl FieldSelector {
    pub fn parse(raw: &str) -> Result<FieldSelector, Status> {
        let mut out = Vec::new();
        for part in raw.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (path, equal, value) = if let Some((k, v)) = part.split_once("!=") {
                (k, false, v)
            } else if let Some((k, v)) = part.split_once("==") {
                (k, true, v)
            } else if let Some((k, v)) = part.split_once('=') {
                (k, true, v)
            } else {
                return Err(Status::failure(
                    400,
                    "BadRequest",
                    format!("invalid selector: '{raw}'; can't understand '{part}'"),
                ));
            };
            out.push((path.trim().to_string(), equal, value.trim().to_string()));
        }
        Ok(FieldSelector(out))
    }

    pub fn matches(&self, object: &Value) -> bool {
        self.0.iter().all(|(path, equal, value)| {
            let mut current = object;
            for part in path.split('.') {
                current = &current[part];
            }
            let actual = match current {
                Value::String(s) => s.clone(),
                Value::Null => String::new(),
                other => other.to_string(),
            };
            (actual == *value) == *equal
        })
    }

    /// The name selected by `metadata.name=X`, if that is part of the selector.
    pub fn name(&self) -> Option<&str> {
        self.0
            .iter()
            .find(|(p, eq, _)| p == "metadata.name" && *eq)
            .map(|(_, _, v)| v.as_str())
    }
}

fn expression_matches(expr: &Value, get: &dyn Fn(&str) -> Option<String>) -> bool {
    let key = expr["key"].as_str().unwrap_or_default();
    let values: Vec<&str> = expr["values"]
        .as_array()
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let actual = get(key);
    match expr["operator"].as_str().unwrap_or_default() {
        "In" => actual.is_some_and(|a| values.contains(&a.as_str())),
        "NotIn" => actual.is_none_or(|a| !values.contains(&a.as_str())),
        "Exists" => actual.is_some(),
        "DoesNotExist" => actual.is_none(),
        "Gt" | "Lt" => {
            let (Some(a), Some(v)) = (
                actual.and_then(|a| a.parse::<i64>().ok()),
                values.first().and_then(|v| v.parse::<i64>().ok()),
            ) else {
                return false;
            };
            if expr["operator"] == "Gt" {
                a > v
            } else {
                a < v
            }
        }
        _ => false,
    }
}

/// Whether a `LabelSelector` object (matchLabels + matchExpressions) selects `labels`. An absent
/// selector selects everything.
pub fn label_selector_matches(selector: &Value, labels: &Value) -> bool {
    if selector.is_null() {
        return true;
    }
    let get = |k: &str| labels.get(k).and_then(Value::as_str).map(String::from);
    let match_labels_ok = selector["matchLabels"]
        .as_object()
        .is_none_or(|m| m.iter().all(|(k, v)| get(k).as_deref() == v.as_str()));
    let expressions_ok = selector["matchExpressions"]
        .as_array()
        .is_none_or(|exprs| exprs.iter().all(|e| expression_matches(e, &get)));
    match_labels_ok && expressions_ok
}

/// A Service-style selector (plain map) against labels; an empty selector selects nothing.
pub fn map_selector_matches(selector: &Value, labels: &Value) -> bool {
    let Some(map) = selector.as_object().filter(|m| !m.is_empty()) else {
        return false;
    };
    map.iter()
        .all(|(k, v)| labels.get(k).and_then(Value::as_str) == v.as_str())
}

/// Whether one toleration tolerates one taint.
fn tolerates(toleration: &Value, taint: &Value) -> bool {
    let effect = toleration["effect"].as_str().unwrap_or_default();
    if !effect.is_empty() && Some(effect) != taint["effect"].as_str() {
        return false;
    }
    let key = toleration["key"].as_str().unwrap_or_default();
    let operator = toleration["operator"].as_str().unwrap_or("Equal");
    if key.is_empty() {
        return operator == "Exists";
    }
    if Some(key) != taint["key"].as_str() {
        return false;
    }
    match operator {
        "Exists" => true,
        _ => {
            toleration["value"].as_str().unwrap_or_default()
                == taint["value"].as_str().unwrap_or_default()
        }
    }
}

/// Whether a pod spec with `tolerations` (plus `extra` ones a controller adds) tolerates every
/// NoSchedule/NoExecute taint of `node`.
pub fn tolerates_node(pod_spec: &Value, extra: &[Value], node: &Value) -> bool {
    let tolerations: Vec<&Value> = pod_spec["tolerations"]
        .as_array()
        .map(|a| a.iter().collect())
        .unwrap_or_default();
    node.pointer("/spec/taints")
        .and_then(Value::as_array)
        .is_none_or(|taints| {
            taints
                .iter()
                .filter(|t| t["effect"] != "PreferNoSchedule")
                .all(|taint| {
                    tolerations.iter().any(|t| tolerates(t, taint))
                        || extra.iter().any(|t| tolerates(t, taint))
                })
        })
}

/// The first NoSchedule/NoExecute taint of `node` that the pod spec's tolerations do not
/// tolerate, if any (what the scheduler's TaintToleration filter reports).
pub fn untolerated_taint<'a>(pod_spec: &Value, node: &'a Value) -> Option<&'a Value> {
    let tolerations: Vec<&Value> = pod_spec["tolerations"]
        .as_array()
        .map(|a| a.iter().collect())
        .unwrap_or_default();
    node.pointer("/spec/taints")
        .and_then(Value::as_array)?
        .iter()
        .filter(|t| t["effect"] != "PreferNoSchedule")
        .find(|taint| !tolerations.iter().any(|t| tolerates(t, taint)))
}

/// Whether `node` satisfies the pod spec's nodeSelector and required node affinity.
pub fn node_selected(pod_spec: &Value, node: &Value) -> bool {
    let labels = &node["metadata"]["labels"];
    let get = |k: &str| labels.get(k).and_then(Value::as_str).map(String::from);
    let selector_ok = pod_spec["nodeSelector"]
        .as_object()
        .is_none_or(|m| m.iter().all(|(k, v)| get(k).as_deref() == v.as_str()));
    if !selector_ok {
        return false;
    }
    let terms = pod_spec.pointer(
        "/affinity/nodeAffinity/requiredDuringSchedulingIgnoredDuringExecution/nodeSelectorTerms",
    );
    let Some(terms) = terms.and_then(Value::as_array) else {
        return true;
    };
    let name = node["metadata"]["name"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let field = |k: &str| (k == "metadata.name").then(|| name.clone());
    terms.iter().any(|term| {
        let exprs_ok = term["matchExpressions"]
            .as_array()
            .is_none_or(|e| e.iter().all(|x| expression_matches(x, &get)));
        let fields_ok = term["matchFields"]
            .as_array()
            .is_none_or(|e| e.iter().all(|x| expression_matches(x, &field)));
        let empty = term["matchExpressions"]
            .as_array()
            .is_none_or(Vec::is_empty)
            && term["matchFields"].as_array().is_none_or(Vec::is_empty);
        exprs_ok && fields_ok && !empty
    })
}

/// Labels of an object as a plain map (for tests and messages).
pub fn labels_of(object: &Value) -> BTreeMap<String, String> {
    object["metadata"]["labels"]
        .as_object()
        .map(|m| {
            m.iter()
                .filter_map(|(k, v)| v.as_str().map(|v| (k.clone(), v.to_string())))
                .collect()
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn label_selector_strings() {
        let labels = json!({"app": "web", "tier": "front"});
        let ok = |s: &str| LabelSelector::parse(s).unwrap().matches(&labels);
        assert!(ok("app=web"));
        assert!(ok("app==web,tier"));
        assert!(!ok("app!=web"));
        assert!(ok("tier in (front, back)"));
        assert!(!ok("tier notin (front)"));
        assert!(ok("!missing"));
        assert!(!ok("missing"));
    }

    #[test]
    fn affinity_and_taints() {
        let node = json!({"metadata": {"name": "n1", "labels": {"cloud.google.com/gke-accelerator": "nvidia-h100-80gb", "rank": "5"}},
            "spec": {"taints": [{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}]}});
        let spec = json!({"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": "cloud.google.com/gke-accelerator", "operator": "Exists"},
                                  {"key": "cloud.google.com/gke-gpu-driver-version", "operator": "DoesNotExist"},
                                  {"key": "rank", "operator": "Gt", "values": ["3"]}]}]}}},
            "tolerations": [{"operator": "Exists"}]});
        assert!(node_selected(&spec, &node));
        assert!(tolerates_node(&spec, &[], &node));
        let plain = json!({});
        assert!(!tolerates_node(&plain, &[], &node));
        let keyed = json!({"tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]});
        assert!(tolerates_node(&keyed, &[], &node));
    }
}
