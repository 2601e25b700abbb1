//! What the Uniswap periphery's calls name, read alike by the UniversalRouter's scope and by V4
//! PositionManager's (which the router also calls, in a migration): the router's placeholders
//! for the wallet and for itself, who receives and which hooks run, V4's pool key, and the ABI
//! decoding of one command's or action's params.

use alloy::primitives::{Address, address};
use alloy::sol_types::SolValue;

alloy::sol! {
    struct PoolKey { address currency0; address currency1; uint24 fee; int24 tickSpacing; address hooks; }
}

/// `MSG_SENDER`: the router pays whoever called it — the wallet.
pub(crate) const MSG_SENDER: Address = address!("0x0000000000000000000000000000000000000001");
/// `ADDRESS_THIS`: the router keeps it for a later command.
pub(crate) const ADDRESS_THIS: Address = address!("0x0000000000000000000000000000000000000002");

/// Who receives something, by parameter name.
pub(super) type Recipients = Vec<(&'static str, Address)>;

/// What a UniversalRouter call names: who receives, and the V4 hooks its swaps run through.
#[derive(Debug, Default)]
pub(super) struct Parties {
    pub recipients: Recipients,
    pub hooks: Vec<Address>,
    /// Who receives inside a position-manager call the router makes, where a placeholder would
    /// name the router: each must be the wallet itself.
    pub wallet_only: Recipients,
    /// A V3 position's collect in a migration: the wallet, or V4's PositionManager (allowlisted
    /// as `uniswap-v4-position-manager`) which mints the V4 position from it.
    pub to_v4_manager: Recipients,
}

/// A tuple encoded as `abi.encode(a, b, …)`.
pub(crate) fn decode<T>(what: &str, input: &[u8]) -> Result<T, String>
where
    T: SolValue + From<<T::SolType as alloy::sol_types::SolType>::RustType>,
    for<'a> <T::SolType as alloy::sol_types::SolType>::Token<'a>: alloy::sol_types::abi::TokenSeq<'a>,
{
    T::abi_decode_params(input).map_err(|e| format!("{what}: {e}"))
}

/// A struct encoded as `abi.encode(s)`.
pub(crate) fn decode_struct<T: SolValue + From<<T::SolType as alloy::sol_types::SolType>::RustType>>(
    what: &str,
    input: &[u8],
) -> Result<T, String> {
    T::abi_decode(input).map_err(|e| format!("{what}: {e}"))
}
