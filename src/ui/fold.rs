//! Folding repeated blocks of a plan: eight GPU VPCs that differ only in their index read as one
//! VPC in full plus one line naming the other seven and the fields in which they differ.
//!
//! Two changes fold together when all of this holds:
//! - same kind and the same action (a forgotten delete never folds with a real one);
//! - their names are the same once every run of digits is read as "some number"
//!   (`gpu-0` ~ `gpu-7`, `vpc1` ~ `vpc8`, but never `low` ~ `very-low`);
//! - the same reason, word for word;
//! - for updates and replacements, exactly the same field changes (same paths, same old and new
//!   values, same forcing of replacement): folding never hides a changed value;
//! - their fields (after the change; before it, for a delete) have the same set of paths, and
//!   at every path either the same value, or strings that are the same once every run of digits
//!   is read as "some number" (`a3mega-gpunet-0` ~ `a3mega-gpunet-7`,
//!   `192.168.0.0/24` ~ `192.168.7.0/24`). Numbers, booleans and other text must be equal.
//!
//! The fold line names the paths at which the members' values differ. A group is shown where its
//! first member is, in plan order; folding is deterministic.

use crate::plan::{Action, Change};
use serde_json::Value;
use std::collections::HashMap;

/// One entry of the folded plan.
#[derive(Debug)]
pub enum Entry<'a> {
    /// A change shown in full.
    Full(&'a Change),
    /// Changes like `like` (shown just before), summarised on one line.
    More {
        like: &'a Change,
        rest: Vec<&'a Change>,
        /// The field paths whose values differ between the members, sorted.
        differences: Vec<String>,
    },
}

/// The changes in order, with each group of alike changes turned into its first member in full
/// and one [`Entry::More`].
pub fn fold<'a>(changes: &[&'a Change]) -> Vec<Entry<'a>> {
    let keys: Vec<Option<String>> = changes.iter().map(|c| key(c)).collect();
    let mut groups: HashMap<&str, Vec<usize>> = HashMap::new();
    for (i, k) in keys.iter().enumerate() {
        if let Some(k) = k {
            groups.entry(k.as_str()).or_default().push(i);
        }
    }
    let mut out = Vec::new();
    for (i, change) in changes.iter().enumerate() {
        let members = keys[i]
            .as_deref()
            .and_then(|k| groups.get(k))
            .filter(|m| m.len() > 1);
        match members {
            Some(m) if m[0] == i => {
                let all: Vec<&Change> = m.iter().map(|&j| changes[j]).collect();
                out.push(Entry::Full(change));
                out.push(Entry::More {
                    like: change,
                    rest: all[1..].to_vec(),
                    differences: differences(&all),
                });
            }
            Some(_) => {}
            None => out.push(Entry::Full(change)),
        }
    }
    out
}

/// The fields a change is compared by: what it creates or keeps, or what a delete removes.
fn fields(change: &Change) -> Option<&Value> {
    match change.action {
        Action::Delete => change.before.as_ref(),
        _ => change.after.as_ref(),
    }
}

/// The grouping key of a change; `None` when it never folds.
fn key(change: &Change) -> Option<String> {
    if change.action == Action::NoOp {
        return None;
    }
    let mut leaves = Vec::new();
    if let Some(value) = fields(change) {
        flatten(String::new(), value, &mut leaves);
    }
    let shape: Vec<(String, Value)> = leaves
        .into_iter()
        .map(|(path, value)| (path, normalised(&value)))
        .collect();
    let key = serde_json::json!({
        "kind": change.addr.kind.as_str(),
        "name": numberless(&change.addr.name),
        "action": change.action,
        "forgotten": change.lifecycle.keep_on_destroy,
        "reason": change.reason,
        "diffs": change.diffs,
        "fields": shape,
    });
    Some(key.to_string())
}

/// Every leaf of a value with its path (`source_ranges[0]`, `object.metadata.name`); empty
/// containers are leaves too.
fn flatten(path: String, value: &Value, out: &mut Vec<(String, Value)>) {
    match value {
        Value::Object(map) if !map.is_empty() => {
            for (k, v) in map {
                let child = if path.is_empty() {
                    k.clone()
                } else {
                    format!("{path}.{k}")
                };
                flatten(child, v, out);
            }
        }
        Value::Array(items) if !items.is_empty() => {
            for (i, v) in items.iter().enumerate() {
                flatten(format!("{path}[{i}]"), v, out);
            }
        }
        other => out.push((path, other.clone())),
    }
}

