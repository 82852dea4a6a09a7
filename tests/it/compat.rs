//! Files written by earlier a3ctl versions keep working. `fixtures/format1/` holds what today's
//! a3ctl wrote (state format 1, plan format 1) for `blueprints/a3-high.toml`, with the simulator's
//! world they describe: the state after an apply, and a saved plan of a node-count change made on
//! top of it. Whatever the state's in-memory shape becomes, these files must load, plan no changes
//! against their world, carry out the saved plan, and destroy everything. Format 2 renumbered the
//! GPU NIC addresses (`network.gpu-0` → `network.gpu-1`); the deployment keeps its cloud names.
//!
//! The fixtures are rewritten (only when the format changes on purpose, which needs a migration)
//! by `A3CTL_WRITE_FIXTURES=1 cargo test --test it compat::write_format1_fixtures -- --ignored`.

use crate::common::TestContext;
use a3ctl_sim::SimConfig;
use std::path::{Path, PathBuf};

const BLUEPRINT: &str = "blueprints/a3-high.toml";
const STATE: &str = "state/a3high.a3state.json";
const PLAN: &str = "grow.plan.json";
/// The port of the cluster's Kubernetes API in the fixtures' world and state.
const OLD_KUBE_PORT: u16 = 45885;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/it/fixtures/format1")
}

/// The blueprint with one more GPU node: the change the saved plan carries.
fn grown(text: &str) -> String {
    text.replacen("nodes = 4", "nodes = 5", 1)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "writes the fixtures; run on purpose"]
async fn write_format1_fixtures() {
    if std::env::var("A3CTL_WRITE_FIXTURES").as_deref() != Ok("1") {
        return;
    }
    let out = fixtures();
    std::fs::create_dir_all(&out).unwrap();
    let world = out.join("world.json");
    let _ = std::fs::remove_file(&world);
    let cx = TestContext::with(SimConfig {
        persist: Some(world.clone()),
        ..SimConfig::default()
    })
    .await;
    std::fs::copy(cx.path(BLUEPRINT), out.join("a3-high.toml")).unwrap();
    cx.run(&["apply", BLUEPRINT, "--auto-approve"])
        .await
        .expect(0);
    let text = std::fs::read_to_string(cx.path(BLUEPRINT)).unwrap();
    cx.write(BLUEPRINT, &grown(&text));
    cx.run(&["plan", BLUEPRINT, "--out", PLAN]).await.expect(0);
    std::fs::copy(cx.path(STATE), out.join("a3high.a3state.json")).unwrap();
    std::fs::copy(cx.path(PLAN), out.join(PLAN)).unwrap();
    cx.sim.shutdown();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn state_and_plan_files_of_format_1_still_work() {
    let dir = tempfile::tempdir().unwrap();
    let world = dir.path().join("world.json");
    std::fs::copy(fixtures().join("world.json"), &world).unwrap();
    // Another program holds the cluster's old API port (an HTTP server answering anything with
    // a 400): the simulator serves the cluster on another port and says so in the cluster's
    // `endpoint`, and a3ctl must follow the live endpoint, not the recorded one.
    if let Ok(squatter) = std::net::TcpListener::bind(("127.0.0.1", OLD_KUBE_PORT)) {
        std::thread::spawn(move || {
            use std::io::Write;
            for mut stream in squatter.incoming().flatten() {
                let _ = stream.write_all(b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\n\r\n");
            }
        });
    }
    let cx = TestContext::with(SimConfig {
        persist: Some(world),
        ..SimConfig::default()
    })
    .await;
    std::fs::create_dir_all(cx.path("state")).unwrap();
    // The blueprint as it was when the files were written (the shipped one has moved on since).
    std::fs::copy(fixtures().join("a3-high.toml"), cx.path(BLUEPRINT)).unwrap();
    std::fs::copy(fixtures().join("a3high.a3state.json"), cx.path(STATE)).unwrap();
    std::fs::copy(fixtures().join(PLAN), cx.path(PLAN)).unwrap();
    let written = std::fs::read_to_string(cx.path(STATE)).unwrap();

    // The old state describes its world exactly: the only changes are this a3ctl's pool label
    // (issue 25), on both pools in place, the flavor that selects it, and JobSet, which this
    // a3ctl installs by default (issue 26).
    let plan = cx.run(&["plan", BLUEPRINT, "--detailed-exitcode"]).await;
    assert_eq!(plan.code, Some(2), "{}\n{}", plan.stdout, plan.stderr);
    for line in [
        "# node_pool.a3high will be updated in-place",
        "# node_pool.system will be updated in-place",
        "# k8s.resourceflavor/-/a3high will be updated in-place",
        "# k8s.release/-/jobset will be created",
        "Plan: 1 to add, 3 to change, 0 to destroy.",
    ] {
        assert!(plan.stdout.contains(line), "{line}\n{}", plan.stdout);
    }

    // The old saved plan is carried out on the blueprint it was made from.
    let text = std::fs::read_to_string(cx.path(BLUEPRINT)).unwrap();
    cx.write(BLUEPRINT, &grown(&text));
    let apply = cx.run(&["apply", PLAN]).await;
    assert_eq!(apply.code, Some(0), "{}\n{}", apply.stdout, apply.stderr);
    assert!(
        apply.stderr.contains("0 added, 2 changed, 0 destroyed"),
        "{}",
        apply.stderr
    );
    // Written again by this a3ctl, in format 2: GPU NIC addresses count from 1 like the cluster's
    // `vpc1`, while the VPCs keep the names they were created with (from 0).
    let rewritten: serde_json::Value =
        serde_json::from_slice(&std::fs::read(cx.path(STATE)).unwrap()).unwrap();
    assert_ne!(rewritten.to_string(), written);
    assert_eq!(rewritten["version"], 2);
    let resources = &rewritten["resources"];
    assert!(resources.get("network.gpu-0").is_none(), "{resources}");
    assert_eq!(
        resources["network.gpu-1"]["id"],
        "projects/my-project/global/networks/a3high-gpunet-0"
    );
    assert_eq!(
        resources["firewall.gpu-4-internal"]["id"],
        "projects/my-project/global/firewalls/a3high-gpunet-3-allow-internal"
    );
    // The saved plan's addresses were renumbered too: every dependency recorded by its apply
    // (the GPU pool's on the GPU subnets among them) names a resource in state.
    for (addr, record) in resources.as_object().unwrap() {
        for dep in record["dependencies"].as_array().unwrap() {
            let dep = dep.as_str().unwrap();
            assert!(
                resources.get(dep).is_some(),
                "{addr} depends on unknown {dep}"
            );
        }
    }
    assert!(
        resources["node_pool.a3high"]["dependencies"]
            .as_array()
            .unwrap()
            .contains(&serde_json::json!("subnetwork.gpu-4")),
        "{resources}"
    );
    assert!(
        resources["subnetwork.gpu-4"]["dependencies"]
            .as_array()
            .unwrap()
            .contains(&serde_json::json!("network.gpu-4")),
        "{resources}"
    );
    // Then this a3ctl's own changes (the pool label), and nothing is left to do.
    cx.run(&["apply", BLUEPRINT, "--auto-approve"])
        .await
        .expect(0);
    cx.run(&["plan", BLUEPRINT, "--detailed-exitcode"])
        .await
        .expect(0);
    cx.run(&["destroy", BLUEPRINT, "--auto-approve"])
        .await
        .expect(0);
    assert_eq!(
        crate::trials::inventory(&cx.sim, "my-project", "us-central1").await,
        Vec::<String>::new()
    );
}
