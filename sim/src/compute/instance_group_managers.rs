//! The zonal managed instance groups of GKE node pools, read-only: `instanceGroupManagers.get`,
//! `list` and `aggregatedList`
//! (<https://cloud.google.com/compute/docs/reference/rest/v1/instanceGroupManagers>), with the
//! zonal `instanceGroups.get`/`list` (their `size`) and an empty zonal `autoscalers.list`, which
//! `gcloud compute instance-groups managed list` and `describe` read beside them (GKE's cluster
//! autoscaler is not a Compute `Autoscaler`, so a node pool's group has none).
//!
//! The groups are not stored: each read derives them from the world's node pools
//! ([`crate::instance_groups`]), so they follow a pool through create, resize
//! (`setSize`), upgrade and delete, and vanish with it or with its cluster. A group is v1
//! `InstanceGroupManager` (`compute#instanceGroupManager`: `id`, `creationTimestamp`, `name`,
//! `zone` as a URL, `instanceTemplate`, `versions`, `instanceGroup`, `baseInstanceName`,
//! `fingerprint`, `currentActions`, `status` with `isStable`, `targetSize`, `selfLink`,
//! `listManagedInstancesResults`), per the v1 discovery document (revision 20261106).
//! `listManagedInstances` (`gcloud compute instance-groups managed list-instances`) lists the
//! group's VMs ([`super::instances`]), each `RUNNING` with `currentAction` `NONE` and the group's
//! template as its version; one page holds them all (the group says `PAGELESS`).
//!
//! **Read-only.** A user's change to a GKE-managed group (resize, delete, insert, patch ...) is not
//! simulated. Google's other methods on these paths (`delete`, `insert`, `.../resize`,
//! `.../deleteInstances` ...) answer 501 "not simulated", and a method Google does not have there
//! its 404 ([`crate::discovery`]) — so a caller that tries learns at once that the simulator does
//! not do it, instead of a change that GKE's view of the pool would never show.

use super::regions::stable_id;
use super::{check_zone, link, list_body, not_found};
use crate::error::GcpResult;
use crate::http::{self, Query};
use crate::instance_groups::{self, GroupManager};
use crate::shared::Shared;
use axum::Router;
use axum::extract::{Path, State};
use axum::response::Response;
use axum::routing::{get, post};
use serde_json::{Value, json};
use std::sync::Arc;

const SEGMENT: &str = "instanceGroupManagers";

pub fn router() -> Router<Arc<Shared>> {
    let zone = "/compute/v1/projects/{project}/zones/{zone}";
    Router::new()
        .route(&format!("{zone}/{SEGMENT}"), get(list))
        .route(&format!("{zone}/{SEGMENT}/{{name}}"), get(get_one))
        .route(
            &format!("{zone}/{SEGMENT}/{{name}}/listManagedInstances"),
            post(list_managed_instances),
        )
        .route(
            &format!("/compute/v1/projects/{{project}}/aggregated/{SEGMENT}"),
            get(aggregated),
        )
        .route(&format!("{zone}/instanceGroups"), get(list_groups))
        .route(&format!("{zone}/instanceGroups/{{name}}"), get(get_group))
        .route(&format!("{zone}/autoscalers"), get(list_autoscalers))
}

fn path_of(m: &GroupManager, segment: &str, name: &str) -> String {
    format!("projects/{}/zones/{}/{segment}/{name}", m.project, m.zone)
}

/// The group as `instanceGroupManagers.get` returns it.
pub fn render(m: &GroupManager) -> Value {
    let path = path_of(m, SEGMENT, &m.name);
    let template = link(&format!(
        "projects/{}/global/instanceTemplates/{}",
        m.project, m.base_instance_name
    ));
    let mut body = json!({
        "kind": "compute#instanceGroupManager",
        "id": stable_id(&path),
        "creationTimestamp": m.created,
        "name": m.name,
        "zone": link(&format!("projects/{}/zones/{}", m.project, m.zone)),
        "instanceTemplate": template,
        "versions": [{"instanceTemplate": template}],
        "instanceGroup": link(&path_of(m, "instanceGroups", &m.name)),
        "baseInstanceName": m.base_instance_name,
        "currentActions": {
            "none": m.size.min(m.target_size),
            "creating": m.creating(),
            "creatingWithoutRetries": 0,
            "verifying": 0,
            "recreating": 0,
            "deleting": m.deleting(),
            "abandoning": 0,
            "restarting": 0,
            "refreshing": 0,
            "suspending": 0,
            "resuming": 0,
            "stopping": 0,
            "starting": 0,
        },
        "status": {
            "isStable": m.stable,
            "versionTarget": {"isReached": m.stable},
            "stateful": {"hasStatefulConfig": false, "perInstanceConfigs": {"allEffective": true}},
        },
        "targetSize": m.target_size,
        "selfLink": link(&path),
        "listManagedInstancesResults": "PAGELESS",
    });
    body["fingerprint"] = json!(super::fingerprint(&body));
    body
}

