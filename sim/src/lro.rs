//! `google.longrunning.Operation` (AIP-151), shared by Filestore and Artifact Registry.
//!
//! An operation is named `projects/P/locations/L/operations/operation-<millis>-<hex>`, carries a
//! typed `metadata` Any (`@type` plus, for Filestore's `google.cloud.common.OperationMetadata`,
//! `createTime`, `endTime`, `target`, `verb`, `cancelRequested`, `apiVersion`), and once `done`
//! exactly one of `error` (a `google.rpc.Status`) or `response` (a typed Any). The google-cloud-rust
//! pollers check the `@type` URLs exactly, so they are fixed per API in [`LroApi`].
//!
//! This module only keeps and renders operations; the owning module decides when an operation is
//! due and what its outcome is (its `tick` calls [`Operation::succeed`] or [`Operation::fail`]).

use crate::clock::SimTime;
use crate::enums::{self, EnumTable};
use crate::error::{GcpError, GcpResult};
use crate::http::Query;
use crate::shared::Ctx;
pub use crate::state::lro::{Operation, Operations, Outcome};
use crate::world::World;
use serde_json::{Map, Value, json};

/// `@type` of `google.protobuf.Empty`, the response of every delete.
pub const EMPTY_TYPE: &str = "type.googleapis.com/google.protobuf.Empty";

/// The type URLs of one API's operations.
#[derive(Debug, Clone, Copy)]
pub struct LroApi {
    /// `@type` of `metadata`.
    pub metadata_type: &'static str,
    /// `@type` of the `response` of creates and updates.
    pub resource_type: &'static str,
    /// True when the metadata message has fields (Filestore's common `OperationMetadata`);
    /// Artifact Registry's v1 `OperationMetadata` is an empty message.
    pub detailed_metadata: bool,
    /// Enum table of the resource in `response`, for integer enum encoding.
    pub resource_enums: EnumTable,
}

impl Operation {
    pub fn done(&self) -> bool {
        self.outcome.is_some()
    }

    /// True when the operation is still running and due at `now`.
    pub fn due(&self, now: SimTime) -> bool {
        self.outcome.is_none() && self.done_at <= now
    }

    /// When an operation ending at `now` ended, for its `endTime`: when it was due, however much
    /// later a tick (run when a request comes) got to it; `now` if it ends early (a scripted
    /// failure at the call, a cancellation).
    fn end_time(&self, now: SimTime) -> SimTime {
        self.done_at.min(now)
    }

    /// Ends the operation with a response (`None` for `google.protobuf.Empty`).
    pub fn succeed(&mut self, now: SimTime, response: Option<Value>) {
        self.ended = Some(self.end_time(now));
        self.outcome = Some(Outcome::Response(response));
    }

    /// Ends the operation with an error.
    pub fn fail(&mut self, now: SimTime, code: i32, message: impl Into<String>) {
        self.ended = Some(self.end_time(now));
        self.outcome = Some(Outcome::Error {
            code,
            message: message.into(),
        });
    }

    /// The operation as the API returns it.
    pub fn to_json(&self, world: &World, api: &LroApi, ints: bool) -> Value {
        let mut metadata = Map::new();
        metadata.insert("@type".into(), json!(api.metadata_type));
        if api.detailed_metadata {
            metadata.insert("createTime".into(), json!(world.rfc3339(self.created)));
            if let Some(end) = self.ended {
                metadata.insert("endTime".into(), json!(world.rfc3339(end)));
            }
            metadata.insert("target".into(), json!(self.target));
            metadata.insert("verb".into(), json!(self.verb));
            if self.cancel_requested {
                metadata.insert("cancelRequested".into(), json!(true));
            }
            metadata.insert("apiVersion".into(), json!("v1"));
        }
        let mut op = json!({
            "name": self.name,
            "metadata": Value::Object(metadata),
        });
        // proto3 JSON leaves out fields at their default, so a running operation has no `done`
        // (<https://protobuf.dev/programming-guides/json/>).
        if self.done() {
            op["done"] = json!(true);
        }
        match &self.outcome {
            None => {}
            Some(Outcome::Error { code, message }) => {
                op["error"] = json!({ "code": code, "message": message });
            }
            Some(Outcome::Response(None)) => {
                op["response"] = json!({ "@type": EMPTY_TYPE });
            }
            Some(Outcome::Response(Some(resource))) => {
                let mut resource = resource.clone();
                if ints {
                    enums::encode_ints(&mut resource, api.resource_enums);
                }
                let mut typed = Map::new();
                typed.insert("@type".into(), json!(api.resource_type));
                if let Value::Object(fields) = resource {
                    typed.extend(fields);
                }
                op["response"] = Value::Object(typed);
            }
        }
        op
    }
}

