//! Bucket IAM policies: `GET /storage/v1/b/{bucket}/iam` (`buckets.getIamPolicy`,
//! `optionsRequestedPolicyVersion`) and `PUT /storage/v1/b/{bucket}/iam` (`buckets.setIamPolicy`,
//! the `Policy` as the body), from the discovery document (`storage.v1.json`) and
//! <https://cloud.google.com/storage/docs/json_api/v1/buckets/getIamPolicy>.
//!
//! A policy answers `{"kind": "storage#policy", "resourceId": "projects/_/buckets/B", "version",
//! "bindings", "etag"}`. A bucket nobody wrote answers its project's convenience values with the
//! legacy roles — `roles/storage.legacyBucketOwner` for `projectEditor:P` and `projectOwner:P`,
//! `roles/storage.legacyBucketReader` for `projectViewer:P` (the bindings the google-cloud-java
//! Storage IAM test of googleapis/google-cloud-java#1812 expects of a new bucket) and, on a bucket
//! with uniform bucket-level access, `roles/storage.legacyObjectOwner` / `legacyObjectReader` for
//! the same members (remembered from real answers; unconfirmed).
//!
//! The policy's etag is the bucket's (`CAE=` at metageneration 1): Cloud Storage keeps IAM with the
//! bucket's metadata, and a `setIamPolicy` moves the bucket's metageneration (both remembered, not
//! confirmed from a recorded answer). The rules of a write are [`crate::iam::policy`]'s, with Cloud
//! Storage's answers: a stale etag is 412 `conditionNotMet` `Precondition Failed`; conditions need
//! uniform bucket-level access (412) and version 3 (400); only `roles/storage.*` and custom roles;
//! `projectOwner:`/`projectEditor:`/`projectViewer:` members. Unknown JSON names are ignored, as
//! Cloud Storage ignores `kind` and `resourceId` on input.

use super::no_such_bucket;
use crate::error::GcpResult;
use crate::http::{self, Query};
use crate::iam::policy::{self, Api, Policy, Target};
use crate::shared::Shared;
use axum::body::Bytes;
use axum::extract::{Path, State as AxumState};
use axum::response::Response;
use serde_json::{Value, json};
use std::sync::Arc;

pub use crate::iam::{bucket_policy, uniform};

fn answer(name: &str, policy: &Policy, requested: i64) -> Value {
    let body = policy.to_json(requested);
    let mut out = json!({
        "kind": "storage#policy",
        "resourceId": format!("projects/_/buckets/{name}"),
        "version": if policy.has_conditions() && requested >= 3 { 3 } else { 1 },
    });
    if let Some(bindings) = body.get("bindings") {
        out["bindings"] = bindings.clone();
    }
    out["etag"] = body["etag"].clone();
    out
}

pub async fn get_iam(
    AxumState(shared): AxumState<Arc<Shared>>,
    Path(bucket): Path<String>,
    query: Query,
) -> GcpResult<Response> {
    let requested =
        policy::requested_version(Api::Storage, query.get("optionsRequestedPolicyVersion"))?;
    shared.read_world(|world, _| {
        let found = world
            .storage
            .buckets
            .get(&bucket)
            .ok_or_else(no_such_bucket)?;
        Ok(http::json(answer(
            &bucket,
            &bucket_policy(found),
            requested,
        )))
    })
}

pub async fn set_iam(
    AxumState(shared): AxumState<Arc<Shared>>,
    Path(bucket): Path<String>,
    body: Bytes,
) -> GcpResult<Response> {
    let body = http::parse_json(&body)?;
    let incoming = policy::parse_incoming(&body, "", false)?;
    let version = incoming.version;
    let mask = policy::parse_mask(None)?;
    shared.with_world(|world, cx| {
        let found = world
            .storage
            .buckets
            .get(&bucket)
            .ok_or_else(no_such_bucket)?;
        let current = bucket_policy(found);
        let target = Target::Bucket {
            name: &bucket,
            uniform: uniform(found),
        };
        let new = policy::apply_set(world, target, &current, incoming, &mask)?;
        let now = world.rfc3339(cx.now);
        let Some(stored) = world.storage.buckets.get_mut(&bucket) else {
            return Err(no_such_bucket());
        };
        stored.metageneration += 1;
        let metageneration = stored.metageneration;
        stored.resource["metageneration"] = json!(metageneration.to_string());
        stored.resource["etag"] = json!(super::etag(None, metageneration));
        stored.resource["updated"] = json!(now);
        stored.iam = Some(new);
        let policy = bucket_policy(stored);
        Ok(http::json(answer(&bucket, &policy, version)))
    })
}

#[cfg(test)]
mod tests {
    use super::super::Bucket;
    use super::*;
    use std::collections::BTreeMap;

    fn bucket(uniform: bool) -> Bucket {
        Bucket {
            project: "my-project".into(),
            resource: json!({"iamConfiguration": {"uniformBucketLevelAccess": {"enabled": uniform}}}),
            metageneration: 3,
            objects: BTreeMap::new(),
            iam: None,
        }
    }

    #[test]
    fn default_policies_and_etags() {
        let plain = bucket_policy(&bucket(false));
        assert_eq!(plain.bindings.len(), 2);
        assert_eq!(plain.etag, super::super::etag(None, 3));
        let uniform = bucket_policy(&bucket(true));
        assert_eq!(uniform.bindings.len(), 4);
        assert_eq!(uniform.bindings[2].role, "roles/storage.legacyObjectOwner");
        let body = answer("b", &uniform, 3);
        assert_eq!(body["kind"], "storage#policy");
        assert_eq!(body["resourceId"], "projects/_/buckets/b");
        assert_eq!(body["version"], 1);
    }

    #[test]
    fn buckets_saved_before_iam_load() {
        let mut saved = serde_json::to_value(bucket(false)).unwrap();
        saved.as_object_mut().unwrap().remove("iam");
        let loaded: Bucket = serde_json::from_value(saved).unwrap();
        assert!(loaded.iam.is_none());
        let mut saved =
            serde_json::to_value(crate::state::artifactregistry::State::default()).unwrap();
        saved.as_object_mut().unwrap().remove("policies");
        let state: crate::state::artifactregistry::State = serde_json::from_value(saved).unwrap();
        assert!(state.policies.is_empty());
    }
}
