//! `bardo.toml`: profile, plugins, lock, cache, limits (global and per profile), tool overrides,
//! capabilities and WASI grants. Relative paths are relative to the file.

use crate::engine::Limits;
use crate::plugin::WasiPolicy;
use bardo_core::tool::RequiredCapability;
use bardo_evm::chain::ChainConfig;
use bardo_evm::signer::SignerConfig;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Configuration errors.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file could not be read.
    #[error("cannot read {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// What the operating system said.
        source: std::io::Error,
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

/// Allowlisted contracts of one chain and their roles.
pub type AllowedContracts = BTreeMap<alloy::primitives::Address, bardo_core::scope::Role>;

/// One chain's allowlist: addresses (each an ERC-20) or addresses with their roles.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum AllowEntries {
    /// Tokens: a plan may only `approve` them to allowlisted spenders.
    Tokens(Vec<alloy::primitives::Address>),
    /// Contracts and their roles.
    Roles(BTreeMap<alloy::primitives::Address, bardo_core::scope::Role>),
}

impl AllowEntries {
    fn into_roles(self) -> BTreeMap<alloy::primitives::Address, bardo_core::scope::Role> {
        match self {
            Self::Tokens(list) => list.into_iter().map(|a| (a, bardo_core::scope::Role::Erc20)).collect(),
            Self::Roles(map) => map,
        }
    }
}

/// `[safety]`: the write path's policy and state files.
#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SafetyConfig {
    /// How long a permit stays valid, seconds.
    pub ttl_secs: u64,
    /// The agent's phase; writes are gated by it.
    pub phase: bardo_core::tool::Phase,
    /// The phase a write whose receipts diverge from its declaration moves the host to
    /// (default `cautious`; it never raises the phase).
    pub mismatch_phase: bardo_core::tool::Phase,
    /// The hash-linked audit log.
    pub audit_log: PathBuf,
    /// The emergency halt, shared by every `bardo` process; each permit (open or settled within
    /// a day) is a file in `<permits>.d/` beside it.
    pub permits: PathBuf,
    /// Contracts writes may call, approve or pay, per chain id: a list of token addresses, or a
    /// table of address → role (`uniswap-v3-swap-router`, `aave-v3-pool`, …; see
    /// `bardo_core::scope::Role`) — the role says which functions a plan may call.
    pub allowlist: BTreeMap<String, AllowEntries>,
    /// More allowlist entries from a JSON file of the same shape (the devnet writes one).
    pub allowlist_file: Option<PathBuf>,
    /// Where the host reads token prices, per chain id (`[safety.pricing.31337] usd_tokens,
    /// v3_factory, weth, aave_oracle, fee_tiers, max_divergence_bps`); spending limits and the
    /// position cap need the chains they value tokens on.
    pub pricing: BTreeMap<String, crate::safety::valuation::PricingConfig>,
    /// More pricing entries from a JSON file of the same shape (the devnet writes one); a chain
    /// also in `[safety.pricing]` takes bardo.toml's entry.
    pub pricing_file: Option<PathBuf>,
    /// USD spending limits (`[safety.spending] per_tx_usd, per_day_usd`); none = no limit.
    pub spending: Option<crate::safety::spending::SpendingLimits>,
    /// Most write previews per minute; none = no limit.
    pub previews_per_minute: Option<usize>,
    /// Tokens a write may acquire, per chain id; a chain not listed is not restricted.
    pub approved_assets: BTreeMap<String, Vec<alloy::primitives::Address>>,
    /// The most a single token holding may be worth after a write, whole USD; none = no cap.
    pub max_position_usd: Option<u64>,
    /// The most a write may lose in value, basis points of what it gives (fees and price
    /// impact; default 300). More is refused, whatever the plan declares.
    pub max_value_loss_bps: u32,
    /// The spending ledger every `bardo` process shares (reservations and spend).
    pub spending_ledger: PathBuf,
    /// The host's secret MAC key (created 0600 on first use): it authenticates the audit log's
    /// checkpoint and seals permits, so a permit written into `permits` by anyone else is
    /// refused. Keep it out of the repository, beside the signer's secrets.
    pub host_key: PathBuf,
}

