'use strict';
// The best route for a trade over pools the host read, by the SDKs' own pool math, and its
// UniversalRouter calldata by the universal-router SDK.
//
// The search is smart-order-router's: every path of up to `max_hops` pools is quoted for each
// `step_percent` share of the amount, and the best set of up to `max_splits` paths that share no
// pool and whose shares make 100 % wins (most out for exact-in, least in for exact-out). Gas is
// not weighed: the host does not price it here, and on a devnet it is free.

const JSBI = require('jsbi');
const { CurrencyAmount, Percent, Token, TradeType } = require('@uniswap/sdk-core');
const v2 = require('@uniswap/v2-sdk');
const v3 = require('@uniswap/v3-sdk');
const v4 = require('@uniswap/v4-sdk');
const { Trade, MixedRouteSDK } = require('@uniswap/router-sdk');
const { SwapRouter, UniversalRouterVersion } = require('@uniswap/universal-router-sdk');
const { codes, RpcError, invalid, big, tick, sqrtPrice, feeAndSpacing, address } = require('./params.cjs');
const { BitmapTicks } = require('./ticks.cjs');
const clmath = require('./clmath.cjs');

const MAX_POOLS = 64;
// Paths kept per ranking for the split search (see `candidates`).
const CANDIDATES = 6;
const ZERO = JSBI.BigInt(0);

function integer(params, name, lo, hi, fallback) {
  const v = params[name] ?? fallback;
  if (!Number.isInteger(v) || v < lo || v > hi) throw invalid(`\`${name}\` must be an integer from ${lo} to ${hi}`);
  return v;
}

/** The SDK entity of one pool the host read, with the label the host knows it by. */
function pool(p, tokens) {
  if (typeof p !== 'object' || p === null) throw invalid('each of `pools` must be an object');
  if (typeof p.id !== 'string' || p.id.length === 0 || p.id.length > 80) throw invalid('each pool needs an `id` string');
  const at = (name) => {
    const a = address(p, name);
    const t = tokens.get(a);
    if (!t) throw invalid(`pool ${p.id}: \`${name}\` ${a} is not in \`tokens\``);
    return t;
  };
  const [t0, t1] = [at('token0'), at('token1')];
  if (t0.sortsBefore(t1) === false) throw invalid(`pool ${p.id}: token0 must sort before token1`);
  const ticks = () => new BitmapTicks(p, p.id);
  switch (p.protocol) {
    case 'v2':
      return new v2.Pair(CurrencyAmount.fromRawAmount(t0, big(p, 'reserve0')), CurrencyAmount.fromRawAmount(t1, big(p, 'reserve1')));
    case 'v3': {
      const [fee, spacing] = feeAndSpacing(p);
      if (v3.TICK_SPACINGS[fee] !== spacing) throw invalid(`pool ${p.id}: a V3 pool of fee ${fee} has another tick spacing`);
      return new v3.Pool(t0, t1, fee, sqrtPrice(p, 'sqrt_price_x96'), big(p, 'liquidity'), tick(p, 'tick'), ticks());
    }
    case 'v4': {
      const [fee, spacing] = feeAndSpacing(p);
      const hooks = address(p, 'hooks');
      if (!/^0x0{40}$/.test(hooks)) throw invalid(`pool ${p.id}: a hooked pool's amounts are its hook's to say; not routed`);
      return new v4.Pool(t0, t1, fee, spacing, hooks, sqrtPrice(p, 'sqrt_price_x96'), big(p, 'liquidity'), tick(p, 'tick'), ticks());
    }
    default:
      throw invalid(`pool ${p.id}: \`protocol\` must be v2, v3 or v4`);
  }
}

