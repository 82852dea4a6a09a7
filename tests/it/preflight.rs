//! Preflight: a plan that consumes a reservation the project does not have — missing, short,
//! in another zone, or holding other machines — fails in `plan` and `apply` with what is needed,
//! what is there and the fix, exit 1, and not a single mutating request; `--skip-preflight` goes
//! ahead; a saved plan is checked again when applied.

use crate::common;

use common::gcloud::Gcloud;
use common::{Run, TestContext};

const MEGA: &str = "blueprints/a3-mega.toml";

/// The shipped A3 Mega blueprint consuming reservation `name` instead.
fn mega_with(cx: &TestContext, name: &str) -> String {
    let text = std::fs::read_to_string(cx.path(MEGA)).unwrap().replace(
        "reservation = \"a3mega-reservation\"",
        &format!("reservation = \"{name}\""),
    );
    cx.write("blueprints/mega-other.toml", &text);
    "blueprints/mega-other.toml".into()
}

async fn reserve(cx: &TestContext, name: &str, zone: &str, count: u32, machine: &str, gpu: &str) {
    let (ok, out, err) = Gcloud::in_project(&cx.sim, "my-project")
        .run(&[
            "compute",
            "reservations",
            "create",
            name,
            &format!("--zone={zone}"),
            &format!("--vm-count={count}"),
            &format!("--machine-type={machine}"),
            &format!("--accelerator=count=8,type={gpu}"),
            "--require-specific-reservation",
        ])
        .await;
    assert!(ok, "gcloud reservations create failed:\n{out}\n{err}");
}

/// `plan` and `apply` of `blueprint` both fail preflight with `problem`, changing nothing.
async fn refused(cx: &TestContext, blueprint: &str, problem: &str, fix: &str) -> Run {
    refused_on(cx, blueprint, "reservation", problem, fix).await
}

/// [`refused`], the failed check being about `subject` (`reservation`, `API file.googleapis.com`).
async fn refused_on(
    cx: &TestContext,
    blueprint: &str,
    subject: &str,
    problem: &str,
    fix: &str,
) -> Run {
    let before = common::mutations(cx);
    let plan = cx.run(&["plan", blueprint]).await.expect(1);
    assert!(plan.stdout.contains("\nPreflight:\n"), "{}", plan.stdout);
    assert!(
        plan.stdout.contains(&format!("\n  ✗ {subject}")),
        "{}",
        plan.stdout
    );
    assert!(
        plan.stdout
            .contains("\n  ✓ API compute.googleapis.com: need enabled, available enabled\n"),
        "{}",
        plan.stdout
    );
    assert!(
        plan.stderr.contains("Preflight failed: 1 of "),
        "{}",
        plan.stderr
    );
    assert!(
        plan.stderr.contains(" check(s); nothing was changed"),
        "{}",
        plan.stderr
    );
    assert!(plan.stderr.contains(problem), "{}", plan.stderr);
    assert!(plan.stderr.contains(fix), "{}", plan.stderr);
    let apply = cx
        .run(&["apply", blueprint, "--auto-approve"])
        .await
        .expect(1);
    assert!(apply.stderr.contains(problem), "{}", apply.stderr);
    assert!(
        !apply.stdout.contains("Creation complete"),
        "{}",
        apply.stdout
    );
    assert_eq!(common::mutations(cx), before, "no mutating request");
    apply
}

#[tokio::test]
async fn the_shipped_reservation_passes_and_is_shown() {
    let cx = TestContext::new().await;
    let plan = cx.run(&["plan", MEGA]).await.expect(0);
    assert!(
        plan.stdout.contains(
            "  ✓ reservation a3mega-reservation (us-central1-a): need 32 × a3-megagpu-8g with 8 × nvidia-h100-mega-80gb, available 32 free of 32\n"
        ),
        "{}",
        plan.stdout
    );
    let json = cx.run(&["plan", MEGA, "--json"]).await.expect(0);
    let json: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    let checks = json["preflight"]["checks"].as_array().unwrap();
    assert_eq!(
        checks.len(),
        16,
        "seven APIs (IAM and Resource Manager for `[identity]`), seven quotas, the reservation and the GKE version"
    );
    assert!(
        plan.stdout.contains(
            "  ✓ GKE version 1.32 (REGULAR channel, us-central1): need 1.32 offered by REGULAR, available 1.32.12-gke.1050000\n"
        ),
        "{}",
        plan.stdout
    );
    assert!(checks.iter().all(|c| c["ok"] == true));
    let reservation = checks
        .iter()
        .find(|c| c["subject"] == "reservation a3mega-reservation (us-central1-a)")
        .unwrap();
    assert_eq!(reservation["for_resources"][0], "node_pool.a3mega");
    let compute = checks
        .iter()
        .find(|c| c["subject"] == "API compute.googleapis.com")
        .unwrap();
    assert!(
        compute["for_resources"]
            .as_array()
            .unwrap()
            .contains(&serde_json::json!("network.primary"))
    );
}

