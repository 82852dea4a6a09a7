//! Values as a reviewer reads them: a short value on one line (`"a3mega"`, `["10.0.0.0/20"]`), a
//! nested one (a Kubernetes object, firewall rules) as an indented YAML-like tree of fields in the
//! order the spec lists them, and a string of several lines (a script) as a `|` block, never cut.
//! Sensitive values (a Secret's data, an env var named like a password or token) are shown as
//! `(sensitive value)`.
//!
//! Scalars keep their JSON spelling (`"1.32"` is a string, `1.32` a number), so a tree is exactly
//! as unambiguous as the JSON it comes from.

use serde_json::Value;

/// One-line values longer than this are drawn as trees (unless they are plain strings, which are
/// never cut).
const INLINE_MAX: usize = 72;

/// What a redacted value is replaced with before it is drawn (never a value a spec can hold: it
/// starts with a NUL).
const SENSITIVE: &str = "\u{0}a3ctl:sensitive";

/// How a redacted value reads.
pub const SENSITIVE_TEXT: &str = "(sensitive value)";

/// Env var names whose values are never shown (matched on the upper-cased name).
const SENSITIVE_NAMES: &[&str] = &[
    "PASSWORD",
    "PASSWD",
    "SECRET",
    "TOKEN",
    "API_KEY",
    "APIKEY",
    "PRIVATE_KEY",
    "CREDENTIAL",
];

/// What a reference to another resource's output (`${filestore.shared.ip_address}`, filled in
/// by apply once that resource exists) names, as Terraform shows such values "(known after
/// apply)".
fn known_after_apply(s: &str) -> Option<&str> {
    let inner = s.strip_prefix("${")?.strip_suffix('}')?;
    (inner.contains('.') && !inner.contains(['{', '}', ' '])).then_some(inner)
}

/// The stand-in for the project's number in IAM members until the IAM adapter reads it
/// ([`crate::graph::identity::PROJECT_NUMBER`]).
const NUMBER_PLACEHOLDER: &str = "projects/PROJECT_NUMBER/";

/// `text` with the project number's stand-in said as what it is: a3ctl reads the number when it
/// applies, so the plan shows `projects/(project number)/`, never a literal `PROJECT_NUMBER`.
pub fn with_project_number(text: &str) -> String {
    text.replace(NUMBER_PLACEHOLDER, "projects/(project number)/")
}

/// The value on one line, when it fits: scalars (strings without line breaks, at any length),
/// empty containers, lists of such scalars and — with `objects` — flat objects, up to
/// [`INLINE_MAX`] characters.
pub fn inline(value: &Value, objects: bool) -> Option<String> {
    match value {
        Value::String(s) if s == SENSITIVE => Some(SENSITIVE_TEXT.to_string()),
        Value::String(s) if known_after_apply(s).is_some() => {
            known_after_apply(s).map(|what| format!("(known after apply: {what})"))
        }
        Value::String(s) if is_block(s) => None,
        Value::String(s) if s.contains(NUMBER_PLACEHOLDER) => Some(quoted(&with_project_number(s))),
        Value::Array(items) if items.is_empty() => Some("[]".into()),
        Value::Object(map) if map.is_empty() => Some("{}".into()),
        Value::Array(items) => {
            if !items.iter().all(is_flat_scalar) {
                return None;
            }
            let parts: Vec<String> = items.iter().filter_map(|v| inline(v, false)).collect();
            let text = format!("[{}]", parts.join(","));
            (text.chars().count() <= INLINE_MAX).then_some(text)
        }
        // A small object reads as TOML's inline table, the blueprint's own notation
        // (`{ count = 8, type = "nvidia-h100-mega-80gb" }`), its unset fields left out.
        Value::Object(map) => {
            if !objects || !map.values().all(is_flat_scalar) {
                return None;
            }
            let parts: Vec<String> = map
                .iter()
                .filter(|(_, v)| !v.is_null())
                .filter_map(|(k, v)| Some(format!("{} = {}", toml_key(k), inline(v, false)?)))
                .collect();
            if parts.is_empty() {
                return Some("{}".into());
            }
            let text = format!("{{ {} }}", parts.join(", "));
            (text.chars().count() <= INLINE_MAX).then_some(text)
        }
        other => Some(other.to_string()),
    }
}

/// A key as TOML writes it: bare when it can be, quoted otherwise.
fn toml_key(key: &str) -> String {
    let bare = !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if bare { key.to_string() } else { quoted(key) }
}

fn is_flat_scalar(value: &Value) -> bool {
    match value {
        Value::String(s) => !is_block(s),
        Value::Array(_) | Value::Object(_) => false,
        _ => true,
    }
}

