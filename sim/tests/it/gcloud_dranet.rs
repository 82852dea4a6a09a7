//! GKE-managed GPU networking ("DRANET") and `resource.k8s.io`, driven by gcloud (and by REST
//! where gcloud 528 has no flag: `--accelerator-network-profile` came later), watched with
//! kubectl: an A4 pool with `acceleratorNetworkProfile: auto`, the `mrdma.google.com`
//! DeviceClass, the nodes' ResourceSlices and ResourceClaimTemplates applied with kubectl; every
//! refusal of the profile (version, Dataplane V2, additional networks, machine type, value,
//! immutability); the `resource.k8s.io` versions a cluster serves by minor and
//! `enableK8sBetaApis`, set at create and by update.

use crate::gcloud_gpu_networking::{
    Kubectl, REGION, bad_request, cluster, container, get, pool, post, start,
};
use crate::gcloud_support::{Gcloud, PROJECT, main_network, post_ok, send};
use serde_json::{Value, json};

const TEMPLATE_V1: &str = r#"
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata:
  name: all-mrdma
spec:
  spec:
    devices:
      requests:
      - name: req-mrdma
        exactly:
          deviceClassName: mrdma.google.com
          allocationMode: All
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata:
  name: eight-mrdma
spec:
  spec:
    devices:
      requests:
      - name: req-mrdma
        exactly:
          deviceClassName: mrdma.google.com
          allocationMode: ExactCount
          count: 8
"#;

