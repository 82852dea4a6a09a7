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
            details: Some(details(group, resource, name)),
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
            details: Some(details(group, resource, name)),
        }
    }

    /// 409 Conflict for an update against a stale resourceVersion.
    pub fn stale(qualified: &str, group: &str, resource: &str, name: &str) -> Status {
        Status {
            code: 409,
            reason: "Conflict".into(),
            message: format!(
                "Operation cannot be fulfilled on {qualified} \"{name}\": the object has been modified; please apply your changes to the latest version and try again"
            ),
            details: Some(details(group, resource, name)),
        }
    }

    /// 404 for a path the server does not serve.
    pub fn no_route() -> Status {
        Status {
            code: 404,
            reason: "NotFound".into(),
            message: "the server could not find the requested resource".into(),
            details: Some(json!({})),
        }
    }

    /// 400 BadRequest.
    pub fn bad_request(message: impl Into<String>) -> Status {
        Status::failure(400, "BadRequest", message)
    }

    /// 405 MethodNotAllowed.
    pub fn method_not_allowed() -> Status {
        Status {
            code: 405,
            reason: "MethodNotAllowed".into(),
            message: "the server does not allow this method on the requested resource".into(),
            details: Some(json!({})),
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
        // An unknown reason is the empty string, which Go's `omitempty` leaves out.
        if self.reason.is_empty()
            && let Some(map) = body.as_object_mut()
        {
            map.remove("reason");
        }
        if let Some(details) = &self.details {
            body["details"] = details.clone();
        }
        body
    }
}

/// `details` of a Status about one object (`group` omitted when empty, as Go's omitempty does).
fn details(group: &str, resource: &str, name: &str) -> Value {
    let mut details = json!({"name": name, "kind": resource});
    if !group.is_empty() {
        details["group"] = json!(group);
    }
    details
}

impl IntoResponse for Status {
    fn into_response(self) -> Response {
        let status = StatusCode::from_u16(self.code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        (status, axum::Json(self.body())).into_response()
    }
}
