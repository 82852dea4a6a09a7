//! `[[queue]]` rules: the Kueue queues teams use, each a ClusterQueue with a share of one GPU
//! pool's GPUs and a LocalQueue of the same name in the team's namespace. The objects are built
//! in [`crate::graph::kueue`].
//!
//! Kueue's own rules, checked here so `validate` says them with the line (kubernetes-sigs/kueue
//! v0.17 `apis/kueue/v1beta2/clusterqueue_types.go` and
//! <https://kueue.sigs.k8s.io/docs/concepts/cluster_queue/>): a `borrowingLimit` or
//! `lendingLimit` needs a cohort (refused by Kueue's validation when `cohortName` is empty, v0.6.0
//! release notes, kubernetes-sigs/kueue#1525), and a `lendingLimit` is at most the
//! `nominalQuota`. Names are Kubernetes names (DNS-1123 labels here, the stricter form).
//!
//! a3ctl's own rule, the capacity issue's invariant: **over the queues of a GPU pool, the `gpus`
//! add up to exactly the pool's GPUs** (`nodes` × GPUs per node). More would let Kueue admit jobs
//! whose pods then wait for GPUs that are not there; fewer would leave GPUs that no queue can
//! admit anything onto (Kueue admits only within nominal quota plus what a cohort lends). So when
//! a pool grows or shrinks, the blueprint's queues must be re-balanced in the same edit, and until
//! they are, `validate` names the pool, both sums and the queues to change. Explicit numbers rather
//! than shares: a platform engineer promises a team GPUs, and a resize that silently changed every
//! team's promise would surprise both.
//!
//! With no `[[queue]]`, nothing changes: one ClusterQueue (`[software.kueue] queue`) holds every
//! GPU. With queues, that key names the declared queue `verify --nccl-test` and the `kueue_queue`
//! output use (the first declared queue when unset).

use std::collections::BTreeMap;

use super::decode::Sp;
use super::error::Finding;
use super::model::{GpuPool, Queue};
use super::names;
use super::pools::CheckedPool;
use super::schema::{RawBlueprint, RawQueue};
use super::validate::{Ctx, name_ok};

const NAME_HELP: &str = "Kubernetes names: lowercase letters, digits and hyphens, starting and ending with a letter or digit, at most 63 characters";

/// The declared queues, or `None` when one of them is invalid (each problem recorded in `ctx`).
pub(crate) fn queues(
    raw: &RawBlueprint,
    pools: &[CheckedPool],
    ctx: &mut Ctx,
) -> Option<Vec<Queue>> {
    if raw.queues.is_empty() {
        return Some(Vec::new());
    }
    let f = &mut ctx.f;
    let kueue = &raw.software.kueue;
    if let Some(enabled) = kueue.enabled.as_ref().filter(|e| !e.value) {
        f.push(
            Finding::new(
                raw.queues[0].anchor.clone(),
                "`[[queue]]` declares Kueue queues, but Kueue is disabled",
                "needs Kueue",
            )
            .also(enabled.span.clone(), "disabled here")
            .help("remove `enabled = false` from `[software.kueue]`, or remove the `[[queue]]` sections"),
        );
        return None;
    }
    let pool_names: Vec<&str> = pools
        .iter()
        .filter_map(|p| p.name.as_ref().map(Sp::as_str))
        .collect();
    let mut ok = true;
    let mut out = Vec::new();
    let mut seen: BTreeMap<String, std::ops::Range<usize>> = BTreeMap::new();
    for q in &raw.queues {
        match one(q, &pool_names, f) {
            Some(queue) => {
                let name = q.name.as_ref().expect("a valid queue has a name");
                if let Some(first) = seen.get(&queue.name) {
                    f.push(
                        Finding::new(
                            name.span.clone(),
                            format!("Queue `{}` is declared twice", queue.name),
                            "duplicate",
                        )
                        .also(first.clone(), "first declared here")
                        .help("each `[[queue]]` is one ClusterQueue: give it another `name`"),
                    );
                    ok = false;
                    continue;
                }
                seen.insert(queue.name.clone(), name.span.clone());
                out.push(queue);
            }
            None => ok = false,
        }
    }
    if let Some(chosen) = &kueue.queue
        && ok
        && !out.iter().any(|q| q.name == chosen.value)
    {
        let declared: Vec<String> = out.iter().map(|q| q.name.clone()).collect();
        f.push(
            Finding::new(
                chosen.span.clone(),
                format!(
                    "Kueue queue `{}` is not one of the declared `[[queue]]`s",
                    chosen.value
                ),
                "not declared",
            )
            .help(format!(
                "with `[[queue]]` sections, `queue` names the one `verify --nccl-test` submits to: one of {}, or remove it to use the first",
                super::validate::backticked(&declared)
            )),
        );
        ok = false;
    }
    if ok {
        let models: Vec<&GpuPool> = pools.iter().filter_map(|p| p.model.as_ref()).collect();
        // Only when every pool is valid: a pool with a problem has no GPU count to compare.
        if models.len() == pools.len() {
            ok = balanced(raw, &out, pools, f);
        }
    }
    ok.then_some(out)
}

