//! Narrowing a plan to some of its resources: `--target` and `--exclude`, as Terraform's. No I/O.
//!
//! An address is exact (`cluster.main`) or every resource of a kind (`node_pool.*`). The rules,
//! with "depends on" meaning the dependencies the blueprint declares and those state recorded:
//!
//! Apply (and plan):
//! - a target brings everything it depends on, transitively (those must exist first);
//! - a resource the plan replaces or deletes brings the existing dependents the plan changes
//!   (they are replaced or deleted first, or stop referring to it first), and those bring their
//!   dependencies in turn;
//! - an exclusion leaves out the address and everything that depends on it (what depends on a
//!   resource cannot be applied without it);
//! - without a target, everything not excluded is selected.
//!
//! Destroy:
//! - a target brings everything that depends on it, transitively (they must be destroyed first);
//! - an exclusion keeps the address and everything it depends on (a kept resource keeps what it
//!   stands on: a kept subnet keeps its network);
//! - without a target, everything not kept is destroyed;
//! - a GPU pool destroyed while the Kueue ClusterQueue stays takes its flavor's GPU quota down to
//!   0 first: the plan gains an update of the queue, which the schedule runs before the delete.
//!
//! Queues follow nodes (apply): a Kueue ClusterQueue whose GPU quota for a pool's flavor changes
//! while the plan updates that pool ([`super::QuotaLink`]) goes with the pool: targeting the pool
//! brings the queue, targeting the queue brings the pool, and excluding the pool leaves the
//! queue's update out (its quota keeps following the nodes that exist). Excluding the queue while
//! the pool changes is a conflict. A queue the plan creates with quota for a pool it creates or
//! completes stands on that pool (excluding the pool leaves the queue out, targeting the queue
//! brings the pool), but targeting the pool does not bring it, and excluding it is no conflict:
//! a queue not yet made promises no GPUs.
//!
//! A selected resource that an exclusion leaves out is a conflict, refused with the chain that
//! links them, rather than silently dropping the target. An address that names nothing in the
//! plan is refused with the closest one.

use super::{Action, Plan};
use crate::resource::{Addr, Kind};
use crate::state::State;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet, VecDeque};

/// What `--target` / `--exclude` asked for, as typed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Request {
    pub targets: Vec<String>,
    pub excludes: Vec<String>,
}

impl Request {
    pub fn is_empty(&self) -> bool {
        self.targets.is_empty() && self.excludes.is_empty()
    }
}

/// How a plan was narrowed, kept with it (and in a saved plan) so it can say it is partial.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Selection {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub targets: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub excludes: Vec<String>,
    /// Resources the full plan would change that this plan leaves out.
    #[serde(default)]
    pub left_out: Vec<Addr>,
}

impl Selection {
    /// The flags, as they would be typed again: `--target a --exclude b`.
    pub fn flags(&self) -> String {
        self.targets
            .iter()
            .map(|t| format!("--target {t}"))
            .chain(self.excludes.iter().map(|e| format!("--exclude {e}")))
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// Why a selection is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct SelectError {
    pub message: String,
    pub hint: String,
}

/// An address pattern: one resource, or every resource of a kind.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Pattern {
    Exact(Addr),
    Kind(Kind),
}

impl Pattern {
    /// `kind.name` or `kind.*`.
    pub fn parse(text: &str) -> Result<Pattern, String> {
        let text = text.trim();
        if let Some(kind) = text.strip_suffix(".*") {
            return Kind::ALL
                .iter()
                .copied()
                .find(|k| k.as_str() == kind)
                .map(Pattern::Kind)
                .ok_or_else(|| {
                    format!(
                        "`{text}` is not a resource address: `{kind}` is not a kind (kinds: {})",
                        Kind::ALL
                            .iter()
                            .map(|k| k.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    )
                });
        }
        text.parse::<Addr>()
            .map(Pattern::Exact)
            .map_err(|e| e.to_string())
    }

    fn matches(&self, addr: &Addr) -> bool {
        match self {
            Pattern::Exact(a) => a == addr,
            Pattern::Kind(k) => addr.kind == *k,
        }
    }
}

/// The address in `candidates` closest to `text`, when one is close enough to be a typo.
pub fn closest<'a>(text: &str, candidates: impl Iterator<Item = &'a Addr>) -> Option<&'a Addr> {
    candidates
        .map(|a| (strsim::levenshtein(&a.to_string(), text), a))
        .min_by_key(|(distance, _)| *distance)
        .filter(|(distance, _)| *distance <= 3.max(text.chars().count() / 4))
        .map(|(_, a)| a)
}

