//! The simulated geography: regions, their zones, and the machine-type catalogue.
//!
//! A small fixed table, enough for realistic checks ("a3-megagpu-8g is not offered in
//! us-central1-b"). The catalogue lists the predefined machine types the simulator serves, with
//! Compute Engine's shapes (vCPUs, memory, attached GPUs) from its machine-family documentation:
//! the shared-core E2 types, the standard/highmem/highcpu sizes of E2, N1, N2, N2D, N4, C2 and C3,
//! and the accelerator-optimized types a3ctl builds on (A3 High, A3 Mega, A3 Ultra, A4). Anything
//! else (`e2-standard-3`, custom types, typos) does not exist. General-purpose types are offered in
//! every simulated zone; the GPU types only in the zones listed in [`GPU_ZONES`].
//!
//! **A3 Ultra and A4.** `a3-ultragpu-8g` is 224 vCPUs, 2,952 GB and 8 `nvidia-h200-141gb`;
//! `a4-highgpu-8g` is 224 vCPUs, 3,968 GB and 8 `nvidia-b200` ("Accelerator-optimized machine
//! family", <https://cloud.google.com/compute/docs/accelerator-optimized-machines>). Compute's
//! `memoryMb` is the GB figure times 1,024, as for the A3 types (1,872 GB = 1,916,928 MiB). Their
//! zones are those of SkyPilot's machine catalogue, which is generated from Compute's
//! `machineTypes.aggregatedList` (skypilot-org/skypilot-catalog, `catalogs/v8/gcp/vms.csv` at
//! `8427bbf`, which also gives the shapes: `a3-ultragpu-8g,224.0,2952.0`,
//! `a4-highgpu-8g,224.0,3968.0`); Google's "GPU regions and zones" page
//! (<https://cloud.google.com/compute/docs/gpus/gpu-regions-zones>) is the authority and may list
//! zones added since. Both types are RDMA machines: their GPU NICs attach to a network with a RoCE
//! network profile of their zone ([`RDMA_MACHINE_TYPES`], `crate::compute::network_profiles`).

/// `(region, zones)`.
pub const REGIONS: &[(&str, &[&str])] = &[
    (
        "us-central1",
        &[
            "us-central1-a",
            "us-central1-b",
            "us-central1-c",
            "us-central1-f",
        ],
    ),
    ("us-east1", &["us-east1-b", "us-east1-c", "us-east1-d"]),
    ("us-east4", &["us-east4-a", "us-east4-b", "us-east4-c"]),
    ("us-east5", &["us-east5-a", "us-east5-b", "us-east5-c"]),
    ("us-south1", &["us-south1-a", "us-south1-b", "us-south1-c"]),
    ("us-west1", &["us-west1-a", "us-west1-b", "us-west1-c"]),
    ("us-west2", &["us-west2-a", "us-west2-b", "us-west2-c"]),
    ("us-west3", &["us-west3-a", "us-west3-b", "us-west3-c"]),
    ("us-west4", &["us-west4-a", "us-west4-b", "us-west4-c"]),
    (
        "europe-north1",
        &["europe-north1-a", "europe-north1-b", "europe-north1-c"],
    ),
    (
        "europe-west1",
        &["europe-west1-b", "europe-west1-c", "europe-west1-d"],
    ),
    (
        "europe-west4",
        &["europe-west4-a", "europe-west4-b", "europe-west4-c"],
    ),
    (
        "asia-northeast1",
        &[
            "asia-northeast1-a",
            "asia-northeast1-b",
            "asia-northeast1-c",
        ],
    ),
    (
        "asia-south1",
        &["asia-south1-a", "asia-south1-b", "asia-south1-c"],
    ),
    (
        "asia-south2",
        &["asia-south2-a", "asia-south2-b", "asia-south2-c"],
    ),
    (
        "asia-southeast1",
        &[
            "asia-southeast1-a",
            "asia-southeast1-b",
            "asia-southeast1-c",
        ],
    ),
];

