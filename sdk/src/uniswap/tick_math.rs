//! Uniswap's tick and liquidity math, ported bit for bit from `TickMath` and `LiquidityAmounts`
//! (the same in V3 and V4); the sidecar's property test holds it to the official SDK's. Plain
//! integers and `alloy-primitives` only, so that the host's valuer compiles this same file
//! (crate `bardo-uniswap-math`) and plugins and host agree to the wei.

use alloy_primitives::{U256, U512};

/// A tick outside `-MAX_TICK..=MAX_TICK`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TickOutOfRange(pub i32);

impl std::fmt::Display for TickOutOfRange {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "tick {} is outside -{MAX_TICK}..={MAX_TICK}", self.0)
    }
}

impl std::error::Error for TickOutOfRange {}

/// The widest ticks Uniswap allows.
pub const MAX_TICK: i32 = 887_272;

/// `TickMath.getSqrtPriceAtTick`, bit for bit: sqrt(1.0001^tick) as a Q64.96, rounded up.
pub fn sqrt_price_at_tick(tick: i32) -> Result<U256, TickOutOfRange> {
    const RATIOS: [u128; 19] = [
        0xfff97272373d413259a46990580e213a,
        0xfff2e50f5f656932ef12357cf3c7fdcc,
        0xffe5caca7e10e4e61c3624eaa0941cd0,
        0xffcb9843d60f6159c9db58835c926644,
        0xff973b41fa98c081472e6896dfb254c0,
        0xff2ea16466c96a3843ec78b326b52861,
        0xfe5dee046a99a2a811c461f1969c3053,
        0xfcbe86c7900a88aedcffc83b479aa3a4,
        0xf987a7253ac413176f2b074cf7815e54,
        0xf3392b0822b70005940c7a398e4b70f3,
        0xe7159475a2c29b7443b29c7fa6e889d9,
        0xd097f3bdfd2022b8845ad8f792aa5825,
        0xa9f746462d870fdf8a65dc1f90e061e5,
        0x70d869a156d2a1b890bb3df62baf32f7,
        0x31be135f97d08fd981231505542fcfa6,
        0x9aa508b5b7a84e1c677de54f3e99bc9,
        0x5d6af8dedb81196699c329225ee604,
        0x2216e584f5fa1ea926041bedfe98,
        0x48a170391f7dc42444e8fa2,
    ];
    let abs = tick.unsigned_abs();
    if abs > MAX_TICK.unsigned_abs() {
        return Err(TickOutOfRange(tick));
    }
    let mut price = if abs & 1 != 0 {
        U256::from(0xfffcb933bd6fad37aa2d162d1a594001u128)
    } else {
        U256::from(1u8) << 128
    };
    for (bit, ratio) in RATIOS.iter().enumerate() {
        if abs & (2 << bit) != 0 {
            price = (price * U256::from(*ratio)) >> 128;
        }
    }
    if tick > 0 {
        price = U256::MAX / price;
    }
    Ok((price + U256::from(u32::MAX)) >> 32)
}

/// `FullMath.mulDiv`: a × b / d, rounded down, without overflowing in between.
fn mul_div(a: U256, b: U256, d: U256) -> U256 {
    let q = U512::from(a) * U512::from(b) / U512::from(d);
    U256::saturating_from(q)
}

/// `LiquidityAmounts.getLiquidityForAmounts`: the most liquidity `amount0` and `amount1` buy
/// between the sqrt prices `a` and `b` at the pool's sqrt price `now`; none above a `uint128`.
pub fn liquidity_for_amounts(now: U256, a: U256, b: U256, amount0: U256, amount1: U256) -> Option<u128> {
    let q96 = U256::from(1u8) << 96;
    let (a, b) = if a > b { (b, a) } else { (a, b) };
    let for0 = |lo: U256, hi: U256| mul_div(amount0, mul_div(lo, hi, q96), hi - lo);
    let for1 = |lo: U256, hi: U256| mul_div(amount1, q96, hi - lo);
    let liquidity = if now <= a {
        for0(a, b)
    } else if now < b {
        for0(now, b).min(for1(a, now))
    } else {
        for1(a, b)
    };
    // The contract's `toUint128` reverts above it.
    u128::try_from(liquidity).ok()
}

