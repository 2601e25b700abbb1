//! `bardo:host/chain`: read-only RPC access. No chain is configured in this version of the
//! host, so every call answers `chain-not-supported` — never invented data.

use super::{CallCtx, CapsView};
use crate::bindings::bardo::host::chain::Host;
use crate::bindings::bardo::host::types::{Error, Log, LogFilter, Receipt, TxCall};
use crate::caps::convert::wit_error;
use crate::error::{ErrorCode, ToolError};
use wasmtime::component::{HasData, Linker};

/// The configured chains (none yet).
#[derive(Debug, Default)]
pub struct ChainCaps {}

impl ChainCaps {
    fn unsupported(&self, chain: u64) -> Error {
        wit_error(ToolError::new(
            ErrorCode::ChainNotSupported,
            format!(
                "chain {chain} is not configured in this host; run the tool against a configured chain"
            ),
        ))
    }
}

/// The chain import as one call sees it.
pub struct ChainView<'a> {
    caps: &'a ChainCaps,
    #[expect(
        dead_code,
        reason = "RPC timeouts will be bounded by the call's deadline"
    )]
    call: &'a mut CallCtx,
}

struct HasChain;
impl HasData for HasChain {
    type Data<'a> = ChainView<'a>;
}

pub(crate) fn add_to_linker<T: CapsView>(linker: &mut Linker<T>) -> wasmtime::Result<()> {
    crate::bindings::bardo::host::chain::add_to_linker::<T, HasChain>(linker, |t| {
        let (caps, call) = t.parts();
        ChainView {
            caps: &caps.chain,
            call,
        }
    })
}

impl Host for ChainView<'_> {
    fn call(&mut self, call: TxCall, _block: Option<u64>) -> Result<Vec<u8>, Error> {
        Err(self.caps.unsupported(call.chain_id))
    }
    fn balance(
        &mut self,
        chain: u64,
        _account: String,
        _block: Option<u64>,
    ) -> Result<String, Error> {
        Err(self.caps.unsupported(chain))
    }
    fn block_number(&mut self, chain: u64) -> Result<u64, Error> {
        Err(self.caps.unsupported(chain))
    }
    fn block_timestamp(&mut self, chain: u64, _block: Option<u64>) -> Result<u64, Error> {
        Err(self.caps.unsupported(chain))
    }
    fn logs(&mut self, filter: LogFilter) -> Result<Vec<Log>, Error> {
        Err(self.caps.unsupported(filter.chain_id))
    }
    fn code(&mut self, chain: u64, _account: String) -> Result<Vec<u8>, Error> {
        Err(self.caps.unsupported(chain))
    }
    fn storage_at(&mut self, chain: u64, _account: String, _slot: String) -> Result<String, Error> {
        Err(self.caps.unsupported(chain))
    }
    fn tx_receipt(&mut self, chain: u64, _tx_hash: String) -> Result<Option<Receipt>, Error> {
        Err(self.caps.unsupported(chain))
    }
}
