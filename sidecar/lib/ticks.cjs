'use strict';
// A pool's initialized ticks as the host read them, for the SDK's swap math.

const JSBI = require('jsbi');
const { codes, RpcError, invalid } = require('./params.cjs');

/**
 * Bitmap words by position and each initialized tick's liquidityNet. A swap that walks past the
 * words given stops with NEED_TICKS naming the word (and, in a route, the pool) to read, and the
 * host calls again with it.
 */
class BitmapTicks {
  constructor(params, pool) {
    this.pool = pool;
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
      this.nets.set(Number(t), BigInt(net));
    }
  }

  need(message, data) {
    return new RpcError(codes.NEED_TICKS, message, this.pool === undefined ? data : { pool: this.pool, ...data });
  }

  /** The liquidityNet of an initialized tick, as a BigInt. */
  netAt(tick) {
    const net = this.nets.get(tick);
    if (net === undefined) throw this.need(`tick ${tick} is initialized but was not given`, { tick });
    return net;
  }

  async getTick(tick) {
    return { liquidityNet: JSBI.BigInt(this.netAt(tick).toString()) };
  }

  word(pos) {
    const word = this.words.get(pos);
    if (word === undefined) throw this.need(`the swap reaches bitmap word ${pos}`, { word: pos });
    return word;
  }

  async nextInitializedTickWithinOneWord(tick, lte, spacing) {
    return this.nextWithinOneWord(tick, lte, spacing);
  }

  /** TickBitmap.nextInitializedTickWithinOneWord, on the words given. */
  nextWithinOneWord(tick, lte, spacing) {
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

module.exports = { BitmapTicks };
