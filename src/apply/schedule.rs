//! Turns a plan into steps and the order between them. Pure bookkeeping, no I/O.
//!
//! Each change becomes one step, except a replacement, which becomes a delete step followed by a
//! create step (names are user-chosen, so the old object must go first). A step waits for:
//! 1. create/update of X: the create/update of every resource X will depend on, and X's own
//!    delete when X is being replaced;
//! 2. delete of X: the delete of every resource that recorded X as a dependency (a network goes
//!    after its subnets), except one deleted *with* X (a node pool goes with its cluster: it waits
//!    for the cluster's delete instead and makes no call of its own; so does one whose container
//!    is already gone or is created anew);
//! 3. delete of X that is not part of a replacement: also every create/update of a resource that
//!    used to depend on X, so references are removed before the referenced thing is deleted.
//!
//! 4. create/update of a Kubernetes object inside cluster C: the GKE version upgrade of every
//!    node pool of C the plan upgrades, so what is installed onto the nodes (the NCCL installer
//!    of a new stack) rolls out onto upgraded nodes, once (an upgrade order: control plane, pools,
//!    installers); and the node-label update of every pool of C the plan relabels, so a Kueue
//!    flavor never selects a label the nodes do not carry yet.
//!
//! 5. queues follow nodes ([`crate::plan::QuotaLink`]): when a plan updates (resizes), creates or
//!    deletes a GPU pool and creates or updates the Kueue ClusterQueue with a different quota for
//!    that pool's flavor, the quota never exceeds the nodes that exist. A raised quota (a queue
//!    created with quota for the pool counts as raised from 0) waits for the pool's create or
//!    update (its operation DONE), so a failed create or resize skips it and the quota stays at
//!    what exists: on a first apply whose GPU pool stopped part-way there is no queue yet, and the
//!    apply that completes the pool creates it; a lowered quota goes first and the pool's update
//!    or delete waits for it (and is skipped if it fails). Kueue would otherwise admit
//!    Workloads onto nodes that do not exist, whose pods stay Pending. This is a rule of the
//!    schedule, not an edge of the resource graph: the graph declares what depends on what
//!    whatever the sizes, while the direction depends on the plan's old and new quotas. A lowered
//!    quota drops the rule-4 wait for that pool (the queue runs on no node); were the pool's
//!    update still to precede the queue another way (the Kueue release waiting for its upgrade),
//!    that order stands rather than a cycle.
//!
//! 6. a node pool that moves side by side ([`crate::plan::moves`]: create before destroy, or in
//!    batches) is one create step under its new GKE name (the batches run inside it), not a
//!    delete and a create; the delete of its old pool, recorded under the retiring address
//!    (`node_pool.a3mega~old`), waits for that step, and for the create or update of the new pool
//!    in a plan that continues an interrupted move. A failed create or grow therefore skips the
//!    old pool's delete: it keeps its remaining nodes.
//!
//! A resource the plan leaves alone but that has an operation journaled by an interrupted run gets
//! a resume step (waiting on that operation), which the steps of its dependents wait for like a
//! create; a resource with a step of its own resumes its operation at the start of that step.
//!
//! A failed step fails nothing but its transitive dependents, which are skipped.

use crate::plan::{Action, Plan};
use crate::resource::{Addr, Kind};
use crate::state::State;
use std::collections::{BTreeMap, BTreeSet};

/// What one step does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum StepKind {
    Create,
    Update,
    Delete,
    /// Deleted by deleting the resource it lives in: no call, just forget it afterwards.
    DeletedWith,
    /// Left in the cloud (`lifecycle.keep_on_destroy`: an enabled API): no call, the record is
    /// forgotten.
    Forget,
    /// Waits on an operation an interrupted run journaled, and records its result.
    Resume,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    pub addr: Addr,
    pub kind: StepKind,
    /// Index of the plan change this step carries out.
    pub change: usize,
    /// Steps (indices) that must succeed first.
    pub after: BTreeSet<usize>,
}