/// A string drawn as a `|` block: it has line breaks and no other control characters (which a
/// block could not show; such a string stays JSON-quoted on one line).
fn is_block(s: &str) -> bool {
    s.contains('\n')
        && s != SENSITIVE
        && !s.chars().any(|c| c.is_control() && c != '\n' && c != '\t')
}

fn quoted(s: &str) -> String {
    Value::String(s.to_string()).to_string()
}

/// A key as a tree shows it: bare when it is made of letters, digits and `_ - . /`, else quoted.
fn key(k: &str) -> String {
    let plain = !k.is_empty()
        && k.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '/'));
    if plain { k.to_string() } else { quoted(k) }
}

/// The lines of `value` below a `name:`/`name =` line, indented by `indent` spaces: the fields of
/// an object, the items of a list, or the lines of a block string. Empty for a value that
/// [`inline`] draws.
pub fn lines(value: &Value, indent: usize) -> Vec<String> {
    let mut out = Vec::new();
    match value {
        Value::String(s) if is_block(s) => block(s, indent, &mut out),
        Value::Object(_) | Value::Array(_) => entries(value, indent, &mut out),
        _ => {}
    }
    out
}

/// The `|` indicator of a block string: `|` keeps one final line break, `|-` none, `|+` all.
pub fn block_indicator(value: &Value) -> Option<&'static str> {
    let Value::String(s) = value else {
        return None;
    };
    if !is_block(s) {
        return None;
    }
    Some(if s.ends_with("\n\n") {
        "|+"
    } else if s.ends_with('\n') {
        "|"
    } else {
        "|-"
    })
}

fn block(s: &str, indent: usize, out: &mut Vec<String>) {
    let body = s.strip_suffix('\n').unwrap_or(s);
    for line in body.split('\n') {
        if line.is_empty() {
            out.push(String::new());
        } else {
            out.push(format!("{:indent$}{line}", ""));
        }
    }
}

fn entries(value: &Value, indent: usize, out: &mut Vec<String>) {
    let pad = " ".repeat(indent);
    match value {
        Value::Object(map) => {
            for (k, v) in map {
                let k = key(k);
                if let Some(text) = inline(v, false) {
                    out.push(format!("{pad}{k}: {text}"));
                } else if let Some(indicator) = block_indicator(v) {
                    out.push(format!("{pad}{k}: {indicator}"));
                    out.extend(lines(v, indent + 2));
                } else {
                    out.push(format!("{pad}{k}:"));
                    out.extend(lines(v, indent + 2));
                }
            }
        }
        Value::Array(items) => {
            for item in items {
                if let Some(text) = inline(item, false) {
                    out.push(format!("{pad}- {text}"));
                } else if let Some(indicator) = block_indicator(item) {
                    out.push(format!("{pad}- {indicator}"));
                    out.extend(lines(item, indent + 2));
                } else if item.is_object() {
                    // `- ` takes the place of the first field's indentation.
                    let mut nested = lines(item, indent + 2);
                    if let Some(first) = nested.first_mut() {
                        *first = format!("{pad}- {}", &first[indent + 2..]);
                    }
                    out.extend(nested);
                } else {
                    out.push(format!("{pad}-"));
                    out.extend(lines(item, indent + 2));
                }
            }
        }
        _ => {}
    }
}

/// The lines of a block string changed into another, each marked `' '` (kept), `'-'` (removed)
/// or `'+'` (added), in order; `None` when either is not a block string, or both are too long to
/// compare line by line (then both are shown whole).
pub fn line_diff<'a>(before: &'a Value, after: &'a Value) -> Option<Vec<(char, &'a str)>> {
    let (Value::String(b), Value::String(a)) = (before, after) else {
        return None;
    };
    if !is_block(b) || !is_block(a) {
        return None;
    }
    let old: Vec<&str> = b.strip_suffix('\n').unwrap_or(b).split('\n').collect();
    let new: Vec<&str> = a.strip_suffix('\n').unwrap_or(a).split('\n').collect();
    let (n, m) = (old.len(), new.len());
    if n.saturating_mul(m) > 250_000 {
        return None;
    }
    // Longest common subsequence from the ends: lcs[i][j] for old[i..] and new[j..].
    let mut lcs = vec![vec![0u32; m + 1]; n + 1];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            lcs[i][j] = if old[i] == new[j] {
                lcs[i + 1][j + 1] + 1
            } else {
                lcs[i + 1][j].max(lcs[i][j + 1])
            };
        }
    }
    let (mut i, mut j) = (0, 0);
    let mut out = Vec::with_capacity(n.max(m));
    while i < n || j < m {
        if i < n && j < m && old[i] == new[j] {
            out.push((' ', old[i]));
            i += 1;
            j += 1;
        } else if j < m && (i == n || lcs[i][j + 1] > lcs[i + 1][j]) {
            out.push(('+', new[j]));
            j += 1;
        } else {
            out.push(('-', old[i]));
            i += 1;
        }
    }
    Some(out)
}

