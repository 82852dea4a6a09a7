//! What `a3ctl init` asks, in order, with the help text of each choice, its flag and its
//! defaults (the blueprint being edited, then gcloud's configuration, then a3ctl's own).
//!
//! Machine family comes before location so that only zones offering the machine are offered, and
//! capacity comes before the node count because only flex-start pools may start empty. Facts
//! (zones, GPU NICs, Filestore capacity ranges, stacks) come from `blueprint::presets` and the
//! blueprint model; rules are checked by validating the draft ([`super::draft::Draft::check`]).

use super::defaults::Found;
use super::draft::Draft;
use super::wizard::{Choice, Interrupted, Kind, Question, Wizard};
use crate::blueprint::families::{MANAGED_NETWORKING_CHANNELS, MANAGED_NETWORKING_MIN_GKE};
use crate::blueprint::presets::{self, FAMILIES, GpuDirect, MachineFamily};
use crate::blueprint::{FilestoreTier, GkeVersion, NetworkMode, ReleaseChannel, VersionSpec};
use crate::cli::{
    CapacityChoice, FilestoreChoice, InitArgs, Machine, NetworkModeChoice, StateChoice,
};

/// The skeleton of a new blueprint: placeholders for the required keys (so they come first, in
/// the shipped order) and the sections the wizard does not ask about, with their comments.
pub fn template(draft: &mut Draft) {
    for key in [
        "name",
        "project",
        "region",
        "zone",
        "gpu_pool.0.machine_type",
        "gpu_pool.0.nodes",
    ] {
        draft.set(key, "", None);
    }
    draft.set("cluster.release_channel", "regular", None);
    draft.set(
        "cluster.version",
        "1.33",
        Some("# A minor version, resolved to the newest build; a3ctl refuses builds below the\n# GPUDirect minimum of the machine family.\n"),
    );
    draft.set("cluster.private_nodes", true, None);
    draft.set(
        "cluster.deletion_protection",
        true,
        Some("# a3ctl refuses to destroy or replace the cluster and its Filestore instance while this is
# true; to tear the deployment down, set it to false and apply, then destroy.
"),
    );
    draft.set("system_pool.machine_type", "e2-standard-4", None);
    draft.set("software.driver", "default", None);
    draft.set("software.nccl", true, None);
    draft.set("software.network_prefix", "vpc", None);
}

fn non_empty(value: Option<String>) -> Option<String> {
    value.filter(|v| !v.trim().is_empty())
}

/// Asks every question.
pub fn ask(w: &mut Wizard, args: &InitArgs, found: &Found) -> Result<(), Interrupted> {
    let family = location(w, args, found)?;
    gpu_networking(w, args, family)?;
    capacity(w, args, family)?;
    // The same range the rule checks.
    let nodes_prompt = "GPU nodes (1 to 1000)".to_string();
    let nodes_help = format!(
        "How many {} nodes, 8 GPUs each: a whole number from 1 to 1000 (GKE allows 1000 per pool and\nzone).",
        family.map_or("A3", MachineFamily::display_name)
    );
    let existing = non_empty(w.draft.get_text("gpu_pool.0.nodes"));
    w.text(
        &q("gpu_pool.0.nodes", "--nodes", &nodes_prompt, &nodes_help),
        Kind::Number,
        args.nodes.clone(),
        &[existing],
    )?;
    let existing = w.draft.get_text("system_pool.nodes");
    w.text(
        &q(
            "system_pool.nodes",
            "--system-nodes",
            "System pool nodes",
            "CPU nodes (e2-standard-4) for system pods and controllers such as Kueue and JobSet.",
        ),
        Kind::Number,
        args.system_nodes.clone(),
        &[existing, Some("2".into())],
    )?;
    storage(w, args)?;
    kueue(w, args)?;
    identity(w, args)?;
    control_plane(w, args)?;
    state(w, args)?;
    network(w, args)
}

fn q<'a>(key: &'a str, flag: &'static str, prompt: &'a str, help: &'a str) -> Question<'a> {
    Question {
        key,
        flag,
        prompt,
        help,
        write: None,
        check: None,
    }
}

/// Project, machine family, deployment name, region and zone; returns the family.
fn location(
    w: &mut Wizard,
    args: &InitArgs,
    found: &Found,
) -> Result<Option<MachineFamily>, Interrupted> {
    w.section("Project and machines");
    let from = found
        .project
        .as_ref()
        .map(|(_, from)| format!("\nDefault from {from}."))
        // No detected project: the help says nothing about a default.
        .unwrap_or_default();
    let help = format!(
        "The Google Cloud project that holds everything: 6 to 30 lowercase letters, digits and hyphens.{from}"
    );
    let existing = non_empty(w.draft.get_str("project"));
    w.text(
        &q("project", "--project", "Project id", &help),
        Kind::Text,
        args.project.clone(),
        &[existing, found.project().map(String::from)],
    )?;

    let choices: Vec<Choice> = FAMILIES
        .iter()
        .map(|family| Choice {
            value: family.machine_type().to_string(),
            label: format!(
                "{} ({}): 8 × {}, {} {} NICs, GPUDirect-{}",
                family.display_name(),
                family.machine_type(),
                family.accelerator_type(),
                family.gpu_data_nics(),
                if family.gpudirect() == GpuDirect::Rdma {
                    "RDMA"
                } else {
                    "GPU"
                },
                family.gpudirect().as_str()
            ),
        })
        .collect();
    let given = args.machine.map(|m| {
        match m {
            Machine::A3High => MachineFamily::A3High,
            Machine::A3Mega => MachineFamily::A3Mega,
            Machine::A3Ultra => MachineFamily::A3Ultra,
            Machine::A4 => MachineFamily::A4,
        }
        .machine_type()
        .to_string()
    });
    let existing = non_empty(w.draft.get_str("gpu_pool.0.machine_type"));
    let write = |draft: &mut Draft, machine_type: &str| {
        draft.set("gpu_pool.0.machine_type", machine_type, None);
        // A stack names versions for one family; a new family gets its newest stack. A zone
        // that does not offer the new family is asked again (it comes later).
        if let Some(family) = MachineFamily::from_machine_type(machine_type) {
            if draft
                .get_str("zone")
                .is_some_and(|zone| !family.offered_in(&zone))
            {
                draft.set("zone", "", None);
            }
            let stack = draft.get_str("software.stack");
            if stack
                .as_deref()
                .is_none_or(|id| presets::stack(family, id).is_none())
            {
                draft.set("software.stack", presets::latest_stack(family).id, None);
            }
            // Managed networking is for RDMA families only (asked again next for those), and
            // each family has one GPU MTU.
            if draft.get_str("network.network_mode").as_deref()
                == Some(NetworkMode::Managed.as_str())
                && !family.supports(NetworkMode::Managed)
            {
                draft.remove("network.network_mode");
            }
            if draft.get("network.gpu_mtu").is_some() {
                draft.set("network.gpu_mtu", i64::from(family.gpu_mtu()), None);
            }
        }
    };
    // A family no zone is known for yet cannot make a valid blueprint: say so at the question.
    let check = |machine_type: &str| -> Option<String> {
        let family = MachineFamily::from_machine_type(machine_type)?;
        family.zones().is_empty().then(|| {
            format!(
                "a3ctl knows no zone offering `{machine_type}` yet, so no {} blueprint can be checked; choose another machine family",
                family.display_name()
            )
        })
    };
    let machine = w.choose(
        &Question {
            write: Some(&write),
            check: Some(&check),
            ..q(
                "gpu_pool.0.machine_type",
                "--machine",
                "Machine family",
                "8 GPUs per node. GPUDirect moves data between GPUs of different nodes without the host CPU:\nA3 High (H100) uses GPUDirect-TCPX over 4 GPU NICs, A3 Mega (H100) GPUDirect-TCPXO over 8,\nwith twice the network bandwidth; each NIC gets a VPC. A3 Ultra (H200) and A4 (B200) use\nGPUDirect-RDMA over 8 RDMA NICs: one RDMA VPC with 8 subnets, plus a second gVNIC VPC.",
            )
        },
        &choices,
        given,
        existing.or_else(|| w.interactive().then(|| MachineFamily::A3Mega.machine_type().to_string())),
    )?;
    let family = machine
        .as_deref()
        .and_then(MachineFamily::from_machine_type);

    let Some(family) = family else {
        // Without a machine, neither a name nor zones can be suggested; the missing or rejected
        // `--machine` is already reported.
        return Ok(None);
    };
    let existing = non_empty(w.draft.get_str("name"));
    let suggested = Some(family.display_name().replace(' ', "").to_lowercase());
    w.text(
        &q("name", "--name", "Deployment name", "Names the GKE cluster and prefixes every resource: lowercase letters, digits and hyphens,\nstarting with a letter, at most 20 characters."),
        Kind::Text,
        args.name.clone(),
        &[existing, suggested],
    )?;

    let offering = |region: &str| -> Vec<&'static str> {
        family
            .zones()
            .iter()
            .copied()
            .filter(|zone| presets::region_of_zone(zone) == Some(region))
            .collect()
    };
    if family.zones().is_empty() {
        // The question above refuses such a family; should one get here, the region question
        // would have nothing to offer, so it stops with the reason instead.
        w.reject(
            "--machine",
            family.machine_type(),
            "a3ctl knows no zone offering it yet",
        );
        return Ok(Some(family));
    }
    let choices: Vec<Choice> = presets::region_names()
        .into_iter()
        .filter(|region| !offering(region).is_empty())
        .map(|region| Choice {
            value: region.to_string(),
            label: format!(
                "{region} ({} in {})",
                family.display_name(),
                offering(region).join(", ")
            ),
        })
        .collect();
    let mut given_region = args.region.clone().or_else(|| {
        args.zone
            .as_deref()
            .and_then(presets::region_of_zone)
            .map(String::from)
    });
    if let Some(region) = given_region.clone()
        && presets::region_exists(&region)
        && offering(&region).is_empty()
    {
        let regions: Vec<&str> = choices.iter().map(|c| c.value.as_str()).collect();
        let (flag, value) = match (&args.region, &args.zone) {
            (None, Some(zone)) => ("--zone", zone.as_str()),
            _ => ("--region", region.as_str()),
        };
        w.reject(
            flag,
            value,
            &format!(
                "no zone of `{region}` offers `{}`; regions that do: {}",
                family.machine_type(),
                regions.join(", ")
            ),
        );
        if !w.interactive() {
            return Ok(Some(family));
        }
        given_region = None;
    }
    let existing = non_empty(w.draft.get_str("region"));
    let env_region = found.region().map(String::from).or_else(|| {
        found
            .zone()
            .and_then(presets::region_of_zone)
            .map(String::from)
    });
    let default = [existing, env_region]
        .into_iter()
        .flatten()
        .find(|region| !offering(region).is_empty());
    let help = format!("Regions with zones offering `{}`.", family.machine_type());
    let region = w.choose(
        &q("region", "--region", "Region", &help),
        &choices,
        given_region,
        default,
    )?;
    let Some(region) = region else {
        return Ok(Some(family));
    };

    let zones = offering(&region);
    let choices: Vec<Choice> = zones
        .iter()
        .map(|zone| Choice {
            value: zone.to_string(),
            label: zone.to_string(),
        })
        .collect();
    let existing = non_empty(w.draft.get_str("zone"));
    let default = [existing, found.zone().map(String::from)]
        .into_iter()
        .flatten()
        .find(|zone| zones.contains(&zone.as_str()))
        .or_else(|| zones.first().map(|z| z.to_string()));
    let help = format!(
        "Zones of {region} offering `{}`; the GPU nodes (and a zonal Filestore) live here.",
        family.machine_type()
    );
    w.choose(
        &q("zone", "--zone", "Zone", &help),
        &choices,
        args.zone.clone(),
        default,
    )?;
    Ok(Some(family))
}

