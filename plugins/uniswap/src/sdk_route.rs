//! `uniswap_get_route`: the best route by Uniswap's own SDKs (the host's sidecar, over pools the
//! host reads), split across paths and multi-hop, with the UniversalRouter calldata that executes
//! it — and the plan `uniswap_execute_swap` makes of such a route (its `route` param).
//!
//! The plugin does not trust a route it is handed any more than the host trusts the plugin: the
//! plan pins it to the params (tokens, side, amount, router) and the host's safety chain decides
//! what the calldata does from its scope check, simulation and the SDK cross-check.

use crate::book::book;
use crate::quote::Side;
use crate::read::{deadline, fixed_amount, pair};
use alloy_primitives::{Address, U256};
use bardo_sdk::abi::{parse_address, wallet, wire};
use bardo_sdk::erc20::{self, BalanceChange, Token, transfers};
use bardo_sdk::errors::{internal, invalid_params};
use bardo_sdk::uniswap_sdk::{self, Protocol, RouteRequest, TradeType};
use bardo_sdk::units::format_units;
use bardo_sdk::{
    Category, Error, PlannedCall, ReadTool, Receipt, TickBudget, ToolDef, TxCall, WritePlan, permit2,
    tool_def,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Params of `uniswap_get_route`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RouteParams {
    /// Chain id.
    pub chain_id: u64,
    /// Token sold: a listed symbol or an address (ERC-20; WETH rather than ETH).
    pub token_in: String,
    /// Token bought.
    pub token_out: String,
    /// Amount in token units, decimal string: of `token_in` for `exact_in`, of `token_out` for
    /// `exact_out`.
    pub amount: String,
    /// `exact_in` (default) or `exact_out`.
    #[serde(default)]
    pub side: Side,
    /// Price tolerance of the calldata in basis points, 1 to 5000 (default 50).
    #[serde(default = "default_slippage")]
    pub slippage_bps: u32,
    /// At most this many pools per path, 1 to 3 (default 2).
    #[serde(default = "default_hops")]
    pub max_hops: u8,
    /// At most this many paths to split the amount over, 1 to 4 (default 3).
    #[serde(default = "default_splits")]
    pub max_splits: u8,
    /// Tokens a path may pass through besides WETH (symbols or addresses, at most 4).
    #[serde(default)]
    pub via: Vec<String>,
    /// Seconds the calldata stays valid after the latest block (default 600, at most 3600).
    #[serde(default = "default_deadline")]
    pub deadline_seconds: u64,
}

fn default_slippage() -> u32 {
    50
}
fn default_hops() -> u8 {
    2
}
fn default_splits() -> u8 {
    3
}
fn default_deadline() -> u64 {
    600
}

/// A route as `uniswap_execute_swap` takes it (`route`): the SDK's calldata and its bounds.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SdkRoute {
    /// Chain id.
    pub chain_id: u64,
    /// The block whose pools it was computed from.
    pub block_number: u64,
    /// Which side is fixed.
    pub side: Side,
    /// The fixed amount asked for, base units (an exact-out V2 path may pay a few wei more).
    pub amount_base: String,
    /// Token sold (address).
    pub token_in: String,
    /// Token bought (address).
    pub token_out: String,
    /// Input, base units.
    pub amount_in_base: String,
    /// Output, base units.
    pub amount_out_base: String,
    /// The least output the calldata accepts, base units.
    pub minimum_out_base: String,
    /// The most input the calldata may take, base units.
    pub maximum_in_base: String,
    /// The UniversalRouter.
    pub router: String,
    /// `execute(...)` calldata, 0x-hex.
    pub calldata: String,
    /// Unix seconds after which the router refuses it.
    pub deadline: u64,
}

/// One pool of a path.
#[derive(Debug, Serialize)]
pub struct PoolOut {
    /// `v2`, `v3` or `v4`.
    pub protocol: &'static str,
    /// Pair or pool address, or V4 pool id.
    pub id: String,
    /// Fee, hundredths of a bip.
    pub fee: u32,
    /// Token in (address).
    pub token_in: String,
    /// Token out (address).
    pub token_out: String,
}

