//! Pendle V2's tokens, valued only in markets the operator lists: PT, YT and a market's LP token
//! at the PT/YT/LP oracle's time-weighted rate in the SY's asset (over `twap_secs`), an SY at its
//! own exchange rate — each times the asset's trusted price. Never the market's spot rate: one
//! trade moves it, and the plan being valued may be that trade.

use super::{Kind, PricingConfig, Valuer, pow10};
use alloy::primitives::{Address, U256, U512};
use bardo_core::scope::Role;
use serde::{Deserialize, Serialize};

alloy::sol! {
    function readTokens() external view returns (address SY, address PT, address YT);
    function assetInfo() external view returns (uint8 assetType, address assetAddress, uint8 assetDecimals);
    function exchangeRate() external view returns (uint256);
    function getPtToAssetRate(address market, uint32 duration) external view returns (uint256);
    function getYtToAssetRate(address market, uint32 duration) external view returns (uint256);
    function getLpToAssetRate(address market, uint32 duration) external view returns (uint256);
    function getRewardTokens() external view returns (address[] memory);
    function yieldToken() external view returns (address);
    function SY() external view returns (address);
    function PT() external view returns (address);
    function factory() external view returns (address);
    function treasury() external view returns (address);
    function getMarketConfig(address market, address router) external view
        returns (address treasury, uint80 overriddenFee, uint8 reserveFeePercent);
}

/// The Pendle markets the operator trusts on a chain, and the oracle that prices their tokens.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PendlePricing {
    /// `PendlePYLpOracle`.
    pub oracle: Address,
    /// The TWAP's window, seconds (the market must keep observations for it).
    pub twap_secs: u32,
    /// The markets whose PT, YT, LP and SY are valued.
    pub markets: Vec<Address>,
}

/// Which of a listed market's tokens a token is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Part {
    Pt,
    Yt,
    Lp,
    Sy,
}

/// A listed market's tokens and its SY's asset (immutable: read once).
#[derive(Debug, Clone, Copy)]
pub(super) struct Tokens {
    sy: Address,
    pt: Address,
    yt: Address,
    asset: Address,
}

impl Valuer {
    /// `token` as one of a listed Pendle market's tokens, if it is one.
    pub(super) fn pendle_kind(
        &self,
        chain: u64,
        config: &PricingConfig,
        token: Address,
    ) -> Result<Option<Kind>, String> {
        let Some(pendle) = &config.pendle else { return Ok(None) };
        for &market in &pendle.markets {
            let t = self.pendle_tokens(chain, market)?;
            let part = match token {
                _ if token == market => Part::Lp,
                _ if token == t.pt => Part::Pt,
                _ if token == t.yt => Part::Yt,
                _ if token == t.sy => Part::Sy,
                _ => continue,
            };
            return Ok(Some(Kind::Pendle { market, part, asset: t.asset }));
        }
        Ok(None)
    }

    fn pendle_tokens(&self, chain: u64, market: Address) -> Result<Tokens, String> {
        if let Some(t) = bardo_core::sync::lock(&self.pendle).get(&(chain, market)) {
            return Ok(*t);
        }
        let r = self.read(chain, market, readTokensCall {})?;
        let asset = self.read(chain, r.SY, assetInfoCall {})?.assetAddress;
        let t = Tokens { sy: r.SY, pt: r.PT, yt: r.YT, asset };
        bardo_core::sync::lock(&self.pendle).insert((chain, market), t);
        Ok(t)
    }

    /// The Pendle markets the operator lists on `chain`.
    pub(crate) fn pendle_markets(&self, chain: u64) -> Vec<Address> {
        let config = self.config(chain).ok().and_then(|c| c.pendle.as_ref());
        config.map(|p| p.markets.clone()).unwrap_or_default()
    }

    /// A Pendle market's PT and YT.
    pub(crate) fn pendle_pt_yt(&self, chain: u64, market: Address) -> Result<(Address, Address), String> {
        let t = self.pendle_tokens(chain, market)?;
        Ok((t.pt, t.yt))
    }

    /// The PT a Pendle YT mints with.
    pub(crate) fn pendle_pt_of_yt(&self, chain: u64, yt: Address) -> Result<Address, String> {
        self.read(chain, yt, PTCall {})
    }

    /// Whether the Pendle contract `holder` (of `role`) keeps `asset` as its business: a market
    /// its SY and PT reserves and the rewards it streams to LPs, an SY the yield-bearing token
    /// it wraps, a YT the SY behind the PT and YT it mints.
    pub(crate) fn pendle_keeps(
        &self,
        chain: u64,
        holder: Address,
        role: Role,
        asset: Address,
    ) -> Result<bool, String> {
        Ok(match role {
            Role::PendleMarket => {
                let t = self.pendle_tokens(chain, holder)?;
                asset == t.sy
                    || asset == t.pt
                    || self.read(chain, holder, getRewardTokensCall {})?.contains(&asset)
            }
            Role::PendleSy => self.read(chain, holder, yieldTokenCall {})? == asset,
            Role::PendleYieldToken => self.read(chain, holder, SYCall {})? == asset,
            _ => false,
        })
    }

    /// Whether `holder` is the treasury of one of `markets` (or of its YT's factory) and `asset`
    /// that market's SY: the share of swap fees and YT interest Pendle's protocol keeps.
    pub(crate) fn pendle_treasury(
        &self,
        chain: u64,
        holder: Address,
        asset: Address,
        markets: impl Iterator<Item = Address>,
    ) -> Result<bool, String> {
        for market in markets {
            let t = self.pendle_tokens(chain, market)?;
            if t.sy != asset {
                continue;
            }
            let market_factory = self.read(chain, market, factoryCall {})?;
            let config =
                self.read(chain, market_factory, getMarketConfigCall { market, router: Address::ZERO })?;
            let yt_factory = self.read(chain, t.yt, factoryCall {})?;
            if holder == config.treasury || holder == self.read(chain, yt_factory, treasuryCall {})? {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// USD per whole `token` (18 decimals) of `part` of `market`: the asset per token (the
    /// oracle's TWAP, or the SY's exchange rate), scaled by both decimals, at the asset's price.
    pub(super) fn pendle_price(
        &self,
        chain: u64,
        config: &PricingConfig,
        (market, part, asset): (Address, Part, Address),
        decimals: u8,
    ) -> Result<(U512, super::Sources), String> {
        let pendle = config.pendle.as_ref().ok_or("no Pendle pricing")?;
        let (oracle, duration) = (pendle.oracle, pendle.twap_secs);
        let rate: U256 = match part {
            Part::Pt => self.read(chain, oracle, getPtToAssetRateCall { market, duration })?,
            Part::Yt => self.read(chain, oracle, getYtToAssetRateCall { market, duration })?,
            Part::Lp => self.read(chain, oracle, getLpToAssetRateCall { market, duration })?,
            Part::Sy => {
                let sy = self.pendle_tokens(chain, market)?.sy;
                self.read(chain, sy, exchangeRateCall {})?
            }
        };
        let asset_decimals = self.decimals(chain, asset)?;
        let (asset_price, sources) = self.priced(chain, config, asset, 0)?;
        // rate: raw asset per raw token, 18 decimals.
        let price = asset_price * U512::from(rate) * pow10(decimals) / (pow10(18) * pow10(asset_decimals));
        Ok((price, sources))
    }
}
