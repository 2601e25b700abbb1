//! `stream_position_alerts`: a Uniswap V3 or V4 position leaving or re-entering its range (from
//! every swap's tick in its pool), and its uncollected fees crossing a USD threshold — each alert
//! once per transition. Fees are the pools' own accounting (fee growth inside the range since the
//! position's last checkpoint, times its liquidity).

use crate::config::{LogRef, event, logs, stream_def, uniswap};
use crate::tokens::TokenState;
use alloy_primitives::{Address, B256, U256, U512};
use alloy_sol_types::SolEvent;
use bardo_sdk::abi::{decode_log, eth_call};
use bardo_sdk::erc20::{self, Token};
use bardo_sdk::errors::{invalid_params, not_found};
use bardo_sdk::uniswap::v4;
use bardo_sdk::uniswap::*;
use bardo_sdk::units::{format_units, parse_units};
use bardo_sdk::{ChainId, Error, Log, Source, SpriteTrigger, StreamEvent, StreamTool, ToolDef};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Params of `stream_position_alerts`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PositionParams {
    /// Chain id.
    pub chain_id: ChainId,
    /// The position's token id (decimal): of the V3 NonfungiblePositionManager, or of the V4
    /// PositionManager with `version: v4`.
    pub token_id: String,
    /// `v3` (default) or `v4`.
    #[serde(default)]
    pub version: Option<Version>,
    /// Alert once when the uncollected fees are worth at least this many USD (the pool must
    /// hold the configured quote token). Omit for range alerts only.
    #[serde(default)]
    pub fee_threshold_usd: Option<String>,
}

/// What the stream remembers between swaps.
#[derive(Debug, Serialize, Deserialize)]
pub struct PositionState {
    pool: Address,
    /// V4: the pool's id (`pool` is the PoolManager).
    #[serde(default)]
    pool_id: Option<B256>,
    token0: TokenState,
    token1: TokenState,
    tick_lower: i32,
    tick_upper: i32,
    in_range: bool,
    /// Which token is the quote (USD) token, for fee valuation.
    quote_is_token0: Option<bool>,
    /// Fee threshold in quote base units.
    fee_threshold: Option<U256>,
    fee_alerted: bool,
}

#[derive(Debug, Serialize)]
struct Alert {
    alert: &'static str,
    /// The chain the position is on: token ids repeat across chains.
    chain_id: ChainId,
    token_id: String,
    #[serde(serialize_with = "bardo_sdk::abi::checksummed")]
    pool: Address,
    tick: i32,
    tick_lower: i32,
    tick_upper: i32,
    #[serde(skip_serializing_if = "Option::is_none")]
    fees0: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    fees1: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    fees_usd: Option<String>,
    #[serde(flatten)]
    at: Option<LogRef>,
}

pub struct PositionAlerts;

fn token_id(p: &PositionParams) -> Result<U256, Error> {
    p.token_id
        .trim()
        .parse::<U256>()
        .map_err(|_| invalid_params(format!("`token_id` {:?} is not a decimal integer", p.token_id)))
}

/// The position's uncollected fees now, in base units of token0 and token1, the pool's tick and
/// its sqrt price.
fn fees(p: &PositionParams, s: &PositionState) -> Result<(U256, U256, i32, U256), Error> {
    let (c, book) = (p.chain_id, uniswap(p.chain_id)?);
    if let Some(id) = s.pool_id {
        return v4_fees(p, s, &book, id);
    }
    let pos = eth_call(c, book.position_manager, &positionsCall { tokenId: token_id(p)? })?;
    let slot0 = eth_call(c, s.pool, &slot0Call {})?;
    let tick = slot0.tick.as_i32();
    let lower = eth_call(c, s.pool, &ticksCall { tick: pos.tickLower })?;
    let upper = eth_call(c, s.pool, &ticksCall { tick: pos.tickUpper })?;
    let globals = [
        eth_call(c, s.pool, &feeGrowthGlobal0X128Call {})?,
        eth_call(c, s.pool, &feeGrowthGlobal1X128Call {})?,
    ];
    let outside_lower = [lower.feeGrowthOutside0X128, lower.feeGrowthOutside1X128];
    let outside_upper = [upper.feeGrowthOutside0X128, upper.feeGrowthOutside1X128];
    let last = [pos.feeGrowthInside0LastX128, pos.feeGrowthInside1LastX128];
    let owed = [U256::from(pos.tokensOwed0), U256::from(pos.tokensOwed1)];
    // The pool's own accounting (Tick.getFeeGrowthInside), in wrapping arithmetic as on chain.
    let owed_now = |i: usize| {
        let below =
            if tick >= s.tick_lower { outside_lower[i] } else { globals[i].wrapping_sub(outside_lower[i]) };
        let above =
            if tick < s.tick_upper { outside_upper[i] } else { globals[i].wrapping_sub(outside_upper[i]) };
        let inside = globals[i].wrapping_sub(below).wrapping_sub(above);
        let grown = (U512::from(inside.wrapping_sub(last[i])) * U512::from(pos.liquidity)) >> 128;
        owed[i] + U256::from(grown)
    };
    Ok((owed_now(0), owed_now(1), tick, U256::from(slot0.sqrtPriceX96)))
}

