//! How a replaced node pool moves to its new pool without giving up capacity it cannot get back:
//! the strategy chosen per pool from what preflight found, and the GKE names of a pool's
//! generations. Carrying a move out lives in [`crate::apply`] (its schedule and executor).
//!
//! A GKE node pool's name is held by one pool at a time, so a new pool that is to stand beside
//! the old one needs a new name: the blueprint's pool name with a generation suffix, `a3mega` →
//! `a3mega-2` → `a3mega-3` (the base cut so the whole fits GKE's 40-character limit on pool names,
//! <https://cloud.google.com/kubernetes-engine/docs/reference/rest/v1/projects.locations.clusters.nodePools#NodePool>).
//! The blueprint address stays `node_pool.a3mega`; its record's id follows the cloud name, and the
//! planner keeps a recorded generation ([`follow_generations`]) instead of replacing it back.
//!
//! The strategies ([`Strategy`]), chosen by [`choose`] for each pool a plan replaces (not for a
//! pool replaced with its cluster, which goes with it):
//! - `create_before_destroy`: the reservation has free VMs (`count - inUseCount`) for the whole
//!   new pool beside the old one, or, for a pool without a reservation, preflight's quota checks
//!   (which count both pools at once) passed. The new pool is created, its create operation DONE
//!   and its nodes Ready, before the old pool's delete is sent.
//! - `batched(k)`: the reservation holds only `k` (> 0) more VMs: the new pool is created with `k`
//!   nodes per zone, then the old pool shrinks by `k` and the new one grows by `k` (`setSize`),
//!   until the old pool is empty, then it is deleted. No more than `k` nodes per zone are ever
//!   between the pools, as in a surge upgrade; `k` is the free VMs, at most [`DEFAULT_BATCH_CAP`]
//!   unless `--batch-size` says otherwise.
//! - `delete_first`: the old pool is deleted, then the new one created under the same name
//!   (today's order): only with an explicit `--delete-first node_pool.X`, whose confirmation names
//!   the GPUs at risk.
//! - `refused`: none of the above fits (no free VM in the reservation and no opt-in): the plan
//!   fails before any call, naming the choices ([`refusal`]).
//!
//! While a move runs, state records both pools: the old one under the address
//! [`retiring`]`(addr)` (`node_pool.a3mega~old`), the new one under `addr`. A plan made while one
//! is recorded (an apply killed mid-move) deletes the old one only after the new one holds its
//! nodes, continuing a batched move where it stopped.

use super::{Action, Plan};
use crate::resource::kinds::node_pool::NodePoolSpec;
use crate::resource::{Addr, Desired, Kind};
use crate::state::State;
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;

/// GKE's limit on a node pool's name.
pub const MAX_POOL_NAME: usize = 40;

/// The most nodes per zone a batch moves at once by default (8 A3 nodes: 64 GPUs).
pub const DEFAULT_BATCH_CAP: u64 = 8;

/// What marks the address of a pool being moved away from.
const RETIRING: &str = "~old";

/// How a replaced pool gets to its new pool.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "strategy")]
pub enum Strategy {
    CreateBeforeDestroy,
    Batched { batch_size: u64 },
    DeleteFirst,
    Refused,
}

impl Strategy {
    /// The new pool stands beside the old one, under a new name.
    pub fn side_by_side(self) -> bool {
        matches!(
            self,
            Strategy::CreateBeforeDestroy | Strategy::Batched { .. }
        )
    }
}

/// One pool's move, as the plan decided it (saved in the plan file, so `apply PLANFILE` does the
/// same).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PoolMove {
    pub pool: Addr,
    #[serde(flatten)]
    pub strategy: Strategy,
    /// The old pool's cloud id.
    pub old_id: String,
    /// The new pool's cloud id (the old one's for `delete_first`).
    pub new_id: String,
    /// Nodes per zone of the old pool, and its zones.
    pub nodes_per_zone: u64,
    pub zones: u64,
    pub gpus_per_node: u64,
    /// Free VMs of the new pool's reservation now (fewest over its zones), when it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub free_now: Option<u64>,
    /// A move an interrupted apply started, continued by this plan.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub continued: bool,
}

/// The user's say in moves: pools allowed to go down first, and the batch size.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MoveOptions {
    pub delete_first: BTreeSet<Addr>,
    pub batch_size: Option<u64>,
}

/// The address the old pool of a move is recorded under while the move runs.
pub fn retiring(addr: &Addr) -> Addr {
    Addr::new(addr.kind, format!("{}{RETIRING}", addr.name))
}

/// The pool a retiring address is being moved to.
pub fn successor(addr: &Addr) -> Option<Addr> {
    (addr.kind == Kind::NodePool)
        .then(|| addr.name.strip_suffix(RETIRING))
        .flatten()
        .map(|name| Addr::new(addr.kind, name))
}

