//! The priority Kueue gives a queued job's Workload (kubernetes-sigs/kueue v0.17.1
//! `pkg/controller/jobframework/reconciler.go`, `ExtractPriority`, and `pkg/util/priority/
//! priority.go`; <https://kueue.sigs.k8s.io/docs/concepts/workload_priority_class/>):
//! - the job's label `kueue.x-k8s.io/priority-class` names a cluster-scoped
//!   `WorkloadPriorityClass`, whose `value` it gets;
//! - else the first pod template with a `priorityClassName` names a scheduling.k8s.io
//!   `PriorityClass`, whose `value` it gets;
//! - else the `globalDefault` PriorityClass (the lowest value when several are), else 0.
//!
//! A named class that does not exist is an error where Kueue makes the Workload: it makes none
//! (the reconciler returns the lookup's NotFound and retries with backoff), so the job stays
//! suspended, is not counted as pending and is never admitted until the class exists. No
//! webhook refuses the job (`ValidateJobOnCreate` does not look the class up), so `kubectl
//! apply` succeeds.
//!
//! Kueue reads the class once, when it makes the Workload: a class's later change of `value`
//! does not reach Workloads already made (the `value` field's doc in
//! `apis/kueue/v1beta2/workloadpriorityclass_types.go`). JobSets' Workloads keep theirs
//! ([`super::jobsets`]); the simulator makes no Workload for a Job, so a Job's priority is read
//! again at each admission pass until it is admitted.

use crate::kube::KubeCluster;
use serde_json::{Value, json};

/// The label a job selects its WorkloadPriorityClass with.
pub const LABEL: &str = "kueue.x-k8s.io/priority-class";

/// What a Workload's priority came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// A Kueue `WorkloadPriorityClass` of this name.
    Workload(String),
    /// A scheduling.k8s.io `PriorityClass` of this name.
    Pod(String),
}

/// A Workload's priority and where it came from (none: the default 0).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Priority {
    pub value: i64,
    pub source: Option<Source>,
}

/// The priority of a job with `labels` and pod `templates`, or `Err` with the name of the class
/// it names that does not exist (Kueue then makes no Workload).
pub fn of(cluster: &KubeCluster, labels: &Value, templates: &[&Value]) -> Result<Priority, String> {
    if let Some(name) = labels[LABEL].as_str().filter(|n| !n.is_empty()) {
        let class = cluster
            .store
            .get(super::kueue::GROUP, "workloadpriorityclasses", "", name)
            .ok_or_else(|| name.to_string())?;
        return Ok(Priority {
            value: class["value"].as_i64().unwrap_or(0),
            source: Some(Source::Workload(name.to_string())),
        });
    }
    let pod_class = templates
        .iter()
        .filter_map(|t| t["spec"]["priorityClassName"].as_str())
        .find(|n| !n.is_empty());
    if let Some(name) = pod_class {
        let class = cluster
            .store
            .get("scheduling.k8s.io", "priorityclasses", "", name)
            .ok_or_else(|| name.to_string())?;
        return Ok(Priority {
            value: class["value"].as_i64().unwrap_or(0),
            source: Some(Source::Pod(name.to_string())),
        });
    }
    let default = cluster
        .store
        .list("scheduling.k8s.io", "priorityclasses", None)
        .into_iter()
        .filter(|c| c["globalDefault"] == true)
        .min_by_key(|c| c["value"].as_i64().unwrap_or(0));
    Ok(match default {
        Some(class) => Priority {
            value: class["value"].as_i64().unwrap_or(0),
            source: class["metadata"]["name"]
                .as_str()
                .map(|n| Source::Pod(n.to_string())),
        },
        None => Priority {
            value: 0,
            source: None,
        },
    })
}

/// Writes `priority` into a Workload's `spec` as the Workload's API `version` spells it: from
/// `v1beta2`, `priorityClassRef` (`group`, `kind`, `name`); in `v1beta1`, `priorityClassName`
/// and `priorityClassSource` (`apis/kueue/v1beta1/workload_types.go`,
/// `WorkloadPriorityClassSource`, `PodPriorityClassSource`).
pub fn write(spec: &mut Value, priority: &Priority, version: &str) {
    spec["priority"] = json!(priority.value);
    let Some(source) = &priority.source else {
        return;
    };
    let (group, kind, name, source_name) = match source {
        Source::Workload(name) => (
            super::kueue::GROUP,
            "WorkloadPriorityClass",
            name,
            "kueue.x-k8s.io/workloadpriorityclass",
        ),
        Source::Pod(name) => (
            "scheduling.k8s.io",
            "PriorityClass",
            name,
            "scheduling.k8s.io/priorityclass",
        ),
    };
    if version == "v1beta1" {
        spec["priorityClassName"] = json!(name);
        spec["priorityClassSource"] = json!(source_name);
    } else {
        spec["priorityClassRef"] = json!({"group": group, "kind": kind, "name": name});
    }
}
