//! Cloud Storage JSON API v1: buckets and objects, under `/storage/v1/...`, with uploads under
//! `/upload/storage/v1/...` and downloads under `/download/storage/v1/...`.
//!
//! Cloud Storage is a discovery API: enums are strings, int64 fields are strings, and every call
//! is synchronous. Buckets carry a metageneration; objects a generation (a microsecond timestamp,
//! strictly increasing) and a metageneration, an `md5Hash` and a big-endian `crc32c` (base64), so
//! gcloud can verify what it uploads and downloads. The preconditions `ifGenerationMatch`
//! (0 = the object must not exist), `ifGenerationNotMatch`, `ifMetagenerationMatch` and
//! `ifMetagenerationNotMatch` are honoured exactly (412 `conditionNotMet`; 304 on reads for the
//! `NotMatch` ones), because a3ctl keeps its remote state and its lock here. With versioning
//! enabled, overwritten and deleted objects become noncurrent versions. An upload's `kmsKeyName`
//! (or the bucket's `encryption.defaultKmsKeyName`) is recorded on the object as the key version
//! that encrypted it.
//!
//! - [`buckets`]: bucket CRUD and the bucket naming rules.
//! - [`objects`]: object metadata, listing, download, delete, patch and rewrite.
//! - [`upload`]: `uploadType=media`, `multipart` and `resumable`.
//! - [`iam`]: bucket IAM policies (`getIamPolicy`, `setIamPolicy`).

pub mod buckets;
pub mod iam;
pub mod objects;
pub mod upload;

use crate::clock::SimTime;
use crate::error::{GcpError, GcpResult};
use crate::faults::{FaultAction, NamedFault};
use crate::http::Query;
use crate::shared::Ctx;
use crate::shared::Shared;
pub use crate::state::storage::{
    Bucket, ObjectVersion, Preconditions, ResumableUpload, State, etag,
};
use crate::world::World;
use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::routing::{get, post};
use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;
use serde_json::{Value, json};
use std::sync::Arc;

/// How `buckets.list` and `objects.list` page ([`crate::paging`]): `maxResults` "The service will
/// use this parameter or 1,000 items, whichever is smaller" (both methods in the storage v1
/// discovery document), in name order. A size that is no integer and a token the service did not
/// give out are 400 `invalid` (texts guessed).
pub const PAGING: crate::paging::Rules = crate::paging::Rules {
    size_param: "maxResults",
    default: 1000,
    max: 1000,
    too_large: None,
    bad_size: |raw| GcpError::invalid(format!("Invalid value for maxResults: {raw}")),
    bad_token: |token| GcpError::invalid(format!("Invalid page token: {token}")),
};

impl Bucket {
    pub fn versioning(&self) -> bool {
        self.resource["versioning"]["enabled"] == true
    }

    /// The live version of `name`, if any.
    pub fn live(&self, name: &str) -> Option<&ObjectVersion> {
        self.objects
            .get(name)
            .and_then(|versions| versions.iter().find(|v| v.deleted.is_none()))
    }

    pub fn is_empty(&self) -> bool {
        self.objects.values().all(Vec::is_empty)
    }
}

impl State {
    /// A new object generation: the current time in microseconds, strictly increasing.
    pub fn next_generation(&mut self, world_micros: i64) -> i64 {
        self.last_generation = world_micros.max(self.last_generation + 1);
        self.last_generation
    }
}

/// Routes of this API (full paths, including the simulator's prefix).
pub fn router() -> Router<Arc<Shared>> {
    Router::new()
        .route(
            "/storage/v1/b",
            get(buckets::list_buckets).post(buckets::insert_bucket),
        )
        .route(
            "/storage/v1/b/{bucket}",
            get(buckets::get_bucket)
                .patch(buckets::patch_bucket)
                .put(buckets::update_bucket)
                .delete(buckets::delete_bucket),
        )
        .route(
            "/storage/v1/b/{bucket}/storageLayout",
            get(buckets::storage_layout),
        )
        .route(
            "/storage/v1/b/{bucket}/iam",
            get(iam::get_iam).put(iam::set_iam),
        )
        .route(
            "/storage/v1/b/{bucket}/o",
            get(objects::list_objects).post(upload::insert_metadata_only),
        )
        .route(
            "/storage/v1/b/{bucket}/o/{*object}",
            get(objects::get_object)
                .patch(objects::patch_object)
                .put(objects::update_object)
                .delete(objects::delete_object)
                .post(objects::post_object_method),
        )
        .route(
            "/upload/storage/v1/b/{bucket}/o",
            post(upload::upload).put(upload::resume),
        )
        .route(
            "/resumable/upload/storage/v1/b/{bucket}/o",
            post(upload::upload).put(upload::resume),
        )
        .route(
            "/download/storage/v1/b/{bucket}/o/{*object}",
            get(objects::download_object),
        )
        // Uploads are as large as objects are; axum's 2 MB default would refuse them.
        .layer(DefaultBodyLimit::disable())
}

