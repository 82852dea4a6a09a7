//! The status a pod shows at one moment — phase, conditions, IPs, and every container's state —
//! computed from how far the scheduler and the kubelet have brought it ([`super::pods`]'s
//! [`PodRun`]) and how its containers ended ([`super::runs`]).

use super::pods::{Container, PodRun, containers, pull_sync, pulled_at};
use super::{Clock, hash};
use crate::clock::SimTime;
use serde_json::{Value, json};

/// The image reference as the container runtime reports it (`nginx` →
/// `docker.io/library/nginx:latest`).
fn normalized_image(image: &str) -> String {
    let (name, digest) = match image.split_once('@') {
        Some((n, d)) => (n, Some(d)),
        None => (image, None),
    };
    let first = name.split('/').next().unwrap_or_default();
    let has_domain =
        name.contains('/') && (first.contains('.') || first.contains(':') || first == "localhost");
    let mut full = if has_domain {
        name.to_string()
    } else if name.contains('/') {
        format!("docker.io/{name}")
    } else {
        format!("docker.io/library/{name}")
    };
    let last = full.rsplit('/').next().unwrap_or_default();
    if digest.is_none() && !last.contains(':') {
        full.push_str(":latest");
    }
    match digest {
        Some(d) => format!("{full}@{d}"),
        None => full,
    }
}

fn sha(seed: &str) -> String {
    (0..4)
        .map(|i| format!("{:016x}", hash(&format!("{seed}/{i}"))))
        .collect()
}

fn condition(kind: &str, status: bool, at: &str, reason: Option<(&str, String)>) -> Value {
    let mut c = json!({"type": kind, "status": if status { "True" } else { "False" },
        "lastProbeTime": null, "lastTransitionTime": at});
    if let Some((reason, message)) = reason {
        c["reason"] = json!(reason);
        if !message.is_empty() {
            c["message"] = json!(message);
        }
    }
    c
}