/// One path and its share.
#[derive(Debug, Serialize)]
pub struct LegOut {
    /// Share of the amount, percent.
    pub percent: u8,
    /// Its pools in order.
    pub pools: Vec<PoolOut>,
    /// Input, token units.
    pub amount_in: String,
    /// Output, token units.
    pub amount_out: String,
}

/// Output of `uniswap_get_route`.
#[derive(Debug, Serialize)]
pub struct RouteOutput {
    pub token_in: Token,
    pub token_out: Token,
    /// Input, token units.
    pub amount_in: String,
    /// Output, token units.
    pub amount_out: String,
    /// The paths and their shares.
    pub legs: Vec<LegOut>,
    /// Paths the SDK quoted to find it.
    pub paths_quoted: u32,
    /// Give this to `uniswap_execute_swap` as `route` (with the same tokens, side and amount).
    pub route: SdkRoute,
}

pub struct GetRoute;

impl ReadTool for GetRoute {
    const NAME: &'static str = "uniswap_get_route";
    type Params = RouteParams;
    type Output = RouteOutput;

    fn def() -> ToolDef {
        ToolDef {
            tick_budget: TickBudget::Medium,
            prompt_snippet:
                "uniswap_get_route: Uniswap's own best route, split and multi-hop, ready to execute".into(),
            progress_steps: vec!["resolve tokens".into(), "route by the SDK".into()],
            prompt_guidelines: bardo_sdk::guidelines(&[
                (bardo_sdk::Phase::Cautious, "Use it for large trades: a split route moves each pool less."),
                (bardo_sdk::Phase::Terminal, "Route only exits to the quote token."),
            ]),
            ..tool_def::<RouteParams>(
                Self::NAME,
                "Finds the best route for a trade by Uniswap's official SDKs (run by the host over V2, V3 and \
                 V4 pools it reads itself): up to `max_splits` paths of up to `max_hops` pools, with the \
                 UniversalRouter calldata that executes it. Pass the returned `route` to \
                 `uniswap_execute_swap` to plan it. Needs the operator's grant of the SDK to this plugin.",
                Category::Trading,
            )
        }
    }

    fn run(p: RouteParams) -> Result<RouteOutput, Error> {
        let book = book(p.chain_id)?;
        crate::math::check_slippage(p.slippage_bps)?;
        if p.deadline_seconds == 0 || p.deadline_seconds > 3600 {
            return Err(invalid_params("`deadline_seconds` must be 1 to 3600"));
        }
        bardo_sdk::events::progress(0);
        let (tin, tout) = tokens(p.chain_id, &p.token_in, &p.token_out)?;
        let amount = fixed_amount(&p.amount, p.side, &tin, &tout)?;
        let via = p
            .via
            .iter()
            .map(|v| book.token(p.chain_id, "via", v).map(|t| wire(&t.address)))
            .collect::<Result<Vec<_>, _>>()?;
        let recipient = wallet(p.chain_id)?;
        let deadline = deadline(p.chain_id, p.deadline_seconds)?.to::<u64>();
        bardo_sdk::events::progress(1);
        let r = uniswap_sdk::best_route(&RouteRequest {
            chain: p.chain_id,
            trade_type: match p.side {
                Side::ExactIn => TradeType::ExactInput,
                Side::ExactOut => TradeType::ExactOutput,
            },
            token_in: wire(&tin.address),
            token_out: wire(&tout.address),
            amount: amount.to_string(),
            via,
            max_hops: p.max_hops,
            max_splits: p.max_splits,
            recipient: wire(&recipient),
            slippage_bps: p.slippage_bps,
            deadline,
        })?;
        let units = |field: &str, v: &str, t: &Token| -> Result<String, Error> {
            let n: U256 = v.parse().map_err(|_| internal(format!("the host's route has a bad `{field}`")))?;
            Ok(format_units(n, t.decimals))
        };
        let legs = r
            .legs
            .iter()
            .map(|l| {
                Ok(LegOut {
                    percent: l.percent,
                    pools: l
                        .pools
                        .iter()
                        .map(|pool| PoolOut {
                            protocol: match pool.protocol {
                                Protocol::V2 => "v2",
                                Protocol::V3 => "v3",
                                Protocol::V4 => "v4",
                            },
                            id: pool.id.clone(),
                            fee: pool.fee,
                            token_in: pool.token_in.clone(),
                            token_out: pool.token_out.clone(),
                        })
                        .collect(),
                    amount_in: units("amount-in", &l.amount_in, &tin)?,
                    amount_out: units("amount-out", &l.amount_out, &tout)?,
                })
            })
            .collect::<Result<Vec<_>, Error>>()?;
        Ok(RouteOutput {
            amount_in: units("amount-in", &r.amount_in, &tin)?,
            amount_out: units("amount-out", &r.amount_out, &tout)?,
            legs,
            paths_quoted: r.paths_quoted,
            route: SdkRoute {
                chain_id: p.chain_id,
                block_number: r.block_number,
                side: p.side,
                amount_base: amount.to_string(),
                token_in: wire(&tin.address),
                token_out: wire(&tout.address),
                amount_in_base: r.amount_in,
                amount_out_base: r.amount_out,
                minimum_out_base: r.minimum_out,
                maximum_in_base: r.maximum_in,
                router: r.router,
                calldata: format!("0x{}", alloy_primitives::hex::encode(&r.calldata)),
                deadline,
            },
            token_in: tin,
            token_out: tout,
        })
    }
}

