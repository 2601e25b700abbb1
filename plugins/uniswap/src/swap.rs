//! `uniswap_execute_swap`: plan a swap from a fresh quote on the best route, as one
//! UniversalRouter `execute` (V2, V3 or V4; native ETH wrapped or unwrapped by the router), with
//! bounds the params cannot loosen and exact Permit2 allowances; verify what actually moved.

use crate::book::{Book, book};
use crate::math::{check_slippage, max_in, min_out};
use crate::native;
use crate::pools::Version;
use crate::quote::{Filter, Hop, Quote, Route, Side, quotes};
use crate::read::{deadline, fixed_amount};
use crate::router::Swap;
use crate::v4;
use alloy_primitives::{Address, U256};
use bardo_sdk::abi::{tx_call, wallet};
use bardo_sdk::erc20::{self, Authority, BalanceChange, Token, transfers};
use bardo_sdk::errors::{internal, invalid_params};
use bardo_sdk::permit2;
use bardo_sdk::units::format_units;
use bardo_sdk::{
    Category, Error, PlannedCall, Receipt, RiskTier, SpriteTrigger, TickBudget, ToolDef, WritePlan,
    WriteTool, events, tool_def,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

alloy_sol_types::sol! {
    // WETH9
    event Deposit(address indexed dst, uint256 wad);
    event Withdrawal(address indexed src, uint256 wad);
}

/// Params of `uniswap_execute_swap`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SwapParams {
    /// Chain id.
    pub chain_id: u64,
    /// Token sold: a listed symbol, an address, or `ETH` (native, wrapped by the router).
    pub token_in: String,
    /// Token bought (`ETH`: unwrapped to the wallet).
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
    /// Restrict to one fee tier (hundredths of a bip).
    #[serde(default)]
    pub fee: Option<u32>,
    /// Swap through one V4 pool with a hook: the hook's address (with `fee`; the pool key's
    /// `tick_spacing` if not the fee's standard one). The plan's risk tier is raised, and a hook
    /// that can change the amounts must be allowlisted by the operator.
    #[serde(default)]
    pub hooks: Option<String>,
    /// A V4 pool key's tick spacing (with `fee`).
    #[serde(default)]
    pub tick_spacing: Option<i32>,
    /// Seconds the swap stays valid after the latest block (default 600, at most 3600).
    #[serde(default = "default_deadline")]
    pub deadline_seconds: u64,
    /// Execute this route from `uniswap_get_route` (Uniswap's SDK: split and multi-hop) rather
    /// than the best single route quoted now; it must be for these tokens, side and amount.
    #[serde(default)]
    pub route: Option<crate::sdk_route::SdkRoute>,
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
    /// A two-hop route's second pool.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub then: Option<Hop>,
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
    /// The allowances the plan may leave (the token's to Permit2, Permit2's to the router: an
    /// exact-out swap's unused maximum).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub authorities: Vec<Authority>,
}

pub struct ExecuteSwap;

/// A swap's sides as the pools trade them (WETH for native ETH), and whether the wallet pays
/// or receives native ETH.
struct Sides {
    tin: Token,
    tout: Token,
    native_in: bool,
    native_out: bool,
}

impl Sides {
    fn resolve(chain_id: u64, book: &Book, token_in: &str, token_out: &str) -> Result<Self, Error> {
        let (tin, native_in) = native::pool_token(chain_id, book, "token_in", token_in)?;
        let (tout, native_out) = native::pool_token(chain_id, book, "token_out", token_out)?;
        if tin.address == tout.address {
            return Err(invalid_params(if native_in || native_out {
                "ETH and WETH are the same asset: wrapping or unwrapping is not a swap"
            } else {
                "`token_in` and `token_out` are the same token; pick two different tokens"
            }));
        }
        Ok(Self { tin, tout, native_in, native_out })
    }

