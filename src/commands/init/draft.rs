//! The blueprint `a3ctl init` is writing: a `toml_edit` document, edited key by key, and the check
//! that holds each answer to the rules of `a3ctl validate`.
//!
//! Keys are named by dotted paths (`gpu_pool.0.nodes`, `software.kueue.queue`); a number indexes
//! an array of tables. Editing keeps what the user wrote around a value: the comments before a
//! key, a comment after a value, and every key and table the wizard does not ask about. Tables
//! and keys the wizard creates get a comment saying what they are for, in the voice of the
//! shipped blueprints.
//!
//! [`Draft::check`] never re-implements a rule: it writes the candidate answer into a copy of the
//! document, validates the whole text with [`crate::blueprint::parse`] and keeps the problems
//! that belong to the answer, those pointing into the answer's value, plus those the answer
//! newly causes elsewhere, except inside keys still to be asked (their turn comes).

use crate::blueprint::{self, Blueprint, BlueprintError, Problem};
use std::ops::Range;
use toml_edit::{ArrayOfTables, DocumentMut, Item, Table, TableLike, Value};

/// The comment above a table the wizard creates.
fn table_comment(path: &str) -> Option<&'static str> {
    Some(match path {
        "network" => {
            "# Networking. One primary VPC carries nodes, pods and services; each GPU NIC gets a VPC of\n# its own (4 on A3 High, 8 on A3 Mega), with GPU subnets carved from `gpu_range` and MTU 8244\n# as GPUDirect needs. Ranges must not overlap each other or networks you peer with.\n"
        }
        "cluster" => {
            "# The GKE cluster: release channel and version (GPUDirect needs a minimum GKE build per\n# family; a3ctl checks it), private nodes reaching the internet through Cloud NAT.\n"
        }
        "system_pool" => "# The CPU pool for system pods and controllers (Kueue, JobSet, DNS).\n",
        "gpu_pool" => {
            "# The GPU node pool. Capacity: `reservation` (a reservation you own, optionally one block),\n# `on-demand` or `spot` (preemptible; no reservation, no compact placement). Placement defaults\n# to `compact` for reservation and on-demand pools, `none` for spot.\n"
        }
        "filestore" => {
            "# A Filestore NFS share for datasets and code; the cluster gets the Filestore CSI driver.\n"
        }
        "artifact_registry" => {
            "# An Artifact Registry repository in the region for training images.\n"
        }
        "bucket" => {
            "# A regional Cloud Storage bucket next to the nodes (checkpoints, data); `mount` makes it\n# available in pods through the GCS FUSE CSI driver.\n"
        }
        "software" => {
            "# Cluster software: the GPU driver, the NCCL GPUDirect stack (TCPX on A3 High, TCPXO on\n# A3 Mega; `stack` pins a tested plugin/RxDM/NCCL tuple) and the GPU Network objects.\n"
        }
        "software.kueue" => {
            "# Kueue queues GPU jobs: a ClusterQueue for the GPU pools and a LocalQueue named `queue`.\n"
        }
        "identity" => {
            "# Who the nodes and the workloads are to Google Cloud: the nodes' service account and the\n# Kubernetes service account whose pods read and write the mounted buckets.\n"
        }
        "state" => {
            "# Where a3ctl records what it created: a local file, or a GCS bucket (shared, locked).\n"
        }
        _ => return None,
    })
}

/// The header of a blueprint written from scratch.
pub const HEADER: &str = "# Written by `a3ctl init`; run it again on this file to change the answers (comments\n# are kept). Every key is documented in docs/blueprint.md; check the file with\n# `a3ctl validate`.\n";

/// One segment of a dotted key path.
enum Segment<'a> {
    Key(&'a str),
    Index(usize),
}

fn segments(path: &str) -> Vec<Segment<'_>> {
    path.split('.')
        .map(|part| match part.parse::<usize>() {
            Ok(index) => Segment::Index(index),
            Err(_) => Segment::Key(part),
        })
        .collect()
}

/// The blueprint being written.
#[derive(Debug, Clone)]
pub struct Draft {
    doc: DocumentMut,
    /// The file name used in validation messages.
    name: String,
}

impl Draft {
    /// An empty blueprint that will be written to `name`.
    pub fn new(name: &str) -> Draft {
        Draft {
            doc: DocumentMut::new(),
            name: name.to_string(),
        }
    }

    /// An existing blueprint, comments and all.
    pub fn parse(text: &str, name: &str) -> Result<Draft, toml_edit::TomlError> {
        Ok(Draft {
            doc: text.parse::<DocumentMut>()?,
            name: name.to_string(),
        })
    }

    /// The TOML text.
    pub fn text(&self) -> String {
        self.doc.to_string()
    }

