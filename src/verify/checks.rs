//! The checks of `a3ctl verify`, pure functions of an [`Expected`] and a [`Snapshot`]: GPU nodes
//! per pool, the installer DaemonSets on every GPU node, the GPU Network / GKENetworkParamSet
//! pairs (and their count), and Kueue's ClusterQueue and LocalQueue (its quotas against the nodes:
//! [`super::queues`]).

use super::{
    Check, Expected, ExpectedNetwork, ExpectedPool, ExpectedQueue, ExpectedRdma, GPU_RESOURCE,
    KueueSnapshot, NODE_POOL_LABEL, POOL_LABEL, Snapshot, integer_quantity,
};
use crate::blueprint::DriverMode;
use crate::graph::software::{ACCELERATOR_LABEL, NAMESPACE};
use crate::resource::kinds::gke_versions::version_key;
use crate::resource::spec::{Compare, Field, matches};
use serde_json::Value;
use std::collections::BTreeMap;

/// Every check, in report order.
pub fn check(expected: &Expected, snapshot: &Snapshot) -> Vec<Check> {
    let mut out = Vec::new();
    for pool in &expected.pools {
        out.push(pool_check(expected, pool, &snapshot.nodes));
    }
    let gpu_nodes = snapshot
        .nodes
        .iter()
        .filter(|n| {
            n["metadata"]["labels"][ACCELERATOR_LABEL] == expected.family.accelerator_type()
        })
        .count();
    for name in &expected.daemonsets {
        out.push(daemonset_check(
            expected,
            name,
            gpu_nodes,
            &snapshot.daemonsets,
        ));
    }
    for network in &expected.networks {
        out.push(network_check(expected, network, snapshot));
    }
    if expected.min_networks > 0 {
        out.push(network_count_check(expected, snapshot));
    }
    match &expected.rdma {
        None => {}
        Some(ExpectedRdma::Explicit {
            host_nics,
            rdma_networks,
        }) => {
            for pool in &expected.pools {
                out.push(rdma_nics_check(
                    expected,
                    pool,
                    *host_nics,
                    rdma_networks,
                    &snapshot.nodes,
                ));
            }
        }
        Some(ExpectedRdma::Managed {
            nics,
            device_class,
            claim_template,
        }) => {
            out.extend(managed_rdma_checks(
                expected,
                *nics,
                device_class,
                claim_template,
                snapshot,
            ));
        }
    }
    out.extend(super::jobset::checks(expected, &snapshot.jobset));
    for queue in &expected.kueue {
        out.extend(kueue_checks(expected, queue, &snapshot.kueue));
    }
    // The flavors are the GPU pools', the same for every queue: checked once.
    if let Some(queue) = expected.kueue.first() {
        out.extend(super::queues::flavor_checks(
            expected,
            queue,
            &snapshot.kueue,
            &snapshot.nodes,
        ));
    }
    out
}

/// `a3ctl plan` / `a3ctl apply` advice for an object changed or deleted behind a3ctl's back.
fn drift_hint(expected: &Expected, what: &str) -> String {
    let bp = &expected.blueprint_path;
    format!(
        "{what} outside a3ctl; run `a3ctl plan {bp}` to see the drift and `a3ctl apply {bp}` to put it back"
    )
}

/// The name of an object the API server listed (which always has one).
fn name_of(object: &Value) -> &str {
    object["metadata"]["name"].as_str().unwrap_or_default()
}

fn find<'a>(objects: &'a [Value], name: &str) -> Option<&'a Value> {
    objects.iter().find(|o| name_of(o) == name)
}