/// The generation of `name` as a generation of `base` (`a3mega` is 1, `a3mega-2` is 2), if it is
/// one.
pub fn generation(name: &str, base: &str) -> Option<u64> {
    if name == base {
        return Some(1);
    }
    (2..)
        .take(10_000)
        .find(|n| name == generation_name(base, *n))
}

/// `base` as its generation `n` (`a3mega-2`), the base cut so the name fits [`MAX_POOL_NAME`].
pub fn generation_name(base: &str, n: u64) -> String {
    if n <= 1 {
        return base.to_string();
    }
    let suffix = format!("-{n}");
    let keep = MAX_POOL_NAME.saturating_sub(suffix.len()).min(base.len());
    format!("{}{suffix}", base[..keep].trim_end_matches('-'))
}

/// The name after `current` (a generation of `base`; anything else counts as the first).
pub fn next_name(current: &str, base: &str) -> String {
    generation_name(base, generation(current, base).unwrap_or(1) + 1)
}

fn with_pool_name(id: &str, name: &str) -> String {
    match id.rsplit_once("/nodePools/") {
        Some((cluster, _)) => format!("{cluster}/nodePools/{name}"),
        None => id.to_string(),
    }
}

fn pool_name(id: &str) -> &str {
    id.rsplit('/').next().unwrap_or(id)
}

/// Keeps each desired node pool on the generation state records for it: a pool that was moved
/// (`a3mega-2`) is the blueprint's `a3mega`, not a difference. A pool whose old generation is
/// retiring and that is not recorded yet (an apply killed before the new pool's create was
/// recorded) takes the generation after the retiring one, the name the killed create used.
pub fn follow_generations(desired: &mut [Desired], state: &State) {
    for d in desired.iter_mut().filter(|d| d.addr.kind == Kind::NodePool) {
        let base = d.spec["name"].as_str().unwrap_or_default().to_string();
        let name = match (
            state.resources.get(&d.addr),
            state.resources.get(&retiring(&d.addr)),
        ) {
            (Some(record), _) => Some(pool_name(&record.id).to_string()),
            (None, Some(old)) => Some(next_name(pool_name(&old.id), &base)),
            (None, None) => None,
        };
        if let Some(name) = name.filter(|n| generation(n, &base).is_some() && *n != base) {
            d.id = with_pool_name(&d.id, &name);
            d.spec["name"] = serde_json::json!(name);
        }
    }
}

/// Why a plan cannot move a pool.
#[derive(Debug, Clone, PartialEq)]
pub struct Refusal {
    pub message: String,
    pub causes: Vec<String>,
    pub hint: String,
}

/// Chooses the strategy of every pool `plan` replaces (or whose move an interrupted apply left
/// half done), from the rooms preflight recorded in the plan, and renames the new pools that
/// stand beside their old ones. A plan that already carries its moves (a saved plan) keeps them.
pub fn choose(plan: &mut Plan, state: &State, options: &MoveOptions) {
    if plan.destroy || !plan.moves.is_empty() {
        return;
    }
    let replaced_containers: BTreeSet<Addr> = plan
        .changes
        .iter()
        .filter(|c| matches!(c.action, Action::Replace | Action::Create))
        .map(|c| c.addr.clone())
        .collect();
    let spec = |v: &Option<serde_json::Value>| {
        v.as_ref()
            .and_then(|v| serde_json::from_value::<NodePoolSpec>(v.clone()).ok())
    };
    let mut moves = Vec::new();
    for change in plan.changes.iter_mut() {
        if change.addr.kind != Kind::NodePool || successor(&change.addr).is_some() {
            continue;
        }
        let with_container = change
            .lifecycle
            .deleted_with
            .as_ref()
            .is_some_and(|c| replaced_containers.contains(c));
        let (Some(before), Some(after)) = (spec(&change.before), spec(&change.after)) else {
            continue;
        };
        let rooms: Vec<_> = plan
            .preflight
            .iter()
            .flat_map(|p| p.replacements.iter())
            .filter(|r| r.pool == change.addr)
            .collect();
        let free_now = rooms.iter().map(|r| r.free_now).min();
        let cap = options.batch_size.unwrap_or(DEFAULT_BATCH_CAP).max(1);
        let mut pool_move = PoolMove {
            pool: change.addr.clone(),
            strategy: Strategy::DeleteFirst,
            old_id: change.id.clone(),
            new_id: change.id.clone(),
            nodes_per_zone: before.node_count,
            zones: before.locations.len().max(1) as u64,
            gpus_per_node: before
                .accelerator
                .as_ref()
                .map_or(0, |a| a.count.max(0) as u64),
            free_now,
            continued: false,
        };
        let old_recorded = state.resources.get(&retiring(&change.addr));
        match change.action {
            Action::Replace if !with_container => {
                pool_move.strategy = if options.delete_first.contains(&change.addr) {
                    Strategy::DeleteFirst
                } else if plan.preflight.is_none() || after.consumed_reservation().is_none() {
                    // Unchecked, or quotas only: preflight counted both pools at once.
                    Strategy::CreateBeforeDestroy
                } else {
                    let needed = rooms.iter().map(|r| r.needed).max().unwrap_or(0);
                    match free_now {
                        // The reservation could not be read: preflight says why.
                        None => Strategy::CreateBeforeDestroy,
                        Some(free) if free >= needed => Strategy::CreateBeforeDestroy,
                        Some(0) => Strategy::Refused,
                        Some(free) => Strategy::Batched {
                            batch_size: free.min(cap),
                        },
                    }
                };
                if pool_move.strategy.side_by_side() {
                    let name = next_name(pool_name(&change.id), &after.name);
                    pool_move.new_id = with_pool_name(&change.id, &name);
                    change.id = pool_move.new_id.clone();
                    if let Some(after) = change.after.as_mut() {
                        after["name"] = serde_json::json!(name);
                    }
                }
            }
            Action::Update | Action::NoOp if old_recorded.is_some() => {
                // A move an interrupted apply left: the old pool is retiring.
                let old = old_recorded.expect("checked above");
                pool_move.old_id = old.id.clone();
                pool_move.continued = true;
                let old_nodes = spec(&Some(old.spec.clone())).map_or(0, |s| s.node_count);
                pool_move.nodes_per_zone = old_nodes;
                pool_move.strategy = if after.node_count > before.node_count {
                    Strategy::Batched {
                        batch_size: free_now.unwrap_or(1).clamp(1, cap),
                    }
                } else {
                    Strategy::CreateBeforeDestroy
                };
            }
            _ => continue,
        }
        moves.push(pool_move);
    }
    plan.moves = moves;
}

