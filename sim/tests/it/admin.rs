//! The simulator's own surface: the admin endpoint, transient fault injection, persistence across
//! restarts, and the standalone binary.

use a3ctl_sim::faults::{FaultConfig, TransientFaults, TransientKind};
use a3ctl_sim::{SimConfig, kube};
use serde_json::{Value, json};

async fn post_json(url: &str, body: Value) -> reqwest::Response {
    reqwest::Client::new()
        .post(url)
        .json(&body)
        .send()
        .await
        .unwrap()
}

async fn create_network(base: &str, name: &str) -> reqwest::Response {
    post_json(
        &format!("{base}/compute/v1/projects/p/global/networks"),
        json!({"name": name, "autoCreateSubnetworks": false, "mtu": 8244}),
    )
    .await
}

#[tokio::test]
async fn admin_endpoint_reports_inventory_requests_and_moves_the_clock() {
    let sim = a3ctl_sim::start(SimConfig::default()).await.unwrap();
    let base = sim.base_url().to_string();
    assert_eq!(create_network(&base, "n1").await.status(), 200);
    let network = reqwest::Client::new()
        .get(format!("{base}/compute/v1/projects/p/global/networks/n1"))
        .bearer_auth("secret-token-value")
        .send()
        .await
        .unwrap();
    assert_eq!(network.status(), 200);

    let inventory: Value = reqwest::get(format!("{base}/_sim/inventory"))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let text = inventory["compute"].to_string();
    assert!(text.contains("projects/p/global/networks/n1"), "{text}");

    let requests: Value = reqwest::get(format!("{base}/_sim/requests"))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(
        requests["counts"]["POST /compute/v1/projects/{}/global/networks"],
        1
    );
    assert_eq!(
        requests["counts"]["GET /compute/v1/projects/{}/global/networks/{}"],
        1
    );
    assert!(
        !requests.to_string().contains("secret-token-value"),
        "tokens must never be logged"
    );

    let before: Value = reqwest::get(format!("{base}/_sim/clock"))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let advanced: Value = reqwest::Client::new()
        .post(format!("{base}/_sim/clock/advance?seconds=90"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(
        advanced["now_ms"].as_u64().unwrap(),
        before["now_ms"].as_u64().unwrap() + 90_000
    );
    let bad = reqwest::Client::new()
        .post(format!("{base}/_sim/clock/advance?seconds=-1"))
        .send()
        .await
        .unwrap();
    assert_eq!(bad.status(), 400);

    let cleared = reqwest::Client::new()
        .delete(format!("{base}/_sim/requests"))
        .send()
        .await
        .unwrap();
    assert_eq!(cleared.status(), 204);
    assert_eq!(sim.request_total(), 0);
}

#[tokio::test]
async fn transient_faults_hit_only_the_configured_api() {
    let sim = a3ctl_sim::start(SimConfig::default()).await.unwrap();
    let base = sim.base_url().to_string();
    let with = |kind| {
        let mut config = FaultConfig::default();
        config.transient.insert(
            "compute".into(),
            TransientFaults {
                rate: 1.0,
                kinds: vec![kind],
                methods: vec![],
            },
        );
        config
    };

    sim.set_faults(with(TransientKind::RateLimit));
    let limited = create_network(&base, "n1").await;
    assert_eq!(limited.status(), 429);
    let body: Value = limited.json().await.unwrap();
    assert_eq!(body["error"]["status"], "RESOURCE_EXHAUSTED");
    assert_eq!(body["error"]["errors"][0]["reason"], "rateLimitExceeded");
    // Other APIs are untouched.
    let buckets = reqwest::get(format!("{base}/storage/v1/b?project=p"))
        .await
        .unwrap();
    assert_eq!(buckets.status(), 200);

    sim.set_faults(with(TransientKind::Unavailable));
    let unavailable = create_network(&base, "n1").await;
    assert_eq!(unavailable.status(), 503);
    let body: Value = unavailable.json().await.unwrap();
    assert_eq!(body["error"]["status"], "UNAVAILABLE");

    // A dropped connection after the request was processed: the client sees no response, but the
    // network exists.
    sim.set_faults(with(TransientKind::DropAfter));
    assert!(
        reqwest::Client::new()
            .post(format!("{base}/compute/v1/projects/p/global/networks"))
            .json(&json!({"name": "n2", "autoCreateSubnetworks": false}))
            .send()
            .await
            .is_err()
    );
    sim.set_faults(FaultConfig::default());
    let get = reqwest::get(format!("{base}/compute/v1/projects/p/global/networks/n2"))
        .await
        .unwrap();
    assert_eq!(get.status(), 200);
    // Nothing was processed for the requests refused before the handler ran.
    let n1 = reqwest::get(format!("{base}/compute/v1/projects/p/global/networks/n1"))
        .await
        .unwrap();
    assert_eq!(n1.status(), 404);

    // Faults can also be set through the admin endpoint; bad configurations are refused.
    let put = reqwest::Client::new()
        .put(format!("{base}/_sim/faults"))
        .json(&json!({"transient": {"compute": {"rate": 2.0}}}))
        .send()
        .await
        .unwrap();
    assert_eq!(put.status(), 400);
}

#[tokio::test]
async fn a_persisted_world_survives_a_restart_with_its_api_servers() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("world.json");
    let config = SimConfig {
        persist: Some(path.clone()),
        ..SimConfig::default()
    };
    let key = "projects/p/locations/us-central1/clusters/c1";
    let (endpoint, ca_pem) = {
        let sim = a3ctl_sim::start(config.clone()).await.unwrap();
        assert_eq!(create_network(sim.base_url(), "kept").await.status(), 200);
        let shared = sim.shared.clone();
        let spec = kube::ClusterSpec {
            key: key.into(),
            name: "c1".into(),
            location: "us-central1".into(),
            version: "1.33.5-gke.1080000".into(),
            multi_networking: false,
            beta_apis: vec![],
        };
        let provisioned = sim
            .shared
            .with_world(|w, _| kube::provision(&shared, w, spec))
            .unwrap();
        sim.shared.with_world(|w, _| w.kube.set_ready(key, true));
        (provisioned.endpoint, provisioned.ca_pem)
    };
    assert!(path.exists());
    let sim = a3ctl_sim::start(config).await.unwrap();
    let network = reqwest::get(format!(
        "{}/compute/v1/projects/p/global/networks/kept",
        sim.base_url()
    ))
    .await
    .unwrap();
    assert_eq!(network.status(), 200);
    let restored = sim
        .shared
        .read_world(|w, _| w.kube.cluster(key).map(|c| c.endpoint.clone()))
        .unwrap();
    let client = reqwest::Client::builder()
        .tls_built_in_root_certs(false)
        .add_root_certificate(reqwest::Certificate::from_pem(ca_pem.as_bytes()).unwrap())
        .build()
        .unwrap();
    let version = client
        .get(format!("https://{restored}/version"))
        .bearer_auth("t")
        .send()
        .await
        .unwrap();
    assert_eq!(
        version.status(),
        200,
        "the restored server keeps the cluster's CA"
    );
    let _ = endpoint;
}

#[test]
fn binary_prints_its_url_and_the_client_environment() {
    use std::io::{BufRead, BufReader};
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_a3ctl-sim"))
        .args(["--port", "0", "--time-scale", "0.001"])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let first = lines.next().unwrap().unwrap();
    let url = first
        .strip_prefix("a3ctl-sim listening on ")
        .expect(&first)
        .to_string();
    let rest: Vec<String> = lines.take(24).map(|l| l.unwrap()).collect();
    let _ = child.kill();
    let _ = child.wait();
    let text = rest.join("\n");
    assert!(
        text.contains(&format!(
            "export CLOUDSDK_API_ENDPOINT_OVERRIDES_CONTAINER={url}/container/"
        )),
        "{text}"
    );
    assert!(
        text.contains("export CLOUDSDK_AUTH_DISABLE_CREDENTIALS=true"),
        "{text}"
    );
    assert!(
        text.contains(&format!("export A3CTL_COMPUTE_ENDPOINT={url}")),
        "{text}"
    );

    let bad = std::process::Command::new(env!("CARGO_BIN_EXE_a3ctl-sim"))
        .args(["--port", "0", "--latency", "speedy"])
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("unknown latency preset `speedy`"));
}

