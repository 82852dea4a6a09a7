//! What an apply of the blueprint `a3ctl init` wrote would do, and how long it should take.
//!
//! **Against what.** When the blueprint's state is a local file that exists (`[state] path`, or
//! its copy under `state/sandbox/` that `--sandbox` runs keep), the blueprint's graph is planned
//! against the resources recorded there, offline: the recorded specs stand in for the live ones
//! (no refresh, no cloud call; `a3ctl plan` is the word on drift). Otherwise, including a state kept
//! in GCS, which is not read here, the plan is a fresh deployment's.
//!
//! **How long.** Each step is weighted with the mean typical duration of its operation
//! ([`crate::resource::durations`], the figures of the simulator's realistic latency profile), as
//! [`crate::apply::estimate`] does for creates; updates and deletes use the update (`patch`) and
//! delete keys, a GPU pool whose size changes its `setSize.gpu`. A GPU pool's create (a resize's
//! added nodes) takes longer as it grows past 8 nodes, by [`durations::pool_size_factor`] (16
//! nodes 1.5×, 32 nodes 2×), the simulator's own model, so this estimate and the sandbox the user
//! then watches agree (`tests/it/durations.rs`).
//! The steps are then bounded as in [`crate::apply::estimate`]: the critical path, and GKE's one
//! operation at a time per cluster.
//!
//! **Capacity.** The numbers assume the machines are there. A flex-start pool's nodes come when
//! Dynamic Workload Scheduler finds capacity, so no end time is given for them; spot and on-demand
//! pools may wait on or fail at a stock-out; a reservation holds its capacity already.

use crate::apply::{estimate, schedule};
use crate::blueprint::{Blueprint, StateBackend};
use crate::commands::session::SANDBOX_DIR;
use crate::graph::ResourceGraph;
use crate::plan::planner::{Refreshed, plan};
use crate::plan::{Action, Plan};
use crate::resource::{Kind, durations};
use crate::state::State;
use crate::state::store::LocalStore;
use crate::ui::{Printer, plan_view};
use schedule::{Step, StepKind};
use std::path::{Path, PathBuf};

use durations::pool_size_factor as size_factor;
use estimate::pool_nodes as nodes_of;

/// Where the plan's starting point came from.
enum Baseline {
    /// No state: a fresh deployment.
    Fresh,
    /// A local state file, read offline.
    Recorded(PathBuf),
    /// A state in GCS, not read.
    Remote(String),
}

/// The state recorded for `blueprint` on this machine, if any: its local file, then the sandbox's
/// copy. A state recorded for another blueprint, or unreadable, is left out with its reason.
fn recorded(blueprint: &Blueprint) -> (Baseline, Option<State>, Option<String>) {
    let path = match &blueprint.state {
        StateBackend::Gcs { bucket, prefix, .. } => {
            return (
                Baseline::Remote(format!("gs://{bucket}/{}", prefix.trim_matches('/'))),
                None,
                None,
            );
        }
        StateBackend::Local { path } => path.clone(),
    };
    let sandbox = Path::new(SANDBOX_DIR).join(
        path.file_name()
            .map(PathBuf::from)
            .unwrap_or_else(|| format!("{}.a3state.json", blueprint.name).into()),
    );
    for candidate in [path, sandbox] {
        match LocalStore::new(&candidate).load() {
            Ok(None) => {}
            Ok(Some(state)) if state.blueprint != blueprint.name => {
                let note = format!(
                    "`{}` records deployment `{}`, not `{}`; the counts assume a fresh deployment",
                    candidate.display(),
                    state.blueprint,
                    blueprint.name
                );
                return (Baseline::Fresh, None, Some(note));
            }
            Ok(Some(state)) => return (Baseline::Recorded(candidate), Some(state), None),
            Err(e) => {
                let note = format!(
                    "cannot read the state `{}` ({e}); the counts assume a fresh deployment",
                    candidate.display()
                );
                return (Baseline::Fresh, None, Some(note));
            }
        }
    }
    (Baseline::Fresh, None, None)
}

fn mean(key: &str) -> f64 {
    durations::mean(key).unwrap_or(0.0)
}

fn is_gpu(spec: Option<&serde_json::Value>) -> bool {
    spec.is_some_and(|s| s["accelerator"].is_object())
}

/// The key of an operation other than a create, derived from the kind's create key
/// (`compute.network.insert` → `compute.network.patch`), when it has a typical duration.
fn sibling(create: &str, verb: &str) -> Option<String> {
    durations::sibling_key(create, verb).filter(|key| durations::mean(key).is_some())
}

/// The expected seconds of one step, with GPU pools growing with their nodes.
pub fn weight(plan: &Plan, step: &Step) -> f64 {
    let change = &plan.changes[step.change];
    let kind = step.addr.kind;
    match step.kind {
        // A GPU pool's grows with its nodes there.
        StepKind::Create => estimate::expected_secs(plan, step),
        StepKind::Update if kind == Kind::NodePool => {
            let resized = change.diffs.iter().any(|d| d.field == "node_count");
            let gpu = is_gpu(change.after.as_ref());
            let mut secs = 0.0;
            if resized {
                let added = nodes_of(change.after.as_ref())
                    .saturating_sub(nodes_of(change.before.as_ref()));
                secs += if gpu {
                    mean("container.nodePool.setSize.gpu") * size_factor(added)
                } else {
                    mean("container.nodePool.setSize")
                };
            }
            if change.diffs.iter().any(|d| d.field != "node_count") {
                secs += mean("container.nodePool.update");
            }
            secs
        }
        StepKind::Update => kind
            .info()
            .create_latency
            .and_then(|create| sibling(create, "update"))
            .map_or(0.0, |key| mean(&key)),
        StepKind::Delete if kind == Kind::NodePool => mean("container.nodePool.delete"),
        StepKind::Delete => kind
            .info()
            .create_latency
            .and_then(|create| sibling(create, "delete"))
            .map_or(0.0, |key| mean(&key)),
        StepKind::DeletedWith | StepKind::Forget | StepKind::Resume => 0.0,
    }
}

