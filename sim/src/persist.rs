//! Saving and loading the whole world, so a standalone simulator (and `a3ctl --sandbox`) survives
//! restarts.
//!
//! The file is JSON and written atomically: a temporary file in the same directory, fsync, then
//! rename over the old file. A crash mid-write leaves the previous world intact.

use crate::world::World;
use std::io::Write;
use std::path::Path;

#[derive(Debug, thiserror::Error)]
pub enum PersistError {
    #[error("cannot read simulator world `{path}`: {source}")]
    Read {
        path: String,
        source: std::io::Error,
    },
    #[error("simulator world `{path}` is not valid: {message}")]
    Parse { path: String, message: String },
    #[error("cannot write simulator world `{path}`: {source}")]
    Write {
        path: String,
        source: std::io::Error,
    },
}

/// Loads a world; `Ok(None)` when the file does not exist yet.
pub fn load(path: &Path) -> Result<Option<World>, PersistError> {
    let text = match std::fs::read(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(source) => {
            return Err(PersistError::Read {
                path: path.display().to_string(),
                source,
            });
        }
    };
    let mut world: World = serde_json::from_slice(&text).map_err(|e| PersistError::Parse {
        path: path.display().to_string(),
        message: e.to_string(),
    })?;
    world.reseed();
    Ok(Some(world))
}

/// Saves a world atomically.
pub fn save(path: &Path, world: &World) -> Result<(), PersistError> {
    let err = |source| PersistError::Write {
        path: path.display().to_string(),
        source,
    };
    let bytes = serde_json::to_vec(world).map_err(|e| err(std::io::Error::other(e)))?;
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(err)?;
    let tmp = dir.join(format!(
        ".{}.tmp-{}",
        path.file_name().and_then(|n| n.to_str()).unwrap_or("world"),
        std::process::id()
    ));
    {
        // The world holds the simulated clusters' CA keys: readable by its owner only.
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create(true).truncate(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            options.mode(0o600);
        }
        let mut file = options.open(&tmp).map_err(err)?;
        file.write_all(&bytes).map_err(err)?;
        file.sync_all().map_err(err)?;
    }
    std::fs::rename(&tmp, path).map_err(err)?;
    Ok(())
}
