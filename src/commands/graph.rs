//! `a3ctl graph`: print the resource graph (no cloud calls).

use super::ExitStatus;
use crate::blueprint;
use crate::cli::GraphFormat;
use crate::graph::ResourceGraph;
use crate::ui::Printer;
use crate::ui::diagnostics::Failure;
use std::path::Path;

pub fn run(printer: &Printer, path: &Path, format: GraphFormat) -> Result<ExitStatus, Failure> {
    let blueprint = blueprint::load(path).map_err(|e| Failure::blueprint(printer, &e))?;
    let graph = ResourceGraph::from_blueprint(&blueprint)
        .map_err(|e| Failure::new("The resource graph is invalid").cause(e.to_string()))?;
    printer.out(&match format {
        GraphFormat::Dot => graph.dot(),
        GraphFormat::Mermaid => graph.mermaid(),
    });
    Ok(ExitStatus::Success)
}
