//! The tools: impermanent loss, LVR, realized volatility, fee APR, liquidity distribution.

use crate::curve::{self, Range};
use crate::pool::{
    self, PoolParams, PoolRef, SECONDS_PER_YEAR, Window, price_of_sqrt, price_of_tick, price_param,
};
use alloy_primitives::U256;
use alloy_primitives::aliases::I24;
use bardo_sdk::abi::eth_call;
use bardo_sdk::errors::{invalid_params, not_found};
use bardo_sdk::uniswap::pools::{V3Pool, v3_state};
use bardo_sdk::uniswap::{self, getPoolCall, positionsCall, ticksCall};
use bardo_sdk::{Category, ChainId, Error, ReadTool, TickBudget, ToolDef, described, erc20, events};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub(crate) fn def<P: JsonSchema>(name: &str, description: &str, steps: &[&str]) -> ToolDef {
    ToolDef {
        tick_budget: TickBudget::Medium,
        ..described::<P>(name, description, Category::Intelligence, steps)
    }
}

/// Params of `intel_compute_impermanent_loss`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct IlParams {
    /// Prices to evaluate, token1 per token0 (`["2100", "2500"]`), 1 to 1,000.
    pub prices: Vec<String>,
    /// A Uniswap V3 position (NonfungiblePositionManager token id): its range, entered at the
    /// pool's price now. Needs `chain_id`.
    #[serde(default)]
    pub position_id: Option<String>,
    /// The chain of `position_id`.
    #[serde(default)]
    pub chain_id: Option<ChainId>,
    /// A hypothetical position's entry price (without `position_id`).
    #[serde(default)]
    pub entry_price: Option<String>,
    /// Its range's lower price; default: full range.
    #[serde(default)]
    pub lower_price: Option<String>,
    /// Its range's upper price; default: full range.
    #[serde(default)]
    pub upper_price: Option<String>,
}

#[derive(Serialize)]
pub struct IlPoint {
    price: f64,
    /// The position's value (1 at entry).
    value_lp: f64,
    /// The entry holdings' value if held instead (1 at entry).
    value_hold: f64,
    /// `value_lp / value_hold − 1`; fees not counted.
    impermanent_loss: f64,
    in_range: bool,
}

#[derive(Serialize)]
pub struct IlReport {
    /// `position` or `hypothetical`.
    source: &'static str,
    entry_price: f64,
    lower_price: f64,
    /// None: unbounded.
    upper_price: Option<f64>,
    points: Vec<IlPoint>,
}

pub struct ImpermanentLoss;

impl ReadTool for ImpermanentLoss {
    const NAME: &'static str = "intel_compute_impermanent_loss";
    type Params = IlParams;
    type Output = IlReport;

    fn def() -> ToolDef {
        def::<IlParams>(
            Self::NAME,
            "Impermanent loss along a price path for a Uniswap V3 position (its range, entered at the \
             pool's price now) or a hypothetical range (full range by default): the position's value, \
             the held value and their ratio at each price. Fees are not counted. Reads only.",
            &["read the position", "compute"],
        )
    }

    fn run(p: IlParams) -> Result<IlReport, Error> {
        if p.prices.is_empty() || p.prices.len() > 1_000 {
            return Err(invalid_params("`prices` must hold 1 to 1,000 prices"));
        }
        let path = p.prices.iter().map(|t| price_param("prices", t)).collect::<Result<Vec<_>, _>>()?;
        let (source, entry, range) = match &p.position_id {
            Some(id) => {
                let chain_id = p.chain_id.ok_or_else(|| invalid_params("`position_id` needs `chain_id`"))?;
                let (pool, lower, upper) = position(chain_id, id)?;
                let range = Range { lower: price_of_tick(lower, &pool), upper: price_of_tick(upper, &pool) };
                ("position", price_of_sqrt(pool.sqrt_price_x96, &pool), range)
            }
            None => {
                let entry = p.entry_price.as_deref().ok_or_else(|| {
                    invalid_params("give `position_id` (and `chain_id`) or a hypothetical `entry_price`")
                })?;
                (
                    "hypothetical",
                    price_param("entry_price", entry)?,
                    range_of(&p.lower_price, &p.upper_price)?,
                )
            }
        };
        events::progress(1);
        let points = curve::impermanent_loss(entry, range, &path)
            .into_iter()
            .map(|q| IlPoint {
                price: q.price,
                value_lp: q.value_lp,
                value_hold: q.value_hold,
                impermanent_loss: q.il,
                in_range: q.in_range,
            })
            .collect();
        Ok(IlReport {
            source,
            entry_price: entry,
            lower_price: range.lower,
            upper_price: range.upper.is_finite().then_some(range.upper),
            points,
        })
    }
}

