//! Refresh: read every resource recorded in state from the cloud, concurrently. The only I/O in
//! `plan/`. What it finds feeds [`super::planner::plan`] as the live view.

use super::planner::Refreshed;
use crate::cloud::{CloudError, Provider, Target};
use crate::resource::Addr;
use crate::state::State;
use futures_util::stream::{self, StreamExt};

/// Reads every recorded resource, at most `concurrency` at a time. Fails on the first error that
/// is not "not found", naming the resource.
pub async fn refresh(
    provider: &dyn Provider,
    state: &State,
    concurrency: usize,
) -> Result<Refreshed, (Addr, CloudError)> {
    let targets: Vec<Target> = state
        .resources
        .iter()
        .map(|(addr, record)| Target {
            addr: addr.clone(),
            id: record.id.clone(),
            spec: record.spec.clone(),
            outputs: record.outputs.clone(),
            context: record
                .dependencies
                .iter()
                .filter_map(|d| {
                    state
                        .resources
                        .get(d)
                        .map(|r| (d.clone(), r.outputs.clone()))
                })
                .collect(),
            lifecycle: record.lifecycle.clone(),
        })
        .collect();
    let results: Vec<(Addr, Result<_, CloudError>)> = stream::iter(targets)
        .map(|target| async move {
            let mut attempt: u32 = 0;
            loop {
                match provider.read(&target).await {
                    Err(e) if e.class.is_retryable() && attempt < 5 => {
                        attempt += 1;
                        tokio::time::sleep(std::time::Duration::from_millis(
                            200 * u64::from(attempt),
                        ))
                        .await;
                    }
                    other => return (target.addr.clone(), other),
                }
            }
        })
        .buffer_unordered(concurrency.max(1))
        .collect()
        .await;
    let mut refreshed = Refreshed::new();
    for (addr, result) in results {
        match result {
            Ok(observed) => {
                refreshed.insert(addr, observed);
            }
            Err(e) => return Err((addr, e)),
        }
    }
    Ok(refreshed)
}
