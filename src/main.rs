//! a3ctl: provision GKE clusters for A3 High / A3 Mega GPU training from one declarative blueprint.
use clap::Parser;

/// Provision GKE clusters for A3 High / A3 Mega GPU training from one declarative blueprint.
#[derive(Parser)]
#[command(version)]
struct Cli {}

fn main() {
    let _ = Cli::parse();
}