fn is_ready(node: &Value) -> bool {
    node["status"]["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|c| c["type"] == "Ready" && c["status"] == "True")
}

/// `names` as "`a`, `b` and 3 more".
fn listed(names: &[&str]) -> String {
    const SHOWN: usize = 3;
    let mut text = names
        .iter()
        .take(SHOWN)
        .map(|n| format!("`{n}`"))
        .collect::<Vec<_>>()
        .join(", ");
    if names.len() > SHOWN {
        text.push_str(&format!(" and {} more", names.len() - SHOWN));
    }
    text
}

/// `nodes/<pool>`: the pool has its declared node count, every node Ready with the family's GPUs,
/// all on one GKE version, the one the blueprint asks for (after an upgrade: on the new one).
fn pool_check(expected: &Expected, expected_pool: &ExpectedPool, nodes: &[Value]) -> Check {
    let (pool, declared) = (expected_pool.name.as_str(), expected_pool.nodes);
    let name = format!("nodes/{pool}");
    let gpus = u64::from(expected.gpus_per_node());
    let members = pool_nodes(expected_pool, nodes);
    if members.len() != declared as usize {
        return Check::fail(
            name,
            format!(
                "node pool `{pool}` has {} node(s) registered, the blueprint declares {declared}",
                members.len()
            ),
            format!(
                "nodes still booting register within minutes; otherwise `a3ctl plan {}` shows whether the pool was resized outside a3ctl (`gcloud container node-pools describe {pool}` shows its status)",
                expected.blueprint_path
            ),
        );
    }
    let not_ready: Vec<&str> = members
        .iter()
        .filter(|n| !is_ready(n))
        .map(|n| name_of(n))
        .collect();
    if !not_ready.is_empty() {
        return Check::fail(
            name,
            format!(
                "{} of {declared} node(s) of pool `{pool}` are not Ready: {}",
                not_ready.len(),
                listed(&not_ready)
            ),
            format!(
                "`kubectl describe node {}` shows the failing condition; GKE repairs broken nodes of pools with auto-repair",
                not_ready[0]
            ),
        );
    }
    let short: Vec<(&str, u64)> = members
        .iter()
        .map(|n| {
            let have = integer_quantity(&n["status"]["allocatable"][GPU_RESOURCE]).unwrap_or(0);
            (name_of(n), have)
        })
        .filter(|(_, have)| *have != gpus)
        .collect();
    if let Some((first, have)) = short.first() {
        let names: Vec<&str> = short.iter().map(|(n, _)| *n).collect();
        let hint = match expected.driver {
            DriverMode::Daemonset => format!(
                "the NVIDIA driver is installed by DaemonSet `{NAMESPACE}/nvidia-driver-installer` (driver = \"daemonset\"); see its check below: if it is missing, it was deleted outside a3ctl; run `a3ctl plan {bp}` to see the drift and `a3ctl apply {bp}` to recreate it",
                bp = expected.blueprint_path
            ),
            DriverMode::Default | DriverMode::Latest => format!(
                "GKE installs the NVIDIA driver on these nodes itself; it may still be installing: `kubectl describe node {first}` and the `nvidia-gpu-device-plugin` pods in `{NAMESPACE}` show why the GPUs are not advertised"
            ),
        };
        return Check::fail(
            name,
            format!(
                "{} of {declared} node(s) of pool `{pool}` do not have {gpus} allocatable {GPU_RESOURCE} ({} has {have}): {}",
                short.len(),
                first,
                listed(&names)
            ),
            hint,
        );
    }
    // `v1.34.1-gke.1829001` → how many nodes run it, in version order.
    let mut versions: BTreeMap<Vec<u64>, (String, usize)> = BTreeMap::new();
    for node in &members {
        let kubelet = node["status"]["nodeInfo"]["kubeletVersion"]
            .as_str()
            .unwrap_or("");
        let version = kubelet.strip_prefix('v').unwrap_or(kubelet).to_string();
        versions
            .entry(version_key(&version))
            .or_insert((version, 0))
            .1 += 1;
    }
    if versions.len() > 1 {
        let mix: Vec<String> = versions
            .values()
            .map(|(v, n)| format!("{n} on {v}"))
            .collect();
        return Check::fail(
            name,
            format!(
                "the nodes of pool `{pool}` run different GKE versions ({}): an upgrade is under way or stopped part-way",
                mix.join(", ")
            ),
            format!(
                "`gcloud container operations list --filter=targetLink~{pool}` shows the upgrade; when it has ended, `a3ctl apply {}` finishes a stopped one",
                expected.blueprint_path
            ),
        );
    }
    let running = versions
        .into_values()
        .next()
        .map(|(v, _)| v)
        .unwrap_or_default();
    let field = Field {
        name: "version",
        change: crate::resource::spec::Change::InPlace,
        compare: Compare::VersionPrefix,
    };
    let wanted = &expected_pool.version;
    if !running.is_empty()
        && !matches(
            &field,
            &Value::from(wanted.as_str()),
            &Value::from(running.as_str()),
        )
    {
        return Check::fail(
            name,
            format!(
                "the nodes of pool `{pool}` run GKE {running}, the blueprint asks for {wanted}"
            ),
            format!(
                "`a3ctl plan {}` shows the upgrade still to make",
                expected.blueprint_path
            ),
        );
    }
    let on = if running.is_empty() {
        String::new()
    } else {
        format!(", on GKE {running}")
    };
    Check::pass(
        name,
        format!(
            "{declared}/{declared} node(s) Ready with {gpus} allocatable {GPU_RESOURCE} each{on}"
        ),
    )
}

/// `daemonset/kube-system/<name>`: desired == ready == the number of GPU nodes.
fn daemonset_check(expected: &Expected, ds: &str, gpu_nodes: usize, daemonsets: &[Value]) -> Check {
    let name = format!("daemonset/{NAMESPACE}/{ds}");
    let Some(live) = find(daemonsets, ds) else {
        return Check::fail(
            name,
            format!("DaemonSet `{NAMESPACE}/{ds}` is missing"),
            drift_hint(expected, "it was deleted"),
        );
    };
    let count = |field: &str| live["status"][field].as_u64().unwrap_or(0) as usize;
    let desired = count("desiredNumberScheduled");
    let ready = count("numberReady");
    if desired != gpu_nodes {
        return Check::fail(
            name,
            format!(
                "DaemonSet `{NAMESPACE}/{ds}` is scheduled on {desired} node(s), but the cluster has {gpu_nodes} GPU node(s)"
            ),
            format!(
                "its node affinity or tolerations were changed outside a3ctl, or nodes carry an unexpected taint; `a3ctl plan {}` shows drift in the DaemonSet",
                expected.blueprint_path
            ),
        );
    }
    if ready != gpu_nodes {
        return Check::fail(
            name,
            format!("DaemonSet `{NAMESPACE}/{ds}` is ready on {ready} of {gpu_nodes} GPU node(s)"),
            format!(
                "`kubectl -n {NAMESPACE} get pods -l name={ds} -o wide` shows which nodes lag; pods stuck in Init usually could not pull their image"
            ),
        );
    }
    // After a change of its pod template (a new stack's installer): every pod of the new one.
    // Kubernetes leaves `updatedNumberScheduled` out when it is zero.
    let updated = count("updatedNumberScheduled");
    let generation = live["metadata"]["generation"].as_i64();
    let observed = live["status"]["observedGeneration"].as_i64();
    if updated < gpu_nodes || (generation.is_some() && observed < generation) {
        return Check::fail(
            name,
            format!(
                "DaemonSet `{NAMESPACE}/{ds}` is rolling out its current version: {updated} of {gpu_nodes} GPU node(s) run it"
            ),
            format!(
                "`kubectl -n {NAMESPACE} rollout status daemonset/{ds}` follows the rollout; run verify again when it has finished"
            ),
        );
    }
    Check::pass(name, format!("ready on {ready}/{gpu_nodes} GPU node(s)"))
}

/// `network/<name>`: the Network and its GKENetworkParamSet, with the fields a3ctl set.
fn network_check(expected: &Expected, network: &ExpectedNetwork, snapshot: &Snapshot) -> Check {
    let n = &network.name;
    let name = format!("network/{n}");
    let mut problems = Vec::new();
    let mut missing = false;
    match snapshot.networks.as_deref().and_then(|all| find(all, n)) {
        None => {
            missing = true;
            problems.push(format!("Network `{n}` is missing"));
        }
        Some(live) => {
            let spec = &live["spec"];
            if spec["type"] != "Device" {
                problems.push(format!(
                    "Network `{n}` has type {} instead of `Device`",
                    shown(&spec["type"])
                ));
            }
            let reference = &spec["parametersRef"];
            if reference["group"] != "networking.gke.io"
                || reference["kind"] != "GKENetworkParamSet"
                || reference["name"] != n.as_str()
            {
                problems.push(format!(
                    "Network `{n}` does not reference GKENetworkParamSet `{n}` (parametersRef is {})",
                    shown(reference)
                ));
            }
        }
    }
    match snapshot.param_sets.as_deref().and_then(|all| find(all, n)) {
        None => {
            missing = true;
            problems.push(format!("GKENetworkParamSet `{n}` is missing"));
        }
        Some(live) => {
            let spec = &live["spec"];
            for (field, want) in [
                ("vpc", network.vpc.as_str()),
                ("vpcSubnet", network.subnet.as_str()),
                ("deviceMode", network.device_mode.as_str()),
            ] {
                if spec[field] != want {
                    problems.push(format!(
                        "GKENetworkParamSet `{n}` has {field} {} instead of `{want}`",
                        shown(&spec[field])
                    ));
                }
            }
        }
    }
    if problems.is_empty() {
        return Check::pass(
            name,
            format!("Device network on `{}` / `{}`", network.vpc, network.subnet),
        );
    }
    let what = if missing {
        "it was deleted"
    } else {
        "it was changed"
    };
    Check::fail(name, problems.join("; "), drift_hint(expected, what))
}

/// A JSON value as shown in a message: strings in backticks, absent as "none".
fn shown(v: &Value) -> String {
    match v {
        Value::Null => "none".into(),
        Value::String(s) => format!("`{s}`"),
        other => format!("`{other}`"),
    }
}

/// `networks/count`: at least one device Network per GPU NIC of the family (a cluster with zero
/// Network objects must never pass).
fn network_count_check(expected: &Expected, snapshot: &Snapshot) -> Check {
    let name = "networks/count";
    let want = expected.min_networks;
    let family = expected.family.display_name();
    let Some(networks) = &snapshot.networks else {
        return Check::fail(
            name,
            "the cluster does not serve `networks.networking.gke.io`: multi-networking is off, so no GPU NIC can reach pods",
            "multi-networking is fixed when the cluster is created; `a3ctl plan` shows whether the cluster must be replaced",
        );
    };
    let devices = networks
        .iter()
        .filter(|n| n["spec"]["type"] == "Device")
        .count();
    if devices < want.max(1) {
        return Check::fail(
            name,
            format!("{devices} device Network object(s), {family} needs {want} (one per GPU NIC)"),
            drift_hint(expected, "they were deleted"),
        );
    }
    Check::pass(
        name,
        format!("{devices} device Network object(s), {want} needed on {family}"),
    )
}

/// The GPU nodes of `pool`: those labelled with its blueprint name ([`POOL_LABEL`]), which a pool
/// keeps across a move to a new GKE name (`a3mega-2`); a node of a pool made before the label
/// existed (not yet relabelled by an apply) by its GKE pool name.
fn pool_nodes<'a>(pool: &ExpectedPool, nodes: &'a [Value]) -> Vec<&'a Value> {
    nodes
        .iter()
        .filter(|n| {
            let labels = &n["metadata"]["labels"];
            match labels[POOL_LABEL].as_str() {
                Some(owner) => owner == pool.name,
                None => labels[NODE_POOL_LABEL] == pool.name.as_str(),
            }
        })
        .collect()
}

