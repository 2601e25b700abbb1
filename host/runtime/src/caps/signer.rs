//! `bardo:host/signer`: the wallet's address on a configured chain, never a signature.

use super::view::CapsView;
use crate::bindings::bardo::host::signer::Host;
use bardo_evm::Evm;
use wasmtime::component::{HasData, Linker};

/// The interface this module serves.
pub(crate) const INTERFACE: &str = "bardo:host/signer";

/// The signer import as one call sees it.
pub struct SignerView<'a> {
    evm: &'a Evm,
}

struct HasSigner;
impl HasData for HasSigner {
    type Data<'a> = SignerView<'a>;
}

pub(crate) fn add_to_linker<T: CapsView>(linker: &mut Linker<T>) -> wasmtime::Result<()> {
    crate::bindings::bardo::host::signer::add_to_linker::<T, HasSigner>(linker, |t| SignerView {
        evm: t.caps().evm,
    })
}

impl Host for SignerView<'_> {
    fn wallet_address(&mut self, chain: u64) -> Option<String> {
        self.evm.address(chain).map(|a| a.to_checksum(None))
    }
}
