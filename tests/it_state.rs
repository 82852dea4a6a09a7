//! State kept in the simulator's Cloud Storage: the bucket a3ctl creates for it, writes that
//! never lose an update, the lock object (concurrent and killed applies, force-unlock), the
//! `state` commands, local → GCS migration, the KMS key and the sandbox.

mod common;

use a3ctl::cloud::gcp::storage::StorageClient;
use a3ctl::cloud::gcp::{CredentialsMode, Endpoints, GcpConfig};
use a3ctl::state::State;
use a3ctl::state::gcs::{GcsLocation, GcsStore};
use a3ctl::state::lock::{LockError, LockInfo};
use a3ctl::state::store::StoreError;
use a3ctl_sim::SimConfig;
use a3ctl_sim::clock::ClockMode;
use a3ctl_sim::latency::LatencyProfile;
use common::{Run, TestContext};
use serde_json::{Value, json};
use std::path::PathBuf;
use std::time::Duration;

const BUCKET: &str = "my-project-a3ctl-state";
/// Where the minimal blueprint's state lands with the default prefix.
const OBJECT: &str = "a3ctl/a3mini/a3mini.a3state.json";

/// The minimal blueprint with its state in `BUCKET`, plus extra `[state]` lines.
fn gcs_minimal(cx: &TestContext, extra: &str) -> PathBuf {
    let text = std::fs::read_to_string(cx.path("blueprints/minimal.toml")).unwrap();
    cx.write(
        "blueprints/minimal-gcs.toml",
        &format!("{text}\n[state]\nbackend = \"gcs\"\nbucket = \"{BUCKET}\"\n{extra}"),
    )
}
const GCS_BP: &str = "blueprints/minimal-gcs.toml";

/// Realistic latencies on a clock that moves only when the test says: an apply started now
/// holds its lock until the test advances time.
fn frozen_clock() -> SimConfig {
    SimConfig {
        clock: ClockMode::Manual,
        latency: LatencyProfile::realistic(),
        ..SimConfig::default()
    }
}

