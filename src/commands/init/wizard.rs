//! How one question is put: asked on the terminal with dialoguer, or answered by its flag, or
//! left to its default when nothing may be asked.
//!
//! Every answer, typed or given by a flag, goes through [`Draft::check`] before it is kept: a
//! typed answer that breaks a rule is asked again with the reason (dialoguer's `validate_with`),
//! a flag that breaks one is reported. Without a terminal, a question with no flag and no default
//! is recorded as missing, so the run can list every missing flag at once instead of hanging.

use super::draft::Draft;
use crate::blueprint::Problem;
use console::{Term, style};
use dialoguer::theme::ColorfulTheme;
use dialoguer::{Confirm, Input, Select};
use toml_edit::Value;

/// The keys the wizard asks about, in the order it asks. A problem under a key still to come is
/// not blamed on the current answer.
pub const ORDER: &[&str] = &[
    "project",
    "gpu_pool.0.machine_type",
    "name",
    "region",
    "zone",
    "network.network_mode",
    "gpu_pool.0.capacity",
    "gpu_pool.0.reservation",
    "gpu_pool.0.reservation_block",
    "gpu_pool.0.nodes",
    "system_pool.nodes",
    "filestore",
    "artifact_registry",
    "bucket",
    "software.kueue",
    "identity",
    "cluster.authorized_networks",
    "state",
    "network",
];

/// Writes an answer into the draft.
pub type Writer = dyn Fn(&mut Draft, &str);

/// One question.
pub struct Question<'a> {
    /// The dotted key the answer is written to.
    pub key: &'a str,
    /// The flag that answers it, e.g. `--nodes`.
    pub flag: &'static str,
    pub prompt: &'a str,
    /// What the choice means, printed above the prompt.
    pub help: &'a str,
    /// Writes the answer when more than the key changes with it; by default the answer is
    /// written to the key.
    pub write: Option<&'a Writer>,
    /// A check of the typed text before it is written, for answers the blueprint's rules
    /// cannot see whole (a list whose empty entries are dropped).
    pub check: Option<&'a Check>,
}

/// Says why a typed answer cannot be used.
pub type Check = dyn Fn(&str) -> Option<String>;

/// How a typed answer becomes a TOML value.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Text,
    /// An integer when it reads as one; anything else is kept as text, and validation says an
    /// integer was expected.
    Number,
    /// Text that may be empty, meaning "remove the key".
    Optional,
    /// Comma-separated names, one per table of an array of tables: the key is written with `*`
    /// for the index (`bucket.*.name`).
    List,
}

/// One entry of a choice.
pub struct Choice {
    pub value: String,
    pub label: String,
}

/// An error from the terminal (closed, or Ctrl-C): the run stops and writes nothing.
#[derive(Debug)]
pub struct Interrupted {
    pub reason: String,
    /// The user pressed Ctrl-C.
    pub cancelled: bool,
}

impl From<dialoguer::Error> for Interrupted {
    fn from(error: dialoguer::Error) -> Interrupted {
        let dialoguer::Error::IO(io) = &error;
        Interrupted {
            reason: error.to_string(),
            // console reads Ctrl-C as an interrupted read (and raises SIGINT, which
            // `super::run` catches so that this error is seen).
            cancelled: io.kind() == std::io::ErrorKind::Interrupted,
        }
    }
}

pub struct Wizard {
    pub draft: Draft,
    interactive: bool,
    term: Term,
    theme: ColorfulTheme,
    /// Flags a run without a terminal needed and did not get.
    pub missing: Vec<String>,
    /// Flags whose value breaks a rule, with the reason.
    pub rejected: Vec<String>,
    /// Warnings about accepted answers, for a run without a terminal to print at the end.
    pub warnings: Vec<String>,
    /// Whether the draft is an existing file's (its values were the user's) rather than the
    /// skeleton's.
    pub editing: bool,
}

/// The value a typed answer is written as.
pub fn value_of(kind: Kind, text: &str) -> Value {
    let text = text.trim();
    match (kind, text.parse::<i64>()) {
        (Kind::Number, Ok(number)) => Value::from(number),
        _ => Value::from(text),
    }
}

