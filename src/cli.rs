//! The command line: clap derive structs only, no logic. Doc comments are the `--help` text.

use clap::{ArgAction, Args, Parser, Subcommand, ValueEnum};
use std::path::PathBuf;

/// Provision GKE clusters for A3 High / A3 Mega / A3 Ultra / A4 GPU training from one declarative
/// blueprint.
///
/// A blueprint (TOML) states intent: project, location, machine family and node counts, storage,
/// add-ons. a3ctl expands it into every resource the GPU recipes need — GPU VPCs (gVNIC, MTU 8244;
/// on A3 Ultra and A4 one gVNIC VPC and an RDMA VPC, MTU 8896, or GKE-managed GPU networking), the
/// primary VPC with Cloud NAT, compact placement, a Dataplane V2 multi-network GKE cluster, node
/// pools, Filestore, Artifact Registry, buckets, and inside the cluster the GPU network objects,
/// the NCCL stack (TCPX, TCPXO or gIB), JobSet, Kueue with its queues and the shared volumes — plans the changes,
/// and applies them in parallel, recording state after every step so an interrupted apply resumes
/// where it stopped.
///
/// Start with `a3ctl init` (a wizard that writes a blueprint), then `plan`, `apply`, `verify`.
/// Try it with no account: `a3ctl apply --sandbox blueprints/a3-mega.toml` runs against a built-in
/// simulator whose world is kept under `state/sandbox/`.
#[derive(Parser, Debug)]
#[command(
    version,
    propagate_version = true,
    max_term_width = 100,
    after_help = examples::TOP
)]
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

    /// With --sandbox: the simulated world from this TOML file — project number, enabled APIs,
    /// quotas, reservations, zone capacity (docs/simulator.md, "The world file";
    /// sim/worlds/example.toml). Kept as `state/sandbox/world.toml` for later sandbox runs. Its
    /// APIs and reservations are set up in a fresh sandbox only.
    #[arg(long, global = true, env = "A3CTL_SANDBOX_WORLD", value_name = "FILE")]
    pub world: Option<PathBuf>,

    /// Print only errors and the requested data: no progress, no notes; `plan` and `apply`
    /// print their one-line summary.
    #[arg(long, short, global = true, conflicts_with = "verbose")]
    pub quiet: bool,

    /// More detail: plans show every resource in full (without it, resources of the same kind
    /// and action whose fields differ only in index-like values — names, CIDRs: `gpu-0` …
    /// `gpu-7` — are shown once in full, then as one line naming the others and the fields that
    /// differ), and a log of what a3ctl does goes to stderr (`-v` steps and retries, `-vv` reads and checks,
    /// `-vvv` everything, libraries included). `RUST_LOG` overrides the log's filter.
    #[arg(long, short, global = true, action = ArgAction::Count)]
    pub verbose: u8,

    /// Append a structured log (one JSON object per event, a3ctl's debug events) to FILE, with
    /// secrets redacted. Created readable by its owner only.
    #[arg(long, global = true, env = "A3CTL_LOG_FILE", value_name = "FILE")]
    pub log_file: Option<PathBuf>,

    /// Keep state in this Cloud Storage bucket instead of where the blueprint's `[state]` says
    /// (the object is `<prefix>/<blueprint name>.a3state.json`; the prefix defaults to the
    /// blueprint's, or `a3ctl/<blueprint name>`). Create the bucket with `a3ctl state
    /// create-bucket`.
    #[arg(long, global = true, env = "A3CTL_STATE_BUCKET", value_name = "BUCKET")]
    pub state_bucket: Option<String>,

    /// Object name prefix of the state in its bucket, instead of the blueprint's `[state] prefix`.
    /// Only for a state kept in GCS.
    #[arg(long, global = true, env = "A3CTL_STATE_PREFIX", value_name = "PREFIX")]
    pub state_prefix: Option<String>,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Write a blueprint by answering questions: project, location, machine family, capacity,
    /// storage, Kueue, identities, who may reach the control plane, state and network ranges.
    ///
    /// Each answer is checked at once with the rules of `a3ctl validate` and asked again, with the
    /// reason, when it breaks one; only zones offering the chosen machine are offered. Project,
    /// region and zone default to gcloud's (`CLOUDSDK_CORE_PROJECT`, `CLOUDSDK_COMPUTE_REGION`,
    /// `CLOUDSDK_COMPUTE_ZONE`, `GOOGLE_CLOUD_PROJECT`, then the active configuration under
    /// `CLOUDSDK_CONFIG` or `~/.config/gcloud`); gcloud itself is never run. The file is written
    /// with a comment on each section. Run on an existing blueprint, it offers to edit it: the
    /// current values become the defaults and your comments are kept. It never replaces a file
    /// without asking. It ends with the validation result, what an apply would change (compared
    /// offline with the local state when the deployment exists), how long it should take given
    /// the node count and capacity, and the command to run next.
    ///
    /// Every question has a flag. A flag answers its question, which is then not asked (on a
    /// terminal, a flag that breaks a rule is reported and the question asked). With
    /// `--non-interactive`, or when standard input or standard error is not a terminal, nothing
    /// is asked: the defaults fill the rest, and every missing or invalid answer is listed in one
    /// error before anything is written. The defaults named below are a new file's; when editing,
    /// the file's own values come first. Ctrl-C stops without writing anything (exit code 1).
    #[command(after_help = examples::INIT)]
    Init(Box<InitArgs>),

    /// Check a blueprint without calling any cloud API.
    ///
    /// Reports every problem at once, each with its file, line and column, the offending text
    /// and a hint. Exits with 1 when there are problems, and with 0 after printing a summary of
    /// what the blueprint would create.
    #[command(after_help = examples::VALIDATE)]
    Validate {
        /// The blueprint (TOML), e.g. `blueprints/a3-mega.toml`.
        blueprint: PathBuf,
        /// Print the result as JSON on stdout: `{"valid": false, "diagnostics": [{"severity",
        /// "file", "line", "column", "message", "label", "hint"}]}`, or `{"valid": true,
        /// "summary": {...}}`. Exit codes are the same.
        #[arg(long)]
        json: bool,
    },

    /// Print the resource graph of a blueprint (DOT or Mermaid), edges from dependency to
    /// dependent.
    #[command(after_help = examples::GRAPH)]
    Graph {
        /// The blueprint (TOML), e.g. `blueprints/a3-mega.toml`.
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
    /// a3ctl are shown as drift. A replaced node pool keeps its GPUs: its new pool is created
    /// beside the old one when the reservation (or quota) holds both, or moved in batches of the
    /// reservation's free VMs; with no room the plan is refused, naming the choices
    /// (`--delete-first ADDR` deletes the old pool first). The plan says per GPU pool the
    /// strategy, the GPUs at risk and whether preflight confirmed the capacity, and fails when
    /// the new pool cannot get it (a reserved pool's new machine type).
    ///
    /// `--target`/`--exclude` narrow the plan to some resources (a partial plan says so);
    /// `--replace` forces the replacement of a recorded resource.
    #[command(after_help = examples::PLAN)]
    Plan(PlanArgs),

    /// Create or update everything the blueprint declares.
    ///
    /// Plans (or takes a saved plan), asks for confirmation, then applies: independent resources
    /// in parallel, one operation at a time per GKE cluster, state saved after every step. A
    /// failure stops only what depends on it. Ctrl-C stops starting new steps and waits for the
    /// running ones; a second Ctrl-C stops waiting (operations stay recorded and resume on the
    /// next apply).
    #[command(after_help = examples::APPLY)]
    Apply(ApplyArgs),

    /// Delete everything recorded in the blueprint's state, in reverse dependency order.
    ///
    /// A cluster takes its node pools with it; a bucket that still holds objects is refused unless
    /// the blueprint sets `force_destroy`; resources with `prevent_destroy` stop the destroy.
    /// Nothing outside the state is touched. `--target` destroys only some resources (and what
    /// depends on them); `--exclude` keeps some (and what they depend on).
    #[command(after_help = examples::DESTROY)]
    Destroy(DestroyArgs),

    /// Print the deployment's outputs, from state (no cloud call).
    ///
    /// What workloads reference — cluster name and endpoint, GPU networks, pod annotations, Kueue
    /// queue, volume claims — once state records an apply: the outputs `a3ctl apply` prints at
    /// its end. With NAME, only that output's value
    /// is printed, raw: a string as it is, a list one item per line, anything else as JSON, so a
    /// script can use it directly. Exits with 1 for an unknown NAME (listing the names) or when
    /// no apply has recorded state yet.
    #[command(after_help = examples::OUTPUT)]
    Output(OutputArgs),

    /// Print a plan saved with `a3ctl plan --out`, as plan printed it.
    ///
    /// As text, exactly what `a3ctl plan` printed; with `--json`, what `plan --json` prints. Only
    /// the file is read: no state, no cloud call. Every replacement keeps its reason (the field that forces it, a replaced dependency, a
    /// taint, or `--replace`), and a partial plan (`--target`/`--exclude`) says so.
    #[command(after_help = examples::SHOW)]
    Show(ShowArgs),

    /// Check that the cluster is ready for GPU training, and optionally measure its GPU network.
    ///
    /// Reads the cluster through its Kubernetes API (GET and LIST only; the endpoint and CA come
    /// from state, so run it after `a3ctl apply`) and checks that: every GPU node of each GPU pool
    /// is Ready with its 8 allocatable GPUs and the pool has its declared node count; the NCCL
    /// installer, NRI device injector and (driver = "daemonset") driver DaemonSets are ready on
    /// every GPU node; one Network and GKENetworkParamSet per GPU NIC exist with the blueprint's
    /// names, VPCs and subnets; JobSet's API is served, its controller available and Kueue's
    /// JobSet integration on; Kueue's ClusterQueue is Active with a GPU quota equal to the
    /// pools' GPUs and its LocalQueue exists. Prints a table (or `--json`); exits with 0 only when
    /// every check passes, 1 otherwise, each failure naming the object and what to do.
    ///
    /// With `--nccl-test`, writes a two-node NCCL all-gather test built from the blueprint's
    /// GPUDirect stack instead (no cloud call); add `--run` to run it and compare the mean bus
    /// bandwidth of its 2G-8G messages with the machine family's floor.
    #[command(after_help = examples::VERIFY)]
    Verify(VerifyArgs),

    /// Write a kubeconfig entry for the blueprint's cluster, as `gcloud container clusters
    /// get-credentials` does.
    ///
    /// Adds (or replaces) the cluster, user and context `gke_<project>_<region>_<name>` with the
    /// endpoint and CA recorded in state, authenticating through `gke-gcloud-auth-plugin` (no
    /// token is written), and makes it the current context. Other entries of the file are kept.
    /// The file is `--file`, else the first path of `$KUBECONFIG`, else `~/.kube/config`; it is
    /// replaced atomically and readable by its owner only. With `--sandbox`, the context is
    /// `a3ctl-sandbox_<project>_<region>_<name>` and carries the simulated cluster's own token
    /// instead (plain kubectl, no plugin, no login), for use while `a3ctl sandbox serve` runs.
    #[command(after_help = examples::KUBECONFIG)]
    Kubeconfig(KubeconfigArgs),

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
    #[command(after_help = examples::IMPORT)]
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
    ///
    /// Works for a local state (the `<state>.lock` file) and a GCS state (the `<state>.lock`
    /// object: exactly the generation holding this id is deleted).
    #[command(name = "force-unlock", after_help = examples::FORCE_UNLOCK)]
    ForceUnlock {
        /// The lock id printed in the "is locked by" error.
        id: String,
        /// The blueprint (TOML), e.g. `blueprints/a3-mega.toml`.
        blueprint: PathBuf,
        /// Do not ask for confirmation.
        #[arg(long)]
        force: bool,
    },

    /// Inspect and edit the recorded state, create the GCS state bucket, move state to GCS.
    ///
    /// Commands that change state take the state's lock and bump its serial. None of them
    /// touches a cloud resource: `state rm` forgets a resource, it does not delete it.
    #[command(subcommand, after_help = examples::STATE)]
    State(StateCommand),

    /// Print a shell completion script for a3ctl.
    ///
    /// Completes subcommands, flags and their fixed values. Load it from your shell's start-up
    /// file, or save it where your shell looks for completions.
    #[command(after_help = examples::COMPLETIONS)]
    Completions {
        /// The shell: bash, zsh, fish, elvish or powershell.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },

    /// Write a3ctl's manual pages (roff): a3ctl(1) and one page per command.
    ///
    /// Without `--out`, prints a3ctl(1) on stdout (`a3ctl man | man -l -`).
    #[command(after_help = examples::MAN)]
    Man {
        /// Write `a3ctl.1`, `a3ctl-plan.1`, ... into this directory (created if missing).
        #[arg(long, value_name = "DIR")]
        out: Option<PathBuf>,
    },

    /// Explore the sandbox (the built-in simulator of `--sandbox`) with gcloud and kubectl.
    #[command(subcommand, after_help = examples::SANDBOX)]
    Sandbox(SandboxCommand),
}

/// `a3ctl sandbox ...`.
#[derive(Subcommand, Debug)]
pub enum SandboxCommand {
    /// Serve the sandbox's world in the foreground, for gcloud and kubectl, until Ctrl-C.
    ///
    /// Loads the world the `--sandbox` commands keep under `state/sandbox/` (or starts one from
    /// `--world FILE`, as they do) and serves its Google APIs on 127.0.0.1:PORT and each
    /// cluster's Kubernetes API on the port it had before (when that port is free). Prints the
    /// environment that points gcloud at it, also written to `state/sandbox/env.sh`. For
    /// kubectl, `a3ctl kubeconfig --sandbox BLUEPRINT` writes a context with the cluster's own
    /// token: no plugin, no login. What you change through gcloud and kubectl is saved on Ctrl-C
    /// (or SIGTERM) and seen by the next `--sandbox` command, as drift. While it serves, other
    /// `--sandbox` commands that need the simulator are refused (`kubeconfig --sandbox` works).
    #[command(after_help = examples::SANDBOX_SERVE)]
    Serve(ServeArgs),
}

#[derive(Args, Debug)]
pub struct ServeArgs {
    /// Port of the Google APIs on 127.0.0.1 (0 takes any free port; the printed environment
    /// follows it).
    #[arg(long, default_value_t = 8417)]
    pub port: u16,
}

#[derive(Subcommand, Debug)]
pub enum StateCommand {
    /// List the addresses recorded in state, one per line.
    #[command(after_help = examples::STATE_LIST)]
    List {
        /// The blueprint (TOML), e.g. `blueprints/a3-mega.toml`.
        blueprint: PathBuf,
    },

    /// Print one recorded resource as JSON: its cloud id, spec as last applied, outputs and
    /// dependencies.
    #[command(after_help = examples::STATE_SHOW)]
    Show {
        /// A resource address, e.g. `network.primary` (see `a3ctl state list`).
        addr: String,
        /// The blueprint (TOML), e.g. `blueprints/a3-mega.toml`.
        blueprint: PathBuf,
    },

    /// Forget a resource: remove it from state without deleting it in the cloud.
    ///
    /// The next plan shows it as one to create; `a3ctl import` (or `plan --adopt`) takes it back.
    #[command(after_help = examples::STATE_RM)]
    Rm {
        /// A resource address, e.g. `bucket.data`.
        addr: String,
        /// The blueprint (TOML), e.g. `blueprints/a3-mega.toml`.
        blueprint: PathBuf,
    },

    /// Rename a recorded resource, e.g. after renaming it in the blueprint, so the next plan
    /// does not destroy and recreate it. Both addresses must be of the same kind.
    #[command(after_help = examples::STATE_MV)]
    Mv {
        /// The address recorded in state, e.g. `node_pool.gpu`.
        from: String,
        /// The new address, e.g. `node_pool.gpu-a`.
        to: String,
        /// The blueprint (TOML), e.g. `blueprints/a3-mega.toml`.
        blueprint: PathBuf,
    },

    /// Print the state as JSON on stdout (to keep a copy, or to edit and `state push` it).
    #[command(after_help = examples::STATE_PULL)]
    Pull {
        /// The blueprint (TOML), e.g. `blueprints/a3-mega.toml`.
        blueprint: PathBuf,
    },

    /// Replace the state with FILE (`-` reads standard input).
    ///
    /// Refused when FILE belongs to another history (lineage) or blueprint, or is not newer than
    /// the current state (serial), unless `--force`. The file is written as it is, keeping its
    /// lineage and serial.
    #[command(after_help = examples::STATE_PUSH)]
    Push {
        /// A state file, e.g. one written by `a3ctl state pull`.
        file: PathBuf,
        /// The blueprint (TOML), e.g. `blueprints/a3-mega.toml`.
        blueprint: PathBuf,
        /// Write it even when lineage, blueprint or serial say it would lose updates.
        #[arg(long)]
        force: bool,
    },

    /// Copy a local state file into the blueprint's GCS state, keeping lineage and serial.
    ///
    /// Point the blueprint's `[state]` at GCS first (or pass `--state-bucket`); both the local
    /// file and the GCS state are locked while copying. The local file is left in place as a
    /// backup. Running it again after success changes nothing.
    #[command(after_help = examples::STATE_MIGRATE)]
    Migrate {
        /// The blueprint (TOML), e.g. `blueprints/a3-mega.toml`.
        blueprint: PathBuf,
        /// The local state file (default: `state/<blueprint name>.a3state.json`, under
        /// `state/sandbox/` with `--sandbox`).
        #[arg(long, value_name = "PATH")]
        from: Option<PathBuf>,
        /// Overwrite a GCS state of another lineage, or with a serial not older than the file's.
        #[arg(long)]
        force: bool,
    },

    /// Create the Cloud Storage bucket that keeps the state (the bucket of `[state]` or
    /// `--state-bucket`).
    ///
    /// In the blueprint's project and region, with uniform bucket-level access and object
    /// versioning on (so earlier states can be recovered) and a3ctl's labels. Running it again
    /// when the bucket exists in the project changes nothing.
    #[command(name = "create-bucket", after_help = examples::STATE_CREATE_BUCKET)]
    CreateBucket {
        /// The blueprint (TOML), e.g. `blueprints/a3-mega.toml`.
        blueprint: PathBuf,
    },
}

#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum GraphFormat {
    Dot,
    Mermaid,
}

