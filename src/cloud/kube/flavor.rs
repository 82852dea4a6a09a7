//! Changing what a Kueue ResourceFlavor selects, which Kueue does not allow in place.
//!
//! Kueue's CRD makes a flavor with a topology (`topologyName`, every flavor a3ctl makes) keep its
//! `nodeLabels`, `tolerations` and `topologyName` (the whole spec before v0.17), and its defaulting
//! webhook gives every flavor the finalizer `kueue.x-k8s.io/resource-in-use`, which the
//! controller removes only once no ClusterQueue lists the flavor (kubernetes-sigs/kueue v0.17.1,
//! `apis/kueue/v1beta2/resourceflavor_types.go`, `pkg/webhooks/resourceflavor_webhook.go`,
//! `pkg/controller/core/resourceflavor_controller.go`). So the flavor is made anew under its own
//! name, while the queues list a holding flavor for the time it is gone — two update steps:
//!
//! 1. **hold**: apply the holding flavor `<name>-held` (the new spec, and in its annotation
//!    [`HELD_ENTRIES`] each ClusterQueue's entry for the flavor as it was); in every ClusterQueue
//!    that lists `<name>`, replace that entry by one for the holding flavor with a nominal quota of
//!    0 for each resource; delete `<name>` and wait until Kueue lets it go. Meanwhile Kueue admits
//!    nothing more onto the pool's nodes; what it admitted keeps running (the pods' node
//!    selector, from the old labels, still matches: the nodes carry both), and what is queued stays
//!    queued. No ClusterQueue, Workload or CRD is touched otherwise.
//! 2. **recreate**: apply `<name>` with the new spec, put every recorded entry back in place of
//!    the holding flavor's, and delete the holding flavor.
//!
//! Both steps can run again: hold keeps the entries recorded first, and a flavor found missing is
//! created by **recreate** too, which finishes a move a run left half done. A ClusterQueue that a
//! change listed in the meantime is left as it is.

use super::Desired;
use super::errors::classify;
use crate::cloud::{CloudError, CloudResult, ErrorClass, UpdateStep};
use crate::resource::FieldDiff;
use kube::api::{Api as KubeApi, DeleteParams, DynamicObject, Patch, PatchParams};
use serde_json::{Map, Value, json};

/// Kueue's API group.
const GROUP: &str = "kueue.x-k8s.io";
/// The suffix of the holding flavor's name.
pub const HOLD_SUFFIX: &str = "-held";
/// The holding flavor's annotation: JSON, ClusterQueue name → its entry for the held flavor.
pub const HELD_ENTRIES: &str = "a3ctl.dev/held-entries";

/// Whether `desired` (a `k8s` spec's object) is a Kueue ResourceFlavor.
pub fn is_flavor(object: &Value) -> bool {
    object["kind"] == "ResourceFlavor"
        && object["apiVersion"]
            .as_str()
            .is_some_and(|v| v.starts_with(&format!("{GROUP}/")))
}

/// The update steps of a flavor whose spec changes while it has a topology (Kueue refuses it in
/// place), or `None` when a plain apply does.
pub fn move_steps(object: &Value, diffs: &[FieldDiff]) -> Option<Vec<UpdateStep>> {
    if !is_flavor(object) {
        return None;
    }
    let in_spec = |d: &&FieldDiff| d.field.starts_with("object.spec.") || d.field == "object.spec";
    // The live flavor's topology: the diff's old value where it changes, else the desired one.
    let had_topology = match diffs.iter().find(|d| d.field == "object.spec.topologyName") {
        Some(d) => !d.before.is_null(),
        None => !object["spec"]["topologyName"].is_null(),
    };
    if !had_topology || !diffs.iter().any(|d| in_spec(&d)) {
        return None;
    }
    Some(vec![
        UpdateStep {
            name: "hold".into(),
            fields: vec![],
            reaches: None,
        },
        UpdateStep {
            name: "recreate".into(),
            fields: diffs.iter().map(|d| d.field.clone()).collect(),
            reaches: None,
        },
    ])
}

