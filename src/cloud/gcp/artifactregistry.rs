//! Artifact Registry repositories through `google-cloud-artifactregistry-v1`.
//!
//! Create and delete are `google.longrunning` operations: [`OperationRef::name`] is the operation
//! name (`projects/p/locations/l/operations/op`), polled with one `get_operation` call; an
//! operation that is `done` with an `error` becomes [`OpStatus::Failed`]. Labels and description
//! change with a synchronous `update_repository` carrying an update mask.
//!
//! Request bodies are built as the API's JSON and turned into the crate's models with serde;
//! live repositories are read back the same way (`format` as its enum name, `DOCKER`).

use super::{GcpConfig, classify_gax, classify_status};
use crate::cloud::{
    CloudError, CloudResult, ErrorClass, OpStatus, Settle, Started, Target, UpdateStep,
};
use crate::resource::FieldDiff;
use crate::resource::OperationRef;
use crate::resource::kinds::from_spec;
use crate::resource::kinds::repository::{RepositoryField, RepositorySpec};
use crate::resource::{Api, Observed};
use google_cloud_artifactregistry_v1::client::ArtifactRegistry;
use google_cloud_artifactregistry_v1::model::{Repository, UpdateRepositoryRequest};
use google_cloud_gax::error::rpc::Code;
use serde_json::{Value, json};

pub struct ArtifactRegistryAdapter {
    client: ArtifactRegistry,
}

impl ArtifactRegistryAdapter {
    pub async fn new(config: &GcpConfig) -> CloudResult<ArtifactRegistryAdapter> {
        let client = super::client!(
            ArtifactRegistry,
            config.credentials()?,
            &config.endpoints.artifactregistry,
            "Artifact Registry"
        );
        Ok(ArtifactRegistryAdapter { client })
    }
}

/// `projects/p/locations/l/repositories/r` → (`projects/p/locations/l`, `l`, `r`).
fn parts(id: &str) -> CloudResult<(String, String, String)> {
    match id.split('/').collect::<Vec<_>>().as_slice() {
        ["projects", p, "locations", l, "repositories", r] => Ok((
            format!("projects/{p}/locations/{l}"),
            l.to_string(),
            r.to_string(),
        )),
        _ => Err(CloudError::new(
            ErrorClass::Invalid,
            format!("`{id}` is not an Artifact Registry repository name"),
        )),
    }
}

fn to_model<T: serde::de::DeserializeOwned>(body: Value) -> CloudResult<T> {
    serde_json::from_value(body).map_err(|e| {
        CloudError::new(
            ErrorClass::Invalid,
            format!("cannot build the Artifact Registry request: {e}"),
        )
    })
}

/// An operation's error, classified.
fn operation_error(code: i32, message: &str) -> CloudError {
    classify_status(None, Code::from(code).name(), "", message)
}

fn operation_ref(name: String) -> Started {
    Started::Operation(OperationRef {
        api: Api::ArtifactRegistry,
        name,
    })
}

#[async_trait::async_trait]
impl crate::cloud::Provider for ArtifactRegistryAdapter {
    async fn read(&self, target: &Target) -> CloudResult<Option<Observed>> {
        let (_, location, _) = parts(&target.id)?;
        match self
            .client
            .get_repository()
            .set_name(&target.id)
            .send()
            .await
        {
            Ok(repo) => {
                let mut live = serde_json::to_value(&repo).unwrap_or(Value::Null);
                // The crate writes proto enums as numbers: use their names.
                live["format"] = json!(repo.format.name().unwrap_or("FORMAT_UNSPECIFIED"));
                live["mode"] = json!(repo.mode.name().unwrap_or("MODE_UNSPECIFIED"));
                Ok(Some(RepositorySpec::project(&live, &location)?))
            }
            Err(e) => {
                let e = classify_gax(&e);
                if e.class == ErrorClass::NotFound {
                    Ok(None)
                } else {
                    Err(e)
                }
            }
        }
    }

    async fn create(&self, target: &Target) -> CloudResult<Started> {
        let (parent, _, id) = parts(&target.id)?;
        let spec: RepositorySpec = from_spec("repository", &target.spec)?;
        let repository: Repository = to_model(spec.body())?;
        let op = self
            .client
            .create_repository()
            .set_parent(parent)
            .set_repository_id(id)
            .set_repository(repository)
            .send()
            .await
            .map_err(|e| classify_gax(&e))?;
        if op.done {
            return match op.error() {
                Some(status) => Err(operation_error(status.code, &status.message)),
                None => Ok(Started::Done),
            };
        }
        Ok(operation_ref(op.name))
    }

    fn update_steps(&self, _target: &Target, diffs: &[FieldDiff]) -> Vec<UpdateStep> {
        UpdateStep::per_call(
            diffs,
            &[(
                "updateRepository",
                &[RepositoryField::Labels, RepositoryField::Description],
            )],
        )
    }

    async fn update(&self, target: &Target, step: &UpdateStep) -> CloudResult<Started> {
        let spec: RepositorySpec = from_spec("repository", &target.spec)?;
        let (repository, mask) = spec.patch(&target.id, &step.fields_of()?);
        let request: UpdateRepositoryRequest = to_model(json!({
            "repository": repository,
            "updateMask": mask.join(","),
        }))?;
        self.client
            .update_repository()
            .with_request(request)
            .send()
            .await
            .map_err(|e| classify_gax(&e))?;
        Ok(Started::Done)
    }

    async fn delete(&self, target: &Target) -> CloudResult<Started> {
        let op = self
            .client
            .delete_repository()
            .set_name(&target.id)
            .send()
            .await
            .map_err(|e| classify_gax(&e))?;
        if op.done {
            return match op.error() {
                Some(status) => Err(operation_error(status.code, &status.message)),
                None => Ok(Started::Done),
            };
        }
        Ok(operation_ref(op.name))
    }

    async fn poll(&self, operation: &OperationRef) -> CloudResult<OpStatus> {
        let op = self
            .client
            .get_operation()
            .set_name(&operation.name)
            .send()
            .await
            .map_err(|e| classify_gax(&e))?;
        // Artifact Registry's operation metadata is an empty message: nothing to show.
        Ok(super::lro::status("Artifact Registry", &op, |_| "RUNNING".into())?.status)
    }

    fn settle(&self, _target: &Target, _observed: &Observed) -> Settle {
        Settle::Ready
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repository_names_parse_and_project() {
        let (parent, location, id) =
            parts("projects/p/locations/us-central1/repositories/training").unwrap();
        assert_eq!(parent, "projects/p/locations/us-central1");
        assert_eq!(
            (location.as_str(), id.as_str()),
            ("us-central1", "training")
        );
        assert!(parts("projects/p/repositories/x").is_err());
    }
}
