//! Reading the files a user names: blueprints, state files, saved plans, `state push` input.
//!
//! [`read`] opens the path once and asks the *opened* file what it is (`fstat` on the
//! descriptor, so nothing can be swapped in between the check and the read). Only a regular file
//! is read; a directory, FIFO, socket or device is refused. The open is non-blocking, so a FIFO
//! with no writer is refused at once instead of hanging (`O_NOCTTY` keeps a terminal from becoming
//! the controlling terminal), and `O_NONBLOCK` does not change how a regular file reads. At most
//! the cap of that [`Kind`] of file is read, plus one byte to tell "exactly the cap" from "more":
//! `/dev/zero` or a runaway file never exhausts memory.
//!
//! Every failure is a [`ReadError`] that names the file, says what is wrong in words rather than
//! an errno, and has a hint ([`ReadError::hint`]).

use std::fmt;
use std::fs::File;
use std::io::{self, Read};
use std::path::{Path, PathBuf};

/// What kind of file is read: how messages name it and how large it may be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Kind {
    /// How messages name it, lowercase: "blueprint", "state file".
    pub noun: &'static str,
    /// The largest accepted size, in bytes.
    pub max_bytes: u64,
    /// An example file name, for the hint when a directory is given.
    example: &'static str,
    /// What such a file normally weighs, for the hint when it is too large.
    typical: &'static str,
}

const KIB: u64 = 1 << 10;
const MIB: u64 = 1 << 20;

/// A blueprint: the shipped ones are 0.3–1.5 KiB, and one with a hundred GPU pools and every
/// optional table stays under 20 KiB. 1 MiB is fifty times that, and keeps `validate` (which
/// keeps spans of every key) well under a second on any input.
pub const BLUEPRINT: &Kind = &Kind {
    noun: "blueprint",
    max_bytes: MIB,
    example: "a3.toml",
    typical: "a blueprint is a few kilobytes of TOML (the shipped A3 Mega blueprint is 1.5 KiB)",
};

/// A state file (local backend, `state push`, `state migrate --from`): one JSON record per
/// resource with its spec and outputs, about 50 KiB for the minimal blueprint and a few hundred
/// KiB for a large one. 64 MiB leaves two orders of magnitude of headroom.
pub const STATE: &Kind = &Kind {
    noun: "state file",
    max_bytes: 64 * MIB,
    example: "<deployment>.a3state.json",
    typical: "a state file holds one record per resource, tens to hundreds of kilobytes",
};

/// A saved plan (`plan --out`): the plan's changes with their specs, the same order of size as
/// the state it was made against, so the same cap.
pub const PLAN: &Kind = &Kind {
    noun: "saved plan",
    max_bytes: 64 * MIB,
    example: "plan.json",
    typical: "a saved plan holds one change per resource, tens to hundreds of kilobytes",
};

/// What `a3ctl apply FILE` takes: a saved plan, or else a blueprint (which is then read again,
/// with the blueprint cap).
pub const PLAN_OR_BLUEPRINT: &Kind = &Kind {
    noun: "blueprint or saved plan",
    max_bytes: 64 * MIB,
    example: "a3.toml",
    typical: "a blueprint is a few kilobytes and a saved plan a few hundred at most",
};

/// A local lock file: one small JSON object (who holds the lock, since when).
pub const LOCK: &Kind = &Kind {
    noun: "lock file",
    max_bytes: 64 * KIB,
    example: "<deployment>.a3state.json.lock",
    typical: "a lock file is a JSON object of a few hundred bytes",
};

/// A kubeconfig file (`a3ctl kubeconfig --file`): a few kilobytes per cluster, mostly CA
/// certificates; 16 MiB holds thousands of contexts.
pub const KUBECONFIG: &Kind = &Kind {
    noun: "kubeconfig file",
    max_bytes: 16 * MIB,
    example: "config",
    typical: "a kubeconfig file holds a few kilobytes per cluster",
};

/// What a path turned out to be when it is not a regular file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NotRegular {
    Fifo,
    Socket,
    CharDevice,
    BlockDevice,
    Other,
}

impl NotRegular {
    fn of(file_type: std::fs::FileType) -> NotRegular {
        #[cfg(unix)]
        {
            use std::os::unix::fs::FileTypeExt;
            if file_type.is_fifo() {
                return NotRegular::Fifo;
            }
            if file_type.is_socket() {
                return NotRegular::Socket;
            }
            if file_type.is_char_device() {
                return NotRegular::CharDevice;
            }
            if file_type.is_block_device() {
                return NotRegular::BlockDevice;
            }
        }
        let _ = file_type;
        NotRegular::Other
    }

