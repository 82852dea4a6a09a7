//! The state lock: one writer per state at a time.
//!
//! The local lock is a file `<state>.lock` created exclusively, holding who took it ([`LockInfo`]).
//! A second apply on the same state is refused with a message naming the holder. A lock left by a
//! process that no longer exists on this same host (killed apply) is stale: it is taken over with a
//! warning, so re-running after a crash just works. A lock held by another host, or by a live
//! process, is only removed by `a3ctl force-unlock ID`.
//!
//! The holder is `user@host`. The user is `$USER`, else `$LOGNAME`, else `$USERNAME`, else the
//! name of the effective uid in `/etc/passwd`, else `uid N` ([`current_user`]): a process started
//! without a login environment (cron, `env -i`, a container) still names who runs it.

use super::store::{parent_dir, private_file, with_suffix};
use serde::{Deserialize, Serialize};
use std::io::Write;
use std::path::{Path, PathBuf};

/// Who holds a lock.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LockInfo {
    pub id: String,
    /// `user@host`.
    pub holder: String,
    pub host: String,
    pub pid: u32,
    /// RFC 3339.
    pub created: String,
    /// The command that took it, e.g. `apply`.
    pub operation: String,
    pub a3ctl_version: String,
}

impl LockInfo {
    /// Lock information for this process.
    pub fn current(id: String, operation: &str) -> LockInfo {
        let host = hostname();
        let user = current_user();
        LockInfo {
            id,
            holder: format!("{user}@{host}"),
            host,
            pid: std::process::id(),
            created: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
            operation: operation.to_string(),
            a3ctl_version: env!("CARGO_PKG_VERSION").to_string(),
        }
    }

    /// True when the holder is a process of this host that no longer runs.
    pub fn is_stale_here(&self) -> bool {
        self.host == hostname() && !process_alive(self.pid)
    }
}

#[derive(Debug, thiserror::Error)]
pub enum LockError {
    #[error(
        "state `{location}` is locked by {} (pid {}, running `a3ctl {}`) since {}; lock id `{}`",
        .info.holder, .info.pid, .info.operation, .info.created, .info.id
    )]
    Held {
        location: String,
        info: Box<LockInfo>,
        /// The holder was a process of this host that no longer runs (only a remote lock is
        /// refused in that case; a local one is taken over).
        dead_here: bool,
    },
    #[error("cannot lock state `{location}`: {}", io_reason(.location, .source))]
    Io {
        location: String,
        source: std::io::Error,
    },
    #[error("lock `{location}` is unreadable: {message}")]
    Corrupt { location: String, message: String },
    #[error("state `{location}` is locked by lock id `{held}`, not `{given}`")]
    WrongId {
        location: String,
        held: String,
        given: String,
    },
    #[error("state `{location}` is not locked")]
    NotLocked { location: String },
    /// A local lock file that is not a readable regular file (a FIFO, a directory, too large...).
    #[error(transparent)]
    Read(#[from] crate::files::ReadError),
    /// The backend holding a remote lock failed.
    #[error(transparent)]
    Store(#[from] super::store::StoreError),
}

impl LockError {
    pub fn hint(&self) -> Option<String> {
        match self {
            LockError::Held {
                info,
                dead_here: true,
                ..
            } => Some(format!(
                "the run that took it (pid {} on this host) no longer runs: remove the lock with `a3ctl force-unlock {}`",
                info.pid, info.id
            )),
            LockError::Held { info, .. } => Some(format!(
                "wait for that run to finish; if it died on another machine, run `a3ctl force-unlock {}`",
                info.id
            )),
            LockError::Store(e) => e.hint(),
            LockError::Read(e) => Some(e.hint()),
            LockError::Corrupt { location, .. } if location.starts_with("gs://") => Some(format!(
                "delete it with `gcloud storage rm {location}` once you are sure no a3ctl is running"
            )),
            LockError::Corrupt { .. } => {
                Some("remove the lock file once you are sure no a3ctl is running".into())
            }
            LockError::WrongId { held, .. } => Some(format!("the current lock id is `{held}`")),
            LockError::Io { .. } => self.unwritable().map(|u| {
                format!(
                    "{}a3ctl keeps a local state, its lock and the sandbox's world under `state/` in the directory it is run from (docs/state.md); {}, or point the blueprint's [state] elsewhere (`path`, or `backend = \"gcs\"`)",
                    u.what(),
                    u.remedy()
                )
            }),
            _ => None,
        }
    }

    /// Why a local lock could not be made, when it is the directory's fault: it cannot be
    /// written, or a file stands where a directory of the lock's path should be.
    pub fn unwritable(&self) -> Option<Unwritable> {
        let LockError::Io { location, source } = self else {
            return None;
        };
        let path = Path::new(location);
        match source.kind() {
            std::io::ErrorKind::PermissionDenied | std::io::ErrorKind::ReadOnlyFilesystem => {
                let dir = path
                    .parent()
                    .filter(|d| !d.as_os_str().is_empty())
                    .map_or(".".to_string(), |d| d.display().to_string());
                Some(Unwritable::ReadOnly { dir })
            }
            // `mkdir` below a regular file fails with ENOTDIR; making the file's own path a
            // directory, with EEXIST.
            std::io::ErrorKind::NotADirectory | std::io::ErrorKind::AlreadyExists => {
                file_in_the_way(path).map(|file| Unwritable::FileInTheWay { file })
            }
            _ => None,
        }
    }
}

/// The first directory of `path` (not `path` itself) that is a file instead.
fn file_in_the_way(path: &Path) -> Option<String> {
    let mut ancestors: Vec<&Path> = path
        .ancestors()
        .skip(1)
        .filter(|a| !a.as_os_str().is_empty())
        .collect();
    ancestors.reverse();
    ancestors
        .into_iter()
        .find(|a| std::fs::metadata(a).is_ok_and(|m| !m.is_dir()))
        .map(|file| file.display().to_string())
}

/// Why a local lock could not be made, for its message: the operating system's words, except
/// for a file in the way, where they would mislead (`File exists` is about the file in the way,
/// not the lock).
fn io_reason(location: &str, source: &std::io::Error) -> String {
    match source.kind() {
        std::io::ErrorKind::NotADirectory | std::io::ErrorKind::AlreadyExists => {
            match file_in_the_way(Path::new(location)) {
                Some(file) => format!("`{file}` is a file, not a directory"),
                None => source.to_string(),
            }
        }
        _ => source.to_string(),
    }
}

/// What keeps a local lock from being made ([`LockError::unwritable`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unwritable {
    /// The directory cannot be written.
    ReadOnly { dir: String },
    /// A file stands where the lock's path needs a directory.
    FileInTheWay { file: String },
}

