//! `bardo:host/signer`: the wallet's address on a configured chain, never a signature.

use super::CapsView;
use crate::bindings::bardo::host::signer::Host;
use crate::signer::Wallet;
use std::collections::BTreeSet;
use wasmtime::component::{HasData, Linker};

/// The operator's wallet, if configured, and the chains it is used on.
#[derive(Debug, Default)]
pub struct SignerCaps {
    wallet: Option<Wallet>,
    chains: BTreeSet<u64>,
}

impl SignerCaps {
    /// Expose `wallet`'s address on `chains`.
    pub fn new(wallet: Option<Wallet>, chains: impl IntoIterator<Item = u64>) -> Self {
        Self { wallet, chains: chains.into_iter().collect() }
    }

    /// The wallet, for the write path's broadcaster only.
    pub(crate) fn wallet(&self) -> Option<&Wallet> {
        self.wallet.as_ref()
    }

    /// The private key as hex (without 0x), for the result filter to redact; never exported.
    pub(crate) fn secret_hex(&self) -> Option<String> {
        self.wallet.as_ref().map(|w| hex::encode(w.local_signer().to_bytes()))
    }

    /// The wallet's address on `chain`, if a wallet is configured and the chain is.
    pub fn address(&self, chain: u64) -> Option<alloy::primitives::Address> {
        let wallet = self.wallet.as_ref()?;
        self.chains.contains(&chain).then(|| wallet.address())
    }

    /// Whether a wallet is configured (the `wallet` capability).
    pub fn configured(&self) -> bool {
        self.wallet.is_some()
    }
}

/// The signer import as one call sees it.
pub struct SignerView<'a> {
    caps: &'a SignerCaps,
}

struct HasSigner;
impl HasData for HasSigner {
    type Data<'a> = SignerView<'a>;
}

pub(crate) fn add_to_linker<T: CapsView>(linker: &mut Linker<T>) -> wasmtime::Result<()> {
    crate::bindings::bardo::host::signer::add_to_linker::<T, HasSigner>(linker, |t| SignerView {
        caps: &t.parts().0.signer,
    })
}

impl Host for SignerView<'_> {
    fn wallet_address(&mut self, chain: u64) -> Option<String> {
        let wallet = self.caps.wallet.as_ref()?;
        self.caps.chains.contains(&chain).then(|| wallet.address().to_checksum(None))
    }
}