// The SDK pools of the last requests, by their whole description: the host sends the same
// state for every route at one block, and building a V4 pool hashes its key.
const entities = new Map();
const MAX_ENTITIES = 256;
function cached(p, tokens, chainId) {
  const key = `${chainId}:${JSON.stringify(p)}:${JSON.stringify([p.token0, p.token1].map((t) => t && tokens.get(t.toLowerCase())?.decimals))}`;
  let entity = entities.get(key);
  if (entity === undefined) {
    entity = pool(p, tokens);
    if (entities.size >= MAX_ENTITIES) entities.delete(entities.keys().next().value);
    entities.set(key, entity);
  }
  return entity;
}

const protocolOf = (pool) => (pool instanceof v2.Pair ? 'v2' : pool instanceof v3.Pool ? 'v3' : 'v4');
const otherToken = (pool, token) => (pool.token0.equals(token) ? pool.token1 : pool.token0);

/** The tokens a path passes, from `input`. */
function tokenPath(pools, path, input) {
  const out = [input];
  for (const i of path) out.push(otherToken(pools[i], out[out.length - 1]));
  return out;
}

/** Every path of at most `maxHops` distinct pools from `input` to `output`, no token twice. */
function paths(pools, input, output, maxHops) {
  const out = [];
  const walk = (token, used, seen) => {
    if (used.length >= maxHops) return;
    for (let i = 0; i < pools.length; i++) {
      const p = pools[i];
      if (used.includes(i) || !(p.token0.equals(token) || p.token1.equals(token))) continue;
      const next = otherToken(p, token);
      if (next.equals(output)) out.push([...used, i]);
      else if (!seen.some((t) => t.equals(next))) walk(next, [...used, i], [...seen, next]);
    }
  };
  walk(input, [], [input]);
  return out;
}

/**
 * One path's other side for `amount` (exact-in: what comes out; exact-out: what goes in), or
 * null when its pools cannot fill it. A missing tick word is noted in `needs`, not guessed.
 */
async function quote(pools, path, input, output, exactIn, amount, needs) {
  try {
    if (exactIn) {
      let current = CurrencyAmount.fromRawAmount(input, amount);
      for (const i of path) [current] = await pools[i].getOutputAmount(current);
      return current.quotient;
    }
    let current = CurrencyAmount.fromRawAmount(output, amount);
    for (const i of [...path].reverse()) [current] = await pools[i].getInputAmount(current);
    return current.quotient;
  } catch (e) {
    if (e instanceof RpcError && e.code === codes.NEED_TICKS) {
      needs.set(JSON.stringify(e.data), e.data);
      return undefined;
    }
    // The SDK refuses what the pool cannot do (reserves, liquidity): this path cannot fill it.
    return null;
  }
}

/**
 * The search's quote of one path: the same swap math as `quote` — the SDK's `v3Swap` for V3 and
 * (hookless) V4 pools, the pair formula for V2 — without building a new SDK pool per hop (their
 * constructors hash addresses and pool keys, which dominated the search). Concentrated pools
 * swap within a price move of `SEARCH_PRICE_FACTOR`; a path that would move one further counts
 * as unable to fill its share. The chosen route is re-quoted by `quote`, through the SDK's
 * entities, before anything is returned.
 */
async function searchQuote(pools, path, input, exactIn, amount, needs, memo) {
  try {
    let current = BigInt(amount.toString());
    // Exact-out walks the path backwards, from the output.
    const hops = exactIn ? path : [...path].reverse();
    const tokens = tokenPath(pools, path, input);
    for (let h = 0; h < hops.length; h++) {
      const pool = pools[hops[h]];
      const from = exactIn ? tokens[h] : tokens[path.length - 1 - h];
      const zeroForOne = pool.token0.equals(from);
      // Paths that start alike share their first hop's quotes.
      const key = `${hops[h]}:${zeroForOne}:${current}`;
      let next = memo.get(key);
      if (next === undefined) {
        next = protocolOf(pool) === 'v2' ? v2Hop(pool, zeroForOne, exactIn, current) : clHop(pool, zeroForOne, exactIn, current);
        memo.set(key, next);
      }
      if (next === null) return null;
      current = next;
    }
    return current;
  } catch (e) {
    if (e instanceof RpcError && e.code === codes.NEED_TICKS) {
      needs.set(JSON.stringify(e.data), e.data);
      return undefined;
    }
    return null;
  }
}

