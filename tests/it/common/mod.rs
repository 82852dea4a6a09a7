//! Shared by the CLI integration tests: a temporary working directory with the shipped
//! blueprints, an in-process simulator, and the real `a3ctl` binary pointed at it.

#![allow(dead_code)]

/// gcloud pointed at a simulator (the simulator's own test harness).
#[path = "../../../sim/tests/it/gcloud_support/mod.rs"]
pub mod gcloud;
pub mod gcs;
pub mod kubectl;

use a3ctl_sim::{SimConfig, SimHandle};
use std::path::{Path, PathBuf};
use std::process::Output;

pub struct TestContext {
    pub dir: tempfile::TempDir,
    pub sim: SimHandle,
}

/// The result of one a3ctl run.
#[derive(Debug)]
pub struct Run {
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    pub fn from(output: Output) -> Run {
        Run {
            code: output.status.code(),
            stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        }
    }

    /// Panics with the full output unless the exit code is `code`.
    pub fn expect(self, code: i32) -> Run {
        assert_eq!(
            self.code,
            Some(code),
            "stdout:\n{}\nstderr:\n{}",
            self.stdout,
            self.stderr
        );
        self
    }
}

/// Whether a request of the simulator's log changes something: anything but a GET, except the
/// reads Google's APIs make POSTs (`:getIamPolicy`, `:testIamPermissions`).
pub fn is_mutation(method: &str, endpoint: &str) -> bool {
    method != "GET"
        && !endpoint.ends_with(":getIamPolicy")
        && !endpoint.ends_with(":testIamPermissions")
}

/// How many requests that change something (see [`is_mutation`]) the simulator has answered, over
/// every API: what a refusal must leave at its value.
pub fn mutations(cx: &TestContext) -> u64 {
    cx.sim
        .request_counts()
        .iter()
        .filter(|(endpoint, _)| {
            let (method, path) = endpoint.split_once(' ').unwrap_or(("", endpoint));
            is_mutation(method, path)
        })
        .map(|(_, n)| n)
        .sum()
}

/// Runs `test` as a3ctl runs its work: in a task on a runtime whose workers have 16 MiB stacks
/// (`src/main.rs`; the Google Cloud models' deserializers recurse deeply, and a test thread's
/// 2 MiB is not enough in debug builds). For tests that drive the adapters themselves.
pub fn on_app_runtime(test: impl std::future::Future<Output = ()> + Send + 'static) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_stack_size(16 * 1024 * 1024)
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(async {
        if let Err(e) = tokio::spawn(test).await {
            std::panic::resume_unwind(e.into_panic());
        }
    });
}

/// Every request the simulator has answered so far, in order, as `/_sim/requests` lists them
/// (`seq`, `api`, `method`, `path`, `endpoint`, `status`).
pub async fn request_log(cx: &TestContext) -> Vec<serde_json::Value> {
    let log: serde_json::Value = reqwest::get(format!("{}/_sim/requests", cx.sim.base_url()))
        .await
        .expect("the request log")
        .json()
        .await
        .expect("the request log's JSON");
    log["entries"].as_array().cloned().unwrap_or_default()
}

/// The shipped blueprints whose reservations every test world holds.
pub const WORLD_BLUEPRINTS: [&str; 3] = ["a3-high.toml", "a3-mega.toml", "minimal.toml"];

/// Like the sandbox, the test world holds the reservations the shipped A3 High and A3 Mega
/// blueprints name (`a3ctl::commands::session::provide_reservations`), as a project that bought
/// its capacity would. The A3 Ultra and A4 blueprints' reservations (1,344 more reserved vCPUs in
/// us-central1) are made only by the tests that apply them ([`provide_reservations`]), so the
/// other tests' quota numbers stay those of a world without them. Their inserts finish by
/// moving the clock a minute (a reservation takes at most 30 simulated seconds), and the request
/// log starts empty after them, so tests count only their own requests. Scripted faults are set
/// after this, so it does not meet them.
pub async fn provide_shipped_reservations(sim: &SimHandle) {
    provide_reservations(sim, &WORLD_BLUEPRINTS).await;
}

/// Makes the reservations the shipped blueprints `files` name, then clears the request log.
pub async fn provide_reservations(sim: &SimHandle, files: &[&str]) {
    provide_reservations_with_room(sim, files, 1).await;
}

/// [`provide_reservations`], each for `room` times its pool's nodes (as the sandbox makes them).
pub async fn provide_reservations_with_room(sim: &SimHandle, files: &[&str], room: u32) {
    let blueprints = Path::new(env!("CARGO_MANIFEST_DIR")).join("blueprints");
    let client = reqwest::Client::new();
    for file in files {
        let path = blueprints.join(file);
        let blueprint = a3ctl::blueprint::load(&path).expect("shipped blueprint loads");
        let operations = a3ctl::commands::session::provide_reservations_with_room(
            sim.base_url(),
            &a3ctl::graph::build::resources(&blueprint),
            room,
        )
        .await
        .expect("the shipped blueprints' reservations are created");
        for operation in operations {
            sim.advance_secs(60.0);
            a3ctl::commands::session::wait_for_operation(&client, sim.base_url(), &operation)
                .await
                .expect("the reservation's insert finishes");
        }
    }
    let cleared = client
        .delete(format!("{}/_sim/requests", sim.base_url()))
        .send()
        .await
        .expect("the request log is cleared");
    assert!(cleared.status().is_success());
}

