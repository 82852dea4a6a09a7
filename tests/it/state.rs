//! State kept in the simulator's Cloud Storage: writes that never lose an update, the lock object
//! (concurrent and killed applies, force-unlock), a shipped blueprint applied with its state in
//! GCS, and local → GCS migration. The `state` commands are in `it_state_commands.rs`.

use crate::common;

use a3ctl::cloud::gcp::storage::StorageClient;
use a3ctl::cloud::gcp::{CredentialsMode, Endpoints, GcpConfig};
use a3ctl::state::State;
use a3ctl::state::gcs::{GcsLocation, GcsStore};
use a3ctl::state::lock::{LockError, LockInfo};
use a3ctl::state::store::StoreError;
use a3ctl_sim::SimConfig;
use a3ctl_sim::clock::ClockMode;
use a3ctl_sim::faults::{FaultConfig, TransientFaults};
use a3ctl_sim::latency::LatencyProfile;
use common::gcs::{
    BUCKET, GCS_BP, OBJECT, buckets, download, gcs_minimal, live_objects, make_bucket, remote_state,
};
use common::{Run, TestContext};
use serde_json::Value;
use std::time::Duration;

/// Realistic latencies on a clock that moves only when the test says: an apply started now
/// holds its lock until the test advances time.
fn frozen_clock() -> SimConfig {
    SimConfig {
        clock: ClockMode::Manual,
        latency: LatencyProfile::realistic(),
        ..SimConfig::default()
    }
}

/// Reads a child's pipe to the end in the background (so a full pipe never blocks the child).
fn drain<R: tokio::io::AsyncRead + Unpin + Send + 'static>(
    pipe: Option<R>,
) -> tokio::task::JoinHandle<String> {
    tokio::spawn(async move {
        let mut text = String::new();
        if let Some(mut pipe) = pipe {
            use tokio::io::AsyncReadExt;
            let _ = pipe.read_to_string(&mut text).await;
        }
        text
    })
}

/// Waits for a running a3ctl to exit while moving the simulator's clock forward.
async fn finish_with_time(cx: &TestContext, child: &mut tokio::process::Child) -> Run {
    let stdout = drain(child.stdout.take());
    let stderr = drain(child.stderr.take());
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        cx.sim.advance_secs(30.0);
        tokio::time::sleep(Duration::from_millis(5)).await;
    };
    Run {
        code: status.code(),
        stdout: stdout.await.unwrap(),
        stderr: stderr.await.unwrap(),
    }
}

