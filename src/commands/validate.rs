//! `a3ctl validate`: check a blueprint without any cloud call.

use super::ExitStatus;
use crate::blueprint::{self, Blueprint, BlueprintError};
use crate::ui::Printer;
use crate::ui::diagnostics::Failure;
use serde_json::{Value, json};
use std::path::Path;

pub fn run(
    printer: &Printer,
    path: &Path,
    as_json: bool,
    sandbox: bool,
) -> Result<ExitStatus, Failure> {
    let loaded = blueprint::load_with_warnings(path, sandbox);
    if as_json {
        let (value, status) = match &loaded {
            Ok((blueprint, warnings)) => {
                (json_valid(blueprint, warnings, path), ExitStatus::Success)
            }
            Err(e) => (json_invalid(e, path), ExitStatus::Failure),
        };
        printer.out(&format!("{value}\n"));
        return Ok(status);
    }
    let (blueprint, warnings) = loaded.map_err(|e| Failure::blueprint(printer, &e))?;
    if !warnings.is_empty() && !printer.quiet {
        printer.err(&crate::ui::diagnostics::render_warnings(printer, &warnings));
    }
    printer.out(&summary(&blueprint, path));
    Ok(ExitStatus::Success)
}

/// `validate --json` of a valid blueprint: the summary, and its warnings as diagnostics of
/// severity `warning`.
fn json_valid(blueprint: &Blueprint, warnings: &[blueprint::Problem], path: &Path) -> Value {
    let diagnostics: Vec<Value> = warnings.iter().map(|p| diagnostic("warning", p)).collect();
    json!({
        "format_version": "1",
        "valid": true,
        "file": path.display().to_string(),
        "deployment": blueprint.name,
        "zone": blueprint.zone,
        "machine_type": blueprint.family.machine_type(),
        "summary": blueprint.summary(),
        "diagnostics": diagnostics,
    })
}

/// `validate --json` of a blueprint that does not load: every problem (not only the ones the
/// text view draws), with 1-based line and character column; a file that cannot be read is one
/// diagnostic without a position.
fn json_invalid(error: &BlueprintError, path: &Path) -> Value {
    let diagnostics: Vec<Value> = match error {
        BlueprintError::Read { source, .. } => vec![json!({
            "severity": "error",
            "file": path.display().to_string(),
            "line": null,
            "column": null,
            "message": error.to_string(),
            "label": null,
            "hint": source.hint(),
        })],
        BlueprintError::Invalid { problems, .. } => {
            problems.iter().map(|p| diagnostic("error", p)).collect()
        }
    };
    json!({
        "format_version": "1",
        "valid": false,
        "file": path.display().to_string(),
        "message": error.to_string(),
        "diagnostics": diagnostics,
    })
}

/// One located problem or warning.
fn diagnostic(severity: &str, p: &blueprint::Problem) -> Value {
    json!({
        "severity": severity,
        "file": p.file(),
        "line": p.line,
        "column": p.column,
        "message": p.message,
        "label": p.label,
        "hint": p.help,
    })
}

/// What a valid blueprint will create, in one paragraph.
pub fn summary(blueprint: &Blueprint, path: &Path) -> String {
    let s = blueprint.summary();
    let family = blueprint.family;
    let plural = |n: usize, one: &str, many: &str| {
        if n == 1 {
            one.to_string()
        } else {
            many.to_string()
        }
    };
    format!(
        "Blueprint `{}` is valid: deployment `{}` in `{}` ({} `{}`)\n\
         Will create {} VPCs (1 primary, {} GPU), {} subnets, {} node pools (1 system, {} GPU), \
         {} GPU {} with {} GPUs ({}), {} {}, {} {}, {} Filestore {}\n",
        path.display(),
        blueprint.name,
        blueprint.zone,
        family.display_name(),
        family.machine_type(),
        s.vpcs,
        s.vpcs - 1,
        s.subnets,
        s.node_pools,
        s.node_pools - 1,
        s.gpu_nodes,
        plural(s.gpu_nodes as usize, "node", "nodes"),
        s.gpus,
        family.accelerator_type(),
        s.buckets,
        plural(s.buckets, "bucket", "buckets"),
        s.repositories,
        plural(s.repositories, "repository", "repositories"),
        s.filestores,
        plural(s.filestores, "instance", "instances"),
    )
}
