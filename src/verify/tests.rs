//! Checks and the NCCL test over fabricated objects: a healthy A3 High and A3 Mega cluster pass,
//! and each kind of damage fails the one check that names it.

use super::nccl;
use super::*;
use crate::blueprint::Blueprint;
use crate::blueprint::testing::shipped;
use serde_json::{Value, json};

fn expected(bp: &Blueprint) -> Expected {
    let graph = ResourceGraph::from_blueprint(bp).unwrap();
    Expected::new(bp, &graph, "bp.toml")
}

fn node(name: &str, pool: &str, accelerator: &str, gpus: &str) -> Value {
    json!({"metadata": {"name": name, "labels": {NODE_POOL_LABEL: pool,
        "cloud.google.com/gke-accelerator": accelerator}},
        "status": {"allocatable": {GPU_RESOURCE: gpus},
                   "conditions": [{"type": "Ready", "status": "True"}]}})
}

fn daemonset(name: &str, desired: u64, ready: u64) -> Value {
    json!({"metadata": {"name": name, "namespace": "kube-system", "generation": 1},
           "status": {"desiredNumberScheduled": desired, "numberReady": ready,
                      "updatedNumberScheduled": ready, "observedGeneration": 1}})
}

fn cluster_queue(name: &str, quota: Value, active: &str) -> Value {
    json!({"metadata": {"name": name}, "spec": {"resourceGroups": [
        {"coveredResources": [GPU_RESOURCE], "flavors": [
            {"name": "a3", "resources": [{"name": GPU_RESOURCE, "nominalQuota": quota}]}]}]},
        "status": {"conditions": [{"type": "Active", "status": active, "reason": "FlavorNotFound",
            "message": "Can't admit new workloads: references missing ResourceFlavor(s): a3."}]}})
}

/// A healthy cluster of `bp`.
fn healthy(bp: &Blueprint) -> Snapshot {
    let e = expected(bp);
    let accelerator = bp.family.accelerator_type();
    let mut nodes = vec![node("gke-sys-0", "system", "", "0")];
    nodes[0]["metadata"]["labels"] = json!({NODE_POOL_LABEL: "system"});
    let mut gpu_nodes = 0;
    for pool in &bp.gpu_pools {
        for i in 0..pool.nodes {
            nodes.push(node(
                &format!("gke-{}-{i}", pool.name),
                &pool.name,
                accelerator,
                "8",
            ));
            gpu_nodes += 1;
        }
    }
    // What GKE shows on the nodes of an RDMA family: every NIC in nic-info, every RDMA Network
    // as a resource (explicit); the driver's label and a ResourceSlice per node (managed).
    let mut slices = Vec::new();
    match &e.rdma {
        None => {}
        Some(ExpectedRdma::Explicit {
            host_nics,
            rdma_networks,
        }) => {
            for node in nodes.iter_mut().skip(1) {
                let nics: Vec<Value> = (0..*host_nics)
                    .map(|i| json!({"birthName": format!("eth{i}")}))
                    .collect();
                node["metadata"]["annotations"] =
                    json!({"networking.gke.io/nic-info": Value::Array(nics).to_string()});
                for network in rdma_networks {
                    node["status"]["allocatable"]
                        [format!("networking.gke.io.networks/{network}")] = json!("1");
                }
            }
        }
        Some(ExpectedRdma::Managed {
            nics, device_class, ..
        }) => {
            for node in nodes.iter_mut().skip(1) {
                node["metadata"]["labels"][crate::graph::build::DRA_DRIVER_LABEL] = json!("true");
                let name = node["metadata"]["name"].clone();
                let devices: Vec<Value> = (0..*nics)
                    .map(|i| json!({"name": format!("mrdma{i}")}))
                    .collect();
                slices.push(
                    json!({"spec": {"driver": device_class, "nodeName": name, "devices": devices}}),
                );
            }
        }
    }
    let dra = match &e.rdma {
        Some(ExpectedRdma::Managed {
            device_class,
            claim_template,
            ..
        }) => DraSnapshot {
            version: Some("v1".into()),
            device_class: Some(json!({"metadata": {"name": device_class}})),
            claim_template: Some(
                json!({"metadata": {"name": claim_template.1, "namespace": claim_template.0}}),
            ),
            slices,
        },
        _ => DraSnapshot::default(),
    };
    let networks = e
        .networks
        .iter()
        .map(|n| {
            json!({"metadata": {"name": n.name}, "spec": {"type": "Device", "parametersRef":
                {"group": "networking.gke.io", "kind": "GKENetworkParamSet", "name": n.name}}})
        })
        .chain([json!({"metadata": {"name": "default"}, "spec": {"type": "L3"}})])
        .collect();
    let param_sets = e
        .networks
        .iter()
        .map(|n| {
            json!({"metadata": {"name": n.name},
                   "spec": {"vpc": n.vpc, "vpcSubnet": n.subnet, "deviceMode": n.device_mode}})
        })
        .collect();
    // The flavors and the ClusterQueue as apply creates them; each pool's nodes carry the labels
    // its flavor selects.
    let graph = ResourceGraph::from_blueprint(bp).unwrap();
    let objects = |kind: &str| -> Vec<Value> {
        graph
            .resources()
            .iter()
            .map(|r| r.spec["object"].clone())
            .filter(|o| o["kind"] == kind)
            .collect()
    };
    let flavors = objects("ResourceFlavor");
    for flavor in &flavors {
        for node in nodes.iter_mut() {
            if node["metadata"]["labels"][NODE_POOL_LABEL] == flavor["metadata"]["name"] {
                for (k, v) in flavor["spec"]["nodeLabels"].as_object().unwrap() {
                    node["metadata"]["labels"][k] = v.clone();
                }
            }
        }
    }
    Snapshot {
        nodes,
        daemonsets: e
            .daemonsets
            .iter()
            .map(|d| daemonset(d, gpu_nodes, gpu_nodes))
            .collect(),
        networks: Some(networks),
        param_sets: Some(param_sets),
        kueue: KueueSnapshot::Served {
            version: "v1beta2".into(),
            local_queues: objects("LocalQueue"),
            cluster_queues: objects("ClusterQueue")
                .into_iter()
                .map(|mut q| {
                    q["status"] = json!({"conditions": [{"type": "Active", "status": "True"}]});
                    q
                })
                .collect(),
            flavors,
        },
        dra,
        jobset: JobSetSnapshot {
            crd: Some(json!({"metadata": {"name": "jobsets.jobset.x-k8s.io"},
                "status": {"conditions": [{"type": "Established", "status": "True"}]}})),
            controller: Some(
                json!({"metadata": {"name": "jobset-controller-manager", "namespace": "jobset-system"},
                "status": {"conditions": [{"type": "Available", "status": "True"}]}}),
            ),
            kueue_config: Some(kueue_config(&[
                "batch/job",
                crate::graph::jobset::KUEUE_FRAMEWORK,
            ])),
        },
    }
}

