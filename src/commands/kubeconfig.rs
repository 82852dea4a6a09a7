//! `a3ctl kubeconfig`: add the blueprint's cluster to a kubeconfig file the way `gcloud container
//! clusters get-credentials` does: cluster, user and context named `gke_<project>_<location>_<name>`,
//! the endpoint and CA from state, credentials from the `gke-gcloud-auth-plugin` exec plugin (no
//! token is ever written), and the context made current. Reads state only: no cloud call.
//!
//! With `--sandbox`, the entries are named `a3ctl-sandbox_<project>_<location>_<name>` (a real
//! cluster's entry is left alone) and hold what plain kubectl needs to reach the simulated
//! cluster, taken from the sandbox's saved world: its endpoint, its CA, and its static bearer
//! token (`a3ctl_sim::kube::auth`), written to the kubeconfig file only. The cluster answers while
//! `a3ctl sandbox serve` runs.

use super::ExitStatus;
use super::session;
use crate::cli::{Global, KubeconfigArgs};
use crate::ui::Printer;
use crate::ui::diagnostics::Failure;
use base64::Engine as _;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

/// The exec credential plugin GKE clusters authenticate through.
pub const AUTH_PLUGIN: &str = "gke-gcloud-auth-plugin";

pub async fn run(
    global: &Global,
    printer: &Printer,
    args: KubeconfigArgs,
) -> Result<ExitStatus, Failure> {
    let bp =
        crate::blueprint::load(&args.blueprint).map_err(|e| Failure::blueprint(printer, &e))?;
    let (state, location) = session::recorded_state(global, &bp, &args.blueprint).await?;
    let recorded = session::recorded_cluster(state.as_ref(), &bp, &location);
    let (endpoint, ca) = match recorded {
        Ok(found) => found,
        Err(_) if !global.sandbox && in_sandbox_state(global, &bp) => {
            return Err(Failure::new(format!(
                "Cluster `{}` is not in state `{location}`, but the sandbox's state records it",
                bp.name
            ))
            .cause("it was applied with --sandbox, against the built-in simulator")
            .hint(format!(
                "add --sandbox: `a3ctl kubeconfig --sandbox {}`",
                args.blueprint.display()
            )));
        }
        Err(failure) => return Err(failure),
    };
    let (name, endpoint, ca, user) = if global.sandbox {
        let id = state
            .as_ref()
            .and_then(|s| s.resources.get(&crate::graph::build::addr::cluster()))
            .map(|r| r.id.clone())
            .unwrap_or_default();
        let access = sandbox_access(&id, &args.blueprint)?;
        let ca = base64::engine::general_purpose::STANDARD.encode(access.ca_pem.as_bytes());
        (
            sandbox_entry_name(&bp.project, &bp.region, &bp.name),
            access.endpoint,
            ca,
            json!({"token": access.token}),
        )
    } else {
        (
            entry_name(&bp.project, &bp.region, &bp.name),
            endpoint,
            ca,
            plugin_user(),
        )
    };
    let path = match &args.file {
        Some(path) => path.clone(),
        None => default_path().ok_or_else(|| {
            Failure::new(
                "Cannot tell where the kubeconfig file is: neither KUBECONFIG nor HOME is set",
            )
            .hint("name the file with `--file PATH`")
        })?,
    };
    let existing = match crate::files::read_to_string(&path, crate::files::KUBECONFIG) {
        Ok(text) => parse(&text).map_err(|why| {
            Failure::new(format!("`{}` is not a kubeconfig file", path.display()))
                .cause(why)
                .hint("fix or move the file, or write to another one with `--file PATH`")
        })?,
        Err(e) if e.is_not_found() => json!({}),
        Err(e) => return Err(Failure::file(&e)),
    };
    let merged = merge(existing, &name, &endpoint, &ca, user);
    let text = serde_saphyr::to_string(&merged)
        .map_err(|e| Failure::new("Cannot encode the kubeconfig").cause(e.to_string()))?;
    write_atomically(&path, text.as_bytes()).map_err(|e| {
        Failure::new(format!("Cannot write `{}`", path.display()))
            .cause(e.to_string())
            .hint("check the permissions of the file and its directory, or use `--file PATH`")
    })?;
    if global.sandbox {
        printer.info(&format!(
            "Wrote context `{name}` to `{}` and made it the current context.\n\
             kubectl authenticates with the sandbox cluster's own token, kept in that file only.\n\
             The sandbox's cluster answers while `a3ctl sandbox serve` runs (start it in another shell).",
            path.display()
        ));
    } else {
        printer.info(&format!(
            "Wrote context `{name}` to `{}` and made it the current context.\n\
             kubectl authenticates through `{AUTH_PLUGIN}` (install it with `gcloud components install {AUTH_PLUGIN}`).",
            path.display()
        ));
    }
    Ok(ExitStatus::Success)
}

