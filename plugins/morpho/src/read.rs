//! The read tools: the listed markets, one market, an account's position, and previews of
//! assets ↔ shares.

use crate::market::{MarketRef, State, Venue, liquidation_price, oracle_price_units, venue, wad};
use alloy_primitives::U256;
use bardo_morpho_math::{self as math, Position};
use bardo_sdk::abi::account_or_wallet;
use bardo_sdk::errors::invalid_params;
use bardo_sdk::units::{format_units, parse_units};
use bardo_sdk::{
    Category, ChainId, ChainParams, Error, Phase, ReadTool, TickBudget, ToolDef, events, guidelines, tool_def,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

const SECONDS_PER_YEAR: u64 = 31_536_000;

/// Params naming one market.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MarketParams {
    /// Chain id.
    pub chain_id: ChainId,
    /// A listed market: its name (`WETH/USDC`, collateral/loan) or id (`0x…`).
    pub market: String,
}

/// Params naming a market and an account.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PositionParams {
    /// Chain id.
    pub chain_id: ChainId,
    /// A listed market: its name (`WETH/USDC`) or id.
    pub market: String,
    /// The account; default: the host's wallet.
    #[serde(default)]
    pub user: Option<String>,
}

fn def<P: JsonSchema>(name: &str, description: &str, snippet: &str, steps: &[&str]) -> ToolDef {
    ToolDef {
        tick_budget: TickBudget::Medium,
        progress_steps: steps.iter().map(|s| (*s).to_owned()).collect(),
        prompt_snippet: snippet.into(),
        prompt_guidelines: guidelines(&[(
            Phase::Defensive,
            "Check the health factor and the distance to liquidation before and after any Morpho action.",
        )]),
        ..tool_def::<P>(name, description, Category::Lending)
    }
}

/// A market with its state.
#[derive(Debug, Serialize)]
pub struct MarketInfo {
    #[serde(flatten)]
    pub market: MarketRef,
    /// Token units of the loan token, interest accrued to the latest block.
    pub total_supply: String,
    pub total_borrow: String,
    /// What can be borrowed or withdrawn now: supply minus borrow.
    pub liquidity: String,
    /// Percent.
    pub utilization: String,
    /// Yearly, percent, not compounded: the IRM's rate now.
    pub borrow_apr: String,
    /// Borrow APR × utilization × (1 − fee).
    pub supply_apr: String,
    /// Percent of interest the protocol keeps.
    pub fee: String,
    /// The oracle's price: loan-token units per whole collateral token.
    pub oracle_price: String,
    /// Raw, scaled 10^36.
    pub oracle_price_raw: String,
    /// Base units and shares, for exact conversions.
    pub total_supply_assets: String,
    pub total_supply_shares: String,
    pub total_borrow_assets: String,
    pub total_borrow_shares: String,
}

fn percent(wad_value: U256) -> String {
    format_units(wad_value * U256::from(100u8), 18)
}

fn info(m: MarketRef, s: &State) -> MarketInfo {
    let t = &s.totals;
    let dec = m.loan.decimals;
    let borrow_apr = s.rate * U256::from(SECONDS_PER_YEAR);
    let supply_apr =
        math::w_mul_down(math::w_mul_down(borrow_apr, t.utilization()), math::WAD.saturating_sub(t.fee));
    MarketInfo {
        total_supply: format_units(t.supply_assets, dec),
        total_borrow: format_units(t.borrow_assets, dec),
        liquidity: format_units(t.supply_assets.saturating_sub(t.borrow_assets), dec),
        utilization: percent(t.utilization()),
        borrow_apr: percent(borrow_apr),
        supply_apr: percent(supply_apr),
        fee: percent(t.fee),
        oracle_price: oracle_price_units(s.price, &m),
        oracle_price_raw: s.price.to_string(),
        total_supply_assets: t.supply_assets.to_string(),
        total_supply_shares: t.supply_shares.to_string(),
        total_borrow_assets: t.borrow_assets.to_string(),
        total_borrow_shares: t.borrow_shares.to_string(),
        market: m,
    }
}

pub struct GetMarkets;

impl ReadTool for GetMarkets {
    const NAME: &'static str = "morpho_get_markets";
    type Params = ChainParams;
    type Output = Vec<MarketInfo>;

