//! Cluster software rules: NVIDIA driver mode, the GPUDirect version stack (a tested row of
//! [`super::presets::STACKS`] unless `force_stack`), Network object names, Kueue and JobSet.

use std::path::PathBuf;

use super::decode::quoted_list;
use super::error::{Finding, Findings};
use super::model::{DriverMode, JobSet, Kueue, ManifestSource, Rxdm, Software, StackVersions};
use super::names;
use super::presets::{self, MachineFamily};
use super::schema::{RawSoftware, Str};
use super::validate::{Ctx, choice, name_ok};

pub(crate) fn software(raw: &RawSoftware, ctx: &mut Ctx) -> Option<Software> {
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
            name_ok(
                f,
                value,
                "`network_prefix`",
                names::dns1123_label(value.as_str(), 40),
                help,
            )
            .then(|| value.value.clone())
        }
    };
    let kueue = kueue(raw, f);
    let jobset = jobset(raw, f);
    Some(Software {
        driver: driver?,
        nccl: raw.nccl.as_ref().is_none_or(|v| v.value),
        stack: stack?,
        network_prefix: network_prefix?,
        kueue: kueue?,
        jobset: jobset?,
    })
}

/// The first GKE minor among the blueprint's versions (`[cluster]`'s and the pools' own) that
/// its stack is known not to be tested on (`1.34`), when there is one: a blueprint that
/// validates then has `force_stack = true`.
pub fn untested_gke_minor(bp: &super::Blueprint) -> Option<String> {
    let (major, minor, _) = presets::stack(bp.family, &bp.software.stack.id)?.untested_from?;
    std::iter::once(bp.cluster.version)
        .chain(bp.system_pool.version)
        .chain(bp.gpu_pools.iter().filter_map(|p| p.version))
        .filter_map(|v| crate::resource::kinds::gke_versions::minor_of(&v.to_string()))
        .filter(|found| *found >= (u64::from(major), u64::from(minor)))
        .min()
        .map(|(a, b)| format!("{a}.{b}"))
}

/// The stack against the GKE versions it will run on (`[cluster] version` and each pool's own):
/// a version the stack is known not to be tested on is an error unless `force_stack = true`.
/// Versions that need GKE's offer to resolve (`default`, `latest`) are not known offline.
pub(crate) fn stack_fits_versions(
    raw: &super::schema::RawBlueprint,
    family: MachineFamily,
    stack: &StackVersions,
    f: &mut Findings,
) {
    let Some((major, minor, source)) =
        presets::stack(family, &stack.id).and_then(|row| row.untested_from)
    else {
        return;
    };
    if stack.forced || raw.software.force_stack.as_ref().is_some_and(|v| v.value) {
        return;
    }
    let versions = std::iter::once(raw.cluster.version.as_ref())
        .chain(std::iter::once(raw.system_pool.version.as_ref()))
        .chain(raw.gpu_pools.iter().map(|p| p.version.as_ref()))
        .flatten();
    for value in versions {
        let Some((vmaj, vmin)) = crate::resource::kinds::gke_versions::minor_of(value.as_str())
        else {
            continue;
        };
        if (vmaj, vmin) < (u64::from(major), u64::from(minor)) {
            continue;
        }
        let mut finding = Finding::new(
            value.span.clone(),
            format!(
                "Stack `{}` is not tested on GKE {vmaj}.{vmin} for {}",
                stack.id,
                family.display_name()
            ),
            "untested with the NCCL stack",
        )
        .help(format!(
            "{source}; stay below {major}.{minor} (e.g. `version = \"{major}.{}\"`), or set `force_stack = true` under `[software]` to run it anyway",
            minor.saturating_sub(1)
        ));
        if let Some(id) = &raw.software.stack {
            finding = finding.also(id.span.clone(), "the stack");
        }
        f.push(finding);
    }
}