    /// "a FIFO (named pipe)", with its article.
    pub fn describe(self) -> &'static str {
        match self {
            NotRegular::Fifo => "a FIFO (named pipe)",
            NotRegular::Socket => "a socket",
            NotRegular::CharDevice => "a character device",
            NotRegular::BlockDevice => "a block device",
            NotRegular::Other => "not a regular file",
        }
    }
}

/// Why a file could not be read. Each variant carries the path and the [`Kind`] of file.
#[derive(Debug)]
pub enum ReadError {
    NotFound {
        path: PathBuf,
        kind: &'static Kind,
    },
    IsDirectory {
        path: PathBuf,
        kind: &'static Kind,
    },
    /// A directory on the way to the file is a file (`ENOTDIR`): `blueprint.toml/x`.
    NotADirectory {
        path: PathBuf,
        kind: &'static Kind,
    },
    PermissionDenied {
        path: PathBuf,
        kind: &'static Kind,
    },
    /// Too many levels of symbolic links (`ELOOP`): a link that points back at itself.
    SymlinkLoop {
        path: PathBuf,
        kind: &'static Kind,
    },
    NotRegular {
        path: PathBuf,
        kind: &'static Kind,
        what: NotRegular,
    },
    /// Larger than `kind.max_bytes`; `size` is the size when the file system knows it, `None`
    /// when the file only turned out larger while being read.
    TooLarge {
        path: PathBuf,
        kind: &'static Kind,
        size: Option<u64>,
    },
    /// Not UTF-8 where text is expected; the position of the first bad byte, 1-based.
    NotUtf8 {
        path: PathBuf,
        kind: &'static Kind,
        line: usize,
        column: usize,
    },
    /// Any other I/O error, with the operating system's words.
    Io {
        path: PathBuf,
        kind: &'static Kind,
        source: io::Error,
    },
}

impl ReadError {
    /// Classifies an error from opening or reading `path`.
    pub fn from_io(path: &Path, kind: &'static Kind, error: io::Error) -> ReadError {
        let path = path.to_path_buf();
        #[cfg(unix)]
        match error.raw_os_error() {
            Some(libc::ENOENT) => return ReadError::NotFound { path, kind },
            Some(libc::ENOTDIR) => return ReadError::NotADirectory { path, kind },
            Some(libc::EISDIR) => return ReadError::IsDirectory { path, kind },
            Some(libc::EACCES) | Some(libc::EPERM) => {
                return ReadError::PermissionDenied { path, kind };
            }
            Some(libc::ELOOP) => return ReadError::SymlinkLoop { path, kind },
            Some(libc::ENXIO) => {
                // Opening a FIFO for writing without a reader, or a socket: not a file.
                return ReadError::NotRegular {
                    path,
                    kind,
                    what: NotRegular::Other,
                };
            }
            _ => {}
        }
        match error.kind() {
            io::ErrorKind::NotFound => ReadError::NotFound { path, kind },
            io::ErrorKind::IsADirectory => ReadError::IsDirectory { path, kind },
            io::ErrorKind::PermissionDenied => ReadError::PermissionDenied { path, kind },
            _ => ReadError::Io {
                path,
                kind,
                source: error,
            },
        }
    }

    pub fn path(&self) -> &Path {
        match self {
            ReadError::NotFound { path, .. }
            | ReadError::IsDirectory { path, .. }
            | ReadError::NotADirectory { path, .. }
            | ReadError::PermissionDenied { path, .. }
            | ReadError::SymlinkLoop { path, .. }
            | ReadError::NotRegular { path, .. }
            | ReadError::TooLarge { path, .. }
            | ReadError::NotUtf8 { path, .. }
            | ReadError::Io { path, .. } => path,
        }
    }

