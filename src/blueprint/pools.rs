//! Node pool rules: GPU pools (machine family, zones, capacity, placement, maintenance) and the
//! CPU system pool.
//!
//! The first GPU pool with a valid machine type fixes the blueprint's [`MachineFamily`] in
//! [`Ctx`], which the network and version rules then use.

use std::collections::hash_map::Entry;
use std::collections::{HashMap, HashSet};

use super::decode::{Sp, choice_hint, quoted_list};
use super::error::{Finding, Findings};
use super::model::{Capacity, GpuPool, Placement, SystemPool};
use super::names;
use super::presets::{self, MachineFamily};
use super::schema::{RawBlueprint, RawGpuPool, RawSystemPool};
use super::validate::{Ctx, backticked, check_zone, choice, int_in, name_ok};

// GKE's documented limits for a Standard cluster. `nodes` is per zone of a pool (GKE's
// `initialNodeCount`), so a pool has `nodes` × zones nodes.
//
// - 1,000 nodes per node pool per zone and 15,000 nodes per cluster: "Quotas and limits",
//   https://cloud.google.com/kubernetes-engine/quotas (limits per cluster, GKE Standard).
// - Above 5,000 nodes "multi-network is not supported": "Plan for large GKE clusters",
//   https://cloud.google.com/kubernetes-engine/docs/concepts/planning-large-clusters (clusters
//   with more than 5,000 nodes). Every a3ctl cluster is multi-network: the GPU NICs need it.
// - 200 node pools per cluster: the number GKE's documentation gives for node pools per cluster,
//   beyond which the control plane and autoscaling slow down ("Clusters that have more than 200
//   total node pools might have increased latency", node pool auto-creation limitations,
//   https://cloud.google.com/kubernetes-engine/docs/how-to/node-auto-provisioning, which refers
//   to the limits of "Plan for large GKE clusters" above).

/// Nodes per node pool per zone.
const MAX_NODES: i64 = 1000;
/// Nodes per GKE Standard cluster.
pub(crate) const MAX_CLUSTER_NODES: u64 = 15_000;
/// Nodes per multi-network cluster.
pub(crate) const MAX_MULTI_NETWORK_NODES: u64 = 5_000;
/// Node pools per cluster.
pub(crate) const MAX_NODE_POOLS: usize = 200;
const QUOTAS_URL: &str = "https://cloud.google.com/kubernetes-engine/quotas";
const LARGE_CLUSTERS_URL: &str =
    "https://cloud.google.com/kubernetes-engine/docs/concepts/planning-large-clusters";

/// A checked GPU pool, with the spanned name kept for cross-pool rules.
pub(crate) struct CheckedPool {
    pub name: Option<Sp<String>>,
    pub model: Option<GpuPool>,
}

pub(crate) fn gpu_pools(raw: &RawBlueprint, ctx: &mut Ctx) -> Vec<CheckedPool> {
    if raw.gpu_pools.is_empty() {
        if raw.gpu_pool_malformed {
            return Vec::new();
        }
        ctx.f.push(
            Finding::new(raw.gpu_pool_anchor.clone(), "The blueprint declares no GPU node pool", "no `[[gpu_pool]]`")
                .help("add a `[[gpu_pool]]` section with `machine_type = \"a3-megagpu-8g\"` and `nodes = 2`"),
        );
        return Vec::new();
    }
    // The family is decided before the pools are checked one by one, so that every pool's
    // mismatch is reported against the first pool.
    let mut first: Option<(MachineFamily, &Sp<String>)> = None;
    for pool in &raw.gpu_pools {
        let Some(machine_type) = &pool.machine_type else {
            continue;
        };
        let Some(family) = MachineFamily::from_machine_type(machine_type.as_str()) else {
            continue;
        };
        match first {
            None => first = Some((family, machine_type)),
            Some((first_family, first_span)) if first_family != family => ctx.f.push(
                Finding::new(
                    machine_type.span.clone(),
                    "All GPU pools of a blueprint must use one machine family",
                    format!("{} here", family.display_name()),
                )
                .also(first_span.span.clone(), format!("the first pool uses {}", first_family.display_name()))
                .help("a cluster serves one family's GPU networks (4 gVNIC for A3 High, 8 for A3 Mega, 8 RDMA for A3 Ultra and A4) and NCCL stack; use one blueprint, and cluster, per family, and to migrate build the new family's cluster from its own blueprint (docs/blueprint.md, \"Why one family\")"),
            ),
            Some(_) => {}
        }
    }
    ctx.family = first.map(|(family, _)| family);
    ctx.managed_networking = raw
        .network
        .network_mode
        .as_ref()
        .is_some_and(|m| m.as_str() == "managed");

    let mut checked: Vec<CheckedPool> = raw
        .gpu_pools
        .iter()
        .map(|pool| gpu_pool(pool, ctx))
        .collect();
    // A map, not a list: a blueprint may declare thousands of pools (a mistake reported below,
    // but one that must not make validation quadratic).
    let mut seen: HashMap<&str, &Sp<String>> = HashMap::new();
    for pool in &mut checked {
        let Some(name) = &pool.name else { continue };
        match seen.entry(name.as_str()) {
            Entry::Occupied(previous) => {
                ctx.f.push(duplicate_pool(name, previous.get()));
                pool.model = None;
            }
            Entry::Vacant(slot) => {
                slot.insert(name);
            }
        }
    }
    checked
}