/// `rdma/<pool>` (explicit RDMA networks): every node of the pool has all its NICs — the primary,
/// the gVNIC GPU NICs and one per RDMA subnet, as GKE lists them in `networking.gke.io/nic-info`
/// — and offers pods every RDMA Network (the `networking.gke.io.networks/<Network>` resource GKE
/// adds once a Network refers to a NIC's subnet).
fn rdma_nics_check(
    expected: &Expected,
    pool: &ExpectedPool,
    host_nics: usize,
    rdma_networks: &[String],
    nodes: &[Value],
) -> Check {
    let name = format!("rdma/{}", pool.name);
    let family = expected.family.display_name();
    let nodes = pool_nodes(pool, nodes);
    if nodes.is_empty() {
        return Check::fail(
            name,
            format!("node pool `{}` has no nodes to check", pool.name),
            "see the `nodes/` check above",
        );
    }
    let mut short = Vec::new();
    let mut unwired: BTreeMap<String, Vec<&str>> = BTreeMap::new();
    for node in &nodes {
        let node_name = name_of(node);
        let count = node["metadata"]["annotations"]["networking.gke.io/nic-info"]
            .as_str()
            .and_then(|text| serde_json::from_str::<Vec<Value>>(text).ok())
            .map_or(0, |nics| nics.len());
        if count < host_nics {
            short.push(format!("`{node_name}` has {count}"));
        }
        for network in rdma_networks {
            let resource = format!("networking.gke.io.networks/{network}");
            if integer_quantity(&node["status"]["allocatable"][resource.as_str()]).unwrap_or(0) < 1
            {
                unwired.entry(network.clone()).or_default().push(node_name);
            }
        }
    }
    let mut problems = Vec::new();
    if !short.is_empty() {
        problems.push(format!(
            "{} NIC(s) where {family} needs {host_nics} (2 gVNIC + {} RDMA)",
            short.join(", "),
            rdma_networks.len()
        ));
    }
    // Networks missing on the same nodes are reported together.
    let mut by_nodes: BTreeMap<Vec<&str>, Vec<&str>> = BTreeMap::new();
    for (network, on) in &unwired {
        by_nodes.entry(on.clone()).or_default().push(network);
    }
    for (on, networks) in &by_nodes {
        let what = if networks.len() == 1 {
            format!("Network `{}` is", networks[0])
        } else {
            format!("Networks {} are", listed(networks))
        };
        problems.push(format!(
            "{what} not offered on {} node(s) ({})",
            on.len(),
            listed(on)
        ));
    }
    if problems.is_empty() {
        return Check::pass(
            name,
            format!(
                "{} node(s) with {host_nics} NICs each and all {} RDMA Networks",
                nodes.len(),
                rdma_networks.len()
            ),
        );
    }
    let hint = if short.is_empty() {
        drift_hint(
            expected,
            "the RDMA Networks or their parameter sets were changed",
        )
    } else {
        format!(
            "nodes get their NICs from the pool's additional networks when they are created; run `a3ctl plan {}` to see whether the pool's networks drifted (a pool with the wrong networks is replaced)",
            expected.blueprint_path
        )
    };
    Check::fail(name, problems.join("; "), hint)
}

