//! `a3ctl apply` and `a3ctl destroy`: lock the state, finish what an interrupted run left
//! journaled, plan (or take a saved plan), confirm, record what the plan adopts, execute, report.
//! `apply --refresh-only` is [`super::refresh_only`].

use super::plan::{meaning_sha256, read_plan_file, sha256_file};
use super::session::Session;
use super::session::state_flags;
use super::{ExitStatus, confirm};
use crate::apply::executor::{Executor, Stop};
use crate::apply::sink::StateSink;
use crate::apply::{ApplyReport, Outcome, StepKind, StepReport};
use crate::cli::{ApplyArgs, DestroyArgs, Global};
use crate::plan::Plan;
use crate::state::backend::{StateLock, StateStore};
use crate::state::lock::{Acquired, LockError};
use crate::ui::Printer;
use crate::ui::diagnostics::Failure;
use crate::ui::progress::Progress;
use std::path::{Path, PathBuf};
use std::sync::Arc;

pub enum Request {
    Apply(ApplyArgs),
    Destroy(DestroyArgs),
}

pub async fn run(
    global: &Global,
    printer: Printer,
    request: Request,
) -> Result<ExitStatus, Failure> {
    // Before anything else, so an early Ctrl-C is handled the same way as a late one.
    let stop = Stop::default();
    watch_interrupts(printer, stop.clone());
    if let Request::Apply(a) = &request
        && a.refresh_only
    {
        return super::refresh_only::apply(global, printer, &a.target, a.auto_approve).await;
    }
    let verbose = global.verbose > 0;
    let moves = match &request {
        Request::Apply(a) => super::plan::move_options(&a.delete_first, a.batch_size)?,
        Request::Destroy(_) => Default::default(),
    };
    let (target, destroy, auto_approve, timings, adopt, skip_preflight, selection, replace) =
        match request {
            Request::Apply(a) => (
                a.target,
                false,
                a.auto_approve,
                a.timings,
                a.adopt,
                a.skip_preflight,
                a.selection,
                a.replace,
            ),
            Request::Destroy(d) => (
                d.blueprint,
                true,
                d.auto_approve,
                d.timings,
                false,
                true,
                d.selection,
                Vec::new(),
            ),
        };
    let saved = if destroy {
        None
    } else {
        read_plan_file(&target)?
    };
    if saved.is_some()
        && (!selection.targets.is_empty() || !selection.excludes.is_empty() || !replace.is_empty())
    {
        return Err(Failure::new(
            "--target, --exclude and --replace cannot be used with a saved plan: it keeps the selection it was made with",
        )
        .hint("make the plan with them instead: `a3ctl plan BLUEPRINT --target ADDR --out FILE`, then `a3ctl apply FILE`"));
    }
    if adopt && saved.is_some() {
        return Err(Failure::new(
            "--adopt cannot be used with a saved plan: the plan file already says what it adopts",
        )
        .hint("make the plan with `a3ctl plan --adopt --out FILE`, then run `a3ctl apply FILE`"));
    }
    let blueprint_path: PathBuf = match &saved {
        Some(file) => {
            if file.sandbox != global.sandbox {
                let mut flags = global.clone();
                flags.sandbox = file.sandbox;
                let fix = format!("a3ctl {}apply {}", state_flags(&flags), target.display());
                return Err(if file.sandbox {
                    Failure::new(format!(
                        "The saved plan `{}` was made against the sandbox (--sandbox), not Google Cloud",
                        target.display()
                    ))
                    .hint(format!("apply it in the sandbox: `{fix}`"))
                } else {
                    Failure::new(format!(
                        "The saved plan `{}` was made against Google Cloud, not the sandbox",
                        target.display()
                    ))
                    .hint(format!(
                        "apply it without --sandbox (and without A3CTL_SANDBOX): `{fix}`"
                    ))
                });
            }
            let changed = match &file.blueprint_meaning_sha256 {
                Some(meaning) => meaning_sha256(&file.blueprint_path)?.as_ref() != Some(meaning),
                None => sha256_file(&file.blueprint_path)? != file.blueprint_sha256,
            };
            if changed {
                return Err(Failure::new(format!(
                    "Blueprint `{}` changed since the plan was made",
                    file.blueprint_path.display()
                ))
                .cause("its settings differ from those the plan was made from (comments and layout do not count)")
                .hint(format!(
                    "make the plan again: `a3ctl plan {}{} --out {}`, then `a3ctl apply {}{}`",
                    state_flags(global),
                    file.blueprint_path.display(),
                    target.display(),
                    state_flags(global),
                    target.display()
                )));
            }
            file.blueprint_path.clone()
        }
        None => target.clone(),
    };
    let session = Session::open(global, printer, &blueprint_path).await?;
    let operation = if destroy { "destroy" } else { "apply" };
    let _lock = lock_state(
        &printer,
        &session.store,
        operation,
        &state_flags(global),
        &blueprint_path,
    )?;
    let (state, existed) = session.load_state()?;
    let (initial_lineage, initial_serial) = (state.lineage.clone(), state.serial);
    let sink = Arc::new(StateSink::new(state, Box::new(session.store.clone())));
    let progress = Arc::new(Progress::new(printer).simulated(session.sandbox.is_some()));
    let executor = Executor::new(
        session.provider.clone(),
        sink.clone(),
        progress.clone(),
        session.options.clone(),
        stop.clone(),
    );

    let mut report = ApplyReport::default();
    // Operations an interrupted run journaled are resumed inside the plan, each in its resource's
    // place in the order (see `Executor::apply`), so a wait that cannot finish never holds back
    // the plan or unrelated work.
    let pending = sink.snapshot().await.pending.len();
    let state = sink.snapshot().await;
    let mut found = None;
    let (mut plan, kept_selection): (Plan, _) = match saved {
        Some(file) => {
            let moved = if file.state_existed {
                !existed
                    || file.plan.lineage != initial_lineage
                    || file.plan.serial != initial_serial
            } else {
                existed && (initial_serial != 0 || !state.resources.is_empty())
            };
            if moved || pending > 0 {
                return Err(Failure::new(
                    "The saved plan is stale: the state changed since it was made",
                )
                .hint("run `a3ctl plan --out FILE` again"));
            }
            (file.plan, file.selection)
        }
        None => {
            let mut plan = session.plan_unprotected(&state, destroy, adopt).await?;
            let listing = if destroy {
                format!(
                    "`a3ctl state list {}{}` lists the recorded addresses",
                    state_flags(global),
                    blueprint_path.display()
                )
            } else {
                format!(
                    "`a3ctl graph {}` lists the addresses",
                    blueprint_path.display()
                )
            };
            let selection =
                super::plan::shape(&session, &mut plan, &state, &selection, &replace, &listing)?;
            // Without a record of them, the plan's creates may exist already (a lost state
            // file): said before anyone is asked.
            if !adopt && !destroy {
                found = Some(super::plan::Found::new(
                    session.look_for_existing(&plan, &state).await,
                    global,
                    &blueprint_path,
                    &session.blueprint.name,
                ));
            }
            (plan, selection)
        }
    };
    // A saved plan is checked again: capacity moves between plan and apply.
    let preflight = if plan.is_empty() || (skip_preflight && destroy) {
        Ok(())
    } else if skip_preflight {
        crate::plan::moves::choose(&mut plan, &state, &moves);
        session.refuse_moves(&plan)
    } else {
        session.preflight(&mut plan, &state, &moves).await
    };
    let preflight = preflight.map_err(|f| match &found {
        Some(found) => found.explain(f, &plan),
        None => f,
    });
    if !printer.quiet {
        printer.out(&super::plan::render(
            &printer,
            &plan,
            kept_selection.as_ref(),
            found.as_ref(),
            false,
            verbose,
        ));
    }
    // Before anything is changed (the journal's pending operations included).
    preflight?;
    if pending > 0 {
        printer.info(&format!(
            "An interrupted run left {pending} operation(s) journaled; the apply resumes them in place."
        ));
    }
    // The command that continues: this one again, from the blueprint (a saved plan is spent).
    let rerun = format!(
        "a3ctl {}{}{} {}",
        state_flags(global),
        if destroy { "destroy" } else { "apply" },
        kept_selection
            .as_ref()
            .map(|s| format!(" {}", s.flags()))
            .unwrap_or_default(),
        blueprint_path.display(),
    );
    if plan.is_empty() && pending == 0 {
        return finish(
            &printer,
            &session,
            &report,
            timings,
            stop.starting.is_cancelled(),
            destroy,
            0,
            &rerun,
        )
        .await;
    }
    // What a destroy takes away, named before anyone is asked (and in the log of an
    // --auto-approve run).
    if let Some(warning) = crate::ui::destroy_warning::warning(&plan) {
        printer.err(&format!("\n{warning}\n"));
    }
    if !auto_approve && !plan.is_empty() && target.extension().is_some_and(|e| e == "toml") {
        let (question, details) = if destroy && kept_selection.is_some() {
            (
                "Do you really want to destroy the selected resources?",
                "a3ctl will destroy the resources listed above. There is no undo.",
            )
        } else if destroy {
            (
                "Do you really want to destroy all resources?",
                "a3ctl will destroy everything recorded in the state. There is no undo.",
            )
        } else {
            (
                "Do you want to perform these actions?",
                "a3ctl will perform the actions described above.",
            )
        };
        if !confirm(&printer, question, details)? {
            return Err(Failure::new(format!(
                "{} cancelled",
                if destroy { "Destroy" } else { "Apply" }
            )));
        }
    }
    if !plan.adoptions.is_empty() {
        let now = crate::apply::executor::now_rfc3339();
        sink.update(|s| {
            for a in &plan.adoptions {
                s.resources.insert(a.addr.clone(), a.record(now.clone()));
            }
        })
        .await
        .map_err(|e| {
            Failure::new(format!(
                "Cannot record the adopted resources in state `{}`",
                session.store.location()
            ))
            .cause(e.to_string())
            .maybe_hint(e.hint())
        })?;
        for a in &plan.adoptions {
            printer.info(&format!("{}: adopted existing {}", a.addr, a.id));
        }
    }
    let applied = executor.apply(&plan).await;
    progress.finish();
    if let Some(selection) = &kept_selection {
        printer.err(&if destroy {
            format!(
                "\n{} The destroy was partial ({}): the other resources stay. Run `a3ctl plan --destroy {}{}` to see them.\n",
                printer.bold("Warning:"),
                selection.flags(),
                state_flags(global),
                blueprint_path.display(),
            )
        } else {
            format!(
                "\n{} Applied changes may be incomplete: the plan was partial ({}). Run `a3ctl plan {}{}` to see what else the blueprint asks for.\n",
                printer.bold("Warning:"),
                selection.flags(),
                state_flags(global),
                blueprint_path.display(),
            )
        });
    }
    report.steps.extend(applied.steps);
    report.state_error = applied.state_error;
    report.cloud_time = applied.cloud_time;
    finish(
        &printer,
        &session,
        &report,
        timings,
        stop.starting.is_cancelled(),
        destroy,
        plan.adoptions.len(),
        &rerun,
    )
    .await
}

