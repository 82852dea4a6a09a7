//! The on-demand GPU quota of a family in a region (`gpu_family_quota`, id
//! `projects/P/regions/R/gpuFamilies/F`), read only: the limit through the Cloud Quotas API
//! (`quotaInfos.get` of `GPUS-PER-GPU-FAMILY-per-project-region` with
//! `google-cloud-api-cloudquotas-v1`,
//! <https://cloud.google.com/docs/quotas/reference/rest/v1/projects.locations.services.quotaInfos/get>),
//! the usage counted from the project's reservations (Compute `reservations.aggregatedList`), GKE
//! node pools (`projects.locations.clusters.list` at location `-`) and the managed instance groups
//! behind them (Compute `instanceGroupManagers.aggregatedList`: a pool's current size is its groups'
//! `targetSize`), with the region's preemptible limit (`regions.get`) for Spot pools, since Google
//! serves this usage only through Cloud Monitoring. [`GpuFamilyQuotaSpec::count`] says what is
//! counted. Everything is read and counted as the client crates' typed models: `to_json` of a GKE
//! model writes its enums as numbers, so no JSON of one is compared with an enum's name.
//!
//! The on-demand H100, H100 Mega, H200 and B200 quotas exist only there: Compute's legacy
//! `Quota.metric` list (regions.get) has no on-demand row for them, and Compute names the quota
//! `GPUS_PER_GPU_FAMILY` when an insert exceeds it
//! (<https://cloud.google.com/compute/resource-usage#gpu_quota>).

use super::compute::found;
use super::{GcpConfig, classify_gax};
use crate::cloud::{CloudError, CloudResult, ErrorClass, Provider, ReadOnly};
use crate::resource::Observed;
use crate::resource::kinds::quotas::{GPU_FAMILY_QUOTA_ID, GpuFamilyInputs, GpuFamilyQuotaSpec};
use google_cloud_api_cloudquotas_v1::client::CloudQuotas;
use google_cloud_compute_v1::client::{InstanceGroupManagers, Regions, Reservations};
use google_cloud_compute_v1::model::{InstanceGroupManager, Reservation};
use google_cloud_container_v1::client::ClusterManager;
use google_cloud_container_v1::model::Cluster;
use google_cloud_gax::paginator::Paginator as _;
use serde_json::Value;
use std::sync::Arc;

struct Clients {
    quotas: CloudQuotas,
    reservations: Reservations,
    groups: InstanceGroupManagers,
    regions: Regions,
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
        groups: super::client!(
            InstanceGroupManagers,
            creds.clone(),
            &config.endpoints.compute,
            "Compute Engine"
        ),
        regions: super::client!(
            Regions,
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
    let info = found(clients.quotas.get_quota_info().set_name(name).send().await)?;
    let (reservations, clusters, groups, preemptible_limit) = futures_util::future::join4(
        reservations(clients, project),
        clusters(clients, project),
        groups(clients, project),
        preemptible_limit(clients, project, region, family),
    )
    .await;
    let inputs = GpuFamilyInputs {
        info,
        reservations: reservations?,
        clusters: clusters?,
        groups: groups?,
        preemptible_limit: preemptible_limit?,
    };
    let spec = GpuFamilyQuotaSpec::count(region, family, &inputs);
    Ok(Some(Observed {
        spec: crate::resource::kinds::to_spec(&spec),
        outputs: Value::Null,
    }))
}

/// Every reservation of the project, in any zone (every page, through the crate's paginator).
async fn reservations(clients: &Clients, project: &str) -> CloudResult<Vec<Reservation>> {
    let mut pages = clients
        .reservations
        .aggregated_list()
        .set_project(project)
        .by_page();
    let mut out = Vec::new();
    while let Some(page) = pages.next().await {
        let page = page.map_err(|e| classify_gax(&e))?;
        out.extend(page.items.into_values().flat_map(|s| s.reservations));
    }
    Ok(out)
}

/// Every zonal managed instance group of the project (every page): those of GKE node pools among
/// them.
async fn groups(clients: &Clients, project: &str) -> CloudResult<Vec<InstanceGroupManager>> {
    let mut pages = clients
        .groups
        .aggregated_list()
        .set_project(project)
        .by_page();
    let mut out = Vec::new();
    while let Some(page) = pages.next().await {
        let page = page.map_err(|e| classify_gax(&e))?;
        out.extend(
            page.items
                .into_values()
                .flat_map(|s| s.instance_group_managers),
        );
    }
    Ok(out)
}

/// The region's `PREEMPTIBLE_<FAMILY>_GPUS` limit, if the region lists the metric.
async fn preemptible_limit(
    clients: &Clients,
    project: &str,
    region: &str,
    family: &str,
) -> CloudResult<Option<f64>> {
    let metric = format!("PREEMPTIBLE_{family}_GPUS");
    let Some(region) = found(
        clients
            .regions
            .get()
            .set_project(project)
            .set_region(region)
            .send()
            .await,
    )?
    else {
        return Ok(None);
    };
    Ok(region
        .quotas
        .iter()
        .find(|q| q.metric.as_ref().and_then(|m| m.name()) == Some(metric.as_str()))
        .and_then(|q| q.limit))
}

/// Every GKE cluster of the project, in any location, with its node pools.
async fn clusters(clients: &Clients, project: &str) -> CloudResult<Vec<Cluster>> {
    let answer = clients
        .clusters
        .list_clusters()
        .set_parent(format!("projects/{project}/locations/-"))
        .send()
        .await
        .map_err(|e| classify_gax(&e))?;
    Ok(answer.clusters)
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
