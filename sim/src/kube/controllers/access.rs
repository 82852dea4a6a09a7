//! What a pod needs from the cluster and from Google Cloud before the kubelet can start it:
//! ConfigMaps and Secrets that exist, Cloud Storage FUSE buckets the pod may list, and Artifact
//! Registry images the node may pull.
//!
//! **Cloud Storage FUSE volumes** are a CSI ephemeral volume (`csi.driver:
//! gcsfuse.csi.storage.gke.io`, the bucket in `volumeAttributes.bucketName`) or a claim bound to a
//! PersistentVolume of that driver (the bucket is its `csi.volumeHandle`). The kubelet calls the
//! driver's `NodePublishVolume`, which checks, in this order (GoogleCloudPlatform/gcs-fuse-csi-driver
//! `pkg/csi_driver/node.go`; its `docs/troubleshooting.md` lists the events):
//! 1. the driver is registered on the node — it is when the cluster's
//!    `addonsConfig.gcsFuseCsiDriverConfig.enabled` is set; else the kubelet itself fails:
//!    `MountVolume.SetUp failed for volume "V" : kubernetes.io/csi: mounter.SetUpAt failed to get
//!    CSI client: driver name gcsfuse.csi.storage.gke.io not found in the list of registered CSI
//!    drivers`;
//! 2. unless the bucket is `_` (every bucket), the bucket's objects can be listed with the pod's
//!    identity (`CheckBucketExists` lists one object: `storage.objects.list`). The identity is
//!    the pod's Kubernetes service account through Workload Identity Federation
//!    ([`iam::Principal::KubernetesServiceAccount`] of the pod's namespace and
//!    `serviceAccountName`), or the IAM service account its `iam.gke.io/gcp-service-account`
//!    annotation names (whose `roles/iam.workloadIdentityUser` is not checked: service accounts'
//!    own policies are not simulated). Failures:
//!    - the cluster has no workload pool (`workloadIdentityConfig.workloadPool`): no token can be
//!      had, `rpc error: code = Unauthenticated desc = failed to prepare storage service: storage
//!      service manager failed to setup service: timed out waiting for the condition` (the
//!      troubleshooting page's text; that this is what a cluster without a pool shows is
//!      inferred);
//!    - no such bucket: `rpc error: code = NotFound desc = failed to get GCS bucket "B": storage:
//!      bucket doesn't exist` (troubleshooting page; the driver's e2e test expects the same);
//!    - no role with `storage.objects.list` on the bucket ([`LIST_OBJECTS`], in the bucket's
//!      policy or the project's, conditions not counted): `rpc error: code = PermissionDenied
//!      desc = failed to get GCS bucket "B": googleapi: Error 403: Caller does not have
//!      storage.objects.list access to the Google Cloud Storage bucket. Permission
//!      'storage.objects.list' denied on resource (or it may not exist)., forbidden` — Cloud
//!      Storage names a federated principal `Caller` (gcs-fuse-csi-driver#1356) and an IAM
//!      service account by its email (troubleshooting page);
//! 3. the node runs the GKE metadata server (its label `iam.gke.io/gke-metadata-server-enabled:
//!    "true"`, on nodes of `GKE_METADATA` pools), unless the pod uses the host network:
//!    `rpc error: code = FailedPrecondition desc = Workload Identity Federation is not enabled on
//!    node. Please make sure this is enabled on both cluster and node pool level
//!    (https://cloud.google.com/kubernetes-engine/docs/how-to/workload-identity)`;
//! 4. the sidecar was injected, which the driver's webhook does for pods annotated
//!    `gke-gcsfuse/volumes: "true"`: `rpc error: code = FailedPrecondition desc = failed to find
//!    the sidecar container in Pod spec`. The sidecar itself is not injected into the stored pod.
//!
//! Each message is prefixed `MountVolume.SetUp failed for volume "V" : ` (the kubelet's
//! operation generator), `V` being the pod's volume name, or the PersistentVolume's name for a
//! claim.
//!
//! **ConfigMap and Secret volumes** (not `optional`) need their object in the pod's namespace:
//! `MountVolume.SetUp failed for volume "V" : configmap "C" not found` (`secret "S" not found`).
//!
//! **Images** of the simulated world's Artifact Registry are pulled as the node's IAM service
//! account, which needs `artifactregistry.repositories.downloadArtifacts` on the repository
//! ([`pull_failure`]).

