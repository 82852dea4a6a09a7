//! The outputs printed after an apply: what workload templates need from the cluster, as YAML
//! snippets to paste into a pod template where the model (`graph::outputs`) has them.

use super::Printer;
use crate::graph::outputs::{GibPlugin, RdmaClaim, WorkloadOutputs, interface_json};
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
    if !outputs.pod_annotations.is_empty() {
        let _ = writeln!(out, "gpu_networks = [{}]", quoted(&outputs.gpu_networks));
        // As YAML, ready to paste under a pod template's `metadata.annotations`.
        let skipped = skipped_interface(outputs);
        let _ = match &skipped {
            Some(host) => writeln!(
                out,
                "pod_annotations:  # {host} is the node's second gVNIC; it stays with the host"
            ),
            None => writeln!(out, "pod_annotations:"),
        };
        let _ = writeln!(out, "  networking.gke.io/default-interface: eth0");
        let _ = writeln!(out, "  networking.gke.io/interfaces: |\n    [");
        let entries: Vec<String> = outputs
            .interfaces
            .iter()
            .map(|(i, n)| format!("      {}", interface_json(i, n)))
            .collect();
        let _ = writeln!(out, "{}\n    ]", entries.join(",\n"));
    }
    if let Some(claim) = &outputs.rdma_claim {
        rdma_claim(&mut out, claim);
    }
    if let Some(gib) = &outputs.nccl_plugin {
        nccl_plugin(&mut out, gib);
    }
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

/// The interface number between `eth0` and the pod's first GPU interface (`eth1` on A3 Ultra
/// and A4, whose pods start at `eth2`), if there is one.
fn skipped_interface(outputs: &WorkloadOutputs) -> Option<String> {
    let first = outputs.interfaces.get(1)?.0.strip_prefix("eth")?;
    let first: u32 = first.parse().ok()?;
    (first > 1).then(|| format!("eth{}", first - 1))
}

/// Managed mode: the pod's and the container's halves of the RDMA NICs' claim.
fn rdma_claim(out: &mut String, claim: &RdmaClaim) {
    let _ = writeln!(
        out,
        "resource_claims:  # the RDMA NICs, from ResourceClaimTemplate {:?} (pods in namespace {:?})",
        claim.template, claim.namespace
    );
    let _ = writeln!(out, "  resourceClaims:  # under the pod's spec");
    let _ = writeln!(out, "    - name: {}", claim.name);
    let _ = writeln!(out, "      resourceClaimTemplateName: {}", claim.template);
    let _ = writeln!(out, "  claims:  # under the container's resources");
    let _ = writeln!(out, "    - name: {}", claim.name);
}

