//! Request helpers shared by the Google API modules: query parameters, JSON bodies, responses.

use crate::enums::{self, EnumTable};
use crate::error::{GcpError, GcpResult};
use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use axum::response::{IntoResponse, Response};
use serde_json::Value;
use std::collections::BTreeMap;

/// The request's query parameters, decoded. Repeated keys keep the last value.
#[derive(Debug, Clone, Default)]
pub struct Query(pub BTreeMap<String, String>);

impl Query {
    pub fn parse(raw: Option<&str>) -> Query {
        let map = raw
            .map(|q| form_urlencoded::parse(q.as_bytes()).into_owned().collect())
            .unwrap_or_default();
        Query(map)
    }

    pub fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key).map(String::as_str)
    }

    /// True when the caller asked for integer enums (`$alt=json;enum-encoding=int`).
    pub fn enum_ints(&self) -> bool {
        self.get("$alt")
            .is_some_and(|alt| alt.split(';').any(|p| p.trim() == "enum-encoding=int"))
    }

    /// A boolean parameter (`true`/`false`, absent = false).
    pub fn flag(&self, key: &str) -> bool {
        self.get(key)
            .is_some_and(|v| v.eq_ignore_ascii_case("true") || v == "1")
    }
}

impl<S: Send + Sync> FromRequestParts<S> for Query {
    type Rejection = std::convert::Infallible;
    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        Ok(Query::parse(parts.uri.query()))
    }
}

/// Parses a JSON request body as Google does: an empty body is `{}`, malformed JSON is a 400.
pub fn parse_json(body: &[u8]) -> GcpResult<Value> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Ok(Value::Object(Default::default()));
    }
    serde_json::from_slice(body).map_err(|e| {
        GcpError::invalid_reason("parseError", format!("Invalid JSON payload received. {e}"))
    })
}

/// A 200 JSON response.
pub fn json(value: Value) -> Response {
    axum::Json(value).into_response()
}

/// A 200 JSON response for a proto-based API: enum names become numbers if the caller asked.
pub fn proto_json(mut value: Value, table: EnumTable, query: &Query) -> Response {
    if query.enum_ints() {
        enums::encode_ints(&mut value, table);
    }
    json(value)
}

/// Checks a user-chosen GCP resource name against the usual rule (RFC 1035: lowercase letter first,
/// then lowercase letters, digits or hyphens, no trailing hyphen) and a maximum length.
pub fn valid_name(name: &str, max_len: usize) -> bool {
    let bytes = name.as_bytes();
    !bytes.is_empty()
        && bytes.len() <= max_len
        && bytes[0].is_ascii_lowercase()
        && bytes
            .iter()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || *b == b'-')
        && bytes[bytes.len() - 1] != b'-'
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detects_int_enum_encoding() {
        assert!(Query::parse(Some("%24alt=json%3Benum-encoding%3Dint")).enum_ints());
        assert!(!Query::parse(Some("alt=json")).enum_ints());
    }

    #[test]
    fn names_follow_rfc1035() {
        assert!(valid_name("a3-net-1", 63));
        assert!(!valid_name("A3", 63));
        assert!(!valid_name("3a", 63));
        assert!(!valid_name("net-", 63));
        assert!(!valid_name(&"a".repeat(64), 63));
    }
}
