//! Objects: metadata, media download (`alt=media`, also under `/download/storage/v1`), listing
//! with `prefix`/`delimiter`/`versions`, delete, patch, update, and the `rewriteTo`, `copyTo`
//! and `compose` methods.
//!
//! Object names arrive percent-encoded in one path segment (`a%2Fb`); the raw path is parsed
//! here so that a name can never be confused with a method suffix.

use super::buckets::merge;
use super::upload::{WRITABLE_OBJECT_FIELDS, store_object};
use super::{
    Bucket, Failed, ObjectVersion, Preconditions, etag, invalid, no_such_bucket, no_such_object,
    percent_decode, percent_encode, precondition_failed, scripted,
};
use crate::error::{GcpError, GcpResult};
use crate::http::{self, Query};
use crate::shared::Shared;
use crate::world::World;
use axum::body::{Body, Bytes};
use axum::extract::State as AxumState;
use axum::http::{HeaderMap, HeaderValue, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};
use std::collections::BTreeSet;
use std::sync::Arc;

/// `(bucket, raw segments after /o/)` of an object URL.
fn object_path(uri: &Uri) -> GcpResult<(String, Vec<String>)> {
    let path = uri.path();
    let rest = path
        .split_once("/b/")
        .map(|(_, r)| r)
        .ok_or_else(|| GcpError::not_found("Not Found"))?;
    let (bucket, object) = rest
        .split_once("/o/")
        .ok_or_else(|| GcpError::not_found("Not Found"))?;
    Ok((
        percent_decode(bucket),
        object.split('/').map(str::to_string).collect(),
    ))
}

/// The single object name of a plain object URL.
fn object_name(uri: &Uri) -> GcpResult<(String, String)> {
    let (bucket, segments) = object_path(uri)?;
    if segments.len() != 1 {
        return Err(GcpError::not_found("Not Found"));
    }
    Ok((bucket, percent_decode(&segments[0])))
}

/// The object resource as the API returns it.
pub fn object_json(world: &World, bucket: &str, name: &str, v: &ObjectVersion) -> Value {
    let encoded = percent_encode(name);
    let created = world.rfc3339(v.created);
    let mut object = json!({
        "kind": "storage#object",
        "id": format!("{bucket}/{name}/{}", v.generation),
        "selfLink": format!("https://www.googleapis.com/storage/v1/b/{bucket}/o/{encoded}"),
        "mediaLink": format!(
            "https://storage.googleapis.com/download/storage/v1/b/{bucket}/o/{encoded}?generation={}&alt=media",
            v.generation
        ),
        "name": name,
        "bucket": bucket,
        "generation": v.generation.to_string(),
        "metageneration": v.metageneration.to_string(),
        "contentType": "application/octet-stream",
        "storageClass": "STANDARD",
        "size": v.data.len().to_string(),
        "md5Hash": v.md5_hash,
        "crc32c": v.crc32c,
        "etag": etag(Some(v.generation), v.metageneration),
        "timeCreated": created,
        "updated": world.rfc3339(v.updated),
        "timeStorageClassUpdated": created,
        "timeFinalized": created,
    });
    if let (Some(target), Some(fields)) = (object.as_object_mut(), v.metadata.as_object()) {
        for (k, value) in fields {
            target.insert(k.clone(), value.clone());
        }
    }
    if let Some(deleted) = v.deleted {
        object["timeDeleted"] = json!(world.rfc3339(deleted));
    }
    object
}

fn generation_param(query: &Query) -> GcpResult<Option<i64>> {
    match query.get("generation") {
        None | Some("") => Ok(None),
        Some(g) => g
            .parse::<i64>()
            .map(Some)
            .map_err(|_| invalid(format!("Invalid value for generation: {g}"))),
    }
}

/// The version a request addresses: `generation=` or the live one.
fn find<'a>(bucket: &'a Bucket, name: &str, generation: Option<i64>) -> Option<&'a ObjectVersion> {
    match generation {
        Some(g) => bucket
            .objects
            .get(name)
            .and_then(|vs| vs.iter().find(|v| v.generation == g)),
        None => bucket.live(name),
    }
}

