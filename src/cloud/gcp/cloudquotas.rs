//! The on-demand GPU quota of a family in a region (`gpu_family_quota`, id
//! `projects/P/regions/R/gpuFamilies/F`), read only: the limit through the Cloud Quotas API
//! (`quotaInfos.get` of `GPUS-PER-GPU-FAMILY-per-project-region` with
//! `google-cloud-api-cloudquotas-v1`,
//! <https://cloud.google.com/docs/quotas/reference/rest/v1/projects.locations.services.quotaInfos/get>),
//! the usage counted from the project's reservations (Compute `reservations.aggregatedList`) and GKE
//! node pools (`projects.locations.clusters.list` at location `-`), since Google serves this usage
//! only through Cloud Monitoring. [`GpuFamilyQuotaSpec::count`] says what is counted.
//!
//! The on-demand H100, H100 Mega, H200 and B200 quotas exist only there: Compute's legacy
//! `Quota.metric` list (regions.get) has no on-demand row for them, and Compute names the quota
//! `GPUS_PER_GPU_FAMILY` when an insert exceeds it
//! (<https://cloud.google.com/compute/resource-usage#gpu_quota>).

use super::compute::{found, to_json};
use super::{GcpConfig, classify_gax};
use crate::cloud::{CloudError, CloudResult, ErrorClass, Provider, ReadOnly};
use crate::resource::Observed;
use crate::resource::kinds::quotas::{GPU_FAMILY_QUOTA_ID, GpuFamilyQuotaSpec};
use google_cloud_api_cloudquotas_v1::client::CloudQuotas;
use google_cloud_compute_v1::client::Reservations;
use google_cloud_container_v1::client::ClusterManager;
use serde_json::Value;
use std::sync::Arc;

struct Clients {
    quotas: CloudQuotas,
    reservations: Reservations,
    clusters: ClusterManager,
}

/// The reader of `gpu_family_quota`.
pub async fn adapter(config: &GcpConfig) -> CloudResult<Arc<dyn Provider>> {
    let creds = config.credentials()?;
    let clients = Arc::new(Clients {
        quotas: super::client!(
            CloudQuotas,
            creds.clone(),
            &config.endpoints.cloudquotas,
            "Cloud Quotas"
        ),
        reservations: super::client!(
            Reservations,
            creds.clone(),
            &config.endpoints.compute,
            "Compute Engine"
        ),
        clusters: super::client!(ClusterManager, creds, &config.endpoints.container, "GKE"),
    });
    Ok(Arc::new(ReadOnly {
        read: Box::new(move |target| {
            let clients = clients.clone();
            Box::pin(async move { read(&clients, &target.id).await })
        }),
        why: "a3ctl does not change quotas",
        hint: "ask for more quota with `gcloud beta quotas preferences create` or in the console (IAM & Admin > Quotas)",
    }))
}

/// `projects/P/regions/R/gpuFamilies/F` → `(P, R, F)`.
fn parse(id: &str) -> CloudResult<(&str, &str, &str)> {
    match id.split('/').collect::<Vec<_>>().as_slice() {
        ["projects", p, "regions", r, "gpuFamilies", f] => Ok((p, r, f)),
        _ => Err(CloudError::new(
            ErrorClass::Invalid,
            format!("`{id}` is not a GPU family quota (projects/P/regions/R/gpuFamilies/F)"),
        )),
    }
}

async fn read(clients: &Clients, id: &str) -> CloudResult<Option<Observed>> {
    let (project, region, family) = parse(id)?;
    let name = format!(
        "projects/{project}/locations/global/services/compute.googleapis.com/quotaInfos/{GPU_FAMILY_QUOTA_ID}"
    );
    let info = found(clients.quotas.get_quota_info().set_name(name).send().await)?.map(|i| {
        // The crate writes int64 values as strings, as the REST API does.
        to_json(&i)
    });
    let (reservations, clusters) =
        futures_util::future::join(reservations(clients, project), clusters(clients, project))
            .await;
    let spec = GpuFamilyQuotaSpec::count(region, family, info.as_ref(), &reservations?, &clusters?);
    Ok(Some(Observed {
        spec: crate::resource::kinds::to_spec(&spec),
        outputs: Value::Null,
    }))
}

/// Every reservation of the project, in any zone (every page).
async fn reservations(clients: &Clients, project: &str) -> CloudResult<Vec<Value>> {
    let mut out = Vec::new();
    let mut token = String::new();
    loop {
        let page = clients
            .reservations
            .aggregated_list()
            .set_project(project)
            .set_page_token(token.clone())
            .send()
            .await
            .map_err(|e| classify_gax(&e))?;
        for scoped in page.items.values() {
            out.extend(scoped.reservations.iter().map(to_json));
        }
        match page.next_page_token.filter(|t| !t.is_empty()) {
            Some(next) if next != token => token = next,
            _ => return Ok(out),
        }
    }
}

/// Every GKE cluster of the project, in any location, with its node pools.
async fn clusters(clients: &Clients, project: &str) -> CloudResult<Vec<Value>> {
    let answer = clients
        .clusters
        .list_clusters()
        .set_parent(format!("projects/{project}/locations/-"))
        .send()
        .await
        .map_err(|e| classify_gax(&e))?;
    Ok(answer.clusters.iter().map(to_json).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_parse() {
        assert_eq!(
            parse("projects/p/regions/us-central1/gpuFamilies/NVIDIA_H100").unwrap(),
            ("p", "us-central1", "NVIDIA_H100")
        );
        assert!(
            parse("projects/p/regions/us-central1")
                .unwrap_err()
                .message
                .contains("not a GPU family quota")
        );
    }
}
