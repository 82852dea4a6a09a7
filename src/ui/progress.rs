//! Apply progress: one line per resource. On a terminal each running step has a spinner with its
//! elapsed time and the cloud operation's status (indicatif); elsewhere (CI, pipes, tests) plain
//! lines in Terraform's style: `network.primary: Creating...`, `... Still creating... [RUNNING]`
//! (at most every 10 s per resource), `... Creation complete after 32s`.
//!
//! In the sandbox ([`Progress::simulated`]) the wall clock means nothing (the simulator runs 2000
//! times faster, and a3ctl's own work would be sped up with it), so a step's duration is the
//! simulated time its cloud operations ran by their own timestamps
//! ([`Reporter::step_operations`]): `... Creation complete after 7m12s (simulated)`. A step the
//! cloud reported no operation time for (synchronous calls: Kubernetes objects, buckets, IAM
//! members) says so: `... Creation complete (simulated; no operation time reported)`.

use super::Printer;
use crate::apply::{Outcome, Reporter, StepKind};
use crate::cloud::CloudError;
use crate::resource::Addr;
use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};
use parking_lot::Mutex;
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// The indicatif / plain-line implementation of [`Reporter`].
pub struct Progress {
    printer: Printer,
    multi: Option<MultiProgress>,
    bars: Mutex<BTreeMap<String, ProgressBar>>,
    last_line: Mutex<BTreeMap<String, Instant>>,
    /// In the sandbox: durations are the cloud's operation times, marked `(simulated)`.
    simulated: bool,
    /// How long each finishing step's operations ran, by the cloud's timestamps.
    operations_ran: Mutex<BTreeMap<String, Duration>>,
}

fn verb(kind: StepKind) -> (&'static str, &'static str, &'static str) {
    match kind {
        StepKind::Create => ("Creating...", "Still creating...", "Creation complete"),
        StepKind::Update => (
            "Modifying...",
            "Still modifying...",
            "Modifications complete",
        ),
        StepKind::Delete | StepKind::DeletedWith => (
            "Destroying...",
            "Still destroying...",
            "Destruction complete",
        ),
        StepKind::Forget => ("", "", "Left in the cloud, forgotten"),
        StepKind::Resume => (
            "Resuming an interrupted operation...",
            "Still waiting...",
            "Interrupted operation complete",
        ),
    }
}

/// `1m02s`-style durations.
pub fn elapsed(d: Duration) -> String {
    let secs = d.as_secs();
    if secs >= 60 {
        format!("{}m{:02}s", secs / 60, secs % 60)
    } else {
        format!("{secs}s")
    }
}

impl Progress {
    pub fn new(printer: Printer) -> Progress {
        let multi = printer
            .bars
            .then(|| MultiProgress::with_draw_target(ProgressDrawTarget::stderr()));
        Progress {
            printer,
            multi,
            bars: Mutex::new(BTreeMap::new()),
            last_line: Mutex::new(BTreeMap::new()),
            simulated: false,
            operations_ran: Mutex::new(BTreeMap::new()),
        }
    }

    /// In the sandbox (`true`), shows each step's simulated operation time instead of the wall
    /// clock's.
    pub fn simulated(mut self, simulated: bool) -> Progress {
        self.simulated = simulated;
        self
    }

    /// How long the step of `addr` took, to follow `Creation complete` or `failed`: ` after 32s`
    /// by the wall (`wall`), or in the sandbox ` after 7m12s (simulated)` by its operations'
    /// times, ` (simulated; no operation time reported)` without any.
    fn took(&self, addr: &Addr, wall: Duration) -> String {
        let ran = self.operations_ran.lock().remove(&addr.to_string());
        match (self.simulated, ran) {
            (false, _) => format!(" after {}", elapsed(wall)),
            (true, Some(ran)) => format!(" after {} (simulated)", elapsed(ran)),
            (true, None) => " (simulated; no operation time reported)".to_string(),
        }
    }

    fn line(&self, text: &str) {
        if self.printer.quiet {
            return;
        }
        match &self.multi {
            Some(multi) => {
                let _ = multi.println(text);
            }
            None => self.printer.err(&format!("{text}\n")),
        }
    }

    /// Clears any bars still drawn.
    pub fn finish(&self) {
        for (_, bar) in std::mem::take(&mut *self.bars.lock()) {
            bar.finish_and_clear();
        }
    }
}

