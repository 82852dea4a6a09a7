//! Filestore's state: instances, operations and what each running operation does when it
//! finishes; the API is [`crate::filestore`].

use crate::state::lro::Operations;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;

/// What a running operation does when it finishes.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Pending {
    /// The instance becomes READY, or is removed and the operation fails with `error`.
    Create { error: Option<(i32, String)> },
    /// The instance takes this new value.
    Update { resource: Value },
    /// The instance is removed.
    Delete,
}

/// Everything Filestore holds.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct State {
    /// Instances by full name, stored with enum names.
    pub instances: BTreeMap<String, Value>,
    pub operations: Operations,
    /// Work of running operations, by operation name.
    pub pending: BTreeMap<String, Pending>,
    /// Counter behind the reserved IP ranges handed out to instances.
    pub ip_blocks: u32,
}
