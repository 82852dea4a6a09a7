//! Cloud Storage buckets over the JSON API (`storage/v1`) with reqwest: the Rust storage crate
//! manages buckets only over gRPC.
//!
//! Bucket calls are synchronous: create, update and delete return [`Started::Done`]. Requests
//! carry the `Authorization` header of the configured credentials (none when anonymous).
//! [`StorageClient`] (endpoint, credentials, error classification) is shared with the GCS state
//! backend (`crate::state::gcs`).
//!
//! A bucket that still holds objects cannot be deleted (409 "not empty", classified `InUse`).
//! With `force_destroy` in the resource's lifecycle, every object version is deleted first
//! (`versions=true`, each generation), then the bucket.
//!
//! TLS: reqwest uses the process-default rustls `CryptoProvider` when one is installed and its own
//! (ring) otherwise, so building this client never panics and installs nothing global.

use super::{GcpConfig, classify_status};
use crate::cloud::{
    CloudError, CloudResult, ErrorClass, OpStatus, Settle, Started, Target, UpdateStep,
};
use crate::resource::FieldDiff;
use crate::resource::Observed;
use crate::resource::OperationRef;
use crate::resource::kinds::bucket::{BucketField, BucketSpec};
use crate::resource::kinds::from_spec;
use crate::state::objects::{ObjectError, ObjectErrorKind, ObjectResult, ObjectStore};
use google_cloud_auth::credentials::CacheableResource;
use reqwest::{Method, RequestBuilder, Response};
use serde_json::Value;

/// Google's Cloud Storage endpoint.
pub const DEFAULT_ENDPOINT: &str = "https://storage.googleapis.com";

/// The Cloud Storage JSON API over HTTP: where it is, which credentials to send, and how an error
/// answer is classified. Shared by the bucket adapter and the GCS state backend
/// (`crate::state::gcs`).
#[derive(Clone)]
pub struct StorageClient {
    http: reqwest::Client,
    /// Base URL without a trailing slash; paths start with `/storage/v1` or `/upload/storage/v1`.
    base: String,
    /// `None` when anonymous.
    credentials: Option<super::Credentials>,
}

impl StorageClient {
    pub fn new(config: &GcpConfig) -> CloudResult<StorageClient> {
        let http = reqwest::Client::builder()
            .use_rustls_tls()
            .build()
            .map_err(|e| {
                CloudError::new(
                    ErrorClass::Other,
                    format!("cannot build the Cloud Storage HTTP client: {e}"),
                )
            })?;
        let credentials = match config.credentials {
            super::CredentialsMode::Anonymous => None,
            super::CredentialsMode::Adc => Some(config.credentials()?),
        };
        Ok(StorageClient {
            http,
            base: config
                .endpoints
                .storage
                .as_deref()
                .unwrap_or(DEFAULT_ENDPOINT)
                .trim_end_matches('/')
                .to_string(),
            credentials,
        })
    }

    /// A request to `storage/v1/<path>`.
    pub fn request(&self, method: Method, path: &str) -> RequestBuilder {
        self.http
            .request(method, format!("{}/storage/v1/{path}", self.base))
    }

    /// A media upload of object `name` into `bucket` (`upload/storage/v1`, `uploadType=media`).
    pub fn upload(&self, bucket: &str, name: &str) -> RequestBuilder {
        self.http
            .post(format!(
                "{}/upload/storage/v1/b/{}/o",
                self.base,
                encode(bucket)
            ))
            .query(&[("uploadType", "media"), ("name", name)])
    }

    /// Sends a request with the credentials' headers; error statuses become classified errors.
    pub async fn send(&self, request: RequestBuilder) -> CloudResult<Response> {
        let mut request = request;
        if let Some(creds) = &self.credentials {
            let headers = creds.headers(Default::default()).await.map_err(|e| {
                CloudError::new(
                    ErrorClass::Permission,
                    format!("cannot get credentials for Cloud Storage: {e}"),
                )
                .with_hint("run `gcloud auth application-default login`, or set GOOGLE_APPLICATION_CREDENTIALS")
            })?;
            if let CacheableResource::New { data, .. } = headers {
                request = request.headers(data);
            }
        }
        let response = request.send().await.map_err(|e| {
            CloudError::new(
                ErrorClass::Transient,
                format!("Cloud Storage request failed: {e}"),
            )
        })?;
        if response.status().is_success() {
            return Ok(response);
        }
        Err(error_of(response).await)
    }