/// Zones that offer each accelerator-optimized machine type.
pub const GPU_ZONES: &[(&str, &[&str])] = &[
    (
        "a3-highgpu-8g",
        &[
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
        ],
    ),
    (
        "a3-megagpu-8g",
        &[
            "us-central1-a",
            "us-central1-c",
            "us-east4-a",
            "us-east5-a",
            "us-west1-b",
            "europe-west1-b",
            "europe-west4-b",
            "asia-northeast1-b",
            "asia-southeast1-c",
        ],
    ),
    (
        "a3-ultragpu-8g",
        &[
            "us-central1-b",
            "us-east4-b",
            "us-east5-a",
            "us-south1-b",
            "us-west1-c",
            "europe-west1-b",
            "europe-west4-a",
            "asia-south1-b",
            "asia-south2-c",
        ],
    ),
    (
        "a4-highgpu-8g",
        &[
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
        ],
    ),
];

/// The accelerator type and count each accelerator-optimized machine type comes with.
pub const GPU_ACCELERATORS: &[(&str, &str, u32)] = &[
    ("a3-highgpu-8g", "nvidia-h100-80gb", 8),
    ("a3-megagpu-8g", "nvidia-h100-mega-80gb", 8),
    ("a3-ultragpu-8g", "nvidia-h200-141gb", 8),
    ("a4-highgpu-8g", "nvidia-b200", 8),
];

/// The machine types whose GPU NICs are RDMA (RoCE) NICs: their VMs attach to a network with a
/// `<zone>-vpc-roce` network profile of their own zone.
pub const RDMA_MACHINE_TYPES: &[&str] = &["a3-ultragpu-8g", "a4-highgpu-8g"];

/// One predefined machine type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MachineType {
    pub name: String,
    pub cpus: u32,
    /// Memory in MiB, as Compute's `memoryMb`.
    pub memory_mb: u32,
    /// `(accelerator type, count)` for accelerator-optimized types.
    pub accelerator: Option<(&'static str, u32)>,
}

/// `(series, vCPU counts, MiB per vCPU)`: `<series>-<vCPUs>` exists for exactly these counts.
const SERIES: &[(&str, &[u32], u32)] = &[
    ("e2-standard", &[2, 4, 8, 16, 32], 4096),
    ("e2-highmem", &[2, 4, 8, 16], 8192),
    ("e2-highcpu", &[2, 4, 8, 16, 32], 1024),
    ("n1-standard", &[1, 2, 4, 8, 16, 32, 64, 96], 3840),
    ("n1-highmem", &[2, 4, 8, 16, 32, 64, 96], 6656),
    ("n1-highcpu", &[2, 4, 8, 16, 32, 64, 96], 922),
    ("n2-standard", &[2, 4, 8, 16, 32, 48, 64, 80, 96, 128], 4096),
    ("n2-highmem", &[2, 4, 8, 16, 32, 48, 64, 80, 96, 128], 8192),
    ("n2-highcpu", &[2, 4, 8, 16, 32, 48, 64, 80, 96], 1024),
    (
        "n2d-standard",
        &[2, 4, 8, 16, 32, 48, 64, 80, 96, 128, 224],
        4096,
    ),
    ("n2d-highmem", &[2, 4, 8, 16, 32, 48, 64, 80, 96], 8192),
    (
        "n2d-highcpu",
        &[2, 4, 8, 16, 32, 48, 64, 80, 96, 128, 224],
        1024,
    ),
    ("n4-standard", &[2, 4, 8, 16, 32, 48, 64, 80], 4096),
    ("n4-highmem", &[2, 4, 8, 16, 32, 48, 64, 80], 8192),
    ("n4-highcpu", &[2, 4, 8, 16, 32, 48, 64, 80], 2048),
    ("c2-standard", &[4, 8, 16, 30, 60], 4096),
    ("c3-standard", &[4, 8, 22, 44, 88, 176], 4096),
    ("c3-highmem", &[4, 8, 22, 44, 88, 176], 8192),
    ("c3-highcpu", &[4, 8, 22, 44, 88, 176], 2048),
];

/// Types outside the series pattern: shared-core E2 and the GPU types `(name, vCPUs, MiB)`.
const SINGLE: &[(&str, u32, u32)] = &[
    ("e2-micro", 2, 1024),
    ("e2-small", 2, 2048),
    ("e2-medium", 2, 4096),
    ("a3-highgpu-8g", 208, 1_916_928),
    ("a3-megagpu-8g", 208, 1_916_928),
    ("a3-ultragpu-8g", 224, 3_022_848),
    ("a4-highgpu-8g", 224, 4_063_232),
];

