//! What every command that touches the cloud needs, resolved once: the validated blueprint and its
//! graph, where its state lives, the provider (Google Cloud, or the embedded simulator with
//! `--sandbox`), and the executor's options.

use crate::apply::{Backoff, Options};
use crate::blueprint::{self, Blueprint, StateBackend, names};
use crate::cli::Global;
use crate::cloud::Provider;
use crate::cloud::gcp::storage::StorageClient;
use crate::cloud::gcp::{CredentialsMode, Endpoints, GcpConfig, GcpProvider};
use crate::env_vars;
use crate::graph::ResourceGraph;
use crate::plan::planner::{self, Refreshed};
use crate::plan::preflight;
use crate::plan::refresh::{discover, existing, refresh};
use crate::plan::{Existing, PLAN_FORMAT, Plan};
use crate::resource::kinds::from_spec;
use crate::resource::kinds::node_pool::NodePoolSpec;
use crate::resource::{Desired, Kind, Observed};
use crate::state::State;
use crate::state::backend::StateStore;
use crate::state::gcs::{GcsLocation, GcsStore};
use crate::state::lock::{LocalLock, LockError, LockInfo};
use crate::state::store::{LocalStore, StoreError};
use crate::ui::Printer;
use crate::ui::diagnostics::Failure;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// Day-two settings a3ctl learned to manage after a deployment was applied (the cluster's
/// maintenance policy, the pools' upgrade strategies) stay as they are in the cloud until the
/// blueprint declares them: their records hold no value for them, and the defaults would
/// otherwise change a running cluster the user did not ask to change.
pub fn leave_unmanaged(blueprint: &mut Blueprint, state: &State) {
    use crate::resource::Addr;
    let cluster = Addr::new(Kind::Cluster, "main");
    if !blueprint
        .cluster
        .maintenance
        .as_ref()
        .is_some_and(|m| m.declared)
        && state.predates(&cluster, "maintenance_policy")
    {
        blueprint.cluster.maintenance = None;
    }
    let pool = Addr::new(Kind::NodePool, blueprint.system_pool.name.clone());
    if !blueprint
        .system_pool
        .upgrade
        .as_ref()
        .is_some_and(|u| u.declared)
        && state.predates(&pool, "upgrade_settings")
    {
        blueprint.system_pool.upgrade = None;
    }
    for gpu in &mut blueprint.gpu_pools {
        let pool = Addr::new(Kind::NodePool, gpu.name.clone());
        if !gpu.upgrade.as_ref().is_some_and(|u| u.declared)
            && state.predates(&pool, "upgrade_settings")
        {
            gpu.upgrade = None;
        }
    }
}

/// The day-two fields of `addr` whose desired value is a3ctl's default rather than the
/// blueprint's (`[cluster.maintenance]`, a pool's `upgrade` table not declared). A cluster or pool
/// a3ctl did not create (adopted, imported) keeps its own values for them: they are left out of
/// what is desired and recorded, so later plans leave them alone too ([`leave_unmanaged`]).
pub fn undeclared_defaults(
    blueprint: &Blueprint,
    addr: &crate::resource::Addr,
) -> &'static [&'static str] {
    let declared = match addr.kind {
        Kind::Cluster => blueprint.cluster.maintenance.as_ref().map(|m| m.declared),
        Kind::NodePool if addr.name == blueprint.system_pool.name => {
            blueprint.system_pool.upgrade.as_ref().map(|u| u.declared)
        }
        Kind::NodePool => blueprint
            .gpu_pools
            .iter()
            .find(|p| p.name == addr.name)
            .and_then(|p| p.upgrade.as_ref())
            .map(|u| u.declared),
        _ => None,
    };
    match (addr.kind, declared) {
        (Kind::Cluster, Some(false)) => &["maintenance_policy"],
        (Kind::NodePool, Some(false)) => &["upgrade_settings"],
        _ => &[],
    }
}

/// `spec` without the fields [`undeclared_defaults`] names for `addr`.
pub fn without_undeclared_defaults(
    blueprint: &Blueprint,
    addr: &crate::resource::Addr,
    spec: &mut serde_json::Value,
) {
    if let Some(map) = spec.as_object_mut() {
        for field in undeclared_defaults(blueprint, addr) {
            map.remove(*field);
        }
    }
}

/// Where the sandbox keeps its world and its states.
pub const SANDBOX_DIR: &str = "state/sandbox";

pub struct Session {
    pub printer: Printer,
    pub blueprint: Blueprint,
    pub blueprint_path: PathBuf,
    pub graph: ResourceGraph,
    pub store: StateStore,
    pub provider: Arc<dyn Provider>,
    pub options: Options,
    /// The embedded simulator, kept alive for the session (and saved when dropped).
    pub sandbox: Option<a3ctl_sim::SimHandle>,
    /// The sandbox's lock, held while the simulator runs; declared after it, so it is released
    /// only once the world is saved.
    pub sandbox_lock: Option<LocalLock>,
    /// The reservations `(name, zone)` the sandbox made for the blueprint (now or in an earlier
    /// run), which preflight marks as sandbox-provided.
    pub sandbox_reservations: Vec<(String, String)>,
}

