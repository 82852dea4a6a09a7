//! Every validation rule, through the CLI: a bad blueprint makes `a3ctl plan` fail with the rule's
//! message, and no request reaches the (simulated) cloud. The exact wording, line and column of
//! each rule are unit-tested in `src/blueprint/`; this checks the whole path a user takes.

use crate::common;

use common::TestContext;

const BASE: &str = "name = \"a3mini\"\nproject = \"my-project\"\nregion = \"us-central1\"\nzone = \"us-central1-a\"\n";
const POOL: &str = "\n[[gpu_pool]]\nmachine_type = \"a3-megagpu-8g\"\nnodes = 1\n";

const ULTRA: &str = "\n[[gpu_pool]]\nmachine_type = \"a3-ultragpu-8g\"\nnodes = 2\n";

/// An A3 Ultra blueprint in a zone that offers it, with `extra` after its pool.
fn rdma(extra: &str) -> String {
    format!(
        "{}{ULTRA}{extra}",
        BASE.replace("us-central1-a", "us-central1-b")
    )
}

/// (what is wrong, blueprint text, a piece of the expected message).
fn cases() -> Vec<(&'static str, String, &'static str)> {
    let with = |extra: &str| format!("{BASE}{POOL}{extra}");
    vec![
        ("unknown key with a suggestion", format!("{BASE}projct = \"x\"{POOL}"), "did you mean `project`"),
        ("wrong type", format!("{BASE}{}", POOL.replace("nodes = 1", "nodes = \"one\"")), "nodes"),
        ("missing required key", POOL.to_string(), "name"),
        ("deployment name rule", format!("{}{POOL}", BASE.replace("a3mini", "A3_Mini")), "A3_Mini"),
        ("name too long", format!("{}{POOL}", BASE.replace("a3mini", "a3-mini-deployment-name-way-too-long")), "a3-mini-deployment-name-way-too-long"),
        ("project id rule", format!("{}{POOL}", BASE.replace("my-project", "x")), "project"),
        ("zone inside region", format!("{}{POOL}", BASE.replace("us-central1-a", "europe-west4-b")), "europe-west4-b"),
        ("machine type offered in zone", format!("{}{POOL}", BASE.replace("us-central1-a", "us-central1-b")), "us-central1-b"),
        ("pool name length with cluster", with("").replace("[[gpu_pool]]\n", "[[gpu_pool]]\nname = \"a-very-long-node-pool-name-for-a3\"\n"), "a-very-long-node-pool-name-for-a3"),
        ("CIDR overlap", with("\n[network]\npods = \"10.0.0.0/14\"\n"), "overlap"),
        ("CIDR host bits", with("\n[network]\nprimary_subnet = \"10.0.0.1/20\"\n"), "10.0.0.1/20"),
        ("GPU MTU", with("\n[network]\ngpu_mtu = 8896\n"), "8244"),
        ("primary MTU range", with("\n[network]\nprimary_mtu = 9000\n"), "9000"),
        ("gpu_subnets count", with("\n[network]\ngpu_subnets = [\"192.168.0.0/24\"]\n"), "8"),
        ("compact placement in one zone", with("").replace("nodes = 1\n", "nodes = 1\nzones = [\"us-central1-a\", \"us-central1-c\"]\n"), "Compact placement needs exactly one zone"),
        ("spot with a reservation", with("").replace("nodes = 1\n", "nodes = 1\ncapacity = \"spot\"\nreservation = \"r\"\nplacement = \"none\"\n"), "reservation"),
        ("host maintenance, which no v1 API carries", with("").replace("nodes = 1\n", "nodes = 1\nhost_maintenance = \"periodic\"\n"), "v1beta1"),
        ("flex-start, which needs an autoscaling pool", with("").replace("nodes = 1\n", "nodes = 1\ncapacity = \"flex-start\"\n"), "1.32.2-gke.1652000"),
        ("spot with compact placement", with("").replace("nodes = 1\n", "nodes = 1\ncapacity = \"spot\"\nplacement = \"compact\"\n"), "compact"),
        ("reservation required", with("").replace("nodes = 1\n", "nodes = 1\ncapacity = \"reservation\"\n"), "reservation"),
        ("block without reservation", with("").replace("nodes = 1\n", "nodes = 1\nreservation_block = \"b\"\n"), "reservation"),
        ("bucket region", with("\n[[bucket]]\nname = \"my-project-a3mini-data\"\nlocation = \"europe-west4\"\n"), "europe-west4"),
        ("bucket name rule", with("\n[[bucket]]\nname = \"Bad_Bucket\"\n"), "Bad_Bucket"),
        ("Filestore capacity range", with("\n[filestore]\ntier = \"BASIC_SSD\"\ncapacity_gb = 1024\n"), "2560"),
        ("Filestore tier", with("\n[filestore]\ntier = \"PREMIUM\"\n"), "PREMIUM"),
        ("GPUDirect minimum GKE version", with("\n[cluster]\nversion = \"1.31.13-gke.1023000\"\n"), "1.31.13-gke.1023000"),
        ("unknown release channel", with("\n[cluster]\nrelease_channel = \"nightly\"\n"), "nightly"),
        ("unknown stack", with("\n[software]\nstack = \"1999-01\"\n"), "1999-01"),
        ("duplicate pool names", format!("{BASE}{}{}", POOL.replace("nodes = 1", "name = \"gpu\"\nnodes = 1"), POOL.replace("nodes = 1", "name = \"gpu\"\nnodes = 1")), "gpu"),
        ("node count", with("").replace("nodes = 1", "nodes = 0"), "0"),
        ("state keys of another backend", with("\n[state]\nbackend = \"local\"\nbucket = \"b\"\n"), "bucket"),
        ("syntax error", format!("{BASE}{POOL}[cluster\n"), "TOML"),
        ("GKE limit: nodes per pool and zone", with("").replace("nodes = 1", "nodes = 1001"), "must be between 1 and 1000, found 1001"),
        ("GKE limit: node pools per cluster", format!("{BASE}{}", POOL.repeat(200)), "declares 201 node pools"),
        ("GKE limit: nodes per cluster", format!("{BASE}{}", POOL.replace("nodes = 1", "nodes = 1000").repeat(16)), "would have 16,002 nodes; GKE allows"),
        // A3 Ultra and A4 (RDMA) and GKE-managed GPU networking.
        ("A3 Ultra not offered in the zone", format!("{BASE}{ULTRA}"), "`a3-ultragpu-8g` is not offered in zone `us-central1-a`"),
        ("A4 not offered in the zone", format!("{BASE}{}", ULTRA.replace("a3-ultragpu-8g", "a4-highgpu-8g")), "`a4-highgpu-8g` is not offered in zone `us-central1-a`"),
        ("firewall on a RoCE VPC", rdma("\n[network]\ngpu_firewall = true\n"), "A3 Ultra's RDMA VPC cannot have firewall rules"),
        ("RDMA GPU MTU", rdma("\n[network]\ngpu_mtu = 8244\n"), "`gpu_mtu` must be 8896 for GPUDirect-RDMA"),
        ("RDMA pool outside the RoCE profile's zone", format!("{}{}", BASE.replace("us-central1-a", "us-west3-b").replace("\"us-central1\"", "\"us-west3\""), ULTRA.replace("a3-ultragpu-8g", "a4-highgpu-8g").replace("nodes = 2\n", "nodes = 2\nplacement = \"none\"\nzones = [\"us-west3-b\", \"us-west3-c\"]\n")), "A4 pools must be in zone `us-west3-b`, found `us-west3-c`"),
        ("unknown network mode", rdma("\n[network]\nnetwork_mode = \"auto\"\n"), "`network_mode` `auto` is not a network mode"),
        ("managed networking on A3 Mega", with("\n[network]\nnetwork_mode = \"managed\"\n"), "A3 Mega does not support GKE-managed GPU networking"),
        ("managed networking with explicit networks", rdma("\n[network]\nnetwork_mode = \"managed\"\ngpu_range = \"192.168.0.0/16\"\n[cluster]\nversion = \"1.34\"\n"), "`gpu_range` sets up GPU networks, but `network_mode` is `managed`"),
        ("managed networking version gate", rdma("\n[network]\nnetwork_mode = \"managed\"\n[cluster]\nversion = \"1.33\"\n"), "GKE-managed GPU networking needs GKE 1.34.1-gke.1829001 or later, found `1.33`"),
        ("managed networking version gate on a pool", rdma("\n[network]\nnetwork_mode = \"managed\"\n[cluster]\nversion = \"1.34\"\n").replace("nodes = 2\n", "nodes = 2\nversion = \"1.34.0-gke.2201000\"\n"), "found `1.34.0-gke.2201000`"),
        ("RxDM tag on gIB", rdma("\n[software]\nforce_stack = true\nrxdm_tag = \"v1.0.21\"\n"), "A3 Ultra has no RxDM sidecar to tag"),
        ("GKE limit: nodes per multi-network cluster", format!("{BASE}{}", POOL.replace("nodes = 1", "nodes = 1000").repeat(5)), "a multi-network GKE cluster"),
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_rule_stops_plan_with_its_message_and_no_cloud_request() {
    let cx = TestContext::new().await;
    let mut failures = Vec::new();
    for (what, text, expected) in cases() {
        cx.write("bad.toml", &text);
        let run = cx.run(&["plan", "bad.toml"]).await;
        if run.code != Some(1)
            || !run.stderr.contains(expected)
            || !run.stderr.contains("bad.toml:")
        {
            failures.push(format!(
                "{what}: exit {:?}, expected `{expected}` in:\n{}",
                run.code, run.stderr
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n---\n"));
    assert_eq!(
        cx.sim.request_total(),
        0,
        "validation must happen before any cloud call"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn garbage_never_panics() {
    let cx = TestContext::new().await;
    for text in ["", "\u{0}\u{1}", "[[[", "name = 3\n[[gpu_pool]]\n", "= = ="] {
        cx.write("junk.toml", text);
        let run = cx.run(&["validate", "junk.toml"]).await;
        assert_eq!(run.code, Some(1), "{text:?}: {}", run.stderr);
        assert!(!run.stderr.contains("panicked"), "{}", run.stderr);
    }
    let missing = cx.run(&["plan", "does-not-exist.toml"]).await.expect(1);
    assert!(
        missing.stderr.contains("does-not-exist.toml"),
        "{}",
        missing.stderr
    );
}
