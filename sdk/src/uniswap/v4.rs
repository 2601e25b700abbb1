//! Uniswap V4 pieces shared by the plugins that read it (the `uniswap` tools, the `streaming`
//! tools): pool keys and ids, StateView's reads, the PoolManager's events, the PositionManager's
//! position views, and the pool key behind a pool id.

use crate::abi::{eth_call, wire};
use crate::erc20::Token;
use crate::uniswap::pools::sorted;
use crate::{ChainId, Error, LogFilter, chain};
use alloy_primitives::aliases::{I24, U24};
use alloy_primitives::{Address, B256, U256, keccak256};
use alloy_sol_types::{SolEvent, SolValue};
use serde::Serialize;

alloy_sol_types::sol! {
    /// What names a V4 pool: its id is the keccak256 of this, ABI-encoded.
    struct PoolKey { address currency0; address currency1; uint24 fee; int24 tickSpacing; address hooks; }

    // StateView
    function getSlot0(bytes32 poolId) external view returns (uint160 sqrtPriceX96, int24 tick, uint24 protocolFee,
        uint24 lpFee);
    function getLiquidity(bytes32 poolId) external view returns (uint128 liquidity);
    function getFeeGrowthInside(bytes32 poolId, int24 tickLower, int24 tickUpper) external view
        returns (uint256 feeGrowthInside0X128, uint256 feeGrowthInside1X128);
    function getPositionInfo(bytes32 poolId, address owner, int24 tickLower, int24 tickUpper, bytes32 salt)
        external view returns (uint128 liquidity, uint256 feeGrowthInside0LastX128, uint256 feeGrowthInside1LastX128);

    // V4Quoter (reverts when the pool cannot fill the whole amount)
    struct QuoteExactSingleParams { PoolKey poolKey; bool zeroForOne; uint128 exactAmount; bytes hookData; }
    function quoteExactInputSingle(QuoteExactSingleParams params) external returns (uint256 amountOut,
        uint256 gasEstimate);
    function quoteExactOutputSingle(QuoteExactSingleParams params) external returns (uint256 amountIn,
        uint256 gasEstimate);

    // The V4 router's swaps (inside the UniversalRouter's V4_SWAP)
    struct ExactInputSingleParams { PoolKey poolKey; bool zeroForOne; uint128 amountIn; uint128 amountOutMinimum;
        bytes hookData; }
    /// One pool of a multi-pool path: the currency on its far side and the rest of its key.
    struct PathKey { address intermediateCurrency; uint24 fee; int24 tickSpacing; address hooks; bytes hookData; }
    /// An exact-out swap through one or more pools: `path[0]` names the input currency, the last
    /// the currency the output's pool is paid in; `maxHopSlippage`, optional per-hop price limits
    /// (UniversalRouter 2.1, the deployed one).
    struct ExactOutputParams { address currencyOut; PathKey[] path; uint256[] maxHopSlippage; uint128 amountOut;
        uint128 amountInMaximum; }

    // PositionManager
    /// MINT_POSITION's parameters (`abi.encode(poolKey, tickLower, …, hookData)`).
    struct MintPosition { PoolKey poolKey; int24 tickLower; int24 tickUpper; uint256 liquidity; uint128 amount0Max;
        uint128 amount1Max; address owner; bytes hookData; }
    function getPoolAndPositionInfo(uint256 tokenId) external view returns (PoolKey poolKey, uint256 info);
    function getPositionLiquidity(uint256 tokenId) external view returns (uint128 liquidity);

    // PoolManager. `Swap`'s amounts are the swapper's balance deltas (negative: paid into the pool).
    event Initialize(bytes32 indexed id, address indexed currency0, address indexed currency1, uint24 fee,
        int24 tickSpacing, address hooks, uint160 sqrtPriceX96, int24 tick);
    event Swap(bytes32 indexed id, address indexed sender, int128 amount0, int128 amount1, uint160 sqrtPriceX96,
        uint128 liquidity, int24 tick, uint24 fee);
    event ModifyLiquidity(bytes32 indexed id, address indexed sender, int24 tickLower, int24 tickUpper,
        int256 liquidityDelta, bytes32 salt);
}

/// The fee / tick spacing pairs V4 pools without hooks are looked for at (V3's tiers and
/// spacings).
pub const TIERS: [(u32, i32); 4] = [(100, 1), (500, 10), (3000, 60), (10000, 200)];

/// A pool's id: keccak256 of its ABI-encoded key.
pub fn pool_id(key: &PoolKey) -> B256 {
    keccak256(key.abi_encode())
}

// A PositionManager `PositionInfo` word's ticks: the host reads them the same way.
pub use super::tick_math::{packed_tick, position_ticks};

/// A V4 currency as a token: the zero address is native ether.
pub fn currency(chain_id: ChainId, address: Address) -> Result<crate::erc20::Token, Error> {
    if address.is_zero() {
        return Ok(crate::erc20::Token { address, symbol: "ETH".into(), decimals: 18 });
    }
    crate::erc20::token(chain_id, address)
}

