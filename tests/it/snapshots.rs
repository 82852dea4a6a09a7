//! What a user reads, pinned: the output of `plan`, `apply`, a changing plan and `destroy` for
//! each shipped blueprint, through the real binary against the simulator (manual clock, zero
//! latency). Taken before the typed-kinds redesign, so that redesign can prove the output did not
//! move (after an intended change: `INSTA_UPDATE=always cargo test --test it snapshots::`, then
//! review the diff).
//!
//! stdout (the plan and its summary) is compared as printed. stderr (progress) is compared as the
//! sorted set of its lines, durations replaced by `[TIME]` and "Still ..." lines dropped: steps run
//! in parallel, so their order and timing are not part of the contract. A destroy warning on
//! stderr is a paragraph a user reads before anything happens: it is compared as printed, apart
//! from the progress.

use crate::common;

use common::{Run, TestContext};

/// Replaces `after 12s` / `after 1m02s` with `after [TIME]`.
fn without_durations(line: &str) -> String {
    let Some(at) = line.find(" after ") else {
        return line.to_string();
    };
    let (head, tail) = line.split_at(at + " after ".len());
    let end = tail
        .find(|c: char| !(c.is_ascii_digit() || c == 'm' || c == 's'))
        .unwrap_or(tail.len());
    if end == 0 {
        return line.to_string();
    }
    format!("{head}[TIME]{}", &tail[end..])
}

/// The destroy warning on stderr (its `Warning:` line and the indented lines under it), and the
/// other lines.
fn split_warning(stderr: &str) -> (Option<String>, Vec<&str>) {
    let lines: Vec<&str> = stderr.lines().collect();
    let Some(start) = lines
        .iter()
        .position(|l| l.starts_with("Warning: this destroys"))
    else {
        return (None, lines);
    };
    let end = lines[start + 1..]
        .iter()
        .position(|l| !l.starts_with("  "))
        .map_or(lines.len(), |n| start + 1 + n);
    let warning = lines[start..end].join("\n");
    let rest = lines[..start]
        .iter()
        .chain(&lines[end..])
        .copied()
        .collect();
    (Some(warning), rest)
}

/// stdout as printed, the destroy warning as printed, then stderr's other lines normalised and
/// sorted.
fn shown(run: &Run) -> String {
    let (warning, rest) = split_warning(&run.stderr);
    let mut progress: Vec<String> = rest
        .into_iter()
        .filter(|l| !l.contains(": Still "))
        .map(without_durations)
        .collect();
    progress.sort();
    let warning = warning
        .map(|w| format!("--- stderr: destroy warning\n{w}\n"))
        .unwrap_or_default();
    format!(
        "exit: {:?}\n--- stdout\n{}{warning}--- stderr (sorted)\n{}\n",
        run.code,
        run.stdout,
        progress.join("\n")
    )
}

fn snapshot(name: &str, text: &str) {
    insta::with_settings!({
        snapshot_path => "snapshots/output",
        prepend_module_to_snapshot => false,
        omit_expression => true,
    }, {
        insta::assert_snapshot!(name, text);
    });
}

/// `--verbose` shows every change of the plan in full: each address's headline, none folded.
async fn verbose_shows_every_change(cx: &TestContext, args: &[&str]) {
    let json = cx.run(&[args, &["--json"]].concat()).await.expect(0);
    let json: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    let verbose = cx.run(&[args, &["--verbose"]].concat()).await.expect(0);
    let changes = json["resource_changes"].as_array().unwrap();
    assert!(!changes.is_empty());
    for change in changes {
        let addr = change["address"].as_str().unwrap();
        assert!(
            verbose.stdout.contains(&format!("  # {addr} will be")),
            "{addr} in full:\n{}",
            verbose.stdout
        );
    }
    assert!(
        !verbose
            .stdout
            .lines()
            .any(|l| l.contains(" more ") && l.contains(" like ")),
        "{}",
        verbose.stdout
    );
    assert!(!verbose.stdout.contains("--verbose"), "{}", verbose.stdout);
}

