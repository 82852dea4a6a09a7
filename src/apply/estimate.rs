//! How long an apply should take, worked out from the plan alone: no cloud, no simulator run.
//!
//! Each step is weighted with the mean of its operation's typical duration
//! ([`crate::resource::durations`], taken from field figures; the simulator's realistic latency
//! profile has the same), a GPU pool's stretched by its nodes as the simulator stretches it
//! ([`durations::pool_size_factor`]). Two lower
//! bounds follow from the step graph ([`super::schedule`]): its critical path, and the critical
//! path once GKE's rule of one operation at a time per cluster serialises the cluster and its node
//! pools. The larger is the estimate. `a3ctl init` prints it and `cargo bench --bench apply`
//! compares it with the makespan of real (simulated) applies; real applies also wait on quota,
//! stock-outs and retries, so it is an estimate, not a promise.

use super::schedule::{self, Step, StepKind};
use crate::plan::Plan;
use crate::resource::{Kind, durations};

/// The two lower bounds of an apply, in seconds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Estimate {
    /// The longest dependency chain.
    pub critical_path: f64,
    /// The critical path with the cluster's operations run one at a time.
    pub one_op_per_cluster: f64,
}

impl Estimate {
    /// The estimate: the larger bound.
    pub fn seconds(&self) -> f64 {
        self.critical_path.max(self.one_op_per_cluster)
    }
}

/// The mean typical duration, in seconds, of carrying out `step` of `plan` (creates only; other
/// steps weigh nothing).
pub fn expected_secs(plan: &Plan, step: &Step) -> f64 {
    if step.kind != StepKind::Create {
        return 0.0;
    }
    let change = &plan.changes[step.change];
    let gpu = change
        .after
        .as_ref()
        .is_some_and(|s| s["accelerator"].is_object());
    // A GPU pool's create grows with its nodes, as the simulator's does.
    let factor = if step.addr.kind == Kind::NodePool && gpu {
        durations::pool_size_factor(pool_nodes(change.after.as_ref()))
    } else {
        1.0
    };
    let key = match step.addr.kind {
        Kind::NodePool if gpu => "container.nodePool.create.gpu",
        kind => match kind.info().create_latency {
            Some(key) => key,
            None => return 0.0,
        },
    };
    let mean = |key: &str| durations::mean(key).unwrap_or(0.0);
    // A cluster is created with a bootstrap pool that is deleted before it is usable.
    let extra = if step.addr.kind == Kind::Cluster {
        mean("container.nodePool.delete")
    } else {
        0.0
    };
    mean(key) * factor + extra
}

/// Nodes of a node pool spec (nodes per zone × zones); 0 without one.
pub fn pool_nodes(spec: Option<&serde_json::Value>) -> u64 {
    spec.map_or(0, |s| {
        let zones = s["locations"].as_array().map_or(1, |z| z.len().max(1)) as u64;
        s["node_count"].as_u64().unwrap_or(0) * zones
    })
}

/// Both bounds of applying `steps` of `plan`.
pub fn estimate(plan: &Plan, steps: &[Step]) -> Estimate {
    estimate_by(steps, |s| expected_secs(plan, s))
}

/// Both bounds of applying `steps`, each weighing `weight` seconds (`a3ctl init` weighs updates,
/// deletes and large GPU pools too).
pub fn estimate_by(steps: &[Step], weight: impl Fn(&Step) -> f64) -> Estimate {
    let weight = |s: &Step| weight(s);
    let critical_path = schedule::critical_path(steps, weight);
    // GKE serialises a cluster's operations: its pools run one after another after the cluster.
    let cluster_chain: f64 = steps
        .iter()
        .filter(|s| matches!(s.addr.kind, Kind::Cluster | Kind::NodePool))
        .map(weight)
        .sum();
    let before_cluster = steps
        .iter()
        .position(|s| s.addr.kind == Kind::Cluster && s.kind == StepKind::Create)
        .map(|i| schedule::critical_path(&steps[..=i], weight) - weight(&steps[i]))
        .unwrap_or(0.0);
    Estimate {
        critical_path,
        one_op_per_cluster: before_cluster + cluster_chain,
    }
}

/// `12 min`, `1 h 05 min`: minutes are the resolution an estimate deserves.
pub fn human(seconds: f64) -> String {
    let minutes = (seconds / 60.0).round().max(1.0) as u64;
    if minutes < 60 {
        format!("{minutes} min")
    } else {
        format!("{} h {:02} min", minutes / 60, minutes % 60)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::ResourceGraph;
    use crate::plan::planner::{Refreshed, plan};
    use crate::state::State;

    fn shipped(name: &str) -> Estimate {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("blueprints")
            .join(name);
        let blueprint = crate::blueprint::load(&path).expect("shipped blueprint");
        let graph = ResourceGraph::from_blueprint(&blueprint).expect("graph");
        let state = State::new(&blueprint.name, "estimate".into());
        let plan = plan(graph.resources(), &state, &Refreshed::new(), false).expect("plan");
        let steps = schedule::steps(&plan, &state);
        estimate(&plan, &steps)
    }

    #[test]
    fn gke_serialisation_dominates_and_filestore_adds_nothing_to_it() {
        let mega = shipped("a3-mega.toml");
        let high = shipped("a3-high.toml");
        // Cluster (480 s) + bootstrap pool delete (210 s) + system pool (180 s) + GPU pool, after
        // the networks. The GPU pool's create (600 s) grows with its nodes as the simulator's
        // does: A3 High's 4 nodes 1×, about 25 minutes; A3 Mega's 32 nodes 2×, about 35.
        for estimate in [mega, high] {
            assert!(estimate.one_op_per_cluster >= estimate.critical_path);
        }
        assert!((1400.0..1700.0).contains(&high.seconds()), "{high:?}");
        assert!((2000.0..2300.0).contains(&mega.seconds()), "{mega:?}");
        let longer = mega.seconds() - high.seconds();
        assert!((500.0..=700.0).contains(&longer), "{mega:?} {high:?}");
    }

    #[test]
    fn durations_read_in_minutes() {
        assert_eq!(human(10.0), "1 min");
        assert_eq!(human(1500.0), "25 min");
        assert_eq!(human(3900.0), "1 h 05 min");
    }
}
