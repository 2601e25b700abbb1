'use strict';
// Morpho Blue's position math by Morpho's own SDK (@morpho-org/blue-sdk): what a run of actions in
// one market does to an account's position, from the market's stored totals, its IRM's rate and
// the seconds since its last accrual — interest first, as Morpho accrues it, then each action
// with the rounding Morpho gives it. Loaded on first use: the SDK pulls in viem.

const { invalid } = require('./params.cjs');

let sdk;
const blue = () => (sdk ??= require('@morpho-org/blue-sdk'));

const KINDS = ['supply', 'withdraw', 'borrow', 'repay', 'supply_collateral', 'withdraw_collateral'];

/** A non-negative integer given as a decimal string, as a native bigint. */
function uint(params, name) {
  const v = params[name];
  if (typeof v !== 'string' || !/^[0-9]+$/.test(v) || v.length > 80) {
    throw invalid(`\`${name}\` must be a non-negative integer as a decimal string`);
  }
  return BigInt(v);
}

/**
 * `market`: {total_supply_assets, total_supply_shares, total_borrow_assets, total_borrow_shares,
 * fee, rate, elapsed}; `actions`: [{kind, assets, shares}] (one of assets and shares non-zero,
 * as Morpho takes them; collateral in `assets`). Returns the position's change
 * {supply_shares, borrow_shares, collateral} (signed decimal strings) and each action's
 * {assets, shares}.
 */
function morpho_position(params) {
  const { MarketUtils } = blue();
  if (typeof params.market !== 'object' || params.market === null) throw invalid('`market` must be an object');
  if (!Array.isArray(params.actions) || params.actions.length === 0) throw invalid('`actions` must be a non-empty list');
  const p = params.market;
  const m = {
    totalSupplyAssets: uint(p, 'total_supply_assets'),
    totalSupplyShares: uint(p, 'total_supply_shares'),
    totalBorrowAssets: uint(p, 'total_borrow_assets'),
    totalBorrowShares: uint(p, 'total_borrow_shares'),
    fee: uint(p, 'fee'),
  };
  const { interest, feeShares } = MarketUtils.getAccruedInterest(uint(p, 'rate'), m, uint(p, 'elapsed'));
  m.totalSupplyAssets += interest;
  m.totalBorrowAssets += interest;
  m.totalSupplyShares += feeShares;
  const delta = { supply_shares: 0n, borrow_shares: 0n, collateral: 0n };
  const done = params.actions.map((a, i) => {
    if (typeof a !== 'object' || a === null || !KINDS.includes(a.kind)) {
      throw invalid(`action ${i}: \`kind\` must be one of ${KINDS.join(', ')}`);
    }
    let assets = uint(a, 'assets');
    let shares = uint(a, 'shares');
    if ((assets === 0n) === (shares === 0n) && !a.kind.endsWith('collateral')) {
      throw invalid(`action ${i}: exactly one of \`assets\` and \`shares\` must be non-zero`);
    }
    switch (a.kind) {
      case 'supply':
        if (assets > 0n) shares = MarketUtils.toSupplyShares(assets, m, 'Down');
        else assets = MarketUtils.toSupplyAssets(shares, m, 'Up');
        m.totalSupplyAssets += assets;
        m.totalSupplyShares += shares;
        delta.supply_shares += shares;
        break;
      case 'withdraw':
        if (assets > 0n) shares = MarketUtils.toSupplyShares(assets, m, 'Up');
        else assets = MarketUtils.toSupplyAssets(shares, m, 'Down');
        m.totalSupplyAssets -= assets;
        m.totalSupplyShares -= shares;
        delta.supply_shares -= shares;
        break;
      case 'borrow':
        if (assets > 0n) shares = MarketUtils.toBorrowShares(assets, m, 'Up');
        else assets = MarketUtils.toBorrowAssets(shares, m, 'Down');
        m.totalBorrowAssets += assets;
        m.totalBorrowShares += shares;
        delta.borrow_shares += shares;
        break;
      case 'repay':
        if (assets > 0n) shares = MarketUtils.toBorrowShares(assets, m, 'Down');
        else assets = MarketUtils.toBorrowAssets(shares, m, 'Up');
        m.totalBorrowAssets -= assets;
        m.totalBorrowShares -= shares;
        delta.borrow_shares -= shares;
        break;
      case 'supply_collateral':
        delta.collateral += assets;
        break;
      case 'withdraw_collateral':
        delta.collateral -= assets;
        break;
    }
    return { assets: assets.toString(), shares: shares.toString() };
  });
  return {
    supply_shares: delta.supply_shares.toString(),
    borrow_shares: delta.borrow_shares.toString(),
    collateral: delta.collateral.toString(),
    actions: done,
  };
}

module.exports = { morpho_position };
