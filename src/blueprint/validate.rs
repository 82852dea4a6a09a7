//! From the blueprint as written to a [`Blueprint`]: every rule, every default.
//!
//! [`validate`] runs each section's rules in a fixed order (identity and location, pools,
//! network, cluster, storage, software, state), recording every problem instead of stopping, so
//! one run of `a3ctl validate` lists them all. Rules that need facts from another section (the
//! machine family decides the GPU VPC count and the GKE version gate) get them through [`Ctx`].
//! Network rules live in [`super::network`], node pool rules in [`super::pools`], storage
//! rules in [`super::storage`]; naming rules in [`super::names`].

use std::path::PathBuf;

use super::decode::{Sp, choice_hint, did_you_mean, quoted_list};
use super::error::{Finding, Findings, Span};
use super::model::{
    Blueprint, Cluster, DriverMode, Kueue, ManifestSource, ReleaseChannel, Software, StackVersions, StateBackend,
};
use super::presets::{self, MachineFamily};
use super::schema::{RawBlueprint, RawCluster, RawSoftware, RawState};
use super::versions::{self, VersionSpec};
use super::{cidr, names, network, pools, storage};

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
}

/// Applies every rule; returns the model, or every problem found.
pub(crate) fn validate(raw: &RawBlueprint, f: Findings) -> Result<Blueprint, Findings> {
    let mut ctx = Ctx { f, name: None, region: None, zone: None, family: None };
    let project = identity(raw, &mut ctx);
    let gpu_pools = pools::gpu_pools(raw, &mut ctx);
    let system_pool = pools::system_pool(&raw.system_pool, &gpu_pools, &mut ctx);
    let network = network::network(&raw.network, &mut ctx);
    let cluster = cluster(&raw.cluster, &mut ctx);
    let filestore = storage::filestore(raw.filestore.as_ref(), &mut ctx);
    let artifact_registries = storage::artifact_registries(&raw.artifact_registries, &mut ctx);
    let buckets = storage::buckets(&raw.buckets, &mut ctx);
    let software = software(&raw.software, &mut ctx);
    let state = state(&raw.state, &mut ctx);

    if !ctx.f.is_empty() {
        return Err(ctx.f);
    }
    let assembled = (|| {
        Some(Blueprint {
            name: ctx.name.clone()?,
            project: project?,
            region: ctx.region.clone()?,
            zone: ctx.zone.clone()?,
            family: ctx.family?,
            network: network?,
            cluster: cluster?,
            system_pool: system_pool?,
            gpu_pools: gpu_pools.into_iter().map(|pool| pool.model).collect::<Option<Vec<_>>>()?,
            filestore: filestore?,
            artifact_registries: artifact_registries?,
            buckets: buckets?,
            software: software?,
            state: state?,
        })
    })();
    // Every section returns `None` only after recording a finding, so with no findings the
    // blueprint is complete; the fallback keeps that promise visible instead of panicking.
    assembled.ok_or_else(|| {
        let mut f = Findings::default();
        f.push(Finding::new(0..0, "Blueprint is incomplete", "here").help("report this as a bug in a3ctl"));
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
                format!("`{key}` must be {}, found `{}`", quoted_list(names), value.value),
                format!("not a valid `{key}`"),
            )
            .help(choice_hint(value.as_str(), names)),
        );
    }
    parsed
}

/// Records a naming-rule failure; returns whether the name is valid.
pub(crate) fn name_ok(f: &mut Findings, value: &Sp<String>, what: &str, rule: Result<(), String>, help: &str) -> bool {
    match rule {
        Ok(()) => true,
        Err(reason) => {
            f.push(
                Finding::new(value.span.clone(), format!("{what} `{}` is not valid: {reason}", value.value), "invalid name")
                    .help(help),
            );
            false
        }
    }
}

/// An integer within `min..=max`, as `u32`.
pub(crate) fn int_in(f: &mut Findings, value: &Sp<i64>, key: &str, min: i64, max: i64, help: &str) -> Option<u32> {
    if value.value < min || value.value > max {
        f.push(
            Finding::new(
                value.span.clone(),
                format!("`{key}` must be between {min} and {max}, found {}", value.value),
                "out of range",
            )
            .help(help),
        );
        return None;
    }
    u32::try_from(value.value).ok()
}