/// A string with each run of digits read as `#`; other values as they are.
fn normalised(value: &Value) -> Value {
    match value {
        Value::String(s) => Value::String(numberless(s)),
        other => other.clone(),
    }
}

fn numberless(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut in_digits = false;
    for c in s.chars() {
        if c.is_ascii_digit() {
            if !in_digits {
                out.push('#');
            }
            in_digits = true;
        } else {
            out.push(c);
            in_digits = false;
        }
    }
    out
}

/// The leaf paths whose values are not the same in all of `changes` (which share their paths).
fn differences(changes: &[&Change]) -> Vec<String> {
    let leaves: Vec<Vec<(String, Value)>> = changes
        .iter()
        .map(|c| {
            let mut out = Vec::new();
            if let Some(v) = fields(c) {
                flatten(String::new(), v, &mut out);
            }
            out
        })
        .collect();
    let Some(first) = leaves.first() else {
        return Vec::new();
    };
    let mut out: Vec<String> = first
        .iter()
        .enumerate()
        .filter(|(i, (_, value))| {
            leaves
                .iter()
                .any(|l| l.get(*i).map(|x| &x.1) != Some(value))
        })
        .map(|(_, (path, _))| path.clone())
        .collect();
    out.sort();
    out.dedup();
    out
}

/// How the members after the first are listed: `a … b` when their names count up one by one
/// (`gpu-1 … gpu-7`), else every name.
pub fn members(rest: &[&Change]) -> String {
    let names: Vec<String> = rest.iter().map(|c| c.addr.to_string()).collect();
    if names.len() > 3 && counts_up(&names) {
        format!("{} … {}", names[0], names[names.len() - 1])
    } else {
        names.join(", ")
    }
}

/// The names differ in exactly one run of digits, which goes up by one from each to the next.
fn counts_up(names: &[String]) -> bool {
    let runs: Vec<Vec<(bool, String)>> = names.iter().map(|n| runs(n)).collect();
    let Some(first) = runs.first() else {
        return false;
    };
    if runs.iter().any(|r| r.len() != first.len()) {
        return false;
    }
    let mut counting = None;
    for at in 0..first.len() {
        let same = runs.iter().all(|r| r[at] == first[at]);
        if same {
            continue;
        }
        if counting.is_some() || !first[at].0 {
            return false;
        }
        counting = Some(at);
    }
    let Some(at) = counting else {
        return false;
    };
    let numbers: Option<Vec<u64>> = runs.iter().map(|r| r[at].1.parse().ok()).collect();
    numbers.is_some_and(|n| n.windows(2).all(|w| w[1] == w[0] + 1))
}

