//! A3 Ultra and A4 on the simulated Compute Engine, driven by gcloud: their machine and
//! accelerator types in their zones, the RoCE network profiles, and RoCE networks (profile, MTU,
//! subnets, and the firewall rules and routers such a network refuses). Raw requests cover what
//! gcloud cannot send (a partial profile path, a PATCH of the profile, paging).

use crate::gcloud_support::{Gcloud, PROJECT, assert_error, post_ok, send, start};
use a3ctl_sim::SimConfig;
use a3ctl_sim::quotas::QuotaConfig;
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

    // The numeric id of `selfLinkWithId` names the profile too.
    let id = profile["id"].as_str().expect("an id");
    let by_id = gcloud
        .json(&["compute", "network-profiles", "describe", id])
        .await;
    assert_eq!(by_id["name"], ROCE);

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
    let zero = send(client.get(compute_url(&sim, "global/networkProfiles?maxResults=0"))).await;
    assert_eq!(names(&zero.1["items"]), expected);
    assert_error(
        &send(client.get(compute_url(&sim, "global/networkProfiles?maxResults=501"))).await,
        400,
        "INVALID_ARGUMENT",
        "Invalid value for field 'maxResults': '501'. Must be between 0 and 500.",
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_roce_network_takes_its_profile_and_eight_subnets_and_refuses_firewall_rules() {
    let sim = start().await;
    let gcloud = Gcloud::new(&sim);
    gcloud
        .ok(&[
            "compute",
            "networks",
            "create",
            "rdma",
            &format!("--network-profile={ROCE}"),
            "--subnet-mode=custom",
            "--mtu=8896",
        ])
        .await;
    let network = gcloud
        .json(&["compute", "networks", "describe", "rdma"])
        .await;
    assert_eq!(
        network["networkProfile"],
        format!(
            "https://www.googleapis.com/compute/v1/projects/{PROJECT}/global/networkProfiles/{ROCE}"
        )
    );
    assert_eq!(network["mtu"], 8896);
    assert_eq!(network["autoCreateSubnetworks"], false);

    // Cluster Toolkit's gpu-rdma-vpc layout: 192.168.128.0/18 in eight /21s (the first by
    // gcloud, the other seven by REST to keep the test short).
    gcloud
        .ok(&[
            "compute",
            "networks",
            "subnets",
            "create",
            "rdma-sub-0",
            "--network=rdma",
            "--region=us-central1",
            "--range=192.168.128.0/21",
        ])
        .await;
    for i in 1..8u32 {
        post_ok(
            &sim,
            &format!("/compute/v1/projects/{PROJECT}/regions/us-central1/subnetworks"),
            json!({"name": format!("rdma-sub-{i}"), "network": "global/networks/rdma",
                   "ipCidrRange": format!("192.168.{}.0/21", 128 + 8 * i)}),
        )
        .await;
    }
    let subnets = gcloud
        .json(&["compute", "networks", "subnets", "list", "--network=rdma"])
        .await;
    assert_eq!(subnets.as_array().map(Vec::len), Some(8), "{subnets}");
    assert!(
        subnets
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s["ipCidrRange"] == "192.168.184.0/21")
    );

    // A subnet outside the profile zone's region.
    let err = gcloud
        .fails(&[
            "compute",
            "networks",
            "subnets",
            "create",
            "rdma-eu",
            "--network=rdma",
            "--region=europe-west4",
            "--range=192.168.192.0/21",
        ])
        .await;
    assert!(
        err.contains(&format!(
            "Invalid value for field 'resource.region': 'europe-west4'. Subnetworks of network 'projects/{PROJECT}/global/networks/rdma' must be in region 'us-central1', the region of zone 'us-central1-b' of its network profile '{ROCE}'."
        )),
        "{err}"
    );
    // Alias IP ranges, dual stack and Private Google Access are blocked by the profile.
    let err = gcloud
        .fails(&[
            "compute",
            "networks",
            "subnets",
            "create",
            "rdma-alias",
            "--network=rdma",
            "--region=us-central1",
            "--range=192.168.192.0/21",
            "--secondary-range=pods=10.8.0.0/16",
        ])
        .await;
    assert!(
        err.contains(&format!(
            "Network profile '{ROCE}' does not allow alias IP ranges."
        )),
        "{err}"
    );
    let err = gcloud
        .fails(&[
            "compute",
            "networks",
            "subnets",
            "create",
            "rdma-dual",
            "--network=rdma",
            "--region=us-central1",
            "--range=192.168.192.0/21",
            "--stack-type=IPV4_IPV6",
            "--ipv6-access-type=INTERNAL",
        ])
        .await;
    assert!(
        err.contains(&format!(
            "Invalid value for field 'resource.stackType': 'IPV4_IPV6'. Network profile '{ROCE}' supports only IPV4_ONLY subnetworks."
        )),
        "{err}"
    );
    let err = gcloud
        .fails(&[
            "compute",
            "networks",
            "subnets",
            "create",
            "rdma-pga",
            "--network=rdma",
            "--region=us-central1",
            "--range=192.168.192.0/21",
            "--enable-private-ip-google-access",
        ])
        .await;
    assert!(
        err.contains(&format!(
            "Network profile '{ROCE}' does not allow Private Google Access."
        )),
        "{err}"
    );

    // ... nor can an update of an existing subnet add them.
    let err = gcloud
        .fails(&[
            "compute",
            "networks",
            "subnets",
            "update",
            "rdma-sub-0",
            "--region=us-central1",
            "--add-secondary-ranges=pods=10.8.0.0/16",
        ])
        .await;
    assert!(
        err.contains(&format!(
            "Network profile '{ROCE}' does not allow alias IP ranges."
        )),
        "{err}"
    );
    // VPC firewall rules and Cloud Routers are refused on it.
    let err = gcloud
        .fails(&[
            "compute",
            "firewall-rules",
            "create",
            "rdma-internal",
            "--network=rdma",
            "--allow=tcp,udp,icmp",
            "--source-ranges=192.168.128.0/18",
        ])
        .await;
    assert!(
        err.contains(&format!(
            "VPC firewall rules are not supported in network 'projects/{PROJECT}/global/networks/rdma' with network profile '{ROCE}'. Use a regional network firewall policy of type RDMA_ROCE_POLICY instead."
        )),
        "{err}"
    );
    let err = gcloud
        .fails(&[
            "compute",
            "routers",
            "create",
            "rdma-router",
            "--network=rdma",
            "--region=us-central1",
        ])
        .await;
    assert!(
        err.contains(&format!(
            "Cloud Router is not supported in network 'projects/{PROJECT}/global/networks/rdma' with network profile '{ROCE}'."
        )),
        "{err}"
    );
    let rules = gcloud.json(&["compute", "firewall-rules", "list"]).await;
    assert_eq!(rules, json!([]));

    // The profile is set at creation only: a PATCH that changes it is refused, one that repeats
    // it (in another spelling) changes nothing.
    let client = reqwest::Client::new();
    assert_error(
        &send(
            client
                .patch(compute_url(&sim, "global/networks/rdma"))
                .json(&json!({"networkProfile": format!("projects/{PROJECT}/global/networkProfiles/europe-west4-b-vpc-roce")})),
        )
        .await,
        400,
        "INVALID_ARGUMENT",
        &format!(
            "Invalid value for field 'resource.networkProfile': 'projects/{PROJECT}/global/networkProfiles/europe-west4-b-vpc-roce'. The network profile of a network can only be set when the network is created."
        ),
    );
    let (status, _) = send(
        client
            .patch(compute_url(&sim, "global/networks/rdma"))
            .json(&json!({"networkProfile": format!("projects/{PROJECT}/global/networkProfiles/{ROCE}"), "description": "rdma"})),
    )
    .await;
    assert_eq!(status, 200);
    let network = gcloud
        .json(&["compute", "networks", "describe", "rdma"])
        .await;
    assert_eq!(network["description"], "rdma");
    assert_eq!(
        network["networkProfile"],
        format!(
            "https://www.googleapis.com/compute/v1/projects/{PROJECT}/global/networkProfiles/{ROCE}"
        )
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn roce_networks_check_their_profile_subnet_mode_and_mtu() {
    let sim = start().await;
    let gcloud = Gcloud::new(&sim);
    let client = reqwest::Client::new();

    // A partial profile path is accepted and stored as the canonical URL; the MTU defaults to
    // 8896 on a RoCE network.
    let (status, _) = send(
        client
            .post(compute_url(&sim, "global/networks"))
            .json(&json!({"name": "partial", "autoCreateSubnetworks": false,
                          "networkProfile": format!("projects/{PROJECT}/global/networkProfiles/europe-west4-b-vpc-roce")})),
    )
    .await;
    assert_eq!(status, 200);
    let network = gcloud
        .json(&["compute", "networks", "describe", "partial"])
        .await;
    assert_eq!(
        network["networkProfile"],
        format!(
            "https://www.googleapis.com/compute/v1/projects/{PROJECT}/global/networkProfiles/europe-west4-b-vpc-roce"
        )
    );
    assert_eq!(network["mtu"], 8896);
    // A plain network keeps Google's default.
    gcloud
        .ok(&[
            "compute",
            "networks",
            "create",
            "plain",
            "--subnet-mode=custom",
        ])
        .await;
    let plain = gcloud
        .json(&["compute", "networks", "describe", "plain"])
        .await;
    assert_eq!(plain["mtu"], 1460);
    assert!(plain.get("networkProfile").is_none(), "{plain}");

    // A profile that does not exist: us-central1-a offers no RDMA machine type.
    let err = gcloud
        .fails(&[
            "compute",
            "networks",
            "create",
            "nowhere",
            "--network-profile=us-central1-a-vpc-roce",
            "--subnet-mode=custom",
        ])
        .await;
    assert!(
        err.contains("Invalid value for field 'resource.networkProfile': ")
            && err.contains(
                "global/networkProfiles/us-central1-a-vpc-roce'. The referenced network profile resource cannot be found."
            ),
        "{err}"
    );
    // A RoCE network cannot be auto mode.
    let err = gcloud
        .fails(&[
            "compute",
            "networks",
            "create",
            "auto-roce",
            &format!("--network-profile={ROCE}"),
            "--subnet-mode=auto",
        ])
        .await;
    assert!(
        err.contains(&format!(
            "Invalid value for field 'resource.autoCreateSubnetworks': 'true'. Network profile '{ROCE}' does not allow auto mode subnetworks; create the network in custom subnet mode."
        )),
        "{err}"
    );
    // 8896 is the largest MTU.
    let err = gcloud
        .fails(&[
            "compute",
            "networks",
            "create",
            "too-big",
            &format!("--network-profile={ROCE}"),
            "--subnet-mode=custom",
            "--mtu=8897",
        ])
        .await;
    assert!(
        err.contains(
            "Invalid value for field 'resource.mtu': '8897'. The MTU must be in the range [1300, 8896]."
        ),
        "{err}"
    );
    // A profile reference that is not a string: refused by the body check against the discovery
    // document, before the handler.
    assert_error(
        &send(
            client.post(compute_url(&sim, "global/networks")).json(
                &json!({"name": "typed", "autoCreateSubnetworks": false, "networkProfile": 7}),
            ),
        )
        .await,
        400,
        "INVALID_ARGUMENT",
        "Invalid value at 'network_resource.network_profile' (TYPE_STRING), 7",
    );
    let listed = gcloud.json(&["compute", "networks", "list"]).await;
    assert_eq!(names(&listed), ["partial", "plain"]);
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

#[tokio::test(flavor = "multi_thread")]
async fn a3_ultra_and_a4_reservations_need_their_zone_accelerators_and_family_quota() {
    let sim = a3ctl_sim::start(SimConfig {
        quotas: QuotaConfig::default().with_gpu_family("NVIDIA_B200", Some("us-central1"), 8.0),
        ..SimConfig::default()
    })
    .await
    .expect("simulator starts");
    let gcloud = Gcloud::new(&sim);

    // Two A3 Ultra VMs in us-central1-b hold 448 vCPUs there.
    let h200 = ["--accelerator=count=8,type=nvidia-h200-141gb"];
    reserve(
        &gcloud,
        true,
        "ultra",
        "us-central1-b",
        "a3-ultragpu-8g",
        "2",
        &h200,
    )
    .await;
    let region = gcloud
        .json(&["compute", "regions", "describe", "us-central1"])
        .await;
    let quotas = region["quotas"].as_array().expect("quotas");
    let cpus = quotas.iter().find(|q| q["metric"] == "CPUS").expect("CPUS");
    assert_eq!(cpus["usage"], 448.0, "{region}");
    let metrics: Vec<&str> = quotas.iter().filter_map(|q| q["metric"].as_str()).collect();
    assert!(
        metrics.contains(&"PREEMPTIBLE_NVIDIA_H200_GPUS")
            && metrics.contains(&"PREEMPTIBLE_NVIDIA_B200_GPUS"),
        "{metrics:?}"
    );

    // Not offered in us-central1-a.
    let err = reserve(
        &gcloud,
        false,
        "ultra-a",
        "us-central1-a",
        "a3-ultragpu-8g",
        "1",
        &[],
    )
    .await;
    assert!(
        err.contains(
            "Machine type with name 'a3-ultragpu-8g' does not exist in zone 'us-central1-a'."
        ),
        "{err}"
    );
    // A4 comes with B200s only.
    let err = reserve(
        &gcloud,
        false,
        "a4-wrong",
        "us-central1-b",
        "a4-highgpu-8g",
        "1",
        &h200,
    )
    .await;
    assert!(
        err.contains(
            "[nvidia-h200-141gb, a4-highgpu-8g] features are not compatible for creating instance."
        ),
        "{err}"
    );
    // One A4 VM fits the 8 B200s of the family quota, a second does not.
    reserve(
        &gcloud,
        true,
        "a4",
        "us-central1-b",
        "a4-highgpu-8g",
        "1",
        &[],
    )
    .await;
    let err = reserve(
        &gcloud,
        false,
        "a4-more",
        "us-central1-b",
        "a4-highgpu-8g",
        "1",
        &[],
    )
    .await;
    assert!(
        err.contains("Quota 'GPUS_PER_GPU_FAMILY' exceeded.  Limit: 8.0 in region us-central1."),
        "{err}"
    );
    // The family quota has a B200 and an H200 family.
    let family = gcloud
        .json(&[
            "beta",
            "quotas",
            "info",
            "describe",
            "GPUS-PER-GPU-FAMILY-per-project-region",
            "--service=compute.googleapis.com",
            &format!("--project={PROJECT}"),
        ])
        .await;
    let text = family.to_string();
    assert!(
        text.contains("\"NVIDIA_B200\"") && text.contains("\"NVIDIA_H200\""),
        "{family}"
    );
}

/// `gcloud compute reservations create NAME --zone=ZONE --machine-type=MACHINE --vm-count=COUNT
/// --require-specific-reservation EXTRA...`, which must succeed (`ok`) or fail; returns stderr.
async fn reserve(
    gcloud: &Gcloud,
    ok: bool,
    name: &str,
    zone: &str,
    machine: &str,
    count: &str,
    extra: &[&str],
) -> String {
    let zone = format!("--zone={zone}");
    let machine = format!("--machine-type={machine}");
    let count = format!("--vm-count={count}");
    let mut args = vec![
        "compute",
        "reservations",
        "create",
        name,
        &zone,
        &machine,
        &count,
        "--require-specific-reservation",
    ];
    args.extend_from_slice(extra);
    if ok {
        gcloud.ok(&args).await;
        String::new()
    } else {
        gcloud.fails(&args).await
    }
}