#[tokio::test]
async fn a_missing_reservation_fails_plan_and_apply_before_any_change() {
    let cx = TestContext::new().await;
    let blueprint = mega_with(&cx, "nowhere");
    refused(
        &cx,
        &blueprint,
        "reservation nowhere (us-central1-a): no reservation `nowhere` in zone us-central1-a of project my-project (need 32 × a3-megagpu-8g with 8 × nvidia-h100-mega-80gb, available not found)",
        "gcloud compute reservations create nowhere --zone=us-central1-a --vm-count=32 --machine-type=a3-megagpu-8g --accelerator=count=8,type=nvidia-h100-mega-80gb --require-specific-reservation --project=my-project",
    )
    .await;
    // Skipping preflight plans as before.
    let skipped = cx
        .run(&["plan", &blueprint, "--skip-preflight"])
        .await
        .expect(0);
    assert!(!skipped.stdout.contains("Preflight"), "{}", skipped.stdout);
}

#[tokio::test]
async fn a_short_reservation_fails_with_the_resize_command() {
    let cx = TestContext::new().await;
    reserve(
        &cx,
        "small",
        "us-central1-a",
        2,
        "a3-megagpu-8g",
        "nvidia-h100-mega-80gb",
    )
    .await;
    refused(
        &cx,
        &mega_with(&cx, "small"),
        "reservation `small` has 2 free VMs (2 reserved, 0 in use); the plan adds 32 nodes from it",
        "gcloud compute reservations update small --zone=us-central1-a --vm-count=32",
    )
    .await;
}

#[tokio::test]
async fn a_reservation_in_another_zone_is_not_found_in_the_pools_zone() {
    let cx = TestContext::new().await;
    reserve(
        &cx,
        "elsewhere",
        "us-central1-c",
        4,
        "a3-megagpu-8g",
        "nvidia-h100-mega-80gb",
    )
    .await;
    // The check says where the reservation is.
    let run = refused(
        &cx,
        &mega_with(&cx, "elsewhere"),
        "reservation elsewhere (us-central1-a): reservation `elsewhere` of project my-project is in zone us-central1-c, not in the pool's zone us-central1-a (need 32 × a3-megagpu-8g with 8 × nvidia-h100-mega-80gb, available not found (it is in us-central1-c))",
        "set the pool's `zones` to [\"us-central1-c\"] in the blueprint",
    )
    .await;
    assert!(
        run.stderr.contains("or create one in us-central1-a"),
        "{}",
        run.stderr
    );
}

#[tokio::test]
async fn a_reservation_of_other_machines_fails_naming_both() {
    let cx = TestContext::new().await;
    reserve(
        &cx,
        "highs",
        "us-central1-a",
        4,
        "a3-highgpu-8g",
        "nvidia-h100-80gb",
    )
    .await;
    refused(
        &cx,
        &mega_with(&cx, "highs"),
        "reservation `highs` holds a3-highgpu-8g VMs, the pool needs a3-megagpu-8g",
        "name a reservation of a3-megagpu-8g VMs in the blueprint",
    )
    .await;
}

#[tokio::test]
async fn a_saved_plan_is_checked_again_when_applied() {
    let cx = TestContext::new().await;
    cx.run(&["plan", MEGA, "--out", "p.plan"]).await.expect(0);
    // The project's reservation goes away between plan and apply.
    let (ok, out, err) = Gcloud::in_project(&cx.sim, "my-project")
        .run(&[
            "compute",
            "reservations",
            "delete",
            "a3mega-reservation",
            "--zone=us-central1-a",
            "--quiet",
        ])
        .await;
    assert!(ok, "{out}\n{err}");
    let before = common::mutations(&cx);
    let apply = cx.run(&["apply", "p.plan"]).await.expect(1);
    assert!(
        apply
            .stderr
            .contains("no reservation `a3mega-reservation` in zone us-central1-a"),
        "{}",
        apply.stderr
    );
    assert_eq!(common::mutations(&cx), before, "no mutating request");
}