#[derive(Args, Debug)]
pub struct OutputArgs {
    /// The blueprint whose state holds the outputs, e.g. `blueprints/a3-mega.toml`.
    pub blueprint: PathBuf,
    /// Print only this output's value, e.g. `kueue_queue`.
    pub name: Option<String>,
    /// Print JSON: all outputs as an object, or NAME's value.
    #[arg(long)]
    pub json: bool,
}

#[derive(Args, Debug)]
pub struct ShowArgs {
    /// A plan file saved by `a3ctl plan --out FILE`.
    pub planfile: PathBuf,
    /// Print the plan as the JSON `a3ctl plan --json` prints.
    #[arg(long)]
    pub json: bool,
}

/// `--target`, `--exclude`: narrow a plan to some resources.
#[derive(Args, Debug, Clone, Default)]
pub struct Selection {
    /// Only this resource and what it needs: on plan and apply, everything it depends on; on
    /// destroy, everything that depends on it. ADDR is an address (`cluster.main`; `a3ctl graph
    /// BLUEPRINT` lists them) or `<kind>.*`. Repeatable. The plan is partial and says so.
    #[arg(long = "target", value_name = "ADDR")]
    pub targets: Vec<String>,
    /// Leave this resource out: on plan and apply, with everything that depends on it; on
    /// destroy, keep it with everything it depends on. Refused when a target needs it.
    /// Repeatable.
    #[arg(long = "exclude", value_name = "ADDR")]
    pub excludes: Vec<String>,
}