/// plan, apply, plan again, change, plan a destroy, destroy: each pinned as `<stem>-<step>`.
async fn lifecycle(file: &str, change: impl Fn(&str) -> String) {
    let cx = TestContext::new().await;
    let stem = file.trim_end_matches(".toml");
    let path = format!("blueprints/{file}");
    // The lifecycle ends with a destroy: deletion protection off, as for a throwaway deployment.
    cx.unprotect(&path);

    let plan = cx.run(&["plan", &path]).await.expect(0);
    snapshot(&format!("{stem}-1-plan"), &shown(&plan));
    verbose_shows_every_change(&cx, &["plan", &path]).await;
    let apply = cx.run(&["apply", &path, "--auto-approve"]).await.expect(0);
    snapshot(&format!("{stem}-2-apply"), &shown(&apply));
    let again = cx.run(&["plan", &path]).await.expect(0);
    snapshot(&format!("{stem}-3-plan-unchanged"), &shown(&again));

    let text = std::fs::read_to_string(cx.path(&path)).unwrap();
    let changed = change(&text);
    assert_ne!(changed, text, "the change applies to {file}");
    cx.write(&path, &changed);
    let plan = cx.run(&["plan", &path]).await.expect(0);
    snapshot(&format!("{stem}-4-plan-changed"), &shown(&plan));
    cx.write(&path, &text);

    let plan = cx.run(&["plan", &path, "--destroy"]).await.expect(0);
    snapshot(&format!("{stem}-5-plan-destroy"), &shown(&plan));
    verbose_shows_every_change(&cx, &["plan", &path, "--destroy"]).await;
    let destroy = cx
        .run(&["destroy", &path, "--auto-approve"])
        .await
        .expect(0);
    snapshot(&format!("{stem}-6-destroy"), &shown(&destroy));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn minimal_outputs() {
    // A GPU pool's node count: an update in place.
    lifecycle("minimal.toml", |t| t.replacen("nodes = 1", "nodes = 2", 1)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a3_high_outputs() {
    // The system pool's machine type forces its replacement.
    lifecycle("a3-high.toml", |t| {
        t.replacen(
            "machine_type = \"e2-standard-4\"",
            "machine_type = \"e2-standard-8\"",
            1,
        )
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a3_mega_outputs() {
    // Filestore's tier forces replacement (and its volume's); GPU nodes update in place.
    lifecycle("a3-mega.toml", |t| {
        t.replacen("nodes = 32", "nodes = 30", 1).replacen(
            "tier = \"BASIC_SSD\"",
            "tier = \"ZONAL\"",
            1,
        )
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_plan_or_apply_that_replaces_the_cluster_warns_first() {
    // A new control-plane range forces a new cluster, and with it new pools and objects.
    let cx = TestContext::new().await;
    let path = "blueprints/minimal.toml";
    cx.unprotect(path);
    cx.run(&["apply", path, "--auto-approve"]).await.expect(0);
    let text = std::fs::read_to_string(cx.path(path)).unwrap();
    cx.write(
        path,
        &format!("{text}\n[network]\nmaster_ipv4_cidr = \"172.16.0.48/28\"\n"),
    );
    let plan = cx.run(&["plan", path]).await.expect(0);
    snapshot("minimal-replace-cluster-plan", &shown(&plan));
    let headline = "Warning: this destroys and re-creates GKE cluster a3mini in us-central1 (project my-project)";
    let (warning, _) = split_warning(&plan.stderr);
    assert!(
        warning.is_some_and(|w| w.starts_with(headline)),
        "{}",
        plan.stderr
    );
    // The apply says the same before it changes anything.
    let apply = cx.run(&["apply", path, "--auto-approve"]).await.expect(0);
    let (warning, _) = split_warning(&apply.stderr);
    assert_eq!(warning, split_warning(&plan.stderr).0, "{}", apply.stderr);
    let warned = apply.stderr.find(headline).unwrap();
    let first_step = apply.stderr.find(": Destroying...").unwrap();
    assert!(warned < first_step, "{}", apply.stderr);
}

#[test]
fn durations_are_normalised() {
    assert_eq!(
        without_durations("a: Creation complete after 1m02s"),
        "a: Creation complete after [TIME]"
    );
    assert_eq!(
        without_durations("a: Creation complete after 0s"),
        "a: Creation complete after [TIME]"
    );
    assert_eq!(without_durations("take after it"), "take after it");
}

#[test]
fn the_destroy_warning_is_kept_whole() {
    let (warning, rest) = split_warning("b\n\nWarning: this destroys x\n  with y.\n\na\n");
    assert_eq!(warning.unwrap(), "Warning: this destroys x\n  with y.");
    assert_eq!(rest, ["b", "", "", "a"]);
    // Progress right under it is not part of it.
    let (warning, rest) = split_warning("Warning: this destroys x\n  with y.\na: Destroying...\n");
    assert_eq!(warning.unwrap(), "Warning: this destroys x\n  with y.");
    assert_eq!(rest, ["a: Destroying..."]);
}
