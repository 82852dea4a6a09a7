//! Typical durations of the Google operations a3ctl runs, in seconds: what `a3ctl init`'s
//! estimate, the plan's node-upgrade and GPU-replacement notes and the apply bench weigh steps
//! with. Keys are the operations' names as the simulator spells them (`compute.network.insert`,
//! `container.nodePool.create.gpu`); a kind names its create's key in its `INFO`
//! ([`super::kinds::KindInfo::create_latency`]).
//!
//! The figures follow the field figures of AI-Hypercomputer/gpu-recipes and the resource timeouts
//! of hashicorp/terraform-provider-google (cluster 6–10 min, GPU node pool 5–15 min, Filestore
//! 10–15 min, network 20–40 s …). The simulator keeps its own latency profile
//! (`a3ctl_sim::latency`), from which its operations draw; `tests/it/durations.rs` fails when a
//! figure here differs from its default there, or when a key a3ctl asks for is in one table and
//! not the other, so an estimate and the sandbox the user then watches agree.

/// Operation → (shortest, longest) seconds. An operation not listed takes no time in an estimate
/// (the simulator has no figure for it either).
pub const TYPICAL: &[(&str, f64, f64)] = &[
    // Compute.
    ("compute.network.insert", 20.0, 40.0),
    ("compute.network.delete", 20.0, 40.0),
    ("compute.network.patch", 5.0, 15.0),
    ("compute.subnetwork.insert", 10.0, 25.0),
    ("compute.subnetwork.delete", 10.0, 25.0),
    ("compute.subnetwork.patch", 5.0, 15.0),
    ("compute.firewall.insert", 5.0, 15.0),
    ("compute.firewall.delete", 5.0, 15.0),
    ("compute.firewall.patch", 5.0, 15.0),
    ("compute.router.insert", 10.0, 20.0),
    ("compute.router.delete", 10.0, 20.0),
    ("compute.router.patch", 10.0, 20.0),
    ("compute.resourcePolicy.insert", 5.0, 10.0),
    ("compute.resourcePolicy.delete", 5.0, 10.0),
    ("compute.resourcePolicy.patch", 5.0, 10.0),
    // GKE.
    ("container.cluster.create", 360.0, 600.0),
    ("container.cluster.delete", 180.0, 360.0),
    ("container.cluster.update", 30.0, 120.0),
    ("container.nodePool.create", 120.0, 240.0),
    ("container.nodePool.create.gpu", 300.0, 900.0),
    ("container.nodePool.delete", 120.0, 300.0),
    ("container.nodePool.update", 60.0, 300.0),
    ("container.nodePool.setSize", 60.0, 180.0),
    ("container.nodePool.setSize.gpu", 300.0, 600.0),
    // Filestore.
    ("file.instance.create", 600.0, 900.0),
    ("file.instance.delete", 300.0, 600.0),
    ("file.instance.update", 60.0, 300.0),
    // Artifact Registry.
    ("artifactregistry.repository.create", 5.0, 15.0),
    ("artifactregistry.repository.delete", 5.0, 15.0),
    // Service Usage: enabling an API takes seconds to a minute or two.
    ("serviceusage.service.enable", 5.0, 60.0),
];

/// The operation's (shortest, longest) seconds, if it has a figure.
pub fn span(key: &str) -> Option<(f64, f64)> {
    TYPICAL
        .iter()
        .find(|(k, _, _)| *k == key)
        .map(|(_, min, max)| (*min, *max))
}

/// The operation's mean duration in seconds, if it has a figure.
pub fn mean(key: &str) -> Option<f64> {
    span(key).map(|(min, max)| (min + max) / 2.0)
}

/// The key of an operation other than a create, derived from the kind's create key
/// (`compute.network.insert` → `compute.network.patch` for an update, `file.instance.create` →
/// `file.instance.delete`), whether or not it has a figure.
pub fn sibling_key(create: &str, verb: &str) -> Option<String> {
    let (stem, _) = create.rsplit_once('.')?;
    let verb = match (verb, create.starts_with("compute.")) {
        ("update", true) => "patch",
        (verb, _) => verb,
    };
    Some(format!("{stem}.{verb}"))
}

/// Nodes a GPU pool brings up in the time its create (a resize's `setSize.gpu`) takes.
const FIRST_BATCH: f64 = 8.0;
/// The share of a GPU pool's create each doubling of its nodes beyond the first batch adds.
const PER_DOUBLING: f64 = 0.5;

/// How much longer than `container.nodePool.create.gpu` (or `setSize.gpu`) a GPU pool create
/// (resize) of `nodes` new nodes takes: 1× up to 8 nodes, then half as much again for each
/// doubling (16 nodes 1.5×, 32 nodes 2×, 1,000 nodes about 4.5×). GKE brings large pools up in
/// batches; the factor is the simulator's model (`a3ctl_sim::latency::pool_size_factor`), not a
/// published figure, and `tests/it/durations.rs` checks the two agree.
pub fn pool_size_factor(nodes: u64) -> f64 {
    let batches = (nodes as f64 / FIRST_BATCH).ceil().max(1.0);
    1.0 + PER_DOUBLING * batches.log2()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn update_and_delete_keys_follow_the_create_key() {
        assert_eq!(
            sibling_key("container.cluster.create", "update").as_deref(),
            Some("container.cluster.update")
        );
        assert_eq!(
            sibling_key("compute.network.insert", "update").as_deref(),
            Some("compute.network.patch")
        );
        assert_eq!(
            sibling_key("file.instance.create", "delete").as_deref(),
            Some("file.instance.delete")
        );
        assert_eq!(sibling_key("create", "delete"), None);
    }

    #[test]
    fn a_mean_is_the_middle_of_the_span_and_unknown_operations_have_none() {
        assert_eq!(mean("container.cluster.create"), Some(480.0));
        assert_eq!(mean("nothing.here.create"), None);
    }

    #[test]
    fn gpu_pools_take_longer_as_they_grow_past_eight_nodes() {
        assert_eq!(pool_size_factor(0), 1.0);
        assert_eq!(pool_size_factor(8), 1.0);
        assert_eq!(pool_size_factor(16), 1.5);
        assert_eq!(pool_size_factor(32), 2.0);
        assert!((4.4..4.6).contains(&pool_size_factor(1000)));
    }
}
