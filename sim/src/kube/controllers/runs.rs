//! How a container ends: the one kind of program the simulated kubelet runs to completion — an
//! NCCL test — with its duration, exit code and log, and the settings that decide the bus
//! bandwidth it reports ([`WorkloadConfig`], world file `[workloads]`, admin
//! `/_sim/workloads`). Every other container runs until its pod is deleted, as before;
//! [`super::pods`] turns the ends decided here into container and pod statuses.
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
//! Exit 0 logs nccl-tests' own output (`src/common.cu`: the `# nThread ...` line, the device
//! list, the size table, `# Out of bounds values : 0 OK`, `# Avg bus bandwidth    : %g `, `#`),
//! with rows whose bus bandwidths average to the reported value.

use crate::clock::SimTime;
use crate::kube::KubeCluster;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;

/// The annotation (and label) that carries a Job pod's completion index.
pub const JOB_INDEX: &str = "batch.kubernetes.io/job-completion-index";
/// The label that carries the uid of a pod's Job.
pub const JOB_UID: &str = "batch.kubernetes.io/controller-uid";
/// The node label that names a GPU node's accelerator.
pub const ACCELERATOR_LABEL: &str = "cloud.google.com/gke-accelerator";

/// The bus bandwidths NCCL tests report (world file `[workloads]`, `GET`/`PUT /_sim/workloads`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WorkloadConfig {
    /// GB/s an NCCL test reports between nodes of one accelerator
    /// (`cloud.google.com/gke-accelerator`) over their GPU NICs.
    pub nccl_bus_bandwidth_gbps: BTreeMap<String, f64>,
    /// GB/s it reports over plain TCP on eth0 (no device Networks, or an accelerator without an
    /// entry above).
    pub tcp_bus_bandwidth_gbps: f64,
}

impl Default for WorkloadConfig {
    /// Illustrative values, not measurements: above a3ctl's floors (Cluster Health Scanner's 60
    /// GB/s A3 High, 150 GB/s A3 Mega, 250 GB/s A3 Ultra and A4) as a healthy GPUDirect pair
    /// would be, and TCP far below all of them.
    fn default() -> Self {
        WorkloadConfig {
            nccl_bus_bandwidth_gbps: BTreeMap::from([
                ("nvidia-h100-80gb".to_string(), 80.0),
                ("nvidia-h100-mega-80gb".to_string(), 180.0),
                ("nvidia-h200-141gb".to_string(), 320.0),
                ("nvidia-b200".to_string(), 360.0),
            ]),
            tcp_bus_bandwidth_gbps: 2.5,
        }
    }
}

/// What a world file or an admin request sets: entries given replace the defaults' entries for
/// the same accelerators (the others keep theirs).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WorkloadSpec {
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub nccl_bus_bandwidth_gbps: BTreeMap<String, f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tcp_bus_bandwidth_gbps: Option<f64>,
}

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

/// How a container ended (persisted with the pod's run).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct End {
    pub at: SimTime,
    pub exit_code: i32,
    /// Its whole log.
    pub log: String,
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

