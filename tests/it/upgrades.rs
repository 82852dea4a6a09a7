//! A change of a cluster's GKE version or release channel is checked against GKE's offer before
//! anything changes (preflight reads the location's `getServerConfig`): a version the channel
//! does not offer, a minor downgrade and a jump of two minors are refused with what to do, and no
//! mutating request is made; one minor up is planned with the build it resolves to, and applied.

use crate::common::{self, TestContext};

const HIGH: &str = "blueprints/a3-high.toml";

fn with_cluster(cx: &TestContext, channel: &str, version: &str) {
    let text = std::fs::read_to_string(cx.path(HIGH)).unwrap();
    let changed = text
        .replace(
            "release_channel = \"regular\"",
            &format!("release_channel = \"{channel}\""),
        )
        .replace("version = \"1.33\"", &format!("version = \"{version}\""));
    assert!(changed.contains(&format!("version = \"{version}\"")));
    cx.write("changed.toml", &changed);
}

async fn master_version(cx: &TestContext) -> String {
    let g = common::gcloud::Gcloud::in_project(&cx.sim, "my-project");
    let (ok, out, err) = g
        .run(&[
            "container",
            "clusters",
            "describe",
            "a3high",
            "--location=us-central1",
            "--format=value(currentMasterVersion)",
        ])
        .await;
    assert!(ok, "{err}");
    out.trim().to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_version_gke_would_refuse_is_refused_before_any_change() {
    let cx = TestContext::new().await;
    // The blueprint's state is what `changed.toml` plans against.
    std::fs::copy(cx.path(HIGH), cx.path("changed.toml")).unwrap();
    cx.run(&["apply", "changed.toml", "--auto-approve"])
        .await
        .expect(0);
    assert_eq!(master_version(&cx).await, "1.33.5-gke.1080000");

    // 1.34 is not in the REGULAR channel: named, with the channel that offers it.
    with_cluster(&cx, "regular", "1.34");
    let before = common::mutations(&cx);
    let plan = cx.run(&["plan", "changed.toml"]).await.expect(1);
    assert!(
        plan.stdout.contains(
            "  ✗ GKE version 1.34 (REGULAR channel, us-central1): need 1.34 offered by REGULAR, available 1.33.5-gke.1080000, 1.33.4-gke.1245000, 1.32.12-gke.1050000"
        ),
        "{}",
        plan.stdout
    );
    assert!(
        plan.stderr
            .contains("`release_channel = \"rapid\"` (1.34.1-gke.1829001)"),
        "{}",
        plan.stderr
    );
    let apply = cx
        .run(&["apply", "changed.toml", "--auto-approve"])
        .await
        .expect(1);
    assert!(
        apply.stderr.contains("Preflight failed"),
        "{}",
        apply.stderr
    );

    // A build of an earlier minor, asked for exactly: GKE does not move a control plane there.
    // (A minor pin below what runs is the channel having moved ahead: a note, see below.)
    with_cluster(&cx, "regular", "1.32.12-gke.1050000");
    let plan = cx.run(&["plan", "changed.toml"]).await.expect(1);
    assert!(
        plan.stdout.contains(
            "GKE does not downgrade a control plane to an earlier minor version (1.33 → 1.32)"
        ),
        "{}",
        plan.stdout
    );
    assert_eq!(
        common::mutations(&cx),
        before,
        "a refused plan made a change"
    );
    assert_eq!(master_version(&cx).await, "1.33.5-gke.1080000");

    // One minor up, in a channel that offers it: planned with its build, then applied.
    with_cluster(&cx, "rapid", "1.34");
    let plan = cx.run(&["plan", "changed.toml"]).await.expect(0);
    assert!(
        plan.stdout.contains(
            "  ✓ GKE version 1.34 (RAPID channel, us-central1): need 1.34 offered by RAPID, available 1.34.1-gke.1829001"
        ),
        "{}",
        plan.stdout
    );
    cx.run(&["apply", "changed.toml", "--auto-approve"])
        .await
        .expect(0);
    assert_eq!(master_version(&cx).await, "1.34.1-gke.1829001");
    cx.run(&["plan", "changed.toml", "--detailed-exitcode"])
        .await
        .expect(0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_minors_at_once_are_refused_with_the_next_step() {
    let cx = TestContext::new().await;
    with_cluster(&cx, "regular", "1.32");
    cx.run(&["apply", "changed.toml", "--auto-approve"])
        .await
        .expect(0);
    assert_eq!(master_version(&cx).await, "1.32.12-gke.1050000");
    with_cluster(&cx, "rapid", "1.34");
    let before = common::mutations(&cx);
    let plan = cx.run(&["plan", "changed.toml"]).await.expect(1);
    assert!(
        plan.stdout
            .contains("the control plane runs 1.32.12-gke.1050000"),
        "{}",
        plan.stdout
    );
    assert!(
        plan.stderr.contains(
            "GKE upgrades a control plane one minor version at a time (1.32 → 1.34); set `version = \"1.33\"` and apply, then the next minor"
        ),
        "{}",
        plan.stderr
    );
    assert_eq!(common::mutations(&cx), before);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_control_plane_the_channel_moved_ahead_is_noted_not_planned() {
    let cx = TestContext::new().await;
    with_cluster(&cx, "regular", "1.32");
    cx.run(&["apply", "changed.toml", "--auto-approve"])
        .await
        .expect(0);
    // The channel's upgrade (here done with gcloud, as GKE's auto-upgrade would) moves the
    // control plane a minor ahead of the blueprint's pin.
    let g = common::gcloud::Gcloud::in_project(&cx.sim, "my-project");
    let (ok, _, err) = g
        .run(&[
            "container",
            "clusters",
            "upgrade",
            "a3high",
            "--master",
            "--cluster-version=1.33",
            "--location=us-central1",
            "--quiet",
        ])
        .await;
    assert!(ok, "{err}");
    assert_eq!(master_version(&cx).await, "1.33.5-gke.1080000");

    // Not a change (GKE would not move it back), and not drift: a note says what happened.
    let plan = cx
        .run(&["plan", "changed.toml", "--detailed-exitcode"])
        .await
        .expect(0);
    assert!(
        plan.stdout.contains(
            "Note: cluster.main runs 1.33.5-gke.1080000, ahead of the blueprint's version = \"1.32\": its release channel upgraded it"
        ),
        "{}",
        plan.stdout
    );
    assert!(
        plan.stdout
            .contains("set version = \"1.33\" to pin what runs"),
        "{}",
        plan.stdout
    );
    assert!(!plan.stdout.contains("~ version"), "{}", plan.stdout);
    assert!(!plan.stdout.contains("has changed"), "{}", plan.stdout);
    let json = cx.run(&["plan", "changed.toml", "--json"]).await.expect(0);
    let json: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    assert_eq!(json["notes"].as_array().map(Vec::len), Some(1), "{json}");

    // Pinned to what runs: nothing to note.
    with_cluster(&cx, "regular", "1.33");
    let plan = cx
        .run(&["plan", "changed.toml", "--detailed-exitcode"])
        .await
        .expect(0);
    assert!(!plan.stdout.contains("Note:"), "{}", plan.stdout);
}
