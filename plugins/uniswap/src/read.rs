//! The read tools: pools, quotes, positions, tokens and prices.

use crate::abi::*;
use crate::book::{Book, FEE_TIERS, book};
use crate::math::{v2_prices, v3_prices};
use crate::pools::{V2Pair, V3Pool, Version, v2_pair, v3_pool, v3_state};
use crate::quote::{Filter, Hop, Quote, Route, Side, quotes};
use crate::v4::{self, V4Pool};
use alloy_primitives::{Address, U256};
use bardo_sdk::abi::eth_call;
use bardo_sdk::erc20::{self, Token};
use bardo_sdk::errors::{invalid_params, not_found};
use bardo_sdk::units::{format_units, parse_units};
use bardo_sdk::{
    Category, ChainId, Error, Phase, ReadTool, TickBudget, ToolDef, events, guidelines, tool_def,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Check a fee tier param.
pub fn check_fee(fee: Option<u32>) -> Result<(), Error> {
    match fee {
        Some(f) if !FEE_TIERS.contains(&f) => Err(invalid_params(format!(
            "`fee` {f} is not a Uniswap V3 fee tier; use 100, 500, 3000 or 10000 (hundredths of a bip)"
        ))),
        _ => Ok(()),
    }
}

/// Two distinct tokens from params.
pub fn pair(
    chain_id: ChainId,
    book: &Book,
    a: &str,
    b: &str,
    fields: [&str; 2],
) -> Result<(Token, Token), Error> {
    let ta = book.token(chain_id, fields[0], a)?;
    let tb = book.token(chain_id, fields[1], b)?;
    if ta.address == tb.address {
        return Err(invalid_params(format!(
            "`{}` and `{}` are the same token; pick two different tokens",
            fields[0], fields[1]
        )));
    }
    Ok((ta, tb))
}

/// A pool as the read tools report it.
#[derive(Debug, Serialize)]
pub struct PoolInfo {
    pub version: Version,
    #[serde(serialize_with = "bardo_sdk::abi::checksummed")]
    pub address: Address,
    pub token0: Token,
    pub token1: Token,
    /// Fee in hundredths of a bip.
    pub fee: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sqrt_price_x96: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tick: Option<i32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tick_spacing: Option<i32>,
    /// V4: the pool's id in the PoolManager (`address` is the PoolManager).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pool_id: Option<String>,
    /// V4: the pool's hooks contract (the zero address: none).
    #[serde(skip_serializing_if = "Option::is_none", serialize_with = "optional_checksummed")]
    pub hooks: Option<Address>,
    /// V4: what the hook may do, by name (from its address bits); a `…ReturnDelta` permission
    /// lets it change what a swap pays or delivers, which the host refuses unless the operator
    /// allowlists the hook.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hook_permissions: Option<Vec<&'static str>>,
    /// In-range liquidity (V3, V4).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub liquidity: Option<String>,
    /// Reserves in base units (V2).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reserve0: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reserve1: Option<String>,
    /// How many token1 one token0 buys, in human units.
    pub price_token1_per_token0: String,
    /// How many token0 one token1 buys, in human units.
    pub price_token0_per_token1: String,
}

impl From<V3Pool> for PoolInfo {
    fn from(p: V3Pool) -> Self {
        let (p10, p01) = v3_prices(p.sqrt_price_x96, p.token0.decimals, p.token1.decimals);
        Self {
            version: Version::V3,
            address: p.address,
            fee: p.fee,
            sqrt_price_x96: Some(p.sqrt_price_x96.to_string()),
            tick: Some(p.tick),
            tick_spacing: Some(p.tick_spacing),
            pool_id: None,
            hooks: None,
            hook_permissions: None,
            liquidity: Some(p.liquidity.to_string()),
            reserve0: None,
            reserve1: None,
            price_token1_per_token0: p10,
            price_token0_per_token1: p01,
            token0: p.token0,
            token1: p.token1,
        }
    }
}

fn optional_checksummed<S: serde::Serializer>(a: &Option<Address>, s: S) -> Result<S::Ok, S::Error> {
    match a {
        Some(a) => bardo_sdk::abi::checksummed(a, s),
        None => s.serialize_none(),
    }
}

impl PoolInfo {
    fn v4(p: V4Pool, manager: Address) -> Self {
        Self {
            version: Version::V4,
            address: manager,
            pool_id: Some(p.key.pool_id.to_string()),
            hooks: Some(p.key.hooks),
            hook_permissions: Some(v4::hook_permissions(p.key.hooks)),
            ..Self::from(V3Pool {
                address: manager,
                token0: p.token0,
                token1: p.token1,
                fee: p.fee,
                tick_spacing: p.key.tick_spacing,
                sqrt_price_x96: p.sqrt_price_x96,
                tick: p.tick,
                liquidity: p.liquidity,
            })
        }
    }
}

impl From<V2Pair> for PoolInfo {
    fn from(p: V2Pair) -> Self {
        let (p10, p01) = v2_prices(p.reserve0, p.reserve1, p.token0.decimals, p.token1.decimals);
        Self {
            version: Version::V2,
            address: p.address,
            fee: 3000,
            sqrt_price_x96: None,
            tick: None,
            tick_spacing: None,
            pool_id: None,
            hooks: None,
            hook_permissions: None,
            liquidity: None,
            reserve0: Some(p.reserve0.to_string()),
            reserve1: Some(p.reserve1.to_string()),
            price_token1_per_token0: p10,
            price_token0_per_token1: p01,
            token0: p.token0,
            token1: p.token1,
        }
    }
}

/// Params of `uniswap_get_pool_info`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PoolInfoParams {
    /// Chain id, e.g. 1 or 31337.
    pub chain_id: u64,
    /// One token of the pool: a symbol from the configured token list (`WETH`) or an address.
    pub token_a: String,
    /// The other token.
    pub token_b: String,
    /// `v3` (default), `v2` or `v4`.
    #[serde(default)]
    pub version: Option<Version>,
    /// Fee tier in hundredths of a bip (100, 500, 3000, 10000). Default: the tier with the most
    /// in-range liquidity.
    #[serde(default)]
    pub fee: Option<u32>,
    /// V4: the pool key's tick spacing (with `fee`; default the tier's standard one).
    #[serde(default)]
    pub tick_spacing: Option<i32>,
    /// V4: the pool key's hooks contract (with `fee`; default none).
    #[serde(default)]
    pub hooks: Option<String>,
}

