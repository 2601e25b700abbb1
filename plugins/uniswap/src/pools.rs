//! Finding pools through the factories and reading their state (shared: `bardo_sdk::uniswap::pools`).

pub use bardo_sdk::uniswap::Version;
pub use bardo_sdk::uniswap::pools::*;