/// The keys that set up explicit GPU networks, which a managed-networking blueprint must not
/// have (the rule in `blueprint::network`).
const EXPLICIT_NETWORK_KEYS: [&str; 5] = [
    "network.gpu_range",
    "network.gpu_subnet_prefix",
    "network.gpu_subnets",
    "network.gpu_mtu",
    "network.gpu_firewall",
];

/// The `cluster.version` written for managed networking when the draft's cannot reach GKE
/// 1.34.1-gke.1829001: the minor's newest build does.
const MANAGED_MINOR: &str = "1.34";

/// Whether `version` (a `cluster.version` value) can resolve to a GKE build that runs managed
/// GPU networking. `default` cannot be told (the channel's default moves), so it is not kept.
fn reaches_managed_minimum(version: &str) -> bool {
    let minimum = MANAGED_NETWORKING_MIN_GKE;
    match VersionSpec::parse(version.trim()) {
        Some(VersionSpec::Latest) => true,
        Some(VersionSpec::Minor { major, minor }) => {
            (major, minor) >= (minimum.major, minimum.minor)
        }
        Some(VersionSpec::Patch {
            major,
            minor,
            patch,
        }) => GkeVersion::new(major, minor, patch, u64::MAX) >= minimum,
        Some(VersionSpec::Exact(version)) => version >= minimum,
        Some(VersionSpec::ChannelDefault) | None => false,
    }
}

/// The `cluster.release_channel` a managed-networking draft with channel `written` (`None`:
/// absent, which means regular) must change to, or `None` when it is one known to offer
/// [`MANAGED_NETWORKING_MIN_GKE`] ([`MANAGED_NETWORKING_CHANNELS`]; init reads no live offer).
fn managed_channel(written: Option<&str>) -> Option<String> {
    let channel = ReleaseChannel::parse(written.unwrap_or("regular").trim());
    if channel.is_some_and(|c| MANAGED_NETWORKING_CHANNELS.contains(&c)) {
        return None;
    }
    Some(enrolled_channel())
}

