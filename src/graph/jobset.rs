//! JobSet (kubernetes-sigs/jobset): the API the GPU recipes submit multi-node training with, one
//! resource `k8s.release/-/jobset` for the release manifests of the pinned version
//! (`https://github.com/kubernetes-sigs/jobset/releases/download/<v>/manifests.yaml`, as JobSet's
//! installation guide applies them: kubernetes-sigs/jobset
//! `site/content/en/docs/installation/_index.md`). The Kubernetes adapter installs it as it
//! installs Kueue's ([`crate::cloud::kube::release`]): download, check the pin and the
//! `jobset.x-k8s.io/v1alpha2` JobSet CRD, apply, wait for the CRD to be Established and
//! `jobset-system/jobset-controller-manager` to be Available.
//!
//! **Order.** The release depends on the cluster and the system pool (the controller runs there,
//! like Kueue's). When Kueue is enabled too, Kueue's release depends on JobSet's: Kueue's manager
//! sets up each enabled integration at start only if its API is served; for one that is not, it
//! polls the API server every 20 s and starts that integration's controller and webhook once the
//! CRD appears (kubernetes-sigs/kueue `pkg/controller/jobframework/setup.go`, `waitForAPI`,
//! `APIRetryInterval`). Until then Kueue's JobSet webhook is a no-op, so a JobSet labelled for a
//! queue would run unqueued. Installing JobSet first makes Kueue's JobSet integration active from
//! the moment Kueue's controller is available, which is when apply finishes waiting for it.
//! (Cluster Toolkit installs JobSet after Kueue, GoogleCloudPlatform/cluster-toolkit
//! `modules/management/kubectl-apply/main.tf`, and relies on that poll.)
//!
//! Turned off (`[software.jobset] enabled = false`), nothing here is declared and Kueue's release
//! depends on nothing more; Kueue's default configuration still lists the JobSet framework and
//! waits for its CRD, harmlessly.

use super::build::addr;
use super::software::Context;
use crate::blueprint::ManifestSource;
use crate::resource::kinds::kubernetes::{ManifestRef, Release, ReleaseSpec};
use crate::resource::kinds::to_spec;
use crate::resource::{Addr, Desired, Kind, Lifecycle};

/// The API group and version of JobSet objects (the only version JobSet serves).
pub const API_VERSION: &str = "jobset.x-k8s.io/v1alpha2";
/// The namespace of JobSet's controller.
pub const NAMESPACE: &str = "jobset-system";
/// JobSet's controller Deployment in [`NAMESPACE`].
pub const CONTROLLER: &str = "jobset-controller-manager";
/// The name of the JobSet CRD.
pub const CRD: &str = "jobsets.jobset.x-k8s.io";
/// Kueue's name for its JobSet integration in `integrations.frameworks`.
pub const KUEUE_FRAMEWORK: &str = "jobset.x-k8s.io/jobset";

/// The address of the JobSet release resource.
pub fn release_addr() -> Addr {
    Addr::new(Kind::Kubernetes, "release/-/jobset")
}

/// JobSet's release, when the blueprint enables it.
pub(super) fn resources(cx: &Context, out: &mut Vec<Desired>) {
    let bp = cx.bp;
    let jobset = &bp.software.jobset;
    if !jobset.enabled {
        return;
    }
    out.push(Desired {
        addr: release_addr(),
        id: format!("{}/k8s/release/jobset", cx.cluster_id),
        spec: to_spec(&ReleaseSpec {
            cluster: bp.name.clone(),
            release: Release {
                name: "jobset".into(),
                version: jobset.version.clone(),
                manifest: manifest_ref(&jobset.manifest),
                sha256: jobset.sha256.clone(),
                requires: vec![format!("{API_VERSION}/JobSet")],
            },
            missing: vec![],
            ready: None,
        }),
        // As Kueue's: the controller's pods need the system pool's nodes, not its identity.
        dependencies: vec![
            addr::cluster(),
            Addr::new(Kind::NodePool, bp.system_pool.name.clone()),
        ],
        lifecycle: Lifecycle {
            deleted_with: Some(addr::cluster()),
            ..Default::default()
        },
    });
}

/// A blueprint's manifest source as a release spec names it.
fn manifest_ref(source: &ManifestSource) -> ManifestRef {
    match source {
        ManifestSource::Url(url) => ManifestRef {
            kind: "url".into(),
            location: url.clone(),
        },
        // Blueprint paths come from TOML text, so they are UTF-8.
        ManifestSource::Path(path) => ManifestRef {
            kind: "path".into(),
            location: path.to_string_lossy().into_owned(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::blueprint::testing::shipped;
    use crate::graph::ResourceGraph;

    fn graph(name: &str, edit: impl FnOnce(&mut crate::blueprint::Blueprint)) -> ResourceGraph {
        let mut bp = shipped(name);
        edit(&mut bp);
        ResourceGraph::from_blueprint(&bp).unwrap()
    }

    #[test]
    fn jobset_is_installed_before_kueue_from_its_pinned_release() {
        let g = graph("a3-mega.toml", |_| {});
        let release = g.get(&release_addr()).expect("declared");
        assert_eq!(release.spec["release"]["version"], "v0.12.0");
        assert_eq!(
            release.spec["release"]["manifest"]["location"],
            "https://github.com/kubernetes-sigs/jobset/releases/download/v0.12.0/manifests.yaml"
        );
        assert_eq!(
            release.spec["release"]["requires"],
            serde_json::json!(["jobset.x-k8s.io/v1alpha2/JobSet"])
        );
        assert_eq!(
            release.dependencies,
            vec![addr::cluster(), Addr::new(Kind::NodePool, "system")]
        );
        let kueue = g.get(&crate::graph::kueue::release_addr()).unwrap();
        assert!(kueue.dependencies.contains(&release_addr()));
        // In order: JobSet's release comes before Kueue's.
        let order: Vec<&Addr> = g.resources().iter().map(|r| &r.addr).collect();
        let at = |a: &Addr| order.iter().position(|o| *o == a).unwrap();
        assert!(at(&release_addr()) < at(&kueue.addr));
    }

    #[test]
    fn jobset_off_declares_nothing_and_kueue_waits_for_nothing_more() {
        let g = graph("a3-mega.toml", |bp| bp.software.jobset.enabled = false);
        assert!(g.get(&release_addr()).is_none());
        let kueue = g.get(&crate::graph::kueue::release_addr()).unwrap();
        assert!(!kueue.dependencies.contains(&release_addr()));
        // JobSet without Kueue installs alone.
        let alone = graph("a3-mega.toml", |bp| bp.software.kueue.enabled = false);
        assert!(alone.get(&release_addr()).is_some());
    }
}
