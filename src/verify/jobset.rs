//! `a3ctl verify`'s JobSet checks, pure functions of the [`Expected`] and the [`JobSetSnapshot`]
//! (read by [`super::live`]): can the cluster run the JobSets the GPU recipes submit, queued by
//! Kueue?
//!
//! - `jobset/crd`: the `jobsets.jobset.x-k8s.io` CRD exists and is Established (the API is
//!   served);
//! - `jobset/controller`: `jobset-system/jobset-controller-manager` is Available (it makes a
//!   JobSet's Jobs, and its webhook must answer for a JobSet to be created at all);
//! - `jobset/kueue`, when the blueprint enables Kueue too: Kueue's JobSet integration is active —
//!   the two above, and Kueue's manager configuration (`kueue-system/kueue-manager-config`,
//!   `integrations.frameworks`) lists `jobset.x-k8s.io/jobset`. Kueue sets up an integration only
//!   for a framework listed there, and once the framework's CRD is served (at its start, or within
//!   its 20-second poll for the API: kubernetes-sigs/kueue `pkg/controller/jobframework/setup.go`);
//!   the configuration is read at Kueue's start, so a fixed ConfigMap needs a restart of Kueue's
//!   Deployment, which the hint says.
//!
//! With `[software.jobset] enabled = false` the checks are absent, as Kueue's are when Kueue is
//! off: the blueprint promises no JobSet API, and a cluster that has one installed by hand is
//! not a3ctl's to judge.

use super::{Check, Expected, JobSetSnapshot};
use crate::graph::jobset::{CONTROLLER, CRD, KUEUE_FRAMEWORK, NAMESPACE};
use serde_json::Value;

/// Kueue's manager configuration: its ConfigMap, namespace and data key.
pub const KUEUE_CONFIG: (&str, &str, &str) = (
    "kueue-system",
    "kueue-manager-config",
    "controller_manager_config.yaml",
);

fn condition_true(object: &Value, kind: &str) -> bool {
    object["status"]["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|c| c["type"] == kind && c["status"] == "True")
}

/// The JobSet checks (none when the blueprint turns JobSet off).
pub fn checks(expected: &Expected, snapshot: &JobSetSnapshot) -> Vec<Check> {
    let Some(jobset) = &expected.jobset else {
        return vec![];
    };
    let bp = &expected.blueprint_path;
    let install = format!(
        "JobSet is enabled in the blueprint (`software.jobset`); run `a3ctl plan {bp}` to see what is missing and `a3ctl apply {bp}` to install it"
    );
    let mut out = vec![];
    let crd_ok = snapshot
        .crd
        .as_ref()
        .is_some_and(|c| condition_true(c, "Established"));
    out.push(match &snapshot.crd {
        None => Check::fail(
            "jobset/crd",
            format!("CRD `{CRD}` not found: the cluster does not serve JobSets"),
            install.clone(),
        ),
        Some(_) if !crd_ok => Check::fail(
            "jobset/crd",
            format!("CRD `{CRD}` is not Established yet"),
            "the API server establishes a CRD within seconds of its creation; verify again in a minute",
        ),
        Some(_) => Check::pass("jobset/crd", format!("`{CRD}` is served")),
    });
    let controller_ok = snapshot
        .controller
        .as_ref()
        .is_some_and(|d| condition_true(d, "Available"));
    out.push(match &snapshot.controller {
        None => Check::fail(
            "jobset/controller",
            format!(
                "Deployment `{NAMESPACE}/{CONTROLLER}` not found: nothing makes a JobSet's Jobs, and its webhook refuses new JobSets"
            ),
            install.clone(),
        ),
        Some(_) if !controller_ok => Check::fail(
            "jobset/controller",
            format!("Deployment `{NAMESPACE}/{CONTROLLER}` is not Available"),
            format!(
                "see why its pods are not ready: `kubectl -n {NAMESPACE} describe deployment {CONTROLLER}` and `kubectl -n {NAMESPACE} get pods`"
            ),
        ),
        Some(_) => Check::pass(
            "jobset/controller",
            format!("`{NAMESPACE}/{CONTROLLER}` is Available"),
        ),
    });
    if jobset.kueue {
        out.push(kueue_check(expected, snapshot, crd_ok && controller_ok));
    }
    out
}

/// `jobset/kueue`: Kueue's JobSet integration is active.
fn kueue_check(expected: &Expected, snapshot: &JobSetSnapshot, jobset_ok: bool) -> Check {
    let name = "jobset/kueue";
    let (namespace, config, key) = KUEUE_CONFIG;
    let bp = &expected.blueprint_path;
    let Some(map) = &snapshot.kueue_config else {
        return Check::fail(
            name,
            format!("ConfigMap `{namespace}/{config}` not found: Kueue's integrations are unknown"),
            format!(
                "Kueue's release is incomplete; run `a3ctl plan {bp}` to see what is missing and `a3ctl apply {bp}` to reinstall it"
            ),
        );
    };
    let text = map["data"][key].as_str().unwrap_or_default();
    let parsed: Value = serde_saphyr::from_str(text).unwrap_or(Value::Null);
    let listed = parsed["integrations"]["frameworks"]
        .as_array()
        .is_some_and(|f| f.iter().any(|f| f == KUEUE_FRAMEWORK));
    if !listed {
        return Check::fail(
            name,
            format!(
                "Kueue's configuration (`{namespace}/{config}`) does not list `{KUEUE_FRAMEWORK}` in `integrations.frameworks`: Kueue does not queue JobSets, which then run at once, outside any quota"
            ),
            format!(
                "add `- \"{KUEUE_FRAMEWORK}\"` under `integrations.frameworks` with `kubectl -n {namespace} edit configmap {config}`, then `kubectl -n {namespace} rollout restart deployment/kueue-controller-manager`"
            ),
        );
    }
    if !jobset_ok {
        return Check::fail(
            name,
            "Kueue lists the JobSet integration, but it is not active: the JobSet API or controller is missing (see above)",
            "fix the `jobset/` checks above; Kueue starts its JobSet integration within 20 s of the CRD being served",
        );
    }
    Check::pass(
        name,
        format!("Kueue queues JobSets (`{KUEUE_FRAMEWORK}` is enabled and its API served)"),
    )
}
