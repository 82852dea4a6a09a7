//! The two-node NCCL all-gather test of `a3ctl verify --nccl-test`, built from the blueprint's
//! GPUDirect stack (GoogleCloudPlatform/container-engine-accelerators
//! `gpudirect-tcpx/nccl-test-latest.yaml`, `gpudirect-tcpxo/nccl-test-latest.yaml`), and the
//! bus-bandwidth floor it is judged by.
//!
//! Objects: a headless Service and an Indexed Job (2 completions, 2 in parallel) whose pods get
//! stable DNS names `<job>-<index>.<service>`. Each pod takes a whole GPU node (8 GPUs, the GPU
//! taint tolerated, the pool selected by a3ctl's `a3ctl.dev/pool` label, which a pool keeps when it
//! moves to a new GKE name), joins the device
//! Networks through `networking.gke.io/interfaces` (eth0 on `default`, eth1..ethN on the
//! blueprint's Network objects), and runs the stack's RxDM daemon as a native sidecar
//! (`initContainers` with `restartPolicy: Always`) so the Job can complete. The test container
//! runs the stack's plugin image, which ships the NCCL tests and their launch scripts: pod 1
//! starts sshd and waits; pod 0 sets up ssh and the host files, runs `all_gather_perf` over both
//! hosts through MPI, then tells pod 1 to stop. Every transport's run covers 2G–8G, the sizes the
//! floor is set for ([`JUDGED_SIZES`]); [`judge`] reads those rows of pod 0's table
//! ([`super::nccl_output`]).

use crate::blueprint::{Blueprint, GpuDirect, MachineFamily};
use crate::verify::nccl_output::{OutOfBounds, Output, show_size};
use crate::verify::{GPU_RESOURCE, POOL_LABEL};
use serde::Serialize;
use serde_json::{Value, json};
use std::ops::RangeInclusive;

/// Name of the Job and of its headless Service.
pub const NAME: &str = "a3ctl-nccl-test";
/// Where the test runs without declared queues.
pub const TEST_NAMESPACE: &str = "default";

/// The queue the test is submitted to when the blueprint declares its own (`[[queue]]`): the one
/// `[software.kueue] queue` names. Its LocalQueue lives in its team's namespace, so the test runs
/// there (a Job in another namespace would wait suspended for a LocalQueue it cannot see).
fn declared_queue(bp: &Blueprint) -> Option<&crate::blueprint::Queue> {
    bp.software
        .kueue
        .enabled
        .then(|| bp.queues.iter().find(|q| q.name == bp.software.kueue.queue))
        .flatten()
}

/// The namespace the test's Job and Service are made in: the declared queue's, else `default`.
pub fn test_namespace(bp: &Blueprint) -> String {
    declared_queue(bp).map_or_else(|| TEST_NAMESPACE.to_string(), |q| q.namespace.clone())
}
/// The container whose log carries the result.
pub const TEST_CONTAINER: &str = "nccl-test";
/// The nodes the test needs.
pub const HOSTS: u32 = 2;
/// Where GKE puts the NVIDIA libraries (and the installers the NCCL plugin) on the host.
const HOST_NVIDIA_LIB: &str = "/home/kubernetes/bin/nvidia/lib64";
/// A finished test Job (and its pods' logs) stays a day, so its log can be read after a3ctl
/// stops waiting, and a clock running fast (the sandbox's) cannot remove it between two polls.
const TTL_SECONDS: u32 = 86_400;
/// Pod 0 touches this file on pod 1 when the test is over.
const DONE_MARKER: &str = "/tmp/a3ctl-nccl-test-done";

/// The all-gather bus-bandwidth floor of a machine family, in GB/s, and where it comes from
/// (the family table's, [`crate::blueprint::families::FamilySpec::nccl_floor`]).
pub fn floor(family: MachineFamily) -> (f64, String) {
    let spec = family.spec();
    (
        spec.nccl_floor,
        format!(
            "{}/{}",
            crate::blueprint::families::NCCL_FLOOR_SOURCE,
            spec.nccl_floor_file
        ),
    )
}

