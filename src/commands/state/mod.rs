//! `a3ctl state list|show|rm|mv|pull|push|migrate|create-bucket`: read and edit the recorded
//! state through the blueprint's store (local file or GCS), never touching a cloud resource.
//!
//! Commands that change the state take its lock, check that it belongs to the blueprint, bump
//! the serial (except `push` and `migrate`, which write a given state exactly as it is) and save
//! it through the store, so a GCS write still refuses to overwrite a concurrent one.
//! Creating the state bucket lives in [`bucket`].

mod bucket;

use super::ExitStatus;
use super::apply::lock_state;
use super::session::{Connection, check_belongs, load_failure, state_flags};
use crate::blueprint::{self, Blueprint};
use crate::cli::{Global, StateCommand};
use crate::files;
use crate::resource::Addr;
use crate::state::State;
use crate::state::backend::StateStore;
use crate::state::edit::EditError;
use crate::state::lock::LocalLock;
use crate::state::store::{self, LocalStore};
use crate::ui::Printer;
use crate::ui::diagnostics::Failure;
use std::path::{Path, PathBuf};

/// The blueprint and its state store, for one `state` command.
struct Target {
    blueprint: Blueprint,
    path: PathBuf,
    connection: Connection,
    /// The global flags that chose the store, to repeat in suggested commands.
    flags: String,
}

impl Target {
    async fn open(global: &Global, printer: &Printer, path: &Path) -> Result<Target, Failure> {
        let blueprint = blueprint::load(path).map_err(|e| Failure::blueprint(printer, &e))?;
        let connection = Connection::open(global, &blueprint, path, false).await?;
        Ok(Target {
            blueprint,
            path: path.to_path_buf(),
            connection,
            flags: state_flags(global),
        })
    }

    fn store(&self) -> &StateStore {
        &self.connection.store
    }

    /// The recorded state, or `None` when there is none yet.
    fn load(&self) -> Result<Option<State>, Failure> {
        let state = self
            .store()
            .load()
            .map_err(|e| load_failure(self.store(), &e))?;
        if let Some(state) = &state {
            check_belongs(state, &self.blueprint, self.store())?;
        }
        Ok(state)
    }

    /// The recorded state; having none is an error.
    fn existing(&self) -> Result<State, Failure> {
        self.load()?.ok_or_else(|| {
            Failure::new(format!("No state is recorded in `{}` yet", self.store()))
                .hint("`a3ctl apply` records one")
        })
    }

    fn save(&self, state: &State) -> Result<(), Failure> {
        self.store().save(state).map_err(|e| {
            Failure::new(format!("Cannot save state `{}`", self.store()))
                .cause(e.to_string())
                .maybe_hint(e.hint())
        })
    }

    /// Parses an address the user typed and finds it in `state`.
    fn recorded(&self, state: &State, text: &str) -> Result<Addr, Failure> {
        let addr = parse_addr(text)?;
        if state.resources.contains_key(&addr) {
            return Ok(addr);
        }
        let closest = state
            .resources
            .keys()
            .map(|a| (strsim::levenshtein(&a.to_string(), text), a))
            .min_by_key(|(distance, _)| *distance)
            .filter(|(distance, _)| *distance <= 3);
        Err(
            Failure::new(format!("`{addr}` is not in state `{}`", self.store())).hint(
                match closest {
                    Some((_, a)) => format!("did you mean `{a}`?"),
                    None => "`a3ctl state list` lists the recorded addresses".to_string(),
                },
            ),
        )
    }
}

