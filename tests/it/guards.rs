//! Guards that act before any cloud call: a bad blueprint stops every command with its message
//! and no request reaches the cloud; a second apply on a locked state is refused, naming the
//! holder.

use crate::common;

use common::TestContext;

const BAD: &str = r#"name = "a3mega"
project = "my-project"
region = "us-central1"
zone = "us-central1-b"

[[gpu_pool]]
machine_type = "a3-megagpu-8g"
nodes = 2
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bad_blueprint_fails_every_command_without_any_request() {
    let cx = TestContext::new().await;
    cx.write("bad.toml", BAD);
    for args in [
        vec!["validate", "bad.toml"],
        vec!["plan", "bad.toml"],
        vec!["apply", "bad.toml", "--auto-approve"],
        vec!["destroy", "bad.toml", "--auto-approve"],
        vec!["graph", "bad.toml"],
    ] {
        let run = cx.run(&args).await.expect(1);
        assert!(
            run.stderr.contains("bad.toml:7:16"),
            "{args:?}: {}",
            run.stderr
        );
        assert!(
            run.stderr.contains("us-central1-b"),
            "{args:?}: {}",
            run.stderr
        );
    }
    assert_eq!(
        cx.sim.request_total(),
        0,
        "a bad blueprint must not reach the cloud"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_apply_on_a_locked_state_is_refused_naming_the_holder() {
    let cx = TestContext::new().await;
    // A live holder on this host: this test process.
    let info = a3ctl::state::lock::LockInfo::current("lock-1234".into(), "apply");
    let lock_path = a3ctl::state::lock::LocalLock::lock_path(&cx.path("state/a3high.a3state.json"));
    std::fs::create_dir_all(lock_path.parent().unwrap()).unwrap();
    std::fs::write(&lock_path, serde_json::to_vec(&info).unwrap()).unwrap();
    let run = cx
        .run(&["apply", "blueprints/a3-high.toml", "--auto-approve"])
        .await
        .expect(1);
    assert!(run.stderr.contains("is locked by"), "{}", run.stderr);
    assert!(run.stderr.contains(&info.holder), "{}", run.stderr);
    assert!(run.stderr.contains("lock-1234"), "{}", run.stderr);
    // The command to paste, with the blueprint it needs.
    assert!(
        run.stderr
            .contains("run `a3ctl force-unlock lock-1234 blueprints/a3-high.toml`"),
        "{}",
        run.stderr
    );
    assert_eq!(cx.sim.request_total(), 0);
    // force-unlock with the id clears it.
    cx.run(&[
        "force-unlock",
        "lock-1234",
        "blueprints/a3-high.toml",
        "--force",
    ])
    .await
    .expect(0);
    assert!(!lock_path.exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_credentials_the_real_cloud_path_fails_fast_with_a_hint() {
    let cx = TestContext::new().await;
    let home = tempfile::tempdir().unwrap();
    let out = tokio::process::Command::new(env!("CARGO_BIN_EXE_a3ctl"))
        .args(["plan", "blueprints/a3-high.toml"])
        .current_dir(cx.path(""))
        .env_clear()
        .env("HOME", home.path())
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("NO_COLOR", "1")
        .output()
        .await
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("no Application Default Credentials found"),
        "{stderr}"
    );
    assert!(
        stderr.contains("gcloud auth application-default login"),
        "{stderr}"
    );
    // The error comes from building the clients, before any call could be retried.
    assert!(
        stderr.contains("Cannot create the Google Cloud clients"),
        "{stderr}"
    );
}
