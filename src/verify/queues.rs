//! `kueue/flavor/<flavor>`: Kueue's quotas against the nodes behind them. For each ResourceFlavor
//! apply made for a GPU pool, the `nvidia.com/gpu` nominal quota of that flavor summed over
//! **every** ClusterQueue of the cluster (a3ctl's and any a team made with kubectl) must not exceed
//! the GPUs of the flavor's Ready, schedulable nodes; otherwise Kueue admits jobs whose pods
//! then wait for GPUs that are not there. The rest of Kueue's checks (the queue exists, is
//! Active, has the blueprint's quota) are in [`super::checks`].
//!
//! Kueue's rules this follows (kubernetes-sigs/kueue `apis/kueue/v1beta1/clusterqueue_types.go`
//! and `resourceflavor_types.go`, <https://kueue.sigs.k8s.io/docs/concepts/resource_flavor/>): a
//! ClusterQueue's quota is `spec.resourceGroups[].flavors[].resources[]` `{name, nominalQuota}`,
//! per flavor by name; a flavor's nodes are those carrying all of its `spec.nodeLabels` (no labels:
//! every node), and its `spec.tolerations` are added to the pods it admits. Which nodes can run
//! those pods follows the scheduler (<https://kubernetes.io/docs/concepts/scheduling-eviction/taint-and-toleration/>):
//! a node counts when it is `Ready`, not cordoned (`spec.unschedulable`), and every `NoSchedule`
//! or `NoExecute` taint on it is tolerated by the flavor (the GPU taint `nvidia.com/gpu` is, by
//! a3ctl's flavors); its GPUs are its allocatable `nvidia.com/gpu`. Nodes that do not count are
//! named in the check, by reason, never silently dropped. Borrowing within a cohort (the
//! blueprint's `[[queue]]`s) is not looked at on its own: it moves nominal quota between queues of
//! a cohort, never above the sum this check bounds.

use super::{Check, Expected, ExpectedQueue, GPU_RESOURCE, KueueSnapshot, integer_quantity};
use serde_json::Value;

/// How many names of nodes that do not count a message lists.
const SHOWN: usize = 3;

/// One `kueue/flavor/<flavor>` check per GPU pool flavor of `queue`; none when Kueue is not
/// served (the ClusterQueue check already fails then).
pub fn flavor_checks(
    expected: &Expected,
    queue: &ExpectedQueue,
    kueue: &KueueSnapshot,
    nodes: &[Value],
) -> Vec<Check> {
    let KueueSnapshot::Served {
        cluster_queues,
        flavors,
        ..
    } = kueue
    else {
        return Vec::new();
    };
    queue
        .flavors
        .iter()
        .map(|flavor| flavor_check(expected, flavor, cluster_queues, flavors, nodes))
        .collect()
}

/// Why a node of a flavor does not count.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Left {
    NotReady,
    Cordoned,
    Tainted,
    NoGpus,
}

impl Left {
    fn reason(self) -> &'static str {
        match self {
            Left::NotReady => "NotReady",
            Left::Cordoned => "cordoned",
            Left::Tainted => "tainted",
            Left::NoGpus => "without allocatable nvidia.com/gpu",
        }
    }
}

fn name_of(object: &Value) -> &str {
    object["metadata"]["name"].as_str().unwrap_or_default()
}

