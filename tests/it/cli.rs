//! The command line itself: exit codes of usage errors, an "Examples:" section in every `--help`
//! (snapshots), shell completions, manual pages and the structured log.

use crate::common::{Run, TestContext};
use std::process::Command;

fn a3ctl(args: &[&str]) -> Run {
    Run::from(
        Command::new(env!("CARGO_BIN_EXE_a3ctl"))
            .args(args)
            .env("NO_COLOR", "1")
            .env("COLUMNS", "100")
            .env_remove("A3CTL_SANDBOX")
            .output()
            .expect("a3ctl runs"),
    )
}

/// Every command and subcommand, from the top-level and `state` help pages.
fn commands() -> Vec<Vec<String>> {
    fn listed(help: &str) -> Vec<String> {
        help.split("Commands:")
            .nth(1)
            .unwrap_or("")
            .lines()
            .skip(1)
            .take_while(|l| l.starts_with("  "))
            // A command's name starts its line; wrapped descriptions are indented further.
            .filter(|l| !l[2..].starts_with(' '))
            .filter_map(|l| l.split_whitespace().next())
            .filter(|c| *c != "help")
            .map(str::to_string)
            .collect()
    }
    let top = listed(&a3ctl(&["--help"]).expect(0).stdout);
    let mut all = vec![vec![]];
    for command in top {
        for sub in listed(&a3ctl(&[command.as_str(), "--help"]).expect(0).stdout) {
            all.push(vec![command.clone(), sub]);
        }
        all.push(vec![command]);
    }
    all
}

#[test]
fn every_help_page_has_examples_and_describes_every_argument() {
    let commands = commands();
    assert!(commands.len() > 15, "{commands:?}");
    for command in commands {
        let mut args: Vec<&str> = command.iter().map(String::as_str).collect();
        args.push("--help");
        let help = a3ctl(&args).expect(0).stdout;
        let examples = help
            .split("\nExamples:\n")
            .nth(1)
            .unwrap_or_else(|| panic!("`a3ctl {}` has no examples:\n{help}", command.join(" ")));
        let prefix = format!("a3ctl {}", command.join(" "));
        assert!(
            examples.contains(prefix.trim()),
            "the examples of `{prefix}` do not run it:\n{examples}"
        );
        // A positional argument without a description prints as `<NAME>` alone on its line.
        for line in help.split("Arguments:").nth(1).unwrap_or("").lines() {
            let line = line.trim();
            if line.is_empty() {
                break;
            }
            assert!(
                !(line.starts_with('<') && line.ends_with('>')),
                "`{prefix}` has an argument without a description: {line}"
            );
        }
        let name = if command.is_empty() {
            "a3ctl".to_string()
        } else {
            format!("a3ctl-{}", command.join("-"))
        };
        insta::assert_snapshot!(format!("help-{name}"), help);
    }
}

#[test]
fn usage_errors_exit_1_so_they_cannot_read_as_changes() {
    let typo = a3ctl(&["plan", "--detailed-exit-code", "a3.toml"]).expect(1);
    assert!(
        typo.stderr
            .contains("unexpected argument '--detailed-exit-code'"),
        "{}",
        typo.stderr
    );
    assert!(
        typo.stderr.contains("--detailed-exitcode"),
        "no suggestion: {}",
        typo.stderr
    );
    a3ctl(&["plan"]).expect(1);
    a3ctl(&["no-such-command"]).expect(1);
    a3ctl(&[]).expect(1);
    let help = a3ctl(&["--help"]).expect(0);
    assert!(help.stdout.contains("Usage: a3ctl"), "{}", help.stdout);
    let version = a3ctl(&["--version"]).expect(0);
    assert!(version.stdout.starts_with("a3ctl "), "{}", version.stdout);
}

