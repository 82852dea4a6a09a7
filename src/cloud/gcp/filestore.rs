//! Filestore instances (`CloudFilestoreManager` over REST, AIP-151 long-running operations).
//!
//! Spec → API: `capacity_gb` and `share` are `fileShares[0]`, `network` is
//! `networks[{network: <name>, modes: [MODE_IPV4]}]`, `tier` the enum name, `labels` the labels.
//! Updates are PATCHes with an update mask (`file_shares` for the capacity, `labels`,
//! `deletion_protection_enabled,deletion_protection_reason` for the blueprint's deletion protection). Every
//! mutation returns a `google.longrunning.Operation` whose full name is the [`OperationRef`]; it is
//! polled with the same client's `get_operation`.

use super::container::{absent_or, typed};
use super::{GcpConfig, classify_gax, classify_status};
use crate::cloud::{
    CloudError, CloudResult, ErrorClass, OpStatus, Settle, Started, Target, UpdateStep,
};
use crate::resource::FieldDiff;
use crate::resource::OperationRef;
use crate::resource::kinds::filestore::{FilestoreField, FilestoreSpec};
use crate::resource::kinds::from_spec;
use crate::resource::{Api, Observed};
use google_cloud_filestore_v1::client::CloudFilestoreManager;
use google_cloud_filestore_v1::model::{Instance, UpdateInstanceRequest};
use serde_json::json;

pub struct FilestoreAdapter {
    client: CloudFilestoreManager,
}

impl FilestoreAdapter {
    pub async fn new(config: &GcpConfig) -> CloudResult<FilestoreAdapter> {
        let client = super::client!(
            CloudFilestoreManager,
            config.credentials()?,
            &config.endpoints.filestore,
            "Filestore"
        );
        Ok(FilestoreAdapter { client })
    }
}

/// `projects/P/locations/L/instances/I` → (`projects/P/locations/L`, `I`).
fn split(id: &str) -> CloudResult<(&str, &str)> {
    match id.rsplit_once("/instances/") {
        Some((parent, name))
            if parent.starts_with("projects/")
                && parent.contains("/locations/")
                && !name.is_empty() =>
        {
            Ok((parent, name))
        }
        _ => Err(CloudError::new(
            ErrorClass::Invalid,
            format!("`{id}` is not a Filestore instance name (projects/P/locations/L/instances/I)"),
        )),
    }
}

/// The live instance as a spec plus outputs (`location` from the instance's own id).
fn project(target: &Target, instance: &Instance) -> CloudResult<Observed> {
    let (parent, _) = split(&target.id)?;
    let location = parent.rsplit('/').next().unwrap_or(parent);
    let mut live = serde_json::to_value(instance).map_err(|e| {
        CloudError::new(
            ErrorClass::Other,
            format!("cannot read Filestore instance `{}`: {e}", target.id),
        )
    })?;
    // The client's enums serialise as proto numbers; the spec speaks their names.
    live["tier"] = json!(instance.tier.name().unwrap_or("TIER_UNSPECIFIED"));
    live["state"] = json!(instance.state.name().unwrap_or("STATE_UNSPECIFIED"));
    Ok(FilestoreSpec::project(&live, location)?)
}

/// [`classify_gax`], except that Filestore's storage quota error (429 `rateLimitExceeded`, "Quota
/// limit for BASIC_SSD storage (GB) per region has been exceeded") is a quota, not a rate limit.
fn classify(error: &google_cloud_gax::error::Error) -> CloudError {
    let e = classify_gax(error);
    let lower = e.message.to_ascii_lowercase();
    if e.class == ErrorClass::Transient
        && lower.contains("quota limit")
        && lower.contains("storage")
        && !lower.contains("per minute")
    {
        return classify_status(e.http_status, &e.status, "quotaExceeded", &e.message);
    }
    e
}

fn started(name: String) -> Started {
    Started::Operation(OperationRef {
        api: Api::Filestore,
        name,
    })
}

/// `(step, update mask, fields)`.
const STEPS: &[(&str, &str, FilestoreField)] = &[
    (
        "patch(file_shares)",
        "file_shares",
        FilestoreField::CapacityGb,
    ),
    ("patch(labels)", "labels", FilestoreField::Labels),
    (
        "patch(deletion_protection_enabled)",
        "deletion_protection_enabled,deletion_protection_reason",
        FilestoreField::DeletionProtection,
    ),
];

#[async_trait::async_trait]
impl crate::cloud::Provider for FilestoreAdapter {
    async fn read(&self, target: &Target) -> CloudResult<Option<Observed>> {
        split(&target.id)?;
        let instance = absent_or(self.client.get_instance().set_name(&target.id).send().await)?;
        instance.map(|i| project(target, &i)).transpose()
    }

    async fn create(&self, target: &Target) -> CloudResult<Started> {
        let (parent, name) = split(&target.id)?;
        let spec: FilestoreSpec = from_spec("Filestore instance", &target.spec)?;
        let instance: Instance = typed("Filestore instance", spec.body())?;
        let op = self
            .client
            .create_instance()
            .set_parent(parent)
            .set_instance_id(name)
            .set_instance(instance)
            .send()
            .await
            .map_err(|e| classify(&e))?;
        Ok(started(op.name))
    }