    /// WETH, when the wallet pays or receives it as native ether.
    fn native_weth(&self) -> Option<Address> {
        match (self.native_in, self.native_out) {
            (true, _) => Some(self.tin.address),
            (_, true) => Some(self.tout.address),
            _ => None,
        }
    }

    /// The tokens as the wallet sees them (ETH where it is native).
    fn shown(&self) -> (Token, Token) {
        let show = |t: &Token, native: bool| if native { native::eth() } else { t.clone() };
        (show(&self.tin, self.native_in), show(&self.tout, self.native_out))
    }
}

fn prepare(p: &SwapParams) -> Result<(Book, Sides, Quote), Error> {
    let filter = filter(p, None)?;
    check_slippage(p.slippage_bps)?;
    if p.deadline_seconds == 0 || p.deadline_seconds > 3600 {
        return Err(invalid_params("`deadline_seconds` must be 1 to 3600"));
    }
    let book = book(p.chain_id)?;
    let sides = Sides::resolve(p.chain_id, &book, &p.token_in, &p.token_out)?;
    let amount = fixed_amount(&p.amount, p.side, &sides.tin, &sides.tout)?;
    let filter = Filter { native: sides.native_weth(), ..filter };
    let quote = quotes(p.chain_id, &book, &sides.tin, &sides.tout, amount, p.side, filter)?.full[0];
    Ok((book, sides, quote))
}

/// The route restrictions of the params.
fn filter(p: &SwapParams, native: Option<Address>) -> Result<Filter, Error> {
    Filter::of(p.version, p.fee, (p.tick_spacing, p.hooks.as_deref()), native)
}

