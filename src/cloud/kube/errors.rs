//! Kubernetes API errors → classified [`CloudError`]s, each with the hint of its row in [`HINTS`].
//!
//! Admission webhooks that cannot be called (HTTP 500 `InternalError` "failed calling webhook",
//! e.g. Kueue's webhooks while its controller starts) and an overloaded API server (429, 503,
//! 504) are `Transient`: the executor retries them with backoff. So are connection errors.

use crate::cloud::{CloudError, ErrorClass};

/// What a Kubernetes API status says, as far as a hint is concerned.
pub struct Status<'a> {
    pub code: u16,
    /// `Forbidden`, `NotFound`, `Conflict` ...
    pub reason: &'a str,
    /// The message, lowercased.
    pub lower: &'a str,
}

/// One row of [`HINTS`]: when the status matches, say this.
pub struct KubeRow {
    pub when: fn(&Status) -> bool,
    pub hint: &'static str,
}

/// Credentials the API server refused, or none it could use.
const CREDENTIALS_HINT: &str = "the cluster's API server did not accept a3ctl's credentials (the access token of Application Default Credentials): run `gcloud auth application-default login`, or set GOOGLE_APPLICATION_CREDENTIALS";

/// The API server cannot be reached (retried first).
const UNREACHABLE_HINT: &str = "the cluster's API server cannot be reached: if `authorized_networks` is set in [cluster], it must include this machine's public address; otherwise the control plane may be restarting (an upgrade or resize): run apply again";

/// Kubernetes hints, by status; the first matching row wins. Kubernetes reasons and messages:
/// <https://kubernetes.io/docs/reference/using-api/api-concepts/> (status codes),
/// <https://kubernetes.io/docs/reference/access-authn-authz/extensible-admission-controllers/>
/// (webhook failures), GKE roles: <https://cloud.google.com/kubernetes-engine/docs/how-to/iam>.
pub const HINTS: &[KubeRow] = &[
    // A validating or mutating webhook answered "no": any code (400, 403, 422).
    KubeRow {
        when: |s| s.lower.contains("admission webhook") && s.lower.contains("denied the request"),
        hint: "an admission webhook (named in the message) rejected the object and says why: often a field its controller's version does not accept; check the release version pinned in [software] (e.g. [software.kueue])",
    },
    // The webhook's service did not answer (its controller is starting, or down): retried.
    KubeRow {
        when: |s| s.code == 500 && s.lower.contains("failed calling webhook"),
        hint: "an admission webhook is not answering (its controller is starting or down): a3ctl retries; if it keeps failing, check the controller's pods (for Kueue: `kubectl -n kueue-system get pods`), then run apply again",
    },
    KubeRow {
        when: |s| s.code == 403 && s.lower.contains("being terminated"),
        hint: "the namespace is still being deleted: wait until `kubectl get namespace` no longer lists it, then run apply again",
    },
    KubeRow {
        when: |s| s.code == 401,
        hint: CREDENTIALS_HINT,
    },
    KubeRow {
        when: |s| s.code == 403,
        hint: "the account lacks Kubernetes permission for this object: a3ctl installs cluster-wide objects (CustomResourceDefinitions, ClusterRoles and their bindings, webhooks), which needs roles/container.admin on the project (roles/container.developer is not enough for RBAC objects) or a cluster-admin binding; check that Application Default Credentials are the account you mean (`gcloud auth application-default login`)",
    },
    KubeRow {
        when: |s| s.code == 404 && s.lower.contains("namespaces") && s.lower.contains("not found"),
        hint: "the object's namespace does not exist (yet): its Namespace must be applied first; run `a3ctl plan` to refresh, then apply",
    },
    KubeRow {
        when: |s| s.code == 404,
        hint: "the cluster does not serve this kind or object: for a custom resource, its CustomResourceDefinition must be applied and Established first (GKE's networking.gke.io kinds need a multi-networking cluster)",
    },
    KubeRow {
        when: |s| s.code == 409 && s.reason != "AlreadyExists",
        hint: "the object changed while a3ctl was applying it (another client, or its controller, wrote it at the same time): run apply again",
    },
    KubeRow {
        when: |s| s.code == 400 || s.code == 422,
        hint: "the API server refused the object; the message names the field: for objects of a release (Kueue, the NCCL installer), check the version pinned in [software]",
    },
    KubeRow {
        when: |s| matches!(s.code, 429 | 502 | 503 | 504),
        hint: "the cluster's API server is overloaded or restarting (GKE resizes and upgrades the control plane): a3ctl retries; run apply again if it persists",
    },
];

/// The hint of the first row of [`HINTS`] that matches.
pub fn hint(code: u16, reason: &str, message: &str) -> Option<&'static str> {
    let lower = message.to_ascii_lowercase();
    let status = Status {
        code,
        reason,
        lower: &lower,
    };
    HINTS.iter().find(|r| (r.when)(&status)).map(|r| r.hint)
}