/// Metadata or media of one object (`GET .../o/NAME`).
pub async fn get_object(
    AxumState(shared): AxumState<Arc<Shared>>,
    uri: Uri,
    query: Query,
    headers: HeaderMap,
) -> GcpResult<Response> {
    let (bucket, name) = object_name(&uri)?;
    let media = query.get("alt") == Some("media");
    read_object(&shared, &bucket, &name, &query, &headers, media)
}

/// `GET /download/storage/v1/b/B/o/NAME`: always media.
pub async fn download_object(
    AxumState(shared): AxumState<Arc<Shared>>,
    uri: Uri,
    query: Query,
    headers: HeaderMap,
) -> GcpResult<Response> {
    let (bucket, name) = object_name(&uri)?;
    read_object(&shared, &bucket, &name, &query, &headers, true)
}

fn read_object(
    shared: &Shared,
    bucket: &str,
    name: &str,
    query: &Query,
    headers: &HeaderMap,
    media: bool,
) -> GcpResult<Response> {
    let generation = generation_param(query)?;
    let preconditions = Preconditions::parse(query)?;
    shared.read_world(|world, _| {
        let found = world
            .storage
            .buckets
            .get(bucket)
            .ok_or_else(no_such_bucket)?;
        let version = find(found, name, generation).ok_or_else(|| no_such_object(bucket, name))?;
        match preconditions.check(Some((version.generation, version.metageneration))) {
            Ok(()) => {}
            Err(Failed::NotMatch) => return Ok(StatusCode::NOT_MODIFIED.into_response()),
            Err(Failed::Match) => return Err(precondition_failed()),
        }
        if media {
            Ok(media_response(version, headers))
        } else {
            Ok(http::json(object_json(world, bucket, name, version)))
        }
    })
}

fn media_response(version: &ObjectVersion, headers: &HeaderMap) -> Response {
    let total = version.data.len();
    let range = headers
        .get(header::RANGE)
        .and_then(|r| r.to_str().ok())
        .and_then(|r| r.strip_prefix("bytes="))
        .map(|r| r.trim().to_string());
    let (status, start, end) = match range.as_deref().and_then(|r| r.split_once('-')) {
        Some(("", suffix)) => {
            let n = suffix.parse::<usize>().unwrap_or(0).min(total);
            (StatusCode::PARTIAL_CONTENT, total - n, total)
        }
        Some((from, to)) => {
            let from = from.parse::<usize>().unwrap_or(0);
            let to = to
                .parse::<usize>()
                .map(|t| (t + 1).min(total))
                .unwrap_or(total);
            if from >= total && total > 0 {
                let mut response = StatusCode::RANGE_NOT_SATISFIABLE.into_response();
                if let Ok(v) = HeaderValue::from_str(&format!("bytes */{total}")) {
                    response.headers_mut().insert(header::CONTENT_RANGE, v);
                }
                return response;
            }
            (
                StatusCode::PARTIAL_CONTENT,
                from.min(total),
                to.max(from.min(total)),
            )
        }
        None => (StatusCode::OK, 0, total),
    };
    let content_type = version.metadata["contentType"]
        .as_str()
        .unwrap_or("application/octet-stream")
        .to_string();
    let mut response = Response::new(Body::from(version.data[start..end].to_vec()));
    *response.status_mut() = status;
    let pairs = [
        (header::CONTENT_TYPE.as_str(), content_type),
        ("x-goog-generation", version.generation.to_string()),
        ("x-goog-metageneration", version.metageneration.to_string()),
        (
            "x-goog-hash",
            format!("crc32c={},md5={}", version.crc32c, version.md5_hash),
        ),
        ("x-goog-stored-content-length", total.to_string()),
        ("x-goog-stored-content-encoding", "identity".to_string()),
        ("x-goog-storage-class", "STANDARD".to_string()),
        (
            header::ETAG.as_str(),
            etag(Some(version.generation), version.metageneration),
        ),
    ];
    for (key, value) in pairs {
        if let (Ok(k), Ok(v)) = (
            header::HeaderName::from_bytes(key.as_bytes()),
            HeaderValue::from_str(&value),
        ) {
            response.headers_mut().insert(k, v);
        }
    }
    if status == StatusCode::PARTIAL_CONTENT {
        let last = end.saturating_sub(1);
        if let Ok(v) = HeaderValue::from_str(&format!("bytes {start}-{last}/{total}")) {
            response.headers_mut().insert(header::CONTENT_RANGE, v);
        }
    }
    response
}

