//! `uniswap_get_position_performance` for a V4 position. V4's PositionManager logs nothing per
//! position; the PoolManager logs each `ModifyLiquidity` (the PositionManager as sender, the
//! token id as salt) with its liquidity delta but no amounts. So each is valued from the pool's
//! state at the end of its block: the principal the delta holds at that price, and the fees the
//! PoolManager credited the position then — the liquidity before it times the growth of the
//! position's `feeGrowthInsideLast` since the previous one (`Position.update`'s own math). Exact
//! unless a swap in the same block moved the pool after the change.

use super::performance_report::{History, Performance, PerformanceParams, report};
use super::*;
use crate::liquidity_v4 as v4p;
use crate::math::{amounts_for_liquidity, fees_earned, sqrt_price_at_tick};
use alloy_primitives::{B256, I256};
use bardo_sdk::abi::{decode_log, eth_call_at, wire};
use bardo_sdk::errors::chain_not_supported;
use bardo_sdk::uniswap::v4::{ModifyLiquidity, getPositionInfoCall, getSlot0Call};
use bardo_sdk::{LogFilter, logs};

pub(super) fn run(p: &PerformanceParams, book: &Book) -> Result<Performance, Error> {
    let id = position_id(&p.position_id)?;
    let pos = v4p::position(p.chain_id, book, id)?;
    let posm = v4p::manager(p.chain_id, book)?;
    let missing = |what: &str| {
        chain_not_supported(format!("no V4 {what} for chain {} in this plugin's settings", p.chain_id))
    };
    let manager = book.v4_pool_manager.ok_or_else(|| missing("`v4_pool_manager`"))?;
    let state_view = book.v4_state_view.ok_or_else(|| missing("`v4_state_view`"))?;
    let pool_id = pos.pool.key.pool_id;
    events::progress(0);
    let (from, to) = logs::range(p.chain_id, p.from_block, logs::MAX_SCAN)?;
    let filter = LogFilter {
        chain_id: p.chain_id,
        addresses: vec![wire(&manager)],
        topics: vec![
            vec![<ModifyLiquidity as alloy_sol_types::SolEvent>::SIGNATURE_HASH.to_string()],
            vec![pool_id.to_string()],
            vec![B256::left_padding_from(posm.as_slice()).to_string()],
        ],
        from_block: None,
        to_block: None,
    };
    let salt = B256::from(id);
    let (mut deposited, mut withdrawn, mut fees) = ([U256::ZERO; 2], [U256::ZERO; 2], [U256::ZERO; 2]);
    let (mut liquidity, mut last, mut opened) = (0u128, [U256::ZERO; 2], None);
    for log in logs::scan(filter, from, to)? {
        let Some(e) = decode_log::<ModifyLiquidity>(&log) else { continue };
        if e.salt != salt {
            continue;
        }
        let block = log.block_number.ok_or_else(|| bardo_sdk::errors::internal("a log without its block"))?;
        let (lower, upper) = (e.tickLower, e.tickUpper);
        let info = eth_call_at(
            p.chain_id,
            state_view,
            &getPositionInfoCall { poolId: pool_id, owner: posm, tickLower: lower, tickUpper: upper, salt },
            block,
        )?;
        let growth = [info.feeGrowthInside0LastX128, info.feeGrowthInside1LastX128];
        // What the PoolManager credited: the liquidity before times the growth since.
        for i in 0..2 {
            fees[i] += fees_earned(growth[i], last[i], liquidity);
        }
        last = growth;
        let price = U256::from(
            eth_call_at(p.chain_id, state_view, &getSlot0Call { poolId: pool_id }, block)?.sqrtPriceX96,
        );
        let delta = I256::from_raw(e.liquidityDelta.into_raw());
        let size = u128::try_from(delta.unsigned_abs()).unwrap_or(u128::MAX);
        let (a, b) = (sqrt_price_at_tick(lower.as_i32())?, sqrt_price_at_tick(upper.as_i32())?);
        let amounts = amounts_for_liquidity(price, a, b, size);
        if delta.is_positive() {
            opened = opened.or(Some(block));
            deposited = [deposited[0] + amounts.0, deposited[1] + amounts.1];
            liquidity = liquidity.saturating_add(size);
        } else if delta.is_negative() {
            withdrawn = [withdrawn[0] + amounts.0, withdrawn[1] + amounts.1];
            liquidity = liquidity.saturating_sub(size);
        }
    }
    let opened = opened.ok_or_else(|| {
        not_found(format!(
            "no deposit into V4 position {id} in blocks {from}..{to}; give `from_block` at or before its mint"
        ))
    })?;
    events::progress(1);
    let now = GetPosition::run(PositionParams {
        chain_id: p.chain_id,
        position_id: id.to_string(),
        version: Some(Version::V4),
    })?;
    let base = |s: &str| s.parse::<U256>().unwrap_or_default();
    events::progress(2);
    let history = History {
        deposited: (deposited[0], deposited[1]),
        withdrawn: (withdrawn[0], withdrawn[1]),
        fees_collected: (fees[0], fees[1]),
        opened,
        blocks: (from, to),
    };
    report(
        p.chain_id,
        id,
        (now.token0, now.token1),
        &history,
        ((base(&now.amount0_base), base(&now.amount1_base)), (base(&now.fees0_base), base(&now.fees1_base))),
        pos.pool.sqrt_price_x96,
    )
}
