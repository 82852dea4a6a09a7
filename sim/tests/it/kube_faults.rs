//! Faults on a simulated cluster's Kubernetes API server, seen by raw HTTPS requests (reqwest) and
//! by kubectl 1.32: transient faults in kube-apiserver's own shapes (429 with `Retry-After`, the
//! etcd timeout 500, 503, dropped connections, webhook calls that fail for lack of endpoints or
//! by timing out), scripted faults on Kubernetes verbs including server-side apply, scripted drops,
//! and tripwires that hold a request before or after it changes anything.

use crate::kube_support;

use a3ctl_sim::faults::{
    FaultAction, FaultConfig, NamedFault, ScriptedFault, TransientFaults, TransientKind, TripWhen,
    Tripwire,
};
use kube_support::{Cluster, latency, node, start};
use serde_json::{Value, json};
use std::time::Duration;

const JSON: &str = "application/json";
const APPLY: &str = "application/apply-patch+yaml";

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

/// Every kube request gets one of `kinds`.
fn always(kinds: Vec<TransientKind>) -> FaultConfig {
    let mut faults = FaultConfig::default();
    faults.transient.insert(
        "kube".into(),
        TransientFaults {
            rate: 1.0,
            kinds,
            methods: vec![],
        },
    );
    faults
}

fn configmap(name: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": {"k": "v"}})
}

