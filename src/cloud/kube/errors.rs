//! Kubernetes API errors → classified [`CloudError`]s.
//!
//! Admission webhooks that cannot be called (HTTP 500 `InternalError` "failed calling webhook",
//! e.g. Kueue's webhooks while its controller starts) and an overloaded API server (429, 503,
//! 504) are `Transient`: the executor retries them with backoff. So are connection errors.

use crate::cloud::{CloudError, ErrorClass};

const PERMISSION_HINT: &str = "check that this machine's address is in the cluster's master authorized networks and that the credentials (Application Default Credentials) have roles/container.developer or better";

/// Classifies an API status (code, reason, message).
pub fn classify_api(code: u16, reason: &str, message: &str) -> CloudError {
    let lower = message.to_ascii_lowercase();
    let class = match code {
        500 if lower.contains("failed calling webhook") => ErrorClass::Transient,
        429 | 502 | 503 | 504 => ErrorClass::Transient,
        500 if reason == "ServerTimeout" || reason == "Timeout" => ErrorClass::Transient,
        409 if reason == "AlreadyExists" => ErrorClass::AlreadyExists,
        409 => ErrorClass::Conflict,
        404 => ErrorClass::NotFound,
        422 | 400 => ErrorClass::Invalid,
        401 | 403 => ErrorClass::Permission,
        _ => ErrorClass::Other,
    };
    let mut error = CloudError::new(class, message.to_string());
    error.http_status = Some(code);
    error.status = reason.to_string();
    if class == ErrorClass::Permission {
        error.hint = Some(PERMISSION_HINT.into());
    }
    if class == ErrorClass::Transient && lower.contains("failed calling webhook") {
        error.hint = Some(
            "an admission webhook is not answering yet (its controller is starting): retried"
                .into(),
        );
    }
    error
}

/// Classifies an error of a kube-rs call.
pub fn classify(error: &kube::Error) -> CloudError {
    match error {
        kube::Error::Api(status) => classify_api(status.code, &status.reason, &status.message),
        kube::Error::HyperError(_) | kube::Error::Service(_) => {
            let text = chain(error);
            let lower = text.to_ascii_lowercase();
            // A certificate the cluster CA does not vouch for will not get better by retrying.
            if lower.contains("certificate") || lower.contains("unknownissuer") {
                CloudError::new(
                    ErrorClass::Permission,
                    format!("TLS verification of the cluster's API server failed: {text}"),
                )
                .with_hint("the cluster's recorded CA certificate does not match its API server: refresh the cluster (`a3ctl plan`) so its current endpoint and CA are read")
            } else {
                CloudError::new(ErrorClass::Transient, format!("connection error: {text}"))
            }
        }
        kube::Error::Auth(_) => CloudError::new(
            ErrorClass::Permission,
            format!("authentication failed: {}", chain(error)),
        )
        .with_hint(PERMISSION_HINT),
        kube::Error::Discovery(_) => CloudError::new(ErrorClass::Invalid, chain(error)),
        _ => CloudError::new(ErrorClass::Other, chain(error)),
    }
}

/// The error and its sources, joined (hyper's messages alone say little).
pub fn chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(s) = source {
        let more = s.to_string();
        if !text.contains(&more) {
            text.push_str(": ");
            text.push_str(&more);
        }
        source = s.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn api_errors_are_classified() {
        let c = |code, reason, message| classify_api(code, reason, message).class;
        assert_eq!(
            c(
                500,
                "InternalError",
                "Internal error occurred: failed calling webhook \"x\""
            ),
            ErrorClass::Transient
        );
        assert_eq!(c(500, "InternalError", "boom"), ErrorClass::Other);
        assert_eq!(c(503, "ServiceUnavailable", ""), ErrorClass::Transient);
        assert_eq!(c(429, "TooManyRequests", ""), ErrorClass::Transient);
        assert_eq!(c(409, "Conflict", "Apply failed"), ErrorClass::Conflict);
        assert_eq!(c(409, "AlreadyExists", ""), ErrorClass::AlreadyExists);
        assert_eq!(c(404, "NotFound", ""), ErrorClass::NotFound);
        assert_eq!(c(422, "Invalid", ""), ErrorClass::Invalid);
        let denied = classify_api(403, "Forbidden", "forbidden");
        assert_eq!(denied.class, ErrorClass::Permission);
        assert!(denied.hint.unwrap().contains("authorized networks"));
    }
}
