//! GKE operations: the [`OperationRef`] of a started call, polling, and how a failed operation is
//! classified.
//!
//! A cluster create also removes the bootstrap pool the cluster had to be created with (GKE
//! Standard needs at least one pool at creation; a3ctl's pools are separate `node_pool`
//! resources). That follow-up happens here: once the `CREATE_CLUSTER` operation is `DONE`, each
//! poll looks at the cluster, starts the delete of [`BOOTSTRAP_POOL`] if it is still there and
//! reports `Running` until it is gone. Polling stays idempotent, so a resumed apply finishes the
//! job the same way.
//!
//! A `DONE` operation's `startTime` and `endTime` tell how long it ran ([`ran`]). A cluster create
//! reports its `CREATE_CLUSTER` operation's time: the bootstrap pool's removal after it is not
//! polled by name and not counted.

use super::cluster::BOOTSTRAP_POOL;
use super::{ClusterPath, ContainerAdapter, absent_or};
use crate::cloud::gcp::{classify_gax, classify_status};
use crate::cloud::{CloudError, CloudResult, ErrorClass, OpStatus, Polled, Started};
use crate::resource::Api;
use crate::resource::OperationRef;
use google_cloud_container_v1::model::Operation;

/// The [`Started`] for an operation GKE returned.
pub(super) fn started(path: &ClusterPath, op: &Operation) -> Started {
    Started::Operation(OperationRef {
        api: Api::Container,
        name: path.operation(&op.name),
    })
}

/// `google.rpc.Code` numbers → canonical names.
pub(crate) fn rpc_code_name(code: i32) -> &'static str {
    match code {
        0 => "OK",
        1 => "CANCELLED",
        2 => "UNKNOWN",
        3 => "INVALID_ARGUMENT",
        4 => "DEADLINE_EXCEEDED",
        5 => "NOT_FOUND",
        6 => "ALREADY_EXISTS",
        7 => "PERMISSION_DENIED",
        8 => "RESOURCE_EXHAUSTED",
        9 => "FAILED_PRECONDITION",
        10 => "ABORTED",
        11 => "OUT_OF_RANGE",
        12 => "UNIMPLEMENTED",
        13 => "INTERNAL",
        14 => "UNAVAILABLE",
        15 => "DATA_LOSS",
        16 => "UNAUTHENTICATED",
        _ => "UNKNOWN",
    }
}

/// The classified error of a `DONE` operation, if it failed.
// The conditions and `statusMessage` are deprecated in favour of `error`, but only the conditions
// carry GKE's code (GCE_STOCKOUT), and GKE still fills them in.
#[allow(deprecated)]
pub(super) fn failure(op: &Operation) -> Option<CloudError> {
    let condition = op
        .nodepool_conditions
        .iter()
        .chain(op.cluster_conditions.iter())
        .find_map(|c| {
            c.code
                .name()
                .filter(|n| *n != "UNKNOWN")
                .map(str::to_string)
        });
    let (status, message) = match &op.error {
        Some(e) if e.code != 0 || !e.message.is_empty() => {
            (rpc_code_name(e.code).to_string(), e.message.clone())
        }
        _ if !op.status_message.is_empty() => ("UNKNOWN".to_string(), op.status_message.clone()),
        _ => return None,
    };
    // A condition code (GCE_STOCKOUT, GCE_QUOTA_EXCEEDED) says more than the canonical code.
    let mut error = match condition.as_deref() {
        Some(code @ ("GCE_STOCKOUT" | "GCE_QUOTA_EXCEEDED")) => {
            let mut e = classify_status(None, code, "", &message);
            if code == "GCE_STOCKOUT" {
                e.class = ErrorClass::Capacity;
            }
            e
        }
        _ => classify_status(None, &status, "", &message),
    };
    // An operation that ended is never retried as-is: a transient-looking code is just "other".
    if error.class.is_retryable() {
        error.class = ErrorClass::Other;
    }
    error.message = format!("GKE operation {} failed: {}", op.name, error.message);
    Some(error)
}

/// `https://container.googleapis.com/v1/projects/123/zones/z/clusters/c` → the cluster's path in
/// `project`. GKE's links name the project by its number ("projects/123/...", `Operation.targetLink`
/// in <https://cloud.google.com/kubernetes-engine/docs/reference/rest/v1/projects.locations.operations#Operation>),
/// so the project is the one the operation was asked of, never the link's.
fn cluster_of_target(link: &str, project: &str) -> Option<ClusterPath> {
    let path = link.split_once("/v1/").map(|(_, p)| p).unwrap_or(link);
    let path = path.replacen("/zones/", "/locations/", 1);
    let cluster = path.split("/nodePools/").next()?;
    let mut cluster = ClusterPath::parse(cluster).ok()?;
    cluster.project = project.to_string();
    Some(cluster)
}

impl ContainerAdapter {
    pub(super) async fn poll_operation(&self, operation: &OperationRef) -> CloudResult<Polled> {
        let op = self
            .client
            .get_operation()
            .set_name(&operation.name)
            .send()
            .await
            .map_err(|e| classify_gax(&e))?;
        let status = op.status.name().unwrap_or("STATUS_UNSPECIFIED");
        if status != "DONE" {
            return Ok(OpStatus::Running {
                progress: Some(progress(&op)),
            }
            .into());
        }
        let status = if let Some(error) = failure(&op) {
            OpStatus::Failed(error)
        } else if op.operation_type.name() == Some("CREATE_CLUSTER") {
            // `projects/P/locations/L/operations/X`: P as a3ctl named it.
            let project = operation.name.split('/').nth(1).unwrap_or_default();
            self.remove_bootstrap_pool(&op, project).await?
        } else {
            OpStatus::Done
        };
        let ran = match &status {
            OpStatus::Running { .. } => None,
            _ => ran(&op),
        };
        Ok(Polled { status, ran })
    }

