//! The executor's part of a node pool's move ([`crate::plan::moves`]): the new pool created beside
//! the old one, waited on until its nodes are Ready, the batches, and the old pool's delete only
//! once the new pool holds the nodes. The order between these steps lives in
//! [`crate::apply::schedule`] (rule 6).
//!
//! State through a move, each change saved at once (the sink writes the whole file atomically):
//! 1. before the new pool's create is journaled, the old pool's record moves from `addr` to
//!    [`retiring`]`(addr)` (one write: the old pool's cloud id is never unrecorded);
//! 2. the create is journaled and recorded under `addr` as any create (the new GKE name);
//! 3. batches: every `setSize` is journaled under the address of the pool it resizes, and its
//!    new size recorded in that pool's spec as soon as it is DONE;
//! 4. the old pool's delete (a step of its own, on the retiring address) first waits until the
//!    new pool, recorded and not tainted, has all its nodes Ready — on a run that continues an
//!    interrupted move too — then asks GKE to drain with the nodes' PodDisruptionBudgets
//!    honoured, then deletes, then forgets the retiring record.
//!
//! A killed apply is finished by the next: its plan sees the retiring record (deleted, once the
//! new pool is up) and the new pool (created, resumed from the journal, or grown in batches).

use super::{Executor, Operated, waited_for};
use crate::apply::Outcome;
use crate::cloud::retry::Look;
use crate::cloud::{CloudError, ErrorClass, Target, UpdateStep};
use crate::plan::moves::{PoolMove, Strategy, retiring, successor};
use crate::plan::{Action, Change, Plan};
use crate::resource::Addr;
use crate::resource::kinds::node_pool::NodePoolField;
use crate::state::PendingAction;
use std::sync::Arc;

impl Executor {
    /// `plan` with the delete of each side-by-side move's old pool (on its retiring address),
    /// unless the plan has one already (it continues a move).
    pub(super) async fn expand_moves(&self, plan: &Plan) -> Plan {
        let state = self.sink.snapshot().await;
        let mut plan = plan.clone();
        for m in plan.moves.clone() {
            let old = retiring(&m.pool);
            if !m.strategy.side_by_side() || m.continued || plan.change(&old).is_some() {
                continue;
            }
            let Some(change) = plan.change(&m.pool).cloned() else {
                continue;
            };
            let recorded = state
                .resources
                .get(&m.pool)
                .or_else(|| state.resources.get(&old));
            plan.changes.push(Change {
                addr: old,
                action: Action::Delete,
                id: m.old_id.clone(),
                before: recorded.map(|r| r.spec.clone()).or(change.before.clone()),
                after: None,
                diffs: vec![],
                reason: Some(format!("its nodes moved to the new pool of {}", m.pool)),
                dependencies: recorded.map(|r| r.dependencies.clone()).unwrap_or_default(),
                lifecycle: change.lifecycle.clone(),
            });
        }
        plan
    }

