//! The plan: what must change so the cloud matches the blueprint. Deciding lives here; carrying it
//! out lives in [`crate::apply`].
//!
//! A [`Plan`] is inert data: one [`Change`] per resource (create, update in place, replace, delete
//! or no-op) with the field-level differences and, for replacements, the fields that force them;
//! plus the drift found by refresh. It records the lineage and serial of the state it was made
//! from, so `apply PLANFILE` can refuse a plan whose state has moved since.
//!
//! With `plan --adopt`, resources the blueprint declares that are not in state but already exist
//! under the blueprint's names are [`Adoption`]s: refresh reads them, the planner diffs them like
//! recorded resources, and applying the plan (or the saved plan file, which carries them) records
//! them in state before anything else, instead of creating them.

pub mod moves;
pub mod planner;
pub mod preflight;
pub mod refresh;
pub mod select;

use crate::resource::{Addr, Lifecycle};
use crate::state::Record;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The format version of saved plan files.
pub const PLAN_FORMAT: u32 = 1;

/// What happens to one resource.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    NoOp,
    Create,
    Update,
    /// Delete, then create (names are chosen by the user, so the new object cannot coexist).
    Replace,
    Delete,
}

impl Action {
    /// Terraform's glyph for the action.
    pub fn glyph(self) -> &'static str {
        match self {
            Action::NoOp => " ",
            Action::Create => "+",
            Action::Update => "~",
            Action::Replace => "-/+",
            Action::Delete => "-",
        }
    }
}

pub use crate::resource::FieldDiff;

/// The planned change of one resource.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Change {
    pub addr: Addr,
    pub action: Action,
    /// Identity in the cloud.
    pub id: String,
    /// Live (or recorded) spec; `None` for a create.
    pub before: Option<Value>,
    /// Desired spec; `None` for a delete.
    pub after: Option<Value>,
    #[serde(default)]
    pub diffs: Vec<FieldDiff>,
    /// Why, for replacements and deletes ("tainted", "no longer in the blueprint" ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// For creates and updates: what the resource will depend on; for deletes: what it depended on.
    #[serde(default)]
    pub dependencies: Vec<Addr>,
    #[serde(default)]
    pub lifecycle: Lifecycle,
}

/// A resource that changed outside a3ctl since the last apply.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Drift {
    pub addr: Addr,
    /// The resource no longer exists.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub gone: bool,
    /// Recorded value → live value.
    #[serde(default)]
    pub diffs: Vec<FieldDiff>,
}

/// An existing resource taken into state instead of created.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Adoption {
    pub addr: Addr,
    /// Identity in the cloud (the blueprint's).
    pub id: String,
    /// The live configuration, projected onto the spec fields.
    pub spec: Value,
    pub outputs: Value,
    /// From the blueprint's graph.
    #[serde(default)]
    pub dependencies: Vec<Addr>,
    #[serde(default)]
    pub lifecycle: Lifecycle,
}

impl Adoption {
    /// The state record of the adopted resource: the live configuration as the recorded one, so
    /// the next plan shows only how it differs from the blueprint.
    pub fn record(&self, updated_at: String) -> Record {
        Record {
            kind: self.addr.kind,
            id: self.id.clone(),
            spec: self.spec.clone(),
            outputs: self.outputs.clone(),
            dependencies: self.dependencies.clone(),
            tainted: false,
            lifecycle: self.lifecycle.clone(),
            updated_at,
        }
    }
}

/// What a plan that creates resources state does not record found under their blueprint names
/// (a state file deleted or lost, a new machine): [`refresh::existing`] looks for each before the
/// plan is shown, so the user learns that `plan --adopt` would take them over instead.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Existing {
    /// Carry this blueprint's ownership mark (or live inside one that does, or have no mark of
    /// their own and come with ones that do): `plan --adopt` takes them over.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub adoptable: Vec<Found>,
    /// Exist under the name but are not this blueprint's (no mark, or another blueprint's): a
    /// create fails on them, and `--adopt` is not the way to take them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub foreign: Vec<Found>,
    /// Could not be looked for: the read failed (permission, an error that outlasted retries), or
    /// the resource they live in could not be read. Not known to be absent.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unchecked: Vec<Unchecked>,
}

impl Existing {
    pub fn is_empty(&self) -> bool {
        self.adoptable.is_empty() && self.foreign.is_empty() && self.unchecked.is_empty()
    }
}

/// A planned create that already exists in the cloud.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Found {
    pub addr: Addr,
    pub id: String,
    /// The blueprint whose mark the live resource carries, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner: Option<String>,
}

/// A planned create whose existence could not be checked.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Unchecked {
    pub addr: Addr,
    pub id: String,
    /// Why: the read's error, or the container that could not be read.
    pub error: String,
}

