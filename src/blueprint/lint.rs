//! Warnings: settings that are valid but risky, reported by `a3ctl validate` (and `plan`) without
//! failing. Each is a [`Problem`] located in the file, with the fix as its help.
//!
//! - A control plane open to every address (`authorized_networks` holding a `/0`, or empty: GKE
//!   then lets any address reach the endpoint, IAM being the only gate). GKE's hardening guide
//!   restricts the endpoint to known ranges
//!   (<https://cloud.google.com/kubernetes-engine/docs/how-to/hardening-your-cluster#restrict_network_access_to_the_control_plane_and_nodes>).
//! - `deletion_protection = false`: one `a3ctl destroy` deletes the cluster and its Filestore
//!   data, with no extra step.
//! - A blue-green upgrade strategy on a pool that consumes a reservation: GKE creates the whole
//!   new pool before draining the old one, so the reservation must hold the pool twice
//!   (<https://cloud.google.com/kubernetes-engine/docs/concepts/node-pool-upgrade-strategies>).
//!   A warning, not an error: a reservation may be sized for it; preflight checks its room.
//! - An on-demand pool of a family Google does not sell on demand (A3 Ultra, A4:
//!   [`super::families::FamilySpec::on_demand`]): the create would wait on capacity that is not
//!   offered. A warning, not an error: a project may have an arrangement a3ctl cannot see.
//! - Outside the sandbox, an authorized network inside one of the IPv4 documentation ranges of
//!   RFC 5737 (`192.0.2.0/24`, `198.51.100.0/24`, `203.0.113.0/24`, "TEST-NET-1..3", never routed
//!   on the internet: <https://www.rfc-editor.org/rfc/rfc5737>): examples, the shipped blueprints
//!   included, use them, and a real apply would build the cluster and then be unable to reach its
//!   control plane from anywhere. The sandbox has no network, so there they are fine.

use super::decode::Table;
use super::error::{Finding, Findings, LineCursor, Problem, Source};
use super::schema;
use std::sync::Arc;
use toml::de::DeTable;

/// The IPv4 documentation ranges (RFC 5737 section 3).
pub const DOCUMENTATION_RANGES: [&str; 3] = ["192.0.2.0/24", "198.51.100.0/24", "203.0.113.0/24"];

/// The documentation range `cidr` lies in, if any.
fn documentation_range(cidr: &str) -> Option<&'static str> {
    let net = super::cidr::parse(cidr.trim()).ok()?;
    DOCUMENTATION_RANGES.into_iter().find(|range| {
        let range: ipnet::Ipv4Net = range.parse().expect("a valid range");
        range.contains(&net)
    })
}

