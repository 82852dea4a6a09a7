//! Problems found in a blueprint and how they are reported.
//!
//! Every rule in [`super::validate`] records a [`Finding`] (message, byte span, label, hint) and
//! keeps going, so one run reports every problem at once. When validation ends the findings are
//! sorted by position and turned into [`Problem`]s, miette diagnostics that carry the file name,
//! the source text, the 1-based line and column, the labelled span and the hint. Rendering them
//! is the caller's job (`a3ctl validate` uses miette's graphical handler).

use std::ops::Range;
use std::path::PathBuf;
use std::sync::Arc;

use miette::{
    Diagnostic, LabeledSpan, MietteError, MietteSpanContents, SourceCode, SourceSpan, SpanContents,
};

/// A byte range in the blueprint text.
pub type Span = Range<usize>;

/// One problem found while checking a blueprint, before the source text is attached.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Finding {
    pub span: Span,
    pub message: String,
    pub label: String,
    pub help: Option<String>,
    /// Extra labelled spans, for example "first defined here" on a duplicate.
    pub secondary: Vec<(Span, String)>,
}

impl Finding {
    pub fn new(span: Span, message: impl Into<String>, label: impl Into<String>) -> Self {
        Self {
            span,
            message: message.into(),
            label: label.into(),
            help: None,
            secondary: Vec::new(),
        }
    }

    pub fn help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(help.into());
        self
    }

    pub fn also(mut self, span: Span, label: impl Into<String>) -> Self {
        self.secondary.push((span, label.into()));
        self
    }
}

/// The collector every decoding and validation step writes into.
#[derive(Debug, Default)]
pub(crate) struct Findings(pub Vec<Finding>);

