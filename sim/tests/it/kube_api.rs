//! The Kubernetes API server over plain HTTPS (reqwest): exact Status bodies, server-side apply
//! conflicts, force and field removal, optimistic concurrency, generations, namespaces, CRDs in
//! discovery, multi-network objects, PV/PVC binding, add-on objects, and watches.

use crate::kube_support;

use kube_support::{latency, node, start};
use serde_json::{Value, json};

async fn send(
    request: reqwest::RequestBuilder,
    content_type: &str,
    body: Option<Value>,
) -> (u16, Value) {
    let mut request = request.bearer_auth("t");
    if let Some(body) = body {
        request = request
            .header("Content-Type", content_type)
            .body(body.to_string());
    }
    let response = request.send().await.unwrap();
    let code = response.status().as_u16();
    let text = response.text().await.unwrap();
    (
        code,
        serde_json::from_str(&text).unwrap_or(Value::String(text)),
    )
}

const APPLY: &str = "application/apply-patch+yaml";
const JSON: &str = "application/json";

#[tokio::test]
async fn status_bodies_server_side_apply_and_concurrency() {
    let cluster = start(latency(&[]), false).await;
    let http = cluster.http();
    let cm = |path: &str| cluster.url(&format!("/api/v1/namespaces/default/configmaps{path}"));

    // A namespaced object in a missing namespace.
    let (code, body) = send(
        http.post(cluster.url("/api/v1/namespaces/nope/configmaps")),
        JSON,
        Some(json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}})),
    )
    .await;
    assert_eq!(code, 404);
    assert_eq!(
        body,
        json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": "namespaces \"nope\" not found", "reason": "NotFound",
            "details": {"name": "nope", "kind": "namespaces"}, "code": 404})
    );

    // Server-side apply creates, then a second manager conflicts on a field it sets differently.
    let config = |data: Value| json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": data});
    let (code, created) = send(
        http.patch(cm("/c?fieldManager=a")),
        APPLY,
        Some(config(json!({"x": "1", "y": "2"}))),
    )
    .await;
    assert_eq!(code, 201, "{created}");
    assert_eq!(created["metadata"]["managedFields"][0]["manager"], "a");
    assert_eq!(
        created["metadata"]["managedFields"][0]["operation"],
        "Apply"
    );
    assert_eq!(
        created["metadata"]["managedFields"][0]["fieldsV1"],
        json!({"f:data": {"f:x": {}, "f:y": {}}})
    );
    assert!(created["metadata"]["uid"].as_str().unwrap().len() == 36);
    let (code, body) = send(
        http.patch(cm("/c?fieldManager=b")),
        APPLY,
        Some(config(json!({"x": "9"}))),
    )
    .await;
    assert_eq!(code, 409);
    assert_eq!(body["reason"], "Conflict");
    assert_eq!(
        body["message"],
        "Apply failed with 1 conflict: conflict with \"a\": .data.x"
    );
    assert_eq!(
        body["details"]["causes"],
        json!([{"reason": "FieldManagerConflict", "message": "conflict with \"a\"", "field": ".data.x"}])
    );
    // kube-rs sends `?&force=true&fieldManager=...`.
    let (code, forced) = send(
        http.patch(cm("/c?&force=true&fieldManager=b")),
        APPLY,
        Some(config(json!({"x": "9"}))),
    )
    .await;
    assert_eq!(code, 200, "{forced}");
    assert_eq!(forced["data"], json!({"x": "9", "y": "2"}));
    // `a` stops applying y (it alone owns it): removed; x now belongs to b and stays.
    let (code, after) = send(
        http.patch(cm("/c?fieldManager=a")),
        APPLY,
        Some(config(json!({"z": "3"}))),
    )
    .await;
    assert_eq!(code, 200);
    assert_eq!(after["data"], json!({"x": "9", "z": "3"}));

    let (code, body) = send(http.patch(cm("/c")), APPLY, Some(config(json!({})))).await;
    assert_eq!(code, 422);
    assert_eq!(
        body["message"],
        "PatchOptions.meta.k8s.io \"\" is invalid: fieldManager: Required value: is required for apply patch"
    );

    // Create twice, stale update, invalid name, unknown object.
    let (code, body) = send(http.post(cm("")), JSON, Some(config(json!({})))).await;
    assert_eq!(
        (code, body["reason"].as_str()),
        (409, Some("AlreadyExists"))
    );
    assert_eq!(body["message"], "configmaps \"c\" already exists");
    let mut stale = after.clone();
    stale["metadata"]["resourceVersion"] = json!("1");
    let (code, body) = send(http.put(cm("/c")), JSON, Some(stale)).await;
    assert_eq!(code, 409);
    assert_eq!(
        body["message"],
        "Operation cannot be fulfilled on configmaps \"c\": the object has been modified; please apply your changes to the latest version and try again"
    );
    let (code, body) = send(
        http.post(cm("")),
        JSON,
        Some(json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "Bad_Name"}})),
    )
    .await;
    assert_eq!((code, body["reason"].as_str()), (422, Some("Invalid")));
    assert!(body["message"]
        .as_str()
        .unwrap()
        .starts_with("ConfigMap \"Bad_Name\" is invalid: metadata.name: Invalid value: \"Bad_Name\": a lowercase RFC 1123 subdomain"));
    let (code, body) = send(http.get(cm("/zz")), JSON, None).await;
    assert_eq!(code, 404);
    assert_eq!(body["message"], "configmaps \"zz\" not found");

    // A dry run does not persist.
    let (code, _) = send(
        http.post(cm("?dryRun=All")),
        JSON,
        Some(json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "dry"}})),
    )
    .await;
    assert_eq!(code, 201);
    assert_eq!(send(http.get(cm("/dry")), JSON, None).await.0, 404);

    // Generation moves with the spec only.
    let deployment = |replicas: i64, label: &str| {
        json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "web", "namespace": "default", "labels": {"v": label}},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": "web"}},
                "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "web", "image": "nginx"}]}}}})
    };
    let url = cluster.url("/apis/apps/v1/namespaces/default/deployments/web?fieldManager=t");
    let (_, d) = send(http.patch(&url), APPLY, Some(deployment(1, "a"))).await;
    assert_eq!(d["metadata"]["generation"], 1);
    let (_, d) = send(http.patch(&url), APPLY, Some(deployment(1, "b"))).await;
    assert_eq!(d["metadata"]["generation"], 1);
    let (_, d) = send(http.patch(&url), APPLY, Some(deployment(2, "b"))).await;
    assert_eq!(d["metadata"]["generation"], 2);

    // Deleting: a success Status; namespaces take their objects with them.
    let (code, body) = send(http.delete(cm("/c")), JSON, None).await;
    assert_eq!(code, 200);
    assert_eq!(body["status"], "Success");
    assert_eq!(body["details"]["name"], "c");
    let (code, body) = send(
        http.delete(cluster.url("/api/v1/namespaces/default")),
        JSON,
        None,
    )
    .await;
    assert_eq!(code, 403);
    assert_eq!(
        body["message"],
        "namespaces \"default\" is forbidden: this namespace may not be deleted"
    );
    let ns = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team"}});
    assert_eq!(
        send(http.post(cluster.url("/api/v1/namespaces")), JSON, Some(ns))
            .await
            .0,
        201
    );
    let team_cm = cluster.url("/api/v1/namespaces/team/configmaps");
    let (code, _) = send(
        http.post(&team_cm),
        JSON,
        Some(json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "k"}})),
    )
    .await;
    assert_eq!(code, 201);
    let (code, body) = send(
        http.delete(cluster.url("/api/v1/namespaces/team")),
        JSON,
        None,
    )
    .await;
    assert_eq!(code, 200);
    assert_eq!(body["status"]["phase"], "Terminating");
    assert_eq!(
        send(http.get(cluster.url("/api/v1/namespaces/team")), JSON, None)
            .await
            .0,
        404
    );
    let (_, list) = send(http.get(cluster.url("/api/v1/configmaps")), JSON, None).await;
    assert_eq!(list["kind"], "ConfigMapList");
    assert!(
        list["items"]
            .as_array()
            .unwrap()
            .iter()
            .all(|i| i["metadata"]["namespace"] != "team")
    );
}

