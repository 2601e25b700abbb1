//! `bardo.toml` as the runtime reads it: profile, plugins, lock, cache, limits (global and per
//! profile), tool overrides, capabilities, WASI grants, chains, signer, plugin settings,
//! registries. The other parts' sections (`[safety]`, `[agent]`, `[cluster]`, `[sidecar]`, `[mcp]`,
//! `[tui]`) are kept as read for them ([`Config::section`]); each part defines its own.
//! Relative paths are relative to the file.

pub use crate::distribution::config::{OciSource, RegistryConfig, RegistryLogin, TrustPolicy};
use crate::engine::Limits;
use crate::plugin::WasiPolicy;
pub use bardo_core::config::{ConfigError, Section, Sections};
use bardo_core::tool::RequiredCapability;
use bardo_evm::chain::ChainConfig;
use bardo_evm::signer::SignerConfig;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Per-profile limit overrides (`[profiles.trader] fuel = 20_000_000`).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LimitOverrides {
    /// Guest instructions per call.
    pub fuel: Option<u64>,
    /// Linear memory per instance, bytes.
    pub memory_bytes: Option<usize>,
    /// Largest result a call may return, bytes.
    pub result_max_bytes: Option<usize>,
}

/// `[tools]`: per-tool overrides.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ToolOverrides {
    /// Tools to run even outside the profile's categories.
    pub enable: Vec<String>,
    /// Tools never to run.
    pub disable: Vec<String>,
}

/// `[capabilities]`: what the operator has set up.
#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CapabilityConfig {
    /// Environment variable holding a Uniswap API key; the capability is present when it is set.
    pub uniswap_api_key_env: String,
    /// Whether the agent memory store is enabled.
    pub memory: bool,
}

impl Default for CapabilityConfig {
    fn default() -> Self {
        Self { uniswap_api_key_env: "UNISWAP_API_KEY".into(), memory: false }
    }
}

/// One plugin's settings in `[settings]`.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum PluginSettings {
    /// A JSON file, relative to the configuration file.
    File(PathBuf),
    /// Inline TOML.
    Inline(toml::Table),
}

/// The top-level keys the runtime owns (the fields of [`Config`] below, in step with them): what
/// a mistyped key is compared with, beside the other parts' sections.
pub const RUNTIME_KEYS: &[&str] = &[
    "profile",
    "plugins",
    "lock",
    "cache_dir",
    "limits",
    "profiles",
    "tools",
    "capabilities",
    "wasi",
    "chains",
    "signer",
    "settings",
    "events_journal",
    "registry",
    "oci",
    "archetypes",
];

/// The runtime's part of `bardo.toml`, and the other parts' sections as read.
#[derive(Debug, Clone, Deserialize)]
#[serde(default)]
pub struct Config {
    /// Default profile (`--profile` overrides it).
    pub profile: String,
    /// Plugin files, or directories whose `*.wasm` files are plugins.
    pub plugins: Vec<PathBuf>,
    /// The lock file.
    pub lock: PathBuf,
    /// Compiled-artifact cache directory.
    pub cache_dir: PathBuf,
    /// Limits of every call.
    pub limits: Limits,
    /// Per-profile limit overrides.
    pub profiles: BTreeMap<String, LimitOverrides>,
    /// Per-tool overrides.
    pub tools: ToolOverrides,
    /// Operator capabilities.
    pub capabilities: CapabilityConfig,
    /// WASI grants beyond the minimal set.
    pub wasi: WasiPolicy,
    /// RPC nodes per chain id (`[chains.31337] rpc = "http://127.0.0.1:8545"`).
    pub chains: BTreeMap<String, ChainConfig>,
    /// The signing key.
    pub signer: SignerConfig,
    /// Per-plugin settings, by plugin name: an inline table, or the path of a JSON file
    /// (`[settings] uniswap = ".bardo/devnet/uniswap.json"`).
    pub settings: BTreeMap<String, PluginSettings>,
    /// Where `bardo stream` journals the Event Fabric for `bardo events`.
    pub events_journal: PathBuf,
    /// OCI registries: plain-HTTP ones and the trust policy.
    pub registry: RegistryConfig,
    /// Components pulled from registries, by the name they are loaded under.
    pub oci: BTreeMap<String, OciSource>,
    /// The archetypes (`[archetype.<name>]` tables, see `bardo archetypes check`); default: the
    /// specification's hierarchy, built in.
    pub archetypes: Option<PathBuf>,
    /// The other parts' sections, by name: every key the runtime does not own (checked by
    /// [`Sections::refuse_unknown`] where every part is known).
    #[serde(flatten)]
    other: toml::Table,
    /// What the EVM context is built from, as written (`[chains]` and `[signer]`).
    #[serde(skip)]
    evm_text: String,
    #[serde(skip)]
    path: PathBuf,
    #[serde(skip)]
    base: PathBuf,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            profile: "data".into(),
            plugins: vec![PathBuf::from("plugins")],
            lock: PathBuf::from("bardo.lock"),
            cache_dir: PathBuf::from(".bardo/cache"),
            limits: Limits::default(),
            profiles: BTreeMap::new(),
            tools: ToolOverrides::default(),
            capabilities: CapabilityConfig::default(),
            wasi: WasiPolicy::default(),
            chains: BTreeMap::new(),
            signer: SignerConfig::default(),
            settings: BTreeMap::new(),
            events_journal: PathBuf::from(".bardo/events.jsonl"),
            archetypes: None,
            registry: RegistryConfig::default(),
            oci: BTreeMap::new(),
            other: toml::Table::new(),
            evm_text: String::new(),
            path: PathBuf::from("bardo.toml"),
            base: PathBuf::from("."),
        }
    }
}

