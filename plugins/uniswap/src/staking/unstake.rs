//! `uniswap_unstake_position`: a staked V3 position's stakes ended, its rewards claimed and the
//! position withdrawn to the wallet, in one staker `multicall`.

use super::*;
use crate::book::book;
use crate::liquidity::{check_receipts, json, json_value, write_def};
use crate::read::{position, position_id};
use bardo_sdk::abi::wallet;
use bardo_sdk::erc20::{BalanceChange, NftChange};
use bardo_sdk::{Phase, PlannedCall, Receipt, RiskTier, ToolDef, WritePlan, WriteTool, events};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Params of `uniswap_unstake_position`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UnstakeParams {
    /// Chain id.
    pub chain_id: u64,
    /// The V3 position NFT's id, decimal: deposited in the staker for the wallet.
    pub position_id: String,
    /// Search incentives from this block (default: the last `MAX_SCAN` blocks).
    #[serde(default)]
    pub from_block: Option<u64>,
}

/// One reward token and what it paid.
#[derive(Debug, Serialize)]
pub struct Reward {
    pub token: bardo_sdk::erc20::Token,
    pub amount: String,
    pub amount_base: String,
}

impl Reward {
    pub fn new(chain_id: ChainId, token: Address, amount: U256) -> Result<Self, Error> {
        let token = bardo_sdk::erc20::token(chain_id, token)?;
        Ok(Self {
            amount: bardo_sdk::units::format_units(amount, token.decimals),
            amount_base: amount.to_string(),
            token,
        })
    }
}

/// Expected / verified unstake.
#[derive(Debug, Serialize)]
pub struct UnstakeOutcome {
    /// The rewards arriving (at least what the simulation pays now; more accrues until it lands).
    pub balance_changes: Vec<BalanceChange>,
    /// The position back in the wallet.
    pub nfts: Vec<NftChange>,
    pub position_id: String,
    /// The incentives it left.
    pub unstaked: Vec<String>,
    pub rewards: Vec<Reward>,
}

/// The rewards as balance changes: a reward accrues every second, and the block the
/// transaction lands in may be stamped a little before or after the simulation's, so each is
/// declared from 1 % under what was simulated up to twice it.
pub fn reward_changes(chain_id: ChainId, rewards: &[(Address, U256)]) -> Result<Vec<BalanceChange>, Error> {
    rewards
        .iter()
        .map(|(t, amount)| {
            let token = bardo_sdk::erc20::token(chain_id, *t)?;
            let under = *amount / U256::from(100u8);
            Ok(BalanceChange::received(&token, *amount - under).up_to(under + *amount + U256::from(1u8)))
        })
        .collect()
}

/// What each reward token paid the wallet in `receipts` (the staker's transfers to it).
pub fn paid(
    receipts: &[Receipt],
    staker: Address,
    wallet: Address,
    tokens: &[Address],
) -> Vec<(Address, U256)> {
    let paid = |token: Address| {
        bardo_sdk::abi::events::<Transfer>(receipts, token)
            .iter()
            .filter(|t| t.from == staker && t.to == wallet)
            .fold(U256::ZERO, |sum, t| sum + t.value)
    };
    tokens.iter().map(|t| (*t, paid(*t))).collect()
}

pub struct UnstakePosition;

impl WriteTool for UnstakePosition {
    const NAME: &'static str = "uniswap_unstake_position";
    type Params = UnstakeParams;

    fn def() -> ToolDef {
        write_def::<UnstakeParams>(
            Self::NAME,
            "Plans taking a staked Uniswap V3 position out of Uniswap's V3 Staker in one transaction: every \
             incentive it is staked in is unstaked, the rewards earned are claimed to the wallet, and the \
             position NFT is withdrawn to the wallet. The expected rewards come from simulating it.",
            RiskTier::Low,
            "unstake_liquidity",
            &["read deposit", "find stakes", "simulate unstake", "build call"],
            &[(
                Phase::Defensive,
                "Unstake before closing or moving a position: a staked position cannot be changed.",
            )],
        )
    }

    fn plan(p: UnstakeParams) -> Result<WritePlan, Error> {
        let owner = wallet(p.chain_id)?;
        let book = book(p.chain_id)?;
        let staker = staker(p.chain_id, &book)?;
        let id = position_id(&p.position_id)?;
        events::progress(0);
        let pos = position(p.chain_id, &book, id)?;
        if !held(p.chain_id, staker, &pos, owner)? {
            return Err(invalid_params(format!(
                "position {id} is in the wallet, not in the staker: nothing to unstake"
            )));
        }
        events::progress(1);
        let pool = pool_of(p.chain_id, &book, &pos)?;
        events::progress(2);
        let exit = exit(p.chain_id, staker, owner, pool, &pos, p.from_block, Then::Withdraw)?;
        events::progress(3);
        let description = format!(
            "unstake position {id} from {} incentive(s), claim {} reward token(s) and withdraw it to the wallet",
            exit.unstaked.len(),
            exit.rewards.len()
        );
        let expected = UnstakeOutcome {
            balance_changes: reward_changes(p.chain_id, &exit.rewards)?,
            nfts: vec![NftChange {
                collection: book.position_manager,
                id: Some(id.to_string()),
                gained: true,
            }],
            position_id: id.to_string(),
            unstaked: exit.unstaked.iter().map(|i| i.id.to_string()).collect(),
            rewards: exit
                .rewards
                .iter()
                .map(|(t, a)| Reward::new(p.chain_id, *t, *a))
                .collect::<Result<_, _>>()?,
        };
        Ok(WritePlan {
            calls: vec![PlannedCall { call: exit.call, description }],
            expected_outcome_json: json(&expected)?,
        })
    }

    fn verify(p: UnstakeParams, receipts: Vec<Receipt>) -> Result<serde_json::Value, Error> {
        check_receipts(&receipts)?;
        let (owner, book) = (wallet(p.chain_id)?, book(p.chain_id)?);
        let staker = staker(p.chain_id, &book)?;
        let id = position_id(&p.position_id)?;
        let pos = position(p.chain_id, &book, id)?;
        if pos.owner != owner {
            return Err(internal(format!(
                "position {id} is held by {} after the transaction, not the wallet",
                pos.owner
            )));
        }
        let unstaked: Vec<B256> = bardo_sdk::abi::events::<TokenUnstaked>(&receipts, staker)
            .iter()
            .filter(|e| e.tokenId == id)
            .map(|e| e.incentiveId)
            .collect();
        let pool = pool_of(p.chain_id, &book, &pos)?;
        let mut tokens: Vec<Address> = created(p.chain_id, staker, Some(pool), p.from_block)?
            .into_iter()
            .filter(|i| unstaked.contains(&i.id))
            .map(|i| i.key.rewardToken)
            .collect();
        tokens.sort();
        tokens.dedup();
        let rewards = paid(&receipts, staker, owner, &tokens);
        json_value(UnstakeOutcome {
            balance_changes: rewards.iter().map(|(t, a)| BalanceChange::net(*t, *a, U256::ZERO)).collect(),
            nfts: vec![NftChange {
                collection: book.position_manager,
                id: Some(id.to_string()),
                gained: true,
            }],
            position_id: id.to_string(),
            unstaked: unstaked.iter().map(ToString::to_string).collect(),
            rewards: rewards
                .iter()
                .map(|(t, a)| Reward::new(p.chain_id, *t, *a))
                .collect::<Result<_, _>>()?,
        })
    }
}