impl Unwritable {
    /// What is wrong, as the start of a hint (`…: `), when the error's message does not say
    /// it: a file in the way is named there ([`io_reason`]).
    pub fn what(&self) -> String {
        match self {
            Unwritable::ReadOnly { dir } => format!("`{dir}` cannot be written: "),
            Unwritable::FileInTheWay { .. } => String::new(),
        }
    }

    /// What to do about it, in the middle of a hint.
    pub fn remedy(&self) -> String {
        match self {
            Unwritable::ReadOnly { .. } => "run it from a directory you can write".to_string(),
            Unwritable::FileInTheWay { file } => format!(
                "move that file away (`mv {file} {file}.old`) or run a3ctl from another directory"
            ),
        }
    }
}

/// What taking a lock found.
#[derive(Debug)]
pub enum Acquired {
    Fresh,
    /// A stale lock of a dead process on this host was taken over.
    TookOverStale(LockInfo),
}

/// A held local lock, released on drop.
#[derive(Debug)]
pub struct LocalLock {
    path: PathBuf,
    id: String,
}

impl LocalLock {
    pub fn lock_path(state_path: &Path) -> PathBuf {
        with_suffix(state_path, ".lock")
    }

    /// Takes the lock of the state at `state_path`.
    pub fn acquire(state_path: &Path, info: LockInfo) -> Result<(LocalLock, Acquired), LockError> {
        let path = Self::lock_path(state_path);
        let io = |source| LockError::Io {
            location: path.display().to_string(),
            source,
        };
        std::fs::create_dir_all(parent_dir(&path)).map_err(io)?;
        let mut acquired = Acquired::Fresh;
        // The lock appears with its content in one step: written to a private temporary file,
        // then hard-linked into place (which fails if a lock exists), so a concurrent reader never
        // sees an empty lock.
        let text = serde_json::to_vec_pretty(&info).map_err(|e| io(std::io::Error::other(e)))?;
        let tmp = with_suffix(&path, &format!(".tmp-{}-{}", std::process::id(), info.id));
        write_private(&tmp, &text).map_err(io)?;
        let result = (|| {
            for _ in 0..2 {
                match std::fs::hard_link(&tmp, &path) {
                    Ok(()) => return Ok(()),
                    Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                        let held = read_lock(&path)?;
                        if held.is_stale_here() {
                            std::fs::remove_file(&path).map_err(io)?;
                            acquired = Acquired::TookOverStale(held);
                            continue;
                        }
                        return Err(LockError::Held {
                            location: state_path.display().to_string(),
                            info: Box::new(held),
                            dead_here: false,
                        });
                    }
                    Err(e) => return Err(io(e)),
                }
            }
            Err(io(std::io::Error::other("the lock file kept reappearing")))
        })();
        let _ = std::fs::remove_file(&tmp);
        result.map(|()| (LocalLock { path, id: info.id }, acquired))
    }

    /// Who holds the lock of the state at `state_path`, if anyone.
    pub fn holder(state_path: &Path) -> Result<Option<LockInfo>, LockError> {
        let path = Self::lock_path(state_path);
        if !path.exists() {
            return Ok(None);
        }
        read_lock(&path).map(Some)
    }

    /// Removes the lock with id `id`, whoever holds it.
    pub fn force_unlock(state_path: &Path, id: &str) -> Result<LockInfo, LockError> {
        let path = Self::lock_path(state_path);
        let Some(held) = Self::holder(state_path)? else {
            return Err(LockError::NotLocked {
                location: state_path.display().to_string(),
            });
        };
        if held.id != id {
            return Err(LockError::WrongId {
                location: state_path.display().to_string(),
                held: held.id,
                given: id.to_string(),
            });
        }
        std::fs::remove_file(&path).map_err(|source| LockError::Io {
            location: path.display().to_string(),
            source,
        })?;
        Ok(held)
    }

    pub fn id(&self) -> &str {
        &self.id
    }
}

