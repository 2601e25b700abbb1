//! `uniswap_compound_fees`: put a position's uncollected fees back into it in one transaction —
//! V3 through the position manager's `multicall` (collect to the wallet, then increase from it,
//! the approvals exact), V4 through one `modifyLiquidities` (the increase is credited the fees
//! first, and closing each token takes what the range could not use).

use super::{Amounts, check_receipts, collect_call, default_slippage, json, json_value, owned, write_def};
use crate::abi::*;
use crate::book::{Book, book};
use crate::liquidity_v4 as v4p;
use crate::math::{check_slippage, min_out};
use crate::pools::Version;
use crate::read::{deadline, position, position_id};
use alloy_primitives::{Address, Bytes, U256};
use alloy_sol_types::SolCall;
use bardo_sdk::abi::{events as logs_of, simulate_last, tx_call, wallet};
use bardo_sdk::erc20::{self, Authority, BalanceChange};
use bardo_sdk::errors::{internal, invalid_params};
use bardo_sdk::units::format_units;
use bardo_sdk::{
    Error, Phase, PlannedCall, Receipt, RiskTier, ToolDef, TxCall, WritePlan, WriteTool, events,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Params of `uniswap_compound_fees`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CompoundParams {
    /// Chain id.
    pub chain_id: u64,
    /// The position NFT's id, decimal.
    pub position_id: String,
    /// `v3` (default) or `v4`: which position manager's NFT `position_id` is.
    #[serde(default)]
    pub version: Option<Version>,
    /// Tolerance on the amounts, basis points 1 to 5000 (default 50).
    #[serde(default = "default_slippage")]
    pub slippage_bps: u32,
}

/// Expected / verified outcome of compounding.
#[derive(Debug, Serialize)]
pub struct CompoundOutcome {
    /// The wallet's net token balance changes: what of the fees the range could not use.
    pub balance_changes: Vec<BalanceChange>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub authorities: Vec<Authority>,
    pub position_id: String,
    pub liquidity_added: String,
    /// The fees the position had earned (V4 receipts show the wallet's net only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fees: Option<Amounts>,
    /// What went back into the position.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub compounded: Option<Amounts>,
}

pub struct CompoundFees;

impl WriteTool for CompoundFees {
    const NAME: &'static str = "uniswap_compound_fees";
    type Params = CompoundParams;

    fn def() -> ToolDef {
        write_def::<CompoundParams>(
            Self::NAME,
            "Plans putting a Uniswap V3 or V4 position's uncollected fees back into the same position in one \
             transaction (V3: collect and increase through the position manager's multicall; V4: one \
             modifyLiquidities). What the range's ratio cannot use stays in the wallet. Minimum amounts come \
             from simulating it, less the slippage setting.",
            RiskTier::Medium,
            "compound_fees",
            &["read position", "simulate compound", "build calls"],
            &[
                (Phase::Thriving, "Compound in range positions when the fees are worth more than the gas."),
                (Phase::Defensive, "Collect fees instead of compounding them."),
            ],
        )
    }

    fn plan(p: CompoundParams) -> Result<WritePlan, Error> {
        let owner = wallet(p.chain_id)?;
        check_slippage(p.slippage_bps)?;
        let book = book(p.chain_id)?;
        let id = position_id(&p.position_id)?;
        events::progress(0);
        if p.version == Some(Version::V4) {
            return compound_v4(&p, &book, id, owner);
        }
        let pos = owned(p.chain_id, &book, id, owner)?;
        let npm = book.position_manager;
        let collect = collect_call(p.chain_id, npm, id, owner);
        let fees = simulate_last::<collectCall>(p.chain_id, owner, std::slice::from_ref(&collect))?;
        let fees = (fees.amount0, fees.amount1);
        if fees.0.is_zero() && fees.1.is_zero() {
            return Err(invalid_params(format!("position {id} has no fees to compound yet")));
        }
        events::progress(1);
        let (t0, t1) = (&pos.token0, &pos.token1);
        let deadline = deadline(p.chain_id, 600)?;
        let batch = |min: (U256, U256)| -> TxCall {
            let increase = increaseLiquidityCall {
                params: IncreaseLiquidityParams {
                    tokenId: id,
                    amount0Desired: fees.0,
                    amount1Desired: fees.1,
                    amount0Min: min.0,
                    amount1Min: min.1,
                    deadline,
                },
            };
            let data: Vec<Bytes> = vec![collect.data.clone().into(), increase.abi_encode().into()];
            tx_call(p.chain_id, npm, &multicallCall { data })
        };
        let mut calls: Vec<PlannedCall> = Vec::new();
        for (token, amount) in [(t0, fees.0), (t1, fees.1)] {
            calls.extend(erc20::approval_if_short(
                p.chain_id,
                token,
                owner,
                npm,
                amount,
                "the V3 position manager",
            )?);
        }
        let mut sim: Vec<TxCall> = calls.iter().map(|c| c.call.clone()).collect();
        sim.push(batch((U256::ZERO, U256::ZERO)));
        let results = simulate_last::<multicallCall>(p.chain_id, owner, &sim).map_err(|e| {
            invalid_params(format!(
                "the fees of position {id} buy no liquidity in its range ({}); collect them instead",
                e.message
            ))
        })?;
        let added = results
            .get(1)
            .and_then(|r| increaseLiquidityCall::abi_decode_returns(r).ok())
            .ok_or_else(|| internal("the multicall returned no increase"))?;
        events::progress(2);
        let bound = |a: U256| if a.is_zero() { Ok(U256::ZERO) } else { min_out(a, p.slippage_bps) };
        calls.push(PlannedCall {
            call: batch((bound(added.amount0)?, bound(added.amount1)?)),
            description: format!(
                "compound position {id} in one transaction: collect {} {} + {} {} of fees, add {} {} + {} {} back",
                format_units(fees.0, t0.decimals),
                t0.symbol,
                format_units(fees.1, t1.decimals),
                t1.symbol,
                format_units(added.amount0, t0.decimals),
                t0.symbol,
                format_units(added.amount1, t1.decimals),
                t1.symbol
            ),
        });
        let expected = CompoundOutcome {
            balance_changes: vec![
                BalanceChange::net(t0.address, fees.0, added.amount0),
                BalanceChange::net(t1.address, fees.1, added.amount1),
            ],
            authorities: vec![Authority::erc20(t0, npm, fees.0), Authority::erc20(t1, npm, fees.1)],
            position_id: id.to_string(),
            liquidity_added: added.liquidity.to_string(),
            fees: Some(Amounts::new(t0, t1, fees.0, fees.1)),
            compounded: Some(Amounts::new(t0, t1, added.amount0, added.amount1)),
        };
        Ok(WritePlan { calls, expected_outcome_json: json(&expected)? })
    }

    fn verify(p: CompoundParams, receipts: Vec<Receipt>) -> Result<serde_json::Value, Error> {
        check_receipts(&receipts)?;
        let book = book(p.chain_id)?;
        let id = position_id(&p.position_id)?;
        if p.version == Some(Version::V4) {
            let owner = wallet(p.chain_id)?;
            let posm = v4p::manager(p.chain_id, &book)?;
            let added = v4p::modifications(&receipts, posm)
                .into_iter()
                .find(|m| m.salt == id && !m.delta.is_negative())
                .ok_or_else(|| {
                    internal(format!("the receipts hold no liquidity added to V4 position {id}"))
                })?;
            let pos = v4p::position(p.chain_id, &book, id)?;
            let (t0, t1) = (&pos.pool.token0, &pos.pool.token1);
            return json_value(CompoundOutcome {
                balance_changes: vec![v4p::moved(&receipts, t0, owner), v4p::moved(&receipts, t1, owner)],
                authorities: Vec::new(),
                position_id: id.to_string(),
                liquidity_added: added.delta.to_string(),
                fees: None,
                compounded: None,
            });
        }
        let npm = book.position_manager;
        let pos = position(p.chain_id, &book, id)?;
        let c = logs_of::<Collect>(&receipts, npm)
            .into_iter()
            .find(|e| e.tokenId == id)
            .ok_or_else(|| internal("the receipts hold no Collect of the position"))?;
        let a = logs_of::<IncreaseLiquidity>(&receipts, npm)
            .into_iter()
            .find(|e| e.tokenId == id)
            .ok_or_else(|| internal("the receipts hold no IncreaseLiquidity of the position"))?;
        let (t0, t1) = (&pos.token0, &pos.token1);
        json_value(CompoundOutcome {
            balance_changes: vec![
                BalanceChange::net(t0.address, c.amount0, a.amount0),
                BalanceChange::net(t1.address, c.amount1, a.amount1),
            ],
            authorities: Vec::new(),
            position_id: id.to_string(),
            liquidity_added: a.liquidity.to_string(),
            fees: Some(Amounts::new(t0, t1, c.amount0, c.amount1)),
            compounded: Some(Amounts::new(t0, t1, a.amount0, a.amount1)),
        })
    }
}

/// `uniswap_compound_fees` on V4.
fn compound_v4(p: &CompoundParams, book: &Book, id: U256, owner: Address) -> Result<WritePlan, Error> {
    let pos = v4p::owned(p.chain_id, book, id, owner)?;
    events::progress(1);
    let planned = v4p::compound(book, p.chain_id, &pos, p.slippage_bps, deadline(p.chain_id, 600)?)?;
    events::progress(2);
    let (t0, t1) = (&pos.pool.token0, &pos.pool.token1);
    let expected = CompoundOutcome {
        balance_changes: vec![
            BalanceChange::received(t0, v4p::inflow(planned.deltas.0)),
            BalanceChange::received(t1, v4p::inflow(planned.deltas.1)),
        ],
        authorities: Vec::new(),
        position_id: id.to_string(),
        liquidity_added: planned.liquidity.to_string(),
        fees: Some(Amounts::new(t0, t1, planned.fees.0, planned.fees.1)),
        compounded: None,
    };
    Ok(WritePlan { calls: vec![planned.call], expected_outcome_json: json(&expected)? })
}
