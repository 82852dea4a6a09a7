//! `a3ctl verify --access`: proof that `[identity]` works, from inside the cluster. One probe pod
//! per mounted bucket and workload, running as that workload's Kubernetes service account and
//! mounting the bucket with GCS FUSE (what a training job does); one per repository, pulling an
//! image from it with the nodes' account. A probe passes once its pod runs; it fails on the
//! kubelet's mount or pull failure, with the message Kubernetes gives.
//!
//! The pull probe asks for `a3ctl-probe:latest`, which a fresh repository does not hold. Artifact
//! Registry checks permission before it looks for the image, so a `404`/`not found` answer proves
//! the nodes may read the repository as surely as a pull; a `403` proves they may not
//! (<https://cloud.google.com/artifact-registry/docs/docker/troubleshoot#pull>).
//!
//! Pure: the manifests and the judgement of what was read. [`super::live`] applies, polls and
//! deletes the pods.

use super::Check;
use crate::blueprint::{Blueprint, NodeAccount};
use serde_json::{Value, json};

/// The label every probe pod carries (and is deleted by).
pub const PROBE_LABEL: &str = "a3ctl-probe";
/// The image the mount probe runs: a small public image, pulled by every GKE node.
pub const MOUNT_IMAGE: &str = "busybox:1.36";

/// What a probe proves.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProbeKind {
    /// Workload `namespace/name` can mount `bucket` with GCS FUSE.
    Mount { bucket: String, workload: String },
    /// The nodes can pull from `repository` (`LOCATION-docker.pkg.dev/PROJECT/REPO`).
    Pull { repository: String },
}

/// One probe: its check name, its pod.
#[derive(Debug, Clone, PartialEq)]
pub struct Probe {
    /// `access/mount/BUCKET/NAMESPACE/NAME`, `access/pull/REPO`.
    pub check: String,
    pub kind: ProbeKind,
    pub namespace: String,
    pub pod: Value,
}

impl Probe {
    pub fn pod_name(&self) -> &str {
        self.pod["metadata"]["name"].as_str().unwrap_or_default()
    }
}

/// The probes of `bp`: none without `[identity]`.
pub fn probes(bp: &Blueprint) -> Vec<Probe> {
    let mut out = Vec::new();
    let pod = |name: String, namespace: &str, spec: Value, annotations: Value| {
        json!({
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "name": name,
                "namespace": namespace,
                "labels": {PROBE_LABEL: "true"},
                "annotations": annotations,
            },
            "spec": spec,
        })
    };
    for (b, bucket) in bp.buckets.iter().filter(|b| b.mount).enumerate() {
        for (w, workload) in bp.identity.workloads.iter().enumerate() {
            let spec = json!({
                "serviceAccountName": workload.name,
                "restartPolicy": "Never",
                "containers": [{
                    "name": "probe",
                    "image": MOUNT_IMAGE,
                    "command": ["sh", "-c", "ls /data > /dev/null"],
                    "volumeMounts": [{"name": "bucket", "mountPath": "/data"}],
                }],
                "volumes": [{
                    "name": "bucket",
                    "csi": {
                        "driver": "gcsfuse.csi.storage.gke.io",
                        "volumeAttributes": {"bucketName": bucket.name},
                    },
                }],
            });
            out.push(Probe {
                check: format!(
                    "access/mount/{}/{}/{}",
                    bucket.name, workload.namespace, workload.name
                ),
                kind: ProbeKind::Mount {
                    bucket: bucket.name.clone(),
                    workload: format!("{}/{}", workload.namespace, workload.name),
                },
                namespace: workload.namespace.clone(),
                pod: pod(
                    format!("a3ctl-probe-mount-{b}-{w}"),
                    &workload.namespace,
                    spec,
                    json!({"gke-gcsfuse/volumes": "true"}),
                ),
            });
        }
    }
    if !matches!(bp.identity.node_account, NodeAccount::Create { .. }) {
        return out;
    }
    for (r, repo) in bp.artifact_registries.iter().enumerate() {
        let repository = format!(
            "{}-docker.pkg.dev/{}/{}",
            repo.location, bp.project, repo.name
        );
        let spec = json!({
            "restartPolicy": "Never",
            "containers": [{"name": "probe", "image": format!("{repository}/a3ctl-probe:latest")}],
        });
        out.push(Probe {
            check: format!("access/pull/{}", repo.name),
            kind: ProbeKind::Pull { repository },
            namespace: "default".into(),
            pod: pod(format!("a3ctl-probe-pull-{r}"), "default", spec, json!({})),
        });
    }
    out
}

/// The waiting reason and message of the pod's first container, if it waits.
fn waiting(pod: &Value) -> Option<(String, String)> {
    let state = &pod["status"]["containerStatuses"][0]["state"]["waiting"];
    Some((
        state["reason"].as_str()?.to_string(),
        state["message"].as_str().unwrap_or_default().to_string(),
    ))
}

/// The newest message of a Warning event of `reason` about the pod.
fn event(events: &[Value], pod: &str, reason: &str) -> Option<String> {
    events
        .iter()
        .filter(|e| e["involvedObject"]["name"] == pod && e["reason"] == reason)
        .filter_map(|e| e["message"].as_str())
        .next_back()
        .map(str::to_string)
}