/// The message sizes the floors are set for, in bytes: 2G–8G. Cluster Health Scanner runs its
/// all-gather with `START_MESSAGE_SIZE` "2G" and `END_MESSAGE_SIZE` "8G" and compares
/// `BANDWIDTH_THRESHOLD` with that run's `# Avg bus bandwidth`
/// (GoogleCloudPlatform/cluster-health-scanner at 81c525d897f4e85a4f69dd1e389379de6f1e07c2,
/// `deploy/helm/health_checks/nccl_healthcheck/*.yaml`, `src/nccl_healthcheck/nccl_startup.py`):
/// the mean bus bandwidth of the 2G, 4G and 8G rows, out-of-place and in-place together. Over
/// 1K–8G the average is dominated by latency-bound small messages (a 4×H200 run: 135.6 GB/s over
/// 1K–8G, 345 GB/s at 2G–8G), so a3ctl takes the same rows out of its wider run.
pub const JUDGED_SIZES: RangeInclusive<u64> = (2 << 30)..=(8 << 30);

/// One size of the test's table, as the verdict shows it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct VerdictRow {
    /// Bytes.
    pub size: u64,
    /// GB/s, out of place and in place.
    pub busbw_out: f64,
    pub busbw_in: f64,
    /// Whether the row is within [`JUDGED_SIZES`].
    pub judged: bool,
}

/// The NCCL test judged: its per-size table, the figure compared with the floor, and why it
/// failed.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Verdict {
    pub passed: bool,
    /// The mean bus bandwidth of the rows within [`JUDGED_SIZES`], both halves, in GB/s; `None`
    /// when the log has no such row.
    pub busbw_gbps: Option<f64>,
    pub floor_gbps: f64,
    pub floor_source: String,
    /// [`JUDGED_SIZES`], in bytes.
    pub judged_min_bytes: u64,
    pub judged_max_bytes: u64,
    /// nccl-tests' own `# Avg bus bandwidth`, over every size the run covered (context only).
    pub all_sizes_busbw_gbps: Option<f64>,
    pub out_of_bounds: Option<OutOfBounds>,
    pub rows: Vec<VerdictRow>,
    /// Why it failed, when it did.
    pub message: Option<String>,
    /// What to check then.
    pub hint: Option<String>,
}

/// What to check when the bandwidth is below the floor.
const BELOW_FLOOR_HINT: &str = "below the floor, NCCL is not using every GPU NIC (or fell back to TCP on eth0): run `a3ctl verify` without --nccl-test to check the networks and the NCCL installer, and look for `NET/` lines in pod 0's log (`kubectl -n default logs -l job-name=a3ctl-nccl-test,batch.kubernetes.io/job-completion-index=0 -c nccl-test`)";

/// Judges a run's `output` against `family`'s floor (see [`JUDGED_SIZES`]): it passes when the
/// log has rows of 2G–8G, no wrong values, and their mean bus bandwidth meets the floor. A log
/// without such rows fails; the footer's all-sizes average is never used in their place.
pub fn judge(output: &Output, family: MachineFamily) -> Verdict {
    let (floor, source) = floor(family);
    let rows: Vec<VerdictRow> = output
        .rows
        .iter()
        .map(|r| VerdictRow {
            size: r.size,
            busbw_out: r.busbw_out,
            busbw_in: r.busbw_in,
            judged: JUDGED_SIZES.contains(&r.size),
        })
        .collect();
    let judged: Vec<f64> = rows
        .iter()
        .filter(|r| r.judged)
        .flat_map(|r| [r.busbw_out, r.busbw_in])
        .collect();
    let busbw = (!judged.is_empty()).then(|| judged.iter().sum::<f64>() / judged.len() as f64);
    let wrong: u64 = output
        .rows
        .iter()
        .map(|r| r.wrong_out.unwrap_or(0) + r.wrong_in.unwrap_or(0))
        .sum::<u64>()
        .max(output.out_of_bounds.map_or(0, |o| o.count));
    let corrupt = wrong > 0 || output.out_of_bounds.is_some_and(|o| !o.ok);
    let range = format!(
        "{}-{}",
        show_size(*JUDGED_SIZES.start()),
        show_size(*JUDGED_SIZES.end())
    );
    let (message, hint) = match busbw {
        None => {
            let covered = match (output.rows.first(), output.rows.last()) {
                (Some(first), Some(last)) if first.size == last.size => show_size(first.size),
                (Some(first), Some(last)) => {
                    format!("{}-{}", show_size(first.size), show_size(last.size))
                }
                _ => "no size".to_string(),
            };
            (
                Some(format!(
                    "the log has no row of {range} ({}..={} bytes), the message sizes the floor is set for; it covers {covered}",
                    JUDGED_SIZES.start(),
                    JUDGED_SIZES.end()
                )),
                Some(
                    "run all_gather_perf with sizes up to at least 2G (`-e 8G`); the test a3ctl writes does (`a3ctl verify --nccl-test`)"
                        .to_string(),
                ),
            )
        }
        Some(_) if corrupt => (
            Some(format!(
                "{wrong} wrong value(s) (`# Out of bounds values`): the data NCCL moved came back corrupted"
            )),
            Some("a bandwidth over corrupted data proves nothing; check the GPUs (`nvidia-smi -q` for ECC errors) and the NCCL plugin's version against the stack's, then run again".to_string()),
        ),
        Some(gbps) if gbps < floor => (
            Some(format!(
                "{range} bus bandwidth {gbps:.1} GB/s is below the floor of {floor:.0} GB/s"
            )),
            Some(BELOW_FLOOR_HINT.to_string()),
        ),
        Some(_) => (None, None),
    };
    Verdict {
        passed: message.is_none(),
        busbw_gbps: busbw,
        floor_gbps: floor,
        floor_source: source,
        judged_min_bytes: *JUDGED_SIZES.start(),
        judged_max_bytes: *JUDGED_SIZES.end(),
        all_sizes_busbw_gbps: output.avg_bus_bandwidth,
        out_of_bounds: output.out_of_bounds,
        rows,
        message,
        hint,
    }
}

