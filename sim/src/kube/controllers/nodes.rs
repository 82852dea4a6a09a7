//! Node objects for every node GKE created, with GKE's labels (pool, machine family, OS, boot
//! disk, `containerd` runtime, CPU scaling level, logging variant, pods per node, instance type,
//! region and zone, accelerator), the pool's taints, capacity and
//! allocatable (GKE's reservations), the Ready condition, node info and the node's extra NICs
//! (annotations, and a resource per attached Network object). A client's cordon and taints
//! (`kubectl cordon`, `kubectl taint`) stay on the node ([`client_edit`]), with the
//! `node.kubernetes.io/unschedulable:NoSchedule` taint a cordon brings
//! (<https://kubernetes.io/docs/concepts/scheduling-eviction/taint-and-toleration/#taint-nodes-by-condition>). GPUs appear as
//! `nvidia.com/gpu` only once a driver is installed: the pool's GKE-managed driver after
//! `kube.driver.installed`, or a driver-installer DaemonSet (COS installer image) ready there.

use super::workloads::{ds_placement, is_driver_installer};
use super::{Clock, hash};
use crate::kube::store::object_key;
use crate::kube::{KubeCluster, NodeSpec};
use serde_json::{Map, Value, json};
use std::collections::BTreeSet;

/// Parses a Kubernetes quantity into a plain number (bytes, or cores for `m` suffixes).
pub fn parse_quantity(q: &str) -> Option<f64> {
    let q = q.trim();
    let suffixes: &[(&str, f64)] = &[
        ("Ki", 1024.0),
        ("Mi", 1024f64.powi(2)),
        ("Gi", 1024f64.powi(3)),
        ("Ti", 1024f64.powi(4)),
        ("Pi", 1024f64.powi(5)),
        ("m", 0.001),
        ("k", 1e3),
        ("M", 1e6),
        ("G", 1e9),
        ("T", 1e12),
    ];
    for (suffix, factor) in suffixes {
        if let Some(number) = q.strip_suffix(suffix) {
            return number.parse::<f64>().ok().map(|n| n * factor);
        }
    }
    q.parse().ok()
}

/// GKE's CPU reservation: 6% of the first core, 1% of the second, 0.5% of the next two,
/// 0.25% of the rest.
fn allocatable_cpu(cpu: &str) -> String {
    let Some(cores) = parse_quantity(cpu) else {
        return cpu.to_string();
    };
    let milli = cores * 1000.0;
    let tiers = [
        (1000.0, 0.06),
        (1000.0, 0.01),
        (2000.0, 0.005),
        (f64::MAX, 0.0025),
    ];
    let mut left = milli;
    let mut reserved = 0.0;
    for (size, rate) in tiers {
        let part = left.min(size);
        reserved += part * rate;
        left -= part;
        if left <= 0.0 {
            break;
        }
    }
    format!("{}m", (milli - reserved).round() as i64)
}

/// GKE's memory reservation (25% of the first 4 GiB, 20% of the next 4, 10% of the next 8, 6% of
/// the next 112, 2% above 128 GiB) plus the 100 MiB eviction threshold.
fn allocatable_memory(memory: &str) -> String {
    let Some(bytes) = parse_quantity(memory) else {
        return memory.to_string();
    };
    let gib = 1024f64.powi(3);
    let tiers = [
        (4.0 * gib, 0.25),
        (4.0 * gib, 0.20),
        (8.0 * gib, 0.10),
        (112.0 * gib, 0.06),
        (f64::MAX, 0.02),
    ];
    let mut left = bytes;
    let mut reserved = 0.0;
    for (size, rate) in tiers {
        let part = left.min(size);
        reserved += part * rate;
        left -= part;
        if left <= 0.0 {
            break;
        }
    }
    reserved += 100.0 * 1024.0 * 1024.0;
    format!("{}Ki", ((bytes - reserved).max(0.0) / 1024.0) as i64)
}

fn capacity_memory(memory: &str) -> String {
    match parse_quantity(memory) {
        Some(bytes) => format!("{}Ki", (bytes / 1024.0) as i64),
        None => memory.to_string(),
    }
}

