//! Kubernetes `Status` objects: how the API server reports errors.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

/// A `Status` with `status: Failure`.
#[derive(Debug, Clone, PartialEq)]
pub struct Status {
    pub code: u16,
    pub reason: String,
    pub message: String,
    pub details: Option<Value>,
}

impl Status {
    pub fn failure(code: u16, reason: &str, message: impl Into<String>) -> Status {
        Status {
            code,
            reason: reason.to_string(),
            message: message.into(),
            details: None,
        }
    }

    /// 404 NotFound for `resource` (plural, with group: `daemonsets.apps`) named `name`.
    pub fn not_found(group: &str, resource: &str, name: &str) -> Status {
        let qualified = if group.is_empty() {
            resource.to_string()
        } else {
            format!("{resource}.{group}")
        };
        Status {
            code: 404,
            reason: "NotFound".into(),
            message: format!("{qualified} \"{name}\" not found"),
            details: Some(json!({"name": name, "group": group, "kind": resource})),
        }
    }

    /// 409 AlreadyExists.
    pub fn already_exists(group: &str, resource: &str, name: &str) -> Status {
        let qualified = if group.is_empty() {
            resource.to_string()
        } else {
            format!("{resource}.{group}")
        };
        Status {
            code: 409,
            reason: "AlreadyExists".into(),
            message: format!("{qualified} \"{name}\" already exists"),
            details: Some(json!({"name": name, "group": group, "kind": resource})),
        }
    }

    pub fn body(&self) -> Value {
        let mut body = json!({
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message,
            "reason": self.reason,
            "code": self.code,
        });
        if let Some(details) = &self.details {
            body["details"] = details.clone();
        }
        body
    }
}

impl IntoResponse for Status {
    fn into_response(self) -> Response {
        let status = StatusCode::from_u16(self.code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        (status, axum::Json(self.body())).into_response()
    }
}
