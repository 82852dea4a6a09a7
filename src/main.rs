//! The `a3ctl` binary: parses the command line, runs the command, maps the outcome to an exit code.

use a3ctl::cli::Cli;
use a3ctl::logging::{self, LogOptions};
use clap::Parser;
use std::process::ExitCode;

fn main() -> ExitCode {
    // The Google clients use rustls with aws-lc-rs; make it the process default so no TLS
    // configuration has to guess
    // (https://docs.rs/rustls/latest/rustls/crypto/struct.CryptoProvider.html).
    let _ = rustls::crypto::aws_lc_rs::default_provider().install_default();
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            // `--help` and `--version` print on stdout and succeed. A usage error exits 1, not
            // clap's 2: 2 is what `plan --detailed-exitcode` means by "changes present", and a
            // CI script must not read a mistyped flag as changes.
            let _ = e.print();
            return if e.use_stderr() {
                ExitCode::FAILURE
            } else {
                ExitCode::SUCCESS
            };
        }
    };
    let log = LogOptions {
        verbosity: cli.global.verbose,
        file: cli.global.log_file.clone(),
    };
    if let Err(e) = logging::init(&log) {
        eprintln!("error: {e}\n  hint: pass a --log-file path in a directory you can write to");
        return ExitCode::FAILURE;
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
            return ExitCode::FAILURE;
        }
    };
    runtime.block_on(a3ctl::commands::run(cli)).into()
}
