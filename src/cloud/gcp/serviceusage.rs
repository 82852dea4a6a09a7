//! Service Usage (`services.get`) through `google-cloud-api-serviceusage-v1`: whether an API is
//! enabled in a project (<https://cloud.google.com/service-usage/docs/reference/rest/v1/services/get>).
//! Read only so far: a3ctl does not enable or disable APIs, it tells the user to.

use super::{GcpConfig, classify_gax};
use crate::cloud::{
    CloudError, CloudResult, ErrorClass, OpStatus, Provider, Settle, Started, Target, UpdateStep,
};
use crate::resource::kinds::service::ServiceSpec;
use crate::resource::{FieldDiff, Observed, OperationRef};
use google_cloud_api_serviceusage_v1::client::ServiceUsage;
use google_cloud_gax::retry_policy::NeverRetry;
use serde_json::json;

/// Services of a project (`service`), read only.
pub struct ServiceAdapter {
    client: ServiceUsage,
}

impl ServiceAdapter {
    pub async fn new(config: &GcpConfig) -> CloudResult<ServiceAdapter> {
        let mut builder = ServiceUsage::builder()
            .with_credentials(config.credentials()?)
            // The executor retries (re-reading before it retries a mutation).
            .with_retry_policy(NeverRetry);
        if let Some(endpoint) = &config.endpoints.serviceusage {
            builder = builder.with_endpoint(endpoint.clone());
        }
        let client = builder.build().await.map_err(|e| {
            CloudError::new(
                ErrorClass::Other,
                format!("cannot build the Service Usage client: {e}"),
            )
        })?;
        Ok(ServiceAdapter { client })
    }
}

fn read_only(target: &Target) -> CloudError {
    CloudError::new(
        ErrorClass::Invalid,
        format!(
            "{} is read-only: a3ctl does not enable or disable APIs",
            target.addr
        ),
    )
    .with_hint("enable an API with `gcloud services enable NAME --project=PROJECT`")
}

#[async_trait::async_trait]
impl Provider for ServiceAdapter {
    /// `target.id` is `projects/P/services/NAME`. Service Usage answers for any service name
    /// (DISABLED when not enabled), so `None` only for a project it does not know.
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
        Err(read_only(target))
    }
    fn update_steps(&self, _target: &Target, _diffs: &[FieldDiff]) -> Vec<UpdateStep> {
        vec![]
    }
    async fn update(&self, target: &Target, _step: &UpdateStep) -> CloudResult<Started> {
        Err(read_only(target))
    }
    async fn delete(&self, target: &Target) -> CloudResult<Started> {
        Err(read_only(target))
    }
    async fn poll(&self, operation: &OperationRef) -> CloudResult<OpStatus> {
        Err(CloudError::new(
            ErrorClass::Invalid,
            format!(
                "a3ctl starts no Service Usage operations (`{}`)",
                operation.name
            ),
        ))
    }
    fn settle(&self, _target: &Target, _observed: &Observed) -> Settle {
        Settle::Ready
    }
}