use crate::iam::{self, KubernetesServiceAccount, Principal, Resource};
use crate::kube::KubeCluster;
use crate::world::World;
use serde_json::Value;

/// The CSI driver of Cloud Storage FUSE volumes.
pub const GCSFUSE_DRIVER: &str = "gcsfuse.csi.storage.gke.io";
/// The pod annotation that has the driver's webhook inject its sidecar.
pub const GCSFUSE_ANNOTATION: &str = "gke-gcsfuse/volumes";
/// The node label of nodes that run the GKE metadata server.
pub const METADATA_LABEL: &str = "iam.gke.io/gke-metadata-server-enabled";
/// The Kubernetes service account annotation naming the IAM service account it acts as.
pub const GSA_ANNOTATION: &str = "iam.gke.io/gcp-service-account";

/// Roles whose permissions include `storage.objects.list` (Cloud Storage's roles,
/// <https://cloud.google.com/storage/docs/access-control/iam-roles>). Basic roles on a project
/// do not include it; project owners, editors and viewers list a bucket's objects through the
/// bucket's `roles/storage.legacyBucket*` bindings of `projectOwner:`/`projectEditor:`/
/// `projectViewer:`, which the evaluation follows.
pub const LIST_OBJECTS: &[&str] = &[
    "roles/storage.objectViewer",
    "roles/storage.objectUser",
    "roles/storage.objectAdmin",
    "roles/storage.admin",
    "roles/storage.legacyBucketReader",
    "roles/storage.legacyBucketWriter",
    "roles/storage.legacyBucketOwner",
];

/// The GKE cluster behind a Kubernetes cluster, what the checks need of it.
#[derive(Debug, Clone, Default)]
pub struct Gke {
    pub project: String,
    pub location: String,
    pub name: String,
    /// `workloadIdentityConfig.workloadPool`, empty when Workload Identity Federation is off.
    pub workload_pool: String,
}

impl Gke {
    /// The cluster of `key` (`projects/P/locations/L/clusters/C`); without a GKE cluster (a
    /// Kubernetes side provisioned alone, in tests) the names come from the key.
    pub fn of(world: &World, key: &str, cluster: &KubeCluster) -> Gke {
        let gke = world.container.clusters.get(key);
        Gke {
            project: cluster.project.clone(),
            location: cluster.location.clone(),
            name: cluster.name.clone(),
            workload_pool: gke
                .and_then(|c| c.resource["workloadIdentityConfig"]["workloadPool"].as_str())
                .unwrap_or_default()
                .to_string(),
        }
    }
}

fn set_up_failed(volume: &str, error: &str) -> String {
    format!("MountVolume.SetUp failed for volume \"{volume}\" : {error}")
}

/// A Cloud Storage FUSE volume of a pod: the volume name the kubelet reports and the bucket.
#[derive(Debug, Clone, PartialEq)]
struct GcsVolume {
    volume: String,
    bucket: String,
}

