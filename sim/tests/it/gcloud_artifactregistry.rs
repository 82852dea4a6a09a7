//! Artifact Registry v1 against gcloud (`gcloud artifacts repositories create/describe/list/
//! update/delete`) and reqwest for the error cases (id rules, locations, format, 409, 404), the
//! operation's exact `@type` URLs, and integer enum encoding.

use crate::gcloud_support;

use gcloud_support::{Gcloud, PROJECT, assert_error, send, start};
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gcloud_manages_repositories() {
    let handle = start().await;
    let gcloud = Gcloud::new(&handle);
    gcloud
        .ok(&[
            "artifacts",
            "repositories",
            "create",
            "a3-images",
            "--repository-format=docker",
            "--location=us-central1",
            "--description=training images",
        ])
        .await;
    let repo = gcloud
        .json(&[
            "artifacts",
            "repositories",
            "describe",
            "a3-images",
            "--location=us-central1",
        ])
        .await;
    assert_eq!(
        repo["name"],
        format!("projects/{PROJECT}/locations/us-central1/repositories/a3-images")
    );
    assert_eq!(repo["format"], "DOCKER");
    assert_eq!(repo["mode"], "STANDARD_REPOSITORY");
    assert_eq!(repo["description"], "training images");
    assert!(
        repo["createTime"].is_string() && repo["updateTime"].is_string(),
        "{repo}"
    );

    let (ok, _, err) = gcloud
        .run(&[
            "artifacts",
            "repositories",
            "create",
            "a3-images",
            "--repository-format=docker",
            "--location=us-central1",
        ])
        .await;
    assert!(!ok && err.contains("ALREADY_EXISTS"), "{err}");

    gcloud
        .ok(&[
            "artifacts",
            "repositories",
            "update",
            "a3-images",
            "--location=us-central1",
            "--description=updated",
        ])
        .await;
    let (list, _) = tokio::join!(
        gcloud.json(&[
            "artifacts",
            "repositories",
            "list",
            "--location=us-central1"
        ]),
        async {}
    );
    let list = list.as_array().cloned().unwrap_or_default();
    assert_eq!(list.len(), 1, "{list:?}");
    assert_eq!(list[0]["description"], "updated");

    gcloud
        .ok(&[
            "artifacts",
            "repositories",
            "delete",
            "a3-images",
            "--location=us-central1",
            "--quiet",
        ])
        .await;
    let (ok, _, err) = gcloud
        .run(&[
            "artifacts",
            "repositories",
            "describe",
            "a3-images",
            "--location=us-central1",
        ])
        .await;
    assert!(!ok && err.contains("NOT_FOUND"), "{err}");
}

