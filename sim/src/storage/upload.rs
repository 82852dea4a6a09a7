//! Object uploads: `uploadType=media` (the body is the data), `multipart` (a
//! `multipart/related` body: JSON metadata, then the data) and `resumable` (a session started by
//! a POST with the metadata, answered with a `Location`; the data follows in one or more PUTs
//! with `Content-Range`, each answered 308 with the `Range` received so far until the last).
//!
//! [`store_object`] is the single place a new object generation is written: it checks the
//! preconditions against the live version, keeps the replaced version as noncurrent when the
//! bucket has versioning, and verifies client-supplied hashes.

use super::objects::object_json;
use super::{
    ObjectVersion, Preconditions, ResumableUpload, hashes, invalid, micros, no_such_bucket,
    percent_encode, required, scripted,
};
use crate::error::{GcpError, GcpResult};
use crate::http::{self, Query};
use crate::shared::Ctx;
use crate::shared::Shared;
use crate::world::World;
use axum::body::Bytes;
use axum::extract::{Path, State as AxumState};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;
use serde_json::{Map, Value, json};
use std::sync::Arc;

/// Object fields a client may set.
pub const WRITABLE_OBJECT_FIELDS: &[&str] = &[
    "acl",
    "cacheControl",
    "contentDisposition",
    "contentEncoding",
    "contentLanguage",
    "contentType",
    "customTime",
    "eventBasedHold",
    "metadata",
    "retention",
    "storageClass",
    "temporaryHold",
];

fn writable(metadata: &Value) -> Map<String, Value> {
    metadata
        .as_object()
        .map(|o| {
            o.iter()
                .filter(|(k, v)| WRITABLE_OBJECT_FIELDS.contains(&k.as_str()) && !v.is_null())
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect()
        })
        .unwrap_or_default()
}

fn check_object_name(name: &str) -> GcpResult<()> {
    if name.is_empty() {
        return Err(required("name"));
    }
    if name.len() > 1024 || name.contains(['\r', '\n']) || name == "." || name == ".." {
        return Err(invalid("The specified object name is not valid."));
    }
    Ok(())
}

/// Writes a new generation of `bucket/name`. `metadata` is the request's object resource.
pub fn store_object(
    world: &mut World,
    cx: &Ctx,
    bucket: &str,
    name: &str,
    data: Vec<u8>,
    metadata: Value,
    preconditions: &Preconditions,
) -> GcpResult<Value> {
    check_object_name(name)?;
    let found = world
        .storage
        .buckets
        .get(bucket)
        .ok_or_else(no_such_bucket)?;
    let live = found.live(name).map(|v| (v.generation, v.metageneration));
    preconditions.check_write(live)?;
    let versioning = found.versioning();
    let default_class = found.resource["storageClass"]
        .as_str()
        .unwrap_or("STANDARD")
        .to_string();
    scripted(cx, "storage.object", "create")?;
    let (md5_hash, crc32c) = hashes(&data);
    if let Some(given) = metadata["md5Hash"].as_str()
        && given != md5_hash
    {
        return Err(invalid(format!(
            "Provided MD5 hash \"{given}\" doesn't match calculated MD5 hash \"{md5_hash}\"."
        )));
    }
    if let Some(given) = metadata["crc32c"].as_str()
        && given != crc32c
    {
        return Err(invalid(format!(
            "Provided CRC32C \"{given}\" doesn't match calculated CRC32C \"{crc32c}\"."
        )));
    }
    let mut fields = writable(&metadata);
    // A customer-managed key: the request's, else the bucket's default. The object names the
    // key version that encrypted it, as Cloud Storage does.
    let key = metadata["kmsKeyName"]
        .as_str()
        .or_else(|| found.resource["encryption"]["defaultKmsKeyName"].as_str());
    if let Some(key) = key {
        fields.insert(
            "kmsKeyName".into(),
            json!(format!("{key}/cryptoKeyVersions/1")),
        );
    }
    fields
        .entry("contentType")
        .or_insert_with(|| json!("application/octet-stream"));
    fields
        .entry("storageClass")
        .or_insert_with(|| json!(default_class));
    let generation = {
        let now = micros(world, cx.now);
        world.storage.next_generation(now)
    };
    let version = ObjectVersion {
        generation,
        metageneration: 1,
        data,
        md5_hash,
        crc32c,
        metadata: Value::Object(fields),
        created: cx.now,
        updated: cx.now,
        deleted: None,
    };
    let now = cx.now;
    if let Some(stored) = world.storage.buckets.get_mut(bucket) {
        let versions = stored.objects.entry(name.to_string()).or_default();
        if versioning {
            for v in versions.iter_mut().filter(|v| v.deleted.is_none()) {
                v.deleted = Some(now);
            }
        } else {
            versions.retain(|v| v.deleted.is_some());
        }
        versions.push(version.clone());
    }
    Ok(object_json(world, bucket, name, &version))
}

