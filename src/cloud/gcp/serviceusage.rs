//! Service Usage (`services.get`) through `google-cloud-api-serviceusage-v1`: whether an API is
//! enabled in a project (<https://cloud.google.com/service-usage/docs/reference/rest/v1/services/get>).
//! Read only so far: a3ctl does not enable or disable APIs, it tells the user to.

use super::{GcpConfig, classify_gax};
use crate::cloud::{CloudError, CloudResult, ErrorClass, Provider, ReadOnly};
use crate::resource::kinds::service::ServiceSpec;
use google_cloud_api_serviceusage_v1::client::ServiceUsage;
use google_cloud_gax::retry_policy::NeverRetry;
use serde_json::json;
use std::sync::Arc;

/// Services of a project (`service`, `projects/P/services/NAME`), read only. Service Usage
/// answers for any service name (DISABLED when not enabled), so `None` only for a project it does
/// not know.
pub async fn adapter(config: &GcpConfig) -> CloudResult<Arc<dyn Provider>> {
    let mut builder = ServiceUsage::builder()
        .with_credentials(config.credentials()?)
        // The executor retries.
        .with_retry_policy(NeverRetry);
    if let Some(endpoint) = &config.endpoints.serviceusage {
        builder = builder.with_endpoint(endpoint.clone());
    }
    let client = Arc::new(builder.build().await.map_err(|e| {
        CloudError::new(
            ErrorClass::Other,
            format!("cannot build the Service Usage client: {e}"),
        )
    })?);
    Ok(Arc::new(ReadOnly {
        read: Box::new(move |target| {
            let client = client.clone();
            Box::pin(async move {
                match client.get_service().set_name(&target.id).send().await {
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
            })
        }),
        why: "a3ctl does not enable or disable APIs",
        hint: "enable an API with `gcloud services enable NAME --project=PROJECT`",
    }))
}
