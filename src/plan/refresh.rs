//! Refresh: read every resource recorded in state from the cloud, concurrently; and, for
//! `--adopt`, look for the resources the blueprint declares that state does not record yet. The
//! only I/O in `plan/`. What it finds feeds [`super::planner::plan`] as the live view.

use super::planner::Refreshed;
use super::{Adoption, Existing, Found, Unchecked};
use crate::cloud::retry::{Jitter, retry};
use crate::cloud::{CloudError, CloudResult, Provider, Settle, Target};
use crate::resource::{Addr, Desired, Observed};
use crate::state::State;
use futures_util::stream::{self, FuturesUnordered, StreamExt};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};

/// Reads every recorded resource, at most `concurrency` at a time. Fails on the first error that
/// is not "not found", naming the resource.
///
/// A resource that lives inside another (`lifecycle.deleted_with`: a node pool or a Kubernetes
/// object inside its cluster) is known to be gone, without a read, when that container is gone:
/// no longer recorded (an earlier destroy deleted it), not found, or being deleted. So a cluster
/// deleted behind a3ctl's back, or by a destroy that was killed, takes its objects with it, and
/// neither plan nor destroy ever needs the endpoint of a cluster that no longer answers.
pub async fn refresh(
    provider: &dyn Provider,
    state: &State,
    concurrency: usize,
) -> Result<Refreshed, (Addr, CloudError)> {
    let target = |addr: &Addr, record: &crate::state::Record| Target::recorded(addr, record, state);
    // Each inner resource waits for its container's read only (not for every other read): its
    // read starts as soon as the container is known to be there.
    let mut waiting: BTreeMap<Addr, Vec<Target>> = BTreeMap::new();
    let mut first = Vec::new();
    let mut refreshed = Refreshed::new();
    for (addr, record) in &state.resources {
        match &record.lifecycle.deleted_with {
            Some(container) if !state.resources.contains_key(container) => {
                refreshed.insert(addr.clone(), None);
            }
            Some(container) if state.resources[container].lifecycle.deleted_with.is_none() => {
                waiting
                    .entry(container.clone())
                    .or_default()
                    .push(target(addr, record));
            }
            _ => first.push(target(addr, record)),
        }
    }
    let limit = std::sync::Arc::new(tokio::sync::Semaphore::new(concurrency.max(1)));
    let start = |target: Target| {
        let limit = limit.clone();
        async move {
            let _permit = limit.acquire_owned().await;
            let result = read(provider, &target).await;
            (target, result)
        }
    };
    let mut reads: FuturesUnordered<_> = first.into_iter().map(start).collect();
    while let Some((target, result)) = reads.next().await {
        let mut observed = result.map_err(|e| (target.addr.clone(), e))?;
        if let Some(o) = observed.as_mut() {
            crate::resource::spec::keep_local(target.addr.kind, &mut o.spec, &target.spec);
        }
        let gone = match &observed {
            None => true,
            Some(o) => matches!(provider.settle(&target, o), Settle::Deleting { .. }),
        };
        for mut inner in waiting.remove(&target.addr).unwrap_or_default() {
            if gone {
                refreshed.insert(inner.addr, None);
            } else {
                // What lives inside reads through what its container is now (a cluster's
                // endpoint may have moved since it was recorded), not what state last saw.
                if let Some(o) = &observed {
                    inner.context.insert(target.addr.clone(), o.outputs.clone());
                }
                reads.push(start(inner));
            }
        }
        refreshed.insert(target.addr, observed);
    }
    Ok(refreshed)
}

/// Looks for every resource of `desired` that `state` does not record (nor has an operation
/// pending for) under the blueprint's identity, and returns those that exist, in `desired`'s
/// order. Reads go in dependency waves so that a resource is read with its dependencies' outputs
/// (a node pool counts its nodes, a Kubernetes object reaches its cluster); a resource deleted
/// with a parent that does not exist (a node pool of a missing cluster) is not looked for.
pub async fn discover(
    provider: &dyn Provider,
    desired: &[Desired],
    state: &State,
    concurrency: usize,
) -> Result<Vec<Adoption>, (Addr, CloudError)> {
    let unrecorded: Vec<&Desired> = desired
        .iter()
        .filter(|d| !state.resources.contains_key(&d.addr) && state.pending_for(&d.addr).is_none())
        .collect();
    let mut looked = look(provider, &unrecorded, state, concurrency, false).await;
    desired
        .iter()
        .filter_map(|d| {
            let mut observed = match looked.remove(&d.addr)? {
                Looked::Found(observed) => observed,
                Looked::Failed(e) => return Some(Err((d.addr.clone(), e))),
                Looked::Missing | Looked::Unreadable(_) => return None,
            };
            // a3ctl's own settings start as the blueprint says: the cloud has no value for them.
            crate::resource::spec::keep_local(d.addr.kind, &mut observed.spec, &d.spec);
            Some(Ok(Adoption {
                addr: d.addr.clone(),
                id: d.id.clone(),
                spec: observed.spec,
                outputs: observed.outputs,
                dependencies: d.dependencies.clone(),
                lifecycle: d.lifecycle.clone(),
            }))
        })
        .collect::<Result<Vec<_>, _>>()
}

