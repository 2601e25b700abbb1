//! `uniswap_claim_staking_rewards`: a staked V3 position's rewards to the wallet, the position
//! staked on — one staker `multicall` of unstake (which credits the reward), claim, and stake
//! again in each incentive still running.

use super::unstake::{Reward, received, reward_changes, rewards};
use super::*;
use crate::book::book;
use crate::liquidity::{check_receipts, json, json_value, write_def};
use crate::read::{position, position_id};
use bardo_sdk::abi::wallet;
use bardo_sdk::erc20::BalanceChange;
use bardo_sdk::{Phase, PlannedCall, Receipt, RiskTier, ToolDef, WritePlan, WriteTool, events};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Params of `uniswap_claim_staking_rewards`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ClaimParams {
    /// Chain id.
    pub chain_id: u64,
    /// The staked V3 position NFT's id, decimal.
    pub position_id: String,
    /// Search incentives from this block (default: the last `MAX_SCAN` blocks).
    #[serde(default)]
    pub from_block: Option<u64>,
}

/// Expected / verified claim.
#[derive(Debug, Serialize)]
pub struct ClaimOutcome {
    /// The rewards arriving (at least what the simulation pays now).
    pub balance_changes: Vec<BalanceChange>,
    pub position_id: String,
    pub rewards: Vec<Reward>,
    /// The incentives it stays staked in.
    pub staked_in: Vec<String>,
    /// Incentives that ended: unstaked, not staked again.
    pub ended: Vec<String>,
}

pub struct ClaimStakingRewards;

impl WriteTool for ClaimStakingRewards {
    const NAME: &'static str = "uniswap_claim_staking_rewards";
    type Params = ClaimParams;

    fn def() -> ToolDef {
        write_def::<ClaimParams>(
            Self::NAME,
            "Plans claiming what a staked Uniswap V3 position has earned in V3 Staker incentives, to the wallet, \
             in one transaction that keeps it staked: each stake is ended (the staker credits its reward only \
             then), the rewards are claimed, and the stakes in incentives still running are made again. The \
             expected rewards come from simulating it.",
            RiskTier::Low,
            "claim_staking_rewards",
            &["read deposit", "find stakes", "simulate claim", "build call"],
            &[(Phase::Thriving, "Claim when the rewards are worth more than the gas.")],
        )
    }

    fn plan(p: ClaimParams) -> Result<WritePlan, Error> {
        let book = book(p.chain_id)?;
        let staked = "it earns no incentive; stake it with `uniswap_stake_position`";
        let d = deposited(p.chain_id, &book, &p.position_id, staked)?;
        let id = d.pos.id;
        let exit = exit(p.chain_id, d.staker, d.owner, d.pool, &d.pos, p.from_block, Then::Restake)?;
        if exit.rewards.iter().all(|(_, a)| a.is_zero()) {
            return Err(invalid_params(format!(
                "position {id} has earned nothing to claim yet (it earns only while the price is in its range)"
            )));
        }
        events::progress(3);
        let expected = ClaimOutcome {
            balance_changes: reward_changes(p.chain_id, &exit.rewards)?,
            position_id: id.to_string(),
            rewards: rewards(p.chain_id, &exit.rewards)?,
            staked_in: exit.restaked.iter().map(ToString::to_string).collect(),
            ended: (exit.unstaked.iter())
                .filter(|i| !exit.restaked.contains(&i.id))
                .map(|i| i.id.to_string())
                .collect(),
        };
        let description = format!(
            "claim position {id}'s staking rewards ({} token(s)) to the wallet and stake it again in {} incentive(s)",
            exit.rewards.len(),
            exit.restaked.len()
        );
        Ok(WritePlan {
            calls: vec![PlannedCall { call: exit.call, description }],
            expected_outcome_json: json(&expected)?,
        })
    }

    fn verify(p: ClaimParams, receipts: Vec<Receipt>) -> Result<serde_json::Value, Error> {
        check_receipts(&receipts)?;
        let (owner, book) = (wallet(p.chain_id)?, book(p.chain_id)?);
        let staker = staker(p.chain_id, &book)?;
        let id = position_id(&p.position_id)?;
        let pos = position(p.chain_id, &book, id)?;
        let pool = pool_of(p.chain_id, &book, &pos)?;
        let (unstaked, paid) = settled(p.chain_id, &receipts, (staker, owner, pool), id, p.from_block)?;
        let restaked: Vec<B256> = bardo_sdk::abi::events::<TokenStaked>(&receipts, staker)
            .iter()
            .filter(|e| e.tokenId == id)
            .map(|e| e.incentiveId)
            .collect();
        json_value(ClaimOutcome {
            balance_changes: received(&paid),
            position_id: id.to_string(),
            rewards: rewards(p.chain_id, &paid)?,
            staked_in: restaked.iter().map(ToString::to_string).collect(),
            ended: unstaked.iter().filter(|i| !restaked.contains(i)).map(ToString::to_string).collect(),
        })
    }
}
