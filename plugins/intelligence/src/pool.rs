//! The pool a tool is about, its prices as floats, and its swaps over a block window.

use alloy_primitives::{Address, U256};
use bardo_sdk::abi::{decode_log, wire};
use bardo_sdk::errors::{invalid_params, not_found};
use bardo_sdk::uniswap::pools::{V3Pool, v3_pool};
use bardo_sdk::uniswap::{self, Swap};
use bardo_sdk::{ChainId, Error, LogFilter, chain};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Blocks one `eth_getLogs` may span (the host's limit).
const LOG_WINDOW: u64 = 10_000;
/// The most blocks a window may cover.
pub const MAX_WINDOW: u64 = 100_000;
pub const SECONDS_PER_YEAR: f64 = 31_536_000.0;

/// Params naming a Uniswap V3 pool.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PoolParams {
    /// Chain id.
    pub chain_id: ChainId,
    /// One token of the pair: a listed symbol or an address.
    pub token_a: String,
    /// The other token.
    pub token_b: String,
    /// Fee tier in hundredths of a bip (100, 500, 3000, 10000); default 3000.
    #[serde(default)]
    pub fee: Option<u32>,
}

/// The pool as answers describe it.
#[derive(Debug, Serialize)]
pub struct PoolRef {
    #[serde(serialize_with = "bardo_sdk::abi::checksummed")]
    pub address: Address,
    pub token0: String,
    pub token1: String,
    pub fee: u32,
    /// token1 per token0, now.
    pub price: f64,
}

/// The V3 pool `p` names, read now.
pub fn find(p: &PoolParams) -> Result<V3Pool, Error> {
    let book = uniswap::book(p.chain_id)?;
    let a = book.token(p.chain_id, "token_a", &p.token_a)?;
    let b = book.token(p.chain_id, "token_b", &p.token_b)?;
    let fee = p.fee.unwrap_or(3000);
    v3_pool(p.chain_id, &book, &a, &b, fee)?.ok_or_else(|| {
        not_found(format!(
            "no Uniswap V3 {}/{} pool at fee {fee} on chain {}",
            a.symbol, b.symbol, p.chain_id
        ))
    })
}

pub fn reference(pool: &V3Pool) -> PoolRef {
    PoolRef {
        address: pool.address,
        token0: pool.token0.symbol.clone(),
        token1: pool.token1.symbol.clone(),
        fee: pool.fee,
        price: price_of_sqrt(pool.sqrt_price_x96, pool),
    }
}

fn f64_of(v: U256) -> f64 {
    v.to_string().parse().unwrap_or(f64::NAN)
}

/// token1 per token0 (whole tokens) at `sqrt_price_x96`.
pub fn price_of_sqrt(sqrt_price_x96: U256, pool: &V3Pool) -> f64 {
    sqrt_to_price(sqrt_price_x96, pool.token0.decimals, pool.token1.decimals)
}

/// token1 per token0 (whole tokens) at `sqrt_price_x96`, for tokens of `decimals0` and `decimals1`.
pub fn sqrt_to_price(sqrt_price_x96: U256, decimals0: u8, decimals1: u8) -> f64 {
    let s = f64_of(sqrt_price_x96) / 2f64.powi(96);
    s * s * 10f64.powi(i32::from(decimals0) - i32::from(decimals1))
}

/// token1 per token0 (whole tokens) at `tick`.
pub fn price_of_tick(tick: i32, pool: &V3Pool) -> f64 {
    1.0001f64.powi(tick) * 10f64.powi(i32::from(pool.token0.decimals) - i32::from(pool.token1.decimals))
}

/// A parsed positive price param.
pub fn price_param(field: &str, text: &str) -> Result<f64, Error> {
    match text.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 => Ok(v),
        _ => Err(invalid_params(format!("`{field}` {text:?} must be a positive decimal price"))),
    }
}

/// A block window ending at the latest block.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Window {
    pub from_block: u64,
    pub to_block: u64,
    /// From the timestamp of the block before `from_block` to that of `to_block`.
    pub seconds: u64,
}

pub fn window(chain_id: ChainId, blocks: Option<u64>) -> Result<Window, Error> {
    let blocks = blocks.unwrap_or(1_000);
    if !(1..=MAX_WINDOW).contains(&blocks) {
        return Err(invalid_params(format!("`blocks` is {blocks}; use 1 to {MAX_WINDOW}")));
    }
    let to_block = chain::block_number(chain_id)?;
    let from_block = to_block.saturating_sub(blocks - 1).max(1);
    let start = chain::block_timestamp(chain_id, Some(from_block - 1))?;
    let end = chain::block_timestamp(chain_id, Some(to_block))?;
    Ok(Window { from_block, to_block, seconds: end.saturating_sub(start) })
}

/// Every V3 `Swap` of `pool` in `w`, in order.
pub fn swaps(chain_id: ChainId, pool: Address, w: Window) -> Result<Vec<Swap>, Error> {
    let mut out = Vec::new();
    let mut start = w.from_block;
    while start <= w.to_block {
        let end = (start + LOG_WINDOW - 1).min(w.to_block);
        let filter = LogFilter {
            chain_id,
            addresses: vec![wire(&pool)],
            topics: vec![vec![<Swap as alloy_sol_types::SolEvent>::SIGNATURE_HASH.to_string()]],
            from_block: Some(start),
            to_block: Some(end),
        };
        out.extend(chain::logs(&filter)?.iter().filter_map(decode_log::<Swap>));
        start = end + 1;
    }
    Ok(out)
}

/// The pool's `sqrtPriceX96` at the end of block `block`.
pub fn sqrt_price_at(chain_id: ChainId, pool: Address, block: u64) -> Result<U256, Error> {
    let out = chain::call(&bardo_sdk::abi::tx_call(chain_id, pool, &uniswap::slot0Call {}), Some(block))?;
    let slot0 = <uniswap::slot0Call as alloy_sol_types::SolCall>::abi_decode_returns(&out)
        .map_err(|e| bardo_sdk::errors::internal(format!("slot0 of {pool} at block {block}: {e}")))?;
    Ok(U256::from(slot0.sqrtPriceX96))
}
