//! From the blueprint as written to a [`Blueprint`]: every rule, every default.
//!
//! [`validate`] runs each section's rules in a fixed order (identity and location, pools,
//! network, cluster, storage, software, state), recording every problem instead of stopping, so
//! one run of `a3ctl validate` lists them all. Rules that need facts from another section (the
//! machine family decides the GPU VPC count and the GKE version gate) get them through [`Ctx`].
//! Network rules live in [`super::network`], node pool rules in [`super::pools`], storage
//! rules in [`super::storage`]; naming rules in [`super::names`].

use super::decode::{Sp, choice_hint, did_you_mean, quoted_list};
use super::error::{Finding, Findings, Span};
use super::families::NetworkMode;
use super::model::{Blueprint, GpuPool, SystemPool};
use super::presets::{self, MachineFamily};
use super::schema::RawBlueprint;
use super::versions::VersionSpec;
use super::{cidr, cluster, names, network, pools, software, state, storage};

/// What one section's rules learned that another section needs.
pub(crate) struct Ctx {
    pub f: Findings,
    /// The deployment name, when valid.
    pub name: Option<String>,
    /// The region, when known.
    pub region: Option<String>,
    /// The default zone, when known and inside the region.
    pub zone: Option<String>,
    /// The machine family of the GPU pools, when they agree.
    pub family: Option<MachineFamily>,
    /// `[network] network_mode = "managed"` was asked for (valid or not).
    pub managed_networking: bool,
}

/// GKE-managed GPU networking needs GKE 1.34.1-gke.1829001 or later on the control plane and on
/// every GPU pool (which follows the control plane unless it names its own `version`).
fn managed_version_gate(raw: &RawBlueprint, ctx: &mut Ctx) {
    let min = super::families::MANAGED_NETWORKING_MIN_GKE;
    let versions = std::iter::once(raw.cluster.version.as_ref())
        .chain(raw.gpu_pools.iter().map(|p| p.version.as_ref()))
        .flatten();
    for value in versions {
        let Some(spec) = VersionSpec::parse(value.as_str()) else {
            continue; // reported by the version rules
        };
        if super::versions::managed_networking_possible(&spec) {
            continue;
        }
        let mut finding = Finding::new(
            value.span.clone(),
            format!("GKE-managed GPU networking needs GKE {min} or later, found `{}`", value.value),
            format!("needs {min} or later"),
        )
        .help(format!(
            "set `version = \"1.34\"` or later (GKE resolves it to a build of at least {min}), or use `network_mode = \"explicit\"`"
        ));
        if let Some(mode) = &raw.network.network_mode {
            finding = finding.also(mode.span.clone(), "managed networking asked for here");
        }
        ctx.f.push(finding);
    }
}

/// Applies every rule; returns the model, or every problem found.
pub(crate) fn validate(raw: &RawBlueprint, f: Findings) -> Result<Blueprint, Findings> {
    let mut ctx = Ctx {
        f,
        name: None,
        region: None,
        zone: None,
        family: None,
        managed_networking: false,
    };
    let project = identity(raw, &mut ctx);
    let gpu_pools = pools::gpu_pools(raw, &mut ctx);
    let system_pool = pools::system_pool(&raw.system_pool, &gpu_pools, &mut ctx);
    pools::cluster_limits(raw, &mut ctx);
    let network = network::network(&raw.network, &mut ctx);
    let cluster = cluster::cluster(&raw.cluster, &mut ctx);
    let cluster_version = raw.cluster.version.as_ref();
    let system_pool_version = cluster::pool_version(
        raw.system_pool.version.as_ref(),
        cluster_version,
        None,
        &mut ctx.f,
    );
    let gpu_pool_versions: Vec<_> = raw
        .gpu_pools
        .iter()
        .map(|pool| {
            let family = ctx.family;
            cluster::pool_version(pool.version.as_ref(), cluster_version, family, &mut ctx.f)
        })
        .collect();
    if network
        .as_ref()
        .is_some_and(|n| n.mode == NetworkMode::Managed)
    {
        managed_version_gate(raw, &mut ctx);
    }
    let filestore = storage::filestore(raw.filestore.as_ref(), &mut ctx);
    let artifact_registries = storage::artifact_registries(&raw.artifact_registries, &mut ctx);
    let buckets = storage::buckets(&raw.buckets, &mut ctx);
    let software = software::software(&raw.software, &mut ctx);
    if let (Some(family), Some(software)) = (ctx.family, &software) {
        software::stack_fits_versions(raw, family, &software.stack, &mut ctx.f);
    }
    let identity_section = super::accounts::identity(&raw.identity, &mut ctx);
    let state = state::state(&raw.state, &mut ctx);
    let queues = super::queues::queues(raw, &gpu_pools, &mut ctx);
    let priorities = super::priorities::priorities(raw, &mut ctx.f);

    if !ctx.f.is_empty() {
        return Err(ctx.f);
    }
    let assembled = (|| {
        Some(Blueprint {
            name: ctx.name.clone()?,
            project: project?,
            region: ctx.region.clone()?,
            zone: ctx.zone.clone()?,
            enable_services: raw.enable_services.as_ref().is_some_and(|v| v.value),
            family: ctx.family?,
            network: network?,
            cluster: cluster?,
            system_pool: SystemPool {
                version: system_pool_version?,
                ..system_pool?
            },
            gpu_pools: gpu_pools
                .into_iter()
                .zip(gpu_pool_versions)
                .map(|(pool, version)| {
                    Some(GpuPool {
                        version: version?,
                        ..pool.model?
                    })
                })
                .collect::<Option<Vec<_>>>()?,
            filestore: filestore?,
            artifact_registries: artifact_registries?,
            buckets: buckets?,
            software: super::queues::with_job_queue(software?, queues.as_deref(), raw),
            identity: identity_section?,
            state: state?,
            queues: queues?,
            priorities: priorities?,
        })
    })();
    // Every section returns `None` only after recording a finding, so with no findings the
    // blueprint is complete; the fallback keeps that promise visible instead of panicking.
    assembled.ok_or_else(|| {
        let mut f = Findings::default();
        f.push(
            Finding::new(0..0, "Blueprint is incomplete", "here")
                .help("report this as a bug in a3ctl"),
        );
        f
    })
}

