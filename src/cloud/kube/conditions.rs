//! Readiness conditions of Kubernetes objects, as named functions over the live object's JSON
//! (after kube-rs `runtime::wait::conditions`, which has no DaemonSet condition).
//!
//! A [`Condition`] is what an apply waits for; it is chosen per kind by [`Condition::default_for`]
//! or given explicitly in the spec (`"ready": "on_matching_nodes(1)"`), and travels in the
//! operation name in its [`Condition::name`] spelling, so polling after a restart waits for the
//! same thing.

use serde_json::Value;

/// What "ready" means for one object.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Condition {
    /// Ready as soon as the apply succeeded.
    Exists,
    /// CustomResourceDefinition: `Established=True`.
    Established,
    /// Deployment: `Available=True` for the current generation.
    Available,
    /// DaemonSet: the current generation is scheduled and available on every node that wants it
    /// (zero matching nodes counts as rolled out, as `kubectl rollout status` says).
    RolledOut,
    /// DaemonSet: rolled out **and** wanted by at least this many nodes.
    OnMatchingNodes(u32),
    /// Namespace: `status.phase == Active`.
    Active,
    /// PersistentVolumeClaim: `status.phase == Bound`.
    Bound,
    /// Kueue ClusterQueue / LocalQueue: the `Active` status condition is `True`.
    QueueActive,
    /// Deleted and gone: its finalizers are done (a Kueue ResourceFlavor no ClusterQueue lists
    /// any more). Never a readiness condition of a spec; only what a delete inside an update waits
    /// for ([`super::flavor`]).
    Gone,
}

impl Condition {
    /// The condition an object of this kind is waited for by default.
    pub fn default_for(api_version: &str, kind: &str) -> Condition {
        let group = api_version.rsplit_once('/').map(|(g, _)| g).unwrap_or("");
        match (group, kind) {
            ("apiextensions.k8s.io", "CustomResourceDefinition") => Condition::Established,
            ("apps", "Deployment") => Condition::Available,
            ("apps", "DaemonSet") => Condition::RolledOut,
            ("", "Namespace") => Condition::Active,
            ("", "PersistentVolumeClaim") => Condition::Bound,
            _ => Condition::Exists,
        }
    }

    /// The spelling used in specs and operation names.
    pub fn name(self) -> String {
        match self {
            Condition::Exists => "exists".into(),
            Condition::Established => "established".into(),
            Condition::Available => "available".into(),
            Condition::RolledOut => "rolled_out".into(),
            Condition::OnMatchingNodes(n) => format!("on_matching_nodes({n})"),
            Condition::Active => "active".into(),
            Condition::Bound => "bound".into(),
            Condition::QueueActive => "queue_active".into(),
            Condition::Gone => "gone".into(),
        }
    }

    /// Parses [`Condition::name`].
    pub fn parse(name: &str) -> Option<Condition> {
        Some(match name {
            "exists" => Condition::Exists,
            "established" => Condition::Established,
            "available" => Condition::Available,
            "rolled_out" => Condition::RolledOut,
            "active" => Condition::Active,
            "bound" => Condition::Bound,
            "queue_active" => Condition::QueueActive,
            "gone" => Condition::Gone,
            other => {
                let n = other
                    .strip_prefix("on_matching_nodes(")?
                    .strip_suffix(')')?
                    .parse()
                    .ok()?;
                Condition::OnMatchingNodes(n)
            }
        })
    }

    /// Whether the live object satisfies the condition.
    pub fn holds(self, object: &Value) -> bool {
        match self {
            Condition::Exists => true,
            Condition::Established => is_crd_established(object),
            Condition::Available => is_deployment_available(object),
            Condition::RolledOut => is_daemonset_rolled_out(object),
            Condition::OnMatchingNodes(min) => is_daemonset_on_matching_nodes(object, min),
            Condition::Active => is_namespace_active(object),
            Condition::Bound => is_pvc_bound(object),
            Condition::QueueActive => condition_status(object, "Active") == Some("True"),
            // It is still there.
            Condition::Gone => false,
        }
    }