    /// Sends a request and decodes its JSON answer (`Null` for 204).
    pub async fn json(&self, request: RequestBuilder) -> CloudResult<Value> {
        let response = self.send(request).await?;
        if response.status() == reqwest::StatusCode::NO_CONTENT {
            return Ok(Value::Null);
        }
        response.json().await.map_err(|e| {
            CloudError::new(
                ErrorClass::Transient,
                format!("unreadable Cloud Storage answer: {e}"),
            )
        })
    }

    /// The bucket resource, or `None` when there is no such bucket.
    pub async fn get_bucket(&self, name: &str) -> CloudResult<Option<Value>> {
        match self
            .json(self.request(Method::GET, &format!("b/{}", encode(name))))
            .await
        {
            Ok(v) => Ok(Some(v)),
            Err(e) if e.class == ErrorClass::NotFound => Ok(None),
            Err(e) => Err(e),
        }
    }
}

/// A Cloud Storage failure in the terms of the state layer's [`ObjectStore`].
fn object_error(e: CloudError) -> ObjectError {
    let kind = match (e.http_status, e.class) {
        (Some(412), _) => ObjectErrorKind::PreconditionFailed,
        (Some(409), _) => ObjectErrorKind::Conflict,
        (_, ErrorClass::NotFound) => ObjectErrorKind::NotFound,
        (_, class) if class.is_retryable() => ObjectErrorKind::Transient,
        _ => ObjectErrorKind::Other,
    };
    ObjectError {
        kind,
        code: e.code(),
        message: e.message,
        hint: e.hint,
    }
}

/// The GCS state store's objects over the JSON API: media download with `x-goog-generation`,
/// simple upload and delete with `ifGenerationMatch`
/// (<https://cloud.google.com/storage/docs/json_api/v1/objects>).
#[async_trait::async_trait]
impl ObjectStore for StorageClient {
    async fn bucket_exists(&self, bucket: &str) -> ObjectResult<bool> {
        self.get_bucket(bucket)
            .await
            .map(|b| b.is_some())
            .map_err(object_error)
    }

    async fn get(&self, bucket: &str, object: &str) -> ObjectResult<Option<(Vec<u8>, i64)>> {
        let request = self
            .request(
                Method::GET,
                &format!("b/{}/o/{}", encode(bucket), encode(object)),
            )
            .query(&[("alt", "media")]);
        let response = match self.send(request).await {
            Ok(r) => r,
            Err(e) if e.class == ErrorClass::NotFound => return Ok(None),
            Err(e) => return Err(object_error(e)),
        };
        let generation = response
            .headers()
            .get("x-goog-generation")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse::<i64>().ok())
            .ok_or_else(|| {
                ObjectError::new(
                    ObjectErrorKind::Other,
                    format!("Cloud Storage sent `{object}` without its generation"),
                )
            })?;
        let bytes = response.bytes().await.map_err(|e| {
            ObjectError::new(
                ObjectErrorKind::Transient,
                format!("cannot read `{object}`: {e}"),
            )
        })?;
        Ok(Some((bytes.to_vec(), generation)))
    }

    async fn put(
        &self,
        bucket: &str,
        object: &str,
        bytes: Vec<u8>,
        if_generation_match: i64,
        kms_key: Option<&str>,
    ) -> ObjectResult<i64> {
        let mut request = self
            .upload(bucket, object)
            .query(&[("ifGenerationMatch", if_generation_match.to_string())])
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .body(bytes);
        if let Some(key) = kms_key {
            request = request.query(&[("kmsKeyName", key)]);
        }
        let answer = self.json(request).await.map_err(object_error)?;
        let generation = match &answer["generation"] {
            Value::String(g) => g.parse::<i64>().ok(),
            Value::Number(g) => g.as_i64(),
            _ => None,
        };
        generation.ok_or_else(|| {
            ObjectError::new(
                ObjectErrorKind::Other,
                format!("Cloud Storage did not say which generation of `{object}` it wrote"),
            )
        })
    }

    async fn delete(&self, bucket: &str, object: &str, generation: i64) -> ObjectResult<()> {
        let generation = generation.to_string();
        let request = self
            .request(
                Method::DELETE,
                &format!("b/{}/o/{}", encode(bucket), encode(object)),
            )
            .query(&[
                ("generation", generation.as_str()),
                ("ifGenerationMatch", generation.as_str()),
            ]);
        self.send(request).await.map(|_| ()).map_err(object_error)
    }

    async fn insert_bucket(&self, project: &str, resource: Value) -> ObjectResult<Value> {
        self.json(
            self.request(Method::POST, "b")
                .query(&[("project", project)])
                .json(&resource),
        )
        .await
        .map_err(object_error)
    }

    /// Every bucket of `project` whose name starts with `prefix`, over every page.
    async fn list_buckets(&self, project: &str, prefix: &str) -> ObjectResult<Vec<Value>> {
        let mut out = Vec::new();
        let mut token: Option<String> = None;
        loop {
            let mut request = self
                .request(Method::GET, "b")
                .query(&[("project", project), ("prefix", prefix)]);
            if let Some(token) = &token {
                request = request.query(&[("pageToken", token)]);
            }
            let listed = self.json(request).await.map_err(object_error)?;
            // The JSON API leaves `items` out of an empty list.
            out.extend(listed["items"].as_array().cloned().unwrap_or_default());
            match listed["nextPageToken"].as_str().filter(|t| !t.is_empty()) {
                Some(next) => token = Some(next.to_string()),
                None => return Ok(out),
            }
        }
    }
}

