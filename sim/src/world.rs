//! The simulated world: every resource of every API, in one serialisable value.
//!
//! Handlers reach it through [`crate::server::Shared::with_world`], which takes the lock, brings the
//! world up to the current simulated time with [`World::tick`], and hands over a [`Ctx`] for
//! drawing durations and consulting scripted faults. Modules own their own state structs; the world
//! only holds them side by side and ticks them in dependency order (Compute before GKE before
//! Kubernetes), so a GKE cluster that becomes RUNNING during a tick has its Kubernetes objects
//! updated in the same tick. Compute and GKE operations finish in one time order, since both
//! take from the zones' capacity ([`crate::capacity`]).

use crate::clock::SimTime;
use crate::faults::{self, FaultAction, NamedFault};
use crate::server::Shared;
use crate::{artifactregistry, compute, container, filestore, iam, kube, serviceusage, storage};
use chrono::{DateTime, Duration as ChronoDuration, SecondsFormat, Utc};
use rand::{Rng, SeedableRng, rngs::StdRng};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// What a handler or a tick needs besides the world itself.
pub struct Ctx<'a> {
    pub now: SimTime,
    pub shared: &'a Shared,
}

impl Ctx<'_> {
    /// Counts one mutation of `kind` and returns its scripted fault, if one is configured.
    ///
    /// The drop actions never reach the modules: `drop_after` lets the mutation happen (None) and
    /// `drop_before` refuses it with an error; both mark the request so that its front door
    /// closes the connection instead of answering.
    pub fn scripted_fault(&self, kind: &str, verb: &str) -> Option<FaultAction> {
        let action = self.shared.faults.lock().scripted(kind, verb);
        match action {
            Some(FaultAction::Named(NamedFault::DropAfter)) => {
                faults::request_drop(NamedFault::DropAfter);
                None
            }
            Some(FaultAction::Named(NamedFault::DropBefore)) => {
                faults::request_drop(NamedFault::DropBefore);
                Some(FaultAction::Http {
                    status: 503,
                    reason: "backendError".into(),
                    message: "dropped by a scripted fault".into(),
                })
            }
            other => other,
        }
    }
}

fn fresh_rng() -> StdRng {
    StdRng::seed_from_u64(0)
}

#[derive(Serialize, Deserialize)]
pub struct World {
    /// Wall-clock instant that simulated time 0 stands for.
    pub epoch: DateTime<Utc>,
    /// Simulated time when the world was last saved; a reloaded clock resumes from here.
    pub saved_at: SimTime,
    /// Monotonic counter behind generated ids.
    pub seq: u64,
    pub seed: u64,
    pub compute: compute::State,
    pub container: container::State,
    pub file: filestore::State,
    pub artifactregistry: artifactregistry::State,
    pub storage: storage::State,
    pub kube: kube::State,
    /// Which services each project has enabled; absent from worlds saved before it existed.
    #[serde(default)]
    pub serviceusage: serviceusage::State,
    /// Service accounts; absent from worlds saved before it existed.
    #[serde(default)]
    pub iam: iam::State,
    #[serde(skip, default = "fresh_rng")]
    pub rng: StdRng,
    /// Project numbers the configuration sets (`[[projects]]` of the world file), by project id.
    /// Not saved: the configuration gives them at every start ([`World::project_number`]).
    #[serde(skip)]
    pub project_numbers: BTreeMap<String, String>,
}

impl World {
    pub fn new(seed: u64, epoch: DateTime<Utc>) -> World {
        World {
            epoch,
            saved_at: SimTime(0),
            seq: 0,
            seed,
            compute: Default::default(),
            container: Default::default(),
            file: Default::default(),
            artifactregistry: Default::default(),
            storage: Default::default(),
            kube: Default::default(),
            serviceusage: Default::default(),
            iam: Default::default(),
            rng: StdRng::seed_from_u64(seed),
            project_numbers: BTreeMap::new(),
        }
    }

