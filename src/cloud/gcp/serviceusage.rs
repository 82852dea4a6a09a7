//! Service Usage through `google-cloud-api-serviceusage-v1`: whether an API is enabled in a project
//! (`services.get`, <https://cloud.google.com/service-usage/docs/reference/rest/v1/services/get>),
//! and, for a blueprint with `enable_services = true`, enabling it (`services.enable`, a
//! long-running operation polled with `operations.get`,
//! <https://cloud.google.com/service-usage/docs/reference/rest/v1/services/enable>). Enabling an
//! enabled API changes nothing: Service Usage answers an operation that is already done.
//!
//! a3ctl never disables an API, as Terraform's `google_project_service` recommends with
//! `disable_on_destroy = false`: other workloads of the project may call it, and disabling one can
//! leave their resources unreachable. Destroying a deployment forgets its services
//! (`lifecycle.keep_on_destroy`); a delete that reaches this adapter anyway is refused.

use super::{GcpConfig, classify_gax};
use crate::cloud::{
    CloudError, CloudResult, ErrorClass, FieldDiff, OpStatus, Provider, Settle, Started, Target,
    UpdateStep,
};
use crate::resource::kinds::service::{ServiceField, ServiceSpec};
use crate::resource::{Api, Observed, OperationRef};
use google_cloud_api_serviceusage_v1::client::ServiceUsage;
use serde_json::json;

/// Services of a project (`service`, `projects/P/services/NAME`). Service Usage answers for any
/// service name (DISABLED when not enabled), so a read is `None` only for a project it does not
/// know.
pub struct ServiceAdapter {
    client: ServiceUsage,
}

impl ServiceAdapter {
    pub async fn new(config: &GcpConfig) -> CloudResult<ServiceAdapter> {
        let client = super::client!(
            ServiceUsage,
            config.credentials()?,
            &config.endpoints.serviceusage,
            "Service Usage"
        );
        Ok(ServiceAdapter { client })
    }

    /// `services.enable`: done at once when the API was enabled already.
    async fn enable(&self, target: &Target) -> CloudResult<Started> {
        let op = self
            .client
            .enable_service()
            .set_name(&target.id)
            .send()
            .await
            .map_err(|e| classify_gax(&e))?;
        if op.done {
            return match super::lro::status("Service Usage", &op, |_| String::new())?.status {
                OpStatus::Failed(e) => Err(e),
                _ => Ok(Started::Done),
            };
        }
        Ok(Started::Operation(OperationRef {
            api: Api::ServiceUsage,
            name: op.name,
        }))
    }
}

#[async_trait::async_trait]
impl Provider for ServiceAdapter {
    async fn read(&self, target: &Target) -> CloudResult<Option<Observed>> {
        match self.client.get_service().set_name(&target.id).send().await {
            Ok(service) => {
                // The crate writes proto enums as numbers: use the state's name.
                let live = json!({
                    "name": service.name,
                    "parent": service.parent,
                    "state": service.state.name().unwrap_or("STATE_UNSPECIFIED"),
                });
                Ok(Some(ServiceSpec::project(&live)?))
            }
            Err(e) => match classify_gax(&e) {
                e if e.class == ErrorClass::NotFound => Ok(None),
                e => Err(e),
            },
        }
    }

    async fn create(&self, target: &Target) -> CloudResult<Started> {
        self.enable(target).await
    }

    fn update_steps(&self, _target: &Target, diffs: &[FieldDiff]) -> Vec<UpdateStep> {
        // Only `enabled` changes in place, and only ever to true.
        UpdateStep::per_call(diffs, &[("enable", &[ServiceField::Enabled])])
    }

    async fn update(&self, target: &Target, _step: &UpdateStep) -> CloudResult<Started> {
        self.enable(target).await
    }

    async fn delete(&self, target: &Target) -> CloudResult<Started> {
        Err(CloudError::new(
            ErrorClass::Invalid,
            format!("{} is not disabled: a3ctl never disables an API", target.addr),
        )
        .with_hint(
            "disable it yourself if nothing in the project needs it: `gcloud services disable NAME --project=PROJECT`",
        ))
    }

    async fn poll(&self, operation: &OperationRef) -> CloudResult<OpStatus> {
        let op = self
            .client
            .get_operation()
            .set_name(&operation.name)
            .send()
            .await
            .map_err(|e| classify_gax(&e))?;
        Ok(super::lro::status("Service Usage", &op, |_| "enabling".into())?.status)
    }

    /// An enabled service is usable; one still disabled is waited for (the enable operation is
    /// done, the change may still be spreading).
    fn settle(&self, _target: &Target, observed: &Observed) -> Settle {
        match observed.spec["enabled"] == true {
            true => Settle::Ready,
            false => Settle::Pending {
                status: "DISABLED".into(),
            },
        }
    }

    /// An API has no owner: enabling one that is enabled already takes it over.
    fn owned(&self, _target: &Target, _observed: &Observed) -> bool {
        true
    }
}