fn duplicate_pool(name: &Sp<String>, previous: &Sp<String>) -> Finding {
    Finding::new(
        name.span.clone(),
        format!("Node pool name `{}` is used twice", name.value),
        "second use",
    )
    .also(previous.span.clone(), "first used here")
    .help("node pool names must be unique within the cluster")
}

fn pool_name_ok(f: &mut Findings, name: &Sp<String>, cluster: Option<&str>) -> bool {
    let help = format!(
        "node pool names are lowercase letters, digits and hyphens, starting with a letter, at most {} characters",
        names::NODE_POOL_NAME_MAX
    );
    if !name_ok(
        f,
        name,
        "Node pool name",
        names::rfc1035(name.as_str(), names::NODE_POOL_NAME_MAX),
        &help,
    ) {
        return false;
    }
    let Some(cluster) = cluster else { return true };
    let combined = cluster.len() + 1 + name.value.len();
    if combined > names::CLUSTER_POOL_MAX {
        f.push(
            Finding::new(
                name.span.clone(),
                format!("Cluster and node pool names `{cluster}-{}` are {combined} characters long, the limit is {}", name.value, names::CLUSTER_POOL_MAX),
                "name too long together with the cluster name",
            )
            .help(format!(
                "GKE shortens `<cluster>-<pool>` beyond {} characters in node and instance group names; use a pool name of at most {} characters",
                names::CLUSTER_POOL_MAX,
                names::CLUSTER_POOL_MAX.saturating_sub(cluster.len() + 1)
            )),
        );
        return false;
    }
    true
}

