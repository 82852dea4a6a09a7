//! The layering rule of `src/` (docs/architecture.md, "Layers"), checked on the source:
//!
//! - no import cycles among the top-level modules of `src/`;
//! - `resource/` imports none of them (it is the vocabulary everything else shares);
//! - nothing imports `commands/` or `ui/` except `main.rs`, `cli.rs` and those two themselves;
//! - each top-level module uses only the external crates its row of [`ALLOWED`] names (outside
//!   its tests: `#[cfg(test)]` items and the files they declare may use any dependency): only
//!   `cloud/` the Google clients, kube-rs and reqwest; only the command line (`commands/`,
//!   `cli.rs`, `main.rs`) the simulator; `resource/`, `graph/` and the rest of the engine neither.
//!   Every dependency in `Cargo.toml` is in some row, so a new one is a decision about who may use
//!   it.
//!
//! Code is a file's text with comments and the insides of string and character literals blanked.
//! A module's imports are the `crate::<module>` paths in its code, with `use crate::{a, b::c}`
//! groups expanded; the external crates it uses, the paths in its code that start with a
//! dependency's name (`serde_json::json!`, `use kube::Api`, `::reqwest::Client`), not those that
//! continue one (`crate::cloud::kube::apply`, `super::kube`).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Top-level module → (module it imports → first place it does).
type Imports = BTreeMap<String, BTreeMap<String, String>>;

/// The shared words every layer may use.
const EVERYWHERE: &[&str] = &["serde", "serde_json", "thiserror"];

/// Top-level module of `src/` → the external crates (beyond [`EVERYWHERE`]) its code may use
/// outside its tests. `name_*` allows every crate whose name starts with `name_`.
const ALLOWED: &[(&str, &[&str])] = &[
    // The vocabulary: data, no I/O. Kubernetes objects as k8s-openapi's and kube-core's types,
    // never a client.
    ("resource", &["chrono", "k8s_openapi", "kube_core"]),
    ("files", &["libc"]),
    ("env_vars", &[]),
    (
        "blueprint",
        &["chrono", "ipnet", "miette", "strsim", "toml"],
    ),
    ("graph", &["k8s_openapi", "kube_core", "petgraph"]),
    (
        "state",
        &["async_trait", "chrono", "parking_lot", "tokio", "uuid"],
    ),
    // The adapters: the only code that talks to Google and to clusters.
    (
        "cloud",
        &[
            "async_trait",
            "base64",
            "chrono",
            "futures_util",
            "google_cloud_*",
            "k8s_openapi",
            "kube",
            "parking_lot",
            "rand",
            "reqwest",
            "rustls",
            "rustls_pki_types",
            "serde_saphyr",
            "sha2",
            "tokio",
            "tokio_util",
            "tracing",
            "uuid",
        ],
    ),
    ("plan", &["futures_util", "strsim", "tokio", "tracing"]),
    (
        "apply",
        &[
            "chrono",
            "futures_util",
            "parking_lot",
            "rand",
            "tokio",
            "tokio_util",
            "tracing",
        ],
    ),
    (
        "verify",
        &["parking_lot", "serde_saphyr", "tokio", "tokio_util"],
    ),
    // The terminal.
    ("ui", &["console", "indicatif", "miette", "parking_lot"]),
    ("logging", &["regex", "tracing", "tracing_subscriber"]),
    // The command line and the sandbox glue: the only code that links the simulator.
    (
        "commands",
        &[
            "a3ctl_sim",
            "base64",
            "clap",
            "clap_complete",
            "clap_mangen",
            "console",
            "dialoguer",
            "ini",
            // The process's TLS provider, installed before any client (`commands::main`).
            "rustls",
            "serde_saphyr",
            "sha2",
            "strsim",
            "tokio",
            "tokio_util",
            "toml",
            "toml_edit",
            "tracing",
            "uuid",
        ],
    ),
    ("cli", &["a3ctl_sim", "clap", "clap_complete"]),
    ("main", &[]),
    ("lib", &[]),
];

