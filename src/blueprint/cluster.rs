//! GKE cluster rules: release channel, requested version (with the GPUDirect minimum-version
//! gate from [`super::versions`]), private nodes and master authorized networks.

use super::decode::Sp;
use super::error::Finding;
use super::model::{AuthorizedNetwork, Cluster, ReleaseChannel};
use super::presets::MachineFamily;
use super::schema::RawCluster;
use super::validate::{Ctx, choice, parse_cidr};
use super::versions::{self, VersionSpec};
use crate::resource::kinds::gke_versions;

/// A `version` value (the cluster's or a pool's): a GKE version, and one that can run GPUDirect
/// on `family` when given.
fn parse_version(
    f: &mut super::error::Findings,
    value: &Sp<String>,
    family: Option<MachineFamily>,
) -> Option<VersionSpec> {
    let parsed = VersionSpec::parse(value.as_str());
    match parsed {
        None => f.push(
            Finding::new(value.span.clone(), format!("`version` `{}` is not a GKE version", value.value), "not a version")
                .help("use `default`, `latest`, a minor like `1.33`, a patch like `1.33.5` or an exact build like `1.32.11-gke.1174000`"),
        ),
        Some(spec) => {
            if let Some(family) = family
                && let Some(violation) = versions::gpudirect_violation(family, &spec)
            {
                let flavour = format!("GPUDirect-{} on {}", family.gpudirect().as_str(), family.display_name());
                let message = if matches!(spec, VersionSpec::Exact(_)) && !violation.minor_unsupported {
                    format!("GKE `{spec}` is too old for {flavour}")
                } else {
                    format!("No GKE `{spec}` build supports {flavour}")
                };
                f.push(
                    Finding::new(value.span.clone(), message, format!("needs {} or later", violation.required))
                        .help(format!(
                            "use `{}` or a later version ({})",
                            violation.required,
                            family.gke_minimums().source
                        )),
                );
            }
        }
    }
    parsed
}

/// A node pool's own `version` (`None` when it follows the control plane's), within GKE's skew
/// of the control plane's `cluster` version when both name a minor: never a newer minor, at most
/// two minors behind (<https://cloud.google.com/kubernetes-engine/versioning>). `family` is the
/// GPU family of a GPU pool (its GPUDirect minimum applies), `None` for the system pool.
pub(crate) fn pool_version(
    raw: Option<&Sp<String>>,
    cluster: Option<&Sp<String>>,
    family: Option<MachineFamily>,
    f: &mut super::error::Findings,
) -> Option<Option<VersionSpec>> {
    let Some(value) = raw else {
        return Some(None);
    };
    let parsed = parse_version(f, value, family)?;
    let minor = |v: &str| gke_versions::minor_of(v);
    if let Some(cluster) = cluster
        && let (Some(_), Some(_)) = (minor(value.as_str()), minor(cluster.as_str()))
        && let Some(reason) = gke_versions::node_skew(value.as_str(), cluster.as_str())
    {
        f.push(
            Finding::new(
                value.span.clone(),
                format!("Node pool version `{}` does not fit the control plane's `{}`", value.value, cluster.value),
                "outside GKE's version skew",
            )
            .also(cluster.span.clone(), "the control plane's version")
            .help(format!("{reason}; set a version within two minors below `[cluster] version`, or remove it to follow the control plane")),
        );
        return None;
    }
    Some(Some(parsed))
}

pub(crate) fn cluster(raw: &RawCluster, ctx: &mut Ctx) -> Option<Cluster> {
    let f = &mut ctx.f;
    let release_channel = match &raw.release_channel {
        None => Some(ReleaseChannel::Regular),
        Some(value) => choice(
            f,
            value,
            "release_channel",
            &ReleaseChannel::NAMES,
            ReleaseChannel::parse,
        ),
    };
    let version = match &raw.version {
        None => Some(VersionSpec::ChannelDefault),
        Some(value) => parse_version(f, value, ctx.family),
    };
    let mut authorized_networks = Some(Vec::new());
    for entry in &raw.authorized_networks {
        let net = entry.cidr.as_ref().and_then(|c| parse_cidr(f, c, "cidr"));
        match (net, authorized_networks.as_mut()) {
            (Some(cidr), Some(list)) => list.push(AuthorizedNetwork {
                cidr,
                name: entry.name.as_ref().map(|n| n.value.clone()),
            }),
            _ => authorized_networks = None,
        }
    }
    let maintenance = super::maintenance::maintenance(raw.maintenance.as_ref(), f);
    Some(Cluster {
        maintenance: Some(maintenance?),
        release_channel: release_channel?,
        version: version?,
        private_nodes: raw.private_nodes.as_ref().is_none_or(|v| v.value),
        authorized_networks: authorized_networks?,
        deletion_protection: raw.deletion_protection.as_ref().map(|v| v.value),
        prevent_destroy: raw.prevent_destroy.as_ref().is_some_and(|v| v.value),
    })
}

