//! The contexts behind the host imports, one per capability (see `caps::CAPABILITIES`), each
//! built from its part of bardo.toml: the EVM context (`[chains]`, the signer) for `chain`,
//! `simulate`, `signer` and `testnet`; the plugins' settings (`[settings]`) for `config`; the
//! sidecar (`[sidecar]`) for `uniswap-sdk`. Shared by `Arc`: the imports, the write path and the
//! stream subscriptions of one generation borrow the same instance, so there is one RPC cache,
//! one warm fork and one sidecar. A reload builds new services, keeping each context whose
//! section did not change (`setup::services`). The contexts are defined here, apart from the
//! import modules that read them, so that nothing in `caps` imports back from a module that
//! imports it.

use alloy::primitives::Address;
use bardo_core::Runtime;
use bardo_evm::Evm;
use bardo_sidecar::Sidecar;
use bardo_sidecar::book::UniswapBook;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

/// The host's per-capability contexts.
#[derive(Debug)]
pub struct Services {
    /// Chains, fork simulator and wallet: `chain`, `simulate`, `signer`, `testnet`, and what
    /// the write path simulates and signs with.
    pub evm: Arc<Evm>,
    /// Operator settings per plugin: `config`.
    pub settings: Arc<Settings>,
    /// Uniswap's SDKs (the sidecar): `uniswap-sdk`, and the write path's cross-check.
    pub uniswap_sdk: Option<Arc<UniswapSdk>>,
    /// The agent's memory (`[capabilities] memory`): `memory`, and what the write path records
    /// its writes in.
    pub memory: Option<bardo_memory::Memory>,
    /// What the EVM and sidecar contexts were built from (the sections' text), so a reload
    /// can tell whether to keep them.
    keys: (String, String),
}

impl Services {
    /// No chains, no wallet, no settings: what a host that only reads manifests needs.
    pub fn empty(runtime: &Runtime) -> Self {
        Self::new(Evm::none(runtime))
    }

    /// Reading chains, simulating and signing with `evm`; no settings or sidecar yet.
    pub fn new(evm: Evm) -> Self {
        Self::over(Arc::new(evm))
    }

    /// [`Self::new`] on an EVM context already shared (a reload that kept it).
    pub fn over(evm: Arc<Evm>) -> Self {
        Self { evm, settings: Arc::default(), uniswap_sdk: None, memory: None, keys: Default::default() }
    }

    /// Serve `settings` (plugin name → JSON object) through `bardo:host/config`; `missing`:
    /// plugins whose settings file does not exist yet.
    pub fn with_settings(
        mut self,
        settings: BTreeMap<String, serde_json::Value>,
        missing: BTreeMap<String, PathBuf>,
    ) -> Self {
        self.settings = Arc::new(Settings::new(settings, missing));
        self
    }

    /// Serve `bardo:host/uniswap-sdk` through `sdk` (to the plugins it grants).
    pub fn with_uniswap_sdk(self, sdk: Option<UniswapSdk>) -> Self {
        self.with_shared_uniswap_sdk(sdk.map(Arc::new))
    }

    /// [`Self::with_uniswap_sdk`] with a sidecar already shared (a reload that kept it).
    pub fn with_shared_uniswap_sdk(mut self, sdk: Option<Arc<UniswapSdk>>) -> Self {
        self.uniswap_sdk = sdk;
        self
    }

    /// Keep the agent's memory in `memory`.
    pub fn with_memory(mut self, memory: Option<bardo_memory::Memory>) -> Self {
        self.memory = memory;
        self
    }

    /// Record what the EVM and sidecar contexts were built from (`setup::services`).
    pub(crate) fn built_from(mut self, evm: String, sidecar: String) -> Self {
        self.keys = (evm, sidecar);
        self
    }

    pub(crate) fn evm_key(&self) -> &str {
        &self.keys.0
    }

    pub(crate) fn sidecar_key(&self) -> &str {
        &self.keys.1
    }

    /// The host's async runtime.
    pub fn runtime(&self) -> &Runtime {
        self.evm.runtime()
    }