    fn def() -> ToolDef {
        def::<ChainParams>(
            Self::NAME,
            "Lists the Morpho Blue markets the operator lists on a chain: loan and collateral token, \
             oracle, IRM, LLTV, totals with interest to the latest block, liquidity, utilization, \
             borrow and supply APR, and the oracle's price. Reads only; markets nobody listed are \
             never shown (anyone can create one, with any oracle).",
            "morpho_get_markets: the operator's Morpho markets with rates, utilization and prices",
            &["read the venue", "read each market"],
        )
    }

    fn run(p: ChainParams) -> Result<Vec<MarketInfo>, Error> {
        let v = venue(p.chain_id)?;
        events::progress(0);
        let markets = v.markets()?;
        events::progress(1);
        markets
            .into_iter()
            .map(|m| {
                let s = v.state(&m)?;
                Ok(info(m, &s))
            })
            .collect()
    }
}

pub struct GetMarket;

impl ReadTool for GetMarket {
    const NAME: &'static str = "morpho_get_market";
    type Params = MarketParams;
    type Output = MarketInfo;

    fn def() -> ToolDef {
        def::<MarketParams>(
            Self::NAME,
            "One Morpho Blue market in full: parameters (tokens, oracle, IRM, LLTV, id), totals in \
             token units and raw assets and shares, liquidity, utilization, borrow and supply APR, \
             fee and the oracle's price. A market the operator does not list is a not-found error \
             naming the listed ones.",
            "morpho_get_market: one Morpho market's parameters, totals, rates and price",
            &["read the market"],
        )
    }

    fn run(p: MarketParams) -> Result<MarketInfo, Error> {
        let v = venue(p.chain_id)?;
        let m = v.find(&p.market)?;
        let s = v.state(&m)?;
        Ok(info(m, &s))
    }
}

/// An account's position in one market.
#[derive(Debug, Serialize)]
pub struct PositionInfo {
    pub market: String,
    #[serde(serialize_with = "bardo_sdk::abi::checksummed")]
    pub user: alloy_primitives::Address,
    /// Loan-token units, interest included.
    pub supplied: String,
    pub borrowed: String,
    /// Collateral-token units.
    pub collateral: String,
    /// The most the account could owe with its collateral (at the LLTV).
    pub max_borrow: String,
    /// Max borrow over debt; `infinite` with no debt; under 1 is liquidatable.
    pub health_factor: String,
    /// The collateral price (loan units per collateral token) at which it could be liquidated.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub liquidation_price: Option<String>,
    /// How far the collateral's price may fall before liquidation, percent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub distance_to_liquidation: Option<String>,
    /// The operator's floor for borrows and collateral withdrawals.
    pub min_health_factor: String,
    pub supply_shares: String,
    pub borrow_shares: String,
    pub collateral_base: String,
}

pub fn position_info(
    v: &Venue,
    m: &MarketRef,
    s: &State,
    user: alloy_primitives::Address,
    p: &Position,
) -> PositionInfo {
    let t = &s.totals;
    let hf = math::health_factor(p, t, s.price, m.lltv);
    let distance = (hf != U256::MAX && !hf.is_zero())
        .then(|| percent(math::WAD.saturating_sub(math::w_div_up(math::WAD, hf))));
    PositionInfo {
        market: m.name.clone(),
        user,
        supplied: format_units(p.supply_assets(t), m.loan.decimals),
        borrowed: format_units(p.borrow_assets(t), m.loan.decimals),
        collateral: format_units(p.collateral, m.collateral.decimals),
        max_borrow: format_units(math::max_borrow(p.collateral, s.price, m.lltv), m.loan.decimals),
        health_factor: wad(hf),
        liquidation_price: liquidation_price(p, t, m),
        distance_to_liquidation: distance,
        min_health_factor: wad(v.min_health_factor),
        supply_shares: p.supply_shares.to_string(),
        borrow_shares: p.borrow_shares.to_string(),
        collateral_base: p.collateral.to_string(),
    }
}

pub struct GetPosition;

impl ReadTool for GetPosition {
    const NAME: &'static str = "morpho_get_position";
    type Params = PositionParams;
    type Output = PositionInfo;

    fn def() -> ToolDef {
        def::<PositionParams>(
            Self::NAME,
            "An account's position in one Morpho Blue market: supplied and borrowed (interest to the \
             latest block), collateral, the most it could borrow, the health factor (under 1 is \
             liquidatable), the liquidation price and how far the collateral's price may fall \
             before it. Defaults to the host's wallet.",
            "morpho_get_position: supply, debt, collateral and health of a Morpho position",
            &["read the market", "read the position"],
        )
    }

