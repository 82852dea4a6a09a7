//! Fixed facts about A3 machines, where they are offered, and which software versions go together.
//!
//! Everything here is data taken from public A3 sources
//! (https://cloud.google.com/compute/docs/gpus/gpu-network-bandwidth,
//! GoogleCloudPlatform/container-engine-accelerators `gpudirect-tcpx/` and `gpudirect-tcpxo/`,
//! GoogleCloudPlatform/cluster-toolkit `modules/compute/gke-node-pool/gpu_direct.tf`)
//! and the zone table shared by convention with the simulator (`sim/`). Nothing here reads the
//! blueprint; the validation rules (`validate.rs`) and later stages look facts up. GKE version
//! parsing and the GPUDirect version gate live in [`super::versions`].

use super::versions::GkeVersion;

pub use super::families::{FAMILIES, GPU_MACHINE_TYPES, GpuDirect, MachineFamily};

/// Regions a3ctl knows, each with its zone suffixes.
pub const REGIONS: &[(&str, &[&str])] = &[
    ("us-central1", &["a", "b", "c", "f"]),
    ("us-east1", &["b", "c", "d"]),
    ("us-east4", &["a", "b", "c"]),
    ("us-east5", &["a", "b", "c"]),
    ("us-west1", &["a", "b", "c"]),
    ("us-west4", &["a", "b", "c"]),
    ("us-south1", &["a", "b", "c"]),
    ("us-west2", &["a", "b", "c"]),
    ("us-west3", &["a", "b", "c"]),
    ("europe-north1", &["a", "b", "c"]),
    ("europe-west1", &["b", "c", "d"]),
    ("europe-west4", &["a", "b", "c"]),
    ("asia-northeast1", &["a", "b", "c"]),
    ("asia-southeast1", &["a", "b", "c"]),
    ("asia-south1", &["a", "b", "c"]),
    ("asia-south2", &["a", "b", "c"]),
];

/// The region names, for hints.
pub fn region_names() -> Vec<&'static str> {
    REGIONS.iter().map(|(region, _)| *region).collect()
}

/// Whether `region` is known.
pub fn region_exists(region: &str) -> bool {
    REGIONS.iter().any(|(name, _)| *name == region)
}

/// Every known zone name (`us-central1-a` ...).
pub fn zone_names() -> Vec<String> {
    REGIONS
        .iter()
        .flat_map(|(region, suffixes)| {
            suffixes
                .iter()
                .map(move |suffix| format!("{region}-{suffix}"))
        })
        .collect()
}

/// The region a known zone belongs to.
pub fn region_of_zone(zone: &str) -> Option<&'static str> {
    REGIONS.iter().find_map(|(region, suffixes)| {
        let suffix = zone.strip_prefix(region)?.strip_prefix('-')?;
        suffixes.contains(&suffix).then_some(*region)
    })
}

/// One tested combination of GPUDirect software for a machine family.
///
/// The plugin installer, the RxDM sidecar and NCCL must be upgraded together
/// (GoogleCloudPlatform/container-engine-accelerators `gpudirect-tcpxo/README.md`); a stack names
/// one such tuple. `min_gke` is the GKE gate that applies to it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stack {
    /// The stack name used in blueprints, the month of the upstream release (`2026-01`).
    pub id: &'static str,
    pub family: MachineFamily,
    /// NCCL plugin installer image, without tag.
    pub plugin_image: &'static str,
    pub plugin_tag: &'static str,
    /// RxDM (`tcpgpudmarxd`) sidecar image without tag, and its tag; `None` for gIB (RDMA),
    /// which needs no sidecar.
    pub rxdm: Option<(&'static str, &'static str)>,
    /// NCCL version the plugin ships, when upstream states it.
    pub nccl: Option<&'static str>,
    /// Minimum GKE versions for GPUDirect on this family.
    pub min_gke: &'static GkeMinimums,
    /// The first GKE minor `(major, minor)` the stack is known not to be tested on, with where
    /// that is known from; `None` when no ceiling is known.
    pub untested_from: Option<(u32, u32, &'static str)>,
}

const TCPX_PLUGIN: &str =
    "us-docker.pkg.dev/gce-ai-infra/gpudirect-tcpx/nccl-plugin-gpudirecttcpx-dev";
const TCPX_RXDM: &str = "us-docker.pkg.dev/gce-ai-infra/gpudirect-tcpx/tcpgpudmarxd-dev";
const TCPXO_PLUGIN: &str =
    "us-docker.pkg.dev/gce-ai-infra/gpudirect-tcpxo/nccl-plugin-gpudirecttcpx-dev";
const TCPXO_RXDM: &str = "us-docker.pkg.dev/gce-ai-infra/gpudirect-tcpxo/tcpgpudmarxd-dev";
/// Google's gIB NCCL plugin for RDMA (GoogleCloudPlatform/cluster-toolkit
/// `examples/gke-a3-ultragpu/nccl-installer.yaml.tftpl`, `gke-a4` with `version: v1.1.0`).
const GIB_PLUGIN: &str = "us-docker.pkg.dev/gce-ai-infra/gpudirect-gib/nccl-plugin-gib";

