//! The world file driven by gcloud: a configured project number in every answer that names the
//! project by number (Service Usage, Cloud Quotas, `project-info`, the SERVICE_DISABLED error)
//! and accepted in place of the id; the configured services enabled and no other; the quotas and
//! capacity of the file enforced; a reservation that exists from the start, READY and counted;
//! service accounts and project IAM bindings that exist from the start; and a persisted world
//! that is not seeded again while the file's configuration still applies.

use crate::gcloud_support::{Gcloud, send};
use a3ctl_sim::{SimConfig, SimHandle, WorldSpec};
use serde_json::{Value, json};

const PROJECT: &str = "world-test";
const NUMBER: &str = "123456789012";

const WORLD: &str = r#"
[[projects]]
id = "world-test"
number = "123456789012"
services = ["compute.googleapis.com", "container.googleapis.com", "serviceusage.googleapis.com",
            "storage.googleapis.com", "storage-api.googleapis.com", "cloudquotas.googleapis.com"]

[[quotas]]
metric = "CPUS"
region = "us-central1"
limit = 5000

[capacity]
stockout_wait_secs = 600
[[capacity.zones]]
zone = "us-central1-a"
machine_type = "a3-megagpu-8g"
on_demand = 3

[[reservations]]
project = "world-test"
zone = "us-central1-a"
name = "seeded"
machine_type = "a3-megagpu-8g"
accelerator_type = "nvidia-h100-mega-80gb"
accelerator_count = 8
count = 2
"#;

/// The world file in a temporary directory, loaded as the a3ctl crate would load it.
fn world(dir: &tempfile::TempDir, text: &str) -> WorldSpec {
    let path = dir.path().join("world.toml");
    std::fs::write(&path, text).expect("world file written");
    WorldSpec::load(&path).expect("world file loads")
}

async fn start(world: WorldSpec, persist: Option<std::path::PathBuf>) -> SimHandle {
    a3ctl_sim::start(SimConfig {
        world,
        persist,
        ..SimConfig::default()
    })
    .await
    .expect("simulator starts")
}

async fn describe_seeded(cli: &Gcloud) -> Value {
    cli.json(&[
        "compute",
        "reservations",
        "describe",
        "seeded",
        "--zone=us-central1-a",
    ])
    .await
}