impl Drop for LocalLock {
    fn drop(&mut self) {
        // Only remove the file if it is still ours (force-unlock may have replaced it).
        if read_lock(&self.path).is_ok_and(|held| held.id == self.id) {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

fn read_lock(path: &Path) -> Result<LockInfo, LockError> {
    let text = crate::files::read(path, crate::files::LOCK)?;
    serde_json::from_slice(&text).map_err(|e| LockError::Corrupt {
        location: path.display().to_string(),
        message: e.to_string(),
    })
}

/// Writes `bytes` to `path` privately; used by callers that export lock or state copies.
pub fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut f = private_file(path)?;
    f.write_all(bytes)?;
    f.sync_all()
}

/// Who runs this process (see the module doc): never empty, never "unknown".
pub fn current_user() -> String {
    let passwd = std::fs::read_to_string("/etc/passwd").ok();
    let euid = effective_uid().or_else(|| id_output("-u").and_then(|u| u.parse().ok()));
    user_name(|k| std::env::var(k).ok(), passwd.as_deref(), euid)
        .or_else(|| id_output("-un"))
        .unwrap_or_else(|| format!("pid {}", std::process::id()))
}

/// The user name from the environment (`env`), else the entry of `euid` in `passwd` (the text of
/// `/etc/passwd`), else `uid N`; `None` only when neither the environment nor the uid says.
pub fn user_name(
    env: impl Fn(&str) -> Option<String>,
    passwd: Option<&str>,
    euid: Option<u32>,
) -> Option<String> {
    for key in ["USER", "LOGNAME", "USERNAME"] {
        if let Some(name) = env(key).map(|v| v.trim().to_string())
            && !name.is_empty()
        {
            return Some(name);
        }
    }
    let euid = euid?;
    let entry = passwd.and_then(|text| {
        text.lines()
            .filter(|l| !l.trim_start().starts_with('#'))
            .find_map(|line| {
                // name:password:uid:gid:gecos:home:shell
                let mut fields = line.split(':');
                let name = fields.next()?.trim();
                let uid: u32 = fields.nth(1)?.trim().parse().ok()?;
                (uid == euid && !name.is_empty()).then(|| name.to_string())
            })
    });
    Some(entry.unwrap_or_else(|| format!("uid {euid}")))
}

/// The effective uid: the second field of `Uid:` in `/proc/self/status`, else the owner of
/// `/proc/self` (Linux).
fn effective_uid() -> Option<u32> {
    let from_status = std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            status
                .lines()
                .find_map(|l| l.strip_prefix("Uid:"))
                .and_then(|ids| ids.split_whitespace().nth(1)?.parse().ok())
        });
    #[cfg(unix)]
    let from_proc = || {
        use std::os::unix::fs::MetadataExt;
        std::fs::metadata("/proc/self").ok().map(|m| m.uid())
    };
    #[cfg(not(unix))]
    let from_proc = || None;
    from_status.or_else(from_proc)
}

