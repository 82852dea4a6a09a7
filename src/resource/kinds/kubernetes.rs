//! Objects inside a cluster (kind `k8s`): one Kubernetes object applied server-side
//! ([`ObjectSpec`]), or a release, a set of upstream manifests such as Kueue's ([`ReleaseSpec`]).
//!
//! An object is a `kube-core` [`DynamicObject`]: custom resources (Kueue's queues, GKE's `Network`
//! objects) have no Rust type, and built-in kinds are checked against their `k8s-openapi` type
//! when the graph builds them ([`ObjectSpec::check_builtin`]). The object is diffed as a whole,
//! leaf by leaf; a release by what it installs and by the objects of it found missing.
//!
//! An object's JSON keeps the layout plans have always shown: `apiVersion`, `kind`, then
//! `metadata` with `name` and `labels` first, then the object's own fields as built.

use crate::resource::spec::Change::{ForceNew, InPlace};
use crate::resource::spec::{Compare, Field, f, kind_fields, not_diffed};
use kube_core::DynamicObject;
use serde::{Deserialize, Serialize};

/// What a3ctl knows about the kind.
pub const INFO: super::KindInfo = super::KindInfo {
    kind: super::Kind::Kubernetes,
    name: "k8s",
    api: super::Api::Kubernetes,
    fields: FIELDS,
    deadline_minutes: 30,
    create_latency: None,
    service: None,
};

kind_fields! {
    /// The fields of a `k8s` spec ([`ObjectSpec`] or [`ReleaseSpec`]): the cluster it lives in is
    /// fixed; the object or the release is applied again; `missing` (objects of a release not
    /// found) is reinstalled; `ready` is the condition the apply waits for, not a setting.
    pub enum KubernetesField for Kubernetes in FIELDS {
        Cluster => f("cluster", ForceNew),
        Object => Field {
            name: "object",
            change: InPlace,
            compare: Compare::Deep,
        },
        Release => Field {
            name: "release",
            change: InPlace,
            compare: Compare::Deep,
        },
        Missing => f("missing", InPlace),
        Ready => not_diffed("ready"),
    }
}

/// One object, applied server-side.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ObjectSpec {
    /// The cluster's name.
    pub cluster: String,
    #[serde(with = "layout")]
    pub object: DynamicObject,
    /// The readiness condition, when not the kind's default (`queue_active`,
    /// `on_matching_nodes(1)`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ready: Option<String>,
}

/// Why a built-in object does not match its `k8s-openapi` type.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{kind} `{name}` is not a valid {kind}: {reason}")]
pub struct BuiltinError {
    pub kind: String,
    pub name: String,
    pub reason: String,
}

impl ObjectSpec {
    /// The object's kind (`DaemonSet`), empty when it has no type metadata.
    pub fn kind(&self) -> &str {
        self.object.types.as_ref().map_or("", |t| t.kind.as_str())
    }

    /// For the built-in kinds a3ctl installs, that the object decodes as its `k8s-openapi` type
    /// and encodes back to itself: a misspelt or misplaced field is dropped by the typed decode,
    /// so the round trip differs. Custom resources pass.
    pub fn check_builtin(&self) -> Result<(), BuiltinError> {
        use k8s_openapi::api::apps::v1::DaemonSet;
        use k8s_openapi::api::core::v1::{ConfigMap, PersistentVolume, PersistentVolumeClaim};
        use k8s_openapi::api::scheduling::v1::PriorityClass;
        let value = serde_json::to_value(layout::Layout(&self.object))
            .expect("an object always encodes as JSON");
        let round = match self.kind() {
            "DaemonSet" => round_trip::<DaemonSet>(&value),
            "ConfigMap" => round_trip::<ConfigMap>(&value),
            "PersistentVolume" => round_trip::<PersistentVolume>(&value),
            "PersistentVolumeClaim" => round_trip::<PersistentVolumeClaim>(&value),
            "PriorityClass" => round_trip::<PriorityClass>(&value),
            _ => return Ok(()),
        };
        let error = |reason: String| BuiltinError {
            kind: self.kind().to_string(),
            // For the message only; the adapter refuses an object without a name.
            name: self.object.metadata.name.clone().unwrap_or_default(),
            reason,
        };
        let round = round.map_err(error)?;
        match crate::resource::spec::leaf_diffs("", &value, &round).first() {
            None => Ok(()),
            Some((path, _, _)) => Err(error(format!("`{path}` is not a field of its type"))),
        }
    }
}

