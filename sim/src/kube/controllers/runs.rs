//! How a container ends: the one kind of program the simulated kubelet runs to completion — an
//! NCCL test — with its duration, exit code and log, and the settings that decide the bus
//! bandwidth it reports ([`WorkloadConfig`], world file `[workloads]`, admin
//! `/_sim/workloads`); every other container ends as [`super::outcomes`] decides (declared
//! outcomes, faults, built-in programs, or never); [`super::pods`] turns the ends decided here
//! into container and pod statuses.
//!
//! **What is an NCCL test.** A regular container (not an init container) of a pod whose
//! `restartPolicy` is `Never` or `OnFailure`, whose command or args name one of nccl-tests'
//! binaries (`all_gather_perf`, `all_reduce_perf`, `alltoall_perf`, `broadcast_perf`,
//! `gather_perf`, `hypercube_perf`, `reduce_perf`, `reduce_scatter_perf`, `scatter_perf`,
//! `sendrecv_perf`) or the TCPX plugin image's `run-allgather.sh` (which runs `all_gather_perf`).
//!
//! **Who runs it.** The pods of one Job (same `batch.kubernetes.io/controller-uid`) are one test:
//! the pod of completion index 0 — or a pod outside any Job — is the leader (MPI rank 0), the
//! others are peers. The leader's test begins once the test container of a live pod of every
//! index of the Job (`0..completions`) has started (the launch scripts wait for every host), runs
//! `kube.nccl.test` (a latency key, drawn once per pod), and ends; the peers end when the leader's
//! test container ends (pod 0 tells them to stop), with exit code 0 and an empty log. A leader
//! whose peers never start keeps waiting, as the scripts do.
//!
//! **What the leader reports**, decided once, at the simulated moment its test ends (every change
//! to the settings comes through a request that first brings the world to its time, so a change
//! applies to the tests that end after it):
//! - every Network its `networking.gke.io/interfaces` annotation names besides `default` must
//!   exist (`networking.gke.io/v1` Network), else the GPU NICs are missing from the pod and NCCL's
//!   GPUDirect plugin finds no device: exit 1, the log ends with an NCCL `WARN` and `Test NCCL
//!   failure`;
//! - a node without `cloud.google.com/gke-accelerator` has no GPU: exit 1, `Cuda failure 'no
//!   CUDA-capable device is detected'`;
//! - a pod that names no device Networks (no annotation, or only `default`) or whose accelerator
//!   has no entry in `nccl_bus_bandwidth_gbps` runs over NCCL's socket transport on eth0 and
//!   reports `tcp_bus_bandwidth_gbps`;
//! - otherwise it reports `nccl_bus_bandwidth_gbps[<accelerator>]`.
//!
//! Exit 0 logs nccl-tests' own output ([`leader_log`]; NVIDIA/nccl-tests `src/util.cu`, laid out
//! as the real runs in `shared/reference/captures/`): the version and parameter lines, one line
//! per rank, the table header, one row per message size of the range the container asked for
//! ([`sizes`]) with both halves, `# Out of bounds values : 0 OK`, `# Avg bus bandwidth    : %g `
//! (the mean of every row, as nccl-tests computes it) and `# Collective test concluded`. The bus
//! bandwidth grows with the message size along [`bus_bandwidth_at`] (latency-bound at small
//! sizes, saturating at large ones, shaped like a real 1K–8G run); the reported bandwidth is the
//! mean of the 2G, 4G and 8G rows — the figure a3ctl and Cluster Health Scanner judge — so a
//! 1K–8G run's footer is about 0.39 of it.

use super::outcomes::{self, Host};
use crate::clock::SimTime;
pub use crate::config::workloads::{WorkloadConfig, WorkloadSpec};
use crate::kube::KubeCluster;
pub use crate::state::kube::End;
use serde_json::Value;
use std::collections::BTreeMap;

/// The annotation (and label) that carries a Job pod's completion index.
pub const JOB_INDEX: &str = "batch.kubernetes.io/job-completion-index";
/// The label that carries the uid of a pod's Job.
pub const JOB_UID: &str = "batch.kubernetes.io/controller-uid";
/// The node label that names a GPU node's accelerator.
pub const ACCELERATOR_LABEL: &str = "cloud.google.com/gke-accelerator";

impl WorkloadSpec {
    /// Every bandwidth must be a positive number.
    pub fn check(&self) -> Result<(), String> {
        let all = self
            .nccl_bus_bandwidth_gbps
            .iter()
            .map(|(k, v)| (format!("nccl_bus_bandwidth_gbps.\"{k}\""), *v))
            .chain(
                self.tcp_bus_bandwidth_gbps
                    .map(|v| ("tcp_bus_bandwidth_gbps".to_string(), v)),
            );
        for (key, value) in all {
            if !(value.is_finite() && value > 0.0) {
                return Err(format!(
                    "`{key}` must be a positive number of GB/s, not {value}"
                ));
            }
        }
        for (at, outcome) in self.outcomes.iter().enumerate() {
            outcome.check(at)?;
        }
        Ok(())
    }

    /// The defaults with this spec's entries on top.
    pub fn resolve(&self) -> WorkloadConfig {
        let mut config = WorkloadConfig::default();
        config
            .nccl_bus_bandwidth_gbps
            .extend(self.nccl_bus_bandwidth_gbps.clone());
        if let Some(tcp) = self.tcp_bus_bandwidth_gbps {
            config.tcp_bus_bandwidth_gbps = tcp;
        }
        config.outcomes = self.outcomes.clone();
        config
    }
}

