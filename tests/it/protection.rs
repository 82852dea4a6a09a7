//! Secure defaults: a3ctl's deletion protection (on unless the blueprint turns it off, off in the
//! sandbox) with Filestore's own `deletionProtectionEnabled`, lifted by an apply; `validate`'s
//! warnings about an open control plane.

use crate::common::{self, TestContext};

const MEGA: &str = "blueprints/a3-mega.toml";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_protected_cluster_is_not_destroyed_until_an_apply_lifts_the_protection() {
    let cx = TestContext::new().await;
    cx.run(&["apply", MEGA, "--auto-approve"]).await.expect(0);
    let built = cx.inventory_text();
    let fs = "projects/my-project/locations/us-central1-a/instances/a3mega-fs";

    // Filestore's own protection is on, so other tools cannot delete it either.
    let gcloud = common::gcloud::Gcloud::in_project(&cx.sim, "my-project");
    let (ok, _, err) = gcloud
        .run(&[
            "filestore",
            "instances",
            "delete",
            "a3mega-fs",
            "--zone=us-central1-a",
            "--quiet",
        ])
        .await;
    assert!(!ok, "gcloud deleted a protected instance");
    assert!(err.contains("deletion protection enabled"), "{err}");

    // destroy refuses before any call, naming what and how to lift it.
    let before = common::mutations(&cx);
    let refused = cx.run(&["destroy", MEGA, "--auto-approve"]).await.expect(1);
    assert!(
        refused.stderr.contains(
            "the plan would destroy `cluster.main` (projects/my-project/locations/us-central1/clusters/a3mega)"
        ),
        "{}",
        refused.stderr
    );
    assert!(
        refused
            .stderr
            .contains(&format!("`filestore.shared` ({fs})")),
        "{}",
        refused.stderr
    );
    assert!(
        refused.stderr.contains(&format!(
            "set `deletion_protection = false` under `[cluster]` in {MEGA}, run `a3ctl apply {MEGA}`"
        )),
        "{}",
        refused.stderr
    );
    assert_eq!(
        common::mutations(&cx),
        before,
        "a refused destroy made a call"
    );
    assert_eq!(cx.inventory_text(), built);

    // A replacement is refused too: a new network name forces a new cluster.
    let text = std::fs::read_to_string(cx.path(MEGA)).unwrap();
    let lifted = text.replace(
        "# deletion_protection is on unless",
        "deletion_protection = false\n# deletion_protection is on unless",
    );
    assert_ne!(lifted, text, "the shipped blueprint's comment moved");
    cx.write(
        MEGA,
        &text
            .replace("[cluster]\n", "[cluster]\nprivate_nodes = false\n")
            .replace("private_nodes = true\n", ""),
    );
    let replaced = cx.run(&["plan", MEGA]).await.expect(1);
    assert!(
        replaced.stderr.contains("deletion protection on"),
        "{}",
        replaced.stderr
    );

    // Lifting: two in-place changes, the cluster's without a call, Filestore's one PATCH.
    cx.write(MEGA, &lifted);
    let plan = cx.run(&["plan", MEGA]).await.expect(0);
    assert!(
        plan.stdout
            .contains("~ deletion_protection = true -> false"),
        "{}",
        plan.stdout
    );
    assert!(
        plan.stdout
            .contains("Plan: 0 to add, 2 to change, 0 to destroy."),
        "{}",
        plan.stdout
    );
    let container_before = container_mutations(&cx);
    cx.run(&["apply", MEGA, "--auto-approve"]).await.expect(0);
    assert_eq!(
        container_mutations(&cx),
        container_before,
        "GKE was called for a3ctl's own setting"
    );
    let patches: u64 = cx
        .sim
        .request_counts()
        .iter()
        .filter(|(e, _)| e.starts_with("PATCH ") && e.contains("/instances/"))
        .map(|(_, n)| n)
        .sum();
    assert_eq!(patches, 1);
    cx.run(&["destroy", MEGA, "--auto-approve"]).await.expect(0);
    let left = cx.sim.inventory();
    for (api, collection) in [
        ("compute", "networks"),
        ("container", "clusters"),
        ("file", "instances"),
        ("storage", "buckets"),
    ] {
        assert_eq!(
            left[api][collection],
            serde_json::json!([]),
            "{api} {collection} left"
        );
    }
}

