//! Where state lives and how it is written: the local file backend.
//!
//! Every save is atomic: the new state goes to a temporary file in the same directory (created with
//! mode 0600), is fsynced, and is renamed over the old file; the old file is first hard-linked to
//! `<path>.backup`, so the previous copy always survives. A crash at any point leaves either the old
//! or the new state in place, never a torn one. Saves are serialised by the caller (one writer).
//!
//! A state written by a newer a3ctl (higher `version`) is refused rather than misread.
//!
//! A file whose state `a3ctl state migrate` copied to Cloud Storage gets a marker beside it,
//! `<path>.moved`, naming where it went; while the marker is there the file is refused
//! ([`StoreError::Moved`]), so a run that still reads the local file (the blueprint's `[state]`
//! not yet edited, `--state-bucket` forgotten) stops instead of working on a copy that no longer
//! follows the real state.

use super::{FORMAT_VERSION, State};
use std::io::Write;
use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The file exists but cannot be read: a directory, a FIFO, too large, permission denied...
    #[error("cannot read state file `{path}`: {}", source.reason())]
    Read {
        path: PathBuf,
        source: crate::files::ReadError,
    },
    #[error("state file `{path}` is not valid a3ctl state: {message}")]
    Parse { path: PathBuf, message: String },
    #[error(
        "state file `{path}` was written by a newer a3ctl (format {found}, this build reads up to {FORMAT_VERSION})"
    )]
    TooNew { path: PathBuf, found: u32 },
    #[error("the state in `{path}` was moved to `{to}` by `a3ctl state migrate`")]
    Moved {
        path: PathBuf,
        /// `gs://bucket/prefix/name.a3state.json`.
        to: String,
        /// The marker file.
        marker: PathBuf,
    },
    #[error("cannot write state file `{path}`: {source}")]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("state bucket `{bucket}` does not exist")]
    BucketMissing {
        bucket: String,
        /// The a3ctl command that creates it, for the hint.
        create: String,
    },
    #[error(
        "state `{location}` changed since it was read: another run wrote {found}; nothing was overwritten"
    )]
    Conflict { location: String, found: String },
    #[error("cannot {action} state `{location}`: {message}")]
    Remote {
        action: &'static str,
        location: String,
        message: String,
        hint: Option<String>,
    },
}

impl StoreError {
    /// What the user can do about it.
    pub fn hint(&self) -> Option<String> {
        match self {
            StoreError::Moved { to, marker, .. } => Some(format!(
                "point the blueprint's [state] at it (`backend = \"gcs\"`, `bucket` and `prefix` of {to}) or pass `--state-bucket`; to use the local file again on purpose, delete `{}`",
                marker.display()
            )),
            StoreError::Parse { path, .. } if path.starts_with("gs:") => Some(format!(
                "bucket versioning keeps earlier copies: list them with `gcloud storage ls -a {}`, and restore one with `a3ctl state push`",
                path.display()
            )),
            StoreError::Parse { path, .. } => Some(format!(
                "the previous copy is kept at `{}.backup`; inspect both files before replacing one with the other",
                path.display()
            )),
            StoreError::TooNew { .. } => Some("upgrade a3ctl to read this state".into()),
            StoreError::Write { .. } => {
                Some("check free space and permissions of the state directory".into())
            }
            StoreError::Read { source, .. } => Some(source.hint()),
            StoreError::BucketMissing { create, .. } => Some(format!(
                "create it with `{create}` (uniform bucket-level access and versioning on), or point `[state] bucket` or `--state-bucket` at an existing bucket"
            )),
            StoreError::Conflict { .. } => Some(
                "re-run the command: it starts again from the state as it is now. Two runs write one state only when one of them holds no lock; `a3ctl state pull` shows the current copy".into(),
            ),
            StoreError::Remote { hint, .. } => hint.clone(),
        }
    }
}

/// A state file on local disk.
#[derive(Debug, Clone)]
pub struct LocalStore {
    path: PathBuf,
}