/// nccl-tests' binaries.
const BENCHMARKS: &[&str] = &[
    "all_gather_perf",
    "all_reduce_perf",
    "alltoall_perf",
    "broadcast_perf",
    "gather_perf",
    "hypercube_perf",
    "reduce_perf",
    "reduce_scatter_perf",
    "scatter_perf",
    "sendrecv_perf",
];

/// The nccl-tests binary a container runs, if it runs one (see the module doc).
pub fn nccl_benchmark(pod: &Value, container: &Value) -> Option<&'static str> {
    if !matches!(
        pod["spec"]["restartPolicy"].as_str(),
        Some("Never" | "OnFailure")
    ) {
        return None;
    }
    let text: Vec<&str> = ["command", "args"]
        .iter()
        .flat_map(|k| container[*k].as_array().into_iter().flatten())
        .filter_map(Value::as_str)
        .collect();
    let text = text.join(" ");
    // The first one named (`reduce_perf` is also the end of `all_reduce_perf`).
    let mut found: Option<(usize, &'static str)> = None;
    for name in BENCHMARKS {
        for (at, _) in text.match_indices(name) {
            let whole = at == 0
                || !text.as_bytes()[at - 1].is_ascii_alphanumeric()
                    && text.as_bytes()[at - 1] != b'_';
            if whole && found.is_none_or(|(first, _)| at < first) {
                found = Some((at, name));
            }
        }
    }
    if let Some((_, name)) = found {
        return Some(name);
    }
    // The gIB diagnostic image's launcher, `run_nccl_tests.sh -t all_gather ...`
    // (container-engine-accelerators `gpudirect-rdma/README.md`), runs `<t>_perf`.
    if let Some(at) = text.find("run_nccl_tests.sh") {
        let mut words = text[at..].split_whitespace();
        let test = std::iter::from_fn(|| words.next())
            .skip_while(|w| *w != "-t")
            .nth(1)
            .unwrap_or("all_gather");
        return BENCHMARKS
            .iter()
            .copied()
            .find(|b| b.strip_suffix("_perf") == Some(test))
            .or(Some("all_gather_perf"));
    }
    text.contains("run-allgather.sh")
        .then_some("all_gather_perf")
}

impl End {
    /// `Completed` for exit 0, `Error` otherwise, as the kubelet reports it.
    pub fn reason(&self) -> &'static str {
        if self.exit_code == 0 {
            "Completed"
        } else {
            "Error"
        }
    }
}

/// What the leader found when its test ended.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// Bus bandwidth in GB/s, and whether it went over the GPU NICs.
    Bandwidth { gbps: f64, gpudirect: bool },
    /// Networks named in `networking.gke.io/interfaces` that do not exist.
    MissingNetworks(Vec<String>),
    /// The node has no GPU.
    NoGpu,
}

/// Decides the leader's outcome from its pod, its node and the Networks that exist.
pub fn outcome(
    config: &WorkloadConfig,
    pod: &Value,
    node: Option<&Value>,
    network_exists: impl Fn(&str) -> bool,
    claims_rdma: bool,
) -> Outcome {
    let accelerator = node.and_then(|n| n["metadata"]["labels"][ACCELERATOR_LABEL].as_str());
    let Some(accelerator) = accelerator else {
        return Outcome::NoGpu;
    };
    let networks = device_networks(pod);
    let missing: Vec<String> = networks
        .iter()
        .filter(|n| !network_exists(n))
        .cloned()
        .collect();
    if !missing.is_empty() {
        return Outcome::MissingNetworks(missing);
    }
    match config.nccl_bus_bandwidth_gbps.get(accelerator) {
        Some(gbps) if !networks.is_empty() || claims_rdma => Outcome::Bandwidth {
            gbps: *gbps,
            gpudirect: true,
        },
        _ => Outcome::Bandwidth {
            gbps: config.tcp_bus_bandwidth_gbps,
            gpudirect: false,
        },
    }
}

/// Whether `pod` reaches the RDMA NICs of GKE-managed GPU networking: one of its
/// `resourceClaims` comes from a ResourceClaimTemplate that asks for the `mrdma.google.com`
/// DeviceClass (at `v1`, `exactly.deviceClassName`; at the betas, `deviceClassName`), a container
/// uses that claim, and `node` publishes such devices in a ResourceSlice.
fn claims_rdma_nics(cluster: &KubeCluster, pod: &Value, node: &Value) -> bool {
    let class = super::dranet::DEVICE_CLASS;
    let namespace = pod["metadata"]["namespace"].as_str().unwrap_or("default");
    let used: Vec<&str> = pod["spec"]["containers"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|c| c["resources"]["claims"].as_array().into_iter().flatten())
        .filter_map(|c| c["name"].as_str())
        .collect();
    let asks_for_rdma = pod["spec"]["resourceClaims"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|c| c["name"].as_str().is_some_and(|n| used.contains(&n)))
        .filter_map(|c| c["resourceClaimTemplateName"].as_str())
        .filter_map(|t| {
            cluster.store.get(
                crate::kube::dra::GROUP,
                "resourceclaimtemplates",
                namespace,
                t,
            )
        })
        .any(|template| {
            template["spec"]["spec"]["devices"]["requests"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|r| r["exactly"]["deviceClassName"] == class || r["deviceClassName"] == class)
        });
    let node_name = node["metadata"]["name"].as_str().unwrap_or_default();
    asks_for_rdma
        && cluster
            .store
            .list(crate::kube::dra::GROUP, "resourceslices", None)
            .into_iter()
            .any(|s| {
                s["spec"]["driver"] == class
                    && s["spec"]["nodeName"] == node_name
                    && s["spec"]["devices"]
                        .as_array()
                        .is_some_and(|d| !d.is_empty())
            })
}