#[cfg(test)]
mod tests {
    use crate::blueprint::testing::{BASE, one_problem, problems};
    use crate::blueprint::{VersionSpec, parse};

    fn section(table: &str, lines: &str) -> String {
        BASE.replace("[[gpu_pool]]", &format!("[{table}]\n{lines}\n[[gpu_pool]]"))
    }

    #[test]
    fn release_channel_and_version_are_checked() {
        let problem = one_problem(
            &section("cluster", "release_channel = \"regualr\""),
            "`release_channel` must be",
            7,
            19,
        );
        assert_eq!(problem.help.as_deref(), Some("did you mean `regular`?"));
        one_problem(
            &section("cluster", "version = \"1.32.x\""),
            "`version` `1.32.x` is not a GKE version",
            7,
            11,
        );
        let blueprint = parse(&section("cluster", "version = \"1.33\""), "t").expect("valid");
        assert_eq!(
            blueprint.cluster.version,
            VersionSpec::Minor {
                major: 1,
                minor: 33
            }
        );
    }

    #[test]
    fn gpudirect_minimum_gke_version_is_a_hard_error() {
        let problem = one_problem(
            &section("cluster", "version = \"1.32.10-gke.1000000\""),
            "GKE `1.32.10-gke.1000000` is too old for GPUDirect-TCPXO on A3 Mega",
            7,
            11,
        );
        assert_eq!(problem.label, "needs 1.32.11-gke.1174000 or later");
        let problem = one_problem(
            &section("cluster", "version = \"1.31\""),
            "No GKE `1.31` build supports GPUDirect-TCPXO",
            7,
            11,
        );
        assert_eq!(problem.label, "needs 1.32.4-gke.1767000 or later");
        let high = BASE.replace("a3-megagpu-8g", "a3-highgpu-8g");
        let text = high.replace(
            "[[gpu_pool]]",
            "[cluster]\nversion = \"1.28.15-gke.3162999\"\n\n[[gpu_pool]]",
        );
        one_problem(&text, "too old for GPUDirect-TCPX on A3 High", 7, 11);
        assert!(
            problems(&high.replace(
                "[[gpu_pool]]",
                "[cluster]\nversion = \"1.28.15-gke.3163000\"\n\n[[gpu_pool]]"
            ))
            .is_empty()
        );
    }

    #[test]
    fn a_pool_version_stays_within_gke_skew_of_the_control_plane() {
        // Line 7 is `[cluster]`'s version, line 12 the pool's (appended after `nodes`).
        let text = |cluster: &str, pool: &str| {
            section("cluster", &format!("version = \"{cluster}\""))
                .replace("nodes = 2\n", &format!("nodes = 2\nversion = \"{pool}\"\n"))
        };
        let newer = one_problem(
            &text("1.33", "1.34"),
            "Node pool version `1.34` does not fit the control plane's `1.33`",
            12,
            11,
        );
        assert!(
            newer
                .help
                .as_deref()
                .unwrap()
                .contains("newer minor version (1.34) than its control plane (1.33)"),
            "{:?}",
            newer.help
        );
        let behind = one_problem(
            &text("1.35", "1.32"),
            "Node pool version `1.32` does not fit the control plane's `1.35`",
            12,
            11,
        );
        assert!(
            behind
                .help
                .as_deref()
                .unwrap()
                .contains("at most 2 minor versions (1.32 under 1.35)"),
            "{:?}",
            behind.help
        );
        one_problem(
            &text("1.33", "one"),
            "`version` `one` is not a GKE version",
            12,
            11,
        );
        // The GPUDirect minimum holds for a GPU pool's own version too.
        one_problem(
            &text("1.33", "1.32.10-gke.1000000"),
            "GKE `1.32.10-gke.1000000` is too old for GPUDirect-TCPXO on A3 Mega",
            12,
            11,
        );
        let held_back = parse(&text("1.34", "1.32"), "t").expect("two minors behind is allowed");
        assert_eq!(
            held_back.gpu_pools[0].version,
            Some(VersionSpec::Minor {
                major: 1,
                minor: 32
            })
        );
        assert_eq!(
            held_back.system_pool.version, None,
            "follows the control plane"
        );
        // The system pool's own version, against a channel default: nothing to compare offline.
        let system = BASE.replace(
            "[[gpu_pool]]",
            "[system_pool]\nversion = \"1.31\"\n\n[[gpu_pool]]",
        );
        let parsed = parse(&system, "t").expect("valid");
        assert_eq!(
            parsed.system_pool.version,
            Some(VersionSpec::Minor {
                major: 1,
                minor: 31
            })
        );
    }

    #[test]
    fn authorized_networks_are_cidrs() {
        one_problem(
            &section("cluster", "authorized_networks = [{ cidr = \"1.2.3.4\" }]"),
            "`cidr` `1.2.3.4` is not a valid IPv4 CIDR block",
            7,
            33,
        );
        one_problem(
            &section("cluster", "authorized_networks = [{ name = \"office\" }]"),
            "Missing required key `cidr`",
            7,
            24,
        );
    }
}
