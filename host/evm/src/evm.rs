//! The chains, the fork simulator and the wallet, together: what plugins read chains through and
//! the write path simulates and signs with. One per generation of a host, shared by `Arc`, so
//! there is one RPC cache and one warm fork per process; a reload keeps it unless the chains or
//! the signer changed.

use crate::chain::{ChainError, Chains};
use crate::safe::{MODULE_BATCH_FAILED, SafeWallet};
use crate::signer::{SignerConfig, SignerError, Wallet};
use crate::simulate::{Origin, Probe, SimCall, Simulation, Simulator};
use alloy::primitives::Address;
use alloy::sol_types::SolError;
use bardo_core::Runtime;
use bardo_core::secret::TaintedString;
use std::time::Instant;

/// Chains, simulator and wallet.
#[derive(Debug)]
pub struct Evm {
    /// Every configured chain (and the host's runtime their requests run on).
    pub chains: Chains,
    /// The revm fork simulator (its forks stay warm across calls).
    pub simulator: Simulator,
    /// The operator's signing wallet, if one is configured. Plugins only ever see its address.
    pub wallet: Option<Wallet>,
    /// The Safe the wallet's key writes through (`[signer] mode = "safe"`): then the Safe is the
    /// wallet plugins see and plans move, and the key only signs and pays gas.
    pub safe: Option<SafeWallet>,
}

impl Evm {
    /// `chains`, a fresh simulator, and `wallet`.
    pub fn new(chains: Chains, wallet: Option<Wallet>) -> Self {
        Self { chains, simulator: Simulator::default(), wallet, safe: None }
    }

    /// `chains` and the wallet `[signer]` configures, through its Safe if it names one.
    pub fn open(chains: Chains, signer: &SignerConfig) -> Result<Self, SignerError> {
        let safe = signer.safe_wallet()?;
        let wallet = Wallet::open(signer)?;
        if safe.is_some() && wallet.is_none() {
            return Err(SignerError::Safe(format!(
                "[signer] mode = \"safe\" needs the key of one of the Safe's owners (${} or a keystore)",
                signer.key_env
            )));
        }
        Ok(Self { safe, ..Self::new(chains, wallet) })
    }

    /// Write through `safe` (tests; `[signer]` does it in [`Self::open`]).
    pub fn through(self, safe: SafeWallet) -> Self {
        Self { safe: Some(safe), ..self }
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
        let address = self.safe.map_or_else(|| wallet.address(), |s| s.safe);
        self.chains.get(chain).is_ok().then_some(address)
    }

    /// The account that signs (and pays the gas of) `wallet`'s transactions: the key for its
    /// Safe, else the wallet itself. Nonces and the one-sender-per-wallet lease are its.
    pub fn signer_of(&self, wallet: Address) -> Address {
        match (self.safe_of(wallet), &self.wallet) {
            (Some(_), Some(key)) => key.address(),
            _ => wallet,
        }
    }

    /// The Safe `wallet` is, if this host writes through it.
    pub fn safe_of(&self, wallet: Address) -> Option<SafeWallet> {
        self.safe.filter(|s| s.safe == wallet && self.wallet.is_some())
    }

    /// What is sent for `wallet`'s `calls`, and from whom: the calls themselves from the wallet
    /// or, for a Safe, one Safe transaction of them all from the key. The simulator and the
    /// broadcaster both take it from here, so what was simulated is what is sent.
    pub fn transactions(&self, wallet: Address, calls: &[SimCall]) -> (Address, Vec<SimCall>) {
        let sender = self.signer_of(wallet);
        match self.safe_of(wallet) {
            Some(safe) => (sender, vec![safe.wrap(sender, calls)]),
            None => (sender, calls.to_vec()),
        }
    }

    /// Simulate `wallet`'s `calls` on `chain` as they will be sent ([`Self::transactions`]),
    /// answering `probes`: a Safe batch that a module's execution reports failed is a failed
    /// outcome, its reason [`MODULE_BATCH_FAILED`].
    pub fn simulate_sent(
        &self,
        chain: u64,
        wallet: Address,
        calls: &[SimCall],
        probes: &[Probe],
        at: Option<u64>,
        deadline: Instant,
    ) -> Result<Simulation, ChainError> {
        let (caller, transactions) = self.transactions(wallet, calls);
        let origin = Origin { caller, wallet };
        let mut sim =
            self.simulator.run_probed(&self.chains, chain, origin, &transactions, probes, at, deadline)?;
        if let Some(safe) = self.safe_of(wallet) {
            for o in sim.outcomes.iter_mut().filter(|o| o.success && safe.batch_failed(&o.logs)) {
                o.success = false;
                o.output = alloy::sol_types::Revert::from(MODULE_BATCH_FAILED).abi_encode().into();
            }
        }
        Ok(sim)
    }

    /// The signing key as a secret, for a result filter to withhold; never sent anywhere.
    pub fn secret(&self) -> Option<&TaintedString> {
        self.wallet.as_ref().map(Wallet::secret)
    }
}