/// A validating webhook on ConfigMap creates and updates in `default`, served by a Deployment that
/// is available (so the webhook itself answers).
async fn install_webhook(cluster: &Cluster) {
    let http = cluster.http();
    cluster.set_pool(
        "default-pool",
        vec![node("gke-c1-default-0", "default-pool", 0, false)],
    );
    let deployment = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "hook"},
        "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "hook"}},
            "template": {"metadata": {"labels": {"app": "hook"}},
                "spec": {"containers": [{"name": "hook", "image": "registry.example/hook:1"}]}}}});
    let (code, body) = send(
        http.post(cluster.url("/apis/apps/v1/namespaces/default/deployments")),
        JSON,
        Some(deployment),
    )
    .await;
    assert_eq!(code, 201, "{body}");
    let service = json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "hook"},
        "spec": {"selector": {"app": "hook"}, "ports": [{"port": 443, "targetPort": 9443}]}});
    let (code, body) = send(
        http.post(cluster.url("/api/v1/namespaces/default/services")),
        JSON,
        Some(service),
    )
    .await;
    assert_eq!(code, 201, "{body}");
    let webhook = json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingWebhookConfiguration",
        "metadata": {"name": "guard"},
        "webhooks": [{"name": "vconfigmap.example.com", "admissionReviewVersions": ["v1"], "sideEffects": "None",
            "clientConfig": {"service": {"name": "hook", "namespace": "default", "path": "/validate-configmap"}},
            "rules": [{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE", "UPDATE"], "resources": ["configmaps"]}]}]});
    let (code, body) = send(
        http.post(
            cluster.url("/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations"),
        ),
        JSON,
        Some(webhook),
    )
    .await;
    assert_eq!(code, 201, "{body}");
    cluster.sim.advance_secs(5.0);
    // The webhook answers: a guarded create goes through.
    let (code, body) = send(
        http.post(cluster.url("/api/v1/namespaces/default/configmaps")),
        JSON,
        Some(configmap("admitted")),
    )
    .await;
    assert_eq!(code, 201, "{body}");
}

#[tokio::test]
async fn transient_faults_answer_like_kube_apiserver() {
    let cluster = start(latency(&[]), false).await;
    let http = cluster.http();
    let configmaps = cluster.url("/api/v1/namespaces/default/configmaps");

    // 429 from the priority-and-fairness filter: plain text with Retry-After, not a Status.
    cluster
        .sim
        .set_faults(always(vec![TransientKind::RateLimit]));
    let response = http.get(&configmaps).bearer_auth("t").send().await.unwrap();
    assert_eq!(response.status().as_u16(), 429);
    let header = |name: &str| {
        response
            .headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(String::from)
    };
    assert_eq!(header("retry-after").as_deref(), Some("1"));
    assert_eq!(
        header("content-type").as_deref(),
        Some("text/plain; charset=utf-8")
    );
    assert!(header("x-kubernetes-pf-flowschema-uid").is_some());
    assert_eq!(
        response.text().await.unwrap(),
        "Too many requests, please try again later.\n"
    );

    // An etcd timeout passes through as a 500 without a reason.
    cluster
        .sim
        .set_faults(always(vec![TransientKind::ServerError]));
    let (code, body) = send(http.get(&configmaps), JSON, None).await;
    assert_eq!(code, 500);
    assert_eq!(
        body,
        json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": "etcdserver: request timed out", "code": 500})
    );
    cluster
        .sim
        .set_faults(always(vec![TransientKind::Unavailable]));
    let (code, body) = send(http.get(&configmaps), JSON, None).await;
    assert_eq!(
        (code, body["reason"].as_str()),
        (503, Some("ServiceUnavailable"))
    );

    // Dropped connections, before and after the write.
    for (kind, name, exists) in [
        (TransientKind::DropBefore, "dropped-before", false),
        (TransientKind::DropAfter, "dropped-after", true),
    ] {
        cluster.sim.set_faults(always(vec![kind]));
        let sent = http
            .post(&configmaps)
            .bearer_auth("t")
            .header("Content-Type", JSON)
            .body(configmap(name).to_string())
            .send()
            .await;
        assert!(sent.is_err(), "{kind:?}: no answer");
        cluster.sim.set_faults(FaultConfig::default());
        let (code, _) = send(http.get(format!("{configmaps}/{name}")), JSON, None).await;
        assert_eq!(code == 200, exists, "{kind:?}");
    }

    // The request log names each fault.
    let log: Value = reqwest::get(format!("{}/_sim/requests", cluster.sim.base_url()))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let faults: Vec<&str> = log["entries"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|e| e["fault"].as_str())
        .collect();
    assert_eq!(
        faults,
        [
            "rate_limit",
            "server_error",
            "unavailable",
            "drop_before",
            "drop_after"
        ]
    );
}

#[tokio::test]
async fn webhook_faults_hit_only_writes_a_webhook_guards() {
    let cluster = start(latency(&[]), false).await;
    let http = cluster.http();
    install_webhook(&cluster).await;
    let configmaps = cluster.url("/api/v1/namespaces/default/configmaps");
    let call = "failed calling webhook \"vconfigmap.example.com\": failed to call webhook: Post \"https://hook.default.svc:443/validate-configmap?timeout=10s\"";

    cluster
        .sim
        .set_faults(always(vec![TransientKind::WebhookNoEndpoints]));
    let (code, body) = send(http.post(&configmaps), JSON, Some(configmap("a"))).await;
    assert_eq!(code, 500);
    assert_eq!(body["reason"], "InternalError");
    let cause = format!("{call}: no endpoints available for service \"hook\"");
    assert_eq!(body["message"], format!("Internal error occurred: {cause}"));
    assert_eq!(body["details"]["causes"][0]["message"], cause.as_str());
    // Reads and unguarded writes are untouched (no other kind is configured).
    let (code, _) = send(http.get(&configmaps), JSON, None).await;
    assert_eq!(code, 200);
    let secret = json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}});
    let (code, body) = send(
        http.post(cluster.url("/api/v1/namespaces/default/secrets")),
        JSON,
        Some(secret),
    )
    .await;
    assert_eq!(code, 201, "{body}");
    // A server-side apply that would update a guarded object.
    cluster
        .sim
        .set_faults(always(vec![TransientKind::WebhookTimeout]));
    let (code, body) = send(
        http.patch(format!("{configmaps}/admitted?fieldManager=t")),
        APPLY,
        Some(configmap("admitted")),
    )
    .await;
    assert_eq!(code, 500);
    assert_eq!(
        body["message"],
        format!("Internal error occurred: {call}: context deadline exceeded")
    );

    // kubectl shows the error and fails.
    let (code, _, err) = cluster
        .kubectl_code(
            &["create", "-f", "-"],
            Some("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\n"),
        )
        .await;
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains(&format!(
            "Error from server (InternalError): error when creating \"STDIN\": Internal error occurred: {call}: context deadline exceeded"
        )),
        "{err}"
    );

    // With every kind in play, guarded writes draw the webhook kinds too, reads never do.
    cluster.sim.set_faults(always(vec![]));
    let mut seen = std::collections::BTreeSet::new();
    for i in 0..60 {
        let answer = http
            .patch(format!("{configmaps}/c{i}?fieldManager=t"))
            .bearer_auth("t")
            .header("Content-Type", APPLY)
            .body(configmap(&format!("c{i}")).to_string())
            .send()
            .await;
        let Ok(answer) = answer else {
            continue; // a dropped connection
        };
        let body: Value = answer.json().await.unwrap_or_default();
        if let Some(message) = body.get("message").and_then(Value::as_str) {
            if message.ends_with("context deadline exceeded") {
                seen.insert("webhook_timeout");
            }
            if message.ends_with("no endpoints available for service \"hook\"") {
                seen.insert("webhook_no_endpoints");
            }
        }
    }
    assert_eq!(
        seen.into_iter().collect::<Vec<_>>(),
        ["webhook_no_endpoints", "webhook_timeout"]
    );
    let injected: Value = reqwest::get(format!("{}/_sim/faults", cluster.sim.base_url()))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert!(
        injected["injected"]["kube.webhook_timeout"]
            .as_u64()
            .unwrap()
            > 0
    );
}

