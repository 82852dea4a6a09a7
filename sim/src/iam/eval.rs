//! Does a principal hold a role on a resource? The Google APIs refuse no call for want of a role;
//! the simulated kubelets ask (`crate::kube::controllers::access`: Cloud Storage FUSE mounts,
//! Artifact Registry image pulls).
//!
//! ```ignore
//! use a3ctl_sim::iam::eval::{self, KubernetesServiceAccount, Principal, Resource};
//! let trainer = Principal::KubernetesServiceAccount(KubernetesServiceAccount {
//!     project: "my-project".into(), location: "us-central1".into(), cluster: "c1".into(),
//!     namespace: "team-a".into(), name: "trainer".into(), uid: None,
//! });
//! let bucket = Resource::Bucket("my-data".into());
//! let can_read = eval::has_any_role(&world, &trainer, &bucket,
//!     &["roles/storage.objectViewer", "roles/storage.objectUser", "roles/storage.admin"]);
//! let how = eval::grants(&world, &trainer, &bucket, |role| role.starts_with("roles/storage."));
//! ```
//!
//! [`grants`] lists every binding that grants `principal` a role the predicate accepts, in the
//! resource's own policy (a bucket's, a repository's) and in its project's policy; [`has_role`]
//! and [`has_any_role`] answer yes only for a binding without a condition (conditions are kept,
//! never evaluated: a conditional grant is reported with its condition and left to the caller).
//! Roles are compared by name — the predicate decides what counts (basic roles such as
//! `roles/editor` imply nothing by themselves here).
//!
//! **Members understood** (the forms of <https://cloud.google.com/iam/docs/principal-identifiers>):
//! - `allUsers` matches every principal, [`Principal::Anonymous`] included;
//!   `allAuthenticatedUsers` every principal but the anonymous one;
//! - `user:`, `serviceAccount:`, `group:` match a [`Principal::Member`] with the same string (the
//!   email compared without regard to case); group membership is not modelled, so a group member
//!   matches only the group itself;
//! - `domain:D` matches `Principal::Member("user:NAME@D")`;
//! - on buckets, `projectOwner:P` / `projectEditor:P` / `projectViewer:P` match a principal that
//!   holds `roles/owner` / `roles/editor` / `roles/viewer` without a condition in project P's policy;
//! - a [`Principal::KubernetesServiceAccount`] (namespace `NS`, name `KSA`, cluster `C` in project
//!   `P`, location `L`; project number `N` of P) matches, in P's workload identity pool
//!   `P.svc.id.goog`:
//!   - `principal://iam.googleapis.com/projects/N/locations/global/workloadIdentityPools/P.svc.id.goog/subject/ns/NS/sa/KSA`,
//!   - `principal://iam.googleapis.com/projects/N/locations/global/workloadIdentityPools/P.svc.id.goog/kubernetes.serviceaccount.uid/UID`
//!     when the account's uid is known,
//!   - `principalSet://iam.googleapis.com/projects/N/locations/global/workloadIdentityPools/P.svc.id.goog/namespace/NS`,
//!   - `principalSet://iam.googleapis.com/projects/N/locations/global/workloadIdentityPools/P.svc.id.goog/kubernetes.cluster/https://container.googleapis.com/v1/projects/P/locations/L/clusters/C`
//!     (the cluster's project by id or number),
//!   - the legacy `serviceAccount:P.svc.id.goog[NS/KSA]`;
//! - `deleted:` members match nobody. Other `principal://` and `principalSet://` forms (workforce
//!   pools, attributes, groups of external identities) match nobody.
//!
//! A Kubernetes service account that impersonates an IAM service account (the
//! `iam.gke.io/gcp-service-account` annotation) is that account's business: ask about
//! `Principal::Member("serviceAccount:...")` too.

use super::policy::{Binding, Policy};
use super::{project_key, project_policy};
use crate::state::storage::Bucket;
use crate::world::World;
use serde_json::Value;

/// A resource that has an allow policy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Resource {
    /// A project, by id or number.
    Project(String),
    /// A Cloud Storage bucket, by name.
    Bucket(String),
    /// An Artifact Registry repository.
    Repository {
        project: String,
        location: String,
        repository: String,
    },
}

/// Who asks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Principal {
    /// A caller without credentials.
    Anonymous,
    /// A principal named as policies name it: `user:EMAIL`, `serviceAccount:EMAIL`, `group:EMAIL`.
    Member(String),
    /// A Kubernetes service account of a GKE cluster with Workload Identity Federation.
    KubernetesServiceAccount(KubernetesServiceAccount),
}

