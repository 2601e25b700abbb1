'use strict';
// The v3-sdk's concentrated-liquidity swap (`v3Swap`: TickMath, SqrtPriceMath, SwapMath,
// FullMath), line for line in native BigInt for the route search. The SDK's version runs on
// JSBI, a BigInt written in JavaScript, and the search asks for a hundred swaps per route; this
// one is bit-identical (test/clmath.test.cjs holds it to the SDK's on random pools) and ~10x
// faster. The route returned is re-quoted by the SDK's own pools, never by this.

const MIN_TICK = -887272;
const MAX_TICK = 887272;
const MIN_SQRT_RATIO = 4295128739n;
const MAX_SQRT_RATIO = 1461446703485210103287273052203988822378723970342n;
const MAX_UINT256 = (1n << 256n) - 1n;
const MAX_UINT160 = (1n << 160n) - 1n;
const Q96 = 1n << 96n;
const Q32 = 1n << 32n;
const MAX_FEE = 1000000n;

const MUL = [
  [0x2, 0xfff97272373d413259a46990580e213an], [0x4, 0xfff2e50f5f656932ef12357cf3c7fdccn],
  [0x8, 0xffe5caca7e10e4e61c3624eaa0941cd0n], [0x10, 0xffcb9843d60f6159c9db58835c926644n],
  [0x20, 0xff973b41fa98c081472e6896dfb254c0n], [0x40, 0xff2ea16466c96a3843ec78b326b52861n],
  [0x80, 0xfe5dee046a99a2a811c461f1969c3053n], [0x100, 0xfcbe86c7900a88aedcffc83b479aa3a4n],
  [0x200, 0xf987a7253ac413176f2b074cf7815e54n], [0x400, 0xf3392b0822b70005940c7a398e4b70f3n],
  [0x800, 0xe7159475a2c29b7443b29c7fa6e889d9n], [0x1000, 0xd097f3bdfd2022b8845ad8f792aa5825n],
  [0x2000, 0xa9f746462d870fdf8a65dc1f90e061e5n], [0x4000, 0x70d869a156d2a1b890bb3df62baf32f7n],
  [0x8000, 0x31be135f97d08fd981231505542fcfa6n], [0x10000, 0x9aa508b5b7a84e1c677de54f3e99bc9n],
  [0x20000, 0x5d6af8dedb81196699c329225ee604n], [0x40000, 0x2216e584f5fa1ea926041bedfe98n],
  [0x80000, 0x48a170391f7dc42444e8fa2n],
];

// Swaps through one pool keep landing on the same ticks.
const atTick = new Map();
function sqrtRatioAtTickCached(tick) {
  let r = atTick.get(tick);
  if (r === undefined) {
    r = sqrtRatioAtTick(tick);
    if (atTick.size > 4096) atTick.clear();
    atTick.set(tick, r);
  }
  return r;
}

function sqrtRatioAtTick(tick) {
  if (!Number.isInteger(tick) || tick < MIN_TICK || tick > MAX_TICK) throw new Error('TICK');
  const abs = tick < 0 ? -tick : tick;
  let ratio = (abs & 0x1) !== 0 ? 0xfffcb933bd6fad37aa2d162d1a594001n : 0x100000000000000000000000000000000n;
  for (const [bit, by] of MUL) if ((abs & bit) !== 0) ratio = (ratio * by) >> 128n;
  if (tick > 0) ratio = MAX_UINT256 / ratio;
  return ratio % Q32 > 0n ? ratio / Q32 + 1n : ratio / Q32;
}

function mostSignificantBit(x) {
  return x.toString(2).length - 1;
}

function tickAtSqrtRatio(sqrtRatioX96) {
  if (sqrtRatioX96 < MIN_SQRT_RATIO || sqrtRatioX96 >= MAX_SQRT_RATIO) throw new Error('SQRT_RATIO');
  const x128 = sqrtRatioX96 << 32n;
  const msb = mostSignificantBit(x128);
  let r = msb >= 128 ? x128 >> BigInt(msb - 127) : x128 << BigInt(127 - msb);
  let log2 = BigInt(msb - 128) << 64n;
  for (let i = 0; i < 14; i++) {
    r = (r * r) >> 127n;
    const f = r >> 128n;
    log2 |= f << BigInt(63 - i);
    r >>= f;
  }
  const logSqrt10001 = log2 * 255738958999603826347141n;
  const low = Number((logSqrt10001 - 3402992956809132418596140100660247210n) >> 128n);
  const high = Number((logSqrt10001 + 291339464771989622907027621153398088495n) >> 128n);
  return low === high ? low : sqrtRatioAtTick(high) <= sqrtRatioX96 ? high : low;
}

function mulDivRoundingUp(a, b, d) {
  const product = a * b;
  const result = product / d;
  return product % d !== 0n ? result + 1n : result;
}

function amount0Delta(a, b, liquidity, roundUp) {
  if (a > b) [a, b] = [b, a];
  const n1 = liquidity << 96n;
  const n2 = b - a;
  return roundUp ? mulDivRoundingUp(mulDivRoundingUp(n1, n2, b), 1n, a) : (n1 * n2) / b / a;
}

function amount1Delta(a, b, liquidity, roundUp) {
  if (a > b) [a, b] = [b, a];
  return roundUp ? mulDivRoundingUp(liquidity, b - a, Q96) : (liquidity * (b - a)) / Q96;
}

