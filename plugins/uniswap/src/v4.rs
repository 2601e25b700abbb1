//! Uniswap V4: every pool lives inside the PoolManager, named by the hash of its key (currencies,
//! fee, tick spacing, hooks). Pools are found through StateView for the standard fee / tick
//! spacing pairs without hooks, quoted through V4Quoter, and swapped through the
//! UniversalRouter (`router.rs`).

use crate::book::Book;
use crate::pools::sorted;
use crate::quote::Side;
use alloy_primitives::aliases::{I24, U24};
use alloy_primitives::{Address, B256, Bytes, U256};
use bardo_sdk::abi::eth_call;
use bardo_sdk::erc20::Token;
use bardo_sdk::errors::invalid_params;
use bardo_sdk::{ChainId, Error};
use serde::Serialize;

pub use bardo_sdk::uniswap::v4::{
    ExactInputSingleParams, ExactOutputParams, PathKey, PoolKey, QuoteExactSingleParams, Swap, TIERS,
    getLiquidityCall, getSlot0Call, pool_id, quoteExactInputSingleCall, quoteExactOutputSingleCall,
};

/// What names a V4 pool besides its tokens and fee.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct V4Key {
    /// keccak256 of the ABI-encoded pool key.
    pub pool_id: B256,
    pub tick_spacing: i32,
    #[serde(serialize_with = "bardo_sdk::abi::checksummed")]
    pub hooks: Address,
    /// The pool trades native ether (currency 0, the zero address) where the swap names WETH:
    /// the router pays and takes ether itself, without wrapping.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub native: bool,
}

/// A V4 pool and its current state.
#[derive(Debug, Clone)]
pub struct V4Pool {
    pub key: V4Key,
    pub token0: Token,
    pub token1: Token,
    /// The fee in the key, hundredths of a bip.
    pub fee: u32,
    pub sqrt_price_x96: U256,
    pub tick: i32,
    pub liquidity: u128,
}

/// The pool key of `a`/`b` (any order) at `fee`, `tick_spacing`, `hooks`.
pub fn pool_key(a: &Token, b: &Token, fee: u32, tick_spacing: i32, hooks: Address) -> PoolKey {
    let (t0, t1) = sorted(a, b);
    PoolKey {
        currency0: t0.address,
        currency1: t1.address,
        fee: U24::from(fee),
        tickSpacing: I24::try_from(tick_spacing).unwrap_or_default(),
        hooks,
    }
}

/// The pool key of tokens `a`/`b` (any order) at `fee` with `key`'s tick spacing and hooks.
pub fn pool_key_of(a: Address, b: Address, fee: u32, key: V4Key) -> PoolKey {
    PoolKey {
        currency0: a.min(b),
        currency1: a.max(b),
        fee: U24::from(fee),
        tickSpacing: I24::try_from(key.tick_spacing).unwrap_or_default(),
        hooks: key.hooks,
    }
}

/// The V4 pool of `a`/`b` at `fee` and `tick_spacing` without hooks; none when it is not
/// initialized (or the chain has no V4).
pub fn pool(
    chain_id: ChainId,
    book: &Book,
    a: &Token,
    b: &Token,
    fee: u32,
    tick_spacing: i32,
) -> Result<Option<V4Pool>, Error> {
    hooked_pool(chain_id, book, a, b, (fee, tick_spacing, Address::ZERO))
}