/// A Kubernetes service account as Workload Identity Federation for GKE names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KubernetesServiceAccount {
    /// The project of the cluster, by id (its pool is `PROJECT.svc.id.goog`).
    pub project: String,
    pub location: String,
    pub cluster: String,
    pub namespace: String,
    pub name: String,
    /// The ServiceAccount's `metadata.uid`, when known.
    pub uid: Option<String>,
}

/// Which policy a grant comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Via {
    /// The resource's own policy.
    Resource,
    /// The policy of this project (its key).
    Project(String),
}

/// One binding that grants the principal a role.
#[derive(Debug, Clone, PartialEq)]
pub struct Grant {
    pub role: String,
    /// The member of the binding that matched.
    pub member: String,
    pub via: Via,
    /// The binding's condition (never evaluated).
    pub condition: Option<Value>,
}

/// Every binding that grants `principal` a role `role` accepts on `resource`, through the
/// resource's policy and its project's. Empty when the resource does not exist.
pub fn grants(
    world: &World,
    principal: &Principal,
    resource: &Resource,
    role: impl Fn(&str) -> bool,
) -> Vec<Grant> {
    let Some((own, project)) = policies(world, resource) else {
        return vec![];
    };
    let mut out = vec![];
    if let Some(policy) = &own {
        collect(
            world,
            principal,
            policy,
            &role,
            Via::Resource,
            true,
            &mut out,
        );
    }
    let project_policy = project_policy(world, &project);
    collect(
        world,
        principal,
        &project_policy,
        &role,
        Via::Project(project),
        false,
        &mut out,
    );
    out
}

/// Whether `principal` holds `role` on `resource` through a binding without a condition.
pub fn has_role(world: &World, principal: &Principal, resource: &Resource, role: &str) -> bool {
    has_any_role(world, principal, resource, &[role])
}

/// Whether `principal` holds one of `roles` on `resource` through a binding without a condition.
pub fn has_any_role(
    world: &World,
    principal: &Principal,
    resource: &Resource,
    roles: &[&str],
) -> bool {
    grants(world, principal, resource, |r| roles.contains(&r))
        .iter()
        .any(|g| g.condition.is_none())
}

/// Whether the bucket has uniform bucket-level access.
pub fn uniform(bucket: &Bucket) -> bool {
    bucket.resource["iamConfiguration"]["uniformBucketLevelAccess"]["enabled"] == true
}

/// The policy a bucket has now (its etag the bucket's).
pub fn bucket_policy(bucket: &Bucket) -> Policy {
    let mut policy = bucket.iam.clone().unwrap_or_else(|| {
        let p = &bucket.project;
        let owners = [format!("projectEditor:{p}"), format!("projectOwner:{p}")];
        let owners: Vec<&str> = owners.iter().map(String::as_str).collect();
        let viewer = format!("projectViewer:{p}");
        let mut bindings = vec![
            Binding::new("roles/storage.legacyBucketOwner", &owners),
            Binding::new("roles/storage.legacyBucketReader", &[&viewer]),
        ];
        if uniform(bucket) {
            bindings.push(Binding::new("roles/storage.legacyObjectOwner", &owners));
            bindings.push(Binding::new("roles/storage.legacyObjectReader", &[&viewer]));
        }
        Policy::with_bindings(bindings, String::new())
    });
    policy.etag = crate::state::storage::etag(None, bucket.metageneration);
    policy
}

/// The resource's own policy (None for a project) and its project's key; None if it does not
/// exist.
fn policies(world: &World, resource: &Resource) -> Option<(Option<Policy>, String)> {
    match resource {
        Resource::Project(p) => Some((None, project_key(world, p))),
        Resource::Bucket(name) => {
            let bucket = world.storage.buckets.get(name)?;
            Some((
                Some(bucket_policy(bucket)),
                project_key(world, &bucket.project),
            ))
        }
        Resource::Repository {
            project,
            location,
            repository,
        } => {
            let by =
                |p: &str| format!("projects/{p}/locations/{location}/repositories/{repository}");
            let name = [by(project), by(&world.project_number(project))]
                .into_iter()
                .chain(super::project_id_for_number(world, project).map(|id| by(&id)))
                .find(|n| world.artifactregistry.repositories.contains_key(n))?;
            let policy = world
                .artifactregistry
                .policies
                .get(&name)
                .cloned()
                .unwrap_or_default();
            Some((Some(policy), project_key(world, project)))
        }
    }
}

