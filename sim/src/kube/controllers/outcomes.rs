//! How every container other than an NCCL test ends ([`super::runs`] has those): a small declared
//! model that gives a container a duration, an exit code and a log, or says it runs until its pod
//! is deleted. [`decide`] asks, in this order:
//!
//! 1. **Declared outcomes** (world file `[[workloads.outcomes]]`, admin `PUT /_sim/workloads`
//!    `outcomes`): the first entry whose `image` equals the container's image (or its repository,
//!    when the entry has no tag or digest) and whose `command` is part of the container's command
//!    and args (joined by spaces) decides: `duration_secs`, `exit_code`, `log`. An entry with
//!    `times = N` is a **fault**: it decides for the first N containers of a cluster it matches
//!    (counted when they start), then stands aside for the entries after it — "the first run of
//!    this image dies with exit 137, the retry succeeds" exercises a Job's `backoffLimit`.
//! 2. **Built-in programs**, recognised from the command and args (an `sh`/`bash -c` script, or
//!    the words themselves): `true` and `:` (exit 0), `false` (exit 1), `exit N`, `echo [-n] ...`
//!    (`$NAME` and `${NAME}` from the container's literal `env`), `sleep N` (seconds, or with an
//!    `s`/`m`/`h`/`d` suffix), `set -e` / `set -x`, `exec CMD`, and `nvidia-smi -L` (or
//!    `--list-gpus`), joined by `;`, `&&`, `||` and newlines as a POSIX shell joins them. Anything
//!    else — a pipe, a redirection, a subshell, `if`/`for`/`while`, an unknown program, an unset
//!    variable, `sleep infinity` — makes the whole container unknown.
//! 3. **Unknown** (no declared outcome, no command — the image's entrypoint decides — or a
//!    command not understood above): the container runs until its pod is deleted, as a
//!    long-running server does. The simulator cannot know when an arbitrary program ends.
//!
//! Only regular containers of pods whose `restartPolicy` is `Never` or `OnFailure` end: under
//! `Always` the kubelet would restart an ended container (`CrashLoopBackOff`), which is not
//! simulated, so such containers keep running. Init containers count as completed when the pod
//! starts ([`super::pods`]). A failing container fails its pod also under `OnFailure` (restarts are
//! not simulated, as in [`super::jobs`]).
//!
//! **`nvidia-smi -L`** prints one line per GPU the container was given (`nvidia.com/gpu` in its
//! limits or requests), numbered from 0 as the device plugin exposes them:
//! `GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-9221d5d1-b60b-a624-bf14-0a1819cfda3b)` — the layout of
//! published captures (e.g. Lambda's "Using the Lambda 1-Click Cluster" Slurm example and
//! NVIDIA's `nvidia-smi` documentation, <https://docs.nvidia.com/deploy/nvidia-smi/index.html>),
//! the name the GPU reports for the node's `cloud.google.com/gke-accelerator`
//! ([`super::runs::gpu_name`]: H100 80GB HBM3 on A3 High and Mega, H200 on A3 Ultra, B200 on A4),
//! and a UUID fixed per node and device. A container given no GPU (none requested, or a node
//! without `cloud.google.com/gke-accelerator`) gets no driver: GKE mounts the driver's
//! libraries and `nvidia-smi` into containers that request GPUs only
//! (<https://cloud.google.com/kubernetes-engine/docs/how-to/gpus>), and `nvidia-smi` without a
//! driver prints `NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.
//! Make sure that the latest NVIDIA driver is installed and running.` (NVIDIA/nvidia-docker#988)
//! and exits 9, "NVIDIA driver is not loaded" (`nvidia-smi(1)`, RETURN VALUE). That the binary is
//! found at all in such a container is a guess (it may as well be `not found`, exit 127).
// GUESS(outcome-nvidia-smi-without-gpus): `nvidia-smi` is found in a container without GPUs (exit 9, not `not found` and 127)
//!
//! Durations: `sleep N` takes N seconds; `nvidia-smi` takes 1 s (a guess: it initialises NVML on
//! every GPU); the other built-ins take no simulated time.
// GUESS(outcome-nvidia-smi-duration): `nvidia-smi` takes 1 s

