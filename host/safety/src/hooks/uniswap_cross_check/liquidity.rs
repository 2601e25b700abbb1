//! The cross-check of V3 liquidity: each `Mint` and `Burn` the simulation logged is held to the
//! SDK's position math at the pool's price, and each collect to what the SDK says the position
//! is owed — what was credited to it before, the fees its range earned since (from the pool's
//! fee growth, by `TickLibrary`/`PositionLibrary`), and what a burn of the same plan added. A
//! position of the NonfungiblePositionManager is its NFT's (the manager keeps the accounts of
//! every NFT of a range in one pool position); any other, the pool's. A V4 mint or burn is held
//! to the same position math through what the wallet and the PoolManager transfer.

use super::{Kind, UniswapBook, UniswapCrossCheck, differs, reject, sidecar_refusal, v3};
use crate::evidence::Evidence;
use crate::hooks::Decision;
use crate::valuation::Venue;
use alloy::primitives::{Address, U256, keccak256};
use alloy::sol_types::SolEvent;
use bardo_core::error::ErrorCode;
use bardo_sidecar::FeeGrowth;
use bardo_sidecar::pool_read::{Pool, PoolReader};
use std::collections::BTreeSet;

alloy::sol! {
    function positions(bytes32 key) external view returns (uint128 liquidity, uint256 feeGrowthInside0LastX128,
        uint256 feeGrowthInside1LastX128, uint128 tokensOwed0, uint128 tokensOwed1);
    function ticks(int24 tick) external view returns (uint128 liquidityGross, int128 liquidityNet,
        uint256 feeGrowthOutside0X128, uint256 feeGrowthOutside1X128, int56 tickCumulativeOutside,
        uint160 secondsPerLiquidityOutsideX128, uint32 secondsOutside, bool initialized);
    function feeGrowthGlobal0X128() external view returns (uint256);
    function feeGrowthGlobal1X128() external view returns (uint256);
}

// The NonfungiblePositionManager's (names clash with the pool's).
mod manager {
    alloy::sol! {
        event Collect(uint256 indexed tokenId, address recipient, uint256 amount0, uint256 amount1);
        function positions(uint256 tokenId) external view returns (uint96 nonce, address operator, address token0,
            address token1, uint24 fee, int24 tickLower, int24 tickUpper, uint128 liquidity,
            uint256 feeGrowthInside0LastX128, uint256 feeGrowthInside1LastX128, uint128 tokensOwed0,
            uint128 tokensOwed1);
    }
}

/// What a V3 pool took in (a mint), paid out of a position (a burn, fees aside) or paid to its
/// owner (a collect), as its event says.
#[derive(Debug, Clone)]
pub(super) struct LiquidityMove {
    pool: Address,
    /// The pool position's owner; for an NFT's collect, the position manager.
    owner: Address,
    /// An NFT's collect: its id.
    token_id: Option<U256>,
    ticks: (i32, i32),
    liquidity: u128,
    amounts: (U256, U256),
    kind: MoveKind,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum MoveKind {
    Mint,
    Burn,
    Collect,
}

impl UniswapCrossCheck {
    /// The V3 mints, burns and collects of the plan's authenticated pool events (and the
    /// position manager's collects), in order.
    pub(super) fn liquidity_moves(
        &self,
        chain: u64,
        block: u64,
        book: &UniswapBook,
        ev: &Evidence<'_>,
    ) -> Result<Vec<LiquidityMove>, String> {
        let mut moves = Vec::new();
        if book.v3_factory.is_none() {
            return Ok(moves);
        }
        for log in ev.logs() {
            let topic = log.topics().first().copied().unwrap_or_default();
            if Some(log.address) == book.position_manager && topic == manager::Collect::SIGNATURE_HASH {
                let Ok(e) = manager::Collect::decode_log_data(&log.data) else { continue };
                moves.push(self.nft_collect(chain, block, book, log.address, e)?);
                continue;
            }
            if !matches!(ev.venue(log.address), Some(Venue::V3 { .. })) {
                continue;
            }
            let (owner, ticks, liquidity, amounts, kind) = if topic == v3::Mint::SIGNATURE_HASH {
                let Ok(e) = v3::Mint::decode_log_data(&log.data) else { continue };
                let ticks = (e.tickLower.as_i32(), e.tickUpper.as_i32());
                (e.owner, ticks, e.amount, (e.amount0, e.amount1), MoveKind::Mint)
            } else if topic == v3::Burn::SIGNATURE_HASH {
                let Ok(e) = v3::Burn::decode_log_data(&log.data) else { continue };
                let ticks = (e.tickLower.as_i32(), e.tickUpper.as_i32());
                (e.owner, ticks, e.amount, (e.amount0, e.amount1), MoveKind::Burn)
            } else if topic == v3::Collect::SIGNATURE_HASH {
                let Ok(e) = v3::Collect::decode_log_data(&log.data) else { continue };
                let ticks = (e.tickLower.as_i32(), e.tickUpper.as_i32());
                (e.owner, ticks, 0, (U256::from(e.amount0), U256::from(e.amount1)), MoveKind::Collect)
            } else {
                continue;
            };
            moves.push(LiquidityMove {
                pool: log.address,
                owner,
                token_id: None,
                ticks,
                liquidity,
                amounts,
                kind,
            });
        }
        Ok(moves)
    }