/// Uses the rule forbids that are known and not fixed yet: (module, crate, why). Each must still
/// occur (a fixed one is taken off this list).
const KNOWN: &[(&str, &str, &str)] = &[(
    "commands",
    "reqwest",
    "`commands/session.rs` seeds the sandbox's simulator and waits on its operations over raw \
     HTTP (issue 28, \"Thin commands\": through the cloud layer or the world spec)",
)];

/// Dependencies whose library is not named after the package.
const LIBRARY_NAMES: &[(&str, &str)] = &[("rust-ini", "ini")];

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

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// `text` with comments and the insides of string and character literals blanked, one character
/// for one (newlines kept, so lines and offsets still count).
fn code(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let blank = |c: char| if c == '\n' { '\n' } else { ' ' };
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        let before = |back: usize| i.checked_sub(back).map(|at| chars[at]);
        let (before1, before2) = (before(1), before(2));
        if c == '/' && next == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                out.push(' ');
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let mut depth = 0;
            while i < chars.len() {
                let pair = (chars[i], chars.get(i + 1).copied());
                if pair == ('/', Some('*')) {
                    depth += 1;
                    out.push_str("  ");
                    i += 2;
                } else if pair == ('*', Some('/')) {
                    depth -= 1;
                    out.push_str("  ");
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    out.push(blank(chars[i]));
                    i += 1;
                }
            }
        } else if c == 'r'
            && (before1.is_none_or(|b| !is_ident(b))
                || (before1 == Some('b') && before2.is_none_or(|b| !is_ident(b))))
            && {
                let hashes = chars[i + 1..].iter().take_while(|h| **h == '#').count();
                chars.get(i + 1 + hashes) == Some(&'"')
            }
        {
            // A raw string: `r"…"`, `r#"…"#`, `br"…"`.
            let hashes = chars[i + 1..].iter().take_while(|h| **h == '#').count();
            out.push('r');
            out.extend(std::iter::repeat_n('#', hashes));
            out.push('"');
            i += hashes + 2;
            while i < chars.len() {
                let closes = chars[i] == '"'
                    && chars[i + 1..]
                        .iter()
                        .take(hashes)
                        .filter(|h| **h == '#')
                        .count()
                        == hashes;
                if closes {
                    out.push('"');
                    out.extend(std::iter::repeat_n('#', hashes));
                    i += hashes + 1;
                    break;
                }
                out.push(blank(chars[i]));
                i += 1;
            }
        } else if c == '"' {
            out.push('"');
            i += 1;
            while i < chars.len() {
                match chars[i] {
                    '\\' => {
                        out.push(' ');
                        if let Some(&escaped) = chars.get(i + 1) {
                            out.push(blank(escaped));
                        }
                        i += 2;
                    }
                    '"' => {
                        out.push('"');
                        i += 1;
                        break;
                    }
                    other => {
                        out.push(blank(other));
                        i += 1;
                    }
                }
            }
        } else if c == '\'' && next == Some('\\') {
            // An escaped character literal: `'\n'`, `'\''`, `'\u{1F600}'`.
            out.push_str("'  ");
            i += 3;
            while i < chars.len() && chars[i] != '\'' {
                out.push(blank(chars[i]));
                i += 1;
            }
            if i < chars.len() {
                out.push('\'');
                i += 1;
            }
        } else if c == '\'' && chars.get(i + 2) == Some(&'\'') {
            // A character literal: `'{'`; otherwise `'` starts a lifetime.
            out.push('\'');
            out.push(blank(chars[i + 1]));
            out.push('\'');
            i += 3;
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

/// The stretches of `code` (char offsets, end exclusive) that are items under `#[cfg(test)]`,
/// and the modules declared there without a body (`#[cfg(test)] mod tests;`).
fn test_items(code: &[char]) -> (Vec<(usize, usize)>, Vec<String>) {
    const ATTRIBUTE: &str = "#[cfg(test)]";
    let text: String = code.iter().collect();
    let mut spans = Vec::new();
    let mut declared = Vec::new();
    // Char offsets of the attribute (`text` may hold multi-byte characters).
    let starts: Vec<usize> = text
        .match_indices(ATTRIBUTE)
        .map(|(byte, _)| text[..byte].chars().count())
        .collect();
    for start in starts {
        let mut i = start + ATTRIBUTE.chars().count();
        // Further attributes of the same item.
        loop {
            while i < code.len() && code[i].is_whitespace() {
                i += 1;
            }
            if code.get(i) == Some(&'#') && code.get(i + 1) == Some(&'[') {
                let mut depth = 0;
                while i < code.len() {
                    match code[i] {
                        '[' => depth += 1,
                        ']' => {
                            depth -= 1;
                            if depth == 0 {
                                i += 1;
                                break;
                            }
                        }
                        _ => {}
                    }
                    i += 1;
                }
            } else {
                break;
            }
        }
        let item_start = i;
        // The item ends at a `;` outside brackets before any body, or with its body's `}`.
        let (mut parens, mut braces) = (0i32, 0i32);
        let mut end = code.len();
        while i < code.len() {
            match code[i] {
                '(' | '[' => parens += 1,
                ')' | ']' => parens -= 1,
                ';' if parens == 0 && braces == 0 => {
                    end = i + 1;
                    let item: String = code[item_start..i].iter().collect();
                    let words: Vec<&str> = item.split_whitespace().collect();
                    if let [.., "mod", name] = words[..] {
                        declared.push(name.to_string());
                    }
                    break;
                }
                '{' if parens == 0 => braces += 1,
                '}' if parens == 0 => {
                    braces -= 1;
                    if braces == 0 {
                        end = i + 1;
                        break;
                    }
                }
                _ => {}
            }
            i += 1;
        }
        spans.push((start, end));
    }
    (spans, declared)
}

/// Where a use of an external crate is: its crate and the char offset of its name.
fn external_uses(code: &[char], crates: &BTreeSet<String>) -> Vec<(String, usize)> {
    let skip_back = |mut at: usize| {
        while at > 0 && code[at - 1].is_whitespace() {
            at -= 1;
        }
        at
    };
    let mut found = Vec::new();
    let mut i = 0;
    while i < code.len() {
        if !is_ident(code[i]) || (i > 0 && is_ident(code[i - 1])) {
            i += 1;
            continue;
        }
        let start = i;
        while i < code.len() && is_ident(code[i]) {
            i += 1;
        }
        let name: String = code[start..i].iter().collect();
        if !crates.contains(&name) {
            continue;
        }
        let mut after = i;
        while after < code.len() && code[after].is_whitespace() {
            after += 1;
        }
        let rest: String = code[after..(after + 2).min(code.len())].iter().collect();
        let before = skip_back(start);
        let previous =
            |n: usize| -> String { code[before.saturating_sub(n)..before].iter().collect() };
        let starts_a_path = rest == "::"
            || (previous(3) == "use" && (rest.starts_with(';') || rest == "as"))
            || previous(5) == "crate" && previous(12).trim_start().starts_with("extern");
        if !starts_a_path || previous(1) == "." {
            continue;
        }
        let continues = if previous(2) == "::" {
            // `a::name` continues a path, a leading `::name` starts one.
            let ahead = skip_back(before - 2);
            ahead > 0 && (is_ident(code[ahead - 1]) || code[ahead - 1] == '>')
        } else if previous(1) == "{" || previous(1) == "," {
            // Inside `path::{…}` the name continues `path`; inside `use {…}` or a block it starts.
            let mut depth = 0;
            let mut at = before;
            loop {
                if at == 0 {
                    break false;
                }
                at -= 1;
                match code[at] {
                    '}' => depth += 1,
                    '{' if depth == 0 => {
                        let ahead = skip_back(at);
                        break ahead >= 2 && code[ahead - 2] == ':' && code[ahead - 1] == ':';
                    }
                    '{' => depth -= 1,
                    _ => {}
                }
            }
        } else {
            false
        };
        if !continues {
            found.push((name, start));
        }
    }
    found
}

/// One file of `src/`.
struct Source {
    /// Its top-level module (`cloud` for `src/cloud/gcp/mod.rs`).
    module: String,
    /// Its path under `src/`.
    path: PathBuf,
    code: Vec<char>,
    /// The char offsets of its test code.
    tests: Vec<(usize, usize)>,
    /// Modules it declares under `#[cfg(test)]` without a body.
    test_modules: Vec<String>,
    /// The whole file is test code.
    test_file: bool,
}

impl Source {
    fn new(path: &Path, text: &str) -> Source {
        let code: Vec<char> = code(text).chars().collect();
        let (tests, test_modules) = test_items(&code);
        let first = path.components().next().expect("a component");
        Source {
            module: first
                .as_os_str()
                .to_string_lossy()
                .trim_end_matches(".rs")
                .to_string(),
            path: path.to_path_buf(),
            code,
            tests,
            test_modules,
            test_file: false,
        }
    }

    fn is_test(&self, at: usize) -> bool {
        self.test_file || self.tests.iter().any(|(a, b)| (*a..*b).contains(&at))
    }

    /// `path:line` of a char offset.
    fn place(&self, at: usize) -> String {
        let line = self.code[..at].iter().filter(|c| **c == '\n').count() + 1;
        format!("{}:{line}", self.path.display())
    }

    /// (crate, place) of each use of an external crate outside test code.
    fn externals(&self, crates: &BTreeSet<String>) -> Vec<(String, String)> {
        external_uses(&self.code, crates)
            .into_iter()
            .filter(|(_, at)| !self.is_test(*at))
            .map(|(name, at)| (name, self.place(at)))
            .collect()
    }

    /// The directory that holds the files of the modules it declares.
    fn children_dir(&self) -> PathBuf {
        let parent = self.path.parent().unwrap_or(Path::new("")).to_path_buf();
        match self.path.file_stem().and_then(|s| s.to_str()) {
            Some("mod" | "lib" | "main") => parent,
            Some(stem) => parent.join(stem),
            None => parent,
        }
    }
}

/// Every file of `src/`, with the files of `#[cfg(test)]` modules marked as test code.
fn sources() -> Vec<Source> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    files.sort();
    let mut sources: Vec<Source> = files
        .iter()
        .map(|f| {
            let text = std::fs::read_to_string(f).expect("readable");
            Source::new(f.strip_prefix(&src).expect("under src"), &text)
        })
        .collect();
    let test_dirs: Vec<PathBuf> = sources
        .iter()
        .flat_map(|s| {
            let dir = s.children_dir();
            s.test_modules.iter().map(move |m| dir.join(m))
        })
        .collect();
    for source in &mut sources {
        source.test_file = test_dirs
            .iter()
            .any(|dir| source.path == dir.with_extension("rs") || source.path.starts_with(dir));
    }
    sources
}

