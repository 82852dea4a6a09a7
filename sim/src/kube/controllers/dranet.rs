//! GKE-managed GPU networking ("DRANET") on the Kubernetes side: for node pools with an
//! accelerator network profile, GKE's DRA network driver publishes each node's RDMA NICs as the
//! devices of a ResourceSlice, and GKE creates the DeviceClass `mrdma.google.com` that
//! ResourceClaims name (container-engine-accelerators
//! `gpudirect-rdma/nccl-test-managed-rdma.yaml` asks for `deviceClassName: mrdma.google.com`,
//! `allocationMode: ExactCount`, `count: 8`).
//!
//! The driver runs on the nodes labelled `cloud.google.com/gke-networking-dra-driver=true`
//! (the label cluster-toolkit and xpk put on such pools), so a node without the label publishes
//! nothing. Objects are written at `resource.k8s.io/v1` (GKE allows the profile from
//! 1.34.1-gke.1829001, whose API server serves `v1`).
//!
//! The simulator's own choices, for want of a public dump of GKE's objects: the driver name
//! `mrdma.google.com` (the DeviceClass's name), the DeviceClass selector on it, one slice per node
//! named `<node>-mrdma.google.com` with devices `mrdma0` ... `mrdma7`, and their attributes.

use super::Clock;
use super::housekeeping::create;
use crate::kube::KubeCluster;
use crate::kube::dra::GROUP;
use serde_json::json;
use std::collections::BTreeMap;

/// The label GKE's DRA network driver selects nodes by; pools with an accelerator network
/// profile set it (cluster-toolkit `modules/compute/gke-node-pool`, xpk `src/xpk/core/nodepool.py`).
pub const DRA_DRIVER_LABEL: &str = "cloud.google.com/gke-networking-dra-driver";

/// The DeviceClass GKE creates, and the driver its devices come from.
pub const DEVICE_CLASS: &str = "mrdma.google.com";

/// Publishes the ResourceSlices of DRANET nodes (removing those of nodes gone) and creates the
/// DeviceClass once such a node exists.
pub fn sync(cluster: &mut KubeCluster, clock: &Clock) {
    let mut wanted: BTreeMap<String, u32> = BTreeMap::new();
    for spec in cluster.nodes.values().flatten() {
        let labelled = spec.labels.get(DRA_DRIVER_LABEL).map(String::as_str) == Some("true");
        if spec.managed_rdma_nics > 0 && labelled {
            wanted.insert(spec.name.clone(), spec.managed_rdma_nics);
        }
    }
    let stale: Vec<String> = cluster
        .store
        .list(GROUP, "resourceslices", None)
        .into_iter()
        .filter(|s| s["spec"]["driver"] == DEVICE_CLASS)
        .filter(|s| !wanted.contains_key(s["spec"]["nodeName"].as_str().unwrap_or_default()))
        .filter_map(|s| s["metadata"]["name"].as_str().map(str::to_string))
        .collect();
    for name in stale {
        cluster.store.remove(GROUP, "resourceslices", "", &name);
    }
    if wanted.is_empty() {
        return;
    }
    create(
        cluster,
        clock,
        GROUP,
        "deviceclasses",
        json!({"apiVersion": format!("{GROUP}/v1"), "kind": "DeviceClass",
            "metadata": {"name": DEVICE_CLASS,
                "labels": {"addonmanager.kubernetes.io/mode": "Reconcile"}},
            "spec": {"selectors": [{"cel": {"expression":
                format!("device.driver == \"{DEVICE_CLASS}\"")}}]}}),
    );
    for (node, nics) in wanted {
        let uid = cluster
            .store
            .get("", "nodes", "", &node)
            .map(|n| n["metadata"]["uid"].clone())
            .unwrap_or_default();
        let devices: Vec<_> = (0..nics)
            .map(|i| {
                json!({"name": format!("mrdma{i}"), "attributes": {
                    "index": {"int": i},
                    "rdma": {"bool": true},
                }})
            })
            .collect();
        create(
            cluster,
            clock,
            GROUP,
            "resourceslices",
            json!({"apiVersion": format!("{GROUP}/v1"), "kind": "ResourceSlice",
                "metadata": {"name": format!("{node}-{DEVICE_CLASS}"),
                    "ownerReferences": [{"apiVersion": "v1", "kind": "Node", "name": node,
                        "uid": uid, "controller": true}]},
                "spec": {"driver": DEVICE_CLASS, "nodeName": node,
                    "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
                    "devices": devices}}),
        );
    }
}