#[tokio::test]
async fn a_disabled_api_fails_preflight_with_the_enable_command() {
    let cx = TestContext::new().await;
    let (ok, out, err) = Gcloud::in_project(&cx.sim, "my-project")
        .run(&["services", "disable", "file.googleapis.com", "--force"])
        .await;
    assert!(ok, "gcloud services disable failed:\n{out}\n{err}");
    refused_on(
        &cx,
        MEGA,
        "API file.googleapis.com",
        "API file.googleapis.com: file.googleapis.com is disabled in project my-project: every call to it would fail (need enabled, available disabled)",
        "enable it: gcloud services enable file.googleapis.com --project=my-project",
    )
    .await;
    // Enabled again, the plan goes through.
    let (ok, out, err) = Gcloud::in_project(&cx.sim, "my-project")
        .run(&["services", "enable", "file.googleapis.com"])
        .await;
    assert!(ok, "gcloud services enable failed:\n{out}\n{err}");
    cx.run(&["plan", MEGA]).await.expect(0);
}

/// Quota headroom: the A3 Mega blueprint's nine VPCs against a NETWORKS limit of 5, and the A3
/// High blueprint's on-demand GPU nodes against a low regional CPUS limit.
#[tokio::test]
async fn quotas_too_small_for_the_plan_fail_naming_metric_need_and_room() {
    let cx = TestContext::with(a3ctl_sim::SimConfig {
        quotas: a3ctl_sim::quotas::QuotaConfig::default()
            .with("NETWORKS", 5.0)
            // The shipped reservation (32 × 208 vCPUs) and A3 Mega's system pool fit, A3 High's GPU nodes do not.
            .with_in("CPUS", "us-central1", 6672.0),
        ..Default::default()
    })
    .await;
    refused_on(
        &cx,
        MEGA,
        "quota NETWORKS",
        "quota NETWORKS: the plan adds 9 to NETWORKS, where 0 of 5 are in use (need 9, available 5 free of 5)",
        "ask for a NETWORKS limit of at least 9",
    )
    .await;
    let plan = cx.run(&["plan", "blueprints/a3-high.toml"]).await.expect(1);
    assert!(
        plan.stderr
            .contains("quota CPUS in region us-central1: the plan adds"),
        "{}",
        plan.stderr
    );
    // A3 Mega's GPU nodes consume the reservation: its CPUS check counts only the system pool
    // (2 × e2-standard-4).
    let mega = cx.run(&["plan", MEGA]).await.expect(1);
    assert!(
        mega.stdout
            .contains("  ✓ quota CPUS in region us-central1: need 8, available 16 free of 6672\n"),
        "{}",
        mega.stdout
    );
}

/// GPUs: an A3 High pool of spot VMs counts its 32 GPUs against the preemptible H100 quota (and
/// GPUS_ALL_REGIONS); with 16 preemptible H100s allowed, the plan is refused before any change.
#[tokio::test]
async fn spot_gpus_beyond_the_preemptible_quota_fail() {
    let cx = TestContext::with(a3ctl_sim::SimConfig {
        quotas: a3ctl_sim::quotas::QuotaConfig::default().with_in(
            "PREEMPTIBLE_NVIDIA_H100_GPUS",
            "us-central1",
            16.0,
        ),
        ..Default::default()
    })
    .await;
    let text = std::fs::read_to_string(cx.path("blueprints/a3-high.toml"))
        .unwrap()
        .replace(
            "capacity = \"on-demand\"\nplacement = \"compact\"",
            "capacity = \"spot\"\nplacement = \"none\"",
        );
    assert!(text.contains("capacity = \"spot\""));
    cx.write("blueprints/high-spot.toml", &text);
    refused_on(
        &cx,
        "blueprints/high-spot.toml",
        "quota PREEMPTIBLE_NVIDIA_H100_GPUS in region us-central1",
        "the plan adds 32 to PREEMPTIBLE_NVIDIA_H100_GPUS in region us-central1, where 0 of 16 are in use",
        "ask for a PREEMPTIBLE_NVIDIA_H100_GPUS limit of at least 32",
    )
    .await;
}

/// When preflight cannot read what it checks (Compute answers every read with 503, past the
/// retries), plan and apply stop with the read that failed, before any change.
#[tokio::test]
async fn a_check_that_cannot_be_read_stops_the_plan_naming_the_read() {
    use a3ctl_sim::faults::{FaultConfig, TransientFaults, TransientKind};
    let cx = TestContext::new().await;
    let mut faults = FaultConfig::default();
    faults.transient.insert(
        "compute".into(),
        TransientFaults {
            rate: 1.0,
            kinds: vec![TransientKind::Unavailable],
            methods: vec!["GET".into()],
        },
    );
    cx.sim.set_faults(faults);
    let before = common::mutations(&cx);
    for args in [&["plan", MEGA][..], &["apply", MEGA, "--auto-approve"][..]] {
        let run = cx.run(args).await.expect(1);
        assert!(
            run.stderr.contains("Preflight cannot read"),
            "{}",
            run.stderr
        );
        assert!(run.stderr.contains("503"), "{}", run.stderr);
    }
    assert_eq!(common::mutations(&cx), before, "no mutating request");
}

