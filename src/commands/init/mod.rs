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
use std::sync::atomic::{AtomicBool, Ordering};
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
    let cancelled = if interactive {
        catch_interrupts()
    } else {
        None
    };
    let mut wizard = Wizard::new(Draft::new(&shown), interactive);
    let edit = match &existing {
        None => false,
        Some(_) if args.edit => true,
        Some(_) if args.force => false,
        Some(_) if interactive => {
            match ask_existing(&mut wizard, &shown).map_err(|e| stopped(&wizard, e, &shown))? {
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
    if interactive {
        wizard.say(&format!(
            "{} a blueprint for A3 GPU training on GKE. Each answer is checked as you go;\nnothing is written until the end (Ctrl-C stops).",
            if edit { "Editing" } else { "Writing" }
        ));
    }

    questions::ask(&mut wizard, &args, &defaults::from_env())
        .map_err(|e| stopped(&wizard, e, &shown))?;
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
                .map_err(|e| stopped(&wizard, e, &shown))?
        };
        if !keep {
            return Err(Failure::blueprint(printer, error)
                .hint(format!("nothing was written to `{shown}`")));
        }
    }
    // A Ctrl-C between two prompts (the terminal's own SIGINT) also stops before writing.
    if cancelled.as_ref().is_some_and(|c| c.load(Ordering::SeqCst)) {
        return Err(stopped(
            &wizard,
            Interrupted {
                reason: String::new(),
                cancelled: true,
            },
            &shown,
        ));
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

/// Catches SIGINT for the rest of the run; the flag says whether one came. `None` when no
/// handler could be installed (then Ctrl-C ends the process as usual).
fn catch_interrupts() -> Option<Arc<AtomicBool>> {
    let handle = tokio::runtime::Handle::try_current().ok()?;
    let _entered = handle.enter();
    let mut signal =
        tokio::signal::unix::signal(tokio::signal::unix::SignalKind::interrupt()).ok()?;
    let flag = Arc::new(AtomicBool::new(false));
    let set = Arc::clone(&flag);
    handle.spawn(async move {
        while signal.recv().await.is_some() {
            set.store(true, Ordering::SeqCst);
        }
    });
    Some(flag)
}

/// The failure of a run the terminal stopped: Ctrl-C, or a terminal that went away.
fn stopped(wizard: &Wizard, e: Interrupted, shown: &str) -> Failure {
    wizard.restore_cursor();
    if e.cancelled {
        wizard.say("");
        Failure::new(format!(
            "Cancelled `a3ctl init`: nothing was written to `{shown}`"
        ))
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
    if let Some(outlook) = estimate::outlook(printer, blueprint) {
        out.push_str(&outlook);
    }
    let shown = path.display();
    out.push_str(&format!(
        "\nNext:\n  a3ctl apply --sandbox {shown}   try it against the built-in simulator, no account needed\n  a3ctl apply {shown}             create it in project `{}`\n",
        blueprint.project
    ));
    out
}