/// The channel a managed-networking cluster is enrolled in, as the blueprint spells it.
fn enrolled_channel() -> String {
    MANAGED_NETWORKING_CHANNELS
        .first()
        .unwrap_or(&ReleaseChannel::Rapid)
        .api_value()
        .to_ascii_lowercase()
}

/// Who creates the GPU networks, for the families that have a choice (A3 Ultra, A4).
fn gpu_networking(
    w: &mut Wizard,
    args: &InitArgs,
    family: Option<MachineFamily>,
) -> Result<(), Interrupted> {
    let given = args.network_mode.map(|mode| match mode {
        NetworkModeChoice::Explicit => NetworkMode::Explicit,
        NetworkModeChoice::Managed => NetworkMode::Managed,
    });
    let Some(family) = family else {
        return Ok(());
    };
    if !family.supports(NetworkMode::Managed) {
        if given == Some(NetworkMode::Managed) {
            w.reject(
                "--network-mode",
                "managed",
                &format!(
                    "{} uses {}, whose GPU VPCs a3ctl creates; managed networking is for A3 Ultra and A4",
                    family.display_name(),
                    family.gpudirect().display()
                ),
            );
        }
        return Ok(());
    }
    w.section("GPU networking");
    let choices = [
        Choice {
            value: NetworkMode::Explicit.as_str().into(),
            label: "explicit: a3ctl creates a gVNIC VPC and an RDMA VPC with 8 subnets (default)"
                .into(),
        },
        Choice {
            value: NetworkMode::Managed.as_str().into(),
            label: format!(
                "managed: GKE creates them for the node pool; pods claim the RDMA NICs (GKE {MANAGED_NETWORKING_MIN_GKE} or later)"
            ),
        },
    ];
    let write = |draft: &mut Draft, mode: &str| {
        if mode != NetworkMode::Managed.as_str() {
            // Explicit is the default: written only when a file said otherwise.
            if draft.get("network.network_mode").is_some() {
                draft.set("network.network_mode", mode, None);
            }
            return;
        }
        let channel = enrolled_channel();
        let comment = format!(
            "# GKE creates the GPU networks (accelerator network profile `auto`); pods claim the\n# RDMA NICs through the ResourceClaimTemplate `rdma-nics`. Needs GKE\n# {MANAGED_NETWORKING_MIN_GKE} or later (`[cluster] version`), which GKE releases to the\n# {channel} channel first (`[cluster] release_channel`); `a3ctl plan` checks the offer.\n"
        );
        draft.set("network.network_mode", mode, Some(&comment));
        for key in EXPLICIT_NETWORK_KEYS {
            draft.remove(key);
        }
        if let Some(channel) = managed_channel(draft.get_str("cluster.release_channel").as_deref())
        {
            draft.set(
                "cluster.release_channel",
                channel.as_str(),
                Some(&format!(
                    "# Managed GPU networking needs GKE {MANAGED_NETWORKING_MIN_GKE} or later, which GKE\n# releases to the {channel} channel first; `a3ctl plan` checks the channel offers it.\n"
                )),
            );
        }
        if draft
            .get_str("cluster.version")
            .is_none_or(|version| !reaches_managed_minimum(&version))
        {
            draft.set(
                "cluster.version",
                MANAGED_MINOR,
                Some(&format!(
                    "# Managed GPU networking needs GKE {MANAGED_NETWORKING_MIN_GKE} or later.\n"
                )),
            );
        }
    };
    let existing = w
        .draft
        .get_str("network.network_mode")
        .or_else(|| Some(NetworkMode::Explicit.as_str().into()));
    let channel_before = w.draft.get_str("cluster.release_channel");
    let help = format!(
        "{} moves GPU data over 8 RDMA NICs. Explicit: a3ctl creates their RDMA VPC (from the\nzone's RoCE network profile) and a second gVNIC VPC. Managed: GKE creates them for the node\npool and pods claim the NICs through a ResourceClaim; needs GKE {MANAGED_NETWORKING_MIN_GKE} or later,\nwhich the {} channel offers first (the cluster is enrolled in it).",
        family.display_name(),
        enrolled_channel()
    );
    w.choose(
        &Question {
            write: Some(&write),
            ..q(
                "network.network_mode",
                "--network-mode",
                "GPU networks",
                &help,
            )
        },
        &choices,
        given.map(|mode| mode.as_str().to_string()),
        existing,
    )?;
    let after = w.draft.get_str("cluster.release_channel");
    if after != channel_before
        && let Some(after) = after
    {
        let why = format!(
            "managed GPU networking needs GKE {MANAGED_NETWORKING_MIN_GKE} or later, which GKE releases to the {after} channel first (`a3ctl plan` checks what the channel offers)"
        );
        if w.editing {
            // The file's channel was the user's choice: say so where a script sees it too.
            let was = channel_before.as_deref().unwrap_or("regular");
            w.warn(&format!(
                "release_channel changed from `{was}` to `{after}`: {why}"
            ));
        } else {
            w.say(&format!("  Release channel: {after}; {why}."));
        }
    }
    Ok(())
}

/// What each family's capacity usually is, for the capacity question's help.
fn capacity_advice(family: Option<MachineFamily>) -> &'static str {
    match family {
        Some(MachineFamily::A3Mega) => {
            "Where the GPU nodes come from. A3 Mega capacity is usually reserved: the GPU recipes for\na3-megagpu-8g ask for a reservation of the DENSE deployment type, used with compact\nplacement (a block keeps every node together). Spot suits short or interruptible jobs."
        }
        Some(MachineFamily::A3High) => {
            "Where the GPU nodes come from. A3 High is also sold on demand and as spot, as well\nas reserved: reserve it for long multi-node training (compact placement keeps the nodes\nclose); on-demand can fail on stock-outs; spot suits short or interruptible jobs."
        }
        Some(MachineFamily::A3Ultra | MachineFamily::A4) => {
            "Where the GPU nodes come from. A3 Ultra and A4 capacity is reserved through Google's\ncluster capacity requests (a dense reservation, optionally of one block); they are not sold\non demand; spot suits short or interruptible jobs."
        }
        None => {
            "Where the GPU nodes come from: a reservation for long multi-node training, on-demand when\nthe zone has stock, spot for short or interruptible jobs."
        }
    }
}