impl Session {
    /// Loads and validates the blueprint, builds its graph and connects the provider.
    pub async fn open(global: &Global, printer: Printer, path: &Path) -> Result<Session, Failure> {
        let mut blueprint = blueprint::load(path).map_err(|e| Failure::blueprint(&printer, &e))?;
        if global.sandbox {
            // The sandbox is for trying things: protection is off unless the blueprint asks.
            blueprint.cluster.deletion_protection.get_or_insert(false);
        }
        let connection = Connection::open(global, &blueprint, path, true).await?;
        // A deployment an earlier a3ctl created names its GPU VPCs from 0: keep its names. A state
        // that cannot be read is reported by whoever loads it next.
        if let Ok(Some(state)) = connection.store.load() {
            if let Some(base) = state.gpu_name_base() {
                blueprint.network.gpu_name_base = base;
            }
            leave_unmanaged(&mut blueprint, &state);
        }
        let graph = ResourceGraph::from_blueprint(&blueprint).map_err(|e| {
            Failure::new(format!(
                "The resource graph of `{}` is invalid",
                path.display()
            ))
            .cause(e.to_string())
        })?;
        let mut options = Options::default();
        let provider = GcpProvider::new(connection.config.clone())
            .await
            .map_err(|e| {
                if connection.sandbox.is_some() {
                    Failure::cloud("Cannot start the sandbox's clients", &e)
                } else {
                    Failure::cloud("Cannot create the Google Cloud clients", &e)
                }
            })?;
        let mut sandbox_reservations = Vec::new();
        // A world file is the sandbox's truth: what it lacks, preflight reports.
        if let Some(sim) = connection
            .sandbox
            .as_ref()
            .filter(|_| !connection.sandbox_world)
        {
            let base = sim.base_url();
            let provide = async {
                let client = reqwest::Client::new();
                let room = super::sandbox_world::RESERVATION_ROOM;
                let provided = provide_reservations_noting(base, graph.resources(), room).await?;
                for operation in &provided.operations {
                    wait_for_operation(&client, base, operation).await?;
                }
                Ok::<Provided, String>(provided)
            };
            let provided = provide.await.map_err(|e| {
                Failure::new("Cannot set up the sandbox's reservations for this blueprint")
                    .cause(e)
                    .hint(format!("the sandbox makes each reservation a [[gpu_pool]] names that its world lacks, for {room} times the pool's `nodes`, within its project's quotas and its zones' capacity (docs/simulator.md): lower `nodes`, or check `reservation` (and `reservation_block`)", room = super::sandbox_world::RESERVATION_ROOM))
            })?;
            for note in &provided.notes {
                printer.info(note);
            }
            sandbox_reservations = provided.sandbox_made;
        }
        match (&connection.sandbox, poll_ms()) {
            (Some(_), ms) => set_poll(&mut options, ms.unwrap_or(20)),
            (None, Some(ms)) => set_poll(&mut options, ms),
            (None, None) => {}
        }
        Ok(Session {
            printer,
            blueprint,
            blueprint_path: path.to_path_buf(),
            graph,
            store: connection.store,
            provider: Arc::new(provider),
            options,
            sandbox: connection.sandbox,
            sandbox_lock: connection.sandbox_lock,
            sandbox_reservations,
        })
    }

    /// The recorded state, or a new one (with a fresh lineage) when there is none yet.
    pub fn load_state(&self) -> Result<(State, bool), Failure> {
        match self.store.load() {
            Ok(Some(state)) => {
                check_belongs(&state, &self.blueprint, &self.store)?;
                Ok((state, true))
            }
            Ok(None) => Ok((
                State::new(&self.blueprint.name, uuid::Uuid::new_v4().to_string()),
                false,
            )),
            Err(e) => Err(load_failure(&self.store, &e)),
        }
    }

    /// Saves a state changed outside an apply (import, refresh-only): one more serial, written
    /// atomically. The caller holds the lock.
    pub fn save_state(&self, state: &mut State) -> Result<(), Failure> {
        state.touch();
        self.store.save(state).map_err(|e| {
            Failure::new(format!("Cannot save state `{}`", self.store.location()))
                .cause(e.to_string())
                .maybe_hint(e.hint())
        })
    }

    /// A plan refused by [`planner::protect`], with what to do about it in this blueprint.
    pub fn protection_failure(&self, e: &planner::PlanError) -> Failure {
        Failure::new(e.to_string()).hint(e.hint(&self.blueprint_path.display().to_string()))
    }

    /// Reads every recorded resource from the cloud, up to 32 at once (an A3 Mega deployment
    /// records about 35 Google resources: one round of reads; Google's per-minute read quotas,
    /// in the thousands, are far away).
    pub async fn refresh(&self, state: &State) -> Result<Refreshed, Failure> {
        refresh(self.provider.as_ref(), state, 32)
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
        let plan = self.plan_unprotected(state, destroy, adopt).await?;
        planner::protect(&plan).map_err(|e| self.protection_failure(&e))?;
        Ok(plan)
    }

    /// [`Session::plan_adopting`] without enforcing `prevent_destroy`, for a plan narrowed
    /// afterwards (`--target`, `--exclude`), which enforces it on what it keeps
    /// (`commands::plan::shape`).
    pub async fn plan_unprotected(
        &self,
        state: &State,
        destroy: bool,
        adopt: bool,
    ) -> Result<Plan, Failure> {
        let mut refreshed = self.refresh(state).await?;
        let mut adoptions = if adopt && !destroy {
            discover(self.provider.as_ref(), self.graph.resources(), state, 16)
                .await
                .map_err(|(addr, e)| {
                    let id = self
                        .graph
                        .resources()
                        .iter()
                        .find(|d| d.addr == addr)
                        .map(|d| d.id.clone())
                        // For the message only.
                        .unwrap_or_default();
                    Failure::cloud(format!("Cannot look for `{addr}` ({id})"), &e)
                })?
        } else {
            Vec::new()
        };
        // What a3ctl adopts keeps its own maintenance policy and upgrade settings unless the
        // blueprint declares them: neither desired nor recorded.
        for a in &mut adoptions {
            without_undeclared_defaults(&self.blueprint, &a.addr, &mut a.spec);
        }
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
        let mut desired = self.graph.resources().to_vec();
        crate::plan::moves::follow_generations(&mut desired, &with_adopted);
        for d in &mut desired {
            if adoptions.iter().any(|a| a.addr == d.addr) {
                without_undeclared_defaults(&self.blueprint, &d.addr, &mut d.spec);
            }
        }
        let mut plan = planner::plan_unprotected(&desired, &with_adopted, &refreshed, destroy);
        plan.format = PLAN_FORMAT;
        if !destroy {
            plan.versions = crate::graph::outputs::version_stack(&self.blueprint);
        }
        plan.adoptions = adoptions;
        Ok(plan)
    }

