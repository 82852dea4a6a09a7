//! GKE's version-skew rules: which control-plane and node-pool versions a change may ask for,
//! given the versions a cluster already runs. The versions themselves (what serverConfig offers,
//! "1.33" → the newest 1.33 build) are [`super::server_config`]'s; these rules run on the
//! resolved builds.
//!
//! The rules and where they come from:
//!
//! - **The control plane moves one minor version at a time.** "Control plane upgrades are
//!   sequential"; GKE answers a jump of two minors with
//!   `400 INVALID_ARGUMENT` `Master cannot be upgraded to "1.26.7-gke.500": cannot upgrade the
//!   master more than a minor version at a time.` — quoted from a real googleapi error in
//!   nebari-dev/nebari-docs (`docs/docs/how-tos/upgrade-kubernetes-version.md`); the same reason closes
//!   GKE's release-channel variant quoted in kubeflow/code-intelligence#153
//!   (<https://github.com/kubeflow/code-intelligence/issues/153>).
//! - **No minor downgrade of the control plane; a patch downgrade within the minor is allowed.**
//!   <https://cloud.google.com/kubernetes-engine/docs/how-to/upgrading-a-cluster> ("Downgrade
//!   limitations"): the control plane can go back to an earlier patch of the same minor (e.g.
//!   1.25.3-gke.400 → 1.25.2-gke.100, if still offered), never to an earlier minor. The page
//!   quotes the error gcloud then shows; the stored copies of the page end just before its text,
//!   so the message here (`Master cannot be upgraded to "V": specified version is not newer than
//!   the current version.`) keeps GKE's `Master cannot be upgraded to "V": ` form with the reason
//!   as that page gives it, and is not a verbatim capture. GKE 1.33's opt-in two-step minor
//!   upgrade with rollback is not simulated.
//! - **Nodes are never newer than the control plane, and at most two minor versions older.**
//!   <https://cloud.google.com/kubernetes-engine/versioning> ("Nodes and node pool versions can be
//!   up to two minor versions older than the control plane, but cannot be newer than the control
//!   plane version"); GKE keeps two although upstream Kubernetes allows a kubelet three minors
//!   behind kube-apiserver since 1.28 (<https://kubernetes.io/releases/version-skew-policy/>).
//!   A node version of a newer minor is refused with `Node version "1.16.8-gke.9" must not have
//!   a greater minor version than master version "1.15.11-gke.12".` (hashicorp/terraform-provider-
//!   google#6405, <https://github.com/hashicorp/terraform-provider-google/issues/6405>); a newer
//!   patch of the same minor with `desired node version "1.9.6-gke.1" cannot be greater than
//!   current master version "1.8.10-gke.0".` (terraform-provider-google#1682,
//!   <https://github.com/hashicorp/terraform-provider-google/issues/1682>). Both are
//!   `400 INVALID_ARGUMENT` / `badRequest`.
//! - **A node pool more than two minors behind the target blocks a control-plane upgrade**, and
//!   a node version more than two minors behind the control plane is refused. No public capture
//!   of GKE's wording for these two was found; their messages follow the two node messages
//!   above ("must not be more than 2 minor versions older than master version") and the master
//!   one (`Master cannot be upgraded to "V": node pool "P" ...`), with the same status.

use super::bad_request;
use crate::error::GcpResult;
use std::cmp::Ordering;

/// How many minor versions a node pool may trail the control plane on GKE.
pub const MAX_NODE_MINOR_SKEW: u64 = 2;

/// A GKE version, `1.33.5-gke.1080000` → major 1, minor 33, patch 5, GKE build 1080000. A
/// version without the `-gke.N` suffix has build 0.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Version {
    pub major: u64,
    pub minor: u64,
    pub patch: u64,
    pub build: u64,
}

impl Version {
    /// Parses `MAJOR.MINOR.PATCH[-gke.BUILD]`; `None` for anything else.
    pub fn parse(text: &str) -> Option<Version> {
        let (semver, build) = match text.split_once('-') {
            Some((semver, suffix)) => (semver, suffix.strip_prefix("gke.")?.parse().ok()?),
            None => (text, 0),
        };
        let mut parts = semver.split('.').map(|p| p.parse::<u64>().ok());
        let (Some(Some(major)), Some(Some(minor)), Some(Some(patch)), None) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return None;
        };
        Some(Version {
            major,
            minor,
            patch,
            build,
        })
    }

    /// Minor versions from `older` up to `self` (negative when `older` is newer); a different
    /// major counts as far apart.
    pub fn minors_after(&self, older: &Version) -> i64 {
        if self.major != older.major {
            return if self.major > older.major {
                i64::MAX
            } else {
                i64::MIN
            };
        }
        self.minor as i64 - older.minor as i64
    }
}

/// Both versions parsed, or `None` (then no rule applies: the simulator only ever stores
/// versions it resolved from its own server config, so this is for hand-made states).
fn both(a: &str, b: &str) -> Option<(Version, Version)> {
    Some((Version::parse(a)?, Version::parse(b)?))
}

/// Checks a control-plane change from `current` to `target` (both resolved builds) for a cluster
/// whose node pools run `pools` (`(name, version)`).
pub fn check_master_change(current: &str, target: &str, pools: &[(&str, &str)]) -> GcpResult<()> {
    let Some((from, to)) = both(current, target) else {
        return Ok(());
    };
    let step = to.minors_after(&from);
    if step > 1 {
        return Err(bad_request(format!(
            "Master cannot be upgraded to \"{target}\": cannot upgrade the master more than a \
             minor version at a time."
        )));
    }
    if step < 0 {
        return Err(bad_request(format!(
            "Master cannot be upgraded to \"{target}\": specified version is not newer than the \
             current version."
        )));
    }
    for (pool, version) in pools {
        let Some(node) = Version::parse(version) else {
            continue;
        };
        if to.minors_after(&node) > MAX_NODE_MINOR_SKEW as i64 {
            return Err(bad_request(format!(
                "Master cannot be upgraded to \"{target}\": node pool \"{pool}\" version \
                 \"{version}\" would be more than {MAX_NODE_MINOR_SKEW} minor versions older than \
                 the master; upgrade the node pool first."
            )));
        }
    }
    Ok(())
}

