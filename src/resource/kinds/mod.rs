//! One module per resource kind: its typed spec (a serde struct the graph builds and the adapter
//! reads), the fields that force replacement, declared next to the spec, the body its API takes,
//! and the projection of the live API object back onto the spec, which fails with a clear error
//! when the cloud leaves out a field a3ctl needs. Kinds are moving here one at a time (issue:
//! typed resource kinds): every Compute kind (`network`, `subnetwork`, `firewall`, `router`,
//! `resource_policy`), the `filestore` instance, the Artifact Registry `repository` and the Cloud
//! Storage `bucket`; the GKE `node_pool` so far has its spec and fields (its projection lives in
//! the GKE adapter); clusters and Kubernetes objects are still JSON.
//!
//! Specs still travel as JSON between the layers (plans, state files and the planner's one
//! generic diff are unchanged), so [`from_spec`] and [`to_spec`] are the only conversions.

pub mod bucket;
pub mod cluster;
pub mod filestore;
pub mod firewall;
pub mod kubernetes;
pub mod network;
pub mod node_pool;
pub mod repository;
pub mod resource_policy;
pub mod router;
pub mod subnetwork;

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// A spec or live object that does not have the shape its kind needs.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ShapeError {
    /// A recorded or desired spec that does not decode (a hand-edited state file, or a spec
    /// written by a different a3ctl).
    #[error("the {kind} spec does not have the expected fields: {reason}")]
    Spec { kind: &'static str, reason: String },
    /// The cloud answered without a field a3ctl needs.
    #[error("the {kind} `{name}` the API returned has no `{field}`")]
    Live {
        kind: &'static str,
        name: String,
        field: &'static str,
    },
}

/// GCP labels, sorted (values are always strings).
pub type Labels = std::collections::BTreeMap<String, String>;

/// The labels of a live object. Google leaves `labels` out of an object that has none, so an
/// absent field is an empty set; a value that is not a string (never sent by Google) is skipped.
pub(crate) fn live_labels(live: &Value) -> Labels {
    live["labels"]
        .as_object()
        .into_iter()
        .flatten()
        .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_string())))
        .collect()
}

/// Decodes a spec of `kind`.
pub fn from_spec<T: DeserializeOwned>(kind: &'static str, spec: &Value) -> Result<T, ShapeError> {
    serde_json::from_value(spec.clone()).map_err(|e| ShapeError::Spec {
        kind,
        reason: e.to_string(),
    })
}

/// Encodes a spec. Specs are plain structs of strings, numbers, booleans and lists, which always
/// encode.
pub fn to_spec<T: Serialize>(spec: &T) -> Value {
    serde_json::to_value(spec).expect("a spec struct always encodes as JSON")
}

/// A required string field of a live object.
pub(crate) fn live_str<'a>(
    kind: &'static str,
    live: &'a Value,
    field: &'static str,
) -> Result<&'a str, ShapeError> {
    live[field].as_str().ok_or_else(|| ShapeError::Live {
        kind,
        name: live["name"].as_str().unwrap_or("(unnamed)").to_string(),
        field,
    })
}

/// The last segment of a required URL or resource-name field of a live object (a network's
/// name from its self link, a region's from its URL).
pub(crate) fn live_last(
    kind: &'static str,
    live: &Value,
    field: &'static str,
) -> Result<String, ShapeError> {
    let url = live_str(kind, live, field)?;
    Ok(url.rsplit('/').next().unwrap_or(url).to_string())
}
