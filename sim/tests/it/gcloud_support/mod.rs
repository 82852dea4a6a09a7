//! Shared by the gcloud-driven simulator tests: gcloud with an isolated configuration pointed at
//! an in-process simulator, and helpers for raw requests and Google error bodies.

#![allow(dead_code)]

use a3ctl_sim::{SimConfig, SimHandle};
use serde_json::Value;
use std::io::{BufRead, BufReader, Write};
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::OnceLock;

pub const PROJECT: &str = "sim-proj";

pub struct Gcloud {
    env: Vec<(String, String)>,
    config: tempfile::TempDir,
    project: String,
}

impl Gcloud {
    pub fn new(handle: &SimHandle) -> Gcloud {
        Gcloud::in_project(handle, PROJECT)
    }

    /// gcloud with `project` as its default project.
    pub fn in_project(handle: &SimHandle, project: &str) -> Gcloud {
        Gcloud {
            env: handle.gcloud_env(),
            config: tempfile::tempdir().expect("tempdir"),
            project: project.to_string(),
        }
    }

    /// Runs gcloud; returns (success, stdout, stderr).
    pub fn run(
        &self,
        args: &[&str],
    ) -> impl std::future::Future<Output = (bool, String, String)> + use<> {
        let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
        let env = self.env.clone();
        let config = self.config.path().to_path_buf();
        let project = self.project.clone();
        async move {
            let mut env = env;
            env.push(("CLOUDSDK_CONFIG".into(), config.display().to_string()));
            env.push(("CLOUDSDK_CORE_PROJECT".into(), project));
            // `clusters create` writes a kubeconfig entry: keep it out of $HOME.
            env.push((
                "KUBECONFIG".into(),
                config.join("kubeconfig").display().to_string(),
            ));
            let output = gcloud_output(args, env).await;
            (
                output.status.success(),
                String::from_utf8_lossy(&output.stdout).into_owned(),
                String::from_utf8_lossy(&output.stderr).into_owned(),
            )
        }
    }

    pub async fn ok(&self, args: &[&str]) -> String {
        let (ok, out, err) = self.run(args).await;
        assert!(ok, "gcloud {args:?} failed:\n{out}\n{err}");
        out
    }

    /// Runs gcloud expecting it to fail; returns its stderr.
    pub async fn fails(&self, args: &[&str]) -> String {
        let (ok, out, err) = self.run(args).await;
        assert!(!ok, "gcloud {args:?} succeeded:\n{out}");
        err
    }

    pub async fn json(&self, args: &[&str]) -> Value {
        let mut all: Vec<&str> = args.to_vec();
        all.push("--format=json");
        let out = self.ok(&all).await;
        serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"))
    }
}

pub async fn start() -> SimHandle {
    a3ctl_sim::start(SimConfig::default())
        .await
        .expect("simulator starts")
}

pub async fn send(request: reqwest::RequestBuilder) -> (u16, Value) {
    let response = request.send().await.expect("request");
    let status = response.status().as_u16();
    let text = response.text().await.unwrap_or_default();
    (status, serde_json::from_str(&text).unwrap_or(Value::Null))
}

/// A REST POST that must be answered 200 (operations finish at the next read).
pub async fn post_ok(sim: &SimHandle, path: &str, body: Value) -> Value {
    let request = reqwest::Client::new()
        .post(format!("{}{path}", sim.base_url()))
        .json(&body);
    let (status, answer) = send(request).await;
    assert_eq!(status, 200, "{path}: {answer}");
    answer
}

/// The `main` network of `project` and its `main-sub` subnet (10.0.0.0/20) in `region`, by
/// REST: where the tests' clusters live.
pub async fn main_network(sim: &SimHandle, project: &str, region: &str) {
    let compute = |path: &str| format!("/compute/v1/projects/{project}/{path}");
    post_ok(
        sim,
        &compute("global/networks"),
        serde_json::json!({"name": "main", "autoCreateSubnetworks": false}),
    )
    .await;
    post_ok(
        sim,
        &compute(&format!("regions/{region}/subnetworks")),
        serde_json::json!({"name": "main-sub", "network": "global/networks/main", "ipCidrRange": "10.0.0.0/20"}),
    )
    .await;
}

pub fn assert_error(got: &(u16, Value), code: u16, status: &str, message: &str) {
    let (http_status, body) = got;
    assert_eq!(*http_status, code, "{body}");
    assert_eq!(body["error"]["code"], code, "{body}");
    assert_eq!(body["error"]["status"], status, "{body}");
    assert_eq!(body["error"]["message"], message, "{body}");
}

/// Runs the installed gcloud with `args`, this process's environment plus `env`, and stdin closed,
/// as `Command::new("gcloud").args(args).envs(env).output()` does, through a fork server
/// (`forkserver.py`): a Python that imported gcloud once forks each command, which then runs
/// `gcloud.main()` as the `gcloud` script would. Each command costs about 0.15 s of CPU instead of
/// 0.85 s (the rest is gcloud importing its modules). `A3CTL_TEST_GCLOUD_FORKSERVER=0`, or an SDK
/// the server cannot start from, runs a plain `gcloud` process instead.
pub async fn gcloud_output(args: Vec<String>, env: Vec<(String, String)>) -> Output {
    tokio::task::spawn_blocking(move || match fork_server() {
        Some(server) => server.run(&args, &env),
        None => Command::new("gcloud")
            .args(&args)
            .envs(env)
            .stdin(Stdio::null())
            .output()
            .expect("gcloud runs"),
    })
    .await
    .expect("gcloud's task")
}

struct ForkServer {
    /// What the `gcloud` script exports before it starts Python.
    script_env: Vec<(String, String)>,
    socket: PathBuf,
    dir: PathBuf,
    /// Holds the server's stdin open: it exits when this process does.
    _child: Child,
}