impl Findings {
    pub fn push(&mut self, finding: Finding) {
        self.0.push(finding);
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// One problem in a blueprint, located in its file.
///
/// `line` and `column` are 1-based and count characters, the way editors do.
#[derive(Debug, Clone, thiserror::Error, Diagnostic)]
#[error("{message}")]
pub struct Problem {
    /// The sentence describing the problem, without a final period.
    pub message: String,
    /// What the highlighted span is, shown under it.
    pub label: String,
    /// How to fix it, when there is something useful to say.
    #[help]
    pub help: Option<String>,
    /// 1-based line of the start of the span.
    pub line: usize,
    /// 1-based column (in characters) of the start of the span.
    pub column: usize,
    #[source_code]
    source_code: Source,
    #[label(primary, "{label}")]
    span: SourceSpan,
    #[label(collection)]
    secondary: Vec<LabeledSpan>,
}

impl Problem {
    /// `line` and `column` are where `finding.span` starts (see [`LineCursor`]).
    pub(crate) fn from_finding(
        finding: Finding,
        source: &Source,
        (line, column): (usize, usize),
    ) -> Self {
        let text = &source.text;
        let clamp = |span: &Span| -> SourceSpan {
            let start = span.start.min(text.len());
            let end = span.end.clamp(start, text.len());
            (start, end - start).into()
        };
        Self {
            message: finding.message,
            label: finding.label,
            help: finding.help,
            line,
            column,
            span: clamp(&finding.span),
            secondary: finding
                .secondary
                .iter()
                .map(|(span, label)| LabeledSpan::new_with_span(Some(label.clone()), clamp(span)))
                .collect(),
            source_code: source.clone(),
        }
    }

    /// The byte range this problem points at.
    pub fn span(&self) -> Span {
        self.span.offset()..self.span.offset() + self.span.len()
    }

    /// The file name used in messages, as given to [`super::parse`].
    pub fn file(&self) -> &str {
        &self.source_code.name
    }

    /// The length in characters of the line this problem starts on, up to `limit` (counting
    /// stops there, so asking costs at most `limit` characters each way).
    pub fn line_length(&self, limit: usize) -> usize {
        let text: &str = &self.source_code.text;
        let mut offset = self.span.offset().min(text.len());
        while !text.is_char_boundary(offset) {
            offset -= 1;
        }
        let before = text[..offset]
            .chars()
            .rev()
            .take_while(|c| *c != '\n')
            .take(limit)
            .count();
        let after = text[offset..]
            .chars()
            .take_while(|c| *c != '\n')
            .take(limit)
            .count();
        (before + after).min(limit)
    }
}

/// The blueprint text as miette reads it for a problem's snippet.
///
/// miette's own `SourceCode` for text finds a snippet's lines by scanning from the top of the
/// text, so drawing a problem near the end of a large blueprint costs the whole text. This one
/// keeps the start of every line (built once per blueprint, shared by its problems) and hands
/// miette only the text from the first line of the snippet, then shifts the answer back: the
/// same snippet, at the cost of its own lines.
#[derive(Debug, Clone)]
pub(crate) struct Source {
    name: String,
    text: Arc<str>,
    /// Byte offsets where lines start, as miette counts lines (`\n`, `\r\n` or a lone `\r`
    /// ends one); the first is 0.
    line_starts: Arc<[usize]>,
}

impl Source {
    pub(crate) fn new(name: &str, text: Arc<str>) -> Self {
        let bytes = text.as_bytes();
        let mut line_starts = vec![0];
        for (i, byte) in bytes.iter().enumerate() {
            let ends_line = match byte {
                b'\n' => true,
                b'\r' => bytes.get(i + 1) != Some(&b'\n'),
                _ => false,
            };
            if ends_line {
                line_starts.push(i + 1);
            }
        }
        Self {
            name: name.to_string(),
            text,
            line_starts: line_starts.into(),
        }
    }
}

impl SourceCode for Source {
    fn read_span<'a>(
        &'a self,
        span: &SourceSpan,
        context_lines_before: usize,
        context_lines_after: usize,
    ) -> Result<Box<dyn SpanContents<'a> + 'a>, MietteError> {
        // The line holding the span's start, then the first line of the snippet.
        let line = self
            .line_starts
            .partition_point(|start| *start <= span.offset())
            .saturating_sub(1);
        let first = line.saturating_sub(context_lines_before);
        let start = self.line_starts[first];
        let shifted = SourceSpan::new((span.offset() - start).into(), span.len());
        let tail: &'a [u8] = &self.text.as_bytes()[start..];
        let contents = tail.read_span(&shifted, context_lines_before, context_lines_after)?;
        Ok(Box::new(MietteSpanContents::new_named(
            self.name.clone(),
            contents.data(),
            (contents.span().offset() + start, contents.span().len()).into(),
            contents.line() + first,
            contents.column(),
            contents.line_count() + first,
        )))
    }
}

/// Why a blueprint could not be loaded.
#[derive(Debug, thiserror::Error, Diagnostic)]
pub enum BlueprintError {
    /// The file could not be read: missing, a directory, not a regular file, too large, not
    /// UTF-8... ([`crate::files::ReadError`] says which, with a hint).
    #[error("Failed to read blueprint `{}`: {}", path.display(), source.reason())]
    #[diagnostic(help("{}", source.hint()))]
    Read {
        path: PathBuf,
        #[source]
        source: crate::files::ReadError,
    },
    /// The file was read but has problems; all of them are listed.
    #[error("Blueprint `{file}` has {} problem{}", problems.len(), if problems.len() == 1 { "" } else { "s" })]
    Invalid {
        file: String,
        #[related]
        problems: Vec<Problem>,
    },
}

impl BlueprintError {
    /// The problems found, in file order (empty for [`BlueprintError::Read`]).
    pub fn problems(&self) -> &[Problem] {
        match self {
            BlueprintError::Read { .. } => &[],
            BlueprintError::Invalid { problems, .. } => problems,
        }
    }
}

/// 1-based line and character column of a byte offset.
#[cfg(test)]
pub(crate) fn line_column(text: &str, offset: usize) -> (usize, usize) {
    LineCursor::new(text).advance(offset)
}

/// Line and column of ascending byte offsets in one pass over the text.
///
/// Problems are located in file order, so each one continues from where the previous one
/// stopped: locating every problem costs one walk over the text, however many there are (a walk
/// from the start for each problem made `validate` quadratic in the number of problems).
pub(crate) struct LineCursor<'t> {
    text: &'t str,
    offset: usize,
    line: usize,
    column: usize,
}

impl<'t> LineCursor<'t> {
    pub(crate) fn new(text: &'t str) -> Self {
        Self {
            text,
            offset: 0,
            line: 1,
            column: 1,
        }
    }