/// A V4 position's uncollected fees, as the PoolManager computes them: the fee growth inside its
/// range now less its checkpoint, times its liquidity (`Position.update`), in wrapping arithmetic.
fn v4_fees(
    p: &PositionParams,
    s: &PositionState,
    book: &Book,
    id: B256,
) -> Result<(U256, U256, i32, U256), Error> {
    let c = p.chain_id;
    let (state_view, posm) = v4_views(c, book)?;
    let (lower, upper) = (to_i24(s.tick_lower), to_i24(s.tick_upper));
    let salt = B256::from(token_id(p)?);
    let info = eth_call(
        c,
        state_view,
        &v4::getPositionInfoCall { poolId: id, owner: posm, tickLower: lower, tickUpper: upper, salt },
    )?;
    let inside = eth_call(
        c,
        state_view,
        &v4::getFeeGrowthInsideCall { poolId: id, tickLower: lower, tickUpper: upper },
    )?;
    let slot0 = eth_call(c, state_view, &v4::getSlot0Call { poolId: id })?;
    let owed = |now: U256, last: U256| {
        U256::from((U512::from(now.wrapping_sub(last)) * U512::from(info.liquidity)) >> 128)
    };
    Ok((
        owed(inside.feeGrowthInside0X128, info.feeGrowthInside0LastX128),
        owed(inside.feeGrowthInside1X128, info.feeGrowthInside1LastX128),
        slot0.tick.as_i32(),
        U256::from(slot0.sqrtPriceX96),
    ))
}

fn to_i24(tick: i32) -> alloy_primitives::aliases::I24 {
    alloy_primitives::aliases::I24::try_from(tick).unwrap_or_default()
}

/// V4's StateView and PositionManager on `chain_id`.
fn v4_views(chain_id: ChainId, book: &Book) -> Result<(Address, Address), Error> {
    match (book.v4_state_view, book.v4_position_manager) {
        (Some(view), Some(posm)) => Ok((view, posm)),
        _ => Err(bardo_sdk::errors::chain_not_supported(format!(
            "chain {chain_id} has no Uniswap V4 StateView and PositionManager configured (`v4_state_view`, \
             `v4_position_manager`)"
        ))),
    }
}

/// A position's pool, tokens, range and the pool's tick when the stream opens.
struct Opened {
    /// The V3 pool, or V4's PoolManager.
    pool: Address,
    /// A V4 pool's id.
    pool_id: Option<B256>,
    token0: Token,
    token1: Token,
    ticks: (i32, i32),
    tick: i32,
}

/// A V3 position, through the NonfungiblePositionManager and the pool.
fn v3_position(p: &PositionParams, book: &Book) -> Result<Opened, Error> {
    let (c, id) = (p.chain_id, token_id(p)?);
    let pos = eth_call(c, book.position_manager, &positionsCall { tokenId: id })
        .map_err(|_| not_found(format!("no Uniswap V3 position {id} on chain {c}")))?;
    let call = getPoolCall { tokenA: pos.token0, tokenB: pos.token1, fee: pos.fee };
    let pool = eth_call(c, book.v3_factory, &call)?;
    Ok(Opened {
        pool,
        pool_id: None,
        tick: eth_call(c, pool, &slot0Call {})?.tick.as_i32(),
        token0: erc20::token(c, pos.token0)?,
        token1: erc20::token(c, pos.token1)?,
        ticks: (pos.tickLower.as_i32(), pos.tickUpper.as_i32()),
    })
}

/// A V4 position, through the PositionManager and StateView.
fn v4_position(p: &PositionParams, book: &Book) -> Result<Opened, Error> {
    let c = p.chain_id;
    let (state_view, posm) = v4_views(c, book)?;
    let id = token_id(p)?;
    let stored = eth_call(c, posm, &v4::getPoolAndPositionInfoCall { tokenId: id })?;
    if stored.poolKey.tickSpacing.is_zero() {
        return Err(not_found(format!("no Uniswap V4 position {id} on chain {c} (never minted, or burned)")));
    }
    let pool_id = v4::pool_id(&stored.poolKey);
    Ok(Opened {
        pool: crate::v4::pool_manager(c, book)?,
        pool_id: Some(pool_id),
        tick: eth_call(c, state_view, &v4::getSlot0Call { poolId: pool_id })?.tick.as_i32(),
        token0: crate::v4::currency(c, stored.poolKey.currency0)?,
        token1: crate::v4::currency(c, stored.poolKey.currency1)?,
        ticks: v4::position_ticks(stored.info),
    })
}

