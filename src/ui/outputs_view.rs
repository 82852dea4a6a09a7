//! The outputs printed after an apply: what workload templates need from the cluster.

use super::Printer;
use crate::graph::outputs::{WorkloadOutputs, interface_json};
use std::fmt::Write;

pub fn render(printer: &Printer, outputs: &WorkloadOutputs) -> String {
    let mut out = format!("\n{}\n\n", printer.bold("Outputs:"));
    let quoted = |items: &[String]| {
        items
            .iter()
            .map(|i| format!("{i:?}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let _ = writeln!(out, "gpu_networks = [{}]", quoted(&outputs.gpu_networks));
    // As YAML, ready to paste under a pod template's `metadata.annotations`.
    let _ = writeln!(out, "pod_annotations:");
    let _ = writeln!(out, "  networking.gke.io/default-interface: eth0");
    let _ = writeln!(out, "  networking.gke.io/interfaces: |\n    [");
    let entries: Vec<String> = outputs
        .interfaces
        .iter()
        .map(|(i, n)| format!("      {}", interface_json(i, n)))
        .collect();
    let _ = writeln!(out, "{}\n    ]", entries.join(",\n"));
    if let Some((queue, namespace)) = &outputs.queue {
        let _ = writeln!(
            out,
            "kueue_queue = {queue:?}  # label jobs in namespace {namespace:?} with kueue.x-k8s.io/queue-name={queue}"
        );
    }
    if !outputs.volume_claims.is_empty() {
        let _ = writeln!(
            out,
            "volume_claims = [{}]  # in namespace \"default\"",
            quoted(&outputs.volume_claims)
        );
    }
    out
}