/// The refusal of a plan with a pool no strategy can move, naming the choices.
pub fn refusal(plan: &Plan, blueprint: &str) -> Option<Refusal> {
    let refused: Vec<&PoolMove> = plan
        .moves
        .iter()
        .filter(|m| m.strategy == Strategy::Refused)
        .collect();
    if refused.is_empty() {
        return None;
    }
    let mut causes = Vec::new();
    let mut hints = Vec::new();
    for m in &refused {
        let nodes = m.nodes_per_zone * m.zones;
        let gpus = nodes * m.gpus_per_node;
        let rooms: Vec<_> = plan
            .preflight
            .iter()
            .flat_map(|p| p.replacements.iter())
            .filter(|r| r.pool == m.pool)
            .collect();
        for room in &rooms {
            causes.push(format!(
                "{}: reservation {} ({}) has {} free VM(s); the new pool needs {} beside the old pool's {nodes} node(s) ({gpus} GPUs)",
                m.pool, room.reservation, room.zone, room.free_now, room.needed
            ));
        }
        if let Some(room) = rooms.first() {
            hints.push(format!(
                "resize the reservation so both pools fit (its VM count plus {}): gcloud compute reservations update {} --zone={} --vm-count=COUNT, then plan again",
                room.needed.saturating_sub(room.free_now),
                room.reservation,
                room.zone
            ));
            hints.push(format!(
                "or name a second reservation for the pool (`reservation = \"NAME\"` in its [[gpu_pool]] of {blueprint})"
            ));
            hints.push(
                "or free even one VM of it: the pool then moves in batches of the free VMs (--batch-size K to choose fewer)".to_string(),
            );
        }
        hints.push(format!(
            "or delete the old pool first, taking its {gpus} GPUs down until the new pool is up: `a3ctl apply --delete-first {} {blueprint}`",
            m.pool
        ));
    }
    Some(Refusal {
        message: format!(
            "No way to replace {} without giving up its GPUs; nothing was changed",
            refused
                .iter()
                .map(|m| format!("`{}`", m.pool))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        causes,
        hint: hints.join("\n"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generations_count_up_and_fit_gke_names() {
        assert_eq!(next_name("a3mega", "a3mega"), "a3mega-2");
        assert_eq!(next_name("a3mega-2", "a3mega"), "a3mega-3");
        assert_eq!(next_name("a3mega-9", "a3mega"), "a3mega-10");
        assert_eq!(generation("a3mega-10", "a3mega"), Some(10));
        assert_eq!(generation("a3mega-x", "a3mega"), None);
        let long = "p".repeat(40);
        let second = next_name(&long, &long);
        assert_eq!(second.len(), 40);
        assert!(second.ends_with("-2"));
        assert_eq!(generation(&second, &long), Some(2));
        let addr = Addr::new(Kind::NodePool, "a3mega");
        assert_eq!(retiring(&addr).to_string(), "node_pool.a3mega~old");
        assert_eq!(successor(&retiring(&addr)), Some(addr.clone()));
        assert_eq!(successor(&addr), None);
    }
}
