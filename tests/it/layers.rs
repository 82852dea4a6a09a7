//! The layering rule of `src/` (docs/architecture.md, "Layers"), checked on the source:
//!
//! - no import cycles among the top-level modules of `src/`;
//! - `resource/` imports none of them (it is the vocabulary everything else shares);
//! - nothing imports `commands/` or `ui/` except `main.rs`, `cli.rs` and those two themselves.
//!
//! A module's imports are the `crate::<module>` paths in its code (comments are not code), with
//! `use crate::{a, b::c}` groups expanded.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Top-level module → (module it imports → first place it does).
type Imports = BTreeMap<String, BTreeMap<String, String>>;

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("readable src") {
        let path = entry.expect("entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The code of a line: everything before `//` (doc comments included).
fn code_of(line: &str) -> &str {
    line.find("//").map_or(line, |at| &line[..at])
}

/// The top-level module names a piece of code imports through `crate::`.
fn imported(code: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = code;
    while let Some(at) = rest.find("crate::") {
        rest = &rest[at + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            // Names at depth 1 of the group, each the first segment of a path.
            let mut depth = 1;
            let mut expect_name = true;
            let mut name = String::new();
            for c in group.chars() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 1 => {
                        if !name.is_empty() {
                            out.push(std::mem::take(&mut name));
                        }
                        depth -= 1;
                    }
                    '}' => depth -= 1,
                    ',' if depth == 1 => {
                        if !name.is_empty() {
                            out.push(std::mem::take(&mut name));
                        }
                        expect_name = true;
                    }
                    c if depth == 1 && expect_name && (c.is_alphanumeric() || c == '_') => {
                        name.push(c)
                    }
                    _ if depth == 1 && expect_name && !name.is_empty() => {
                        out.push(std::mem::take(&mut name));
                        expect_name = false;
                    }
                    _ => {}
                }
                if depth == 0 {
                    break;
                }
            }
            if !name.is_empty() {
                out.push(name);
            }
        } else {
            let name: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            if !name.is_empty() {
                out.push(name);
            }
        }
    }
    out
}

/// The top-level module a file of `src/` belongs to (`cloud` for `src/cloud/gcp/mod.rs`).
fn module_of(src: &Path, file: &Path) -> String {
    let relative = file.strip_prefix(src).expect("under src");
    let first = relative.components().next().expect("a component");
    first
        .as_os_str()
        .to_string_lossy()
        .trim_end_matches(".rs")
        .to_string()
}

fn imports() -> Imports {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    files.sort();
    let modules: BTreeSet<String> = files.iter().map(|f| module_of(&src, f)).collect();
    let mut graph = Imports::new();
    for file in &files {
        let module = module_of(&src, file);
        let text = std::fs::read_to_string(file).expect("readable");
        for (n, line) in text.lines().enumerate() {
            for target in imported(code_of(line)) {
                if target != module && modules.contains(&target) {
                    let place = format!("{}:{}", file.strip_prefix(&src).unwrap().display(), n + 1);
                    graph
                        .entry(module.clone())
                        .or_default()
                        .entry(target)
                        .or_insert(place);
                }
            }
        }
    }
    graph
}

/// Every cycle's modules, found by depth-first search (each reported once, by its smallest
/// member).
fn cycles(graph: &Imports) -> Vec<Vec<String>> {
    fn walk(
        graph: &Imports,
        start: &str,
        at: &str,
        path: &mut Vec<String>,
        found: &mut BTreeSet<Vec<String>>,
    ) {
        for next in graph.get(at).into_iter().flat_map(|m| m.keys()) {
            if next == start {
                let mut cycle = path.clone();
                let smallest = cycle.iter().min().unwrap().clone();
                let at = cycle.iter().position(|m| *m == smallest).unwrap();
                cycle.rotate_left(at);
                found.insert(cycle);
            } else if !path.contains(next) && next.as_str() > start {
                path.push(next.clone());
                walk(graph, start, next, path, found);
                path.pop();
            }
        }
    }
    let mut found = BTreeSet::new();
    for start in graph.keys() {
        walk(graph, start, start, &mut vec![start.clone()], &mut found);
    }
    found.into_iter().collect()
}

fn describe(graph: &Imports, cycle: &[String]) -> String {
    let mut text = cycle.join(" -> ");
    text.push_str(&format!(" -> {}:", cycle[0]));
    for (i, from) in cycle.iter().enumerate() {
        let to = &cycle[(i + 1) % cycle.len()];
        text.push_str(&format!("\n    {from} -> {to} at {}", graph[from][to]));
    }
    text
}

#[test]
fn top_level_modules_have_no_import_cycles() {
    let graph = imports();
    let found = cycles(&graph);
    let text: Vec<String> = found.iter().map(|c| describe(&graph, c)).collect();
    assert!(found.is_empty(), "import cycles:\n  {}", text.join("\n  "));
}

#[test]
fn resource_imports_no_other_module() {
    let graph = imports();
    assert_eq!(graph.get("resource"), None, "resource/ must stand alone");
}

#[test]
fn only_the_command_line_imports_commands_and_ui() {
    let allowed = ["main", "cli", "commands", "ui"];
    let graph = imports();
    let mut wrong = Vec::new();
    for (from, targets) in &graph {
        for (to, place) in targets {
            if (to == "commands" || to == "ui") && !allowed.contains(&from.as_str()) {
                wrong.push(format!("{from} -> {to} at {place}"));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn the_checker_sees_imports_and_cycles() {
    assert_eq!(
        imported("use crate::{cloud::{A, B}, state, plan::Plan};"),
        ["cloud", "state", "plan"]
    );
    assert_eq!(imported("crate::resource::Addr::new(x)"), ["resource"]);
    assert_eq!(code_of("let a = 1; // crate::ui"), "let a = 1; ");
    let mut graph = Imports::new();
    for (a, b) in [("a", "b"), ("b", "c"), ("c", "a"), ("c", "d")] {
        graph
            .entry(a.into())
            .or_default()
            .insert(b.into(), "x".into());
    }
    assert_eq!(cycles(&graph), vec![vec!["a", "b", "c"]]);
}
