//! `a3ctl show PLANFILE` prints a saved plan exactly as `plan` printed it (text and JSON), with
//! the reason of every replacement; `a3ctl output` prints the outputs from state; `validate
//! --json` gives machine-readable diagnostics; a sandbox plan says, and is applied, with
//! `--sandbox`. Refusals exit 1 with a clear message and no mutating request.

use crate::common;

use common::TestContext;
use serde_json::Value;

const BP: &str = "blueprints/minimal.toml";

#[tokio::test]
async fn show_prints_a_saved_plan_as_plan_printed_it() {
    let cx = TestContext::new().await;
    let plan = cx.run(&["plan", BP, "--out", "full.plan"]).await.expect(0);
    let show = cx.run(&["show", "full.plan"]).await.expect(0);
    assert_eq!(show.stdout, plan.stdout);

    let plan = cx
        .run(&["plan", BP, "--json", "--out", "json.plan"])
        .await
        .expect(0);
    let show = cx.run(&["show", "--json", "json.plan"]).await.expect(0);
    assert_eq!(show.stdout, plan.stdout);
    let value: Value = serde_json::from_str(&show.stdout).unwrap();
    assert_eq!(value["partial"], false);

    // A partial plan says so in show too.
    let plan = cx
        .run(&[
            "plan",
            BP,
            "--target",
            "subnetwork.primary",
            "--out",
            "partial.plan",
        ])
        .await
        .expect(0);
    let show = cx.run(&["show", "partial.plan"]).await.expect(0);
    assert_eq!(show.stdout, plan.stdout);
    assert!(
        show.stdout
            .contains("Warning: This plan is partial (--target subnetwork.primary)"),
        "{}",
        show.stdout
    );
    assert_eq!(common::mutations(&cx), 0);
}

