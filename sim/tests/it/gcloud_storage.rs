//! Cloud Storage JSON v1 against gcloud (`gcloud storage buckets ...`, `cp`, `ls`, `rm`) and
//! reqwest for the error cases: naming rules, 409s, 404s, non-empty bucket delete, every
//! precondition's 412, versioning, and a lock race where exactly one `ifGenerationMatch=0`
//! insert wins.

use crate::gcloud_support;

use a3ctl_sim::SimHandle;
use gcloud_support::{Gcloud, PROJECT, send, start};
use serde_json::{Value, json};
use std::path::Path;

fn dump_log(handle: &SimHandle) -> String {
    handle
        .shared
        .log
        .lock()
        .entries
        .iter()
        .map(|e| format!("{} {} {}", e.method, e.path, e.status))
        .collect::<Vec<_>>()
        .join("\n")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gcloud_manages_buckets_and_objects() {
    let handle = start().await;
    let gcloud = Gcloud::new(&handle);
    let dir = tempfile::tempdir().expect("tempdir");
    let small = dir.path().join("state.json");
    std::fs::write(&small, b"{\"serial\": 1}\n").expect("write");
    // Larger than gcloud's resumable threshold, so both upload paths are exercised.
    let big = dir.path().join("big.bin");
    let big_data: Vec<u8> = (0..9 * 1024 * 1024u32).map(|i| (i % 251) as u8).collect();
    std::fs::write(&big, &big_data).expect("write");

    gcloud
        .ok(&[
            "storage",
            "buckets",
            "create",
            "gs://a3ctl-state-bucket",
            "--location=us-central1",
            "--uniform-bucket-level-access",
        ])
        .await;
    let bucket = gcloud
        .json(&["storage", "buckets", "describe", "gs://a3ctl-state-bucket"])
        .await;
    assert_eq!(bucket["name"], "a3ctl-state-bucket");
    assert_eq!(bucket["location"], "US-CENTRAL1");
    assert_eq!(bucket["location_type"], "region");
    assert_eq!(bucket["uniform_bucket_level_access"], true);

    gcloud
        .ok(&[
            "storage",
            "buckets",
            "update",
            "gs://a3ctl-state-bucket",
            "--versioning",
            "--update-labels=team=ml",
        ])
        .await;
    let raw = reqwest::get(format!(
        "{}/storage/v1/b/a3ctl-state-bucket",
        handle.base_url()
    ))
    .await
    .expect("get")
    .json::<Value>()
    .await
    .expect("json");
    assert_eq!(raw["versioning"]["enabled"], true, "{raw}");
    assert_eq!(raw["labels"]["team"], "ml");
    assert_eq!(raw["metageneration"], "2");

    let list = gcloud.json(&["storage", "buckets", "list"]).await;
    assert_eq!(list.as_array().map(Vec::len), Some(1), "{list}");

    let small_arg = small.to_str().expect("utf8");
    let big_arg = big.to_str().expect("utf8");
    let (a, b) = tokio::join!(
        gcloud.run(&[
            "storage",
            "cp",
            small_arg,
            "gs://a3ctl-state-bucket/env/prod/state.json"
        ]),
        gcloud.run(&[
            "storage",
            "cp",
            big_arg,
            "gs://a3ctl-state-bucket/blobs/big.bin"
        ]),
    );
    assert!(
        a.0 && b.0,
        "uploads failed:\n{a:?}\n{b:?}\n{}",
        dump_log(&handle)
    );

    let listing = gcloud
        .ok(&["storage", "ls", "gs://a3ctl-state-bucket"])
        .await;
    assert!(
        listing.contains("gs://a3ctl-state-bucket/env/"),
        "{listing}"
    );
    assert!(
        listing.contains("gs://a3ctl-state-bucket/blobs/"),
        "{listing}"
    );
    let deep = gcloud
        .ok(&["storage", "ls", "gs://a3ctl-state-bucket/env/prod/"])
        .await;
    assert!(
        deep.contains("gs://a3ctl-state-bucket/env/prod/state.json"),
        "{deep}"
    );

    let down_small = dir.path().join("down-state.json");
    let down_big = dir.path().join("down-big.bin");
    let (a, b) = tokio::join!(
        gcloud.run(&[
            "storage",
            "cp",
            "gs://a3ctl-state-bucket/env/prod/state.json",
            down_small.to_str().expect("utf8"),
        ]),
        gcloud.run(&[
            "storage",
            "cp",
            "gs://a3ctl-state-bucket/blobs/big.bin",
            down_big.to_str().expect("utf8"),
        ]),
    );
    assert!(
        a.0 && b.0,
        "downloads failed:\n{a:?}\n{b:?}\n{}",
        dump_log(&handle)
    );
    assert_eq!(
        std::fs::read(&down_small).expect("read"),
        b"{\"serial\": 1}\n"
    );
    assert!(std::fs::read(&down_big).expect("read") == big_data);

    // Deleting a bucket that still holds objects fails.
    let (ok, _, err) = gcloud
        .run(&["storage", "buckets", "delete", "gs://a3ctl-state-bucket"])
        .await;
    assert!(!ok && err.contains("not empty"), "{err}");

    gcloud
        .ok(&[
            "storage",
            "rm",
            "gs://a3ctl-state-bucket/env/prod/state.json",
        ])
        .await;
    let (ok, _, _) = gcloud
        .run(&[
            "storage",
            "ls",
            "gs://a3ctl-state-bucket/env/prod/state.json",
        ])
        .await;
    assert!(!ok, "the removed object is no longer listed");
    // Versioning kept the removed object as a noncurrent version.
    let versions = gcloud
        .ok(&["storage", "ls", "-a", "gs://a3ctl-state-bucket/env/prod/"])
        .await;
    assert!(versions.contains("state.json#"), "{versions}");

    gcloud
        .ok(&[
            "storage",
            "rm",
            "--all-versions",
            "-r",
            "gs://a3ctl-state-bucket/**",
        ])
        .await;
    gcloud
        .ok(&["storage", "buckets", "delete", "gs://a3ctl-state-bucket"])
        .await;
    let (ok, _, err) = gcloud
        .run(&["storage", "buckets", "describe", "gs://a3ctl-state-bucket"])
        .await;
    assert!(!ok && err.contains("404"), "{err}");
    assert!(Path::new(&down_big).exists());
}

fn assert_error(got: &(u16, Value), code: u16, reason: &str, message: &str) {
    let (status, body) = got;
    assert_eq!(*status, code, "{body}");
    assert_eq!(body["error"]["code"], code, "{body}");
    assert_eq!(body["error"]["errors"][0]["reason"], reason, "{body}");
    assert_eq!(body["error"]["message"], message, "{body}");
}

async fn create_bucket(
    client: &reqwest::Client,
    base: &str,
    project: &str,
    body: Value,
) -> (u16, Value) {
    send(
        client
            .post(format!("{base}/storage/v1/b?project={project}"))
            .json(&body),
    )
    .await
}

async fn put_object(
    client: &reqwest::Client,
    base: &str,
    bucket: &str,
    name: &str,
    data: &str,
    extra: &str,
) -> (u16, Value) {
    send(
        client
            .post(format!(
                "{base}/upload/storage/v1/b/{bucket}/o?uploadType=media&name={name}{extra}"
            ))
            .header("content-type", "text/plain")
            .body(data.to_string()),
    )
    .await
}

#[tokio::test]
async fn bucket_rules_and_conflicts() {
    let handle = start().await;
    let base = handle.base_url().to_string();
    let client = reqwest::Client::new();
    for bad in [
        "UPPER",
        "ab",
        "goog-state",
        "-dash",
        "under_score_",
        "192.168.1.1",
    ] {
        let got = create_bucket(&client, &base, PROJECT, json!({ "name": bad })).await;
        assert_error(
            &got,
            400,
            "invalid",
            &format!("Invalid bucket name: '{bad}'"),
        );
    }
    let got = create_bucket(
        &client,
        &base,
        PROJECT,
        json!({"name": "b1", "location": "mars"}),
    )
    .await;
    assert_error(&got, 400, "invalid", "Invalid bucket name: 'b1'");
    let got = create_bucket(
        &client,
        &base,
        PROJECT,
        json!({"name": "bucket-1", "location": "mars"}),
    )
    .await;
    assert_error(
        &got,
        400,
        "invalid",
        "The specified location constraint is not valid.",
    );

    let (status, bucket) = create_bucket(
        &client,
        &base,
        PROJECT,
        json!({"name": "bucket-1", "location": "us-central1"}),
    )
    .await;
    assert_eq!(status, 200, "{bucket}");
    assert_eq!(
        bucket["selfLink"],
        "https://www.googleapis.com/storage/v1/b/bucket-1"
    );
    assert_eq!(bucket["storageClass"], "STANDARD");
    assert_eq!(bucket["metageneration"], "1");
    let got = create_bucket(&client, &base, PROJECT, json!({"name": "bucket-1"})).await;
    assert_error(
        &got,
        409,
        "conflict",
        "Your previous request to create the named bucket succeeded and you already own it.",
    );
    let got = create_bucket(&client, &base, "other-project", json!({"name": "bucket-1"})).await;
    assert_error(
        &got,
        409,
        "conflict",
        "The requested bucket name is not available. The bucket namespace is shared by all users of the system. Please select a different name and try again.",
    );

    let got = send(client.get(format!("{base}/storage/v1/b/missing-bucket"))).await;
    assert_error(
        &got,
        404,
        "notFound",
        "The specified bucket does not exist.",
    );
    let got = send(client.get(format!("{base}/storage/v1/b/bucket-1/o/nothing"))).await;
    assert_error(&got, 404, "notFound", "No such object: bucket-1/nothing");
    let got = send(client.delete(format!("{base}/storage/v1/b/missing-bucket"))).await;
    assert_error(
        &got,
        404,
        "notFound",
        "The specified bucket does not exist.",
    );

    let (status, _) = put_object(&client, &base, "bucket-1", "x", "data", "").await;
    assert_eq!(status, 200);
    let got = send(client.delete(format!("{base}/storage/v1/b/bucket-1"))).await;
    assert_error(
        &got,
        409,
        "conflict",
        "The bucket you tried to delete is not empty.",
    );

    // Bucket metageneration preconditions.
    let got = send(
        client
            .patch(format!(
                "{base}/storage/v1/b/bucket-1?ifMetagenerationMatch=7"
            ))
            .json(&json!({"labels": {"a": "b"}})),
    )
    .await;
    assert_error(
        &got,
        412,
        "conditionNotMet",
        "At least one of the pre-conditions you specified did not hold.",
    );
    let (status, patched) = send(
        client
            .patch(format!(
                "{base}/storage/v1/b/bucket-1?ifMetagenerationMatch=1"
            ))
            .json(&json!({"labels": {"a": "b"}})),
    )
    .await;
    assert_eq!(
        (status, patched["metageneration"].as_str()),
        (200, Some("2")),
        "{patched}"
    );
    let got = send(client.delete(format!(
        "{base}/storage/v1/b/bucket-1?ifMetagenerationNotMatch=2"
    )))
    .await;
    assert_error(
        &got,
        412,
        "conditionNotMet",
        "At least one of the pre-conditions you specified did not hold.",
    );
}

#[tokio::test]
async fn object_preconditions_hold_exactly() {
    let handle = start().await;
    let base = handle.base_url().to_string();
    let client = reqwest::Client::new();
    let failed = "At least one of the pre-conditions you specified did not hold.";
    create_bucket(&client, &base, PROJECT, json!({"name": "state-b"})).await;

    // ifGenerationMatch=0: only if absent.
    let (status, first) = put_object(
        &client,
        &base,
        "state-b",
        "lock",
        "one",
        "&ifGenerationMatch=0",
    )
    .await;
    assert_eq!(status, 200, "{first}");
    let generation = first["generation"]
        .as_str()
        .expect("generation")
        .to_string();
    let metageneration = first["metageneration"]
        .as_str()
        .expect("metageneration")
        .to_string();
    assert_eq!(first["size"], "3");
    assert_eq!(first["md5Hash"], "+XxdKZQb+xsv2rCHSQargg==");
    let got = put_object(
        &client,
        &base,
        "state-b",
        "lock",
        "two",
        "&ifGenerationMatch=0",
    )
    .await;
    assert_error(&got, 412, "conditionNotMet", failed);
    let got = put_object(
        &client,
        &base,
        "state-b",
        "lock",
        "two",
        "&ifGenerationMatch=1",
    )
    .await;
    assert_error(&got, 412, "conditionNotMet", failed);
    let got = put_object(
        &client,
        &base,
        "state-b",
        "lock",
        "two",
        &format!("&ifGenerationNotMatch={generation}"),
    )
    .await;
    assert_error(&got, 412, "conditionNotMet", failed);
    let got = put_object(
        &client,
        &base,
        "state-b",
        "lock",
        "two",
        "&ifMetagenerationMatch=9",
    )
    .await;
    assert_error(&got, 412, "conditionNotMet", failed);
    let got = put_object(
        &client,
        &base,
        "state-b",
        "lock",
        "two",
        &format!("&ifMetagenerationNotMatch={metageneration}"),
    )
    .await;
    assert_error(&got, 412, "conditionNotMet", failed);
    let got = put_object(
        &client,
        &base,
        "state-b",
        "absent",
        "x",
        "&ifMetagenerationMatch=1",
    )
    .await;
    assert_error(&got, 412, "conditionNotMet", failed);

    // Reads: Match failures are 412, NotMatch failures 304.
    let url = format!("{base}/storage/v1/b/state-b/o/lock");
    let got = send(client.get(format!("{url}?ifGenerationMatch=1"))).await;
    assert_error(&got, 412, "conditionNotMet", failed);
    let got = send(client.get(format!("{url}?ifMetagenerationMatch=5"))).await;
    assert_error(&got, 412, "conditionNotMet", failed);
    let (status, _) = send(client.get(format!("{url}?ifGenerationNotMatch={generation}"))).await;
    assert_eq!(status, 304);
    let (status, _) = send(client.get(format!(
        "{url}?alt=media&ifMetagenerationNotMatch={metageneration}"
    )))
    .await;
    assert_eq!(status, 304);
    let body = client
        .get(format!("{url}?alt=media&ifGenerationMatch={generation}"))
        .send()
        .await
        .expect("get")
        .text()
        .await
        .expect("text");
    assert_eq!(body, "one");

    // Patch bumps the metageneration, guarded by ifMetagenerationMatch.
    let got = send(
        client
            .patch(format!("{url}?ifMetagenerationMatch=2"))
            .json(&json!({"metadata": {"holder": "a"}})),
    )
    .await;
    assert_error(&got, 412, "conditionNotMet", failed);
    let (status, patched) = send(
        client
            .patch(format!("{url}?ifMetagenerationMatch=1"))
            .json(&json!({"metadata": {"holder": "a"}})),
    )
    .await;
    assert_eq!(status, 200, "{patched}");
    assert_eq!(patched["metageneration"], "2");
    assert_eq!(patched["generation"], generation.as_str());
    assert_eq!(patched["metadata"]["holder"], "a");

    // Overwrite with the right generation, then delete guarded by generation.
    let (status, second) = put_object(
        &client,
        &base,
        "state-b",
        "lock",
        "two",
        &format!("&ifGenerationMatch={generation}"),
    )
    .await;
    assert_eq!(status, 200, "{second}");
    let second_generation = second["generation"]
        .as_str()
        .expect("generation")
        .to_string();
    assert!(
        second_generation.parse::<i64>().expect("int") > generation.parse::<i64>().expect("int")
    );
    let got = send(client.delete(format!("{url}?ifGenerationMatch={generation}"))).await;
    assert_error(&got, 412, "conditionNotMet", failed);
    let got = send(client.delete(format!("{url}?ifGenerationNotMatch={second_generation}"))).await;
    assert_error(&got, 412, "conditionNotMet", failed);
    let got = send(client.delete(format!("{url}?ifMetagenerationMatch=3"))).await;
    assert_error(&got, 412, "conditionNotMet", failed);
    let got = send(client.delete(format!("{url}?ifMetagenerationNotMatch=1"))).await;
    assert_error(&got, 412, "conditionNotMet", failed);
    let (status, _) =
        send(client.delete(format!("{url}?ifGenerationMatch={second_generation}"))).await;
    assert_eq!(status, 204);
    let got = send(client.get(url.clone())).await;
    assert_error(&got, 404, "notFound", "No such object: state-b/lock");
    // Without versioning nothing is kept.
    let (_, listing) =
        send(client.get(format!("{base}/storage/v1/b/state-b/o?versions=true"))).await;
    assert!(listing.get("items").is_none(), "{listing}");
}

#[tokio::test]
async fn exactly_one_lock_insert_wins() {
    let handle = start().await;
    let base = handle.base_url().to_string();
    let client = reqwest::Client::new();
    create_bucket(&client, &base, PROJECT, json!({"name": "lock-b"})).await;
    let attempts = (0..8).map(|i| {
        let client = client.clone();
        let base = base.clone();
        async move {
            put_object(
                &client,
                &base,
                "lock-b",
                "tfstate.lock",
                &format!("holder-{i}"),
                "&ifGenerationMatch=0",
            )
            .await
        }
    });
    let results = futures_util::future::join_all(attempts).await;
    let winners: Vec<&(u16, Value)> = results.iter().filter(|r| r.0 == 200).collect();
    assert_eq!(winners.len(), 1, "{results:?}");
    for loser in results.iter().filter(|r| r.0 != 200) {
        assert_error(
            loser,
            412,
            "conditionNotMet",
            "At least one of the pre-conditions you specified did not hold.",
        );
    }
    let holder = client
        .get(format!(
            "{base}/storage/v1/b/lock-b/o/tfstate.lock?alt=media"
        ))
        .send()
        .await
        .expect("get")
        .text()
        .await
        .expect("text");
    assert!(holder.starts_with("holder-"));
}

#[tokio::test]
async fn versioning_keeps_noncurrent_generations() {
    let handle = start().await;
    let base = handle.base_url().to_string();
    let client = reqwest::Client::new();
    create_bucket(
        &client,
        &base,
        PROJECT,
        json!({"name": "ver-b", "versioning": {"enabled": true}}),
    )
    .await;
    let (_, v1) = put_object(&client, &base, "ver-b", "s", "v1", "").await;
    let (_, v2) = put_object(&client, &base, "ver-b", "s", "v2", "").await;
    let g1 = v1["generation"].as_str().expect("g1").to_string();
    let g2 = v2["generation"].as_str().expect("g2").to_string();
    let old = client
        .get(format!(
            "{base}/storage/v1/b/ver-b/o/s?alt=media&generation={g1}"
        ))
        .send()
        .await
        .expect("get")
        .text()
        .await
        .expect("text");
    assert_eq!(old, "v1");
    let (_, noncurrent) =
        send(client.get(format!("{base}/storage/v1/b/ver-b/o/s?generation={g1}"))).await;
    assert!(noncurrent["timeDeleted"].is_string(), "{noncurrent}");
    let (status, _) = send(client.delete(format!("{base}/storage/v1/b/ver-b/o/s"))).await;
    assert_eq!(status, 204);
    let (_, live) = send(client.get(format!("{base}/storage/v1/b/ver-b/o"))).await;
    assert!(live.get("items").is_none(), "{live}");
    let (_, all) = send(client.get(format!("{base}/storage/v1/b/ver-b/o?versions=true"))).await;
    let generations: Vec<&str> = all["items"]
        .as_array()
        .expect("items")
        .iter()
        .filter_map(|i| i["generation"].as_str())
        .collect();
    assert_eq!(generations, vec![g1.as_str(), g2.as_str()]);
    let got = send(client.delete(format!("{base}/storage/v1/b/ver-b"))).await;
    assert_error(
        &got,
        409,
        "conflict",
        "The bucket you tried to delete is not empty.",
    );
    // Listing with a delimiter groups prefixes.
    put_object(&client, &base, "ver-b", "env%2Fa%2Fstate", "a", "").await;
    put_object(&client, &base, "ver-b", "env%2Fb%2Fstate", "b", "").await;
    let (_, grouped) = send(client.get(format!(
        "{base}/storage/v1/b/ver-b/o?prefix=env/&delimiter=/"
    )))
    .await;
    assert_eq!(
        grouped["prefixes"],
        json!(["env/a/", "env/b/"]),
        "{grouped}"
    );
}

#[tokio::test]
async fn scripted_faults_hit_buckets_and_objects() {
    use a3ctl_sim::faults::{FaultAction, FaultConfig, NamedFault, ScriptedFault};
    let handle = start().await;
    handle.set_faults(FaultConfig {
        scripted: vec![
            ScriptedFault {
                kind: "storage.bucket".into(),
                verb: "create".into(),
                nth: 1,
                action: FaultAction::Named(NamedFault::QuotaExceeded),
            },
            ScriptedFault {
                kind: "storage.object".into(),
                verb: "create".into(),
                nth: 2,
                action: FaultAction::Http {
                    status: 503,
                    reason: "backendError".into(),
                    message: "Backend Error".into(),
                },
            },
        ],
        ..FaultConfig::default()
    });
    let base = handle.base_url().to_string();
    let client = reqwest::Client::new();
    let got = create_bucket(&client, &base, PROJECT, json!({"name": "faulty"})).await;
    assert_error(
        &got,
        429,
        "rateLimitExceeded",
        "The project exceeded the rate limit for creating and deleting buckets.",
    );
    let (status, _) = create_bucket(&client, &base, PROJECT, json!({"name": "faulty"})).await;
    assert_eq!(status, 200);
    let (status, _) = put_object(&client, &base, "faulty", "a", "1", "").await;
    assert_eq!(status, 200);
    let got = put_object(&client, &base, "faulty", "b", "2", "").await;
    assert_error(&got, 503, "backendError", "Backend Error");
    let (_, listing) = send(client.get(format!("{base}/storage/v1/b/faulty/o"))).await;
    assert_eq!(
        listing["items"].as_array().map(Vec::len),
        Some(1),
        "{listing}"
    );
}