/// The Networks besides `default` a pod's `networking.gke.io/interfaces` annotation names.
fn device_networks(pod: &Value) -> Vec<String> {
    let text = pod["metadata"]["annotations"]["networking.gke.io/interfaces"]
        .as_str()
        .unwrap_or("[]");
    let parsed: Value = serde_json::from_str(text).unwrap_or(Value::Null);
    parsed
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|i| i["network"].as_str())
        .filter(|n| *n != "default")
        .map(str::to_string)
        .collect()
}

/// C's `printf("%g")`: six significant digits, trailing zeros dropped.
pub fn format_g(value: f64) -> String {
    if value == 0.0 || !value.is_finite() {
        return format!("{value}");
    }
    let exponent = value.abs().log10().floor() as i32;
    if !(-4..6).contains(&exponent) {
        let text = format!("{value:.5e}");
        let (mantissa, exp) = text.split_once('e').unwrap_or((&text, "0"));
        let mantissa = mantissa.trim_end_matches('0').trim_end_matches('.');
        let exp: i32 = exp.parse().unwrap_or(0);
        let sign = if exp < 0 { '-' } else { '+' };
        return format!("{mantissa}e{sign}{:02}", exp.abs());
    }
    let decimals = (5 - exponent).max(0) as usize;
    let text = format!("{value:.decimals$}");
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        text
    }
}

/// The message sizes a test runs: `min`, `min * factor`, ... up to `max` bytes (nccl-tests'
/// `-b`, `-e`, `-f`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sizes {
    pub min: u64,
    pub max: u64,
    pub factor: u64,
}

impl Default for Sizes {
    /// nccl-tests' own defaults: one size, 32M.
    fn default() -> Self {
        Sizes {
            min: 32 << 20,
            max: 32 << 20,
            factor: 2,
        }
    }
}

/// nccl-tests' size argument: `8`, `1K`, `512M`, `8G` (powers of 1024).
pub fn parse_size(text: &str) -> Option<u64> {
    let text = text.trim().trim_matches(|c| c == '"' || c == '\'');
    let (number, shift) = match text.char_indices().last()? {
        (at, 'K' | 'k') => (&text[..at], 10),
        (at, 'M' | 'm') => (&text[..at], 20),
        (at, 'G' | 'g') => (&text[..at], 30),
        (at, 'T' | 't') => (&text[..at], 40),
        _ => (text, 0),
    };
    number.parse::<u64>().ok()?.checked_mul(1 << shift)
}

/// The sizes a test container runs, from its command, args and env (see the module doc): the
/// TCPX image's `run-allgather.sh <gpus> <nics> <min> <max> <hosts>`; the TCPXO image's
/// `demo-run-nccl-test-tcpxo-via-mpi.sh`, which runs `-b $DATA_MIN -e $DATA_MAX -f 2` (defaults
/// 8 and 8G; google/nccl-plugin-gpudirect-tcpxo `tcpxo_scripts/`); else the `-b`/`--minbytes`,
/// `-e`/`--maxbytes` and `-f`/`--stepfactor` flags of an nccl-tests binary or of the gIB image's
/// `run_nccl_tests.sh`, over nccl-tests' defaults.
pub fn sizes(container: &Value) -> Sizes {
    let words: Vec<&str> = ["command", "args"]
        .iter()
        .flat_map(|k| container[*k].as_array().into_iter().flatten())
        .filter_map(Value::as_str)
        .flat_map(str::split_whitespace)
        .collect();
    if let Some(at) = words.iter().position(|w| w.ends_with("run-allgather.sh")) {
        let arg = |i: usize| words.get(at + i).and_then(|w| parse_size(w));
        return Sizes {
            min: arg(3).unwrap_or(1 << 20),
            max: arg(4).unwrap_or(8 << 30),
            factor: 2,
        };
    }
    if words
        .iter()
        .any(|w| w.ends_with("demo-run-nccl-test-tcpxo-via-mpi.sh"))
    {
        let env: Vec<String> = container["env"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|e| Some(format!("{}={}", e["name"].as_str()?, e["value"].as_str()?)))
            .collect();
        // An assignment on the command line wins over the container's env.
        let var = |name: &str| {
            let prefix = format!("{name}=");
            words
                .iter()
                .rev()
                .copied()
                .chain(env.iter().map(String::as_str))
                .find_map(|w| w.strip_prefix(&prefix).and_then(parse_size))
        };
        return Sizes {
            min: var("DATA_MIN").unwrap_or(8),
            max: var("DATA_MAX").unwrap_or(8 << 30),
            factor: 2,
        };
    }
    let mut sizes = Sizes::default();
    for pair in words.windows(2) {
        let value = || parse_size(pair[1]);
        match pair[0] {
            "-b" | "--minbytes" => sizes.min = value().unwrap_or(sizes.min),
            "-e" | "--maxbytes" => sizes.max = value().unwrap_or(sizes.max),
            "-f" | "--stepfactor" => sizes.factor = value().unwrap_or(sizes.factor),
            _ => {}
        }
    }
    sizes
}

/// The message size, in bytes, at which the simulated bus bandwidth is half its peak: busbw(s) =
/// peak · s / (s + HALF_PEAK_BYTES), latency-bound at small sizes and saturating at large ones
/// (a fixed per-collective latency plus a bandwidth term). Fitted to a real run
/// (`shared/reference/captures/nccl-tests-all_gather_perf-1K-8G-4xH200-nvlink.txt`: its 1K–8G
/// average, 135.627 GB/s, is 0.393 of the mean of its 2G–8G rows, 345.0 GB/s); with this value a
/// simulated 1K–8G run has the same ratio.
pub const HALF_PEAK_BYTES: f64 = 18.0e6;

