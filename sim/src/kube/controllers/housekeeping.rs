//! Cluster housekeeping: what GKE pre-creates, CRD conditions, namespace and CRD deletion,
//! per-namespace defaults (`default` ServiceAccount, `kube-root-ca.crt`), add-on objects
//! (Filestore and GCS FUSE CSI drivers), APIService availability, and PV/PVC binding.

use super::{Clock, Rollout, set_status};
use crate::kube::KubeCluster;
use crate::kube::admission::service_failure;
use crate::kube::controllers::nodes::parse_quantity;
use crate::kube::resources::from_crd;
use crate::kube::store::{object_key, split_key};
use serde_json::{Value, json};

/// Stores a new object with uid and creation time (cluster-internal creations).
pub fn create(
    cluster: &mut KubeCluster,
    clock: &Clock,
    group: &str,
    resource: &str,
    mut object: Value,
) {
    let namespace = object["metadata"]["namespace"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let name = object["metadata"]["name"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    if cluster
        .store
        .get(group, resource, &namespace, &name)
        .is_some()
    {
        return;
    }
    object["metadata"]["uid"] = json!(cluster.store.next_uid());
    object["metadata"]["creationTimestamp"] = json!(clock.ts(clock.now));
    let generation = !group.is_empty()
        && !matches!(
            group,
            "rbac.authorization.k8s.io" | "storage.k8s.io" | "scheduling.k8s.io"
        );
    if generation {
        object["metadata"]["generation"] = json!(1);
        let key = object_key(group, resource, &namespace, &name);
        cluster.store.generation_since.insert(key, (1, clock.now));
    }
    cluster
        .store
        .put(group, resource, &namespace, &name, object);
}

fn preserve_unknown_crd(group: &str, plural: &str, singular: &str, kind: &str) -> Value {
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": format!("{plural}.{group}"), "labels": {"addonmanager.kubernetes.io/mode": "Reconcile"}},
        "spec": {
            "group": group,
            "names": {"plural": plural, "singular": singular, "kind": kind, "listKind": format!("{kind}List")},
            "scope": "Cluster",
            "versions": [{
                "name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}},
                "subresources": {"status": {}},
            }],
        },
    })
}

