//! Reading nccl-tests' output (NVIDIA/nccl-tests, `src/util.cu` and `src/common.cu` at
//! a0b82b2260cf5152b9f8c061bbf7eaf0ba096432): the per-size result table, its footer, or the
//! JSON report that `-J FILE` writes. Pure: text in, [`Output`] or a [`ParseError`] out.
//!
//! **The table.** A header of two or three `#` lines names the columns,
//! `size count type redop root`, then the out-of-place half `time algbw busbw #wrong` and the
//! in-place half, the same. Column positions come from that header, not from a fixed layout, so
//! the variants read alike: `-C 1` calls the time column `cputime` (v2.13.4+); `-S 1` appends a
//! `timestamp` column (v2.17.6+); `-I` adds `i_min i_max i_p99 i_cv%` to each half (v2.19.2+);
//! `-c 0` prints `N/A` where the wrong-value count would be. A row is a line whose first two
//! cells are integers and whose bus-bandwidth cells are numbers; every other line (NCCL `INFO`
//! lines, ssh warnings and whatever else MPI interleaves across hosts) is skipped, and a line
//! prefixed by `mpirun --tag-output` (`[1,0]<stdout>:`) is read without the prefix. A later
//! header starts a new table: the last one counts, as its footer is the last one.
//!
//! **The footer.** `# Out of bounds values : N OK|FAILED` and `# Avg bus bandwidth : %g`
//! (followed by `OK`/`FAILED` with `-m`), then, since v2.16.7, `# Collective test concluded:
//! <program>`. The average is the plain mean of the bus bandwidth of every row, out-of-place
//! and in-place alike (`common.cu`: each `BenchTime` adds its `busBw`, the sum is divided by
//! their count), over every size the run covered.
//!
//! **JSON** (`-J`, v2.17.3+): a top-level object whose `results` list holds one object per size
//! (`size`, `count`, `type`, `redop`, `root`, `out_of_place` and `in_place` with
//! `time`|`cpu_time`, `alg_bw`, `bus_bw`, `nwrong`: a number, or `null` without validation),
//! then `out_of_bounds {count, okay}` and `average_bus_bandwidth {bandwidth, okay}`. Its
//! booleans are written as the strings `"true"`/`"false"`, and a NaN double as `"nan"`.

use serde::Serialize;
use serde_json::Value;

/// One size of the table.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Row {
    /// Bytes.
    pub size: u64,
    /// Out-of-place bus bandwidth, GB/s.
    pub busbw_out: f64,
    /// In-place bus bandwidth, GB/s.
    pub busbw_in: f64,
    /// Wrong elements out of place; `None` when the run did not validate (`N/A`).
    pub wrong_out: Option<u64>,
    pub wrong_in: Option<u64>,
}

/// `# Out of bounds values : N OK|FAILED`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct OutOfBounds {
    pub count: u64,
    pub ok: bool,
}

/// What a run printed.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Output {
    /// In the order printed (nccl-tests prints increasing sizes).
    pub rows: Vec<Row>,
    /// `# Avg bus bandwidth`: the mean over every row, both halves; `None` when the footer is
    /// missing (a run cut short).
    pub avg_bus_bandwidth: Option<f64>,
    pub out_of_bounds: Option<OutOfBounds>,
}

/// Why a text is not nccl-tests output.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParseError {
    #[error("the log is empty")]
    Empty,
    #[error(
        "the log has no nccl-tests result table (no `# size count type redop root ... busbw #wrong` header)"
    )]
    NoTable,
    #[error("the nccl-tests header has {found} `busbw` column(s), not one per half: `{line}`")]
    BadHeader { found: usize, line: String },
    #[error(
        "the nccl-tests table has a header but no rows (the run stopped before its first size)"
    )]
    NoRows,
    #[error("the nccl-tests JSON report is not readable: {0}")]
    Json(String),
}

