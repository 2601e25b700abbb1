//! `intel_optimize_lp_range`: which range to provide liquidity over in a Uniswap V3 pool, from
//! what the pool did over a window — its realized volatility and the fees its swaps paid — as
//! numbers an agent can act on: for ranges of a few widths around the price (in standard
//! deviations of the price over the horizon) the ticks, the chance the price ends the horizon
//! inside, the fee APR a position of `capital` would earn (its share of the liquidity in range
//! times the fees, while in range), the impermanent loss expected at the horizon, the LVR rate,
//! and the best of them by fees less loss.
//!
//! The model, said plainly: the price a driftless lognormal with the realized volatility; the
//! window's fees a rate that goes on; the liquidity in range the pool's now. Its answers are
//! estimates for choosing a range, not promises.

use crate::curve::{self, Range};
use crate::pool::{self, PoolParams, PoolRef, SECONDS_PER_YEAR, price_of_tick};
use crate::tools::{fee_apr, realized};
use bardo_sdk::errors::invalid_params;
use bardo_sdk::uniswap::math::MAX_TICK;
use bardo_sdk::{Error, ReadTool, ToolDef, events};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Params of `intel_optimize_lp_range`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RangeParams {
    #[serde(flatten)]
    pub pool: PoolParams,
    /// The window measured: this many blocks up to the latest (default 1,000; at most 100,000).
    #[serde(default)]
    pub blocks: Option<u64>,
    /// How long the position is meant to stay, days (default 7; 1 to 365).
    #[serde(default)]
    pub horizon_days: Option<f64>,
    /// The position's size in token1 (default: 0.1 % of what the pool holds).
    #[serde(default)]
    pub capital: Option<String>,
}

/// One candidate range.
#[derive(Debug, Clone, Serialize)]
pub struct Candidate {
    pub tick_lower: i32,
    pub tick_upper: i32,
    pub price_lower: f64,
    /// None: unbounded (full range).
    pub price_upper: Option<f64>,
    /// Half its width in standard deviations of the log price over the horizon (none: full range).
    pub half_width_sigmas: Option<f64>,
    /// Chance the price ends the horizon inside it.
    pub probability_in_range: f64,
    /// Fees a year on `capital`: its share of the liquidity in range times the pool's fee rate,
    /// times the chance of being in range.
    pub fee_apr: f64,
    /// Impermanent loss expected at the horizon (≤ 0), and as a yearly rate.
    pub expected_il: f64,
    pub il_apr: f64,
    /// Loss-versus-rebalancing a year, per unit of value, at the price now.
    pub lvr_apr: f64,
    /// `fee_apr + il_apr`: what ranks the candidates.
    pub net_apr: f64,
}

/// Result of `intel_optimize_lp_range`.
#[derive(Debug, Serialize)]
pub struct RangeAdvice {
    pub pool: PoolRef,
    pub tick: i32,
    pub tick_spacing: i32,
    pub volatility_annualized: f64,
    pub horizon_days: f64,
    /// The pool's fees over the window in token1, as a yearly rate.
    pub fees_per_year: f64,
    pub swaps: usize,
    pub capital: f64,
    pub candidates: Vec<Candidate>,
    /// The candidate with the highest `net_apr`.
    pub recommended: Candidate,
    pub assumptions: &'static str,
}

pub struct OptimizeLpRange;

impl ReadTool for OptimizeLpRange {
    const NAME: &'static str = "intel_optimize_lp_range";
    type Params = RangeParams;
    type Output = RangeAdvice;

    fn def() -> ToolDef {
        crate::tools::def::<RangeParams>(
            Self::NAME,
            "Suggests a tick range for liquidity in a Uniswap V3 pool from its realized volatility and the fees \
             its swaps paid over the last `blocks`: for ranges of 0.25 to 5 standard deviations of the price \
             over `horizon_days` (and the full range), the ticks, the chance the price ends inside, the fee \
             APR of a position of `capital`, the impermanent loss expected, the LVR rate and fees less loss; \
             the best by that. Estimates from a lognormal model; reads only.",
            &["find the pool", "measure volatility", "measure fees", "rank ranges"],
        )
    }

