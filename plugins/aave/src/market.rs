//! Where an Aave V3 market lives on each chain and what its reserves look like. The operator
//! configures `[settings] aave`: `{"chains": {"31337": {"pool_addresses_provider": "0x…",
//! "tokens": [{"symbol", "address"}], "min_health_factor": "1.5"}}}`; Ethereum mainnet's market
//! is built in.

use crate::abi::*;
use alloy_primitives::{Address, U256};
use bardo_sdk::abi::eth_call;
use bardo_sdk::erc20::{self, Token};
use bardo_sdk::errors::{chain_not_supported, invalid_params, not_found};
use bardo_sdk::tokens::{self, Listed};
use bardo_sdk::units::{format_units, parse_units};
use bardo_sdk::{ChainId, Error, settings};
use serde::{Deserialize, Serialize};

pub use bardo_sdk::aave::health_factor;

/// 10^27, Aave's fixed-point unit for rates and indexes.
pub fn ray() -> U256 {
    U256::from(10u64).pow(U256::from(27u64))
}

const SECONDS_PER_YEAR: f64 = 31_536_000.0;

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct Book {
    pool_addresses_provider: Address,
    #[serde(default)]
    tokens: Vec<Listed>,
    /// A borrow or withdraw may not leave the health factor below this (default 1.5).
    #[serde(default = "default_min_health_factor")]
    min_health_factor: String,
}

fn default_min_health_factor() -> String {
    "1.5".into()
}

/// One Aave V3 market: its contracts, the operator's token list and the health-factor floor.
#[derive(Debug, Clone)]
pub struct Market {
    pub chain_id: ChainId,
    pub pool: Address,
    pub oracle: Address,
    pub data: Address,
    pub tokens: Vec<Listed>,
    /// Health factor floor, 18 decimals.
    pub min_health_factor: U256,
    /// Decimals of the oracle's base currency (8 for USD).
    pub base_decimals: u8,
}

/// The market on `chain_id`: the operator's settings first, then the built-in ones.
pub fn market(chain_id: ChainId) -> Result<Market, Error> {
    let book = match (settings::of_chain::<Book>(chain_id)?, chain_id) {
        (Some(book), _) => book,
        (None, 1) => Book {
            pool_addresses_provider: bardo_sdk::aave::MAINNET_ADDRESSES_PROVIDER,
            tokens: tokens::mainnet(),
            min_health_factor: default_min_health_factor(),
        },
        (None, _) => {
            return Err(chain_not_supported(format!(
                "aave has no market on chain {chain_id}; add `[settings] aave` chains.{chain_id}.pool_addresses_provider"
            )));
        }
    };
    let min_health_factor = parse_units("min_health_factor (settings)", &book.min_health_factor, 18)?;
    let provider = book.pool_addresses_provider;
    erc20::require_code(chain_id, provider, "the PoolAddressesProvider")?;
    let oracle = eth_call(chain_id, provider, &getPriceOracleCall {})?;
    let unit = eth_call(chain_id, oracle, &BASE_CURRENCY_UNITCall {})?;
    let base_decimals = (0u8..=36).find(|d| U256::from(10u64).pow(U256::from(*d)) == unit).unwrap_or(8);
    Ok(Market {
        chain_id,
        pool: eth_call(chain_id, provider, &getPoolCall {})?,
        oracle,
        data: eth_call(chain_id, provider, &getPoolDataProviderCall {})?,
        tokens: book.tokens,
        min_health_factor,
        base_decimals,
    })
}

/// A reserve as the read tools report it.
#[derive(Debug, Clone, Serialize)]
pub struct Reserve {
    pub asset: Token,
    #[serde(serialize_with = "bardo_sdk::abi::checksummed")]
    pub a_token: Address,
    #[serde(serialize_with = "bardo_sdk::abi::checksummed")]
    pub variable_debt_token: Address,
    pub active: bool,
    pub frozen: bool,
    pub paused: bool,
    pub borrowing_enabled: bool,
    pub usage_as_collateral_enabled: bool,
    /// Loan to value, basis points.
    pub ltv_bps: u32,
    pub liquidation_threshold_bps: u32,
    pub liquidation_bonus_bps: u32,
    pub reserve_factor_bps: u32,
    /// Yearly, compounded per second, percent (display only).
    pub supply_apy_percent: String,
    pub variable_borrow_apy_percent: String,
    /// Borrowed / supplied, percent (display only).
    pub utilization_percent: String,
    /// Token units.
    pub total_supplied: String,
    pub total_variable_debt: String,
    /// Whole tokens; "0" means no cap.
    pub supply_cap: String,
    pub borrow_cap: String,
    /// Oracle price in the base currency (USD).
    pub price: String,
    /// Ray rates, for exact math.
    #[serde(serialize_with = "decimal")]
    pub liquidity_rate_ray: U256,
    #[serde(serialize_with = "decimal")]
    pub variable_borrow_rate_ray: U256,
}