#[derive(Args, Debug)]
pub struct PlanArgs {
    /// The blueprint (TOML), e.g. `blueprints/a3-mega.toml`.
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
    #[arg(long, conflicts_with_all = ["adopt", "out", "targets", "excludes", "replace"])]
    pub refresh_only: bool,
    /// Plan without the preflight checks (that every reservation the plan consumes exists in the
    /// pool's zone, holds its machine type and GPUs, and has enough free VMs).
    #[arg(long)]
    pub skip_preflight: bool,
    #[command(flatten)]
    pub selection: Selection,
    /// Replace this recorded resource even though nothing forces it (and, as any replacement,
    /// what depends on it). Repeatable.
    #[arg(long = "replace", value_name = "ADDR", conflicts_with = "destroy")]
    pub replace: Vec<String>,
    /// Let this replaced node pool go down first: delete the old pool, then create the new one
    /// under the same name, its GPUs down in between. Without it, a replaced pool is created
    /// beside the old one (or moved in batches) when the capacity allows, and the plan is
    /// refused when it does not. Repeatable.
    #[arg(long = "delete-first", value_name = "ADDR")]
    pub delete_first: Vec<String>,
    /// Move a replaced reserved pool in batches of at most K nodes per zone (default: the
    /// reservation's free VMs, at most 8), e.g. `--batch-size 2`.
    #[arg(long, value_name = "K", value_parser = clap::value_parser!(u64).range(1..))]
    pub batch_size: Option<u64>,
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
    #[arg(long, conflicts_with_all = ["adopt", "timings", "targets", "excludes", "replace"])]
    pub refresh_only: bool,
    /// Apply without the preflight checks, which otherwise run on every apply (a saved plan's
    /// too, since capacity moves) and refuse it before any change when one fails.
    #[arg(long)]
    pub skip_preflight: bool,
    #[command(flatten)]
    pub selection: Selection,
    /// Replace this recorded resource even though nothing forces it (and, as any replacement,
    /// what depends on it). Repeatable.
    #[arg(long = "replace", value_name = "ADDR")]
    pub replace: Vec<String>,
    /// Let this replaced node pool go down first: delete the old pool, then create the new one
    /// under the same name, its GPUs down in between. Without it, a replaced pool is created
    /// beside the old one (or moved in batches) when the capacity allows, and the plan is
    /// refused when it does not. Repeatable.
    #[arg(long = "delete-first", value_name = "ADDR")]
    pub delete_first: Vec<String>,
    /// Move a replaced reserved pool in batches of at most K nodes per zone (default: the
    /// reservation's free VMs, at most 8), e.g. `--batch-size 2`.
    #[arg(long, value_name = "K", value_parser = clap::value_parser!(u64).range(1..))]
    pub batch_size: Option<u64>,
}