/// The V4 pools of `a`/`b` a read names: a pool key when `tick_spacing` or `hooks` is given
/// (`fee` then required), else every standard tier without hooks. `ETH` is native ether, the
/// zero address in V4 keys.
fn v4_pools_of(
    chain_id: ChainId,
    book: &Book,
    (a, b): (&str, &str),
    fee: Option<u32>,
    key: (Option<i32>, Option<&str>),
) -> Result<Vec<V4Pool>, Error> {
    let side = |field: &str, input: &str| {
        if crate::native::is_native(input) {
            Ok(crate::native::eth())
        } else {
            book.token(chain_id, field, input)
        }
    };
    let (ta, tb) = (side("token_a", a)?, side("token_b", b)?);
    if ta.address == tb.address {
        return Err(invalid_params("`token_a` and `token_b` are the same token; pick two different tokens"));
    }
    if key == (None, None) {
        return v4::pools(chain_id, book, &ta, &tb, fee);
    }
    let fee = fee.ok_or_else(|| invalid_params("a V4 pool key needs `fee` with `tick_spacing` / `hooks`"))?;
    let key = v4::key_params(fee, key.0, key.1)?;
    Ok(v4::hooked_pool(chain_id, book, &ta, &tb, key)?.into_iter().collect())
}

pub struct GetPoolInfo;