const WEB: &str = "apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: web
        image: registry.example/web:1
";

#[tokio::test]
async fn scripted_faults_on_kubernetes_verbs_reach_kubectl() {
    let cluster = start(latency(&[]), false).await;
    let scripted = |kind: &str, verb: &str, nth: u32, action: FaultAction| ScriptedFault {
        kind: kind.into(),
        verb: verb.into(),
        nth,
        action,
    };
    let faults = FaultConfig {
        scripted: vec![
            scripted(
                "kube.ConfigMap",
                "patch",
                1,
                FaultAction::Http {
                    status: 500,
                    reason: "InternalError".into(),
                    message: "Internal error occurred: injected by the test".into(),
                },
            ),
            scripted(
                "kube.Deployment",
                "create",
                1,
                FaultAction::Named(NamedFault::QuotaExceeded),
            ),
            scripted(
                "kube.ConfigMap",
                "create",
                1,
                FaultAction::Named(NamedFault::DropAfter),
            ),
        ],
        ..FaultConfig::default()
    };
    faults.check().unwrap();
    cluster.sim.set_faults(faults);
    let settings = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n  namespace: default\ndata:\n  a: \"1\"\n";

    // The first server-side apply (a PATCH, although it would create) fails with the Status.
    let (code, _, err) = cluster
        .kubectl_code(&["apply", "--server-side", "-f", "-"], Some(settings))
        .await;
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("Error from server (InternalError)"), "{err}");
    assert!(
        err.contains("Internal error occurred: injected by the test"),
        "{err}"
    );
    let (code, _, _) = cluster
        .kubectl_code(&["get", "configmap", "settings"], None)
        .await;
    assert_eq!(code, Some(1), "nothing was created");
    // The second one goes through.
    let (code, out, err) = cluster
        .kubectl_code(&["apply", "--server-side", "-f", "-"], Some(settings))
        .await;
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(out.trim(), "configmap/settings serverside-applied");

    // ResourceQuota's refusal for quota_exceeded.
    let (code, _, err) = cluster
        .kubectl_code(&["create", "-f", "-"], Some(WEB))
        .await;
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains("Error from server (Forbidden): error when creating \"STDIN\": deployments.apps \"web\" is forbidden: exceeded quota: gke-resource-quotas, requested: count/deployments.apps=1, used: count/deployments.apps=0, limited: count/deployments.apps=0"),
        "{err}"
    );

    // drop_after on a create: the object exists, the client got no answer.
    let http = cluster.http();
    let sent = http
        .post(cluster.url("/api/v1/namespaces/default/configmaps"))
        .bearer_auth("t")
        .header("Content-Type", JSON)
        .body(configmap("lost-answer").to_string())
        .send()
        .await;
    assert!(sent.is_err());
    let (code, _) = send(
        http.get(cluster.url("/api/v1/namespaces/default/configmaps/lost-answer")),
        JSON,
        None,
    )
    .await;
    assert_eq!(code, 200);
}