fn fork_server() -> Option<&'static ForkServer> {
    static SERVER: OnceLock<Option<ForkServer>> = OnceLock::new();
    SERVER
        .get_or_init(|| {
            if std::env::var("A3CTL_TEST_GCLOUD_FORKSERVER").as_deref() == Ok("0") {
                return None;
            }
            ForkServer::start()
                .map_err(|e| eprintln!("gcloud fork server: {e}; running gcloud processes"))
                .ok()
        })
        .as_ref()
}

impl ForkServer {
    fn start() -> Result<ForkServer, String> {
        // The SDK of the `gcloud` on PATH: SDK_ROOT/bin/gcloud.
        let script = std::env::var_os("PATH")
            .and_then(|paths| {
                std::env::split_paths(&paths)
                    .map(|dir| dir.join("gcloud"))
                    .find(|p| p.is_file())
            })
            .ok_or("no gcloud on PATH")?;
        let script = script.canonicalize().map_err(|e| e.to_string())?;
        let root = script
            .parent()
            .and_then(Path::parent)
            .ok_or("gcloud is not in an SDK's bin/")?
            .to_path_buf();
        if !root.join("lib/gcloud.py").is_file() {
            return Err(format!("{} has no lib/gcloud.py", root.display()));
        }
        // The interpreter the script picks: CLOUDSDK_PYTHON, else the bundled Python (with site
        // packages), else python3 (with -S).
        let bundled = root.join("platform/bundledpythonunix/bin/python3");
        let (python, site) = match std::env::var("CLOUDSDK_PYTHON") {
            Ok(python) => (
                python,
                std::env::var("CLOUDSDK_PYTHON_SITEPACKAGES").is_ok(),
            ),
            Err(_) if bundled.is_file() => (bundled.display().to_string(), true),
            Err(_) => ("python3".to_string(), false),
        };
        let mut script_env: Vec<(String, String)> = vec![
            ("CLOUDSDK_ROOT_DIR".into(), root.display().to_string()),
            ("CLOUDSDK_PYTHON".into(), python.clone()),
            ("CLOUDSDK_GSUTIL_PYTHON".into(), python.clone()),
            ("CLOUDSDK_BQ_PYTHON".into(), python.clone()),
            ("CLOUDSDK_ENCODING".into(), "UTF-8".into()),
            ("PYTHONIOENCODING".into(), "UTF-8".into()),
        ];
        let mut python_args = Vec::new();
        if site {
            script_env.push(("CLOUDSDK_PYTHON_SITEPACKAGES".into(), "1".into()));
            script_env.push(("CLOUDSDK_PYTHON_ARGS".into(), String::new()));
        } else {
            script_env.push(("CLOUDSDK_PYTHON_ARGS".into(), "-S".into()));
            python_args.push("-S".to_string());
        }
        let dir = tempfile::Builder::new()
            .prefix("gcloud-fork")
            .tempdir()
            .map_err(|e| e.to_string())?
            .keep();
        let program = dir.join("forkserver.py");
        std::fs::write(&program, include_str!("forkserver.py")).map_err(|e| e.to_string())?;
        let socket = dir.join("socket");
        // Its own gcloud configuration while it imports (a command's comes with the command).
        let home = dir.join("config");
        let mut child = Command::new(&python)
            .args(&python_args)
            .arg(&program)
            .arg(&root)
            .arg(&socket)
            .env_remove("PYTHONHOME")
            .envs(script_env.iter().cloned())
            .env("CLOUDSDK_CONFIG", &home)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|e| format!("{python}: {e}"))?;
        let mut line = String::new();
        BufReader::new(child.stdout.take().expect("stdout"))
            .read_line(&mut line)
            .map_err(|e| e.to_string())?;
        if line.trim() != "ready" {
            let _ = child.kill();
            return Err("it did not start".into());
        }
        Ok(ForkServer {
            script_env,
            socket,
            dir,
            _child: child,
        })
    }

    fn run(&self, args: &[String], env: &[(String, String)]) -> Output {
        let mut all: Vec<(String, String)> = std::env::vars()
            .filter(|(k, _)| k != "PYTHONHOME")
            .collect();
        all.extend(self.script_env.iter().cloned());
        all.extend(env.iter().cloned());
        // Later values win, as with `Command::envs`.
        let env: serde_json::Map<String, Value> = all
            .into_iter()
            .map(|(k, v)| (k, Value::String(v)))
            .collect();
        let files = tempfile::Builder::new()
            .prefix("gcloud-run")
            .tempdir_in(&self.dir)
            .expect("temp dir");
        let stdout = files.path().join("stdout");
        let stderr = files.path().join("stderr");
        let request = serde_json::json!({
            "args": args,
            "env": env,
            "cwd": std::env::current_dir().expect("working directory"),
            "stdout": stdout,
            "stderr": stderr,
        });
        let mut conn =
            std::os::unix::net::UnixStream::connect(&self.socket).expect("the gcloud fork server");
        conn.write_all(format!("{request}\n").as_bytes())
            .expect("request sent");
        let mut code = String::new();
        BufReader::new(&conn)
            .read_line(&mut code)
            .expect("gcloud's exit code");
        let code: i32 = code.trim().parse().unwrap_or_else(|_| {
            panic!(
                "gcloud {args:?} ended without an exit code:\n{}",
                std::fs::read_to_string(&stderr).unwrap_or_default()
            )
        });
        Output {
            status: std::process::ExitStatus::from_raw(code << 8),
            stdout: std::fs::read(&stdout).unwrap_or_default(),
            stderr: std::fs::read(&stderr).unwrap_or_default(),
        }
    }
}
