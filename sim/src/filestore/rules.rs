//! Filestore request rules: the instance enum tables (proto numbers of the
//! `google-cloud-filestore-v1` crate), capacity bands per tier, share and instance names,
//! tier × location, and network references.

use crate::enums::{EnumField, EnumTable};
use crate::error::{GcpError, GcpResult};
use crate::geo;
use crate::http;
use serde_json::{Value, json};

/// Enum fields of `google.cloud.filestore.v1.Instance`, with the proto numbers of the
/// `google-cloud-filestore-v1` crate. Names that the discovery document lists but the crate
/// does not know yet (`MODE_IPV6`, `PRIVATE_SERVICE_CONNECT`, replica `PAUSING`...) carry the
/// next free numbers of their enum; they are marked "assumed".
pub const INSTANCE_ENUMS: EnumTable = &[
    EnumField {
        path: "state",
        values: &[
            (0, "STATE_UNSPECIFIED"),
            (1, "CREATING"),
            (2, "READY"),
            (3, "REPAIRING"),
            (4, "DELETING"),
            (6, "ERROR"),
            (7, "RESTORING"),
            (8, "SUSPENDED"),
            (9, "SUSPENDING"),
            (10, "RESUMING"),
            (12, "REVERTING"),
            (13, "PROMOTING"),
        ],
    },
    EnumField {
        path: "tier",
        values: &[
            (0, "TIER_UNSPECIFIED"),
            (1, "STANDARD"),
            (2, "PREMIUM"),
            (3, "BASIC_HDD"),
            (4, "BASIC_SSD"),
            (5, "HIGH_SCALE_SSD"),
            (6, "ENTERPRISE"),
            (7, "ZONAL"),
            (8, "REGIONAL"),
        ],
    },
    EnumField {
        path: "protocol",
        values: &[
            (0, "FILE_PROTOCOL_UNSPECIFIED"),
            (1, "NFS_V3"),
            (2, "NFS_V4_1"),
        ],
    },
    EnumField {
        path: "suspensionReasons[]",
        values: &[(0, "SUSPENSION_REASON_UNSPECIFIED"), (1, "KMS_KEY_ISSUE")],
    },
    EnumField {
        path: "networks[].modes[]",
        // MODE_IPV6 = 2 assumed.
        values: &[
            (0, "ADDRESS_MODE_UNSPECIFIED"),
            (1, "MODE_IPV4"),
            (2, "MODE_IPV6"),
        ],
    },
    EnumField {
        path: "networks[].connectMode",
        // PRIVATE_SERVICE_CONNECT = 3 assumed.
        values: &[
            (0, "CONNECT_MODE_UNSPECIFIED"),
            (1, "DIRECT_PEERING"),
            (2, "PRIVATE_SERVICE_ACCESS"),
            (3, "PRIVATE_SERVICE_CONNECT"),
        ],
    },
    EnumField {
        path: "fileShares[].nfsExportOptions[].accessMode",
        values: &[
            (0, "ACCESS_MODE_UNSPECIFIED"),
            (1, "READ_ONLY"),
            (2, "READ_WRITE"),
        ],
    },
    EnumField {
        path: "fileShares[].nfsExportOptions[].squashMode",
        values: &[
            (0, "SQUASH_MODE_UNSPECIFIED"),
            (1, "NO_ROOT_SQUASH"),
            (2, "ROOT_SQUASH"),
        ],
    },
    EnumField {
        path: "replication.role",
        values: &[(0, "ROLE_UNSPECIFIED"), (1, "ACTIVE"), (2, "STANDBY")],
    },
    EnumField {
        path: "replication.replicas[].state",
        // PROMOTING..RESUMING = 6..9 assumed.
        values: &[
            (0, "STATE_UNSPECIFIED"),
            (1, "CREATING"),
            (3, "READY"),
            (4, "REMOVING"),
            (5, "FAILED"),
            (6, "PROMOTING"),
            (7, "PAUSING"),
            (8, "PAUSED"),
            (9, "RESUMING"),
        ],
    },
    EnumField {
        path: "replication.replicas[].stateReasons[]",
        // PAUSE_FAILED, RESUME_FAILED = 3, 4 assumed.
        values: &[
            (0, "STATE_REASON_UNSPECIFIED"),
            (1, "PEER_INSTANCE_UNREACHABLE"),
            (2, "REMOVE_FAILED"),
            (3, "PAUSE_FAILED"),
            (4, "RESUME_FAILED"),
        ],
    },
];