/// Why the test cannot be built for a blueprint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NoRoom {
    pub largest: u32,
}

/// The test objects for `bp`, in apply order (Service, Job).
pub fn objects(bp: &Blueprint) -> Result<Vec<Value>, NoRoom> {
    // The declared queue's pool when it is large enough (its flavor selects that pool's nodes),
    // else the first that is.
    let queue_pool = declared_queue(bp).map(|q| q.pool.as_str());
    let large = |p: &&crate::blueprint::GpuPool| p.nodes >= HOSTS;
    let pool = bp
        .gpu_pools
        .iter()
        .filter(large)
        .find(|p| Some(p.name.as_str()) == queue_pool)
        .or_else(|| bp.gpu_pools.iter().find(large));
    let Some(pool) = pool else {
        return Err(NoRoom {
            largest: bp.gpu_pools.iter().map(|p| p.nodes).max().unwrap_or(0),
        });
    };
    let labels =
        json!({"app.kubernetes.io/name": NAME, crate::graph::software::MANAGED_BY: "a3ctl"});
    let service = json!({
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": NAME, "namespace": test_namespace(bp), "labels": labels},
        "spec": {"clusterIP": "None", "selector": {"job-name": NAME}, "publishNotReadyAddresses": true},
    });
    let stack = &bp.software.stack;
    if stack.gpudirect == GpuDirect::Rdma {
        return Ok(vec![service, gib_job(bp, &pool.name, labels)]);
    }
    let tcpxo = stack.gpudirect == GpuDirect::Tcpxo;
    let sidecar_name = if tcpxo { "tcpxo-daemon" } else { "tcpx-daemon" };
    let gpus = bp.family.gpus_per_node();
    let mut devices: Vec<String> = (0..gpus).map(|i| format!("/dev/nvidia{i}")).collect();
    devices.extend(["/dev/nvidiactl".into(), "/dev/nvidia-uvm".into()]);
    if tcpxo {
        devices.push("/dev/dmabuf_import_helper".into());
    }
    let device_list: String = devices.iter().map(|d| format!("- path: {d}\n")).collect();
    let mut annotations = serde_json::Map::new();
    annotations.insert(
        format!("devices.gke.io/container.{sidecar_name}"),
        json!(device_list),
    );
    for (key, value) in crate::graph::outputs::pod_annotations(bp) {
        annotations.insert(key, json!(value));
    }
    let hosts: Vec<String> = (0..HOSTS).map(|i| format!("{NAME}-{i}.{NAME}")).collect();
    let (sidecar, test, volumes) = if tcpxo {
        tcpxo_containers(bp, sidecar_name, &hosts)
    } else {
        tcpx_containers(bp, sidecar_name, &hosts)
    };
    let pod = json!({
        "initContainers": [sidecar],
        "containers": [test],
        "volumes": volumes,
    });
    let job = job(bp, &pool.name, labels, Value::Object(annotations), pod);
    Ok(vec![service, job])
}

