//! The sidecar's methods, typed: integers go as decimal strings (beyond JSON's 2^53) and come
//! back checked.

use crate::{Sidecar, SidecarError};
use alloy_primitives::{I256, U256};
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;

/// A price at a tick: token1 per token0.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TickPrice {
    /// In whole units, 18 significant digits.
    pub price: String,
    /// The exact ratio of base units, numerator over denominator (either may pass 2^256).
    pub numerator: String,
    /// The ratio's denominator.
    pub denominator: String,
}

/// What a position holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PositionAmounts {
    /// Token0 withdrawing it pays (rounded down).
    pub amount0: U256,
    /// Token1 withdrawing it pays.
    pub amount1: U256,
    /// Token0 minting it costs (rounded up).
    pub mint_amount0: U256,
    /// Token1 minting it costs.
    pub mint_amount1: U256,
}

/// What a V3 pool knows of one position's fees: its range, the pool's tick and global fee
/// growth, its ticks' fee growth outside, and the growth inside the position last saw.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FeeGrowth {
    /// The position's (lower, upper) ticks.
    pub ticks: (i32, i32),
    /// The pool's current tick.
    pub tick_current: i32,
    /// `feeGrowthGlobal{0,1}X128`.
    pub global: (U256, U256),
    /// The lower tick's `feeGrowthOutside{0,1}X128`.
    pub outside_lower: (U256, U256),
    /// The upper tick's.
    pub outside_upper: (U256, U256),
    /// The position's `feeGrowthInside{0,1}LastX128`.
    pub inside_last: (U256, U256),
    /// Its liquidity.
    pub liquidity: u128,
}

/// A concentrated-liquidity pool's swap state at one block: a V3 pool's, or a V4 pool's with its
/// LP fee.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PoolState {
    /// Fee in hundredths of a bip.
    pub fee: u32,
    /// The spacing of its ticks.
    pub tick_spacing: i32,
    /// Its price, sqrt(token1/token0) as a Q64.96.
    pub sqrt_price_x96: U256,
    /// Its current tick.
    pub tick: i32,
    /// In-range liquidity.
    pub liquidity: u128,
}

/// The part of a pool's tick bitmap read so far, with each initialized tick's liquidityNet.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Ticks {
    /// Bitmap words by position (`compressed tick >> 8`).
    pub words: BTreeMap<i16, U256>,
    /// liquidityNet of the initialized ticks in those words.
    pub nets: BTreeMap<i32, i128>,
}

impl Ticks {
    /// The word position holding `tick` at `spacing`.
    pub fn word_of(tick: i32, spacing: i32) -> i16 {
        (tick.div_euclid(spacing) >> 8) as i16
    }

    /// The initialized ticks `word` marks, at `spacing`.
    pub fn initialized(word_pos: i16, word: U256, spacing: i32) -> impl Iterator<Item = i32> {
        (0..256usize)
            .filter(move |bit| word.bit(*bit))
            .map(move |bit| ((i32::from(word_pos) << 8) + bit as i32) * spacing)
    }
}

/// A swap's result by the SDK's math.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SwapResult {
    /// The other side of the swap: exact-in, what comes out (negative); exact-out, what goes in.
    pub amount_calculated: I256,
    /// The pool's price after it.
    pub sqrt_price_x96: U256,
    /// Its tick after it.
    pub tick: i32,
    /// Its in-range liquidity after it.
    pub liquidity: u128,
}

/// Why [`Sidecar::swap`] has no result.
#[derive(Debug, thiserror::Error)]
pub enum SwapError<E> {
    /// The sidecar failed or refused.
    #[error(transparent)]
    Sidecar(#[from] SidecarError),
    /// Reading more of the pool failed.
    #[error("reading the pool's ticks failed: {0}")]
    Read(E),
}

/// The sidecar's "the swap needs ticks you did not give" code.
pub(crate) const NEED_TICKS: i64 = -32001;

/// The most bitmap words one swap may ask for.
const MAX_WORD_READS: usize = 512;

pub(crate) fn field<'a>(method: &str, result: &'a Value, name: &str) -> Result<&'a Value, SidecarError> {
    result.get(name).ok_or_else(|| SidecarError::Protocol(format!("`{method}` answered without `{name}`")))
}

