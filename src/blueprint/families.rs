//! GPU machine families as data: one [`FamilySpec`] row per family says everything a3ctl does
//! differently for it — the GPU networks to create, the NCCL plugin installer, the placement
//! object, how pods are wired to the GPU NICs, the GKE versions it needs, where it is offered and
//! what `verify` expects. Code asks the row; adding a family is adding a row (and its tests).
//!
//! Sources, per field:
//! - machine types, accelerators, NIC counts: https://cloud.google.com/compute/docs/accelerator-optimized-machines
//!   and https://cloud.google.com/compute/docs/gpus/gpu-network-bandwidth;
//! - A3 High/Mega networks and installers: GoogleCloudPlatform/container-engine-accelerators
//!   `gpudirect-tcpx/`, `gpudirect-tcpxo/` and https://cloud.google.com/kubernetes-engine/docs/how-to/gpu-bandwidth-gpudirect-tcpx;
//! - A3 Ultra / A4 networks (one gVNIC VPC plus one RDMA VPC made from the zone's `vpc-roce`
//!   network profile with eight subnets and no firewall rules), the gIB installer and the pod
//!   wiring `eth2..eth9 → rdma-0..rdma-7`: GoogleCloudPlatform/cluster-toolkit
//!   `examples/gke-a3-ultragpu/gke-a3-ultragpu.yaml`, `examples/gke-a4/gke-a4.yaml`,
//!   `modules/network/gpu-rdma-vpc`, and container-engine-accelerators `gpudirect-rdma/`;
//! - GKE-managed GPU networking (the node pool's accelerator network profile `auto`, GKE
//!   1.34.1-gke.1829001 or later with Dataplane V2):
//!   https://cloud.google.com/kubernetes-engine/docs/how-to/config-auto-net-for-accelerators and
//!   cluster-toolkit `modules/compute/gke-node-pool`;
//! - local SSDs: cluster-toolkit `modules/compute/gke-node-pool` (`local_ssd_machines`);
//! - bus-bandwidth floors: GoogleCloudPlatform/cluster-health-scanner
//!   `deploy/helm/health_checks/nccl_healthcheck/{a3,a3plus,a3ultra,a4}.yaml` (`BANDWIDTH_THRESHOLD`).

use serde::{Deserialize, Serialize};

use super::model::ReleaseChannel;
use super::presets::GkeMinimums;
use super::versions::GkeVersion;

/// The GPU machine family of a blueprint's GPU pools.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum MachineFamily {
    /// `a3-highgpu-8g`: 8 × H100 80GB, 4 GPU NICs, GPUDirect-TCPX.
    A3High,
    /// `a3-megagpu-8g`: 8 × H100 Mega 80GB, 8 GPU NICs, GPUDirect-TCPXO.
    A3Mega,
    /// `a3-ultragpu-8g`: 8 × H200 141GB, 8 RDMA NICs (RoCE) and a second gVNIC.
    A3Ultra,
    /// `a4-highgpu-8g`: 8 × B200, 8 RDMA NICs (RoCE) and a second gVNIC.
    A4,
}

/// The GPU-to-GPU transport a machine family uses across nodes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum GpuDirect {
    /// GPUDirect-TCPX (A3 High).
    Tcpx,
    /// GPUDirect-TCPXO, also called FasTrak (A3 Mega).
    Tcpxo,
    /// GPUDirect-RDMA over RoCE with Google's gIB NCCL plugin (A3 Ultra, A4).
    Rdma,
}

impl GpuDirect {
    pub fn as_str(self) -> &'static str {
        match self {
            GpuDirect::Tcpx => "TCPX",
            GpuDirect::Tcpxo => "TCPXO",
            GpuDirect::Rdma => "RDMA",
        }
    }

    /// The name shown in the version stack (`GPUDirect-TCPXO`, `GPUDirect-RDMA`).
    pub fn display(self) -> &'static str {
        match self {
            GpuDirect::Tcpx => "GPUDirect-TCPX",
            GpuDirect::Tcpxo => "GPUDirect-TCPXO",
            GpuDirect::Rdma => "GPUDirect-RDMA",
        }
    }

    /// Whether the plugin needs the RxDM (`tcpgpudmarxd`) sidecar in every pod.
    pub fn has_rxdm(self) -> bool {
        matches!(self, GpuDirect::Tcpx | GpuDirect::Tcpxo)
    }
}

