//! `uniswap_collect_all_fees`: every fee the wallet's positions are owed, in one transaction — V3
//! one position-manager `multicall` of a collect per position, V4 one `modifyLiquidities` of a
//! decrease of nothing per position and a close of each currency.

use super::{check_receipts, collect_call, json, write_def};
use crate::abi::*;
use crate::book::{Book, book};
use crate::liquidity_v4 as v4p;
use crate::pools::Version;
use crate::read::PositionsParams;
use alloy_primitives::{Address, Bytes, U256};
use bardo_sdk::abi::{events as logs_of, tx_call, wallet};
use bardo_sdk::erc20::{self, BalanceChange, Token};
use bardo_sdk::errors::{internal, invalid_params};
use bardo_sdk::units::format_units;
use bardo_sdk::{
    Error, Phase, PlannedCall, ReadTool, Receipt, RiskTier, ToolDef, WritePlan, WriteTool, events,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Params of `uniswap_collect_all_fees`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CollectAllParams {
    /// Chain id.
    pub chain_id: u64,
    /// `v3` (default) or `v4`: which position manager's positions.
    #[serde(default)]
    pub version: Option<Version>,
    /// V4: the first block searched for positions received (default: 200,000 blocks back).
    #[serde(default)]
    pub from_block: Option<u64>,
}

/// One position's fees.
#[derive(Debug, Serialize)]
pub struct Collected {
    pub position_id: String,
    pub token0: String,
    pub token1: String,
    pub fees0: String,
    pub fees1: String,
}

/// Expected / verified outcome.
#[derive(Debug, Serialize)]
pub struct CollectAllOutcome {
    /// The wallet's balance changes, one per token.
    pub balance_changes: Vec<BalanceChange>,
    /// The positions collected from (at preview; the verified outcome lists what was paid).
    pub collected_from: Vec<Collected>,
}

pub struct CollectAllFees;

/// Positions read per plan: the collect of each is one call in the batch.
const MOST: usize = 25;

impl WriteTool for CollectAllFees {
    const NAME: &'static str = "uniswap_collect_all_fees";
    type Params = CollectAllParams;

    fn def() -> ToolDef {
        write_def::<CollectAllParams>(
            Self::NAME,
            "Plans collecting the uncollected fees of every Uniswap V3 (or V4, `version: v4`) position the wallet \
             holds, to the wallet, in one transaction: the position manager's multicall of a collect per V3 \
             position, or one modifyLiquidities for the V4 ones. The first 25 positions with fees; the liquidity \
             stays. Amounts come from the positions' fee math and the simulation.",
            RiskTier::Low,
            "collect_all_fees",
            &["find positions", "read fees", "build call"],
            &[(Phase::Thriving, "Collect when the fees are worth more than the gas.")],
        )
    }

    fn plan(p: CollectAllParams) -> Result<WritePlan, Error> {
        let owner = wallet(p.chain_id)?;
        let book = book(p.chain_id)?;
        events::progress(0);
        let mut owed = Vec::new();
        let mut offset = 0;
        // Page through the wallet's positions as the read tool does; keep those with fees.
        loop {
            let page = crate::read::GetPositions::run(PositionsParams {
                chain_id: p.chain_id,
                owner: None,
                version: Some(p.version.unwrap_or(Version::V3)),
                from_block: p.from_block,
                include_empty: false,
                limit: 25,
                offset,
            })?;
            owed.extend(
                page.positions
                    .into_iter()
                    .filter(|h| h.position.fees0_base != "0" || h.position.fees1_base != "0"),
            );
            match page.next_offset {
                Some(next) if owed.len() < MOST => offset = next,
                _ => break,
            }
        }
        owed.truncate(MOST);
        if owed.is_empty() {
            return Err(invalid_params("no position of the wallet has fees to collect yet"));
        }
        events::progress(1);
        let base = |s: &str| s.parse::<U256>().unwrap_or_default();
        let mut totals: BTreeMap<Address, (Token, U256)> = BTreeMap::new();
        let mut positions = Vec::new();
        let mut ids = Vec::new();
        for h in &owed {
            let pos = &h.position;
            for (t, fee) in [(&pos.token0, base(&pos.fees0_base)), (&pos.token1, base(&pos.fees1_base))] {
                totals.entry(t.address).or_insert_with(|| (t.clone(), U256::ZERO)).1 += fee;
            }
            ids.push(base(&pos.position_id));
            positions.push(Collected {
                position_id: pos.position_id.clone(),
                token0: pos.token0.symbol.clone(),
                token1: pos.token1.symbol.clone(),
                fees0: pos.fees0.clone(),
                fees1: pos.fees1.clone(),
            });
        }
        let call = match p.version {
            Some(Version::V4) => {
                let currencies: Vec<Address> = totals.keys().copied().collect();
                v4p::collect_all(p.chain_id, &book, &ids, &currencies)?
            }
            _ => {
                let data: Vec<Bytes> = ids
                    .iter()
                    .map(|id| collect_call(p.chain_id, book.position_manager, *id, owner).data.into())
                    .collect();
                tx_call(p.chain_id, book.position_manager, &multicallCall { data })
            }
        };
        events::progress(2);
        let summary: Vec<String> =
            totals.values().map(|(t, a)| format!("{} {}", format_units(*a, t.decimals), t.symbol)).collect();
        let calls = vec![PlannedCall {
            call,
            description: format!(
                "collect the fees of {} positions in one transaction: {}",
                ids.len(),
                summary.join(" + ")
            ),
        }];
        let expected = CollectAllOutcome {
            balance_changes: totals.values().map(|(t, a)| BalanceChange::received(t, *a)).collect(),
            collected_from: positions,
        };
        Ok(WritePlan { calls, expected_outcome_json: json(&expected)? })
    }

    fn verify(p: CollectAllParams, receipts: Vec<Receipt>) -> Result<serde_json::Value, Error> {
        check_receipts(&receipts)?;
        let owner = wallet(p.chain_id)?;
        let book = book(p.chain_id)?;
        let tokens = paid_tokens(p.chain_id, &book, &receipts, p.version)?;
        let logs: Vec<bardo_sdk::Log> = receipts.iter().flat_map(|r| r.logs.clone()).collect();
        let balance_changes = tokens
            .iter()
            .map(|t| {
                let (received, sent) = erc20::transfers(&logs, t.address, owner);
                BalanceChange::net(t.address, received, sent)
            })
            .collect();
        let positions = match p.version {
            Some(Version::V4) => Vec::new(),
            _ => logs_of::<Collect>(&receipts, book.position_manager)
                .into_iter()
                .map(|c| Collected {
                    position_id: c.tokenId.to_string(),
                    token0: String::new(),
                    token1: String::new(),
                    fees0: c.amount0.to_string(),
                    fees1: c.amount1.to_string(),
                })
                .collect(),
        };
        serde_json::to_value(CollectAllOutcome { balance_changes, collected_from: positions })
            .map_err(|e| internal(e.to_string()))
    }
}

/// The tokens the collect paid: each V3 position's (the manager's `Collect` names it), or the V4
/// positions' pools'.
fn paid_tokens(
    chain_id: u64,
    book: &Book,
    receipts: &[Receipt],
    version: Option<Version>,
) -> Result<Vec<Token>, Error> {
    let mut tokens: BTreeMap<Address, Token> = BTreeMap::new();
    if version == Some(Version::V4) {
        let posm = v4p::manager(chain_id, book)?;
        for m in v4p::modifications(receipts, posm) {
            let (t0, t1) = v4p::pool_tokens(chain_id, posm, m.pool_id)?;
            tokens.insert(t0.address, t0);
            tokens.insert(t1.address, t1);
        }
    } else {
        for c in logs_of::<Collect>(receipts, book.position_manager) {
            let stored = bardo_sdk::abi::eth_call(
                chain_id,
                book.position_manager,
                &positionsCall { tokenId: c.tokenId },
            )?;
            for t in [stored.token0, stored.token1] {
                if let std::collections::btree_map::Entry::Vacant(slot) = tokens.entry(t) {
                    slot.insert(erc20::token(chain_id, t)?);
                }
            }
        }
    }
    Ok(tokens.into_values().collect())
}
