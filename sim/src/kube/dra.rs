//! Dynamic Resource Allocation's API group `resource.k8s.io`: which of its versions a cluster
//! serves, the four kinds the simulator models (DeviceClass, ResourceClaim,
//! ResourceClaimTemplate, ResourceSlice), the conversion between their versions, and their
//! defaults and validation. GKE's own DRA objects (the `mrdma.google.com` DeviceClass and the
//! nodes' ResourceSlices) are made by [`super::controllers::dranet`].
//!
//! Versions by Kubernetes minor (kubernetes/kubernetes CHANGELOG-1.32, -1.33, -1.34; KEP-4381
//! "DRA: structured parameters", its graduation table):
//! - 1.32 adds `v1beta1` (beta, so off unless enabled);
//! - 1.33 adds `v1beta2` (beta, off unless enabled), `v1beta1` stays;
//! - 1.34 graduates the API to `v1`, served by default; both betas stay, off unless enabled.
//!
//! The alpha versions (`v1alpha3` of 1.31 to 1.33) need an alpha cluster on GKE and are not
//! modelled. A beta version is served only when the cluster's `enableK8sBetaApis.enabledApis`
//! lists it, resource by resource (`resource.k8s.io/v1beta1/deviceclasses`), as GKE's
//! "Use Kubernetes beta APIs with GKE clusters" page describes for beta APIs introduced after
//! 1.24; GKE's "Prepare GKE infrastructure for DRA workloads" page asks for exactly those four
//! resources (cluster-toolkit `examples/gke-a4x/gke-a4x.yaml` enables them as well).
//!
//! Objects are stored at the version they were written in; reading them at another version
//! converts them ([`convert`]). What differs between the versions, for the fields modelled:
//! in `v1beta1` a device request carries `deviceClassName`, `selectors`, `allocationMode`,
//! `count` and `adminAccess` itself, while `v1beta2` and `v1` move them under
//! `exactly`; a `v1beta1` ResourceSlice device wraps `attributes` and `capacity` in `basic`.

use super::resources::ResourceType;
use super::status::Status;
use serde_json::{Value, json};

pub const GROUP: &str = "resource.k8s.io";

/// `(plural, singular, kind, namespaced, status subresource)`.
pub const KINDS: &[(&str, &str, &str, bool, bool)] = &[
    ("deviceclasses", "deviceclass", "DeviceClass", false, false),
    (
        "resourceclaims",
        "resourceclaim",
        "ResourceClaim",
        true,
        true,
    ),
    (
        "resourceclaimtemplates",
        "resourceclaimtemplate",
        "ResourceClaimTemplate",
        true,
        false,
    ),
    (
        "resourceslices",
        "resourceslice",
        "ResourceSlice",
        false,
        false,
    ),
];

/// The Kubernetes minor of a GKE version (`1.34.1-gke.1829001` → 34).
pub fn minor_of(version: &str) -> u32 {
    version
        .split('.')
        .nth(1)
        .and_then(|m| m.parse().ok())
        .unwrap_or(0)
}

/// The beta versions of `resource.k8s.io` a minor has (served only when enabled).
pub fn beta_versions(minor: u32) -> &'static [&'static str] {
    match minor {
        0..=31 => &[],
        32 => &["v1beta1"],
        _ => &["v1beta1", "v1beta2"],
    }
}

/// The beta APIs of `resource.k8s.io` a cluster of `minor` may enable, as GKE names them
/// (`resource.k8s.io/v1beta1/deviceclasses`).
pub fn beta_apis(minor: u32) -> Vec<String> {
    beta_versions(minor)
        .iter()
        .flat_map(|v| KINDS.iter().map(move |k| format!("{GROUP}/{v}/{}", k.0)))
        .collect()
}

fn resource_type(version: &str, kind: &(&str, &str, &str, bool, bool)) -> ResourceType {
    let (plural, singular, name, namespaced, status) = *kind;
    ResourceType {
        group: GROUP.into(),
        version: version.into(),
        plural: plural.into(),
        singular: singular.into(),
        kind: name.into(),
        namespaced,
        short_names: vec![],
        categories: vec![],
        status,
        generation: true,
        custom: false,
        printer_columns: vec![],
    }
}

