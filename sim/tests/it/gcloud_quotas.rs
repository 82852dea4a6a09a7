//! Compute quotas driven by gcloud: `regions describe` and `project-info describe` show usage that
//! follows creates and deletes, Compute inserts and reservations fail with `QUOTA_EXCEEDED` past a
//! configured limit, GKE refuses a node pool beyond the regional CPU quota at once and fails one
//! beyond the GPU family quota in its operation, and the Cloud Quotas API serves the limits
//! (`gcloud beta quotas info list|describe`, and its v1 paths over HTTP).

use crate::gcloud_support::Gcloud;
use a3ctl_sim::quotas::QuotaConfig;
use a3ctl_sim::{SimConfig, SimHandle};
use serde_json::{Value, json};

const PROJECT: &str = "quota-test";
const REGION: &str = "us-central1";

/// gcloud in the quota tests' project.
fn gcloud(sim: &SimHandle) -> Gcloud {
    Gcloud::in_project(sim, PROJECT)
}

/// `metric → (limit, usage)` of `gcloud compute regions describe REGION`.
async fn region_quotas(cli: &Gcloud, region: &str) -> Value {
    let region = cli.json(&["compute", "regions", "describe", region]).await;
    quota_map(&region)
}

/// `metric → (limit, usage)` of `gcloud compute project-info describe`.
async fn project_quotas(cli: &Gcloud) -> Value {
    let project = cli.json(&["compute", "project-info", "describe"]).await;
    quota_map(&project)
}

/// `{metric: [limit, usage]}` of a region's or project's `quotas`.
fn quota_map(resource: &Value) -> Value {
    let mut out = serde_json::Map::new();
    for q in resource["quotas"].as_array().expect("quotas") {
        out.insert(
            q["metric"].as_str().expect("metric").to_string(),
            json!([q["limit"], q["usage"]]),
        );
    }
    Value::Object(out)
}

async fn start(quotas: QuotaConfig) -> SimHandle {
    a3ctl_sim::start(SimConfig {
        quotas,
        ..SimConfig::default()
    })
    .await
    .expect("simulator starts")
}

async fn send(
    sim: &SimHandle,
    method: reqwest::Method,
    path: &str,
    body: Option<Value>,
) -> (u16, Value) {
    let mut request = reqwest::Client::new().request(method, format!("{}{path}", sim.base_url()));
    if let Some(body) = body {
        request = request.json(&body);
    }
    let response = request.send().await.expect("request");
    let status = response.status().as_u16();
    let text = response.text().await.expect("body");
    (status, serde_json::from_str(&text).unwrap_or(Value::Null))
}

/// A REST call that must be answered 200 (Compute operations finish at the next read).
async fn post_ok(sim: &SimHandle, path: &str, body: Value) -> Value {
    let (status, answer) = send(sim, reqwest::Method::POST, path, Some(body)).await;
    assert_eq!(status, 200, "{path}: {answer}");
    answer
}