pub async fn run(
    global: &Global,
    printer: &Printer,
    command: StateCommand,
) -> Result<ExitStatus, Failure> {
    match command {
        StateCommand::List { blueprint } => {
            let target = Target::open(global, printer, &blueprint).await?;
            let state = target.existing()?;
            let mut out = String::new();
            for addr in state.resources.keys() {
                out.push_str(&format!("{addr}\n"));
            }
            printer.out(&out);
            warn_pending(printer, &state);
        }
        StateCommand::Show { addr, blueprint } => {
            swapped(global, "show", &[&addr], &blueprint)?;
            let target = Target::open(global, printer, &blueprint).await?;
            // A mistyped address is named before the state is read.
            parse_addr(&addr)?;
            let state = target.existing()?;
            let addr = target.recorded(&state, &addr)?;
            let mut shown = serde_json::Map::new();
            shown.insert("address".into(), addr.to_string().into());
            if let Ok(serde_json::Value::Object(fields)) =
                serde_json::to_value(&state.resources[&addr])
            {
                shown.extend(fields);
            }
            printer.out(&format!("{}\n", pretty(&shown)?));
        }
        StateCommand::Rm { addr, blueprint } => {
            swapped(global, "rm", &[&addr], &blueprint)?;
            let target = Target::open(global, printer, &blueprint).await?;
            let _lock = lock_state(
                printer,
                target.store(),
                "state rm",
                &target.flags,
                &target.path,
            )?;
            let mut state = target.existing()?;
            let addr = target.recorded(&state, &addr)?;
            let record = state
                .remove_record(&addr)
                .map_err(|e| edit_failure(&target, "remove", &addr, e))?;
            target.save(&state)?;
            printer.info(&format!(
                "Removed `{addr}` from state `{}` (serial {}).\nOnly the record is gone: `{}` still exists in the cloud. The next plan shows `{addr}` as one to create; `a3ctl import` takes it back.",
                target.store(),
                state.serial,
                record.id
            ));
        }
        StateCommand::Mv {
            from,
            to,
            blueprint,
        } => {
            swapped(global, "mv", &[&from, &to], &blueprint)?;
            let target = Target::open(global, printer, &blueprint).await?;
            let _lock = lock_state(
                printer,
                target.store(),
                "state mv",
                &target.flags,
                &target.path,
            )?;
            let mut state = target.existing()?;
            let from = target.recorded(&state, &from)?;
            let to = parse_addr(&to)?;
            state
                .move_record(&from, &to)
                .map_err(|e| edit_failure(&target, &format!("move `{from}` to"), &to, e))?;
            target.save(&state)?;
            printer.info(&format!(
                "Moved `{from}` to `{to}` in state `{}` (serial {}).",
                target.store(),
                state.serial
            ));
        }
        StateCommand::Pull { blueprint } => {
            let target = Target::open(global, printer, &blueprint).await?;
            let state = target.existing()?;
            printer.out(&format!("{}\n", pretty(&state)?));
        }
        StateCommand::Push {
            file,
            blueprint,
            force,
        } => {
            // The input first: a file that cannot be read stops the command before it connects.
            let incoming = read_state_file(&file)?;
            let target = Target::open(global, printer, &blueprint).await?;
            let _lock = lock_state(
                printer,
                target.store(),
                "state push",
                &target.flags,
                &target.path,
            )?;
            let source = if file == Path::new("-") {
                "standard input".to_string()
            } else {
                format!("`{}`", file.display())
            };
            replace(printer, &target, incoming, &source, force)?;
        }
        StateCommand::Migrate {
            blueprint,
            from,
            force,
        } => migrate(global, printer, &blueprint, from, force).await?,
        StateCommand::CreateBucket { blueprint } => {
            let target = Target::open(global, printer, &blueprint).await?;
            bucket::create(printer, &target)?;
        }
    }
    Ok(ExitStatus::Success)
}

