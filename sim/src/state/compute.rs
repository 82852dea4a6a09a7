//! Compute's state: every resource by path, with the collection it belongs to and where it is in
//! its life, and every operation. The API, and what each collection does, is [`crate::compute`].

use crate::clock::SimTime;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;
use std::collections::BTreeMap;

/// The names of Compute's collections ([`crate::compute::COLLECTIONS`], in its order; a unit test
/// there keeps the two lists equal): what a saved world may name as a resource's [`Kind`].
pub const KINDS: &[&str] = &[
    "Network",
    "Subnetwork",
    "Firewall",
    "Router",
    "ResourcePolicy",
    "Reservation",
];

/// The kind of stored reservations (quotas and capacity count what they hold).
pub const RESERVATION: Kind = Kind("Reservation");

/// The collection a stored resource belongs to, by its name (`"Network"`, `"Subnetwork"`, ...,
/// one of [`KINDS`]), which is how saved worlds name it. It dereferences to the collection's
/// declaration in Compute's table (`crate::compute::collection::Collection`).
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Kind(pub &'static str);

impl std::fmt::Debug for Kind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.0)
    }
}

impl Serialize for Kind {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.0)
    }
}

impl<'de> Deserialize<'de> for Kind {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Kind, D::Error> {
        let name = String::deserialize(deserializer)?;
        KINDS
            .iter()
            .find(|k| **k == name)
            .map(|k| Kind(k))
            .ok_or_else(|| serde::de::Error::custom(format!("unknown Compute kind `{name}`")))
    }
}

/// Where a resource is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Life {
    /// Its insert operation is not DONE yet: the name is taken but GET says 404.
    Creating,
    Ready,
    /// Its delete operation is not DONE yet: still visible.
    Deleting,
}

/// One stored resource.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Resource {
    pub kind: Kind,
    pub state: Life,
    /// The API JSON, as GET returns it.
    pub body: Value,
    /// A subnetwork created by an auto-mode network (deleted with it, not on its own).
    #[serde(default)]
    pub auto_created: bool,
}

/// Everything this API holds.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct State {
    /// Resources by relative path (`projects/p/regions/r/subnetworks/s`).
    pub resources: BTreeMap<String, Resource>,
    /// Operations by relative path (`projects/p/global/operations/operation-...`).
    pub operations: BTreeMap<String, Operation>,
    /// `project/requestId` → operation path, for idempotent retries.
    pub request_ids: BTreeMap<String, String>,
    /// Simulated time of the last tick: unfinished operations are RUNNING once it passes their
    /// start.
    #[serde(default)]
    pub last_tick: SimTime,
}

/// What happens to the target when the operation is DONE.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub enum Effect {
    /// The resource (already reserved as `Creating`) becomes visible.
    Create(Value),
    /// The resource is removed.
    Delete,
    /// The resource's body is replaced.
    Replace(Value),
    None,
}

/// How a failed operation reports its error.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Failure {
    pub http_status: u16,
    pub http_message: String,
    pub code: String,
    pub message: String,
    #[serde(default)]
    pub details: Option<Value>,
}

/// One operation.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Operation {
    /// Order of creation, for lists.
    pub seq: u64,
    /// The fixed part of the JSON (kind, id, name, operationType, targetLink, ...).
    pub body: Value,
    pub target: String,
    pub effect: Effect,
    pub created_at: SimTime,
    pub running_at: SimTime,
    pub done_at: SimTime,
    pub finished: bool,
    pub failure: Option<Failure>,
}