fn flavor_check(
    expected: &Expected,
    flavor: &str,
    cluster_queues: &[Value],
    flavors: &[Value],
    nodes: &[Value],
) -> Check {
    let name = format!("kueue/flavor/{flavor}");
    let bp = &expected.blueprint_path;
    let Some(live) = flavors.iter().find(|f| name_of(f) == flavor) else {
        return Check::fail(
            name,
            format!(
                "ResourceFlavor `{flavor}` not found: no ClusterQueue can admit jobs to its nodes"
            ),
            format!(
                "run `a3ctl plan {bp}` to see what is missing and `a3ctl apply {bp}` to create it"
            ),
        );
    };
    let holders = holders(cluster_queues, flavor);
    let quota: u64 = holders.iter().map(|(_, q)| q).sum();
    let mut gpus = 0u64;
    let mut counted = 0usize;
    let mut left: Vec<(Left, String)> = Vec::new();
    for node in nodes.iter().filter(|n| selects(live, n)) {
        match standing(live, node) {
            Ok(n) => {
                gpus += n;
                counted += 1;
            }
            Err(why) => left.push((why, describe(why, live, node))),
        }
    }
    left.sort();
    let queues = holders_text(&holders);
    let not_counted = not_counted_text(&left);
    if quota > gpus {
        let mut hint = format!(
            "Kueue admits jobs for {quota} GPUs and their pods wait for GPUs that are not there: lower the quotas (`kubectl edit clusterqueue NAME`) until they sum to at most {gpus}, or bring the nodes back (`a3ctl apply {bp}` resizes the pool to the blueprint's `nodes`)"
        );
        if !left.is_empty() {
            hint.push_str(
                "; uncordon, untaint or repair the nodes not counted (`kubectl describe node NAME`)",
            );
        }
        return Check::fail(
            name,
            format!(
                "{queues} {} {quota} {GPU_RESOURCE} of ResourceFlavor `{flavor}`, more than the {gpus} GPUs of its {counted} Ready, schedulable node(s){not_counted}",
                if holders.len() == 1 { "holds" } else { "hold" },
            ),
            hint,
        );
    }
    Check::pass(
        name,
        format!(
            "{queues} {} {quota} of the {gpus} {GPU_RESOURCE} of {counted} Ready, schedulable node(s){not_counted}",
            if holders.len() == 1 { "holds" } else { "hold" },
        ),
    )
}

/// Every ClusterQueue that lists `flavor` with an `nvidia.com/gpu` quota, with that quota.
fn holders(cluster_queues: &[Value], flavor: &str) -> Vec<(String, u64)> {
    let mut out = Vec::new();
    for cq in cluster_queues {
        let quotas: Vec<u64> = cq["spec"]["resourceGroups"]
            .as_array()
            .into_iter()
            .flatten()
            .flat_map(|g| g["flavors"].as_array().into_iter().flatten())
            .filter(|f| f["name"] == flavor)
            .flat_map(|f| f["resources"].as_array().into_iter().flatten())
            .filter(|r| r["name"] == GPU_RESOURCE)
            .map(|r| integer_quantity(&r["nominalQuota"]).unwrap_or(0))
            .collect();
        if !quotas.is_empty() {
            out.push((name_of(cq).to_string(), quotas.iter().sum()));
        }
    }
    out
}

/// "ClusterQueue `a3-queue` (32)", "ClusterQueues `a3-queue` (32) and `team-b` (16)", or "No
/// ClusterQueue".
fn holders_text(holders: &[(String, u64)]) -> String {
    let named: Vec<String> = holders
        .iter()
        .map(|(name, quota)| format!("`{name}` ({quota})"))
        .collect();
    match named.as_slice() {
        [] => "No ClusterQueue".to_string(),
        [one] => format!("ClusterQueue {one}"),
        [init @ .., last] => format!("ClusterQueues {} and {last}", init.join(", ")),
    }
}

/// "; not counted: 1 node cordoned (`a`), 2 nodes NotReady (`b`, `c`)", or nothing.
fn not_counted_text(left: &[(Left, String)]) -> String {
    if left.is_empty() {
        return String::new();
    }
    let mut groups: Vec<String> = Vec::new();
    let mut reasons: Vec<Left> = left.iter().map(|(why, _)| *why).collect();
    reasons.dedup();
    for reason in reasons {
        let names: Vec<&str> = left
            .iter()
            .filter(|(why, _)| *why == reason)
            .map(|(_, text)| text.as_str())
            .collect();
        let mut shown = names
            .iter()
            .take(SHOWN)
            .copied()
            .collect::<Vec<_>>()
            .join(", ");
        if names.len() > SHOWN {
            shown.push_str(&format!(" and {} more", names.len() - SHOWN));
        }
        groups.push(format!(
            "{} node{} {} ({shown})",
            names.len(),
            if names.len() == 1 { "" } else { "s" },
            reason.reason()
        ));
    }
    format!("; not counted: {}", groups.join(", "))
}

