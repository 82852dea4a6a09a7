//! `a3ctl kubeconfig` end to end: after an apply, the entry is merged into an existing file
//! (keeping an unrelated context), carries no token, is private, and lets kubectl reach the
//! simulated cluster through a stub `gke-gcloud-auth-plugin`; a cluster only the sandbox applied
//! is pointed out, with `--sandbox` as the fix. (`kubeconfig --sandbox`: `sandbox_serve`.)

use crate::common;

use common::TestContext;
use serde_json::Value;
use std::os::unix::fs::PermissionsExt;

const HIGH: &str = "blueprints/a3-high.toml";
const NAME: &str = "gke_my-project_us-central1_a3high";

const EXISTING: &str = "apiVersion: v1\nkind: Config\nclusters:\n- name: dev\n  cluster:\n    server: https://dev.example:6443\nusers:\n- name: dev\n  user:\n    username: me\ncontexts:\n- name: dev\n  context:\n    cluster: dev\n    user: dev\n    namespace: team\ncurrent-context: dev\n";

fn parse(path: &std::path::Path) -> Value {
    serde_saphyr::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_entry_is_merged_private_tokenless_and_kubectl_reaches_the_cluster_through_the_plugin()
{
    let cx = TestContext::new().await;
    // Before any apply: nothing to write.
    let run = cx
        .run(&["kubeconfig", HIGH, "--file", "kc"])
        .await
        .expect(1);
    assert!(
        run.stderr
            .contains("error: Cluster `a3high` is not in state"),
        "{}",
        run.stderr
    );
    assert!(!cx.path("kc").exists());

    cx.run(&["apply", HIGH, "--auto-approve"]).await.expect(0);
    std::fs::create_dir_all(cx.path("kube")).unwrap();
    let file = cx.write("kube/config", EXISTING);
    let before = cx.sim.request_total();
    let run = cx
        .run(&["kubeconfig", HIGH, "--file", "kube/config"])
        .await
        .expect(0);
    assert_eq!(cx.sim.request_total(), before, "no cloud call");
    assert!(
        run.stderr
            .contains(&format!("Wrote context `{NAME}` to `kube/config`")),
        "{}",
        run.stderr
    );
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(!text.contains("token"), "{text}");
    let config = parse(&file);
    assert_eq!(config["current-context"], NAME);
    let contexts = config["contexts"].as_array().unwrap();
    assert_eq!(contexts.len(), 2);
    assert_eq!(contexts[0]["context"]["namespace"], "team");
    assert_eq!(contexts[1]["context"]["cluster"], NAME);
    let cluster = &config["clusters"][1]["cluster"];
    assert!(
        cluster["server"]
            .as_str()
            .unwrap()
            .starts_with("https://127.0.0.1:")
    );
    let state: Value =
        serde_json::from_slice(&std::fs::read(cx.path("state/a3high.a3state.json")).unwrap())
            .unwrap();
    let outputs = &state["resources"]["cluster.main"]["outputs"];
    assert_eq!(
        cluster["certificate-authority-data"],
        outputs["ca_certificate"]
    );
    assert_eq!(
        cluster["server"],
        format!("https://{}", outputs["endpoint"].as_str().unwrap())
    );
    let exec = &config["users"][1]["user"]["exec"];
    assert_eq!(exec["apiVersion"], "client.authentication.k8s.io/v1beta1");
    assert_eq!(exec["command"], "gke-gcloud-auth-plugin");
    assert_eq!(exec["provideClusterInfo"], true);
    assert!(
        exec["installHint"]
            .as_str()
            .unwrap()
            .contains("gcloud components install")
    );
    let mode = std::fs::metadata(&file).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600);
    // Again: same file, nothing duplicated.
    cx.run(&["kubeconfig", HIGH, "--file", "kube/config"])
        .await
        .expect(0);
    assert_eq!(std::fs::read_to_string(&file).unwrap(), text);

    // kubectl through the exec plugin (a stub printing an ExecCredential).
    let bin = cx.path("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let plugin = bin.join("gke-gcloud-auth-plugin");
    std::fs::write(
        &plugin,
        "#!/bin/sh\necho '{\"kind\":\"ExecCredential\",\"apiVersion\":\"client.authentication.k8s.io/v1beta1\",\"status\":{\"token\":\"stub-token\"}}'\n",
    )
    .unwrap();
    std::fs::set_permissions(&plugin, std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let out = tokio::process::Command::new("kubectl")
        .args([
            "--kubeconfig",
            file.to_str().unwrap(),
            "get",
            "nodes",
            "-o",
            "json",
        ])
        .env_clear()
        .env("PATH", path)
        .env("HOME", cx.path("."))
        .output()
        .await
        .expect("kubectl is installed");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let nodes: Value = serde_json::from_str(&stdout).unwrap();
    // 2 system nodes and 4 GPU nodes.
    assert_eq!(nodes["items"].as_array().unwrap().len(), 6);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_file_the_first_kubeconfig_path_is_written() {
    let cx = TestContext::new().await;
    cx.run(&["apply", HIGH, "--auto-approve"]).await.expect(0);
    let first = cx.path("first/config");
    let second = cx.path("second/config");
    let out = cx
        .command(&["kubeconfig", HIGH])
        .env(
            "KUBECONFIG",
            format!("{}:{}", first.display(), second.display()),
        )
        .output()
        .await
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(parse(&first)["current-context"], NAME);
    assert!(!second.exists());
    // A file that is not a kubeconfig is refused and left alone.
    std::fs::write(&first, "- not\n- a mapping\n").unwrap();
    let run = cx
        .run(&["kubeconfig", HIGH, "--file", "first/config"])
        .await
        .expect(1);
    assert!(
        run.stderr
            .contains("error: `first/config` is not a kubeconfig file"),
        "{}",
        run.stderr
    );
    assert_eq!(
        std::fs::read_to_string(&first).unwrap(),
        "- not\n- a mapping\n"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_sandbox_a_cluster_only_the_sandbox_has_is_pointed_out() {
    let cx = TestContext::new().await;
    let mut apply = cx.command(&["apply", "--sandbox", HIGH, "--auto-approve"]);
    apply.env("A3CTL_SANDBOX_TIME_SCALE", "0.00001");
    let out = apply.output().await.unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let run = cx
        .run(&["kubeconfig", HIGH, "--file", "kc"])
        .await
        .expect(1);
    assert!(
        run.stderr.contains(
            "error: Cluster `a3high` is not in state `state/a3high.a3state.json`, but the sandbox's state records it"
        ),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains(&format!(
            "add --sandbox: `a3ctl kubeconfig --sandbox {HIGH}`"
        )),
        "{}",
        run.stderr
    );
    assert!(!cx.path("kc").exists());
}
