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
use crate::graph::software::NAMESPACE;
use crate::ui::Printer;
use crate::ui::diagnostics::Failure;
use crate::ui::verify_view;
use crate::verify::nccl::{self, NAME, TEST_CONTAINER, TEST_NAMESPACE};
use crate::verify::{
    Expected, KUEUE_GROUP, KUEUE_VERSIONS, KueueSnapshot, LOCAL_QUEUE_NAMESPACE, Report, Snapshot,
};
use std::time::{Duration, Instant};

const NETWORKING: &str = "networking.gke.io/v1";

pub async fn run(
    global: &Global,
    printer: Printer,
    args: VerifyArgs,
) -> Result<ExitStatus, Failure> {
    if args.nccl_test && !args.run {
        return write_nccl_test(&printer, &args);
    }
    // Checked before any cloud call.
    let timeout = parse_duration(&args.timeout)?;
    let session = Session::open(global, printer, &args.blueprint).await?;
    let (state, existed) = session.load_state()?;
    let bp = &session.blueprint;
    let (endpoint, ca) = session::recorded_cluster(
        existed.then_some(&state),
        bp,
        &args.blueprint,
        &session.store.location(),
        global.sandbox,
    )?;
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
        .hint(format!(
            "`a3ctl plan {}` refreshes the cluster and shows whether it still exists; a private endpoint answers only from the cluster's VPC or an authorized network",
            args.blueprint.display()
        ))
    };
    let clients = Clients::new(&config).map_err(|e| unreachable(&e))?;
    let api = ClusterApi::connect(&clients, &endpoint, Some(&ca))
        .await
        .map_err(|e| unreachable(&e))?;
    if args.nccl_test {
        return run_nccl_test(&session, &api, timeout).await;
    }
    let expected = Expected::new(bp, &session.graph, &args.blueprint.display().to_string());
    let snapshot = fetch(&api, &expected).await.map_err(|e| unreachable(&e))?;
    let report = Report::new(
        &bp.name,
        &bp.name,
        &endpoint,
        crate::verify::check(&expected, &snapshot),
    );
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

