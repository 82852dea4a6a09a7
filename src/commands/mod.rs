//! One module per subcommand. Each loads what it needs, runs the pipeline, renders through
//! [`crate::ui`], and returns an [`ExitStatus`]; `main.rs` only dispatches.

pub mod apply;
pub mod docs;
pub mod graph;
pub mod import;
pub mod init;
pub mod kubeconfig;
pub mod output;
pub mod plan;
pub mod refresh_only;
pub mod sandbox;
pub mod sandbox_world;
pub mod session;
pub mod show;
pub mod state;
pub mod unlock;
pub mod validate;
pub mod verify;

use crate::cli::{Cli, Command};
use crate::ui::Printer;
use crate::ui::diagnostics::Failure;
use std::process::ExitCode;

/// How a command ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExitStatus {
    Success,
    /// `plan --detailed-exitcode` found changes.
    Changes,
    Failure,
}

impl From<ExitStatus> for ExitCode {
    fn from(s: ExitStatus) -> ExitCode {
        match s {
            ExitStatus::Success => ExitCode::SUCCESS,
            ExitStatus::Changes => ExitCode::from(2),
            ExitStatus::Failure => ExitCode::FAILURE,
        }
    }
}

/// Runs the parsed command line.
pub async fn run(cli: Cli) -> ExitStatus {
    let printer = Printer::from_env(cli.global.quiet);
    tracing::debug!(command = ?cli.command, "a3ctl {}", env!("CARGO_PKG_VERSION"));
    let result = match cli.command {
        Command::Init(args) => init::run(&printer, *args),
        Command::Validate { blueprint, json } => {
            validate::run(&printer, &blueprint, json, cli.global.sandbox)
        }
        Command::Graph { blueprint, format } => graph::run(&printer, &blueprint, format),
        Command::Plan(args) => plan::run(&cli.global, printer, args).await,
        Command::Apply(args) => apply::run(&cli.global, printer, apply::Request::Apply(args)).await,
        Command::Destroy(args) => {
            apply::run(&cli.global, printer, apply::Request::Destroy(args)).await
        }
        Command::Output(args) => output::run(&cli.global, &printer, args).await,
        Command::Show(args) => show::run(&printer, args, cli.global.verbose > 0),
        Command::Verify(args) => verify::run(&cli.global, printer, args).await,
        Command::Kubeconfig(args) => kubeconfig::run(&cli.global, &printer, args).await,
        Command::Import {
            addr,
            id,
            blueprint,
        } => import::run(&cli.global, printer, &addr, &id, &blueprint).await,
        Command::ForceUnlock {
            id,
            blueprint,
            force,
        } => unlock::run(&cli.global, &printer, &id, &blueprint, force).await,
        Command::State(command) => state::run(&cli.global, &printer, command).await,
        Command::Completions { shell } => {
            docs::completions(&printer, shell);
            Ok(ExitStatus::Success)
        }
        Command::Man { out } => docs::man(&printer, out.as_deref()),
        Command::Sandbox(command) => sandbox::run(&cli.global, &printer, command).await,
    };
    match result {
        Ok(status) => status,
        Err(failure) => {
            printer.err(&failure.render(&printer));
            ExitStatus::Failure
        }
    }
}

/// Asks the user to type `yes`; refuses without a terminal.
pub fn confirm(printer: &Printer, question: &str, details: &str) -> Result<bool, Failure> {
    use std::io::{BufRead, IsTerminal};
    if !std::io::stdin().is_terminal() {
        return Err(Failure::new(
            "Refusing to continue without confirmation: standard input is not a terminal",
        )
        .hint("pass --auto-approve to skip the question in scripts and CI"));
    }
    printer.err(&format!(
        "\n{}\n  {details}\n  Only 'yes' will be accepted to approve.\n\n  Enter a value: ",
        printer.bold(question)
    ));
    let mut line = String::new();
    std::io::stdin()
        .lock()
        .read_line(&mut line)
        .map_err(|e| Failure::new("Cannot read the answer").cause(e.to_string()))?;
    Ok(line.trim() == "yes")
}
