// Pendle's own market math (@pendle/core-v2-offchain-math) on many market states at once: PT
// sold for SY, SY paid for an exact PT, SY sold for PT (searched, with the same approximation
// the devnet's static router is set to), liquidity removed, and the market's exchange rate at
// its implied rate (what the PT/YT/LP oracle prices PT from). The Rust side holds the devnet's
// static router and oracle, read at the same states, to every answer.
// Usage: node pendle_math.mjs < cases.json   (a JSON array; integers as decimal strings)
import { createRequire } from "node:module";
import { readFileSync } from "node:fs";

// The package's ES build imports directories, which Node refuses; its CommonJS build loads.
const { FixedX18, MarketExchangeRate, MarketStaticMath, PyIndex } = createRequire(import.meta.url)(
  "@pendle/core-v2-offchain-math",
);

// The static router's (see host/devnet/src/pendle.rs), Pendle's default: stop within 1e-4 of the input.
const APPROX = {
  guessMin: 0n,
  guessMax: 2n ** 256n - 1n,
  guessOffchain: 0n,
  maxIteration: 256n,
  eps: FixedX18.fromRawValue(100_000_000_000_000n),
};
const cases = JSON.parse(readFileSync(0, "utf8"));
const s = (v) => v.toString();
// An answer, or the error it throws (a state or size the market refuses).
const attempt = (f) => {
  try {
    return f();
  } catch (e) {
    return { error: String(e && e.message ? e.message : e).slice(0, 120) };
  }
};
const out = cases.map((c) => {
  const n = Object.fromEntries(Object.entries(c).map(([k, v]) => [k, k === "treasury" ? v : BigInt(v)]));
  const math = MarketStaticMath.from({
    marketState: {
      totalPt: n.totalPt,
      totalSy: n.totalSy,
      totalLp: n.totalLp,
      treasury: c.treasury,
      scalarRoot: n.scalarRoot,
      expiry: n.expiry,
      lnFeeRateRoot: n.lnFeeRateRoot,
      reserveFeePercent: n.reserveFeePercent,
      lastLnImpliedRate: n.lastLnImpliedRate,
    },
    pyIndex: PyIndex.create(n.pyIndex),
    blockTime_s: n.blockTime,
  });
  return {
    pt_for_sy: attempt(() => {
      const r = math.swapExactPtForSyStatic(n.ptIn);
      return { out: s(r.netSyOut), fee: s(r.netSyFee) };
    }),
    sy_for_exact_pt: attempt(() => {
      const r = math.swapSyForExactPtStatic(n.ptOut);
      return { out: s(r.netSyIn), fee: s(r.netSyFee) };
    }),
    sy_for_pt: attempt(() => {
      const r = math.swapExactSyForPtStatic(n.syIn, { approxParams: APPROX });
      return { out: s(r.netPtOut), fee: s(r.netSyFee) };
    }),
    remove: attempt(() => {
      const r = math.removeLiquidityDualSyAndPtStatic(n.lpIn);
      return { out: s(r.netSyOut), fee: s(r.netPtOut) };
    }),
    asset_to_pt: s(
      MarketExchangeRate.fromLnImpliedRate(FixedX18.fromRawValue(n.lastLnImpliedRate), n.expiry - n.blockTime).rawRate,
    ),
  };
});
console.log(JSON.stringify(out));