/// Reads nccl-tests' stdout (or its `-J` JSON report).
pub fn parse(text: &str) -> Result<Output, ParseError> {
    let trimmed = text.trim();
    if trimmed.is_empty() {
        return Err(ParseError::Empty);
    }
    if trimmed.starts_with('{')
        && let Ok(value) = serde_json::from_str::<Value>(trimmed)
    {
        return parse_json(&value);
    }
    parse_table(text)
}

/// Where the cells of a row are, from the header.
#[derive(Debug, Clone, Copy)]
struct Columns {
    size: usize,
    busbw: [usize; 2],
    /// `#wrong` of each half, when the header has it.
    wrong: [Option<usize>; 2],
    /// The fewest cells a row has (up to the last column read).
    needed: usize,
}

/// A header line's cells: `#       size   count ...` → `["size", "count", ...]`; `None` for
/// any other line.
fn header_cells(line: &str) -> Option<Vec<&str>> {
    let rest = line.strip_prefix('#')?;
    let cells: Vec<&str> = rest.split_whitespace().collect();
    (cells.first() == Some(&"size") && cells.contains(&"busbw")).then_some(cells)
}

fn columns(cells: &[&str], line: &str) -> Result<Columns, ParseError> {
    let at = |name: &str| -> Vec<usize> {
        cells
            .iter()
            .enumerate()
            .filter(|(_, c)| **c == name)
            .map(|(i, _)| i)
            .collect()
    };
    let busbw = at("busbw");
    if busbw.len() != 2 {
        return Err(ParseError::BadHeader {
            found: busbw.len(),
            line: line.trim().to_string(),
        });
    }
    let wrong = at("#wrong");
    // Each half's `#wrong` follows its `busbw`.
    let wrong_of = |half: usize| {
        wrong
            .iter()
            .copied()
            .find(|w| *w > busbw[half] && (half == 1 || *w < busbw[1]))
    };
    let wrong = [wrong_of(0), wrong_of(1)];
    let needed = 1 + busbw[1].max(wrong[1].unwrap_or(0));
    Ok(Columns {
        size: 0,
        busbw: [busbw[0], busbw[1]],
        wrong,
        needed,
    })
}

/// `[1,0]<stdout>:text` (mpirun `--tag-output`) → `text`.
fn untagged(line: &str) -> &str {
    if line.starts_with('[')
        && let Some(at) = line.find(">:")
        && line[..at].contains("]<std")
    {
        return &line[at + 2..];
    }
    line
}

/// A number cell: `331.83`, `1.2e+03`; `None` for anything else (`nan` included).
fn number(cell: &str) -> Option<f64> {
    cell.parse::<f64>().ok().filter(|v| v.is_finite())
}

/// A `#wrong` cell: `0`, `1e+06` (`%g`), `N/A` (no validation) → `None`.
fn wrong(cell: &str) -> Option<u64> {
    number(cell).filter(|v| *v >= 0.0).map(|v| v as u64)
}

fn row(line: &str, columns: &Columns) -> Option<Row> {
    let cells: Vec<&str> = line.split_whitespace().collect();
    if cells.len() < columns.needed {
        return None;
    }
    let size = cells[columns.size].parse::<u64>().ok()?;
    // The element count: a second integer tells a row from a line that starts with a number.
    cells.get(columns.size + 1)?.parse::<u64>().ok()?;
    let busbw_out = number(cells[columns.busbw[0]])?;
    let busbw_in = number(cells[columns.busbw[1]])?;
    let wrong_at = |half: usize| columns.wrong[half].and_then(|i| wrong(cells[i]));
    Some(Row {
        size,
        busbw_out,
        busbw_in,
        wrong_out: wrong_at(0),
        wrong_in: wrong_at(1),
    })
}

/// `# Name : value rest` → (`value`, `rest`) when the line is that footer line.
fn footer<'a>(line: &'a str, name: &str) -> Option<(&'a str, &'a str)> {
    let rest = line.strip_prefix('#')?.trim_start().strip_prefix(name)?;
    let rest = rest.trim_start().strip_prefix(':')?.trim();
    Some(
        rest.split_once(char::is_whitespace)
            .map_or((rest, ""), |(v, r)| (v, r.trim())),
    )
}