/// Builds the steps of `plan` against the state it was made from.
pub fn steps(plan: &Plan, state: &State) -> Vec<Step> {
    let mut steps: Vec<Step> = Vec::new();
    let mut forward: BTreeMap<Addr, usize> = BTreeMap::new();
    let mut deletes: BTreeMap<Addr, usize> = BTreeMap::new();
    for (i, change) in plan.changes.iter().enumerate() {
        let mut push = |kind| {
            steps.push(Step {
                addr: change.addr.clone(),
                kind,
                change: i,
                after: BTreeSet::new(),
            });
            steps.len() - 1
        };
        match change.action {
            Action::NoOp => {
                if state
                    .pending_for(&change.addr)
                    .is_some_and(|p| p.operation.is_some())
                {
                    forward.insert(change.addr.clone(), push(StepKind::Resume));
                }
            }
            Action::Create => {
                forward.insert(change.addr.clone(), push(StepKind::Create));
            }
            Action::Update => {
                forward.insert(change.addr.clone(), push(StepKind::Update));
            }
            Action::Delete if change.lifecycle.keep_on_destroy => {
                push(StepKind::Forget);
            }
            Action::Delete => {
                deletes.insert(change.addr.clone(), push(StepKind::Delete));
            }
            Action::Replace if side_by_side(plan, &change.addr) => {
                forward.insert(change.addr.clone(), push(StepKind::Create));
            }
            Action::Replace => {
                deletes.insert(change.addr.clone(), push(StepKind::Delete));
                forward.insert(change.addr.clone(), push(StepKind::Create));
            }
        }
    }

    // 6. The old pool of a move goes once its new pool is up.
    for (addr, &d) in &deletes {
        if let Some(&j) = crate::plan::moves::successor(addr).and_then(|s| forward.get(&s)) {
            steps[d].after.insert(j);
        }
    }

    let recorded = |addr: &Addr| -> Vec<Addr> {
        state
            .resources
            .get(addr)
            .map(|r| r.dependencies.clone())
            .or_else(|| state.pending_for(addr).map(|p| p.dependencies.clone()))
            // The old pool of a move this plan starts is still recorded under the pool's own
            // address: what it uses (its GPU subnets) waits for its delete.
            .or_else(|| {
                crate::plan::moves::successor(addr)
                    .and_then(|pool| state.resources.get(&pool))
                    .map(|r| r.dependencies.clone())
            })
            // Neither recorded nor journaled: nothing of it exists to depend on anything.
            .unwrap_or_default()
    };

    // A delete subsumed by its container's delete makes no call; nor does the delete of what
    // lived in a container that is already gone (no longer recorded: an interrupted destroy
    // deleted it) or is being created anew (its old self, and everything in it, is gone).
    for &d in deletes.values() {
        let change = &plan.changes[steps[d].change];
        let Some(container) = &change.lifecycle.deleted_with else {
            continue;
        };
        if let Some(&c) = deletes.get(container) {
            steps[d].kind = StepKind::DeletedWith;
            steps[d].after.insert(c);
        } else if !state.resources.contains_key(container)
            || plan.changes.iter().any(|c| {
                &c.addr == container && matches!(c.action, Action::Create | Action::Replace)
            })
        {
            steps[d].kind = StepKind::DeletedWith;
        }
    }

    // Node pools the plan upgrades or relabels, by their cluster.
    let upgraded_pools: Vec<(usize, &Addr)> = steps
        .iter()
        .enumerate()
        .filter_map(|(j, step)| {
            let change = &plan.changes[step.change];
            let upgrade = step.kind == StepKind::Update
                && change.addr.kind == Kind::NodePool
                && change
                    .diffs
                    .iter()
                    .any(|d| d.field == "version" || d.field == "node_labels");
            upgrade.then_some((j, change.lifecycle.deleted_with.as_ref()?))
        })
        .collect();

    for i in 0..steps.len() {
        let addr = steps[i].addr.clone();
        let change = &plan.changes[steps[i].change];
        match steps[i].kind {
            StepKind::Create | StepKind::Update => {
                for dep in &change.dependencies {
                    if let Some(&j) = forward.get(dep) {
                        steps[i].after.insert(j);
                    }
                }
                if addr.kind == Kind::Kubernetes
                    && let Some(cluster) = &change.lifecycle.deleted_with
                {
                    for (j, _) in upgraded_pools.iter().filter(|(_, c)| *c == cluster) {
                        steps[i].after.insert(*j);
                    }
                }
                if let Some(&j) = deletes.get(&addr) {
                    steps[i].after.insert(j);
                }
            }
            StepKind::Delete => {
                let replacing = change.action == Action::Replace;
                for (other, &j) in &deletes {
                    if other == &addr || j == i {
                        continue;
                    }
                    let depends_on_me = recorded(other).contains(&addr);
                    let with_me = plan.changes[steps[j].change]
                        .lifecycle
                        .deleted_with
                        .as_ref()
                        == Some(&addr)
                        && steps[j].kind == StepKind::DeletedWith;
                    if depends_on_me && !with_me {
                        steps[i].after.insert(j);
                    }
                }
                if !replacing {
                    for (other, &j) in &forward {
                        // A pool that moves side by side still holds what its old pool uses
                        // (recorded under the retiring address during the move) until the
                        // move's step deletes the old pool: a GPU subnet its nodes have NICs in
                        // cannot go before (Compute refuses: `resourceInUseByAnotherResource`).
                        let retiring = crate::plan::moves::retiring(other);
                        if recorded(other).contains(&addr) || recorded(&retiring).contains(&addr) {
                            steps[i].after.insert(j);
                        }
                    }
                }
            }
            StepKind::DeletedWith | StepKind::Forget | StepKind::Resume => {}
        }
    }

    // 5. Queues follow nodes.
    for link in plan.quota_links() {
        let step = |addr: &Addr, kinds: &[StepKind]| {
            steps
                .iter()
                .position(|s| &s.addr == addr && kinds.contains(&s.kind))
        };
        let pool_kinds: &[StepKind] = if link.grows {
            &[StepKind::Create, StepKind::Update]
        } else {
            // A pool deleted with its cluster goes with everything in it.
            &[StepKind::Update, StepKind::Delete]
        };
        let (Some(queue), Some(pool)) = (
            step(&link.queue, &[StepKind::Create, StepKind::Update]),
            step(&link.pool, pool_kinds),
        ) else {
            continue;
        };
        if link.grows {
            steps[queue].after.insert(pool);
        } else {
            // The queue does not need the pool's upgraded nodes (rule 4): its quota goes first.
            steps[queue].after.remove(&pool);
            if !waits_for(&steps, queue, pool) {
                steps[pool].after.insert(queue);
            }
        }
    }
    steps
}