/// The objects a new GKE cluster has before anyone applies anything.
pub fn seed(cluster: &mut KubeCluster, clock: &Clock) {
    for ns in ["default", "kube-system", "kube-public", "kube-node-lease"] {
        let mut object = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns,
            "labels": {"kubernetes.io/metadata.name": ns}}, "spec": {"finalizers": ["kubernetes"]}, "status": {"phase": "Active"}});
        if ns == "kube-system" {
            object["metadata"]["labels"]["addonmanager.kubernetes.io/mode"] = json!("Reconcile");
        }
        create(cluster, clock, "", "namespaces", object);
    }
    create(
        cluster,
        clock,
        "",
        "services",
        json!({"apiVersion": "v1", "kind": "Service",
        "metadata": {"name": "kubernetes", "namespace": "default", "labels": {"component": "apiserver", "provider": "kubernetes"}},
        "spec": {"clusterIP": "34.118.224.1", "clusterIPs": ["34.118.224.1"], "internalTrafficPolicy": "Cluster",
            "ipFamilies": ["IPv4"], "ipFamilyPolicy": "SingleStack",
            "ports": [{"name": "https", "port": 443, "protocol": "TCP", "targetPort": 443}],
            "sessionAffinity": "None", "type": "ClusterIP"},
        "status": {"loadBalancer": {}}}),
    );
    let reconcile = json!({"addonmanager.kubernetes.io/mode": "EnsureExists"});
    for (name, disk, default) in [
        ("standard-rwo", "pd-balanced", true),
        ("premium-rwo", "pd-ssd", false),
    ] {
        let mut sc = json!({"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
            "metadata": {"name": name, "labels": reconcile.clone()},
            "provisioner": "pd.csi.storage.gke.io", "parameters": {"type": disk},
            "reclaimPolicy": "Delete", "volumeBindingMode": "WaitForFirstConsumer", "allowVolumeExpansion": true});
        if default {
            sc["metadata"]["annotations"] =
                json!({"storageclass.kubernetes.io/is-default-class": "true"});
        }
        create(cluster, clock, "storage.k8s.io", "storageclasses", sc);
    }
    create(
        cluster,
        clock,
        "storage.k8s.io",
        "storageclasses",
        json!({"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
        "metadata": {"name": "standard", "labels": reconcile.clone()}, "provisioner": "kubernetes.io/gce-pd",
        "parameters": {"type": "pd-standard"}, "reclaimPolicy": "Delete", "volumeBindingMode": "Immediate", "allowVolumeExpansion": true}),
    );
    create(
        cluster,
        clock,
        "storage.k8s.io",
        "csidrivers",
        json!({"apiVersion": "storage.k8s.io/v1", "kind": "CSIDriver",
        "metadata": {"name": "pd.csi.storage.gke.io", "labels": {"addonmanager.kubernetes.io/mode": "Reconcile"}},
        "spec": {"attachRequired": true, "podInfoOnMount": false, "fsGroupPolicy": "ReadWriteOnceWithFSType",
            "requiresRepublish": false, "seLinuxMount": false, "storageCapacity": false, "volumeLifecycleModes": ["Persistent"]}}),
    );
    for (name, value) in [
        ("system-node-critical", 2_000_001_000i64),
        ("system-cluster-critical", 2_000_000_000),
    ] {
        let description = if name == "system-node-critical" {
            "Used for system critical pods that must not be moved from their current node."
        } else {
            "Used for system critical pods that must run in the cluster, but can be moved to another node if necessary."
        };
        create(
            cluster,
            clock,
            "scheduling.k8s.io",
            "priorityclasses",
            json!({"apiVersion": "scheduling.k8s.io/v1",
            "kind": "PriorityClass", "metadata": {"name": name}, "value": value, "globalDefault": false,
            "description": description, "preemptionPolicy": "PreemptLowerPriority"}),
        );
    }
    if cluster.multi_networking {
        for (plural, singular, kind) in [
            ("networks", "network", "Network"),
            (
                "gkenetworkparamsets",
                "gkenetworkparamset",
                "GKENetworkParamSet",
            ),
        ] {
            create(
                cluster,
                clock,
                "apiextensions.k8s.io",
                "customresourcedefinitions",
                preserve_unknown_crd("networking.gke.io", plural, singular, kind),
            );
            // Installed with the cluster: established from the start.
            let key = object_key(
                "apiextensions.k8s.io",
                "customresourcedefinitions",
                "",
                &format!("{plural}.networking.gke.io"),
            );
            cluster.controllers.delays.insert(
                key,
                Rollout {
                    generation: 1,
                    since: clock.now,
                    delay_ms: 0,
                },
            );
        }
        crds(cluster, clock);
        create(
            cluster,
            clock,
            "networking.gke.io",
            "networks",
            json!({"apiVersion": "networking.gke.io/v1",
            "kind": "Network", "metadata": {"name": "default"}, "spec": {"type": "L3"},
            "status": {"conditions": [{"type": "Ready", "status": "True", "reason": "DefaultNetworkReady",
                "message": "", "lastTransitionTime": clock.ts(clock.now)}]}}),
        );
    }
}

/// Completes deletions: terminating namespaces lose their objects, terminating CRDs their custom
/// resources, then both go once no finalizer is left.
pub fn finish_deletions(cluster: &mut KubeCluster) {
    let terminating: Vec<String> = cluster
        .store
        .objects
        .iter()
        .filter(|(_, o)| o["metadata"].get("deletionTimestamp").is_some())
        .map(|(k, _)| k.clone())
        .collect();
    for key in terminating {
        let Some((group, resource, namespace, name)) = split_key(&key) else {
            continue;
        };
        let (group, resource, namespace, name) = (
            group.to_string(),
            resource.to_string(),
            namespace.to_string(),
            name.to_string(),
        );
        if group.is_empty() && resource == "namespaces" {
            let contents: Vec<String> = cluster
                .store
                .objects
                .keys()
                .filter(|k| {
                    split_key(k)
                        .is_some_and(|p| p.2 == name && !(p.0.is_empty() && p.1 == "namespaces"))
                })
                .cloned()
                .collect();
            for content in contents {
                if let Some((g, r, n, o)) = split_key(&content) {
                    let (g, r, n, o) = (g.to_string(), r.to_string(), n.to_string(), o.to_string());
                    cluster.store.remove(&g, &r, &n, &o);
                }
            }
        }
        if group == "apiextensions.k8s.io"
            && resource == "customresourcedefinitions"
            && let Some(crd) = cluster.store.objects.get(&key)
        {
            let types = from_crd(crd);
            if let Some(rt) = types.first() {
                for content in cluster.store.keys(&rt.group, &rt.plural) {
                    if let Some((g, r, n, o)) = split_key(&content) {
                        let (g, r, n, o) =
                            (g.to_string(), r.to_string(), n.to_string(), o.to_string());
                        cluster.store.remove(&g, &r, &n, &o);
                    }
                }
            }
        }
        let finalizers_left = cluster.store.objects.get(&key).is_some_and(|o| {
            let system = ["customresourcecleanup.apiextensions.k8s.io", "kubernetes"];
            o["metadata"]["finalizers"]
                .as_array()
                .is_some_and(|f| f.iter().any(|x| !system.iter().any(|s| x == s)))
        });
        if !finalizers_left {
            cluster.store.remove(&group, &resource, &namespace, &name);
        }
    }
}