/// A new running operation on `target` in `parent` (`projects/P/locations/L`), due after
/// `duration_ms`.
pub fn new_operation(
    world: &mut World,
    cx: &Ctx,
    parent: &str,
    target: &str,
    verb: &str,
    duration_ms: u64,
) -> Operation {
    let millis = world.instant(cx.now).timestamp_millis();
    let name = format!(
        "{parent}/operations/operation-{millis}-{}-{}-{}",
        world.hex(13),
        world.hex(8),
        world.hex(8)
    );
    Operation {
        name,
        target: target.to_string(),
        verb: verb.to_string(),
        created: cx.now,
        done_at: cx.now.plus_ms(duration_ms),
        ended: None,
        cancel_requested: false,
        outcome: None,
    }
}

impl Operations {
    /// Keeps a new operation; returns its name.
    pub fn insert(&mut self, operation: Operation) -> String {
        let name = operation.name.clone();
        self.by_name.insert(name.clone(), operation);
        name
    }

    pub fn get(&self, name: &str) -> GcpResult<&Operation> {
        self.by_name.get(name).ok_or_else(|| not_found(name))
    }

    /// Names of running operations that are due at `now`, oldest first.
    pub fn due(&self, now: SimTime) -> Vec<String> {
        let mut due: Vec<&Operation> = self.by_name.values().filter(|o| o.due(now)).collect();
        due.sort_by_key(|o| (o.done_at, o.created));
        due.into_iter().map(|o| o.name.clone()).collect()
    }

    /// The running operation on `target`, if any.
    pub fn running_on(&self, target: &str) -> Option<&Operation> {
        self.by_name
            .values()
            .find(|o| !o.done() && o.target == target)
    }

    /// `operations.list` under `parent` (`projects/P/locations/L`, `L` may be `-`), with the
    /// `done=true|false` filter, one page at a time ([`crate::paging`]; no API publishes a default
    /// or maximum size for its operations: 1,000 for both is a guess), capped by `cap`.
    pub fn list(
        &self,
        world: &World,
        api: &LroApi,
        parent: &str,
        query: &Query,
        cap: Option<usize>,
    ) -> crate::error::GcpResult<Value> {
        const PAGING: crate::paging::Rules = crate::paging::aip158(1000, 1000);
        let (project_part, location) = parent.rsplit_once("/locations/").unwrap_or((parent, "-"));
        let filter = query.get("filter").unwrap_or("").replace(' ', "");
        let all: Vec<(String, &Operation)> = self
            .by_name
            .values()
            .filter(|o| {
                let Some(rest) = o.name.strip_prefix(&format!("{project_part}/locations/")) else {
                    return false;
                };
                location == "-" || rest.starts_with(&format!("{location}/"))
            })
            .filter(|o| match filter.as_str() {
                "done=true" | "done:true" => o.done(),
                "done=false" | "done:false" => !o.done(),
                _ => true,
            })
            .map(|o| (o.name.clone(), o))
            .collect();
        let page = crate::paging::page(&PAGING, query, cap, all)?;
        let items: Vec<Value> = page
            .items
            .iter()
            .map(|o| o.to_json(world, api, query.enum_ints()))
            .collect();
        let mut out = json!({ "operations": items });
        if let Some(next) = page.next {
            out["nextPageToken"] = json!(next);
        }
        Ok(out)
    }

    /// `operations.cancel`: best effort, as the AIP allows: the request is recorded in the
    /// metadata and the operation runs on.
    pub fn cancel(&mut self, name: &str) -> GcpResult<()> {
        let op = self.by_name.get_mut(name).ok_or_else(|| not_found(name))?;
        if !op.done() {
            op.cancel_requested = true;
        }
        Ok(())
    }

    /// `operations.delete`: forgets the operation (its outcome is no longer retrievable).
    pub fn delete(&mut self, name: &str) -> GcpResult<()> {
        self.by_name
            .remove(name)
            .map(|_| ())
            .ok_or_else(|| not_found(name))
    }
}

fn not_found(name: &str) -> GcpError {
    GcpError::not_found(format!("Resource '{name}' was not found"))
}

