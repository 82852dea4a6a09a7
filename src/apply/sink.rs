//! The one writer of state during an apply: every mutation is saved before the caller goes on.
//!
//! Saves are group commits: one save runs at a time, and it writes everything changed so far, so
//! callers whose change was mutated in while another save ran are covered by the next single save
//! instead of one save each. Each save bumps the serial. On a GCS state (about one write per
//! second per object) this keeps parallel steps from queueing behind each other's uploads.

use crate::state::State;
use crate::state::backend::StateStore;
use crate::state::store::{LocalStore, StoreError};
use tokio::sync::Mutex;

/// Where the sink saves state.
pub trait Persist: Send + Sync {
    fn save(&self, state: &State) -> Result<(), StoreError>;
}

impl Persist for LocalStore {
    fn save(&self, state: &State) -> Result<(), StoreError> {
        LocalStore::save(self, state)
    }
}

impl Persist for StateStore {
    fn save(&self, state: &State) -> Result<(), StoreError> {
        StateStore::save(self, state)
    }
}

/// Holds the state being applied and saves it after every change.
pub struct StateSink {
    inner: Mutex<Changes>,
    /// The last change saved; held while a save runs, so saves never overlap.
    saved: Mutex<u64>,
    persist: Box<dyn Persist>,
}

/// The state and how many changes it has had.
struct Changes {
    state: State,
    count: u64,
}

impl StateSink {
    pub fn new(state: State, persist: Box<dyn Persist>) -> StateSink {
        StateSink {
            inner: Mutex::new(Changes { state, count: 0 }),
            saved: Mutex::new(0),
            persist,
        }
    }

    /// Applies `f` to the state and returns once a save that includes the change succeeded. If
    /// saving fails, the in-memory state keeps the change (the caller stops the apply) and the
    /// error is returned; a later update saves it again.
    pub async fn update<R>(&self, f: impl FnOnce(&mut State) -> R) -> Result<R, StoreError> {
        let (result, mine) = {
            let mut changes = self.inner.lock().await;
            let result = f(&mut changes.state);
            changes.count += 1;
            (result, changes.count)
        };
        let mut saved = self.saved.lock().await;
        if *saved >= mine {
            // Another caller's save already wrote this change.
            return Ok(result);
        }
        let (snapshot, count) = {
            let mut changes = self.inner.lock().await;
            changes.state.touch();
            (changes.state.clone(), changes.count)
        };
        self.persist.save(&snapshot)?;
        *saved = count;
        Ok(result)
    }

    /// A copy of the current state.
    pub async fn snapshot(&self) -> State {
        self.inner.lock().await.state.clone()
    }

    /// The state, once the apply is over.
    pub fn into_state(self) -> State {
        self.inner.into_inner().state
    }
}

/// A persistence that keeps nothing, for tests and dry runs.
pub struct Discard;
impl Persist for Discard {
    fn save(&self, _state: &State) -> Result<(), StoreError> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// Counts saves and remembers the last one; each save takes a while, like an upload.
    struct Slow {
        saves: AtomicUsize,
        last: parking_lot::Mutex<Option<State>>,
    }

    impl Persist for Arc<Slow> {
        fn save(&self, state: &State) -> Result<(), StoreError> {
            std::thread::sleep(std::time::Duration::from_millis(20));
            self.saves.fetch_add(1, Ordering::SeqCst);
            *self.last.lock() = Some(state.clone());
            Ok(())
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn concurrent_changes_are_each_saved_before_their_caller_goes_on() {
        let slow = Arc::new(Slow {
            saves: AtomicUsize::new(0),
            last: parking_lot::Mutex::new(None),
        });
        let sink = Arc::new(StateSink::new(
            State::new("bp", "lineage".into()),
            Box::new(slow.clone()),
        ));
        let tasks: Vec<_> = (0..16)
            .map(|i| {
                let sink = sink.clone();
                let slow = slow.clone();
                tokio::spawn(async move {
                    sink.update(|s| s.blueprint.push_str(&format!(" {i}")))
                        .await
                        .unwrap();
                    // When update returns, a save that includes this change has happened.
                    let last = slow.last.lock().clone().unwrap();
                    assert!(last.blueprint.contains(&format!(" {i}")), "{i}");
                })
            })
            .collect();
        for t in tasks {
            t.await.unwrap();
        }
        let saves = slow.saves.load(Ordering::SeqCst);
        assert!((1..=16).contains(&saves), "{saves}");
        let last = slow.last.lock().clone().unwrap();
        assert_eq!(last.serial, saves as u64);
        assert_eq!(last.blueprint.matches(' ').count(), 16);
    }
}