/// `software` with `[software.kueue] queue` defaulting to the first declared queue, when the
/// blueprint declares queues and does not name one.
pub(crate) fn with_job_queue(
    mut software: super::model::Software,
    queues: Option<&[Queue]>,
    raw: &RawBlueprint,
) -> super::model::Software {
    if let Some([first, ..]) = queues
        && raw.software.kueue.queue.is_none()
    {
        software.kueue.queue = first.name.clone();
    }
    software
}

/// One queue on its own, with its defaults.
fn one(q: &RawQueue, pools: &[&str], f: &mut super::error::Findings) -> Option<Queue> {
    let name = q.name.as_ref()?;
    let mut ok = name_ok(
        f,
        name,
        "Queue name",
        names::dns1123_label(name.as_str(), 63),
        NAME_HELP,
    );
    for (key, value) in [("namespace", &q.namespace), ("cohort", &q.cohort)] {
        if let Some(value) = value {
            ok &= name_ok(
                f,
                value,
                &format!("Queue `{key}`"),
                names::dns1123_label(value.as_str(), 63),
                NAME_HELP,
            );
        }
    }
    let pool = match (&q.pool, pools) {
        (Some(pool), _) if pools.contains(&pool.as_str()) => Some(pool.value.clone()),
        (Some(pool), _) => {
            f.push(
                Finding::new(
                    pool.span.clone(),
                    format!(
                        "Queue `{}` draws on pool `{}`, which is not a GPU pool of the blueprint",
                        name.value, pool.value
                    ),
                    "unknown pool",
                )
                .help(format!(
                    "name one of the `[[gpu_pool]]`s: {}",
                    super::decode::quoted_list(pools)
                )),
            );
            None
        }
        (None, [only]) => Some(only.to_string()),
        (None, []) => None,
        (None, _) => {
            f.push(
                Finding::new(
                    name.span.clone(),
                    format!(
                        "Queue `{}` does not say which GPU pool its `gpus` are of",
                        name.value
                    ),
                    "which pool?",
                )
                .help(format!(
                    "the blueprint has several GPU pools: add `pool = \"…\"` with one of {}",
                    super::decode::quoted_list(pools)
                )),
            );
            None
        }
    };
    let count = |value: &Option<Sp<i64>>, key: &str, f: &mut super::error::Findings| match value {
        None => Some(None),
        Some(v) if (0..=i64::from(u32::MAX)).contains(&v.value) => Some(Some(v.value as u32)),
        Some(v) => {
            f.push(
                Finding::new(
                    v.span.clone(),
                    format!("Queue `{key}` must be a number of GPUs, 0 or more"),
                    "out of range",
                )
                .help("a count of `nvidia.com/gpu`"),
            );
            None
        }
    };
    let gpus = count(&q.gpus, "gpus", f).flatten();
    let borrowing = count(&q.borrowing_limit, "borrowing_limit", f);
    let lending = count(&q.lending_limit, "lending_limit", f);
    if q.cohort.is_none() {
        for (key, value) in [
            ("borrowing_limit", &q.borrowing_limit),
            ("lending_limit", &q.lending_limit),
        ] {
            if let Some(value) = value {
                f.push(
                    Finding::new(
                        value.span.clone(),
                        format!("Queue `{}` has a `{key}` but no cohort", name.value),
                        "needs `cohort`",
                    )
                    .help("queues borrow and lend only within a cohort (Kueue refuses a limit without one): add `cohort = \"…\"`, shared with the queues it borrows from, or remove the limit"),
                );
                ok = false;
            }
        }
    }
    if let (Some(Some(lend)), Some(gpus), Some(value)) = (lending, gpus, &q.lending_limit)
        && lend > gpus
    {
        f.push(
            Finding::new(
                value.span.clone(),
                format!(
                    "Queue `{}` lends up to {lend} GPUs but has {gpus}",
                    name.value
                ),
                "more than `gpus`",
            )
            .help(format!(
                "Kueue refuses a `lendingLimit` above the nominal quota: at most {gpus}"
            )),
        );
        ok = false;
    }
    for (key, value) in [("cpu", &q.cpu), ("memory", &q.memory)] {
        if let Some(value) = value
            && !is_quantity(value.as_str())
        {
            f.push(
                Finding::new(
                    value.span.clone(),
                    format!(
                        "Queue `{key}` `{}` is not a Kubernetes quantity",
                        value.value
                    ),
                    "not a quantity",
                )
                .help(if key == "cpu" {
                    "cores as a string, e.g. `cpu = \"96\"` or `cpu = \"1500m\"`"
                } else {
                    "bytes as a string, e.g. `memory = \"1Ti\"` or `memory = \"512Gi\"`"
                }),
            );
            ok = false;
        }
    }
    let (pool, gpus, borrowing, lending) = (pool?, gpus?, borrowing?, lending?);
    ok.then(|| Queue {
        name: name.value.clone(),
        namespace: q
            .namespace
            .as_ref()
            .map_or_else(|| name.value.clone(), |n| n.value.clone()),
        cohort: q.cohort.as_ref().map(|c| c.value.clone()),
        pool,
        gpus,
        borrowing_limit: borrowing,
        lending_limit: lending,
        cpu: q.cpu.as_ref().map(|v| v.value.clone()),
        memory: q.memory.as_ref().map(|v| v.value.clone()),
    })
}