/// A copy of a spec with its sensitive values replaced: the `data` and `stringData` of a
/// Kubernetes Secret, and the `value` of any `{name, value}` entry (an env var) whose name looks
/// like a password, token, key or credential.
pub fn redacted(spec: &Value) -> Value {
    let mut copy = spec.clone();
    for path in sensitive_paths(spec) {
        if let Some(slot) = pointer_mut(&mut copy, &path) {
            *slot = Value::String(SENSITIVE.to_string());
        }
    }
    copy
}

/// Whether a plan path (`object.data.password`, as [`crate::resource::spec::leaf_diffs`] spells
/// them) is sensitive in `spec`, or holds something that is.
pub fn is_sensitive(spec: &Value, path: &str) -> bool {
    sensitive_paths(spec).iter().any(|p| {
        let dotted = dotted(p);
        within(path, &dotted) || within(&dotted, path)
    })
}

/// Whether a plan path is sensitive when the spec it belongs to is not at hand (drift): anything in
/// or above a Secret's data (see [`in_secret_data`]), and the value of any env entry
/// (`...env[2].value`), whatever its name.
pub fn is_sensitive_path(secret: bool, path: &str) -> bool {
    in_secret_data(secret, path) || (path.ends_with("].value") && path.contains(".env["))
}

/// Whether a plan path is in or above the `data`/`stringData` of a Secret (`secret` says the
/// object is one, from its address).
pub fn in_secret_data(secret: bool, path: &str) -> bool {
    secret
        && ["object.data", "object.stringData"]
            .iter()
            .any(|p| within(path, p) || within(p, path))
}

/// `inner` is `outer` or lies inside it.
fn within(inner: &str, outer: &str) -> bool {
    inner == outer
        || inner
            .strip_prefix(outer)
            .is_some_and(|rest| rest.starts_with('.') || rest.starts_with('['))
}

/// One step into a value.
#[derive(Debug, Clone, PartialEq)]
enum Step {
    Key(String),
    Index(usize),
}

/// A path as plan diffs spell it: `a.b[0]["c d"]`.
fn dotted(path: &[Step]) -> String {
    let mut out = String::new();
    for step in path {
        match step {
            Step::Key(k) => {
                let plain = !k.is_empty()
                    && k.chars()
                        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
                if out.is_empty() && plain {
                    out.push_str(k);
                } else if plain {
                    out.push('.');
                    out.push_str(k);
                } else {
                    out.push_str(&format!("[{k:?}]"));
                }
            }
            Step::Index(i) => out.push_str(&format!("[{i}]")),
        }
    }
    out
}

fn pointer_mut<'a>(value: &'a mut Value, path: &[Step]) -> Option<&'a mut Value> {
    let mut at = value;
    for step in path {
        at = match step {
            Step::Key(k) => at.get_mut(k.as_str())?,
            Step::Index(i) => at.get_mut(*i)?,
        };
    }
    Some(at)
}

fn sensitive_paths(spec: &Value) -> Vec<Vec<Step>> {
    let mut out = Vec::new();
    if let Some(object) = spec.get("object")
        && object.get("kind").and_then(Value::as_str) == Some("Secret")
    {
        for field in ["data", "stringData"] {
            if let Some(Value::Object(map)) = object.get(field) {
                for k in map.keys() {
                    out.push(vec![
                        Step::Key("object".into()),
                        Step::Key(field.into()),
                        Step::Key(k.clone()),
                    ]);
                }
            }
        }
    }
    let mut at = Vec::new();
    env_values(spec, &mut at, &mut out);
    out
}

