//! Storage rules: Filestore tier and capacity, Artifact Registry repositories, Cloud Storage
//! buckets (names, regional location, duplicates).

use super::decode::Sp;
use super::error::{Finding, Findings};
use super::model::{
    ArtifactRegistry, Bucket, Filestore, FilestoreTier, RepositoryFormat, StorageClass,
};
use super::names;
use super::schema::{RawArtifactRegistry, RawBucket, RawFilestore};
use super::validate::{Ctx, choice, name_ok};

pub(crate) fn filestore(raw: Option<&RawFilestore>, ctx: &mut Ctx) -> Option<Option<Filestore>> {
    let Some(raw) = raw else { return Some(None) };
    let f = &mut ctx.f;
    let tier = match &raw.tier {
        None => Some(FilestoreTier::BasicSsd),
        Some(value) => choice(
            f,
            value,
            "tier",
            &FilestoreTier::NAMES,
            FilestoreTier::parse,
        ),
    };
    let capacity_gb = tier.and_then(|tier| {
        let (min, max) = tier.capacity_range();
        match &raw.capacity_gb {
            None => Some(min),
            Some(value) if (i64::from(min)..=i64::from(max)).contains(&value.value) => {
                u32::try_from(value.value).ok()
            }
            Some(value) => {
                f.push(
                    Finding::new(
                        value.span.clone(),
                        format!(
                            "Filestore `{}` capacity must be {min} to {max} GiB, found {}",
                            tier.api_value(),
                            value.value
                        ),
                        "capacity out of range",
                    )
                    .help(format!(
                        "set `capacity_gb` between {min} and {max}, or pick a tier whose range fits"
                    )),
                );
                None
            }
        }
    });
    let share = match &raw.share {
        None => Some("nfsshare".to_string()),
        Some(value) => {
            let help = "share names start with a lowercase letter and use lowercase letters, digits and underscores, at most 16 characters";
            name_ok(
                f,
                value,
                "Filestore share name",
                names::filestore_share(value.as_str()),
                help,
            )
            .then(|| value.value.clone())
        }
    };
    let tier = tier?;
    let location = if tier.is_regional() {
        ctx.region.clone()
    } else {
        ctx.zone.clone()
    };
    Some(Some(Filestore {
        tier,
        capacity_gb: capacity_gb?,
        share: share?,
        location: location?,
        prevent_destroy: raw.prevent_destroy.as_ref().is_some_and(|v| v.value),
    }))
}

fn duplicate(f: &mut Findings, seen: &mut Vec<Sp<String>>, name: &Sp<String>, what: &str) -> bool {
    if let Some(previous) = seen.iter().find(|s| s.value == name.value) {
        f.push(
            Finding::new(
                name.span.clone(),
                format!("{what} `{}` is declared twice", name.value),
                "second declaration",
            )
            .also(previous.span.clone(), "first declared here")
            .help(format!("{what} names must be unique; remove or rename one")),
        );
        return true;
    }
    seen.push(name.clone());
    false
}

pub(crate) fn artifact_registries(
    raw: &[RawArtifactRegistry],
    ctx: &mut Ctx,
) -> Option<Vec<ArtifactRegistry>> {
    let f = &mut ctx.f;
    let mut seen = Vec::new();
    let mut out = Some(Vec::new());
    for repo in raw {
        let name = repo.name.as_ref().and_then(|name| {
            let help = "repository ids are lowercase letters, digits and hyphens, start with a letter and end with a letter or digit, at most 63 characters";
            let valid = name_ok(f, name, "Repository id", names::repository(name.as_str()), help);
            (valid && !duplicate(f, &mut seen, name, "Repository")).then(|| name.value.clone())
        });
        let format = match &repo.format {
            None => Some(RepositoryFormat::Docker),
            Some(value) => choice(
                f,
                value,
                "format",
                &RepositoryFormat::NAMES,
                RepositoryFormat::parse,
            ),
        };
        match (name, format, ctx.region.clone(), out.as_mut()) {
            (Some(name), Some(format), Some(location), Some(list)) => list.push(ArtifactRegistry {
                name,
                format,
                location,
            }),
            _ => out = None,
        }
    }
    out
}

