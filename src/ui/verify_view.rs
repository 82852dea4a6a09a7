//! `a3ctl verify`'s report: a table for people, JSON for scripts, and the NCCL test's verdict.

use super::Printer;
use crate::verify::nccl::Verdict;
use crate::verify::nccl_output::show_size;
use crate::verify::{Report, Status};
use serde::Serialize;

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

/// The NCCL test's verdict: the per-size table (the judged 2G–8G rows marked), then the verdict
/// line, with what failed and what to check under it; `simulated` (the sandbox) says the numbers
/// are the simulator's, not a measurement.
pub fn nccl_verdict(printer: &Printer, verdict: &Verdict, simulated: bool) -> String {
    let range = format!(
        "{}-{}",
        show_size(verdict.judged_min_bytes),
        show_size(verdict.judged_max_bytes)
    );
    let mut text = format!(
        "NCCL all-gather over {} nodes, bus bandwidth by message size (GB/s; * = judged):\n",
        crate::verify::nccl::HOSTS
    );
    text.push_str(&printer.bold(&format!(
        "  {:>6}  {:>12}  {:>8}",
        "SIZE", "OUT-OF-PLACE", "IN-PLACE"
    )));
    text.push('\n');
    for row in &verdict.rows {
        text.push_str(&format!(
            "  {:>6}  {:>12.2}  {:>8.2}{}\n",
            show_size(row.size),
            row.busbw_out,
            row.busbw_in,
            if row.judged { "  *" } else { "" }
        ));
    }
    let status = if verdict.passed {
        paint(printer, "32", "ok")
    } else {
        paint(printer, "31", "FAIL")
    };
    let measured = match verdict.busbw_gbps {
        Some(gbps) => format!("bus bandwidth {gbps:.1} GB/s at {range}"),
        None => format!("no bus bandwidth at {range}"),
    };
    let all = verdict
        .all_sizes_busbw_gbps
        .map_or(String::new(), |gbps| format!(" (all sizes {gbps:.1} GB/s)"));
    let mut last = format!(
        "NCCL all-gather over {} nodes: {measured}{all}, floor {:.0} GB/s ({}): {status}\n",
        crate::verify::nccl::HOSTS,
        verdict.floor_gbps,
        verdict.floor_source,
    );
    if let Some(message) = &verdict.message {
        last.push_str(&format!("  {message}\n"));
    }
    if let Some(hint) = &verdict.hint {
        last.push_str(&format!("  {}: {hint}\n", paint(printer, "36", "hint")));
    }
    if simulated {
        last.push_str(SIMULATED_NCCL);
        last.push('\n');
    }
    text.push_str(&last);
    text
}

/// Under a sandbox NCCL verdict.
pub const SIMULATED_NCCL: &str = "  simulated: the sandbox has no GPUs; these numbers are the simulator's model of the stack, not a measurement (run the test on a real cluster to measure)";

/// `verify --nccl-test --run --json`: the verdict as pretty JSON, with the report's format and
/// the blueprint (shape in docs/cluster-software.md).
pub fn nccl_json(blueprint: &str, cluster: &str, verdict: &Verdict, simulated: bool) -> String {
    #[derive(Serialize)]
    struct Shown<'a> {
        format: u32,
        blueprint: &'a str,
        cluster: &'a str,
        test: &'a str,
        hosts: u32,
        /// The sandbox's simulator made the numbers.
        simulated: bool,
        #[serde(flatten)]
        verdict: &'a Verdict,
    }
    let shown = Shown {
        format: crate::verify::REPORT_FORMAT,
        blueprint,
        cluster,
        test: "all_gather_perf",
        hosts: crate::verify::nccl::HOSTS,
        simulated,
        verdict,
    };
    // Strings, booleans and numbers always serialize.
    serde_json::to_string_pretty(&shown).unwrap_or_default()
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

    #[test]
    fn a_verdict_without_2g_8g_rows_shows_the_table_and_says_what_is_missing() {
        let printer = Printer {
            color: false,
            bars: false,
            quiet: false,
        };
        let output = crate::verify::nccl_output::Output {
            rows: vec![crate::verify::nccl_output::Row {
                size: 512 << 20,
                busbw_out: 70.5,
                busbw_in: 71.25,
                wrong_out: Some(0),
                wrong_in: Some(0),
            }],
            avg_bus_bandwidth: Some(70.875),
            out_of_bounds: None,
        };
        let verdict = crate::verify::nccl::judge(&output, crate::blueprint::MachineFamily::A3High);
        let text = nccl_verdict(&printer, &verdict, false);
        assert!(!text.contains("simulated"), "{text}");
        assert!(
            nccl_verdict(&printer, &verdict, true).ends_with(&format!("{SIMULATED_NCCL}\n")),
            "a sandbox verdict is marked simulated"
        );
        assert!(
            text.contains("    SIZE  OUT-OF-PLACE  IN-PLACE\n    512M         70.50     71.25\n"),
            "{text}"
        );
        assert!(
            text.contains("NCCL all-gather over 2 nodes: no bus bandwidth at 2G-8G (all sizes 70.9 GB/s), floor 60 GB/s ("),
            "{text}"
        );
        assert!(
            text.contains("): FAIL\n  the log has no row of 2G-8G"),
            "{text}"
        );
        assert!(
            text.contains("it covers 512M\n  hint: run all_gather_perf"),
            "{text}"
        );
        let value: serde_json::Value =
            serde_json::from_str(&nccl_json("a3high", "a3high", &verdict, false)).unwrap();
        assert_eq!(value["passed"], false);
        assert_eq!(value["simulated"], false);
        let sandbox: serde_json::Value =
            serde_json::from_str(&nccl_json("a3high", "a3high", &verdict, true)).unwrap();
        assert_eq!(sandbox["simulated"], true);
        assert_eq!(value["busbw_gbps"], serde_json::Value::Null);
        assert_eq!(
            value["rows"],
            serde_json::json!([{"size": 512u64 << 20, "busbw_out": 70.5, "busbw_in": 71.25, "judged": false}])
        );
    }
}
