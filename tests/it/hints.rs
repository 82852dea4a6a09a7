//! What a3ctl tells the user to do, through the real binary: the hint of each failed apply names
//! the resource's own quota (Filestore capacity, the GPU quota of a GPU pool), never another
//! resource's advice; a lock taken without `$USER` still names who holds it; and the commands a
//! hint names are the ones to paste, with this run's flags and blueprint (issue 26 item 7).

use crate::common;

use a3ctl_sim::SimConfig;
use a3ctl_sim::faults::{FaultAction, FaultConfig, NamedFault, ScriptedFault};
use common::TestContext;
use std::time::{Duration, Instant};

/// A simulator whose `nth` `kind` creates fail with the API's quota error.
async fn with_quota_faults(kind: &str, nths: &[u32]) -> TestContext {
    let faults = FaultConfig {
        scripted: nths
            .iter()
            .map(|&nth| ScriptedFault {
                kind: kind.into(),
                verb: "create".into(),
                nth,
                action: FaultAction::Named(NamedFault::QuotaExceeded),
            })
            .collect(),
        ..Default::default()
    };
    TestContext::with(SimConfig {
        faults,
        ..SimConfig::default()
    })
    .await
}

/// The error block printed for `addr` (from its `error:` line to the next blank line after its
/// hint), and the hint line in it.
fn failure_of<'a>(stderr: &'a str, addr: &str) -> (&'a str, &'a str) {
    let start = stderr
        .find(&format!("error: Failed to create `{addr}`"))
        .unwrap_or_else(|| panic!("no failure of `{addr}` in:\n{stderr}"));
    let block = &stderr[start..];
    let hint_at = block
        .find("\nhint: ")
        .unwrap_or_else(|| panic!("no hint for `{addr}` in:\n{block}"));
    let hint = block[hint_at + 1..].lines().next().unwrap();
    (&block[..hint_at], hint)
}

/// The minimal blueprint with a Filestore instance (BASIC_SSD, its minimum capacity).
fn minimal_with_filestore(cx: &TestContext) -> &'static str {
    let text = std::fs::read_to_string(cx.path("blueprints/minimal.toml")).unwrap();
    cx.write(
        "blueprints/minimal-fs.toml",
        &format!("{text}\n[filestore]\ntier = \"BASIC_SSD\"\n"),
    );
    "blueprints/minimal-fs.toml"
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_filestore_quota_hint_speaks_of_the_filestore_quota_not_node_counts() {
    let cx = with_quota_faults("file.instance", &[1]).await;
    let blueprint = minimal_with_filestore(&cx);
    let run = cx
        .run(&["apply", blueprint, "--auto-approve"])
        .await
        .expect(1);
    let (error, hint) = failure_of(&run.stderr, "filestore.shared");
    assert!(error.to_lowercase().contains("quota"), "{error}");
    assert!(hint.contains("Filestore"), "{hint}");
    assert!(
        hint.contains("BASIC_SSD") && hint.contains("us-central1"),
        "{hint}"
    );
    assert!(
        hint.contains("[filestore]") && hint.contains("capacity_gb"),
        "{hint}"
    );
    assert!(
        !hint.to_lowercase().contains("node count") && !hint.contains("nodes"),
        "{hint}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gpu_pool_quota_hint_names_the_gpu_quota_of_its_region() {
    // Both node pool creates fail (which of the two comes first is up to the schedule): each
    // hint speaks of its own pool.
    let cx = with_quota_faults("container.nodePool", &[1, 2]).await;
    let run = cx
        .run(&["apply", "blueprints/minimal.toml", "--auto-approve"])
        .await
        .expect(1);
    let (_, gpu) = failure_of(&run.stderr, "node_pool.gpu-0");
    assert!(gpu.contains("NVIDIA_H100_MEGA_GPUS"), "{gpu}");
    assert!(gpu.contains("us-central1"), "{gpu}");
    assert!(gpu.contains("reservation"), "{gpu}");
    assert!(gpu.contains("[[gpu_pool]] `gpu-0`"), "{gpu}");
    let (_, system) = failure_of(&run.stderr, "node_pool.system");
    assert!(
        system.contains("CPUS") && system.contains("[system_pool]"),
        "{system}"
    );
    assert!(!system.contains("GPU"), "{system}");
}

/// Who runs this test, as the OS says (`id -un`, or `uid N` without a passwd entry).
fn os_user() -> Option<String> {
    let id = |flag: &str| {
        std::process::Command::new("id")
            .arg(flag)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
            .filter(|s| !s.is_empty())
    };
    id("-un").or_else(|| id("-u").map(|uid| format!("uid {uid}")))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lock_taken_without_user_names_the_os_user() {
    let Some(expected) = os_user() else {
        eprintln!("skipped: no `id` command to tell who runs this test");
        return;
    };
    // Realistic latencies: the apply holds its lock long enough to be read.
    let cx = TestContext::with(SimConfig::realistic(0.0005)).await;
    let mut child = cx
        .command(&["apply", "blueprints/minimal.toml", "--auto-approve"])
        .env_remove("USER")
        .env_remove("LOGNAME")
        .env_remove("USERNAME")
        .spawn()
        .unwrap();
    let lock = cx.path("state/a3mini.a3state.json.lock");
    let deadline = Instant::now() + Duration::from_secs(60);
    let holder = loop {
        if let Ok(text) = std::fs::read(&lock)
            && let Ok(info) = serde_json::from_slice::<serde_json::Value>(&text)
        {
            break info["holder"].as_str().unwrap_or_default().to_string();
        }
        assert!(
            Instant::now() < deadline,
            "the apply never took its lock ({})",
            lock.display()
        );
        if let Ok(Some(status)) = child.try_wait() {
            panic!("the apply ended ({status}) before its lock was seen");
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    };
    let _ = child.start_kill();
    let _ = child.wait().await;
    let user = holder.split('@').next().unwrap_or_default();
    assert_eq!(user, expected, "holder {holder}");
    assert!(!holder.starts_with("unknown@"), "{holder}");
}

/// The `hint:` line of a failure's stderr.
fn hint_line(stderr: &str) -> &str {
    stderr
        .lines()
        .find(|line| line.starts_with("hint: "))
        .unwrap_or_else(|| panic!("no hint in:\n{stderr}"))
}

// See: issue 26 item 7 — `output` and `state list` named their commands without `--sandbox` or
// the blueprint; every hint's command is completed in one place (`ui::invocation`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn output_and_state_hints_in_the_sandbox_are_the_commands_to_paste() {
    let cx = TestContext::new().await;
    let bp = "blueprints/minimal.toml";
    // Nothing applied yet: each says how to record state, with `--sandbox` and the blueprint.
    let output = cx.sandbox(&["output", bp]).await.expect(1);
    assert_eq!(
        hint_line(&output.stderr),
        "hint: run apply first: `a3ctl --sandbox apply blueprints/minimal.toml`"
    );
    let list = cx.sandbox(&["state", "list", bp]).await.expect(1);
    assert_eq!(
        hint_line(&list.stderr),
        "hint: `a3ctl --sandbox apply blueprints/minimal.toml` records one"
    );
    // A mistyped address points at `state list` of this very state.
    let show = cx.sandbox(&["state", "show", "gpu", bp]).await.expect(1);
    assert_eq!(
        hint_line(&show.stderr),
        "hint: `a3ctl --sandbox state list blueprints/minimal.toml` lists the recorded addresses"
    );
}
