//! `uniswap_stake_position`: stake a V3 position in a V3 Staker incentive of its pool.

use super::*;
use crate::book::book;
use crate::liquidity::{check_receipts, json, json_value, write_def};
use crate::read::{position, position_id};
use bardo_sdk::abi::wallet;
use bardo_sdk::erc20::{BalanceChange, NftChange};
use bardo_sdk::{Phase, PlannedCall, Receipt, RiskTier, ToolDef, WritePlan, WriteTool, events};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Params of `uniswap_stake_position`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StakeParams {
    /// Chain id.
    pub chain_id: u64,
    /// The V3 position NFT's id, decimal: held by the wallet, or already deposited in the staker.
    pub position_id: String,
    /// The incentive (`uniswap_get_incentives` lists them): 0x and 32 bytes.
    pub incentive_id: String,
    /// Search incentives from this block (default: the last `MAX_SCAN` blocks).
    #[serde(default)]
    pub from_block: Option<u64>,
}

/// Expected / verified stake.
#[derive(Debug, Serialize)]
pub struct StakeOutcome {
    /// None: a stake moves no token.
    pub balance_changes: Vec<BalanceChange>,
    /// The position into the staker's custody (none when it was deposited already).
    pub nfts: Vec<NftChange>,
    pub position_id: String,
    pub incentive_id: String,
    #[serde(serialize_with = "bardo_sdk::abi::checksummed")]
    pub staker: Address,
    #[serde(serialize_with = "bardo_sdk::abi::checksummed")]
    pub pool: Address,
    #[serde(serialize_with = "bardo_sdk::abi::checksummed")]
    pub reward_token: Address,
    /// The liquidity staked (after the transaction: as the staker records it).
    pub liquidity: String,
}

pub struct StakePosition;

impl WriteTool for StakePosition {
    const NAME: &'static str = "uniswap_stake_position";
    type Params = StakeParams;

    fn def() -> ToolDef {
        write_def::<StakeParams>(
            Self::NAME,
            "Plans staking a Uniswap V3 position in a liquidity-mining incentive of Uniswap's V3 Staker, in one \
             transaction: the position moves from the wallet into the staker as the wallet's deposit and is \
             staked (or, already deposited, it is staked in one more incentive). The incentive must be one of \
             the position's pool and running. The position earns the incentive's reward while in range; claim \
             with `uniswap_claim_staking_rewards`, take it back with `uniswap_unstake_position`.",
            RiskTier::Medium,
            "stake_liquidity",
            &["read position", "find incentive", "simulate stake", "build call"],
            &[(
                Phase::Thriving,
                "Stake a position whose range the price is likely to stay in: out of range it earns nothing.",
            )],
        )
    }

    fn plan(p: StakeParams) -> Result<WritePlan, Error> {
        let owner = wallet(p.chain_id)?;
        let book = book(p.chain_id)?;
        let staker = staker(p.chain_id, &book)?;
        let id = position_id(&p.position_id)?;
        let wanted = incentive_id(&p.incentive_id)?;
        events::progress(0);
        let pos = position(p.chain_id, &book, id)?;
        let deposited = held(p.chain_id, staker, &pos, owner)?;
        if pos.liquidity == 0 {
            return Err(invalid_params(format!(
                "position {id} holds no liquidity; a stake of nothing earns nothing"
            )));
        }
        events::progress(1);
        let pool = pool_of(p.chain_id, &book, &pos)?;
        let incentive = find(p.chain_id, staker, pool, wanted, p.from_block)?;
        let now = bardo_sdk::chain::block_timestamp(p.chain_id, None)?;
        if !incentive.active(now) {
            return Err(invalid_params(format!(
                "incentive {wanted} runs from {} to {} (unix seconds) and the chain's time is {now}: it is not running",
                incentive.key.startTime, incentive.key.endTime
            )));
        }
        if eth_call(p.chain_id, staker, &stakesCall { tokenId: id, incentiveId: wanted })?.liquidity > 0 {
            return Err(invalid_params(format!("position {id} is staked in incentive {wanted} already")));
        }
        events::progress(2);
        let (call, description) = if deposited {
            let stake = stakeTokenCall { key: incentive.key.clone(), tokenId: id };
            (
                tx_call(p.chain_id, staker, &stake),
                format!("stake deposited position {id} in incentive {wanted}"),
            )
        } else {
            let deposit = safeTransferFromCall {
                from: owner,
                to: staker,
                tokenId: id,
                data: incentive.key.abi_encode().into(),
            };
            (
                tx_call(p.chain_id, book.position_manager, &deposit),
                format!("deposit position {id} in the V3 Staker {staker} and stake it in incentive {wanted}"),
            )
        };
        simulate(p.chain_id, owner, &call, 1)?;
        events::progress(3);
        let expected = StakeOutcome {
            balance_changes: Vec::new(),
            nfts: if deposited { Vec::new() } else { vec![into_custody(book.position_manager, id)] },
            position_id: id.to_string(),
            incentive_id: wanted.to_string(),
            staker,
            pool,
            reward_token: incentive.key.rewardToken,
            liquidity: pos.liquidity.to_string(),
        };
        Ok(WritePlan {
            calls: vec![PlannedCall { call, description }],
            expected_outcome_json: json(&expected)?,
        })
    }

    fn verify(p: StakeParams, receipts: Vec<Receipt>) -> Result<serde_json::Value, Error> {
        check_receipts(&receipts)?;
        let (owner, book) = (wallet(p.chain_id)?, book(p.chain_id)?);
        let staker = staker(p.chain_id, &book)?;
        let (id, wanted) = (position_id(&p.position_id)?, incentive_id(&p.incentive_id)?);
        let stake = eth_call(p.chain_id, staker, &stakesCall { tokenId: id, incentiveId: wanted })?;
        if stake.liquidity == 0 || depositor(p.chain_id, staker, id)? != owner {
            return Err(internal(format!(
                "position {id} is not staked for the wallet in incentive {wanted} after the transaction"
            )));
        }
        let pos = position(p.chain_id, &book, id)?;
        let pool = pool_of(p.chain_id, &book, &pos)?;
        let incentive = find(p.chain_id, staker, pool, wanted, p.from_block)?;
        let deposited_now = bardo_sdk::abi::events::<DepositTransferred>(&receipts, staker)
            .iter()
            .any(|e| e.tokenId == id && e.newOwner == owner && e.oldOwner.is_zero());
        json_value(StakeOutcome {
            balance_changes: Vec::new(),
            nfts: if deposited_now { vec![into_custody(book.position_manager, id)] } else { Vec::new() },
            position_id: id.to_string(),
            incentive_id: wanted.to_string(),
            staker,
            pool,
            reward_token: incentive.key.rewardToken,
            liquidity: stake.liquidity.to_string(),
        })
    }
}
