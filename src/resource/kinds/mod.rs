//! One module per resource kind: its typed spec (a serde struct the graph builds and the adapter
//! reads), the fields that force replacement, declared next to the spec, its row of the kind
//! table ([`KindInfo`]), the body its API takes, and the projection of the live API object back
//! onto the spec, which fails with a clear error when the cloud leaves out a field a3ctl needs.
//! docs/architecture.md, "Adding a resource kind", walks through adding one.
//!
//! Specs still travel as JSON between the layers (plans, state files and the planner's one
//! generic diff are unchanged), so [`from_spec`] and [`to_spec`] are the only conversions.

pub mod bucket;
pub mod cluster;
pub mod filestore;
pub mod firewall;
pub mod gke_versions;
pub mod iam_member;
pub mod kubernetes;
pub mod network;
pub mod node_pool;
pub mod quotas;
pub mod repository;
pub mod reservation;
pub mod resource_policy;
pub mod router;
pub mod service;
pub mod service_account;
pub mod subnetwork;

use crate::resource::spec::Field;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Every kind of resource a3ctl manages. What a3ctl knows about each is one row of [`KINDS`],
/// declared by the kind's module.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    Network,
    Subnetwork,
    Firewall,
    Router,
    ResourcePolicy,
    Cluster,
    NodePool,
    Filestore,
    Repository,
    Bucket,
    /// A Kubernetes object (or a set of them) inside a cluster.
    Kubernetes,
    /// Read only: capacity node pools consume.
    Reservation,
    /// Read only: a Google API of the project, enabled or not.
    Service,
    /// Read only: a region's Compute quotas.
    Region,
    /// Read only: the project's Compute quotas.
    Project,
    /// Read only: a zone's machine type (vCPUs, GPUs).
    MachineType,
    /// Read only: a region's on-demand GPU quota of one family, and its usage.
    GpuFamilyQuota,
    /// Read only: the GKE versions a location offers, per release channel.
    GkeVersions,
    /// An IAM service account (the nodes' identity).
    ServiceAccount,
    /// One member of one role in a resource's IAM policy.
    IamMember,
}

/// The cloud APIs a3ctl talks to; each gets its own concurrency lane.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Api {
    Compute,
    Container,
    Filestore,
    ArtifactRegistry,
    Storage,
    Kubernetes,
    ServiceUsage,
    CloudQuotas,
    Iam,
}

/// What a3ctl knows about a kind, declared next to its spec as `INFO`.
#[derive(Debug, Clone, Copy)]
pub struct KindInfo {
    pub kind: Kind,
    /// The spelling used in addresses (`resource_policy`).
    pub name: &'static str,
    /// The API lane that carries its calls.
    pub api: Api,
    /// How each field of its spec may change.
    pub fields: &'static [Field],
    /// How long one of its operations may run before an apply gives up on it.
    pub deadline_minutes: u64,
    /// The key of its create in [`super::durations`], for time estimates (`None`: instant).
    pub create_latency: Option<&'static str>,
    /// The Google service that serves it (for "enable the API" hints); `None` inside a cluster.
    pub service: Option<&'static str>,
}

/// Every kind, in [`Kind`] order.
pub const KINDS: &[KindInfo] = &[
    network::INFO,
    subnetwork::INFO,
    firewall::INFO,
    router::INFO,
    resource_policy::INFO,
    cluster::INFO,
    node_pool::INFO,
    filestore::INFO,
    repository::INFO,
    bucket::INFO,
    kubernetes::INFO,
    reservation::INFO,
    service::INFO,
    quotas::REGION_INFO,
    quotas::PROJECT_INFO,
    quotas::MACHINE_TYPE_INFO,
    quotas::GPU_FAMILY_INFO,
    gke_versions::INFO,
    service_account::INFO,
    iam_member::INFO,
];

impl Kind {
    /// Every kind, in order.
    pub const ALL: &'static [Kind] = &{
        let mut all = [Kind::Network; KINDS.len()];
        let mut i = 0;
        while i < KINDS.len() {
            all[i] = KINDS[i].kind;
            i += 1;
        }
        all
    };

    /// This kind's row of [`KINDS`] (a match, so a new variant without a row does not build).
    pub fn info(self) -> &'static KindInfo {
        match self {
            Kind::Network => &network::INFO,
            Kind::Subnetwork => &subnetwork::INFO,
            Kind::Firewall => &firewall::INFO,
            Kind::Router => &router::INFO,
            Kind::ResourcePolicy => &resource_policy::INFO,
            Kind::Cluster => &cluster::INFO,
            Kind::NodePool => &node_pool::INFO,
            Kind::Filestore => &filestore::INFO,
            Kind::Repository => &repository::INFO,
            Kind::Bucket => &bucket::INFO,
            Kind::Kubernetes => &kubernetes::INFO,
            Kind::Reservation => &reservation::INFO,
            Kind::Service => &service::INFO,
            Kind::Region => &quotas::REGION_INFO,
            Kind::Project => &quotas::PROJECT_INFO,
            Kind::MachineType => &quotas::MACHINE_TYPE_INFO,
            Kind::GpuFamilyQuota => &quotas::GPU_FAMILY_INFO,
            Kind::GkeVersions => &gke_versions::INFO,
            Kind::ServiceAccount => &service_account::INFO,
            Kind::IamMember => &iam_member::INFO,
        }
    }

    /// The spelling used in addresses.
    pub fn as_str(self) -> &'static str {
        self.info().name
    }

    /// Which API lane carries this kind's calls.
    pub fn api(self) -> Api {
        self.info().api
    }

    /// The field of this kind named `name` (as plans and state spell it), if it has one. Code
    /// that knows the kind names its fields by the kind's enum instead
    /// ([`crate::resource::spec::KindField`]).
    pub fn field(self, name: &str) -> Option<&'static Field> {
        self.info().fields.iter().find(|f| f.name == name)
    }
}

impl std::fmt::Display for Kind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

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

#[cfg(test)]
mod field_coverage;

#[cfg(test)]
mod registry_tests {
    use super::*;

    #[test]
    fn every_kind_has_one_row_in_order_with_a_unique_name() {
        for (i, info) in KINDS.iter().enumerate() {
            assert_eq!(Kind::ALL[i], info.kind);
            assert_eq!(info.kind.info().name, info.name);
            assert_eq!(
                KINDS.iter().filter(|other| other.name == info.name).count(),
                1,
                "{}",
                info.name
            );
        }
        // The rows cover every variant: serde names the variants, the rows must match them.
        for info in KINDS {
            let name = serde_json::to_value(info.kind).unwrap();
            let name = name.as_str().unwrap();
            assert!(name == info.name || (name, info.name) == ("kubernetes", "k8s"));
        }
    }
}
