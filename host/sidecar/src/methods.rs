//! The sidecar's methods, typed: integers go as decimal strings (beyond JSON's 2^53) and come
//! back checked.

use crate::{Sidecar, SidecarError};
use alloy_primitives::U256;
use serde_json::{Value, json};

/// A price at a tick: token1 per token0.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TickPrice {
    /// In whole units, 18 significant digits.
    pub price: String,
    /// The exact ratio of base units, numerator over denominator (either may pass 2^256).
    pub numerator: String,
    /// The ratio's denominator.
    pub denominator: String,
}

/// What a position holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PositionAmounts {
    /// Token0 withdrawing it pays (rounded down).
    pub amount0: U256,
    /// Token1 withdrawing it pays.
    pub amount1: U256,
    /// Token0 minting it costs (rounded up).
    pub mint_amount0: U256,
    /// Token1 minting it costs.
    pub mint_amount1: U256,
}

fn field<'a>(method: &str, result: &'a Value, name: &str) -> Result<&'a Value, SidecarError> {
    result.get(name).ok_or_else(|| SidecarError::Protocol(format!("`{method}` answered without `{name}`")))
}

fn uint(method: &str, result: &Value, name: &str) -> Result<U256, SidecarError> {
    field(method, result, name)?.as_str().and_then(|s| U256::from_str_radix(s, 10).ok()).ok_or_else(|| {
        SidecarError::Protocol(format!("`{method}`'s `{name}` is not a uint256 as a decimal string"))
    })
}

fn text(method: &str, result: &Value, name: &str) -> Result<String, SidecarError> {
    field(method, result, name)?
        .as_str()
        .map(str::to_owned)
        .ok_or_else(|| SidecarError::Protocol(format!("`{method}`'s `{name}` is not a string")))
}

impl Sidecar {
    /// `TickMath.getSqrtRatioAtTick`.
    pub fn tick_to_sqrt_price(&self, tick: i32) -> Result<U256, SidecarError> {
        let result = self.call("tick_to_sqrt_price", json!({ "tick": tick }))?;
        uint("tick_to_sqrt_price", &result, "sqrt_price_x96")
    }

    /// `TickMath.getTickAtSqrtRatio`.
    pub fn sqrt_price_to_tick(&self, sqrt_price_x96: U256) -> Result<i32, SidecarError> {
        let result =
            self.call("sqrt_price_to_tick", json!({ "sqrt_price_x96": sqrt_price_x96.to_string() }))?;
        field("sqrt_price_to_tick", &result, "tick")?
            .as_i64()
            .and_then(|t| i32::try_from(t).ok())
            .ok_or_else(|| SidecarError::Protocol("`sqrt_price_to_tick`'s `tick` is not an int24".into()))
    }

    /// The price at `tick` of a pair with these decimals.
    pub fn tick_to_price(&self, tick: i32, decimals0: u8, decimals1: u8) -> Result<TickPrice, SidecarError> {
        let method = "tick_to_price";
        let result =
            self.call(method, json!({ "tick": tick, "decimals0": decimals0, "decimals1": decimals1 }))?;
        Ok(TickPrice {
            price: text(method, &result, "price")?,
            numerator: text(method, &result, "numerator")?,
            denominator: text(method, &result, "denominator")?,
        })
    }

    /// `maxLiquidityForAmounts` as `LiquidityAmounts.sol` computes it (the SDK's imprecise mode);
    /// unbounded: above a `uint128` the contract would revert.
    pub fn liquidity_for_amounts(
        &self,
        sqrt_price_x96: U256,
        (tick_lower, tick_upper): (i32, i32),
        amount0: U256,
        amount1: U256,
    ) -> Result<U256, SidecarError> {
        let params = json!({
            "sqrt_price_x96": sqrt_price_x96.to_string(), "tick_lower": tick_lower, "tick_upper": tick_upper,
            "amount0": amount0.to_string(), "amount1": amount1.to_string(),
        });
        let result = self.call("liquidity_for_amounts", params)?;
        uint("liquidity_for_amounts", &result, "liquidity")
    }

    /// What `liquidity` in the range holds at `sqrt_price_x96` (the SDK's `Position`).
    pub fn position_amounts(
        &self,
        sqrt_price_x96: U256,
        (tick_lower, tick_upper): (i32, i32),
        liquidity: u128,
    ) -> Result<PositionAmounts, SidecarError> {
        let method = "position_amounts";
        let params = json!({
            "sqrt_price_x96": sqrt_price_x96.to_string(), "tick_lower": tick_lower, "tick_upper": tick_upper,
            "liquidity": liquidity.to_string(),
        });
        let result = self.call(method, params)?;
        Ok(PositionAmounts {
            amount0: uint(method, &result, "amount0")?,
            amount1: uint(method, &result, "amount1")?,
            mint_amount0: uint(method, &result, "mint_amount0")?,
            mint_amount1: uint(method, &result, "mint_amount1")?,
        })
    }
}
