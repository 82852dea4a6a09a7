//! Where local state cannot live (issue 26 item 9): a regular file named `state` in the directory
//! a3ctl runs in stands where its `state/` directory (the local state, its lock and the sandbox's
//! world) must be. Tests run as root, for whom no permission bit blocks a write, so the file is
//! how a directory that cannot hold the state is made here. What the user sees — the error, the
//! hint and the exit code — is snapshotted, and the hint's command, pasted, fixes it.

use crate::common;

use common::{Run, TestContext};

const BP: &str = "blueprints/minimal.toml";

/// The exit code, stdout and stderr of a run, as a snapshot holds them.
fn shown(run: &Run) -> String {
    let code = run.code.map_or("none".to_string(), |c| c.to_string());
    format!(
        "exit_code: {code}\n----- stdout -----\n{}----- stderr -----\n{}",
        run.stdout, run.stderr
    )
}

fn snapshot(name: &str, run: &Run) {
    insta::with_settings!({
        snapshot_path => "snapshots/output",
        prepend_module_to_snapshot => false,
        omit_expression => true,
    }, {
        insta::assert_snapshot!(name, shown(run));
    });
}

/// The command the hint gives in ``(`…`)``.
fn pasted_command(stderr: &str) -> String {
    // miette may wrap the hint: read it as one line.
    let words = stderr.split_whitespace().collect::<Vec<_>>().join(" ");
    let start = words.find("(`").expect("the hint gives a command") + 2;
    let end = start + words[start..].find("`)").expect("the command ends");
    words[start..end].to_string()
}

// See: issue 26 item 9 ("a read-only directory gets `Cannot lock state …` with no hint").
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_file_where_the_state_directory_goes_is_named_with_a_command_that_fixes_it() {
    let cx = TestContext::new().await;
    cx.write("state", "my notes\n");

    let plan = cx.sandbox(&["plan", BP]).await.expect(1);
    snapshot("state-dir-file-sandbox-plan", &plan);
    let apply = cx.sandbox(&["apply", BP, "--auto-approve"]).await.expect(1);
    assert_eq!(apply.stderr, plan.stderr, "apply says what plan says");

    // Against a cloud (here the test's simulator) the state's own lock is refused the same way,
    // and the blueprint's `[state]` is a way out too. Nothing was asked of the cloud.
    let real = cx.run(&["apply", BP, "--auto-approve"]).await.expect(1);
    snapshot("state-dir-file-apply", &real);
    let log = common::request_log(&cx).await;
    assert!(log.is_empty(), "{log:#?}");

    // The hint's command, pasted, is the fix: the file is kept, the plan runs.
    let command = pasted_command(&plan.stderr);
    assert_eq!(command, "mv state state.old");
    let pasted = std::process::Command::new("sh")
        .args(["-c", &command])
        .current_dir(cx.path("."))
        .status()
        .unwrap();
    assert!(pasted.success());
    assert_eq!(
        std::fs::read_to_string(cx.path("state.old")).unwrap(),
        "my notes\n"
    );
    cx.sandbox(&["plan", BP]).await.expect(0);
}
