//! What every command that touches the cloud needs, resolved once: the validated blueprint and its
//! graph, where its state lives, the provider (Google Cloud, or the embedded simulator with
//! `--sandbox`), and the executor's options.

use crate::apply::{Backoff, Options};
use crate::blueprint::{self, Blueprint, StateBackend};
use crate::cli::Global;
use crate::cloud::Provider;
use crate::cloud::gcp::{CredentialsMode, Endpoints, GcpConfig, GcpProvider};
use crate::env_vars;
use crate::graph::ResourceGraph;
use crate::plan::planner::{self, Refreshed};
use crate::plan::refresh::{discover, refresh};
use crate::plan::{PLAN_FORMAT, Plan};
use crate::resource::Observed;
use crate::state::State;
use crate::state::store::LocalStore;
use crate::ui::Printer;
use crate::ui::diagnostics::Failure;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// Where the sandbox keeps its world and its states.
pub const SANDBOX_DIR: &str = "state/sandbox";

pub struct Session {
    pub printer: Printer,
    pub blueprint: Blueprint,
    pub blueprint_path: PathBuf,
    pub graph: ResourceGraph,
    pub store: LocalStore,
    pub provider: Arc<dyn Provider>,
    pub options: Options,
    /// The embedded simulator, kept alive for the session (and saved when dropped).
    pub sandbox: Option<a3ctl_sim::SimHandle>,
}

impl Session {
    /// Loads and validates the blueprint, builds its graph and connects the provider.
    pub async fn open(global: &Global, printer: Printer, path: &Path) -> Result<Session, Failure> {
        let blueprint = blueprint::load(path).map_err(|e| Failure::blueprint(&printer, &e))?;
        let graph = ResourceGraph::from_blueprint(&blueprint).map_err(|e| {
            Failure::new(format!(
                "The resource graph of `{}` is invalid",
                path.display()
            ))
            .cause(e.to_string())
        })?;
        let store = state_store(&blueprint, global.sandbox)?;
        let mut options = Options::default();
        let poll_ms = std::env::var(env_vars::POLL_INTERVAL_MS)
            .ok()
            .and_then(|v| v.parse::<u64>().ok());
        let (provider, sandbox): (Arc<dyn Provider>, _) = if global.sandbox {
            let sim = start_sandbox().await?;
            let config = GcpConfig {
                project: blueprint.project.clone(),
                endpoints: Endpoints::simulator(sim.base_url()),
                credentials: CredentialsMode::Anonymous,
                poll: Duration::from_millis(20),
            };
            let provider = GcpProvider::new(config)
                .await
                .map_err(|e| Failure::cloud("Cannot start the sandbox's clients", &e))?;
            set_poll(&mut options, poll_ms.unwrap_or(20));
            (Arc::new(provider), Some(sim))
        } else {
            let config = GcpConfig {
                project: blueprint.project.clone(),
                endpoints: Endpoints::from_env(),
                credentials: CredentialsMode::from_env(),
                poll: Duration::from_millis(poll_ms.unwrap_or(2000)),
            };
            let provider = GcpProvider::new(config)
                .await
                .map_err(|e| Failure::cloud("Cannot create the Google Cloud clients", &e))?;
            if let Some(ms) = poll_ms {
                set_poll(&mut options, ms);
            }
            (Arc::new(provider), None)
        };
        Ok(Session {
            printer,
            blueprint,
            blueprint_path: path.to_path_buf(),
            graph,
            store,
            provider,
            options,
            sandbox,
        })
    }

    /// The recorded state, or a new one (with a fresh lineage) when there is none yet.
    pub fn load_state(&self) -> Result<(State, bool), Failure> {
        match self.store.load() {
            Ok(Some(state)) => {
                if state.blueprint != self.blueprint.name {
                    return Err(Failure::new(format!(
                        "State `{}` belongs to blueprint `{}`, not `{}`",
                        self.store.path().display(),
                        state.blueprint,
                        self.blueprint.name
                    ))
                    .hint("give each blueprint its own `[state] path`"));
                }
                Ok((state, true))
            }
            Ok(None) => Ok((
                State::new(&self.blueprint.name, uuid::Uuid::new_v4().to_string()),
                false,
            )),
            Err(e) => Err(Failure::new(format!(
                "Cannot load state `{}`",
                self.store.path().display()
            ))
            .cause(e.to_string())
            .maybe_hint(e.hint())),
        }
    }

    /// Saves a state changed outside an apply (import, refresh-only): one more serial, written
    /// atomically. The caller holds the lock.
    pub fn save_state(&self, state: &mut State) -> Result<(), Failure> {
        state.serial += 1;
        state.a3ctl_version = env!("CARGO_PKG_VERSION").to_string();
        self.store.save(state).map_err(|e| {
            Failure::new(format!(
                "Cannot save state `{}`",
                self.store.path().display()
            ))
            .cause(e.to_string())
            .maybe_hint(e.hint())
        })
    }