/// The shipped A3 High blueprint's on-demand H100 nodes against the Cloud Quotas GPU family
/// quota: refused while its 32 GPUs plus the 16 a reservation already holds pass the limit of 40,
/// with the `gcloud beta quotas preferences create` command; planned once the limit is raised.
#[tokio::test]
async fn on_demand_gpus_beyond_the_gpu_family_quota_fail() {
    let cx = TestContext::with(a3ctl_sim::SimConfig {
        quotas: a3ctl_sim::quotas::QuotaConfig::default().with_gpu_family(
            "NVIDIA_H100",
            Some("us-central1"),
            40.0,
        ),
        ..Default::default()
    })
    .await;
    // Two reserved H100 VMs count against the family quota as if they ran.
    reserve(
        &cx,
        "held",
        "us-central1-a",
        2,
        "a3-highgpu-8g",
        "nvidia-h100-80gb",
    )
    .await;
    cx.sim.advance_secs(60.0);
    refused_on(
        &cx,
        "blueprints/a3-high.toml",
        "quota GPUS_PER_GPU_FAMILY (NVIDIA_H100) in region us-central1",
        "quota GPUS_PER_GPU_FAMILY (NVIDIA_H100) in region us-central1: the plan adds 32 on-demand NVIDIA_H100 GPUs in us-central1, where 16 of 40 are in use (16 held by reservations, the rest by GKE node pools) (need 32, available 24 free of 40)",
        "gcloud beta quotas preferences create --service=compute.googleapis.com --quota-id=GPUS-PER-GPU-FAMILY-per-project-region --dimensions=region=us-central1,gpu_family=NVIDIA_H100 --preferred-value=48 --project=my-project",
    )
    .await;
}

/// With the Cloud Quotas API disabled, the GPU family quota cannot be read: the check is shown
/// as unknown with the command that enables the API, and the plan goes ahead.
#[tokio::test]
async fn an_unreadable_gpu_family_quota_is_shown_as_unknown() {
    let cx = TestContext::new().await;
    let (ok, out, err) = Gcloud::in_project(&cx.sim, "my-project")
        .run(&["services", "disable", "cloudquotas.googleapis.com"])
        .await;
    assert!(ok, "gcloud services disable failed:\n{out}\n{err}");
    let plan = cx.run(&["plan", "blueprints/a3-high.toml"]).await.expect(0);
    assert!(
        plan.stdout.contains(
            "  ? quota GPUS_PER_GPU_FAMILY (NVIDIA_H100) in region us-central1: need 32, available unknown\n"
        ),
        "{}",
        plan.stdout
    );
    assert!(
        plan.stdout.contains(
            "fix: gcloud services enable cloudquotas.googleapis.com --project=my-project"
        ),
        "{}",
        plan.stdout
    );
}

/// One refusal per remaining quota class, each on the A3 High blueprint in a project whose one
/// limit is too small (the shipped A3 Mega reservation already holds 6,656 vCPUs and 256 GPUs):
/// local SSD and placement policies per region, vCPUs and GPUs across regions.
#[tokio::test]
async fn each_quota_class_refuses_the_plan_naming_its_metric() {
    use a3ctl_sim::quotas::QuotaConfig;
    let cases = [
        (
            QuotaConfig::default().with_in("LOCAL_SSD_TOTAL_GB", "us-central1", 10000.0),
            "quota LOCAL_SSD_TOTAL_GB in region us-central1",
            "the plan adds 24000 to LOCAL_SSD_TOTAL_GB in region us-central1, where 0 of 10000 are in use",
            "ask for a LOCAL_SSD_TOTAL_GB limit of at least 24000",
        ),
        (
            QuotaConfig::default().with_in("RESOURCE_POLICIES", "us-central1", 0.0),
            "quota RESOURCE_POLICIES in region us-central1",
            "the plan adds 1 to RESOURCE_POLICIES in region us-central1, where 0 of 0 are in use",
            "ask for a RESOURCE_POLICIES limit of at least 1",
        ),
        (
            QuotaConfig::default().with("CPUS_ALL_REGIONS", 7000.0),
            "quota CPUS_ALL_REGIONS",
            "the plan adds 840 to CPUS_ALL_REGIONS, where 6656 of 7000 are in use",
            "ask for a CPUS_ALL_REGIONS limit of at least 7496",
        ),
        (
            QuotaConfig::default().with("GPUS_ALL_REGIONS", 280.0),
            "quota GPUS_ALL_REGIONS",
            "the plan adds 32 to GPUS_ALL_REGIONS, where 256 of 280 are in use",
            "ask for a GPUS_ALL_REGIONS limit of at least 288",
        ),
    ];
    for (quotas, subject, problem, fix) in cases {
        let cx = TestContext::with(a3ctl_sim::SimConfig {
            quotas,
            ..Default::default()
        })
        .await;
        refused_on(&cx, "blueprints/a3-high.toml", subject, problem, fix).await;
    }
}

