//! `[identity]`: the nodes run as their own service account with its project role, the nodes
//! read the blueprint's repositories and the workloads' Kubernetes service account reads and
//! writes the mounted bucket — each grant one member of one role, added and removed by
//! read-modify-write with the policy's etag, never touching anything else in the policy.

use crate::common;

use a3ctl_sim::faults::{FaultConfig, TripWhen, Tripwire};
use common::TestContext;
use common::gcloud::Gcloud;
use serde_json::Value;

const MEGA: &str = "blueprints/a3-mega.toml";
const P: &str = "my-project";
const SA: &str = "a3mega-nodes@my-project.iam.gserviceaccount.com";
const BUCKET: &str = "my-project-a3mega-ckpt";

async fn gcloud_json(cx: &TestContext, args: &[&str]) -> Value {
    let (ok, out, err) = Gcloud::in_project(&cx.sim, P)
        .run(&[args, &["--format=json"]].concat())
        .await;
    assert!(ok, "gcloud {args:?} failed:\n{out}\n{err}");
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"))
}

async fn gcloud_ok(cx: &TestContext, args: &[&str]) {
    let (ok, out, err) = Gcloud::in_project(&cx.sim, P).run(args).await;
    assert!(ok, "gcloud {args:?} failed:\n{out}\n{err}");
}

/// The members of `role`'s unconditional binding.
fn members(policy: &Value, role: &str) -> Vec<String> {
    policy["bindings"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|b| b["role"] == role && b.get("condition").is_none())
        .flat_map(|b| b["members"].as_array().cloned().unwrap_or_default())
        .filter_map(|m| m.as_str().map(str::to_string))
        .collect()
}

