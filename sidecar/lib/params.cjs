'use strict';
// Typed errors and the checks every method's params go through.

const JSBI = require('jsbi');
const v3 = require('@uniswap/v3-sdk');

// JSON-RPC error codes: the standard ones, and ours above -32000.
const codes = {
  PARSE_ERROR: -32700,
  INVALID_REQUEST: -32600,
  METHOD_NOT_FOUND: -32601,
  INVALID_PARAMS: -32602,
  SDK_ERROR: -32000,
  NEED_TICKS: -32001,
  NO_HELLO: -32002,
  NO_ROUTE: -32003,
};

class RpcError extends Error {
  constructor(code, message, data) {
    super(message);
    this.code = code;
    this.data = data;
  }
}

const invalid = (message) => new RpcError(codes.INVALID_PARAMS, message);

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

/** A fee in hundredths of a bip and a tick spacing, as a concentrated-liquidity pool has them. */
function feeAndSpacing(params) {
  const fee = params.fee;
  const spacing = params.tick_spacing;
  if (!Number.isInteger(fee) || fee < 0 || fee >= 1000000) throw invalid('`fee` must be an integer below 1000000');
  if (!Number.isInteger(spacing) || spacing < 1 || spacing > 32767) throw invalid('`tick_spacing` must be 1 to 32767');
  return [fee, spacing];
}

/** A 20-byte address as 0x-prefixed hex. */
function address(params, name) {
  const v = params[name];
  if (typeof v !== 'string' || !/^0x[0-9a-fA-F]{40}$/.test(v)) throw invalid(`\`${name}\` must be a 0x-prefixed address`);
  return v.toLowerCase();
}

module.exports = { codes, RpcError, invalid, big, tick, sqrtPrice, decimals, feeAndSpacing, address };