/// A reservation open to any VM (created without `--require-specific-reservation`) cannot be
/// targeted by name, which is how a pool consumes one: refused with the flag that fixes it.
#[tokio::test]
async fn a_reservation_that_does_not_require_naming_cannot_be_targeted() {
    let cx = TestContext::new().await;
    let (ok, out, err) = Gcloud::in_project(&cx.sim, "my-project")
        .run(&[
            "compute",
            "reservations",
            "create",
            "open",
            "--zone=us-central1-a",
            "--vm-count=4",
            "--machine-type=a3-megagpu-8g",
            "--accelerator=count=8,type=nvidia-h100-mega-80gb",
        ])
        .await;
    assert!(ok, "gcloud reservations create failed:\n{out}\n{err}");
    refused(
        &cx,
        &mega_with(&cx, "open"),
        "reservation `open` does not require VMs to name it (specificReservationRequired is not set), so GKE refuses a pool that targets it",
        "use a reservation created with --require-specific-reservation",
    )
    .await;
}

/// The family quota's usage, as the simulator counts it itself.
fn sim_family_usage(cx: &TestContext, family: &str) -> f64 {
    cx.sim.shared.read_world(|world, _| {
        a3ctl_sim::quotas::usage(world, "my-project")
            .into_iter()
            .find(|(k, _)| {
                k.metric == a3ctl_sim::quotas::GPUS_PER_GPU_FAMILY
                    && k.region.as_deref() == Some("us-central1")
                    && k.family.as_deref() == Some(family)
            })
            .map_or(0.0, |(_, v)| v)
    })
}

/// The preflight line of the H100 Mega family quota.
fn mega_family_line(stdout: &str) -> String {
    stdout
        .lines()
        .find(|l| l.contains("quota GPUS_PER_GPU_FAMILY (NVIDIA_H100_MEGA) in region us-central1"))
        .unwrap_or_else(|| panic!("no family quota line:\n{stdout}"))
        .trim()
        .to_string()
}

