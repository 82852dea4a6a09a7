//! The GCS state backend: the state as one object in a Cloud Storage bucket, and its lock as
//! another object next to it, through an [`ObjectStore`] (Cloud Storage's JSON API, implemented by
//! the storage client of `crate::cloud::gcp::storage`, which the bucket adapter shares).
//!
//! Writes never lose an update. The store remembers the generation of the state object it last
//! read or wrote, and every upload carries `ifGenerationMatch=<that generation>` (`0` when there
//! was no state: the object must not exist yet). If anyone wrote the object in between, Cloud
//! Storage answers 412 and the save fails with [`StoreError::Conflict`], naming the serial the
//! other writer left; nothing is overwritten. Clones of a [`GcsStore`] share that generation, so
//! the apply's state writer continues from the copy the command loaded.
//!
//! The lock is the object `<state>.lock`, created with `ifGenerationMatch=0` (so exactly one of
//! any number of racing creators succeeds) and holding [`LockInfo`] as JSON. A held lock is
//! released by deleting exactly its generation (`generation=G&ifGenerationMatch=G`), so releasing
//! never removes a lock someone else took after a force-unlock. Unlike the local lock, a remote
//! lock is never taken over automatically, even when its holder was a process of this host that
//! no longer runs: hosts can share a name, and the refusal says so and names the force-unlock
//! command instead.
//!
//! Every request that fails transiently (429 — Cloud Storage allows about one write per second to
//! an object — 5xx, a dropped connection) is retried with backoff. A retried upload that then meets
//! 412 reads the object back: if it holds exactly the bytes being written, the earlier attempt
//! succeeded and only its answer was lost.
//!
//! Previous copies of the state survive as noncurrent object versions when the bucket has
//! versioning on (as `a3ctl state create-bucket` makes it).
//!
//! The methods are synchronous, like the local store's: each runs its request on the command's
//! multi-threaded runtime through `block_in_place`, or on a private runtime when called outside one.

use super::State;
use super::lock::{LockError, LockInfo};
use super::objects::{ObjectError, ObjectErrorKind, ObjectResult, ObjectStore};
use super::store::{StoreError, parse};
use parking_lot::Mutex;
use serde_json::{Value, json};
use std::future::Future;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

/// Where in a bucket a blueprint's state lives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GcsLocation {
    pub bucket: String,
    /// `<prefix>/<blueprint>.a3state.json`.
    pub object: String,
}

impl GcsLocation {
    pub fn new(bucket: &str, prefix: &str, blueprint: &str) -> GcsLocation {
        let prefix = prefix.trim_matches('/');
        let file = format!("{blueprint}.a3state.json");
        GcsLocation {
            bucket: bucket.to_string(),
            object: if prefix.is_empty() {
                file
            } else {
                format!("{prefix}/{file}")
            },
        }
    }

    /// The lock object's name.
    pub fn lock_object(&self) -> String {
        format!("{}.lock", self.object)
    }

    /// The prefix the object is under (`""` for none).
    pub fn prefix(&self) -> &str {
        self.object
            .rsplit_once('/')
            .map_or("", |(prefix, _)| prefix)
    }

    /// `gs://bucket/object`.
    pub fn url(&self) -> String {
        format!("gs://{}/{}", self.bucket, self.object)
    }
}

/// A state kept in Cloud Storage.
#[derive(Clone)]
pub struct GcsStore {
    client: Arc<dyn ObjectStore>,
    location: GcsLocation,
    kms_key: Option<String>,
    /// The command that creates the bucket, for the hint when it does not exist.
    create_command: String,
    /// Generation of the state object as last read or written; `Some(0)` when there was none,
    /// `None` before the first read (a save then only creates).
    generation: Arc<Mutex<Option<i64>>>,
    /// First delay before retrying a transient failure.
    retry: Duration,
}

/// A held GCS lock, released (its generation deleted) on drop.
pub struct GcsLock {
    client: Arc<dyn ObjectStore>,
    bucket: String,
    object: String,
    id: String,
    generation: i64,
    retry: Duration,
}

impl GcsStore {
    pub fn new(
        client: Arc<dyn ObjectStore>,
        location: GcsLocation,
        kms_key: Option<String>,
        create_command: String,
    ) -> GcsStore {
        GcsStore {
            client,
            location,
            kms_key,
            create_command,
            generation: Arc::new(Mutex::new(None)),
            retry: Duration::from_secs(1),
        }
    }

