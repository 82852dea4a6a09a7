//! `a3ctl plan`: refresh, diff, show; optionally save the plan for `a3ctl apply FILE`.

use super::ExitStatus;
use super::session::Session;
use crate::cli::{Global, PlanArgs};
use crate::files;
use crate::plan::Plan;
use crate::ui::diagnostics::Failure;
use crate::ui::{Printer, plan_view};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The format version of saved plan files. 2: a plan may carry adoptions, which an a3ctl that
/// reads format 1 would silently drop (and then try to create what exists).
pub const PLAN_FILE_FORMAT: u32 = 2;

/// A saved plan: the plan plus what it was made from, so `apply` can refuse it when any of that
/// has moved.
#[derive(Debug, Serialize, Deserialize)]
pub struct PlanFile {
    pub format: u32,
    pub a3ctl_version: String,
    pub blueprint_path: PathBuf,
    /// sha256 of the blueprint text.
    pub blueprint_sha256: String,
    pub sandbox: bool,
    /// Whether a state existed when the plan was made (a plan against no state carries an empty
    /// lineage and serial 0).
    pub state_existed: bool,
    pub plan: Plan,
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
        .plan_adopting(&state, args.destroy, args.adopt)
        .await?;
    if !existed {
        plan.lineage = String::new();
        plan.serial = 0;
    }
    let preflight = if args.skip_preflight {
        Ok(())
    } else {
        session.preflight(&mut plan, &state).await
    };
    if args.json {
        printer.out(&format!("{}\n", plan_view::json(&plan)));
    } else if printer.quiet {
        printer.out(&plan_view::brief(&printer, &plan));
    } else {
        printer.out(&plan_view::render_with(&printer, &plan, global.verbose > 0));
        if let Some(warning) = crate::ui::destroy_warning::warning(&plan) {
            printer.err(&format!("\n{warning}"));
        }
    }
    // After the plan is shown; an unsatisfiable plan is not saved.
    preflight?;
    if let Some(out) = &args.out {
        let file = PlanFile {
            format: PLAN_FILE_FORMAT,
            a3ctl_version: env!("CARGO_PKG_VERSION").to_string(),
            blueprint_path: args.blueprint.clone(),
            blueprint_sha256: sha256_file(&args.blueprint)?,
            sandbox: global.sandbox,
            state_existed: existed,
            plan: plan.clone(),
        };
        let bytes = serde_json::to_vec_pretty(&file)
            .map_err(|e| Failure::new("Cannot encode the plan").cause(e.to_string()))?;
        crate::state::lock::write_private(out, &bytes).map_err(|e| {
            Failure::new(format!("Cannot write plan file `{}`", out.display())).cause(e.to_string())
        })?;
        printer.info(&format!(
            "\nSaved the plan to `{}`. To carry it out exactly, run:\n    a3ctl apply {}",
            out.display(),
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
    Ok(Some(file))
}