/// Issue 24: with the example world (a limit of 320 H100 Mega GPUs, the 32-VM reservation) and
/// the shipped A3 Mega deployment applied, a 4-node on-demand A3 Mega pool beside it needs 32
/// GPUs of the 64 left. The reserved pool's GPUs are the reservation's (counted once, not again
/// from the pool — GKE's crate writes `SPECIFIC_RESERVATION` as `3`), and the on-demand pool's
/// current size comes from its instance groups, so the numbers follow a resize; at each step they
/// equal the simulator's own usage.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_on_demand_pool_beside_a_reserved_one_fits_the_family_quota() {
    let world = a3ctl_sim::WorldSpec::parse(
        &std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("sim/worlds/example.toml"),
        )
        .unwrap(),
        "sim/worlds/example.toml",
    )
    .expect("the example world loads");
    let cx = TestContext::with(a3ctl_sim::SimConfig {
        world,
        ..Default::default()
    })
    .await;
    cx.unprotect(MEGA);
    cx.run(&["apply", MEGA, "--auto-approve"]).await.expect(0);
    assert_eq!(sim_family_usage(&cx, "NVIDIA_H100_MEGA"), 256.0);

    let text = std::fs::read_to_string(cx.path(MEGA)).unwrap();
    cx.write(
        "blueprints/mega-more.toml",
        &format!(
            "{text}\n[[gpu_pool]]\nname = \"ondemand\"\nmachine_type = \"a3-megagpu-8g\"\nnodes = 4\ncapacity = \"on-demand\"\n"
        ),
    );
    let plan = cx
        .run(&["plan", "blueprints/mega-more.toml"])
        .await
        .expect(0);
    assert_eq!(
        mega_family_line(&plan.stdout),
        "✓ quota GPUS_PER_GPU_FAMILY (NVIDIA_H100_MEGA) in region us-central1: need 32, available 64 free of 320",
        "{}",
        plan.stdout
    );
    assert!(!plan.stderr.contains("Preflight failed"), "{}", plan.stderr);

    // Applied: 256 + 32 in use; one more 1-node pool sees 32 free.
    cx.run(&["apply", "blueprints/mega-more.toml", "--auto-approve"])
        .await
        .expect(0);
    assert_eq!(sim_family_usage(&cx, "NVIDIA_H100_MEGA"), 288.0);
    let more = std::fs::read_to_string(cx.path("blueprints/mega-more.toml")).unwrap();
    cx.write(
        "blueprints/mega-one-more.toml",
        &format!(
            "{more}\n[[gpu_pool]]\nname = \"one\"\nmachine_type = \"a3-megagpu-8g\"\nnodes = 1\ncapacity = \"on-demand\"\n"
        ),
    );
    let plan = cx
        .run(&["plan", "blueprints/mega-one-more.toml"])
        .await
        .expect(0);
    assert_eq!(
        mega_family_line(&plan.stdout),
        "✓ quota GPUS_PER_GPU_FAMILY (NVIDIA_H100_MEGA) in region us-central1: need 8, available 32 free of 320",
        "{}",
        plan.stdout
    );

    // Resized outside a3ctl to 1 node (initialNodeCount stays 4): 256 + 8 in use, 56 free.
    let (ok, out, err) = Gcloud::in_project(&cx.sim, "my-project")
        .run(&[
            "container",
            "clusters",
            "resize",
            "a3mega",
            "--location=us-central1",
            "--node-pool=ondemand",
            "--num-nodes=1",
            "--quiet",
        ])
        .await;
    assert!(ok, "gcloud resize failed:\n{out}\n{err}");
    assert_eq!(sim_family_usage(&cx, "NVIDIA_H100_MEGA"), 264.0);
    let plan = cx
        .run(&["plan", "blueprints/mega-one-more.toml"])
        .await
        .expect(0);
    let line = mega_family_line(&plan.stdout);
    assert!(
        line.ends_with("available 56 free of 320"),
        "{line}\n{}",
        plan.stdout
    );
}

/// The shipped A3 Mega blueprint with its GPU pool's `machine_type = "a3-megagpu-8g"` line
/// replaced by `line`.
fn mega_changed(cx: &TestContext, line: &str) -> String {
    let text = std::fs::read_to_string(cx.path(MEGA))
        .unwrap()
        .replace("machine_type = \"a3-megagpu-8g\"", line);
    cx.write("blueprints/mega-changed.toml", &text);
    "blueprints/mega-changed.toml".into()
}

/// Day two: the reserved pool's machine type changes. Its replacement would delete the 32
/// A3 Mega nodes first and then ask the reservation for A3 High VMs it does not hold: refused in
/// `plan` and `apply`, naming the reservation's machine type and the choices, before any change.
#[tokio::test]
async fn a_machine_type_change_of_the_reserved_pool_is_refused_before_its_delete() {
    let cx = TestContext::new().await;
    cx.run(&["apply", MEGA, "--auto-approve"]).await.expect(0);
    let blueprint = mega_changed(&cx, "machine_type = \"a3-highgpu-8g\"");
    let before = common::mutations(&cx);

    let plan = cx.run(&["plan", &blueprint]).await.expect(1);
    assert!(
        plan.stdout
            .contains("  # node_pool.a3mega must be replaced\n"),
        "{}",
        plan.stdout
    );
    assert!(
        plan.stdout.contains(
            "  ✗ reservation a3mega-reservation (us-central1-a): need 32 × a3-highgpu-8g with 8 × nvidia-h100-80gb, available 32 × a3-megagpu-8g\n"
        ),
        "{}",
        plan.stdout
    );
    let problem = "reservation a3mega-reservation holds a3-megagpu-8g VMs; the new pool asks for a3-highgpu-8g. node_pool.a3mega is replaced: whether the new pool stands beside the old one or follows its delete, it cannot use this reservation's VMs";
    let choices = "give the pool a reservation of a3-highgpu-8g VMs: name it with `reservation = \"NAME\"` in [[gpu_pool]] `a3mega`";
    let keep = "or keep `machine_type = \"a3-megagpu-8g\"`";
    for text in [problem, choices, keep] {
        assert!(plan.stderr.contains(text), "{text}\n{}", plan.stderr);
    }
    // What the replacement would take down, in which order, and that its capacity is refused.
    for line in [
        "GPU pools replaced:\n",
        "  node_pool.a3mega: 256 GPUs at risk (32 nodes × 8 × nvidia-h100-mega-80gb) from the old pool's delete until the new pool's nodes are up\n",
        "    order: refused: preflight refused the new pool (see Preflight above); the new pool is a3-highgpu-8g (was a3-megagpu-8g)\n",
        "    capacity for the new pool: not confirmed: preflight refused the new pool (see Preflight above), so nothing is deleted\n",
    ] {
        assert!(plan.stdout.contains(line), "{line}\n{}", plan.stdout);
    }
    let json = cx.run(&["plan", &blueprint, "--json"]).await.expect(1);
    let json: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    let replaced = &json["gpu_replacements"][0];
    assert_eq!(replaced["addr"], "node_pool.a3mega", "{json:#}");
    assert_eq!(replaced["gpus_down"], 256);
    // No room beside the old pool either (the reservation is full with it).
    assert_eq!(replaced["order"], "refused");
    assert_eq!(replaced["capacity"], "refused");

    let apply = cx
        .run(&["apply", &blueprint, "--auto-approve"])
        .await
        .expect(1);
    assert!(apply.stderr.contains(problem), "{}", apply.stderr);
    assert!(!apply.stdout.contains("Destroying"), "{}", apply.stdout);
    assert_eq!(common::mutations(&cx), before, "no mutating request");
    // The pool and its 32 nodes are still there.
    let same = cx.run(&["plan", MEGA]).await.expect(0);
    assert!(same.stdout.contains("No changes."), "{}", same.stdout);
    let inventory = cx.sim.inventory().to_string();
    assert!(inventory.contains("a3mega"), "{inventory}");
}