/// Reports `value` as not one of `names`, with a "did you mean".
pub(crate) fn choice<T>(
    f: &mut Findings,
    value: &Sp<String>,
    key: &str,
    names: &[&str],
    parse: impl Fn(&str) -> Option<T>,
) -> Option<T> {
    let parsed = parse(value.as_str());
    if parsed.is_none() {
        f.push(
            Finding::new(
                value.span.clone(),
                format!(
                    "`{key}` must be {}, found `{}`",
                    quoted_list(names),
                    value.value
                ),
                format!("not a valid `{key}`"),
            )
            .help(choice_hint(value.as_str(), names)),
        );
    }
    parsed
}

/// Records a naming-rule failure; returns whether the name is valid.
pub(crate) fn name_ok(
    f: &mut Findings,
    value: &Sp<String>,
    what: &str,
    rule: Result<(), String>,
    help: &str,
) -> bool {
    match rule {
        Ok(()) => true,
        Err(reason) => {
            f.push(
                Finding::new(
                    value.span.clone(),
                    format!("{what} `{}` is not valid: {reason}", value.value),
                    "invalid name",
                )
                .help(help),
            );
            false
        }
    }
}

/// An integer within `min..=max`, as `u32`.
pub(crate) fn int_in(
    f: &mut Findings,
    value: &Sp<i64>,
    key: &str,
    min: i64,
    max: i64,
    help: &str,
) -> Option<u32> {
    if value.value < min || value.value > max {
        f.push(
            Finding::new(
                value.span.clone(),
                format!(
                    "`{key}` must be between {min} and {max}, found {}",
                    value.value
                ),
                "out of range",
            )
            .help(help),
        );
        return None;
    }
    u32::try_from(value.value).ok()
}

/// Reports an IPv4 CIDR problem; `None` when the value is not a usable block.
pub(crate) fn parse_cidr(
    f: &mut Findings,
    value: &Sp<String>,
    key: &str,
) -> Option<ipnet::Ipv4Net> {
    match cidr::parse(value.as_str()) {
        Ok(net) => Some(net),
        Err(error) => {
            let (label, help) = match error {
                cidr::CidrError::Malformed => (
                    "not an IPv4 CIDR block".to_string(),
                    "write it as address/prefix, like `10.0.0.0/20`".to_string(),
                ),
                cidr::CidrError::Ipv6 => (
                    "IPv6 block".to_string(),
                    "GKE multi-networking is IPv4-only; use an IPv4 block".to_string(),
                ),
                cidr::CidrError::HostBitsSet(net) => (
                    "host bits are set".to_string(),
                    format!("did you mean `{net}`?"),
                ),
            };
            f.push(
                Finding::new(
                    value.span.clone(),
                    format!("`{key}` `{}` is not a valid IPv4 CIDR block", value.value),
                    label,
                )
                .help(help),
            );
            None
        }
    }
}