/// The problems in one line: message, then the hint.
pub fn reason(problems: &[Problem]) -> String {
    problems
        .iter()
        .map(|p| match &p.help {
            Some(help) => format!("{}; {help}", p.message),
            None => p.message.clone(),
        })
        .collect::<Vec<_>>()
        .join(" — ")
}

/// The keys asked after `key`.
fn later(key: &str) -> &'static [&'static str] {
    let owns = |entry: &str| key == entry || key.starts_with(&format!("{entry}."));
    match ORDER.iter().position(|entry| owns(entry)) {
        Some(position) => &ORDER[position + 1..],
        None => &[],
    }
}

impl Wizard {
    pub fn new(draft: Draft, interactive: bool) -> Wizard {
        Wizard {
            draft,
            interactive,
            term: Term::stderr(),
            theme: ColorfulTheme::default(),
            missing: Vec::new(),
            rejected: Vec::new(),
            warnings: Vec::new(),
            editing: false,
        }
    }

    pub fn interactive(&self) -> bool {
        self.interactive
    }

    /// Prints a line on the terminal (nothing without one).
    pub fn say(&self, text: &str) {
        if self.interactive {
            let _ = self.term.write_line(text);
        }
    }

    /// Shows the cursor again: a prompt stopped by Ctrl-C leaves it hidden.
    pub fn restore_cursor(&self) {
        if self.interactive {
            let _ = self.term.show_cursor();
        }
    }

    /// A heading before a group of questions.
    pub fn section(&self, title: &str) {
        self.say(&format!("\n{}", style(title).bold().underlined()));
    }

    fn help(&self, help: &str) {
        for line in help.lines() {
            self.say(&format!("  {}", style(line).dim()));
        }
    }

    /// Why setting `key` with `apply` breaks a rule, if it does.
    pub fn problem(&self, keys: &[String], apply: impl FnOnce(&mut Draft)) -> Option<String> {
        let first = keys.first().map_or("", String::as_str);
        let problems = self.draft.check(keys, later(first), apply);
        (!problems.is_empty()).then(|| reason(&problems))
    }

    /// Warns about an answer that is accepted: at once on a terminal, else kept for the end.
    pub fn warn(&mut self, text: &str) {
        if self.interactive {
            self.say(&format!("  {} {text}", style("⚠").yellow()));
        } else {
            self.warnings.push(text.to_string());
        }
    }

    fn problem_of(&self, q: &Question<'_>, kind: Kind, text: &str) -> Option<String> {
        if q.key.is_empty() {
            return None;
        }
        let trimmed = text.trim();
        if trimmed.is_empty() && kind != Kind::Optional {
            return Some(required(q));
        }
        if let Some(why) = q.check.and_then(|check| check(trimmed)) {
            return Some(why);
        }
        if kind == Kind::Number && trimmed.parse::<i64>().is_err() {
            let name = q.key.rsplit('.').next().unwrap_or(q.key);
            return Some(format!(
                "`{name}` must be a whole number, written in digits (such as 4), found `{trimmed}`"
            ));
        }
        self.problem(&keys(q.key, kind, text), |draft| {
            write(draft, q, kind, text)
        })
    }

    /// Records a flag whose value cannot be used; on a terminal the question is asked instead.
    pub fn reject(&mut self, flag: &str, value: &str, why: &str) {
        if self.interactive {
            self.say(&format!("  {} {flag} {value}: {why}", style("✘").red()));
        } else {
            self.rejected.push(format!("{flag} {value}: {why}"));
        }
    }

    /// Keeps an answer given by a flag that passed the checks.
    fn take_flag(&mut self, q: &Question<'_>, kind: Kind, given: String) -> String {
        write(&mut self.draft, q, kind, &given);
        self.took_flag(q, &given);
        given
    }

    /// Shows an answer given by a flag where the question would have been.
    fn took_flag(&self, q: &Question<'_>, answer: &str) {
        self.say(&format!(
            "{} {} · {answer} ({})",
            style("✔").green(),
            q.prompt,
            q.flag
        ));
    }

