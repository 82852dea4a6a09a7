//! Typed, spanned access to the parsed TOML tree.
//!
//! `toml::de::DeTable::parse_recoverable` gives a tree where every key and value keeps its byte
//! span. [`Table`] reads typed values out of it and records a [`Finding`] for every wrong type,
//! missing required key and unknown key (with a "did you mean" from `strsim`) instead of stopping
//! at the first one. Which keys exist, and what they mean, is decided in [`super::schema`].

use toml::Spanned;
use toml::de::{DeTable, DeValue};

use super::error::{Finding, Findings, Span};

/// A value with the byte span it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Sp<T> {
    pub value: T,
    pub span: Span,
}

impl<T> Sp<T> {
    pub fn new(value: T, span: Span) -> Self {
        Self { value, span }
    }
}

impl Sp<String> {
    pub fn as_str(&self) -> &str {
        &self.value
    }
}

/// One table of the blueprint, with what is needed to report problems in it.
pub(crate) struct Table<'a, 'i> {
    table: &'a DeTable<'i>,
    /// Where a missing required key is reported: the table's header, or the file start for the root.
    anchor: Span,
    /// How the table is named in messages: `the top level`, `[network]`, `[[gpu_pool]] #2`.
    pub name: String,
}

/// "a string", "an integer": the TOML type of a value, with its article.
pub(crate) fn describe(value: &DeValue<'_>) -> &'static str {
    match value {
        DeValue::String(_) => "a string",
        DeValue::Integer(_) => "an integer",
        DeValue::Float(_) => "a float",
        DeValue::Boolean(_) => "a boolean",
        DeValue::Datetime(_) => "a date-time",
        DeValue::Array(_) => "an array",
        DeValue::Table(_) => "a table",
    }
}

/// The closest candidate to `word`, if one is close enough to be a likely typo.
pub(crate) fn did_you_mean<'c>(word: &str, candidates: &[&'c str]) -> Option<&'c str> {
    candidates
        .iter()
        .map(|candidate| (strsim::jaro_winkler(word, candidate), *candidate))
        .filter(|(score, _)| *score >= 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, candidate)| candidate)
}

/// The hint for a value outside a closed set: the likely intended one, or the whole set.
pub(crate) fn choice_hint(word: &str, candidates: &[&str]) -> String {
    match did_you_mean(word, candidates) {
        Some(candidate) => format!("did you mean `{candidate}`?"),
        None => format!("expected one of {}", quoted_list(candidates)),
    }
}

/// `a`, `b` or `c`.
pub(crate) fn quoted_list(items: &[&str]) -> String {
    let quoted: Vec<String> = items.iter().map(|item| format!("`{item}`")).collect();
    match quoted.split_last() {
        None => String::new(),
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
    }
}

impl<'a, 'i> Table<'a, 'i> {
    pub fn root(table: &'a DeTable<'i>) -> Self {
        Self {
            table,
            anchor: 0..0,
            name: "the top level".to_string(),
        }
    }

    fn entry(
        &self,
        key: &str,
    ) -> Option<(
        &'a Spanned<std::borrow::Cow<'i, str>>,
        &'a Spanned<DeValue<'i>>,
    )> {
        self.table.iter().find(|(k, _)| k.get_ref().as_ref() == key)
    }

    /// Whether `key` is present at all.
    pub fn has(&self, key: &str) -> bool {
        self.entry(key).is_some()
    }

    /// The span of `key` itself (not its value), if present.
    pub fn key_span(&self, key: &str) -> Option<Span> {
        self.entry(key).map(|(k, _)| k.span())
    }

    /// Whether `key` holds an array (of anything).
    pub fn is_array(&self, key: &str) -> bool {
        self.entry(key)
            .is_some_and(|(_, v)| matches!(v.get_ref(), DeValue::Array(_)))
    }

    /// Where problems about the table as a whole are reported.
    pub fn anchor(&self) -> Span {
        self.anchor.clone()
    }

