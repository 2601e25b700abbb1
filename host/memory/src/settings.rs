//! `[memory]` in bardo.toml: where the store and the model are. Memory is on when
//! `[capabilities] memory = true`; its tools run under the `learning` profile.

use serde::Deserialize;
use std::path::PathBuf;

/// `[memory]`.
#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct MemorySettings {
    /// The SQLite file (the grimoire's, by default).
    pub path: PathBuf,
    /// The embedding model's directory (`scripts/fetch-model.sh` unpacks all-MiniLM-L6-v2
    /// into `.cache/models/all-MiniLM-L6-v2`); none: memory is searched by words only.
    pub model: Option<PathBuf>,
    /// This host's name on the episodes it records; default: the fleet's host name, else the
    /// machine's.
    pub origin: Option<String>,
}

impl Default for MemorySettings {
    fn default() -> Self {
        Self { path: PathBuf::from(".bardo/grimoire.sqlite"), model: None, origin: None }
    }
}

impl bardo_core::config::Section for MemorySettings {
    const NAME: &'static str = "memory";
}
