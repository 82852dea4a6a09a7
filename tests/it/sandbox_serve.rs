//! `a3ctl sandbox serve`: after a sandbox apply (whose progress shows simulated durations), the
//! served world answers plain kubectl with the context `kubeconfig --sandbox` writes (and refuses
//! kubectl with another token, and a request without one, with 401), answers gcloud with the printed environment, holds
//! the sandbox against other `--sandbox` commands, and on Ctrl-C saves what gcloud changed, which
//! the next sandbox plan shows as drift.

use crate::common;

use base64::Engine as _;
use common::{Run, TestContext};
use serde_json::Value;
use std::os::unix::fs::PermissionsExt;
use std::process::Stdio;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, BufReader};

const MEGA: &str = "blueprints/a3-mega.toml";
const CONTEXT: &str = "a3ctl-sandbox_my-project_us-central1_a3mega";

fn sandbox_command(cx: &TestContext, args: &[&str]) -> tokio::process::Command {
    let mut command = cx.command(args);
    command.env("A3CTL_SANDBOX_TIME_SCALE", "0.00001");
    command
}

async fn sandbox(cx: &TestContext, args: &[&str]) -> Run {
    let mut command = sandbox_command(cx, args);
    command.arg("--sandbox");
    Run::from(command.output().await.expect("a3ctl runs"))
}

/// `7m12s` → 432 seconds.
fn seconds(text: &str) -> u64 {
    let (minutes, rest) = text.split_once('m').unwrap_or(("0", text));
    minutes.parse::<u64>().unwrap_or_else(|_| panic!("{text}")) * 60
        + rest
            .trim_end_matches('s')
            .parse::<u64>()
            .unwrap_or_else(|_| panic!("{text}"))
}