/// Managed RDMA networking: the DeviceClass GKE creates, a3ctl's ResourceClaimTemplate, and per
/// pool, every node running the DRA networking driver and publishing its RDMA NICs.
fn managed_rdma_checks(
    expected: &Expected,
    nics: usize,
    device_class: &str,
    (namespace, template): &(String, String),
    snapshot: &Snapshot,
) -> Vec<Check> {
    let dra = &snapshot.dra;
    let class_name = format!("rdma/deviceclass/{device_class}");
    let Some(version) = &dra.version else {
        return vec![Check::fail(
            class_name,
            "the cluster does not serve `resource.k8s.io/v1`, which GKE-managed GPU networking needs",
            format!(
                "managed GPU networking needs GKE 1.34.1-gke.1829001 or later; run `a3ctl plan {}` to see the cluster's version",
                expected.blueprint_path
            ),
        )];
    };
    let mut out = vec![match &dra.device_class {
        Some(_) => Check::pass(
            class_name,
            format!("DeviceClass `{device_class}` (resource.k8s.io/{version})"),
        ),
        None => Check::fail(
            class_name,
            format!(
                "DeviceClass `{device_class}` not found: GKE creates it once a node runs its DRA networking driver"
            ),
            "check that the GPU pools' nodes are Ready and carry `cloud.google.com/gke-networking-dra-driver=true` (the `rdma/` checks below)",
        ),
    }];
    let template_name = format!("rdma/resourceclaimtemplate/{namespace}/{template}");
    out.push(match &dra.claim_template {
        Some(_) => Check::pass(
            template_name,
            format!("claims {nics} `{device_class}` devices for a pod"),
        ),
        None => Check::fail(
            template_name,
            format!("ResourceClaimTemplate `{namespace}/{template}` is missing"),
            drift_hint(expected, "it was deleted"),
        ),
    });
    for pool in &expected.pools {
        let name = format!("rdma/{}", pool.name);
        let nodes = pool_nodes(pool, &snapshot.nodes);
        let mut unlabelled = Vec::new();
        let mut short = Vec::new();
        for node in &nodes {
            let node_name = name_of(node);
            if node["metadata"]["labels"][crate::graph::build::DRA_DRIVER_LABEL] != "true" {
                unlabelled.push(node_name);
            }
            let devices: usize = dra
                .slices
                .iter()
                .filter(|s| {
                    s["spec"]["nodeName"] == node_name && s["spec"]["driver"] == device_class
                })
                .map(|s| s["spec"]["devices"].as_array().map_or(0, Vec::len))
                .sum();
            if devices < nics {
                short.push(format!("`{node_name}` publishes {devices}"));
            }
        }
        let check = if nodes.is_empty() {
            Check::fail(
                name,
                format!("node pool `{}` has no nodes to check", pool.name),
                "see the `nodes/` check above",
            )
        } else if !unlabelled.is_empty() {
            Check::fail(
                name,
                format!(
                    "{} node(s) lack `{}=true` ({}), so GKE's DRA networking driver does not run there",
                    unlabelled.len(),
                    crate::graph::build::DRA_DRIVER_LABEL,
                    listed(&unlabelled)
                ),
                drift_hint(expected, "the pool's node labels were changed"),
            )
        } else if !short.is_empty() {
            Check::fail(
                name,
                format!(
                    "{} RDMA device(s) where {} needs {nics} per node",
                    short.join(", "),
                    expected.family.display_name()
                ),
                "the DRA networking driver publishes a node's NICs once it runs there; wait a minute after the nodes turn Ready and verify again",
            )
        } else {
            Check::pass(
                name,
                format!("{} node(s) publish {nics} RDMA devices each", nodes.len()),
            )
        };
        out.push(check);
    }
    out
}

