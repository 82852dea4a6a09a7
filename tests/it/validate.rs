//! `a3ctl validate` run as a real process: exit codes, stdout summary, stderr diagnostics.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn a3ctl(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_a3ctl"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env("NO_COLOR", "1")
        .output()
        .expect("the a3ctl binary runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// A file under the target directory for this test, removed when dropped.
struct TempFile(PathBuf);

impl TempFile {
    fn new(name: &str, contents: &str) -> Self {
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("validate");
        std::fs::create_dir_all(&dir).expect("temp dir");
        let path = dir.join(name);
        std::fs::write(&path, contents).expect("write temp blueprint");
        Self(path)
    }

    fn path(&self) -> &str {
        self.0.to_str().expect("utf-8 temp path")
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

#[test]
fn valid_blueprint_prints_a_summary_and_exits_zero() {
    let output = a3ctl(&["validate", "blueprints/a3-mega.toml"]);
    let stdout = text(&output.stdout);
    assert_eq!(
        output.status.code(),
        Some(0),
        "stderr: {}",
        text(&output.stderr)
    );
    assert!(
        stdout.contains("Blueprint `blueprints/a3-mega.toml` is valid"),
        "{stdout}"
    );
    assert!(stdout.contains("9 VPCs (1 primary, 8 GPU)"), "{stdout}");
    assert!(stdout.contains("32 GPU nodes with 256 GPUs"), "{stdout}");
    // Its one warning: the example office range is a documentation range (RFC 5737), which a
    // real apply could not reach the control plane from.
    let stderr = text(&output.stderr);
    assert_eq!(stderr.matches("⚠").count(), 1, "{stderr}");
    assert!(stderr.contains("RFC 5737"), "{stderr}");
}

#[test]
fn every_shipped_blueprint_validates() {
    for name in ["a3-high.toml", "a3-mega.toml", "minimal.toml"] {
        let output = a3ctl(&["validate", &format!("blueprints/{name}")]);
        assert_eq!(
            output.status.code(),
            Some(0),
            "{name}: {}",
            text(&output.stderr)
        );
    }
}

#[test]
fn invalid_blueprint_lists_every_problem_with_location_and_exits_one() {
    let bad = TempFile::new(
        "bad.toml",
        r#"name = "a3mega"
project = "my-project"
region = "us-central1"
zone = "us-central1-a"

[network]
gpu_mtu = 1500

[[gpu_pool]]
machine_type = "a3-megagpu-8g"
nodse = 2
"#,
    );
    let output = a3ctl(&["validate", bad.path()]);
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(
        text(&output.stdout).is_empty(),
        "nothing on stdout on failure"
    );
    assert!(
        stderr.contains("`gpu_mtu` must be 8244 for GPUDirect, found 1500"),
        "{stderr}"
    );
    assert!(
        stderr.contains(&format!("[{}:7:11]", bad.path())),
        "{stderr}"
    );
    assert!(
        stderr.contains("Unknown key `nodse` in [[gpu_pool]]"),
        "{stderr}"
    );
    assert!(
        stderr.contains(&format!("[{}:11:1]", bad.path())),
        "{stderr}"
    );
    assert!(stderr.contains("did you mean `nodes`?"), "{stderr}");
    assert!(stderr.contains("has 2 problems"), "{stderr}");
    assert!(
        !stderr.contains('\u{1b}'),
        "NO_COLOR output has no escape codes"
    );
}

#[test]
fn missing_file_exits_one_with_the_path() {
    let output = a3ctl(&["validate", "blueprints/does-not-exist.toml"]);
    assert_eq!(output.status.code(), Some(1));
    assert!(
        text(&output.stderr).contains("Failed to read blueprint `blueprints/does-not-exist.toml`")
    );
    assert!(
        text(&output.stderr).contains(
            "Failed to read blueprint `blueprints/does-not-exist.toml`: it does not exist"
        ) && text(&output.stderr).contains("\nhint: check the path"),
        "{}",
        text(&output.stderr)
    );
}

#[test]
fn blueprint_argument_is_required() {
    let output = a3ctl(&["validate"]);
    // A usage error exits 1: 2 is `plan --detailed-exitcode`'s "changes present".
    assert_eq!(output.status.code(), Some(1), "clap usage error");
    assert!(text(&output.stderr).contains("<BLUEPRINT>"));
}

/// Runs `a3ctl ARGS` like [`a3ctl`], but kills it and fails the test after `seconds`.
fn a3ctl_within(args: &[&str], seconds: u64) -> Output {
    use std::io::Read;
    use std::process::Stdio;
    let mut child = Command::new(env!("CARGO_BIN_EXE_a3ctl"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the a3ctl binary runs");
    // Drain both pipes while waiting, so a large output cannot block the child.
    let drain = |mut pipe: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            let _ = pipe.read_to_end(&mut bytes);
            bytes
        })
    };
    let stdout = drain(Box::new(child.stdout.take().expect("piped")));
    let stderr = drain(Box::new(child.stderr.take().expect("piped")));
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(seconds);
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "`a3ctl {}` did not finish within {seconds} s",
                args.join(" ")
            );
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    Output {
        status,
        stdout: stdout.join().expect("stdout"),
        stderr: stderr.join().expect("stderr"),
    }
}

#[test]
fn thousands_of_problems_print_the_first_fifty_and_a_count() {
    let keys: String = (0..3000)
        .map(|i| format!("stray_key_{i} = {i}\n"))
        .collect();
    let bad = TempFile::new(
        "many.toml",
        &format!(
            "name = \"a3mega\"\nproject = \"my-project\"\nregion = \"us-central1\"\nzone = \"us-central1-a\"\n{keys}\n[[gpu_pool]]\nmachine_type = \"a3-megagpu-8g\"\nnodes = 2\n"
        ),
    );
    let output = a3ctl_within(&["validate", bad.path()], 60);
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert_eq!(stderr.matches("× Unknown key `stray_key_").count(), 50);
    assert!(
        stderr.contains(&format!("[{}:5:1]", bad.path()))
            && stderr.contains("Unknown key `stray_key_49`")
            && !stderr.contains("Unknown key `stray_key_50`"),
        "the first fifty, in file order"
    );
    assert!(
        stderr.contains(
            "… and 2950 more problems (fix these first, then run `a3ctl validate` again)"
        ),
        "{stderr}"
    );
    assert!(
        stderr.contains(&format!(
            "error: Blueprint `{}` has 3000 problems",
            bad.path()
        )),
        "{stderr}"
    );
}

/// A blueprint with `count` GPU pools of `nodes` nodes each (`extra` lines in every pool); the
/// `nodes` line of pool `i` (0-based) is line `8 + 4 i` when `extra` is empty.
fn pools(count: usize, nodes: u32, extra: &str) -> String {
    let mut text = String::from(
        "name = \"a3mega\"\nproject = \"my-project\"\nregion = \"us-central1\"\nzone = \"us-central1-a\"\n",
    );
    for _ in 0..count {
        text.push_str(&format!(
            "\n[[gpu_pool]]\nmachine_type = \"a3-megagpu-8g\"\nnodes = {nodes}\n{extra}"
        ));
    }
    text
}

/// `stderr` with miette's wrapping undone, for checking sentences that wrap at 100 columns:
/// every line is joined to the previous one without its indentation and frame (`│`), by a
/// space, or by nothing after a `/` or `-` (where long URLs and words are broken).
fn flat(stderr: &str) -> String {
    let mut out = String::new();
    for line in stderr.lines() {
        let line = line.trim_start_matches([' ', '│']);
        if !(out.is_empty() || out.ends_with('/') || out.ends_with('-')) {
            out.push(' ');
        }
        out.push_str(line);
    }
    out
}

/// Validates `text` and returns stderr, asserting exit code 1 and exactly one problem.
fn one_problem(name: &str, blueprint: &str) -> (TempFile, String) {
    let bad = TempFile::new(name, blueprint);
    let output = a3ctl_within(&["validate", bad.path()], 60);
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("has 1 problem\n"), "{stderr}");
    (bad, flat(&stderr))
}