/// Who creates the GPU networks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum NetworkMode {
    /// a3ctl creates the GPU VPCs and subnets and the device-mode Network objects (default).
    Explicit,
    /// GKE creates them for the node pool (accelerator network profile `auto`); pods ask for the
    /// RDMA NICs through a ResourceClaim.
    Managed,
}

impl NetworkMode {
    pub fn as_str(self) -> &'static str {
        match self {
            NetworkMode::Explicit => "explicit",
            NetworkMode::Managed => "managed",
        }
    }
}

/// The GPU networks of a family in explicit mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NicPlan {
    /// gVNIC GPU VPCs, one subnet and one internal firewall rule each: the GPU NICs of A3
    /// High/Mega (4, 8), the second host NIC of A3 Ultra/A4 (1).
    pub gvnic_vpcs: usize,
    /// Subnets of the one RDMA VPC made from the zone's RoCE network profile (0 when none).
    pub rdma_subnets: usize,
}

impl NicPlan {
    /// Subnets carved from `gpu_range`: the gVNIC ones first, then the RDMA ones.
    pub fn subnets(self) -> usize {
        self.gvnic_vpcs + self.rdma_subnets
    }
}

/// How a training pod reaches the GPU NICs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PodWiring {
    /// `eth1..ethN` on the gVNIC Network objects (TCPX, TCPXO), eth0 on `default`.
    GvnicNetworks,
    /// `eth2..eth9` on `rdma-0..rdma-7`; the second gVNIC stays with the host.
    RdmaNetworks,
}

/// The GKE version a node pool needs for GKE-managed GPU networking (accelerator network profile
/// `auto`), from https://cloud.google.com/kubernetes-engine/docs/how-to/config-auto-net-for-accelerators.
pub const MANAGED_NETWORKING_MIN_GKE: GkeVersion = GkeVersion::new(1, 34, 1, 1829001);

/// The release channels known to offer [`MANAGED_NETWORKING_MIN_GKE`] or a later build; `a3ctl
/// init` enrolls a managed-networking cluster in the first.
///
/// What a channel offers is known only from the location's live `getServerConfig`, which
/// preflight reads and resolves the blueprint's version in
/// ([`crate::resource::kinds::gke_versions::GkeVersionsSpec::resolve`]); `init` calls no API, so
/// this is the rule it writes by. GKE releases a new Kubernetes minor to the Rapid channel first
/// and promotes it to Regular (about 2-3 months later) and then Stable
/// (https://cloud.google.com/kubernetes-engine/docs/concepts/release-channels, "What channels
/// are available"). 1.34 came to Rapid while Regular offered 1.33 at most (the "Current
/// versions" table of https://cloud.google.com/kubernetes-engine/docs/release-notes read then:
/// Rapid 1.30 to 1.34, default 1.34.0-gke.2201000; Regular 1.30 to 1.33), and the simulator's
/// `serverConfig` (`sim/src/container/server_config.rs`) offers 1.34.1-gke.1829001 in Rapid
/// only, as a test checks. Once Regular offers 1.34 it can join this list;
/// once Rapid stops offering 1.34 the wizard's `1.34` must move up with it. Either way preflight
/// checks the channel against the live offer before any change and names the channels that
/// offer the version when it is not.
pub const MANAGED_NETWORKING_CHANNELS: &[ReleaseChannel] = &[ReleaseChannel::Rapid];

/// Everything a3ctl knows about one machine family.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FamilySpec {
    pub family: MachineFamily,
    /// The GCE machine type.
    pub machine_type: &'static str,
    /// The short name used in messages (`A3 Ultra`).
    pub display_name: &'static str,
    /// The GKE accelerator type (`cloud.google.com/gke-accelerator`).
    pub accelerator: &'static str,
    pub gpus: u32,
    pub transport: GpuDirect,
    /// The GPU networks a3ctl creates in explicit mode.
    pub nics: NicPlan,
    /// MTU of the GPU VPCs.
    pub gpu_mtu: u32,
    /// Network modes the family supports; the first is the default.
    pub network_modes: &'static [NetworkMode],
    pub pod_wiring: PodWiring,
    /// The NCCL plugin installer DaemonSet (`kube-system/<name>`).
    pub installer: &'static str,
    /// Whether a compact placement policy can be asked for.
    pub compact_placement: bool,
    /// Local SSDs per node (raw NVMe block devices).
    pub local_ssds: u32,
    /// Zones offering the machine type (the table shared with the simulator).
    pub zones: &'static [&'static str],
    /// GKE versions GPUDirect needs on this family.
    pub min_gke: &'static GkeMinimums,
    /// The two-node all-gather bus-bandwidth floor `verify --nccl-test` judges by, in GB/s:
    /// Cluster Health Scanner's `BANDWIDTH_THRESHOLD`, which it compares with the mean bus
    /// bandwidth of a 2G–8G all-gather ([`crate::verify::nccl::JUDGED_SIZES`]).
    pub nccl_floor: f64,
    /// The Cluster Health Scanner values file that sets it, under [`NCCL_FLOOR_SOURCE`].
    pub nccl_floor_file: &'static str,
    /// Whether Google sells the machine type on demand. A3 Ultra and A4 are not: AI
    /// Hypercomputer's "Consumption options"
    /// (<https://cloud.google.com/ai-hypercomputer/docs/consumption-models>) offers them through
    /// reservations (calendar mode included), flex-start and Spot only.
    pub on_demand: bool,
}