/// In-place runs a little faster than out-of-place (the capture: 343.53 against 331.83 GB/s at
/// 2G): each half is this fraction off their mean.
const IN_PLACE_SPREAD: f64 = 0.015;

/// The sizes the configured bandwidth is the mean of: 2G, 4G and 8G, the range Cluster Health
/// Scanner's floors are set for.
const CONFIGURED_AT: [u64; 3] = [2 << 30, 4 << 30, 8 << 30];

/// The simulated bus bandwidth at `size` bytes (the mean of both halves), in GB/s, for a pair
/// whose 2G–8G mean is `gbps`.
pub fn bus_bandwidth_at(size: u64, gbps: f64) -> f64 {
    let shape = |s: f64| s / (s + HALF_PEAK_BYTES);
    let at_configured =
        CONFIGURED_AT.iter().map(|s| shape(*s as f64)).sum::<f64>() / CONFIGURED_AT.len() as f64;
    gbps * shape(size as f64) / at_configured
}

/// nccl-tests' `getFloatStr`: `value` in `width` columns, with fewer decimals as it grows.
fn float_cell(value: f64, width: usize) -> String {
    let mut power = 0;
    let mut bound = 1.0;
    while value >= bound {
        power += 1;
        bound *= 10.0;
    }
    if power + 2 < width {
        format!("{value:>width$.2}")
    } else if power + 1 < width {
        format!("{value:>width$.1}")
    } else if power < width + 1 {
        format!("{value:>width$.0}")
    } else {
        // `%*.1e`: C writes the exponent with a sign and two digits.
        let text = format!("{value:.1e}");
        let (mantissa, exponent) = text.split_once('e').unwrap_or((&text, "0"));
        let exponent: i32 = exponent.parse().unwrap_or(0);
        let sign = if exponent < 0 { '-' } else { '+' };
        format!(
            "{:>width$}",
            format!("{mantissa}e{sign}{:02}", exponent.abs())
        )
    }
}

/// The leader's log for `outcome`: what `benchmark` prints over `hosts` (pod hostnames, in rank
/// order) with `gpus` GPUs each, for `sizes`; and its exit code. The layout is nccl-tests' own
/// (`src/util.cu`, as in `shared/reference/captures/`): the version, the run's parameters, one
/// line per rank, the table header, one row per size with both halves (time, algbw, busbw,
/// #wrong), `# Out of bounds values : 0 OK`, `# Avg bus bandwidth    : %g ` (the mean of every
/// row's bus bandwidth, both halves, as nccl-tests computes it) and `# Collective test
/// concluded: <benchmark>`. The bus bandwidth follows [`bus_bandwidth_at`]: the outcome's
/// bandwidth is the mean of the 2G, 4G and 8G rows, whether or not the run reaches them.
pub fn leader_log(
    hosts: &[String],
    gpus: u32,
    gpu_name: &str,
    benchmark: &str,
    sizes: Sizes,
    outcome: &Outcome,
) -> (i32, String) {
    let mut out = String::new();
    let Sizes { min, max, factor } = sizes;
    out.push_str(&format!(
        "# nccl-tests version 2.19.6 nccl-headers=22809 nccl-library=22809\n\
         # Collective test starting: {benchmark}\n\
         # nThread 1 nGpus 1 minBytes {min} maxBytes {max} step: {factor}(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0 unalign: 0\n\
         #\n# Using devices\n"
    ));
    let mut rank = 0;
    for (h, host) in hosts.iter().enumerate() {
        for device in 0..gpus {
            out.push_str(&format!(
                "#  Rank {rank:2} Group  0 Pid {:6} on {host:>10} device {device:2} [0000:{:02x}:00] {gpu_name}\n",
                1000 + h * 100 + device as usize,
                [4u32, 5, 0x0b, 0x0c, 0x84, 0x85, 0x8b, 0x8c][device as usize % 8]
            ));
            rank += 1;
        }
    }
    let first_host = hosts.first().map(String::as_str).unwrap_or("localhost");
    let gbps = match outcome {
        Outcome::Bandwidth { gbps, .. } => *gbps,
        Outcome::MissingNetworks(missing) => {
            out.push_str(&format!(
                "{first_host}: NCCL WARN NET/GPUDirect : no device found for the GPU NICs (Networks not found: {})\n",
                missing.join(", ")
            ));
            out.push_str(&format!(
                "{first_host}: Test NCCL failure common.cu:1005 'internal error - please report this issue to the NCCL developers / '\n",
            ));
            return (1, out);
        }
        Outcome::NoGpu => {
            out.push_str(&format!(
                "{first_host}: Test CUDA failure common.cu:892 'no CUDA-capable device is detected'\n",
            ));
            return (1, out);
        }
    };
    out.push_str(&format!(
        "#\n# {:>10}  {:>12}  {:>8}  {:>6}  {:>6}           out-of-place                       in-place          \n",
        "", "", "", "", ""
    ));
    out.push_str(&format!(
        "# {:>10}  {:>12}  {:>8}  {:>6}  {:>6}  {:>7}  {:>6}  {:>6}  {:>6}  {:>7}  {:>6}  {:>6}  {:>6} \n",
        "size", "count", "type", "redop", "root", "time", "algbw", "busbw", "#wrong", "time", "algbw",
        "busbw", "#wrong"
    ));
    out.push_str(&format!(
        "# {:>10}  {:>12}  {:>8}  {:>6}  {:>6}  {:>7}  {:>6}  {:>6}  {:>6}  {:>7}  {:>6}  {:>6}  {:>6} \n",
        "(B)", "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)", ""
    ));
    let ranks = u64::from(hosts.len().max(1) as u32 * gpus.max(1));
    let n = ranks as f64;
    // Bytes on the wire per byte of the collective's size (nccl-tests' `busBw` factors), and
    // whether the size is split across ranks (the elements counted per rank).
    let (bus_factor, per_rank, redop) = match benchmark {
        "all_reduce_perf" => (2.0 * (n - 1.0) / n, false, "sum"),
        "all_gather_perf" => ((n - 1.0) / n, true, "none"),
        "reduce_scatter_perf" => ((n - 1.0) / n, true, "sum"),
        "alltoall_perf" => ((n - 1.0) / n, true, "none"),
        "reduce_perf" => (1.0, false, "sum"),
        _ => (1.0, false, "none"),
    };
    let root = if matches!(benchmark, "broadcast_perf" | "reduce_perf") {
        0
    } else {
        -1
    };
    let mut size = min.max(1);
    let mut cells = vec![];
    loop {
        let count = if per_rank { size / 4 / ranks } else { size / 4 };
        let bytes = if per_rank {
            count * 4 * ranks
        } else {
            count * 4
        };
        let busbw = bus_bandwidth_at(bytes, gbps);
        let mut line = format!(
            "{bytes:12}  {count:12}  {:>8}  {redop:>6}  {root:>6}",
            "float"
        );
        for spread in [-IN_PLACE_SPREAD, IN_PLACE_SPREAD] {
            let busbw = busbw * (1.0 + spread);
            let algbw = busbw / bus_factor.max(f64::MIN_POSITIVE);
            // The time of a message: its size at the algorithm bandwidth, which at small sizes
            // is the collective's latency (the curve's `s + HALF_PEAK_BYTES`).
            let peak_algbw = bus_bandwidth_at(u64::MAX, gbps) * (1.0 + spread)
                / bus_factor.max(f64::MIN_POSITIVE);
            let time_us = (bytes as f64 + HALF_PEAK_BYTES) / (peak_algbw * 1e3);
            line.push_str(&format!(
                "  {}  {}  {}  {:>6}",
                float_cell(time_us, 7),
                float_cell(algbw, 6),
                float_cell(busbw, 6),
                0
            ));
            cells.push(busbw);
        }
        out.push_str(&line);
        out.push('\n');
        match size.checked_mul(factor.max(2)) {
            Some(next) if next <= max => size = next,
            _ => break,
        }
    }
    let average = cells.iter().sum::<f64>() / cells.len().max(1) as f64;
    out.push_str("# Out of bounds values : 0 OK\n");
    out.push_str(&format!(
        "# Avg bus bandwidth    : {} \n#\n# Collective test concluded: {benchmark}\n#\n",
        format_g(average)
    ));
    (0, out)
}