/// The gIB test image, which ships NCCL tests and `run_nccl_tests.sh`
/// (GoogleCloudPlatform/container-engine-accelerators `gpudirect-rdma/nccl-test.yaml`).
pub const GIB_TEST_IMAGE: &str =
    "us-docker.pkg.dev/gce-ai-infra/gpudirect-gib/nccl-plugin-gib-diagnostic:v1.1.1";
/// The port the gIB image's sshd listens on (`container_entry.sh shell`).
const GIB_SSH_PORT: u16 = 222;

/// A3 Ultra / A4: the Job over gIB. No sidecar: pods reach the RDMA NICs through the
/// `rdma-0..7` Networks (explicit) or a claim on the node's `mrdma.google.com` devices
/// (managed), take the plugin from the host's `/home/kubernetes/bin/gib`, and pod 0 runs the
/// image's `run_nccl_tests.sh` all-gather across both hosts
/// (container-engine-accelerators `gpudirect-rdma/nccl-test.yaml`, `nccl-test-managed-rdma.yaml`).
fn gib_job(bp: &Blueprint, pool: &str, labels: Value) -> Value {
    let hosts: Vec<String> = (0..HOSTS).map(|i| format!("{NAME}-{i}.{NAME}")).collect();
    let list = hosts.join(" ");
    let script = format!(
        "set -e\n/scripts/container_entry.sh shell\nsource /usr/local/gib/scripts/set_nccl_env.sh\n\
         if [ \"$JOB_COMPLETION_INDEX\" != 0 ]; then\n  \
           while [ ! -e {DONE_MARKER} ]; do sleep 5; done\n  exit 0\nfi\n\
         for h in {list}; do until getent hosts \"$h\" >/dev/null; do sleep 5; done; done\n\
         status=0\n/usr/local/gib/scripts/run_nccl_tests.sh -t all_gather -b 1K -e 8G {list} || status=$?\n\
         for h in {list}; do ssh -p {GIB_SSH_PORT} -o StrictHostKeyChecking=no \"$h\" touch {DONE_MARKER} || true; done\n\
         exit $status\n"
    );
    let managed = bp.network.mode == crate::blueprint::NetworkMode::Managed;
    // GPUs only: the blueprint's ClusterQueue covers `nvidia.com/gpu` alone, and Kueue does not
    // admit a Job that requests a resource its ClusterQueue does not cover.
    let mut resources = json!({"limits": {GPU_RESOURCE: bp.family.gpus_per_node()}});
    if managed {
        resources["claims"] = json!([{"name": "rdma"}]);
    }
    let test = json!({
        "name": TEST_CONTAINER,
        "image": GIB_TEST_IMAGE,
        "command": ["/bin/bash", "-c", script],
        "env": env(&[("LD_LIBRARY_PATH", LIB)]),
        "resources": resources,
        "volumeMounts": [
            mount("library-dir-host", "/usr/local/nvidia"),
            mount("gib", "/usr/local/gib"),
            mount("shared-memory", "/dev/shm"),
        ],
    });
    let mut pod = json!({
        "containers": [test],
        "volumes": [
            host_path("library-dir-host", "/home/kubernetes/bin/nvidia"),
            host_path("gib", "/home/kubernetes/bin/gib"),
            {"name": "shared-memory", "emptyDir": {"medium": "Memory", "sizeLimit": "250Gi"}},
        ],
    });
    if managed {
        pod["resourceClaims"] = json!([{
            "name": "rdma",
            "resourceClaimTemplateName": crate::graph::software::CLAIM_TEMPLATE,
        }]);
    }
    let annotations: serde_json::Map<String, Value> = crate::graph::outputs::pod_annotations(bp)
        .into_iter()
        .map(|(key, value)| (key, json!(value)))
        .collect();
    job(bp, pool, labels, Value::Object(annotations), pod)
}

