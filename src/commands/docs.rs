//! `a3ctl completions SHELL` and `a3ctl man`: generated from the command line's definition
//! ([`clap_complete`], [`clap_mangen`]), so they cannot fall behind it.

use super::ExitStatus;
use crate::cli::Cli;
use crate::ui::Printer;
use crate::ui::diagnostics::Failure;
use clap::CommandFactory;
use std::path::Path;

/// Prints the completion script for `shell` on stdout.
pub fn completions(printer: &Printer, shell: clap_complete::Shell) {
    let mut command = Cli::command();
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut command, "a3ctl", &mut script);
    printer.out(&String::from_utf8_lossy(&script));
}

/// Prints a3ctl(1), or writes every page into `out`.
pub fn man(printer: &Printer, out: Option<&Path>) -> Result<ExitStatus, Failure> {
    let command = Cli::command();
    match out {
        None => {
            let mut page = Vec::new();
            clap_mangen::Man::new(command)
                .render(&mut page)
                .map_err(|e| Failure::new("Cannot render the manual page").cause(e.to_string()))?;
            printer.out(&String::from_utf8_lossy(&page));
        }
        Some(dir) => {
            let cannot = |e: std::io::Error| {
                Failure::new(format!(
                    "Cannot write the manual pages into `{}`",
                    dir.display()
                ))
                .cause(e.to_string())
                .hint("choose a directory you can write to with --out")
            };
            std::fs::create_dir_all(dir).map_err(cannot)?;
            clap_mangen::generate_to(command, dir).map_err(cannot)?;
            let mut pages: Vec<String> = std::fs::read_dir(dir)
                .map_err(cannot)?
                .filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.starts_with("a3ctl") && n.ends_with(".1"))
                .collect();
            pages.sort();
            printer.info(&format!(
                "Wrote {} manual pages into {}: {}",
                pages.len(),
                dir.display(),
                pages.join(", ")
            ));
        }
    }
    Ok(ExitStatus::Success)
}