/// `kueue/clusterqueue/<q>` and `kueue/localqueue/<namespace>/<q>`.
fn kueue_checks(expected: &Expected, queue: &ExpectedQueue, kueue: &KueueSnapshot) -> Vec<Check> {
    let q = &queue.name;
    let ns = &queue.namespace;
    let cq_name = format!("kueue/clusterqueue/{q}");
    let lq_name = format!("kueue/localqueue/{ns}/{q}");
    let apply_hint = || {
        let bp = &expected.blueprint_path;
        format!(
            "Kueue is enabled in the blueprint (`software.kueue`); run `a3ctl plan {bp}` to see what is missing and `a3ctl apply {bp}` to install it"
        )
    };
    let (version, cluster_queue, local_queue) = match kueue {
        KueueSnapshot::Skipped => return vec![],
        KueueSnapshot::NotServed => {
            return vec![Check::fail(
                cq_name,
                format!(
                    "ClusterQueue `{q}` not found: the cluster does not serve the `kueue.x-k8s.io` API (Kueue is not installed)"
                ),
                apply_hint(),
            )];
        }
        KueueSnapshot::Served {
            version,
            cluster_queues,
            local_queues,
            ..
        } => (
            version,
            cluster_queues
                .iter()
                .find(|o| o["metadata"]["name"] == q.as_str()),
            local_queues.iter().find(|o| {
                o["metadata"]["name"] == q.as_str() && o["metadata"]["namespace"] == ns.as_str()
            }),
        ),
    };
    let cq = match cluster_queue {
        None => Check::fail(
            cq_name,
            format!("ClusterQueue `{q}` not found (kueue.x-k8s.io/{version})"),
            apply_hint(),
        ),
        Some(live) => cluster_queue_check(expected, queue, cq_name, live),
    };
    let lq = match local_queue {
        None => Check::fail(
            lq_name,
            format!("LocalQueue `{ns}/{q}` not found: workloads cannot submit to `{q}`"),
            apply_hint(),
        ),
        Some(live) => {
            let target = &live["spec"]["clusterQueue"];
            if target == q.as_str() {
                Check::pass(lq_name, format!("submits to ClusterQueue `{q}`"))
            } else {
                Check::fail(
                    lq_name,
                    format!(
                        "LocalQueue `{ns}/{q}` submits to ClusterQueue {} instead of `{q}`",
                        shown(target)
                    ),
                    drift_hint(expected, "it was changed"),
                )
            }
        }
    };
    vec![cq, lq]
}

