//! `bardo:host/signer`: the wallet's address, never a signature. No key is configured in this
//! version of the host, so the answer is always none.

use super::CapsView;
use crate::bindings::bardo::host::signer::Host;
use wasmtime::component::{HasData, Linker};

/// The operator's wallet (none configured yet).
#[derive(Debug, Default)]
pub struct SignerCaps {}

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
    fn wallet_address(&mut self, _chain: u64) -> Option<String> {
        let _ = self.caps;
        None
    }
}