    /// Validates the whole document with `a3ctl validate`'s rules.
    pub fn validate(&self) -> Result<Blueprint, BlueprintError> {
        blueprint::parse(&self.text(), &self.name)
    }

    /// The value at `path`, if it is set.
    pub fn get(&self, path: &str) -> Option<&Value> {
        find(self.doc.as_table(), path)?.as_value()
    }

    pub fn get_str(&self, path: &str) -> Option<String> {
        Some(self.get(path)?.as_str()?.to_string())
    }

    /// A default for a question: the value as written, whatever its type.
    pub fn get_text(&self, path: &str) -> Option<String> {
        match self.get(path)? {
            Value::String(s) => Some(s.value().clone()),
            other => Some(other.clone().decorated("", "").to_string()),
        }
    }

    pub fn get_bool(&self, path: &str) -> Option<bool> {
        self.get(path)?.as_bool()
    }

    /// Whether a table or array of tables exists at `path`.
    pub fn has(&self, path: &str) -> bool {
        find(self.doc.as_table(), path).is_some_and(|item| !item.is_none())
    }

    /// How many tables the array of tables `path` holds.
    pub fn count(&self, path: &str) -> usize {
        find(self.doc.as_table(), path)
            .and_then(Item::as_array_of_tables)
            .map_or(0, ArrayOfTables::len)
    }

    /// Sets `path` to `value`, creating the tables on the way; keeps the comments around an
    /// existing value. With `comment`, a new key gets it on the line above.
    pub fn set(&mut self, path: &str, value: impl Into<Value>, comment: Option<&str>) {
        let mut value: Value = value.into();
        let segs = segments(path);
        let Some((Segment::Key(key), parents)) = segs.split_last() else {
            return;
        };
        let table = table_at(self.doc.as_table_mut(), parents, "");
        match table.get_mut(key).and_then(Item::as_value_mut) {
            Some(old) => {
                *value.decor_mut() = old.decor().clone();
                *old = value;
            }
            None => {
                table.insert(key, Item::Value(value));
                if let (Some(comment), Some(mut key)) = (comment, table.key_mut(key)) {
                    key.leaf_decor_mut().set_prefix(comment);
                }
            }
        }
    }

    /// Removes `path` (a key, a table, an array of tables or one of its tables); nothing happens
    /// when it is absent.
    pub fn remove(&mut self, path: &str) {
        let segs = segments(path);
        match segs.split_last() {
            Some((Segment::Key(key), parents)) => {
                if let Some(table) = find_table_mut(self.doc.as_table_mut(), parents) {
                    table.remove(key);
                }
            }
            Some((Segment::Index(index), parents)) => {
                let Some((Segment::Key(key), grand)) = parents.split_last() else {
                    return;
                };
                let Some(table) = find_table_mut(self.doc.as_table_mut(), grand) else {
                    return;
                };
                if let Some(array) = table.get_mut(key).and_then(Item::as_array_of_tables_mut)
                    && *index < array.len()
                {
                    array.remove(*index);
                    if array.is_empty() {
                        table.remove(key);
                    }
                }
            }
            None => {}
        }
    }

    /// Puts every top-level table in `order`: all of them in a new document; in an edited one,
    /// only the tables the wizard added, each after the table that precedes it in `order`.
    pub fn order_tables(&mut self, order: &[&str]) {
        let root = self.doc.as_table_mut();
        let fresh = root.iter().all(|(_, item)| match item {
            Item::Table(table) => table.position().is_none(),
            Item::ArrayOfTables(array) => array.iter().all(|t| t.position().is_none()),
            _ => true,
        });
        let mut last: isize = 0;
        for (index, key) in order.iter().enumerate() {
            let tables: Vec<&mut Table> = match root.get_mut(key) {
                Some(Item::Table(table)) => vec![table],
                Some(Item::ArrayOfTables(array)) => array.iter_mut().collect(),
                _ => continue,
            };
            for table in tables {
                match table.position() {
                    _ if fresh => table.set_position(Some(index as isize + 1)),
                    Some(position) => last = position,
                    None => table.set_position(Some(last)),
                }
            }
        }
    }

    /// Sets the comment at the top of a new file.
    pub fn set_header(&mut self, header: &str) {
        self.doc.decor_mut().set_prefix(header);
    }

