//! Errors as users read them: a sentence naming what failed, its causes, then a blank line and a
//! `hint:` saying what to do next. Blueprint problems are rendered by miette with their source
//! span.

use super::Printer;
use crate::blueprint::{BlueprintError, Problem};
use crate::cloud::CloudError;
use crate::files::ReadError;
use crate::state::objects::ObjectError;
use miette::{GraphicalReportHandler, GraphicalTheme};

/// A command's failure: what happened, why, and what to do.
#[derive(Debug, Clone, PartialEq)]
pub struct Failure {
    pub message: String,
    pub causes: Vec<String>,
    pub hint: Option<String>,
    /// Pre-rendered detail printed before the message (e.g. blueprint diagnostics).
    pub detail: Option<String>,
}

impl Failure {
    pub fn new(message: impl Into<String>) -> Failure {
        Failure {
            message: message.into(),
            causes: vec![],
            hint: None,
            detail: None,
        }
    }

    pub fn cause(mut self, cause: impl Into<String>) -> Failure {
        self.causes.push(cause.into());
        self
    }

    pub fn hint(mut self, hint: impl Into<String>) -> Failure {
        self.hint = Some(hint.into());
        self
    }

    pub fn maybe_hint(mut self, hint: Option<String>) -> Failure {
        self.hint = hint.or(self.hint);
        self
    }

    /// A cloud error while doing `what`.
    pub fn cloud(what: impl Into<String>, error: &CloudError) -> Failure {
        let code = error.code();
        let cause = if code.is_empty() {
            error.message.clone()
        } else {
            format!("{} ({code})", error.message)
        };
        Failure::new(what)
            .cause(cause)
            .maybe_hint(error.hint.clone())
    }

    /// A failed call of the state bucket's object store (`a3ctl state create-bucket`).
    pub fn object(what: impl Into<String>, error: &ObjectError) -> Failure {
        let cause = if error.code.is_empty() {
            error.message.clone()
        } else {
            format!("{} ({})", error.message, error.code)
        };
        Failure::new(what)
            .cause(cause)
            .maybe_hint(error.hint.clone())
    }

    /// A blueprint that does not load: why it could not be read, with a hint, or its problems
    /// rendered with their source (at most [`MAX_SHOWN_PROBLEMS`] of them).
    pub fn blueprint(printer: &Printer, error: &BlueprintError) -> Failure {
        if let BlueprintError::Read { source, .. } = error {
            return Failure::new(error.to_string()).hint(source.hint());
        }
        Failure {
            detail: Some(render_blueprint_error(printer, error)),
            ..Failure::new(error.to_string())
        }
    }

    /// A file the user named that could not be read, e.g. a saved plan or a state file.
    pub fn file(error: &ReadError) -> Failure {
        Failure::new(capitalized(&error.to_string())).hint(error.hint())
    }

    pub fn render(&self, printer: &Printer) -> String {
        let mut out = String::new();
        if let Some(detail) = &self.detail {
            out.push_str(detail);
        }
        let label = if printer.color {
            "\x1b[1;31merror\x1b[0m"
        } else {
            "error"
        };
        let complete = super::invocation::complete;
        out.push_str(&format!("{label}: {}\n", self.message));
        for cause in &self.causes {
            out.push_str(&format!("  Caused by: {}\n", complete(cause)));
        }
        if let Some(hint) = self.hint.as_deref().map(complete) {
            let label = if printer.color {
                "\x1b[1;36mhint\x1b[0m"
            } else {
                "hint"
            };
            out.push_str(&format!("\n{label}: {hint}\n"));
        }
        out
    }
}

/// How many problems of a blueprint are drawn; the rest are counted. Fifty fill a few screens,
/// which is as many as anyone fixes before running `validate` again, and drawing each one scans
/// the text up to its span, so the cap also keeps a blueprint with thousands of problems fast.
pub const MAX_SHOWN_PROBLEMS: usize = 50;

/// The first [`MAX_SHOWN_PROBLEMS`] problems of a blueprint with their spans, as miette draws
/// them, then how many more there are.
pub fn render_blueprint_error(printer: &Printer, error: &BlueprintError) -> String {
    let theme = if printer.color {
        GraphicalTheme::unicode()
    } else {
        GraphicalTheme::unicode_nocolor()
    };
    let handler = GraphicalReportHandler::new_themed(theme).with_width(100);
    let mut out = String::new();
    let problems = error.problems();
    for problem in problems.iter().take(MAX_SHOWN_PROBLEMS) {
        if problem.line_length(MAX_SNIPPET_LINE + 1) > MAX_SNIPPET_LINE {
            // miette draws a snippet's lines whole: a problem on a megabyte-long line would
            // print that megabyte. Say where it is instead.
            let _ = handler.render_report(&mut out, &WithoutSnippet(problem));
        } else {
            let _ = handler.render_report(&mut out, problem);
        }
        out.push('\n');
    }
    if let Some(more) = problems.len().checked_sub(MAX_SHOWN_PROBLEMS)
        && more > 0
    {
        out.push_str(&format!(
            "… and {more} more problem{} (fix these first, then run `a3ctl validate` again)\n\n",
            if more == 1 { "" } else { "s" }
        ));
    }
    out
}

/// A blueprint's warnings ([`crate::blueprint::warnings`]) as miette draws them: like problems,
/// marked as warnings.
pub fn render_warnings(printer: &Printer, warnings: &[Problem]) -> String {
    let theme = if printer.color {
        GraphicalTheme::unicode()
    } else {
        GraphicalTheme::unicode_nocolor()
    };
    let handler = GraphicalReportHandler::new_themed(theme).with_width(100);
    let mut out = String::new();
    for warning in warnings {
        let _ = handler.render_report(&mut out, &AsWarning(warning));
        out.push('\n');
    }
    out
}