fn collect(
    world: &World,
    principal: &Principal,
    policy: &Policy,
    role: &impl Fn(&str) -> bool,
    via: Via,
    convenience: bool,
    out: &mut Vec<Grant>,
) {
    for binding in &policy.bindings {
        if !role(&binding.role) {
            continue;
        }
        for member in &binding.members {
            let matched = matches(world, principal, member)
                || (convenience && project_convenience(world, principal, member));
            if matched {
                out.push(Grant {
                    role: binding.role.clone(),
                    member: member.clone(),
                    via: via.clone(),
                    condition: binding.condition.clone(),
                });
            }
        }
    }
}

/// A bucket's `projectOwner:P`-style member: the principal holds the basic role on P.
fn project_convenience(world: &World, principal: &Principal, member: &str) -> bool {
    let Some((kind, project)) = member.split_once(':') else {
        return false;
    };
    let basic = match kind {
        "projectOwner" => "roles/owner",
        "projectEditor" => "roles/editor",
        "projectViewer" => "roles/viewer",
        _ => return false,
    };
    let policy = project_policy(world, &project_key(world, project));
    policy
        .bindings
        .iter()
        .filter(|b| b.role == basic && b.condition.is_none())
        .flat_map(|b| &b.members)
        .any(|m| matches(world, principal, m))
}

/// Whether `member` (of a binding) names `principal`.
pub fn matches(world: &World, principal: &Principal, member: &str) -> bool {
    match member {
        "allUsers" => return true,
        "allAuthenticatedUsers" => return !matches!(principal, Principal::Anonymous),
        _ => {}
    }
    if member.starts_with("deleted:") {
        return false;
    }
    match principal {
        Principal::Anonymous => false,
        Principal::Member(me) => {
            if me.eq_ignore_ascii_case(member) {
                return true;
            }
            match (member.strip_prefix("domain:"), me.strip_prefix("user:")) {
                (Some(domain), Some(email)) => email
                    .rsplit_once('@')
                    .is_some_and(|(_, d)| d.eq_ignore_ascii_case(domain)),
                _ => false,
            }
        }
        Principal::KubernetesServiceAccount(ksa) => ksa_matches(world, ksa, member),
    }
}

