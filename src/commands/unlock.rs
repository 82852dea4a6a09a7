//! `a3ctl force-unlock ID BLUEPRINT`: remove a lock left by a run that died elsewhere.

use super::{ExitStatus, confirm};
use crate::blueprint;
use crate::cli::Global;
use crate::state::lock::LocalLock;
use crate::ui::Printer;
use crate::ui::diagnostics::Failure;
use std::path::Path;

pub fn run(
    global: &Global,
    printer: &Printer,
    id: &str,
    path: &Path,
    force: bool,
) -> Result<ExitStatus, Failure> {
    let bp = blueprint::load(path).map_err(|e| Failure::blueprint(printer, &e))?;
    let state_path = super::session::state_path(&bp, global.sandbox)?;
    if !force
        && !confirm(
            printer,
            "Do you really want to force-unlock?",
            "a3ctl will remove the lock on the state; a run still using it may then corrupt it.",
        )?
    {
        return Err(Failure::new("Force-unlock cancelled"));
    }
    let held = LocalLock::force_unlock(&state_path, id)
        .map_err(|e| Failure::new(e.to_string()).maybe_hint(e.hint()))?;
    printer.info(&format!(
        "Lock `{}` held by {} (pid {}) since {} removed.",
        held.id, held.holder, held.pid, held.created
    ));
    Ok(ExitStatus::Success)
}
