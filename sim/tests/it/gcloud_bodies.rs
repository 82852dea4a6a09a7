//! Request bodies checked against the discovery documents (issue 27): every served method of
//! Compute, GKE, Filestore, Artifact Registry and Cloud Storage refuses an unknown field with its
//! API's 400 before its handler runs, while what gcloud sends passes.

use crate::gcloud_support::{Gcloud, PROJECT, assert_error, send, start};
use serde_json::{Value, json};

/// The reason in `errors[]` each API gives a refused body.
fn reason_of(id: &str) -> &'static str {
    match id.split('.').next() {
        Some("compute" | "storage") => "invalid",
        _ => "badRequest",
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_served_method_refuses_an_unknown_field_before_its_handler() {
    let sim = start().await;
    let client = reqwest::Client::new();
    let methods = a3ctl_sim::discovery::schema::checked_methods();
    // Creates, updates and verbs of all five APIs.
    assert!(methods.len() > 60, "{}", methods.len());
    for api in [
        "compute",
        "container",
        "file",
        "artifactregistry",
        "storage",
    ] {
        assert!(
            methods.iter().any(|(id, _, _)| id.starts_with(api)),
            "{api}"
        );
    }
    for (id, verb, template) in &methods {
        let path = template.replace("{}", "x");
        let method = reqwest::Method::from_bytes(verb.as_bytes()).expect("verb");
        let (status, body) = send(
            client
                .request(method, format!("{}{path}", sim.base_url()))
                .json(&json!({"a3ctlNoSuchField": 1})),
        )
        .await;
        assert_eq!(status, 400, "{id}: {body}");
        let message = body["error"]["message"].as_str().unwrap_or_default();
        assert!(
            message.starts_with("Invalid JSON payload received. Unknown name \"a3ctlNoSuchField\"")
                && message.ends_with(": Cannot find field."),
            "{id}: {body}"
        );
        assert_eq!(body["error"]["errors"][0]["reason"], reason_of(id), "{id}");
        assert_eq!(
            body["error"]["details"][0]["@type"], "type.googleapis.com/google.rpc.BadRequest",
            "{id}"
        );
    }
    // Nothing reached a handler: every answer was the refusal.
    let statuses: Vec<u16> = sim
        .shared
        .log
        .lock()
        .entries
        .iter()
        .map(|e| e.status)
        .collect();
    assert_eq!(statuses.len(), methods.len());
    assert!(statuses.iter().all(|s| *s == 400));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gcloud_bodies_pass_and_a_misspelled_field_is_refused_where_it_is() {
    let sim = start().await;
    let gcloud = Gcloud::new(&sim);
    gcloud
        .ok(&[
            "compute",
            "networks",
            "create",
            "bodies",
            "--subnet-mode=custom",
        ])
        .await;
    gcloud
        .ok(&[
            "compute",
            "networks",
            "subnets",
            "create",
            "bodies-sub",
            "--network=bodies",
            "--region=us-central1",
            "--range=10.1.0.0/24",
        ])
        .await;
    gcloud
        .ok(&["storage", "buckets", "create", "gs://sim-bodies-bucket"])
        .await;
    let compute = |path: &str| format!("{}/compute/v1/projects/{PROJECT}/{path}", sim.base_url());
    let client = reqwest::Client::new();
    // A misspelled field of a subnetwork, and a range given as a list.
    let typo = send(
        client
            .post(compute("regions/us-central1/subnetworks"))
            .json(&json!({
                "name": "typo", "network": "global/networks/bodies", "ipCidrRang": "10.2.0.0/24",
            })),
    )
    .await;
    assert_error(
        &typo,
        400,
        "INVALID_ARGUMENT",
        "Invalid JSON payload received. Unknown name \"ipCidrRang\" at 'subnetwork_resource': Cannot find field.",
    );
    let listed = send(client.post(compute("regions/us-central1/subnetworks")).json(&json!({
        "name": "listed", "network": "global/networks/bodies", "ipCidrRange": ["10.2.0.0/24"],
    })))
    .await;
    assert_error(
        &listed,
        400,
        "INVALID_ARGUMENT",
        "Invalid JSON payload received. Unknown name \"ipCidrRange\" at 'subnetwork_resource': Proto field is not repeating, cannot start list.",
    );
    // GKE: a misspelled field deep in the cluster, and a wrong type, both reported.
    let gke = send(
        client
            .post(format!(
                "{}/container/v1/projects/{PROJECT}/locations/us-central1/clusters",
                sim.base_url()
            ))
            .json(&json!({"cluster": {
                "name": "c", "initialNodeCount": "three", "network": "bodies",
                "nodePools": [{"name": "p", "config": {"machineTyp": "e2-standard-4"}}],
            }})),
    )
    .await;
    let expected = [
        (
            "cluster.initial_node_count",
            "Invalid value at 'cluster.initial_node_count' (TYPE_INT32), \"three\"",
        ),
        (
            "cluster.node_pools[0].config",
            "Invalid JSON payload received. Unknown name \"machineTyp\" at 'cluster.node_pools[0].config': Cannot find field.",
        ),
    ];
    assert_error(
        &gke,
        400,
        "INVALID_ARGUMENT",
        &expected.map(|(_, text)| text).join("\n"),
    );
    let violations: Vec<(String, String)> = gke.1["error"]["details"][0]["fieldViolations"]
        .as_array()
        .expect("violations")
        .iter()
        .map(|v: &Value| {
            (
                v["field"].as_str().unwrap_or_default().to_string(),
                v["description"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect();
    assert_eq!(
        violations,
        expected
            .map(|(f, d)| (f.to_string(), d.to_string()))
            .to_vec()
    );
    // Only gcloud's resources exist.
    let subnets = gcloud
        .json(&[
            "compute",
            "networks",
            "subnets",
            "list",
            "--regions=us-central1",
        ])
        .await;
    let names: Vec<&str> = subnets
        .as_array()
        .expect("list")
        .iter()
        .filter_map(|s| s["name"].as_str())
        .collect();
    assert_eq!(names, ["bodies-sub"]);
    let clusters = gcloud.json(&["container", "clusters", "list"]).await;
    assert_eq!(clusters, json!([]));
}
