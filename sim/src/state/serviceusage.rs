//! Service Usage's state: which services each project has enabled, and its operations; the API
//! is [`crate::serviceusage`].

use crate::clock::SimTime;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

/// The method an operation carries out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Method {
    Enable,
    Disable,
    BatchEnable,
}

/// One enable or disable operation.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Operation {
    /// `operations/acf.p2-...`.
    pub name: String,
    /// The project (key, see [`State::resolve`](crate::serviceusage)).
    pub project: String,
    pub method: Method,
    /// The services the request named.
    pub requested: Vec<String>,
    /// Every service whose state the operation sets (with dependencies or dependents).
    pub changes: Vec<String>,
    /// Creation order, for finishing operations due at the same time.
    pub seq: u64,
    pub created: SimTime,
    pub done_at: SimTime,
    pub done: bool,
}

/// Everything Service Usage holds. Worlds saved before it existed load with every project at
/// [`DEFAULT_ENABLED`](crate::serviceusage::DEFAULT_ENABLED).
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct State {
    /// Enabled services of each project whose services were changed, by project key.
    #[serde(default)]
    pub projects: BTreeMap<String, BTreeSet<String>>,
    /// When each project last called each API, by project key then service.
    #[serde(default)]
    pub last_used: BTreeMap<String, BTreeMap<String, SimTime>>,
    /// Operations by name.
    #[serde(default)]
    pub operations: BTreeMap<String, Operation>,
}