impl ReadTool for GetPoolInfo {
    const NAME: &'static str = "uniswap_get_pool_info";
    type Params = PoolInfoParams;
    type Output = PoolInfo;

    fn def() -> ToolDef {
        ToolDef {
            prompt_snippet:
                "uniswap_get_pool_info: one Uniswap pool's tokens, fee, price, tick and liquidity".into(),
            progress_steps: vec!["resolve tokens".into(), "read pool".into()],
            prompt_guidelines: guidelines(&[
                (Phase::Cautious, "Check liquidity before sizing a trade against a pool."),
                (Phase::Survival, "Read only what the next exit needs."),
            ]),
            ..tool_def::<PoolInfoParams>(
                Self::NAME,
                "Reads one Uniswap pool (V3 by default, the V2 pair, or a V4 pool by its key): its tokens with symbol and decimals, \
                 fee tier, sqrtPriceX96, tick, in-range liquidity (V2: reserves), and the price both ways in \
                 human units. Use it to inspect a market before quoting or trading. It does not quote an \
                 amount (use uniswap_get_quote) and does not list every fee tier (use \
                 uniswap_get_pools_by_token_pair).",
                Category::Data,
            )
        }
    }

    fn run(p: PoolInfoParams) -> Result<PoolInfo, Error> {
        let book = book(p.chain_id)?;
        if p.version == Some(Version::V4) {
            events::progress(1);
            let manager = book.v4_pool_manager.unwrap_or_default();
            let key = (p.tick_spacing, p.hooks.as_deref());
            let pools = v4_pools_of(p.chain_id, &book, (&p.token_a, &p.token_b), p.fee, key)?;
            let best = pools.into_iter().max_by_key(|pool| pool.liquidity);
            return best.map(|pool| PoolInfo::v4(pool, manager)).ok_or_else(|| {
                not_found(format!(
                    "no V4 pool of {}/{}{} on chain {}; list the pools with uniswap_get_pools_by_token_pair",
                    p.token_a,
                    p.token_b,
                    match (p.fee, p.tick_spacing, &p.hooks) {
                        (Some(f), None, None) => format!(" at fee {f}"),
                        (Some(f), s, h) => format!(
                            " with fee {f}, tick spacing {}, hooks {}",
                            s.map_or("standard".into(), |s| s.to_string()),
                            h.as_deref().unwrap_or("none")
                        ),
                        _ => String::new(),
                    },
                    p.chain_id
                ))
            });
        }
        if p.tick_spacing.is_some() || p.hooks.is_some() {
            return Err(invalid_params(
                "`tick_spacing` and `hooks` name a V4 pool; add `\"version\": \"v4\"`",
            ));
        }
        check_fee(p.fee)?;
        events::progress(0);
        let (a, b) = pair(p.chain_id, &book, &p.token_a, &p.token_b, ["token_a", "token_b"])?;
        events::progress(1);
        let missing = || {
            not_found(format!(
                "no {} pool of {}/{} on chain {}; list the pools with uniswap_get_pools_by_token_pair",
                p.version.unwrap_or(Version::V3).name(),
                a.symbol,
                b.symbol,
                p.chain_id
            ))
        };
        if p.version == Some(Version::V2) {
            return v2_pair(p.chain_id, &book, &a, &b)?.map(PoolInfo::from).ok_or_else(missing);
        }
        let mut best: Option<V3Pool> = None;
        for fee in FEE_TIERS.into_iter().filter(|f| p.fee.is_none_or(|want| want == *f)) {
            if let Some(pool) = v3_pool(p.chain_id, &book, &a, &b, fee)?
                && best.as_ref().is_none_or(|b| pool.liquidity > b.liquidity)
            {
                best = Some(pool);
            }
        }
        best.map(PoolInfo::from).ok_or_else(missing)
    }
}