/// Waits for the tripwire, at most 10 s.
async fn tripped(cluster: &Cluster) -> Vec<usize> {
    tokio::time::timeout(Duration::from_secs(10), cluster.sim.wait_tripped())
        .await
        .expect("the tripwire fires")
}

async fn until_released(cluster: &Cluster) {
    for _ in 0..200 {
        if cluster.sim.held() == 0 {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("held requests were not released");
}

#[tokio::test]
async fn tripwires_hold_kubernetes_writes_before_or_after_they_happen() {
    let cluster = start(latency(&[]), false).await;
    let http = cluster.http();
    let configmaps = cluster.url("/api/v1/namespaces/default/configmaps");
    let wire = |path: &str, method: &str, when| Tripwire {
        api: "kube".into(),
        method: Some(method.into()),
        path: Some(path.into()),
        nth: 1,
        when,
    };

    // Before: the create is held, nothing is written; release_held lets it go unanswered.
    cluster.sim.set_faults(FaultConfig {
        tripwires: vec![wire("/configmaps", "POST", TripWhen::Before)],
        ..FaultConfig::default()
    });
    let request = http
        .post(&configmaps)
        .bearer_auth("t")
        .header("Content-Type", JSON)
        .body(configmap("held").to_string())
        .send();
    let client = tokio::spawn(request);
    assert_eq!(tripped(&cluster).await, [0]);
    assert_eq!(cluster.sim.held(), 1);
    let (code, _) = send(http.get(format!("{configmaps}/held")), JSON, None).await;
    assert_eq!(code, 404, "held before the handler ran");
    let faults: Value = reqwest::get(format!("{}/_sim/faults", cluster.sim.base_url()))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(
        (faults["tripped"].clone(), faults["held"].clone()),
        (json!([0]), json!(1))
    );
    cluster.sim.release_held();
    let answer = tokio::time::timeout(Duration::from_secs(10), client)
        .await
        .expect("released")
        .unwrap();
    assert!(answer.is_err(), "the connection closes without an answer");
    until_released(&cluster).await;
    assert_eq!(cluster.sim.tripped(), [0], "the configuration stays");

    // After: a server-side apply is held once it created the object; the client is dropped,
    // which ends the hold.
    cluster.sim.set_faults(FaultConfig {
        tripwires: vec![wire("/configmaps/applied", "PATCH", TripWhen::After)],
        ..FaultConfig::default()
    });
    let request = http
        .patch(format!("{configmaps}/applied?fieldManager=t"))
        .bearer_auth("t")
        .header("Content-Type", APPLY)
        .body(configmap("applied").to_string())
        .send();
    let client = tokio::spawn(request);
    assert_eq!(tripped(&cluster).await, [0]);
    let (code, body) = send(http.get(format!("{configmaps}/applied")), JSON, None).await;
    assert_eq!(code, 200, "the change happened: {body}");
    assert_eq!(cluster.sim.held(), 1);
    client.abort();
    until_released(&cluster).await;
    // The tripwire fired once; later requests pass.
    let (code, _) = send(
        http.patch(format!("{configmaps}/applied?fieldManager=t")),
        APPLY,
        Some(configmap("applied")),
    )
    .await;
    assert_eq!(code, 200);
    assert_eq!(cluster.sim.tripped(), [0]);
}