#[tokio::test]
async fn service_usage_reports_simulated_apis_enabled() {
    let sim = a3ctl_sim::start(SimConfig::default()).await.unwrap();
    let get = |service: &str| {
        format!(
            "{}/serviceusage/v1/projects/p/services/{service}",
            sim.base_url()
        )
    };
    let container: Value = reqwest::get(get("container.googleapis.com"))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(container["state"], "ENABLED");
    assert!(
        container["name"]
            .as_str()
            .unwrap()
            .ends_with("/services/container.googleapis.com")
    );
    let other: Value = reqwest::get(get("bigquery.googleapis.com"))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(other["state"], "DISABLED");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_clients_get_the_same_faults_however_their_requests_interleave() {
    // Eight clients each poll their own resource six times; one run sequential, one all at once
    // in reverse order. Each path gets the same answers in both runs.
    let mut faults = FaultConfig {
        seed: Some(5),
        ..FaultConfig::default()
    };
    faults.transient.insert(
        "compute".into(),
        TransientFaults {
            rate: 0.5,
            kinds: vec![
                TransientKind::RateLimit,
                TransientKind::Unavailable,
                TransientKind::ServerError,
            ],
            methods: vec![],
        },
    );
    let paths: Vec<String> = (0..8)
        .flat_map(|client| {
            (0..6).map(move |_| format!("/compute/v1/projects/p/global/networks/n{client}"))
        })
        .collect();
    let run = |concurrent: bool| {
        let faults = faults.clone();
        let paths = paths.clone();
        async move {
            let sim = a3ctl_sim::start(SimConfig {
                faults,
                ..SimConfig::default()
            })
            .await
            .unwrap();
            let base = sim.base_url().to_string();
            let get = |path: String| {
                let url = format!("{base}{path}");
                async move { reqwest::get(url).await.unwrap().status().as_u16() }
            };
            if concurrent {
                futures_util::future::join_all(paths.iter().rev().cloned().map(get)).await;
            } else {
                for path in &paths {
                    get(path.clone()).await;
                }
            }
            let log: Value = reqwest::get(format!("{base}/_sim/requests"))
                .await
                .unwrap()
                .json()
                .await
                .unwrap();
            let mut per_path: std::collections::BTreeMap<String, Vec<(u64, String)>> =
                Default::default();
            for entry in log["entries"].as_array().unwrap() {
                per_path
                    .entry(entry["path"].as_str().unwrap().to_string())
                    .or_default()
                    .push((
                        entry["status"].as_u64().unwrap(),
                        entry["fault"].as_str().unwrap_or("").to_string(),
                    ));
            }
            // The log is in completion order; identical requests racing may finish in either
            // order, so compare each path's answers as a multiset.
            for answers in per_path.values_mut() {
                answers.sort();
            }
            per_path
        }
    };
    let sequential = run(false).await;
    let concurrent = run(true).await;
    assert_eq!(sequential, concurrent);
    let faulted = sequential
        .values()
        .flatten()
        .filter(|(_, fault)| !fault.is_empty())
        .count();
    assert!((8..=40).contains(&faulted), "{faulted} of 48");
}