/// Refuse a spend of native ETH above the wallet's balance.
fn require_eth(chain_id: u64, owner: Address, spend: U256) -> Result<(), Error> {
    let balance = bardo_sdk::abi::ether_balance(chain_id, owner, None)?;
    if balance < spend {
        return Err(invalid_params(format!(
            "the wallet holds {} ETH; the swap needs up to {} ETH (gas aside); lower `amount`",
            format_units(balance, 18),
            format_units(spend, 18)
        )));
    }
    Ok(())
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
            supported_chains: bardo_sdk::chains::UNISWAP.to_vec(),
            prompt_snippet: "uniswap_execute_swap: plan a Uniswap swap with slippage protection".into(),
            prompt_guidelines: bardo_sdk::guidelines(&[
                (bardo_sdk::Phase::Cautious, "Keep slippage at 50 bps or less."),
                (bardo_sdk::Phase::Defensive, "Only swap toward the quote token or to rebalance risk."),
                (bardo_sdk::Phase::Survival, "Only swap to reduce risk, never to add exposure."),
            ]),
            ..tool_def::<SwapParams>(
                Self::NAME,
                "Plans a token swap on Uniswap through the UniversalRouter on the route that quotes best (V4, \
                 V3 or V2), exact-in or exact-out; `ETH` is native ether, wrapped or unwrapped by the router. The \
                 minimum out / maximum in comes from a fresh on-chain quote and the slippage setting; the token \
                 is pulled through Permit2, with approvals of exactly the amount added only when short and \
                 expiring with the swap's deadline. The host checks, simulates, signs and sends the plan; this \
                 tool never does.",
                Category::Trading,
            )
        }
    }

    fn plan(p: SwapParams) -> Result<WritePlan, Error> {
        if let Some(route) = &p.route {
            return crate::sdk_route::plan(p.chain_id, (&p.token_in, &p.token_out, &p.amount, p.side), route);
        }
        let owner = wallet(p.chain_id)?;
        events::progress(0);
        let (book, sides, quote) = prepare(&p)?;
        events::progress(1);
        let bound = match p.side {
            Side::ExactIn => min_out(quote.amount_out, p.slippage_bps)?,
            Side::ExactOut => max_in(quote.amount_in, p.slippage_bps),
        };
        let router = book.universal_router.ok_or_else(|| {
            bardo_sdk::errors::chain_not_supported(format!(
                "chain {} has no UniversalRouter configured; add `universal_router` under `[settings] uniswap`",
                p.chain_id
            ))
        })?;
        let deadline = deadline(p.chain_id, p.deadline_seconds)?;
        let swap = Swap {
            tin: &sides.tin,
            tout: &sides.tout,
            native_in: sides.native_in,
            native_out: sides.native_out,
            quote: &quote,
            side: p.side,
            bound,
            wallet: owner,
            deadline,
        };
        let spend = swap.spend();
        match sides.native_in {
            true => require_eth(p.chain_id, owner, spend)?,
            false => erc20::require_balance(p.chain_id, &sides.tin, owner, spend)?,
        }
        events::progress(2);
        // Native ETH goes with the call; a token is pulled through Permit2, which lets the router
        // take it only until the swap's own deadline.
        let (mut calls, authorities) = match sides.native_in {
            true => (Vec::new(), Vec::new()),
            false => permit2::approvals_if_short(
                p.chain_id,
                &sides.tin,
                owner,
                router,
                spend,
                deadline.to::<u64>(),
                "the UniversalRouter",
            )?,
        };
        let (execute, value) = swap.execute()?;
        let mut call = tx_call(p.chain_id, router, &execute);
        call.value = value.to_string();
        let (shown_in, shown_out) = sides.shown();
        calls.push(PlannedCall {
            call,
            description: format!(
                "swap {} {} for {} {} through the UniversalRouter ({}, fee {}, {})",
                format_units(quote.amount_in, shown_in.decimals),
                shown_in.symbol,
                format_units(quote.amount_out, shown_out.decimals),
                shown_out.symbol,
                quote.route.version.name(),
                quote.route.fee,
                match p.side {
                    Side::ExactIn => format!("at least {} out", format_units(bound, shown_out.decimals)),
                    Side::ExactOut => format!("at most {} in", format_units(bound, shown_in.decimals)),
                }
            ),
        });
        let mut expected = outcome(
            &p,
            &shown_in,
            &shown_out,
            quote.route,
            quote.then,
            quote.amount_in,
            quote.amount_out,
            bound,
        );
        expected.authorities = authorities;
        Ok(WritePlan { calls, expected_outcome_json: json(&expected)? })
    }

    fn verify(p: SwapParams, receipts: Vec<Receipt>) -> Result<serde_json::Value, Error> {
        if p.route.is_some() {
            return crate::sdk_route::verify(p.chain_id, (&p.token_in, &p.token_out, p.side), &receipts);
        }
        let book = book(p.chain_id)?;
        let sides = Sides::resolve(p.chain_id, &book, &p.token_in, &p.token_out)?;
        let named = filter(&p, None)?.named;
        let last = receipts.last().ok_or_else(|| internal("no receipts to verify"))?;
        if !last.success {
            return Err(bardo_sdk::errors::error(
                bardo_sdk::ErrorCode::Reverted,
                format!("the swap transaction {} reverted", last.tx_hash),
            ));
        }
        let owner: Address = last.sender.parse().map_err(|_| internal("receipt sender is not an address"))?;
        let router = book.universal_router.unwrap_or_default();
        let logs: Vec<_> = receipts.iter().flat_map(|r| r.logs.clone()).collect();
        let (shown_in, shown_out) = sides.shown();
        if let Some((route, sent, received)) = native_swap(&book, &logs, &sides, named) {
            return serde_json::to_value(outcome(
                &p,
                &shown_in,
                &shown_out,
                route,
                None,
                sent,
                received,
                U256::ZERO,
            ))
            .map_err(|e| internal(e.to_string()));
        }
        // Native ETH shows as the router wrapping (in; less what it returned) or unwrapping (out).
        let weth = if sides.native_in { sides.tin.address } else { sides.tout.address };
        let (wrapped, unwrapped) = weth_moves(&logs, weth, router);
        let sent = match sides.native_in {
            true => wrapped.saturating_sub(unwrapped),
            false => transfers(&logs, sides.tin.address, owner).1,
        };
        let received = match sides.native_out {
            true => unwrapped,
            false => transfers(&logs, sides.tout.address, owner).0,
        };
        // A two-hop swap's first pool pays out the intermediate token, not `tout`.
        let (then, tout_first) = match second_hop(p.chain_id, &book, &logs, &sides, [owner, router])? {
            Some((hop, via)) => (Some(hop), via),
            None => (None, sides.tout.clone()),
        };
        let route =
            actual_route(p.chain_id, &book, &logs, (&sides.tin, &tout_first, named), [owner, router])?;
        serde_json::to_value(outcome(&p, &shown_in, &shown_out, route, then, sent, received, U256::ZERO))
            .map_err(|e| internal(e.to_string()))
    }
}

