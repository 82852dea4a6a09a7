//! Cloud Storage helpers for the state tests: the GCS variant of the minimal blueprint, and what
//! the simulator's Cloud Storage holds.

use super::TestContext;
use serde_json::{Value, json};
use std::path::PathBuf;

pub const BUCKET: &str = "my-project-a3ctl-state";
/// Where the minimal blueprint's state lands with the default prefix.
pub const OBJECT: &str = "a3ctl/a3mini/a3mini.a3state.json";

/// The minimal blueprint with its state in `BUCKET`, plus extra `[state]` lines.
pub fn gcs_minimal(cx: &TestContext, extra: &str) -> PathBuf {
    let text = std::fs::read_to_string(cx.path("blueprints/minimal.toml")).unwrap();
    cx.write(
        "blueprints/minimal-gcs.toml",
        &format!("{text}\n[state]\nbackend = \"gcs\"\nbucket = \"{BUCKET}\"\n{extra}"),
    )
}
pub const GCS_BP: &str = "blueprints/minimal-gcs.toml";

/// Buckets in the simulator, with their object versions.
pub fn buckets(cx: &TestContext) -> Vec<Value> {
    cx.sim.inventory()["storage"]["buckets"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

/// Live object names of `bucket`.
pub fn live_objects(cx: &TestContext, bucket: &str) -> Vec<String> {
    buckets(cx)
        .iter()
        .filter(|b| b["bucket"]["name"] == bucket)
        .flat_map(|b| b["objects"].as_array().cloned().unwrap_or_default())
        .filter(|o| o.get("timeDeleted").is_none())
        .map(|o| o["name"].as_str().unwrap().to_string())
        .collect()
}

/// An object's bytes as Cloud Storage serves them, if it exists.
pub async fn download(cx: &TestContext, bucket: &str, object: &str) -> Option<Vec<u8>> {
    let url = format!(
        "{}/storage/v1/b/{bucket}/o/{}?alt=media",
        cx.sim.base_url(),
        object.replace('/', "%2F")
    );
    let response = reqwest::get(&url).await.unwrap();
    response
        .status()
        .is_success()
        .then_some(response.bytes().await.unwrap().to_vec())
}

pub async fn remote_state(cx: &TestContext) -> Value {
    serde_json::from_slice(&download(cx, BUCKET, OBJECT).await.expect("state object")).unwrap()
}

/// Creates a bucket through the API directly, in `project`.
pub async fn make_bucket(cx: &TestContext, name: &str, project: &str) {
    let url = format!("{}/storage/v1/b?project={project}", cx.sim.base_url());
    let response = reqwest::Client::new()
        .post(&url)
        .json(&json!({"name": name, "location": "US-CENTRAL1", "versioning": {"enabled": true}}))
        .send()
        .await
        .unwrap();
    assert!(response.status().is_success(), "{response:?}");
}
