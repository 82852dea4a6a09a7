//! `[identity]` as resources: the nodes' service account and its project roles (before the node
//! pools that run as it), image pulls from the blueprint's repositories for that account, and
//! object access on every mounted bucket for each workload's Kubernetes service account.
//!
//! A workload's principal is its Kubernetes service account in the project's Workload Identity
//! pool, `principal://iam.googleapis.com/projects/PROJECT_NUMBER/locations/global/workloadIdentityPools/PROJECT.svc.id.goog/subject/ns/NAMESPACE/sa/NAME`
//! (<https://cloud.google.com/iam/docs/principal-identifiers>; how GKE's Workload Identity
//! Federation grants a pod access to a bucket:
//! <https://cloud.google.com/kubernetes-engine/docs/how-to/workload-identity#configure-authz-principals>).
//! The blueprint knows the project's id, not its number, so the member is written with the
//! literal `PROJECT_NUMBER` and the IAM adapter puts the number in when it reads or writes the
//! policy. `roles/storage.objectUser` lets GCS FUSE read and write objects (what a checkpoint
//! bucket needs, <https://cloud.google.com/kubernetes-engine/docs/how-to/persistent-volumes/cloud-storage-fuse-csi-driver-setup#authentication>).

use crate::blueprint::{Blueprint, NodeAccount};
use crate::resource::kinds::iam_member::IamMemberSpec;
use crate::resource::kinds::service_account::ServiceAccountSpec;
use crate::resource::kinds::to_spec;
use crate::resource::{Addr, Desired, Kind, Lifecycle};

/// The placeholder of the project number in a member; [`crate::cloud::gcp::iam`] fills it in.
pub const PROJECT_NUMBER: &str = "PROJECT_NUMBER";

/// What the pools' readers need on a repository, and the workloads on a mounted bucket.
pub const REPOSITORY_ROLE: &str = "roles/artifactregistry.reader";
pub const BUCKET_ROLE: &str = "roles/storage.objectUser";

pub fn node_account() -> Addr {
    Addr::new(Kind::ServiceAccount, "nodes")
}

/// `roles/container.defaultNodeServiceAccount` → `nodes-container.defaultNodeServiceAccount`.
fn role_name(role: &str) -> String {
    role.trim_start_matches("roles/").replace('/', "-")
}

fn member(grant: IamMemberSpec, name: String, deps: Vec<Addr>) -> Desired {
    Desired {
        addr: Addr::new(Kind::IamMember, name),
        id: grant.id(),
        spec: to_spec(&grant),
        dependencies: deps,
        lifecycle: Lifecycle::default(),
    }
}

/// The nodes' service account and its project roles, when a3ctl creates it; with the addresses
/// node pools wait for.
pub fn nodes(bp: &Blueprint) -> (Vec<Desired>, Vec<Addr>) {
    let NodeAccount::Create { account_id } = &bp.identity.node_account else {
        return (vec![], vec![]);
    };
    let p = &bp.project;
    let email = bp.identity.node_account.email(p);
    let mut out = vec![Desired {
        addr: node_account(),
        id: format!("projects/{p}/serviceAccounts/{email}"),
        spec: to_spec(&ServiceAccountSpec {
            account_id: account_id.clone(),
            display_name: format!("{} GKE nodes", bp.name),
            description: crate::resource::mark(&bp.name),
        }),
        dependencies: vec![],
        lifecycle: Lifecycle::default(),
    }];
    for role in &bp.identity.node_roles {
        out.push(member(
            IamMemberSpec {
                resource: format!("projects/{p}"),
                role: role.clone(),
                member: format!("serviceAccount:{email}"),
            },
            format!("nodes-{}", role_name(role)),
            vec![node_account()],
        ));
    }
    let deps = out.iter().map(|d| d.addr.clone()).collect();
    (out, deps)
}

/// The Workload Identity principal of Kubernetes service account `namespace/name`.
fn workload_principal(project: &str, namespace: &str, name: &str) -> String {
    format!(
        "principal://iam.googleapis.com/projects/{PROJECT_NUMBER}/locations/global/workloadIdentityPools/{project}.svc.id.goog/subject/ns/{namespace}/sa/{name}"
    )
}

/// Reader on every repository for the nodes' account and for every workload (whose jobs fetch
/// artifacts from it through the API), and object access on every mounted bucket for every
/// workload.
pub fn grants(bp: &Blueprint) -> Vec<Desired> {
    let p = &bp.project;
    let mut out = Vec::new();
    let created = matches!(bp.identity.node_account, NodeAccount::Create { .. });
    let email = bp.identity.node_account.email(p);
    // The Compute Engine default account has no email a3ctl knows; it is granted nothing.
    if email != "default" {
        for repo in &bp.artifact_registries {
            let mut deps = vec![Addr::new(Kind::Repository, repo.name.clone())];
            if created {
                deps.push(node_account());
            }
            out.push(member(
                IamMemberSpec {
                    resource: format!(
                        "projects/{p}/locations/{}/repositories/{}",
                        repo.location, repo.name
                    ),
                    role: REPOSITORY_ROLE.into(),
                    member: format!("serviceAccount:{email}"),
                },
                format!("{}-nodes-reader", repo.name),
                deps,
            ));
        }
    }
    for repo in &bp.artifact_registries {
        for w in &bp.identity.workloads {
            out.push(member(
                IamMemberSpec {
                    resource: format!(
                        "projects/{p}/locations/{}/repositories/{}",
                        repo.location, repo.name
                    ),
                    role: REPOSITORY_ROLE.into(),
                    member: workload_principal(p, &w.namespace, &w.name),
                },
                format!("{}-{}-{}-reader", repo.name, w.namespace, w.name),
                vec![Addr::new(Kind::Repository, repo.name.clone())],
            ));
        }
    }
    for bucket in bp.buckets.iter().filter(|b| b.mount) {
        for w in &bp.identity.workloads {
            out.push(member(
                IamMemberSpec {
                    resource: format!("projects/_/buckets/{}", bucket.name),
                    role: BUCKET_ROLE.into(),
                    member: workload_principal(p, &w.namespace, &w.name),
                },
                format!("{}-{}-{}", bucket.name, w.namespace, w.name),
                vec![Addr::new(Kind::Bucket, bucket.name.clone())],
            ));
        }
    }
    out
}
