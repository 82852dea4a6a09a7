//! Network rules: CIDR validity, GPU subnet carving and count, overlap across every range, MTU.
//!
//! The arithmetic is in [`super::cidr`]; this file decides defaults, which ranges are compared
//! and what the messages say.

use ipnet::Ipv4Net;

use super::cidr;
use super::decode::Sp;
use super::error::{Finding, Findings, Span};
use super::families::NetworkMode;
use super::model::Network;
use super::schema::RawNetwork;
use super::validate::{Ctx, int_in, parse_cidr};

pub(crate) const DEFAULT_PRIMARY_SUBNET: &str = "10.0.0.0/20";
pub(crate) const DEFAULT_PODS: &str = "10.4.0.0/14";
pub(crate) const DEFAULT_SERVICES: &str = "10.0.32.0/20";
pub(crate) const DEFAULT_GPU_RANGE: &str = "192.168.0.0/16";
pub(crate) const DEFAULT_GPU_SUBNET_PREFIX: u8 = 24;
pub(crate) const DEFAULT_MASTER: &str = "172.16.0.32/28";
pub(crate) const DEFAULT_PRIMARY_MTU: u32 = 8244;
/// The GPU VPC MTU when the family is unknown (TCPX/TCPXO's).
const DEFAULT_GPU_MTU: u32 = 8244;

/// Smallest subnet Compute Engine accepts.
const SMALLEST_SUBNET: u8 = 29;
/// The most GPU subnets of any machine family (A3 Ultra and A4: one gVNIC and eight RDMA), for a
/// list whose family is unknown.
const MAX_GPU_NICS: usize = 9;

/// A range taking part in the overlap check, with where it was written (if it was).
struct Range {
    what: String,
    net: Ipv4Net,
    span: Option<Span>,
}

fn range(
    f: &mut Findings,
    value: &Option<Sp<String>>,
    key: &str,
    default: &str,
) -> Option<(Ipv4Net, Option<Span>)> {
    match value {
        Some(value) => parse_cidr(f, value, key).map(|net| (net, Some(value.span.clone()))),
        None => cidr::parse(default).ok().map(|net| (net, None)),
    }
}

fn max_prefix(
    f: &mut Findings,
    net: Ipv4Net,
    span: &Option<Span>,
    key: &str,
    max: u8,
    why: &str,
) -> bool {
    if net.prefix_len() <= max {
        return true;
    }
    if let Some(span) = span {
        f.push(
            Finding::new(
                span.clone(),
                format!("`{key}` {net} is too small"),
                format!("a /{}", net.prefix_len()),
            )
            .help(format!("use a /{max} or larger: {why}")),
        );
    }
    false
}

/// `network_mode`: `explicit` unless `managed` is asked for, which only RDMA families support and
/// which leaves every GPU network key without a meaning.
fn network_mode(raw: &RawNetwork, ctx: &mut Ctx) -> Option<NetworkMode> {
    let Some(value) = &raw.network_mode else {
        return Some(NetworkMode::Explicit);
    };
    let mode = match value.as_str() {
        "explicit" => NetworkMode::Explicit,
        "managed" => NetworkMode::Managed,
        other => {
            ctx.f.push(
                Finding::new(
                    value.span.clone(),
                    format!("`network_mode` `{other}` is not a network mode"),
                    "unknown mode",
                )
                .help("use `explicit` (a3ctl creates the GPU VPCs) or `managed` (GKE creates them; A3 Ultra and A4)"),
            );
            return None;
        }
    };
    if mode == NetworkMode::Explicit {
        return Some(mode);
    }
    if let Some(family) = ctx.family
        && !family.supports(mode)
    {
        ctx.f.push(
            Finding::new(
                value.span.clone(),
                format!("{} does not support GKE-managed GPU networking", family.display_name()),
                "explicit only",
            )
            .help(format!(
                "{} uses {}, whose GPU VPCs a3ctl creates; remove `network_mode` (managed networking is for A3 Ultra and A4, over RDMA)",
                family.display_name(),
                family.gpudirect().display()
            )),
        );
        return None;
    }
    // GKE creates the GPU networks itself and refuses a pool that also names additional
    // networks (https://cloud.google.com/kubernetes-engine/docs/how-to/config-auto-net-for-accelerators).
    let mut ok = true;
    let explicit_keys: [(&str, Option<Span>); 5] = [
        ("gpu_range", raw.gpu_range.as_ref().map(|v| v.span.clone())),
        (
            "gpu_subnet_prefix",
            raw.gpu_subnet_prefix.as_ref().map(|v| v.span.clone()),
        ),
        (
            "gpu_subnets",
            raw.gpu_subnets.as_ref().map(|v| v.span.clone()),
        ),
        ("gpu_mtu", raw.gpu_mtu.as_ref().map(|v| v.span.clone())),
        (
            "gpu_firewall",
            raw.gpu_firewall.as_ref().map(|v| v.span.clone()),
        ),
    ];
    for (key, span) in explicit_keys {
        let Some(span) = span else { continue };
        ctx.f.push(
            Finding::new(
                span,
                format!("`{key}` sets up GPU networks, but `network_mode` is `managed`"),
                "explicit networks",
            )
            .also(value.span.clone(), "GKE creates the GPU networks here")
            .help(format!(
                "GKE creates the GPU networks of a managed pool and refuses explicit additional networks with it; remove `{key}`, or set `network_mode = \"explicit\"`"
            )),
        );
        ok = false;
    }
    ok.then_some(mode)
}