/// The warnings of blueprint `text` (none when it does not parse: its errors come first);
/// `sandbox` when it is run against the built-in simulator.
pub fn warnings(text: &str, path_for_messages: &str, sandbox: bool) -> Vec<Problem> {
    let (document, syntax_errors) = DeTable::parse_recoverable(text);
    if !syntax_errors.is_empty() {
        return vec![];
    }
    let root = Table::root(document.get_ref());
    let mut scratch = Findings::default();
    let raw = schema::decode(&root, &mut scratch);
    let mut found: Vec<Finding> = Vec::new();
    let cluster = &raw.cluster;
    for network in &cluster.authorized_networks {
        if let Some(cidr) = &network.cidr
            && cidr.as_str().trim().ends_with("/0")
        {
            found.push(
                Finding::new(
                    cidr.span.clone(),
                    format!(
                        "The control plane is open to every address on the internet (`{}`)",
                        cidr.as_str()
                    ),
                    "every address",
                )
                .help(open_help()),
            );
        }
    }
    for network in cluster.authorized_networks.iter().filter(|_| !sandbox) {
        if let Some(cidr) = &network.cidr
            && let Some(range) = documentation_range(cidr.as_str())
        {
            found.push(
                Finding::new(
                    cidr.span.clone(),
                    format!(
                        "`{}` is in the documentation range {range} (RFC 5737), which no real address is in: the cluster would be built, then kubectl and a3ctl could not reach its control plane",
                        cidr.as_str()
                    ),
                    "an example range",
                )
                .help("replace it with the ranges that run kubectl and a3ctl (office, VPN or CI egress; `curl -s https://checkip.amazonaws.com` prints your current address), or keep it only with --sandbox"),
            );
        }
    }
    if cluster.authorized_networks.is_empty()
        && let Some(span) = root.key_span("cluster").or_else(|| Some(root.anchor()))
    {
        found.push(
            Finding::new(
                span,
                "The control plane is open to every address on the internet: `[cluster] authorized_networks` is empty",
                "no authorized networks",
            )
            .help(open_help()),
        );
    }
    if let Some(protection) = &cluster.deletion_protection
        && !protection.value
    {
        found.push(
            Finding::new(
                protection.span.clone(),
                "Deletion protection is off: one `a3ctl destroy` deletes the cluster and its Filestore data",
                "off",
            )
            .help("remove the line (protection is on by default outside the sandbox) unless this deployment is meant to be thrown away"),
        );
    }
    for pool in &raw.gpu_pools {
        if let Some(machine) = &pool.machine_type
            && let Some(family) = super::MachineFamily::from_machine_type(machine.as_str())
            && !family.spec().on_demand
            && pool
                .capacity
                .as_ref()
                .is_none_or(|c| c.value == "on-demand")
        {
            let span = pool
                .capacity
                .as_ref()
                .map_or(machine.span.clone(), |c| c.span.clone());
            found.push(
                Finding::new(
                    span,
                    format!(
                        "{} (`{}`) is not sold on demand: this pool's nodes may never come",
                        family.spec().display_name,
                        family.machine_type()
                    ),
                    "on demand",
                )
                .help("Google offers it through reservations (`capacity = \"reservation\"`, calendar-mode ones included), flex-start and Spot (`capacity = \"spot\"`): https://cloud.google.com/ai-hypercomputer/docs/consumption-models"),
            );
        }
        let reserved = pool
            .capacity
            .as_ref()
            .is_some_and(|c| c.value == "reservation");
        if let Some(strategy) = pool
            .upgrade
            .as_ref()
            .and_then(|u| u.strategy.as_ref())
            .filter(|s| s.value == "blue-green" && reserved)
        {
            found.push(
                Finding::new(
                    strategy.span.clone(),
                    "A blue-green upgrade of a reservation pool needs the reservation to hold the pool twice: GKE creates every new node before it drains the old ones",
                    "the whole pool again",
                )
                .help("size the reservation for twice the pool's nodes, or use strategy = \"surge\" with max_surge = 0 and max_unavailable = 1 (the default on a reservation)"),
            );
        }
    }
    found.sort_by_key(|f| (f.span.start, f.span.end));
    let source = Source::new(path_for_messages, Arc::from(text));
    let mut cursor = LineCursor::new(text);
    found
        .into_iter()
        .map(|finding| {
            let at = cursor.advance(finding.span.start);
            Problem::from_finding(finding, &source, at)
        })
        .collect()
}

fn open_help() -> &'static str {
    "name the ranges that run kubectl and a3ctl (office, VPN or CI egress), e.g. `authorized_networks = [{ cidr = \"<your egress address>/32\", name = \"office\" }]`; `curl -s https://checkip.amazonaws.com` prints your current address"
}

#[cfg(test)]
mod tests {
    use super::warnings;
    use crate::blueprint::testing::BASE;

    fn with_cluster(lines: &str) -> String {
        format!("{BASE}\n[cluster]\n{lines}\n")
    }