fn decimal<S: serde::Serializer>(v: &U256, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&v.to_string())
}

/// Percent of a per-second-compounded APR given as a ray.
fn apy_percent(rate: U256) -> String {
    let apr = f64::from(rate) / 1e27;
    let apy = ((apr / SECONDS_PER_YEAR).ln_1p() * SECONDS_PER_YEAR).exp_m1();
    format!("{:.4}", apy * 100.0)
}

fn bps(v: U256) -> u32 {
    v.saturating_to::<u32>()
}

impl Market {
    /// Every reserve's asset address, in the pool's order.
    pub fn reserve_assets(&self) -> Result<Vec<Address>, Error> {
        eth_call(self.chain_id, self.pool, &getReservesListCall {})
    }

    /// Read reserve `asset` in full.
    pub fn reserve(&self, asset: Address) -> Result<Reserve, Error> {
        let c = self.chain_id;
        let token = erc20::token(c, asset)?;
        let cfg = eth_call(c, self.data, &getReserveConfigurationDataCall { asset })?;
        let data = eth_call(c, self.data, &getReserveDataCall { asset })?;
        let caps = eth_call(c, self.data, &getReserveCapsCall { asset })?;
        let tokens = eth_call(c, self.data, &getReserveTokensAddressesCall { asset })?;
        let paused = eth_call(c, self.data, &getPausedCall { asset })?;
        let price = eth_call(c, self.oracle, &getAssetPriceCall { asset })?;
        let debt = data.totalStableDebt + data.totalVariableDebt;
        let utilization = if data.totalAToken.is_zero() {
            0.0
        } else {
            f64::from(debt) / f64::from(data.totalAToken) * 100.0
        };
        Ok(Reserve {
            a_token: tokens.aTokenAddress,
            variable_debt_token: tokens.variableDebtTokenAddress,
            active: cfg.isActive,
            frozen: cfg.isFrozen,
            paused,
            borrowing_enabled: cfg.borrowingEnabled,
            usage_as_collateral_enabled: cfg.usageAsCollateralEnabled,
            ltv_bps: bps(cfg.ltv),
            liquidation_threshold_bps: bps(cfg.liquidationThreshold),
            liquidation_bonus_bps: bps(cfg.liquidationBonus),
            reserve_factor_bps: bps(cfg.reserveFactor),
            supply_apy_percent: apy_percent(data.liquidityRate),
            variable_borrow_apy_percent: apy_percent(data.variableBorrowRate),
            utilization_percent: format!("{utilization:.2}"),
            total_supplied: format_units(data.totalAToken, token.decimals),
            total_variable_debt: format_units(data.totalVariableDebt, token.decimals),
            supply_cap: caps.supplyCap.to_string(),
            borrow_cap: caps.borrowCap.to_string(),
            price: format_units(price, self.base_decimals),
            liquidity_rate_ray: data.liquidityRate,
            variable_borrow_rate_ray: data.variableBorrowRate,
            asset: token,
        })
    }

    /// Resolve an asset param (listed symbol or address) to one of this market's reserves.
    pub fn find(&self, input: &str) -> Result<Reserve, Error> {
        let token = tokens::resolve(self.chain_id, "asset", input, &self.tokens)?;
        let assets = self.reserve_assets()?;
        if !assets.contains(&token.address) {
            let names: Vec<String> = assets
                .iter()
                .map(|a| erc20::token(self.chain_id, *a).map(|t| t.symbol).unwrap_or_else(|_| a.to_string()))
                .collect();
            return Err(not_found(format!(
                "{} ({}) is not an Aave reserve on chain {}; the reserves are {}",
                token.symbol,
                token.address,
                self.chain_id,
                names.join(", ")
            )));
        }
        self.reserve(token.address)
    }

    /// The oracle price of `asset`, base currency units.
    pub fn price(&self, asset: Address) -> Result<U256, Error> {
        eth_call(self.chain_id, self.oracle, &getAssetPriceCall { asset })
    }

    /// `user`'s account across the market.
    pub fn account(&self, user: Address) -> Result<getUserAccountDataReturn, Error> {
        eth_call(self.chain_id, self.pool, &getUserAccountDataCall { user })
    }
}

impl Reserve {
    /// Refuse an inactive or paused reserve, and — for new exposure (`adding`) — a frozen one.
    pub fn require_usable(&self, adding: bool) -> Result<(), Error> {
        let why = if !self.active {
            "is not active"
        } else if self.paused {
            "is paused"
        } else if adding && self.frozen {
            "is frozen (no new supply or borrow; withdraw and repay still work)"
        } else {
            return Ok(());
        };
        Err(invalid_params(format!("the Aave reserve {} {why}; pick another asset", self.asset.symbol)))
    }
}