    /// The wallet's address on `chain`, if a wallet is configured and the chain is.
    pub fn address(&self, chain: u64) -> Option<Address> {
        self.evm.address(chain)
    }

    /// Whether `other` reads, simulates, signs and cross-checks with the same contexts: then
    /// whatever they feed (prices, the cross-check) is the same too.
    pub fn same_chains_as(&self, other: &Services) -> bool {
        let sdk = match (&self.uniswap_sdk, &other.uniswap_sdk) {
            (Some(a), Some(b)) => Arc::ptr_eq(a, b),
            (a, b) => a.is_none() && b.is_none(),
        };
        Arc::ptr_eq(&self.evm, &other.evm) && sdk
    }
}

/// The `config` context: operator settings per plugin (`[settings]` in bardo.toml).
#[derive(Debug, Default)]
pub struct Settings {
    /// Settings per plugin name, as JSON object text.
    by_plugin: BTreeMap<String, String>,
    /// Plugins whose settings file is missing, with its path: their tools answer `denied`.
    missing: BTreeMap<String, PathBuf>,
}

impl Settings {
    /// `settings` (plugin name → JSON object); `missing`: plugins whose settings file does not
    /// exist (logged here as one warning: before `bardo devnet up`, every plugin's is missing).
    pub fn new(settings: BTreeMap<String, serde_json::Value>, missing: BTreeMap<String, PathBuf>) -> Self {
        if !missing.is_empty() {
            let files: Vec<String> = missing.values().map(|p| p.display().to_string()).collect();
            let plugins: Vec<&str> = missing.keys().map(String::as_str).collect();
            tracing::warn!(
                "{} of the configured settings files do not exist ({}): the tools of {} answer `denied` until \
                 they do (`bardo devnet up` writes the devnet's)",
                files.len(),
                files.join(", "),
                plugins.join(", ")
            );
        }
        let by_plugin = settings.into_iter().map(|(name, v)| (name, v.to_string())).collect();
        Self { by_plugin, missing }
    }

    /// The settings of plugin `name`, as JSON object text (an old version served side by side,
    /// `name@version`, has its plugin's).
    pub fn of(&self, name: &str) -> Option<&str> {
        self.by_plugin.get(plugin_name(name)).map(String::as_str)
    }

    /// Where plugin `name`'s settings file should be, if it is missing.
    pub fn missing(&self, name: &str) -> Option<&PathBuf> {
        self.missing.get(plugin_name(name))
    }
}

fn plugin_name(name: &str) -> &str {
    name.split_once('@').map_or(name, |(plugin, _)| plugin)
}

/// The `uniswap-sdk` context: the sidecar, the books it routes over, and the plugins the operator granted it
/// to (`[sidecar] grant`).
pub struct UniswapSdk {
    /// The supervised sidecar (shared with the cross-check).
    pub sidecar: Arc<Sidecar>,
    /// Uniswap's contracts per chain, from `[settings] uniswap`.
    pub books: BTreeMap<u64, UniswapBook>,
    /// The plugins granted the interface, by name (read once, when a plugin is loaded: see
    /// `caps::CAPABILITIES`).
    pub grants: Vec<String>,
    /// The pool sets recent routes read, by chain, block and tokens.
    pub pools: bardo_sidecar::discover::PoolSets,
}

impl std::fmt::Debug for UniswapSdk {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UniswapSdk").field("books", &self.books).field("grants", &self.grants).finish()
    }
}

impl UniswapSdk {
    /// The sidecar over `books`, granted to the plugins named in `grants`.
    pub fn new(sidecar: Arc<Sidecar>, books: BTreeMap<u64, UniswapBook>, grants: Vec<String>) -> Self {
        Self { sidecar, books, grants, pools: Default::default() }
    }

    /// Whether the operator listed plugin `name` in `[sidecar] grant`.
    pub fn grants_to(&self, name: &str) -> bool {
        self.grants.iter().any(|g| g == name)
    }
}