    pub fn kind(&self) -> &'static Kind {
        match self {
            ReadError::NotFound { kind, .. }
            | ReadError::IsDirectory { kind, .. }
            | ReadError::NotADirectory { kind, .. }
            | ReadError::PermissionDenied { kind, .. }
            | ReadError::SymlinkLoop { kind, .. }
            | ReadError::NotRegular { kind, .. }
            | ReadError::TooLarge { kind, .. }
            | ReadError::NotUtf8 { kind, .. }
            | ReadError::Io { kind, .. } => kind,
        }
    }

    /// Whether the file does not exist (some callers treat that as "nothing yet").
    pub fn is_not_found(&self) -> bool {
        matches!(self, ReadError::NotFound { .. })
    }

    /// What is wrong, as the end of a sentence that named the file: "it does not exist".
    pub fn reason(&self) -> String {
        match self {
            ReadError::NotFound { .. } => "it does not exist".to_string(),
            ReadError::IsDirectory { .. } => "it is a directory, not a file".to_string(),
            ReadError::NotADirectory { .. } => {
                "a directory on its path is a file, so it cannot exist".to_string()
            }
            ReadError::PermissionDenied { .. } => "permission denied".to_string(),
            ReadError::SymlinkLoop { .. } => {
                "too many levels of symbolic links (a link that points back at itself)".to_string()
            }
            ReadError::NotRegular { what, .. } => match what {
                NotRegular::Other => "it is not a regular file".to_string(),
                what => format!("it is {}, not a regular file", what.describe()),
            },
            ReadError::TooLarge { kind, size, .. } => {
                let size = match size {
                    Some(size) => format!("it is {} ({size} bytes)", human(*size)),
                    None => format!("it holds more than {}", human(kind.max_bytes)),
                };
                format!(
                    "{size}, over the {} limit for a {}",
                    human(kind.max_bytes),
                    kind.noun
                )
            }
            ReadError::NotUtf8 { line, column, .. } => {
                format!(
                    "it is not UTF-8 text (the first invalid byte is at line {line}, column {column})"
                )
            }
            ReadError::Io { source, .. } => source.to_string(),
        }
    }

    /// What to do about it.
    pub fn hint(&self) -> String {
        let path = self.path().display();
        let kind = self.kind();
        match self {
            ReadError::NotFound { .. } => {
                // Part of the message only: left out when the directory cannot be read.
                let cwd = std::env::current_dir()
                    .map(|dir| format!(" (`{}`)", dir.display()))
                    .unwrap_or_default();
                let extra = if kind == BLUEPRINT {
                    format!("; `a3ctl init {path}` writes a new blueprint there")
                } else {
                    String::new()
                };
                format!("check the path: relative paths start in the current directory{cwd}{extra}")
            }
            ReadError::IsDirectory { .. } => format!(
                "name the {} file itself, e.g. `{}`",
                kind.noun,
                self.path().join(kind.example).display()
            ),
            ReadError::NotADirectory { .. } => format!(
                "check the path: a part of `{path}` before the file name is a file, not a directory"
            ),
            ReadError::PermissionDenied { .. } => format!(
                "check the permissions with `ls -l {path}`: a3ctl needs to read the file and to enter every directory above it"
            ),
            ReadError::SymlinkLoop { .. } => format!(
                "`{path}` or a directory on its way is a symbolic link that never reaches a file; inspect it with `ls -l {path}` and point it at the real {}",
                kind.noun
            ),
            ReadError::NotRegular {
                what: NotRegular::Fifo,
                ..
            } => format!(
                "a3ctl reads a {} only from a regular file, so that reading can never block; save the content to a file first (`cat {path} > {}`) and pass that file",
                kind.noun, kind.example
            ),
            ReadError::NotRegular { .. } => {
                format!("pass the path of the {} file itself", kind.noun)
            }
            ReadError::TooLarge { .. } => {
                format!("{}; check that `{path}` is the right file", kind.typical)
            }
            ReadError::NotUtf8 { .. } => {
                format!("save `{path}` as UTF-8 text; a {} is text", kind.noun)
            }
            ReadError::Io { .. } => format!("check that `{path}` is a readable file"),
        }
    }
}

impl fmt::Display for ReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "cannot read {} `{}`: {}",
            self.kind().noun,
            self.path().display(),
            self.reason()
        )
    }
}

impl std::error::Error for ReadError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ReadError::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}

