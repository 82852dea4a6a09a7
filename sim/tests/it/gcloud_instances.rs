//! GKE nodes as Compute instances, driven by gcloud: `gcloud compute instances list` and
//! `describe` of a pool's nodes (their NICs' addresses in their subnetworks, the same as the
//! Kubernetes Nodes' `InternalIP`), `instance-groups managed list-instances`, and what the VMs
//! keep from being deleted — a subnetwork refused by the DELETE itself, a network in its
//! operation, the compact placement policy — until the cluster is gone.

use crate::gcloud_gpu_networking::{Kubectl, cluster, start};
use crate::gcloud_support::{Gcloud, PROJECT, main_network, post_ok, send};
use serde_json::{Value, json};

const ZONE: &str = "us-central1-b";

/// Whether `ip` lies in the IPv4 range `cidr`.
fn within(ip: &str, cidr: &str) -> bool {
    let parse = |a: &str| -> u32 {
        a.split('.')
            .map(|o| o.parse::<u32>().expect("an octet"))
            .fold(0, |acc, o| (acc << 8) | o)
    };
    let (base, prefix) = cidr.split_once('/').expect("a CIDR");
    let prefix: u32 = prefix.parse().expect("a prefix");
    let mask = u32::MAX << (32 - prefix);
    parse(ip) & mask == parse(base) & mask
}

async fn compute(sim: &a3ctl_sim::SimHandle, method: reqwest::Method, path: &str) -> (u16, Value) {
    let url = format!("{}/compute/v1/projects/{PROJECT}/{path}", sim.base_url());
    send(reqwest::Client::new().request(method, url)).await
}

