//! Exact integer math for prices and slippage bounds (no floats anywhere near an amount); the
//! tick and liquidity math is the sdk's.

pub use bardo_sdk::slippage::{check_slippage, max_in, min_out};
pub use bardo_sdk::uniswap::math::{
    MAX_TICK, amounts_for_liquidity, centred_range, fee_growth_inside, fees_earned, liquidity_for_amounts,
    liquidity_for_value, sqrt_price_at_tick,
};
pub use bardo_sdk::uniswap::{v2_prices, v3_prices};
