//! `uniswap_get_position_performance`: how a V3 or V4 position has done since it was opened,
//! from its own history (V3: the position manager's events for it — what went in, what came out,
//! what fees were collected; V4: `performance_v4.rs`) and its state now, reported as
//! `performance_report.rs` values it.

use super::performance_report::{History, report};
use super::positions::Cache;
use super::*;
use bardo_sdk::abi::{decode_log, wire};
use bardo_sdk::{LogFilter, logs};

pub struct GetPositionPerformance;

impl ReadTool for GetPositionPerformance {
    const NAME: &'static str = "uniswap_get_position_performance";
    type Params = PerformanceParams;
    type Output = Performance;

    fn def() -> ToolDef {
        ToolDef {
            prompt_snippet:
                "uniswap_get_position_performance: a V3 or V4 LP position since it opened: deposits, fees \
                             earned, impermanent loss against holding, fee APR"
                    .into(),
            progress_steps: vec!["read its events".into(), "read the position".into(), "compare".into()],
            tick_budget: TickBudget::Medium,
            prompt_guidelines: guidelines(&[
                (Phase::Thriving, "Keep positions whose fees outrun their impermanent loss."),
                (Phase::Defensive, "Close positions whose net return is negative."),
            ]),
            ..tool_def::<PerformanceParams>(
                Self::NAME,
                "Reads how a Uniswap V3 or V4 position has done since it was opened: what its mints and \
                 increases put in, what its decreases took out and the fees it collected (V3: the position \
                 manager's events since `from_block`; V4: the PoolManager's `ModifyLiquidity` for it, each valued \
                 at the pool's state of its block), what it holds and is owed now, and in token1 at the pool's \
                 price: its value against holding what went in (impermanent loss, fees aside), the fees earned, \
                 the net return and the fee APR. It changes nothing.",
                Category::Lp,
            )
        }
    }

    fn run(p: PerformanceParams) -> Result<Performance, Error> {
        let book = book(p.chain_id)?;
        if p.version == Some(Version::V4) {
            return super::performance_v4::run(&p, &book);
        }
        let id = position_id(&p.position_id)?;
        let pos = position(p.chain_id, &book, id)?;
        events::progress(0);
        let (from, to) = logs::range(p.chain_id, p.from_block, logs::MAX_SCAN)?;
        let filter = LogFilter {
            chain_id: p.chain_id,
            addresses: vec![wire(&book.position_manager)],
            topics: vec![
                vec![
                    <IncreaseLiquidity as alloy_sol_types::SolEvent>::SIGNATURE_HASH.to_string(),
                    <DecreaseLiquidity as alloy_sol_types::SolEvent>::SIGNATURE_HASH.to_string(),
                    <Collect as alloy_sol_types::SolEvent>::SIGNATURE_HASH.to_string(),
                ],
                vec![alloy_primitives::B256::from(id).to_string()],
            ],
            from_block: None,
            to_block: None,
        };
        let (mut deposited, mut withdrawn, mut collected) =
            ([U256::ZERO; 2], [U256::ZERO; 2], [U256::ZERO; 2]);
        let mut opened = None;
        for log in logs::scan(filter, from, to)? {
            if let Some(e) = decode_log::<IncreaseLiquidity>(&log) {
                opened = opened.or(log.block_number);
                deposited = [deposited[0] + e.amount0, deposited[1] + e.amount1];
            } else if let Some(e) = decode_log::<DecreaseLiquidity>(&log) {
                withdrawn = [withdrawn[0] + e.amount0, withdrawn[1] + e.amount1];
            } else if let Some(e) = decode_log::<Collect>(&log) {
                collected = [collected[0] + e.amount0, collected[1] + e.amount1];
            }
        }
        let opened = opened.ok_or_else(|| {
            not_found(format!(
                "no deposit into position {id} in blocks {from}..{to}; give `from_block` at or before its mint"
            ))
        })?;
        events::progress(1);
        let now = Cache::default().v3(p.chain_id, &book, id, pos.owner)?;
        let base = |s: &str| s.parse::<U256>().unwrap_or_default();
        let principal = (base(&now.amount0_base), base(&now.amount1_base));
        let uncollected = (base(&now.fees0_base), base(&now.fees1_base));
        // Collects pay out principal withdrawn as well as fees: what is beyond it is fees.
        let fees_collected =
            (collected[0].saturating_sub(withdrawn[0]), collected[1].saturating_sub(withdrawn[1]));
        events::progress(2);
        let state = crate::pools::v3_state(p.chain_id, now.pool, &now.token0, &now.token1, pos.fee)?;
        let history = History {
            deposited: (deposited[0], deposited[1]),
            withdrawn: (withdrawn[0], withdrawn[1]),
            fees_collected,
            opened,
            blocks: (from, to),
        };
        report(
            p.chain_id,
            id,
            (now.token0, now.token1),
            &history,
            (principal, uncollected),
            state.sqrt_price_x96,
        )
    }
}
