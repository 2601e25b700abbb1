//! `bardo.toml` is one file that several parts of the host read, each owning its own section:
//! the runtime its top-level keys, the write path `[safety]`, the agent `[agent]`, the fleet
//! `[cluster]`, the sidecar `[sidecar]`, `bardo mcp` `[mcp]`, the dashboard `[tui]`. A part
//! declares its section with [`Section`] and reads it from [`Sections`]; the binary, which knows
//! every part, refuses a key that none owns. Unknown keys inside a section are refused by the
//! section itself (`deny_unknown_fields`), with the file and the key named.

use serde::de::DeserializeOwned;
use std::path::{Path, PathBuf};

/// Why `bardo.toml` (or a file it names) cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file could not be read. (Said once: the OS error is part of this message, not
    /// a cause printed again after it.)
    #[error("cannot read {path}: {error}{}", missing_hint(error))]
    Io {
        /// The file.
        path: PathBuf,
        /// What the operating system said.
        error: std::io::Error,
    },
    /// A path the configuration names does not exist.
    #[error("{path} does not exist: {hint}")]
    Missing {
        /// The path.
        path: PathBuf,
        /// Where it comes from and how to make it.
        hint: String,
    },
    /// The file is not valid TOML for this schema.
    #[error("{path} is not valid: {message}")]
    Parse {
        /// The file.
        path: PathBuf,
        /// What is wrong, and where.
        message: String,
    },
}

/// What to do about a configuration file that is not there.
fn missing_hint(error: &std::io::Error) -> &'static str {
    match error.kind() {
        std::io::ErrorKind::NotFound => "; `bardo init` writes a commented one (with --config for this path)",
        _ => "",
    }
}

/// A table of `bardo.toml` that one part of the host owns.
pub trait Section: DeserializeOwned {
    /// Its name: `[safety]` is `safety`.
    const NAME: &'static str;
}

/// The tables of `bardo.toml` the runtime does not own, by name, for the parts that do.
#[derive(Debug, Clone, Default)]
pub struct Sections {
    file: PathBuf,
    tables: toml::Table,
}

impl Sections {
    /// `tables` as read from `file` (which errors name).
    pub fn new(file: &Path, tables: toml::Table) -> Self {
        Self { file: file.to_owned(), tables }
    }

    /// Section `S`: its defaults when the file has none.
    pub fn get<S: Section + Default>(&self) -> Result<S, ConfigError> {
        Ok(self.optional()?.unwrap_or_default())
    }

    /// Section `S` if the file has one.
    pub fn optional<S: Section>(&self) -> Result<Option<S>, ConfigError> {
        let Some(value) = self.tables.get(S::NAME) else { return Ok(None) };
        value.clone().try_into().map(Some).map_err(|e: toml::de::Error| {
            let message = e.message().trim_end();
            ConfigError::Parse {
                path: self.file.clone(),
                message: format!("[{}]: {message}{}", S::NAME, unknown_field_hint(message)),
            }
        })
    }

    /// Section `name` as written, if the file has one (to tell whether it changed).
    pub fn raw(&self, name: &str) -> Option<&toml::Value> {
        self.tables.get(name)
    }

    /// Refuse every key no part owns: `known` names the sections the host's parts read,
    /// `runtime` the runtime's own keys (which a typo may have meant).
    pub fn refuse_unknown(&self, known: &[&str], runtime: &[&str]) -> Result<(), ConfigError> {
        match self.tables.keys().find(|k| !known.contains(&k.as_str())) {
            None => Ok(()),
            Some(key) => Err(ConfigError::Parse {
                path: self.file.clone(),
                message: format!(
                    "unknown key `{key}`{}: it is neither a setting of the runtime nor one of the sections [{}]",
                    crate::suggest::hint(key, known.iter().chain(runtime).copied()),
                    known.join("], [")
                ),
            }),
        }
    }
}

/// serde's "unknown field `ttl_sec`, expected one of `ttl_secs`, …" with the one meant, if one
/// is close: `; did you mean `ttl_secs`?`.
fn unknown_field_hint(message: &str) -> String {
    let Some(rest) = message.strip_prefix("unknown field `") else { return String::new() };
    let Some((typed, expected)) = rest.split_once('`') else { return String::new() };
    let candidates = expected.split('`').skip(1).step_by(2);
    crate::suggest::hint(typed, candidates)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Default, PartialEq, serde::Deserialize)]
    #[serde(default, deny_unknown_fields)]
    struct Demo {
        size: u32,
    }

    impl Section for Demo {
        const NAME: &'static str = "demo";
    }

    fn sections(text: &str) -> Sections {
        Sections::new(Path::new("/x/bardo.toml"), toml::from_str(text).expect("toml"))
    }

    #[test]
    fn a_section_reads_its_table_refuses_its_unknown_keys_and_defaults_when_absent() {
        assert_eq!(sections("[demo]\nsize = 3").get::<Demo>().expect("demo"), Demo { size: 3 });
        assert_eq!(sections("").get::<Demo>().expect("default"), Demo::default());
        let e = sections("[demo]\nsise = 3").get::<Demo>().expect_err("typo").to_string();
        assert!(e.contains("/x/bardo.toml") && e.contains("[demo]") && e.contains("sise"), "{e}");
        assert!(e.contains("did you mean `size`?"), "{e}");
    }

    #[test]
    fn a_key_no_part_owns_is_refused_by_name() {
        let s = sections("[demo]\nsize = 3\n[demoo]\nsize = 1");
        assert!(s.refuse_unknown(&["demo", "demoo"], &[]).is_ok());
        let e = s.refuse_unknown(&["demo"], &["size"]).expect_err("unknown").to_string();
        assert!(e.contains("`demoo`; did you mean `demo`?") && e.contains("[demo]"), "{e}");
    }
}
