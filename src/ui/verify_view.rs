//! `a3ctl verify`'s report: a table for people, JSON for scripts, and the NCCL test's verdict.

use super::Printer;
use crate::verify::{Report, Status};

/// The report as an aligned table, each failure followed by its hint, then a summary line.
pub fn render(printer: &Printer, report: &Report) -> String {
    let width = report
        .checks
        .iter()
        .map(|c| c.name.len())
        .max()
        .unwrap_or(0)
        .max("CHECK".len());
    let indent = " ".repeat(width + 2 + 4 + 2);
    let mut out = format!(
        "Verifying cluster `{}` (https://{}) of blueprint `{}`\n\n",
        report.cluster, report.endpoint, report.blueprint
    );
    out.push_str(&printer.bold(&format!("{:<width$}  {:<4}  DETAIL", "CHECK", "")));
    out.push('\n');
    for check in &report.checks {
        let status = match check.status {
            Status::Pass => paint(printer, "32", "ok  "),
            Status::Fail => paint(printer, "31", "FAIL"),
        };
        out.push_str(&format!(
            "{:<width$}  {status}  {}\n",
            check.name, check.message
        ));
        if let Some(hint) = &check.hint {
            out.push_str(&format!(
                "{indent}{}: {hint}\n",
                paint(printer, "36", "hint")
            ));
        }
    }
    let failed = report.failed();
    let total = report.checks.len();
    out.push('\n');
    if failed == 0 {
        out.push_str(&format!("All {total} checks passed.\n"));
    } else {
        out.push_str(&format!("{failed} of {total} checks failed.\n"));
    }
    out
}

/// The report as pretty JSON (the shape documented in docs/cluster-software.md).
pub fn json(report: &Report) -> String {
    // A struct of strings, booleans and numbers always serializes.
    serde_json::to_string_pretty(report).unwrap_or_default()
}

/// The NCCL test's result line.
pub fn bandwidth(printer: &Printer, busbw: f64, floor: f64, source: &str) -> String {
    let verdict = if busbw >= floor {
        paint(printer, "32", "ok")
    } else {
        paint(printer, "31", "FAIL")
    };
    let mut text = format!(
        "NCCL all-gather over 2 nodes: average bus bandwidth {busbw:.1} GB/s, floor {floor:.0} GB/s ({source}): {verdict}\n"
    );
    if busbw < floor {
        text.push_str(
            "  hint: below the floor, NCCL is not using every GPU NIC (or fell back to TCP on eth0): run `a3ctl verify` without --nccl-test to check the networks and the NCCL installer, and look for `NET/` lines in pod 0's log (`kubectl -n default logs -l job-name=a3ctl-nccl-test,batch.kubernetes.io/job-completion-index=0 -c nccl-test`)\n",
        );
    }
    text
}

fn paint(printer: &Printer, code: &str, text: &str) -> String {
    if printer.color {
        format!("\x1b[{code}m{text}\x1b[0m")
    } else {
        text.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verify::Check;

    #[test]
    fn the_table_aligns_and_puts_hints_under_failures() {
        let printer = Printer {
            color: false,
            bars: false,
            quiet: false,
        };
        let report = Report::new(
            "a3high",
            "a3high",
            "10.0.0.2",
            vec![
                Check::pass("nodes/a3high", "4/4 node(s) Ready"),
                Check::fail("network/vpc3", "Network `vpc3` is missing", "run apply"),
            ],
        );
        let text = render(&printer, &report);
        assert!(
            text.contains("nodes/a3high  ok    4/4 node(s) Ready\n"),
            "{text}"
        );
        assert!(
            text.contains("network/vpc3  FAIL  Network `vpc3` is missing\n"),
            "{text}"
        );
        assert!(
            text.contains("\n                    hint: run apply\n"),
            "{text}"
        );
        assert!(text.ends_with("1 of 2 checks failed.\n"), "{text}");
        let value: serde_json::Value = serde_json::from_str(&json(&report)).unwrap();
        assert_eq!(value["passed"], false);
        assert_eq!(value["checks"][1]["status"], "fail");
        assert_eq!(value["checks"][0]["hint"], serde_json::Value::Null);
    }
}