#[tokio::test]
async fn crds_appear_in_discovery_once_established_and_multi_network_objects_exist() {
    let cluster = start(latency(&[("kube.crd.established", 2.0)]), true).await;
    let http = cluster.http();
    let crd = json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {"group": "example.com", "scope": "Namespaced",
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "shortNames": ["wd"]},
            "versions": [{"name": "v1", "served": true, "storage": true, "subresources": {"status": {}},
                "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}]}});
    let (code, _) = send(
        http.patch(cluster.url("/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.example.com?fieldManager=t")),
        APPLY,
        Some(crd),
    )
    .await;
    assert_eq!(code, 201);
    let (code, body) = send(http.get(cluster.url("/apis/example.com/v1")), JSON, None).await;
    assert_eq!(code, 404);
    assert_eq!(
        body["message"],
        "the server could not find the requested resource"
    );

    cluster.sim.advance_secs(2.0);
    let (code, list) = send(http.get(cluster.url("/apis/example.com/v1")), JSON, None).await;
    assert_eq!(code, 200);
    assert_eq!(list["kind"], "APIResourceList");
    assert_eq!(list["resources"][0]["name"], "widgets");
    assert_eq!(list["resources"][0]["shortNames"], json!(["wd"]));
    assert_eq!(list["resources"][1]["name"], "widgets/status");
    let (_, crd) = send(
        http.get(
            cluster
                .url("/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.example.com"),
        ),
        JSON,
        None,
    )
    .await;
    let conditions = crd["status"]["conditions"].as_array().unwrap();
    assert!(
        conditions
            .iter()
            .any(|c| c["type"] == "Established" && c["status"] == "True")
    );
    assert!(
        conditions
            .iter()
            .any(|c| c["type"] == "NamesAccepted" && c["status"] == "True")
    );

    // Aggregated discovery, as kubectl and kube-rs ask for it.
    let response = http
        .get(cluster.url("/apis"))
        .bearer_auth("t")
        .header(
            "Accept",
            "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json",
        )
        .send()
        .await
        .unwrap();
    assert_eq!(
        response.headers()["content-type"],
        "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
    );
    let aggregated: Value = response.json().await.unwrap();
    let group = aggregated["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["metadata"]["name"] == "example.com")
        .unwrap();
    assert_eq!(group["versions"][0]["resources"][0]["resource"], "widgets");
    assert_eq!(group["versions"][0]["resources"][0]["scope"], "Namespaced");

    // Custom resources: CRUD, then the CRD's deletion takes them along.
    let widgets = cluster.url("/apis/example.com/v1/namespaces/default/widgets");
    let (code, w) = send(
        http.post(&widgets),
        JSON,
        Some(json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w1"}, "spec": {"size": 3}})),
    )
    .await;
    assert_eq!(code, 201, "{w}");
    assert_eq!(w["metadata"]["generation"], 1);
    send(
        http.delete(
            cluster
                .url("/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.example.com"),
        ),
        JSON,
        None,
    )
    .await;
    assert_eq!(
        send(http.get(format!("{widgets}/w1")), JSON, None).await.0,
        404
    );

    // GKE's multi-networking objects.
    let (code, networks) = send(
        http.get(cluster.url("/apis/networking.gke.io/v1/networks")),
        JSON,
        None,
    )
    .await;
    assert_eq!(code, 200);
    assert_eq!(networks["items"][0]["metadata"]["name"], "default");
    let (code, _) = send(
        http.patch(cluster.url("/apis/networking.gke.io/v1/gkenetworkparamsets/vpc1?fieldManager=t")),
        APPLY,
        Some(json!({"apiVersion": "networking.gke.io/v1", "kind": "GKENetworkParamSet", "metadata": {"name": "vpc1"},
            "spec": {"vpc": "c1-gpu-1", "vpcSubnet": "c1-gpu-1-sub", "deviceMode": "NetDevice"}})),
    )
    .await;
    assert_eq!(code, 201);
}

#[tokio::test]
async fn volumes_bind_and_addons_install_their_objects() {
    let cluster = start(latency(&[]), false).await;
    let http = cluster.http();
    let (_, classes) = send(
        http.get(cluster.url("/apis/storage.k8s.io/v1/storageclasses")),
        JSON,
        None,
    )
    .await;
    let names: Vec<&str> = classes["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["metadata"]["name"].as_str().unwrap())
        .collect();
    assert!(
        names.contains(&"standard-rwo") && names.contains(&"premium-rwo"),
        "{names:?}"
    );
    assert!(!names.contains(&"standard-rwx"));

    cluster.sim.shared.with_world(|w, _| {
        w.kube.set_addons(
            kube_support::KEY,
            a3ctl_sim::kube::Addons {
                filestore_csi: true,
                gcs_fuse_csi: true,
                ..Default::default()
            },
        )
    });
    let (_, drivers) = send(
        http.get(cluster.url("/apis/storage.k8s.io/v1/csidrivers")),
        JSON,
        None,
    )
    .await;
    let drivers: Vec<&str> = drivers["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["metadata"]["name"].as_str().unwrap())
        .collect();
    assert!(
        drivers.contains(&"filestore.csi.storage.gke.io")
            && drivers.contains(&"gcsfuse.csi.storage.gke.io")
    );
    let (code, _) = send(
        http.get(cluster.url("/apis/storage.k8s.io/v1/storageclasses/enterprise-rwx")),
        JSON,
        None,
    )
    .await;
    assert_eq!(code, 200);

    let pv = json!({"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "filestore-pv"},
        "spec": {"capacity": {"storage": "1Ti"}, "accessModes": ["ReadWriteMany"], "storageClassName": "",
            "csi": {"driver": "filestore.csi.storage.gke.io", "volumeHandle": "modeInstance/us-central1-a/fs/share"}}});
    assert_eq!(
        send(
            http.post(cluster.url("/api/v1/persistentvolumes")),
            JSON,
            Some(pv)
        )
        .await
        .0,
        201
    );
    let pvc = json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "shared"},
        "spec": {"accessModes": ["ReadWriteMany"], "storageClassName": "", "volumeName": "filestore-pv",
            "resources": {"requests": {"storage": "1Ti"}}}});
    let claims = cluster.url("/api/v1/namespaces/default/persistentvolumeclaims");
    assert_eq!(send(http.post(&claims), JSON, Some(pvc)).await.0, 201);
    let (_, claim) = send(http.get(format!("{claims}/shared")), JSON, None).await;
    assert_eq!(claim["status"]["phase"], "Bound");
    assert_eq!(claim["status"]["capacity"]["storage"], "1Ti");
    let (_, volume) = send(
        http.get(cluster.url("/api/v1/persistentvolumes/filestore-pv")),
        JSON,
        None,
    )
    .await;
    assert_eq!(volume["status"]["phase"], "Bound");
    assert_eq!(volume["spec"]["claimRef"]["name"], "shared");

    // A claim on the default dynamic class waits for its first consumer.
    let dynamic = json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "scratch"},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "10Gi"}}}});
    let (_, claim) = send(http.post(&claims), JSON, Some(dynamic)).await;
    assert_eq!(claim["spec"]["storageClassName"], "standard-rwo");
    assert_eq!(claim["status"]["phase"], "Pending");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watches_deliver_status_changes_made_by_the_controllers() {
    let cluster = start(latency(&[("kube.deployment.available", 30.0)]), false).await;
    cluster.set_pool("default-pool", vec![node("n-0", "default-pool", 0, false)]);
    let http = cluster.http();
    let deployment = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
        "spec": {"selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "web", "image": "nginx"}]}}}});
    let deployments = cluster.url("/apis/apps/v1/namespaces/default/deployments");
    let (_, created) = send(http.post(&deployments), JSON, Some(deployment)).await;
    let rv = created["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .to_string();
    let response = http
        .get(format!("{deployments}?watch=true&fieldSelector=metadata.name%3Dweb&resourceVersion={rv}&allowWatchBookmarks=true"))
        .bearer_auth("t")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let mut response = response;
    cluster.sim.advance_secs(31.0);
    let mut buffer = String::new();
    let available = tokio::time::timeout(std::time::Duration::from_secs(10), async {
        while let Some(chunk) = response.chunk().await.unwrap() {
            buffer.push_str(&String::from_utf8_lossy(&chunk));
            for line in buffer.lines() {
                let Ok(event) = serde_json::from_str::<Value>(line) else {
                    continue;
                };
                if event["type"] == "MODIFIED"
                    && event["object"]["status"]["availableReplicas"] == 1
                {
                    return event;
                }
            }
        }
        panic!("watch ended: {buffer}");
    })
    .await
    .expect("a MODIFIED event with the Deployment available");
    let conditions = available["object"]["status"]["conditions"]
        .as_array()
        .unwrap();
    assert!(
        conditions
            .iter()
            .any(|c| c["type"] == "Progressing" && c["reason"] == "NewReplicaSetAvailable")
    );
}

#[tokio::test]
async fn webhooks_fail_closed_unless_ignored_and_status_is_a_subresource() {
    let cluster = start(latency(&[]), false).await;
    let http = cluster.http();
    let webhook = |name: &str, policy: &str, selector: Value| {
        json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingWebhookConfiguration",
            "metadata": {"name": name},
            "webhooks": [{"name": format!("{name}.example.com"), "admissionReviewVersions": ["v1"], "sideEffects": "None",
                "failurePolicy": policy, "objectSelector": selector,
                "clientConfig": {"service": {"name": "hooks", "namespace": "default", "path": "/validate"}},
                "rules": [{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["configmaps"]}]}]})
    };
    let hooks =
        cluster.url("/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations");
    let (code, stored) = send(
        http.post(&hooks),
        JSON,
        Some(webhook(
            "strict",
            "Fail",
            json!({"matchLabels": {"guarded": "yes"}}),
        )),
    )
    .await;
    assert_eq!(code, 201);
    assert_eq!(stored["webhooks"][0]["timeoutSeconds"], 10);
    send(
        http.post(&hooks),
        JSON,
        Some(webhook("lenient", "Ignore", json!({}))),
    )
    .await;

    let configmaps = cluster.url("/api/v1/namespaces/default/configmaps");
    let cm = |name: &str, guarded: bool| {
        let mut object =
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}});
        if guarded {
            object["metadata"]["labels"] = json!({"guarded": "yes"});
        }
        object
    };
    // Only the Ignore webhook matches: admitted although its service does not exist.
    assert_eq!(
        send(http.post(&configmaps), JSON, Some(cm("free", false)))
            .await
            .0,
        201
    );
    // The Fail webhook matches through its objectSelector: rejected.
    let (code, body) = send(http.post(&configmaps), JSON, Some(cm("held", true))).await;
    assert_eq!(code, 500);
    assert_eq!(body["reason"], "InternalError");
    let cause = "failed calling webhook \"strict.example.com\": failed to call webhook: Post \"https://hooks.default.svc:443/validate?timeout=10s\": service \"hooks\" not found";
    assert_eq!(body["message"], format!("Internal error occurred: {cause}"));
    assert_eq!(body["details"]["causes"][0]["message"], cause);

    // Status is a subresource: ignored on the main resource, replaced through /status.
    let deployments = cluster.url("/apis/apps/v1/namespaces/default/deployments");
    let deployment = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
        "spec": {"replicas": 0, "selector": {"matchLabels": {"app": "d"}},
            "template": {"metadata": {"labels": {"app": "d"}}, "spec": {"containers": [{"name": "c", "image": "i"}]}}},
        "status": {"replicas": 7}});
    let (code, created) = send(http.post(&deployments), JSON, Some(deployment)).await;
    assert_eq!(code, 201);
    assert!(created.get("status").is_none() || created["status"]["replicas"] != 7);
    let (code, patched) = send(
        http.patch(format!("{deployments}/d")),
        "application/merge-patch+json",
        Some(json!({"metadata": {"labels": {"team": "ml"}}, "status": {"replicas": 7}})),
    )
    .await;
    assert_eq!(code, 200);
    assert_eq!(patched["metadata"]["labels"]["team"], "ml");
    assert_ne!(patched["status"]["replicas"], 7);
    assert_eq!(patched["metadata"]["generation"], 1);
    let (code, body) = send(
        http.patch(format!("{deployments}/d")),
        "application/merge-patch+json",
        Some(json!({"spec": {"paused": true}})).map(|mut v| {
            v["metadata"] = json!({"resourceVersion": "1"});
            v
        }),
    )
    .await;
    assert_eq!((code, body["reason"].as_str()), (409, Some("Conflict")));
    let (code, patched) = send(
        http.patch(format!("{deployments}/d/status")),
        "application/merge-patch+json",
        Some(json!({"status": {"observedGeneration": 5}})),
    )
    .await;
    assert_eq!(code, 200);
    assert_eq!(patched["status"]["observedGeneration"], 5);
    assert_eq!(patched["metadata"]["generation"], 1);
    let (code, body) = send(
        http.post(cluster.url("/apis/apps/v1/deployments")),
        JSON,
        Some(json!({})),
    )
    .await;
    assert_eq!(
        (code, body["reason"].as_str()),
        (405, Some("MethodNotAllowed"))
    );
}