pub struct StorageAdapter {
    client: StorageClient,
    project: String,
}

impl StorageAdapter {
    pub async fn new(config: &GcpConfig) -> CloudResult<StorageAdapter> {
        Ok(StorageAdapter {
            client: StorageClient::new(config)?,
            project: config.project.clone(),
        })
    }

    async fn send(&self, request: RequestBuilder) -> CloudResult<Response> {
        self.client.send(request).await
    }

    async fn json(&self, request: RequestBuilder) -> CloudResult<Value> {
        self.client.json(request).await
    }

    fn request(&self, method: Method, path: &str) -> RequestBuilder {
        self.client.request(method, path)
    }

    async fn get_bucket(&self, name: &str) -> CloudResult<Option<Value>> {
        self.client.get_bucket(name).await
    }

    /// Deletes every object version in `bucket`: lists a page (`versions=true`), deletes each
    /// generation, and lists again until nothing is left.
    async fn empty_bucket(&self, bucket: &str) -> CloudResult<usize> {
        let mut deleted = 0;
        loop {
            let request = self
                .request(Method::GET, &format!("b/{}/o", encode(bucket)))
                .query(&[("versions", "true"), ("maxResults", "1000")]);
            let list = self.json(request).await?;
            // The JSON API leaves `items` out of an empty list.
            let items = list["items"].as_array().cloned().unwrap_or_default();
            if items.is_empty() {
                return Ok(deleted);
            }
            let mut progress = false;
            for item in &items {
                let Some(name) = item["name"].as_str() else {
                    return Err(CloudError::new(
                        ErrorClass::Other,
                        format!(
                            "Cloud Storage listed an object of bucket `{bucket}` without a name"
                        ),
                    ));
                };
                let generation = match &item["generation"] {
                    Value::String(g) => g.clone(),
                    Value::Number(g) => g.to_string(),
                    _ => String::new(),
                };
                let mut request = self.request(
                    Method::DELETE,
                    &format!("b/{}/o/{}", encode(bucket), encode(name)),
                );
                if !generation.is_empty() {
                    request = request.query(&[("generation", generation.as_str())]);
                }
                match self.send(request).await {
                    Ok(_) => {
                        deleted += 1;
                        progress = true;
                    }
                    Err(e) if e.class == ErrorClass::NotFound => {}
                    Err(e) => return Err(e),
                }
            }
            if !progress {
                return Err(CloudError::new(
                    ErrorClass::InUse,
                    format!("cannot empty bucket `{bucket}`: its objects could not be deleted"),
                ));
            }
        }
    }

    async fn delete_bucket(&self, name: &str) -> CloudResult<()> {
        self.send(self.request(Method::DELETE, &format!("b/{}", encode(name))))
            .await
            .map(|_| ())
    }
}