/// The test's Indexed Job: 2 pods, one per node of `pool` (GPU taint tolerated), with stable
/// host names `<job>-<index>.<service>`, never restarted, kept a day after finishing; with
/// Kueue, it waits in the blueprint's queue for 2 nodes' worth of GPU quota. `pod` holds the
/// family's containers and volumes (and claims).
fn job(bp: &Blueprint, pool: &str, labels: Value, annotations: Value, mut pod: Value) -> Value {
    pod["subdomain"] = json!(NAME);
    pod["restartPolicy"] = json!("Never");
    pod["nodeSelector"] = json!({POOL_LABEL: pool});
    pod["tolerations"] =
        json!([{"key": GPU_RESOURCE, "operator": "Exists", "effect": "NoSchedule"}]);
    let mut job_labels = labels.clone();
    if bp.software.kueue.enabled {
        job_labels["kueue.x-k8s.io/queue-name"] = json!(bp.software.kueue.queue);
    }
    json!({
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": NAME, "namespace": test_namespace(bp), "labels": job_labels},
        "spec": {
            "completionMode": "Indexed",
            "completions": HOSTS,
            "parallelism": HOSTS,
            "backoffLimit": 0,
            "ttlSecondsAfterFinished": TTL_SECONDS,
            "template": {
                "metadata": {"labels": labels, "annotations": annotations},
                "spec": pod,
            },
        },
    })
}

/// The objects as one multi-document YAML text.
pub fn manifest(bp: &Blueprint, objects: &[Value]) -> String {
    let stack = &bp.software.stack;
    let mut out = format!(
        "# Two-node NCCL all-gather test for `{}` ({}, stack {}: plugin {}{}), written by a3ctl.\n\
         # Run it with `a3ctl verify <blueprint> --nccl-test --run`, or `kubectl apply --server-side -f` this file and read\n\
         # `kubectl logs job/{NAME} -c {TEST_CONTAINER}` (pod 0): a3ctl judges the mean bus bandwidth of its 2G-8G rows.\n",
        bp.name,
        bp.family.display_name(),
        stack.id,
        stack.plugin_tag,
        stack
            .rxdm
            .as_ref()
            .map_or(String::new(), |rxdm| format!(", RxDM {}", rxdm.tag)),
    );
    for object in objects {
        out.push_str("---\n");
        // Serializing plain JSON values to YAML cannot fail; fall back to JSON (valid YAML).
        out.push_str(&serde_saphyr::to_string(object).unwrap_or_else(|_| object.to_string()));
        if !out.ends_with('\n') {
            out.push('\n');
        }
    }
    out
}

fn env(pairs: &[(&str, &str)]) -> Value {
    Value::Array(
        pairs
            .iter()
            .map(|(k, v)| json!({"name": k, "value": v}))
            .collect(),
    )
}

fn host_path(name: &str, path: &str) -> Value {
    json!({"name": name, "hostPath": {"path": path}})
}

fn mount(name: &str, path: &str) -> Value {
    json!({"name": name, "mountPath": path})
}

/// The shell script of the test container: pod 1 serves, pod 0 runs `run` against both hosts.
fn script(hosts: &[String], run: &str) -> String {
    let hosts = hosts.join(" ");
    format!(
        "set -e\nservice ssh restart\n\
         if [ \"$JOB_COMPLETION_INDEX\" != 0 ]; then\n  \
           while [ ! -e {DONE_MARKER} ]; do sleep 5; done\n  exit 0\nfi\n\
         for h in {hosts}; do until getent hosts \"$h\" >/dev/null; do sleep 5; done; done\n\
         /scripts/init_ssh.sh {hosts}\n\
         cd /scripts && /scripts/gen_hostfiles.sh {hosts}\n\
         status=0\n{run} || status=$?\n\
         for h in {hosts}; do ssh -o StrictHostKeyChecking=no \"$h\" touch {DONE_MARKER} || true; done\n\
         exit $status\n"
    )
}

/// The RxDM sidecar: the stack's `tcpgpudmarxd` image, restarted for the pod's life.
fn rxdm(bp: &Blueprint, name: &str, command: Value, caps: &[&str], mounts: Vec<Value>) -> Value {
    let stack = &bp.software.stack;
    json!({
        "name": name,
        "image": stack.rxdm.as_ref().map_or(String::new(), |rxdm| format!("{}:{}", rxdm.image, rxdm.tag)),
        "restartPolicy": "Always",
        "command": command,
        "securityContext": {"capabilities": {"add": caps}},
        "env": env(&[("LD_LIBRARY_PATH", LIB)]),
        "volumeMounts": mounts,
    })
}

