//! The write plans: deposit, mint, withdraw, redeem. Receiver and owner are always the wallet;
//! an entry approves exactly the assets it spends; each plan declares both balances it moves
//! (priced in the vault's own preview, which EIP-4626 makes exact for the same block) and
//! `verify` reads the vault's `Deposit` / `Withdraw` event from the receipt.

use crate::read::{amount, resolve};
use bardo_sdk::abi::{decode_log, landed, wallet};
use bardo_sdk::erc20::{self, Authority, BalanceChange};
use bardo_sdk::erc4626::{self, Flow};
use bardo_sdk::errors::{internal, invalid_params};
use bardo_sdk::operator::book;
use bardo_sdk::units::{Amount, format_units};
use bardo_sdk::{
    CapabilityTier, Category, ChainId, Error, PlannedCall, Receipt, RiskTier, SpriteTrigger, TickBudget,
    ToolDef, WritePlan, snippet, tool_def,
};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

/// Params of the four write tools.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FlowParams {
    /// Chain id.
    pub chain_id: ChainId,
    /// The vault: a symbol from the operator's list (`bvUSDC`) or an address; it must be
    /// allowlisted with role `erc4626-vault`.
    pub vault: String,
    /// Units of the asset (deposit, withdraw) or of shares (mint, redeem), decimal; `max` for
    /// everything the wallet may withdraw or redeem.
    pub amount: String,
}

fn def(name: &str, kind: &str, risk: RiskTier, description: &str) -> ToolDef {
    ToolDef {
        capability_tier: CapabilityTier::Write,
        risk_tier: risk,
        tick_budget: TickBudget::Medium,
        sprite_trigger: SpriteTrigger::Executing,
        progress_steps: vec!["read the vault".into(), "build calls".into()],
        action_kinds: vec![kind.into()],
        supported_chains: bardo_sdk::chains::VAULT.to_vec(),
        prompt_snippet: snippet(name, description),
        ..tool_def::<FlowParams>(name, description, Category::Vault)
    }
}

fn plan(flow: Flow, p: FlowParams) -> Result<WritePlan, Error> {
    let c = p.chain_id;
    let b = book(c)?;
    let owner = wallet(c)?;
    bardo_sdk::events::progress(0);
    let v = resolve(c, &b, &p.vault)?;
    let vault = v.shares.address;
    b.require_listed(vault, Some("erc4626-vault"))?;
    let (unit, _) = v.sides(flow);
    let cap = v.max(c, flow, owner)?;
    let amount = amount(&p.amount, unit, (!flow.entering()).then_some(cap))?;
    if amount.is_zero() {
        return Err(invalid_params(format!(
            "the wallet has nothing to {} from {}",
            flow.name(),
            v.shares.symbol
        )));
    }
    if amount > cap {
        return Err(invalid_params(format!(
            "{} of {} {} exceeds what {} takes from the wallet now ({} {}, its {}); lower `amount`",
            flow.name(),
            format_units(amount, unit.decimals),
            unit.symbol,
            v.shares.symbol,
            format_units(cap, unit.decimals),
            unit.symbol,
            flow.max_name()
        )));
    }
    let out = v.preview(c, flow, amount)?;
    let (assets, shares) = if flow.in_assets() { (amount, out) } else { (out, amount) };
    if shares.is_zero() || assets.is_zero() {
        return Err(invalid_params(format!(
            "{} of {} {} rounds to nothing in {}; raise `amount`",
            flow.name(),
            format_units(amount, unit.decimals),
            unit.symbol,
            v.shares.symbol
        )));
    }
    bardo_sdk::events::progress(1);
    let mut calls = Vec::new();
    let mut authorities = Vec::new();
    let changes = if flow.entering() {
        erc20::require_balance(c, &v.asset, owner, assets)?;
        let spender = format!("the vault {}", v.shares.symbol);
        calls.extend(erc20::approval_if_short(c, &v.asset, owner, vault, assets, &spender)?);
        authorities.push(Authority::erc20(&v.asset, vault, assets));
        vec![BalanceChange::spent(&v.asset, assets), BalanceChange::received(&v.shares, shares)]
    } else {
        vec![BalanceChange::spent(&v.shares, shares), BalanceChange::received(&v.asset, assets)]
    };
    calls.push(PlannedCall {
        call: v.call(c, flow, amount, owner),
        description: format!(
            "{} {} {} {} {}",
            flow.name(),
            format_units(amount, unit.decimals),
            unit.symbol,
            if flow.entering() { "into" } else { "from" },
            v.shares.symbol
        ),
    });
    let outcome = json!({
        "action": format!("vault_{}", flow.name()), "vault": v.shares, "asset": v.asset,
        "assets": Amount::of(assets, v.asset.decimals), "shares": Amount::of(shares, v.shares.decimals),
        "balance_changes": changes, "authorities": authorities,
    });
    Ok(WritePlan { calls, expected_outcome_json: outcome.to_string() })
}

