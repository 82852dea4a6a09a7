//! What the user declares: the TOML blueprint, its rules, and the validated [`Blueprint`].
//!
//! A blueprint states intent (project, location, machine family, node counts, storage, add-ons)
//! and never lists resources; the resource graph is derived from it elsewhere. Loading goes
//! through four steps, each in its own file:
//!
//! 1. TOML syntax, keeping spans (`toml::de::DeTable`), all syntax errors at once;
//! 2. `schema.rs`: known keys and their TOML types (`decode.rs` does the spanned reading);
//! 3. `validate.rs` with `pools.rs`, `network.rs`, `cluster.rs`, `storage.rs`, `software.rs`
//!    and `state.rs`: every rule and default, using [`names`], [`cidr`], [`versions`] and the
//!    facts in [`presets`];
//! 4. the plain model (`model.rs`: [`Blueprint`] and its parts), returned by [`load`] and
//!    [`parse`].
//!
//! Every problem is reported, each with file, line, column, the offending span and a hint, as a
//! [`BlueprintError::Invalid`] whose [`Problem`]s are miette diagnostics. Nothing here touches
//! the network; reading the file is the only I/O.

mod accounts;
mod cluster;
mod decode;
mod error;
mod lint;
mod maintenance;
mod model;
mod network;
mod pools;
mod priorities;
mod queues;
mod schema;
pub mod software;
mod state;
mod storage;
mod validate;

pub mod cidr;
pub mod families;
pub mod names;
pub mod presets;
pub mod versions;

use std::path::Path;
use std::sync::Arc;

use toml::de::DeTable;

pub(crate) use decode::did_you_mean;
pub use error::{BlueprintError, Problem, Span};
pub use families::{GpuDirect, MachineFamily, NetworkMode};
pub use lint::warnings;
pub use model::{
    ArtifactRegistry, AuthorizedNetwork, BlueGreen, Blueprint, Bucket, Capacity, Cluster,
    DriverMode, ExclusionScope, Filestore, FilestoreTier, GpuPool, Identity, JobSet, Kueue,
    Maintenance, MaintenanceExclusion, MaintenanceWindow, ManifestSource, Network, NodeAccount,
    Placement, Priority, Queue, ReleaseChannel, RepositoryFormat, Software, StackVersions,
    StateBackend, StorageClass, Summary, SystemPool, Upgrade, UpgradeStrategy, Workload,
};
pub use versions::{GkeVersion, VersionSpec};

use error::{Finding, Findings};

/// The top-level keys and tables of a blueprint, in the documented order.
pub(crate) use schema::ROOT_KEYS;

/// Reads and validates the blueprint at `path`.
///
/// Only a regular file of at most [`crate::files::BLUEPRINT`]'s cap (1 MiB) is read; a missing
/// file, a directory, a FIFO, a device, a symbolic link loop or a file that is too large or not
/// UTF-8 is a [`BlueprintError::Read`] that says which.
pub fn load(path: &Path) -> Result<Blueprint, BlueprintError> {
    let text = crate::files::read_to_string(path, crate::files::BLUEPRINT).map_err(|source| {
        BlueprintError::Read {
            path: path.to_path_buf(),
            source,
        }
    })?;
    parse(&text, &path.display().to_string())
}

/// [`load`], with the blueprint's [`warnings`] (`sandbox`: for the built-in simulator).
pub fn load_with_warnings(
    path: &Path,
    sandbox: bool,
) -> Result<(Blueprint, Vec<Problem>), BlueprintError> {
    let text = crate::files::read_to_string(path, crate::files::BLUEPRINT).map_err(|source| {
        BlueprintError::Read {
            path: path.to_path_buf(),
            source,
        }
    })?;
    let name = path.display().to_string();
    let blueprint = parse(&text, &name)?;
    Ok((blueprint, warnings(&text, &name, sandbox)))
}