    /// Reports every key not in `known`.
    pub fn check_keys(&self, known: &[&str], findings: &mut Findings) {
        for (key, _) in self.table.iter() {
            let word = key.get_ref().as_ref();
            if known.contains(&word) {
                continue;
            }
            let finding = Finding::new(
                key.span(),
                format!("Unknown key `{word}` in {}", self.name),
                "unknown key",
            );
            findings.push(match did_you_mean(word, known) {
                Some(candidate) => finding.help(format!("did you mean `{candidate}`?")),
                None => finding.help(format!("the keys allowed here are {}", quoted_list(known))),
            });
        }
    }

    fn wrong_type(
        &self,
        key: &str,
        value: &Spanned<DeValue<'_>>,
        expected: &str,
        findings: &mut Findings,
    ) {
        findings.push(
            Finding::new(
                value.span(),
                format!(
                    "`{key}` in {} must be {expected}, found {}",
                    self.name,
                    describe(value.get_ref())
                ),
                format!("expected {expected}"),
            )
            .help(match expected {
                "a string" => format!("quote the value: {key} = \"...\""),
                _ => format!("write {key} as {expected}"),
            }),
        );
    }

    fn missing(&self, key: &str, example: &str, findings: &mut Findings) {
        // A key that looks like a typo of this one is already reported as unknown, with a
        // "did you mean"; reporting the missing key too would say the same thing twice.
        let misspelt = self.table.iter().any(|(k, _)| {
            let word = k.get_ref().as_ref();
            word != key && did_you_mean(word, &[key]).is_some()
        });
        if misspelt {
            return;
        }
        findings.push(
            Finding::new(
                self.anchor.clone(),
                format!("Missing required key `{key}` in {}", self.name),
                format!("`{key}` is missing here"),
            )
            .help(format!("add `{key} = {example}`")),
        );
    }

    pub fn str(&self, key: &str, findings: &mut Findings) -> Option<Sp<String>> {
        let (_, value) = self.entry(key)?;
        match value.get_ref() {
            DeValue::String(s) => Some(Sp::new(s.to_string(), value.span())),
            _ => {
                self.wrong_type(key, value, "a string", findings);
                None
            }
        }
    }

    /// A required string; `example` is shown in the hint when it is missing.
    pub fn req_str(&self, key: &str, example: &str, findings: &mut Findings) -> Option<Sp<String>> {
        if !self.has(key) {
            self.missing(key, example, findings);
            return None;
        }
        self.str(key, findings)
    }

    /// A date-time as text: a TOML date-time (`2026-01-03T02:00:00Z`) or a string holding one;
    /// [`super::maintenance`] parses it.
    pub fn time(&self, key: &str, findings: &mut Findings) -> Option<Sp<String>> {
        let (_, value) = self.entry(key)?;
        match value.get_ref() {
            DeValue::String(s) => Some(Sp::new(s.to_string(), value.span())),
            DeValue::Datetime(d) => Some(Sp::new(d.to_string(), value.span())),
            _ => {
                self.wrong_type(key, value, "a date-time", findings);
                None
            }
        }
    }

    /// A required [`Table::time`].
    pub fn req_time(
        &self,
        key: &str,
        example: &str,
        findings: &mut Findings,
    ) -> Option<Sp<String>> {
        if !self.has(key) {
            self.missing(key, example, findings);
            return None;
        }
        self.time(key, findings)
    }

    pub fn int(&self, key: &str, findings: &mut Findings) -> Option<Sp<i64>> {
        let (_, value) = self.entry(key)?;
        match value.get_ref() {
            DeValue::Integer(i) => match i64::from_str_radix(i.as_str(), i.radix()) {
                Ok(n) => Some(Sp::new(n, value.span())),
                Err(_) => {
                    findings.push(Finding::new(
                        value.span(),
                        format!("`{key}` in {} is out of range", self.name),
                        "does not fit in a 64-bit integer",
                    ));
                    None
                }
            },
            _ => {
                self.wrong_type(key, value, "an integer", findings);
                None
            }
        }
    }

    pub fn req_int(&self, key: &str, example: &str, findings: &mut Findings) -> Option<Sp<i64>> {
        if !self.has(key) {
            self.missing(key, example, findings);
            return None;
        }
        self.int(key, findings)
    }

