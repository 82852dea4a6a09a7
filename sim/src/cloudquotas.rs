//! Cloud Quotas API, `projects.locations.services.quotaInfos.list` and `.get` for
//! `compute.googleapis.com`, at `/cloudquotas/v1/...` and, with the same shapes, `/cloudquotas/v1beta/...`
//! (what `gcloud beta quotas info list|describe` calls)
//! (<https://cloud.google.com/docs/quotas/reference/rest/v1/projects.locations.services.quotaInfos>;
//! the google-cloud-api-cloudquotas-v1 crate has the same messages).
//!
//! Every metric of [`crate::quotas::METRICS`] is one `QuotaInfo`: `name`
//! `projects/<project number>/locations/global/services/compute.googleapis.com/quotaInfos/<quotaId>`,
//! `quotaId` (`CPUS-per-project-region`, `GPUS-PER-GPU-FAMILY-per-project-region`,
//! `NETWORKS-per-project` ...), `metric` (`compute.googleapis.com/cpus`), `service`,
//! `isPrecise`, `containerType` `PROJECT`, `dimensions` (`["region"]`, `["region",
//! "gpu_family"]` or none), display names, `metricUnit`, `quotaIncreaseEligibility`,
//! `serviceRequestQuotaUri` and `dimensionsInfos`: the limits in force, most specific first —
//! one entry per region (and family) whose limit differs, then the entry without that dimension,
//! which applies to the other `applicableLocations` (`["global"]` for a project-wide quota).
//! `details.value` is an int64, so a JSON string. The GPU family quota is the one place the
//! on-demand H100, H100 Mega, H200 (A3 Ultra) and B200 (A4) limits are served: `dimensions:
//! {"region": "us-central1", "gpu_family": "NVIDIA_H100_MEGA"}`.
//!
//! A `QuotaInfo` holds no usage: Google serves usage through Cloud Monitoring, which the
//! simulator does not. A client compares a limit with what it counts itself: for the legacy
//! metrics, the `usage` of `Region.quotas`/`Project.quotas`; for the family quota, the GPUs of the
//! project's reservations and of its GKE node pools that consume none, as [`crate::quotas`]
//! counts them.
//!
//! `list` pages with `pageSize` (default and maximum 100) and `pageToken`. Other services have no
//! quota infos here (an empty list; `get` is 404); a location other than `global` is 400 (texts
//! of both errors guessed).
// GUESS(cloudquotas-error-texts): the texts of Cloud Quotas' 404 for a missing quota info and 400 for a location other than `global`

use crate::error::{GcpError, GcpResult};
use crate::geo;
use crate::http::{self, Query};
use crate::quotas::{self, FAMILIES, Key, Metric, Place, QuotaConfig};
use crate::shared::Shared;
use axum::Router;
use axum::extract::{Path, State};
use axum::response::Response;
use axum::routing::get;
use serde_json::{Map, Value, json};
use std::sync::Arc;

/// The service whose quotas are simulated.
pub const COMPUTE: &str = "compute.googleapis.com";

const MAX_PAGE: usize = 100;

/// How `quotaInfos.list` pages ([`crate::paging`]): at most [`MAX_PAGE`], a larger size coerced
/// to it (AIP-158).
const PAGING: crate::paging::Rules = crate::paging::Rules {
    size_param: "pageSize",
    default: MAX_PAGE,
    max: MAX_PAGE,
    too_large: None,
    bad_size: |_| GcpError::invalid("Invalid value at 'page_size' (TYPE_INT32)"),
    bad_token: |token| GcpError::invalid(format!("Invalid page token: {token}")),
};

pub fn router() -> Router<Arc<Shared>> {
    ["v1", "v1beta"]
        .into_iter()
        .fold(Router::new(), |router, version| {
            let base = format!(
                "/cloudquotas/{version}/projects/{{project}}/locations/{{location}}/services/{{service}}/quotaInfos"
            );
            router
                .route(&base, get(list))
                .route(&format!("{base}/{{quota}}"), get(get_one))
        })
}

fn check_location(location: &str) -> GcpResult<()> {
    if location == "global" {
        Ok(())
    } else {
        Err(GcpError::invalid(format!(
            "Invalid location '{location}': the location of quota infos must be 'global'."
        )))
    }
}

/// `details.value`: an int64 as a JSON string.
fn value(limit: f64) -> Value {
    json!(format!("{}", limit.max(0.0).round() as i64))
}

fn dimensions_info(dimensions: Value, limit: f64, locations: Vec<String>) -> Value {
    json!({
        "dimensions": dimensions,
        "details": { "value": value(limit) },
        "applicableLocations": locations,
    })
}