/// Runs `a3ctl ARGS` to completion while moving the simulator's clock forward.
async fn run_with_time(cx: &TestContext, args: &[&str]) -> Run {
    let mut child = cx
        .command(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    finish_with_time(cx, &mut child).await
}

/// Waits (yielding, no timing assumption) until `condition` holds.
async fn until<F: std::future::Future<Output = bool>>(mut condition: impl FnMut() -> F) {
    for _ in 0..6000 {
        if condition().await {
            return;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    panic!("condition never held");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shipped_blueprint_applies_with_its_state_in_gcs_and_no_secret_in_it() {
    let cx = TestContext::new().await;
    let text = std::fs::read_to_string(cx.path("blueprints/a3-high.toml")).unwrap();
    assert!(text.contains("[state]\nbackend = \"local\""));
    cx.write(
        "blueprints/a3-high-gcs.toml",
        &text.replace(
            "[state]\nbackend = \"local\"",
            &format!("[state]\nbackend = \"gcs\"\nbucket = \"{BUCKET}\"\nprefix = \"teams/ml\""),
        ),
    );
    let bp = "blueprints/a3-high-gcs.toml";
    cx.unprotect(bp);
    cx.run(&["state", "create-bucket", bp]).await.expect(0);
    let apply = cx.run(&["apply", bp, "--auto-approve"]).await.expect(0);
    assert!(apply.stderr.contains("Apply complete!"), "{}", apply.stderr);
    let object = "teams/ml/a3high.a3state.json";
    assert_eq!(
        live_objects(&cx, BUCKET),
        vec![object],
        "state, and no lock left"
    );
    assert!(!cx.path("state").exists(), "nothing written locally");
    let bytes = download(&cx, BUCKET, object).await.unwrap();
    let state: Value = serde_json::from_slice(&bytes).unwrap();
    assert!(state["serial"].as_u64().unwrap() > 1);
    assert!(state["pending"].as_array().unwrap().is_empty());
    let text = String::from_utf8(bytes).unwrap().to_ascii_lowercase();
    for secret in [
        "authorization",
        "bearer",
        "access_token",
        "refresh_token",
        "private_key",
        "client_secret",
        "password",
    ] {
        assert!(!text.contains(secret), "`{secret}` in the stored state");
    }
    // Every save was a new generation: versioning keeps the earlier ones.
    let versions = buckets(&cx)[0]["objects"].as_array().unwrap().len();
    assert!(versions > 2, "{versions} versions");
    cx.run(&["plan", bp, "--detailed-exitcode"]).await.expect(0);
    cx.run(&["destroy", bp, "--auto-approve"]).await.expect(0);
    let state = download(&cx, BUCKET, object).await.unwrap();
    let state: Value = serde_json::from_slice(&state).unwrap();
    assert!(state["resources"].as_object().unwrap().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_based_on_a_stale_generation_is_refused_not_lost() {
    let cx = TestContext::new().await;
    make_bucket(&cx, BUCKET, "my-project").await;
    let store = || {
        let config = GcpConfig {
            project: "my-project".into(),
            endpoints: Endpoints::simulator(cx.sim.base_url()),
            credentials: CredentialsMode::Anonymous,
            poll: Duration::from_millis(5),
        };
        GcsStore::new(
            std::sync::Arc::new(StorageClient::new(&config).unwrap()),
            GcsLocation::new(BUCKET, "p", "x"),
            None,
            "a3ctl state create-bucket x.toml".into(),
        )
    };
    let (first, second) = (store(), store());
    assert_eq!(first.load().unwrap(), None);
    assert_eq!(second.load().unwrap(), None);
    let mut state = State::new("x", "lineage-1".into());
    state.serial = 1;
    first.save(&state).unwrap();
    // The second writer read before the first wrote: its write is refused, naming what won.
    let mut other = State::new("x", "lineage-1".into());
    other.serial = 7;
    let err = second.save(&other).unwrap_err();
    assert!(matches!(err, StoreError::Conflict { .. }), "{err}");
    let message = err.to_string();
    assert!(
        message.contains("changed since it was read") && message.contains("serial 1"),
        "{message}"
    );
    assert!(err.hint().unwrap().contains("re-run"));
    assert_eq!(store().load().unwrap().unwrap().serial, 1, "nothing lost");
    // Having read the current copy, it may write; then the first writer is the stale one.
    second.load().unwrap();
    second.save(&other).unwrap();
    state.serial = 2;
    assert!(matches!(
        first.save(&state),
        Err(StoreError::Conflict { .. })
    ));
    assert_eq!(store().load().unwrap().unwrap().serial, 7);
    // A writer that never read only creates: it cannot overwrite an existing state.
    assert!(matches!(
        store().save(&state),
        Err(StoreError::Conflict { .. })
    ));

    // The lock: one holder; released on drop; force-unlock needs the id.
    let lock = first
        .lock(LockInfo::current("one".into(), "apply"))
        .unwrap();
    let refused = second.lock(LockInfo::current("two".into(), "apply"));
    assert!(
        matches!(&refused, Err(LockError::Held { info, dead_here: false, .. }) if info.id == "one")
    );
    drop(lock);
    assert!(second.lock_holder().unwrap().is_none());
    let _held = second
        .lock(LockInfo::current("two".into(), "apply"))
        .unwrap();
    assert!(matches!(
        first.force_unlock("one"),
        Err(LockError::WrongId { .. })
    ));
    assert_eq!(first.force_unlock("two").unwrap().id, "two");
    assert!(matches!(
        first.force_unlock("two"),
        Err(LockError::NotLocked { .. })
    ));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_concurrent_applies_on_one_gcs_state_exactly_one_proceeds() {
    let cx = TestContext::with(frozen_clock()).await;
    gcs_minimal(&cx, "");
    make_bucket(&cx, BUCKET, "my-project").await;
    let spawn = || {
        cx.command(&["apply", GCS_BP, "--auto-approve"])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    };
    let (mut a, mut b) = (spawn(), spawn());
    // Time stands still, so the one holding the lock cannot finish: the first to exit is the
    // refused one.
    let a_first = tokio::select! {
        _ = a.wait() => true,
        _ = b.wait() => false,
    };
    let (loser, mut winner) = if a_first { (a, b) } else { (b, a) };
    let refused = loser.wait_with_output().await.unwrap();
    assert_eq!(refused.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&refused.stderr);
    let holder = LockInfo::current(String::new(), "apply").holder;
    assert!(
        stderr.contains(&format!(
            "state `gs://{BUCKET}/{OBJECT}` is locked by {holder}"
        )) && stderr.contains("running `a3ctl apply`")
            && stderr.contains("lock id"),
        "{stderr}"
    );
    let lock: Value = serde_json::from_slice(
        &download(&cx, BUCKET, &format!("{OBJECT}.lock"))
            .await
            .unwrap(),
    )
    .unwrap();
    assert!(stderr.contains(lock["id"].as_str().unwrap()), "{stderr}");
    assert!(stderr.contains(&format!("force-unlock {}", lock["id"].as_str().unwrap())));
    let done = finish_with_time(&cx, &mut winner).await;
    assert_eq!(done.code, Some(0), "{}", done.stderr);
    assert_eq!(
        live_objects(&cx, BUCKET),
        vec![OBJECT],
        "the lock is released"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_apply_killed_holding_the_gcs_lock_is_named_and_force_unlock_clears_it() {
    let cx = TestContext::with(frozen_clock()).await;
    gcs_minimal(&cx, "");
    cx.run(&["state", "create-bucket", GCS_BP]).await.expect(0);
    let mut child = cx
        .command(&["apply", GCS_BP, "--auto-approve"])
        .spawn()
        .unwrap();
    // Kill it once an operation is in flight (journaled in the remote state).
    until(|| async {
        match download(&cx, BUCKET, OBJECT).await {
            Some(bytes) => {
                let state: Value = serde_json::from_slice(&bytes).unwrap();
                !state["pending"].as_array().unwrap().is_empty()
            }
            None => false,
        }
    })
    .await;
    child.start_kill().unwrap(); // SIGKILL: no chance to release the lock
    child.wait().await.unwrap();
    let lock: Value = serde_json::from_slice(
        &download(&cx, BUCKET, &format!("{OBJECT}.lock"))
            .await
            .expect("the lock is left behind"),
    )
    .unwrap();
    let id = lock["id"].as_str().unwrap().to_string();
    for field in ["holder", "host", "pid", "created", "operation"] {
        assert!(lock.get(field).is_some(), "lock has `{field}`: {lock}");
    }
    let refused = cx.run(&["apply", GCS_BP, "--auto-approve"]).await.expect(1);
    assert!(
        refused.stderr.contains(&format!(
            "is locked by {} (pid {}, running `a3ctl apply`) since {}; lock id `{id}`",
            lock["holder"].as_str().unwrap(),
            lock["pid"],
            lock["created"].as_str().unwrap()
        )),
        "{}",
        refused.stderr
    );
    assert!(
        refused.stderr.contains("no longer runs")
            && refused.stderr.contains(&format!("a3ctl force-unlock {id}")),
        "{}",
        refused.stderr
    );
    let wrong = cx
        .run(&["force-unlock", "not-the-id", GCS_BP, "--force"])
        .await
        .expect(1);
    assert!(
        wrong
            .stderr
            .contains(&format!("the current lock id is `{id}`"))
    );
    let unlocked = cx
        .run(&["force-unlock", &id, GCS_BP, "--force"])
        .await
        .expect(0);
    assert!(
        unlocked.stderr.contains(&format!("Lock `{id}`")),
        "{}",
        unlocked.stderr
    );
    assert_eq!(live_objects(&cx, BUCKET), vec![OBJECT]);
    let rerun = run_with_time(&cx, &["apply", GCS_BP, "--auto-approve"]).await;
    assert_eq!(rerun.code, Some(0), "{}", rerun.stderr);
    assert!(
        rerun.stderr.contains("the apply resumes them in place"),
        "{}",
        rerun.stderr
    );
    cx.run(&["plan", GCS_BP, "--detailed-exitcode"])
        .await
        .expect(0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn local_state_migrates_to_gcs_keeping_lineage_and_serial() {
    let cx = TestContext::new().await;
    cx.run(&["apply", "blueprints/minimal.toml", "--auto-approve"])
        .await
        .expect(0);
    let local: Value =
        serde_json::from_slice(&std::fs::read(cx.path("state/a3mini.a3state.json")).unwrap())
            .unwrap();
    gcs_minimal(&cx, "");
    let early = cx.run(&["state", "migrate", GCS_BP]).await.expect(1);
    assert!(early.stderr.contains("does not exist"), "{}", early.stderr);
    cx.run(&["state", "create-bucket", GCS_BP]).await.expect(0);
    let migrated = cx.run(&["state", "migrate", GCS_BP]).await.expect(0);
    assert!(
        migrated.stderr.contains("no longer read"),
        "{}",
        migrated.stderr
    );
    let remote = remote_state(&cx).await;
    assert_eq!(remote["lineage"], local["lineage"]);
    assert_eq!(remote["serial"], local["serial"]);
    assert_eq!(remote["resources"], local["resources"]);
    let again = cx.run(&["state", "migrate", GCS_BP]).await.expect(0);
    assert!(again.stderr.contains("nothing to do"), "{}", again.stderr);
    cx.run(&["plan", GCS_BP, "--detailed-exitcode"])
        .await
        .expect(0);
    let missing = cx
        .run(&["state", "migrate", GCS_BP, "--from", "nowhere.json"])
        .await
        .expect(1);
    assert!(
        missing
            .stderr
            .contains("no local state file `nowhere.json`"),
        "{}",
        missing.stderr
    );
    let local_target = cx
        .run(&["state", "migrate", "blueprints/minimal.toml"])
        .await
        .expect(1);
    assert!(local_target.stderr.contains("nothing to migrate to"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_corrupt_gcs_state_or_lock_is_refused_pointing_at_the_way_out() {
    let cx = TestContext::new().await;
    gcs_minimal(&cx, "");
    make_bucket(&cx, BUCKET, "my-project").await;
    let upload = |object: &str, body: &'static str| {
        let url = format!(
            "{}/upload/storage/v1/b/{BUCKET}/o?uploadType=media&name={object}",
            cx.sim.base_url()
        );
        async move {
            let response = reqwest::Client::new()
                .post(url)
                .body(body)
                .send()
                .await
                .unwrap();
            assert!(response.status().is_success());
        }
    };
    upload(OBJECT, "{not json").await;
    let plan = cx.run(&["plan", GCS_BP]).await.expect(1);
    assert!(
        plan.stderr.contains("is not valid a3ctl state")
            && plan
                .stderr
                .contains(&format!("gcloud storage ls -a gs://{BUCKET}/{OBJECT}")),
        "{}",
        plan.stderr
    );
    upload(&format!("{OBJECT}.lock"), "garbage").await;
    let apply = cx.run(&["apply", GCS_BP, "--auto-approve"]).await.expect(1);
    assert!(
        apply.stderr.contains("is unreadable")
            && apply
                .stderr
                .contains(&format!("gcloud storage rm gs://{BUCKET}/{OBJECT}.lock")),
        "{}",
        apply.stderr
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gcs_state_survives_rate_limits_and_dropped_answers_on_every_storage_call() {
    // One in five storage requests fails: 429, 503, or a connection dropped before or after the
    // write happened. Writes are retried, and an upload whose answer was lost is recognised.
    let mut faults = FaultConfig::default();
    faults.transient.insert(
        "storage".into(),
        TransientFaults {
            rate: 0.2,
            kinds: vec![],
            methods: vec![],
        },
    );
    let cx = TestContext::with(SimConfig {
        faults: faults.clone(),
        ..SimConfig::default()
    })
    .await;
    gcs_minimal(&cx, "");
    cx.run(&["state", "create-bucket", GCS_BP]).await.expect(0);
    let apply = cx.run(&["apply", GCS_BP, "--auto-approve"]).await.expect(0);
    assert!(apply.stderr.contains("Apply complete!"), "{}", apply.stderr);
    // The test's own look at the bucket goes through the same storage API: without faults.
    cx.sim.set_faults(FaultConfig::default());
    assert_eq!(live_objects(&cx, BUCKET), vec![OBJECT], "no lock left");
    let state = remote_state(&cx).await;
    assert!(state["pending"].as_array().unwrap().is_empty());
    cx.sim.set_faults(faults);
    cx.run(&["plan", GCS_BP, "--detailed-exitcode"])
        .await
        .expect(0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn migrating_with_the_flag_alone_marks_the_local_file_moved_and_names_the_state_lines() {
    let cx = TestContext::new().await;
    let bp = "blueprints/minimal.toml";
    cx.run(&["apply", bp, "--auto-approve"]).await.expect(0);
    cx.run(&["--state-bucket", BUCKET, "state", "create-bucket", bp])
        .await
        .expect(0);
    let migrated = cx
        .run(&["--state-bucket", BUCKET, "state", "migrate", bp])
        .await
        .expect(0);
    // Not "no longer read": without the flag the blueprint still names the local file.
    assert!(
        !migrated.stderr.contains("no longer read"),
        "{}",
        migrated.stderr
    );
    assert!(
        migrated.stderr.contains(&format!(
            "[state]\nbackend = \"gcs\"\nbucket = \"{BUCKET}\"\nprefix = \"a3ctl/a3mini\""
        )),
        "{}",
        migrated.stderr
    );
    assert!(
        cx.path("state/a3mini.a3state.json.moved").exists(),
        "the marker"
    );
    // A run without the flag stops instead of working on the stale copy.
    let stale = cx.run(&["plan", bp]).await.expect(1);
    assert!(
        stale.stderr.contains(&format!(
            "moved to `gs://{BUCKET}/{OBJECT}` by `a3ctl state migrate`"
        )),
        "{}",
        stale.stderr
    );
    assert!(
        stale.stderr.contains("point the blueprint's [state] at it"),
        "{}",
        stale.stderr
    );
    // With the flag, or with the lines added, it is the migrated state: nothing to do.
    cx.run(&["--state-bucket", BUCKET, "plan", bp, "--detailed-exitcode"])
        .await
        .expect(0);
    gcs_minimal(&cx, "");
    cx.run(&["plan", GCS_BP, "--detailed-exitcode"])
        .await
        .expect(0);
    // Running the migration again is a no-op, not a refusal.
    let again = cx
        .run(&["--state-bucket", BUCKET, "state", "migrate", bp])
        .await
        .expect(0);
    assert!(again.stderr.contains("nothing to do"), "{}", again.stderr);
}