/// The key of pool `id`, from the PoolManager's `Initialize` log (pools are named by the hash
/// of their key; only that log shows the key). None: no such pool.
pub fn key_by_id(chain_id: ChainId, pool_manager: Address, id: B256) -> Result<Option<PoolKey>, Error> {
    let filter = LogFilter {
        chain_id,
        addresses: vec![wire(&pool_manager)],
        topics: vec![vec![Initialize::SIGNATURE_HASH.to_string()], vec![id.to_string()]],
        from_block: Some(0),
        to_block: None,
    };
    let logs = chain::logs(&filter)?;
    Ok(logs.iter().find_map(crate::abi::decode_log::<Initialize>).map(|e| PoolKey {
        currency0: e.currency0,
        currency1: e.currency1,
        fee: e.fee,
        tickSpacing: e.tickSpacing,
        hooks: e.hooks,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_unpack_from_position_info() {
        let lower = (-600i32 as u32 & 0xff_ffff) as u64;
        let pool = U256::from_be_bytes([0xab; 32]) << 56;
        let info = pool | U256::from(887_220u64) << 32 | U256::from(lower) << 8 | U256::from(1u8);
        assert_eq!(position_ticks(info), (-600, 887_220));
    }
}

/// What names a V4 pool besides its tokens and fee.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct V4Key {
    /// keccak256 of the ABI-encoded pool key.
    pub pool_id: B256,
    /// The key's tick spacing.
    pub tick_spacing: i32,
    /// The key's hooks contract (zero: none).
    #[serde(serialize_with = "crate::abi::checksummed")]
    pub hooks: Address,
    /// The pool trades native ether (currency 0, the zero address) where the swap names WETH:
    /// the router pays and takes ether itself, without wrapping.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub native: bool,
}

/// A V4 pool and its current state.
#[derive(Debug, Clone)]
pub struct V4Pool {
    /// Its key beyond the tokens and fee.
    pub key: V4Key,
    /// The token sorted first (ether, the zero address, in a native pool).
    pub token0: Token,
    /// The other token.
    pub token1: Token,
    /// The fee in the key, hundredths of a bip.
    pub fee: u32,
    /// `slot0`'s price, Q64.96.
    pub sqrt_price_x96: U256,
    /// `slot0`'s tick.
    pub tick: i32,
    /// Liquidity in range.
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
    book: &super::Book,
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
    book: &super::Book,
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
    book: &super::Book,
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

impl V4Pool {
    /// Whether selling `tin` into this pool pays currency 0 (in a native pool, ether stands for
    /// the WETH a caller names).
    pub fn zero_for_one(&self, tin: &Token) -> bool {
        tin.address == self.token0.address
            || (self.key.native && self.token0.address.is_zero() && tin.address != self.token1.address)
    }
}

/// An amount as a V4 swap's `uint128`.
pub fn u128_amount(amount: U256) -> Result<u128, Error> {
    u128::try_from(amount)
        .map_err(|_| crate::errors::invalid_params(format!("the amount {amount} is too large for a V4 swap")))
}

/// V4Quoter's answer for `amount` through `pool` from `tin`: the amount out (`exact_in`) or the
/// amount in that buys `amount`. A native pool's ether side is currency 0 where the caller names
/// WETH. The quoter reverts (a `Reverted` error) when the pool cannot fill all of it.
pub fn quote(
    chain_id: ChainId,
    quoter: Address,
    pool: &V4Pool,
    tin: &Token,
    amount: U256,
    exact_in: bool,
) -> Result<U256, Error> {
    let key = pool_key(&pool.token0, &pool.token1, pool.fee, pool.key.tick_spacing, pool.key.hooks);
    let params = QuoteExactSingleParams {
        poolKey: key,
        zeroForOne: pool.zero_for_one(tin),
        exactAmount: u128_amount(amount)?,
        hookData: alloy_primitives::Bytes::new(),
    };
    if exact_in {
        Ok(eth_call(chain_id, quoter, &quoteExactInputSingleCall { params })?.amountOut)
    } else {
        Ok(eth_call(chain_id, quoter, &quoteExactOutputSingleCall { params })?.amountIn)
    }
}

/// Native ether as a V4 currency (the zero address), named as the host names it.
pub fn ether() -> Token {
    Token { address: Address::ZERO, symbol: "ETH".into(), decimals: 18 }
}

/// A V4 pool a swap names beyond the standard tiers: `(fee, tick spacing, hooks)`.
pub type Named = Option<(u32, i32, Address)>;

/// The V4 pools of `a`/`b`: the one `named`, or those at the standard tiers (`fee`: only that
/// tier).
pub fn pools_or_named(
    chain_id: ChainId,
    book: &super::Book,
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
    book: &super::Book,
    (a, b): (&Token, &Token),
    weth: Address,
    (fee, named): (Option<u32>, Named),
) -> Result<Vec<V4Pool>, Error> {
    let eth = ether();
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