/// The instance table under `instances[]`, for list responses.
pub const LIST_ENUMS: EnumTable = &[
    EnumField {
        path: "instances[].state",
        values: INSTANCE_ENUMS[0].values,
    },
    EnumField {
        path: "instances[].tier",
        values: INSTANCE_ENUMS[1].values,
    },
    EnumField {
        path: "instances[].protocol",
        values: INSTANCE_ENUMS[2].values,
    },
    EnumField {
        path: "instances[].suspensionReasons[]",
        values: INSTANCE_ENUMS[3].values,
    },
    EnumField {
        path: "instances[].networks[].modes[]",
        values: INSTANCE_ENUMS[4].values,
    },
    EnumField {
        path: "instances[].networks[].connectMode",
        values: INSTANCE_ENUMS[5].values,
    },
    EnumField {
        path: "instances[].fileShares[].nfsExportOptions[].accessMode",
        values: INSTANCE_ENUMS[6].values,
    },
    EnumField {
        path: "instances[].fileShares[].nfsExportOptions[].squashMode",
        values: INSTANCE_ENUMS[7].values,
    },
    EnumField {
        path: "instances[].replication.role",
        values: INSTANCE_ENUMS[8].values,
    },
];

pub(super) fn invalid(message: impl Into<String>) -> GcpError {
    GcpError::invalid_reason("badRequest", message)
}

/// The capacity rule of a tier: `(bands of (min, max, step))` in GiB.
pub fn capacity_bands(tier: &str) -> &'static [(i64, i64, i64)] {
    match tier {
        "BASIC_HDD" | "STANDARD" => &[(1024, 65433, 1)],
        "BASIC_SSD" | "PREMIUM" => &[(2560, 65433, 1)],
        "HIGH_SCALE_SSD" => &[(10240, 102400, 2560)],
        "ZONAL" | "REGIONAL" => &[(1024, 9984, 256), (10240, 102400, 2560)],
        "ENTERPRISE" => &[(1024, 10240, 256)],
        _ => &[],
    }
}

/// Checks a share capacity against the tier's bands.
pub fn check_capacity(tier: &str, capacity: i64) -> GcpResult<()> {
    let bands = capacity_bands(tier);
    if bands.iter().any(|(min, max, step)| {
        capacity >= *min && capacity <= *max && (capacity - min) % step == 0
    }) {
        return Ok(());
    }
    let min = bands.first().map(|b| b.0).unwrap_or(0);
    let max = bands.last().map(|b| b.1).unwrap_or(0);
    if capacity < min || capacity > max {
        return Err(invalid(format!(
            "Invalid capacity {capacity} GB for tier {tier}: the capacity must be between {min} GB and {max} GB."
        )));
    }
    let rule = bands
        .iter()
        .map(|(min, max, step)| format!("in steps of {step} GB from {min} GB to {max} GB"))
        .collect::<Vec<_>>()
        .join(", or ");
    Err(invalid(format!(
        "Invalid capacity {capacity} GB for tier {tier}: the capacity must be {rule}."
    )))
}

/// True if the tier's instances live in a zone (the others live in a region).
pub(super) fn tier_is_zonal(tier: &str) -> bool {
    matches!(
        tier,
        "BASIC_HDD" | "BASIC_SSD" | "STANDARD" | "PREMIUM" | "HIGH_SCALE_SSD" | "ZONAL"
    )
}

pub(super) fn is_basic(tier: &str) -> bool {
    matches!(tier, "BASIC_HDD" | "BASIC_SSD" | "STANDARD" | "PREMIUM")
}

/// Share names: a lowercase letter, then lowercase letters, digits or underscores; at most 16
/// characters on basic tiers and 63 on the others.
pub(super) fn check_share_name(tier: &str, name: &str) -> GcpResult<()> {
    let max = if is_basic(tier) { 16 } else { 63 };
    let bytes = name.as_bytes();
    let ok = !bytes.is_empty()
        && bytes.len() <= max
        && bytes[0].is_ascii_lowercase()
        && bytes
            .iter()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || *b == b'_');
    if ok {
        return Ok(());
    }
    Err(invalid(format!(
        "Invalid file share name '{name}': the name must be 1 to {max} characters long, start with a lowercase letter and contain only lowercase letters, numbers and underscores."
    )))
}

