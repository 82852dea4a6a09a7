//! Buckets: insert, get, list, patch, update, delete, and the bucket naming rules.
//!
//! Bucket names are global: a name taken by any project gives 409 `conflict`, with the message
//! Cloud Storage uses for a bucket you already own or for one someone else owns.

use super::{
    Bucket, Failed, Preconditions, etag, invalid, no_such_bucket, precondition_failed, required,
    scripted,
};
use crate::error::{GcpError, GcpResult};
use crate::geo;
use crate::http::{self, Query};
use crate::shared::Ctx;
use crate::shared::Shared;
use crate::world::World;
use axum::body::Bytes;
use axum::extract::{Path, State as AxumState};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;
use std::sync::Arc;

const MULTI_REGIONS: &[&str] = &["US", "EU", "ASIA"];
const DUAL_REGIONS: &[&str] = &["NAM4", "EUR4", "EUR5", "EUR7", "EUR8", "ASIA1"];
const STORAGE_CLASSES: &[&str] = &[
    "STANDARD",
    "NEARLINE",
    "COLDLINE",
    "ARCHIVE",
    "MULTI_REGIONAL",
    "REGIONAL",
    "DURABLE_REDUCED_AVAILABILITY",
];
/// Fields a client may set; everything else in a request body is output-only and ignored.
const WRITABLE: &[&str] = &[
    "acl",
    "autoclass",
    "billing",
    "cors",
    "customPlacementConfig",
    "defaultEventBasedHold",
    "defaultObjectAcl",
    "encryption",
    "hierarchicalNamespace",
    "iamConfiguration",
    "ipFilter",
    "labels",
    "lifecycle",
    "logging",
    "objectRetention",
    "retentionPolicy",
    "rpo",
    "softDeletePolicy",
    "storageClass",
    "versioning",
    "website",
];
/// Fields fixed at creation.
const IMMUTABLE: &[&str] = &[
    "hierarchicalNamespace",
    "customPlacementConfig",
    "objectRetention",
];

/// Cloud Storage's bucket naming rules.
pub fn valid_bucket_name(name: &str) -> bool {
    let bytes = name.as_bytes();
    let len_ok = if name.contains('.') {
        (3..=222).contains(&bytes.len()) && name.split('.').all(|c| !c.is_empty() && c.len() <= 63)
    } else {
        (3..=63).contains(&bytes.len())
    };
    let chars_ok = bytes
        .iter()
        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || matches!(b, b'-' | b'_' | b'.'));
    let ends_ok = bytes
        .first()
        .zip(bytes.last())
        .is_some_and(|(f, l)| f.is_ascii_alphanumeric() && l.is_ascii_alphanumeric());
    let ip_like = name.split('.').count() == 4 && name.split('.').all(|p| p.parse::<u8>().is_ok());
    let google_like =
        name.starts_with("goog") || name.contains("google") || name.contains("g00gle");
    len_ok && chars_ok && ends_ok && !ip_like && !google_like
}

/// `locationType` of an upper-cased location, or `None` if the location is unknown.
fn location_type(location: &str) -> Option<&'static str> {
    if MULTI_REGIONS.contains(&location) {
        Some("multi-region")
    } else if DUAL_REGIONS.contains(&location) {
        Some("dual-region")
    } else if geo::region_exists(&location.to_ascii_lowercase()) {
        Some("region")
    } else {
        None
    }
}

pub use crate::world::project_number;

/// Merges `patch` into `target` as a JSON merge patch (`null` removes a field).
pub fn merge(target: &mut Value, patch: &Value) {
    match (target.as_object_mut(), patch.as_object()) {
        (Some(t), Some(p)) => {
            for (k, v) in p {
                if v.is_null() {
                    t.remove(k);
                } else if v.is_object() && t.get(k).is_some_and(Value::is_object) {
                    if let Some(slot) = t.get_mut(k) {
                        merge(slot, v);
                    }
                } else {
                    t.insert(k.clone(), v.clone());
                }
            }
        }
        _ => *target = patch.clone(),
    }
}