    fn update_steps(&self, _target: &Target, diffs: &[FieldDiff]) -> Vec<UpdateStep> {
        STEPS
            .iter()
            .filter(|(_, _, field)| {
                diffs
                    .iter()
                    .any(|d| !d.forces_replacement && d.field == field.as_str())
            })
            .map(|(name, _, field)| UpdateStep::of(name, &[*field]))
            .collect()
    }

    async fn update(&self, target: &Target, step: &UpdateStep) -> CloudResult<Started> {
        let Some((_, mask, field)) = STEPS.iter().find(|(name, _, _)| *name == step.name) else {
            return Err(CloudError::new(
                ErrorClass::Invalid,
                format!("unknown Filestore update `{}`", step.name),
            ));
        };
        let spec: FilestoreSpec = from_spec("Filestore instance", &target.spec)?;
        let mut instance = json!({"name": target.id});
        match field {
            FilestoreField::CapacityGb => instance["fileShares"] = json!([spec.share_body()]),
            FilestoreField::Labels => instance["labels"] = json!(spec.labels),
            FilestoreField::DeletionProtection => {
                instance["deletionProtectionEnabled"] = json!(spec.deletion_protection);
                instance["deletionProtectionReason"] = json!(spec.protection_reason());
            }
            // Replaced, never updated: no step names them.
            FilestoreField::Name
            | FilestoreField::Location
            | FilestoreField::Tier
            | FilestoreField::Share
            | FilestoreField::Network => {
                return Err(crate::cloud::gcp::compute::no_update(target, step));
            }
        }
        let request: UpdateInstanceRequest = typed(
            "Filestore update",
            json!({"updateMask": mask, "instance": instance}),
        )?;
        let op = self
            .client
            .update_instance()
            .with_request(request)
            .send()
            .await
            .map_err(|e| classify(&e))?;
        Ok(started(op.name))
    }

    async fn delete(&self, target: &Target) -> CloudResult<Started> {
        split(&target.id)?;
        let op = self
            .client
            .delete_instance()
            .set_name(&target.id)
            .send()
            .await
            .map_err(|e| classify(&e))?;
        Ok(started(op.name))
    }

    async fn poll(&self, operation: &OperationRef) -> CloudResult<OpStatus> {
        Ok(self.poll_timed(operation).await?.status)
    }

    async fn poll_timed(&self, operation: &OperationRef) -> CloudResult<crate::cloud::Polled> {
        let op = self
            .client
            .get_operation()
            .set_name(&operation.name)
            .send()
            .await
            .map_err(|e| classify_gax(&e))?;
        super::lro::status("Filestore", &op, |metadata| {
            let verb = metadata["verb"].as_str().unwrap_or("operation");
            match metadata["statusDetail"].as_str().unwrap_or("") {
                "" => format!("{verb} running"),
                detail => format!("{verb} running: {detail}"),
            }
        })
    }

    fn settle(&self, _target: &Target, observed: &Observed) -> Settle {
        match observed.outputs["state"].as_str().unwrap_or("") {
            "READY" => Settle::Ready,
            "ERROR" | "SUSPENDED" => Settle::Failed {
                message: observed.outputs["status_message"]
                    .as_str()
                    .filter(|m| !m.is_empty())
                    .unwrap_or("the instance is in ERROR")
                    .to_string(),
            },
            "DELETING" => Settle::Deleting {
                status: "DELETING".into(),
            },
            other => Settle::Pending {
                status: other.to_string(),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    #[test]
    fn ids_split() {
        assert_eq!(
            split("projects/p/locations/us-central1-a/instances/fs").unwrap(),
            ("projects/p/locations/us-central1-a", "fs")
        );
        assert!(split("projects/p/instances/fs").is_err());
    }

    #[test]
    fn an_instance_the_client_reads_projects_with_enum_names_and_a_bad_one_says_what_to_do() {
        let target = Target {
            addr: "filestore.shared".parse().unwrap(),
            id: "projects/p/locations/us-central1-a/instances/fs".into(),
            spec: Value::Null,
            outputs: Value::Null,
            context: Default::default(),
            lifecycle: Default::default(),
        };
        let instance: Instance = typed(
            "Filestore instance",
            json!({
                "name": "projects/p/locations/us-central1-a/instances/fs",
                "tier": "BASIC_SSD", "state": "READY",
                "fileShares": [{"name": "share", "capacityGb": "2560"}],
                "networks": [{"network": "net", "ipAddresses": ["10.0.0.2"]}],
            }),
        )
        .unwrap();
        let observed = project(&target, &instance).unwrap();
        assert_eq!(observed.spec["tier"], "BASIC_SSD");
        assert_eq!(observed.spec["capacity_gb"], 2560);
        assert_eq!(observed.spec["location"], "us-central1-a");
        assert_eq!(observed.outputs["state"], "READY");
        assert_eq!(observed.outputs["ip_address"], "10.0.0.2");

        let shareless: Instance = typed(
            "Filestore instance",
            json!({"name": "projects/p/locations/us-central1-a/instances/fs", "networks": [{"network": "net"}]}),
        )
        .unwrap();
        let e = project(&target, &shareless).unwrap_err();
        assert!(e.message.contains("has no `fileShares`"), "{e:?}");
        assert!(e.hint.unwrap().contains("gcloud"));
    }
}
