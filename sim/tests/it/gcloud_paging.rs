//! Lists page as Google pages them (`sim/src/paging.rs`): gcloud follows `nextPageToken` through
//! every page, one request per page, and the request log counts them. See: issue 27 ("a list of
//! 9 networks with `maxResults=1` takes 9 requests").

use crate::gcloud_support::{Gcloud, PROJECT, assert_error, post_ok, send};
use a3ctl_sim::{SimConfig, SimHandle, WorldSpec};
use serde_json::{Value, json};

/// `n` custom-mode networks `net-1` … `net-n`, made by REST (their inserts finish at the next
/// read).
async fn networks(sim: &SimHandle, n: usize) {
    for i in 1..=n {
        post_ok(
            sim,
            &format!("/compute/v1/projects/{PROJECT}/global/networks"),
            json!({"name": format!("net-{i}"), "autoCreateSubnetworks": false}),
        )
        .await;
    }
}

/// How many GETs of `path` the simulator has answered.
fn gets_of(sim: &SimHandle, path: &str) -> u64 {
    let endpoint = a3ctl_sim::server::endpoint_template(path);
    sim.request_counts()
        .get(&format!("GET {endpoint}"))
        .copied()
        .unwrap_or(0)
}

fn names(listed: &Value) -> Vec<String> {
    listed
        .as_array()
        .expect("a JSON list")
        .iter()
        .map(|n| n["name"].as_str().expect("a name").to_string())
        .collect()
}

/// A simulator whose world file caps every page at one item.
async fn one_per_page() -> SimHandle {
    let world = WorldSpec::parse("[lists]\nmax_page_size = 1\n", "world.toml").expect("parses");
    a3ctl_sim::start(SimConfig {
        world,
        ..SimConfig::default()
    })
    .await
    .expect("simulator starts")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nine_networks_listed_with_max_results_1_take_nine_requests() {
    let sim = crate::gcloud_support::start().await;
    networks(&sim, 9).await;
    let collection = format!("/compute/v1/projects/{PROJECT}/global/networks");
    let before = gets_of(&sim, &collection);
    // A client that asks for one network per page and follows `nextPageToken`.
    let client = reqwest::Client::new();
    let mut token: Option<String> = None;
    let mut listed = Vec::new();
    loop {
        let mut query = vec![("maxResults", "1".to_string())];
        query.extend(token.clone().map(|t| ("pageToken", t)));
        let request = client
            .get(format!("{}{collection}", sim.base_url()))
            .query(&query);
        let (status, page) = send(request).await;
        assert_eq!(status, 200, "{page}");
        listed.extend(names(&page["items"]));
        token = page["nextPageToken"].as_str().map(str::to_string);
        if token.is_none() || listed.len() > 9 {
            break;
        }
    }
    let expected: Vec<String> = (1..=9).map(|i| format!("net-{i}")).collect();
    assert_eq!(listed, expected);
    assert_eq!(gets_of(&sim, &collection) - before, 9);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gcloud_follows_every_page_of_nine_networks() {
    // `gcloud compute networks list` asks for 500 a page (its `--page-size` only pages the
    // display); a world that answers one per page, as Google may, makes it follow 9 pages.
    let sim = one_per_page().await;
    networks(&sim, 9).await;
    let collection = format!("/compute/v1/projects/{PROJECT}/global/networks");
    let before = gets_of(&sim, &collection);
    let listed = Gcloud::new(&sim)
        .json(&["compute", "networks", "list"])
        .await;
    let expected: Vec<String> = (1..=9).map(|i| format!("net-{i}")).collect();
    assert_eq!(names(&listed), expected);
    assert_eq!(gets_of(&sim, &collection) - before, 9);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pages_carry_opaque_tokens_and_bad_ones_are_refused() {
    let sim = crate::gcloud_support::start().await;
    networks(&sim, 3).await;
    let client = reqwest::Client::new();
    let url = format!(
        "{}/compute/v1/projects/{PROJECT}/global/networks",
        sim.base_url()
    );
    let (status, first) = send(client.get(&url).query(&[("maxResults", "2")])).await;
    assert_eq!(status, 200, "{first}");
    assert_eq!(first["items"].as_array().unwrap().len(), 2);
    let token = first["nextPageToken"].as_str().expect("a next page");
    let (_, second) = send(
        client
            .get(&url)
            .query(&[("maxResults", "2"), ("pageToken", token)]),
    )
    .await;
    assert_eq!(second["items"][0]["name"], "net-3");
    assert!(second.get("nextPageToken").is_none(), "{second}");
    // The range is 0–500; a token the simulator did not give out is refused.
    assert_error(
        &send(client.get(&url).query(&[("maxResults", "501")])).await,
        400,
        "INVALID_ARGUMENT",
        "Invalid value for field 'maxResults': '501'. Must be between 0 and 500.",
    );
    assert_error(
        &send(client.get(&url).query(&[("pageToken", "not a token!")])).await,
        400,
        "INVALID_ARGUMENT",
        "Invalid value for field 'pageToken': 'not a token!'. Invalid page token.",
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn aggregated_lists_page_across_regions() {
    let sim = crate::gcloud_support::start().await;
    networks(&sim, 1).await;
    for (i, region) in ["us-central1", "us-east4", "europe-west4"]
        .iter()
        .enumerate()
    {
        post_ok(
            &sim,
            &format!("/compute/v1/projects/{PROJECT}/regions/{region}/subnetworks"),
            json!({"name": format!("sub-{i}"), "network": "global/networks/net-1",
                   "ipCidrRange": format!("10.{i}.0.0/24")}),
        )
        .await;
    }
    let aggregated = format!("/compute/v1/projects/{PROJECT}/aggregated/subnetworks");
    let before = gets_of(&sim, &aggregated);
    let listed = Gcloud::new(&sim)
        .json(&["compute", "networks", "subnets", "list", "--page-size=1"])
        .await;
    let mut got = names(&listed);
    got.sort();
    assert_eq!(got, ["sub-0", "sub-1", "sub-2"]);
    assert_eq!(gets_of(&sim, &aggregated) - before, 3);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_world_file_caps_every_page_of_every_api() {
    let sim = one_per_page().await;
    let gcloud = Gcloud::new(&sim);
    // Service Usage's catalogue, one service per page.
    let services = format!("/serviceusage/v1/projects/{PROJECT}/services");
    let before = gets_of(&sim, &services);
    let enabled = gcloud.json(&["services", "list", "--enabled"]).await;
    let count = enabled.as_array().expect("a list").len() as u64;
    assert!(count > 1, "{enabled}");
    assert_eq!(gets_of(&sim, &services) - before, count);
    // Compute's regions, one per page.
    let regions = format!("/compute/v1/projects/{PROJECT}/regions");
    let before = gets_of(&sim, &regions);
    let listed = gcloud.json(&["compute", "regions", "list"]).await;
    let count = listed.as_array().expect("a list").len() as u64;
    assert!(count > 1, "{listed}");
    assert_eq!(gets_of(&sim, &regions) - before, count);
    // A cap of 0 would be no cap: the world file refuses it.
    let refused = WorldSpec::parse("[lists]\nmax_page_size = 0\n", "world.toml").unwrap_err();
    assert!(refused.contains("world.toml:2"), "{refused}");
}