#[tokio::test]
async fn objects_survive_a_restart_of_a_persisted_simulator() {
    let dir = tempfile::tempdir().unwrap();
    let config = a3ctl_sim::SimConfig {
        persist: Some(dir.path().join("world.json")),
        ..a3ctl_sim::SimConfig::default()
    };
    let sim = a3ctl_sim::start(config.clone()).await.unwrap();
    let shared = sim.shared.clone();
    let spec = a3ctl_sim::kube::ClusterSpec {
        key: kube_support::KEY.into(),
        name: "c1".into(),
        location: "us-central1".into(),
        version: "1.32.4-gke.1767000".into(),
        multi_networking: false,
        beta_apis: vec![],
    };
    let provisioned = sim
        .shared
        .with_world(|w, _| a3ctl_sim::kube::provision(&shared, w, spec))
        .unwrap();
    sim.shared
        .with_world(|w, _| w.kube.set_ready(kube_support::KEY, true));
    let http = reqwest::Client::builder()
        .tls_built_in_root_certs(false)
        .add_root_certificate(
            reqwest::Certificate::from_pem(provisioned.ca_pem.as_bytes()).unwrap(),
        )
        .build()
        .unwrap();
    let base = format!(
        "https://{}/api/v1/namespaces/default/configmaps",
        provisioned.endpoint
    );
    let (code, created) = send(
        http.post(&base),
        JSON,
        Some(json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "kept"}, "data": {"a": "b"}})),
    )
    .await;
    assert_eq!(code, 201);
    drop(sim);

    let sim = a3ctl_sim::start(config).await.unwrap();
    let endpoint = sim
        .shared
        .read_world(|w, _| w.kube.cluster(kube_support::KEY).unwrap().endpoint.clone());
    let (code, kept) = send(
        http.get(format!(
            "https://{endpoint}/api/v1/namespaces/default/configmaps/kept"
        )),
        JSON,
        None,
    )
    .await;
    assert_eq!(code, 200);
    assert_eq!(kept["metadata"]["uid"], created["metadata"]["uid"]);
    assert_eq!(kept["data"]["a"], "b");
}