#[derive(Args, Debug)]
pub struct DestroyArgs {
    /// The blueprint (TOML), e.g. `blueprints/a3-mega.toml`.
    pub blueprint: PathBuf,
    /// Do not ask for confirmation.
    #[arg(long)]
    pub auto_approve: bool,
    /// Write every step's start and end as JSON to FILE.
    #[arg(long, value_name = "FILE")]
    pub timings: Option<PathBuf>,
    #[command(flatten)]
    pub selection: Selection,
}

#[derive(Args, Debug)]
pub struct VerifyArgs {
    /// The blueprint (TOML), e.g. `blueprints/a3-mega.toml`.
    pub blueprint: PathBuf,
    /// Print the report (with `--nccl-test --run`, the verdict) as JSON on stdout (format in
    /// docs/cluster-software.md).
    #[arg(long)]
    pub json: bool,
    /// Write the two-node NCCL all-gather test (a headless Service and an Indexed Job) instead of
    /// checking; stdout unless `--out`.
    #[arg(long)]
    pub nccl_test: bool,
    /// With `--nccl-test`: write the manifest to FILE.
    #[arg(long, value_name = "FILE", requires = "nccl_test")]
    pub out: Option<PathBuf>,
    /// With `--nccl-test`: apply the test to the cluster, wait for it, print its bus bandwidth by
    /// message size, and check the mean of its 2G-8G rows (out-of-place and in-place) against
    /// the family's floor (A3 High 60 GB/s, A3 Mega 150 GB/s, A3 Ultra and A4 250 GB/s: Cluster
    /// Health Scanner's NCCL health-check thresholds, which it applies to a 2G-8G all-gather).
    /// With `--json`, the verdict and the table as JSON.
    #[arg(long, requires = "nccl_test")]
    pub run: bool,
    /// With `--run`: how long to wait for the test (default `20m`); with `--access`: for the probes
    /// (default `5m`). E.g. `20m`, `90s`, `1h`.
    #[arg(long, value_name = "DURATION")]
    pub timeout: Option<String>,
    /// Also prove `[identity]` from inside the cluster: a pod of each workload mounts each mounted
    /// bucket with GCS FUSE, and a pod pulls from each repository with the nodes' account. The
    /// probe pods (label `a3ctl-probe`) are deleted afterwards.
    #[arg(long, conflicts_with = "nccl_test")]
    pub access: bool,
}