fn identity(raw: &RawBlueprint, ctx: &mut Ctx) -> Option<String> {
    let f = &mut ctx.f;
    if let Some(name) = &raw.name {
        let rule = names::rfc1035(name.as_str(), names::DEPLOYMENT_NAME_MAX);
        let help = format!(
            "the name is the GKE cluster name and prefixes every resource: lowercase letters, digits and hyphens, starting with a letter, at most {} characters",
            names::DEPLOYMENT_NAME_MAX
        );
        if name_ok(f, name, "Deployment name", rule, &help) {
            ctx.name = Some(name.value.clone());
        }
    }
    let project = raw.project.as_ref().and_then(|project| {
        let help = "project ids have 6 to 30 lowercase letters, digits and hyphens, start with a letter and do not end with a hyphen";
        name_ok(f, project, "Project id", names::project_id(project.as_str()), help).then(|| project.value.clone())
    });
    if let Some(region) = &raw.region {
        if presets::region_exists(region.as_str()) {
            ctx.region = Some(region.value.clone());
        } else {
            f.push(
                Finding::new(
                    region.span.clone(),
                    format!("Unknown region `{}`", region.value),
                    "unknown region",
                )
                .help(choice_hint(region.as_str(), &presets::region_names())),
            );
        }
    }
    if let Some(zone) = &raw.zone {
        ctx.zone = check_zone(
            f,
            zone,
            ctx.region.as_deref(),
            raw.region.as_ref().map(|r| r.span.clone()),
        );
    }
    project
}

/// Checks that `zone` exists and lies in `region`; returns it when it does.
pub(crate) fn check_zone(
    f: &mut Findings,
    zone: &Sp<String>,
    region: Option<&str>,
    region_span: Option<Span>,
) -> Option<String> {
    let zones_of = |region: &str| -> Vec<String> {
        presets::zone_names()
            .into_iter()
            .filter(|z| presets::region_of_zone(z) == Some(region))
            .collect()
    };
    match presets::region_of_zone(zone.as_str()) {
        None => {
            let known = presets::zone_names();
            let known: Vec<&str> = known.iter().map(String::as_str).collect();
            let help = match (did_you_mean(zone.as_str(), &known), region) {
                (Some(candidate), _) => format!("did you mean `{candidate}`?"),
                (None, Some(region)) => {
                    format!("zones of `{region}` are {}", backticked(&zones_of(region)))
                }
                (None, None) => "use a zone such as `us-central1-a`".to_string(),
            };
            f.push(
                Finding::new(
                    zone.span.clone(),
                    format!("Unknown zone `{}`", zone.value),
                    "unknown zone",
                )
                .help(help),
            );
            None
        }
        Some(zone_region) => match region {
            Some(region) if region != zone_region => {
                let mut finding = Finding::new(
                    zone.span.clone(),
                    format!("Zone `{}` is not in region `{region}`", zone.value),
                    format!("a zone of `{zone_region}`"),
                )
                .help(format!(
                    "pick a zone of `{region}`: {}",
                    backticked(&zones_of(region))
                ));
                if let Some(span) = region_span {
                    finding = finding.also(span, "the region is set here");
                }
                f.push(finding);
                None
            }
            Some(_) => Some(zone.value.clone()),
            // The region itself is wrong and already reported.
            None => None,
        },
    }
}

pub(crate) fn backticked(items: &[String]) -> String {
    let refs: Vec<&str> = items.iter().map(String::as_str).collect();
    quoted_list(&refs)
}

#[cfg(test)]
mod tests {
    use crate::blueprint::testing::{BASE, one_problem, problems, with};

    fn section(table: &str, lines: &str) -> String {
        BASE.replace("[[gpu_pool]]", &format!("[{table}]\n{lines}\n[[gpu_pool]]"))
    }

    #[test]
    fn unknown_keys_suggest_the_closest_known_key() {
        let problem = one_problem(
            &BASE.replace("project =", "projct ="),
            "Unknown key `projct` in the top level",
            2,
            1,
        );
        assert_eq!(problem.help.as_deref(), Some("did you mean `project`?"));
        // The misspelt key leaves `project` missing, which is not reported a second time.
        assert_eq!(problems(&BASE.replace("project =", "projct =")).len(), 1);
        assert_eq!(problems(&BASE.replace("project =", "zzz =")).len(), 2);
        let problem = one_problem(
            &with("nodse = 3\n"),
            "Unknown key `nodse` in [[gpu_pool]]",
            10,
            1,
        );
        assert_eq!(problem.help.as_deref(), Some("did you mean `nodes`?"));
        let problem = one_problem(
            &section("cluster", "colour = \"red\""),
            "Unknown key `colour` in [cluster]",
            7,
            1,
        );
        assert!(
            problem
                .help
                .as_deref()
                .is_some_and(|h| h.starts_with("the keys allowed here are `release_channel`"))
        );
    }

