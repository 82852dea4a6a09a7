//! Works out the plan from three views of each resource: desired (the blueprint's graph), recorded
//! (state) and live (refresh). No I/O happens here.
//!
//! For a resource the blueprint wants:
//! 1. not in state → create;
//! 2. in state but gone from the cloud → create again, and report the drift;
//! 3. tainted (a failed create left it half-made) → replace, except a node pool that got some of
//!    its nodes and needs no new pool: it is resized to the blueprint's count ([`completion`]);
//! 4. otherwise compare desired with live field by field ([`crate::resource::spec`]): no
//!    difference → no-op; any difference on a field that forces replacement → replace (naming the
//!    fields); else → update in place. Live values that differ from the recorded ones are drift.
//!
//! A resource in state that the blueprint no longer wants (or every resource, for destroy) is
//! deleted. A replacement then spreads to everything that depends on the replaced resource, since
//! those objects cannot outlive it, except where the dependency is on capacity rather than
//! identity ([`identity_dependency`]: a Kubernetes object waits for a node pool only to have a
//! node to run on, so replacing the system pool replaces no object in the cluster). Finally
//! `prevent_destroy` is enforced: a plan that would delete or replace a protected resource is an
//! error.

use super::{Action, Change, Drift, FieldDiff, PLAN_FORMAT, Plan};
use crate::resource::spec::{self, Field};
use crate::resource::{Addr, Desired, Kind, Observed};
use crate::state::{Record, State};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};

/// What refresh found for each resource it looked at: `Some(observed)` when it exists, `None`
/// when it is gone. Resources absent from the map were not refreshed; their recorded spec stands
/// in for the live one.
pub type Refreshed = BTreeMap<Addr, Option<Observed>>;

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PlanError {
    #[error("the plan would destroy {}, which {} `prevent_destroy`", list(.0), if .0.len() == 1 { "has" } else { "have" })]
    PreventDestroy(Vec<Addr>),
    /// Deleting or replacing what has a3ctl's deletion protection on (a cluster, a Filestore
    /// instance), named with its cloud id.
    #[error("the plan would destroy {}, which {} deletion protection on", protected_list(.0), if .0.len() == 1 { "has" } else { "have" })]
    DeletionProtection(Vec<(Addr, String)>),
}

fn protected_list(items: &[(Addr, String)]) -> String {
    items
        .iter()
        .map(|(addr, id)| format!("`{addr}` ({id})"))
        .collect::<Vec<_>>()
        .join(", ")
}

impl PlanError {
    /// What to do, in terms of the blueprint at `blueprint`; the command that applies it is
    /// named with the blueprint alone, and `ui::invocation` adds the flags of the run.
    pub fn hint(&self, blueprint: &str) -> String {
        match self {
            PlanError::PreventDestroy(_) => format!(
                "set `prevent_destroy = false` for it in {blueprint} and apply that first, if destroying it is really intended"
            ),
            PlanError::DeletionProtection(protected) => {
                let filestore = if protected.iter().any(|(a, _)| a.kind == Kind::Filestore) {
                    " (that apply also turns off Filestore's own `deletionProtectionEnabled`)"
                } else {
                    ""
                };
                format!(
                    "if destroying it is really intended: set `deletion_protection = false` under `[cluster]` in {blueprint}, run `a3ctl apply {blueprint}`{filestore}, then run this again"
                )
            }
        }
    }
}

