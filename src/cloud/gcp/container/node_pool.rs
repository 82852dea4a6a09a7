//! GKE node pools: create, projection onto the spec, updates, and the live node count.
//!
//! Spec → API:
//! - `labels` are the VMs' GCP labels (`config.resourceLabels`); GKE's own `goog-gke-*` labels
//!   are left out of the projection.
//! - `capacity`: `spot` → `config.spot`, `flex-start` → `config.flexStart`, `reservation` →
//!   `config.reservationAffinity` (`SPECIFIC_RESERVATION` on
//!   `projects/P/reservations/R[/reservationBlocks/B]`), `on-demand` → nothing.
//! - `host_maintenance` is not part of the spec: GKE v1 has no `hostMaintenancePolicy` (v1beta1
//!   only) and rejects unknown fields; the blueprint only validates it.
//! - `node_count` is per zone. GKE only returns `initialNodeCount`, which `setSize` does not
//!   change; the live size is counted from the cluster's Kubernetes Nodes (label
//!   `cloud.google.com/gke-nodepool`) when the cluster's endpoint and CA are in the target's context
//!   and the API answers, else `initialNodeCount`.

use super::cluster::sorted;
use super::operations::started;
use super::{ContainerAdapter, absent_or, last_segment, parse_pool, typed};
use crate::cloud::gcp::classify_gax;
use crate::cloud::{CloudError, CloudResult, ErrorClass, Started, Target, UpdateStep};
use crate::resource::FieldDiff;
use crate::resource::Observed;
use base64::Engine;
use google_cloud_container_v1::model::{NodeManagement, NodePool, UpdateNodePoolRequest};
use serde_json::{Value, json};
use std::collections::HashMap;

const RESERVATION_KEY: &str = "compute.googleapis.com/reservation-name";
const SCOPES: &[&str] = &["https://www.googleapis.com/auth/cloud-platform"];

/// The `NodePool` a spec asks for.
pub(super) fn create_body(project: &str, spec: &Value) -> Value {
    let mut config = json!({
        "machineType": spec["machine_type"],
        "diskSizeGb": spec["disk_size_gb"],
        "imageType": spec["image_type"],
        "resourceLabels": spec["labels"],
        "taints": taints(&spec["taints"]),
        "gvnic": {"enabled": spec["gvnic"].as_bool().unwrap_or(false)},
        "oauthScopes": SCOPES,
        "workloadMetadataConfig": {"mode": "GKE_METADATA"},
    });
    if let Some(acc) = spec["accelerator"].as_object() {
        config["accelerators"] = json!([{
            "acceleratorType": acc.get("type"),
            "acceleratorCount": acc.get("count"),
            "gpuDriverInstallationConfig": {"gpuDriverVersion": acc.get("driver")},
        }]);
    }
    let ssds = spec["local_ssd_count"].as_u64().unwrap_or(0);
    if ssds > 0 {
        config["ephemeralStorageLocalSsdConfig"] = json!({"localSsdCount": ssds});
    }
    match spec["capacity"].as_str().unwrap_or("on-demand") {
        "spot" => config["spot"] = json!(true),
        "flex-start" => config["flexStart"] = json!(true),
        "reservation" => {
            config["reservationAffinity"] = json!({
                "consumeReservationType": "SPECIFIC_RESERVATION",
                "key": RESERVATION_KEY,
                "values": [reservation_value(project, &spec["reservation"])],
            });
        }
        _ => {}
    }
    let additional: Vec<Value> = spec["additional_networks"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|n| json!({"network": n["network"], "subnetwork": n["subnetwork"]}))
        .collect();
    let mut pool = json!({
        "name": spec["name"],
        "initialNodeCount": spec["node_count"],
        "locations": spec["locations"],
        "config": config,
        "management": {
            "autoRepair": spec["auto_repair"].as_bool().unwrap_or(true),
            "autoUpgrade": spec["auto_upgrade"].as_bool().unwrap_or(true),
        },
    });
    if !additional.is_empty() {
        pool["networkConfig"] = json!({"additionalNodeNetworkConfigs": additional});
    }
    if let Some(policy) = spec["placement_policy"].as_str() {
        pool["placementPolicy"] = json!({"type": "COMPACT", "policyName": policy});
    }
    pool
}

