//! The command line: clap derive structs only, no logic. Doc comments are the `--help` text.

use clap::{Args, Parser, Subcommand, ValueEnum};
use std::path::PathBuf;

/// Provision GKE clusters for A3 High / A3 Mega GPU training from one declarative blueprint.
///
/// A blueprint (TOML) states intent: project, location, machine family and node counts, storage,
/// add-ons. a3ctl expands it into every resource the GPU recipes need — GPU VPCs with MTU 8244, the
/// primary VPC with Cloud NAT, compact placement, a Dataplane V2 multi-network GKE cluster, node
/// pools, Filestore, Artifact Registry, buckets — plans the changes, and applies them in parallel,
/// recording state after every step so an interrupted apply resumes where it stopped.
///
/// Try it with no account: `a3ctl apply --sandbox blueprints/a3-mega.toml` runs against a built-in
/// simulator whose world is kept under `state/sandbox/`.
#[derive(Parser, Debug)]
#[command(version, propagate_version = true, max_term_width = 100)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
    #[command(flatten)]
    pub global: Global,
}

/// Options every command takes.
#[derive(Args, Debug, Clone)]
#[command(next_help_heading = "Global options")]
pub struct Global {
    /// Run against the built-in simulator instead of Google Cloud. Its world and the sandbox's
    /// state are kept under `state/sandbox/`, so plan, apply and destroy work across invocations.
    #[arg(long, global = true, env = "A3CTL_SANDBOX", value_parser = clap::builder::BoolishValueParser::new(), default_value_t = false)]
    pub sandbox: bool,

    /// Print only errors and the requested data.
    #[arg(long, short, global = true)]
    pub quiet: bool,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Check a blueprint without calling any cloud API.
    ///
    /// Reports every problem at once, each with its file, line and column, the offending text
    /// and a hint. Exits with 1 when there are problems, and with 0 after printing a summary of
    /// what the blueprint would create.
    Validate {
        /// Path of the blueprint TOML file, e.g. `blueprints/a3-mega.toml`.
        blueprint: PathBuf,
    },

    /// Print the resource graph of a blueprint (DOT or Mermaid), edges from dependency to
    /// dependent.
    Graph {
        blueprint: PathBuf,
        /// Output format.
        #[arg(long, value_enum, default_value_t = GraphFormat::Dot)]
        format: GraphFormat,
    },

    /// Show what an apply would change.
    ///
    /// Reads every resource recorded in state from the cloud (refresh), compares the blueprint
    /// with what exists, and prints the changes in Terraform's grammar: `+` create, `~` update in
    /// place, `-/+` replace (naming the field that forces it), `-` destroy. Changes made outside
    /// a3ctl are shown as drift.
    Plan(PlanArgs),

    /// Create or update everything the blueprint declares.
    ///
    /// Plans (or takes a saved plan), asks for confirmation, then applies: independent resources
    /// in parallel, one operation at a time per GKE cluster, state saved after every step. A
    /// failure stops only what depends on it. Ctrl-C stops starting new steps and waits for the
    /// running ones; a second Ctrl-C stops waiting (operations stay recorded and resume on the
    /// next apply).
    Apply(ApplyArgs),

    /// Delete everything recorded in the blueprint's state, in reverse dependency order.
    ///
    /// A cluster takes its node pools with it; a bucket that still holds objects is refused unless
    /// the blueprint sets `force_destroy`; resources with `prevent_destroy` stop the destroy.
    /// Nothing outside the state is touched.
    Destroy(DestroyArgs),

