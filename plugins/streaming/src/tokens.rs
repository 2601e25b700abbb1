//! A pool's tokens as a stream keeps them in its state: V3 and V4 pools alike.

use alloy_primitives::{Address, B256};
use bardo_sdk::erc20::Token;
use serde::{Deserialize, Serialize};

/// A pool's tokens: a V3 pool, or a V4 pool (`pool` is then the PoolManager).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PoolTokens {
    pub pool: Address,
    /// A V4 pool's id.
    #[serde(default)]
    pub pool_id: Option<B256>,
    pub token0: TokenState,
    pub token1: TokenState,
    /// Fee tier, hundredths of a basis point; none for a V4 pool with a dynamic fee (and in
    /// state kept before streams recorded it).
    #[serde(default)]
    pub fee: Option<u32>,
}

/// A token as kept in stream state.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TokenState {
    pub address: Address,
    pub symbol: String,
    pub decimals: u8,
}

impl From<Token> for TokenState {
    fn from(t: Token) -> Self {
        Self { address: t.address, symbol: t.symbol, decimals: t.decimals }
    }
}