/// Kueue's manager ConfigMap with `frameworks` enabled.
fn kueue_config(frameworks: &[&str]) -> Value {
    let list: String = frameworks
        .iter()
        .map(|f| format!("  - \"{f}\"\n"))
        .collect();
    json!({"metadata": {"name": "kueue-manager-config", "namespace": "kueue-system"},
        "data": {"controller_manager_config.yaml": format!(
            "apiVersion: config.kueue.x-k8s.io/v1beta1\nkind: Configuration\nintegrations:\n  frameworks:\n{list}")}})
}

fn failures(bp: &Blueprint, snapshot: &Snapshot) -> Vec<Check> {
    check(&expected(bp), snapshot)
        .into_iter()
        .filter(|c| c.status == Status::Fail)
        .collect()
}

#[test]
fn expectations_come_from_the_blueprint_and_its_graph() {
    let mega = expected(&shipped("a3-mega.toml"));
    assert_eq!(mega.networks.len(), 8);
    assert_eq!(mega.min_networks, 8);
    assert_eq!(mega.networks[2].name, "vpc3");
    assert_eq!(mega.networks[2].vpc, "a3mega-gpunet-3");
    assert_eq!(mega.networks[2].subnet, "a3mega-gpunet-3-subnet");
    assert_eq!(mega.daemonsets, ["device-injector", "nccl-tcpxo-installer"]);
    assert_eq!(mega.kueue[0].gpus, 32 * 8);
    let mut bp = shipped("a3-high.toml");
    bp.software.driver = crate::blueprint::DriverMode::Daemonset;
    let high = expected(&bp);
    assert_eq!(high.min_networks, 4);
    assert_eq!(
        high.daemonsets,
        [
            "device-injector",
            "nccl-tcpx-installer",
            "nvidia-driver-installer"
        ]
    );
    assert_eq!(
        high.kueue,
        [ExpectedQueue {
            name: "a3-queue".into(),
            namespace: "default".into(),
            gpus: 32,
            flavors: vec!["a3high".into()],
        }]
    );
}

#[test]
fn healthy_clusters_pass_every_check() {
    for name in ["a3-high.toml", "a3-mega.toml"] {
        let bp = shipped(name);
        let checks = check(&expected(&bp), &healthy(&bp));
        assert!(
            checks.iter().all(|c| c.status == Status::Pass),
            "{checks:#?}"
        );
        let names: Vec<&str> = checks.iter().map(|c| c.name.as_str()).collect();
        assert!(names.contains(&"networks/count"));
        assert!(names.contains(&"kueue/clusterqueue/a3-queue"));
        assert!(names.contains(&"kueue/localqueue/default/a3-queue"));
        for jobset in ["jobset/crd", "jobset/controller", "jobset/kueue"] {
            assert!(names.contains(&jobset), "{jobset}");
        }
    }
}