fn gpu_pool(raw: &RawGpuPool, ctx: &mut Ctx) -> CheckedPool {
    let f = &mut ctx.f;
    // Pool names default to `gpu-<index>`; a defaulted name is checked like a written one but
    // has no span of its own, so it points at the pool.
    let name = raw
        .name
        .clone()
        .unwrap_or_else(|| Sp::new(format!("gpu-{}", raw.index), raw.anchor.clone()));
    let name_valid = pool_name_ok(f, &name, ctx.name.as_deref());

    let family = raw.machine_type.as_ref().and_then(|machine_type| {
        let family = MachineFamily::from_machine_type(machine_type.as_str());
        if family.is_none() {
            f.push(
                Finding::new(
                    machine_type.span.clone(),
                    format!("`{}` is not an A3 GPU machine type", machine_type.value),
                    "unsupported machine type",
                )
                .help(choice_hint(
                    machine_type.as_str(),
                    &presets::GPU_MACHINE_TYPES,
                )),
            );
        }
        family
    });
    // A pool of another family than the first was reported above; it is still checked alone.

    let zones = match &raw.zones {
        None => ctx.zone.clone().map(|zone| vec![(zone, None)]),
        Some(list) if list.value.is_empty() => {
            f.push(
                Finding::new(list.span.clone(), "`zones` is empty", "no zone")
                    .help("list one zone, or remove `zones` to use the blueprint's zone"),
            );
            None
        }
        Some(list) => {
            let mut zones = Some(Vec::new());
            let mut listed: HashSet<&str> = HashSet::new();
            for zone in &list.value {
                if !listed.insert(zone.as_str()) {
                    f.push(Finding::new(
                        zone.span.clone(),
                        format!("Zone `{}` is listed twice", zone.value),
                        "duplicate zone",
                    ));
                    zones = None;
                    continue;
                }
                match check_zone(f, zone, ctx.region.as_deref(), None) {
                    Some(valid) => {
                        if let Some(list) = zones.as_mut() {
                            list.push((valid, Some(zone.span.clone())));
                        }
                    }
                    None => zones = None,
                }
            }
            zones
        }
    };
    let mut zones_ok = zones.is_some();
    if let (Some(family), Some(zones), Some(machine_type)) = (family, &zones, &raw.machine_type) {
        for (zone, span) in zones {
            if family.offered_in(zone) {
                continue;
            }
            zones_ok = false;
            let in_region: Vec<String> = family
                .zones()
                .iter()
                .filter(|z| Some(presets::region_of_zone(z)) == Some(ctx.region.as_deref()))
                .map(|z| z.to_string())
                .collect();
            let help = if in_region.is_empty() {
                format!(
                    "`{}` is offered in {}",
                    family.machine_type(),
                    quoted_list(family.zones())
                )
            } else {
                format!(
                    "zones of this region offering `{}`: {}",
                    family.machine_type(),
                    backticked(&in_region)
                )
            };
            let finding = match span {
                Some(span) => Finding::new(
                    span.clone(),
                    format!(
                        "`{}` is not offered in zone `{zone}`",
                        family.machine_type()
                    ),
                    "machine type not offered here",
                ),
                None => Finding::new(
                    machine_type.span.clone(),
                    format!(
                        "`{}` is not offered in zone `{zone}`",
                        family.machine_type()
                    ),
                    format!("not offered in `{zone}`"),
                ),
            };
            f.push(finding.help(help));
        }
    }

    let capacity_name = match &raw.capacity {
        None => Some("on-demand"),
        Some(value) => choice(f, value, "capacity", &Capacity::NAMES, |text| {
            Capacity::NAMES.iter().copied().find(|n| *n == text)
        }),
    };
    let capacity = capacity_name.and_then(|kind| capacity(raw, kind, f));

    let placement = match &raw.placement {
        None => capacity_name.map(|kind| {
            if matches!(kind, "spot" | "flex-start") {
                Placement::None
            } else {
                Placement::Compact
            }
        }),
        Some(value) => {
            let placement = choice(
                f,
                value,
                "placement",
                &["compact", "none"],
                |text| match text {
                    "compact" => Some(Placement::Compact),
                    "none" => Some(Placement::None),
                    _ => None,
                },
            );
            if placement == Some(Placement::Compact) && capacity_name == Some("spot") {
                f.push(
                    Finding::new(
                        value.span.clone(),
                        "Spot pools cannot use compact placement",
                        "compact with spot",
                    )
                    .help(
                        "remove `placement` (spot pools default to `none`) or use another capacity",
                    ),
                );
                None
            } else {
                placement
            }
        }
    };
    if placement == Some(Placement::Compact)
        && let Some(zones) = &zones
        && zones.len() != 1
    {
        let span = raw
            .zones
            .as_ref()
            .map_or(raw.anchor.clone(), |z| z.span.clone());
        let mut finding = Finding::new(
            span,
            "Compact placement needs exactly one zone",
            format!("{} zones", zones.len()),
        )
        .help("list a single zone, or set `placement = \"none\"`");
        if let Some(placement) = &raw.placement {
            finding = finding.also(placement.span.clone(), "compact placement set here");
        }
        f.push(finding);
        zones_ok = false;
    }

    // The RDMA VPC is made from one zone's RoCE network profile (`<zone>-vpc-roce`), and its
    // NICs work only in that zone; a3ctl makes it from the blueprint's `zone`. In managed mode
    // GKE makes the networks per pool, wherever it is.
    let managed = ctx.managed_networking;
    if let (Some(family), Some(zones), Some(list), Some(zone)) =
        (family, &zones, &raw.zones, ctx.zone.as_deref())
        && family.spec().nics.rdma_subnets > 0
        && !managed
    {
        for (other, span) in zones.iter().filter(|(z, _)| z != zone) {
            f.push(
                Finding::new(
                    span.clone().unwrap_or(list.span.clone()),
                    format!("{} pools must be in zone `{zone}`, found `{other}`", family.display_name()),
                    "outside the RDMA VPC's zone",
                )
                .help(format!(
                    "the RDMA VPC is made from `{zone}`'s RoCE network profile (`{zone}-vpc-roce`) and its NICs only work there; list only `{zone}`, change the blueprint's `zone`, or use `network_mode = \"managed\"`"
                )),
            );
            zones_ok = false;
        }
    }

    // The pool's maintenance interval exists only in GKE's v1beta1 API
    // (`NodeConfig.hostMaintenancePolicy.maintenanceInterval`,
    // https://cloud.google.com/kubernetes-engine/docs/reference/rest/v1beta1/NodeConfig) and a
    // reservation's only in Compute's beta API; a3ctl calls the v1 APIs, which have neither
    // (container v1 and compute v1 discovery documents), so the key would be dropped: refused.
    if let Some(value) = &raw.host_maintenance {
        f.push(
            Finding::new(
                value.span.clone(),
                "`host_maintenance` cannot reach GKE: its v1 API has no host maintenance policy",
                "not sent",
            )
            .help(HOST_MAINTENANCE_UNSUPPORTED),
        );
    }

    let nodes = raw.nodes.as_ref().and_then(|nodes| {
        if nodes.value == 0 {
            f.push(
                Finding::new(nodes.span.clone(), "`nodes` must be at least 1", "zero nodes")
                    .help("a3ctl's pools have a fixed size: set a node count of 1 or more (a pool that starts empty and scales up, as flex-start pools do, needs autoscaling, which a3ctl does not build yet)"),
            );
            return None;
        }
        int_in(f, nodes, "nodes", 1, MAX_NODES, &format!("`nodes` counts the nodes in each zone of the pool; GKE allows at most 1000 per node pool and zone ({QUOTAS_URL})"))
    });

    let upgrade = super::maintenance::upgrade(
        raw.upgrade.as_ref(),
        matches!(capacity, Some(Capacity::Reservation { .. })),
        f,
    );
    let model = (|| {
        if !(name_valid && zones_ok) {
            return None;
        }
        Some(GpuPool {
            name: name.value.clone(),
            family: family?,
            zones: zones?.into_iter().map(|(zone, _)| zone).collect(),
            nodes: nodes?,
            capacity: capacity?,
            placement: placement?,
            prevent_destroy: raw.prevent_destroy.as_ref().is_some_and(|v| v.value),
            upgrade: Some(upgrade?),
            // Checked against the control plane's once `[cluster]` is read
            // ([`super::cluster::pool_version`]).
            version: None,
        })
    })();
    CheckedPool {
        name: name_valid.then_some(name),
        model,
    }
}