/// Reads the regular file at `path`, at most `kind.max_bytes` of it.
pub fn read(path: &Path, kind: &'static Kind) -> Result<Vec<u8>, ReadError> {
    let fail = |error: io::Error| ReadError::from_io(path, kind, error);
    let file = open(path).map_err(fail)?;
    let metadata = file.metadata().map_err(fail)?;
    let file_type = metadata.file_type();
    if file_type.is_dir() {
        return Err(ReadError::IsDirectory {
            path: path.to_path_buf(),
            kind,
        });
    }
    if !file_type.is_file() {
        return Err(ReadError::NotRegular {
            path: path.to_path_buf(),
            kind,
            what: NotRegular::of(file_type),
        });
    }
    if metadata.len() > kind.max_bytes {
        return Err(ReadError::TooLarge {
            path: path.to_path_buf(),
            kind,
            size: Some(metadata.len()),
        });
    }
    read_capped(file, metadata.len(), path, kind)
}

/// Reads the regular file at `path` as UTF-8 text, at most `kind.max_bytes` of it.
pub fn read_to_string(path: &Path, kind: &'static Kind) -> Result<String, ReadError> {
    into_text(read(path, kind)?, path, kind)
}

/// Reads `reader` (standard input, for instance) to its end, at most `kind.max_bytes`;
/// `path` names it in messages.
pub fn read_stream(
    reader: impl Read,
    path: &Path,
    kind: &'static Kind,
) -> Result<Vec<u8>, ReadError> {
    read_capped(reader, 0, path, kind)
}

fn read_capped(
    reader: impl Read,
    size_hint: u64,
    path: &Path,
    kind: &'static Kind,
) -> Result<Vec<u8>, ReadError> {
    let mut bytes = Vec::with_capacity(usize::try_from(size_hint.min(kind.max_bytes)).unwrap_or(0));
    reader
        .take(kind.max_bytes.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|error| ReadError::from_io(path, kind, error))?;
    if bytes.len() as u64 > kind.max_bytes {
        return Err(ReadError::TooLarge {
            path: path.to_path_buf(),
            kind,
            size: None,
        });
    }
    Ok(bytes)
}

fn into_text(bytes: Vec<u8>, path: &Path, kind: &'static Kind) -> Result<String, ReadError> {
    String::from_utf8(bytes).map_err(|error| {
        let valid = &error.as_bytes()[..error.utf8_error().valid_up_to()];
        // The prefix is valid UTF-8 by definition.
        let before = std::str::from_utf8(valid).unwrap_or_default();
        let line = before.matches('\n').count() + 1;
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        ReadError::NotUtf8 {
            path: path.to_path_buf(),
            kind,
            line,
            column: before[line_start..].chars().count() + 1,
        }
    })
}

/// Opens for reading without blocking on a FIFO and without acquiring a controlling terminal.
fn open(path: &Path) -> io::Result<File> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY);
    }
    options.open(path)
}

