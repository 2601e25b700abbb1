//! The closed forms: a concentrated-liquidity position's holdings and value along a price, its
//! impermanent loss against holding, and its loss-versus-rebalancing rate (Milionis, Moallemi,
//! Roughgarden and Zhang, "Automated Market Making and Loss-Versus-Rebalancing", 2022). Prices
//! are token1 per token0; a range of `(0, ∞)` is a full-range (V2-like) position.

/// A price range; `upper` = infinity for full range.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Range {
    pub lower: f64,
    pub upper: f64,
}

impl Range {
    #[cfg(test)]
    pub const FULL: Range = Range { lower: 0.0, upper: f64::INFINITY };

    pub fn contains(&self, p: f64) -> bool {
        p > self.lower && p < self.upper
    }
}

/// Token0 and token1 held by liquidity `l` at price `p` (the price clamped to the range).
pub fn holdings(l: f64, p: f64, r: Range) -> (f64, f64) {
    let (sa, sb) = (r.lower.sqrt(), r.upper.sqrt());
    let sp = p.sqrt().clamp(sa, sb);
    (l * (1.0 / sp - 1.0 / sb), l * (sp - sa))
}

/// Value in token1 of holdings `(x, y)` at price `p`.
pub fn value(x: f64, y: f64, p: f64) -> f64 {
    x * p + y
}

/// One point of an impermanent-loss path.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct IlPoint {
    pub price: f64,
    /// The position's value, with its value at entry = 1.
    pub value_lp: f64,
    /// The entry holdings' value, held instead, with the same normalisation.
    pub value_hold: f64,
    /// `value_lp / value_hold - 1` (≤ 0): the loss against holding, fees not counted.
    pub il: f64,
    pub in_range: bool,
}

/// Impermanent loss along `path` of a position entered at `entry` over `range`.
pub fn impermanent_loss(entry: f64, range: Range, path: &[f64]) -> Vec<IlPoint> {
    let (x0, y0) = holdings(1.0, entry, range);
    let v0 = value(x0, y0, entry);
    path.iter()
        .map(|&p| {
            let (x, y) = holdings(1.0, p, range);
            let (lp, hold) = (value(x, y, p) / v0, value(x0, y0, p) / v0);
            IlPoint {
                price: p,
                value_lp: lp,
                value_hold: hold,
                il: lp / hold - 1.0,
                in_range: range.contains(p),
            }
        })
        .collect()
}

/// LVR per unit of position value per unit of time in which `sigma` is measured (σ² the
/// variance rate): `σ² √P / (4 (2√P − √Pa − P/√Pb))` in range, 0 out of it (a position out of
/// range holds one asset and is not rebalanced). Full range: σ²/8.
pub fn lvr_rate(sigma: f64, p: f64, r: Range) -> f64 {
    if !r.contains(p) {
        return 0.0;
    }
    let sp = p.sqrt();
    let value_per_l = 2.0 * sp - r.lower.sqrt() - p / r.upper.sqrt();
    sigma * sigma * sp / (4.0 * value_per_l)
}

/// Realized volatility from prices in order: `sqrt(Σ ln(pᵢ/pᵢ₋₁)²)` over the window.
pub fn realized(prices: &[f64]) -> (f64, usize) {
    let sum: f64 = prices.windows(2).map(|w| (w[1] / w[0]).ln().powi(2)).sum();
    (sum.sqrt(), prices.len().saturating_sub(1))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-12 * b.abs().max(1.0)
    }

    #[test]
    fn full_range_il_is_the_v2_formula() {
        for r in [0.25, 0.5, 0.9, 1.0, 1.1, 2.0, 4.0, 10.0] {
            let p = impermanent_loss(2_000.0, Range::FULL, &[2_000.0 * r]);
            assert!(close(p[0].il, 2.0 * r.sqrt() / (1.0 + r) - 1.0), "r = {r}: {}", p[0].il);
        }
        // A 2x move loses 5.72 %.
        let p = impermanent_loss(1.0, Range::FULL, &[2.0]);
        assert!((p[0].il + 0.057_190_958).abs() < 1e-9);
    }

    #[test]
    fn a_narrow_range_loses_more_and_stops_losing_outside() {
        let wide = impermanent_loss(1.0, Range::FULL, &[1.2])[0].il;
        let narrow = impermanent_loss(1.0, Range { lower: 0.9, upper: 1.1 }, &[1.05])[0].il;
        let full_at_same = impermanent_loss(1.0, Range::FULL, &[1.05])[0].il;
        assert!(narrow < full_at_same && full_at_same < 0.0 && wide < 0.0);
        // Above the range it is all token1: its value no longer moves with the price.
        let above = impermanent_loss(1.0, Range { lower: 0.9, upper: 1.1 }, &[1.2, 1.5]);
        assert!(close(above[0].value_lp, above[1].value_lp) && !above[0].in_range);
    }

    #[test]
    fn lvr_is_sigma_squared_over_eight_at_full_range() {
        assert!(close(lvr_rate(0.8, 3_000.0, Range::FULL), 0.08));
        // Concentration multiplies it; outside the range it is zero.
        let r = Range { lower: 2_500.0, upper: 3_500.0 };
        assert!(lvr_rate(0.8, 3_000.0, r) > 0.08 * 5.0);
        assert_eq!(lvr_rate(0.8, 4_000.0, r), 0.0);
    }

    #[test]
    fn realized_volatility_sums_squared_log_returns() {
        let (s, n) = realized(&[100.0, 110.0, 99.0]);
        assert_eq!(n, 2);
        assert!(close(s, ((1.1f64).ln().powi(2) + (0.9f64).ln().powi(2)).sqrt()));
    }
}
