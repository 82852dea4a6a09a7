//! `google.longrunning.Operation` (<https://google.aip.dev/151>), as Filestore and Artifact
//! Registry answer it, → [`OpStatus`]. Read from the operation's JSON form (the clients'
//! `Operation` serialises to the API's JSON), so both APIs share one reading: running with a
//! progress line, done, or failed with its `google.rpc.Status` classified like any other error —
//! never as retryable, since polling a failed operation again cannot make it succeed.
//!
//! How long an ended operation ran comes from its `metadata`'s `createTime` and `endTime`, where
//! the API's metadata message has them: Filestore's `google.cloud.common.OperationMetadata` does
//! ("the time the operation was created", "the time the operation finished running",
//! <https://cloud.google.com/filestore/docs/reference/rest/v1/projects.locations.operations#Operation>);
//! Artifact Registry's v1 `OperationMetadata` is empty and Service Usage's has only
//! `resourceNames`, so theirs report no time.

use super::classify_status;
use super::container::rpc_code_name;
use crate::cloud::{CloudError, CloudResult, ErrorClass, OpStatus, Polled};
use serde::Serialize;
use serde_json::Value;

/// The status of `operation` of `api` (`Filestore`, `Artifact Registry`); `progress` words a
/// running operation from its `metadata`.
pub fn status(
    api: &str,
    operation: &impl Serialize,
    progress: impl FnOnce(&Value) -> String,
) -> CloudResult<Polled> {
    let op = serde_json::to_value(operation).map_err(|e| {
        CloudError::new(
            ErrorClass::Other,
            format!("cannot read a {api} operation: {e}"),
        )
    })?;
    let name = op["name"].as_str().unwrap_or("(unnamed)");
    if op["done"] != true {
        return Ok(OpStatus::Running {
            progress: Some(progress(&op["metadata"])),
        }
        .into());
    }
    let ran = crate::cloud::optime::between_fields(&op["metadata"], "createTime", "endTime");
    let error = &op["error"];
    if !error.is_object() {
        return Ok(Polled {
            status: OpStatus::Done,
            ran,
        });
    }
    // A `google.rpc.Status` without a code is UNKNOWN (2).
    let code = error["code"].as_i64().unwrap_or(2) as i32;
    let message = error["message"].as_str().unwrap_or("operation failed");
    let mut e = classify_status(None, rpc_code_name(code), "", message);
    if e.class.is_retryable() {
        e.class = ErrorClass::Other;
    }
    e.message = format!("{api} operation {name} failed: {}", e.message);
    Ok(Polled {
        status: OpStatus::Failed(e),
        ran,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn running_done_and_failed_operations_read_alike() {
        let running = json!({"name": "op-1", "metadata": {"verb": "create"}});
        let status = status("Filestore", &running, |m| {
            format!("{} running", m["verb"].as_str().unwrap())
        });
        assert_eq!(
            status.unwrap().status,
            OpStatus::Running {
                progress: Some("create running".into())
            }
        );
        let done = json!({"name": "op-1", "done": true, "response": {}});
        assert_eq!(status_of(&done), OpStatus::Done);
        let failed = json!({"name": "op-1", "done": true, "error": {"code": 8, "message": "Quota limit exceeded"}});
        let OpStatus::Failed(e) = status_of(&failed) else {
            panic!("failed");
        };
        assert_eq!(e.class, ErrorClass::Quota, "{e:?}");
        assert_eq!(
            e.message,
            "Artifact Registry operation op-1 failed: Quota limit exceeded"
        );
        // UNAVAILABLE would be retried as a call; as an operation's end it is final.
        let unavailable =
            json!({"name": "op-2", "done": true, "error": {"code": 14, "message": "x"}});
        let OpStatus::Failed(e) = status_of(&unavailable) else {
            panic!("failed");
        };
        assert_eq!(e.class, ErrorClass::Other);
    }

    fn status_of(op: &Value) -> OpStatus {
        status("Artifact Registry", op, |_| String::new())
            .unwrap()
            .status
    }

    fn ran(op: &Value) -> Option<std::time::Duration> {
        status("Filestore", op, |_| String::new()).unwrap().ran
    }

    #[test]
    fn an_ended_operation_ran_from_its_metadata_create_time_to_its_end_time() {
        let metadata = json!({
            "@type": "type.googleapis.com/google.cloud.common.OperationMetadata",
            "createTime": "2026-11-25T17:00:00.125Z",
            "endTime": "2026-11-25T17:12:30.625Z",
        });
        let done = json!({"name": "op-1", "done": true, "metadata": metadata, "response": {}});
        assert_eq!(ran(&done), Some(std::time::Duration::from_millis(750_500)));
        let failed = json!({"name": "op-1", "done": true, "metadata": metadata,
            "error": {"code": 8, "message": "Quota limit exceeded"}});
        assert_eq!(
            ran(&failed),
            Some(std::time::Duration::from_millis(750_500))
        );
        // Running: no time yet, even with a create time.
        let running = json!({"name": "op-1", "metadata": {"createTime": "2026-11-25T17:00:00Z"}});
        assert_eq!(ran(&running), None);
        // Artifact Registry's empty metadata, and times that cannot be read: done, without a time.
        let empty =
            json!({"name": "op-1", "done": true, "metadata": {"@type": "x"}, "response": {}});
        assert_eq!(ran(&empty), None);
        assert_eq!(status_of(&empty), OpStatus::Done);
        let unreadable = json!({"name": "op-1", "done": true, "response": {},
            "metadata": {"createTime": "soon", "endTime": 12}});
        assert_eq!(ran(&unreadable), None);
        assert_eq!(status_of(&unreadable), OpStatus::Done);
    }
}
