//! A3 Ultra and A4 on the simulated Compute Engine, driven by gcloud: their machine and
//! accelerator types in their zones and the RoCE network profiles. Raw requests cover what gcloud
//! cannot send (paging).

use crate::gcloud_support::{Gcloud, PROJECT, assert_error, send, start};
use serde_json::{Value, json};

const ROCE: &str = "us-central1-b-vpc-roce";

fn compute_url(sim: &a3ctl_sim::SimHandle, path: &str) -> String {
    format!("{}/compute/v1/projects/{PROJECT}/{path}", sim.base_url())
}

fn names(list: &Value) -> Vec<String> {
    list.as_array()
        .expect("a list")
        .iter()
        .map(|i| i["name"].as_str().unwrap_or("").to_string())
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn network_profiles_list_and_describe_one_roce_profile_per_rdma_zone() {
    let sim = start().await;
    let gcloud = Gcloud::new(&sim);

    let listed = gcloud.json(&["compute", "network-profiles", "list"]).await;
    let mut expected: Vec<String> = a3ctl_sim::geo::rdma_zones()
        .iter()
        .map(|zone| format!("{zone}-vpc-roce"))
        .collect();
    expected.sort();
    assert_eq!(names(&listed), expected);
    assert!(expected.contains(&"europe-west4-a-vpc-roce".to_string()));
    // gcloud follows the pages when they are small.
    let paged = gcloud
        .json(&["compute", "network-profiles", "list", "--page-size=4"])
        .await;
    assert_eq!(names(&paged), expected);
    let filtered = gcloud
        .json(&[
            "compute",
            "network-profiles",
            "list",
            "--filter=location.name=us-west3-c",
        ])
        .await;
    assert_eq!(names(&filtered), ["us-west3-c-vpc-roce"]);
    let table = gcloud.ok(&["compute", "network-profiles", "list"]).await;
    assert!(table.starts_with("NAME"), "{table}");
    assert!(table.contains(ROCE), "{table}");

    let profile = gcloud
        .json(&["compute", "network-profiles", "describe", ROCE])
        .await;
    assert_eq!(profile["kind"], "compute#networkProfile");
    assert_eq!(
        profile["selfLink"],
        format!(
            "https://www.googleapis.com/compute/v1/projects/{PROJECT}/global/networkProfiles/{ROCE}"
        )
    );
    assert_eq!(
        profile["location"],
        json!({"name": "us-central1-b", "scope": "ZONE"})
    );
    assert_eq!(
        profile["profileType"],
        json!({"networkType": "RDMA", "rdmaSubtype": "ROCE"})
    );
    let features = &profile["features"];
    assert_eq!(
        features["allowVpcFirewallRules"],
        "VPC_FIREWALL_RULES_BLOCKED"
    );
    assert_eq!(features["interfaceTypes"], json!(["MRDMA"]));
    assert_eq!(features["subnetworkStackTypes"], json!(["IPV4_ONLY"]));
    assert_eq!(
        features["allowMultiNicInSameNetwork"],
        "MULTI_NIC_IN_SAME_NETWORK_ALLOWED"
    );
    assert_eq!(features["firewallPolicyTypes"], json!(["RDMA_ROCE_POLICY"]));

    // A zone without an RDMA machine type has no RoCE profile.
    let err = gcloud
        .fails(&[
            "compute",
            "network-profiles",
            "describe",
            "us-central1-a-vpc-roce",
        ])
        .await;
    assert!(
        err.contains(&format!(
            "The resource 'projects/{PROJECT}/global/networkProfiles/us-central1-a-vpc-roce' was not found"
        )),
        "{err}"
    );

    // Paging by REST: a token this list did not give out is refused.
    let client = reqwest::Client::new();
    let first = send(client.get(compute_url(&sim, "global/networkProfiles?maxResults=2"))).await;
    assert_eq!(first.0, 200);
    assert_eq!(names(&first.1["items"]), expected[..2]);
    let token = first.1["nextPageToken"].as_str().expect("a next page");
    let second = send(client.get(compute_url(
        &sim,
        &format!("global/networkProfiles?maxResults=2&pageToken={token}"),
    )))
    .await;
    assert_eq!(names(&second.1["items"]), expected[2..4]);
    assert_error(
        &send(client.get(compute_url(&sim, "global/networkProfiles?pageToken=nope"))).await,
        400,
        "INVALID_ARGUMENT",
        "Invalid value for field 'pageToken': 'nope'. Invalid page token.",
    );
    assert_error(
        &send(client.get(compute_url(&sim, "global/networkProfiles?maxResults=501"))).await,
        400,
        "INVALID_ARGUMENT",
        "Invalid value for field 'maxResults': '501'. Must be between 0 and 500.",
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a3_ultra_and_a4_machine_and_accelerator_types_are_served_in_their_zones() {
    let sim = start().await;
    let gcloud = Gcloud::new(&sim);

    let a4 = gcloud
        .json(&[
            "compute",
            "machine-types",
            "describe",
            "a4-highgpu-8g",
            "--zone=us-central1-b",
        ])
        .await;
    assert_eq!(a4["guestCpus"], 224);
    assert_eq!(a4["memoryMb"], 3968 * 1024);
    assert_eq!(
        a4["accelerators"],
        json!([{"guestAcceleratorType": "nvidia-b200", "guestAcceleratorCount": 8}])
    );
    let ultra = gcloud
        .json(&[
            "compute",
            "machine-types",
            "describe",
            "a3-ultragpu-8g",
            "--zone=europe-west1-b",
        ])
        .await;
    assert_eq!(ultra["guestCpus"], 224);
    assert_eq!(ultra["memoryMb"], 2952 * 1024);
    assert_eq!(
        ultra["accelerators"][0]["guestAcceleratorType"],
        "nvidia-h200-141gb"
    );
    // Not offered there: 404.
    let err = gcloud
        .fails(&[
            "compute",
            "machine-types",
            "describe",
            "a4-highgpu-8g",
            "--zone=us-central1-a",
        ])
        .await;
    assert!(
        err.contains(&format!(
            "The resource 'projects/{PROJECT}/zones/us-central1-a/machineTypes/a4-highgpu-8g' was not found"
        )),
        "{err}"
    );

    // One zone's list (machineTypes.list) and every zone's (aggregatedList).
    let in_zone = gcloud
        .json(&[
            "compute",
            "machine-types",
            "list",
            "--zones=us-central1-b",
            "--filter=name~^a[34]-",
        ])
        .await;
    assert_eq!(names(&in_zone), ["a3-ultragpu-8g", "a4-highgpu-8g"]);
    let everywhere = gcloud
        .json(&[
            "compute",
            "machine-types",
            "list",
            "--filter=name=a4-highgpu-8g",
        ])
        .await;
    let mut zones: Vec<String> = everywhere
        .as_array()
        .expect("a list")
        .iter()
        .map(|m| m["zone"].as_str().unwrap_or("").to_string())
        .collect();
    zones.sort();
    let mut expected: Vec<String> = a3ctl_sim::geo::gpu_zones("a4-highgpu-8g")
        .expect("a GPU type")
        .iter()
        .map(|z| z.to_string())
        .collect();
    expected.sort();
    assert_eq!(zones, expected);
    // gcloud reports a zone's failed list as a warning and lists the rest.
    let (_, out, err) = gcloud
        .run(&["compute", "machine-types", "list", "--zones=mars-1a"])
        .await;
    assert!(
        out.is_empty()
            && err.contains("Some requests did not succeed.")
            && err.contains("Invalid value for field 'zone': 'mars-1a'. Unknown zone."),
        "{out}{err}"
    );

    // Accelerator types.
    let h200 = gcloud
        .json(&[
            "compute",
            "accelerator-types",
            "describe",
            "nvidia-h200-141gb",
            "--zone=asia-south1-b",
        ])
        .await;
    assert_eq!(h200["maximumCardsPerInstance"], 8);
    assert_eq!(h200["description"], "NVIDIA H200 141GB");
    let err = gcloud
        .fails(&[
            "compute",
            "accelerator-types",
            "describe",
            "nvidia-b200",
            "--zone=us-central1-a",
        ])
        .await;
    assert!(
        err.contains(&format!(
            "The resource 'projects/{PROJECT}/zones/us-central1-a/acceleratorTypes/nvidia-b200' was not found"
        )),
        "{err}"
    );
    let b200 = gcloud
        .json(&[
            "compute",
            "accelerator-types",
            "list",
            "--filter=name=nvidia-b200",
        ])
        .await;
    assert_eq!(
        b200.as_array().map(Vec::len),
        Some(expected.len()),
        "{b200}"
    );
    let central = gcloud
        .json(&[
            "compute",
            "accelerator-types",
            "list",
            "--filter=zone:us-central1-b",
        ])
        .await;
    assert_eq!(names(&central), ["nvidia-b200", "nvidia-h200-141gb"]);
    // One zone's list by REST (gcloud lists accelerator types through aggregatedList).
    let (status, zonal) = send(reqwest::Client::new().get(compute_url(
        &sim,
        "zones/us-east4-b/acceleratorTypes?maxResults=1",
    )))
    .await;
    assert_eq!(status, 200);
    assert_eq!(zonal["kind"], "compute#acceleratorTypeList");
    assert_eq!(names(&zonal["items"]), ["nvidia-b200"]);
    assert!(zonal["nextPageToken"].is_string(), "{zonal}");
}
