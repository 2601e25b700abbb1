//! `bardo.lock`: each plugin file pinned to the sha256 of its bytes. A new plugin is pinned on
//! first load; a changed one is refused until the operator re-pins it with `bardo lock`.

use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// Lock file errors.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    /// The lock file could not be read or written.
    #[error("cannot access {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// What the operating system said.
        source: std::io::Error,
    },
    /// The lock file is not valid.
    #[error("{path} is not a valid lock file: {message}; fix or delete it, then run `bardo lock`")]
    Parse {
        /// The lock file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// A plugin file's bytes differ from its pin.
    #[error(
        "plugin {file} has sha256 {actual}, but {lock} pins {expected}; if you replaced it on purpose, re-pin it with `bardo lock`"
    )]
    Mismatch {
        /// The plugin file.
        file: String,
        /// The pinned sha256.
        expected: String,
        /// The sha256 of its bytes now.
        actual: String,
        /// The lock file.
        lock: PathBuf,
    },
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
    /// Components pulled from OCI registries, pinned by manifest digest; these are loaded.
    #[serde(default, rename = "oci")]
    pub oci: Vec<OciPin>,
    /// Pulled updates whose capability surface grew: inactive until `bardo plugin approve`.
    #[serde(default, rename = "pending")]
    pub pending: Vec<OciPin>,
}

/// One pulled component.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OciPin {
    /// The name it is loaded and routed under (`[oci.NAME]` in bardo.toml).
    pub name: String,
    /// The reference it was pulled as (`registry/repository:version`).
    pub reference: String,
    /// The manifest digest (what signatures sign).
    pub digest: String,
    /// The component layer's digest (the cached file is checked against it before every use).
    pub layer: String,
    /// The plugin's version.
    pub version: String,
}

impl OciPin {
    /// `registry/repository@digest`: exactly the pinned manifest.
    pub fn pinned_reference(&self) -> String {
        let repo = self.reference.split('@').next().unwrap_or(&self.reference);
        // Strip a tag (after the last ':' that follows the last '/').
        let slash = repo.rfind('/').unwrap_or(0);
        let repo = match repo[slash..].rfind(':') {
            Some(i) => &repo[..slash + i],
            None => repo,
        };
        format!("{repo}@{}", self.digest)
    }
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
            "# Each plugin file pinned to the sha256 of its bytes (re-pin with `bardo lock`), and each\n\
             # pulled component to its manifest digest (`bardo plugin pull`, `bardo plugin approve`).\n{text}"
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

    /// Drop the file pins (the OCI pins stay): `bardo lock` re-pins the files.
    pub fn clear_files(&mut self) {
        self.entries.clear();
    }

    /// The active pin named `name`.
    pub fn oci_pin(&self, name: &str) -> Option<&OciPin> {
        self.oci.iter().find(|p| p.name == name)
    }

    /// Make `pin` the active one for its name (dropping any pending update of that name).
    pub fn set_oci(&mut self, pin: OciPin) {
        self.oci.retain(|p| p.name != pin.name);
        self.pending.retain(|p| p.name != pin.name);
        self.oci.push(pin);
        self.oci.sort_by(|a, b| a.name.cmp(&b.name));
    }

    /// Hold `pin` for approval (replacing an older pending update of that name).
    pub fn set_pending(&mut self, pin: OciPin) {
        self.pending.retain(|p| p.name != pin.name);
        self.pending.push(pin);
        self.pending.sort_by(|a, b| a.name.cmp(&b.name));
    }
}
