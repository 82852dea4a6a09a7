//! Everything that formats for humans: the output gate ([`Printer`]), diagnostics, the plan view
//! and apply progress. The engine never prints; it reports through [`crate::apply::Reporter`],
//! which [`progress::Progress`] implements.
//!
//! Only pipeable data goes to stdout (`plan --json`, `graph`, `validate`'s summary); progress,
//! prompts, warnings and errors go to stderr. Colour follows `NO_COLOR` and whether stderr is a
//! terminal; progress bars are drawn only on a terminal and never when `A3CTL_NO_PROGRESS` is set.

pub mod destroy_warning;
pub mod diagnostics;
pub mod existing_view;
pub mod fold;
pub mod gpu_replacements;
pub mod invocation;
pub mod outputs_view;
pub mod plan_view;
pub mod progress;
pub mod value_tree;
pub mod verify_view;

use std::io::{IsTerminal, Write};

/// Where output goes and how it looks.
#[derive(Debug, Clone, Copy)]
pub struct Printer {
    pub color: bool,
    /// Draw progress bars (a terminal, and progress not turned off).
    pub bars: bool,
    pub quiet: bool,
}

impl Printer {
    pub fn from_env(quiet: bool) -> Printer {
        let tty = std::io::stderr().is_terminal();
        let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
        let no_progress = std::env::var_os(crate::env_vars::NO_PROGRESS)
            .is_some_and(|v| !v.is_empty() && v != "0");
        Printer {
            color: tty && !no_color,
            bars: tty && !no_progress && !quiet,
            quiet,
        }
    }

    /// Writes data to stdout; a closed pipe is not an error.
    pub fn out(&self, text: &str) {
        let mut stdout = std::io::stdout().lock();
        let _ = stdout.write_all(text.as_bytes());
        let _ = stdout.flush();
    }

    /// Writes a message to stderr.
    pub fn err(&self, text: &str) {
        let mut stderr = std::io::stderr().lock();
        let _ = stderr.write_all(text.as_bytes());
        let _ = stderr.flush();
    }

    /// Writes an informational line to stderr unless quiet.
    pub fn info(&self, text: &str) {
        if !self.quiet {
            self.err(&format!("{text}\n"));
        }
    }

    pub fn bold(&self, text: &str) -> String {
        if self.color {
            format!("\x1b[1m{text}\x1b[0m")
        } else {
            text.to_string()
        }
    }

    /// A passed check's mark (green `✓`) or a failed one's (red `✗`).
    pub fn check_mark(&self, ok: bool) -> String {
        let (mark, code) = if ok { ("✓", "32") } else { ("✗", "31") };
        if self.color {
            format!("\x1b[{code}m{mark}\x1b[0m")
        } else {
            mark.to_string()
        }
    }

    /// Colours a plan glyph the way Terraform does.
    pub fn glyph(&self, glyph: &str) -> String {
        if !self.color {
            return glyph.to_string();
        }
        let code = match glyph.trim() {
            "+" => "32",
            "-" => "31",
            "~" => "33",
            "-/+" => "35",
            _ => return glyph.to_string(),
        };
        format!("\x1b[{code}m{glyph}\x1b[0m")
    }
}
