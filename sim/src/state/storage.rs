//! Cloud Storage's state: buckets with every version of their objects, and resumable uploads;
//! the API is [`crate::storage`].

use crate::clock::SimTime;
use crate::state::iam::Policy;
use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;

/// One bucket and its objects.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Bucket {
    pub project: String,
    /// The bucket resource as the API returns it (every output field filled).
    pub resource: Value,
    pub metageneration: i64,
    /// Every stored version of every object, by name, in ascending generation.
    pub objects: BTreeMap<String, Vec<ObjectVersion>>,
    /// The IAM policy once someone set it ([`crate::storage::iam`]); absent from worlds saved before it existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub iam: Option<Policy>,
}

/// One generation of an object.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ObjectVersion {
    pub generation: i64,
    pub metageneration: i64,
    #[serde(with = "base64_bytes")]
    pub data: Vec<u8>,
    /// `md5Hash` and `crc32c` of `data`, base64.
    pub md5_hash: String,
    pub crc32c: String,
    /// Writable metadata: `contentType`, `cacheControl`, `contentEncoding`,
    /// `contentDisposition`, `contentLanguage`, `metadata` (custom), `storageClass`.
    pub metadata: Value,
    pub created: SimTime,
    pub updated: SimTime,
    /// When the version became noncurrent; `None` for the live version.
    pub deleted: Option<SimTime>,
}

/// A resumable upload session.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ResumableUpload {
    pub bucket: String,
    pub name: String,
    pub metadata: Value,
    pub preconditions: Preconditions,
    #[serde(with = "base64_bytes")]
    pub data: Vec<u8>,
}

/// Everything Cloud Storage holds.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct State {
    pub buckets: BTreeMap<String, Bucket>,
    pub uploads: BTreeMap<String, ResumableUpload>,
    /// The last object generation handed out.
    pub last_generation: i64,
}

/// The four generation preconditions of a request.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Preconditions {
    pub if_generation_match: Option<i64>,
    pub if_generation_not_match: Option<i64>,
    pub if_metageneration_match: Option<i64>,
    pub if_metageneration_not_match: Option<i64>,
}

/// Object data in a saved world: base64.
mod base64_bytes {
    use base64::Engine;
    use base64::engine::general_purpose::STANDARD;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(data: &[u8], s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&STANDARD.encode(data))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<u8>, D::Error> {
        let text = String::deserialize(d)?;
        STANDARD.decode(text).map_err(serde::de::Error::custom)
    }
}

/// `etag` of a bucket or object: the base64 of a small protobuf holding the generation (objects)
/// and metageneration, as Cloud Storage computes it.
pub fn etag(generation: Option<i64>, metageneration: i64) -> String {
    fn varint(out: &mut Vec<u8>, mut v: u64) {
        loop {
            let byte = (v & 0x7f) as u8;
            v >>= 7;
            if v == 0 {
                out.push(byte);
                break;
            }
            out.push(byte | 0x80);
        }
    }
    let mut bytes = Vec::new();
    match generation {
        Some(g) => {
            bytes.push(0x08);
            varint(&mut bytes, g as u64);
            bytes.push(0x10);
            varint(&mut bytes, metageneration as u64);
        }
        None => {
            bytes.push(0x08);
            varint(&mut bytes, metageneration as u64);
        }
    }
    BASE64.encode(bytes)
}