/// What looking for one resource under its blueprint identity gave.
enum Looked {
    Found(Observed),
    Missing,
    /// The read failed (after the provider's retries).
    Failed(CloudError),
    /// Not read: the resource it lives in (`lifecycle.deleted_with`, named) could not be read.
    Unreadable(Addr),
}

/// Reads each of `wanted` under its blueprint identity, in dependency waves (each read gets the
/// outputs of its dependencies, from state or found in an earlier wave). A resource deleted with a
/// parent that does not exist is [`Looked::Missing`] without a read. Without `lenient`, no wave
/// starts after one with a failed read (what is not read then is left out of the answer). With
/// `lenient`, every read is made that can be; and an API (`service.*`) found disabled counts as
/// missing, as does, without a read, whatever depends on it: nothing of a disabled API can be
/// read (the read would be refused), and a first apply enables it before calling it at all.
async fn look(
    provider: &dyn Provider,
    wanted: &[&Desired],
    state: &State,
    concurrency: usize,
    lenient: bool,
) -> BTreeMap<Addr, Looked> {
    let mut outputs: BTreeMap<Addr, Value> = state
        .resources
        .iter()
        .map(|(a, r)| (a.clone(), r.outputs.clone()))
        .collect();
    let mut remaining: Vec<&Desired> = wanted.to_vec();
    let mut looked: BTreeMap<Addr, Looked> = BTreeMap::new();
    while !remaining.is_empty() {
        let waiting: BTreeSet<&Addr> = remaining.iter().map(|d| &d.addr).collect();
        let (ready, later): (Vec<&Desired>, Vec<&Desired>) = remaining
            .iter()
            .partition(|d| d.dependencies.iter().all(|dep| !waiting.contains(dep)));
        if ready.is_empty() {
            // A dependency cycle cannot come out of the graph; stop rather than spin.
            break;
        }
        let mut targets = Vec::new();
        for d in ready {
            let parent = d
                .lifecycle
                .deleted_with
                .as_ref()
                .and_then(|parent| looked.get(parent).map(|l| (parent, l)));
            match parent {
                Some((_, Looked::Missing)) => {
                    looked.insert(d.addr.clone(), Looked::Missing);
                    continue;
                }
                Some((parent, Looked::Failed(_) | Looked::Unreadable(_))) => {
                    looked.insert(d.addr.clone(), Looked::Unreadable(parent.clone()));
                    continue;
                }
                _ => {}
            }
            let behind_disabled_api = lenient
                && d.dependencies.iter().any(|dep| {
                    dep.kind == crate::resource::Kind::Service
                        && matches!(looked.get(dep), Some(Looked::Missing))
                });
            if behind_disabled_api {
                looked.insert(d.addr.clone(), Looked::Missing);
                continue;
            }
            targets.push(Target {
                addr: d.addr.clone(),
                id: d.id.clone(),
                spec: d.spec.clone(),
                outputs: Value::Null,
                context: d
                    .dependencies
                    .iter()
                    .filter_map(|dep| outputs.get(dep).map(|o| (dep.clone(), o.clone())))
                    .collect(),
                lifecycle: d.lifecycle.clone(),
            });
        }
        let mut failed = false;
        for (target, result) in read_all(provider, targets, concurrency).await {
            let result = match result {
                Ok(Some(observed))
                    if lenient
                        && target.addr.kind == crate::resource::Kind::Service
                        && !matches!(provider.settle(&target, &observed), Settle::Ready) =>
                {
                    Looked::Missing
                }
                Ok(Some(observed)) => {
                    outputs.insert(target.addr.clone(), observed.outputs.clone());
                    Looked::Found(observed)
                }
                Ok(None) => Looked::Missing,
                Err(e) => {
                    failed = true;
                    Looked::Failed(e)
                }
            };
            looked.insert(target.addr, result);
        }
        if !lenient && failed {
            break;
        }
        remaining = later;
    }
    looked
}