/// The GPU name `nvidia-smi` prints for an accelerator.
pub fn gpu_name(accelerator: &str) -> &'static str {
    match accelerator {
        "nvidia-h100-80gb" | "nvidia-h100-mega-80gb" => "NVIDIA H100 80GB HBM3",
        "nvidia-h200-141gb" => "NVIDIA H200",
        "nvidia-b200" => "NVIDIA B200",
        "nvidia-a100-80gb" => "NVIDIA A100-SXM4-80GB",
        "nvidia-tesla-a100" => "NVIDIA A100-SXM4-40GB",
        "nvidia-l4" => "NVIDIA L4",
        _ => "NVIDIA GPU",
    }
}

/// One pod's NCCL test container, for [`decide_ends`].
struct Member {
    key: String,
    index: u32,
    container: String,
    /// When the test container starts (possibly after `now`).
    start: Option<SimTime>,
    ended: Option<End>,
    test_ms: u64,
    hostname: String,
    gpus: u32,
    /// The nccl-tests binary it runs, and over which sizes.
    benchmark: &'static str,
    sizes: Sizes,
}

/// The GPUs a container asks for (limit, else request).
fn gpus(container: &Value) -> u32 {
    ["limits", "requests"]
        .iter()
        .map(|k| &container["resources"][*k]["nvidia.com/gpu"])
        .find_map(|v| {
            v.as_u64()
                .or_else(|| v.as_str().and_then(|s| s.parse().ok()))
        })
        .unwrap_or(0) as u32
}

