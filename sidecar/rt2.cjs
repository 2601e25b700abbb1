const { route } = require('./lib/route.cjs');
const v3 = require('@uniswap/v3-sdk'); const JSBI = require('jsbi');
const { CurrencyAmount, Token } = require('@uniswap/sdk-core');
const USDC='0x'+'1'.repeat(40), WETH='0x'+'2'.repeat(40), DAI='0x'+'3'.repeat(40);
const sqrt = v3.encodeSqrtRatioX96('1000000000000000000', '3000000000').toString();
const tk = v3.TickMath.getTickAtSqrtRatio(JSBI.BigInt(sqrt));
const words = {}; for (const w of [3,4,5,6,7,10,11,12,13,14,26,27,28,29,30,31,32,33,74,75,76,77,78]) words[w] = "0";
const sqrt2 = v3.encodeSqrtRatioX96('3000000000000000000000', '1000000000000000000').toString();
const tk2 = v3.TickMath.getTickAtSqrtRatio(JSBI.BigInt(sqrt2));
const base = {chain_id: 31337, trade_type:'exact_in', token_in: USDC, token_out: DAI, amount: '250000000000', tokens: {[USDC]:6,[WETH]:18,[DAI]:18},
  pools: [
    {id:'v2a', protocol:'v2', token0: USDC, token1: WETH, reserve0: '1000000000000', reserve1: '333000000000000000000'},
    {id:'v2c', protocol:'v2', token0: WETH, token1: DAI, reserve0: '333000000000000000000', reserve1: '1000000000000000000000000'},
    {id:'v3a', protocol:'v3', token0: USDC, token1: WETH, fee: 3000, tick_spacing: 60, sqrt_price_x96: sqrt, tick: tk, liquidity: '10000000000000000', words, ticks: {}},
    {id:'v3b', protocol:'v3', token0: USDC, token1: WETH, fee: 500, tick_spacing: 10, sqrt_price_x96: sqrt, tick: tk, liquidity: '30000000000000000', words, ticks: {}},
    {id:'v4a', protocol:'v4', token0: USDC, token1: WETH, fee: 3000, tick_spacing: 60, hooks: '0x'+'0'.repeat(40), sqrt_price_x96: sqrt, tick: tk, liquidity: '10000000000000000', words, ticks: {}},
    {id:'v3c', protocol:'v3', token0: WETH, token1: DAI, fee: 3000, tick_spacing: 60, sqrt_price_x96: sqrt2, tick: tk2, liquidity: '10000000000000000000000', words, ticks: {}},
    {id:'v4c', protocol:'v4', token0: WETH, token1: DAI, fee: 500, tick_spacing: 10, hooks: '0x'+'0'.repeat(40), sqrt_price_x96: sqrt2, tick: tk2, liquidity: '10000000000000000000000', words, ticks: {}},
  ]};
(async () => {
  let r;
  for (let i = 0; i < 5; i++) r = await route(base);
  const t0 = process.hrtime.bigint(); const N = 200;
  for (let i = 0; i < N; i++) r = await route(base);
  console.log('route ms', Number(process.hrtime.bigint() - t0) / 1e6 / N, r.routes.length, r.paths_quoted);
  const pool = new v3.Pool(new Token(1, USDC, 6), new Token(1, WETH, 18), 3000, sqrt, '10000000000000000', tk, new (require('./lib/ticks.cjs').BitmapTicks)({words}, 'x'));
  const amt = CurrencyAmount.fromRawAmount(new Token(1, USDC, 6), '25000000000');
  const t1 = process.hrtime.bigint();
  for (let i = 0; i < 200; i++) await pool.getOutputAmount(amt);
  console.log('v3 getOutputAmount us', Number(process.hrtime.bigint() - t1) / 1e3 / 200);
})();
