//! `uniswap_collect_fees`: collect a position's fees, V3 or V4.

use super::{Amounts, base, check_receipts, collect_call, json, json_value, owned, received, write_def};
use crate::abi::*;
use crate::book::{Book, book};
use crate::liquidity_v4 as v4p;
use crate::pools::Version;
use crate::read::{deadline, position, position_id};
use alloy_primitives::{Address, U256};
use bardo_sdk::abi::{events as logs_of, simulate_last, wallet};
use bardo_sdk::erc20::BalanceChange;
use bardo_sdk::errors::{internal, invalid_params};
use bardo_sdk::units::format_units;
use bardo_sdk::{Error, Phase, PlannedCall, Receipt, RiskTier, ToolDef, WritePlan, WriteTool, events};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Params of `uniswap_collect_fees`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CollectFeesParams {
    /// Chain id.
    pub chain_id: u64,
    /// The position NFT's id, decimal.
    pub position_id: String,
    /// `v3` (default) or `v4`: which position manager's NFT `position_id` is.
    #[serde(default)]
    pub version: Option<Version>,
}

/// Expected / verified fees collected.
#[derive(Debug, Serialize)]
pub struct CollectOutcome {
    /// The wallet's token balance changes (checked by the host against its simulation).
    pub balance_changes: Vec<BalanceChange>,
    pub position_id: String,
    #[serde(flatten)]
    pub fees: Amounts,
}

pub struct CollectFees;

impl WriteTool for CollectFees {
    const NAME: &'static str = "uniswap_collect_fees";
    type Params = CollectFeesParams;

    fn def() -> ToolDef {
        write_def::<CollectFeesParams>(
            Self::NAME,
            "Plans collecting the uncollected fees of a Uniswap V3 or V4 position the wallet owns, to the \
             wallet. The expected amounts come from simulating the collect. It leaves the liquidity in place.",
            RiskTier::Low,
            "collect_fees",
            &["read position", "simulate collect", "build call"],
            &[(Phase::Thriving, "Collect when the fees are worth more than the gas.")],
        )
    }

    fn plan(p: CollectFeesParams) -> Result<WritePlan, Error> {
        let owner = wallet(p.chain_id)?;
        let book = book(p.chain_id)?;
        let id = position_id(&p.position_id)?;
        if p.version == Some(Version::V4) {
            return collect_v4(&p, &book, id, owner);
        }
        events::progress(0);
        let pos = owned(p.chain_id, &book, id, owner)?;
        events::progress(1);
        let collect = collect_call(p.chain_id, book.position_manager, id, owner);
        let fees = simulate_last::<collectCall>(p.chain_id, owner, std::slice::from_ref(&collect))?;
        if fees.amount0.is_zero() && fees.amount1.is_zero() {
            return Err(invalid_params(format!("position {id} has no fees to collect yet")));
        }
        events::progress(2);
        let (t0, t1) = (&pos.token0, &pos.token1);
        let calls = vec![PlannedCall {
            call: collect,
            description: format!(
                "collect {} {} + {} {} of fees from position {id}",
                format_units(fees.amount0, t0.decimals),
                t0.symbol,
                format_units(fees.amount1, t1.decimals),
                t1.symbol
            ),
        }];
        let expected = CollectOutcome {
            balance_changes: vec![
                BalanceChange::received(t0, fees.amount0),
                BalanceChange::received(t1, fees.amount1),
            ],
            position_id: id.to_string(),
            fees: Amounts::new(t0, t1, fees.amount0, fees.amount1),
        };
        Ok(WritePlan { calls, expected_outcome_json: json(&expected)? })
    }

    fn verify(p: CollectFeesParams, receipts: Vec<Receipt>) -> Result<serde_json::Value, Error> {
        check_receipts(&receipts)?;
        let book = book(p.chain_id)?;
        let id = position_id(&p.position_id)?;
        if p.version == Some(Version::V4) {
            let owner = wallet(p.chain_id)?;
            let pos = v4p::position(p.chain_id, &book, id)?;
            let (c0, c1) = (
                v4p::moved(&receipts, &pos.pool.token0, owner),
                v4p::moved(&receipts, &pos.pool.token1, owner),
            );
            let fees = Amounts::new(&pos.pool.token0, &pos.pool.token1, base(&c0), base(&c1));
            return json_value(CollectOutcome {
                balance_changes: vec![c0, c1],
                position_id: id.to_string(),
                fees,
            });
        }
        let pos = position(p.chain_id, &book, id)?;
        let c = logs_of::<Collect>(&receipts, book.position_manager)
            .into_iter()
            .find(|e| e.tokenId == id)
            .ok_or_else(|| internal("the receipts hold no Collect event for the position"))?;
        serde_json::to_value(CollectOutcome {
            balance_changes: vec![
                BalanceChange::received(&pos.token0, c.amount0),
                BalanceChange::received(&pos.token1, c.amount1),
            ],
            position_id: id.to_string(),
            fees: Amounts::new(&pos.token0, &pos.token1, c.amount0, c.amount1),
        })
        .map_err(|e| internal(e.to_string()))
    }
}

/// `uniswap_collect_fees` on V4: a decrease of nothing, then take both tokens.
fn collect_v4(p: &CollectFeesParams, book: &Book, id: U256, owner: Address) -> Result<WritePlan, Error> {
    events::progress(0);
    let pos = v4p::owned(p.chain_id, book, id, owner)?;
    events::progress(1);
    let w = v4p::Withdrawal {
        chain_id: p.chain_id,
        position: &pos,
        liquidity: 0,
        burn: false,
        slippage_bps: 1,
        deadline: deadline(p.chain_id, 600)?,
    };
    let out = v4p::withdraw(book, &w)?;
    if out.total.0.is_zero() && out.total.1.is_zero() {
        return Err(invalid_params(format!("V4 position {id} has no fees to collect yet")));
    }
    events::progress(2);
    let (t0, t1) = (&pos.pool.token0, &pos.pool.token1);
    let expected = CollectOutcome {
        balance_changes: received(t0, t1, out.total),
        position_id: id.to_string(),
        fees: Amounts::new(t0, t1, out.total.0, out.total.1),
    };
    Ok(WritePlan { calls: vec![out.call], expected_outcome_json: json(&expected)? })
}
