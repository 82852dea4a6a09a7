//! The facts the README and docs/ state about the code, checked against the code (issue 26 item
//! 16): every `A3CTL_*_ENDPOINT` variable a3ctl reads is in the README, and so is how many API
//! endpoints go together; docs/blueprint.md names every shipped blueprint and the code's regions
//! (its list and its zone table); the README's count of cloud resources and Kubernetes objects of
//! the main job is what the A3 Mega blueprint's graph holds; docs/state.md's format version is
//! the code's. No cloud, no binary: files and in-process calls, in milliseconds.

use a3ctl::blueprint::presets::REGIONS;
use a3ctl::resource::Kind;
use regex::Regex;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn read(relative: &str) -> String {
    std::fs::read_to_string(root().join(relative))
        .unwrap_or_else(|e| panic!("cannot read {relative}: {e}"))
}

/// Every `.rs` file under `dir`.
fn rust_files(dir: &Path, found: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("a source directory") {
        let path = entry.expect("an entry").path();
        if path.is_dir() {
            rust_files(&path, found);
        } else if path.extension().is_some_and(|e| e == "rs") {
            found.push(path);
        }
    }
}

/// The `A3CTL_…_ENDPOINT` names written in a3ctl's sources (`src/`), which are the ones it reads.
fn endpoint_variables() -> BTreeSet<String> {
    let mut files = Vec::new();
    rust_files(&root().join("src"), &mut files);
    let name = Regex::new(r#""(A3CTL_[A-Z_]+_ENDPOINT)""#).unwrap();
    files
        .iter()
        .flat_map(|file| {
            let text = std::fs::read_to_string(file).expect("a source file");
            name.captures_iter(&text)
                .map(|c| c[1].to_string())
                .collect::<Vec<_>>()
        })
        .collect()
}

#[test]
fn the_readme_lists_every_endpoint_variable_a3ctl_reads() {
    let readme = read("README.md");
    let variables = endpoint_variables();
    // The API endpoints, GitHub's and the clock's: a source moved out of `src/` would empty this.
    assert!(variables.len() >= 11, "{variables:?}");
    let missing: Vec<&String> = variables
        .iter()
        .filter(|v| !readme.contains(&format!("`{v}`")))
        .collect();
    assert!(missing.is_empty(), "README.md does not list {missing:?}");
    // "The nine API endpoints (the first nine above) are overridden all together".
    let words = [
        "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine",
    ];
    let said = Regex::new(r"The (\w+) API endpoints \(the first (\w+) above\)")
        .unwrap()
        .captures(&readme)
        .expect("README.md says how many API endpoints go together");
    let count = a3ctl::cloud::gcp::API_ENDPOINTS.len();
    assert_eq!((&said[1], &said[2]), (words[count], words[count]));
    // The first ones listed are those APIs.
    let listed: Vec<&str> = Regex::new(r"`(A3CTL_[A-Z_]+_ENDPOINT)`")
        .unwrap()
        .captures_iter(&readme)
        .map(|c| c.get(1).unwrap().as_str())
        .collect();
    let apis: BTreeSet<&str> = a3ctl::cloud::gcp::API_ENDPOINTS
        .iter()
        .map(|(v, _)| *v)
        .collect();
    assert_eq!(
        listed.iter().take(count).copied().collect::<BTreeSet<_>>(),
        apis
    );
}

#[test]
fn docs_blueprint_md_names_every_shipped_blueprint() {
    let doc = read("docs/blueprint.md");
    let readme = read("README.md");
    let mut shipped: Vec<String> = std::fs::read_dir(root().join("blueprints"))
        .expect("blueprints/")
        .map(|e| {
            e.expect("an entry")
                .file_name()
                .to_string_lossy()
                .into_owned()
        })
        .filter(|name| name.ends_with(".toml"))
        .collect();
    shipped.sort();
    assert!(shipped.len() >= 5, "{shipped:?}");
    for name in &shipped {
        assert!(
            doc.contains(&format!("`blueprints/{name}`")),
            "docs/blueprint.md's shipped examples leave out blueprints/{name}"
        );
        assert!(
            readme.contains(&format!("`{name}`")),
            "README.md's layout leaves out blueprints/{name}"
        );
    }
}

#[test]
fn docs_blueprint_md_lists_the_codes_regions_and_their_zones() {
    let doc = read("docs/blueprint.md");
    let line = doc
        .lines()
        .find(|l| l.starts_with("| `region` |"))
        .expect("the `region` row of docs/blueprint.md");
    let said = Regex::new(r"One of the (\d+) regions")
        .unwrap()
        .captures(line)
        .expect("the row says how many regions");
    assert_eq!(said[1].parse::<usize>().unwrap(), REGIONS.len(), "{line}");
    let list = &line[line.find(':').expect("the list after a colon")..];
    let named: Vec<&str> = Regex::new(r"`([a-z0-9-]+)`")
        .unwrap()
        .captures_iter(list)
        .map(|c| c.get(1).unwrap().as_str())
        .collect();
    let code: Vec<&str> = REGIONS.iter().map(|(r, _)| *r).collect();
    assert_eq!(named, code, "docs/blueprint.md's region list");
    // The zone table: a row per region (in its own order), with the same zones.
    let rows: BTreeSet<(String, String)> = doc
        .lines()
        .skip_while(|l| !l.starts_with("| Region | Zones |"))
        .skip(2)
        .take_while(|l| l.starts_with('|'))
        .map(|l| {
            let cells: Vec<&str> = l.split('|').map(str::trim).collect();
            (cells[1].to_string(), cells[2].to_string())
        })
        .collect();
    let code: BTreeSet<(String, String)> = REGIONS
        .iter()
        .map(|(r, zones)| (r.to_string(), zones.join(", ")))
        .collect();
    assert_eq!(rows, code, "docs/blueprint.md's zone table");
}

#[test]
fn the_readmes_main_job_counts_what_the_a3_mega_blueprint_plans() {
    let readme = read("README.md");
    let number = |pattern: &str| -> usize {
        Regex::new(pattern)
            .unwrap()
            .captures(&readme)
            .unwrap_or_else(|| panic!("README.md has no `{pattern}`"))[1]
            .parse()
            .unwrap()
    };
    let cloud = number(r"\((\d+) cloud resources");
    let objects = number(r"(\d+)\s+Kubernetes objects:");
    let blueprint =
        a3ctl::blueprint::load(&root().join("blueprints/a3-mega.toml")).expect("it loads");
    let resources = a3ctl::graph::build::resources(&blueprint);
    let kubernetes = resources
        .iter()
        .filter(|d| d.addr.kind == Kind::Kubernetes)
        .count();
    assert_eq!(
        (cloud, objects),
        (resources.len() - kubernetes, kubernetes),
        "README.md's main job: (cloud resources, Kubernetes objects)"
    );
}

#[test]
fn docs_state_md_gives_the_codes_format_version() {
    let doc = read("docs/state.md");
    let said = Regex::new(r"\| `version` \| format version \((\d+)\)")
        .unwrap()
        .captures(&doc)
        .expect("docs/state.md's `version` row");
    assert_eq!(
        said[1].parse::<u32>().unwrap(),
        a3ctl::state::FORMAT_VERSION
    );
    // Every other mention of the current format says the same.
    for mention in Regex::new(r"\(version (\d+)\)")
        .unwrap()
        .captures_iter(&doc)
    {
        assert_eq!(
            mention[1].parse::<u32>().unwrap(),
            a3ctl::state::FORMAT_VERSION,
            "{}",
            &mention[0]
        );
    }
}