/// `GET /storage/v1/b/B/o`.
pub async fn list_objects(
    AxumState(shared): AxumState<Arc<Shared>>,
    axum::extract::Path(bucket): axum::extract::Path<String>,
    query: Query,
) -> GcpResult<Response> {
    let prefix = query.get("prefix").unwrap_or("").to_string();
    let delimiter = query.get("delimiter").unwrap_or("").to_string();
    let versions = query.flag("versions");
    let trailing = query.flag("includeTrailingDelimiter");
    let start_offset = query.get("startOffset").unwrap_or("").to_string();
    let end_offset = query.get("endOffset").unwrap_or("").to_string();
    let cap = crate::paging::cap(&shared);
    shared.read_world(|world, _| {
        let found = world
            .storage
            .buckets
            .get(&bucket)
            .ok_or_else(no_such_bucket)?;
        // Entries in listing order, keyed for paging: objects (by name, then generation) and
        // prefixes (by themselves).
        let mut entries: Vec<(String, Result<Value, String>)> = Vec::new();
        let mut seen_prefixes = BTreeSet::new();
        for (name, all) in &found.objects {
            if !name.starts_with(&prefix)
                || (!start_offset.is_empty() && name.as_str() < start_offset.as_str())
                || (!end_offset.is_empty() && name.as_str() >= end_offset.as_str())
            {
                continue;
            }
            let rest = &name[prefix.len()..];
            if !delimiter.is_empty()
                && let Some(at) = rest.find(&delimiter)
            {
                let sub = format!("{prefix}{}", &rest[..at + delimiter.len()]);
                let is_marker = *name == sub;
                if seen_prefixes.insert(sub.clone()) {
                    entries.push((sub.clone(), Err(sub)));
                }
                if !(trailing && is_marker) {
                    continue;
                }
            }
            for v in all.iter().filter(|v| versions || v.deleted.is_none()) {
                let key = format!("{name}\u{0}{:020}", v.generation);
                entries.push((key, Ok(object_json(world, &bucket, name, v))));
            }
        }
        let page = crate::paging::page(&super::PAGING, &query, cap, entries)?;
        let items: Vec<Value> = page
            .items
            .iter()
            .filter_map(|e| e.as_ref().ok().cloned())
            .collect();
        let prefixes: Vec<Value> = page
            .items
            .iter()
            .filter_map(|e| e.as_ref().err().map(|p| json!(p)))
            .collect();
        let mut out = json!({ "kind": "storage#objects" });
        if !prefixes.is_empty() {
            out["prefixes"] = Value::Array(prefixes);
        }
        if !items.is_empty() {
            out["items"] = Value::Array(items);
        }
        if let Some(next) = page.next {
            out["nextPageToken"] = json!(next);
        }
        Ok(http::json(out))
    })
}