/// `{name: "DB_PASSWORD", value: ...}` anywhere: its `value`.
fn env_values(value: &Value, at: &mut Vec<Step>, out: &mut Vec<Vec<Step>>) {
    match value {
        Value::Object(map) => {
            if let (Some(Value::String(name)), Some(_)) = (map.get("name"), map.get("value")) {
                let upper = name.to_ascii_uppercase();
                if SENSITIVE_NAMES.iter().any(|s| upper.contains(s)) {
                    let mut path = at.clone();
                    path.push(Step::Key("value".into()));
                    out.push(path);
                }
            }
            for (k, v) in map {
                at.push(Step::Key(k.clone()));
                env_values(v, at, out);
                at.pop();
            }
        }
        Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                at.push(Step::Index(i));
                env_values(v, at, out);
                at.pop();
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_reference_reads_known_after_apply() {
        assert_eq!(
            inline(&json!("${filestore.shared.ip_address}"), false).as_deref(),
            Some("(known after apply: filestore.shared.ip_address)")
        );
        // Only a whole reference: text around one, or a shell `${VAR}`, stays as it is.
        assert_eq!(
            inline(&json!("ip=${filestore.shared.ip_address}"), false).as_deref(),
            Some("\"ip=${filestore.shared.ip_address}\"")
        );
        assert_eq!(
            inline(&json!("${HOME}"), false).as_deref(),
            Some("\"${HOME}\"")
        );
    }

    #[test]
    fn short_values_stay_on_one_line() {
        assert_eq!(inline(&json!("a3mega"), true).unwrap(), "\"a3mega\"");
        assert_eq!(inline(&json!(["a", "b"]), true).unwrap(), "[\"a\",\"b\"]");
        assert_eq!(inline(&json!({"a": 1}), true).unwrap(), "{ a = 1 }");
        assert_eq!(
            inline(&json!({"name": "r", "block": null, "a b": true}), true).unwrap(),
            "{ name = \"r\", \"a b\" = true }"
        );
        assert_eq!(inline(&json!({"a": 1}), false), None);
        assert_eq!(inline(&json!([{"a": 1}]), true), None);
        assert_eq!(inline(&json!("two\nlines"), true), None);
        let long = "x".repeat(300);
        assert_eq!(inline(&json!(long), true).unwrap(), format!("\"{long}\""));
    }

    #[test]
    fn objects_are_trees_and_scripts_are_blocks() {
        let value = json!({
            "metadata": {"name": "x", "labels": {"app.kubernetes.io/name": "x"}},
            "containers": [{"name": "c", "command": ["sh", "-c", "set -e\necho hi\n"]}],
            "empty": {},
        });
        assert_eq!(
            lines(&value, 2).join("\n"),
            [
                "  metadata:",
                "    name: \"x\"",
                "    labels:",
                "      app.kubernetes.io/name: \"x\"",
                "  containers:",
                "    - name: \"c\"",
                "      command:",
                "        - \"sh\"",
                "        - \"-c\"",
                "        - |",
                "          set -e",
                "          echo hi",
                "  empty: {}",
            ]
            .join("\n")
        );
    }

    #[test]
    fn block_indicators_keep_the_final_line_breaks() {
        assert_eq!(block_indicator(&json!("a\nb")), Some("|-"));
        assert_eq!(block_indicator(&json!("a\nb\n")), Some("|"));
        assert_eq!(block_indicator(&json!("a\nb\n\n")), Some("|+"));
        assert_eq!(block_indicator(&json!("a\r\nb")), None);
    }

    #[test]
    fn scripts_are_compared_line_by_line() {
        let (old, new) = (json!("set -e\na\nb\nc\n"), json!("set -e\na\nB\nc\nd\n"));
        let diff = line_diff(&old, &new).unwrap();
        assert_eq!(
            diff,
            [
                (' ', "set -e"),
                (' ', "a"),
                ('-', "b"),
                ('+', "B"),
                (' ', "c"),
                ('+', "d")
            ]
        );
        assert_eq!(line_diff(&json!("one line"), &json!("two\nlines")), None);
    }

    #[test]
    fn secrets_and_password_env_vars_are_redacted() {
        let spec = json!({
            "cluster": "c",
            "object": {
                "kind": "Secret",
                "data": {"password": "aHVudGVyMg=="},
                "spec": {"env": [{"name": "DB_PASSWORD", "value": "hunter2"}, {"name": "MODE", "value": "fast"}]},
            }
        });
        let shown = redacted(&spec);
        let text = lines(&shown, 0).join("\n");
        assert!(!text.contains("aHVudGVyMg=="), "{text}");
        assert!(!text.contains("hunter2"), "{text}");
        assert!(text.contains("password: (sensitive value)"), "{text}");
        assert!(text.contains("value: \"fast\""), "{text}");
        assert!(is_sensitive(&spec, "object.data.password"));
        assert!(is_sensitive(&spec, "object.data"));
        assert!(is_sensitive(&spec, "object.spec.env[0].value"));
        assert!(!is_sensitive(&spec, "object.spec.env[1].value"));
        assert!(is_sensitive_path(true, "object.data.password"));
        assert!(is_sensitive_path(true, "object"));
        assert!(!is_sensitive_path(false, "object.data.password"));
        assert!(is_sensitive_path(
            false,
            "object.spec.containers[0].env[1].value"
        ));
        assert!(!is_sensitive_path(
            false,
            "object.spec.containers[0].env[1].name"
        ));
    }
}