/// Whether the sandbox's local state records the blueprint's cluster (read without starting the
/// simulator; a state the blueprint keeps in GCS is not looked for).
fn in_sandbox_state(global: &Global, bp: &crate::blueprint::Blueprint) -> bool {
    let Ok(crate::blueprint::StateBackend::Local { path }) = session::backend(global, bp) else {
        return false;
    };
    let Some(file) = path.file_name() else {
        return false;
    };
    let store = crate::state::store::LocalStore::new(Path::new(session::SANDBOX_DIR).join(file));
    matches!(
        store.load(),
        Ok(Some(state)) if state.resources.contains_key(&crate::graph::build::addr::cluster())
    )
}

/// The endpoint, CA and token of the sandbox's cluster `id` (`projects/P/locations/L/clusters/C`),
/// from the sandbox's saved world.
fn sandbox_access(id: &str, blueprint: &Path) -> Result<a3ctl_sim::kube::auth::Access, Failure> {
    let world = session::sandbox_world_file();
    match a3ctl_sim::kube::auth::access_from_file(&world, id) {
        Ok(Some(access)) => Ok(access),
        Ok(None) => Err(Failure::new(format!(
            "The sandbox's world has no cluster `{id}`, though its state records one"
        ))
        .cause(format!(
            "`{}` lacks it: it was deleted outside a3ctl, or the world was moved away",
            world.display()
        ))
        .hint(format!(
            "run `a3ctl --sandbox apply {}` to make it again",
            blueprint.display()
        ))),
        Err(why) => Err(Failure::new("Cannot read the sandbox's world").cause(why)),
    }
}

/// The sandbox's name for a cluster's entries, apart from the real cluster's.
pub fn sandbox_entry_name(project: &str, location: &str, cluster: &str) -> String {
    format!("a3ctl-sandbox_{project}_{location}_{cluster}")
}

/// A user authenticating through `gke-gcloud-auth-plugin`, as gcloud writes it.
fn plugin_user() -> Value {
    json!({"exec": {
        "apiVersion": "client.authentication.k8s.io/v1beta1",
        "command": AUTH_PLUGIN,
        "provideClusterInfo": true,
        "interactiveMode": "IfAvailable",
        "installHint": format!(
            "{AUTH_PLUGIN} is needed to reach GKE clusters: install it with `gcloud components install {AUTH_PLUGIN}` (or your package manager's google-cloud-cli-gke-gcloud-auth-plugin)"
        ),
    }})
}

/// gcloud's name for a cluster's entries.
pub fn entry_name(project: &str, location: &str, cluster: &str) -> String {
    format!("gke_{project}_{location}_{cluster}")
}

/// The first path of `$KUBECONFIG`, else `~/.kube/config`.
fn default_path() -> Option<PathBuf> {
    let first = std::env::var_os("KUBECONFIG")
        .and_then(|list| std::env::split_paths(&list).find(|p| !p.as_os_str().is_empty()));
    if first.is_some() {
        return first;
    }
    std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(|home| Path::new(&home).join(".kube").join("config"))
}