    /// Sets the first delay before retrying a transient failure (default 1 s).
    pub fn with_retry_delay(mut self, delay: Duration) -> GcsStore {
        self.retry = delay.max(Duration::from_millis(1));
        self
    }

    pub fn location(&self) -> &GcsLocation {
        &self.location
    }

    /// Reads the state; `Ok(None)` when there is none yet. A missing bucket is an error.
    pub fn load(&self) -> Result<Option<State>, StoreError> {
        let url = self.location.url();
        match block(self.fetch(&self.location.object)).map_err(|e| self.remote("read", e))? {
            Some((bytes, generation)) => {
                let state = parse(&bytes, Path::new(&url))?;
                *self.generation.lock() = Some(generation);
                Ok(Some(state))
            }
            None => {
                self.check_bucket()?;
                *self.generation.lock() = Some(0);
                Ok(None)
            }
        }
    }

    /// Writes the state, only over the generation last read or written.
    pub fn save(&self, state: &State) -> Result<(), StoreError> {
        let mut bytes = serde_json::to_vec_pretty(state).map_err(|e| StoreError::Remote {
            action: "encode",
            location: self.location.url(),
            message: e.to_string(),
            hint: None,
        })?;
        bytes.push(b'\n');
        let expected = self.generation.lock().unwrap_or(0);
        match block(self.upload(&self.location.object, bytes, expected)) {
            Ok(generation) => {
                *self.generation.lock() = Some(generation);
                Ok(())
            }
            Err(e) if e.kind == ObjectErrorKind::PreconditionFailed => Err(StoreError::Conflict {
                location: self.location.url(),
                found: self.describe_current(),
            }),
            Err(e) => Err(self.remote("write", e)),
        }
    }

    /// Takes the lock: creates the lock object only if none exists.
    pub fn lock(&self, info: LockInfo) -> Result<GcsLock, LockError> {
        let object = self.location.lock_object();
        let body = serde_json::to_vec_pretty(&info).map_err(|e| LockError::Corrupt {
            location: self.lock_url(),
            message: e.to_string(),
        })?;
        // A lock released between our refused create and our read of it: try again.
        for _ in 0..3 {
            match block(self.upload(&object, body.clone(), 0)) {
                Ok(generation) => {
                    return Ok(GcsLock {
                        client: self.client.clone(),
                        bucket: self.location.bucket.clone(),
                        object,
                        id: info.id,
                        generation,
                        retry: self.retry,
                    });
                }
                Err(e) if e.kind == ObjectErrorKind::PreconditionFailed => {
                    if let Some((held, _)) = self.read_lock()? {
                        let dead_here = held.is_stale_here();
                        return Err(LockError::Held {
                            location: self.location.url(),
                            info: Box::new(held),
                            dead_here,
                        });
                    }
                }
                Err(e) => return Err(self.remote("lock", e).into()),
            }
        }
        Err(StoreError::Remote {
            action: "lock",
            location: self.location.url(),
            message: "the lock object kept appearing and disappearing".into(),
            hint: Some("another a3ctl is locking and unlocking this state; try again".into()),
        }
        .into())
    }

    /// Who holds the lock, if anyone.
    pub fn lock_holder(&self) -> Result<Option<LockInfo>, LockError> {
        Ok(self.read_lock()?.map(|(info, _)| info))
    }

    /// Removes the lock with id `id`, whoever holds it: exactly the generation that was read.
    pub fn force_unlock(&self, id: &str) -> Result<LockInfo, LockError> {
        let Some((held, generation)) = self.read_lock()? else {
            return Err(LockError::NotLocked {
                location: self.location.url(),
            });
        };
        if held.id != id {
            return Err(LockError::WrongId {
                location: self.location.url(),
                held: held.id,
                given: id.to_string(),
            });
        }
        match block(delete_generation(
            self.client.as_ref(),
            &self.location.bucket,
            &self.location.lock_object(),
            generation,
            self.retry,
        )) {
            Ok(()) => Ok(held),
            Err(e)
                if matches!(
                    e.kind,
                    ObjectErrorKind::NotFound | ObjectErrorKind::PreconditionFailed
                ) =>
            {
                Err(LockError::NotLocked {
                    location: self.location.url(),
                })
            }
            Err(e) => Err(self.remote("unlock", e).into()),
        }
    }

    fn lock_url(&self) -> String {
        format!(
            "gs://{}/{}",
            self.location.bucket,
            self.location.lock_object()
        )
    }