/// Capacity, with the reservation when there is one.
fn capacity(
    w: &mut Wizard,
    args: &InitArgs,
    family: Option<MachineFamily>,
) -> Result<(), Interrupted> {
    w.section("GPU capacity");
    let choices = [
        (
            "reservation",
            "reservation: capacity reserved for you (name, optionally one block); compact placement",
        ),
        (
            "on-demand",
            "on-demand: no reservation; may fail on stock-outs when nodes are created",
        ),
        (
            "spot",
            "spot: preemptible, cheaper; no reservation, no compact placement",
        ),
        // Not flex-start: GKE's flex-start pools autoscale, which a3ctl's pools do not yet
        // (`--capacity flex-start` is refused with the reason, `pools::FLEX_START_SHAPE`).
    ];
    let choices: Vec<Choice> = choices
        .iter()
        .map(|(value, label)| Choice {
            value: value.to_string(),
            label: label.to_string(),
        })
        .collect();
    let given = args.capacity.map(|c| {
        match c {
            CapacityChoice::Reservation => "reservation",
            CapacityChoice::OnDemand => "on-demand",
            CapacityChoice::Spot => "spot",
            CapacityChoice::FlexStart => "flex-start",
        }
        .to_string()
    });
    let existing = w
        .draft
        .get_str("gpu_pool.0.capacity")
        .or_else(|| Some("on-demand".into()));
    let write = |draft: &mut Draft, capacity: &str| {
        draft.set("gpu_pool.0.capacity", capacity, None);
        if capacity != "reservation" {
            draft.remove("gpu_pool.0.reservation");
            draft.remove("gpu_pool.0.reservation_block");
        } else if draft.get_str("gpu_pool.0.reservation").is_none() {
            // Asked next; until then a placeholder keeps the capacity itself valid.
            draft.set("gpu_pool.0.reservation", "reservation-name", None);
        }
        if capacity == "spot" && draft.get_str("gpu_pool.0.placement").as_deref() == Some("compact")
        {
            // Spot VMs cannot be packed by compact placement: drop it rather than refuse the
            // answer.
            draft.remove("gpu_pool.0.placement");
        }
    };
    let had_reservation = w.draft.get_str("gpu_pool.0.reservation");
    let capacity = w.choose(
        &Question {
            write: Some(&write),
            ..q(
                "gpu_pool.0.capacity",
                "--capacity",
                "Capacity",
                capacity_advice(family),
            )
        },
        &choices,
        given,
        existing,
    )?;
    if capacity.as_deref() != Some("reservation") {
        return Ok(());
    }
    w.text(
        &q("gpu_pool.0.reservation", "--reservation", "Reservation", "The reservation's name (in this project and zone, for this machine type), or\nprojects/<project>/reservations/<name> for one shared from another project."),
        Kind::Text,
        args.reservation.clone(),
        &[had_reservation],
    )?;
    let existing = w.draft.get_str("gpu_pool.0.reservation_block");
    w.text(
        &q("gpu_pool.0.reservation_block", "--reservation-block", "Reservation block (empty for any)", "Name one block to keep every node in it (`gcloud beta compute reservations blocks list`)."),
        Kind::Optional,
        args.reservation_block.clone(),
        &[existing],
    )?;
    Ok(())
}

/// Filestore, Artifact Registry and buckets.
fn storage(w: &mut Wizard, args: &InitArgs) -> Result<(), Interrupted> {
    w.section("Storage");
    let mut choices = vec![Choice {
        value: "none".into(),
        label: "none".into(),
    }];
    for name in FilestoreTier::NAMES {
        let Some(tier) = FilestoreTier::parse(name) else {
            continue;
        };
        let (min, max) = tier.capacity_range();
        let place = if tier.is_regional() {
            "regional"
        } else {
            "zonal"
        };
        choices.push(Choice {
            value: name.to_string(),
            label: format!("{name}: {min} to {max} GiB, {place}"),
        });
    }
    let given = args.filestore.map(|tier| {
        match tier {
            FilestoreChoice::None => "none",
            FilestoreChoice::BasicHdd => FilestoreTier::BasicHdd.api_value(),
            FilestoreChoice::BasicSsd => FilestoreTier::BasicSsd.api_value(),
            FilestoreChoice::HighScaleSsd => FilestoreTier::HighScaleSsd.api_value(),
            FilestoreChoice::Zonal => FilestoreTier::Zonal.api_value(),
            FilestoreChoice::Regional => FilestoreTier::Regional.api_value(),
            FilestoreChoice::Enterprise => FilestoreTier::Enterprise.api_value(),
        }
        .to_string()
    });
    let existing = if w.draft.has("filestore") {
        w.draft
            .get_str("filestore.tier")
            .or_else(|| Some("BASIC_SSD".into()))
    } else {
        Some("none".into())
    };
    let tier = w.choose(
        &q("", "--filestore", "Filestore", "An NFS share for datasets and code, mounted in pods through the Filestore CSI driver.\nBASIC_SSD suits most training; capacity is billed whether used or not."),
        &choices,
        given,
        existing,
    )?;
    match tier.as_deref().and_then(FilestoreTier::parse) {
        None => w.draft.remove("filestore"),
        Some(tier) => {
            w.draft.set("filestore.tier", tier.api_value(), None);
            if w.draft.get("filestore.share").is_none() {
                w.draft.set("filestore.share", "nfsshare", None);
            }
            let existing = w.draft.get_text("filestore.capacity_gb");
            let (min, max) = tier.capacity_range();
            let help = format!("{} allows {min} to {max} GiB.", tier.api_value());
            w.text(
                &q(
                    "filestore.capacity_gb",
                    "--filestore-capacity",
                    "Filestore capacity (GiB)",
                    &help,
                ),
                Kind::Number,
                args.filestore_capacity.clone(),
                &[existing, Some(min.to_string())],
            )?;
        }
    }

    let given = args.registry.as_deref().map(|name| name != "none");
    let wanted = w.confirm(
        &q(
            "",
            "--registry",
            "Create an Artifact Registry repository?",
            "A Docker repository in the region for your training images.",
        ),
        given,
        w.draft.count("artifact_registry") > 0,
    )?;
    if wanted {
        let existing = w.draft.get_str("artifact_registry.0.name");
        w.text(
            &q(
                "artifact_registry.0.name",
                "--registry",
                "Repository name",
                "Lowercase letters, digits and hyphens.",
            ),
            Kind::Text,
            args.registry.clone().filter(|name| name != "none"),
            &[existing, Some("training".into())],
        )?;
        if w.draft.get("artifact_registry.0.format").is_none() {
            w.draft.set("artifact_registry.0.format", "docker", None);
        }
    } else {
        w.draft.remove("artifact_registry");
    }

    let given = match args.bucket.as_slice() {
        [] => None,
        [only] if only == "none" => Some(false),
        _ => Some(true),
    };
    let count = w.draft.count("bucket");
    let wanted = w.confirm(
        &q(
            "",
            "--bucket",
            "Create Cloud Storage buckets?",
            "Regional buckets next to the nodes, for checkpoints and data.",
        ),
        given,
        count > 0,
    )?;
    if !wanted {
        w.draft.remove("bucket");
        return Ok(());
    }
    let existing: Vec<String> = (0..count)
        .filter_map(|i| w.draft.get_str(&format!("bucket.{i}.name")))
        .collect();
    let suggested = match (w.draft.get_str("project"), w.draft.get_str("name")) {
        (Some(project), Some(name)) => Some(format!("{project}-{name}-ckpt")),
        _ => None,
    };
    let given = given.filter(|b| *b).map(|_| args.bucket.join(","));
    let names = w.text(
        &q("bucket.*.name", "--bucket", "Bucket names (comma-separated)", "Bucket names are global: start them with the project id. 3 to 63 lowercase letters,\ndigits, hyphens and underscores."),
        Kind::List,
        given,
        &[non_empty(Some(existing.join(", "))), suggested],
    )?;
    let count = names.map_or(0, |names| {
        names.split(',').filter(|n| !n.trim().is_empty()).count()
    });
    let mounted = (0..count).any(|i| w.draft.get_bool(&format!("bucket.{i}.mount")) == Some(true));
    let mount = w.confirm(
        &q(
            "",
            "--bucket-mount",
            "Mount the buckets in pods with GCS FUSE?",
            "Pods then read and write them as files (the GCS FUSE CSI driver is turned on).",
        ),
        args.bucket_mount,
        mounted || w.draft.get("bucket.0.mount").is_none(),
    )?;
    // Asked earlier in the wizard, so always there; a draft without one keeps its locations.
    let region = w.draft.get_str("region");
    for i in 0..count {
        // Buckets must be in the cluster's region; keep them there when the region changes.
        if let Some(region) = &region {
            w.draft
                .set(&format!("bucket.{i}.location"), region.as_str(), None);
        }
        w.draft.set(&format!("bucket.{i}.mount"), mount, None);
    }
    Ok(())
}