/// Params of `uniswap_get_pools_by_token_pair`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PairParams {
    /// Chain id.
    pub chain_id: u64,
    /// One token: a listed symbol or an address.
    pub token_a: String,
    /// The other token.
    pub token_b: String,
}

pub struct GetPoolsByTokenPair;

impl ReadTool for GetPoolsByTokenPair {
    const NAME: &'static str = "uniswap_get_pools_by_token_pair";
    type Params = PairParams;
    type Output = Vec<PoolInfo>;

    fn def() -> ToolDef {
        ToolDef {
            prompt_snippet: "uniswap_get_pools_by_token_pair: every Uniswap pool of a token pair".into(),
            progress_steps: vec!["resolve tokens".into(), "query factories".into()],
            prompt_guidelines: guidelines(&[(
                Phase::Thriving,
                "Compare fee tiers: deep low-fee pools are cheapest for large trades.",
            )]),
            ..tool_def::<PairParams>(
                Self::NAME,
                "Lists every Uniswap pool of a token pair: each V3 fee tier that exists (100, 500, 3000, \
                 10000), the V2 pair, and the V4 pools without hooks at those tiers (by pool id; with `ETH`, \
                 the pools of WETH and of native ether), with price and liquidity. Use it to pick a \
                 fee tier or compare depth. It does not quote amounts.",
                Category::Data,
            )
        }
    }

    fn run(p: PairParams) -> Result<Vec<PoolInfo>, Error> {
        let book = book(p.chain_id)?;
        events::progress(0);
        // `ETH`: V2 and V3 pools of WETH, V4 pools of WETH and of ether itself.
        let (a, native_a) = crate::native::pool_token(p.chain_id, &book, "token_a", &p.token_a)?;
        let (b, native_b) = crate::native::pool_token(p.chain_id, &book, "token_b", &p.token_b)?;
        if a.address == b.address {
            return Err(invalid_params(
                "`token_a` and `token_b` are the same token; pick two different tokens",
            ));
        }
        events::progress(1);
        let mut pools = Vec::new();
        for fee in FEE_TIERS {
            if let Some(pool) = v3_pool(p.chain_id, &book, &a, &b, fee)? {
                pools.push(PoolInfo::from(pool));
            }
        }
        if let Some(pair) = v2_pair(p.chain_id, &book, &a, &b)? {
            pools.push(PoolInfo::from(pair));
        }
        let manager = book.v4_pool_manager.unwrap_or_default();
        let mut v4_pools = v4::pools(p.chain_id, &book, &a, &b, None)?;
        if native_a || native_b {
            let weth = if native_a { a.address } else { b.address };
            v4_pools.extend(v4::native_pools(p.chain_id, &book, (&a, &b), weth, (None, None))?);
        }
        pools.extend(v4_pools.into_iter().map(|pool| PoolInfo::v4(pool, manager)));
        Ok(pools)
    }
}

/// Params of `uniswap_get_quote`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct QuoteParams {
    /// Chain id.
    pub chain_id: u64,
    /// Token sold: a listed symbol, an address, or `ETH` (quoted as WETH).
    pub token_in: String,
    /// Token bought.
    pub token_out: String,
    /// Amount in token units as a decimal string ("1.5"): of `token_in` for `exact_in`, of
    /// `token_out` for `exact_out`.
    pub amount: String,
    /// `exact_in` (default) or `exact_out`.
    #[serde(default)]
    pub side: Side,
    /// Restrict to `v4`, `v3` or `v2`; default: the best of all.
    #[serde(default)]
    pub version: Option<Version>,
    /// Restrict to one fee tier (hundredths of a bip).
    #[serde(default)]
    pub fee: Option<u32>,
    /// Quote one V4 pool with a hook: the hook's address (with `fee`; the pool key's
    /// `tick_spacing` if not the fee's standard one).
    #[serde(default)]
    pub hooks: Option<String>,
    /// A V4 pool key's tick spacing (with `fee`).
    #[serde(default)]
    pub tick_spacing: Option<i32>,
}