/// A swap through a V4 pool of native ether, from its `Swap` event: the route, what the wallet
/// paid and what it received (the swapper's deltas: negative paid in, positive taken out; ether
/// is currency 0). None when the receipts hold no such swap.
fn native_swap(
    book: &Book,
    logs: &[bardo_sdk::Log],
    sides: &Sides,
    named: v4::Named,
) -> Option<(Route, U256, U256)> {
    if !sides.native_in && !sides.native_out {
        return None;
    }
    let manager = book.v4_pool_manager?;
    let (swap, (fee, key)) = logs
        .iter()
        .filter(|l| l.address.parse::<Address>().ok() == Some(manager))
        .filter_map(bardo_sdk::abi::decode_log::<v4::Swap>)
        .find_map(|s| {
            v4::key_of(&sides.tin, &sides.tout, s.id, named).filter(|(_, k)| k.native).map(|k| (s, k))
        })?;
    let abs = |v: i128| U256::from(v.unsigned_abs());
    // Ether is currency 0: the wallet pays it in, or takes it out.
    let (sent, received) = match sides.native_in {
        true => (abs(swap.amount0), abs(swap.amount1)),
        false => (abs(swap.amount1), abs(swap.amount0)),
    };
    Some((Route { version: Version::V4, fee, pool: manager, v4: Some(key) }, sent, received))
}

/// What `router` wrapped and unwrapped of `weth` in `logs` (its `Deposit`s and `Withdrawal`s).
fn weth_moves(logs: &[bardo_sdk::Log], weth: Address, router: Address) -> (U256, U256) {
    let (mut wrapped, mut unwrapped) = (U256::ZERO, U256::ZERO);
    for log in logs.iter().filter(|l| l.address.parse::<Address>().ok() == Some(weth)) {
        if let Some(d) = bardo_sdk::abi::decode_log::<Deposit>(log).filter(|d| d.dst == router) {
            wrapped += d.wad;
        }
        if let Some(w) = bardo_sdk::abi::decode_log::<Withdrawal>(log).filter(|w| w.src == router) {
            unwrapped += w.wad;
        }
    }
    (wrapped, unwrapped)
}

/// A two-hop swap's second pool and the intermediate token, from the receipts: the second pool
/// was paid in WETH (by the router or, exact-out, straight by the first pool), which was neither
/// side of the swap — or, two V4 pools in one exact-out, the PoolManager swapped both.
fn second_hop(
    chain_id: u64,
    book: &Book,
    logs: &[bardo_sdk::Log],
    sides: &Sides,
    [owner, router]: [Address; 2],
) -> Result<Option<(Hop, Token)>, Error> {
    let Some(weth) = book.weth().filter(|w| *w != sides.tin.address && *w != sides.tout.address) else {
        return Ok(None);
    };
    let via = bardo_sdk::erc20::token(chain_id, weth)?;
    let paid = logs
        .iter()
        .filter(|l| l.address.parse::<Address>().ok() == Some(weth))
        .filter_map(bardo_sdk::abi::decode_log::<erc20::Transfer>)
        .find(|t| t.to != owner && t.to != router);
    if let Some(paid) = paid {
        let route = route_at(chain_id, book, logs, (&via, &sides.tout, None), paid.to)?;
        return Ok(Some((Hop { route, via: weth, amount_mid: paid.value }, via)));
    }
    let Some(manager) = book.v4_pool_manager else { return Ok(None) };
    let swaps: Vec<v4::Swap> = logs
        .iter()
        .filter(|l| l.address.parse::<Address>().ok() == Some(manager))
        .filter_map(bardo_sdk::abi::decode_log::<v4::Swap>)
        .collect();
    let second = swaps.iter().find_map(|s| v4::key_of(&via, &sides.tout, s.id, None).map(|k| (s, k)));
    let first = swaps.iter().any(|s| v4::key_of(&sides.tin, &via, s.id, None).is_some());
    let (Some((swap, (fee, key))), true) = (second, first) else { return Ok(None) };
    // The swapper's delta in WETH, what the second pool was paid.
    let paid = if weth < sides.tout.address { swap.amount0 } else { swap.amount1 };
    let route = Route { version: Version::V4, fee, pool: manager, v4: Some(key) };
    Ok(Some((Hop { route, via: weth, amount_mid: U256::from(paid.unsigned_abs()) }, via)))
}

