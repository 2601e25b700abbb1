//! The contexts behind the host imports, one per capability (see `caps::CAPABILITIES`), each
//! built from its part of bardo.toml: the EVM context (`[chains]`, the signer) for `chain`,
//! `simulate`, `signer` and `testnet`; the plugins' settings (`[settings]`) for `config`; the
//! sidecar (`[sidecar]`) for `uniswap-sdk`. Shared by `Arc`: the imports, the write path and the
//! stream subscriptions of one generation borrow the same instance, so there is one RPC cache,
//! one warm fork and one sidecar. A reload builds new services, keeping each context whose
//! section did not change (see [`Services::reuse`]).

use crate::caps::config::Settings;
use crate::caps::uniswap_sdk::UniswapSdk;
use alloy::primitives::Address;
use bardo_core::Runtime;
use bardo_evm::Evm;
use std::collections::BTreeMap;
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
        Self { evm, settings: Arc::default(), uniswap_sdk: None, keys: Default::default() }
    }

    /// Serve `settings` (plugin name → JSON object) through `bardo:host/config`; `missing`:
    /// plugins whose settings file does not exist yet.
    pub fn with_settings(
        mut self,
        settings: BTreeMap<String, serde_json::Value>,
        missing: BTreeMap<String, std::path::PathBuf>,
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
