//! State: what a3ctl created, as it last saw it, and what it was in the middle of doing.
//!
//! A [`State`] is versioned (`version`), belongs to one history (`lineage`, a UUID minted when the
//! state is first created) and counts its saves (`serial`). Per resource it keeps the desired spec
//! as last applied, the observed outputs, and the dependencies recorded at apply time (destroy
//! order comes from these, since a removed resource's configuration no longer exists). The
//! `pending` journal lists cloud operations that were started and not yet seen to finish: each
//! entry is written *before* a3ctl waits on the operation, so an apply that is killed resumes
//! waiting on the next run instead of creating again.
//!
//! State never holds credentials: nothing from request headers or ADC ever reaches it.
//! Persistence and locking live in [`store`] and [`lock`] (a local file), [`gcs`] (an object in
//! Cloud Storage), and [`backend`], the one interface commands use over both.

pub mod backend;
pub mod edit;
pub mod gcs;
pub mod lock;
pub mod migrate;
pub mod objects;
pub mod store;

pub use crate::resource::Lifecycle;
use crate::resource::{Addr, Kind};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;

/// The on-disk format version this build writes. Earlier ones are read and upgraded
/// ([`migrate`]): 2 numbers GPU NICs from 1 (`network.gpu-1`).
pub const FORMAT_VERSION: u32 = 2;

/// Everything a3ctl knows about one blueprint's resources.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct State {
    pub version: u32,
    pub lineage: String,
    pub serial: u64,
    /// The a3ctl version that last wrote this state.
    pub a3ctl_version: String,
    /// The blueprint `name` this state belongs to.
    pub blueprint: String,
    pub resources: BTreeMap<Addr, Record>,
    /// Operations started and not yet seen to finish.
    #[serde(default)]
    pub pending: Vec<PendingOperation>,
}

/// One managed resource.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Record {
    pub kind: Kind,
    /// The resource's identity in the cloud, e.g. `projects/p/global/networks/a3mega-net`.
    pub id: String,
    /// The desired spec as last applied.
    pub spec: Value,
    /// What the cloud reported after the last apply or refresh (self links, endpoint, versions ...).
    #[serde(default)]
    pub outputs: Value,
    /// Addresses this resource depended on when it was last applied.
    #[serde(default)]
    pub dependencies: Vec<Addr>,
    /// A create that failed part-way left this object behind; the next plan replaces it (a node
    /// pool that got some of its nodes is resized instead, [`crate::plan::planner`]).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub tainted: bool,
    #[serde(default)]
    pub lifecycle: Lifecycle,
    /// When this record last changed (RFC 3339).
    pub updated_at: String,
}

/// What a pending operation was doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PendingAction {
    Create,
    Update,
    Delete,
}

pub use crate::resource::OperationRef;

/// A journaled operation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PendingOperation {
    pub addr: Addr,
    pub action: PendingAction,
    /// The cloud identity of the resource being acted on.
    pub id: String,
    /// `None` while the call that starts the operation has not answered yet: after a crash the
    /// resource may or may not exist, and the next refresh decides.
    pub operation: Option<OperationRef>,
    /// The spec being applied (for create and update).
    #[serde(default)]
    pub spec: Value,
    #[serde(default)]
    pub dependencies: Vec<Addr>,
    #[serde(default)]
    pub lifecycle: Lifecycle,
    pub started_at: String,
}

impl State {
    /// A new, empty state for a blueprint, with a fresh lineage.
    pub fn new(blueprint: &str, lineage: String) -> State {
        State {
            version: FORMAT_VERSION,
            lineage,
            serial: 0,
            a3ctl_version: env!("CARGO_PKG_VERSION").to_string(),
            blueprint: blueprint.to_string(),
            resources: BTreeMap::new(),
            pending: Vec::new(),
        }
    }

    /// The journal entry for `addr`, if any.
    pub fn pending_for(&self, addr: &Addr) -> Option<&PendingOperation> {
        self.pending.iter().find(|p| &p.addr == addr)
    }

    /// Replaces the journal entry for `addr`.
    pub fn set_pending(&mut self, op: PendingOperation) {
        self.pending.retain(|p| p.addr != op.addr);
        self.pending.push(op);
    }

    pub fn clear_pending(&mut self, addr: &Addr) {
        self.pending.retain(|p| &p.addr != addr);
    }

    /// The recorded outputs of `deps` (those in state): what an adapter finds in
    /// [`crate::cloud::Target::context`].
    pub fn context(&self, deps: &[Addr]) -> BTreeMap<Addr, Value> {
        deps.iter()
            .filter_map(|d| {
                self.resources
                    .get(d)
                    .map(|r| (d.clone(), r.outputs.clone()))
            })
            .collect()
    }

    /// True when nothing is recorded and nothing is pending.
    pub fn is_empty(&self) -> bool {
        self.resources.is_empty() && self.pending.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn state_serialises_with_addresses_as_keys() {
        let mut state = State::new("a3mega", "lineage-1".into());
        state.resources.insert(
            Addr::new(Kind::Network, "primary"),
            Record {
                kind: Kind::Network,
                id: "projects/p/global/networks/a3mega-net".into(),
                spec: json!({"mtu": 8244}),
                outputs: json!({}),
                dependencies: vec![],
                tainted: false,
                lifecycle: Lifecycle::default(),
                updated_at: "2026-11-21T00:00:00Z".into(),
            },
        );
        let text = serde_json::to_string(&state).unwrap();
        assert!(text.contains("\"network.primary\""), "{text}");
        let back: State = serde_json::from_str(&text).unwrap();
        assert_eq!(back, state);
    }
}