    fn read_lock(&self) -> Result<Option<(LockInfo, i64)>, LockError> {
        let Some((bytes, generation)) = block(self.fetch(&self.location.lock_object()))
            .map_err(|e| self.remote("read the lock of", e))?
        else {
            return Ok(None);
        };
        let info = serde_json::from_slice(&bytes).map_err(|e| LockError::Corrupt {
            location: self.lock_url(),
            message: e.to_string(),
        })?;
        Ok(Some((info, generation)))
    }

    /// What the state object holds now, for a conflict message.
    fn describe_current(&self) -> String {
        match block(self.fetch(&self.location.object)) {
            Ok(Some((bytes, generation))) => match parse(&bytes, Path::new("")) {
                Ok(state) => format!(
                    "serial {} (a3ctl {}, generation {generation})",
                    state.serial, state.a3ctl_version
                ),
                Err(_) => format!("generation {generation}, which is not a3ctl state"),
            },
            Ok(None) => "a deletion of it".into(),
            Err(e) => format!("a newer generation (unreadable: {})", e.message),
        }
    }

    fn check_bucket(&self) -> Result<(), StoreError> {
        let bucket = &self.location.bucket;
        match block(async {
            retrying(self.retry, || self.client.bucket_exists(bucket))
                .await
                .0
        }) {
            Ok(true) => Ok(()),
            Ok(false) => Err(self.bucket_missing()),
            Err(e) => Err(self.remote("read", e)),
        }
    }

    fn bucket_missing(&self) -> StoreError {
        StoreError::BucketMissing {
            bucket: self.location.bucket.clone(),
            create: self.create_command.clone(),
        }
    }

    fn remote(&self, action: &'static str, e: ObjectError) -> StoreError {
        // Cloud Storage answers 404 to an upload or a lock read only when the bucket is missing.
        if e.kind == ObjectErrorKind::NotFound {
            return self.bucket_missing();
        }
        StoreError::Remote {
            action,
            location: self.location.url(),
            message: e.message,
            hint: e.hint,
        }
    }

    /// An object's bytes and generation; `None` when it does not exist. Retried while transient.
    async fn fetch(&self, object: &str) -> ObjectResult<Option<(Vec<u8>, i64)>> {
        let bucket = &self.location.bucket;
        retrying(self.retry, || self.client.get(bucket, object))
            .await
            .0
    }

    /// Uploads `bytes` as `object` only if its live generation is `expected` (0: none); returns
    /// the new generation. Transient failures are retried; when a retry then finds the
    /// precondition failed, an earlier attempt may have been written with its answer lost (a
    /// dropped connection), so the object is read: holding exactly these bytes, it is ours.
    async fn upload(&self, object: &str, bytes: Vec<u8>, expected: i64) -> ObjectResult<i64> {
        let bucket = &self.location.bucket;
        let kms = self.kms_key.as_deref();
        let (result, retried) = retrying(self.retry, || {
            self.client
                .put(bucket, object, bytes.clone(), expected, kms)
        })
        .await;
        match result {
            Err(e) if retried && e.kind == ObjectErrorKind::PreconditionFailed => {
                match self.fetch(object).await? {
                    Some((current, generation)) if current == bytes => Ok(generation),
                    _ => Err(e),
                }
            }
            other => other,
        }
    }
}

/// What [`GcsStore::create_bucket`] found.
#[derive(Debug)]
pub enum BucketCreation {
    /// The bucket was created; its resource.
    Created(Value),
    /// It already exists in the project; its resource.
    Existed(Value),
    /// The name belongs to a bucket of another project (bucket names are global).
    Taken,
}