fn kueue(w: &mut Wizard, args: &InitArgs) -> Result<(), Interrupted> {
    w.section("Scheduling");
    let enabled = w.draft.get_bool("software.kueue.enabled").unwrap_or(true);
    let enabled = w.confirm(
        &q("software.kueue.enabled", "--kueue", "Install Kueue?", "Kueue admits a GPU job only when all of it fits, as the training recipes submit them, and\nqueues the rest."),
        args.kueue,
        enabled,
    )?;
    if enabled {
        let existing = w.draft.get_str("software.kueue.queue");
        w.text(
            &q(
                "software.kueue.queue",
                "--queue",
                "Queue name",
                "The LocalQueue jobs name in `kueue.x-k8s.io/queue-name`.",
            ),
            Kind::Text,
            args.queue.clone(),
            &[existing, Some("a3-queue".into())],
        )?;
    }
    Ok(())
}

/// `[identity]`: the nodes' account and the workloads' Kubernetes service account.
fn identity(w: &mut Wizard, args: &InitArgs) -> Result<(), Interrupted> {
    w.section("Identity");
    // Asked first in the wizard; empty only in a draft without one.
    let name = w.draft.get_str("name").unwrap_or_default();
    let existing = w.draft.get_str("identity.node_service_account");
    w.text(
        &q(
            "identity.node_service_account",
            "--node-service-account",
            "Node service account",
            "The account the nodes run as. An account id (6 to 30 lowercase letters, digits and\nhyphens): a3ctl creates it with only the role GKE nodes need and lets it read the\nblueprint's repositories. Or the email of an existing account, used as it is.",
        ),
        Kind::Text,
        args.node_service_account.clone(),
        &[existing, (!name.is_empty()).then(|| format!("{name}-nodes"))],
    )?;
    let existing = w
        .draft
        .get("identity.workloads")
        .and_then(|v| v.as_array()?.get(0)?.as_str().map(str::to_string));
    let write = |draft: &mut Draft, value: &str| {
        let list: toml_edit::Array = [value].into_iter().collect();
        draft.set("identity.workloads", list, None);
    };
    w.text(
        &Question {
            key: "identity.workloads",
            flag: "--workload",
            prompt: "Workload service account",
            help: "The Kubernetes service account (NAMESPACE/NAME) whose pods read and write the mounted\nbuckets through Workload Identity.",
            write: Some(&write),
            check: None,
        },
        Kind::Text,
        args.workload.clone(),
        &[existing, Some("default/default".into())],
    )?;
    Ok(())
}

/// The entries of an authorized-networks answer: `(name, cidr)`, comma-separated, each `CIDR` or
/// `NAME=CIDR`.
fn network_entries(text: &str) -> Vec<(Option<&str>, &str)> {
    text.split(',')
        .map(str::trim)
        .filter(|entry| !entry.is_empty())
        .map(|entry| match entry.split_once('=') {
            Some((name, cidr)) => (Some(name.trim()), cidr.trim()),
            None => (None, entry),
        })
        .collect()
}

/// Whether a CIDR lets every IPv4 address in (`0.0.0.0/0`, or any `/0`).
fn everywhere(cidr: &str) -> bool {
    cidr.trim().ends_with("/0")
}

/// The networks a blueprint already lets reach the control plane, as answers (`NAME=CIDR` or
/// `CIDR`), whether written as an inline list or as `[[cluster.authorized_networks]]` tables.
fn existing_networks(draft: &Draft) -> Vec<String> {
    let answer = |cidr: Option<&str>, name: Option<&str>| {
        cidr.map(|cidr| match name {
            Some(name) => format!("{name}={cidr}"),
            None => cidr.to_string(),
        })
    };
    if let Some(array) = draft
        .get("cluster.authorized_networks")
        .and_then(|v| v.as_array())
    {
        return array
            .iter()
            .filter_map(|entry| {
                let table = entry.as_inline_table()?;
                answer(
                    table.get("cidr").and_then(|c| c.as_str()),
                    table.get("name").and_then(|n| n.as_str()),
                )
            })
            .collect();
    }
    (0..draft.count("cluster.authorized_networks"))
        .filter_map(|i| {
            answer(
                draft
                    .get_str(&format!("cluster.authorized_networks.{i}.cidr"))
                    .as_deref(),
                draft
                    .get_str(&format!("cluster.authorized_networks.{i}.name"))
                    .as_deref(),
            )
        })
        .collect()
}