/// The pod's status at `clock.now`.
pub fn status(pod: &Value, run: &PodRun, node: Option<&Value>, clock: &Clock) -> Value {
    let now = clock.now;
    let qos = pod["status"]["qosClass"].clone();
    let mut status = json!({"phase": "Pending"});
    if !qos.is_null() {
        status["qosClass"] = qos;
    }
    let (Some(scheduled), Some(node)) = (run.scheduled, node) else {
        if run.scheduling.is_failing() {
            let message = run.scheduling.failing.join("; ");
            status["conditions"] = json!([condition(
                "PodScheduled",
                false,
                &clock.ts(run.scheduling.failing_since),
                Some(("Unschedulable", message)),
            )]);
        }
        return status;
    };
    let all = containers(pod);
    let delay = run.start_delay_ms;
    let started = |c: &Container| {
        pulled_at(run, &c.name)
            .map(|t| t.plus_ms(delay))
            .filter(|t| *t <= now)
    };
    let inits: Vec<&Container> = all.iter().filter(|c| c.init).collect();
    let regular: Vec<&Container> = all.iter().filter(|c| !c.init).collect();
    let initialized: Option<SimTime> = if inits.is_empty() {
        Some(scheduled)
    } else {
        inits
            .iter()
            .map(|c| started(c))
            .collect::<Option<Vec<_>>>()
            .and_then(|t| t.into_iter().max())
    };
    let container_start = |c: &Container| {
        let own = started(c)?;
        Some(own.max(initialized?))
    };
    let ended = |c: &Container| {
        run.ends
            .get(&c.name)
            .filter(|e| !c.init && e.at <= now && container_start(c).is_some())
    };
    // Every regular container ended: the pod is done, its sidecars stopped with it.
    let finished: Option<(SimTime, bool)> = if regular.is_empty() {
        None
    } else {
        regular
            .iter()
            .map(|c| ended(c).map(|e| (e.at, e.exit_code == 0)))
            .collect::<Option<Vec<_>>>()
            .map(|ends| {
                let at = ends.iter().map(|(t, _)| *t).max().unwrap_or(scheduled);
                (at, ends.iter().all(|(_, ok)| *ok))
            })
    };
    let ready_at: Option<SimTime> = regular
        .iter()
        .map(|c| container_start(c).filter(|_| ended(c).is_none()))
        .collect::<Option<Vec<_>>>()
        .and_then(|t| t.into_iter().max());
    let sandbox = run.mount.done;
    let host_ip = node["status"]["addresses"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|a| a["type"] == "InternalIP")
        .and_then(|a| a["address"].as_str())
        .unwrap_or_default()
        .to_string();
    let uid = pod["metadata"]["uid"].as_str().unwrap_or_default();
    let pod_ip = {
        let cidr = node["spec"]["podCIDR"].as_str().unwrap_or("10.64.0.0/24");
        let prefix = cidr.rsplit_once('.').map(|(p, _)| p).unwrap_or("10.64.0");
        format!("{prefix}.{}", 2 + hash(uid) % 250)
    };
    let ts = |t: SimTime| clock.ts(t);
    let scheduled_ts = ts(scheduled);
    let unready: Vec<String> = regular
        .iter()
        .filter(|c| container_start(c).is_none())
        .map(|c| c.name.clone())
        .collect();
    let not_initialized: Vec<String> = inits
        .iter()
        .filter(|c| started(c).is_none())
        .map(|c| c.name.clone())
        .collect();
    let mut conditions = vec![];
    let completed = finished.map(|(at, ok)| (at, if ok { "PodCompleted" } else { "PodFailed" }));
    conditions.push(match (sandbox, completed) {
        (Some(_), Some((at, _))) => condition("PodReadyToStartContainers", false, &ts(at), None),
        (Some(t), None) => condition("PodReadyToStartContainers", true, &ts(t), None),
        (None, _) => condition("PodReadyToStartContainers", false, &scheduled_ts, None),
    });
    conditions.push(match initialized {
        Some(t) if completed.is_some_and(|(_, r)| r == "PodCompleted") => condition(
            "Initialized",
            true,
            &ts(t),
            Some(("PodCompleted", String::new())),
        ),
        Some(t) => condition("Initialized", true, &ts(t), None),
        None => condition(
            "Initialized",
            false,
            &scheduled_ts,
            Some((
                "ContainersNotInitialized",
                format!(
                    "containers with incomplete status: [{}]",
                    not_initialized.join(" ")
                ),
            )),
        ),
    });
    for kind in ["Ready", "ContainersReady"] {
        conditions.push(match ready_at {
            _ if completed.is_some() => {
                let (at, reason) = completed.unwrap_or((scheduled, "PodCompleted"));
                condition(kind, false, &ts(at), Some((reason, String::new())))
            }
            Some(t) => condition(kind, true, &ts(t), None),
            None => condition(
                kind,
                false,
                &scheduled_ts,
                Some((
                    "ContainersNotReady",
                    format!("containers with unready status: [{}]", unready.join(" ")),
                )),
            ),
        });
    }
    conditions.push(condition("PodScheduled", true, &scheduled_ts, None));
    status["conditions"] = Value::Array(conditions);
    status["hostIP"] = json!(host_ip);
    status["hostIPs"] = json!([{"ip": host_ip}]);
    if sandbox.is_some() {
        status["podIP"] = json!(pod_ip);
        status["podIPs"] = json!([{"ip": pod_ip}]);
    }
    status["startTime"] = json!(scheduled_ts);
    let running = regular.iter().all(|c| container_start(c).is_some());
    match finished {
        Some((_, true)) => status["phase"] = json!("Succeeded"),
        Some((_, false)) => status["phase"] = json!("Failed"),
        None if ready_at.is_some() || running => status["phase"] = json!("Running"),
        None => {}
    }
    let container_status = |c: &Container| -> Value {
        let image = c.spec["image"].as_str().unwrap_or_default();
        let start = if c.init && !c.sidecar {
            started(c)
        } else {
            container_start(c)
        };
        let mut out = json!({"name": c.name, "lastState": {}, "ready": false, "restartCount": 0,
            "image": image, "imageID": "", "started": false});
        match start {
            Some(t) => {
                let id = sha(&format!("{uid}/{}", c.name));
                out["containerID"] = json!(format!("containerd://{id}"));
                let normalized = normalized_image(image);
                let repository = normalized.split('@').next().unwrap_or_default();
                let repository = match repository.rsplit_once(':') {
                    Some((r, tag)) if !tag.contains('/') => r,
                    _ => repository,
                };
                out["image"] = json!(normalized);
                out["imageID"] = json!(format!("{repository}@sha256:{}", sha(image)));
                let end = match ended(c) {
                    Some(e) => Some((e.at, e.exit_code, e.reason())),
                    // A native sidecar is stopped when the main containers are done.
                    None if c.sidecar => finished.map(|(at, _)| (at, 0, "Completed")),
                    None => None,
                };
                if c.init && !c.sidecar {
                    out["state"] = json!({"terminated": {"exitCode": 0, "reason": "Completed",
                        "startedAt": ts(t), "finishedAt": ts(t), "containerID": format!("containerd://{id}")}});
                } else if let Some((at, code, reason)) = end {
                    out["state"] = json!({"terminated": {"exitCode": code, "reason": reason,
                        "startedAt": ts(t), "finishedAt": ts(at), "containerID": format!("containerd://{id}")}});
                } else {
                    out["state"] = json!({"running": {"startedAt": ts(t)}});
                    out["ready"] = json!(true);
                    out["started"] = json!(true);
                }
            }
            None => {
                let waiting = match (run.pulls.get(&c.name), run.mount.done) {
                    (Some(stage), Some(mounted)) if stage.is_failing() => {
                        let (attempt, _) = pull_sync(stage, mounted, now);
                        if attempt {
                            json!({"reason": "ErrImagePull", "message": stage.failing.join("; ")})
                        } else {
                            json!({"reason": "ImagePullBackOff",
                                "message": format!("Back-off pulling image \"{image}\"")})
                        }
                    }
                    _ if !c.init && !inits.is_empty() && initialized.is_none() => {
                        json!({"reason": "PodInitializing"})
                    }
                    _ if c.init && sandbox.is_none() => json!({"reason": "PodInitializing"}),
                    _ => json!({"reason": "ContainerCreating"}),
                };
                out["state"] = json!({"waiting": waiting});
            }
        }
        out
    };
    if !inits.is_empty() {
        status["initContainerStatuses"] =
            Value::Array(inits.iter().map(|c| container_status(c)).collect());
    }
    status["containerStatuses"] =
        Value::Array(regular.iter().map(|c| container_status(c)).collect());
    status
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn images_are_normalized_like_containerd() {
        assert_eq!(normalized_image("nginx"), "docker.io/library/nginx:latest");
        assert_eq!(
            normalized_image("bitnami/redis:7"),
            "docker.io/bitnami/redis:7"
        );
        assert_eq!(
            normalized_image("us-central1-docker.pkg.dev/p/r/app:v1"),
            "us-central1-docker.pkg.dev/p/r/app:v1"
        );
        assert_eq!(
            normalized_image("localhost:5000/app"),
            "localhost:5000/app:latest"
        );
    }
}