/// Known stacks, newest first within each family.
pub const STACKS: &[Stack] = &[
    Stack {
        id: "2026-01",
        family: MachineFamily::A3High,
        plugin_image: TCPX_PLUGIN,
        plugin_tag: "v3.1.9",
        rxdm: Some((TCPX_RXDM, "v2.0.12")),
        nccl: None,
        min_gke: &A3_HIGH_MINIMUMS,
        // Google's own A3 High CI was pinned back to GKE 1.33 over a COS incompatibility of the
        // newer release (GoogleCloudPlatform/cluster-toolkit PR #5673, "Fix A3 HighGPU test by
        // pinning GKE version to 1.33").
        untested_from: Some((
            1,
            34,
            "Google pinned its own A3 High tests to GKE 1.33 over a COS incompatibility (GoogleCloudPlatform/cluster-toolkit#5673)",
        )),
    },
    Stack {
        id: "2026-01",
        family: MachineFamily::A3Mega,
        plugin_image: TCPXO_PLUGIN,
        plugin_tag: "v1.0.15",
        rxdm: Some((TCPXO_RXDM, "v1.0.21")),
        nccl: Some("2.28.7-1"),
        min_gke: &A3_MEGA_MINIMUMS,
        untested_from: None,
    },
    Stack {
        id: "2025-11",
        family: MachineFamily::A3Mega,
        plugin_image: TCPXO_PLUGIN,
        plugin_tag: "v1.0.14",
        rxdm: Some((TCPXO_RXDM, "v1.0.20")),
        nccl: Some("2.28.7-1"),
        min_gke: &A3_MEGA_MINIMUMS,
        untested_from: None,
    },
    Stack {
        id: "2025-08",
        family: MachineFamily::A3Mega,
        plugin_image: TCPXO_PLUGIN,
        plugin_tag: "v1.0.12",
        rxdm: Some((TCPXO_RXDM, "v1.0.18")),
        nccl: Some("2.26.5"),
        min_gke: &A3_MEGA_MINIMUMS,
        untested_from: None,
    },
    Stack {
        id: "2026-01",
        family: MachineFamily::A3Ultra,
        plugin_image: GIB_PLUGIN,
        plugin_tag: "v1.1.0",
        rxdm: None,
        nccl: None,
        min_gke: &RDMA_MINIMUMS,
        untested_from: None,
    },
    Stack {
        id: "2026-01",
        family: MachineFamily::A4,
        plugin_image: GIB_PLUGIN,
        plugin_tag: "v1.1.0",
        rxdm: None,
        nccl: None,
        min_gke: &RDMA_MINIMUMS,
        untested_from: None,
    },
];

/// The stack `id` for `family`, if the table has it.
pub fn stack(family: MachineFamily, id: &str) -> Option<&'static Stack> {
    STACKS
        .iter()
        .find(|stack| stack.family == family && stack.id == id)
}

/// The newest stack for `family`; the default when a blueprint names none.
pub fn latest_stack(family: MachineFamily) -> &'static Stack {
    // The table has a row for every family (checked by a test), newest first.
    STACKS
        .iter()
        .find(|stack| stack.family == family)
        .unwrap_or(&STACKS[0])
}

/// The stack names known for `family`, newest first.
pub fn stack_ids(family: MachineFamily) -> Vec<&'static str> {
    STACKS
        .iter()
        .filter(|stack| stack.family == family)
        .map(|stack| stack.id)
        .collect()
}

/// The GKE versions GPUDirect needs on one machine family.
///
/// `per_minor` lists the lowest patch accepted in each pinned minor, ascending; minors older
/// than the first entry are unsupported and newer minors than the last are unpinned. `floor`,
/// when set, applies to every minor on top of that.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GkeMinimums {
    pub per_minor: &'static [GkeVersion],
    pub floor: Option<GkeVersion>,
    /// Where the numbers come from, for hints.
    pub source: &'static str,
}

/// A3 High (TCPX) minimums enforced by Cluster Toolkit's `gke-node-pool` module.
pub const A3_HIGH_MINIMUMS: GkeMinimums = GkeMinimums {
    per_minor: &[
        GkeVersion::new(1, 27, 16, 2874000),
        GkeVersion::new(1, 28, 15, 3163000),
        GkeVersion::new(1, 29, 15, 2467000),
    ],
    floor: None,
    source: "Cluster Toolkit gke-node-pool GPUDirect minimums",
};

/// A3 Mega (TCPXO) minimums: Cluster Toolkit's per-minor list plus the gpu-recipes floor.
pub const A3_MEGA_MINIMUMS: GkeMinimums = GkeMinimums {
    per_minor: &[
        GkeVersion::new(1, 28, 15, 3163000),
        GkeVersion::new(1, 29, 15, 2467000),
        GkeVersion::new(1, 30, 14, 1922000),
        GkeVersion::new(1, 31, 14, 1243000),
        GkeVersion::new(1, 32, 11, 1174000),
    ],
    floor: Some(GkeVersion::new(1, 32, 4, 1767000)),
    source: "Cluster Toolkit gke-node-pool GPUDirect minimums and the A3 Mega gpu-recipes floor",
};

