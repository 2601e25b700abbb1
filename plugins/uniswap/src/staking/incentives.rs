//! `uniswap_get_incentives`: the V3 Staker's incentives (of a pool, or all), what each has left
//! to pay, and an account's deposits in the staker — which incentives each is staked in and what
//! it has earned so far — with the rewards already credited to it.

use super::unstake::Reward;
use super::*;
use crate::book::book;
use bardo_sdk::abi::account_or_wallet;
use bardo_sdk::{Category, Phase, ReadTool, TickBudget, ToolDef, events, guidelines, tool_def};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Params of `uniswap_get_incentives`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct IncentivesParams {
    /// Chain id.
    pub chain_id: u64,
    /// Only this V3 pool's incentives (default: all).
    #[serde(default)]
    pub pool: Option<String>,
    /// Whose deposits and rewards (default: the wallet).
    #[serde(default)]
    pub owner: Option<String>,
    /// The first block searched for incentives and deposits (default: 200,000 blocks back).
    #[serde(default)]
    pub from_block: Option<u64>,
}

/// One incentive.
#[derive(Debug, Serialize)]
pub struct IncentiveOutput {
    pub incentive_id: String,
    #[serde(serialize_with = "bardo_sdk::abi::checksummed")]
    pub pool: Address,
    /// What it pays and how much it was funded with.
    pub reward: Reward,
    /// What it has not paid out yet, base units.
    pub reward_unclaimed_base: String,
    /// Unix seconds.
    pub start_time: String,
    pub end_time: String,
    /// Whether it pays now.
    pub active: bool,
    /// Positions staked in it now.
    pub stakes: u64,
}

/// One stake of a deposit.
#[derive(Debug, Serialize)]
pub struct Stake {
    pub incentive_id: String,
    pub liquidity: String,
    /// Earned so far (credited when it is unstaked), base units of the incentive's reward token.
    pub reward_base: String,
}

/// One position deposited in the staker.
#[derive(Debug, Serialize)]
pub struct Deposit {
    pub position_id: String,
    pub stakes: Vec<Stake>,
}

/// Result of `uniswap_get_incentives`.
#[derive(Debug, Serialize)]
pub struct Incentives {
    pub chain_id: u64,
    #[serde(serialize_with = "bardo_sdk::abi::checksummed")]
    pub staker: Address,
    #[serde(serialize_with = "bardo_sdk::abi::checksummed")]
    pub owner: Address,
    pub incentives: Vec<IncentiveOutput>,
    /// The owner's deposits still in the staker.
    pub deposits: Vec<Deposit>,
    /// Rewards credited to the owner and not yet claimed, per reward token.
    pub unclaimed: Vec<Reward>,
    /// The blocks searched.
    pub blocks: (u64, u64),
}

pub struct GetIncentives;

impl ReadTool for GetIncentives {
    const NAME: &'static str = "uniswap_get_incentives";
    type Params = IncentivesParams;
    type Output = Incentives;

    fn def() -> ToolDef {
        ToolDef {
            prompt_snippet: "uniswap_get_incentives: V3 Staker liquidity-mining incentives, the wallet's staked positions and rewards".into(),
            progress_steps: vec!["find incentives".into(), "read incentives".into(), "read deposits".into()],
            tick_budget: TickBudget::Slow,
            prompt_guidelines: guidelines(&[(Phase::Thriving, "Stake in-range positions in running incentives of their pool.")]),
            ..tool_def::<IncentivesParams>(
                Self::NAME,
                "Lists the liquidity-mining incentives of Uniswap's V3 Staker (of one pool, or all): reward \
                 token, funding and what is left, start and end, whether running, positions staked; and an \
                 account's (default the wallet) positions deposited in the staker with each stake's liquidity \
                 and reward earned so far, and the rewards credited and not yet claimed. It changes nothing.",
                Category::Lp,
            )
        }
    }

    fn run(p: IncentivesParams) -> Result<Incentives, Error> {
        let book = book(p.chain_id)?;
        let staker = staker(p.chain_id, &book)?;
        let owner = account_or_wallet(p.chain_id, p.owner.as_deref(), "owner")?;
        let pool = p.pool.as_deref().map(|a| bardo_sdk::abi::parse_address("pool", a)).transpose()?;
        events::progress(0);
        let blocks = logs::range(p.chain_id, p.from_block, logs::MAX_SCAN)?;
        let all = created(p.chain_id, staker, pool, Some(blocks.0))?;
        events::progress(1);
        let now = bardo_sdk::chain::block_timestamp(p.chain_id, None)?;
        let mut incentives = Vec::new();
        for i in &all {
            let state = eth_call(p.chain_id, staker, &incentivesCall { incentiveId: i.id })?;
            incentives.push(IncentiveOutput {
                incentive_id: i.id.to_string(),
                pool: i.key.pool,
                reward: Reward::new(p.chain_id, i.key.rewardToken, i.reward)?,
                reward_unclaimed_base: state.totalRewardUnclaimed.to_string(),
                start_time: i.key.startTime.to_string(),
                end_time: i.key.endTime.to_string(),
                active: i.active(now),
                stakes: state.numberOfStakes.to::<u64>(),
            });
        }
        events::progress(2);
        let mut deposits = Vec::new();
        for id in deposited(p.chain_id, staker, owner, blocks)? {
            let mut stakes = Vec::new();
            for i in &all {
                let stake = eth_call(p.chain_id, staker, &stakesCall { tokenId: id, incentiveId: i.id })?;
                if stake.liquidity == 0 {
                    continue;
                }
                let info =
                    eth_call(p.chain_id, staker, &getRewardInfoCall { key: i.key.clone(), tokenId: id })?;
                stakes.push(Stake {
                    incentive_id: i.id.to_string(),
                    liquidity: stake.liquidity.to_string(),
                    reward_base: info.reward.to_string(),
                });
            }
            deposits.push(Deposit { position_id: id.to_string(), stakes });
        }
        let mut unclaimed = Vec::new();
        for t in reward_tokens(&all) {
            let owed = eth_call(p.chain_id, staker, &rewardsCall { rewardToken: t, owner })?;
            if !owed.is_zero() {
                unclaimed.push(Reward::new(p.chain_id, t, owed)?);
            }
        }
        Ok(Incentives { chain_id: p.chain_id, staker, owner, incentives, deposits, unclaimed, blocks })
    }
}

/// Positions deposited for `owner` within `blocks` that are still its deposits, oldest first.
fn deposited(
    chain_id: ChainId,
    staker: Address,
    owner: Address,
    blocks: (u64, u64),
) -> Result<Vec<U256>, Error> {
    let filter = LogFilter {
        chain_id,
        addresses: vec![wire(&staker)],
        topics: vec![
            vec![DepositTransferred::SIGNATURE_HASH.to_string()],
            vec![],
            vec![],
            vec![B256::left_padding_from(owner.as_slice()).to_string()],
        ],
        from_block: None,
        to_block: None,
    };
    let mut ids = Vec::new();
    for log in logs::scan(filter, blocks.0, blocks.1)? {
        let Some(e) = bardo_sdk::abi::decode_log::<DepositTransferred>(&log) else { continue };
        if !ids.contains(&e.tokenId) && depositor(chain_id, staker, e.tokenId)? == owner {
            ids.push(e.tokenId);
        }
    }
    Ok(ids)
}