/// A replacement that keeps machine type and reservation (`--replace`, as a change of a ForceNew
/// field such as the nodes' service account would), the reservation full with the old pool's
/// nodes: no room beside it, so the plan is refused (issue 25) until the user opts in to deleting
/// first; then the new pool fits only because the delete frees the VMs, and the plan says so with
/// the GPUs at risk.
#[tokio::test]
async fn a_same_type_replacement_says_its_gpus_come_back_only_from_the_delete() {
    let cx = TestContext::new().await;
    cx.run(&["apply", MEGA, "--auto-approve"]).await.expect(0);
    let refused = cx
        .run(&["plan", MEGA, "--replace", "node_pool.a3mega"])
        .await
        .expect(1);
    assert!(
        refused.stdout.contains("    capacity for the new pool: not confirmed: reservation a3mega-reservation (us-central1-a) has 0 free VM(s) now and the new pool needs 32 beside the old one, so nothing is deleted\n"),
        "{}",
        refused.stdout
    );
    let args = [
        "--replace",
        "node_pool.a3mega",
        "--delete-first",
        "node_pool.a3mega",
    ];
    let plan = cx
        .run(&[&["plan", MEGA][..], &args].concat())
        .await
        .expect(0);
    for line in [
        "  # node_pool.a3mega must be replaced\n",
        "  ✓ reservation a3mega-reservation (us-central1-a): need 32 × a3-megagpu-8g with 8 × nvidia-h100-mega-80gb, available 32 free of 32 once the replaced pool's 32 VM(s) are deleted\n",
        "  node_pool.a3mega: 256 GPUs at risk (32 nodes × 8 × nvidia-h100-mega-80gb) from the old pool's delete until the new pool's nodes are up\n",
        "    order: delete first, then create (a pool's name is held by one pool at a time)\n",
        "    capacity for the new pool: confirmed by preflight, but only because the old pool frees it: reservation a3mega-reservation (us-central1-a) has 0 free VM(s) now and the new pool needs 32; the VMs come back only from the delete, and the GPUs stay down if anything else takes them first\n",
    ] {
        assert!(plan.stdout.contains(line), "{line}\n{}", plan.stdout);
    }
    let json = cx
        .run(&[&["plan", MEGA, "--json"][..], &args].concat())
        .await
        .expect(0);
    let json: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    let replaced = &json["gpu_replacements"][0];
    assert_eq!(replaced["capacity"], "confirmed", "{json:#}");
    assert_eq!(replaced["order"], "delete_first");
    assert_eq!(replaced["gpus_at_risk"], 256);
    assert_eq!(replaced["only_after_delete"], true);
    assert_eq!(replaced["reservation"][0]["free_now"], 0);
    assert_eq!(replaced["reservation"][0]["freed_first"], 32);
    // Applying it works: the delete gives the reservation back, the create takes it again.
    cx.run(&[&["apply", MEGA, "--auto-approve"][..], &args].concat())
        .await
        .expect(0);
    let again = cx.run(&["plan", MEGA]).await.expect(0);
    assert!(again.stdout.contains("No changes."), "{}", again.stdout);
}