/// What a route's plan expects and what `verify` reports.
#[derive(Debug, Serialize)]
pub struct RouteSwapOutcome {
    pub token_in: Token,
    pub token_out: Token,
    pub side: Side,
    pub amount_in: String,
    pub amount_out: String,
    pub amount_in_base: String,
    pub amount_out_base: String,
    /// The SDK route's block, for the record.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub route_block: Option<u64>,
    pub balance_changes: Vec<BalanceChange>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub authorities: Vec<bardo_sdk::erc20::Authority>,
}

fn base(field: &str, v: &str) -> Result<U256, Error> {
    v.parse().map_err(|_| invalid_params(format!("`route.{field}` is not a base-unit integer: {v:?}")))
}

/// The tokens of a route swap's params; routes trade ERC-20s only.
fn tokens(chain_id: u64, token_in: &str, token_out: &str) -> Result<(Token, Token), Error> {
    let book = book(chain_id)?;
    if [token_in, token_out].iter().any(|t| t.eq_ignore_ascii_case("ETH")) {
        return Err(invalid_params(
            "an SDK route trades ERC-20s: use WETH, or leave out `route` to swap ether",
        ));
    }
    pair(chain_id, &book, token_in, token_out, ["token_in", "token_out"])
}

/// The plan of `uniswap_execute_swap` with a `route`: the Permit2 approvals the route's most
/// input needs, then the route's calldata — after holding the route to the params.
pub fn plan(
    chain_id: u64,
    (token_in, token_out, amount, side): (&str, &str, &str, Side),
    r: &SdkRoute,
) -> Result<WritePlan, Error> {
    let owner = wallet(chain_id)?;
    let (tin, tout) = tokens(chain_id, token_in, token_out)?;
    let book = book(chain_id)?;
    let router = book.universal_router.ok_or_else(|| {
        bardo_sdk::errors::chain_not_supported(format!("chain {chain_id} has no UniversalRouter configured"))
    })?;
    let mismatch = |what: &str| {
        invalid_params(format!("`route` is for another {what} than the params; get a route for these"))
    };
    if r.chain_id != chain_id {
        return Err(mismatch("chain"));
    }
    if parse_address("route.router", &r.router)? != router {
        return Err(invalid_params(format!(
            "`route.router` {} is not this chain's UniversalRouter {router}",
            r.router
        )));
    }
    if parse_address("route.token_in", &r.token_in)? != tin.address
        || parse_address("route.token_out", &r.token_out)? != tout.address
    {
        return Err(mismatch("pair of tokens"));
    }
    if r.side != side {
        return Err(mismatch("side"));
    }
    let (amount_in, amount_out) =
        (base("amount_in_base", &r.amount_in_base)?, base("amount_out_base", &r.amount_out_base)?);
    let fixed = fixed_amount(amount, side, &tin, &tout)?;
    let given = if side == Side::ExactIn { amount_in } else { amount_out };
    if fixed != base("amount_base", &r.amount_base)? || given < fixed {
        return Err(mismatch("amount"));
    }
    let now = bardo_sdk::chain::block_timestamp(chain_id, None)?;
    if r.deadline <= now {
        return Err(invalid_params(format!(
            "`route` expired at {} (the latest block is at {now}); get a fresh one",
            r.deadline
        )));
    }
    let calldata = alloy_primitives::hex::decode(r.calldata.trim_start_matches("0x"))
        .map_err(|_| invalid_params("`route.calldata` is not hex"))?;
    let spend = match side {
        Side::ExactIn => amount_in,
        Side::ExactOut => base("maximum_in_base", &r.maximum_in_base)?,
    };
    erc20::require_balance(chain_id, &tin, owner, spend)?;
    let (mut calls, authorities) =
        permit2::approvals_if_short(chain_id, &tin, owner, router, spend, r.deadline, "the UniversalRouter")?;
    calls.push(PlannedCall {
        call: TxCall { chain_id, to: wire(&router), data: calldata, value: "0".into() },
        description: format!(
            "swap {} {} for {} {} through the UniversalRouter on Uniswap's SDK route of block {} ({})",
            format_units(amount_in, tin.decimals),
            tin.symbol,
            format_units(amount_out, tout.decimals),
            tout.symbol,
            r.block_number,
            match side {
                Side::ExactIn => format!(
                    "at least {} out",
                    format_units(base("minimum_out_base", &r.minimum_out_base)?, tout.decimals)
                ),
                Side::ExactOut => format!("at most {} in", format_units(spend, tin.decimals)),
            }
        ),
    });
    let expected = RouteSwapOutcome {
        side,
        amount_in: format_units(amount_in, tin.decimals),
        amount_out: format_units(amount_out, tout.decimals),
        amount_in_base: amount_in.to_string(),
        amount_out_base: amount_out.to_string(),
        route_block: Some(r.block_number),
        balance_changes: vec![
            BalanceChange::spent(&tin, amount_in),
            BalanceChange::received(&tout, amount_out),
        ],
        authorities,
        token_in: tin,
        token_out: tout,
    };
    let expected_outcome_json = serde_json::to_string(&expected).map_err(|e| internal(e.to_string()))?;
    Ok(WritePlan { calls, expected_outcome_json })
}

