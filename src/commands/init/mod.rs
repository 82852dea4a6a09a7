//! `a3ctl init`: writes a valid, commented blueprint from a conversation (or from flags).
//!
//! The flow: decide what to do with an existing file (edit it, replace it, or stop); start from
//! it or from a commented skeleton ([`questions::template`]); put every question
//! ([`questions::ask`]) through the [`wizard::Wizard`], which checks each answer with the rules of
//! `a3ctl validate`; without a terminal, stop listing missing or rejected flags; write the file
//! atomically; then report what `a3ctl validate` would, what an apply would change (against the
//! local state when the deployment exists) and how long it should take ([`estimate`]), and the
//! next command. Nothing is written before the last question is answered; Ctrl-C stops the run
//! with exit code 1.

mod defaults;
mod draft;
mod estimate;
mod questions;
mod wizard;

use super::ExitStatus;
use crate::blueprint::{self, Blueprint};
use crate::cli::InitArgs;
use crate::ui::Printer;
use crate::ui::diagnostics::{Failure, render_blueprint_error};
use draft::Draft;
use std::io::IsTerminal;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};
use wizard::{Choice, Interrupted, Question, Wizard};

pub fn run(printer: &Printer, args: InitArgs) -> Result<ExitStatus, Failure> {
    let interactive =
        !args.non_interactive && std::io::stdin().is_terminal() && std::io::stderr().is_terminal();
    let path = args.path.clone();
    let shown = path.display().to_string();
    let existing = match crate::files::read_to_string(&path, crate::files::BLUEPRINT) {
        Ok(text) => Some(text),
        Err(e) if e.is_not_found() => None,
        Err(e) => {
            return Err(
                Failure::new(format!("Cannot read `{shown}`: {}", e.reason())).hint(format!(
                    "{}, or pass another path: `a3ctl init <file>`",
                    e.hint()
                )),
            );
        }
    };
    // Ctrl-C is read as a key by the prompts, which then raise SIGINT; with the signal caught,
    // the prompt's error reaches here and the run says it stopped instead of vanishing.
    let phase = if interactive {
        catch_interrupts(*printer, &shown)
    } else {
        None
    };
    let phase = phase.as_deref();
    let mut wizard = Wizard::new(Draft::new(&shown), interactive);
    let edit = match &existing {
        None => false,
        Some(_) if args.edit => true,
        Some(_) if args.force => false,
        Some(_) if interactive => {
            match ask_existing(&mut wizard, &shown)
                .map_err(|e| stopped(&wizard, phase, e, &shown))?
            {
                Some(edit) => edit,
                None => {
                    printer.info(&format!("Left `{shown}` as it was"));
                    return Ok(ExitStatus::Success);
                }
            }
        }
        Some(_) => {
            return Err(Failure::new(format!(
                "Refusing to overwrite `{shown}`: it exists and nothing may be asked"
            ))
            .hint("pass --edit to change it (its values become the defaults, comments are kept), --force to replace it, or another path"));
        }
    };
    wizard.draft = match (&existing, edit) {
        (Some(text), true) => Draft::parse(text, &shown).map_err(|e| {
            Failure::new(format!("Cannot edit `{shown}`: it is not valid TOML"))
                .cause(e.to_string().trim().to_string())
                .hint("fix the syntax first (`a3ctl validate` shows where), or pass --force to replace the file")
        })?,
        _ => {
            let mut draft = Draft::new(&shown);
            questions::template(&mut draft);
            draft
        }
    };
    wizard.editing = edit;
    if interactive {
        wizard.say(&format!(
            "{} a blueprint for A3 and A4 GPU training on GKE. Each answer is checked as you go;\nnothing is written until the end (Ctrl-C stops).",
            if edit { "Editing" } else { "Writing" }
        ));
    }

    questions::ask(&mut wizard, &args, &defaults::from_env())
        .map_err(|e| stopped(&wizard, phase, e, &shown))?;
    if !wizard.missing.is_empty() || !wizard.rejected.is_empty() {
        return Err(unanswered(&wizard, &shown));
    }

    wizard.draft.order_tables(blueprint::ROOT_KEYS);
    if !edit {
        wizard.draft.set_header(draft::HEADER);
    }
    let text = wizard.draft.text();
    let checked = blueprint::parse(&text, &shown);
    if let Err(error) = &checked {
        // Only keys the wizard does not ask about can be wrong here (an edited file's own).
        let keep = interactive && {
            printer.err(&render_blueprint_error(printer, error));
            wizard
                .confirm(
                    &Question {
                        key: "",
                        flag: "",
                        prompt: "The blueprint has the problems above. Write it anyway?",
                        help: "",
                        write: None,
                        check: None,
                    },
                    None,
                    false,
                )
                .map_err(|e| stopped(&wizard, phase, e, &shown))?
        };
        if !keep {
            return Err(Failure::blueprint(printer, error)
                .hint(format!("nothing was written to `{shown}`")));
        }
    }
    // From here a Ctrl-C no longer stops the run: the file is written whole.
    if phase.is_some_and(|phase| !claim(phase, WRITING)) {
        await_exit();
    }
    write(&path, &text)?;
    printer.info(&format!("\nWrote `{shown}`"));
    for warning in &wizard.warnings {
        printer.info(&format!("warning: {warning}"));
    }
    match checked {
        Ok(blueprint) => {
            printer.out(&report(printer, &blueprint, &path));
            Ok(ExitStatus::Success)
        }
        Err(_) => Ok(ExitStatus::Failure),
    }
}