/// Validates blueprint `text`; `path_for_messages` names the file in diagnostics.
///
/// Linear in the size of the text and the number of problems: the problems are sorted once and
/// located in one pass ([`error::LineCursor`]).
pub fn parse(text: &str, path_for_messages: &str) -> Result<Blueprint, BlueprintError> {
    check(text).map_err(|findings| {
        let source = error::Source::new(path_for_messages, Arc::from(text));
        let mut findings = findings.0;
        findings.sort_by_key(|finding| (finding.span.start, finding.span.end));
        findings.dedup();
        let mut cursor = error::LineCursor::new(text);
        BlueprintError::Invalid {
            file: path_for_messages.to_string(),
            problems: findings
                .into_iter()
                .map(|finding| {
                    let at = cursor.advance(finding.span.start);
                    Problem::from_finding(finding, &source, at)
                })
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
                Finding::new(
                    span,
                    format!("Invalid TOML: {}", error.message().trim_end_matches('.')),
                    "here",
                )
                .help(
                    "fix the TOML syntax first; the blueprint's rules are checked once it parses",
                ),
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

#[cfg(test)]
mod tests {
    use super::testing::problems;
    use super::*;

    fn shipped(name: &str) -> Blueprint {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("blueprints")
            .join(name);
        match load(&path) {
            Ok(blueprint) => blueprint,
            Err(error) => panic!("{name}: {error}: {:#?}", error.problems()),
        }
    }

    #[test]
    fn shipped_blueprints_validate() {
        let high = shipped("a3-high.toml");
        assert_eq!(
            (
                high.family,
                high.gpu_pools[0].nodes,
                high.network.gpu_subnets.len()
            ),
            (MachineFamily::A3High, 4, 4)
        );
        let mega = shipped("a3-mega.toml");
        assert_eq!(
            (
                mega.family,
                mega.gpu_pools[0].nodes,
                mega.network.gpu_subnets.len()
            ),
            (MachineFamily::A3Mega, 32, 8)
        );
        assert_eq!(mega.gpu_pools[0].placement, Placement::Compact);
        assert!(matches!(
            mega.gpu_pools[0].capacity,
            Capacity::Reservation { .. }
        ));
        assert!(
            mega.filestore.is_some()
                && mega.buckets.len() == 1
                && mega.artifact_registries.len() == 1
        );
        assert!(mega.software.kueue.enabled);
        assert!(mega.software.jobset.enabled);
        let minimal = shipped("minimal.toml");
        assert_eq!(minimal.summary().gpus, 8);
    }

    #[test]
    fn minimal_blueprint_has_no_optional_key() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("blueprints/minimal.toml");
        let text = std::fs::read_to_string(path).expect("shipped");
        let keys: Vec<&str> = text
            .lines()
            .filter(|line| !line.starts_with('#') && line.contains(" = "))
            .filter_map(|line| line.split(" = ").next())
            .collect();
        assert_eq!(
            keys,
            ["name", "project", "region", "zone", "machine_type", "nodes"]
        );
    }

    /// Writing every default out explicitly gives the same model as leaving it out.
    #[test]
    fn defaults_round_trip() {
        let minimal = shipped("minimal.toml");
        let explicit = r#"
name = "a3mini"
project = "my-project"
region = "us-central1"
zone = "us-central1-a"

[network]
primary_subnet = "10.0.0.0/20"
pods = "10.4.0.0/14"
services = "10.0.32.0/20"
gpu_range = "192.168.0.0/16"
gpu_subnet_prefix = 24
gpu_subnets = ["192.168.0.0/24", "192.168.1.0/24", "192.168.2.0/24", "192.168.3.0/24",
               "192.168.4.0/24", "192.168.5.0/24", "192.168.6.0/24", "192.168.7.0/24"]
gpu_mtu = 8244
primary_mtu = 8244
nat = true
master_ipv4_cidr = "172.16.0.32/28"

[cluster]
release_channel = "regular"
version = "default"
private_nodes = true
authorized_networks = []
deletion_protection = true
prevent_destroy = false

[system_pool]
name = "system"
machine_type = "e2-standard-4"
nodes = 2

[[gpu_pool]]
name = "gpu-0"
machine_type = "a3-megagpu-8g"
zones = ["us-central1-a"]
nodes = 1
capacity = "on-demand"
placement = "compact"
prevent_destroy = false

[software]
driver = "default"
nccl = true
stack = "2026-01"
force_stack = false
network_prefix = "vpc"

[software.kueue]
enabled = true
version = "v0.17.1"
manifest = "https://github.com/kubernetes-sigs/kueue/releases/download/v0.17.1/manifests.yaml"
sha256 = ""
queue = "a3-queue"

[software.jobset]
enabled = true
version = "v0.12.0"
manifest = "https://github.com/kubernetes-sigs/jobset/releases/download/v0.12.0/manifests.yaml"
sha256 = ""

[state]
backend = "local"
path = "state/a3mini.a3state.json"
"#;
        let mut explicit =
            parse(explicit, "explicit.toml").unwrap_or_else(|e| panic!("{:#?}", e.problems()));
        // Absent means on; written out, it is what the blueprint said.
        assert_eq!(explicit.cluster.deletion_protection, Some(true));
        assert!(minimal.cluster.deletion_protection());
        explicit.cluster.deletion_protection = None;
        assert_eq!(minimal, explicit);
        assert_eq!(minimal.software.network_names(2), ["vpc1", "vpc2"]);
        assert_eq!(minimal.software.stack.plugin_tag, "v1.0.15");
    }

    #[test]
    fn syntax_errors_are_located() {
        let found = problems("name = \"a3mega\"\nproject = \n");
        assert!(!found.is_empty());
        assert!(found[0].message.starts_with("Invalid TOML"), "{found:?}");
        assert_eq!(found[0].line, 2);
        let found = problems("[network]\nnat = true\n[network]\n");
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].line, 3);
    }

    /// No input makes validation panic: every prefix of a real blueprint, and byte garbage.
    #[test]
    fn garbage_and_truncated_input_never_panics() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("blueprints/a3-mega.toml");
        let text = std::fs::read_to_string(path).expect("shipped");
        for end in (0..text.len()).filter(|end| text.is_char_boundary(*end)) {
            let _ = parse(&text[..end], "truncated.toml");
        }
        let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
        let alphabet = b"[]{}=\"'.,#\n \t0123456789abcxyz-_/:\\";
        for _ in 0..300 {
            let garbage: String = (0..64)
                .map(|_| {
                    seed ^= seed << 13;
                    seed ^= seed >> 7;
                    seed ^= seed << 17;
                    alphabet[(seed % alphabet.len() as u64) as usize] as char
                })
                .collect();
            let _ = parse(&garbage, "garbage.toml");
        }
        for odd in [
            "\u{feff}",
            "\0",
            "é = 1",
            "name = \"é\"",
            "[[gpu_pool]]\nnodes = 99999999999999999999",
            "a.b.c.d = 1",
        ] {
            let _ = parse(odd, "odd.toml");
        }
    }

    #[test]
    fn missing_file_is_a_read_error() {
        let error = load(Path::new("/nonexistent/a3ctl.toml")).expect_err("no such file");
        assert!(matches!(error, BlueprintError::Read { .. }));
        assert!(error.to_string().contains("/nonexistent/a3ctl.toml"));
    }
}