function fromAmount0RoundingUp(sqrtP, liquidity, amount, add) {
  if (amount === 0n) return sqrtP;
  const n1 = liquidity << 96n;
  if (add) {
    const product = (amount * sqrtP) & MAX_UINT256;
    if (product / amount === sqrtP) {
      const denominator = (n1 + product) & MAX_UINT256;
      if (denominator >= n1) return mulDivRoundingUp(n1, sqrtP, denominator);
    }
    return mulDivRoundingUp(n1, 1n, n1 / sqrtP + amount);
  }
  const product = (amount * sqrtP) & MAX_UINT256;
  if (product / amount !== sqrtP || n1 <= product) throw new Error('PRODUCT');
  return mulDivRoundingUp(n1, sqrtP, n1 - product);
}

function fromAmount1RoundingDown(sqrtP, liquidity, amount, add) {
  if (add) {
    const quotient = amount <= MAX_UINT160 ? (amount << 96n) / liquidity : (amount * Q96) / liquidity;
    return sqrtP + quotient;
  }
  const quotient = mulDivRoundingUp(amount, Q96, liquidity);
  if (sqrtP <= quotient) throw new Error('QUOTIENT');
  return sqrtP - quotient;
}

function nextFromInput(sqrtP, liquidity, amountIn, zeroForOne) {
  return zeroForOne
    ? fromAmount0RoundingUp(sqrtP, liquidity, amountIn, true)
    : fromAmount1RoundingDown(sqrtP, liquidity, amountIn, true);
}

function nextFromOutput(sqrtP, liquidity, amountOut, zeroForOne) {
  return zeroForOne
    ? fromAmount1RoundingDown(sqrtP, liquidity, amountOut, false)
    : fromAmount0RoundingUp(sqrtP, liquidity, amountOut, false);
}

/** SwapMath.computeSwapStep: [next sqrt price, amount in, amount out, fee]. */
function swapStep(current, target, liquidity, remaining, fee) {
  const zeroForOne = current >= target;
  const exactIn = remaining >= 0n;
  let next;
  let amountIn;
  let amountOut;
  if (exactIn) {
    const lessFee = (remaining * (MAX_FEE - fee)) / MAX_FEE;
    amountIn = zeroForOne ? amount0Delta(target, current, liquidity, true) : amount1Delta(current, target, liquidity, true);
    next = lessFee >= amountIn ? target : nextFromInput(current, liquidity, lessFee, zeroForOne);
  } else {
    amountOut = zeroForOne ? amount1Delta(target, current, liquidity, false) : amount0Delta(current, target, liquidity, false);
    next = -remaining >= amountOut ? target : nextFromOutput(current, liquidity, -remaining, zeroForOne);
  }
  const max = target === next;
  if (zeroForOne) {
    amountIn = max && exactIn ? amountIn : amount0Delta(next, current, liquidity, true);
    amountOut = max && !exactIn ? amountOut : amount1Delta(next, current, liquidity, false);
  } else {
    amountIn = max && exactIn ? amountIn : amount1Delta(current, next, liquidity, true);
    amountOut = max && !exactIn ? amountOut : amount0Delta(current, next, liquidity, false);
  }
  if (!exactIn && amountOut > -remaining) amountOut = -remaining;
  const feeAmount = exactIn && next !== target ? remaining - amountIn : mulDivRoundingUp(amountIn, fee, MAX_FEE - fee);
  return [next, amountIn, amountOut, feeAmount];
}

/**
 * v3Swap over `ticks` (a BitmapTicks): exact-in for a positive `amountSpecified`, exact-out for
 * a negative one. Returns the other side (negative: paid out) and the price after; the tick
 * after is computed only if the swap goes on from it (the search never reads it) — `tickCurrent`
 * is then null.
 */
function swap(fee, sqrtPriceX96, tickCurrent, liquidity, tickSpacing, ticks, zeroForOne, amountSpecified, limit) {
  if (limit === undefined) limit = zeroForOne ? MIN_SQRT_RATIO + 1n : MAX_SQRT_RATIO - 1n;
  if (zeroForOne ? !(limit > MIN_SQRT_RATIO && limit < sqrtPriceX96) : !(limit < MAX_SQRT_RATIO && limit > sqrtPriceX96)) {
    throw new Error('RATIO');
  }
  const exactIn = amountSpecified >= 0n;
  let remaining = amountSpecified;
  let calculated = 0n;
  let sqrtP = sqrtPriceX96;
  let tick = tickCurrent;
  let L = liquidity;
  while (remaining !== 0n && sqrtP !== limit) {
    const start = sqrtP;
    let [tickNext, initialized] = ticks.nextWithinOneWord(tick, zeroForOne, tickSpacing);
    if (tickNext < MIN_TICK) tickNext = MIN_TICK;
    else if (tickNext > MAX_TICK) tickNext = MAX_TICK;
    const priceNext = sqrtRatioAtTickCached(tickNext);
    const target = (zeroForOne ? priceNext < limit : priceNext > limit) ? limit : priceNext;
    const [next, amountIn, amountOut, feeAmount] = swapStep(sqrtP, target, L, remaining, fee);
    sqrtP = next;
    if (exactIn) {
      remaining -= amountIn + feeAmount;
      calculated -= amountOut;
    } else {
      remaining += amountOut;
      calculated += amountIn + feeAmount;
    }
    if (sqrtP === priceNext) {
      if (initialized) {
        let net = ticks.netAt(tickNext);
        if (zeroForOne) net = -net;
        L += net;
        if (L < 0n) throw new Error('LIQUIDITY');
      }
      tick = zeroForOne ? tickNext - 1 : tickNext;
    } else if (sqrtP !== start) {
      tick = remaining !== 0n && sqrtP !== limit ? tickAtSqrtRatio(sqrtP) : null;
    }
  }
  return { amountCalculated: calculated, sqrtRatioX96: sqrtP, liquidity: L, tickCurrent: tick };
}

module.exports = { swap, sqrtRatioAtTick, tickAtSqrtRatio, MIN_SQRT_RATIO, MAX_SQRT_RATIO };
