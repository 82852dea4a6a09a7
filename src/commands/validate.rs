//! `a3ctl validate`: check a blueprint without any cloud call.

use super::ExitStatus;
use crate::blueprint::{self, Blueprint};
use crate::ui::Printer;
use crate::ui::diagnostics::Failure;
use std::path::Path;

pub fn run(printer: &Printer, path: &Path) -> Result<ExitStatus, Failure> {
    let (blueprint, warnings) =
        blueprint::load_with_warnings(path).map_err(|e| Failure::blueprint(printer, &e))?;
    if !warnings.is_empty() && !printer.quiet {
        printer.err(&crate::ui::diagnostics::render_warnings(printer, &warnings));
    }
    printer.out(&summary(&blueprint, path));
    Ok(ExitStatus::Success)
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