#[derive(Args, Debug)]
pub struct KubeconfigArgs {
    /// The blueprint (TOML), e.g. `blueprints/a3-mega.toml`.
    pub blueprint: PathBuf,
    /// The kubeconfig file to update (default: the first path of `$KUBECONFIG`, else
    /// `~/.kube/config`).
    #[arg(long, value_name = "PATH")]
    pub file: Option<PathBuf>,
}

#[derive(Args, Debug, Default)]
pub struct InitArgs {
    /// Where to write the blueprint.
    #[arg(default_value = "a3ctl.toml")]
    pub path: PathBuf,
    /// Ask nothing: take the answers from the flags and the defaults, or fail listing what is
    /// missing. Implied when standard input or standard error is not a terminal.
    #[arg(long)]
    pub non_interactive: bool,
    /// When PATH exists, edit it in place (its values become the defaults, comments are kept).
    #[arg(long, conflicts_with = "force")]
    pub edit: bool,
    /// When PATH exists, replace it with a new blueprint without asking.
    #[arg(long)]
    pub force: bool,

    /// Google Cloud project id. Default: gcloud's project.
    #[arg(long, help_heading = "Answers")]
    pub project: Option<String>,
    /// Machine family: `a3-high` (a3-highgpu-8g: 8 H100 80GB, 4 GPU NICs, GPUDirect-TCPX),
    /// `a3-mega` (a3-megagpu-8g: 8 H100 Mega 80GB, 8 GPU NICs, GPUDirect-TCPXO), `a3-ultra`
    /// (a3-ultragpu-8g: 8 H200 141GB, 8 RDMA NICs, GPUDirect-RDMA) or `a4` (a4-highgpu-8g: 8
    /// B200, 8 RDMA NICs, GPUDirect-RDMA).
    #[arg(long, value_enum, help_heading = "Answers")]
    pub machine: Option<Machine>,
    /// Who creates the GPU networks of A3 Ultra and A4: `explicit` (a3ctl: a gVNIC VPC and an
    /// RDMA VPC with 8 subnets) or `managed` (GKE, through the node pool's accelerator network
    /// profile; needs GKE 1.34.1-gke.1829001 or later: version 1.34 or later on the rapid
    /// channel, which offers it first). Default: explicit.
    #[arg(long, value_enum, help_heading = "Answers")]
    pub network_mode: Option<NetworkModeChoice>,
    /// Deployment name: the GKE cluster name and the prefix of every resource (at most 20
    /// characters). Default: the family's name (`a3high`, `a3mega`, `a3ultra`, `a4`).
    #[arg(long, help_heading = "Answers")]
    pub name: Option<String>,
    /// Region. Default: gcloud's region, or the region of `--zone`.
    #[arg(long, help_heading = "Answers")]
    pub region: Option<String>,
    /// Zone of the GPU nodes; it must offer the machine type. Default: gcloud's zone when it
    /// offers it, else the first zone of the region that does.
    #[arg(long, help_heading = "Answers")]
    pub zone: Option<String>,
    /// Number of GPU nodes (8 GPUs each), a whole number from 1 to 1000.
    // A negative number is taken as the value (and refused by the wizard's check with its rule),
    // not as an unknown flag with clap's tip to pass it after `--`, which would make it the PATH.
    #[arg(long, help_heading = "Answers", allow_negative_numbers = true)]
    pub nodes: Option<String>,
    /// Where the GPU capacity comes from. Default: `on-demand`. `flex-start` is refused with the
    /// reason: GKE's flex-start pools autoscale from 0, which a3ctl's fixed-size pools do not.
    #[arg(long, value_enum, help_heading = "Answers")]
    pub capacity: Option<CapacityChoice>,
    /// Reservation to consume (`capacity = reservation`): its name, or
    /// `projects/<project>/reservations/<name>` for a shared one.
    #[arg(long, help_heading = "Answers")]
    pub reservation: Option<String>,
    /// One block of the reservation (`gcloud beta compute reservations blocks list`). Default:
    /// none (any block).
    #[arg(long, help_heading = "Answers")]
    pub reservation_block: Option<String>,
    /// Nodes of the CPU system pool. Default: 2.
    #[arg(long, help_heading = "Answers", allow_negative_numbers = true)]
    pub system_nodes: Option<String>,
    /// Filestore tier (`basic-hdd`, `basic-ssd`, `high-scale-ssd`, `zonal`, `regional`,
    /// `enterprise`), or `none`. Default: none.
    #[arg(long, value_enum, help_heading = "Answers")]
    pub filestore: Option<FilestoreChoice>,
    /// Filestore capacity in GiB. Default: the tier's minimum.
    #[arg(long, help_heading = "Answers")]
    pub filestore_capacity: Option<String>,
    /// Artifact Registry repository to create (Docker format), or `none`. Default: none.
    #[arg(long, help_heading = "Answers")]
    pub registry: Option<String>,
    /// Cloud Storage bucket to create in the region (repeat or comma-separate for several), or
    /// `none`. Default: none.
    #[arg(long, value_delimiter = ',', help_heading = "Answers")]
    pub bucket: Vec<String>,
    /// Mount the buckets in pods with GCS FUSE (`--bucket-mount=false` not to). Default: true.
    #[arg(long, num_args = 0..=1, default_missing_value = "true", help_heading = "Answers")]
    pub bucket_mount: Option<bool>,
    /// Install Kueue (`--kueue=false` not to). Default: true.
    #[arg(long, num_args = 0..=1, default_missing_value = "true", help_heading = "Answers")]
    pub kueue: Option<bool>,
    /// Name of Kueue's LocalQueue for GPU jobs. Default: `a3-queue`.
    #[arg(long, help_heading = "Answers")]
    pub queue: Option<String>,
    /// The nodes' service account: an account id a3ctl creates, or an existing account's email.
    /// Default: `<name>-nodes`.
    #[arg(long, help_heading = "Answers")]
    pub node_service_account: Option<String>,
    /// Who may reach the cluster's control plane: a CIDR, optionally named
    /// (`203.0.113.0/24` or `office=203.0.113.0/24`); repeat or comma-separate for several.
    /// Required (no default opens the endpoint to everyone); `0.0.0.0/0` is accepted with a
    /// warning.
    #[arg(
        long,
        value_delimiter = ',',
        value_name = "[NAME=]CIDR",
        help_heading = "Answers"
    )]
    pub authorized_network: Vec<String>,
    /// The Kubernetes service account (`NAMESPACE/NAME`) whose pods use the mounted buckets.
    /// Default: `default/default`.
    #[arg(long, help_heading = "Answers")]
    pub workload: Option<String>,
    /// State backend: `local` (a file under `state/`) or `gcs` (a bucket, shared and locked).
    /// Default: local.
    #[arg(long, value_enum, help_heading = "Answers")]
    pub state_backend: Option<StateChoice>,
    /// Bucket holding the state (`--state-backend gcs`).
    #[arg(long, help_heading = "Answers")]
    pub state_bucket: Option<String>,
    /// Object prefix of the state in that bucket. Default: `a3ctl/<name>`.
    #[arg(long, help_heading = "Answers")]
    pub state_prefix: Option<String>,
    /// Node IP range of the primary subnet. Default: `10.0.0.0/20`.
    #[arg(long, help_heading = "Answers")]
    pub primary_subnet: Option<String>,
    /// Pod IP range. Default: `10.4.0.0/14`.
    #[arg(long, help_heading = "Answers")]
    pub pods: Option<String>,
    /// Service IP range. Default: `10.0.32.0/20`.
    #[arg(long, help_heading = "Answers")]
    pub services: Option<String>,
    /// Range the GPU subnets are carved from, one /24 per GPU NIC (9 on A3 Ultra and A4: the
    /// gVNIC one and 8 RDMA ones; none in managed mode). Default: `192.168.0.0/16`.
    #[arg(long, help_heading = "Answers")]
    pub gpu_range: Option<String>,
    /// Control-plane range, a /28. Default: `172.16.0.32/28`.
    #[arg(long, help_heading = "Answers")]
    pub master_cidr: Option<String>,
}