/// Every machine type of the catalogue.
pub fn machine_types() -> Vec<MachineType> {
    let mut all: Vec<MachineType> = SINGLE
        .iter()
        .map(|(name, cpus, memory_mb)| MachineType {
            name: name.to_string(),
            cpus: *cpus,
            memory_mb: *memory_mb,
            accelerator: required_accelerator(name),
        })
        .collect();
    for (series, sizes, per_cpu) in SERIES {
        for cpus in *sizes {
            all.push(MachineType {
                name: format!("{series}-{cpus}"),
                cpus: *cpus,
                memory_mb: cpus * per_cpu,
                accelerator: None,
            });
        }
    }
    all
}

/// The catalogue entry for `name`, if the simulator serves that machine type.
pub fn machine_type(name: &str) -> Option<MachineType> {
    if let Some((_, cpus, memory_mb)) = SINGLE.iter().find(|(n, _, _)| *n == name) {
        return Some(MachineType {
            name: name.to_string(),
            cpus: *cpus,
            memory_mb: *memory_mb,
            accelerator: required_accelerator(name),
        });
    }
    let (series, size) = name.rsplit_once('-')?;
    let cpus: u32 = size.parse().ok()?;
    if size != cpus.to_string() {
        return None;
    }
    let (_, _, per_cpu) = SERIES
        .iter()
        .find(|(s, sizes, _)| *s == series && sizes.contains(&cpus))?;
    Some(MachineType {
        name: name.to_string(),
        cpus,
        memory_mb: cpus * per_cpu,
        accelerator: None,
    })
}

pub fn region_exists(region: &str) -> bool {
    REGIONS.iter().any(|(r, _)| *r == region)
}

pub fn zone_exists(zone: &str) -> bool {
    REGIONS.iter().any(|(_, zones)| zones.contains(&zone))
}

/// The region a zone belongs to.
pub fn region_of_zone(zone: &str) -> Option<&'static str> {
    REGIONS
        .iter()
        .find(|(_, zones)| zones.contains(&zone))
        .map(|(r, _)| *r)
}

/// The zones of a region.
pub fn zones_of(region: &str) -> &'static [&'static str] {
    REGIONS
        .iter()
        .find(|(r, _)| *r == region)
        .map(|(_, z)| *z)
        .unwrap_or(&[])
}

/// True if `machine_type` is in the catalogue.
pub fn machine_type_known(name: &str) -> bool {
    machine_type(name).is_some()
}

/// True if `zone` offers `machine_type`: a catalogue type, in a zone listed for it (GPU types) or
/// in any simulated zone (general purpose).
pub fn zone_offers(zone: &str, machine_type: &str) -> bool {
    if !zone_exists(zone) || !machine_type_known(machine_type) {
        return false;
    }
    match GPU_ZONES.iter().find(|(m, _)| *m == machine_type) {
        Some((_, zones)) => zones.contains(&zone),
        None => true,
    }
}

/// The zones that offer `machine_type` when it is a GPU type (None for general-purpose types,
/// which every zone offers).
pub fn gpu_zones(machine_type: &str) -> Option<&'static [&'static str]> {
    GPU_ZONES
        .iter()
        .find(|(m, _)| *m == machine_type)
        .map(|(_, zones)| *zones)
}

/// True for the machine types whose GPU NICs are RDMA NICs ([`RDMA_MACHINE_TYPES`]).
pub fn is_rdma_machine(machine_type: &str) -> bool {
    RDMA_MACHINE_TYPES.contains(&machine_type)
}

/// The zones that offer at least one RDMA machine type, in [`REGIONS`] order: the zones that
/// have a `<zone>-vpc-roce` network profile.
pub fn rdma_zones() -> Vec<&'static str> {
    REGIONS
        .iter()
        .flat_map(|(_, zones)| zones.iter().copied())
        .filter(|zone| RDMA_MACHINE_TYPES.iter().any(|m| zone_offers(zone, m)))
        .collect()
}

