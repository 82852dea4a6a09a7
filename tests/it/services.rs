//! `enable_services = true`: the APIs a deployment calls are planned resources, enabled before
//! anything that calls them (preflight counts them as satisfied), and never disabled — a destroy
//! forgets them and leaves them on.

use crate::common;

use common::TestContext;
use common::gcloud::Gcloud;

const MEGA: &str = "blueprints/a3-mega.toml";

/// The shipped A3 Mega blueprint with `enable_services = true`.
fn mega_enabling(cx: &TestContext) -> String {
    let text = std::fs::read_to_string(cx.path(MEGA)).unwrap().replace(
        "zone = \"us-central1-a\"\n",
        "zone = \"us-central1-a\"\nenable_services = true\n",
    );
    assert!(text.contains("enable_services = true"));
    cx.write("blueprints/mega-services.toml", &text);
    "blueprints/mega-services.toml".into()
}

async fn gcloud_ok(cx: &TestContext, args: &[&str]) -> String {
    let (ok, out, err) = Gcloud::in_project(&cx.sim, "my-project").run(args).await;
    assert!(ok, "gcloud {args:?} failed:\n{out}\n{err}");
    out
}

async fn state_of(cx: &TestContext, service: &str) -> String {
    let out = gcloud_ok(
        cx,
        &[
            "services",
            "list",
            "--enabled",
            "--format=value(config.name)",
        ],
    )
    .await;
    if out.lines().any(|l| l.trim() == service) {
        "ENABLED".into()
    } else {
        "DISABLED".into()
    }
}

/// The request log, in order: `(method, path)`.
async fn requests(cx: &TestContext) -> Vec<(String, String)> {
    crate::common::request_log(cx)
        .await
        .iter()
        .map(|e| {
            (
                e["method"].as_str().unwrap_or("").to_string(),
                e["path"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect()
}

#[tokio::test]
async fn disabled_apis_are_enabled_first_and_left_on_by_destroy() {
    let cx = TestContext::new().await;
    gcloud_ok(
        &cx,
        &[
            "services",
            "disable",
            "file.googleapis.com",
            "artifactregistry.googleapis.com",
        ],
    )
    .await;
    let blueprint = mega_enabling(&cx);
    cx.unprotect(&blueprint);

    let plan = cx.run(&["plan", &blueprint]).await.expect(0);
    for service in [
        "file",
        "artifactregistry",
        "compute",
        "container",
        "storage_api",
        "cloudquotas",
    ] {
        assert!(
            plan.stdout
                .contains(&format!("  # service.{service} will be created\n")),
            "{service}: {}",
            plan.stdout
        );
    }
    assert!(
        plan.stdout.contains(
            "  ✓ API file.googleapis.com: need enabled, available disabled now, enabled by this plan first\n"
        ),
        "{}",
        plan.stdout
    );

    cx.run(&["apply", &blueprint, "--auto-approve"])
        .await
        .expect(0);
    assert_eq!(state_of(&cx, "file.googleapis.com").await, "ENABLED");
    // Enabled before anything called it: the enable comes before the first Filestore request.
    let log = requests(&cx).await;
    let enable = log
        .iter()
        .position(|(m, p)| m == "POST" && p.ends_with("/services/file.googleapis.com:enable"))
        .expect("file.googleapis.com enabled");
    let first_file = log
        .iter()
        .position(|(_, p)| p.starts_with("/file/"))
        .expect("a Filestore request");
    assert!(enable < first_file, "{log:?}");

    // A second plan has nothing to do.
    let again = cx.run(&["plan", &blueprint]).await.expect(0);
    assert!(again.stdout.contains("No changes"), "{}", again.stdout);

    // Destroy forgets the services and leaves them on.
    let before = requests(&cx).await.len();
    let destroy = cx
        .run(&["destroy", &blueprint, "--auto-approve"])
        .await
        .expect(0);
    assert!(
        destroy.stdout.contains(
            "  # service.file will be forgotten, not destroyed: it stays in the cloud (a3ctl never disables an API)\n"
        ) && destroy
            .stdout
            .contains("  . service.file (projects/my-project/services/file.googleapis.com)\n"),
        "{}",
        destroy.stdout
    );
    assert!(
        destroy.stdout.contains("(8 to forget, left in the cloud)."),
        "{}",
        destroy.stdout
    );
    assert!(
        destroy
            .stderr
            .contains(" 8 left in the cloud and forgotten."),
        "{}",
        destroy.stderr
    );
    assert!(
        !requests(&cx).await[before..]
            .iter()
            .any(|(_, p)| p.ends_with(":disable")),
        "no API disabled"
    );
    for service in ["file.googleapis.com", "compute.googleapis.com"] {
        assert_eq!(state_of(&cx, service).await, "ENABLED", "{service}");
    }
    let list = cx.run(&["state", "list", &blueprint]).await;
    assert!(!list.stdout.contains("service."), "{}", list.stdout);
}

/// With Compute itself off, preflight cannot read quotas or reservations before the plan enables
/// it: that check is unknown, the plan goes ahead, and the apply builds everything.
#[tokio::test]
async fn with_compute_off_the_quota_checks_wait_for_the_plan_to_enable_it() {
    let cx = TestContext::new().await;
    gcloud_ok(
        &cx,
        &["services", "disable", "compute.googleapis.com", "--force"],
    )
    .await;
    assert_eq!(state_of(&cx, "container.googleapis.com").await, "DISABLED");
    let blueprint = mega_enabling(&cx);
    let plan = cx.run(&["plan", &blueprint]).await.expect(0);
    assert!(
        plan.stdout
            .contains("  ? Compute quotas and reservations: need readable, available unknown\n"),
        "{}",
        plan.stdout
    );
    assert!(
        plan.stdout.contains(
            "compute.googleapis.com is disabled until this plan enables it, so Compute quotas and reservations cannot be read yet"
        ),
        "{}",
        plan.stdout
    );
    cx.run(&["apply", &blueprint, "--auto-approve"])
        .await
        .expect(0);
    assert_eq!(state_of(&cx, "container.googleapis.com").await, "ENABLED");
    // Now readable, the next plan checks the quotas and the reservation.
    let again = cx.run(&["plan", &blueprint]).await.expect(0);
    assert!(again.stdout.contains("No changes"), "{}", again.stdout);
}

/// Without `enable_services`, a disabled API's fix names the blueprint setting too.
#[tokio::test]
async fn the_disabled_api_fix_offers_enable_services() {
    let cx = TestContext::new().await;
    gcloud_ok(&cx, &["services", "disable", "file.googleapis.com"]).await;
    let plan = cx.run(&["plan", MEGA]).await.expect(1);
    assert!(
        plan.stderr.contains(
            "enable it: gcloud services enable file.googleapis.com --project=my-project (or set `enable_services = true` in the blueprint)"
        ),
        "{}",
        plan.stderr
    );
}