fn range_of(lower: &Option<String>, upper: &Option<String>) -> Result<Range, Error> {
    let lower = lower.as_deref().map(|t| price_param("lower_price", t)).transpose()?.unwrap_or(0.0);
    let upper = upper.as_deref().map(|t| price_param("upper_price", t)).transpose()?.unwrap_or(f64::INFINITY);
    if lower >= upper {
        return Err(invalid_params("`lower_price` must be below `upper_price`"));
    }
    Ok(Range { lower, upper })
}

/// A V3 position's pool (now) and ticks.
fn position(chain_id: ChainId, id: &str) -> Result<(V3Pool, i32, i32), Error> {
    let book = uniswap::book(chain_id)?;
    let token_id: U256 =
        id.parse().map_err(|_| invalid_params(format!("`position_id` {id:?} is not a token id")))?;
    let pos = eth_call(chain_id, book.position_manager, &positionsCall { tokenId: token_id })
        .map_err(|_| not_found(format!("no Uniswap V3 position {id} on chain {chain_id}")))?;
    let (a, b) = (erc20::token(chain_id, pos.token0)?, erc20::token(chain_id, pos.token1)?);
    let call = getPoolCall { tokenA: pos.token0, tokenB: pos.token1, fee: pos.fee };
    let address = eth_call(chain_id, book.v3_factory, &call)?;
    let fee: u32 = pos.fee.to();
    let pool = v3_state(chain_id, address, &a, &b, fee)?;
    Ok((pool, pos.tickLower.as_i32(), pos.tickUpper.as_i32()))
}

/// Params of `intel_compute_lvr`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LvrParams {
    /// Annualized volatility as a fraction (`0.8` = 80 %); default: the pool's realized
    /// volatility over `blocks` (then `pool` is needed).
    #[serde(default)]
    pub volatility: Option<f64>,
    /// The pool whose price (and, without `volatility`, realized volatility) to use.
    #[serde(default)]
    pub pool: Option<PoolParams>,
    /// The window for the realized volatility, in blocks (default 1,000).
    #[serde(default)]
    pub blocks: Option<u64>,
    /// The price, token1 per token0; default: the pool's now.
    #[serde(default)]
    pub price: Option<String>,
    /// The range's lower price; default: full range.
    #[serde(default)]
    pub lower_price: Option<String>,
    /// The range's upper price; default: full range.
    #[serde(default)]
    pub upper_price: Option<String>,
}

#[derive(Serialize)]
pub struct LvrReport {
    volatility_annualized: f64,
    price: f64,
    in_range: bool,
    /// Expected loss-versus-rebalancing as a fraction of the position's value, per year.
    lvr_per_year: f64,
    /// The same, per day.
    lvr_per_day: f64,
    pool: Option<PoolRef>,
}

pub struct Lvr;

impl ReadTool for Lvr {
    const NAME: &'static str = "intel_compute_lvr";
    type Params = LvrParams;
    type Output = LvrReport;

    fn def() -> ToolDef {
        def::<LvrParams>(
            Self::NAME,
            "Loss-versus-rebalancing of a liquidity position (full range or a price range): the \
             fraction of its value arbitrageurs take per year and per day at a volatility (given, or \
             the pool's realized one), σ²/8 at full range. Reads only.",
            &["read the pool", "compute"],
        )
    }

    fn run(p: LvrParams) -> Result<LvrReport, Error> {
        let pool = p.pool.as_ref().map(pool::find).transpose()?;
        let sigma = match (p.volatility, &pool, &p.pool) {
            (Some(s), _, _) if s.is_finite() && s >= 0.0 => s,
            (Some(s), _, _) => {
                return Err(invalid_params(format!("`volatility` {s} must be a fraction ≥ 0")));
            }
            (None, Some(pool), Some(params)) => {
                realized(params.chain_id, pool, p.blocks)?.volatility_annualized
            }
            _ => return Err(invalid_params("give `volatility`, or a `pool` to measure it from")),
        };
        let price = match (&p.price, &pool) {
            (Some(t), _) => price_param("price", t)?,
            (None, Some(pool)) => price_of_sqrt(pool.sqrt_price_x96, pool),
            (None, None) => return Err(invalid_params("give `price`, or a `pool` to read it from")),
        };
        let range = range_of(&p.lower_price, &p.upper_price)?;
        let rate = curve::lvr_rate(sigma, price, range);
        Ok(LvrReport {
            volatility_annualized: sigma,
            price,
            in_range: range.contains(price),
            lvr_per_year: rate,
            lvr_per_day: rate / 365.0,
            pool: pool.as_ref().map(pool::reference),
        })
    }
}

