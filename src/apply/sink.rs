//! The one writer of state during an apply: every mutation bumps the serial and is saved before the
//! caller goes on, one at a time.

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
    inner: Mutex<State>,
    persist: Box<dyn Persist>,
}

impl StateSink {
    pub fn new(state: State, persist: Box<dyn Persist>) -> StateSink {
        StateSink {
            inner: Mutex::new(state),
            persist,
        }
    }

    /// Applies `f` to the state, bumps the serial and saves. If saving fails, the in-memory state
    /// keeps the change (the caller stops the apply) and the error is returned.
    pub async fn update<R>(&self, f: impl FnOnce(&mut State) -> R) -> Result<R, StoreError> {
        let mut state = self.inner.lock().await;
        let result = f(&mut state);
        state.serial += 1;
        state.a3ctl_version = env!("CARGO_PKG_VERSION").to_string();
        self.persist.save(&state)?;
        Ok(result)
    }

    /// A copy of the current state.
    pub async fn snapshot(&self) -> State {
        self.inner.lock().await.clone()
    }

    /// The state, once the apply is over.
    pub fn into_state(self) -> State {
        self.inner.into_inner()
    }
}

/// A persistence that keeps nothing, for tests and dry runs.
pub struct Discard;
impl Persist for Discard {
    fn save(&self, _state: &State) -> Result<(), StoreError> {
        Ok(())
    }
}