/// Every accelerator type of the catalogue, with the zones that offer a machine type carrying it.
pub fn accelerator_types() -> Vec<(&'static str, Vec<&'static str>)> {
    GPU_ACCELERATORS
        .iter()
        .map(|(machine, accelerator, _)| (*accelerator, gpu_zones(machine).unwrap_or(&[]).to_vec()))
        .collect()
}

/// `(accelerator type, count)` a GPU machine type requires.
pub fn required_accelerator(machine_type: &str) -> Option<(&'static str, u32)> {
    GPU_ACCELERATORS
        .iter()
        .find(|(m, _, _)| *m == machine_type)
        .map(|(_, a, n)| (*a, *n))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a3_mega_is_offered_only_in_listed_zones() {
        assert!(zone_offers("us-central1-a", "a3-megagpu-8g"));
        assert!(!zone_offers("us-central1-b", "a3-megagpu-8g"));
        assert!(zone_offers("us-central1-b", "e2-standard-4"));
        assert!(!zone_offers("mars-1a", "e2-standard-4"));
        assert_eq!(region_of_zone("europe-west4-b"), Some("europe-west4"));
        assert_eq!(
            required_accelerator("a3-highgpu-8g"),
            Some(("nvidia-h100-80gb", 8))
        );
    }

    #[test]
    fn a3_ultra_and_a4_have_their_shapes_and_zones() {
        let ultra = machine_type("a3-ultragpu-8g").unwrap();
        assert_eq!(
            (ultra.cpus, ultra.memory_mb, ultra.accelerator),
            (224, 2952 * 1024, Some(("nvidia-h200-141gb", 8)))
        );
        let a4 = machine_type("a4-highgpu-8g").unwrap();
        assert_eq!(
            (a4.cpus, a4.memory_mb, a4.accelerator),
            (224, 3968 * 1024, Some(("nvidia-b200", 8)))
        );
        assert!(zone_offers("us-central1-b", "a3-ultragpu-8g"));
        assert!(!zone_offers("us-central1-a", "a3-ultragpu-8g"));
        assert!(zone_offers("europe-west4-b", "a4-highgpu-8g"));
        assert!(!zone_offers("europe-west4-a", "a4-highgpu-8g"));
        // Every listed zone is a simulated zone.
        for (machine, zones) in GPU_ZONES {
            for zone in *zones {
                assert!(zone_exists(zone), "{machine} in {zone}");
            }
        }
        assert!(is_rdma_machine("a4-highgpu-8g") && !is_rdma_machine("a3-megagpu-8g"));
        let rdma = rdma_zones();
        assert!(rdma.contains(&"us-central1-b") && rdma.contains(&"us-west3-c"));
        assert!(!rdma.contains(&"us-central1-a"));
        assert_eq!(
            accelerator_types()
                .iter()
                .map(|(a, _)| *a)
                .collect::<Vec<_>>(),
            [
                "nvidia-h100-80gb",
                "nvidia-h100-mega-80gb",
                "nvidia-h200-141gb",
                "nvidia-b200"
            ]
        );
    }

    #[test]
    fn only_catalogue_machine_types_exist() {
        for known in [
            "e2-standard-4",
            "e2-standard-32",
            "e2-medium",
            "n1-standard-1",
            "n2-highmem-128",
            "n2d-standard-224",
            "c3-standard-22",
            "a3-megagpu-8g",
        ] {
            assert!(machine_type_known(known), "{known}");
        }
        for unknown in [
            "e2-standard-3",
            "e2-standard-04",
            "e2-highmem-32",
            "n1-standard-3",
            "n2-standard-6",
            "e2-custom-4-8192",
            "a3-megagpu-4g",
            "e2-",
            "",
        ] {
            assert!(!machine_type_known(unknown), "{unknown}");
            assert!(!zone_offers("us-central1-a", unknown), "{unknown}");
        }
        let mega = machine_type("a3-megagpu-8g").unwrap();
        assert_eq!(
            (mega.cpus, mega.accelerator),
            (208, Some(("nvidia-h100-mega-80gb", 8)))
        );
        assert_eq!(machine_type("e2-standard-8").unwrap().memory_mb, 32768);
        let all = machine_types();
        assert!(
            all.iter()
                .all(|m| machine_type(&m.name).as_ref() == Some(m))
        );
        assert!(all.len() > 100, "{}", all.len());
    }
}