impl GcsStore {
    /// Creates the state's bucket in `project` at `location`: uniform bucket-level access, public
    /// access prevention, versioning (earlier states stay recoverable), `labels`, and the
    /// customer-managed key as the default key when one is configured. A bucket the project
    /// already has is left as it is.
    pub fn create_bucket(
        &self,
        project: &str,
        location: &str,
        labels: Value,
    ) -> ObjectResult<BucketCreation> {
        let bucket = self.location.bucket.as_str();
        let mut body = json!({
            "name": bucket,
            "location": location,
            "storageClass": "STANDARD",
            "iamConfiguration": {
                "uniformBucketLevelAccess": {"enabled": true},
                "publicAccessPrevention": "enforced",
            },
            "versioning": {"enabled": true},
            "labels": labels,
        });
        if let Some(key) = &self.kms_key {
            body["encryption"] = json!({ "defaultKmsKeyName": key });
        }
        let (client, retry) = (&self.client, self.retry);
        block(async move {
            let insert = || client.insert_bucket(project, body.clone());
            match retrying(retry, insert).await.0 {
                Ok(created) => Ok(BucketCreation::Created(created)),
                Err(e) if e.kind == ObjectErrorKind::Conflict => {
                    // Bucket names are global: the conflict may be ours or anyone's.
                    let listed = retrying(retry, || client.list_buckets(project, bucket))
                        .await
                        .0?;
                    Ok(listed
                        .into_iter()
                        .find(|b| b["name"] == bucket)
                        .map_or(BucketCreation::Taken, BucketCreation::Existed))
                }
                Err(e) => Err(e),
            }
        })
    }
}

impl GcsLock {
    pub fn id(&self) -> &str {
        &self.id
    }
}

impl Drop for GcsLock {
    fn drop(&mut self) {
        // A 404 or 412 means a force-unlock removed it already; there is nothing else to do.
        let _ = block(delete_generation(
            self.client.as_ref(),
            &self.bucket,
            &self.object,
            self.generation,
            self.retry,
        ));
    }
}

/// Deletes exactly one generation of an object, only if it is still that generation. Transient
/// failures are retried; once retried, "not found" means an earlier attempt deleted it.
async fn delete_generation(
    client: &dyn ObjectStore,
    bucket: &str,
    object: &str,
    generation: i64,
    retry: Duration,
) -> ObjectResult<()> {
    match retrying(retry, || client.delete(bucket, object, generation)).await {
        (Err(e), true) if e.kind == ObjectErrorKind::NotFound => Ok(()),
        (result, _) => result,
    }
}

/// How many times a request that fails transiently (429, 5xx, a dropped connection) is sent.
/// Cloud Storage allows about one write per second to one object name, and an apply saves state
/// after every step, so bursts of saves meet 429s that backing off absorbs.
const ATTEMPTS: u32 = 8;

/// Sends `call` until it succeeds, fails for good, or [`ATTEMPTS`] are used, doubling the delay
/// from `initial` (up to 32×). Also says whether it was retried.
async fn retrying<T, F, Fut>(initial: Duration, mut call: F) -> (ObjectResult<T>, bool)
where
    F: FnMut() -> Fut,
    Fut: Future<Output = ObjectResult<T>>,
{
    let mut delay = initial;
    let mut attempt = 1;
    loop {
        match call().await {
            Err(e) if e.kind == ObjectErrorKind::Transient && attempt < ATTEMPTS => {
                tokio::time::sleep(delay).await;
                delay = (delay * 2).min(initial * 32);
                attempt += 1;
            }
            result => return (result, attempt > 1),
        }
    }
}

/// Runs `future` to completion from synchronous code: on the current multi-threaded runtime
/// (the worker steps aside with `block_in_place`), or on a private runtime in a scoped thread
/// when there is no such runtime (unit tests, a current-thread runtime).
fn block<T: Send>(future: impl Future<Output = ObjectResult<T>> + Send) -> ObjectResult<T> {
    use tokio::runtime::{Handle, RuntimeFlavor};
    if let Ok(handle) = Handle::try_current()
        && handle.runtime_flavor() == RuntimeFlavor::MultiThread
    {
        return tokio::task::block_in_place(|| handle.block_on(future));
    }
    std::thread::scope(|scope| {
        scope
            .spawn(|| {
                tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .map_err(|e| {
                        ObjectError::new(
                            ObjectErrorKind::Other,
                            format!("cannot start a runtime for Cloud Storage: {e}"),
                        )
                    })?
                    .block_on(future)
            })
            .join()
            .unwrap_or_else(|_| {
                Err(ObjectError::new(
                    ObjectErrorKind::Other,
                    "a Cloud Storage request panicked",
                ))
            })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn objects_sit_under_the_prefix() {
        let at = GcsLocation::new("b", "/a3ctl/x/", "x");
        assert_eq!(at.object, "a3ctl/x/x.a3state.json");
        assert_eq!(at.lock_object(), "a3ctl/x/x.a3state.json.lock");
        assert_eq!(at.url(), "gs://b/a3ctl/x/x.a3state.json");
        assert_eq!(GcsLocation::new("b", "", "x").object, "x.a3state.json");
    }
}