    /// Looks for the resources `plan` creates that `state` does not record, under their blueprint
    /// identity ([`existing`]): after a state file is lost, they are there, and `plan --adopt`
    /// takes them over. No read when the plan creates nothing (or destroys); nothing is written.
    pub async fn look_for_existing(&self, plan: &Plan, state: &State) -> Existing {
        if plan.destroy {
            return Existing::default();
        }
        let creates: std::collections::BTreeSet<crate::resource::Addr> = plan
            .changes
            .iter()
            .filter(|c| c.action == crate::plan::Action::Create)
            .map(|c| c.addr.clone())
            .collect();
        if creates.is_empty() {
            return Existing::default();
        }
        existing(
            self.provider.as_ref(),
            self.graph.resources(),
            &creates,
            state,
            16,
        )
        .await
    }

    /// Runs the preflight checks of `plan` (not of a destroy) and records them in it; a failed
    /// check is a [`Failure`] naming what is needed, what is there, and the fix, returned after
    /// the checks are recorded so the caller can show the plan first.
    ///
    /// Then chooses how each replaced node pool moves ([`crate::plan::moves::choose`], from the
    /// rooms the checks read, and `moves`' opt-ins): a pool no strategy can move fails the plan
    /// the same way, naming the choices.
    pub async fn preflight(
        &self,
        plan: &mut Plan,
        state: &State,
        moves: &crate::plan::moves::MoveOptions,
    ) -> Result<(), Failure> {
        if plan.destroy {
            return Ok(());
        }
        let journaled: std::collections::HashSet<crate::resource::Addr> =
            state.pending.iter().map(|p| p.addr.clone()).collect();
        let mut checks = preflight::run(
            self.provider.as_ref(),
            plan,
            &self.blueprint.project,
            &self.blueprint.region,
            &journaled,
            &moves.delete_first,
        )
        .await
        .map_err(|(what, e)| Failure::cloud(format!("Preflight cannot read {what}"), &e))?;
        for check in &mut checks.checks {
            check.sandbox_provided = self
                .sandbox_reservations
                .iter()
                .any(|(name, zone)| check.subject == preflight::reservation_subject(name, zone));
        }
        let failure = preflight_failure(&checks);
        plan.preflight = Some(checks);
        crate::plan::moves::choose(plan, state, moves);
        failure.map_or(Ok(()), Err)?;
        self.refuse_moves(plan)
    }

    /// A plan with a pool that no strategy moves without giving up its GPUs fails, naming the
    /// choices ([`crate::plan::moves::refusal`]).
    pub fn refuse_moves(&self, plan: &Plan) -> Result<(), Failure> {
        let Some(refusal) =
            crate::plan::moves::refusal(plan, &self.blueprint_path.display().to_string())
        else {
            return Ok(());
        };
        let mut failure = Failure::new(refusal.message);
        for cause in refusal.causes {
            failure = failure.cause(cause);
        }
        Err(failure.hint(refusal.hint))
    }
}

/// The failure of a preflight with failed checks: each problem as a cause, each fix in the hint.
pub fn preflight_failure(checks: &preflight::Preflight) -> Option<Failure> {
    let failed: Vec<&preflight::Check> = checks.failed().collect();
    if failed.is_empty() {
        return None;
    }
    let mut failure = Failure::new(format!(
        "Preflight failed: {} of {} check(s); nothing was changed",
        failed.len(),
        checks.checks.len()
    ));
    let mut fixes = Vec::new();
    for check in failed {
        failure = failure.cause(format!(
            "{}: {} (need {}, available {})",
            check.subject,
            check.problem.as_deref().unwrap_or("failed"),
            check.need,
            check.available
        ));
        fixes.extend(check.fix.clone());
    }
    fixes.push("or run with --skip-preflight to try anyway".into());
    Some(failure.hint(fixes.join("\n")))
}

/// The sandbox stands in for a project whose GPU capacity was bought in advance: a reservation
/// that a node pool of `resources` names and the simulator at `base_url` lacks is created there
/// (through Compute's `reservations.insert`, in each of the pool's zones, holding the pool's
/// machine type and GPUs for its nodes, `DENSE` as A3 Mega reservations are). One that exists —
/// made by an earlier run, or resized or deleted with gcloud — is left as it is, so preflight
/// meets the same shortfalls as in a real project. Returns the inserts' operations, for the
/// caller to wait on ([`wait_for_operation`] on the sandbox's fast clock; integration tests move
/// their manual clock). Integration tests set up their worlds the same way, with reservations of
/// exactly the pools' nodes; the sandbox makes them with room
/// ([`provide_reservations_with_room`]).
pub async fn provide_reservations(
    base_url: &str,
    resources: &[Desired],
) -> Result<Vec<serde_json::Value>, String> {
    provide_reservations_with_room(base_url, resources, 1).await
}

/// [`provide_reservations`], each reservation made for `room` times its pool's nodes (the
/// sandbox's [`super::sandbox_world::RESERVATION_ROOM`]).
pub async fn provide_reservations_with_room(
    base_url: &str,
    resources: &[Desired],
    room: u32,
) -> Result<Vec<serde_json::Value>, String> {
    Ok(provide_reservations_noting(base_url, resources, room)
        .await?
        .operations)
}

/// Two names of one numbered series (`res-1`, `res-2`): the same but for their trailing digits,
/// never a typo of each other.
fn numbered_siblings(a: &str, b: &str) -> bool {
    let stem = |s: &str| s.trim_end_matches(|c: char| c.is_ascii_digit()).len();
    let (sa, sb) = (stem(a), stem(b));
    sa < a.len() && sb < b.len() && a[..sa] == b[..sb]
}

/// What the sandbox did about a blueprint's reservations.
#[derive(Debug, Default)]
pub struct Provided {
    /// The inserts' operations, to wait for.
    pub operations: Vec<serde_json::Value>,
    /// One line per reservation made, or not made because the world has one of a close name (a
    /// typo would otherwise be made real and could never be rehearsed).
    pub notes: Vec<String>,
    /// `(name, zone)` of each reservation the blueprint names that the sandbox made, in this
    /// run or an earlier one (its description says so: [`SANDBOX_RESERVATION`]).
    pub sandbox_made: Vec<(String, String)>,
}