/// Who answers a Ctrl-C: [`ASKING`] until one comes or the file is written.
const ASKING: u8 = 0;
/// A Ctrl-C came: the run stops, writing nothing.
const CANCELLED: u8 = 1;
/// The file is being written: a Ctrl-C now is too late to stop it half-way.
const WRITING: u8 = 2;

/// Catches SIGINT for the rest of the run. A prompt reads Ctrl-C as a key and fails with an
/// interrupted read (see [`stopped`]); a Ctrl-C between prompts, when the terminal turns it into
/// the signal itself, is answered here: the same message, exit code 1. Whichever sees it first
/// moves the phase to [`CANCELLED`]. `None` when no handler could be installed (then Ctrl-C ends
/// the process as usual).
fn catch_interrupts(printer: Printer, shown: &str) -> Option<Arc<AtomicU8>> {
    let handle = tokio::runtime::Handle::try_current().ok()?;
    let _entered = handle.enter();
    let mut signal =
        tokio::signal::unix::signal(tokio::signal::unix::SignalKind::interrupt()).ok()?;
    let phase = Arc::new(AtomicU8::new(ASKING));
    let watched = Arc::clone(&phase);
    let shown = shown.to_string();
    handle.spawn(async move {
        while signal.recv().await.is_some() {
            if claim(&watched, CANCELLED) {
                let _ = console::Term::stderr().show_cursor();
                printer.err(&format!("\n{}", cancelled(&shown).render(&printer)));
                std::process::exit(1);
            }
        }
    });
    Some(phase)
}

/// Moves the run from [`ASKING`] to `to`; false when a Ctrl-C or the write came first.
fn claim(phase: &AtomicU8, to: u8) -> bool {
    phase
        .compare_exchange(ASKING, to, Ordering::SeqCst, Ordering::SeqCst)
        .is_ok()
}

/// Waits for the signal handler, which has claimed the Ctrl-C, to end the process.
fn await_exit() -> ! {
    loop {
        std::thread::park();
    }
}

fn cancelled(shown: &str) -> Failure {
    Failure::new(format!(
        "Cancelled `a3ctl init`: nothing was written to `{shown}`"
    ))
}

/// The failure of a run the terminal stopped: Ctrl-C, or a terminal that went away.
fn stopped(wizard: &Wizard, phase: Option<&AtomicU8>, e: Interrupted, shown: &str) -> Failure {
    wizard.restore_cursor();
    if e.cancelled {
        if phase.is_some_and(|phase| !claim(phase, CANCELLED)) {
            await_exit();
        }
        wizard.say("");
        cancelled(shown)
    } else {
        Failure::new("Stopped: the terminal went away")
            .cause(e.reason)
            .hint(format!("nothing was written to `{shown}`"))
    }
}

/// Edit, replace or leave an existing file; `None` to leave it.
fn ask_existing(wizard: &mut Wizard, shown: &str) -> Result<Option<bool>, Interrupted> {
    let choices = [
        Choice {
            value: "edit".into(),
            label: "edit it: its values become the defaults, comments are kept".into(),
        },
        Choice {
            value: "replace".into(),
            label: "replace it with a new blueprint".into(),
        },
        Choice {
            value: "cancel".into(),
            label: "leave it as it is".into(),
        },
    ];
    let prompt = format!("`{shown}` exists");
    let answer = wizard.choose(
        &Question {
            key: "",
            flag: "--edit/--force",
            prompt: &prompt,
            help: "",
            write: None,
            check: None,
        },
        &choices,
        None,
        Some("edit".into()),
    )?;
    Ok(match answer.as_deref() {
        Some("edit") => Some(true),
        Some("replace") => Some(false),
        _ => None,
    })
}

/// Every missing and rejected flag of a run that could not ask.
fn unanswered(wizard: &Wizard, shown: &str) -> Failure {
    let mut failure = Failure::new(format!(
        "Cannot write `{shown}` without asking: {}",
        match (wizard.missing.len(), wizard.rejected.len()) {
            (_, 0) => "answers are missing".to_string(),
            (0, _) => "some answers break the blueprint's rules".to_string(),
            _ => "answers are missing and some break the blueprint's rules".to_string(),
        }
    ));
    if !wizard.missing.is_empty() {
        failure = failure.cause(format!("missing: {}", wizard.missing.join(", ")));
    }
    for rejected in &wizard.rejected {
        failure = failure.cause(rejected.clone());
    }
    failure.hint("pass the flags listed (`a3ctl init --help` explains each), or run `a3ctl init` in a terminal to be asked; nothing was written")
}

/// Writes `text` to `path` through a temporary file and a rename, creating the directory.
fn write(path: &Path, text: &str) -> Result<(), Failure> {
    let fail = |e: std::io::Error| {
        Failure::new(format!("Cannot write `{}`", path.display())).cause(e.to_string())
    };
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty());
    if let Some(dir) = dir {
        std::fs::create_dir_all(dir).map_err(fail)?;
    }
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".tmp");
    std::fs::write(&tmp, text).map_err(fail)?;
    std::fs::rename(&tmp, path).map_err(fail)
}

/// The validation result, what an apply would change and how long it should take, and what to
/// run.
fn report(printer: &Printer, blueprint: &Blueprint, path: &Path) -> String {
    let mut out = format!("\n{}", super::validate::summary(blueprint, path));
    if let Some(outlook) = estimate::outlook(printer, blueprint, path) {
        out.push_str(&outlook);
    }
    let shown = path.display();
    out.push_str(&format!(
        "\nNext:\n  a3ctl apply --sandbox {shown}   try it against the built-in simulator, no account needed\n  a3ctl apply {shown}             create it in project `{}`\n",
        blueprint.project
    ));
    out
}
