//! `--target`, `--exclude` and `--replace` against the simulator: a targeted apply creates the
//! target and what it depends on (and a later plan shows the rest), a targeted destroy removes the
//! target and its dependents, an exclusion a target needs is refused with the chain that links
//! them, unknown addresses are refused with the closest one, a saved plan keeps its selection, and
//! `--replace` replaces exactly what it names. Every refusal exits 1 without a mutating request.

use crate::common;

use common::{Run, TestContext};

const BP: &str = "blueprints/minimal.toml";

/// Requests of `method` whose endpoint contains `part`.
fn count(cx: &TestContext, method: &str, part: &str) -> u64 {
    cx.sim
        .request_counts()
        .iter()
        .filter(|(endpoint, _)| {
            endpoint.starts_with(&format!("{method} ")) && endpoint.contains(part)
        })
        .map(|(_, n)| n)
        .sum()
}

/// The names of the simulator's Compute resources of `collection` (e.g. `networks`).
fn names(cx: &TestContext, collection: &str) -> Vec<String> {
    cx.sim.inventory()["compute"][collection]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .iter()
        .filter_map(|r| r["name"].as_str().map(str::to_string))
        .collect()
}

/// The addresses recorded in state.
async fn recorded(cx: &TestContext) -> Vec<String> {
    let run = cx.run(&["state", "list", BP]).await.expect(0);
    run.stdout.lines().map(str::to_string).collect()
}

/// Runs `args`, expects exit 1 with `message` on stderr, and no mutating request.
async fn refused(cx: &TestContext, args: &[&str], message: &str) -> Run {
    let before = common::mutations(cx);
    let run = cx.run(args).await.expect(1);
    assert!(
        run.stderr.contains(message),
        "expected {message:?} in:\n{}",
        run.stderr
    );
    assert_eq!(
        common::mutations(cx),
        before,
        "a refused {args:?} made a mutating request"
    );
    run
}