    /// Reads every recorded resource from the cloud.
    pub async fn refresh(&self, state: &State) -> Result<Refreshed, Failure> {
        refresh(self.provider.as_ref(), state, 16)
            .await
            .map_err(|(addr, e)| {
                Failure::cloud(
                    format!("Cannot read `{addr}` ({})", state.resources[&addr].id),
                    &e,
                )
            })
    }

    /// Refreshes every recorded resource and plans the blueprint (or the destruction of
    /// everything) against it.
    pub async fn plan(&self, state: &State, destroy: bool) -> Result<Plan, Failure> {
        self.plan_adopting(state, destroy, false).await
    }

    /// [`Session::plan`]; with `adopt`, every resource the blueprint declares that state does not
    /// record is looked for under its blueprint identity first, and those that exist are adopted
    /// (diffed as if recorded with their live configuration) instead of created.
    pub async fn plan_adopting(
        &self,
        state: &State,
        destroy: bool,
        adopt: bool,
    ) -> Result<Plan, Failure> {
        let mut refreshed = self.refresh(state).await?;
        let adoptions = if adopt && !destroy {
            discover(self.provider.as_ref(), self.graph.resources(), state, 16)
                .await
                .map_err(|(addr, e)| {
                    let id = self
                        .graph
                        .resources()
                        .iter()
                        .find(|d| d.addr == addr)
                        .map(|d| d.id.clone())
                        .unwrap_or_default();
                    Failure::cloud(format!("Cannot look for `{addr}` ({id})"), &e)
                })?
        } else {
            Vec::new()
        };
        let mut with_adopted = state.clone();
        for a in &adoptions {
            with_adopted
                .resources
                .insert(a.addr.clone(), a.record(String::new()));
            refreshed.insert(
                a.addr.clone(),
                Some(Observed {
                    spec: a.spec.clone(),
                    outputs: a.outputs.clone(),
                }),
            );
        }
        let mut plan = planner::plan(self.graph.resources(), &with_adopted, &refreshed, destroy)
            .map_err(|e| Failure::new(e.to_string()).hint(e.hint()))?;
        plan.format = PLAN_FORMAT;
        plan.adoptions = adoptions;
        Ok(plan)
    }
}

fn set_poll(options: &mut Options, ms: u64) {
    let initial = Duration::from_millis(ms.max(1));
    options.poll = Backoff {
        initial,
        max: initial * 15,
        multiplier: 1.5,
    };
    options.retry = Backoff {
        initial,
        max: initial * 30,
        multiplier: 2.0,
    };
}

/// Where a blueprint's state lives.
pub fn state_path(blueprint: &Blueprint, sandbox: bool) -> Result<PathBuf, Failure> {
    state_store(blueprint, sandbox).map(|s| s.path().to_path_buf())
}

/// The state store for a blueprint: its `[state]` path, or its sandbox copy.
fn state_store(blueprint: &Blueprint, sandbox: bool) -> Result<LocalStore, Failure> {
    match &blueprint.state {
        StateBackend::Local { path } => {
            if sandbox {
                let file = path.file_name().map(PathBuf::from).unwrap_or_else(|| format!("{}.a3state.json", blueprint.name).into());
                Ok(LocalStore::new(Path::new(SANDBOX_DIR).join(file)))
            } else {
                Ok(LocalStore::new(path.clone()))
            }
        }
        StateBackend::Gcs { .. } if sandbox => {
            Ok(LocalStore::new(Path::new(SANDBOX_DIR).join(format!("{}.a3state.json", blueprint.name))))
        }
        StateBackend::Gcs { bucket, .. } => Err(Failure::new(format!(
            "The `gcs` state backend (bucket `{bucket}`) is not supported by this version of a3ctl yet"
        ))
        .hint("use `[state] backend = \"local\"` for now")),
    }
}

/// Starts the embedded simulator with its world persisted under `state/sandbox/`.
async fn start_sandbox() -> Result<a3ctl_sim::SimHandle, Failure> {
    let scale = std::env::var(env_vars::SANDBOX_TIME_SCALE)
        .ok()
        .and_then(|v| v.parse::<f64>().ok())
        .filter(|s| *s > 0.0 && s.is_finite())
        .unwrap_or(0.0005);
    let config = a3ctl_sim::SimConfig {
        port: 0,
        persist: Some(Path::new(SANDBOX_DIR).join("world.json")),
        ..a3ctl_sim::SimConfig::realistic(scale)
    };
    a3ctl_sim::start(config).await.map_err(|e| {
        Failure::new("Cannot start the sandbox simulator")
            .cause(e.to_string())
            .hint(format!("the sandbox keeps its world in `{SANDBOX_DIR}/world.json`; move it away to start over"))
    })
}
