//! `a3ctl sandbox serve`: the sandbox's world served in the foreground, so gcloud and kubectl can
//! explore what `--sandbox` commands made. It takes the sandbox's lock (other `--sandbox` commands
//! that start the simulator are refused while it serves), starts the simulator on a stable port,
//! prints the environment for gcloud (also written to `state/sandbox/env.sh`), and on Ctrl-C or
//! SIGTERM saves the world atomically and exits 0.

use super::ExitStatus;
use super::session::{self, SANDBOX_DIR, SERVE_OPERATION};
use crate::cli::{Global, SandboxCommand, ServeArgs};
use crate::ui::Printer;
use crate::ui::diagnostics::Failure;
use std::path::{Path, PathBuf};

pub async fn run(
    global: &Global,
    printer: &Printer,
    command: SandboxCommand,
) -> Result<ExitStatus, Failure> {
    match command {
        SandboxCommand::Serve(args) => serve(global, printer, args).await,
    }
}

/// One cluster of the served world.
struct Served {
    key: String,
    endpoint: String,
    ready: bool,
}

async fn serve(global: &Global, printer: &Printer, args: ServeArgs) -> Result<ExitStatus, Failure> {
    // Signals are caught before anything is announced, so none is missed.
    let mut signals = Signals::new()?;
    let started =
        session::start_sandbox(global.world.as_deref(), args.port, SERVE_OPERATION).await?;
    let (sim, lock) = (started.sim, started.lock);
    // Saved at once: a cluster whose old port was taken serves on a new one, and `a3ctl
    // kubeconfig --sandbox` reads the endpoint from the saved world.
    save(&sim).map_err(|e| {
        Failure::new("Cannot save the sandbox's world")
            .cause(e.to_string())
            .hint("check the permissions of `state/sandbox/`")
    })?;
    let clusters: Vec<Served> = sim.shared.read_world(|world, _| {
        world
            .kube
            .clusters
            .iter()
            .map(|(key, c)| Served {
                key: key.clone(),
                endpoint: c.endpoint.clone(),
                ready: c.ready,
            })
            .collect()
    });
    let project = default_project(&sim, &clusters);
    let gcloud_config = absolute(&Path::new(SANDBOX_DIR).join("gcloud"));
    let env = environment(&sim, project.as_deref(), &gcloud_config);
    let env_file = Path::new(SANDBOX_DIR).join("env.sh");
    let exports: String = env
        .iter()
        .map(|(k, v)| format!("export {k}={}\n", shell_quote(v)))
        .collect();
    write_env_file(&env_file, &exports).map_err(|e| {
        Failure::new(format!("Cannot write `{}`", env_file.display())).cause(e.to_string())
    })?;

    let mut text = format!(
        "# The a3ctl sandbox: the world of `{}`.\n# Google Cloud APIs: {}\n",
        session::sandbox_world_file().display(),
        sim.base_url()
    );
    if clusters.is_empty() {
        text.push_str("# No cluster yet: `a3ctl --sandbox apply BLUEPRINT` makes one (stop this first), or create one with gcloud.\n");
    }
    for c in &clusters {
        text.push_str(&format!(
            "# Kubernetes API of {}: https://{}{}\n",
            c.key,
            c.endpoint,
            if c.ready { "" } else { " (not ready yet)" }
        ));
    }
    text.push_str(&format!(
        "#\n# gcloud: run `source {}` in another shell, or export:\n",
        env_file.display()
    ));
    text.push_str(&exports);
    if project.is_none() {
        text.push_str("# (no default project: the world holds none or several; `export CLOUDSDK_CORE_PROJECT=PROJECT`, the blueprint's `project`, or pass --project to gcloud)\n");
    }
    text.push_str(
        "#\n# kubectl: `a3ctl kubeconfig --sandbox BLUEPRINT` writes a context with the cluster's own token.\n",
    );
    text.push_str("# Serving until Ctrl-C (or SIGTERM); the world is saved then.\n");
    printer.out(&text);

    signals.wait().await;

    // Saved here, to report a failure; stopping the simulator saves once more, the same world.
    let saved = save(&sim);
    sim.shutdown();
    drop(lock);
    saved.map_err(|e| {
        Failure::new("Cannot save the sandbox's world")
            .cause(e.to_string())
            .hint(
                "what was changed while serving is lost; check the permissions of `state/sandbox/`",
            )
    })?;
    printer.info(&format!(
        "Stopped serving; saved the world to `{}`.",
        session::sandbox_world_file().display()
    ));
    Ok(ExitStatus::Success)
}