#[test]
fn gke_limits_nodes_per_pool_and_zone() {
    let (bad, stderr) = one_problem("pool-nodes.toml", &pools(1, 1001, ""));
    assert!(
        stderr.contains("`nodes` must be between 1 and 1000, found 1001")
            && stderr.contains(&format!("[{}:8:9]", bad.path()))
            && stderr.contains("GKE allows at most 1000 per node pool and zone")
            && stderr.contains("https://cloud.google.com/kubernetes-engine/quotas"),
        "{stderr}"
    );
}

#[test]
fn gke_limits_node_pools_per_cluster() {
    let output = a3ctl_within(
        &[
            "validate",
            TempFile::new("199.toml", &pools(199, 1, "")).path(),
        ],
        60,
    );
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    assert!(text(&output.stdout).contains("200 node pools (1 system, 199 GPU)"));
    let (bad, stderr) = one_problem("200.toml", &pools(200, 1, ""));
    assert!(
        stderr.contains("The blueprint declares 201 node pools (200 GPU pools and the system pool); GKE supports at most 200 per cluster")
            && stderr.contains(&format!("[{}:{}:1]", bad.path(), 6 + 4 * 199))
            && stderr.contains("node pool 201 of the cluster")
            && stderr.contains("planning-large-clusters"),
        "{stderr}"
    );
}