/// A Kubernetes quantity without exponent: digits, an optional fraction, an optional suffix
/// (`k8s.io/apimachinery/pkg/api/resource` `Quantity`: decimal SI and binary suffixes).
fn is_quantity(text: &str) -> bool {
    const SUFFIXES: [&str; 13] = [
        "", "m", "k", "M", "G", "T", "P", "E", "Ki", "Mi", "Gi", "Ti", "Pi",
    ];
    let number_end = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(text.len());
    let (number, suffix) = text.split_at(number_end);
    let mut parts = number.split('.');
    let whole = parts.next().unwrap_or_default();
    let fraction = parts.next();
    parts.next().is_none()
        && !whole.is_empty()
        && fraction.is_none_or(|f| !f.is_empty())
        && (SUFFIXES.contains(&suffix) || suffix == "Ei")
}

/// The capacity invariant: per GPU pool, the queues' `gpus` add up to the pool's GPUs.
fn balanced(
    raw: &RawBlueprint,
    queues: &[Queue],
    pools: &[CheckedPool],
    f: &mut super::error::Findings,
) -> bool {
    let mut ok = true;
    for (raw_pool, checked) in raw.gpu_pools.iter().zip(pools) {
        let Some(pool) = &checked.model else { continue };
        let mine: Vec<(&Queue, &RawQueue)> = queues
            .iter()
            .zip(raw.queues.iter())
            .filter(|(q, _)| q.pool == pool.name)
            .collect();
        let sum: u64 = mine.iter().map(|(q, _)| u64::from(q.gpus)).sum();
        let have = u64::from(pool.gpus());
        if sum == have {
            continue;
        }
        ok = false;
        let per_node = pool.family.gpus_per_node();
        let shares: Vec<String> = mine
            .iter()
            .map(|(q, _)| format!("`{}` {}", q.name, q.gpus))
            .collect();
        let (span, what) = match mine.first() {
            Some((_, raw_queue)) => (
                raw_queue
                    .gpus
                    .as_ref()
                    .map_or(raw_queue.anchor.clone(), |g| g.span.clone()),
                format!(
                    "The queues of pool `{}` hold {sum} GPUs ({}), the pool has {have}",
                    pool.name,
                    shares.join(", ")
                ),
            ),
            None => (
                raw.queues[0].anchor.clone(),
                format!("No queue holds the {have} GPUs of pool `{}`", pool.name),
            ),
        };
        let mut finding = Finding::new(span, what, format!("{sum} of {have} GPUs"));
        for (_, raw_queue) in mine.iter().skip(1) {
            if let Some(g) = &raw_queue.gpus {
                finding = finding.also(g.span.clone(), "also of this pool");
            }
        }
        if let Some(nodes) = &raw_pool.nodes {
            finding = finding.also(
                nodes.span.clone(),
                format!("{} nodes × {per_node} GPUs", pool.nodes),
            );
        }
        let fix = if sum > have {
            format!("lower the queues' `gpus` by {} in all", sum - have)
        } else {
            format!("give the queues {} more `gpus` in all", have - sum)
        };
        f.push(finding.help(format!(
            "over a pool's queues, `gpus` must add up to its GPUs: more would admit jobs onto GPUs that are not there, fewer would leave GPUs no queue can use; {fix} (a queue in a cohort may still borrow unused ones), or set the pool's `nodes` to {}",
            if sum.is_multiple_of(u64::from(per_node)) {
                format!("{}", sum / u64::from(per_node))
            } else {
                format!("match (a multiple of {per_node} GPUs)")
            }
        )));
    }
    ok
}

#[cfg(test)]
mod tests {
    use crate::blueprint::parse;
    use crate::blueprint::testing::{BASE, one_problem, problems};

    /// `BASE` (one pool `a3mega`, 2 nodes: 16 GPUs) with `queues` appended.
    fn with(queues: &str) -> String {
        format!("{BASE}\n{queues}")
    }

