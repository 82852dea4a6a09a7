//! Filestore v1 against gcloud (`gcloud filestore instances create/describe/list/update/
//! delete`) and reqwest for the error cases (tier × location, capacity ranges, share and instance
//! names, missing network, 409, 404), the operation's exact `@type` URLs, integer enum encoding,
//! and CREATING → READY under the realistic latency profile with a manual clock.
//!
//! The instance's network must exist in Compute, so these tests create it through the
//! simulator's Compute API first.

use crate::gcloud_support;

use a3ctl_sim::latency::LatencyProfile;
use a3ctl_sim::{SimConfig, SimHandle};
use gcloud_support::{Gcloud, PROJECT, assert_error, send, start};
use serde_json::{Value, json};

/// Creates a custom-mode VPC network through the simulator's Compute API and waits until it
/// exists (moving the clock if the latency profile is not zero).
async fn create_network(handle: &SimHandle, name: &str) {
    let client = reqwest::Client::new();
    let url = format!(
        "{}/compute/v1/projects/{PROJECT}/global/networks",
        handle.base_url()
    );
    let (status, op) = send(
        client
            .post(&url)
            .json(&json!({"name": name, "autoCreateSubnetworks": false})),
    )
    .await;
    assert_eq!(status, 200, "network insert: {op}");
    for _ in 0..20 {
        let (status, _) = send(client.get(format!("{url}/{name}"))).await;
        if status == 200 {
            return;
        }
        handle.advance_secs(60.0);
    }
    panic!("network {name} never appeared");
}