fn writable_fields(body: &Value) -> Map<String, Value> {
    body.as_object()
        .map(|o| {
            o.iter()
                .filter(|(k, _)| WRITABLE.contains(&k.as_str()))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect()
        })
        .unwrap_or_default()
}

/// Checks and completes the writable settings of a bucket (storage class, access control,
/// hierarchical namespace); `now_text` stamps newly enabled uniform access.
fn settle(world: &World, cx: &Ctx, resource: &mut Value, before: Option<&Value>) -> GcpResult<()> {
    let class = resource["storageClass"]
        .as_str()
        .unwrap_or("STANDARD")
        .to_ascii_uppercase();
    if !STORAGE_CLASSES.contains(&class.as_str()) {
        return Err(invalid("The specified storage class is not valid."));
    }
    resource["storageClass"] = json!(class);
    let ubla = resource["iamConfiguration"]["uniformBucketLevelAccess"]["enabled"] == true
        || resource["iamConfiguration"]["bucketPolicyOnly"]["enabled"] == true;
    let was = before
        .is_some_and(|b| b["iamConfiguration"]["uniformBucketLevelAccess"]["enabled"] == true);
    let mut uniform = json!({ "enabled": ubla });
    if ubla {
        let locked = if was {
            before
                .and_then(|b| {
                    b["iamConfiguration"]["uniformBucketLevelAccess"]["lockedTime"].as_str()
                })
                .map(str::to_string)
        } else {
            None
        };
        let locked = locked.unwrap_or_else(|| world.rfc3339(cx.now.plus_ms(90 * 24 * 3600 * 1000)));
        uniform["lockedTime"] = json!(locked);
    }
    let prevention = resource["iamConfiguration"]["publicAccessPrevention"]
        .as_str()
        .unwrap_or("inherited")
        .to_string();
    resource["iamConfiguration"] = json!({
        "bucketPolicyOnly": uniform.clone(),
        "uniformBucketLevelAccess": uniform,
        "publicAccessPrevention": prevention,
    });
    if resource["hierarchicalNamespace"]["enabled"] == true && !ubla {
        return Err(invalid(
            "Hierarchical namespace can only be enabled on buckets with uniform bucket-level access enabled.",
        ));
    }
    for field in IMMUTABLE {
        if let Some(before) = before
            && before.get(*field) != resource.get(*field)
        {
            return Err(invalid(format!(
                "The field '{field}' cannot be changed after the bucket is created."
            )));
        }
    }
    Ok(())
}

pub async fn insert_bucket(
    AxumState(shared): AxumState<Arc<Shared>>,
    query: Query,
    body: Bytes,
) -> GcpResult<Response> {
    let body = http::parse_json(&body)?;
    let project = query
        .get("project")
        .filter(|p| !p.is_empty())
        .ok_or_else(|| required("project"))?
        .to_string();
    let name = body["name"].as_str().unwrap_or("").to_string();
    if name.is_empty() {
        return Err(required("resource.name"));
    }
    if !valid_bucket_name(&name) {
        return Err(invalid(format!("Invalid bucket name: '{name}'")));
    }
    let location = body["location"]
        .as_str()
        .unwrap_or("US")
        .to_ascii_uppercase();
    let location_type = location_type(&location)
        .ok_or_else(|| invalid("The specified location constraint is not valid."))?;
    shared.with_world(|world, cx| {
        if let Some(existing) = world.storage.buckets.get(&name) {
            let message = if existing.project == project {
                "Your previous request to create the named bucket succeeded and you already own it."
            } else {
                "The requested bucket name is not available. The bucket namespace is shared by all users of the system. Please select a different name and try again."
            };
            return Err(GcpError::new(409, "ALREADY_EXISTS", "conflict", message));
        }
        scripted(cx, "storage.bucket", "create")?;
        let mut resource = Value::Object(writable_fields(&body));
        settle(world, cx, &mut resource, None)?;
        let now = world.rfc3339(cx.now);
        resource["kind"] = json!("storage#bucket");
        resource["selfLink"] = json!(format!("https://www.googleapis.com/storage/v1/b/{name}"));
        resource["id"] = json!(name);
        resource["name"] = json!(name);
        resource["projectNumber"] = json!(world.project_number(&project));
        resource["metageneration"] = json!("1");
        resource["location"] = json!(location);
        resource["locationType"] = json!(location_type);
        resource["etag"] = json!(etag(None, 1));
        resource["timeCreated"] = json!(now);
        resource["updated"] = json!(now);
        if resource.get("softDeletePolicy").is_none() {
            resource["softDeletePolicy"] =
                json!({ "retentionDurationSeconds": "604800", "effectiveTime": now });
        }
        if location_type != "region" && resource.get("rpo").is_none() {
            resource["rpo"] = json!("DEFAULT");
        }
        world.storage.buckets.insert(
            name.clone(),
            Bucket {
                project: project.clone(),
                resource: resource.clone(),
                metageneration: 1,
                objects: BTreeMap::new(),
                iam: None,
            },
        );
        Ok(http::json(resource))
    })
}

