//! Exact integer math for prices and slippage bounds (no floats anywhere near an amount); the
//! tick and liquidity math is the sdk's.

pub use bardo_sdk::slippage::{check_slippage, max_in, min_out};
pub use bardo_sdk::uniswap::math::{MAX_TICK, liquidity_for_amounts, sqrt_price_at_tick};
pub use bardo_sdk::uniswap::{v2_prices, v3_prices};