fn header_str<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

/// `POST /storage/v1/b/B/o` without an upload: an empty object with the given metadata.
pub async fn insert_metadata_only(
    AxumState(shared): AxumState<Arc<Shared>>,
    Path(bucket): Path<String>,
    query: Query,
    body: Bytes,
) -> GcpResult<Response> {
    let metadata = http::parse_json(&body)?;
    let name = query
        .get("name")
        .or_else(|| metadata["name"].as_str())
        .unwrap_or("")
        .to_string();
    let preconditions = Preconditions::parse(&query)?;
    shared.with_world(|world, cx| {
        let object = store_object(
            world,
            cx,
            &bucket,
            &name,
            Vec::new(),
            metadata,
            &preconditions,
        )?;
        Ok(http::json(object))
    })
}

/// `POST /upload/storage/v1/b/B/o?uploadType=media|multipart|resumable`.
pub async fn upload(
    AxumState(shared): AxumState<Arc<Shared>>,
    Path(bucket): Path<String>,
    query: Query,
    headers: HeaderMap,
    body: Bytes,
) -> GcpResult<Response> {
    let preconditions = Preconditions::parse(&query)?;
    let content_type = header_str(&headers, "content-type")
        .unwrap_or("")
        .to_string();
    let upload_type = query
        .get("uploadType")
        .map(str::to_string)
        .unwrap_or_else(|| {
            if content_type.starts_with("multipart/related") {
                "multipart".into()
            } else {
                "media".into()
            }
        });
    match upload_type.as_str() {
        "media" => {
            let name = query.get("name").unwrap_or("").to_string();
            let mut metadata = json!({});
            if !content_type.is_empty() {
                metadata["contentType"] = json!(content_type);
            }
            if let Some(key) = query.get("kmsKeyName") {
                metadata["kmsKeyName"] = json!(key);
            }
            shared.with_world(|world, cx| {
                let object = store_object(
                    world,
                    cx,
                    &bucket,
                    &name,
                    body.to_vec(),
                    metadata,
                    &preconditions,
                )?;
                Ok(http::json(object))
            })
        }
        "multipart" => {
            let (mut metadata, data, part_type) = parse_multipart(&content_type, &body)?;
            if metadata.get("contentType").is_none()
                && let Some(part_type) = part_type
            {
                metadata["contentType"] = json!(part_type);
            }
            if let Some(key) = query.get("kmsKeyName") {
                metadata["kmsKeyName"] = json!(key);
            }
            let name = query
                .get("name")
                .or_else(|| metadata["name"].as_str())
                .unwrap_or("")
                .to_string();
            shared.with_world(|world, cx| {
                let object =
                    store_object(world, cx, &bucket, &name, data, metadata, &preconditions)?;
                Ok(http::json(object))
            })
        }
        "resumable" => {
            let mut metadata = http::parse_json(&body)?;
            if metadata.get("contentType").is_none()
                && let Some(t) = header_str(&headers, "x-upload-content-type")
            {
                metadata["contentType"] = json!(t);
            }
            let name = query
                .get("name")
                .or_else(|| metadata["name"].as_str())
                .unwrap_or("")
                .to_string();
            check_object_name(&name)?;
            shared.with_world(|world, _| {
                let found = world
                    .storage
                    .buckets
                    .get(&bucket)
                    .ok_or_else(no_such_bucket)?;
                preconditions
                    .check_write(found.live(&name).map(|v| (v.generation, v.metageneration)))?;
                let id = format!("ADPyc{}", world.hex(40));
                let location = format!(
                    "{}/upload/storage/v1/b/{bucket}/o?uploadType=resumable&name={}&upload_id={id}",
                    shared.base_url,
                    percent_encode(&name)
                );
                world.storage.uploads.insert(
                    id,
                    ResumableUpload {
                        bucket: bucket.clone(),
                        name,
                        metadata,
                        preconditions,
                        data: Vec::new(),
                    },
                );
                let mut response = StatusCode::OK.into_response();
                if let Ok(v) = HeaderValue::from_str(&location) {
                    response.headers_mut().insert(header::LOCATION, v);
                }
                Ok(response)
            })
        }
        other => Err(invalid(format!("Invalid upload type: {other}"))),
    }
}