fn check_bucket_preconditions(
    bucket: &Bucket,
    query: &Query,
    read: bool,
) -> GcpResult<Option<Response>> {
    let preconditions = Preconditions::parse(query)?;
    match preconditions.check(Some((0, bucket.metageneration))) {
        Ok(()) => Ok(None),
        Err(Failed::NotMatch) if read => Ok(Some(StatusCode::NOT_MODIFIED.into_response())),
        Err(_) => Err(precondition_failed()),
    }
}

pub async fn get_bucket(
    AxumState(shared): AxumState<Arc<Shared>>,
    Path(bucket): Path<String>,
    query: Query,
) -> GcpResult<Response> {
    shared.read_world(|world, _| {
        let found = world
            .storage
            .buckets
            .get(&bucket)
            .ok_or_else(no_such_bucket)?;
        if let Some(not_modified) = check_bucket_preconditions(found, &query, true)? {
            return Ok(not_modified);
        }
        Ok(http::json(found.resource.clone()))
    })
}

pub async fn list_buckets(
    AxumState(shared): AxumState<Arc<Shared>>,
    query: Query,
) -> GcpResult<Response> {
    let project = query
        .get("project")
        .filter(|p| !p.is_empty())
        .ok_or_else(|| required("project"))?
        .to_string();
    let prefix = query.get("prefix").unwrap_or("").to_string();
    shared.read_world(|world, _| {
        let items: Vec<(String, Value)> = world
            .storage
            .buckets
            .iter()
            .filter(|(name, b)| b.project == project && name.starts_with(&prefix))
            .map(|(name, b)| (name.clone(), b.resource.clone()))
            .collect();
        let page = crate::paging::page(&super::PAGING, &query, crate::paging::cap(&shared), items)?;
        let mut out = json!({ "kind": "storage#buckets" });
        if !page.items.is_empty() {
            out["items"] = Value::Array(page.items);
        }
        if let Some(next) = page.next {
            out["nextPageToken"] = json!(next);
        }
        Ok(http::json(out))
    })
}

/// Shared by patch (merge) and update (replace of the writable fields).
fn modify_bucket(
    shared: &Shared,
    bucket: &str,
    query: &Query,
    body: &Value,
    replace: bool,
) -> GcpResult<Response> {
    shared.with_world(|world, cx| {
        let found = world
            .storage
            .buckets
            .get(bucket)
            .ok_or_else(no_such_bucket)?;
        check_bucket_preconditions(found, query, false)?;
        scripted(cx, "storage.bucket", "update")?;
        let before = found.resource.clone();
        let mut resource = before.clone();
        let changes = writable_fields(body);
        if replace {
            for field in WRITABLE {
                if !IMMUTABLE.contains(field)
                    && let Some(object) = resource.as_object_mut()
                {
                    object.remove(*field);
                }
            }
            if let Some(object) = resource.as_object_mut() {
                object.extend(changes);
            }
        } else {
            merge(&mut resource, &Value::Object(changes));
        }
        settle(world, cx, &mut resource, Some(&before))?;
        let metageneration = found.metageneration + 1;
        resource["metageneration"] = json!(metageneration.to_string());
        resource["etag"] = json!(etag(None, metageneration));
        resource["updated"] = json!(world.rfc3339(cx.now));
        if let Some(stored) = world.storage.buckets.get_mut(bucket) {
            stored.metageneration = metageneration;
            stored.resource = resource.clone();
        }
        Ok(http::json(resource))
    })
}

