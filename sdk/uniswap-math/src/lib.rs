//! Uniswap's tick and liquidity math for the host's valuer and bounds: the one source is
//! bardo-sdk's `src/uniswap/tick_math.rs`, compiled here as well so the host shares it bit for
//! bit without the SDK's guest bindings, while the SDK ships it inside its own package.

#[path = "../../src/uniswap/tick_math.rs"]
mod tick_math;

pub use tick_math::*;