/// Whether the plan moves the pool at `addr` to a new pool beside the old one.
fn side_by_side(plan: &Plan, addr: &Addr) -> bool {
    plan.moves
        .iter()
        .any(|m| &m.pool == addr && m.strategy.side_by_side() && !m.continued)
}

/// Whether step `i` waits for step `j`, directly or not.
fn waits_for(steps: &[Step], i: usize, j: usize) -> bool {
    let mut seen = BTreeSet::new();
    let mut frontier = vec![i];
    while let Some(at) = frontier.pop() {
        for &k in &steps[at].after {
            if k == j {
                return true;
            }
            if seen.insert(k) {
                frontier.push(k);
            }
        }
    }
    false
}

/// Every step that (transitively) waits for `failed`.
pub fn dependents_of(steps: &[Step], failed: usize) -> BTreeSet<usize> {
    let mut out = BTreeSet::new();
    let mut frontier = vec![failed];
    while let Some(f) = frontier.pop() {
        for (i, s) in steps.iter().enumerate() {
            if s.after.contains(&f) && out.insert(i) {
                frontier.push(i);
            }
        }
    }
    out
}

/// The critical path's length in steps ordered by `weight` (used by the benchmark's lower bound).
pub fn critical_path(steps: &[Step], weight: impl Fn(&Step) -> f64) -> f64 {
    let mut finish: Vec<Option<f64>> = vec![None; steps.len()];
    fn visit(
        i: usize,
        steps: &[Step],
        weight: &dyn Fn(&Step) -> f64,
        finish: &mut Vec<Option<f64>>,
    ) -> f64 {
        if let Some(f) = finish[i] {
            return f;
        }
        let start = steps[i]
            .after
            .iter()
            .map(|&j| visit(j, steps, weight, finish))
            .fold(0.0, f64::max);
        let f = start + weight(&steps[i]);
        finish[i] = Some(f);
        f
    }
    (0..steps.len())
        .map(|i| visit(i, steps, &weight, &mut finish))
        .fold(0.0, f64::max)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::{Change, PLAN_FORMAT};
    use crate::resource::Lifecycle;
    use crate::state::Record;
    use serde_json::json;

    fn change(addr: &Addr, action: Action, deps: &[&Addr], deleted_with: Option<&Addr>) -> Change {
        Change {
            addr: addr.clone(),
            action,
            id: addr.to_string(),
            before: None,
            after: Some(json!({})),
            diffs: vec![],
            reason: None,
            dependencies: deps.iter().map(|a| (*a).clone()).collect(),
            lifecycle: Lifecycle {
                deleted_with: deleted_with.cloned(),
                ..Default::default()
            },
        }
    }

    fn record(state: &mut State, addr: &Addr, deps: &[&Addr]) {
        state.resources.insert(
            addr.clone(),
            Record {
                kind: addr.kind,
                id: addr.to_string(),
                spec: json!({}),
                outputs: json!({}),
                dependencies: deps.iter().map(|a| (*a).clone()).collect(),
                tainted: false,
                lifecycle: Lifecycle::default(),
                updated_at: String::new(),
            },
        );
    }

    fn plan(changes: Vec<Change>) -> Plan {
        Plan {
            format: PLAN_FORMAT,
            blueprint: "bp".into(),
            lineage: "l".into(),
            serial: 0,
            destroy: false,
            changes,
            drift: vec![],
            versions: vec![],
            adoptions: vec![],
            preflight: None,
            notes: vec![],
            moves: vec![],
        }
    }

    #[test]
    fn destroy_runs_in_reverse_and_cluster_subsumes_its_pools() {
        let net = Addr::new(Kind::Network, "primary");
        let subnet = Addr::new(Kind::Subnetwork, "primary");
        let cluster = Addr::new(Kind::Cluster, "main");
        let pool = Addr::new(Kind::NodePool, "gpu");
        let mut state = State::new("bp", "l".into());
        record(&mut state, &net, &[]);
        record(&mut state, &subnet, &[&net]);
        record(&mut state, &cluster, &[&subnet]);
        record(&mut state, &pool, &[&cluster]);
        let p = plan(vec![
            change(&net, Action::Delete, &[], None),
            change(&subnet, Action::Delete, &[&net], None),
            change(&cluster, Action::Delete, &[&subnet], None),
            change(&pool, Action::Delete, &[&cluster], Some(&cluster)),
        ]);
        let s = steps(&p, &state);
        let idx = |a: &Addr| s.iter().position(|x| &x.addr == a).unwrap();
        assert!(s[idx(&net)].after.contains(&idx(&subnet)));
        assert!(s[idx(&subnet)].after.contains(&idx(&cluster)));
        assert_eq!(s[idx(&pool)].kind, StepKind::DeletedWith);
        assert!(s[idx(&pool)].after.contains(&idx(&cluster)));
        assert!(
            !s[idx(&cluster)].after.contains(&idx(&pool)),
            "the cluster must not wait for its pools"
        );
    }

    #[test]
    fn an_upgrade_runs_control_plane_then_pools_then_what_lives_on_the_nodes() {
        let cluster = Addr::new(Kind::Cluster, "main");
        let gpu = Addr::new(Kind::NodePool, "gpu");
        let system = Addr::new(Kind::NodePool, "system");
        let installer = Addr::new(Kind::Kubernetes, "nccl-installer");
        let mut state = State::new("bp", "l".into());
        for addr in [&cluster, &gpu, &system, &installer] {
            record(&mut state, addr, &[]);
        }
        let upgrade = |mut c: Change| {
            c.diffs.push(crate::resource::FieldDiff {
                field: "version".into(),
                before: json!("1.33.5-gke.1080000"),
                after: json!("1.34"),
                forces_replacement: false,
            });
            c
        };
        let p = plan(vec![
            upgrade(change(&cluster, Action::Update, &[], None)),
            upgrade(change(&gpu, Action::Update, &[&cluster], Some(&cluster))),
            // The system pool changes something else: nothing waits for it.
            change(&system, Action::Update, &[&cluster], Some(&cluster)),
            change(&installer, Action::Update, &[&cluster], Some(&cluster)),
        ]);
        let s = steps(&p, &state);
        let idx = |a: &Addr| s.iter().position(|x| &x.addr == a).unwrap();
        assert!(s[idx(&gpu)].after.contains(&idx(&cluster)));
        assert_eq!(
            s[idx(&installer)].after,
            BTreeSet::from([idx(&cluster), idx(&gpu)])
        );
    }

    #[test]
    fn a_flavor_changes_after_its_pools_nodes_are_relabelled() {
        let cluster = Addr::new(Kind::Cluster, "main");
        let gpu = Addr::new(Kind::NodePool, "gpu");
        let flavor = Addr::new(Kind::Kubernetes, "resourceflavor/-/gpu");
        let mut state = State::new("bp", "l".into());
        for addr in [&cluster, &gpu, &flavor] {
            record(&mut state, addr, &[]);
        }
        let mut relabel = change(&gpu, Action::Update, &[&cluster], Some(&cluster));
        relabel.diffs.push(crate::resource::FieldDiff {
            field: "node_labels".into(),
            before: json!(null),
            after: json!({"a3ctl.dev/pool": "gpu"}),
            forces_replacement: false,
        });
        let p = plan(vec![
            relabel,
            change(&flavor, Action::Update, &[&cluster], Some(&cluster)),
        ]);
        let s = steps(&p, &state);
        let idx = |a: &Addr| s.iter().position(|x| &x.addr == a).unwrap();
        assert_eq!(s[idx(&flavor)].after, BTreeSet::from([idx(&gpu)]));
    }

    #[test]
    fn replacement_deletes_first_and_updates_come_before_deletes() {
        let net = Addr::new(Kind::Network, "a");
        let policy = Addr::new(Kind::ResourcePolicy, "p");
        let pool = Addr::new(Kind::NodePool, "gpu");
        let mut state = State::new("bp", "l".into());
        record(&mut state, &net, &[]);
        record(&mut state, &policy, &[]);
        record(&mut state, &pool, &[&policy]);
        let p = plan(vec![
            change(&net, Action::Replace, &[], None),
            change(&pool, Action::Update, &[], None),
            change(&policy, Action::Delete, &[], None),
        ]);
        let s = steps(&p, &state);
        let create_net = s
            .iter()
            .position(|x| x.addr == net && x.kind == StepKind::Create)
            .unwrap();
        let delete_net = s
            .iter()
            .position(|x| x.addr == net && x.kind == StepKind::Delete)
            .unwrap();
        assert!(s[create_net].after.contains(&delete_net));
        let update_pool = s.iter().position(|x| x.addr == pool).unwrap();
        let delete_policy = s.iter().position(|x| x.addr == policy).unwrap();
        assert!(
            s[delete_policy].after.contains(&update_pool),
            "the pool drops its reference first"
        );
        assert_eq!(
            dependents_of(&s, delete_net),
            [create_net].into_iter().collect()
        );
    }

    #[test]
    fn a_raised_quota_waits_for_the_resize_and_a_lowered_one_goes_first() {
        let cluster = Addr::new(Kind::Cluster, "main");
        let grown = Addr::new(Kind::NodePool, "a");
        let shrunk = Addr::new(Kind::NodePool, "b");
        let queue: Addr = "k8s.clusterqueue/-/q".parse().unwrap();
        let mut state = State::new("bp", "l".into());
        for addr in [&cluster, &grown, &shrunk, &queue] {
            record(&mut state, addr, &[]);
        }
        let quotas = |a: i64, b: i64| {
            json!({"object": {"spec": {"resourceGroups": [{"flavors": [
                {"name": "a", "resources": [{"name": "nvidia.com/gpu", "nominalQuota": a}]},
                {"name": "b", "resources": [{"name": "nvidia.com/gpu", "nominalQuota": b}]},
            ]}]}}})
        };
        let mut q = change(&queue, Action::Update, &[], Some(&cluster));
        q.before = Some(quotas(16, 32));
        q.after = Some(quotas(32, 16));
        // b is upgraded too: rule 4 would have the queue wait for it.
        let mut b = change(&shrunk, Action::Update, &[&cluster], Some(&cluster));
        b.diffs.push(crate::resource::FieldDiff {
            field: "version".into(),
            before: json!("1.33"),
            after: json!("1.34"),
            forces_replacement: false,
        });
        let p = plan(vec![
            q,
            change(&grown, Action::Update, &[&cluster], Some(&cluster)),
            b,
        ]);
        let s = steps(&p, &state);
        let idx = |a: &Addr| s.iter().position(|x| &x.addr == a).unwrap();
        assert_eq!(s[idx(&queue)].after, BTreeSet::from([idx(&grown)]));
        assert!(s[idx(&shrunk)].after.contains(&idx(&queue)));
        assert_eq!(
            dependents_of(&s, idx(&grown)),
            BTreeSet::from([idx(&queue), idx(&shrunk)])
        );
    }

    #[test]
    fn a_pool_removed_from_the_blueprint_leaves_the_queue_before_it_is_deleted() {
        let cluster = Addr::new(Kind::Cluster, "main");
        let pool = Addr::new(Kind::NodePool, "a");
        let queue: Addr = "k8s.clusterqueue/-/q".parse().unwrap();
        let mut state = State::new("bp", "l".into());
        record(&mut state, &cluster, &[]);
        record(&mut state, &pool, &[&cluster]);
        record(&mut state, &queue, &[&cluster]);
        let mut q = change(&queue, Action::Update, &[&cluster], Some(&cluster));
        q.before = Some(json!({"object": {"spec": {"resourceGroups": [{"flavors": [
            {"name": "a", "resources": [{"name": "nvidia.com/gpu", "nominalQuota": 16}]},
        ]}]}}}));
        q.after = Some(json!({"object": {"spec": {"resourceGroups": [{"flavors": []}]}}}));
        let p = plan(vec![
            q,
            change(&pool, Action::Delete, &[&cluster], Some(&cluster)),
        ]);
        let s = steps(&p, &state);
        let idx = |a: &Addr| s.iter().position(|x| &x.addr == a).unwrap();
        assert_eq!(s[idx(&pool)].kind, StepKind::Delete);
        assert!(s[idx(&pool)].after.contains(&idx(&queue)));
        assert!(s[idx(&queue)].after.is_empty());
    }
}
