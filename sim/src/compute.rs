//! Compute: to be implemented (skeleton fixed by the core so modules can be built in parallel).

use crate::server::Shared;
use crate::world::{Ctx, World};
use axum::Router;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::sync::Arc;

/// Everything this API holds.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct State {}

/// Routes of this API (full paths, including the simulator's prefix).
pub fn router() -> Router<Arc<Shared>> {
    Router::new()
}

/// Finishes due operations; returns true if anything changed.
pub fn tick(_world: &mut World, _cx: &Ctx) -> bool {
    false
}

/// This API's part of the admin inventory.
pub fn inventory(_world: &World) -> Value {
    json!({})
}

impl State {
    /// The network `name` of `project` as its API resource, if it exists (its insert finished).
    /// Used by GKE and Filestore to check references.
    pub fn network(&self, _project: &str, _name: &str) -> Option<&Value> {
        None
    }

    /// The subnetwork `name` in `region`, if it exists.
    pub fn subnetwork(&self, _project: &str, _region: &str, _name: &str) -> Option<&Value> {
        None
    }

    /// The resource policy `name` in `region`, if it exists.
    pub fn resource_policy(&self, _project: &str, _region: &str, _name: &str) -> Option<&Value> {
        None
    }
}