#[test]
fn completion_scripts_cover_commands_and_flags_and_bash_loads_its_own() {
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let script = a3ctl(&["completions", shell]).expect(0).stdout;
        for word in ["destroy", "kubeconfig", "auto-approve", "detailed-exitcode"] {
            assert!(script.contains(word), "{shell} completion lacks {word}");
        }
    }
    let bash = a3ctl(&["completions", "bash"]).expect(0).stdout;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a3ctl.bash");
    std::fs::write(&path, bash).unwrap();
    // Sourced, it registers a completion function; completing `a3ctl pl` offers `plan`.
    let script = format!(
        "source {}; COMP_WORDS=(a3ctl pl); COMP_CWORD=1; COMP_LINE='a3ctl pl'; COMP_POINT=8; _a3ctl a3ctl pl a3ctl; printf '%s\\n' \"${{COMPREPLY[@]}}\"",
        path.display()
    );
    let out = Command::new("bash")
        .args(["-c", &script])
        .output()
        .expect("bash runs");
    let offered = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(offered.trim(), "plan", "{offered}");
    let bad = a3ctl(&["completions", "tcsh"]).expect(1);
    assert!(
        bad.stderr.contains("invalid value 'tcsh'"),
        "{}",
        bad.stderr
    );
}

#[test]
fn man_pages_are_written_for_every_command() {
    let page = a3ctl(&["man"]).expect(0).stdout;
    assert!(page.contains(".TH a3ctl 1"), "{page}");
    assert!(page.contains("Examples:"), "the manual lacks the examples");
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("man1");
    let wrote = a3ctl(&["man", "--out", out.to_str().unwrap()]).expect(0);
    assert!(wrote.stderr.starts_with("Wrote "), "{}", wrote.stderr);
    for name in [
        "a3ctl.1",
        "a3ctl-plan.1",
        "a3ctl-state-mv.1",
        "a3ctl-completions.1",
    ] {
        let text =
            std::fs::read_to_string(out.join(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(
            text.starts_with(".ie") || text.contains(".TH"),
            "{name}: {text}"
        );
    }
    // A file where the directory should be.
    let file = dir.path().join("taken");
    std::fs::write(&file, "x").unwrap();
    let refused = a3ctl(&["man", "--out", file.to_str().unwrap()]).expect(1);
    assert!(
        refused
            .stderr
            .contains("Cannot write the manual pages into"),
        "{}",
        refused.stderr
    );
    assert!(refused.stderr.contains("hint:"), "{}", refused.stderr);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_log_file_holds_every_step_as_json_without_secrets() {
    let cx = TestContext::new().await;
    let log = cx.path("a3ctl.log");
    let log_arg = log.to_str().unwrap().to_string();
    cx.run(&[
        "apply",
        "blueprints/a3-high.toml",
        "--auto-approve",
        "--log-file",
        &log_arg,
    ])
    .await
    .expect(0);
    let text = std::fs::read_to_string(&log).unwrap();
    let events: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect();
    let finished = |addr: &str| {
        events
            .iter()
            .any(|e| e["fields"]["message"] == "step finished" && e["fields"]["addr"] == addr)
    };
    assert!(
        finished("cluster.main") && finished("network.primary"),
        "{text}"
    );
    assert!(
        events.iter().any(|e| e["fields"]["message"] == "read"),
        "no read events"
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&log).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
    }
    // Everything, libraries included, still carries no credential: the Kubernetes client's
    // bearer token is redacted wherever a library logs it.
    let everything = cx.path("trace.log");
    let mut cmd = cx.command(&[
        "plan",
        "blueprints/a3-high.toml",
        "--log-file",
        everything.to_str().unwrap(),
    ]);
    cmd.env("RUST_LOG", "trace");
    crate::common::Run::from(cmd.output().await.unwrap()).expect(0);
    let trace = std::fs::read_to_string(&everything).unwrap();
    assert!(
        trace.lines().count() > 100,
        "{} lines",
        trace.lines().count()
    );
    assert!(
        !trace.contains("a3ctl-anonymous"),
        "a bearer token reached the log"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn verbose_logs_steps_on_stderr_and_rust_log_overrides_it() {
    let cx = TestContext::new().await;
    let applied = cx
        .run(&["apply", "blueprints/a3-high.toml", "--auto-approve", "-v"])
        .await
        .expect(0);
    assert!(
        applied.stderr.contains("step started"),
        "{}",
        applied.stderr
    );
    assert!(
        applied.stderr.contains("addr=cluster.main"),
        "{}",
        applied.stderr
    );
    let quiet = cx.run(&["plan", "blueprints/a3-high.toml"]).await.expect(0);
    assert!(
        !quiet.stderr.contains(" INFO ") && !quiet.stderr.contains(" DEBUG "),
        "{}",
        quiet.stderr
    );
    let mut cmd = cx.command(&["plan", "blueprints/a3-high.toml"]);
    cmd.env("RUST_LOG", "a3ctl=debug");
    let debug = crate::common::Run::from(cmd.output().await.unwrap()).expect(0);
    assert!(
        debug.stderr.contains("DEBUG") && debug.stderr.contains("addr=cluster.main"),
        "{}",
        debug.stderr
    );
    // A log file that cannot be created stops the command before any call.
    let blocked = cx
        .run(&[
            "plan",
            "blueprints/a3-high.toml",
            "--log-file",
            "/nonexistent/dir/a3.log",
        ])
        .await
        .expect(1);
    assert!(
        blocked
            .stderr
            .contains("cannot open the log file `/nonexistent/dir/a3.log`"),
        "{}",
        blocked.stderr
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn quiet_plan_and_apply_print_one_line_each() {
    let cx = TestContext::new().await;
    let bp = "blueprints/a3-high.toml";
    let plan = cx.run(&["plan", "-q", bp]).await.expect(0);
    assert_eq!(plan.stderr, "", "{}", plan.stderr);
    assert!(
        plan.stdout.starts_with("Plan: ") && plan.stdout.ends_with(" to destroy.\n"),
        "{}",
        plan.stdout
    );
    assert_eq!(plan.stdout.lines().count(), 1, "{}", plan.stdout);
    let apply = cx
        .run(&["apply", "-q", "--auto-approve", bp])
        .await
        .expect(0);
    assert_eq!(apply.stdout, "", "{}", apply.stdout);
    assert_eq!(
        apply.stderr.trim().lines().collect::<Vec<_>>(),
        [plan
            .stdout
            .trim()
            .replace("Plan: ", "Apply complete! Resources: ")
            .replace(" to add,", " added,")
            .replace(" to change,", " changed,")
            .replace(" to destroy.", " destroyed.")],
        "{}",
        apply.stderr
    );
    let again = cx
        .run(&["plan", "--quiet", "--detailed-exitcode", bp])
        .await
        .expect(0);
    assert_eq!(
        again.stdout,
        "No changes. Your infrastructure matches the blueprint.\n"
    );
    // -q and -v contradict each other.
    let both = cx.run(&["plan", "-q", "-v", bp]).await.expect(1);
    assert!(
        both.stderr.contains("cannot be used with"),
        "{}",
        both.stderr
    );
}

#[test]
fn whatever_reaches_the_log_file_is_redacted_on_its_way_out() {
    // The command line is logged (debug), so a secret-looking argument goes through the file's
    // writer: what is written must carry the redaction, not the value.
    let dir = tempfile::tempdir().unwrap();
    let blueprint = dir.path().join("access_token=s3cr3tTOKENvalue.toml");
    std::fs::copy(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("blueprints/minimal.toml"),
        &blueprint,
    )
    .unwrap();
    let log = dir.path().join("a3ctl.log");
    a3ctl(&[
        "validate",
        blueprint.to_str().unwrap(),
        "--log-file",
        log.to_str().unwrap(),
    ])
    .expect(0);
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(text.contains("access_token=[redacted]"), "{text}");
    assert!(!text.contains("s3cr3tTOKENvalue"), "{text}");
}
