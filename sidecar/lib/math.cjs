'use strict';
// Price, position and single-pool swap math, by the SDKs' own functions.

const JSBI = require('jsbi');
const { CurrencyAmount, Token } = require('@uniswap/sdk-core');
const v2 = require('@uniswap/v2-sdk');
const v3 = require('@uniswap/v3-sdk');
const { invalid, big, tick, sqrtPrice, decimals, feeAndSpacing } = require('./params.cjs');
const { BitmapTicks } = require('./ticks.cjs');

function range(params) {
  const lower = tick(params, 'tick_lower');
  const upper = tick(params, 'tick_upper');
  if (lower >= upper) throw invalid('`tick_lower` must be below `tick_upper`');
  return [lower, upper];
}

// Placeholder tokens for the SDK's entities, which need two: the math depends only on the
// sqrt price, the range and the liquidity (and, for prices, the decimals).
const token = (byte, decimals) => new Token(1, '0x' + byte.repeat(40), decimals);

/**
 * A position in a 0.01 % pool (tick spacing 1, so any range is valid) at `sqrt_price_x96`: the
 * SDK's Position, whose amounts are what the pool would pay out (rounded down) and whose mint
 * amounts are what it would take in (rounded up).
 */
function position(params, liquidity) {
  const [lower, upper] = range(params);
  const sqrt = sqrtPrice(params, 'sqrt_price_x96');
  const current = v3.TickMath.getTickAtSqrtRatio(sqrt);
  const pool = new v3.Pool(token('1', 18), token('2', 18), v3.FeeAmount.LOWEST, sqrt, 0, current);
  return new v3.Position({ pool, liquidity, tickLower: lower, tickUpper: upper });
}

module.exports = {
  tick_to_sqrt_price: (p) => ({ sqrt_price_x96: v3.TickMath.getSqrtRatioAtTick(tick(p, 'tick')).toString() }),

  sqrt_price_to_tick: (p) => ({ tick: v3.TickMath.getTickAtSqrtRatio(sqrtPrice(p, 'sqrt_price_x96')) }),

  /** Token1 per token0 at `tick`: in whole units, and as its exact ratio of base units. */
  tick_to_price: (p) => {
    const price = v3.tickToPrice(token('1', decimals(p, 'decimals0')), token('2', decimals(p, 'decimals1')),
      tick(p, 'tick'));
    return {
      price: price.toSignificant(18),
      numerator: price.numerator.toString(),
      denominator: price.denominator.toString(),
    };
  },

  /** The most liquidity `amount0` and `amount1` buy in the range, as LiquidityAmounts.sol computes. */
  liquidity_for_amounts: (p) => {
    const [lower, upper] = range(p);
    const liquidity = v3.maxLiquidityForAmounts(sqrtPrice(p, 'sqrt_price_x96'),
      v3.TickMath.getSqrtRatioAtTick(lower), v3.TickMath.getSqrtRatioAtTick(upper), big(p, 'amount0'),
      big(p, 'amount1'), false);
    return { liquidity: liquidity.toString() };
  },

  /**
   * A swap through a concentrated-liquidity pool (V3's math, which V4's pools share): exact-in
   * for a positive `amount_specified`, exact-out for a negative one. `amount_calculated` is the
   * other side (negative: paid out), with the pool's price, tick and liquidity after it.
   */
  swap: async (p) => {
    const [fee, spacing] = feeAndSpacing(p);
    if (typeof p.zero_for_one !== 'boolean') throw invalid('`zero_for_one` must be a boolean');
    const amount = big(p, 'amount_specified', { signed: true });
    if (JSBI.equal(amount, JSBI.BigInt(0))) throw invalid('`amount_specified` must not be 0');
    const limit = p.sqrt_price_limit_x96 === undefined ? undefined : sqrtPrice(p, 'sqrt_price_limit_x96');
    const r = await v3.v3Swap(JSBI.BigInt(fee), sqrtPrice(p, 'sqrt_price_x96'), tick(p, 'tick'), big(p, 'liquidity'),
      spacing, new BitmapTicks(p), p.zero_for_one, amount, limit);
    return {
      amount_calculated: r.amountCalculated.toString(),
      sqrt_price_x96: r.sqrtRatioX96.toString(),
      tick: r.tickCurrent,
      liquidity: r.liquidity.toString(),
    };
  },

  /** A V2 pair's output for `amount_in`, by the SDK's `Pair` (0.3 % fee). */
  v2_swap: (p) => {
    const [rin, rout, amount] = [big(p, 'reserve_in'), big(p, 'reserve_out'), big(p, 'amount_in')];
    const [tin, tout] = [token('1', 18), token('2', 18)];
    const pair = new v2.Pair(CurrencyAmount.fromRawAmount(tin, rin), CurrencyAmount.fromRawAmount(tout, rout));
    const [out] = pair.getOutputAmount(CurrencyAmount.fromRawAmount(tin, amount));
    return { amount_out: out.quotient.toString() };
  },

  /**
   * The fees a position has earned since it was last touched, as the pool would credit them:
   * fee growth inside its range now (from the ticks' fee growth outside, the current tick and
   * the global growth, by `TickLibrary.getFeeGrowthInside`) less the growth it last saw, times
   * its liquidity (`PositionLibrary.getTokensOwed`).
   */
  position_fees: (p) => {
    const [lower, upper] = range(p);
    const outside = (prefix) => ({
      feeGrowthOutside0X128: big(p, `${prefix}_fee_growth_outside0_x128`),
      feeGrowthOutside1X128: big(p, `${prefix}_fee_growth_outside1_x128`),
    });
    const [inside0, inside1] = v3.TickLibrary.getFeeGrowthInside(outside('lower'), outside('upper'), lower, upper,
      tick(p, 'tick_current'), big(p, 'fee_growth_global0_x128'), big(p, 'fee_growth_global1_x128'));
    const [fees0, fees1] = v3.PositionLibrary.getTokensOwed(big(p, 'fee_growth_inside0_last_x128'),
      big(p, 'fee_growth_inside1_last_x128'), big(p, 'liquidity'), inside0, inside1);
    return { fees0: fees0.toString(), fees1: fees1.toString() };
  },

  /** A position's amounts: what withdrawing `liquidity` pays and what minting it costs. */
  position_amounts: (p) => {
    const pos = position(p, big(p, 'liquidity'));
    const mint = pos.mintAmounts;
    return {
      amount0: pos.amount0.quotient.toString(),
      amount1: pos.amount1.quotient.toString(),
      mint_amount0: mint.amount0.toString(),
      mint_amount1: mint.amount1.toString(),
    };
  },
};
