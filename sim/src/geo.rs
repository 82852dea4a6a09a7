//! The simulated geography: regions, their zones, and which machine types each zone offers.
//!
//! A small fixed table, enough for realistic checks ("a3-megagpu-8g is not offered in
//! us-central1-b"). E2 and N2 machine types are offered everywhere; A3 machine types only in the
//! zones listed here.

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
    ("us-east4", &["us-east4-a", "us-east4-b", "us-east4-c"]),
    ("us-east5", &["us-east5-a", "us-east5-b", "us-east5-c"]),
    ("us-west1", &["us-west1-a", "us-west1-b", "us-west1-c"]),
    ("us-west4", &["us-west4-a", "us-west4-b", "us-west4-c"]),
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
        "asia-southeast1",
        &[
            "asia-southeast1-a",
            "asia-southeast1-b",
            "asia-southeast1-c",
        ],
    ),
];

/// Zones that offer each A3 machine type.
pub const A3_ZONES: &[(&str, &[&str])] = &[
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
];

/// The accelerator type and count each A3 machine type comes with.
pub const A3_ACCELERATORS: &[(&str, &str, u32)] = &[
    ("a3-highgpu-8g", "nvidia-h100-80gb", 8),
    ("a3-megagpu-8g", "nvidia-h100-mega-80gb", 8),
];

/// Machine-type families offered in every zone.
const GENERAL_FAMILIES: &[&str] = &["e2-", "n2-", "n1-", "n2d-", "c3-"];

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

/// True if `machine_type` is a known machine type (general-purpose or A3).
pub fn machine_type_known(machine_type: &str) -> bool {
    A3_ZONES.iter().any(|(m, _)| *m == machine_type)
        || GENERAL_FAMILIES.iter().any(|f| machine_type.starts_with(f))
}

/// True if `zone` offers `machine_type`.
pub fn zone_offers(zone: &str, machine_type: &str) -> bool {
    if !zone_exists(zone) {
        return false;
    }
    match A3_ZONES.iter().find(|(m, _)| *m == machine_type) {
        Some((_, zones)) => zones.contains(&zone),
        None => GENERAL_FAMILIES.iter().any(|f| machine_type.starts_with(f)),
    }
}

/// `(accelerator type, count)` an A3 machine type requires.
pub fn required_accelerator(machine_type: &str) -> Option<(&'static str, u32)> {
    A3_ACCELERATORS
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
}