/// CRD status: names accepted at once, Established after `kube.crd.established`.
pub fn crds(cluster: &mut KubeCluster, clock: &Clock) {
    for key in cluster
        .store
        .keys("apiextensions.k8s.io", "customresourcedefinitions")
    {
        let Some(crd) = cluster.store.objects.get(&key) else {
            continue;
        };
        if crd["metadata"].get("deletionTimestamp").is_some() {
            continue;
        }
        let created = crd["metadata"]["creationTimestamp"].clone();
        let mut names = crd["spec"]["names"].clone();
        let kind = names["kind"].as_str().unwrap_or_default().to_string();
        if names.get("singular").is_none() {
            names["singular"] = json!(kind.to_lowercase());
        }
        if names.get("listKind").is_none() {
            names["listKind"] = json!(format!("{kind}List"));
        }
        let storage: Vec<Value> = crd["spec"]["versions"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|v| v["storage"] == true)
            .map(|v| v["name"].clone())
            .collect();
        let mut stored = crd["status"]["storedVersions"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        for version in storage {
            if !stored.contains(&version) {
                stored.push(version);
            }
        }
        let established_at = cluster
            .controllers
            .delays
            .get(&key)
            .map(|r| r.since.plus_ms(r.delay_ms))
            .filter(|t| *t <= clock.now);
        let established = match established_at {
            Some(t) => {
                json!({"type": "Established", "status": "True", "reason": "InitialNamesAccepted",
                "message": "the initial names have been accepted", "lastTransitionTime": clock.ts(t)})
            }
            None => json!({"type": "Established", "status": "False", "reason": "Installing",
                "message": "the initial names have been accepted", "lastTransitionTime": created}),
        };
        let status = json!({
            "acceptedNames": names,
            "conditions": [
                {"type": "NamesAccepted", "status": "True", "reason": "NoConflicts",
                 "message": "no conflicts found", "lastTransitionTime": created},
                established,
            ],
            "storedVersions": stored,
        });
        set_status(&mut cluster.store, &key, status);
    }
}

/// Every active namespace gets its `default` ServiceAccount and `kube-root-ca.crt` ConfigMap.
pub fn namespaces(cluster: &mut KubeCluster, clock: &Clock) {
    let active: Vec<String> = cluster
        .store
        .list("", "namespaces", None)
        .into_iter()
        .filter(|n| n["metadata"].get("deletionTimestamp").is_none())
        .filter_map(|n| n["metadata"]["name"].as_str().map(String::from))
        .collect();
    let ca = cluster.certs.ca_cert_pem.clone();
    for ns in active {
        create(
            cluster,
            clock,
            "",
            "serviceaccounts",
            json!({"apiVersion": "v1", "kind": "ServiceAccount",
            "metadata": {"name": "default", "namespace": ns}}),
        );
        create(
            cluster,
            clock,
            "",
            "configmaps",
            json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "kube-root-ca.crt", "namespace": ns,
                "annotations": {"kubernetes.io/description": "Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints such as the internal service IP or kubernetes.default.svc. No other usage is guaranteed across distributions of Kubernetes clusters."}},
            "data": {"ca.crt": ca}}),
        );
    }
}

