//! Google's JSON error body, shared by every Google API the simulator serves.
//!
//! ```json
//! {"error":{"code":404,"message":"...","status":"NOT_FOUND",
//!           "errors":[{"message":"...","domain":"global","reason":"notFound"}]}}
//! ```
//! `status` is always present because google-cloud-rust derives its error code only from it;
//! `errors[]` carries the v1 `reason` strings that gcloud and Compute/GCS clients branch on.
//! Kubernetes errors are `Status` objects instead and live in [`crate::kube`].

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

/// One Google API error, ready to be sent.
#[derive(Debug, Clone, PartialEq)]
pub struct GcpError {
    pub code: u16,
    /// Canonical status, e.g. `NOT_FOUND`.
    pub status: &'static str,
    pub message: String,
    /// v1 reason, e.g. `notFound`.
    pub reason: String,
    pub domain: &'static str,
    /// More fields of the `errors[]` entry, such as `extendedHelp` (the usage-limit errors of a
    /// disabled API point at the developers console). Boxed: every handler returns this type.
    pub error_extras: Option<Box<Value>>,
    /// Extra `details` entries (google.rpc typed messages), if any.
    pub details: Vec<Value>,
}

impl GcpError {
    pub fn new(
        code: u16,
        status: &'static str,
        reason: impl Into<String>,
        message: impl Into<String>,
    ) -> GcpError {
        GcpError {
            code,
            status,
            message: message.into(),
            reason: reason.into(),
            domain: "global",
            error_extras: None,
            details: vec![],
        }
    }

    pub fn with_domain(mut self, domain: &'static str) -> GcpError {
        self.domain = domain;
        self
    }

    /// Sets `extendedHelp` on the `errors[]` entry.
    pub fn with_extended_help(mut self, url: &str) -> GcpError {
        let mut extras = self.error_extras.take().map_or_else(|| json!({}), |b| *b);
        extras["extendedHelp"] = json!(url);
        self.error_extras = Some(Box::new(extras));
        self
    }

    pub fn with_detail(mut self, detail: Value) -> GcpError {
        self.details.push(detail);
        self
    }

    /// 404 NOT_FOUND / notFound.
    pub fn not_found(message: impl Into<String>) -> GcpError {
        GcpError::new(404, "NOT_FOUND", "notFound", message)
    }

    /// 409 ALREADY_EXISTS / alreadyExists.
    pub fn already_exists(message: impl Into<String>) -> GcpError {
        GcpError::new(409, "ALREADY_EXISTS", "alreadyExists", message)
    }

    /// 400 INVALID_ARGUMENT / invalid (Compute uses reason `invalid`, GKE `badRequest`).
    pub fn invalid(message: impl Into<String>) -> GcpError {
        GcpError::new(400, "INVALID_ARGUMENT", "invalid", message)
    }

    /// 400 INVALID_ARGUMENT with an explicit reason.
    pub fn invalid_reason(reason: &str, message: impl Into<String>) -> GcpError {
        GcpError::new(400, "INVALID_ARGUMENT", reason, message)
    }

    /// 400 FAILED_PRECONDITION / failedPrecondition.
    pub fn failed_precondition(message: impl Into<String>) -> GcpError {
        GcpError::new(400, "FAILED_PRECONDITION", "failedPrecondition", message)
    }

    /// 412 FAILED_PRECONDITION / conditionNotMet (Cloud Storage preconditions, Compute fingerprints).
    pub fn condition_not_met(message: impl Into<String>) -> GcpError {
        GcpError::new(412, "FAILED_PRECONDITION", "conditionNotMet", message)
    }

    /// 429 RESOURCE_EXHAUSTED / rateLimitExceeded.
    pub fn rate_limited() -> GcpError {
        GcpError::new(
            429,
            "RESOURCE_EXHAUSTED",
            "rateLimitExceeded",
            "Rate Limit Exceeded",
        )
        .with_domain("usageLimits")
    }

    /// 503 UNAVAILABLE / backendError.
    pub fn unavailable() -> GcpError {
        GcpError::new(
            503,
            "UNAVAILABLE",
            "backendError",
            "The service is currently unavailable.",
        )
    }

    /// 500 INTERNAL / backendError: the one-platform APIs' answer to an internal failure.
    pub fn server_error() -> GcpError {
        GcpError::new(
            500,
            "INTERNAL",
            "backendError",
            "Internal error encountered.",
        )
    }

    /// The answer of a handler whose route does not serve this method or custom verb: the front
    /// door replaces it with what Google answers for the request's method and path
    /// ([`crate::discovery::unserved`]: 501 for a method Google has there, else Google's 404), so
    /// a handler need not know the path it was reached by. Never sent as it is.
    pub fn unrouted() -> GcpError {
        GcpError::new(405, "UNIMPLEMENTED", UNROUTED, "not served by this route")
    }

    /// The JSON body.
    pub fn body(&self) -> Value {
        let mut error = json!({
            "code": self.code,
            "message": self.message,
            "errors": [{ "message": self.message, "domain": self.domain, "reason": self.reason }],
            "status": self.status,
        });
        if let Some(Value::Object(extras)) = self.error_extras.as_deref() {
            for (key, value) in extras {
                error["errors"][0][key.as_str()] = value.clone();
            }
        }
        if !self.details.is_empty() {
            error["details"] = Value::Array(self.details.clone());
        }
        json!({ "error": error })
    }
}

impl std::fmt::Display for GcpError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} {} ({}): {}",
            self.code, self.status, self.reason, self.message
        )
    }
}

/// The reason of [`GcpError::unrouted`].
const UNROUTED: &str = "unrouted";

/// Marker on the response of [`GcpError::unrouted`], for the front door to replace.
#[derive(Clone, Copy, Debug)]
pub struct Unrouted;

impl IntoResponse for GcpError {
    fn into_response(self) -> Response {
        let status = StatusCode::from_u16(self.code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        let unrouted = self.reason == UNROUTED;
        let mut response = (status, axum::Json(self.body())).into_response();
        if unrouted {
            response.extensions_mut().insert(Unrouted);
        }
        response
    }
}

/// Result type of every Google API handler.
pub type GcpResult<T = Response> = Result<T, GcpError>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn body_has_code_status_and_reason() {
        let body =
            GcpError::not_found("The resource 'projects/p/global/networks/n' was not found").body();
        assert_eq!(body["error"]["code"], 404);
        assert_eq!(body["error"]["status"], "NOT_FOUND");
        assert_eq!(body["error"]["errors"][0]["reason"], "notFound");
        assert_eq!(body["error"]["errors"][0]["domain"], "global");
    }
}