    pub fn bool(&self, key: &str, findings: &mut Findings) -> Option<Sp<bool>> {
        let (_, value) = self.entry(key)?;
        match value.get_ref() {
            DeValue::Boolean(b) => Some(Sp::new(*b, value.span())),
            _ => {
                self.wrong_type(key, value, "a boolean", findings);
                None
            }
        }
    }

    /// An array of strings; any wrong element is reported and the whole array is dropped.
    pub fn str_array(&self, key: &str, findings: &mut Findings) -> Option<Sp<Vec<Sp<String>>>> {
        let (_, value) = self.entry(key)?;
        let DeValue::Array(items) = value.get_ref() else {
            self.wrong_type(key, value, "an array of strings", findings);
            return None;
        };
        let mut out = Some(Vec::new());
        for item in items.iter() {
            match item.get_ref() {
                DeValue::String(s) => {
                    if let Some(list) = out.as_mut() {
                        list.push(Sp::new(s.to_string(), item.span()));
                    }
                }
                other => {
                    out = None;
                    findings.push(Finding::new(
                        item.span(),
                        format!(
                            "Every entry of `{key}` in {} must be a string, found {}",
                            self.name,
                            describe(other)
                        ),
                        "expected a string",
                    ));
                }
            }
        }
        out.map(|list| Sp::new(list, value.span()))
    }

    /// A sub-table (`[network]` or `network = { ... }`).
    pub fn table(&self, key: &str, name: String, findings: &mut Findings) -> Option<Table<'a, 'i>> {
        let (k, value) = self.entry(key)?;
        match value.get_ref() {
            DeValue::Table(table) => Some(Table {
                table,
                anchor: k.span(),
                name,
            }),
            _ => {
                self.wrong_type(key, value, "a table", findings);
                None
            }
        }
    }

    /// An array of tables (`[[gpu_pool]]` or `gpu_pool = [{ ... }]`), with each entry's span.
    pub fn tables(&self, key: &str, name: &str, findings: &mut Findings) -> Vec<Table<'a, 'i>> {
        let Some((k, value)) = self.entry(key) else {
            return Vec::new();
        };
        let DeValue::Array(items) = value.get_ref() else {
            findings.push(
                Finding::new(
                    value.span(),
                    format!(
                        "`{key}` must be an array of tables, found {}",
                        describe(value.get_ref())
                    ),
                    "expected an array of tables",
                )
                .help(format!("write each entry as a `[[{key}]]` section")),
            );
            return Vec::new();
        };
        let several = items.len() > 1;
        let mut out = Vec::new();
        for (index, item) in items.iter().enumerate() {
            let label = if several {
                format!("{name} #{}", index + 1)
            } else {
                name.to_string()
            };
            match item.get_ref() {
                DeValue::Table(table) => {
                    // An entry written as `[[key]]` has no span of its own before its first key;
                    // fall back to the key of the array when the entry span is empty.
                    let span = item.span();
                    let anchor = if span.is_empty() {
                        k.span()
                    } else {
                        span.start..span.start
                    };
                    out.push(Table {
                        table,
                        anchor,
                        name: label,
                    });
                }
                other => findings.push(Finding::new(
                    item.span(),
                    format!(
                        "Every entry of `{key}` must be a table, found {}",
                        describe(other)
                    ),
                    "expected a table",
                )),
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn did_you_mean_finds_typos_and_ignores_strangers() {
        assert_eq!(did_you_mean("nodse", &["nodes", "name"]), Some("nodes"));
        assert_eq!(
            did_you_mean("machine_typ", &["machine_type", "nodes"]),
            Some("machine_type")
        );
        assert_eq!(did_you_mean("zzz", &["nodes", "name"]), None);
    }

    #[test]
    fn quoted_list_reads_as_a_sentence() {
        assert_eq!(quoted_list(&["a"]), "`a`");
        assert_eq!(quoted_list(&["a", "b", "c"]), "`a`, `b` or `c`");
    }
}
