//! The simulator's answers fit the discovery documents' response schemas (issue 27): after a
//! sandbox apply of the A3 Mega blueprint, every list and get of what it made — and the
//! operations its creates started — is checked against the schema of its method, as Google's
//! client libraries would read it.

use crate::common::TestContext;
use a3ctl_sim::discovery::{method_for, schema::response_violations};
use serde_json::Value;

const P: &str = "my-project";
const R: &str = "us-central1";
const Z: &str = "us-central1-a";

/// GETs `path` and returns the method it reached with its answer.
async fn read(cx: &TestContext, path: &str) -> (&'static str, Value) {
    let url = format!("{}{path}", cx.sim.base_url());
    let response = reqwest::get(&url).await.expect("GET");
    assert_eq!(response.status(), 200, "{path}");
    let id = method_for("GET", path.split('?').next().unwrap_or(path))
        .unwrap_or_else(|| panic!("{path} is no method of the discovery documents"));
    (id, response.json().await.expect("JSON"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a3_mega_world_answers_fit_the_response_schemas() {
    let cx = TestContext::new().await;
    cx.unprotect("blueprints/a3-mega.toml");
    cx.run(&["apply", "blueprints/a3-mega.toml", "--auto-approve"])
        .await
        .expect(0);
    let compute = |path: &str| format!("/compute/v1/projects/{P}/{path}");
    let mut lists: Vec<(String, &str)> = vec![
        (compute("global/networks"), "items"),
        (compute(&format!("regions/{R}/subnetworks")), "items"),
        (compute("global/firewalls"), "items"),
        (compute(&format!("regions/{R}/routers")), "items"),
        (compute(&format!("regions/{R}/resourcePolicies")), "items"),
        (compute(&format!("zones/{Z}/instances")), "items"),
        (
            compute(&format!("zones/{Z}/instanceGroupManagers")),
            "items",
        ),
        (compute(&format!("zones/{Z}/reservations")), "items"),
        (compute(&format!("zones/{Z}/machineTypes")), "items"),
        (compute("global/operations"), "items"),
        (compute(&format!("regions/{R}/operations")), "items"),
        (compute(&format!("zones/{Z}/operations")), "items"),
        (compute("regions"), "items"),
        (
            format!("/container/v1/projects/{P}/locations/-/clusters"),
            "clusters",
        ),
        (
            format!("/container/v1/projects/{P}/locations/{R}/operations"),
            "operations",
        ),
        (
            format!("/file/v1/projects/{P}/locations/-/instances"),
            "instances",
        ),
        (
            format!("/artifactregistry/v1/projects/{P}/locations/{R}/repositories"),
            "repositories",
        ),
        (format!("/storage/v1/b?project={P}"), "items"),
    ];
    lists.push((compute("aggregated/instances"), ""));
    lists.push((compute(""), ""));
    let mut checked = 0;
    let mut problems = Vec::new();
    for (path, key) in &lists {
        let path = path.trim_end_matches('/');
        let (id, list) = read(&cx, path).await;
        problems.extend(
            response_violations(id, &list)
                .into_iter()
                .map(|v| format!("{id}: {v}")),
        );
        checked += 1;
        // Each listed item, read by itself.
        let items = list[*key].as_array().cloned().unwrap_or_default();
        assert!(key.is_empty() || !items.is_empty(), "{path} lists nothing");
        for item in items.iter().take(3) {
            let name = item["name"].as_str().unwrap_or_default();
            let own = if path.starts_with("/compute") {
                let link = item["selfLink"].as_str().unwrap_or_default();
                match link.split_once("/compute/v1/") {
                    Some((_, rest)) => format!("/compute/v1/{rest}"),
                    None => continue,
                }
            } else if path.starts_with("/storage") {
                format!("/storage/v1/b/{name}")
            } else if path.starts_with("/container") && *key == "clusters" {
                let location = item["location"].as_str().unwrap_or_default();
                format!("/container/v1/projects/{P}/locations/{location}/clusters/{name}")
            } else if path.starts_with("/container") {
                continue;
            } else {
                format!("/{}/v1/{name}", path.split('/').nth(1).unwrap_or_default())
            };
            let (id, one) = read(&cx, &own).await;
            problems.extend(
                response_violations(id, &one)
                    .into_iter()
                    .map(|v| format!("{id}: {v}")),
            );
            checked += 1;
        }
    }
    let pool = format!("/container/v1/projects/{P}/locations/{R}/clusters/a3mega/nodePools");
    for path in [pool.clone(), format!("{pool}/a3mega")] {
        let (id, answer) = read(&cx, &path).await;
        problems.extend(
            response_violations(id, &answer)
                .into_iter()
                .map(|v| format!("{id}: {v}")),
        );
        checked += 1;
    }
    assert!(checked > 40, "{checked}");
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
