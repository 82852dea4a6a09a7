//! Server-side printing: `meta.k8s.io/v1` `Table` responses for `kubectl get` (requested with
//! `Accept: application/json;as=Table;v=v1;g=meta.k8s.io`). Columns follow the API server's
//! printers for the kinds a3ctl cares about, a CRD's `additionalPrinterColumns`, and Name + Age
//! otherwise.

use super::controllers::Clock;
use super::resources::{self, ResourceType};
use chrono::{DateTime, Utc};
use serde_json::{Value, json};

/// Whether the client asked for a Table.
pub fn wants_table(accept: &str) -> bool {
    accept
        .split(',')
        .next()
        .is_some_and(|first| first.contains("as=Table") && first.contains("g=meta.k8s.io"))
}

/// Go's `duration.HumanDuration`, as `kubectl get` prints ages.
pub fn human_duration(secs: i64) -> String {
    if secs < -1 {
        return "<invalid>".into();
    }
    let secs = secs.max(0);
    let minutes = secs / 60;
    let hours = minutes / 60;
    let days = hours / 24;
    let years = days / 365;
    if secs < 120 {
        format!("{secs}s")
    } else if minutes < 10 {
        let s = secs % 60;
        if s == 0 {
            format!("{minutes}m")
        } else {
            format!("{minutes}m{s}s")
        }
    } else if minutes < 180 {
        format!("{minutes}m")
    } else if hours < 8 {
        let m = minutes % 60;
        if m == 0 {
            format!("{hours}h")
        } else {
            format!("{hours}h{m}m")
        }
    } else if hours < 48 {
        format!("{hours}h")
    } else if hours < 24 * 8 {
        let h = hours % 24;
        if h == 0 {
            format!("{days}d")
        } else {
            format!("{days}d{h}h")
        }
    } else if days < 365 * 2 {
        format!("{days}d")
    } else if years < 8 {
        format!("{years}y{}d", days % 365)
    } else {
        format!("{years}y")
    }
}

fn age(object: &Value, clock: &Clock) -> String {
    let Some(created) = object["metadata"]["creationTimestamp"]
        .as_str()
        .and_then(|t| DateTime::parse_from_rfc3339(t).ok())
    else {
        return "<unknown>".into();
    };
    let now: DateTime<Utc> = clock.epoch + chrono::Duration::milliseconds(clock.now.0 as i64);
    human_duration((now - created.with_timezone(&Utc)).num_seconds())
}

/// `translateTimestampSince` of a `metav1.Time` (or `MicroTime`) value: `<unknown>` when unset.
fn since(value: &Value, clock: &Clock) -> String {
    let Some(t) = value
        .as_str()
        .and_then(|t| DateTime::parse_from_rfc3339(t).ok())
    else {
        return "<unknown>".into();
    };
    let now: DateTime<Utc> = clock.epoch + chrono::Duration::milliseconds(clock.now.0 as i64);
    human_duration((now - t.with_timezone(&Utc)).num_seconds())
}

/// The STATUS of a Job (`printJob`, 1.32): its first of Complete, Failed, Terminating,
/// Suspended, FailureTarget, SuccessCriteriaMet, else Running.
fn job_status(job: &Value) -> &'static str {
    let has = |kind: &str| {
        job["status"]["conditions"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|c| c["type"] == kind && c["status"] == "True")
    };
    if has("Complete") {
        "Complete"
    } else if has("Failed") {
        "Failed"
    } else if job["metadata"].get("deletionTimestamp").is_some() {
        "Terminating"
    } else if has("Suspended") {
        "Suspended"
    } else if has("FailureTarget") {
        "FailureTarget"
    } else if has("SuccessCriteriaMet") {
        "SuccessCriteriaMet"
    } else {
        "Running"
    }
}

/// COMPLETIONS: `succeeded/completions`, or `succeeded/1 of parallelism` without completions.
fn job_completions(job: &Value) -> String {
    let succeeded = int(&job["status"]["succeeded"]);
    match job["spec"]["completions"].as_i64() {
        Some(c) => format!("{succeeded}/{c}"),
        None => match job["spec"]["parallelism"].as_i64().unwrap_or(1) {
            p if p > 1 => format!("{succeeded}/1 of {p}"),
            _ => format!("{succeeded}/1"),
        },
    }
}