/// Every machine family, in a stable order.
pub const FAMILIES: [MachineFamily; 4] = [
    MachineFamily::A3High,
    MachineFamily::A3Mega,
    MachineFamily::A3Ultra,
    MachineFamily::A4,
];

/// The machine type names the blueprint accepts for GPU pools.
pub const GPU_MACHINE_TYPES: [&str; 4] = [
    "a3-highgpu-8g",
    "a3-megagpu-8g",
    "a3-ultragpu-8g",
    "a4-highgpu-8g",
];

/// Where the bus-bandwidth floors come from: Cluster Health Scanner's NCCL health check, whose
/// values files set `START_MESSAGE_SIZE` "2G", `END_MESSAGE_SIZE` "8G" and
/// `BANDWIDTH_THRESHOLD` 60 (`a3.yaml`), 150 (`a3plus.yaml`; "90" until
/// f3f54670400604e8d1756e51af399b53c68f3cd5, 2024-11-19), 250 (`a3ultra.yaml`, `a4.yaml`); last
/// changed in badb65aae6fdc72e31c9bc381d71f846d49e695b. Each family names its file
/// ([`FamilySpec::nccl_floor_file`]).
pub const NCCL_FLOOR_SOURCE: &str = "BANDWIDTH_THRESHOLD of a 2G-8G all-gather, GoogleCloudPlatform/cluster-health-scanner@81c525d897f4e85a4f69dd1e389379de6f1e07c2 deploy/helm/health_checks/nccl_healthcheck";

const EXPLICIT_ONLY: &[NetworkMode] = &[NetworkMode::Explicit];
const EXPLICIT_OR_MANAGED: &[NetworkMode] = &[NetworkMode::Explicit, NetworkMode::Managed];

/// The family table.
pub const FAMILY_TABLE: [FamilySpec; 4] = [
    FamilySpec {
        family: MachineFamily::A3High,
        machine_type: "a3-highgpu-8g",
        display_name: "A3 High",
        accelerator: "nvidia-h100-80gb",
        gpus: 8,
        transport: GpuDirect::Tcpx,
        nics: NicPlan {
            gvnic_vpcs: 4,
            rdma_subnets: 0,
        },
        gpu_mtu: 8244,
        network_modes: EXPLICIT_ONLY,
        pod_wiring: PodWiring::GvnicNetworks,
        installer: "nccl-tcpx-installer",
        compact_placement: true,
        local_ssds: 16,
        zones: A3_HIGH_ZONES,
        min_gke: &super::presets::A3_HIGH_MINIMUMS,
        nccl_floor: 60.0,
        nccl_floor_file: "a3.yaml",
        on_demand: true,
    },
    FamilySpec {
        family: MachineFamily::A3Mega,
        machine_type: "a3-megagpu-8g",
        display_name: "A3 Mega",
        accelerator: "nvidia-h100-mega-80gb",
        gpus: 8,
        transport: GpuDirect::Tcpxo,
        nics: NicPlan {
            gvnic_vpcs: 8,
            rdma_subnets: 0,
        },
        gpu_mtu: 8244,
        network_modes: EXPLICIT_ONLY,
        pod_wiring: PodWiring::GvnicNetworks,
        installer: "nccl-tcpxo-installer",
        compact_placement: true,
        local_ssds: 16,
        zones: A3_MEGA_ZONES,
        min_gke: &super::presets::A3_MEGA_MINIMUMS,
        nccl_floor: 150.0,
        nccl_floor_file: "a3plus.yaml",
        on_demand: true,
    },
    FamilySpec {
        family: MachineFamily::A3Ultra,
        machine_type: "a3-ultragpu-8g",
        display_name: "A3 Ultra",
        accelerator: "nvidia-h200-141gb",
        gpus: 8,
        transport: GpuDirect::Rdma,
        nics: NicPlan {
            gvnic_vpcs: 1,
            rdma_subnets: 8,
        },
        gpu_mtu: 8896,
        network_modes: EXPLICIT_OR_MANAGED,
        pod_wiring: PodWiring::RdmaNetworks,
        installer: "nccl-rdma-installer",
        compact_placement: true,
        local_ssds: 32,
        zones: A3_ULTRA_ZONES,
        min_gke: &super::presets::RDMA_MINIMUMS,
        nccl_floor: 250.0,
        nccl_floor_file: "a3ultra.yaml",
        on_demand: false,
    },
    FamilySpec {
        family: MachineFamily::A4,
        machine_type: "a4-highgpu-8g",
        display_name: "A4",
        accelerator: "nvidia-b200",
        gpus: 8,
        transport: GpuDirect::Rdma,
        nics: NicPlan {
            gvnic_vpcs: 1,
            rdma_subnets: 8,
        },
        gpu_mtu: 8896,
        network_modes: EXPLICIT_OR_MANAGED,
        pod_wiring: PodWiring::RdmaNetworks,
        installer: "nccl-rdma-installer",
        compact_placement: true,
        local_ssds: 32,
        zones: A4_ZONES,
        min_gke: &super::presets::RDMA_MINIMUMS,
        nccl_floor: 250.0,
        nccl_floor_file: "a4.yaml",
        on_demand: false,
    },
];

