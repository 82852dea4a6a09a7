//! Enum encoding for the proto-based Google APIs (GKE, Filestore, Artifact Registry).
//!
//! gcloud sends and expects enum names (`"RUNNING"`); the google-cloud-rust clients send
//! `$alt=json;enum-encoding=int` and put proto numbers in request bodies (`{"tier":3}`). The
//! simulator stores every resource with enum *names*: [`normalize`] turns numbers in a request
//! into names (rejecting unknown names as the real API does), and [`encode_ints`] turns names back
//! into numbers when the caller asked for integer encoding.
//!
//! A table lists, per resource shape, the JSON paths that hold enums and their `(number, name)`
//! pairs. Path syntax: field names joined by `.`, with `[]` after a field that is a list
//! (`nodePools[].config.accelerators[].gpuDriverInstallationConfig.gpuDriverVersion`) and `{}`
//! after a field that is a map, for each of its values
//! (`maintenancePolicy.window.maintenanceExclusions{}.maintenanceExclusionOptions.scope`); a path
//! ending in `[]` is a list of enum values. Compute and Cloud Storage are discovery APIs whose enums
//! are always strings and need no table.

use crate::error::GcpError;
use serde_json::Value;

/// One enum-valued field.
#[derive(Debug, Clone, Copy)]
pub struct EnumField {
    pub path: &'static str,
    pub values: &'static [(i64, &'static str)],
}

/// All enum fields of one message shape.
pub type EnumTable = &'static [EnumField];

/// Replaces enum numbers by names in `value` and checks names; `prefix` is the proto path of
/// `value` in the request (e.g. `cluster`) used in error messages.
pub fn normalize(value: &mut Value, table: EnumTable, prefix: &str) -> Result<(), GcpError> {
    for field in table {
        let segments: Vec<&str> = field.path.split('.').collect();
        walk(value, &segments, prefix.to_string(), &mut |slot, at| {
            match slot {
                Value::Number(n) => {
                    let Some(num) = n.as_i64() else {
                        return Err(invalid_enum(at, &slot.to_string()));
                    };
                    // Unknown numbers are kept: proto3 preserves unrecognised enum values.
                    if let Some((_, name)) = field.values.iter().find(|(v, _)| *v == num) {
                        *slot = Value::String(name.to_string());
                    }
                }
                Value::String(s) => {
                    if !field.values.iter().any(|(_, name)| name == s) {
                        return Err(invalid_enum(at, s));
                    }
                }
                Value::Null => {}
                other => return Err(invalid_enum(at, &other.to_string())),
            }
            Ok(())
        })?;
    }
    Ok(())
}

/// Replaces enum names by numbers in `value` (for `enum-encoding=int` responses).
pub fn encode_ints(value: &mut Value, table: EnumTable) {
    for field in table {
        let segments: Vec<&str> = field.path.split('.').collect();
        let _ = walk(value, &segments, String::new(), &mut |slot, _| {
            if let Value::String(s) = slot
                && let Some((num, _)) = field.values.iter().find(|(_, name)| name == s)
            {
                *slot = Value::from(*num);
            }
            Ok(())
        });
    }
}

fn invalid_enum(at: &str, got: &str) -> GcpError {
    GcpError::invalid_reason(
        "badRequest",
        format!("Invalid value at '{at}' (TYPE_ENUM), {got}"),
    )
}

/// camelCase → snake_case, as the proto path in Google's messages.
fn snake(name: &str) -> String {
    let mut out = String::with_capacity(name.len() + 4);
    for c in name.chars() {
        if c.is_ascii_uppercase() {
            out.push('_');
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

fn walk(
    value: &mut Value,
    segments: &[&str],
    at: String,
    f: &mut dyn FnMut(&mut Value, &str) -> Result<(), GcpError>,
) -> Result<(), GcpError> {
    let Some((head, rest)) = segments.split_first() else {
        return f(value, &at);
    };
    let (name, is_list) = match head.strip_suffix("[]") {
        Some(n) => (n, true),
        None => (*head, false),
    };
    if let Some(name) = name.strip_suffix("{}") {
        let Some(Value::Object(entries)) = value.as_object_mut().and_then(|o| o.get_mut(name))
        else {
            return Ok(());
        };
        let here = if at.is_empty() {
            snake(name)
        } else {
            format!("{at}.{}", snake(name))
        };
        for (key, entry) in entries.iter_mut() {
            walk(entry, rest, format!("{here}[{key:?}]"), f)?;
        }
        return Ok(());
    }
    let Some(child) = value.as_object_mut().and_then(|o| o.get_mut(name)) else {
        return Ok(());
    };
    let here = if at.is_empty() {
        snake(name)
    } else {
        format!("{at}.{}", snake(name))
    };
    if is_list {
        if let Value::Array(items) = child {
            for (i, item) in items.iter_mut().enumerate() {
                walk(item, rest, format!("{here}[{i}]"), f)?;
            }
        }
        Ok(())
    } else {
        walk(child, rest, here, f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const TABLE: EnumTable = &[
        EnumField {
            path: "status",
            values: &[
                (0, "STATUS_UNSPECIFIED"),
                (1, "PROVISIONING"),
                (2, "RUNNING"),
            ],
        },
        EnumField {
            path: "pools[].tiers[]",
            values: &[(0, "TIER_UNSPECIFIED"), (3, "BASIC_HDD")],
        },
    ];

    #[test]
    fn numbers_become_names_and_back() {
        let mut v = json!({"status": 2, "pools": [{"tiers": [3, "BASIC_HDD"]}]});
        normalize(&mut v, TABLE, "cluster").unwrap();
        assert_eq!(
            v,
            json!({"status": "RUNNING", "pools": [{"tiers": ["BASIC_HDD", "BASIC_HDD"]}]})
        );
        encode_ints(&mut v, TABLE);
        assert_eq!(v, json!({"status": 2, "pools": [{"tiers": [3, 3]}]}));
    }

    #[test]
    fn enums_in_the_values_of_a_map_are_reached() {
        const MAP: EnumTable = &[EnumField {
            path: "window.exclusions{}.options.scope",
            values: &[(0, "SCOPE_UNSPECIFIED"), (2, "NO_MINOR_UPGRADES")],
        }];
        let mut v = json!({"window": {"exclusions": {"a": {"options": {"scope": 2}}, "b": {}}}});
        normalize(&mut v, MAP, "cluster").unwrap();
        assert_eq!(
            v["window"]["exclusions"]["a"]["options"]["scope"],
            "NO_MINOR_UPGRADES"
        );
        encode_ints(&mut v, MAP);
        assert_eq!(v["window"]["exclusions"]["a"]["options"]["scope"], 2);
        let mut bad = json!({"window": {"exclusions": {"a": {"options": {"scope": "SOON"}}}}});
        assert_eq!(
            normalize(&mut bad, MAP, "cluster").unwrap_err().message,
            "Invalid value at 'cluster.window.exclusions[\"a\"].options.scope' (TYPE_ENUM), SOON"
        );
    }

    #[test]
    fn unknown_names_are_rejected_with_the_proto_path() {
        let mut v = json!({"pools": [{"tiers": ["FAST"]}]});
        let err = normalize(&mut v, TABLE, "cluster").unwrap_err();
        assert_eq!(err.code, 400);
        assert_eq!(
            err.message,
            "Invalid value at 'cluster.pools[0].tiers[0]' (TYPE_ENUM), FAST"
        );
    }
}
