//! The GKE versions a location offers, read only: `projects.locations.getServerConfig`
//! (<https://cloud.google.com/kubernetes-engine/docs/reference/rest/v1/projects.locations/getServerConfig>),
//! per release channel its `defaultVersion` and `validVersions`, and without a channel
//! `defaultClusterVersion` and `validMasterVersions`.
//!
//! [`GkeVersionsSpec::resolve`] is what a requested version means there — the one rule the GKE
//! adapter uses to create a cluster and preflight uses to check a plan before any change.
//! [`minor_step`] is GKE's control-plane rule: one minor version up at a time, never a minor
//! down (<https://cloud.google.com/kubernetes-engine/docs/concepts/cluster-upgrades>,
//! "control plane ... upgraded one minor version at a time";
//! <https://cloud.google.com/kubernetes-engine/versioning>: downgrading a control plane to an
//! earlier minor version is not supported).

use super::ShapeError;
use crate::resource::Observed;
use crate::resource::spec::Change::{ForceNew, InPlace};
use crate::resource::spec::{f, kind_fields};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::collections::BTreeMap;

/// One release channel's versions.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ChannelVersions {
    pub default: String,
    pub valid: Vec<String>,
}

/// What `getServerConfig` says for one location.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct GkeVersionsSpec {
    /// `us-central1`.
    pub location: String,
    /// By channel name (`REGULAR` ...).
    pub channels: BTreeMap<String, ChannelVersions>,
    /// Without a channel (`UNSPECIFIED`).
    pub unspecified: ChannelVersions,
}

/// The id a location's versions are read by: `projects/P/locations/L/serverConfig`.
pub fn id(project: &str, location: &str) -> String {
    format!("projects/{project}/locations/{location}/serverConfig")
}

kind_fields! {
    /// The fields of [`GkeVersionsSpec`]; never diffed: a3ctl does not change GKE's offer.
    pub enum GkeVersionsField for GkeVersions in FIELDS {
        Location => f("location", ForceNew),
        Channels => f("channels", InPlace),
        Unspecified => f("unspecified", InPlace),
    }
}

/// A location's GKE versions (`gke_versions`).
pub const INFO: super::KindInfo = super::KindInfo {
    kind: super::Kind::GkeVersions,
    name: "gke_versions",
    api: super::Api::Container,
    fields: FIELDS,
    deadline_minutes: 5,
    create_latency: None,
    service: Some("container.googleapis.com"),
};

/// `1.32.12-gke.1050000` → `[1, 32, 12, 1050000]`, for ordering.
pub fn version_key(version: &str) -> Vec<u64> {
    version
        .split(|c: char| !c.is_ascii_digit())
        .filter(|s| !s.is_empty())
        .filter_map(|s| s.parse().ok())
        .collect()
}

/// `(major, minor)` of a version or prefix (`1.33`, `1.33.5-gke.1080000`), if it has both.
pub fn minor_of(version: &str) -> Option<(u64, u64)> {
    match version_key(version).as_slice() {
        [major, minor, ..] => Some((*major, *minor)),
        _ => None,
    }
}

/// Why GKE would refuse to move a control plane from `live` to `target` (both builds or
/// prefixes), or `None` when it allows it: never a minor down. A move of more than one minor up
/// is allowed as consecutive steps ([`minors_between`]).
pub fn minor_step(live: &str, target: &str) -> Option<String> {
    let ((lmaj, lmin), (tmaj, tmin)) = (minor_of(live)?, minor_of(target)?);
    ((tmaj, tmin) < (lmaj, lmin)).then(|| {
        format!(
            "GKE does not downgrade a control plane to an earlier minor version ({lmaj}.{lmin} → {tmaj}.{tmin})"
        )
    })
}

/// The minor versions a control plane passes through on its way from `live` to `target`, each
/// one an upgrade of its own (GKE upgrades a control plane one minor version at a time):
/// `1.32.12-gke.1050000` → `1.34` passes `1.33`. Empty for a move within a minor, a move down,
/// or a version without a minor (`default`, `latest`).
pub fn minors_between(live: &str, target: &str) -> Vec<String> {
    match (minor_of(live), minor_of(target)) {
        (Some((lmaj, lmin)), Some((tmaj, tmin))) if lmaj == tmaj && tmin > lmin + 1 => {
            (lmin + 1..tmin).map(|m| format!("{lmaj}.{m}")).collect()
        }
        _ => vec![],
    }
}

