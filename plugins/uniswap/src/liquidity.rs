//! Liquidity tools: mint or increase a position, remove liquidity (and burn it), collect fees —
//! V3 through the NonfungiblePositionManager, V4 through the PositionManager (`liquidity_v4.rs`).
//! Minimum amounts come from simulating the exact calls as the wallet, less the slippage setting.
//!
//! One module per tool (`add`, `remove`, `close`, `collect`, `collect_all`, `compound`, `rebalance`,
//! `migrate`); what they share is here.

use crate::abi::*;
use crate::book::Book;
use crate::read::{Position, position};
use alloy_primitives::{Address, U256};
use bardo_sdk::abi::tx_call;
use bardo_sdk::erc20::{BalanceChange, Token};
use bardo_sdk::errors::{error, internal};
use bardo_sdk::units::format_units;
use bardo_sdk::{
    CapabilityTier, Category, ChainId, Error, ErrorCode, Phase, Receipt, RiskTier, SpriteTrigger, TickBudget,
    ToolDef, TxCall, tool_def,
};
use schemars::JsonSchema;
use serde::Serialize;

mod add;
mod close;
mod collect;
mod collect_all;
mod compound;
mod migrate;
mod rebalance;
mod remove;

pub use add::AddLiquidity;
pub use close::ClosePosition;
pub use collect::CollectFees;
pub use collect_all::CollectAllFees;
pub use compound::CompoundFees;
pub use migrate::MigratePosition;
pub use rebalance::RebalancePosition;
pub use remove::RemoveLiquidity;

pub(crate) fn write_def<P: JsonSchema>(
    name: &str,
    description: &str,
    risk: RiskTier,
    kind: &str,
    steps: &[&str],
    guidance: &[(Phase, &str)],
) -> ToolDef {
    ToolDef {
        prompt_guidelines: bardo_sdk::guidelines(guidance),
        capability_tier: CapabilityTier::Write,
        risk_tier: risk,
        tick_budget: TickBudget::Medium,
        sprite_trigger: SpriteTrigger::Executing,
        progress_steps: steps.iter().map(|s| (*s).to_owned()).collect(),
        action_kinds: vec![kind.to_owned()],
        supported_chains: bardo_sdk::chains::UNISWAP.to_vec(),
        prompt_snippet: bardo_sdk::snippet(name, description),
        ..tool_def::<P>(name, description, Category::Lp)
    }
}

/// The slippage tolerance when none is given, basis points.
fn default_slippage() -> u32 {
    50
}

pub(crate) fn json<T: Serialize>(v: &T) -> Result<String, Error> {
    serde_json::to_string(v).map_err(|e| internal(e.to_string()))
}

/// Amounts for output: human and base units.
#[derive(Debug, Serialize)]
pub struct Amounts {
    pub token0: Token,
    pub token1: Token,
    pub amount0: String,
    pub amount1: String,
    pub amount0_base: String,
    pub amount1_base: String,
}

impl Amounts {
    fn new(t0: &Token, t1: &Token, a0: U256, a1: U256) -> Self {
        Self {
            token0: t0.clone(),
            token1: t1.clone(),
            amount0: format_units(a0, t0.decimals),
            amount1: format_units(a1, t1.decimals),
            amount0_base: a0.to_string(),
            amount1_base: a1.to_string(),
        }
    }
}

/// The wallet must own the position it changes.
fn owned(chain_id: ChainId, book: &Book, id: U256, owner: Address) -> Result<Position, Error> {
    let pos = position(chain_id, book, id)?;
    if pos.owner != owner {
        return Err(error(
            ErrorCode::Denied,
            format!("position {id} belongs to {}, not to this wallet ({owner})", pos.owner),
        ));
    }
    Ok(pos)
}

pub(crate) fn check_receipts(receipts: &[Receipt]) -> Result<(), Error> {
    match receipts.iter().find(|r| !r.success) {
        Some(r) => Err(error(ErrorCode::Reverted, format!("transaction {} reverted", r.tx_hash))),
        None if receipts.is_empty() => Err(internal("no receipts to verify")),
        None => Ok(()),
    }
}

fn collect_call(chain_id: ChainId, npm: Address, id: U256, recipient: Address) -> TxCall {
    tx_call(
        chain_id,
        npm,
        &collectCall {
            params: CollectParams { tokenId: id, recipient, amount0Max: u128::MAX, amount1Max: u128::MAX },
        },
    )
}

pub(crate) fn json_value<T: Serialize>(v: T) -> Result<serde_json::Value, Error> {
    serde_json::to_value(v).map_err(|e| internal(e.to_string()))
}

/// `amounts` of `t0` and `t1` arriving in the wallet.
fn received(t0: &Token, t1: &Token, amounts: (U256, U256)) -> Vec<BalanceChange> {
    vec![BalanceChange::received(t0, amounts.0), BalanceChange::received(t1, amounts.1)]
}

/// The size of a balance change, base units (either direction).
fn base(change: &BalanceChange) -> U256 {
    change.delta.trim_start_matches('-').parse().unwrap_or_default()
}
