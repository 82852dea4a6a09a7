//! Identity: IAM service accounts through `google-cloud-iam-admin-v1`
//! (<https://cloud.google.com/iam/docs/reference/rest/v1/projects.serviceAccounts>), and single
//! members of IAM policies ([`crate::resource::kinds::iam_member`]) on the project (Resource
//! Manager v3 `projects.getIamPolicy`/`setIamPolicy`, `google-cloud-resourcemanager-v3`), a
//! repository (Artifact Registry's `getIamPolicy`/`setIamPolicy`) or a bucket (Cloud Storage's
//! `GET/PUT b/BUCKET/iam`, over the JSON API like every other Cloud Storage call).
//!
//! A member is added or removed by read-modify-write: the policy is read at version 3 (so
//! conditional bindings come back whole), only that member changes, and the policy is written
//! back with the etag it was read with. When someone else wrote in between, the API refuses the
//! stale etag (Resource Manager and Artifact Registry `409 ABORTED`, Cloud Storage
//! `412 conditionNotMet`) and the whole read-modify-write runs again, as Google asks
//! (<https://cloud.google.com/iam/docs/policies#etag>), up to [`CONFLICT_ATTEMPTS`] times. Writes
//! to one policy share a serial lane, so a3ctl's own members never race each other.

use super::storage::{StorageClient, encode};
use super::{GcpConfig, classify_gax, compute::found, compute::to_json};
use crate::cloud::{
    CloudError, CloudResult, ErrorClass, FieldDiff, OpStatus, Provider, Settle, Started, Target,
    UpdateStep,
};
use crate::resource::kinds::from_spec;
use crate::resource::kinds::iam_member::{self, IamMemberSpec};
use crate::resource::kinds::service_account::{ServiceAccountField, ServiceAccountSpec};
use crate::resource::{Observed, OperationRef};
use google_cloud_artifactregistry_v1::client::ArtifactRegistry;
use google_cloud_iam_admin_v1::client::Iam;
use google_cloud_iam_admin_v1::model::ServiceAccount;
use google_cloud_iam_v1::model::{GetPolicyOptions, Policy};
use google_cloud_resourcemanager_v3::client::Projects;
use reqwest::Method;
use serde_json::Value;
use std::time::Duration;

/// How many times a member's read-modify-write runs when the policy keeps changing under it.
pub const CONFLICT_ATTEMPTS: u32 = 5;

fn refused_operation(operation: &OperationRef) -> CloudError {
    CloudError::new(
        ErrorClass::Invalid,
        format!("IAM changes start no operation (`{}`)", operation.name),
    )
}

/// IAM service accounts (`service_account`, `projects/P/serviceAccounts/EMAIL`).
pub struct ServiceAccountAdapter {
    client: Iam,
}

impl ServiceAccountAdapter {
    pub async fn new(config: &GcpConfig) -> CloudResult<ServiceAccountAdapter> {
        let client = super::client!(Iam, config.credentials()?, &config.endpoints.iam, "IAM");
        Ok(ServiceAccountAdapter { client })
    }
}

/// `projects/P/serviceAccounts/EMAIL` → `P`.
fn account_project(id: &str) -> CloudResult<&str> {
    match id.split('/').collect::<Vec<_>>().as_slice() {
        ["projects", p, "serviceAccounts", _] => Ok(p),
        _ => Err(CloudError::new(
            ErrorClass::Invalid,
            format!("`{id}` is not a service account (projects/P/serviceAccounts/EMAIL)"),
        )),
    }
}

#[async_trait::async_trait]
impl Provider for ServiceAccountAdapter {
    async fn read(&self, target: &Target) -> CloudResult<Option<Observed>> {
        account_project(&target.id)?;
        let live = found(
            self.client
                .get_service_account()
                .set_name(&target.id)
                .send()
                .await,
        )?;
        Ok(live
            .map(|a| ServiceAccountSpec::project(&to_json(&a)))
            .transpose()?)
    }

