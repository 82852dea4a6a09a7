//! `a3ctl force-unlock ID BLUEPRINT`: remove a lock left by a run that died elsewhere, from a
//! local state or a GCS one.

use super::session::Connection;
use super::{ExitStatus, confirm};
use crate::blueprint;
use crate::cli::Global;
use crate::ui::Printer;
use crate::ui::diagnostics::Failure;
use std::path::Path;

pub async fn run(
    global: &Global,
    printer: &Printer,
    id: &str,
    path: &Path,
    force: bool,
) -> Result<ExitStatus, Failure> {
    let bp = blueprint::load(path).map_err(|e| Failure::blueprint(printer, &e))?;
    let connection = Connection::open(global, &bp, path, false).await?;
    if !force
        && !confirm(
            printer,
            "Do you really want to force-unlock?",
            "a3ctl will remove the lock on the state; a run still using it may then corrupt it.",
        )?
    {
        return Err(Failure::new("Force-unlock cancelled"));
    }
    let held = connection
        .store
        .force_unlock(id)
        .map_err(|e| Failure::new(e.to_string()).maybe_hint(e.hint()))?;
    printer.info(&format!(
        "Lock `{}` held by {} (pid {}, `a3ctl {}`) since {} removed from `{}`.",
        held.id, held.holder, held.pid, held.operation, held.created, connection.store
    ));
    Ok(ExitStatus::Success)
}