/// Params of the pool-window tools.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WindowParams {
    #[serde(flatten)]
    pub pool: PoolParams,
    /// The window: this many blocks up to the latest (default 1,000; at most 100,000).
    #[serde(default)]
    pub blocks: Option<u64>,
}

#[derive(Serialize)]
pub struct Volatility {
    pool: PoolRef,
    #[serde(flatten)]
    window: Window,
    pub(crate) swaps: usize,
    /// token1 per token0 before the window's first block, and at its end.
    start_price: f64,
    end_price: f64,
    /// `sqrt(Σ ln(pᵢ/pᵢ₋₁)²)` over the swaps' prices.
    volatility_window: f64,
    /// Scaled to a year by the window's duration.
    pub(crate) volatility_annualized: f64,
}

pub(crate) fn realized(chain_id: ChainId, pool: &V3Pool, blocks: Option<u64>) -> Result<Volatility, Error> {
    let w = pool::window(chain_id, blocks)?;
    events::progress(1);
    let start = pool::sqrt_price_at(chain_id, pool.address, w.from_block - 1)?;
    let swaps = pool::swaps(chain_id, pool.address, w)?;
    let mut prices = vec![price_of_sqrt(start, pool)];
    prices.extend(swaps.iter().map(|s| price_of_sqrt(U256::from(s.sqrtPriceX96), pool)));
    let (vol, _) = curve::realized(&prices);
    let annualized = if w.seconds == 0 { 0.0 } else { vol * (SECONDS_PER_YEAR / w.seconds as f64).sqrt() };
    Ok(Volatility {
        pool: pool::reference(pool),
        window: w,
        swaps: swaps.len(),
        start_price: prices[0],
        end_price: *prices.last().unwrap_or(&prices[0]),
        volatility_window: vol,
        volatility_annualized: annualized,
    })
}

pub struct RealizedVolatility;

impl ReadTool for RealizedVolatility {
    const NAME: &'static str = "intel_get_realized_volatility";
    type Params = WindowParams;
    type Output = Volatility;

    fn def() -> ToolDef {
        def::<WindowParams>(
            Self::NAME,
            "Realized volatility of a Uniswap V3 pool's price from its swaps over the last `blocks`: \
             the root of the summed squared log returns, and that scaled to a year by the window's \
             duration. Reads only.",
            &["find the pool", "read swaps"],
        )
    }

    fn run(p: WindowParams) -> Result<Volatility, Error> {
        events::progress(0);
        let pool = pool::find(&p.pool)?;
        realized(p.pool.chain_id, &pool, p.blocks)
    }
}

#[derive(Serialize)]
pub struct FeeApr {
    pool: PoolRef,
    #[serde(flatten)]
    pub(crate) window: Window,
    pub(crate) swaps: usize,
    /// Fees charged in the window, whole tokens (`fee` of each swap's input).
    fees0: f64,
    fees1: f64,
    /// Both, in token1 at the price now.
    pub(crate) fees_value: f64,
    /// What the pool holds now, in token1.
    pub(crate) tvl: f64,
    /// `fees_value / tvl`, scaled to a year by the window's duration.
    apr: f64,
}

pub struct FeeAprTool;

impl ReadTool for FeeAprTool {
    const NAME: &'static str = "intel_get_fee_apr";
    type Params = WindowParams;
    type Output = FeeApr;

    fn def() -> ToolDef {
        def::<WindowParams>(
            Self::NAME,
            "Fee APR of a Uniswap V3 pool over the last `blocks`: the fees its swaps paid (the fee tier \
             on each input), valued in token1 at the price now, against what the pool holds, scaled to \
             a year. Reads only.",
            &["find the pool", "read swaps", "read balances"],
        )
    }

    fn run(p: WindowParams) -> Result<FeeApr, Error> {
        events::progress(0);
        let pool = pool::find(&p.pool)?;
        fee_apr(p.pool.chain_id, &pool, p.blocks)
    }
}