    async fn create(&self, target: &Target) -> CloudResult<Started> {
        let project = account_project(&target.id)?;
        let spec: ServiceAccountSpec = from_spec("service account", &target.spec)?;
        self.client
            .create_service_account()
            .set_name(format!("projects/{project}"))
            .set_account_id(&spec.account_id)
            .set_service_account(
                ServiceAccount::new()
                    .set_display_name(&spec.display_name)
                    .set_description(&spec.description),
            )
            .send()
            .await
            .map_err(|e| classify_gax(&e))?;
        Ok(Started::Done)
    }

    fn update_steps(&self, _target: &Target, diffs: &[FieldDiff]) -> Vec<UpdateStep> {
        UpdateStep::per_call(
            diffs,
            &[(
                "patch",
                &[
                    ServiceAccountField::DisplayName,
                    ServiceAccountField::Description,
                ],
            )],
        )
    }

    async fn update(&self, target: &Target, _step: &UpdateStep) -> CloudResult<Started> {
        let spec: ServiceAccountSpec = from_spec("service account", &target.spec)?;
        self.client
            .patch_service_account()
            .set_service_account(
                ServiceAccount::new()
                    .set_name(&target.id)
                    .set_display_name(&spec.display_name)
                    .set_description(&spec.description),
            )
            .set_update_mask(
                google_cloud_wkt::FieldMask::default().set_paths(["display_name", "description"]),
            )
            .send()
            .await
            .map_err(|e| classify_gax(&e))?;
        Ok(Started::Done)
    }

    async fn delete(&self, target: &Target) -> CloudResult<Started> {
        account_project(&target.id)?;
        self.client
            .delete_service_account()
            .set_name(&target.id)
            .send()
            .await
            .map_err(|e| classify_gax(&e))?;
        Ok(Started::Done)
    }

    async fn poll(&self, operation: &OperationRef) -> CloudResult<OpStatus> {
        Err(refused_operation(operation))
    }

    fn settle(&self, _target: &Target, _observed: &Observed) -> Settle {
        Settle::Ready
    }
}