pub(crate) fn uint(method: &str, result: &Value, name: &str) -> Result<U256, SidecarError> {
    field(method, result, name)?.as_str().and_then(|s| U256::from_str_radix(s, 10).ok()).ok_or_else(|| {
        SidecarError::Protocol(format!("`{method}`'s `{name}` is not a uint256 as a decimal string"))
    })
}

fn text(method: &str, result: &Value, name: &str) -> Result<String, SidecarError> {
    field(method, result, name)?
        .as_str()
        .map(str::to_owned)
        .ok_or_else(|| SidecarError::Protocol(format!("`{method}`'s `{name}` is not a string")))
}

impl Sidecar {
    /// `TickMath.getSqrtRatioAtTick`.
    pub fn tick_to_sqrt_price(&self, tick: i32) -> Result<U256, SidecarError> {
        let result = self.call("tick_to_sqrt_price", json!({ "tick": tick }))?;
        uint("tick_to_sqrt_price", &result, "sqrt_price_x96")
    }

    /// `TickMath.getTickAtSqrtRatio`.
    pub fn sqrt_price_to_tick(&self, sqrt_price_x96: U256) -> Result<i32, SidecarError> {
        let result =
            self.call("sqrt_price_to_tick", json!({ "sqrt_price_x96": sqrt_price_x96.to_string() }))?;
        field("sqrt_price_to_tick", &result, "tick")?
            .as_i64()
            .and_then(|t| i32::try_from(t).ok())
            .ok_or_else(|| SidecarError::Protocol("`sqrt_price_to_tick`'s `tick` is not an int24".into()))
    }

    /// The price at `tick` of a pair with these decimals.
    pub fn tick_to_price(&self, tick: i32, decimals0: u8, decimals1: u8) -> Result<TickPrice, SidecarError> {
        let method = "tick_to_price";
        let result =
            self.call(method, json!({ "tick": tick, "decimals0": decimals0, "decimals1": decimals1 }))?;
        Ok(TickPrice {
            price: text(method, &result, "price")?,
            numerator: text(method, &result, "numerator")?,
            denominator: text(method, &result, "denominator")?,
        })
    }

    /// `maxLiquidityForAmounts` as `LiquidityAmounts.sol` computes it (the SDK's imprecise mode);
    /// unbounded: above a `uint128` the contract would revert.
    pub fn liquidity_for_amounts(
        &self,
        sqrt_price_x96: U256,
        (tick_lower, tick_upper): (i32, i32),
        amount0: U256,
        amount1: U256,
    ) -> Result<U256, SidecarError> {
        let params = json!({
            "sqrt_price_x96": sqrt_price_x96.to_string(), "tick_lower": tick_lower, "tick_upper": tick_upper,
            "amount0": amount0.to_string(), "amount1": amount1.to_string(),
        });
        let result = self.call("liquidity_for_amounts", params)?;
        uint("liquidity_for_amounts", &result, "liquidity")
    }

    /// What `liquidity` in the range holds at `sqrt_price_x96` (the SDK's `Position`).
    pub fn position_amounts(
        &self,
        sqrt_price_x96: U256,
        (tick_lower, tick_upper): (i32, i32),
        liquidity: u128,
    ) -> Result<PositionAmounts, SidecarError> {
        let method = "position_amounts";
        let params = json!({
            "sqrt_price_x96": sqrt_price_x96.to_string(), "tick_lower": tick_lower, "tick_upper": tick_upper,
            "liquidity": liquidity.to_string(),
        });
        let result = self.call(method, params)?;
        Ok(PositionAmounts {
            amount0: uint(method, &result, "amount0")?,
            amount1: uint(method, &result, "amount1")?,
            mint_amount0: uint(method, &result, "mint_amount0")?,
            mint_amount1: uint(method, &result, "mint_amount1")?,
        })
    }