/// `fees` valued in the quote token's base units at the pool's price `sqrt_price_x96`.
fn value_in_quote(s: &PositionState, f0: U256, f1: U256, sqrt_price_x96: U256) -> Option<U256> {
    let quote_is_token0 = s.quote_is_token0?;
    let sqrt = U512::from(sqrt_price_x96);
    let (p2, q192) = (sqrt * sqrt, U512::from(1u8) << 192);
    let value = if quote_is_token0 {
        U512::from(f0) + U512::from(f1) * q192 / p2.max(U512::from(1u8))
    } else {
        U512::from(f1) + U512::from(f0) * p2 / q192
    };
    Some(U256::from(value))
}

impl StreamTool for PositionAlerts {
    const NAME: &'static str = "stream_position_alerts";
    type Params = PositionParams;
    type State = PositionState;

    fn def() -> ToolDef {
        stream_def::<PositionParams>(
            Self::NAME,
            "Watches a Uniswap V3 position (or a V4 one, `version: v4`): an out_of_range alert when a swap moves the pool's tick out \
                 of the position's range, back_in_range when it returns, and fee_threshold once when the \
                 uncollected fees reach fee_threshold_usd. Each alert fires once per transition, relative \
                 to the state when the stream opened. Emits PositionAlert.",
            "stream_position_alerts: alerts when a V3 or V4 position leaves/re-enters range or earns fees",
            SpriteTrigger::Alert,
        )
    }

    fn open(p: &PositionParams) -> Result<(Vec<Source>, PositionState), Error> {
        let (c, book) = (p.chain_id, uniswap(p.chain_id)?);
        let opened =
            if p.version == Some(Version::V4) { v4_position(p, &book)? } else { v3_position(p, &book)? };
        let Opened { pool, pool_id, token0, token1, ticks: (lower, upper), tick } = opened;
        let quote = book.token(c, "quote_token", &book.quote_token)?;
        let quote_is_token0 =
            [token0.address, token1.address].iter().position(|a| *a == quote.address).map(|i| i == 0);
        let fee_threshold = match &p.fee_threshold_usd {
            None => None,
            Some(_) if quote_is_token0.is_none() => {
                return Err(invalid_params(format!(
                    "fees can be valued in USD only in a pool with {} ({}/{} has none); omit fee_threshold_usd",
                    quote.symbol, token0.symbol, token1.symbol
                )));
            }
            Some(t) => Some(parse_units("fee_threshold_usd", t, quote.decimals)?),
        };
        let state = PositionState {
            pool,
            pool_id,
            token0: token0.into(),
            token1: token1.into(),
            tick_lower: lower,
            tick_upper: upper,
            in_range: lower <= tick && tick < upper,
            quote_is_token0,
            fee_threshold,
            fee_alerted: false,
        };
        let topics = match pool_id {
            Some(id) => vec![vec![v4::Swap::SIGNATURE_HASH], vec![id]],
            None => vec![vec![Swap::SIGNATURE_HASH]],
        };
        Ok((vec![logs(c, &[pool], topics)], state))
    }

    fn on_logs(
        p: &PositionParams,
        logs: Vec<Log>,
        mut s: PositionState,
    ) -> Result<(Vec<StreamEvent>, PositionState), Error> {
        let mut out = Vec::new();
        let alert = |kind, tick, at: Option<LogRef>, s: &PositionState| Alert {
            alert: kind,
            chain_id: p.chain_id,
            token_id: p.token_id.clone(),
            pool: s.pool,
            tick,
            tick_lower: s.tick_lower,
            tick_upper: s.tick_upper,
            fees0: None,
            fees1: None,
            fees_usd: None,
            at,
        };
        for log in &logs {
            let tick = match (decode_log::<Swap>(log), decode_log::<v4::Swap>(log)) {
                (Some(swap), _) if s.pool_id.is_none() => swap.tick.as_i32(),
                (_, Some(swap)) if Some(swap.id) == s.pool_id => swap.tick.as_i32(),
                _ => continue,
            };
            let now_in = s.tick_lower <= tick && tick < s.tick_upper;
            if now_in != s.in_range {
                s.in_range = now_in;
                let kind = if now_in { "back_in_range" } else { "out_of_range" };
                out.push(event("position-alert", &alert(kind, tick, Some(LogRef::from(log)), &s))?);
            }
        }
        if let Some(threshold) = s.fee_threshold {
            let (f0, f1, tick, sqrt) = fees(p, &s)?;
            let value = value_in_quote(&s, f0, f1, sqrt).unwrap_or_default();
            let above = value >= threshold;
            if above && !s.fee_alerted {
                let quote_decimals =
                    if s.quote_is_token0 == Some(true) { s.token0.decimals } else { s.token1.decimals };
                out.push(event(
                    "position-alert",
                    &Alert {
                        fees0: Some(format_units(f0, s.token0.decimals)),
                        fees1: Some(format_units(f1, s.token1.decimals)),
                        fees_usd: Some(format_units(value, quote_decimals)),
                        ..alert("fee_threshold", tick, logs.last().map(LogRef::from), &s)
                    },
                )?);
            }
            // Collecting the fees re-arms the alert.
            s.fee_alerted = above;
        }
        Ok((out, s))
    }
}
