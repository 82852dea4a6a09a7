//! IAM v1 service accounts driven by gcloud (`gcloud iam service-accounts create/describe/list/
//! delete`) and, for what gcloud cannot send, by reqwest: Google's texts for bad ids, duplicates
//! and missing accounts, the Compute Engine default service account, the `projects/-` form,
//! lookups by unique id, paging, and the refusal of every call while `iam.googleapis.com` is
//! disabled.

use crate::gcloud_support;

use a3ctl_sim::serviceusage::number_of;
use gcloud_support::{Gcloud, PROJECT, assert_error, send, start};
use serde_json::{Value, json};

fn email(id: &str) -> String {
    format!("{id}@{PROJECT}.iam.gserviceaccount.com")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gcloud_manages_service_accounts() {
    let sim = start().await;
    let gcloud = Gcloud::new(&sim);
    let created = gcloud
        .json(&[
            "iam",
            "service-accounts",
            "create",
            "a3-runner",
            "--display-name=A3 runner",
            "--description=runs training jobs",
        ])
        .await;
    assert_eq!(created["email"], email("a3-runner"));
    assert_eq!(
        created["name"],
        format!("projects/{PROJECT}/serviceAccounts/{}", email("a3-runner"))
    );
    assert_eq!(created["projectId"], PROJECT);
    assert_eq!(created["displayName"], "A3 runner");
    assert_eq!(created["description"], "runs training jobs");
    let unique_id = created["uniqueId"].as_str().expect("uniqueId").to_string();
    assert_eq!(unique_id.len(), 21, "{unique_id}");
    assert!(unique_id.bytes().all(|b| b.is_ascii_digit()));
    assert_eq!(created["oauth2ClientId"], unique_id.as_str());
    assert!(created["etag"].is_string(), "{created}");

    // describe goes through `projects/-/serviceAccounts/EMAIL`.
    let described = gcloud
        .json(&["iam", "service-accounts", "describe", &email("a3-runner")])
        .await;
    assert_eq!(described["uniqueId"], unique_id.as_str());
    assert_eq!(described["name"], created["name"]);

    // A duplicate id is ALREADY_EXISTS, with Google's text and the ResourceInfo.
    let err = gcloud
        .fails(&["iam", "service-accounts", "create", "a3-runner"])
        .await;
    assert!(
        err.contains(&format!(
            "Service account a3-runner already exists within project projects/{PROJECT}."
        )),
        "{err}"
    );
    assert!(
        err.contains(&format!(
            "resourceName: projects/{PROJECT}/serviceAccounts/{}",
            email("a3-runner")
        )),
        "{err}"
    );

    // Account ids: 6 to 30 characters, then the RFC 1035 pattern.
    let err = gcloud
        .fails(&["iam", "service-accounts", "create", "ab"])
        .await;
    assert!(
        err.contains(
            "INVALID_ARGUMENT: The account ID \"ab\" does not have a length between 6 and 30."
        ),
        "{err}"
    );
    assert!(
        err.contains("type.googleapis.com/google.rpc.DebugInfo"),
        "{err}"
    );
    let err = gcloud
        .fails(&["iam", "service-accounts", "create", "Runner-One"])
        .await;
    assert!(
        err.contains("INVALID_ARGUMENT: Runner-One does not match [a-z][a-z\\d\\-]*[a-z\\d]."),
        "{err}"
    );

    gcloud
        .ok(&["iam", "service-accounts", "create", "a3-builder"])
        .await;
    let listed = gcloud.json(&["iam", "service-accounts", "list"]).await;
    let emails: Vec<&str> = listed
        .as_array()
        .expect("a list")
        .iter()
        .map(|a| a["email"].as_str().unwrap_or(""))
        .collect();
    let compute = format!(
        "{}-compute@developer.gserviceaccount.com",
        number_of(PROJECT)
    );
    assert_eq!(
        emails,
        vec![compute.as_str(), &email("a3-builder"), &email("a3-runner")]
    );
    let builder = &listed[1];
    assert!(builder.get("displayName").is_none(), "{builder}");

    gcloud
        .ok(&[
            "iam",
            "service-accounts",
            "delete",
            &email("a3-runner"),
            "--quiet",
        ])
        .await;
    let err = gcloud
        .fails(&["iam", "service-accounts", "describe", &email("a3-runner")])
        .await;
    assert!(err.contains("NOT_FOUND: Unknown service account"), "{err}");
    let err = gcloud
        .fails(&[
            "iam",
            "service-accounts",
            "delete",
            &email("a3-runner"),
            "--quiet",
        ])
        .await;
    assert!(err.contains("NOT_FOUND: Unknown service account"), "{err}");

    // The same id can be used again; the new account has another unique id.
    let again = gcloud
        .json(&["iam", "service-accounts", "create", "a3-runner"])
        .await;
    assert_ne!(again["uniqueId"], unique_id.as_str());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_compute_default_service_account_exists() {
    let sim = start().await;
    let gcloud = Gcloud::new(&sim);
    let compute = format!(
        "{}-compute@developer.gserviceaccount.com",
        number_of(PROJECT)
    );
    let account = gcloud
        .json(&["iam", "service-accounts", "describe", &compute])
        .await;
    assert_eq!(account["email"], compute.as_str());
    assert_eq!(
        account["displayName"],
        "Compute Engine default service account"
    );
    assert_eq!(account["uniqueId"].as_str().map(str::len), Some(21));
    // Found through its project, it names the project by id.
    let base = format!("{}/iam/v1/projects", sim.base_url());
    let client = reqwest::Client::new();
    let (status, body) =
        send(client.get(format!("{base}/{PROJECT}/serviceAccounts/{compute}"))).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["projectId"], PROJECT);
    assert_eq!(
        body["name"],
        format!("projects/{PROJECT}/serviceAccounts/{compute}")
    );
    // By unique id, in its project.
    let id = body["uniqueId"].as_str().unwrap().to_string();
    let (status, by_id) = send(client.get(format!("{base}/{PROJECT}/serviceAccounts/{id}"))).await;
    assert_eq!(status, 200, "{by_id}");
    assert_eq!(by_id["email"], compute.as_str());

    gcloud
        .ok(&["iam", "service-accounts", "delete", &compute, "--quiet"])
        .await;
    let err = gcloud
        .fails(&["iam", "service-accounts", "describe", &compute])
        .await;
    assert!(err.contains("NOT_FOUND: Unknown service account"), "{err}");
    let listed = gcloud.json(&["iam", "service-accounts", "list"]).await;
    assert_eq!(listed, json!([]));
}

#[tokio::test]
async fn service_account_requests_gcloud_does_not_send() {
    let sim = start().await;
    let base = format!("{}/iam/v1/projects", sim.base_url());
    let client = reqwest::Client::new();
    let create = |body: Value| {
        send(
            client
                .post(format!("{base}/{PROJECT}/serviceAccounts"))
                .json(&body),
        )
    };
    let (status, created) = create(json!({"accountId": "train-one"})).await;
    assert_eq!(status, 200, "{created}");
    let id = created["uniqueId"].as_str().unwrap().to_string();

    // Get by email in its project, by `-` and unique id, and not in another project.
    let get = |path: String| send(client.get(format!("{base}/{path}")));
    let (status, _) = get(format!("{PROJECT}/serviceAccounts/{}", email("train-one"))).await;
    assert_eq!(status, 200);
    let (status, by_id) = get(format!("-/serviceAccounts/{id}")).await;
    assert_eq!(status, 200, "{by_id}");
    assert_eq!(by_id["email"], email("train-one"));
    assert_error(
        &get(format!(
            "other-project/serviceAccounts/{}",
            email("train-one")
        ))
        .await,
        404,
        "NOT_FOUND",
        "Unknown service account",
    );
    assert_error(
        &get("-/serviceAccounts/123456789012345678901".to_string()).await,
        404,
        "NOT_FOUND",
        "Service account projects/-/serviceAccounts/123456789012345678901 does not exist.",
    );
    // With `-`, an email whose project cannot be told is a 403.
    let got = get("-/serviceAccounts/someone@example.com".to_string()).await;
    assert_error(
        &got,
        403,
        "PERMISSION_DENIED",
        "Permission 'iam.serviceAccounts.get' denied on resource (or it may not exist).",
    );
    assert_eq!(
        got.1["error"]["details"][0]["reason"],
        "IAM_PERMISSION_DENIED"
    );

    // Unknown JSON names and a missing id.
    assert_error(
        &create(json!({"accountId": "train-two", "serviceAcount": {}})).await,
        400,
        "INVALID_ARGUMENT",
        "Invalid JSON payload received. Unknown name \"serviceAcount\": Cannot find field.",
    );
    let (status, _) = create(json!({"serviceAccount": {"displayName": "x"}})).await;
    assert_eq!(status, 400);
    let (status, _) = create(
        json!({"accountId": "train-two", "serviceAccount": {"displayName": "x".repeat(101)}}),
    )
    .await;
    assert_eq!(status, 400);

    // Paging: 20 by default, at most 100; the Compute Engine default account first.
    for i in 0..4 {
        let (status, _) = create(json!({"accountId": format!("page-acct-{i}")})).await;
        assert_eq!(status, 200);
    }
    let list = |query: &str| send(client.get(format!("{base}/{PROJECT}/serviceAccounts{query}")));
    let (_, all) = list("").await;
    assert_eq!(all["accounts"].as_array().map(Vec::len), Some(6), "{all}");
    assert!(all.get("nextPageToken").is_none());
    let (_, first) = list("?pageSize=4").await;
    assert_eq!(first["accounts"].as_array().map(Vec::len), Some(4));
    let token = first["nextPageToken"]
        .as_str()
        .expect("a next page")
        .to_string();
    let (_, second) = list(&format!("?pageSize=4&pageToken={token}")).await;
    assert_eq!(second["accounts"].as_array().map(Vec::len), Some(2));
    assert!(second.get("nextPageToken").is_none());
    let (_, empty) = send(client.get(format!("{base}/other-project/serviceAccounts"))).await;
    assert_eq!(
        empty["accounts"].as_array().map(Vec::len),
        Some(1),
        "only its default account"
    );

    // Delete answers `{}`.
    let (status, body) = send(client.delete(format!("{base}/-/serviceAccounts/{id}"))).await;
    assert_eq!((status, body), (200, json!({})));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn iam_needs_its_api_enabled() {
    let sim = start().await;
    let gcloud = Gcloud::new(&sim);
    gcloud
        .ok(&["services", "disable", "iam.googleapis.com", "--force"])
        .await;
    let err = gcloud
        .fails(&["iam", "service-accounts", "create", "a3-runner"])
        .await;
    assert!(
        err.contains(&format!(
            "Identity and Access Management (IAM) API has not been used in project {} before or it is disabled.",
            number_of(PROJECT)
        )),
        "{err}"
    );
    assert!(err.contains("SERVICE_DISABLED"), "{err}");
    // `projects/-` is refused for the account's project too.
    let err = gcloud
        .fails(&["iam", "service-accounts", "describe", &email("a3-runner")])
        .await;
    assert!(err.contains("SERVICE_DISABLED"), "{err}");
    gcloud
        .ok(&["services", "enable", "iam.googleapis.com"])
        .await;
    gcloud
        .ok(&["iam", "service-accounts", "create", "a3-runner"])
        .await;
    assert_eq!(
        sim.inventory()["iam"]["serviceAccounts"][0]["email"],
        email("a3-runner")
    );
}