fn ksa_matches(world: &World, ksa: &KubernetesServiceAccount, member: &str) -> bool {
    let pool = format!("{}.svc.id.goog", ksa.project);
    if let Some(legacy) = member.strip_prefix("serviceAccount:") {
        return legacy == format!("{pool}[{}/{}]", ksa.namespace, ksa.name);
    }
    let (set, rest) = if let Some(rest) = member.strip_prefix("principalSet:") {
        (true, rest)
    } else if let Some(rest) = member.strip_prefix("principal:") {
        (false, rest)
    } else {
        return false;
    };
    let Some(path) = super::policy::principal_path(rest) else {
        return false;
    };
    let parts: Vec<&str> = path.splitn(7, '/').collect();
    // projects/N/locations/global/workloadIdentityPools/POOL/REST
    if parts.len() != 7 || parts[0] != "projects" || parts[4] != "workloadIdentityPools" {
        return false;
    }
    let number = world.project_number(&ksa.project);
    if parts[1] != number || parts[5] != pool {
        return false;
    }
    let tail = parts[6];
    if set {
        if let Some(ns) = tail.strip_prefix("namespace/") {
            return ns == ksa.namespace;
        }
        if let Some(url) = tail.strip_prefix("kubernetes.cluster/") {
            let Some(rest) = url.strip_prefix("https://container.googleapis.com/v1/projects/")
            else {
                return false;
            };
            let segs: Vec<&str> = rest.split('/').collect();
            return segs.len() == 5
                && (segs[0] == ksa.project || segs[0] == number)
                && segs[1] == "locations"
                && segs[2] == ksa.location
                && segs[3] == "clusters"
                && segs[4] == ksa.cluster;
        }
        false
    } else {
        if let Some(subject) = tail.strip_prefix("subject/") {
            return subject == format!("ns/{}/sa/{}", ksa.namespace, ksa.name);
        }
        if let Some(uid) = tail.strip_prefix("kubernetes.serviceaccount.uid/") {
            return ksa.uid.as_deref() == Some(uid);
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::iam::policy::Binding;
    use crate::state::storage::Bucket;
    use serde_json::json;
    use std::collections::BTreeMap;

    const P: &str = "my-project";

    fn ksa(namespace: &str, name: &str) -> Principal {
        Principal::KubernetesServiceAccount(KubernetesServiceAccount {
            project: P.into(),
            location: "us-central1".into(),
            cluster: "c1".into(),
            namespace: namespace.into(),
            name: name.into(),
            uid: Some("0a1b2c".into()),
        })
    }

    fn pool(world: &World) -> String {
        format!(
            "//iam.googleapis.com/projects/{}/locations/global/workloadIdentityPools/{P}.svc.id.goog",
            world.project_number(P)
        )
    }

    fn world_with(bucket_policy: Vec<Binding>, project_bindings: Vec<Binding>) -> World {
        let mut world = World::new(1, crate::clock::default_start());
        world.storage.buckets.insert(
            "data".into(),
            Bucket {
                project: P.into(),
                resource: json!({"name": "data", "iamConfiguration": {"uniformBucketLevelAccess": {"enabled": true}}}),
                metageneration: 1,
                objects: BTreeMap::new(),
                iam: Some(Policy::with_bindings(bucket_policy, String::new())),
            },
        );
        let mut project = crate::iam::default_project_policy(&world, P);
        project.bindings.extend(project_bindings);
        world.iam.project_policies.insert(P.into(), project);
        world
    }

    #[test]
    fn workload_identity_forms() {
        let world = World::new(1, crate::clock::default_start());
        let pool = pool(&world);
        let yes = [
            format!("principal:{pool}/subject/ns/team-a/sa/trainer"),
            format!("principal:{pool}/kubernetes.serviceaccount.uid/0a1b2c"),
            format!("principalSet:{pool}/namespace/team-a"),
            format!(
                "principalSet:{pool}/kubernetes.cluster/https://container.googleapis.com/v1/projects/{P}/locations/us-central1/clusters/c1"
            ),
            format!("serviceAccount:{P}.svc.id.goog[team-a/trainer]"),
            "allUsers".to_string(),
            "allAuthenticatedUsers".to_string(),
        ];
        for member in &yes {
            assert!(
                matches(&world, &ksa("team-a", "trainer"), member),
                "{member}"
            );
        }
        let no = [
            format!("principal:{pool}/subject/ns/team-b/sa/trainer"),
            format!("principalSet:{pool}/namespace/team-b"),
            format!(
                "principalSet:{pool}/kubernetes.cluster/https://container.googleapis.com/v1/projects/{P}/locations/us-central1/clusters/c2"
            ),
            format!(
                "principalSet:{pool}/kubernetes.cluster/https://container.googleapis.com/v1/projects/{P}/locations/us-east4/clusters/c1"
            ),
            format!(
                "principalSet://iam.googleapis.com/projects/1/locations/global/workloadIdentityPools/{P}.svc.id.goog/namespace/team-a"
            ),
            format!(
                "principalSet://iam.googleapis.com/projects/{}/locations/global/workloadIdentityPools/other.svc.id.goog/namespace/team-a",
                world.project_number(P)
            ),
            format!("serviceAccount:{P}.svc.id.goog[team-a/other]"),
            "user:trainer@example.com".to_string(),
            format!("deleted:principal:{pool}/subject/ns/team-a/sa/trainer"),
        ];
        for member in &no {
            assert!(
                !matches(&world, &ksa("team-a", "trainer"), member),
                "{member}"
            );
        }
        let number = world.project_number(P);
        assert!(matches(
            &world,
            &ksa("x", "y"),
            &format!(
                "principalSet:{pool}/kubernetes.cluster/https://container.googleapis.com/v1/projects/{number}/locations/us-central1/clusters/c1"
            )
        ));
    }

    #[test]
    fn members_users_domains_and_anonymous() {
        let world = World::new(1, crate::clock::default_start());
        let alice = Principal::Member("user:Alice@Example.com".into());
        assert!(matches(&world, &alice, "user:alice@example.com"));
        assert!(matches(&world, &alice, "domain:example.com"));
        assert!(!matches(&world, &alice, "domain:example.org"));
        assert!(!matches(&world, &alice, "group:alice@example.com"));
        assert!(matches(&world, &Principal::Anonymous, "allUsers"));
        assert!(!matches(
            &world,
            &Principal::Anonymous,
            "allAuthenticatedUsers"
        ));
        let sa = Principal::Member("serviceAccount:x@p.iam.gserviceaccount.com".into());
        assert!(!matches(
            &world,
            &sa,
            "deleted:serviceAccount:x@p.iam.gserviceaccount.com?uid=1"
        ));
    }

    #[test]
    fn grants_through_the_bucket_and_its_project() {
        let viewer = "roles/storage.objectViewer";
        let runner = "serviceAccount:runner@my-project.iam.gserviceaccount.com";
        let condition = json!({"title": "t", "expression": "true"});
        let world = {
            let mut w = World::new(1, crate::clock::default_start());
            let pool = pool(&w);
            w = world_with(
                vec![
                    Binding::new(viewer, &[&format!("principalSet:{pool}/namespace/team-a")]),
                    Binding {
                        condition: Some(condition.clone()),
                        ..Binding::new("roles/storage.objectUser", &[runner])
                    },
                    Binding::new(
                        "roles/storage.legacyBucketOwner",
                        &["projectOwner:my-project"],
                    ),
                ],
                vec![Binding::new("roles/storage.admin", &[runner])],
            );
            w
        };
        let bucket = Resource::Bucket("data".into());
        assert!(has_role(&world, &ksa("team-a", "trainer"), &bucket, viewer));
        assert!(!has_role(
            &world,
            &ksa("team-b", "trainer"),
            &bucket,
            viewer
        ));
        let sa = Principal::Member(runner.into());
        // The conditional grant is reported, not counted.
        let found = grants(&world, &sa, &bucket, |r| r == "roles/storage.objectUser");
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].condition, Some(condition));
        assert_eq!(found[0].via, Via::Resource);
        assert!(!has_role(&world, &sa, &bucket, "roles/storage.objectUser"));
        // Through the project's policy.
        let found = grants(&world, &sa, &bucket, |r| r.starts_with("roles/storage."));
        assert!(
            found
                .iter()
                .any(|g| g.role == "roles/storage.admin" && g.via == Via::Project(P.into()))
        );
        assert!(has_any_role(&world, &sa, &bucket, &["roles/storage.admin"]));
        // projectOwner: convenience members follow the project's owners.
        let owner = Principal::Member(crate::iam::DEFAULT_OWNER.into());
        assert!(has_role(
            &world,
            &owner,
            &bucket,
            "roles/storage.legacyBucketOwner"
        ));
        assert!(!has_role(
            &world,
            &sa,
            &bucket,
            "roles/storage.legacyBucketOwner"
        ));
        // The Compute Engine default account is an editor of the project.
        let compute = Principal::Member(format!(
            "serviceAccount:{}",
            crate::iam::compute_default_email(&world, P)
        ));
        assert!(has_role(
            &world,
            &compute,
            &Resource::Project(P.into()),
            "roles/editor"
        ));
        assert!(has_role(
            &world,
            &compute,
            &Resource::Project(world.project_number(P)),
            "roles/editor"
        ));
        assert!(grants(&world, &sa, &Resource::Bucket("nope".into()), |_| true).is_empty());
    }

    #[test]
    fn grants_on_repositories() {
        let mut world = World::new(1, crate::clock::default_start());
        let name = format!("projects/{P}/locations/us-central1/repositories/images");
        world
            .artifactregistry
            .repositories
            .insert(name.clone(), json!({"name": name}));
        let repo = Resource::Repository {
            project: P.into(),
            location: "us-central1".into(),
            repository: "images".into(),
        };
        let reader = "roles/artifactregistry.reader";
        assert!(!has_role(&world, &ksa("team-a", "trainer"), &repo, reader));
        world.artifactregistry.policies.insert(
            name,
            Policy::with_bindings(
                vec![Binding::new(
                    reader,
                    &[&format!("principalSet:{}/namespace/team-a", pool(&world))],
                )],
                "BwYAAAAAAAE=".into(),
            ),
        );
        assert!(has_role(&world, &ksa("team-a", "trainer"), &repo, reader));
        let by_number = Resource::Repository {
            project: world.project_number(P),
            location: "us-central1".into(),
            repository: "images".into(),
        };
        assert!(has_role(
            &world,
            &ksa("team-a", "trainer"),
            &by_number,
            reader
        ));
        let missing = Resource::Repository {
            project: P.into(),
            location: "us-central1".into(),
            repository: "other".into(),
        };
        assert!(!has_role(&world, &Principal::Anonymous, &missing, reader));
    }
}