/// The `google.rpc.Code` number of a canonical status name.
pub fn rpc_code(status: &str) -> i32 {
    match status {
        "CANCELLED" => 1,
        "UNKNOWN" => 2,
        "INVALID_ARGUMENT" => 3,
        "DEADLINE_EXCEEDED" => 4,
        "NOT_FOUND" => 5,
        "ALREADY_EXISTS" => 6,
        "PERMISSION_DENIED" => 7,
        "RESOURCE_EXHAUSTED" => 8,
        "FAILED_PRECONDITION" => 9,
        "ABORTED" => 10,
        "OUT_OF_RANGE" => 11,
        "UNIMPLEMENTED" => 12,
        "INTERNAL" => 13,
        "UNAVAILABLE" => 14,
        "DATA_LOSS" => 15,
        "UNAUTHENTICATED" => 16,
        _ => 2,
    }
}

/// The canonical status name of an HTTP error code, for errors built from scripted faults.
pub fn status_for_http(code: u16) -> &'static str {
    match code {
        400 => "INVALID_ARGUMENT",
        401 => "UNAUTHENTICATED",
        403 => "PERMISSION_DENIED",
        404 => "NOT_FOUND",
        409 => "ALREADY_EXISTS",
        412 => "FAILED_PRECONDITION",
        429 => "RESOURCE_EXHAUSTED",
        499 => "CANCELLED",
        501 => "UNIMPLEMENTED",
        503 => "UNAVAILABLE",
        504 => "DEADLINE_EXCEEDED",
        _ => "INTERNAL",
    }
}

/// Applies an `updateMask` (comma-separated camelCase or snake_case paths) from `patch` onto
/// `resource`: each path is copied, or removed when absent from `patch`.
pub fn apply_mask(resource: &mut Value, patch: &Value, paths: &[String]) {
    for path in paths {
        let segments: Vec<String> = path.split('.').map(camel).collect();
        let source = segments.iter().try_fold(patch, |v, s| v.get(s.as_str()));
        let Some((last, parents)) = segments.split_last() else {
            continue;
        };
        let mut target = &mut *resource;
        for segment in parents {
            if !target.get(segment.as_str()).is_some_and(Value::is_object) {
                target[segment.as_str()] = json!({});
            }
            target = &mut target[segment.as_str()];
        }
        match (source, target.as_object_mut()) {
            (Some(value), Some(object)) => {
                object.insert(last.clone(), value.clone());
            }
            (None, Some(object)) => {
                object.remove(last.as_str());
            }
            _ => {}
        }
    }
}

/// The paths of an `updateMask` query value, in camelCase.
pub fn mask_paths(mask: &str) -> Vec<String> {
    mask.split(',')
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .map(|p| p.split('.').map(camel).collect::<Vec<_>>().join("."))
        .collect()
}

/// snake_case → camelCase (camelCase input is returned unchanged).
pub fn camel(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let mut upper = false;
    for c in name.chars() {
        if c == '_' {
            upper = true;
        } else if upper {
            out.push(c.to_ascii_uppercase());
            upper = false;
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masks_copy_and_clear_fields() {
        let mut resource = json!({"description": "old", "labels": {"a": "1"}, "tier": "ZONAL"});
        let patch = json!({"description": "new"});
        apply_mask(&mut resource, &patch, &mask_paths("description,labels"));
        assert_eq!(resource, json!({"description": "new", "tier": "ZONAL"}));
        assert_eq!(
            mask_paths("file_shares, deletion_protection_enabled"),
            vec!["fileShares", "deletionProtectionEnabled"]
        );
    }

    fn operation(created: u64, done_at: u64) -> Operation {
        Operation {
            name: "projects/p/locations/l/operations/operation-1".into(),
            target: "projects/p/locations/l/instances/i".into(),
            verb: "create".into(),
            created: SimTime(created),
            done_at: SimTime(done_at),
            ended: None,
            cancel_requested: false,
            outcome: None,
        }
    }

    #[test]
    fn an_operation_ends_when_it_was_due_not_when_it_was_polled() {
        // Created at 10 s, due 600 s later; the tick that finishes it runs at 900 s.
        let mut op = operation(10_000, 610_000);
        op.succeed(SimTime(900_000), None);
        assert_eq!(op.ended, Some(SimTime(610_000)));
        let mut op = operation(10_000, 610_000);
        op.fail(SimTime(900_000), 8, "quota");
        assert_eq!(op.ended, Some(SimTime(610_000)));
        // A scripted failure at the call ends it at once.
        let mut op = operation(10_000, 610_000);
        op.fail(SimTime(10_000), 8, "quota");
        assert_eq!(op.ended, Some(SimTime(10_000)));
    }

    #[test]
    fn codes_follow_google_rpc() {
        assert_eq!(rpc_code("RESOURCE_EXHAUSTED"), 8);
        assert_eq!(rpc_code("INTERNAL"), 13);
        assert_eq!(status_for_http(409), "ALREADY_EXISTS");
    }
}