    #[test]
    fn an_open_control_plane_is_a_warning_at_its_cidr() {
        let text =
            with_cluster(r#"authorized_networks = [{ cidr = "0.0.0.0/0", name = "anywhere" }]"#);
        let found = warnings(&text, "a3.toml", false);
        let open: Vec<_> = found
            .iter()
            .filter(|w| w.message.contains("every address"))
            .collect();
        assert_eq!(open.len(), 1, "{found:#?}");
        assert!(open[0].message.contains("`0.0.0.0/0`"));
        assert_eq!(&text[open[0].span()], "\"0.0.0.0/0\"");
        assert!(
            open[0]
                .help
                .as_deref()
                .unwrap()
                .contains("authorized_networks = [{ cidr")
        );
    }

    #[test]
    fn named_ranges_and_protection_left_on_are_not_warned_about() {
        let text =
            with_cluster(r#"authorized_networks = [{ cidr = "34.120.10.0/24", name = "office" }]"#);
        assert!(
            warnings(&text, "a3.toml", false).is_empty(),
            "{:#?}",
            warnings(&text, "a3.toml", false)
        );
    }

    #[test]
    fn a_documentation_range_is_a_warning_outside_the_sandbox_only() {
        for cidr in ["192.0.2.0/24", "198.51.100.16/28", "203.0.113.7/32"] {
            let text = with_cluster(&format!(
                r#"authorized_networks = [{{ cidr = "{cidr}", name = "office" }}]"#
            ));
            let found = warnings(&text, "a3.toml", false);
            assert_eq!(found.len(), 1, "{cidr}: {found:#?}");
            assert!(
                found[0].message.contains("RFC 5737"),
                "{}",
                found[0].message
            );
            assert_eq!(&text[found[0].span()], format!("\"{cidr}\""));
            assert!(warnings(&text, "a3.toml", true).is_empty(), "{cidr}");
        }
        // A range that merely contains one, or sits next to one, is someone's real range.
        for cidr in ["192.0.0.0/16", "198.51.101.0/24"] {
            let text = with_cluster(&format!(
                r#"authorized_networks = [{{ cidr = "{cidr}", name = "office" }}]"#
            ));
            assert!(warnings(&text, "a3.toml", false).is_empty(), "{cidr}");
        }
    }

    #[test]
    fn protection_turned_off_is_a_warning_at_the_value() {
        let text = with_cluster(
            "authorized_networks = [{ cidr = \"10.0.0.0/8\" }]\ndeletion_protection = false",
        );
        let found = warnings(&text, "a3.toml", false);
        assert_eq!(found.len(), 1, "{found:#?}");
        assert!(found[0].message.starts_with("Deletion protection is off"));
        assert_eq!(&text[found[0].span()], "false");
    }

    #[test]
    fn no_authorized_networks_is_a_warning() {
        for text in [with_cluster("authorized_networks = []"), BASE.to_string()] {
            let found = warnings(&text, "a3.toml", false);
            assert!(
                found.iter().any(|w| w.message.contains("is empty")),
                "{found:#?}"
            );
        }
    }

    #[test]
    fn a_blueprint_that_does_not_parse_has_no_warnings() {
        assert!(warnings("[cluster\nauthorized_networks = 1", "a3.toml", false).is_empty());
    }

    #[test]
    fn blue_green_on_a_reservation_is_a_warning_at_the_strategy() {
        let pool = |capacity: &str| {
            format!(
                "{BASE}{capacity}\n[gpu_pool.upgrade]\nstrategy = \"blue-green\"\n\n[cluster]\nauthorized_networks = [{{ cidr = \"10.0.0.0/8\" }}]\n"
            )
        };
        let text = pool("capacity = \"reservation\"\nreservation = \"res\"");
        let found = warnings(&text, "a3.toml", false);
        assert_eq!(found.len(), 1, "{found:#?}");
        assert!(found[0].message.starts_with("A blue-green upgrade of a reservation pool needs the reservation to hold the pool twice"));
        assert_eq!((found[0].line, found[0].column), (13, 12));
        assert!(found[0].help.as_deref().unwrap().contains("max_surge = 0"));
        // On demand, GKE finds the new nodes elsewhere: no warning.
        assert!(warnings(&pool(""), "a3.toml", false).is_empty());
    }

    #[test]
    fn an_on_demand_a3_ultra_or_a4_pool_is_a_warning_naming_the_ways_to_get_it() {
        let text = |machine: &str, capacity: &str| {
            BASE.replace("a3-megagpu-8g", machine)
                .replace("nodes = 2\n", &format!("nodes = 2\n{capacity}"))
                + "\n[cluster]\nauthorized_networks = [{ cidr = \"10.0.0.0/8\" }]\n"
        };
        for (machine, name) in [("a3-ultragpu-8g", "A3 Ultra"), ("a4-highgpu-8g", "A4")] {
            // Capacity unset (on demand by default): at the machine type.
            let found = warnings(&text(machine, ""), "a3.toml", false);
            assert_eq!(found.len(), 1, "{found:#?}");
            assert!(
                found[0]
                    .message
                    .starts_with(&format!("{name} (`{machine}`) is not sold on demand")),
                "{}",
                found[0].message
            );
            assert_eq!((found[0].line, found[0].column), (8, 16));
            let help = found[0].help.as_deref().unwrap();
            for way in [
                "reservation",
                "calendar-mode",
                "flex-start",
                "Spot",
                "consumption-models",
            ] {
                assert!(help.contains(way), "{way} missing from {help}");
            }
            // Said on demand: at the capacity.
            let found = warnings(
                &text(machine, "capacity = \"on-demand\"\n"),
                "a3.toml",
                false,
            );
            assert_eq!(found.len(), 1, "{found:#?}");
            assert_eq!((found[0].line, found[0].column), (10, 12));
            // Reserved or Spot: nothing to say.
            for capacity in [
                "capacity = \"reservation\"\nreservation = \"r\"\n",
                "capacity = \"spot\"\n",
            ] {
                assert!(warnings(&text(machine, capacity), "a3.toml", false).is_empty());
            }
        }
        // A3 High and A3 Mega are sold on demand.
        assert!(warnings(&text("a3-highgpu-8g", ""), "a3.toml", false).is_empty());
        assert!(warnings(&text("a3-megagpu-8g", ""), "a3.toml", false).is_empty());
    }
}