/// Resolves each text of `flag` against the plan's addresses.
fn resolve(
    flag: &str,
    texts: &[String],
    universe: &BTreeSet<Addr>,
    listing: &str,
) -> Result<BTreeSet<Addr>, SelectError> {
    let mut out = BTreeSet::new();
    for text in texts {
        let pattern = Pattern::parse(text).map_err(|message| SelectError {
            message: format!("--{flag} {text}: {message}"),
            hint: format!(
                "write an address as `<kind>.<name>` (or `<kind>.*` for every resource of a kind); {listing}"
            ),
        })?;
        let matched: Vec<&Addr> = universe.iter().filter(|a| pattern.matches(a)).collect();
        if matched.is_empty() {
            let hint = match closest(text, universe.iter()) {
                Some(a) => format!("did you mean `{a}`?"),
                None => listing.to_string(),
            };
            return Err(SelectError {
                message: format!("--{flag} {text}: no resource `{text}` in this plan"),
                hint,
            });
        }
        out.extend(matched.into_iter().cloned());
    }
    Ok(out)
}

/// How a resource came to be selected or excluded: from which address, and whether by an edge
/// that is not a plain dependency (a replacement taking its dependents along).
#[derive(Debug, Clone)]
struct Via {
    from: Option<Addr>,
    takes_along: bool,
}