/// `[cluster] authorized_networks`: who may reach the control plane. Never defaulted to the
/// whole internet: a new blueprint names at least one network.
fn control_plane(w: &mut Wizard, args: &InitArgs) -> Result<(), Interrupted> {
    w.section("Control plane access");
    let existing = existing_networks(&w.draft).join(", ");
    let unchanged = existing.clone();
    let write = move |draft: &mut Draft, text: &str| {
        // The file's own list, kept as written (its layout and comments) when the answer is it.
        if !unchanged.is_empty() && text == unchanged {
            return;
        }
        let mut list = toml_edit::Array::new();
        for (name, cidr) in network_entries(text) {
            let mut entry = toml_edit::InlineTable::new();
            entry.insert("cidr", cidr.into());
            if let Some(name) = name {
                entry.insert("name", name.into());
            }
            list.push(entry);
        }
        if draft.count("cluster.authorized_networks") > 0 {
            // Written as [[cluster.authorized_networks]] tables: replaced by the inline list.
            draft.remove("cluster.authorized_networks");
        }
        draft.set("cluster.authorized_networks", list, None);
    };
    let check = |text: &str| -> Option<String> {
        let entries = network_entries(text);
        if entries.is_empty() {
            return Some("at least one network is required: the CIDRs (such as 203.0.113.0/24, your office or VPN) allowed to reach the control plane".into());
        }
        entries.iter().find_map(|(name, cidr)| match (name, cidr.is_empty()) {
            (Some(""), _) => Some(format!("`={cidr}` has no name before `=`; write NAME=CIDR, such as office=203.0.113.0/24, or the CIDR alone")),
            (Some(name), true) => Some(format!("`{name}=` has no CIDR after `=`; write NAME=CIDR, such as office=203.0.113.0/24")),
            _ => None,
        })
    };
    let given = (!args.authorized_network.is_empty()).then(|| args.authorized_network.join(", "));
    let answer = w.text(
        &Question {
            key: "cluster.authorized_networks",
            flag: "--authorized-network",
            prompt: "Networks allowed to reach the control plane (comma-separated)",
            help: "The GKE API endpoint answers only these IPv4 ranges (master authorized networks): a3ctl,\nkubectl and CI must run from one of them. CIDR or NAME=CIDR, e.g. office=203.0.113.0/24;\na single address is a /32.",
            write: Some(&write),
            check: Some(&check),
        },
        Kind::Text,
        given,
        &[non_empty(Some(existing))],
    )?;
    if let Some(answer) = answer
        && let Some((_, cidr)) = network_entries(&answer)
            .into_iter()
            .find(|(_, c)| everywhere(c))
    {
        w.warn(&format!(
            "{cidr} lets every address on the internet reach the control plane: only Google sign-in and\n    IAM then stand between it and anyone who finds the endpoint. Name your office, VPN or CI\n    ranges instead when you can."
        ));
    }
    Ok(())
}

fn state(w: &mut Wizard, args: &InitArgs) -> Result<(), Interrupted> {
    w.section("State");
    // Asked first in the wizard; empty only in a draft without one.
    let name = w.draft.get_str("name").unwrap_or_default();
    let choices = [
        Choice {
            value: "local".into(),
            label: format!("local: a file, state/{name}.a3state.json; for one person"),
        },
        Choice {
            value: "gcs".into(),
            label: "gcs: an existing Cloud Storage bucket, locked; for a team or CI".into(),
        },
    ];
    let given = args.state_backend.map(|b| match b {
        StateChoice::Local => "local".to_string(),
        StateChoice::Gcs => "gcs".to_string(),
    });
    let existing = w
        .draft
        .get_str("state.backend")
        .or_else(|| Some("local".into()));
    let write = |draft: &mut Draft, backend: &str| {
        draft.set("state.backend", backend, None);
        let stale: &[&str] = if backend == "gcs" {
            &["state.path"]
        } else {
            &["state.bucket", "state.prefix", "state.kms_key"]
        };
        for key in stale {
            draft.remove(key);
        }
        if backend == "gcs" && draft.get_str("state.bucket").is_none() {
            // Asked next; until then a placeholder keeps the backend itself valid.
            draft.set("state.bucket", "state-bucket", None);
        }
    };
    let had_bucket = w.draft.get_str("state.bucket");
    let backend = w.choose(
        &Question {
            write: Some(&write),
            ..q(
                "state.backend",
                "--state-backend",
                "State backend",
                "a3ctl records what it created here, and refreshes it on every plan.",
            )
        },
        &choices,
        given,
        existing,
    )?;
    if backend.as_deref() == Some("gcs") {
        w.text(
            &q(
                "state.bucket",
                "--state-bucket",
                "State bucket",
                "The bucket must exist; a3ctl locks the state there while it works.",
            ),
            Kind::Text,
            args.state_bucket.clone(),
            &[had_bucket],
        )?;
        let existing = w.draft.get_str("state.prefix");
        w.text(
            &q(
                "state.prefix",
                "--state-prefix",
                "Object prefix",
                "Where in the bucket this deployment's state lives.",
            ),
            Kind::Text,
            args.state_prefix.clone(),
            &[existing, Some(format!("a3ctl/{name}"))],
        )?;
    }
    Ok(())
}

