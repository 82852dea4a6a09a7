//! The simulator's guesses: every `// GUESS(<id>): <line>` marker in `sim/src` is listed under
//! docs/simulator.md's "Guesses" as `` - `<id>`: <line> ``, and every listed guess has its marker.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

const MARKER: &str = "// GUESS(";

/// `<id>` → `<line>` of one `GUESS(<id>): <line>` text after the marker's `// GUESS(`; `Err`
/// says what is malformed.
fn parse_marker(rest: &str) -> Result<(String, String), String> {
    let (id, text) = rest
        .split_once("): ")
        .ok_or_else(|| format!("no `): ` after the id in `{rest}`"))?;
    if id.is_empty()
        || !id
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
    {
        return Err(format!("id `{id}` is not lowercase words joined by `-`"));
    }
    if text.trim().is_empty() {
        return Err(format!("guess `{id}` says nothing"));
    }
    Ok((id.to_string(), text.trim().to_string()))
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("read {}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// Every marker in the files, each id once.
fn markers(files: &[(String, String)]) -> Result<BTreeMap<String, String>, String> {
    let mut found = BTreeMap::new();
    for (name, text) in files {
        for (n, line) in text.lines().enumerate() {
            let Some(at) = line.find(MARKER) else {
                continue;
            };
            let (id, guess) = parse_marker(&line[at + MARKER.len()..])
                .map_err(|e| format!("{name}:{}: {e}", n + 1))?;
            if found.insert(id.clone(), guess).is_some() {
                return Err(format!("{name}:{}: guess `{id}` marked twice", n + 1));
            }
        }
    }
    Ok(found)
}

/// The list under `## Guesses` in the docs.
fn listed(doc: &str) -> Result<BTreeMap<String, String>, String> {
    let section = doc
        .split("\n## Guesses\n")
        .nth(1)
        .ok_or("no `## Guesses` section")?;
    let section = section.split("\n## ").next().unwrap_or(section);
    let mut out = BTreeMap::new();
    for line in section.lines().filter(|l| l.starts_with("- `")) {
        let rest = &line["- `".len()..];
        let (id, text) = rest
            .split_once("`: ")
            .ok_or_else(|| format!("malformed entry `{line}`"))?;
        if out
            .insert(id.to_string(), text.trim().to_string())
            .is_some()
        {
            return Err(format!("guess `{id}` listed twice"));
        }
    }
    Ok(out)
}

/// What differs between the markers and the list, one line each (empty when equal).
fn differences(code: &BTreeMap<String, String>, docs: &BTreeMap<String, String>) -> Vec<String> {
    let mut out = vec![];
    for (id, text) in code {
        match docs.get(id) {
            None => out.push(format!(
                "`{id}` is marked in the code but not listed: {text}"
            )),
            Some(listed) if listed != text => out.push(format!(
                "`{id}` reads differently:\n  code: {text}\n  docs: {listed}"
            )),
            Some(_) => {}
        }
    }
    for (id, text) in docs {
        if !code.contains_key(id) {
            out.push(format!("`{id}` is listed but marked nowhere: {text}"));
        }
    }
    out
}

#[test]
fn the_guesses_list_equals_the_markers_in_the_code() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut paths = vec![];
    rust_files(&root.join("src"), &mut paths);
    let files: Vec<(String, String)> = paths
        .iter()
        .map(|p| {
            (
                p.strip_prefix(root).unwrap().display().to_string(),
                std::fs::read_to_string(p).unwrap(),
            )
        })
        .collect();
    let code = markers(&files).unwrap();
    let doc = std::fs::read_to_string(root.join("../docs/simulator.md")).unwrap();
    let docs = listed(&doc).unwrap();
    assert!(
        !code.is_empty(),
        "no markers found under {}",
        root.display()
    );
    let diff = differences(&code, &docs);
    assert!(diff.is_empty(), "{}", diff.join("\n"));
}

#[test]
fn the_guesses_check_sees_each_kind_of_difference() {
    let files = vec![(
        "a.rs".to_string(),
        "x\n    // GUESS(one): first\n// GUESS(two): second\n".to_string(),
    )];
    let code = markers(&files).unwrap();
    let doc = "# t\n## Guesses\n\n- `one`: first\n- `three`: third\n\n## Next\n- `two`: second\n";
    let docs = listed(doc).unwrap();
    let diff = differences(&code, &docs);
    assert_eq!(diff.len(), 2, "{diff:?}");
    assert!(diff[0].contains("`two` is marked in the code but not listed"));
    assert!(diff[1].contains("`three` is listed but marked nowhere"));
    let changed = listed("\n## Guesses\n- `one`: other\n- `two`: second\n").unwrap();
    assert!(differences(&code, &changed)[0].contains("`one` reads differently"));
    assert!(
        differences(
            &code,
            &listed("\n## Guesses\n- `one`: first\n- `two`: second\n").unwrap()
        )
        .is_empty()
    );
    let twice = vec![(
        "b.rs".to_string(),
        "// GUESS(one): a\n// GUESS(one): b\n".to_string(),
    )];
    assert!(markers(&twice).unwrap_err().contains("marked twice"));
    let malformed = vec![("c.rs".to_string(), "// GUESS(Bad Id): x\n".to_string())];
    assert!(markers(&malformed).is_err());
}