impl Default for SafetyConfig {
    fn default() -> Self {
        Self {
            ttl_secs: 60,
            phase: bardo_core::tool::Phase::Thriving,
            mismatch_phase: bardo_core::tool::Phase::Cautious,
            audit_log: PathBuf::from(".bardo/audit.jsonl"),
            permits: PathBuf::from(".bardo/permits.json"),
            allowlist: BTreeMap::new(),
            allowlist_file: None,
            pricing: BTreeMap::new(),
            pricing_file: None,
            spending: None,
            previews_per_minute: None,
            approved_assets: BTreeMap::new(),
            max_position_usd: None,
            max_value_loss_bps: crate::safety::value_guard::DEFAULT_MAX_LOSS_BPS,
            spending_ledger: PathBuf::from(".bardo/spending.json"),
            host_key: PathBuf::from(".bardo/host.key"),
        }
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

/// `[registry]`: how components are pulled.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RegistryConfig {
    /// Registries (`host:port`) spoken to over plain HTTP; every other one over HTTPS.
    pub insecure: Vec<String>,
    /// Refuse any component no trust policy covers (by default only covered ones need a signature).
    pub require_signatures: bool,
    /// Signer keys per repository namespace.
    pub trust: Vec<TrustPolicy>,
    /// Logins, by registry; registries not listed use Docker's `config.json`, else none.
    pub auth: Vec<RegistryLogin>,
}

/// `[[registry.auth]]`: a login for one registry. The password (or token) is read from the
/// environment, so the configuration file holds no secret.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RegistryLogin {
    /// `host[:port]`, as written in references (`ghcr.io`).
    pub registry: String,
    /// The user name to log in with.
    pub username: String,
    /// The environment variable holding the password or token.
    pub password_env: String,
}

/// `[[registry.trust]]`: components under `prefix` must be signed by one of `keys`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TrustPolicy {
    /// A reference prefix, e.g. `127.0.0.1:5000/bardo/`.
    pub prefix: String,
    /// PEM public keys (P-256), relative to the configuration file.
    pub keys: Vec<PathBuf>,
}

/// `[oci.NAME]`: a component to pull and load, optionally only in some profiles (a canary).
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum OciSource {
    /// Just the reference: every profile.
    Reference(String),
    /// A reference routed to the listed profiles.
    Routed {
        /// The component's reference (`host/repo:tag` or `@sha256:...`).
        reference: String,
        /// The profiles that load it; empty: every profile.
        #[serde(default)]
        profiles: Vec<String>,
        /// Serve it beside a newer version of the same plugin: each tool as
        /// `<tool>_v<schema_version>`, each action kind likewise (schema versioning: an old
        /// version stays available after a breaking release).
        #[serde(default)]
        side_by_side: bool,
    },
}

impl OciSource {
    /// The reference to pull.
    pub fn reference(&self) -> &str {
        match self {
            Self::Reference(r) | Self::Routed { reference: r, .. } => r,
        }
    }

    /// Whether it is served beside a newer version of its plugin (`side_by_side = true`).
    pub fn side_by_side(&self) -> bool {
        matches!(self, Self::Routed { side_by_side: true, .. })
    }

    /// Whether a host for profile `spec` (`trader` or `trader,vault`) loads it.
    pub fn routed_to(&self, spec: &str) -> bool {
        match self {
            Self::Reference(_) => true,
            Self::Routed { profiles, .. } => {
                profiles.is_empty() || spec.split(',').any(|p| profiles.iter().any(|q| q == p.trim()))
            }
        }
    }

    /// The profiles it is routed to (empty: all).
    pub fn profiles(&self) -> &[String] {
        match self {
            Self::Reference(_) => &[],
            Self::Routed { profiles, .. } => profiles,
        }
    }
}

/// `[agent]`: what the agent-facing tools keep and search.
#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct AgentConfig {
    /// The grimoire: committed actions and standing directives (SQLite).
    pub grimoire: PathBuf,
    /// The operator's context files `search_context` ranks; missing ones are skipped.
    pub context: Vec<PathBuf>,
    /// Where `bardo serve --a2a` keeps its tasks (a directory, one file a task).
    pub a2a_tasks: PathBuf,
    /// Prefetch the reads that usually follow a read (the speculation engine).
    pub speculation: bool,
    /// The probability from which a next read is prefetched.
    pub speculation_threshold: f64,
    /// A tick: prefetched results are kept this long at most, then discarded.
    pub tick_secs: u64,
    /// Where the learned co-occurrence counts are kept.
    pub speculation_file: PathBuf,
}