/// Copies a local state file into the blueprint's GCS state, under both locks.
async fn migrate(
    global: &Global,
    printer: &Printer,
    blueprint: &Path,
    from: Option<PathBuf>,
    force: bool,
) -> Result<(), Failure> {
    let target = Target::open(global, printer, blueprint).await?;
    if let StateStore::Local(_) = target.store() {
        return Err(Failure::new(format!(
            "The state of `{}` is kept in a local file: there is nothing to migrate to",
            blueprint.display()
        ))
        .hint("set `backend = \"gcs\"` and `bucket` in the blueprint's [state] (or pass `--state-bucket`), then run this again"));
    }
    let from = from.unwrap_or_else(|| {
        let dir = if global.sandbox {
            super::session::SANDBOX_DIR
        } else {
            "state"
        };
        Path::new(dir).join(format!("{}.a3state.json", target.blueprint.name))
    });
    let local = LocalStore::new(&from);
    // Read even when an earlier migration marked it moved: running it again is a no-op.
    let incoming = match local.read() {
        Ok(Some(state)) => state,
        Ok(None) => {
            return Err(
                Failure::new(format!("There is no local state file `{}`", from.display()))
                    .hint("name the file with `--from PATH`"),
            );
        }
        Err(e) => {
            return Err(Failure::new(format!("Cannot read `{}`", from.display()))
                .cause(e.to_string())
                .maybe_hint(e.hint()));
        }
    };
    // No local run may change the file while it is copied, nor a remote one the target.
    let (_local_lock, _) = LocalLock::acquire(
        &from,
        crate::state::lock::LockInfo::current(uuid::Uuid::new_v4().to_string(), "state migrate"),
    )
    .map_err(|e| Failure::new(e.to_string()).maybe_hint(e.hint()))?;
    let _lock = lock_state(
        printer,
        target.store(),
        "state migrate",
        &target.flags,
        &target.path,
    )?;
    if let Some(current) = target.load()?
        && current == incoming
    {
        printer.info(&format!(
            "`{}` already holds this state (lineage {}, serial {}); nothing to do.",
            target.store(),
            current.lineage,
            current.serial
        ));
        return Ok(());
    }
    replace(
        printer,
        &target,
        incoming,
        &format!("`{}`", from.display()),
        force,
    )?;
    moved(printer, &target, &local, blueprint)
}

/// After a migration: marks the local file moved, so no later run works on it by mistake, and
/// says what keeps the blueprint on the new state.
fn moved(
    printer: &Printer,
    target: &Target,
    local: &LocalStore,
    blueprint: &Path,
) -> Result<(), Failure> {
    let StateStore::Gcs(gcs) = target.store() else {
        return Ok(());
    };
    let to = gcs.location().url();
    local.mark_moved(&to).map_err(|e| {
        Failure::new(format!(
            "The state was copied to `{to}`, but the local file could not be marked moved"
        ))
        .cause(e.to_string())
        .hint(format!(
            "runs without `--state-bucket` may still use `{}`: delete it, or point the blueprint's [state] at the bucket",
            local.path().display()
        ))
    })?;
    let marker = local.moved_marker();
    match &target.blueprint.state {
        blueprint::StateBackend::Gcs { .. } => printer.info(&format!(
            "The blueprint's [state] names `{to}`; the local file `{}` is no longer read (marked by `{}`): keep it as a backup, or delete both.",
            local.path().display(),
            marker.display()
        )),
        blueprint::StateBackend::Local { .. } => {
            let (bucket, prefix) = (&gcs.location().bucket, gcs.location().prefix());
            printer.info(&format!(
                "The state is now in `{to}`, but `{}` still keeps it in `{}` ([state] is unset or local): \
                 commands run without `--state-bucket {bucket}` would read that file, so it is marked moved \
                 (`{}`) and refused until you add this to the blueprint:\n\n[state]\nbackend = \"gcs\"\nbucket = \"{bucket}\"\nprefix = \"{prefix}\"\n",
                blueprint.display(),
                local.path().display(),
                marker.display()
            ));
        }
    }
    Ok(())
}

/// Writes `incoming` as the state, as it is, after the lineage, blueprint and serial checks.
fn replace(
    printer: &Printer,
    target: &Target,
    incoming: State,
    source: &str,
    force: bool,
) -> Result<(), Failure> {
    let store = target.store();
    let current = store.load().map_err(|e| load_failure(store, &e))?;
    let mut refusals = Vec::new();
    if incoming.blueprint != target.blueprint.name {
        refusals.push(format!(
            "{source} is the state of blueprint `{}`, not `{}`",
            incoming.blueprint, target.blueprint.name
        ));
    }
    if let Some(current) = &current {
        if current.lineage != incoming.lineage {
            refusals.push(format!(
                "{source} belongs to another state history: lineage `{}`, while `{store}` has lineage `{}`",
                incoming.lineage, current.lineage
            ));
        } else if incoming.serial <= current.serial {
            refusals.push(format!(
                "{source} has serial {}, not newer than serial {} in `{store}`: writing it would undo changes",
                incoming.serial, current.serial
            ));
        }
    }
    if !refusals.is_empty() && !force {
        let mut failure = Failure::new(format!("Refusing to replace state `{store}`"));
        for refusal in refusals {
            failure = failure.cause(refusal);
        }
        return Err(failure.hint(format!(
            "check with `a3ctl state pull`; pass `--force` to write it anyway ({})",
            store.earlier_copies()
        )));
    }
    target.save(&incoming)?;
    printer.info(&format!(
        "Wrote {source} to `{store}` (lineage {}, serial {}).",
        incoming.lineage, incoming.serial
    ));
    Ok(())
}

