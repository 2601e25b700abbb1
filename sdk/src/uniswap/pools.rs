//! Finding V2 pairs and V3 pools through the factories and reading their state.

use super::v2::{getPairCall, getReservesCall};
use super::{Book, getPoolCall, liquidityCall, slot0Call, tickSpacingCall};
use crate::abi::eth_call;
use crate::erc20::Token;
use crate::{ChainId, Error};
use alloy_primitives::aliases::U24;
use alloy_primitives::{Address, U256};

/// A V3 pool and its current state.
#[derive(Debug, Clone)]
pub struct V3Pool {
    /// The pool contract.
    pub address: Address,
    /// The token with the lower address.
    pub token0: Token,
    /// The other token.
    pub token1: Token,
    /// Fee tier in hundredths of a bip.
    pub fee: u32,
    /// Tick spacing.
    pub tick_spacing: i32,
    /// `slot0.sqrtPriceX96`.
    pub sqrt_price_x96: U256,
    /// `slot0.tick`.
    pub tick: i32,
    /// In-range liquidity.
    pub liquidity: u128,
}

/// A V2 pair and its reserves.
#[derive(Debug, Clone)]
pub struct V2Pair {
    /// The pair contract.
    pub address: Address,
    /// The token with the lower address.
    pub token0: Token,
    /// The other token.
    pub token1: Token,
    /// Reserve of token0, base units.
    pub reserve0: U256,
    /// Reserve of token1, base units.
    pub reserve1: U256,
}

/// The two tokens in pool order (token0 has the lower address).
pub fn sorted(a: &Token, b: &Token) -> (Token, Token) {
    if a.address < b.address { (a.clone(), b.clone()) } else { (b.clone(), a.clone()) }
}

/// The address of the V3 pool of `a`/`b` at `fee`, none when the factory has none.
fn v3_address(
    chain_id: ChainId,
    book: &Book,
    a: &Token,
    b: &Token,
    fee: u32,
) -> Result<Option<Address>, Error> {
    let call = getPoolCall { tokenA: a.address, tokenB: b.address, fee: U24::from(fee) };
    let address = eth_call(chain_id, book.v3_factory, &call)?;
    Ok((!address.is_zero()).then_some(address))
}

/// The V3 pool of `a`/`b` at `fee`, none when the factory has none.
pub fn v3_pool(
    chain_id: ChainId,
    book: &Book,
    a: &Token,
    b: &Token,
    fee: u32,
) -> Result<Option<V3Pool>, Error> {
    match v3_address(chain_id, book, a, b, fee)? {
        Some(address) => v3_state(chain_id, address, a, b, fee).map(Some),
        None => Ok(None),
    }
}

/// The V3 pool of `a`/`b` at `fee` and its in-range liquidity — all a quote needs (two reads, not
/// the four of [`v3_pool`]); none when the factory has none.
pub fn v3_liquidity(
    chain_id: ChainId,
    book: &Book,
    a: &Token,
    b: &Token,
    fee: u32,
) -> Result<Option<(Address, u128)>, Error> {
    let Some(address) = v3_address(chain_id, book, a, b, fee)? else { return Ok(None) };
    Ok(Some((address, eth_call(chain_id, address, &liquidityCall {})?)))
}

/// Read a V3 pool's state; `a`, `b` are its tokens in any order.
pub fn v3_state(
    chain_id: ChainId,
    address: Address,
    a: &Token,
    b: &Token,
    fee: u32,
) -> Result<V3Pool, Error> {
    let (token0, token1) = sorted(a, b);
    let slot0 = eth_call(chain_id, address, &slot0Call {})?;
    let liquidity = eth_call(chain_id, address, &liquidityCall {})?;
    let tick_spacing = eth_call(chain_id, address, &tickSpacingCall {})?;
    Ok(V3Pool {
        address,
        token0,
        token1,
        fee,
        tick_spacing: tick_spacing.as_i32(),
        sqrt_price_x96: U256::from(slot0.sqrtPriceX96),
        tick: slot0.tick.as_i32(),
        liquidity,
    })
}

/// The V2 pair of `a`/`b`, none when the chain has no V2 factory or no such pair.
pub fn v2_pair(chain_id: ChainId, book: &Book, a: &Token, b: &Token) -> Result<Option<V2Pair>, Error> {
    let Some(factory) = book.v2_factory else { return Ok(None) };
    let address = eth_call(chain_id, factory, &getPairCall { tokenA: a.address, tokenB: b.address })?;
    if address.is_zero() {
        return Ok(None);
    }
    let (token0, token1) = sorted(a, b);
    let r = eth_call(chain_id, address, &getReservesCall {})?;
    Ok(Some(V2Pair {
        address,
        token0,
        token1,
        reserve0: U256::from(r.reserve0),
        reserve1: U256::from(r.reserve1),
    }))
}
