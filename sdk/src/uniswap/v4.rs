//! Uniswap V4 pieces shared by the plugins that read it (the `uniswap` tools, the `streaming`
//! tools): pool keys and ids, StateView's reads, the PoolManager's events, the PositionManager's
//! position views, and the pool key behind a pool id.

use crate::abi::wire;
use crate::{ChainId, Error, LogFilter, chain};
use alloy_primitives::{Address, B256, U256, keccak256};
use alloy_sol_types::{SolEvent, SolValue};

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

/// A tick stored in a PositionManager `PositionInfo` word: `| poolId (200) | tickUpper (24) |
/// tickLower (24) | hasSubscriber (8) |`.
pub fn packed_tick(info: U256, offset: usize) -> i32 {
    let raw = ((info >> offset) & U256::from(0xff_ffffu32)).to::<u32>();
    ((raw << 8) as i32) >> 8
}

/// `(tick lower, tick upper)` of a PositionManager `PositionInfo` word.
pub fn position_ticks(info: U256) -> (i32, i32) {
    (packed_tick(info, 8), packed_tick(info, 32))
}

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