// Each SDK pool's numbers as native BigInts, converted once (JSBI's toString is slow).
const natives = new WeakMap();
function native(pool) {
  let n = natives.get(pool);
  if (n === undefined) {
    n = pool instanceof v2.Pair
      ? { r0: BigInt(pool.reserve0.quotient.toString()), r1: BigInt(pool.reserve1.quotient.toString()) }
      : { sqrtP: BigInt(pool.sqrtRatioX96.toString()), liquidity: BigInt(pool.liquidity.toString()), fee: BigInt(pool.fee) };
    natives.set(pool, n);
  }
  return n;
}

/** A V2 pair's other side, as the pair computes it (0.3 % fee; exact-out rounds the input up). */
function v2Hop(pair, zeroForOne, exactIn, amount) {
  const { r0, r1 } = native(pair);
  const [rIn, rOut] = zeroForOne ? [r0, r1] : [r1, r0];
  if (exactIn) {
    const withFee = amount * 997n;
    return (withFee * rOut) / (rIn * 1000n + withFee);
  }
  if (amount >= rOut) return null;
  return (rIn * amount * 1000n) / ((rOut - amount) * 997n) + 1n;
}

const SEARCH_PRICE_FACTOR = 2n; // of the sqrt price: the price moves at most 4x

/** A concentrated-liquidity pool's other side, by `clmath.swap` (the SDK's v3Swap); null past the limit. */
function clHop(pool, zeroForOne, exactIn, amount) {
  const { sqrtP, liquidity, fee } = native(pool);
  const limit = zeroForOne ? sqrtP / SEARCH_PRICE_FACTOR : sqrtP * SEARCH_PRICE_FACTOR;
  const bounded = limit > clmath.MIN_SQRT_RATIO && limit < clmath.MAX_SQRT_RATIO ? limit : undefined;
  const r = clmath.swap(fee, sqrtP, pool.tickCurrent, liquidity, pool.tickSpacing,
    pool.tickDataProvider, zeroForOne, exactIn ? amount : -amount, bounded);
  if (bounded !== undefined && r.sqrtRatioX96 === bounded) return null;
  return exactIn ? -r.amountCalculated : r.amountCalculated;
}

/** Shares of `amount` in whole `step`s of 100 %: share k is amount·k·step/100, rounded down. */
const share = (amount, percent) => JSBI.divide(JSBI.multiply(amount, JSBI.BigInt(percent)), JSBI.BigInt(100));

/** The best set of disjoint paths whose percents make 100, by their quotes per percent. */
function bestSplit(candidates, paths, quotes, steps, maxSplits, better) {
  let best = null;
  const search = (from, remaining, chosen, used, total) => {
    if (remaining === 0) {
      if (best === null || better(total, best.total)) best = { total, chosen: [...chosen] };
      return;
    }
    if (chosen.length === maxSplits) return;
    for (let c = from; c < candidates.length; c++) {
      const i = candidates[c];
      if (paths[i].some((p) => used.has(p))) continue;
      // The last share takes what is left; earlier ones leave room for a later path.
      for (let k = steps.length; k >= 1; k--) {
        const percent = steps[k - 1];
        if (percent > remaining || (percent < remaining && chosen.length + 1 === maxSplits)) continue;
        const q = quotes[i].get(percent);
        if (q === null || q === undefined) continue;
        paths[i].forEach((p) => used.add(p));
        chosen.push([i, percent]);
        search(c + 1, remaining - percent, chosen, used, total + q);
        chosen.pop();
        paths[i].forEach((p) => used.delete(p));
      }
    }
  };
  search(0, 100, [], new Set(), 0n);
  return best;
}