/// Looks for the resources a plan creates that `state` does not record (nor has an operation
/// pending for), the addresses `creates`, under their blueprint identity, as `--adopt` does
/// ([`discover`]); and sorts what exists by ownership, in `desired`'s order:
///
/// - adoptable: the live resource carries this blueprint's mark (the check a create's 409 makes,
///   [`Provider::owned`]); a resource whose kind carries no mark (a Kubernetes object, an IAM
///   member) is adoptable when what it lives in is (or is recorded in state), or, living in
///   nothing, when it depends on nothing found foreign and something marked was found;
/// - foreign: under the name, but with another blueprint's mark, no mark, or inside a foreign
///   container. A create fails on it.
///
/// A read that fails is reported as unchecked, never as absent. Nothing is written anywhere.
pub async fn existing(
    provider: &dyn Provider,
    desired: &[Desired],
    creates: &BTreeSet<Addr>,
    state: &State,
    concurrency: usize,
) -> Existing {
    let wanted: Vec<&Desired> = desired
        .iter()
        .filter(|d| {
            creates.contains(&d.addr)
                && !state.resources.contains_key(&d.addr)
                && state.pending_for(&d.addr).is_none()
        })
        .collect();
    let looked = look(provider, &wanted, state, concurrency, true).await;
    #[derive(Clone, Copy, PartialEq)]
    enum Whose {
        Ours,
        Foreign,
    }
    let mut whose: BTreeMap<&Addr, Whose> = BTreeMap::new();
    let mut existing = Existing::default();
    let target = |d: &Desired| Target {
        addr: d.addr.clone(),
        id: d.id.clone(),
        spec: d.spec.clone(),
        outputs: Value::Null,
        context: BTreeMap::new(),
        lifecycle: d.lifecycle.clone(),
    };
    // The marked kinds first: they decide what the unmarked ones go with.
    let (marked, unmarked): (Vec<&Desired>, Vec<&Desired>) = wanted
        .iter()
        .partition(|d| crate::cloud::mark_of(&d.spec).is_some());
    for d in &marked {
        if let Some(Looked::Found(observed)) = looked.get(&d.addr) {
            let ours = provider.owned(&target(d), observed);
            whose.insert(&d.addr, if ours { Whose::Ours } else { Whose::Foreign });
        }
    }
    let any_ours = whose.values().any(|w| *w == Whose::Ours);
    // `desired` is in dependency order: a container is decided before what lives in it.
    for d in &unmarked {
        let Some(Looked::Found(observed)) = looked.get(&d.addr) else {
            continue;
        };
        let container = d.lifecycle.deleted_with.as_ref().map(|c| {
            if state.resources.contains_key(c) {
                Some(Whose::Ours)
            } else {
                whose.get(c).copied()
            }
        });
        let decided = match container {
            Some(Some(w)) => Some(w),
            // Its container is not found (nor recorded): nothing to go with.
            Some(None) => None,
            None => {
                let foreign_dep = d
                    .dependencies
                    .iter()
                    .any(|dep| whose.get(dep) == Some(&Whose::Foreign));
                match (
                    foreign_dep,
                    any_ours && provider.owned(&target(d), observed),
                ) {
                    (true, _) => Some(Whose::Foreign),
                    (false, true) => Some(Whose::Ours),
                    (false, false) => None,
                }
            }
        };
        if let Some(w) = decided {
            whose.insert(&d.addr, w);
        }
    }
    for d in &wanted {
        match looked.get(&d.addr) {
            Some(Looked::Found(observed)) => {
                let found = Found {
                    addr: d.addr.clone(),
                    id: d.id.clone(),
                    owner: crate::cloud::mark_of(&observed.spec).map(str::to_string),
                };
                match whose.get(&d.addr) {
                    Some(Whose::Ours) => existing.adoptable.push(found),
                    Some(Whose::Foreign) => existing.foreign.push(found),
                    None => {}
                }
            }
            Some(Looked::Failed(e)) => existing.unchecked.push(Unchecked {
                addr: d.addr.clone(),
                id: d.id.clone(),
                error: if e.code().is_empty() {
                    e.message.clone()
                } else {
                    format!("{}: {}", e.code(), e.message)
                },
            }),
            Some(Looked::Unreadable(parent)) => existing.unchecked.push(Unchecked {
                addr: d.addr.clone(),
                id: d.id.clone(),
                error: format!("`{parent}`, which it lives in, could not be read"),
            }),
            // Not found; or not reached (a dependency cycle, which the graph cannot have).
            Some(Looked::Missing) | None => {}
        }
    }
    existing
}

