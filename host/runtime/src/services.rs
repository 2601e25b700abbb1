//! The services behind the host imports and the write path: chains, the fork simulator, the
//! wallet and the plugins' settings. Built once (by `setup`, or by a test) and shared by `Arc`:
//! the import modules in `caps`, the safety chain, the valuer and the stream subscriptions all
//! borrow the same instance, so there is one RPC cache, one warm fork and one runtime.

use alloy::primitives::Address;
use bardo_core::Runtime;
use bardo_evm::{Chains, Simulator, Wallet};
use std::collections::BTreeMap;

/// Chains, simulator, wallet and settings.
#[derive(Debug)]
pub struct Services {
    /// Every configured chain (and the host's runtime their requests run on).
    pub chains: Chains,
    /// The revm fork simulator (its forks stay warm across calls).
    pub simulator: Simulator,
    /// The operator's signing wallet, if one is configured. Plugins only ever see its address.
    pub wallet: Option<Wallet>,
    /// Operator settings per plugin name, as JSON object text.
    pub settings: BTreeMap<String, String>,
    /// Uniswap's SDKs (the sidecar), for the plugins granted `bardo:host/uniswap-sdk`.
    pub uniswap_sdk: Option<crate::caps::uniswap_sdk::UniswapSdk>,
    /// Whether `bardo:host/testnet` (a devnet's cheat codes) is granted: only when the host's
    /// profile selects the `dev` category, and then only on chains marked `devnet = true`.
    pub testnet: bool,
    /// Plugins whose settings file is missing, with its path: their tools answer `denied`.
    pub missing_settings: BTreeMap<String, std::path::PathBuf>,
}

impl Services {
    /// No chains, no wallet, no settings: what a host that only reads manifests needs.
    pub fn empty(runtime: &Runtime) -> Self {
        Self::new(Chains::none(runtime))
    }

    /// `chains`, with a fresh simulator and no wallet or settings yet.
    pub fn new(chains: Chains) -> Self {
        Self {
            chains,
            simulator: Simulator::default(),
            wallet: None,
            settings: BTreeMap::new(),
            uniswap_sdk: None,
            testnet: false,
            missing_settings: BTreeMap::new(),
        }
    }

    /// Sign with `wallet` (its address is exposed on every configured chain).
    pub fn with_wallet(mut self, wallet: Option<Wallet>) -> Self {
        self.wallet = wallet;
        self
    }

    /// Serve `settings` (plugin name → JSON object) through `bardo:host/config`.
    pub fn with_settings(mut self, settings: BTreeMap<String, serde_json::Value>) -> Self {
        self.settings = settings.into_iter().map(|(name, v)| (name, v.to_string())).collect();
        self
    }

    /// Serve `bardo:host/uniswap-sdk` through `sdk` (to the plugins it grants).
    pub fn with_uniswap_sdk(mut self, sdk: Option<crate::caps::uniswap_sdk::UniswapSdk>) -> Self {
        self.uniswap_sdk = sdk;
        self
    }

    /// Plugins whose settings file is missing (each logged once here, as a warning).
    pub fn with_missing_settings(mut self, missing: BTreeMap<String, std::path::PathBuf>) -> Self {
        for (plugin, path) in &missing {
            tracing::warn!(
                "plugin `{plugin}`: its settings file {} does not exist; its tools answer `denied` until it does",
                path.display()
            );
        }
        self.missing_settings = missing;
        self
    }

    /// Grant `bardo:host/testnet` (the `dev` profile does; see [`Services::testnet`]).
    pub fn with_testnet(mut self, granted: bool) -> Self {
        self.testnet = granted;
        self
    }

    /// The host's async runtime.
    pub fn runtime(&self) -> &Runtime {
        self.chains.runtime()
    }

    /// The wallet's address on `chain`, if a wallet is configured and the chain is.
    pub fn address(&self, chain: u64) -> Option<Address> {
        let wallet = self.wallet.as_ref()?;
        self.chains.get(chain).is_ok().then(|| wallet.address())
    }

    /// The signing key as a secret, for the result filter to withhold; never exported.
    pub(crate) fn secret(&self) -> Option<bardo_core::secret::TaintedString> {
        self.wallet.as_ref().map(|w| w.secret().clone())
    }

    /// The settings of plugin `name`, as JSON object text (an old version served side by side,
    /// `name@version`, has its plugin's).
    pub fn settings_of(&self, name: &str) -> Option<&str> {
        let plugin = name.split_once('@').map_or(name, |(plugin, _)| plugin);
        self.settings.get(plugin).map(String::as_str)
    }
}