/// The top-level module names a piece of code imports through `crate::`.
fn imported(code: &str) -> Vec<String> {
    imported_at(code)
        .into_iter()
        .map(|(name, _)| name)
        .collect()
}

/// [`imported`] with the byte offset of each name's `crate::` in `code`. A `use crate::{…}` group
/// may span lines (rustfmt wraps long ones), so this reads the whole code, not a line.
fn imported_at(code: &str) -> Vec<(String, usize)> {
    let mut out = Vec::new();
    let mut rest = code;
    while let Some(at) = rest.find("crate::") {
        let offset = code.len() - rest.len() + at;
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
                            out.push((std::mem::take(&mut name), offset));
                        }
                        depth -= 1;
                    }
                    '}' => depth -= 1,
                    ',' if depth == 1 => {
                        if !name.is_empty() {
                            out.push((std::mem::take(&mut name), offset));
                        }
                        expect_name = true;
                    }
                    c if depth == 1 && expect_name && (c.is_alphanumeric() || c == '_') => {
                        name.push(c)
                    }
                    _ if depth == 1 && expect_name && !name.is_empty() => {
                        out.push((std::mem::take(&mut name), offset));
                        expect_name = false;
                    }
                    _ => {}
                }
                if depth == 0 {
                    break;
                }
            }
            if !name.is_empty() {
                out.push((name, offset));
            }
        } else {
            let name: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            if !name.is_empty() {
                out.push((name, offset));
            }
        }
    }
    out
}

