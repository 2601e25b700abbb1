//! Reading a pool's swap state for the sidecar through any `eth_call` — the host's chain client
//! at the simulation's block, or a test's provider: a V3 pool by its address, a V4 pool by its id
//! through StateView.

use crate::{PoolState, Ticks};
use alloy_primitives::{Address, B256};
use alloy_sol_types::SolCall;

alloy_sol_types::sol! {
    // V3 pool
    function slot0() external view returns (uint160 sqrtPriceX96, int24 tick, uint16 observationIndex,
        uint16 observationCardinality, uint16 observationCardinalityNext, uint8 feeProtocol, bool unlocked);
    function liquidity() external view returns (uint128);
    function fee() external view returns (uint24);
    function tickSpacing() external view returns (int24);
    function tickBitmap(int16 wordPosition) external view returns (uint256);
    function ticks(int24 tick) external view returns (uint128 liquidityGross, int128 liquidityNet,
        uint256 feeGrowthOutside0X128, uint256 feeGrowthOutside1X128, int56 tickCumulativeOutside,
        uint160 secondsPerLiquidityOutsideX128, uint32 secondsOutside, bool initialized);
    // V4 StateView
    function getSlot0(bytes32 poolId) external view returns (uint160 sqrtPriceX96, int24 tick, uint24 protocolFee,
        uint24 lpFee);
    function getLiquidity(bytes32 poolId) external view returns (uint128 liquidity);
    function getTickBitmap(bytes32 poolId, int16 tick) external view returns (uint256 tickBitmap);
    function getTickLiquidity(bytes32 poolId, int24 tick) external view returns (uint128 liquidityGross,
        int128 liquidityNet);
}

/// Which pool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pool {
    /// A V3 pool at its address.
    V3(Address),
    /// A V4 pool by id, read through StateView; its key's tick spacing.
    V4 {
        /// The StateView lens.
        state_view: Address,
        /// The pool's id.
        id: B256,
        /// Its key's tick spacing.
        tick_spacing: i32,
    },
}

/// Reads one pool through `call(to, calldata) -> returndata`.
pub struct PoolReader<F> {
    pool: Pool,
    call: F,
}

impl<F: FnMut(Address, Vec<u8>) -> Result<Vec<u8>, String>> PoolReader<F> {
    /// A reader of `pool` through `call`.
    pub fn new(pool: Pool, call: F) -> Self {
        Self { pool, call }
    }

    fn read<C: SolCall>(&mut self, to: Address, c: C) -> Result<C::Return, String> {
        let out = (self.call)(to, c.abi_encode())?;
        C::abi_decode_returns(&out).map_err(|e| format!("an unreadable answer to {}: {e}", C::SIGNATURE))
    }

    /// Its price, tick, in-range liquidity and fee. A V4 pool's protocol fee is not modelled:
    /// one that charges it is an error rather than a wrong figure.
    pub fn state(&mut self) -> Result<PoolState, String> {
        match self.pool {
            Pool::V3(pool) => {
                let slot0 = self.read(pool, slot0Call {})?;
                Ok(PoolState {
                    fee: self.read(pool, feeCall {})?.to::<u32>(),
                    tick_spacing: self.read(pool, tickSpacingCall {})?.as_i32(),
                    sqrt_price_x96: slot0.sqrtPriceX96.to(),
                    tick: slot0.tick.as_i32(),
                    liquidity: self.read(pool, liquidityCall {})?,
                })
            }
            Pool::V4 { state_view, id, tick_spacing } => {
                let slot0 = self.read(state_view, getSlot0Call { poolId: id })?;
                if slot0.protocolFee.to::<u32>() != 0 {
                    return Err(format!(
                        "V4 pool {id} charges a protocol fee, which the check does not model"
                    ));
                }
                Ok(PoolState {
                    fee: slot0.lpFee.to::<u32>(),
                    tick_spacing,
                    sqrt_price_x96: slot0.sqrtPriceX96.to(),
                    tick: slot0.tick.as_i32(),
                    liquidity: self.read(state_view, getLiquidityCall { poolId: id })?,
                })
            }
        }
    }

    /// Add the bitmap word at `pos` to `ticks`, with the liquidityNet of each tick it marks.
    pub fn read_word(&mut self, pos: i16, spacing: i32, ticks: &mut Ticks) -> Result<(), String> {
        let word = match self.pool {
            Pool::V3(pool) => self.read(pool, tickBitmapCall { wordPosition: pos })?,
            Pool::V4 { state_view, id, .. } => {
                self.read(state_view, getTickBitmapCall { poolId: id, tick: pos })?
            }
        };
        for tick in Ticks::initialized(pos, word, spacing) {
            let at = alloy_primitives::aliases::I24::try_from(tick).map_err(|e| e.to_string())?;
            let net = match self.pool {
                Pool::V3(pool) => self.read(pool, ticksCall { tick: at })?.liquidityNet,
                Pool::V4 { state_view, id, .. } => {
                    self.read(state_view, getTickLiquidityCall { poolId: id, tick: at })?.liquidityNet
                }
            };
            ticks.nets.insert(tick, net);
        }
        ticks.words.insert(pos, word);
        Ok(())
    }
}
