//! A saved plan is refused when the blueprint's settings changed since it was made, and only
//! then: a comment, blank lines or a reordered key do not change what the blueprint means.

use crate::common;

use common::TestContext;

const BP: &str = "blueprints/minimal.toml";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_comment_keeps_a_saved_plan_and_a_changed_setting_refuses_it() {
    let cx = TestContext::new().await;
    cx.run(&["plan", BP, "--out", "minimal.plan"])
        .await
        .expect(0);
    let text = std::fs::read_to_string(cx.path(BP)).unwrap();
    // A comment at the top and a blank line at the end: the same blueprint.
    cx.write(BP, &format!("# reviewed by the platform team\n{text}\n\n"));
    cx.run(&["apply", "minimal.plan"]).await.expect(0);

    cx.run(&["plan", BP, "--out", "again.plan"]).await.expect(0);
    let changed = text.replacen("nodes = 1", "nodes = 2", 1);
    assert_ne!(changed, text, "the minimal blueprint has a pool of 1 node");
    cx.write(BP, &changed);
    let refused = cx.run(&["apply", "again.plan"]).await.expect(1);
    assert!(
        refused
            .stderr
            .contains("Blueprint `blueprints/minimal.toml` changed since the plan was made"),
        "{}",
        refused.stderr
    );
    assert!(
        refused.stderr.contains(
            "a3ctl plan blueprints/minimal.toml --out again.plan`, then `a3ctl apply again.plan`"
        ),
        "{}",
        refused.stderr
    );
}