/// `DELETE /storage/v1/b/B/o/NAME`.
pub async fn delete_object(
    AxumState(shared): AxumState<Arc<Shared>>,
    uri: Uri,
    query: Query,
) -> GcpResult<Response> {
    let (bucket, name) = object_name(&uri)?;
    let generation = generation_param(&query)?;
    let preconditions = Preconditions::parse(&query)?;
    shared.with_world(|world, cx| {
        let found = world
            .storage
            .buckets
            .get(&bucket)
            .ok_or_else(no_such_bucket)?;
        let version =
            find(found, &name, generation).ok_or_else(|| no_such_object(&bucket, &name))?;
        preconditions.check_write(Some((version.generation, version.metageneration)))?;
        let (target, live) = (version.generation, version.deleted.is_none());
        let versioning = found.versioning();
        scripted(cx, "storage.object", "delete")?;
        let now = cx.now;
        if let Some(stored) = world.storage.buckets.get_mut(&bucket)
            && let Some(versions) = stored.objects.get_mut(&name)
        {
            if live && generation.is_none() && versioning {
                for v in versions.iter_mut().filter(|v| v.generation == target) {
                    v.deleted = Some(now);
                }
            } else {
                versions.retain(|v| v.generation != target);
            }
            if versions.is_empty() {
                stored.objects.remove(&name);
            }
        }
        Ok(StatusCode::NO_CONTENT.into_response())
    })
}

fn modify_object(
    shared: &Shared,
    uri: &Uri,
    query: &Query,
    body: &Value,
    replace: bool,
) -> GcpResult<Response> {
    let (bucket, name) = object_name(uri)?;
    let generation = generation_param(query)?;
    let preconditions = Preconditions::parse(query)?;
    shared.with_world(|world, cx| {
        let found = world
            .storage
            .buckets
            .get(&bucket)
            .ok_or_else(no_such_bucket)?;
        let version =
            find(found, &name, generation).ok_or_else(|| no_such_object(&bucket, &name))?;
        preconditions.check_write(Some((version.generation, version.metageneration)))?;
        let target = version.generation;
        scripted(cx, "storage.object", "update")?;
        let now = cx.now;
        let mut updated = None;
        if let Some(v) = world
            .storage
            .buckets
            .get_mut(&bucket)
            .and_then(|b| b.objects.get_mut(&name))
            .and_then(|vs| vs.iter_mut().find(|v| v.generation == target))
        {
            let changes: serde_json::Map<String, Value> = body
                .as_object()
                .map(|o| {
                    o.iter()
                        .filter(|(k, _)| {
                            WRITABLE_OBJECT_FIELDS.contains(&k.as_str())
                                && k.as_str() != "storageClass"
                        })
                        .map(|(k, v)| (k.clone(), v.clone()))
                        .collect()
                })
                .unwrap_or_default();
            if replace {
                let class = v.metadata.get("storageClass").cloned();
                v.metadata = Value::Object(changes);
                if let Some(class) = class {
                    v.metadata["storageClass"] = class;
                }
            } else {
                merge(&mut v.metadata, &Value::Object(changes));
            }
            v.metageneration += 1;
            v.updated = now;
            updated = Some(v.clone());
        }
        let v = updated.ok_or_else(|| no_such_object(&bucket, &name))?;
        Ok(http::json(object_json(world, &bucket, &name, &v)))
    })
}

/// `PATCH /storage/v1/b/B/o/NAME`: merges metadata, bumps the metageneration.
pub async fn patch_object(
    AxumState(shared): AxumState<Arc<Shared>>,
    uri: Uri,
    query: Query,
    body: Bytes,
) -> GcpResult<Response> {
    let body = http::parse_json(&body)?;
    modify_object(&shared, &uri, &query, &body, false)
}

/// `PUT /storage/v1/b/B/o/NAME`: replaces the writable metadata.
pub async fn update_object(
    AxumState(shared): AxumState<Arc<Shared>>,
    uri: Uri,
    query: Query,
    body: Bytes,
) -> GcpResult<Response> {
    let body = http::parse_json(&body)?;
    modify_object(&shared, &uri, &query, &body, true)
}

