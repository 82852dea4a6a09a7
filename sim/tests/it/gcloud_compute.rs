//! Compute Engine v1 driven by gcloud (and by reqwest where gcloud cannot reach a case) against
//! the in-process simulator.

use a3ctl_sim::{SimConfig, SimHandle};
use serde_json::{Value, json};
use std::process::Output;

const PROJECT: &str = "a3-sim-test";

struct Cli {
    env: Vec<(String, String)>,
    _config: tempfile::TempDir,
}

impl Cli {
    fn new(handle: &SimHandle) -> Cli {
        let config = tempfile::tempdir().expect("temp dir");
        let mut env = handle.gcloud_env();
        env.push((
            "CLOUDSDK_CONFIG".into(),
            config.path().to_string_lossy().into_owned(),
        ));
        env.push(("CLOUDSDK_CORE_PROJECT".into(), PROJECT.into()));
        Cli {
            env,
            _config: config,
        }
    }

    async fn run(&self, args: &[&str]) -> Output {
        let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
        crate::gcloud_support::gcloud_output(args, self.env.clone()).await
    }

    /// Runs a gcloud command with `--format=json` that must succeed, and parses its output.
    async fn json(&self, args: &[&str]) -> Value {
        let mut all: Vec<&str> = args.to_vec();
        all.push("--format=json");
        let out = self.run(&all).await;
        assert!(
            out.status.success(),
            "gcloud {args:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).unwrap_or(Value::Null)
    }

    /// Runs a gcloud command that must fail; returns its stderr.
    async fn fails(&self, args: &[&str]) -> String {
        let out = self.run(args).await;
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(!out.status.success(), "gcloud {args:?} succeeded: {stderr}");
        stderr
    }
}

async fn start() -> SimHandle {
    a3ctl_sim::start(SimConfig::default())
        .await
        .expect("simulator starts")
}

/// A reqwest client for the cases gcloud cannot reach.
struct Http {
    base: String,
    client: reqwest::Client,
}

impl Http {
    fn new(handle: &SimHandle) -> Http {
        Http {
            base: format!("{}/compute/v1/projects/{PROJECT}", handle.base_url()),
            client: reqwest::Client::new(),
        }
    }

    async fn send(&self, method: reqwest::Method, path: &str, body: Option<Value>) -> (u16, Value) {
        let mut request = self.client.request(method, format!("{}/{path}", self.base));
        if let Some(body) = body {
            request = request.json(&body);
        }
        let response = request.send().await.expect("request");
        let status = response.status().as_u16();
        let text = response.text().await.expect("body");
        (status, serde_json::from_str(&text).unwrap_or(Value::Null))
    }

    async fn get(&self, path: &str) -> (u16, Value) {
        self.send(reqwest::Method::GET, path, None).await
    }

    async fn post(&self, path: &str, body: Value) -> (u16, Value) {
        self.send(reqwest::Method::POST, path, Some(body)).await
    }

    async fn patch(&self, path: &str, body: Value) -> (u16, Value) {
        self.send(reqwest::Method::PATCH, path, Some(body)).await
    }

    async fn delete(&self, path: &str) -> (u16, Value) {
        self.send(reqwest::Method::DELETE, path, None).await
    }

    /// The relative operation path (`global/operations/x`) of an operation JSON.
    fn op_path(op: &Value) -> String {
        let link = op["selfLink"].as_str().expect("operation selfLink");
        let at = link
            .find(&format!("projects/{PROJECT}/"))
            .expect("project in link");
        link[at + format!("projects/{PROJECT}/").len()..].to_string()
    }