/// What a route swap moved, from its receipts.
pub fn verify(
    chain_id: u64,
    (token_in, token_out, side): (&str, &str, Side),
    receipts: &[Receipt],
) -> Result<serde_json::Value, Error> {
    let (tin, tout) = tokens(chain_id, token_in, token_out)?;
    let last = receipts.last().ok_or_else(|| internal("no receipts to verify"))?;
    if !last.success {
        return Err(bardo_sdk::errors::error(
            bardo_sdk::ErrorCode::Reverted,
            format!("the swap transaction {} reverted", last.tx_hash),
        ));
    }
    let owner: Address = last.sender.parse().map_err(|_| internal("receipt sender is not an address"))?;
    let logs: Vec<_> = receipts.iter().flat_map(|r| r.logs.clone()).collect();
    let sent = transfers(&logs, tin.address, owner).1;
    let received = transfers(&logs, tout.address, owner).0;
    serde_json::to_value(RouteSwapOutcome {
        side,
        amount_in: format_units(sent, tin.decimals),
        amount_out: format_units(received, tout.decimals),
        amount_in_base: sent.to_string(),
        amount_out_base: received.to_string(),
        route_block: None,
        balance_changes: vec![BalanceChange::spent(&tin, sent), BalanceChange::received(&tout, received)],
        authorities: Vec::new(),
        token_in: tin,
        token_out: tout,
    })
    .map_err(|e| internal(e.to_string()))
}
