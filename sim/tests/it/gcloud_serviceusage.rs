//! Service Usage v1 driven by gcloud (`gcloud services list/enable/disable`) and, where gcloud
//! cannot reach a case, by reqwest; and the refusal of every call to a disabled API, seen through
//! gcloud's rendering of the SERVICE_DISABLED error. Zero latency and a manual clock, except where
//! a test times operations itself.

use crate::gcloud_support;

use a3ctl_sim::latency::LatencyProfile;
use a3ctl_sim::serviceusage::{CATALOGUE, DEFAULT_ENABLED, number_of};
use a3ctl_sim::{SimConfig, SimHandle};
use gcloud_support::{Gcloud, PROJECT, assert_error, send, start};
use serde_json::{Value, json};

const DAY: f64 = 24.0 * 3600.0;

/// The names `gcloud services list --enabled` prints.
async fn enabled(gcloud: &Gcloud) -> Vec<String> {
    let listed = gcloud.json(&["services", "list", "--enabled"]).await;
    let mut names: Vec<String> = listed
        .as_array()
        .expect("a list")
        .iter()
        .map(|s| s["config"]["name"].as_str().unwrap_or("").to_string())
        .collect();
    names.sort();
    names
}

/// The message of a SERVICE_DISABLED error for `service` called by [`PROJECT`].
fn disabled_message(title: &str, service: &str) -> String {
    let n = number_of(PROJECT);
    format!(
        "{title} has not been used in project {n} before or it is disabled. Enable it by visiting https://console.developers.google.com/apis/api/{service}/overview?project={n} then retry. If you enabled this API recently, wait a few minutes for the action to propagate to our systems and retry."
    )
}

/// The status of every logged request whose path starts with `prefix`.
fn logged_statuses(sim: &SimHandle, prefix: &str) -> Vec<u16> {
    sim.shared
        .log
        .lock()
        .entries
        .iter()
        .filter(|e| e.path.starts_with(prefix))
        .map(|e| e.status)
        .collect()
}

struct Http {
    base: String,
    client: reqwest::Client,
}

impl Http {
    fn new(sim: &SimHandle) -> Http {
        Http {
            base: sim.base_url().to_string(),
            client: reqwest::Client::new(),
        }
    }

    async fn get(&self, path: &str) -> (u16, Value) {
        send(self.client.get(format!("{}{path}", self.base))).await
    }

    async fn post(&self, path: &str, body: Value) -> (u16, Value) {
        send(self.client.post(format!("{}{path}", self.base)).json(&body)).await
    }