#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum Machine {
    /// a3-highgpu-8g
    #[value(alias = "a3-highgpu-8g")]
    A3High,
    /// a3-megagpu-8g
    #[value(alias = "a3-megagpu-8g")]
    A3Mega,
    /// a3-ultragpu-8g
    #[value(alias = "a3-ultragpu-8g")]
    A3Ultra,
    /// a4-highgpu-8g
    #[value(alias = "a4-highgpu-8g")]
    A4,
}

#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum NetworkModeChoice {
    /// a3ctl creates the GPU VPCs
    Explicit,
    /// GKE creates them (A3 Ultra and A4)
    Managed,
}

#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum CapacityChoice {
    Reservation,
    OnDemand,
    Spot,
    FlexStart,
}

#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum FilestoreChoice {
    None,
    BasicHdd,
    BasicSsd,
    HighScaleSsd,
    Zonal,
    Regional,
    Enterprise,
}

#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum StateChoice {
    Local,
    Gcs,
}

/// The "Examples:" section of every `--help`.
mod examples {
    pub const TOP: &str = "\
Examples:
  # Try it with no Google Cloud account, against the built-in simulator
  a3ctl apply --sandbox blueprints/a3-mega.toml
  # Write your own blueprint, then plan, apply and check it
  a3ctl init a3.toml
  a3ctl plan a3.toml
  a3ctl apply a3.toml
  a3ctl verify a3.toml";

