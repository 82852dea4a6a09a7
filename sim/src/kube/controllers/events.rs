//! Event objects (`v1` `Event`) that the simulated scheduler and kubelet record about pods, as
//! `kubectl get events` and `kubectl describe pod` show them.
//!
//! The kubelet records through client-go's `record.EventRecorder` (core `v1` events): `source`
//! `{component: kubelet, host: NODE}`, `firstTimestamp`, `lastTimestamp` and `count`,
//! `reportingComponent: kubelet`, `reportingInstance: NODE`, and `involvedObject.fieldPath`
//! (`spec.containers{NAME}`) for container events. A repeated event is one object whose `count`
//! and `lastTimestamp` move, as client-go's event correlator does for identical events (its spam
//! filter and the `(combined from similar events)` aggregation are not modelled). The scheduler
//! records through the `events.k8s.io/v1` recorder, whose events read through `v1` have
//! `eventTime`, `action`, `reportingComponent: default-scheduler`, an empty `source` and no
//! timestamps or count (a repeat is a `series`).
//!
//! Names are the involved object's name, a dot and a hexadecimal time, as client-go makes them
//! (`fmt.Sprintf("%v.%x", ref.Name, t.UnixNano())`). Events live one hour after their last
//! occurrence (kube-apiserver's `--event-ttl` default), then go.

use super::{Clock, hash};
use crate::clock::SimTime;
use crate::kube::KubeCluster;
use serde_json::{Value, json};

/// How long an event is kept after it last happened (kube-apiserver `--event-ttl`, 1h).
pub const TTL_MS: u64 = 3_600_000;

/// Who records an event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source<'a> {
    /// The kubelet of this node (core `v1` recorder).
    Kubelet(&'a str),
    /// The default scheduler (`events.k8s.io/v1` recorder), with the event's action.
    Scheduler(&'a str),
}

/// One occurrence series of an event about a pod.
#[derive(Debug, Clone)]
pub struct Occurrence<'a> {
    pub source: Source<'a>,
    /// `Normal` or `Warning`.
    pub kind: &'a str,
    pub reason: &'a str,
    pub message: &'a str,
    /// `spec.containers{NAME}` for container events.
    pub field_path: Option<String>,
    pub first: SimTime,
    pub last: SimTime,
    pub count: u64,
}

fn rfc3339_micros(clock: &Clock, t: SimTime) -> String {
    (clock.epoch + chrono::Duration::milliseconds(t.0 as i64))
        .to_rfc3339_opts(chrono::SecondsFormat::Micros, true)
}

/// Whether `event` is the one `occurrence` updates (same object, reason, message, sub-object and
/// recorder).
fn same(event: &Value, pod_uid: &str, occurrence: &Occurrence) -> bool {
    let component = match occurrence.source {
        Source::Kubelet(_) => "kubelet",
        Source::Scheduler(_) => "default-scheduler",
    };
    event["involvedObject"]["uid"] == pod_uid
        && event["reason"] == occurrence.reason
        && event["message"] == occurrence.message
        && event["reportingComponent"] == component
        && event["involvedObject"]["fieldPath"].as_str() == occurrence.field_path.as_deref()
}