/// Reports an IPv4 CIDR problem; `None` when the value is not a usable block.
pub(crate) fn parse_cidr(f: &mut Findings, value: &Sp<String>, key: &str) -> Option<ipnet::Ipv4Net> {
    match cidr::parse(value.as_str()) {
        Ok(net) => Some(net),
        Err(error) => {
            let (label, help) = match error {
                cidr::CidrError::Malformed => {
                    ("not an IPv4 CIDR block".to_string(), "write it as address/prefix, like `10.0.0.0/20`".to_string())
                }
                cidr::CidrError::Ipv6 => (
                    "IPv6 block".to_string(),
                    "GKE multi-networking is IPv4-only; use an IPv4 block".to_string(),
                ),
                cidr::CidrError::HostBitsSet(net) => {
                    ("host bits are set".to_string(), format!("did you mean `{net}`?"))
                }
            };
            f.push(
                Finding::new(value.span.clone(), format!("`{key}` `{}` is not a valid IPv4 CIDR block", value.value), label)
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
                Finding::new(region.span.clone(), format!("Unknown region `{}`", region.value), "unknown region")
                    .help(choice_hint(region.as_str(), &presets::region_names())),
            );
        }
    }
    if let Some(zone) = &raw.zone {
        ctx.zone = check_zone(f, zone, ctx.region.as_deref(), raw.region.as_ref().map(|r| r.span.clone()));
    }
    project
}