    /// The move of the pool `addr`, when the plan moves it beside its old one.
    pub(super) fn move_of<'p>(plan: &'p Plan, addr: &Addr) -> Option<&'p PoolMove> {
        plan.moves
            .iter()
            .find(|m| &m.pool == addr && m.strategy.side_by_side())
    }

    /// Step 1: the old pool's record moves to its retiring address (once).
    pub(super) async fn retire_old_pool(&self, addr: &Addr) {
        let old = retiring(addr);
        self.save(|s| {
            if !s.resources.contains_key(&old)
                && let Some(record) = s.resources.remove(addr)
            {
                s.resources.insert(old, record);
            }
        })
        .await;
    }

    /// The create of a moved pool: the new pool (with the first batch only, for a batched move),
    /// its nodes Ready, then the batches.
    pub(super) async fn create_moved(
        self: &Arc<Self>,
        target: &Target,
        change: &Change,
        m: &PoolMove,
    ) -> Outcome {
        self.retire_old_pool(&target.addr).await;
        if let Some(e) = self.state_error.lock().clone() {
            return Outcome::Failed(CloudError::new(ErrorClass::Other, e));
        }
        let mut first = target.clone();
        if let Strategy::Batched { batch_size } = m.strategy {
            let wanted = nodes_of(&target.spec);
            first.spec["node_count"] = serde_json::json!(batch_size.min(wanted));
        }
        let outcome = self.create(&first, change).await;
        if outcome != Outcome::Done && outcome != Outcome::Adopted {
            return outcome;
        }
        self.grow_in_batches(target, change, m).await
    }

    /// Waits until the new pool's nodes are Ready, then (batched) shrinks the old pool and grows
    /// the new one by the batch size until the new pool has all its nodes.
    pub(super) async fn grow_in_batches(
        self: &Arc<Self>,
        target: &Target,
        change: &Change,
        m: &PoolMove,
    ) -> Outcome {
        let wanted = nodes_of(&target.spec);
        let batch = match m.strategy {
            Strategy::Batched { batch_size } => batch_size.max(1),
            _ => wanted.max(1),
        };
        loop {
            let state = self.sink.snapshot().await;
            let have = state
                .resources
                .get(&target.addr)
                .map_or(0, |r| nodes_of(&r.spec));
            if let Err(outcome) = self.wait_ready(target, have).await {
                return outcome;
            }
            if have >= wanted {
                return Outcome::Done;
            }
            let old = retiring(&target.addr);
            if let Some(record) = state.resources.get(&old) {
                let left = nodes_of(&record.spec);
                if left > 0 {
                    let old_target = Target::recorded(&old, record, &state);
                    if let Err(outcome) = self
                        .resize(
                            &old_target,
                            &record.dependencies,
                            left.saturating_sub(batch),
                        )
                        .await
                    {
                        return outcome;
                    }
                }
            }
            let mut new_target = target.clone();
            if let Some(record) = state.resources.get(&target.addr) {
                new_target.outputs = record.outputs.clone();
            }
            if let Err(outcome) = self
                .resize(
                    &new_target,
                    &change.dependencies,
                    (have + batch).min(wanted),
                )
                .await
            {
                return outcome;
            }
        }
    }

    /// One `setSize` of a pool of the move to `nodes` per zone, journaled under its address and
    /// recorded in its spec once DONE.
    async fn resize(&self, target: &Target, deps: &[Addr], nodes: u64) -> Result<(), Outcome> {
        let mut sized = target.clone();
        sized.spec["node_count"] = serde_json::json!(nodes);
        let change = Change {
            addr: sized.addr.clone(),
            action: Action::Update,
            id: sized.id.clone(),
            before: None,
            after: Some(sized.spec.clone()),
            diffs: vec![],
            reason: None,
            dependencies: deps.to_vec(),
            lifecycle: sized.lifecycle.clone(),
        };
        let step = UpdateStep::of("setSize", &[NodePoolField::NodeCount]);
        self.reporter
            .step_progress(&target.addr, &format!("setSize {nodes}"));
        let sized = &sized;
        match self
            .operate(
                sized,
                &change,
                PendingAction::Update,
                || self.provider.update(sized, &step),
                |e, attempt| {
                    Box::pin(async move {
                        if self.can_retry(&e, attempt) {
                            return super::Recover::Retry;
                        }
                        super::Recover::End(self.failed(sized, e).await)
                    })
                },
            )
            .await
        {
            Operated::Done => {}
            Operated::OperationFailed(e) => {
                // The nodes it got stay; state says so at the next refresh.
                self.save(|s| s.clear_pending(&sized.addr)).await;
                return Err(Outcome::Failed(e));
            }
            Operated::Ended(outcome) => return Err(outcome),
        }
        let addr = sized.addr.clone();
        self.save(|s| {
            if let Some(r) = s.resources.get_mut(&addr) {
                r.spec["node_count"] = serde_json::json!(nodes);
                r.updated_at = super::now_rfc3339();
            }
            s.clear_pending(&addr);
        })
        .await;
        Ok(())
    }

    /// Waits until `nodes_per_zone` nodes of the pool in every zone of its spec are Ready, read
    /// through the cluster's Kubernetes API with the pool's GKE name.
    async fn wait_ready(&self, target: &Target, nodes_per_zone: u64) -> Result<(), Outcome> {
        let zones = target.spec["locations"]
            .as_array()
            .map_or(1, |z| z.len().max(1) as u64);
        let wanted = nodes_per_zone * zones;
        let state = self.sink.snapshot().await;
        let mut target = target.clone();
        if let Some(record) = state.resources.get(&target.addr) {
            target.context = state.context(&record.dependencies);
        }
        let target = &target;
        let waited = self
            .poller(target)
            .until(false, |_| async move {
                match self.provider.ready_nodes(target).await {
                    Ok(Some(ready)) if ready >= wanted => Look::Done(()),
                    Ok(Some(ready)) => {
                        self.reporter.step_progress(
                            &target.addr,
                            &format!("{ready} of {wanted} nodes Ready"),
                        );
                        Look::Pending
                    }
                    // Nodes that cannot be counted: the operation's DONE is all there is.
                    Ok(None) => Look::Done(()),
                    Err(e) if e.class.is_retryable() => Look::Pending,
                    Err(e) => Look::Failed(e),
                }
            })
            .await;
        waited_for(waited, || {
            format!("waiting for the nodes of {} to be Ready", target.id)
        })
    }

    /// The delete of a moved pool's old pool: only once the new pool is recorded, not tainted,
    /// and holds all its nodes Ready; then GKE's drain honours PodDisruptionBudgets, then the
    /// delete.
    pub(super) async fn delete_retired(
        self: &Arc<Self>,
        target: &Target,
        change: &Change,
    ) -> Outcome {
        let Some(new) = successor(&target.addr) else {
            return self.delete(target, change).await;
        };
        let state = self.sink.snapshot().await;
        let Some(record) = state.resources.get(&new).filter(|r| !r.tainted) else {
            return Outcome::Failed(
                CloudError::new(
                    ErrorClass::Other,
                    format!(
                        "{} is not deleted: its new pool `{new}` is not up (not recorded, or tainted)",
                        target.addr
                    ),
                )
                .with_hint("run `a3ctl apply` again: it creates the new pool first"),
            );
        };
        let new_target = Target::recorded(&new, record, &state);
        if let Err(outcome) = self.wait_ready(&new_target, nodes_of(&record.spec)).await {
            return outcome;
        }
        if nodes_of(&target.spec) > 0 {
            let step = UpdateStep {
                name: "update(nodeDrainConfig)".into(),
                fields: vec![],
                reaches: None,
            };
            match self
                .operate(
                    target,
                    change,
                    PendingAction::Update,
                    || self.provider.update(target, &step),
                    |e, attempt| {
                        Box::pin(async move {
                            if self.can_retry(&e, attempt) {
                                return super::Recover::Retry;
                            }
                            super::Recover::End(self.failed(target, e).await)
                        })
                    },
                )
                .await
            {
                Operated::Done => self.save(|s| s.clear_pending(&target.addr)).await,
                Operated::OperationFailed(e) => return self.failed(target, e).await,
                Operated::Ended(outcome) => return outcome,
            }
        }
        self.delete(target, change).await
    }
}

/// Nodes per zone of a node pool spec.
fn nodes_of(spec: &serde_json::Value) -> u64 {
    spec["node_count"].as_u64().unwrap_or(0)
}