/// `id FLAG`'s answer, where there is no /proc (macOS).
fn id_output(flag: &str) -> Option<String> {
    let out = std::process::Command::new("id")
        .arg(flag)
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .output()
        .ok()?;
    let text = String::from_utf8(out.stdout).ok()?.trim().to_string();
    (out.status.success() && !text.is_empty()).then_some(text)
}

fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .or_else(|_| std::fs::read_to_string("/etc/hostname"))
        .map(|s| s.trim().to_string())
        .ok()
        .filter(|s| !s.is_empty())
        .or_else(|| std::env::var("HOSTNAME").ok())
        .unwrap_or_else(|| "localhost".into())
}

/// Whether a process exists on this host. Without /proc (non-Linux) every process counts as alive,
/// so a lock is never taken over wrongly.
fn process_alive(pid: u32) -> bool {
    if !Path::new("/proc/self").exists() {
        return true;
    }
    Path::new(&format!("/proc/{pid}")).exists()
}

#[cfg(test)]
mod tests {

    #[test]
    fn a_lock_in_a_directory_that_cannot_be_written_says_where_state_lives() {
        for kind in [
            std::io::ErrorKind::PermissionDenied,
            std::io::ErrorKind::ReadOnlyFilesystem,
        ] {
            let e = LockError::Io {
                location: "state/sandbox/world.json.lock".into(),
                source: std::io::Error::from(kind),
            };
            let hint = e.hint().expect("a hint");
            assert!(
                hint.starts_with("`state/sandbox` cannot be written"),
                "{hint}"
            );
            assert!(
                hint.contains("run it from a directory you can write"),
                "{hint}"
            );
        }
        let other = LockError::Io {
            location: "state/a.lock".into(),
            source: std::io::Error::from(std::io::ErrorKind::StorageFull),
        };
        assert_eq!(other.hint(), None);
    }
    use super::*;