/// `LiquidityAmounts.getAmountsForLiquidity`: what `liquidity` between the sqrt prices `a` and
/// `b` holds of token0 and token1 at the pool's sqrt price `now`, rounded down (what
/// withdrawing it pays).
pub fn amounts_for_liquidity(now: U256, a: U256, b: U256, liquidity: u128) -> (U256, U256) {
    let q96 = U256::from(1u8) << 96;
    let (a, b) = if a > b { (b, a) } else { (a, b) };
    let l = U256::from(liquidity);
    let amount0 = |lo: U256, hi: U256| mul_div(l << 96, hi - lo, hi) / lo;
    let amount1 = |lo: U256, hi: U256| mul_div(l, hi - lo, q96);
    if now <= a {
        (amount0(a, b), U256::ZERO)
    } else if now < b {
        (amount0(now, b), amount1(a, now))
    } else {
        (U256::ZERO, amount1(a, b))
    }
}

/// A tick stored in a V4 PositionManager `PositionInfo` word: `| poolId (200) | tickUpper (24) |
/// tickLower (24) | hasSubscriber (8) |`.
pub fn packed_tick(info: U256, offset: usize) -> i32 {
    let raw = ((info >> offset) & U256::from(0xff_ffffu32)).to::<u32>();
    ((raw << 8) as i32) >> 8
}

/// `(tick lower, tick upper)` of a V4 PositionManager `PositionInfo` word.
pub fn position_ticks(info: U256) -> (i32, i32) {
    (packed_tick(info, 8), packed_tick(info, 32))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sqrt_prices_at_ticks_match_tick_math() {
        let at = |t| sqrt_price_at_tick(t).expect("tick").to_string();
        // TickMath.MIN_SQRT_PRICE, 2^96, TickMath.MAX_SQRT_PRICE.
        assert_eq!(at(-MAX_TICK), "4295128739");
        assert_eq!(at(0), "79228162514264337593543950336");
        assert_eq!(at(MAX_TICK), "1461446703485210103287273052203988822378723970342");
        assert!(sqrt_price_at_tick(MAX_TICK + 1).is_err());
        let p = |t| sqrt_price_at_tick(t).expect("tick");
        assert!(p(1) > p(0) && p(-1) < p(0));
        assert_eq!(at(1), "79232123823359799118286999568");
    }

    #[test]
    fn liquidity_is_bounded_by_the_scarcer_token() {
        let (lo, mid, hi) = (
            sqrt_price_at_tick(-600).expect("lo"),
            sqrt_price_at_tick(0).expect("mid"),
            sqrt_price_at_tick(600).expect("hi"),
        );
        let one = U256::from(10u64.pow(18));
        let both = liquidity_for_amounts(mid, lo, hi, one, one).expect("fits");
        assert_eq!(liquidity_for_amounts(mid, lo, hi, one, one * U256::from(2u8)), Some(both));
        assert!(liquidity_for_amounts(mid, lo, hi, one / U256::from(2u8), one) < Some(both));
        // Below the range only token0 counts, above it only token1.
        assert_eq!(
            liquidity_for_amounts(lo, lo, hi, one, U256::ZERO),
            liquidity_for_amounts(lo, lo, hi, one, one)
        );
        assert_eq!(
            liquidity_for_amounts(hi, lo, hi, U256::ZERO, one),
            liquidity_for_amounts(hi, lo, hi, one, one)
        );
    }

    #[test]
    fn amounts_for_liquidity_round_down_and_split_at_the_price() {
        let (lo, mid, hi) = (
            sqrt_price_at_tick(-600).expect("lo"),
            sqrt_price_at_tick(0).expect("mid"),
            sqrt_price_at_tick(600).expect("hi"),
        );
        let one = U256::from(10u64.pow(18));
        let liquidity = liquidity_for_amounts(mid, lo, hi, one, one).expect("fits");
        let (a0, a1) = amounts_for_liquidity(mid, lo, hi, liquidity);
        // Never more than was put in; the scarcer side comes back within a wei or two.
        assert!(a0 <= one && a1 <= one, "{a0} {a1}");
        assert!(a0.max(a1) >= one - U256::from(2u8), "{a0} {a1}");
        assert_eq!(amounts_for_liquidity(lo, lo, hi, liquidity).1, U256::ZERO, "below: token0 only");
        assert_eq!(amounts_for_liquidity(hi, lo, hi, liquidity).0, U256::ZERO, "above: token1 only");
        assert_eq!(
            liquidity_for_amounts(mid, lo, hi, U256::MAX >> 1, U256::MAX >> 1),
            None,
            "over a uint128"
        );
    }
}