    /// The fees a position earned since it was last touched, by the SDK's `TickLibrary` and
    /// `PositionLibrary`: (token0, token1).
    pub fn position_fees(&self, g: &FeeGrowth) -> Result<(U256, U256), SidecarError> {
        let method = "position_fees";
        let params = json!({
            "tick_lower": g.ticks.0, "tick_upper": g.ticks.1, "tick_current": g.tick_current,
            "fee_growth_global0_x128": g.global.0.to_string(), "fee_growth_global1_x128": g.global.1.to_string(),
            "lower_fee_growth_outside0_x128": g.outside_lower.0.to_string(),
            "lower_fee_growth_outside1_x128": g.outside_lower.1.to_string(),
            "upper_fee_growth_outside0_x128": g.outside_upper.0.to_string(),
            "upper_fee_growth_outside1_x128": g.outside_upper.1.to_string(),
            "fee_growth_inside0_last_x128": g.inside_last.0.to_string(),
            "fee_growth_inside1_last_x128": g.inside_last.1.to_string(),
            "liquidity": g.liquidity.to_string(),
        });
        let result = self.call(method, params)?;
        Ok((uint(method, &result, "fees0")?, uint(method, &result, "fees1")?))
    }

    /// A V2 pair's output for `amount_in` against these reserves (the SDK's `Pair`).
    pub fn v2_swap(
        &self,
        reserve_in: U256,
        reserve_out: U256,
        amount_in: U256,
    ) -> Result<U256, SidecarError> {
        let params = json!({
            "reserve_in": reserve_in.to_string(), "reserve_out": reserve_out.to_string(),
            "amount_in": amount_in.to_string(),
        });
        let result = self.call("v2_swap", params)?;
        uint("v2_swap", &result, "amount_out")
    }

    /// A swap through a concentrated-liquidity pool by the SDK's `v3Swap` (exact-in for a
    /// positive `amount_specified`, exact-out for a negative one). `ticks` holds what is known of
    /// the bitmap; when the swap walks past it, `read_word` adds the word at that position (and
    /// its initialized ticks) and the swap is asked again.
    pub fn swap<E>(
        &self,
        pool: &PoolState,
        ticks: &mut Ticks,
        (zero_for_one, amount_specified): (bool, I256),
        mut read_word: impl FnMut(i16, &mut Ticks) -> Result<(), E>,
    ) -> Result<SwapResult, SwapError<E>> {
        let method = "swap";
        for _ in 0..MAX_WORD_READS {
            let words: Map<String, Value> =
                ticks.words.iter().map(|(pos, w)| (pos.to_string(), Value::from(w.to_string()))).collect();
            let nets: Map<String, Value> =
                ticks.nets.iter().map(|(t, n)| (t.to_string(), Value::from(n.to_string()))).collect();
            let params = json!({
                "fee": pool.fee, "tick_spacing": pool.tick_spacing, "sqrt_price_x96": pool.sqrt_price_x96.to_string(),
                "tick": pool.tick, "liquidity": pool.liquidity.to_string(), "zero_for_one": zero_for_one,
                "amount_specified": amount_specified.to_string(), "words": words, "ticks": nets,
            });
            let result = match self.call(method, params) {
                Ok(result) => result,
                Err(SidecarError::Refused { code: NEED_TICKS, data, message, .. }) => {
                    let pos = data
                        .as_ref()
                        .and_then(|d| {
                            d["word"].as_i64().or_else(|| {
                                d["tick"]
                                    .as_i64()
                                    .map(|t| i64::from(Ticks::word_of(t as i32, pool.tick_spacing)))
                            })
                        })
                        .and_then(|w| i16::try_from(w).ok())
                        .ok_or_else(|| {
                            SidecarError::Protocol(format!(
                                "`swap` needs ticks but says not which: {message}"
                            ))
                        })?;
                    if ticks.words.contains_key(&pos)
                        && data.as_ref().is_some_and(|d| d.get("word").is_some())
                    {
                        return Err(
                            SidecarError::Protocol(format!("`swap` asked again for word {pos}")).into()
                        );
                    }
                    read_word(pos, ticks).map_err(SwapError::Read)?;
                    continue;
                }
                Err(e) => return Err(e.into()),
            };
            let signed = field(method, &result, "amount_calculated")?
                .as_str()
                .and_then(|s| s.parse::<I256>().ok())
                .ok_or_else(|| {
                    SidecarError::Protocol("`swap`'s `amount_calculated` is not an int256".into())
                })?;
            let liquidity = u128::try_from(uint(method, &result, "liquidity")?)
                .map_err(|_| SidecarError::Protocol("`swap`'s `liquidity` is over a uint128".into()))?;
            let tick = field(method, &result, "tick")?
                .as_i64()
                .and_then(|t| i32::try_from(t).ok())
                .ok_or_else(|| SidecarError::Protocol("`swap`'s `tick` is not an int24".into()))?;
            return Ok(SwapResult {
                amount_calculated: signed,
                sqrt_price_x96: uint(method, &result, "sqrt_price_x96")?,
                tick,
                liquidity,
            });
        }
        Err(SidecarError::Protocol(format!("`swap` walked past {MAX_WORD_READS} bitmap words")).into())
    }
}

