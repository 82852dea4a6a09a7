//! The note a plan opens with when resources it would create already exist
//! ([`crate::plan::Existing`]): those that carry this blueprint's mark and the command that takes
//! them over (`plan --adopt`), those of someone else that a create would fail on, and those that
//! could not be looked for.

use super::Printer;
use crate::plan::{Existing, Found};
use crate::resource::{Addr, Kind};
use serde_json::{Value, json};
use std::fmt::Write;

/// Addresses named per kind before the rest of the kind is counted (`-v` names every one).
const SHOWN_PER_KIND: usize = 3;
/// Foreign and unchecked resources listed before the rest is counted (`-v` lists every one).
const SHOWN: usize = 10;

/// `adopt` is the exact command that takes the adoptable resources over
/// (`a3ctl plan --adopt [--sandbox] BLUEPRINT`); `creates` is how many creates the plan holds.
/// Empty when nothing was found and every check could be made.
pub fn render(
    printer: &Printer,
    existing: &Existing,
    blueprint: &str,
    creates: usize,
    adopt: &str,
    verbose: bool,
) -> String {
    let mut out = String::new();
    if !existing.adoptable.is_empty() {
        let n = existing.adoptable.len();
        let _ = writeln!(
            out,
            "{} {} this plan would create already {} and {} this blueprint's mark ({}={blueprint}): the state that recorded {} is probably lost.",
            printer.bold("Note:"),
            count(n, "resource", "resources"),
            if n == 1 { "exists" } else { "exist" },
            if n == 1 { "carries" } else { "carry" },
            crate::resource::spec::OWNERSHIP_LABEL,
            if n == 1 { "it" } else { "them" },
        );
        list_by_kind(&mut out, &existing.adoptable, verbose);
        let _ = writeln!(
            out,
            "  To take {} over instead of creating {}, run:\n    {adopt}",
            if n == 1 { "it" } else { "them" },
            if n == 1 { "it" } else { "them" },
        );
        let _ = writeln!(
            out,
            "  The plan below, its preflight's quota needs included, assumes creating all {creates} resource(s).\n"
        );
    }
    if !existing.foreign.is_empty() {
        let n = existing.foreign.len();
        let _ = writeln!(
            out,
            "{} {} this plan would create already {} under the blueprint's {} but {} not this blueprint's, so creating {} will fail:",
            printer.bold("Note:"),
            count(n, "resource", "resources"),
            if n == 1 { "exists" } else { "exist" },
            if n == 1 { "name" } else { "names" },
            if n == 1 { "is" } else { "are" },
            if n == 1 { "it" } else { "them" },
        );
        let lines: Vec<String> = existing
            .foreign
            .iter()
            .map(|f| {
                let whose = match &f.owner {
                    Some(owner) => format!("marked for blueprint `{owner}`"),
                    None => "no a3ctl mark".to_string(),
                };
                format!("{} ({}): {whose}", f.addr, f.id)
            })
            .collect();
        list(&mut out, &lines, verbose);
        let _ = writeln!(
            out,
            "  They belong to something else: give this blueprint another `name`, or move them out of the way.\n"
        );
    }
    if !existing.unchecked.is_empty() {
        let n = existing.unchecked.len();
        let _ = writeln!(
            out,
            "{} could not check whether {} this plan would create already {}:",
            printer.bold("Warning:"),
            count(n, "resource", "resources"),
            if n == 1 { "exists" } else { "exist" },
        );
        let lines: Vec<String> = existing
            .unchecked
            .iter()
            .map(|u| format!("{} ({}): {}", u.addr, u.id, u.error))
            .collect();
        list(&mut out, &lines, verbose);
        let _ = writeln!(
            out,
            "  They are planned as creates; if state was lost, `a3ctl plan --adopt` looks for them again.\n"
        );
    }
    out
}

/// One line, for `-q`: the count and the command; empty when nothing can be adopted.
pub fn brief(existing: &Existing, adopt: &str) -> String {
    match existing.adoptable.len() {
        0 => String::new(),
        n => format!(
            "{} of the resources to add already exist with this blueprint's mark: run `{adopt}`\n",
            n
        ),
    }
}

/// The JSON form: each list with addresses and ids, plus the command.
pub fn json(existing: &Existing, adopt: &str) -> Value {
    let found = |list: &[Found]| {
        list.iter()
            .map(|f| json!({"address": f.addr.to_string(), "id": f.id, "owner": f.owner}))
            .collect::<Vec<_>>()
    };
    json!({
        "adoptable": found(&existing.adoptable),
        "foreign": found(&existing.foreign),
        "unchecked": existing.unchecked.iter().map(|u| json!({
            "address": u.addr.to_string(),
            "id": u.id,
            "error": u.error,
        })).collect::<Vec<_>>(),
        "adopt_command": if existing.adoptable.is_empty() { Value::Null } else { json!(adopt) },
    })
}

