//! ABI helpers over alloy's `sol!` types: typed `eth_call`s and address parsing with typed errors.

use crate::errors::{internal, invalid_params};
use crate::{ChainId, Error, TxCall, chain};
pub use alloy_primitives::{Address, U256};
pub use alloy_sol_types::{self, SolCall, sol};

/// Parse a `0x…` address from params, naming the field in the error.
pub fn parse_address(field: &str, text: &str) -> Result<Address, Error> {
    text.parse::<Address>().map_err(|_| {
        invalid_params(format!(
            "`{field}` is not an address: {text:?}; expected 0x followed by 40 hex digits"
        ))
    })
}

/// The [`TxCall`] for a typed contract call.
pub fn tx_call<C: SolCall>(chain_id: ChainId, to: Address, call: &C) -> TxCall {
    TxCall { chain_id, to: to.to_checksum(None), data: call.abi_encode(), value: "0".to_owned() }
}

/// `eth_call` a typed contract call at the latest block and decode its return value.
pub fn eth_call<C: SolCall>(chain_id: ChainId, to: Address, call: &C) -> Result<C::Return, Error> {
    let data = chain::call(&tx_call(chain_id, to, call), None)?;
    C::abi_decode_returns(&data).map_err(|e| {
        internal(format!(
            "{} at {to} returned data that does not decode ({e}); is it the right contract?",
            C::SIGNATURE
        ))
    })
}