/// The state `state push` writes: a regular file, or standard input for `-`, at most 64 MiB
/// either way ([`files::STATE`]).
fn read_state_file(file: &Path) -> Result<State, Failure> {
    let bytes = if file == Path::new("-") {
        files::read_stream(std::io::stdin().lock(), Path::new("-"), files::STATE)
    } else {
        files::read(file, files::STATE)
    }
    .map_err(|e| Failure::file(&e))?;
    store::parse(&bytes, file).map_err(|e| {
        Failure::new(format!("`{}` is not an a3ctl state", file.display())).cause(e.to_string())
    })
}

/// Refuses arguments given blueprint first (Terraform's `state show ADDR` has no blueprint, so
/// `state show BLUEPRINT ADDR` is an easy slip): the last argument is a resource address and no
/// file, while an address argument is a file. Without this the address is read as a blueprint
/// path that "does not exist".
fn swapped(
    global: &Global,
    command: &str,
    addrs: &[&String],
    blueprint: &Path,
) -> Result<(), Failure> {
    let Some(last) = blueprint.to_str() else {
        return Ok(());
    };
    // The blueprint given first: every argument moves one place to the left.
    let file = addrs[0].as_str();
    if blueprint.exists() || last.parse::<Addr>().is_err() || !Path::new(file).is_file() {
        return Ok(());
    }
    let mut order: Vec<&str> = addrs[1..].iter().map(|a| a.as_str()).collect();
    order.push(last);
    order.push(file);
    let usage = match command {
        "mv" => "FROM TO BLUEPRINT",
        _ => "ADDR BLUEPRINT",
    };
    Err(Failure::new(format!(
        "`{file}` is a file and `{last}` a resource address: `a3ctl state {command}` takes {usage}, the blueprint last"
    ))
    .hint(format!(
        "run `a3ctl {}state {command} {}`",
        state_flags(global),
        order.join(" ")
    )))
}

fn parse_addr(text: &str) -> Result<Addr, Failure> {
    text.parse::<Addr>().map_err(|e| {
        Failure::new(e.to_string()).hint("`a3ctl state list` lists the recorded addresses")
    })
}

/// Why `a3ctl state rm` / `state mv` refused, with what to do.
fn edit_failure(target: &Target, what: &str, addr: &Addr, error: EditError) -> Failure {
    match error {
        EditError::Pending { .. } => {
            Failure::new(error.to_string()).hint("run `a3ctl apply` to finish it first")
        }
        EditError::NotRecorded(_) => Failure::new(format!(
            "Cannot {what} `{addr}`: {error} `{}`",
            target.store()
        ))
        .hint("`a3ctl state list` lists the recorded addresses"),
        EditError::KindChange { from, .. } => {
            Failure::new(format!("Cannot {what} `{addr}`: {error}"))
                .hint(format!("the new address must start with `{from}.`"))
        }
        EditError::Taken(_) => Failure::new(format!(
            "Cannot {what} `{addr}`: `{addr}` is already in state `{}`",
            target.store()
        ))
        .hint(format!(
            "remove it first with `a3ctl state rm {addr} BLUEPRINT` if it is obsolete"
        )),
    }
}

fn warn_pending(printer: &Printer, state: &State) {
    if !state.pending.is_empty() {
        printer.info(&format!(
            "warning: {} operation(s) from an interrupted apply are still recorded; `a3ctl apply` finishes them.",
            state.pending.len()
        ));
    }
}

fn pretty(value: &impl serde::Serialize) -> Result<String, Failure> {
    serde_json::to_string_pretty(value)
        .map_err(|e| Failure::new("Cannot encode the state").cause(e.to_string()))
}