/// The received range of a session as a 308 response.
fn incomplete(received: usize) -> Response {
    let mut response = StatusCode::PERMANENT_REDIRECT.into_response();
    if received > 0
        && let Ok(v) = HeaderValue::from_str(&format!("bytes=0-{}", received - 1))
    {
        response.headers_mut().insert(header::RANGE, v);
    }
    response
}

/// `PUT /upload/storage/v1/b/B/o?upload_id=ID`: a chunk, the rest, or a status query.
pub async fn resume(
    AxumState(shared): AxumState<Arc<Shared>>,
    Path(bucket): Path<String>,
    query: Query,
    headers: HeaderMap,
    body: Bytes,
) -> GcpResult<Response> {
    let id = query
        .get("upload_id")
        .ok_or_else(|| required("upload_id"))?
        .to_string();
    let range = header_str(&headers, "content-range").map(str::to_string);
    shared.with_world(|world, cx| {
        let session = world
            .storage
            .uploads
            .get_mut(&id)
            .filter(|s| s.bucket == bucket)
            .ok_or_else(|| GcpError::not_found("No such upload session."))?;
        let total: Option<usize> = match range.as_deref().and_then(|r| r.strip_prefix("bytes ")) {
            None => {
                session.data.extend_from_slice(&body);
                Some(session.data.len())
            }
            Some(spec) => {
                let (span, total) = spec.split_once('/').unwrap_or((spec, "*"));
                let total = total.parse::<usize>().ok();
                if span != "*" {
                    let (from, _) = span.split_once('-').unwrap_or((span, ""));
                    let from = from
                        .parse::<usize>()
                        .map_err(|_| invalid(format!("Invalid Content-Range: {spec}")))?;
                    let have = session.data.len();
                    if from > have {
                        return Err(invalid(format!(
                            "Invalid request. The Content-Range starts at byte {from} but only {have} bytes were received."
                        )));
                    }
                    let skip = have - from;
                    if skip < body.len() {
                        session.data.extend_from_slice(&body[skip..]);
                    }
                }
                total
            }
        };
        let received = session.data.len();
        if total != Some(received) {
            return Ok(incomplete(received));
        }
        let Some(session) = world.storage.uploads.remove(&id) else {
            return Err(GcpError::not_found("No such upload session."));
        };
        let object = store_object(
            world,
            cx,
            &session.bucket,
            &session.name,
            session.data,
            session.metadata,
            &session.preconditions,
        )?;
        Ok(http::json(object))
    })
}

