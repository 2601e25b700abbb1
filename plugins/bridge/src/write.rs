//! `bridge_deposit`: the input approved exactly to the origin's SpokePool and deposited, for
//! the route's output to arrive at the wallet on the destination — no exclusive relayer, no
//! message, the fill deadline from the settings. The output amount is the quote's: the filling
//! relayer delivers exactly that, so it is the deposit's bound on chain.

use crate::across::{FundsDeposited, depositV3Call};
use crate::read::{BridgeParams, quote};
use alloy_primitives::{Address, Bytes, U256};
use bardo_sdk::abi::{events, landed, tx_call, wallet};
use bardo_sdk::erc20::{self, Authority, BalanceChange};
use bardo_sdk::errors::internal;
use bardo_sdk::units::format_units;
use bardo_sdk::{
    CapabilityTier, Category, Error, PlannedCall, Receipt, RiskTier, SpriteTrigger, TickBudget, ToolDef,
    WritePlan, chain, snippet, tool_def,
};
use serde_json::{Value, json};

pub struct Deposit;

const DESCRIPTION: &str = "Bridge `amount` of a token from `chain_id` to the wallet on `destination_chain_id` \
     through Across: approve exactly that amount to the origin's SpokePool and deposit it, for the route's \
     token to arrive (the input less the relayer's fee; bridge_quote says how much). Write: returns a plan \
     the host values by what arrives, checks, simulates and asks to commit; the host then waits for the fill.";

impl bardo_sdk::WriteTool for Deposit {
    const NAME: &'static str = "bridge_deposit";
    type Params = BridgeParams;

    fn def() -> ToolDef {
        ToolDef {
            capability_tier: CapabilityTier::Write,
            risk_tier: RiskTier::High,
            tick_budget: TickBudget::Medium,
            sprite_trigger: SpriteTrigger::Executing,
            progress_steps: vec!["quote the route".into(), "build calls".into()],
            action_kinds: vec!["bridge".into()],
            supported_chains: bardo_sdk::chains::ACROSS.to_vec(),
            prompt_snippet: snippet(Self::NAME, DESCRIPTION),
            ..tool_def::<BridgeParams>(Self::NAME, DESCRIPTION, Category::Trading)
        }
    }

    fn plan(p: BridgeParams) -> Result<WritePlan, Error> {
        let c = p.chain_id;
        let owner = wallet(c)?;
        // The wallet on the destination: a chain the host has no wallet on receives nothing.
        let recipient = wallet(p.destination_chain_id)?;
        bardo_sdk::events::progress(0);
        let (r, amount, q) = quote(&p)?;
        let (output, _) = r.quote(amount);
        erc20::require_balance(c, &r.input, owner, amount)?;
        bardo_sdk::events::progress(1);
        let spoke = r.origin.spoke_pool;
        let mut calls: Vec<PlannedCall> =
            erc20::approval_if_short(c, &r.input, owner, spoke, amount, "Across's SpokePool")?
                .into_iter()
                .collect();
        let now = u32::try_from(chain::block_timestamp(c, None)?)
            .map_err(|_| internal("the origin's clock is past 2106"))?;
        let deposit = depositV3Call {
            depositor: owner,
            recipient,
            inputToken: r.input.address,
            outputToken: r.output.address,
            inputAmount: amount,
            outputAmount: output,
            destinationChainId: U256::from(r.destination),
            exclusiveRelayer: Address::ZERO,
            quoteTimestamp: now,
            fillDeadline: now.saturating_add(r.origin.fill_deadline_secs),
            exclusivityParameter: 0,
            message: Bytes::new(),
        };
        calls.push(PlannedCall {
            call: tx_call(c, spoke, &deposit),
            description: format!(
                "deposit {} {} into Across's SpokePool for {} {} to the wallet on chain {} (fill by {})",
                format_units(amount, r.input.decimals),
                r.input.symbol,
                format_units(output, r.output.decimals),
                r.output.symbol,
                r.destination,
                deposit.fillDeadline
            ),
        });
        let outcome = json!({
            "action": "bridge_deposit",
            "balance_changes": [BalanceChange::spent(&r.input, amount)],
            "authorities": [Authority::erc20(&r.input, spoke, amount)],
            "quote": q,
        });
        Ok(WritePlan { calls, expected_outcome_json: outcome.to_string() })
    }

    fn verify(p: BridgeParams, receipts: Vec<Receipt>) -> Result<Value, Error> {
        let (last, owner) = landed(&receipts)?;
        let spoke = crate::settings::chain(p.chain_id)?.spoke_pool;
        let d = events::<FundsDeposited>(&receipts, spoke)
            .into_iter()
            .find(|d| Address::from_word(d.depositor) == owner)
            .ok_or_else(|| internal("the receipts hold no FundsDeposited of the SpokePool for the wallet"))?;
        Ok(json!({
            "action": "bridge_deposit",
            "status": "deposited",
            "deposit_id": d.depositId.to_string(),
            "origin_chain_id": p.chain_id,
            "destination_chain_id": d.destinationChainId.to_string(),
            "input_amount": d.inputAmount.to_string(),
            "output_amount": d.outputAmount.to_string(),
            "fill_deadline": d.fillDeadline,
            "tx_hash": last.tx_hash,
        }))
    }
}