    fn run(p: RangeParams) -> Result<RangeAdvice, Error> {
        let horizon = p.horizon_days.unwrap_or(7.0);
        if !(1.0..=365.0).contains(&horizon) {
            return Err(invalid_params("`horizon_days` must be 1 to 365"));
        }
        events::progress(0);
        let c = p.pool.chain_id;
        let pool = pool::find(&p.pool)?;
        events::progress(1);
        let vol = realized(c, &pool, p.blocks)?;
        let sigma = vol.volatility_annualized;
        if sigma.is_nan() || sigma <= 0.0 || vol.swaps < 2 {
            return Err(invalid_params(format!(
                "the pool's price moved {} times in the window: too few to measure its volatility; widen `blocks`",
                vol.swaps
            )));
        }
        events::progress(2);
        let fees = fee_apr(c, &pool, p.blocks)?;
        let fees_per_year = if fees.window.seconds == 0 {
            0.0
        } else {
            fees.fees_value * SECONDS_PER_YEAR / fees.window.seconds as f64
        };
        let capital = match p.capital.as_deref() {
            Some(text) => pool::price_param("capital", text)?,
            None => (fees.tvl * 0.001).max(f64::MIN_POSITIVE),
        };
        events::progress(3);
        let price = pool::price_of_sqrt(pool.sqrt_price_x96, &pool);
        let (d0, d1) = (i32::from(pool.token0.decimals), i32::from(pool.token1.decimals));
        // The pool's liquidity in range, in the units whole-token prices use.
        let active = pool.liquidity as f64 / 10f64.powf(f64::from(d0 + d1) / 2.0);
        let s = sigma * (horizon / 365.0).sqrt();
        let model = Model { price, sigma, s, horizon, fees_per_year, active, capital };
        let spacing = pool.tick_spacing;
        let mut candidates: Vec<Candidate> = [0.25, 0.5, 1.0, 1.5, 2.0, 3.0, 5.0]
            .iter()
            .map(|k: &f64| {
                let tick_at = |price: f64| (price.ln() - f64::from(d1 - d0) * 10f64.ln()) / 1.0001f64.ln();
                let lower = (tick_at(price * (-k * s).exp()).floor() as i32).div_euclid(spacing) * spacing;
                let upper = (tick_at(price * (k * s).exp()).ceil() as i32 + spacing - 1).div_euclid(spacing)
                    * spacing;
                let edge = MAX_TICK / spacing * spacing;
                let (lower, upper) = (lower.max(-edge), upper.min(edge).max(lower + spacing));
                model.candidate(
                    (lower, upper),
                    (price_of_tick(lower, &pool), Some(price_of_tick(upper, &pool))),
                    Some(*k),
                )
            })
            .collect();
        let edge = MAX_TICK / spacing * spacing;
        candidates.push(model.candidate((-edge, edge), (0.0, None), None));
        let recommended = candidates
            .iter()
            .max_by(|a, b| a.net_apr.total_cmp(&b.net_apr))
            .cloned()
            .ok_or_else(|| invalid_params("no candidate range"))?;
        Ok(RangeAdvice {
            pool: pool::reference(&pool),
            tick: pool.tick,
            tick_spacing: spacing,
            volatility_annualized: sigma,
            horizon_days: horizon,
            fees_per_year,
            swaps: fees.swaps,
            capital,
            candidates,
            recommended,
            assumptions: "price a driftless lognormal at the window's realized volatility; the window's fees a steady \
                          rate, shared by the liquidity in range now plus this position's; in range = the price \
                          ends the horizon inside",
        })
    }
}

/// What every candidate is measured against.
struct Model {
    price: f64,
    sigma: f64,
    /// Standard deviation of the log price over the horizon.
    s: f64,
    horizon: f64,
    fees_per_year: f64,
    /// The pool's liquidity in range (whole-token units).
    active: f64,
    capital: f64,
}

/// Gauss–Hermite nodes and weights for E[f(Z)], Z standard normal (probabilists', 7 points).
const HERMITE: [(f64, f64); 7] = [
    (-3.750_439_717_725_742, 0.000_548_268_855_972_218),
    (-2.366_759_410_734_541, 0.030_757_123_967_586_5),
    (-1.154_405_394_739_968, 0.240_123_178_605_013),
    (0.0, 0.457_142_857_142_857),
    (1.154_405_394_739_968, 0.240_123_178_605_013),
    (2.366_759_410_734_541, 0.030_757_123_967_586_5),
    (3.750_439_717_725_742, 0.000_548_268_855_972_218),
];

