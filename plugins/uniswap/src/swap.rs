//! `uniswap_execute_swap`: plan a swap from a fresh quote — V4 through the UniversalRouter with
//! Permit2, V3 on SwapRouter, V2 on Router02 — with bounds the params cannot loosen; verify what
//! actually moved.

use crate::abi::*;
use crate::book::book;
use crate::math::{check_slippage, max_in, min_out};
use crate::pools::Version;
use crate::quote::{Filter, Quote, Route, Side, quotes};
use crate::read::{check_fee, deadline, fixed_amount, pair};
use crate::v4;
use alloy_primitives::aliases::{U24, U160};
use alloy_primitives::{Address, U256};
use bardo_sdk::abi::{tx_call, wallet};
use bardo_sdk::erc20::{self, Authority, BalanceChange, Token, transfers};
use bardo_sdk::errors::internal;
use bardo_sdk::permit2;
use bardo_sdk::units::format_units;
use bardo_sdk::{
    Category, Error, PlannedCall, Receipt, RiskTier, SpriteTrigger, TickBudget, ToolDef, WritePlan,
    WriteTool, events, tool_def,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Params of `uniswap_execute_swap`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SwapParams {
    /// Chain id.
    pub chain_id: u64,
    /// Token sold: a listed symbol or an address.
    pub token_in: String,
    /// Token bought.
    pub token_out: String,
    /// Amount in token units, decimal string: of `token_in` for `exact_in`, of `token_out` for
    /// `exact_out`.
    pub amount: String,
    /// `exact_in` (default) or `exact_out`.
    #[serde(default)]
    pub side: Side,
    /// Price tolerance in basis points, 1 to 5000 (default 50 = 0.5 %). The minimum out (or
    /// maximum in) is computed from a fresh quote with it; it is never 0 or unlimited.
    #[serde(default = "default_slippage")]
    pub slippage_bps: u32,
    /// Restrict to `v4`, `v3` or `v2`; default: the best quote.
    #[serde(default)]
    pub version: Option<Version>,
    /// Restrict to one V3 fee tier.
    #[serde(default)]
    pub fee: Option<u32>,
    /// Seconds the swap stays valid after the latest block (default 600, at most 3600).
    #[serde(default = "default_deadline")]
    pub deadline_seconds: u64,
}

fn default_slippage() -> u32 {
    50
}

fn default_deadline() -> u64 {
    600
}

/// What the plan expects and what `verify` reports.
#[derive(Debug, Serialize)]
pub struct SwapOutcome {
    pub token_in: Token,
    pub token_out: Token,
    pub side: Side,
    pub route: Route,
    pub amount_in: String,
    pub amount_out: String,
    pub amount_in_base: String,
    pub amount_out_base: String,
    /// Exact-in: the least the swap accepts, base units.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub amount_out_minimum_base: Option<String>,
    /// Exact-out: the most the swap pays, base units.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub amount_in_maximum_base: Option<String>,
    /// The wallet's token balance changes (checked by the host against its simulation).
    pub balance_changes: Vec<BalanceChange>,
    /// The allowance the plan may leave to the router (an exact-out swap's unused maximum).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub authorities: Vec<Authority>,
}

pub struct ExecuteSwap;

struct Prepared {
    tin: Token,
    tout: Token,
    quote: Quote,
}

fn prepare(p: &SwapParams) -> Result<(crate::book::Book, Prepared), Error> {
    check_fee(p.fee)?;
    check_slippage(p.slippage_bps)?;
    if p.deadline_seconds == 0 || p.deadline_seconds > 3600 {
        return Err(bardo_sdk::errors::invalid_params("`deadline_seconds` must be 1 to 3600"));
    }
    let book = book(p.chain_id)?;
    let (tin, tout) = pair(p.chain_id, &book, &p.token_in, &p.token_out, ["token_in", "token_out"])?;
    let amount = fixed_amount(&p.amount, p.side, &tin, &tout)?;
    let filter = Filter { version: p.version, fee: p.fee };
    let quote = quotes(p.chain_id, &book, &tin, &tout, amount, p.side, filter)?[0];
    Ok((book, Prepared { tin, tout, quote }))
}

impl WriteTool for ExecuteSwap {
    const NAME: &'static str = "uniswap_execute_swap";
    type Params = SwapParams;

    fn def() -> ToolDef {
        ToolDef {
            capability_tier: bardo_sdk::CapabilityTier::Write,
            risk_tier: RiskTier::Medium,
            tick_budget: TickBudget::Medium,
            sprite_trigger: SpriteTrigger::Executing,
            progress_steps: vec!["quote".into(), "check balance and allowance".into(), "build calls".into()],
            action_kinds: vec!["swap".into()],
            prompt_snippet: "uniswap_execute_swap: plan a Uniswap swap with slippage protection".into(),
            prompt_guidelines: bardo_sdk::guidelines(&[
                (bardo_sdk::Phase::Cautious, "Keep slippage at 50 bps or less."),
                (bardo_sdk::Phase::Defensive, "Only swap toward the quote token or to rebalance risk."),
                (bardo_sdk::Phase::Survival, "Only swap to reduce risk, never to add exposure."),
            ]),
            ..tool_def::<SwapParams>(
                Self::NAME,
                "Plans a token swap on Uniswap (V4 through the UniversalRouter and Permit2, V3 SwapRouter or V2 \
                 Router02, whichever quotes best), exact-in \
                 or exact-out. The minimum out / maximum in comes from a fresh on-chain quote and the slippage \
                 setting; an approval for exactly the amount is added only when the allowance is short. The \
                 host checks, simulates, signs and sends the plan; this tool never does. Native ETH is not \
                 swapped directly: use WETH.",
                Category::Trading,
            )
        }
    }

    fn plan(p: SwapParams) -> Result<WritePlan, Error> {
        let owner = wallet(p.chain_id)?;
        events::progress(0);
        let (book, Prepared { tin, tout, quote }) = prepare(&p)?;
        events::progress(1);
        let (spend, bound) = match p.side {
            Side::ExactIn => (quote.amount_in, min_out(quote.amount_out, p.slippage_bps)?),
            Side::ExactOut => {
                let max = max_in(quote.amount_in, p.slippage_bps);
                (max, max)
            }
        };
        erc20::require_balance(p.chain_id, &tin, owner, spend)?;
        events::progress(2);
        let deadline = deadline(p.chain_id, p.deadline_seconds)?;
        let (mut calls, authorities, venue) = match quote.route.version {
            Version::V4 => {
                let router =
                    book.universal_router.ok_or_else(|| internal("a V4 quote without a UniversalRouter"))?;
                let key = quote.route.v4.ok_or_else(|| internal("a V4 route without its pool key"))?;
                // Permit2 may let the router pull the input only until the swap's own deadline.
                let (calls, authorities) = permit2::approvals_if_short(
                    p.chain_id,
                    &tin,
                    owner,
                    router,
                    spend,
                    deadline.to::<u64>(),
                    "the UniversalRouter",
                )?;
                let execute = v4::execute_swap(
                    &tin,
                    &tout,
                    quote.route.fee,
                    key,
                    p.side,
                    quote.amount_in,
                    quote.amount_out,
                    bound,
                    deadline,
                )?;
                let swap =
                    PlannedCall { call: tx_call(p.chain_id, router, &execute), description: String::new() };
                (calls, authorities, (swap, "the UniversalRouter"))
            }
            Version::V3 | Version::V2 => {
                let (router, router_name) = match quote.route.version {
                    Version::V2 => (
                        book.v2_router.ok_or_else(|| internal("a V2 quote without a V2 router"))?,
                        "Uniswap V2 Router02",
                    ),
                    _ => (book.swap_router, "Uniswap V3 SwapRouter"),
                };
                let calls: Vec<PlannedCall> =
                    erc20::approval_if_short(p.chain_id, &tin, owner, router, spend, router_name)?
                        .into_iter()
                        .collect();
                let swap = swap_call(&p, &tin, &tout, &quote, owner, bound, deadline, router)?;
                (calls, vec![Authority::erc20(&tin, router, spend)], (swap, router_name))
            }
        };
        let (swap, router_name) = venue;
        calls.push(PlannedCall {
            description: format!(
                "swap {} {} for {} {} on {router_name} ({}, {})",
                format_units(quote.amount_in, tin.decimals),
                tin.symbol,
                format_units(quote.amount_out, tout.decimals),
                tout.symbol,
                quote.route.version.name(),
                match p.side {
                    Side::ExactIn => format!("at least {} out", format_units(bound, tout.decimals)),
                    Side::ExactOut => format!("at most {} in", format_units(bound, tin.decimals)),
                }
            ),
            ..swap
        });
        let mut expected = outcome(&p, &tin, &tout, quote.route, quote.amount_in, quote.amount_out, bound);
        expected.authorities = authorities;
        Ok(WritePlan { calls, expected_outcome_json: json(&expected)? })
    }

    fn verify(p: SwapParams, receipts: Vec<Receipt>) -> Result<serde_json::Value, Error> {
        let book = book(p.chain_id)?;
        let (tin, tout) = pair(p.chain_id, &book, &p.token_in, &p.token_out, ["token_in", "token_out"])?;
        let last = receipts.last().ok_or_else(|| internal("no receipts to verify"))?;
        if !last.success {
            return Err(bardo_sdk::errors::error(
                bardo_sdk::ErrorCode::Reverted,
                format!("the swap transaction {} reverted", last.tx_hash),
            ));
        }
        let owner: Address = last.sender.parse().map_err(|_| internal("receipt sender is not an address"))?;
        let logs: Vec<_> = receipts.iter().flat_map(|r| r.logs.clone()).collect();
        let (_, sent) = transfers(&logs, tin.address, owner);
        let (received, _) = transfers(&logs, tout.address, owner);
        let route = actual_route(p.chain_id, &book, &logs, &tin, &tout, owner)?;
        serde_json::to_value(outcome(&p, &tin, &tout, route, sent, received, U256::ZERO))
            .map_err(|e| internal(e.to_string()))
    }
}

/// The route the swap actually took: the pool that received the input token from the owner.
fn actual_route(
    chain_id: u64,
    book: &crate::book::Book,
    logs: &[bardo_sdk::Log],
    tin: &Token,
    tout: &Token,
    owner: Address,
) -> Result<Route, Error> {
    let pool = logs
        .iter()
        .filter(|l| l.address.parse::<Address>().ok() == Some(tin.address))
        .filter_map(bardo_sdk::abi::decode_log::<erc20::Transfer>)
        .find(|t| t.from == owner)
        .map(|t| t.to)
        .ok_or_else(|| internal(format!("the receipts show no {} leaving the wallet", tin.symbol)))?;
    if crate::pools::v2_pair(chain_id, book, tin, tout)?.is_some_and(|p| p.address == pool) {
        return Ok(Route { version: Version::V2, fee: 3000, pool, v4: None });
    }
    if Some(pool) == book.v4_pool_manager {
        let swapped = logs
            .iter()
            .filter(|l| l.address.parse::<Address>().ok() == Some(pool))
            .filter_map(bardo_sdk::abi::decode_log::<v4::Swap>)
            .find_map(|s| v4::key_of(tin, tout, s.id))
            .ok_or_else(|| internal("the receipts show no swap in a V4 pool of this pair"))?;
        return Ok(Route { version: Version::V4, fee: swapped.0, pool, v4: Some(swapped.1) });
    }
    let fee = bardo_sdk::abi::eth_call(chain_id, pool, &feeCall {})?;
    Ok(Route { version: Version::V3, fee: fee.to::<u32>(), pool, v4: None })
}

#[expect(clippy::too_many_arguments, reason = "one call builder per router, all inputs needed")]
fn swap_call(
    p: &SwapParams,
    tin: &Token,
    tout: &Token,
    q: &Quote,
    owner: Address,
    bound: U256,
    deadline: U256,
    router: Address,
) -> Result<PlannedCall, Error> {
    let call = match (q.route.version, p.side) {
        (Version::V4, _) => return Err(internal("V4 swaps go through the UniversalRouter")),
        (Version::V3, Side::ExactIn) => tx_call(
            p.chain_id,
            router,
            &exactInputSingleCall {
                params: ExactInputSingleParams {
                    tokenIn: tin.address,
                    tokenOut: tout.address,
                    fee: U24::from(q.route.fee),
                    recipient: owner,
                    deadline,
                    amountIn: q.amount_in,
                    amountOutMinimum: bound,
                    sqrtPriceLimitX96: U160::ZERO,
                },
            },
        ),
        (Version::V3, Side::ExactOut) => tx_call(
            p.chain_id,
            router,
            &exactOutputSingleCall {
                params: ExactOutputSingleParams {
                    tokenIn: tin.address,
                    tokenOut: tout.address,
                    fee: U24::from(q.route.fee),
                    recipient: owner,
                    deadline,
                    amountOut: q.amount_out,
                    amountInMaximum: bound,
                    sqrtPriceLimitX96: U160::ZERO,
                },
            },
        ),
        (Version::V2, Side::ExactIn) => tx_call(
            p.chain_id,
            router,
            &swapExactTokensForTokensCall {
                amountIn: q.amount_in,
                amountOutMin: bound,
                path: vec![tin.address, tout.address],
                to: owner,
                deadline,
            },
        ),
        (Version::V2, Side::ExactOut) => tx_call(
            p.chain_id,
            router,
            &swapTokensForExactTokensCall {
                amountOut: q.amount_out,
                amountInMax: bound,
                path: vec![tin.address, tout.address],
                to: owner,
                deadline,
            },
        ),
    };
    Ok(PlannedCall { call, description: String::new() })
}

fn outcome(
    p: &SwapParams,
    tin: &Token,
    tout: &Token,
    route: Route,
    amount_in: U256,
    amount_out: U256,
    bound: U256,
) -> SwapOutcome {
    let has_bound = !bound.is_zero();
    SwapOutcome {
        token_in: tin.clone(),
        token_out: tout.clone(),
        side: p.side,
        route,
        amount_in: format_units(amount_in, tin.decimals),
        amount_out: format_units(amount_out, tout.decimals),
        amount_in_base: amount_in.to_string(),
        amount_out_base: amount_out.to_string(),
        amount_out_minimum_base: (has_bound && p.side == Side::ExactIn).then(|| bound.to_string()),
        amount_in_maximum_base: (has_bound && p.side == Side::ExactOut).then(|| bound.to_string()),
        balance_changes: vec![
            BalanceChange::spent(tin, amount_in),
            BalanceChange::received(tout, amount_out),
        ],
        authorities: Vec::new(),
    }
}

fn json<T: Serialize>(v: &T) -> Result<String, Error> {
    serde_json::to_string(v).map_err(|e| internal(e.to_string()))
}
