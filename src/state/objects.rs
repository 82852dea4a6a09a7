//! What the GCS state store needs of Cloud Storage, as a small trait: read an object with its
//! generation, write or delete one only at an expected generation, and check or create the
//! bucket. `crate::cloud::gcp::storage::StorageClient` implements it over the JSON API; the state
//! layer names no cloud client, so it sits below `cloud/` (docs/architecture.md, "Layers").
//!
//! Generations and preconditions are Cloud Storage's (<https://cloud.google.com/storage/docs/request-preconditions>):
//! `ifGenerationMatch=0` creates only when no live object exists; a failed precondition is HTTP 412.

use async_trait::async_trait;
use serde_json::Value;

/// Why an object call failed, as far as the state store must tell them apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ObjectErrorKind {
    /// 404: the object (or its bucket) does not exist.
    NotFound,
    /// 412: the generation precondition did not hold.
    PreconditionFailed,
    /// 409: a bucket of that name exists (bucket names are global).
    Conflict,
    /// 429, 5xx or a dropped connection: worth sending again.
    Transient,
    /// Anything else (permissions, invalid requests): reported as it is.
    Other,
}

/// A failed object call.
#[derive(Debug, Clone, PartialEq)]
pub struct ObjectError {
    pub kind: ObjectErrorKind,
    pub message: String,
    /// The service's own words for the error (`403 PERMISSION_DENIED (forbidden)`), or empty.
    pub code: String,
    /// What the user can do, when the client knows (credentials, roles).
    pub hint: Option<String>,
}

impl ObjectError {
    pub fn new(kind: ObjectErrorKind, message: impl Into<String>) -> ObjectError {
        ObjectError {
            kind,
            message: message.into(),
            code: String::new(),
            hint: None,
        }
    }
}

impl std::fmt::Display for ObjectError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

pub type ObjectResult<T> = Result<T, ObjectError>;

/// Objects in buckets, with generations. One call each: retries are the caller's.
#[async_trait]
pub trait ObjectStore: Send + Sync {
    /// Whether the bucket exists.
    async fn bucket_exists(&self, bucket: &str) -> ObjectResult<bool>;

    /// The object's bytes and generation; `None` when it (or its bucket) does not exist.
    async fn get(&self, bucket: &str, object: &str) -> ObjectResult<Option<(Vec<u8>, i64)>>;

    /// Writes the object only if its live generation is `if_generation_match` (0: none exists),
    /// encrypted with `kms_key` when given; returns the new generation.
    async fn put(
        &self,
        bucket: &str,
        object: &str,
        bytes: Vec<u8>,
        if_generation_match: i64,
        kms_key: Option<&str>,
    ) -> ObjectResult<i64>;

    /// Deletes exactly `generation` of the object, only if it is still the live one.
    async fn delete(&self, bucket: &str, object: &str, generation: i64) -> ObjectResult<()>;

    /// Creates a bucket in `project` from its JSON resource; [`ObjectErrorKind::Conflict`] when
    /// the name is taken (by this project or any other).
    async fn insert_bucket(&self, project: &str, resource: Value) -> ObjectResult<Value>;

    /// The project's buckets whose names start with `prefix`.
    async fn list_buckets(&self, project: &str, prefix: &str) -> ObjectResult<Vec<Value>>;
}