impl Model {
    fn candidate(&self, ticks: (i32, i32), prices: (f64, Option<f64>), k: Option<f64>) -> Candidate {
        let range = Range { lower: prices.0, upper: prices.1.unwrap_or(f64::INFINITY) };
        let p = self.price;
        let phi = |x: f64| 0.5 * (1.0 + erf(x / std::f64::consts::SQRT_2));
        let probability_in_range = match prices.1 {
            None => 1.0,
            Some(upper) => phi((upper / p).ln() / self.s) - phi((range.lower / p).ln() / self.s),
        };
        // Liquidity a unit of value buys here, and so the position's share of the fees in range.
        let (x, y) = curve::holdings(1.0, p, range);
        let per_unit = curve::value(x, y, p);
        let liquidity = if per_unit > 0.0 { self.capital / per_unit } else { 0.0 };
        let share = if liquidity > 0.0 { liquidity / (self.active + liquidity) } else { 0.0 };
        let fee_apr = self.fees_per_year * share * probability_in_range / self.capital;
        let path: Vec<f64> = HERMITE.iter().map(|(z, _)| p * (self.s * z).exp()).collect();
        let expected_il: f64 =
            curve::impermanent_loss(p, range, &path).iter().zip(HERMITE).map(|(pt, (_, w))| pt.il * w).sum();
        let il_apr = expected_il * 365.0 / self.horizon;
        Candidate {
            tick_lower: ticks.0,
            tick_upper: ticks.1,
            price_lower: prices.0,
            price_upper: prices.1,
            half_width_sigmas: k,
            probability_in_range,
            fee_apr,
            expected_il,
            il_apr,
            lvr_apr: curve::lvr_rate(self.sigma, p, range),
            net_apr: fee_apr + il_apr,
        }
    }
}

/// The error function (Abramowitz and Stegun 7.1.26; absolute error under 1.5e-7).
fn erf(x: f64) -> f64 {
    let t = 1.0 / (1.0 + 0.327_591_1 * x.abs());
    let poly = t
        * (0.254_829_592
            + t * (-0.284_496_736 + t * (1.421_413_741 + t * (-1.453_152_027 + t * 1.061_405_429))));
    let y = 1.0 - poly * (-x * x).exp();
    if x >= 0.0 { y } else { -y }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_error_function_and_the_quadrature_are_right() {
        assert!((erf(0.5) - 0.520_499_877_8).abs() < 2e-7);
        assert!((erf(-1.0) + 0.842_700_792_9).abs() < 2e-7);
        // E[1] = 1, E[Z²] = 1, E[e^{Z}] = e^{1/2}.
        let e = |f: &dyn Fn(f64) -> f64| HERMITE.iter().map(|(z, w)| f(*z) * w).sum::<f64>();
        assert!((e(&|_| 1.0) - 1.0).abs() < 1e-9);
        assert!((e(&|z| z * z) - 1.0).abs() < 1e-9);
        assert!((e(&|z| z.exp()) - 0.5f64.exp()).abs() < 1e-6);
    }

    #[test]
    fn wider_ranges_stay_in_range_more_and_earn_less_while_in_it() {
        let m = Model {
            price: 2000.0,
            sigma: 0.6,
            s: 0.6 * (7.0f64 / 365.0).sqrt(),
            horizon: 7.0,
            fees_per_year: 1e6,
            active: 1e5,
            capital: 1e4,
        };
        let at = |k: f64| {
            let r = (2000.0 * (-k * m.s).exp(), 2000.0 * (k * m.s).exp());
            m.candidate((0, 1), (r.0, Some(r.1)), Some(k))
        };
        let (narrow, wide) = (at(0.5), at(3.0));
        assert!(narrow.probability_in_range < wide.probability_in_range);
        assert!((wide.probability_in_range - 0.9973).abs() < 1e-3, "±3σ: {}", wide.probability_in_range);
        assert!(narrow.fee_apr / narrow.probability_in_range > wide.fee_apr / wide.probability_in_range);
        assert!(narrow.expected_il < wide.expected_il && wide.expected_il < 0.0, "narrow ranges lose more");
        let full = m.candidate((0, 1), (0.0, None), None);
        assert_eq!(full.probability_in_range, 1.0);
        // Full range: E[IL] ≈ -σ²T/8 for small moves.
        let expected = -(m.s * m.s) / 8.0;
        assert!(
            (full.expected_il - expected).abs() / expected.abs() < 0.05,
            "{} vs {expected}",
            full.expected_il
        );
    }
}
