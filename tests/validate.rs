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
    assert!(text(&output.stderr).is_empty());
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
}

#[test]
fn blueprint_argument_is_required() {
    let output = a3ctl(&["validate"]);
    assert_eq!(output.status.code(), Some(2), "clap usage error");
    assert!(text(&output.stderr).contains("<BLUEPRINT>"));
}