/// Decides which NCCL test containers have ended by `now` (see the module doc), recording each
/// end once in its pod's run.
pub fn decide_ends(cluster: &mut KubeCluster, config: &WorkloadConfig, now: SimTime) {
    // By the Job's uid for pods of an Indexed Job, else by the pod's key (a test of its own).
    let mut groups: BTreeMap<String, Vec<Member>> = BTreeMap::new();
    for key in cluster.store.keys("", "pods") {
        let Some(pod) = cluster.store.objects.get(&key) else {
            continue;
        };
        if pod["metadata"].get("deletionTimestamp").is_some() {
            continue;
        }
        let Some(run) = cluster.controllers.pods.get(&key) else {
            continue;
        };
        let Some(container) = pod["spec"]["containers"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|c| nccl_benchmark(pod, c).is_some())
        else {
            continue;
        };
        let name = container["name"].as_str().unwrap_or_default().to_string();
        let index = pod["metadata"]["annotations"][JOB_INDEX]
            .as_str()
            .and_then(|i| i.parse::<u32>().ok());
        let job = pod["metadata"]["labels"][JOB_UID].as_str();
        let group = match (index, job) {
            (Some(_), Some(uid)) => uid.to_string(),
            _ => key.clone(),
        };
        let hostname = pod["spec"]["hostname"]
            .as_str()
            .or(pod["metadata"]["name"].as_str())
            .unwrap_or_default()
            .to_string();
        let member = Member {
            key: key.clone(),
            index: index.unwrap_or(0),
            start: super::pods::started_at(pod, run, &name),
            ended: run.ends.get(&name).cloned(),
            container: name,
            test_ms: run.test_ms,
            hostname,
            gpus: gpus(container),
            benchmark: nccl_benchmark(pod, container).unwrap_or("all_gather_perf"),
            sizes: sizes(container),
        };
        groups.entry(group).or_default().push(member);
    }
    let mut decided: Vec<(String, String, End)> = vec![];
    for (group, members) in &groups {
        let size = cluster
            .store
            .list("batch", "jobs", None)
            .into_iter()
            .find(|j| j["metadata"]["uid"].as_str() == Some(group.as_str()))
            .and_then(|j| j["spec"]["completions"].as_u64())
            .map_or(1, |c| c.max(1) as u32);
        let live = |index: u32| {
            members
                .iter()
                .find(|m| m.index == index && m.ended.is_none())
        };
        // The leader: its test begins once every index's test container runs.
        if let Some(leader) = live(0) {
            let hosts: Option<Vec<&Member>> = (0..size).map(live).collect();
            let begin = hosts.as_ref().and_then(|hosts| {
                hosts
                    .iter()
                    .map(|m| m.start)
                    .collect::<Option<Vec<_>>>()
                    .and_then(|t| t.into_iter().max())
            });
            if let (Some(hosts), Some(begin)) = (hosts, begin)
                && begin.plus_ms(leader.test_ms) <= now
            {
                let pod = &cluster.store.objects[&leader.key];
                let node = cluster
                    .controllers
                    .pods
                    .get(&leader.key)
                    .and_then(|r| r.node.as_deref())
                    .and_then(|n| cluster.store.get("", "nodes", "", n));
                let accelerator = node
                    .and_then(|n| n["metadata"]["labels"][ACCELERATOR_LABEL].as_str())
                    .unwrap_or_default();
                let claims_rdma = node.is_some_and(|n| claims_rdma_nics(cluster, pod, n));
                let outcome = outcome(
                    config,
                    pod,
                    node,
                    |network| {
                        cluster
                            .store
                            .get("networking.gke.io", "networks", "", network)
                            .is_some()
                    },
                    claims_rdma,
                );
                let names: Vec<String> = hosts.iter().map(|m| m.hostname.clone()).collect();
                let (exit_code, log) = leader_log(
                    &names,
                    leader.gpus.max(1),
                    gpu_name(accelerator),
                    leader.benchmark,
                    leader.sizes,
                    &outcome,
                );
                let end = End {
                    at: begin.plus_ms(leader.test_ms),
                    exit_code,
                    log,
                };
                decided.push((leader.key.clone(), leader.container.clone(), end));
            }
        }
        // The peers: they stop when the leader's test container ends.
        let leader_end = members
            .iter()
            .filter(|m| m.index == 0)
            .filter_map(|m| m.ended.as_ref().map(|e| e.at))
            .chain(
                decided
                    .iter()
                    .filter(|(key, _, _)| members.iter().any(|m| m.key == *key && m.index == 0))
                    .map(|(_, _, e)| e.at),
            )
            .max();
        for peer in members.iter().filter(|m| m.index != 0 && m.ended.is_none()) {
            if let (Some(at), Some(start)) = (leader_end, peer.start)
                && start <= at
            {
                let end = End {
                    at,
                    exit_code: 0,
                    log: String::new(),
                };
                decided.push((peer.key.clone(), peer.container.clone(), end));
            }
        }
    }
    for (key, container, end) in decided {
        if let Some(run) = cluster.controllers.pods.get_mut(&key) {
            run.ends.entry(container).or_insert(end);
        }
    }
    decide_other_ends(cluster, config, now);
}