    /// Each mint's, burn's and collect's amounts held to the SDK: a refusal, if one is off.
    /// Nothing in a pool a swap of the plan moves; in any other pool the price stays the fork
    /// block's through the whole plan (mints and burns do not move it), so every mint and burn
    /// is checked there — a rebalance's new mint after its burn too.
    pub(super) fn check_liquidity(
        &self,
        chain: u64,
        block: u64,
        book: &UniswapBook,
        moves: &[LiquidityMove],
        swapped: &BTreeSet<Kind>,
    ) -> Option<Decision> {
        let mut collected = BTreeSet::new();
        for m in moves.iter().filter(|m| !swapped.contains(&Kind::V3(m.pool))) {
            let refused = match m.kind {
                // The manager's own collect from the pool is its NFT's, checked as that.
                MoveKind::Collect if m.token_id.is_none() && Some(m.owner) == book.position_manager => None,
                MoveKind::Collect if collected.insert((m.pool, m.owner, m.ticks, m.token_id)) => {
                    self.check_collect(chain, block, m, moves)
                }
                MoveKind::Mint | MoveKind::Burn => self.check_position(chain, block, m),
                _ => None,
            };
            if refused.is_some() {
                return refused;
            }
        }
        None
    }

    /// An NFT's collect: the manager's event names the NFT, whose position names the pool.
    fn nft_collect(
        &self,
        chain: u64,
        block: u64,
        book: &UniswapBook,
        at: Address,
        e: manager::Collect,
    ) -> Result<LiquidityMove, String> {
        let p = self.read(chain, block, at, manager::positionsCall { tokenId: e.tokenId })?;
        let factory = book.v3_factory.unwrap_or_default();
        let pool = self.read(
            chain,
            block,
            factory,
            super::getPoolCall { tokenA: p.token0, tokenB: p.token1, fee: p.fee },
        )?;
        Ok(LiquidityMove {
            pool,
            owner: at,
            token_id: Some(e.tokenId),
            ticks: (p.tickLower.as_i32(), p.tickUpper.as_i32()),
            liquidity: p.liquidity,
            amounts: (e.amount0, e.amount1),
            kind: MoveKind::Collect,
        })
    }

    fn check_position(&self, chain: u64, block: u64, m: &LiquidityMove) -> Option<Decision> {
        let call = |to: Address, data: Vec<u8>| self.call(chain, block, to, data);
        let state = match PoolReader::new(Pool::V3(m.pool), call).state() {
            Ok(state) => state,
            Err(e) => return Some(reject(ErrorCode::Rpc, format!("cannot read the pool to check it: {e}"))),
        };
        let sdk = match self.sidecar.position_amounts(state.sqrt_price_x96, m.ticks, m.liquidity) {
            Ok(sdk) => sdk,
            Err(e) => return Some(sidecar_refusal(e)),
        };
        let mint = m.kind == MoveKind::Mint;
        let expected = if mint { (sdk.mint_amount0, sdk.mint_amount1) } else { (sdk.amount0, sdk.amount1) };
        if differs(m.amounts.0, expected.0) || differs(m.amounts.1, expected.1) {
            return Some(reject(
                ErrorCode::Denied,
                format!(
                    "the simulated {} of {} liquidity in V3 pool {} moves {} and {}, but Uniswap's SDK says {} and {} at block {block}",
                    if mint { "mint" } else { "burn" },
                    m.liquidity,
                    m.pool,
                    m.amounts.0,
                    m.amounts.1,
                    expected.0,
                    expected.1
                ),
            ));
        }
        None
    }