    /// The number of project `id`: the configured one, else the simulator's stable number for the
    /// id ([`crate::storage::buckets::project_number`]); a key of digits is a number already. Every
    /// answer that names a project by number uses it.
    pub fn project_number(&self, id: &str) -> String {
        if !id.is_empty() && id.bytes().all(|b| b.is_ascii_digit()) {
            return id.to_string();
        }
        match self.project_numbers.get(id) {
            Some(number) => number.clone(),
            None => crate::storage::buckets::project_number(id),
        }
    }

    /// The project whose configured number is `number`, if any.
    pub fn configured_project(&self, number: &str) -> Option<&str> {
        self.project_numbers
            .iter()
            .find(|(_, n)| *n == number)
            .map(|(id, _)| id.as_str())
    }

    /// Re-seeds the generator after loading from disk, so ids keep being deterministic.
    pub fn reseed(&mut self) {
        self.rng = StdRng::seed_from_u64(self.seed ^ self.seq.wrapping_mul(0x9e37_79b9_7f4a_7c15));
    }

    /// The next value of the world's counter (starts at 1).
    pub fn next_seq(&mut self) -> u64 {
        self.seq += 1;
        self.seq
    }

    /// `n` random lowercase hex digits.
    pub fn hex(&mut self, n: usize) -> String {
        (0..n)
            .map(|_| char::from_digit(self.rng.random_range(0..16), 16).unwrap_or('0'))
            .collect()
    }

    /// A random unsigned 64-bit id as a decimal string (Compute `id` fields are int64 strings).
    pub fn numeric_id(&mut self) -> String {
        (self.rng.random::<u64>() >> 1).to_string()
    }

    /// The wall-clock instant for a simulated time.
    pub fn instant(&self, t: SimTime) -> DateTime<Utc> {
        self.epoch + ChronoDuration::milliseconds(t.0 as i64)
    }

    /// RFC 3339 with milliseconds and `Z`, as GKE, Filestore and AR print times.
    pub fn rfc3339(&self, t: SimTime) -> String {
        self.instant(t).to_rfc3339_opts(SecondsFormat::Millis, true)
    }

    /// Compute's `creationTimestamp` style (`2026-11-21T07:57:38.123-08:00`, Pacific offset).
    pub fn compute_timestamp(&self, t: SimTime) -> String {
        let pacific = chrono::FixedOffset::west_opt(8 * 3600).expect("8 hours is a valid offset");
        self.instant(t)
            .with_timezone(&pacific)
            .to_rfc3339_opts(SecondsFormat::Millis, false)
    }

    /// Draws the simulated duration of an operation in milliseconds: the latency profile's value
    /// for `key` plus any extra latency injected for it.
    pub fn duration_ms(&mut self, cx: &Ctx, key: &str) -> u64 {
        let base = cx.shared.latency.sample_ms(key, &mut self.rng);
        base + cx.shared.faults.lock().extra_latency_ms(key)
    }

    /// Brings every module up to `cx.now`: finishes due operations and moves statuses along.
    /// Returns true if anything changed.
    pub fn tick(&mut self, cx: &Ctx) -> bool {
        let mut changed = false;
        changed |= serviceusage::tick(self, cx);
        // Compute and GKE share the zones' capacity (a reservation deleted frees VMs a node pool
        // waits for), so their operations finish in one time order.
        while let Some(at) = [
            compute::next_due(self, cx.now),
            container::next_due(self, cx.now),
        ]
        .into_iter()
        .flatten()
        .min()
        {
            changed |= compute::tick_until(self, cx, at);
            changed |= container::tick_until(self, cx, at);
        }
        compute::ticked(self, cx.now);
        container::ticked(self, cx.now);
        changed |= filestore::tick(self, cx);
        changed |= artifactregistry::tick(self, cx);
        changed |= kube::tick(self, cx);
        changed
    }

    /// The whole inventory, for the admin endpoint and tests.
    pub fn inventory(&self) -> serde_json::Value {
        serde_json::json!({
            "compute": compute::inventory(self),
            "container": container::inventory(self),
            "file": filestore::inventory(self),
            "artifactregistry": artifactregistry::inventory(self),
            "storage": storage::inventory(self),
            "kube": kube::inventory(self),
            "serviceusage": serviceusage::inventory(self),
            "iam": iam::inventory(self),
        })
    }
}