fn imports() -> Imports {
    let sources = sources();
    let modules: BTreeSet<String> = sources.iter().map(|s| s.module.clone()).collect();
    let mut graph = Imports::new();
    for source in &sources {
        let text: String = source.code.iter().collect();
        for (target, at) in imported_at(&text) {
            if target != source.module && modules.contains(&target) {
                let line = text[..at].matches('\n').count() + 1;
                let place = format!("{}:{line}", source.path.display());
                graph
                    .entry(source.module.clone())
                    .or_default()
                    .entry(target)
                    .or_insert(place);
            }
        }
    }
    graph
}

/// The library names of the package's dependencies (`[dependencies]` of `Cargo.toml`).
fn dependencies() -> BTreeSet<String> {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml");
    let text = std::fs::read_to_string(manifest).expect("Cargo.toml");
    let manifest: toml::Table = text.parse().expect("a TOML manifest");
    let dependencies = manifest["dependencies"].as_table().expect("[dependencies]");
    dependencies
        .keys()
        .map(|package| {
            LIBRARY_NAMES
                .iter()
                .find(|(p, _)| p == package)
                .map_or_else(|| package.replace('-', "_"), |(_, l)| l.to_string())
        })
        .collect()
}

/// Whether an allow-list entry (`kube`, `google_cloud_*`) names `name`.
fn names(entry: &str, name: &str) -> bool {
    match entry.strip_suffix('*') {
        Some(prefix) => name.starts_with(prefix),
        None => entry == name,
    }
}