#[tokio::test]
async fn show_keeps_the_reason_of_every_replacement() {
    let cx = TestContext::new().await;
    cx.run(&[
        "apply",
        BP,
        "--target",
        "subnetwork.primary",
        "--auto-approve",
    ])
    .await
    .expect(0);

    let plan = cx
        .run(&[
            "plan",
            BP,
            "--target",
            "subnetwork.primary",
            "--replace",
            "subnetwork.primary",
            "--out",
            "replace.plan",
        ])
        .await
        .expect(0);
    let show = cx.run(&["show", "replace.plan"]).await.expect(0);
    assert_eq!(show.stdout, plan.stdout);
    assert!(
        show.stdout
            .contains("# (because replacement requested with --replace)"),
        "{}",
        show.stdout
    );
    let json = cx.run(&["show", "--json", "replace.plan"]).await.expect(0);
    let value: Value = serde_json::from_str(&json.stdout).unwrap();
    let change = value["resource_changes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["address"] == "subnetwork.primary")
        .unwrap()
        .clone();
    assert_eq!(change["action"], "replace");
    assert_eq!(change["reason"], "replacement requested with --replace");

    // A field that forces the replacement is named.
    let text = std::fs::read_to_string(cx.path(BP)).unwrap()
        + "\n[network]\nprimary_subnet = \"10.16.0.0/20\"\n";
    cx.write("blueprints/moved.toml", &text);
    cx.run(&[
        "plan",
        "blueprints/moved.toml",
        "--target",
        "subnetwork.primary",
        "--out",
        "moved.plan",
    ])
    .await
    .expect(0);
    let show = cx.run(&["show", "moved.plan"]).await.expect(0);
    assert!(
        show.stdout
            .contains("# subnetwork.primary must be replaced"),
        "{}",
        show.stdout
    );
    assert!(
        show.stdout
            .contains("ip_cidr_range = \"10.0.0.0/20\" -> \"10.16.0.0/20\" # forces replacement"),
        "{}",
        show.stdout
    );
    assert_eq!(
        cx.run(&["state", "list", BP]).await.expect(0).stdout,
        "network.primary\nsubnetwork.primary\n"
    );
}

#[tokio::test]
async fn show_refuses_what_is_not_a_plan_file_and_reads_older_formats() {
    let cx = TestContext::new().await;
    let run = cx.run(&["show", BP]).await.expect(1);
    assert!(
        run.stderr
            .contains("error: `blueprints/minimal.toml` is not an a3ctl plan file"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("a3ctl plan BLUEPRINT --out FILE"),
        "{}",
        run.stderr
    );
    cx.write("other.json", "{\"hello\": 1}");
    let run = cx.run(&["show", "other.json"]).await.expect(1);
    assert!(
        run.stderr
            .contains("`other.json` is not an a3ctl plan file"),
        "{}",
        run.stderr
    );
    let run = cx.run(&["show", "missing.plan"]).await.expect(1);
    assert!(run.stderr.contains("missing.plan"), "{}", run.stderr);

    // A plan file of format 2 (before partial plans, when GPU NIC addresses counted from 0) is
    // still shown, with its addresses as they are counted now.
    let plan = cx.run(&["plan", BP, "--out", "new.plan"]).await.expect(0);
    let mut file: Value =
        serde_json::from_str(&std::fs::read_to_string(cx.path("new.plan")).unwrap()).unwrap();
    assert_eq!(file["format"], 3);
    file["format"] = 2.into();
    fn count_from_zero(value: &mut Value) {
        match value {
            Value::String(text) => {
                for (prefix, suffix) in [
                    ("network.gpu-", ""),
                    ("subnetwork.gpu-", ""),
                    ("firewall.gpu-", "-internal"),
                ] {
                    let n = text
                        .strip_prefix(prefix)
                        .and_then(|rest| rest.strip_suffix(suffix))
                        .and_then(|n| n.parse::<usize>().ok());
                    if let Some(n) = n {
                        *text = format!("{prefix}{}{suffix}", n - 1);
                        return;
                    }
                }
            }
            Value::Array(items) => items.iter_mut().for_each(count_from_zero),
            Value::Object(map) => map.values_mut().for_each(count_from_zero),
            _ => {}
        }
    }
    count_from_zero(&mut file);
    assert!(file.to_string().contains("\"network.gpu-0\""));
    cx.write("old.plan", &file.to_string());
    let show = cx.run(&["show", "old.plan"]).await.expect(0);
    assert_eq!(show.stdout, plan.stdout);
    // So is the format-1 plan file the compatibility fixtures keep (tests/it/compat.rs).
    let fixture = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/it/fixtures/format1/grow.plan.json");
    let show = cx.run(&["show", fixture.to_str().unwrap()]).await.expect(0);
    assert!(
        show.stdout
            .contains("Plan: 0 to add, 2 to change, 0 to destroy."),
        "{}",
        show.stdout
    );
    // One from a newer a3ctl is refused.
    file["format"] = 99.into();
    cx.write("newer.plan", &file.to_string());
    let run = cx.run(&["show", "newer.plan"]).await.expect(1);
    assert!(
        run.stderr.contains("written by a newer a3ctl"),
        "{}",
        run.stderr
    );
    assert_eq!(common::mutations(&cx), 0);
}

#[tokio::test]
async fn output_prints_the_outputs_from_state() {
    let cx = TestContext::new().await;
    let run = cx.run(&["output", BP]).await.expect(1);
    assert!(run.stderr.contains("run apply first"), "{}", run.stderr);
    assert!(
        run.stderr.contains("`a3ctl apply blueprints/minimal.toml`"),
        "{}",
        run.stderr
    );
    assert_eq!(run.stdout, "");

    cx.run(&[
        "apply",
        BP,
        "--target",
        "subnetwork.primary",
        "--auto-approve",
    ])
    .await
    .expect(0);
    let before = cx.sim.request_total();
    let run = cx.run(&["output", BP, "kueue_queue"]).await.expect(0);
    assert_eq!(run.stdout, "a3-queue\n");
    let run = cx.run(&["output", BP, "gpu_networks"]).await.expect(0);
    assert_eq!(
        run.stdout,
        "vpc1\nvpc2\nvpc3\nvpc4\nvpc5\nvpc6\nvpc7\nvpc8\n"
    );
    let run = cx
        .run(&["output", BP, "gpu_networks", "--json"])
        .await
        .expect(0);
    assert_eq!(
        run.stdout,
        "[\"vpc1\",\"vpc2\",\"vpc3\",\"vpc4\",\"vpc5\",\"vpc6\",\"vpc7\",\"vpc8\"]\n"
    );
    let run = cx.run(&["output", BP, "--json"]).await.expect(0);
    let all: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(all["cluster_name"], "a3mini");
    assert_eq!(all["kueue_namespace"], "default");
    assert_eq!(
        all["pod_annotations"]["networking.gke.io/default-interface"],
        "eth0"
    );
    let run = cx.run(&["output", BP]).await.expect(0);
    assert!(
        run.stdout.contains("kueue_queue = \"a3-queue\"\n"),
        "{}",
        run.stdout
    );

    let run = cx.run(&["output", BP, "kueue_queu"]).await.expect(1);
    assert!(
        run.stderr.contains(
            "No output `kueue_queu`; the outputs are: cluster_name, gpu_networks, pod_annotations, kueue_queue, kueue_namespace, volume_claims"
        ),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("did you mean `kueue_queue`?"),
        "{}",
        run.stderr
    );
    assert_eq!(run.stdout, "");
    // No cloud call.
    assert_eq!(cx.sim.request_total(), before);
    assert!(all.get("cluster_endpoint").is_none(), "{all}");

    // Once the cluster exists, its endpoint comes from its record in state.
    cx.run(&["apply", BP, "--auto-approve"]).await.expect(0);
    let state: Value = serde_json::from_str(
        &cx.run(&["state", "show", "cluster.main", BP])
            .await
            .expect(0)
            .stdout,
    )
    .unwrap();
    let endpoint = state["outputs"]["endpoint"].as_str().unwrap().to_string();
    assert!(!endpoint.is_empty());
    let before = cx.sim.request_total();
    let run = cx.run(&["output", BP, "cluster_endpoint"]).await.expect(0);
    assert_eq!(run.stdout, format!("{endpoint}\n"));
    assert_eq!(cx.sim.request_total(), before);
}

#[tokio::test]
async fn validate_json_gives_diagnostics_and_the_summary() {
    let cx = TestContext::new().await;
    let run = cx.run(&["validate", "--json", BP]).await.expect(0);
    let value: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(value["valid"], true);
    assert_eq!(value["deployment"], "a3mini");
    assert_eq!(value["summary"]["gpu_nodes"], 1);
    assert_eq!(value["summary"]["gpus"], 8);
    // The minimal blueprint names no authorized networks: valid, with that warning located.
    let diagnostics = value["diagnostics"].as_array().unwrap();
    assert_eq!(diagnostics.len(), 1, "{diagnostics:?}");
    assert_eq!(diagnostics[0]["severity"], "warning");
    assert_eq!(diagnostics[0]["file"], BP);
    assert!(
        diagnostics[0]["message"]
            .as_str()
            .unwrap()
            .starts_with("The control plane is open to every address"),
        "{diagnostics:?}"
    );
    assert!(diagnostics[0]["line"].as_u64().is_some());
    let shipped = cx
        .run(&["--sandbox", "validate", "--json", "blueprints/a3-mega.toml"])
        .await
        .expect(0);
    let shipped: Value = serde_json::from_str(&shipped.stdout).unwrap();
    assert_eq!(shipped["diagnostics"], serde_json::json!([]));
    // Outside the sandbox its example office range (RFC 5737) is the one warning.
    let real = cx
        .run(&["validate", "--json", "blueprints/a3-mega.toml"])
        .await
        .expect(0);
    let real: Value = serde_json::from_str(&real.stdout).unwrap();
    let diagnostics = real["diagnostics"].as_array().unwrap();
    assert_eq!(diagnostics.len(), 1, "{diagnostics:?}");
    assert!(
        diagnostics[0]["message"]
            .as_str()
            .unwrap()
            .contains("RFC 5737"),
        "{diagnostics:?}"
    );

    cx.write(
        "bad.toml",
        "name = \"a3mini\"\nproject = \"my-project\"\nregion = \"us-central1\"\nzone = \"us-central1-a\"\n\n[[gpu_pool]]\nmachine_type = \"a3-megagpu-8g\"\nnodse = 1\n",
    );
    let run = cx.run(&["validate", "--json", "bad.toml"]).await.expect(1);
    let value: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(value["valid"], false);
    let diagnostics = value["diagnostics"].as_array().unwrap();
    let typo = diagnostics
        .iter()
        .find(|d| d["message"].as_str().unwrap_or("").contains("nodse"))
        .unwrap_or_else(|| panic!("no diagnostic for `nodse`: {value}"));
    assert_eq!(typo["severity"], "error");
    assert_eq!(typo["file"], "bad.toml");
    assert_eq!(typo["line"], 8);
    assert_eq!(typo["column"], 1);
    assert!(
        typo["hint"].as_str().unwrap_or("").contains("nodes"),
        "{typo}"
    );

    let run = cx
        .run(&["validate", "--json", "nothing.toml"])
        .await
        .expect(1);
    let value: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(value["valid"], false);
    assert_eq!(value["diagnostics"][0]["line"], Value::Null);
    assert_eq!(value["diagnostics"][0]["file"], "nothing.toml");
}

#[tokio::test]
async fn a_sandbox_plan_is_applied_with_sandbox_and_a_real_one_without() {
    let cx = TestContext::new().await;
    let plan = cx
        .run(&["plan", "--sandbox", BP, "--out", "sandbox.plan"])
        .await
        .expect(0);
    assert!(
        plan.stderr.contains("a3ctl --sandbox apply sandbox.plan"),
        "{}",
        plan.stderr
    );
    let run = cx.run(&["apply", "sandbox.plan"]).await.expect(1);
    assert!(
        run.stderr.contains(
            "The saved plan `sandbox.plan` was made against the sandbox (--sandbox), not Google Cloud"
        ),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr
            .contains("apply it in the sandbox: `a3ctl --sandbox apply sandbox.plan`"),
        "{}",
        run.stderr
    );

    cx.run(&["plan", BP, "--out", "real.plan"]).await.expect(0);
    let run = cx.run(&["apply", "--sandbox", "real.plan"]).await.expect(1);
    assert!(
        run.stderr
            .contains("The saved plan `real.plan` was made against Google Cloud, not the sandbox"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("`a3ctl apply real.plan`"),
        "{}",
        run.stderr
    );
    assert_eq!(common::mutations(&cx), 0);
}