#[test]
fn a_missing_jobset_controller_or_integration_fails_with_a_hint_to_paste() {
    let bp = shipped("a3-mega.toml");
    let mut snapshot = healthy(&bp);
    snapshot.jobset.controller = None;
    let failed = failures(&bp, &snapshot);
    let names: Vec<&str> = failed.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["jobset/controller", "jobset/kueue"], "{failed:#?}");
    assert_eq!(
        failed[0].message,
        "Deployment `jobset-system/jobset-controller-manager` not found: nothing makes a JobSet's Jobs, and its webhook refuses new JobSets"
    );
    assert_eq!(
        failed[0].hint.as_deref(),
        Some(
            "JobSet is enabled in the blueprint (`software.jobset`); run `a3ctl plan bp.toml` to see what is missing and `a3ctl apply bp.toml` to install it"
        )
    );

    // Kueue configured without the JobSet framework: JobSets would run outside any quota.
    let mut snapshot = healthy(&bp);
    snapshot.jobset.kueue_config = Some(kueue_config(&["batch/job"]));
    let failed = failures(&bp, &snapshot);
    assert_eq!(failed.len(), 1, "{failed:#?}");
    assert_eq!(failed[0].name, "jobset/kueue");
    assert_eq!(
        failed[0].hint.as_deref(),
        Some(
            "add `- \"jobset.x-k8s.io/jobset\"` under `integrations.frameworks` with `kubectl -n kueue-system edit configmap kueue-manager-config`, then `kubectl -n kueue-system rollout restart deployment/kueue-controller-manager`"
        )
    );

    // An unestablished CRD fails its own check.
    let mut snapshot = healthy(&bp);
    snapshot.jobset.crd = Some(json!({"metadata": {"name": "jobsets.jobset.x-k8s.io"}}));
    let failed = failures(&bp, &snapshot);
    assert_eq!(
        failed[0].message,
        "CRD `jobsets.jobset.x-k8s.io` is not Established yet"
    );

    // JobSet off: no JobSet check; Kueue off: no integration check.
    let mut off = bp.clone();
    off.software.jobset.enabled = false;
    let checks = check(
        &expected(&off),
        &JobSetSnapshot::default().into_snapshot(&bp),
    );
    assert!(checks.iter().all(|c| !c.name.starts_with("jobset/")));
    let mut alone = bp.clone();
    alone.software.kueue.enabled = false;
    let checks = check(&expected(&alone), &healthy(&bp));
    assert!(checks.iter().any(|c| c.name == "jobset/controller"));
    assert!(checks.iter().all(|c| c.name != "jobset/kueue"));
}

impl JobSetSnapshot {
    /// A healthy snapshot of `bp` with this JobSet part.
    fn into_snapshot(self, bp: &Blueprint) -> Snapshot {
        Snapshot {
            jobset: self,
            ..healthy(bp)
        }
    }
}

#[test]
fn zero_network_objects_can_never_pass() {
    let bp = shipped("a3-mega.toml");
    let mut snapshot = healthy(&bp);
    snapshot.networks = Some(vec![]);
    snapshot.param_sets = Some(vec![]);
    // Even with no expected names at all, the count comes from the machine family.
    let mut e = expected(&bp);
    e.networks.clear();
    let failed: Vec<Check> = check(&e, &snapshot)
        .into_iter()
        .filter(|c| c.status == Status::Fail)
        .collect();
    assert_eq!(failed.len(), 1, "{failed:#?}");
    assert_eq!(failed[0].name, "networks/count");
    assert_eq!(
        failed[0].message,
        "0 device Network object(s), A3 Mega needs 8 (one per GPU NIC)"
    );
    // Not served at all (multi-networking off).
    snapshot.networks = None;
    let failed = failures(&bp, &snapshot);
    assert!(failed.iter().any(|c| {
        c.name == "networks/count"
            && c.message
                .contains("does not serve `networks.networking.gke.io`")
    }));
}

#[test]
fn a_deleted_network_fails_its_check_naming_it_with_the_drift_hint() {
    let bp = shipped("a3-mega.toml");
    let mut snapshot = healthy(&bp);
    snapshot
        .networks
        .as_mut()
        .unwrap()
        .retain(|n| n["metadata"]["name"] != "vpc3");
    let failed = failures(&bp, &snapshot);
    let names: Vec<&str> = failed.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["network/vpc3", "networks/count"]);
    assert_eq!(failed[0].message, "Network `vpc3` is missing");
    assert_eq!(
        failed[0].hint.as_deref(),
        Some(
            "it was deleted outside a3ctl; run `a3ctl plan bp.toml` to see the drift and `a3ctl apply bp.toml` to put it back"
        )
    );
}

#[test]
fn wrong_fields_of_a_network_pair_are_each_named() {
    let bp = shipped("a3-high.toml");
    let mut snapshot = healthy(&bp);
    let params = snapshot.param_sets.as_mut().unwrap();
    params[1]["spec"]["vpcSubnet"] = json!("elsewhere");
    params[1]["spec"]["deviceMode"] = json!("RDMA");
    snapshot.networks.as_mut().unwrap()[1]["spec"]["parametersRef"]["name"] = json!("vpc1");
    let failed = failures(&bp, &snapshot);
    assert_eq!(failed.len(), 1, "{failed:#?}");
    assert_eq!(failed[0].name, "network/vpc2");
    assert_eq!(
        failed[0].message,
        "Network `vpc2` does not reference GKENetworkParamSet `vpc2` (parametersRef is `{\"group\":\"networking.gke.io\",\"kind\":\"GKENetworkParamSet\",\"name\":\"vpc1\"}`); GKENetworkParamSet `vpc2` has vpcSubnet `elsewhere` instead of `a3high-gpunet-2-subnet`; GKENetworkParamSet `vpc2` has deviceMode `RDMA` instead of `NetDevice`"
    );
    assert!(
        failed[0]
            .hint
            .as_deref()
            .unwrap()
            .starts_with("it was changed outside a3ctl")
    );
}

