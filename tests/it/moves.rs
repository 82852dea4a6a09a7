//! Ways to move that keep GPUs (issue 25): a replaced node pool, with the shipped A3 Mega pool's
//! 32 nodes running on its reservation, moves by what the reservation holds — create before
//! destroy (room for both), in batches (a little room), refused before any call (none), or
//! deleted first with an explicit opt-in — asserted on the order of the simulator's request log.

use crate::common;

use common::TestContext;
use common::gcloud::Gcloud;
use serde_json::Value;

const MEGA: &str = "blueprints/a3-mega.toml";
const POOLS: &str =
    "/container/v1/projects/my-project/locations/us-central1/clusters/a3mega/nodePools";

/// A world whose quotas hold two A3 Mega reservations of 32 (the default holds one beside the
/// other shipped blueprints').
async fn roomy() -> TestContext {
    use a3ctl_sim::quotas::QuotaConfig;
    TestContext::with(a3ctl_sim::SimConfig {
        quotas: QuotaConfig::default()
            .with_in("CPUS", "us-central1", 40_000.0)
            .with("CPUS_ALL_REGIONS", 40_000.0)
            .with("GPUS_ALL_REGIONS", 2_000.0)
            .with_gpu_family("NVIDIA_H100_MEGA", Some("us-central1"), 2_000.0)
            .with_in("LOCAL_SSD_TOTAL_GB", "us-central1", 1_000_000.0),
        ..Default::default()
    })
    .await
}

/// The shipped A3 Mega blueprint on a reservation `res` of `count` VMs, applied: its 32 nodes
/// hold 32 of them. Returns the blueprint's path, and the request log is cleared.
async fn mega_on(cx: &TestContext, count: u32) -> String {
    let (ok, out, err) = Gcloud::in_project(&cx.sim, "my-project")
        .run(&[
            "compute",
            "reservations",
            "create",
            "res",
            "--zone=us-central1-a",
            &format!("--vm-count={count}"),
            "--machine-type=a3-megagpu-8g",
            "--accelerator=count=8,type=nvidia-h100-mega-80gb",
            "--require-specific-reservation",
        ])
        .await;
    assert!(ok, "gcloud reservations create failed:\n{out}\n{err}");
    let text = std::fs::read_to_string(cx.path(MEGA)).unwrap().replace(
        "reservation = \"a3mega-reservation\"",
        "reservation = \"res\"",
    );
    let path = cx.write("blueprints/mega-res.toml", &text);
    let path = path.display().to_string();
    cx.run(&["apply", &path, "--auto-approve"]).await.expect(0);
    clear_log(cx).await;
    path
}

async fn clear_log(cx: &TestContext) {
    reqwest::Client::new()
        .delete(format!("{}/_sim/requests", cx.sim.base_url()))
        .send()
        .await
        .unwrap();
}

fn is(entry: &Value, method: &str, path: &str) -> bool {
    entry["method"] == method && entry["path"].as_str().is_some_and(|p| p == path)
}

/// The index in `log` of the first request matching, panicking with the log when none does.
fn first(log: &[Value], what: &str, matches: impl Fn(&Value) -> bool) -> usize {
    log.iter().position(matches).unwrap_or_else(|| {
        panic!(
            "no {what} in the request log:\n{}",
            log.iter()
                .map(|e| format!("{} {} {}", e["method"], e["path"], e["status"]))
                .collect::<Vec<_>>()
                .join("\n")
        )
    })
}

fn mutating(log: &[Value]) -> Vec<String> {
    log.iter()
        .filter(|e| {
            common::is_mutation(
                e["method"].as_str().unwrap_or(""),
                e["path"].as_str().unwrap_or(""),
            )
        })
        .map(|e| format!("{} {}", e["method"], e["path"]))
        .collect()
}