fn parse_table(text: &str) -> Result<Output, ParseError> {
    let mut columns: Option<Columns> = None;
    let mut rows = vec![];
    let mut avg = None;
    let mut out_of_bounds = None;
    for line in text.lines().map(untagged) {
        let trimmed = line.trim_start();
        if let Some(cells) = header_cells(trimmed) {
            columns = Some(self::columns(&cells, trimmed)?);
            rows.clear();
            continue;
        }
        if let Some((value, _)) = footer(trimmed, "Avg bus bandwidth") {
            avg = number(value);
            continue;
        }
        if let Some((value, status)) = footer(trimmed, "Out of bounds values") {
            if let Ok(count) = value.parse::<u64>() {
                out_of_bounds = Some(OutOfBounds {
                    count,
                    ok: status != "FAILED" && count == 0,
                });
            }
            continue;
        }
        if trimmed.starts_with('#') {
            continue;
        }
        if let Some(columns) = &columns
            && let Some(row) = row(trimmed, columns)
        {
            rows.push(row);
        }
    }
    if columns.is_none() {
        return Err(ParseError::NoTable);
    }
    if rows.is_empty() {
        return Err(ParseError::NoRows);
    }
    Ok(Output {
        rows,
        avg_bus_bandwidth: avg,
        out_of_bounds,
    })
}

/// `"true"`/`"false"` (nccl-tests writes booleans as strings) or a JSON boolean.
fn json_bool(value: &Value) -> Option<bool> {
    value.as_bool().or_else(|| match value.as_str() {
        Some("true") => Some(true),
        Some("false") => Some(false),
        _ => None,
    })
}

fn parse_json(value: &Value) -> Result<Output, ParseError> {
    let results = value["results"]
        .as_array()
        .ok_or_else(|| ParseError::Json("it has no `results` list".to_string()))?;
    let mut rows = vec![];
    for (i, result) in results.iter().enumerate() {
        let bad = |what: &str| ParseError::Json(format!("result #{} has no {what}", i + 1));
        let size = result["size"].as_u64().ok_or_else(|| bad("`size`"))?;
        let half = |key: &str| -> Result<(f64, Option<u64>), ParseError> {
            let half = &result[key];
            let busbw = half["bus_bw"]
                .as_f64()
                .filter(|v| v.is_finite())
                .ok_or_else(|| bad(&format!("`{key}.bus_bw` number")))?;
            let wrong = half["nwrong"]
                .as_f64()
                .filter(|v| *v >= 0.0)
                .map(|v| v as u64);
            Ok((busbw, wrong))
        };
        let (busbw_out, wrong_out) = half("out_of_place")?;
        let (busbw_in, wrong_in) = half("in_place")?;
        rows.push(Row {
            size,
            busbw_out,
            busbw_in,
            wrong_out,
            wrong_in,
        });
    }
    if rows.is_empty() {
        return Err(ParseError::NoRows);
    }
    let out_of_bounds = value["out_of_bounds"]["count"]
        .as_u64()
        .map(|count| OutOfBounds {
            count,
            ok: json_bool(&value["out_of_bounds"]["okay"]).unwrap_or(true) && count == 0,
        });
    Ok(Output {
        rows,
        avg_bus_bandwidth: value["average_bus_bandwidth"]["bandwidth"]
            .as_f64()
            .filter(|v| v.is_finite()),
        out_of_bounds,
    })
}

/// A size as nccl-tests' `-b`/`-e` take it: `1K`, `512M`, `8G`, else bytes.
pub fn show_size(bytes: u64) -> String {
    for (shift, unit) in [(40, "T"), (30, "G"), (20, "M"), (10, "K")] {
        if bytes >= 1 << shift && bytes.is_multiple_of(1 << shift) {
            return format!("{}{unit}", bytes >> shift);
        }
    }
    bytes.to_string()
}

#[cfg(test)]
mod tests;
