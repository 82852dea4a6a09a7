//! A cluster's Kubernetes beta APIs (`enableK8sBetaApis.enabledApis` at create,
//! `desiredK8sBetaApis` in `clusters.update`): which GKE accepts, and how enabling adds to them.
//!
//! GKE turns off beta APIs introduced after 1.24 unless a cluster enables them, resource by
//! resource (`resource.k8s.io/v1beta1/deviceclasses`); an enabled beta API cannot be disabled
//! again, and enabling one that is already on fails, which is why the Terraform provider sends
//! only the APIs not enabled yet (GoogleCloudPlatform/magic-modules#8355, "To avoid an already
//! enabled Beta APIs error"). GKE's "Use Kubernetes beta APIs with GKE clusters" page lists the
//! beta APIs of each minor.
//!
//! The simulator knows the beta APIs of `resource.k8s.io` (by minor, [`crate::kube::dra`]) and
//! refuses any other as unavailable: a boundary of the simulator, not GKE's behaviour for the
//! other groups. The refusal texts are the simulator's own, with GKE's shape (400
//! `INVALID_ARGUMENT`, reason `badRequest`).

use super::bad_request;
use super::string_list;
use crate::error::GcpResult;
use crate::kube::dra;
use serde_json::{Value, json};

/// Checks the beta APIs a cluster at `version` asks for; returns them in order, without repeats.
pub fn check(requested: &Value, version: &str) -> GcpResult<Vec<String>> {
    let minor = dra::minor_of(version);
    let available = dra::beta_apis(minor);
    let mut out: Vec<String> = vec![];
    for api in string_list(requested) {
        if !available.contains(&api) {
            return Err(bad_request(format!(
                "Beta API \"{api}\" is not available in Kubernetes 1.{minor}; available beta \
                 APIs: [{}].",
                available.join(", ")
            )));
        }
        if !out.contains(&api) {
            out.push(api);
        }
    }
    Ok(out)
}

/// The `enableK8sBetaApis` of a cluster after `desiredK8sBetaApis` enabled more.
pub fn enable_more(cluster: &Value, desired: &Value) -> GcpResult<Value> {
    let version = cluster["currentMasterVersion"].as_str().unwrap_or("");
    let mut enabled = string_list(&cluster["enableK8sBetaApis"]["enabledApis"]);
    for api in check(&desired["enabledApis"], version)? {
        if enabled.contains(&api) {
            return Err(bad_request(format!(
                "Beta API \"{api}\" is already enabled."
            )));
        }
        enabled.push(api);
    }
    Ok(json!({ "enabledApis": enabled }))
}

/// The beta APIs a cluster resource has enabled.
pub fn enabled(cluster: &Value) -> Vec<String> {
    string_list(&cluster["enableK8sBetaApis"]["enabledApis"])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn beta_apis_follow_the_minor_and_only_grow() {
        let beta = json!(["resource.k8s.io/v1beta1/deviceclasses"]);
        assert_eq!(check(&beta, "1.32.12-gke.1050000").unwrap().len(), 1);
        let err = check(&beta, "1.31.14-gke.1243000").unwrap_err();
        assert!(err.message.contains("not available in Kubernetes 1.31"));
        let v1beta2 = json!(["resource.k8s.io/v1beta2/resourceslices"]);
        assert!(check(&v1beta2, "1.32.12-gke.1050000").is_err());
        let cluster = json!({"currentMasterVersion": "1.33.5-gke.1080000",
            "enableK8sBetaApis": {"enabledApis": ["resource.k8s.io/v1beta1/deviceclasses"]}});
        let more = enable_more(&cluster, &json!({"enabledApis": v1beta2})).unwrap();
        assert_eq!(more["enabledApis"].as_array().unwrap().len(), 2);
        let again = enable_more(&cluster, &json!({"enabledApis": beta})).unwrap_err();
        assert!(again.message.contains("already enabled"));
    }
}
