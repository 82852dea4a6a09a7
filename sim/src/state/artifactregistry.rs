//! Artifact Registry's state: repositories, their IAM policies, operations and what each running
//! operation does when it finishes; the API is [`crate::artifactregistry`].

use crate::state::iam::Policy;
use crate::state::lro::Operations;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;

/// What a running operation does when it finishes.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Pending {
    /// The repository appears, or the operation fails with `error`.
    Create {
        repository: Value,
        error: Option<(i32, String)>,
    },
    /// The repository is removed.
    Delete,
}

/// Everything Artifact Registry holds.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct State {
    /// Repositories by full name, stored with enum names.
    pub repositories: BTreeMap<String, Value>,
    pub operations: Operations,
    pub pending: BTreeMap<String, Pending>,
    /// IAM policies that were set, by repository name; absent from worlds saved before them.
    #[serde(default)]
    pub policies: BTreeMap<String, Policy>,
}
