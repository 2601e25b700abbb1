'use strict';
// Bardo's Uniswap sidecar: Uniswap's own TypeScript SDKs, answering the host over JSON-RPC 2.0 on
// a Unix socket (one JSON message per line). The host starts it (`node server.cjs <socket>`),
// waits for the `listening` line on stdout, says `hello`, pings it, and restarts it when it dies
// or hangs. Nothing here touches a chain or a key: every input is state the host read itself.
//
// CommonJS on purpose: the SDKs' ESM builds import directories, which Node's ESM loader refuses.

const fs = require('fs');
const net = require('net');
const path = require('path');
const JSBI = require('jsbi');
const { CurrencyAmount, Token } = require('@uniswap/sdk-core');
const v2 = require('@uniswap/v2-sdk');
const v3 = require('@uniswap/v3-sdk');

/** The protocol the host and this program agree on at `hello`; bumped on any breaking change. */
const PROTOCOL = 1;
const PACKAGES = [
  '@uniswap/sdk-core', '@uniswap/v2-sdk', '@uniswap/v3-sdk', '@uniswap/v4-sdk', '@uniswap/router-sdk',
  '@uniswap/universal-router-sdk', '@uniswap/permit2-sdk',
];

// JSON-RPC error codes: the standard ones, and ours above -32000.
const PARSE_ERROR = -32700;
const INVALID_REQUEST = -32600;
const METHOD_NOT_FOUND = -32601;
const INVALID_PARAMS = -32602;
const SDK_ERROR = -32000;
const NEED_TICKS = -32001;
const NO_HELLO = -32002;

class RpcError extends Error {
  constructor(code, message, data) {
    super(message);
    this.code = code;
    this.data = data;
  }
}

const invalid = (message) => new RpcError(INVALID_PARAMS, message);

/** An integer param given as a decimal string (amounts, prices: beyond 2^53). */
function big(params, name, { signed = false } = {}) {
  const v = params[name];
  if (typeof v !== 'string' || !(signed ? /^-?[0-9]+$/ : /^[0-9]+$/).test(v) || v.length > 80) {
    throw invalid(`\`${name}\` must be a${signed ? 'n' : ' non-negative'} integer as a decimal string`);
  }
  return JSBI.BigInt(v);
}

/** A tick within the protocol's bounds. */
function tick(params, name) {
  const v = params[name];
  if (!Number.isInteger(v) || v < v3.TickMath.MIN_TICK || v > v3.TickMath.MAX_TICK) {
    throw invalid(`\`${name}\` must be an integer tick from ${v3.TickMath.MIN_TICK} to ${v3.TickMath.MAX_TICK}`);
  }
  return v;
}

/** A sqrt price within the protocol's bounds, X96. */
function sqrtPrice(params, name) {
  const v = big(params, name);
  if (JSBI.lessThan(v, v3.TickMath.MIN_SQRT_RATIO) || JSBI.greaterThanOrEqual(v, v3.TickMath.MAX_SQRT_RATIO)) {
    throw invalid(`\`${name}\` must be from MIN_SQRT_RATIO to below MAX_SQRT_RATIO`);
  }
  return v;
}

function decimals(params, name) {
  const v = params[name];
  if (!Number.isInteger(v) || v < 0 || v > 255) throw invalid(`\`${name}\` must be an integer from 0 to 255`);
  return v;
}

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

/**
 * A pool's initialized ticks as the host read them: bitmap words by position and each
 * initialized tick's liquidityNet. A swap that walks past the words given stops with
 * NEED_TICKS naming the word to read, and the host calls again with it.
 */
class BitmapTicks {
  constructor(params, spacing) {
    this.spacing = spacing;
    this.words = new Map();
    this.nets = new Map();
    const words = params.words ?? {};
    const ticks = params.ticks ?? {};
    if (typeof words !== 'object' || typeof ticks !== 'object') throw invalid('`words` and `ticks` must be objects');
    for (const [pos, word] of Object.entries(words)) {
      if (!/^-?[0-9]+$/.test(pos) || typeof word !== 'string' || !/^[0-9]+$/.test(word)) {
        throw invalid('`words` maps a word position to its bitmap as a decimal string');
      }
      this.words.set(Number(pos), BigInt(word));
    }
    for (const [t, net] of Object.entries(ticks)) {
      if (!/^-?[0-9]+$/.test(t) || typeof net !== 'string' || !/^-?[0-9]+$/.test(net)) {
        throw invalid('`ticks` maps a tick to its liquidityNet as a decimal string');
      }
      this.nets.set(Number(t), net);
    }
  }

  async getTick(tick) {
    const net = this.nets.get(tick);
    if (net === undefined) throw new RpcError(NEED_TICKS, `tick ${tick} is initialized but was not given`, { tick });
    return { liquidityNet: JSBI.BigInt(net) };
  }

  word(pos) {
    const word = this.words.get(pos);
    if (word === undefined) throw new RpcError(NEED_TICKS, `the swap reaches bitmap word ${pos}`, { word: pos });
    return word;
  }