/// A name as runs of digits (`true`) and of other characters.
fn runs(name: &str) -> Vec<(bool, String)> {
    let mut out: Vec<(bool, String)> = Vec::new();
    for c in name.chars() {
        let digit = c.is_ascii_digit();
        match out.last_mut() {
            Some((d, run)) if *d == digit => run.push(c),
            _ => out.push((digit, c.to_string())),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::FieldDiff;
    use crate::resource::{Addr, Kind, Lifecycle};
    use serde_json::json;

    fn change(kind: Kind, name: &str, action: Action, spec: Value) -> Change {
        Change {
            addr: Addr::new(kind, name),
            action,
            id: format!("id/{name}"),
            before: (action != Action::Create).then(|| spec.clone()),
            after: (action != Action::Delete).then_some(spec),
            diffs: vec![],
            reason: None,
            dependencies: vec![],
            lifecycle: Lifecycle::default(),
        }
    }

    fn firewall(i: usize) -> Change {
        change(
            Kind::Firewall,
            &format!("gpu-{i}-internal"),
            Action::Create,
            json!({
                "name": format!("a3mega-gpunet-{i}-allow-internal"),
                "priority": 1000,
                "source_ranges": [format!("192.168.{i}.0/24")],
            }),
        )
    }

    fn shape(entries: &[Entry]) -> Vec<String> {
        entries
            .iter()
            .map(|e| match e {
                Entry::Full(c) => c.addr.to_string(),
                Entry::More {
                    rest, differences, ..
                } => format!("+{} ({})", members(rest), differences.join(", ")),
            })
            .collect()
    }

    #[test]
    fn folds_resources_that_differ_only_in_their_index() {
        let changes: Vec<Change> = (0..8).map(firewall).collect();
        let refs: Vec<&Change> = changes.iter().collect();
        assert_eq!(
            shape(&fold(&refs)),
            [
                "firewall.gpu-0-internal",
                "+firewall.gpu-1-internal … firewall.gpu-7-internal (name, source_ranges[0])"
            ]
        );
    }

    #[test]
    fn folds_across_other_changes_and_keeps_plan_order() {
        let network = change(
            Kind::Network,
            "primary",
            Action::Create,
            json!({"name": "n"}),
        );
        let changes = [firewall(0), network, firewall(1)];
        let refs: Vec<&Change> = changes.iter().collect();
        assert_eq!(
            shape(&fold(&refs)),
            [
                "firewall.gpu-0-internal",
                "+firewall.gpu-1-internal (name, source_ranges[0])",
                "network.primary"
            ]
        );
    }

    #[test]
    fn does_not_fold_different_values() {
        let mut other = firewall(1);
        other.after.as_mut().unwrap()["priority"] = json!(900);
        let mut renamed = firewall(2);
        renamed.after.as_mut().unwrap()["name"] = json!("a3mega-other-2-allow-internal");
        let mut extra = firewall(3);
        extra.after.as_mut().unwrap()["disabled"] = json!(false);
        let changes = [firewall(0), other, renamed, extra];
        let refs: Vec<&Change> = changes.iter().collect();
        assert_eq!(
            shape(&fold(&refs)),
            [
                "firewall.gpu-0-internal",
                "firewall.gpu-1-internal",
                "firewall.gpu-2-internal",
                "firewall.gpu-3-internal"
            ]
        );
    }

    #[test]
    fn does_not_fold_names_that_differ_in_words_or_kinds_or_actions() {
        let pc = |name: &str| {
            change(
                Kind::Kubernetes,
                &format!("priorityclass/-/{name}"),
                Action::Create,
                json!({"object": {"value": 100}}),
            )
        };
        let mut deleted = firewall(1);
        deleted.action = Action::Delete;
        deleted.before = deleted.after.take();
        let changes = [pc("low"), pc("very-low"), firewall(0), deleted];
        let refs: Vec<&Change> = changes.iter().collect();
        assert_eq!(fold(&refs).len(), 4);
    }

    #[test]
    fn never_folds_away_an_update_s_changed_values() {
        let update = |i: usize, to: u64| {
            let mut c = change(
                Kind::NodePool,
                &format!("gpu-{i}"),
                Action::Update,
                json!({"name": format!("gpu-{i}"), "node_count": to}),
            );
            c.diffs = vec![FieldDiff {
                field: "node_count".into(),
                before: json!(2),
                after: json!(to),
                forces_replacement: false,
            }];
            c
        };
        // Different new values: each update is shown.
        let changes = [update(0, 4), update(1, 6)];
        let refs: Vec<&Change> = changes.iter().collect();
        assert_eq!(shape(&fold(&refs)), ["node_pool.gpu-0", "node_pool.gpu-1"]);
        // Different reasons: each replacement is shown.
        let mut a = update(0, 4);
        a.action = Action::Replace;
        a.reason = Some("tainted".into());
        let mut b = update(1, 4);
        b.action = Action::Replace;
        b.reason = Some("its cluster is replaced".into());
        let changes = [a, b];
        let refs: Vec<&Change> = changes.iter().collect();
        assert_eq!(fold(&refs).len(), 2);
        // The very same change: nothing is hidden by folding it.
        let changes = [update(0, 4), update(1, 4)];
        let refs: Vec<&Change> = changes.iter().collect();
        assert_eq!(
            shape(&fold(&refs)),
            ["node_pool.gpu-0", "+node_pool.gpu-1 (name)"]
        );
    }

    #[test]
    fn lists_members_that_do_not_count_up_by_name() {
        let changes: Vec<Change> = [0, 2, 3, 5, 6].into_iter().map(firewall).collect();
        let refs: Vec<&Change> = changes.iter().collect();
        assert_eq!(
            members(&refs[1..]),
            "firewall.gpu-2-internal, firewall.gpu-3-internal, firewall.gpu-5-internal, firewall.gpu-6-internal"
        );
    }
}