fn capacity(raw: &RawGpuPool, kind: &str, f: &mut Findings) -> Option<Capacity> {
    let capacity_span = raw.capacity.as_ref().map(|c| c.span.clone());
    if kind == "reservation" {
        let Some(reservation) = &raw.reservation else {
            f.push(
                Finding::new(
                    capacity_span.unwrap_or(raw.anchor.clone()),
                    "Capacity `reservation` needs a `reservation` name",
                    "no reservation named",
                )
                .help("add `reservation = \"<reservation name>\"` to this pool"),
            );
            return None;
        };
        let reservation_ok = reservation_name_ok(f, reservation);
        let block = match &raw.reservation_block {
            None => Some(None),
            Some(block) => {
                let help = "block names are lowercase letters, digits and hyphens; list them with `gcloud beta compute reservations blocks list`";
                name_ok(
                    f,
                    block,
                    "Reservation block",
                    names::rfc1035(block.as_str(), 63),
                    help,
                )
                .then(|| Some(block.value.clone()))
            }
        };
        return (reservation_ok)
            .then_some(())
            .and(block.map(|block| Capacity::Reservation {
                reservation: reservation.value.clone(),
                block,
            }));
    }
    let mut ok = true;
    if let Some(reservation) = &raw.reservation {
        let (message, help) = match kind {
            "spot" => (
                "Spot pools cannot consume a reservation",
                "remove `reservation`, or use `capacity = \"reservation\"`",
            ),
            "flex-start" => (
                "Flex-start pools cannot consume a reservation",
                "remove `reservation`, or use `capacity = \"reservation\"`",
            ),
            _ => (
                "`reservation` is set but `capacity` is not `reservation`",
                "set `capacity = \"reservation\"` to consume it, or remove `reservation`",
            ),
        };
        let mut finding =
            Finding::new(reservation.span.clone(), message, "reservation not used").help(help);
        if let Some(span) = &capacity_span {
            finding = finding.also(span.clone(), format!("capacity is `{kind}`"));
        }
        f.push(finding);
        ok = false;
    }
    if let Some(block) = &raw.reservation_block {
        f.push(
            Finding::new(block.span.clone(), "`reservation_block` is only allowed with `capacity = \"reservation\"`", "block without a reservation")
                .help("remove `reservation_block`, or consume the reservation with `capacity = \"reservation\"`"),
        );
        ok = false;
    }
    if kind == "flex-start" {
        if let Some(span) = &capacity_span {
            f.push(
                Finding::new(
                    span.clone(),
                    "a3ctl cannot build a flex-start pool in the shape GKE requires yet",
                    "flex-start needs an autoscaling pool",
                )
                .help(FLEX_START_SHAPE),
            );
        }
        ok = false;
    }
    let capacity = match kind {
        "spot" => Capacity::Spot,
        "flex-start" => Capacity::FlexStart,
        _ => Capacity::OnDemand,
    };
    ok.then_some(capacity)
}

/// Why `host_maintenance` is refused.
pub const HOST_MAINTENANCE_UNSUPPORTED: &str = "a node pool's maintenance interval (PERIODIC or AS_NEEDED) exists only in GKE's v1beta1 API (NodeConfig.hostMaintenancePolicy) and a reservation's only in Compute's beta API; a3ctl uses the v1 APIs and would accept the setting and never send it. Remove `host_maintenance`: the pool gets GKE's default maintenance, which `[cluster.maintenance]` governs";

/// Why a flex-start pool is refused: the shape Google's documentation and tools give flex-start
/// node pools, which a3ctl's fixed-size pools are not. No GKE refusal text for another shape is
/// published, so a3ctl refuses it before any call rather than build a pool Google's tools never
/// build:
/// - GKE, "About flex-start provisioning mode"
///   (<https://cloud.google.com/kubernetes-engine/docs/concepts/dws>): flex-start VMs come from
///   node pools with autoscaling (scaling from zero), GKE 1.32.2-gke.1652000 or later;
/// - Cluster Toolkit `modules/compute/gke-node-pool` (GoogleCloudPlatform/cluster-toolkit): its
///   flex-start preconditions ask for autoscaling, auto-repair off, reservation affinity none and
///   no Spot;
/// - xpk `src/xpk/core/capacity.py` (AI-Hypercomputer/xpk): flex-start pools are created with
///   autoscaling from 0, location policy ANY and no reservation.
pub const FLEX_START_SHAPE: &str = "GKE's flex-start pools autoscale from 0 nodes up to a maximum, with location policy ANY, auto-repair off, reservation affinity none and no Spot, on GKE 1.32.2-gke.1652000 or later (https://cloud.google.com/kubernetes-engine/docs/concepts/dws; Cluster Toolkit's gke-node-pool module; xpk's core/capacity.py); a3ctl's pools have a fixed node count, so it would build a shape no Google tool builds. Use `capacity = \"reservation\"`, `\"on-demand\"` or `\"spot\"`";

/// A reservation is a name in the project, or `projects/<p>/reservations/<r>` when shared.
fn reservation_name_ok(f: &mut Findings, reservation: &Sp<String>) -> bool {
    let text = reservation.as_str();
    let rule = match text
        .strip_prefix("projects/")
        .map(|rest| rest.split('/').collect::<Vec<_>>())
    {
        Some(parts) if parts.len() == 3 && parts[1] == "reservations" => {
            names::project_id(parts[0]).and_then(|()| names::rfc1035(parts[2], 63))
        }
        Some(_) => Err(
            "a shared reservation is written `projects/<project>/reservations/<name>`".to_string(),
        ),
        None => names::rfc1035(text, 63),
    };
    let help = "use the reservation's name (see `gcloud compute reservations list`); a block goes in `reservation_block`";
    name_ok(f, reservation, "Reservation", rule, help)
}

