//! `docs/getting-started.md` is run, not just read: every ```` ```console ```` block of the guide is
//! a sequence of `$ COMMAND` lines, each followed by the output the command must print (stdout and
//! stderr together, as a terminal shows them). The commands run in order, in one scratch
//! directory holding the shipped blueprints, with `a3ctl`, `kubectl` and `gcloud` on `PATH`, a
//! private `HOME` and `KUBECONFIG`, and no colours or progress bars.
//!
//! In the expected output, a line `...` stands for any number of lines and `[..]` for any text
//! within a line (the conventions of the `trycmd` crate, which cannot run the guide itself: the
//! guide keeps `a3ctl sandbox serve` running in the background while kubectl talks to it). A
//! command is expected to succeed unless the block gives `? N` as its last line, the exit code it
//! must end with. `$ a3ctl sandbox serve &` starts the server in the background and goes on once
//! it is serving; at the end of the block it is stopped with Ctrl-C (SIGINT), as the guide tells
//! the reader to, and its whole output is compared then.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const GUIDE: &str = "docs/getting-started.md";
/// How long a background server may take to start serving.
const READY: Duration = Duration::from_secs(120);

#[derive(Debug)]
struct Step {
    /// Line of the `$` in the guide (1-based).
    line: usize,
    command: String,
    expected: Vec<String>,
    code: i32,
}

/// The console blocks of `text`, each a list of steps.
fn blocks(text: &str) -> Vec<Vec<Step>> {
    let mut blocks = Vec::new();
    let mut current: Option<Vec<Step>> = None;
    for (i, line) in text.lines().enumerate() {
        match (&mut current, line.trim_end()) {
            (None, "```console") => current = Some(Vec::new()),
            (Some(_), "```") => blocks.push(current.take().expect("in a block")),
            (Some(steps), line) => {
                if let Some(command) = line.strip_prefix("$ ") {
                    steps.push(Step {
                        line: i + 1,
                        command: command.to_string(),
                        expected: Vec::new(),
                        code: 0,
                    });
                } else if let Some(step) = steps.last_mut() {
                    match line.strip_prefix("? ").and_then(|c| c.parse().ok()) {
                        Some(code) => step.code = code,
                        None => step.expected.push(line.to_string()),
                    }
                } else {
                    panic!("{GUIDE}:{}: output before any `$` command", i + 1);
                }
            }
            (None, _) => {}
        }
    }
    assert!(current.is_none(), "{GUIDE}: a console block is not closed");
    blocks
}