/// The leader's log for `outcome`: what nccl-tests print over `hosts` (pod hostnames, in rank
/// order) with `gpus` GPUs each; and its exit code.
pub fn leader_log(hosts: &[String], gpus: u32, gpu_name: &str, outcome: &Outcome) -> (i32, String) {
    let mut out = String::new();
    let min_bytes: u64 = 1 << 20;
    let max_bytes: u64 = 8 << 30;
    out.push_str(&format!(
        "# nThread 1 nGpus 1 minBytes {min_bytes} maxBytes {max_bytes} step: 2(factor) warmup iters: 5 iters: 100 agg iters: 1 validation: 1 graph: 0\n#\n# Using devices\n"
    ));
    let mut rank = 0;
    for (h, host) in hosts.iter().enumerate() {
        for device in 0..gpus {
            out.push_str(&format!(
                "#  Rank {rank:2} Group  0 Pid {:6} on {host} device {device:2} [0x{:02x}] {gpu_name}\n",
                1000 + h * 100 + device as usize,
                [4u32, 5, 0x0b, 0x0c, 0x84, 0x85, 0x8b, 0x8c][device as usize % 8]
            ));
            rank += 1;
        }
    }
    let (gbps, _) = match outcome {
        Outcome::Bandwidth { gbps, gpudirect } => (*gbps, *gpudirect),
        Outcome::MissingNetworks(missing) => {
            out.push_str(&format!(
                "{}: NCCL WARN NET/GPUDirect : no device found for the GPU NICs (Networks not found: {})\n",
                hosts.first().map(String::as_str).unwrap_or("localhost"),
                missing.join(", ")
            ));
            out.push_str(&format!(
                "{}: Test NCCL failure common.cu:1005 'internal error - please report this issue to the NCCL developers / '\n",
                hosts.first().map(String::as_str).unwrap_or("localhost"),
            ));
            return (1, out);
        }
        Outcome::NoGpu => {
            out.push_str(&format!(
                "{}: Test CUDA failure common.cu:892 'no CUDA-capable device is detected'\n",
                hosts.first().map(String::as_str).unwrap_or("localhost"),
            ));
            return (1, out);
        }
    };
    out.push_str("#\n#                                                              out-of-place                       in-place          \n");
    out.push_str("#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n");
    out.push_str("#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)       \n");
    let ranks = (hosts.len().max(1) as u32 * gpus.max(1)) as f64;
    // The bus bandwidth grows with the message size and levels off; the rows are scaled so that
    // their mean (in- and out-of-place alike) is the reported value.
    let sizes: Vec<u64> = std::iter::successors(Some(min_bytes), |s| Some(s * 2))
        .take_while(|s| *s <= max_bytes)
        .collect();
    let shape: Vec<f64> = (0..sizes.len())
        .map(|i| 1.0 - 0.6 * (-(i as f64) / 3.0).exp())
        .collect();
    let mean = shape.iter().sum::<f64>() / shape.len() as f64;
    // all_gather's bus factor (n-1)/n; the others are close enough for a made-up table.
    let factor = (ranks - 1.0) / ranks;
    for (size, s) in sizes.iter().zip(&shape) {
        let busbw = gbps * s / mean;
        let algbw = busbw / factor.max(f64::MIN_POSITIVE);
        let time_us = *size as f64 / (algbw * 1e3);
        let count = size / 4;
        let cell = format!("  {time_us:7.1}  {algbw:6.2}  {busbw:6.2}  {:>5}", 0);
        out.push_str(&format!(
            "{size:12}  {count:12}  {:>8}  {:>6}  {:6}{cell}{cell}\n",
            "float", "none", -1
        ));
    }
    out.push_str("# Out of bounds values : 0 OK\n");
    out.push_str(&format!(
        "# Avg bus bandwidth    : {} \n#\n",
        format_g(gbps)
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
                let (exit_code, log) =
                    leader_log(&names, leader.gpus.max(1), gpu_name(accelerator), &outcome);
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
            nccl_benchmark(&pod, &c("/scripts/run-allgather.sh 8 eth1 1M 512M 2")),
            Some("all_gather_perf")
        );
        assert_eq!(nccl_benchmark(&pod, &c("sleep infinity")), None);
        let always = json!({"spec": {"restartPolicy": "Always"}});
        assert_eq!(nccl_benchmark(&always, &c("all_gather_perf")), None);
    }

    #[test]
    fn the_log_ends_with_the_reported_bandwidth_and_its_rows_average_to_it() {
        let hosts = vec!["j-0".to_string(), "j-1".to_string()];
        let outcome = Outcome::Bandwidth {
            gbps: 49.9,
            gpudirect: true,
        };
        let (code, log) = leader_log(&hosts, 8, "NVIDIA H100 80GB HBM3", &outcome);
        assert_eq!(code, 0);
        assert!(
            log.ends_with("# Avg bus bandwidth    : 49.9 \n#\n"),
            "{log}"
        );
        let rows: Vec<f64> = log
            .lines()
            .filter(|l| !l.starts_with('#'))
            .flat_map(|l| {
                let cells: Vec<&str> = l.split_whitespace().collect();
                [
                    cells[7].parse::<f64>().unwrap(),
                    cells[11].parse::<f64>().unwrap(),
                ]
            })
            .collect();
        let mean = rows.iter().sum::<f64>() / rows.len() as f64;
        assert!((mean - 49.9).abs() < 0.01, "{mean}");
        assert!(log.contains("#  Rank 15 Group  0 Pid"));
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
