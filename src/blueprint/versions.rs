//! GKE version strings as a blueprint writes them, and the GPUDirect minimum-version gate.
//!
//! A blueprint may ask for the channel default, the latest version, a minor (`1.32`), a patch
//! (`1.32.4`) or an exact build (`1.32.4-gke.1767000`). Resolving anything but an exact build
//! needs GKE's serverConfig and happens in a later stage; [`gpudirect_violation`] rejects now
//! every request that no build could satisfy, and [`check_resolved`] is the same gate for a
//! resolved version. The minimum tables themselves are data in [`super::presets`].

use std::fmt;

use serde::{Deserialize, Serialize};

use super::presets::{GkeMinimums, MachineFamily};

/// An exact GKE build: `major.minor.patch-gke.build`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct GkeVersion {
    pub major: u32,
    pub minor: u32,
    pub patch: u32,
    pub build: u64,
}

impl GkeVersion {
    pub const fn new(major: u32, minor: u32, patch: u32, build: u64) -> Self {
        Self {
            major,
            minor,
            patch,
            build,
        }
    }

    /// Parses `1.32.4-gke.1767000`.
    pub fn parse(text: &str) -> Option<Self> {
        let (numbers, build) = text.split_once("-gke.")?;
        let [major, minor, patch] = split_numbers::<3>(numbers)?;
        let build = parse_number(build)?;
        Some(Self::new(major, minor, patch, build))
    }
}

impl fmt::Display for GkeVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}.{}.{}-gke.{}",
            self.major, self.minor, self.patch, self.build
        )
    }
}

/// The `cluster.version` a blueprint asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "kind")]
pub enum VersionSpec {
    /// `default`: the release channel's default version.
    ChannelDefault,
    /// `latest`: the newest version the channel offers.
    Latest,
    /// `1.32`: the newest build of a minor in the channel.
    Minor { major: u32, minor: u32 },
    /// `1.32.4`: the newest build of a patch.
    Patch { major: u32, minor: u32, patch: u32 },
    /// `1.32.4-gke.1767000`: exactly this build.
    Exact(GkeVersion),
}

impl VersionSpec {
    /// Parses a `cluster.version` value.
    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "default" => return Some(VersionSpec::ChannelDefault),
            "latest" => return Some(VersionSpec::Latest),
            _ => {}
        }
        if text.contains("-gke.") {
            return GkeVersion::parse(text).map(VersionSpec::Exact);
        }
        if let Some([major, minor, patch]) = split_numbers::<3>(text) {
            return Some(VersionSpec::Patch {
                major,
                minor,
                patch,
            });
        }
        let [major, minor] = split_numbers::<2>(text)?;
        Some(VersionSpec::Minor { major, minor })
    }

    /// The highest build this request could resolve to, if it is bounded.
    fn highest(&self) -> Option<GkeVersion> {
        match *self {
            VersionSpec::ChannelDefault | VersionSpec::Latest => None,
            VersionSpec::Minor { major, minor } => {
                Some(GkeVersion::new(major, minor, u32::MAX, u64::MAX))
            }
            VersionSpec::Patch {
                major,
                minor,
                patch,
            } => Some(GkeVersion::new(major, minor, patch, u64::MAX)),
            VersionSpec::Exact(version) => Some(version),
        }
    }
}

impl fmt::Display for VersionSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            VersionSpec::ChannelDefault => f.write_str("default"),
            VersionSpec::Latest => f.write_str("latest"),
            VersionSpec::Minor { major, minor } => write!(f, "{major}.{minor}"),
            VersionSpec::Patch {
                major,
                minor,
                patch,
            } => write!(f, "{major}.{minor}.{patch}"),
            VersionSpec::Exact(version) => version.fmt(f),
        }
    }
}

/// Why a version cannot run GPUDirect on a machine family.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Violation {
    /// The lowest build that would be accepted for the requested minor (or at all).
    pub required: GkeVersion,
    /// True when the requested minor is older than every supported one.
    pub minor_unsupported: bool,
}

/// The lowest accepted build in the minor of `version`, and whether that minor is supported.
fn minimum_for(minimums: &GkeMinimums, major: u32, minor: u32) -> Violation {
    let lowest = minimums.per_minor.first().copied();
    let too_old = lowest.is_some_and(|lowest| (major, minor) < (lowest.major, lowest.minor));
    let per_minor = minimums
        .per_minor
        .iter()
        .find(|v| (v.major, v.minor) == (major, minor))
        .copied();
    let mut required = if too_old { lowest } else { per_minor };
    if let Some(floor) = minimums.floor {
        required = Some(required.map_or(floor, |r| r.max(floor)));
    }
    let required = required.unwrap_or(GkeVersion::new(0, 0, 0, 0));
    Violation {
        required,
        minor_unsupported: too_old || (required.major, required.minor) > (major, minor),
    }
}

