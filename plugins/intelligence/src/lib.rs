//! Analytics tools for Bardo (read-only): impermanent loss of a position or a range over a
//! price path, loss-versus-rebalancing, and a Uniswap V3 pool's realized volatility, fee APR and
//! liquidity distribution from its own swaps and ticks, and the price impact of one trade size
//! across its venues. The formulas are in `curve`; the pool
//! reads in `pool`. Configured like the uniswap plugin (`[settings] intelligence`: the same
//! `{"chains": {...}}` book; Ethereum mainnet built in).

mod curve;
mod pool;
mod range;
mod tools;
mod venues;

use range::OptimizeLpRange;
use tools::{FeeAprTool, ImpermanentLoss, LiquidityDistribution, Lvr, RealizedVolatility};
use venues::CompareVenues;

bardo_sdk::plugin! {
    name: "intelligence",
    read: [ImpermanentLoss, Lvr, RealizedVolatility, FeeAprTool, LiquidityDistribution, CompareVenues, OptimizeLpRange],
}