/// RDMA families: the gIB plugin's volume, its mount and the script to source.
fn nccl_plugin(out: &mut String, gib: &GibPlugin) {
    let _ = writeln!(
        out,
        "nccl_plugin:  # gIB: mount it in the NCCL containers, which source its NCCL settings first"
    );
    let _ = writeln!(out, "  volumes:");
    let _ = writeln!(out, "    - name: {}", gib.volume);
    let _ = writeln!(out, "      hostPath:\n        path: {}", gib.host_path);
    let _ = writeln!(out, "  volumeMounts:");
    let _ = writeln!(out, "    - name: {}", gib.volume);
    let _ = writeln!(out, "      mountPath: {}", gib.mount_path);
    let _ = writeln!(
        out,
        "  env_script: {}  # `source` it in the container's command, before the workload",
        gib.env_script
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::blueprint::testing::{rdma, shipped};
    use crate::blueprint::{MachineFamily, NetworkMode};
    use crate::graph::outputs::workload_outputs;

    const PLAIN: Printer = Printer {
        color: false,
        bars: false,
        quiet: false,
    };

    #[test]
    fn a3_high_outputs_annotate_eth1_to_eth4() {
        let text = render(&PLAIN, &workload_outputs(&shipped("a3-high.toml")));
        insta::assert_snapshot!(text, @r#"

        Outputs:

        gpu_networks = ["vpc1", "vpc2", "vpc3", "vpc4"]
        pod_annotations:
          networking.gke.io/default-interface: eth0
          networking.gke.io/interfaces: |
            [
              {"interfaceName":"eth0","network":"default"},
              {"interfaceName":"eth1","network":"vpc1"},
              {"interfaceName":"eth2","network":"vpc2"},
              {"interfaceName":"eth3","network":"vpc3"},
              {"interfaceName":"eth4","network":"vpc4"}
            ]
        kueue_queue = "a3-queue"  # label jobs in namespace "default" with kueue.x-k8s.io/queue-name=a3-queue
        "#);
    }

    #[test]
    fn explicit_rdma_outputs_annotate_eth2_to_eth9_and_mount_gib() {
        let text = render(
            &PLAIN,
            &workload_outputs(&rdma(MachineFamily::A3Ultra, NetworkMode::Explicit)),
        );
        insta::assert_snapshot!(text, @r#"

        Outputs:

        gpu_networks = ["rdma-0", "rdma-1", "rdma-2", "rdma-3", "rdma-4", "rdma-5", "rdma-6", "rdma-7"]
        pod_annotations:  # eth1 is the node's second gVNIC; it stays with the host
          networking.gke.io/default-interface: eth0
          networking.gke.io/interfaces: |
            [
              {"interfaceName":"eth0","network":"default"},
              {"interfaceName":"eth2","network":"rdma-0"},
              {"interfaceName":"eth3","network":"rdma-1"},
              {"interfaceName":"eth4","network":"rdma-2"},
              {"interfaceName":"eth5","network":"rdma-3"},
              {"interfaceName":"eth6","network":"rdma-4"},
              {"interfaceName":"eth7","network":"rdma-5"},
              {"interfaceName":"eth8","network":"rdma-6"},
              {"interfaceName":"eth9","network":"rdma-7"}
            ]
        nccl_plugin:  # gIB: mount it in the NCCL containers, which source its NCCL settings first
          volumes:
            - name: gib
              hostPath:
                path: /home/kubernetes/bin/gib
          volumeMounts:
            - name: gib
              mountPath: /usr/local/gib
          env_script: /usr/local/gib/scripts/set_nccl_env.sh  # `source` it in the container's command, before the workload
        kueue_queue = "a3-queue"  # label jobs in namespace "default" with kueue.x-k8s.io/queue-name=a3-queue
        volume_claims = ["a3mega-filestore", "gcs-my-project-a3mega-ckpt"]  # in namespace "default"
        "#);
    }

    #[test]
    fn managed_rdma_outputs_claim_the_nics_and_mount_gib() {
        let text = render(
            &PLAIN,
            &workload_outputs(&rdma(MachineFamily::A4, NetworkMode::Managed)),
        );
        insta::assert_snapshot!(text, @r#"

        Outputs:

        resource_claims:  # the RDMA NICs, from ResourceClaimTemplate "rdma-nics" (pods in namespace "default")
          resourceClaims:  # under the pod's spec
            - name: rdma
              resourceClaimTemplateName: rdma-nics
          claims:  # under the container's resources
            - name: rdma
        nccl_plugin:  # gIB: mount it in the NCCL containers, which source its NCCL settings first
          volumes:
            - name: gib
              hostPath:
                path: /home/kubernetes/bin/gib
          volumeMounts:
            - name: gib
              mountPath: /usr/local/gib
          env_script: /usr/local/gib/scripts/set_nccl_env.sh  # `source` it in the container's command, before the workload
        kueue_queue = "a3-queue"  # label jobs in namespace "default" with kueue.x-k8s.io/queue-name=a3-queue
        volume_claims = ["a3mega-filestore", "gcs-my-project-a3mega-ckpt"]  # in namespace "default"
        "#);
    }
}