impl Default for AgentConfig {
    fn default() -> Self {
        Self {
            grimoire: PathBuf::from(".bardo/grimoire.sqlite"),
            context: vec![PathBuf::from("PLAYBOOK.md"), PathBuf::from("STRATEGY.md")],
            a2a_tasks: PathBuf::from(".bardo/a2a-tasks"),
            speculation: false,
            speculation_threshold: crate::speculation::DEFAULT_THRESHOLD,
            tick_secs: 30,
            speculation_file: PathBuf::from(".bardo/speculation.json"),
        }
    }
}

/// `[mcp]`: who may reach `bardo mcp --http`. Tokens never live in this file: they come from
/// an environment variable or a token file.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct McpConfig {
    /// An environment variable holding bearer tokens, comma-separated.
    pub tokens_env: Option<String>,
    /// A file of bearer tokens, one per line (`#` comments), relative to this file.
    pub token_file: Option<PathBuf>,
    /// Browser origins allowed besides loopback ones (`https://app.example.com:443`); any
    /// other `Origin` is refused (DNS-rebinding protection).
    pub allowed_origins: Vec<String>,
    /// `Host` header values allowed besides loopback and the listen address's host.
    pub allowed_hosts: Vec<String>,
}

/// `[sidecar]`: Uniswap's own SDKs in a Node process (`sidecar/`, installed by `make setup`),
/// for the write path's cross-check of every Uniswap swap a plan simulates.
#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SidecarSettings {
    /// The `sidecar/` directory, relative to this file; none: no sidecar.
    pub dir: Option<PathBuf>,
    /// Run the cross-check (default true when `dir` is set).
    pub cross_check: bool,
    /// The directory its socket lives in (default `.bardo`).
    pub state_dir: PathBuf,
    /// The plugins granted `bardo:host/uniswap-sdk` (routes by the SDKs), by name.
    pub grant: Vec<String>,
}

impl Default for SidecarSettings {
    fn default() -> Self {
        Self { dir: None, cross_check: true, state_dir: PathBuf::from(".bardo"), grant: Vec::new() }
    }
}

/// The whole configuration.
#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
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
    /// The write path.
    pub safety: SafetyConfig,
    /// Where `bardo stream` journals the Event Fabric for `bardo events`.
    pub events_journal: PathBuf,
    /// OCI registries: plain-HTTP ones and the trust policy.
    pub registry: RegistryConfig,
    /// Components pulled from registries, by the name they are loaded under.
    pub oci: BTreeMap<String, OciSource>,
    /// The agent-facing tools' state and context.
    pub agent: AgentConfig,
    /// `bardo mcp`'s HTTP access.
    pub mcp: McpConfig,
    /// Uniswap's SDKs for the cross-check.
    pub sidecar: SidecarSettings,
    /// The archetypes (`[archetype.<name>]` tables, see `bardo archetypes check`); default: the
    /// specification's hierarchy, built in.
    pub archetypes: Option<PathBuf>,
    /// A fleet's shared state on NATS JetStream; absent: everything stays in this machine's files.
    pub cluster: Option<ClusterSettings>,
    /// `bardo tui`: the stream subscriptions it runs itself.
    pub tui: TuiSettings,
    #[serde(skip)]
    base: PathBuf,
}

/// `[tui]`: what `bardo tui` follows live. With none it follows the events journal that
/// another process (`bardo stream`, `bardo serve`) writes.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TuiSettings {
    /// Stream subscriptions (`[[tui.follow]] tool = "stream_pool_state"`, `params = {…}`).
    pub follow: Vec<TuiFollow>,
}

/// One stream subscription of `bardo tui`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TuiFollow {
    /// The stream tool.
    pub tool: String,
    /// Its params (an inline table).
    #[serde(default = "TuiFollow::no_params")]
    pub params: serde_json::Value,
}

impl TuiFollow {
    fn no_params() -> serde_json::Value {
        serde_json::json!({})
    }
}