/// A route's quote for output.
#[derive(Debug, Serialize)]
pub struct RouteQuote {
    pub route: Route,
    /// A two-hop route's second pool, after `route`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub then: Option<Hop>,
    pub amount_in: String,
    pub amount_out: String,
    pub amount_in_base: String,
    pub amount_out_base: String,
}

impl RouteQuote {
    pub fn new(q: &Quote, tin: &Token, tout: &Token) -> Self {
        Self {
            route: q.route,
            then: q.then,
            amount_in: format_units(q.amount_in, tin.decimals),
            amount_out: format_units(q.amount_out, tout.decimals),
            amount_in_base: q.amount_in.to_string(),
            amount_out_base: q.amount_out.to_string(),
        }
    }
}

/// Result of `uniswap_get_quote`.
#[derive(Debug, Serialize)]
pub struct QuoteOutput {
    pub token_in: Token,
    pub token_out: Token,
    pub side: Side,
    /// The best route.
    pub best: RouteQuote,
    /// Every route that can fill the amount, best first.
    pub routes: Vec<RouteQuote>,
    /// Routes that can fill only part of it: what each would really take and give.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub partial: Vec<RouteQuote>,
}

/// Parse and check the amount of a quote or swap: positive, in the fixed side's token units.
pub fn fixed_amount(p_amount: &str, side: Side, tin: &Token, tout: &Token) -> Result<U256, Error> {
    let token = if side == Side::ExactIn { tin } else { tout };
    let amount = parse_units("amount", p_amount, token.decimals)?;
    if amount.is_zero() {
        return Err(invalid_params("`amount` is zero; give a positive amount"));
    }
    Ok(amount)
}

pub struct GetQuote;

impl ReadTool for GetQuote {
    const NAME: &'static str = "uniswap_get_quote";
    type Params = QuoteParams;
    type Output = QuoteOutput;

    fn def() -> ToolDef {
        ToolDef {
            prompt_snippet: "uniswap_get_quote: how much a Uniswap swap would give or cost, best route"
                .into(),
            progress_steps: vec!["resolve tokens".into(), "quote routes".into()],
            tick_budget: TickBudget::Medium,
            prompt_guidelines: guidelines(&[
                (Phase::Cautious, "Quote before every swap and compare with data_get_token_price."),
                (Phase::Terminal, "Quote only exits to the quote token."),
            ]),
            ..tool_def::<QuoteParams>(
                Self::NAME,
                "Quotes a swap exact-in or exact-out through the contracts (V4Quoter and V3 QuoterV2 per fee \
                 tier, V2 Router02 getAmountsOut/In) and picks the best route among fee tiers and versions, \
                 directly or through WETH. Use it \
                 before uniswap_execute_swap to see the price and route. It does not trade and does not \
                 include gas costs.",
                Category::Data,
            )
        }
    }