/// Whether some build `spec` could resolve to is new enough for GKE-managed GPU networking
/// ([`super::families::MANAGED_NETWORKING_MIN_GKE`]). `default` and `latest` pass here and are
/// checked once resolved.
pub fn managed_networking_possible(spec: &VersionSpec) -> bool {
    spec.highest()
        .is_none_or(|highest| highest >= super::families::MANAGED_NETWORKING_MIN_GKE)
}

/// The violation, if no build that `spec` could resolve to is new enough for GPUDirect on
/// `family`. `default` and `latest` pass here and are checked once resolved.
pub fn gpudirect_violation(family: MachineFamily, spec: &VersionSpec) -> Option<Violation> {
    let highest = spec.highest()?;
    let gate = minimum_for(family.gke_minimums(), highest.major, highest.minor);
    (highest < gate.required).then_some(gate)
}

/// The GPUDirect gate for a resolved build.
pub fn check_resolved(family: MachineFamily, version: GkeVersion) -> Result<(), Violation> {
    match gpudirect_violation(family, &VersionSpec::Exact(version)) {
        Some(violation) => Err(violation),
        None => Ok(()),
    }
}

fn parse_number<T: std::str::FromStr>(text: &str) -> Option<T> {
    if text.is_empty()
        || !text.bytes().all(|b| b.is_ascii_digit())
        || (text.len() > 1 && text.starts_with('0'))
    {
        return None;
    }
    text.parse().ok()
}

fn split_numbers<const N: usize>(text: &str) -> Option<[u32; N]> {
    let mut out = [0; N];
    let mut parts = text.split('.');
    for slot in &mut out {
        *slot = parse_number(parts.next()?)?;
    }
    parts.next().is_none().then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(text: &str) -> VersionSpec {
        VersionSpec::parse(text).expect("test versions are valid")
    }

    #[test]
    fn parses_every_form() {
        assert_eq!(spec("default"), VersionSpec::ChannelDefault);
        assert_eq!(spec("latest"), VersionSpec::Latest);
        assert_eq!(
            spec("1.32"),
            VersionSpec::Minor {
                major: 1,
                minor: 32
            }
        );
        assert_eq!(
            spec("1.32.4"),
            VersionSpec::Patch {
                major: 1,
                minor: 32,
                patch: 4
            }
        );
        assert_eq!(
            spec("1.32.4-gke.1767000"),
            VersionSpec::Exact(GkeVersion::new(1, 32, 4, 1767000))
        );
        for bad in [
            "",
            "1",
            "1.",
            "1.32.",
            "v1.32",
            "1.32.4-gke.",
            "1.32-gke.1",
            "1.032",
            "1.32.4.5",
            "x",
        ] {
            assert_eq!(VersionSpec::parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn display_round_trips() {
        for text in ["default", "latest", "1.33", "1.32.4", "1.32.4-gke.1767000"] {
            assert_eq!(spec(text).to_string(), text);
        }
    }

    #[test]
    fn a3_mega_gate_combines_per_minor_and_floor() {
        let mega = MachineFamily::A3Mega;
        let check = |text: &str| gpudirect_violation(mega, &spec(text));
        assert!(check("1.32.11-gke.1174000").is_none());
        assert!(check("1.33.0-gke.1").is_none());
        assert!(check("1.32").is_none(), "a minor is checked once resolved");
        let violation = check("1.32.10-gke.9999999").expect("below the 1.32 pin");
        assert_eq!(violation.required, GkeVersion::new(1, 32, 11, 1174000));
        assert!(!violation.minor_unsupported);
        let violation = check("1.31.14-gke.1243000").expect("below the gpu-recipes floor");
        assert_eq!(violation.required, GkeVersion::new(1, 32, 4, 1767000));
        assert!(violation.minor_unsupported);
        assert!(check("1.31").is_some(), "no 1.31 build reaches the floor");
        assert!(check("1.32.4").is_some(), "no 1.32.4 build reaches 1.32.11");
        assert!(check("default").is_none());
    }

    #[test]
    fn a3_high_gate_pins_old_minors_only() {
        let high = MachineFamily::A3High;
        let check = |text: &str| gpudirect_violation(high, &spec(text));
        assert!(check("1.29.15-gke.2467000").is_none());
        assert!(check("1.30.0-gke.1").is_none());
        assert!(check("1.29.15-gke.2466999").is_some());
        let violation = check("1.26").expect("older than every pinned minor");
        assert!(violation.minor_unsupported);
        assert_eq!(violation.required, GkeVersion::new(1, 27, 16, 2874000));
        assert!(check_resolved(high, GkeVersion::new(1, 28, 15, 3163000)).is_ok());
    }
}
