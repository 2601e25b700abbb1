//! `uniswap_get_position`: a V3 or V4 position's range, liquidity, amounts and fees.

use super::*;

/// Params of `uniswap_get_position`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PositionParams {
    /// Chain id.
    pub chain_id: u64,
    /// The position NFT's token id, decimal.
    pub position_id: String,
    /// `v3` (default) or `v4`: which position manager's NFT `position_id` is.
    #[serde(default)]
    pub version: Option<Version>,
}

/// A V3 position as stored in the NonfungiblePositionManager.
#[derive(Debug, Clone)]
pub struct Position {
    pub id: U256,
    pub owner: Address,
    pub token0: Token,
    pub token1: Token,
    pub fee: u32,
    pub tick_lower: i32,
    pub tick_upper: i32,
    pub liquidity: u128,
}

/// Parse a position id param.
pub fn position_id(text: &str) -> Result<U256, Error> {
    text.trim().parse::<U256>().map_err(|_| {
        invalid_params(format!(
            "`position_id` {text:?} is not a token id; give the position NFT's id in decimal"
        ))
    })
}

/// Read position `id`; `not-found` when it does not exist (or was burned).
pub fn position(chain_id: ChainId, book: &Book, id: U256) -> Result<Position, Error> {
    let gone = || {
        not_found(format!(
            "position {id} does not exist on chain {chain_id}; list the wallet's positions first"
        ))
    };
    let owner = match eth_call(chain_id, book.position_manager, &ownerOfCall { tokenId: id }) {
        Ok(owner) => owner,
        Err(e) if e.code == bardo_sdk::ErrorCode::Reverted => return Err(gone()),
        Err(e) => return Err(e),
    };
    let p = eth_call(chain_id, book.position_manager, &positionsCall { tokenId: id })?;
    Ok(Position {
        id,
        owner,
        token0: erc20::token(chain_id, p.token0)?,
        token1: erc20::token(chain_id, p.token1)?,
        fee: p.fee.to::<u32>(),
        tick_lower: p.tickLower.as_i32(),
        tick_upper: p.tickUpper.as_i32(),
        liquidity: p.liquidity,
    })
}

/// Result of `uniswap_get_position`.
#[derive(Debug, Serialize)]
pub struct PositionOutput {
    pub position_id: String,
    #[serde(serialize_with = "bardo_sdk::abi::checksummed")]
    pub owner: Address,
    #[serde(serialize_with = "bardo_sdk::abi::checksummed")]
    pub pool: Address,
    pub token0: Token,
    pub token1: Token,
    pub fee: u32,
    pub tick_lower: i32,
    pub tick_upper: i32,
    pub current_tick: i32,
    pub in_range: bool,
    pub liquidity: String,
    /// Token amounts the liquidity is worth now, human units, and base units.
    pub amount0: String,
    pub amount1: String,
    pub amount0_base: String,
    pub amount1_base: String,
    /// Fees earned and not yet collected.
    pub fees0: String,
    pub fees1: String,
    pub fees0_base: String,
    pub fees1_base: String,
    /// V4: the pool's id, tick spacing and hooks (`pool` is the PoolManager).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub v4: Option<crate::liquidity_v4::V4Fields>,
}

/// What a position read names besides its tokens and amounts.
pub(super) struct PositionView {
    pub(super) id: U256,
    pub(super) owner: Address,
    /// The V3 pool, or V4's PoolManager.
    pub(super) pool: Address,
    pub(super) fee: u32,
    pub(super) ticks: (i32, i32),
    pub(super) current_tick: i32,
    pub(super) liquidity: u128,
}

impl PositionOutput {
    /// `((principal0, principal1), (fees0, fees1))` in base units.
    pub(super) fn new(
        v: PositionView,
        (token0, token1): (Token, Token),
        ((a0, a1), (f0, f1)): ((U256, U256), (U256, U256)),
        v4: Option<crate::liquidity_v4::V4Fields>,
    ) -> Self {
        let (d0, d1) = (token0.decimals, token1.decimals);
        let (lower, upper) = v.ticks;
        Self {
            position_id: v.id.to_string(),
            owner: v.owner,
            pool: v.pool,
            fee: v.fee,
            tick_lower: lower,
            tick_upper: upper,
            current_tick: v.current_tick,
            in_range: lower <= v.current_tick && v.current_tick < upper,
            liquidity: v.liquidity.to_string(),
            amount0: format_units(a0, d0),
            amount1: format_units(a1, d1),
            amount0_base: a0.to_string(),
            amount1_base: a1.to_string(),
            fees0: format_units(f0, d0),
            fees1: format_units(f1, d1),
            fees0_base: f0.to_string(),
            fees1_base: f1.to_string(),
            token0,
            token1,
            v4,
        }
    }
}