/// How many minor versions GKE lets a node pool trail its control plane
/// (<https://cloud.google.com/kubernetes-engine/versioning>: "Nodes and node pool versions can be
/// up to two minor versions older than the control plane, but cannot be newer").
pub const MAX_NODE_MINOR_SKEW: u64 = 2;

/// Why GKE would refuse a node pool on `pool` under a control plane on `control_plane` (builds
/// or prefixes), or `None`: never a newer minor, at most [`MAX_NODE_MINOR_SKEW`] minors behind.
pub fn node_skew(pool: &str, control_plane: &str) -> Option<String> {
    let ((pmaj, pmin), (cmaj, cmin)) = (minor_of(pool)?, minor_of(control_plane)?);
    if (pmaj, pmin) > (cmaj, cmin) {
        return Some(format!(
            "a node pool cannot run a newer minor version ({pmaj}.{pmin}) than its control plane ({cmaj}.{cmin})"
        ));
    }
    (pmaj == cmaj && pmin + MAX_NODE_MINOR_SKEW < cmin).then(|| {
        format!(
            "a node pool may trail its control plane by at most {MAX_NODE_MINOR_SKEW} minor versions ({pmaj}.{pmin} under {cmaj}.{cmin})"
        )
    })
}

impl GkeVersionsSpec {
    /// The channel's versions (`UNSPECIFIED` or an unknown channel: the location's).
    pub fn channel(&self, channel: &str) -> &ChannelVersions {
        self.channels.get(channel).unwrap_or(&self.unspecified)
    }

    /// The build `wanted` means in `channel`: `default` (or empty) the channel's default,
    /// `latest` its newest, a prefix (`1.33`, `1.33.5`) the newest valid build with it, an exact
    /// build itself if valid. `Err` lists what the channel offers.
    pub fn resolve(&self, channel: &str, wanted: &str) -> Result<String, String> {
        let offer = self.channel(channel);
        let newest = |candidates: Vec<&String>| {
            candidates
                .into_iter()
                .max_by_key(|v| version_key(v))
                .cloned()
        };
        let found = match wanted {
            "" | "default" | "-" => Some(offer.default.clone()).filter(|d| !d.is_empty()),
            "latest" => newest(offer.valid.iter().collect()),
            exact if exact.contains("-gke.") => offer
                .valid
                .iter()
                .any(|v| v == exact)
                .then(|| exact.to_string()),
            prefix => newest(
                offer
                    .valid
                    .iter()
                    .filter(|v| {
                        v.starts_with(&format!("{prefix}.")) || v.starts_with(&format!("{prefix}-"))
                    })
                    .collect(),
            ),
        };
        found.ok_or_else(|| offer.valid.join(", "))
    }

    /// The channels (other than `channel`) that offer `wanted`, with the build each resolves it
    /// to, for a hint.
    pub fn elsewhere(&self, channel: &str, wanted: &str) -> Vec<(String, String)> {
        self.channels
            .keys()
            .filter(|c| c.as_str() != channel)
            .filter_map(|c| Some((c.clone(), self.resolve(c, wanted).ok()?)))
            .collect()
    }

