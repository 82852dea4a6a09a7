//! The shared vocabulary of the engine: resource kinds and addresses.
//!
//! An address names a resource the same way everywhere — in plans, state keys, errors and
//! progress lines: `<kind>.<name>`, e.g. `network.gpu-3`, `node_pool.a3mega`. The name part is the
//! blueprint-level name, not the cloud name (`network.gpu-3` is the VPC `a3mega-gpunet-3`). This
//! module depends on nothing heavier than serde, and on no other module of a3ctl: the words every
//! layer shares (a field's difference, an operation's handle, the ownership mark in
//! [`spec::OWNERSHIP_LABEL`]) live here so that the layers above only point down.

pub mod durations;
pub mod kinds;
pub mod spec;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::fmt;
use std::str::FromStr;

pub use kinds::{Api, Kind};

/// A resource's address: `<kind>.<name>`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Addr {
    pub kind: Kind,
    pub name: String,
}

impl Addr {
    pub fn new(kind: Kind, name: impl Into<String>) -> Addr {
        Addr {
            kind,
            name: name.into(),
        }
    }
}

impl fmt::Display for Addr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.kind, self.name)
    }
}

/// Why a string is not an address.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{0}` is not a resource address (expected `<kind>.<name>`, e.g. `node_pool.a3mega`)")]
pub struct AddrParseError(pub String);

impl FromStr for Addr {
    type Err = AddrParseError;
    fn from_str(s: &str) -> Result<Addr, AddrParseError> {
        let (kind, name) = s
            .split_once('.')
            .ok_or_else(|| AddrParseError(s.to_string()))?;
        let kind = Kind::ALL
            .iter()
            .copied()
            .find(|k| k.as_str() == kind)
            .ok_or_else(|| AddrParseError(s.to_string()))?;
        if name.is_empty() {
            return Err(AddrParseError(s.to_string()));
        }
        Ok(Addr::new(kind, name))
    }
}

impl Serialize for Addr {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Addr {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Addr, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

/// Per-resource lifecycle settings, copied from the blueprint at apply time so they still hold when
/// the blueprint no longer mentions the resource.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Lifecycle {
    /// Refuse any plan that would delete or replace this resource.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub prevent_destroy: bool,
    /// Delete a bucket even when it still holds objects.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub force_destroy: bool,
    /// Deleted by deleting this other resource (node pools and Kubernetes objects with their
    /// cluster): no call of its own is made when both go.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deleted_with: Option<Addr>,
    /// Left in the cloud when the plan removes it: the record is forgotten, no call is made (an
    /// enabled API, which other workloads of the project may use).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub keep_on_destroy: bool,
}

/// A resource the blueprint wants, as the graph produces it and the planner consumes it.
#[derive(Debug, Clone, PartialEq)]
pub struct Desired {
    pub addr: Addr,
    /// Identity in the cloud, e.g. `projects/p/global/networks/a3mega-net`.
    pub id: String,
    pub spec: Value,
    pub dependencies: Vec<Addr>,
    pub lifecycle: Lifecycle,
}

/// A resource as the cloud reports it: its spec projected onto the fields a3ctl manages, plus
/// outputs (self links, endpoint, versions ...).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Observed {
    pub spec: Value,
    pub outputs: Value,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_round_trip_through_text() {
        let addr: Addr = "node_pool.a3mega".parse().unwrap();
        assert_eq!(addr, Addr::new(Kind::NodePool, "a3mega"));
        assert_eq!(addr.to_string(), "node_pool.a3mega");
        let k8s: Addr = "k8s.daemonset/kube-system/nccl-tcpxo-installer"
            .parse()
            .unwrap();
        assert_eq!(k8s.kind, Kind::Kubernetes);
        assert!("nodepool.x".parse::<Addr>().is_err());
        assert!("network.".parse::<Addr>().is_err());
        assert!("network".parse::<Addr>().is_err());
    }
}

/// One field that differs between what is (live or last recorded) and what is wanted: a plan's
/// unit of change, and what an adapter's update is built from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FieldDiff {
    pub field: String,
    /// The live (or last recorded) value; null when absent.
    pub before: Value,
    /// The desired value; null when the field goes away.
    pub after: Value,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub forces_replacement: bool,
}

/// A cloud operation handle, enough to poll it from another process.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OperationRef {
    pub api: Api,
    /// The name to poll: a Compute operation self link, a GKE or AIP-151 operation name.
    pub name: String,
}

/// The description every Compute resource of blueprint `name` carries (Compute resources have no
/// labels; everything else carries the label [`spec::OWNERSHIP_LABEL`]` = name`).
pub fn mark(name: &str) -> String {
    format!("Managed by a3ctl ({}={name})", spec::OWNERSHIP_LABEL)
}
