//! Native ETH as a side of a swap: the agent names it `ETH`; the pools trade WETH, which the
//! UniversalRouter wraps on the way in and unwraps on the way out, in the same transaction.

use crate::book::Book;
use bardo_sdk::erc20::{self, Token};
use bardo_sdk::errors::not_found;
use bardo_sdk::{ChainId, Error};

/// Whether a token param names the native coin.
pub fn is_native(input: &str) -> bool {
    input.trim().eq_ignore_ascii_case("ETH")
}

/// The native coin as the outcome names it (the zero address: what the host reads as native).
pub fn eth() -> Token {
    bardo_sdk::uniswap::v4::ether()
}

/// The token `input` trades as in the pools, and whether the wallet pays or receives it as
/// native ETH.
pub fn pool_token(chain_id: ChainId, book: &Book, field: &str, input: &str) -> Result<(Token, bool), Error> {
    if !is_native(input) {
        return Ok((book.token(chain_id, field, input)?, false));
    }
    let weth = book.weth().ok_or_else(|| {
        not_found(format!(
            "`{field}`: ETH trades as WETH, and chain {chain_id} has none configured; add `weth` (or a WETH token) \
             under `[settings] uniswap`"
        ))
    })?;
    Ok((erc20::token(chain_id, weth)?, true))
}
