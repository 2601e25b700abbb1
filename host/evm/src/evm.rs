//! The chains, the fork simulator and the wallet, together: what plugins read chains through and
//! the write path simulates and signs with. One per generation of a host, shared by `Arc`, so
//! there is one RPC cache and one warm fork per process; a reload keeps it unless the chains or
//! the signer changed.

use crate::chain::Chains;
use crate::signer::Wallet;
use crate::simulate::Simulator;
use alloy::primitives::Address;
use bardo_core::Runtime;
use bardo_core::secret::TaintedString;

/// Chains, simulator and wallet.
#[derive(Debug)]
pub struct Evm {
    /// Every configured chain (and the host's runtime their requests run on).
    pub chains: Chains,
    /// The revm fork simulator (its forks stay warm across calls).
    pub simulator: Simulator,
    /// The operator's signing wallet, if one is configured. Plugins only ever see its address.
    pub wallet: Option<Wallet>,
}

impl Evm {
    /// `chains`, a fresh simulator, and `wallet`.
    pub fn new(chains: Chains, wallet: Option<Wallet>) -> Self {
        Self { chains, simulator: Simulator::default(), wallet }
    }

    /// No chains and no wallet: what a host that only reads manifests needs.
    pub fn none(runtime: &Runtime) -> Self {
        Self::new(Chains::none(runtime), None)
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

    /// The signing key as a secret, for a result filter to withhold; never sent anywhere.
    pub fn secret(&self) -> Option<&TaintedString> {
        self.wallet.as_ref().map(Wallet::secret)
    }
}
