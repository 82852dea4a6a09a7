//! `--sandbox --world FILE`: the sandbox's project from a world file — kept for later runs, the
//! truth about reservations (none is made up for the blueprint), checked before anything starts.

use crate::common;

use common::TestContext;

const MEGA: &str = "blueprints/a3-mega.toml";

/// A world whose A3 Mega reservation holds 8 VMs, where the blueprint wants 32.
const SHORT: &str = r#"
[[projects]]
id = "my-project"
number = "123456789012"

[[reservations]]
project = "my-project"
zone = "us-central1-a"
name = "a3mega-reservation"
machine_type = "a3-megagpu-8g"
accelerator_type = "nvidia-h100-mega-80gb"
accelerator_count = 8
count = 8
deployment_type = "DENSE"
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_world_file_sets_up_the_sandbox_and_is_kept() {
    let cx = TestContext::new().await;
    cx.write("short.toml", SHORT);

    // The reservation is the world's, 8 VMs: preflight refuses the 32-node pool.
    let plan = cx
        .sandbox(&["plan", MEGA, "--world", "short.toml"])
        .await
        .expect(1);
    assert!(
        plan.stderr.contains(
            "reservation `a3mega-reservation` has 8 free VMs (8 reserved, 0 in use); the plan adds 32 nodes from it"
        ),
        "{}",
        plan.stderr
    );
    assert_eq!(
        std::fs::read_to_string(cx.path("state/sandbox/world.toml")).unwrap(),
        SHORT
    );
    // Later runs keep the world without --world.
    let again = cx.sandbox(&["plan", MEGA]).await.expect(1);
    assert!(again.stderr.contains("has 8 free VMs"), "{}", again.stderr);

    // Another world cannot replace the one the sandbox has.
    cx.write(
        "other.toml",
        &SHORT.replace("\ncount = 8\n", "\ncount = 32\n"),
    );
    let refused = cx
        .sandbox(&["plan", MEGA, "--world", "other.toml"])
        .await
        .expect(1);
    assert!(
        refused.stderr.contains("The sandbox already has a world"),
        "{}",
        refused.stderr
    );
    assert!(
        refused
            .stderr
            .contains("move `state/sandbox` away to start over"),
        "{}",
        refused.stderr
    );
    // Moved away, the new world is set up.
    std::fs::rename(cx.path("state/sandbox"), cx.path("old-sandbox")).unwrap();
    cx.sandbox(&["plan", MEGA, "--world", "other.toml"])
        .await
        .expect(0);
}

#[tokio::test]
async fn a_bad_world_file_or_world_without_sandbox_is_refused_before_anything_starts() {
    let cx = TestContext::new().await;
    cx.write(
        "typo.toml",
        "[[projects]]\nid = \"my-project\"\nnumbr = \"1\"\n",
    );
    let bad = cx
        .sandbox(&["plan", MEGA, "--world", "typo.toml"])
        .await
        .expect(1);
    assert!(
        bad.stderr.contains("The world file `typo.toml` is invalid"),
        "{}",
        bad.stderr
    );
    assert!(bad.stderr.contains("typo.toml:3:1"), "{}", bad.stderr);
    assert!(bad.stderr.contains("numbr"), "{}", bad.stderr);
    assert!(!cx.path("state/sandbox").exists(), "nothing started");

    let before = cx.sim.request_total();
    let cloud = cx
        .run(&["plan", MEGA, "--world", "typo.toml"])
        .await
        .expect(1);
    assert!(
        cloud
            .stderr
            .contains("`--world` applies only to the sandbox"),
        "{}",
        cloud.stderr
    );
    assert_eq!(cx.sim.request_total(), before, "no cloud call");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_sandbox_says_which_reservations_it_made_and_leaves_a_typo_missing() {
    let cx = TestContext::new().await;
    let made = cx.sandbox(&["plan", MEGA]).await.expect(0);
    assert!(
        made.stderr.contains(
            "Sandbox: made reservation `a3mega-reservation` in us-central1-a for `node_pool.a3mega` (64 × a3-megagpu-8g)"
        ),
        "{}",
        made.stderr
    );
    // Made once: the next run finds it and says nothing.
    let again = cx.sandbox(&["plan", MEGA]).await.expect(0);
    assert!(!again.stderr.contains("Sandbox: made"), "{}", again.stderr);

    // Day two, a typo: not made real, so preflight fails as it would on Google Cloud.
    let text = std::fs::read_to_string(cx.path(MEGA)).unwrap();
    let typo = text.replace("\"a3mega-reservation\"", "\"a3mega-resrvation\"");
    assert_ne!(typo, text);
    cx.write("blueprints/typo.toml", &typo);
    let refused = cx
        .sandbox(&["plan", "blueprints/typo.toml"])
        .await
        .expect(1);
    assert!(
        refused.stderr.contains(
            "Sandbox: did not make reservation `a3mega-resrvation` in us-central1-a for `node_pool.a3mega`: the world has `a3mega-reservation` there (a typo?)"
        ),
        "{}",
        refused.stderr
    );
    assert!(
        refused.stderr.contains("a3mega-resrvation"),
        "{}",
        refused.stderr
    );
    assert!(
        !refused.stderr.contains("move it away"),
        "{}",
        refused.stderr
    );
}

/// The reservation checks of a plan's `Preflight:`.
fn reservation_lines(stdout: &str) -> String {
    stdout
        .lines()
        .filter(|l| l.starts_with("  ✓ reservation ") || l.starts_with("  ✗ reservation "))
        .collect::<Vec<_>>()
        .join("\n")
}

// See: issue 26 item 4 — the plan marks the reservations the sandbox made (on Google Cloud they
// must exist), and one Compute Engine refuses to make is its error, not raw JSON.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_plan_marks_the_sandboxs_reservations_and_a_refused_one_reads_as_text() {
    let cx = TestContext::new().await;
    let made = cx.sandbox(&["plan", MEGA]).await.expect(0);
    insta::assert_snapshot!(
        "sandbox-provided-reservation",
        reservation_lines(&made.stdout)
    );
    // A later run finds it and still knows it for the sandbox's.
    let again = cx.sandbox(&["plan", MEGA]).await.expect(0);
    assert_eq!(
        reservation_lines(&again.stdout),
        reservation_lines(&made.stdout)
    );
    // Outside the sandbox the same reservation is the project's: no mark.
    let real = cx.run(&["plan", MEGA]).await.expect(0);
    assert!(
        real.stdout
            .contains("  ✓ reservation a3mega-reservation (us-central1-a): need 32 × "),
        "{}",
        real.stdout
    );
    assert!(!real.stdout.contains("sandbox-provided"), "{}", real.stdout);

    // 200 nodes: twice that is more vCPUs than the sandbox's regional quota.
    let text = std::fs::read_to_string(cx.path(MEGA)).unwrap();
    let big = text.replacen("\nnodes = 32\n", "\nnodes = 200\n", 1);
    assert_ne!(big, text);
    let big = big.replace("\"a3mega-reservation\"", "\"a3mega-big\"");
    cx.write("blueprints/big.toml", &big);
    let refused = cx.sandbox(&["plan", "blueprints/big.toml"]).await.expect(1);
    assert!(!refused.stderr.contains("{\""), "{}", refused.stderr);
    insta::assert_snapshot!("sandbox-reservation-refused", refused.stderr);
}