/// This API's part of the admin inventory.
pub fn inventory(world: &World) -> Value {
    let buckets: Vec<Value> = world
        .storage
        .buckets
        .iter()
        .map(|(name, bucket)| {
            let objects: Vec<Value> = bucket
                .objects
                .iter()
                .flat_map(|(object, versions)| {
                    versions
                        .iter()
                        .map(|v| objects::object_json(world, name, object, v))
                })
                .collect();
            json!({ "bucket": bucket.resource, "objects": objects })
        })
        .collect();
    json!({ "buckets": buckets })
}

/// Microseconds since the Unix epoch of a simulated time.
pub fn micros(world: &World, t: SimTime) -> i64 {
    world.instant(t).timestamp_micros()
}

/// 404 for a missing bucket.
pub fn no_such_bucket() -> GcpError {
    GcpError::not_found("The specified bucket does not exist.")
}

/// 404 for a missing object.
pub fn no_such_object(bucket: &str, name: &str) -> GcpError {
    GcpError::not_found(format!("No such object: {bucket}/{name}"))
}

/// 412 for a failed precondition.
pub fn precondition_failed() -> GcpError {
    GcpError::condition_not_met("At least one of the pre-conditions you specified did not hold.")
}

/// 400 `invalid`.
pub fn invalid(message: impl Into<String>) -> GcpError {
    GcpError::new(400, "INVALID_ARGUMENT", "invalid", message)
}

/// 400 `required` for a missing parameter.
pub fn required(parameter: &str) -> GcpError {
    GcpError::new(
        400,
        "INVALID_ARGUMENT",
        "required",
        format!("Required parameter: {parameter}"),
    )
}

/// The error a scripted fault of kind `storage.bucket` / `storage.object` produces. Storage
/// has no operations, so every fault is an immediate error.
pub fn scripted(cx: &Ctx, kind: &str, verb: &str) -> GcpResult<()> {
    match cx.scripted_fault(kind, verb) {
        // Drops never reach the modules ([`crate::world::Ctx::scripted_fault`]).
        None | Some(FaultAction::Named(NamedFault::DropBefore | NamedFault::DropAfter)) => Ok(()),
        Some(FaultAction::Named(NamedFault::QuotaExceeded)) => Err(GcpError::new(
            429,
            "RESOURCE_EXHAUSTED",
            "rateLimitExceeded",
            "The project exceeded the rate limit for creating and deleting buckets.",
        )
        .with_domain("usageLimits")),
        Some(FaultAction::Named(NamedFault::Stockout | NamedFault::OperationError)) => Err(
            GcpError::new(500, "INTERNAL", "backendError", "Backend Error"),
        ),
        Some(FaultAction::Http {
            status,
            reason,
            message,
        }) => Err(GcpError::new(
            status,
            crate::lro::status_for_http(status),
            reason,
            message,
        )),
    }
}

/// Why a precondition check failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Failed {
    /// A `Match` condition did not hold: 412.
    Match,
    /// A `NotMatch` condition did not hold: 304 on reads, 412 otherwise.
    NotMatch,
}

impl Preconditions {
    pub fn parse(query: &Query) -> GcpResult<Preconditions> {
        Self::parse_with(query, "")
    }