/// A V3 pool's fees over the last `blocks` against what it holds.
pub(crate) fn fee_apr(c: ChainId, pool: &V3Pool, blocks: Option<u64>) -> Result<FeeApr, Error> {
    let w = pool::window(c, blocks)?;
    let swaps = pool::swaps(c, pool.address, w)?;
    let (mut f0, mut f1) = (U256::ZERO, U256::ZERO);
    for s in &swaps {
        let fee = |amount: alloy_primitives::I256| {
            amount.into_raw() * U256::from(pool.fee) / U256::from(1_000_000u32)
        };
        if s.amount0.is_positive() {
            f0 += fee(s.amount0);
        }
        if s.amount1.is_positive() {
            f1 += fee(s.amount1);
        }
    }
    events::progress(2);
    let units = |v: U256, d: u8| v.to_string().parse::<f64>().unwrap_or(f64::NAN) / 10f64.powi(i32::from(d));
    let price = price_of_sqrt(pool.sqrt_price_x96, pool);
    let (fees0, fees1) = (units(f0, pool.token0.decimals), units(f1, pool.token1.decimals));
    let held0 = units(erc20::balance_of(c, pool.token0.address, pool.address)?, pool.token0.decimals);
    let held1 = units(erc20::balance_of(c, pool.token1.address, pool.address)?, pool.token1.decimals);
    let (fees_value, tvl) = (fees0 * price + fees1, held0 * price + held1);
    let apr =
        if tvl > 0.0 && w.seconds > 0 { fees_value / tvl * SECONDS_PER_YEAR / w.seconds as f64 } else { 0.0 };
    Ok(FeeApr {
        pool: pool::reference(pool),
        window: w,
        swaps: swaps.len(),
        fees0,
        fees1,
        fees_value,
        tvl,
        apr,
    })
}

/// Params of `intel_get_liquidity_distribution`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DistributionParams {
    #[serde(flatten)]
    pub pool: PoolParams,
    /// Tick-spacing ranges on each side of the current one (default 10, at most 100).
    #[serde(default)]
    pub spacings: Option<u32>,
}

#[derive(Serialize)]
pub struct TickRange {
    tick_lower: i32,
    tick_upper: i32,
    price_lower: f64,
    price_upper: f64,
    /// Active liquidity while the price is in this range.
    liquidity: String,
    /// The range the price is in now.
    current: bool,
}

#[derive(Serialize)]
pub struct Distribution {
    pool: PoolRef,
    tick: i32,
    tick_spacing: i32,
    ranges: Vec<TickRange>,
}

pub struct LiquidityDistribution;

impl ReadTool for LiquidityDistribution {
    const NAME: &'static str = "intel_get_liquidity_distribution";
    type Params = DistributionParams;
    type Output = Distribution;

    fn def() -> ToolDef {
        def::<DistributionParams>(
            Self::NAME,
            "Liquidity of a Uniswap V3 pool by tick range around the price: for each tick-spacing range \
             within `spacings` of the current one, its ticks, prices and the liquidity active there \
             (walked from the pool's liquidity through each boundary's liquidityNet). Reads only.",
            &["find the pool", "read ticks"],
        )
    }

    fn run(p: DistributionParams) -> Result<Distribution, Error> {
        let n = i32::try_from(p.spacings.unwrap_or(10)).unwrap_or(i32::MAX);
        if !(1..=100).contains(&n) {
            return Err(invalid_params("`spacings` must be 1 to 100"));
        }
        events::progress(0);
        let c = p.pool.chain_id;
        let pool = pool::find(&p.pool)?;
        let s = pool.tick_spacing;
        let here = pool.tick.div_euclid(s) * s;
        let net = |tick: i32| -> Result<i128, Error> {
            Ok(eth_call(c, pool.address, &ticksCall { tick: I24::try_from(tick).unwrap_or_default() })?
                .liquidityNet)
        };
        events::progress(1);
        let range = |lower: i32, liquidity: i128| TickRange {
            tick_lower: lower,
            tick_upper: lower + s,
            price_lower: price_of_tick(lower, &pool),
            price_upper: price_of_tick(lower + s, &pool),
            liquidity: liquidity.max(0).to_string(),
            current: lower == here,
        };
        let mut ranges = vec![range(here, pool.liquidity as i128)];
        let mut l = pool.liquidity as i128;
        for k in 1..=n {
            // Crossing up through a range's lower tick adds its liquidityNet.
            l += net(here + k * s)?;
            ranges.push(range(here + k * s, l));
        }
        let mut l = pool.liquidity as i128;
        for k in 0..n {
            // Crossing down through the current range's lower tick removes it.
            l -= net(here - k * s)?;
            ranges.push(range(here - (k + 1) * s, l));
        }
        ranges.sort_by_key(|r| r.tick_lower);
        Ok(Distribution { pool: pool::reference(&pool), tick: pool.tick, tick_spacing: s, ranges })
    }
}