#[test]
fn daemonsets_missing_or_not_ready_everywhere_fail() {
    let bp = shipped("a3-high.toml");
    let mut snapshot = healthy(&bp);
    snapshot
        .daemonsets
        .retain(|d| d["metadata"]["name"] != "nccl-tcpx-installer");
    snapshot.daemonsets[0]["status"]["numberReady"] = json!(3);
    let failed = failures(&bp, &snapshot);
    assert_eq!(failed.len(), 2, "{failed:#?}");
    assert_eq!(failed[0].name, "daemonset/kube-system/device-injector");
    assert_eq!(
        failed[0].message,
        "DaemonSet `kube-system/device-injector` is ready on 3 of 4 GPU node(s)"
    );
    assert_eq!(
        failed[1].message,
        "DaemonSet `kube-system/nccl-tcpx-installer` is missing"
    );
    let mut snapshot = healthy(&bp);
    snapshot.daemonsets[0]["status"]["desiredNumberScheduled"] = json!(2);
    assert!(
        failures(&bp, &snapshot)[0]
            .message
            .contains("is scheduled on 2 node(s), but the cluster has 4 GPU node(s)")
    );
}

#[test]
fn after_an_upgrade_nodes_run_the_blueprints_version_and_installers_their_current_template() {
    // a3-high.toml asks for `version = "1.33"`.
    let bp = shipped("a3-high.toml");
    let on = |snapshot: &mut Snapshot, versions: &[&str]| {
        for (node, v) in snapshot.nodes.iter_mut().skip(1).zip(versions) {
            node["status"]["nodeInfo"] = json!({"kubeletVersion": format!("v{v}")});
        }
    };
    let mut snapshot = healthy(&bp);
    on(&mut snapshot, &["1.33.5-gke.1080000"; 4]);
    assert_eq!(failures(&bp, &snapshot), vec![]);
    let passed = check(&expected(&bp), &snapshot);
    assert_eq!(
        passed[0].message,
        "4/4 node(s) Ready with 8 allocatable nvidia.com/gpu each, on GKE 1.33.5-gke.1080000"
    );

    // Half-way through a surge upgrade.
    let mut snapshot = healthy(&bp);
    on(
        &mut snapshot,
        &[
            "1.34.1-gke.1829001",
            "1.33.5-gke.1080000",
            "1.34.1-gke.1829001",
            "1.33.5-gke.1080000",
        ],
    );
    let failed = failures(&bp, &snapshot);
    assert_eq!(failed.len(), 1, "{failed:#?}");
    assert_eq!(
        failed[0].message,
        "the nodes of pool `a3high` run different GKE versions (2 on 1.33.5-gke.1080000, 2 on 1.34.1-gke.1829001): an upgrade is under way or stopped part-way"
    );

    // Not upgraded yet: the blueprint asks for 1.34.
    let mut newer = bp.clone();
    newer.cluster.version = crate::blueprint::VersionSpec::parse("1.34").unwrap();
    let mut snapshot = healthy(&newer);
    on(&mut snapshot, &["1.33.5-gke.1080000"; 4]);
    let failed = failures(&newer, &snapshot);
    assert_eq!(
        failed[0].message,
        "the nodes of pool `a3high` run GKE 1.33.5-gke.1080000, the blueprint asks for 1.34"
    );

    // An installer whose new template (a stack bump) is still rolling out.
    let mut snapshot = healthy(&bp);
    snapshot.daemonsets[1]["status"]["updatedNumberScheduled"] = json!(1);
    let failed = failures(&bp, &snapshot);
    assert_eq!(
        failed[0].message,
        "DaemonSet `kube-system/nccl-tcpx-installer` is rolling out its current version: 1 of 4 GPU node(s) run it"
    );
    let mut snapshot = healthy(&bp);
    snapshot.daemonsets[1]["metadata"]["generation"] = json!(2);
    assert_eq!(
        failures(&bp, &snapshot).len(),
        1,
        "a template not yet observed"
    );
}

#[test]
fn nodes_short_missing_not_ready_or_without_gpus_fail() {
    let mut bp = shipped("a3-high.toml");
    let mut snapshot = healthy(&bp);
    snapshot.nodes.pop();
    let failed = failures(&bp, &snapshot);
    assert_eq!(failed[0].name, "nodes/a3high");
    assert_eq!(
        failed[0].message,
        "node pool `a3high` has 3 node(s) registered, the blueprint declares 4"
    );

    let mut snapshot = healthy(&bp);
    snapshot.nodes[2]["status"]["conditions"][0]["status"] = json!("False");
    assert_eq!(
        failures(&bp, &snapshot)[0].message,
        "1 of 4 node(s) of pool `a3high` are not Ready: `gke-a3high-1`"
    );

    bp.software.driver = crate::blueprint::DriverMode::Daemonset;
    let mut snapshot = healthy(&bp);
    for n in snapshot.nodes.iter_mut().skip(1) {
        n["status"]["allocatable"] = json!({"cpu": "200"});
    }
    let failed = failures(&bp, &snapshot);
    assert_eq!(
        failed[0].message,
        "4 of 4 node(s) of pool `a3high` do not have 8 allocatable nvidia.com/gpu (gke-a3high-0 has 0): `gke-a3high-0`, `gke-a3high-1`, `gke-a3high-2` and 1 more"
    );
    assert!(
        failed[0]
            .hint
            .as_deref()
            .unwrap()
            .contains("kube-system/nvidia-driver-installer")
    );
}