/// Reads `targets`, at most `concurrency` at a time.
async fn read_all(
    provider: &dyn Provider,
    targets: Vec<Target>,
    concurrency: usize,
) -> Vec<(Target, CloudResult<Option<Observed>>)> {
    stream::iter(targets)
        .map(|target| async move {
            let result = read(provider, &target).await;
            (target, result)
        })
        .buffer_unordered(concurrency.max(1))
        .collect()
        .await
}

/// Reads one resource, retrying transient errors ([`crate::cloud::retry`], the provider's policy).
pub async fn read(provider: &dyn Provider, target: &Target) -> CloudResult<Option<Observed>> {
    let jitter = Jitter::new(target.addr.to_string().len() as u64);
    let addr = &target.addr;
    let read = retry(
        &provider.retry_policy(),
        &jitter,
        |e, attempt, delay| {
            tracing::warn!(
                addr = %addr,
                attempt,
                delay_ms = delay.as_millis() as u64,
                status = %e.status,
                "read failed, retrying: {}",
                e.message
            )
        },
        || provider.read(target),
    )
    .await;
    match &read {
        Ok(found) => tracing::debug!(addr = %addr, exists = found.is_some(), "read"),
        Err(e) => tracing::debug!(addr = %addr, status = %e.status, "read failed: {}", e.message),
    }
    read
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cloud::fake::FakeProvider;
    use crate::cloud::{ErrorClass, OpStatus, Started, UpdateStep};
    use crate::resource::{FieldDiff, Kind, Lifecycle, OperationRef, mark};
    use serde_json::json;

    /// The fake cloud, whose reads of `failing` are refused.
    struct Refusing {
        inner: FakeProvider,
        failing: Vec<Addr>,
    }

    #[async_trait::async_trait]
    impl Provider for Refusing {
        async fn read(&self, target: &Target) -> CloudResult<Option<Observed>> {
            if self.failing.contains(&target.addr) {
                let mut e = CloudError::new(ErrorClass::Permission, "caller lacks permission");
                e.http_status = Some(403);
                e.status = "PERMISSION_DENIED".into();
                return Err(e);
            }
            self.inner.read(target).await
        }
        async fn create(&self, target: &Target) -> CloudResult<Started> {
            self.inner.create(target).await
        }
        fn update_steps(&self, target: &Target, diffs: &[FieldDiff]) -> Vec<UpdateStep> {
            self.inner.update_steps(target, diffs)
        }
        async fn update(&self, target: &Target, step: &UpdateStep) -> CloudResult<Started> {
            self.inner.update(target, step).await
        }
        async fn delete(&self, target: &Target) -> CloudResult<Started> {
            self.inner.delete(target).await
        }
        async fn poll(&self, operation: &OperationRef) -> CloudResult<OpStatus> {
            self.inner.poll(operation).await
        }
        fn settle(&self, target: &Target, observed: &Observed) -> Settle {
            self.inner.settle(target, observed)
        }
        /// As Google's adapters: the mark decides, and a kind without one (an IAM member, a
        /// Kubernetes object) is always taken over.
        fn owned(&self, target: &Target, observed: &Observed) -> bool {
            crate::cloud::mark_of(&target.spec).is_none() || crate::cloud::owned(target, observed)
        }
    }

    fn desired(kind: Kind, name: &str, spec: Value, inside: Option<Addr>) -> Desired {
        Desired {
            addr: Addr::new(kind, name),
            id: format!("id/{name}"),
            spec,
            dependencies: inside.iter().cloned().collect(),
            lifecycle: Lifecycle {
                deleted_with: inside,
                ..Lifecycle::default()
            },
        }
    }

    #[tokio::test]
    async fn planned_creates_are_sorted_by_their_live_mark_and_failed_reads_are_unchecked() {
        let cluster = Addr::new(Kind::Cluster, "main");
        let other_cluster = Addr::new(Kind::Cluster, "other");
        let ours = json!({"labels": {"a3ctl-blueprint": "bp"}});
        let blueprint = vec![
            desired(
                Kind::Network,
                "ours",
                json!({"description": mark("bp")}),
                None,
            ),
            desired(
                Kind::Network,
                "bare",
                json!({"description": mark("bp")}),
                None,
            ),
            desired(Kind::Bucket, "theirs", ours.clone(), None),
            desired(Kind::Bucket, "absent", ours.clone(), None),
            desired(Kind::Bucket, "recorded", ours.clone(), None),
            desired(Kind::IamMember, "member", json!({}), None),
            desired(Kind::Cluster, "main", ours.clone(), None),
            desired(Kind::NodePool, "pool", ours.clone(), Some(cluster.clone())),
            desired(Kind::Cluster, "other", ours.clone(), None),
            desired(
                Kind::Kubernetes,
                "inside-other",
                json!({}),
                Some(other_cluster),
            ),
        ];
        let fake = FakeProvider::new(0);
        let put =
            |name: &str, kind: Kind, spec: Value| fake.insert_live(&Addr::new(kind, name), spec);
        put("ours", Kind::Network, json!({"description": mark("bp")}));
        put("bare", Kind::Network, json!({"description": ""}));
        put(
            "theirs",
            Kind::Bucket,
            json!({"labels": {"a3ctl-blueprint": "else"}}),
        );
        put("recorded", Kind::Bucket, ours.clone());
        put("member", Kind::IamMember, json!({}));
        put("pool", Kind::NodePool, ours.clone());
        put("other", Kind::Cluster, json!({"labels": {}}));
        put("inside-other", Kind::Kubernetes, json!({}));
        let provider = Refusing {
            inner: fake,
            failing: vec![cluster.clone()],
        };
        let mut state = State::new("bp", "l".into());
        let recorded = Addr::new(Kind::Bucket, "recorded");
        state.resources.insert(
            recorded.clone(),
            crate::state::Record {
                kind: Kind::Bucket,
                id: "id/recorded".into(),
                spec: ours.clone(),
                outputs: json!({}),
                dependencies: vec![],
                tainted: false,
                lifecycle: Lifecycle::default(),
                updated_at: String::new(),
            },
        );
        let creates: BTreeSet<Addr> = blueprint.iter().map(|d| d.addr.clone()).collect();
        let found = existing(&provider, &blueprint, &creates, &state, 4).await;
        let addrs = |list: &[Found]| list.iter().map(|f| f.addr.to_string()).collect::<Vec<_>>();
        assert_eq!(
            addrs(&found.adoptable),
            ["network.ours", "iam_member.member"]
        );
        assert_eq!(
            addrs(&found.foreign),
            [
                "network.bare",
                "bucket.theirs",
                "cluster.other",
                "k8s.inside-other"
            ]
        );
        assert_eq!(found.foreign[0].owner, None);
        assert_eq!(found.foreign[1].owner.as_deref(), Some("else"));
        let unchecked: Vec<(String, String)> = found
            .unchecked
            .iter()
            .map(|u| (u.addr.to_string(), u.error.clone()))
            .collect();
        assert_eq!(
            unchecked,
            [
                (
                    "cluster.main".to_string(),
                    "403 PERMISSION_DENIED: caller lacks permission".to_string()
                ),
                (
                    "node_pool.pool".to_string(),
                    "`cluster.main`, which it lives in, could not be read".to_string()
                ),
            ]
        );
        // Only what the plan creates is looked for.
        let only: BTreeSet<Addr> = [Addr::new(Kind::Network, "bare")].into();
        let found = existing(&provider, &blueprint, &only, &state, 4).await;
        assert_eq!(addrs(&found.foreign), ["network.bare"]);
        assert!(found.adoptable.is_empty() && found.unchecked.is_empty());
    }

    #[tokio::test]
    async fn without_anything_marked_an_unmarked_resource_is_not_proposed() {
        let fake = FakeProvider::new(0);
        fake.insert_live(&Addr::new(Kind::IamMember, "member"), json!({}));
        let blueprint = vec![desired(Kind::IamMember, "member", json!({}), None)];
        let creates: BTreeSet<Addr> = blueprint.iter().map(|d| d.addr.clone()).collect();
        let found = existing(
            &fake,
            &blueprint,
            &creates,
            &State::new("bp", "l".into()),
            4,
        )
        .await;
        assert!(found.is_empty(), "{found:?}");
    }
}