    /// Asks for text (or a number); returns the answer, `None` when it is missing.
    pub fn text(
        &mut self,
        q: &Question<'_>,
        kind: Kind,
        given: Option<String>,
        defaults: &[Option<String>],
    ) -> Result<Option<String>, Interrupted> {
        // The first default that passes the rules; failing that, the first one at all.
        let candidates: Vec<&String> = defaults.iter().flatten().collect();
        let default = candidates
            .iter()
            .find(|d| self.problem_of(q, kind, d).is_none())
            .or(candidates.first())
            .map(|d| d.to_string());
        let given = match given {
            Some(given) => match self.problem_of(q, kind, &given) {
                None => return Ok(Some(self.take_flag(q, kind, given))),
                Some(why) => Some((given, why)),
            },
            None => None,
        };
        if !self.interactive {
            let Some((given, why)) = given else {
                return Ok(match default {
                    Some(default) if self.problem_of(q, kind, &default).is_none() => {
                        write(&mut self.draft, q, kind, &default);
                        Some(default)
                    }
                    Some(default) => {
                        // A refused default always has a problem; empty only if it had none.
                        let why = self.problem_of(q, kind, &default).unwrap_or_default();
                        self.rejected
                            .push(format!("{} (default `{default}`): {why}", q.flag));
                        None
                    }
                    None if kind == Kind::Optional => Some(String::new()),
                    None => {
                        self.missing.push(q.flag.to_string());
                        None
                    }
                });
            };
            self.rejected.push(format!("{} {given}: {why}", q.flag));
            return Ok(None);
        }
        self.help(q.help);
        if let Some((given, why)) = &given {
            self.say(&format!("  {} {} {given}: {why}", style("✘").red(), q.flag));
        }
        let answer = {
            let this = &*self;
            let mut input = Input::<String>::with_theme(&self.theme)
                .with_prompt(q.prompt)
                .validate_with(|text: &String| -> Result<(), String> {
                    match this.problem_of(q, kind, text) {
                        None => Ok(()),
                        Some(why) => Err(why),
                    }
                });
            match (kind, default) {
                (Kind::Optional, Some(default)) => {
                    input = input.with_initial_text(default).allow_empty(true);
                }
                (Kind::Optional, None) => input = input.allow_empty(true),
                (_, Some(default)) => input = input.default(default),
                // An empty answer reaches the validator, which says why one is needed.
                (_, None) => input = input.allow_empty(true),
            }
            input.interact_text_on(&self.term)?
        };
        write(&mut self.draft, q, kind, &answer);
        Ok(Some(answer.trim().to_string()))
    }

    /// Asks for one of `choices`; writes the chosen value to the key unless the key is empty.
    pub fn choose(
        &mut self,
        q: &Question<'_>,
        choices: &[Choice],
        given: Option<String>,
        default: Option<String>,
    ) -> Result<Option<String>, Interrupted> {
        let check = |w: &Wizard, value: &str| w.problem_of(q, Kind::Text, value);
        let mut complaint = None;
        if let Some(given) = given {
            match check(self, &given) {
                None => return Ok(Some(self.take_flag(q, Kind::Text, given))),
                Some(why) if !self.interactive => {
                    self.rejected.push(format!("{} {given}: {why}", q.flag));
                    return Ok(None);
                }
                Some(why) => complaint = Some(format!("{} {given}: {why}", q.flag)),
            }
        }
        if !self.interactive {
            return Ok(match default {
                Some(default) => match check(self, &default) {
                    None => {
                        write(&mut self.draft, q, Kind::Text, &default);
                        Some(default)
                    }
                    Some(why) => {
                        self.rejected
                            .push(format!("{} (default `{default}`): {why}", q.flag));
                        None
                    }
                },
                None => {
                    self.missing.push(q.flag.to_string());
                    None
                }
            });
        }
        self.help(q.help);
        let labels: Vec<&str> = choices.iter().map(|c| c.label.as_str()).collect();
        let mut index = default
            .and_then(|d| choices.iter().position(|c| c.value == d))
            .unwrap_or(0);
        loop {
            if let Some(complaint) = complaint.take() {
                self.say(&format!("  {} {complaint}", style("✘").red()));
            }
            index = Select::with_theme(&self.theme)
                .with_prompt(q.prompt)
                .items(&labels)
                .default(index)
                .interact_on(&self.term)?;
            let Some(choice) = choices.get(index) else {
                continue;
            };
            match check(self, &choice.value) {
                None => {
                    write(&mut self.draft, q, Kind::Text, &choice.value);
                    return Ok(Some(choice.value.clone()));
                }
                Some(why) => complaint = Some(format!("{}: {why}", choice.value)),
            }
        }
    }