/// The Node object for a node, without its GPU resources.
fn base_node(cluster: &KubeCluster, spec: &NodeSpec, clock: &Clock) -> Value {
    let mut labels = Map::new();
    let region = spec
        .zone
        .rsplit_once('-')
        .map(|(r, _)| r.to_string())
        .unwrap_or_else(|| spec.zone.clone());
    let family = spec
        .machine_type
        .split('-')
        .next()
        .unwrap_or_default()
        .to_string();
    let defaults = [
        ("beta.kubernetes.io/arch", "amd64".to_string()),
        ("beta.kubernetes.io/os", "linux".to_string()),
        (
            "beta.kubernetes.io/instance-type",
            spec.machine_type.clone(),
        ),
        // GKE's own labels, as `kubectl describe node` shows them on a GKE node (the boot disk
        // is the pool's, set by the container API's side; `pd-balanced` is GKE's default):
        // containerd as the runtime
        // (<https://cloud.google.com/kubernetes-engine/docs/concepts/using-containerd>), the
        // vCPUs as the CPU scaling level, the logging variant and the pods per node.
        ("cloud.google.com/gke-boot-disk", "pd-balanced".to_string()),
        (
            "cloud.google.com/gke-container-runtime",
            "containerd".to_string(),
        ),
        (
            "cloud.google.com/gke-cpu-scaling-level",
            parse_quantity(&spec.cpu)
                .map_or_else(|| spec.cpu.clone(), |c| (c.round() as u64).to_string()),
        ),
        (
            "cloud.google.com/gke-logging-variant",
            "DEFAULT".to_string(),
        ),
        ("cloud.google.com/gke-max-pods-per-node", "110".to_string()),
        // What netd's DaemonSet selects, set by GKE's node startup
        // (GoogleCloudPlatform/netd#42, kubernetes/kubernetes#69051).
        ("cloud.google.com/gke-netd-ready", "true".to_string()),
        ("cloud.google.com/gke-nodepool", spec.pool.clone()),
        ("cloud.google.com/gke-os-distribution", "cos".to_string()),
        ("cloud.google.com/machine-family", family),
        ("failure-domain.beta.kubernetes.io/region", region.clone()),
        ("failure-domain.beta.kubernetes.io/zone", spec.zone.clone()),
        ("kubernetes.io/arch", "amd64".to_string()),
        ("kubernetes.io/hostname", spec.name.clone()),
        ("kubernetes.io/os", "linux".to_string()),
        (
            "node.kubernetes.io/instance-type",
            spec.machine_type.clone(),
        ),
        ("topology.kubernetes.io/region", region),
        ("topology.kubernetes.io/zone", spec.zone.clone()),
    ];
    for (k, v) in defaults {
        labels.insert(k.to_string(), json!(v));
    }
    for (k, v) in &spec.labels {
        labels.insert(k.clone(), json!(v));
    }
    if spec.gpus > 0
        && spec.managed_driver
        && !labels.contains_key("cloud.google.com/gke-gpu-driver-version")
    {
        labels.insert(
            "cloud.google.com/gke-gpu-driver-version".into(),
            json!("default"),
        );
    }
    let edits = cluster.node_edits.get(&spec.name);
    let unschedulable = spec.unschedulable || edits.is_some_and(|e| e.unschedulable);
    let mut taints: Vec<Value> = spec
        .taints
        .iter()
        .map(|(k, v, e)| json!({"key": k, "value": v, "effect": e}))
        .collect();
    taints.extend(edits.into_iter().flat_map(|e| e.taints.iter().cloned()));
    // A cordoned node: the node lifecycle controller taints it (TaintNodesByCondition).
    if unschedulable {
        taints.push(json!({"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}));
    }
    let version = if spec.version.is_empty() {
        cluster.version.as_str()
    } else {
        spec.version.as_str()
    };
    let since = cluster
        .node_since
        .get(&spec.name)
        .copied()
        .unwrap_or(clock.now);
    let since_ts = clock.ts(since);
    let index = hash(&spec.name);
    // The VM's address in the cluster's subnetwork (worlds saved before nodes were VMs: one drawn
    // from the node's name).
    let internal_ip = if spec.internal_ip.is_empty() {
        format!("10.128.{}.{}", (index >> 8) % 250, 2 + index % 250)
    } else {
        spec.internal_ip.clone()
    };
    let project = cluster.key_project();
    let mut node = json!({
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": spec.name,
            "labels": labels,
            "annotations": {
                "node.alpha.kubernetes.io/ttl": "0",
                "volumes.kubernetes.io/controller-managed-attach-detach": "true",
            },
        },
        "spec": {
            "podCIDR": format!("10.{}.{}.0/24", 64 + (index >> 16) % 32, (index >> 24) % 256),
            "providerID": format!("gce://{project}/{}/{}", spec.zone, spec.name),
        },
        "status": {
            "capacity": {
                "cpu": spec.cpu,
                "ephemeral-storage": "98831908Ki",
                "hugepages-1Gi": "0",
                "hugepages-2Mi": "0",
                "memory": capacity_memory(&spec.memory),
                "pods": "110",
            },
            "allocatable": {
                "cpu": allocatable_cpu(&spec.cpu),
                "ephemeral-storage": "47060071478",
                "hugepages-1Gi": "0",
                "hugepages-2Mi": "0",
                "memory": allocatable_memory(&spec.memory),
                "pods": "110",
            },
            "conditions": [{
                "type": "Ready",
                "status": "True",
                "reason": "KubeletReady",
                "message": "kubelet is posting ready status",
                "lastHeartbeatTime": since_ts,
                "lastTransitionTime": since_ts,
            }],
            "addresses": [
                {"type": "InternalIP", "address": internal_ip},
                {"type": "Hostname", "address": spec.name},
            ],
            "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
            "nodeInfo": {
                "architecture": "amd64",
                "bootID": format!("{:016x}", hash(&format!("boot/{}", spec.name))),
                "containerRuntimeVersion": "containerd://1.7.24",
                "kernelVersion": "6.6.72+",
                "kubeProxyVersion": format!("v{version}"),
                "kubeletVersion": format!("v{version}"),
                "machineID": format!("{:032x}", u128::from(hash(&format!("machine/{}", spec.name)))),
                "operatingSystem": "linux",
                "osImage": "Container-Optimized OS from Google",
                "systemUUID": format!("{:032x}", u128::from(hash(&format!("uuid/{}", spec.name)))),
            },
        },
    });
    if !taints.is_empty() {
        node["spec"]["taints"] = Value::Array(taints);
    }
    if unschedulable {
        node["spec"]["unschedulable"] = json!(true);
    }
    node
}

/// The taint the node lifecycle controller puts on a cordoned node.
const UNSCHEDULABLE_TAINT: &str = "node.kubernetes.io/unschedulable";

/// A client wrote GKE's Node `name` as `written` (PUT or PATCH of its main resource): its cordon
/// and the taints GKE did not set are remembered, so the next pass keeps them, as a kubelet and
/// GKE leave a client's `spec.unschedulable` and taints alone. A cordon GKE set itself (an
/// upgrade's) is GKE's to lift; a client that uncordons such a node is not remembered (a guess:
/// GKE documents no rule for it). Nodes that are not GKE's are left to the client entirely.
// GUESS(gke-uncordon-during-upgrade): a client's uncordon of a node GKE cordoned for an upgrade is not remembered
pub fn client_edit(cluster: &mut KubeCluster, name: &str, written: &Value) {
    let Some(spec) = cluster.nodes.values().flatten().find(|s| s.name == name) else {
        return;
    };
    let gke_taint = |t: &Value| {
        t["key"] == UNSCHEDULABLE_TAINT
            || spec.taints.iter().any(|(k, v, e)| {
                t["key"] == k.as_str()
                    && t["value"].as_str().unwrap_or_default() == v
                    && t["effect"] == e.as_str()
            })
    };
    let edits = crate::kube::NodeEdits {
        unschedulable: written["spec"]["unschedulable"] == true && !spec.unschedulable,
        taints: written["spec"]["taints"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|t| !gke_taint(t))
            .cloned()
            .collect(),
    };
    if edits == crate::kube::NodeEdits::default() {
        cluster.node_edits.remove(name);
    } else {
        cluster.node_edits.insert(name.to_string(), edits);
    }
}

/// Names of the nodes on which a driver-installer DaemonSet has a ready pod.
fn installer_ready_nodes(
    cluster: &KubeCluster,
    nodes: &[Value],
    clock: &Clock,
) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for key in cluster.store.keys("apps", "daemonsets") {
        let Some(ds) = cluster.store.objects.get(&key) else {
            continue;
        };
        if !is_driver_installer(ds) {
            continue;
        }
        let placement = ds_placement(cluster, &key, ds, nodes, clock.now);
        out.extend(placement.ready_any);
    }
    out
}

/// The annotation GKE lists a node's NICs in: `[{"birthIP", "birthName", "pciAddress"}]`, one
/// per host interface, `eth0` first (kubernetes/ingress-gce `networking.gke.io/nic-info`,
/// `NICInfoAnnotationKey` of GKE's network API).
pub const NIC_INFO: &str = "networking.gke.io/nic-info";

/// The annotation GKE lists a node's additional networks in, by the Network object attached to
/// each: `[{"network", "ipAddress"}]` (`NorthInterfacesAnnotationKey`, same sources).
pub const NORTH_INTERFACES: &str = "networking.gke.io/north-interfaces";

/// The prefix of the extended resources GKE advertises per Network a node is attached to:
/// `networking.gke.io.networks/<Network>` and `networking.gke.io.networks/<Network>.IP`.
pub const NETWORK_RESOURCE: &str = "networking.gke.io.networks/";

/// The Network objects (name, `spec.type`) whose GKENetworkParamSet names each
/// `(VPC, subnetwork)`.
fn attached_networks(cluster: &KubeCluster) -> Vec<((String, String), String)> {
    let mut out = vec![];
    for network in cluster.store.list("networking.gke.io", "networks", None) {
        let name = network["metadata"]["name"].as_str().unwrap_or_default();
        let reference = &network["spec"]["parametersRef"];
        if reference["kind"] != "GKENetworkParamSet" {
            continue;
        }
        let params_name = reference["name"].as_str().unwrap_or_default();
        let Some(params) =
            cluster
                .store
                .get("networking.gke.io", "gkenetworkparamsets", "", params_name)
        else {
            continue;
        };
        let vpc = params["spec"]["vpc"].as_str().unwrap_or_default();
        let subnet = params["spec"]["vpcSubnet"].as_str().unwrap_or_default();
        out.push(((vpc.to_string(), subnet.to_string()), name.to_string()));
    }
    out
}

/// A node's NICs as GKE shows them: the `nic-info` and `north-interfaces` annotations and a
/// `networking.gke.io.networks/<Network>` resource (with its `.IP` twin) per Network object
/// that refers to one of the node's additional VPCs. Host interfaces are `eth0` (the primary
/// NIC) then `eth1`, `eth2` ... in the pool's `additionalNodeNetworkConfigs` order.
fn show_nics(node: &mut Value, spec: &NodeSpec, attached: &[((String, String), String)]) {
    if spec.nics.is_empty() {
        return;
    }
    let primary_ip = node["status"]["addresses"][0]["address"].clone();
    let slot = |i: usize| format!("0000:{:02x}:00.0", 0x0c + i * 0x10);
    let mut nic_info =
        vec![json!({"birthIP": primary_ip, "birthName": "eth0", "pciAddress": slot(0)})];
    let mut north = vec![];
    for (i, nic) in spec.nics.iter().enumerate() {
        nic_info.push(
            json!({"birthIP": nic.ip, "birthName": format!("eth{}", i + 1),
            "pciAddress": slot(i + 1)}),
        );
        for ((vpc, subnet), network) in attached {
            if *vpc == nic.network && *subnet == nic.subnetwork {
                north.push(json!({"network": network, "ipAddress": nic.ip}));
                for table in ["capacity", "allocatable"] {
                    node["status"][table][format!("{NETWORK_RESOURCE}{network}")] = json!("1");
                    node["status"][table][format!("{NETWORK_RESOURCE}{network}.IP")] = json!("1");
                }
            }
        }
    }
    let annotations = &mut node["metadata"]["annotations"];
    annotations[NIC_INFO] = json!(Value::Array(nic_info).to_string());
    if !north.is_empty() {
        annotations[NORTH_INTERFACES] = json!(Value::Array(north).to_string());
    }
}

/// Creates, updates and removes Node objects to match the node pools.
pub fn sync(cluster: &mut KubeCluster, clock: &Clock) {
    let specs: Vec<NodeSpec> = cluster.nodes.values().flatten().cloned().collect();
    let attached = attached_networks(cluster);
    let mut desired: Vec<(NodeSpec, Value)> = specs
        .iter()
        .map(|s| {
            let mut node = base_node(cluster, s, clock);
            show_nics(&mut node, s, &attached);
            (s.clone(), node)
        })
        .collect();
    let base: Vec<Value> = desired.iter().map(|(_, n)| n.clone()).collect();
    let installed_by_daemonset = installer_ready_nodes(cluster, &base, clock);
    for (spec, node) in desired.iter_mut() {
        if spec.gpus == 0 {
            continue;
        }
        let managed = spec.managed_driver && {
            let since = cluster
                .node_since
                .get(&spec.name)
                .or_else(|| cluster.nodes_since.get(&spec.pool))
                .copied()
                .unwrap_or(clock.now);
            let delay = cluster.controllers.driver_delay.get(&spec.pool).copied();
            delay.is_some_and(|d| since.plus_ms(d) <= clock.now)
        };
        if managed || installed_by_daemonset.contains(&spec.name) {
            let gpus = json!(spec.gpus.to_string());
            node["status"]["capacity"]["nvidia.com/gpu"] = gpus.clone();
            node["status"]["allocatable"]["nvidia.com/gpu"] = gpus;
        }
    }
    let names: BTreeSet<String> = specs.iter().map(|s| s.name.clone()).collect();
    for key in cluster.store.keys("", "nodes") {
        let Some(existing) = cluster.store.objects.get(&key) else {
            continue;
        };
        let name = existing["metadata"]["name"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        let managed = existing
            .pointer("/metadata/labels/cloud.google.com~1gke-nodepool")
            .is_some();
        if managed && !names.contains(&name) {
            cluster.store.remove("", "nodes", "", &name);
        }
    }
    cluster.node_edits.retain(|name, _| names.contains(name));
    for (spec, mut node) in desired {
        let key = object_key("", "nodes", "", &spec.name);
        match cluster.store.objects.get(&key) {
            Some(existing) => {
                // GKE owns the NIC annotations; others' annotations stay.
                let mut annotations = existing["metadata"]["annotations"].clone();
                for key in [NIC_INFO, NORTH_INTERFACES] {
                    match node["metadata"]["annotations"].get(key) {
                        Some(v) => annotations[key] = v.clone(),
                        None => {
                            if let Some(map) = annotations.as_object_mut() {
                                map.remove(key);
                            }
                        }
                    }
                }
                let same = existing["spec"] == node["spec"]
                    && existing["status"] == node["status"]
                    && existing["metadata"]["labels"] == node["metadata"]["labels"]
                    && existing["metadata"]["annotations"] == annotations;
                if !same {
                    let mut updated = existing.clone();
                    updated["spec"] = node["spec"].take();
                    updated["status"] = node["status"].take();
                    updated["metadata"]["labels"] = node["metadata"]["labels"].take();
                    updated["metadata"]["annotations"] = annotations;
                    cluster.store.put("", "nodes", "", &spec.name, updated);
                }
            }
            None => {
                let since = cluster
                    .node_since
                    .get(&spec.name)
                    .copied()
                    .unwrap_or(clock.now);
                node["metadata"]["uid"] = json!(cluster.store.next_uid());
                node["metadata"]["creationTimestamp"] = json!(clock.ts(since));
                cluster.store.put("", "nodes", "", &spec.name, node);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gke_reservations() {
        assert_eq!(allocatable_cpu("4"), "3920m");
        assert_eq!(parse_quantity("1Gi"), Some(1073741824.0));
        // 16 GiB: 1 + 0.8 + 0.8 GiB reserved plus 100 MiB.
        assert_eq!(allocatable_memory("16Gi"), "13948518Ki");
    }
}