#[tokio::test]
async fn a_targeted_apply_creates_the_target_and_its_dependencies_and_a_later_plan_shows_the_rest()
{
    let cx = TestContext::new().await;
    let run = cx
        .run(&[
            "apply",
            BP,
            "--target",
            "subnetwork.primary",
            "--auto-approve",
        ])
        .await
        .expect(0);
    assert!(
        run.stdout
            .contains("Warning: This plan is partial (--target subnetwork.primary)"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout
            .contains("Plan: 2 to add, 0 to change, 0 to destroy."),
        "{}",
        run.stdout
    );
    assert!(
        run.stderr.contains("Applied changes may be incomplete"),
        "{}",
        run.stderr
    );
    assert_eq!(
        recorded(&cx).await,
        ["network.primary", "subnetwork.primary"]
    );
    assert_eq!(names(&cx, "networks"), ["a3mini-net"]);
    assert_eq!(names(&cx, "subnetworks"), ["a3mini-subnet"]);
    assert!(names(&cx, "routers").is_empty());
    assert!(names(&cx, "firewalls").is_empty());
    assert_eq!(count(&cx, "POST", "/clusters"), 0);

    // The whole plan shows the rest, and nothing of what exists.
    let plan = cx.run(&["plan", BP]).await.expect(0);
    assert!(
        plan.stdout.contains("# network.gpu-1 will be created"),
        "{}",
        plan.stdout
    );
    assert!(
        plan.stdout.contains("# cluster.main will be created"),
        "{}",
        plan.stdout
    );
    assert!(
        !plan.stdout.contains("# subnetwork.primary will"),
        "{}",
        plan.stdout
    );
    assert!(
        !plan.stdout.contains("# network.primary will"),
        "{}",
        plan.stdout
    );
    assert!(!plan.stdout.contains("partial"), "{}", plan.stdout);
}

#[tokio::test]
async fn a_targeted_destroy_removes_the_target_and_its_dependents_only() {
    let cx = TestContext::new().await;
    cx.run(&[
        "apply",
        BP,
        "--target",
        "subnetwork.primary",
        "--target",
        "network.gpu-1",
        "--auto-approve",
    ])
    .await
    .expect(0);
    assert_eq!(
        recorded(&cx).await,
        ["network.gpu-1", "network.primary", "subnetwork.primary"]
    );

    // Keeping the subnet while destroying its network is refused, with the reason.
    refused(
        &cx,
        &[
            "destroy",
            BP,
            "--target",
            "network.primary",
            "--exclude",
            "subnetwork.primary",
            "--auto-approve",
        ],
        "`--exclude subnetwork.primary` conflicts with `--target network.primary`: subnetwork.primary depends on network.primary, so it must be destroyed first",
    )
    .await;

    let run = cx
        .run(&[
            "destroy",
            BP,
            "--target",
            "network.primary",
            "--auto-approve",
        ])
        .await
        .expect(0);
    assert!(
        run.stdout
            .contains("Warning: This plan is partial (--target network.primary)"),
        "{}",
        run.stdout
    );
    assert!(
        run.stderr.contains("Resources: 2 destroyed."),
        "{}",
        run.stderr
    );
    assert_eq!(recorded(&cx).await, ["network.gpu-1"]);
    assert_eq!(names(&cx, "networks"), ["a3mini-gpunet-1"]);
    assert!(names(&cx, "subnetworks").is_empty());

    // --exclude on destroy keeps the address (and what it depends on).
    cx.run(&[
        "destroy",
        BP,
        "--exclude",
        "network.gpu-1",
        "--auto-approve",
    ])
    .await
    .expect(0);
    assert_eq!(recorded(&cx).await, ["network.gpu-1"]);
}

#[tokio::test]
async fn an_exclusion_a_target_needs_is_refused_with_the_chain() {
    let cx = TestContext::new().await;
    let message = "`--exclude network.primary` conflicts with `--target cluster.main`: cluster.main depends on network.primary via subnetwork.primary";
    for command in ["plan", "apply"] {
        let run = refused(
            &cx,
            &[
                command,
                BP,
                "--target",
                "cluster.main",
                "--exclude",
                "network.primary",
                "--auto-approve",
            ]
            .into_iter()
            .filter(|a| command == "apply" || *a != "--auto-approve")
            .collect::<Vec<_>>(),
            message,
        )
        .await;
        assert!(
            run.stderr.contains("hint: drop that --exclude"),
            "{}",
            run.stderr
        );
    }
}

#[tokio::test]
async fn unknown_and_malformed_addresses_are_refused_with_the_closest_match() {
    let cx = TestContext::new().await;
    let run = refused(
        &cx,
        &["apply", BP, "--target", "cluster.mian", "--auto-approve"],
        "--target cluster.mian: no resource `cluster.mian` in this plan",
    )
    .await;
    assert!(
        run.stderr.contains("did you mean `cluster.main`?"),
        "{}",
        run.stderr
    );
    refused(
        &cx,
        &["plan", BP, "--exclude", "netwrk.primary"],
        "--exclude netwrk.primary: `netwrk.primary` is not a resource address",
    )
    .await;
    refused(
        &cx,
        &["plan", BP, "--target", "bogus.*"],
        "`bogus` is not a kind",
    )
    .await;
    refused(
        &cx,
        &[
            "destroy",
            BP,
            "--target",
            "network.primary",
            "--auto-approve",
        ],
        "--target network.primary: no resource `network.primary` in this plan",
    )
    .await;
}

#[tokio::test]
async fn a_kind_glob_and_an_exclusion_narrow_the_plan() {
    let cx = TestContext::new().await;
    let run = cx
        .run(&["plan", BP, "--target", "network.*"])
        .await
        .expect(0);
    assert!(
        run.stdout
            .contains("Plan: 9 to add, 0 to change, 0 to destroy."),
        "{}",
        run.stdout
    );
    assert!(!run.stdout.contains("# subnetwork."), "{}", run.stdout);

    // Excluding the primary network leaves out what depends on it: subnet, cluster, pools...
    let run = cx
        .run(&["plan", BP, "--exclude", "network.primary", "--json"])
        .await
        .expect(0);
    let plan: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(plan["partial"], true);
    assert_eq!(plan["selection"]["excludes"][0], "network.primary");
    let addresses: Vec<&str> = plan["resource_changes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["address"].as_str().unwrap())
        .collect();
    assert!(addresses.contains(&"network.gpu-1"), "{addresses:?}");
    for gone in [
        "network.primary",
        "subnetwork.primary",
        "cluster.main",
        "node_pool.gpu-0",
    ] {
        assert!(!addresses.contains(&gone), "{gone} in {addresses:?}");
    }
    let left_out = plan["selection"]["left_out"].as_array().unwrap();
    assert!(left_out.iter().any(|a| a == "cluster.main"), "{left_out:?}");
    assert_eq!(common::mutations(&cx), 0);
}

#[tokio::test]
async fn a_saved_plan_keeps_its_selection() {
    let cx = TestContext::new().await;
    let plan = cx
        .run(&[
            "plan",
            BP,
            "--target",
            "subnetwork.primary",
            "--out",
            "t.plan",
        ])
        .await
        .expect(0);
    assert!(
        plan.stderr.contains("a3ctl apply t.plan"),
        "{}",
        plan.stderr
    );
    refused(
        &cx,
        &["apply", "t.plan", "--target", "network.primary"],
        "--target, --exclude and --replace cannot be used with a saved plan",
    )
    .await;
    let run = cx.run(&["apply", "t.plan"]).await.expect(0);
    assert!(
        run.stdout
            .contains("Warning: This plan is partial (--target subnetwork.primary)"),
        "{}",
        run.stdout
    );
    assert_eq!(
        recorded(&cx).await,
        ["network.primary", "subnetwork.primary"]
    );
}

#[tokio::test]
async fn replace_replaces_exactly_the_named_resource() {
    let cx = TestContext::new().await;
    // Nothing recorded: nothing to replace.
    let run = refused(
        &cx,
        &["apply", BP, "--replace", "subnetwork.primary", "--auto-approve"],
        "--replace subnetwork.primary: `subnetwork.primary` is not in state, so there is nothing to replace",
    )
    .await;
    assert!(
        run.stderr
            .contains("`subnetwork.primary` does not exist yet: the plan creates it"),
        "{}",
        run.stderr
    );
    cx.run(&[
        "apply",
        BP,
        "--target",
        "subnetwork.primary",
        "--target",
        "network.gpu-1",
        "--auto-approve",
    ])
    .await
    .expect(0);
    refused(
        &cx,
        &["plan", BP, "--replace", "subnetwork.primry"],
        "did you mean `subnetwork.primary`?",
    )
    .await;
    refused(
        &cx,
        &["plan", BP, "--replace", "subnet"],
        "--replace subnet: `subnet` is not a resource address",
    )
    .await;

    // A replacement takes its replaced dependents along: excluding one is refused.
    refused(
        &cx,
        &[
            "apply",
            BP,
            "--replace",
            "network.primary",
            "--exclude",
            "subnetwork.primary",
            "--auto-approve",
        ],
        "`--exclude subnetwork.primary` conflicts with the change of network.primary: it needs subnetwork.primary (what depends on a replaced or deleted resource changes first: network.primary -> subnetwork.primary)",
    )
    .await;

    let (deletes, inserts) = (
        count(&cx, "DELETE", "/subnetworks"),
        count(&cx, "POST", "/subnetworks"),
    );
    let networks = count(&cx, "DELETE", "/networks");
    let run = cx
        .run(&[
            "apply",
            BP,
            "--target",
            "subnetwork.primary",
            "--replace",
            "subnetwork.primary",
            "--auto-approve",
        ])
        .await
        .expect(0);
    assert!(
        run.stdout
            .contains("# (because replacement requested with --replace)"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout
            .contains("Plan: 1 to add, 0 to change, 1 to destroy."),
        "{}",
        run.stdout
    );
    assert_eq!(count(&cx, "DELETE", "/subnetworks"), deletes + 1);
    assert_eq!(count(&cx, "POST", "/subnetworks"), inserts + 1);
    assert_eq!(count(&cx, "DELETE", "/networks"), networks);
    assert_eq!(
        recorded(&cx).await,
        ["network.gpu-1", "network.primary", "subnetwork.primary"]
    );
}

#[tokio::test]
async fn the_flags_are_refused_where_they_cannot_apply() {
    let cx = TestContext::new().await;
    // Flags that do not go together are refused before anything runs.
    for args in [
        &["plan", BP, "--destroy", "--replace", "network.primary"][..],
        &["plan", BP, "--refresh-only", "--target", "network.primary"][..],
        &[
            "apply",
            BP,
            "--refresh-only",
            "--exclude",
            "network.primary",
        ][..],
    ] {
        let run = cx.run(args).await;
        // A usage error exits 1, never `--detailed-exitcode`'s 2.
        assert_eq!(run.code, Some(1), "{args:?}: {}", run.stderr);
        assert!(run.stderr.contains("cannot be used with"), "{}", run.stderr);
    }
    assert_eq!(common::mutations(&cx), 0);

    // An interrupted apply must be finished by a whole apply first.
    cx.run(&[
        "apply",
        BP,
        "--target",
        "subnetwork.primary",
        "--auto-approve",
    ])
    .await
    .expect(0);
    let path = cx.path("state/a3mini.a3state.json");
    let mut state: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    state["pending"] = serde_json::json!([{
        "addr": "network.gpu-2", "action": "create", "id": "x", "operation": null,
        "started_at": "2026-11-21T00:00:00Z"
    }]);
    std::fs::write(&path, serde_json::to_vec(&state).unwrap()).unwrap();
    for args in [
        &["plan", BP, "--target", "network.primary"][..],
        &[
            "apply",
            BP,
            "--replace",
            "network.primary",
            "--auto-approve",
        ][..],
        &[
            "destroy",
            BP,
            "--exclude",
            "network.primary",
            "--auto-approve",
        ][..],
    ] {
        let run = refused(
            &cx,
            args,
            "--target, --exclude and --replace need a state without interrupted operations: 1 operation(s) of an interrupted apply are still recorded",
        )
        .await;
        assert!(
            run.stderr.contains(
                "run a whole `a3ctl apply blueprints/minimal.toml` (or `a3ctl destroy blueprints/minimal.toml`)"
            ),
            "{}",
            run.stderr
        );
    }
    // A whole plan says the journaled create is resumed, not started again (issue 26 item 13).
    let plan = cx.run(&["plan", BP, "--verbose"]).await.expect(0);
    assert!(
        plan.stdout.contains(
            "  # network.gpu-2 will be created\n  # (because an interrupted apply called its create and lost the answer: the apply looks for what it made before creating)\n"
        ),
        "{}",
        plan.stdout
    );
}

#[tokio::test]
async fn prevent_destroy_guards_only_what_a_partial_plan_keeps() {
    let cx = TestContext::new().await;
    let text = std::fs::read_to_string(cx.path(BP)).unwrap()
        + "\n[[bucket]]\nname = \"my-project-a3mini-keep\"\nprevent_destroy = true\n";
    let bp = "blueprints/kept.toml";
    cx.write(bp, &text);
    cx.run(&[
        "apply",
        bp,
        "--target",
        "subnetwork.primary",
        "--target",
        "bucket.my-project-a3mini-keep",
        "--auto-approve",
    ])
    .await
    .expect(0);

    // The whole destroy, and one that selects the bucket, are refused.
    for args in [
        &["destroy", bp, "--auto-approve"][..],
        &[
            "destroy",
            bp,
            "--target",
            "bucket.my-project-a3mini-keep",
            "--auto-approve",
        ][..],
        &[
            "apply",
            bp,
            "--replace",
            "bucket.my-project-a3mini-keep",
            "--auto-approve",
        ][..],
    ] {
        refused(
            &cx,
            args,
            "the plan would destroy `bucket.my-project-a3mini-keep`, which has `prevent_destroy`",
        )
        .await;
    }
    // One that leaves the bucket out goes ahead.
    cx.run(&[
        "destroy",
        bp,
        "--exclude",
        "bucket.my-project-a3mini-keep",
        "--auto-approve",
    ])
    .await
    .expect(0);
    let run = cx.run(&["state", "list", bp]).await.expect(0);
    assert_eq!(run.stdout, "bucket.my-project-a3mini-keep\n");
}

#[tokio::test]
async fn a_targeted_destroy_of_the_gpu_pool_leaves_the_cluster() {
    let cx = TestContext::new().await;
    cx.run(&["apply", BP, "--auto-approve"]).await.expect(0);
    let all = recorded(&cx).await;
    let run = cx
        .run(&[
            "destroy",
            BP,
            "--target",
            "node_pool.gpu-0",
            "--auto-approve",
        ])
        .await
        .expect(0);
    assert!(
        run.stdout.contains("# node_pool.gpu-0 will be destroyed"),
        "{}",
        run.stdout
    );
    let left = recorded(&cx).await;
    assert!(!left.contains(&"node_pool.gpu-0".to_string()), "{left:?}");
    for kept in ["cluster.main", "node_pool.system", "network.primary"] {
        assert!(left.contains(&kept.to_string()), "{kept} gone: {left:?}");
    }
    // What went is the pool and what depends on it, nothing else.
    let gone: Vec<&String> = all.iter().filter(|a| !left.contains(a)).collect();
    assert!(
        gone.iter()
            .all(|a| a.as_str() == "node_pool.gpu-0" || a.starts_with("k8s.")),
        "{gone:?}"
    );
    let pools: Vec<String> = cx.sim.inventory()["container"]["clusters"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|c| c["nodePools"].as_array().cloned().unwrap_or_default())
        .filter_map(|p| p["name"].as_str().map(str::to_string))
        .collect();
    assert!(pools.contains(&"system".to_string()), "{pools:?}");
    assert!(!pools.contains(&"gpu-0".to_string()), "{pools:?}");

    // A whole plan puts it back.
    let plan = cx.run(&["plan", BP]).await.expect(0);
    assert!(
        plan.stdout.contains("# node_pool.gpu-0 will be created"),
        "{}",
        plan.stdout
    );
}
