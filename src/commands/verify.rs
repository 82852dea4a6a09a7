//! `a3ctl verify`: read the cluster (GET and LIST only, no lock: nothing is written), run the
//! checks of [`crate::verify`] and print the report; `--nccl-test` writes (and with `--run` runs)
//! the two-node NCCL all-gather test.

use super::ExitStatus;
use super::session::{self, Session};
use crate::cli::{Global, VerifyArgs};
use crate::cloud::CloudError;
use crate::cloud::gcp::{CredentialsMode, Endpoints, GcpConfig};
use crate::cloud::kube::client::Clients;
use crate::cloud::kube::read::ClusterApi;
use crate::ui::Printer;
use crate::ui::diagnostics::Failure;
use crate::ui::verify_view;
use crate::verify::live::{self, NcclError};
use crate::verify::nccl::{self, NAME, TEST_CONTAINER};
use crate::verify::{Expected, Report};
use std::time::Duration;

pub async fn run(
    global: &Global,
    printer: Printer,
    args: VerifyArgs,
) -> Result<ExitStatus, Failure> {
    if args.nccl_test && !args.run {
        // No session: the hint's command is completed from this run's command line all the same.
        crate::ui::invocation::set(&session::state_flags(global), &args.blueprint);
        return write_nccl_test(&printer, &args);
    }
    // Checked before any cloud call.
    let timeout =
        parse_duration(
            args.timeout
                .as_deref()
                .unwrap_or(if args.access { "5m" } else { "20m" }),
        )?;
    let session = Session::open(global, printer, &args.blueprint).await?;
    let (state, existed) = session.load_state()?;
    let bp = &session.blueprint;
    let (endpoint, ca) =
        session::recorded_cluster(existed.then_some(&state), bp, &session.store.location())?;
    let config = GcpConfig {
        project: bp.project.clone(),
        endpoints: Endpoints::default(),
        credentials: if global.sandbox {
            CredentialsMode::Anonymous
        } else {
            CredentialsMode::from_env()
        },
        poll: Duration::from_secs(1),
    };
    let unreachable = |e: &CloudError| {
        Failure::cloud(
            format!(
                "Cannot read cluster `{}` through its Kubernetes API at https://{endpoint}",
                bp.name
            ),
            e,
        )
        .hint("`a3ctl plan` refreshes the cluster and shows whether it still exists; a private endpoint answers only from the cluster's VPC or an authorized network")
    };
    let clients = Clients::new(&config).map_err(|e| unreachable(&e))?;
    let api = ClusterApi::connect(&clients, &endpoint, Some(&ca))
        .await
        .map_err(|e| unreachable(&e))?;
    if args.nccl_test {
        return run_nccl_test(&session, &api, timeout, args.json).await;
    }
    let expected = Expected::new(bp, &session.graph, &args.blueprint.display().to_string());
    let snapshot = live::fetch(&api, &expected)
        .await
        .map_err(|e| unreachable(&e))?;
    let mut checks = crate::verify::check(&expected, &snapshot);
    if args.access {
        let probes = crate::verify::access::probes(bp);
        if probes.is_empty() {
            checks.push(crate::verify::Check::fail(
                "access",
                "the blueprint grants nothing to probe: it has no `[identity]`, or no mounted bucket and no repository",
                "add `[identity]` (docs/blueprint.md) and apply",
            ));
        } else {
            let poll = if global.sandbox {
                Duration::from_millis(20)
            } else {
                Duration::from_secs(2)
            };
            let probed = live::run_access_probes(&api, &probes, timeout, poll)
                .await
                .map_err(|e| unreachable(&e))?;
            checks.extend(probed);
        }
    }
    // The checks name `a3ctl plan BLUEPRINT`; the commands to paste carry this run's flags too
    // (`--sandbox`), completed in one place.
    for check in &mut checks {
        check.hint = check.hint.as_deref().map(crate::ui::invocation::complete);
    }
    let report = Report::new(&bp.name, &bp.name, &endpoint, checks);
    if args.json {
        printer.out(&format!("{}\n", verify_view::json(&report)));
    } else {
        printer.out(&verify_view::render(&printer, &report));
    }
    Ok(if report.passed {
        ExitStatus::Success
    } else {
        ExitStatus::Failure
    })
}

/// `--nccl-test` without `--run`: the manifest to stdout or `--out`; no cloud call.
fn write_nccl_test(printer: &Printer, args: &VerifyArgs) -> Result<ExitStatus, Failure> {
    let bp =
        crate::blueprint::load(&args.blueprint).map_err(|e| Failure::blueprint(printer, &e))?;
    let objects = nccl_objects(&bp)?;
    let text = nccl::manifest(&bp, &objects);
    match &args.out {
        None => printer.out(&text),
        Some(path) => {
            std::fs::write(path, &text).map_err(|e| {
                Failure::new(format!("Cannot write `{}`", path.display())).cause(e.to_string())
            })?;
            printer.info(&crate::ui::invocation::complete(&format!(
                "Wrote the NCCL all-gather test to `{}`. Run it with `a3ctl verify --nccl-test --run`.",
                path.display(),
            )));
        }
    }
    Ok(ExitStatus::Success)
}

fn nccl_objects(bp: &crate::blueprint::Blueprint) -> Result<Vec<serde_json::Value>, Failure> {
    nccl::objects(bp).map_err(|room| {
        Failure::new(format!(
            "The NCCL test needs {} nodes in one GPU pool; the largest pool of `{}` has {}",
            nccl::HOSTS,
            bp.name,
            room.largest
        ))
        .hint("give a GPU pool at least 2 nodes (`nodes` in its `[[gpu_pool]]`) to measure the network between nodes")
    })
}