/// DURATION: from startTime to completionTime (or now); empty before the Job started.
fn job_duration(job: &Value, clock: &Clock) -> String {
    let parse = |v: &Value| {
        v.as_str()
            .and_then(|t| DateTime::parse_from_rfc3339(t).ok())
            .map(|t| t.with_timezone(&Utc))
    };
    let Some(start) = parse(&job["status"]["startTime"]) else {
        return String::new();
    };
    let end = parse(&job["status"]["completionTime"])
        .unwrap_or_else(|| clock.epoch + chrono::Duration::milliseconds(clock.now.0 as i64));
    human_duration((end - start).num_seconds())
}

/// A column `kubectl get` shows only with `-o wide` (priority 1).
fn wide(name: &str, kind: &str) -> Value {
    let mut c = column(name, kind);
    c["priority"] = json!(1);
    c
}

/// The READY, STATUS and RESTARTS cells of a pod, as the API server's `printPod` computes them
/// (`pkg/printers/internalversion/printers.go`).
fn pod_cells(pod: &Value) -> (String, String, i64) {
    let status = &pod["status"];
    let init_specs = pod["spec"]["initContainers"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let sidecar = |name: &Value| {
        init_specs
            .iter()
            .any(|c| c["name"] == *name && c["restartPolicy"] == "Always")
    };
    let total = pod["spec"]["containers"].as_array().map_or(0, Vec::len)
        + init_specs
            .iter()
            .filter(|c| c["restartPolicy"] == "Always")
            .count();
    let mut ready = 0;
    let mut restarts = 0;
    let mut reason = status["reason"]
        .as_str()
        .or(status["phase"].as_str())
        .unwrap_or_default()
        .to_string();
    let mut initializing = false;
    let inits = status["initContainerStatuses"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    for (i, c) in inits.iter().enumerate() {
        restarts += c["restartCount"].as_i64().unwrap_or(0);
        let terminated = &c["state"]["terminated"];
        let waiting = c["state"]["waiting"]["reason"].as_str().unwrap_or_default();
        if sidecar(&c["name"]) && c["started"] == true {
            if c["ready"] == true {
                ready += 1;
            }
            continue;
        }
        if terminated.is_object() && terminated["exitCode"].as_i64() == Some(0) {
            continue;
        }
        reason = if terminated.is_object() {
            match terminated["reason"].as_str() {
                Some(r) if !r.is_empty() => format!("Init:{r}"),
                _ => format!("Init:ExitCode:{}", terminated["exitCode"]),
            }
        } else if !waiting.is_empty() && waiting != "PodInitializing" {
            format!("Init:{waiting}")
        } else {
            format!("Init:{i}/{}", init_specs.len())
        };
        initializing = true;
        break;
    }
    let initialized = status["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|c| c["type"] == "Initialized" && c["status"] == "True");
    if !initializing || initialized {
        restarts = 0;
        let mut running = false;
        let containers = status["containerStatuses"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        for c in containers.iter().rev() {
            restarts += c["restartCount"].as_i64().unwrap_or(0);
            let waiting = c["state"]["waiting"]["reason"].as_str().unwrap_or_default();
            let terminated = &c["state"]["terminated"];
            if !waiting.is_empty() {
                reason = waiting.to_string();
            } else if terminated.is_object() {
                reason = match terminated["reason"].as_str() {
                    Some(r) if !r.is_empty() => r.to_string(),
                    _ => format!("ExitCode:{}", terminated["exitCode"]),
                };
            } else if c["ready"] == true && c["state"]["running"].is_object() {
                running = true;
                ready += 1;
            }
        }
        if reason == "Completed" && running {
            let pod_ready = status["conditions"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|c| c["type"] == "Ready" && c["status"] == "True");
            reason = if pod_ready { "Running" } else { "NotReady" }.into();
        }
    }
    if pod["metadata"].get("deletionTimestamp").is_some() {
        reason = "Terminating".into();
    }
    (format!("{ready}/{total}"), reason, restarts)
}

fn column(name: &str, kind: &str) -> Value {
    let mut c =
        json!({"name": name, "type": kind, "format": "", "description": name, "priority": 0});
    if name == "Name" {
        c["format"] = json!("name");
    }
    c
}

fn int(v: &Value) -> i64 {
    v.as_i64().unwrap_or(0)
}

/// Evaluates a simple JSONPath (`.spec.a.b`, `.status.conditions[?(@.type=="Ready")].status`).
fn json_path(object: &Value, path: &str) -> Value {
    let mut current = object.clone();
    for part in path.trim_start_matches('.').split('.') {
        if part.is_empty() {
            continue;
        }
        if let Some((field, filter)) = part.split_once("[?(@.") {
            let Some((key, value)) = filter.trim_end_matches(")]").split_once("==") else {
                return Value::Null;
            };
            let value = value.trim_matches('"');
            current = current[field]
                .as_array()
                .and_then(|a| a.iter().find(|i| i[key] == value).cloned())
                .unwrap_or(Value::Null);
        } else {
            current = current[part].clone();
        }
    }
    current
}

fn printed(value: &Value) -> Value {
    match value {
        Value::Null => Value::Null,
        Value::String(_) | Value::Number(_) | Value::Bool(_) => value.clone(),
        other => json!(other.to_string()),
    }
}

/// Columns and cells for one resource type.
/// Computes a row's cells.
type Cells = Box<dyn Fn(&Value) -> Vec<Value>>;

fn layout(rt: &ResourceType, clock: &Clock) -> (Vec<Value>, Cells) {
    let clock = *clock;
    match (rt.group.as_str(), rt.plural.as_str()) {
        ("apps", "deployments") => (
            vec![
                column("Name", "string"),
                column("Ready", "string"),
                column("Up-to-date", "integer"),
                column("Available", "integer"),
                column("Age", "string"),
            ],
            Box::new(move |o| {
                let s = &o["status"];
                vec![
                    o["metadata"]["name"].clone(),
                    json!(format!(
                        "{}/{}",
                        int(&s["readyReplicas"]),
                        int(&o["spec"]["replicas"])
                    )),
                    json!(int(&s["updatedReplicas"])),
                    json!(int(&s["availableReplicas"])),
                    json!(age(o, &clock)),
                ]
            }),
        ),
        ("apps", "daemonsets") => (
            vec![
                column("Name", "string"),
                column("Desired", "integer"),
                column("Current", "integer"),
                column("Ready", "integer"),
                column("Up-to-date", "integer"),
                column("Available", "integer"),
                column("Node Selector", "string"),
                column("Age", "string"),
            ],
            Box::new(move |o| {
                let s = &o["status"];
                let selector: Vec<String> = o["spec"]["template"]["spec"]["nodeSelector"]
                    .as_object()
                    .map(|m| {
                        m.iter()
                            .map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or_default()))
                            .collect()
                    })
                    .unwrap_or_default();
                let selector = if selector.is_empty() {
                    "<none>".to_string()
                } else {
                    selector.join(",")
                };
                vec![
                    o["metadata"]["name"].clone(),
                    json!(int(&s["desiredNumberScheduled"])),
                    json!(int(&s["currentNumberScheduled"])),
                    json!(int(&s["numberReady"])),
                    json!(int(&s["updatedNumberScheduled"])),
                    json!(int(&s["numberAvailable"])),
                    json!(selector),
                    json!(age(o, &clock)),
                ]
            }),
        ),
        ("batch", "jobs") => (
            vec![
                column("Name", "string"),
                column("Status", "string"),
                column("Completions", "string"),
                column("Duration", "string"),
                column("Age", "string"),
            ],
            Box::new(move |o| {
                vec![
                    o["metadata"]["name"].clone(),
                    json!(job_status(o)),
                    json!(job_completions(o)),
                    json!(job_duration(o, &clock)),
                    json!(age(o, &clock)),
                ]
            }),
        ),
        ("", "nodes") => (
            vec![
                column("Name", "string"),
                column("Status", "string"),
                column("Roles", "string"),
                column("Age", "string"),
                column("Version", "string"),
            ],
            Box::new(move |o| {
                let ready = o["status"]["conditions"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .any(|c| c["type"] == "Ready" && c["status"] == "True");
                // kubectl's printNode (kubernetes/kubernetes `pkg/printers/internalversion/printers.go`): a
                // cordoned node reads `Ready,SchedulingDisabled`.
                let mut status = if ready { "Ready" } else { "NotReady" }.to_string();
                if o["spec"]["unschedulable"] == true {
                    status.push_str(",SchedulingDisabled");
                }
                vec![
                    o["metadata"]["name"].clone(),
                    json!(status),
                    json!("<none>"),
                    json!(age(o, &clock)),
                    o["status"]["nodeInfo"]["kubeletVersion"].clone(),
                ]
            }),
        ),
        ("", "pods") => (
            vec![
                column("Name", "string"),
                column("Ready", "string"),
                column("Status", "string"),
                column("Restarts", "string"),
                column("Age", "string"),
                wide("IP", "string"),
                wide("Node", "string"),
                wide("Nominated Node", "string"),
                wide("Readiness Gates", "string"),
            ],
            Box::new(move |o| {
                let (ready, reason, restarts) = pod_cells(o);
                let or_none =
                    |v: &Value| json!(v.as_str().filter(|s| !s.is_empty()).unwrap_or("<none>"));
                vec![
                    o["metadata"]["name"].clone(),
                    json!(ready),
                    json!(reason),
                    json!(restarts.to_string()),
                    json!(age(o, &clock)),
                    or_none(&o["status"]["podIP"]),
                    or_none(&o["spec"]["nodeName"]),
                    or_none(&o["status"]["nominatedNodeName"]),
                    json!("<none>"),
                ]
            }),
        ),
        ("", "events") => (
            vec![
                column("Last Seen", "string"),
                column("Type", "string"),
                column("Reason", "string"),
                column("Object", "string"),
                wide("Subobject", "string"),
                wide("Source", "string"),
                column("Message", "string"),
                wide("First Seen", "string"),
                wide("Count", "string"),
                wide("Name", "string"),
            ],
            Box::new(move |o| {
                let mut first = since(&o["firstTimestamp"], &clock);
                if o["firstTimestamp"].is_null() {
                    first = since(&o["eventTime"], &clock);
                }
                let mut last = since(&o["lastTimestamp"], &clock);
                if o["lastTimestamp"].is_null() {
                    last = first.clone();
                }
                let mut count = o["count"].as_i64().unwrap_or(0);
                if o["series"].is_object() {
                    last = since(&o["series"]["lastObservedTime"], &clock);
                    count = o["series"]["count"].as_i64().unwrap_or(0);
                } else if count == 0 {
                    count = 1;
                }
                let involved = &o["involvedObject"];
                let kind = involved["kind"].as_str().unwrap_or_default().to_lowercase();
                let target = match involved["name"].as_str().filter(|n| !n.is_empty()) {
                    Some(name) => format!("{kind}/{name}"),
                    None => kind,
                };
                let component = o["source"]["component"]
                    .as_str()
                    .filter(|c| !c.is_empty())
                    .or(o["reportingComponent"].as_str())
                    .unwrap_or_default();
                let host = o["source"]["host"]
                    .as_str()
                    .filter(|h| !h.is_empty())
                    .or(o["reportingInstance"].as_str())
                    .unwrap_or_default();
                let source = if host.is_empty() {
                    component.to_string()
                } else {
                    format!("{component}, {host}")
                };
                vec![
                    json!(last),
                    o["type"].clone(),
                    o["reason"].clone(),
                    json!(target),
                    json!(involved["fieldPath"].as_str().unwrap_or_default()),
                    json!(source),
                    json!(o["message"].as_str().unwrap_or_default().trim()),
                    json!(first),
                    json!(count.to_string()),
                    o["metadata"]["name"].clone(),
                ]
            }),
        ),
        ("", "persistentvolumeclaims") => (
            vec![
                column("Name", "string"),
                column("Status", "string"),
                column("Volume", "string"),
                column("Capacity", "string"),
                column("Access Modes", "string"),
                column("StorageClass", "string"),
                column("Age", "string"),
            ],
            Box::new(move |o| {
                vec![
                    o["metadata"]["name"].clone(),
                    o["status"]["phase"].clone(),
                    json!(o["spec"]["volumeName"].as_str().unwrap_or_default()),
                    json!(
                        o["status"]["capacity"]["storage"]
                            .as_str()
                            .unwrap_or_default()
                    ),
                    json!(access_modes(&o["status"]["accessModes"])),
                    json!(o["spec"]["storageClassName"].as_str().unwrap_or_default()),
                    json!(age(o, &clock)),
                ]
            }),
        ),
        ("apiextensions.k8s.io", "customresourcedefinitions") => (
            vec![column("Name", "string"), column("Created At", "date")],
            Box::new(|o| {
                vec![
                    o["metadata"]["name"].clone(),
                    o["metadata"]["creationTimestamp"].clone(),
                ]
            }),
        ),
        _ if rt.custom && !rt.printer_columns.is_empty() => {
            let extra = rt.printer_columns.clone();
            let mut columns = vec![column("Name", "string")];
            for c in &extra {
                let kind = c["type"].as_str().unwrap_or("string");
                columns.push(column(
                    c["name"].as_str().unwrap_or_default(),
                    if kind == "date" { "string" } else { kind },
                ));
            }
            (
                columns,
                Box::new(move |o| {
                    let mut cells = vec![o["metadata"]["name"].clone()];
                    for c in &extra {
                        let value = json_path(o, c["jsonPath"].as_str().unwrap_or_default());
                        if c["type"] == "date" {
                            let t = value
                                .as_str()
                                .and_then(|t| DateTime::parse_from_rfc3339(t).ok());
                            let now: DateTime<Utc> =
                                clock.epoch + chrono::Duration::milliseconds(clock.now.0 as i64);
                            cells.push(json!(
                                t.map(|t| human_duration(
                                    (now - t.with_timezone(&Utc)).num_seconds()
                                ))
                                .unwrap_or_else(|| "<unknown>".into())
                            ));
                        } else {
                            cells.push(printed(&value));
                        }
                    }
                    cells
                }),
            )
        }
        _ => (
            vec![column("Name", "string"), column("Age", "string")],
            Box::new(move |o| vec![o["metadata"]["name"].clone(), json!(age(o, &clock))]),
        ),
    }
}

fn access_modes(modes: &Value) -> String {
    modes
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(|m| match m {
            "ReadWriteOnce" => "RWO",
            "ReadOnlyMany" => "ROX",
            "ReadWriteMany" => "RWX",
            "ReadWriteOncePod" => "RWOP",
            other => other,
        })
        .collect::<Vec<_>>()
        .join(",")
}

/// Converts one object or a list into a Table.
pub fn to_table(rt: &ResourceType, body: &Value, clock: &Clock, include_object: &str) -> Value {
    // events.k8s.io Events print as the core Events they are stored as (one internal type).
    let events = super::eventsv1::is_events(rt);
    let (columns, cells) = if events {
        let core = resources::builtins()
            .into_iter()
            .find(|r| r.is("", "events"))
            .unwrap_or_else(|| rt.clone());
        layout(&core, clock)
    } else {
        layout(rt, clock)
    };
    let objects: Vec<&Value> = match body["items"].as_array() {
        Some(items) => items.iter().collect(),
        None => vec![body],
    };
    let rows: Vec<Value> = objects
        .iter()
        .map(|o| {
            let object = match include_object {
                "None" => Value::Null,
                "Object" => (*o).clone(),
                _ => json!({"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": o["metadata"]}),
            };
            let cells = if events {
                cells(&super::eventsv1::to_core(o))
            } else {
                cells(o)
            };
            json!({"cells": cells, "object": object})
        })
        .collect();
    let mut metadata = json!({"resourceVersion": body["metadata"]["resourceVersion"]});
    if let Some(token) = body["metadata"].get("continue") {
        metadata["continue"] = token.clone();
    }
    json!({"kind": "Table", "apiVersion": "meta.k8s.io/v1", "metadata": metadata,
        "columnDefinitions": columns, "rows": rows})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ages_print_like_kubectl() {
        assert_eq!(human_duration(5), "5s");
        assert_eq!(human_duration(150), "2m30s");
        assert_eq!(human_duration(3600), "60m");
        assert_eq!(human_duration(4 * 3600 + 60), "4h1m");
        assert_eq!(human_duration(3 * 86400), "3d");
    }
}
