//! Uniswap V4: every pool lives inside the PoolManager, named by the hash of its key (currencies,
//! fee, tick spacing, hooks). Pools are found through StateView for the standard fee / tick
//! spacing pairs without hooks, quoted through V4Quoter, and swapped through the
//! UniversalRouter (`router.rs`).

use alloy_primitives::{Address, B256, U256};
use bardo_sdk::erc20::Token;
use bardo_sdk::errors::invalid_params;
use bardo_sdk::{ChainId, Error};

pub use bardo_sdk::uniswap::v4::{
    ExactInputSingleParams, ExactOutputParams, Named, PathKey, PoolKey, Swap, TIERS, V4Key, V4Pool,
    hooked_pool, native_pools, pool_id, pool_key, pool_key_of, pools, pools_or_named, u128_amount,
};

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

/// The quote of `amount` through `pool` from `tin` (`exact_in`: `amount` goes in; else it must
/// come out): `(amount in, amount out)`. The quoter reverts (a `Reverted` error) when the pool
/// cannot fill all of it.
pub fn quote(
    chain_id: ChainId,
    quoter: Address,
    pool: &V4Pool,
    tin: &Token,
    amount: U256,
    exact_in: bool,
) -> Result<(U256, U256), Error> {
    let other = bardo_sdk::uniswap::v4::quote(chain_id, quoter, pool, tin, amount, exact_in)?;
    Ok(if exact_in { (amount, other) } else { (other, amount) })
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