/// Creates the event of `occurrence` about `pod`, or moves its count and last time; true if the
/// store changed.
pub fn record(
    cluster: &mut KubeCluster,
    clock: &Clock,
    pod: &Value,
    occurrence: &Occurrence,
) -> bool {
    let namespace = pod["metadata"]["namespace"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let pod_name = pod["metadata"]["name"].as_str().unwrap_or_default();
    let uid = pod["metadata"]["uid"].as_str().unwrap_or_default();
    let count = occurrence.count.max(1);
    let existing = cluster
        .store
        .list("", "events", Some(&namespace))
        .into_iter()
        .find(|e| same(e, uid, occurrence))
        .cloned();
    let mut event = match existing {
        Some(event) => event,
        None => {
            let nanos = (clock.epoch + chrono::Duration::milliseconds(occurrence.first.0 as i64))
                .timestamp_nanos_opt()
                .unwrap_or_default() as u64;
            // Distinct events of one instant keep distinct names, in a stable order.
            let salt = hash(&format!(
                "{uid}/{}/{}/{:?}",
                occurrence.reason, occurrence.message, occurrence.field_path
            )) % 1_000_000;
            let name = format!("{pod_name}.{:x}", nanos + salt);
            let mut involved = json!({"kind": "Pod", "namespace": namespace, "name": pod_name,
                "uid": uid, "apiVersion": "v1", "resourceVersion": pod["metadata"]["resourceVersion"]});
            if let Some(path) = &occurrence.field_path {
                involved["fieldPath"] = json!(path);
            }
            let mut event = json!({
                "apiVersion": "v1",
                "kind": "Event",
                "metadata": {"name": name, "namespace": namespace,
                    "uid": cluster.store.next_uid(),
                    "creationTimestamp": clock.ts(occurrence.first)},
                "involvedObject": involved,
                "reason": occurrence.reason,
                "message": occurrence.message,
                "type": occurrence.kind,
            });
            match occurrence.source {
                Source::Kubelet(node) => {
                    event["source"] = json!({"component": "kubelet", "host": node});
                    event["eventTime"] = Value::Null;
                    event["reportingComponent"] = json!("kubelet");
                    event["reportingInstance"] = json!(node);
                }
                Source::Scheduler(action) => {
                    event["source"] = json!({});
                    event["firstTimestamp"] = Value::Null;
                    event["lastTimestamp"] = Value::Null;
                    event["eventTime"] = json!(rfc3339_micros(clock, occurrence.first));
                    event["action"] = json!(action);
                    event["reportingComponent"] = json!("default-scheduler");
                    event["reportingInstance"] = json!("default-scheduler");
                }
            }
            event
        }
    };
    let before = event.clone();
    match occurrence.source {
        Source::Kubelet(_) => {
            event["firstTimestamp"] = json!(clock.ts(occurrence.first));
            event["lastTimestamp"] = json!(clock.ts(occurrence.last));
            event["count"] = json!(count);
        }
        Source::Scheduler(_) if count > 1 => {
            event["series"] = json!({"count": count,
                "lastObservedTime": rfc3339_micros(clock, occurrence.last)});
        }
        Source::Scheduler(_) => {}
    }
    if event == before && event["metadata"]["resourceVersion"].is_string() {
        return false;
    }
    let name = event["metadata"]["name"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    cluster.store.put("", "events", &namespace, &name, event);
    true
}

/// When an event last happened: `lastTimestamp`, the series' last observation, `eventTime`, or
/// its creation.
fn last_seen(event: &Value) -> Option<chrono::DateTime<chrono::Utc>> {
    [
        &event["series"]["lastObservedTime"],
        &event["lastTimestamp"],
        &event["eventTime"],
        &event["metadata"]["creationTimestamp"],
    ]
    .into_iter()
    .filter_map(Value::as_str)
    .find_map(|t| chrono::DateTime::parse_from_rfc3339(t).ok())
    .map(|t| t.with_timezone(&chrono::Utc))
}

/// Removes events that last happened more than [`TTL_MS`] ago.
pub fn expire(cluster: &mut KubeCluster, clock: &Clock) {
    let now = clock.epoch + chrono::Duration::milliseconds(clock.now.0 as i64);
    let ttl = chrono::Duration::milliseconds(TTL_MS as i64);
    for key in cluster.store.keys("", "events") {
        let Some(event) = cluster.store.objects.get(&key) else {
            continue;
        };
        if last_seen(event).is_some_and(|t| t + ttl <= now)
            && let Some((_, _, namespace, name)) = crate::kube::store::split_key(&key)
        {
            let (namespace, name) = (namespace.to_string(), name.to_string());
            cluster.store.remove("", "events", &namespace, &name);
        }
    }
}
