//! `a3ctl show PLANFILE`: a saved plan, as `a3ctl plan` printed it (or as `plan --json`). Reads
//! only the file: no state, no cloud.

use super::ExitStatus;
use super::plan::{read_plan_file, render};
use crate::cli::ShowArgs;
use crate::ui::Printer;
use crate::ui::diagnostics::Failure;

/// `verbose`: every change in full (`-v`), as `plan -v` shows it.
pub fn run(printer: &Printer, args: ShowArgs, verbose: bool) -> Result<ExitStatus, Failure> {
    let Some(file) = read_plan_file(&args.planfile)? else {
        return Err(Failure::new(format!(
            "`{}` is not an a3ctl plan file",
            args.planfile.display()
        ))
        .hint(format!(
            "a plan file is written by `a3ctl plan BLUEPRINT --out FILE`; to see what a blueprint would change, run `a3ctl plan {}`",
            args.planfile.display()
        )));
    };
    printer.out(&render(
        printer,
        &file.plan,
        file.selection.as_ref(),
        None,
        args.json,
        verbose,
    ));
    Ok(ExitStatus::Success)
}