/// Narrows `plan` (made from `state`) to `request`. Returns `None` when nothing was asked, and
/// the selection recorded for the plan otherwise. `listing` is the hint that says how to list
/// the addresses (e.g. "`a3ctl graph FILE` lists them").
pub fn select(
    plan: &mut Plan,
    state: &State,
    request: &Request,
    listing: &str,
) -> Result<Option<Selection>, SelectError> {
    if request.is_empty() {
        return Ok(None);
    }
    let universe: BTreeSet<Addr> = plan
        .changes
        .iter()
        .map(|c| c.addr.clone())
        .chain(plan.adoptions.iter().map(|a| a.addr.clone()))
        .collect();
    let targets = resolve("target", &request.targets, &universe, listing)?;
    let excludes = resolve("exclude", &request.excludes, &universe, listing)?;

    // Edges: dependency → dependents, and dependent → dependencies.
    let mut dependencies: BTreeMap<&Addr, BTreeSet<&Addr>> = BTreeMap::new();
    let mut dependents: BTreeMap<&Addr, BTreeSet<&Addr>> = BTreeMap::new();
    let recorded = |a: &Addr| {
        state
            .resources
            .get(a)
            .map(|r| r.dependencies.clone())
            .unwrap_or_default()
    };
    let mut edges: Vec<(Addr, Addr)> = Vec::new();
    for c in &plan.changes {
        for d in c.dependencies.iter().cloned().chain(recorded(&c.addr)) {
            edges.push((c.addr.clone(), d));
        }
    }
    for a in &plan.adoptions {
        for d in &a.dependencies {
            edges.push((a.addr.clone(), d.clone()));
        }
    }
    // Queues follow nodes: a ClusterQueue whose quota follows a pool's resize stands on the pool
    // (excluding the pool leaves the quota out too), and the pool brings the queue along below.
    let links = if plan.destroy {
        vec![]
    } else {
        plan.quota_links()
    };
    for link in &links {
        edges.push((link.queue.clone(), link.pool.clone()));
    }
    for (from, to) in &edges {
        if let (Some(from), Some(to)) = (universe.get(from), universe.get(to)) {
            dependencies.entry(from).or_default().insert(to);
            dependents.entry(to).or_default().insert(from);
        }
    }
    let action: BTreeMap<&Addr, Action> =
        plan.changes.iter().map(|c| (&c.addr, c.action)).collect();
    // A dependent that exists and changes: it is replaced or deleted first, or stops referring
    // first (a dependent being created can wait).
    let changes = |a: &Addr| {
        matches!(
            action.get(a),
            Some(Action::Update | Action::Replace | Action::Delete)
        )
    };
    let goes_first =
        |a: &Addr| matches!(action.get(a), Some(Action::Replace) | Some(Action::Delete));
    // A queue still to be created has no quota to leave behind its pool: it waits for the pool
    // (the edge above) but is not brought along by it.
    let updates = |a: &Addr| action.get(a) == Some(&Action::Update);
    let destroy = plan.destroy;
    let (forward, backward) = if destroy {
        (&dependents, &dependencies)
    } else {
        (&dependencies, &dependents)
    };

    // What the exclusions leave out, each with the way it was reached.
    let mut excluded: BTreeMap<Addr, Via> = BTreeMap::new();
    let mut queue: VecDeque<Addr> = VecDeque::new();
    for e in &excludes {
        excluded.insert(
            e.clone(),
            Via {
                from: None,
                takes_along: false,
            },
        );
        queue.push_back(e.clone());
    }
    while let Some(a) = queue.pop_front() {
        for next in backward.get(&a).into_iter().flatten() {
            if !excluded.contains_key(*next) {
                excluded.insert(
                    (*next).clone(),
                    Via {
                        from: Some(a.clone()),
                        takes_along: false,
                    },
                );
                queue.push_back((*next).clone());
            }
        }
    }

    // What is selected, each with the way it was reached.
    let mut selected: BTreeMap<Addr, Via> = BTreeMap::new();
    let roots: Vec<Addr> = if targets.is_empty() {
        universe
            .iter()
            .filter(|a| !excluded.contains_key(*a))
            .cloned()
            .collect()
    } else {
        targets.iter().cloned().collect()
    };
    for r in roots {
        selected.insert(
            r.clone(),
            Via {
                from: None,
                takes_along: false,
            },
        );
        queue.push_back(r);
    }
    while let Some(a) = queue.pop_front() {
        let mut next: Vec<(Addr, bool)> = forward
            .get(&a)
            .into_iter()
            .flatten()
            .map(|n| ((*n).clone(), false))
            .collect();
        next.extend(
            links
                .iter()
                .filter(|l| l.pool == a && updates(&l.queue))
                .map(|l| (l.queue.clone(), true)),
        );
        if !destroy && goes_first(&a) {
            next.extend(
                dependents
                    .get(&a)
                    .into_iter()
                    .flatten()
                    .filter(|n| changes(n))
                    .map(|n| ((*n).clone(), true)),
            );
        }
        for (n, takes_along) in next {
            if !selected.contains_key(&n) {
                selected.insert(
                    n.clone(),
                    Via {
                        from: Some(a.clone()),
                        takes_along,
                    },
                );
                queue.push_back(n);
            }
        }
    }

    if let Some(link) = links
        .iter()
        .find(|l| selected.contains_key(&l.pool) && excluded.contains_key(&l.queue))
    {
        let (left, _) = chain(&link.queue, &excluded);
        let exclusion = left.first().cloned().unwrap_or_else(|| link.queue.clone());
        return Err(SelectError {
            message: format!(
                "`--exclude {exclusion}` conflicts with the change of {pool}: the GPU quota of {queue} follows {pool}'s size, so the two are applied together",
                pool = link.pool,
                queue = link.queue,
            ),
            hint: format!("drop that --exclude, or exclude {} too", link.pool),
        });
    }
    if let Some(conflict) = selected.keys().find(|a| excluded.contains_key(*a)) {
        return Err(conflict_error(
            conflict,
            &selected,
            &excluded,
            destroy,
            !targets.is_empty(),
        ));
    }

    let left_out: Vec<Addr> = plan
        .changes
        .iter()
        .filter(|c| c.action != Action::NoOp && !selected.contains_key(&c.addr))
        .map(|c| c.addr.clone())
        .chain(
            plan.adoptions
                .iter()
                .filter(|a| !selected.contains_key(&a.addr))
                .map(|a| a.addr.clone()),
        )
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    plan.changes.retain(|c| selected.contains_key(&c.addr));
    plan.adoptions.retain(|a| selected.contains_key(&a.addr));
    plan.drift.retain(|d| selected.contains_key(&d.addr));
    if destroy {
        lower_quotas(plan, state);
    }
    Ok(Some(Selection {
        targets: request.targets.clone(),
        excludes: request.excludes.clone(),
        left_out,
    }))
}

