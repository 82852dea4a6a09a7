//! The `a3ctl state` commands against the simulator's Cloud Storage: create-bucket, a missing
//! bucket, list/show/rm/mv/pull/push with their refusals, the command-line overrides, the KMS key,
//! and a GCS state in the sandbox.

use crate::common;

use a3ctl::state::State;
use common::gcs::{BUCKET, GCS_BP, OBJECT, buckets, gcs_minimal, make_bucket, remote_state};
use common::{Run, TestContext};
use serde_json::{Value, json};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn create_bucket_turns_on_uniform_access_and_versioning_and_is_idempotent() {
    let cx = TestContext::new().await;
    gcs_minimal(&cx, "");
    let first = cx.run(&["state", "create-bucket", GCS_BP]).await.expect(0);
    assert!(
        first
            .stderr
            .contains(&format!("Created bucket `gs://{BUCKET}`")),
        "{}",
        first.stderr
    );
    let all = buckets(&cx);
    assert_eq!(all.len(), 1);
    let bucket = &all[0]["bucket"];
    assert_eq!(bucket["name"], BUCKET);
    assert_eq!(bucket["location"], "US-CENTRAL1");
    assert_eq!(bucket["versioning"]["enabled"], true);
    assert_eq!(
        bucket["iamConfiguration"]["uniformBucketLevelAccess"]["enabled"],
        true
    );
    assert_eq!(
        bucket["iamConfiguration"]["publicAccessPrevention"],
        "enforced"
    );
    assert_eq!(bucket["labels"]["a3ctl-blueprint"], "a3mini");
    let again = cx.run(&["state", "create-bucket", GCS_BP]).await.expect(0);
    assert!(
        again
            .stderr
            .contains("already exists in project `my-project`")
            && again.stderr.contains("versioning on"),
        "{}",
        again.stderr
    );
    assert_eq!(
        buckets(&cx)[0]["bucket"]["metageneration"],
        "1",
        "untouched"
    );

    // A name another project holds is refused, naming why.
    make_bucket(&cx, "someone-elses-bucket", "other-project").await;
    let taken = cx
        .run(&[
            "state",
            "create-bucket",
            GCS_BP,
            "--state-bucket",
            "someone-elses-bucket",
        ])
        .await
        .expect(1);
    assert!(
        taken
            .stderr
            .contains("Bucket name `someone-elses-bucket` is taken by another project"),
        "{}",
        taken.stderr
    );
    // A local state has no bucket to create.
    let local = cx
        .run(&["state", "create-bucket", "blueprints/minimal.toml"])
        .await
        .expect(1);
    assert!(
        local.stderr.contains("kept in a local file"),
        "{}",
        local.stderr
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_bucket_is_named_with_the_command_that_creates_it_and_nothing_is_written() {
    let cx = TestContext::new().await;
    gcs_minimal(&cx, "");
    for args in [
        vec!["apply", GCS_BP, "--auto-approve"],
        vec!["plan", GCS_BP],
        vec!["state", "list", GCS_BP],
    ] {
        let run = cx.run(&args).await.expect(1);
        assert!(
            run.stderr
                .contains(&format!("state bucket `{BUCKET}` does not exist")),
            "{args:?}: {}",
            run.stderr
        );
        assert!(
            run.stderr
                .contains(&format!("a3ctl state create-bucket {GCS_BP}")),
            "{args:?}: {}",
            run.stderr
        );
    }
    assert!(buckets(&cx).is_empty());
    assert!(!cx.path("state").exists(), "no local state either");
    let counts = cx.sim.request_counts();
    assert!(
        counts
            .keys()
            .all(|k| k.contains(" /storage/v1/b/") || k.contains(" /upload/storage/v1/b/")),
        "nothing but the state store was called: {counts:?}"
    );
}

/// `a3ctl ARGS --state-bucket BUCKET` against the minimal blueprint (whose `[state]` is local).
async fn in_bucket(cx: &TestContext, args: &[&str]) -> Run {
    let mut all = args.to_vec();
    all.extend(["blueprints/minimal.toml", "--state-bucket", BUCKET]);
    cx.run(&all).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn state_commands_list_show_move_forget_pull_and_push_with_their_refusals() {
    let cx = TestContext::new().await;
    in_bucket(&cx, &["state", "create-bucket"]).await.expect(0);
    in_bucket(&cx, &["apply", "--auto-approve"]).await.expect(0);
    assert!(
        !cx.path("state").exists(),
        "--state-bucket moved the state to GCS"
    );
    let recorded = remote_state(&cx).await;
    let serial = recorded["serial"].as_u64().unwrap();

    let list = in_bucket(&cx, &["state", "list"]).await.expect(0);
    let addrs: Vec<&str> = list.stdout.lines().collect();
    assert_eq!(
        addrs.len(),
        recorded["resources"].as_object().unwrap().len()
    );
    assert!(addrs.contains(&"network.gpu-1") && addrs.contains(&"cluster.main"));

    let show = in_bucket(&cx, &["state", "show", "network.gpu-8"])
        .await
        .expect(0);
    let shown: Value = serde_json::from_str(&show.stdout).unwrap();
    assert_eq!(shown["address"], "network.gpu-8");
    assert_eq!(shown["kind"], "network");
    let id = shown["id"].as_str().unwrap().to_string();
    let typo = in_bucket(&cx, &["state", "show", "network.gpu-O"])
        .await
        .expect(1);
    assert!(
        typo.stderr.contains("did you mean `network.gpu-1`?"),
        "{}",
        typo.stderr
    );
    let nonsense = in_bucket(&cx, &["state", "show", "gpu-0"]).await.expect(1);
    assert!(nonsense.stderr.contains("is not a resource address"));

    // mv renames the record and what depends on it, under the lock, bumping the serial.
    let moved = in_bucket(&cx, &["state", "mv", "network.gpu-1", "network.renamed"])
        .await
        .expect(0);
    assert!(
        moved
            .stderr
            .contains("Moved `network.gpu-1` to `network.renamed`")
    );
    let after = remote_state(&cx).await;
    assert_eq!(after["serial"].as_u64().unwrap(), serial + 1);
    assert!(after["resources"].get("network.gpu-1").is_none());
    assert!(after["resources"].get("network.renamed").is_some());
    assert!(
        after["resources"]
            .as_object()
            .unwrap()
            .values()
            .any(|r| r["dependencies"]
                .as_array()
                .unwrap()
                .contains(&json!("network.renamed"))),
        "dependencies follow the move"
    );
    let kind = in_bucket(&cx, &["state", "mv", "network.renamed", "subnetwork.x"])
        .await
        .expect(1);
    assert!(
        kind.stderr.contains("a network cannot become a subnetwork"),
        "{}",
        kind.stderr
    );
    let taken = in_bucket(&cx, &["state", "mv", "network.renamed", "network.gpu-2"])
        .await
        .expect(1);
    assert!(
        taken.stderr.contains("is already in state"),
        "{}",
        taken.stderr
    );
    assert!(
        taken.stderr.contains(&format!(
            "`a3ctl --state-bucket {BUCKET} state rm network.gpu-2 blueprints/minimal.toml`"
        )),
        "{}",
        taken.stderr
    );
    in_bucket(&cx, &["state", "mv", "network.renamed", "network.gpu-1"])
        .await
        .expect(0);
    in_bucket(&cx, &["plan", "--detailed-exitcode"])
        .await
        .expect(0);

    // rm forgets: the network stays in the cloud, and the next plan wants to create it.
    let removed = in_bucket(&cx, &["state", "rm", "network.gpu-8"])
        .await
        .expect(0);
    assert!(
        removed
            .stderr
            .contains(&format!("`{id}` still exists in the cloud")),
        "{}",
        removed.stderr
    );
    let network = reqwest::get(format!("{}/compute/v1/{id}", cx.sim.base_url()))
        .await
        .unwrap();
    assert!(
        network.status().is_success(),
        "the network itself is untouched"
    );
    let plan = in_bucket(&cx, &["plan", "--detailed-exitcode"])
        .await
        .expect(2);
    assert!(
        plan.stdout.contains("network.gpu-8 will be created"),
        "{}",
        plan.stdout
    );

    // pull prints the state; push refuses what would lose updates unless forced.
    let pulled = in_bucket(&cx, &["state", "pull"]).await.expect(0);
    let mut state: Value = serde_json::from_str(&pulled.stdout).unwrap();
    assert_eq!(state, remote_state(&cx).await);
    let write = |state: &Value| {
        cx.write("pushed.json", &serde_json::to_string(state).unwrap());
    };
    write(&state);
    let equal = in_bucket(&cx, &["state", "push", "pushed.json"])
        .await
        .expect(1);
    assert!(
        equal.stderr.contains("not newer than serial"),
        "{}",
        equal.stderr
    );
    assert!(equal.stderr.contains("--force"), "{}", equal.stderr);
    state["serial"] = json!(state["serial"].as_u64().unwrap() + 5);
    write(&state);
    in_bucket(&cx, &["state", "push", "pushed.json"])
        .await
        .expect(0);
    assert_eq!(remote_state(&cx).await["serial"], state["serial"]);
    state["lineage"] = json!("another-history");
    state["serial"] = json!(state["serial"].as_u64().unwrap() + 1);
    write(&state);
    let lineage = in_bucket(&cx, &["state", "push", "pushed.json"])
        .await
        .expect(1);
    assert!(
        lineage.stderr.contains("another state history"),
        "{}",
        lineage.stderr
    );
    in_bucket(&cx, &["state", "push", "pushed.json", "--force"])
        .await
        .expect(0);
    assert_eq!(remote_state(&cx).await["lineage"], "another-history");
    state["blueprint"] = json!("someone-else");
    state["serial"] = json!(state["serial"].as_u64().unwrap() + 1);
    write(&state);
    let other = in_bucket(&cx, &["state", "push", "pushed.json"])
        .await
        .expect(1);
    assert!(
        other
            .stderr
            .contains("is the state of blueprint `someone-else`")
    );
    cx.write("garbage.json", "{not json");
    let garbage = in_bucket(&cx, &["state", "push", "garbage.json"])
        .await
        .expect(1);
    assert!(garbage.stderr.contains("is not an a3ctl state"));

    // Overrides that make no sense are refused before any call.
    let before = cx.sim.request_total();
    let prefix = cx
        .run(&["plan", "blueprints/minimal.toml", "--state-prefix", "x"])
        .await
        .expect(1);
    assert!(
        prefix
            .stderr
            .contains("`--state-prefix` applies only to a state kept in GCS")
    );
    let bad = cx
        .run(&[
            "plan",
            "blueprints/minimal.toml",
            "--state-bucket",
            "No_Such!",
        ])
        .await
        .expect(1);
    assert!(
        bad.stderr.contains("is not a bucket name"),
        "{}",
        bad.stderr
    );
    assert_eq!(cx.sim.request_total(), before);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_kms_key_encrypts_the_state_object_and_is_the_new_buckets_default() {
    let cx = TestContext::new().await;
    let key = "projects/my-project/locations/us-central1/keyRings/ring/cryptoKeys/state";
    gcs_minimal(&cx, &format!("kms_key = \"{key}\""));
    // A bucket without a default key: the key must come from the upload itself.
    make_bucket(&cx, BUCKET, "my-project").await;
    let mut state = State::new("a3mini", "lineage-1".into());
    state.serial = 3;
    cx.write("s.json", &serde_json::to_string(&state).unwrap());
    cx.run(&["state", "push", "s.json", GCS_BP]).await.expect(0);
    let objects = buckets(&cx)[0]["objects"].as_array().unwrap().clone();
    // The released lock's generation was deleted for good: only the state is left.
    assert_eq!(objects.len(), 1, "{objects:?}");
    assert_eq!(objects[0]["name"], OBJECT);
    assert_eq!(
        objects[0]["kmsKeyName"],
        format!("{key}/cryptoKeyVersions/1")
    );
    cx.run(&[
        "state",
        "create-bucket",
        GCS_BP,
        "--state-bucket",
        "my-project-other",
    ])
    .await
    .expect(0);
    let created = buckets(&cx)
        .into_iter()
        .find(|b| b["bucket"]["name"] == "my-project-other")
        .unwrap();
    assert_eq!(created["bucket"]["encryption"]["defaultKmsKeyName"], key);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_the_sandbox_a_gcs_state_lives_in_the_simulators_storage() {
    let cx = TestContext::new().await;
    gcs_minimal(&cx, "");
    let sandbox = |args: &[&str]| {
        let mut command = cx.command(args);
        command
            .arg("--sandbox")
            .env("A3CTL_SANDBOX_TIME_SCALE", "0.00001");
        async move {
            let output = command.output().await.unwrap();
            Run {
                code: output.status.code(),
                stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
                stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
            }
        }
    };
    let missing = sandbox(&["apply", GCS_BP, "--auto-approve"])
        .await
        .expect(1);
    assert!(
        missing
            .stderr
            .contains(&format!("a3ctl state create-bucket --sandbox {GCS_BP}")),
        "{}",
        missing.stderr
    );
    sandbox(&["state", "create-bucket", GCS_BP]).await.expect(0);
    sandbox(&["apply", GCS_BP, "--auto-approve"])
        .await
        .expect(0);
    let world = std::fs::read_to_string(cx.path("state/sandbox/world.json")).unwrap();
    assert!(world.contains(BUCKET) && world.contains(OBJECT));
    let files: Vec<String> = std::fs::read_dir(cx.path("state/sandbox"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(files, vec!["world.json"], "no local state file");
    let list = sandbox(&["state", "list", GCS_BP]).await.expect(0);
    assert!(list.stdout.lines().any(|l| l == "network.primary"));
    sandbox(&["plan", GCS_BP, "--detailed-exitcode"])
        .await
        .expect(0);
    assert_eq!(
        cx.sim.request_total(),
        0,
        "the test's own simulator was not used"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn arguments_given_blueprint_first_are_named_with_the_order_that_works() {
    let cx = TestContext::new().await;
    let bp = "blueprints/minimal.toml";
    let show = cx
        .run(&["state", "show", bp, "node_pool.system"])
        .await
        .expect(1);
    assert!(
        show.stderr.contains(
            "`blueprints/minimal.toml` is a file and `node_pool.system` a resource address: `a3ctl state show` takes ADDR BLUEPRINT"
        ),
        "{}",
        show.stderr
    );
    assert!(
        show.stderr
            .contains("run `a3ctl state show node_pool.system blueprints/minimal.toml`"),
        "{}",
        show.stderr
    );
    assert!(!show.stderr.contains("does not exist"), "{}", show.stderr);
    let mv = cx
        .run(&["--sandbox", "state", "mv", bp, "bucket.a", "bucket.b"])
        .await
        .expect(1);
    assert!(
        mv.stderr
            .contains("run `a3ctl --sandbox state mv bucket.a bucket.b blueprints/minimal.toml`"),
        "{}",
        mv.stderr
    );
    // Nothing was read or written in the cloud.
    assert_eq!(common::request_log(&cx).await.len(), 0);
}
