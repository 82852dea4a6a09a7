//! GKE versions: the simulated `serverConfig` (valid master and node versions, each release
//! channel's default and valid versions) and the resolution of requested versions ("1.32",
//! "latest", "-", exact) the way GKE does it.

use super::enum_tables;
use crate::error::GcpResult;
use crate::http::{self, Query};
use crate::server::Shared;
use axum::extract::{Path, State};
use axum::response::Response;
use serde_json::{Value, json};
use std::sync::Arc;

/// `(channel, default version, valid versions newest first)`.
pub const CHANNELS: &[(&str, &str, &[&str])] = &[
    (
        "RAPID",
        "1.34.1-gke.1829001",
        &["1.34.1-gke.1829001", "1.34.0-gke.2201000"],
    ),
    (
        "REGULAR",
        "1.33.5-gke.1080000",
        &[
            "1.33.5-gke.1080000",
            "1.33.4-gke.1245000",
            "1.32.12-gke.1050000",
        ],
    ),
    (
        "STABLE",
        "1.32.12-gke.1050000",
        &[
            "1.32.12-gke.1050000",
            "1.32.11-gke.1174000",
            "1.31.14-gke.1243000",
        ],
    ),
    (
        "EXTENDED",
        "1.31.14-gke.1243000",
        &["1.31.14-gke.1243000", "1.30.14-gke.1922000"],
    ),
];

/// Master versions valid outside any channel besides the channels' versions.
const EXTRA_MASTER_VERSIONS: &[&str] = &[
    "1.32.4-gke.1767000",
    "1.31.13-gke.1023000",
    "1.29.15-gke.2467000",
];

/// The default version for clusters without a channel (the REGULAR default, as GKE does).
pub const DEFAULT_CLUSTER_VERSION: &str = "1.33.5-gke.1080000";

const VALID_IMAGE_TYPES: &[&str] = &[
    "COS_CONTAINERD",
    "UBUNTU_CONTAINERD",
    "WINDOWS_LTSC_CONTAINERD",
];

/// `1.32.12-gke.1050000` → `[1, 32, 12, 1050000]`, for ordering.
fn version_key(version: &str) -> Vec<u64> {
    version
        .split(|c: char| !c.is_ascii_digit())
        .filter(|s| !s.is_empty())
        .filter_map(|s| s.parse().ok())
        .collect()
}

/// Every valid master version, newest first.
pub fn master_versions() -> Vec<&'static str> {
    let mut all: Vec<&str> = CHANNELS
        .iter()
        .flat_map(|(_, _, v)| v.iter().copied())
        .chain(EXTRA_MASTER_VERSIONS.iter().copied())
        .collect();
    all.sort_by_key(|v| std::cmp::Reverse(version_key(v)));
    all.dedup();
    all
}

fn channel(name: &str) -> Option<&'static (&'static str, &'static str, &'static [&'static str])> {
    CHANNELS.iter().find(|(c, _, _)| *c == name)
}

/// Which kind of version is being resolved (only changes the error message).
#[derive(Clone, Copy)]
pub enum VersionKind {
    Master,
    Node,
}

/// Resolves a requested version within `channel` (`None` or `UNSPECIFIED` = no channel).
/// `""`, `"-"` give the default, `"latest"` the newest, `"1.32"` the newest 1.32.x, an exact
/// version itself; anything else is GKE's 400: `Master version "X" is unsupported.` for a
/// version GKE does not offer at all, and, for a cluster in a channel, `Master version must be
/// one of "STABLE" channel supported versions [a, b, c].` (oldest first) for one offered only
/// outside it — the text of real answers quoted in
/// <https://github.com/terraform-google-modules/terraform-google-kubernetes-engine/issues/2177>
/// and <https://github.com/didier-durand/microservices-on-cloud-kubernetes/pull/1>.
pub fn resolve(
    requested: &str,
    channel_name: Option<&str>,
    kind: VersionKind,
) -> GcpResult<String> {
    resolve_among(requested, channel_name, kind, &[])
}

/// [`resolve`] for a control-plane upgrade of a cluster at `current`: a cluster in a channel may
/// also move to a patch another channel offers for the minor it already runs
/// (<https://cloud.google.com/kubernetes-engine/docs/how-to/upgrading-a-cluster>, "Supported
/// versions": e.g. 1.21.12-gke.1700 in Regular → 1.21.13-gke.900 from Rapid).
pub fn resolve_upgrade(
    requested: &str,
    channel_name: Option<&str>,
    current: &str,
) -> GcpResult<String> {
    let minor = |v: &str| version_key(v).into_iter().take(2).collect::<Vec<_>>();
    let same_minor: Vec<&'static str> = CHANNELS
        .iter()
        .flat_map(|(_, _, v)| v.iter().copied())
        .filter(|v| minor(v) == minor(current))
        .collect();
    resolve_among(requested, channel_name, VersionKind::Master, &same_minor)
}