/// Gives every other regular container that has started by `now` its end, once
/// ([`super::outcomes`]): recorded when it starts, with the moment it will end (the pod's status
/// shows it only from then on).
fn decide_other_ends(cluster: &mut KubeCluster, config: &WorkloadConfig, now: SimTime) {
    let mut decided: Vec<(String, String, End, Option<String>)> = vec![];
    for key in cluster.store.keys("", "pods") {
        let Some(pod) = cluster.store.objects.get(&key) else {
            continue;
        };
        if pod["metadata"].get("deletionTimestamp").is_some() {
            continue;
        }
        let Some(run) = cluster.controllers.pods.get(&key) else {
            continue;
        };
        let node_name = run.node.as_deref().unwrap_or_default();
        let node = cluster.store.get("", "nodes", "", node_name);
        let host = Host {
            node: node_name,
            accelerator: node.and_then(|n| n["metadata"]["labels"][ACCELERATOR_LABEL].as_str()),
        };
        for container in pod["spec"]["containers"].as_array().into_iter().flatten() {
            let name = container["name"].as_str().unwrap_or_default();
            if run.ends.contains_key(name) || nccl_benchmark(pod, container).is_some() {
                continue;
            }
            let Some(start) = super::pods::started_at(pod, run, name).filter(|t| *t <= now) else {
                continue;
            };
            // A fault used earlier in this pass counts as used.
            let mut uses = cluster.controllers.outcome_uses.clone();
            for (_, _, _, entry) in &decided {
                if let Some(entry) = entry {
                    *uses.entry(entry.clone()).or_insert(0) += 1;
                }
            }
            let Some(outcome) = outcomes::decide(&config.outcomes, &uses, pod, container, &host)
            else {
                continue;
            };
            let end = End {
                at: outcomes::end_at(start, &outcome),
                exit_code: outcome.exit_code,
                log: outcome.log,
            };
            let fault = outcome.declared.filter(|entry| {
                config
                    .outcomes
                    .iter()
                    .any(|d| d.times.is_some() && d.key() == *entry)
            });
            decided.push((key.clone(), name.to_string(), end, fault));
        }
    }
    for (key, container, end, fault) in decided {
        if let Some(entry) = fault {
            *cluster.controllers.outcome_uses.entry(entry).or_insert(0) += 1;
        }
        if let Some(run) = cluster.controllers.pods.get_mut(&key) {
            run.ends.entry(container).or_insert(end);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn g_formats_like_printf() {
        assert_eq!(format_g(45.1), "45.1");
        assert_eq!(format_g(123.456789), "123.457");
        assert_eq!(format_g(49.99), "49.99");
        assert_eq!(format_g(50.0), "50");
        assert_eq!(format_g(2.5), "2.5");
        assert_eq!(format_g(1234567.0), "1.23457e+06");
    }

    #[test]
    fn nccl_tests_are_found_in_commands_and_scripts() {
        let pod = json!({"spec": {"restartPolicy": "Never"}});
        let c = |cmd: &str| json!({"command": ["/bin/bash", "-c", cmd]});
        assert_eq!(
            nccl_benchmark(&pod, &c("BENCHMARK=all_gather_perf /scripts/x.sh")),
            Some("all_gather_perf")
        );
        assert_eq!(
            nccl_benchmark(&pod, &c("/opt/all_reduce_perf -b 8")),
            Some("all_reduce_perf")
        );
        assert_eq!(
            nccl_benchmark(&pod, &c("/scripts/run-allgather.sh 8 eth1 1M 8G 2")),
            Some("all_gather_perf")
        );
        assert_eq!(nccl_benchmark(&pod, &c("sleep infinity")), None);
        let always = json!({"spec": {"restartPolicy": "Always"}});
        assert_eq!(nccl_benchmark(&always, &c("all_gather_perf")), None);
    }

    /// (size, out-of-place busbw, in-place busbw) of each row of a log, and its footer average.
    fn table(log: &str) -> (Vec<(u64, f64, f64)>, f64) {
        let rows = log
            .lines()
            .filter(|l| !l.starts_with('#'))
            .map(|l| {
                let cells: Vec<&str> = l.split_whitespace().collect();
                assert_eq!(cells.len(), 13, "{l}");
                (
                    cells[0].parse().unwrap(),
                    cells[7].parse().unwrap(),
                    cells[11].parse().unwrap(),
                )
            })
            .collect();
        let footer = log
            .lines()
            .find_map(|l| l.strip_prefix("# Avg bus bandwidth    : "))
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        (rows, footer)
    }

    fn mean(cells: impl Iterator<Item = f64>) -> f64 {
        let cells: Vec<f64> = cells.collect();
        cells.iter().sum::<f64>() / cells.len() as f64
    }

    const ONE_K_TO_8G: Sizes = Sizes {
        min: 1 << 10,
        max: 8 << 30,
        factor: 2,
    };

    #[test]
    fn the_log_is_nccl_tests_table_whose_2g_8g_rows_average_to_the_configured_bandwidth() {
        let hosts = vec!["j-0".to_string(), "j-1".to_string()];
        let outcome = Outcome::Bandwidth {
            gbps: 49.9,
            gpudirect: true,
        };
        let (code, log) = leader_log(
            &hosts,
            8,
            "NVIDIA H100 80GB HBM3",
            "all_gather_perf",
            ONE_K_TO_8G,
            &outcome,
        );
        assert_eq!(code, 0);
        assert!(
            log.starts_with(
                "# nccl-tests version 2.19.6 nccl-headers=22809 nccl-library=22809\n# Collective test starting: all_gather_perf\n# nThread 1 nGpus 1 minBytes 1024 maxBytes 8589934592 step: 2(factor)"
            ),
            "{log}"
        );
        assert!(log.contains(
            "#  Rank 15 Group  0 Pid   1107 on        j-1 device  7 [0000:8c:00] NVIDIA H100 80GB HBM3\n"
        ));
        // The capture's header, verbatim.
        assert!(log.contains("#       size         count      type   redop    root     time   algbw   busbw  #wrong     time   algbw   busbw  #wrong \n#        (B)    (elements)                               (us)  (GB/s)  (GB/s)             (us)  (GB/s)  (GB/s)         \n"), "{log}");
        let (rows, footer) = table(&log);
        assert_eq!(rows.len(), 24);
        assert_eq!(rows[0].0, 1024);
        assert_eq!(rows[23].0, 8 << 30);
        assert!(log.contains("\n        1024            16     float    none      -1  "));
        // The configured bandwidth is the 2G–8G figure.
        let judged = mean(
            rows.iter()
                .filter(|r| r.0 >= 2 << 30)
                .flat_map(|r| [r.1, r.2]),
        );
        assert!((judged - 49.9).abs() < 0.005, "{judged}");
        // The footer is the mean of every cell, as nccl-tests computes it.
        let all = mean(rows.iter().flat_map(|r| [r.1, r.2]));
        assert!((all - footer).abs() < 0.005, "{all} {footer}");
        // Bandwidth grows with the size; in-place a little above out-of-place.
        for pair in rows.windows(2) {
            assert!(pair[0].1 <= pair[1].1, "{pair:?}");
        }
        assert!(rows[23].2 > rows[23].1);
        assert!(log.ends_with(&format!(
            "# Out of bounds values : 0 OK\n# Avg bus bandwidth    : {} \n#\n# Collective test concluded: all_gather_perf\n#\n",
            format_g(footer)
        )));
    }

    #[test]
    fn the_curve_has_the_captures_shape() {
        // The 4×H200 capture: 1K–8G average 135.627, 2G–8G rows 345.017.
        let capture = 135.627 / 345.0167;
        let (_, log) = leader_log(
            &["h".to_string()],
            4,
            "NVIDIA H200",
            "all_gather_perf",
            ONE_K_TO_8G,
            &Outcome::Bandwidth {
                gbps: 345.0,
                gpudirect: true,
            },
        );
        let (rows, footer) = table(&log);
        let judged = mean(
            rows.iter()
                .filter(|r| r.0 >= 2 << 30)
                .flat_map(|r| [r.1, r.2]),
        );
        let ratio = footer / judged;
        assert!((ratio - capture).abs() < 0.01, "{ratio} {capture}");
        // Latency-bound at 1K (the capture: 0.02 GB/s), within 5 % of the 8G row from 1G.
        assert!(rows[0].1 < 0.05, "{:?}", rows[0]);
        assert!(rows[20].1 > 0.95 * rows[23].1, "{:?}", rows[20]);
    }

    #[test]
    fn a_run_short_of_2g_has_no_such_rows_and_sizes_follow_the_scripts() {
        let c = |cmd: &str| json!({"command": ["/bin/bash", "-c", cmd]});
        let tcpx = sizes(&c(
            "/scripts/run-allgather.sh 8 eth1,eth2,eth3,eth4 1M 512M 2",
        ));
        assert_eq!(
            tcpx,
            Sizes {
                min: 1 << 20,
                max: 512 << 20,
                factor: 2
            }
        );
        let (_, log) = leader_log(
            &["h".to_string()],
            8,
            "NVIDIA H100 80GB HBM3",
            "all_gather_perf",
            tcpx,
            &Outcome::Bandwidth {
                gbps: 80.0,
                gpudirect: true,
            },
        );
        let (rows, _) = table(&log);
        assert_eq!(rows.len(), 10);
        assert_eq!(rows.last().unwrap().0, 512 << 20);
        // Below the 2G–8G figure, as on the curve.
        assert!(rows.last().unwrap().1 < 80.0);

        let tcpxo = "BENCHMARK=all_gather_perf NHOSTS=2 DATA_MIN=1K DATA_MAX=8G /scripts/demo-run-nccl-test-tcpxo-via-mpi.sh";
        assert_eq!(sizes(&c(tcpxo)), ONE_K_TO_8G);
        let defaults = json!({"command": ["/bin/bash", "-c", "BENCHMARK=all_gather_perf /scripts/demo-run-nccl-test-tcpxo-via-mpi.sh"],
            "env": [{"name": "DATA_MAX", "value": "4G"}]});
        assert_eq!(
            sizes(&defaults),
            Sizes {
                min: 8,
                max: 4 << 30,
                factor: 2
            }
        );
        assert_eq!(
            sizes(&c(
                "/usr/local/gib/scripts/run_nccl_tests.sh -t all_gather -b 1K -e 8G h0 h1"
            )),
            ONE_K_TO_8G
        );
        assert_eq!(
            sizes(&json!({"command": ["all_reduce_perf", "-b", "8", "-e", "1G", "-f", "4"]})),
            Sizes {
                min: 8,
                max: 1 << 30,
                factor: 4
            }
        );
        assert_eq!(sizes(&c("all_gather_perf")), Sizes::default());
        assert_eq!(parse_size("8G"), Some(8 << 30));
        assert_eq!(parse_size("1k"), Some(1024));
        assert_eq!(parse_size("x"), None);
    }

    #[test]
    fn cells_are_formatted_as_nccl_tests_does() {
        assert_eq!(float_cell(0.02, 6), "  0.02");
        assert_eq!(float_cell(343.53, 6), "343.53");
        assert_eq!(float_cell(1234.5, 6), "1234.5");
        assert_eq!(float_cell(18478.1, 7), "18478.1");
        assert_eq!(float_cell(123456.0, 6), "123456");
        assert_eq!(float_cell(12345678.0, 6), "1.2e+07");
    }

    #[test]
    fn missing_networks_fail_and_no_networks_fall_back_to_tcp() {
        let config = WorkloadConfig::default();
        let node = json!({"metadata": {"labels": {ACCELERATOR_LABEL: "nvidia-h100-mega-80gb"}}});
        let annotated = |networks: &str| json!({"metadata": {"annotations": {"networking.gke.io/interfaces": networks}}});
        let pod = annotated(
            r#"[{"interfaceName":"eth0","network":"default"},{"interfaceName":"eth1","network":"vpc1"}]"#,
        );
        assert_eq!(
            outcome(&config, &pod, Some(&node), |_| true, false),
            Outcome::Bandwidth {
                gbps: 180.0,
                gpudirect: true
            }
        );
        // A pod without device Networks that claims the node's managed RDMA NICs uses them.
        assert_eq!(
            outcome(&config, &json!({}), Some(&node), |_| true, true),
            Outcome::Bandwidth {
                gbps: 180.0,
                gpudirect: true
            }
        );
        assert_eq!(
            outcome(&config, &pod, Some(&node), |n| n != "vpc1", false),
            Outcome::MissingNetworks(vec!["vpc1".into()])
        );
        assert_eq!(
            outcome(&config, &json!({}), Some(&node), |_| true, false),
            Outcome::Bandwidth {
                gbps: 2.5,
                gpudirect: false
            }
        );
        assert_eq!(
            outcome(&config, &pod, Some(&json!({})), |_| true, false),
            Outcome::NoGpu
        );
    }
}
