//! `a3ctl-sim`: run the simulator standalone, for trying gcloud, kubectl or a3ctl against it by hand
//! or for experiments. Prints its base URL and the environment that points each client at it.

use a3ctl_sim::faults::FaultConfig;
use a3ctl_sim::latency::LatencyProfile;
use a3ctl_sim::quotas::QuotaConfig;
use a3ctl_sim::server::clock_mode_for_scale;
use a3ctl_sim::{SimConfig, WorldSpec};
use clap::Parser;
use std::net::IpAddr;
use std::path::PathBuf;
use std::process::ExitCode;

/// A local simulator of the Google Cloud APIs (Compute, GKE, Filestore, Artifact Registry, Cloud
/// Storage) and of each simulated cluster's Kubernetes API server.
///
/// At start it prints its base URL and the environment variables that point gcloud and a3ctl at it.
/// Every GKE cluster created in it gets its own HTTPS Kubernetes API server with its own CA; use
/// `gcloud container clusters get-credentials` against the simulator, or the cluster's `endpoint`
/// and `masterAuth.clusterCaCertificate`, to reach it with kubectl.
#[derive(Parser, Debug)]
#[command(version, about, long_about)]
struct Args {
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1", env = "A3CTL_SIM_HOST")]
    host: IpAddr,

    /// Port for the Google APIs (0 picks a free port).
    #[arg(long, default_value_t = 8089, env = "A3CTL_SIM_PORT")]
    port: u16,

    /// Simulated time runs this many times slower than the latency profile says: 1 is real time,
    /// 0.001 turns a 6-minute cluster creation into 0.36 s. 0 means a manual clock that moves only
    /// through `POST /_sim/clock/advance?seconds=N`.
    #[arg(long, default_value_t = 1.0, env = "A3CTL_SIM_TIME_SCALE")]
    time_scale: f64,

    /// Latency profile: `realistic`, `zero`, or a TOML file of overrides (see docs/simulator.md).
    #[arg(long, default_value = "realistic", env = "A3CTL_SIM_LATENCY")]
    latency: String,

    /// Fault-injection file (TOML, see docs/simulator.md).
    #[arg(long, env = "A3CTL_SIM_FAULTS")]
    faults: Option<PathBuf>,

    /// Compute quota limits that replace the defaults (TOML, `[[limits]]` entries with `metric`,
    /// `limit` and optional `project`, `region`, `gpu_family`; see docs/simulator.md).
    #[arg(long, env = "A3CTL_SIM_QUOTAS")]
    quotas: Option<PathBuf>,

    /// World file (TOML): project numbers and services, quotas, zone capacity and the stockout
    /// wait, reservations that exist at start (see docs/simulator.md, sim/worlds/example.toml).
    /// Services and reservations are seeded only into a fresh world, not one loaded from
    /// --persist.
    #[arg(long, env = "A3CTL_SIM_WORLD")]
    world: Option<PathBuf>,

    /// Keep the whole world in this file, so the simulator survives restarts.
    #[arg(long, env = "A3CTL_SIM_PERSIST")]
    persist: Option<PathBuf>,

    /// Seed for ids, latencies and faults.
    #[arg(long, default_value_t = 42)]
    seed: u64,

    /// Accept only this bearer token on the Kubernetes API servers, besides each cluster's own
    /// static token (default: any non-empty token).
    #[arg(long, env = "A3CTL_SIM_KUBE_TOKEN", hide_env_values = true)]
    kube_token: Option<String>,
}

fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .init();
    let args = Args::parse();
    if !(args.time_scale >= 0.0 && args.time_scale.is_finite()) {
        eprintln!(
            "error: --time-scale must be a number >= 0, got {}",
            args.time_scale
        );
        return ExitCode::from(2);
    }
    let latency = match LatencyProfile::load(&args.latency) {
        Ok(l) => l,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let faults = match &args.faults {
        Some(path) => match FaultConfig::load(&path.display().to_string()) {
            Ok(f) => f,
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::from(2);
            }
        },
        None => FaultConfig::default(),
    };
    let quotas = match &args.quotas {
        Some(path) => match load_quotas(path) {
            Ok(q) => q,
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::from(2);
            }
        },
        None => QuotaConfig::default(),
    };
    let world = match &args.world {
        Some(path) => match WorldSpec::load(path) {
            Ok(w) => w,
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::from(2);
            }
        },
        None => WorldSpec::default(),
    };
    let config = SimConfig {
        host: args.host,
        port: args.port,
        clock: clock_mode_for_scale(args.time_scale),
        latency,
        faults,
        persist: args.persist,
        seed: args.seed,
        kube_token: args.kube_token,
        quotas,
        world,
        // A person's simulator carries today's dates (a world file's `start_time` pins another).
        start: a3ctl_sim::Start::WallClock,
        ..SimConfig::default()
    };
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    runtime.block_on(async move {
        let handle = match a3ctl_sim::start(config).await {
            Ok(h) => h,
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::FAILURE;
            }
        };
        println!("a3ctl-sim listening on {}", handle.base_url());
        println!();
        println!("# gcloud (use an isolated config directory):");
        println!("export CLOUDSDK_CONFIG=$(mktemp -d) CLOUDSDK_CORE_PROJECT=my-project");
        for (k, v) in handle.gcloud_env() {
            println!("export {k}={v}");
        }
        println!();
        println!("# a3ctl:");
        for (k, v) in handle.a3ctl_env() {
            println!("export {k}={v}");
        }
        println!();
        println!("# kubectl, once a cluster exists:");
        println!("#   gcloud container clusters get-credentials CLUSTER --location LOCATION");
        println!("#   kubectl get nodes");
        println!();
        println!(
            "# admin: {}/_sim/inventory, /_sim/requests, /_sim/clock, /_sim/faults",
            handle.base_url()
        );
        if tokio::signal::ctrl_c().await.is_err() {
            eprintln!("error: cannot listen for Ctrl-C; stopping");
        }
        eprintln!("stopping (world saved if --persist was given)");
        handle.shutdown();
        ExitCode::SUCCESS
    })
}

/// Reads and checks a quota file.
fn load_quotas(path: &std::path::Path) -> Result<QuotaConfig, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read quota file `{}`: {e}", path.display()))?;
    let config: QuotaConfig = toml::from_str(&text)
        .map_err(|e| format!("quota file `{}` is not valid: {e}", path.display()))?;
    config
        .check()
        .map_err(|e| format!("quota file `{}`: {e}", path.display()))?;
    Ok(config)
}