    /// Reads `<prefix>ifGenerationMatch` etc. (`prefix` is `Source` for the source of a rewrite,
    /// with names like `ifSourceGenerationMatch`).
    pub fn parse_with(query: &Query, source: &str) -> GcpResult<Preconditions> {
        let number = |key: &str| -> GcpResult<Option<i64>> {
            let key = if source.is_empty() {
                key.to_string()
            } else {
                key.replacen("if", &format!("if{source}"), 1)
            };
            match query.get(&key) {
                None => Ok(None),
                Some(v) => v
                    .trim()
                    .parse::<i64>()
                    .map(Some)
                    .map_err(|_| invalid(format!("Invalid value for {key}: {v}"))),
            }
        };
        Ok(Preconditions {
            if_generation_match: number("ifGenerationMatch")?,
            if_generation_not_match: number("ifGenerationNotMatch")?,
            if_metageneration_match: number("ifMetagenerationMatch")?,
            if_metageneration_not_match: number("ifMetagenerationNotMatch")?,
        })
    }

    pub fn is_empty(&self) -> bool {
        *self == Preconditions::default()
    }

    /// Checks against the current `(generation, metageneration)`, `None` when there is no live
    /// object (or, for buckets, generation is ignored).
    pub fn check(&self, current: Option<(i64, i64)>) -> Result<(), Failed> {
        let generation = current.map(|c| c.0).unwrap_or(0);
        if let Some(want) = self.if_generation_match
            && want != generation
        {
            return Err(Failed::Match);
        }
        if let Some(want) = self.if_metageneration_match
            && current.map(|c| c.1) != Some(want)
        {
            return Err(Failed::Match);
        }
        if let Some(not) = self.if_generation_not_match
            && not == generation
        {
            return Err(Failed::NotMatch);
        }
        if let Some(not) = self.if_metageneration_not_match
            && current.map(|c| c.1) == Some(not)
        {
            return Err(Failed::NotMatch);
        }
        Ok(())
    }

    /// [`Preconditions::check`] for a mutation: every failure is a 412.
    pub fn check_write(&self, current: Option<(i64, i64)>) -> GcpResult<()> {
        self.check(current).map_err(|_| precondition_failed())
    }
}

/// Percent-decodes a URL path segment (`+` stays `+`).
pub fn percent_decode(raw: &str) -> String {
    let bytes = raw.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).ok();
            if let Some(b) = hex.and_then(|h| u8::from_str_radix(h, 16).ok()) {
                out.push(b);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Percent-encodes an object name for a URL path (everything but unreserved characters).
pub fn percent_encode(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for b in name.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// `md5Hash` and `crc32c` of some data, base64 (CRC32C big-endian), as Cloud Storage reports.
pub fn hashes(data: &[u8]) -> (String, String) {
    use md5::{Digest, Md5};
    let md5 = BASE64.encode(Md5::digest(data));
    let crc = BASE64.encode(crc32c::crc32c(data).to_be_bytes());
    (md5, crc)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hashes_match_cloud_storage() {
        // Known values for "hello world".
        let (md5, crc) = hashes(b"hello world");
        assert_eq!(md5, "XrY7u+Ae7tCTyyK7j1rNww==");
        assert_eq!(crc, "yZRlqg==");
    }

    #[test]
    fn etags_encode_generations() {
        assert_eq!(etag(None, 1), "CAE=");
        assert_eq!(etag(None, 2), "CAI=");
        assert_eq!(etag(Some(1), 1), "CAEQAQ==");
    }

    #[test]
    fn preconditions_follow_gcs_semantics() {
        let p = |m: Option<i64>, nm: Option<i64>| Preconditions {
            if_generation_match: m,
            if_generation_not_match: nm,
            ..Default::default()
        };
        assert_eq!(p(Some(0), None).check(None), Ok(()));
        assert_eq!(p(Some(0), None).check(Some((5, 1))), Err(Failed::Match));
        assert_eq!(p(Some(5), None).check(Some((5, 1))), Ok(()));
        assert_eq!(p(Some(5), None).check(None), Err(Failed::Match));
        assert_eq!(p(None, Some(5)).check(Some((5, 1))), Err(Failed::NotMatch));
        let meta = Preconditions {
            if_metageneration_match: Some(2),
            ..Default::default()
        };
        assert_eq!(meta.check(Some((5, 1))), Err(Failed::Match));
        assert_eq!(meta.check(None), Err(Failed::Match));
    }

    #[test]
    fn names_round_trip_through_percent_encoding() {
        let name = "state/a3 ctl+lock.json";
        assert_eq!(percent_decode(&percent_encode(name)), name);
        assert_eq!(percent_decode("a%2Fb"), "a/b");
        assert_eq!(percent_decode("100%"), "100%");
    }
}
