//! Finding and reading the pools a route may use, through any `eth_call`: for each pair of the
//! tokens, the V2 pair its factory knows, the V3 pool of each fee tier, and the V4 pool (without
//! hooks) of each standard fee and spacing — each with the state the sidecar needs, read here by
//! the host, never taken from a plugin.

use crate::book::UniswapBook;
use crate::pool_read::{Pool, PoolReader};
use crate::route::RoutePool;
use crate::{PoolState, Ticks};
use alloy_primitives::{Address, B256, U256, keccak256};
use alloy_sol_types::{SolCall, SolValue};

alloy_sol_types::sol! {
    function getPair(address tokenA, address tokenB) external view returns (address);
    function getReserves() external view returns (uint112 reserve0, uint112 reserve1, uint32 blockTimestampLast);
    function getPool(address tokenA, address tokenB, uint24 fee) external view returns (address);
    function decimals() external view returns (uint8);
}

/// V3's fee tiers.
pub const V3_FEES: [u32; 4] = [100, 500, 3000, 10_000];
/// V4's standard (fee, tick spacing) pairs.
pub const V4_TIERS: [(u32, i32); 4] = [(100, 1), (500, 10), (3000, 60), (10_000, 200)];

/// The id of the V4 pool of `(currency0, currency1, fee, spacing)` without hooks.
pub fn v4_pool_id(tokens: (Address, Address), fee: u32, tick_spacing: i32) -> B256 {
    use alloy_primitives::aliases::{I24, U24};
    let spacing = I24::try_from(tick_spacing).unwrap_or(I24::ZERO);
    keccak256((tokens.0, tokens.1, U24::from(fee), spacing, Address::ZERO).abi_encode())
}

/// Reads through `call(to, calldata) -> returndata` (at one block, the caller's choice).
pub struct Discovery<F> {
    call: F,
}

fn sorted(a: Address, b: Address) -> (Address, Address) {
    if a < b { (a, b) } else { (b, a) }
}

impl<F: FnMut(Address, Vec<u8>) -> Result<Vec<u8>, String>> Discovery<F> {
    /// Discovery through `call`.
    pub fn new(call: F) -> Self {
        Self { call }
    }

    fn read<C: SolCall>(&mut self, to: Address, c: C) -> Result<C::Return, String> {
        let out = (self.call)(to, c.abi_encode())?;
        C::abi_decode_returns(&out)
            .map_err(|e| format!("an unreadable answer to {} from {to}: {e}", C::SIGNATURE))
    }

    /// A token's decimals.
    pub fn decimals(&mut self, token: Address) -> Result<u8, String> {
        self.read(token, decimalsCall {})
    }

    /// Every Uniswap pool of `book` between two of `tokens`, with its state and the bitmap word
    /// at its price. An empty pool (no price, or V2 reserves of 0) is left out.
    pub fn pools(&mut self, book: &UniswapBook, tokens: &[Address]) -> Result<Vec<RoutePool>, String> {
        let mut out = Vec::new();
        for (i, a) in tokens.iter().enumerate() {
            for b in &tokens[i + 1..] {
                let pair = sorted(*a, *b);
                if let Some(factory) = book.v2_factory {
                    out.extend(self.v2(factory, pair)?);
                }
                if let Some(factory) = book.v3_factory {
                    for fee in V3_FEES {
                        out.extend(self.v3(factory, pair, fee)?);
                    }
                }
                if let Some(state_view) = book.v4_state_view {
                    for (fee, spacing) in V4_TIERS {
                        out.extend(self.v4(state_view, pair, fee, spacing)?);
                    }
                }
            }
        }
        Ok(out)
    }

    fn v2(&mut self, factory: Address, tokens: (Address, Address)) -> Result<Option<RoutePool>, String> {
        let pair = self.read(factory, getPairCall { tokenA: tokens.0, tokenB: tokens.1 })?;
        if pair.is_zero() {
            return Ok(None);
        }
        let r = self.read(pair, getReservesCall {})?;
        let reserves = (U256::from(r.reserve0), U256::from(r.reserve1));
        Ok((!reserves.0.is_zero() && !reserves.1.is_zero()).then_some(RoutePool::V2 {
            pair,
            tokens,
            reserves,
        }))
    }

    fn v3(
        &mut self,
        factory: Address,
        tokens: (Address, Address),
        fee: u32,
    ) -> Result<Option<RoutePool>, String> {
        let pool = self.read(
            factory,
            getPoolCall { tokenA: tokens.0, tokenB: tokens.1, fee: fee.try_into().unwrap_or_default() },
        )?;
        if pool.is_zero() {
            return Ok(None);
        }
        let call = &mut self.call;
        let mut reader = PoolReader::new(Pool::V3(pool), call);
        let Some((state, ticks)) = concentrated(&mut reader)? else { return Ok(None) };
        Ok(Some(RoutePool::V3 { pool, tokens, state, ticks }))
    }

    fn v4(
        &mut self,
        state_view: Address,
        tokens: (Address, Address),
        fee: u32,
        tick_spacing: i32,
    ) -> Result<Option<RoutePool>, String> {
        let id = v4_pool_id(tokens, fee, tick_spacing);
        let call = &mut self.call;
        let mut reader = PoolReader::new(Pool::V4 { state_view, id, tick_spacing }, call);
        let Some((state, ticks)) = concentrated(&mut reader)? else { return Ok(None) };
        Ok(Some(RoutePool::V4 { id, tokens, state, ticks }))
    }
}

/// A concentrated-liquidity pool's state and the bitmap word at its price; none when it has
/// no price yet (not initialized).
fn concentrated<F: FnMut(Address, Vec<u8>) -> Result<Vec<u8>, String>>(
    reader: &mut PoolReader<F>,
) -> Result<Option<(PoolState, Ticks)>, String> {
    let state = reader.state()?;
    if state.sqrt_price_x96.is_zero() {
        return Ok(None);
    }
    let mut ticks = Ticks::default();
    reader.read_word(Ticks::word_of(state.tick, state.tick_spacing), state.tick_spacing, &mut ticks)?;
    Ok(Some((state, ticks)))
}
