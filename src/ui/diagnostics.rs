//! Errors as users read them: a sentence naming what failed, its causes, then a blank line and a
//! `hint:` saying what to do next. Blueprint problems are rendered by miette with their source
//! span.

use super::Printer;
use crate::blueprint::BlueprintError;
use crate::cloud::CloudError;
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

    /// A blueprint that does not load.
    pub fn blueprint(printer: &Printer, error: &BlueprintError) -> Failure {
        Failure {
            detail: Some(render_blueprint_error(printer, error)),
            ..Failure::new(error.to_string())
        }
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
        out.push_str(&format!("{label}: {}\n", self.message));
        for cause in &self.causes {
            out.push_str(&format!("  Caused by: {cause}\n"));
        }
        if let Some(hint) = &self.hint {
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

/// Every problem of a blueprint with its span, as miette draws it.
pub fn render_blueprint_error(printer: &Printer, error: &BlueprintError) -> String {
    let theme = if printer.color {
        GraphicalTheme::unicode()
    } else {
        GraphicalTheme::unicode_nocolor()
    };
    let handler = GraphicalReportHandler::new_themed(theme).with_width(100);
    let mut out = String::new();
    match error {
        BlueprintError::Read { .. } => {}
        BlueprintError::Invalid { problems, .. } => {
            for problem in problems {
                let _ = handler.render_report(&mut out, problem);
                out.push('\n');
            }
        }
    }
    out
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
}