/// The network ranges: the computed defaults are shown and kept unless the user changes them.
fn network(w: &mut Wizard, args: &InitArgs) -> Result<(), Interrupted> {
    w.section("Network ranges");
    let ranges: [(&str, &'static str, &str, &Option<String>); 5] = [
        (
            "network.primary_subnet",
            "--primary-subnet",
            "Node range (primary subnet)",
            &args.primary_subnet,
        ),
        ("network.pods", "--pods", "Pod range", &args.pods),
        (
            "network.services",
            "--services",
            "Service range",
            &args.services,
        ),
        (
            "network.gpu_range",
            "--gpu-range",
            "GPU range (GPU subnets are carved from it)",
            &args.gpu_range,
        ),
        (
            "network.master_ipv4_cidr",
            "--master-cidr",
            "Control-plane range (a /28)",
            &args.master_cidr,
        ),
    ];
    // The computed values come from validating the draft: the same defaults `a3ctl validate`
    // applies, and the GPU subnets it carves.
    let computed = w.draft.validate().ok().map(|bp| (bp.network, bp.family));
    // In managed mode GKE makes the GPU networks: no GPU range to ask about or write. Read from
    // the draft, as written, so that it holds even while the draft does not validate.
    let managed =
        w.draft.get_str("network.network_mode").as_deref() == Some(NetworkMode::Managed.as_str());
    let (ranges, unused): (Vec<_>, Vec<_>) = ranges
        .into_iter()
        .partition(|(key, ..)| !(managed && EXPLICIT_NETWORK_KEYS.contains(key)));
    for (_, flag, _, given) in unused {
        if let Some(given) = given {
            w.reject(
                flag,
                given,
                "GKE creates the GPU networks in managed mode, so there are no GPU subnets to carve; drop it, or use `--network-mode explicit`",
            );
        }
    }
    if let Some((net, family)) = &computed {
        let value_of = |key: &str| match key {
            "network.primary_subnet" => net.primary_subnet,
            "network.pods" => net.pods,
            "network.services" => net.services,
            "network.gpu_range" => net.gpu_range,
            _ => net.master_ipv4_cidr,
        };
        for (key, ..) in &ranges {
            if w.draft.get(key).is_none() {
                w.draft.set(key, value_of(key).to_string(), None);
            }
        }
        if !managed && w.draft.get("network.gpu_subnet_prefix").is_none() {
            w.draft.set(
                "network.gpu_subnet_prefix",
                i64::from(net.gpu_subnet_prefix),
                None,
            );
        }
        if w.draft.get("network.nat").is_none() {
            w.draft.set(
                "network.nat",
                net.nat,
                Some("# Cloud NAT lets private nodes pull public images.\n"),
            );
        }
        if !managed && w.draft.get("network.gpu_mtu").is_none() {
            let why = match family.gpudirect() {
                GpuDirect::Rdma => "# GPUDirect-RDMA needs MTU 8896 on the GPU VPCs.\n",
                GpuDirect::Tcpx | GpuDirect::Tcpxo => {
                    "# GPUDirect needs MTU 8244 on every GPU VPC.\n"
                }
            };
            w.draft
                .set("network.gpu_mtu", i64::from(net.gpu_mtu), Some(why));
        }
        let gpu = match (net.gpu_subnets.first(), net.gpu_subnets.last()) {
            (Some(first), Some(last)) => {
                format!("{} GPU subnets, {first} to {last}", net.gpu_subnets.len())
            }
            _ if managed => "GPU networks by GKE".to_string(),
            _ => String::new(),
        };
        w.say(&format!(
            "  nodes {}, pods {}, services {}, {gpu}, control plane {}",
            net.primary_subnet, net.pods, net.services, net.master_ipv4_cidr
        ));
    }
    let all_given = ranges.iter().all(|(.., given)| given.is_some());
    let change = w.interactive()
        && !all_given
        && !w.confirm(
            &q(
                "",
                "",
                "Keep these ranges?",
                "They must not overlap each other or any network you peer or connect to.",
            ),
            None,
            true,
        )?;
    for (key, flag, prompt, given) in ranges {
        if given.is_none() && !change {
            continue;
        }
        let existing = w.draft.get_str(key);
        w.text(
            &q(key, flag, prompt, ""),
            Kind::Text,
            given.clone(),
            &[existing],
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn network_answers_are_cidrs_optionally_named() {
        assert_eq!(
            network_entries(" office = 203.0.113.0/24, 198.51.100.7/32 ,, "),
            vec![
                (Some("office"), "203.0.113.0/24"),
                (None, "198.51.100.7/32")
            ]
        );
        assert!(network_entries(" , ").is_empty());
        assert!(everywhere("0.0.0.0/0") && everywhere(" 10.0.0.0/0 "));
        assert!(!everywhere("10.0.0.0/8"));
    }

    #[test]
    fn an_edited_files_networks_become_the_answer() {
        let inline = Draft::parse(
            "[cluster]\nauthorized_networks = [{ cidr = \"0.0.0.0/0\", name = \"anywhere\" }, { cidr = \"10.0.0.0/8\" }]\n",
            "t.toml",
        )
        .expect("TOML");
        assert_eq!(
            existing_networks(&inline),
            vec!["anywhere=0.0.0.0/0", "10.0.0.0/8"]
        );
        let tables = Draft::parse(
            "[[cluster.authorized_networks]]\ncidr = \"10.0.0.0/8\"\nname = \"corp\"\n",
            "t.toml",
        )
        .expect("TOML");
        assert_eq!(existing_networks(&tables), vec!["corp=10.0.0.0/8"]);
        assert!(existing_networks(&Draft::new("t.toml")).is_empty());
    }

    /// A non-interactive wizard over a new blueprint's skeleton with `machine_type` and `extra`
    /// keys written.
    fn wizard(machine_type: &str, extra: &[(&str, &str)]) -> Wizard {
        let mut draft = Draft::new("t.toml");
        template(&mut draft);
        for (key, value) in [
            ("name", "rdma"),
            ("project", "my-project"),
            ("region", "us-central1"),
            ("zone", "us-central1-b"),
            ("gpu_pool.0.machine_type", machine_type),
        ]
        .iter()
        .chain(extra)
        {
            draft.set(key, *value, None);
        }
        draft.set("gpu_pool.0.nodes", 2, None);
        Wizard::new(draft, false)
    }

    fn managed() -> InitArgs {
        InitArgs {
            network_mode: Some(NetworkModeChoice::Managed),
            ..InitArgs::default()
        }
    }

    #[test]
    fn managed_networking_drops_the_explicit_keys_and_raises_the_version() {
        for family in [MachineFamily::A3Ultra, MachineFamily::A4] {
            let mut w = wizard(
                family.machine_type(),
                &[("network.gpu_range", "192.168.0.0/16")],
            );
            w.draft.set("network.gpu_mtu", 8896, None);
            gpu_networking(&mut w, &managed(), Some(family)).expect("no terminal to stop");
            assert!(w.rejected.is_empty(), "{:?}", w.rejected);
            assert_eq!(
                w.draft.get_str("network.network_mode").as_deref(),
                Some("managed")
            );
            assert_eq!(w.draft.get_str("cluster.version").as_deref(), Some("1.34"));
            for key in EXPLICIT_NETWORK_KEYS {
                assert!(w.draft.get(key).is_none(), "{key} is left");
            }
            assert!(w.draft.text().contains("1.34.1-gke.1829001 or later"));
        }
    }

    /// The build preflight resolves `channel`/`version` (blueprint spellings) to in the
    /// simulator's offer, with preflight's own function.
    fn sandbox_resolves(channel: &str, version: &str) -> Result<String, String> {
        use crate::resource::kinds::gke_versions::GkeVersionsSpec;
        use a3ctl_sim::container::server_config::{Offer, server_config};
        let live = server_config(&Offer::at_zero());
        let observed = GkeVersionsSpec::project(&live, "us-central1").expect("a server config");
        let offer: GkeVersionsSpec = serde_json::from_value(observed.spec).expect("its spec");
        let channel = ReleaseChannel::parse(channel)
            .expect("a channel")
            .api_value();
        offer.resolve(channel, version)
    }

    #[test]
    fn managed_networking_enrolls_a_channel_offering_its_version() {
        for family in [MachineFamily::A3Ultra, MachineFamily::A4] {
            let mut w = wizard(family.machine_type(), &[]);
            assert_eq!(
                w.draft.get_str("cluster.release_channel").as_deref(),
                Some("regular")
            );
            gpu_networking(&mut w, &managed(), Some(family)).expect("no terminal");
            let channel = w
                .draft
                .get_str("cluster.release_channel")
                .expect("a channel");
            let version = w.draft.get_str("cluster.version").expect("a version");
            assert_eq!((channel.as_str(), version.as_str()), ("rapid", "1.34"));
            // The skeleton's channel, not the user's: the file's comment says why, no warning.
            assert!(w.warnings.is_empty(), "{:?}", w.warnings);
            assert!(
                w.draft.text().contains(
                    "releases to the\n# rapid channel first (`[cluster] release_channel`)"
                ),
                "{}",
                w.draft.text()
            );
            // What preflight resolves it to in the sandbox runs managed networking; the
            // skeleton's channel would have failed there.
            let build = sandbox_resolves(&channel, &version).expect("offered");
            assert!(GkeVersion::parse(&build).expect("a build") >= MANAGED_NETWORKING_MIN_GKE);
            assert!(sandbox_resolves("regular", &version).is_err());
        }
    }

    #[test]
    fn every_channel_said_to_offer_managed_networking_does_in_the_sandbox() {
        for channel in MANAGED_NETWORKING_CHANNELS {
            let name = channel.api_value().to_ascii_lowercase();
            let build = sandbox_resolves(&name, MANAGED_MINOR).expect("offered");
            assert!(
                GkeVersion::parse(&build).expect("a build") >= MANAGED_NETWORKING_MIN_GKE,
                "{name}: {build}"
            );
        }
        assert_eq!(managed_channel(Some("rapid")), None);
        assert_eq!(managed_channel(Some("stable")).as_deref(), Some("rapid"));
        assert_eq!(
            managed_channel(None).as_deref(),
            Some("rapid"),
            "absent is regular"
        );
    }

    #[test]
    fn an_edited_files_channel_is_changed_for_managed_networking_and_said() {
        let mut w = wizard("a4-highgpu-8g", &[("cluster.release_channel", "stable")]);
        w.editing = true;
        gpu_networking(&mut w, &managed(), Some(MachineFamily::A4)).expect("no terminal");
        assert_eq!(
            w.draft.get_str("cluster.release_channel").as_deref(),
            Some("rapid")
        );
        assert_eq!(w.warnings.len(), 1, "{:?}", w.warnings);
        assert!(
            w.warnings[0].starts_with("release_channel changed from `stable` to `rapid`"),
            "{:?}",
            w.warnings
        );
        // A channel known to offer it is kept, silently; explicit networks keep any channel.
        let mut w = wizard("a4-highgpu-8g", &[("cluster.release_channel", "rapid")]);
        w.editing = true;
        gpu_networking(&mut w, &managed(), Some(MachineFamily::A4)).expect("no terminal");
        assert_eq!(
            w.draft.get_str("cluster.release_channel").as_deref(),
            Some("rapid")
        );
        assert!(w.warnings.is_empty(), "{:?}", w.warnings);
        let explicit = InitArgs {
            network_mode: Some(NetworkModeChoice::Explicit),
            ..InitArgs::default()
        };
        let mut w = wizard("a4-highgpu-8g", &[("cluster.release_channel", "stable")]);
        gpu_networking(&mut w, &explicit, Some(MachineFamily::A4)).expect("no terminal");
        assert_eq!(
            w.draft.get_str("cluster.release_channel").as_deref(),
            Some("stable")
        );
    }

    #[test]
    fn a_version_that_reaches_managed_networking_is_kept() {
        let mut w = wizard("a4-highgpu-8g", &[("cluster.version", "1.35")]);
        gpu_networking(&mut w, &managed(), Some(MachineFamily::A4)).expect("no terminal");
        assert_eq!(w.draft.get_str("cluster.version").as_deref(), Some("1.35"));
        assert!(reaches_managed_minimum("latest"));
        assert!(reaches_managed_minimum("1.34.1"));
        assert!(reaches_managed_minimum("1.34.1-gke.1829001"));
        assert!(!reaches_managed_minimum("1.34.1-gke.1828999"));
        assert!(!reaches_managed_minimum("1.34.0"));
        assert!(!reaches_managed_minimum("1.33"));
        assert!(!reaches_managed_minimum("default"));
        assert!(!reaches_managed_minimum("soon"));
    }

    #[test]
    fn a_gpu_range_is_refused_in_managed_mode() {
        let mut w = wizard("a3-ultragpu-8g", &[("network.network_mode", "managed")]);
        let args = InitArgs {
            gpu_range: Some("192.168.0.0/16".into()),
            ..managed()
        };
        network(&mut w, &args).expect("no terminal");
        assert!(
            w.rejected
                .iter()
                .any(|r| r.starts_with("--gpu-range 192.168.0.0/16: GKE creates the GPU networks")),
            "{:?}",
            w.rejected
        );
        assert!(w.draft.get("network.gpu_range").is_none());
    }

    #[test]
    fn explicit_networking_is_the_default_and_writes_nothing() {
        let mut w = wizard("a3-ultragpu-8g", &[]);
        let before = w.draft.text();
        gpu_networking(&mut w, &InitArgs::default(), Some(MachineFamily::A3Ultra))
            .expect("no terminal");
        assert!(w.rejected.is_empty() && w.missing.is_empty());
        assert_eq!(w.draft.text(), before);
    }

    #[test]
    fn managed_networking_is_refused_for_tcpx_and_tcpxo_families() {
        for family in [MachineFamily::A3High, MachineFamily::A3Mega] {
            let mut w = wizard(family.machine_type(), &[]);
            gpu_networking(&mut w, &managed(), Some(family)).expect("no terminal");
            assert_eq!(w.rejected.len(), 1);
            assert!(
                w.rejected[0].starts_with("--network-mode managed: ")
                    && w.rejected[0].contains("managed networking is for A3 Ultra and A4"),
                "{:?}",
                w.rejected
            );
            assert!(w.draft.get("network.network_mode").is_none());
        }
    }

    #[test]
    fn a_family_without_known_zones_is_refused_with_the_reason() {
        for (machine, family) in [
            (Machine::A3Ultra, MachineFamily::A3Ultra),
            (Machine::A4, MachineFamily::A4),
        ] {
            if !family.zones().is_empty() {
                // The zone table knows the family: the integration tests write its blueprints.
                continue;
            }
            let mut draft = Draft::new("t.toml");
            template(&mut draft);
            let mut w = Wizard::new(draft, false);
            let args = InitArgs {
                project: Some("my-project".into()),
                machine: Some(machine),
                ..InitArgs::default()
            };
            ask(&mut w, &args, &Found::default()).expect("no terminal to stop");
            let reason = format!(
                "--machine {}: a3ctl knows no zone offering `{}` yet",
                family.machine_type(),
                family.machine_type()
            );
            assert!(
                w.rejected.iter().any(|r| r.starts_with(&reason)),
                "{:?}",
                w.rejected
            );
        }
    }

    #[test]
    fn each_family_gets_its_own_capacity_advice() {
        let mega = capacity_advice(Some(MachineFamily::A3Mega));
        let high = capacity_advice(Some(MachineFamily::A3High));
        assert!(mega.contains("A3 Mega") && !mega.contains("A3 High"));
        assert!(high.contains("A3 High") && !high.contains("A3 Mega"));
    }
}