fn stack(
    raw: &RawSoftware,
    family: MachineFamily,
    force: bool,
    f: &mut Findings,
) -> Option<StackVersions> {
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
        id: raw
            .stack
            .as_ref()
            .map_or(row.id.to_string(), |id| id.value.clone()),
        gpudirect: family.gpudirect(),
        plugin_image: row.plugin_image.to_string(),
        plugin_tag: row.plugin_tag.to_string(),
        rxdm: row.rxdm.map(|(image, tag)| Rxdm {
            image: image.to_string(),
            tag: tag.to_string(),
        }),
        nccl: row.nccl.map(str::to_string),
        forced: presets::stack(
            family,
            &raw.stack
                .as_ref()
                .map_or(row.id.to_string(), |id| id.value.clone()),
        )
        .is_none(),
    };
    let mut ok = true;
    for (key, value) in [("plugin_tag", &raw.plugin_tag), ("rxdm_tag", &raw.rxdm_tag)] {
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
            continue;
        }
        if value.value.is_empty()
            || value
                .value
                .contains(|c: char| c.is_whitespace() || c == ':' || c == '/')
        {
            f.push(Finding::new(
                value.span.clone(),
                format!("`{key}` `{}` is not an image tag", value.value),
                "not a tag",
            ));
            ok = false;
            continue;
        }
        let slot = match (key, versions.rxdm.as_mut()) {
            ("plugin_tag", _) => &mut versions.plugin_tag,
            (_, Some(rxdm)) => &mut rxdm.tag,
            (_, None) => {
                f.push(
                    Finding::new(
                        value.span.clone(),
                        format!("{} has no RxDM sidecar to tag", family.display_name()),
                        "not used",
                    )
                    .help(format!(
                        "{} uses {}, whose gIB plugin needs no RxDM; remove `rxdm_tag`",
                        family.display_name(),
                        family.gpudirect().display()
                    )),
                );
                ok = false;
                continue;
            }
        };
        *slot = value.value.clone();
        versions.forced = true;
    }
    ok.then_some(versions)
}

