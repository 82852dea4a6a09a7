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

/// The whole program behind `src/main.rs`: parses the command line, runs the command on a Tokio
/// runtime, maps the outcome to an exit code.
///
/// It lives in the library, not the binary, so the library polls every command's future itself:
/// an `async fn`'s body is compiled in the crate that polls it, and when only the binary did, the
/// binary compiled every command's futures and the Google clients' generic stubs after the
/// library had compiled its own share (a cold release build's binary took 254 s of its 15
/// minutes; with this, the library and the binary together take about 35% less CPU).
pub fn main() -> std::process::ExitCode {
    // The Google clients use rustls with aws-lc-rs; make it the process default so no TLS
    // configuration has to guess
    // (https://docs.rs/rustls/latest/rustls/crypto/struct.CryptoProvider.html).
    let _ = rustls::crypto::aws_lc_rs::default_provider().install_default();
    let cli = match <crate::cli::Cli as clap::Parser>::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            // `--help` and `--version` print on stdout and succeed. A usage error exits 1, not
            // clap's 2: 2 is what `plan --detailed-exitcode` means by "changes present", and a
            // CI script must not read a mistyped flag as changes.
            let _ = e.print();
            return if e.use_stderr() {
                std::process::ExitCode::FAILURE
            } else {
                std::process::ExitCode::SUCCESS
            };
        }
    };
    let log = crate::logging::LogOptions {
        verbosity: cli.global.verbose,
        file: cli.global.log_file.clone(),
    };
    if let Err(e) = crate::logging::init(&log) {
        eprintln!("error: {e}\n  hint: pass a --log-file path in a directory you can write to");
        return std::process::ExitCode::FAILURE;
    }
    // The generated Google Cloud models are large and their deserializers recurse deeply: a
    // cluster read from inside an apply step overflowed tokio's default 2 MiB worker stack in
    // debug builds. 16 MiB is reserved address space, committed only as it is used.
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_stack_size(16 * 1024 * 1024)
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return std::process::ExitCode::FAILURE;
        }
    };
    runtime.block_on(crate::commands::run(cli)).into()
}