/// The description of a reservation the sandbox makes, by which later runs know it for its own.
pub const SANDBOX_RESERVATION: &str = "Made by the a3ctl sandbox for a blueprint that names it, as a project that bought capacity would have it";

/// [`provide_reservations_with_room`], saying what it made and what it would not make.
pub async fn provide_reservations_noting(
    base_url: &str,
    resources: &[Desired],
    room: u32,
) -> Result<Provided, String> {
    let client = reqwest::Client::new();
    let mut operations = Vec::new();
    let mut notes = Vec::new();
    let mut sandbox_made = Vec::new();
    for desired in resources.iter().filter(|d| d.addr.kind == Kind::NodePool) {
        let spec: NodePoolSpec =
            from_spec("node pool", &desired.spec).map_err(|e| e.to_string())?;
        let Some(reservation) = spec.consumed_reservation() else {
            continue;
        };
        // The pool's own project (its id is `projects/P/locations/...`), unless the reservation
        // is named by another project's path.
        let own = desired.id.split('/').nth(1).unwrap_or_default();
        let (project, name) = reservation.owner_and_name(own);
        for zone in &spec.locations {
            let collection =
                format!("{base_url}/compute/v1/projects/{project}/zones/{zone}/reservations");
            let found = client
                .get(format!("{collection}/{name}"))
                .send()
                .await
                .map_err(|e| e.to_string())?;
            if found.status().is_success() {
                let found: serde_json::Value = found.json().await.map_err(|e| e.to_string())?;
                if found["description"] == SANDBOX_RESERVATION {
                    sandbox_made.push((name.to_string(), zone.clone()));
                }
                continue;
            }
            if found.status() != reqwest::StatusCode::NOT_FOUND {
                let status = found.status();
                let text = found.text().await.unwrap_or_default();
                return Err(format!(
                    "reading reservation `{name}` in {zone}: {}",
                    google_error(status, &text)
                ));
            }
            // A name one or two letters from one the world has is a typo until shown otherwise:
            // left missing, it fails preflight as it would on Google Cloud.
            let listed = list_every_page(&client, &collection).await?;
            let near = listed
                .iter()
                .filter_map(|r| r["name"].as_str())
                .filter(|other| {
                    *other != name
                        && strsim::levenshtein(other, &name) <= 2
                        && !numbered_siblings(other, &name)
                })
                .min_by_key(|other| strsim::levenshtein(other, &name))
                .map(str::to_string);
            if let Some(near) = near {
                notes.push(format!(
                    "Sandbox: did not make reservation `{name}` in {zone} for `{}`: the world has `{near}` there (a typo?). Left missing, as on Google Cloud; fix `reservation` in the blueprint, or name it on purpose and create it with gcloud against `a3ctl sandbox serve`.",
                    desired.addr
                ));
                continue;
            }
            let mut properties = serde_json::json!({"machineType": spec.machine_type});
            if let Some(acc) = &spec.accelerator {
                properties["guestAccelerators"] = serde_json::json!([
                    {"acceleratorType": acc.kind, "acceleratorCount": acc.count}
                ]);
            }
            let body = serde_json::json!({
                "name": name,
                "description": SANDBOX_RESERVATION,
                "specificReservationRequired": true,
                "deploymentType": "DENSE",
                "specificReservation": {
                    "count": (spec.node_count * u64::from(room)).to_string(),
                    "instanceProperties": properties,
                },
            });
            let answer = client
                .post(&collection)
                .json(&body)
                .send()
                .await
                .map_err(|e| e.to_string())?;
            if !answer.status().is_success() {
                let status = answer.status();
                let text = answer.text().await.unwrap_or_default();
                return Err(format!(
                    "Compute Engine refused to create reservation `{name}` in {zone}: {}",
                    google_error(status, &text)
                ));
            }
            operations.push(answer.json().await.map_err(|e| e.to_string())?);
            sandbox_made.push((name.to_string(), zone.clone()));
            notes.push(format!(
                "Sandbox: made reservation `{name}` in {zone} for `{}` ({} × {}), as a project that bought it would have it; on Google Cloud it must exist.",
                desired.addr,
                spec.node_count * u64::from(room),
                spec.machine_type
            ));
        }
    }
    Ok(Provided {
        operations,
        notes,
        sandbox_made,
    })
}

/// Google's error body (`{"error": {"code", "status", "message"}}`) as a sentence: `PERMISSION_DENIED:
/// message`; the HTTP status when the body is not one.
fn google_error(status: reqwest::StatusCode, body: &str) -> String {
    let parsed: Option<serde_json::Value> = serde_json::from_str(body).ok();
    let error = parsed.as_ref().map(|v| &v["error"]);
    match (
        error.and_then(|e| e["status"].as_str()),
        error.and_then(|e| e["message"].as_str()),
    ) {
        (Some(code), Some(message)) => format!("{code}: {message}"),
        (None, Some(message)) => format!("HTTP {}: {message}", status.as_u16()),
        _ => format!("HTTP {status}"),
    }
}

/// A failed operation's `error` (`{"errors": [{"code", "message"}, …]}`, Compute's Operation
/// resource: https://cloud.google.com/compute/docs/reference/rest/v1/zoneOperations) as
/// sentences, `QUOTA_EXCEEDED: Quota 'CPUS' exceeded. …`, instead of its JSON.
fn operation_error(error: &serde_json::Value) -> String {
    let said: Vec<String> = error["errors"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|e| match (e["code"].as_str(), e["message"].as_str()) {
            (Some(code), Some(message)) => format!("{code}: {message}"),
            (None, Some(message)) => message.to_string(),
            _ => e.to_string(),
        })
        .collect();
    if said.is_empty() {
        error.to_string()
    } else {
        said.join("; ")
    }
}