pub(super) fn capacity_of(share: &Value) -> GcpResult<i64> {
    match share.get("capacityGb") {
        Some(Value::String(s)) => s.parse::<i64>().map_err(|_| {
            invalid(format!(
                "Invalid value at 'instance.file_shares[0].capacity_gb' (TYPE_INT64), \"{s}\""
            ))
        }),
        Some(Value::Number(n)) => n.as_i64().ok_or_else(|| {
            invalid(format!(
                "Invalid value at 'instance.file_shares[0].capacity_gb' (TYPE_INT64), {n}"
            ))
        }),
        None | Some(Value::Null) => Ok(0),
        Some(other) => Err(invalid(format!(
            "Invalid value at 'instance.file_shares[0].capacity_gb' (TYPE_INT64), {other}"
        ))),
    }
}

/// Checks the single file share of an instance and normalises `capacityGb` to a string.
pub(super) fn check_file_shares(tier: &str, instance: &mut Value) -> GcpResult<()> {
    let shares = instance
        .get_mut("fileShares")
        .and_then(Value::as_array_mut)
        .filter(|s| !s.is_empty())
        .ok_or_else(|| invalid("Exactly one file share must be specified."))?;
    if shares.len() != 1 {
        return Err(invalid("Exactly one file share must be specified."));
    }
    let share = &mut shares[0];
    let name = share.get("name").and_then(Value::as_str).unwrap_or("");
    check_share_name(tier, name)?;
    let capacity = capacity_of(share)?;
    check_capacity(tier, capacity)?;
    share["capacityGb"] = json!(capacity.to_string());
    Ok(())
}

/// Splits a network reference (`name` or `projects/P/global/networks/N`) into project and name.
pub(super) fn network_ref<'a>(project: &'a str, network: &'a str) -> (&'a str, &'a str) {
    let parts: Vec<&str> = network.split('/').collect();
    match parts.as_slice() {
        [.., "projects", p, "global", "networks", n] => (p, n),
        _ => (project, network),
    }
}

pub(super) fn check_instance_id(id: &str) -> GcpResult<()> {
    if http::valid_name(id, 63) {
        return Ok(());
    }
    Err(invalid(format!(
        "Invalid instance_id '{id}': the id must be 1 to 63 characters long, start with a lowercase letter, contain only lowercase letters, numbers and hyphens, and not end with a hyphen."
    )))
}

pub(super) fn check_location(location: &str) -> GcpResult<()> {
    if geo::zone_exists(location) || geo::region_exists(location) {
        return Ok(());
    }
    Err(invalid(format!(
        "Location '{location}' is not a valid location."
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capacity_follows_tier_bands() {
        assert!(check_capacity("BASIC_HDD", 1024).is_ok());
        assert!(check_capacity("BASIC_HDD", 1023).is_err());
        assert!(check_capacity("BASIC_HDD", 65433).is_ok());
        assert!(check_capacity("BASIC_HDD", 65434).is_err());
        assert!(check_capacity("BASIC_SSD", 2559).is_err());
        assert!(check_capacity("BASIC_SSD", 2560).is_ok());
        assert!(check_capacity("HIGH_SCALE_SSD", 12800).is_ok());
        assert!(check_capacity("HIGH_SCALE_SSD", 11000).is_err());
        assert!(check_capacity("ZONAL", 1280).is_ok());
        assert!(check_capacity("ZONAL", 1300).is_err());
        assert!(check_capacity("ZONAL", 9984).is_ok());
        assert!(check_capacity("ZONAL", 10000).is_err());
        assert!(check_capacity("REGIONAL", 102400).is_ok());
        assert!(check_capacity("ENTERPRISE", 10240).is_ok());
        let err = check_capacity("BASIC_SSD", 1024).unwrap_err();
        assert_eq!((err.code, err.status), (400, "INVALID_ARGUMENT"));
    }

    #[test]
    fn share_names_and_network_refs() {
        assert!(check_share_name("BASIC_SSD", "nfsshare").is_ok());
        assert!(check_share_name("BASIC_SSD", "a_very_long_share_name").is_err());
        assert!(check_share_name("ZONAL", "a_very_long_share_name").is_ok());
        assert!(check_share_name("ZONAL", "Share").is_err());
        assert!(check_share_name("ZONAL", "1share").is_err());
        assert_eq!(network_ref("p", "net"), ("p", "net"));
        assert_eq!(
            network_ref("p", "projects/host/global/networks/shared"),
            ("host", "shared")
        );
    }
}