/// Zones offering `a3-highgpu-8g`.
pub const A3_HIGH_ZONES: &[&str] = &[
    "us-central1-a",
    "us-central1-c",
    "us-east4-a",
    "us-east5-a",
    "us-west1-b",
    "us-west4-a",
    "europe-west4-b",
    "europe-west4-c",
    "asia-northeast1-a",
    "asia-southeast1-b",
];

/// Zones offering `a3-megagpu-8g`.
pub const A3_MEGA_ZONES: &[&str] = &[
    "us-central1-a",
    "us-central1-c",
    "us-east4-a",
    "us-east5-a",
    "us-west1-b",
    "europe-west1-b",
    "europe-west4-b",
    "asia-northeast1-b",
    "asia-southeast1-c",
];

/// Zones offering `a3-ultragpu-8g`: the SkyPilot catalogue generated from Compute's
/// machineTypes list (skypilot-org/skypilot-catalog `catalogs/v8/gcp/vms.csv`); Google's
/// authority is https://cloud.google.com/compute/docs/gpus/gpu-regions-zones.
pub const A3_ULTRA_ZONES: &[&str] = &[
    "us-central1-b",
    "us-east4-b",
    "us-east5-a",
    "us-south1-b",
    "us-west1-c",
    "europe-west1-b",
    "europe-west4-a",
    "asia-south1-b",
    "asia-south2-c",
];

/// Zones offering `a4-highgpu-8g` (same sources as [`A3_ULTRA_ZONES`]).
pub const A4_ZONES: &[&str] = &[
    "us-central1-b",
    "us-east1-b",
    "us-east4-b",
    "us-south1-b",
    "us-west2-c",
    "us-west3-b",
    "us-west3-c",
    "europe-north1-b",
    "europe-west4-b",
    "asia-northeast1-b",
    "asia-southeast1-b",
];

