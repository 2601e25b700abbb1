//! `bardo:host/signer`: the wallet's address on a configured chain, never a signature.

use super::CapsView;
use crate::bindings::bardo::host::signer::Host;
use crate::services::Services;
use wasmtime::component::{HasData, Linker};

/// The signer import as one call sees it.
pub struct SignerView<'a> {
    services: &'a Services,
}

struct HasSigner;
impl HasData for HasSigner {
    type Data<'a> = SignerView<'a>;
}

pub(crate) fn add_to_linker<T: CapsView>(linker: &mut Linker<T>) -> wasmtime::Result<()> {
    crate::bindings::bardo::host::signer::add_to_linker::<T, HasSigner>(linker, |t| SignerView {
        services: t.parts().0,
    })
}

impl Host for SignerView<'_> {
    fn wallet_address(&mut self, chain: u64) -> Option<String> {
        self.services.address(chain).map(|a| a.to_checksum(None))
    }
}