pub(crate) fn buckets(raw: &[RawBucket], ctx: &mut Ctx) -> Option<Vec<Bucket>> {
    let f = &mut ctx.f;
    let mut seen = Vec::new();
    let mut out = Some(Vec::new());
    for bucket in raw {
        let name = bucket.name.as_ref().and_then(|name| {
            let help = "bucket names have 3 to 63 lowercase letters, digits, hyphens and underscores, start and end with a letter or digit, and are global: prefix them with the project id";
            let valid = name_ok(f, name, "Bucket name", names::bucket(name.as_str()), help);
            (valid && !duplicate(f, &mut seen, name, "Bucket")).then(|| name.value.clone())
        });
        let location = match (&bucket.location, &ctx.region) {
            (None, region) => region.clone(),
            (Some(value), Some(region)) if value.value.eq_ignore_ascii_case(region) => {
                Some(region.clone())
            }
            (Some(value), Some(region)) => {
                f.push(
                    Finding::new(
                        value.span.clone(),
                        format!("Bucket location `{}` is not the cluster's region `{region}`", value.value),
                        "not the cluster's region",
                    )
                    .help(format!(
                        "GPU recipes need regional buckets next to the nodes; set `location = \"{region}\"` or remove `location`"
                    )),
                );
                None
            }
            (Some(_), None) => None,
        };
        let storage_class = match &bucket.storage_class {
            None => Some(StorageClass::Standard),
            Some(value) => choice(
                f,
                value,
                "storage_class",
                &StorageClass::NAMES,
                StorageClass::parse,
            ),
        };
        let flag = |value: &Option<Sp<bool>>| value.as_ref().is_some_and(|v| v.value);
        match (name, location, storage_class, out.as_mut()) {
            (Some(name), Some(location), Some(storage_class), Some(list)) => list.push(Bucket {
                name,
                location,
                storage_class,
                hierarchical_namespace: flag(&bucket.hierarchical_namespace),
                force_destroy: flag(&bucket.force_destroy),
                prevent_destroy: flag(&bucket.prevent_destroy),
                mount: flag(&bucket.mount),
            }),
            _ => out = None,
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use crate::blueprint::testing::{one_problem, problems, with};
    use crate::blueprint::{FilestoreTier, parse};

    #[test]
    fn filestore_capacity_depends_on_tier() {
        let problem = one_problem(
            &with("\n[filestore]\ncapacity_gb = 1024\n"),
            "`BASIC_SSD` capacity must be 2560 to 65433 GiB",
            12,
            15,
        );
        assert_eq!(problem.label, "capacity out of range");
        one_problem(
            &with("\n[filestore]\ntier = \"ENTERPRISE\"\ncapacity_gb = 20000\n"),
            "1024 to 10240",
            13,
            15,
        );
        one_problem(
            &with("\n[filestore]\ntier = \"HIGH_SCALE_SSD\"\ncapacity_gb = 2560\n"),
            "10240 to 102400",
            13,
            15,
        );
        assert!(
            problems(&with(
                "\n[filestore]\ntier = \"BASIC_HDD\"\ncapacity_gb = 1024\n"
            ))
            .is_empty()
        );
        assert!(
            problems(&with(
                "\n[filestore]\ntier = \"ZONAL\"\ncapacity_gb = 102400\n"
            ))
            .is_empty()
        );
    }

    #[test]
    fn filestore_defaults_and_names() {
        let blueprint = parse(&with("\n[filestore]\n"), "t").expect("valid");
        let filestore = blueprint.filestore.expect("declared");
        assert_eq!(
            (filestore.tier, filestore.capacity_gb),
            (FilestoreTier::BasicSsd, 2560)
        );
        assert_eq!(
            (filestore.share.as_str(), filestore.location.as_str()),
            ("nfsshare", "us-central1-a")
        );
        let regional = parse(&with("\n[filestore]\ntier = \"REGIONAL\"\n"), "t").expect("valid");
        assert_eq!(
            regional.filestore.expect("declared").location,
            "us-central1"
        );
        let problem = one_problem(
            &with("\n[filestore]\ntier = \"BASIC\"\n"),
            "`tier` must be",
            12,
            8,
        );
        assert!(
            problem
                .help
                .as_deref()
                .is_some_and(|h| h.contains("BASIC_"))
        );
        one_problem(
            &with("\n[filestore]\nshare = \"nfs-share\"\n"),
            "Filestore share name `nfs-share` is not valid",
            12,
            9,
        );
    }

    #[test]
    fn buckets_live_in_the_cluster_region() {
        let text = with("\n[[bucket]]\nname = \"my-project-ckpt\"\nlocation = \"US\"\n");
        let problem = one_problem(
            &text,
            "Bucket location `US` is not the cluster's region `us-central1`",
            13,
            12,
        );
        assert!(
            problem
                .help
                .as_deref()
                .is_some_and(|h| h.contains("regional buckets next to the nodes"))
        );
        let ok = parse(
            &with("\n[[bucket]]\nname = \"my-project-ckpt\"\nlocation = \"US-CENTRAL1\"\n"),
            "t",
        )
        .expect("valid");
        assert_eq!(ok.buckets[0].location, "us-central1");
    }

    #[test]
    fn bucket_names_follow_gcs_rules_and_are_unique() {
        one_problem(
            &with("\n[[bucket]]\nname = \"My_Bucket\"\n"),
            "Bucket name `My_Bucket` is not valid",
            12,
            8,
        );
        one_problem(
            &with("\n[[bucket]]\nname = \"google-ckpt\"\n"),
            "Bucket name `google-ckpt` is not valid",
            12,
            8,
        );
        let text = with(
            "\n[[bucket]]\nname = \"my-project-ckpt\"\n\n[[bucket]]\nname = \"my-project-ckpt\"\n",
        );
        let problem = one_problem(&text, "Bucket `my-project-ckpt` is declared twice", 15, 8);
        assert_eq!(problem.label, "second declaration");
        one_problem(
            &with("\n[[bucket]]\nname = \"my-project-ckpt\"\nstorage_class = \"REGIONAL\"\n"),
            "`storage_class` must be",
            13,
            17,
        );
    }

    #[test]
    fn repositories_follow_artifact_registry_rules() {
        one_problem(
            &with("\n[[artifact_registry]]\nname = \"Training\"\n"),
            "Repository id `Training` is not valid",
            12,
            8,
        );
        let text = with(
            "\n[[artifact_registry]]\nname = \"training\"\n\n[[artifact_registry]]\nname = \"training\"\nformat = \"python\"\n",
        );
        one_problem(&text, "Repository `training` is declared twice", 15, 8);
        let problem = one_problem(
            &with("\n[[artifact_registry]]\nname = \"training\"\nformat = \"dockr\"\n"),
            "`format` must be",
            13,
            10,
        );
        assert_eq!(problem.help.as_deref(), Some("did you mean `docker`?"));
        one_problem(
            &with("\n[[artifact_registry]]\nformat = \"docker\"\n"),
            "Missing required key `name` in [[artifact_registry]]",
            11,
            1,
        );
    }
}