  /** TickBitmap.nextInitializedTickWithinOneWord, on the words given. */
  async nextInitializedTickWithinOneWord(tick, lte, spacing) {
    let compressed = Math.trunc(tick / spacing);
    if (tick < 0 && tick % spacing !== 0) compressed -= 1;
    const position = (c) => [c >> 8, ((c % 256) + 256) % 256];
    if (lte) {
      const [pos, bit] = position(compressed);
      const masked = this.word(pos) & ((1n << BigInt(bit)) - 1n + (1n << BigInt(bit)));
      if (masked === 0n) return [(compressed - bit) * spacing, false];
      const msb = masked.toString(2).length - 1;
      return [(compressed - (bit - msb)) * spacing, true];
    }
    const [pos, bit] = position(compressed + 1);
    const masked = this.word(pos) & ~((1n << BigInt(bit)) - 1n);
    if (masked === 0n) return [(compressed + 1 + (255 - bit)) * spacing, false];
    const lsb = (masked & -masked).toString(2).length - 1;
    return [(compressed + 1 + (lsb - bit)) * spacing, true];
  }
}

const methods = {
  ping: () => ({}),

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
    const fee = p.fee;
    const spacing = p.tick_spacing;
    if (!Number.isInteger(fee) || fee < 0 || fee >= 1000000) throw invalid('`fee` must be an integer below 1000000');
    if (!Number.isInteger(spacing) || spacing < 1 || spacing > 32767) throw invalid('`tick_spacing` must be 1 to 32767');
    if (typeof p.zero_for_one !== 'boolean') throw invalid('`zero_for_one` must be a boolean');
    const amount = big(p, 'amount_specified', { signed: true });
    if (JSBI.equal(amount, JSBI.BigInt(0))) throw invalid('`amount_specified` must not be 0');
    const limit = p.sqrt_price_limit_x96 === undefined ? undefined : sqrtPrice(p, 'sqrt_price_limit_x96');
    const r = await v3.v3Swap(JSBI.BigInt(fee), sqrtPrice(p, 'sqrt_price_x96'), tick(p, 'tick'), big(p, 'liquidity'),
      spacing, new BitmapTicks(p, spacing), p.zero_for_one, amount, limit);
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

function versions() {
  const out = {};
  for (const name of PACKAGES) {
    // Read from the tree: the packages' `exports` do not list their package.json.
    out[name] = JSON.parse(fs.readFileSync(path.join(__dirname, 'node_modules', name, 'package.json'), 'utf8')).version;
  }
  return out;
}

/** The answer to one request line, or null for a notification. */
async function answer(line, session) {
  let request;
  try {
    request = JSON.parse(line);
  } catch (e) {
    return { jsonrpc: '2.0', id: null, error: { code: PARSE_ERROR, message: `not JSON: ${e.message}` } };
  }
  const id = request && (typeof request.id === 'number' || typeof request.id === 'string') ? request.id : null;
  const reply = (body) => (request && request.id === undefined ? null : { jsonrpc: '2.0', id, ...body });
  try {
    if (!request || request.jsonrpc !== '2.0' || typeof request.method !== 'string') {
      throw new RpcError(INVALID_REQUEST, 'a JSON-RPC 2.0 request needs `jsonrpc: "2.0"` and a `method`');
    }
    const params = request.params === undefined ? {} : request.params;
    if (typeof params !== 'object' || params === null || Array.isArray(params)) {
      throw invalid('`params` must be an object');
    }
    if (request.method === 'hello') {
      if (params.protocol !== PROTOCOL) {
        throw invalid(`this sidecar speaks protocol ${PROTOCOL}, the host asked for ${params.protocol}`);
      }
      const result = { protocol: PROTOCOL, node: process.version, packages: versions() };
      session.greeted = true;
      return reply({ result });
    }
    if (!session.greeted) throw new RpcError(NO_HELLO, 'say `hello` with the protocol version first');
    const method = Object.prototype.hasOwnProperty.call(methods, request.method) && methods[request.method];
    if (!method) throw new RpcError(METHOD_NOT_FOUND, `no method \`${request.method}\``);
    return reply({ result: await method(params) });
  } catch (e) {
    // The SDK's own checks (invariants, overflows) are its answer about these inputs.
    const code = e instanceof RpcError ? e.code : SDK_ERROR;
    const error = { code, message: e.message || String(e) };
    if (e instanceof RpcError && e.data !== undefined) error.data = e.data;
    return reply({ error });
  }
}

function serve(socketPath) {
  // Created 0600: only the host's user may talk to it.
  process.umask(0o177);
  try {
    fs.unlinkSync(socketPath);
  } catch (e) {
    if (e.code !== 'ENOENT') throw e;
  }
  const server = net.createServer((conn) => {
    const session = { greeted: false };
    let buffered = '';
    let queue = Promise.resolve();
    conn.setEncoding('utf8');
    conn.on('data', (chunk) => {
      buffered += chunk;
      let newline;
      while ((newline = buffered.indexOf('\n')) >= 0) {
        const line = buffered.slice(0, newline);
        buffered = buffered.slice(newline + 1);
        if (line.trim() === '') continue;
        // Answered one at a time, in the order asked.
        queue = queue.then(() => answer(line, session)).then((reply) => {
          if (reply) conn.write(JSON.stringify(reply) + '\n');
        });
      }
      if (buffered.length > 1 << 20) {
        conn.end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: INVALID_REQUEST, message: 'line over 1 MiB' } }) + '\n');
      }
    });
    conn.on('error', () => {});
  });
  server.listen(socketPath, () => {
    process.stdout.write(JSON.stringify({ listening: socketPath, protocol: PROTOCOL }) + '\n');
  });
  const stop = () => server.close(() => process.exit(0));
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  // The host owns this process: when it goes (its end of stdin closes), so do we.
  process.stdin.on('end', () => process.exit(0));
  process.stdin.resume();
}

const socketPath = process.argv[2];
if (!socketPath) {
  process.stderr.write(`usage: node ${path.basename(__filename)} <socket path>\n`);
  process.exit(2);
}
serve(socketPath);
