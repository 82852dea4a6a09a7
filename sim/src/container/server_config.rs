//! GKE versions: the simulated `serverConfig` (valid master and node versions, each release
//! channel's default and valid versions) and the resolution of requested versions ("1.32",
//! "latest", "-", exact) the way GKE does it.
//!
//! The offer of time zero is fixed ([`CHANNELS`]); a world file's `[gke]` table ([`Schedule`])
//! adds builds that become valid in a channel, and the channel's default (its
//! `upgradeTargetVersion` too), at given simulated times. [`Offer::at`] is the offer at one
//! time; `getServerConfig` answers the offer of the current simulated time.

use super::enum_tables;
use crate::clock::SimTime;
use crate::error::GcpResult;
use crate::http::{self, Query};
use crate::shared::Shared;
pub use crate::state::container::{Release, Schedule};
use crate::world::World;
use axum::extract::{Path, State};
use axum::response::Response;
use chrono::{DateTime, Utc};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::sync::Arc;

/// `(channel, default version, valid versions newest first)`.
pub const CHANNELS: &[(&str, &str, &[&str])] = &[
    (
        "RAPID",
        "1.34.1-gke.1829001",
        &[
            "1.35.0-gke.2398000",
            "1.34.1-gke.1829001",
            "1.34.0-gke.2201000",
        ],
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

/// Every valid master version at time zero, newest first.
pub fn master_versions() -> Vec<String> {
    Offer::at_zero().master_versions()
}

/// GKE supports a minor for 14 months in the standard channels
/// (<https://cloud.google.com/kubernetes-engine/versioning>, "Support period"); the simulator
/// counts that from the world's time zero for a minor the schedule does not date.
pub const DEFAULT_SUPPORT_DAYS: i64 = 426;

impl Schedule {
    /// The problems of a schedule, for the world file's checks.
    pub fn problems(&self) -> Vec<(Option<usize>, String)> {
        let mut out = vec![];
        for (i, r) in self.releases.iter().enumerate() {
            if channel_at_zero(&r.channel).is_none() {
                out.push((
                    Some(i),
                    format!(
                        "unknown channel `{}` (RAPID, REGULAR, STABLE or EXTENDED)",
                        r.channel
                    ),
                ));
            }
            let parsed = super::skew::Version::parse(&r.version);
            if parsed.is_none_or(|v| v.build == 0) {
                out.push((
                    Some(i),
                    format!(
                        "version `{}` is not a GKE build (MAJOR.MINOR.PATCH-gke.N)",
                        r.version
                    ),
                ));
            }
            if r.default_after_secs.is_some_and(|d| d < r.valid_after_secs) {
                out.push((
                    Some(i),
                    "default_after_secs comes before valid_after_secs".to_string(),
                ));
            }
        }
        for (minor, at) in &self.end_of_support {
            let digits = minor.split('.').collect::<Vec<_>>();
            if digits.len() != 2 || digits.iter().any(|d| d.parse::<u64>().is_err()) {
                out.push((
                    None,
                    format!("end_of_support key `{minor}` is not a minor (\"1.33\")"),
                ));
            }
            if DateTime::parse_from_rfc3339(at).is_err() {
                out.push((
                    None,
                    format!("end_of_support of {minor}: `{at}` is not an RFC 3339 time"),
                ));
            }
        }
        out
    }

    /// When support of `minor` (`"1.33"`) ends, in a world whose time zero is `epoch`.
    pub fn end_of_support(&self, minor: &str, epoch: DateTime<Utc>) -> DateTime<Utc> {
        self.end_of_support
            .get(minor)
            .and_then(|t| DateTime::parse_from_rfc3339(t).ok())
            .map(|t| t.with_timezone(&Utc))
            .unwrap_or(epoch + chrono::Duration::days(DEFAULT_SUPPORT_DAYS))
    }

    /// The simulated times at which the offer changes, in order.
    pub fn change_times(&self) -> Vec<SimTime> {
        let mut out: Vec<SimTime> = self
            .releases
            .iter()
            .flat_map(|r| [Some(r.valid_after_secs), r.default_after_secs])
            .flatten()
            .map(|s| SimTime(s.saturating_mul(1000)))
            .collect();
        out.sort();
        out.dedup();
        out
    }
}

/// A channel's offer at one time.
#[derive(Debug, Clone, PartialEq)]
pub struct ChannelOffer {
    pub name: String,
    /// The default for new clusters, and the auto-upgrade target (`upgradeTargetVersion`).
    pub default: String,
    /// Newest first.
    pub valid: Vec<String>,
}

/// What `serverConfig` offers at one simulated time.
#[derive(Debug, Clone, PartialEq)]
pub struct Offer {
    pub channels: Vec<ChannelOffer>,
}

impl Offer {
    /// The fixed offer of time zero ([`CHANNELS`]).
    pub fn at_zero() -> Offer {
        Offer {
            channels: CHANNELS
                .iter()
                .map(|(name, default, valid)| ChannelOffer {
                    name: name.to_string(),
                    default: default.to_string(),
                    valid: valid.iter().map(|v| v.to_string()).collect(),
                })
                .collect(),
        }
    }

    /// The offer at `t`: time zero's, plus the schedule's releases valid by then; a release
    /// whose default time has come is its channel's default (the latest such time wins).
    pub fn at(schedule: Option<&Schedule>, t: SimTime) -> Offer {
        let mut offer = Offer::at_zero();
        let Some(schedule) = schedule else {
            return offer;
        };
        let mut defaults: BTreeMap<String, (u64, String)> = BTreeMap::new();
        for r in &schedule.releases {
            let Some(channel) = offer.channels.iter_mut().find(|c| c.name == r.channel) else {
                continue;
            };
            if r.valid_after_secs.saturating_mul(1000) > t.0 {
                continue;
            }
            if !channel.valid.contains(&r.version) {
                channel.valid.push(r.version.clone());
            }
            if let Some(d) = r.default_after_secs
                && d.saturating_mul(1000) <= t.0
                && defaults.get(&r.channel).is_none_or(|(at, _)| *at <= d)
            {
                defaults.insert(r.channel.clone(), (d, r.version.clone()));
            }
        }
        for channel in &mut offer.channels {
            channel
                .valid
                .sort_by_key(|v| std::cmp::Reverse(version_key(v)));
            if let Some((_, version)) = defaults.get(&channel.name) {
                channel.default = version.clone();
            }
        }
        offer
    }

    pub fn channel(&self, name: &str) -> Option<&ChannelOffer> {
        self.channels.iter().find(|c| c.name == name)
    }

    /// Every valid master version, newest first.
    pub fn master_versions(&self) -> Vec<String> {
        let mut all: Vec<String> = self
            .channels
            .iter()
            .flat_map(|c| c.valid.iter().cloned())
            .chain(EXTRA_MASTER_VERSIONS.iter().map(|v| v.to_string()))
            .collect();
        all.sort_by_key(|v| std::cmp::Reverse(version_key(v)));
        all.dedup();
        all
    }

    /// The default for clusters without a channel: REGULAR's, as GKE does.
    pub fn default_cluster_version(&self) -> String {
        self.channel("REGULAR")
            .map(|c| c.default.clone())
            .unwrap_or_else(|| DEFAULT_CLUSTER_VERSION.to_string())
    }
}

fn channel_at_zero(
    name: &str,
) -> Option<&'static (&'static str, &'static str, &'static [&'static str])> {
    CHANNELS.iter().find(|(c, _, _)| *c == name)
}

/// The offer of the world now (its last tick).
pub fn offer(world: &World) -> Offer {
    Offer::at(world.container.schedule.as_ref(), world.container.last_tick)
}

/// Which kind of version is being resolved (only changes the error message).
#[derive(Clone, Copy)]
pub enum VersionKind {
    Master,
    Node,
}

/// Resolves a requested version within `channel` (`None` or `UNSPECIFIED` = no channel) in the
/// offer of time zero; see [`resolve_in`].
pub fn resolve(
    requested: &str,
    channel_name: Option<&str>,
    kind: VersionKind,
) -> GcpResult<String> {
    resolve_in(&Offer::at_zero(), requested, channel_name, kind)
}

/// Resolves a requested version within `channel` (`None` or `UNSPECIFIED` = no channel).
/// `""`, `"-"` give the default, `"latest"` the newest, `"1.32"` the newest 1.32.x, an exact
/// version itself; anything else is GKE's 400: `Master version "X" is unsupported.` for a
/// version GKE does not offer at all, and, for a cluster in a channel, `Master version must be
/// one of "STABLE" channel supported versions [a, b, c].` (oldest first) for one offered only
/// outside it — the text of real answers quoted in
/// <https://github.com/terraform-google-modules/terraform-google-kubernetes-engine/issues/2177>
/// and <https://github.com/didier-durand/microservices-on-cloud-kubernetes/pull/1>.
pub fn resolve_in(
    offer: &Offer,
    requested: &str,
    channel_name: Option<&str>,
    kind: VersionKind,
) -> GcpResult<String> {
    resolve_among(offer, requested, channel_name, kind, &[])
}

/// [`resolve`] for a control-plane upgrade of a cluster at `current` (offer of time zero).
#[cfg(test)]
pub fn resolve_upgrade(
    requested: &str,
    channel_name: Option<&str>,
    current: &str,
) -> GcpResult<String> {
    resolve_upgrade_in(&Offer::at_zero(), requested, channel_name, current)
}

/// [`resolve_in`] for a control-plane upgrade of a cluster at `current`: a cluster in a channel
/// may also move to a patch another channel offers for the minor it already runs
/// (<https://cloud.google.com/kubernetes-engine/docs/how-to/upgrading-a-cluster>, "Supported
/// versions": e.g. 1.21.12-gke.1700 in Regular → 1.21.13-gke.900 from Rapid).
pub fn resolve_upgrade_in(
    offer: &Offer,
    requested: &str,
    channel_name: Option<&str>,
    current: &str,
) -> GcpResult<String> {
    let minor = |v: &str| version_key(v).into_iter().take(2).collect::<Vec<_>>();
    let same_minor: Vec<String> = offer
        .channels
        .iter()
        .flat_map(|c| c.valid.iter().cloned())
        .filter(|v| minor(v) == minor(current))
        .collect();
    resolve_among(
        offer,
        requested,
        channel_name,
        VersionKind::Master,
        &same_minor,
    )
}

fn resolve_among(
    offer: &Offer,
    requested: &str,
    channel_name: Option<&str>,
    kind: VersionKind,
    also: &[String],
) -> GcpResult<String> {
    let chosen = channel_name.and_then(|c| offer.channel(c));
    let all = offer.master_versions();
    let mut candidates: Vec<&str> = match chosen {
        Some(c) => c.valid.iter().map(String::as_str).collect(),
        None => all.iter().map(String::as_str).collect(),
    };
    for version in also {
        if !candidates.contains(&version.as_str()) {
            candidates.push(version);
        }
    }
    candidates.sort_by_key(|v| std::cmp::Reverse(version_key(v)));
    let default_cluster = offer.default_cluster_version();
    let default = chosen
        .map(|c| c.default.as_str())
        .unwrap_or(&default_cluster);
    if let Some(found) = pick(requested, &candidates, default) {
        return Ok(found.to_string());
    }
    let what = match kind {
        VersionKind::Master => "Master",
        VersionKind::Node => "Node",
    };
    let all_refs: Vec<&str> = all.iter().map(String::as_str).collect();
    if let Some(c) = chosen
        && pick(requested, &all_refs, default).is_some()
    {
        let mut oldest_first = c.valid.clone();
        oldest_first.sort_by_key(|v| version_key(v));
        return Err(super::bad_request(format!(
            "{what} version must be one of \"{}\" channel supported versions [{}].",
            c.name,
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

/// The `ServerConfig` resource for `offer`.
pub fn server_config(offer: &Offer) -> Value {
    let versions = offer.master_versions();
    let channels: Vec<Value> = offer
        .channels
        .iter()
        .map(|c| {
            json!({
                "channel": c.name,
                "defaultVersion": c.default,
                "validVersions": c.valid,
                "upgradeTargetVersion": c.default,
            })
        })
        .collect();
    json!({
        "defaultClusterVersion": offer.default_cluster_version(),
        "validNodeVersions": versions,
        "defaultImageType": "COS_CONTAINERD",
        "validImageTypes": VALID_IMAGE_TYPES,
        "validMasterVersions": versions,
        "channels": channels,
    })
}

/// `GET .../locations/{location}/serverConfig`: the offer at the current simulated time.
pub async fn get_server_config(
    State(shared): State<Arc<Shared>>,
    Path((_project, location)): Path<(String, String)>,
    query: Query,
) -> GcpResult<Response> {
    super::rules::check_location(&location)?;
    let offer = shared.read_world(|world, cx| Offer::at(world.container.schedule.as_ref(), cx.now));
    Ok(http::proto_json(
        server_config(&offer),
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
            "1.35.0-gke.2398000"
        );
        // GKE-managed GPU networking needs 1.34.1-gke.1829001: a blueprint on 1.34 or 1.35 finds
        // a build in RAPID.
        assert_eq!(
            resolve("1.34", Some("RAPID"), m).unwrap(),
            "1.34.1-gke.1829001"
        );
        assert_eq!(
            resolve("1.35", Some("RAPID"), m).unwrap(),
            "1.35.0-gke.2398000"
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
        assert_eq!(master_versions()[0], "1.35.0-gke.2398000");
        assert_eq!(Offer::at(None, SimTime(1 << 40)), Offer::at_zero());
        assert_eq!(
            master_versions().last().map(String::as_str),
            Some("1.29.15-gke.2467000")
        );
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