impl Config {
    /// Load `path`; when `required` is false a missing file gives the defaults.
    pub fn load(path: &Path, required: bool) -> Result<Self, ConfigError> {
        let text = match std::fs::read_to_string(path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && !required => {
                return Ok(Self::default());
            }
            Err(source) => {
                return Err(ConfigError::Io { path: path.to_owned(), error: source });
            }
        };
        Self::parse(&text, path)
    }

    /// Parse configuration text; `path` anchors relative paths and names errors.
    pub fn parse(text: &str, path: &Path) -> Result<Self, ConfigError> {
        let mut config: Self = toml::from_str(text)
            .map_err(|e| ConfigError::Parse { path: path.to_owned(), message: e.to_string() })?;
        config.base =
            path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new(".")).to_owned();
        config.path = path.to_owned();
        let table: toml::Table = toml::from_str(text).unwrap_or_default();
        let text = |key: &str| table.get(key).map(ToString::to_string).unwrap_or_default();
        config.evm_text = format!("[chains]\n{}\n[signer]\n{}", text("chains"), text("signer"));
        Ok(config)
    }

    /// What the EVM context (chains, simulator, wallet) is built from: a reload keeps the
    /// context while this stays the same.
    pub(crate) fn evm_key(&self) -> String {
        format!("{}\nfrom {}", self.evm_text, self.path.display())
    }

    /// The file it was read from (`bardo.toml` when it was not found and defaults stand).
    pub fn file(&self) -> PathBuf {
        self.path.clone()
    }

    /// The directory relative paths start from.
    pub fn base(&self) -> &Path {
        &self.base
    }

    /// The other parts' sections as read.
    pub fn sections(&self) -> Sections {
        Sections::new(&self.path, self.other.clone())
    }

    /// Section `S` (its defaults when the file has none): a part's own settings.
    pub fn section<S: Section + Default>(&self) -> Result<S, ConfigError> {
        self.sections().get()
    }

    /// Section `S` if the file has one (`[cluster]`: absent means no fleet).
    pub fn optional<S: Section>(&self) -> Result<Option<S>, ConfigError> {
        self.sections().optional()
    }

    /// The chain configurations keyed by chain id.
    pub fn chain_configs(&self) -> Result<BTreeMap<u64, ChainConfig>, ConfigError> {
        self.chains
            .iter()
            .map(|(id, c)| {
                id.parse::<u64>().map(|id| (id, c.clone())).map_err(|_| ConfigError::Parse {
                    path: self.file(),
                    message: format!("[chains.{id}]: the key must be a chain id such as 31337"),
                })
            })
            .collect()
    }

    /// Plugins whose settings file does not exist (yet: `bardo devnet up` writes the devnet's),
    /// with the path looked for. They load; their tools answer `denied` naming the file.
    pub fn missing_settings(&self) -> BTreeMap<String, PathBuf> {
        self.settings
            .iter()
            .filter_map(|(plugin, s)| match s {
                PluginSettings::File(file) => Some((plugin.clone(), self.resolve(file))),
                PluginSettings::Inline(_) => None,
            })
            .filter(|(_, path)| !path.exists())
            .collect()
    }

    /// Every plugin's settings as a JSON object, files read (a missing file is left out: see
    /// [`Self::missing_settings`]).
    pub fn plugin_settings(&self) -> Result<BTreeMap<String, serde_json::Value>, ConfigError> {
        let mut out = BTreeMap::new();
        for (plugin, s) in &self.settings {
            let value = match s {
                PluginSettings::Inline(table) => serde_json::to_value(table).map_err(|e| {
                    ConfigError::Parse { path: self.file(), message: format!("[settings.{plugin}]: {e}") }
                })?,
                PluginSettings::File(file) => {
                    let path = self.resolve(file);
                    let text = match std::fs::read(&path) {
                        // Missing: the plugin loads and its tools say so (`missing_settings`).
                        Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                        read => read.map_err(|error| ConfigError::Io { path: path.clone(), error })?,
                    };
                    serde_json::from_slice(&text).map_err(|e| ConfigError::Parse {
                        path: path.clone(),
                        message: format!("settings of plugin `{plugin}` must be JSON: {e}"),
                    })?
                }
            };
            if !value.is_object() {
                return Err(ConfigError::Parse {
                    path: self.file(),
                    message: format!("the settings of plugin `{plugin}` must be an object"),
                });
            }
            out.insert(plugin.clone(), value);
        }
        Ok(out)
    }

    /// The archetypes: `archetypes` (a TOML file) when set, else the specification's built-in
    /// hierarchy. A file that breaks a delegation rule is an error listing every violation.
    pub fn archetypes(&self) -> Result<bardo_core::archetype::Archetypes, ConfigError> {
        let Some(file) = &self.archetypes else { return Ok(bardo_core::archetype::Archetypes::defaults()) };
        let path = self.resolve(file);
        let text =
            std::fs::read_to_string(&path).map_err(|error| ConfigError::Io { path: path.clone(), error })?;
        bardo_core::archetype::Archetypes::parse(&text).map_err(|errors| ConfigError::Parse {
            path,
            message: errors.iter().map(ToString::to_string).collect::<Vec<_>>().join("; "),
        })
    }

    /// `p` resolved against the configuration file's directory.
    pub fn resolve(&self, p: &Path) -> PathBuf {
        if p.is_absolute() { p.to_owned() } else { self.base.join(p) }
    }

    /// The limits for a profile spec: the global limits, raised by any composed profile's
    /// overrides (composition widens, like the tool set).
    pub fn limits_for(&self, spec: &str) -> Limits {
        let overrides: Vec<&LimitOverrides> =
            spec.split(',').filter_map(|p| self.profiles.get(p.trim())).collect();
        let mut limits = self.limits.clone();
        if let Some(v) = overrides.iter().filter_map(|o| o.fuel).max() {
            limits.fuel = v;
        }
        if let Some(v) = overrides.iter().filter_map(|o| o.memory_bytes).max() {
            limits.memory_bytes = v;
        }
        if let Some(v) = overrides.iter().filter_map(|o| o.result_max_bytes).max() {
            limits.result_max_bytes = v;
        }
        limits
    }

    /// The capabilities present: `wallet` when a signer is configured, `uniswap_api` when its
    /// key variable is set, `memory` when enabled.
    pub fn capabilities(&self, wallet: bool) -> Vec<RequiredCapability> {
        let mut caps = Vec::new();
        if wallet {
            caps.push(RequiredCapability::Wallet);
        }
        if std::env::var(&self.capabilities.uniswap_api_key_env).is_ok_and(|v| !v.is_empty()) {
            caps.push(RequiredCapability::UniswapApi);
        }
        if self.capabilities.memory {
            caps.push(RequiredCapability::Memory);
        }
        caps
    }

    /// The plugin files: listed files, plus the `*.wasm` files of listed directories (sorted).
    pub fn plugin_files(&self) -> Result<Vec<PathBuf>, ConfigError> {
        let mut files = Vec::new();
        for p in &self.plugins {
            let p = self.resolve(p);
            if p.is_dir() {
                let entries =
                    std::fs::read_dir(&p).map_err(|error| ConfigError::Io { path: p.clone(), error })?;
                let mut found: Vec<PathBuf> = entries
                    .filter_map(Result::ok)
                    .map(|e| e.path())
                    .filter(|f| f.extension().is_some_and(|x| x == "wasm"))
                    .collect();
                found.sort();
                files.extend(found);
            } else if p.extension().is_none() && !p.exists() {
                // A directory that is not there loads nothing, silently: say so instead.
                return Err(ConfigError::Missing {
                    path: p,
                    hint: "the configuration's `plugins` names it (by default ./plugins); `make plugins` builds this repository's \
                           plugins into .bardo/plugins, or point `plugins` at yours"
                        .into(),
                });
            } else {
                files.push(p);
            }
        }
        Ok(files)
    }
}

#[cfg(test)]
mod runtime_keys {
    /// Each listed key is the runtime's: a value of the wrong type is refused, not passed on as
    /// another part's section.
    #[test]
    fn each_runtime_key_is_a_field_of_the_config() {
        for key in super::RUNTIME_KEYS {
            let text = format!("{key} = {{ not_a_field_of_anything = 1 }}\n");
            let parsed = super::Config::parse(&text, std::path::Path::new("bardo.toml"));
            assert!(!parsed.is_ok_and(|c| c.other.contains_key(*key)), "`{key}` is not a field of Config");
        }
    }
}