fn round_trip<T: Serialize + serde::de::DeserializeOwned>(
    value: &serde_json::Value,
) -> Result<serde_json::Value, String> {
    let typed: T = serde_json::from_value(value.clone()).map_err(|e| e.to_string())?;
    serde_json::to_value(typed).map_err(|e| e.to_string())
}

/// Where a release's manifest comes from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ManifestRef {
    /// `url` or `path`.
    pub kind: String,
    pub location: String,
}

/// A release: its name, version, manifest and the API kinds it must serve.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Release {
    pub name: String,
    pub version: String,
    pub manifest: ManifestRef,
    /// Lowercase hex SHA-256 the manifest must match.
    pub sha256: Option<String>,
    /// `group/version/Kind` the release must serve before the objects that use them.
    pub requires: Vec<String>,
}

/// A set of upstream manifests, installed and checked as one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReleaseSpec {
    pub cluster: String,
    pub release: Release,
    /// `Kind/namespace/name` of the release's objects not found in the cluster; desired: none.
    pub missing: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ready: Option<String>,
}

/// The JSON layout of an object in a spec.
mod layout {
    use kube_core::DynamicObject;
    use serde::{Deserialize, Deserializer, Serialize, Serializer};
    use serde_json::{Map, Value};

    /// `metadata` keys written first, in this order.
    const FIRST: &[&str] = &["name", "labels", "namespace"];

    pub(super) struct Layout<'a>(pub &'a DynamicObject);

    impl Serialize for Layout<'_> {
        fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            let object = self.0;
            let mut out = Map::new();
            if let Some(types) = &object.types {
                out.insert(
                    "apiVersion".into(),
                    Value::String(types.api_version.clone()),
                );
                out.insert("kind".into(), Value::String(types.kind.clone()));
            }
            let mut meta = match serde_json::to_value(&object.metadata) {
                Ok(Value::Object(map)) => map,
                Ok(_) => Map::new(),
                Err(e) => return Err(serde::ser::Error::custom(e)),
            };
            let mut metadata = Map::new();
            for key in FIRST {
                if let Some(v) = meta.shift_remove(*key) {
                    metadata.insert((*key).into(), v);
                }
            }
            metadata.extend(meta);
            out.insert("metadata".into(), Value::Object(metadata));
            if let Value::Object(data) = &object.data {
                out.extend(data.iter().map(|(k, v)| (k.clone(), v.clone())));
            }
            out.serialize(s)
        }
    }

    pub(super) fn serialize<S: Serializer>(
        object: &DynamicObject,
        s: S,
    ) -> Result<S::Ok, S::Error> {
        Layout(object).serialize(s)
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<DynamicObject, D::Error> {
        DynamicObject::deserialize(d)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn spec(object: serde_json::Value) -> ObjectSpec {
        crate::resource::kinds::from_spec(
            "k8s",
            &json!({"cluster": "c", "object": object, "ready": "queue_active"}),
        )
        .unwrap()
    }

    #[test]
    fn an_object_keeps_its_layout() {
        let object = json!({
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "n", "labels": {"a": "b"}, "namespace": "kube-system"},
            "data": {"z": "1", "a": "2"},
        });
        let spec = spec(object.clone());
        let text = crate::resource::kinds::to_spec(&spec).to_string();
        assert_eq!(
            text,
            format!(r#"{{"cluster":"c","object":{object},"ready":"queue_active"}}"#)
        );
        assert_eq!(spec.check_builtin(), Ok(()));
    }

    #[test]
    fn a_misplaced_field_of_a_builtin_kind_is_found() {
        let bad = spec(json!({
            "apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
            "metadata": {"name": "high"}, "value": 1000, "globalDefaults": false,
        }));
        let err = bad.check_builtin().unwrap_err();
        assert_eq!(
            err.to_string(),
            "PriorityClass `high` is not a valid PriorityClass: `.globalDefaults` is not a field of its type"
        );
        // A custom resource is not checked.
        let custom = spec(json!({
            "apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue",
            "metadata": {"name": "q"}, "spec": {"anything": 1},
        }));
        assert_eq!(custom.check_builtin(), Ok(()));
    }

    #[test]
    fn a_release_spec_round_trips() {
        let value = json!({
            "cluster": "c",
            "release": {"name": "kueue", "version": "v0.17.1",
                "manifest": {"kind": "url", "location": "https://x/manifests.yaml"},
                "sha256": null, "requires": ["kueue.x-k8s.io/v1beta2/ClusterQueue"]},
            "missing": [],
        });
        let spec: ReleaseSpec = crate::resource::kinds::from_spec("k8s", &value).unwrap();
        assert_eq!(crate::resource::kinds::to_spec(&spec), value);
    }
}