/// A kubeconfig file's content (an empty file is an empty config).
pub fn parse(text: &str) -> Result<Value, String> {
    if text.trim().is_empty() {
        return Ok(json!({}));
    }
    match serde_saphyr::from_str::<Value>(text) {
        Ok(Value::Object(map)) => Ok(Value::Object(map)),
        Ok(Value::Null) => Ok(json!({})),
        Ok(_) => Err("its top level is not a mapping".into()),
        Err(e) => Err(e.to_string()),
    }
}

/// `config` with the cluster, user (authenticating as `user` says) and context `name` added or
/// replaced and made current; every other entry and field is kept as it was.
pub fn merge(mut config: Value, name: &str, endpoint: &str, ca: &str, user: Value) -> Value {
    if !config.is_object() {
        config = json!({});
    }
    config["apiVersion"] = json!("v1");
    config["kind"] = json!("Config");
    upsert(
        &mut config,
        "clusters",
        json!({"name": name, "cluster": {
            "server": format!("https://{endpoint}"),
            "certificate-authority-data": ca.trim(),
        }}),
    );
    upsert(&mut config, "users", json!({"name": name, "user": user}));
    upsert(
        &mut config,
        "contexts",
        json!({"name": name, "context": {"cluster": name, "user": name}}),
    );
    config["current-context"] = json!(name);
    config
}

/// Replaces the entry of `list` named like `entry`, or appends it.
fn upsert(config: &mut Value, list: &str, entry: Value) {
    if !config[list].is_array() {
        config[list] = json!([]);
    }
    if let Some(items) = config[list].as_array_mut() {
        match items.iter_mut().find(|i| i["name"] == entry["name"]) {
            Some(slot) => *slot = entry,
            None => items.push(entry),
        }
    }
}

/// Writes `bytes` to a private temporary file beside `path`, then renames it over `path`.
fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    std::fs::create_dir_all(&dir)?;
    let file_name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        // A path without a file name still gets a unique temporary name from the pid.
        .unwrap_or_default();
    let tmp = dir.join(format!(".{file_name}.a3ctl-{}", std::process::id()));
    let result =
        crate::state::lock::write_private(&tmp, bytes).and_then(|()| std::fs::rename(&tmp, path));
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merging_adds_the_entries_keeps_others_and_replaces_its_own() {
        let existing = parse(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: other\n  cluster:\n    server: https://1.2.3.4\nusers:\n- name: other\n  user:\n    token: keep-me\ncontexts:\n- name: other\n  context:\n    cluster: other\n    user: other\ncurrent-context: other\npreferences: {}\n",
        )
        .unwrap();
        let name = entry_name("p", "us-central1", "c");
        assert_eq!(name, "gke_p_us-central1_c");
        let once = merge(existing, &name, "10.0.0.2:443", "Q0E=\n", plugin_user());
        let twice = merge(once.clone(), &name, "10.0.0.2:443", "Q0E=", plugin_user());
        assert_eq!(once, twice, "merging again changes nothing");
        assert_eq!(twice["current-context"], name);
        assert_eq!(twice["clusters"].as_array().unwrap().len(), 2);
        assert_eq!(twice["users"][0]["user"]["token"], "keep-me");
        assert_eq!(
            twice["clusters"][1]["cluster"]["server"],
            "https://10.0.0.2:443"
        );
        assert_eq!(
            twice["clusters"][1]["cluster"]["certificate-authority-data"],
            "Q0E="
        );
        let exec = &twice["users"][1]["user"]["exec"];
        assert_eq!(exec["command"], AUTH_PLUGIN);
        assert_eq!(exec["provideClusterInfo"], true);
        assert!(twice["users"][1]["user"].get("token").is_none());
        assert_eq!(twice["preferences"], json!({}));
    }

    #[test]
    fn empty_and_broken_files() {
        assert_eq!(parse("").unwrap(), json!({}));
        assert_eq!(parse("# nothing\n").unwrap(), json!({}));
        assert!(parse("- a\n- b\n").is_err());
        assert!(parse("clusters: [\n").is_err());
    }
}