/// Every item of a Compute list at `collection`, following `nextPageToken` to the last page.
async fn list_every_page(
    client: &reqwest::Client,
    collection: &str,
) -> Result<Vec<serde_json::Value>, String> {
    let mut items = Vec::new();
    let mut token: Option<String> = None;
    loop {
        let mut request = client.get(collection);
        if let Some(token) = &token {
            request = request.query(&[("pageToken", token)]);
        }
        let page: serde_json::Value = request
            .send()
            .await
            .map_err(|e| e.to_string())?
            .json()
            .await
            .map_err(|e| e.to_string())?;
        items.extend(page["items"].as_array().cloned().unwrap_or_default());
        match page["nextPageToken"].as_str().filter(|t| !t.is_empty()) {
            Some(next) => token = Some(next.to_string()),
            None => return Ok(items),
        }
    }
}

/// Waits for a zonal Compute operation of the sandbox to be DONE (its `selfLink`), for at most a
/// minute of real time (the sandbox's reservations take milliseconds on its fast clock).
pub async fn wait_for_operation(
    client: &reqwest::Client,
    base_url: &str,
    operation: &serde_json::Value,
) -> Result<(), String> {
    use crate::cloud::retry::{Backoff, Jitter, Look, Poller, Waited};
    let link = operation["selfLink"]
        .as_str()
        .ok_or("an operation without selfLink")?;
    let path = link
        .find("/compute/v1/")
        .map(|i| &link[i..])
        .ok_or_else(|| format!("unexpected operation link {link}"))?;
    let url = format!("{base_url}{path}");
    let jitter = Jitter::new(7);
    let stop = tokio_util::sync::CancellationToken::new();
    let poller = Poller {
        backoff: Backoff {
            initial: std::time::Duration::from_millis(5),
            max: std::time::Duration::from_millis(200),
            multiplier: 2.0,
        },
        jitter: &jitter,
        stop: &stop,
        deadline: tokio::time::Instant::now() + std::time::Duration::from_secs(60),
    };
    let waited = poller
        .until(false, |_| async {
            let read = async {
                client
                    .get(&url)
                    .send()
                    .await?
                    .json::<serde_json::Value>()
                    .await
            };
            match read.await {
                Ok(op) if op["status"] == "DONE" && op.get("error").is_some() => {
                    Look::Failed(crate::cloud::CloudError::new(
                        crate::cloud::ErrorClass::Other,
                        operation_error(&op["error"]),
                    ))
                }
                Ok(op) if op["status"] == "DONE" => Look::Done(()),
                Ok(_) => Look::Pending,
                Err(e) => Look::Failed(crate::cloud::CloudError::new(
                    crate::cloud::ErrorClass::Other,
                    e.to_string(),
                )),
            }
        })
        .await;
    match waited {
        Waited::Done(()) => Ok(()),
        Waited::Failed(e) => {
            let last = |field: &str| {
                operation[field]
                    .as_str()
                    .and_then(|link| link.rsplit('/').next())
                    .unwrap_or("?")
                    .to_string()
            };
            Err(format!(
                "Compute Engine failed to create reservation `{}` in {}: {}",
                last("targetLink"),
                last("zone"),
                e.message
            ))
        }
        Waited::Interrupted | Waited::TimedOut => {
            Err("the reservation's insert did not finish within a minute".into())
        }
    }
}

/// The state recorded for `blueprint` (read from its backend, without the provider's clients),
/// with where it lives for messages.
pub async fn recorded_state(
    global: &Global,
    blueprint: &Blueprint,
    path: &Path,
) -> Result<(Option<State>, String), Failure> {
    let connection = Connection::open(global, blueprint, path, false).await?;
    let store = &connection.store;
    match store.load() {
        Ok(Some(state)) => {
            check_belongs(&state, blueprint, store)?;
            Ok((Some(state), store.location()))
        }
        Ok(None) => Ok((None, store.location())),
        Err(e) => Err(load_failure(store, &e)),
    }
}

