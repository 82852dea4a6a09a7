//! The command line a run was given, so that every `a3ctl …` command a hint names can be pasted
//! as it stands: the one place hints are completed (issue 26 item 7).
//!
//! The layers below the commands (cloud adapters, the executor, the planner) know neither the
//! blueprint's path nor the flags that chose the state, so their hints name commands bare
//! (`` `a3ctl plan` ``) or with the placeholder `BLUEPRINT`. When a command knows both it records
//! them here ([`set`], from `commands::session::Connection::open`), and [`complete`] — called
//! wherever a failure is drawn ([`super::diagnostics::Failure::render`]), and by the commands for
//! the other text that names a command (verify's checks, import's report) — turns each such
//! command into the one to paste:
//! `` `a3ctl plan` `` becomes `` `a3ctl --sandbox plan blueprints/a3-mega.toml` ``, and
//! `a3ctl import ADDR ID BLUEPRINT` gets the path. A command that already names a blueprint
//! (`.toml`) keeps it, one that names the state flags keeps them; the others get this run's, so
//! `a3ctl state show ADDR x.toml` reads the same state as the run that printed it.

use std::sync::OnceLock;

/// The global flags (`--sandbox `, `--state-bucket B `: each followed by a space, as
/// `commands::session::state_flags` writes them) and the blueprint path of this run.
#[derive(Debug, Clone, PartialEq)]
pub struct Invocation {
    pub flags: String,
    pub blueprint: String,
}

static INVOCATION: OnceLock<Invocation> = OnceLock::new();

/// Records this run's flags and blueprint (the first call wins: one run, one command line).
pub fn set(flags: &str, blueprint: &std::path::Path) {
    let _ = INVOCATION.set(Invocation {
        flags: flags.to_string(),
        blueprint: blueprint.display().to_string(),
    });
}

/// `text` with its a3ctl commands completed from this run's command line; unchanged when no
/// command recorded one.
pub fn complete(text: &str) -> String {
    match INVOCATION.get() {
        Some(invocation) => complete_with(invocation, text),
        None => text.to_string(),
    }
}

/// Subcommands that take the blueprint as their last argument: one word, or two for `state`'s.
const TAKES_BLUEPRINT: &[&str] = &[
    "plan",
    "apply",
    "destroy",
    "verify",
    "output",
    "validate",
    "state list",
    "state pull",
];

/// [`complete`] for a given command line.
pub fn complete_with(invocation: &Invocation, text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("`a3ctl ") {
        out.push_str(&rest[..at + 1]);
        let after = &rest[at + 1..];
        let Some(end) = after.find('`') else {
            out.push_str(after);
            return out;
        };
        out.push_str(&command(invocation, &after[..end]));
        out.push('`');
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    out
}

/// One quoted command (`a3ctl plan`), completed.
fn command(invocation: &Invocation, command: &str) -> String {
    let words: Vec<&str> = command.split_whitespace().collect();
    let names_blueprint = words
        .iter()
        .any(|w| w.ends_with(".toml") || w.ends_with(".json") || *w == "..." || *w == "FILE");
    let mut words: Vec<String> = words.iter().map(|w| w.to_string()).collect();
    if let Some(at) = words.iter().position(|w| w == "BLUEPRINT") {
        words[at] = invocation.blueprint.clone();
    } else if !names_blueprint {
        // The subcommand's words: `plan`, or `state list`.
        let verb = match words.get(1).map(String::as_str) {
            Some("state") if words.len() >= 3 => 3,
            _ => 2,
        };
        if words.len() >= verb
            && TAKES_BLUEPRINT.contains(&words[1..verb].join(" ").as_str())
            && words[verb..].iter().all(|w| w.starts_with('-'))
        {
            words.push(invocation.blueprint.clone());
        }
    }
    let has_flags = words
        .iter()
        .any(|w| w == "--sandbox" || w == "--state-bucket" || w == "--state-prefix");
    if !has_flags && !invocation.flags.trim().is_empty() {
        for (i, flag) in invocation.flags.split_whitespace().enumerate() {
            words.insert(1 + i, flag.to_string());
        }
    }
    words.join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sandbox() -> Invocation {
        Invocation {
            flags: "--sandbox ".into(),
            blueprint: "blueprints/a3-mega.toml".into(),
        }
    }

    #[test]
    fn bare_commands_get_the_flags_and_the_blueprint() {
        assert_eq!(
            complete_with(
                &sandbox(),
                "run `a3ctl plan` to refresh, then apply; or `a3ctl apply --auto-approve`"
            ),
            "run `a3ctl --sandbox plan blueprints/a3-mega.toml` to refresh, then apply; or `a3ctl --sandbox apply --auto-approve blueprints/a3-mega.toml`"
        );
    }

    #[test]
    fn the_blueprint_placeholder_is_filled_and_complete_commands_are_kept() {
        let local = Invocation {
            flags: String::new(),
            blueprint: "bp.toml".into(),
        };
        assert_eq!(
            complete_with(
                &local,
                "take it over with `a3ctl import network.x projects/p/global/networks/x BLUEPRINT`"
            ),
            "take it over with `a3ctl import network.x projects/p/global/networks/x bp.toml`"
        );
        let kept = "run `a3ctl --sandbox plan other.toml`";
        assert_eq!(complete_with(&sandbox(), kept), kept);
        assert_eq!(
            complete_with(&sandbox(), "`a3ctl state show ADDR x.toml`"),
            "`a3ctl --sandbox state show ADDR x.toml`"
        );
        // A command whose arguments the hint leaves to the user keeps its placeholders.
        assert_eq!(
            complete_with(&local, "`a3ctl force-unlock ID BLUEPRINT`"),
            "`a3ctl force-unlock ID bp.toml`"
        );
        assert_eq!(
            complete_with(
                &sandbox(),
                "`a3ctl state list` lists them; `a3ctl state rm ADDR`"
            ),
            "`a3ctl --sandbox state list blueprints/a3-mega.toml` lists them; `a3ctl --sandbox state rm ADDR`"
        );
        assert_eq!(complete_with(&local, "no command here"), "no command here");
        assert_eq!(
            complete_with(&local, "an open `a3ctl plan"),
            "an open `a3ctl plan"
        );
    }
}
