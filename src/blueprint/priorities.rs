//! `[[priority]]` rules: the Kueue WorkloadPriorityClasses teams' jobs select. The objects are
//! built in [`crate::graph::kueue`].
//!
//! A WorkloadPriorityClass (<https://kueue.sigs.k8s.io/docs/concepts/workload_priority_class/>,
//! kubernetes-sigs/kueue v0.17.1 `apis/kueue/v1beta2/workloadpriorityclass_types.go`) is a
//! cluster-scoped object with an int32 `value` and a `description` of at most 2048 characters;
//! a job selects one with the label `kueue.x-k8s.io/priority-class: <name>`, and its Workload gets
//! that priority, which orders the ClusterQueue's pending workloads and decides what it may
//! preempt. It leaves the pods' own priority alone (that is the scheduling.k8s.io PriorityClasses',
//! [`crate::graph::kueue::PRIORITY_CLASSES`]).
//!
//! Checked here so `validate` says them with the line: names are unique, and DNS-1123 labels —
//! stricter than an object name needs, because the name is also a label value on every job that
//! uses it (at most 63 characters,
//! <https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#syntax-and-character-set>);
//! `value` fits an int32; `description` fits Kueue's limit; and Kueue is on.

use std::collections::BTreeMap;

use super::error::{Finding, Findings};
use super::model::Priority;
use super::names;
use super::schema::{RawBlueprint, RawPriority};
use super::validate::name_ok;

/// Kueue's limit on a WorkloadPriorityClass's `description` (its CRD's `maxLength`).
const DESCRIPTION_MAX: usize = 2048;

const NAME_HELP: &str = "the name is also the value of the `kueue.x-k8s.io/priority-class` label jobs carry: lowercase letters, digits and hyphens, starting and ending with a letter or digit, at most 63 characters";

/// The declared priority classes, or `None` when one of them is invalid (each problem recorded
/// in `f`).
pub(crate) fn priorities(raw: &RawBlueprint, f: &mut Findings) -> Option<Vec<Priority>> {
    let Some(first) = raw.priorities.first() else {
        return Some(Vec::new());
    };
    if let Some(enabled) = raw.software.kueue.enabled.as_ref().filter(|e| !e.value) {
        f.push(
            Finding::new(
                first.anchor.clone(),
                "`[[priority]]` declares Kueue WorkloadPriorityClasses, but Kueue is disabled",
                "needs Kueue",
            )
            .also(enabled.span.clone(), "disabled here")
            .help("remove `enabled = false` from `[software.kueue]`, or remove the `[[priority]]` sections"),
        );
        return None;
    }
    let mut ok = true;
    let mut out = Vec::new();
    let mut seen: BTreeMap<String, std::ops::Range<usize>> = BTreeMap::new();
    for raw_priority in &raw.priorities {
        let Some(priority) = one(raw_priority, f) else {
            ok = false;
            continue;
        };
        let name = raw_priority
            .name
            .as_ref()
            .expect("a valid class has a name");
        if let Some(first) = seen.get(&priority.name) {
            f.push(
                Finding::new(
                    name.span.clone(),
                    format!("Priority class `{}` is declared twice", priority.name),
                    "duplicate",
                )
                .also(first.clone(), "first declared here")
                .help("each `[[priority]]` is one WorkloadPriorityClass: give it another `name`, or remove one"),
            );
            ok = false;
            continue;
        }
        seen.insert(priority.name.clone(), name.span.clone());
        out.push(priority);
    }
    ok.then_some(out)
}

/// One class on its own.
fn one(raw: &RawPriority, f: &mut Findings) -> Option<Priority> {
    let name = raw.name.as_ref()?;
    let mut ok = name_ok(
        f,
        name,
        "Priority class name",
        names::dns1123_label(name.as_str(), 63),
        NAME_HELP,
    );
    let value = raw.value.as_ref()?;
    let int32 = i32::try_from(value.value).ok();
    if int32.is_none() {
        f.push(
            Finding::new(
                value.span.clone(),
                format!(
                    "Priority class `{}` has value {}, outside what Kueue stores",
                    name.value, value.value
                ),
                "not an int32",
            )
            .help(format!(
                "a WorkloadPriorityClass's `value` is a 32-bit integer: {} to {}; higher values are admitted first",
                i32::MIN,
                i32::MAX
            )),
        );
        ok = false;
    }
    if let Some(description) = &raw.description
        && description.value.chars().count() > DESCRIPTION_MAX
    {
        f.push(
            Finding::new(
                description.span.clone(),
                format!(
                    "Priority class `{}` has a description of {} characters",
                    name.value,
                    description.value.chars().count()
                ),
                "too long",
            )
            .help(format!(
                "Kueue keeps at most {DESCRIPTION_MAX} characters: shorten it"
            )),
        );
        ok = false;
    }
    let value = int32?;
    ok.then(|| Priority {
        name: name.value.clone(),
        value,
        description: raw.description.as_ref().map(|d| d.value.clone()),
    })
}

