//! The simulator's modules import each other in one direction (`sim/src/lib.rs`, "Layers"),
//! checked on the source: no import cycle among the top-level modules of `sim/src/`.
//!
//! A module's imports are the `crate::<module>` paths in its code (comments are not code), with
//! `use crate::{a, b::c}` groups expanded, also when they span lines; tests inside a module count
//! as its code. The checker follows a3ctl's (`tests/it/layers.rs`; the two crates share no test
//! code), reading whole files so that a group rustfmt wrapped is not missed.

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

/// The code of a file: each line up to its `//` (doc comments included), lines kept.
fn code_of(text: &str) -> String {
    text.lines()
        .map(|line| line.find("//").map_or(line, |at| &line[..at]))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The top-level module names `code` imports through `crate::`, each with the line (from 1) of
/// its `crate::`.
fn imported(code: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    for (at, _) in code.match_indices("crate::") {
        let line = code[..at].matches('\n').count() + 1;
        let rest = &code[at + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            // Names at depth 1 of the group, each the first segment of a path.
            let mut depth = 1;
            let mut expect_name = true;
            let mut name = String::new();
            for c in group.chars() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 1 => break,
                    '}' => depth -= 1,
                    ',' if depth == 1 => {
                        if !name.is_empty() {
                            out.push((line, std::mem::take(&mut name)));
                        }
                        expect_name = true;
                    }
                    c if depth == 1 && expect_name && (c.is_alphanumeric() || c == '_') => {
                        name.push(c)
                    }
                    _ if depth == 1 && expect_name && !name.is_empty() => {
                        out.push((line, std::mem::take(&mut name)));
                        expect_name = false;
                    }
                    _ => {}
                }
            }
            if !name.is_empty() {
                out.push((line, name));
            }
        } else {
            let name: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            if !name.is_empty() {
                out.push((line, name));
            }
        }
    }
    out
}

/// The top-level module a file of `src` belongs to (`kube` for `src/kube/controllers/mod.rs`).
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
    imports_of(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"))
}

/// The import graph of the top-level modules of `src` (`lib.rs` and `main.rs` are the crate's
/// roots, not modules: they are left out).
fn imports_of(src: &Path) -> Imports {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    files.sort();
    let modules: BTreeSet<String> = files
        .iter()
        .map(|f| module_of(src, f))
        .filter(|m| m != "lib" && m != "main")
        .collect();
    let mut graph = Imports::new();
    for file in &files {
        let module = module_of(src, file);
        if !modules.contains(&module) {
            continue;
        }
        let text = std::fs::read_to_string(file).expect("readable");
        for (line, target) in imported(&code_of(&text)) {
            if target != module && modules.contains(&target) {
                let place = format!("{}:{line}", file.strip_prefix(src).unwrap().display());
                graph
                    .entry(module.clone())
                    .or_default()
                    .entry(target)
                    .or_insert(place);
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
                found.insert(path.clone());
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

/// A cycle and where each of its imports is.
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
    assert!(
        graph.len() > 20,
        "the simulator's modules are read: {:?}",
        graph.keys()
    );
    let found = cycles(&graph);
    let text: Vec<String> = found.iter().map(|c| describe(&graph, c)).collect();
    assert!(
        found.is_empty(),
        "{} import cycles:\n  {}",
        found.len(),
        text.join("\n  ")
    );
}

#[test]
fn the_server_is_on_top_and_the_state_at_the_bottom() {
    let graph = imports();
    let importing = |target: &str| -> Vec<String> {
        graph
            .iter()
            .filter_map(|(from, to)| to.get(target).map(|place| format!("{from} at {place}")))
            .collect()
    };
    assert_eq!(
        importing("server"),
        Vec::<String>::new(),
        "nothing imports the server"
    );
    let registry_users: Vec<String> = importing("apis")
        .into_iter()
        .filter(|user| !user.starts_with("server at "))
        .collect();
    assert_eq!(
        registry_users,
        Vec::<String>::new(),
        "only the server imports the registry"
    );
    let apis = [
        "compute",
        "container",
        "filestore",
        "artifactregistry",
        "storage",
        "serviceusage",
        "cloudquotas",
        "iam",
        "resourcemanager",
        "releases",
        "admin",
        "kube",
    ];
    for low in ["state", "config", "world", "shared"] {
        let wrong: Vec<&String> = graph
            .get(low)
            .into_iter()
            .flat_map(|to| to.keys())
            .filter(|m| apis.contains(&m.as_str()))
            .collect();
        assert!(wrong.is_empty(), "{low} imports APIs: {wrong:?}");
    }
}

#[test]
fn the_checker_sees_imports_and_cycles() {
    let names =
        |code: &str| -> Vec<String> { imported(code).into_iter().map(|(_, n)| n).collect() };
    assert_eq!(
        names("use crate::{kube::{A, B}, world, shared::Ctx};"),
        ["kube", "world", "shared"]
    );
    // A group rustfmt wrapped over lines.
    assert_eq!(
        imported("use crate::{\n    compute,\n    container::Cluster,\n};"),
        [(1, "compute".to_string()), (1, "container".to_string())]
    );
    assert_eq!(
        imported("fn f() {\n    crate::compute::Kind(x)\n}"),
        [(2, "compute".to_string())]
    );
    assert_eq!(code_of("let a = 1; // crate::server"), "let a = 1; ");
    let mut graph = Imports::new();
    for (a, b) in [("a", "b"), ("b", "c"), ("c", "a"), ("c", "d")] {
        graph
            .entry(a.into())
            .or_default()
            .insert(b.into(), "x".into());
    }
    assert_eq!(cycles(&graph), vec![vec!["a", "b", "c"]]);
}

#[test]
fn the_checker_finds_a_cycle_planted_in_a_tree() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let src = dir.path();
    std::fs::create_dir_all(src.join("low/inner")).expect("directories");
    let files = [
        ("lib.rs", "pub mod low; pub mod high; pub mod top;"),
        ("low/mod.rs", "pub mod inner;"),
        // A test deep inside `low` that reaches up, in a wrapped group: an import like any other.
        ("low/inner/tests.rs", "use crate::{\n    top::start,\n};"),
        (
            "high.rs",
            "use crate::low::X; // crate::top is only named here",
        ),
        ("top.rs", "use crate::{low::inner, self as me};"),
    ];
    for (path, text) in files {
        std::fs::write(src.join(path), text).expect("write");
    }
    let graph = imports_of(src);
    assert_eq!(graph["high"].keys().collect::<Vec<_>>(), ["low"]);
    let found = cycles(&graph);
    assert_eq!(found, vec![vec!["low", "top"]]);
    assert_eq!(
        describe(&graph, &found[0]),
        "low -> top -> low:\n    low -> top at low/inner/tests.rs:1\n    top -> low at top.rs:1"
    );
}
