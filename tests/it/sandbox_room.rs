//! The default sandbox has room to rehearse day two (`src/commands/sandbox_world.rs`): every
//! shipped blueprint applies into one world of the sandbox's configuration (its quotas, and its
//! reservations made for twice each GPU pool's nodes), side by side; then each one's GPU pools
//! scale to twice their nodes, in the same world. The world runs on the tests' manual clock with
//! zero latency (the sandbox's own scaled clock would only make it slower); the node counts are
//! read from the simulator's world.

use crate::common;

use a3ctl::commands::sandbox_world::{RESERVATION_ROOM, with_room};
use a3ctl_sim::SimConfig;
use common::TestContext;
use std::collections::BTreeMap;

/// Every shipped blueprint (file under `blueprints/`), with its GKE cluster's name.
const SHIPPED: [(&str, &str); 5] = [
    ("minimal.toml", "a3mini"),
    ("a3-high.toml", "a3high"),
    ("a3-mega.toml", "a3mega"),
    ("a3-ultra.toml", "a3ultra"),
    ("a4.toml", "a4"),
];

/// The nodes of each GPU pool (pools whose nodes have GPUs) of cluster `name`, by pool.
fn gpu_nodes(cx: &TestContext, name: &str) -> BTreeMap<String, usize> {
    let key = format!("projects/my-project/locations/us-central1/clusters/{name}");
    cx.sim.shared.read_world(|world, _| {
        let cluster = world
            .kube
            .clusters
            .get(&key)
            .unwrap_or_else(|| panic!("{key} in {:?}", world.kube.clusters.keys()));
        cluster
            .nodes
            .iter()
            .filter(|(_, nodes)| nodes.iter().any(|n| n.gpus > 0))
            .map(|(pool, nodes)| (pool.clone(), nodes.len()))
            .collect()
    })
}

/// The `count` of every reservation in the world, by name.
fn reservations(cx: &TestContext) -> BTreeMap<String, u64> {
    cx.sim.shared.read_world(|world, _| {
        world
            .compute
            .resources
            .iter()
            .filter(|(path, _)| path.contains("/reservations/"))
            .map(|(_, r)| {
                let count = &r.body["specificReservation"]["count"];
                let count = count
                    .as_u64()
                    .or_else(|| count.as_str().and_then(|c| c.parse().ok()))
                    .unwrap_or_else(|| panic!("a count in {}", r.body));
                (r.body["name"].as_str().unwrap().to_string(), count)
            })
            .collect()
    })
}

/// The `nodes` of every `[[gpu_pool]]` of the blueprint text, times `factor` (the system pool's
/// `nodes` is left as it is).
fn gpu_pools_times(text: &str, factor: u32) -> String {
    let mut in_gpu_pool = false;
    let mut changed = 0;
    let lines: Vec<String> = text
        .lines()
        .map(|line| {
            if line.trim_start().starts_with('[') {
                in_gpu_pool = line.trim() == "[[gpu_pool]]";
            }
            match line.strip_prefix("nodes = ") {
                Some(n) if in_gpu_pool => {
                    changed += 1;
                    let n: u32 = n.trim().parse().expect("a node count");
                    format!("nodes = {}", n * factor)
                }
                _ => line.to_string(),
            }
        })
        .collect();
    assert!(changed > 0, "no GPU pool's nodes in:\n{text}");
    lines.join("\n") + "\n"
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_shipped_blueprint_fits_one_sandbox_and_then_scales_to_twice_its_gpu_nodes() {
    let cx = TestContext::without_reservations(with_room(SimConfig::default())).await;
    let files: Vec<&str> = SHIPPED.iter().map(|(file, _)| *file).collect();
    common::provide_reservations_with_room(&cx.sim, &files, RESERVATION_ROOM).await;
    // Made for twice the reserved pools' nodes (A3 High and the minimal blueprint are on demand).
    assert_eq!(
        reservations(&cx),
        BTreeMap::from([
            ("a3mega-reservation".to_string(), 64),
            ("a3ultra-reservation".to_string(), 8),
            ("a4-reservation".to_string(), 4),
        ])
    );

    // Side by side: each apply adds its deployment to the same world.
    let mut declared: BTreeMap<&str, BTreeMap<String, usize>> = BTreeMap::new();
    for (file, name) in SHIPPED {
        let path = format!("blueprints/{file}");
        let apply = cx.run(&["apply", &path, "--auto-approve", "-q"]).await;
        let apply = apply.expect(0);
        assert!(
            apply.stderr.contains("Apply complete!"),
            "{file}:\n{}",
            apply.stderr
        );
        let nodes = gpu_nodes(&cx, name);
        assert!(!nodes.is_empty(), "{file}: no GPU pool in {nodes:?}");
        declared.insert(name, nodes);
    }
    assert_eq!(declared["a3mega"]["a3mega"], 32);
    // Every deployment is still there, at its declared size.
    for (file, name) in SHIPPED {
        assert_eq!(gpu_nodes(&cx, name), declared[name], "{file}");
    }

    // Day two: each one's GPU pools to 2×, in the same world, the others left as they are.
    for (file, name) in SHIPPED {
        let path = format!("blueprints/{file}");
        let text = std::fs::read_to_string(cx.path(&path)).expect("the blueprint");
        cx.write(&path, &gpu_pools_times(&text, 2));
        let apply = cx.run(&["apply", &path, "--auto-approve", "-q"]).await;
        let apply = apply.expect(0);
        assert!(
            apply
                .stderr
                .contains("Apply complete! Resources: 0 added, "),
            "{file}:\n{}",
            apply.stderr
        );
        let doubled: BTreeMap<String, usize> = declared[name]
            .iter()
            .map(|(pool, n)| (pool.clone(), 2 * n))
            .collect();
        assert_eq!(gpu_nodes(&cx, name), doubled, "{file}");
        cx.run(&["plan", &path, "--detailed-exitcode", "-q"])
            .await
            .expect(0);
    }
    for (file, name) in SHIPPED {
        let doubled: BTreeMap<String, usize> = declared[name]
            .iter()
            .map(|(pool, n)| (pool.clone(), 2 * n))
            .collect();
        assert_eq!(gpu_nodes(&cx, name), doubled, "{file}");
    }
}

#[test]
fn only_gpu_pools_are_scaled() {
    let text = "[system_pool]\nnodes = 2\n\n[[gpu_pool]]\nname = \"a\"\nnodes = 32\n\n[[gpu_pool]]\nnodes = 1\n[state]\n";
    assert_eq!(
        gpu_pools_times(text, 2),
        "[system_pool]\nnodes = 2\n\n[[gpu_pool]]\nname = \"a\"\nnodes = 64\n\n[[gpu_pool]]\nnodes = 2\n[state]\n"
    );
}
