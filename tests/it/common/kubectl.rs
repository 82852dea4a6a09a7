//! kubectl pointed at one simulated cluster (its endpoint and CA taken from the simulator's GKE
//! API): explicit server, CA and token, no user config.

use super::TestContext;
use base64::Engine as _;
use serde_json::Value;

pub const P: &str = "my-project";
pub const R: &str = "us-central1";

pub struct Kubectl {
    pub server: String,
    pub dir: tempfile::TempDir,
}

impl Kubectl {
    pub async fn for_cluster(cx: &TestContext, cluster: &str) -> Kubectl {
        let url = format!(
            "{}/container/v1/projects/{P}/locations/{R}/clusters/{cluster}",
            cx.sim.base_url()
        );
        let live: Value = reqwest::get(&url).await.unwrap().json().await.unwrap();
        let endpoint = live["endpoint"].as_str().expect("endpoint").to_string();
        let ca = base64::engine::general_purpose::STANDARD
            .decode(
                live["masterAuth"]["clusterCaCertificate"]
                    .as_str()
                    .expect("CA"),
            )
            .unwrap();
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("ca.pem"), ca).unwrap();
        std::fs::write(dir.path().join("kubeconfig"), "").unwrap();
        Kubectl {
            server: format!("https://{endpoint}"),
            dir,
        }
    }

    /// Runs kubectl; returns (success, stdout, stderr).
    pub async fn run(&self, args: &[&str]) -> (bool, String, String) {
        let ca = self.dir.path().join("ca.pem");
        let out = tokio::process::Command::new("kubectl")
            .args(["--server", &self.server, "--token", "t"])
            .args(["--certificate-authority", ca.to_str().unwrap()])
            .args(args)
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("HOME", self.dir.path())
            .env("KUBECONFIG", self.dir.path().join("kubeconfig"))
            .stdin(std::process::Stdio::null())
            .output()
            .await
            .expect("kubectl is installed");
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }

    /// Runs kubectl and asserts it succeeds; returns stdout.
    pub async fn ok(&self, args: &[&str]) -> String {
        let (ok, out, err) = self.run(args).await;
        assert!(ok, "kubectl {args:?} failed:\n{out}\n{err}");
        out
    }

    /// `kubectl get ARGS -o json`, asserted to succeed: the list's items.
    pub async fn items(&self, args: &[&str]) -> Vec<Value> {
        let mut all = vec!["get"];
        all.extend_from_slice(args);
        all.extend_from_slice(&["-o", "json"]);
        let list: Value = serde_json::from_str(&self.ok(&all).await).unwrap();
        list["items"].as_array().cloned().unwrap_or_default()
    }

    /// The sorted names of `kubectl get ARGS`.
    pub async fn names(&self, args: &[&str]) -> Vec<String> {
        let mut names: Vec<String> = self
            .items(args)
            .await
            .iter()
            .map(|o| o["metadata"]["name"].as_str().unwrap_or("").to_string())
            .collect();
        names.sort();
        names
    }
}
