//! Where Morpho Blue lives on each chain, the markets the operator lists, and their state with
//! interest accrued to the latest block. The operator configures `[settings] morpho`:
//! `{"chains": {"31337": {"morpho": "0x…", "markets": {"WETH/USDC": {"loan_token",
//! "collateral_token", "oracle", "irm", "lltv", "id"?}}, "min_health_factor": "1.5"}}}`.

use crate::abi::*;
use alloy_primitives::{Address, B256, U256, keccak256};
use alloy_sol_types::SolValue;
use bardo_morpho_math::{self as math, Position, Totals};
use bardo_sdk::abi::eth_call;
use bardo_sdk::erc20::{self, Token};
use bardo_sdk::errors::{chain_not_supported, invalid_params, not_found};
use bardo_sdk::units::{format_units, parse_units};
use bardo_sdk::{ChainId, Error, chain, settings};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct Book {
    morpho: Address,
    #[serde(default)]
    markets: BTreeMap<String, Listing>,
    /// A borrow or collateral withdrawal may not leave the health factor below this.
    #[serde(default = "default_min_health_factor")]
    min_health_factor: String,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct Listing {
    loan_token: Address,
    collateral_token: Address,
    oracle: Address,
    irm: Address,
    lltv: U256,
    #[serde(default)]
    id: Option<B256>,
}

fn default_min_health_factor() -> String {
    "1.5".into()
}

/// Morpho Blue on one chain and the operator's markets there.
#[derive(Debug, Clone)]
pub struct Venue {
    pub chain_id: ChainId,
    pub morpho: Address,
    listings: BTreeMap<String, Listing>,
    /// Health factor floor, WAD.
    pub min_health_factor: U256,
}

/// One listed market: its name, id, parameters and tokens.
#[derive(Debug, Clone, Serialize)]
pub struct MarketRef {
    /// The operator's name (`WETH/USDC`: collateral / loan).
    pub name: String,
    pub id: B256,
    /// What is lent and borrowed.
    pub loan: Token,
    /// What secures a borrow.
    pub collateral: Token,
    #[serde(serialize_with = "bardo_sdk::abi::checksummed")]
    pub oracle: Address,
    #[serde(serialize_with = "bardo_sdk::abi::checksummed")]
    pub irm: Address,
    /// Liquidation loan-to-value, e.g. `86` (%).
    pub lltv_percent: String,
    #[serde(skip)]
    pub lltv: U256,
}

impl MarketRef {
    pub fn params(&self) -> MarketParams {
        MarketParams {
            loanToken: self.loan.address,
            collateralToken: self.collateral.address,
            oracle: self.oracle,
            irm: self.irm,
            lltv: self.lltv,
        }
    }
}

/// A market's state at the latest block: totals with interest accrued to it, the IRM's rate and
/// the oracle's price.
#[derive(Debug, Clone, Copy)]
pub struct State {
    /// Accrued to `now`.
    pub totals: Totals,
    /// Per second, WAD, at the accrued totals.
    pub rate: U256,
    /// The collateral's price in the loan token, scaled 10^36.
    pub price: U256,
    /// The latest block's timestamp.
    pub now: u64,
}

/// Seconds of interest a plan allows for between planning and execution.
pub const DRIFT_SECS: u64 = 300;

impl State {
    /// The totals by the time a plan may land: `DRIFT_SECS` later at twice today's rate, so
    /// that a rate that rises meanwhile stays inside what a plan declares.
    pub fn late(&self) -> Totals {
        self.totals.accrued(
            self.rate.saturating_mul(U256::from(2u8)).saturating_add(U256::from(1u8)),
            self.now + DRIFT_SECS,
        )
    }
}

/// The venue on `chain_id`, from the operator's settings.
pub fn venue(chain_id: ChainId) -> Result<Venue, Error> {
    let Some(book) = settings::of_chain::<Book>(chain_id)? else {
        return Err(chain_not_supported(format!(
            "morpho has no markets on chain {chain_id}; add `[settings] morpho` chains.{chain_id} with `morpho` and `markets`"
        )));
    };
    let min_health_factor = parse_units("min_health_factor (settings)", &book.min_health_factor, 18)?;
    erc20::require_code(chain_id, book.morpho, "Morpho Blue")?;
    Ok(Venue { chain_id, morpho: book.morpho, listings: book.markets, min_health_factor })
}

impl Venue {
    /// Every listed market.
    pub fn markets(&self) -> Result<Vec<MarketRef>, Error> {
        self.listings.keys().map(|name| self.find(name)).collect()
    }

    /// A listed market by name (`WETH/USDC`, any case) or id.
    pub fn find(&self, market: &str) -> Result<MarketRef, Error> {
        let wanted = market.trim();
        let by_id: Option<B256> = wanted.parse().ok();
        let found = self.listings.iter().find(|(name, l)| {
            name.eq_ignore_ascii_case(wanted) || by_id.is_some_and(|id| id == market_id(l))
        });
        let Some((name, listing)) = found else {
            let names: Vec<&str> = self.listings.keys().map(String::as_str).collect();
            return Err(not_found(format!(
                "no Morpho market {wanted:?} is listed on chain {}; the operator's markets: {}",
                self.chain_id,
                names.join(", ")
            )));
        };
        let id = market_id(listing);
        if listing.id.is_some_and(|stated| stated != id) {
            return Err(invalid_params(format!(
                "the settings give market {name} the id {}, but its parameters hash to {id}; fix `[settings] morpho`",
                listing.id.unwrap_or_default()
            )));
        }
        let on_chain = eth_call(self.chain_id, self.morpho, &idToMarketParamsCall { id })?;
        if on_chain.loanToken != listing.loan_token || on_chain.lltv != listing.lltv {
            return Err(not_found(format!(
                "market {name} ({id}) has not been created on Morpho at {}",
                self.morpho
            )));
        }
        Ok(MarketRef {
            name: name.clone(),
            id,
            loan: erc20::token(self.chain_id, listing.loan_token)?,
            collateral: erc20::token(self.chain_id, listing.collateral_token)?,
            oracle: listing.oracle,
            irm: listing.irm,
            lltv_percent: format_units(listing.lltv * U256::from(100u8), 18),
            lltv: listing.lltv,
        })
    }

    /// `m`'s state at the latest block.
    pub fn state(&self, m: &MarketRef) -> Result<State, Error> {
        let c = self.chain_id;
        let raw = eth_call(c, self.morpho, &marketCall { id: m.id })?;
        let stored = Totals {
            supply_assets: U256::from(raw.totalSupplyAssets),
            supply_shares: U256::from(raw.totalSupplyShares),
            borrow_assets: U256::from(raw.totalBorrowAssets),
            borrow_shares: U256::from(raw.totalBorrowShares),
            last_update: u64::try_from(raw.lastUpdate).unwrap_or(u64::MAX),
            fee: U256::from(raw.fee),
        };
        let now = chain::block_timestamp(c, None)?;
        // Morpho accrues at the rate of the totals it last stored.
        let rate = self.rate(m, &stored)?;
        let totals = stored.accrued(rate, now);
        let rate = self.rate(m, &totals)?;
        let price = eth_call(c, m.oracle, &priceCall {})?;
        Ok(State { totals, rate, price, now })
    }

    fn rate(&self, m: &MarketRef, t: &Totals) -> Result<U256, Error> {
        if m.irm.is_zero() {
            return Ok(U256::ZERO);
        }
        let market = Market {
            totalSupplyAssets: t.supply_assets.saturating_to(),
            totalSupplyShares: t.supply_shares.saturating_to(),
            totalBorrowAssets: t.borrow_assets.saturating_to(),
            totalBorrowShares: t.borrow_shares.saturating_to(),
            lastUpdate: u128::from(t.last_update),
            fee: t.fee.saturating_to(),
        };
        eth_call(self.chain_id, m.irm, &borrowRateViewCall { marketParams: m.params(), market })
    }

    /// `user`'s position in `m`.
    pub fn position(&self, m: &MarketRef, user: Address) -> Result<Position, Error> {
        let p = eth_call(self.chain_id, self.morpho, &positionCall { id: m.id, user })?;
        Ok(Position {
            supply_shares: p.supplyShares,
            borrow_shares: U256::from(p.borrowShares),
            collateral: U256::from(p.collateral),
        })
    }
}

fn market_id(l: &Listing) -> B256 {
    keccak256((l.loan_token, l.collateral_token, l.oracle, l.irm, l.lltv).abi_encode())
}

/// A WAD for people (`1.234567`), `infinite` for `U256::MAX`.
pub fn wad(v: U256) -> String {
    if v == U256::MAX { "infinite".into() } else { format_units(v, 18) }
}

/// The price at which the position could be liquidated, in loan-token units per collateral
/// token; none without debt or collateral.
pub fn liquidation_price(p: &Position, t: &Totals, m: &MarketRef) -> Option<String> {
    let debt = p.borrow_assets(t);
    if debt.is_zero() || p.collateral.is_zero() {
        return None;
    }
    // debt = collateral · price / 10^36 · lltv → price = debt · 10^36 / (collateral · lltv).
    let scaled = math::mul_div_up(debt, math::oracle_price_scale(), math::w_mul_down(p.collateral, m.lltv));
    Some(oracle_price_units(scaled, m))
}

/// An oracle price (10^36 scale, raw units) as loan-token units per whole collateral token.
pub fn oracle_price_units(price: U256, m: &MarketRef) -> String {
    // raw loan per raw collateral · 10^36 → loan units per collateral unit: × 10^colDec / 10^36,
    // in loan decimals.
    let per_collateral = math::mul_div_down(
        price,
        U256::from(10u64).pow(U256::from(m.collateral.decimals)),
        math::oracle_price_scale(),
    );
    format_units(per_collateral, m.loan.decimals)
}