/// The limits in force, most specific first.
fn dimensions_infos(config: &QuotaConfig, project: &str, metric: &Metric) -> Vec<Value> {
    let regions: Vec<&str> = geo::REGIONS.iter().map(|(r, _)| *r).collect();
    match metric.place {
        Place::Global => vec![dimensions_info(
            json!({}),
            config.limit(project, &Key::global(metric.name)),
            vec!["global".into()],
        )],
        Place::Region => {
            let families: Vec<Option<&str>> = if metric.per_family {
                FAMILIES.iter().map(|(_, f, _)| Some(*f)).collect()
            } else {
                vec![None]
            };
            let key = |region: &str, family: Option<&str>| Key {
                metric: metric.name,
                region: Some(region.to_string()),
                family: family.map(str::to_string),
            };
            let mut specific = vec![];
            let mut general = vec![];
            for family in families {
                // The limit where no region-specific override applies.
                let default = config.limit(project, &key("", family));
                let mut rest = vec![];
                for region in &regions {
                    let limit = config.limit(project, &key(region, family));
                    if limit == default {
                        rest.push(region.to_string());
                        continue;
                    }
                    let mut dims = Map::new();
                    dims.insert("region".into(), json!(region));
                    if let Some(f) = family {
                        dims.insert("gpu_family".into(), json!(f));
                    }
                    specific.push(dimensions_info(
                        Value::Object(dims),
                        limit,
                        vec![region.to_string()],
                    ));
                }
                if !rest.is_empty() {
                    let dims = match family {
                        Some(f) => json!({ "gpu_family": f }),
                        None => json!({}),
                    };
                    general.push(dimensions_info(dims, default, rest));
                }
            }
            specific.extend(general);
            specific
        }
    }
}

/// One `QuotaInfo` of `project` (its id, named by `number`).
fn quota_info(config: &QuotaConfig, project: &str, number: &str, metric: &Metric) -> Value {
    let dimensions: Vec<&str> = match (metric.place, metric.per_family) {
        (Place::Global, _) => vec![],
        (Place::Region, false) => vec!["region"],
        (Place::Region, true) => vec!["region", "gpu_family"],
    };
    json!({
        "name": format!(
            "projects/{number}/locations/global/services/{COMPUTE}/quotaInfos/{}",
            metric.quota_id
        ),
        "quotaId": metric.quota_id,
        "metric": metric.metric_name(),
        "service": COMPUTE,
        "isPrecise": true,
        "containerType": "PROJECT",
        "dimensions": dimensions,
        "metricDisplayName": metric.display,
        "quotaDisplayName": metric.quota_display,
        "metricUnit": metric.unit,
        "quotaIncreaseEligibility": { "isEligible": true },
        "dimensionsInfos": dimensions_infos(config, project, metric),
        "serviceRequestQuotaUri": "https://console.cloud.google.com/iam-admin/quotas",
    })
}

async fn list(
    State(shared): State<Arc<Shared>>,
    Path((project, location, service)): Path<(String, String, String)>,
    query: Query,
) -> GcpResult<Response> {
    check_location(&location)?;
    if service != COMPUTE {
        return Ok(http::json(json!({})));
    }
    let config = &shared.config.quotas;
    let (project, number) = project_and_number(&shared, &project);
    let infos: Vec<(String, Value)> = quotas::METRICS
        .iter()
        .enumerate()
        .map(|(at, m)| {
            (
                crate::paging::numbered(at as u64),
                quota_info(config, &project, &number, m),
            )
        })
        .collect();
    let page = crate::paging::page(&PAGING, &query, crate::paging::cap(&shared), infos)?;
    let mut body = json!({ "quotaInfos": page.items });
    if let Some(next) = page.next {
        body["nextPageToken"] = json!(next);
    }
    Ok(http::json(body))
}

async fn get_one(
    State(shared): State<Arc<Shared>>,
    Path((project, location, service, quota)): Path<(String, String, String, String)>,
) -> GcpResult<Response> {
    check_location(&location)?;
    let metric = quotas::metric_by_id(&quota).filter(|_| service == COMPUTE);
    let Some(metric) = metric else {
        return Err(GcpError::not_found(format!(
            "QuotaInfo projects/{project}/locations/{location}/services/{service}/quotaInfos/{quota} not found."
        )));
    };
    let (project, number) = project_and_number(&shared, &project);
    Ok(http::json(quota_info(
        &shared.config.quotas,
        &project,
        &number,
        metric,
    )))
}

/// The project a path names (an id or a number) and its number.
fn project_and_number(shared: &Shared, segment: &str) -> (String, String) {
    shared.read_world(|world, _| {
        let project = crate::serviceusage::resolve(world, segment);
        let number = world.project_number(&project);
        (project, number)
    })
}