/// The node as a message names it: "`name`", with the untolerated taint of a tainted node.
fn describe(why: Left, flavor: &Value, node: &Value) -> String {
    let name = name_of(node);
    match why {
        Left::Tainted => match blocking_taint_text(flavor, node) {
            Some(taint) => format!("`{name}` {taint}"),
            None => format!("`{name}`"),
        },
        _ => format!("`{name}`"),
    }
}

/// Whether the flavor's `nodeLabels` select `node` (all of them, as Kueue matches them).
fn selects(flavor: &Value, node: &Value) -> bool {
    let labels = &node["metadata"]["labels"];
    flavor["spec"]["nodeLabels"]
        .as_object()
        .into_iter()
        .flatten()
        .all(|(key, value)| &labels[key] == value)
}

/// The node's GPUs when it can run the flavor's pods, else why not.
fn standing(flavor: &Value, node: &Value) -> Result<u64, Left> {
    let ready = node["status"]["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|c| c["type"] == "Ready" && c["status"] == "True");
    if !ready {
        return Err(Left::NotReady);
    }
    if node["spec"]["unschedulable"] == true {
        return Err(Left::Cordoned);
    }
    if blocking_taints(flavor, node).next().is_some() {
        return Err(Left::Tainted);
    }
    match integer_quantity(&node["status"]["allocatable"][GPU_RESOURCE]) {
        Some(n) if n > 0 => Ok(n),
        _ => Err(Left::NoGpus),
    }
}

/// The node's `NoSchedule` and `NoExecute` taints the flavor does not tolerate (the cordon's own
/// `node.kubernetes.io/unschedulable` taint is reported as a cordon).
fn blocking_taints<'a>(flavor: &'a Value, node: &'a Value) -> impl Iterator<Item = &'a Value> {
    node["spec"]["taints"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|t| matches!(t["effect"].as_str(), Some("NoSchedule" | "NoExecute")))
        .filter(|t| t["key"] != "node.kubernetes.io/unschedulable")
        .filter(move |t| {
            !flavor["spec"]["tolerations"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|toleration| tolerates(toleration, t))
        })
}

fn blocking_taint_text(flavor: &Value, node: &Value) -> Option<String> {
    let taint = blocking_taints(flavor, node).next()?;
    let key = taint["key"].as_str().unwrap_or_default();
    let effect = taint["effect"].as_str().unwrap_or_default();
    Some(match taint["value"].as_str().filter(|v| !v.is_empty()) {
        Some(value) => format!("{key}={value}:{effect}"),
        None => format!("{key}:{effect}"),
    })
}

/// Kubernetes' toleration match (`k8s.io/api/core/v1` `Toleration.ToleratesTaint`): the effect is
/// empty or equal; an empty key with `Exists` matches every key; `Exists` matches any value,
/// `Equal` (the default) the same value.
fn tolerates(toleration: &Value, taint: &Value) -> bool {
    let effect = toleration["effect"].as_str().unwrap_or_default();
    if !effect.is_empty() && taint["effect"] != effect {
        return false;
    }
    let key = toleration["key"].as_str().unwrap_or_default();
    let exists = toleration["operator"] == "Exists";
    if key.is_empty() {
        return exists;
    }
    if taint["key"] != key {
        return false;
    }
    exists
        || toleration["value"].as_str().unwrap_or_default()
            == taint["value"].as_str().unwrap_or_default()
}
