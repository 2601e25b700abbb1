//! `stream_position_alerts`: a Uniswap V3 position leaving or re-entering its range (from every
//! swap's tick in its pool), and its uncollected fees crossing a USD threshold — each alert once
//! per transition.

use crate::config::{LogRef, event, logs, stream_def, uniswap};
use crate::pools::TokenState;
use alloy_primitives::{Address, U256, U512};
use alloy_sol_types::SolEvent;
use bardo_sdk::abi::{decode_log, eth_call};
use bardo_sdk::erc20;
use bardo_sdk::errors::{invalid_params, not_found};
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
    /// The position's NonfungiblePositionManager token id (decimal).
    pub token_id: String,
    /// Alert once when the uncollected fees are worth at least this many USD (the pool must
    /// hold the configured quote token). Omit for range alerts only.
    #[serde(default)]
    pub fee_threshold_usd: Option<String>,
}

/// What the stream remembers between swaps.
#[derive(Debug, Serialize, Deserialize)]
pub struct PositionState {
    pool: Address,
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
            "Watches a Uniswap V3 position: an out_of_range alert when a swap moves the pool's tick out \
                 of the position's range, back_in_range when it returns, and fee_threshold once when the \
                 uncollected fees reach fee_threshold_usd. Each alert fires once per transition, relative \
                 to the state when the stream opened. Emits PositionAlert.",
            "stream_position_alerts: alerts when a V3 position leaves/re-enters range or earns fees",
            SpriteTrigger::Alert,
        )
    }

    fn open(p: &PositionParams) -> Result<(Vec<Source>, PositionState), Error> {
        let (c, book) = (p.chain_id, uniswap(p.chain_id)?);
        let id = token_id(p)?;
        let pos = eth_call(c, book.position_manager, &positionsCall { tokenId: id })
            .map_err(|_| not_found(format!("no Uniswap V3 position {id} on chain {c}")))?;
        let call = getPoolCall { tokenA: pos.token0, tokenB: pos.token1, fee: pos.fee };
        let pool = eth_call(c, book.v3_factory, &call)?;
        let tick = eth_call(c, pool, &slot0Call {})?.tick.as_i32();
        let (token0, token1) = (erc20::token(c, pos.token0)?, erc20::token(c, pos.token1)?);
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
        let (lower, upper) = (pos.tickLower.as_i32(), pos.tickUpper.as_i32());
        let state = PositionState {
            pool,
            token0: token0.into(),
            token1: token1.into(),
            tick_lower: lower,
            tick_upper: upper,
            in_range: lower <= tick && tick < upper,
            quote_is_token0,
            fee_threshold,
            fee_alerted: false,
        };
        Ok((vec![logs(c, &[pool], vec![vec![Swap::SIGNATURE_HASH]])], state))
    }

    fn on_logs(
        p: &PositionParams,
        logs: Vec<Log>,
        mut s: PositionState,
    ) -> Result<(Vec<StreamEvent>, PositionState), Error> {
        let mut out = Vec::new();
        let alert = |kind, tick, at: Option<LogRef>, s: &PositionState| Alert {
            alert: kind,
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
            let Some(swap) = decode_log::<Swap>(log) else { continue };
            let tick = swap.tick.as_i32();
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