/// Reads everything the checks need.
async fn fetch(api: &ClusterApi<'_>, expected: &Expected) -> Result<Snapshot, CloudError> {
    let nodes = api.list("v1", "Node", None).await?.unwrap_or_default();
    let daemonsets = api
        .list("apps/v1", "DaemonSet", Some(NAMESPACE))
        .await?
        .unwrap_or_default();
    let networks = api.list(NETWORKING, "Network", None).await?;
    let param_sets = api.list(NETWORKING, "GKENetworkParamSet", None).await?;
    let kueue = match &expected.kueue {
        None => KueueSnapshot::Skipped,
        Some(queue) => {
            let served = api.group_versions(KUEUE_GROUP).await?;
            // The server's preferred version when the checks understand it, else the newest
            // understood one it serves.
            let version = served
                .iter()
                .find(|v| KUEUE_VERSIONS.contains(&v.as_str()))
                .cloned();
            match version {
                None => KueueSnapshot::NotServed,
                Some(version) => {
                    let api_version = format!("{KUEUE_GROUP}/{version}");
                    let cluster_queue = api
                        .get(&api_version, "ClusterQueue", None, &queue.name)
                        .await?;
                    let local_queue = api
                        .get(
                            &api_version,
                            "LocalQueue",
                            Some(LOCAL_QUEUE_NAMESPACE),
                            &queue.name,
                        )
                        .await?;
                    KueueSnapshot::Served {
                        version,
                        cluster_queue,
                        local_queue,
                    }
                }
            }
        }
    };
    Ok(Snapshot {
        nodes,
        daemonsets,
        networks,
        param_sets,
        kueue,
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
            printer.info(&format!(
                "Wrote the NCCL all-gather test to `{}`. Run it with `a3ctl verify {} --nccl-test --run`.",
                path.display(),
                args.blueprint.display()
            ));
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

/// `--nccl-test --run`: replace any earlier test, apply it, wait, judge pod 0's bus bandwidth.
async fn run_nccl_test(
    session: &Session,
    api: &ClusterApi<'_>,
    timeout: Duration,
) -> Result<ExitStatus, Failure> {
    let printer = session.printer;
    let bp = &session.blueprint;
    let objects = nccl_objects(bp)?;
    let job_ref = format!("Job `{TEST_NAMESPACE}/{NAME}`");
    let cloud = |what: String| move |e: CloudError| Failure::cloud(what, &e);
    let deadline = Instant::now() + timeout;
    let poll = Duration::from_millis(
        std::env::var(crate::env_vars::POLL_INTERVAL_MS)
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(5000),
    );
    // A Job's pod template cannot change: an earlier run is deleted first.
    if api
        .get("batch/v1", "Job", Some(TEST_NAMESPACE), NAME)
        .await
        .map_err(cloud(format!("Cannot read {job_ref}")))?
        .is_some()
    {
        printer.info(&format!("Deleting the previous {job_ref}..."));
        api.delete("batch/v1", "Job", Some(TEST_NAMESPACE), NAME)
            .await
            .map_err(cloud(format!("Cannot delete {job_ref}")))?;
        while api
            .get("batch/v1", "Job", Some(TEST_NAMESPACE), NAME)
            .await
            .map_err(cloud(format!("Cannot read {job_ref}")))?
            .is_some()
        {
            if Instant::now() >= deadline {
                return Err(Failure::new(format!("The previous {job_ref} is still being deleted"))
                    .hint(format!("wait for `kubectl -n {TEST_NAMESPACE} get job {NAME}` to find nothing, then run again")));
            }
            tokio::time::sleep(poll).await;
        }
    }
    for object in &objects {
        api.apply(object).await.map_err(cloud(format!(
            "Cannot apply {} `{TEST_NAMESPACE}/{NAME}`",
            object["kind"].as_str().unwrap_or("object")
        )))?;
    }
    printer.info(&format!(
        "Applied the NCCL test ({job_ref}); waiting up to {} for it to finish...",
        show_duration(timeout)
    ));
    let mut last = String::new();
    let outcome = loop {
        let job = api
            .get("batch/v1", "Job", Some(TEST_NAMESPACE), NAME)
            .await
            .map_err(cloud(format!("Cannot read {job_ref}")))?
            .ok_or_else(|| Failure::new(format!("{job_ref} disappeared while waiting for it")))?;
        let status = &job["status"];
        let count = |f: &str| status[f].as_u64().unwrap_or(0);
        let condition = |t: &str| {
            status["conditions"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|c| c["type"] == t && c["status"] == "True")
        };
        let progress = format!(
            "{} of {} pods succeeded, {} running, {} failed",
            count("succeeded"),
            nccl::HOSTS,
            count("active"),
            count("failed")
        );
        if condition("Complete") {
            break Ok(());
        }
        if condition("Failed") {
            break Err(progress);
        }
        if progress != last {
            printer.info(&format!("  {progress}"));
            last = progress;
        }
        if Instant::now() >= deadline {
            return Err(Failure::new(format!(
                "The NCCL test did not finish within {}: {job_ref} has {last}",
                show_duration(timeout)
            ))
            .hint(format!(
                "`kubectl -n {TEST_NAMESPACE} get pods -l job-name={NAME} -o wide` shows where its pods are (Pending pods wait for 2 free GPU nodes{}); run again with a longer --timeout, or remove the test with `kubectl -n {TEST_NAMESPACE} delete job,service {NAME}`",
                if bp.software.kueue.enabled { " or for Kueue to admit the Job" } else { "" }
            )));
        }
        tokio::time::sleep(poll).await;
    };
    let log = leader_log(api).await?;
    if let Err(progress) = outcome {
        let tail: Vec<&str> = log.lines().rev().take(20).collect();
        return Err(Failure::new(format!("The NCCL test failed: {job_ref} has {progress}"))
            .cause(tail.into_iter().rev().collect::<Vec<_>>().join("\n"))
            .hint(format!("`kubectl -n {TEST_NAMESPACE} logs -l job-name={NAME} -c {TEST_CONTAINER}` has the full output; `a3ctl verify` checks the networks and installers the test relies on")));
    }
    let Some(busbw) = nccl::bus_bandwidth(&log) else {
        return Err(Failure::new(format!(
            "The NCCL test finished but its log has no \"Avg bus bandwidth\" line (pod 0 of {job_ref}, container {TEST_CONTAINER})"
        ))
        .hint(format!("read it with `kubectl -n {TEST_NAMESPACE} logs -l job-name={NAME},batch.kubernetes.io/job-completion-index=0 -c {TEST_CONTAINER}`")));
    };
    let (floor, source) = nccl::floor(bp.family);
    printer.out(&verify_view::bandwidth(&printer, busbw, floor, source));
    Ok(if busbw >= floor {
        ExitStatus::Success
    } else {
        ExitStatus::Failure
    })
}

/// The test container's log of the Job's pod 0.
async fn leader_log(api: &ClusterApi<'_>) -> Result<String, Failure> {
    let pods = api
        .list("v1", "Pod", Some(TEST_NAMESPACE))
        .await
        .map_err(|e| Failure::cloud(format!("Cannot list the pods of Job `{NAME}`"), &e))?
        .unwrap_or_default();
    let labels =
        |p: &serde_json::Value, k: &str| p["metadata"]["labels"][k].as_str().map(str::to_string);
    let Some(pod) = pods.iter().find(|p| {
        labels(p, "job-name").as_deref() == Some(NAME)
            && labels(p, "batch.kubernetes.io/job-completion-index").as_deref() == Some("0")
    }) else {
        return Err(Failure::new(format!(
            "Pod 0 of Job `{TEST_NAMESPACE}/{NAME}` is gone; its log cannot be read"
        ))
        .hint("run the test again"));
    };
    let name = pod["metadata"]["name"].as_str().unwrap_or_default();
    api.logs(TEST_NAMESPACE, name, TEST_CONTAINER)
        .await
        .map_err(|e| {
            Failure::cloud(
                format!("Cannot read the log of pod `{TEST_NAMESPACE}/{name}`"),
                &e,
            )
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