/// The unmanaged view of the group (`instanceGroups.get`): its `size` is the VMs it has.
fn render_group(m: &GroupManager) -> Value {
    let path = path_of(m, "instanceGroups", &m.name);
    let mut body = json!({
        "kind": "compute#instanceGroup",
        "id": stable_id(&path),
        "creationTimestamp": m.created,
        "name": m.name,
        "description": "This instance group is controlled by Instance Group Manager '".to_string()
            + &m.name
            + "'. To modify instances in this group, use the Instance Group Manager API: https://cloud.google.com/compute/docs/reference/latest/instanceGroupManagers",
        "zone": link(&format!("projects/{}/zones/{}", m.project, m.zone)),
        "size": m.size,
        "selfLink": link(&path),
    });
    body["fingerprint"] = json!(super::fingerprint(&body));
    body
}

async fn get_one(
    State(shared): State<Arc<Shared>>,
    Path((project, zone, name)): Path<(String, String, String)>,
) -> GcpResult<Response> {
    check_zone(&zone)?;
    shared.read_world(|world, _| {
        instance_groups::in_zone(world, &project, &zone)
            .iter()
            .find(|m| m.name == name)
            .map(|m| http::json(render(m)))
            .ok_or_else(|| not_found(&format!("projects/{project}/zones/{zone}/{SEGMENT}/{name}")))
    })
}

async fn list(
    State(shared): State<Arc<Shared>>,
    Path((project, zone)): Path<(String, String)>,
    query: Query,
) -> GcpResult<Response> {
    listed(
        &shared,
        &project,
        &zone,
        &query,
        ("compute#instanceGroupManagerList", SEGMENT),
        render,
    )
}

/// One page of a zone's groups, each as `render` shows it, in the collection `(kind, segment)`.
fn listed(
    shared: &Shared,
    project: &str,
    zone: &str,
    query: &Query,
    (kind, segment): (&str, &str),
    render: fn(&GroupManager) -> Value,
) -> GcpResult<Response> {
    check_zone(zone)?;
    let items = shared.read_world(|world, _| {
        instance_groups::in_zone(world, project, zone)
            .iter()
            .map(|m| (m.name.clone(), render(m)))
            .collect()
    });
    super::list_page(
        kind,
        &format!("projects/{project}/zones/{zone}/{segment}"),
        items,
        query,
        crate::paging::cap(shared),
    )
}

async fn aggregated(
    State(shared): State<Arc<Shared>>,
    Path(project): Path<String>,
    query: Query,
) -> GcpResult<Response> {
    shared.read_world(|world, _| {
        super::aggregated_page(
            "compute#instanceGroupManagerAggregatedList",
            SEGMENT,
            &project,
            super::zone_scopes(|zone| {
                instance_groups::in_zone(world, &project, zone)
                    .iter()
                    .map(|m| (m.name.clone(), render(m)))
                    .collect()
            }),
            &query,
            crate::paging::cap(&shared),
        )
    })
}

async fn get_group(
    State(shared): State<Arc<Shared>>,
    Path((project, zone, name)): Path<(String, String, String)>,
) -> GcpResult<Response> {
    check_zone(&zone)?;
    shared.read_world(|world, _| {
        instance_groups::in_zone(world, &project, &zone)
            .iter()
            .find(|m| m.name == name)
            .map(|m| http::json(render_group(m)))
            .ok_or_else(|| {
                not_found(&format!(
                    "projects/{project}/zones/{zone}/instanceGroups/{name}"
                ))
            })
    })
}

async fn list_groups(
    State(shared): State<Arc<Shared>>,
    Path((project, zone)): Path<(String, String)>,
    query: Query,
) -> GcpResult<Response> {
    listed(
        &shared,
        &project,
        &zone,
        &query,
        ("compute#instanceGroupList", "instanceGroups"),
        render_group,
    )
}

/// `listManagedInstances`: the group's VMs.
async fn list_managed_instances(
    State(shared): State<Arc<Shared>>,
    Path((project, zone, name)): Path<(String, String, String)>,
) -> GcpResult<Response> {
    check_zone(&zone)?;
    shared.read_world(|world, _| {
        let group = instance_groups::in_zone(world, &project, &zone)
            .into_iter()
            .find(|m| m.name == name)
            .ok_or_else(|| {
                not_found(&format!("projects/{project}/zones/{zone}/{SEGMENT}/{name}"))
            })?;
        let template = link(&format!(
            "projects/{project}/global/instanceTemplates/{}",
            group.base_instance_name
        ));
        let managed: Vec<Value> = instance_groups::vms_in_zone(world, &project, &zone)
            .iter()
            .filter(|vm| vm.group == name)
            .map(|vm| {
                let path = super::instances::path_of(vm);
                json!({
                    "instance": link(&path),
                    "id": stable_id(&path),
                    "instanceStatus": "RUNNING",
                    "currentAction": "NONE",
                    "version": {"instanceTemplate": template},
                })
            })
            .collect();
        let mut body = json!({});
        if !managed.is_empty() {
            body["managedInstances"] = Value::Array(managed);
        }
        Ok(http::json(body))
    })
}

/// No node pool group has a Compute autoscaler.
async fn list_autoscalers(Path((project, zone)): Path<(String, String)>) -> GcpResult<Response> {
    check_zone(&zone)?;
    Ok(http::json(list_body(
        "compute#autoscalerList",
        &format!("projects/{project}/zones/{zone}/autoscalers"),
        vec![],
    )))
}