/// Splits a `multipart/related` body into its JSON metadata, its data, and the data part's
/// content type.
fn parse_multipart(content_type: &str, body: &[u8]) -> GcpResult<(Value, Vec<u8>, Option<String>)> {
    let boundary = content_type
        .split(';')
        .filter_map(|p| p.trim().strip_prefix("boundary="))
        .next()
        .map(|b| b.trim_matches(['"', '\'']).to_string())
        .ok_or_else(|| invalid("Missing boundary in multipart/related Content-Type."))?;
    let delimiter = format!("--{boundary}");
    let positions: Vec<usize> = find_all(body, delimiter.as_bytes());
    let mut parts: Vec<(&[u8], &[u8])> = Vec::new();
    for pair in positions.windows(2) {
        let mut start = pair[0] + delimiter.len();
        if body[start..].starts_with(b"\r\n") {
            start += 2;
        } else if body[start..].starts_with(b"\n") {
            start += 1;
        }
        let mut end = pair[1];
        if end >= 2 && &body[end - 2..end] == b"\r\n" {
            end -= 2;
        } else if end >= 1 && body[end - 1] == b'\n' {
            end -= 1;
        }
        let part = &body[start..end.max(start)];
        let (headers, content) = match find_all(part, b"\r\n\r\n").first() {
            Some(at) => (&part[..*at], &part[at + 4..]),
            None => match find_all(part, b"\n\n").first() {
                Some(at) => (&part[..*at], &part[at + 2..]),
                None => (&part[..0], part),
            },
        };
        parts.push((headers, content));
    }
    if parts.len() != 2 {
        return Err(invalid(
            "Invalid multipart request: expected a metadata part and a media part.",
        ));
    }
    let metadata = http::parse_json(parts[0].1)?;
    let part_headers = String::from_utf8_lossy(parts[1].0).to_string();
    let mut part_type = None;
    let mut base64 = false;
    for line in part_headers.lines() {
        if let Some((k, v)) = line.split_once(':') {
            let (k, v) = (k.trim().to_ascii_lowercase(), v.trim());
            if k == "content-type" {
                part_type = Some(v.to_string());
            } else if k == "content-transfer-encoding" && v.eq_ignore_ascii_case("base64") {
                base64 = true;
            }
        }
    }
    let data = if base64 {
        let text: Vec<u8> = parts[1]
            .1
            .iter()
            .copied()
            .filter(|b| !b.is_ascii_whitespace())
            .collect();
        BASE64
            .decode(text)
            .map_err(|_| invalid("Invalid base64 media part."))?
    } else {
        parts[1].1.to_vec()
    };
    Ok((metadata, data, part_type))
}

fn find_all(haystack: &[u8], needle: &[u8]) -> Vec<usize> {
    if needle.is_empty() || haystack.len() < needle.len() {
        return Vec::new();
    }
    (0..=haystack.len() - needle.len())
        .filter(|i| &haystack[*i..*i + needle.len()] == needle)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn multipart_bodies_split_into_metadata_and_media() {
        let body = b"--XYZ\r\nContent-Type: application/json; charset=UTF-8\r\n\r\n{\"name\":\"a/b\"}\r\n--XYZ\r\nContent-Type: text/plain\r\n\r\nhello\nworld\r\n--XYZ--\r\n";
        let (metadata, data, part_type) =
            parse_multipart("multipart/related; boundary=XYZ", body).unwrap();
        assert_eq!(metadata["name"], "a/b");
        assert_eq!(data, b"hello\nworld");
        assert_eq!(part_type.as_deref(), Some("text/plain"));
        let lf = b"--b\n\n{}\n--b\nContent-Type: application/octet-stream\n\nxyz\n--b--";
        let (_, data, _) = parse_multipart("multipart/related; boundary='b'", lf).unwrap();
        assert_eq!(data, b"xyz");
    }
}