/// GKE's limits on the cluster as a whole: node pools per cluster, nodes per cluster (and per
/// multi-network cluster). Pools and node counts that are themselves invalid are reported
/// elsewhere and left out of the totals.
pub(crate) fn cluster_limits(raw: &RawBlueprint, ctx: &mut Ctx) {
    let f = &mut ctx.f;
    // The system pool, then one pool per `[[gpu_pool]]`.
    let pools = 1 + raw.gpu_pools.len();
    if pools > MAX_NODE_POOLS {
        let first_over = &raw.gpu_pools[MAX_NODE_POOLS - 1];
        f.push(
            Finding::new(
                first_over.anchor.clone(),
                format!(
                    "The blueprint declares {} node pools ({} GPU pools and the system pool); GKE supports at most {MAX_NODE_POOLS} per cluster",
                    thousands(pools as u64),
                    thousands(raw.gpu_pools.len() as u64),
                ),
                format!("node pool {} of the cluster", MAX_NODE_POOLS + 1),
            )
            .help(format!(
                "GKE documents {MAX_NODE_POOLS} node pools per cluster ({LARGE_CLUSTERS_URL}); a pool holds up to {MAX_NODES} nodes per zone, so merge pools that differ only in size, or split the deployment into several blueprints (one cluster each)"
            )),
        );
    }

    let valid = |nodes: &Sp<i64>| {
        (0..=MAX_NODES)
            .contains(&nodes.value)
            .then_some(nodes.value as u64)
    };
    let system = match &raw.system_pool.nodes {
        None => 2,
        Some(nodes) => valid(nodes).unwrap_or(0),
    };
    let mut total = system;
    let mut crossing: [Option<&Sp<i64>>; 2] = [None, None];
    for pool in &raw.gpu_pools {
        let Some(nodes) = &pool.nodes else { continue };
        let Some(per_zone) = valid(nodes) else {
            continue;
        };
        let zones = match &pool.zones {
            Some(list) => list
                .value
                .iter()
                .map(|zone| zone.as_str())
                .collect::<HashSet<_>>()
                .len()
                .max(1) as u64,
            None => 1,
        };
        let before = total;
        total += per_zone * zones;
        for (slot, limit) in crossing
            .iter_mut()
            .zip([MAX_MULTI_NETWORK_NODES, MAX_CLUSTER_NODES])
        {
            if before <= limit && total > limit {
                *slot = Some(nodes);
            }
        }
    }
    let counted =
        "nodes count per zone of a pool (`nodes` × the pool's zones), plus the system pool's";
    if let [_, Some(nodes)] = crossing {
        f.push(
            Finding::new(
                nodes.span.clone(),
                format!(
                    "The cluster would have {} nodes; GKE allows at most {} per cluster",
                    thousands(total),
                    thousands(MAX_CLUSTER_NODES)
                ),
                format!("the total passes {} nodes here", thousands(MAX_CLUSTER_NODES)),
            )
            .help(format!(
                "{counted}. GKE Standard clusters have at most {} nodes ({QUOTAS_URL}); lower `nodes`, or split the GPU pools across several blueprints (one cluster each)",
                thousands(MAX_CLUSTER_NODES)
            )),
        );
    } else if let [Some(nodes), _] = crossing {
        f.push(
            Finding::new(
                nodes.span.clone(),
                format!(
                    "The cluster would have {} nodes; a multi-network GKE cluster has at most {}",
                    thousands(total),
                    thousands(MAX_MULTI_NETWORK_NODES)
                ),
                format!("the total passes {} nodes here", thousands(MAX_MULTI_NETWORK_NODES)),
            )
            .help(format!(
                "{counted}. The GPU NICs need GKE multi-networking, which GKE does not support in clusters of more than {} nodes ({LARGE_CLUSTERS_URL}); lower `nodes`, or split the GPU pools across several blueprints (one cluster each)",
                thousands(MAX_MULTI_NETWORK_NODES)
            )),
        );
    }
}

/// `15,000`.
fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, digit) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(digit);
    }
    out
}