/// Checks a node-pool version (a resolved build) against the control plane's `master`.
pub fn check_node_version(node: &str, master: &str) -> GcpResult<()> {
    let Some((n, m)) = both(node, master) else {
        return Ok(());
    };
    let behind = m.minors_after(&n);
    if behind < 0 {
        return Err(bad_request(format!(
            "Node version \"{node}\" must not have a greater minor version than master version \
             \"{master}\"."
        )));
    }
    if behind == 0 && n.cmp(&m) == Ordering::Greater {
        return Err(bad_request(format!(
            "desired node version \"{node}\" cannot be greater than current master version \
             \"{master}\"."
        )));
    }
    if behind > MAX_NODE_MINOR_SKEW as i64 {
        return Err(bad_request(format!(
            "Node version \"{node}\" must not be more than {MAX_NODE_MINOR_SKEW} minor versions \
             older than master version \"{master}\"."
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(text: &str) -> Version {
        Version::parse(text).unwrap()
    }

    #[test]
    fn gke_versions_parse_into_their_parts() {
        assert_eq!(
            v("1.33.5-gke.1080000"),
            Version {
                major: 1,
                minor: 33,
                patch: 5,
                build: 1080000
            }
        );
        assert_eq!(v("1.30.14").build, 0);
        for bad in [
            "",
            "1.33",
            "1.33.x",
            "1.33.5-gke",
            "1.33.5-eks.1",
            "1.33.5.1",
            "v1.33.5",
        ] {
            assert_eq!(Version::parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn versions_order_by_minor_then_patch_then_build() {
        assert!(v("1.33.4-gke.1245000") < v("1.33.5-gke.1080000"));
        assert!(v("1.32.12-gke.1050000") < v("1.33.4-gke.1245000"));
        assert!(v("1.34.1-gke.1829001") > v("1.34.1-gke.1829000"));
        // Numeric, not textual: patch 12 is after patch 4.
        assert!(v("1.32.4-gke.1767000") < v("1.32.12-gke.1050000"));
        assert_eq!(v("1.34.0-gke.1").minors_after(&v("1.32.12-gke.1")), 2);
        assert_eq!(v("1.31.1-gke.1").minors_after(&v("1.32.12-gke.1")), -1);
        assert_eq!(v("2.0.0").minors_after(&v("1.32.0")), i64::MAX);
    }

    #[test]
    fn the_control_plane_moves_one_minor_up_or_back_a_patch() {
        let ok = |from, to| check_master_change(from, to, &[]).is_ok();
        assert!(ok("1.32.12-gke.1050000", "1.33.5-gke.1080000"));
        assert!(ok("1.33.5-gke.1080000", "1.33.5-gke.1080000"));
        assert!(ok("1.33.5-gke.1080000", "1.33.4-gke.1245000"));
        let err = check_master_change("1.32.12-gke.1050000", "1.34.1-gke.1829001", &[]);
        assert_eq!(
            err.unwrap_err().message,
            "Master cannot be upgraded to \"1.34.1-gke.1829001\": cannot upgrade the master more \
             than a minor version at a time."
        );
        let err =
            check_master_change("1.32.12-gke.1050000", "1.31.14-gke.1243000", &[]).unwrap_err();
        assert_eq!((err.code, err.reason.as_str()), (400, "badRequest"));
        assert!(err.message.contains("not newer than the current version"));
    }

    #[test]
    fn a_pool_two_minors_behind_blocks_the_next_master_minor() {
        let pools = [("old", "1.29.15-gke.2467000")];
        assert!(check_master_change("1.30.14-gke.1922000", "1.31.13-gke.1023000", &pools).is_ok());
        let err =
            check_master_change("1.31.13-gke.1023000", "1.32.4-gke.1767000", &pools).unwrap_err();
        assert!(err.message.contains("node pool \"old\""), "{}", err.message);
        // A patch within the minor is not held back by the pool.
        assert!(check_master_change("1.31.13-gke.1023000", "1.31.14-gke.1243000", &pools).is_ok());
    }

    #[test]
    fn nodes_trail_the_master_by_at_most_two_minors_and_never_lead() {
        let master = "1.33.4-gke.1245000";
        assert!(check_node_version(master, master).is_ok());
        assert!(check_node_version("1.31.14-gke.1243000", master).is_ok());
        assert!(check_node_version("1.33.3-gke.1", master).is_ok());
        let err = check_node_version("1.34.1-gke.1829001", master).unwrap_err();
        assert_eq!(
            err.message,
            "Node version \"1.34.1-gke.1829001\" must not have a greater minor version than \
             master version \"1.33.4-gke.1245000\"."
        );
        let err = check_node_version("1.33.5-gke.1080000", master).unwrap_err();
        assert_eq!(
            err.message,
            "desired node version \"1.33.5-gke.1080000\" cannot be greater than current master \
             version \"1.33.4-gke.1245000\"."
        );
        let err = check_node_version("1.30.14-gke.1922000", master).unwrap_err();
        assert!(err.message.contains("more than 2 minor versions older"));
    }
}
