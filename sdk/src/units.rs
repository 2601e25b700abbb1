//! Token amounts as decimal strings in token units ↔ integer base units. Never floats: a
//! float cannot hold 18 decimals of a balance exactly.

use crate::Error;
use crate::errors::invalid_params;
use alloy_primitives::U256;

/// Parse `text` (e.g. `"1.5"`) as an amount of a token with `decimals`, into base units.
/// `field` names the param in errors.
pub fn parse_units(field: &str, text: &str, decimals: u8) -> Result<U256, Error> {
    let bad = |why: &str| {
        invalid_params(format!(
            "`{field}` {text:?} {why}; write a decimal number of token units such as \"1.5\""
        ))
    };
    let t = text.trim();
    if t.starts_with('-') {
        return Err(bad(
            "is negative: amounts are positive token units (which token leaves is the params' to say)",
        ));
    }
    let (whole, frac) = t.split_once('.').unwrap_or((t, ""));
    if whole.is_empty() && frac.is_empty() {
        return Err(bad("is empty"));
    }
    if !whole.chars().chain(frac.chars()).all(|c| c.is_ascii_digit()) {
        return Err(bad("is not a plain decimal number"));
    }
    if frac.len() > decimals as usize {
        return Err(bad(&format!("has more than the token's {decimals} decimals")));
    }
    let digits = format!("{whole}{frac:0<width$}", width = decimals as usize);
    let value = U256::from_str_radix(if digits.is_empty() { "0" } else { &digits }, 10)
        .map_err(|_| bad("is too large"))?;
    Ok(value)
}

/// `amount` base units of a token with `decimals` as a decimal string, trailing zeros trimmed.
pub fn format_units(amount: U256, decimals: u8) -> String {
    let s = amount.to_string();
    let d = decimals as usize;
    if d == 0 {
        return s;
    }
    let padded = format!("{s:0>width$}", width = d + 1);
    let (whole, frac) = padded.split_at(padded.len() - d);
    let frac = frac.trim_end_matches('0');
    if frac.is_empty() { whole.to_owned() } else { format!("{whole}.{frac}") }
}

/// An amount in token units and in base units, as answers show it (`{"amount": "1.5",
/// "base": "1500000"}`).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Amount {
    /// Token units, decimal.
    pub amount: String,
    /// Base units, decimal.
    pub base: String,
}

impl Amount {
    /// `v` base units of a token with `decimals`.
    pub fn of(v: U256, decimals: u8) -> Self {
        Self { amount: format_units(v, decimals), base: v.to_string() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_refuses_what_is_not_exact() {
        assert_eq!(parse_units("a", "1.5", 6).ok(), Some(U256::from(1_500_000)));
        assert_eq!(parse_units("a", "0.000001", 6).ok(), Some(U256::from(1)));
        assert_eq!(parse_units("a", "2", 0).ok(), Some(U256::from(2)));
        assert_eq!(parse_units("a", ".5", 1).ok(), Some(U256::from(5)));
        assert!(parse_units("a", "0.0000001", 6).is_err(), "more decimals than the token has");
        assert!(parse_units("a", "1e6", 6).is_err());
        let negative = parse_units("amount", "-1", 6).expect_err("negative");
        assert!(
            negative.message.contains("is negative") && !negative.message.contains("plain decimal"),
            "{}",
            negative.message
        );
        assert!(parse_units("a", "", 6).is_err());
        assert!(parse_units("a", "1".repeat(90).as_str(), 6).is_err(), "overflows 256 bits");
        assert_eq!(format_units(U256::from(1_500_000), 6), "1.5");
        assert_eq!(format_units(U256::from(1), 6), "0.000001");
        assert_eq!(format_units(U256::ZERO, 18), "0");
        assert_eq!(format_units(U256::from(42), 0), "42");
    }
}
