//! Shared by the gcloud-driven simulator tests: gcloud with an isolated configuration pointed at
//! an in-process simulator, and helpers for raw requests and Google error bodies.

#![allow(dead_code)]

use a3ctl_sim::{SimConfig, SimHandle};
use serde_json::Value;

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
            let output = tokio::process::Command::new("gcloud")
                .args(&args)
                .envs(env)
                .env("CLOUDSDK_CONFIG", &config)
                .env("CLOUDSDK_CORE_PROJECT", project)
                // `clusters create` writes a kubeconfig entry: keep it out of $HOME.
                .env("KUBECONFIG", config.join("kubeconfig"))
                .output()
                .await
                .expect("gcloud runs");
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