/// Runs a tool with only `env` (plus PATH and HOME); returns (success, stdout, stderr).
async fn tool(
    program: &str,
    args: &[&str],
    env: &[(String, String)],
    home: &std::path::Path,
) -> (bool, String, String) {
    let out = tokio::process::Command::new(program)
        .args(args)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", home)
        .envs(env.iter().cloned())
        .stdin(Stdio::null())
        .output()
        .await
        .unwrap_or_else(|e| panic!("{program} runs: {e}"));
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_served_sandbox_answers_kubectl_and_gcloud_and_keeps_their_changes() {
    let cx = TestContext::new().await;
    let apply = sandbox(&cx, &["apply", MEGA, "--auto-approve"])
        .await
        .expect(0);
    // One sandbox A3 Mega apply (about 15 s of CPU) serves both: its progress lines, then the
    // world it leaves.
    assert_durations_are_simulated(&apply.stderr);
    // The cluster's creation took GKE's simulated 6 to 10 minutes, not the real milliseconds.
    let line = apply
        .stderr
        .lines()
        .find(|l| l.starts_with("cluster.main: Creation complete after "))
        .unwrap_or_else(|| panic!("{}", apply.stderr));
    let took = line
        .strip_prefix("cluster.main: Creation complete after ")
        .and_then(|rest| rest.strip_suffix(" (simulated)"))
        .unwrap_or_else(|| panic!("{line}"));
    assert!(seconds(took) >= 360, "{line}");

    let mut serve = sandbox_command(&cx, &["sandbox", "serve", "--port", "0"]);
    serve.stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = serve.spawn().expect("a3ctl sandbox serve starts");
    let stdout = child.stdout.take().expect("stdout");
    let mut lines = BufReader::new(stdout).lines();
    let mut env: Vec<(String, String)> = Vec::new();
    let mut printed = String::new();
    let announced = tokio::time::timeout(Duration::from_secs(120), async {
        while let Some(line) = lines.next_line().await.expect("readable stdout") {
            printed.push_str(&line);
            printed.push('\n');
            if let Some((key, value)) = line
                .strip_prefix("export ")
                .and_then(|kv| kv.split_once('='))
            {
                env.push((key.to_string(), value.trim_matches('\'').to_string()));
            }
            if line.starts_with("# Serving until Ctrl-C") {
                return true;
            }
        }
        false
    })
    .await;
    assert_eq!(announced, Ok(true), "{printed}");
    assert!(
        printed.contains(
            "# Kubernetes API of projects/my-project/locations/us-central1/clusters/a3mega: https://127.0.0.1:"
        ),
        "{printed}"
    );
    let var = |key: &str| {
        env.iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.clone())
            .unwrap_or_else(|| panic!("{key} in\n{printed}"))
    };
    assert_eq!(var("CLOUDSDK_AUTH_DISABLE_CREDENTIALS"), "true");
    assert_eq!(var("CLOUDSDK_CORE_PROJECT"), "my-project");
    assert!(var("CLOUDSDK_API_ENDPOINT_OVERRIDES_CONTAINER").starts_with("http://127.0.0.1:"));
    // The same environment, for `source`.
    let file = std::fs::read_to_string(cx.path("state/sandbox/env.sh")).unwrap();
    assert!(file.contains(&format!(
        "export CLOUDSDK_API_ENDPOINT_OVERRIDES_CONTAINER={}\n",
        var("CLOUDSDK_API_ENDPOINT_OVERRIDES_CONTAINER")
    )));

    // kubectl with the context kubeconfig --sandbox writes: no plugin, no login.
    let written = cx
        .run(&["kubeconfig", "--sandbox", MEGA, "--file", "kc"])
        .await
        .expect(0);
    assert!(
        written
            .stderr
            .contains(&format!("Wrote context `{CONTEXT}` to `kc`")),
        "{}",
        written.stderr
    );
    let kc = cx.path("kc");
    assert_eq!(
        std::fs::metadata(&kc).unwrap().permissions().mode() & 0o777,
        0o600
    );
    let config: Value = serde_saphyr::from_str(&std::fs::read_to_string(&kc).unwrap()).unwrap();
    assert_eq!(config["current-context"], CONTEXT);
    let user = &config["users"][0]["user"];
    assert!(user.get("exec").is_none(), "{user}");
    let token = user["token"].as_str().expect("a token").to_string();
    assert!(token.starts_with("a3sim-"), "{token}");
    assert!(
        !config["clusters"][0]["cluster"]["certificate-authority-data"]
            .as_str()
            .unwrap()
            .is_empty()
    );
    // The token is in the kubeconfig only: not in the states, the world or the environment file.
    for entry in std::fs::read_dir(cx.path("state/sandbox")).unwrap() {
        let path = entry.unwrap().path();
        if path.is_file() {
            let text = String::from_utf8_lossy(&std::fs::read(&path).unwrap()).into_owned();
            assert!(!text.contains(&token), "{}", path.display());
        }
    }

    let home = cx.path(".");
    let kc_env = [("KUBECONFIG".to_string(), kc.display().to_string())];
    let (ok, out, err) = tool("kubectl", &["get", "nodes", "-o", "json"], &kc_env, &home).await;
    assert!(ok, "{out}\n{err}");
    let nodes: Value = serde_json::from_str(&out).unwrap();
    let gpu: Vec<&Value> = nodes["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|n| {
            n["metadata"]["labels"]["cloud.google.com/gke-accelerator"] == "nvidia-h100-mega-80gb"
        })
        .collect();
    assert_eq!(gpu.len(), 32, "{out}");

    // Another token, or none, is refused as a real API server refuses it.
    let (ok, _, err) = tool(
        "kubectl",
        &["get", "nodes", "--token", "not-the-token"],
        &kc_env,
        &home,
    )
    .await;
    assert!(!ok);
    assert!(
        err.contains("You must be logged in to the server (Unauthorized)"),
        "{err}"
    );
    // No token at all: kube-apiserver's 401 Status.
    let server = config["clusters"][0]["cluster"]["server"]
        .as_str()
        .unwrap()
        .to_string();
    let ca = base64::engine::general_purpose::STANDARD
        .decode(
            config["clusters"][0]["cluster"]["certificate-authority-data"]
                .as_str()
                .unwrap(),
        )
        .unwrap();
    let client = reqwest::Client::builder()
        .add_root_certificate(reqwest::Certificate::from_pem(&ca).unwrap())
        .build()
        .unwrap();
    let anonymous = client
        .get(format!("{server}/api/v1/nodes"))
        .send()
        .await
        .unwrap();
    assert_eq!(anonymous.status().as_u16(), 401);
    let status: Value = anonymous.json().await.unwrap();
    assert_eq!(status["kind"], "Status", "{status}");
    assert_eq!(status["reason"], "Unauthorized", "{status}");

    // gcloud with the printed environment.
    let (ok, out, err) = tool(
        "gcloud",
        &["container", "clusters", "list", "--format=json"],
        &env,
        &home,
    )
    .await;
    assert!(ok, "{out}\n{err}");
    let clusters: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(clusters[0]["name"], "a3mega", "{out}");
    assert_eq!(clusters[0]["status"], "RUNNING", "{out}");
    let (ok, out, err) = tool(
        "gcloud",
        &[
            "storage",
            "buckets",
            "update",
            "gs://my-project-a3mega-ckpt",
            "--update-labels=team=explorer",
        ],
        &env,
        &home,
    )
    .await;
    assert!(ok, "{out}\n{err}");

    // The sandbox is held while it serves.
    let refused = sandbox(&cx, &["plan", MEGA]).await.expect(1);
    assert!(
        refused
            .stderr
            .contains("error: The sandbox is being served by `a3ctl sandbox serve` (pid"),
        "{}",
        refused.stderr
    );
    assert!(
        refused.stderr.contains("stop it with Ctrl-C"),
        "{}",
        refused.stderr
    );
    let twice = Run::from(
        sandbox_command(&cx, &["sandbox", "serve", "--port", "0"])
            .output()
            .await
            .unwrap(),
    )
    .expect(1);
    assert!(
        twice
            .stderr
            .contains("error: The sandbox is being served by `a3ctl sandbox serve`"),
        "{}",
        twice.stderr
    );

    // Ctrl-C: the world is saved and the sandbox released.
    let pid = child.id().expect("running").to_string();
    let kill = tokio::process::Command::new("kill")
        .args(["-INT", &pid])
        .status()
        .await
        .unwrap();
    assert!(kill.success());
    let out = tokio::time::timeout(Duration::from_secs(120), child.wait_with_output())
        .await
        .expect("serve stops")
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("Stopped serving; saved the world to `state/sandbox/world.json`."),
        "{stderr}"
    );
    assert!(!cx.path("state/sandbox/world.json.lock").exists());

    let plan = sandbox(&cx, &["plan", MEGA, "--detailed-exitcode"])
        .await
        .expect(2);
    assert!(
        plan.stdout
            .contains("# bucket.my-project-a3mega-ckpt has changed"),
        "{}",
        plan.stdout
    );
    assert!(
        plan.stdout.contains("team = \"explorer\""),
        "{}",
        plan.stdout
    );
}