/// The `resource.k8s.io` resource types a cluster at GKE version `version` serves, given the
/// beta APIs it enabled: `v1` from 1.34, each beta resource only when enabled.
pub fn served(version: &str, enabled: &[String]) -> Vec<ResourceType> {
    let minor = minor_of(version);
    let mut out = vec![];
    if minor >= 34 {
        out.extend(KINDS.iter().map(|k| resource_type("v1", k)));
    }
    for beta in beta_versions(minor) {
        for kind in KINDS {
            let api = format!("{GROUP}/{beta}/{}", kind.0);
            if enabled.contains(&api) {
                out.push(resource_type(beta, kind));
            }
        }
    }
    out
}

/// The version part of an object's `apiVersion`.
fn version_of(object: &Value) -> &str {
    object["apiVersion"]
        .as_str()
        .and_then(|v| v.split_once('/'))
        .map(|(_, v)| v)
        .unwrap_or("v1")
}

/// The `requests` lists of a claim or claim template, wherever the kind keeps them.
fn requests_mut<'a>(kind: &str, object: &'a mut Value) -> Option<&'a mut Vec<Value>> {
    let pointer = match kind {
        "ResourceClaim" => "/spec/devices/requests",
        "ResourceClaimTemplate" => "/spec/spec/devices/requests",
        _ => return None,
    };
    object.pointer_mut(pointer).and_then(Value::as_array_mut)
}

/// The fields a `v1beta1` request carries itself and later versions under `exactly`.
const EXACT_FIELDS: &[&str] = &[
    "deviceClassName",
    "selectors",
    "allocationMode",
    "count",
    "adminAccess",
    "tolerations",
];

/// `object` (of `kind`, stored at its own `apiVersion`) as served at `to`.
pub fn convert(kind: &str, object: &Value, to: &str) -> Value {
    let from = version_of(object);
    let mut out = object.clone();
    let flat = |v: &str| v == "v1beta1";
    if flat(from) == flat(to) {
        return out;
    }
    if let Some(requests) = requests_mut(kind, &mut out) {
        for request in requests.iter_mut() {
            let Some(map) = request.as_object_mut() else {
                continue;
            };
            if flat(to) {
                if let Some(Value::Object(exactly)) = map.remove("exactly") {
                    map.extend(exactly);
                }
            } else {
                let mut exactly = serde_json::Map::new();
                for field in EXACT_FIELDS {
                    if let Some(v) = map.remove(*field) {
                        exactly.insert((*field).into(), v);
                    }
                }
                if !exactly.is_empty() {
                    map.insert("exactly".into(), Value::Object(exactly));
                }
            }
        }
    }
    if kind == "ResourceSlice"
        && let Some(devices) = out
            .pointer_mut("/spec/devices")
            .and_then(Value::as_array_mut)
    {
        for device in devices.iter_mut() {
            let Some(map) = device.as_object_mut() else {
                continue;
            };
            if flat(to) {
                let mut basic = serde_json::Map::new();
                for field in ["attributes", "capacity"] {
                    if let Some(v) = map.remove(field) {
                        basic.insert(field.into(), v);
                    }
                }
                map.insert("basic".into(), Value::Object(basic));
            } else if let Some(Value::Object(basic)) = map.remove("basic") {
                map.extend(basic);
            }
        }
    }
    out
}

/// The API server's defaults for a claim or claim template: `allocationMode: ExactCount` and,
/// with it, `count: 1` (`pkg/apis/resource/v1/defaults.go`).
pub fn defaults(rt: &ResourceType, object: &mut Value) {
    let kind = rt.kind.as_str();
    let Some(requests) = requests_mut(kind, object) else {
        return;
    };
    for request in requests.iter_mut() {
        let target = if rt.version == "v1beta1" {
            &mut *request
        } else if request["exactly"].is_object() {
            &mut request["exactly"]
        } else {
            continue;
        };
        if target["allocationMode"].is_null() {
            target["allocationMode"] = json!("ExactCount");
        }
        if target["allocationMode"] == json!("ExactCount") && target["count"].is_null() {
            target["count"] = json!(1);
        }
    }
}