/// `--nccl-test --run`: replace any earlier test, apply it, wait, judge pod 0's 2G–8G bus
/// bandwidth and print the verdict with the per-size table (or `--json`).
async fn run_nccl_test(
    session: &Session,
    api: &ClusterApi<'_>,
    timeout: Duration,
    json: bool,
) -> Result<ExitStatus, Failure> {
    let printer = session.printer;
    let bp = &session.blueprint;
    let objects = nccl_objects(bp)?;
    let namespace = nccl::test_namespace(bp);
    let job_ref = format!("Job `{namespace}/{NAME}`");
    let poll = Duration::from_millis(
        std::env::var(crate::env_vars::POLL_INTERVAL_MS)
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(5000),
    );
    printer.info(&format!(
        "Applying the NCCL test ({job_ref}); waiting up to {} for it to finish...",
        show_duration(timeout)
    ));
    let progress = |line: &str| printer.info(&format!("  {line}"));
    let output = live::run_nccl_test(api, &objects, timeout, poll, &progress)
        .await
        .map_err(|e| match e {
            NcclError::Cloud { what, error } => {
                Failure::cloud(format!("Cannot {what} `{namespace}/{NAME}`"), &error)
            }
            NcclError::PreviousStillDeleting => Failure::new(format!(
                "The previous {job_ref} is still being deleted"
            ))
            .hint(format!(
                "wait for `kubectl -n {namespace} get job {NAME}` to find nothing, then run again"
            )),
            NcclError::Disappeared => {
                Failure::new(format!("{job_ref} disappeared while waiting for it"))
            }
            NcclError::TimedOut { progress } => Failure::new(format!(
                "The NCCL test did not finish within {}: {job_ref} has {progress}",
                show_duration(timeout)
            ))
            .hint(format!(
                "`kubectl -n {namespace} get pods -l job-name={NAME} -o wide` shows where its pods are (Pending pods wait for 2 free GPU nodes{}); run again with a longer --timeout, or remove the test with `kubectl -n {namespace} delete job,service {NAME}`",
                if bp.software.kueue.enabled { " or for Kueue to admit the Job" } else { "" }
            )),
            NcclError::Failed { progress, log_tail } => {
                Failure::new(format!("The NCCL test failed: {job_ref} has {progress}"))
                    .cause(log_tail)
                    .hint(format!("`kubectl -n {namespace} logs -l job-name={NAME} -c {TEST_CONTAINER}` has the full output; `a3ctl verify` checks the networks and installers the test relies on"))
            }
            NcclError::LeaderGone => Failure::new(format!(
                "Pod 0 of {job_ref} is gone; its log cannot be read"
            ))
            .hint("run the test again"),
            NcclError::Unreadable { error, log_tail } => Failure::new(format!(
                "The NCCL test finished but its log cannot be read: {error} (pod 0 of {job_ref}, container {TEST_CONTAINER})"
            ))
            .cause(log_tail)
            .hint(format!("read it with `kubectl -n {namespace} logs -l job-name={NAME},batch.kubernetes.io/job-completion-index=0 -c {TEST_CONTAINER}`")),
        })?;
    let verdict = nccl::judge(&output, bp.family);
    if json {
        printer.out(&format!(
            "{}\n",
            verify_view::nccl_json(&bp.name, &bp.name, &verdict, session.sandbox.is_some())
        ));
    } else {
        printer.out(&verify_view::nccl_verdict(
            &printer,
            &verdict,
            session.sandbox.is_some(),
        ));
    }
    Ok(if verdict.passed {
        ExitStatus::Success
    } else {
        ExitStatus::Failure
    })
}

/// `20m`, `90s`, `1h`, `1500ms`.
pub fn parse_duration(text: &str) -> Result<Duration, Failure> {
    let bad = || {
        Failure::new(format!("`{text}` is not a duration"))
            .hint("write a number with a unit: `20m`, `90s`, `1h` or `500ms`")
    };
    let text = text.trim();
    let split = text.find(|c: char| !c.is_ascii_digit()).ok_or_else(bad)?;
    let (number, unit) = text.split_at(split);
    let n: u64 = number.parse().map_err(|_| bad())?;
    let millis = match unit {
        "ms" => 1,
        "s" => 1000,
        "m" => 60_000,
        "h" => 3_600_000,
        _ => return Err(bad()),
    };
    Ok(Duration::from_millis(n.saturating_mul(millis)))
}

fn show_duration(d: Duration) -> String {
    let ms = d.as_millis();
    match ms {
        m if m % 3_600_000 == 0 && m > 0 => format!("{}h", m / 3_600_000),
        m if m % 60_000 == 0 && m > 0 => format!("{}m", m / 60_000),
        m if m % 1000 == 0 => format!("{}s", m / 1000),
        m => format!("{m}ms"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_parse_with_units_and_bad_ones_are_refused() {
        assert_eq!(parse_duration("20m").unwrap(), Duration::from_secs(1200));
        assert_eq!(parse_duration("90s").unwrap(), Duration::from_secs(90));
        assert_eq!(parse_duration("1h").unwrap(), Duration::from_secs(3600));
        assert_eq!(parse_duration("250ms").unwrap(), Duration::from_millis(250));
        for bad in ["", "20", "m", "1.5h", "10 minutes"] {
            assert!(parse_duration(bad).is_err(), "{bad}");
        }
        assert_eq!(show_duration(Duration::from_secs(1200)), "20m");
        assert_eq!(show_duration(Duration::from_millis(250)), "250ms");
    }
}
