//! `uniswap_remove_liquidity`: decrease a position or burn it, and collect what it owes.

use super::{
    Amounts, base, check_receipts, collect_call, default_slippage, json, json_value, owned, received,
    write_def,
};
use crate::abi::*;
use crate::book::{Book, book};
use crate::liquidity_v4 as v4p;
use crate::math::{check_slippage, min_out};
use crate::pools::Version;
use crate::read::{deadline, position, position_id};
use alloy_primitives::Bytes;
use alloy_primitives::{Address, U256};
use alloy_sol_types::SolCall;
use bardo_sdk::abi::{events as logs_of, simulate_last, tx_call, wallet};
use bardo_sdk::erc20::{self, BalanceChange, NftChange, Token};
use bardo_sdk::errors::{internal, invalid_params};
use bardo_sdk::units::format_units;
use bardo_sdk::{
    Error, ErrorCode, Phase, PlannedCall, Receipt, RiskTier, ToolDef, WritePlan, WriteTool, events,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Params of `uniswap_remove_liquidity`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RemoveParams {
    /// Chain id.
    pub chain_id: u64,
    /// The position NFT's id, decimal.
    pub position_id: String,
    /// Share of the liquidity to remove, 1 to 100 (default 100).
    #[serde(default = "hundred")]
    pub percent: u8,
    /// Tolerance on the withdrawn amounts, basis points 1 to 5000 (default 50).
    #[serde(default = "default_slippage")]
    pub slippage_bps: u32,
    /// `v3` (default) or `v4`: which position manager's NFT `position_id` is.
    #[serde(default)]
    pub version: Option<Version>,
    /// Burn the position NFT too (only with `percent` 100).
    #[serde(default)]
    pub burn: bool,
}

fn hundred() -> u8 {
    100
}

/// Expected / verified outcome of removing liquidity.
#[derive(Debug, Serialize)]
pub struct RemoveOutcome {
    /// The wallet's token balance changes (checked by the host against its simulation).
    pub balance_changes: Vec<BalanceChange>,
    pub position_id: String,
    pub liquidity_removed: String,
    /// Principal withdrawn (V4 receipts do not tell principal from fees: verified outcomes
    /// of V4 show `collected` only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub withdrawn: Option<Amounts>,
    /// Everything sent to the wallet: principal plus fees.
    pub collected: Amounts,
    /// V4: the position NFT burned.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub nfts: Vec<NftChange>,
}

pub struct RemoveLiquidity;

impl WriteTool for RemoveLiquidity {
    const NAME: &'static str = "uniswap_remove_liquidity";
    type Params = RemoveParams;

    fn def() -> ToolDef {
        write_def::<RemoveParams>(
            Self::NAME,
            "Plans removing liquidity from a Uniswap V3 or V4 position the wallet owns (a percentage, default \
             all) and collecting the tokens and fees to the wallet; a V4 position can be burned with it. \
             Minimum amounts come from simulating the withdrawal, less the slippage setting.",
            RiskTier::Medium,
            "remove_liquidity",
            &["read position", "simulate withdrawal", "build calls"],
            &[
                (Phase::Defensive, "Remove out-of-range positions first."),
                (Phase::Survival, "Remove everything at risk."),
            ],
        )
    }

    fn plan(p: RemoveParams) -> Result<WritePlan, Error> {
        let owner = wallet(p.chain_id)?;
        check_slippage(p.slippage_bps)?;
        if p.percent == 0 || p.percent > 100 {
            return Err(invalid_params(format!("`percent` {} must be 1 to 100", p.percent)));
        }
        if p.burn && p.percent != 100 {
            return Err(invalid_params("`burn` takes the position's whole liquidity: `percent` 100"));
        }
        if p.version == Some(Version::V4) {
            return remove_v4(p, owner);
        }
        let book = book(p.chain_id)?;
        let id = position_id(&p.position_id)?;
        events::progress(0);
        let pos = owned(p.chain_id, &book, id, owner)?;
        let liquidity =
            pos.liquidity / 100 * u128::from(p.percent) + pos.liquidity % 100 * u128::from(p.percent) / 100;
        if liquidity == 0 && !p.burn {
            return Err(invalid_params(format!(
                "position {id} has no liquidity to remove; collect its fees instead, or close it (`burn`: true)"
            )));
        }
        events::progress(1);
        let npm = book.position_manager;
        let deadline = deadline(p.chain_id, 600)?;
        let decrease = |min0, min1| {
            tx_call(
                p.chain_id,
                npm,
                &decreaseLiquidityCall {
                    params: DecreaseLiquidityParams {
                        tokenId: id,
                        liquidity,
                        amount0Min: min0,
                        amount1Min: min1,
                        deadline,
                    },
                },
            )
        };
        let collect = collect_call(p.chain_id, npm, id, owner);
        // An empty position (closed already, fees aside) has nothing to decrease.
        let decreasing = liquidity > 0;
        let zero = if decreasing { decrease(U256::ZERO, U256::ZERO) } else { collect.clone() };
        let out = if decreasing {
            simulate_last::<decreaseLiquidityCall>(p.chain_id, owner, std::slice::from_ref(&zero))?
        } else {
            decreaseLiquidityReturn { amount0: U256::ZERO, amount1: U256::ZERO }
        };
        let total = simulate_last::<collectCall>(
            p.chain_id,
            owner,
            &if decreasing { vec![zero, collect.clone()] } else { vec![collect.clone()] },
        )?;
        if !decreasing && total.amount0.is_zero() && total.amount1.is_zero() {
            return Err(invalid_params(format!("position {id} is empty: no liquidity and no fees to take")));
        }
        events::progress(2);
        let bound = |used: U256| if used.is_zero() { Ok(U256::ZERO) } else { min_out(used, p.slippage_bps) };
        let (t0, t1) = (&pos.token0, &pos.token1);
        // One transaction: the position manager's multicall of the decrease, the collect and the
        // burn — never a decrease whose collect could be left unsent.
        let mut batch: Vec<Bytes> = Vec::new();
        if decreasing {
            batch.push(decrease(bound(out.amount0)?, bound(out.amount1)?).data.into());
        }
        batch.push(collect.data.clone().into());
        if p.burn {
            batch.push(burnCall { tokenId: id }.abi_encode().into());
        }
        let calls = vec![PlannedCall {
            call: tx_call(p.chain_id, npm, &multicallCall { data: batch }),
            description: format!(
                "{} {}% of position {id} in one transaction: {} {} + {} {} with fees {}",
                if p.burn { "close" } else { "remove" },
                p.percent,
                format_units(total.amount0, t0.decimals),
                t0.symbol,
                format_units(total.amount1, t1.decimals),
                t1.symbol,
                if p.burn { "to the wallet, the NFT burned" } else { "to the wallet" }
            ),
        }];
        let expected = RemoveOutcome {
            balance_changes: vec![
                BalanceChange::received(t0, total.amount0),
                BalanceChange::received(t1, total.amount1),
            ],
            position_id: id.to_string(),
            liquidity_removed: liquidity.to_string(),
            withdrawn: Some(Amounts::new(t0, t1, out.amount0, out.amount1)),
            collected: Amounts::new(t0, t1, total.amount0, total.amount1),
            nfts: if p.burn { vec![v4p::burned(npm, id)] } else { Vec::new() },
        };
        Ok(WritePlan { calls, expected_outcome_json: json(&expected)? })
    }

    fn verify(p: RemoveParams, receipts: Vec<Receipt>) -> Result<serde_json::Value, Error> {
        check_receipts(&receipts)?;
        let book = book(p.chain_id)?;
        if p.version == Some(Version::V4) {
            return verify_remove_v4(&p, &book, &receipts);
        }
        let id = position_id(&p.position_id)?;
        let npm = book.position_manager;
        // A closed position is burned: its tokens are its pool's, the pool that paid it.
        let (t0, t1) = match position(p.chain_id, &book, id) {
            Ok(pos) => (pos.token0, pos.token1),
            Err(e) if e.code == ErrorCode::NotFound => paying_pool_tokens(p.chain_id, &receipts, npm)?,
            Err(e) => return Err(e),
        };
        let d = logs_of::<DecreaseLiquidity>(&receipts, npm).into_iter().find(|e| e.tokenId == id);
        let c = logs_of::<Collect>(&receipts, npm).into_iter().find(|e| e.tokenId == id);
        let (c0, c1) = c.map(|c| (c.amount0, c.amount1)).unwrap_or_default();
        let (d0, d1) = d.as_ref().map(|d| (d.amount0, d.amount1)).unwrap_or_default();
        serde_json::to_value(RemoveOutcome {
            balance_changes: vec![BalanceChange::received(&t0, c0), BalanceChange::received(&t1, c1)],
            position_id: id.to_string(),
            liquidity_removed: d.map_or(0, |d| d.liquidity).to_string(),
            withdrawn: Some(Amounts::new(&t0, &t1, d0, d1)),
            collected: Amounts::new(&t0, &t1, c0, c1),
            nfts: if p.burn { vec![v4p::burned(npm, id)] } else { Vec::new() },
        })
        .map_err(|e| internal(e.to_string()))
    }
}

/// The tokens of the V3 pool that paid the position manager `npm` in the receipts (its `Burn`
/// or `Collect` names the manager as the owner).
fn paying_pool_tokens(chain_id: u64, receipts: &[Receipt], npm: Address) -> Result<(Token, Token), Error> {
    let owner = alloy_primitives::B256::left_padding_from(npm.as_slice());
    let pool = receipts
        .iter()
        .flat_map(|r| &r.logs)
        .find(|l| {
            let topics: Vec<alloy_primitives::B256> =
                l.topics.iter().filter_map(|t| t.parse().ok()).collect();
            topics.len() > 1
                && topics[1] == owner
                && (topics[0] == <bardo_sdk::uniswap::Burn as alloy_sol_types::SolEvent>::SIGNATURE_HASH
                    || topics[0] == <pool::Collect as alloy_sol_types::SolEvent>::SIGNATURE_HASH)
        })
        .and_then(|l| l.address.parse::<Address>().ok())
        .ok_or_else(|| internal("the receipts hold no pool paying the position manager"))?;
    let t0 = bardo_sdk::abi::eth_call(chain_id, pool, &bardo_sdk::uniswap::token0Call {})?;
    let t1 = bardo_sdk::abi::eth_call(chain_id, pool, &bardo_sdk::uniswap::token1Call {})?;
    Ok((erc20::token(chain_id, t0)?, erc20::token(chain_id, t1)?))
}

/// `uniswap_remove_liquidity` on V4.
fn remove_v4(p: RemoveParams, owner: Address) -> Result<WritePlan, Error> {
    let book = book(p.chain_id)?;
    let id = position_id(&p.position_id)?;
    events::progress(0);
    let pos = v4p::owned(p.chain_id, &book, id, owner)?;
    let liquidity =
        pos.liquidity / 100 * u128::from(p.percent) + pos.liquidity % 100 * u128::from(p.percent) / 100;
    if liquidity == 0 && !p.burn {
        return Err(invalid_params(format!(
            "V4 position {id} has no liquidity to remove; collect its fees, or burn it (`burn`: true)"
        )));
    }
    events::progress(1);
    let w = v4p::Withdrawal {
        chain_id: p.chain_id,
        position: &pos,
        liquidity,
        burn: p.burn,
        slippage_bps: p.slippage_bps,
        deadline: deadline(p.chain_id, 600)?,
    };
    let out = v4p::withdraw(&book, &w)?;
    events::progress(2);
    let (t0, t1) = (&pos.pool.token0, &pos.pool.token1);
    let expected = RemoveOutcome {
        balance_changes: received(t0, t1, out.total),
        position_id: id.to_string(),
        liquidity_removed: liquidity.to_string(),
        withdrawn: Some(Amounts::new(t0, t1, out.principal.0, out.principal.1)),
        collected: Amounts::new(t0, t1, out.total.0, out.total.1),
        nfts: if p.burn { vec![v4p::burned(v4p::manager(p.chain_id, &book)?, id)] } else { Vec::new() },
    };
    Ok(WritePlan { calls: vec![out.call], expected_outcome_json: json(&expected)? })
}

fn verify_remove_v4(p: &RemoveParams, book: &Book, receipts: &[Receipt]) -> Result<serde_json::Value, Error> {
    let owner = wallet(p.chain_id)?;
    let posm = v4p::manager(p.chain_id, book)?;
    let id = position_id(&p.position_id)?;
    let removed: U256 = v4p::modifications(receipts, posm)
        .into_iter()
        .filter(|m| m.salt == id && m.delta.is_negative())
        .map(|m| m.delta.unsigned_abs())
        .sum();
    // The position may be burned: its tokens come from the pool key the position manager keeps.
    let pool = v4p::modifications(receipts, posm)
        .into_iter()
        .find(|m| m.salt == id)
        .map(|m| m.pool_id)
        .ok_or_else(|| internal(format!("the receipts hold no change of V4 position {id}")))?;
    let (t0, t1) = v4p::pool_tokens(p.chain_id, posm, pool)?;
    let (c0, c1) = (v4p::moved(receipts, &t0, owner), v4p::moved(receipts, &t1, owner));
    json_value(RemoveOutcome {
        collected: Amounts::new(&t0, &t1, base(&c0), base(&c1)),
        balance_changes: vec![c0, c1],
        position_id: id.to_string(),
        liquidity_removed: removed.to_string(),
        withdrawn: None,
        nfts: Vec::new(),
    })
}