/// The simulator's realistic latency of `key` (`container.cluster.create`), in whole seconds as
/// progress prints them: `[min, max]`.
fn profile(key: &str) -> (u64, u64) {
    let (_, min, max) = a3ctl_sim::latency::defaults()
        .into_iter()
        .find(|(k, _, _)| k == key)
        .unwrap_or_else(|| panic!("latency key {key}"));
    (min.floor() as u64, max.ceil() as u64)
}

/// Sandbox progress shows what the cloud's operations took by their own timestamps: a cluster,
/// its GPU node pool, a Filestore instance and a network each within the simulator's latency
/// profile for their create, however loaded the machine; Kubernetes objects, made by synchronous
/// calls, say that no operation time was reported. Checked on the apply of
/// [`the_served_sandbox_answers_kubectl_and_gcloud_and_keeps_their_changes`].
fn assert_durations_are_simulated(stderr: &str) {
    let complete: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains(": Creation complete"))
        .collect();
    assert!(complete.len() > 40, "{}", stderr);
    let took = |addr: &str| -> u64 {
        let prefix = format!("{addr}: Creation complete after ");
        let line = complete
            .iter()
            .find(|l| l.starts_with(&prefix))
            .unwrap_or_else(|| panic!("{prefix} in\n{}", stderr));
        let text = line[prefix.len()..]
            .strip_suffix(" (simulated)")
            .unwrap_or_else(|| panic!("{line}"));
        seconds(text)
    };
    for (addr, key) in [
        ("cluster.main", "container.cluster.create"),
        ("node_pool.a3mega", "container.nodePool.create.gpu"),
        ("filestore.shared", "file.instance.create"),
        ("network.primary", "compute.network.insert"),
    ] {
        let (min, max) = profile(key);
        // The GPU pool's 32 nodes stretch its create as the simulator does (and init's estimate).
        let (min, max) = if addr == "node_pool.a3mega" {
            let factor = a3ctl_sim::latency::pool_size_factor(32);
            ((min as f64 * factor) as u64, (max as f64 * factor) as u64)
        } else {
            (min, max)
        };
        let seconds = took(addr);
        assert!(
            (min..=max).contains(&seconds),
            "{addr} took {seconds} s, outside {key}'s {min}..={max} s:\n{}",
            stderr
        );
    }
    let kubernetes: Vec<&&str> = complete.iter().filter(|l| l.starts_with("k8s.")).collect();
    assert!(kubernetes.len() > 20, "{}", stderr);
    for line in kubernetes {
        assert!(
            line.ends_with(": Creation complete (simulated; no operation time reported)"),
            "{line}"
        );
    }
    // Every step says its time is simulated; none shows the wall clock.
    for line in &complete {
        assert!(line.contains("(simulated"), "{line}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_help_has_examples() {
    let cx = TestContext::new().await;
    let help = cx.run(&["sandbox", "serve", "--help"]).await.expect(0);
    assert!(help.stdout.contains("Examples:"), "{}", help.stdout);
    assert!(
        help.stdout
            .contains("a3ctl kubeconfig --sandbox blueprints/a3-mega.toml"),
        "{}",
        help.stdout
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_refuses_a_sandbox_another_command_holds() {
    let cx = TestContext::new().await;
    std::fs::create_dir_all(cx.path("state/sandbox")).unwrap();
    // A live holder (this test's process) on another host: never taken over.
    let lock = serde_json::json!({
        "id": "lock-1", "holder": "someone@elsewhere", "host": "elsewhere",
        "pid": std::process::id(), "created": "2026-11-25T16:00:00Z",
        "operation": "apply", "a3ctl_version": "0.1.0",
    });
    std::fs::write(cx.path("state/sandbox/world.json.lock"), lock.to_string()).unwrap();
    let run = Run::from(
        sandbox_command(&cx, &["sandbox", "serve", "--port", "0"])
            .output()
            .await
            .unwrap(),
    )
    .expect(1);
    assert!(
        run.stderr.contains(&format!(
            "error: The sandbox is in use by `a3ctl apply` (pid {}, since 2026-11-25T16:00:00Z)",
            std::process::id()
        )),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("wait for it to finish"),
        "{}",
        run.stderr
    );
    assert!(
        !cx.path("state/sandbox/world.json").exists(),
        "nothing served"
    );
}