/// Each use of an external crate the rule forbids: (module, crate, place), first place per pair.
fn forbidden(uses: &[(String, String, String)]) -> Vec<(String, String, String)> {
    let mut seen = BTreeSet::new();
    let mut wrong = Vec::new();
    for (module, name, place) in uses {
        let allowed = EVERYWHERE.contains(&name.as_str())
            || ALLOWED
                .iter()
                .find(|(m, _)| m == module)
                .is_some_and(|(_, list)| list.iter().any(|entry| names(entry, name)));
        if !allowed && seen.insert((module.clone(), name.clone())) {
            wrong.push((module.clone(), name.clone(), place.clone()));
        }
    }
    wrong
}

/// (module, crate, place) of every use of an external crate in `src/` outside test code.
fn external_uses_of_src() -> Vec<(String, String, String)> {
    let crates = dependencies();
    sources()
        .iter()
        .flat_map(|s| {
            s.externals(&crates)
                .into_iter()
                .map(|(name, place)| (s.module.clone(), name, place))
        })
        .collect()
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
    // A group rustfmt wrapped over lines, placed where its `crate::` is.
    let wrapped = "fn a() {}\nuse crate::{\n    cloud::{A,\n        B},\n    state,\n};";
    let found = imported_at(wrapped);
    let names: Vec<&str> = found.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["cloud", "state"]);
    assert!(
        found
            .iter()
            .all(|(_, at)| wrapped[..*at].matches('\n').count() == 1)
    );
    assert!(imported(&code("let a = 1; // crate::ui\nlet b = \"crate::ui\";")).is_empty());
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
fn each_layer_uses_only_its_external_crates() {
    let uses = external_uses_of_src();
    let wrong: Vec<String> = forbidden(&uses)
        .into_iter()
        .filter(|(module, name, _)| !KNOWN.iter().any(|(m, n, _)| m == module && n == name))
        .map(|(module, name, place)| format!("{module} uses {name} at {place}"))
        .collect();
    assert!(
        wrong.is_empty(),
        "external crates outside their layers (tests/it/layers.rs ALLOWED):\n  {}",
        wrong.join("\n  ")
    );
    let modules: BTreeSet<&str> = uses.iter().map(|(m, _, _)| m.as_str()).collect();
    for module in modules {
        assert!(
            ALLOWED.iter().any(|(m, _)| *m == module),
            "`{module}` has no row in ALLOWED"
        );
    }
    for (module, name, why) in KNOWN {
        assert!(
            uses.iter().any(|(m, n, _)| m == module && n == name),
            "{module} no longer uses {name}: take it off KNOWN ({why})"
        );
    }
}