/// A problem drawn as a warning.
#[derive(Debug)]
struct AsWarning<'p>(&'p Problem);

impl std::fmt::Display for AsWarning<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.0.message)
    }
}

impl std::error::Error for AsWarning<'_> {}

impl miette::Diagnostic for AsWarning<'_> {
    fn severity(&self) -> Option<miette::Severity> {
        Some(miette::Severity::Warning)
    }
    fn help<'a>(&'a self) -> Option<Box<dyn std::fmt::Display + 'a>> {
        miette::Diagnostic::help(self.0)
    }
    fn source_code(&self) -> Option<&dyn miette::SourceCode> {
        miette::Diagnostic::source_code(self.0)
    }
    fn labels(&self) -> Option<Box<dyn Iterator<Item = miette::LabeledSpan> + '_>> {
        miette::Diagnostic::labels(self.0)
    }
}

/// Lines longer than this (in characters) are not drawn in a problem's snippet.
const MAX_SNIPPET_LINE: usize = 400;

/// A problem drawn without its source snippet: its message with the location, label and hint.
#[derive(Debug)]
struct WithoutSnippet<'p>(&'p Problem);

impl std::fmt::Display for WithoutSnippet<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let p = self.0;
        write!(
            f,
            "{}\n[{}:{}:{}] {} (the line is longer than {MAX_SNIPPET_LINE} characters; not shown)",
            p.message,
            p.file(),
            p.line,
            p.column,
            p.label
        )
    }
}

impl std::error::Error for WithoutSnippet<'_> {}

impl miette::Diagnostic for WithoutSnippet<'_> {
    fn help<'a>(&'a self) -> Option<Box<dyn std::fmt::Display + 'a>> {
        self.0
            .help
            .as_ref()
            .map(|help| Box::new(help) as Box<dyn std::fmt::Display>)
    }
}

fn capitalized(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cloud::ErrorClass;

    #[test]
    fn failures_read_as_sentence_cause_and_hint() {
        let printer = Printer {
            color: false,
            bars: false,
            quiet: false,
        };
        let mut error = CloudError::new(
            ErrorClass::Quota,
            "Quota 'NETWORKS' exceeded.  Limit: 15.0 globally.",
        )
        .with_hint("request more quota");
        error.http_status = Some(403);
        error.status = "QUOTA_EXCEEDED".into();
        let text = Failure::cloud("Failed to create `network.gpu-3`", &error).render(&printer);
        assert_eq!(
            text,
            "error: Failed to create `network.gpu-3`\n  Caused by: Quota 'NETWORKS' exceeded.  Limit: 15.0 globally. (403 QUOTA_EXCEEDED)\n\nhint: request more quota\n"
        );
    }

    fn rendered_with_unknown_keys(count: usize) -> String {
        let printer = Printer {
            color: false,
            bars: false,
            quiet: false,
        };
        let keys: String = (0..count).map(|i| format!("stray_{i} = 1\n")).collect();
        let text = format!(
            "name = \"a3mega\"\nproject = \"my-project\"\nregion = \"us-central1\"\nzone = \"us-central1-a\"\n{keys}\n[[gpu_pool]]\nmachine_type = \"a3-megagpu-8g\"\nnodes = 2\n"
        );
        let error = crate::blueprint::parse(&text, "t.toml").expect_err("stray keys");
        assert_eq!(error.problems().len(), count);
        render_blueprint_error(&printer, &error)
    }

    #[test]
    fn at_most_fifty_problems_are_drawn_and_the_rest_counted() {
        let drawn = |text: &str| text.matches("Unknown key `stray_").count();
        let all = rendered_with_unknown_keys(MAX_SHOWN_PROBLEMS);
        assert_eq!(drawn(&all), MAX_SHOWN_PROBLEMS);
        assert!(!all.contains("more problem"), "{all}");
        let one_more = rendered_with_unknown_keys(MAX_SHOWN_PROBLEMS + 1);
        assert_eq!(drawn(&one_more), MAX_SHOWN_PROBLEMS);
        assert!(
            one_more.ends_with(
                "… and 1 more problem (fix these first, then run `a3ctl validate` again)\n\n"
            ),
            "{one_more}"
        );
        let many = rendered_with_unknown_keys(3000);
        assert_eq!(drawn(&many), MAX_SHOWN_PROBLEMS);
        assert!(many.contains("… and 2950 more problems"), "{many}");
        // The first fifty in file order.
        assert!(
            many.contains("Unknown key `stray_49`") && !many.contains("Unknown key `stray_50`"),
            "{many}"
        );
    }

    #[test]
    fn a_problem_on_a_very_long_line_is_located_but_its_line_not_drawn() {
        let printer = Printer {
            color: false,
            bars: false,
            quiet: false,
        };
        let zones = vec!["\"us-central1-a\""; 10_000].join(", ");
        let text = format!(
            "name = \"a3mega\"\nproject = \"my-project\"\nregion = \"us-central1\"\nzone = \"us-central1-a\"\n\n[[gpu_pool]]\nmachine_type = \"a3-megagpu-8g\"\nnodes = 2\nplacement = \"none\"\nzones = [{zones}]\n"
        );
        let error = crate::blueprint::parse(&text, "t.toml").expect_err("repeated zones");
        assert_eq!(error.problems().len(), 9_999);
        let out = render_blueprint_error(&printer, &error);
        assert!(out.len() < 40_000, "{} bytes", out.len());
        assert!(
            out.contains("Zone `us-central1-a` is listed twice")
                && out.contains("[t.toml:10:27] duplicate zone (the line is longer than 400")
                && out.contains("… and 9949 more problems"),
            "{out}"
        );
    }
}