pub(crate) fn network(raw: &RawNetwork, ctx: &mut Ctx) -> Option<Network> {
    let mode = network_mode(raw, ctx);
    let managed = mode == Some(NetworkMode::Managed);
    let f = &mut ctx.f;
    let primary = range(
        f,
        &raw.primary_subnet,
        "primary_subnet",
        DEFAULT_PRIMARY_SUBNET,
    );
    let pods = range(f, &raw.pods, "pods", DEFAULT_PODS);
    let services = range(f, &raw.services, "services", DEFAULT_SERVICES);
    let gpu_range = range(f, &raw.gpu_range, "gpu_range", DEFAULT_GPU_RANGE);
    let master = range(f, &raw.master_ipv4_cidr, "master_ipv4_cidr", DEFAULT_MASTER);

    let mut sizes_ok = true;
    if let Some((net, span)) = &primary {
        sizes_ok &= max_prefix(
            f,
            *net,
            span,
            "primary_subnet",
            SMALLEST_SUBNET,
            "Compute Engine subnets are at least /29",
        );
    }
    if let Some((net, Some(span))) = &master
        && net.prefix_len() != 28
    {
        f.push(
            Finding::new(
                span.clone(),
                format!("`master_ipv4_cidr` {net} must be a /28"),
                format!("a /{}", net.prefix_len()),
            )
            .help("GKE reserves exactly a /28 for the control plane, e.g. `172.16.0.32/28`"),
        );
        sizes_ok = false;
    }

    let prefix = match &raw.gpu_subnet_prefix {
        None => Some(DEFAULT_GPU_SUBNET_PREFIX),
        Some(value) => int_in(
            f,
            value,
            "gpu_subnet_prefix",
            8,
            i64::from(SMALLEST_SUBNET),
            "GPU subnets are /8 to /29",
        )
        .and_then(|p| u8::try_from(p).ok()),
    };
    let count = if managed {
        Some(0)
    } else {
        ctx.family.map(|family| family.gpu_nics())
    };
    let family_name = ctx
        .family
        .map_or("this machine family", |family| family.display_name());

    // GPU subnets: explicit list, or carved from the range.
    let mut gpu_ranges: Vec<Range> = Vec::new();
    let gpu_subnets: Option<Vec<Ipv4Net>> = match &raw.gpu_subnets {
        Some(list) => {
            let mut nets = Some(Vec::new());
            for (i, entry) in list.value.iter().enumerate() {
                let parsed = parse_cidr(f, entry, "gpu_subnets").filter(|net| {
                    max_prefix(
                        f,
                        *net,
                        &Some(entry.span.clone()),
                        "gpu_subnets",
                        SMALLEST_SUBNET,
                        "Compute Engine subnets are at least /29",
                    )
                });
                match (parsed, nets.as_mut()) {
                    (Some(net), Some(list)) => {
                        list.push(net);
                        gpu_ranges.push(Range {
                            what: format!("GPU subnet {}", i + 1),
                            net,
                            span: Some(entry.span.clone()),
                        });
                    }
                    _ => nets = None,
                }
            }
            if let Some(count) = count
                && list.value.len() != count
            {
                f.push(
                    Finding::new(
                        list.span.clone(),
                        format!("`gpu_subnets` has {} entries; {family_name} needs {count}", list.value.len()),
                        format!("expected {count} subnets"),
                    )
                    .help(format!("list one subnet per GPU NIC ({count}), or remove `gpu_subnets` to carve them from `gpu_range`")),
                );
                nets = None;
            }
            // Pairwise overlap checks (below) of a list of the wrong length would be quadratic
            // in its length and repeat one mistake per pair; its length is the problem reported.
            if list.value.len() > count.unwrap_or(MAX_GPU_NICS) {
                gpu_ranges.clear();
            }
            nets
        }
        None => match (&gpu_range, prefix, count) {
            (Some((net, span)), Some(prefix), Some(count)) => {
                let carved = cidr::carve(*net, prefix, count);
                if carved.is_none() {
                    let span = span
                        .clone()
                        .or_else(|| raw.gpu_subnet_prefix.as_ref().map(|p| p.span.clone()))
                        .unwrap_or(0..0);
                    let holds = cidr::capacity(*net, prefix);
                    f.push(
                        Finding::new(
                            span,
                            format!("`gpu_range` {net} holds {holds} /{prefix} subnets; {family_name} needs {count}"),
                            "range too small",
                        )
                        .help(format!(
                            "use a /{} or larger `gpu_range`, or a longer `gpu_subnet_prefix`",
                            u32::from(prefix).saturating_sub((count as u32).next_power_of_two().trailing_zeros())
                        )),
                    );
                }
                if let Some(nets) = &carved {
                    for (i, sub) in nets.iter().enumerate() {
                        gpu_ranges.push(Range {
                            what: format!("GPU subnet {}", i + 1),
                            net: *sub,
                            span: span.clone(),
                        });
                    }
                }
                carved
            }
            _ => None,
        },
    };

    // Overlap across every range of the cluster.
    let mut ranges: Vec<Range> = Vec::new();
    for (what, value) in [
        ("primary_subnet", &primary),
        ("pods", &pods),
        ("services", &services),
        ("master_ipv4_cidr", &master),
    ] {
        if let Some((net, span)) = value {
            ranges.push(Range {
                what: format!("`{what}`"),
                net: *net,
                span: span.clone(),
            });
        }
    }
    ranges.extend(gpu_ranges);
    let mut disjoint = true;
    for (i, later) in ranges.iter().enumerate() {
        for earlier in &ranges[..i] {
            if !cidr::overlaps(earlier.net, later.net) {
                continue;
            }
            disjoint = false;
            let (at, other) = if later.span.is_some() {
                (later, earlier)
            } else {
                (earlier, later)
            };
            let mut finding = Finding::new(
                at.span.clone().unwrap_or(0..0),
                format!("{} {} overlaps {} {}", at.what, at.net, other.what, other.net),
                "overlapping range",
            )
            .help("the primary subnet, pods, services, control plane and every GPU subnet must be disjoint");
            if let Some(span) = &other.span
                && Some(span) != at.span.as_ref()
            {
                finding = finding.also(span.clone(), format!("{} is set here", other.what));
            } else if other.span.is_none() {
                finding = finding.help(format!(
                    "the primary subnet, pods, services, control plane and every GPU subnet must be disjoint; {} is a default, override it in [network]",
                    other.what
                ));
            }
            f.push(finding);
        }
    }

    let gpu_mtu = gpu_mtu(raw, ctx.family, f);
    let gpu_firewall = match (&raw.gpu_firewall, ctx.family) {
        (Some(value), Some(family)) if value.value && family.spec().nics.rdma_subnets > 0 => {
            // Compute Engine refuses firewall rules on a network whose profile blocks them,
            // which the RoCE profile does (cluster-toolkit `modules/network/vpc` README: with a
            // RoCE network profile, firewall rules "will throw an error").
            f.push(
                Finding::new(
                    value.span.clone(),
                    format!("{}'s RDMA VPC cannot have firewall rules", family.display_name()),
                    "firewall on a RoCE VPC",
                )
                .help("Compute Engine refuses firewall rules on a VPC made from a RoCE network profile; remove `gpu_firewall` (the gVNIC GPU VPC keeps its internal rule) or set it to false"),
            );
            None
        }
        (Some(value), _) => Some(value.value),
        (None, _) => Some(true),
    };
    let primary_mtu = match &raw.primary_mtu {
        None => Some(DEFAULT_PRIMARY_MTU),
        Some(value) => int_in(
            f,
            value,
            "primary_mtu",
            1300,
            8896,
            "VPC MTUs are 1300 to 8896",
        ),
    };

    if !(disjoint && sizes_ok) {
        return None;
    }
    Some(Network {
        primary_subnet: primary?.0,
        pods: pods?.0,
        services: services?.0,
        gpu_range: gpu_range?.0,
        gpu_subnet_prefix: prefix?,
        mode: mode?,
        gpu_subnets: if managed { Vec::new() } else { gpu_subnets? },
        gpu_mtu: gpu_mtu?,
        gpu_firewall: gpu_firewall?,
        primary_mtu: primary_mtu?,
        nat: raw.nat.as_ref().is_none_or(|v| v.value),
        master_ipv4_cidr: master?.0,
        gpu_name_base: 1,
    })
}