#[test]
fn kueue_not_installed_missing_inactive_or_wrong_quota_fail() {
    let bp = shipped("a3-high.toml");
    let mut snapshot = healthy(&bp);
    snapshot.kueue = KueueSnapshot::NotServed;
    let failed = failures(&bp, &snapshot);
    assert_eq!(failed.len(), 1);
    assert_eq!(failed[0].name, "kueue/clusterqueue/a3-queue");
    assert!(
        failed[0]
            .message
            .starts_with("ClusterQueue `a3-queue` not found"),
        "{}",
        failed[0].message
    );

    let served = |cq: Option<Value>, lq: Option<Value>| KueueSnapshot::Served {
        version: "v1beta1".into(),
        local_queues: lq.into_iter().collect(),
        cluster_queues: cq.into_iter().collect(),
        flavors: Vec::new(),
    };
    snapshot.kueue = served(None, None);
    let failed = failures(&bp, &snapshot);
    assert_eq!(
        failed[0].message,
        "ClusterQueue `a3-queue` not found (kueue.x-k8s.io/v1beta1)"
    );
    assert_eq!(
        failed[1].message,
        "LocalQueue `default/a3-queue` not found: workloads cannot submit to `a3-queue`"
    );

    let lq = json!({"metadata": {"name": "a3-queue", "namespace": "default"},
        "spec": {"clusterQueue": "a3-queue"}});
    snapshot.kueue = served(
        Some(cluster_queue("a3-queue", json!(16), "True")),
        Some(lq.clone()),
    );
    assert_eq!(
        failures(&bp, &snapshot)[0].message,
        "ClusterQueue `a3-queue` has a nvidia.com/gpu quota of 16, the GPU pools have 32 GPUs"
    );
    snapshot.kueue = served(
        Some(cluster_queue("a3-queue", json!("32"), "False")),
        Some(lq),
    );
    assert_eq!(
        failures(&bp, &snapshot)[0].message,
        "ClusterQueue `a3-queue` is not Active (FlavorNotFound: Can't admit new workloads: references missing ResourceFlavor(s): a3.)"
    );

    let mut off = bp.clone();
    off.software.kueue.enabled = false;
    let checks = check(&expected(&off), &healthy(&bp));
    assert!(checks.iter().all(|c| !c.name.starts_with("kueue/")));
}

#[test]
fn quantities_parse() {
    assert_eq!(integer_quantity(&json!("8")), Some(8));
    assert_eq!(integer_quantity(&json!(256)), Some(256));
    assert_eq!(integer_quantity(&json!("2k")), Some(2000));
    assert_eq!(integer_quantity(&json!("500m")), None);
    assert_eq!(integer_quantity(&Value::Null), None);
}

#[test]
fn the_nccl_test_uses_the_stack_images_and_the_blueprint_networks() {
    for (file, sidecar, devices, nics, run) in [
        (
            "a3-mega.toml",
            "tcpxo-daemon",
            11,
            8,
            // The script's sizes are `-b $DATA_MIN -e $DATA_MAX`: 2G–8G, which the floor is set
            // for, is within them.
            "BENCHMARK=all_gather_perf NHOSTS=2 NCCL_LIB_DIR=/usr/local/nvidia/lib64 LD_LIBRARY_PATH=/usr/local/nvidia/lib64 DATA_MIN=1K DATA_MAX=8G /scripts/demo-run-nccl-test-tcpxo-via-mpi.sh",
        ),
        (
            "a3-high.toml",
            "tcpx-daemon",
            10,
            4,
            // GPUs per node, NICs, min and max size, hosts.
            "/scripts/run-allgather.sh 8 eth1,eth2,eth3,eth4 1M 8G 2",
        ),
    ] {
        let bp = shipped(file);
        let objects = nccl::objects(&bp).unwrap();
        assert_eq!(objects[0]["kind"], "Service");
        assert_eq!(objects[0]["spec"]["clusterIP"], "None");
        let job = &objects[1];
        assert_eq!(job["spec"]["completionMode"], "Indexed");
        assert_eq!(job["spec"]["completions"], 2);
        assert_eq!(job["spec"]["parallelism"], 2);
        let pod = &job["spec"]["template"]["spec"];
        assert_eq!(pod["subdomain"], nccl::NAME);
        assert_eq!(pod["nodeSelector"][POOL_LABEL], bp.gpu_pools[0].name);
        assert_eq!(pod["tolerations"][0]["key"], GPU_RESOURCE);
        let stack = &bp.software.stack;
        let rxdm = &pod["initContainers"][0];
        assert_eq!(rxdm["name"], sidecar);
        assert_eq!(rxdm["restartPolicy"], "Always");
        assert_eq!(
            rxdm["image"],
            stack
                .rxdm
                .as_ref()
                .map(|r| format!("{}:{}", r.image, r.tag))
                .unwrap()
        );
        let test = &pod["containers"][0];
        assert_eq!(
            test["image"],
            format!("{}:{}", stack.plugin_image, stack.plugin_tag)
        );
        assert_eq!(test["resources"]["limits"][GPU_RESOURCE], 8);
        let script = test["command"][2].as_str().unwrap();
        assert!(
            script.contains(&format!("\n{run} || status=$?\n")),
            "{script}"
        );
        let annotations = &job["spec"]["template"]["metadata"]["annotations"];
        assert_eq!(annotations["networking.gke.io/default-interface"], "eth0");
        let interfaces: Vec<Value> = serde_json::from_str(
            annotations["networking.gke.io/interfaces"]
                .as_str()
                .unwrap(),
        )
        .unwrap();
        assert_eq!(interfaces.len(), nics + 1);
        assert_eq!(
            interfaces[0],
            json!({"interfaceName": "eth0", "network": "default"})
        );
        assert_eq!(
            interfaces[nics],
            json!({"interfaceName": format!("eth{nics}"), "network": format!("vpc{nics}")})
        );
        let device_list = annotations[format!("devices.gke.io/container.{sidecar}")]
            .as_str()
            .unwrap();
        assert_eq!(device_list.lines().count(), devices);
        assert_eq!(
            job["metadata"]["labels"]["kueue.x-k8s.io/queue-name"],
            "a3-queue"
        );
        // The YAML text parses back into the same objects.
        let text = nccl::manifest(&bp, &objects);
        let parsed = crate::cloud::kube::parse_manifests(&text).unwrap();
        assert_eq!(parsed, objects);
    }
}