#[test]
fn every_dependency_has_a_layer_and_every_allowed_crate_is_a_dependency() {
    let dependencies = dependencies();
    for (package, library) in LIBRARY_NAMES {
        assert!(
            dependencies.contains(*library),
            "{package} is no dependency"
        );
    }
    let entries: Vec<&str> = EVERYWHERE
        .iter()
        .chain(ALLOWED.iter().flat_map(|(_, list)| list.iter()))
        .copied()
        .collect();
    for name in &dependencies {
        assert!(
            entries.iter().any(|entry| names(entry, name)),
            "the dependency `{name}` is in no layer's row of ALLOWED"
        );
    }
    for entry in entries {
        assert!(
            dependencies.iter().any(|name| names(entry, name)),
            "`{entry}` in ALLOWED names no dependency"
        );
    }
}

#[test]
fn the_checker_sees_external_crates_and_only_outside_tests() {
    let crates: BTreeSet<String> = ["kube", "serde", "google_cloud_container_v1", "a3ctl_sim"]
        .map(String::from)
        .into();
    let planted = r##"//! A vocabulary file with `kube::Api` in its docs.
use serde::Serialize;
use crate::cloud::{kube::apply, gcp};
use {kube::api::Api, std::fmt};
pub fn f(x: &str) -> String {
    let s = "kube::Api"; let c = '{'; let r = r#"a3ctl_sim::start"#;
    super::kube::thing(); x.kube::<u8>();
    google_cloud_container_v1::model::Cluster::default();
    ::a3ctl_sim::start()
}
#[cfg(test)]
#[allow(dead_code)]
mod tests {
    use a3ctl_sim::latency;
    fn g() -> [u8; 2] { let _ = "}"; [0; 2] }
}
#[cfg(test)]
mod more;
"##;
    let source = Source::new(Path::new("resource/kinds/planted.rs"), planted);
    let found = source.externals(&crates);
    let names: Vec<&str> = found.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        ["serde", "kube", "google_cloud_container_v1", "a3ctl_sim"],
        "{found:?}"
    );
    assert_eq!(found[1].1, "resource/kinds/planted.rs:4");
    assert_eq!(source.test_modules, ["more"]);
    assert_eq!(source.children_dir(), Path::new("resource/kinds/planted"));
    // The rule fails on the planted uses in the vocabulary, in the adapters only on the
    // simulator, in the command line only on the clients.
    let forbidden_in = |module: &str| -> Vec<String> {
        let uses: Vec<(String, String, String)> = found
            .iter()
            .map(|(n, p)| (module.to_string(), n.clone(), p.clone()))
            .collect();
        forbidden(&uses).into_iter().map(|(_, n, _)| n).collect()
    };
    assert_eq!(
        forbidden_in("resource"),
        ["kube", "google_cloud_container_v1", "a3ctl_sim"]
    );
    assert_eq!(forbidden_in("cloud"), ["a3ctl_sim"]);
    let in_commands = forbidden_in("commands");
    assert_eq!(in_commands, ["kube", "google_cloud_container_v1"]);
}