/// A narrowed destroy that deletes a GPU pool but keeps the Kueue ClusterQueue lowers that pool's
/// flavor quota to 0 first (an update the schedule runs before the delete): queues follow nodes.
fn lower_quotas(plan: &mut Plan, state: &State) {
    use crate::graph::kueue;
    let deleted: Vec<String> = plan
        .changes
        .iter()
        .filter(|c| c.addr.kind == Kind::NodePool && c.action == Action::Delete)
        .map(|c| c.addr.name.clone())
        .collect();
    let mut updates = Vec::new();
    for (addr, record) in &state.resources {
        if !kueue::is_cluster_queue(addr) || plan.change(addr).is_some() {
            continue;
        }
        let quotas = kueue::gpu_quotas(&record.spec);
        let mut after = record.spec.clone();
        let mut lowered = Vec::new();
        for pool in &deleted {
            if quotas.get(pool).is_some_and(|q| *q != 0) {
                after = kueue::with_gpu_quota(&after, pool, 0);
                lowered.push(format!("node_pool.{pool}"));
            }
        }
        if lowered.is_empty() {
            continue;
        }
        let diffs =
            crate::resource::spec::leaf_diffs("object", &record.spec["object"], &after["object"])
                .into_iter()
                .map(|(field, before, after)| super::FieldDiff {
                    field,
                    before,
                    after,
                    forces_replacement: false,
                })
                .collect();
        updates.push(super::Change {
            addr: addr.clone(),
            action: Action::Update,
            id: record.id.clone(),
            before: Some(record.spec.clone()),
            after: Some(after),
            diffs,
            reason: Some(format!(
                "{} is destroyed: its GPUs leave the queue's quota first",
                lowered.join(", ")
            )),
            dependencies: record.dependencies.clone(),
            lifecycle: record.lifecycle.clone(),
        });
    }
    plan.changes.extend(updates);
}

/// The chain from a root of `map` to `addr`, root first.
fn chain(addr: &Addr, map: &BTreeMap<Addr, Via>) -> (Vec<Addr>, bool) {
    let mut out = vec![addr.clone()];
    let mut takes_along = false;
    let mut at = addr.clone();
    while let Some(Via {
        from: Some(from),
        takes_along: t,
    }) = map.get(&at)
    {
        takes_along |= *t;
        if out.contains(from) || out.len() > map.len() {
            break;
        }
        out.push(from.clone());
        at = from.clone();
    }
    out.reverse();
    (out, takes_along)
}

