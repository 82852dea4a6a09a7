//! `a3ctl plan`: refresh, diff, show; optionally save the plan for `a3ctl apply FILE`.

use super::ExitStatus;
use super::session::Session;
use crate::cli::{self, Global, PlanArgs};
use crate::files;
use crate::plan::planner;
use crate::plan::select::{self, Selection};
use crate::plan::{Existing, Plan};
use crate::resource::Addr;
use crate::state::State;
use crate::ui::diagnostics::Failure;
use crate::ui::{Printer, plan_view};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::fmt::Write;
use std::path::{Path, PathBuf};

/// The format version of saved plan files. 2: a plan may carry adoptions, which an a3ctl that
/// reads format 1 would silently drop (and then try to create what exists). 3: a plan may be
/// partial (`selection`, from `--target`/`--exclude`), which an a3ctl that reads format 2 would
/// apply without saying so. Files of formats 1 and 2 are still read; their GPU NIC addresses
/// (counted from 0, like state format 1) are renumbered as they are read
/// ([`crate::plan::renumber_gpu_addresses`]).
pub const PLAN_FILE_FORMAT: u32 = 3;

/// A saved plan: the plan plus what it was made from, so `apply` can refuse it when any of that
/// has moved.
#[derive(Debug, Serialize, Deserialize)]
pub struct PlanFile {
    pub format: u32,
    pub a3ctl_version: String,
    pub blueprint_path: PathBuf,
    /// sha256 of the blueprint text.
    pub blueprint_sha256: String,
    /// sha256 of the blueprint's meaning ([`meaning_sha256`]): what `apply` compares, so a
    /// comment or a reformat does not invalidate the plan. Absent in files of older a3ctl
    /// versions, which are compared by their bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blueprint_meaning_sha256: Option<String>,
    pub sandbox: bool,
    /// Whether a state existed when the plan was made (a plan against no state carries an empty
    /// lineage and serial 0).
    pub state_existed: bool,
    pub plan: Plan,
    /// How `--target`/`--exclude` narrowed the plan; `None` for a whole plan.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selection: Option<Selection>,
}

pub async fn run(global: &Global, printer: Printer, args: PlanArgs) -> Result<ExitStatus, Failure> {
    if args.refresh_only {
        return super::refresh_only::plan(global, printer, &args).await;
    }
    let session = Session::open(global, printer, &args.blueprint).await?;
    let (state, existed) = session.load_state()?;
    if !state.pending.is_empty() {
        printer.info(&format!(
            "warning: {} operation(s) from an interrupted apply are still recorded; `a3ctl apply` finishes waiting on them first.",
            state.pending.len()
        ));
    }
    let mut plan = session
        .plan_unprotected(&state, args.destroy, args.adopt)
        .await?;
    if !existed {
        plan.lineage = String::new();
        plan.serial = 0;
    }
    let listing = if args.destroy {
        format!(
            "`a3ctl state list {}{}` lists the recorded addresses",
            super::session::state_flags(global),
            args.blueprint.display()
        )
    } else {
        format!(
            "`a3ctl graph {}` lists the addresses",
            args.blueprint.display()
        )
    };
    let selection = shape(
        &session,
        &mut plan,
        &state,
        &args.selection,
        &args.replace,
        &listing,
    )?;
    // Without a record of them, the plan's creates may exist already (a lost state file).
    let found = if args.adopt || args.destroy {
        None
    } else {
        Some(Found::new(
            session.look_for_existing(&plan, &state).await,
            global,
            &args.blueprint,
            &session.blueprint.name,
        ))
    };
    let moves = move_options(&args.delete_first, args.batch_size)?;
    let preflight = if args.skip_preflight {
        crate::plan::moves::choose(&mut plan, &state, &moves);
        session.refuse_moves(&plan)
    } else {
        session.preflight(&mut plan, &state, &moves).await
    };
    let preflight = preflight.map_err(|f| match &found {
        Some(found) => found.explain(f, &plan),
        None => f,
    });
    printer.out(&render(
        &printer,
        &plan,
        selection.as_ref(),
        found.as_ref(),
        args.json,
        global.verbose > 0,
    ));
    if !args.json
        && !printer.quiet
        && let Some(warning) = crate::ui::destroy_warning::warning(&plan)
    {
        printer.err(&format!("\n{warning}"));
    }
    // After the plan is shown; an unsatisfiable plan is not saved.
    preflight?;
    if let Some(out) = &args.out {
        let file = PlanFile {
            format: PLAN_FILE_FORMAT,
            a3ctl_version: env!("CARGO_PKG_VERSION").to_string(),
            blueprint_path: args.blueprint.clone(),
            blueprint_sha256: sha256_file(&args.blueprint)?,
            blueprint_meaning_sha256: meaning_sha256(&args.blueprint)?,
            sandbox: global.sandbox,
            state_existed: existed,
            plan: plan.clone(),
            selection: selection.clone(),
        };
        let bytes = serde_json::to_vec_pretty(&file)
            .map_err(|e| Failure::new("Cannot encode the plan").cause(e.to_string()))?;
        crate::state::lock::write_private(out, &bytes).map_err(|e| {
            Failure::new(format!("Cannot write plan file `{}`", out.display())).cause(e.to_string())
        })?;
        // The same flags: a sandbox plan applies in the sandbox, a GCS state is found again.
        printer.info(&format!(
            "\nSaved the plan to `{}`. To carry it out exactly, run:\n    a3ctl {}apply {}",
            out.display(),
            super::session::state_flags(global),
            out.display()
        ));
    }
    Ok(if args.detailed_exitcode && !plan.is_empty() {
        ExitStatus::Changes
    } else {
        ExitStatus::Success
    })
}