/// Everything an apply needs to carry out.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Plan {
    pub format: u32,
    pub blueprint: String,
    /// Lineage and serial of the state this plan was made from.
    pub lineage: String,
    pub serial: u64,
    pub destroy: bool,
    pub changes: Vec<Change>,
    #[serde(default)]
    pub drift: Vec<Drift>,
    /// The versions that must fit together (GKE, driver, NCCL stack, Kueue), shown on top of the
    /// plan: `(component, version)`.
    #[serde(default)]
    pub versions: Vec<(String, String)>,
    /// Existing resources recorded in state by the apply instead of being created.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub adoptions: Vec<Adoption>,
    /// What the cloud must be able to give this plan, as checked when it was made
    /// ([`preflight`]); `None` when not checked (`--skip-preflight`, destroy plans).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preflight: Option<preflight::Preflight>,
    /// What the plan leaves as it is on purpose and the user should know (a control plane GKE's
    /// channel moved ahead of the blueprint's minor pin).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// How each replaced node pool moves to its new pool ([`moves`]), chosen once preflight has
    /// read the capacity.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub moves: Vec<moves::PoolMove>,
}

/// The counts in "Plan: X to add, Y to change, Z to destroy."
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct Summary {
    pub add: usize,
    pub change: usize,
    pub destroy: usize,
    /// Removed from state but left in the cloud (`lifecycle.keep_on_destroy`).
    pub forget: usize,
}

/// A Kueue ClusterQueue create or update that changes the GPU quota of a GPU pool's flavor (a
/// create, from 0) while the same plan updates (resizes), creates or deletes that pool: queues
/// follow nodes, so the two are ordered ([`crate::apply::schedule`]) and selected together
/// ([`select`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QuotaLink {
    /// The ClusterQueue.
    pub queue: Addr,
    /// The node pool whose flavor's quota changes.
    pub pool: Addr,
    /// The quota rises (the pool grows); otherwise it falls.
    pub grows: bool,
}

impl Plan {
    /// The ClusterQueue quota changes that follow a pool change of this plan, found by comparing
    /// each created or updated ClusterQueue's flavor quotas before (none for a create) and after
    /// (a flavor is named like its pool).
    pub fn quota_links(&self) -> Vec<QuotaLink> {
        let mut out = Vec::new();
        for queue in &self.changes {
            if !matches!(queue.action, Action::Create | Action::Update)
                || !crate::graph::kueue::is_cluster_queue(&queue.addr)
            {
                continue;
            }
            let quotas = |v: &Option<Value>| {
                v.as_ref()
                    .map(crate::graph::kueue::gpu_quotas)
                    .unwrap_or_default()
            };
            let (before, after) = (quotas(&queue.before), quotas(&queue.after));
            let flavors: std::collections::BTreeSet<&String> =
                before.keys().chain(after.keys()).collect();
            for flavor in flavors {
                let was = before.get(flavor).copied().unwrap_or(0);
                let will = after.get(flavor).copied().unwrap_or(0);
                let pool = Addr::new(crate::resource::Kind::NodePool, flavor.clone());
                // Resized, created (back) or deleted. A replaced pool has no nodes for a while
                // whatever the order, but a quota it raises (a pool whose create failed, made
                // anew) still waits for the new pool's create.
                let resized = self.change(&pool).is_some_and(|c| match c.action {
                    Action::Update | Action::Create | Action::Delete => true,
                    Action::Replace => will > was,
                    Action::NoOp => false,
                });
                if was != will && resized {
                    out.push(QuotaLink {
                        queue: queue.addr.clone(),
                        pool,
                        grows: will > was,
                    });
                }
            }
        }
        out
    }

    /// Changes that do something (everything but no-ops).
    pub fn actions(&self) -> impl Iterator<Item = &Change> {
        self.changes.iter().filter(|c| c.action != Action::NoOp)
    }

    /// Nothing to change and nothing to adopt.
    pub fn is_empty(&self) -> bool {
        self.actions().next().is_none() && self.adoptions.is_empty()
    }

    /// A replacement counts once as an add and once as a destroy, as in Terraform.
    pub fn summary(&self) -> Summary {
        let mut s = Summary::default();
        for c in &self.changes {
            match c.action {
                Action::NoOp => {}
                Action::Create => s.add += 1,
                Action::Update => s.change += 1,
                Action::Replace => {
                    s.add += 1;
                    s.destroy += 1;
                }
                Action::Delete if c.lifecycle.keep_on_destroy => s.forget += 1,
                Action::Delete => s.destroy += 1,
            }
        }
        s
    }

