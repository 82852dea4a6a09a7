//! Project IAM policies (Resource Manager v1 and v3, one store) driven by gcloud (`gcloud projects
//! get-iam-policy / add-iam-policy-binding / remove-iam-policy-binding`, which call v1) and by
//! reqwest for v3 and the cases gcloud cannot send: stale etags, versions and conditions,
//! `updateMask`, members, and Service Usage.

use crate::gcloud_support;

use a3ctl_sim::serviceusage::number_of;
use gcloud_support::{Gcloud, PROJECT, assert_error, send, start};
use serde_json::{Value, json};

/// The members of `role` (unconditional binding) in a policy.
fn members(policy: &Value, role: &str) -> Vec<String> {
    policy["bindings"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|b| b["role"] == role && b.get("condition").is_none())
        .flat_map(|b| b["members"].as_array().cloned().unwrap_or_default())
        .map(|m| m.as_str().unwrap_or("").to_string())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gcloud_edits_the_project_policy() {
    let sim = start().await;
    let gcloud = Gcloud::new(&sim);
    let compute = format!(
        "serviceAccount:{}-compute@developer.gserviceaccount.com",
        number_of(PROJECT)
    );
    let fresh = gcloud.json(&["projects", "get-iam-policy", PROJECT]).await;
    assert_eq!(fresh["version"], 1);
    assert_eq!(
        members(&fresh, "roles/owner"),
        vec!["user:sim-owner@example.com"]
    );
    assert_eq!(members(&fresh, "roles/editor"), vec![compute.clone()]);
    let etag0 = fresh["etag"].as_str().expect("etag").to_string();

    gcloud
        .ok(&["iam", "service-accounts", "create", "a3-runner"])
        .await;
    let runner = format!("serviceAccount:a3-runner@{PROJECT}.iam.gserviceaccount.com");
    let updated = gcloud
        .json(&[
            "projects",
            "add-iam-policy-binding",
            PROJECT,
            &format!("--member={runner}"),
            "--role=roles/artifactregistry.reader",
        ])
        .await;
    assert_eq!(
        members(&updated, "roles/artifactregistry.reader"),
        vec![runner.clone()]
    );
    assert_ne!(
        updated["etag"],
        etag0.as_str(),
        "every write changes the etag"
    );
    let read = gcloud.json(&["projects", "get-iam-policy", PROJECT]).await;
    assert_eq!(read, updated);

    // A member that does not exist, an uninvited owner, allUsers.
    let err = gcloud
        .fails(&[
            "projects",
            "add-iam-policy-binding",
            PROJECT,
            &format!("--member=serviceAccount:ghost-acct@{PROJECT}.iam.gserviceaccount.com"),
            "--role=roles/viewer",
        ])
        .await;
    assert!(
        err.contains(&format!(
            "INVALID_ARGUMENT: Service account ghost-acct@{PROJECT}.iam.gserviceaccount.com does not exist."
        )),
        "{err}"
    );
    let err = gcloud
        .fails(&[
            "projects",
            "add-iam-policy-binding",
            PROJECT,
            "--member=user:bob@example.com",
            "--role=roles/owner",
        ])
        .await;
    assert!(
        err.contains("INVALID_ARGUMENT: Request contains an invalid argument."),
        "{err}"
    );
    assert!(err.contains("type: SOLO_MUST_INVITE_OWNERS"), "{err}");
    let err = gcloud
        .fails(&[
            "projects",
            "add-iam-policy-binding",
            PROJECT,
            "--member=allUsers",
            "--role=roles/viewer",
        ])
        .await;
    assert!(
        err.contains("INVALID_ARGUMENT: Request contains an invalid argument."),
        "{err}"
    );

    // A conditional binding makes the policy version 3 (gcloud always asks for 3).
    let conditional = gcloud
        .json(&[
            "projects",
            "add-iam-policy-binding",
            PROJECT,
            "--member=user:alice@example.com",
            "--role=roles/storage.admin",
            "--condition=expression=request.time < timestamp(\"2030-01-01T00:00:00Z\"),title=until-2030",
        ])
        .await;
    assert_eq!(conditional["version"], 3);
    let binding = conditional["bindings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["role"] == "roles/storage.admin")
        .expect("the conditional binding")
        .clone();
    assert_eq!(binding["condition"]["title"], "until-2030");
    assert_eq!(
        binding["condition"]["expression"],
        "request.time < timestamp(\"2030-01-01T00:00:00Z\")"
    );

    gcloud
        .ok(&[
            "projects",
            "remove-iam-policy-binding",
            PROJECT,
            &format!("--member={runner}"),
            "--role=roles/artifactregistry.reader",
            "--condition=None",
        ])
        .await;
    let read = gcloud.json(&["projects", "get-iam-policy", PROJECT]).await;
    assert!(
        members(&read, "roles/artifactregistry.reader").is_empty(),
        "{read}"
    );

    // The last user owner stays.
    let err = gcloud
        .fails(&[
            "projects",
            "remove-iam-policy-binding",
            PROJECT,
            "--member=user:sim-owner@example.com",
            "--role=roles/owner",
            "--condition=None",
        ])
        .await;
    assert!(
        err.contains("INVALID_ARGUMENT: Request contains an invalid argument."),
        "{err}"
    );

    // A deleted account's bindings name it as deleted, with its unique id.
    gcloud
        .ok(&[
            "projects",
            "add-iam-policy-binding",
            PROJECT,
            &format!("--member={runner}"),
            "--role=roles/viewer",
            "--condition=None",
        ])
        .await;
    let account = gcloud
        .json(&[
            "iam",
            "service-accounts",
            "describe",
            &format!("a3-runner@{PROJECT}.iam.gserviceaccount.com"),
        ])
        .await;
    gcloud
        .ok(&[
            "iam",
            "service-accounts",
            "delete",
            &format!("a3-runner@{PROJECT}.iam.gserviceaccount.com"),
            "--quiet",
        ])
        .await;
    let read = gcloud.json(&["projects", "get-iam-policy", PROJECT]).await;
    assert_eq!(
        members(&read, "roles/viewer"),
        vec![format!(
            "deleted:serviceAccount:a3-runner@{PROJECT}.iam.gserviceaccount.com?uid={}",
            account["uniqueId"].as_str().unwrap()
        )]
    );
}

struct Crm {
    base: String,
    client: reqwest::Client,
}

impl Crm {
    async fn call(&self, version: &str, project: &str, method: &str, body: Value) -> (u16, Value) {
        send(
            self.client
                .post(format!(
                    "{}/cloudresourcemanager/{version}/projects/{project}:{method}",
                    self.base
                ))
                .json(&body),
        )
        .await
    }

    async fn get(&self, version: &str, project: &str, requested: i64) -> Value {
        let (status, body) = self
            .call(
                version,
                project,
                "getIamPolicy",
                json!({"options": {"requestedPolicyVersion": requested}}),
            )
            .await;
        assert_eq!(status, 200, "{body}");
        body
    }

    async fn set(&self, version: &str, project: &str, body: Value) -> (u16, Value) {
        self.call(version, project, "setIamPolicy", body).await
    }
}

#[tokio::test]
async fn one_policy_at_v1_and_v3() {
    let sim = start().await;
    let crm = Crm {
        base: sim.base_url().to_string(),
        client: reqwest::Client::new(),
    };
    let number = number_of(PROJECT);
    let v1 = crm.get("v1", PROJECT, 3).await;
    assert_eq!(
        crm.get("v3", &number, 3).await,
        v1,
        "v3 by number reads the same policy"
    );
    let owner = json!({"role": "roles/owner", "members": ["user:sim-owner@example.com"]});

    // Set through v3 by number, read through v1 by id.
    let (status, set) = crm
        .set(
            "v3",
            &number,
            json!({"policy": {"bindings": [owner, {"role": "roles/viewer", "members": ["group:ml@example.com", "domain:example.com"]}], "etag": v1["etag"]}}),
        )
        .await;
    assert_eq!(status, 200, "{set}");
    assert_eq!(set["version"], 1);
    assert_eq!(
        set["bindings"][1],
        json!({"role": "roles/viewer", "members": ["domain:example.com", "group:ml@example.com"]})
    );
    assert_eq!(crm.get("v1", PROJECT, 1).await, set);

    // The old etag is stale now: 409 ABORTED with Google's text; without an etag, an overwrite.
    let stale = crm
        .set(
            "v1",
            PROJECT,
            json!({"policy": {"bindings": [owner], "etag": v1["etag"]}}),
        )
        .await;
    assert_error(
        &stale,
        409,
        "ABORTED",
        "There were concurrent policy changes. Please retry the whole read-modify-write with exponential backoff.",
    );
    assert_eq!(stale.1["error"]["errors"][0]["reason"], "aborted");
    let (status, blind) = crm
        .set("v1", PROJECT, json!({"policy": {"bindings": [owner]}}))
        .await;
    assert_eq!(status, 200, "{blind}");
    assert_eq!(blind["bindings"].as_array().map(Vec::len), Some(1));

    // Conditions need version 3; reading them at version 1 hides them behind `_withcond_`.
    let condition = json!({"title": "weekdays", "expression": "request.time.getDayOfWeek() < 5"});
    let conditional =
        json!({"role": "roles/viewer", "members": ["user:a@example.com"], "condition": condition});
    let (status, body) = crm
        .set(
            "v3",
            PROJECT,
            json!({"policy": {"version": 1, "bindings": [owner, conditional]}}),
        )
        .await;
    assert_eq!(status, 400, "{body}");
    assert_eq!(body["error"]["status"], "INVALID_ARGUMENT");
    let (status, body) = crm
        .set(
            "v3",
            PROJECT,
            json!({"policy": {"version": 3, "bindings": [owner, conditional]}}),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["version"], 3);
    assert_eq!(body["bindings"][1]["condition"], condition);
    let low = crm.get("v1", PROJECT, 1).await;
    assert_eq!(low["version"], 1);
    let role = low["bindings"][1]["role"].as_str().unwrap();
    assert!(role.starts_with("roles/viewer_withcond_"), "{low}");
    assert!(low["bindings"][1].get("condition").is_none());
    // With the current etag, version 1 cannot replace a version-3 policy.
    let full = crm.get("v1", PROJECT, 3).await;
    let (status, body) = crm
        .set(
            "v1",
            PROJECT,
            json!({"policy": {"version": 1, "bindings": [owner], "etag": full["etag"]}}),
        )
        .await;
    assert_eq!(status, 400, "{body}");
    assert_eq!(
        body["error"]["message"],
        "Specified policy version (1) cannot be less than the existing policy version (3). For more information, please refer to https://cloud.google.com/iam/docs/policies#versions."
    );

    // updateMask: only auditConfigs changes; the bindings stay.
    let audit = json!([{"service": "allServices", "auditLogConfigs": [{"logType": "DATA_READ"}]}]);
    let (status, body) = crm
        .set(
            "v1",
            PROJECT,
            json!({"policy": {"auditConfigs": audit}, "updateMask": "auditConfigs"}),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["auditConfigs"], audit);
    assert_eq!(body["bindings"].as_array().map(Vec::len), Some(2));
    let (status, body) = crm
        .set("v1", PROJECT, json!({"policy": {}, "updateMask": "owners"}))
        .await;
    assert_eq!(status, 400, "{body}");

    // Members: untyped, unknown type, bad principal sets; unknown JSON names; odd projects.
    for (member, message) in [
        (
            "alice@example.com",
            Some("Policy members must be of the form \"<type>:<value>\"."),
        ),
        (
            "robot:x",
            Some("Policy members must be of the form \"<type>:<value>\"."),
        ),
        ("user:not-an-email", None),
        (
            "principalSet://iam.googleapis.com/projects/my-project/locations/global/workloadIdentityPools/p/namespace/ns",
            None,
        ),
    ] {
        let (status, body) = crm
            .set("v1", PROJECT, json!({"policy": {"bindings": [owner, {"role": "roles/viewer", "members": [member]}]}}))
            .await;
        assert_eq!(status, 400, "{member}: {body}");
        if let Some(message) = message {
            assert_eq!(body["error"]["message"], message);
        }
    }
    let ok_members = [
        format!(
            "principal://iam.googleapis.com/projects/{number}/locations/global/workloadIdentityPools/{PROJECT}.svc.id.goog/subject/ns/team-a/sa/trainer"
        ),
        format!(
            "principalSet://iam.googleapis.com/projects/{number}/locations/global/workloadIdentityPools/{PROJECT}.svc.id.goog/namespace/team-a"
        ),
        format!(
            "principalSet://iam.googleapis.com/projects/{number}/locations/global/workloadIdentityPools/{PROJECT}.svc.id.goog/kubernetes.cluster/https://container.googleapis.com/v1/projects/{PROJECT}/locations/us-central1/clusters/c1"
        ),
        format!("serviceAccount:{PROJECT}.svc.id.goog[team-a/trainer]"),
    ];
    let (status, body) = crm
        .set("v1", PROJECT, json!({"policy": {"bindings": [owner, {"role": "roles/storage.objectViewer", "members": ok_members}]}}))
        .await;
    assert_eq!(status, 200, "{body}");
    assert_error(
        &crm.set("v1", PROJECT, json!({"policy": {"bindings": [{"role": "roles/viewer", "member": ["user:a@example.com"]}]}}))
            .await,
        400,
        "INVALID_ARGUMENT",
        "Invalid JSON payload received. Unknown name \"member\" at 'policy.bindings[0]': Cannot find field.",
    );
    assert_error(
        &crm.call("v1", "Bad_Project", "getIamPolicy", json!({}))
            .await,
        403,
        "PERMISSION_DENIED",
        "The caller does not have permission",
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn project_policies_need_resource_manager_enabled() {
    let sim = start().await;
    let gcloud = Gcloud::new(&sim);
    gcloud
        .ok(&[
            "services",
            "disable",
            "cloudresourcemanager.googleapis.com",
            "--force",
        ])
        .await;
    let err = gcloud.fails(&["projects", "get-iam-policy", PROJECT]).await;
    assert!(
        err.contains("Cloud Resource Manager API has not been used in project"),
        "{err}"
    );
    assert!(err.contains("SERVICE_DISABLED"), "{err}");
    gcloud
        .ok(&["services", "enable", "cloudresourcemanager.googleapis.com"])
        .await;
    gcloud.ok(&["projects", "get-iam-policy", PROJECT]).await;
}

/// `gcloud projects describe` (v1) and the v3 `projects.get` give the project's number.
#[tokio::test]
async fn projects_describe_gives_the_number() {
    let sim = start().await;
    let gcloud = Gcloud::new(&sim);
    let described = gcloud.json(&["projects", "describe", PROJECT]).await;
    assert_eq!(
        described["projectNumber"],
        number_of(PROJECT),
        "{described}"
    );
    assert_eq!(described["projectId"], PROJECT);
    assert_eq!(described["lifecycleState"], "ACTIVE");
    let (status, v3) = send(reqwest::Client::new().get(format!(
        "{}/cloudresourcemanager/v3/projects/{}",
        sim.base_url(),
        number_of(PROJECT)
    )))
    .await;
    assert_eq!(status, 200, "{v3}");
    assert_eq!(v3["name"], format!("projects/{}", number_of(PROJECT)));
    assert_eq!(v3["projectId"], PROJECT);
    let (status, _) = send(reqwest::Client::new().get(format!(
        "{}/cloudresourcemanager/v3/projects/NOT_A_PROJECT",
        sim.base_url()
    )))
    .await;
    assert_eq!(status, 403);
}