/// The test container: the stack's plugin image with the whole node's GPUs, running `run`.
fn test_container(
    bp: &Blueprint,
    hosts: &[String],
    run: &str,
    env: Value,
    mounts: Vec<Value>,
) -> Value {
    let stack = &bp.software.stack;
    json!({
        "name": TEST_CONTAINER,
        "image": format!("{}:{}", stack.plugin_image, stack.plugin_tag),
        "command": ["/bin/bash", "-c", script(hosts, run)],
        "env": env,
        "resources": {"limits": {GPU_RESOURCE: bp.family.gpus_per_node()}},
        "volumeMounts": mounts,
    })
}

/// Where the containers see the host's NVIDIA libraries (and the NCCL plugin).
const LIB: &str = "/usr/local/nvidia/lib64";

/// A3 Mega: the TCPXO RxDM sidecar and the test container (FasTrak over the aperture devices).
fn tcpxo_containers(bp: &Blueprint, sidecar_name: &str, hosts: &[String]) -> (Value, Value, Value) {
    let sidecar = rxdm(
        bp,
        sidecar_name,
        json!([
            "/bin/sh",
            "-c",
            "exec /fts/entrypoint_rxdm_container.sh --num_hops=2 --uid= --alsologtostderr"
        ]),
        &["NET_ADMIN", "NET_BIND_SERVICE"],
        vec![
            mount("nvidia", LIB),
            mount("sys", "/hostsysfs"),
            mount("proc-sys", "/hostprocsysfs"),
        ],
    );
    let run = format!(
        "BENCHMARK=all_gather_perf NHOSTS={HOSTS} NCCL_LIB_DIR={LIB} LD_LIBRARY_PATH={LIB} DATA_MIN=1K DATA_MAX=8G /scripts/demo-run-nccl-test-tcpxo-via-mpi.sh"
    );
    let test = test_container(
        bp,
        hosts,
        &run,
        env(&[
            ("LD_LIBRARY_PATH", LIB),
            (
                "NCCL_FASTRAK_LLCM_DEVICE_DIRECTORY",
                "/dev/aperture_devices",
            ),
        ]),
        vec![
            mount("nvidia", LIB),
            mount("shared-memory", "/dev/shm"),
            mount("aperture-devices", "/dev/aperture_devices"),
        ],
    );
    let volumes = json!([
        host_path("nvidia", HOST_NVIDIA_LIB),
        {"name": "shared-memory", "emptyDir": {"medium": "Memory", "sizeLimit": "1Gi"}},
        host_path("sys", "/sys"),
        host_path("proc-sys", "/proc/sys"),
        host_path("aperture-devices", "/dev/aperture_devices"),
    ]);
    (sidecar, test, volumes)
}

/// A3 High: the TCPX RxDM sidecar (sharing its socket directory with the test) and the test
/// container; the image's `run-allgather.sh` passes the TCPX NCCL environment to every rank.
fn tcpx_containers(bp: &Blueprint, sidecar_name: &str, hosts: &[String]) -> (Value, Value, Value) {
    let sidecar = rxdm(
        bp,
        sidecar_name,
        json!([
            "/tcpgpudmarxd/build/app/tcpgpudmarxd",
            "--gpu_nic_preset",
            "a3vm",
            "--gpu_shmem_type",
            "fd",
            "--uds_path",
            "/run/tcpx",
            "--setup_param",
            "--verbose 128 2 0"
        ]),
        &["NET_ADMIN"],
        vec![
            mount("nvidia", LIB),
            mount("tcpx-socket", "/run/tcpx"),
            mount("sys", "/hostsysfs"),
            mount("proc-sys", "/hostprocsysfs"),
        ],
    );
    let nics = (1..=bp.network.gpu_subnets.len())
        .map(|i| format!("eth{i}"))
        .collect::<Vec<_>>()
        .join(",");
    let run = format!(
        "/scripts/run-allgather.sh {} {nics} 1M 8G {HOSTS}",
        bp.family.gpus_per_node()
    );
    let mut test = test_container(
        bp,
        hosts,
        &run,
        env(&[("LD_LIBRARY_PATH", LIB)]),
        vec![mount("nvidia", LIB), mount("tcpx-socket", "/tmp")],
    );
    test["securityContext"] = json!({"capabilities": {"add": ["IPC_LOCK"]}});
    let volumes = json!([
        host_path("nvidia", HOST_NVIDIA_LIB),
        host_path("tcpx-socket", "/run/tcpx"),
        host_path("sys", "/sys"),
        host_path("proc-sys", "/proc/sys"),
    ]);
    (sidecar, test, volumes)
}