    #[test]
    fn a_file_where_a_directory_of_the_lock_goes_is_named_with_the_move_that_fixes_it() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("state"), "notes").unwrap();
        for (state, blocker) in [
            // `mkdir state/sandbox`: ENOTDIR.
            (dir.path().join("state/sandbox/world.json"), "state"),
            // `mkdir state`: EEXIST.
            (dir.path().join("state/a.a3state.json"), "state"),
        ] {
            let e = LocalLock::acquire(&state, LockInfo::current("i".into(), "apply")).unwrap_err();
            let file = dir.path().join(blocker).display().to_string();
            assert_eq!(
                e.unwritable(),
                Some(Unwritable::FileInTheWay { file: file.clone() }),
                "{e}"
            );
            assert!(
                e.to_string()
                    .ends_with(&format!(": `{file}` is a file, not a directory")),
                "{e}"
            );
            let hint = e.hint().unwrap();
            assert!(
                hint.starts_with("a3ctl keeps a local state, its lock and the sandbox's world"),
                "{hint}"
            );
            assert!(
                hint.contains(&format!("(`mv {file} {file}.old`)")),
                "{hint}"
            );
        }
        // A directory that exists is not the cause of some other failure.
        let other = LockError::Io {
            location: dir.path().join("x.lock").display().to_string(),
            source: std::io::Error::from(std::io::ErrorKind::AlreadyExists),
        };
        assert_eq!(other.unwritable(), None);
    }

    #[test]
    fn second_lock_is_refused_naming_the_holder() {
        let dir = tempfile::tempdir().unwrap();
        let state = dir.path().join("x.a3state.json");
        let (lock, _) =
            LocalLock::acquire(&state, LockInfo::current("id-1".into(), "apply")).unwrap();
        let err =
            LocalLock::acquire(&state, LockInfo::current("id-2".into(), "apply")).unwrap_err();
        let message = err.to_string();
        assert!(
            message.contains("locked by")
                && message.contains("id-1")
                && message.contains("a3ctl apply"),
            "{message}"
        );
        assert!(err.hint().unwrap().contains("force-unlock id-1"));
        drop(lock);
        assert!(LocalLock::holder(&state).unwrap().is_none());
        let _again = LocalLock::acquire(&state, LockInfo::current("id-3".into(), "apply")).unwrap();
    }

    #[test]
    fn racing_acquirers_get_one_winner_and_readable_refusals() {
        let dir = tempfile::tempdir().unwrap();
        let state = dir.path().join("x.a3state.json");
        for round in 0..20 {
            let barrier = std::sync::Arc::new(std::sync::Barrier::new(8));
            let handles: Vec<_> = (0..8)
                .map(|i| {
                    let (state, barrier) = (state.clone(), barrier.clone());
                    std::thread::spawn(move || {
                        barrier.wait();
                        LocalLock::acquire(
                            &state,
                            LockInfo::current(format!("r{round}-{i}"), "apply"),
                        )
                    })
                })
                .collect();
            let results: Vec<_> = handles.into_iter().map(|h| h.join().unwrap()).collect();
            let winners = results.iter().filter(|r| r.is_ok()).count();
            assert_eq!(winners, 1, "round {round}");
            for r in &results {
                if let Err(e) = r {
                    assert!(matches!(e, LockError::Held { .. }), "round {round}: {e}");
                }
            }
        }
    }

    #[test]
    fn stale_lock_of_dead_process_is_taken_over() {
        let dir = tempfile::tempdir().unwrap();
        let state = dir.path().join("x.a3state.json");
        let mut dead = LockInfo::current("old".into(), "apply");
        dead.pid = u32::MAX - 1;
        std::fs::write(
            LocalLock::lock_path(&state),
            serde_json::to_vec(&dead).unwrap(),
        )
        .unwrap();
        let (_lock, acquired) =
            LocalLock::acquire(&state, LockInfo::current("new".into(), "apply")).unwrap();
        assert!(matches!(acquired, Acquired::TookOverStale(info) if info.id == "old"));
    }

    const PASSWD: &str = "\
# comment:x:1000:1000::/:/bin/sh
root:x:0:0:root:/root:/bin/bash
broken line
nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin
ana:x:1000:1000:Ana,,,:/home/ana:/bin/bash
";

    fn env<'a>(vars: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |k| {
            vars.iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| v.to_string())
        }
    }

    #[test]
    fn the_holder_is_named_from_the_environment_first() {
        let name = |vars: &[(&str, &str)]| user_name(env(vars), Some(PASSWD), Some(1000));
        assert_eq!(name(&[("USER", "bob"), ("LOGNAME", "x")]).unwrap(), "bob");
        // Unset or empty USER: LOGNAME, then USERNAME (Windows).
        assert_eq!(
            name(&[("USER", ""), ("LOGNAME", "carol")]).unwrap(),
            "carol"
        );
        assert_eq!(name(&[("USER", "  "), ("USERNAME", "dan")]).unwrap(), "dan");
    }

    #[test]
    fn without_a_login_environment_the_holder_is_the_passwd_entry_of_the_euid() {
        let none: &[(&str, &str)] = &[];
        assert_eq!(
            user_name(env(none), Some(PASSWD), Some(1000)).unwrap(),
            "ana"
        );
        assert_eq!(user_name(env(none), Some(PASSWD), Some(0)).unwrap(), "root");
        // A uid without an entry (a container's --user 4242), or no passwd at all.
        assert_eq!(
            user_name(env(none), Some(PASSWD), Some(4242)).unwrap(),
            "uid 4242"
        );
        assert_eq!(user_name(env(none), None, Some(7)).unwrap(), "uid 7");
        // Nothing known at all: the caller asks `id`.
        assert_eq!(user_name(env(none), Some(PASSWD), None), None);
        // This process: never "unknown".
        let holder = LockInfo::current("id".into(), "apply").holder;
        assert!(
            !holder.starts_with("unknown@") && !holder.starts_with('@'),
            "{holder}"
        );
    }

    #[test]
    fn force_unlock_needs_the_right_id() {
        let dir = tempfile::tempdir().unwrap();
        let state = dir.path().join("x.a3state.json");
        let mut other_host = LockInfo::current("held".into(), "apply");
        other_host.host = "elsewhere".into();
        std::fs::write(
            LocalLock::lock_path(&state),
            serde_json::to_vec(&other_host).unwrap(),
        )
        .unwrap();
        assert!(matches!(
            LocalLock::acquire(&state, LockInfo::current("me".into(), "apply")),
            Err(LockError::Held { .. })
        ));
        assert!(matches!(
            LocalLock::force_unlock(&state, "nope"),
            Err(LockError::WrongId { .. })
        ));
        assert_eq!(LocalLock::force_unlock(&state, "held").unwrap().id, "held");
        assert!(matches!(
            LocalLock::force_unlock(&state, "held"),
            Err(LockError::NotLocked { .. })
        ));
    }
}