/// The V4 pool of `a`/`b` with `(fee, tick spacing, hooks)`; none when it is not initialized
/// (or the chain has no V4).
pub fn hooked_pool(
    chain_id: ChainId,
    book: &Book,
    a: &Token,
    b: &Token,
    (fee, tick_spacing, hooks): (u32, i32, Address),
) -> Result<Option<V4Pool>, Error> {
    let Some(state_view) = book.v4_state_view else { return Ok(None) };
    let key = pool_key(a, b, fee, tick_spacing, hooks);
    let id = pool_id(&key);
    let slot0 = eth_call(chain_id, state_view, &getSlot0Call { poolId: id })?;
    if slot0.sqrtPriceX96.is_zero() {
        return Ok(None);
    }
    let liquidity = eth_call(chain_id, state_view, &getLiquidityCall { poolId: id })?;
    let (token0, token1) = sorted(a, b);
    Ok(Some(V4Pool {
        key: V4Key { pool_id: id, tick_spacing, hooks, native: false },
        token0,
        token1,
        fee,
        sqrt_price_x96: U256::from(slot0.sqrtPriceX96),
        tick: slot0.tick.as_i32(),
        liquidity,
    }))
}

/// Every initialized V4 pool of `a`/`b` at the standard tiers (`fee`: only that tier).
pub fn pools(
    chain_id: ChainId,
    book: &Book,
    a: &Token,
    b: &Token,
    fee: Option<u32>,
) -> Result<Vec<V4Pool>, Error> {
    let mut out = Vec::new();
    for (f, spacing) in TIERS.into_iter().filter(|(f, _)| fee.is_none_or(|want| want == *f)) {
        out.extend(pool(chain_id, book, a, b, f, spacing)?);
    }
    Ok(out)
}

/// A V4 pool a swap names beyond the standard tiers: `(fee, tick spacing, hooks)`.
pub type Named = Option<(u32, i32, Address)>;

/// The V4 pools of `a`/`b`: the one `named`, or those at the standard tiers (`fee`: only that
/// tier).
pub fn pools_or_named(
    chain_id: ChainId,
    book: &Book,
    (a, b): (&Token, &Token),
    fee: Option<u32>,
    named: Named,
) -> Result<Vec<V4Pool>, Error> {
    match named {
        Some(key) => Ok(hooked_pool(chain_id, book, a, b, key)?.into_iter().collect()),
        None => pools(chain_id, book, a, b, fee),
    }
}

/// The V4 pools of native ether and the other token where one of `a`/`b` is `weth` (as
/// [`pools_or_named`]), with WETH standing for ether in their keys' `native` flag.
pub fn native_pools(
    chain_id: ChainId,
    book: &Book,
    (a, b): (&Token, &Token),
    weth: Address,
    (fee, named): (Option<u32>, Named),
) -> Result<Vec<V4Pool>, Error> {
    let eth = crate::native::eth();
    let (a, b) = match (a.address == weth, b.address == weth) {
        (true, false) => (&eth, b),
        (false, true) => (a, &eth),
        _ => return Ok(Vec::new()),
    };
    let mut pools = pools_or_named(chain_id, book, (a, b), fee, named)?;
    for p in &mut pools {
        p.key.native = true;
    }
    Ok(pools)
}

/// The V4 pool `id` names among `a`/`b`'s standard tiers and the one `named`, if any (to name
/// the pool a receipt's `Swap` event shows).
pub fn key_of(a: &Token, b: &Token, id: B256, named: Named) -> Option<(u32, V4Key)> {
    let eth = crate::native::eth();
    // A native pool's key names ether where the swap names WETH.
    let natives = [(&eth, b), (a, &eth)];
    if let Some((fee, key)) = natives.into_iter().find_map(|(x, y)| plain_key_of(x, y, id, named)) {
        return Some((fee, V4Key { native: true, ..key }));
    }
    plain_key_of(a, b, id, named)
}

fn plain_key_of(a: &Token, b: &Token, id: B256, named: Named) -> Option<(u32, V4Key)> {
    let standard = TIERS.into_iter().map(|(fee, spacing)| (fee, spacing, Address::ZERO));
    standard.chain(named).find_map(|(fee, tick_spacing, hooks)| {
        (pool_id(&pool_key(a, b, fee, tick_spacing, hooks)) == id)
            .then_some((fee, V4Key { pool_id: id, tick_spacing, hooks, native: false }))
    })
}

/// The most a V4 fee may be (100 %, in hundredths of a bip; above it is the dynamic-fee flag).
const MAX_FEE: u32 = 1_000_000;