    fn run(p: QuoteParams) -> Result<QuoteOutput, Error> {
        let filter = Filter::of(p.version, p.fee, (p.tick_spacing, p.hooks.as_deref()), None)?;
        let book = book(p.chain_id)?;
        events::progress(0);
        // ETH quotes as WETH (the router wraps and unwraps it).
        let (tin, native_in) = crate::native::pool_token(p.chain_id, &book, "token_in", &p.token_in)?;
        let (tout, native_out) = crate::native::pool_token(p.chain_id, &book, "token_out", &p.token_out)?;
        if tin.address == tout.address {
            return Err(invalid_params(
                "`token_in` and `token_out` are the same token (ETH trades as WETH); pick two different tokens",
            ));
        }
        let amount = fixed_amount(&p.amount, p.side, &tin, &tout)?;
        events::progress(1);
        let native = match (native_in, native_out) {
            (true, _) => Some(tin.address),
            (_, true) => Some(tout.address),
            _ => None,
        };
        let filter = Filter { native, ..filter };
        let all = quotes(p.chain_id, &book, &tin, &tout, amount, p.side, filter)?;
        let routes: Vec<RouteQuote> = all.full.iter().map(|q| RouteQuote::new(q, &tin, &tout)).collect();
        let partial: Vec<RouteQuote> = all.partial.iter().map(|q| RouteQuote::new(q, &tin, &tout)).collect();
        let best = RouteQuote::new(&all.full[0], &tin, &tout);
        let show = |t: Token, native: bool| if native { crate::native::eth() } else { t };
        Ok(QuoteOutput {
            token_in: show(tin, native_in),
            token_out: show(tout, native_out),
            side: p.side,
            best,
            routes,
            partial,
        })
    }
}

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
struct PositionView {
    id: U256,
    owner: Address,
    /// The V3 pool, or V4's PoolManager.
    pool: Address,
    fee: u32,
    ticks: (i32, i32),
    current_tick: i32,
    liquidity: u128,
}

impl PositionOutput {
    /// `((principal0, principal1), (fees0, fees1))` in base units.
    fn new(
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

/// A deadline far enough for a simulation at the latest block.
pub fn deadline(chain_id: ChainId, seconds: u64) -> Result<U256, Error> {
    Ok(U256::from(bardo_sdk::chain::block_timestamp(chain_id, None)? + seconds))
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
                Category::Liquidity,
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

/// Params of `uniswap_get_token_info`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TokenParams {
    /// Chain id.
    pub chain_id: u64,
    /// A listed symbol or an address.
    pub token: String,
}

/// Result of `uniswap_get_token_info`.
#[derive(Debug, Serialize)]
pub struct TokenInfo {
    #[serde(serialize_with = "bardo_sdk::abi::checksummed")]
    pub address: Address,
    pub symbol: String,
    pub name: String,
    pub decimals: u8,
    pub total_supply: String,
    pub total_supply_base: String,
    /// Whether the operator's token list for this chain contains the address.
    pub listed: bool,
}

pub struct GetTokenInfo;

impl ReadTool for GetTokenInfo {
    const NAME: &'static str = "uniswap_get_token_info";
    type Params = TokenParams;
    type Output = TokenInfo;

    fn def() -> ToolDef {
        ToolDef {
            prompt_snippet: "uniswap_get_token_info: a token's symbol, name, decimals, supply".into(),
            progress_steps: vec!["resolve token".into(), "read metadata".into()],
            prompt_guidelines: guidelines(&[(
                Phase::Cautious,
                "Prefer listed tokens; an unlisted token may be a lookalike.",
            )]),
            ..tool_def::<TokenParams>(
                Self::NAME,
                "Reads an ERC-20 token on chain: symbol, name, decimals and total supply, and whether the \
                 operator's token list includes it. Use it to check a token before trading it. It does not \
                 price the token (use data_get_token_price).",
                Category::Data,
            )
        }
    }

    fn run(p: TokenParams) -> Result<TokenInfo, Error> {
        let book = book(p.chain_id)?;
        events::progress(0);
        let t = book.token(p.chain_id, "token", &p.token)?;
        events::progress(1);
        let supply = erc20::total_supply(p.chain_id, t.address)?;
        Ok(TokenInfo {
            name: erc20::name(p.chain_id, t.address)?,
            listed: book.tokens.iter().any(|l| l.address == t.address),
            total_supply: format_units(supply, t.decimals),
            total_supply_base: supply.to_string(),
            address: t.address,
            symbol: t.symbol,
            decimals: t.decimals,
        })
    }
}

/// Params of `data_get_token_price`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PriceParams {
    /// Chain id.
    pub chain_id: u64,
    /// The token to price: a listed symbol or an address.
    pub token: String,
    /// What to price it in; default: the chain's configured quote token (USDC).
    #[serde(default)]
    pub quote_token: Option<String>,
}

/// Result of `data_get_token_price`.
#[derive(Debug, Serialize)]
pub struct PriceOutput {
    pub token: Token,
    pub quote_token: Token,
    /// Quote-token units per one token, from the pool's spot price.
    pub price: String,
    /// The deepest pool, which the price comes from (absent when the token is the quote token).
    pub source: Option<Route>,
    /// How much quote token that pool holds, human units.
    pub pool_quote_balance: Option<String>,
}

pub struct GetTokenPrice;

impl ReadTool for GetTokenPrice {
    const NAME: &'static str = "data_get_token_price";
    type Params = PriceParams;
    type Output = PriceOutput;

