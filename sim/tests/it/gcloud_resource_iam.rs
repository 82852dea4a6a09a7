//! Bucket IAM (Cloud Storage JSON API `b/{bucket}/iam`) and repository IAM (Artifact Registry
//! `:getIamPolicy` / `:setIamPolicy`) driven by gcloud (`gcloud storage buckets get-iam-policy /
//! add-iam-policy-binding / remove-iam-policy-binding`, `gcloud artifacts repositories
//! get-iam-policy / add-iam-policy-binding / remove-iam-policy-binding`) and by reqwest for stale
//! etags, conditions and versions, roles and members.

use crate::gcloud_support;

use gcloud_support::{Gcloud, PROJECT, assert_error, send, start};
use serde_json::{Value, json};

fn roles(policy: &Value) -> Vec<(String, Vec<String>)> {
    policy["bindings"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|b| {
            let members = b["members"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|m| m.as_str().unwrap_or("").to_string())
                .collect();
            (b["role"].as_str().unwrap_or("").to_string(), members)
        })
        .collect()
}

fn owners() -> Vec<String> {
    vec![
        format!("projectEditor:{PROJECT}"),
        format!("projectOwner:{PROJECT}"),
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gcloud_edits_bucket_policies() {
    let sim = start().await;
    let gcloud = Gcloud::new(&sim);
    gcloud
        .ok(&[
            "storage",
            "buckets",
            "create",
            "gs://a3-data-bkt",
            "--location=us-central1",
        ])
        .await;
    let fresh = gcloud
        .json(&["storage", "buckets", "get-iam-policy", "gs://a3-data-bkt"])
        .await;
    assert_eq!(
        roles(&fresh),
        vec![
            ("roles/storage.legacyBucketOwner".to_string(), owners()),
            (
                "roles/storage.legacyBucketReader".to_string(),
                vec![format!("projectViewer:{PROJECT}")]
            ),
        ]
    );
    assert_eq!(fresh["etag"], "CAE=");

    gcloud
        .ok(&["iam", "service-accounts", "create", "a3-reader"])
        .await;
    let reader = format!("serviceAccount:a3-reader@{PROJECT}.iam.gserviceaccount.com");
    gcloud
        .ok(&[
            "storage",
            "buckets",
            "add-iam-policy-binding",
            "gs://a3-data-bkt",
            &format!("--member={reader}"),
            "--role=roles/storage.objectViewer",
        ])
        .await;
    let read = gcloud
        .json(&["storage", "buckets", "get-iam-policy", "gs://a3-data-bkt"])
        .await;
    assert!(
        roles(&read).contains(&(
            "roles/storage.objectViewer".to_string(),
            vec![reader.clone()]
        )),
        "{read}"
    );
    assert_eq!(read["etag"], "CAI=", "the bucket's metageneration moved");
    let (_, bucket) =
        send(reqwest::Client::new().get(format!("{}/storage/v1/b/a3-data-bkt", sim.base_url())))
            .await;
    assert_eq!(bucket["metageneration"], "2");

    let err = gcloud
        .fails(&[
            "storage",
            "buckets",
            "add-iam-policy-binding",
            "gs://a3-data-bkt",
            &format!("--member=serviceAccount:ghost-acct@{PROJECT}.iam.gserviceaccount.com"),
            "--role=roles/storage.objectViewer",
        ])
        .await;
    assert!(
        err.contains(&format!(
            "Service account ghost-acct@{PROJECT}.iam.gserviceaccount.com does not exist."
        )),
        "{err}"
    );
    gcloud
        .ok(&[
            "storage",
            "buckets",
            "remove-iam-policy-binding",
            "gs://a3-data-bkt",
            &format!("--member={reader}"),
            "--role=roles/storage.objectViewer",
        ])
        .await;
    let read = gcloud
        .json(&["storage", "buckets", "get-iam-policy", "gs://a3-data-bkt"])
        .await;
    assert_eq!(roles(&read).len(), 2, "{read}");
}

#[tokio::test]
async fn bucket_policy_rules() {
    let sim = start().await;
    let client = reqwest::Client::new();
    let base = format!("{}/storage/v1/b", sim.base_url());
    for (name, uniform) in [("plain-bkt", false), ("uniform-bkt", true)] {
        let (status, body) = send(
            client
                .post(format!("{base}?project={PROJECT}"))
                .json(&json!({"name": name, "iamConfiguration": {"uniformBucketLevelAccess": {"enabled": uniform}}})),
        )
        .await;
        assert_eq!(status, 200, "{body}");
    }
    let get = |name: &str, query: &str| send(client.get(format!("{base}/{name}/iam{query}")));
    let put = |name: &str, body: Value| send(client.put(format!("{base}/{name}/iam")).json(&body));

    // A uniform bucket's default policy also grants the legacy object roles.
    let (status, uniform) = get("uniform-bkt", "").await;
    assert_eq!(status, 200, "{uniform}");
    assert_eq!(uniform["kind"], "storage#policy");
    assert_eq!(uniform["resourceId"], "projects/_/buckets/uniform-bkt");
    assert_eq!(uniform["version"], 1);
    assert_eq!(
        roles(&uniform),
        vec![
            ("roles/storage.legacyBucketOwner".to_string(), owners()),
            (
                "roles/storage.legacyBucketReader".to_string(),
                vec![format!("projectViewer:{PROJECT}")]
            ),
            ("roles/storage.legacyObjectOwner".to_string(), owners()),
            (
                "roles/storage.legacyObjectReader".to_string(),
                vec![format!("projectViewer:{PROJECT}")]
            ),
        ]
    );

    // Stale etag: 412 conditionNotMet.
    let viewer = json!({"role": "roles/storage.objectViewer", "members": ["user:a@example.com"]});
    let (status, _) = put("plain-bkt", json!({"bindings": [viewer], "etag": "CAE="})).await;
    assert_eq!(status, 200);
    let stale = put("plain-bkt", json!({"bindings": [viewer], "etag": "CAE="})).await;
    assert_error(&stale, 412, "FAILED_PRECONDITION", "Precondition Failed");
    assert_eq!(stale.1["error"]["errors"][0]["reason"], "conditionNotMet");

    // Conditions: uniform access first, then version 3.
    let conditional = json!({"role": "roles/storage.objectViewer", "members": ["user:a@example.com"],
        "condition": {"title": "logs", "expression": "resource.name.startsWith(\"projects/_/buckets/uniform-bkt/objects/logs/\")"}});
    let (status, body) = put(
        "plain-bkt",
        json!({"bindings": [conditional], "version": 3}),
    )
    .await;
    assert_eq!(status, 412, "{body}");
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("enable uniform bucket-level access"),
        "{body}"
    );
    let (status, body) = put(
        "uniform-bkt",
        json!({"bindings": [conditional], "version": 1}),
    )
    .await;
    assert_eq!(status, 400, "{body}");
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("at least 3"),
        "{body}"
    );
    let (status, body) = put(
        "uniform-bkt",
        json!({"bindings": [conditional], "version": 3}),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["version"], 3);
    assert_eq!(body["bindings"][0]["condition"], conditional["condition"]);
    let (_, low) = get("uniform-bkt", "?optionsRequestedPolicyVersion=1").await;
    assert_eq!(low["version"], 1);
    assert!(
        low["bindings"][0]["role"]
            .as_str()
            .unwrap()
            .starts_with("roles/storage.objectViewer_withcond_"),
        "{low}"
    );
    let (_, high) = get("uniform-bkt", "?optionsRequestedPolicyVersion=3").await;
    assert_eq!(high["version"], 3);

    // Roles a bucket takes; members only buckets take.
    let (status, body) = put(
        "plain-bkt",
        json!({"bindings": [{"role": "roles/viewer", "members": ["user:a@example.com"]}]}),
    )
    .await;
    assert_eq!(status, 400, "{body}");
    assert_eq!(
        body["error"]["message"],
        "roles/viewer is not a valid role for projects/_/buckets/plain-bkt."
    );
    assert_eq!(body["error"]["errors"][0]["reason"], "invalid");
    let (status, body) = put(
        "plain-bkt",
        json!({"bindings": [{"role": "roles/storage.objectAdmin", "members": [format!("projectOwner:{PROJECT}"), "allUsers"]}]}),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert_error(
        &get("no-such-bkt", "").await,
        404,
        "NOT_FOUND",
        "The specified bucket does not exist.",
    );

    // A bucket made again starts from the default policy.
    let (status, _) = send(client.delete(format!("{base}/plain-bkt"))).await;
    assert_eq!(status, 204);
    let (status, _) = send(
        client
            .post(format!("{base}?project={PROJECT}"))
            .json(&json!({"name": "plain-bkt"})),
    )
    .await;
    assert_eq!(status, 200);
    let (_, again) = get("plain-bkt", "").await;
    assert_eq!(roles(&again).len(), 2, "{again}");
    assert_eq!(again["etag"], "CAE=");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gcloud_edits_repository_policies() {
    let sim = start().await;
    let gcloud = Gcloud::new(&sim);
    gcloud
        .ok(&[
            "artifacts",
            "repositories",
            "create",
            "a3-images",
            "--repository-format=docker",
            "--location=us-central1",
        ])
        .await;
    let repo = ["--location=us-central1"];
    let fresh = gcloud
        .json(&[
            "artifacts",
            "repositories",
            "get-iam-policy",
            "a3-images",
            repo[0],
        ])
        .await;
    assert_eq!(fresh, json!({"etag": "ACAB"}));
    gcloud
        .ok(&["iam", "service-accounts", "create", "a3-puller"])
        .await;
    let puller = format!("serviceAccount:a3-puller@{PROJECT}.iam.gserviceaccount.com");
    gcloud
        .ok(&[
            "artifacts",
            "repositories",
            "add-iam-policy-binding",
            "a3-images",
            repo[0],
            &format!("--member={puller}"),
            "--role=roles/artifactregistry.reader",
        ])
        .await;
    let read = gcloud
        .json(&[
            "artifacts",
            "repositories",
            "get-iam-policy",
            "a3-images",
            repo[0],
        ])
        .await;
    assert_eq!(read["version"], 1);
    assert_eq!(
        roles(&read),
        vec![(
            "roles/artifactregistry.reader".to_string(),
            vec![puller.clone()]
        )]
    );
    assert_ne!(read["etag"], "ACAB");
    let err = gcloud
        .fails(&[
            "artifacts",
            "repositories",
            "add-iam-policy-binding",
            "a3-images",
            repo[0],
            "--member=puller@example.com",
            "--role=roles/artifactregistry.reader",
        ])
        .await;
    assert!(
        err.contains("Policy members must be of the form \"<type>:<value>\"."),
        "{err}"
    );

    // A deleted account shows as deleted in the repository's policy too.
    gcloud
        .ok(&[
            "iam",
            "service-accounts",
            "delete",
            &format!("a3-puller@{PROJECT}.iam.gserviceaccount.com"),
            "--quiet",
        ])
        .await;
    let read = gcloud
        .json(&[
            "artifacts",
            "repositories",
            "get-iam-policy",
            "a3-images",
            repo[0],
        ])
        .await;
    let member = read["bindings"][0]["members"][0].as_str().unwrap();
    assert!(
        member.starts_with(&format!(
            "deleted:serviceAccount:a3-puller@{PROJECT}.iam.gserviceaccount.com?uid="
        )),
        "{read}"
    );
    gcloud
        .ok(&[
            "artifacts",
            "repositories",
            "remove-iam-policy-binding",
            "a3-images",
            repo[0],
            &format!("--member={member}"),
            "--role=roles/artifactregistry.reader",
        ])
        .await;
    let read = gcloud
        .json(&[
            "artifacts",
            "repositories",
            "get-iam-policy",
            "a3-images",
            repo[0],
        ])
        .await;
    assert!(read.get("bindings").is_none(), "{read}");

    // The policy goes with the repository.
    gcloud
        .ok(&[
            "artifacts",
            "repositories",
            "add-iam-policy-binding",
            "a3-images",
            repo[0],
            "--member=user:alice@example.com",
            "--role=roles/artifactregistry.writer",
        ])
        .await;
    gcloud
        .ok(&[
            "artifacts",
            "repositories",
            "delete",
            "a3-images",
            repo[0],
            "--quiet",
        ])
        .await;
    gcloud
        .ok(&[
            "artifacts",
            "repositories",
            "create",
            "a3-images",
            "--repository-format=docker",
            repo[0],
        ])
        .await;
    let read = gcloud
        .json(&[
            "artifacts",
            "repositories",
            "get-iam-policy",
            "a3-images",
            repo[0],
        ])
        .await;
    assert_eq!(read, json!({"etag": "ACAB"}));
}

#[tokio::test]
async fn repository_policy_rules() {
    let sim = start().await;
    let client = reqwest::Client::new();
    let base = format!(
        "{}/artifactregistry/v1/projects/{PROJECT}/locations/us-central1/repositories",
        sim.base_url()
    );
    let (status, _) = send(
        client
            .post(format!("{base}?repositoryId=images"))
            .json(&json!({"format": "DOCKER"})),
    )
    .await;
    assert_eq!(status, 200);
    let get = |query: &str| send(client.get(format!("{base}/images:getIamPolicy{query}")));
    let set = |body: Value| {
        send(
            client
                .post(format!("{base}/images:setIamPolicy"))
                .json(&body),
        )
    };
    let reader =
        json!({"role": "roles/artifactregistry.reader", "members": ["user:a@example.com"]});
    let (status, first) = set(json!({"policy": {"bindings": [reader], "etag": "ACAB"}})).await;
    assert_eq!(status, 200, "{first}");
    let stale = set(json!({"policy": {"bindings": [reader], "etag": "ACAB"}})).await;
    assert_error(
        &stale,
        409,
        "ABORTED",
        "There were concurrent policy changes. Please retry the whole read-modify-write with exponential backoff.",
    );
    // Conditions: version 3, and at version 1 the `_withcond_` form.
    let conditional = json!({"role": "roles/artifactregistry.writer", "members": ["user:b@example.com"],
        "condition": {"title": "until-2030", "expression": "request.time < timestamp(\"2030-01-01T00:00:00Z\")"}});
    let (status, body) = set(json!({"policy": {"bindings": [reader, conditional]}})).await;
    assert_eq!(status, 400, "{body}");
    let (status, body) = set(
        json!({"policy": {"version": 3, "bindings": [reader, conditional], "etag": first["etag"]}}),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let (_, v3) = get("?options.requestedPolicyVersion=3").await;
    assert_eq!(v3["version"], 3);
    assert_eq!(v3["bindings"][1]["condition"], conditional["condition"]);
    let (_, v0) = get("").await;
    assert_eq!(v0["version"], 1);
    assert!(
        v0["bindings"][1]["role"]
            .as_str()
            .unwrap()
            .starts_with("roles/artifactregistry.writer_withcond_"),
        "{v0}"
    );
    let (status, body) = get("?options.requestedPolicyVersion=2").await;
    assert_eq!(status, 400, "{body}");
    // Unknown names, missing repositories, legacy storage roles.
    assert_error(
        &set(json!({"polcy": {}})).await,
        400,
        "INVALID_ARGUMENT",
        "Invalid JSON payload received. Unknown name \"polcy\": Cannot find field.",
    );
    assert_error(
        &send(client.get(format!("{base}/nope:getIamPolicy"))).await,
        404,
        "NOT_FOUND",
        "Requested entity was not found.",
    );
    assert_error(
        &set(json!({"policy": {"bindings": [{"role": "roles/storage.legacyBucketReader", "members": ["user:a@example.com"]}]}})).await,
        400,
        "INVALID_ARGUMENT",
        "Role roles/storage.legacyBucketReader is not supported for this resource.",
    );
    // The repository itself is untouched by its policy.
    let (status, repo) = send(client.get(format!("{base}/images"))).await;
    assert_eq!(status, 200);
    assert_eq!(repo["format"], "DOCKER");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resource_policies_need_their_apis_enabled() {
    let sim = start().await;
    let gcloud = Gcloud::new(&sim);
    gcloud
        .ok(&[
            "storage",
            "buckets",
            "create",
            "gs://a3-gated-bkt",
            "--location=us-central1",
        ])
        .await;
    gcloud
        .ok(&[
            "services",
            "disable",
            "storage-api.googleapis.com",
            "--force",
        ])
        .await;
    let err = gcloud
        .fails(&["storage", "buckets", "get-iam-policy", "gs://a3-gated-bkt"])
        .await;
    assert!(
        err.contains("Google Cloud Storage JSON API has not been used"),
        "{err}"
    );
    gcloud
        .ok(&[
            "services",
            "disable",
            "artifactregistry.googleapis.com",
            "--force",
        ])
        .await;
    let err = gcloud
        .fails(&[
            "artifacts",
            "repositories",
            "get-iam-policy",
            "any-repo",
            "--location=us-central1",
        ])
        .await;
    assert!(
        err.contains("Artifact Registry API has not been used"),
        "{err}"
    );
}