use crate::clock::SimTime;
pub use crate::config::workloads::Declared;
use serde_json::Value;
use std::collections::BTreeMap;

impl Declared {
    /// An entry names an image or a command, lasts a finite, non-negative time and exits 0–255.
    pub fn check(&self, at: usize) -> Result<(), String> {
        let field = |name: &str| format!("`outcomes[{at}].{name}`");
        if self.image.as_deref().is_none_or(str::is_empty)
            && self.command.as_deref().is_none_or(str::is_empty)
        {
            return Err(format!(
                "`outcomes[{at}]` must name an `image` or a `command`"
            ));
        }
        if !(self.duration_secs.is_finite() && self.duration_secs >= 0.0) {
            return Err(format!(
                "{} must be a non-negative number of seconds, not {}",
                field("duration_secs"),
                self.duration_secs
            ));
        }
        if !(0..=255).contains(&self.exit_code) {
            return Err(format!(
                "{} must be 0-255, not {}",
                field("exit_code"),
                self.exit_code
            ));
        }
        if self.times == Some(0) {
            return Err(format!("{} must be at least 1", field("times")));
        }
        Ok(())
    }

    fn matches(&self, container: &Value) -> bool {
        let image = container["image"].as_str().unwrap_or_default();
        let image_ok = self.image.as_deref().is_none_or(|wanted| {
            image == wanted
                || (!wanted.contains('@')
                    && !wanted.rsplit('/').next().unwrap_or_default().contains(':')
                    && repository(image) == wanted)
        });
        image_ok
            && self
                .command
                .as_deref()
                .is_none_or(|wanted| words(container).join(" ").contains(wanted))
    }

    /// The key its uses are counted under (the entry itself, so a replaced list that keeps it
    /// keeps its count).
    pub fn key(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }
}

/// `repo/name` of `repo/name:tag` or `repo/name@sha256:...`.
fn repository(image: &str) -> &str {
    let image = image.split('@').next().unwrap_or(image);
    match image.rsplit_once(':') {
        Some((repo, tag)) if !tag.contains('/') => repo,
        _ => image,
    }
}

/// A container's command and args.
fn words(container: &Value) -> Vec<&str> {
    ["command", "args"]
        .iter()
        .flat_map(|k| container[*k].as_array().into_iter().flatten())
        .filter_map(Value::as_str)
        .collect()
}

/// How a container ends, relative to its start.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    pub duration_ms: u64,
    pub exit_code: i32,
    pub log: String,
    /// The declared entry that decided it, if one did.
    pub declared: Option<String>,
}

/// What the container can see of its node.
#[derive(Debug, Clone, Default)]
pub struct Host<'a> {
    pub node: &'a str,
    /// `cloud.google.com/gke-accelerator`, if the node has GPUs.
    pub accelerator: Option<&'a str>,
}

/// How `container` (of `pod`, on `host`) ends, or `None` when it runs until deleted. `uses` counts
/// the containers each fault already decided in this cluster.
pub fn decide(
    declared: &[Declared],
    uses: &BTreeMap<String, u32>,
    pod: &Value,
    container: &Value,
    host: &Host,
) -> Option<Outcome> {
    if !matches!(
        pod["spec"]["restartPolicy"].as_str(),
        Some("Never" | "OnFailure")
    ) {
        return None;
    }
    for entry in declared {
        if !entry.matches(container) {
            continue;
        }
        let key = entry.key();
        if entry
            .times
            .is_some_and(|n| uses.get(&key).copied().unwrap_or(0) >= n)
        {
            continue;
        }
        return Some(Outcome {
            duration_ms: (entry.duration_secs * 1000.0).round() as u64,
            exit_code: entry.exit_code,
            log: entry.log.clone(),
            declared: Some(key),
        });
    }
    builtin(container, host)
}