/// A policy without its etag (which every write moves).
fn without_etag(mut policy: Value) -> Value {
    if let Some(o) = policy.as_object_mut() {
        o.remove("etag");
    }
    policy
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn apply_grants_each_identity_its_access_and_destroy_takes_back_only_that() {
    let cx = TestContext::new().await;
    cx.unprotect("blueprints/a3-mega.toml");
    // Someone else's bindings, one with a condition, before a3ctl comes.
    gcloud_ok(
        &cx,
        &[
            "projects",
            "add-iam-policy-binding",
            P,
            "--member=user:alice@example.com",
            "--role=roles/viewer",
            "--condition=None",
        ],
    )
    .await;
    gcloud_ok(
        &cx,
        &[
            "projects",
            "add-iam-policy-binding",
            P,
            "--member=user:bob@example.com",
            "--role=roles/container.defaultNodeServiceAccount",
            "--condition=expression=request.time < timestamp('2030-01-01T00:00:00Z'),title=until-2030",
        ],
    )
    .await;
    let before = gcloud_json(&cx, &["projects", "get-iam-policy", P]).await;

    cx.run(&["apply", MEGA, "--auto-approve"]).await.expect(0);
    let number = gcloud_json(&cx, &["projects", "describe", P]).await["projectNumber"]
        .as_str()
        .unwrap()
        .to_string();
    let account = gcloud_json(&cx, &["iam", "service-accounts", "describe", SA]).await;
    assert_eq!(account["displayName"], "a3mega GKE nodes");
    let project = gcloud_json(&cx, &["projects", "get-iam-policy", P]).await;
    assert!(
        members(&project, "roles/container.defaultNodeServiceAccount")
            .contains(&format!("serviceAccount:{SA}")),
        "{project}"
    );
    assert_eq!(
        members(&project, "roles/viewer"),
        ["user:alice@example.com"]
    );
    let bucket = gcloud_json(
        &cx,
        &[
            "storage",
            "buckets",
            "get-iam-policy",
            &format!("gs://{BUCKET}"),
        ],
    )
    .await;
    assert!(
        members(&bucket, "roles/storage.objectUser").contains(&format!(
            "principal://iam.googleapis.com/projects/{number}/locations/global/workloadIdentityPools/{P}.svc.id.goog/subject/ns/default/sa/default"
        )),
        "the project number is filled in: {bucket}"
    );
    let repository = gcloud_json(
        &cx,
        &[
            "artifacts",
            "repositories",
            "get-iam-policy",
            "training",
            "--location=us-central1",
        ],
    )
    .await;
    // The nodes pull images; the workload reads artifacts through the API.
    let mut readers = members(&repository, "roles/artifactregistry.reader");
    readers.sort();
    assert_eq!(
        readers,
        [
            format!(
                "principal://iam.googleapis.com/projects/{number}/locations/global/workloadIdentityPools/{P}.svc.id.goog/subject/ns/default/sa/default"
            ),
            format!("serviceAccount:{SA}")
        ]
    );
    let pool = gcloud_json(
        &cx,
        &[
            "container",
            "node-pools",
            "describe",
            "a3mega",
            "--cluster=a3mega",
            "--location=us-central1",
        ],
    )
    .await;
    assert_eq!(pool["config"]["serviceAccount"], SA);
    // Nothing to do the second time.
    let again = cx.run(&["plan", MEGA]).await.expect(0);
    assert!(again.stdout.contains("No changes"), "{}", again.stdout);

    // A member removed behind a3ctl's back is drift, planned back.
    gcloud_ok(
        &cx,
        &[
            "artifacts",
            "repositories",
            "remove-iam-policy-binding",
            "training",
            "--location=us-central1",
            &format!("--member=serviceAccount:{SA}"),
            "--role=roles/artifactregistry.reader",
        ],
    )
    .await;
    let drift = cx.run(&["plan", MEGA]).await.expect(0);
    assert!(
        drift
            .stdout
            .contains("# iam_member.training-nodes-reader has been deleted"),
        "{}",
        drift.stdout
    );
    assert!(
        drift
            .stdout
            .contains("# iam_member.training-nodes-reader will be created"),
        "{}",
        drift.stdout
    );

    cx.run(&["destroy", MEGA, "--auto-approve"]).await.expect(0);
    let after = gcloud_json(&cx, &["projects", "get-iam-policy", P]).await;
    assert_eq!(
        without_etag(after),
        without_etag(before),
        "everything but a3ctl's members is as it was"
    );
    let (gone, _, _) = Gcloud::in_project(&cx.sim, P)
        .run(&["iam", "service-accounts", "describe", SA])
        .await;
    assert!(!gone, "the account is deleted");
}

/// gcloud writes the project's policy between a3ctl's read and its write: a3ctl's write is
/// refused for its stale etag (409 ABORTED), it reads again, and neither member is lost.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_between_read_and_write_loses_no_member() {
    let cx = TestContext::new().await;
    cx.sim.set_faults(FaultConfig {
        tripwires: vec![Tripwire {
            api: "cloudresourcemanager".into(),
            method: Some("POST".into()),
            path: Some("/cloudresourcemanager/v3/projects/{}:setIamPolicy".into()),
            nth: 1,
            when: TripWhen::Pause,
        }],
        ..FaultConfig::default()
    });
    let interleave = async {
        tokio::time::timeout(std::time::Duration::from_secs(60), cx.sim.wait_tripped())
            .await
            .expect("a3ctl writes the project policy");
        gcloud_ok(
            &cx,
            &[
                "projects",
                "add-iam-policy-binding",
                P,
                "--member=user:carol@example.com",
                "--role=roles/viewer",
                "--condition=None",
            ],
        )
        .await;
        cx.sim.release_held();
    };
    let (apply, ()) = tokio::join!(cx.run(&["apply", MEGA, "--auto-approve"]), interleave);
    apply.expect(0);
    let policy = gcloud_json(&cx, &["projects", "get-iam-policy", P]).await;
    assert!(
        members(&policy, "roles/viewer").contains(&"user:carol@example.com".to_string()),
        "{policy}"
    );
    assert!(
        members(&policy, "roles/container.defaultNodeServiceAccount")
            .contains(&format!("serviceAccount:{SA}")),
        "{policy}"
    );
    let log: Value = reqwest::get(format!("{}/_sim/requests", cx.sim.base_url()))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let refused = log["entries"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| {
            e["path"]
                .as_str()
                .is_some_and(|p| p.ends_with(":setIamPolicy") && p.contains("/v3/"))
                && e["status"] == 409
        })
        .count();
    assert_eq!(refused, 1, "the stale write was refused once: {log}");
}