/// `projects/P/reservations/R[/reservationBlocks/B]`.
fn reservation_value(project: &str, reservation: &Value) -> String {
    let name = reservation["name"].as_str().unwrap_or("");
    let mut value = if name.starts_with("projects/") {
        name.to_string()
    } else {
        format!("projects/{project}/reservations/{name}")
    };
    if let Some(block) = reservation["block"].as_str() {
        value.push_str(&format!("/reservationBlocks/{block}"));
    }
    value
}

/// The spec's `{name, block}` from a reservation value (the full path if in another project).
fn reservation_of(project: &str, value: &str) -> Value {
    let (path, block) = match value.split_once("/reservationBlocks/") {
        Some((p, b)) => (p, Some(b)),
        None => (value, None),
    };
    let name = match path.strip_prefix(&format!("projects/{project}/reservations/")) {
        Some(short) => short.to_string(),
        None => path.to_string(),
    };
    json!({"name": name, "block": block})
}

/// Spec taints `[{key, value, effect}]` (effect `NO_SCHEDULE`…) → API taints.
fn taints(list: &Value) -> Value {
    Value::Array(
        list.as_array()
            .into_iter()
            .flatten()
            .map(|t| json!({"key": t["key"], "value": t["value"], "effect": t["effect"]}))
            .collect(),
    )
}