pub(crate) fn system_pool(
    raw: &RawSystemPool,
    gpu_pools: &[CheckedPool],
    ctx: &mut Ctx,
) -> Option<SystemPool> {
    let f = &mut ctx.f;
    let name = match &raw.name {
        None => Some("system".to_string()),
        Some(name) => {
            let mut ok = pool_name_ok(f, name, ctx.name.as_deref());
            if ok
                && let Some(previous) = gpu_pools
                    .iter()
                    .filter_map(|p| p.name.as_ref())
                    .find(|p| p.value == name.value)
            {
                f.push(duplicate_pool(name, previous));
                ok = false;
            }
            ok.then(|| name.value.clone())
        }
    };
    if raw.name.is_none()
        && let Some(clash) = gpu_pools
            .iter()
            .filter_map(|p| p.name.as_ref())
            .find(|p| p.value == "system")
    {
        f.push(
            Finding::new(
                clash.span.clone(),
                "Node pool name `system` is taken by the system pool",
                "reserved name",
            )
            .help("rename this GPU pool, or give `[system_pool]` another `name`"),
        );
    }
    let machine_type = match &raw.machine_type {
        None => Some("e2-standard-4".to_string()),
        Some(value) => {
            if MachineFamily::from_machine_type(value.as_str()).is_some() {
                f.push(
                    Finding::new(
                        value.span.clone(),
                        "The system pool must not use a GPU machine type",
                        "GPU machine type",
                    )
                    .help("system pods run on a small CPU pool; the default is `e2-standard-4`"),
                );
                None
            } else {
                let help = "use a Compute Engine machine type such as `e2-standard-4`";
                name_ok(
                    f,
                    value,
                    "Machine type",
                    names::rfc1035(value.as_str(), 63),
                    help,
                )
                .then(|| value.value.clone())
            }
        }
    };
    let nodes = match &raw.nodes {
        None => Some(2),
        Some(nodes) => int_in(
            f,
            nodes,
            "nodes",
            1,
            MAX_NODES,
            "the system pool needs at least one node",
        ),
    };
    let upgrade = super::maintenance::upgrade(raw.upgrade.as_ref(), false, f);
    Some(SystemPool {
        name: name?,
        machine_type: machine_type?,
        nodes: nodes?,
        upgrade: Some(upgrade?),
        version: None,
    })
}

#[cfg(test)]
mod tests {
    use crate::blueprint::testing::{BASE, one_problem, problems, with};
    use crate::blueprint::{Capacity, Placement, parse};

    #[test]
    fn unknown_machine_type_suggests_the_closest() {
        let text = BASE.replace("a3-megagpu-8g", "a3-megagpu-8");
        let problem = one_problem(&text, "`a3-megagpu-8` is not an A3 GPU machine type", 8, 16);
        assert_eq!(
            problem.help.as_deref(),
            Some("did you mean `a3-megagpu-8g`?")
        );
    }

    #[test]
    fn pools_must_share_one_family() {
        let text =
            with("\n[[gpu_pool]]\nname = \"high\"\nmachine_type = \"a3-highgpu-8g\"\nnodes = 1\n");
        let problem = one_problem(&text, "must use one machine family", 13, 16);
        assert_eq!(problem.label, "A3 High here");
        // What to do instead, and where the reasons are.
        let help = problem.help.as_deref().unwrap();
        assert!(
            help.contains("one blueprint, and cluster, per family"),
            "{help}"
        );
        assert!(
            help.contains("to migrate build the new family's cluster"),
            "{help}"
        );
        assert!(help.contains("\"Why one family\""), "{help}");
    }

    #[test]
    fn machine_type_must_be_offered_in_the_zone() {
        let text = BASE.replace("zone = \"us-central1-a\"", "zone = \"us-central1-b\"");
        let problem = one_problem(
            &text,
            "`a3-megagpu-8g` is not offered in zone `us-central1-b`",
            8,
            16,
        );
        assert!(
            problem
                .help
                .as_deref()
                .is_some_and(|h| h.contains("`us-central1-a` or `us-central1-c`"))
        );
        let text = with("zones = [\"us-central1-a\", \"us-central1-f\"]\nplacement = \"none\"\n");
        one_problem(&text, "not offered in zone `us-central1-f`", 10, 27);
    }

    #[test]
    fn pool_zones_must_be_in_the_region() {
        let text = with("zones = [\"us-east4-a\"]\n");
        one_problem(
            &text,
            "Zone `us-east4-a` is not in region `us-central1`",
            10,
            10,
        );
    }

    #[test]
    fn compact_placement_needs_one_zone() {
        let text = with("zones = [\"us-central1-a\", \"us-central1-c\"]\n");
        one_problem(&text, "Compact placement needs exactly one zone", 10, 9);
        assert!(
            problems(&with(
                "zones = [\"us-central1-a\", \"us-central1-c\"]\nplacement = \"none\"\n"
            ))
            .is_empty()
        );
    }

    #[test]
    fn spot_rejects_reservation_and_compact() {
        one_problem(
            &with("capacity = \"spot\"\nreservation = \"r1\"\n"),
            "Spot pools cannot consume a reservation",
            11,
            15,
        );
        one_problem(
            &with("capacity = \"spot\"\nplacement = \"compact\"\n"),
            "Spot pools cannot use compact placement",
            11,
            13,
        );
    }

    #[test]
    fn host_maintenance_is_refused_since_no_v1_api_carries_it() {
        for value in ["periodic", "as-needed", "sometimes"] {
            let problem = one_problem(
                &with(&format!("host_maintenance = \"{value}\"\n")),
                "`host_maintenance` cannot reach GKE: its v1 API has no host maintenance policy",
                10,
                20,
            );
            let help = problem.help.expect("a fix");
            assert!(help.contains("v1beta1"), "{help}");
            assert!(help.contains("Remove `host_maintenance`"), "{help}");
        }
    }

    #[test]
    fn spot_defaults_to_no_placement() {
        let blueprint = parse(&with("capacity = \"spot\"\n"), "t.toml").expect("valid");
        assert_eq!(blueprint.gpu_pools[0].capacity, Capacity::Spot);
        assert_eq!(blueprint.gpu_pools[0].placement, Placement::None);
    }