pub async fn patch_bucket(
    AxumState(shared): AxumState<Arc<Shared>>,
    Path(bucket): Path<String>,
    query: Query,
    body: Bytes,
) -> GcpResult<Response> {
    let body = http::parse_json(&body)?;
    modify_bucket(&shared, &bucket, &query, &body, false)
}

pub async fn update_bucket(
    AxumState(shared): AxumState<Arc<Shared>>,
    Path(bucket): Path<String>,
    query: Query,
    body: Bytes,
) -> GcpResult<Response> {
    let body = http::parse_json(&body)?;
    modify_bucket(&shared, &bucket, &query, &body, true)
}

pub async fn delete_bucket(
    AxumState(shared): AxumState<Arc<Shared>>,
    Path(bucket): Path<String>,
    query: Query,
) -> GcpResult<Response> {
    shared.with_world(|world, cx| {
        let found = world
            .storage
            .buckets
            .get(&bucket)
            .ok_or_else(no_such_bucket)?;
        check_bucket_preconditions(found, &query, false)?;
        if !found.is_empty() {
            return Err(GcpError::new(
                409,
                "ALREADY_EXISTS",
                "conflict",
                "The bucket you tried to delete is not empty.",
            ));
        }
        scripted(cx, "storage.bucket", "delete")?;
        world.storage.buckets.remove(&bucket);
        world.storage.uploads.retain(|_, u| u.bucket != bucket);
        Ok(StatusCode::NO_CONTENT.into_response())
    })
}

/// `GET /storage/v1/b/B/storageLayout` (gcloud asks before recursive operations).
pub async fn storage_layout(
    AxumState(shared): AxumState<Arc<Shared>>,
    Path(bucket): Path<String>,
) -> GcpResult<Response> {
    shared.read_world(|world, _| {
        let found = world
            .storage
            .buckets
            .get(&bucket)
            .ok_or_else(no_such_bucket)?;
        let r = &found.resource;
        let mut layout = json!({
            "kind": "storage#storageLayout",
            "bucket": bucket,
            "location": r["location"],
            "locationType": r["locationType"],
            "hierarchicalNamespace": { "enabled": r["hierarchicalNamespace"]["enabled"] == true },
        });
        if let Some(placement) = r.get("customPlacementConfig") {
            layout["customPlacementConfig"] = placement.clone();
        }
        Ok(http::json(layout))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bucket_names_follow_the_rules() {
        for good in ["a3ctl-state", "abc", "my_bucket.example.com", "a1-b2"] {
            assert!(valid_bucket_name(good), "{good}");
        }
        for bad in [
            "ab",
            "Bucket",
            "-abc",
            "abc-",
            "goog-bucket",
            "my-google-bucket",
            "192.168.5.4",
            "a b",
            &"a".repeat(64),
        ] {
            assert!(!valid_bucket_name(bad), "{bad}");
        }
        assert_eq!(location_type("US-CENTRAL1"), Some("region"));
        assert_eq!(location_type("US"), Some("multi-region"));
        assert_eq!(location_type("MARS"), None);
    }

    #[test]
    fn merge_patch_removes_nulls() {
        let mut v = json!({"labels": {"a": "1", "b": "2"}, "versioning": {"enabled": false}});
        merge(
            &mut v,
            &json!({"labels": {"a": null, "c": "3"}, "versioning": {"enabled": true}}),
        );
        assert_eq!(
            v,
            json!({"labels": {"b": "2", "c": "3"}, "versioning": {"enabled": true}})
        );
    }
}