/// The CSI drivers and StorageClasses of enabled add-ons (removed when the add-on is disabled).
pub fn addons(cluster: &mut KubeCluster, clock: &Clock) {
    let label = json!({"addonmanager.kubernetes.io/mode": "Reconcile", "k8s-app": "gcp-compute-persistent-disk-csi-driver"});
    let filestore_classes = [
        ("standard-rwx", "BASIC_HDD"),
        ("premium-rwx", "BASIC_SSD"),
        ("enterprise-rwx", "ENTERPRISE"),
    ];
    let wanted = [
        (cluster.addons.filestore_csi, "filestore.csi.storage.gke.io"),
        (cluster.addons.gcs_fuse_csi, "gcsfuse.csi.storage.gke.io"),
    ];
    for (enabled, driver) in wanted {
        if enabled {
            let mut spec = json!({"attachRequired": false, "podInfoOnMount": driver.starts_with("gcsfuse"),
                "fsGroupPolicy": "ReadWriteOnceWithFSType", "requiresRepublish": driver.starts_with("gcsfuse"),
                "seLinuxMount": false, "storageCapacity": false, "volumeLifecycleModes": ["Persistent"]});
            if driver.starts_with("gcsfuse") {
                spec["volumeLifecycleModes"] = json!(["Persistent", "Ephemeral"]);
                spec["tokenRequests"] =
                    json!([{"audience": cluster.project.clone() + ".svc.id.goog"}]);
            }
            create(
                cluster,
                clock,
                "storage.k8s.io",
                "csidrivers",
                json!({"apiVersion": "storage.k8s.io/v1",
                "kind": "CSIDriver", "metadata": {"name": driver, "labels": label.clone()}, "spec": spec}),
            );
        } else if cluster
            .store
            .get("storage.k8s.io", "csidrivers", "", driver)
            .is_some()
        {
            cluster
                .store
                .remove("storage.k8s.io", "csidrivers", "", driver);
        }
    }
    for (name, tier) in filestore_classes {
        if cluster.addons.filestore_csi {
            create(
                cluster,
                clock,
                "storage.k8s.io",
                "storageclasses",
                json!({"apiVersion": "storage.k8s.io/v1",
                "kind": "StorageClass", "metadata": {"name": name, "labels": label.clone()},
                "provisioner": "filestore.csi.storage.gke.io", "parameters": {"tier": tier, "network": "default"},
                "reclaimPolicy": "Delete", "volumeBindingMode": "WaitForFirstConsumer", "allowVolumeExpansion": true}),
            );
        } else if cluster
            .store
            .get("storage.k8s.io", "storageclasses", "", name)
            .is_some_and(|sc| sc["provisioner"] == "filestore.csi.storage.gke.io")
        {
            cluster
                .store
                .remove("storage.k8s.io", "storageclasses", "", name);
        }
    }
}

/// APIService `Available` condition: local ones always, service-backed ones once the service
/// answers.
pub fn api_services(cluster: &mut KubeCluster, clock: &Clock) {
    for key in cluster.store.keys("apiregistration.k8s.io", "apiservices") {
        let Some(api) = cluster.store.objects.get(&key) else {
            continue;
        };
        let created = api["metadata"]["creationTimestamp"].clone();
        let service = &api["spec"]["service"];
        let condition = if service.is_null() {
            json!({"type": "Available", "status": "True", "reason": "Local",
                "message": "Local APIServices are always available", "lastTransitionTime": created})
        } else {
            let ns = service["namespace"].as_str().unwrap_or_default();
            let name = service["name"].as_str().unwrap_or_default();
            match service_failure(cluster, ns, name, clock.now) {
                None => json!({"type": "Available", "status": "True", "reason": "Passed",
                    "message": "all checks passed", "lastTransitionTime": created}),
                Some(_) => {
                    json!({"type": "Available", "status": "False", "reason": "MissingEndpoints",
                    "message": format!("endpoints for service/{name} in \"{ns}\" have no addresses with port name \"https\""),
                    "lastTransitionTime": created})
                }
            }
        };
        set_status(&mut cluster.store, &key, json!({"conditions": [condition]}));
    }
}

/// Whether an APIService (by group/version) is served: `None` if there is none.
pub fn api_service_available(cluster: &KubeCluster, group: &str, version: &str) -> Option<bool> {
    let api = cluster.store.get(
        "apiregistration.k8s.io",
        "apiservices",
        "",
        &format!("{version}.{group}"),
    )?;
    Some(
        api["status"]["conditions"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|c| c["type"] == "Available" && c["status"] == "True"),
    )
}