/// Buckets in the simulator, with their object versions.
fn buckets(cx: &TestContext) -> Vec<Value> {
    cx.sim.inventory()["storage"]["buckets"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

/// Live object names of `bucket`.
fn live_objects(cx: &TestContext, bucket: &str) -> Vec<String> {
    buckets(cx)
        .iter()
        .filter(|b| b["bucket"]["name"] == bucket)
        .flat_map(|b| b["objects"].as_array().cloned().unwrap_or_default())
        .filter(|o| o.get("timeDeleted").is_none())
        .map(|o| o["name"].as_str().unwrap().to_string())
        .collect()
}

/// An object's bytes as Cloud Storage serves them, if it exists.
async fn download(cx: &TestContext, bucket: &str, object: &str) -> Option<Vec<u8>> {
    let url = format!(
        "{}/storage/v1/b/{bucket}/o/{}?alt=media",
        cx.sim.base_url(),
        object.replace('/', "%2F")
    );
    let response = reqwest::get(&url).await.unwrap();
    response
        .status()
        .is_success()
        .then_some(response.bytes().await.unwrap().to_vec())
}

async fn remote_state(cx: &TestContext) -> Value {
    serde_json::from_slice(&download(cx, BUCKET, OBJECT).await.expect("state object")).unwrap()
}

/// Creates a bucket through the API directly, in `project`.
async fn make_bucket(cx: &TestContext, name: &str, project: &str) {
    let url = format!("{}/storage/v1/b?project={project}", cx.sim.base_url());
    let response = reqwest::Client::new()
        .post(&url)
        .json(&json!({"name": name, "location": "US-CENTRAL1", "versioning": {"enabled": true}}))
        .send()
        .await
        .unwrap();
    assert!(response.status().is_success(), "{response:?}");
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
async fn create_bucket_turns_on_uniform_access_and_versioning_and_is_idempotent() {
    let cx = TestContext::new().await;
    gcs_minimal(&cx, "");
    let first = cx.run(&["state", "create-bucket", GCS_BP]).await.expect(0);
    assert!(
        first
            .stderr
            .contains(&format!("Created bucket `gs://{BUCKET}`")),
        "{}",
        first.stderr
    );
    let all = buckets(&cx);
    assert_eq!(all.len(), 1);
    let bucket = &all[0]["bucket"];
    assert_eq!(bucket["name"], BUCKET);
    assert_eq!(bucket["location"], "US-CENTRAL1");
    assert_eq!(bucket["versioning"]["enabled"], true);
    assert_eq!(
        bucket["iamConfiguration"]["uniformBucketLevelAccess"]["enabled"],
        true
    );
    assert_eq!(
        bucket["iamConfiguration"]["publicAccessPrevention"],
        "enforced"
    );
    assert_eq!(bucket["labels"]["a3ctl-blueprint"], "a3mini");
    let again = cx.run(&["state", "create-bucket", GCS_BP]).await.expect(0);
    assert!(
        again
            .stderr
            .contains("already exists in project `my-project`")
            && again.stderr.contains("versioning on"),
        "{}",
        again.stderr
    );
    assert_eq!(
        buckets(&cx)[0]["bucket"]["metageneration"],
        "1",
        "untouched"
    );

    // A name another project holds is refused, naming why.
    make_bucket(&cx, "someone-elses-bucket", "other-project").await;
    let taken = cx
        .run(&[
            "state",
            "create-bucket",
            GCS_BP,
            "--state-bucket",
            "someone-elses-bucket",
        ])
        .await
        .expect(1);
    assert!(
        taken
            .stderr
            .contains("Bucket name `someone-elses-bucket` is taken by another project"),
        "{}",
        taken.stderr
    );
    // A local state has no bucket to create.
    let local = cx
        .run(&["state", "create-bucket", "blueprints/minimal.toml"])
        .await
        .expect(1);
    assert!(
        local.stderr.contains("kept in a local file"),
        "{}",
        local.stderr
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_bucket_is_named_with_the_command_that_creates_it_and_nothing_is_written() {
    let cx = TestContext::new().await;
    gcs_minimal(&cx, "");
    for args in [
        vec!["apply", GCS_BP, "--auto-approve"],
        vec!["plan", GCS_BP],
        vec!["state", "list", GCS_BP],
    ] {
        let run = cx.run(&args).await.expect(1);
        assert!(
            run.stderr
                .contains(&format!("state bucket `{BUCKET}` does not exist")),
            "{args:?}: {}",
            run.stderr
        );
        assert!(
            run.stderr
                .contains(&format!("a3ctl state create-bucket {GCS_BP}")),
            "{args:?}: {}",
            run.stderr
        );
    }
    assert!(buckets(&cx).is_empty());
    assert!(!cx.path("state").exists(), "no local state either");
    let counts = cx.sim.request_counts();
    assert!(
        counts
            .keys()
            .all(|k| k.contains(" /storage/v1/b/") || k.contains(" /upload/storage/v1/b/")),
        "nothing but the state store was called: {counts:?}"
    );
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
            StorageClient::new(&config).unwrap(),
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
    assert!(rerun.stderr.contains("Resuming"), "{}", rerun.stderr);
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

/// `a3ctl ARGS --state-bucket BUCKET` against the minimal blueprint (whose `[state]` is local).
async fn in_bucket(cx: &TestContext, args: &[&str]) -> Run {
    let mut all = args.to_vec();
    all.extend(["blueprints/minimal.toml", "--state-bucket", BUCKET]);
    cx.run(&all).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn state_commands_list_show_move_forget_pull_and_push_with_their_refusals() {
    let cx = TestContext::new().await;
    in_bucket(&cx, &["state", "create-bucket"]).await.expect(0);
    in_bucket(&cx, &["apply", "--auto-approve"]).await.expect(0);
    assert!(
        !cx.path("state").exists(),
        "--state-bucket moved the state to GCS"
    );
    let recorded = remote_state(&cx).await;
    let serial = recorded["serial"].as_u64().unwrap();

    let list = in_bucket(&cx, &["state", "list"]).await.expect(0);
    let addrs: Vec<&str> = list.stdout.lines().collect();
    assert_eq!(
        addrs.len(),
        recorded["resources"].as_object().unwrap().len()
    );
    assert!(addrs.contains(&"network.gpu-0") && addrs.contains(&"cluster.main"));

    let show = in_bucket(&cx, &["state", "show", "network.gpu-7"])
        .await
        .expect(0);
    let shown: Value = serde_json::from_str(&show.stdout).unwrap();
    assert_eq!(shown["address"], "network.gpu-7");
    assert_eq!(shown["kind"], "network");
    let id = shown["id"].as_str().unwrap().to_string();
    let typo = in_bucket(&cx, &["state", "show", "network.gpu-O"])
        .await
        .expect(1);
    assert!(
        typo.stderr.contains("did you mean `network.gpu-0`?"),
        "{}",
        typo.stderr
    );
    let nonsense = in_bucket(&cx, &["state", "show", "gpu-0"]).await.expect(1);
    assert!(nonsense.stderr.contains("is not a resource address"));

    // mv renames the record and what depends on it, under the lock, bumping the serial.
    let moved = in_bucket(&cx, &["state", "mv", "network.gpu-0", "network.renamed"])
        .await
        .expect(0);
    assert!(
        moved
            .stderr
            .contains("Moved `network.gpu-0` to `network.renamed`")
    );
    let after = remote_state(&cx).await;
    assert_eq!(after["serial"].as_u64().unwrap(), serial + 1);
    assert!(after["resources"].get("network.gpu-0").is_none());
    assert!(after["resources"].get("network.renamed").is_some());
    assert!(
        after["resources"]
            .as_object()
            .unwrap()
            .values()
            .any(|r| r["dependencies"]
                .as_array()
                .unwrap()
                .contains(&json!("network.renamed"))),
        "dependencies follow the move"
    );
    let kind = in_bucket(&cx, &["state", "mv", "network.renamed", "subnetwork.x"])
        .await
        .expect(1);
    assert!(
        kind.stderr.contains("a network cannot become a subnetwork"),
        "{}",
        kind.stderr
    );
    let taken = in_bucket(&cx, &["state", "mv", "network.renamed", "network.gpu-1"])
        .await
        .expect(1);
    assert!(
        taken.stderr.contains("is already in state"),
        "{}",
        taken.stderr
    );
    in_bucket(&cx, &["state", "mv", "network.renamed", "network.gpu-0"])
        .await
        .expect(0);
    in_bucket(&cx, &["plan", "--detailed-exitcode"])
        .await
        .expect(0);

    // rm forgets: the network stays in the cloud, and the next plan wants to create it.
    let removed = in_bucket(&cx, &["state", "rm", "network.gpu-7"])
        .await
        .expect(0);
    assert!(
        removed
            .stderr
            .contains(&format!("`{id}` still exists in the cloud")),
        "{}",
        removed.stderr
    );
    let network = reqwest::get(format!("{}/compute/v1/{id}", cx.sim.base_url()))
        .await
        .unwrap();
    assert!(
        network.status().is_success(),
        "the network itself is untouched"
    );
    let plan = in_bucket(&cx, &["plan", "--detailed-exitcode"])
        .await
        .expect(2);
    assert!(
        plan.stdout.contains("network.gpu-7 will be created"),
        "{}",
        plan.stdout
    );

    // pull prints the state; push refuses what would lose updates unless forced.
    let pulled = in_bucket(&cx, &["state", "pull"]).await.expect(0);
    let mut state: Value = serde_json::from_str(&pulled.stdout).unwrap();
    assert_eq!(state, remote_state(&cx).await);
    let write = |state: &Value| {
        cx.write("pushed.json", &serde_json::to_string(state).unwrap());
    };
    write(&state);
    let equal = in_bucket(&cx, &["state", "push", "pushed.json"])
        .await
        .expect(1);
    assert!(
        equal.stderr.contains("not newer than serial"),
        "{}",
        equal.stderr
    );
    assert!(equal.stderr.contains("--force"), "{}", equal.stderr);
    state["serial"] = json!(state["serial"].as_u64().unwrap() + 5);
    write(&state);
    in_bucket(&cx, &["state", "push", "pushed.json"])
        .await
        .expect(0);
    assert_eq!(remote_state(&cx).await["serial"], state["serial"]);
    state["lineage"] = json!("another-history");
    state["serial"] = json!(state["serial"].as_u64().unwrap() + 1);
    write(&state);
    let lineage = in_bucket(&cx, &["state", "push", "pushed.json"])
        .await
        .expect(1);
    assert!(
        lineage.stderr.contains("another state history"),
        "{}",
        lineage.stderr
    );
    in_bucket(&cx, &["state", "push", "pushed.json", "--force"])
        .await
        .expect(0);
    assert_eq!(remote_state(&cx).await["lineage"], "another-history");
    state["blueprint"] = json!("someone-else");
    state["serial"] = json!(state["serial"].as_u64().unwrap() + 1);
    write(&state);
    let other = in_bucket(&cx, &["state", "push", "pushed.json"])
        .await
        .expect(1);
    assert!(
        other
            .stderr
            .contains("is the state of blueprint `someone-else`")
    );
    cx.write("garbage.json", "{not json");
    let garbage = in_bucket(&cx, &["state", "push", "garbage.json"])
        .await
        .expect(1);
    assert!(garbage.stderr.contains("is not an a3ctl state"));

    // Overrides that make no sense are refused before any call.
    let before = cx.sim.request_total();
    let prefix = cx
        .run(&["plan", "blueprints/minimal.toml", "--state-prefix", "x"])
        .await
        .expect(1);
    assert!(
        prefix
            .stderr
            .contains("`--state-prefix` applies only to a state kept in GCS")
    );
    let bad = cx
        .run(&[
            "plan",
            "blueprints/minimal.toml",
            "--state-bucket",
            "No_Such!",
        ])
        .await
        .expect(1);
    assert!(
        bad.stderr.contains("is not a bucket name"),
        "{}",
        bad.stderr
    );
    assert_eq!(cx.sim.request_total(), before);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_kms_key_encrypts_the_state_object_and_is_the_new_buckets_default() {
    let cx = TestContext::new().await;
    let key = "projects/my-project/locations/us-central1/keyRings/ring/cryptoKeys/state";
    gcs_minimal(&cx, &format!("kms_key = \"{key}\""));
    // A bucket without a default key: the key must come from the upload itself.
    make_bucket(&cx, BUCKET, "my-project").await;
    let mut state = State::new("a3mini", "lineage-1".into());
    state.serial = 3;
    cx.write("s.json", &serde_json::to_string(&state).unwrap());
    cx.run(&["state", "push", "s.json", GCS_BP]).await.expect(0);
    let objects = buckets(&cx)[0]["objects"].as_array().unwrap().clone();
    // The released lock's generation was deleted for good: only the state is left.
    assert_eq!(objects.len(), 1, "{objects:?}");
    assert_eq!(objects[0]["name"], OBJECT);
    assert_eq!(
        objects[0]["kmsKeyName"],
        format!("{key}/cryptoKeyVersions/1")
    );
    cx.run(&[
        "state",
        "create-bucket",
        GCS_BP,
        "--state-bucket",
        "my-project-other",
    ])
    .await
    .expect(0);
    let created = buckets(&cx)
        .into_iter()
        .find(|b| b["bucket"]["name"] == "my-project-other")
        .unwrap();
    assert_eq!(created["bucket"]["encryption"]["defaultKmsKeyName"], key);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_the_sandbox_a_gcs_state_lives_in_the_simulators_storage() {
    let cx = TestContext::new().await;
    gcs_minimal(&cx, "");
    let sandbox = |args: &[&str]| {
        let mut command = cx.command(args);
        command
            .arg("--sandbox")
            .env("A3CTL_SANDBOX_TIME_SCALE", "0.00001");
        async move {
            let output = command.output().await.unwrap();
            Run {
                code: output.status.code(),
                stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
                stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
            }
        }
    };
    let missing = sandbox(&["apply", GCS_BP, "--auto-approve"])
        .await
        .expect(1);
    assert!(
        missing
            .stderr
            .contains(&format!("a3ctl state create-bucket --sandbox {GCS_BP}")),
        "{}",
        missing.stderr
    );
    sandbox(&["state", "create-bucket", GCS_BP]).await.expect(0);
    sandbox(&["apply", GCS_BP, "--auto-approve"])
        .await
        .expect(0);
    let world = std::fs::read_to_string(cx.path("state/sandbox/world.json")).unwrap();
    assert!(world.contains(BUCKET) && world.contains(OBJECT));
    let files: Vec<String> = std::fs::read_dir(cx.path("state/sandbox"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(files, vec!["world.json"], "no local state file");
    let list = sandbox(&["state", "list", GCS_BP]).await.expect(0);
    assert!(list.stdout.lines().any(|l| l == "network.primary"));
    sandbox(&["plan", GCS_BP, "--detailed-exitcode"])
        .await
        .expect(0);
    assert_eq!(
        cx.sim.request_total(),
        0,
        "the test's own simulator was not used"
    );
}