/// `POST .../o/SRC/rewriteTo/b/DST/o/NAME`, `.../copyTo/...` and `.../o/NAME/compose`.
pub async fn post_object_method(
    AxumState(shared): AxumState<Arc<Shared>>,
    uri: Uri,
    query: Query,
    body: Bytes,
) -> GcpResult<Response> {
    let body = http::parse_json(&body)?;
    let (bucket, segments) = object_path(&uri)?;
    let parts: Vec<&str> = segments.iter().map(String::as_str).collect();
    match parts.as_slice() {
        [
            source,
            method @ ("rewriteTo" | "copyTo"),
            "b",
            dest_bucket,
            "o",
            dest,
        ] => {
            let rewrite = *method == "rewriteTo";
            let source = percent_decode(source);
            let dest_bucket = percent_decode(dest_bucket);
            let dest = percent_decode(dest);
            let source_generation = match query.get("sourceGeneration") {
                Some(g) => Some(
                    g.parse::<i64>()
                        .map_err(|_| invalid(format!("Invalid value for sourceGeneration: {g}")))?,
                ),
                None => None,
            };
            let dest_preconditions = Preconditions::parse(&query)?;
            let source_preconditions = Preconditions::parse_with(&query, "Source")?;
            shared.with_world(|world, cx| {
                let found = world
                    .storage
                    .buckets
                    .get(&bucket)
                    .ok_or_else(no_such_bucket)?;
                let version = find(found, &source, source_generation)
                    .ok_or_else(|| no_such_object(&bucket, &source))?;
                source_preconditions
                    .check_write(Some((version.generation, version.metageneration)))?;
                let data = version.data.clone();
                let mut metadata = version.metadata.clone();
                let overrides: serde_json::Map<String, Value> = body
                    .as_object()
                    .map(|o| {
                        o.iter()
                            .filter(|(k, _)| WRITABLE_OBJECT_FIELDS.contains(&k.as_str()))
                            .map(|(k, v)| (k.clone(), v.clone()))
                            .collect()
                    })
                    .unwrap_or_default();
                if !overrides.is_empty() {
                    metadata = Value::Object(overrides);
                }
                let size = data.len();
                let resource = store_object(
                    world,
                    cx,
                    &dest_bucket,
                    &dest,
                    data,
                    metadata,
                    &dest_preconditions,
                )?;
                if rewrite {
                    Ok(http::json(json!({
                        "kind": "storage#rewriteResponse",
                        "totalBytesRewritten": size.to_string(),
                        "objectSize": size.to_string(),
                        "done": true,
                        "resource": resource,
                    })))
                } else {
                    Ok(http::json(resource))
                }
            })
        }
        [dest, "compose"] => {
            let dest = percent_decode(dest);
            let preconditions = Preconditions::parse(&query)?;
            let sources = body["sourceObjects"]
                .as_array()
                .cloned()
                .unwrap_or_default();
            if sources.is_empty() {
                return Err(GcpError::new(
                    400,
                    "INVALID_ARGUMENT",
                    "required",
                    "Required parameter: sourceObjects",
                ));
            }
            if sources.len() > 32 {
                return Err(invalid(
                    "The number of source components provided (33) exceeds the maximum (32)",
                ));
            }
            shared.with_world(|world, cx| {
                let found = world
                    .storage
                    .buckets
                    .get(&bucket)
                    .ok_or_else(no_such_bucket)?;
                let mut data = Vec::new();
                let mut content_type = None;
                for source in &sources {
                    let name = source["name"].as_str().unwrap_or("");
                    let generation = source["generation"].as_str().and_then(|g| g.parse().ok());
                    let version = find(found, name, generation)
                        .ok_or_else(|| no_such_object(&bucket, name))?;
                    content_type =
                        content_type.or_else(|| version.metadata.get("contentType").cloned());
                    data.extend_from_slice(&version.data);
                }
                let mut metadata = body
                    .get("destination")
                    .cloned()
                    .unwrap_or_else(|| json!({}));
                if metadata.get("contentType").is_none()
                    && let Some(ct) = content_type
                {
                    metadata["contentType"] = ct;
                }
                let resource =
                    store_object(world, cx, &bucket, &dest, data, metadata, &preconditions)?;
                Ok(http::json(resource))
            })
        }
        _ => Err(GcpError::not_found("Not Found")),
    }
}
