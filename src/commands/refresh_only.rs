//! `a3ctl plan --refresh-only` and `a3ctl apply --refresh-only`: accept changes made outside
//! a3ctl into state.
//!
//! Both re-read every recorded resource (the same refresh every plan does) and show the drift:
//! fields whose live value differs from the recorded one, and resources that no longer exist.
//! The plan stops there. The apply, after confirmation and under the state lock, writes the live
//! values (spec fields and outputs) into the records and forgets the resources that are gone. It
//! makes no mutating call: the only requests are the refresh's reads.

use super::apply::lock_state;
use super::plan::read_plan_file;
use super::session::Session;
use super::{ExitStatus, confirm};
use crate::apply::executor::now_rfc3339;
use crate::cli::{Global, PlanArgs};
use crate::plan::planner::{self, Refreshed};
use crate::resource::spec;
use crate::state::State;
use crate::ui::diagnostics::Failure;
use crate::ui::{Printer, plan_view};
use std::path::Path;

/// `a3ctl plan --refresh-only`.
pub async fn plan(
    global: &Global,
    printer: Printer,
    args: &PlanArgs,
) -> Result<ExitStatus, Failure> {
    let session = Session::open(global, printer, &args.blueprint).await?;
    let (state, _) = session.load_state()?;
    let refreshed = session.refresh(&state).await?;
    let drift = planner::drift(&state, &refreshed);
    if args.json {
        let view =
            plan_view::json_refresh_only(&state.blueprint, &state.lineage, state.serial, &drift);
        printer.out(&format!("{view}\n"));
    } else {
        printer.out(&plan_view::render_refresh_only(&printer, &drift));
    }
    Ok(if args.detailed_exitcode && !drift.is_empty() {
        ExitStatus::Changes
    } else {
        ExitStatus::Success
    })
}

/// `a3ctl apply --refresh-only`.
pub async fn apply(
    global: &Global,
    printer: Printer,
    target: &Path,
    auto_approve: bool,
) -> Result<ExitStatus, Failure> {
    if read_plan_file(target)?.is_some() {
        return Err(Failure::new(format!(
            "`{}` is a saved plan; --refresh-only takes a blueprint",
            target.display()
        ))
        .hint("run `a3ctl apply --refresh-only BLUEPRINT`"));
    }
    let session = Session::open(global, printer, target).await?;
    let _lock = lock_state(
        &session.printer,
        &session.store,
        "apply --refresh-only",
        &super::session::state_flags(global),
        target,
    )?;
    let (mut state, existed) = session.load_state()?;
    if !existed {
        printer.out(&format!(
            "{}\n",
            printer.bold("No changes. There is no state yet, so nothing to refresh.")
        ));
        return Ok(ExitStatus::Success);
    }
    if !state.pending.is_empty() {
        return Err(Failure::new(format!(
            "{} operation(s) from an interrupted apply are still recorded in state",
            state.pending.len()
        ))
        .hint("run `a3ctl apply` first: it finishes waiting on them, then refresh-only can run"));
    }
    let refreshed = session.refresh(&state).await?;
    let drift = planner::drift(&state, &refreshed);
    printer.out(&plan_view::render_refresh_only(&printer, &drift));
    if drift.is_empty() {
        return Ok(ExitStatus::Success);
    }
    if !auto_approve
        && !confirm(
            &printer,
            "Do you want to record these changes in state?",
            "a3ctl will write the live values into the state. No cloud resource is changed.",
        )?
    {
        return Err(Failure::new("Apply cancelled"));
    }
    let forgotten = accept(&mut state, &refreshed);
    session.save_state(&mut state)?;
    let changed = drift.iter().filter(|d| !d.gone).count();
    let mut line = format!(
        "\n{} {changed} resource(s) updated in state.",
        printer.bold("Refresh complete!")
    );
    if !forgotten.is_empty() {
        line.push_str(&format!(
            " Forgot {} resource(s) that no longer exist: {}.",
            forgotten.len(),
            forgotten
                .iter()
                .map(|a| format!("`{a}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    printer.err(&format!("{line}\n"));
    Ok(ExitStatus::Success)
}

/// Writes what refresh found into `state`: each existing resource's live spec fields and outputs;
/// resources that are gone are removed. Returns the addresses removed.
fn accept(state: &mut State, refreshed: &Refreshed) -> Vec<String> {
    let now = now_rfc3339();
    let mut forgotten = Vec::new();
    for (addr, observed) in refreshed {
        match observed {
            None => {
                if state.resources.remove(addr).is_some() {
                    forgotten.push(addr.to_string());
                }
            }
            Some(observed) => {
                let Some(record) = state.resources.get_mut(addr) else {
                    continue;
                };
                for field in spec::fields(addr.kind) {
                    if let (Some(live), Some(spec)) =
                        (observed.spec.get(field.name), record.spec.as_object_mut())
                    {
                        spec.insert(field.name.to_string(), live.clone());
                    }
                }
                record.outputs = observed.outputs.clone();
                record.updated_at = now.clone();
            }
        }
    }
    forgotten
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resource::{Addr, Kind, Lifecycle, Observed};
    use crate::state::Record;
    use serde_json::json;

    #[test]
    fn accepting_drift_keeps_unmanaged_keys_and_forgets_what_is_gone() {
        let mut state = State::new("bp", "l".into());
        let record = |spec| Record {
            kind: Kind::Cluster,
            id: "id".into(),
            spec,
            outputs: json!({}),
            dependencies: vec![],
            tainted: false,
            lifecycle: Lifecycle::default(),
            updated_at: String::new(),
        };
        let cluster = Addr::new(Kind::Cluster, "main");
        let pool = Addr::new(Kind::NodePool, "gpu");
        state.resources.insert(
            cluster.clone(),
            record(json!({"version": "1.33", "gpudirect_family": "a3-highgpu-8g"})),
        );
        state.resources.insert(pool.clone(), record(json!({})));
        let mut refreshed = Refreshed::new();
        refreshed.insert(
            cluster.clone(),
            Some(Observed {
                spec: json!({"version": "1.33.5-gke.1", "unmanaged": 1}),
                outputs: json!({"endpoint": "10.0.0.2"}),
            }),
        );
        refreshed.insert(pool.clone(), None);
        assert_eq!(accept(&mut state, &refreshed), vec!["node_pool.gpu"]);
        let kept = &state.resources[&cluster];
        assert_eq!(
            kept.spec,
            json!({"version": "1.33.5-gke.1", "gpudirect_family": "a3-highgpu-8g"})
        );
        assert_eq!(kept.outputs["endpoint"], "10.0.0.2");
        assert!(!state.resources.contains_key(&pool));
    }
}