fn resolve_among(
    requested: &str,
    channel_name: Option<&str>,
    kind: VersionKind,
    also: &[&'static str],
) -> GcpResult<String> {
    let chosen = channel_name.and_then(channel);
    let mut candidates: Vec<&str> = match chosen {
        Some((_, _, valid)) => valid.to_vec(),
        None => master_versions(),
    };
    for version in also {
        if !candidates.contains(version) {
            candidates.push(version);
        }
    }
    candidates.sort_by_key(|v| std::cmp::Reverse(version_key(v)));
    let default = chosen
        .map(|(_, d, _)| *d)
        .unwrap_or(DEFAULT_CLUSTER_VERSION);
    if let Some(found) = pick(requested, &candidates, default) {
        return Ok(found.to_string());
    }
    let what = match kind {
        VersionKind::Master => "Master",
        VersionKind::Node => "Node",
    };
    if let Some((name, _, valid)) = chosen
        && pick(requested, &master_versions(), default).is_some()
    {
        let mut oldest_first = valid.to_vec();
        oldest_first.sort_by_key(|v| version_key(v));
        return Err(super::bad_request(format!(
            "{what} version must be one of \"{name}\" channel supported versions [{}].",
            oldest_first.join(", ")
        )));
    }
    Err(super::bad_request(format!(
        "{what} version \"{requested}\" is unsupported."
    )))
}

/// The version `requested` names among `candidates` (newest first).
fn pick<'a>(requested: &str, candidates: &[&'a str], default: &'a str) -> Option<&'a str> {
    match requested {
        "" | "-" => Some(default),
        "latest" => candidates.first().copied(),
        exact if candidates.contains(&exact) => candidates.iter().copied().find(|v| *v == exact),
        prefix => candidates
            .iter()
            .copied()
            .filter(|v| {
                v.starts_with(&format!("{prefix}.")) || v.starts_with(&format!("{prefix}-"))
            })
            .max_by_key(|v| version_key(v)),
    }
}

/// The `ServerConfig` resource.
pub fn server_config() -> Value {
    let versions = master_versions();
    let channels: Vec<Value> = CHANNELS
        .iter()
        .map(|(name, default, valid)| {
            json!({
                "channel": name,
                "defaultVersion": default,
                "validVersions": valid,
                "upgradeTargetVersion": valid[0],
            })
        })
        .collect();
    json!({
        "defaultClusterVersion": DEFAULT_CLUSTER_VERSION,
        "validNodeVersions": versions,
        "defaultImageType": "COS_CONTAINERD",
        "validImageTypes": VALID_IMAGE_TYPES,
        "validMasterVersions": versions,
        "channels": channels,
    })
}

/// `GET .../locations/{location}/serverConfig`.
pub async fn get_server_config(
    State(shared): State<Arc<Shared>>,
    Path((_project, location)): Path<(String, String)>,
    query: Query,
) -> GcpResult<Response> {
    super::rules::check_location(&location)?;
    shared.read_world(|_, _| ());
    Ok(http::proto_json(
        server_config(),
        enum_tables::SERVER_CONFIG,
        &query,
    ))
}

/// The error for an unknown master version.
#[cfg(test)]
fn unsupported(requested: &str) -> crate::error::GcpError {
    super::bad_request(format!("Master version \"{requested}\" is unsupported."))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_resolve_like_gke() {
        let m = VersionKind::Master;
        assert_eq!(
            resolve("", Some("REGULAR"), m).unwrap(),
            "1.33.5-gke.1080000"
        );
        assert_eq!(
            resolve("-", Some("STABLE"), m).unwrap(),
            "1.32.12-gke.1050000"
        );
        assert_eq!(
            resolve("latest", Some("RAPID"), m).unwrap(),
            "1.34.1-gke.1829001"
        );
        assert_eq!(
            resolve("1.32", Some("REGULAR"), m).unwrap(),
            "1.32.12-gke.1050000"
        );
        assert_eq!(resolve("1.32", None, m).unwrap(), "1.32.12-gke.1050000");
        assert_eq!(
            resolve("1.32.4-gke.1767000", None, m).unwrap(),
            "1.32.4-gke.1767000"
        );
        assert_eq!(resolve("1.29", None, m).unwrap(), "1.29.15-gke.2467000");
        assert_eq!(resolve("1.3", None, m).unwrap_err(), unsupported("1.3"));
        let err = resolve("1.29", Some("REGULAR"), m).unwrap_err();
        assert_eq!((err.code, err.reason.as_str()), (400, "badRequest"));
        assert_eq!(
            err.message,
            "Master version must be one of \"REGULAR\" channel supported versions \
             [1.32.12-gke.1050000, 1.33.4-gke.1245000, 1.33.5-gke.1080000]."
        );
        assert_eq!(master_versions()[0], "1.34.1-gke.1829001");
        assert_eq!(master_versions().last(), Some(&"1.29.15-gke.2467000"));
    }

    #[test]
    fn an_upgrade_may_take_another_channels_patch_of_the_current_minor() {
        // REGULAR offers no 1.32.11; STABLE does, and the cluster runs 1.32.
        assert_eq!(
            resolve_upgrade(
                "1.32.11-gke.1174000",
                Some("REGULAR"),
                "1.32.12-gke.1050000"
            )
            .unwrap(),
            "1.32.11-gke.1174000"
        );
        assert!(
            resolve_upgrade("1.32.11-gke.1174000", Some("REGULAR"), "1.33.5-gke.1080000").is_err()
        );
        assert_eq!(
            resolve_upgrade("1.33", Some("STABLE"), "1.32.12-gke.1050000")
                .unwrap_err()
                .message,
            "Master version must be one of \"STABLE\" channel supported versions \
             [1.31.14-gke.1243000, 1.32.11-gke.1174000, 1.32.12-gke.1050000]."
        );
        assert_eq!(
            resolve_upgrade("1.33", Some("RAPID"), "1.33.5-gke.1080000").unwrap(),
            "1.33.5-gke.1080000"
        );
        assert_eq!(
            resolve_upgrade("-", Some("REGULAR"), "1.32.12-gke.1050000").unwrap(),
            "1.33.5-gke.1080000"
        );
        assert_eq!(
            resolve_upgrade("1.99", None, "1.32.12-gke.1050000")
                .unwrap_err()
                .message,
            "Master version \"1.99\" is unsupported."
        );
    }
}