/// Hex sha256 of a blueprint's bytes (read as [`files::read`] reads a blueprint: a regular
/// file, at most 1 MiB).
pub fn sha256_file(path: &Path) -> Result<String, Failure> {
    use sha2::{Digest, Sha256};
    let bytes = files::read(path, files::BLUEPRINT).map_err(|e| Failure::file(&e))?;
    Ok(Sha256::digest(&bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect())
}

/// Hex sha256 of what a blueprint means: its TOML parsed and written back canonically (tables'
/// keys sorted, no comments, no layout), so two texts that differ only in comments, whitespace,
/// key order, quoting or inline-versus-standard tables hash alike. `None` when it does not parse
/// as TOML (the caller then has only the bytes to go by).
pub fn meaning_sha256(path: &Path) -> Result<Option<String>, Failure> {
    use sha2::{Digest, Sha256};
    let bytes = files::read(path, files::BLUEPRINT).map_err(|e| Failure::file(&e))?;
    let Ok(text) = std::str::from_utf8(&bytes) else {
        return Ok(None);
    };
    let Ok(table) = text.parse::<toml::Table>() else {
        return Ok(None);
    };
    let canonical = canonical(serde_json::to_value(table).unwrap_or_default());
    Ok(Some(
        Sha256::digest(canonical.to_string().as_bytes())
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect(),
    ))
}

/// `value` with every object's keys sorted.
fn canonical(value: serde_json::Value) -> serde_json::Value {
    use serde_json::Value;
    match value {
        Value::Object(map) => {
            let mut entries: Vec<(String, Value)> =
                map.into_iter().map(|(k, v)| (k, canonical(v))).collect();
            entries.sort_by(|a, b| a.0.cmp(&b.0));
            Value::Object(entries.into_iter().collect())
        }
        Value::Array(items) => Value::Array(items.into_iter().map(canonical).collect()),
        other => other,
    }
}

/// Reads a plan file, if `path` is one (JSON with a `plan`), else `None` (it is then a
/// blueprint, which the caller loads). Only a regular file of at most 64 MiB is read
/// ([`files::PLAN_OR_BLUEPRINT`]): a FIFO or a device is refused without blocking.
pub fn read_plan_file(path: &Path) -> Result<Option<PlanFile>, Failure> {
    let bytes = files::read(path, files::PLAN_OR_BLUEPRINT).map_err(|e| Failure::file(&e))?;
    let first = bytes.iter().find(|b| !b.is_ascii_whitespace());
    if first != Some(&b'{') {
        return Ok(None);
    }
    let file: PlanFile = serde_json::from_slice(&bytes).map_err(|e| {
        Failure::new(format!("`{}` is not an a3ctl plan file", path.display())).cause(e.to_string())
    })?;
    if file.format > PLAN_FILE_FORMAT {
        return Err(Failure::new(format!(
            "Plan file `{}` was written by a newer a3ctl",
            path.display()
        )));
    }
    let mut file = file;
    if file.format <= 2 {
        crate::plan::renumber_gpu_addresses(&mut file.plan);
    }
    Ok(Some(file))
}

/// `--delete-first ADDR` (repeatable) and `--batch-size K`, the user's say in how replaced node
/// pools move ([`crate::plan::moves`]).
pub fn move_options(
    delete_first: &[String],
    batch_size: Option<u64>,
) -> Result<crate::plan::moves::MoveOptions, Failure> {
    let mut options = crate::plan::moves::MoveOptions {
        batch_size,
        ..Default::default()
    };
    for text in delete_first {
        let addr: Addr = text.parse().map_err(|e| {
            Failure::new(format!("--delete-first {text}: {e}"))
                .hint("name a node pool's address, e.g. `node_pool.a3mega`")
        })?;
        if addr.kind != crate::resource::Kind::NodePool {
            return Err(Failure::new(format!(
                "--delete-first {text}: only a node pool moves, `{addr}` is not one"
            ))
            .hint("name a node pool's address, e.g. `node_pool.a3mega`"));
        }
        options.delete_first.insert(addr);
    }
    Ok(options)
}

/// Applies `--replace`, then `--target`/`--exclude`, to a fresh plan made from `state` (by
/// `Session::plan_unprotected`), then enforces `prevent_destroy` on what the plan keeps. Returns
/// the selection to keep with the plan (`None` for a whole plan).
pub fn shape(
    session: &Session,
    plan: &mut Plan,
    state: &State,
    selection: &cli::Selection,
    replace: &[String],
    listing: &str,
) -> Result<Option<Selection>, Failure> {
    let asked = !selection.targets.is_empty() || !selection.excludes.is_empty();
    if (asked || !replace.is_empty()) && !state.pending.is_empty() {
        return Err(Failure::new(format!(
            "--target, --exclude and --replace need a state without interrupted operations: {} operation(s) of an interrupted apply are still recorded",
            state.pending.len()
        ))
        .hint("run a whole `a3ctl apply` (or `a3ctl destroy`) first to finish them"));
    }
    let mut replaced: Vec<Addr> = Vec::new();
    for text in replace {
        let addr: Addr = text
            .trim()
            .parse()
            .map_err(|e: crate::resource::AddrParseError| {
                Failure::new(format!("--replace {text}: {e}"))
                    .hint("`a3ctl state list BLUEPRINT` lists the recorded addresses")
            })?;
        if !replaced.contains(&addr) {
            replaced.push(addr);
        }
    }
    if !replaced.is_empty() {
        planner::force_replace(plan, state, &replaced)
            .map_err(|e| Failure::new(e.message).hint(e.hint))?;
    }
    let mut request = select::Request {
        targets: selection.targets.clone(),
        excludes: selection.excludes.clone(),
    };
    // A replacement asked for is part of what a targeted plan does.
    if !request.targets.is_empty() {
        for addr in &replaced {
            let text = addr.to_string();
            if !request.targets.contains(&text) {
                request.targets.push(text);
            }
        }
    }
    let selection = select::select(plan, state, &request, listing)
        .map_err(|e| Failure::new(e.message).hint(e.hint))?;
    // On what the plan keeps: a protected resource left out of a partial plan is not in the way.
    planner::protect(plan).map_err(|e| session.protection_failure(&e))?;
    Ok(selection)
}

/// The planned creates found to exist already ([`Existing`]), with what the text about them
/// names: the command that adopts them, the blueprint whose mark they carry.
pub struct Found {
    pub existing: Existing,
    /// `a3ctl plan --adopt [state flags] BLUEPRINT`, the blueprint as given.
    pub adopt: String,
    pub blueprint: String,
}

impl Found {
    pub fn new(existing: Existing, global: &Global, path: &Path, blueprint: &str) -> Found {
        Found {
            existing,
            adopt: format!(
                "a3ctl plan --adopt {}{}",
                super::session::state_flags(global),
                path.display()
            ),
            blueprint: blueprint.to_string(),
        }
    }

    /// A failed preflight of a plan whose creates partly exist: its needs count them all, so the
    /// failure says so and leads with the command that adopts them.
    pub fn explain(&self, mut failure: Failure, plan: &Plan) -> Failure {
        let n = self.existing.adoptable.len();
        if n == 0 {
            return failure;
        }
        failure = failure.cause(format!(
            "these needs assume creating all {} resource(s) of the plan, but {n} of them already exist with this blueprint's mark (see the note at the top of the plan)",
            plan.summary().add
        ));
        let rest = failure.hint.take();
        let mut hint = format!(
            "take the existing resources over first: `{}`; its plan needs only what is missing",
            self.adopt
        );
        if let Some(rest) = rest {
            hint = format!("{hint}\n{rest}");
        }
        failure.hint(hint)
    }

    fn render(&self, printer: &Printer, plan: &Plan, verbose: bool) -> String {
        crate::ui::existing_view::render(
            printer,
            &self.existing,
            &self.blueprint,
            plan.summary().add,
            &self.adopt,
            verbose,
        )
    }
}

/// The plan as `a3ctl plan` prints it on stdout: what it found of its creates already there
/// (first: after a lost state, it matters more than anything after it), the text view and, for a
/// partial plan, the warning that says so; or the JSON view with the selection and what was found.
pub fn render(
    printer: &Printer,
    plan: &Plan,
    selection: Option<&Selection>,
    found: Option<&Found>,
    json: bool,
    verbose: bool,
) -> String {
    if json {
        let mut value = plan_view::json(plan);
        if let Value::Object(map) = &mut value {
            // Only when something was found: a saved plan does not keep what was found, so
            // `show --json` of it prints exactly what this printed.
            if let Some(found) = found.filter(|f| !f.existing.is_empty()) {
                map.insert(
                    "existing".into(),
                    crate::ui::existing_view::json(&found.existing, &found.adopt),
                );
            }
            map.insert("partial".into(), Value::Bool(selection.is_some()));
            if let Some(selection) = selection {
                map.insert(
                    "selection".into(),
                    serde_json::to_value(selection).unwrap_or(Value::Null),
                );
            }
        }
        return format!("{value}\n");
    }
    if printer.quiet {
        let partial = if selection.is_some() {
            " (a partial plan)"
        } else {
            ""
        };
        let brief = plan_view::brief(printer, plan);
        let adopt = found
            .map(|f| crate::ui::existing_view::brief(&f.existing, &f.adopt))
            .unwrap_or_default();
        return format!("{adopt}{}{partial}\n", brief.trim_end());
    }
    let mut out = found
        .map(|f| f.render(printer, plan, verbose))
        .unwrap_or_default();
    out.push_str(&plan_view::render_with(printer, plan, verbose));
    if let Some(selection) = selection {
        out.push_str(&partial_note(printer, plan, selection));
    }
    out
}

/// Terraform's "Resource targeting is in effect" warning, with what the plan leaves out.
pub fn partial_note(printer: &Printer, plan: &Plan, selection: &Selection) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "\n{} This plan is partial ({})",
        printer.bold("Warning:"),
        selection.flags()
    );
    let scope = if plan.destroy {
        "destroys only the selected resources and what depends on them"
    } else {
        "holds only the selected resources and what they depend on"
    };
    let _ = writeln!(
        out,
        "  It {scope}, so it may not be everything the blueprint asks for."
    );
    if !selection.left_out.is_empty() {
        const SHOWN: usize = 10;
        let mut names: Vec<String> = selection
            .left_out
            .iter()
            .take(SHOWN)
            .map(|a| format!("`{a}`"))
            .collect();
        if selection.left_out.len() > SHOWN {
            names.push(format!("and {} more", selection.left_out.len() - SHOWN));
        }
        let _ = writeln!(
            out,
            "  Left out: {} change(s): {}.",
            selection.left_out.len(),
            names.join(", ")
        );
    }
    let _ = writeln!(
        out,
        "  Use --target and --exclude for exceptional situations (recovering from a mistake, working around a limit); run `a3ctl {}` without them to see everything.",
        if plan.destroy {
            "plan --destroy"
        } else {
            "plan"
        }
    );
    out
}
