//! What the user declares: the TOML blueprint, its rules, and the validated [`Blueprint`].
//!
//! A blueprint states intent (project, location, machine family, node counts, storage, add-ons)
//! and never lists resources; the resource graph is derived from it elsewhere. Loading goes
//! through four steps, each in its own file:
//!
//! 1. TOML syntax, keeping spans (`toml::de::DeTable`), all syntax errors at once;
//! 2. [`schema`]: known keys and their TOML types ([`decode`] does the spanned reading);
//! 3. [`validate`] with [`network`], [`pools`] and [`storage`]: every rule and default, using
//!    [`names`], [`cidr`], [`versions`] and the facts in [`presets`];
//! 4. the plain [`model`], returned by [`load`] and [`parse`].
//!
//! Every problem is reported, each with file, line, column, the offending span and a hint, as a
//! [`BlueprintError::Invalid`] whose [`Problem`]s are miette diagnostics. Nothing here touches
//! the network; reading the file is the only I/O.

mod decode;
mod error;
mod model;
mod network;
mod pools;
mod schema;
mod storage;
mod validate;

pub mod cidr;
pub mod names;
pub mod presets;
pub mod versions;

use std::path::Path;
use std::sync::Arc;

use toml::de::DeTable;

pub use error::{BlueprintError, Problem, Span};
pub use model::{
    ArtifactRegistry, AuthorizedNetwork, Blueprint, Bucket, Capacity, Cluster, DriverMode, Filestore,
    FilestoreTier, GpuPool, HostMaintenance, Kueue, ManifestSource, Network, Placement, ReleaseChannel,
    RepositoryFormat, Software, StackVersions, StateBackend, StorageClass, Summary, SystemPool,
};
pub use presets::{GpuDirect, MachineFamily};
pub use versions::{GkeVersion, VersionSpec};

use error::{Finding, Findings};

/// Reads and validates the blueprint at `path`.
pub fn load(path: &Path) -> Result<Blueprint, BlueprintError> {
    let text = std::fs::read_to_string(path)
        .map_err(|source| BlueprintError::Read { path: path.to_path_buf(), source })?;
    parse(&text, &path.display().to_string())
}

/// Validates blueprint `text`; `path_for_messages` names the file in diagnostics.
pub fn parse(text: &str, path_for_messages: &str) -> Result<Blueprint, BlueprintError> {
    check(text).map_err(|findings| {
        let shared: Arc<str> = Arc::from(text);
        let mut findings = findings.0;
        findings.sort_by_key(|finding| (finding.span.start, finding.span.end));
        findings.dedup();
        BlueprintError::Invalid {
            file: path_for_messages.to_string(),
            problems: findings
                .into_iter()
                .map(|finding| Problem::from_finding(finding, path_for_messages, &shared))
                .collect(),
        }
    })
}

fn check(text: &str) -> Result<Blueprint, Findings> {
    let mut findings = Findings::default();
    let (document, syntax_errors) = DeTable::parse_recoverable(text);
    if !syntax_errors.is_empty() {
        // A recovered tree after a syntax error produces confusing follow-on problems (missing
        // keys that are really just unparsed); report the syntax alone.
        for error in syntax_errors {
            let span = error.span().unwrap_or(0..0);
            findings.push(
                Finding::new(span, format!("Invalid TOML: {}", error.message().trim_end_matches('.')), "here")
                    .help("fix the TOML syntax first; the blueprint's rules are checked once it parses"),
            );
        }
        return Err(findings);
    }
    let root = decode::Table::root(document.get_ref());
    let raw = schema::decode(&root, &mut findings);
    validate::validate(&raw, findings)
}

#[cfg(test)]
pub(crate) mod testing;
