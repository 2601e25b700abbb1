// Morpho's own TypeScript SDK (@morpho-org/blue-sdk) on a market as the chain has it: the id it
// derives from the market's parameters, and the most a collateral amount lets a borrower owe
// (`getMaxBorrowAssets`). The devnet's tests hold both against Morpho Blue itself.
// Usage: node morpho_check.mjs '{"params":{loanToken,collateralToken,oracle,irm,lltv},
//   "totals":{totalSupplyAssets,totalSupplyShares,totalBorrowAssets,totalBorrowShares,lastUpdate,fee},
//   "price":"…","collateral":"…"}'   (integers as decimal strings)
import { Market, MarketParams } from "@morpho-org/blue-sdk";

const input = JSON.parse(process.argv[2]);
const params = new MarketParams({ ...input.params, lltv: BigInt(input.params.lltv) });
const totals = Object.fromEntries(Object.entries(input.totals).map(([k, v]) => [k, BigInt(v)]));
const market = new Market({ params, ...totals, price: BigInt(input.price) });
const max = market.getMaxBorrowAssets(BigInt(input.collateral));
console.log(JSON.stringify({ id: params.id, max_borrow: max === undefined ? null : max.toString() }));
