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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_method_a_served_path_lacks_is_501_when_google_has_it_else_google_404() {
    let sim = start().await;
    main_network(&sim, PROJECT, "us-central1").await;
    let gke = format!("/container/v1/projects/{PROJECT}/locations/us-central1");
    let (status, op) = call(
        &sim,
        reqwest::Method::POST,
        &format!("{gke}/clusters"),
        Some(
            json!({"cluster": {"name": "c", "network": "main", "subnetwork": "main-sub",
            "nodePools": [{"name": "p", "initialNodeCount": 1,
                           "config": {"machineType": "e2-standard-4"}}]}}),
        ),
    )
    .await;
    assert_eq!(status, 200, "{op}");
    let operation = op["name"].as_str().expect("an operation").to_string();
    sim.advance_secs(3600.0);
    let (_, vms) = call(
        &sim,
        reqwest::Method::GET,
        &format!("/compute/v1/projects/{PROJECT}/aggregated/instances"),
        None,
    )
    .await;
    // A node's VM, by its link's path (`/compute/v1/projects/P/zones/Z/instances/N`).
    let vm = vms["items"]
        .as_object()
        .into_iter()
        .flat_map(|zones| zones.values())
        .filter_map(|scope| scope["instances"][0]["selfLink"].as_str())
        .find_map(|link| link.find("/compute/v1/").map(|at| link[at..].to_string()))
        .expect("a node VM");
    let compute = format!("/compute/v1/projects/{PROJECT}");
    let before = sim.inventory();
    // Methods Google lists at paths the simulator serves for other methods: not simulated.
    for (method, path, id) in [
        (
            reqwest::Method::DELETE,
            vm.clone(),
            "compute.instances.delete",
        ),
        (
            reqwest::Method::POST,
            format!("{gke}/clusters/c:completeControlPlaneUpgrade"),
            "container.projects.locations.clusters.completeControlPlaneUpgrade",
        ),
        (
            reqwest::Method::POST,
            format!(
                "/iam/v1/projects/{PROJECT}/serviceAccounts/sa@{PROJECT}.iam.gserviceaccount.com:disable"
            ),
            "iam.projects.serviceAccounts.disable",
        ),
    ] {
        let got = call(&sim, method.clone(), &path, Some(json!({}))).await;
        assert_error(
            &got,
            501,
            "UNIMPLEMENTED",
            &format!(
                "Method {id} ({method} {path}) is part of Google's API but is not simulated by a3ctl-sim."
            ),
        );
    }
    // Methods Google does not have there: its 404 for an unknown URL, not a bare 405.
    for (method, path) in [
        (
            reqwest::Method::PUT,
            format!("{compute}/global/networks/main"),
        ),
        (
            reqwest::Method::DELETE,
            format!("{gke}/operations/{operation}"),
        ),
        (reqwest::Method::POST, format!("{gke}/clusters/c:explode")),
        (
            reqwest::Method::PATCH,
            format!("{compute}/zones/us-central1-a/instances"),
        ),
        (
            reqwest::Method::POST,
            format!("/cloudresourcemanager/v1/projects/{PROJECT}:explode"),
        ),
    ] {
        let got = call(&sim, method.clone(), &path, Some(json!({}))).await;
        assert_error(
            &got,
            404,
            "NOT_FOUND",
            &format!("The requested URL {path} was not found on this server."),
        );
    }
    assert_eq!(sim.inventory(), before, "nothing changed");
    // The log keeps the answer sent.
    let counts = sim.request_counts();
    assert_eq!(
        counts.get("PUT /compute/v1/projects/{}/global/networks/{}"),
        Some(&1),
        "{counts:?}"
    );
    let log = sim.shared.log.lock();
    let put = log
        .entries
        .iter()
        .find(|e| e.method == "PUT" && e.path.ends_with("/networks/main"))
        .expect("logged");
    assert_eq!(put.status, 404);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_project_number_in_a_path_names_the_same_project_in_every_api() {
    let sim = start().await;
    main_network(&sim, PROJECT, "us-central1").await;
    let by_id = |api: &str| format!("/{api}/projects/{PROJECT}");
    let by_number = |api: &str| format!("/{api}/projects/{NUMBER}");
    // One resource of each API, made by project id.
    let (status, op) = call(
        &sim,
        reqwest::Method::POST,
        &format!("{}/locations/us-central1/clusters", by_id("container/v1")),
        Some(
            json!({"cluster": {"name": "c", "network": "main", "subnetwork": "main-sub",
            "nodePools": [{"name": "p", "initialNodeCount": 1,
                           "config": {"machineType": "e2-standard-4"}}]}}),
        ),
    )
    .await;
    assert_eq!(status, 200, "{op}");
    let (status, op) = call(
        &sim,
        reqwest::Method::POST,
        &format!(
            "{}/locations/us-central1-a/instances?instanceId=fs",
            by_id("file/v1")
        ),
        Some(
            json!({"tier": "BASIC_HDD", "networks": [{"network": "main"}],
                    "fileShares": [{"name": "share", "capacityGb": "1024"}]}),
        ),
    )
    .await;
    assert_eq!(status, 200, "{op}");
    let (status, op) = call(
        &sim,
        reqwest::Method::POST,
        &format!(
            "{}/locations/us-central1/repositories?repositoryId=r",
            by_id("artifactregistry/v1")
        ),
        Some(json!({"format": "DOCKER"})),
    )
    .await;
    assert_eq!(status, 200, "{op}");
    sim.advance_secs(3600.0);
    // Read by number: the same answers as by id.
    for path in [
        "compute/v1|/global/networks/main",
        "compute/v1|/global/networks",
        "container/v1|/locations/us-central1/clusters/c",
        "container/v1|/zones/-/clusters",
        "container/v1|/locations/-/operations",
        "file/v1|/locations/us-central1-a/instances/fs",
        "artifactregistry/v1|/locations/us-central1/repositories",
        "serviceusage/v1|/services/container.googleapis.com",
        "cloudresourcemanager/v3|",
    ] {
        let (api, rest) = path.split_once('|').unwrap();
        let (status, want) = call(
            &sim,
            reqwest::Method::GET,
            &format!("{}{rest}", by_id(api)),
            None,
        )
        .await;
        assert_eq!(status, 200, "{path}: {want}");
        let got = call(
            &sim,
            reqwest::Method::GET,
            &format!("{}{rest}", by_number(api)),
            None,
        )
        .await;
        assert_eq!(got, (200, want), "{path}");
    }
    // Links keep each API's form: Compute's name the id, GKE's operation links the number.
    let (_, network) = call(
        &sim,
        reqwest::Method::GET,
        &format!("{}/global/networks/main", by_number("compute/v1")),
        None,
    )
    .await;
    assert!(
        network["selfLink"]
            .as_str()
            .is_some_and(|l| l.ends_with(&format!("/projects/{PROJECT}/global/networks/main"))),
        "{network}"
    );
    // A change by number changes the project's resource.
    let (status, op) = call(
        &sim,
        reqwest::Method::POST,
        &format!(
            "{}/locations/us-central1/clusters/c:setResourceLabels",
            by_number("container/v1")
        ),
        Some(json!({"resourceLabels": {"team": "ml"}})),
    )
    .await;
    assert_eq!(status, 200, "{op}");
    assert!(
        op["selfLink"]
            .as_str()
            .is_some_and(|l| l.contains(&format!("/projects/{NUMBER}/locations/us-central1/"))),
        "{op}"
    );
    sim.advance_secs(600.0);
    let (_, cluster) = call(
        &sim,
        reqwest::Method::GET,
        &format!("{}/locations/us-central1/clusters/c", by_id("container/v1")),
        None,
    )
    .await;
    assert_eq!(cluster["resourceLabels"]["team"], "ml", "{cluster}");
    // An error names the project as the request did (AIP-2510).
    let missing = call(
        &sim,
        reqwest::Method::GET,
        &format!(
            "{}/locations/us-central1/clusters/gone",
            by_number("container/v1")
        ),
        None,
    )
    .await;
    assert_error(
        &missing,
        404,
        "NOT_FOUND",
        &format!("Not found: projects/{NUMBER}/locations/us-central1/clusters/gone."),
    );
    // The request log keeps the path as sent.
    assert!(
        sim.shared.log.lock().entries.iter().any(|e| e.path
            == format!("/container/v1/projects/{NUMBER}/locations/us-central1/clusters/gone")),
        "the log names the number"
    );
    // gcloud sends the number it is given (`--project=NUMBER`) where it takes one: its compute,
    // container, artifacts and iam commands refuse a number before sending anything ("The value
    // of ``core/project'' property is set to project number"), filestore and services do not.
    let gcloud = crate::gcloud_support::Gcloud::in_project(&sim, NUMBER);
    let instances = gcloud
        .json(&["filestore", "instances", "list", "--location=us-central1-a"])
        .await;
    assert_eq!(instances.as_array().map(Vec::len), Some(1), "{instances}");
    assert!(
        instances[0]["name"]
            .as_str()
            .is_some_and(|n| n.ends_with("/instances/fs")),
        "{instances}"
    );
    assert!(
        sim.shared
            .log
            .lock()
            .entries
            .iter()
            .any(|e| e.path
                == format!("/file/v1/projects/{NUMBER}/locations/us-central1-a/instances")),
        "gcloud sent the number"
    );
}
