//! Slippage bounds a plan sets on chain: a minimum out below the quote, a maximum in above it.
//! Integer math only (no floats anywhere near an amount).

use crate::Error;
use crate::errors::invalid_params;
use alloy_primitives::U256;

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