/// "1.5 MiB", "64 MiB", "512 bytes".
pub fn human(bytes: u64) -> String {
    let units = [("GiB", 1u64 << 30), ("MiB", MIB), ("KiB", KIB)];
    for (unit, size) in units {
        if bytes >= size {
            let value = bytes as f64 / size as f64;
            return if bytes.is_multiple_of(size) {
                format!("{} {unit}", bytes / size)
            } else {
                format!("{value:.1} {unit}")
            };
        }
    }
    format!("{bytes} bytes")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir() -> tempfile::TempDir {
        tempfile::tempdir().expect("temp dir")
    }

    #[test]
    fn a_regular_file_under_the_cap_is_read_whole() {
        let dir = dir();
        let path = dir.path().join("a.toml");
        std::fs::write(&path, "name = \"x\"\n").unwrap();
        assert_eq!(read_to_string(&path, BLUEPRINT).unwrap(), "name = \"x\"\n");
        let exact = dir.path().join("exact");
        std::fs::write(&exact, vec![b'a'; 64 * 1024]).unwrap();
        assert_eq!(read(&exact, LOCK).unwrap().len(), 64 * 1024);
    }

    #[test]
    fn every_kind_of_failure_is_named() {
        let dir = dir();
        let missing = read(&dir.path().join("nope.toml"), BLUEPRINT).unwrap_err();
        assert!(missing.is_not_found(), "{missing}");
        assert!(
            missing
                .to_string()
                .ends_with("nope.toml`: it does not exist"),
            "{missing}"
        );
        assert!(missing.hint().contains("a3ctl init"), "{}", missing.hint());

        let under_a_file = dir.path().join("file");
        std::fs::write(&under_a_file, "x").unwrap();
        let error = read(&under_a_file.join("x.toml"), BLUEPRINT).unwrap_err();
        assert!(matches!(error, ReadError::NotADirectory { .. }), "{error}");

        let error = read(dir.path(), STATE).unwrap_err();
        assert!(matches!(error, ReadError::IsDirectory { .. }), "{error}");
        assert!(error.hint().contains(".a3state.json"), "{}", error.hint());

        #[cfg(unix)]
        {
            let link = dir.path().join("loop");
            std::os::unix::fs::symlink(&link, &link).unwrap();
            let error = read(&link, BLUEPRINT).unwrap_err();
            assert!(matches!(error, ReadError::SymlinkLoop { .. }), "{error}");
            assert!(error.to_string().contains("symbolic links"), "{error}");

            let error = read(Path::new("/dev/zero"), BLUEPRINT).unwrap_err();
            assert!(
                matches!(
                    error,
                    ReadError::NotRegular {
                        what: NotRegular::CharDevice,
                        ..
                    }
                ),
                "{error}"
            );
            assert!(error.to_string().contains("a character device"), "{error}");
        }

        let big = dir.path().join("big.toml");
        std::fs::write(&big, vec![b'#'; (MIB + 1) as usize]).unwrap();
        let error = read(&big, BLUEPRINT).unwrap_err();
        assert!(
            matches!(error, ReadError::TooLarge { size: Some(s), .. } if s == MIB + 1),
            "{error}"
        );
        assert!(
            error
                .to_string()
                .contains("it is 1.0 MiB (1048577 bytes), over the 1 MiB limit for a blueprint"),
            "{error}"
        );

        let latin1 = dir.path().join("latin1.toml");
        std::fs::write(&latin1, b"a = 1\nb = \"caf\xe9\"\n").unwrap();
        let error = read_to_string(&latin1, BLUEPRINT).unwrap_err();
        assert!(
            matches!(
                error,
                ReadError::NotUtf8 {
                    line: 2,
                    column: 9,
                    ..
                }
            ),
            "{error:?}"
        );
    }

    #[test]
    fn a_fifo_is_refused_without_blocking() {
        let dir = dir();
        let fifo = dir.path().join("fifo.toml");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .expect("mkfifo runs");
        assert!(made.success());
        let error = read(&fifo, BLUEPRINT).unwrap_err();
        assert!(
            matches!(
                error,
                ReadError::NotRegular {
                    what: NotRegular::Fifo,
                    ..
                }
            ),
            "{error}"
        );
        assert!(error.hint().contains("cat "), "{}", error.hint());
    }

    #[test]
    fn os_errors_map_to_their_kind() {
        let path = Path::new("x.toml");
        let of = |errno| ReadError::from_io(path, BLUEPRINT, io::Error::from_raw_os_error(errno));
        assert!(matches!(
            of(libc::EACCES),
            ReadError::PermissionDenied { .. }
        ));
        assert!(matches!(
            of(libc::EPERM),
            ReadError::PermissionDenied { .. }
        ));
        assert!(matches!(of(libc::ELOOP), ReadError::SymlinkLoop { .. }));
        assert!(matches!(of(libc::EISDIR), ReadError::IsDirectory { .. }));
        assert!(matches!(of(libc::ENOENT), ReadError::NotFound { .. }));
        let denied = of(libc::EACCES);
        assert_eq!(
            denied.to_string(),
            "cannot read blueprint `x.toml`: permission denied"
        );
        assert!(denied.hint().contains("ls -l x.toml"), "{}", denied.hint());
        let other = of(libc::EIO);
        assert!(matches!(other, ReadError::Io { .. }));
        assert!(
            other
                .to_string()
                .starts_with("cannot read blueprint `x.toml`: ")
        );
    }

    #[test]
    fn a_stream_is_capped_too() {
        let endless = io::repeat(b'{');
        let error = read_stream(endless, Path::new("-"), LOCK).unwrap_err();
        assert!(
            matches!(error, ReadError::TooLarge { size: None, .. }),
            "{error}"
        );
        assert!(error.to_string().contains("more than 64 KiB"), "{error}");
    }

    #[test]
    fn sizes_read_as_people_write_them() {
        assert_eq!(human(512), "512 bytes");
        assert_eq!(human(MIB), "1 MiB");
        assert_eq!(human(MIB + MIB / 2), "1.5 MiB");
        assert_eq!(human(64 * MIB), "64 MiB");
    }
}