    /// What the position is owed at the fork block, by the SDK, plus what burns of this plan
    /// (already held to the SDK) credit it: a collect may pay that much and no more.
    fn check_collect(
        &self,
        chain: u64,
        block: u64,
        c: &LiquidityMove,
        moves: &[LiquidityMove],
    ) -> Option<Decision> {
        let owed = match self.owed(chain, block, c) {
            Ok(Ok(owed)) => owed,
            Ok(Err(e)) => return Some(sidecar_refusal(e)),
            Err(e) => {
                return Some(reject(ErrorCode::Rpc, format!("cannot read the position to check it: {e}")));
            }
        };
        let burned = moves
            .iter()
            .filter(|m| m.kind == MoveKind::Burn && (m.pool, m.owner, m.ticks) == (c.pool, c.owner, c.ticks))
            .fold((U256::ZERO, U256::ZERO), |(a, b), m| (a + m.amounts.0, b + m.amounts.1));
        let most = (owed.0 + burned.0, owed.1 + burned.1);
        let over = |paid: U256, most: U256| paid > most && differs(paid, most);
        if over(c.amounts.0, most.0) || over(c.amounts.1, most.1) {
            return Some(reject(
                ErrorCode::Denied,
                format!(
                    "the simulated collect from V3 pool {} pays {} and {}, but Uniswap's SDK says the position is owed {} and {} at block {block}",
                    c.pool, c.amounts.0, c.amounts.1, most.0, most.1
                ),
            ));
        }
        None
    }