impl Reporter for Progress {
    fn step_started(&self, addr: &Addr, kind: StepKind) {
        if matches!(kind, StepKind::DeletedWith | StepKind::Forget) {
            return;
        }
        let (starting, _, _) = verb(kind);
        if let Some(multi) = &self.multi {
            let bar = multi.add(ProgressBar::new_spinner());
            let style = ProgressStyle::with_template("{spinner} {prefix} {msg} [{elapsed}]")
                .unwrap_or_else(|_| ProgressStyle::default_spinner());
            bar.set_style(style);
            bar.set_prefix(addr.to_string());
            bar.set_message(starting);
            bar.enable_steady_tick(Duration::from_millis(120));
            self.bars.lock().insert(addr.to_string(), bar);
        } else {
            self.line(&format!("{addr}: {starting}"));
            self.last_line
                .lock()
                .insert(addr.to_string(), Instant::now());
        }
    }

    fn step_progress(&self, addr: &Addr, status: &str) {
        if let Some(bar) = self.bars.lock().get(&addr.to_string()) {
            bar.set_message(status.to_string());
            return;
        }
        let mut last = self.last_line.lock();
        let due = last
            .get(&addr.to_string())
            .is_none_or(|t| t.elapsed() >= Duration::from_secs(10));
        if due {
            last.insert(addr.to_string(), Instant::now());
            drop(last);
            self.line(&format!("{addr}: Still working... [{status}]"));
        }
    }

    fn step_retry(&self, addr: &Addr, error: &CloudError, attempt: u32, delay: Duration) {
        let code = error.code();
        let why = if code.is_empty() {
            error.message.clone()
        } else {
            code
        };
        if delay.is_zero() {
            self.line(&format!(
                "{addr}: transient error while waiting ({why}); still waiting"
            ));
        } else {
            self.line(&format!(
                "{addr}: retrying in {:.1}s after {why} (attempt {attempt})",
                delay.as_secs_f64()
            ));
        }
    }

    fn step_operations(&self, addr: &Addr, ran: Duration) {
        self.operations_ran.lock().insert(addr.to_string(), ran);
    }

    fn step_finished(&self, addr: &Addr, kind: StepKind, outcome: &Outcome, took: Duration) {
        if let Some(bar) = self.bars.lock().remove(&addr.to_string()) {
            bar.finish_and_clear();
        }
        let (_, _, done) = verb(kind);
        let took = self.took(addr, took);
        let text = match outcome {
            Outcome::Done => format!("{addr}: {done}{took}"),
            Outcome::Adopted => {
                format!("{addr}: found existing resource created by this blueprint; adopted")
            }
            Outcome::Subsumed if kind == StepKind::Forget => format!("{addr}: {done}"),
            Outcome::Subsumed => format!("{addr}: {done} (deleted with its cluster)"),
            Outcome::Failed(e) => format!("{addr}: failed{took}: {}", e.message),
            Outcome::Skipped { because } => format!("{addr}: skipped because `{because}` failed"),
            Outcome::Interrupted => format!(
                "{addr}: interrupted; its operation stays recorded and resumes on the next apply"
            ),
            Outcome::NotStarted => return,
            Outcome::TimedOut { operation } => {
                format!(
                    "{addr}: still running after the deadline ({operation}); the next apply resumes waiting"
                )
            }
        };
        self.line(&text);
    }

    fn warning(&self, message: &str) {
        self.line(&format!("warning: {message}"));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resource::Kind;

    fn progress(simulated: bool) -> Progress {
        let printer = Printer {
            color: false,
            bars: false,
            quiet: true,
        };
        Progress::new(printer).simulated(simulated)
    }

    #[test]
    fn the_sandbox_shows_operation_times_and_real_runs_the_wall_clock() {
        let cluster = Addr::new(Kind::Cluster, "main");
        let wall = Duration::from_millis(1_700);
        let sandbox = progress(true);
        sandbox.step_operations(&cluster, Duration::from_millis(432_900));
        assert_eq!(sandbox.took(&cluster, wall), " after 7m12s (simulated)");
        // Taken once: the next step of the same resource had no operation time.
        assert_eq!(
            sandbox.took(&cluster, wall),
            " (simulated; no operation time reported)"
        );
        let real = progress(false);
        real.step_operations(&cluster, Duration::from_secs(432));
        assert_eq!(real.took(&cluster, wall), " after 1s");
        assert_eq!(real.took(&cluster, Duration::from_secs(75)), " after 1m15s");
    }
}