/// The pod's volumes the kubelet cannot mount now, one message per volume (empty: all mount).
/// `node` is the pod's Node object.
pub fn mount_failures(
    world: &World,
    gke: &Gke,
    cluster: &KubeCluster,
    pod: &Value,
    node: &Value,
) -> Vec<String> {
    let namespace = pod["metadata"]["namespace"].as_str().unwrap_or_default();
    let mut failures = vec![];
    for volume in pod["spec"]["volumes"].as_array().into_iter().flatten() {
        let name = volume["name"].as_str().unwrap_or_default();
        for (field, kind, resource, key) in [
            ("configMap", "configmap", "configmaps", "name"),
            ("secret", "secret", "secrets", "secretName"),
        ] {
            let source = &volume[field];
            let Some(object) = source[key].as_str() else {
                continue;
            };
            if source["optional"] != true
                && cluster.store.get("", resource, namespace, object).is_none()
            {
                failures.push(set_up_failed(
                    name,
                    &format!("{kind} \"{object}\" not found"),
                ));
            }
        }
        let gcs = if volume["csi"]["driver"] == GCSFUSE_DRIVER {
            Some(GcsVolume {
                volume: name.to_string(),
                bucket: volume["csi"]["volumeAttributes"]["bucketName"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
            })
        } else if let Some(claim) = volume["persistentVolumeClaim"]["claimName"].as_str() {
            cluster
                .store
                .get("", "persistentvolumeclaims", namespace, claim)
                .and_then(|pvc| pvc["spec"]["volumeName"].as_str())
                .and_then(|pv| cluster.store.get("", "persistentvolumes", "", pv))
                .filter(|pv| pv["spec"]["csi"]["driver"] == GCSFUSE_DRIVER)
                .map(|pv| GcsVolume {
                    volume: pv["metadata"]["name"]
                        .as_str()
                        .unwrap_or_default()
                        .to_string(),
                    bucket: pv["spec"]["csi"]["volumeHandle"]
                        .as_str()
                        .unwrap_or_default()
                        .to_string(),
                })
        } else {
            None
        };
        if let Some(gcs) = gcs
            && let Some(error) = gcsfuse_failure(world, gke, cluster, pod, node, &gcs.bucket)
        {
            failures.push(set_up_failed(&gcs.volume, &error));
        }
    }
    failures
}

/// Why the GCS FUSE CSI driver refuses to publish `bucket` for `pod` on `node`, if it does.
fn gcsfuse_failure(
    world: &World,
    gke: &Gke,
    cluster: &KubeCluster,
    pod: &Value,
    node: &Value,
    bucket: &str,
) -> Option<String> {
    if !cluster.addons.gcs_fuse_csi {
        return Some(format!(
            "kubernetes.io/csi: mounter.SetUpAt failed to get CSI client: driver name \
             {GCSFUSE_DRIVER} not found in the list of registered CSI drivers"
        ));
    }
    if bucket != "_" {
        if gke.workload_pool.is_empty() {
            return Some(
                "rpc error: code = Unauthenticated desc = failed to prepare storage service: \
                 storage service manager failed to setup service: timed out waiting for the \
                 condition"
                    .into(),
            );
        }
        if !world.storage.buckets.contains_key(bucket) {
            return Some(format!(
                "rpc error: code = NotFound desc = failed to get GCS bucket \"{bucket}\": \
                 storage: bucket doesn't exist"
            ));
        }
        let (principal, caller) = pod_identity(gke, cluster, pod);
        let resource = Resource::Bucket(bucket.to_string());
        if !iam::has_any_role(world, &principal, &resource, LIST_OBJECTS) {
            return Some(format!(
                "rpc error: code = PermissionDenied desc = failed to get GCS bucket \
                 \"{bucket}\": googleapi: Error 403: {caller} does not have storage.objects.list \
                 access to the Google Cloud Storage bucket. Permission 'storage.objects.list' \
                 denied on resource (or it may not exist)., forbidden"
            ));
        }
    }
    let metadata_server = node["metadata"]["labels"][METADATA_LABEL] == "true";
    if !metadata_server && pod["spec"]["hostNetwork"] != true {
        return Some(
            "rpc error: code = FailedPrecondition desc = Workload Identity Federation is not \
             enabled on node. Please make sure this is enabled on both cluster and node pool \
             level (https://cloud.google.com/kubernetes-engine/docs/how-to/workload-identity)"
                .into(),
        );
    }
    let annotated = pod["metadata"]["annotations"][GCSFUSE_ANNOTATION]
        .as_str()
        .is_some_and(|v| v.eq_ignore_ascii_case("true"));
    if !annotated {
        return Some(
            "rpc error: code = FailedPrecondition desc = failed to find the sidecar container \
             in Pod spec"
                .into(),
        );
    }
    None
}

/// The Google identity a pod's workloads reach Cloud Storage as, and how Cloud Storage names it
/// in a refusal: its Kubernetes service account through Workload Identity Federation
/// (`Caller`), or the IAM service account that account's `iam.gke.io/gcp-service-account`
/// annotation names (its email).
fn pod_identity(gke: &Gke, cluster: &KubeCluster, pod: &Value) -> (Principal, String) {
    let namespace = pod["metadata"]["namespace"].as_str().unwrap_or_default();
    let name = pod["spec"]["serviceAccountName"]
        .as_str()
        .filter(|n| !n.is_empty())
        .unwrap_or("default");
    let account = cluster.store.get("", "serviceaccounts", namespace, name);
    if let Some(gsa) = account
        .and_then(|a| a["metadata"]["annotations"][GSA_ANNOTATION].as_str())
        .filter(|e| !e.is_empty())
    {
        return (
            Principal::Member(format!("serviceAccount:{gsa}")),
            gsa.to_string(),
        );
    }
    let ksa = KubernetesServiceAccount {
        project: gke.project.clone(),
        location: gke.location.clone(),
        cluster: gke.name.clone(),
        namespace: namespace.to_string(),
        name: name.to_string(),
        uid: account
            .and_then(|a| a["metadata"]["uid"].as_str())
            .map(str::to_string),
    };
    (Principal::KubernetesServiceAccount(ksa), "Caller".into())
}

/// Roles whose permissions include `artifactregistry.repositories.downloadArtifacts`
/// (<https://cloud.google.com/iam/docs/roles-permissions/artifactregistry>): the Artifact
/// Registry roles that read, and the basic roles. `roles/viewer` is believed to include it (not
/// confirmed from the permission's list of roles); `roles/container.defaultNodeServiceAccount`
/// does not.
pub const DOWNLOAD_ARTIFACTS: &[&str] = &[
    "roles/artifactregistry.reader",
    "roles/artifactregistry.writer",
    "roles/artifactregistry.repoAdmin",
    "roles/artifactregistry.admin",
    "roles/artifactregistry.createOnPushWriter",
    "roles/artifactregistry.createOnPushRepoAdmin",
    "roles/owner",
    "roles/editor",
    "roles/viewer",
];

/// An image in a Docker repository of Artifact Registry:
/// `LOCATION-docker.pkg.dev/PROJECT/REPOSITORY/IMAGE[:TAG|@DIGEST]`.
#[derive(Debug, Clone, PartialEq)]
pub struct ArImage {
    /// `LOCATION-docker.pkg.dev`.
    pub host: String,
    pub location: String,
    pub project: String,
    pub repository: String,
    /// `PROJECT/REPOSITORY/IMAGE` (the registry's repository name, without tag or digest).
    pub path: String,
    /// The reference the runtime pulls: the image with `:latest` when it names no tag or digest.
    pub reference: String,
}

impl ArImage {
    pub fn parse(image: &str) -> Option<ArImage> {
        let (host, rest) = image.split_once('/')?;
        let location = host.strip_suffix("-docker.pkg.dev")?;
        let (name, pinned) = match rest.split_once('@') {
            Some((name, _)) => (name, true),
            None => match rest.rsplit_once(':') {
                Some((name, tag)) if !tag.contains('/') => (name, true),
                _ => (rest, false),
            },
        };
        let mut parts = name.splitn(3, '/');
        let (project, repository, image_name) = (parts.next()?, parts.next()?, parts.next()?);
        if location.is_empty()
            || project.is_empty()
            || repository.is_empty()
            || image_name.is_empty()
        {
            return None;
        }
        Some(ArImage {
            host: host.to_string(),
            location: location.to_string(),
            project: project.to_string(),
            repository: repository.to_string(),
            path: name.to_string(),
            reference: if pinned {
                image.to_string()
            } else {
                format!("{image}:latest")
            },
        })
    }

    /// The registry's token endpoint for a pull of this image, as containerd asks it.
    fn token_url(&self) -> String {
        format!(
            "https://{host}/v2/token?scope=repository%3A{path}%3Apull&service={host}",
            host = self.host,
            path = self.path.replace('/', "%2F"),
        )
    }
}

/// Whether the simulated world holds `project`: the world file names it, or it has any resource
/// or state here (clusters, repositories, buckets, service accounts, a written policy, services
/// changed). Images of other projects (Google's public `gce-ai-infra`, say) are not checked.
pub fn knows_project(world: &World, project: &str) -> bool {
    let number = world.project_number(project);
    let named = |p: &str| p == project || p == number;
    world.project_numbers.contains_key(project)
        || world.container.clusters.values().any(|c| named(&c.project))
        || world
            .artifactregistry
            .repositories
            .keys()
            .filter_map(|k| k.strip_prefix("projects/")?.split('/').next())
            .any(named)
        || world.storage.buckets.values().any(|b| named(&b.project))
        || world.iam.accounts.values().any(|a| named(&a.project))
        || world.iam.project_policies.keys().any(|p| named(p))
        || world.serviceusage.projects.keys().any(|p| named(p))
}

/// Whether the repository of `image` exists (its project named by id or number).
fn repository_exists(world: &World, image: &ArImage) -> bool {
    let by = |p: &str| {
        format!(
            "projects/{p}/locations/{}/repositories/{}",
            image.location, image.repository
        )
    };
    let number = world.project_number(&image.project);
    let mut names = vec![by(&image.project), by(&number)];
    if let Some(id) = iam::project_id_for_number(world, &image.project) {
        names.push(by(&id));
    }
    names
        .iter()
        .any(|n| world.artifactregistry.repositories.contains_key(n))
}

/// Why the kubelet, acting as the IAM service account `account` (the node's), cannot pull
/// `image`, if it cannot: an image of an Artifact Registry Docker repository in a project of the
/// simulated world ([`knows_project`]) whose repository does not exist, or on which `account`
/// holds none of [`DOWNLOAD_ARTIFACTS`] (in the repository's policy or its project's, without a
/// condition). The registry's token endpoint answers 404 or 403, and containerd reports
/// `failed to pull and unpack image "REF": failed to resolve reference "REF": failed to
/// authorize: failed to fetch oauth token: unexpected status from GET request to
/// https://LOCATION-docker.pkg.dev/v2/token?scope=repository%3APROJECT%2FREPO%2FIMAGE%3Apull&service=LOCATION-docker.pkg.dev:
/// 403 Forbidden` (`404 Not Found`) — the wording GKE's containerd gives, as captured from GKE
/// 1.36 for a repository that does not exist and reported for a node account without a role
/// (containerd 1.7 and later; containerd 1.6 printed `unexpected status: 403 Forbidden`, and older
/// kubelets put `rpc error: code = Unknown desc = ` before it). `REF` is the image with `:latest`
/// when it names no tag. Every other image pulls.
pub fn pull_failure(world: &World, account: &str, image: &str) -> Option<String> {
    let ar = ArImage::parse(image)?;
    if !knows_project(world, &ar.project) {
        return None;
    }
    let status = if !repository_exists(world, &ar) {
        "404 Not Found"
    } else {
        let node = Principal::Member(format!("serviceAccount:{account}"));
        let repository = Resource::Repository {
            project: ar.project.clone(),
            location: ar.location.clone(),
            repository: ar.repository.clone(),
        };
        if iam::has_any_role(world, &node, &repository, DOWNLOAD_ARTIFACTS) {
            return None;
        }
        "403 Forbidden"
    };
    Some(format!(
        "failed to pull and unpack image \"{reference}\": failed to resolve reference \
         \"{reference}\": failed to authorize: failed to fetch oauth token: unexpected status \
         from GET request to {url}: {status}",
        reference = ar.reference,
        url = ar.token_url(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn artifact_registry_images_parse() {
        let image = ArImage::parse("us-docker.pkg.dev/gke-demos-345619/does-not-exist/nope:v1")
            .expect("an Artifact Registry image");
        assert_eq!(
            (
                image.location.as_str(),
                image.project.as_str(),
                image.repository.as_str()
            ),
            ("us", "gke-demos-345619", "does-not-exist")
        );
        assert_eq!(
            image.token_url(),
            "https://us-docker.pkg.dev/v2/token?scope=repository%3Agke-demos-345619%2Fdoes-not-exist%2Fnope%3Apull&service=us-docker.pkg.dev"
        );
        let untagged = ArImage::parse("us-central1-docker.pkg.dev/p/r/team/app").unwrap();
        assert_eq!(untagged.path, "p/r/team/app");
        assert_eq!(
            untagged.reference,
            "us-central1-docker.pkg.dev/p/r/team/app:latest"
        );
        let pinned = ArImage::parse("us-central1-docker.pkg.dev/p/r/app@sha256:abc").unwrap();
        assert_eq!(pinned.path, "p/r/app");
        assert_eq!(
            pinned.reference,
            "us-central1-docker.pkg.dev/p/r/app@sha256:abc"
        );
        for other in [
            "nginx",
            "gcr.io/p/app:1",
            "us-docker.pkg.dev/p/app:1",
            "docker.io/library/busybox",
        ] {
            assert_eq!(ArImage::parse(other), None, "{other}");
        }
    }
}
