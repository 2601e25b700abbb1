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

/// Each reward token and its amount as the outcome lists them.
pub fn rewards(chain_id: ChainId, paid: &[(Address, U256)]) -> Result<Vec<Reward>, Error> {
    paid.iter().map(|(t, a)| Reward::new(chain_id, *t, *a)).collect()
}

/// The rewards as the wallet's balance changes, as the receipts show them.
pub fn received(paid: &[(Address, U256)]) -> Vec<BalanceChange> {
    paid.iter().map(|(t, a)| BalanceChange::net(*t, *a, U256::ZERO)).collect()
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
        let book = book(p.chain_id)?;
        let d = deposited(p.chain_id, &book, &p.position_id, "nothing to unstake")?;
        let id = d.pos.id;
        let exit = exit(p.chain_id, d.staker, d.owner, d.pool, &d.pos, p.from_block, Then::Withdraw)?;
        events::progress(3);
        let description = format!(
            "unstake position {id} from {} incentive(s), claim {} reward token(s) and withdraw it to the wallet",
            exit.unstaked.len(),
            exit.rewards.len()
        );
        let expected = UnstakeOutcome {
            balance_changes: reward_changes(p.chain_id, &exit.rewards)?,
            nfts: vec![back(book.position_manager, id)],
            position_id: id.to_string(),
            unstaked: exit.unstaked.iter().map(|i| i.id.to_string()).collect(),
            rewards: rewards(p.chain_id, &exit.rewards)?,
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
        let pool = pool_of(p.chain_id, &book, &pos)?;
        let (unstaked, paid) = settled(p.chain_id, &receipts, (staker, owner, pool), id, p.from_block)?;
        json_value(UnstakeOutcome {
            balance_changes: received(&paid),
            nfts: vec![back(book.position_manager, id)],
            position_id: id.to_string(),
            unstaked: unstaked.iter().map(ToString::to_string).collect(),
            rewards: rewards(p.chain_id, &paid)?,
        })
    }
}