/// `gpu_mtu`: the family's (8244 for TCPX/TCPXO, 8896 for RDMA); no other value.
fn gpu_mtu(
    raw: &RawNetwork,
    family: Option<super::MachineFamily>,
    f: &mut Findings,
) -> Option<u32> {
    let want = family.map_or(DEFAULT_GPU_MTU, |family| family.gpu_mtu());
    let Some(value) = &raw.gpu_mtu else {
        return Some(want);
    };
    if value.value == i64::from(want) {
        return Some(want);
    }
    let (flavour, why) = match family.map(|family| family.gpudirect()) {
        Some(super::GpuDirect::Rdma) => (
            "GPUDirect-RDMA",
            format!(
                "the RDMA and gVNIC GPU VPCs of A3 Ultra and A4 use {want}, the RoCE network profile's MTU"
            ),
        ),
        _ => (
            "GPUDirect",
            format!("GPUDirect-TCPX and TCPXO are tuned for an MTU of {want} on the GPU VPCs"),
        ),
    };
    f.push(
        Finding::new(
            value.span.clone(),
            format!(
                "`gpu_mtu` must be {want} for {flavour}, found {}",
                value.value
            ),
            "wrong MTU",
        )
        .help(format!("{why}; remove `gpu_mtu` or set it to {want}")),
    );
    None
}