    /// `POST .../services/{service}:{verb}` on [`PROJECT`].
    async fn service(&self, service: &str, verb: &str, body: Value) -> (u16, Value) {
        self.post(
            &format!("/serviceusage/v1/projects/{PROJECT}/services/{service}:{verb}"),
            body,
        )
        .await
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gcloud_lists_the_served_apis_enabled() {
    let sim = start().await;
    let gcloud = Gcloud::new(&sim);
    let mut defaults: Vec<String> = DEFAULT_ENABLED.iter().map(|s| s.to_string()).collect();
    defaults.sort();
    assert_eq!(enabled(&gcloud).await, defaults);

    let listed = gcloud.json(&["services", "list", "--enabled"]).await;
    let n = number_of(PROJECT);
    let gke = listed
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["config"]["name"] == "container.googleapis.com")
        .cloned()
        .unwrap();
    assert_eq!(
        gke,
        json!({
            "name": format!("projects/{n}/services/container.googleapis.com"),
            "config": {"name": "container.googleapis.com", "title": "Kubernetes Engine API"},
            "state": "ENABLED",
            "parent": format!("projects/{n}"),
        })
    );
    let table = gcloud.ok(&["services", "list", "--enabled"]).await;
    assert!(
        // The NAME column is as wide as the longest name, cloudresourcemanager.googleapis.com.
        table.contains("file.googleapis.com                  Cloud Filestore API"),
        "{table}"
    );
    // --available lists the whole catalogue, enabled or not.
    let available = gcloud.json(&["services", "list", "--available"]).await;
    assert_eq!(available.as_array().map(Vec::len), Some(CATALOGUE.len()));
    assert!(
        available
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s["config"]["name"] == "bigquery.googleapis.com" && s["state"] == "DISABLED")
    );
    assert_eq!(
        logged_statuses(&sim, "/serviceusage/v1/projects/sim-proj/services"),
        vec![200, 200, 200, 200]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn disabled_filestore_refuses_every_call_until_enabled_again() {
    let sim = start().await;
    let gcloud = Gcloud::new(&sim);
    let (ok, _, err) = gcloud
        .run(&["services", "disable", "file.googleapis.com"])
        .await;
    assert!(ok, "{err}");
    let n = number_of(PROJECT);
    assert!(
        err.contains(&format!("Operation \"operations/acat.p2-{n}-"))
            && err.contains("finished successfully."),
        "{err}"
    );
    assert!(
        !enabled(&gcloud)
            .await
            .contains(&"file.googleapis.com".to_string())
    );

    let before = sim.inventory();
    let message = disabled_message("Cloud Filestore API", "file.googleapis.com");
    let err = gcloud
        .fails(&["filestore", "instances", "list", "--location=us-central1-a"])
        .await;
    assert!(
        err.contains(&format!(
            "ERROR: (gcloud.filestore.instances.list) PERMISSION_DENIED: {message}"
        )),
        "{err}"
    );
    assert!(err.contains("reason: SERVICE_DISABLED"), "{err}");
    assert!(err.contains("serviceTitle: Cloud Filestore API"), "{err}");
    assert!(err.contains(&format!("consumer: projects/{n}")), "{err}");
    let err = gcloud
        .fails(&[
            "filestore",
            "instances",
            "create",
            "fs1",
            "--zone=us-central1-a",
            "--tier=BASIC_HDD",
            "--file-share=name=share,capacity=1TB",
            "--network=name=default",
        ])
        .await;
    assert!(
        err.contains(&format!(
            "ERROR: (gcloud.filestore.instances.create) PERMISSION_DENIED: {message}"
        )),
        "{err}"
    );
    // Nothing changed, and both refusals were logged as 403s.
    assert_eq!(sim.inventory(), before);
    assert_eq!(logged_statuses(&sim, "/file/"), vec![403, 403]);

    // The raw answer, as a client library sees it.
    let http = Http::new(&sim);
    let got = http
        .get(&format!(
            "/file/v1/projects/{PROJECT}/locations/us-central1-a/instances"
        ))
        .await;
    assert_error(&got, 403, "PERMISSION_DENIED", &message);
    assert_eq!(got.1["error"]["errors"][0]["reason"], "accessNotConfigured");
    assert_eq!(got.1["error"]["details"][0]["reason"], "SERVICE_DISABLED");
    // Another project is not affected.
    let (status, _) = http
        .get("/file/v1/projects/other-proj/locations/us-central1-a/instances")
        .await;
    assert_eq!(status, 200);

    gcloud
        .ok(&["services", "enable", "file.googleapis.com"])
        .await;
    let listed = gcloud
        .json(&["filestore", "instances", "list", "--location=us-central1-a"])
        .await;
    assert_eq!(listed, json!([]));
    assert!(
        enabled(&gcloud)
            .await
            .contains(&"file.googleapis.com".to_string())
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn disabled_compute_refuses_calls_and_disabling_checks_dependents_and_usage() {
    let sim = start().await;
    let gcloud = Gcloud::new(&sim);
    // A call: compute has usage from now on.
    assert_eq!(
        gcloud.json(&["compute", "networks", "list"]).await,
        json!([])
    );

    let err = gcloud
        .fails(&["services", "disable", "compute.googleapis.com"])
        .await;
    assert!(
        err.contains("FAILED_PRECONDITION: The service compute.googleapis.com is depended on by the following active service(s): container.googleapis.com; Please specify disable_dependent_services=true if you want to proceed with disabling all services."),
        "{err}"
    );
    assert!(
        err.contains("reason: COMMON_SU_SERVICE_HAS_DEPENDENT_SERVICES"),
        "{err}"
    );
    // GKE has neither calls nor clusters: it goes without --force.
    gcloud
        .ok(&["services", "disable", "container.googleapis.com"])
        .await;
    let err = gcloud
        .fails(&["services", "disable", "compute.googleapis.com"])
        .await;
    assert!(
        err.contains("FAILED_PRECONDITION: The service compute.googleapis.com has usage in the last 30 days. Please specify check_if_service_has_usage=SKIP if you want to proceed with disabling the service."),
        "{err}"
    );
    assert!(err.contains("Provide the --force flag"), "{err}");
    // Thirty-one days later the call is forgotten.
    sim.advance_secs(31.0 * DAY);
    gcloud
        .ok(&["services", "disable", "compute.googleapis.com"])
        .await;

    let before = sim.inventory();
    let message = disabled_message("Compute Engine API", "compute.googleapis.com");
    let err = gcloud.fails(&["compute", "networks", "list"]).await;
    assert!(
        err.contains(&format!(
            "ERROR: (gcloud.compute.networks.list) PERMISSION_DENIED: {message}"
        )),
        "{err}"
    );
    assert!(err.contains("reason: SERVICE_DISABLED"), "{err}");
    let err = gcloud
        .fails(&[
            "compute",
            "networks",
            "create",
            "net-1",
            "--subnet-mode=custom",
        ])
        .await;
    assert!(err.contains(&message), "{err}");
    assert_eq!(sim.inventory(), before);

    // The whole body, field by field.
    let http = Http::new(&sim);
    let n = number_of(PROJECT);
    let url = format!(
        "https://console.developers.google.com/apis/api/compute.googleapis.com/overview?project={n}"
    );
    let (status, body) = http
        .get(&format!("/compute/v1/projects/{PROJECT}/global/networks"))
        .await;
    assert_eq!(status, 403);
    assert_eq!(
        body,
        json!({"error": {
            "code": 403,
            "message": message,
            "errors": [{
                "message": message,
                "domain": "usageLimits",
                "reason": "accessNotConfigured",
                "extendedHelp": "https://console.developers.google.com",
            }],
            "status": "PERMISSION_DENIED",
            "details": [
                {
                    "@type": "type.googleapis.com/google.rpc.ErrorInfo",
                    "reason": "SERVICE_DISABLED",
                    "domain": "googleapis.com",
                    "metadata": {
                        "service": "compute.googleapis.com",
                        "consumer": format!("projects/{n}"),
                        "activationUrl": url,
                        "serviceTitle": "Compute Engine API",
                        "containerInfo": n,
                    },
                },
                {
                    "@type": "type.googleapis.com/google.rpc.LocalizedMessage",
                    "locale": "en-US",
                    "message": message,
                },
                {
                    "@type": "type.googleapis.com/google.rpc.Help",
                    "links": [{
                        "description": "Google developers console API activation",
                        "url": url,
                    }],
                },
            ],
        }})
    );
    // By project number too.
    let (status, _) = http
        .get(&format!("/compute/v1/projects/{n}/global/networks"))
        .await;
    assert_eq!(status, 403);

    // Enabling GKE enables Compute, which it depends on.
    gcloud
        .ok(&["services", "enable", "container.googleapis.com"])
        .await;
    let now = enabled(&gcloud).await;
    assert!(
        now.contains(&"compute.googleapis.com".to_string()),
        "{now:?}"
    );
    assert!(
        now.contains(&"container.googleapis.com".to_string()),
        "{now:?}"
    );
    assert_eq!(
        gcloud.json(&["compute", "networks", "list"]).await,
        json!([])
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_services_are_refused_as_google_refuses_them() {
    let sim = start().await;
    let gcloud = Gcloud::new(&sim);
    let err = gcloud
        .fails(&["services", "enable", "nosuch.googleapis.com"])
        .await;
    assert!(
        err.contains("ERROR: (gcloud.services.enable) PERMISSION_DENIED: Not found or permission denied for service(s): nosuch.googleapis.com."),
        "{err}"
    );
    assert!(
        err.contains("subject: ?error_code=220002&services=nosuch.googleapis.com"),
        "{err}"
    );
    assert!(
        err.contains("reason: SERVICE_CONFIG_NOT_FOUND_OR_PERMISSION_DENIED"),
        "{err}"
    );

    // batchEnable is atomic: one unknown name and nothing is enabled.
    gcloud
        .ok(&["services", "disable", "file.googleapis.com"])
        .await;
    let before = sim.inventory();
    let err = gcloud
        .fails(&[
            "services",
            "enable",
            "file.googleapis.com",
            "nosuch.googleapis.com",
            "typo.googleapis.com",
        ])
        .await;
    assert!(
        err.contains("Not found or permission denied for service(s): nosuch.googleapis.com,typo.googleapis.com."),
        "{err}"
    );
    assert_eq!(sim.inventory(), before);
    assert!(
        !enabled(&gcloud)
            .await
            .contains(&"file.googleapis.com".to_string())
    );

    let err = gcloud
        .fails(&["services", "disable", "nosuch.googleapis.com"])
        .await;
    assert!(
        err.contains("PERMISSION_DENIED: Not found or permission denied for service(s): nosuch.googleapis.com."),
        "{err}"
    );
    let http = Http::new(&sim);
    let got = http
        .get(&format!(
            "/serviceusage/v1/projects/{PROJECT}/services/nosuch.googleapis.com"
        ))
        .await;
    assert_error(
        &got,
        403,
        "PERMISSION_DENIED",
        "Not found or permission denied for service(s): nosuch.googleapis.com.",
    );
    assert_eq!(
        got.1["error"]["details"][1]["metadata"]["services"],
        "nosuch.googleapis.com"
    );
}

#[tokio::test]
async fn operations_take_effect_when_done() {
    let sim = a3ctl_sim::start(SimConfig {
        latency: LatencyProfile::realistic(),
        ..SimConfig::default()
    })
    .await
    .unwrap();
    let http = Http::new(&sim);
    let n = number_of(PROJECT);
    let instances = format!("/file/v1/projects/{PROJECT}/locations/us-central1-a/instances");

    let (status, op) = http
        .service("file.googleapis.com", "disable", json!({}))
        .await;
    assert_eq!(status, 200, "{op}");
    let name = op["name"].as_str().unwrap().to_string();
    assert!(
        name.starts_with(&format!("operations/acat.p2-{n}-")),
        "{name}"
    );
    assert_eq!(
        op,
        json!({"name": name, "metadata": {"@type": "type.googleapis.com/google.protobuf.Empty", "value": {}}})
    );
    // Still enabled while the operation runs.
    assert_eq!(http.get(&instances).await.0, 200);
    let (_, running) = http.get(&format!("/serviceusage/v1/{name}")).await;
    assert!(running.get("done").is_none(), "{running}");
    sim.advance_secs(30.0);
    let (_, done) = http.get(&format!("/serviceusage/v1/{name}")).await;
    assert_eq!(done["done"], true);
    assert_eq!(
        done["response"],
        json!({
            "@type": "type.googleapis.com/google.api.serviceusage.v1.DisableServiceResponse",
            "service": {
                "name": format!("projects/{n}/services/file.googleapis.com"),
                "parent": format!("projects/{n}"),
                "state": "DISABLED",
            },
        })
    );
    assert_eq!(http.get(&instances).await.0, 403);

    // Disabling again changes nothing: the done no-op operation, which cannot be polled.
    let (_, noop) = http
        .service("file.googleapis.com", "disable", json!({}))
        .await;
    assert_eq!(noop["name"], "operations/noop.DONE_OPERATION");
    assert_eq!(noop["done"], true);
    assert_eq!(noop["response"]["service"]["state"], "DISABLED");
    let got = http
        .get("/serviceusage/v1/operations/noop.DONE_OPERATION")
        .await;
    assert_eq!(got.0, 404);

    let (_, op) = http
        .service("file.googleapis.com", "enable", json!({}))
        .await;
    let name = op["name"].as_str().unwrap().to_string();
    assert!(
        name.starts_with(&format!("operations/acf.p2-{n}-")),
        "{name}"
    );
    assert_eq!(http.get(&instances).await.0, 403);
    sim.advance_secs(60.0);
    let (_, done) = http.get(&format!("/serviceusage/v1/{name}")).await;
    assert_eq!(
        done["response"]["@type"],
        "type.googleapis.com/google.api.serviceusage.v1.EnableServiceResponse"
    );
    assert_eq!(done["response"]["service"]["state"], "ENABLED");
    assert_eq!(http.get(&instances).await.0, 200);
    let (_, noop) = http
        .service("file.googleapis.com", "enable", json!({}))
        .await;
    assert_eq!(noop["name"], "operations/noop.DONE_OPERATION");

    // batchEnable: its own metadata and response types.
    let batch = format!("/serviceusage/v1/projects/{PROJECT}/services:batchEnable");
    let (status, op) = http
        .post(
            &batch,
            json!({"serviceIds": ["bigquery.googleapis.com", "dns.googleapis.com"]}),
        )
        .await;
    assert_eq!(status, 200, "{op}");
    assert_eq!(
        op["metadata"],
        json!({"@type": "type.googleapis.com/google.api.serviceusage.v1.OperationMetadata"})
    );
    sim.advance_secs(60.0);
    let (_, done) = http
        .get(&format!(
            "/serviceusage/v1/{}",
            op["name"].as_str().unwrap()
        ))
        .await;
    assert_eq!(
        done["response"]["@type"],
        "type.googleapis.com/google.api.serviceusage.v1.BatchEnableServicesResponse"
    );
    assert_eq!(
        done["response"]["services"][1]["name"],
        format!("projects/{n}/services/dns.googleapis.com")
    );
    let (_, dns) = http
        .get(&format!(
            "/serviceusage/v1/projects/{PROJECT}/services/dns.googleapis.com"
        ))
        .await;
    assert_eq!(dns["state"], "ENABLED");

    let got = http.post(&batch, json!({"serviceIds": []})).await;
    assert_eq!(got.0, 400, "{}", got.1);
    let many: Vec<String> = (0..21).map(|_| "dns.googleapis.com".to_string()).collect();
    let got = http.post(&batch, json!({"serviceIds": many})).await;
    assert_eq!(got.0, 400, "{}", got.1);
    let got = http
        .service(
            "bigquery.googleapis.com",
            "disable",
            json!({"checkIfServiceHasUsage": "SOMETIMES"}),
        )
        .await;
    assert_eq!(got.0, 400, "{}", got.1);
    let got = http.get("/serviceusage/v1/operations/acf.p2-1-nope").await;
    assert_eq!(got.0, 404, "{}", got.1);
}

#[tokio::test]
async fn services_get_and_list_follow_the_reference() {
    let sim = start().await;
    let http = Http::new(&sim);
    let n = number_of(PROJECT);
    let (status, by_id) = http
        .get(&format!(
            "/serviceusage/v1/projects/{PROJECT}/services/container.googleapis.com"
        ))
        .await;
    assert_eq!(status, 200);
    assert_eq!(
        by_id["name"],
        format!("projects/{n}/services/container.googleapis.com")
    );
    assert_eq!(by_id["state"], "ENABLED");
    let (_, by_number) = http
        .get(&format!(
            "/serviceusage/v1/projects/{n}/services/container.googleapis.com"
        ))
        .await;
    assert_eq!(by_number, by_id);

    // Pages of three, until the catalogue is exhausted.
    let list = format!("/serviceusage/v1/projects/{PROJECT}/services");
    let mut names = Vec::new();
    let mut token = String::new();
    loop {
        let (status, page) = http
            .get(&format!("{list}?pageSize=3&pageToken={token}"))
            .await;
        assert_eq!(status, 200, "{page}");
        let services = page["services"].as_array().unwrap();
        assert!(services.len() <= 3);
        names.extend(services.iter().map(|s| s["config"]["name"].clone()));
        match page["nextPageToken"].as_str() {
            Some(next) => token = next.to_string(),
            None => break,
        }
    }
    assert_eq!(names.len(), CATALOGUE.len());
    let (_, disabled) = http.get(&format!("{list}?filter=state:DISABLED")).await;
    assert_eq!(
        disabled["services"].as_array().map(Vec::len),
        Some(CATALOGUE.len() - DEFAULT_ENABLED.len())
    );
    assert!(
        disabled["services"]
            .as_array()
            .unwrap()
            .iter()
            .all(|s| s["state"] == "DISABLED")
    );
    let (status, _) = http.get(&format!("{list}?filter=state:BROKEN")).await;
    assert_eq!(status, 400);
    let (status, _) = http.get(&format!("{list}?pageSize=201")).await;
    assert_eq!(status, 400);
}

#[tokio::test]
async fn disabling_gke_with_clusters_needs_force_and_keeps_them() {
    let sim = start().await;
    let http = Http::new(&sim);
    let (status, op) = http
        .post(
            &format!("/compute/v1/projects/{PROJECT}/global/networks"),
            json!({"name": "default", "autoCreateSubnetworks": true}),
        )
        .await;
    assert_eq!(status, 200, "{op}");
    let clusters = format!("/container/v1/projects/{PROJECT}/locations/us-central1-a/clusters");
    let (status, op) = http
        .post(
            &clusters,
            json!({"cluster": {"name": "c1", "initialNodeCount": 1}}),
        )
        .await;
    assert_eq!(status, 200, "{op}");
    sim.advance_secs(60.0);
    assert_eq!(http.get(&format!("{clusters}/c1")).await.0, 200);

    // Even once the calls are a month old, the cluster itself is usage.
    sim.advance_secs(31.0 * DAY);
    let check = json!({"checkIfServiceHasUsage": "CHECK"});
    let got = http
        .service("container.googleapis.com", "disable", check)
        .await;
    assert_eq!(got.0, 400, "{}", got.1);
    assert_eq!(
        got.1["error"]["message"],
        "The service container.googleapis.com has usage in the last 30 days. Please specify check_if_service_has_usage=SKIP if you want to proceed with disabling the service."
    );
    assert_eq!(
        got.1["error"]["details"][1]["reason"],
        "COMMON_SU_SERVICE_HAS_USAGE"
    );

    let (status, op) = http
        .service(
            "container.googleapis.com",
            "disable",
            json!({"checkIfServiceHasUsage": "SKIP"}),
        )
        .await;
    assert_eq!(status, 200, "{op}");
    let got = http.get(&format!("{clusters}/c1")).await;
    assert_error(
        &got,
        403,
        "PERMISSION_DENIED",
        &disabled_message("Kubernetes Engine API", "container.googleapis.com"),
    );
    // The cluster is still there, and comes back with the API.
    assert_eq!(
        sim.inventory()["container"]["clusters"]
            .as_array()
            .map(Vec::len),
        Some(1)
    );
    let (status, _) = http
        .service("container.googleapis.com", "enable", json!({}))
        .await;
    assert_eq!(status, 200);
    assert_eq!(http.get(&format!("{clusters}/c1")).await.0, 200);
}

#[tokio::test]
async fn disabled_storage_json_api_refuses_bucket_and_object_calls() {
    let sim = start().await;
    let http = Http::new(&sim);
    let (status, bucket) = http
        .post(
            &format!("/storage/v1/b?project={PROJECT}"),
            json!({"name": "su-bucket-1"}),
        )
        .await;
    assert_eq!(status, 200, "{bucket}");
    let (status, op) = http
        .service(
            "storage-api.googleapis.com",
            "disable",
            json!({"checkIfServiceHasUsage": "SKIP"}),
        )
        .await;
    assert_eq!(status, 200, "{op}");
    let message = disabled_message(
        "Google Cloud Storage JSON API",
        "storage-api.googleapis.com",
    );
    for path in [
        format!("/storage/v1/b?project={PROJECT}"),
        "/storage/v1/b/su-bucket-1".to_string(),
        "/storage/v1/b/su-bucket-1/o".to_string(),
    ] {
        let got = http.get(&path).await;
        assert_error(&got, 403, "PERMISSION_DENIED", &message);
    }
    let got = http
        .post(
            &format!("/storage/v1/b?project={PROJECT}"),
            json!({"name": "su-bucket-2"}),
        )
        .await;
    assert_error(&got, 403, "PERMISSION_DENIED", &message);
    assert_eq!(
        sim.inventory()["storage"]["buckets"]
            .as_array()
            .map(Vec::len),
        Some(1)
    );
    // Other projects' buckets are theirs to use.
    let (status, _) = http.get("/storage/v1/b?project=other-proj").await;
    assert_eq!(status, 200);
}

#[tokio::test]
async fn service_state_survives_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("world.json");
    let config = SimConfig {
        persist: Some(path.clone()),
        ..SimConfig::default()
    };
    let sim = a3ctl_sim::start(config.clone()).await.unwrap();
    let http = Http::new(&sim);
    let (status, _) = http
        .service("file.googleapis.com", "disable", json!({}))
        .await;
    assert_eq!(status, 200);
    assert_eq!(
        http.get(&format!(
            "/file/v1/projects/{PROJECT}/locations/us-central1-a/instances"
        ))
        .await
        .0,
        403
    );
    sim.shutdown();

    let sim = a3ctl_sim::start(config).await.unwrap();
    let http = Http::new(&sim);
    let (status, body) = http
        .get(&format!(
            "/file/v1/projects/{PROJECT}/locations/us-central1-a/instances"
        ))
        .await;
    assert_eq!(status, 403, "{body}");
    let (_, compute) = http
        .get(&format!(
            "/serviceusage/v1/projects/{PROJECT}/services/compute.googleapis.com"
        ))
        .await;
    assert_eq!(compute["state"], "ENABLED");
}
