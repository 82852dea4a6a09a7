//! Projection of a live object onto the shape of the desired one, so that server-side defaults,
//! metadata the server adds and `status` never show as drift while a changed or removed managed
//! field does.
//!
//! Rules: for a mapping keep exactly the keys the desired mapping has (recursively), leaving out
//! the keys the live object lacks (a removed field shows as removed); a list is projected element
//! by element onto the desired list's elements at the same index (so defaults inside containers
//! do not show), with extra live elements kept whole; scalars are the live value. A desired `null`
//! or empty mapping/list that the server dropped stays as desired (nothing to manage there).

use serde_json::{Map, Value};

/// The live value, restricted to the paths present in `desired`.
pub fn project(desired: &Value, live: &Value) -> Value {
    match (desired, live) {
        (Value::Object(want), Value::Object(have)) => {
            let mut out = Map::new();
            for (key, want_value) in want {
                if want_value.is_null() {
                    // `creationTimestamp: null` in manifests: nothing is managed there.
                    out.insert(key.clone(), Value::Null);
                    continue;
                }
                match have.get(key) {
                    Some(have_value) if !have_value.is_null() => {
                        out.insert(key.clone(), project(want_value, have_value));
                    }
                    _ if is_empty(want_value) => {
                        out.insert(key.clone(), want_value.clone());
                    }
                    _ => {}
                }
            }
            Value::Object(out)
        }
        (Value::Array(want), Value::Array(have)) => Value::Array(
            have.iter()
                .enumerate()
                .map(|(i, h)| match want.get(i) {
                    Some(w) => project(w, h),
                    None => h.clone(),
                })
                .collect(),
        ),
        _ => live.clone(),
    }
}

fn is_empty(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::Object(m) => m.is_empty(),
        Value::Array(a) => a.is_empty(),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn defaults_and_status_are_dropped_changes_and_removals_kept() {
        let desired = json!({"metadata": {"name": "a", "labels": {"x": "1"}, "creationTimestamp": null},
            "spec": {"containers": [{"name": "c", "image": "i:1"}], "volumes": []}});
        let live = json!({"metadata": {"name": "a", "labels": {"x": "1", "extra": "y"}, "uid": "u",
            "creationTimestamp": "2025-01-01T00:00:00Z"},
            "spec": {"containers": [{"name": "c", "image": "i:1", "imagePullPolicy": "IfNotPresent"}]},
            "status": {"phase": "Running"}});
        let mut expect = desired.clone();
        expect["metadata"]["labels"] = json!({"x": "1"});
        assert_eq!(project(&desired, &live), expect);

        let changed = json!({"metadata": {"name": "a"}, "spec": {"containers": [{"name": "c", "image": "i:2"},
            {"name": "d"}]}});
        let p = project(&desired, &changed);
        assert_eq!(p["spec"]["containers"][0]["image"], "i:2");
        assert_eq!(p["spec"]["containers"][1], json!({"name": "d"}));
        assert!(p["metadata"].get("labels").is_none());
    }
}
