//! GKE's zonal routes: `projects/{projectId}/zones/{zone}/...`, the older form of every cluster,
//! node-pool and operation method that the container v1 discovery document still lists under
//! `projects.zones` (<https://container.googleapis.com/$discovery/rest?version=v1>; the REST
//! reference, <https://cloud.google.com/kubernetes-engine/docs/reference/rest/v1/projects.zones.clusters>).
//! Each is served by the handler of its `projects.locations` twin, with the zone as the location:
//!
//! | zonal method | path under `zones/{zone}` | served as |
//! |---|---|---|
//! | `getServerconfig` | `GET serverconfig` | `locations.getServerConfig` |
//! | `clusters.list`, `create` | `GET`, `POST clusters` | `clusters.list`, `create` |
//! | `clusters.get`, `update`, `delete` | `GET`, `PUT`, `DELETE clusters/{c}` | the same |
//! | `clusters.setMaintenancePolicy`, `setMasterAuth`, `setNetworkPolicy`, `startIpRotation`, `completeIpRotation`, `completeControlPlaneUpgrade`, `fetchClusterUpgradeInfo` | `clusters/{c}:verb` | the same verb |
//! | `clusters.addons`, `legacyAbac`, `locations`, `logging`, `master`, `monitoring`, `resourceLabels` | `POST clusters/{c}/verb` | `:setAddons`, `:setLegacyAbac`, `:setLocations`, `:setLogging`, `:updateMaster`, `:setMonitoring`, `:setResourceLabels` |
//! | `nodePools.list`, `create` | `GET`, `POST clusters/{c}/nodePools` | the same |
//! | `nodePools.get`, `delete` | `GET`, `DELETE clusters/{c}/nodePools/{p}` | the same |
//! | `nodePools.rollback`, `fetchNodePoolUpgradeInfo` | `clusters/{c}/nodePools/{p}:verb` | the same verb |
//! | `nodePools.autoscaling`, `setManagement`, `setSize` | `POST clusters/{c}/nodePools/{p}/verb` | `:setAutoscaling`, `:setManagement`, `:setSize` |
//! | `nodePools.update` | `POST clusters/{c}/nodePools/{p}/update` | `PUT nodePools/{p}` |
//! | `operations.list`, `get`, `cancel` | `GET operations`, `GET operations/{o}`, `POST operations/{o}:cancel` | the same |
//!
//! `zone = "-"` lists every location's clusters and operations, as `locations/-` does ("`-`
//! matches all zones", the `zone` parameter of `projects.zones.clusters.list`). The zonal bodies'
//! deprecated `projectId`, `zone`, `clusterId`, `nodePoolId` and `operationId` fields name what the
//! path already names; the path wins (the discovery document: "This field has been deprecated and
//! replaced by the name field"). A method the location twin does not serve answers as that one
//! does.

use super::{clusters, node_pools, operations, server_config};
use crate::error::{GcpError, GcpResult};
use crate::http::Query;
use crate::shared::Shared;
use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::Uri;
use axum::response::Response;
use axum::routing::{get, post};
use std::sync::Arc;

/// The zonal routes (full paths, with the simulator's `/container` prefix).
pub fn router() -> Router<Arc<Shared>> {
    let base = "/container/v1/projects/{project}/zones/{zone}";
    Router::new()
        .route(
            &format!("{base}/serverconfig"),
            get(server_config::get_server_config),
        )
        .route(
            &format!("{base}/clusters"),
            get(clusters::list).post(clusters::create),
        )
        .route(
            &format!("{base}/clusters/{{cluster}}"),
            get(clusters::get)
                .put(clusters::update)
                .delete(clusters::delete)
                .post(clusters::post_method),
        )
        .route(
            &format!("{base}/clusters/{{cluster}}/{{verb}}"),
            post(cluster_verb),
        )
        .route(
            &format!("{base}/clusters/{{cluster}}/nodePools"),
            get(node_pools::list).post(node_pools::create),
        )
        .route(
            &format!("{base}/clusters/{{cluster}}/nodePools/{{pool}}"),
            get(node_pools::get)
                .delete(node_pools::delete)
                .post(node_pools::post_method),
        )
        .route(
            &format!("{base}/clusters/{{cluster}}/nodePools/{{pool}}/{{verb}}"),
            post(pool_verb),
        )
        .route(&format!("{base}/operations"), get(operations::list))
        .route(
            &format!("{base}/operations/{{operation}}"),
            get(operations::get).post(operations::post_method),
        )
}

/// The location verb of a zonal cluster verb (`addons` → `setAddons`).
fn cluster_method(verb: &str) -> Option<&'static str> {
    Some(match verb {
        "addons" => "setAddons",
        "legacyAbac" => "setLegacyAbac",
        "locations" => "setLocations",
        "logging" => "setLogging",
        "master" => "updateMaster",
        "monitoring" => "setMonitoring",
        "resourceLabels" => "setResourceLabels",
        _ => return None,
    })
}

/// `POST .../zones/{zone}/clusters/{cluster}/{verb}`.
async fn cluster_verb(
    shared: State<Arc<Shared>>,
    Path((project, zone, cluster, verb)): Path<(String, String, String, String)>,
    uri: Uri,
    query: Query,
    body: Bytes,
) -> GcpResult<Response> {
    let method = cluster_method(&verb).ok_or_else(|| unknown_url(&uri))?;
    let segment = format!("{cluster}:{method}");
    clusters::post_method(shared, Path((project, zone, segment)), query, body).await
}

/// `POST .../zones/{zone}/clusters/{cluster}/nodePools/{pool}/{verb}`.
async fn pool_verb(
    shared: State<Arc<Shared>>,
    Path((project, zone, cluster, pool, verb)): Path<(String, String, String, String, String)>,
    uri: Uri,
    query: Query,
    body: Bytes,
) -> GcpResult<Response> {
    let method = match verb.as_str() {
        "update" => {
            return node_pools::update(shared, Path((project, zone, cluster, pool)), query, body)
                .await;
        }
        "autoscaling" => "setAutoscaling",
        "setManagement" => "setManagement",
        "setSize" => "setSize",
        _ => return Err(unknown_url(&uri)),
    };
    let segment = format!("{pool}:{method}");
    node_pools::post_method(shared, Path((project, zone, cluster, segment)), query, body).await
}

/// Google's 404 for a path no method has, as the front door answers any unknown URL.
fn unknown_url(uri: &Uri) -> GcpError {
    GcpError::not_found(format!(
        "The requested URL {} was not found on this server.",
        uri.path()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_zonal_cluster_verb_has_a_location_twin() {
        for verb in [
            "addons",
            "legacyAbac",
            "locations",
            "logging",
            "master",
            "monitoring",
            "resourceLabels",
        ] {
            assert!(cluster_method(verb).is_some(), "{verb}");
        }
        assert!(cluster_method("nodePools").is_none());
    }
}
