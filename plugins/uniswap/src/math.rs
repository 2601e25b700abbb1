//! Exact integer math for prices and slippage bounds (no floats anywhere near an amount).

use alloy_primitives::{U256, U512};
use bardo_sdk::Error;
use bardo_sdk::errors::invalid_params;

/// Digits after the point in human prices.
const PRICE_DECIMALS: u32 = 18;

fn pow10(n: u32) -> U512 {
    U512::from(10u8).pow(U512::from(n))
}

/// `num / den` as a decimal string with up to 18 fractional digits.
fn ratio(num: U512, den: U512) -> String {
    if den.is_zero() {
        return "0".into();
    }
    let scaled = num * pow10(PRICE_DECIMALS) / den;
    let s = format!("{scaled:0>width$}", width = PRICE_DECIMALS as usize + 1);
    let (whole, frac) = s.split_at(s.len() - PRICE_DECIMALS as usize);
    let frac = frac.trim_end_matches('0');
    if frac.is_empty() { whole.to_owned() } else { format!("{whole}.{frac}") }
}

/// Human prices of a V3 pool at `sqrt_price_x96`: (token1 per token0, token0 per token1).
pub fn v3_prices(sqrt_price_x96: U256, decimals0: u8, decimals1: u8) -> (String, String) {
    let p2 = U512::from(sqrt_price_x96) * U512::from(sqrt_price_x96);
    let q192 = U512::from(1u8) << 192;
    let (d0, d1) = (pow10(decimals0.into()), pow10(decimals1.into()));
    (ratio(p2 * d0, q192 * d1), ratio(q192 * d1, p2 * d0))
}

/// Human prices of a V2 pair from its reserves: (token1 per token0, token0 per token1).
pub fn v2_prices(reserve0: U256, reserve1: U256, decimals0: u8, decimals1: u8) -> (String, String) {
    let (r0, r1) = (U512::from(reserve0), U512::from(reserve1));
    let (d0, d1) = (pow10(decimals0.into()), pow10(decimals1.into()));
    (ratio(r1 * d0, r0 * d1), ratio(r0 * d1, r1 * d0))
}

/// Slippage tolerance in basis points: 1 (0.01 %) to 5,000 (50 %). Zero would make any price
/// move revert; 100 % would accept any price at all.
pub fn check_slippage(bps: u32) -> Result<(), Error> {
    if bps == 0 || bps > 5_000 {
        return Err(invalid_params(format!(
            "`slippage_bps` {bps} is out of range; use 1 (0.01 %) to 5000 (50 %), typically 50"
        )));
    }
    Ok(())
}

/// The least acceptable amount out: `quoted` less the slippage; refused when it rounds to zero.
pub fn min_out(quoted: U256, bps: u32) -> Result<U256, Error> {
    let min = quoted * U256::from(10_000 - bps) / U256::from(10_000u32);
    if min.is_zero() {
        return Err(invalid_params(
            "the amount is too small: the minimum out rounds to 0; trade a larger amount",
        ));
    }
    Ok(min)
}

/// The most acceptable amount in: `quoted` plus the slippage, rounded up.
pub fn max_in(quoted: U256, bps: u32) -> U256 {
    (quoted * U256::from(10_000 + bps)).div_ceil(U256::from(10_000u32))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prices_are_exact_decimals() {
        // A WETH(18)/USDC(6) pair at 2,000 USDC per WETH.
        let (p, inv) = v2_prices(U256::from(10u64.pow(18)), U256::from(2_000_000_000u64), 18, 6);
        assert_eq!(p, "2000");
        assert_eq!(inv, "0.0005");
        // Price 1 in base units: one base unit of a 6-decimal token0 buys one base unit of an
        // 18-decimal token1, i.e. 1e-12 token1 per token0.
        let sqrt = U256::from(1u8) << 96;
        let (p, inv) = v3_prices(sqrt, 6, 18);
        assert_eq!(p, "0.000000000001");
        assert_eq!(inv, "1000000000000");
    }

    #[test]
    fn slippage_bounds() {
        assert!(check_slippage(0).is_err());
        assert!(check_slippage(10_000).is_err());
        assert!(check_slippage(50).is_ok());
        assert_eq!(min_out(U256::from(1_000_000u32), 50).ok(), Some(U256::from(995_000u32)));
        assert!(min_out(U256::from(1u8), 50).is_err());
        assert_eq!(max_in(U256::from(1_000_000u32), 50), U256::from(1_005_000u32));
        assert_eq!(max_in(U256::from(1u8), 50), U256::from(2u8));
    }
}