/// (principal0, principal1, fees0, fees1): what removing all liquidity and collecting would pay
/// the owner, from the position manager's own math (simulated as the owner on a fork).
pub fn position_amounts(
    chain_id: ChainId,
    book: &Book,
    pos: &Position,
) -> Result<(U256, U256, U256, U256), Error> {
    use bardo_sdk::abi::{simulate_last, tx_call};
    let npm = book.position_manager;
    let collect = collectCall {
        params: CollectParams {
            tokenId: pos.id,
            recipient: pos.owner,
            amount0Max: u128::MAX,
            amount1Max: u128::MAX,
        },
    };
    let fees = simulate_last::<collectCall>(chain_id, pos.owner, &[tx_call(chain_id, npm, &collect)])?;
    if pos.liquidity == 0 {
        return Ok((U256::ZERO, U256::ZERO, fees.amount0, fees.amount1));
    }
    let decrease = decreaseLiquidityCall {
        params: DecreaseLiquidityParams {
            tokenId: pos.id,
            liquidity: pos.liquidity,
            amount0Min: U256::ZERO,
            amount1Min: U256::ZERO,
            deadline: deadline(chain_id, 600)?,
        },
    };
    let principal =
        simulate_last::<decreaseLiquidityCall>(chain_id, pos.owner, &[tx_call(chain_id, npm, &decrease)])?;
    Ok((principal.amount0, principal.amount1, fees.amount0, fees.amount1))
}

pub struct GetPosition;

impl ReadTool for GetPosition {
    const NAME: &'static str = "uniswap_get_position";
    type Params = PositionParams;
    type Output = PositionOutput;

    fn def() -> ToolDef {
        ToolDef {
            prompt_snippet: "uniswap_get_position: a V3 or V4 LP position's range, amounts, uncollected fees"
                .into(),
            progress_steps: vec!["read position".into(), "read pool".into(), "value position".into()],
            tick_budget: TickBudget::Medium,
            prompt_guidelines: guidelines(&[
                (Phase::Defensive, "Out-of-range positions earn nothing; consider removing them."),
                (Phase::Survival, "Check every open position; withdraw what is at risk."),
            ]),
            ..tool_def::<PositionParams>(
                Self::NAME,
                "Reads a Uniswap V3 position NFT (or a V4 one, `version: v4`): owner, pool, tick range, liquidity, the token amounts it is \
                 worth now, uncollected fees, and whether the pool price is in range. Amounts and fees come \
                 from the position manager's own math, simulated on a fork. It does not change the position.",
                Category::Lp,
            )
        }
    }

    fn run(p: PositionParams) -> Result<PositionOutput, Error> {
        let book = book(p.chain_id)?;
        let id = position_id(&p.position_id)?;
        events::progress(0);
        if p.version == Some(Version::V4) {
            return v4_position(&p, &book, id);
        }
        let pos = position(p.chain_id, &book, id)?;
        events::progress(1);
        let pool_address = eth_call(
            p.chain_id,
            book.v3_factory,
            &getPoolCall {
                tokenA: pos.token0.address,
                tokenB: pos.token1.address,
                fee: alloy_primitives::aliases::U24::from(pos.fee),
            },
        )?;
        let pool = v3_state(p.chain_id, pool_address, &pos.token0, &pos.token1, pos.fee)?;
        events::progress(2);
        let (a0, a1, f0, f1) = position_amounts(p.chain_id, &book, &pos)?;
        Ok(PositionOutput::new(
            PositionView {
                id,
                owner: pos.owner,
                pool: pool.address,
                fee: pos.fee,
                ticks: (pos.tick_lower, pos.tick_upper),
                current_tick: pool.tick,
                liquidity: pos.liquidity,
            },
            (pos.token0, pos.token1),
            ((a0, a1), (f0, f1)),
            None,
        ))
    }
}

/// `uniswap_get_position` of a V4 position.
fn v4_position(p: &PositionParams, book: &Book, id: U256) -> Result<PositionOutput, Error> {
    use crate::liquidity_v4 as v4p;
    let pos = v4p::position(p.chain_id, book, id)?;
    events::progress(1);
    let pool = &pos.pool;
    events::progress(2);
    let amounts = v4p::amounts(p.chain_id, book, &pos, deadline(p.chain_id, 600)?)?;
    Ok(PositionOutput::new(
        PositionView {
            id,
            owner: pos.owner,
            pool: book.v4_pool_manager.unwrap_or_default(),
            fee: pool.fee,
            ticks: (pos.tick_lower, pos.tick_upper),
            current_tick: pool.tick,
            liquidity: pos.liquidity,
        },
        (pool.token0.clone(), pool.token1.clone()),
        amounts,
        Some(v4p::V4Fields::of(pool)),
    ))
}