#[test]
fn gke_limits_nodes_per_cluster() {
    // 2 system nodes and 16 pools of 1,000: the total passes 15,000 at the 15th pool.
    let (bad, stderr) = one_problem("cluster-nodes.toml", &pools(16, 1000, ""));
    assert!(
        stderr
            .contains("The cluster would have 16,002 nodes; GKE allows at most 15,000 per cluster")
            && stderr.contains(&format!("[{}:{}:9]", bad.path(), 8 + 4 * 14))
            && stderr.contains("https://cloud.google.com/kubernetes-engine/quotas"),
        "{stderr}"
    );
    // The filed case: 3,000 GPU pools, 3,000,004 nodes.
    let text_3000 = pools(3000, 1000, "").replacen(
        "\n[[gpu_pool]]",
        "\n[system_pool]\nnodes = 4\n\n[[gpu_pool]]",
        1,
    );
    let bad = TempFile::new("filed.toml", &text_3000);
    let output = a3ctl_within(&["validate", bad.path()], 60);
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("The cluster would have 3,000,004 nodes")
            && stderr.contains("declares 3,001 node pools")
            && stderr.contains("has 2 problems"),
        "{stderr}"
    );
}

#[test]
fn gke_limits_nodes_per_multi_network_cluster() {
    // `nodes` is per zone: 3 pools of 1,000 nodes in 2 zones each, and 2 system nodes.
    let two_zones = "zones = [\"us-central1-a\", \"us-central1-c\"]\nplacement = \"none\"\n";
    let (bad, stderr) = one_problem("multi-network.toml", &pools(3, 1000, two_zones));
    assert!(
        stderr.contains(
            "The cluster would have 6,002 nodes; a multi-network GKE cluster has at most 5,000"
        ) && stderr.contains(&format!("[{}:20:9]", bad.path()))
            && stderr.contains("multi-networking"),
        "{stderr}"
    );
}

#[test]
fn a_documentation_range_is_warned_about_outside_the_sandbox_only() {
    // The shipped A3 High blueprint's example office range is 203.0.113.0/24 (RFC 5737).
    let real = a3ctl(&["validate", "blueprints/a3-high.toml"]);
    assert_eq!(real.status.code(), Some(0));
    let stderr = text(&real.stderr);
    assert!(
        stderr.contains("`203.0.113.0/24` is in the documentation range 203.0.113.0/24 (RFC 5737)"),
        "{stderr}"
    );
    assert!(stderr.contains("a3-high.toml:"), "{stderr}");
    let sandbox = a3ctl(&["--sandbox", "validate", "blueprints/a3-high.toml"]);
    assert_eq!(sandbox.status.code(), Some(0));
    assert!(
        !text(&sandbox.stderr).contains("RFC 5737"),
        "{}",
        text(&sandbox.stderr)
    );
}

// See: issue 26 item 12 — one machine family per blueprint: a blueprint mixing A3 High and A3 Mega
// pools is refused with where (file, line, both pools) and what to do instead.
#[test]
fn a_blueprint_mixing_a3_high_and_a3_mega_pools_is_refused_with_what_to_do() {
    let minimal = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("blueprints/minimal.toml"),
    )
    .expect("the shipped minimal blueprint");
    let mixed = TempFile::new(
        "mixed.toml",
        &format!(
            "{minimal}\n[[gpu_pool]]\nname = \"high\"\nmachine_type = \"a3-highgpu-8g\"\nnodes = 1\n"
        ),
    );
    let output = a3ctl(&["validate", mixed.path()]);
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(text(&output.stdout), "");
    let stderr = text(&output.stderr).replace(mixed.path(), "[TEMP]/mixed.toml");
    insta::assert_snapshot!("validate-mixed-families", stderr);
}
