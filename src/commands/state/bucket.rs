//! `a3ctl state create-bucket BLUEPRINT`: the seed guides' first step, creating the bucket that
//! keeps the state, in one idempotent command.

use super::Target;
use crate::graph::build::LABEL;
use crate::state::backend::StateStore;
use crate::state::gcs::BucketCreation;
use crate::ui::Printer;
use crate::ui::diagnostics::Failure;
use serde_json::{Value, json};

pub(super) fn create(printer: &Printer, target: &Target) -> Result<(), Failure> {
    let StateStore::Gcs(store) = target.store() else {
        return Err(Failure::new(format!(
            "The state of `{}` is kept in a local file: there is no bucket to create",
            target.path.display()
        ))
        .hint("set `backend = \"gcs\"` and `bucket = \"...\"` in the blueprint's [state], or pass `--state-bucket BUCKET`"));
    };
    let bucket = &store.location().bucket;
    let bp = &target.blueprint;
    let labels = json!({ LABEL: bp.name, "a3ctl-purpose": "state" });
    let created = store
        .create_bucket(&bp.project, &bp.region, labels)
        .map_err(|e| Failure::object(format!("Cannot create state bucket `{bucket}`"), &e))?;
    match created {
        BucketCreation::Created(resource) => {
            printer.info(&format!(
                "Created bucket `gs://{bucket}` in project `{}` ({}): {}.\nState will be kept in `{}`.",
                bp.project,
                resource["location"].as_str().unwrap_or(&bp.region),
                settings(&resource),
                store.location().url()
            ));
            Ok(())
        }
        BucketCreation::Existed(resource) => {
            printer.info(&format!(
                "Bucket `gs://{bucket}` already exists in project `{}` ({}): {}. Nothing was changed.",
                bp.project,
                resource["location"].as_str().unwrap_or("unknown location"),
                settings(&resource)
            ));
            if resource["versioning"]["enabled"] != true {
                printer.info(&format!(
                    "warning: versioning is off, so an overwritten or lost state cannot be recovered; turn it on with `gcloud storage buckets update gs://{bucket} --versioning`"
                ));
            }
            Ok(())
        }
        BucketCreation::Taken => Err(Failure::new(format!(
            "Bucket name `{bucket}` is taken by another project"
        ))
        .cause("bucket names are global: a bucket of that name exists, and project `".to_string() + &bp.project + "` does not have it")
        .hint("choose another name for `[state] bucket` (or `--state-bucket`), e.g. one starting with the project id")),
    }
}

/// The settings that matter for a state bucket, as `versioning on, uniform access on`.
fn settings(resource: &Value) -> String {
    let on = |value: &Value| if *value == true { "on" } else { "off" };
    format!(
        "versioning {}, uniform bucket-level access {}",
        on(&resource["versioning"]["enabled"]),
        on(&resource["iamConfiguration"]["uniformBucketLevelAccess"]["enabled"])
    )
}