/// The GPU pools whose nodes the plan creates or adds, with their capacity.
fn gaining_capacity(plan: &Plan) -> Vec<(String, u64)> {
    plan.changes
        .iter()
        .filter(|c| c.addr.kind == Kind::NodePool && is_gpu(c.after.as_ref()))
        .filter_map(|c| {
            let after = nodes_of(c.after.as_ref());
            let added = match c.action {
                Action::Create | Action::Replace => after,
                Action::Update => after.saturating_sub(nodes_of(c.before.as_ref())),
                Action::NoOp | Action::Delete => 0,
            };
            let capacity = c.after.as_ref()?["capacity"].as_str()?.to_string();
            (added > 0 || capacity == "flex-start" && c.action == Action::Create)
                .then_some((capacity, added))
        })
        .collect()
}

/// What an apply would change (against the local state when there is one) and how long it
/// should take; `None` when the blueprint has no graph.
pub fn outlook(printer: &Printer, blueprint: &Blueprint, path: &std::path::Path) -> Option<String> {
    let graph = ResourceGraph::from_blueprint(blueprint).ok()?;
    let (baseline, state, note) = recorded(blueprint);
    let state = state.unwrap_or_else(|| State::new(&blueprint.name, "init".into()));
    let mut out = String::new();
    match &baseline {
        Baseline::Recorded(path) => out.push_str(&format!(
            "Compared with the state in `{}` (read offline; `a3ctl plan` also checks the cloud):\n",
            path.display()
        )),
        Baseline::Remote(url) => out.push_str(&format!(
            "The state is remote ({url}) and not read here: the counts assume a fresh deployment.\n"
        )),
        Baseline::Fresh => {}
    }
    if let Some(note) = note {
        out.push_str(&format!("Note: {note}.\n"));
    }
    let plan = match plan(graph.resources(), &state, &Refreshed::new(), false) {
        Ok(plan) => plan,
        Err(e) => {
            out.push_str(&format!(
                "An apply would stop: {e}; {}.\n",
                e.hint(&path.display().to_string())
            ));
            return Some(out);
        }
    };
    out.push_str(plan_view::summary_line(printer, &plan).trim_end());
    out.push('\n');
    let summary = plan.summary();
    if summary.add + summary.change + summary.destroy + summary.forget == 0 {
        out.push_str("Nothing to apply: the blueprint matches what the state records.\n");
        return Some(out);
    }
    let steps = schedule::steps(&plan, &state);
    let bounds = estimate::estimate_by(&steps, |s| weight(&plan, s));
    let time = estimate::human(bounds.seconds());
    let creates_cluster = plan.changes.iter().any(|c| {
        c.addr.kind == Kind::Cluster && matches!(c.action, Action::Create | Action::Replace)
    });
    let gaining = gaining_capacity(&plan);
    let nodes: u64 = gaining.iter().map(|(_, n)| n).sum();
    let has = |capacity: &str| gaining.iter().any(|(c, _)| c == capacity);
    let plural = if nodes == 1 { "" } else { "s" };
    let how_long = if has("flex-start") {
        format!(
            "An apply should take about {time} for everything but the GPU nodes. The flex-start pool gets\nits nodes when Dynamic Workload Scheduler finds capacity, which can take minutes or hours:\nno end time can be given for them."
        )
    } else if has("spot") {
        format!(
            "An apply should take about {time} if spot capacity is there for {nodes} new GPU node{plural}; spot\nnodes come only from spare capacity, and a stock-out holds the pool back."
        )
    } else if has("on-demand") {
        format!(
            "An apply should take about {time} if the zone has {nodes} free GPU machine{plural} on demand; a\nstock-out fails the node pool (a reservation avoids that)."
        )
    } else if has("reservation") {
        format!(
            "An apply should take about {time}; {nodes} new GPU node{plural} {come} from the reservation, which\nmust have that many machines free.",
            come = if nodes == 1 { "comes" } else { "come" }
        )
    } else {
        format!("An apply should take about {time}.")
    };
    out.push_str(&how_long);
    out.push('\n');
    if creates_cluster {
        out.push_str("The longest chain runs through the networks, the cluster and its node pools, which GKE\ncreates one operation at a time; GPU pools take longer the more nodes they have.\n");
    }
    out.push_str("This is an estimate from the mean durations of the simulator's latency profile; real applies\nalso wait on quota and retries.\n");
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn update_and_delete_keys_follow_the_create_key() {
        assert_eq!(
            sibling("container.cluster.create", "update").as_deref(),
            Some("container.cluster.update")
        );
        assert_eq!(
            sibling("file.instance.create", "delete").as_deref(),
            Some("file.instance.delete")
        );
        assert_eq!(sibling("nothing.here.create", "delete"), None);
    }
}