/// The built-in programs (see the module doc).
fn builtin(container: &Value, host: &Host) -> Option<Outcome> {
    let words = words(container);
    let first = *words.first()?;
    let shell = matches!(basename(first), "sh" | "bash" | "ash" | "dash");
    let commands = if shell {
        // `sh -c SCRIPT [NAME ARGS...]`; a shell without -c reads stdin, which is empty.
        if words.get(1) != Some(&"-c") {
            return None;
        }
        parse_script(words.get(2)?)?
    } else {
        vec![(
            Joint::Then,
            words.iter().map(|w| Word::Literal(w.to_string())).collect(),
        )]
    };
    let env: BTreeMap<&str, &str> = container["env"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|e| Some((e["name"].as_str()?, e["value"].as_str()?)))
        .collect();
    run(&commands, &env, container, host)
}

fn basename(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// How a command is joined to the one before it.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Joint {
    /// `;` or a newline (or the first command).
    Then,
    /// `&&`.
    And,
    /// `||`.
    Or,
}

/// A word of a script: literal text, or text with variables to expand.
#[derive(Debug, Clone, PartialEq)]
enum Word {
    Literal(String),
    /// Parts: literal text and variable names.
    Expand(Vec<(bool, String)>),
}

/// Splits a script into simple commands of words, or `None` for anything beyond the small
/// language of the module doc.
fn parse_script(script: &str) -> Option<Vec<(Joint, Vec<Word>)>> {
    let mut commands: Vec<(Joint, Vec<Word>)> = vec![];
    let mut joint = Joint::Then;
    let mut current: Vec<Word> = vec![];
    let mut parts: Vec<(bool, String)> = vec![];
    let mut in_word = false;
    let mut chars = script.chars().peekable();
    let finish_word = |parts: &mut Vec<(bool, String)>, current: &mut Vec<Word>| {
        let taken = std::mem::take(parts);
        if taken.iter().all(|(var, _)| !var) {
            current.push(Word::Literal(taken.into_iter().map(|(_, t)| t).collect()));
        } else {
            current.push(Word::Expand(taken));
        }
    };
    let push_text = |parts: &mut Vec<(bool, String)>, c: char| match parts.last_mut() {
        Some((false, text)) => text.push(c),
        _ => parts.push((false, c.to_string())),
    };
    let variable = |chars: &mut std::iter::Peekable<std::str::Chars>| -> Option<String> {
        let braced = chars.peek() == Some(&'{');
        if braced {
            chars.next();
        }
        let mut name = String::new();
        while let Some(&c) = chars.peek() {
            if c.is_ascii_alphanumeric() || c == '_' {
                name.push(c);
                chars.next();
            } else {
                break;
            }
        }
        if braced && chars.next() != Some('}') {
            return None;
        }
        (!name.is_empty() && !name.starts_with(|c: char| c.is_ascii_digit())).then_some(name)
    };
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                in_word = true;
                loop {
                    match chars.next()? {
                        '\'' => break,
                        c => push_text(&mut parts, c),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next()? {
                        '"' => break,
                        '$' => parts.push((true, variable(&mut chars)?)),
                        '`' => return None,
                        '\\' => push_text(&mut parts, chars.next()?),
                        c => push_text(&mut parts, c),
                    }
                }
            }
            '$' => {
                in_word = true;
                parts.push((true, variable(&mut chars)?));
            }
            '\\' => {
                match chars.next()? {
                    // A line continuation.
                    '\n' => {}
                    c => {
                        in_word = true;
                        push_text(&mut parts, c);
                    }
                }
            }
            ' ' | '\t' => {
                if in_word {
                    finish_word(&mut parts, &mut current);
                    in_word = false;
                }
            }
            ';' | '\n' | '&' | '|' => {
                if in_word {
                    finish_word(&mut parts, &mut current);
                    in_word = false;
                }
                let next = match c {
                    '&' if chars.next_if_eq(&'&').is_some() => Joint::And,
                    '|' if chars.next_if_eq(&'|').is_some() => Joint::Or,
                    // A background job or a pipe.
                    '&' | '|' => return None,
                    _ => Joint::Then,
                };
                if current.is_empty() {
                    // `a && && b`, `&& b` and `a && ;` are syntax errors; blank lines are not.
                    if next != Joint::Then || joint != Joint::Then {
                        return None;
                    }
                } else {
                    commands.push((joint, std::mem::take(&mut current)));
                    joint = next;
                }
            }
            '#' if !in_word => {
                // A comment, to the end of the line.
                while chars.peek().is_some_and(|c| *c != '\n') {
                    chars.next();
                }
            }
            '<' | '>' | '(' | ')' | '`' | '{' | '}' | '*' | '?' | '[' | '~' => return None,
            c => {
                in_word = true;
                push_text(&mut parts, c);
            }
        }
    }
    if in_word {
        finish_word(&mut parts, &mut current);
    }
    if !current.is_empty() {
        commands.push((joint, current));
    } else if joint != Joint::Then {
        // A trailing `&&` or `||`.
        return None;
    }
    Some(commands)
}

