//! What `uniswap_get_position_performance` reports of a V3 or V4 position, from its history
//! (read per version: `performance.rs`, `performance_v4.rs`) and its state now: its value against
//! holding what was put in (impermanent loss, fees aside), the fees it earned, and those as a
//! yearly rate on its value.

use super::*;

/// Params of `uniswap_get_position_performance`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PerformanceParams {
    /// Chain id.
    pub chain_id: u64,
    /// The position NFT's id, decimal.
    pub position_id: String,
    /// `v3` (default) or `v4`: which position manager's NFT `position_id` is.
    #[serde(default)]
    pub version: Option<Version>,
    /// The first block searched for its events (default: 200,000 blocks back); give the block it
    /// was minted in for an older position.
    #[serde(default)]
    pub from_block: Option<u64>,
}

/// Token amounts of a history: whole tokens and base units.
#[derive(Debug, Serialize)]
pub struct Pair {
    pub amount0: String,
    pub amount1: String,
    pub amount0_base: String,
    pub amount1_base: String,
}

impl Pair {
    pub(super) fn of(a: (U256, U256), t0: &Token, t1: &Token) -> Self {
        Pair {
            amount0: format_units(a.0, t0.decimals),
            amount1: format_units(a.1, t1.decimals),
            amount0_base: a.0.to_string(),
            amount1_base: a.1.to_string(),
        }
    }
}

/// Result of `uniswap_get_position_performance`.
#[derive(Debug, Serialize)]
pub struct Performance {
    pub position_id: String,
    pub token0: Token,
    pub token1: Token,
    pub opened_block: u64,
    pub age_seconds: u64,
    /// Put in by every mint and increase.
    pub deposited: Pair,
    /// Taken out by every decrease (principal).
    pub withdrawn: Pair,
    /// Fees collected so far (collected less principal withdrawn).
    pub fees_collected: Pair,
    /// Fees earned and not collected.
    pub fees_uncollected: Pair,
    /// What the liquidity holds now.
    pub principal: Pair,
    /// Values in token1 at the pool's price now.
    pub value_now: f64,
    /// What was put in and not taken out, held instead.
    pub value_held: f64,
    /// Every fee earned, collected or not.
    pub fees_value: f64,
    /// `value_now / value_held − 1`: the loss against holding, fees aside (≤ 0 but for rounding).
    pub impermanent_loss: f64,
    /// `(value_now + fees_value) / value_held − 1`: the position against holding, fees counted.
    pub net_return: f64,
    /// Fees earned a year on the value now, at the pace since it opened; `null` when there is
    /// no pace to measure (read in the second it opened, or worth nothing now).
    pub fee_apr: Option<f64>,
    /// The blocks searched.
    pub blocks: (u64, u64),
}

/// A position's history: what went in and came out, from its events.
pub(super) struct History {
    pub deposited: (U256, U256),
    /// Principal taken out.
    pub withdrawn: (U256, U256),
    pub fees_collected: (U256, U256),
    /// The block of its first deposit.
    pub opened: u64,
    pub blocks: (u64, u64),
}

/// The performance of a position with `history`, holding `(principal, uncollected fees)` now,
/// valued in token1 at the pool's price `sqrt_price_x96`.
pub(super) fn report(
    chain_id: ChainId,
    id: U256,
    (t0, t1): (Token, Token),
    history: &History,
    (principal, uncollected): ((U256, U256), (U256, U256)),
    sqrt_price_x96: U256,
) -> Result<Performance, Error> {
    let price = crate::math::v3_prices(sqrt_price_x96, t0.decimals, t1.decimals).0;
    let price: f64 = price.parse().unwrap_or(0.0);
    let whole = |a: U256, t: &Token| format_units(a, t.decimals).parse::<f64>().unwrap_or(0.0);
    let value = |a: (U256, U256)| whole(a.0, &t0) * price + whole(a.1, &t1);
    let (deposited, withdrawn) = (history.deposited, history.withdrawn);
    let held = (deposited.0.saturating_sub(withdrawn.0), deposited.1.saturating_sub(withdrawn.1));
    let (value_now, value_held) = (value(principal), value(held));
    let fees_value = value(history.fees_collected) + value(uncollected);
    let started = bardo_sdk::chain::block_timestamp(chain_id, Some(history.opened))?;
    let age_seconds = bardo_sdk::chain::block_timestamp(chain_id, None)?.saturating_sub(started);
    let ratio = |a: f64| if value_held > 0.0 { a / value_held - 1.0 } else { 0.0 };
    Ok(Performance {
        position_id: id.to_string(),
        opened_block: history.opened,
        age_seconds,
        deposited: Pair::of(deposited, &t0, &t1),
        withdrawn: Pair::of(withdrawn, &t0, &t1),
        fees_collected: Pair::of(history.fees_collected, &t0, &t1),
        fees_uncollected: Pair::of(uncollected, &t0, &t1),
        principal: Pair::of(principal, &t0, &t1),
        value_now,
        value_held,
        fees_value,
        impermanent_loss: ratio(value_now),
        net_return: ratio(value_now + fees_value),
        fee_apr: fee_apr(fees_value, value_now, age_seconds),
        blocks: history.blocks,
        token0: t0,
        token1: t1,
    })
}

/// The fees' yearly pace on `value_now` over `age_seconds`: none over no time, or on nothing
/// (not 0, which would say it earns nothing).
fn fee_apr(fees_value: f64, value_now: f64, age_seconds: u64) -> Option<f64> {
    (value_now > 0.0 && age_seconds > 0).then(|| fees_value / value_now * 31_536_000.0 / age_seconds as f64)
}

#[cfg(test)]
mod tests {
    use super::fee_apr;

    #[test]
    fn a_pace_needs_time_and_value() {
        assert_eq!(fee_apr(1.0, 100.0, 0), None, "opened this second");
        assert_eq!(fee_apr(1.0, 0.0, 10), None, "worth nothing now");
        let apr = fee_apr(1.0, 100.0, 31_536_000 / 2).expect("a pace");
        assert!((apr - 0.02).abs() < 1e-12, "1 % in half a year: {apr}");
        assert_eq!(fee_apr(0.0, 100.0, 10), Some(0.0), "earned nothing");
    }
}
