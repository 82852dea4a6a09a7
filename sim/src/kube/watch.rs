//! Watches: a chunked stream of `{"type":"ADDED|MODIFIED|DELETED|BOOKMARK|ERROR","object":...}`
//! lines.
//!
//! A watch replays the cluster's change log from the requested resourceVersion (or sends the
//! current objects as ADDED first when none, or `0`, is given) and then polls the log. Each poll
//! brings the world up to the current simulated time, so status changes made by the controllers
//! in `tick` (a Deployment becoming available, a CRD established) reach `kubectl wait`,
//! `kubectl rollout status` and kube-rs `await_condition` without any other request.

use super::resources::ResourceType;
use super::selectors::{FieldSelector, LabelSelector};
use super::status::Status;
use super::verbs::present;
use crate::http::Query;
use crate::shared::Shared;
use axum::body::Body;
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::mpsc;

/// How often a watch looks for changes (real time).
const POLL: Duration = Duration::from_millis(50);
/// How often an idle watch sends a bookmark when asked to (real time).
const BOOKMARK_EVERY: Duration = Duration::from_secs(5);
/// The longest a watch stays open (real time).
const MAX_TIMEOUT_SECS: u64 = 1800;

fn line(kind: &str, object: Value) -> Bytes {
    let mut text = json!({"type": kind, "object": object}).to_string();
    text.push('\n');
    Bytes::from(text)
}

struct Filter {
    rt: ResourceType,
    namespace: String,
    labels: LabelSelector,
    fields: FieldSelector,
}

impl Filter {
    fn matches(&self, group: &str, resource: &str, namespace: &str, object: &Value) -> bool {
        group == self.rt.store_group()
            && resource == self.rt.plural
            && (self.namespace.is_empty() || namespace == self.namespace)
            && self.labels.matches(&object["metadata"]["labels"])
            && self.fields.matches(object)
    }
}

/// What one poll found.
enum Poll {
    Lines(Vec<Bytes>, u64),
    Expired(u64),
    Gone,
}

fn poll(shared: &Shared, key: &str, filter: &Filter, after: u64) -> Poll {
    shared.read_world(|world, _| {
        let Some(cluster) = world.kube.clusters.get(key) else {
            return Poll::Gone;
        };
        match cluster.store.events_after(after) {
            Err(oldest) => Poll::Expired(oldest),
            Ok(events) => {
                let lines = events
                    .iter()
                    .filter(|e| filter.matches(&e.group, &e.resource, &e.namespace, &e.object))
                    .map(|e| line(e.kind.as_str(), present(&filter.rt, &e.object)))
                    .collect();
                Poll::Lines(lines, cluster.store.resource_version.max(after))
            }
        }
    })
}

/// Serves `?watch=true` on a collection.
pub fn watch(
    shared: Arc<Shared>,
    key: Arc<str>,
    rt: ResourceType,
    namespace: String,
    query: &Query,
) -> Response {
    let labels = match LabelSelector::parse(query.get("labelSelector").unwrap_or_default()) {
        Ok(s) => s,
        Err(e) => return e.into_response(),
    };
    let fields = match FieldSelector::parse(query.get("fieldSelector").unwrap_or_default()) {
        Ok(s) => s,
        Err(e) => return e.into_response(),
    };
    let filter = Filter {
        rt,
        namespace,
        labels,
        fields,
    };
    let requested = query.get("resourceVersion").unwrap_or_default().to_string();
    let send_initial = query.flag("sendInitialEvents") || requested.is_empty() || requested == "0";
    let bookmarks = query.flag("allowWatchBookmarks");
    let timeout = query
        .get("timeoutSeconds")
        .and_then(|t| t.parse::<u64>().ok())
        .unwrap_or(MAX_TIMEOUT_SECS)
        .min(MAX_TIMEOUT_SECS);
    let start_from: Option<u64> = requested.parse().ok().filter(|rv| *rv > 0);
    let (tx, mut rx) = mpsc::channel::<Bytes>(64);
    tokio::spawn(async move {
        let deadline = Instant::now() + Duration::from_secs(timeout);
        let (initial, mut last) = shared.read_world(|world, _| {
            let Some(cluster) = world.kube.clusters.get(&*key) else {
                return (Vec::new(), 0);
            };
            let current = cluster.store.resource_version;
            let mut lines = Vec::new();
            if send_initial && start_from.is_none() {
                for object in cluster
                    .store
                    .list(filter.rt.store_group(), &filter.rt.plural, None)
                {
                    let ns = object["metadata"]["namespace"].as_str().unwrap_or_default();
                    if filter.matches(filter.rt.store_group(), &filter.rt.plural, ns, object) {
                        lines.push(line("ADDED", present(&filter.rt, object)));
                    }
                }
            }
            (lines, start_from.unwrap_or(current))
        });
        for l in initial {
            if tx.send(l).await.is_err() {
                return;
            }
        }
        if query_initial_bookmark(send_initial, bookmarks) {
            let bookmark = json!({"kind": filter.rt.kind, "apiVersion": filter.rt.api_version(),
                "metadata": {"resourceVersion": last.to_string(), "annotations": {"k8s.io/initial-events-end": "true"}}});
            if tx.send(line("BOOKMARK", bookmark)).await.is_err() {
                return;
            }
        }
        let mut last_sent = Instant::now();
        while Instant::now() < deadline {
            match poll(&shared, &key, &filter, last) {
                Poll::Gone => return,
                Poll::Expired(oldest) => {
                    let status = Status::failure(
                        410,
                        "Expired",
                        format!("too old resource version: {last} ({oldest})"),
                    );
                    let _ = tx.send(line("ERROR", status.body())).await;
                    return;
                }
                Poll::Lines(lines, next) => {
                    if !lines.is_empty() {
                        last_sent = Instant::now();
                    }
                    for l in lines {
                        if tx.send(l).await.is_err() {
                            return;
                        }
                    }
                    last = next;
                }
            }
            if bookmarks && last_sent.elapsed() >= BOOKMARK_EVERY {
                let bookmark = json!({"kind": filter.rt.kind, "apiVersion": filter.rt.api_version(),
                    "metadata": {"resourceVersion": last.to_string()}});
                if tx.send(line("BOOKMARK", bookmark)).await.is_err() {
                    return;
                }
                last_sent = Instant::now();
            }
            if tx.is_closed() {
                return;
            }
            tokio::time::sleep(POLL).await;
        }
    });
    let stream = futures_util::stream::poll_fn(move |cx| {
        rx.poll_recv(cx)
            .map(|item| item.map(Ok::<Bytes, std::convert::Infallible>))
    });
    let mut response = Response::new(Body::from_stream(stream));
    response.headers_mut().insert(
        axum::http::header::CONTENT_TYPE,
        axum::http::HeaderValue::from_static("application/json"),
    );
    response
}

/// Whether to end the initial events with a bookmark (`sendInitialEvents=true` watches).
fn query_initial_bookmark(send_initial: bool, bookmarks: bool) -> bool {
    send_initial && bookmarks
}
