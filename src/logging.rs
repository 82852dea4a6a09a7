//! Structured logs through [`tracing`]: what a3ctl did, for a bug report or a CI log, apart from
//! the output meant for people ([`crate::ui`]).
//!
//! - On stderr, off unless asked: `-v` shows a3ctl's `info` events (each step of an apply, each
//!   retry), `-vv` `debug` (reads, preflight checks), `-vvv` `trace` of a3ctl and every library.
//!   `RUST_LOG` (the `tracing-subscriber` `EnvFilter` syntax, e.g. `RUST_LOG=a3ctl=debug`) wins
//!   over `-v` when set.
//! - `--log-file FILE`: one JSON object per event (timestamp, level, target, fields), at `debug`
//!   for a3ctl and `info` for libraries unless `RUST_LOG` says otherwise. Created readable by its
//!   owner only, appended to (a file shared by several runs stays readable).
//!
//! Secrets never reach a log: every line, whatever emitted it, goes through [`redact`] before it is
//! written, which replaces bearer tokens, OAuth access tokens, token / secret / password / key
//! fields and PEM private keys with `[redacted]`. a3ctl itself never logs a header, a credential
//! or a kubeconfig; the redaction is for what libraries log at `trace`.

use regex::Regex;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, LazyLock, Mutex};
use tracing_subscriber::fmt::MakeWriter;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{EnvFilter, Layer};

/// What the command line asked for.
#[derive(Debug, Clone, Default)]
pub struct LogOptions {
    /// How many `-v`.
    pub verbosity: u8,
    pub file: Option<PathBuf>,
}

/// The `EnvFilter` directives for stderr at a verbosity (`None`: no stderr log).
fn stderr_directives(verbosity: u8) -> Option<&'static str> {
    match verbosity {
        0 => None,
        1 => Some("a3ctl=info,a3ctl_sim=warn,warn"),
        2 => Some("a3ctl=debug,a3ctl_sim=info,warn"),
        _ => Some("trace"),
    }
}

const FILE_DIRECTIVES: &str = "a3ctl=debug,a3ctl_sim=info,info";

/// Installs the global subscriber. Fails only when the log file cannot be opened.
pub fn init(options: &LogOptions) -> Result<(), String> {
    let rust_log = std::env::var("RUST_LOG")
        .ok()
        .filter(|v| !v.trim().is_empty());
    let filter = |fallback: &str| match &rust_log {
        Some(directives) => {
            EnvFilter::try_new(directives).unwrap_or_else(|_| EnvFilter::new(fallback))
        }
        None => EnvFilter::new(fallback),
    };
    let stderr = match (&rust_log, stderr_directives(options.verbosity)) {
        (None, None) => None,
        (_, fallback) => Some(
            tracing_subscriber::fmt::layer()
                .with_writer(Redacting::new(Sink::Stderr))
                .with_ansi(false)
                .with_target(true)
                .with_filter(filter(fallback.unwrap_or("a3ctl=info,warn"))),
        ),
    };
    let file = match &options.file {
        None => None,
        Some(path) => {
            let handle = open_log(path)
                .map_err(|e| format!("cannot open the log file `{}`: {e}", path.display()))?;
            Some(
                tracing_subscriber::fmt::layer()
                    .json()
                    .with_current_span(false)
                    .with_span_list(false)
                    .with_writer(Redacting::new(Sink::File(Arc::new(Mutex::new(handle)))))
                    .with_filter(filter(FILE_DIRECTIVES)),
            )
        }
    };
    // A second initialisation (tests running commands in one process) keeps the first.
    let _ = tracing_subscriber::registry()
        .with(stderr)
        .with(file)
        .try_init();
    Ok(())
}