    fn def() -> ToolDef {
        ToolDef {
            prompt_snippet: "data_get_token_price: a token's spot price from its deepest Uniswap pool".into(),
            progress_steps: vec!["resolve tokens".into(), "find deepest pool".into()],
            tick_budget: TickBudget::Medium,
            prompt_guidelines: guidelines(&[(
                Phase::Cautious,
                "Spot prices move; value positions with a margin.",
            )]),
            ..tool_def::<PriceParams>(
                Self::NAME,
                "Prices a token in the configured quote token (USDC unless set) from the spot price of its \
                 deepest Uniswap pool (V3 fee tiers and V2, by quote-token balance). Use it for valuations. \
                 It is a spot price, not an execution price: for a trade, use uniswap_get_quote.",
                Category::Data,
            )
        }
    }

    fn run(p: PriceParams) -> Result<PriceOutput, Error> {
        let book = book(p.chain_id)?;
        events::progress(0);
        let token = book.token(p.chain_id, "token", &p.token)?;
        let quote =
            book.token(p.chain_id, "quote_token", p.quote_token.as_deref().unwrap_or(&book.quote_token))?;
        if token.address == quote.address {
            return Ok(PriceOutput {
                token,
                quote_token: quote,
                price: "1".into(),
                source: None,
                pool_quote_balance: None,
            });
        }
        events::progress(1);
        // (quote balance of the pool, route, price in quote per token)
        let mut best: Option<(U256, Route, String)> = None;
        let mut consider = |balance: U256, route: Route, price: String| {
            if best.as_ref().is_none_or(|(b, _, _)| balance > *b) {
                best = Some((balance, route, price));
            }
        };
        let quote_is_1 = quote.address > token.address;
        for fee in FEE_TIERS {
            if let Some(pool) = v3_pool(p.chain_id, &book, &token, &quote, fee)? {
                let balance = erc20::balance_of(p.chain_id, quote.address, pool.address)?;
                let (p10, p01) = v3_prices(pool.sqrt_price_x96, pool.token0.decimals, pool.token1.decimals);
                let route = Route { version: Version::V3, fee, pool: pool.address, v4: None };
                consider(balance, route, if quote_is_1 { p10 } else { p01 });
            }
        }
        if let Some(pair) = v2_pair(p.chain_id, &book, &token, &quote)? {
            let balance = if quote_is_1 { pair.reserve1 } else { pair.reserve0 };
            let (p10, p01) =
                v2_prices(pair.reserve0, pair.reserve1, pair.token0.decimals, pair.token1.decimals);
            let route = Route { version: Version::V2, fee: 3000, pool: pair.address, v4: None };
            consider(balance, route, if quote_is_1 { p10 } else { p01 });
        }
        let (balance, route, price) = best.ok_or_else(|| {
            not_found(format!(
                "no Uniswap pool pairs {} with {} on chain {}; price it against another quote_token",
                token.symbol, quote.symbol, p.chain_id
            ))
        })?;
        Ok(PriceOutput {
            pool_quote_balance: Some(format_units(balance, quote.decimals)),
            token,
            quote_token: quote,
            price,
            source: Some(route),
        })
    }
}