impl TestContext {
    /// A simulator with a manual clock and zero latency: operations finish at the next read.
    pub async fn new() -> TestContext {
        TestContext::with(SimConfig::default()).await
    }

    pub async fn with(config: SimConfig) -> TestContext {
        let faults = config.faults.clone();
        let cx = TestContext::without_reservations(SimConfig {
            faults: Default::default(),
            ..config
        })
        .await;
        provide_shipped_reservations(&cx.sim).await;
        cx.sim.set_faults(faults);
        cx
    }

    /// A simulator of `config` whose world holds no reservation yet.
    pub async fn without_reservations(config: SimConfig) -> TestContext {
        let dir = tempfile::tempdir().expect("temp dir");
        let blueprints = Path::new(env!("CARGO_MANIFEST_DIR")).join("blueprints");
        std::fs::create_dir_all(dir.path().join("blueprints")).expect("blueprints dir");
        for entry in std::fs::read_dir(blueprints).expect("shipped blueprints") {
            let entry = entry.expect("entry");
            std::fs::copy(
                entry.path(),
                dir.path().join("blueprints").join(entry.file_name()),
            )
            .expect("copy");
        }
        let sim = a3ctl_sim::start(config).await.expect("simulator starts");
        TestContext { dir, sim }
    }

    pub fn path(&self, relative: &str) -> PathBuf {
        self.dir.path().join(relative)
    }

    /// Writes a blueprint file into the working directory.
    pub fn write(&self, relative: &str, text: &str) -> PathBuf {
        let path = self.path(relative);
        std::fs::write(&path, text).expect("write");
        path
    }

    /// Turns deletion protection off in the blueprint at `relative` (`[cluster]
    /// deletion_protection = false`), as for a deployment meant to be thrown away: the tests
    /// that destroy what they applied. Protection itself is tested in `protection`.
    pub fn unprotect(&self, relative: &str) {
        let text = std::fs::read_to_string(self.path(relative)).expect("blueprint");
        let text = if text.contains("\n[cluster]\n") {
            text.replacen(
                "\n[cluster]\n",
                "\n[cluster]\ndeletion_protection = false\n",
                1,
            )
        } else {
            format!("{text}\n[cluster]\ndeletion_protection = false\n")
        };
        self.write(relative, &text);
    }

    /// The `a3ctl` command, run in the working directory against the simulator.
    pub fn command(&self, args: &[&str]) -> tokio::process::Command {
        let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_a3ctl"));
        cmd.args(args)
            .current_dir(self.dir.path())
            .env_remove("A3CTL_SANDBOX")
            .env("A3CTL_NO_PROGRESS", "1")
            .env("NO_COLOR", "1")
            .env("A3CTL_POLL_INTERVAL_MS", "5")
            .envs(self.sim.a3ctl_env())
            .stdin(std::process::Stdio::null())
            .kill_on_drop(true);
        cmd
    }

    /// Runs `a3ctl ARGS` to completion.
    pub async fn run(&self, args: &[&str]) -> Run {
        Run::from(self.command(args).output().await.expect("a3ctl runs"))
    }

    /// Runs `a3ctl ARGS --sandbox` to completion: the built-in simulator under `state/sandbox/`
    /// of the working directory, on a fast clock (not this context's simulator).
    pub async fn sandbox(&self, args: &[&str]) -> Run {
        let mut command = self.command(args);
        command
            .arg("--sandbox")
            .env("A3CTL_SANDBOX_TIME_SCALE", "0.00001");
        Run::from(command.output().await.expect("a3ctl runs"))
    }

    /// Names of every Compute, GKE, Filestore, Artifact Registry and Storage resource in the
    /// simulator, as `kind path` strings (sorted), for "nothing leaked" checks.
    pub fn inventory_text(&self) -> String {
        self.sim.inventory().to_string()
    }
}

/// `gcloud compute reservations update a3mega-reservation --vm-count=COUNT`: the shipped A3 Mega
/// blueprint's reservation, resized behind a3ctl's back (someone else's VMs took or gave back room).
pub async fn resize_mega_reservation(cx: &TestContext, count: u32) {
    let (ok, out, err) = gcloud::Gcloud::in_project(&cx.sim, "my-project")
        .run(&[
            "compute",
            "reservations",
            "update",
            "a3mega-reservation",
            "--zone=us-central1-a",
            &format!("--vm-count={count}"),
        ])
        .await;
    assert!(ok, "gcloud reservations update failed:\n{out}\n{err}");
}
