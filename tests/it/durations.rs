//! The product's typical durations (`a3ctl::resource::durations`: `a3ctl init`'s estimate, the
//! plan's node-upgrade and GPU-replacement notes) against the simulator's latency profile
//! (`a3ctl_sim::latency`, what the sandbox's operations draw from). The product does not read the
//! simulator; these tests keep the two tables saying the same, so an estimate matches what the
//! sandbox then shows.

use a3ctl::resource::durations;
use a3ctl::resource::kinds::KINDS;
use std::collections::{BTreeMap, BTreeSet};

/// The simulator's realistic defaults: key → (shortest, longest) seconds.
fn simulator() -> BTreeMap<String, (f64, f64)> {
    a3ctl_sim::latency::defaults()
        .into_iter()
        .map(|(key, min, max)| (key, (min, max)))
        .collect()
}

/// Every operation a3ctl looks up a duration for: each kind's create, its update and its delete
/// (as `a3ctl init` derives them), and the node pool operations its code names.
fn asked() -> BTreeSet<String> {
    let mut keys: BTreeSet<String> = [
        "container.nodePool.create.gpu",
        "container.nodePool.delete",
        "container.nodePool.update",
        "container.nodePool.setSize",
        "container.nodePool.setSize.gpu",
    ]
    .into_iter()
    .map(String::from)
    .collect();
    for create in KINDS.iter().filter_map(|info| info.create_latency) {
        keys.insert(create.to_string());
        for verb in ["update", "delete"] {
            keys.insert(durations::sibling_key(create, verb).expect("a dotted key"));
        }
    }
    keys
}

#[test]
fn every_typical_duration_is_the_simulators_default() {
    let simulator = simulator();
    let mut seen = BTreeSet::new();
    for (key, min, max) in durations::TYPICAL {
        assert!(seen.insert(*key), "`{key}` is listed twice");
        assert_eq!(
            simulator.get(*key),
            Some(&(*min, *max)),
            "`{key}`: a3ctl says {min}–{max} s, the simulator's default differs"
        );
    }
}

#[test]
fn an_operation_a3ctl_asks_about_has_a_figure_in_both_tables_or_in_neither() {
    let simulator = simulator();
    let asked = asked();
    for key in &asked {
        assert_eq!(
            durations::span(key).is_some(),
            simulator.contains_key(key),
            "`{key}`: in one table and not the other"
        );
    }
    // No figure the product never asks for.
    for (key, _, _) in durations::TYPICAL {
        assert!(
            asked.contains(*key),
            "`{key}` is listed but never asked for"
        );
    }
    // The check sees something: creates of Compute, GKE and Filestore are all there.
    for key in [
        "compute.network.insert",
        "container.cluster.create",
        "file.instance.create",
    ] {
        assert!(
            asked.contains(key) && durations::span(key).is_some(),
            "{key}"
        );
    }
}

#[test]
fn a_gpu_pool_grows_with_its_nodes_as_the_simulators_does() {
    for nodes in 0..=4096 {
        assert_eq!(
            durations::pool_size_factor(nodes),
            a3ctl_sim::latency::pool_size_factor(nodes),
            "{nodes} nodes"
        );
    }
}