    /// A live `ServerConfig` (its JSON) of `location`.
    pub fn project(live: &Value, location: &str) -> Result<Observed, ShapeError> {
        let strings = |v: &Value| -> Vec<String> {
            v.as_array()
                .into_iter()
                .flatten()
                .filter_map(|s| s.as_str().map(str::to_string))
                .collect()
        };
        let channels = live["channels"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|c| {
                Some((
                    c["channel"].as_str()?.to_string(),
                    ChannelVersions {
                        default: c["defaultVersion"].as_str().unwrap_or("").to_string(),
                        valid: strings(&c["validVersions"]),
                    },
                ))
            })
            .collect();
        let spec = GkeVersionsSpec {
            location: location.to_string(),
            channels,
            unspecified: ChannelVersions {
                default: live["defaultClusterVersion"]
                    .as_str()
                    .unwrap_or("")
                    .to_string(),
                valid: strings(&live["validMasterVersions"]),
            },
        };
        if spec.unspecified.valid.is_empty() && spec.channels.is_empty() {
            return Err(ShapeError::Live {
                kind: "GKE server config",
                name: location.to_string(),
                field: "validMasterVersions",
            });
        }
        Ok(Observed {
            spec: super::to_spec(&spec),
            outputs: json!({}),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn offer() -> GkeVersionsSpec {
        let live = json!({
            "defaultClusterVersion": "1.33.5-gke.1080000",
            "validMasterVersions": ["1.34.1-gke.1829001", "1.33.5-gke.1080000", "1.32.12-gke.1050000"],
            "channels": [
                {"channel": "RAPID", "defaultVersion": "1.34.1-gke.1829001",
                 "validVersions": ["1.34.1-gke.1829001", "1.34.0-gke.2201000"]},
                {"channel": "REGULAR", "defaultVersion": "1.33.5-gke.1080000",
                 "validVersions": ["1.33.5-gke.1080000", "1.33.4-gke.1245000", "1.32.12-gke.1050000"]}
            ]
        });
        serde_json::from_value(GkeVersionsSpec::project(&live, "us-central1").unwrap().spec)
            .unwrap()
    }

    #[test]
    fn versions_resolve_within_their_channel() {
        let o = offer();
        assert_eq!(o.resolve("REGULAR", "1.33").unwrap(), "1.33.5-gke.1080000");
        assert_eq!(
            o.resolve("REGULAR", "default").unwrap(),
            "1.33.5-gke.1080000"
        );
        assert_eq!(
            o.resolve("REGULAR", "latest").unwrap(),
            "1.33.5-gke.1080000"
        );
        assert_eq!(
            o.resolve("REGULAR", "1.33.4").unwrap(),
            "1.33.4-gke.1245000"
        );
        assert_eq!(o.resolve("RAPID", "1.34").unwrap(), "1.34.1-gke.1829001");
        assert_eq!(
            o.resolve("REGULAR", "1.34").unwrap_err(),
            "1.33.5-gke.1080000, 1.33.4-gke.1245000, 1.32.12-gke.1050000"
        );
        assert!(o.resolve("REGULAR", "1.34.1-gke.1829001").is_err());
        assert_eq!(
            o.resolve("UNSPECIFIED", "1.34").unwrap(),
            "1.34.1-gke.1829001"
        );
        assert_eq!(
            o.elsewhere("REGULAR", "1.34"),
            [("RAPID".to_string(), "1.34.1-gke.1829001".to_string())]
        );
    }

    #[test]
    fn a_control_plane_moves_one_minor_up_at_a_time_and_never_a_minor_down() {
        assert_eq!(minor_step("1.33.5-gke.1080000", "1.34.1-gke.1829001"), None);
        assert_eq!(minor_step("1.33.5-gke.1080000", "1.33.4-gke.1245000"), None);
        assert_eq!(minor_step("1.33.5-gke.1080000", "1.33"), None);
        let down = minor_step("1.33.5-gke.1080000", "1.32.12-gke.1050000").unwrap();
        assert!(
            down.contains("does not downgrade") && down.contains("1.33 → 1.32"),
            "{down}"
        );
        // Two minors up: allowed, as one step per minor.
        assert_eq!(
            minor_step("1.32.12-gke.1050000", "1.34.1-gke.1829001"),
            None
        );
        assert_eq!(minors_between("1.32.12-gke.1050000", "1.34"), ["1.33"]);
        assert_eq!(
            minors_between("1.30.14-gke.1922000", "1.33.5-gke.1080000"),
            ["1.31", "1.32"]
        );
        assert!(minors_between("1.33.5-gke.1080000", "1.34").is_empty());
        assert!(minors_between("1.33.5-gke.1080000", "1.33.4").is_empty());
        assert!(minors_between("1.34.1-gke.1829001", "1.32").is_empty());
        assert!(minors_between("1.32.12-gke.1050000", "latest").is_empty());
        assert_eq!(minor_step("default", "1.34"), None, "nothing to compare");
    }

    #[test]
    fn node_pools_trail_their_control_plane_by_at_most_two_minors() {
        assert_eq!(node_skew("1.32.12-gke.1050000", "1.34"), None);
        assert_eq!(node_skew("1.33", "1.33.5-gke.1080000"), None);
        let behind = node_skew("1.31.14-gke.1243000", "1.34.1-gke.1829001").unwrap();
        assert!(
            behind.contains("at most 2 minor versions (1.31 under 1.34)"),
            "{behind}"
        );
        let ahead = node_skew("1.34", "1.33.5-gke.1080000").unwrap();
        assert!(ahead.contains("newer minor version (1.34)"), "{ahead}");
        assert_eq!(node_skew("default", "1.33"), None);
    }

    #[test]
    fn a_config_without_versions_is_an_error() {
        assert!(GkeVersionsSpec::project(&json!({}), "us-central1").is_err());
    }
}