    /// The problems an answer causes: `apply` writes it into a copy of the draft, and the copy is
    /// validated. Kept are the problems pointing into `keys` (the answer's values), and problems
    /// the answer newly causes at another value, except under `later` (keys still to be asked).
    pub fn check(
        &self,
        keys: &[String],
        later: &[&str],
        apply: impl FnOnce(&mut Draft),
    ) -> Vec<Problem> {
        let before: Vec<(String, String)> = problems(&self.text(), &self.name)
            .iter()
            .map(signature)
            .collect();
        let mut candidate = self.clone();
        apply(&mut candidate);
        let text = candidate.text();
        let Ok(spans) = toml_edit::Document::parse(text.as_str()) else {
            return problems(&text, &self.name);
        };
        let spans_of = |paths: &mut dyn Iterator<Item = &str>| -> Vec<Range<usize>> {
            paths
                .filter_map(|path| find(spans.as_table(), path))
                .flat_map(spans_under)
                .collect()
        };
        let own = spans_of(&mut keys.iter().map(String::as_str));
        let pending = spans_of(&mut later.iter().copied());
        // A new problem is the answer's when it points at a value; one pointing at a table
        // ("missing key") is about a key still to be written.
        let values: Vec<Range<usize>> = spans
            .as_table()
            .iter()
            .flat_map(|(_, item)| spans_under(item))
            .collect();
        problems(&text, &self.name)
            .into_iter()
            .filter(|problem| {
                touches(problem, &own)
                    || (!before.contains(&signature(problem))
                        && touches(problem, &values)
                        && !touches(problem, &pending))
            })
            .collect()
    }
}

/// The problems of `text` (none when it validates).
fn problems(text: &str, name: &str) -> Vec<Problem> {
    match blueprint::parse(text, name) {
        Ok(_) => Vec::new(),
        Err(error) => error.problems().to_vec(),
    }
}

/// What identifies a problem across two versions of a document (spans move).
fn signature(problem: &Problem) -> (String, String) {
    (problem.message.clone(), problem.label.clone())
}

/// Whether the span `problem` points at lies inside one of `spans`. Inside, not overlapping: a
/// problem about a whole table ("missing key") spans the values in it without being theirs.
/// Secondary labels do not count: "zone not in region, the region is set here" is the zone's.
fn touches(problem: &Problem, spans: &[Range<usize>]) -> bool {
    let label = problem.span();
    spans
        .iter()
        .any(|span| span.start <= label.start && label.end <= span.end)
}

/// The spans of every value at or under `item`.
fn spans_under(item: &Item) -> Vec<Range<usize>> {
    match item {
        Item::None => Vec::new(),
        Item::Value(value) => value.span().into_iter().collect(),
        Item::Table(table) => table
            .iter()
            .flat_map(|(_, item)| spans_under(item))
            .collect(),
        Item::ArrayOfTables(array) => array
            .iter()
            .flat_map(|table| table.iter().flat_map(|(_, item)| spans_under(item)))
            .collect(),
    }
}

/// The table at `segs` under `table`, created when missing (a new table gets its comment); an
/// index past the end of an array of tables appends tables. An inline table is turned into a
/// standard one, keeping its keys.
fn table_at<'a>(table: &'a mut Table, segs: &[Segment<'_>], walked: &str) -> &'a mut Table {
    let (key, rest) = match segs {
        [Segment::Key(key), rest @ ..] => (*key, rest),
        _ => return table,
    };
    let walked = if walked.is_empty() {
        key.to_string()
    } else {
        format!("{walked}.{key}")
    };
    let comment = table_comment(&walked).map(|c| format!("\n{c}"));
    let slot = table.entry(key).or_insert(Item::None);
    if let Item::Value(Value::InlineTable(inline)) = slot {
        *slot = Item::Table(std::mem::take(inline).into_table());
    }
    match rest {
        [Segment::Index(index), rest @ ..] => {
            if !slot.is_array_of_tables() {
                *slot = Item::ArrayOfTables(ArrayOfTables::new());
            }
            let Item::ArrayOfTables(array) = slot else {
                unreachable!("just made an array of tables")
            };
            while array.len() <= *index {
                let mut new = Table::new();
                new.decor_mut()
                    .set_prefix(match (&comment, array.is_empty()) {
                        (Some(comment), true) => comment.as_str(),
                        _ => "\n",
                    });
                array.push(new);
            }
            match array.get_mut(*index) {
                Some(element) => table_at(element, rest, &walked),
                None => unreachable!("just pushed up to the index"),
            }
        }
        _ => {
            if !slot.is_table() {
                let mut new = Table::new();
                if let Some(comment) = &comment {
                    new.decor_mut().set_prefix(comment.as_str());
                }
                *slot = Item::Table(new);
            }
            let Item::Table(sub) = slot else {
                unreachable!("just made a table")
            };
            table_at(sub, rest, &walked)
        }
    }
}

/// The existing table at `segs` under `table`.
fn find_table_mut<'a>(table: &'a mut Table, segs: &[Segment<'_>]) -> Option<&'a mut Table> {
    match segs {
        [] => Some(table),
        [Segment::Key(key), Segment::Index(index), rest @ ..] => find_table_mut(
            table
                .get_mut(key)?
                .as_array_of_tables_mut()?
                .get_mut(*index)?,
            rest,
        ),
        [Segment::Key(key), rest @ ..] => find_table_mut(table.get_mut(key)?.as_table_mut()?, rest),
        _ => None,
    }
}

/// The item at `path` under `root`.
fn find<'a>(root: &'a Table, path: &str) -> Option<&'a Item> {
    find_in(root, &segments(path))
}