fn container_mutations(cx: &TestContext) -> u64 {
    cx.sim
        .request_counts()
        .iter()
        .filter(|(e, _)| {
            let (method, path) = e.split_once(' ').unwrap_or(("", e));
            path.contains("/clusters") && common::is_mutation(method, path)
        })
        .map(|(_, n)| n)
        .sum()
}

/// The smallest shipped blueprint: the sandbox's default (`commands/session.rs`) is a setting of
/// the blueprint's `[cluster]`, the same whatever the blueprint builds, and the destroy is refused
/// from the plan, before any call; an A3 Mega here cost two sandbox applies of 32 GPU nodes.
const MINIMAL: &str = "blueprints/minimal.toml";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_sandbox_leaves_protection_off_unless_the_blueprint_asks() {
    let cx = TestContext::new().await;
    let sandbox = |args: &[&str]| {
        let mut all = vec!["--sandbox"];
        all.extend_from_slice(args);
        all.into_iter().map(String::from).collect::<Vec<_>>()
    };
    let text = std::fs::read_to_string(cx.path(MINIMAL)).unwrap();
    assert!(
        !text.contains("deletion_protection"),
        "the shipped blueprint sets deletion protection itself"
    );
    let args = sandbox(&["apply", MINIMAL, "--auto-approve"]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    cx.run(&args).await.expect(0);
    let args = sandbox(&["destroy", MINIMAL, "--auto-approve"]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let destroyed = cx.run(&args).await.expect(0);
    assert!(
        destroyed.stderr.contains("Destroy complete!"),
        "{}",
        destroyed.stderr
    );

    // Asked for explicitly, it holds in the sandbox too.
    assert!(!text.contains("[cluster]"), "{text}");
    cx.write(
        MINIMAL,
        &format!("{text}\n[cluster]\ndeletion_protection = true\n"),
    );
    let args = sandbox(&["apply", MINIMAL, "--auto-approve"]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    cx.run(&args).await.expect(0);
    let args = sandbox(&["destroy", MINIMAL, "--auto-approve"]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let refused = cx.run(&args).await.expect(1);
    assert!(
        refused
            .stderr
            .contains(&format!("run `a3ctl --sandbox apply {MINIMAL}`")),
        "{}",
        refused.stderr
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn validate_warns_about_an_open_control_plane_and_still_succeeds() {
    let cx = TestContext::new().await;
    let shipped = cx.run(&["--sandbox", "validate", MEGA]).await.expect(0);
    assert!(
        !shipped.stderr.contains("⚠"),
        "the shipped blueprint is warned about in the sandbox:\n{}",
        shipped.stderr
    );

    let text = std::fs::read_to_string(cx.path(MEGA)).unwrap().replace(
        r#"authorized_networks = [{ cidr = "203.0.113.0/24", name = "office" }]"#,
        r#"authorized_networks = [{ cidr = "0.0.0.0/0", name = "anywhere" }]"#,
    );
    cx.write("open.toml", &text);
    let open = cx.run(&["validate", "open.toml"]).await.expect(0);
    assert!(open.stdout.contains("is valid"), "{}", open.stdout);
    assert!(
        open.stderr
            .contains("⚠ The control plane is open to every address on the internet (`0.0.0.0/0`)"),
        "{}",
        open.stderr
    );
    assert!(open.stderr.contains("[open.toml:"), "{}", open.stderr);
    assert!(
        open.stderr
            .contains("help: name the ranges that run kubectl"),
        "{}",
        open.stderr
    );
    // -q keeps the summary and drops the warnings.
    let quiet = cx.run(&["validate", "-q", "open.toml"]).await.expect(0);
    assert!(quiet.stderr.is_empty(), "{}", quiet.stderr);
    assert_eq!(quiet.stdout, open.stdout);
}