    /// The 1-based line and character column of `offset` (clamped to the text, and to the start
    /// of the character it falls in). An offset before the previous one starts over from the top.
    pub(crate) fn advance(&mut self, offset: usize) -> (usize, usize) {
        let mut offset = offset.min(self.text.len());
        while !self.text.is_char_boundary(offset) {
            offset -= 1;
        }
        if offset < self.offset {
            *self = Self::new(self.text);
        }
        let passed = &self.text[self.offset..offset];
        match passed.rfind('\n') {
            Some(last) => {
                self.line += passed.matches('\n').count();
                self.column = passed[last + 1..].chars().count() + 1;
            }
            None => self.column += passed.chars().count(),
        }
        self.offset = offset;
        (self.line, self.column)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_column_counts_from_one() {
        let text = "a = 1\nbé = 2\n";
        assert_eq!(line_column(text, 0), (1, 1));
        assert_eq!(line_column(text, 6), (2, 1));
        assert_eq!(line_column(text, 10), (2, 4));
        assert_eq!(line_column(text, 999), (3, 1));
        // Inside the two-byte `é`: its start.
        assert_eq!(line_column(text, 8), (2, 2));
    }

    #[test]
    fn a_cursor_gives_the_same_answers_in_one_pass() {
        let text = "a = 1\nbé = 2\n\nxyz\n";
        let mut cursor = LineCursor::new(text);
        for offset in 0..=text.len() + 2 {
            assert_eq!(
                cursor.advance(offset),
                naive(text, offset),
                "offset {offset}"
            );
        }
        // Going back starts over.
        assert_eq!(cursor.advance(6), (2, 1));
        assert_eq!(cursor.advance(6), (2, 1));
    }

    fn naive(text: &str, offset: usize) -> (usize, usize) {
        let mut offset = offset.min(text.len());
        while !text.is_char_boundary(offset) {
            offset -= 1;
        }
        let before = &text[..offset];
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        (
            before.matches('\n').count() + 1,
            before[line_start..].chars().count() + 1,
        )
    }

    /// A problem drawn through [`Source`] looks exactly as through miette's own source for
    /// text: labels, secondary labels, context lines, CRLF and lone CR line ends, first and last
    /// lines, no final newline.
    #[test]
    fn snippets_are_drawn_as_miette_draws_them() {
        use miette::{GraphicalReportHandler, GraphicalTheme, NamedSource};

        #[derive(Debug, thiserror::Error, Diagnostic)]
        #[error("{message}")]
        struct Reference {
            message: String,
            label: String,
            #[help]
            help: Option<String>,
            #[source_code]
            source_code: NamedSource<Arc<str>>,
            #[label(primary, "{label}")]
            span: SourceSpan,
            #[label(collection)]
            secondary: Vec<LabeledSpan>,
        }

        let base = crate::blueprint::testing::BASE;
        let texts = [
            base.replace("project =", "projct ="),
            format!("stray = 1\n{base}colour = 2"),
            base.replace("nodes = 2", "nodes = 2\n\n[[gpu_pool]]\nname = \"a3mega\"\nmachine_type = \"a3-megagpu-8g\"\nnodes = 1"),
            format!("{base}[cluster\n"),
            base.replace('\n', "\r\n").replace("nodes = 2", "nodes = 0"),
            format!("# a\r# b\r{}", base.replace("us-central1-a", "us-east4-a")),
            (0..40).map(|i| format!("k{i} = {i}\n")).collect::<String>() + base,
        ];
        let handler =
            GraphicalReportHandler::new_themed(GraphicalTheme::unicode_nocolor()).with_width(100);
        for text in &texts {
            let error = crate::blueprint::parse(text, "t.toml").expect_err("has problems");
            assert!(!error.problems().is_empty());
            for problem in error.problems() {
                let reference = Reference {
                    message: problem.message.clone(),
                    label: problem.label.clone(),
                    help: problem.help.clone(),
                    source_code: NamedSource::new("t.toml", Arc::clone(&problem.source_code.text)),
                    span: problem.span,
                    secondary: problem.secondary.clone(),
                };
                let (mut ours, mut theirs) = (String::new(), String::new());
                handler.render_report(&mut ours, problem).expect("renders");
                handler
                    .render_report(&mut theirs, &reference)
                    .expect("renders");
                assert_eq!(ours, theirs, "in {text:?}");
            }
        }
    }
}
