//! How long a long-running operation ran, by the cloud's own record of it.
//!
//! Every API a3ctl waits on stamps its operations with RFC 3339 times (fractional seconds, `Z` or
//! an offset: GKE and the `google.longrunning` APIs answer in UTC, Compute with a Pacific offset):
//! - Compute `Operation`: `insertTime` (requested), `startTime` (started by the server), `endTime`
//!   (completed), all "in RFC3339 text format"
//!   (<https://cloud.google.com/compute/docs/reference/rest/v1/globalOperations>);
//! - GKE `Operation`: `startTime`, `endTime`, "in RFC3339 text format"
//!   (<https://cloud.google.com/kubernetes-engine/docs/reference/rest/v1/projects.locations.operations#Operation>);
//! - Filestore's `google.cloud.common.OperationMetadata`, in an operation's `metadata`:
//!   `createTime` ("the time the operation was created") and `endTime` ("the time the operation
//!   finished running"), `google.protobuf.Timestamp`s, RFC 3339 in JSON
//!   (<https://cloud.google.com/filestore/docs/reference/rest/v1/projects.locations.operations#Operation>,
//!   <https://protobuf.dev/programming-guides/json/>).
//!
//! Artifact Registry's v1 `OperationMetadata` is an empty message and Service Usage's carries only
//! `resourceNames`: their operations have no times, and report none.
//!
//! A timestamp that is missing or cannot be read gives no duration, never an error: how long an
//! operation took is for the progress line only, and must not fail a step.

use std::time::Duration;

/// The time from `start` to `end`, both RFC 3339; `None` when either is missing or unreadable, or
/// `end` comes before `start`.
pub fn between(start: Option<&str>, end: Option<&str>) -> Option<Duration> {
    let parse = |text: Option<&str>| chrono::DateTime::parse_from_rfc3339(text?.trim()).ok();
    let (start, end) = (parse(start)?, parse(end)?);
    end.signed_duration_since(start).to_std().ok()
}

/// [`between`] for the text fields `start` and `end` of a JSON object (`startTime`, `endTime` ...).
pub fn between_fields(object: &serde_json::Value, start: &str, end: &str) -> Option<Duration> {
    between(object.get(start)?.as_str(), object.get(end)?.as_str())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ms(ms: u64) -> Option<Duration> {
        Some(Duration::from_millis(ms))
    }

    #[test]
    fn utc_times_with_fractions_give_the_time_between() {
        assert_eq!(
            between(Some("2026-11-25T17:00:00Z"), Some("2026-11-25T17:07:12Z")),
            ms(432_000)
        );
        assert_eq!(
            between(
                Some("2026-11-25T17:00:00.250Z"),
                Some("2026-11-25T17:00:01.75Z")
            ),
            ms(1_500)
        );
        // Nanoseconds, as a google.protobuf.Timestamp may have.
        assert_eq!(
            between(
                Some("2026-11-25T17:00:00.000000001Z"),
                Some("2026-11-25T17:00:00.000000001Z")
            ),
            ms(0)
        );
    }

    #[test]
    fn offsets_are_honoured() {
        // Compute answers in Pacific time: 09:00-08:00 is 17:00Z.
        assert_eq!(
            between(
                Some("2026-11-25T09:00:00.000-08:00"),
                Some("2026-11-25T17:00:30Z")
            ),
            ms(30_000)
        );
        assert_eq!(
            between(
                Some("2026-11-25T18:00:00+01:00"),
                Some("2026-11-25T09:01:00.500-08:00")
            ),
            ms(60_500)
        );
    }

    #[test]
    fn missing_unreadable_or_backwards_times_give_none() {
        let end = Some("2026-11-25T17:00:00Z");
        assert_eq!(between(None, end), None);
        assert_eq!(between(end, None), None);
        assert_eq!(between(Some(""), end), None);
        assert_eq!(between(Some("yesterday"), end), None);
        assert_eq!(between(Some("2026-11-25 16:00:00"), end), None);
        assert_eq!(between(Some("2026-13-45T99:00:00Z"), end), None);
        assert_eq!(between(Some("2026-11-25T16:00:00"), end), None, "no offset");
        assert_eq!(
            between(end, Some("2026-11-25T16:59:59Z")),
            None,
            "backwards"
        );
    }

    #[test]
    fn extreme_but_valid_times_do_not_panic() {
        assert!(
            between(
                Some("0000-01-01T00:00:00Z"),
                Some("9999-12-31T23:59:59.999999999+23:59")
            )
            .is_some()
        );
        // A leap second.
        assert_eq!(
            between(Some("2016-12-31T23:59:59Z"), Some("2016-12-31T23:59:60.5Z")),
            ms(1_500)
        );
    }

    #[test]
    fn fields_of_an_operation() {
        let op = json!({"startTime": "2026-11-25T17:00:00Z", "endTime": "2026-11-25T17:06:00Z"});
        assert_eq!(between_fields(&op, "startTime", "endTime"), ms(360_000));
        let running = json!({"startTime": "2026-11-25T17:00:00Z"});
        assert_eq!(between_fields(&running, "startTime", "endTime"), None);
        let odd = json!({"startTime": 17, "endTime": ["x"]});
        assert_eq!(between_fields(&odd, "startTime", "endTime"), None);
        assert_eq!(between_fields(&json!(null), "startTime", "endTime"), None);
    }
}