#[tokio::test]
async fn repository_rules_and_operations() {
    let handle = start().await;
    let base = format!(
        "{}/artifactregistry/v1/projects/{PROJECT}/locations",
        handle.base_url()
    );
    let client = reqwest::Client::new();
    let docker = json!({"format": "DOCKER"});

    for bad in ["Images", "1images", "images-", "im_ages"] {
        let got = send(
            client
                .post(format!(
                    "{base}/us-central1/repositories?repositoryId={bad}"
                ))
                .json(&docker),
        )
        .await;
        assert_eq!(got.0, 400, "{bad}: {}", got.1);
        assert_eq!(got.1["error"]["status"], "INVALID_ARGUMENT");
    }
    let got = send(
        client
            .post(format!("{base}/mars-north1/repositories?repositoryId=r1"))
            .json(&docker),
    )
    .await;
    assert_error(
        &got,
        400,
        "INVALID_ARGUMENT",
        "Invalid location \"mars-north1\": the location must be a Google Cloud region or one of the multi-regions us, europe, asia.",
    );
    let got = send(
        client
            .post(format!("{base}/us-central1-a/repositories?repositoryId=r1"))
            .json(&docker),
    )
    .await;
    assert_eq!(got.0, 400, "a zone is not an Artifact Registry location");
    let got = send(
        client
            .post(format!("{base}/us-central1/repositories?repositoryId=r1"))
            .json(&json!({})),
    )
    .await;
    assert_error(
        &got,
        400,
        "INVALID_ARGUMENT",
        "Repository format must be specified.",
    );
    let got = send(
        client
            .post(format!("{base}/us-central1/repositories?repositoryId=r1"))
            .json(&json!({"format": "TARBALL"})),
    )
    .await;
    assert_error(
        &got,
        400,
        "INVALID_ARGUMENT",
        "Invalid value at 'repository.format' (TYPE_ENUM), TARBALL",
    );

    // Integer enums in, integer enums out (what google-cloud-rust sends and asks for).
    let ints = "%24alt=json%3Benum-encoding%3Dint";
    let (status, op) = send(
        client
            .post(format!(
                "{base}/europe/repositories?repositoryId=pkgs&{ints}"
            ))
            .json(&json!({"format": 8})),
    )
    .await;
    assert_eq!(status, 200, "{op}");
    assert_eq!(
        op["metadata"]["@type"],
        "type.googleapis.com/google.devtools.artifactregistry.v1.OperationMetadata"
    );
    let op_name = op["name"].as_str().expect("name").to_string();
    assert!(
        op_name.starts_with(&format!(
            "projects/{PROJECT}/locations/europe/operations/operation-"
        )),
        "{op_name}"
    );
    let (_, done) = send(client.get(format!(
        "{}/artifactregistry/v1/{op_name}?{ints}",
        handle.base_url()
    )))
    .await;
    assert_eq!(done["done"], true, "{done}");
    assert_eq!(
        done["response"]["@type"],
        "type.googleapis.com/google.devtools.artifactregistry.v1.Repository"
    );
    assert_eq!(done["response"]["format"], 8);
    assert_eq!(done["response"]["mode"], 1);
    assert!(done.get("error").is_none());
    let (_, by_name) = send(client.get(format!("{base}/europe/repositories/pkgs"))).await;
    assert_eq!(by_name["format"], "PYTHON");
    let (_, by_number) = send(client.get(format!("{base}/europe/repositories/pkgs?{ints}"))).await;
    assert_eq!(by_number["format"], 8);

    let got = send(
        client
            .post(format!("{base}/europe/repositories?repositoryId=pkgs"))
            .json(&docker),
    )
    .await;
    assert_error(&got, 409, "ALREADY_EXISTS", "the repository already exists");
    let got = send(client.get(format!("{base}/europe/repositories/missing"))).await;
    assert_error(&got, 404, "NOT_FOUND", "Requested entity was not found.");
    let got = send(client.delete(format!("{base}/europe/repositories/missing"))).await;
    assert_error(&got, 404, "NOT_FOUND", "Requested entity was not found.");

    // Patch is synchronous and honours the mask.
    let (status, patched) = send(
        client
            .patch(format!("{base}/europe/repositories/pkgs?updateMask=labels"))
            .json(&json!({"labels": {"team": "ml"}, "description": "ignored"})),
    )
    .await;
    assert_eq!(status, 200, "{patched}");
    assert_eq!(patched["labels"]["team"], "ml");
    assert!(patched.get("description").is_none(), "{patched}");

    let (_, deleting) = send(client.delete(format!("{base}/europe/repositories/pkgs"))).await;
    let delete_op = deleting["name"].as_str().expect("name").to_string();
    let (_, deleted) = send(client.get(format!(
        "{}/artifactregistry/v1/{delete_op}",
        handle.base_url()
    )))
    .await;
    assert_eq!(deleted["done"], true, "{deleted}");
    assert_eq!(
        deleted["response"]["@type"],
        "type.googleapis.com/google.protobuf.Empty"
    );
    let got = send(client.get(format!("{base}/europe/repositories/pkgs"))).await;
    assert_eq!(got.0, 404);
}

/// Artifact Registry serves `operations.get` and `cancel`, not `list` (`sim/src/aip151.rs`):
/// gcloud describes the operation a create started, and a list of operations is not a route.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gcloud_describes_an_operation() {
    let handle = start().await;
    let gcloud = Gcloud::new(&handle);
    let (status, op) = send(
        reqwest::Client::new()
            .post(format!(
                "{}/artifactregistry/v1/projects/{PROJECT}/locations/us-central1/repositories?repositoryId=ops",
                handle.base_url()
            ))
            .json(&serde_json::json!({"format": "DOCKER"})),
    )
    .await;
    assert_eq!(status, 200, "{op}");
    let name = op["name"].as_str().expect("name");
    let id = name.rsplit('/').next().unwrap();
    let described = gcloud
        .json(&[
            "artifacts",
            "operations",
            "describe",
            id,
            "--location=us-central1",
        ])
        .await;
    assert_eq!(described["name"], name);
    assert_eq!(
        described["metadata"]["@type"],
        "type.googleapis.com/google.devtools.artifactregistry.v1.OperationMetadata"
    );
    let (status, _) = send(reqwest::Client::new().get(format!(
        "{}/artifactregistry/v1/projects/{PROJECT}/locations/us-central1/operations",
        handle.base_url()
    )))
    .await;
    assert_eq!(status, 404);
}
