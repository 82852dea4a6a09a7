//! The surface a user's own code touches (issue 27): GKE's zonal routes (`projects.zones.*`)
//! over plain HTTP and gcloud, GKE operation links that carry the project number, and the
//! difference between a method Google serves but the simulator does not (501) and a URL Google
//! does not serve (404).

use crate::gcloud_support::{PROJECT, assert_error, main_network, send};
use a3ctl_sim::{SimConfig, SimHandle, WorldSpec};
use serde_json::{Value, json};

const NUMBER: &str = "123456789012";
const ZONE: &str = "us-central1-a";

async fn start() -> SimHandle {
    let world = WorldSpec::parse(
        &format!("[[projects]]\nid = \"{PROJECT}\"\nnumber = \"{NUMBER}\"\n"),
        "world.toml",
    )
    .expect("parses");
    a3ctl_sim::start(SimConfig {
        world,
        ..SimConfig::default()
    })
    .await
    .expect("simulator starts")
}

async fn call(
    sim: &SimHandle,
    method: reqwest::Method,
    path: &str,
    body: Option<Value>,
) -> (u16, Value) {
    let mut request = reqwest::Client::new().request(method, format!("{}{path}", sim.base_url()));
    if let Some(body) = body {
        request = request.json(&body);
    }
    send(request).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn zonal_gke_routes_answer_over_plain_http_with_numbered_operation_links() {
    let sim = start().await;
    main_network(&sim, PROJECT, "us-central1").await;
    let zonal = format!("/container/v1/projects/{PROJECT}/zones/{ZONE}");
    // `projects.zones.clusters.create`: the body names the project and zone again.
    let (status, op) = call(
        &sim,
        reqwest::Method::POST,
        &format!("{zonal}/clusters"),
        Some(json!({
            "projectId": PROJECT, "zone": ZONE,
            "cluster": {"name": "z1", "network": "main", "subnetwork": "main-sub",
                        "nodePools": [{"name": "p", "initialNodeCount": 1,
                                       "config": {"machineType": "e2-standard-4"}}]},
        })),
    )
    .await;
    assert_eq!(status, 200, "{op}");
    let name = op["name"].as_str().expect("an operation").to_string();
    assert_eq!(
        op["selfLink"],
        format!(
            "https://container.googleapis.com/v1/projects/{NUMBER}/zones/{ZONE}/operations/{name}"
        )
    );
    assert_eq!(
        op["targetLink"],
        format!("https://container.googleapis.com/v1/projects/{NUMBER}/zones/{ZONE}/clusters/z1")
    );
    sim.advance_secs(3600.0);
    // `projects.zones.operations.get`.
    let (status, done) = call(
        &sim,
        reqwest::Method::GET,
        &format!("{zonal}/operations/{name}"),
        None,
    )
    .await;
    assert_eq!((status, &done["status"]), (200, &json!("DONE")), "{done}");
    // `projects.zones.clusters.list` with zone `-`, and `get`.
    let (status, all) = call(
        &sim,
        reqwest::Method::GET,
        &format!("/container/v1/projects/{PROJECT}/zones/-/clusters"),
        None,
    )
    .await;
    assert_eq!(status, 200, "{all}");
    assert_eq!(all["clusters"][0]["name"], "z1", "{all}");
    let (status, cluster) = call(
        &sim,
        reqwest::Method::GET,
        &format!("{zonal}/clusters/z1"),
        None,
    )
    .await;
    assert_eq!(
        (status, &cluster["status"]),
        (200, &json!("RUNNING")),
        "{cluster}"
    );
    // Compute's links keep the project id.
    assert!(
        cluster["selfLink"]
            .as_str()
            .is_some_and(|l| l.contains(&format!("/projects/{PROJECT}/zones/{ZONE}/clusters/z1"))),
        "{cluster}"
    );
    // A zonal verb (`resourceLabels`, the location form's `:setResourceLabels`).
    let (status, labelled) = call(
        &sim,
        reqwest::Method::POST,
        &format!("{zonal}/clusters/z1/resourceLabels"),
        Some(json!({"resourceLabels": {"team": "ml"}, "labelFingerprint": cluster["labelFingerprint"]})),
    )
    .await;
    assert_eq!(status, 200, "{labelled}");
    sim.advance_secs(600.0);
    let (_, cluster) = call(
        &sim,
        reqwest::Method::GET,
        &format!("{zonal}/clusters/z1"),
        None,
    )
    .await;
    assert_eq!(cluster["resourceLabels"]["team"], "ml", "{cluster}");
    // Node pools, zonally: list and `setSize` (`POST .../nodePools/p/setSize`).
    let (status, pools) = call(
        &sim,
        reqwest::Method::GET,
        &format!("{zonal}/clusters/z1/nodePools"),
        None,
    )
    .await;
    assert_eq!(
        (status, &pools["nodePools"][0]["name"]),
        (200, &json!("p")),
        "{pools}"
    );
    let (status, resized) = call(
        &sim,
        reqwest::Method::POST,
        &format!("{zonal}/clusters/z1/nodePools/p/setSize"),
        Some(json!({"nodeCount": 2})),
    )
    .await;
    assert_eq!(status, 200, "{resized}");
    assert_eq!(
        resized["targetLink"],
        format!(
            "https://container.googleapis.com/v1/projects/{NUMBER}/zones/{ZONE}/clusters/z1/nodePools/p"
        )
    );
    // gcloud reads the zonal cluster back (it asks by location).
    let described = crate::gcloud_support::Gcloud::new(&sim)
        .json(&[
            "container",
            "clusters",
            "describe",
            "z1",
            &format!("--zone={ZONE}"),
        ])
        .await;
    assert_eq!(described["name"], "z1");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unserved_google_method_is_501_and_an_unknown_url_404() {
    let sim = start().await;
    let get = |path: String| {
        let sim = &sim;
        async move { call(sim, reqwest::Method::GET, &path, None).await }
    };
    for (path, id) in [
        (
            // (Instances are served: the nodes are VMs.)
            format!("/compute/v1/projects/{PROJECT}/global/instanceTemplates"),
            "compute.instanceTemplates.list",
        ),
        (
            format!("/compute/v1/projects/{PROJECT}/regions/us-central1/routers/r/getRouterStatus"),
            "compute.routers.getRouterStatus",
        ),
        (
            format!("/compute/v1/projects/{PROJECT}/aggregated/subnetworks/listUsable"),
            "compute.subnetworks.listUsable",
        ),
        (
            format!("/serviceusage/v1/projects/{PROJECT}/services:batchGet"),
            "serviceusage.services.batchGet",
        ),
        (
            format!("/artifactregistry/v1/projects/{PROJECT}/locations/us-central1"),
            "artifactregistry.projects.locations.get",
        ),
    ] {
        let got = get(path.clone()).await;
        assert_error(
            &got,
            501,
            "UNIMPLEMENTED",
            &format!(
                "Method {id} (GET {path}) is part of Google's API but is not simulated by a3ctl-sim."
            ),
        );
    }
    let path = format!("/compute/v1/projects/{PROJECT}/zones/{ZONE}/nonsense");
    assert_error(
        &get(path.clone()).await,
        404,
        "NOT_FOUND",
        &format!("The requested URL {path} was not found on this server."),
    );
    // gcloud's list shows the 501 as a request that did not succeed, naming the method.
    let (_, _, err) = crate::gcloud_support::Gcloud::new(&sim)
        .run(&["compute", "instance-templates", "list"])
        .await;
    assert!(
        err.contains("compute.instanceTemplates.") && err.contains("not simulated"),
        "{err}"
    );
}
