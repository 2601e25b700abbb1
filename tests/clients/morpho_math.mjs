// Morpho's own TypeScript SDK (@morpho-org/blue-sdk) on many cases at once: share conversions
// both ways and both roundings, interest accrual with its fee shares, the most a collateral lets a
// borrower owe, health and whether Morpho would call the position healthy. The Rust side
// (`bardo-morpho-math`) must answer every case the same, in base units.
// Usage: node morpho_math.mjs < cases.json   (a JSON array; integers as decimal strings)
import { MarketUtils, SharesMath } from "@morpho-org/blue-sdk";
import { readFileSync } from "node:fs";

const cases = JSON.parse(readFileSync(0, "utf8"));
const out = cases.map((c) => {
  const n = Object.fromEntries(Object.entries(c).map(([k, v]) => [k, BigInt(v)]));
  const market = {
    totalSupplyAssets: n.totalSupplyAssets,
    totalSupplyShares: n.totalSupplyShares,
    totalBorrowAssets: n.totalBorrowAssets,
    totalBorrowShares: n.totalBorrowShares,
    fee: n.fee,
    price: n.price,
  };
  const position = { collateral: n.collateral, borrowShares: n.borrowShares };
  const params = { lltv: n.lltv };
  const { interest, feeShares } = MarketUtils.getAccruedInterest(n.rate, market, n.elapsed);
  const s = (v) => (v === undefined ? null : v.toString());
  return {
    shares_down: s(SharesMath.toShares(n.assets, n.totalSupplyAssets, n.totalSupplyShares, "Down")),
    shares_up: s(SharesMath.toShares(n.assets, n.totalSupplyAssets, n.totalSupplyShares, "Up")),
    assets_down: s(SharesMath.toAssets(n.shares, n.totalSupplyAssets, n.totalSupplyShares, "Down")),
    assets_up: s(SharesMath.toAssets(n.shares, n.totalSupplyAssets, n.totalSupplyShares, "Up")),
    supply_assets: s(MarketUtils.toSupplyAssets(n.shares, market)),
    borrow_assets: s(MarketUtils.toBorrowAssets(n.borrowShares, market)),
    interest: s(interest),
    fee_shares: s(feeShares),
    max_borrow: s(MarketUtils.getMaxBorrowAssets(n.collateral, market, params)),
    health_factor: s(MarketUtils.getHealthFactor(position, market, params)),
    healthy: MarketUtils.isHealthy(position, market, params),
  };
});
console.log(JSON.stringify(out));