/// The GKE cluster's `(endpoint, ca_certificate)` as recorded in `state` by the last apply.
pub fn recorded_cluster(
    state: Option<&State>,
    blueprint: &Blueprint,
    state_location: &str,
) -> Result<(String, String), Failure> {
    let outputs = state
        .and_then(|s| s.resources.get(&crate::graph::build::addr::cluster()))
        .map(|r| &r.outputs);
    let text = |key: &str| {
        outputs
            .and_then(|o| o[key].as_str())
            .filter(|v| !v.is_empty())
            .map(str::to_string)
    };
    match (text("endpoint"), text("ca_certificate")) {
        (Some(endpoint), Some(ca)) => Ok((endpoint, ca)),
        _ => Err(Failure::new(format!(
            "Cluster `{}` is not in state `{}`: nothing has been applied yet, or its creation did not finish",
            blueprint.name,
            state_location
        ))
        // Completed with this run's flags and blueprint (`ui::invocation`).
        .hint("run `a3ctl apply` first")),
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

/// How to reach Google Cloud (or the sandbox) and where a blueprint's state lives: everything a
/// command needs short of the provider's clients (the `state` commands and force-unlock stop here).
pub struct Connection {
    pub config: GcpConfig,
    pub store: StateStore,
    /// The embedded simulator, started when `--sandbox` needs it (the provider, or a GCS state).
    pub sandbox: Option<a3ctl_sim::SimHandle>,
    /// The sandbox's lock ([`lock_sandbox`]), released after the simulator saved its world.
    pub sandbox_lock: Option<LocalLock>,
    /// The sandbox's world comes from a world file (`--world`, kept as
    /// `state/sandbox/world.toml`) rather than the default world.
    pub sandbox_world: bool,
}

impl Connection {
    /// Resolves the state backend (the blueprint's `[state]`, overridden by `--state-bucket` and
    /// `--state-prefix`) and the endpoints. With `--sandbox`, the simulator is started when
    /// `cloud` is set or the state lives in GCS; a local sandbox state lives under
    /// `state/sandbox/`.
    pub async fn open(
        global: &Global,
        blueprint: &Blueprint,
        path: &Path,
        cloud: bool,
    ) -> Result<Connection, Failure> {
        // Hints drawn from here on name this run's flags and blueprint.
        crate::ui::invocation::set(&state_flags(global), path);
        if global.world.is_some() && !global.sandbox {
            return Err(Failure::new("`--world` applies only to the sandbox")
                .cause("a world file describes a simulated project; Google Cloud has its own")
                .hint("add --sandbox, or leave out --world"));
        }
        let backend = backend(global, blueprint)?;
        let gcs = matches!(backend, StateBackend::Gcs { .. });
        let (sandbox, sandbox_world, sandbox_lock) = if global.sandbox && (cloud || gcs) {
            let started = start_sandbox(global.world.as_deref(), 0, &invoked_command()).await?;
            (Some(started.sim), started.world_file, Some(started.lock))
        } else {
            (None, false, None)
        };
        let config = match &sandbox {
            Some(sim) => GcpConfig {
                project: blueprint.project.clone(),
                endpoints: Endpoints::simulator(sim.base_url()),
                credentials: CredentialsMode::Anonymous,
                poll: Duration::from_millis(20),
            },
            None => GcpConfig {
                project: blueprint.project.clone(),
                endpoints: Endpoints::from_env().map_err(partial_endpoints)?,
                credentials: CredentialsMode::from_env(),
                poll: Duration::from_millis(poll_ms().unwrap_or(2000)),
            },
        };
        let store = match backend {
            StateBackend::Local { path: file } if global.sandbox => {
                let name = file
                    .file_name()
                    .map(PathBuf::from)
                    .unwrap_or_else(|| format!("{}.a3state.json", blueprint.name).into());
                StateStore::Local(LocalStore::new(Path::new(SANDBOX_DIR).join(name)))
            }
            StateBackend::Local { path: file } => StateStore::Local(LocalStore::new(file)),
            StateBackend::Gcs {
                bucket,
                prefix,
                kms_key,
            } => {
                let client = StorageClient::new(&config).map_err(|e| {
                    Failure::cloud(format!("Cannot reach state bucket `{bucket}`"), &e)
                })?;
                let location = GcsLocation::new(&bucket, &prefix, &blueprint.name);
                let create = format!(
                    "a3ctl state create-bucket {}{}",
                    state_flags(global),
                    path.display()
                );
                let mut store = GcsStore::new(Arc::new(client), location, kms_key, create);
                // Retries of a transient failure start at the poll interval when one is set.
                if let Some(ms) = poll_ms().or(sandbox.as_ref().map(|_| 20)) {
                    store = store.with_retry_delay(Duration::from_millis(ms));
                }
                StateStore::Gcs(store)
            }
        };
        Ok(Connection {
            sandbox_world,
            config,
            store,
            sandbox,
            sandbox_lock,
        })
    }
}

/// The blueprint's state backend with the command-line overrides applied.
pub fn backend(global: &Global, blueprint: &Blueprint) -> Result<StateBackend, Failure> {
    let declared = blueprint.state.clone();
    match (&global.state_bucket, &global.state_prefix) {
        (None, None) => Ok(declared),
        (Some(bucket), prefix) => {
            names::bucket(bucket).map_err(|why| {
                Failure::new(format!("`--state-bucket {bucket}` is not a bucket name"))
                    .cause(why)
                    .hint("bucket names have 3 to 63 lowercase letters, digits, hyphens and underscores")
            })?;
            let (declared_prefix, kms_key) = match declared {
                StateBackend::Gcs {
                    prefix, kms_key, ..
                } => (prefix, kms_key),
                StateBackend::Local { .. } => (format!("a3ctl/{}", blueprint.name), None),
            };
            Ok(StateBackend::Gcs {
                bucket: bucket.clone(),
                prefix: prefix
                    .as_deref()
                    .map(|p| p.trim_matches('/').to_string())
                    .unwrap_or(declared_prefix),
                kms_key,
            })
        }
        (None, Some(prefix)) => match declared {
            StateBackend::Gcs {
                bucket, kms_key, ..
            } => Ok(StateBackend::Gcs {
                bucket,
                prefix: prefix.trim_matches('/').to_string(),
                kms_key,
            }),
            StateBackend::Local { .. } => Err(Failure::new(
                "`--state-prefix` applies only to a state kept in GCS",
            )
            .hint("add `--state-bucket BUCKET`, or set `backend = \"gcs\"` in the blueprint's [state]")),
        },
    }
}

/// The global flags that choose where state lives, to repeat them in suggested commands.
pub fn state_flags(global: &Global) -> String {
    let mut flags = String::new();
    if global.sandbox {
        flags.push_str("--sandbox ");
    }
    if let Some(bucket) = &global.state_bucket {
        flags.push_str(&format!("--state-bucket {bucket} "));
    }
    if let Some(prefix) = &global.state_prefix {
        flags.push_str(&format!("--state-prefix {prefix} "));
    }
    flags
}

/// Refuses a state recorded for another blueprint.
pub fn check_belongs(
    state: &State,
    blueprint: &Blueprint,
    store: &StateStore,
) -> Result<(), Failure> {
    if state.blueprint == blueprint.name {
        return Ok(());
    }
    Err(Failure::new(format!(
        "State `{store}` belongs to blueprint `{}`, not `{}`",
        state.blueprint, blueprint.name
    ))
    .hint(match store {
        StateStore::Local(_) => "give each blueprint its own `[state] path`",
        StateStore::Gcs(_) => "give each blueprint its own `[state] prefix`",
    }))
}

/// A state that cannot be read.
pub fn load_failure(store: &StateStore, e: &StoreError) -> Failure {
    Failure::new(format!("Cannot load state `{store}`"))
        .cause(e.to_string())
        .maybe_hint(e.hint())
}

fn poll_ms() -> Option<u64> {
    std::env::var(env_vars::POLL_INTERVAL_MS)
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
}

/// The file the sandbox's simulated world is saved in.
pub fn sandbox_world_file() -> PathBuf {
    Path::new(SANDBOX_DIR).join("world.json")
}

/// The sandbox's simulator, started.
pub struct StartedSandbox {
    pub sim: a3ctl_sim::SimHandle,
    /// Its world comes from a world file (`--world`, or the saved `state/sandbox/world.toml`).
    pub world_file: bool,
    /// The sandbox's lock ([`lock_sandbox`]), to release once the simulator has saved its world.
    pub lock: LocalLock,
}

/// Starts the embedded simulator with its world persisted under `state/sandbox/`, from the world
/// file `world` (which replaces the saved `state/sandbox/world.toml`) or the saved one, if any,
/// with the Google APIs on `port` (0: any free port), holding the sandbox's lock for `operation`
/// ([`lock_sandbox`], taken once a given world file is found valid). The clusters' Kubernetes API
/// servers accept their own static tokens (what `a3ctl kubeconfig --sandbox` writes) and the token
/// a3ctl's own clients present in the sandbox; a request without a token, or with another one,
/// gets 401.
pub async fn start_sandbox(
    world: Option<&Path>,
    port: u16,
    operation: &str,
) -> Result<StartedSandbox, Failure> {
    if let Some(given) = world {
        a3ctl_sim::WorldSpec::load(given).map_err(|e| invalid_world(given, e))?;
    }
    let lock = lock_sandbox(operation)?;
    let scale = std::env::var(env_vars::SANDBOX_TIME_SCALE)
        .ok()
        .and_then(|v| v.parse::<f64>().ok())
        .filter(|s| *s > 0.0 && s.is_finite())
        .unwrap_or(0.0005);
    let spec = sandbox_world(world)?;
    let in_use = spec.is_some();
    let config = a3ctl_sim::SimConfig {
        port,
        persist: Some(sandbox_world_file()),
        world: spec.unwrap_or_default(),
        kube_token: Some(crate::cloud::kube::client::ANONYMOUS_TOKEN.to_string()),
        // The sandbox's world carries today's dates (a world file's `start_time` pins another).
        start: a3ctl_sim::Start::WallClock,
        ..a3ctl_sim::SimConfig::realistic(scale)
    };
    // Without a world file, the sandbox's own project, with room; a world file is the truth.
    let config = if in_use {
        config
    } else {
        super::sandbox_world::with_room(config)
    };
    let sim = a3ctl_sim::start(config).await.map_err(|e| {
        let failure = Failure::new("Cannot start the sandbox simulator").cause(e.to_string());
        match e {
            a3ctl_sim::server::StartError::Bind { .. } if port != 0 => failure.hint(format!(
                "another program listens on port {port}: choose another one with `--port N` (0 takes any free port)"
            )),
            _ => failure.hint(format!(
                "the sandbox keeps its world in `{SANDBOX_DIR}/world.json`; move it away to start over"
            )),
        }
    })?;
    Ok(StartedSandbox {
        sim,
        world_file: in_use,
        lock,
    })
}

/// Takes the sandbox's lock (`state/sandbox/world.json.lock`) for `operation`: one process at a
/// time runs the sandbox's simulator, since each one loads the world at start and saves its own
/// copy, and a second one would overwrite the first one's changes. A lock left by a process that
/// no longer runs is taken over.
pub fn lock_sandbox(operation: &str) -> Result<LocalLock, Failure> {
    let info = LockInfo::current(uuid::Uuid::new_v4().to_string(), operation);
    match LocalLock::acquire(&sandbox_world_file(), info) {
        Ok((lock, _)) => Ok(lock),
        Err(LockError::Held { info, .. }) if info.operation == SERVE_OPERATION => {
            Err(Failure::new(format!(
                "The sandbox is being served by `a3ctl {SERVE_OPERATION}` (pid {}, since {})",
                info.pid, info.created
            ))
            .cause("while it serves, the sandbox's world is that process's: a second simulator would overwrite its changes, or lose them")
            .hint(format!(
                "stop it with Ctrl-C in its terminal (or `kill -INT {}`) and run this again; while it serves, use gcloud and kubectl against it (`a3ctl kubeconfig --sandbox` works)",
                info.pid
            )))
        }
        Err(LockError::Held { info, .. }) => Err(Failure::new(format!(
            "The sandbox is in use by `a3ctl {}` (pid {}, since {})",
            info.operation, info.pid, info.created
        ))
        .cause("one a3ctl process at a time runs the sandbox's simulator: each saves its own copy of the world")
        .hint("wait for it to finish, then run this again")),
        // The sandbox's world is always under `state/sandbox/` of the working directory, so the
        // blueprint's `[state]` is no way around a directory that cannot hold it.
        Err(e) => {
            let hint = match e.unwritable() {
                Some(u) => Some(format!(
                    "{}the sandbox keeps its world under `{SANDBOX_DIR}/` in the directory a3ctl is run from (docs/state.md); {}",
                    u.what(),
                    u.remedy()
                )),
                None => e.hint(),
            };
            Err(Failure::new("Cannot lock the sandbox")
                .cause(e.to_string())
                .maybe_hint(hint))
        }
    }
}

/// The lock operation of `a3ctl sandbox serve`.
pub const SERVE_OPERATION: &str = "sandbox serve";

/// The subcommand this process runs (`apply`, `plan`...), for the sandbox lock's holder.
fn invoked_command() -> String {
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        if ["--world", "--state-bucket", "--state-prefix"].contains(&arg.as_str()) {
            // Its value.
            args.next();
        } else if !arg.starts_with('-') {
            return arg;
        }
    }
    "a3ctl".into()
}

fn invalid_world(path: &Path, e: String) -> Failure {
    Failure::new(format!("The world file `{}` is invalid", path.display()))
        .cause(e)
        .hint("see docs/simulator.md, \"The world file\", and sim/worlds/example.toml")
}

/// The sandbox's world file: `given` is checked and saved as `state/sandbox/world.toml` (only into
/// a fresh sandbox, or one made from the same file, since an existing world keeps its APIs and
/// reservations); without it, the saved one.
fn sandbox_world(given: Option<&Path>) -> Result<Option<a3ctl_sim::WorldSpec>, Failure> {
    let saved = Path::new(SANDBOX_DIR).join("world.toml");
    let invalid = invalid_world;
    let Some(given) = given else {
        if !saved.exists() {
            return Ok(None);
        }
        return a3ctl_sim::WorldSpec::load(&saved)
            .map(Some)
            .map_err(|e| invalid(&saved, e));
    };
    let spec = a3ctl_sim::WorldSpec::load(given).map_err(|e| invalid(given, e))?;
    let text = std::fs::read(given).map_err(|e| {
        Failure::new(format!("Cannot read `{}`", given.display())).cause(e.to_string())
    })?;
    let world_exists = Path::new(SANDBOX_DIR).join("world.json").exists();
    let same = std::fs::read(&saved).is_ok_and(|old| old == text);
    if world_exists && !same {
        return Err(Failure::new("The sandbox already has a world")
            .cause(format!(
                "`{SANDBOX_DIR}/world.json` exists, and a world file's APIs and reservations are set up in a fresh sandbox only"
            ))
            .hint(format!(
                "destroy what the sandbox holds and move `{SANDBOX_DIR}` away to start over with this world, or leave out --world to keep the current one"
            )));
    }
    if !same {
        std::fs::create_dir_all(SANDBOX_DIR)
            .and_then(|()| {
                let tmp = saved.with_extension("toml.tmp");
                std::fs::write(&tmp, &text)?;
                std::fs::rename(&tmp, &saved)
            })
            .map_err(|e| {
                Failure::new(format!(
                    "Cannot save the world file as `{}`",
                    saved.display()
                ))
                .cause(e.to_string())
            })?;
    }
    Ok(Some(spec))
}

#[cfg(test)]
mod day_two_tests {
    use super::*;
    use crate::blueprint::testing::{BASE, with};
    use crate::resource::Addr;
    use crate::state::Record;
    use serde_json::json;

    fn recorded(kind: Kind, name: &str, spec: serde_json::Value) -> (Addr, Record) {
        let addr = Addr::new(kind, name);
        (
            addr,
            Record {
                kind,
                id: format!("id/{name}"),
                spec,
                outputs: json!({}),
                dependencies: vec![],
                tainted: false,
                lifecycle: Default::default(),
                updated_at: String::new(),
            },
        )
    }

    fn state_with(records: Vec<(Addr, Record)>) -> State {
        let mut state = State::new("a3mega", "l".into());
        state.resources.extend(records);
        state
    }

    #[test]
    fn records_made_before_the_settings_leave_them_unmanaged_until_declared() {
        let old = state_with(vec![
            recorded(Kind::Cluster, "main", json!({"name": "a3mega"})),
            recorded(
                Kind::NodePool,
                "a3mega",
                json!({"name": "a3mega", "upgrade_settings": null}),
            ),
        ]);
        let mut bp = blueprint::parse(BASE, "t").unwrap();
        leave_unmanaged(&mut bp, &old);
        assert!(bp.cluster.maintenance.is_none());
        assert!(bp.gpu_pools[0].upgrade.is_none());
        // The system pool has no record: it is new, and gets its defaults.
        assert!(bp.system_pool.upgrade.is_some());
        // Declared tables are managed, old records or not.
        let declared = with("\n[gpu_pool.upgrade]\nmax_surge = 2\n\n[cluster.maintenance]\n");
        let mut bp = blueprint::parse(&declared, "t").unwrap();
        leave_unmanaged(&mut bp, &old);
        assert!(bp.cluster.maintenance.as_ref().is_some_and(|m| m.declared));
        assert_eq!(
            bp.gpu_pools[0].upgrade.as_ref().map(|u| u.max_surge),
            Some(2)
        );
        // A record that holds the setting keeps it managed.
        let new = state_with(vec![recorded(
            Kind::Cluster,
            "main",
            json!({"name": "a3mega", "maintenance_policy": {"exclusions": {}}}),
        )]);
        let mut bp = blueprint::parse(BASE, "t").unwrap();
        leave_unmanaged(&mut bp, &new);
        assert!(bp.cluster.maintenance.is_some());
    }

    #[test]
    fn adopted_resources_drop_only_undeclared_defaults() {
        let bp = blueprint::parse(&with("\n[gpu_pool.upgrade]\nmax_surge = 2\n"), "t").unwrap();
        let mut spec = json!({"maintenance_policy": {}, "upgrade_settings": {}, "name": "x"});
        without_undeclared_defaults(&bp, &Addr::new(Kind::Cluster, "main"), &mut spec);
        assert!(spec.get("maintenance_policy").is_none());
        // Declared: kept.
        without_undeclared_defaults(&bp, &Addr::new(Kind::NodePool, "a3mega"), &mut spec);
        assert!(spec.get("upgrade_settings").is_some());
        without_undeclared_defaults(&bp, &Addr::new(Kind::NodePool, "system"), &mut spec);
        assert!(spec.get("upgrade_settings").is_none());
        assert_eq!(spec["name"], "x");
        assert!(undeclared_defaults(&bp, &Addr::new(Kind::Network, "primary")).is_empty());
    }
}

#[cfg(test)]
mod sandbox_reservation_tests {
    #[test]
    fn a_numbered_series_is_not_a_typo() {
        assert!(super::numbered_siblings("a3mega-res-1", "a3mega-res-2"));
        assert!(super::numbered_siblings("res9", "res10"));
        assert!(!super::numbered_siblings(
            "a3mega-reservation",
            "a3mega-resrvation"
        ));
        assert!(!super::numbered_siblings("res-1", "rex-1"));
        assert!(!super::numbered_siblings("res", "res1"));
    }
}

/// The failure of a partial set of `A3CTL_*_ENDPOINT` variables, before any call.
fn partial_endpoints(partial: crate::cloud::gcp::PartialEndpoints) -> Failure {
    let google = partial
        .unset
        .iter()
        .map(|(k, url)| format!("{k}={url}"))
        .collect::<Vec<_>>()
        .join(" ");
    Failure::new("Some Google API endpoints are overridden and others are not")
        .cause(partial.to_string())
        .hint(format!(
            "set all nine A3CTL_*_ENDPOINT variables or none (`a3ctl --sandbox` points every one at \
             the built-in simulator); to send the others to Google on purpose, set them to \
             Google's endpoints: {google}"
        ))
}