    const TWO_TEAMS: &str = r#"[[queue]]
name = "team-a"
cohort = "research"
gpus = 8
borrowing_limit = 8

[[queue]]
name = "team-b"
namespace = "research-b"
cohort = "research"
gpus = 8
lending_limit = 4
cpu = "200"
memory = "1Ti"
"#;

    #[test]
    fn two_teams_in_a_cohort_split_the_pool_with_defaults_filled_in() {
        let bp = parse(&with(TWO_TEAMS), "t").expect("valid");
        assert_eq!(bp.queues.len(), 2);
        let (a, b) = (&bp.queues[0], &bp.queues[1]);
        assert_eq!(
            (
                a.namespace.as_str(),
                a.pool.as_str(),
                a.gpus,
                a.borrowing_limit
            ),
            ("team-a", "a3mega", 8, Some(8))
        );
        assert_eq!(
            (
                b.namespace.as_str(),
                b.lending_limit,
                b.cpu.as_deref(),
                b.memory.as_deref()
            ),
            ("research-b", Some(4), Some("200"), Some("1Ti"))
        );
        // The queue verify's NCCL test uses is the first declared one.
        assert_eq!(bp.software.kueue.queue, "team-a");
        // None declared: today's one queue.
        assert!(parse(BASE, "t").unwrap().queues.is_empty());
    }

    #[test]
    fn quotas_that_do_not_add_up_to_the_pool_name_both_sums_and_the_fix() {
        let over = with(&TWO_TEAMS.replace("gpus = 8\nlending", "gpus = 16\nlending"));
        let problem = one_problem(
            &over,
            "The queues of pool `a3mega` hold 24 GPUs (`team-a` 8, `team-b` 16), the pool has 16",
            14,
            8,
        );
        let help = problem.help.unwrap();
        assert!(
            help.contains("lower the queues' `gpus` by 8 in all"),
            "{help}"
        );
        assert!(help.contains("set the pool's `nodes` to 3"), "{help}");
        // A pool grown without its queues: the sum is short.
        let grown = with(TWO_TEAMS).replace("nodes = 2", "nodes = 4");
        let problem = one_problem(
            &grown,
            "hold 16 GPUs (`team-a` 8, `team-b` 8), the pool has 32",
            14,
            8,
        );
        assert!(
            problem
                .help
                .unwrap()
                .contains("give the queues 16 more `gpus` in all")
        );
    }

    #[test]
    fn kueue_rules_are_said_with_the_line() {
        one_problem(
            &with("[[queue]]\nname = \"solo\"\ngpus = 16\nborrowing_limit = 8\n"),
            "Queue `solo` has a `borrowing_limit` but no cohort",
            14,
            19,
        );
        one_problem(
            &with("[[queue]]\nname = \"solo\"\ncohort = \"c\"\ngpus = 16\nlending_limit = 17\n"),
            "Queue `solo` lends up to 17 GPUs but has 16",
            15,
            17,
        );
        one_problem(
            &with("[[queue]]\nname = \"Team-A\"\ngpus = 16\n"),
            "Queue name `Team-A` is not valid",
            12,
            8,
        );
        one_problem(
            &with("[[queue]]\nname = \"a\"\ngpus = 16\ncpu = \"lots\"\n"),
            "Queue `cpu` `lots` is not a Kubernetes quantity",
            14,
            7,
        );
        one_problem(
            &with("[[queue]]\nname = \"a\"\npool = \"a3megaa\"\ngpus = 16\n"),
            "draws on pool `a3megaa`, which is not a GPU pool",
            13,
            8,
        );
        let twice =
            with("[[queue]]\nname = \"a\"\ngpus = 8\n\n[[queue]]\nname = \"a\"\ngpus = 8\n");
        one_problem(&twice, "Queue `a` is declared twice", 16, 8);
        let off = BASE.replace(
            "[[gpu_pool]]",
            "[software.kueue]\nenabled = false\n\n[[gpu_pool]]",
        );
        one_problem(
            &format!("{off}\n[[queue]]\nname = \"a\"\ngpus = 16\n"),
            "Kueue is disabled",
            14,
            1,
        );
        let named = BASE.replace(
            "[[gpu_pool]]",
            "[software.kueue]\nqueue = \"team-z\"\n\n[[gpu_pool]]",
        );
        one_problem(
            &format!("{named}\n[[queue]]\nname = \"a\"\ngpus = 16\n"),
            "Kueue queue `team-z` is not one of the declared",
            7,
            9,
        );
        assert!(
            problems(&with(
                "[[queue]]\nname = \"a\"\ngpus = 16\nmemory = \"1.5Ti\"\n"
            ))
            .is_empty()
        );
    }
}