/// `[cluster]`: permits, the spending ledger, the halt and the audit chain shared by every host
/// of a fleet through NATS JetStream. Credentials come from a creds file or the environment,
/// never from this file.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClusterSettings {
    /// Server URLs, `["nats://10.0.0.1:4222", …]`.
    pub nats: Vec<String>,
    /// The fleet's name (its streams are `BARDO_<name>_…`): hosts with the same name share state.
    #[serde(default = "ClusterSettings::default_name")]
    pub name: String,
    /// A NATS `.creds` file (relative to bardo.toml); else `$BARDO_NATS_CREDS` if set.
    #[serde(default)]
    pub creds: Option<PathBuf>,
    /// The environment variable holding a token, if the servers want one.
    #[serde(default = "ClusterSettings::default_token_env")]
    pub token_env: String,
    /// Copies of each stream (3 on a three-node cluster: writes go on with one node down).
    #[serde(default = "ClusterSettings::default_replicas")]
    pub replicas: usize,
    /// How long one operation may take before it fails (retryable), milliseconds.
    #[serde(default = "ClusterSettings::default_timeout_ms")]
    pub timeout_ms: u64,
    /// This host's name in the fleet's events (letters, digits, `_`, `-`); default: the
    /// machine's host name.
    #[serde(default)]
    pub host: Option<String>,
    /// How long a host holds a fleet subscription's lease without renewing it (it renews every
    /// third of that): the longest a dead host's subscriptions go undelivered, milliseconds.
    #[serde(default = "ClusterSettings::default_lease_ms")]
    pub lease_ms: u64,
}