#[test]
fn the_nccl_test_needs_a_pool_of_two_and_names_each_familys_floor_file() {
    let mut bp = shipped("a3-high.toml");
    bp.gpu_pools[0].nodes = 1;
    assert_eq!(nccl::objects(&bp), Err(nccl::NoRoom { largest: 1 }));
    let (floor, source) = nccl::floor(crate::blueprint::MachineFamily::A3High);
    assert_eq!(floor, 60.0);
    assert_eq!(
        source,
        "BANDWIDTH_THRESHOLD of a 2G-8G all-gather, GoogleCloudPlatform/cluster-health-scanner@81c525d897f4e85a4f69dd1e389379de6f1e07c2 deploy/helm/health_checks/nccl_healthcheck/a3.yaml"
    );
    assert_eq!(
        nccl::floor(crate::blueprint::MachineFamily::A3Mega).0,
        150.0
    );
}

#[test]
fn a3_ultra_explicit_checks_every_nic_and_rdma_network_of_every_node() {
    let bp = shipped("a3-ultra.toml");
    let e = expected(&bp);
    assert_eq!(e.networks.len(), 9);
    assert_eq!(e.networks[0].name, "vpc1");
    assert_eq!(e.networks[0].device_mode, "NetDevice");
    assert_eq!(e.networks[1].name, "rdma-0");
    assert_eq!(e.networks[1].vpc, "a3ultra-rdma-net");
    assert_eq!(e.networks[1].subnet, "a3ultra-rdma-sub-0");
    assert_eq!(e.networks[1].device_mode, "RDMA");
    assert!(e.daemonsets.contains(&"nccl-rdma-installer".to_string()));
    assert!(!e.daemonsets.contains(&"device-injector".to_string()));
    let healthy = healthy(&bp);
    assert_eq!(failures(&bp, &healthy), vec![]);
    let names: Vec<String> = check(&e, &healthy).into_iter().map(|c| c.name).collect();
    assert!(names.contains(&"rdma/a3ultra".to_string()), "{names:?}");

    // A node that came up with only its two gVNICs, and one without the rdma-3 Network.
    let mut broken = healthy.clone();
    broken.nodes[1]["metadata"]["annotations"]["networking.gke.io/nic-info"] =
        json!(r#"[{"birthName":"eth0"},{"birthName":"eth1"}]"#);
    broken.nodes[2]["status"]["allocatable"]
        .as_object_mut()
        .unwrap()
        .remove("networking.gke.io.networks/rdma-3");
    let failed = failures(&bp, &broken);
    assert_eq!(failed.len(), 1, "{failed:?}");
    assert_eq!(failed[0].name, "rdma/a3ultra");
    assert_eq!(
        failed[0].message,
        "`gke-a3ultra-0` has 2 NIC(s) where A3 Ultra needs 10 (2 gVNIC + 8 RDMA); Network `rdma-3` is not offered on 1 node(s) (`gke-a3ultra-1`)"
    );
    // A GKENetworkParamSet switched to NetDevice mode is drift of that network.
    let mut netdev = healthy.clone();
    netdev.param_sets.as_mut().unwrap()[4]["spec"]["deviceMode"] = json!("NetDevice");
    let failed = failures(&bp, &netdev);
    assert_eq!(failed[0].name, "network/rdma-3");
    assert!(
        failed[0]
            .message
            .contains("deviceMode `NetDevice` instead of `RDMA`"),
        "{}",
        failed[0].message
    );
}

#[test]
fn a4_managed_checks_the_device_class_the_claim_template_and_each_nodes_devices() {
    let bp = shipped("a4.toml");
    let e = expected(&bp);
    assert!(e.networks.is_empty());
    assert_eq!(e.min_networks, 0);
    let healthy = healthy(&bp);
    assert_eq!(failures(&bp, &healthy), vec![]);

    let mut no_class = healthy.clone();
    no_class.dra.device_class = None;
    no_class.dra.claim_template = None;
    let failed: Vec<String> = failures(&bp, &no_class)
        .into_iter()
        .map(|c| c.name)
        .collect();
    assert_eq!(
        failed,
        [
            "rdma/deviceclass/mrdma.google.com",
            "rdma/resourceclaimtemplate/default/rdma-nics"
        ]
    );

    let mut unlabelled = healthy.clone();
    unlabelled.nodes[1]["metadata"]["labels"]
        .as_object_mut()
        .unwrap()
        .remove(crate::graph::build::DRA_DRIVER_LABEL);
    let failed = failures(&bp, &unlabelled);
    assert_eq!(failed.len(), 1);
    assert!(
        failed[0]
            .message
            .starts_with("1 node(s) lack `cloud.google.com/gke-networking-dra-driver=true`"),
        "{}",
        failed[0].message
    );

    let mut short = healthy.clone();
    short.dra.slices[0]["spec"]["devices"]
        .as_array_mut()
        .unwrap()
        .pop();
    let failed = failures(&bp, &short);
    assert_eq!(
        failed[0].message,
        "`gke-a4-0` publishes 7 RDMA device(s) where A4 needs 8 per node"
    );

    let mut old = healthy.clone();
    old.dra = DraSnapshot::default();
    let failed = failures(&bp, &old);
    assert_eq!(failed.len(), 1);
    assert!(
        failed[0]
            .message
            .contains("does not serve `resource.k8s.io/v1`")
    );
}

#[test]
fn the_gib_nccl_test_has_no_sidecar_and_claims_the_rdma_nics_in_managed_mode() {
    let ultra = shipped("a3-ultra.toml");
    let objects = nccl::objects(&ultra).unwrap();
    let pod = &objects[1]["spec"]["template"]["spec"];
    assert!(pod.get("initContainers").is_none());
    assert!(pod.get("resourceClaims").is_none());
    let test = &pod["containers"][0];
    assert_eq!(test["image"], nccl::GIB_TEST_IMAGE);
    let script = test["command"][2].as_str().unwrap();
    assert!(script.contains("source /usr/local/gib/scripts/set_nccl_env.sh"));
    assert!(script.contains("/usr/local/gib/scripts/run_nccl_tests.sh -t all_gather -b 1K -e 8G a3ctl-nccl-test-0.a3ctl-nccl-test a3ctl-nccl-test-1.a3ctl-nccl-test"));
    assert_eq!(
        pod["volumes"][1]["hostPath"]["path"],
        "/home/kubernetes/bin/gib"
    );
    let annotations = &objects[1]["spec"]["template"]["metadata"]["annotations"];
    assert!(
        annotations["networking.gke.io/interfaces"]
            .as_str()
            .unwrap()
            .contains(r#"{"interfaceName":"eth2","network":"rdma-0"}"#)
    );
    assert_eq!(
        objects[1]["metadata"]["labels"]["kueue.x-k8s.io/queue-name"],
        "a3-queue"
    );

    let a4 = shipped("a4.toml");
    let objects = nccl::objects(&a4).unwrap();
    let pod = &objects[1]["spec"]["template"]["spec"];
    assert_eq!(
        pod["resourceClaims"],
        json!([{"name": "rdma", "resourceClaimTemplateName": "rdma-nics"}])
    );
    assert_eq!(
        pod["containers"][0]["resources"]["claims"],
        json!([{"name": "rdma"}])
    );
    assert!(
        objects[1]["spec"]["template"]["metadata"]["annotations"]
            .get("networking.gke.io/interfaces")
            .is_none()
    );
    assert_eq!(nccl::floor(a4.family).0, 250.0);
}

/// The `kueue/flavor/<flavor>` check of `bp` on `snapshot`.
fn flavor_check(bp: &Blueprint, snapshot: &Snapshot, flavor: &str) -> Check {
    check(&expected(bp), snapshot)
        .into_iter()
        .find(|c| c.name == format!("kueue/flavor/{flavor}"))
        .expect("a check per GPU pool flavor")
}

fn kueue_objects(snapshot: &mut Snapshot) -> (&mut Vec<Value>, &mut Vec<Value>) {
    match &mut snapshot.kueue {
        KueueSnapshot::Served {
            cluster_queues,
            flavors,
            ..
        } => (cluster_queues, flavors),
        other => panic!("Kueue served, not {other:?}"),
    }
}

#[test]
fn a_flavors_quota_summed_over_every_cluster_queue_must_fit_its_nodes_gpus() {
    let bp = shipped("a3-high.toml");
    let mut snapshot = healthy(&bp);
    let ok = flavor_check(&bp, &snapshot, "a3high");
    assert_eq!(ok.status, Status::Pass, "{ok:?}");
    assert_eq!(
        ok.message,
        "ClusterQueue `a3-queue` (32) holds 32 of the 32 nvidia.com/gpu of 4 Ready, schedulable node(s)"
    );

    // A team's queue shares the flavor: 32 + 16 > 32.
    let (queues, _) = kueue_objects(&mut snapshot);
    let mut team = queues[0].clone();
    team["metadata"]["name"] = json!("team-b");
    team["spec"]["resourceGroups"][0]["flavors"][0]["resources"][0]["nominalQuota"] = json!("16");
    queues.push(team);
    let failed = flavor_check(&bp, &snapshot, "a3high");
    assert_eq!(failed.status, Status::Fail);
    assert_eq!(
        failed.message,
        "ClusterQueues `a3-queue` (32) and `team-b` (16) hold 48 nvidia.com/gpu of ResourceFlavor `a3high`, more than the 32 GPUs of its 4 Ready, schedulable node(s)"
    );
    let hint = failed.hint.unwrap();
    assert!(hint.contains("sum to at most 32"), "{hint}");
    assert!(hint.contains("`a3ctl apply bp.toml`"), "{hint}");
    // The other checks do not see it: a3ctl's own queue still has the blueprint's quota.
    assert_eq!(failures(&bp, &snapshot).len(), 1);
}

#[test]
fn nodes_lost_fail_the_flavor_and_nodes_that_cannot_run_its_pods_are_named_apart() {
    let bp = shipped("a3-high.toml");
    let healthy = healthy(&bp);
    let gpu_nodes: Vec<usize> = (0..healthy.nodes.len())
        .filter(|i| healthy.nodes[*i]["metadata"]["labels"][NODE_POOL_LABEL] == "a3high")
        .collect();
    assert_eq!(gpu_nodes.len(), 4);

    // Two nodes gone: 32 of quota on 16 GPUs.
    let mut lost = healthy.clone();
    lost.nodes.retain(|n| {
        !["gke-a3high-2", "gke-a3high-3"].contains(&n["metadata"]["name"].as_str().unwrap())
    });
    let failed = flavor_check(&bp, &lost, "a3high");
    assert_eq!(
        failed.message,
        "ClusterQueue `a3-queue` (32) holds 32 nvidia.com/gpu of ResourceFlavor `a3high`, more than the 16 GPUs of its 2 Ready, schedulable node(s)"
    );

    // One cordoned, one NotReady, one with a taint the flavor does not tolerate; the GPU taint
    // the flavor tolerates does not count against a node.
    let mut sick = healthy.clone();
    let taint = |key: &str, effect: &str| json!({"key": key, "value": "present", "effect": effect});
    sick.nodes[gpu_nodes[0]]["spec"] = json!({"unschedulable": true,
        "taints": [{"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}]});
    sick.nodes[gpu_nodes[1]]["status"]["conditions"][0]["status"] = json!("False");
    sick.nodes[gpu_nodes[2]]["spec"]["taints"] = json!([
        taint("nvidia.com/gpu", "NoSchedule"),
        taint("maintenance", "NoExecute")
    ]);
    sick.nodes[gpu_nodes[3]]["spec"]["taints"] = json!([taint("nvidia.com/gpu", "NoSchedule")]);
    let failed = flavor_check(&bp, &sick, "a3high");
    assert_eq!(
        failed.message,
        "ClusterQueue `a3-queue` (32) holds 32 nvidia.com/gpu of ResourceFlavor `a3high`, more than the 8 GPUs of its 1 Ready, schedulable node(s); not counted: 1 node NotReady (`gke-a3high-1`), 1 node cordoned (`gke-a3high-0`), 1 node tainted (`gke-a3high-2` maintenance=present:NoExecute)"
    );
    assert!(
        failed.hint.as_deref().unwrap().contains("uncordon"),
        "{failed:?}"
    );

    // With the quota lowered to what is left, it passes and still names them.
    let (queues, _) = kueue_objects(&mut sick);
    queues[0]["spec"]["resourceGroups"][0]["flavors"][0]["resources"][0]["nominalQuota"] = json!(8);
    let ok = flavor_check(&bp, &sick, "a3high");
    assert_eq!(ok.status, Status::Pass);
    assert!(ok.message.ends_with("; not counted: 1 node NotReady (`gke-a3high-1`), 1 node cordoned (`gke-a3high-0`), 1 node tainted (`gke-a3high-2` maintenance=present:NoExecute)"), "{}", ok.message);

    // A flavor deleted behind a3ctl's back.
    let mut gone = healthy.clone();
    kueue_objects(&mut gone).1.clear();
    let failed = flavor_check(&bp, &gone, "a3high");
    assert_eq!(
        failed.message,
        "ResourceFlavor `a3high` not found: no ClusterQueue can admit jobs to its nodes"
    );
}

#[test]
fn many_nodes_not_counted_are_named_up_to_three() {
    let bp = shipped("a3-mega.toml");
    let mut snapshot = healthy(&bp);
    for node in snapshot.nodes.iter_mut().skip(1).take(5) {
        node["status"]["conditions"][0]["status"] = json!("Unknown");
    }
    let failed = flavor_check(&bp, &snapshot, "a3mega");
    assert!(
        failed.message.ends_with(
            "more than the 216 GPUs of its 27 Ready, schedulable node(s); not counted: 5 nodes NotReady (`gke-a3mega-0`, `gke-a3mega-1`, `gke-a3mega-2` and 2 more)"
        ),
        "{}",
        failed.message
    );
}