fn via(middle: &[Addr]) -> String {
    if middle.is_empty() {
        String::new()
    } else {
        format!(
            " via {}",
            middle
                .iter()
                .map(|a| a.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        )
    }
}

fn conflict_error(
    conflict: &Addr,
    selected: &BTreeMap<Addr, Via>,
    excluded: &BTreeMap<Addr, Via>,
    destroy: bool,
    has_targets: bool,
) -> SelectError {
    // root … conflict (how it was selected), then conflict … exclusion (how it was excluded).
    let (pulled, takes_along) = chain(conflict, selected);
    let (mut left, _) = chain(conflict, excluded);
    left.reverse();
    let root = pulled.first().cloned().unwrap_or_else(|| conflict.clone());
    let exclusion = left.last().cloned().unwrap_or_else(|| conflict.clone());
    let mut path: Vec<Addr> = pulled;
    path.extend(left.into_iter().skip(1));
    let middle: &[Addr] = if path.len() > 2 {
        &path[1..path.len() - 1]
    } else {
        &[]
    };
    let hint = if has_targets {
        "drop that --exclude, or target something that does not need it".to_string()
    } else {
        "drop that --exclude, or narrow the plan with --target to what does not need it".to_string()
    };
    let origin = if has_targets {
        format!("`--target {root}`")
    } else {
        format!("the change of {root}")
    };
    let message = if root == exclusion {
        format!("`--exclude {exclusion}` conflicts with {origin}: it is both targeted and excluded")
    } else if destroy {
        format!(
            "`--exclude {exclusion}` conflicts with {origin}: {exclusion} depends on {root}{}, so it must be destroyed first",
            via(&middle.iter().rev().cloned().collect::<Vec<_>>())
        )
    } else if takes_along {
        format!(
            "`--exclude {exclusion}` conflicts with {origin}: it needs {conflict} (what depends on a replaced or deleted resource changes first: {}){}",
            path.iter()
                .take_while(|a| *a != conflict)
                .chain(std::iter::once(conflict))
                .map(|a| a.to_string())
                .collect::<Vec<_>>()
                .join(" -> "),
            if conflict == &exclusion {
                String::new()
            } else {
                format!(", and {conflict} depends on {exclusion}")
            }
        )
    } else {
        format!(
            "`--exclude {exclusion}` conflicts with {origin}: {root} depends on {exclusion}{}",
            via(middle)
        )
    };
    SelectError { message, hint }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::planner::{self, Refreshed};
    use crate::resource::{Desired, Lifecycle};
    use crate::state::Record;
    use serde_json::json;

    fn addr(text: &str) -> Addr {
        text.parse().unwrap()
    }

    /// network.a ← subnetwork.a ← cluster.main ← node_pool.gpu, and network.b alone.
    fn desired() -> Vec<Desired> {
        let d = |a: &str, deps: &[&str]| Desired {
            addr: addr(a),
            id: format!("id/{a}"),
            spec: json!({"name": a}),
            dependencies: deps.iter().map(|d| addr(d)).collect(),
            lifecycle: Lifecycle::default(),
        };
        vec![
            d("network.a", &[]),
            d("subnetwork.a", &["network.a"]),
            d("cluster.main", &["subnetwork.a"]),
            d("node_pool.gpu", &["cluster.main"]),
            d("network.b", &[]),
        ]
    }

    fn recorded_state(desired: &[Desired]) -> State {
        let mut state = State::new("bp", "l".into());
        for d in desired {
            state.resources.insert(
                d.addr.clone(),
                Record {
                    kind: d.addr.kind,
                    id: d.id.clone(),
                    spec: d.spec.clone(),
                    outputs: json!({}),
                    dependencies: d.dependencies.clone(),
                    tainted: false,
                    lifecycle: d.lifecycle.clone(),
                    updated_at: String::new(),
                },
            );
        }
        state
    }

    fn request(targets: &[&str], excludes: &[&str]) -> Request {
        Request {
            targets: targets.iter().map(|t| t.to_string()).collect(),
            excludes: excludes.iter().map(|t| t.to_string()).collect(),
        }
    }

    fn addrs(plan: &Plan) -> Vec<String> {
        plan.changes.iter().map(|c| c.addr.to_string()).collect()
    }

    fn selected(
        state: &State,
        destroy: bool,
        targets: &[&str],
        excludes: &[&str],
    ) -> Result<(Vec<String>, Selection), SelectError> {
        let mut plan = planner::plan(&desired(), state, &Refreshed::new(), destroy).unwrap();
        let selection = select(&mut plan, state, &request(targets, excludes), "list")?.unwrap();
        Ok((addrs(&plan), selection))
    }

    #[test]
    fn nothing_asked_changes_nothing() {
        let state = State::new("bp", "l".into());
        let mut plan = planner::plan(&desired(), &state, &Refreshed::new(), false).unwrap();
        let before = plan.clone();
        assert_eq!(
            select(&mut plan, &state, &Request::default(), "list"),
            Ok(None)
        );
        assert_eq!(plan, before);
    }

    #[test]
    fn a_target_brings_what_it_depends_on_and_an_exclusion_what_depends_on_it() {
        let state = State::new("bp", "l".into());
        let (kept, selection) = selected(&state, false, &["cluster.main"], &[]).unwrap();
        assert_eq!(kept, ["network.a", "subnetwork.a", "cluster.main"]);
        assert_eq!(
            selection.left_out,
            [addr("network.b"), addr("node_pool.gpu")]
        );
        assert_eq!(selection.flags(), "--target cluster.main");

        let (kept, _) = selected(&state, false, &[], &["subnetwork.a"]).unwrap();
        assert_eq!(kept, ["network.a", "network.b"]);

        let (kept, _) = selected(&state, false, &["network.*"], &[]).unwrap();
        assert_eq!(kept, ["network.a", "network.b"]);
    }

    #[test]
    fn an_exclusion_a_target_needs_is_a_conflict_naming_the_chain() {
        let state = State::new("bp", "l".into());
        let err = selected(&state, false, &["node_pool.gpu"], &["network.a"]).unwrap_err();
        assert_eq!(
            err.message,
            "`--exclude network.a` conflicts with `--target node_pool.gpu`: node_pool.gpu depends on network.a via cluster.main, subnetwork.a"
        );
        // Targeting and excluding the same address is a conflict too.
        let err = selected(&state, false, &["cluster.main"], &["cluster.main"]).unwrap_err();
        assert_eq!(
            err.message,
            "`--exclude cluster.main` conflicts with `--target cluster.main`: it is both targeted and excluded"
        );
    }

    #[test]
    fn on_destroy_a_target_brings_its_dependents_and_an_exclusion_keeps_its_dependencies() {
        let state = recorded_state(&desired());
        let (mut kept, _) = selected(&state, true, &["subnetwork.a"], &[]).unwrap();
        kept.sort();
        assert_eq!(kept, ["cluster.main", "node_pool.gpu", "subnetwork.a"]);
        let (mut kept, _) = selected(&state, true, &[], &["cluster.main"]).unwrap();
        kept.sort();
        assert_eq!(kept, ["network.b", "node_pool.gpu"]);
        let err = selected(&state, true, &["network.a"], &["node_pool.gpu"]).unwrap_err();
        assert_eq!(
            err.message,
            "`--exclude node_pool.gpu` conflicts with `--target network.a`: node_pool.gpu depends on network.a via cluster.main, subnetwork.a, so it must be destroyed first"
        );
    }

    #[test]
    fn unknown_addresses_are_refused_with_the_closest_one() {
        let state = State::new("bp", "l".into());
        let err = selected(&state, false, &["cluster.mian"], &[]).unwrap_err();
        assert_eq!(
            err.message,
            "--target cluster.mian: no resource `cluster.mian` in this plan"
        );
        assert_eq!(err.hint, "did you mean `cluster.main`?");
        let err = selected(&state, false, &[], &["nothing.here"]).unwrap_err();
        assert!(err.message.contains("is not a resource address"), "{err:?}");
        let err = selected(&state, false, &["node_pool.*"], &["firewall.*"]).unwrap_err();
        assert_eq!(err.hint, "list");
    }

    #[test]
    fn a_replacement_takes_its_replaced_dependents_along() {
        let state = recorded_state(&desired());
        let mut plan = planner::plan(&desired(), &state, &Refreshed::new(), false).unwrap();
        planner::force_replace(&mut plan, &state, &[addr("subnetwork.a")]).unwrap();
        let mut targeted = plan.clone();
        select(
            &mut targeted,
            &state,
            &request(&["subnetwork.a"], &[]),
            "list",
        )
        .unwrap();
        assert_eq!(
            addrs(&targeted),
            ["network.a", "subnetwork.a", "cluster.main", "node_pool.gpu"]
        );
        let reason = |p: &Plan, a: &str| p.change(&addr(a)).unwrap().reason.clone();
        assert_eq!(
            reason(&targeted, "subnetwork.a").as_deref(),
            Some(planner::REPLACE_REQUESTED)
        );
        assert_eq!(
            reason(&targeted, "cluster.main").as_deref(),
            Some("`subnetwork.a` is replaced")
        );
        let err = select(
            &mut plan,
            &state,
            &request(&["subnetwork.a"], &["node_pool.gpu"]),
            "list",
        )
        .unwrap_err();
        assert!(
            err.message.starts_with(
                "`--exclude node_pool.gpu` conflicts with `--target subnetwork.a`: it needs node_pool.gpu"
            ),
            "{}",
            err.message
        );
    }

    #[test]
    fn replace_refuses_what_is_not_recorded_and_what_the_plan_deletes() {
        let state = State::new("bp", "l".into());
        let mut plan = planner::plan(&desired(), &state, &Refreshed::new(), false).unwrap();
        let err = planner::force_replace(&mut plan, &state, &[addr("cluster.main")]).unwrap_err();
        assert_eq!(
            err.message,
            "--replace cluster.main: `cluster.main` is not in state, so there is nothing to replace"
        );
        assert_eq!(
            err.hint,
            "`cluster.main` does not exist yet: the plan creates it"
        );

        let state = recorded_state(&desired());
        let fewer: Vec<Desired> = desired()
            .into_iter()
            .filter(|d| d.addr != addr("network.b"))
            .collect();
        let mut plan = planner::plan(&fewer, &state, &Refreshed::new(), false).unwrap();
        let err = planner::force_replace(&mut plan, &state, &[addr("network.b")]).unwrap_err();
        assert!(
            err.message.contains("is no longer in the blueprint"),
            "{err:?}"
        );
    }

    #[test]
    fn a_pool_and_the_quota_that_follows_it_go_together() {
        let queue_spec = |gpus: i64| {
            json!({"object": {"spec": {"resourceGroups": [{"flavors": [
                {"name": "gpu", "resources": [{"name": "nvidia.com/gpu", "nominalQuota": gpus}]},
            ]}]}}})
        };
        let with_queue = |nodes: i64| {
            let mut d = desired();
            d[3].spec = json!({"name": "node_pool.gpu", "node_count": nodes});
            d.push(Desired {
                addr: addr("k8s.clusterqueue/-/q"),
                id: "id/q".into(),
                spec: queue_spec(nodes * 8),
                dependencies: vec![addr("cluster.main")],
                lifecycle: Lifecycle::default(),
            });
            d
        };
        let state = recorded_state(&with_queue(2));
        let pick = |targets: &[&str], excludes: &[&str]| {
            let mut plan = planner::plan(&with_queue(4), &state, &Refreshed::new(), false).unwrap();
            select(&mut plan, &state, &request(targets, excludes), "list").map(|_| {
                plan.actions()
                    .map(|c| c.addr.to_string())
                    .collect::<Vec<_>>()
            })
        };
        assert_eq!(
            pick(&["node_pool.gpu"], &[]).unwrap(),
            ["node_pool.gpu", "k8s.clusterqueue/-/q"]
        );
        assert_eq!(
            pick(&["k8s.clusterqueue/-/q"], &[]).unwrap(),
            ["node_pool.gpu", "k8s.clusterqueue/-/q"]
        );
        assert_eq!(pick(&[], &["node_pool.gpu"]).unwrap(), Vec::<String>::new());
        let conflict = pick(&[], &["k8s.clusterqueue/-/q"]).unwrap_err();
        assert!(
            conflict.message.contains("follows node_pool.gpu's size"),
            "{}",
            conflict.message
        );

        // A targeted destroy of the pool lowers its quota first.
        let mut plan = planner::plan(&[], &state, &Refreshed::new(), true).unwrap();
        select(&mut plan, &state, &request(&["node_pool.gpu"], &[]), "list").unwrap();
        let queue = plan.change(&addr("k8s.clusterqueue/-/q")).unwrap();
        assert_eq!(queue.action, Action::Update);
        assert_eq!(
            crate::graph::kueue::gpu_quotas(queue.after.as_ref().unwrap())["gpu"],
            0
        );
        assert_eq!(
            plan.quota_links(),
            [crate::plan::QuotaLink {
                queue: addr("k8s.clusterqueue/-/q"),
                pool: addr("node_pool.gpu"),
                grows: false,
            }]
        );
    }
}