/**
 * The paths worth splitting over: the best ones for the whole amount and the best ones for a
 * single step (a shallow pool is poor for all of it and may be the best for a tenth).
 */
function candidates(quotes, step, better) {
  const rank = (percent) =>
    quotes
      .map((q, i) => [i, q.get(percent)])
      .filter(([, q]) => q !== null && q !== undefined)
      .sort(([, a], [, b]) => (better(a, b) ? -1 : better(b, a) ? 1 : 0))
      .slice(0, CANDIDATES)
      .map(([i]) => i);
  return [...new Set([...rank(100), ...rank(step)])].sort((a, b) => a - b);
}

/** The router-sdk route object for a path: one version's own route, or a mixed one. */
function sdkRoute(pools, path, input, output) {
  const ps = path.map((i) => pools[i]);
  const kinds = new Set(ps.map(protocolOf));
  if (kinds.size > 1) return ['mixedRoutes', 'mixedRoute', new MixedRouteSDK(ps, input, output)];
  switch ([...kinds][0]) {
    case 'v2':
      return ['v2Routes', 'routev2', new v2.Route(ps, input, output)];
    case 'v3':
      return ['v3Routes', 'routev3', new v3.Route(ps, input, output)];
    default:
      return ['v4Routes', 'routev4', new v4.Route(ps, input, output)];
  }
}

/**
 * `route`: the best route for `amount` of `token_in` (exact-in) or of `token_out` (exact-out),
 * and, with `swap: {recipient, slippage_bps, deadline}`, the UniversalRouter calldata of it.
 */