impl MachineFamily {
    /// The family's row of [`FAMILY_TABLE`].
    pub fn spec(self) -> &'static FamilySpec {
        // Every family has a row (checked by a test); the table is in FAMILIES order.
        let i = FAMILIES.iter().position(|f| *f == self).unwrap_or(0);
        &FAMILY_TABLE[i]
    }

    /// The family of a GCE machine type name, if it is one of the types a3ctl provisions.
    pub fn from_machine_type(machine_type: &str) -> Option<Self> {
        FAMILY_TABLE
            .iter()
            .find(|row| row.machine_type == machine_type)
            .map(|row| row.family)
    }

    /// The GCE machine type.
    pub fn machine_type(self) -> &'static str {
        self.spec().machine_type
    }

    /// The short name used in messages and Kueue flavour names.
    pub fn display_name(self) -> &'static str {
        self.spec().display_name
    }

    /// The GKE accelerator type (`cloud.google.com/gke-accelerator`).
    pub fn accelerator_type(self) -> &'static str {
        self.spec().accelerator
    }

    /// GPUs per node.
    pub fn gpus_per_node(self) -> u32 {
        self.spec().gpus
    }

    /// GPU subnets a3ctl carves in explicit mode (gVNIC VPCs, then RDMA subnets).
    pub fn gpu_nics(self) -> usize {
        self.spec().nics.subnets()
    }

    /// NICs the pods' GPU traffic uses: the gVNIC GPU NICs, or the RDMA NICs.
    pub fn gpu_data_nics(self) -> usize {
        match self.spec().pod_wiring {
            PodWiring::GvnicNetworks => self.spec().nics.gvnic_vpcs,
            PodWiring::RdmaNetworks => self.spec().nics.rdma_subnets,
        }
    }

    /// The GPUDirect transport.
    pub fn gpudirect(self) -> GpuDirect {
        self.spec().transport
    }

    /// Zones where the machine type is offered (the table shared with the simulator).
    pub fn zones(self) -> &'static [&'static str] {
        self.spec().zones
    }

    /// Whether the machine type is offered in `zone`.
    pub fn offered_in(self, zone: &str) -> bool {
        self.zones().contains(&zone)
    }

    /// The GKE versions GPUDirect needs on this family.
    pub fn gke_minimums(self) -> &'static GkeMinimums {
        self.spec().min_gke
    }

    /// Whether the family can use `mode`.
    pub fn supports(self, mode: NetworkMode) -> bool {
        self.spec().network_modes.contains(&mode)
    }

    /// The MTU of the family's GPU VPCs.
    pub fn gpu_mtu(self) -> u32 {
        self.spec().gpu_mtu
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_has_one_row_per_family_in_order() {
        assert_eq!(FAMILY_TABLE.len(), FAMILIES.len());
        for (row, family) in FAMILY_TABLE.iter().zip(FAMILIES) {
            assert_eq!(row.family, family);
            assert_eq!(family.spec().family, family);
            assert_eq!(
                MachineFamily::from_machine_type(row.machine_type),
                Some(family)
            );
        }
        let types: Vec<&str> = FAMILY_TABLE.iter().map(|r| r.machine_type).collect();
        assert_eq!(types, GPU_MACHINE_TYPES);
    }

    #[test]
    fn family_facts_match_the_recipes() {
        use MachineFamily::*;
        assert_eq!(A3High.gpu_nics(), 4);
        assert_eq!(A3Mega.gpu_nics(), 8);
        // One gVNIC VPC and eight RDMA subnets.
        assert_eq!(A3Ultra.gpu_nics(), 9);
        assert_eq!(A3Ultra.gpu_data_nics(), 8);
        assert_eq!(A4.accelerator_type(), "nvidia-b200");
        assert_eq!(A3Ultra.accelerator_type(), "nvidia-h200-141gb");
        assert_eq!(A3Mega.accelerator_type(), "nvidia-h100-mega-80gb");
        assert_eq!(A3High.gpudirect(), GpuDirect::Tcpx);
        assert_eq!(A4.gpudirect(), GpuDirect::Rdma);
        assert!(!GpuDirect::Rdma.has_rxdm());
        assert!(A3Mega.offered_in("europe-west1-b"));
        assert!(!A3High.offered_in("europe-west1-b"));
        assert_eq!(A3Ultra.gpu_mtu(), 8896);
        assert_eq!(A3High.gpu_mtu(), 8244);
    }

    #[test]
    fn only_rdma_families_offer_managed_networking_and_explicit_is_every_default() {
        for row in FAMILY_TABLE {
            assert_eq!(row.network_modes[0], NetworkMode::Explicit);
            assert_eq!(
                row.family.supports(NetworkMode::Managed),
                row.transport == GpuDirect::Rdma,
                "{}",
                row.display_name
            );
        }
    }

    #[test]
    fn bus_bandwidth_floors_are_cluster_health_scanners() {
        let floors: Vec<f64> = FAMILY_TABLE.iter().map(|r| r.nccl_floor).collect();
        assert_eq!(floors, [60.0, 150.0, 250.0, 250.0]);
        let files: Vec<&str> = FAMILY_TABLE.iter().map(|r| r.nccl_floor_file).collect();
        assert_eq!(files, ["a3.yaml", "a3plus.yaml", "a3ultra.yaml", "a4.yaml"]);
    }
}
