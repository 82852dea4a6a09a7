//! The `a3ctl` binary: parses the command line, runs the command, maps the outcome to an exit code.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use a3ctl::blueprint::{self, Blueprint, BlueprintError};
use clap::{Parser, Subcommand};
use miette::{GraphicalReportHandler, GraphicalTheme};

/// Provision GKE clusters for A3 High / A3 Mega GPU training from one declarative blueprint.
#[derive(Parser)]
#[command(version)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Check a blueprint without calling any cloud API.
    ///
    /// Reports every problem at once, each with its file, line and column, the offending text
    /// and a hint. Exits with 1 when there are problems, and with 0 after printing a summary of
    /// what the blueprint would create.
    Validate {
        /// Path of the blueprint TOML file, e.g. `blueprints/a3-mega.toml`.
        blueprint: PathBuf,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Validate { blueprint } => validate(&blueprint),
    }
}

fn validate(path: &std::path::Path) -> ExitCode {
    match blueprint::load(path) {
        Ok(blueprint) => {
            let mut stdout = std::io::stdout().lock();
            // A closed pipe is not an error worth reporting.
            let _ = stdout.write_all(success_summary(&blueprint, path).as_bytes());
            ExitCode::SUCCESS
        }
        Err(error) => {
            let mut stderr = std::io::stderr().lock();
            let _ = stderr.write_all(render_error(&error).as_bytes());
            ExitCode::FAILURE
        }
    }
}

fn success_summary(blueprint: &Blueprint, path: &std::path::Path) -> String {
    let summary = blueprint.summary();
    let family = blueprint.family;
    format!(
        "Blueprint `{}` is valid: deployment `{}` in `{}` ({} `{}`)\n\
         Will create {} VPCs (1 primary, {} GPU), {} subnets, {} node pools (1 system, {} GPU), \
         {} GPU node{} with {} GPUs ({}), {} bucket{}, {} repositor{}, {} Filestore instance{}\n",
        path.display(),
        blueprint.name,
        blueprint.zone,
        family.display_name(),
        family.machine_type(),
        summary.vpcs,
        summary.vpcs - 1,
        summary.subnets,
        summary.node_pools,
        summary.node_pools - 1,
        summary.gpu_nodes,
        if summary.gpu_nodes == 1 { "" } else { "s" },
        summary.gpus,
        family.accelerator_type(),
        summary.buckets,
        if summary.buckets == 1 { "" } else { "s" },
        summary.repositories,
        if summary.repositories == 1 {
            "y"
        } else {
            "ies"
        },
        summary.filestores,
        if summary.filestores == 1 { "" } else { "s" },
    )
}

fn render_error(error: &BlueprintError) -> String {
    let colour = std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
        && std::io::stderr().is_terminal();
    let theme = if colour {
        GraphicalTheme::unicode()
    } else {
        GraphicalTheme::unicode_nocolor()
    };
    let handler = GraphicalReportHandler::new_themed(theme).with_width(100);
    let mut out = String::new();
    match error {
        BlueprintError::Read { .. } => {
            let _ = handler.render_report(&mut out, error);
        }
        BlueprintError::Invalid { problems, .. } => {
            for problem in problems {
                let _ = handler.render_report(&mut out, problem);
                out.push('\n');
            }
            out.push_str(&format!("error: {error}\n"));
        }
    }
    out
}