#[cfg(test)]
mod tests {
    use crate::blueprint::parse;
    use crate::blueprint::testing::{BASE, one_problem, problems};

    /// `BASE` (one pool `a3mega`) with `priorities` appended: `BASE` has 9 lines and a blank one
    /// follows, so the first appended line is line 11.
    fn with(priorities: &str) -> String {
        format!("{BASE}\n{priorities}")
    }

    const TWO: &str = r#"[[priority]]
name = "production"
value = 1000
description = "Jobs a release waits for"

[[priority]]
name = "dev"
value = -10
"#;

    #[test]
    fn declared_classes_keep_their_order_values_and_descriptions() {
        let bp = parse(&with(TWO), "t").expect("valid");
        let got: Vec<(&str, i32, Option<&str>)> = bp
            .priorities
            .iter()
            .map(|p| (p.name.as_str(), p.value, p.description.as_deref()))
            .collect();
        assert_eq!(
            got,
            [
                ("production", 1000, Some("Jobs a release waits for")),
                ("dev", -10, None)
            ]
        );
        assert!(parse(BASE, "t").unwrap().priorities.is_empty());
        // The int32 bounds themselves are fine.
        assert!(
            problems(&with(&format!(
                "[[priority]]\nname = \"a\"\nvalue = {}\n\n[[priority]]\nname = \"b\"\nvalue = {}\n",
                i32::MIN,
                i32::MAX
            )))
            .is_empty()
        );
    }

    #[test]
    fn each_rule_is_said_with_the_line_and_a_fix() {
        let twice = with(&format!("{TWO}\n[[priority]]\nname = \"dev\"\nvalue = 5\n"));
        let problem = one_problem(&twice, "Priority class `dev` is declared twice", 21, 8);
        assert!(problem.help.unwrap().contains("give it another `name`"));

        let problem = one_problem(
            &with("[[priority]]\nname = \"Prod_1\"\nvalue = 1\n"),
            "Priority class name `Prod_1` is not valid: `P` is not allowed",
            12,
            8,
        );
        assert!(
            problem
                .help
                .unwrap()
                .contains("`kueue.x-k8s.io/priority-class` label")
        );
        one_problem(
            &with(&format!(
                "[[priority]]\nname = \"{}\"\nvalue = 1\n",
                "p".repeat(64)
            )),
            "is 64 characters long, the limit is 63",
            12,
            8,
        );

        let problem = one_problem(
            &with("[[priority]]\nname = \"huge\"\nvalue = 2147483648\n"),
            "Priority class `huge` has value 2147483648, outside what Kueue stores",
            13,
            9,
        );
        assert!(problem.help.unwrap().contains("-2147483648 to 2147483647"));
        one_problem(
            &with("[[priority]]\nname = \"tiny\"\nvalue = -2147483649\n"),
            "has value -2147483649",
            13,
            9,
        );

        one_problem(
            &with(&format!(
                "[[priority]]\nname = \"a\"\nvalue = 1\ndescription = \"{}\"\n",
                "x".repeat(2049)
            )),
            "Priority class `a` has a description of 2049 characters",
            14,
            15,
        );

        one_problem(&with("[[priority]]\nname = \"a\"\n"), "`value`", 11, 1);
        one_problem(
            &with("[[priority]]\nname = \"a\"\nvalue = 1\nweight = 2\n"),
            "weight",
            14,
            1,
        );

        let off = BASE.replace(
            "[[gpu_pool]]",
            "[software.kueue]\nenabled = false\n\n[[gpu_pool]]",
        );
        one_problem(
            &format!("{off}\n[[priority]]\nname = \"a\"\nvalue = 1\n"),
            "declares Kueue WorkloadPriorityClasses, but Kueue is disabled",
            14,
            1,
        );
    }
}