    pub fn change(&self, addr: &Addr) -> Option<&Change> {
        self.changes.iter().find(|c| &c.addr == addr)
    }

    /// The GPU node pools this plan replaces, with how each moves ([`moves`]), what that puts at
    /// risk and whether preflight confirmed the new pool's capacity.
    pub fn gpu_replacements(&self) -> Vec<GpuReplacement> {
        use crate::resource::Kind;
        use crate::resource::kinds::node_pool::NodePoolSpec;
        let spec = |v: &Option<Value>| {
            v.as_ref()
                .and_then(|v| serde_json::from_value::<NodePoolSpec>(v.clone()).ok())
        };
        self.changes
            .iter()
            .filter(|c| c.addr.kind == Kind::NodePool && c.action == Action::Replace)
            .filter_map(|c| {
                let (before, after) = (spec(&c.before)?, spec(&c.after)?);
                let acc = before.accelerator.as_ref().filter(|a| a.count > 0)?;
                let nodes = before.node_count * before.locations.len().max(1) as u64;
                let gpus_per_node = acc.count as u64;
                let mine = |check: &&preflight::Check| check.for_resources.contains(&c.addr);
                let (capacity, reservation) = match &self.preflight {
                    None => ("not_checked", vec![]),
                    Some(p) => {
                        let checks: Vec<&preflight::Check> = p.checks.iter().filter(mine).collect();
                        let capacity = if checks.iter().any(|k| !k.ok && !k.unknown) {
                            "refused"
                        } else if checks.iter().any(|k| k.unknown)
                            // What could not be read for any resource (Compute, until the plan
                            // enables it) could not be read for this pool either.
                            || p.checks
                                .iter()
                                .any(|k| k.unknown && k.for_resources.is_empty())
                        {
                            "unknown"
                        } else {
                            "confirmed"
                        };
                        let rooms = p
                            .replacements
                            .iter()
                            .filter(|r| r.pool == c.addr)
                            .cloned()
                            .collect();
                        (capacity, rooms)
                    }
                };
                let moved = self.moves.iter().find(|m| m.pool == c.addr);
                let strategy = moved.map_or(moves::Strategy::DeleteFirst, |m| m.strategy);
                let gpus_at_risk = match strategy {
                    moves::Strategy::CreateBeforeDestroy => 0,
                    moves::Strategy::Batched { batch_size } => {
                        batch_size.min(before.node_count)
                            * before.locations.len().max(1) as u64
                            * gpus_per_node
                    }
                    moves::Strategy::DeleteFirst | moves::Strategy::Refused => {
                        nodes * gpus_per_node
                    }
                };
                let only_after_delete = capacity == "confirmed"
                    && strategy == moves::Strategy::DeleteFirst
                    && reservation
                        .iter()
                        .any(preflight::ReplacementRoom::only_after_delete);
                Some(GpuReplacement {
                    strategy,
                    gpus_at_risk,
                    new_id: moved.map(|m| m.new_id.clone()),
                    addr: c.addr.clone(),
                    nodes,
                    gpus_per_node,
                    gpu_type: acc.kind.clone(),
                    gpus_down: nodes * gpus_per_node,
                    order: match strategy {
                        moves::Strategy::CreateBeforeDestroy => "create_before_destroy",
                        moves::Strategy::Batched { .. } => "batched",
                        moves::Strategy::DeleteFirst => "delete_first",
                        moves::Strategy::Refused => "refused",
                    },
                    machine_type_before: before.machine_type.clone(),
                    machine_type_after: after.machine_type.clone(),
                    capacity,
                    reservation,
                    only_after_delete,
                })
            })
            .collect()
    }