/// The checks the API server makes on a claim's or claim template's device requests (those the
/// simulator models), with its field paths and messages.
pub fn validate(rt: &ResourceType, object: &Value) -> Result<(), Status> {
    let name = object["metadata"]["name"].as_str().unwrap_or_default();
    let (base, requests) = match rt.kind.as_str() {
        "ResourceClaim" => (
            "spec.devices.requests",
            &object["spec"]["devices"]["requests"],
        ),
        "ResourceClaimTemplate" => (
            "spec.spec.devices.requests",
            &object["spec"]["spec"]["devices"]["requests"],
        ),
        _ => return Ok(()),
    };
    let invalid = |field: String, detail: String, reason: &str| {
        super::admission::invalid(rt, name, &field, &detail, reason)
    };
    for (i, request) in requests.as_array().into_iter().flatten().enumerate() {
        let at = format!("{base}[{i}]");
        if request["name"].as_str().unwrap_or_default().is_empty() {
            return Err(invalid(
                format!("{at}.name"),
                "Required value".into(),
                "FieldValueRequired",
            ));
        }
        let (exact, path) = if rt.version == "v1beta1" {
            if request["firstAvailable"].is_array() {
                continue;
            }
            (request, at.clone())
        } else {
            match (
                request["exactly"].is_object(),
                request["firstAvailable"].is_array(),
            ) {
                (true, false) => (&request["exactly"], format!("{at}.exactly")),
                (false, true) => continue,
                (true, true) => {
                    return Err(invalid(
                        at,
                        "Invalid value: \"null\": exactly one of `exactly` or `firstAvailable` \
                         is required, but multiple fields are set"
                            .into(),
                        "FieldValueInvalid",
                    ));
                }
                (false, false) => {
                    return Err(invalid(
                        at,
                        "Required value: exactly one of `exactly` or `firstAvailable` is required"
                            .into(),
                        "FieldValueRequired",
                    ));
                }
            }
        };
        if exact["deviceClassName"]
            .as_str()
            .unwrap_or_default()
            .is_empty()
        {
            return Err(invalid(
                format!("{path}.deviceClassName"),
                "Required value".into(),
                "FieldValueRequired",
            ));
        }
        let mode = exact["allocationMode"].as_str().unwrap_or("ExactCount");
        match mode {
            "ExactCount" => {
                let count = exact["count"].as_i64().unwrap_or(1);
                if count <= 0 {
                    return Err(invalid(
                        format!("{path}.count"),
                        format!("Invalid value: {count}: must be greater than zero"),
                        "FieldValueInvalid",
                    ));
                }
            }
            "All" => {
                if !exact["count"].is_null() {
                    return Err(invalid(
                        format!("{path}.count"),
                        "Invalid value: must not be specified when allocationMode is All".into(),
                        "FieldValueInvalid",
                    ));
                }
            }
            other => {
                return Err(invalid(
                    format!("{path}.allocationMode"),
                    format!(
                        "Unsupported value: \"{other}\": supported values: \"All\", \"ExactCount\""
                    ),
                    "FieldValueNotSupported",
                ));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn versions(version: &str, enabled: &[&str]) -> Vec<String> {
        let enabled: Vec<String> = enabled.iter().map(|s| s.to_string()).collect();
        served(version, &enabled)
            .iter()
            .map(|r| format!("{}/{}", r.version, r.plural))
            .collect()
    }

    #[test]
    fn versions_follow_the_minor_and_the_enabled_beta_apis() {
        assert!(versions("1.31.14-gke.1243000", &[]).is_empty());
        assert!(versions("1.32.12-gke.1050000", &[]).is_empty());
        assert_eq!(
            versions(
                "1.32.12-gke.1050000",
                &[
                    "resource.k8s.io/v1beta1/deviceclasses",
                    "resource.k8s.io/v1beta2/deviceclasses"
                ]
            ),
            vec!["v1beta1/deviceclasses"]
        );
        assert_eq!(versions("1.34.1-gke.1829001", &[]).len(), 4);
        assert_eq!(
            versions(
                "1.34.1-gke.1829001",
                &["resource.k8s.io/v1beta2/resourceclaimtemplates"]
            )
            .last()
            .map(String::as_str),
            Some("v1beta2/resourceclaimtemplates")
        );
        assert_eq!(beta_apis(33).len(), 8);
    }

    fn claim_template(version: &str, request: Value) -> (ResourceType, Value) {
        let rt = served("1.34.1-gke.1829001", &beta_apis(34))
            .into_iter()
            .find(|r| r.version == version && r.kind == "ResourceClaimTemplate")
            .unwrap();
        let object = json!({"metadata": {"name": "t"},
            "spec": {"spec": {"devices": {"requests": [request]}}}});
        (rt, object)
    }

    fn refusal(version: &str, request: Value) -> String {
        let (rt, object) = claim_template(version, request);
        let status = validate(&rt, &object).unwrap_err();
        assert_eq!(status.code, 422);
        status.message
    }

    #[test]
    fn device_requests_are_validated_with_the_api_servers_paths() {
        let class = "mrdma.google.com";
        let at = "ResourceClaimTemplate.resource.k8s.io \"t\" is invalid: \
                  spec.spec.devices.requests[0]";
        assert_eq!(
            refusal("v1", json!({"name": "r"})),
            format!(
                "{at}: Required value: exactly one of `exactly` or `firstAvailable` is required"
            )
        );
        assert!(
            refusal(
                "v1",
                json!({"name": "r", "exactly": {}, "firstAvailable": []})
            )
            .contains("multiple fields are set")
        );
        assert_eq!(
            refusal("v1", json!({"name": "r", "exactly": {}})),
            format!("{at}.exactly.deviceClassName: Required value")
        );
        assert_eq!(
            refusal("v1", json!({"exactly": {"deviceClassName": class}})),
            format!("{at}.name: Required value")
        );
        assert_eq!(
            refusal(
                "v1beta2",
                json!({"name": "r", "exactly": {"deviceClassName": class, "count": 0}})
            ),
            format!("{at}.exactly.count: Invalid value: 0: must be greater than zero")
        );
        assert!(
            refusal(
                "v1beta1",
                json!({"name": "r", "deviceClassName": class,
                "allocationMode": "All", "count": 2})
            )
            .ends_with(
                "requests[0].count: Invalid value: must not be specified when allocationMode is All"
            )
        );
        let (rt, mut ok) = claim_template(
            "v1",
            json!({"name": "r", "exactly": {"deviceClassName": class}}),
        );
        assert!(validate(&rt, &ok).is_ok());
        defaults(&rt, &mut ok);
        let exactly = &ok["spec"]["spec"]["devices"]["requests"][0]["exactly"];
        assert_eq!(exactly["allocationMode"], "ExactCount");
        assert_eq!(exactly["count"], 1);
    }

    #[test]
    fn requests_move_under_exactly_between_v1beta1_and_v1() {
        let v1 = json!({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
            "spec": {"spec": {"devices": {"requests": [{"name": "nic",
                "exactly": {"deviceClassName": "mrdma.google.com", "allocationMode": "All"}}]}}}});
        let beta = convert("ResourceClaimTemplate", &v1, "v1beta1");
        let request = &beta["spec"]["spec"]["devices"]["requests"][0];
        assert_eq!(request["deviceClassName"], "mrdma.google.com");
        assert!(request["exactly"].is_null());
        let mut beta_stored = beta.clone();
        beta_stored["apiVersion"] = json!("resource.k8s.io/v1beta1");
        assert_eq!(
            convert("ResourceClaimTemplate", &beta_stored, "v1")["spec"],
            v1["spec"]
        );
        let slice = json!({"apiVersion": "resource.k8s.io/v1", "spec": {"devices": [
            {"name": "mrdma0", "attributes": {"a": {"int": 1}}}]}});
        let old = convert("ResourceSlice", &slice, "v1beta1");
        assert_eq!(
            old["spec"]["devices"][0]["basic"]["attributes"]["a"]["int"],
            1
        );
    }
}
