//! The simulated world: every resource of every API, in one serialisable value.
//!
//! Handlers reach it through [`crate::shared::Shared::with_world`], which takes the lock, brings
//! the world up to the current simulated time with [`World::tick`], and hands over a
//! [`crate::shared::Ctx`] for drawing durations and consulting scripted faults. Modules own their
//! own state structs; the world only holds them side by side. Ticking and the inventory go
//! through the list of APIs ([`crate::apis`], [`crate::shared::Tick`]): Compute before GKE before
//! Kubernetes, so a GKE cluster that becomes RUNNING during a tick has its Kubernetes objects
//! updated in the same tick; Compute and GKE operations finish in one time order, since both take
//! from the zones' capacity ([`crate::capacity`]).

use crate::clock::SimTime;
use crate::state::{
    artifactregistry, compute, container, filestore, iam, kube, serviceusage, storage,
};
use chrono::{DateTime, Duration as ChronoDuration, SecondsFormat, Utc};
use rand::{Rng, SeedableRng, rngs::StdRng};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// A stable 12-digit project number for a project id: the number of a project the configuration
/// gives none ([`World::project_number`] is the number in force).
pub fn project_number(project: &str) -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for b in project.bytes() {
        hash ^= u64::from(b);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    (100_000_000_000 + hash % 900_000_000_000).to_string()
}

/// The project number of a project key without a configured number: a key of digits is a number
/// already, an id gets the simulator's stable number for it ([`project_number`]).
pub fn number_of(project: &str) -> String {
    if !project.is_empty() && project.bytes().all(|b| b.is_ascii_digit()) {
        project.to_string()
    } else {
        project_number(project)
    }
}

impl serviceusage::State {
    /// The key of the project a path names: its id, or for a project number the id of a project
    /// Service Usage knows with that number (the number itself when none is known). Project ids
    /// cannot be all digits, so a number is never mistaken for an id.
    pub fn resolve(&self, segment: &str) -> String {
        if segment.is_empty() || !segment.bytes().all(|b| b.is_ascii_digit()) {
            return segment.to_string();
        }
        self.projects
            .keys()
            .chain(self.last_used.keys())
            .chain(self.operations.values().map(|o| &o.project))
            .find(|key| number_of(key) == segment)
            .cloned()
            .unwrap_or_else(|| segment.to_string())
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
    /// id ([`project_number`]); a key of digits is a number already. Every
    /// answer that names a project by number uses it.
    pub fn project_number(&self, id: &str) -> String {
        if !id.is_empty() && id.bytes().all(|b| b.is_ascii_digit()) {
            return id.to_string();
        }
        match self.project_numbers.get(id) {
            Some(number) => number.clone(),
            None => project_number(id),
        }
    }

    /// The key of the project a path names (`segment`: an id or a number): the project a
    /// configured number belongs to, else [`serviceusage::State::resolve`] — which never maps a
    /// number to a project whose configured number is another.
    pub fn resolve_project(&self, segment: &str) -> String {
        if let Some(id) = self.configured_project(segment) {
            return id.to_string();
        }
        let key = self.serviceusage.resolve(segment);
        if key != segment && self.project_number(&key) != segment {
            return segment.to_string();
        }
        key
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
}

/// The email of project `project`'s Compute Engine default service account.
pub fn compute_default_email(world: &World, project: &str) -> String {
    format!(
        "{}-compute@developer.gserviceaccount.com",
        world.project_number(project)
    )
}