/// Whether `line` matches `pattern`, in which `[..]` stands for any text.
fn line_matches(pattern: &str, line: &str) -> bool {
    let mut parts = pattern.split("[..]");
    let first = parts.next().unwrap_or("");
    let Some(mut rest) = line.strip_prefix(first) else {
        return false;
    };
    let parts: Vec<&str> = parts.collect();
    for (i, part) in parts.iter().enumerate() {
        if i + 1 == parts.len() {
            return rest.ends_with(part);
        }
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    rest.is_empty()
}

/// Whether `actual` matches `expected`, in which a `...` line stands for any number of lines.
fn lines_match(expected: &[String], actual: &[&str]) -> bool {
    match expected.split_first() {
        None => actual.is_empty(),
        Some((first, rest)) if first == "..." => {
            (0..=actual.len()).any(|skip| lines_match(rest, &actual[skip..]))
        }
        Some((first, rest)) => actual
            .split_first()
            .is_some_and(|(line, more)| line_matches(first, line) && lines_match(rest, more)),
    }
}

fn compare(step: &Step, output: &str, code: Option<i32>) {
    let actual: Vec<&str> = output.lines().map(str::trim_end).collect();
    let expected: Vec<String> = step
        .expected
        .iter()
        .map(|l| l.trim_end().to_string())
        .collect();
    assert!(
        lines_match(&expected, &actual),
        "{GUIDE}:{}: `{}` printed something else.\n--- the guide says:\n{}\n--- it printed:\n{}",
        step.line,
        step.command,
        expected.join("\n"),
        actual.join("\n")
    );
    assert_eq!(
        code,
        Some(step.code),
        "{GUIDE}:{}: `{}` exit code\n{output}",
        step.line,
        step.command
    );
}

struct Scratch {
    dir: tempfile::TempDir,
    path: String,
}

impl Scratch {
    fn new() -> Scratch {
        let dir = tempfile::tempdir().expect("temp dir");
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        std::fs::create_dir(dir.path().join("blueprints")).expect("mkdir");
        for entry in std::fs::read_dir(root.join("blueprints")).expect("blueprints") {
            let entry = entry.expect("entry");
            std::fs::copy(
                entry.path(),
                dir.path().join("blueprints").join(entry.file_name()),
            )
            .expect("copy");
        }
        std::fs::create_dir(dir.path().join("home")).expect("home");
        let bin = PathBuf::from(env!("CARGO_BIN_EXE_a3ctl"));
        let path = format!(
            "{}:{}",
            bin.parent().expect("bin dir").display(),
            std::env::var("PATH").unwrap_or_default()
        );
        Scratch { dir, path }
    }

    fn command(&self, line: &str) -> Command {
        let mut cmd = Command::new("bash");
        cmd.args(["-c", &format!("exec 2>&1; {line}")])
            .current_dir(self.dir.path())
            .env("PATH", &self.path)
            .env("HOME", self.dir.path().join("home"))
            .env("KUBECONFIG", self.dir.path().join("home/kubeconfig"))
            .env("CLOUDSDK_CONFIG", self.dir.path().join("home/gcloud"))
            .env("NO_COLOR", "1")
            .env("A3CTL_NO_PROGRESS", "1")
            .env("COLUMNS", "100")
            .stdin(Stdio::null());
        for var in [
            "A3CTL_SANDBOX",
            "A3CTL_SANDBOX_WORLD",
            "A3CTL_STATE_BUCKET",
            "CLOUDSDK_CORE_PROJECT",
            "CLOUDSDK_COMPUTE_REGION",
            "CLOUDSDK_COMPUTE_ZONE",
            "GOOGLE_CLOUD_PROJECT",
            "RUST_LOG",
        ] {
            cmd.env_remove(var);
        }
        cmd
    }
}

/// A command left running in the background, its output collected by a thread.
struct Background {
    step: Step,
    child: std::process::Child,
    output: std::sync::Arc<std::sync::Mutex<String>>,
    reader: std::thread::JoinHandle<()>,
}

impl Background {
    fn start(scratch: &Scratch, step: Step, command: &str) -> Background {
        assert!(
            command.starts_with("a3ctl sandbox serve"),
            "{GUIDE}:{}: only `a3ctl sandbox serve` runs in the background",
            step.line
        );
        let mut child = scratch
            .command(&format!("exec {command}"))
            .stdout(Stdio::piped())
            .spawn()
            .expect("bash runs");
        let mut stdout = child.stdout.take().expect("piped");
        let output = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
        let sink = output.clone();
        let reader = std::thread::spawn(move || {
            let mut buffer = [0u8; 4096];
            while let Ok(n) = stdout.read(&mut buffer) {
                if n == 0 {
                    break;
                }
                sink.lock()
                    .unwrap()
                    .push_str(&String::from_utf8_lossy(&buffer[..n]));
            }
        });
        let started = Instant::now();
        loop {
            if output.lock().unwrap().contains("Serving until Ctrl-C") {
                break;
            }
            if let Some(status) = child.try_wait().expect("wait") {
                panic!(
                    "{GUIDE}:{}: `{command}` ended ({status}) before serving:\n{}",
                    step.line,
                    output.lock().unwrap()
                );
            }
            assert!(
                started.elapsed() < READY,
                "{GUIDE}:{}: `{command}` is not serving after {READY:?}:\n{}",
                step.line,
                output.lock().unwrap()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        Background {
            step,
            child,
            output,
            reader,
        }
    }

    /// Ctrl-C, then the whole output compared with the guide.
    fn stop(mut self) {
        // `kill -INT`, as a reader's Ctrl-C in the serving terminal.
        let pid = self.child.id().to_string();
        let sent = Command::new("kill")
            .args(["-INT", &pid])
            .status()
            .expect("kill runs");
        assert!(sent.success());
        let status = self.child.wait().expect("wait");
        self.reader.join().expect("reader");
        let output = self.output.lock().unwrap().clone();
        compare(&self.step, &output, status.code());
    }
}

#[test]
fn the_getting_started_guide_runs_as_written() {
    let text = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(GUIDE))
        .expect("the guide");
    let blocks = blocks(&text);
    assert!(
        blocks.len() >= 3,
        "the guide has {} console blocks",
        blocks.len()
    );
    let scratch = Scratch::new();
    for block in blocks {
        let mut background: Vec<Background> = Vec::new();
        for step in block {
            if let Some(command) = step.command.strip_suffix(" &") {
                let command = command.to_string();
                background.push(Background::start(&scratch, step, &command));
                continue;
            }
            let output = scratch.command(&step.command).output().expect("bash runs");
            let text = String::from_utf8_lossy(&output.stdout).into_owned();
            compare(&step, &text, output.status.code());
        }
        for server in background {
            server.stop();
        }
    }
}

#[test]
fn wildcards_match_as_documented() {
    assert!(line_matches(
        "Serving on 127.0.0.1:[..]",
        "Serving on 127.0.0.1:8417"
    ));
    assert!(line_matches("a [..] b [..] c", "a x b y c"));
    assert!(!line_matches("a [..] b", "a x c"));
    assert!(line_matches("exact", "exact"));
    assert!(!line_matches("exact", "exactly"));
    let lines = |s: &[&str]| s.iter().map(|l| l.to_string()).collect::<Vec<_>>();
    assert!(lines_match(
        &lines(&["one", "...", "four"]),
        &["one", "two", "three", "four"]
    ));
    assert!(lines_match(&lines(&["...", "x"]), &["x"]));
    assert!(!lines_match(
        &lines(&["one", "four"]),
        &["one", "two", "four"]
    ));
    assert!(lines_match(&lines(&["..."]), &[]));
}
