//! One interface over where state lives: [`StateStore`] is a local file ([`LocalStore`]) or an
//! object in Cloud Storage ([`GcsStore`]), and [`StateLock`] the matching lock. Commands only see
//! these two types; which backend a blueprint uses is resolved in `crate::commands::session`.

use super::State;
use super::gcs::{GcsLock, GcsStore};
use super::lock::{Acquired, LocalLock, LockError, LockInfo};
use super::store::{LocalStore, StoreError};
use std::fmt;

/// Where a blueprint's state is read from and written to.
#[derive(Clone)]
pub enum StateStore {
    Local(LocalStore),
    Gcs(GcsStore),
}

/// A held state lock; dropping it releases the lock.
pub enum StateLock {
    Local(LocalLock),
    Gcs(GcsLock),
}

impl StateStore {
    /// Reads the state; `Ok(None)` when there is none yet.
    pub fn load(&self) -> Result<Option<State>, StoreError> {
        match self {
            StateStore::Local(store) => store.load(),
            StateStore::Gcs(store) => store.load(),
        }
    }

    /// Writes the state: atomically with a `.backup` locally; on GCS only over the generation last
    /// read (a concurrent write makes this fail with [`StoreError::Conflict`]).
    pub fn save(&self, state: &State) -> Result<(), StoreError> {
        match self {
            StateStore::Local(store) => store.save(state),
            StateStore::Gcs(store) => store.save(state),
        }
    }

    /// Where the state is, for messages: a path, or `gs://bucket/object`.
    pub fn location(&self) -> String {
        match self {
            StateStore::Local(store) => store.path().display().to_string(),
            StateStore::Gcs(store) => store.location().url(),
        }
    }

    /// Where earlier copies of the state are kept, for recovery hints.
    pub fn earlier_copies(&self) -> String {
        match self {
            StateStore::Local(store) => {
                format!("the previous copy is `{}`", store.backup_path().display())
            }
            StateStore::Gcs(store) => format!(
                "earlier copies are noncurrent versions of the object: `gcloud storage ls -a {}`",
                store.location().url()
            ),
        }
    }

    /// Takes the state's lock for `operation` (e.g. `apply`, `state rm`), with a fresh id.
    pub fn lock(&self, operation: &str) -> Result<(StateLock, Acquired), LockError> {
        let info = LockInfo::current(uuid::Uuid::new_v4().to_string(), operation);
        match self {
            StateStore::Local(store) => LocalLock::acquire(store.path(), info)
                .map(|(lock, acquired)| (StateLock::Local(lock), acquired)),
            StateStore::Gcs(store) => store
                .lock(info)
                .map(|lock| (StateLock::Gcs(lock), Acquired::Fresh)),
        }
    }

    /// Who holds the lock, if anyone.
    pub fn lock_holder(&self) -> Result<Option<LockInfo>, LockError> {
        match self {
            StateStore::Local(store) => LocalLock::holder(store.path()),
            StateStore::Gcs(store) => store.lock_holder(),
        }
    }

    /// Removes the lock with id `id`, whoever holds it.
    pub fn force_unlock(&self, id: &str) -> Result<LockInfo, LockError> {
        match self {
            StateStore::Local(store) => LocalLock::force_unlock(store.path(), id),
            StateStore::Gcs(store) => store.force_unlock(id),
        }
    }
}

impl fmt::Display for StateStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.location())
    }
}

impl StateLock {
    pub fn id(&self) -> &str {
        match self {
            StateLock::Local(lock) => lock.id(),
            StateLock::Gcs(lock) => lock.id(),
        }
    }
}