    fn run(p: PositionParams) -> Result<PositionInfo, Error> {
        let v = venue(p.chain_id)?;
        let m = v.find(&p.market)?;
        let user = account_or_wallet(p.chain_id, p.user.as_deref(), "user")?;
        events::progress(0);
        let s = v.state(&m)?;
        events::progress(1);
        let position = v.position(&m, user)?;
        Ok(position_info(&v, &m, &s, user, &position))
    }
}

/// What a preview converts.
#[derive(Debug, Clone, Copy, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Side {
    /// Lending: supply and withdraw.
    Supply,
    /// Debt: borrow and repay.
    Borrow,
}

/// Params of a preview: an amount of assets or of shares on one side of a market.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PreviewParams {
    /// Chain id.
    pub chain_id: ChainId,
    /// A listed market: its name (`WETH/USDC`) or id.
    pub market: String,
    /// `supply` (lend, withdraw) or `borrow` (borrow, repay).
    pub side: Side,
    /// Loan-token units (`"1000.5"`); or give `shares`.
    #[serde(default)]
    pub assets: Option<String>,
    /// Shares, a decimal integer; or give `assets`.
    #[serde(default)]
    pub shares: Option<String>,
}

/// Both conversions each way, rounded as Morpho rounds each action.
#[derive(Debug, Serialize)]
pub struct PreviewOut {
    pub market: String,
    pub side: Side,
    /// The assets given, or what the shares are worth (token units).
    pub assets: String,
    pub assets_base: String,
    /// Shares for the assets, or the shares given: as a supply (or repay) mints (burns) them,
    /// rounded down; and as a withdrawal (or borrow) burns (mints) them, rounded up.
    pub shares_down: String,
    pub shares_up: String,
    /// Assets for the shares, rounded down (a withdrawal or borrow of shares pays this) and up
    /// (a supply or repay of shares costs this).
    pub assets_down: String,
    pub assets_up: String,
}

pub struct Preview;

impl ReadTool for Preview {
    const NAME: &'static str = "morpho_preview";
    type Params = PreviewParams;
    type Output = PreviewOut;

    fn def() -> ToolDef {
        def::<PreviewParams>(
            Self::NAME,
            "Converts between assets and shares on one side of a Morpho Blue market (supply or \
             borrow) at its totals with interest accrued to the latest block, rounded the way \
             Morpho rounds each action: what a supply of assets mints, what a borrow of shares \
             pays, what a repay of shares costs. Give `assets` or `shares`.",
            "morpho_preview: Morpho assets <-> shares for a supply, withdraw, borrow or repay",
            &["read the market"],
        )
    }

    fn run(p: PreviewParams) -> Result<PreviewOut, Error> {
        let v = venue(p.chain_id)?;
        let m = v.find(&p.market)?;
        let s = v.state(&m)?;
        let t = &s.totals;
        let (total_assets, total_shares) = match p.side {
            Side::Supply => (t.supply_assets, t.supply_shares),
            Side::Borrow => (t.borrow_assets, t.borrow_shares),
        };
        let (assets, shares_down, shares_up) = match (&p.assets, &p.shares) {
            (Some(a), None) => {
                let assets = parse_units("assets", a, m.loan.decimals)?;
                let down = math::to_shares_down(assets, total_assets, total_shares);
                (assets, down, math::to_shares_up(assets, total_assets, total_shares))
            }
            (None, Some(sh)) => {
                let shares: U256 =
                    sh.trim().parse().map_err(|_| invalid_params("`shares` must be a decimal integer"))?;
                (math::to_assets_down(shares, total_assets, total_shares), shares, shares)
            }
            _ => return Err(invalid_params("give exactly one of `assets` and `shares`")),
        };
        let shares = if p.assets.is_some() { shares_down } else { shares_up };
        Ok(PreviewOut {
            market: m.name.clone(),
            side: p.side,
            assets: format_units(assets, m.loan.decimals),
            assets_base: assets.to_string(),
            shares_down: shares_down.to_string(),
            shares_up: shares_up.to_string(),
            assets_down: math::to_assets_down(shares, total_assets, total_shares).to_string(),
            assets_up: math::to_assets_up(shares, total_assets, total_shares).to_string(),
        })
    }
}