/// Classifies an API status (code, reason, message).
pub fn classify_api(code: u16, reason: &str, message: &str) -> CloudError {
    let class = match code {
        // Every 5xx: an uncallable webhook ("failed calling webhook"), an etcd timeout
        // ("etcdserver: request timed out"), an overloaded or restarting API server. a3ctl's
        // writes are server-side applies and deletes, safe to repeat.
        500..=599 => ErrorClass::Transient,
        429 => ErrorClass::Transient,
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
    error.hint = hint(code, reason, message).map(str::to_string);
    error
}

/// Classifies an error of a kube-rs call.
pub fn classify(error: &kube::Error) -> CloudError {
    match error {
        kube::Error::Api(status) => {
            let mut e = classify_api(status.code, &status.reason, &status.message);
            // `Retry-After` travels as `details.retryAfterSeconds` in a 429's Status.
            e.retry_after = status
                .details
                .as_ref()
                .map(|d| d.retry_after_seconds)
                .filter(|s| *s > 0)
                .map(|s| std::time::Duration::from_secs(u64::from(s)));
            e
        }
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
                    .with_hint(UNREACHABLE_HINT)
            }
        }
        kube::Error::Auth(_) => CloudError::new(
            ErrorClass::Permission,
            format!("authentication failed: {}", chain(error)),
        )
        .with_hint(CREDENTIALS_HINT),
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
        // Every 5xx is retried: etcd timeouts and restarting API servers answer 500 too.
        assert_eq!(
            c(500, "InternalError", "etcdserver: request timed out"),
            ErrorClass::Transient
        );
        assert_eq!(c(418, "", "teapot"), ErrorClass::Other);
        assert_eq!(c(503, "ServiceUnavailable", ""), ErrorClass::Transient);
        assert_eq!(c(429, "TooManyRequests", ""), ErrorClass::Transient);
        assert_eq!(c(409, "Conflict", "Apply failed"), ErrorClass::Conflict);
        assert_eq!(c(409, "AlreadyExists", ""), ErrorClass::AlreadyExists);
        assert_eq!(c(404, "NotFound", ""), ErrorClass::NotFound);
        assert_eq!(c(422, "Invalid", ""), ErrorClass::Invalid);
        let denied = classify_api(403, "Forbidden", "forbidden");
        assert_eq!(denied.class, ErrorClass::Permission);
        assert!(denied.hint.unwrap().contains("roles/container.admin"));
    }

    /// One case per row of [`HINTS`], in table order: (code, reason, message, words the hint
    /// must carry).
    const CASES: &[(u16, &str, &str, &[&str])] = &[
        (
            400,
            "BadRequest",
            "admission webhook \"vclusterqueue.kb.io\" denied the request: spec.cohort: Invalid value",
            &["webhook", "rejected", "[software"],
        ),
        (
            500,
            "InternalError",
            "Internal error occurred: failed calling webhook \"mresourceflavor.kb.io\": connection refused",
            &["webhook", "kueue-system", "retries"],
        ),
        (
            403,
            "Forbidden",
            "configmaps \"x\" is forbidden: unable to create new content in namespace kueue-system because it is being terminated",
            &["namespace", "being deleted"],
        ),
        (
            401,
            "Unauthorized",
            "Unauthorized",
            &["gcloud auth application-default login"],
        ),
        (
            403,
            "Forbidden",
            "clusterroles.rbac.authorization.k8s.io is forbidden: User \"me@example.com\" cannot create resource \"clusterroles\"",
            &["roles/container.admin", "cluster-admin"],
        ),
        (
            404,
            "NotFound",
            "namespaces \"kueue-system\" not found",
            &["Namespace must be applied first"],
        ),
        (
            404,
            "NotFound",
            "the server could not find the requested resource",
            &["CustomResourceDefinition", "Established"],
        ),
        (
            409,
            "Conflict",
            "Operation cannot be fulfilled on clusterqueues.kueue.x-k8s.io \"a3\": the object has been modified",
            &["changed while a3ctl was applying", "apply again"],
        ),
        (
            422,
            "Invalid",
            "ClusterQueue.kueue.x-k8s.io \"a3\" is invalid: spec.resourceGroups: Required value",
            &["names the field", "[software]"],
        ),
        (
            503,
            "ServiceUnavailable",
            "the server is currently unable to handle the request",
            &["overloaded or restarting", "retries"],
        ),
    ];

    #[test]
    fn every_kubernetes_hint_row_answers_its_case() {
        assert_eq!(CASES.len(), HINTS.len(), "one case per row");
        for (row, (code, reason, message, words)) in CASES.iter().enumerate() {
            let lower = message.to_ascii_lowercase();
            let status = Status {
                code: *code,
                reason,
                lower: &lower,
            };
            let first = HINTS.iter().position(|r| (r.when)(&status));
            assert_eq!(first, Some(row), "{code} {reason} {message}");
            let error = classify_api(*code, reason, message);
            let hint = error.hint.unwrap_or_default();
            for word in *words {
                assert!(hint.contains(word), "row {row}: {word:?} not in {hint:?}");
            }
        }
        // A create that meets its object is adopted by server-side apply: no hint.
        assert_eq!(classify_api(409, "AlreadyExists", "exists").hint, None);
        assert_eq!(classify_api(500, "InternalError", "boom").hint, None);
    }
}