/// Checks that `zone` exists and lies in `region`; returns it when it does.
pub(crate) fn check_zone(f: &mut Findings, zone: &Sp<String>, region: Option<&str>, region_span: Option<Span>) -> Option<String> {
    let zones_of = |region: &str| -> Vec<String> {
        presets::zone_names().into_iter().filter(|z| presets::region_of_zone(z) == Some(region)).collect()
    };
    match presets::region_of_zone(zone.as_str()) {
        None => {
            let known = presets::zone_names();
            let known: Vec<&str> = known.iter().map(String::as_str).collect();
            let help = match (did_you_mean(zone.as_str(), &known), region) {
                (Some(candidate), _) => format!("did you mean `{candidate}`?"),
                (None, Some(region)) => format!("zones of `{region}` are {}", backticked(&zones_of(region))),
                (None, None) => "use a zone such as `us-central1-a`".to_string(),
            };
            f.push(Finding::new(zone.span.clone(), format!("Unknown zone `{}`", zone.value), "unknown zone").help(help));
            None
        }
        Some(zone_region) => match region {
            Some(region) if region != zone_region => {
                let mut finding = Finding::new(
                    zone.span.clone(),
                    format!("Zone `{}` is not in region `{region}`", zone.value),
                    format!("a zone of `{zone_region}`"),
                )
                .help(format!("pick a zone of `{region}`: {}", backticked(&zones_of(region))));
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

fn cluster(raw: &RawCluster, ctx: &mut Ctx) -> Option<Cluster> {
    let f = &mut ctx.f;
    let release_channel = match &raw.release_channel {
        None => Some(ReleaseChannel::Regular),
        Some(value) => choice(f, value, "release_channel", &ReleaseChannel::NAMES, ReleaseChannel::parse),
    };
    let version = match &raw.version {
        None => Some(VersionSpec::ChannelDefault),
        Some(value) => {
            let parsed = VersionSpec::parse(value.as_str());
            match parsed {
                None => f.push(
                    Finding::new(value.span.clone(), format!("`version` `{}` is not a GKE version", value.value), "not a version")
                        .help("use `default`, `latest`, a minor like `1.33`, a patch like `1.33.5` or an exact build like `1.32.11-gke.1174000`"),
                ),
                Some(spec) => {
                    if let Some(family) = ctx.family
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
    };
    let mut authorized_networks = Some(Vec::new());
    for entry in &raw.authorized_networks {
        let net = entry.cidr.as_ref().and_then(|c| parse_cidr(f, c, "cidr"));
        match (net, authorized_networks.as_mut()) {
            (Some(cidr), Some(list)) => {
                list.push(super::model::AuthorizedNetwork { cidr, name: entry.name.as_ref().map(|n| n.value.clone()) })
            }
            _ => authorized_networks = None,
        }
    }
    Some(Cluster {
        release_channel: release_channel?,
        version: version?,
        private_nodes: raw.private_nodes.as_ref().is_none_or(|v| v.value),
        authorized_networks: authorized_networks?,
        deletion_protection: raw.deletion_protection.as_ref().is_some_and(|v| v.value),
        prevent_destroy: raw.prevent_destroy.as_ref().is_some_and(|v| v.value),
    })
}

fn software(raw: &RawSoftware, ctx: &mut Ctx) -> Option<Software> {
    let f = &mut ctx.f;
    let driver = match &raw.driver {
        None => Some(DriverMode::Default),
        Some(value) => choice(f, value, "driver", &DriverMode::NAMES, DriverMode::parse),
    };
    let force = raw.force_stack.as_ref().is_some_and(|v| v.value);
    let stack = ctx.family.and_then(|family| stack(raw, family, force, f));
    let network_prefix = match &raw.network_prefix {
        None => Some("vpc".to_string()),
        Some(value) => {
            // Device Network names must stay within 41 characters (UNIX socket path limit);
            // the prefix gets one digit.
            let help = "Network object names are `<prefix>1`..`<prefix>N`: lowercase letters, digits and hyphens, at most 40 characters";
            name_ok(f, value, "`network_prefix`", names::dns1123_label(value.as_str(), 40), help).then(|| value.value.clone())
        }
    };
    let kueue = kueue(raw, f);
    Some(Software {
        driver: driver?,
        nccl: raw.nccl.as_ref().is_none_or(|v| v.value),
        stack: stack?,
        network_prefix: network_prefix?,
        kueue: kueue?,
    })
}

fn stack(raw: &RawSoftware, family: MachineFamily, force: bool, f: &mut Findings) -> Option<StackVersions> {
    let known = presets::stack_ids(family);
    let row = match &raw.stack {
        None => Some(presets::latest_stack(family)),
        Some(id) => match presets::stack(family, id.as_str()) {
            Some(row) => Some(row),
            None if force => Some(presets::latest_stack(family)),
            None => {
                f.push(
                    Finding::new(
                        id.span.clone(),
                        format!("Stack `{}` is not a tested combination for {}", id.value, family.display_name()),
                        "unknown stack",
                    )
                    .help(format!(
                        "known stacks for {} are {}; set `force_stack = true` to use an untested one",
                        family.display_name(),
                        quoted_list(&known)
                    )),
                );
                None
            }
        },
    }?;
    let mut versions = StackVersions {
        id: raw.stack.as_ref().map_or(row.id.to_string(), |id| id.value.clone()),
        gpudirect: family.gpudirect(),
        plugin_image: row.plugin_image.to_string(),
        plugin_tag: row.plugin_tag.to_string(),
        rxdm_image: row.rxdm_image.to_string(),
        rxdm_tag: row.rxdm_tag.to_string(),
        nccl: row.nccl.map(str::to_string),
        forced: presets::stack(family, &raw.stack.as_ref().map_or(row.id.to_string(), |id| id.value.clone())).is_none(),
    };
    let mut ok = true;
    for (key, value, slot) in [
        ("plugin_tag", &raw.plugin_tag, &mut versions.plugin_tag),
        ("rxdm_tag", &raw.rxdm_tag, &mut versions.rxdm_tag),
    ] {
        let Some(value) = value else { continue };
        if !force {
            f.push(
                Finding::new(value.span.clone(), format!("`{key}` overrides a tested stack"), "needs `force_stack = true`")
                    .help(format!(
                        "the plugin installer, RxDM and NCCL are upgraded together; pick a `stack` ({}) or set `force_stack = true`",
                        quoted_list(&known)
                    )),
            );
            ok = false;
        } else if value.value.is_empty() || value.value.contains(|c: char| c.is_whitespace() || c == ':' || c == '/') {
            f.push(Finding::new(value.span.clone(), format!("`{key}` `{}` is not an image tag", value.value), "not a tag"));
            ok = false;
        } else {
            *slot = value.value.clone();
            versions.forced = true;
        }
    }
    ok.then_some(versions)
}

fn kueue(raw: &RawSoftware, f: &mut Findings) -> Option<Kueue> {
    let raw = &raw.kueue;
    let version = match &raw.version {
        None => Some(presets::KUEUE_VERSION.to_string()),
        Some(value) => {
            let valid = value
                .as_str()
                .strip_prefix('v')
                .is_some_and(|rest| rest.split('.').count() == 3 && rest.split('.').all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit())));
            if !valid {
                f.push(
                    Finding::new(value.span.clone(), format!("Kueue `version` `{}` is not a release tag", value.value), "expected vX.Y.Z")
                        .help(format!("use a release tag like `{}`", presets::KUEUE_VERSION)),
                );
            }
            valid.then(|| value.value.clone())
        }
    };
    let manifest = match (&raw.manifest, &version) {
        (None, Some(version)) => Some(ManifestSource::Url(presets::kueue_manifest_url(version))),
        (None, None) => None,
        (Some(value), _) if value.as_str().starts_with("https://") => Some(ManifestSource::Url(value.value.clone())),
        (Some(value), _) if value.as_str().contains("://") || value.value.is_empty() => {
            f.push(
                Finding::new(value.span.clone(), format!("Kueue `manifest` `{}` is neither an https URL nor a path", value.value), "unsupported location")
                    .help("use an https:// URL or a local file path"),
            );
            None
        }
        (Some(value), _) => Some(ManifestSource::Path(PathBuf::from(&value.value))),
    };
    let sha256 = match &raw.sha256 {
        None => Some(None),
        Some(value) if value.value.is_empty() => Some(None),
        Some(value) if value.value.len() == 64 && value.value.bytes().all(|b| b.is_ascii_hexdigit()) => {
            Some(Some(value.value.to_ascii_lowercase()))
        }
        Some(value) => {
            f.push(
                Finding::new(value.span.clone(), "Kueue `sha256` is not a SHA-256 digest", "expected 64 hex digits")
                    .help("use the output of `sha256sum manifests.yaml`, or leave it empty"),
            );
            None
        }
    };
    let queue = match &raw.queue {
        None => Some("a3-queue".to_string()),
        Some(value) => {
            let help = "queue names are Kubernetes names: lowercase letters, digits and hyphens, at most 63 characters";
            name_ok(f, value, "Kueue queue name", names::dns1123_label(value.as_str(), 63), help).then(|| value.value.clone())
        }
    };
    Some(Kueue {
        enabled: raw.enabled.as_ref().is_none_or(|v| v.value),
        version: version?,
        manifest: manifest?,
        sha256: sha256?,
        queue: queue?,
    })
}

fn state(raw: &RawState, ctx: &mut Ctx) -> Option<StateBackend> {
    let f = &mut ctx.f;
    let backend = match &raw.backend {
        None => Some("local"),
        Some(value) => choice(f, value, "backend", &["local", "gcs"], |text| match text {
            "local" => Some("local"),
            "gcs" => Some("gcs"),
            _ => None,
        }),
    }?;
    let misplaced = |f: &mut Findings, key: &str, value: &Option<Sp<String>>, other: &str| {
        if let Some(value) = value {
            f.push(
                Finding::new(value.span.clone(), format!("`{key}` does not apply to the `{backend}` state backend"), "not used by this backend")
                    .help(format!("remove it, or set `backend = \"{other}\"`")),
            );
        }
    };
    match backend {
        "local" => {
            let before = f.0.len();
            misplaced(f, "bucket", &raw.bucket, "gcs");
            misplaced(f, "prefix", &raw.prefix, "gcs");
            misplaced(f, "kms_key", &raw.kms_key, "gcs");
            if f.0.len() != before {
                return None;
            }
            let path = match &raw.path {
                Some(path) if path.value.trim().is_empty() => {
                    f.push(Finding::new(path.span.clone(), "State `path` is empty", "empty path"));
                    return None;
                }
                Some(path) => PathBuf::from(&path.value),
                None => PathBuf::from(format!("state/{}.a3state.json", ctx.name.as_deref()?)),
            };
            Some(StateBackend::Local { path })
        }
        _ => {
            let before = f.0.len();
            misplaced(f, "path", &raw.path, "local");
            let bucket = match &raw.bucket {
                None => {
                    let span = raw.backend.as_ref().map_or(raw.anchor.clone(), |b| b.span.clone());
                    f.push(
                        Finding::new(span, "The `gcs` state backend needs a `bucket`", "`bucket` is missing")
                            .help("add `bucket = \"my-project-a3ctl-state\"` to [state]"),
                    );
                    None
                }
                Some(bucket) => {
                    let help = "bucket names have 3 to 63 lowercase letters, digits, hyphens and underscores";
                    name_ok(f, bucket, "State bucket", names::bucket(bucket.as_str()), help).then(|| bucket.value.clone())
                }
            };
            let kms_key = raw.kms_key.as_ref().and_then(|key| {
                let parts: Vec<&str> = key.as_str().split('/').collect();
                let valid = parts.len() == 8
                    && parts[0] == "projects"
                    && parts[2] == "locations"
                    && parts[4] == "keyRings"
                    && parts[6] == "cryptoKeys"
                    && parts.iter().all(|p| !p.is_empty());
                if !valid {
                    f.push(
                        Finding::new(key.span.clone(), "`kms_key` is not a Cloud KMS key name", "not a key name")
                            .help("use projects/<project>/locations/<location>/keyRings/<ring>/cryptoKeys/<key>"),
                    );
                }
                Some(valid.then(|| key.value.clone()))
            });
            if f.0.len() != before {
                return None;
            }
            let prefix = match &raw.prefix {
                Some(prefix) => prefix.value.trim_matches('/').to_string(),
                None => format!("a3ctl/{}", ctx.name.as_deref()?),
            };
            Some(StateBackend::Gcs { bucket: bucket?, prefix, kms_key: kms_key.flatten() })
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::blueprint::testing::{BASE, one_problem, problems, with};
    use crate::blueprint::{ManifestSource, StateBackend, VersionSpec, parse};

    fn section(table: &str, lines: &str) -> String {
        BASE.replace("[[gpu_pool]]", &format!("[{table}]\n{lines}\n[[gpu_pool]]"))
    }

    #[test]
    fn unknown_keys_suggest_the_closest_known_key() {
        let problem = one_problem(&BASE.replace("project =", "projct ="), "Unknown key `projct` in the top level", 2, 1);
        assert_eq!(problem.help.as_deref(), Some("did you mean `project`?"));
        // The misspelt key leaves `project` missing, which is not reported a second time.
        assert_eq!(problems(&BASE.replace("project =", "projct =")).len(), 1);
        assert_eq!(problems(&BASE.replace("project =", "zzz =")).len(), 2);
        let problem = one_problem(&with("nodse = 3\n"), "Unknown key `nodse` in [[gpu_pool]]", 10, 1);
        assert_eq!(problem.help.as_deref(), Some("did you mean `nodes`?"));
        let problem = one_problem(&section("cluster", "colour = \"red\""), "Unknown key `colour` in [cluster]", 7, 1);
        assert!(problem.help.as_deref().is_some_and(|h| h.starts_with("the keys allowed here are `release_channel`")));
    }

    #[test]
    fn wrong_types_name_the_expected_type() {
        let problem = one_problem(&BASE.replace("nodes = 2", "nodes = \"2\""), "`nodes` in [[gpu_pool]] must be an integer, found a string", 9, 9);
        assert_eq!(problem.label, "expected an integer");
        one_problem(&BASE.replace("name = \"a3mega\"\nproject", "name = 5\nproject"), "`name` in the top level must be a string, found an integer", 1, 8);
        one_problem(&format!("network = 3\n{BASE}"), "`network` in the top level must be a table", 1, 11);
        one_problem(&format!("gpu_pool = 3\n{}", BASE.split("[[gpu_pool]]").next().unwrap_or_default()), "`gpu_pool` must be an array of tables", 1, 12);
        one_problem(&section("cluster", "private_nodes = 1"), "must be a boolean, found an integer", 7, 17);
    }

    #[test]
    fn missing_required_keys_are_reported_at_their_table() {
        let problem = one_problem(&BASE.replace("project = \"my-project\"\n", ""), "Missing required key `project` in the top level", 1, 1);
        assert_eq!(problem.help.as_deref(), Some("add `project = \"my-project\"`"));
        one_problem(&BASE.replace("machine_type = \"a3-megagpu-8g\"\n", ""), "Missing required key `machine_type` in [[gpu_pool]]", 6, 1);
        let all = problems("");
        let messages: Vec<&str> = all.iter().map(|p| p.message.as_str()).collect();
        assert_eq!(all.len(), 5, "{messages:?}");
    }

    #[test]
    fn deployment_name_is_short_rfc1035() {
        let long = BASE.replace("name = \"a3mega\"\nproject", &format!("name = \"{}\"\nproject", "a".repeat(21)));
        let problem = one_problem(&long, "it is 21 characters long, the limit is 20", 1, 8);
        assert!(problem.help.as_deref().is_some_and(|h| h.contains("at most 20")));
        one_problem(&BASE.replace("name = \"a3mega\"\nproject", "name = \"a3_mega\"\nproject"), "`_` is not allowed", 1, 8);
    }

    #[test]
    fn project_id_follows_gcp_rules() {
        one_problem(&BASE.replace("my-project", "proj"), "Project id `proj` is not valid: it is 4 characters long", 2, 11);
        one_problem(&BASE.replace("my-project", "My-Project"), "Project id `My-Project` is not valid", 2, 11);
    }

    #[test]
    fn region_and_zone_must_be_known_and_agree() {
        let problem = one_problem(&BASE.replace("region = \"us-central1\"", "region = \"us-centrl1\""), "Unknown region `us-centrl1`", 3, 10);
        assert_eq!(problem.help.as_deref(), Some("did you mean `us-central1`?"));
        let problem = one_problem(&BASE.replace("zone = \"us-central1-a\"", "zone = \"us-east4-a\""), "Zone `us-east4-a` is not in region `us-central1`", 4, 8);
        assert!(problem.help.as_deref().is_some_and(|h| h.contains("`us-central1-a`")));
        let problem = one_problem(&BASE.replace("zone = \"us-central1-a\"", "zone = \"us-central1-z\""), "Unknown zone `us-central1-z`", 4, 8);
        assert!(problem.help.is_some());
    }

    #[test]
    fn release_channel_and_version_are_checked() {
        let problem = one_problem(&section("cluster", "release_channel = \"regualr\""), "`release_channel` must be", 7, 19);
        assert_eq!(problem.help.as_deref(), Some("did you mean `regular`?"));
        one_problem(&section("cluster", "version = \"1.32.x\""), "`version` `1.32.x` is not a GKE version", 7, 11);
        let blueprint = parse(&section("cluster", "version = \"1.33\""), "t").expect("valid");
        assert_eq!(blueprint.cluster.version, VersionSpec::Minor { major: 1, minor: 33 });
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
        let problem = one_problem(&section("cluster", "version = \"1.31\""), "No GKE `1.31` build supports GPUDirect-TCPXO", 7, 11);
        assert_eq!(problem.label, "needs 1.32.4-gke.1767000 or later");
        let high = BASE.replace("a3-megagpu-8g", "a3-highgpu-8g");
        let text = high.replace("[[gpu_pool]]", "[cluster]\nversion = \"1.28.15-gke.3162999\"\n\n[[gpu_pool]]");
        one_problem(&text, "too old for GPUDirect-TCPX on A3 High", 7, 11);
        assert!(problems(&high.replace("[[gpu_pool]]", "[cluster]\nversion = \"1.28.15-gke.3163000\"\n\n[[gpu_pool]]")).is_empty());
    }

    #[test]
    fn authorized_networks_are_cidrs() {
        one_problem(&section("cluster", "authorized_networks = [{ cidr = \"1.2.3.4\" }]"), "`cidr` `1.2.3.4` is not a valid IPv4 CIDR block", 7, 33);
        one_problem(&section("cluster", "authorized_networks = [{ name = \"office\" }]"), "Missing required key `cidr`", 7, 24);
    }

    #[test]
    fn stack_must_be_tested_unless_forced() {
        let problem = one_problem(&section("software", "stack = \"2024-01\""), "Stack `2024-01` is not a tested combination for A3 Mega", 7, 9);
        assert!(problem.help.as_deref().is_some_and(|h| h.contains("`2026-01`, `2025-11` or `2025-08`")));
        let forced = parse(&section("software", "stack = \"2024-01\"\nforce_stack = true"), "t").expect("forced");
        assert!(forced.software.stack.forced);
        assert_eq!(forced.software.stack.id, "2024-01");
        one_problem(&section("software", "plugin_tag = \"v1.0.13\""), "`plugin_tag` overrides a tested stack", 7, 14);
        let forced = parse(&section("software", "force_stack = true\nplugin_tag = \"v1.0.13\""), "t").expect("forced");
        assert_eq!(forced.software.stack.plugin_tag, "v1.0.13");
        let old = parse(&section("software", "stack = \"2025-08\""), "t").expect("known");
        assert_eq!((old.software.stack.rxdm_tag.as_str(), old.software.stack.forced), ("v1.0.18", false));
        one_problem(&section("software", "driver = \"newest\""), "`driver` must be", 7, 10);
        one_problem(&section("software", "network_prefix = \"VPC\""), "`network_prefix` `VPC` is not valid", 7, 18);
    }

    #[test]
    fn kueue_settings_are_checked() {
        let kueue = |lines: &str| BASE.replace("[[gpu_pool]]", &format!("[software.kueue]\n{lines}\n[[gpu_pool]]"));
        one_problem(&kueue("version = \"0.17.1\""), "Kueue `version` `0.17.1` is not a release tag", 7, 11);
        one_problem(&kueue("sha256 = \"abc\""), "Kueue `sha256` is not a SHA-256 digest", 7, 10);
        one_problem(&kueue("manifest = \"http://example.com/kueue.yaml\""), "neither an https URL nor a path", 7, 12);
        one_problem(&kueue("queue = \"A3\""), "Kueue queue name `A3` is not valid", 7, 9);
        let local = parse(&kueue("manifest = \"vendor/kueue.yaml\"\nsha256 = \"\""), "t").expect("valid");
        assert_eq!(local.software.kueue.manifest, ManifestSource::Path("vendor/kueue.yaml".into()));
        assert_eq!(local.software.kueue.sha256, None);
    }

    #[test]
    fn state_backend_keys_match_the_backend() {
        let problem = one_problem(&section("state", "backend = \"gcs\""), "The `gcs` state backend needs a `bucket`", 7, 11);
        assert_eq!(problem.label, "`bucket` is missing");
        one_problem(&section("state", "bucket = \"my-project-state\""), "`bucket` does not apply to the `local` state backend", 7, 10);
        one_problem(&section("state", "backend = \"gcs\"\nbucket = \"my-project-state\"\npath = \"x.json\""), "`path` does not apply", 9, 8);
        one_problem(&section("state", "backend = \"gcs\"\nbucket = \"my-project-state\"\nkms_key = \"key\""), "`kms_key` is not a Cloud KMS key name", 9, 11);
        let gcs = parse(&section("state", "backend = \"gcs\"\nbucket = \"my-project-state\""), "t").expect("valid");
        assert_eq!(
            gcs.state,
            StateBackend::Gcs { bucket: "my-project-state".into(), prefix: "a3ctl/a3mega".into(), kms_key: None }
        );
        one_problem(&section("state", "backend = \"s3\""), "`backend` must be `local` or `gcs`", 7, 11);
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