    #[test]
    fn flex_start_is_refused_with_the_shape_google_builds() {
        let problem = one_problem(
            &with("capacity = \"flex-start\"\n"),
            "a3ctl cannot build a flex-start pool in the shape GKE requires yet",
            10,
            12,
        );
        let help = problem.help.expect("the shape and its sources");
        for part in [
            "autoscale from 0 nodes",
            "location policy ANY",
            "auto-repair off",
            "reservation affinity none",
            "no Spot",
            "1.32.2-gke.1652000",
            "https://cloud.google.com/kubernetes-engine/docs/concepts/dws",
            "gke-node-pool",
            "capacity.py",
        ] {
            assert!(help.contains(part), "{part} missing from {help}");
        }
        // With a reservation too, both are said.
        let found = problems(&with("capacity = \"flex-start\"\nreservation = \"r1\"\n"));
        let messages: Vec<&str> = found.iter().map(|p| p.message.as_str()).collect();
        assert_eq!(found.len(), 2, "{messages:?}");
        assert!(
            messages
                .iter()
                .any(|m| m.contains("Flex-start pools cannot consume"))
        );
        assert!(
            messages
                .iter()
                .any(|m| m.contains("cannot build a flex-start pool"))
        );
    }

    #[test]
    fn node_count_must_be_positive() {
        let problem = one_problem(
            &BASE.replace("nodes = 2", "nodes = 0"),
            "`nodes` must be at least 1",
            9,
            9,
        );
        assert!(
            problem
                .help
                .as_deref()
                .is_some_and(|h| h.contains("a node count of 1 or more"))
        );
        one_problem(
            &BASE.replace("nodes = 2", "nodes = -3"),
            "`nodes` must be between 1 and 1000",
            9,
            9,
        );
    }

    #[test]
    fn reservation_is_required_iff_capacity_is_reservation() {
        one_problem(
            &with("capacity = \"reservation\"\n"),
            "needs a `reservation` name",
            10,
            12,
        );
        one_problem(
            &with("reservation = \"r1\"\n"),
            "`reservation` is set but `capacity` is not `reservation`",
            10,
            15,
        );
        let blueprint = parse(&with("capacity = \"reservation\"\nreservation = \"r1\"\nreservation_block = \"block-1\"\n"), "t")
            .expect("valid");
        assert_eq!(
            blueprint.gpu_pools[0].capacity,
            Capacity::Reservation {
                reservation: "r1".into(),
                block: Some("block-1".into())
            }
        );
        assert!(problems(&with("capacity = \"reservation\"\nreservation = \"projects/other-proj/reservations/r1\"\n")).is_empty());
        one_problem(
            &with("capacity = \"reservation\"\nreservation = \"R 1\"\n"),
            "Reservation `R 1` is not valid",
            11,
            15,
        );
    }

    #[test]
    fn reservation_block_needs_a_reservation() {
        one_problem(
            &with("reservation_block = \"block-1\"\n"),
            "`reservation_block` is only allowed",
            10,
            21,
        );
    }

    #[test]
    fn capacity_values_are_checked() {
        let problem = one_problem(&with("capacity = \"spto\"\n"), "`capacity` must be", 10, 12);
        assert_eq!(problem.help.as_deref(), Some("did you mean `spot`?"));
    }

    #[test]
    fn pool_names_follow_gke_rules_and_are_unique() {
        one_problem(
            &BASE.replace("name = \"a3mega\"\nmachine", "name = \"A3\"\nmachine"),
            "Node pool name `A3` is not valid",
            7,
            8,
        );
        let text = with(
            "\n[[gpu_pool]]\nname = \"a3mega\"\nmachine_type = \"a3-megagpu-8g\"\nnodes = 1\n",
        );
        let problem = one_problem(&text, "Node pool name `a3mega` is used twice", 12, 8);
        assert_eq!(problem.span().len(), 8);
        let text = with("\n[system_pool]\nname = \"a3mega\"\n");
        one_problem(&text, "Node pool name `a3mega` is used twice", 12, 8);
        let text = BASE.replace("name = \"a3mega\"\nmachine", "name = \"system\"\nmachine");
        one_problem(&text, "`system` is taken by the system pool", 7, 8);
    }

    #[test]
    fn cluster_and_pool_name_together_fit_gke_limit() {
        // "a3mega-" is 7 characters, so the pool name may have 25.
        let ok = BASE.replace(
            "name = \"a3mega\"\nmachine",
            &format!("name = \"{}\"\nmachine", "p".repeat(25)),
        );
        assert!(problems(&ok).is_empty());
        let long = BASE.replace(
            "name = \"a3mega\"\nmachine",
            &format!("name = \"{}\"\nmachine", "p".repeat(26)),
        );
        let problem = one_problem(&long, "are 33 characters long, the limit is 32", 7, 8);
        assert!(
            problem
                .help
                .as_deref()
                .is_some_and(|h| h.contains("at most 25 characters"))
        );
        let too_long = BASE.replace(
            "name = \"a3mega\"\nmachine",
            &format!("name = \"{}\"\nmachine", "p".repeat(41)),
        );
        one_problem(&too_long, "the limit is 40", 7, 8);
    }

    #[test]
    fn a_gpu_pool_is_required() {
        let text = BASE
            .split("[[gpu_pool]]")
            .next()
            .expect("BASE has a pool")
            .to_string();
        one_problem(&text, "declares no GPU node pool", 1, 1);
        one_problem(
            &format!("{text}gpu_pool = []\n"),
            "declares no GPU node pool",
            6,
            1,
        );
    }