/// Percent-encodes a path segment (object names may contain `/`).
pub fn encode(segment: &str) -> String {
    let mut out = String::with_capacity(segment.len());
    for b in segment.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// A Cloud Storage error answer, classified.
async fn error_of(response: Response) -> CloudError {
    let status = response.status().as_u16();
    let body: Value = response.json().await.unwrap_or(Value::Null);
    let error = &body["error"];
    let message = error["message"]
        .as_str()
        .map(str::to_string)
        .unwrap_or_else(|| format!("Cloud Storage answered HTTP {status}"));
    // Both optional in Google's error body; the classification falls back to the HTTP status.
    let reason = error["errors"][0]["reason"].as_str().unwrap_or_default();
    let canonical = error["status"].as_str().unwrap_or_default();
    classify_status(Some(status), canonical, reason, &message)
}

fn bucket_name(target: &Target) -> &str {
    target
        .spec
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or_else(|| target.id.rsplit('/').next().unwrap_or(&target.id))
}

#[async_trait::async_trait]
impl crate::cloud::Provider for StorageAdapter {
    async fn read(&self, target: &Target) -> CloudResult<Option<Observed>> {
        Ok(self
            .get_bucket(bucket_name(target))
            .await?
            .map(|b| BucketSpec::project(&b))
            .transpose()?)
    }

    async fn create(&self, target: &Target) -> CloudResult<Started> {
        let request = self
            .request(Method::POST, "b")
            .query(&[("project", self.project.as_str())])
            .json(&from_spec::<BucketSpec>("bucket", &target.spec)?.body());
        match self.json(request).await {
            Ok(_) => Ok(Started::Done),
            // Cloud Storage says 409 `conflict` without a canonical status for a taken name.
            Err(mut e) if e.http_status == Some(409) && e.class != ErrorClass::InUse => {
                e.class = ErrorClass::AlreadyExists;
                Err(e)
            }
            Err(e) => Err(e),
        }
    }

    fn update_steps(&self, _target: &Target, diffs: &[FieldDiff]) -> Vec<UpdateStep> {
        UpdateStep::per_call(
            diffs,
            &[(
                "patch",
                &[
                    BucketField::StorageClass,
                    BucketField::UniformAccess,
                    BucketField::Versioning,
                    BucketField::Labels,
                ],
            )],
        )
    }

    async fn update(&self, target: &Target, step: &UpdateStep) -> CloudResult<Started> {
        let name = bucket_name(target);
        let spec: BucketSpec = from_spec("bucket", &target.spec)?;
        let fields = step.fields_of::<BucketField>()?;
        let live_labels = if fields.contains(&BucketField::Labels) {
            self.get_bucket(name)
                .await?
                .map(|live| crate::resource::kinds::live_labels(&live))
        } else {
            None
        };
        let body = spec.patch(&fields, live_labels.as_ref());
        self.json(
            self.request(Method::PATCH, &format!("b/{}", encode(name)))
                .json(&body),
        )
        .await?;
        Ok(Started::Done)
    }

    async fn delete(&self, target: &Target) -> CloudResult<Started> {
        let name = bucket_name(target);
        match self.delete_bucket(name).await {
            Ok(()) => Ok(Started::Done),
            Err(e) if e.class == ErrorClass::InUse && target.lifecycle.force_destroy => {
                self.empty_bucket(name).await?;
                self.delete_bucket(name).await?;
                Ok(Started::Done)
            }
            Err(e) if e.class == ErrorClass::InUse => Err(e.with_hint(format!(
                "bucket `{name}` still holds objects: empty it, or set `force_destroy = true` on it in the blueprint to delete its objects with it"
            ))),
            Err(e) => Err(e),
        }
    }

    async fn poll(&self, operation: &OperationRef) -> CloudResult<OpStatus> {
        Err(CloudError::new(
            ErrorClass::Other,
            format!(
                "Cloud Storage bucket calls have no operations (asked for `{}`)",
                operation.name
            ),
        ))
    }

    fn settle(&self, _target: &Target, _observed: &Observed) -> Settle {
        Settle::Ready
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn object_names_are_encoded() {
        assert_eq!(encode("dir/a b"), "dir%2Fa%20b");
    }
}