fn open_log(path: &Path) -> std::io::Result<std::fs::File> {
    let mut options = std::fs::OpenOptions::new();
    options.create(true).append(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    options.open(path)
}

#[derive(Clone)]
enum Sink {
    Stderr,
    File(Arc<Mutex<std::fs::File>>),
}

/// Makes one [`Line`] per event: the event is collected whole, redacted, then written at once.
#[derive(Clone)]
struct Redacting {
    sink: Sink,
}

impl Redacting {
    fn new(sink: Sink) -> Redacting {
        Redacting { sink }
    }
}

impl<'a> MakeWriter<'a> for Redacting {
    type Writer = Line;
    fn make_writer(&'a self) -> Line {
        Line {
            sink: self.sink.clone(),
            buffer: Vec::new(),
        }
    }
}

/// One event's text on its way out.
struct Line {
    sink: Sink,
    buffer: Vec<u8>,
}

impl Write for Line {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.buffer.extend_from_slice(bytes);
        Ok(bytes.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Drop for Line {
    fn drop(&mut self) {
        if self.buffer.is_empty() {
            return;
        }
        let text = redact(&String::from_utf8_lossy(&self.buffer));
        // A log that cannot be written must not stop the command.
        match &self.sink {
            Sink::Stderr => {
                let _ = std::io::stderr().lock().write_all(text.as_bytes());
            }
            Sink::File(file) => {
                if let Ok(mut file) = file.lock() {
                    let _ = file.write_all(text.as_bytes());
                }
            }
        }
    }
}

/// The patterns of secrets, each with what replaces it.
static SECRETS: LazyLock<Vec<(Regex, &'static str)>> = LazyLock::new(|| {
    let rule = |pattern: &str, replacement: &'static str| {
        (
            Regex::new(pattern).expect("a valid secret pattern"),
            replacement,
        )
    };
    vec![
        // PEM private keys (service account keys, client certificates' keys), even escaped in JSON.
        rule(
            r"-----BEGIN [A-Z ]*PRIVATE KEY-----(?s:.*?)-----END [A-Z ]*PRIVATE KEY-----",
            "[redacted private key]",
        ),
        // `Authorization: Bearer X`, `bearer X`, `Basic X`.
        rule(
            r"(?i)\b(bearer|basic)(\s+|\\?[\x22']?\s*[:=]\s*\\?[\x22']?)[A-Za-z0-9._~+/=-]{8,}",
            "${1}${2}[redacted]",
        ),
        // Google OAuth 2 access tokens and refresh tokens by their prefixes.
        rule(r"\bya29\.[A-Za-z0-9._-]+", "[redacted]"),
        rule(r"\b1//[A-Za-z0-9._-]{20,}", "[redacted]"),
        // Fields and query parameters named like secrets: `"access_token": "X"`, `token=X`,
        // `client_secret: X`, `X-Goog-Signature=X`.
        rule(
            r#"(?i)(\\?"?\b(?:access_token|refresh_token|id_token|token|client_secret|client-key-data|client_key|private_key|password|secret|x-goog-signature|sig)\b\\?"?\s*[:=]\s*\\?"?)[^\s",&}\\]+"#,
            "${1}[redacted]",
        ),
    ]
});

/// `text` with every secret replaced by `[redacted]`.
pub fn redact(text: &str) -> String {
    let mut out = std::borrow::Cow::Borrowed(text);
    for (pattern, replacement) in SECRETS.iter() {
        if pattern.is_match(&out) {
            out = std::borrow::Cow::Owned(pattern.replace_all(&out, *replacement).into_owned());
        }
    }
    out.into_owned()
}

#[cfg(test)]
mod tests {
    use super::redact;

    #[test]
    fn bearer_tokens_are_redacted() {
        assert_eq!(
            redact("authorization: Bearer abcdefgh12345678"),
            "authorization: Bearer [redacted]"
        );
        assert_eq!(
            redact(r#"{"headers":{"authorization":"Bearer eyJhbGciOi.J9x_y-z"}}"#),
            r#"{"headers":{"authorization":"Bearer [redacted]"}}"#
        );
    }

    #[test]
    fn oauth_tokens_are_redacted_wherever_they_are() {
        assert_eq!(
            redact("got ya29.a0AfB_byC-xyz for x"),
            "got [redacted] for x"
        );
        assert_eq!(
            redact("refresh 1//0gLongRefreshTokenValue_abc-123"),
            "refresh [redacted]"
        );
    }

    #[test]
    fn secret_fields_and_parameters_are_redacted() {
        assert_eq!(
            redact(r#"{"access_token":"abc.def","expires_in":3599}"#),
            r#"{"access_token":"[redacted]","expires_in":3599}"#
        );
        assert_eq!(
            redact("GET /o?alt=media&X-Goog-Signature=deadbeef&x=1"),
            "GET /o?alt=media&X-Goog-Signature=[redacted]&x=1"
        );
        assert_eq!(redact("token=s3cr3t end"), "token=[redacted] end");
        assert_eq!(
            redact(r#"message="{\"client_secret\": \"hush\"}""#),
            r#"message="{\"client_secret\": \"[redacted]\"}""#
        );
    }

    #[test]
    fn private_keys_are_redacted_across_lines() {
        let key = "k: -----BEGIN PRIVATE KEY-----\nMIIEv\nQ==\n-----END PRIVATE KEY----- after";
        assert_eq!(redact(key), "k: [redacted private key] after");
        let escaped = r#""private_key":"-----BEGIN RSA PRIVATE KEY-----\nMII\n-----END RSA PRIVATE KEY-----\n""#;
        assert!(!redact(escaped).contains("MII"), "{}", redact(escaped));
    }

    #[test]
    fn ordinary_text_is_left_alone() {
        for text in [
            "step cluster.main finished in 7m12s",
            "GET https://container.googleapis.com/v1/projects/p/locations/us-central1/clusters/a3mega 200",
            "tokens used: 5",
            "node_pool.gpu-0 RUNNING",
        ] {
            assert_eq!(redact(text), text);
        }
    }
}