#[cfg(test)]
mod tests {
    use crate::blueprint::parse;
    use crate::blueprint::testing::{BASE, one_problem, problems};

    fn network(lines: &str) -> String {
        BASE.replace("[[gpu_pool]]", &format!("[network]\n{lines}\n[[gpu_pool]]"))
    }

    #[test]
    fn defaults_carve_one_subnet_per_gpu_nic() {
        let blueprint = parse(BASE, "t").expect("valid");
        let gpu: Vec<String> = blueprint
            .network
            .gpu_subnets
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(gpu.len(), 8);
        assert_eq!(gpu[0], "192.168.0.0/24");
        assert_eq!(gpu[7], "192.168.7.0/24");
        assert_eq!(blueprint.network.primary_subnet.to_string(), "10.0.0.0/20");
        assert_eq!(blueprint.network.gpu_mtu, 8244);
        assert!(blueprint.network.nat);
    }

    #[test]
    fn cidr_blocks_must_be_valid() {
        one_problem(
            &network("pods = \"10.4.0.0\""),
            "`pods` `10.4.0.0` is not a valid IPv4 CIDR block",
            7,
            8,
        );
        let problem = one_problem(
            &network("services = \"10.0.32.1/20\""),
            "not a valid IPv4 CIDR block",
            7,
            12,
        );
        assert_eq!(
            problem.help.as_deref(),
            Some("did you mean `10.0.32.0/20`?")
        );
        one_problem(
            &network("pods = \"fd00::/64\""),
            "not a valid IPv4 CIDR block",
            7,
            8,
        );
        one_problem(
            &network("primary_subnet = \"10.0.0.0/30\""),
            "`primary_subnet` 10.0.0.0/30 is too small",
            7,
            18,
        );
        one_problem(
            &network("master_ipv4_cidr = \"172.16.0.0/24\""),
            "must be a /28",
            7,
            20,
        );
    }