#[tokio::test(flavor = "multi_thread")]
async fn node_vms_are_instances_that_hold_their_subnetworks_networks_and_policy() {
    let sim = start().await;
    let cli = Gcloud::new(&sim);
    main_network(&sim, PROJECT, "us-central1").await;
    post_ok(
        &sim,
        &format!("/compute/v1/projects/{PROJECT}/global/networks"),
        json!({"name": "gpu-0", "autoCreateSubnetworks": false, "mtu": 8244}),
    )
    .await;
    post_ok(
        &sim,
        &format!("/compute/v1/projects/{PROJECT}/regions/us-central1/subnetworks"),
        json!({"name": "gpu-0-sub", "network": "global/networks/gpu-0",
            "ipCidrRange": "192.168.0.0/24"}),
    )
    .await;
    cli.json(&[
        "compute",
        "resource-policies",
        "create",
        "group-placement",
        "compact",
        "--collocation=collocated",
        "--region=us-central1",
    ])
    .await;
    cluster(
        &cli,
        "c1",
        &[
            "--enable-dataplane-v2",
            "--enable-multi-networking",
            "--enable-ip-alias",
        ],
    )
    .await;
    let pool = cli
        .json(&[
            "container",
            "node-pools",
            "create",
            "gpu",
            "--cluster=c1",
            "--location=us-central1",
            &format!("--node-locations={ZONE}"),
            "--machine-type=a3-ultragpu-8g",
            "--num-nodes=2",
            "--accelerator=type=nvidia-h200-141gb,count=8,gpu-driver-version=latest",
            "--enable-gvnic",
            "--reservation-affinity=none",
            "--placement-type=COMPACT",
            "--placement-policy=compact",
            "--additional-node-network=network=gpu-0,subnetwork=gpu-0-sub",
        ])
        .await;
    let pool = pool.get(0).cloned().unwrap_or(pool);
    assert_eq!(pool["status"], "RUNNING", "{pool}");

    // The pool's nodes, as scripts find them.
    let listed = cli
        .json(&[
            "compute",
            "instances",
            "list",
            "--filter=labels.goog-k8s-node-pool-name=gpu",
        ])
        .await;
    let names: Vec<String> = listed
        .as_array()
        .expect("a list")
        .iter()
        .map(|i| i["name"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(names.len(), 2, "{listed}");
    assert!(
        names.iter().all(|n| n.starts_with("gke-c1-gpu-")),
        "{names:?}"
    );
    // The cluster's default pool has its own VM.
    let all = cli.json(&["compute", "instances", "list"]).await;
    assert_eq!(all.as_array().map(Vec::len), Some(3), "{all}");

    let kubectl = Kubectl::new(&sim, "c1").await;
    let nodes = kubectl.pool_nodes("gpu").await;
    let mut primary_ips = vec![];
    for name in &names {
        let vm = cli
            .json(&[
                "compute",
                "instances",
                "describe",
                name,
                &format!("--zone={ZONE}"),
            ])
            .await;
        assert_eq!(vm["kind"], "compute#instance", "{vm}");
        assert_eq!(vm["status"], "RUNNING", "{vm}");
        assert!(
            vm["machineType"]
                .as_str()
                .unwrap()
                .ends_with(&format!("/zones/{ZONE}/machineTypes/a3-ultragpu-8g")),
            "{vm}"
        );
        let nics = vm["networkInterfaces"].as_array().expect("NICs");
        assert_eq!(nics.len(), 2, "{vm}");
        assert!(
            nics[0]["subnetwork"]
                .as_str()
                .unwrap()
                .ends_with("/regions/us-central1/subnetworks/main-sub"),
            "{vm}"
        );
        assert!(
            nics[1]["network"]
                .as_str()
                .unwrap()
                .ends_with("/global/networks/gpu-0"),
            "{vm}"
        );
        let primary = nics[0]["networkIP"].as_str().unwrap();
        let gpu = nics[1]["networkIP"].as_str().unwrap();
        assert!(within(primary, "10.0.0.0/20"), "{primary}");
        assert!(within(gpu, "192.168.0.0/24"), "{gpu}");
        primary_ips.push(primary.to_string());
        assert_eq!(vm["labels"]["goog-k8s-cluster-name"], "c1", "{vm}");
        assert_eq!(vm["labels"]["goog-gke-node"], "", "{vm}");
        assert!(
            vm["resourcePolicies"][0]
                .as_str()
                .unwrap()
                .ends_with("/regions/us-central1/resourcePolicies/compact"),
            "{vm}"
        );
        assert_eq!(vm["guestAccelerators"][0]["acceleratorCount"], 8, "{vm}");
        assert_eq!(vm["scheduling"]["onHostMaintenance"], "TERMINATE", "{vm}");
        // The Kubernetes Node of the VM shows the VM's address.
        let node = nodes
            .iter()
            .find(|n| n["metadata"]["name"] == json!(name))
            .expect("a Node per VM");
        assert_eq!(
            node["status"]["addresses"][0],
            json!({"type": "InternalIP", "address": primary}),
            "{node}"
        );
    }
    assert_ne!(primary_ips[0], primary_ips[1]);

    // The group lists its VMs.
    let group = pool["instanceGroupUrls"][0]
        .as_str()
        .unwrap()
        .rsplit('/')
        .next()
        .unwrap()
        .to_string();
    let managed = cli
        .json(&[
            "compute",
            "instance-groups",
            "managed",
            "list-instances",
            &group,
            &format!("--zone={ZONE}"),
        ])
        .await;
    assert_eq!(managed.as_array().map(Vec::len), Some(2), "{managed}");

    // The GPU subnetwork is refused by the DELETE itself, naming a node.
    let refused = cli
        .fails(&[
            "compute",
            "networks",
            "subnets",
            "delete",
            "gpu-0-sub",
            "--region=us-central1",
            "--quiet",
        ])
        .await;
    assert!(
        refused.contains(&format!(
            "The subnetwork resource 'projects/{PROJECT}/regions/us-central1/subnetworks/gpu-0-sub' \
             is already being used by 'projects/{PROJECT}/zones/{ZONE}/instances/gke-c1-gpu-"
        )),
        "{refused}"
    );
    let (status, body) = compute(
        &sim,
        reqwest::Method::DELETE,
        "regions/us-central1/subnetworks/main-sub",
    )
    .await;
    assert_eq!(status, 400, "{body}");
    assert_eq!(
        body["error"]["errors"][0]["reason"],
        "resourceInUseByAnotherResource"
    );
    // The placement policy too.
    let refused = cli
        .fails(&[
            "compute",
            "resource-policies",
            "delete",
            "compact",
            "--region=us-central1",
            "--quiet",
        ])
        .await;
    assert!(
        refused.contains("is already being used by") && refused.contains("/instances/gke-c1-gpu-"),
        "{refused}"
    );

    // The network's DELETE is accepted; its operation fails with the in-use error, which
    // gcloud prints.
    let refused = cli
        .fails(&["compute", "networks", "delete", "gpu-0", "--quiet"])
        .await;
    assert!(
        refused.contains(&format!(
            "The network resource 'projects/{PROJECT}/global/networks/gpu-0' is already being \
             used by 'projects/{PROJECT}/regions/us-central1/subnetworks/gpu-0-sub'"
        )),
        "{refused}"
    );
    let (status, op) = compute(&sim, reqwest::Method::DELETE, "global/networks/gpu-0").await;
    assert_eq!(status, 200, "{op}");
    assert_eq!(op["operationType"], "delete", "{op}");
    let name = op["name"].as_str().unwrap();
    let (_, done) = compute(
        &sim,
        reqwest::Method::POST,
        &format!("global/operations/{name}/wait"),
    )
    .await;
    assert_eq!(done["status"], "DONE", "{done}");
    assert_eq!(
        done["error"]["errors"][0]["code"], "RESOURCE_IN_USE_BY_ANOTHER_RESOURCE",
        "{done}"
    );
    assert_eq!(done["httpErrorStatusCode"], 400, "{done}");
    let (status, _) = compute(&sim, reqwest::Method::GET, "global/networks/gpu-0").await;
    assert_eq!(status, 200);

    // Once the cluster is gone, its VMs are, and the deletes go through.
    cli.ok(&[
        "container",
        "clusters",
        "delete",
        "c1",
        "--location=us-central1",
        "--quiet",
    ])
    .await;
    let none = cli.json(&["compute", "instances", "list"]).await;
    assert_eq!(none, json!([]));
    cli.ok(&[
        "compute",
        "networks",
        "subnets",
        "delete",
        "gpu-0-sub",
        "--region=us-central1",
        "--quiet",
    ])
    .await;
    cli.ok(&["compute", "networks", "delete", "gpu-0", "--quiet"])
        .await;
    cli.ok(&[
        "compute",
        "resource-policies",
        "delete",
        "compact",
        "--region=us-central1",
        "--quiet",
    ])
    .await;
    assert_eq!(sim.inventory()["compute"]["resourcePolicies"], json!([]));
}