/// Runs the parsed commands; `None` as soon as one is not understood.
fn run(
    commands: &[(Joint, Vec<Word>)],
    env: &BTreeMap<&str, &str>,
    container: &Value,
    host: &Host,
) -> Option<Outcome> {
    let mut out = Outcome {
        duration_ms: 0,
        exit_code: 0,
        log: String::new(),
        declared: None,
    };
    let mut errexit = false;
    for (at, (joint, words)) in commands.iter().enumerate() {
        let skip = match joint {
            Joint::Then => false,
            Joint::And => out.exit_code != 0,
            Joint::Or => out.exit_code == 0,
        };
        let mut words: Vec<String> = words
            .iter()
            .map(|w| match w {
                Word::Literal(text) => Some(text.clone()),
                Word::Expand(parts) => parts
                    .iter()
                    .map(|(var, text)| {
                        if *var {
                            env.get(text.as_str()).map(|v| v.to_string())
                        } else {
                            Some(text.clone())
                        }
                    })
                    .collect(),
            })
            .collect::<Option<Vec<_>>>()?;
        if words.first().map(String::as_str) == Some("exec") {
            words.remove(0);
        }
        let Some(program) = words.first().map(|w| basename(w).to_string()) else {
            continue;
        };
        let args = &words[1..];
        // Every command must be understood, run or not: the simulator never guesses at a branch.
        let (code, ms, log): (Option<i32>, u64, String) = match program.as_str() {
            "true" | ":" if args.is_empty() || program == ":" => (Some(0), 0, String::new()),
            "false" if args.is_empty() => (Some(1), 0, String::new()),
            "exit" => {
                let code = match args {
                    [] => out.exit_code,
                    [n] => n.parse::<i32>().ok()?.rem_euclid(256),
                    _ => return None,
                };
                if !skip {
                    out.exit_code = code;
                    return Some(out);
                }
                continue;
            }
            "echo" => {
                let (newline, args) = match args.first().map(String::as_str) {
                    Some("-n") => (false, &args[1..]),
                    _ => (true, args),
                };
                let mut text = args.join(" ");
                if newline {
                    text.push('\n');
                }
                (Some(0), 0, text)
            }
            "sleep" => {
                let [duration] = args else { return None };
                (Some(0), sleep_ms(duration)?, String::new())
            }
            "set" => {
                for flag in args {
                    match flag.as_str() {
                        "-e" | "-ex" | "-xe" | "-eu" | "-ue" | "-eux" | "-exu" => {
                            if !skip {
                                errexit = true;
                            }
                        }
                        "-x" | "-u" | "-xu" | "-ux" | "-o" | "pipefail" => {}
                        _ => return None,
                    }
                }
                (None, 0, String::new())
            }
            "nvidia-smi" => match args.iter().map(String::as_str).collect::<Vec<_>>()[..] {
                ["-L"] | ["--list-gpus"] => {
                    let (code, log) = list_gpus(container, host);
                    (Some(code), 1000, log)
                }
                _ => return None,
            },
            _ => return None,
        };
        if skip {
            continue;
        }
        out.duration_ms += ms;
        out.log.push_str(&log);
        if let Some(code) = code {
            out.exit_code = code;
            // `set -e`: a failing command ends the script, unless an `&&` or `||` follows it.
            let listed = commands
                .get(at + 1)
                .is_some_and(|(next, _)| *next != Joint::Then);
            if errexit && code != 0 && !listed {
                return Some(out);
            }
        }
    }
    Some(out)
}