impl ClusterSettings {
    fn default_name() -> String {
        "bardo".into()
    }
    fn default_token_env() -> String {
        "BARDO_NATS_TOKEN".into()
    }
    fn default_replicas() -> usize {
        1
    }
    fn default_timeout_ms() -> u64 {
        5_000
    }
    fn default_lease_ms() -> u64 {
        10_000
    }
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
            safety: SafetyConfig::default(),
            events_journal: PathBuf::from(".bardo/events.jsonl"),
            archetypes: None,
            cluster: None,
            tui: TuiSettings::default(),
            registry: RegistryConfig::default(),
            oci: BTreeMap::new(),
            agent: AgentConfig::default(),
            mcp: McpConfig::default(),
            sidecar: SidecarSettings::default(),
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
                return Err(ConfigError::Io { path: path.to_owned(), source });
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
        Ok(config)
    }

    /// The chain configurations keyed by chain id.
    pub fn chain_configs(&self) -> Result<BTreeMap<u64, ChainConfig>, ConfigError> {
        self.chains
            .iter()
            .map(|(id, c)| {
                id.parse::<u64>().map(|id| (id, c.clone())).map_err(|_| ConfigError::Parse {
                    path: self.base.join("bardo.toml"),
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
                PluginSettings::Inline(table) => {
                    serde_json::to_value(table).map_err(|e| ConfigError::Parse {
                        path: self.base.join("bardo.toml"),
                        message: format!("[settings.{plugin}]: {e}"),
                    })?
                }
                PluginSettings::File(file) => {
                    let path = self.resolve(file);
                    let text = match std::fs::read(&path) {
                        // Missing: the plugin loads and its tools say so (`missing_settings`).
                        Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                        read => read.map_err(|source| ConfigError::Io { path: path.clone(), source })?,
                    };
                    serde_json::from_slice(&text).map_err(|e| ConfigError::Parse {
                        path: path.clone(),
                        message: format!("settings of plugin `{plugin}` must be JSON: {e}"),
                    })?
                }
            };
            if !value.is_object() {
                return Err(ConfigError::Parse {
                    path: self.base.join("bardo.toml"),
                    message: format!("the settings of plugin `{plugin}` must be an object"),
                });
            }
            out.insert(plugin.clone(), value);
        }
        Ok(out)
    }

    /// The write allowlist per chain, with roles: `[safety] allowlist` plus `allowlist_file`.
    pub fn allowlist(&self) -> Result<BTreeMap<u64, AllowedContracts>, ConfigError> {
        let mut entries: BTreeMap<String, AllowedContracts> =
            self.safety.allowlist.iter().map(|(chain, e)| (chain.clone(), e.clone().into_roles())).collect();
        if let Some(file) = &self.safety.allowlist_file {
            let path = self.resolve(file);
            let text =
                std::fs::read(&path).map_err(|source| ConfigError::Io { path: path.clone(), source })?;
            let more: BTreeMap<String, AllowEntries> = serde_json::from_slice(&text)
                .map_err(|e| ConfigError::Parse { path: path.clone(), message: e.to_string() })?;
            for (chain, list) in more {
                entries.entry(chain).or_default().extend(list.into_roles());
            }
        }
        entries
            .into_iter()
            .map(|(chain, roles)| {
                let id = chain.parse::<u64>().map_err(|_| ConfigError::Parse {
                    path: self.base.join("bardo.toml"),
                    message: format!("[safety.allowlist] key {chain:?} must be a chain id"),
                })?;
                Ok((id, roles))
            })
            .collect()
    }

    /// Where the valuer reads prices, by chain id: `pricing_file`'s entries, each replaced by a
    /// `[safety.pricing.<chain id>]` table for the same chain.
    pub fn pricing(&self) -> Result<BTreeMap<u64, crate::safety::valuation::PricingConfig>, ConfigError> {
        use crate::safety::valuation::PricingConfig;
        let mut pricing = BTreeMap::new();
        if let Some(file) = &self.safety.pricing_file {
            let path = self.resolve(file);
            let invalid = |message: String| ConfigError::Parse { path: path.clone(), message };
            let text =
                std::fs::read(&path).map_err(|source| ConfigError::Io { path: path.clone(), source })?;
            let value: serde_json::Value =
                serde_json::from_slice(&text).map_err(|e| invalid(e.to_string()))?;
            pricing = PricingConfig::from_json(value).map_err(invalid)?;
        }
        let inline =
            PricingConfig::by_chain(self.safety.pricing.clone()).map_err(|e| ConfigError::Parse {
                path: self.base.join("bardo.toml"),
                message: format!("[safety.pricing]: {e}"),
            })?;
        pricing.extend(inline);
        Ok(pricing)
    }

    /// `[safety.approved_assets]` by chain id.
    pub fn approved_assets(
        &self,
    ) -> Result<BTreeMap<u64, std::collections::BTreeSet<alloy::primitives::Address>>, ConfigError> {
        self.safety
            .approved_assets
            .iter()
            .map(|(chain, list)| {
                let id = chain.parse::<u64>().map_err(|_| ConfigError::Parse {
                    path: self.base.join("bardo.toml"),
                    message: format!("[safety.approved_assets] key {chain:?} must be a chain id"),
                })?;
                Ok((id, list.iter().copied().collect()))
            })
            .collect()
    }

    /// The archetypes: `archetypes` (a TOML file) when set, else the specification's built-in
    /// hierarchy. A file that breaks a delegation rule is an error listing every violation.
    pub fn archetypes(&self) -> Result<bardo_core::archetype::Archetypes, ConfigError> {
        let Some(file) = &self.archetypes else { return Ok(bardo_core::archetype::Archetypes::defaults()) };
        let path = self.resolve(file);
        let text = std::fs::read_to_string(&path)
            .map_err(|source| ConfigError::Io { path: path.clone(), source })?;
        bardo_core::archetype::Archetypes::parse(&text).map_err(|errors| ConfigError::Parse {
            path,
            message: errors.iter().map(ToString::to_string).collect::<Vec<_>>().join("; "),
        })
    }

    /// `[cluster]` as the NATS client takes it: the creds file resolved (or `$BARDO_NATS_CREDS`),
    /// the token read from its environment variable. None without `[cluster]`.
    pub fn cluster_config(&self) -> Option<bardo_cluster::ClusterConfig> {
        let c = self.cluster.as_ref()?;
        let creds = c
            .creds
            .as_ref()
            .map(|p| self.resolve(p))
            .or_else(|| std::env::var_os("BARDO_NATS_CREDS").map(PathBuf::from));
        Some(bardo_cluster::ClusterConfig {
            servers: c.nats.clone(),
            name: c.name.clone(),
            creds,
            token: std::env::var(&c.token_env).ok().filter(|t| !t.is_empty()),
            replicas: c.replicas,
            timeout: std::time::Duration::from_millis(c.timeout_ms.max(1)),
        })
    }

    /// This host's name in the fleet's events, with `[cluster]`.
    pub fn cluster_host(&self) -> Option<String> {
        let c = self.cluster.as_ref()?;
        Some(c.host.clone().unwrap_or_else(crate::fleet_events::default_host))
    }

    /// How long a fleet subscription's lease lives unrenewed (`[cluster] lease_ms`).
    pub fn cluster_lease(&self) -> std::time::Duration {
        let ms = self.cluster.as_ref().map_or(ClusterSettings::default_lease_ms(), |c| c.lease_ms);
        std::time::Duration::from_millis(ms)
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
                    std::fs::read_dir(&p).map_err(|source| ConfigError::Io { path: p.clone(), source })?;
                let mut found: Vec<PathBuf> = entries
                    .filter_map(Result::ok)
                    .map(|e| e.path())
                    .filter(|f| f.extension().is_some_and(|x| x == "wasm"))
                    .collect();
                found.sort();
                files.extend(found);
            } else {
                files.push(p);
            }
        }
        Ok(files)
    }
}
