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

/// What `amount0` and `amount1` are worth in token1 at the sqrt price `now` (Q64.96), exact.
fn worth(now: U256, amount0: U256, amount1: U256) -> alloy_primitives::U512 {
    use alloy_primitives::U512;
    let now = U512::from(now);
    ((U512::from(amount0) * now * now) >> 192) + U512::from(amount1)
}

/// The liquidity between the sqrt prices `a` and `b` whose amounts at `now` are worth what
/// `amount0` and `amount1` are worth at `now` — a range moved without adding or taking value,
/// whatever ratio the new range needs. None when it buys nothing or passes a `uint128`.
pub fn liquidity_for_value(now: U256, a: U256, b: U256, amount0: U256, amount1: U256) -> Option<u128> {
    // The amounts of a reference liquidity, scaled to the value: the position math is linear.
    let reference: u128 = 1 << 96;
    let (r0, r1) = amounts_for_liquidity(now, a, b, reference);
    let per = worth(now, r0, r1);
    if per.is_zero() {
        return None;
    }
    let l = worth(now, amount0, amount1) * alloy_primitives::U512::from(reference) / per;
    u128::try_from(l).ok().filter(|l| *l > 0)
}

/// A range about `width` ticks wide centred on `tick`, its ends multiples of `spacing` within
/// the widest ticks; at least one spacing each side.
pub fn centred_range(tick: i32, width: u32, spacing: i32) -> Result<(i32, i32), Error> {
    if spacing <= 0 {
        return Err(invalid_params(format!("tick spacing {spacing} must be positive")));
    }
    let half = i32::try_from(width / 2).unwrap_or(MAX_TICK).min(MAX_TICK);
    let half = ((half + spacing - 1) / spacing).max(1) * spacing;
    let centre = tick.div_euclid(spacing) * spacing;
    let edge = MAX_TICK / spacing * spacing;
    Ok(((centre - half).max(-edge), (centre + spacing + half).min(edge)))
}

/// A range's fee growth per unit of liquidity now (`TickLibrary.getFeeGrowthInside`, wrapping
/// as the contract's unchecked arithmetic does): from the pool's `global` growth and the lower
/// and upper ticks' `feeGrowthOutside`, with the pool at `tick`.
pub fn fee_growth_inside(ticks: (i32, i32), tick: i32, global: U256, lower: U256, upper: U256) -> U256 {
    let below = if tick >= ticks.0 { lower } else { global.wrapping_sub(lower) };
    let above = if tick < ticks.1 { upper } else { global.wrapping_sub(upper) };
    global.wrapping_sub(below).wrapping_sub(above)
}

/// What a position of `liquidity` earned since its growth was last `inside_last`
/// (`PositionLibrary.update`): `(inside − last) × liquidity / 2^128`, rounded down.
pub fn fees_earned(inside: U256, inside_last: U256, liquidity: u128) -> U256 {
    let growth = alloy_primitives::U512::from(inside.wrapping_sub(inside_last));
    U256::saturating_from((growth * alloy_primitives::U512::from(liquidity)) >> 128)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(t: i32) -> U256 {
        sqrt_price_at_tick(t).expect("tick")
    }

    #[test]
    fn a_moved_range_keeps_the_value_in_any_ratio() {
        let one = U256::from(10u64.pow(18));
        // Everything in token1 (a position left below the price), moved around the price.
        let l = liquidity_for_value(at(0), at(-600), at(600), U256::ZERO, one).expect("buys");
        let (a0, a1) = amounts_for_liquidity(at(0), at(-600), at(600), l);
        let worth = a0 + a1; // price 1: token0 and token1 are worth the same
        assert!(worth <= one && worth >= one - U256::from(4u8), "{a0} + {a1}");
        assert!(a0 > U256::ZERO && a1 > U256::ZERO, "both sides");
        // A range above the price holds token0 only: the value all in token0.
        let l = liquidity_for_value(at(0), at(60), at(600), one, one).expect("buys");
        let (a0, a1) = amounts_for_liquidity(at(0), at(60), at(600), l);
        assert_eq!(a1, U256::ZERO);
        assert!(a0 <= one * U256::from(2u8) && a0 >= one * U256::from(2u8) - U256::from(4u8), "{a0}");
        assert_eq!(liquidity_for_value(at(0), at(-60), at(60), U256::ZERO, U256::ZERO), None);
    }

    #[test]
    fn fees_inside_a_range_are_the_growth_outside_its_ticks_taken_away() {
        let q128 = U256::from(1u8) << 128;
        let (global, lower, upper) = (U256::from(1000u32), U256::from(100u32), U256::from(300u32));
        // In range: below is the lower tick's outside, above the upper's.
        assert_eq!(fee_growth_inside((-60, 60), 0, global, lower, upper), U256::from(600u32));
        // Below the range the lower tick's outside is the growth above it: inside is what grew
        // above the lower tick less what grew above the upper.
        let (above_lower, above_upper) = (U256::from(300u32), U256::from(100u32));
        assert_eq!(fee_growth_inside((-60, 60), -100, global, above_lower, above_upper), U256::from(200u32));
        // Wrapping as the contract does: a tick's outside may exceed the global it was set from.
        let wrapped = fee_growth_inside((-60, 60), 0, U256::from(5u8), U256::from(10u8), U256::ZERO);
        assert_eq!(wrapped, U256::MAX - U256::from(4u8));
        assert_eq!(fees_earned(q128 * U256::from(3u8), q128, 7), U256::from(14u8));
        assert_eq!(fees_earned(U256::ZERO, U256::MAX, 1 << 64), U256::ZERO, "2^64 / 2^128 rounds down");
    }

    #[test]
    fn centred_ranges_straddle_the_tick_on_the_spacing() {
        assert_eq!(centred_range(0, 1200, 60).expect("range"), (-600, 660));
        assert_eq!(centred_range(-1, 1200, 60).expect("range"), (-660, 600));
        assert_eq!(centred_range(125, 10, 60).expect("range"), (60, 240), "one spacing each side at least");
        let (lo, hi) = centred_range(0, u32::MAX, 60).expect("range");
        assert_eq!((lo, hi), (-887_220, 887_220));
        assert!(centred_range(0, 100, 0).is_err());
    }
}