fn quantity(value: &Value) -> f64 {
    value
        .as_str()
        .and_then(parse_quantity)
        .or_else(|| value.as_f64())
        .unwrap_or(0.0)
}

/// Binds pending claims to volumes (by `volumeName`, or by class, size and access modes) and
/// releases volumes whose claim is gone.
pub fn volumes(cluster: &mut KubeCluster, clock: &Clock) {
    let _ = clock;
    for pv_key in cluster.store.keys("", "persistentvolumes") {
        let Some(pv) = cluster.store.objects.get(&pv_key) else {
            continue;
        };
        if pv["status"]["phase"] != "Bound" {
            continue;
        }
        let claim = &pv["spec"]["claimRef"];
        let ns = claim["namespace"].as_str().unwrap_or_default();
        let name = claim["name"].as_str().unwrap_or_default();
        if cluster
            .store
            .get("", "persistentvolumeclaims", ns, name)
            .is_none()
        {
            let mut status = pv["status"].clone();
            status["phase"] = json!("Released");
            set_status(&mut cluster.store, &pv_key, status);
        }
    }
    for pvc_key in cluster.store.keys("", "persistentvolumeclaims") {
        let Some(pvc) = cluster.store.objects.get(&pvc_key).cloned() else {
            continue;
        };
        if pvc["status"]["phase"] == "Bound" {
            continue;
        }
        let ns = pvc["metadata"]["namespace"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        let claim_name = pvc["metadata"]["name"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        let class = pvc["spec"]["storageClassName"].as_str().unwrap_or_default();
        let wanted = quantity(&pvc["spec"]["resources"]["requests"]["storage"]);
        let modes: Vec<Value> = pvc["spec"]["accessModes"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let by_name = pvc["spec"]["volumeName"].as_str().map(String::from);
        let fits = |pv: &Value| {
            let claimed = &pv["spec"]["claimRef"];
            let free = claimed.is_null()
                || (claimed["namespace"] == ns.as_str() && claimed["name"] == claim_name.as_str());
            let phase_ok = pv["status"]["phase"] == "Available" || pv["status"]["phase"].is_null();
            free && phase_ok
        };
        let candidate = match &by_name {
            Some(name) => cluster
                .store
                .get("", "persistentvolumes", "", name)
                .filter(|pv| fits(pv))
                .cloned(),
            None => cluster
                .store
                .list("", "persistentvolumes", None)
                .into_iter()
                .filter(|pv| fits(pv))
                .filter(|pv| pv["spec"]["storageClassName"].as_str().unwrap_or_default() == class)
                .filter(|pv| quantity(&pv["spec"]["capacity"]["storage"]) >= wanted)
                .filter(|pv| {
                    let have = pv["spec"]["accessModes"]
                        .as_array()
                        .cloned()
                        .unwrap_or_default();
                    modes.iter().all(|m| have.contains(m))
                })
                .min_by(|a, b| {
                    quantity(&a["spec"]["capacity"]["storage"])
                        .total_cmp(&quantity(&b["spec"]["capacity"]["storage"]))
                })
                .cloned(),
        };
        let Some(mut pv) = candidate else { continue };
        let pv_name = pv["metadata"]["name"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        pv["spec"]["claimRef"] = json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
            "namespace": ns, "name": claim_name, "uid": pvc["metadata"]["uid"],
            "resourceVersion": pvc["metadata"]["resourceVersion"]});
        pv["status"] = json!({"phase": "Bound", "lastPhaseTransitionTime": clock.ts(clock.now)});
        cluster
            .store
            .put("", "persistentvolumes", "", &pv_name, pv.clone());
        let mut bound = pvc.clone();
        bound["spec"]["volumeName"] = json!(pv_name);
        bound["metadata"]["annotations"]["pv.kubernetes.io/bind-completed"] = json!("yes");
        if by_name.is_none() {
            bound["metadata"]["annotations"]["pv.kubernetes.io/bound-by-controller"] = json!("yes");
        }
        bound["status"] = json!({"phase": "Bound", "accessModes": pv["spec"]["accessModes"],
            "capacity": pv["spec"]["capacity"]});
        cluster
            .store
            .put("", "persistentvolumeclaims", &ns, &claim_name, bound);
    }
}