/// The nodes of pool `name` as the Kubernetes API lists them (`None`: GKE has no such pool).
async fn pool_nodes(cx: &TestContext, name: &str) -> Option<usize> {
    let found = reqwest::get(format!("{}{POOLS}/{name}", cx.sim.base_url()))
        .await
        .unwrap();
    if found.status() == reqwest::StatusCode::NOT_FOUND {
        return None;
    }
    let kubectl = common::kubectl::Kubectl::for_cluster(cx, "a3mega").await;
    Some(
        kubectl
            .names(&[
                "nodes",
                "-l",
                &format!("cloud.google.com/gke-nodepool={name}"),
            ])
            .await
            .len(),
    )
}

/// The in-use count of reservation `res`.
async fn in_use(cx: &TestContext) -> u64 {
    let body: Value = reqwest::get(format!(
        "{}/compute/v1/projects/my-project/zones/us-central1-a/reservations/res",
        cx.sim.base_url()
    ))
    .await
    .unwrap()
    .json()
    .await
    .unwrap();
    body["specificReservation"]["inUseCount"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap()
}

#[tokio::test]
async fn with_room_for_both_the_new_pool_is_up_before_the_old_one_is_deleted() {
    let cx = roomy().await;
    let blueprint = mega_on(&cx, 64).await;
    let replace = ["--replace", "node_pool.a3mega"];
    let plan = cx
        .run(&[&["plan", &blueprint][..], &replace].concat())
        .await
        .expect(0);
    assert!(
        plan.stdout.contains("strategy: create before destroy"),
        "{}",
        plan.stdout
    );
    clear_log(&cx).await;
    cx.run(&[&["apply", &blueprint, "--auto-approve"][..], &replace].concat())
        .await
        .expect(0);
    let log = common::request_log(&cx).await;
    let create = first(&log, "the new pool's create", |e| is(e, "POST", POOLS));
    let ready = log
        .iter()
        .rposition(|e| {
            e["method"] == "GET"
                && e["path"]
                    .as_str()
                    .is_some_and(|p| p.ends_with("/api/v1/nodes"))
        })
        .expect("the nodes are read");
    let delete = first(&log, "the old pool's delete", |e| {
        is(e, "DELETE", &format!("{POOLS}/a3mega"))
    });
    assert!(
        create < ready && ready < delete,
        "{create} {ready} {delete}"
    );
    // Every poll of the create's operation came before the delete, the last one DONE.
    assert_eq!(pool_nodes(&cx, "a3mega-2").await, Some(32));
    assert_eq!(pool_nodes(&cx, "a3mega").await, None);
    assert_eq!(in_use(&cx).await, 32);
    // The blueprint's pool is the new generation: nothing more to do.
    let again = cx.run(&["plan", &blueprint]).await.expect(0);
    assert!(again.stdout.contains("No changes."), "{}", again.stdout);
    let list = cx
        .run(&["state", "show", "node_pool.a3mega", &blueprint])
        .await
        .expect(0);
    assert!(
        list.stdout.contains("nodePools/a3mega-2"),
        "{}",
        list.stdout
    );
    // verify finds the pool's 32 nodes under its new GKE name (by a3ctl's pool label), and its
    // flavor's quota still matches them.
    let verified = cx.run(&["verify", &blueprint]).await.expect(0);
    assert!(
        verified.stdout.contains("nodes/a3mega"),
        "{}",
        verified.stdout
    );
}

#[tokio::test]
async fn with_room_for_two_it_moves_two_nodes_at_a_time() {
    let cx = roomy().await;
    let blueprint = mega_on(&cx, 34).await;
    let args = ["--replace", "node_pool.a3mega", "--batch-size", "2"];
    let plan = cx
        .run(&[&["plan", &blueprint][..], &args].concat())
        .await
        .expect(0);
    assert!(
        plan.stdout.contains("strategy: in batches of 2 node(s)"),
        "{}",
        plan.stdout
    );
    clear_log(&cx).await;
    cx.run(&[&["apply", &blueprint, "--auto-approve"][..], &args].concat())
        .await
        .expect(0);
    let log = common::request_log(&cx).await;
    // The pools' mutations in order: the new pool's create (with 2 nodes), then the old pool
    // shrinks by 2 and the new one grows by 2, strictly in turn — so no more than 2 nodes are
    // ever between the pools (the simulator fails a grow past the reservation's 34) — and the
    // old pool's last 2 nodes go with its drain and delete, once the new pool has its 32.
    let pools: Vec<&str> = log
        .iter()
        .filter_map(|e| {
            let path = e["path"].as_str()?;
            let method = e["method"].as_str()?;
            Some(if method == "POST" && path == POOLS {
                "create new"
            } else if path == format!("{POOLS}/a3mega:setSize") {
                "shrink old"
            } else if path == format!("{POOLS}/a3mega-2:setSize") {
                "grow new"
            } else if method == "PUT" && path == format!("{POOLS}/a3mega") {
                "drain old"
            } else if method == "DELETE" && path == format!("{POOLS}/a3mega") {
                "delete old"
            } else {
                return None;
            })
        })
        .collect();
    let mut expected = vec!["create new"];
    for _ in 0..15 {
        expected.extend(["shrink old", "grow new"]);
    }
    expected.extend(["drain old", "delete old"]);
    assert_eq!(pools, expected, "{:?}", mutating(&log));
    // Each grow is read back Ready before the next shrink.
    let grows: Vec<usize> = log
        .iter()
        .enumerate()
        .filter(|(_, e)| e["path"] == format!("{POOLS}/a3mega-2:setSize"))
        .map(|(i, _)| i)
        .collect();
    let shrinks: Vec<usize> = log
        .iter()
        .enumerate()
        .filter(|(_, e)| e["path"] == format!("{POOLS}/a3mega:setSize"))
        .map(|(i, _)| i)
        .collect();
    for (grow, next_shrink) in grows.iter().zip(shrinks.iter().skip(1)) {
        assert!(
            log[*grow..*next_shrink].iter().any(|e| e["path"]
                .as_str()
                .is_some_and(|p| p.ends_with("/api/v1/nodes"))),
            "the grown pool's nodes are read between {grow} and {next_shrink}"
        );
    }
    assert_eq!(in_use(&cx).await, 32);
    let again = cx.run(&["plan", &blueprint]).await.expect(0);
    assert!(again.stdout.contains("No changes."), "{}", again.stdout);
}

#[tokio::test]
async fn with_no_room_it_is_refused_before_any_call_unless_deleting_first_is_asked() {
    let cx = roomy().await;
    let blueprint = mega_on(&cx, 32).await;
    for args in [
        vec!["plan", &blueprint, "--replace", "node_pool.a3mega"],
        vec![
            "apply",
            &blueprint,
            "--replace",
            "node_pool.a3mega",
            "--auto-approve",
        ],
    ] {
        let refused = cx.run(&args).await.expect(1);
        for text in [
            "No way to replace `node_pool.a3mega` without giving up its GPUs; nothing was changed",
            "reservation res (us-central1-a) has 0 free VM(s)",
            "resize the reservation",
            "or name a second reservation",
            "--delete-first node_pool.a3mega",
        ] {
            assert!(refused.stderr.contains(text), "{text}\n{}", refused.stderr);
        }
    }
    let log = common::request_log(&cx).await;
    assert_eq!(mutating(&log), Vec::<String>::new());

    let opt_in = [
        "--replace",
        "node_pool.a3mega",
        "--delete-first",
        "node_pool.a3mega",
    ];
    cx.run(&[&["apply", &blueprint, "--auto-approve"][..], &opt_in].concat())
        .await
        .expect(0);
    let log = common::request_log(&cx).await;
    let delete = first(&log, "the delete", |e| {
        is(e, "DELETE", &format!("{POOLS}/a3mega"))
    });
    let create = first(&log, "the create", |e| is(e, "POST", POOLS));
    assert!(delete < create, "deleted first");
    assert_eq!(in_use(&cx).await, 32);
}

#[tokio::test]
async fn a_failed_create_of_the_new_pool_leaves_the_old_pool_and_its_nodes() {
    let cx = roomy().await;
    let blueprint = mega_on(&cx, 64).await;
    // Someone else takes 31 of the 32 free VMs between the plan and the apply: the new pool's
    // create gets 1 node and fails.
    let plan = cx
        .run(&[
            "plan",
            &blueprint,
            "--replace",
            "node_pool.a3mega",
            "--out",
            "p.json",
        ])
        .await
        .expect(0);
    assert!(
        plan.stdout.contains("create before destroy"),
        "{}",
        plan.stdout
    );
    let (ok, out, err) = Gcloud::in_project(&cx.sim, "my-project")
        .run(&[
            "compute",
            "reservations",
            "update",
            "res",
            "--zone=us-central1-a",
            "--vm-count=33",
        ])
        .await;
    assert!(ok, "{out}\n{err}");
    clear_log(&cx).await;
    let apply = cx
        .run(&["apply", "p.json", "--auto-approve", "--skip-preflight"])
        .await
        .expect(1);
    assert!(
        apply.stderr.contains("Failed to create `node_pool.a3mega`"),
        "{}",
        apply.stderr
    );
    let log = common::request_log(&cx).await;
    assert!(
        !mutating(&log)
            .iter()
            .any(|m| m.contains("nodePools/a3mega\"")
                || m.ends_with("nodePools/a3mega")
                || m.contains("a3mega:setSize")),
        "the old pool is left alone: {:?}",
        mutating(&log)
    );
    // The old pool still has its 32 nodes, and state still records it (retiring).
    assert_eq!(pool_nodes(&cx, "a3mega").await, Some(32));
    let list = cx.run(&["state", "list", &blueprint]).await.expect(0);
    assert!(
        list.stdout.contains("node_pool.a3mega~old"),
        "{}",
        list.stdout
    );
}

/// An apply killed in the middle of a batched move (its 6th `setSize` handled, the answer
/// held) is finished by the next apply of the blueprint alone: the plan sees the old pool
/// recorded as retiring, grows the new pool in batches, then deletes the old one.
#[tokio::test]
async fn an_apply_killed_mid_move_is_finished_by_the_next_one() {
    use a3ctl_sim::faults::{FaultConfig, TripWhen, Tripwire};
    let cx = roomy().await;
    let blueprint = mega_on(&cx, 34).await;
    cx.sim.set_faults(FaultConfig {
        tripwires: vec![Tripwire {
            api: "container".into(),
            method: Some("POST".into()),
            path: Some(":setSize".into()),
            nth: 6,
            when: TripWhen::After,
        }],
        ..Default::default()
    });
    let mut child = cx
        .command(&[
            "apply",
            &blueprint,
            "--auto-approve",
            "--replace",
            "node_pool.a3mega",
            "--batch-size",
            "2",
        ])
        .spawn()
        .expect("a3ctl starts");
    tokio::time::timeout(std::time::Duration::from_secs(120), cx.sim.wait_tripped())
        .await
        .expect("the apply reaches its 6th setSize");
    child.start_kill().expect("SIGKILL");
    let _ = child.wait().await;
    cx.sim.set_faults(FaultConfig::default());
    let list = cx.run(&["state", "list", &blueprint]).await.expect(0);
    assert!(
        list.stdout.contains("node_pool.a3mega~old") && list.stdout.contains("node_pool.a3mega\n"),
        "both pools are recorded: {}",
        list.stdout
    );

    cx.run(&["apply", &blueprint, "--auto-approve"])
        .await
        .expect(0);
    assert_eq!(pool_nodes(&cx, "a3mega").await, None);
    assert_eq!(pool_nodes(&cx, "a3mega-2").await, Some(32));
    assert_eq!(in_use(&cx).await, 32);
    let list = cx.run(&["state", "list", &blueprint]).await.expect(0);
    assert!(!list.stdout.contains("~old"), "{}", list.stdout);
    let again = cx.run(&["plan", &blueprint]).await.expect(0);
    assert!(again.stdout.contains("No changes."), "{}", again.stdout);
}
