//! `a3ctl output`: the deployment's outputs, once state records an apply. No cloud call: the
//! state is read (a file, or an object of the GCS state bucket) and the rest comes from the
//! blueprint, as `a3ctl apply` prints them at its end.

use super::ExitStatus;
use super::session::{Connection, check_belongs, load_failure};
use crate::blueprint;
use crate::cli::{Global, OutputArgs};
use crate::graph::outputs::workload_outputs;
use crate::ui::Printer;
use crate::ui::diagnostics::Failure;
use serde_json::{Map, Value, json};

pub async fn run(
    global: &Global,
    printer: &Printer,
    args: OutputArgs,
) -> Result<ExitStatus, Failure> {
    let bp = blueprint::load(&args.blueprint).map_err(|e| Failure::blueprint(printer, &e))?;
    let connection = Connection::open(global, &bp, &args.blueprint, false).await?;
    let store = &connection.store;
    let state = store.load().map_err(|e| load_failure(store, &e))?;
    if let Some(state) = &state {
        check_belongs(state, &bp, store)?;
    }
    let Some(state) = state.filter(|s| !s.resources.is_empty()) else {
        return Err(Failure::new(format!(
            "No outputs: state `{store}` records no apply of `{}` yet",
            bp.name
        ))
        .hint("run apply first: `a3ctl apply`"));
    };
    let outputs = outputs(&bp, &state);
    let Some(name) = &args.name else {
        if args.json {
            printer.out(&format!("{}\n", Value::Object(outputs)));
        } else {
            let mut out = String::new();
            for (name, value) in &outputs {
                out.push_str(&format!("{name} = {value}\n"));
            }
            printer.out(&out);
        }
        return Ok(ExitStatus::Success);
    };
    let Some(value) = outputs.get(name.as_str()) else {
        let names: Vec<&str> = outputs.keys().map(String::as_str).collect();
        let mut failure = Failure::new(format!(
            "No output `{name}`; the outputs are: {}",
            names.join(", ")
        ));
        if let Some(close) = names
            .iter()
            .map(|n| (strsim::levenshtein(n, name), n))
            .min_by_key(|(d, _)| *d)
            .filter(|(d, _)| *d <= 3)
        {
            failure = failure.hint(format!("did you mean `{}`?", close.1));
        }
        return Err(failure);
    };
    printer.out(&if args.json {
        format!("{value}\n")
    } else {
        raw(value)
    });
    Ok(ExitStatus::Success)
}

/// The outputs by name, in the order they are printed.
fn outputs(bp: &crate::blueprint::Blueprint, state: &crate::state::State) -> Map<String, Value> {
    let workload = workload_outputs(bp);
    let mut out = Map::new();
    out.insert("cluster_name".into(), json!(bp.name));
    if let Some(endpoint) = state
        .resources
        .get(&crate::graph::build::addr::cluster())
        .and_then(|r| r.outputs["endpoint"].as_str())
        .filter(|e| !e.is_empty())
    {
        out.insert("cluster_endpoint".into(), json!(endpoint));
    }
    // In managed mode a pod attaches no network by annotation: it claims the RDMA NICs.
    if !workload.pod_annotations.is_empty() {
        out.insert("gpu_networks".into(), json!(workload.gpu_networks));
        out.insert(
            "pod_annotations".into(),
            Value::Object(
                workload
                    .pod_annotations
                    .iter()
                    .map(|(k, v)| (k.clone(), json!(v)))
                    .collect(),
            ),
        );
    }
    if let Some(claim) = &workload.rdma_claim {
        out.insert("pod_resource_claims".into(), claim.pod_resource_claims());
        out.insert("container_resource_claims".into(), claim.container_claims());
        out.insert("resource_claim_namespace".into(), json!(claim.namespace));
    }
    if let Some(gib) = &workload.nccl_plugin {
        out.insert("nccl_plugin_volume".into(), gib.volume());
        out.insert("nccl_plugin_volume_mount".into(), gib.volume_mount());
        out.insert("nccl_env_script".into(), json!(gib.env_script));
    }
    if let Some((queue, namespace)) = &workload.queue {
        out.insert("kueue_queue".into(), json!(queue));
        out.insert("kueue_namespace".into(), json!(namespace));
    }
    out.insert("volume_claims".into(), json!(workload.volume_claims));
    out
}

/// A value for scripts: a string as it is, a list of strings one per line, anything else JSON.
fn raw(value: &Value) -> String {
    match value {
        Value::String(s) => format!("{s}\n"),
        Value::Array(items) if items.iter().all(Value::is_string) => items
            .iter()
            .filter_map(Value::as_str)
            .map(|s| format!("{s}\n"))
            .collect(),
        other => format!("{other}\n"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::blueprint::testing::{rdma, shipped};
    use crate::blueprint::{MachineFamily, NetworkMode};

    /// A state with no record: the outputs that come from the blueprint alone.
    fn empty() -> crate::state::State {
        crate::state::State::new("test", "lineage".into())
    }

    fn names(bp: &crate::blueprint::Blueprint) -> Vec<String> {
        outputs(bp, &empty()).keys().cloned().collect()
    }

    #[test]
    fn each_family_and_mode_has_its_own_outputs() {
        assert_eq!(
            names(&shipped("a3-high.toml")),
            [
                "cluster_name",
                "gpu_networks",
                "pod_annotations",
                "kueue_queue",
                "kueue_namespace",
                "volume_claims"
            ]
        );
        let explicit = rdma(MachineFamily::A3Ultra, NetworkMode::Explicit);
        assert_eq!(
            names(&explicit),
            [
                "cluster_name",
                "gpu_networks",
                "pod_annotations",
                "nccl_plugin_volume",
                "nccl_plugin_volume_mount",
                "nccl_env_script",
                "kueue_queue",
                "kueue_namespace",
                "volume_claims"
            ]
        );
        let all = outputs(&explicit, &empty());
        assert_eq!(all["gpu_networks"][0], "rdma-0");
        assert_eq!(
            all["nccl_env_script"],
            "/usr/local/gib/scripts/set_nccl_env.sh"
        );
        assert_eq!(
            all["nccl_plugin_volume"]["hostPath"]["path"],
            "/home/kubernetes/bin/gib"
        );
        assert_eq!(
            all["nccl_plugin_volume_mount"]["mountPath"],
            "/usr/local/gib"
        );

        let managed = rdma(MachineFamily::A4, NetworkMode::Managed);
        let all = outputs(&managed, &empty());
        assert!(all.get("pod_annotations").is_none() && all.get("gpu_networks").is_none());
        assert_eq!(
            all["pod_resource_claims"],
            json!([{"name": "rdma", "resourceClaimTemplateName": "rdma-nics"}])
        );
        assert_eq!(all["container_resource_claims"], json!([{"name": "rdma"}]));
        assert_eq!(all["resource_claim_namespace"], "default");
        assert_eq!(
            raw(&all["pod_resource_claims"]),
            "[{\"name\":\"rdma\",\"resourceClaimTemplateName\":\"rdma-nics\"}]\n"
        );
    }
}
