//! Uniswap's tick and liquidity math ([`super::tick_math`], which the host's valuer compiles
//! too), its errors as the plugin errors a tool returns.

use crate::Error;
use crate::errors::invalid_params;
use alloy_primitives::U256;

pub use super::tick_math::{MAX_TICK, amounts_for_liquidity, liquidity_for_amounts};

/// `TickMath.getSqrtPriceAtTick`, bit for bit: sqrt(1.0001^tick) as a Q64.96, rounded up; a tick
/// out of range is invalid params.
pub fn sqrt_price_at_tick(tick: i32) -> Result<U256, Error> {
    super::tick_math::sqrt_price_at_tick(tick).map_err(|e| invalid_params(e.to_string()))
}