/// The route the swap actually took: the pool that received the input token from the wallet
/// or the router.
fn actual_route(
    chain_id: u64,
    book: &Book,
    logs: &[bardo_sdk::Log],
    (tin, tout, named): (&Token, &Token, v4::Named),
    payers: [Address; 2],
) -> Result<Route, Error> {
    let pool = logs
        .iter()
        .filter(|l| l.address.parse::<Address>().ok() == Some(tin.address))
        .filter_map(bardo_sdk::abi::decode_log::<erc20::Transfer>)
        .find(|t| payers.contains(&t.from) && !payers.contains(&t.to))
        .map(|t| t.to)
        .ok_or_else(|| internal(format!("the receipts show no {} paid into a pool", tin.symbol)))?;
    route_at(chain_id, book, logs, (tin, tout, named), pool)
}

/// The route of `pool`, paid in `tin` for `tout`: a V2 pair, a V3 pool, or the PoolManager (V4:
/// the pool its `Swap` event names).
fn route_at(
    chain_id: u64,
    book: &Book,
    logs: &[bardo_sdk::Log],
    (tin, tout, named): (&Token, &Token, v4::Named),
    pool: Address,
) -> Result<Route, Error> {
    if crate::pools::v2_pair(chain_id, book, tin, tout)?.is_some_and(|p| p.address == pool) {
        return Ok(Route { version: Version::V2, fee: 3000, pool, v4: None });
    }
    if Some(pool) == book.v4_pool_manager {
        let (fee, key) = logs
            .iter()
            .filter(|l| l.address.parse::<Address>().ok() == Some(pool))
            .filter_map(bardo_sdk::abi::decode_log::<v4::Swap>)
            .find_map(|s| v4::key_of(tin, tout, s.id, named))
            .ok_or_else(|| internal("the receipts show no swap in a V4 pool of this pair"))?;
        return Ok(Route { version: Version::V4, fee, pool, v4: Some(key) });
    }
    let fee = bardo_sdk::abi::eth_call(chain_id, pool, &crate::abi::feeCall {})?;
    Ok(Route { version: Version::V3, fee: fee.to::<u32>(), pool, v4: None })
}

#[expect(clippy::too_many_arguments, reason = "every field of the outcome")]
fn outcome(
    p: &SwapParams,
    tin: &Token,
    tout: &Token,
    route: Route,
    then: Option<Hop>,
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
        then,
        amount_in: format_units(amount_in, tin.decimals),
        amount_out: format_units(amount_out, tout.decimals),
        amount_in_base: amount_in.to_string(),
        amount_out_base: amount_out.to_string(),
        amount_out_minimum_base: (has_bound && p.side == Side::ExactIn).then(|| bound.to_string()),
        amount_in_maximum_base: (has_bound && p.side == Side::ExactOut).then(|| bound.to_string()),
        // The native coin is the zero address, which the host reads as such.
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
