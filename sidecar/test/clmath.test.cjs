'use strict';
// clmath.swap (native BigInt, for the route search) against the v3-sdk's own v3Swap (JSBI) on
// random pools: liquidity spread over initialized ticks, both directions, exact-in and
// exact-out, with and without a price limit. Bit-identical or the test fails.

const test = require('node:test');
const assert = require('node:assert');
const JSBI = require('jsbi');
const v3 = require('@uniswap/v3-sdk');
const clmath = require('../lib/clmath.cjs');
const { BitmapTicks } = require('../lib/ticks.cjs');

// A small deterministic generator, so that a failure names a reproducible case.
function rng(seed) {
  let x = BigInt(seed) || 1n;
  return (n) => {
    x ^= (x << 13n) & 0xffffffffffffffffn;
    x ^= x >> 7n;
    x ^= (x << 17n) & 0xffffffffffffffffn;
    return Number(x % BigInt(n));
  };
}

/** A pool with positions [lower, upper) of random liquidity around a random price. */
function randomPool(rand) {
  const [fee, spacing] = [[100, 1], [500, 10], [3000, 60], [10000, 200]][rand(4)];
  const x = rand(400000) - 200000;
  const center = x - (x % spacing);
  const nets = new Map();
  let inRange = 0n;
  for (let i = 0, n = 1 + rand(6); i < n; i++) {
    const lower = center - spacing * (1 + rand(Math.floor(3000 / spacing) + 50));
    const upper = center + spacing * (1 + rand(Math.floor(3000 / spacing) + 50));
    const liquidity = BigInt(1 + rand(1e9)) * 10n ** BigInt(6 + rand(12));
    nets.set(lower, (nets.get(lower) ?? 0n) + liquidity);
    nets.set(upper, (nets.get(upper) ?? 0n) - liquidity);
    inRange += liquidity;
  }
  const words = {};
  const ticks = {};
  for (const [t, net] of nets) {
    if (net === 0n) continue;
    const c = t / spacing;
    const pos = c >> 8;
    words[pos] = ((BigInt(words[pos] ?? '0')) | (1n << BigInt(((c % 256) + 256) % 256))).toString();
    ticks[t] = net.toString();
  }
  // Every word the swaps may walk, so that no case stops for want of one.
  for (let w = (center / spacing >> 8) - 30; w <= (center / spacing >> 8) + 30; w++) words[w] ??= '0';
  const tick = center + rand(spacing);
  const sqrt = v3.TickMath.getSqrtRatioAtTick(tick);
  return { fee, spacing, tick, sqrt, liquidity: inRange, provider: new BitmapTicks({ words, ticks }, 'p') };
}

test('clmath.swap is the SDK v3Swap, bit for bit', async () => {
  const rand = rng(20261126);
  let compared = 0;
  let crossed = 0;
  for (let i = 0; i < 3000; i++) {
    const p = randomPool(rand);
    const zeroForOne = rand(2) === 0;
    const exactIn = rand(2) === 0;
    const amount = BigInt(1 + rand(1e9)) * 10n ** BigInt(rand(16));
    const specified = exactIn ? amount : -amount;
    const limited = rand(3) === 0;
    const sqrt = BigInt(p.sqrt.toString());
    const limit = limited ? (zeroForOne ? sqrt - sqrt / 50n : sqrt + sqrt / 50n) : undefined;
    let expected;
    try {
      expected = await v3.v3Swap(JSBI.BigInt(p.fee), p.sqrt, p.tick, JSBI.BigInt(p.liquidity.toString()), p.spacing,
        p.provider, zeroForOne, JSBI.BigInt(specified.toString()), limit === undefined ? undefined : JSBI.BigInt(limit.toString()));
    } catch (e) {
      assert.throws(() => clmath.swap(BigInt(p.fee), sqrt, p.tick, p.liquidity, p.spacing, p.provider, zeroForOne, specified, limit),
        `case ${i}: the SDK threw ${e.message}`);
      continue;
    }
    const got = clmath.swap(BigInt(p.fee), sqrt, p.tick, p.liquidity, p.spacing, p.provider, zeroForOne, specified, limit);
    const what = `case ${i} (fee ${p.fee}, tick ${p.tick}, ${zeroForOne ? '0->1' : '1->0'}, ${specified})`;
    assert.strictEqual(got.amountCalculated.toString(), expected.amountCalculated.toString(), what);
    assert.strictEqual(got.sqrtRatioX96.toString(), expected.sqrtRatioX96.toString(), what);
    assert.strictEqual(got.liquidity.toString(), expected.liquidity.toString(), what);
    if (got.tickCurrent !== null) assert.strictEqual(got.tickCurrent, expected.tickCurrent, what);
    compared++;
    if (got.liquidity !== p.liquidity) crossed++;
  }
  assert.ok(compared > 2000, `only ${compared} cases compared`);
  assert.ok(crossed > 100, `only ${crossed} cases crossed an initialized tick`);
});

test('tick math matches the SDK at every 997th tick', () => {
  for (let t = -887272; t <= 887272; t += 997) {
    const sdk = v3.TickMath.getSqrtRatioAtTick(t).toString();
    assert.strictEqual(clmath.sqrtRatioAtTick(t).toString(), sdk, `tick ${t}`);
    assert.strictEqual(clmath.tickAtSqrtRatio(BigInt(sdk)), t, `sqrt of tick ${t}`);
    assert.strictEqual(clmath.tickAtSqrtRatio(BigInt(sdk) + 1n), v3.TickMath.getTickAtSqrtRatio(JSBI.BigInt((BigInt(sdk) + 1n).toString())));
  }
});