/// `sleep`'s argument in milliseconds: a number with an optional `s`, `m`, `h` or `d` suffix;
/// `None` for `infinity` (it never ends) and anything else.
fn sleep_ms(text: &str) -> Option<u64> {
    let (number, factor) = match text.char_indices().last()? {
        (at, 's') => (&text[..at], 1.0),
        (at, 'm') => (&text[..at], 60.0),
        (at, 'h') => (&text[..at], 3600.0),
        (at, 'd') => (&text[..at], 86400.0),
        _ => (text, 1.0),
    };
    let secs: f64 = number.parse().ok()?;
    (secs.is_finite() && secs >= 0.0).then(|| (secs * factor * 1000.0).round() as u64)
}

/// The GPUs a container was given.
fn gpus(container: &Value) -> u32 {
    ["limits", "requests"]
        .iter()
        .map(|k| &container["resources"][*k]["nvidia.com/gpu"])
        .find_map(|v| {
            v.as_u64()
                .or_else(|| v.as_str().and_then(|s| s.parse().ok()))
        })
        .unwrap_or(0) as u32
}

/// The driver's answer when it is not there (see the module doc).
pub const NO_DRIVER: &str = "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the latest NVIDIA driver is installed and running.\n";

/// `nvidia-smi -L`: its exit code and output.
fn list_gpus(container: &Value, host: &Host) -> (i32, String) {
    let count = gpus(container);
    let Some(accelerator) = host.accelerator.filter(|_| count > 0) else {
        return (9, NO_DRIVER.to_string());
    };
    let name = super::runs::gpu_name(accelerator);
    let lines: String = (0..count)
        .map(|i| format!("GPU {i}: {name} (UUID: {})\n", gpu_uuid(host.node, i)))
        .collect();
    (0, lines)
}

/// A GPU's UUID, fixed per node and device: `GPU-` and 32 hexadecimal digits in 8-4-4-4-12.
pub fn gpu_uuid(node: &str, device: u32) -> String {
    let a = super::hash(&format!("gpu/{node}/{device}"));
    let b = super::hash(&format!("gpu/{node}/{device}/2"));
    let hex = format!("{a:016x}{b:016x}");
    format!(
        "GPU-{}-{}-{}-{}-{}",
        &hex[0..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..32]
    )
}