fn verify(flow: Flow, p: FlowParams, receipts: Vec<Receipt>) -> Result<Value, Error> {
    let c = p.chain_id;
    let v = resolve(c, &book(c)?, &p.vault)?;
    let (last, owner) = landed(&receipts)?;
    let from_vault = || last.logs.iter().filter(|l| l.address.parse().ok() == Some(v.shares.address));
    let (assets, shares) = if flow.entering() {
        from_vault()
            .filter_map(decode_log::<erc4626::Deposit>)
            .find(|d| d.owner == owner)
            .map(|d| (d.assets, d.shares))
    } else {
        from_vault()
            .filter_map(decode_log::<erc4626::Withdraw>)
            .find(|w| w.owner == owner && w.receiver == owner)
            .map(|w| (w.assets, w.shares))
    }
    .ok_or_else(|| {
        internal(format!("the receipt holds no {} event of {} for the wallet", flow.name(), v.shares.symbol))
    })?;
    let held = erc20::balance_of(c, v.shares.address, owner)?;
    Ok(json!({
        "action": format!("vault_{}", flow.name()), "vault": v.shares, "asset": v.asset,
        "assets": Amount::of(assets, v.asset.decimals), "shares": Amount::of(shares, v.shares.decimals),
        "shares_held": Amount::of(held, v.shares.decimals),
        "value_held": Amount::of(v.to_assets(c, held)?, v.asset.decimals),
        "tx_hash": last.tx_hash,
    }))
}

macro_rules! flow_tool {
    ($tool:ident, $name:literal, $flow:ident, $risk:ident, $what:literal) => {
        pub struct $tool;

        impl bardo_sdk::WriteTool for $tool {
            const NAME: &'static str = $name;
            type Params = FlowParams;

            fn def() -> ToolDef {
                def(Self::NAME, $name, RiskTier::$risk, $what)
            }

            fn plan(p: FlowParams) -> Result<WritePlan, Error> {
                plan(Flow::$flow, p)
            }

            fn verify(p: FlowParams, receipts: Vec<Receipt>) -> Result<Value, Error> {
                verify(Flow::$flow, p, receipts)
            }
        }
    };
}

flow_tool!(
    Deposit,
    "vault_deposit",
    Deposit,
    Medium,
    "Deposit `amount` of a vault's asset into an allowlisted ERC-4626 vault for shares to the wallet \
     (approving exactly that amount when the allowance is short). Write: returns a plan the host \
     checks, simulates and asks to commit."
);
flow_tool!(
    Mint,
    "vault_mint",
    Mint,
    Medium,
    "Mint exactly `amount` shares of an allowlisted ERC-4626 vault to the wallet, paying the assets \
     previewMint asks (approved exactly). Write: returns a plan."
);
flow_tool!(
    Withdraw,
    "vault_withdraw",
    Withdraw,
    Low,
    "Withdraw `amount` of the asset (or `max`) from an ERC-4626 vault to the wallet, burning the \
     wallet's shares. Write: returns a plan."
);
flow_tool!(
    Redeem,
    "vault_redeem",
    Redeem,
    Low,
    "Redeem `amount` shares (or `max`) of an ERC-4626 vault for its asset, paid to the wallet. \
     Write: returns a plan."
);