fn list(addrs: &[Addr]) -> String {
    addrs
        .iter()
        .map(|a| format!("`{a}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Plans `desired` against `state` and what refresh found. With `destroy`, every recorded
/// resource is deleted and `desired` is ignored.
pub fn plan(
    desired: &[Desired],
    state: &State,
    refreshed: &Refreshed,
    destroy: bool,
) -> Result<Plan, PlanError> {
    let plan = plan_unprotected(desired, state, refreshed, destroy);
    protect(&plan)?;
    Ok(plan)
}

/// [`plan`] without enforcing `prevent_destroy`: for a plan that is narrowed afterwards
/// (`--target`, `--exclude`), which enforces it with [`protect`] on what it keeps.
pub fn plan_unprotected(
    desired: &[Desired],
    state: &State,
    refreshed: &Refreshed,
    destroy: bool,
) -> Plan {
    let mut changes: Vec<Change> = Vec::new();
    let mut drift: Vec<Drift> = Vec::new();
    let mut notes: Vec<String> = Vec::new();
    let wanted: &[Desired] = if destroy { &[] } else { desired };
    let wanted_addrs: BTreeSet<&Addr> = wanted.iter().map(|d| &d.addr).collect();

    for d in wanted {
        let Some(record) = state.resources.get(&d.addr) else {
            // A create an interrupted apply started is not started again: the apply waits for
            // its journaled operation (or finds what the lost call made).
            let reason = state
                .pending_for(&d.addr)
                .filter(|p| p.action == crate::state::PendingAction::Create)
                .map(|p| match p.operation {
                    Some(_) => "an interrupted apply started its create: the apply waits for that operation instead of starting another",
                    None => "an interrupted apply called its create and lost the answer: the apply looks for what it made before creating",
                });
            changes.push(create(d, reason));
            continue;
        };
        let live: &Value = match refreshed.get(&d.addr) {
            Some(Some(observed)) => &observed.spec,
            Some(None) => {
                drift.push(Drift {
                    addr: d.addr.clone(),
                    gone: true,
                    diffs: vec![],
                });
                changes.push(create(d, Some("it was deleted outside a3ctl")));
                continue;
            }
            None => &record.spec,
        };
        let fields = spec::fields(d.addr.kind);
        drift.extend(changed_outside(&d.addr, record, live));
        let diffs = field_diffs(fields, live, &d.spec, true);
        for field in fields
            .iter()
            .filter(|f| f.compare == spec::Compare::VersionPrefix)
        {
            if let (Some(pin), Some(running)) = (
                d.spec.get(field.name).and_then(Value::as_str),
                live.get(field.name).and_then(Value::as_str),
            ) && spec::moved_ahead(pin, running)
            {
                let why = ahead_because(d.addr.kind, record, live, field.name, running);
                notes.push(format!(
                    "{} runs {running}, ahead of the blueprint's {} = \"{pin}\": {why}. Not a change; set {} = \"{}\" to pin what runs.",
                    d.addr,
                    field.name,
                    field.name,
                    crate::resource::kinds::gke_versions::minor_of(running)
                        .map(|(a, b)| format!("{a}.{b}"))
                        .unwrap_or_default()
                ));
            }
        }
        let (action, reason) = if record.tainted {
            match completion(d.addr.kind, &record.spec, live, &diffs) {
                Some(why) => (Action::Update, Some(why)),
                None => (
                    Action::Replace,
                    Some("it is tainted: a previous create failed part-way".to_string()),
                ),
            }
        } else if diffs.is_empty() {
            (Action::NoOp, None)
        } else if diffs.iter().any(|f| f.forces_replacement) {
            (Action::Replace, None)
        } else {
            (Action::Update, None)
        };
        changes.push(Change {
            addr: d.addr.clone(),
            action,
            id: d.id.clone(),
            before: Some(live.clone()),
            after: Some(d.spec.clone()),
            diffs,
            reason,
            dependencies: d.dependencies.clone(),
            lifecycle: d.lifecycle.clone(),
        });
    }

    for (addr, record) in &state.resources {
        if wanted_addrs.contains(addr) {
            continue;
        }
        if matches!(refreshed.get(addr), Some(None)) {
            // Already gone: nothing to delete, the apply only forgets it.
            drift.push(Drift {
                addr: addr.clone(),
                gone: true,
                diffs: vec![],
            });
        }
        changes.push(Change {
            addr: addr.clone(),
            action: Action::Delete,
            id: record.id.clone(),
            before: Some(record.spec.clone()),
            after: None,
            diffs: vec![],
            reason: Some(if destroy {
                "destroy".into()
            } else {
                "it is no longer in the blueprint".into()
            }),
            dependencies: record.dependencies.clone(),
            lifecycle: record.lifecycle.clone(),
        });
    }

    cascade_replacements(&mut changes, state);

    Plan {
        format: PLAN_FORMAT,
        blueprint: state.blueprint.clone(),
        lineage: state.lineage.clone(),
        serial: state.serial,
        destroy,
        changes,
        drift,
        versions: vec![],
        adoptions: vec![],
        preflight: None,
        notes,
        moves: vec![],
    }
}

/// Why a tainted resource is resized in place rather than replaced, or `None` when it is replaced.
///
/// A node pool whose create stopped part-way (a reservation too small, a zone stocked out) keeps
/// the nodes it got: GKE leaves it `RUNNING_WITH_ERROR` with them, a state its API reference
/// describes as "partially usable ... may need to reissue a request or trigger a new update"
/// (<https://cloud.google.com/kubernetes-engine/docs/reference/rest/v1/projects.locations.clusters.nodePools#status>),
/// and resizing is an update (`setSize`). Replacing it would delete those nodes, often reserved
/// GPUs, to ask for all of them again. So a pool that has some nodes (its instance groups' size,
/// read by refresh), not the number wanted, and no change that forces a new pool is resized to
/// the blueprint's count; once that update succeeds the record is no longer tainted. A pool with
/// no node has nothing worth keeping, and one whose live count equals the blueprint's shows no
/// shortfall a resize would mend (or has no instance group yet, when GKE's `initialNodeCount`,
/// what the create asked, stands in): both are replaced, as any other tainted resource is.
fn completion(kind: Kind, recorded: &Value, live: &Value, diffs: &[FieldDiff]) -> Option<String> {
    if kind != Kind::NodePool || diffs.iter().any(|d| d.forces_replacement) {
        return None;
    }
    let zones = live["locations"].as_array().map_or(1, |z| z.len().max(1)) as u64;
    let has = live["node_count"].as_u64()? * zones;
    let wants = diffs
        .iter()
        .find(|d| d.field == "node_count")?
        .after
        .as_u64()?
        * zones;
    let asked = recorded["node_count"].as_u64().map_or(wants, |n| n * zones);
    if has == 0 {
        return None;
    }
    let stopped = format!("its create stopped at {has} of {asked} nodes");
    Some(if has < wants {
        format!("{stopped}: the resize completes it and keeps those {has}")
    } else {
        format!("{stopped}: the resize keeps {wants} of those {has}")
    })
}

/// `prevent_destroy`, then deletion protection: a plan that would delete or replace a protected
/// resource is an error (one already gone from the cloud is only forgotten, and stays allowed).
pub fn protect(plan: &Plan) -> Result<(), PlanError> {
    let protected: Vec<Addr> = plan
        .changes
        .iter()
        .filter(|c| {
            matches!(c.action, Action::Delete | Action::Replace) && c.lifecycle.prevent_destroy
        })
        .map(|c| c.addr.clone())
        .collect();
    if !protected.is_empty() {
        return Err(PlanError::PreventDestroy(protected));
    }
    // A resource already gone from the cloud is only forgotten: nothing to protect.
    let gone = |addr: &Addr| plan.drift.iter().any(|d| d.gone && &d.addr == addr);
    let deletion_protected: Vec<(Addr, String)> = plan
        .changes
        .iter()
        .filter(|c| {
            matches!(c.action, Action::Delete | Action::Replace)
                && !gone(&c.addr)
                && c.before.as_ref().is_some_and(spec::deletion_protected)
        })
        .map(|c| (c.addr.clone(), c.id.clone()))
        .collect();
    if deletion_protected.is_empty() {
        Ok(())
    } else {
        Err(PlanError::DeletionProtection(deletion_protected))
    }
}

/// The reason a `--replace` gives its resource.
pub const REPLACE_REQUESTED: &str = "replacement requested with --replace";

/// Why `--replace ADDR` cannot be honoured.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct ReplaceError {
    pub message: String,
    pub hint: String,
}

/// `--replace`: replaces each of `addrs` (and, as for any replacement, what depends on it). Each
/// must be recorded in `state` and still wanted by the blueprint with an object in the cloud to
/// replace. `prevent_destroy` is for the caller to enforce afterwards ([`protect`]).
pub fn force_replace(plan: &mut Plan, state: &State, addrs: &[Addr]) -> Result<(), ReplaceError> {
    for addr in addrs {
        let refuse = |message: String, hint: String| Err(ReplaceError { message, hint });
        if plan.destroy {
            return refuse(
                format!("--replace {addr}: a destroy plan replaces nothing"),
                "drop --replace".into(),
            );
        }
        if !state.resources.contains_key(addr) {
            let hint = match plan.change(addr) {
                Some(c) if c.action == Action::Create => {
                    format!("`{addr}` does not exist yet: the plan creates it")
                }
                _ => match super::select::closest(&addr.to_string(), state.resources.keys()) {
                    Some(a) => format!("did you mean `{a}`?"),
                    None => "`a3ctl state list BLUEPRINT` lists the recorded addresses".into(),
                },
            };
            return refuse(
                format!(
                    "--replace {addr}: `{addr}` is not in state, so there is nothing to replace"
                ),
                hint,
            );
        }
        let Some(change) = plan.changes.iter_mut().find(|c| &c.addr == addr) else {
            return refuse(
                format!("--replace {addr}: `{addr}` is not in this plan"),
                "run `a3ctl plan` to see what it holds".into(),
            );
        };
        match change.action {
            Action::Delete => {
                return refuse(
                    format!(
                        "--replace {addr}: `{addr}` is no longer in the blueprint: the plan destroys it, there is nothing to replace it with"
                    ),
                    "drop --replace, or put it back in the blueprint".into(),
                );
            }
            Action::Create => {
                return refuse(
                    format!(
                        "--replace {addr}: `{addr}` no longer exists in the cloud: the plan creates it again"
                    ),
                    "drop --replace".into(),
                );
            }
            Action::Replace => {
                // Already replaced (a forcing field, a taint): say the user asked too.
                if change.reason.is_none() {
                    change.reason = Some(REPLACE_REQUESTED.into());
                }
            }
            Action::NoOp | Action::Update => {
                change.action = Action::Replace;
                change.reason = Some(REPLACE_REQUESTED.into());
            }
        }
    }
    cascade_replacements(&mut plan.changes, state);
    Ok(())
}

/// What changed outside a3ctl, for every recorded resource refresh looked at: the resources that
/// are gone and the fields whose live value differs from the recorded one. This is what
/// `--refresh-only` shows and accepts into state.
pub fn drift(state: &State, refreshed: &Refreshed) -> Vec<Drift> {
    state
        .resources
        .iter()
        .filter_map(|(addr, record)| match refreshed.get(addr)? {
            None => Some(Drift {
                addr: addr.clone(),
                gone: true,
                diffs: vec![],
            }),
            Some(observed) => changed_outside(addr, record, &observed.spec),
        })
        .collect()
}

/// The drift of a resource that still exists: recorded value → live value, per field. A tainted
/// record holds what its failed create asked for, never what the cloud reached, so nothing of it
/// changed outside a3ctl.
fn changed_outside(addr: &Addr, record: &Record, live: &Value) -> Option<Drift> {
    if record.tainted {
        return None;
    }
    let diffs = field_diffs(spec::fields(addr.kind), &record.spec, live, false);
    (!diffs.is_empty()).then(|| Drift {
        addr: addr.clone(),
        gone: false,
        diffs,
    })
}

fn create(d: &Desired, reason: Option<&str>) -> Change {
    Change {
        addr: d.addr.clone(),
        action: Action::Create,
        id: d.id.clone(),
        before: None,
        after: Some(d.spec.clone()),
        diffs: vec![],
        reason: reason.map(str::to_string),
        dependencies: d.dependencies.clone(),
        lifecycle: d.lifecycle.clone(),
    }
}

/// Field differences `from` → `to`. With `desired_side`, `to` is the desired spec: fields it does
/// not set are not managed and never differ.
fn field_diffs(fields: &[Field], from: &Value, to: &Value, desired_side: bool) -> Vec<FieldDiff> {
    let mut out = Vec::new();
    for field in fields {
        let before = from.get(field.name).cloned().unwrap_or(Value::Null);
        let after = to.get(field.name).cloned().unwrap_or(Value::Null);
        let equal = if desired_side {
            after.is_null() || spec::matches(field, &after, &before)
        } else {
            before.is_null() || spec::matches(field, &before, &after)
        };
        if !equal {
            let forces_replacement =
                desired_side && spec::forces_replacement(field, &before, &after);
            if field.compare == spec::Compare::Deep {
                for (path, before, after) in spec::leaf_diffs(field.name, &before, &after) {
                    out.push(FieldDiff {
                        field: path,
                        before,
                        after,
                        forces_replacement,
                    });
                }
                continue;
            }
            out.push(FieldDiff {
                field: field.name.to_string(),
                before,
                after,
                forces_replacement,
            });
        }
    }
    out
}

/// Why `live` runs a version ahead of the blueprint's pin, as far as a3ctl can tell, and why the
/// plan does not move it back.
///
/// - State recording the same minor as what runs means a3ctl itself put it there (an earlier
///   apply whose blueprint asked for it): the record is written from what the apply read back.
/// - Otherwise it moved outside a3ctl: for a control plane, its release channel's auto-upgrade
///   (GKE upgrades every control plane, <https://cloud.google.com/kubernetes-engine/docs/concepts/cluster-upgrades>);
///   for a node pool, GKE's node auto-upgrade when the pool has it on, else someone upgraded it
///   by hand (`gcloud container clusters upgrade --node-pool`).
///
/// GKE does not move a control plane back down a minor version
/// (<https://cloud.google.com/kubernetes-engine/docs/how-to/upgrading-a-cluster#downgrading>), and
/// a3ctl never downgrades a node pool: a pin below what runs is not a change.
fn ahead_because(kind: Kind, record: &Record, live: &Value, field: &str, running: &str) -> String {
    use crate::resource::kinds::gke_versions::minor_of;
    let recorded = record.spec.get(field).and_then(Value::as_str);
    let ours = recorded.is_some_and(|r| minor_of(r).is_some() && minor_of(r) == minor_of(running));
    let cause = match (ours, kind) {
        (true, _) => format!(
            "a3ctl itself upgraded it in an earlier apply (state records {field} = \"{}\")",
            recorded.unwrap_or(running)
        ),
        (false, Kind::NodePool) if live["auto_upgrade"] == Value::Bool(true) => {
            "GKE's node auto-upgrade moved it".to_string()
        }
        (false, Kind::NodePool) => {
            "it was upgraded outside a3ctl (its auto-upgrade is off)".to_string()
        }
        (false, _) => "its release channel upgraded it".to_string(),
    };
    let back = if kind == Kind::NodePool {
        "a3ctl does not downgrade a node pool"
    } else {
        "GKE does not move a control plane back down a minor version"
    };
    format!("{cause}, and {back}")
}

/// Whether `dependent` depends on `dependency`'s identity (and so cannot outlive it), rather than
/// only on there being some capacity to run on.
///
/// A Kubernetes object inside a cluster lives in the cluster's API server (etcd), not on a node:
/// deleting a node pool evicts its pods, which their controllers re-create on the nodes that
/// remain, while the objects themselves — Kueue's CRDs, its queues and every Workload they
/// hold — stay (<https://kubernetes.io/docs/concepts/architecture/nodes/#node-shutdown>,
/// <https://cloud.google.com/kubernetes-engine/docs/how-to/node-pools#deleting_a_node_pool>: "the
/// workloads running on the nodes are rescheduled"). The Kueue release waits for the system pool
/// only so that its controller has a node; a new system pool serves as well as the old one.
pub fn identity_dependency(dependent: &Addr, dependency: &Addr) -> bool {
    !(dependent.kind == Kind::Kubernetes && dependency.kind == Kind::NodePool)
}

/// A replaced resource takes everything that depends on its identity along: dependents that
/// would only be updated or left alone are replaced too.
fn cascade_replacements(changes: &mut [Change], state: &State) {
    loop {
        let replaced: Vec<Addr> = changes
            .iter()
            .filter(|c| c.action == Action::Replace)
            .map(|c| c.addr.clone())
            .collect();
        let mut grew = false;
        for change in changes.iter_mut() {
            if !matches!(change.action, Action::NoOp | Action::Update) {
                continue;
            }
            let recorded = state
                .resources
                .get(&change.addr)
                .map(|r| r.dependencies.as_slice())
                .unwrap_or(&[]);
            let cause = replaced.iter().find(|r| {
                (change.dependencies.contains(r) || recorded.contains(r))
                    && identity_dependency(&change.addr, r)
            });
            if let Some(cause) = cause {
                change.action = Action::Replace;
                change.reason = Some(format!("`{cause}` is replaced"));
                grew = true;
            }
        }
        if !grew {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resource::{Kind, Lifecycle};
    use crate::state::Record;
    use serde_json::json;

    fn desired(kind: Kind, name: &str, spec: Value, deps: &[Addr]) -> Desired {
        Desired {
            addr: Addr::new(kind, name),
            id: format!("id/{name}"),
            spec,
            dependencies: deps.to_vec(),
            lifecycle: Lifecycle::default(),
        }
    }

    fn record(state: &mut State, d: &Desired) {
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

    fn cluster_and_pool(nodes: u64, machine: &str) -> (Desired, Desired) {
        let cluster = desired(
            Kind::Cluster,
            "main",
            json!({"name": "c", "version": "1.32"}),
            &[],
        );
        let pool = desired(
            Kind::NodePool,
            "gpu",
            json!({"name": "gpu", "node_count": nodes, "machine_type": machine}),
            std::slice::from_ref(&cluster.addr),
        );
        (cluster, pool)
    }

    #[test]
    fn empty_state_creates_everything() {
        let (cluster, pool) = cluster_and_pool(4, "a3-highgpu-8g");
        let state = State::new("bp", "l".into());
        let plan = plan(&[cluster, pool], &state, &Refreshed::new(), false).unwrap();
        assert!(plan.changes.iter().all(|c| c.action == Action::Create));
        assert_eq!(
            plan.summary(),
            super::super::Summary {
                add: 2,
                change: 0,
                destroy: 0,
                forget: 0
            }
        );
    }

    #[test]
    fn node_count_change_updates_and_machine_type_change_replaces_naming_the_field() {
        let (cluster, pool) = cluster_and_pool(4, "a3-highgpu-8g");
        let mut state = State::new("bp", "l".into());
        record(&mut state, &cluster);
        record(&mut state, &pool);

        let (c2, bigger) = cluster_and_pool(8, "a3-highgpu-8g");
        let p = plan(&[c2.clone(), bigger], &state, &Refreshed::new(), false).unwrap();
        let change = p.change(&pool.addr).unwrap();
        assert_eq!(change.action, Action::Update);
        assert_eq!(change.diffs[0].field, "node_count");
        assert_eq!(p.change(&cluster.addr).unwrap().action, Action::NoOp);

        let (c3, other) = cluster_and_pool(4, "a3-megagpu-8g");
        let p = plan(&[c3, other], &state, &Refreshed::new(), false).unwrap();
        let change = p.change(&pool.addr).unwrap();
        assert_eq!(change.action, Action::Replace);
        assert!(
            change
                .diffs
                .iter()
                .any(|d| d.field == "machine_type" && d.forces_replacement)
        );
        assert_eq!(
            p.summary(),
            super::super::Summary {
                add: 1,
                change: 0,
                destroy: 1,
                forget: 0
            }
        );
    }

    #[test]
    fn replacement_cascades_to_dependents() {
        let (cluster, pool) = cluster_and_pool(4, "a3-highgpu-8g");
        let mut state = State::new("bp", "l".into());
        record(&mut state, &cluster);
        record(&mut state, &pool);
        let moved = desired(
            Kind::Cluster,
            "main",
            json!({"name": "c2", "version": "1.32"}),
            &[],
        );
        let p = plan(&[moved, pool.clone()], &state, &Refreshed::new(), false).unwrap();
        let change = p.change(&pool.addr).unwrap();
        assert_eq!(change.action, Action::Replace);
        assert_eq!(change.reason.as_deref(), Some("`cluster.main` is replaced"));
    }

    #[test]
    fn a_replaced_node_pool_replaces_no_kubernetes_object_that_waits_for_it() {
        let (cluster, pool) = cluster_and_pool(4, "n2-standard-8");
        let release = desired(
            Kind::Kubernetes,
            "release/-/kueue",
            json!({"version": "v0.17.1"}),
            &[cluster.addr.clone(), pool.addr.clone()],
        );
        let queue = desired(
            Kind::Kubernetes,
            "clusterqueue/-/a3-queue",
            json!({"quota": 256}),
            std::slice::from_ref(&release.addr),
        );
        let mut state = State::new("bp", "l".into());
        for d in [&cluster, &pool, &release, &queue] {
            record(&mut state, d);
        }
        let (_, bigger) = cluster_and_pool(4, "n2-standard-16");
        let p = plan(
            &[cluster, bigger.clone(), release.clone(), queue.clone()],
            &state,
            &Refreshed::new(),
            false,
        )
        .unwrap();
        assert_eq!(p.change(&bigger.addr).unwrap().action, Action::Replace);
        assert_eq!(p.change(&release.addr).unwrap().action, Action::NoOp);
        assert_eq!(p.change(&queue.addr).unwrap().action, Action::NoOp);
    }

    #[test]
    fn drift_is_reported_and_gone_resources_are_recreated() {
        let (cluster, pool) = cluster_and_pool(4, "a3-highgpu-8g");
        let mut state = State::new("bp", "l".into());
        record(&mut state, &cluster);
        record(&mut state, &pool);
        let mut refreshed = Refreshed::new();
        refreshed.insert(
            pool.addr.clone(),
            Some(Observed {
                spec: json!({"name": "gpu", "node_count": 2, "machine_type": "a3-highgpu-8g"}),
                outputs: json!({}),
            }),
        );
        refreshed.insert(
            cluster.addr.clone(),
            Some(Observed {
                spec: cluster.spec.clone(),
                outputs: json!({}),
            }),
        );
        let p = plan(&[cluster.clone(), pool.clone()], &state, &refreshed, false).unwrap();
        assert_eq!(p.drift.len(), 1);
        assert_eq!(p.drift[0].diffs[0].before, json!(4));
        assert_eq!(p.drift[0].diffs[0].after, json!(2));
        assert_eq!(p.change(&pool.addr).unwrap().action, Action::Update);
        // Refresh-only sees the same drift, without a blueprint.
        assert_eq!(drift(&state, &refreshed), p.drift);

        refreshed.insert(pool.addr.clone(), None);
        let p = plan(&[cluster, pool.clone()], &state, &refreshed, false).unwrap();
        assert_eq!(p.change(&pool.addr).unwrap().action, Action::Create);
        assert!(p.drift.iter().any(|d| d.addr == pool.addr && d.gone));
        assert_eq!(drift(&state, &refreshed), p.drift);
    }

    /// A tainted pool recorded as its failed create asked (`nodes` per zone), and refresh's view
    /// of it with `live` nodes.
    fn tainted_pool(nodes: u64, live: u64, live_machine: &str) -> (State, Refreshed, Desired) {
        let (cluster, pool) = cluster_and_pool(nodes, "a3-megagpu-8g");
        let mut state = State::new("bp", "l".into());
        record(&mut state, &cluster);
        record(&mut state, &pool);
        state.resources.get_mut(&pool.addr).unwrap().tainted = true;
        let mut refreshed = Refreshed::new();
        refreshed.insert(
            pool.addr.clone(),
            Some(Observed {
                spec: json!({"name": "gpu", "node_count": live, "machine_type": live_machine}),
                outputs: json!({"status": "RUNNING_WITH_ERROR"}),
            }),
        );
        (state, refreshed, cluster)
    }

    #[test]
    fn a_pool_whose_create_stopped_part_way_is_resized_not_replaced() {
        let (state, refreshed, cluster) = tainted_pool(32, 16, "a3-megagpu-8g");
        let (_, pool) = cluster_and_pool(32, "a3-megagpu-8g");
        let p = plan(&[cluster.clone(), pool.clone()], &state, &refreshed, false).unwrap();
        let change = p.change(&pool.addr).unwrap();
        assert_eq!(change.action, Action::Update);
        assert_eq!(
            change.reason.as_deref(),
            Some(
                "its create stopped at 16 of 32 nodes: the resize completes it and keeps those 16"
            )
        );
        assert_eq!(change.diffs.len(), 1);
        assert_eq!(change.diffs[0].field, "node_count");
        assert_eq!(change.diffs[0].before, json!(16));
        assert_eq!(change.diffs[0].after, json!(32));
        // What the failed create asked for never was: no drift.
        assert!(p.drift.is_empty(), "{:?}", p.drift);
        assert!(drift(&state, &refreshed).is_empty());
        assert_eq!(p.summary().change, 1);
        assert_eq!(p.summary().destroy, 0);

        // The blueprint now wants fewer than the pool got: a shrink, still no replacement.
        let (_, fewer) = cluster_and_pool(8, "a3-megagpu-8g");
        let p = plan(&[cluster, fewer], &state, &refreshed, false).unwrap();
        let change = p.change(&pool.addr).unwrap();
        assert_eq!(change.action, Action::Update);
        assert_eq!(
            change.reason.as_deref(),
            Some("its create stopped at 16 of 32 nodes: the resize keeps 8 of those 16")
        );
    }

    #[test]
    fn a_tainted_pool_with_no_node_a_new_machine_type_or_an_unknown_count_is_replaced() {
        let tainted = Some("it is tainted: a previous create failed part-way");
        let (_, pool) = cluster_and_pool(32, "a3-megagpu-8g");
        // No node came up: nothing to keep.
        let (state, refreshed, cluster) = tainted_pool(32, 0, "a3-megagpu-8g");
        let p = plan(&[cluster, pool.clone()], &state, &refreshed, false).unwrap();
        let change = p.change(&pool.addr).unwrap();
        assert_eq!(change.action, Action::Replace);
        assert_eq!(change.reason.as_deref(), tainted);
        // The blueprint's machine type changed too: a new pool whatever it holds.
        let (state, refreshed, cluster) = tainted_pool(32, 16, "a3-highgpu-8g");
        let p = plan(&[cluster, pool.clone()], &state, &refreshed, false).unwrap();
        let change = p.change(&pool.addr).unwrap();
        assert_eq!(change.action, Action::Replace);
        assert_eq!(change.reason.as_deref(), tainted);
        // The live count equals the blueprint's (as GKE's `initialNodeCount` does while the pool
        // has no instance group): no shortfall to resize, so replaced as before.
        let (state, refreshed, cluster) = tainted_pool(32, 32, "a3-megagpu-8g");
        let p = plan(&[cluster, pool.clone()], &state, &refreshed, false).unwrap();
        assert_eq!(p.change(&pool.addr).unwrap().action, Action::Replace);
        // Another tainted kind is replaced.
        let (state, refreshed, cluster) = tainted_pool(32, 16, "a3-megagpu-8g");
        let mut state = state;
        state.resources.get_mut(&cluster.addr).unwrap().tainted = true;
        let p = plan(&[cluster.clone(), pool.clone()], &state, &refreshed, false).unwrap();
        assert_eq!(p.change(&cluster.addr).unwrap().action, Action::Replace);
        let change = p.change(&pool.addr).unwrap();
        assert_eq!(change.action, Action::Replace);
        assert_eq!(
            change.reason.as_deref(),
            Some("`cluster.main` is replaced"),
            "a pool cannot outlive its replaced cluster"
        );
    }

    #[test]
    fn removed_resources_are_deleted_and_prevent_destroy_refuses() {
        let (cluster, mut pool) = cluster_and_pool(4, "a3-highgpu-8g");
        let mut state = State::new("bp", "l".into());
        record(&mut state, &cluster);
        pool.lifecycle.prevent_destroy = true;
        record(&mut state, &pool);
        let err = plan(
            std::slice::from_ref(&cluster),
            &state,
            &Refreshed::new(),
            false,
        )
        .unwrap_err();
        assert_eq!(err, PlanError::PreventDestroy(vec![pool.addr.clone()]));
        assert!(err.to_string().contains("`node_pool.gpu`"));

        state
            .resources
            .get_mut(&pool.addr)
            .unwrap()
            .lifecycle
            .prevent_destroy = false;
        let p = plan(&[cluster], &state, &Refreshed::new(), false).unwrap();
        let delete = p.change(&pool.addr).unwrap();
        assert_eq!(delete.action, Action::Delete);
        let all = plan(&[], &state, &Refreshed::new(), true).unwrap();
        assert_eq!(all.summary().destroy, 2);
    }
}