    #[test]
    fn wrong_types_name_the_expected_type() {
        let problem = one_problem(
            &BASE.replace("nodes = 2", "nodes = \"2\""),
            "`nodes` in [[gpu_pool]] must be an integer, found a string",
            9,
            9,
        );
        assert_eq!(problem.label, "expected an integer");
        one_problem(
            &BASE.replace("name = \"a3mega\"\nproject", "name = 5\nproject"),
            "`name` in the top level must be a string, found an integer",
            1,
            8,
        );
        one_problem(
            &format!("network = 3\n{BASE}"),
            "`network` in the top level must be a table",
            1,
            11,
        );
        one_problem(
            &format!(
                "gpu_pool = 3\n{}",
                BASE.split("[[gpu_pool]]").next().unwrap_or_default()
            ),
            "`gpu_pool` must be an array of tables",
            1,
            12,
        );
        one_problem(
            &section("cluster", "private_nodes = 1"),
            "must be a boolean, found an integer",
            7,
            17,
        );
        one_problem(
            &format!("enable_services = \"yes\"\n{BASE}"),
            "`enable_services` in the top level must be a boolean, found a string",
            1,
            19,
        );
    }

    #[test]
    fn missing_required_keys_are_reported_at_their_table() {
        let problem = one_problem(
            &BASE.replace("project = \"my-project\"\n", ""),
            "Missing required key `project` in the top level",
            1,
            1,
        );
        assert_eq!(
            problem.help.as_deref(),
            Some("add `project = \"my-project\"`")
        );
        one_problem(
            &BASE.replace("machine_type = \"a3-megagpu-8g\"\n", ""),
            "Missing required key `machine_type` in [[gpu_pool]]",
            6,
            1,
        );
        let all = problems("");
        let messages: Vec<&str> = all.iter().map(|p| p.message.as_str()).collect();
        assert_eq!(all.len(), 5, "{messages:?}");
    }

    #[test]
    fn deployment_name_is_short_rfc1035() {
        let long = BASE.replace(
            "name = \"a3mega\"\nproject",
            &format!("name = \"{}\"\nproject", "a".repeat(21)),
        );
        let problem = one_problem(&long, "it is 21 characters long, the limit is 20", 1, 8);
        assert!(
            problem
                .help
                .as_deref()
                .is_some_and(|h| h.contains("at most 20"))
        );
        one_problem(
            &BASE.replace("name = \"a3mega\"\nproject", "name = \"a3_mega\"\nproject"),
            "`_` is not allowed",
            1,
            8,
        );
    }

    #[test]
    fn project_id_follows_gcp_rules() {
        one_problem(
            &BASE.replace("my-project", "proj"),
            "Project id `proj` is not valid: it is 4 characters long",
            2,
            11,
        );
        one_problem(
            &BASE.replace("my-project", "My-Project"),
            "Project id `My-Project` is not valid",
            2,
            11,
        );
    }

    #[test]
    fn region_and_zone_must_be_known_and_agree() {
        let problem = one_problem(
            &BASE.replace("region = \"us-central1\"", "region = \"us-centrl1\""),
            "Unknown region `us-centrl1`",
            3,
            10,
        );
        assert_eq!(problem.help.as_deref(), Some("did you mean `us-central1`?"));
        let problem = one_problem(
            &BASE.replace("zone = \"us-central1-a\"", "zone = \"us-east4-a\""),
            "Zone `us-east4-a` is not in region `us-central1`",
            4,
            8,
        );
        assert!(
            problem
                .help
                .as_deref()
                .is_some_and(|h| h.contains("`us-central1-a`"))
        );
        let problem = one_problem(
            &BASE.replace("zone = \"us-central1-a\"", "zone = \"us-central1-z\""),
            "Unknown zone `us-central1-z`",
            4,
            8,
        );
        assert!(problem.help.is_some());
    }

    #[test]
    fn every_problem_is_reported_in_one_run() {
        let text = BASE
            .replace("project = \"my-project\"", "project = \"x\"")
            .replace("zone = \"us-central1-a\"", "zone = \"us-east4-a\"")
            .replace("nodes = 2", "nodes = 0\ncolour = 1");
        let found = problems(&text);
        let lines: Vec<usize> = found.iter().map(|p| p.line).collect();
        assert_eq!(lines, vec![2, 4, 9, 10], "{found:#?}");
    }
}