/// The first choice the refusal gives: a reservation of the new machine type. The replacement
/// then passes, its new pool created beside the old one (create before destroy), and applies. (8 nodes: two reservations
/// of 32 A3 VMs would pass the region's CPUS quota.)
#[tokio::test]
async fn a_machine_type_change_with_a_reservation_of_the_new_type_passes() {
    let cx = TestContext::new().await;
    let mega = std::fs::read_to_string(cx.path(MEGA))
        .unwrap()
        .replace("nodes = 32", "nodes = 8");
    cx.write("blueprints/mega-8.toml", &mega);
    cx.run(&["apply", "blueprints/mega-8.toml", "--auto-approve"])
        .await
        .expect(0);
    reserve(
        &cx,
        "a3high-reservation",
        "us-central1-a",
        8,
        "a3-highgpu-8g",
        "nvidia-h100-80gb",
    )
    .await;
    let text = mega
        .replace(
            "machine_type = \"a3-megagpu-8g\"",
            "machine_type = \"a3-highgpu-8g\"",
        )
        .replace(
            "reservation = \"a3mega-reservation\"",
            "reservation = \"a3high-reservation\"",
        );
    cx.write("blueprints/mega-8.toml", &text);
    let blueprint = "blueprints/mega-8.toml";
    let plan = cx.run(&["plan", blueprint]).await.expect(0);
    for line in [
        "  ✓ reservation a3high-reservation (us-central1-a): need 8 × a3-highgpu-8g with 8 × nvidia-h100-80gb, available 8 free of 8\n",
        "  node_pool.a3mega: 0 GPUs at risk (8 nodes × 8 × nvidia-h100-mega-80gb keep running until the new pool's are Ready)\n",
        "    strategy: create before destroy: create the new pool `a3mega-2`, wait for its create DONE and its nodes Ready, then delete the old pool; the new pool is a3-highgpu-8g (was a3-megagpu-8g)\n",
        "    capacity for the new pool: confirmed by preflight (reservation a3high-reservation (us-central1-a) has 8 free VM(s) now, the new pool needs 8)\n",
    ] {
        assert!(plan.stdout.contains(line), "{line}\n{}", plan.stdout);
    }
    cx.run(&["apply", blueprint, "--auto-approve"])
        .await
        .expect(0);
    let again = cx.run(&["plan", blueprint]).await.expect(0);
    assert!(again.stdout.contains("No changes."), "{}", again.stdout);
}

/// A replaced pool's upgrade headroom counts what its own delete frees: 8 nodes replaced on a
/// reservation of 10 leave the 2 surge VMs free, as before the replacement.
#[tokio::test]
async fn a_replacement_keeps_the_upgrade_headroom_its_delete_frees() {
    let cx = TestContext::new().await;
    reserve(
        &cx,
        "roomy",
        "us-central1-a",
        10,
        "a3-megagpu-8g",
        "nvidia-h100-mega-80gb",
    )
    .await;
    let text = std::fs::read_to_string(cx.path(MEGA))
        .unwrap()
        .replace("nodes = 32", "nodes = 8")
        .replace(
            "reservation = \"a3mega-reservation\"",
            "reservation = \"roomy\"",
        )
        .replace(
            "placement = \"compact\"\n",
            "placement = \"compact\"\n\n[gpu_pool.upgrade]\nmax_surge = 2\nmax_unavailable = 0\n",
        );
    cx.write("blueprints/roomy.toml", &text);
    let blueprint = "blueprints/roomy.toml";
    cx.run(&["apply", blueprint, "--auto-approve"])
        .await
        .expect(0);
    let plan = cx
        .run(&["plan", blueprint, "--replace", "node_pool.a3mega"])
        .await
        .expect(0);
    for line in [
        "  ✓ upgrade headroom of node_pool.a3mega on reservation roomy (us-central1-a): need 2 extra VM(s) during a surge upgrade (max_surge), available 2 free after this plan\n",
        "  ✓ reservation roomy (us-central1-a): need 8 × a3-megagpu-8g with 8 × nvidia-h100-mega-80gb, available 10 free of 10 once the replaced pool's 8 VM(s) are deleted\n",
        // The 2 free VMs move the pool in batches of 2 rather than deleting it first.
        "    strategy: in batches of 2 node(s): create the new pool `a3mega-2` with 2, then shrink the old pool by 2 and grow the new one by 2 until it has them all, then delete the old pool\n",
    ] {
        assert!(plan.stdout.contains(line), "{line}\n{}", plan.stdout);
    }
}
