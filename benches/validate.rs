//! `cargo bench --bench validate`: how the time of `a3ctl validate` grows with the number of
//! problems in a blueprint. It generates blueprints with 1,000, 4,000 and 16,000 problems (unknown
//! keys, half of them close enough to a real key to get a "did you mean", spread over the top
//! level and a GPU pool, and, for every tenth, a value of the wrong type), then times what
//! `a3ctl validate` does with them: read and check the text (`blueprint::parse`), then render the
//! problems as the terminal shows them (`ui::diagnostics::render_blueprint_error`).
//!
//! Numbers, not assertions: this is a benchmark, not a test. Validation is linear when the time
//! per problem stays flat as the count quadruples (the `x prev` column near 4). A last line times
//! problems at the end of a blueprint near the 1 MiB cap, where drawing them costs the most.

use a3ctl::blueprint::{self, BlueprintError};
use a3ctl::ui::Printer;
use a3ctl::ui::diagnostics::render_blueprint_error;
use std::time::{Duration, Instant};

/// The text of a blueprint with `problems` problems.
fn generate(problems: usize) -> String {
    let mut top = String::from(
        "name = \"a3mega\"\nproject = \"my-project\"\nregion = \"us-central1\"\nzone = \"us-central1-a\"\n",
    );
    let mut pool = String::from("\n[[gpu_pool]]\nmachine_type = \"a3-megagpu-8g\"\nnodes = 2\n");
    for i in 0..problems {
        // Alternate: a stranger key (no suggestion; the hint lists every allowed key) and a typo
        // of a real key (a "did you mean"); every tenth problem is a wrong type instead, so not
        // every problem is the same rule.
        let line = match i % 10 {
            9 => format!("zone_{i} = [1, 2]\n"),
            n if n % 2 == 0 => format!("unknown_key_{i} = {i}\n"),
            _ => format!("projectt{i} = \"x\"\n"),
        };
        if i % 2 == 0 {
            top.push_str(&line);
        } else {
            pool.push_str(&line.replace("projectt", "nodess"));
        }
    }
    top.push_str(&pool);
    top
}

struct Timing {
    parse: Duration,
    render: Duration,
    found: usize,
    rendered_bytes: usize,
}

fn time(text: &str) -> Timing {
    let printer = Printer {
        color: false,
        bars: false,
        quiet: false,
    };
    let started = Instant::now();
    let result = blueprint::parse(text, "bench.toml");
    let parse = started.elapsed();
    let error = match result {
        Err(error @ BlueprintError::Invalid { .. }) => error,
        Err(other) => panic!("unexpected error: {other}"),
        Ok(_) => panic!("the generated blueprint validated"),
    };
    let started = Instant::now();
    let rendered = render_blueprint_error(&printer, &error);
    // `a3ctl validate` also prints the error's one-line message.
    let rendered_bytes = rendered.len() + error.to_string().len();
    Timing {
        parse,
        render: started.elapsed(),
        found: error.problems().len(),
        rendered_bytes,
    }
}

fn main() {
    println!("`a3ctl validate` time against the number of problems in the blueprint:");
    println!(
        "{:>9} {:>9} {:>10} {:>10} {:>10} {:>12} {:>8} {:>12}",
        "problems",
        "found",
        "parse ms",
        "render ms",
        "total ms",
        "us/problem",
        "x prev",
        "output KiB"
    );
    let mut previous: Option<f64> = None;
    for problems in [1_000, 4_000, 16_000] {
        let text = generate(problems);
        // Best of three after one warm-up run; a run over two seconds is measured once.
        let first = time(&text);
        let best = if first.parse + first.render > Duration::from_secs(2) {
            first
        } else {
            (0..3)
                .map(|_| time(&text))
                .min_by_key(|t| t.parse + t.render)
                .expect("three runs")
        };
        let total = (best.parse + best.render).as_secs_f64() * 1000.0;
        let ratio = previous.map_or("-".to_string(), |p| format!("{:.1}", total / p));
        println!(
            "{problems:>9} {:>9} {:>10.1} {:>10.1} {total:>10.1} {:>12.1} {ratio:>8} {:>12}",
            best.found,
            best.parse.as_secs_f64() * 1000.0,
            best.render.as_secs_f64() * 1000.0,
            total * 1000.0 / problems as f64,
            best.rendered_bytes / 1024,
        );
        previous = Some(total);
    }
    println!(
        "\n`x prev`: total time over the previous row's; each row has 4 times the problems, so 4.0 is linear and 16.0 quadratic."
    );

    // Where the problems are should not matter: 100 problems after 1 MB of comments (drawing a
    // problem once cost a scan of the text from the top).
    let text = generate(100).replacen(
        "zone = \"us-central1-a\"\n",
        &format!(
            "zone = \"us-central1-a\"\n{}",
            "# a comment line to push the problems to the end of a large blueprint\n"
                .repeat(14_000)
        ),
        1,
    );
    let first = time(&text);
    let best = (0..3)
        .map(|_| time(&text))
        .chain([first])
        .min_by_key(|t| t.parse + t.render)
        .expect("runs");
    println!(
        "\n{} problems at the end of a {} KiB blueprint: parse {:.1} ms, render {:.1} ms",
        best.found,
        text.len() / 1024,
        best.parse.as_secs_f64() * 1000.0,
        best.render.as_secs_f64() * 1000.0,
    );
}
