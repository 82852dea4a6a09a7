//! Test helpers shared by the rule tests: a valid base blueprint and a checker that returns the
//! problems with their lines.

use super::{BlueprintError, Problem, parse};

/// A valid A3 Mega blueprint using the defaults; tests append or replace lines in it.
pub const BASE: &str = r#"name = "a3mega"
project = "my-project"
region = "us-central1"
zone = "us-central1-a"

[[gpu_pool]]
name = "a3mega"
machine_type = "a3-megagpu-8g"
nodes = 2
"#;

/// The problems in `text` (empty when it validates).
pub fn problems(text: &str) -> Vec<Problem> {
    match parse(text, "test.toml") {
        Ok(_) => Vec::new(),
        Err(BlueprintError::Invalid { problems, .. }) => problems,
        Err(other) => panic!("unexpected error: {other}"),
    }
}

/// Asserts that `text` has exactly one problem, whose message contains `message`, located at
/// `line`:`column`; returns it for further checks.
#[track_caller]
pub fn one_problem(text: &str, message: &str, line: usize, column: usize) -> Problem {
    let found = problems(text);
    let summary: Vec<String> = found
        .iter()
        .map(|p| {
            format!(
                "{}:{}: {} [{}] {:?}",
                p.line, p.column, p.message, p.label, p.help
            )
        })
        .collect();
    assert_eq!(
        found.len(),
        1,
        "expected one problem, got:\n{}",
        summary.join("\n")
    );
    let problem = found.into_iter().next().expect("length checked");
    assert!(
        problem.message.contains(message),
        "message {:?} lacks {:?}",
        problem.message,
        message
    );
    assert_eq!(
        (problem.line, problem.column),
        (line, column),
        "position of {:?}",
        problem.message
    );
    problem
}

/// `BASE` with `extra` appended.
pub fn with(extra: &str) -> String {
    format!("{BASE}{extra}")
}

/// A shipped blueprint (`blueprints/<name>`), loaded and validated.
pub fn shipped(name: &str) -> super::Blueprint {
    super::load(
        &std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("blueprints")
            .join(name),
    )
    .unwrap()
}

/// `a3-mega.toml` turned into an A3 Ultra or A4 blueprint in `mode`, with the facts validation
/// gives such a blueprint (one gVNIC subnet and eight RDMA subnets in explicit mode, none in
/// managed mode, a gIB stack): for tests of what follows from a blueprint, while no A3 Ultra or
/// A4 zone is known and no such blueprint validates.
pub fn rdma(family: super::MachineFamily, mode: super::NetworkMode) -> super::Blueprint {
    let mut bp = shipped("a3-mega.toml");
    bp.family = family;
    bp.network.mode = mode;
    let subnet = bp.network.gpu_subnets[0];
    bp.network.gpu_subnets = match mode {
        super::NetworkMode::Explicit => vec![subnet; family.gpu_nics()],
        super::NetworkMode::Managed => Vec::new(),
    };
    bp.network.gpu_mtu = family.gpu_mtu();
    bp.software.stack.gpudirect = super::GpuDirect::Rdma;
    bp.software.stack.rxdm = None;
    bp
}