    pub const GRAPH: &str = "\
Examples:
  a3ctl graph blueprints/a3-high.toml | dot -Tsvg > graph.svg
  a3ctl graph --format mermaid a3.toml";

    pub const VERIFY: &str = "\
Examples:
  a3ctl verify a3.toml
  a3ctl verify --json a3.toml > report.json
  # Measure the GPU network with a two-node NCCL all-gather
  a3ctl verify --nccl-test --run a3.toml
  # Prove the nodes and pods can use the buckets and repositories
  a3ctl verify --access a3.toml";

    pub const KUBECONFIG: &str = "\
Examples:
  a3ctl kubeconfig a3.toml && kubectl get nodes
  a3ctl kubeconfig a3.toml --file ./a3.kubeconfig";

    pub const IMPORT: &str = "\
Examples:
  a3ctl import network.primary a3high-net blueprints/a3-high.toml
  a3ctl import cluster.main projects/my-project/locations/us-central1/clusters/a3high a3.toml";

    pub const FORCE_UNLOCK: &str = "\
Examples:
  a3ctl force-unlock 6f1c2e0a-93b5-4d0e-a2f4-8f0d5d1e7c11 a3.toml";

    pub const STATE: &str = "\
Examples:
  a3ctl state list a3.toml
  a3ctl state show cluster.main a3.toml
  a3ctl state pull a3.toml > backup.json";

    pub const STATE_LIST: &str = "\
Examples:
  a3ctl state list a3.toml
  a3ctl state list --sandbox blueprints/a3-mega.toml";

    pub const STATE_SHOW: &str = "\
Examples:
  a3ctl state show cluster.main a3.toml";