    /// The GKE version upgrades in this plan, in the order apply carries them out: each control
    /// plane one minor version at a time, then its node pools, then the Kubernetes objects that
    /// run on the nodes (see [`crate::apply::schedule`]). Empty without a version change.
    pub fn upgrade_order(&self) -> Vec<UpgradeStep> {
        use crate::resource::Kind;
        use crate::resource::kinds::gke_versions::minors_between;
        let version_diff = |c: &Change| {
            (c.action == Action::Update)
                .then(|| c.diffs.iter().find(|d| d.field == "version"))
                .flatten()
                .map(|d| {
                    (
                        d.before.as_str().unwrap_or("").to_string(),
                        d.after.as_str().unwrap_or("").to_string(),
                    )
                })
        };
        let mut out = Vec::new();
        for cluster in self.changes.iter().filter(|c| c.addr.kind == Kind::Cluster) {
            let inside = |c: &&Change| c.lifecycle.deleted_with.as_ref() == Some(&cluster.addr);
            if let Some((live, target)) = version_diff(cluster) {
                let mut from = live.clone();
                for minor in minors_between(&live, &target) {
                    out.push(UpgradeStep {
                        addr: cluster.addr.clone(),
                        what: format!("control plane {from} → {minor}"),
                        why: "GKE upgrades a control plane one minor version at a time".into(),
                    });
                    from = minor;
                }
                out.push(UpgradeStep {
                    addr: cluster.addr.clone(),
                    what: format!("control plane {from} → {target}"),
                    why: "the blueprint's `[cluster] version`".into(),
                });
            }
            let pools: Vec<&Change> = self
                .changes
                .iter()
                .filter(inside)
                .filter(|c| c.addr.kind == Kind::NodePool && version_diff(c).is_some())
                .collect();
            for pool in &pools {
                let (live, target) = version_diff(pool).unwrap_or_default();
                out.push(UpgradeStep {
                    addr: pool.addr.clone(),
                    what: format!("nodes {live} → {target}"),
                    why: "after the control plane: a node pool is never newer than it".into(),
                });
            }
            if pools.is_empty() {
                continue;
            }
            for object in self.changes.iter().filter(inside).filter(|c| {
                c.addr.kind == Kind::Kubernetes
                    && matches!(c.action, Action::Create | Action::Update)
            }) {
                out.push(UpgradeStep {
                    addr: object.addr.clone(),
                    what: format!(
                        "{} on the upgraded nodes",
                        if object.action == Action::Create {
                            "created"
                        } else {
                            "updated"
                        }
                    ),
                    why: "after the node pools, so it rolls out once onto the new version".into(),
                });
            }
        }
        out
    }
}

/// A GPU node pool the plan replaces ([`Plan::gpu_replacements`]): its GPUs are down from the
/// old pool's delete until the new pool's nodes are up, and whether the new pool will get its
/// capacity back.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GpuReplacement {
    pub addr: Addr,
    /// The old pool's nodes (all zones) and each node's GPUs.
    pub nodes: u64,
    pub gpus_per_node: u64,
    pub gpu_type: String,
    /// `nodes × gpus_per_node`: the old pool's GPUs.
    pub gpus_down: u64,
    /// How the pool moves ([`moves`]).
    #[serde(flatten)]
    pub strategy: moves::Strategy,
    /// The GPUs that are at no time in a Ready pool while the move runs: none for create before
    /// destroy, a batch's for batches, the whole pool's when it is deleted first.
    pub gpus_at_risk: u64,
    /// `create_before_destroy`, `batched`, `delete_first` or `refused` (the strategy, as the
    /// order its steps run in).
    pub order: &'static str,
    /// The new pool's cloud id, when it stands beside the old one under a new name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub new_id: Option<String>,
    pub machine_type_before: String,
    pub machine_type_after: String,
    /// `confirmed` (preflight passed for the new pool), `refused` (a check of it failed:
    /// nothing is applied), `unknown` (a check could not be made) or `not_checked`
    /// (`--skip-preflight`).
    pub capacity: &'static str,
    /// The new pool's reservation room, per zone, as preflight read it.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub reservation: Vec<preflight::ReplacementRoom>,
    /// The new pool fits its reservation only because the old pool's delete frees the VMs first.
    pub only_after_delete: bool,
}

/// One step of a plan's upgrade order ([`Plan::upgrade_order`]).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct UpgradeStep {
    pub addr: Addr,
    /// `control plane 1.32.12-gke.1050000 → 1.33`, `nodes 1.33.5-gke.1080000 → 1.34`.
    pub what: String,
    pub why: String,
}

/// A plan saved against a format-1 state (plan files of formats 1 and 2), its addresses as
/// [`crate::state::migrate::upgrade`] renumbers the state's, so it applies to the upgraded state.
pub fn renumber_gpu_addresses(plan: &mut Plan) {
    for change in &mut plan.changes {
        change.addr = crate::state::migrate::renumbered(&change.addr);
        for dep in &mut change.dependencies {
            *dep = crate::state::migrate::renumbered(dep);
        }
        if let Some(with) = &mut change.lifecycle.deleted_with {
            *with = crate::state::migrate::renumbered(with);
        }
    }
    for drift in &mut plan.drift {
        drift.addr = crate::state::migrate::renumbered(&drift.addr);
    }
    for adoption in &mut plan.adoptions {
        adoption.addr = crate::state::migrate::renumbered(&adoption.addr);
        for dep in &mut adoption.dependencies {
            *dep = crate::state::migrate::renumbered(dep);
        }
    }
    if let Some(preflight) = &mut plan.preflight {
        for check in &mut preflight.checks {
            for addr in &mut check.for_resources {
                *addr = crate::state::migrate::renumbered(addr);
            }
        }
    }
}
