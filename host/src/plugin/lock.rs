//! `bardo.lock`: each plugin file pinned to the sha256 of its bytes. A new plugin is pinned on
//! first load; a changed one is refused until the operator re-pins it with `bardo lock`.

use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// Lock file errors.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    #[error("cannot access {path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    #[error("{path} is not a valid lock file: {message}; fix or delete it, then run `bardo lock`")]
    Parse { path: PathBuf, message: String },
    #[error(
        "plugin {file} has sha256 {actual}, but {lock} pins {expected}; if you replaced it on purpose, re-pin it with `bardo lock`"
    )]
    Mismatch { file: String, expected: String, actual: String, lock: PathBuf },
}

/// One pinned plugin.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LockEntry {
    /// The plugin file's name.
    pub file: String,
    /// sha256 of its bytes, hex.
    pub sha256: String,
}

/// The lock file's contents.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Lockfile {
    #[serde(default, rename = "plugin")]
    entries: Vec<LockEntry>,
}

/// What `verify` found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pin {
    /// The digest matches the pin.
    Matched,
    /// The file was not pinned; it is now.
    Added,
}

impl Lockfile {
    /// Read `path`; a missing file is an empty lock.
    pub fn read(path: &Path) -> Result<Self, LockError> {
        match std::fs::read_to_string(path) {
            Ok(text) => toml::from_str(&text)
                .map_err(|e| LockError::Parse { path: path.to_owned(), message: e.to_string() }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Self::default()),
            Err(source) => Err(LockError::Io { path: path.to_owned(), source }),
        }
    }

    /// Write to `path` (sorted by file name).
    pub fn write(&mut self, path: &Path) -> Result<(), LockError> {
        self.entries.sort_by(|a, b| a.file.cmp(&b.file));
        let text = toml::to_string(self)
            .map_err(|e| LockError::Parse { path: path.to_owned(), message: e.to_string() })?;
        let text = format!(
            "# Each plugin file pinned to the sha256 of its bytes; re-pin with `bardo lock`.\n{text}"
        );
        std::fs::write(path, text).map_err(|source| LockError::Io { path: path.to_owned(), source })
    }

    /// Check `file` against its pin, pinning it if it has none.
    pub fn verify(&mut self, file: &str, sha256: &str, lock: &Path) -> Result<Pin, LockError> {
        match self.entries.iter().find(|e| e.file == file) {
            Some(e) if e.sha256 == sha256 => Ok(Pin::Matched),
            Some(e) => Err(LockError::Mismatch {
                file: file.to_owned(),
                expected: e.sha256.clone(),
                actual: sha256.to_owned(),
                lock: lock.to_owned(),
            }),
            None => {
                self.entries.push(LockEntry { file: file.to_owned(), sha256: sha256.to_owned() });
                Ok(Pin::Added)
            }
        }
    }

    /// Pin `file` to `sha256`, replacing any previous pin.
    pub fn pin(&mut self, file: &str, sha256: &str) {
        self.entries.retain(|e| e.file != file);
        self.entries.push(LockEntry { file: file.to_owned(), sha256: sha256.to_owned() });
    }

    /// The pins.
    pub fn entries(&self) -> &[LockEntry] {
        &self.entries
    }
}