/// Prints the outcome, writes timings, picks the exit status.
#[allow(clippy::too_many_arguments)]
async fn finish(
    printer: &Printer,
    session: &Session,
    report: &ApplyReport,
    timings: Option<PathBuf>,
    interrupted: bool,
    destroy: bool,
    adopted: usize,
    rerun: &str,
) -> Result<ExitStatus, Failure> {
    if let Some(path) = timings {
        let text = serde_json::to_vec_pretty(&report.timings())
            .map_err(|e| Failure::new("Cannot encode timings").cause(e.to_string()))?;
        std::fs::write(&path, text).map_err(|e| {
            Failure::new(format!("Cannot write `{}`", path.display())).cause(e.to_string())
        })?;
    }
    let count = |kinds: &[StepKind]| {
        report
            .steps
            .iter()
            .filter(|s| kinds.contains(&s.kind) && s.outcome.is_success())
            .count()
    };
    let (added, changed, destroyed) = (
        count(&[StepKind::Create]),
        count(&[StepKind::Update]),
        count(&[StepKind::Delete, StepKind::DeletedWith]),
    );
    let forgotten = match count(&[StepKind::Forget]) {
        0 => String::new(),
        n => format!(" {n} left in the cloud and forgotten."),
    };
    if report.succeeded() && !interrupted {
        let line = if destroy {
            format!(
                "{} Resources: {destroyed} destroyed.{forgotten}",
                printer.bold("Destroy complete!")
            )
        } else {
            let adopted = if adopted > 0 {
                format!("{adopted} adopted, ")
            } else {
                String::new()
            };
            format!(
                "{} Resources: {adopted}{added} added, {changed} changed, {destroyed} destroyed.{forgotten}",
                printer.bold("Apply complete!")
            )
        };
        printer.err(&format!("\n{line}\n"));
        if let Some(took) = took(session, report, true).filter(|_| !printer.quiet) {
            printer.err(&format!("{took}\n"));
        }
        if !destroy && !printer.quiet {
            let outputs = crate::graph::outputs::workload_outputs(&session.blueprint);
            printer.out(&crate::ui::outputs_view::render(printer, &outputs));
        }
        return Ok(ExitStatus::Success);
    }
    let mut out = String::from("\n");
    for (step, error) in report.failures() {
        let mut failure = Failure::cloud(
            format!("Failed to {} `{}`", step.kind.label(), step.addr),
            error,
        );
        for check in capacity_now(session, step).await {
            failure = failure.cause(format!(
                "now: {} (need {}, available {})",
                check.problem.as_deref().unwrap_or("not enough room"),
                check.need,
                check.available
            ));
            if let Some(fix) = check.fix {
                failure = match failure.hint.take() {
                    Some(hint) => failure.hint(format!("{hint}\n{fix}")),
                    None => failure.hint(fix),
                };
            }
        }
        out.push_str(&failure.render(printer));
        out.push('\n');
    }
    let skipped: Vec<&StepReport> = report
        .steps
        .iter()
        .filter(|s| matches!(s.outcome, Outcome::Skipped { .. }))
        .collect();
    if !skipped.is_empty() {
        out.push_str(&format!(
            "Skipped because of these failures: {}\n",
            skipped
                .iter()
                .map(|s| format!("`{}`", s.addr))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    let unfinished = report
        .steps
        .iter()
        .filter(|s| {
            matches!(
                s.outcome,
                Outcome::Interrupted | Outcome::NotStarted | Outcome::TimedOut { .. }
            )
        })
        .count();
    if unfinished > 0 {
        out.push_str(&format!(
            "{unfinished} step(s) did not finish (interrupted or still running).\n"
        ));
    }
    if let Some(e) = &report.state_error {
        out.push_str(&format!("error: the state could not be saved: {e}\n"));
    }
    if let Some(took) = took(session, report, false) {
        out.push_str(&format!("{took}\n"));
    }
    let what = if report.failures().next().is_some() {
        "Fix the cause above, then run"
    } else {
        // Interrupted (Ctrl-C) or timed out: nothing to fix.
        "Run"
    };
    out.push_str(&format!(
        "\nState is saved in `{}` with everything that was created. {what} `{rerun}` to continue.\n",
        session.store,
    ));
    printer.err(&out);
    Ok(ExitStatus::Failure)
}

/// For a failed create or resize of a GPU pool that consumes a reservation: preflight's check of
/// that reservation now, for the nodes the pool still lacks (what the blueprint asks, less what
/// the cloud shows the pool holds after the failure), when it fails. A read that fails adds
/// nothing: the cloud's own error is shown anyway.
async fn capacity_now(session: &Session, step: &StepReport) -> Vec<crate::plan::preflight::Check> {
    use crate::resource::Kind;
    use crate::resource::kinds::node_pool::NodePoolSpec;
    if step.addr.kind != Kind::NodePool || !matches!(step.kind, StepKind::Create | StepKind::Update)
    {
        return vec![];
    }
    let Some(desired) = session.graph.get(&step.addr) else {
        return vec![];
    };
    let Ok(spec) = crate::resource::kinds::from_spec::<NodePoolSpec>("node pool", &desired.spec)
    else {
        return vec![];
    };
    let provider = session.provider.as_ref();
    // What the pool holds now: its recorded record read back (none if it was never recorded).
    let held = match session.store.load() {
        Ok(Some(state)) => match state.resources.get(&step.addr) {
            Some(record) => {
                let target = crate::cloud::Target::recorded(&step.addr, record, &state);
                match crate::plan::refresh::read(provider, &target).await {
                    Ok(Some(observed)) => observed.spec["node_count"].as_u64().unwrap_or(0),
                    Ok(None) => 0,
                    Err(_) => return vec![],
                }
            }
            None => 0,
        },
        _ => return vec![],
    };
    let missing = spec.node_count.saturating_sub(held);
    match crate::plan::preflight::reservation_room(
        provider,
        &session.blueprint.project,
        &step.addr,
        &spec,
        missing,
    )
    .await
    {
        Ok(checks) => checks.into_iter().filter(|c| !c.ok).collect(),
        Err(_) => vec![],
    }
}

/// How long the run took, for its last line (`Finished after 35m4s.`, or `Stopped after …` when
/// it did not succeed): in the sandbox the simulated time of its cloud operations — the wall
/// clock there runs thousands of times faster than the cloud's, so it says nothing — elsewhere
/// the wall clock's. `None` when nothing ran.
fn took(session: &Session, report: &ApplyReport, finished: bool) -> Option<String> {
    let elapsed = crate::ui::progress::elapsed;
    let verb = if finished { "Finished" } else { "Stopped" };
    if session.sandbox.is_some() {
        return report.cloud_time.map(|t| {
            format!(
                "{verb} after {} of simulated cloud time (its operations' longest chain, one GKE operation at a time per cluster: about what it takes on Google Cloud).",
                elapsed(t)
            )
        });
    }
    let wall = report.steps.iter().map(|s| s.end).max()?;
    Some(format!("{verb} after {}.", elapsed(wall)))
}

/// Takes the state's lock for `operation`, warning when a stale local lock was taken over.
///
/// `flags` (the global flags that chose the store, [`state_flags`]) and `blueprint` make the
/// `force-unlock` command of a held lock's hint one to paste.
pub fn lock_state(
    printer: &Printer,
    store: &StateStore,
    operation: &str,
    flags: &str,
    blueprint: &Path,
) -> Result<StateLock, Failure> {
    let (lock, acquired) = store.lock(operation).map_err(|e| {
        let hint = match &e {
            LockError::Held {
                info, dead_here, ..
            } => {
                let unlock = format!(
                    "a3ctl {flags}force-unlock {} {}",
                    info.id,
                    blueprint.display()
                );
                Some(if *dead_here {
                    format!(
                        "the run that took it (pid {} on this host) no longer runs: remove the lock with `{unlock}`",
                        info.pid
                    )
                } else {
                    format!(
                        "wait for that run to finish; if it died on another machine, run `{unlock}`"
                    )
                })
            }
            other => other.hint(),
        };
        Failure::new(e.to_string()).maybe_hint(hint)
    })?;
    if let Acquired::TookOverStale(old) = acquired {
        printer.info(&format!(
            "warning: took over a stale lock of {} (pid {} no longer runs; `a3ctl {}` since {})",
            old.holder, old.pid, old.operation, old.created
        ));
    }
    Ok(lock)
}

/// First Ctrl-C: start nothing new; second: stop waiting now.
fn watch_interrupts(printer: Printer, stop: Stop) {
    tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_err() {
            return;
        }
        printer.err("\nInterrupt received: no new steps will start; waiting for the running ones and saving state.\nPress Ctrl-C again to stop waiting now (running operations stay recorded and resume on the next apply).\n");
        stop.starting.cancel();
        if tokio::signal::ctrl_c().await.is_ok() {
            printer.err("\nSecond interrupt: stopping now. State is saved.\n");
            stop.waiting.cancel();
        }
    });
}