#[tokio::test(flavor = "multi_thread")]
async fn region_and_project_quotas_follow_creates_and_deletes() {
    let sim = start(QuotaConfig::default()).await;
    let cli = gcloud(&sim);

    let region = region_quotas(&cli, REGION).await;
    assert_eq!(region["CPUS"], json!([12000.0, 0.0]), "{region}");
    assert_eq!(region["LOCAL_SSD_TOTAL_GB"], json!([65536.0, 0.0]));
    assert_eq!(region["RESOURCE_POLICIES"], json!([10.0, 0.0]));
    assert_eq!(region["PREEMPTIBLE_NVIDIA_H100_GPUS"], json!([128.0, 0.0]));
    // Not in gcloud's copy of the metric enum: gcloud keeps and prints it all the same.
    assert_eq!(
        region["PREEMPTIBLE_NVIDIA_H100_MEGA_GPUS"],
        json!([128.0, 0.0])
    );
    // The on-demand H100 families are Cloud Quotas' GPU family quota, not a legacy metric.
    assert!(region.get("NVIDIA_H100_MEGA_GPUS").is_none(), "{region}");
    assert!(region.get("GPUS_PER_GPU_FAMILY").is_none(), "{region}");
    assert!(region.get("NETWORKS").is_none(), "{region}");
    let project = project_quotas(&cli).await;
    assert_eq!(project["NETWORKS"], json!([15.0, 0.0]), "{project}");
    assert_eq!(project["SUBNETWORKS"], json!([175.0, 0.0]));
    assert_eq!(project["FIREWALLS"], json!([200.0, 0.0]));
    assert_eq!(project["ROUTERS"], json!([20.0, 0.0]));
    assert_eq!(project["CPUS_ALL_REGIONS"], json!([24000.0, 0.0]));
    assert_eq!(project["GPUS_ALL_REGIONS"], json!([1024.0, 0.0]));
    assert!(project.get("CPUS").is_none(), "{project}");
    let described = cli.json(&["compute", "project-info", "describe"]).await;
    assert_eq!(described["name"], PROJECT);
    assert_eq!(described["kind"], "compute#project");

    // Networks, subnets, firewall rules and routers count as they are created...
    cli.ok(&[
        "compute",
        "networks",
        "create",
        "net",
        "--subnet-mode=custom",
    ])
    .await;
    cli.ok(&[
        "compute",
        "networks",
        "subnets",
        "create",
        "sub",
        "--network=net",
        "--region=us-central1",
        "--range=10.0.0.0/24",
    ])
    .await;
    cli.ok(&[
        "compute",
        "firewall-rules",
        "create",
        "allow-icmp",
        "--network=net",
        "--allow=icmp",
    ])
    .await;
    cli.ok(&[
        "compute",
        "routers",
        "create",
        "rtr",
        "--network=net",
        "--region=us-central1",
    ])
    .await;
    let project = project_quotas(&cli).await;
    assert_eq!(project["NETWORKS"], json!([15.0, 1.0]), "{project}");
    assert_eq!(project["SUBNETWORKS"], json!([175.0, 1.0]));
    assert_eq!(project["FIREWALLS"], json!([200.0, 1.0]));
    assert_eq!(project["ROUTERS"], json!([20.0, 1.0]));
    // ... an auto-mode network with the subnet it makes in every region ...
    cli.ok(&[
        "compute",
        "networks",
        "create",
        "auto",
        "--subnet-mode=auto",
    ])
    .await;
    let project = project_quotas(&cli).await;
    assert_eq!(project["NETWORKS"], json!([15.0, 2.0]), "{project}");
    let regions = a3ctl_sim::geo::REGIONS.len() as f64;
    assert_eq!(project["SUBNETWORKS"], json!([175.0, 1.0 + regions]));

    // ... a reservation holds its VMs' vCPUs and GPUs in its region ...
    cli.ok(&[
        "compute",
        "reservations",
        "create",
        "res",
        "--zone=us-central1-a",
        "--vm-count=2",
        "--machine-type=a3-megagpu-8g",
        "--require-specific-reservation",
    ])
    .await;
    let region = region_quotas(&cli, REGION).await;
    assert_eq!(region["CPUS"], json!([12000.0, 416.0]), "{region}");
    assert_eq!(
        region_quotas(&cli, "us-east4").await["CPUS"],
        json!([12000.0, 0.0])
    );
    let project = project_quotas(&cli).await;
    assert_eq!(project["CPUS_ALL_REGIONS"], json!([24000.0, 416.0]));
    assert_eq!(project["GPUS_ALL_REGIONS"], json!([1024.0, 16.0]));
    // regions list shows the same.
    let regions = cli.json(&["compute", "regions", "list"]).await;
    let central = regions
        .as_array()
        .expect("regions")
        .iter()
        .find(|r| r["name"] == REGION)
        .expect("us-central1 listed");
    assert_eq!(quota_map(central)["CPUS"], json!([12000.0, 416.0]));

    // ... and everything is given back by the deletes.
    for args in [
        &[
            "compute",
            "reservations",
            "delete",
            "res",
            "--zone=us-central1-a",
            "--quiet",
        ][..],
        &[
            "compute",
            "routers",
            "delete",
            "rtr",
            "--region=us-central1",
            "--quiet",
        ],
        &[
            "compute",
            "firewall-rules",
            "delete",
            "allow-icmp",
            "--quiet",
        ],
        &[
            "compute",
            "networks",
            "subnets",
            "delete",
            "sub",
            "--region=us-central1",
            "--quiet",
        ],
        &["compute", "networks", "delete", "net", "--quiet"],
        &["compute", "networks", "delete", "auto", "--quiet"],
    ] {
        cli.ok(args).await;
    }
    let project = project_quotas(&cli).await;
    for metric in [
        "NETWORKS",
        "SUBNETWORKS",
        "FIREWALLS",
        "ROUTERS",
        "CPUS_ALL_REGIONS",
        "GPUS_ALL_REGIONS",
    ] {
        assert_eq!(project[metric][1], json!(0.0), "{metric}: {project}");
    }
    assert_eq!(
        region_quotas(&cli, REGION).await["CPUS"],
        json!([12000.0, 0.0])
    );
    assert_eq!(
        send(
            &sim,
            reqwest::Method::GET,
            &format!("/compute/v1/projects/{PROJECT}/regions/mars-1"),
            None
        )
        .await
        .0,
        404
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_network_beyond_the_networks_limit_fails_with_compute_quota_error() {
    let sim = start(QuotaConfig::default().with("NETWORKS", 1.0)).await;
    let cli = gcloud(&sim);
    cli.ok(&[
        "compute",
        "networks",
        "create",
        "one",
        "--subnet-mode=custom",
    ])
    .await;
    let stderr = cli
        .fails(&[
            "compute",
            "networks",
            "create",
            "two",
            "--subnet-mode=custom",
        ])
        .await;
    assert!(
        stderr.contains("Quota 'NETWORKS' exceeded.  Limit: 1.0 globally."),
        "{stderr}"
    );
    let (_, ops) = send(
        &sim,
        reqwest::Method::GET,
        &format!("/compute/v1/projects/{PROJECT}/global/operations"),
        None,
    )
    .await;
    let failed = ops["items"]
        .as_array()
        .expect("operations")
        .iter()
        .find(|op| op.get("error").is_some())
        .expect("a failed operation")
        .clone();
    assert_eq!(failed["status"], "DONE");
    assert_eq!(failed["httpErrorStatusCode"], 403);
    let error = &failed["error"]["errors"][0];
    assert_eq!(error["code"], "QUOTA_EXCEEDED");
    assert_eq!(
        error["errorDetails"][0]["quotaInfo"],
        json!({"metricName": "compute.googleapis.com/networks", "limitName": "NETWORKS-per-project",
               "dimensions": {"global": "global"}, "limit": 1.0})
    );
    let project = project_quotas(&cli).await;
    assert_eq!(project["NETWORKS"], json!([1.0, 1.0]), "{project}");
    // Another project has its own quota.
    let other = send(
        &sim,
        reqwest::Method::GET,
        "/compute/v1/projects/other-project",
        None,
    )
    .await
    .1;
    assert_eq!(quota_map(&other)["NETWORKS"], json!([1.0, 0.0]));
    // Deleting the first makes room.
    cli.ok(&["compute", "networks", "delete", "one", "--quiet"])
        .await;
    cli.ok(&[
        "compute",
        "networks",
        "create",
        "two",
        "--subnet-mode=custom",
    ])
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn reservations_beyond_the_gpu_family_or_cpu_quota_fail() {
    let quotas = QuotaConfig::default()
        .with_gpu_family("NVIDIA_H100_MEGA", Some(REGION), 16.0)
        .with_in("CPUS", "us-west1", 300.0);
    let sim = start(quotas).await;
    let cli = gcloud(&sim);
    let reserve =
        |name: &'static str, zone: &'static str, machine: &'static str, count: &'static str| {
            [
                "compute",
                "reservations",
                "create",
                name,
                zone,
                count,
                machine,
            ]
        };
    // 2 VMs × 8 GPUs fit the 16 H100 Mega GPUs of us-central1, a third does not.
    cli.ok(&reserve(
        "r1",
        "--zone=us-central1-a",
        "--machine-type=a3-megagpu-8g",
        "--vm-count=2",
    ))
    .await;
    let stderr = cli
        .fails(&reserve(
            "r2",
            "--zone=us-central1-c",
            "--machine-type=a3-megagpu-8g",
            "--vm-count=1",
        ))
        .await;
    assert!(
        stderr
            .contains("Quota 'GPUS_PER_GPU_FAMILY' exceeded.  Limit: 16.0 in region us-central1."),
        "{stderr}"
    );
    // H100 (not Mega) is another family, and another region has its own limit.
    cli.ok(&reserve(
        "r3",
        "--zone=us-central1-a",
        "--machine-type=a3-highgpu-8g",
        "--vm-count=1",
    ))
    .await;
    cli.ok(&reserve(
        "r4",
        "--zone=us-east4-a",
        "--machine-type=a3-megagpu-8g",
        "--vm-count=4",
    ))
    .await;
    // 2 × 208 vCPUs do not fit 300 in us-west1.
    let stderr = cli
        .fails(&reserve(
            "r5",
            "--zone=us-west1-b",
            "--machine-type=a3-highgpu-8g",
            "--vm-count=2",
        ))
        .await;
    assert!(
        stderr.contains("Quota 'CPUS' exceeded.  Limit: 300.0 in region us-west1."),
        "{stderr}"
    );
    let names: Vec<String> = cli
        .json(&["compute", "reservations", "list"])
        .await
        .as_array()
        .expect("list")
        .iter()
        .map(|r| r["name"].as_str().unwrap_or("").to_string())
        .collect();
    assert_eq!(names, ["r1", "r3", "r4"]);
    // The failed operation names the family quota with both dimensions.
    let (_, ops) = send(
        &sim,
        reqwest::Method::GET,
        &format!("/compute/v1/projects/{PROJECT}/zones/us-central1-c/operations"),
        None,
    )
    .await;
    assert_eq!(
        ops["items"][0]["error"]["errors"][0]["errorDetails"][0]["quotaInfo"],
        json!({"metricName": "compute.googleapis.com/gpus_per_gpu_family",
               "limitName": "GPUS-PER-GPU-FAMILY-per-project-region",
               "dimensions": {"region": "us-central1", "gpu_family": "NVIDIA_H100_MEGA"},
               "limit": 16.0})
    );
    let project = project_quotas(&cli).await;
    assert_eq!(project["GPUS_ALL_REGIONS"][1], json!(56.0), "{project}");
}

/// The primary network and a cluster with one `e2-standard-4` node in us-central1-a.
async fn cluster(sim: &SimHandle) {
    let compute = |path: &str| format!("/compute/v1/projects/{PROJECT}/{path}");
    post_ok(
        sim,
        &compute("global/networks"),
        json!({"name": "main", "autoCreateSubnetworks": false}),
    )
    .await;
    post_ok(
        sim,
        &compute(&format!("regions/{REGION}/subnetworks")),
        json!({"name": "main-sub", "network": "global/networks/main", "ipCidrRange": "10.0.0.0/20",
               "secondaryIpRanges": [{"rangeName": "pods", "ipCidrRange": "10.4.0.0/14"},
                                     {"rangeName": "services", "ipCidrRange": "10.0.32.0/20"}]}),
    )
    .await;
    let body = json!({"cluster": {
        "name": "c1", "network": "main", "subnetwork": "main-sub",
        "ipAllocationPolicy": {"useIpAliases": true, "clusterSecondaryRangeName": "pods",
                               "servicesSecondaryRangeName": "services"},
        "locations": ["us-central1-a"],
        "nodePools": [{"name": "sys", "initialNodeCount": 1,
                       "config": {"machineType": "e2-standard-4"}}],
    }});
    post_ok(
        sim,
        &format!("/container/v1/projects/{PROJECT}/locations/{REGION}/clusters"),
        body,
    )
    .await;
    sim.advance_secs(1.0);
}

fn pool(name: &str, extra: &[&str]) -> Vec<String> {
    let mut args: Vec<String> = [
        "container",
        "node-pools",
        "create",
        name,
        "--cluster=c1",
        "--location=us-central1",
        "--node-locations=us-central1-a",
    ]
    .iter()
    .map(|a| a.to_string())
    .collect();
    args.extend(extra.iter().map(|a| a.to_string()));
    args
}

fn strs(args: &[String]) -> Vec<&str> {
    args.iter().map(String::as_str).collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn gke_refuses_a_node_pool_beyond_the_regional_cpu_quota_at_once() {
    let sim = start(QuotaConfig::default().with_in("CPUS", REGION, 20.0)).await;
    let cli = gcloud(&sim);
    cluster(&sim).await;
    // The cluster's node holds 4 vCPUs; 3 × 8 more need 24 of the 16 left.
    assert_eq!(
        region_quotas(&cli, REGION).await["CPUS"],
        json!([20.0, 4.0])
    );
    let args = pool("big", &["--machine-type=e2-standard-8", "--num-nodes=3"]);
    let stderr = cli.fails(&strs(&args)).await;
    assert!(
        stderr.contains(&format!(
            "code=403, message=Insufficient regional quota to satisfy request: resource \"CPUS\": \
             request requires '24.0' and is short '8.0'. project has a quota of '20.0' with '16.0' \
             available. View and manage quotas at \
             https://console.cloud.google.com/iam-admin/quotas?usage=USED&project={PROJECT}."
        )),
        "{stderr}"
    );
    let (_, pools) = send(
        &sim,
        reqwest::Method::GET,
        &format!("/container/v1/projects/{PROJECT}/locations/{REGION}/clusters/c1/nodePools"),
        None,
    )
    .await;
    assert_eq!(
        pools["nodePools"].as_array().map(Vec::len),
        Some(1),
        "{pools}"
    );
    // One node fits: the pool is created and its vCPUs count; a resize to exactly the limit too.
    let args = pool("fits", &["--machine-type=e2-standard-8", "--num-nodes=1"]);
    cli.ok(&strs(&args)).await;
    assert_eq!(
        region_quotas(&cli, REGION).await["CPUS"],
        json!([20.0, 12.0])
    );
    cli.ok(&[
        "container",
        "clusters",
        "resize",
        "c1",
        "--node-pool=fits",
        "--location=us-central1",
        "--num-nodes=2",
        "--quiet",
    ])
    .await;
    assert_eq!(
        region_quotas(&cli, REGION).await["CPUS"],
        json!([20.0, 20.0])
    );
    // Growing it past the quota fails the resize operation; the pool keeps its size.
    let stderr = cli
        .fails(&[
            "container",
            "clusters",
            "resize",
            "c1",
            "--node-pool=fits",
            "--location=us-central1",
            "--num-nodes=3",
            "--quiet",
        ])
        .await;
    assert!(stderr.contains("[GCE_QUOTA_EXCEEDED]"), "{stderr}");
    assert!(
        stderr.contains("Quota 'CPUS' exceeded.  Limit: 20.0 in region us-central1."),
        "{stderr}"
    );
    assert_eq!(
        region_quotas(&cli, REGION).await["CPUS"],
        json!([20.0, 20.0])
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn gke_fails_a_node_pool_beyond_the_gpu_family_quota_in_its_operation() {
    let quotas = QuotaConfig::default().with_gpu_family("NVIDIA_H100", None, 8.0);
    let sim = start(quotas).await;
    let cli = gcloud(&sim);
    cluster(&sim).await;
    let high = [
        "--machine-type=a3-highgpu-8g",
        "--accelerator=type=nvidia-h100-80gb,count=8",
    ];
    // Two on-demand nodes need 16 H100 GPUs of 8: GKE accepts the pool, its instance groups fail.
    let mut flags = high.to_vec();
    flags.push("--num-nodes=2");
    let stderr = cli.fails(&strs(&pool("ondemand", &flags))).await;
    assert!(
        stderr.contains(
            "Expected 2, running 0, transitioning 2. Current errors: [GCE_QUOTA_EXCEEDED]: Instance 'gke-c1-ondemand-"
        ),
        "{stderr}"
    );
    assert!(
        stderr.contains("creation failed: Quota 'GPUS_PER_GPU_FAMILY' exceeded.  Limit: 8.0 in region us-central1."),
        "{stderr}"
    );
    let (_, failed) = send(
        &sim,
        reqwest::Method::GET,
        &format!(
            "/container/v1/projects/{PROJECT}/locations/{REGION}/clusters/c1/nodePools/ondemand"
        ),
        None,
    )
    .await;
    assert_eq!(failed["status"], "ERROR", "{failed}");
    assert_eq!(failed["conditions"][0]["code"], "GCE_QUOTA_EXCEEDED");

    // A reservation of one VM holds its 8 GPUs; a pool consuming it needs nothing more.
    cli.ok(&[
        "compute",
        "reservations",
        "create",
        "res",
        "--zone=us-central1-a",
        "--vm-count=1",
        "--machine-type=a3-highgpu-8g",
        "--require-specific-reservation",
    ])
    .await;
    let mut flags = high.to_vec();
    flags.extend([
        "--num-nodes=1",
        "--reservation-affinity=specific",
        "--reservation=res",
    ]);
    let created = cli.json(&strs(&pool("reserved", &flags))).await;
    let created = created.get(0).unwrap_or(&created);
    assert_eq!(created["status"], "RUNNING", "{created}");
    let project = project_quotas(&cli).await;
    assert_eq!(project["GPUS_ALL_REGIONS"][1], json!(8.0), "{project}");
    // Spot VMs count against the preemptible quota instead.
    let mut flags = high.to_vec();
    flags.extend(["--num-nodes=1", "--spot"]);
    cli.ok(&strs(&pool("spot", &flags))).await;
    let region = region_quotas(&cli, REGION).await;
    assert_eq!(
        region["PREEMPTIBLE_NVIDIA_H100_GPUS"],
        json!([128.0, 8.0]),
        "{region}"
    );
    assert_eq!(region["CPUS"][1], json!(4.0 + 208.0 + 208.0), "{region}");
}

#[tokio::test(flavor = "multi_thread")]
async fn cloud_quotas_serves_the_gpu_family_quota() {
    let quotas = QuotaConfig::default()
        .with_gpu_family("NVIDIA_H100_MEGA", Some(REGION), 256.0)
        .with_gpu_family("NVIDIA_H100", None, 0.0)
        .with_in("CPUS", "us-east4", 24.0);
    let sim = start(quotas).await;
    let cli = gcloud(&sim);

    let infos = cli
        .json(&[
            "beta",
            "quotas",
            "info",
            "list",
            "--service=compute.googleapis.com",
            &format!("--project={PROJECT}"),
        ])
        .await;
    let ids: Vec<&str> = infos
        .as_array()
        .expect("quota infos")
        .iter()
        .map(|i| i["quotaId"].as_str().unwrap_or(""))
        .collect();
    // gcloud pages through 10 at a time: all fourteen arrive.
    assert_eq!(ids.len(), 14, "{ids:?}");
    for id in [
        "CPUS-per-project-region",
        "GPUS-PER-GPU-FAMILY-per-project-region",
        "GPUS-ALL-REGIONS-per-project",
        "NETWORKS-per-project",
    ] {
        assert!(ids.contains(&id), "{id}: {ids:?}");
    }

    let family = cli
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
    assert_eq!(family["quotaId"], "GPUS-PER-GPU-FAMILY-per-project-region");
    assert_eq!(
        family["metric"],
        "compute.googleapis.com/gpus_per_gpu_family"
    );
    assert_eq!(family["service"], "compute.googleapis.com");
    assert_eq!(family["containerType"], "PROJECT");
    assert_eq!(family["dimensions"], json!(["region", "gpu_family"]));
    let name = family["name"].as_str().expect("name");
    assert!(
        name.starts_with("projects/") && name.ends_with(
            "/locations/global/services/compute.googleapis.com/quotaInfos/GPUS-PER-GPU-FAMILY-per-project-region"
        ),
        "{name}"
    );
    let infos = family["dimensionsInfos"]
        .as_array()
        .expect("dimensionsInfos");
    // Most specific first: H100 Mega in us-central1, then each family everywhere else.
    assert_eq!(
        infos[0],
        json!({"dimensions": {"region": "us-central1", "gpu_family": "NVIDIA_H100_MEGA"},
               "details": {"value": "256"}, "applicableLocations": ["us-central1"]})
    );
    let everywhere = |f: &str| {
        infos
            .iter()
            .find(|i| i["dimensions"] == json!({"gpu_family": f}))
            .cloned()
            .unwrap_or(Value::Null)
    };
    assert_eq!(everywhere("NVIDIA_H100")["details"]["value"], "0");
    assert_eq!(everywhere("NVIDIA_H100_MEGA")["details"]["value"], "512");
    assert!(
        !everywhere("NVIDIA_H100_MEGA")["applicableLocations"]
            .as_array()
            .expect("locations")
            .contains(&json!("us-central1"))
    );

    // The v1 paths over HTTP, paged.
    let base = format!(
        "/cloudquotas/v1/projects/{PROJECT}/locations/global/services/compute.googleapis.com/quotaInfos"
    );
    let (status, first) = send(
        &sim,
        reqwest::Method::GET,
        &format!("{base}?pageSize=5"),
        None,
    )
    .await;
    assert_eq!(status, 200, "{first}");
    assert_eq!(first["quotaInfos"].as_array().map(Vec::len), Some(5));
    // The token is opaque; the page it names starts after the first page's last item.
    let token = first["nextPageToken"].as_str().expect("a next page");
    let (status, second) = send(
        &sim,
        reqwest::Method::GET,
        &format!("{base}?pageSize=5&pageToken={token}"),
        None,
    )
    .await;
    assert_eq!(status, 200, "{second}");
    let ids = |page: &Value| -> Vec<Value> {
        page["quotaInfos"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|i| i["quotaId"].clone())
            .collect()
    };
    assert_eq!(ids(&second).len(), 5);
    assert!(
        ids(&second).iter().all(|id| !ids(&first).contains(id)),
        "{first} {second}"
    );
    let (_, cpus) = send(
        &sim,
        reqwest::Method::GET,
        &format!("{base}/CPUS-per-project-region"),
        None,
    )
    .await;
    assert_eq!(cpus["dimensions"], json!(["region"]));
    assert_eq!(
        cpus["dimensionsInfos"][0],
        json!({"dimensions": {"region": "us-east4"}, "details": {"value": "24"},
               "applicableLocations": ["us-east4"]})
    );
    assert_eq!(cpus["dimensionsInfos"][1]["dimensions"], json!({}));
    assert_eq!(cpus["dimensionsInfos"][1]["details"]["value"], "12000");
    let (_, networks) = send(
        &sim,
        reqwest::Method::GET,
        &format!("{base}/NETWORKS-per-project"),
        None,
    )
    .await;
    assert_eq!(networks["dimensions"], json!([]));
    assert_eq!(
        networks["dimensionsInfos"],
        json!([{"dimensions": {}, "details": {"value": "15"}, "applicableLocations": ["global"]}])
    );
    let (status, missing) = send(
        &sim,
        reqwest::Method::GET,
        &format!("{base}/NOPE-per-project"),
        None,
    )
    .await;
    assert_eq!(status, 404, "{missing}");
    assert_eq!(missing["error"]["status"], "NOT_FOUND");

    // The Cloud Quotas API is an API of the project like any other: disabled, it refuses.
    cli.ok(&[
        "services",
        "disable",
        "cloudquotas.googleapis.com",
        "--force",
        &format!("--project={PROJECT}"),
    ])
    .await;
    let err = cli
        .fails(&[
            "beta",
            "quotas",
            "info",
            "describe",
            "GPUS-PER-GPU-FAMILY-per-project-region",
            "--service=compute.googleapis.com",
            &format!("--project={PROJECT}"),
        ])
        .await;
    assert!(
        err.contains("Cloud Quotas API has not been used in project"),
        "{err}"
    );
}

/// What a quota check needs to count CPUs: `gcloud compute machine-types describe` gives each
/// type's vCPUs and GPUs, and a type a zone does not offer is not found there.
#[tokio::test]
async fn machine_types_describe_vcpus_and_gpus() {
    let sim = a3ctl_sim::start(SimConfig::default()).await.unwrap();
    let cli = gcloud(&sim);
    let mega = cli
        .json(&[
            "compute",
            "machine-types",
            "describe",
            "a3-megagpu-8g",
            "--zone=us-central1-a",
        ])
        .await;
    assert_eq!(mega["guestCpus"], 208);
    assert_eq!(
        mega["accelerators"],
        json!([{"guestAcceleratorType": "nvidia-h100-mega-80gb", "guestAcceleratorCount": 8}])
    );
    let small = cli
        .json(&[
            "compute",
            "machine-types",
            "describe",
            "e2-standard-4",
            "--zone=us-central1-a",
        ])
        .await;
    assert_eq!(small["guestCpus"], 4);
    assert_eq!(small["isSharedCpu"], false);
    let missing = cli
        .fails(&[
            "compute",
            "machine-types",
            "describe",
            "a3-megagpu-8g",
            "--zone=us-central1-b",
        ])
        .await;
    assert!(missing.contains("was not found"), "{missing}");
}