/// The live pool as a spec plus outputs. `nodes_per_zone` is the counted size, if known.
// `statusMessage` is deprecated in favour of `conditions` but GKE still fills it in.
#[allow(deprecated)]
pub(super) fn project(
    id_project: &str,
    cluster: &str,
    location: &str,
    pool: &NodePool,
    nodes_per_zone: Option<u64>,
) -> Observed {
    let live = serde_json::to_value(pool).unwrap_or(Value::Null);
    let config = pool.config.as_ref();
    let accelerator = config
        .and_then(|c| c.accelerators.first())
        .map(|a| {
            let driver = a
                .gpu_driver_installation_config
                .as_ref()
                .and_then(|d| d.gpu_driver_version.as_ref())
                .and_then(|v| v.name())
                .unwrap_or("GPU_DRIVER_VERSION_UNSPECIFIED");
            json!({"type": a.accelerator_type, "count": a.accelerator_count, "driver": driver})
        })
        .unwrap_or(Value::Null);
    let additional: Vec<Value> = pool
        .network_config
        .iter()
        .flat_map(|n| n.additional_node_network_configs.iter())
        .map(|n| {
            json!({"network": last_segment(&n.network), "subnetwork": last_segment(&n.subnetwork)})
        })
        .collect();
    let placement = pool
        .placement_policy
        .as_ref()
        .filter(|p| p.r#type.name() == Some("COMPACT") && !p.policy_name.is_empty())
        .map(|p| last_segment(&p.policy_name).to_string());
    let affinity = config.and_then(|c| c.reservation_affinity.as_ref());
    let reservation = affinity
        .filter(|a| a.consume_reservation_type.name() == Some("SPECIFIC_RESERVATION"))
        .and_then(|a| a.values.first())
        .map(|v| reservation_of(id_project, v))
        .unwrap_or(Value::Null);
    let capacity = if !reservation.is_null() {
        "reservation"
    } else if config.is_some_and(|c| c.spot) {
        "spot"
    } else if config.is_some_and(|c| c.flex_start == Some(true)) {
        "flex-start"
    } else {
        "on-demand"
    };
    let labels: HashMap<String, String> = config
        .map(|c| {
            c.resource_labels
                .iter()
                .filter(|(k, _)| !k.starts_with("goog-gke-"))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect()
        })
        .unwrap_or_default();
    let taints: Vec<Value> = config
        .into_iter()
        .flat_map(|c| c.taints.iter())
        .map(|t| json!({"key": t.key, "value": t.value, "effect": t.effect.name().unwrap_or("EFFECT_UNSPECIFIED")}))
        .collect();
    let management = pool.management.as_ref();
    let node_count = nodes_per_zone.unwrap_or(pool.initial_node_count.max(0) as u64);
    let spec = json!({
        "cluster": cluster,
        "location": location,
        "name": pool.name,
        "machine_type": config.map(|c| c.machine_type.clone()).unwrap_or_default(),
        "locations": pool.locations,
        "node_count": node_count,
        "accelerator": accelerator,
        "additional_networks": additional,
        "placement_policy": placement,
        "reservation": reservation,
        "capacity": capacity,
        "local_ssd_count": live["config"]["ephemeralStorageLocalSsdConfig"]["localSsdCount"].as_u64().unwrap_or(0),
        "labels": sorted(&labels),
        "taints": taints,
        "gvnic": config.and_then(|c| c.gvnic.as_ref()).is_some_and(|g| g.enabled),
        "image_type": config.map(|c| c.image_type.clone()).unwrap_or_default(),
        "disk_size_gb": config.map(|c| c.disk_size_gb).unwrap_or(0),
        "auto_repair": management.is_some_and(|m| m.auto_repair),
        "auto_upgrade": management.is_some_and(|m| m.auto_upgrade),
    });
    let outputs = json!({
        "status": pool.status.name().unwrap_or("STATUS_UNSPECIFIED"),
        "status_message": pool.status_message,
        "self_link": pool.self_link,
        "version": pool.version,
        "initial_node_count": pool.initial_node_count,
        "instance_group_urls": pool.instance_group_urls,
    });
    Observed { spec, outputs }
}

/// Field groups of node-pool updates: `setSize`, one `nodePools.update`, `setManagement`.
const STEPS: &[(&str, &[&str])] = &[
    ("setSize", &["node_count"]),
    (
        "update",
        &["labels", "taints", "gvnic", "image_type", "disk_size_gb"],
    ),
    ("setManagement", &["auto_repair", "auto_upgrade"]),
];

pub(super) fn update_steps(diffs: &[FieldDiff]) -> Vec<UpdateStep> {
    UpdateStep::per_call(diffs, STEPS)
}

/// The `UpdateNodePoolRequest` for the fields of an `update` step.
fn update_body(id: &str, spec: &Value, fields: &[String]) -> Value {
    let mut request = json!({"name": id});
    for field in fields {
        match field.as_str() {
            "labels" => request["resourceLabels"] = json!({"labels": spec["labels"]}),
            "taints" => request["taints"] = json!({"taints": taints(&spec["taints"])}),
            "gvnic" => request["gvnic"] = json!({"enabled": spec["gvnic"]}),
            "image_type" => request["imageType"] = spec["image_type"].clone(),
            "disk_size_gb" => request["diskSizeGb"] = spec["disk_size_gb"].clone(),
            _ => {}
        }
    }
    request
}

impl ContainerAdapter {
    pub(super) async fn read_pool(&self, target: &Target) -> CloudResult<Option<Observed>> {
        let (path, _) = parse_pool(&target.id)?;
        let Some(pool) = absent_or(
            self.client
                .get_node_pool()
                .set_name(&target.id)
                .send()
                .await,
        )?
        else {
            return Ok(None);
        };
        let counted = if matches!(
            pool.status.name(),
            Some("RUNNING" | "RECONCILING" | "ERROR" | "RUNNING_WITH_ERROR")
        ) {
            self.count_nodes(target, &pool.name)
                .await
                .map(|total| total.div_ceil(pool.locations.len().max(1) as u64))
        } else {
            None
        };
        Ok(Some(project(
            &path.project,
            &path.name,
            &path.location,
            &pool,
            counted,
        )))
    }

    /// Nodes of `pool` registered in the cluster's Kubernetes API, when it can be reached with the
    /// endpoint and CA recorded for the cluster.
    async fn count_nodes(&self, target: &Target, pool: &str) -> Option<u64> {
        let cluster = target
            .context
            .values()
            .find(|o| o["endpoint"].is_string() && o["ca_certificate"].is_string())?;
        let endpoint = cluster["endpoint"].as_str()?;
        let pem = base64::engine::general_purpose::STANDARD
            .decode(cluster["ca_certificate"].as_str()?)
            .ok()?;
        let ca = reqwest::Certificate::from_pem(&pem).ok()?;
        let client = reqwest::Client::builder()
            .add_root_certificate(ca)
            .timeout(std::time::Duration::from_secs(10))
            .build()
            .ok()?;
        let token = self.kube_token().await.ok()?;
        let response = client
            .get(format!("https://{endpoint}/api/v1/nodes"))
            .query(&[(
                "labelSelector",
                format!("cloud.google.com/gke-nodepool={pool}"),
            )])
            .bearer_auth(token)
            .send()
            .await
            .ok()?;
        if !response.status().is_success() {
            return None;
        }
        let list: Value = response.json().await.ok()?;
        Some(list["items"].as_array()?.len() as u64)
    }

    pub(super) async fn create_pool(&self, target: &Target) -> CloudResult<Started> {
        let (path, _) = parse_pool(&target.id)?;
        let pool: NodePool = typed("node pool", create_body(&path.project, &target.spec))?;
        let op = self
            .client
            .create_node_pool()
            .set_parent(path.id())
            .set_node_pool(pool)
            .send()
            .await
            .map_err(|e| classify_gax(&e))?;
        Ok(started(&path, &op))
    }

    pub(super) async fn update_pool(
        &self,
        target: &Target,
        step: &UpdateStep,
    ) -> CloudResult<Started> {
        let (path, _) = parse_pool(&target.id)?;
        let spec = &target.spec;
        let op = match step.name.as_str() {
            "setSize" => {
                let count = spec["node_count"].as_i64().unwrap_or(0) as i32;
                self.client
                    .set_node_pool_size()
                    .set_name(&target.id)
                    .set_node_count(count)
                    .send()
                    .await
            }
            "setManagement" => {
                let management = NodeManagement::new()
                    .set_auto_repair(spec["auto_repair"].as_bool().unwrap_or(true))
                    .set_auto_upgrade(spec["auto_upgrade"].as_bool().unwrap_or(true));
                self.client
                    .set_node_pool_management()
                    .set_name(&target.id)
                    .set_management(management)
                    .send()
                    .await
            }
            "update" => {
                let request: UpdateNodePoolRequest = typed(
                    "node pool update",
                    update_body(&target.id, spec, &step.fields),
                )?;
                self.client
                    .update_node_pool()
                    .with_request(request)
                    .send()
                    .await
            }
            other => {
                return Err(CloudError::new(
                    ErrorClass::Invalid,
                    format!("unknown node pool update `{other}`"),
                ));
            }
        };
        let op = op.map_err(|e| classify_gax(&e))?;
        Ok(started(&path, &op))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reservations_round_trip() {
        let r = json!({"name": "res", "block": "b1"});
        let v = reservation_value("p", &r);
        assert_eq!(v, "projects/p/reservations/res/reservationBlocks/b1");
        assert_eq!(reservation_of("p", &v), r);
        let plain = json!({"name": "res", "block": null});
        assert_eq!(reservation_of("p", &reservation_value("p", &plain)), plain);
        let other = json!({"name": "projects/q/reservations/res", "block": null});
        assert_eq!(reservation_of("p", &reservation_value("p", &other)), other);
    }

    #[test]
    fn updates_group_fields() {
        let diff = |f: &str| FieldDiff {
            field: f.into(),
            before: json!(1),
            after: json!(2),
            forces_replacement: false,
        };
        let steps = update_steps(&[
            diff("labels"),
            diff("node_count"),
            diff("gvnic"),
            diff("auto_repair"),
        ]);
        let names: Vec<&str> = steps.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["setSize", "update", "setManagement"]);
        assert_eq!(steps[1].fields, ["labels", "gvnic"]);
        let body = update_body(
            "x",
            &json!({"labels": {"a": "b"}, "gvnic": true}),
            &steps[1].fields,
        );
        assert_eq!(body["resourceLabels"], json!({"labels": {"a": "b"}}));
        assert_eq!(body["gvnic"], json!({"enabled": true}));
    }
}