#[tokio::test]
async fn a4_pool_with_gke_managed_rdma_serves_device_class_and_resource_slices() {
    let sim = start().await;
    let cli = Gcloud::new(&sim);
    main_network(&sim, PROJECT, REGION).await;
    let created = cluster(
        &cli,
        "c1",
        &[
            "--enable-dataplane-v2",
            "--release-channel=rapid",
            "--cluster-version=1.34",
        ],
    )
    .await;
    assert_eq!(created["currentMasterVersion"], "1.34.1-gke.1829001");
    // gcloud 528 has no `--accelerator-network-profile`: the pool is created over REST.
    let mut body = pool(
        "a4",
        "a4-highgpu-8g",
        json!({"acceleratorNetworkProfile": "auto"}),
        None,
    );
    body["nodePool"]["config"]["accelerators"] = json!([{"acceleratorType": "nvidia-b200",
        "acceleratorCount": "8", "gpuDriverInstallationConfig": {"gpuDriverVersion": "LATEST"}}]);
    post_ok(&sim, &container("clusters/c1/nodePools"), body).await;
    let described = cli
        .json(&[
            "container",
            "node-pools",
            "describe",
            "a4",
            "--cluster=c1",
            "--location=us-central1",
        ])
        .await;
    assert_eq!(described["status"], "RUNNING", "{described}");
    assert_eq!(
        described["networkConfig"]["acceleratorNetworkProfile"],
        "auto"
    );
    let accelerator = &described["config"]["accelerators"][0];
    assert_eq!(accelerator["acceleratorType"], "nvidia-b200");
    assert_eq!(accelerator["acceleratorCount"], "8");

    // Nodes: the B200 label, 224 vCPUs, and 8 GPUs once the driver is in.
    sim.advance_secs(120.0);
    let kubectl = Kubectl::new(&sim, "c1").await;
    let nodes = kubectl
        .json(&["get", "nodes", "-l", "cloud.google.com/gke-nodepool=a4"])
        .await;
    let nodes = nodes["items"].as_array().unwrap().clone();
    assert_eq!(nodes.len(), 2);
    for node in &nodes {
        let labels = &node["metadata"]["labels"];
        assert_eq!(labels["cloud.google.com/gke-accelerator"], "nvidia-b200");
        assert_eq!(labels["cloud.google.com/gke-networking-dra-driver"], "true");
        assert_eq!(node["status"]["capacity"]["cpu"], "224");
        assert_eq!(node["status"]["allocatable"]["nvidia.com/gpu"], "8");
    }

    // v1 of resource.k8s.io on 1.34, no beta version (none enabled).
    assert_eq!(kubectl.resource_versions().await, ["resource.k8s.io/v1"]);
    let classes = kubectl.ok(&["get", "deviceclasses"]).await;
    assert!(classes.contains("mrdma.google.com"), "{classes}");
    let slices = kubectl.json(&["get", "resourceslices"]).await;
    let slices = slices["items"].as_array().unwrap().clone();
    assert_eq!(slices.len(), 2);
    for slice in &slices {
        assert_eq!(slice["apiVersion"], "resource.k8s.io/v1");
        assert_eq!(slice["spec"]["driver"], "mrdma.google.com");
        assert_eq!(slice["spec"]["devices"].as_array().unwrap().len(), 8);
        let node = slice["spec"]["nodeName"].as_str().unwrap();
        assert!(
            nodes.iter().any(|n| n["metadata"]["name"] == node),
            "{node}"
        );
    }

    // ResourceClaimTemplates as the managed-RDMA NCCL test writes them.
    kubectl
        .ok_stdin(&["apply", "-f", "-"], Some(TEMPLATE_V1))
        .await;
    let templates = kubectl.json(&["get", "resourceclaimtemplates"]).await;
    let requests: Vec<&Value> = templates["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| &t["spec"]["spec"]["devices"]["requests"][0]["exactly"])
        .collect();
    assert_eq!(requests.len(), 2);
    assert_eq!(requests[0]["allocationMode"], "All");
    assert_eq!(requests[1]["count"], 8);
    let wrong = TEMPLATE_V1.replace("allocationMode: All", "allocationMode: Some");
    let (ok, _, err) = kubectl.run(&["apply", "-f", "-"], Some(&wrong)).await;
    assert!(!ok);
    assert!(
        err.contains(
            "spec.spec.devices.requests[0].exactly.allocationMode: Unsupported value: \"Some\""
        ),
        "{err}"
    );

    // The profile is immutable: an existing pool cannot take it on.
    let request = reqwest::Client::new()
        .put(format!(
            "{}{}",
            sim.base_url(),
            container("clusters/c1/nodePools/default-pool")
        ))
        .json(&json!({"nodeNetworkConfig": {"acceleratorNetworkProfile": "auto"}}));
    assert_eq!(
        bad_request(&send(request).await),
        "The accelerator network profile of an existing node pool cannot be changed; create a \
         new node pool instead."
    );

    // The pool's deletion takes its slices away; GKE's DeviceClass stays.
    let (status, _) = send(reqwest::Client::new().delete(format!(
        "{}{}",
        sim.base_url(),
        container("clusters/c1/nodePools/a4")
    )))
    .await;
    assert_eq!(status, 200);
    sim.advance_secs(1.0);
    let _ = get(&sim, "clusters/c1").await;
    let slices = kubectl.json(&["get", "resourceslices"]).await;
    assert_eq!(slices["items"].as_array().unwrap().len(), 0, "{slices}");
    kubectl
        .ok(&["get", "deviceclass", "mrdma.google.com"])
        .await;
}

#[tokio::test]
async fn accelerator_network_profile_refusals_answer_with_the_rule_broken() {
    let sim = start().await;
    let cli = Gcloud::new(&sim);
    main_network(&sim, PROJECT, REGION).await;
    let auto = json!({"acceleratorNetworkProfile": "auto"});
    // Legacy datapath on 1.34: Dataplane V2 is missing.
    cluster(
        &cli,
        "legacy",
        &["--release-channel=rapid", "--cluster-version=1.34"],
    )
    .await;
    let answer = post(
        &sim,
        "clusters/legacy/nodePools",
        pool("a4", "a4-highgpu-8g", auto.clone(), None),
    )
    .await;
    assert_eq!(
        bad_request(&answer),
        "Accelerator network profile requires GKE Dataplane V2 to be enabled (datapathProvider \
         ADVANCED_DATAPATH)."
    );
    // Dataplane V2 with multi-networking, control plane 1.34.1-gke.1829001.
    cluster(
        &cli,
        "dpv2",
        &[
            "--enable-dataplane-v2",
            "--enable-multi-networking",
            "--enable-ip-alias",
            "--release-channel=rapid",
            "--cluster-version=1.34",
        ],
    )
    .await;
    // A pool one build short of the version gate.
    let answer = post(
        &sim,
        "clusters/dpv2/nodePools",
        pool(
            "old",
            "a4-highgpu-8g",
            auto.clone(),
            Some("1.34.0-gke.2201000"),
        ),
    )
    .await;
    assert_eq!(
        bad_request(&answer),
        "Accelerator network profile requires GKE version 1.34.1-gke.1829001 or later; the node \
         pool's version is 1.34.0-gke.2201000."
    );
    // With explicit additional networks.
    let both = json!({"acceleratorNetworkProfile": "auto",
        "additionalNodeNetworkConfigs": [{"network": "main", "subnetwork": "main-sub"}]});
    let answer = post(
        &sim,
        "clusters/dpv2/nodePools",
        pool("both", "a4-highgpu-8g", both, None),
    )
    .await;
    assert_eq!(
        bad_request(&answer),
        "Accelerator network profile cannot be used together with additional node network \
         configs; GKE manages the node pool's accelerator networks."
    );
    // A machine type without RDMA NICs (A3 Mega, in a zone that offers it).
    let mut mega = pool("mega", "a3-megagpu-8g", auto.clone(), None);
    mega["nodePool"]["locations"] = json!(["us-central1-a"]);
    let answer = post(&sim, "clusters/dpv2/nodePools", mega).await;
    assert_eq!(
        bad_request(&answer),
        "Accelerator network profile \"auto\" is not supported for machine type \
         \"a3-megagpu-8g\"."
    );
    // Another value than "auto".
    let manual = json!({"acceleratorNetworkProfile": "manual"});
    let answer = post(
        &sim,
        "clusters/dpv2/nodePools",
        pool("manual", "a4-highgpu-8g", manual, None),
    )
    .await;
    assert_eq!(
        bad_request(&answer),
        "Invalid value for field \"node_pool.network_config.accelerator_network_profile\": \
         \"manual\". The only supported value is \"auto\"."
    );
    // The REGULAR default (1.33) is below the gate too, for the control plane's own pools.
    cluster(&cli, "regular", &["--enable-dataplane-v2"]).await;
    let answer = post(
        &sim,
        "clusters/regular/nodePools",
        pool("a4", "a4-highgpu-8g", auto.clone(), None),
    )
    .await;
    assert!(
        bad_request(&answer).contains("the node pool's version is 1.33.5-gke.1080000"),
        "{answer:?}"
    );
    // None of the refused pools exists.
    let (_, pools) = get(&sim, "clusters/dpv2/nodePools").await;
    assert_eq!(pools["nodePools"].as_array().unwrap().len(), 1, "{pools}");
}

/// The four `resource.k8s.io` beta resources of `version`, comma-separated.
fn beta(version: &str) -> String {
    [
        "deviceclasses",
        "resourceclaims",
        "resourceclaimtemplates",
        "resourceslices",
    ]
    .map(|r| format!("resource.k8s.io/{version}/{r}"))
    .join(",")
}

const TEMPLATE_V1BETA1: &str = r#"
apiVersion: resource.k8s.io/v1beta1
kind: ResourceClaimTemplate
metadata:
  name: all-mrdma
spec:
  spec:
    devices:
      requests:
      - name: req-mrdma
        deviceClassName: mrdma.google.com
        allocationMode: All
"#;

#[tokio::test]
async fn resource_k8s_io_versions_follow_the_minor_and_the_enabled_beta_apis() {
    let sim = start().await;
    let cli = Gcloud::new(&sim);
    main_network(&sim, PROJECT, REGION).await;

    // 1.32 with the v1beta1 resources enabled: only v1beta1 is served.
    let flag = format!("--enable-kubernetes-unstable-apis={}", beta("v1beta1"));
    let created = cluster(
        &cli,
        "k32",
        &["--release-channel=stable", "--cluster-version=1.32", &flag],
    )
    .await;
    assert_eq!(
        created["enableK8sBetaApis"]["enabledApis"]
            .as_array()
            .unwrap()
            .len(),
        4,
        "{created}"
    );
    let k32 = Kubectl::new(&sim, "k32").await;
    assert_eq!(k32.resource_versions().await, ["resource.k8s.io/v1beta1"]);
    k32.ok_stdin(&["apply", "-f", "-"], Some(TEMPLATE_V1BETA1))
        .await;
    let template = k32
        .json(&["get", "resourceclaimtemplate", "all-mrdma"])
        .await;
    assert_eq!(template["apiVersion"], "resource.k8s.io/v1beta1");
    assert_eq!(
        template["spec"]["spec"]["devices"]["requests"][0]["deviceClassName"],
        "mrdma.google.com"
    );
    // The v1 form is not served on 1.32: discovery has no such kind.
    let (ok, _, err) = k32
        .run(&["apply", "--validate=false", "-f", "-"], Some(TEMPLATE_V1))
        .await;
    assert!(
        !ok && err.contains(
            "no matches for kind \"ResourceClaimTemplate\" in version \"resource.k8s.io/v1\""
        ),
        "{err}"
    );

    // v1beta2 does not exist in 1.32.
    let flag = format!("--enable-kubernetes-unstable-apis={}", beta("v1beta2"));
    let err = cli
        .fails(&[
            "container",
            "clusters",
            "create",
            "nope",
            "--location=us-central1",
            "--node-locations=us-central1-b",
            "--network=main",
            "--subnetwork=main-sub",
            "--num-nodes=1",
            "--release-channel=stable",
            "--cluster-version=1.32",
            &flag,
        ])
        .await;
    assert!(
        err.contains(
            "Beta API \"resource.k8s.io/v1beta2/deviceclasses\" is not available in Kubernetes \
             1.32"
        ),
        "{err}"
    );

    // 1.33 without beta APIs: no resource.k8s.io at all, until an update enables v1beta2.
    cluster(&cli, "k33", &[]).await;
    let k33 = Kubectl::new(&sim, "k33").await;
    assert!(k33.resource_versions().await.is_empty());
    let (ok, _, err) = k33.run(&["get", "deviceclasses"], None).await;
    assert!(!ok && err.contains("deviceclasses"), "{err}");
    let flag = format!("--enable-kubernetes-unstable-apis={}", beta("v1beta2"));
    cli.ok(&[
        "container",
        "clusters",
        "update",
        "k33",
        "--location=us-central1",
        &flag,
    ])
    .await;
    assert_eq!(k33.resource_versions().await, ["resource.k8s.io/v1beta2"]);
    k33.ok(&["get", "deviceclasses"]).await;
    // Enabled beta APIs cannot be enabled twice.
    let err = cli
        .fails(&[
            "container",
            "clusters",
            "update",
            "k33",
            "--location=us-central1",
            &flag,
        ])
        .await;
    assert!(err.contains("is already enabled"), "{err}");

    // 1.34: v1 by default, and a beta version beside it when enabled; an object written at v1
    // reads at v1beta1 in that version's shape.
    let flag = format!("--enable-kubernetes-unstable-apis={}", beta("v1beta1"));
    cluster(
        &cli,
        "k34",
        &["--release-channel=rapid", "--cluster-version=1.34", &flag],
    )
    .await;
    let k34 = Kubectl::new(&sim, "k34").await;
    assert_eq!(
        k34.resource_versions().await,
        ["resource.k8s.io/v1", "resource.k8s.io/v1beta1"]
    );
    k34.ok_stdin(&["apply", "-f", "-"], Some(TEMPLATE_V1)).await;
    let old = k34
        .json(&[
            "get",
            "resourceclaimtemplates.v1beta1.resource.k8s.io",
            "eight-mrdma",
        ])
        .await;
    assert_eq!(old["apiVersion"], "resource.k8s.io/v1beta1");
    let request = &old["spec"]["spec"]["devices"]["requests"][0];
    assert_eq!(request["deviceClassName"], "mrdma.google.com");
    assert_eq!(request["count"], 8);
    assert!(request["exactly"].is_null(), "{old}");
}