    /// Why the condition can no longer come true without a change, when the object says so: a
    /// Deployment whose rollout passed its `progressDeadlineSeconds` (`Progressing=False`,
    /// reason `ProgressDeadlineExceeded`, as the Deployment controller reports it:
    /// https://kubernetes.io/docs/concepts/workloads/controllers/deployment/#failed-deployment).
    pub fn failed(self, object: &Value) -> Option<String> {
        match self {
            Condition::Available => {
                let progressing = object["status"]["conditions"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .find(|c| c["type"] == "Progressing")?;
                (progressing["status"] == "False"
                    && progressing["reason"] == "ProgressDeadlineExceeded")
                    .then(|| {
                        format!(
                            "its pods did not become available within the progress deadline ({}): no node can run them, or they fail to start",
                            progressing["message"].as_str().unwrap_or("ProgressDeadlineExceeded")
                        )
                    })
            }
            _ => None,
        }
    }

    /// A short description of where the object is, for progress lines.
    pub fn progress(self, object: &Value) -> String {
        let status = &object["status"];
        match self {
            Condition::Established => format!(
                "Established={}",
                condition_status(object, "Established").unwrap_or("Unknown")
            ),
            Condition::Available => format!(
                "{}/{} replicas available",
                int(&status["availableReplicas"]),
                object["spec"]["replicas"].as_i64().unwrap_or(1)
            ),
            Condition::RolledOut | Condition::OnMatchingNodes(_) => format!(
                "{} of {} desired pods updated, {} available",
                int(&status["updatedNumberScheduled"]),
                int(&status["desiredNumberScheduled"]),
                int(&status["numberAvailable"])
            ),
            Condition::Active | Condition::Bound => {
                format!("phase {}", status["phase"].as_str().unwrap_or("unknown"))
            }
            Condition::QueueActive => {
                let active = object["status"]["conditions"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .find(|c| c["type"] == "Active");
                match active {
                    Some(c) => format!(
                        "Active={} ({})",
                        c["status"].as_str().unwrap_or("Unknown"),
                        c["message"].as_str().unwrap_or("")
                    ),
                    None => "no status yet: is the Kueue controller running?".into(),
                }
            }
            Condition::Exists => "exists".into(),
            Condition::Gone => format!(
                "being deleted, held by its finalizers {}",
                object["metadata"]["finalizers"]
            ),
        }
    }
}

fn int(v: &Value) -> i64 {
    v.as_i64().unwrap_or(0)
}

/// The `status` of the `status.conditions[]` entry of this type.
pub fn condition_status<'a>(object: &'a Value, kind: &str) -> Option<&'a str> {
    object["status"]["conditions"]
        .as_array()?
        .iter()
        .find(|c| c["type"] == kind)
        .and_then(|c| c["status"].as_str())
}

/// The controller has seen the object's current spec.
fn observed_current_generation(object: &Value) -> bool {
    let generation = object["metadata"]["generation"].as_i64().unwrap_or(0);
    object["status"]["observedGeneration"].as_i64().unwrap_or(0) >= generation
}

/// CustomResourceDefinition: `Established=True` (its kind is served).
pub fn is_crd_established(object: &Value) -> bool {
    condition_status(object, "Established") == Some("True")
}

/// Deployment: the controller observed the current generation and reports `Available=True`.
pub fn is_deployment_available(object: &Value) -> bool {
    observed_current_generation(object) && condition_status(object, "Available") == Some("True")
}

/// DaemonSet: the controller observed the current generation, and updated and available pods
/// both reach the desired count (true with zero desired pods, as `kubectl rollout status`).
pub fn is_daemonset_rolled_out(object: &Value) -> bool {
    let status = &object["status"];
    if status.is_null() || !observed_current_generation(object) {
        return false;
    }
    let desired = int(&status["desiredNumberScheduled"]);
    int(&status["updatedNumberScheduled"]) >= desired && int(&status["numberAvailable"]) >= desired
}

/// DaemonSet: rolled out and scheduled on at least `min` matching nodes.
pub fn is_daemonset_on_matching_nodes(object: &Value, min: u32) -> bool {
    is_daemonset_rolled_out(object)
        && int(&object["status"]["desiredNumberScheduled"]) >= i64::from(min)
}

/// Namespace: `Active` (not `Terminating`).
pub fn is_namespace_active(object: &Value) -> bool {
    object["status"]["phase"] == "Active"
}

/// PersistentVolumeClaim: `Bound` to a volume.
pub fn is_pvc_bound(object: &Value) -> bool {
    object["status"]["phase"] == "Bound"
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn names_round_trip_and_defaults_follow_the_kind() {
        for c in [
            Condition::Exists,
            Condition::Established,
            Condition::Available,
            Condition::RolledOut,
            Condition::OnMatchingNodes(3),
            Condition::Active,
            Condition::Bound,
            Condition::QueueActive,
        ] {
            assert_eq!(Condition::parse(&c.name()), Some(c));
        }
        assert_eq!(Condition::parse("on_matching_nodes(x)"), None);
        assert_eq!(
            Condition::default_for("apps/v1", "DaemonSet"),
            Condition::RolledOut
        );
        assert_eq!(Condition::default_for("v1", "Namespace"), Condition::Active);
        assert_eq!(Condition::default_for("v1", "ConfigMap"), Condition::Exists);
    }

    #[test]
    fn daemonsets_on_zero_nodes_are_rolled_out_but_not_on_matching_nodes() {
        let ds = |desired: i64, updated: i64, available: i64, observed: i64| {
            json!({"metadata": {"generation": 2}, "status": {"desiredNumberScheduled": desired,
                "updatedNumberScheduled": updated, "numberAvailable": available, "observedGeneration": observed}})
        };
        assert!(is_daemonset_rolled_out(&ds(0, 0, 0, 2)));
        assert!(!is_daemonset_on_matching_nodes(&ds(0, 0, 0, 2), 1));
        assert!(is_daemonset_on_matching_nodes(&ds(2, 2, 2, 2), 2));
        assert!(!is_daemonset_rolled_out(&ds(2, 1, 2, 2)));
        assert!(!is_daemonset_rolled_out(&ds(2, 2, 2, 1)));
        assert!(!is_daemonset_rolled_out(
            &json!({"metadata": {"generation": 1}})
        ));
    }

    #[test]
    fn deployments_need_the_current_generation_available() {
        let d = |observed: i64, available: &str| {
            json!({"metadata": {"generation": 3}, "status": {"observedGeneration": observed,
                "conditions": [{"type": "Available", "status": available}]}})
        };
        assert!(is_deployment_available(&d(3, "True")));
        assert!(!is_deployment_available(&d(2, "True")));
        assert!(!is_deployment_available(&d(3, "False")));
    }
}