fn count(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// A kind as a noun: `node pool`/`node pools`, `Kubernetes object`/`Kubernetes objects`.
fn noun(kind: Kind, n: usize) -> String {
    let one = match kind {
        Kind::Kubernetes => "Kubernetes object".to_string(),
        Kind::IamMember => "IAM member".to_string(),
        _ => kind.as_str().replace('_', " "),
    };
    if n == 1 {
        return one;
    }
    match one.strip_suffix('y') {
        Some(stem) => format!("{stem}ies"),
        None => format!("{one}s"),
    }
}

/// Folded: per kind (in plan order), the count and a few addresses; `verbose`: every address
/// with its id.
fn list_by_kind(out: &mut String, found: &[Found], verbose: bool) {
    if verbose {
        for f in found {
            let _ = writeln!(out, "  {} ({})", f.addr, f.id);
        }
        return;
    }
    let mut kinds: Vec<(Kind, Vec<&Addr>)> = Vec::new();
    for f in found {
        match kinds.iter_mut().find(|(k, _)| *k == f.addr.kind) {
            Some((_, addrs)) => addrs.push(&f.addr),
            None => kinds.push((f.addr.kind, vec![&f.addr])),
        }
    }
    for (kind, addrs) in &kinds {
        let mut names: Vec<String> = addrs
            .iter()
            .take(SHOWN_PER_KIND)
            .map(|a| a.to_string())
            .collect();
        if addrs.len() > SHOWN_PER_KIND {
            names.push(format!("and {} more", addrs.len() - SHOWN_PER_KIND));
        }
        let _ = writeln!(
            out,
            "  {} {}: {}",
            addrs.len(),
            noun(*kind, addrs.len()),
            names.join(", ")
        );
    }
    if kinds.iter().any(|(_, addrs)| addrs.len() > SHOWN_PER_KIND) {
        let _ = writeln!(out, "  (`--verbose` lists each with its id)");
    }
}

fn list(out: &mut String, lines: &[String], verbose: bool) {
    let shown = if verbose { lines.len() } else { SHOWN };
    for line in lines.iter().take(shown) {
        let _ = writeln!(out, "  {line}");
    }
    if lines.len() > shown {
        let _ = writeln!(
            out,
            "  and {} more (`--verbose` lists each)",
            lines.len() - shown
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::Unchecked;

    fn found(kind: Kind, name: &str, owner: Option<&str>) -> Found {
        Found {
            addr: Addr::new(kind, name),
            id: format!("id/{name}"),
            owner: owner.map(str::to_string),
        }
    }

    fn printer() -> Printer {
        Printer {
            color: false,
            bars: false,
            quiet: false,
        }
    }

    #[test]
    fn adoptable_resources_are_counted_per_kind_and_the_command_given() {
        let mut existing = Existing::default();
        for i in 1..=5 {
            existing
                .adoptable
                .push(found(Kind::Network, &format!("gpu-{i}"), Some("bp")));
        }
        existing
            .adoptable
            .push(found(Kind::NodePool, "system", Some("bp")));
        let text = render(
            &printer(),
            &existing,
            "bp",
            9,
            "a3ctl plan --adopt --sandbox b.toml",
            false,
        );
        assert!(text.starts_with("Note: 6 resources this plan would create already exist and carry this blueprint's mark (a3ctl-blueprint=bp)"), "{text}");
        assert!(
            text.contains(
                "  5 networks: network.gpu-1, network.gpu-2, network.gpu-3, and 2 more\n"
            ),
            "{text}"
        );
        assert!(text.contains("  1 node pool: node_pool.system\n"), "{text}");
        assert!(text.contains("`--verbose` lists each"), "{text}");
        assert!(
            text.contains("    a3ctl plan --adopt --sandbox b.toml\n"),
            "{text}"
        );
        assert!(
            text.contains("assumes creating all 9 resource(s)"),
            "{text}"
        );
        let all = render(&printer(), &existing, "bp", 9, "x", true);
        assert!(all.contains("  network.gpu-5 (id/gpu-5)\n"), "{all}");
        assert_eq!(
            brief(&existing, "x"),
            "6 of the resources to add already exist with this blueprint's mark: run `x`\n"
        );
    }

    #[test]
    fn foreign_and_unchecked_resources_are_named_without_the_adopt_command() {
        let existing = Existing {
            adoptable: vec![],
            foreign: vec![
                found(Kind::Network, "primary", None),
                found(Kind::Bucket, "ckpt", Some("other")),
            ],
            unchecked: vec![Unchecked {
                addr: Addr::new(Kind::Cluster, "main"),
                id: "id/main".into(),
                error: "403 PERMISSION_DENIED: no".into(),
            }],
        };
        let text = render(&printer(), &existing, "bp", 3, "ADOPT", false);
        assert!(!text.contains("ADOPT"), "{text}");
        assert!(
            text.contains("network.primary (id/primary): no a3ctl mark"),
            "{text}"
        );
        assert!(
            text.contains("bucket.ckpt (id/ckpt): marked for blueprint `other`"),
            "{text}"
        );
        assert!(
            text.contains("could not check whether 1 resource this plan would create already exists:\n  cluster.main (id/main): 403 PERMISSION_DENIED: no"),
            "{text}"
        );
        assert_eq!(brief(&existing, "ADOPT"), "");
        assert_eq!(json(&existing, "ADOPT")["adopt_command"], Value::Null);
    }
}