/// A V4 pool key's fee, tick spacing and hooks from params: the spacing defaults to the
/// standard one of `fee`'s tier, the hooks to none.
pub fn key_params(
    fee: u32,
    tick_spacing: Option<i32>,
    hooks: Option<&str>,
) -> Result<(u32, i32, Address), Error> {
    if fee > MAX_FEE {
        return Err(invalid_params(format!("`fee` {fee} is over 1000000 (100 %); give hundredths of a bip")));
    }
    let spacing = match tick_spacing {
        Some(s) if !(1..=32767).contains(&s) => {
            return Err(invalid_params(format!("`tick_spacing` {s} must be 1 to 32767")));
        }
        Some(s) => s,
        None => TIERS.into_iter().find(|(f, _)| *f == fee).map(|(_, s)| s).ok_or_else(|| {
            invalid_params(format!(
                "fee {fee} has no standard tick spacing; give `tick_spacing` (the pool key's)"
            ))
        })?,
    };
    let hooks = hooks.map(|h| bardo_sdk::abi::parse_address("hooks", h)).transpose()?.unwrap_or_default();
    Ok((fee, spacing, hooks))
}

pub fn u128_amount(amount: U256) -> Result<u128, Error> {
    u128::try_from(amount)
        .map_err(|_| invalid_params(format!("the amount {amount} is too large for a V4 swap")))
}

/// The quote of `amount` through `pool` from `tin`: `(amount in, amount out)`. The quoter
/// reverts (a `Reverted` error) when the pool cannot fill all of it.
pub fn quote(
    chain_id: ChainId,
    quoter: Address,
    pool: &V4Pool,
    tin: &Token,
    amount: U256,
    side: Side,
) -> Result<(U256, U256), Error> {
    let key = pool_key(&pool.token0, &pool.token1, pool.fee, pool.key.tick_spacing, pool.key.hooks);
    // In a native pool the swap's WETH side is ether, currency 0.
    let zero_for_one = tin.address == pool.token0.address
        || (pool.key.native && pool.token0.address.is_zero() && tin.address != pool.token1.address);
    let params = QuoteExactSingleParams {
        poolKey: key,
        zeroForOne: zero_for_one,
        exactAmount: u128_amount(amount)?,
        hookData: Bytes::new(),
    };
    Ok(match side {
        Side::ExactIn => {
            (amount, eth_call(chain_id, quoter, &quoteExactInputSingleCall { params })?.amountOut)
        }
        Side::ExactOut => {
            (eth_call(chain_id, quoter, &quoteExactOutputSingleCall { params })?.amountIn, amount)
        }
    })
}

/// The permissions a hook's address grants it (`Hooks.sol`: one flag per low bit), by name.
pub fn hook_permissions(hooks: Address) -> Vec<&'static str> {
    const NAMES: [&str; 14] = [
        "afterRemoveLiquidityReturnDelta",
        "afterAddLiquidityReturnDelta",
        "afterSwapReturnDelta",
        "beforeSwapReturnDelta",
        "afterDonate",
        "beforeDonate",
        "afterSwap",
        "beforeSwap",
        "afterRemoveLiquidity",
        "beforeRemoveLiquidity",
        "afterAddLiquidity",
        "beforeAddLiquidity",
        "afterInitialize",
        "beforeInitialize",
    ];
    let bits = u16::from_be_bytes([hooks[18], hooks[19]]);
    (0..14).rev().filter(|bit| bits & (1 << bit) != 0).map(|bit| NAMES[bit]).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hook_permissions_are_read_from_the_address_bits() {
        assert!(hook_permissions(Address::ZERO).is_empty());
        let hooks: Address = "0x0000000000000000000000000000000000002044".parse().expect("address");
        assert_eq!(hook_permissions(hooks), ["beforeInitialize", "afterSwap", "afterSwapReturnDelta"]);
    }
}