/// The flavors and the ClusterQueues of a cluster, at the flavor's API version.
pub struct Apis {
    pub flavors: KubeApi<DynamicObject>,
    pub queues: KubeApi<DynamicObject>,
    /// Objects per page of a list ([`super::paging`]).
    pub page_size: u32,
}

fn encode(object: &DynamicObject) -> CloudResult<Value> {
    serde_json::to_value(object)
        .map_err(|e| CloudError::new(ErrorClass::Other, format!("cannot encode an object: {e}")))
}

/// Every ClusterQueue, as JSON, page by page.
async fn queues(apis: &Apis) -> CloudResult<Vec<Value>> {
    let items = super::paging::list_all(&apis.queues, apis.page_size)
        .await
        .map_err(|e| classify(&e))?;
    items.iter().map(encode).collect()
}

/// `queue`'s resource groups with the entry of flavor `from` replaced by `to(entry)`, or `None`
/// when the queue does not list `from`.
fn swapped(queue: &Value, from: &str, to: impl Fn(&Value) -> Value) -> Option<(Value, Value)> {
    let mut groups = queue["spec"]["resourceGroups"].clone();
    let mut found = None;
    for group in groups.as_array_mut().into_iter().flatten() {
        for entry in group["flavors"].as_array_mut().into_iter().flatten() {
            if entry["name"] == from {
                found = Some(entry.clone());
                *entry = to(entry);
            }
        }
    }
    found.map(|entry| (groups, entry))
}

/// Writes `groups` as `queue`'s resource groups, if the queue is still as it was read.
async fn write_groups(apis: &Apis, queue: &Value, groups: Value) -> CloudResult<()> {
    let name = queue["metadata"]["name"].as_str().unwrap_or_default();
    let patch = json!({
        "metadata": {"resourceVersion": queue["metadata"]["resourceVersion"]},
        "spec": {"resourceGroups": groups},
    });
    apis.queues
        .patch(
            name,
            &PatchParams {
                field_manager: Some(super::FIELD_MANAGER.into()),
                ..PatchParams::default()
            },
            &Patch::Merge(&patch),
        )
        .await
        .map_err(|e| classify(&e))?;
    Ok(())
}

async fn delete(api: &KubeApi<DynamicObject>, name: &str) -> CloudResult<()> {
    match api.delete(name, &DeleteParams::default()).await {
        Ok(_) => Ok(()),
        Err(e) => match classify(&e) {
            gone if gone.class == ErrorClass::NotFound => Ok(()),
            other => Err(other),
        },
    }
}

/// Step 1 (see the module doc); returns once the flavor's delete is sent.
pub async fn hold(apis: &Apis, desired: &Desired) -> CloudResult<()> {
    let name = desired.name.as_str();
    let held = format!("{name}{HOLD_SUFFIX}");
    // Entries recorded by an earlier try win: by now those queues list the holding flavor.
    let mut entries: Map<String, Value> = match apis
        .flavors
        .get_opt(&held)
        .await
        .map_err(|e| classify(&e))?
    {
        Some(existing) => encode(&existing)?["metadata"]["annotations"][HELD_ENTRIES]
            .as_str()
            .and_then(|text| serde_json::from_str(text).ok())
            .unwrap_or_default(),
        None => Map::new(),
    };
    let queues = queues(apis).await?;
    let mut moves = vec![];
    for queue in &queues {
        let zero = |entry: &Value| {
            let mut out = entry.clone();
            out["name"] = json!(held);
            for resource in out["resources"].as_array_mut().into_iter().flatten() {
                resource["nominalQuota"] = json!(0);
                if let Some(map) = resource.as_object_mut() {
                    map.remove("borrowingLimit");
                    map.remove("lendingLimit");
                }
            }
            out
        };
        if let Some((groups, entry)) = swapped(queue, name, zero) {
            let queue_name = queue["metadata"]["name"].as_str().unwrap_or_default();
            entries.entry(queue_name.to_string()).or_insert(entry);
            moves.push((queue, groups));
        }
    }
    let mut holding = desired.object.clone();
    holding["metadata"]["name"] = json!(held);
    holding["metadata"]["annotations"][HELD_ENTRIES] =
        json!(serde_json::to_string(&entries).unwrap_or_default());
    apis.flavors
        .patch(
            &held,
            &PatchParams::apply(super::FIELD_MANAGER).force(),
            &Patch::Apply(&holding),
        )
        .await
        .map_err(|e| classify(&e))?;
    for (queue, groups) in moves {
        write_groups(apis, queue, groups).await?;
    }
    delete(&apis.flavors, name).await
}

