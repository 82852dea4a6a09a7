//! Non-apply patches: RFC 7386 JSON merge patch and RFC 6902 JSON patch (strategic merge patches
//! use the associative-list merge of [`super::fields::merge`]).

use super::status::Status;
use serde_json::{Value, json};

/// RFC 7386 JSON merge patch.
pub fn merge_patch(target: &mut Value, patch: &Value) {
    match (target.as_object_mut(), patch.as_object()) {
        (Some(t), Some(p)) => {
            for (k, v) in p {
                if v.is_null() {
                    t.remove(k);
                } else {
                    merge_patch(t.entry(k.clone()).or_insert(Value::Null), v);
                }
            }
        }
        (_, Some(p)) => {
            *target = json!({});
            merge_patch(target, &Value::Object(p.clone()));
        }
        _ => *target = patch.clone(),
    }
}

fn pointer_parts(path: &str) -> Vec<String> {
    path.split('/')
        .skip(1)
        .map(|p| p.replace("~1", "/").replace("~0", "~"))
        .collect()
}

/// RFC 6902 JSON patch (add, remove, replace, test).
pub fn json_patch(target: &mut Value, ops: &Value) -> Result<(), Status> {
    let fail = |m: String| Status::failure(422, "Invalid", m);
    for op in ops.as_array().into_iter().flatten() {
        let path = op["path"].as_str().unwrap_or_default();
        let parts = pointer_parts(path);
        let Some((last, parents)) = parts.split_last() else {
            *target = op["value"].clone();
            continue;
        };
        let parent_pointer: String = parents
            .iter()
            .map(|p| format!("/{}", p.replace('~', "~0").replace('/', "~1")))
            .collect();
        let kind = op["op"].as_str().unwrap_or_default();
        if kind == "test" {
            if target.pointer(path) != Some(&op["value"]) {
                return Err(fail(format!("testing value {path} failed")));
            }
            continue;
        }
        let parent = target
            .pointer_mut(&parent_pointer)
            .ok_or_else(|| fail(format!("doc is missing path: \"{path}\": missing value")))?;
        match (kind, parent) {
            ("add" | "replace", Value::Object(map)) => {
                if kind == "replace" && !map.contains_key(last) {
                    return Err(fail(format!("doc is missing key: {path}: missing value")));
                }
                map.insert(last.clone(), op["value"].clone());
            }
            ("add", Value::Array(items)) => {
                let index = if last == "-" {
                    items.len()
                } else {
                    last.parse().unwrap_or(usize::MAX)
                };
                if index > items.len() {
                    return Err(fail(format!(
                        "add operation does not apply: doc is missing path: \"{path}\": missing value"
                    )));
                }
                items.insert(index, op["value"].clone());
            }
            ("replace", Value::Array(items)) => {
                match last.parse::<usize>().ok().and_then(|i| items.get_mut(i)) {
                    Some(slot) => *slot = op["value"].clone(),
                    None => {
                        return Err(fail(format!(
                            "doc is missing path: \"{path}\": missing value"
                        )));
                    }
                }
            }
            ("remove", Value::Object(map)) => {
                if map.remove(last).is_none() {
                    return Err(fail(format!("doc is missing key: {path}: missing value")));
                }
            }
            ("remove", Value::Array(items)) => match last.parse::<usize>() {
                Ok(i) if i < items.len() => {
                    items.remove(i);
                }
                _ => {
                    return Err(fail(format!(
                        "doc is missing path: \"{path}\": missing value"
                    )));
                }
            },
            _ => return Err(fail(format!("unexpected kind of operation: {kind}"))),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merge_and_json_patches() {
        let mut doc = json!({"a": {"b": 1, "c": 2}, "l": [1, 2]});
        merge_patch(&mut doc, &json!({"a": {"b": null, "d": 3}, "l": [3]}));
        assert_eq!(doc, json!({"a": {"c": 2, "d": 3}, "l": [3]}));
        json_patch(&mut doc, &json!([{"op": "add", "path": "/l/-", "value": 4}, {"op": "remove", "path": "/a/c"}, {"op": "replace", "path": "/a/d", "value": 5}])).unwrap();
        assert_eq!(doc, json!({"a": {"d": 5}, "l": [3, 4]}));
        assert!(json_patch(&mut doc, &json!([{"op": "remove", "path": "/zz"}])).is_err());
    }
}