/// When a container that started at `start` with `outcome` ends.
pub fn end_at(start: SimTime, outcome: &Outcome) -> SimTime {
    start.plus_ms(outcome.duration_ms)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn never(container: Value) -> (Value, Value) {
        (json!({"spec": {"restartPolicy": "Never"}}), container)
    }

    fn gpu_host() -> Host<'static> {
        Host {
            node: "gke-c-gpu-1",
            accelerator: Some("nvidia-h100-mega-80gb"),
        }
    }

    fn outcome(container: Value) -> Option<(u64, i32, String)> {
        let (pod, container) = never(container);
        decide(&[], &BTreeMap::new(), &pod, &container, &gpu_host())
            .map(|o| (o.duration_ms, o.exit_code, o.log))
    }

    fn script(text: &str) -> Option<(u64, i32, String)> {
        outcome(json!({"command": ["/bin/sh", "-c", text]}))
    }

    #[test]
    fn trivial_commands_end_as_a_shell_runs_them() {
        assert_eq!(
            outcome(json!({"command": ["true"]})),
            Some((0, 0, "".into()))
        );
        assert_eq!(
            outcome(json!({"command": ["/bin/false"]})),
            Some((0, 1, "".into()))
        );
        assert_eq!(
            outcome(json!({"command": ["sleep"], "args": ["30"]})),
            Some((30_000, 0, "".into()))
        );
        assert_eq!(
            script("echo hello 'big world'; sleep 1m"),
            Some((60_000, 0, "hello big world\n".into()))
        );
        assert_eq!(script("exit 3"), Some((0, 3, "".into())));
        assert_eq!(
            script("false || echo recovered"),
            Some((0, 0, "recovered\n".into()))
        );
        assert_eq!(script("false && echo never"), Some((0, 1, "".into())));
        assert_eq!(script("set -e\nfalse\necho never"), Some((0, 1, "".into())));
        assert_eq!(
            script("set -e\nfalse || true\necho on"),
            Some((0, 0, "on\n".into()))
        );
        assert_eq!(
            outcome(
                json!({"command": ["sh", "-c", "echo index=$JOB_COMPLETION_INDEX ${X}"],
                "env": [{"name": "JOB_COMPLETION_INDEX", "value": "3"}, {"name": "X", "value": "y"}]})
            ),
            Some((0, 0, "index=3 y\n".into()))
        );
    }

    #[test]
    fn anything_not_understood_runs_until_deleted() {
        for text in [
            "sleep infinity",
            "python train.py",
            "ls /data > /dev/null",
            "echo $UNSET",
            "cat x | wc -l",
            "if true; then echo; fi",
            "sleep 10 &",
            "echo $(date)",
            "true &&",
        ] {
            assert_eq!(script(text), None, "{text}");
        }
        // No command: the image's entrypoint decides.
        assert_eq!(outcome(json!({"image": "nginx"})), None);
        // Under restartPolicy Always an ended container would restart: it keeps running.
        let pod = json!({"spec": {"restartPolicy": "Always"}});
        let container = json!({"command": ["true"]});
        assert!(decide(&[], &BTreeMap::new(), &pod, &container, &gpu_host()).is_none());
    }

    #[test]
    fn nvidia_smi_lists_the_gpus_the_container_was_given() {
        let container = json!({"command": ["nvidia-smi", "-L"],
            "resources": {"limits": {"nvidia.com/gpu": "2"}}});
        let (ms, code, log) = outcome(container.clone()).unwrap();
        assert_eq!((ms, code), (1000, 0));
        let lines: Vec<&str> = log.lines().collect();
        assert_eq!(lines.len(), 2);
        assert_eq!(
            lines[0],
            format!(
                "GPU 0: NVIDIA H100 80GB HBM3 (UUID: {})",
                gpu_uuid("gke-c-gpu-1", 0)
            )
        );
        assert!(lines[1].starts_with("GPU 1: NVIDIA H100 80GB HBM3 (UUID: GPU-"));
        let uuid = gpu_uuid("n", 7);
        let groups: Vec<usize> = uuid["GPU-".len()..].split('-').map(str::len).collect();
        assert_eq!(groups, [8, 4, 4, 4, 12]);
        // No GPU: the driver is not there.
        let (pod, container) = never(container);
        let cpu = Host {
            node: "cpu",
            accelerator: None,
        };
        let failed = decide(&[], &BTreeMap::new(), &pod, &container, &cpu).unwrap();
        assert_eq!((failed.exit_code, failed.log.as_str()), (9, NO_DRIVER));
        assert_eq!(script("nvidia-smi -q"), None);
    }

    #[test]
    fn declared_outcomes_come_first_and_faults_stand_aside_once_used() {
        let declared = vec![
            Declared {
                image: Some("us-docker.pkg.dev/p/r/train".into()),
                command: None,
                duration_secs: 5.0,
                exit_code: 137,
                log: "Killed\n".into(),
                times: Some(1),
            },
            Declared {
                image: None,
                command: Some("train.py".into()),
                duration_secs: 600.0,
                exit_code: 0,
                log: "done\n".into(),
                times: None,
            },
        ];
        let (pod, container) = never(json!({"image": "us-docker.pkg.dev/p/r/train:v2",
            "command": ["python", "train.py"]}));
        let first = decide(&declared, &BTreeMap::new(), &pod, &container, &gpu_host()).unwrap();
        assert_eq!((first.duration_ms, first.exit_code), (5000, 137));
        let uses = BTreeMap::from([(declared[0].key(), 1)]);
        let second = decide(&declared, &uses, &pod, &container, &gpu_host()).unwrap();
        assert_eq!((second.duration_ms, second.exit_code), (600_000, 0));
        // A tagged entry matches only that tag.
        let tagged = Declared {
            image: Some("us-docker.pkg.dev/p/r/train:v1".into()),
            ..declared[1].clone()
        };
        assert!(!tagged.matches(&container));
        assert!(
            Declared {
                image: None,
                command: None,
                ..declared[1].clone()
            }
            .check(0)
            .is_err()
        );
    }
}
