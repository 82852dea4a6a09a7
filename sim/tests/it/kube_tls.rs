//! The per-cluster Kubernetes API server: TLS verified against the cluster's own CA, bearer token
//! required (the cluster's own static token, or a "Google" one), and 503 until the cluster is ready.

use a3ctl_sim::{SimConfig, kube};

fn client(ca_pem: &str) -> reqwest::Client {
    reqwest::Client::builder()
        .tls_built_in_root_certs(false)
        .add_root_certificate(reqwest::Certificate::from_pem(ca_pem.as_bytes()).unwrap())
        .build()
        .unwrap()
}

#[tokio::test]
async fn api_server_verifies_with_cluster_ca_and_requires_a_token() {
    let sim = a3ctl_sim::start(SimConfig::default()).await.unwrap();
    let key = "projects/p/locations/us-central1/clusters/c1";
    let spec = kube::ClusterSpec {
        key: key.into(),
        name: "c1".into(),
        location: "us-central1".into(),
        version: "1.32.4-gke.1767000".into(),
        multi_networking: true,
        beta_apis: vec![],
    };
    let shared = sim.shared.clone();
    let provisioned = sim
        .shared
        .with_world(|w, _| kube::provision(&shared, w, spec))
        .unwrap();
    let url = format!("https://{}/version", provisioned.endpoint);
    let http = client(&provisioned.ca_pem);

    let not_ready = http.get(&url).bearer_auth("t").send().await.unwrap();
    assert_eq!(not_ready.status(), 503);

    sim.shared.with_world(|w, _| w.kube.set_ready(key, true));
    let unauthenticated = http.get(&url).send().await.unwrap();
    assert_eq!(unauthenticated.status(), 401);
    let body: serde_json::Value = unauthenticated.json().await.unwrap();
    assert_eq!(body["kind"], "Status");
    assert_eq!(body["reason"], "Unauthorized");

    let ok = http.get(&url).bearer_auth("t").send().await.unwrap();
    assert_eq!(ok.status(), 200);
    let body: serde_json::Value = ok.json().await.unwrap();
    assert_eq!(body["gitVersion"], "v1.32.4-gke.1767000");

    // Another cluster's CA does not verify this server.
    let other = a3ctl_sim::kube::tls::generate("other").unwrap();
    assert!(
        client(&other.ca_cert_pem)
            .get(&url)
            .bearer_auth("t")
            .send()
            .await
            .is_err()
    );
}

#[tokio::test]
async fn a_cluster_takes_its_own_static_token_and_a_strict_server_nothing_else() {
    let dir = tempfile::tempdir().unwrap();
    let world = dir.path().join("world.json");
    let sim = a3ctl_sim::start(SimConfig {
        kube_token: Some("google".into()),
        persist: Some(world.clone()),
        ..SimConfig::default()
    })
    .await
    .unwrap();
    let key = "projects/p/locations/us-central1/clusters/c1";
    let spec = kube::ClusterSpec {
        key: key.into(),
        name: "c1".into(),
        location: "us-central1".into(),
        version: "1.32.4-gke.1767000".into(),
        multi_networking: false,
        beta_apis: vec![],
    };
    let shared = sim.shared.clone();
    let provisioned = sim
        .shared
        .with_world(|w, _| kube::provision(&shared, w, spec))
        .unwrap();
    sim.shared.with_world(|w, _| w.kube.set_ready(key, true));
    sim.shared.persist_if_dirty();

    // What a kubeconfig gets, read from the saved world without the simulator's help.
    let access = kube::auth::access_from_file(&world, key).unwrap().unwrap();
    assert_eq!(access.endpoint, provisioned.endpoint);
    assert_eq!(access.ca_pem, provisioned.ca_pem);
    assert!(access.token.starts_with("a3sim-"), "{}", access.token);
    assert!(
        kube::auth::access_from_file(&world, "projects/p/locations/us-central1/clusters/none")
            .unwrap()
            .is_none()
    );
    assert!(
        !std::fs::read_to_string(&world)
            .unwrap()
            .contains(&access.token)
    );

    let url = format!("https://{}/api/v1/nodes", provisioned.endpoint);
    let http = client(&provisioned.ca_pem);
    for (token, status) in [
        (Some(access.token.as_str()), 200),
        (Some("google"), 200),
        (Some("wrong"), 401),
        (None, 401),
    ] {
        let mut request = http.get(&url);
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        let response = request.send().await.unwrap();
        assert_eq!(response.status(), status, "{token:?}");
    }

    // Another cluster's token is not this one's.
    let other = a3ctl_sim::kube::tls::generate("c1").unwrap();
    let foreign = kube::auth::cluster_token(&other, key);
    assert_ne!(foreign, access.token);
    let response = http.get(&url).bearer_auth(&foreign).send().await.unwrap();
    assert_eq!(response.status(), 401);
}
