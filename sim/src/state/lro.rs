//! The state of Google's long-running operations (AIP-151) as Filestore and Artifact Registry keep
//! them; their behaviour is [`crate::lro`]'s.

use crate::clock::SimTime;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;

/// How a finished operation ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// The operation's result (without `@type`); `None` for `google.protobuf.Empty`.
    Response(Option<Value>),
    /// A `google.rpc.Status`.
    Error { code: i32, message: String },
}

/// One operation.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Operation {
    /// Full name, `projects/P/locations/L/operations/operation-...`.
    pub name: String,
    /// Resource the operation works on (full name).
    pub target: String,
    /// `create`, `update` or `delete`.
    pub verb: String,
    pub created: SimTime,
    /// When the operation is due to finish.
    pub done_at: SimTime,
    pub ended: Option<SimTime>,
    pub cancel_requested: bool,
    pub outcome: Option<Outcome>,
}

/// All operations of one API, by full name.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct Operations {
    pub by_name: BTreeMap<String, Operation>,
}