fn kueue(raw: &RawSoftware, f: &mut Findings) -> Option<Kueue> {
    let raw = &raw.kueue;
    let version = match &raw.version {
        None => Some(presets::KUEUE_VERSION.to_string()),
        Some(value) => {
            let valid = value.as_str().strip_prefix('v').is_some_and(|rest| {
                rest.split('.').count() == 3
                    && rest
                        .split('.')
                        .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
            });
            if !valid {
                f.push(
                    Finding::new(
                        value.span.clone(),
                        format!("Kueue `version` `{}` is not a release tag", value.value),
                        "expected vX.Y.Z",
                    )
                    .help(format!(
                        "use a release tag like `{}`",
                        presets::KUEUE_VERSION
                    )),
                );
            }
            valid.then(|| value.value.clone())
        }
    };
    let manifest = match (&raw.manifest, &version) {
        (None, Some(version)) => Some(ManifestSource::Url(presets::kueue_manifest_url(version))),
        (None, None) => None,
        (Some(value), _) if value.as_str().starts_with("https://") => {
            Some(ManifestSource::Url(value.value.clone()))
        }
        (Some(value), _) if value.as_str().contains("://") || value.value.is_empty() => {
            f.push(
                Finding::new(
                    value.span.clone(),
                    format!(
                        "Kueue `manifest` `{}` is neither an https URL nor a path",
                        value.value
                    ),
                    "unsupported location",
                )
                .help("use an https:// URL or a local file path"),
            );
            None
        }
        (Some(value), _) => Some(ManifestSource::Path(PathBuf::from(&value.value))),
    };
    let sha256 = match &raw.sha256 {
        None => Some(None),
        Some(value) if value.value.is_empty() => Some(None),
        Some(value)
            if value.value.len() == 64 && value.value.bytes().all(|b| b.is_ascii_hexdigit()) =>
        {
            Some(Some(value.value.to_ascii_lowercase()))
        }
        Some(value) => {
            f.push(
                Finding::new(
                    value.span.clone(),
                    "Kueue `sha256` is not a SHA-256 digest",
                    "expected 64 hex digits",
                )
                .help("use the output of `sha256sum manifests.yaml`, or leave it empty"),
            );
            None
        }
    };
    let queue = match &raw.queue {
        None => Some("a3-queue".to_string()),
        Some(value) => {
            let help = "queue names are Kubernetes names: lowercase letters, digits and hyphens, at most 63 characters";
            name_ok(
                f,
                value,
                "Kueue queue name",
                names::dns1123_label(value.as_str(), 63),
                help,
            )
            .then(|| value.value.clone())
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

/// `[software.jobset]`: on unless `enabled = false`, the pinned release unless `version` names
/// another, from its GitHub release unless `manifest` says where.
fn jobset(raw: &RawSoftware, f: &mut Findings) -> Option<JobSet> {
    let raw = &raw.jobset;
    let version = release_tag(&raw.version, "JobSet", presets::JOBSET_VERSION, f);
    let manifest = match &version {
        Some(version) => release_manifest(
            &raw.manifest,
            "JobSet",
            || presets::jobset_manifest_url(version),
            f,
        ),
        None => None,
    };
    let sha256 = release_sha256(&raw.sha256, "JobSet", f);
    Some(JobSet {
        enabled: raw.enabled.as_ref().is_none_or(|v| v.value),
        version: version?,
        manifest: manifest?,
        sha256: sha256?,
    })
}

/// A release's `version`: a `vX.Y.Z` tag, `default` when absent.
fn release_tag(value: &Str, product: &str, default: &str, f: &mut Findings) -> Option<String> {
    let Some(value) = value else {
        return Some(default.to_string());
    };
    let valid = value.as_str().strip_prefix('v').is_some_and(|rest| {
        rest.split('.').count() == 3
            && rest
                .split('.')
                .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
    });
    if !valid {
        f.push(
            Finding::new(
                value.span.clone(),
                format!("{product} `version` `{}` is not a release tag", value.value),
                "expected vX.Y.Z",
            )
            .help(format!("use a release tag like `{default}`")),
        );
    }
    valid.then(|| value.value.clone())
}

/// Where a release's manifests come from: `manifest` (an https URL or a local path), else the
/// upstream URL of its version.
fn release_manifest(
    value: &Str,
    product: &str,
    upstream: impl FnOnce() -> String,
    f: &mut Findings,
) -> Option<ManifestSource> {
    match value {
        None => Some(ManifestSource::Url(upstream())),
        Some(value) if value.as_str().starts_with("https://") => {
            Some(ManifestSource::Url(value.value.clone()))
        }
        Some(value) if value.as_str().contains("://") || value.value.is_empty() => {
            f.push(
                Finding::new(
                    value.span.clone(),
                    format!(
                        "{product} `manifest` `{}` is neither an https URL nor a path",
                        value.value
                    ),
                    "unsupported location",
                )
                .help("use an https:// URL or a local file path"),
            );
            None
        }
        Some(value) => Some(ManifestSource::Path(PathBuf::from(&value.value))),
    }
}

/// A release's pinned `sha256`: 64 hex digits (kept lowercase), or none when absent or empty.
fn release_sha256(value: &Str, product: &str, f: &mut Findings) -> Option<Option<String>> {
    match value {
        None => Some(None),
        Some(value) if value.value.is_empty() => Some(None),
        Some(value)
            if value.value.len() == 64 && value.value.bytes().all(|b| b.is_ascii_hexdigit()) =>
        {
            Some(Some(value.value.to_ascii_lowercase()))
        }
        Some(value) => {
            f.push(
                Finding::new(
                    value.span.clone(),
                    format!("{product} `sha256` is not a SHA-256 digest"),
                    "expected 64 hex digits",
                )
                .help("use the output of `sha256sum manifests.yaml`, or leave it empty"),
            );
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::blueprint::testing::{BASE, one_problem, problems};
    use crate::blueprint::{ManifestSource, parse};

    fn section(table: &str, lines: &str) -> String {
        BASE.replace("[[gpu_pool]]", &format!("[{table}]\n{lines}\n[[gpu_pool]]"))
    }

    #[test]
    fn a_gke_version_the_stack_is_not_tested_on_is_an_error_unless_forced() {
        let high = |cluster: &str, software: &str| {
            BASE.replace("a3-megagpu-8g", "a3-highgpu-8g").replace(
                "[[gpu_pool]]",
                &format!("[cluster]\n{cluster}\n\n[software]\n{software}\n\n[[gpu_pool]]"),
            )
        };
        let problem = one_problem(
            &high("version = \"1.34\"", "stack = \"2026-01\""),
            "Stack `2026-01` is not tested on GKE 1.34 for A3 High",
            7,
            11,
        );
        let help = problem.help.unwrap();
        assert!(help.contains("cluster-toolkit#5673"), "{help}");
        assert!(help.contains("`version = \"1.33\"`"), "{help}");
        assert!(help.contains("`force_stack = true`"), "{help}");
        // A pool's own version counts too; 1.33 and the channel's default are fine.
        let pool = high("version = \"1.33\"", "").replace(
            "nodes = 2\n",
            "nodes = 2\nversion = \"1.34.1-gke.1829001\"\n",
        );
        assert_eq!(
            problems(&pool).len(),
            2,
            "skew and the stack: {:?}",
            problems(&pool)
        );
        assert!(problems(&high("version = \"1.33\"", "")).is_empty());
        assert!(problems(&high("version = \"latest\"", "")).is_empty());
        // Forced: the user takes the untested combination knowingly.
        assert!(problems(&high("version = \"1.34\"", "force_stack = true")).is_empty());
        // A3 Mega's stacks have no known ceiling.
        assert!(problems(&section("cluster", "version = \"1.34\"")).is_empty());
    }

    #[test]
    fn stack_must_be_tested_unless_forced() {
        let problem = one_problem(
            &section("software", "stack = \"2024-01\""),
            "Stack `2024-01` is not a tested combination for A3 Mega",
            7,
            9,
        );
        assert!(
            problem
                .help
                .as_deref()
                .is_some_and(|h| h.contains("`2026-01`, `2025-11` or `2025-08`"))
        );
        let forced = parse(
            &section("software", "stack = \"2024-01\"\nforce_stack = true"),
            "t",
        )
        .expect("forced");
        assert!(forced.software.stack.forced);
        assert_eq!(forced.software.stack.id, "2024-01");
        one_problem(
            &section("software", "plugin_tag = \"v1.0.13\""),
            "`plugin_tag` overrides a tested stack",
            7,
            14,
        );
        let forced = parse(
            &section("software", "force_stack = true\nplugin_tag = \"v1.0.13\""),
            "t",
        )
        .expect("forced");
        assert_eq!(forced.software.stack.plugin_tag, "v1.0.13");
        let old = parse(&section("software", "stack = \"2025-08\""), "t").expect("known");
        assert_eq!(
            (
                old.software.stack.rxdm.as_ref().map(|r| r.tag.as_str()),
                old.software.stack.forced
            ),
            (Some("v1.0.18"), false)
        );
        one_problem(
            &section("software", "driver = \"newest\""),
            "`driver` must be",
            7,
            10,
        );
        one_problem(
            &section("software", "network_prefix = \"VPC\""),
            "`network_prefix` `VPC` is not valid",
            7,
            18,
        );
    }

    #[test]
    fn kueue_settings_are_checked() {
        let kueue = |lines: &str| {
            BASE.replace(
                "[[gpu_pool]]",
                &format!("[software.kueue]\n{lines}\n[[gpu_pool]]"),
            )
        };
        one_problem(
            &kueue("version = \"0.17.1\""),
            "Kueue `version` `0.17.1` is not a release tag",
            7,
            11,
        );
        one_problem(
            &kueue("sha256 = \"abc\""),
            "Kueue `sha256` is not a SHA-256 digest",
            7,
            10,
        );
        one_problem(
            &kueue("manifest = \"http://example.com/kueue.yaml\""),
            "neither an https URL nor a path",
            7,
            12,
        );
        one_problem(
            &kueue("queue = \"A3\""),
            "Kueue queue name `A3` is not valid",
            7,
            9,
        );
        let local = parse(
            &kueue("manifest = \"vendor/kueue.yaml\"\nsha256 = \"\""),
            "t",
        )
        .expect("valid");
        assert_eq!(
            local.software.kueue.manifest,
            ManifestSource::Path("vendor/kueue.yaml".into())
        );
        assert_eq!(local.software.kueue.sha256, None);
    }

    #[test]
    fn jobset_settings_are_checked_and_default_to_the_pinned_release() {
        let jobset = |lines: &str| section("software.jobset", lines);
        let base = parse(BASE, "t").expect("valid");
        assert!(base.software.jobset.enabled);
        assert_eq!(base.software.jobset.version, "v0.12.0");
        assert_eq!(
            base.software.jobset.manifest,
            ManifestSource::Url(
                "https://github.com/kubernetes-sigs/jobset/releases/download/v0.12.0/manifests.yaml"
                    .into()
            )
        );
        let problem = one_problem(
            &jobset("version = \"0.12.0\""),
            "JobSet `version` `0.12.0` is not a release tag",
            7,
            11,
        );
        assert_eq!(
            problem.help.as_deref(),
            Some("use a release tag like `v0.12.0`")
        );
        one_problem(
            &jobset("sha256 = \"abc\""),
            "JobSet `sha256` is not a SHA-256 digest",
            7,
            10,
        );
        one_problem(
            &jobset("manifest = \"ftp://example.com/jobset.yaml\""),
            "JobSet `manifest` `ftp://example.com/jobset.yaml` is neither an https URL nor a path",
            7,
            12,
        );
        one_problem(&jobset("enable = false"), "`enable`", 7, 1);
        let off = parse(&jobset("enabled = false"), "t").expect("valid");
        assert!(!off.software.jobset.enabled);
        let pinned = parse(
            &jobset(&format!(
                "version = \"v0.11.1\"\nsha256 = \"{}\"",
                "AB".repeat(32)
            )),
            "t",
        )
        .expect("valid");
        assert_eq!(
            pinned.software.jobset.manifest,
            ManifestSource::Url(
                "https://github.com/kubernetes-sigs/jobset/releases/download/v0.11.1/manifests.yaml"
                    .into()
            )
        );
        assert_eq!(pinned.software.jobset.sha256, Some("ab".repeat(32)));
    }
}