    /// The follow-up of a cluster create: delete the bootstrap pool, report `Running` until gone.
    async fn remove_bootstrap_pool(&self, op: &Operation, project: &str) -> CloudResult<OpStatus> {
        let Some(path) = cluster_of_target(&op.target_link, project) else {
            return Ok(OpStatus::Done);
        };
        let Some(cluster) = absent_or(self.client.get_cluster().set_name(path.id()).send().await)?
        else {
            return Ok(OpStatus::Done);
        };
        let Some(pool) = cluster.node_pools.iter().find(|p| p.name == BOOTSTRAP_POOL) else {
            return Ok(OpStatus::Done);
        };
        let removing = || {
            Ok(OpStatus::Running {
                progress: Some(format!("removing the bootstrap node pool {BOOTSTRAP_POOL}")),
            })
        };
        if pool.status.name() == Some("STOPPING") {
            return removing();
        }
        let name = format!("{}/nodePools/{BOOTSTRAP_POOL}", path.id());
        match self.client.delete_node_pool().set_name(name).send().await {
            Ok(_) => removing(),
            Err(e) => {
                let e = classify_gax(&e);
                match e.class {
                    // Another operation runs on the cluster (or the pool just went): look again.
                    ErrorClass::Busy | ErrorClass::NotFound | ErrorClass::Transient => removing(),
                    _ => Err(e),
                }
            }
        }
    }
}

/// How long a `DONE` operation ran, from `startTime` ("the time the operation started") to
/// `endTime` ("the time the operation completed"), both "in RFC3339 text format"
/// (<https://cloud.google.com/kubernetes-engine/docs/reference/rest/v1/projects.locations.operations#Operation>).
fn ran(op: &Operation) -> Option<std::time::Duration> {
    crate::cloud::optime::between(Some(&op.start_time), Some(&op.end_time))
}

/// A short progress line: the operation type and status, with GKE's stage counters if any.
fn progress(op: &Operation) -> String {
    let kind = op.operation_type.name().unwrap_or("OPERATION");
    let status = op.status.name().unwrap_or("RUNNING");
    let stages: Vec<String> = op
        .progress
        .iter()
        .flat_map(|p| p.metrics.iter())
        .filter(|m| !m.name.ends_with("_TOTAL"))
        .filter_map(|m| {
            // `X` of `X_TOTAL`, or `X_DONE` of `X_TOTAL` (a node upgrade's `NODES_DONE` of
            // `NODES_TOTAL`: "nodes 3/8").
            let stage = m.name.strip_suffix("_DONE").unwrap_or(&m.name);
            let total = op
                .progress
                .as_ref()?
                .metrics
                .iter()
                .find(|t| t.name == format!("{stage}_TOTAL"))?;
            Some(format!(
                "{} {}/{}",
                stage.to_ascii_lowercase(),
                metric_value(m)?,
                metric_value(total)?
            ))
        })
        .collect();
    if stages.is_empty() {
        format!("{kind} {status}")
    } else {
        format!("{kind} {status} ({})", stages.join(", "))
    }
}

fn metric_value(m: &google_cloud_container_v1::model::operation_progress::Metric) -> Option<i64> {
    m.int_value().copied()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn target_links_name_clusters() {
        let c = cluster_of_target(
            "https://container.googleapis.com/v1/projects/123/zones/us-central1-a/clusters/c/nodePools/x",
            "p",
        )
        .unwrap();
        assert_eq!(c.id(), "projects/p/locations/us-central1-a/clusters/c");
    }

    #[test]
    fn a_node_upgrade_reports_its_nodes_done() {
        let op: Operation = serde_json::from_value(serde_json::json!({
            "name": "operation-1", "status": "RUNNING", "operationType": "UPGRADE_NODES",
            "progress": {"metrics": [
                {"name": "NODES_TOTAL", "intValue": "8"},
                {"name": "NODES_FAILED", "intValue": "0"},
                {"name": "NODES_COMPLETE", "intValue": "3"},
                {"name": "NODES_DONE", "intValue": "3"},
            ]},
        }))
        .unwrap();
        assert_eq!(progress(&op), "UPGRADE_NODES RUNNING (nodes 3/8)");
    }

    #[test]
    fn stockouts_are_capacity() {
        let op: Operation = serde_json::from_value(serde_json::json!({
            "name": "operation-1", "status": "DONE",
            "error": {"code": 8, "message": "[GCE_STOCKOUT]: Instance creation failed"},
            "nodepoolConditions": [{"code": "GCE_STOCKOUT", "message": "x"}],
        }))
        .unwrap();
        assert_eq!(failure(&op).unwrap().class, ErrorClass::Capacity);
        let quota: Operation = serde_json::from_value(serde_json::json!({
            "name": "operation-2", "status": "DONE",
            "error": {"code": 8, "message": "Insufficient regional quota to satisfy request"},
        }))
        .unwrap();
        assert_eq!(failure(&quota).unwrap().class, ErrorClass::Quota);
    }
}