impl LocalStore {
    pub fn new(path: impl Into<PathBuf>) -> LocalStore {
        LocalStore { path: path.into() }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn backup_path(&self) -> PathBuf {
        with_suffix(&self.path, ".backup")
    }

    /// The marker a migration leaves beside the file.
    pub fn moved_marker(&self) -> PathBuf {
        with_suffix(&self.path, ".moved")
    }

    /// Marks the file as moved to `to` (a `gs://` URL), atomically.
    pub fn mark_moved(&self, to: &str) -> Result<(), StoreError> {
        let marker = self.moved_marker();
        let err = |source| StoreError::Write {
            path: marker.clone(),
            source,
        };
        let tmp = with_suffix(&marker, &format!(".tmp-{}", std::process::id()));
        {
            let mut file = private_file(&tmp).map_err(err)?;
            file.write_all(format!("{to}\n").as_bytes()).map_err(err)?;
            file.sync_all().map_err(err)?;
        }
        std::fs::rename(&tmp, &marker).map_err(err)
    }

    /// Reads the state; `Ok(None)` when there is none yet (no file at the path), an error when a
    /// migration marked it moved.
    pub fn load(&self) -> Result<Option<State>, StoreError> {
        let marker = self.moved_marker();
        if let Ok(to) = std::fs::read_to_string(&marker) {
            return Err(StoreError::Moved {
                path: self.path.clone(),
                to: to.trim().to_string(),
                marker,
            });
        }
        self.read()
    }

    /// Reads the state whether or not it was marked moved; `Ok(None)` when there is no file.
    ///
    /// Only a regular file of at most [`crate::files::STATE`]'s cap (64 MiB) is read: a FIFO or
    /// device at the path is refused at once instead of blocking or filling memory.
    pub fn read(&self) -> Result<Option<State>, StoreError> {
        let text = match crate::files::read(&self.path, crate::files::STATE) {
            Ok(t) => t,
            Err(e) if e.is_not_found() => return Ok(None),
            Err(source) => {
                return Err(StoreError::Read {
                    path: self.path.clone(),
                    source,
                });
            }
        };
        parse(&text, &self.path).map(Some)
    }

    /// Writes the state atomically, keeping the previous copy as `<path>.backup`.
    pub fn save(&self, state: &State) -> Result<(), StoreError> {
        let err = |source| StoreError::Write {
            path: self.path.clone(),
            source,
        };
        let mut bytes =
            serde_json::to_vec_pretty(state).map_err(|e| err(std::io::Error::other(e)))?;
        bytes.push(b'\n');
        let dir = parent_dir(&self.path);
        std::fs::create_dir_all(dir).map_err(err)?;
        let tmp = with_suffix(&self.path, &format!(".tmp-{}", std::process::id()));
        {
            let mut file = private_file(&tmp).map_err(err)?;
            file.write_all(&bytes).map_err(err)?;
            file.sync_all().map_err(err)?;
        }
        if self.path.exists() {
            let backup_tmp =
                with_suffix(&self.path, &format!(".backup-tmp-{}", std::process::id()));
            let _ = std::fs::remove_file(&backup_tmp);
            std::fs::hard_link(&self.path, &backup_tmp).map_err(err)?;
            std::fs::rename(&backup_tmp, self.backup_path()).map_err(err)?;
        }
        std::fs::rename(&tmp, &self.path).map_err(err)?;
        if let Ok(d) = std::fs::File::open(dir) {
            let _ = d.sync_all();
        }
        Ok(())
    }
}

/// Parses state text, refusing formats from the future.
pub fn parse(text: &[u8], path: &Path) -> Result<State, StoreError> {
    #[derive(serde::Deserialize)]
    struct Version {
        version: u32,
    }
    let version: Version = serde_json::from_slice(text).map_err(|e| StoreError::Parse {
        path: path.to_path_buf(),
        message: e.to_string(),
    })?;
    if version.version > FORMAT_VERSION {
        return Err(StoreError::TooNew {
            path: path.to_path_buf(),
            found: version.version,
        });
    }
    let mut state: State = serde_json::from_slice(text).map_err(|e| StoreError::Parse {
        path: path.to_path_buf(),
        message: e.to_string(),
    })?;
    super::migrate::upgrade(&mut state, version.version);
    Ok(state)
}

pub(crate) fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut s = path.as_os_str().to_owned();
    s.push(suffix);
    PathBuf::from(s)
}

pub(crate) fn parent_dir(path: &Path) -> &Path {
    path.parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
}

/// Creates (truncating) a file readable only by its owner.
pub(crate) fn private_file(path: &Path) -> std::io::Result<std::fs::File> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    options.open(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn save_is_atomic_keeps_a_backup_and_is_private() {
        let dir = tempfile::tempdir().unwrap();
        let store = LocalStore::new(dir.path().join("s/a3mega.a3state.json"));
        assert_eq!(store.load().unwrap(), None);
        let mut state = State::new("a3mega", "l".into());
        store.save(&state).unwrap();
        state.serial = 1;
        store.save(&state).unwrap();
        assert_eq!(store.load().unwrap().unwrap().serial, 1);
        let backup = parse(&std::fs::read(store.backup_path()).unwrap(), store.path()).unwrap();
        assert_eq!(backup.serial, 0);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(store.path())
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        let leftovers: Vec<_> = std::fs::read_dir(store.path().parent().unwrap())
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .filter(|n| n.contains("tmp"))
            .collect();
        assert!(leftovers.is_empty(), "{leftovers:?}");
    }

    #[test]
    fn a_state_path_that_is_not_a_regular_file_is_refused_not_read() {
        let dir = tempfile::tempdir().unwrap();
        // A directory where the state file should be: an error, not "no state yet".
        let err = LocalStore::new(dir.path()).load().unwrap_err();
        assert!(
            err.to_string().ends_with("it is a directory, not a file"),
            "{err}"
        );
        assert!(err.hint().unwrap().contains(".a3state.json"));
        #[cfg(unix)]
        {
            let err = LocalStore::new("/dev/zero").load().unwrap_err();
            assert!(
                err.to_string()
                    .contains("it is a character device, not a regular file"),
                "{err}"
            );
        }
        // A file whose parent is a file is not "no state yet" either: a save there would fail
        // after the apply had changed the cloud.
        let file = dir.path().join("file");
        std::fs::write(&file, "x").unwrap();
        assert!(LocalStore::new(file.join("s.json")).load().is_err());
    }

    #[test]
    fn newer_format_and_garbage_are_refused_with_hints() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.json");
        std::fs::write(&path, r#"{"version": 99}"#).unwrap();
        let err = LocalStore::new(&path).load().unwrap_err();
        assert!(matches!(err, StoreError::TooNew { found: 99, .. }), "{err}");
        std::fs::write(&path, "{not json").unwrap();
        let err = LocalStore::new(&path).load().unwrap_err();
        assert!(matches!(err, StoreError::Parse { .. }));
        assert!(err.hint().unwrap().contains(".backup"));
    }
}
