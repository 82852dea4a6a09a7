//! The parser against real nccl-tests output (4×H200 captures under
//! `shared/reference/captures/`, see its README), its documented variants, and the verdict of
//! [`crate::verify::nccl::judge`].

use super::*;
use crate::blueprint::MachineFamily;
use crate::verify::nccl::{self, JUDGED_SIZES};

const CAPTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/reference/captures/");

fn capture(name: &str) -> String {
    let path = format!("{CAPTURES}{name}");
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn gather_1k_8g() -> String {
    capture("nccl-tests-all_gather_perf-1K-8G-4xH200-nvlink.txt")
}

/// The mean bus bandwidth of the rows within 2G–8G, both halves.
fn judged_mean(output: &Output) -> f64 {
    let cells: Vec<f64> = output
        .rows
        .iter()
        .filter(|r| JUDGED_SIZES.contains(&r.size))
        .flat_map(|r| [r.busbw_out, r.busbw_in])
        .collect();
    cells.iter().sum::<f64>() / cells.len() as f64
}

/// The mean of every row, both halves: how nccl-tests computes its footer.
fn all_mean(output: &Output) -> f64 {
    let cells: Vec<f64> = output
        .rows
        .iter()
        .flat_map(|r| [r.busbw_out, r.busbw_in])
        .collect();
    cells.iter().sum::<f64>() / cells.len() as f64
}

#[test]
fn the_1k_8g_capture_passes_250_on_its_2g_8g_rows_and_would_fail_on_its_footer() {
    let output = parse(&gather_1k_8g()).unwrap();
    assert_eq!(output.rows.len(), 24);
    assert_eq!(output.rows[0].size, 1024);
    assert_eq!(output.rows[23].size, 8 << 30);
    assert_eq!(output.rows[21].busbw_out, 331.83);
    assert_eq!(output.rows[21].busbw_in, 343.53);
    assert_eq!(output.rows[21].wrong_out, Some(0));
    assert_eq!(output.avg_bus_bandwidth, Some(135.627));
    assert_eq!(
        output.out_of_bounds,
        Some(OutOfBounds { count: 0, ok: true })
    );
    // The footer is the mean of every cell (nccl-tests' own computation).
    assert!((all_mean(&output) - 135.627).abs() < 0.001);

    // A3 Ultra's floor, 250 GB/s: the 2G–8G rows pass, the footer would not.
    let verdict = nccl::judge(&output, MachineFamily::A3Ultra);
    let busbw = verdict.busbw_gbps.unwrap();
    assert!((busbw - 345.0167).abs() < 0.001, "{busbw}");
    assert_eq!(verdict.floor_gbps, 250.0);
    assert!(verdict.passed, "{verdict:?}");
    assert_eq!(verdict.message, None);
    assert_eq!(verdict.all_sizes_busbw_gbps, Some(135.627));
    assert!(verdict.all_sizes_busbw_gbps.unwrap() < verdict.floor_gbps);
    assert!(
        verdict
            .floor_source
            .ends_with("nccl_healthcheck/a3ultra.yaml"),
        "{}",
        verdict.floor_source
    );
    let judged: Vec<u64> = verdict
        .rows
        .iter()
        .filter(|r| r.judged)
        .map(|r| r.size)
        .collect();
    assert_eq!(judged, [2 << 30, 4 << 30, 8 << 30]);
    assert_eq!(verdict.rows.len(), 24);
}

#[test]
fn the_2g_8g_capture_gives_its_footer() {
    let output = parse(&capture(
        "nccl-tests-all_gather_perf-2G-8G-4xH200-nvlink.txt",
    ))
    .unwrap();
    assert_eq!(output.rows.len(), 3);
    assert_eq!(output.avg_bus_bandwidth, Some(344.13));
    let verdict = nccl::judge(&output, MachineFamily::A4);
    let busbw = verdict.busbw_gbps.unwrap();
    // The same figure Cluster Health Scanner reads from the footer of its 2G–8G run.
    assert!((busbw - 344.13).abs() < 0.01, "{busbw}");
    assert!(verdict.passed);
}

#[test]
fn the_all_reduce_capture_parses() {
    let output = parse(&capture(
        "nccl-tests-all_reduce_perf-1K-8G-4xH200-nvlink.txt",
    ))
    .unwrap();
    assert_eq!(output.rows.len(), 24);
    let footer = output.avg_bus_bandwidth.unwrap();
    assert!((all_mean(&output) - footer).abs() < 0.001, "{footer}");
}

/// The 1K–8G capture with each line passed through `edit` (header lines and rows alike).
fn edited(edit: impl Fn(&str) -> String) -> String {
    gather_1k_8g().lines().map(|l| edit(l) + "\n").collect()
}

fn is_row(line: &str) -> bool {
    line.split_whitespace()
        .next()
        .is_some_and(|c| c.parse::<u64>().is_ok())
}

/// Every variant reads as the capture itself.
fn same_as_capture(text: &str) {
    let want = parse(&gather_1k_8g()).unwrap();
    let got = parse(text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    let sizes = |o: &Output| o.rows.iter().map(|r| r.size).collect::<Vec<_>>();
    let busbw = |o: &Output| {
        o.rows
            .iter()
            .map(|r| (r.busbw_out, r.busbw_in))
            .collect::<Vec<_>>()
    };
    assert_eq!(sizes(&got), sizes(&want), "{text}");
    assert_eq!(busbw(&got), busbw(&want), "{text}");
    assert_eq!(got.avg_bus_bandwidth, want.avg_bus_bandwidth);
}

#[test]
fn the_cputime_header_parses() {
    // `-C 1` (v2.13.4+) names the time columns `cputime`.
    let text = edited(|l| {
        if l.contains("#wrong") {
            l.replace("    time", " cputime")
        } else {
            l.to_string()
        }
    });
    assert!(text.contains("cputime   algbw"), "{text}");
    same_as_capture(&text);
}

#[test]
fn unvalidated_wrong_counts_read_as_none() {
    // `-c 0` prints `N/A` instead of the count.
    let text = edited(|l| {
        if is_row(l) {
            let mut cells: Vec<String> = l.split_whitespace().map(str::to_string).collect();
            cells[8] = "N/A".into();
            cells[12] = "N/A".into();
            cells.join("  ")
        } else {
            l.to_string()
        }
    });
    same_as_capture(&text);
    let output = parse(&text).unwrap();
    assert!(
        output
            .rows
            .iter()
            .all(|r| r.wrong_out.is_none() && r.wrong_in.is_none())
    );
    assert!(nccl::judge(&output, MachineFamily::A3Ultra).passed);
}

#[test]
fn a_timestamp_column_parses() {
    // `-S 1` (v2.17.6+) appends the time of each row (with a space in it).
    let text = edited(|l| {
        if l.contains("#wrong") {
            format!("{l}          timestamp")
        } else if is_row(l) {
            format!("{l}  2026-11-27 10:00:00")
        } else {
            l.to_string()
        }
    });
    same_as_capture(&text);
}

#[test]
fn a_footer_without_the_concluded_line_parses() {
    // Before v2.16.7 there is no `# Collective test concluded:`; with `-m` the average is
    // followed by OK/FAILED.
    let text = edited(|l| {
        if l.starts_with("# Collective test concluded") {
            String::new()
        } else if l.starts_with("# Avg bus bandwidth") {
            format!("{l} OK")
        } else {
            l.to_string()
        }
    });
    assert!(!text.contains("concluded"));
    same_as_capture(&text);
}

#[test]
fn per_iteration_columns_parse() {
    // `-I` (v2.19.2+): `i_min i_max i_p99 i_cv%` after each half's `#wrong`.
    let text = "\
# nccl-tests version 2.19.6 nccl-headers=22809 nccl-library=22809
# Collective test starting: all_gather_perf
# Per-Iteration Report: CUDA event timing; i_* uses max over process rows 
#
#                                        out-of-place (+ per-iteration)                                in-place (+ per-iteration)
#       size         count      type   redop    root     time   algbw   busbw  #wrong    i_min    i_max    i_p99    i_cv%     time   algbw   busbw  #wrong    i_min    i_max    i_p99    i_cv% 
#        (B)    (elements)                               (us)  (GB/s)  (GB/s)             (us)     (us)     (us)      (%)     (us)  (GB/s)  (GB/s)             (us)     (us)     (us)      (%) 
  2147483648     134217728     float    none      -1  4853.71  442.44  331.83       0  4800.00  4900.00  4899.00     0.50  4688.46  458.04  343.53       0  4600.00  4700.00  4699.00     0.40
# Out of bounds values : 0 OK
# Avg bus bandwidth    : 337.68 
";
    let output = parse(text).unwrap();
    assert_eq!(
        output.rows,
        [Row {
            size: 2 << 30,
            busbw_out: 331.83,
            busbw_in: 343.53,
            wrong_out: Some(0),
            wrong_in: Some(0),
        }]
    );
}

#[test]
fn interleaved_mpi_lines_are_skipped() {
    // Two hosts over MPI: NCCL INFO lines, ssh warnings and tagged output between the rows.
    let text = edited(|l| {
        if is_row(l) && l.trim_start().starts_with("2147483648") {
            format!(
                "a3ctl-nccl-test-1:412:530 [3] NCCL INFO NET/GPUDirectTCPX : 4 devices\n\
                 Warning: Permanently added 'a3ctl-nccl-test-1' (ED25519) to the list of known hosts.\n\
                 1234 NCCL INFO comm 0x55 rank 3 nRanks 16\n\
                 [1,0]<stdout>:{l}"
            )
        } else {
            l.to_string()
        }
    });
    same_as_capture(&text);
}

#[test]
fn the_json_report_parses() {
    // `-J FILE` (v2.17.3+): booleans as strings, `nwrong` null without validation.
    let text = r#"{"version":2,"start_time":"2026-11-27 10:00:00","args":["all_gather_perf","-b","1K","-e","8G","-J","out.json"],"env":[],"nccl_version":22809,
"config":{"nthreads":1,"ngpus":4,"minimum_bytes":1024,"maximum_bytes":8589934592,"step_factor":2},
"results":[
{"size":1024,"count":64,"type":"float","redop":"none","root":"    -1","out_of_place":{"time":37.400000,"alg_bw":0.030000,"bus_bw":0.020000,"nwrong":0.000000},"in_place":{"time":39.020000,"alg_bw":0.030000,"bus_bw":0.020000,"nwrong":0.000000},"actual_iterations":20,"experiment_name":"all_gather_perf"},
{"size":2147483648,"count":134217728,"type":"float","redop":"none","root":"    -1","out_of_place":{"cpu_time":4853.71,"alg_bw":442.44,"bus_bw":331.83,"nwrong":null},"in_place":{"cpu_time":4688.46,"alg_bw":458.04,"bus_bw":343.53,"nwrong":null},"actual_iterations":20,"experiment_name":"all_gather_perf"}
],
"out_of_bounds":{"count":0,"okay":"true"},"average_bus_bandwidth":{"bandwidth":168.850000,"okay":"unchecked"},"errors":[],"end_time":"2026-11-27 10:01:00"}"#;
    let output = parse(text).unwrap();
    assert_eq!(output.rows.len(), 2);
    assert_eq!(output.rows[0].wrong_out, Some(0));
    assert_eq!(output.rows[1].size, 2 << 30);
    assert_eq!(output.rows[1].busbw_in, 343.53);
    assert_eq!(output.rows[1].wrong_in, None);
    assert_eq!(output.avg_bus_bandwidth, Some(168.85));
    assert_eq!(
        output.out_of_bounds,
        Some(OutOfBounds { count: 0, ok: true })
    );
    let verdict = nccl::judge(&output, MachineFamily::A3Ultra);
    assert!((verdict.busbw_gbps.unwrap() - 337.68).abs() < 1e-9);
    assert!(matches!(
        parse(r#"{"results": [{"size": 1}]}"#),
        Err(ParseError::Json(m)) if m == "result #1 has no `out_of_place.bus_bw` number"
    ));
    assert_eq!(
        parse(r#"{"version": 2}"#),
        Err(ParseError::Json("it has no `results` list".into()))
    );
}

#[test]
fn bad_input_is_a_clear_error() {
    assert_eq!(parse(""), Err(ParseError::Empty));
    assert_eq!(parse(" \n\n"), Err(ParseError::Empty));
    assert_eq!(
        parse("ssh: connect to host a3ctl-nccl-test-1 port 22: Connection refused\n"),
        Err(ParseError::NoTable)
    );
    // A footer alone is not a table.
    assert_eq!(
        parse("# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 31.0412\n"),
        Err(ParseError::NoTable)
    );
    let header: String = gather_1k_8g()
        .lines()
        .take_while(|l| l.starts_with('#'))
        .map(|l| format!("{l}\n"))
        .collect();
    assert_eq!(parse(&header), Err(ParseError::NoRows));
    let bad = parse("#  size count type redop root time algbw busbw #wrong\n1 2\n");
    assert!(
        matches!(&bad, Err(ParseError::BadHeader { found: 1, .. })),
        "{bad:?}"
    );
    assert_eq!(
        ParseError::NoTable.to_string(),
        "the log has no nccl-tests result table (no `# size count type redop root ... busbw #wrong` header)"
    );
    // Garbage never panics.
    for text in [
        "{",
        "{]",
        "#  size busbw busbw\n1",
        "# Avg bus bandwidth :",
        "\u{0}\u{1}",
    ] {
        let _ = parse(text);
    }
}

#[test]
fn a_log_without_2g_8g_rows_is_refused_never_judged_by_its_footer() {
    // The TCPX script's former range, 1M–512M: the footer is far above A3 High's floor, but
    // the floor is set for 2G–8G.
    let text = edited(|l| {
        let size = l
            .split_whitespace()
            .next()
            .and_then(|c| c.parse::<u64>().ok());
        match size {
            Some(size) if !(1 << 20..=512 << 20).contains(&size) => String::new(),
            _ => l.to_string(),
        }
    });
    let output = parse(&text).unwrap();
    assert_eq!(output.rows.len(), 10);
    assert_eq!(output.avg_bus_bandwidth, Some(135.627));
    let verdict = nccl::judge(&output, MachineFamily::A3High);
    assert!(!verdict.passed);
    assert_eq!(verdict.busbw_gbps, None);
    assert_eq!(
        verdict.message.as_deref(),
        Some(
            "the log has no row of 2G-8G (2147483648..=8589934592 bytes), the message sizes the floor is set for; it covers 1M-512M"
        )
    );
    assert!(verdict.hint.unwrap().contains("-e 8G"));
}

#[test]
fn below_the_floor_fails_with_what_to_check_and_wrong_values_fail() {
    let output = parse(&gather_1k_8g()).unwrap();
    // Above A4's 250 but below a made-up floor: take A3 Ultra's with the rows scaled down.
    let mut slow = output.clone();
    for row in &mut slow.rows {
        row.busbw_out *= 0.7;
        row.busbw_in *= 0.7;
    }
    let verdict = nccl::judge(&slow, MachineFamily::A3Ultra);
    assert!(!verdict.passed);
    assert_eq!(
        verdict.message.as_deref(),
        Some("2G-8G bus bandwidth 241.5 GB/s is below the floor of 250 GB/s")
    );
    assert!(
        verdict
            .hint
            .as_deref()
            .unwrap()
            .starts_with("below the floor, NCCL is not using every GPU NIC")
    );

    let mut corrupt = output.clone();
    corrupt.rows[3].wrong_in = Some(12);
    corrupt.out_of_bounds = Some(OutOfBounds {
        count: 12,
        ok: false,
    });
    let verdict = nccl::judge(&corrupt, MachineFamily::A3Ultra);
    assert!(!verdict.passed);
    assert!(
        verdict
            .message
            .as_deref()
            .unwrap()
            .starts_with("12 wrong value(s)"),
        "{verdict:?}"
    );
    assert_eq!(judged_mean(&output), verdict.busbw_gbps.unwrap());
}

#[test]
fn sizes_show_as_nccl_tests_takes_them() {
    assert_eq!(show_size(1024), "1K");
    assert_eq!(show_size(512 << 20), "512M");
    assert_eq!(show_size(8 << 30), "8G");
    assert_eq!(show_size(1000), "1000");
    assert_eq!(show_size(0), "0");
}

#[test]
fn the_simulators_output_parses_like_the_captures_and_has_their_shape() {
    use a3ctl_sim::kube::controllers::runs::{Outcome, Sizes, leader_log};
    let capture = parse(&gather_1k_8g()).unwrap();
    let capture_ratio = capture.avg_bus_bandwidth.unwrap() / judged_mean(&capture);
    let hosts = [
        "a3ctl-nccl-test-0".to_string(),
        "a3ctl-nccl-test-1".to_string(),
    ];
    // The simulator's defaults for A3 High, A3 Mega, A3 Ultra and A4.
    for (family, gbps) in [
        (MachineFamily::A3High, 80.0),
        (MachineFamily::A3Mega, 180.0),
        (MachineFamily::A3Ultra, 320.0),
        (MachineFamily::A4, 360.0),
    ] {
        let (code, log) = leader_log(
            &hosts,
            8,
            "NVIDIA GPU",
            "all_gather_perf",
            Sizes {
                min: 1 << 10,
                max: 8 << 30,
                factor: 2,
            },
            &Outcome::Bandwidth {
                gbps,
                gpudirect: true,
            },
        );
        assert_eq!(code, 0);
        let sim = parse(&log).unwrap();
        assert_eq!(sim.rows.len(), capture.rows.len());
        assert_eq!(sim.out_of_bounds, Some(OutOfBounds { count: 0, ok: true }));
        // Its footer is the mean of its rows, as nccl-tests' is.
        assert!((all_mean(&sim) - sim.avg_bus_bandwidth.unwrap()).abs() < 0.005);
        // The configured bandwidth is what the verdict reads.
        let verdict = nccl::judge(&sim, family);
        assert!(
            (verdict.busbw_gbps.unwrap() - gbps).abs() < 0.005,
            "{verdict:?}"
        );
        assert!(verdict.passed);
        // The curve: the all-sizes average over the 2G–8G figure is the capture's.
        let ratio = sim.avg_bus_bandwidth.unwrap() / judged_mean(&sim);
        assert!(
            (ratio - capture_ratio).abs() < 0.01,
            "{ratio} against the capture's {capture_ratio}"
        );
    }
}