    /// The position's credited tokens plus the fees its range earned since it was last touched.
    fn owed(
        &self,
        chain: u64,
        block: u64,
        c: &LiquidityMove,
    ) -> Result<Result<(U256, U256), bardo_sidecar::SidecarError>, String> {
        let (lower, upper) = c.ticks;
        let (liquidity, last, credited) = match c.token_id {
            Some(token_id) => {
                let p = self.read(chain, block, c.owner, manager::positionsCall { tokenId: token_id })?;
                (
                    p.liquidity,
                    (p.feeGrowthInside0LastX128, p.feeGrowthInside1LastX128),
                    (p.tokensOwed0, p.tokensOwed1),
                )
            }
            None => {
                let key = keccak256(
                    [c.owner.as_slice(), &lower.to_be_bytes()[1..], &upper.to_be_bytes()[1..]].concat(),
                );
                let p = self.read(chain, block, c.pool, positionsCall { key })?;
                (
                    p.liquidity,
                    (p.feeGrowthInside0LastX128, p.feeGrowthInside1LastX128),
                    (p.tokensOwed0, p.tokensOwed1),
                )
            }
        };
        let tick = |t: i32| -> Result<_, String> {
            let at = alloy::primitives::aliases::I24::try_from(t).map_err(|e| e.to_string())?;
            self.read(chain, block, c.pool, ticksCall { tick: at })
        };
        let (lo, up) = (tick(lower)?, tick(upper)?);
        let call = |to: Address, data: Vec<u8>| self.call(chain, block, to, data);
        let state = PoolReader::new(Pool::V3(c.pool), call).state()?;
        let growth = FeeGrowth {
            ticks: c.ticks,
            tick_current: state.tick,
            global: (
                self.read(chain, block, c.pool, feeGrowthGlobal0X128Call {})?,
                self.read(chain, block, c.pool, feeGrowthGlobal1X128Call {})?,
            ),
            outside_lower: (lo.feeGrowthOutside0X128, lo.feeGrowthOutside1X128),
            outside_upper: (up.feeGrowthOutside0X128, up.feeGrowthOutside1X128),
            inside_last: last,
            liquidity,
        };
        Ok(self
            .sidecar
            .position_fees(&growth)
            .map(|(f0, f1)| (U256::from(credited.0) + f0, U256::from(credited.1) + f1)))
    }
}

// The PoolManager's event of a V4 position change, and the token transfers that settle it.
mod pool_manager {
    alloy::sol! {
        event ModifyLiquidity(bytes32 indexed id, address indexed sender, int24 tickLower, int24 tickUpper,
            int256 liquidityDelta, bytes32 salt);
        event Transfer(address indexed from, address indexed to, uint256 value);
    }
}

impl UniswapCrossCheck {
    /// A V4 mint or burn (one `ModifyLiquidity` in the plan, in a hookless pool no swap of the plan
    /// moves) held to the SDK's position math at the pool's price: the wallet (or, in a
    /// migration, the PositionManager for it) may pay the PoolManager no more than minting that
    /// liquidity costs (less, when fees the position earned
    /// pay part), and a burn must pay the wallet at least what the liquidity is worth (more: the
    /// fees). Ether sides settle without a log and are left to the value guard.
    pub(super) fn check_v4_liquidity(
        &self,
        chain: u64,
        block: u64,
        book: &UniswapBook,
        (ev, wallet): (&Evidence<'_>, Address),
        swapped: &BTreeSet<Kind>,
    ) -> Option<Decision> {
        let (manager, state_view) = (book.v4_pool_manager?, book.v4_state_view?);
        let mods: Vec<_> = ev
            .pool_events()
            .map(|(_, l, _)| l)
            .filter(|l| {
                l.address == manager
                    && l.topics().first() == Some(&pool_manager::ModifyLiquidity::SIGNATURE_HASH)
            })
            .filter_map(|l| pool_manager::ModifyLiquidity::decode_log_data(&l.data).ok())
            .collect();
        let [m] = mods.as_slice() else { return None };
        if m.liquidityDelta.is_zero()
            || swapped.iter().any(|k| matches!(k, Kind::V4 { id, .. } if *id == m.id))
        {
            return None;
        }
        let key = match self.v4_key(chain, block, manager, m.id) {
            Ok(key) => key,
            Err(e) => {
                return Some(reject(ErrorCode::Rpc, format!("cannot read the V4 pool to check it: {e}")));
            }
        };
        if !key.hooks.is_zero() {
            return None;
        }
        let call = |to: Address, data: Vec<u8>| self.call(chain, block, to, data);
        let pool = Pool::V4 { state_view, id: m.id, tick_spacing: key.tickSpacing.as_i32() };
        let state = match PoolReader::new(pool, call).state() {
            Ok(state) => state,
            Err(e) => {
                return Some(reject(ErrorCode::Rpc, format!("cannot read the V4 pool to check it: {e}")));
            }
        };
        let mint = m.liquidityDelta.is_positive();
        let liquidity = u128::try_from(m.liquidityDelta.unsigned_abs()).unwrap_or(u128::MAX);
        let ticks = (m.tickLower.as_i32(), m.tickUpper.as_i32());
        let sdk = match self.sidecar.position_amounts(state.sqrt_price_x96, ticks, liquidity) {
            Ok(sdk) => sdk,
            Err(e) => return Some(sidecar_refusal(e)),
        };
        let flow = |token: Address, from: Address, to: Address| -> U256 {
            ev.logs()
                .iter()
                .filter(|l| {
                    l.address == token && l.topics().first() == Some(&pool_manager::Transfer::SIGNATURE_HASH)
                })
                .filter_map(|l| pool_manager::Transfer::decode_log_data(&l.data).ok())
                .filter(|t| t.from == from && t.to == to)
                .map(|t| t.value)
                .sum()
        };
        let sides =
            [(key.currency0, sdk.mint_amount0, sdk.amount0), (key.currency1, sdk.mint_amount1, sdk.amount1)];
        for (currency, costs, pays) in sides.into_iter().filter(|(c, _, _)| !c.is_zero()) {
            let (moved, expected, off) = if mint {
                // The wallet pays through Permit2; in a migration the PositionManager pays from
                // what the V3 position paid it (the wallet's too).
                let paid = flow(currency, wallet, manager) + flow(currency, m.sender, manager);
                (paid, costs, paid > costs && differs(paid, costs))
            } else {
                let got = flow(currency, manager, wallet);
                (got, pays, got < pays && differs(got, pays))
            };
            if off {
                return Some(reject(
                    ErrorCode::Denied,
                    format!(
                        "the simulated V4 {} of {liquidity} liquidity in pool {} moves {moved} of {currency}, but Uniswap's SDK says {} {expected} at block {block}",
                        if mint { "mint" } else { "burn" },
                        m.id,
                        if mint { "it costs at most" } else { "it pays at least" },
                    ),
                ));
            }
        }
        None
    }
}