    /// Waits for an operation (with the zero-latency profile, one `wait` finishes it).
    async fn wait(&self, op: &Value) -> Value {
        let (status, done) = self
            .post(&format!("{}/wait", Http::op_path(op)), json!({}))
            .await;
        assert_eq!(status, 200, "{done}");
        done
    }
}

/// Asserts a Google error body: HTTP code, canonical status, v1 reason, and a message fragment.
fn assert_error(got: &(u16, Value), code: u16, status: &str, reason: &str, message: &str) {
    let (http, body) = got;
    assert_eq!(*http, code, "{body}");
    assert_eq!(body["error"]["code"], code, "{body}");
    assert_eq!(body["error"]["status"], status, "{body}");
    assert_eq!(body["error"]["errors"][0]["reason"], reason, "{body}");
    let text = body["error"]["message"].as_str().unwrap_or("");
    assert!(
        text.contains(message),
        "{text:?} does not contain {message:?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn networks_and_subnets_with_gcloud() {
    let sim = start().await;
    let cli = Cli::new(&sim);
    let net = cli
        .json(&[
            "compute",
            "networks",
            "create",
            "gpu-net",
            "--subnet-mode=custom",
            "--mtu=8244",
        ])
        .await;
    assert_eq!(net[0]["kind"], "compute#network");
    assert_eq!(net[0]["mtu"], 8244);
    assert_eq!(net[0]["autoCreateSubnetworks"], false);
    assert_eq!(net[0]["routingConfig"]["routingMode"], "REGIONAL");
    assert!(net[0]["id"].is_string(), "int64 ids are strings");

    let subnet = cli
        .json(&[
            "compute",
            "networks",
            "subnets",
            "create",
            "gpu-sub",
            "--network=gpu-net",
            "--region=us-central1",
            "--range=10.0.0.0/24",
            "--secondary-range=pods=10.4.0.0/14,services=10.0.32.0/20",
            "--enable-private-ip-google-access",
        ])
        .await;
    assert_eq!(subnet[0]["ipCidrRange"], "10.0.0.0/24");
    assert_eq!(subnet[0]["gatewayAddress"], "10.0.0.1");
    assert_eq!(subnet[0]["privateIpGoogleAccess"], true);
    assert_eq!(subnet[0]["secondaryIpRanges"][0]["rangeName"], "pods");
    assert_eq!(
        subnet[0]["secondaryIpRanges"][1]["ipCidrRange"],
        "10.0.32.0/20"
    );
    let first_fingerprint = subnet[0]["fingerprint"]
        .as_str()
        .expect("fingerprint")
        .to_string();

    // Expanding keeps the range a superset; adding a secondary range goes through the fingerprint.
    cli.json(&[
        "compute",
        "networks",
        "subnets",
        "expand-ip-range",
        "gpu-sub",
        "--region=us-central1",
        "--prefix-length=23",
    ])
    .await;
    cli.json(&[
        "compute",
        "networks",
        "subnets",
        "update",
        "gpu-sub",
        "--region=us-central1",
        "--add-secondary-ranges=extra=172.16.0.0/24",
    ])
    .await;
    let described = cli
        .json(&[
            "compute",
            "networks",
            "subnets",
            "describe",
            "gpu-sub",
            "--region=us-central1",
        ])
        .await;
    assert_eq!(described["ipCidrRange"], "10.0.0.0/23");
    assert_eq!(
        described["secondaryIpRanges"].as_array().map(Vec::len),
        Some(3)
    );
    assert_ne!(described["fingerprint"], first_fingerprint.as_str());

    let (nets, subnets) = tokio::join!(
        cli.json(&["compute", "networks", "list"]),
        cli.json(&[
            "compute",
            "networks",
            "subnets",
            "list",
            "--network=gpu-net"
        ]),
    );
    assert_eq!(nets.as_array().map(Vec::len), Some(1));
    assert_eq!(subnets[0]["name"], "gpu-sub");
    let net = cli
        .json(&["compute", "networks", "describe", "gpu-net"])
        .await;
    assert_eq!(
        net["subnetworks"][0],
        "https://www.googleapis.com/compute/v1/projects/a3-sim-test/regions/us-central1/subnetworks/gpu-sub"
    );

    // In use: the subnet blocks the network.
    let stderr = cli
        .fails(&["compute", "networks", "delete", "gpu-net", "--quiet"])
        .await;
    assert!(
        stderr.contains("The network resource 'projects/a3-sim-test/global/networks/gpu-net' is already being used by 'projects/a3-sim-test/regions/us-central1/subnetworks/gpu-sub'"),
        "{stderr}"
    );
    cli.run(&[
        "compute",
        "networks",
        "subnets",
        "delete",
        "gpu-sub",
        "--region=us-central1",
        "--quiet",
    ])
    .await;
    let out = cli
        .run(&["compute", "networks", "delete", "gpu-net", "--quiet"])
        .await;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stderr = cli
        .fails(&["compute", "networks", "describe", "gpu-net"])
        .await;
    assert!(
        stderr
            .contains("The resource 'projects/a3-sim-test/global/networks/gpu-net' was not found"),
        "{stderr}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn firewalls_routers_nats_and_placement_policies_with_gcloud() {
    let sim = start().await;
    let cli = Cli::new(&sim);
    cli.json(&[
        "compute",
        "networks",
        "create",
        "main",
        "--subnet-mode=custom",
    ])
    .await;
    let (firewall, router, policy) = tokio::join!(
        cli.json(&[
            "compute",
            "firewall-rules",
            "create",
            "main-internal",
            "--network=main",
            "--allow=tcp:0-65535,udp:0-65535,icmp",
            "--source-ranges=10.0.0.0/8",
        ]),
        cli.json(&[
            "compute",
            "routers",
            "create",
            "main-router",
            "--network=main",
            "--region=us-central1"
        ]),
        cli.json(&[
            "compute",
            "resource-policies",
            "create",
            "group-placement",
            "a3-compact",
            "--region=us-central1",
            "--collocation=collocated",
            "--vm-count=2",
        ]),
    );
    assert_eq!(firewall[0]["kind"], "compute#firewall");
    assert_eq!(firewall[0]["direction"], "INGRESS");
    assert_eq!(firewall[0]["priority"], 1000);
    assert_eq!(firewall[0]["allowed"][0]["IPProtocol"], "tcp");
    assert_eq!(firewall[0]["sourceRanges"][0], "10.0.0.0/8");
    assert_eq!(router[0]["kind"], "compute#router");
    let policy = if policy.is_array() {
        policy[0].clone()
    } else {
        policy
    };
    assert_eq!(policy["kind"], "compute#resourcePolicy", "{policy}");
    assert_eq!(policy["groupPlacementPolicy"]["collocation"], "COLLOCATED");
    assert_eq!(policy["groupPlacementPolicy"]["vmCount"], 2);

    cli.json(&[
        "compute",
        "routers",
        "nats",
        "create",
        "main-nat",
        "--router=main-router",
        "--region=us-central1",
        "--auto-allocate-nat-external-ips",
        "--nat-all-subnet-ip-ranges",
    ])
    .await;
    let (router, firewall, rules, policies) = tokio::join!(
        cli.json(&[
            "compute",
            "routers",
            "describe",
            "main-router",
            "--region=us-central1"
        ]),
        cli.json(&[
            "compute",
            "firewall-rules",
            "update",
            "main-internal",
            "--priority=900"
        ]),
        cli.json(&["compute", "firewall-rules", "list"]),
        cli.json(&["compute", "resource-policies", "list"]),
    );
    let _ = firewall;
    assert_eq!(router["nats"][0]["name"], "main-nat");
    assert_eq!(router["nats"][0]["natIpAllocateOption"], "AUTO_ONLY");
    assert_eq!(
        router["nats"][0]["sourceSubnetworkIpRangesToNat"],
        "ALL_SUBNETWORKS_ALL_IP_RANGES"
    );
    assert_eq!(rules.as_array().map(Vec::len), Some(1));
    assert_eq!(policies[0]["name"], "a3-compact");
    let firewall = cli
        .json(&["compute", "firewall-rules", "describe", "main-internal"])
        .await;
    assert_eq!(firewall["priority"], 900);

    // The firewall rule (and the router) keep the network in use.
    let stderr = cli
        .fails(&["compute", "networks", "delete", "main", "--quiet"])
        .await;
    assert!(
        stderr.contains(
            "is already being used by 'projects/a3-sim-test/global/firewalls/main-internal'"
        ),
        "{stderr}"
    );

    let (a, b, c) = tokio::join!(
        cli.run(&[
            "compute",
            "firewall-rules",
            "delete",
            "main-internal",
            "--quiet"
        ]),
        cli.run(&[
            "compute",
            "routers",
            "delete",
            "main-router",
            "--region=us-central1",
            "--quiet"
        ]),
        cli.run(&[
            "compute",
            "resource-policies",
            "delete",
            "a3-compact",
            "--region=us-central1",
            "--quiet"
        ]),
    );
    for out in [a, b, c] {
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let out = cli
        .run(&["compute", "networks", "delete", "main", "--quiet"])
        .await;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(sim.inventory()["compute"]["networks"], json!([]));
    // gcloud lists operations through the aggregated list.
    let operations = cli.json(&["compute", "operations", "list"]).await;
    let operations = operations.as_array().expect("operations");
    assert!(operations.len() >= 9, "{operations:?}");
    assert!(operations.iter().all(|op| op["status"] == "DONE"));
}

#[tokio::test(flavor = "multi_thread")]
async fn rule_violations_fail_in_gcloud_with_the_real_codes() {
    let sim = start().await;
    let cli = Cli::new(&sim);
    let http = Http::new(&sim);
    cli.json(&[
        "compute",
        "networks",
        "create",
        "net",
        "--subnet-mode=custom",
    ])
    .await;
    cli.json(&[
        "compute",
        "networks",
        "subnets",
        "create",
        "sub",
        "--network=net",
        "--region=us-east4",
        "--range=10.1.0.0/20",
    ])
    .await;

    let (duplicate, missing, bad_name, bad_mtu, overlap) = tokio::join!(
        cli.fails(&[
            "compute",
            "networks",
            "create",
            "net",
            "--subnet-mode=custom"
        ]),
        cli.fails(&["compute", "networks", "describe", "nope"]),
        cli.fails(&[
            "compute",
            "networks",
            "create",
            "Bad_Name",
            "--subnet-mode=custom"
        ]),
        cli.fails(&[
            "compute",
            "networks",
            "create",
            "jumbo",
            "--subnet-mode=custom",
            "--mtu=9000"
        ]),
        cli.fails(&[
            "compute",
            "networks",
            "subnets",
            "create",
            "sub2",
            "--network=net",
            "--region=us-central1",
            "--range=10.1.8.0/24",
        ]),
    );
    assert!(
        duplicate
            .contains("The resource 'projects/a3-sim-test/global/networks/net' already exists"),
        "{duplicate}"
    );
    assert!(
        missing.contains("The resource 'projects/a3-sim-test/global/networks/nope' was not found"),
        "{missing}"
    );
    assert!(
        bad_name.contains("Invalid value for field 'resource.name': 'Bad_Name'"),
        "{bad_name}"
    );
    assert!(
        bad_mtu.contains("Invalid value for field 'resource.mtu': '9000'"),
        "{bad_mtu}"
    );
    assert!(
        overlap.contains("Invalid IPCidrRange: 10.1.8.0/24 conflicts with existing subnetwork 'sub' in region 'us-east4'"),
        "{overlap}"
    );

    // The same rules, with the exact code, status and reason.
    let custom = |name: &str| json!({"name": name, "autoCreateSubnetworks": false});
    assert_error(
        &http.post("global/networks", custom("net")).await,
        409,
        "ALREADY_EXISTS",
        "alreadyExists",
        "The resource 'projects/a3-sim-test/global/networks/net' already exists",
    );
    assert_error(
        &http.get("global/networks/nope").await,
        404,
        "NOT_FOUND",
        "notFound",
        "The resource 'projects/a3-sim-test/global/networks/nope' was not found",
    );
    assert_error(
        &http.delete("global/networks/nope").await,
        404,
        "NOT_FOUND",
        "notFound",
        "was not found",
    );
    assert_error(
        &http.post("global/networks", custom("Bad_Name")).await,
        400,
        "INVALID_ARGUMENT",
        "invalid",
        "Must be a match of regex '(?:[a-z](?:[-a-z0-9]{0,61}[a-z0-9])?)'",
    );
    assert_error(
        &http.post("global/networks", custom(&"n".repeat(64))).await,
        400,
        "INVALID_ARGUMENT",
        "invalid",
        "Invalid value for field 'resource.name'",
    );
    assert_error(
        &http
            .post(
                "global/networks",
                json!({"name": "small", "autoCreateSubnetworks": false, "mtu": 1200}),
            )
            .await,
        400,
        "INVALID_ARGUMENT",
        "invalid",
        "Invalid value for field 'resource.mtu': '1200'",
    );
    let subnet = |name: &str, range: &str| json!({"name": name, "network": "global/networks/net", "ipCidrRange": range});
    assert_error(
        &http
            .post(
                "regions/us-central1/subnetworks",
                subnet("sub2", "10.1.8.0/24"),
            )
            .await,
        400,
        "INVALID_ARGUMENT",
        "invalid",
        "Invalid value for field 'resource.ipCidrRange': '10.1.8.0/24'. Invalid IPCidrRange: 10.1.8.0/24 conflicts with existing subnetwork 'sub' in region 'us-east4'.",
    );
    assert_error(
        &http
            .post(
                "regions/us-central1/subnetworks",
                subnet("sub3", "10.9.0.0/30"),
            )
            .await,
        400,
        "INVALID_ARGUMENT",
        "invalid",
        "prefix length",
    );
    assert_error(
        &http
            .post(
                "regions/us-central1/subnetworks",
                subnet("sub3", "10.9.0.0/3x"),
            )
            .await,
        400,
        "INVALID_ARGUMENT",
        "invalid",
        "Invalid IPCidrRange",
    );
    assert_error(
        &http
            .post(
                "regions/mars-north1/subnetworks",
                subnet("sub3", "10.9.0.0/24"),
            )
            .await,
        400,
        "INVALID_ARGUMENT",
        "invalid",
        "Invalid value for field 'region': 'mars-north1'. Unknown region.",
    );
    assert_error(
        &http.post("regions/us-central1/subnetworks", json!({"name": "sub3", "network": "global/networks/ghost", "ipCidrRange": "10.9.0.0/24"})).await,
        400, "INVALID_ARGUMENT", "invalid", "The referenced network resource cannot be found.",
    );
    let secondaries = json!({
        "name": "sub4", "network": "global/networks/net", "ipCidrRange": "10.20.0.0/24",
        "secondaryIpRanges": [
            {"rangeName": "pods", "ipCidrRange": "10.30.0.0/16"},
            {"rangeName": "pods", "ipCidrRange": "10.31.0.0/16"},
        ],
    });
    assert_error(
        &http
            .post("regions/us-central1/subnetworks", secondaries)
            .await,
        400,
        "INVALID_ARGUMENT",
        "invalid",
        "resource.secondaryIpRanges[1].rangeName",
    );
    let self_overlap = json!({
        "name": "sub4", "network": "global/networks/net", "ipCidrRange": "10.20.0.0/24",
        "secondaryIpRanges": [{"rangeName": "pods", "ipCidrRange": "10.20.0.0/16"}],
    });
    assert_error(
        &http
            .post("regions/us-central1/subnetworks", self_overlap)
            .await,
        400,
        "INVALID_ARGUMENT",
        "invalid",
        "conflicts with existing subnetwork 'sub4'",
    );
    // A network in use: the DELETE is accepted and its operation fails.
    let (status, op) = http.delete("global/networks/net").await;
    assert_eq!(status, 200, "{op}");
    let done = http.wait(&op).await;
    assert_eq!(
        done["error"]["errors"][0],
        json!({"code": "RESOURCE_IN_USE_BY_ANOTHER_RESOURCE",
            "message": "The network resource 'projects/a3-sim-test/global/networks/net' is already being used by 'projects/a3-sim-test/regions/us-east4/subnetworks/sub'"}),
        "{done}"
    );
    assert_eq!(http.get("global/networks/net").await.0, 200);
    assert_error(
        &http
            .post(
                "global/firewalls",
                json!({"name": "fw", "allowed": [{"IPProtocol": "tcp"}]}),
            )
            .await,
        400,
        "INVALID_ARGUMENT",
        "invalid",
        "/projects/a3-sim-test/global/networks/default'. The referenced network resource cannot be found.",
    );
    let beta_only = json!({
        "name": "placement", "groupPlacementPolicy": {"collocation": "COLLOCATED", "maxDistance": 2},
    });
    assert_error(
        &http
            .post("regions/us-central1/resourcePolicies", beta_only)
            .await,
        400,
        "INVALID_ARGUMENT",
        "invalid",
        "Unknown name \"maxDistance\"",
    );
    let spread_and_compact = json!({
        "name": "placement",
        "groupPlacementPolicy": {"collocation": "COLLOCATED", "availabilityDomainCount": 2},
    });
    assert_error(
        &http
            .post("regions/us-central1/resourcePolicies", spread_and_compact)
            .await,
        400,
        "INVALID_ARGUMENT",
        "invalid",
        "availabilityDomainCount",
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn subnet_patch_needs_the_current_fingerprint_and_expansion_a_superset() {
    let sim = start().await;
    let http = Http::new(&sim);
    let op = http
        .post(
            "global/networks",
            json!({"name": "n", "autoCreateSubnetworks": false}),
        )
        .await
        .1;
    http.wait(&op).await;
    let op = http
        .post(
            "regions/us-east4/subnetworks",
            json!({"name": "s", "network": "global/networks/n", "ipCidrRange": "10.0.0.0/24"}),
        )
        .await
        .1;
    assert_eq!(op["operationType"], "insert");
    assert!(
        op["region"]
            .as_str()
            .is_some_and(|r| r.ends_with("/regions/us-east4"))
    );
    http.wait(&op).await;
    let subnet = http.get("regions/us-east4/subnetworks/s").await.1;
    let fingerprint = subnet["fingerprint"]
        .as_str()
        .expect("fingerprint")
        .to_string();

    let add = |fp: Option<&str>| {
        let mut body =
            json!({"secondaryIpRanges": [{"rangeName": "pods", "ipCidrRange": "10.8.0.0/16"}]});
        if let Some(fp) = fp {
            body["fingerprint"] = json!(fp);
        }
        body
    };
    assert_error(
        &http
            .patch("regions/us-east4/subnetworks/s", add(None))
            .await,
        400,
        "INVALID_ARGUMENT",
        "required",
        "Required field 'resource.fingerprint' not specified",
    );
    assert_error(
        &http
            .patch("regions/us-east4/subnetworks/s", add(Some("AAAAAAAAAAA=")))
            .await,
        412,
        "FAILED_PRECONDITION",
        "conditionNotMet",
        "Supplied fingerprint does not match current metadata fingerprint.",
    );
    let op = http
        .patch("regions/us-east4/subnetworks/s", add(Some(&fingerprint)))
        .await
        .1;
    assert_eq!(op["operationType"], "patch");
    http.wait(&op).await;
    // The old fingerprint is now stale.
    assert_error(
        &http
            .patch("regions/us-east4/subnetworks/s", add(Some(&fingerprint)))
            .await,
        412,
        "FAILED_PRECONDITION",
        "conditionNotMet",
        "fingerprint",
    );
    let current = http.get("regions/us-east4/subnetworks/s").await.1;
    let fresh = current["fingerprint"]
        .as_str()
        .expect("fingerprint")
        .to_string();
    let swap = json!({
        "fingerprint": fresh,
        "secondaryIpRanges": [{"rangeName": "svc", "ipCidrRange": "10.9.0.0/20"}],
    });
    assert_error(
        &http.patch("regions/us-east4/subnetworks/s", swap).await,
        400,
        "INVALID_ARGUMENT",
        "invalid",
        "Cannot add and remove secondary IP ranges in the same request.",
    );

    assert_error(
        &http
            .post(
                "regions/us-east4/subnetworks/s/expandIpCidrRange",
                json!({"ipCidrRange": "10.0.0.0/25"}),
            )
            .await,
        400,
        "INVALID_ARGUMENT",
        "invalid",
        "superset",
    );
    assert_error(
        &http
            .post(
                "regions/us-east4/subnetworks/s/expandIpCidrRange",
                json!({"ipCidrRange": "10.0.0.0/8"}),
            )
            .await,
        400,
        "INVALID_ARGUMENT",
        "invalid",
        "conflicts with existing subnetwork 's'",
    );
    let op = http
        .post(
            "regions/us-east4/subnetworks/s/expandIpCidrRange",
            json!({"ipCidrRange": "10.0.0.0/22"}),
        )
        .await
        .1;
    assert_eq!(op["operationType"], "expandIpCidrRange");
    http.wait(&op).await;
    assert_eq!(
        http.get("regions/us-east4/subnetworks/s").await.1["ipCidrRange"],
        "10.0.0.0/22"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn auto_mode_networks_get_one_subnet_per_region() {
    let sim = start().await;
    let http = Http::new(&sim);
    let op = http
        .post(
            "global/networks",
            json!({"name": "auto", "autoCreateSubnetworks": true}),
        )
        .await
        .1;
    http.wait(&op).await;
    let net = http.get("global/networks/auto").await.1;
    let links = net["subnetworks"].as_array().expect("subnetworks");
    assert_eq!(links.len(), a3ctl_sim::geo::REGIONS.len());
    let central = http.get("regions/us-central1/subnetworks/auto").await.1;
    assert_eq!(central["ipCidrRange"], "10.128.0.0/20");
    let aggregated = http.get("aggregated/subnetworks").await.1;
    assert_eq!(aggregated["kind"], "compute#subnetworkAggregatedList");
    assert_eq!(
        aggregated["items"]["regions/europe-west4"]["subnetworks"][0]["ipCidrRange"],
        "10.164.0.0/20"
    );

    assert_error(
        &http.post("regions/us-central1/subnetworks", json!({"name": "extra", "network": "global/networks/auto", "ipCidrRange": "10.200.0.0/16"})).await,
        400, "INVALID_ARGUMENT", "invalid",
        "Extended subnetworks in auto subnet mode networks cannot overlap with 10.128.0.0/9.",
    );
    assert_error(
        &http.delete("regions/us-central1/subnetworks/auto").await,
        400,
        "FAILED_PRECONDITION",
        "resourceInUseByAnotherResource",
        "is already being used by 'projects/a3-sim-test/global/networks/auto'",
    );
    // The auto subnetworks go with the network.
    let op = http.delete("global/networks/auto").await.1;
    http.wait(&op).await;
    assert_eq!(
        http.get("regions/us-central1/subnetworks/auto").await.0,
        404
    );
    assert_eq!(sim.inventory()["compute"]["subnetworks"], json!([]));
}

#[tokio::test(flavor = "multi_thread")]
async fn request_id_replays_the_original_operation() {
    let sim = start().await;
    let http = Http::new(&sim);
    let rid = "6f1f5a3e-2b7c-4d8e-9a0b-1c2d3e4f5a6b";
    let body = json!({"name": "idem", "autoCreateSubnetworks": false});
    let first = http
        .post(&format!("global/networks?requestId={rid}"), body.clone())
        .await
        .1;
    assert_eq!(first["clientOperationId"], rid);
    http.wait(&first).await;
    // The retry does not act again (no 409): it returns the original operation, now DONE.
    let (status, again) = http
        .post(&format!("global/networks?requestId={rid}"), body.clone())
        .await;
    assert_eq!(status, 200, "{again}");
    assert_eq!(again["name"], first["name"]);
    assert_eq!(again["status"], "DONE");
    // Without the request id it is a duplicate.
    assert_eq!(http.post("global/networks", body).await.0, 409);
    // Deletes too.
    let del = http
        .delete("global/networks/idem?requestId=11111111-2222-3333-4444-555555555555")
        .await
        .1;
    http.wait(&del).await;
    let (status, replay) = http
        .delete("global/networks/idem?requestId=11111111-2222-3333-4444-555555555555")
        .await;
    assert_eq!(status, 200, "{replay}");
    assert_eq!(replay["name"], del["name"]);
    let ops = http.get("global/operations").await.1;
    assert_eq!(ops["kind"], "compute#operationList");
    assert_eq!(ops["items"].as_array().map(Vec::len), Some(2));
}

#[tokio::test(flavor = "multi_thread")]
async fn scripted_faults_end_operations_in_error() {
    let sim = start().await;
    let http = Http::new(&sim);
    let cli = Cli::new(&sim);
    let scripted = |kind: &str, action: Value| json!({"kind": kind, "verb": "create", "nth": 1, "action": action});
    let faults: a3ctl_sim::faults::FaultConfig = serde_json::from_value(json!({
        "scripted": [
            scripted("compute.network", json!("quota_exceeded")),
            scripted("compute.firewall", json!("operation_error")),
            scripted("compute.router", json!({"status": 429, "reason": "rateLimitExceeded", "message": "Rate Limit Exceeded"})),
        ]
    }))
    .expect("fault config");
    sim.set_faults(faults);

    let stderr = cli
        .fails(&["compute", "networks", "create", "q", "--subnet-mode=custom"])
        .await;
    assert!(
        stderr.contains("Quota 'NETWORKS' exceeded.  Limit: 15.0 globally."),
        "{stderr}"
    );
    let ops = http.get("global/operations").await.1;
    let failed = &ops["items"][0];
    assert_eq!(failed["status"], "DONE");
    assert_eq!(failed["httpErrorStatusCode"], 403);
    assert_eq!(failed["httpErrorMessage"], "FORBIDDEN");
    assert_eq!(failed["error"]["errors"][0]["code"], "QUOTA_EXCEEDED");
    assert_eq!(http.get("global/networks/q").await.0, 404);

    // The second network create is not scripted.
    let op = http
        .post(
            "global/networks",
            json!({"name": "q", "autoCreateSubnetworks": false}),
        )
        .await
        .1;
    assert!(http.wait(&op).await.get("error").is_none());
    let op = http
        .post("global/firewalls", json!({"name": "fw", "network": "global/networks/q", "allowed": [{"IPProtocol": "icmp"}]}))
        .await
        .1;
    let done = http.wait(&op).await;
    assert_eq!(done["status"], "DONE");
    assert_eq!(done["httpErrorStatusCode"], 500);
    assert_eq!(done["error"]["errors"][0]["code"], "INTERNAL_ERROR");
    assert_eq!(http.get("global/firewalls/fw").await.0, 404);
    assert_error(
        &http
            .post(
                "regions/us-central1/routers",
                json!({"name": "r", "network": "global/networks/q"}),
            )
            .await,
        429,
        "RESOURCE_EXHAUSTED",
        "rateLimitExceeded",
        "Rate Limit Exceeded",
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn realistic_latency_keeps_operations_running_until_the_clock_passes_them() {
    let sim = a3ctl_sim::start(SimConfig {
        latency: a3ctl_sim::latency::LatencyProfile::realistic(),
        ..SimConfig::default()
    })
    .await
    .expect("simulator starts");
    let http = Http::new(&sim);
    let op = http
        .post(
            "global/networks",
            json!({"name": "slow", "autoCreateSubnetworks": false}),
        )
        .await
        .1;
    assert!(
        ["PENDING", "RUNNING"].contains(&op["status"].as_str().unwrap_or("")),
        "{op}"
    );
    assert_eq!(op["kind"], "compute#operation");
    assert!(
        op["name"]
            .as_str()
            .is_some_and(|n| n.starts_with("operation-"))
    );
    assert!(
        op["targetLink"]
            .as_str()
            .is_some_and(|l| l.ends_with("/global/networks/slow"))
    );
    // With a manual clock, wait returns the operation as it is.
    let waited = http.wait(&op).await;
    assert_ne!(waited["status"], "DONE");
    // Invisible, but taken.
    assert_eq!(http.get("global/networks/slow").await.0, 404);
    assert_eq!(
        http.post(
            "global/networks",
            json!({"name": "slow", "autoCreateSubnetworks": false})
        )
        .await
        .0,
        409
    );
    // Network inserts take 20-40 simulated seconds.
    sim.advance_secs(15.0);
    let (_, polled) = http.get(&Http::op_path(&op)).await;
    assert_eq!(polled["status"], "RUNNING");
    assert!(polled["startTime"].is_string());
    assert_eq!(http.get("global/networks/slow").await.0, 404);
    sim.advance_secs(30.0);
    let (_, polled) = http.get(&Http::op_path(&op)).await;
    assert_eq!(polled["status"], "DONE");
    assert_eq!(polled["progress"], 100);
    assert!(polled["endTime"].is_string());
    assert_eq!(http.get("global/networks/slow").await.0, 200);
}

#[tokio::test(flavor = "multi_thread")]
async fn wait_sleeps_through_a_scaled_clock() {
    // 1 simulated second = 1 real millisecond: a 20-40 s insert takes 20-40 ms of real time.
    let sim = a3ctl_sim::start(SimConfig::realistic(0.001))
        .await
        .expect("simulator starts");
    let http = Http::new(&sim);
    let op = http
        .post(
            "global/networks",
            json!({"name": "scaled", "autoCreateSubnetworks": false}),
        )
        .await
        .1;
    assert_ne!(op["status"], "DONE");
    let done = http.wait(&op).await;
    assert_eq!(done["status"], "DONE", "{done}");
    assert_eq!(http.get("global/networks/scaled").await.0, 200);
}

/// The reservation `gcloud compute reservations create --format=json` printed (a list of one).
fn first(value: Value) -> Value {
    if value.is_array() {
        value[0].clone()
    } else {
        value
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn reservations_with_gcloud() {
    let sim = start().await;
    let cli = Cli::new(&sim);
    let create = [
        "compute",
        "reservations",
        "create",
        "a3-mega",
        "--zone",
        "us-central1-a",
        "--vm-count",
        "2",
        "--machine-type",
        "a3-megagpu-8g",
        "--accelerator",
        "count=8,type=nvidia-h100-mega-80gb",
        "--require-specific-reservation",
    ];
    let created = first(cli.json(&create).await);
    assert_eq!(created["kind"], "compute#reservation", "{created}");
    assert_eq!(created["name"], "a3-mega");
    assert_eq!(created["status"], "READY");
    assert!(created["id"].is_string(), "int64 ids are strings");
    assert!(created["creationTimestamp"].is_string());
    assert_eq!(
        created["selfLink"],
        format!(
            "https://www.googleapis.com/compute/v1/projects/{PROJECT}/zones/us-central1-a/reservations/a3-mega"
        )
    );
    assert_eq!(
        created["zone"],
        format!("https://www.googleapis.com/compute/v1/projects/{PROJECT}/zones/us-central1-a")
    );
    let specific = &created["specificReservation"];
    assert_eq!(specific["count"], "2", "int64 count is a string");
    assert_eq!(specific["inUseCount"], "0");
    assert_eq!(
        specific["instanceProperties"]["machineType"],
        "a3-megagpu-8g"
    );
    assert_eq!(
        specific["instanceProperties"]["guestAccelerators"],
        json!([{"acceleratorType": "nvidia-h100-mega-80gb", "acceleratorCount": 8}])
    );
    assert_eq!(created["specificReservationRequired"], true);
    assert_eq!(created["shareSettings"]["shareType"], "LOCAL");

    let described = cli
        .json(&[
            "compute",
            "reservations",
            "describe",
            "a3-mega",
            "--zone",
            "us-central1-a",
        ])
        .await;
    assert_eq!(described, created);

    // A second reservation in another zone, with local SSDs, shared with another project.
    let other = first(
        cli.json(&[
            "compute",
            "reservations",
            "create",
            "cpu",
            "--zone",
            "europe-west4-b",
            "--vm-count",
            "3",
            "--machine-type",
            "n2-standard-8",
            "--local-ssd",
            "size=375,interface=nvme",
            "--share-setting",
            "projects",
            "--share-with",
            "other-proj",
        ])
        .await,
    );
    assert_eq!(
        other["specificReservation"]["instanceProperties"]["localSsds"],
        json!([{"diskSizeGb": "375", "interface": "NVME"}])
    );
    assert_eq!(other["specificReservationRequired"], false);
    assert_eq!(
        other["shareSettings"],
        json!({"shareType": "SPECIFIC_PROJECTS", "projectMap": {"other-proj": {"projectId": "other-proj"}}})
    );

    // gcloud lists through the aggregated list, across zones.
    let listed = cli.json(&["compute", "reservations", "list"]).await;
    let names: Vec<&str> = listed
        .as_array()
        .expect("list")
        .iter()
        .filter_map(|r| r["name"].as_str())
        .collect();
    assert_eq!(names, ["a3-mega", "cpu"], "{listed}");
    let listed = cli
        .json(&[
            "compute",
            "reservations",
            "list",
            "--filter=zone:europe-west4-b",
        ])
        .await;
    assert_eq!(listed.as_array().map(Vec::len), Some(1), "{listed}");
    assert_eq!(listed[0]["name"], "cpu");

    // The same name again is a 409.
    let stderr = cli.fails(&create).await;
    assert!(
        stderr.contains(&format!(
            "The resource 'projects/{PROJECT}/zones/us-central1-a/reservations/a3-mega' already exists"
        )),
        "{stderr}"
    );

    let out = cli
        .run(&[
            "compute",
            "reservations",
            "delete",
            "a3-mega",
            "--zone",
            "us-central1-a",
            "--quiet",
        ])
        .await;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stderr = cli
        .fails(&[
            "compute",
            "reservations",
            "describe",
            "a3-mega",
            "--zone",
            "us-central1-a",
        ])
        .await;
    assert!(
        stderr.contains(&format!(
            "The resource 'projects/{PROJECT}/zones/us-central1-a/reservations/a3-mega' was not found"
        )),
        "{stderr}"
    );
    let listed = cli.json(&["compute", "reservations", "list"]).await;
    assert_eq!(listed.as_array().map(Vec::len), Some(1), "{listed}");
    // Its operations are zonal.
    let ops = Http::new(&sim)
        .get("zones/us-central1-a/operations")
        .await
        .1;
    let types: Vec<&str> = ops["items"]
        .as_array()
        .expect("zonal operations")
        .iter()
        .filter_map(|o| o["operationType"].as_str())
        .collect();
    assert_eq!(types, ["insert", "delete"], "{ops}");
    let inventory = sim.inventory();
    assert_eq!(inventory["compute"]["reservations"][0]["name"], "cpu");
    assert!(
        sim.request_counts()
            .contains_key("DELETE /compute/v1/projects/{}/zones/{}/reservations/{}"),
        "{:?}",
        sim.request_counts()
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn reservation_rules_fail_in_gcloud_with_the_real_codes() {
    let sim = start().await;
    let cli = Cli::new(&sim);
    let http = Http::new(&sim);
    let create =
        |name: &'static str, zone: &'static str, count: &'static str, machine: &'static str| {
            vec![
                "compute",
                "reservations",
                "create",
                name,
                "--zone",
                zone,
                "--vm-count",
                count,
                "--machine-type",
                machine,
            ]
        };
    let stderr = cli
        .fails(&create("zero", "us-central1-a", "0", "n2-standard-8"))
        .await;
    assert!(
        stderr.contains(
            "Invalid value for field 'resource.specificReservation.count': '0'. Must be greater than or equal to 1."
        ),
        "{stderr}"
    );
    // A3 Mega is not offered in us-central1-b.
    let stderr = cli
        .fails(&create("mega", "us-central1-b", "1", "a3-megagpu-8g"))
        .await;
    assert!(
        stderr.contains(
            "Machine type with name 'a3-megagpu-8g' does not exist in zone 'us-central1-b'."
        ),
        "{stderr}"
    );
    let stderr = cli
        .fails(&create("typo", "us-central1-a", "1", "e2-standard-3"))
        .await;
    assert!(
        stderr.contains(
            "Machine type with name 'e2-standard-3' does not exist in zone 'us-central1-a'."
        ),
        "{stderr}"
    );
    let mut bad_name = create("Bad_Name", "us-central1-a", "1", "n2-standard-8");
    bad_name[3] = "Bad_Name";
    let stderr = cli.fails(&bad_name).await;
    assert!(
        stderr.contains("Invalid value for field 'resource.name': 'Bad_Name'."),
        "{stderr}"
    );
    let mut wrong_gpu = create("wrong", "us-central1-a", "1", "a3-megagpu-8g");
    wrong_gpu.extend(["--accelerator", "count=8,type=nvidia-h100-80gb"]);
    let stderr = cli.fails(&wrong_gpu).await;
    assert!(
        stderr.contains("[nvidia-h100-80gb, a3-megagpu-8g] features are not compatible"),
        "{stderr}"
    );
    assert_eq!(sim.inventory()["compute"]["reservations"], json!([]));

    // What gcloud cannot send.
    assert_error(
        &http
            .post(
                "zones/mars-north1-a/reservations",
                json!({"name": "r", "specificReservation": {"count": "1", "instanceProperties": {"machineType": "n2-standard-8"}}}),
            )
            .await,
        400,
        "INVALID_ARGUMENT",
        "invalid",
        "Invalid value for field 'zone': 'mars-north1-a'. Unknown zone.",
    );
    assert_error(
        &http
            .post(
                "zones/us-central1-a/reservations",
                json!({"name": "r", "specificReservation": {"instanceProperties": {"machineType": "n2-standard-8"}}}),
            )
            .await,
        400,
        "INVALID_ARGUMENT",
        "required",
        "Required field 'resource.specificReservation.count' not specified",
    );
    assert_error(
        &http
            .post(
                "zones/us-central1-a/reservations",
                json!({"name": "r", "specificReservation": {"count": 1, "instanceProperties": {}}}),
            )
            .await,
        400,
        "INVALID_ARGUMENT",
        "required",
        "Required field 'resource.specificReservation.instanceProperties.machineType' not specified",
    );
    assert_error(
        &http
            .post("zones/us-central1-a/reservations", json!({"name": "r"}))
            .await,
        400,
        "INVALID_ARGUMENT",
        "required",
        "Required field 'resource.specificReservation' not specified",
    );
    assert_eq!(http.get("zones/mars-north1-a/reservations/r").await.0, 400);
    let (status, empty) = http.get("zones/us-central1-a/reservations").await;
    assert_eq!(status, 200);
    assert_eq!(empty["kind"], "compute#reservationList");
    assert!(empty.get("items").is_none(), "{empty}");
}

#[tokio::test(flavor = "multi_thread")]
async fn reservations_show_creating_and_deleting_while_their_operations_run() {
    let sim = a3ctl_sim::start(SimConfig {
        latency: a3ctl_sim::latency::LatencyProfile::realistic(),
        ..SimConfig::default()
    })
    .await
    .expect("simulator starts");
    let http = Http::new(&sim);
    let body = json!({
        "name": "slow",
        "specificReservation": {
            "count": "4",
            "instanceProperties": {"machineType": "a3-highgpu-8g"},
        },
    });
    let (status, op) = http
        .post("zones/us-east4-a/reservations", body.clone())
        .await;
    assert_eq!(status, 200, "{op}");
    assert_eq!(op["kind"], "compute#operation");
    assert_eq!(op["operationType"], "insert");
    assert!(
        op["zone"]
            .as_str()
            .is_some_and(|z| z.ends_with("/zones/us-east4-a")),
        "{op}"
    );
    assert_ne!(op["status"], "DONE");
    // Listed at once, CREATING; the name is taken; it cannot be deleted yet.
    let (status, creating) = http.get("zones/us-east4-a/reservations/slow").await;
    assert_eq!(status, 200, "{creating}");
    assert_eq!(creating["status"], "CREATING");
    assert_eq!(creating["specificReservation"]["count"], "4");
    assert_eq!(
        http.post("zones/us-east4-a/reservations", body).await.0,
        409
    );
    assert_error(
        &http.delete("zones/us-east4-a/reservations/slow").await,
        400,
        "FAILED_PRECONDITION",
        "resourceNotReady",
        "is not ready",
    );
    let aggregated = http.get("aggregated/reservations").await.1;
    assert_eq!(aggregated["kind"], "compute#reservationAggregatedList");
    assert_eq!(
        aggregated["items"]["zones/us-east4-a"]["reservations"][0]["status"],
        "CREATING"
    );
    assert_eq!(
        aggregated["items"]["zones/us-east4-b"]["warning"]["code"],
        "NO_RESULTS_ON_PAGE"
    );
    assert!(aggregated["items"].get("regions/us-east4").is_none());

    sim.advance_secs(60.0);
    let ready = http.get("zones/us-east4-a/reservations/slow").await.1;
    assert_eq!(ready["status"], "READY");
    let (_, op) = http.delete("zones/us-east4-a/reservations/slow").await;
    assert_eq!(op["operationType"], "delete");
    let deleting = http.get("zones/us-east4-a/reservations/slow").await.1;
    assert_eq!(deleting["status"], "DELETING");
    sim.advance_secs(60.0);
    assert_eq!(http.get("zones/us-east4-a/reservations/slow").await.0, 404);
}

#[tokio::test(flavor = "multi_thread")]
async fn reservation_quota_fault_names_the_regional_cpus_quota() {
    let sim = start().await;
    let cli = Cli::new(&sim);
    let faults: a3ctl_sim::faults::FaultConfig = serde_json::from_value(json!({
        "scripted": [{"kind": "compute.reservation", "verb": "create", "nth": 1, "action": "quota_exceeded"}]
    }))
    .expect("fault config");
    sim.set_faults(faults);
    let stderr = cli
        .fails(&[
            "compute",
            "reservations",
            "create",
            "q",
            "--zone=us-west1-b",
            "--vm-count=1",
            "--machine-type=a3-highgpu-8g",
        ])
        .await;
    assert!(
        stderr.contains("Quota 'CPUS' exceeded.  Limit: 24.0 in region us-west1."),
        "{stderr}"
    );
    assert_eq!(sim.inventory()["compute"]["reservations"], json!([]));
}

/// The managed instance groups of a node pool, as `gcloud compute instance-groups managed`
/// lists and describes them: one per zone of the pool, following its size through create,
/// resize and delete, gone with the pool and with its cluster, and read-only.
#[tokio::test(flavor = "multi_thread")]
async fn node_pool_instance_groups_follow_the_pool_in_gcloud() {
    let sim = start().await;
    let cli = Cli::new(&sim);
    cli.json(&[
        "compute",
        "networks",
        "create",
        "main",
        "--subnet-mode=custom",
    ])
    .await;
    cli.json(&[
        "compute",
        "networks",
        "subnets",
        "create",
        "main-sub",
        "--network=main",
        "--region=us-central1",
        "--range=10.128.0.0/20",
    ])
    .await;
    cli.json(&[
        "container",
        "clusters",
        "create",
        "igm",
        "--location=us-central1",
        "--network=main",
        "--subnetwork=main-sub",
        "--enable-ip-alias",
        "--node-locations=us-central1-a",
        "--num-nodes=1",
        "--machine-type=e2-standard-4",
    ])
    .await;
    let pool = cli
        .json(&[
            "container",
            "node-pools",
            "create",
            "work",
            "--cluster=igm",
            "--location=us-central1",
            "--node-locations=us-central1-a,us-central1-b",
            "--machine-type=e2-standard-8",
            "--num-nodes=2",
        ])
        .await;
    let pool = first(pool);
    let urls = pool["instanceGroupUrls"].as_array().expect("urls").clone();
    assert_eq!(urls.len(), 2, "{pool}");
    let name_in = |zone: &str| -> String {
        let url = urls
            .iter()
            .filter_map(Value::as_str)
            .find(|u| u.contains(&format!("/zones/{zone}/")))
            .expect("a group in the zone");
        url.rsplit('/').next().unwrap().to_string()
    };
    let (in_a, in_b) = (name_in("us-central1-a"), name_in("us-central1-b"));
    assert!(
        in_a.starts_with("gke-igm-work-") && in_a.ends_with("-grp"),
        "{in_a}"
    );
    let describe = |name: String, zone: &'static str| {
        let cli = &cli;
        async move {
            cli.json(&[
                "compute",
                "instance-groups",
                "managed",
                "describe",
                &name,
                &format!("--zone={zone}"),
            ])
            .await
        }
    };
    let group = describe(in_a.clone(), "us-central1-a").await;
    assert_eq!(group["kind"], "compute#instanceGroupManager", "{group}");
    assert_eq!(group["targetSize"], 2, "{group}");
    assert_eq!(group["status"]["isStable"], true, "{group}");
    assert_eq!(group["currentActions"]["none"], 2, "{group}");
    assert_eq!(group["baseInstanceName"], in_a.trim_end_matches("-grp"));
    // The pool's `instanceGroupUrls` name the group Compute serves.
    assert!(
        urls.iter()
            .any(|u| Some(u.as_str().unwrap()) == group["selfLink"].as_str()),
        "{group}"
    );
    assert!(
        group["zone"]
            .as_str()
            .unwrap()
            .ends_with("/zones/us-central1-a"),
        "{group}"
    );

    // `list` of one zone: the cluster's default pool and the new pool's group there, with the
    // size of each (from the instance groups).
    let listed = cli
        .json(&[
            "compute",
            "instance-groups",
            "managed",
            "list",
            "--zones=us-central1-a",
        ])
        .await;
    let sizes: Vec<(String, u64, u64)> = listed
        .as_array()
        .expect("a list")
        .iter()
        .map(|g| {
            (
                g["name"].as_str().unwrap().to_string(),
                g["targetSize"].as_u64().unwrap(),
                // gcloud fills `size` in from the instance group, as text.
                g["size"].as_str().unwrap().parse().unwrap(),
            )
        })
        .collect();
    assert_eq!(sizes.len(), 2, "{listed}");
    assert!(sizes.contains(&(in_a.clone(), 2, 2)), "{sizes:?}");
    assert!(
        sizes
            .iter()
            .any(|(n, t, s)| n.starts_with("gke-igm-default-pool-") && (*t, *s) == (1, 1)),
        "{sizes:?}"
    );

    // Resize: each zone's group targets the new size.
    cli.json(&[
        "container",
        "clusters",
        "resize",
        "igm",
        "--location=us-central1",
        "--node-pool=work",
        "--num-nodes=3",
        "--quiet",
    ])
    .await;
    assert_eq!(
        describe(in_a.clone(), "us-central1-a").await["targetSize"],
        3
    );
    assert_eq!(
        describe(in_b.clone(), "us-central1-b").await["targetSize"],
        3
    );

    // Read-only: a resize of GKE's group is not simulated.
    let refused = cli
        .fails(&[
            "compute",
            "instance-groups",
            "managed",
            "resize",
            &in_a,
            "--zone=us-central1-a",
            "--size=5",
        ])
        .await;
    // Google serves `instanceGroupManagers.resize`: the simulator says it does not (501), not
    // that the URL is unknown.
    assert!(
        refused.contains("compute.instanceGroupManagers.resize")
            && refused.contains("not simulated"),
        "{refused}"
    );
    let http = Http::new(&sim);
    let (status, body) = http
        .delete(&format!("zones/us-central1-a/instanceGroupManagers/{in_a}"))
        .await;
    // `instanceGroupManagers.delete` is Google's: not simulated (501), like the resize.
    assert_eq!(status, 501, "{body}");
    assert_eq!(body["error"]["errors"][0]["reason"], "notImplemented");

    // Delete the pool: its groups go with it.
    cli.run(&[
        "container",
        "node-pools",
        "delete",
        "work",
        "--cluster=igm",
        "--location=us-central1",
        "--quiet",
    ])
    .await;
    let gone = cli
        .fails(&[
            "compute",
            "instance-groups",
            "managed",
            "describe",
            &in_b,
            "--zone=us-central1-b",
        ])
        .await;
    assert!(gone.contains("was not found"), "{gone}");
    let (_, aggregated) = http.get("aggregated/instanceGroupManagers").await;
    let names: Vec<String> = aggregated["items"]
        .as_object()
        .unwrap()
        .values()
        .flat_map(|scope| {
            scope["instanceGroupManagers"]
                .as_array()
                .cloned()
                .unwrap_or_default()
        })
        .map(|g| g["name"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(names.len(), 1, "{names:?}");
    assert!(names[0].starts_with("gke-igm-default-pool-"), "{names:?}");

    // Delete the cluster: no group is left.
    cli.run(&[
        "container",
        "clusters",
        "delete",
        "igm",
        "--location=us-central1",
        "--quiet",
    ])
    .await;
    let (_, aggregated) = http.get("aggregated/instanceGroupManagers").await;
    assert!(
        aggregated["items"]
            .as_object()
            .unwrap()
            .values()
            .all(|scope| scope.get("instanceGroupManagers").is_none()),
        "{aggregated}"
    );
}
