//! Shared helpers of the Kubernetes API server tests: a simulator with one provisioned, ready
//! cluster, node specs, a reqwest client trusting the cluster CA, and kubectl runs isolated from
//! any user configuration (temp HOME, empty KUBECONFIG, explicit server/token/CA).

#![allow(dead_code)]

use a3ctl_sim::clock::SimTime;
use a3ctl_sim::kube::{self, NodeSpec};
use a3ctl_sim::latency::{LatencyProfile, Span};
use a3ctl_sim::{SimConfig, SimHandle};
use std::collections::BTreeMap;
use std::path::PathBuf;

pub const KEY: &str = "projects/p/locations/us-central1/clusters/c1";

pub struct Cluster {
    pub sim: SimHandle,
    pub endpoint: String,
    pub ca_pem: String,
    pub dir: tempfile::TempDir,
    pub ca_path: PathBuf,
}

/// A zero-latency profile with some Kubernetes delays set (simulated seconds).
pub fn latency(delays: &[(&str, f64)]) -> LatencyProfile {
    let mut profile = LatencyProfile::zero();
    for (key, secs) in delays {
        profile.spans.insert(key.to_string(), Span::Fixed(*secs));
    }
    profile
}

pub async fn start(latency: LatencyProfile, multi_networking: bool) -> Cluster {
    let config = SimConfig {
        latency,
        ..SimConfig::default()
    };
    let sim = a3ctl_sim::start(config).await.unwrap();
    let shared = sim.shared.clone();
    let spec = kube::ClusterSpec {
        key: KEY.into(),
        name: "c1".into(),
        location: "us-central1".into(),
        version: "1.32.4-gke.1767000".into(),
        multi_networking,
        beta_apis: vec![],
    };
    let provisioned = sim
        .shared
        .with_world(|w, _| kube::provision(&shared, w, spec))
        .unwrap();
    sim.shared.with_world(|w, _| w.kube.set_ready(KEY, true));
    let dir = tempfile::tempdir().unwrap();
    let ca_path = dir.path().join("ca.pem");
    std::fs::write(&ca_path, &provisioned.ca_pem).unwrap();
    std::fs::write(dir.path().join("kubeconfig"), "").unwrap();
    Cluster {
        sim,
        endpoint: provisioned.endpoint,
        ca_pem: provisioned.ca_pem,
        dir,
        ca_path,
    }
}

/// A node as GKE would describe it.
pub fn node(name: &str, pool: &str, gpus: u32, managed_driver: bool) -> NodeSpec {
    let mut labels = BTreeMap::new();
    labels.insert(
        "cloud.google.com/gke-nodepool".to_string(),
        pool.to_string(),
    );
    let (machine_type, cpu, memory, taints) = if gpus > 0 {
        labels.insert(
            "cloud.google.com/gke-accelerator".into(),
            "nvidia-h100-mega-80gb".into(),
        );
        (
            "a3-megagpu-8g",
            "208",
            "1872Gi",
            vec![(
                "nvidia.com/gpu".to_string(),
                "present".to_string(),
                "NoSchedule".to_string(),
            )],
        )
    } else {
        ("e2-standard-8", "8", "32Gi", vec![])
    };
    NodeSpec {
        name: name.into(),
        pool: pool.into(),
        machine_type: machine_type.into(),
        zone: "us-central1-a".into(),
        labels,
        taints,
        gpus,
        managed_driver,
        cpu: cpu.into(),
        memory: memory.into(),
        version: String::new(),
        unschedulable: false,
        internal_ip: String::new(),
        nics: vec![],
        managed_rdma_nics: 0,
    }
}

impl Cluster {
    pub fn set_pool(&self, pool: &str, nodes: Vec<NodeSpec>) {
        self.sim.shared.with_world(|w, cx| {
            let now: SimTime = cx.now;
            w.kube.set_pool_nodes(KEY, pool, nodes, now)
        });
    }

    pub fn url(&self, path: &str) -> String {
        format!("https://{}{path}", self.endpoint)
    }

    pub fn http(&self) -> reqwest::Client {
        reqwest::Client::builder()
            .tls_built_in_root_certs(false)
            .add_root_certificate(reqwest::Certificate::from_pem(self.ca_pem.as_bytes()).unwrap())
            .build()
            .unwrap()
    }

    /// Runs kubectl against the cluster; returns (success, stdout, stderr).
    pub async fn kubectl(&self, args: &[&str]) -> (bool, String, String) {
        self.kubectl_stdin(args, None).await
    }

    pub async fn kubectl_stdin(
        &self,
        args: &[&str],
        stdin: Option<&str>,
    ) -> (bool, String, String) {
        let (code, out, err) = self.kubectl_code(args, stdin).await;
        (code == Some(0), out, err)
    }

    /// Runs kubectl; returns (exit code, stdout, stderr).
    pub async fn kubectl_code(
        &self,
        args: &[&str],
        stdin: Option<&str>,
    ) -> (Option<i32>, String, String) {
        use tokio::io::AsyncWriteExt;
        let mut command = tokio::process::Command::new("kubectl");
        command
            .args([
                "--server",
                &format!("https://{}", self.endpoint),
                "--token",
                "t",
                "--certificate-authority",
                self.ca_path.to_str().unwrap(),
            ])
            .args(args)
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("HOME", self.dir.path())
            .env("KUBECONFIG", self.dir.path().join("kubeconfig"))
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        let mut child = command.spawn().expect("kubectl is installed");
        let mut input = child.stdin.take().unwrap();
        if let Some(text) = stdin {
            input.write_all(text.as_bytes()).await.unwrap();
        }
        drop(input);
        let out = child.wait_with_output().await.unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }

    /// Runs kubectl and asserts success; returns stdout.
    pub async fn kubectl_ok(&self, args: &[&str]) -> String {
        let (ok, out, err) = self.kubectl(args).await;
        assert!(ok, "kubectl {args:?} failed:\n{out}\n{err}");
        out
    }
}