fn cluster_queue_check(
    expected: &Expected,
    queue: &ExpectedQueue,
    name: String,
    live: &Value,
) -> Check {
    let q = &queue.name;
    let quota: u64 = live["spec"]["resourceGroups"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|g| g["flavors"].as_array().into_iter().flatten())
        .flat_map(|f| f["resources"].as_array().into_iter().flatten())
        .filter(|r| r["name"] == GPU_RESOURCE)
        .filter_map(|r| integer_quantity(&r["nominalQuota"]))
        .sum();
    if quota != queue.gpus {
        return Check::fail(
            name,
            format!(
                "ClusterQueue `{q}` has a {GPU_RESOURCE} quota of {quota}, the GPU pools have {} GPUs",
                queue.gpus
            ),
            drift_hint(expected, "its quota was changed"),
        );
    }
    let active = live["status"]["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|c| c["type"] == "Active");
    match active {
        Some(c) if c["status"] == "True" => Check::pass(
            name,
            format!("Active with a quota of {quota} {GPU_RESOURCE}"),
        ),
        Some(c) => Check::fail(
            name,
            format!(
                "ClusterQueue `{q}` is not Active ({}: {})",
                c["reason"].as_str().unwrap_or("no reason"),
                c["message"].as_str().unwrap_or("no message")
            ),
            "an inactive ClusterQueue admits nothing; its ResourceFlavors must exist and the Kueue controller (`kueue-system/kueue-controller-manager`) must be running",
        ),
        None => Check::fail(
            name,
            format!("ClusterQueue `{q}` reports no Active condition yet"),
            "the Kueue controller (`kueue-system/kueue-controller-manager`) sets it; check that it is running",
        ),
    }
}