async function route(p) {
  const chainId = integer(p, 'chain_id', 1, Number.MAX_SAFE_INTEGER);
  if (p.trade_type !== 'exact_in' && p.trade_type !== 'exact_out') throw invalid('`trade_type` must be exact_in or exact_out');
  const exactIn = p.trade_type === 'exact_in';
  const amount = big(p, 'amount');
  if (JSBI.equal(amount, ZERO)) throw invalid('`amount` must not be 0');
  const maxHops = integer(p, 'max_hops', 1, 3, 2);
  const maxSplits = integer(p, 'max_splits', 1, 4, 3);
  const step = integer(p, 'step_percent', 1, 100, 10);
  if (100 % step !== 0) throw invalid('`step_percent` must divide 100');
  if (typeof p.tokens !== 'object' || p.tokens === null) throw invalid('`tokens` maps each address to its decimals');
  const tokens = new Map();
  for (const [a, d] of Object.entries(p.tokens)) {
    const addr = address({ a }, 'a');
    if (!Number.isInteger(d) || d < 0 || d > 255) throw invalid(`\`tokens\`: ${a}'s decimals must be 0 to 255`);
    tokens.set(addr, new Token(chainId, addr, d));
  }
  const input = tokens.get(address(p, 'token_in'));
  const output = tokens.get(address(p, 'token_out'));
  if (!input || !output) throw invalid('`token_in` and `token_out` must be in `tokens`');
  if (input.equals(output)) throw invalid('`token_in` and `token_out` must differ');
  if (!Array.isArray(p.pools) || p.pools.length > MAX_POOLS) throw invalid(`\`pools\` must be a list of at most ${MAX_POOLS}`);
  const pools = p.pools.map((x) => cached(x, tokens, chainId));
  const ids = p.pools.map((x) => x.id);

  // The universal-router SDK encodes a path mixing versions for exact-in only.
  const all = paths(pools, input, output, maxHops).filter(
    (path) => exactIn || new Set(path.map((i) => protocolOf(pools[i]))).size === 1,
  );
  if (all.length === 0) throw new RpcError(codes.NO_ROUTE, `no path of at most ${maxHops} pools joins the tokens`);
  const steps = Array.from({ length: 100 / step }, (_, k) => (k + 1) * step);
  const needs = new Map();
  const quotes = all.map(() => new Map());
  const memo = new Map();
  for (let i = 0; i < all.length; i++) {
    for (const percent of steps) {
      quotes[i].set(percent, await searchQuote(pools, all[i], input, exactIn, share(amount, percent), needs, memo));
    }
  }
  if (needs.size > 0) {
    throw new RpcError(codes.NEED_TICKS, `the routes reach ${needs.size} tick words not given`, { needs: [...needs.values()] });
  }
  const better = exactIn ? (a, b) => a > b : (a, b) => a < b;
  const best = bestSplit(candidates(quotes, step, better), all, quotes, steps, maxSplits, better);
  if (best === null) throw new RpcError(codes.NO_ROUTE, 'no route of these pools can fill the amount');

  // The chosen shares, the last taking the rounding remainder so they add up to the amount.
  const legs = [];
  let left = amount;
  for (const [n, [i, percent]] of best.chosen.entries()) {
    const part = n === best.chosen.length - 1 ? left : share(amount, percent);
    left = JSBI.subtract(left, part);
    const other = await quote(pools, all[i], input, output, exactIn, part, needs);
    if (other === null || other === undefined) throw new RpcError(codes.NO_ROUTE, 'the chosen route cannot fill its share');
    const [amountIn, amountOut] = exactIn ? [part, other] : [other, part];
    // The router runs a V2 path forward from the input it computed (rounded up), so the output
    // can exceed the one asked for by a few wei: report what the pairs will pay.
    let paid = amountOut;
    if (!exactIn && all[i].every((p) => protocolOf(pools[p]) === 'v2')) {
      paid = await quote(pools, all[i], input, output, true, amountIn, needs);
    }
    legs.push({ path: all[i], percent, amountIn, amountOut, paid });
  }
  const result = {
    amount_in: legs.reduce((sum, leg) => JSBI.add(sum, leg.amountIn), ZERO).toString(),
    amount_out: legs.reduce((sum, leg) => JSBI.add(sum, leg.paid), ZERO).toString(),
    routes: legs.map((leg) => ({
      percent: leg.percent,
      pools: leg.path.map((i) => ids[i]),
      protocols: leg.path.map((i) => protocolOf(pools[i])),
      path: tokenPath(pools, leg.path, input).map((t) => t.address.toLowerCase()),
      amount_in: leg.amountIn.toString(),
      amount_out: leg.paid.toString(),
    })),
    paths_quoted: all.length,
  };
  if (p.swap !== undefined) {
    // Built only for the calldata: the SDK's Trade computes every pool's address.
    const routes = { tradeType: exactIn ? TradeType.EXACT_INPUT : TradeType.EXACT_OUTPUT };
    for (const leg of legs) {
      const [list, key, r] = sdkRoute(pools, leg.path, input, output);
      (routes[list] ??= []).push({
        [key]: r,
        inputAmount: CurrencyAmount.fromRawAmount(input, leg.amountIn),
        outputAmount: CurrencyAmount.fromRawAmount(output, leg.amountOut),
      });
    }
    const trade = new Trade(routes);
    const s = p.swap;
    if (typeof s !== 'object' || s === null) throw invalid('`swap` must be an object');
    const bps = integer(s, 'slippage_bps', 0, 5000);
    const deadline = integer(s, 'deadline', 1, Number.MAX_SAFE_INTEGER);
    const options = {
      slippageTolerance: new Percent(bps, 10000),
      recipient: address(s, 'recipient'),
      deadlineOrPreviousBlockhash: deadline,
      // The deployed router's V4 path params carry per-hop slippage (2.1.1 and later).
      urVersion: UniversalRouterVersion.V2_1_1,
    };
    const { calldata, value } = SwapRouter.swapCallParameters(trade, options);
    result.calldata = calldata;
    result.value = BigInt(value).toString();
    result.minimum_out = trade.minimumAmountOut(options.slippageTolerance).quotient.toString();
    result.maximum_in = trade.maximumAmountIn(options.slippageTolerance).quotient.toString();
  }
  return result;
}

module.exports = { route };