/// The probe's check from its pod and the namespace's events; `None` while it is undecided.
pub fn judge(probe: &Probe, pod: &Value, events: &[Value]) -> Option<Check> {
    let phase = pod["status"]["phase"].as_str().unwrap_or_default();
    let name = probe.pod_name();
    match &probe.kind {
        ProbeKind::Mount { bucket, workload } => {
            if matches!(phase, "Running" | "Succeeded") {
                return Some(Check::pass(
                    &probe.check,
                    format!("a pod of {workload} mounted gs://{bucket} with GCS FUSE"),
                ));
            }
            let failed = event(events, name, "FailedMount")?;
            Some(Check::fail(
                &probe.check,
                format!("a pod of {workload} cannot mount gs://{bucket}: {failed}"),
                format!(
                    "`a3ctl apply` grants roles/storage.objectUser on the bucket to {workload}'s Workload Identity principal; check `workloads` in [identity] and that the pod's service account is {workload}"
                ),
            ))
        }
        ProbeKind::Pull { repository } => {
            if matches!(phase, "Running" | "Succeeded") {
                return Some(Check::pass(
                    &probe.check,
                    format!("the nodes pulled from {repository}"),
                ));
            }
            let (reason, message) = waiting(pod)?;
            if !matches!(reason.as_str(), "ErrImagePull" | "ImagePullBackOff") {
                return None;
            }
            // The kubelet writes two `Failed` events per attempt — `Failed to pull image "I":
            // ERROR` and `Error: ErrImagePull` — and a list returns events in name order, which
            // says nothing of time: the one with the registry's answer is the one to read.
            let message = events
                .iter()
                .filter(|e| e["involvedObject"]["name"] == name && e["reason"] == "Failed")
                .filter_map(|e| e["message"].as_str())
                .rfind(|m| m.starts_with("Failed to pull image"))
                .map(str::to_string)
                .or_else(|| event(events, name, "Failed"))
                .unwrap_or(message);
            let lower = message.to_ascii_lowercase();
            if lower.contains("403") || lower.contains("forbidden") || lower.contains("denied") {
                return Some(Check::fail(
                    &probe.check,
                    format!("the nodes cannot read {repository}: {message}"),
                    "`a3ctl apply` grants roles/artifactregistry.reader on the repository to the nodes' service account; check `node_service_account` in [identity]",
                ));
            }
            if lower.contains("404") || lower.contains("not found") {
                return Some(Check::pass(
                    &probe.check,
                    format!(
                        "the nodes may read {repository} (the registry answered that the probe image does not exist, which it tells only a reader)"
                    ),
                ));
            }
            Some(Check::fail(
                &probe.check,
                format!("the nodes could not pull from {repository}: {message}"),
                "see `kubectl describe pod` of the probe in namespace default",
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::blueprint::testing::shipped;
    use crate::verify::Status;

    #[test]
    fn the_shipped_a3_mega_blueprint_has_one_probe_per_grant() {
        let mega = probes(&shipped("a3-mega.toml"));
        let checks: Vec<&str> = mega.iter().map(|p| p.check.as_str()).collect();
        assert_eq!(
            checks,
            [
                "access/mount/my-project-a3mega-ckpt/default/default",
                "access/pull/training"
            ]
        );
        let mount = &mega[0].pod;
        assert_eq!(
            mount["metadata"]["annotations"]["gke-gcsfuse/volumes"],
            "true"
        );
        assert_eq!(mount["spec"]["serviceAccountName"], "default");
        assert_eq!(
            mega[1].pod["spec"]["containers"][0]["image"],
            "us-central1-docker.pkg.dev/my-project/training/a3ctl-probe:latest"
        );
        assert!(probes(&shipped("minimal.toml")).is_empty());
    }

    #[test]
    fn pods_are_judged_by_phase_events_and_pull_errors() {
        let probes = probes(&shipped("a3-mega.toml"));
        let (mount, pull) = (&probes[0], &probes[1]);
        let pending = json!({"status": {"phase": "Pending"}});
        assert_eq!(judge(mount, &pending, &[]), None);
        let failed = json!([{"involvedObject": {"name": mount.pod_name()}, "reason": "FailedMount",
            "message": "MountVolume.SetUp failed: PermissionDenied"}]);
        let check = judge(mount, &pending, failed.as_array().unwrap()).unwrap();
        assert_eq!(check.status, Status::Fail);
        assert!(check.message.contains("PermissionDenied"), "{check:?}");
        let running = json!({"status": {"phase": "Running"}});
        assert_eq!(judge(mount, &running, &[]).unwrap().status, Status::Pass);

        let pulling = |message: &str| {
            json!({"status": {"phase": "Pending", "containerStatuses": [{"state": {"waiting":
                {"reason": "ErrImagePull", "message": message}}}]}})
        };
        let denied = judge(pull, &pulling("failed to authorize: 403 Forbidden"), &[]).unwrap();
        assert_eq!(denied.status, Status::Fail);
        let absent = judge(pull, &pulling("manifest unknown: not found"), &[]).unwrap();
        assert_eq!(absent.status, Status::Pass, "{absent:?}");
        let creating = json!({"status": {"phase": "Pending", "containerStatuses": [{"state":
            {"waiting": {"reason": "ContainerCreating"}}}]}});
        assert_eq!(judge(pull, &creating, &[]), None);

        // Events come in name order: the registry's answer counts wherever it is in the list.
        let events = json!([
            {"involvedObject": {"name": pull.pod_name()}, "reason": "Failed",
             "message": "Failed to pull image \"x\": failed to authorize: 403 Forbidden"},
            {"involvedObject": {"name": pull.pod_name()}, "reason": "Failed",
             "message": "Error: ErrImagePull"},
        ]);
        let check = judge(
            pull,
            &pulling("Error: ErrImagePull"),
            events.as_array().unwrap(),
        )
        .unwrap();
        assert!(
            check.message.contains("cannot read") && check.message.contains("403"),
            "{check:?}"
        );
    }
}