/// A3 Ultra and A4 (RDMA): no GKE minimum is encoded. Cluster Toolkit's RDMA examples pin a
/// version prefix rather than a minimum, and no per-minor list was found to check against; the
/// GKE-managed networking gate is separate ([`super::families::MANAGED_NETWORKING_MIN_GKE`]).
pub const RDMA_MINIMUMS: GkeMinimums = GkeMinimums {
    per_minor: &[],
    floor: None,
    source: "no published GPUDirect-RDMA minimum",
};

/// The Kueue release installed when a blueprint names none (Cluster Toolkit and xpk both pin it).
pub const KUEUE_VERSION: &str = "v0.17.1";

/// The upstream manifest URL of a Kueue release.
/// The `apiVersion`s a3ctl writes Kueue objects with for a release: `(queues, Topology)`.
/// Releases before v0.15 serve `kueue.x-k8s.io/v1beta1` (Topology `v1alpha1`, as the v0.12.2
/// manifests show); from v0.15 every kind has `v1beta2` (used by Cluster Toolkit with v0.17.1).
/// Before anything is applied, the Kubernetes adapter checks that the downloaded manifests really
/// serve these versions, so a wrong guess for an unusual release fails early and clearly.
pub fn kueue_api_versions(version: &str) -> (&'static str, &'static str) {
    let mut parts = version
        .trim_start_matches('v')
        .split('.')
        .map(|p| p.parse::<u32>().unwrap_or(0));
    let (major, minor) = (parts.next().unwrap_or(0), parts.next().unwrap_or(0));
    if major > 0 || minor >= 15 {
        ("kueue.x-k8s.io/v1beta2", "kueue.x-k8s.io/v1beta2")
    } else {
        ("kueue.x-k8s.io/v1beta1", "kueue.x-k8s.io/v1alpha1")
    }
}

pub fn kueue_manifest_url(version: &str) -> String {
    format!("https://github.com/kubernetes-sigs/kueue/releases/download/{version}/manifests.yaml")
}

/// The JobSet release installed when a blueprint names none: the current release
/// (https://github.com/kubernetes-sigs/jobset/releases/tag/v0.12.0). Cluster Toolkit installs
/// JobSet from its chart beside Kueue (GoogleCloudPlatform/cluster-toolkit
/// `modules/management/kubectl-apply/main.tf`, `install_jobset`), xpk from these manifests.
pub const JOBSET_VERSION: &str = "v0.12.0";

/// The upstream manifest URL of a JobSet release, as JobSet's installation guide applies it
/// (kubernetes-sigs/jobset `site/content/en/docs/installation/_index.md`).
pub fn jobset_manifest_url(version: &str) -> String {
    format!("https://github.com/kubernetes-sigs/jobset/releases/download/{version}/manifests.yaml")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_offered_zone_is_a_known_zone() {
        let zones = zone_names();
        for family in FAMILIES {
            for zone in family.zones() {
                assert!(zones.iter().any(|z| z == zone), "{zone} is not in REGIONS");
                assert!(region_of_zone(zone).is_some());
            }
        }
    }

    #[test]
    fn region_of_zone_matches_whole_region_names() {
        assert_eq!(region_of_zone("us-central1-a"), Some("us-central1"));
        assert_eq!(region_of_zone("us-central1-d"), None);
        assert_eq!(region_of_zone("us-central"), None);
        assert_eq!(region_of_zone("europe-west4-c"), Some("europe-west4"));
    }

    #[test]
    fn every_family_has_a_stack_and_latest_is_its_own() {
        for family in FAMILIES {
            assert_eq!(latest_stack(family).family, family);
            assert!(stack(family, "2026-01").is_some());
        }
    }

    #[test]
    fn family_facts_match_the_recipe() {
        let high = MachineFamily::from_machine_type("a3-highgpu-8g");
        assert_eq!(
            MachineFamily::from_machine_type("a4-highgpu-8g"),
            Some(MachineFamily::A4)
        );
        let mega = MachineFamily::from_machine_type("a3-megagpu-8g");
        assert_eq!(high, Some(MachineFamily::A3High));
        assert_eq!(mega, Some(MachineFamily::A3Mega));
        assert_eq!(MachineFamily::A3High.gpu_nics(), 4);
        assert_eq!(MachineFamily::A3Mega.gpu_nics(), 8);
        assert_eq!(
            MachineFamily::A3Mega.accelerator_type(),
            "nvidia-h100-mega-80gb"
        );
        assert_eq!(MachineFamily::A3High.gpudirect(), GpuDirect::Tcpx);
        assert!(MachineFamily::A3Mega.offered_in("europe-west1-b"));
        assert!(!MachineFamily::A3High.offered_in("europe-west1-b"));
    }

    #[test]
    fn minimums_are_ascending() {
        for family in FAMILIES {
            let list = family.gke_minimums().per_minor;
            assert!(list.windows(2).all(|w| w[0] < w[1]));
        }
    }
}