    /// Asks yes or no; writes the answer to the key unless the key is empty.
    pub fn confirm(
        &mut self,
        q: &Question<'_>,
        given: Option<bool>,
        default: bool,
    ) -> Result<bool, Interrupted> {
        let answer = match given {
            Some(given) => {
                self.took_flag(q, if given { "yes" } else { "no" });
                given
            }
            None if !self.interactive => default,
            None => {
                self.help(q.help);
                // Typing `y` alone must not answer: the Enter that follows would otherwise
                // answer the next question with its default.
                Confirm::with_theme(&self.theme)
                    .with_prompt(q.prompt)
                    .default(default)
                    .wait_for_newline(true)
                    .interact_on(&self.term)?
            }
        };
        if !q.key.is_empty() {
            self.draft.set(q.key, answer, None);
        }
        Ok(answer)
    }
}

/// Why an empty answer is not one.
fn required(q: &Question<'_>) -> String {
    match q.key {
        "project" => "a project id is required: the Google Cloud project that holds everything (6 to 30 lowercase letters, digits and hyphens)".into(),
        "name" => "a deployment name is required: it names the GKE cluster and prefixes every resource".into(),
        "gpu_pool.0.nodes" => "a node count is required: how many GPU nodes the pool starts with".into(),
        "gpu_pool.0.reservation" => "a reservation is required with capacity `reservation`: its name, or projects/<project>/reservations/<name>".into(),
        "cluster.authorized_networks" => "at least one network is required: the CIDRs (such as 203.0.113.0/24, your office or VPN) allowed to reach the control plane".into(),
        "state.bucket" => "a bucket is required for a GCS state: an existing bucket's name".into(),
        _ => format!("an answer is required: {}", q.prompt.to_lowercase()),
    }
}

/// The names of a [`Kind::List`] answer.
fn names(text: &str) -> Vec<&str> {
    text.split(',')
        .map(str::trim)
        .filter(|n| !n.is_empty())
        .collect()
}

/// The keys an answer is written to.
fn keys(key: &str, kind: Kind, text: &str) -> Vec<String> {
    match kind {
        Kind::List => (0..names(text).len().max(1))
            .map(|i| key.replace('*', &i.to_string()))
            .collect(),
        _ => vec![key.to_string()],
    }
}

/// Writes an answer: through the question's writer, or to its key. An empty optional answer
/// removes the key; a list answer writes one table per name and drops tables beyond them.
fn write(draft: &mut Draft, q: &Question<'_>, kind: Kind, text: &str) {
    let text = text.trim();
    if let Some(write) = q.write {
        return write(draft, text);
    }
    match kind {
        _ if q.key.is_empty() => {}
        Kind::Optional if text.is_empty() => draft.remove(q.key),
        Kind::List => {
            let names = names(text);
            for (i, name) in names.iter().enumerate() {
                draft.set(&q.key.replace('*', &i.to_string()), *name, None);
            }
            if let Some((array, _)) = q.key.split_once(".*") {
                for i in (names.len()..draft.count(array)).rev() {
                    draft.remove(&format!("{array}.{i}"));
                }
            }
        }
        _ => draft.set(q.key, value_of(kind, text), None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn later_keys_follow_the_asked_one() {
        assert_eq!(later("project").first(), Some(&"gpu_pool.0.machine_type"));
        assert_eq!(later("bucket.1.name").first(), Some(&"software.kueue"));
        assert_eq!(later("network.pods"), &[] as &[&str]);
        assert_eq!(later("unknown"), &[] as &[&str]);
    }

    #[test]
    fn numbers_are_written_as_integers_when_they_read_as_one() {
        assert_eq!(value_of(Kind::Number, " 32 ").as_integer(), Some(32));
        assert_eq!(value_of(Kind::Number, "thirty").as_str(), Some("thirty"));
        assert_eq!(value_of(Kind::Text, "32").as_str(), Some("32"));
    }
}