#[tokio::test(flavor = "multi_thread")]
async fn a_world_file_sets_numbers_services_quotas_capacity_and_reservations() {
    let dir = tempfile::tempdir().unwrap();
    let sim = start(world(&dir, WORLD), None).await;
    let cli = Gcloud::in_project(&sim, PROJECT);

    // Service Usage names the project by its configured number; only the listed services are on.
    let listed = cli.json(&["services", "list", "--enabled"]).await;
    let names: Vec<&str> = listed
        .as_array()
        .expect("a list")
        .iter()
        .map(|s| s["name"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(names.len(), 6, "{names:?}");
    assert!(
        names.contains(&"projects/123456789012/services/container.googleapis.com"),
        "{names:?}"
    );
    assert!(
        names
            .iter()
            .all(|n| n.starts_with("projects/123456789012/services/"))
    );
    // The number stands for the project too.
    let by_number = Gcloud::in_project(&sim, NUMBER)
        .json(&["services", "list", "--enabled"])
        .await;
    assert_eq!(by_number, listed);

    // A service the file leaves out is disabled: the call is refused naming the number.
    let stderr = cli
        .fails(&["filestore", "instances", "list", "--location=us-central1-a"])
        .await;
    assert!(
        stderr.contains(&format!(
            "Cloud Filestore API has not been used in project {NUMBER} before or it is disabled."
        )),
        "{stderr}"
    );
    assert!(stderr.contains("SERVICE_DISABLED"), "{stderr}");

    // Compute and Cloud Quotas use the number too.
    let project = cli.json(&["compute", "project-info", "describe"]).await;
    assert_eq!(
        project["defaultServiceAccount"],
        format!("{NUMBER}-compute@developer.gserviceaccount.com")
    );
    let info = cli
        .json(&[
            "beta",
            "quotas",
            "info",
            "describe",
            "CPUS-per-project-region",
            "--service=compute.googleapis.com",
            &format!("--project={PROJECT}"),
        ])
        .await;
    assert_eq!(
        info["name"],
        format!(
            "projects/{NUMBER}/locations/global/services/compute.googleapis.com/quotaInfos/CPUS-per-project-region"
        )
    );
    let limit = info["dimensionsInfos"]
        .as_array()
        .expect("dimensionsInfos")
        .iter()
        .find(|d| d["dimensions"]["region"] == "us-central1")
        .map(|d| d["details"]["value"].clone());
    assert_eq!(limit, Some(json!("5000")), "{info}");

    // The seeded reservation exists, READY, and holds its VMs' quota and the zone's capacity.
    let seeded = describe_seeded(&cli).await;
    assert_eq!(seeded["status"], "READY", "{seeded}");
    assert_eq!(seeded["specificReservation"]["count"], "2");
    assert_eq!(seeded["specificReservation"]["inUseCount"], "0");
    assert_eq!(seeded["specificReservationRequired"], true);
    assert_eq!(
        seeded["specificReservation"]["instanceProperties"]["guestAccelerators"],
        json!([{"acceleratorType": "nvidia-h100-mega-80gb", "acceleratorCount": 8}])
    );
    assert_eq!(
        seeded["selfLink"],
        format!(
            "https://www.googleapis.com/compute/v1/projects/{PROJECT}/zones/us-central1-a/reservations/seeded"
        )
    );
    let region = cli
        .json(&["compute", "regions", "describe", "us-central1"])
        .await;
    let cpus = region["quotas"]
        .as_array()
        .expect("quotas")
        .iter()
        .find(|q| q["metric"] == "CPUS")
        .cloned()
        .expect("CPUS");
    assert_eq!(cpus["limit"], json!(5000.0), "{cpus}");
    assert_eq!(cpus["usage"], json!(416.0), "{cpus}");
    let create = |name: &str, count: &str| {
        vec![
            "compute".to_string(),
            "reservations".into(),
            "create".into(),
            name.into(),
            "--zone=us-central1-a".into(),
            format!("--vm-count={count}"),
            "--machine-type=a3-megagpu-8g".into(),
        ]
    };
    let args = create("more", "2");
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let stderr = cli.fails(&args).await;
    assert!(stderr.contains("ZONE_RESOURCE_POOL_EXHAUSTED"), "{stderr}");
    let args = create("one", "1");
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    cli.ok(&args).await;
}

#[tokio::test]
async fn a_persisted_world_is_not_seeded_again_but_its_configuration_applies() {
    let dir = tempfile::tempdir().unwrap();
    let persist = dir.path().join("world.json");
    let sim = start(world(&dir, WORLD), Some(persist.clone())).await;
    let base = sim.base_url().to_string();
    let http = reqwest::Client::new();
    // Enable Filestore, and consume nothing: the world changes after its seeding.
    let enable =
        format!("{base}/serviceusage/v1/projects/{PROJECT}/services/file.googleapis.com:enable");
    let (status, _) = send(http.post(enable).json(&json!({}))).await;
    assert_eq!(status, 200);
    sim.advance_secs(60.0);
    let reservations = |sim: &SimHandle| sim.inventory()["compute"]["reservations"].clone();
    assert_eq!(reservations(&sim).as_array().map(Vec::len), Some(1));
    sim.shutdown();

    // Restarted from the persisted world with another number: the number applies, the
    // reservation is not seeded twice, Filestore stays enabled.
    let changed = WORLD.replace("123456789012", "555555555555");
    let sim = start(world(&dir, &changed), Some(persist)).await;
    let base = sim.base_url().to_string();
    assert_eq!(reservations(&sim).as_array().map(Vec::len), Some(1));
    let (status, file) = send(http.get(format!(
        "{base}/serviceusage/v1/projects/{PROJECT}/services/file.googleapis.com"
    )))
    .await;
    assert_eq!(status, 200, "{file}");
    assert_eq!(file["state"], "ENABLED");
    assert_eq!(
        file["name"],
        "projects/555555555555/services/file.googleapis.com"
    );
    let (status, _) = send(http.get(format!(
        "{base}/serviceusage/v1/projects/555555555555/services/file.googleapis.com"
    )))
    .await;
    assert_eq!(status, 200);
}

#[tokio::test]
async fn a_seeded_reservation_beyond_quota_or_capacity_stops_the_start() {
    let dir = tempfile::tempdir().unwrap();
    let tight = WORLD.replace("on_demand = 3", "on_demand = 1");
    let result = a3ctl_sim::start(SimConfig {
        world: world(&dir, &tight),
        ..SimConfig::default()
    })
    .await;
    let err = result.err().expect("refused").to_string();
    assert_eq!(
        err,
        format!(
            "world file: [[reservations]] #1 (seeded): The zone 'projects/{PROJECT}/zones/us-central1-a' \
             does not have enough resources available to fulfill the request.  Try a different zone, \
             or try again later."
        )
    );
    let poor = WORLD.replace("limit = 5000", "limit = 400");
    let result = a3ctl_sim::start(SimConfig {
        world: world(&dir, &poor),
        ..SimConfig::default()
    })
    .await;
    let err = result.err().expect("refused").to_string();
    assert_eq!(
        err,
        "world file: [[reservations]] #1 (seeded): Quota 'CPUS' exceeded.  Limit: 400.0 in region \
         us-central1."
    );
}

const IAM_WORLD: &str = r#"
[[projects]]
id = "world-test"
number = "123456789012"

[[service_accounts]]
project = "world-test"
account_id = "a3-runner"
display_name = "A3 runner"

[[iam]]
project = "world-test"
role = "roles/artifactregistry.reader"
members = ["serviceAccount:a3-runner@world-test.iam.gserviceaccount.com"]

[[iam]]
project = "world-test"
role = "roles/owner"
members = ["user:lead@example.com"]
"#;

#[tokio::test(flavor = "multi_thread")]
async fn a_world_file_seeds_service_accounts_and_project_bindings_once() {
    let dir = tempfile::tempdir().unwrap();
    let persist = dir.path().join("world.json");
    let sim = start(world(&dir, IAM_WORLD), Some(persist.clone())).await;
    let cli = Gcloud::in_project(&sim, PROJECT);
    let runner = "a3-runner@world-test.iam.gserviceaccount.com";
    let account = cli
        .json(&["iam", "service-accounts", "describe", runner])
        .await;
    assert_eq!(account["displayName"], "A3 runner");
    let policy = cli.json(&["projects", "get-iam-policy", NUMBER]).await;
    let members = |policy: &Value, role: &str| -> Vec<String> {
        policy["bindings"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|b| b["role"] == role)
            .flat_map(|b| b["members"].as_array().cloned().unwrap_or_default())
            .map(|m| m.as_str().unwrap_or("").to_string())
            .collect()
    };
    assert_eq!(
        members(&policy, "roles/artifactregistry.reader"),
        vec![format!("serviceAccount:{runner}")]
    );
    assert_eq!(
        members(&policy, "roles/owner"),
        vec!["user:lead@example.com", "user:sim-owner@example.com"]
    );
    assert_eq!(
        members(&policy, "roles/editor"),
        vec![format!(
            "serviceAccount:{NUMBER}-compute@developer.gserviceaccount.com"
        )]
    );

    // Deleted, then restarted from the persisted world: not seeded again.
    cli.ok(&["iam", "service-accounts", "delete", runner, "--quiet"])
        .await;
    drop(sim);
    let sim = start(world(&dir, IAM_WORLD), Some(persist)).await;
    let cli = Gcloud::in_project(&sim, PROJECT);
    let err = cli
        .fails(&["iam", "service-accounts", "describe", runner])
        .await;
    assert!(err.contains("NOT_FOUND: Unknown service account"), "{err}");
    let policy = cli.json(&["projects", "get-iam-policy", PROJECT]).await;
    assert!(
        members(&policy, "roles/artifactregistry.reader")[0]
            .starts_with(&format!("deleted:serviceAccount:{runner}?uid=")),
        "{policy}"
    );
}