    pub const STATE_RM: &str = "\
Examples:
  # Stop managing the bucket; it stays in the cloud
  a3ctl state rm bucket.data a3.toml";

    pub const STATE_MV: &str = "\
Examples:
  a3ctl state mv node_pool.gpu node_pool.gpu-a a3.toml";

    pub const STATE_PULL: &str = "\
Examples:
  a3ctl state pull a3.toml > a3.state.json";

    pub const STATE_PUSH: &str = "\
Examples:
  a3ctl state push a3.state.json a3.toml
  a3ctl state pull a3.toml | jq . | a3ctl state push - a3.toml";

    pub const STATE_MIGRATE: &str = "\
Examples:
  # After setting [state] backend = \"gcs\" in the blueprint
  a3ctl state create-bucket a3.toml
  a3ctl state migrate a3.toml";

    pub const STATE_CREATE_BUCKET: &str = "\
Examples:
  a3ctl state create-bucket a3.toml
  a3ctl state create-bucket --state-bucket my-a3-state a3.toml";

    pub const SANDBOX: &str = "\
Examples:
  a3ctl apply --sandbox --auto-approve blueprints/a3-mega.toml
  a3ctl sandbox serve        # then, in another shell: source state/sandbox/env.sh";

    pub const COMPLETIONS: &str = "\
Examples:
  # bash
  a3ctl completions bash > ~/.local/share/bash-completion/completions/a3ctl
  # zsh (a directory on your $fpath)
  a3ctl completions zsh > ~/.zfunc/_a3ctl
  # fish
  a3ctl completions fish > ~/.config/fish/completions/a3ctl.fish";

    pub const MAN: &str = "\
Examples:
  a3ctl man | man -l -
  sudo a3ctl man --out /usr/local/share/man/man1";
    pub const INIT: &str = "\
Examples:
  Answer the questions in a terminal, writing a3ctl.toml:
    a3ctl init

  Change an existing blueprint (its values become the defaults, comments are kept):
    a3ctl init a3.toml --edit

  Change one answer without being asked anything else:
    a3ctl init a3.toml --edit --non-interactive --nodes 16

  Write a blueprint from flags alone, e.g. in CI:
    a3ctl init a3.toml --non-interactive --project my-project --region us-central1 \\
      --machine a3-mega --nodes 32 --capacity reservation --reservation a3mega-reservation \\
      --authorized-network office=203.0.113.0/24";

    pub const VALIDATE: &str = "\
Examples:
  a3ctl validate blueprints/a3-mega.toml
  a3ctl validate --json blueprints/a3-mega.toml | jq -r '.diagnostics[].message'";

    pub const PLAN: &str = "\
Examples:
  a3ctl plan blueprints/a3-mega.toml
  a3ctl plan blueprints/a3-mega.toml --out a3.plan          # then: a3ctl apply a3.plan
  a3ctl plan blueprints/a3-mega.toml --target cluster.main  # the cluster and what it needs
  a3ctl plan blueprints/a3-mega.toml --exclude 'bucket.*'   # everything but the buckets
  a3ctl plan blueprints/a3-mega.toml --replace node_pool.a3mega
  a3ctl plan blueprints/a3-mega.toml --replace node_pool.a3mega --batch-size 2
  a3ctl plan --sandbox blueprints/a3-mega.toml --out a3.plan  # then: a3ctl apply --sandbox a3.plan";

    pub const APPLY: &str = "\
Examples:
  a3ctl apply blueprints/a3-mega.toml
  a3ctl apply a3.plan                                          # a plan saved by `plan --out`
  a3ctl apply blueprints/a3-mega.toml --target network.primary --auto-approve
  a3ctl apply blueprints/a3-mega.toml --replace node_pool.a3mega
  a3ctl apply blueprints/a3-mega.toml --delete-first node_pool.a3mega
  a3ctl apply --sandbox blueprints/a3-mega.toml";

    pub const DESTROY: &str = "\
Examples:
  a3ctl destroy blueprints/a3-mega.toml
  a3ctl destroy blueprints/a3-mega.toml --target node_pool.a3mega   # the GPU pool only
  a3ctl destroy blueprints/a3-mega.toml --exclude 'bucket.*'        # keep the buckets";

    pub const OUTPUT: &str = "\
Examples:
  a3ctl output blueprints/a3-mega.toml
  a3ctl output blueprints/a3-mega.toml kueue_queue
  a3ctl output blueprints/a3-mega.toml --json
  QUEUE=$(a3ctl output blueprints/a3-mega.toml kueue_queue)   # raw value, for scripts";

    pub const SHOW: &str = "\
Examples:
  a3ctl plan blueprints/a3-mega.toml --out a3.plan && a3ctl show a3.plan
  a3ctl show --json a3.plan | jq '.resource_changes[] | select(.action == \"replace\")'";

    pub const SANDBOX_SERVE: &str = "\
Examples:
  a3ctl apply --sandbox blueprints/a3-mega.toml --auto-approve
  a3ctl sandbox serve                      # keep it running; in another shell:
  source state/sandbox/env.sh              # gcloud now talks to the sandbox
  gcloud container clusters list
  a3ctl kubeconfig --sandbox blueprints/a3-mega.toml
  kubectl get nodes";
}