/// Where a policy lives.
enum PolicyOf<'a> {
    Project(&'a str),
    Bucket(&'a str),
    Repository(&'a str),
}

impl<'a> PolicyOf<'a> {
    fn of(resource: &'a str) -> CloudResult<PolicyOf<'a>> {
        let parts: Vec<&str> = resource.split('/').collect();
        match parts.as_slice() {
            ["projects", p] => Ok(PolicyOf::Project(p)),
            ["projects", "_", "buckets", b] => Ok(PolicyOf::Bucket(b)),
            ["projects", _, "locations", _, "repositories", _] => {
                Ok(PolicyOf::Repository(resource))
            }
            _ => Err(CloudError::new(
                ErrorClass::Invalid,
                format!(
                    "`{resource}` is not a project, bucket or repository whose IAM policy a3ctl edits"
                ),
            )),
        }
    }
}

/// Members of IAM policies (`iam_member`).
pub struct IamMemberAdapter {
    projects: Projects,
    repositories: ArtifactRegistry,
    storage: StorageClient,
    /// The blueprint's project, whose number replaces `PROJECT_NUMBER` in members.
    project: String,
    number: tokio::sync::OnceCell<String>,
}

impl IamMemberAdapter {
    pub async fn new(config: &GcpConfig) -> CloudResult<IamMemberAdapter> {
        let creds = config.credentials()?;
        Ok(IamMemberAdapter {
            projects: super::client!(
                Projects,
                creds.clone(),
                &config.endpoints.resourcemanager,
                "Resource Manager"
            ),
            repositories: super::client!(
                ArtifactRegistry,
                creds,
                &config.endpoints.artifactregistry,
                "Artifact Registry"
            ),
            storage: StorageClient::new(config)?,
            project: config.project.clone(),
            number: tokio::sync::OnceCell::new(),
        })
    }

    /// `spec` with the project's number in place of
    /// [`crate::graph::identity::PROJECT_NUMBER`] (Resource Manager `projects.get`, once).
    async fn resolved(&self, spec: IamMemberSpec) -> CloudResult<IamMemberSpec> {
        let placeholder = format!("projects/{}/", crate::graph::identity::PROJECT_NUMBER);
        if !spec.member.contains(&placeholder) {
            return Ok(spec);
        }
        let number = self
            .number
            .get_or_try_init(|| async {
                let project = self
                    .projects
                    .get_project()
                    .set_name(format!("projects/{}", self.project))
                    .send()
                    .await
                    .map_err(|e| classify_gax(&e))?;
                let number = project.name.trim_start_matches("projects/").to_string();
                Ok::<_, CloudError>(number)
            })
            .await?;
        Ok(IamMemberSpec {
            member: spec
                .member
                .replace(&placeholder, &format!("projects/{number}/")),
            ..spec
        })
    }

    /// The policy of `resource` as JSON (`bindings`, `etag`, `version`); `None` when the resource
    /// does not exist.
    async fn get(&self, resource: &str) -> CloudResult<Option<Value>> {
        let v3 = || GetPolicyOptions::new().set_requested_policy_version(3);
        match PolicyOf::of(resource)? {
            PolicyOf::Project(p) => Ok(found(
                self.projects
                    .get_iam_policy()
                    .set_resource(format!("projects/{p}"))
                    .set_options(v3())
                    .send()
                    .await,
            )?
            .map(|p| to_json(&p))),
            PolicyOf::Repository(r) => Ok(found(
                self.repositories
                    .get_iam_policy()
                    .set_resource(r)
                    .set_options(v3())
                    .send()
                    .await,
            )?
            .map(|p| to_json(&p))),
            PolicyOf::Bucket(b) => {
                let request = self
                    .storage
                    .request(Method::GET, &format!("b/{}/iam", encode(b)))
                    .query(&[("optionsRequestedPolicyVersion", "3")]);
                match self.storage.json(request).await {
                    Ok(policy) => Ok(Some(policy)),
                    Err(e) if e.class == ErrorClass::NotFound => Ok(None),
                    Err(e) => Err(e),
                }
            }
        }
    }

    /// Writes `policy` (as read, with its etag) back to `resource`.
    async fn set(&self, resource: &str, policy: Value) -> CloudResult<()> {
        let typed = || {
            serde_json::from_value::<Policy>(policy.clone()).map_err(|e| {
                CloudError::new(
                    ErrorClass::Other,
                    format!("the IAM policy of {resource} does not decode: {e}"),
                )
            })
        };
        match PolicyOf::of(resource)? {
            PolicyOf::Project(p) => {
                self.projects
                    .set_iam_policy()
                    .set_resource(format!("projects/{p}"))
                    .set_policy(typed()?)
                    .send()
                    .await
                    .map_err(|e| classify_gax(&e))?;
            }
            PolicyOf::Repository(r) => {
                self.repositories
                    .set_iam_policy()
                    .set_resource(r)
                    .set_policy(typed()?)
                    .send()
                    .await
                    .map_err(|e| classify_gax(&e))?;
            }
            PolicyOf::Bucket(b) => {
                let request = self
                    .storage
                    .request(Method::PUT, &format!("b/{}/iam", encode(b)))
                    .json(&policy);
                self.storage.json(request).await?;
            }
        }
        Ok(())
    }

    /// Read-modify-write of `spec`'s policy with `change` (which returns false when there is
    /// nothing to write), again from the read when the etag went stale.
    async fn edit(
        &self,
        spec: &IamMemberSpec,
        change: fn(&mut Value, &str, &str) -> bool,
    ) -> CloudResult<Started> {
        let mut attempt = 0;
        loop {
            attempt += 1;
            let Some(mut policy) = self.get(&spec.resource).await? else {
                return Err(CloudError::new(
                    ErrorClass::NotFound,
                    format!(
                        "{} does not exist: its IAM policy cannot be changed",
                        spec.resource
                    ),
                ));
            };
            if !change(&mut policy, &spec.role, &spec.member) {
                return Ok(Started::Done);
            }
            // Conditions need version 3; a policy without them keeps the version it had.
            let conditional = policy["bindings"]
                .as_array()
                .is_some_and(|b| b.iter().any(|b| !b["condition"].is_null()));
            if conditional {
                policy["version"] = 3.into();
            }
            match self.set(&spec.resource, policy).await {
                Ok(()) => return Ok(Started::Done),
                Err(e) if e.class == ErrorClass::Conflict && attempt < CONFLICT_ATTEMPTS => {
                    tokio::time::sleep(Duration::from_millis(50 << attempt)).await;
                }
                Err(e) => return Err(e),
            }
        }
    }
}

fn member_spec(target: &Target) -> CloudResult<IamMemberSpec> {
    IamMemberSpec::from_id(&target.id).ok_or_else(|| {
        CloudError::new(
            ErrorClass::Invalid,
            format!(
                "`{}` is not an IAM member (RESOURCE#ROLE#MEMBER)",
                target.id
            ),
        )
    })
}

#[async_trait::async_trait]
impl Provider for IamMemberAdapter {
    async fn read(&self, target: &Target) -> CloudResult<Option<Observed>> {
        let spec = member_spec(target)?;
        let actual = self.resolved(spec.clone()).await?;
        let Some(policy) = self.get(&spec.resource).await? else {
            return Ok(None);
        };
        // The spec as declared (with the placeholder), so that it never differs from the plan's.
        Ok(
            iam_member::holds(&policy, &actual.role, &actual.member).then(|| Observed {
                spec: crate::resource::kinds::to_spec(&spec),
                outputs: serde_json::json!({"member": actual.member}),
            }),
        )
    }

    async fn create(&self, target: &Target) -> CloudResult<Started> {
        let spec = self.resolved(member_spec(target)?).await?;
        self.edit(&spec, iam_member::add).await
    }

    fn update_steps(&self, _target: &Target, _diffs: &[FieldDiff]) -> Vec<UpdateStep> {
        // Every field forces a new member.
        vec![]
    }

    async fn update(&self, target: &Target, _step: &UpdateStep) -> CloudResult<Started> {
        Err(CloudError::new(
            ErrorClass::Invalid,
            format!("{} is replaced, never updated", target.addr),
        ))
    }

    async fn delete(&self, target: &Target) -> CloudResult<Started> {
        let spec = self.resolved(member_spec(target)?).await?;
        match self.edit(&spec, iam_member::remove).await {
            // The resource went first: so did its policy.
            Err(e) if e.class == ErrorClass::NotFound => Ok(Started::Done),
            other => other,
        }
    }

    async fn poll(&self, operation: &OperationRef) -> CloudResult<OpStatus> {
        Err(refused_operation(operation))
    }

    fn settle(&self, _target: &Target, _observed: &Observed) -> Settle {
        Settle::Ready
    }

    /// A member is a3ctl's to manage once the blueprint names it: adding it again changes nothing.
    fn owned(&self, _target: &Target, _observed: &Observed) -> bool {
        true
    }

    /// One writer per policy at a time.
    fn serial_lane(&self, target: &Target) -> Option<String> {
        IamMemberSpec::from_id(&target.id).map(|s| format!("iam-policy:{}", s.resource))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_name_their_policy() {
        assert!(matches!(
            PolicyOf::of("projects/p"),
            Ok(PolicyOf::Project("p"))
        ));
        assert!(matches!(
            PolicyOf::of("projects/_/buckets/b"),
            Ok(PolicyOf::Bucket("b"))
        ));
        assert!(matches!(
            PolicyOf::of("projects/p/locations/us-central1/repositories/r"),
            Ok(PolicyOf::Repository(_))
        ));
        assert!(PolicyOf::of("organizations/1").is_err());
        assert_eq!(
            account_project("projects/p/serviceAccounts/a@p.iam.gserviceaccount.com").unwrap(),
            "p"
        );
        assert!(account_project("projects/p").is_err());
    }
}