fn find_in<'a>(table: &'a dyn TableLike, segs: &[Segment<'_>]) -> Option<&'a Item> {
    match segs {
        [Segment::Key(key)] => table.get(key),
        [Segment::Key(key), Segment::Index(index), rest @ ..] => {
            find_in(table.get(key)?.as_array_of_tables()?.get(*index)?, rest)
        }
        [Segment::Key(key), rest @ ..] => find_in(table.get(key)?.as_table_like()?, rest),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const EDITED: &str = "# my header\nname = \"a3mega\" # short\nproject = \"my-project\"\nregion = \"us-central1\"\nzone = \"us-central1-a\"\n\n# our pool\n[[gpu_pool]]\nmachine_type = \"a3-megagpu-8g\"\nnodes = 2 # for now\n\n[[bucket]]\nname = \"my-project-a\"\n\n[[bucket]]\nname = \"my-project-b\"\n";

    #[test]
    fn setting_a_value_keeps_the_comments_around_it() {
        let mut draft = Draft::parse(EDITED, "t.toml").expect("TOML");
        draft.set("gpu_pool.0.nodes", 4, None);
        draft.set("name", "a3big", None);
        let text = draft.text();
        assert_eq!(
            text,
            EDITED
                .replace("nodes = 2 #", "nodes = 4 #")
                .replace("\"a3mega\" #", "\"a3big\" #")
        );
        assert_eq!(draft.get_text("gpu_pool.0.nodes").as_deref(), Some("4"));
    }

    #[test]
    fn tables_are_created_with_their_comment_and_removed_cleanly() {
        let mut draft = Draft::parse(EDITED, "t.toml").expect("TOML");
        draft.set("filestore.tier", "BASIC_SSD", None);
        draft.set("bucket.2.name", "my-project-c", None);
        draft.remove("bucket.0");
        draft.order_tables(&["gpu_pool", "filestore", "bucket"]);
        let text = draft.text();
        assert!(text.contains("# A Filestore NFS share"), "{text}");
        assert!(
            text.find("[filestore]") < text.find("[[bucket]]"),
            "a new table goes after the table before it in the order:\n{text}"
        );
        assert_eq!(draft.count("bucket"), 2);
        assert_eq!(
            draft.get_str("bucket.1.name").as_deref(),
            Some("my-project-c")
        );
        draft.remove("bucket.1");
        draft.remove("bucket.0");
        assert!(!draft.has("bucket") && !draft.text().contains("[[bucket]]"));
        // Absent paths are no-ops.
        draft.remove("artifact_registry.3");
        draft.remove("nothing.here");
    }

    #[test]
    fn inline_tables_become_tables_when_a_key_is_added() {
        let mut draft = Draft::parse("software = { nccl = true }\n", "t.toml").expect("TOML");
        draft.set("software.kueue.queue", "q", None);
        assert_eq!(draft.get_bool("software.nccl"), Some(true));
        assert_eq!(draft.get_str("software.kueue.queue").as_deref(), Some("q"));
    }

    #[test]
    fn an_answer_is_blamed_only_for_its_own_problems() {
        let draft = Draft::parse(EDITED, "t.toml").expect("TOML");
        let keys = |key: &str| vec![key.to_string()];
        // Its own value.
        let found = draft.check(&keys("gpu_pool.0.nodes"), &[], |d| {
            d.set("gpu_pool.0.nodes", 2000, None)
        });
        assert_eq!(found.len(), 1);
        assert!(found[0].message.contains("between 1 and 1000"));
        // A problem it causes at another value (the zone no longer offers the machine), but not
        // one under a key still to be asked.
        let found = draft.check(&keys("zone"), &[], |d| d.set("zone", "us-central1-b", None));
        assert!(
            found
                .iter()
                .any(|p| p.message.contains("not offered in zone")),
            "{found:?}"
        );
        let found = draft.check(&keys("region"), &["zone"], |d| {
            d.set("region", "europe-west4", None)
        });
        assert!(found.is_empty(), "{found:?}");
        // Problems that were there before stay someone else's.
        let broken =
            Draft::parse(&EDITED.replace("my-project-b", "Bad_Bucket"), "t.toml").expect("TOML");
        let found = broken.check(&keys("gpu_pool.0.nodes"), &[], |d| {
            d.set("gpu_pool.0.nodes", 3, None)
        });
        assert!(found.is_empty(), "{found:?}");
    }
}