/// Step 2 (see the module doc), after `<name>` was applied with its new spec.
pub async fn restore(apis: &Apis, desired: &Desired) -> CloudResult<()> {
    let name = desired.name.as_str();
    let held = format!("{name}{HOLD_SUFFIX}");
    let Some(holding) = apis
        .flavors
        .get_opt(&held)
        .await
        .map_err(|e| classify(&e))?
    else {
        return Ok(());
    };
    let entries: Map<String, Value> = encode(&holding)?["metadata"]["annotations"][HELD_ENTRIES]
        .as_str()
        .and_then(|text| serde_json::from_str(text).ok())
        .unwrap_or_default();
    for queue in queues(apis).await? {
        let queue_name = queue["metadata"]["name"].as_str().unwrap_or_default();
        let Some(entry) = entries.get(queue_name) else {
            continue;
        };
        if let Some((groups, _)) = swapped(&queue, &held, |_| entry.clone()) {
            write_groups(apis, &queue, groups).await?;
        }
    }
    delete(&apis.flavors, &held).await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flavor(labels: Value) -> Value {
        json!({"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ResourceFlavor",
            "metadata": {"name": "a3mega"},
            "spec": {"nodeLabels": labels, "topologyName": "gke-default"}})
    }

    fn diff(field: &str, before: Value, after: Value) -> FieldDiff {
        FieldDiff {
            field: field.into(),
            before,
            after,
            forces_replacement: false,
        }
    }

    #[test]
    fn a_topology_flavor_whose_labels_change_is_moved_and_anything_else_applied() {
        let desired = flavor(json!({"a3ctl.dev/pool": "a3mega"}));
        let labels = [
            diff(
                "object.spec.nodeLabels[\"a3ctl.dev/pool\"]",
                Value::Null,
                json!("a3mega"),
            ),
            diff(
                "object.spec.nodeLabels[\"cloud.google.com/gke-nodepool\"]",
                json!("a3mega"),
                Value::Null,
            ),
        ];
        let steps = move_steps(&desired, &labels).unwrap();
        let names: Vec<&str> = steps.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["hold", "recreate"]);
        assert!(steps[0].fields.is_empty());
        assert_eq!(steps[1].fields.len(), 2);
        // Only metadata changes, or a flavor without a topology: applied.
        let metadata = [diff("object.metadata.labels.team", Value::Null, json!("a"))];
        assert_eq!(move_steps(&desired, &metadata), None);
        let mut plain = desired.clone();
        plain["spec"]["topologyName"] = Value::Null;
        assert_eq!(move_steps(&plain, &labels), None);
        // A topology being added to a flavor that had none is applied too.
        let added = [diff(
            "object.spec.topologyName",
            Value::Null,
            json!("gke-default"),
        )];
        assert_eq!(move_steps(&desired, &added), None);
        // Not a flavor.
        let mut queue = desired.clone();
        queue["kind"] = json!("ClusterQueue");
        assert_eq!(move_steps(&queue, &labels), None);
    }

    #[test]
    fn swapping_replaces_the_entry_in_place() {
        let queue = json!({"spec": {"resourceGroups": [{"coveredResources": ["nvidia.com/gpu"],
            "flavors": [{"name": "other", "resources": [{"name": "nvidia.com/gpu", "nominalQuota": 8}]},
                        {"name": "a3mega", "resources": [{"name": "nvidia.com/gpu", "nominalQuota": 256}]}]}]}});
        let (groups, entry) =
            swapped(&queue, "a3mega", |_| json!({"name": "a3mega-held"})).unwrap();
        assert_eq!(entry["resources"][0]["nominalQuota"], 256);
        assert_eq!(groups[0]["flavors"][0]["name"], "other");
        assert_eq!(groups[0]["flavors"][1], json!({"name": "a3mega-held"}));
        assert!(swapped(&queue, "missing", |e| e.clone()).is_none());
    }
}