    #[test]
    fn ranges_must_not_overlap() {
        let text = network("primary_subnet = \"10.8.0.0/20\"\npods = \"10.8.0.0/14\"");
        let problem = one_problem(
            &text,
            "`pods` 10.8.0.0/14 overlaps `primary_subnet` 10.8.0.0/20",
            8,
            8,
        );
        assert_eq!(
            problem.help.as_deref().map(|h| h.contains("disjoint")),
            Some(true)
        );
        let text = network("services = \"192.168.3.0/24\"");
        one_problem(
            &text,
            "`services` 192.168.3.0/24 overlaps GPU subnet 4 192.168.3.0/24",
            7,
            12,
        );
    }

    #[test]
    fn explicit_gpu_subnets_need_one_per_nic() {
        let text = network("gpu_subnets = [\"192.168.0.0/24\", \"192.168.1.0/24\"]");
        let problem = one_problem(&text, "`gpu_subnets` has 2 entries; A3 Mega needs 8", 7, 15);
        assert_eq!(problem.label, "expected 8 subnets");
        let eight: Vec<String> = (0..8)
            .map(|i| format!("\"10.{}.0.0/20\"", 100 + i))
            .collect();
        let blueprint = parse(
            &network(&format!("gpu_subnets = [{}]", eight.join(", "))),
            "t",
        )
        .expect("valid");
        assert_eq!(
            blueprint.network.gpu_subnets[7].to_string(),
            "10.107.0.0/20"
        );
        let mut clash = eight.clone();
        clash[2] = "\"10.0.0.0/24\"".into();
        let text = network(&format!("gpu_subnets = [{}]", clash.join(", ")));
        one_problem(
            &text,
            "GPU subnet 3 10.0.0.0/24 overlaps `primary_subnet`",
            7,
            50,
        );
    }

    #[test]
    fn gpu_range_must_hold_every_subnet() {
        let problem = one_problem(
            &network("gpu_range = \"192.168.0.0/22\""),
            "holds 4 /24 subnets; A3 Mega needs 8",
            7,
            13,
        );
        assert!(problem.help.as_deref().is_some_and(|h| h.contains("/21")));
        one_problem(
            &network("gpu_subnet_prefix = 30"),
            "`gpu_subnet_prefix` must be between 8 and 29",
            7,
            21,
        );
    }

    #[test]
    fn gpu_mtu_must_be_8244_and_primary_mtu_in_range() {
        let problem = one_problem(
            &network("gpu_mtu = 8896"),
            "`gpu_mtu` must be 8244 for GPUDirect, found 8896",
            7,
            11,
        );
        assert!(problem.help.as_deref().is_some_and(|h| h.contains("TCPXO")));
        one_problem(
            &network("primary_mtu = 9000"),
            "`primary_mtu` must be between 1300 and 8896",
            7,
            15,
        );
        assert!(problems(&network("primary_mtu = 1460")).is_empty());
    }

    #[test]
    fn network_keys_have_types() {
        one_problem(
            &network("nat = \"yes\""),
            "`nat` in [network] must be a boolean, found a string",
            7,
            7,
        );
        one_problem(
            &network("gpu_subnets = [1]"),
            "Every entry of `gpu_subnets`",
            7,
            16,
        );
    }

    #[test]
    fn a_long_gpu_subnets_list_is_reported_once_not_per_overlapping_pair() {
        // 20,000 copies of one block: pairwise overlap findings would be 200 million.
        let list = vec!["\"192.168.0.0/24\""; 20_000].join(", ");
        one_problem(
            &network(&format!("gpu_subnets = [{list}]")),
            "`gpu_subnets` has 20000 entries; A3 Mega needs 8",
            7,
            15,
        );
    }
}