/// A Morpho Blue market as Morpho stores it, with its IRM's rate and how long since it last
/// accrued interest.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MorphoMarketState {
    /// `totalSupplyAssets`.
    pub total_supply_assets: U256,
    /// `totalSupplyShares`.
    pub total_supply_shares: U256,
    /// `totalBorrowAssets`.
    pub total_borrow_assets: U256,
    /// `totalBorrowShares`.
    pub total_borrow_shares: U256,
    /// The protocol's cut of interest, WAD.
    pub fee: U256,
    /// The IRM's borrow rate per second, WAD.
    pub rate: U256,
    /// Seconds of interest to accrue before the actions.
    pub elapsed: u64,
}

/// One position action, as Morpho takes it: `assets` or `shares` (collateral in `assets`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MorphoAction {
    /// `supply`, `withdraw`, `borrow`, `repay`, `supply_collateral` or `withdraw_collateral`.
    pub kind: &'static str,
    /// Assets, or zero when by shares.
    pub assets: U256,
    /// Shares, or zero when by assets.
    pub shares: U256,
}

/// What a run of actions does to a position: signed supply shares, borrow shares, collateral.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct MorphoDelta {
    /// Supply shares.
    pub supply_shares: I256,
    /// Borrow shares.
    pub borrow_shares: I256,
    /// Collateral, base units.
    pub collateral: I256,
}

impl Sidecar {
    /// What `actions` in one market do to the account's position, by Morpho's SDK: interest
    /// accrued first, then each action rounded as Morpho rounds it.
    pub fn morpho_position(
        &self,
        market: &MorphoMarketState,
        actions: &[MorphoAction],
    ) -> Result<MorphoDelta, SidecarError> {
        let method = "morpho_position";
        let m = market;
        let params = json!({
            "market": {
                "total_supply_assets": m.total_supply_assets.to_string(),
                "total_supply_shares": m.total_supply_shares.to_string(),
                "total_borrow_assets": m.total_borrow_assets.to_string(),
                "total_borrow_shares": m.total_borrow_shares.to_string(),
                "fee": m.fee.to_string(), "rate": m.rate.to_string(), "elapsed": m.elapsed.to_string(),
            },
            "actions": actions.iter().map(|a| json!({
                "kind": a.kind, "assets": a.assets.to_string(), "shares": a.shares.to_string(),
            })).collect::<Vec<_>>(),
        });
        let result = self.call(method, params)?;
        let signed = |name: &str| {
            field(method, &result, name)?
                .as_str()
                .and_then(|s| s.parse::<I256>().ok())
                .ok_or_else(|| SidecarError::Protocol(format!("`{method}`'s `{name}` is not an int256")))
        };
        Ok(MorphoDelta {
            supply_shares: signed("supply_shares")?,
            borrow_shares: signed("borrow_shares")?,
            collateral: signed("collateral")?,
        })
    }
}