/// Saves the served world (atomically: a temporary file renamed over the old one).
fn save(sim: &a3ctl_sim::SimHandle) -> Result<(), a3ctl_sim::persist::PersistError> {
    let mut world = sim.shared.world.lock();
    world.saved_at = sim.shared.clock.now();
    a3ctl_sim::persist::save(&session::sandbox_world_file(), &world)
}

/// The project gcloud defaults to: the one project the world's clusters live in, else the one
/// project the world file numbers.
fn default_project(sim: &a3ctl_sim::SimHandle, clusters: &[Served]) -> Option<String> {
    let mut projects: Vec<String> = clusters
        .iter()
        .filter_map(|c| c.key.strip_prefix("projects/"))
        .filter_map(|rest| rest.split('/').next())
        .map(str::to_string)
        .collect();
    if projects.is_empty() {
        projects = sim
            .shared
            .read_world(|w, _| w.project_numbers.keys().cloned().collect::<Vec<String>>());
    }
    projects.dedup();
    match projects.as_slice() {
        [one] => Some(one.clone()),
        _ => None,
    }
}

/// What gcloud needs to use the sandbox: the simulator's endpoints, no credentials, no prompts,
/// its own configuration directory (so the user's gcloud configuration is left alone), and the
/// default project.
fn environment(
    sim: &a3ctl_sim::SimHandle,
    project: Option<&str>,
    gcloud_config: &Path,
) -> Vec<(String, String)> {
    let mut env = sim.gcloud_env();
    env.push((
        "CLOUDSDK_CONFIG".into(),
        gcloud_config.display().to_string(),
    ));
    if let Some(project) = project {
        env.push(("CLOUDSDK_CORE_PROJECT".into(), project.to_string()));
    }
    env
}

/// `value` quoted for a POSIX shell.
fn shell_quote(value: &str) -> String {
    if !value.is_empty()
        && value
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./:=@,+".contains(c))
    {
        return value.to_string();
    }
    format!("'{}'", value.replace('\'', r"'\''"))
}

fn absolute(path: &Path) -> PathBuf {
    std::env::current_dir()
        .map(|dir| dir.join(path))
        .unwrap_or_else(|_| path.to_path_buf())
}

/// Writes the environment file through a temporary file and a rename.
fn write_env_file(path: &Path, text: &str) -> std::io::Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let tmp = path.with_extension(format!("sh.tmp-{}", std::process::id()));
    std::fs::write(&tmp, text)?;
    std::fs::rename(&tmp, path)
}

/// Ctrl-C (SIGINT) and, on Unix, SIGTERM, listened for from the moment this is made: a signal
/// that comes before [`Signals::wait`] is not lost.
struct Signals {
    #[cfg(unix)]
    interrupt: tokio::signal::unix::Signal,
    #[cfg(unix)]
    term: tokio::signal::unix::Signal,
}

impl Signals {
    fn new() -> Result<Signals, Failure> {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{SignalKind, signal};
            let listen = |kind: SignalKind| {
                signal(kind)
                    .map_err(|e| Failure::new("Cannot listen for signals").cause(e.to_string()))
            };
            Ok(Signals {
                interrupt: listen(SignalKind::interrupt())?,
                term: listen(SignalKind::terminate())?,
            })
        }
        #[cfg(not(unix))]
        Ok(Signals {})
    }

    async fn wait(&mut self) {
        #[cfg(unix)]
        {
            tokio::select! {
                _ = self.interrupt.recv() => {}
                _ = self.term.recv() => {}
            }
        }
        #[cfg(not(unix))]
        {
            let _ = tokio::signal::ctrl_c().await;
        }
    }
}
