//! A pod's log (`GET /api/v1/namespaces/NS/pods/NAME/log`, what `kubectl logs` reads): the
//! output the simulated kubelet kept for a container ([`super::controllers::runs`]). A container
//! that ended has its whole log; one that runs has printed nothing (what a container prints is
//! decided when it ends: [`super::controllers::runs`], [`super::controllers::outcomes`]).
//!
//! Options: `container` (required when the pod has more than one container), `tailLines`,
//! `limitBytes`, `timestamps` (each line stamped with when the container ended), `previous`
//! (there is never a previous instance: containers do not restart). `follow` returns what there
//! is and ends the stream, as it does for a container that has ended.
//!
//! Errors as the API server and the kubelet give them: `pods "P" not found` (404), `a container
//! name must be specified for pod P, choose one of: [A B]` (400, with `or one of the init
//! containers: [C]` when there are some), `container C is not valid for pod P` (400), `pod P does
//! not have a host assigned` (400), `container "C" in pod "P" is waiting to start: REASON` (400),
//! `previous terminated container "C" in pod "P" not found` (400).

use super::KubeCluster;
use super::status::Status;
use crate::http::Query;
use serde_json::Value;

fn names(pod: &Value, list: &str) -> Vec<String> {
    pod["spec"][list]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|c| c["name"].as_str().map(str::to_string))
        .collect()
}

/// The log text of one container of pod `namespace/name`.
pub fn read(
    cluster: &KubeCluster,
    namespace: &str,
    name: &str,
    query: &Query,
) -> Result<String, Status> {
    let pod = cluster
        .store
        .get("", "pods", namespace, name)
        .ok_or_else(|| Status::not_found("", "pods", name))?;
    let regular = names(pod, "containers");
    let init = names(pod, "initContainers");
    let container = match query.get("container").filter(|c| !c.is_empty()) {
        Some(c) => c.to_string(),
        None if regular.len() == 1 => regular[0].clone(),
        None => {
            let mut message = format!(
                "a container name must be specified for pod {name}, choose one of: [{}]",
                regular.join(" ")
            );
            if !init.is_empty() {
                message.push_str(&format!(
                    " or one of the init containers: [{}]",
                    init.join(" ")
                ));
            }
            return Err(Status::bad_request(message));
        }
    };
    if !regular.contains(&container) && !init.contains(&container) {
        return Err(Status::bad_request(format!(
            "container {container} is not valid for pod {name}"
        )));
    }
    if pod["spec"]["nodeName"].as_str().is_none_or(str::is_empty) {
        return Err(Status::bad_request(format!(
            "pod {name} does not have a host assigned"
        )));
    }
    if query.flag("previous") {
        return Err(Status::bad_request(format!(
            "previous terminated container \"{container}\" in pod \"{name}\" not found"
        )));
    }
    let state = ["containerStatuses", "initContainerStatuses"]
        .iter()
        .flat_map(|list| pod["status"][*list].as_array().into_iter().flatten())
        .find(|s| s["name"] == container.as_str())
        .map(|s| s["state"].clone())
        .unwrap_or(Value::Null);
    if state["running"].is_null() && state["terminated"].is_null() {
        let reason = state["waiting"]["reason"]
            .as_str()
            .unwrap_or("ContainerCreating");
        return Err(Status::bad_request(format!(
            "container \"{container}\" in pod \"{name}\" is waiting to start: {reason}"
        )));
    }
    let key = super::store::object_key("", "pods", namespace, name);
    let log = cluster
        .controllers
        .pods
        .get(&key)
        .and_then(|run| run.ends.get(&container))
        .filter(|_| !state["terminated"].is_null())
        .map(|end| end.log.clone())
        .unwrap_or_default();
    let mut lines: Vec<String> = log.lines().map(str::to_string).collect();
    if let Some(tail) = query.get("tailLines").and_then(|t| t.parse::<usize>().ok()) {
        let skip = lines.len().saturating_sub(tail);
        lines.drain(..skip);
    }
    if query.flag("timestamps") {
        let at = state["terminated"]["finishedAt"]
            .as_str()
            .or(state["running"]["startedAt"].as_str())
            .unwrap_or_default()
            .replace('Z', ".000000000Z");
        for line in &mut lines {
            *line = format!("{at} {line}");
        }
    }
    let mut text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    if let Some(limit) = query
        .get("limitBytes")
        .and_then(|l| l.parse::<usize>().ok())
    {
        let mut cut = limit.min(text.len());
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        text.truncate(cut);
    }
    Ok(text)
}