    #[test]
    fn system_pool_is_a_small_cpu_pool() {
        let text = BASE.replace(
            "[[gpu_pool]]",
            "[system_pool]\nmachine_type = \"a3-highgpu-8g\"\nnodes = 0\n\n[[gpu_pool]]",
        );
        let found = problems(&text);
        assert_eq!(found.len(), 2, "{found:?}");
        assert!(found[0].message.contains("must not use a GPU machine type"));
        assert_eq!((found[0].line, found[0].column), (7, 16));
        assert!(
            found[1]
                .message
                .contains("`nodes` must be between 1 and 1000")
        );
        let blueprint = parse(BASE, "t").expect("valid");
        assert_eq!(blueprint.system_pool.name, "system");
        assert_eq!(blueprint.system_pool.machine_type, "e2-standard-4");
        assert_eq!(blueprint.system_pool.nodes, 2);
    }

    /// A blueprint with `count` GPU pools of `nodes` nodes each; pool `i` (0-based) starts at
    /// line `6 + 4 i` and its `nodes` value is at line `8 + 4 i`, column 9.
    fn many_pools(count: usize, nodes: u32, extra: &str) -> String {
        let mut text = BASE
            .split("\n[[gpu_pool]]")
            .next()
            .expect("BASE has a pool")
            .to_string();
        for _ in 0..count {
            text.push_str(&format!(
                "\n[[gpu_pool]]\nmachine_type = \"a3-megagpu-8g\"\nnodes = {nodes}\n{extra}"
            ));
        }
        text
    }

    #[test]
    fn at_most_200_node_pools_per_cluster() {
        // 199 GPU pools and the system pool.
        assert!(problems(&many_pools(199, 1, "")).is_empty());
        let problem = one_problem(
            &many_pools(200, 1, ""),
            "declares 201 node pools (200 GPU pools and the system pool); GKE supports at most 200 per cluster",
            6 + 4 * 199,
            1,
        );
        assert_eq!(problem.label, "node pool 201 of the cluster");
        assert!(
            problem
                .help
                .as_deref()
                .is_some_and(|h| h.contains("planning-large-clusters")),
            "{problem:?}"
        );
    }

    #[test]
    fn at_most_15000_nodes_per_cluster() {
        // 2 system nodes + 16 × 1,000: passes 15,000 at the 15th pool.
        let problem = one_problem(
            &many_pools(16, 1000, ""),
            "The cluster would have 16,002 nodes; GKE allows at most 15,000 per cluster",
            8 + 4 * 14,
            9,
        );
        assert_eq!(problem.label, "the total passes 15,000 nodes here");
        assert!(
            problem
                .help
                .as_deref()
                .is_some_and(|h| h.contains("https://cloud.google.com/kubernetes-engine/quotas")),
            "{problem:?}"
        );
        // The filed case: 3,000 pools of 1,000 nodes and a system pool of 4.
        let text = many_pools(3000, 1000, "").replace(
            "\n[[gpu_pool]]",
            "\n[system_pool]\nnodes = 4\n\n[[gpu_pool]]",
        );
        let text = text.replacen("\n[system_pool]\nnodes = 4\n", "", 2999);
        let found = problems(&text);
        let messages: Vec<&str> = found.iter().map(|p| p.message.as_str()).collect();
        assert_eq!(found.len(), 2, "{messages:?}");
        // In file order: the total passes 15,000 at the 15th pool, the pool count 200 later.
        assert!(messages[0].contains("3,000,004 nodes"), "{messages:?}");
        assert!(messages[1].contains("3,001 node pools"), "{messages:?}");
    }

    #[test]
    fn at_most_5000_nodes_in_a_multi_network_cluster() {
        assert!(problems(&many_pools(4, 1000, "")).is_empty());
        let problem = one_problem(
            &many_pools(5, 1000, ""),
            "The cluster would have 5,002 nodes; a multi-network GKE cluster has at most 5,000",
            8 + 4 * 4,
            9,
        );
        assert!(
            problem
                .help
                .as_deref()
                .is_some_and(|h| h.contains("multi-networking")),
            "{problem:?}"
        );
        // `nodes` is per zone: 3 pools of 1,000 nodes in 2 zones are 6,000 nodes.
        let two_zones = "zones = [\"us-central1-a\", \"us-central1-c\"]\nplacement = \"none\"\n";
        one_problem(
            &many_pools(3, 1000, two_zones),
            "The cluster would have 6,002 nodes",
            8 + 6 * 2,
            9,
        );
    }

    #[test]
    fn huge_lists_are_checked_in_linear_time() {
        // 100,000 repeats of a zone, and 20,000 pools of one name: quadratic checks would take
        // minutes; each repeat is reported once.
        let zones = vec!["\"us-central1-a\""; 100_000].join(", ");
        let found = problems(&with(&format!("zones = [{zones}]\nplacement = \"none\"\n")));
        assert_eq!(found.len(), 99_999);
        assert!(found[0].message.contains("listed twice"));
        let found = problems(&many_pools(20_000, 1, "name = \"same\"\n"));
        let twice = found
            .iter()
            .filter(|p| p.message.contains("`same` is used twice"))
            .count();
        assert_eq!(twice, 19_999);
    }
}