    /// Bring one existing cloud resource under the blueprint's management without changing it.
    ///
    /// ADDR is the resource's address in the blueprint's graph (`a3ctl graph BLUEPRINT` lists
    /// them, e.g. `network.primary`, `cluster.main`, `node_pool.system`). ID is its identity in
    /// the cloud, and must be the one the blueprint gives it (a3ctl names everything from the
    /// blueprint's `name`); it may be written as a bare name (`a3high-net`), a path
    /// (`projects/P/global/networks/a3high-net`, `projects/P/locations/R/clusters/a3high`) or a
    /// gcloud selfLink / URL. a3ctl reads the live resource and records its live configuration in
    /// state, so `a3ctl plan` then shows exactly how it differs from the blueprint. Nothing in the
    /// cloud is changed. To take over everything a blueprint declares at once, use
    /// `a3ctl plan --adopt` / `a3ctl apply --adopt`.
    Import {
        /// The resource address, e.g. `network.primary`.
        addr: String,
        /// The cloud identity, e.g. `projects/my-project/global/networks/a3high-net` or
        /// `a3high-net`.
        id: String,
        /// The blueprint that declares ADDR, e.g. `blueprints/a3-high.toml`.
        blueprint: PathBuf,
    },

    /// Remove a stale state lock left by a run that died on another machine.
    #[command(name = "force-unlock")]
    ForceUnlock {
        /// The lock id printed in the "is locked by" error.
        id: String,
        blueprint: PathBuf,
        /// Do not ask for confirmation.
        #[arg(long)]
        force: bool,
    },
}

#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum GraphFormat {
    Dot,
    Mermaid,
}

#[derive(Args, Debug)]
pub struct PlanArgs {
    pub blueprint: PathBuf,
    /// Print the plan as JSON on stdout.
    #[arg(long)]
    pub json: bool,
    /// Exit with 0 when there are no changes, 2 when there are (with --refresh-only: when
    /// something changed outside a3ctl), 1 on error.
    #[arg(long)]
    pub detailed_exitcode: bool,
    /// Save the plan to FILE; `a3ctl apply FILE` carries out exactly this plan, and refuses it if
    /// the state has changed since.
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Plan the destruction of everything in state.
    #[arg(long, conflicts_with_all = ["adopt", "refresh_only"])]
    pub destroy: bool,
    /// Take over resources that already exist: every resource the blueprint declares that state
    /// does not record is looked for under its blueprint name, and one that exists (built by hand
    /// with gcloud, or by another tool) is adopted instead of created. The plan lists them
    /// ("adopted existing ...") and then shows only their real differences from the blueprint;
    /// ownership labels and description marks are never a difference. Nothing is recorded until
    /// the plan is applied (`a3ctl apply --adopt`, or `a3ctl apply FILE` with `--out FILE`).
    #[arg(long)]
    pub adopt: bool,
    /// Show only what changed outside a3ctl since the last apply (drift between state and the
    /// cloud), without planning any change to the cloud. `a3ctl apply --refresh-only` accepts
    /// that drift into state.
    #[arg(long, conflicts_with_all = ["adopt", "out"])]
    pub refresh_only: bool,
}

#[derive(Args, Debug)]
pub struct ApplyArgs {
    /// A blueprint (`.toml`), or a plan file saved by `a3ctl plan --out`.
    pub target: PathBuf,
    /// Do not ask for confirmation.
    #[arg(long)]
    pub auto_approve: bool,
    /// Write every step's start and end (milliseconds since the apply started) as JSON to FILE.
    #[arg(long, value_name = "FILE")]
    pub timings: Option<PathBuf>,
    /// Adopt resources that already exist under the blueprint's names instead of creating them
    /// (see `a3ctl plan --adopt`): they are recorded in state first, then only their real
    /// differences from the blueprint are applied.
    #[arg(long)]
    pub adopt: bool,
    /// Accept the changes made outside a3ctl into state: re-read every recorded resource and
    /// record its live values, and forget resources that no longer exist. No cloud resource is
    /// created, changed or deleted. Asks for confirmation unless --auto-approve.
    #[arg(long, conflicts_with_all = ["adopt", "timings"])]
    pub refresh_only: bool,
}

#[derive(Args, Debug)]
pub struct DestroyArgs {
    pub blueprint: PathBuf,
    /// Do not ask for confirmation.
    #[arg(long)]
    pub auto_approve: bool,
    /// Write every step's start and end as JSON to FILE.
    #[arg(long, value_name = "FILE")]
    pub timings: Option<PathBuf>,
}