fn instance_body(tier: &str, capacity: i64, network: &str) -> Value {
    json!({
        "tier": tier,
        "fileShares": [{"name": "nfsshare", "capacityGb": capacity.to_string()}],
        "networks": [{"network": network}],
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gcloud_manages_instances() {
    let handle = start().await;
    create_network(&handle, "fs-net").await;
    let gcloud = Gcloud::new(&handle);
    gcloud
        .ok(&[
            "filestore",
            "instances",
            "create",
            "fs1",
            "--zone=us-central1-a",
            "--tier=BASIC_SSD",
            "--file-share=name=nfsshare,capacity=2560GB",
            "--network=name=fs-net",
        ])
        .await;
    let instance = gcloud
        .json(&[
            "filestore",
            "instances",
            "describe",
            "fs1",
            "--zone=us-central1-a",
        ])
        .await;
    assert_eq!(
        instance["name"],
        format!("projects/{PROJECT}/locations/us-central1-a/instances/fs1")
    );
    assert_eq!(instance["state"], "READY");
    assert_eq!(instance["tier"], "BASIC_SSD");
    assert_eq!(instance["fileShares"][0]["capacityGb"], "2560");
    assert_eq!(instance["networks"][0]["network"], "fs-net");
    assert!(
        instance["networks"][0]["ipAddresses"][0].is_string(),
        "{instance}"
    );
    assert!(instance["createTime"].is_string());

    let (ok, _, err) = gcloud
        .run(&[
            "filestore",
            "instances",
            "create",
            "fs1",
            "--zone=us-central1-a",
            "--tier=BASIC_SSD",
            "--file-share=name=nfsshare,capacity=2560GB",
            "--network=name=fs-net",
        ])
        .await;
    assert!(!ok && err.contains("ALREADY_EXISTS"), "{err}");

    gcloud
        .ok(&[
            "filestore",
            "instances",
            "update",
            "fs1",
            "--zone=us-central1-a",
            "--file-share=name=nfsshare,capacity=3072GB",
        ])
        .await;
    let zone_list = gcloud
        .json(&["filestore", "instances", "list", "--zone=us-central1-a"])
        .await;
    let all_list = gcloud.json(&["filestore", "instances", "list"]).await;
    for list in [&zone_list, &all_list] {
        let items = list.as_array().cloned().unwrap_or_default();
        assert_eq!(items.len(), 1, "{list}");
        assert_eq!(items[0]["fileShares"][0]["capacityGb"], "3072");
    }

    gcloud
        .ok(&[
            "filestore",
            "instances",
            "delete",
            "fs1",
            "--zone=us-central1-a",
            "--quiet",
        ])
        .await;
    let (ok, _, err) = gcloud
        .run(&[
            "filestore",
            "instances",
            "describe",
            "fs1",
            "--zone=us-central1-a",
        ])
        .await;
    assert!(!ok && err.contains("NOT_FOUND"), "{err}");
}

#[tokio::test]
async fn instance_rules() {
    let handle = start().await;
    let base = format!("{}/file/v1/projects/{PROJECT}/locations", handle.base_url());
    let client = reqwest::Client::new();
    let create = |location: &str, id: &str, body: Value| {
        client
            .post(format!("{base}/{location}/instances?instanceId={id}"))
            .json(&body)
    };

    // Tier × location.
    for (tier, location) in [
        ("BASIC_HDD", "us-central1"),
        ("BASIC_SSD", "us-central1"),
        ("ZONAL", "us-central1"),
        ("HIGH_SCALE_SSD", "us-central1"),
    ] {
        let got = send(create(location, "fs", instance_body(tier, 10240, "net"))).await;
        assert_error(
            &got,
            400,
            "INVALID_ARGUMENT",
            &format!(
                "Invalid location '{location}' for tier {tier}: instances of tier {tier} must be created in a zone."
            ),
        );
    }
    for tier in ["REGIONAL", "ENTERPRISE"] {
        let got = send(create(
            "us-central1-a",
            "fs",
            instance_body(tier, 1024, "net"),
        ))
        .await;
        assert_error(
            &got,
            400,
            "INVALID_ARGUMENT",
            &format!(
                "Invalid location 'us-central1-a' for tier {tier}: instances of tier {tier} must be created in a region."
            ),
        );
    }
    // Capacity ranges.
    for (tier, location, capacity, min, max) in [
        ("BASIC_HDD", "us-central1-a", 1023, 1024, 65433),
        ("BASIC_HDD", "us-central1-a", 65434, 1024, 65433),
        ("BASIC_SSD", "us-central1-a", 2559, 2560, 65433),
        ("HIGH_SCALE_SSD", "us-central1-a", 102401, 10240, 102400),
        ("ZONAL", "us-central1-a", 512, 1024, 102400),
        ("REGIONAL", "us-central1", 200000, 1024, 102400),
    ] {
        let got = send(create(location, "fs", instance_body(tier, capacity, "net"))).await;
        assert_error(
            &got,
            400,
            "INVALID_ARGUMENT",
            &format!(
                "Invalid capacity {capacity} GB for tier {tier}: the capacity must be between {min} GB and {max} GB."
            ),
        );
    }
    let got = send(create(
        "us-central1-a",
        "fs",
        instance_body("ZONAL", 1300, "net"),
    ))
    .await;
    assert_error(
        &got,
        400,
        "INVALID_ARGUMENT",
        "Invalid capacity 1300 GB for tier ZONAL: the capacity must be in steps of 256 GB from 1024 GB to 9984 GB, or in steps of 2560 GB from 10240 GB to 102400 GB.",
    );
    // Names.
    let got = send(create(
        "us-central1-a",
        "Bad_Name",
        instance_body("BASIC_HDD", 1024, "net"),
    ))
    .await;
    assert_error(
        &got,
        400,
        "INVALID_ARGUMENT",
        "Invalid instance_id 'Bad_Name': the id must be 1 to 63 characters long, start with a lowercase letter, contain only lowercase letters, numbers and hyphens, and not end with a hyphen.",
    );
    let mut body = instance_body("BASIC_HDD", 1024, "net");
    body["fileShares"][0]["name"] = json!("share-with-hyphen");
    let got = send(create("us-central1-a", "fs", body)).await;
    assert_error(
        &got,
        400,
        "INVALID_ARGUMENT",
        "Invalid file share name 'share-with-hyphen': the name must be 1 to 16 characters long, start with a lowercase letter and contain only lowercase letters, numbers and underscores.",
    );
    let got = send(create("us-central1-a", "fs", json!({"fileShares": [{"name": "s", "capacityGb": "1024"}], "networks": [{"network": "net"}]}))).await;
    assert_error(
        &got,
        400,
        "INVALID_ARGUMENT",
        "The instance tier must be specified.",
    );
    let got = send(create("us-central1-a", "fs", json!({"tier": "PLATINUM"}))).await;
    assert_error(
        &got,
        400,
        "INVALID_ARGUMENT",
        "Invalid value at 'instance.tier' (TYPE_ENUM), PLATINUM",
    );
    // The network must exist.
    let got = send(create(
        "us-central1-a",
        "fs",
        instance_body("BASIC_HDD", 1024, "no-such-net"),
    ))
    .await;
    assert_error(
        &got,
        400,
        "INVALID_ARGUMENT",
        &format!("Network 'projects/{PROJECT}/global/networks/no-such-net' does not exist."),
    );
    // Missing instances.
    let name = format!("projects/{PROJECT}/locations/us-central1-a/instances/ghost");
    let got = send(client.get(format!("{base}/us-central1-a/instances/ghost"))).await;
    assert_error(
        &got,
        404,
        "NOT_FOUND",
        &format!("Resource '{name}' was not found"),
    );
    let got = send(client.delete(format!("{base}/us-central1-a/instances/ghost"))).await;
    assert_error(
        &got,
        404,
        "NOT_FOUND",
        &format!("Resource '{name}' was not found"),
    );

    // With the network in place: create, duplicate, capacity decrease refused on a basic tier.
    create_network(&handle, "net").await;
    let (status, op) = send(create(
        "us-central1-a",
        "fs",
        instance_body("BASIC_HDD", 1024, "net"),
    ))
    .await;
    assert_eq!(status, 200, "{op}");
    let got = send(create(
        "us-central1-a",
        "fs",
        instance_body("BASIC_HDD", 1024, "net"),
    ))
    .await;
    assert_error(
        &got,
        409,
        "ALREADY_EXISTS",
        &format!(
            "Resource 'projects/{PROJECT}/locations/us-central1-a/instances/fs' already exists"
        ),
    );
    let got = send(
        client
            .patch(format!(
                "{base}/us-central1-a/instances/fs?updateMask=fileShares"
            ))
            .json(&json!({"fileShares": [{"name": "nfsshare", "capacityGb": "1000"}]})),
    )
    .await;
    assert_error(
        &got,
        400,
        "INVALID_ARGUMENT",
        "Invalid capacity 1000 GB for tier BASIC_HDD: the capacity must be between 1024 GB and 65433 GB.",
    );
    let got = send(
        client
            .patch(format!("{base}/us-central1-a/instances/fs?updateMask=tier"))
            .json(&json!({"tier": "BASIC_SSD"})),
    )
    .await;
    assert_eq!(got.0, 400, "{}", got.1);
    let (status, _) = send(
        client
            .patch(format!(
                "{base}/us-central1-a/instances/fs?updateMask=fileShares"
            ))
            .json(&json!({"fileShares": [{"name": "nfsshare", "capacityGb": "2048"}]})),
    )
    .await;
    assert_eq!(status, 200);
    let got = send(
        client
            .patch(format!(
                "{base}/us-central1-a/instances/fs?updateMask=fileShares"
            ))
            .json(&json!({"fileShares": [{"name": "nfsshare", "capacityGb": "1024"}]})),
    )
    .await;
    assert_error(
        &got,
        400,
        "INVALID_ARGUMENT",
        "Invalid capacity 1024 GB: the capacity of a BASIC_HDD instance cannot be decreased (current capacity 2048 GB).",
    );
}

#[tokio::test]
async fn create_stays_creating_until_its_duration_passes() {
    let config = SimConfig {
        latency: LatencyProfile::realistic(),
        ..SimConfig::default()
    };
    let handle = a3ctl_sim::start(config).await.expect("simulator starts");
    create_network(&handle, "net").await;
    let base = format!("{}/file/v1", handle.base_url());
    let client = reqwest::Client::new();
    let (status, op) = send(
        client
            .post(format!(
                "{base}/projects/{PROJECT}/locations/us-central1-a/instances?instanceId=slow"
            ))
            .json(&instance_body("BASIC_HDD", 1024, "net")),
    )
    .await;
    assert_eq!(status, 200, "{op}");
    // Running: proto3 JSON leaves `done: false` out.
    assert_eq!(op.get("done"), None, "{op}");
    assert_eq!(
        op["metadata"]["@type"],
        "type.googleapis.com/google.cloud.common.OperationMetadata"
    );
    assert_eq!(op["metadata"]["verb"], "create");
    assert_eq!(
        op["metadata"]["target"],
        format!("projects/{PROJECT}/locations/us-central1-a/instances/slow")
    );
    let op_url = format!("{base}/{}", op["name"].as_str().expect("name"));
    let instance_url = format!("{base}/projects/{PROJECT}/locations/us-central1-a/instances/slow");
    // The realistic create takes 600-900 simulated seconds.
    handle.advance_secs(599.0);
    let (_, instance) = send(client.get(&instance_url)).await;
    assert_eq!(instance["state"], "CREATING");
    let (_, still) = send(client.get(&op_url)).await;
    assert_eq!(still.get("done"), None, "{still}");
    assert!(still.get("response").is_none() && still.get("error").is_none());
    handle.advance_secs(301.0);
    let (_, instance) = send(client.get(&instance_url)).await;
    assert_eq!(instance["state"], "READY");
    let (_, done) = send(client.get(&op_url)).await;
    assert_eq!(done["done"], true);
    assert_eq!(
        done["response"]["@type"],
        "type.googleapis.com/google.cloud.filestore.v1.Instance"
    );
    assert_eq!(done["response"]["state"], "READY");
    assert!(done["metadata"]["endTime"].is_string());

    // Delete: DELETING until done, then gone, with an Empty response.
    let (_, deleting) = send(client.delete(&instance_url)).await;
    let (_, instance) = send(client.get(&instance_url)).await;
    assert_eq!(instance["state"], "DELETING");
    handle.advance_secs(600.0);
    let (_, deleted) = send(client.get(format!(
        "{base}/{}",
        deleting["name"].as_str().expect("name")
    )))
    .await;
    assert_eq!(
        deleted["response"]["@type"],
        "type.googleapis.com/google.protobuf.Empty"
    );
    let (status, _) = send(client.get(&instance_url)).await;
    assert_eq!(status, 404);
    let (_, ops) = send(client.get(format!(
        "{base}/projects/{PROJECT}/locations/us-central1-a/operations"
    )))
    .await;
    assert_eq!(ops["operations"].as_array().map(Vec::len), Some(2), "{ops}");
}

#[tokio::test]
async fn integer_enums_round_trip() {
    let handle = start().await;
    create_network(&handle, "net").await;
    let base = format!("{}/file/v1/projects/{PROJECT}/locations", handle.base_url());
    let client = reqwest::Client::new();
    let ints = "%24alt=json%3Benum-encoding%3Dint";
    let body = json!({
        "tier": 7,
        "fileShares": [{"name": "share", "capacityGb": 1280, "nfsExportOptions": [{"ipRanges": ["10.0.0.0/8"], "accessMode": 1, "squashMode": 2}]}],
        "networks": [{"network": "net", "modes": [1], "connectMode": 2}],
    });
    let (status, op) = send(
        client
            .post(format!(
                "{base}/us-central1-b/instances?instanceId=zonal&{ints}"
            ))
            .json(&body),
    )
    .await;
    assert_eq!(status, 200, "{op}");
    let (_, done) = send(client.get(format!(
        "{}/file/v1/{}?{ints}",
        handle.base_url(),
        op["name"].as_str().expect("name")
    )))
    .await;
    assert_eq!(done["response"]["tier"], 7, "{done}");
    assert_eq!(done["response"]["state"], 2);
    let url = format!("{base}/us-central1-b/instances/zonal");
    let (_, numbers) = send(client.get(format!("{url}?{ints}"))).await;
    assert_eq!(numbers["tier"], 7);
    assert_eq!(numbers["state"], 2);
    assert_eq!(numbers["fileShares"][0]["capacityGb"], "1280");
    assert_eq!(
        numbers["fileShares"][0]["nfsExportOptions"][0]["accessMode"],
        1
    );
    assert_eq!(
        numbers["fileShares"][0]["nfsExportOptions"][0]["squashMode"],
        2
    );
    assert_eq!(numbers["networks"][0]["modes"], json!([1]));
    assert_eq!(numbers["networks"][0]["connectMode"], 2);
    let (_, names) = send(client.get(&url)).await;
    assert_eq!(names["tier"], "ZONAL");
    assert_eq!(names["state"], "READY");
    assert_eq!(
        names["fileShares"][0]["nfsExportOptions"][0]["squashMode"],
        "ROOT_SQUASH"
    );
    assert_eq!(
        names["networks"][0]["connectMode"],
        "PRIVATE_SERVICE_ACCESS"
    );
    let (_, listed) = send(client.get(format!("{base}/-/instances?{ints}"))).await;
    assert_eq!(listed["instances"][0]["tier"], 7, "{listed}");
}

#[tokio::test]
async fn scripted_operation_error_ends_the_create_with_an_error() {
    use a3ctl_sim::faults::{FaultAction, FaultConfig, NamedFault, ScriptedFault};
    let handle = start().await;
    create_network(&handle, "net").await;
    handle.set_faults(FaultConfig {
        scripted: vec![ScriptedFault {
            kind: "file.instance".into(),
            verb: "create".into(),
            nth: 1,
            action: FaultAction::Named(NamedFault::OperationError),
        }],
        ..FaultConfig::default()
    });
    let base = format!("{}/file/v1", handle.base_url());
    let client = reqwest::Client::new();
    let (status, op) = send(
        client
            .post(format!(
                "{base}/projects/{PROJECT}/locations/us-central1-a/instances?instanceId=doomed"
            ))
            .json(&instance_body("BASIC_HDD", 1024, "net")),
    )
    .await;
    assert_eq!(status, 200, "{op}");
    let (_, done) =
        send(client.get(format!("{base}/{}", op["name"].as_str().expect("name")))).await;
    assert_eq!(done["done"], true, "{done}");
    assert_eq!(done["error"]["code"], 13, "{done}");
    assert!(done.get("response").is_none());
    let (status, _) = send(client.get(format!(
        "{base}/projects/{PROJECT}/locations/us-central1-a/instances/doomed"
    )))
    .await;
    assert_eq!(status, 404);
}

/// The operations service (`sim/src/aip151.rs`), driven by gcloud: list, describe, cancel of a
/// running create (recorded, the create runs on), and NOT_FOUND for an unknown operation.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gcloud_lists_describes_and_cancels_operations() {
    let handle = a3ctl_sim::start(SimConfig {
        latency: LatencyProfile::realistic(),
        ..SimConfig::default()
    })
    .await
    .expect("simulator starts");
    create_network(&handle, "ops-net").await;
    let gcloud = Gcloud::new(&handle);
    gcloud
        .ok(&[
            "filestore",
            "instances",
            "create",
            "fs-ops",
            "--zone=us-central1-a",
            "--tier=BASIC_HDD",
            "--file-share=name=share,capacity=1TB",
            "--network=name=ops-net",
            "--async",
        ])
        .await;
    let listed = gcloud
        .json(&[
            "filestore",
            "operations",
            "list",
            "--location=us-central1-a",
        ])
        .await;
    let ops = listed.as_array().expect("a list");
    assert_eq!(ops.len(), 1, "{listed}");
    let name = ops[0]["name"].as_str().expect("name").to_string();
    let id = name.rsplit('/').next().unwrap();
    assert_eq!(ops[0].get("done"), None, "still running: {listed}");

    gcloud
        .ok(&[
            "filestore",
            "operations",
            "cancel",
            id,
            "--location=us-central1-a",
        ])
        .await;
    let described = gcloud
        .json(&[
            "filestore",
            "operations",
            "describe",
            id,
            "--location=us-central1-a",
        ])
        .await;
    assert_eq!(described["name"], name);
    assert_eq!(
        described["metadata"]["cancelRequested"], true,
        "{described}"
    );
    assert_eq!(
        described["metadata"]["@type"],
        "type.googleapis.com/google.cloud.common.OperationMetadata"
    );

    let (ok, _, err) = gcloud
        .run(&[
            "filestore",
            "operations",
            "describe",
            "operation-0-missing",
            "--location=us-central1-a",
        ])
        .await;
    assert!(!ok && err.contains("NOT_FOUND"), "{err}");
}
