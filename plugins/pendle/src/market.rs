//! Where Pendle lives on each chain, the markets the operator lists, and a market's state. The
//! operator configures `[settings] pendle`: `{"chains": {"31337": {"router", "router_static",
//! "py_lp_oracle", "twap_secs", "markets": {"PT-bvUSDC": {"market", "sy", "pt", "yt", "expiry",
//! "yield_token", "asset"}}}}}` (`yield_token` and `asset` are symbols, for people).

use crate::abi::{Oracle, RouterStatic, exchangeRateCall, readTokensCall};
use alloy_primitives::{Address, I256, U256};
use bardo_sdk::abi::eth_call;
use bardo_sdk::erc20::{self, Token};
use bardo_sdk::errors::{chain_not_supported, invalid_params, not_found};
use bardo_sdk::units::format_units;
use bardo_sdk::{ChainId, Error, chain, settings};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct Book {
    /// PendleRouterV4, where writes go.
    router: Address,
    router_static: Address,
    py_lp_oracle: Address,
    /// The oracle's averaging window, seconds.
    #[serde(default = "default_twap_secs")]
    twap_secs: u32,
    #[serde(default)]
    markets: BTreeMap<String, Listing>,
}

fn default_twap_secs() -> u32 {
    900
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct Listing {
    market: Address,
    sy: Address,
    pt: Address,
    yt: Address,
    expiry: u64,
    /// The vault's symbol, for people.
    #[serde(default, rename = "yield_token")]
    _yield_token: Option<String>,
    /// The asset's symbol: when given, it must be the SY's asset's.
    #[serde(default)]
    asset: Option<String>,
}

/// Pendle on one chain and the operator's markets there.
#[derive(Debug, Clone)]
pub struct Venue {
    pub chain_id: ChainId,
    pub router: Address,
    pub router_static: Address,
    pub oracle: Address,
    pub twap_secs: u32,
    listings: BTreeMap<String, Listing>,
}

/// One listed market, checked against the market's own tokens.
#[derive(Debug, Clone, Serialize)]
pub struct MarketRef {
    /// The operator's name (`PT-bvUSDC`).
    pub name: String,
    /// The market, also its LP token.
    #[serde(serialize_with = "bardo_sdk::abi::checksummed")]
    pub market: Address,
    /// The standardized-yield token.
    pub sy: Token,
    /// The principal token: one unit of the asset at maturity.
    pub pt: Token,
    /// The yield token: the SY's yield until maturity.
    pub yt: Token,
    /// What PT redeems to in value, and what prices are quoted in.
    pub asset: Token,
    /// Maturity, unix seconds.
    pub expiry: u64,
}

impl MarketRef {
    /// The market's LP token (the market itself).
    pub fn lp(&self) -> Token {
        Token { address: self.market, symbol: format!("LP-{}", self.name), decimals: 18 }
    }
}

/// The venue on `chain_id`, from the operator's settings.
pub fn venue(chain_id: ChainId) -> Result<Venue, Error> {
    let Some(book) = settings::of_chain::<Book>(chain_id)? else {
        return Err(chain_not_supported(format!(
            "pendle has no markets on chain {chain_id}; add `[settings] pendle` chains.{chain_id} with `router`, \
             `router_static`, `py_lp_oracle` and `markets`"
        )));
    };
    erc20::require_code(chain_id, book.router_static, "Pendle's static router")?;
    Ok(Venue {
        chain_id,
        router: book.router,
        router_static: book.router_static,
        oracle: book.py_lp_oracle,
        twap_secs: book.twap_secs,
        listings: book.markets,
    })
}

impl Venue {
    /// Every listed market.
    pub fn markets(&self) -> Result<Vec<MarketRef>, Error> {
        self.listings.keys().map(|name| self.find(name)).collect()
    }

    /// A listed market by name (`PT-bvUSDC`, any case) or address.
    pub fn find(&self, market: &str) -> Result<MarketRef, Error> {
        let wanted = market.trim();
        let by_address: Option<Address> = wanted.parse().ok();
        let found = self
            .listings
            .iter()
            .find(|(name, l)| name.eq_ignore_ascii_case(wanted) || by_address == Some(l.market));
        let Some((name, l)) = found else {
            let names: Vec<&str> = self.listings.keys().map(String::as_str).collect();
            return Err(not_found(format!(
                "no Pendle market {wanted:?} is listed on chain {}; the operator's markets: {}",
                self.chain_id,
                names.join(", ")
            )));
        };
        erc20::require_code(self.chain_id, l.market, "Pendle market")?;
        let tokens = eth_call(self.chain_id, l.market, &readTokensCall {})?;
        if (tokens.SY, tokens.PT, tokens.YT) != (l.sy, l.pt, l.yt) {
            return Err(invalid_params(format!(
                "market {name} ({}) holds SY {}, PT {}, YT {}, not the tokens `[settings] pendle` lists; fix the settings",
                l.market, tokens.SY, tokens.PT, tokens.YT
            )));
        }
        let sy = erc20::token(self.chain_id, l.sy)?;
        let asset = erc20::token(self.chain_id, self.asset_of(l.sy)?)?;
        if let Some(listed) = &l.asset
            && !listed.eq_ignore_ascii_case(&asset.symbol)
        {
            return Err(invalid_params(format!(
                "`[settings] pendle` lists market {name}'s asset as {listed}, but its SY's asset is {} ({}); fix the settings",
                asset.symbol, asset.address
            )));
        }
        Ok(MarketRef {
            name: name.clone(),
            market: l.market,
            pt: erc20::token(self.chain_id, l.pt)?,
            yt: erc20::token(self.chain_id, l.yt)?,
            sy,
            asset,
            expiry: l.expiry,
        })
    }

    /// The SY's asset (`assetInfo()`'s address).
    fn asset_of(&self, sy: Address) -> Result<Address, Error> {
        alloy_sol_types::sol! { function assetInfo() external view returns (uint8 assetType, address assetAddress, uint8 assetDecimals); }
        Ok(eth_call(self.chain_id, sy, &assetInfoCall {})?.assetAddress)
    }

    /// `m`'s state at the latest block.
    pub fn state(&self, m: &MarketRef) -> Result<State, Error> {
        let c = self.chain_id;
        let s = eth_call(c, self.router_static, &RouterStatic::getMarketStateCall { market: m.market })?;
        let now = chain::block_timestamp(c, None)?;
        let expired = now >= m.expiry;
        // After maturity the market trades no more: PT is one asset unit, YT nothing.
        let spot = |call: Result<U256, Error>| if expired { Ok(U256::ZERO) } else { call };
        let pt_spot = if expired {
            WAD
        } else {
            eth_call(c, self.router_static, &RouterStatic::getPtToAssetRateCall { market: m.market })?
        };
        let yt_spot =
            spot(eth_call(c, self.router_static, &RouterStatic::getYtToAssetRateCall { market: m.market }))?;
        let lp_spot =
            eth_call(c, self.router_static, &RouterStatic::getLpToAssetRateCall { market: m.market })?;
        let (pt_twap, yt_twap, lp_twap) = self.twap(m)?;
        Ok(State {
            now,
            expired,
            total_pt: positive(s.state.totalPt),
            total_sy: positive(s.state.totalSy),
            total_lp: positive(s.state.totalLp),
            ln_implied_rate: s.state.lastLnImpliedRate,
            ln_fee_rate_root: s.state.lnFeeRateRoot,
            reserve_fee_percent: s.state.reserveFeePercent,
            sy_rate: eth_call(c, m.sy.address, &exchangeRateCall {})?,
            pt_spot,
            yt_spot,
            lp_spot,
            pt_twap,
            yt_twap,
            lp_twap,
        })
    }

    /// PT, YT and LP in the asset, averaged over `twap_secs` by the oracle (WAD each).
    pub fn twap(&self, m: &MarketRef) -> Result<(U256, U256, U256), Error> {
        let (c, o, market, duration) = (self.chain_id, self.oracle, m.market, self.twap_secs);
        Ok((
            eth_call(c, o, &Oracle::getPtToAssetRateCall { market, duration })?,
            eth_call(c, o, &Oracle::getYtToAssetRateCall { market, duration })?,
            eth_call(c, o, &Oracle::getLpToAssetRateCall { market, duration })?,
        ))
    }
}

/// 10^18.
pub const WAD: U256 = U256::from_limbs([1_000_000_000_000_000_000, 0, 0, 0]);

fn positive(v: I256) -> U256 {
    if v.is_negative() { U256::ZERO } else { v.into_raw() }
}

/// A market's state at one block.
#[derive(Debug, Clone, Copy)]
pub struct State {
    pub now: u64,
    pub expired: bool,
    /// Reserves, base units (PT in PT's, SY in SY's) and LP supply.
    pub total_pt: U256,
    pub total_sy: U256,
    pub total_lp: U256,
    /// ln(1 + implied APY), WAD, at the last trade.
    pub ln_implied_rate: U256,
    /// ln(1 + fee rate), WAD, per year to maturity.
    pub ln_fee_rate_root: U256,
    /// The treasury's share of fees, percent.
    pub reserve_fee_percent: U256,
    /// The SY's exchange rate: asset per SY, WAD.
    pub sy_rate: U256,
    /// Asset per PT, YT and LP at the last trade's rate (WAD).
    pub pt_spot: U256,
    pub yt_spot: U256,
    pub lp_spot: U256,
    /// The same, time-weighted by the oracle.
    pub pt_twap: U256,
    pub yt_twap: U256,
    pub lp_twap: U256,
}

/// e^(x / 10^18) − 1 as a percent with four decimals: a rate Pendle keeps as a logarithm.
pub fn ln_to_percent(ln_wad: U256) -> String {
    let x = f64::from(ln_wad) / 1e18;
    format!("{:.4}", (x.exp() - 1.0) * 100.0)
}

/// `v` (WAD) as a decimal.
pub fn wad_decimal(v: U256) -> String {
    format_units(v, 18)
}

/// `amount` base units of a token at `rate` (asset per token, WAD), in asset base units.
pub fn in_asset(amount: U256, rate: U256) -> U256 {
    amount.saturating_mul(rate) / WAD
}
