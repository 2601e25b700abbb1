//! The write plans: approve exactly, revoke, wrap ETH, unwrap WETH, transfer to an allowlisted
//! recipient. Each declares every balance it moves and every allowance it leaves; the host
//! checks the declaration against its own simulation, and `verify` reads the receipts.

use alloy_primitives::{Address, U256};
use bardo_sdk::abi::{decode_log, ether_balance, landed, tx_call, wallet};
use bardo_sdk::erc20::{self, Authority, BalanceChange, Token, transfers};
use bardo_sdk::errors::{internal, invalid_params};
use bardo_sdk::operator::{Book, book};
use bardo_sdk::tokens::parse_address;
use bardo_sdk::units::{format_units, parse_units};
use bardo_sdk::{
    Category, ChainId, Error, PlannedCall, Receipt, RiskTier, ToolDef, TxCall, WritePlan, WriteTool,
};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

alloy_sol_types::sol! {
    function deposit() external payable;
    function withdraw(uint256 wad) external;
    function transfer(address to, uint256 amount) external returns (bool);
    event Approval(address indexed owner, address indexed spender, uint256 value);
    event Deposit(address indexed dst, uint256 wad);
    event Withdrawal(address indexed src, uint256 wad);
}

/// The native coin in `BalanceChange` (the zero address; the host reads it as `native`).
const NATIVE: Address = Address::ZERO;

/// A write tool's definition. Approvals are the specification's `trading` ("swap execution,
/// quotes, approvals"); moving the wallet's own funds (transfer, wrap) is `wallet` ("funding").
fn write_def<P: JsonSchema>(
    name: &str,
    category: Category,
    kind: &str,
    risk: RiskTier,
    description: &str,
) -> ToolDef {
    bardo_sdk::write_def::<P>(name, description, category, (kind, risk), &["read the wallet", "build calls"])
}

fn plan_of(calls: Vec<PlannedCall>, outcome: Value) -> Result<WritePlan, Error> {
    Ok(WritePlan { calls, expected_outcome_json: outcome.to_string() })
}

fn amount_of(field: &str, text: &str, decimals: u8) -> Result<U256, Error> {
    let v = parse_units(field, text, decimals)?;
    if v.is_zero() {
        return Err(invalid_params(format!("`{field}` must be more than 0")));
    }
    Ok(v)
}

/// Params of `wallet_approve`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ApproveParams {
    /// Chain id.
    pub chain_id: ChainId,
    /// The token: a listed symbol or an address.
    pub token: String,
    /// Who may spend: an allowlisted contract.
    pub spender: String,
    /// Token units, decimal (`"250.5"`); exact — never unlimited.
    pub amount: String,
}

pub struct Approve;

impl WriteTool for Approve {
    const NAME: &'static str = "wallet_approve";
    type Params = ApproveParams;

    fn def() -> ToolDef {
        write_def::<ApproveParams>(
            Self::NAME,
            Category::Trading,
            "approve",
            // An exact approval is a small, bounded exposure (the WIT's `low`); the host raises
            // the plan to High when what it leaves approved is worth more than
            // `[safety] approval_high_risk_usd`.
            RiskTier::Low,
            "Approve an allowlisted spender for exactly `amount` of a token (ERC-20 approve; never unlimited). \
             Write: returns a plan the host checks, simulates and asks to commit.",
        )
    }

    fn plan(p: ApproveParams) -> Result<WritePlan, Error> {
        let b = book(p.chain_id)?;
        let owner = wallet(p.chain_id)?;
        bardo_sdk::events::progress(0);
        let token = b.token(p.chain_id, "token", &p.token)?;
        let spender = parse_address("spender", &p.spender)?;
        b.require_listed(spender, None)?;
        let amount = amount_of("amount", &p.amount, token.decimals)?;
        bardo_sdk::events::progress(1);
        let call = approve_call(p.chain_id, &token, spender, amount);
        plan_of(
            vec![call],
            json!({
                "action": "approve", "token": token, "spender": spender.to_checksum(None),
                "amount": format_units(amount, token.decimals), "amount_base": amount.to_string(),
                "previous_base": erc20::allowance(p.chain_id, token.address, owner, spender)?.to_string(),
                "balance_changes": [], "authorities": [Authority::erc20(&token, spender, amount)],
            }),
        )
    }

    fn verify(p: ApproveParams, receipts: Vec<Receipt>) -> Result<Value, Error> {
        let b = book(p.chain_id)?;
        let token = b.token(p.chain_id, "token", &p.token)?;
        let spender = parse_address("spender", &p.spender)?;
        approval_outcome("approve", &token, spender, &receipts)
    }
}

fn approve_call(chain_id: ChainId, token: &Token, spender: Address, amount: U256) -> PlannedCall {
    PlannedCall {
        call: tx_call(chain_id, token.address, &erc20::approveCall { spender, amount }),
        description: format!(
            "approve {} {} to {spender}",
            format_units(amount, token.decimals),
            token.symbol
        ),
    }
}

/// What the Approval log of `receipts` set, and what the allowance reads now.
fn approval_outcome(
    action: &str,
    token: &Token,
    spender: Address,
    receipts: &[Receipt],
) -> Result<Value, Error> {
    let (last, owner) = landed(receipts)?;
    let logged = last
        .logs
        .iter()
        .filter(|l| l.address.parse::<Address>().ok() == Some(token.address))
        .filter_map(decode_log::<Approval>)
        .find(|a| a.owner == owner && a.spender == spender)
        .map(|a| a.value)
        .ok_or_else(|| internal(format!("the receipt holds no Approval of {} to {spender}", token.symbol)))?;
    let now = erc20::allowance(last.chain_id, token.address, owner, spender)?;
    Ok(json!({
        "action": action, "token": token, "spender": spender.to_checksum(None),
        "approved_base": logged.to_string(), "allowance_now_base": now.to_string(),
        "tx_hash": last.tx_hash,
    }))
}

/// Params of `wallet_revoke_approval`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RevokeParams {
    /// Chain id.
    pub chain_id: ChainId,
    /// The token: a listed symbol or an address.
    pub token: String,
    /// The spender whose allowance goes to zero (any address).
    pub spender: String,
}

pub struct Revoke;

impl WriteTool for Revoke {
    const NAME: &'static str = "wallet_revoke_approval";
    type Params = RevokeParams;

    fn def() -> ToolDef {
        write_def::<RevokeParams>(
            Self::NAME,
            Category::Trading,
            "revoke",
            RiskTier::Low,
            "Revoke the wallet's ERC-20 approval of `spender` (approve 0), whoever the spender is. \
             Find open approvals with wallet_get_approvals. Write: returns a plan.",
        )
    }

    fn plan(p: RevokeParams) -> Result<WritePlan, Error> {
        let b = book(p.chain_id)?;
        let owner = wallet(p.chain_id)?;
        let token = b.token(p.chain_id, "token", &p.token)?;
        let spender = parse_address("spender", &p.spender)?;
        let current = erc20::allowance(p.chain_id, token.address, owner, spender)?;
        if current.is_zero() {
            return Err(invalid_params(format!(
                "{spender} has no allowance of the wallet's {}; nothing to revoke",
                token.symbol
            )));
        }
        let call = PlannedCall {
            description: format!("revoke {spender}'s {} allowance", token.symbol),
            ..approve_call(p.chain_id, &token, spender, U256::ZERO)
        };
        plan_of(
            vec![call],
            json!({
                "action": "revoke", "token": token, "spender": spender.to_checksum(None),
                "previous_base": current.to_string(), "balance_changes": [], "authorities": [],
            }),
        )
    }

    fn verify(p: RevokeParams, receipts: Vec<Receipt>) -> Result<Value, Error> {
        let token = book(p.chain_id)?.token(p.chain_id, "token", &p.token)?;
        let spender = parse_address("spender", &p.spender)?;
        approval_outcome("revoke", &token, spender, &receipts)
    }
}

/// Params of `wallet_wrap_eth` and `wallet_unwrap_weth`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WrapParams {
    /// Chain id.
    pub chain_id: ChainId,
    /// Ether units, decimal (`"1.5"`).
    pub amount: String,
}

fn weth_token(chain_id: ChainId, b: &Book) -> Result<Token, Error> {
    erc20::token(chain_id, b.weth(chain_id)?)
}

pub struct Wrap;

impl WriteTool for Wrap {
    const NAME: &'static str = "wallet_wrap_eth";
    type Params = WrapParams;

    fn def() -> ToolDef {
        write_def::<WrapParams>(
            Self::NAME,
            Category::Wallet,
            "wrap",
            RiskTier::Low,
            "Wrap `amount` ETH into WETH (WETH deposit). Write: returns a plan.",
        )
    }

    fn plan(p: WrapParams) -> Result<WritePlan, Error> {
        let b = book(p.chain_id)?;
        let owner = wallet(p.chain_id)?;
        let weth = weth_token(p.chain_id, &b)?;
        let amount = amount_of("amount", &p.amount, 18)?;
        let have = ether_balance(p.chain_id, owner, None)?;
        if have < amount {
            return Err(invalid_params(format!(
                "the wallet holds {} ETH; wrap at most that (less gas)",
                format_units(have, 18)
            )));
        }
        let call = PlannedCall {
            call: TxCall { value: amount.to_string(), ..tx_call(p.chain_id, weth.address, &depositCall {}) },
            description: format!("wrap {} ETH into WETH", format_units(amount, 18)),
        };
        plan_of(
            vec![call],
            json!({
                "action": "wrap", "amount": format_units(amount, 18), "amount_base": amount.to_string(),
                "balance_changes": [BalanceChange::net(NATIVE, U256::ZERO, amount), BalanceChange::received(&weth, amount)],
            }),
        )
    }

    fn verify(p: WrapParams, receipts: Vec<Receipt>) -> Result<Value, Error> {
        let weth = weth_token(p.chain_id, &book(p.chain_id)?)?;
        let (last, owner) = landed(&receipts)?;
        let wrapped = last
            .logs
            .iter()
            .filter(|l| l.address.parse::<Address>().ok() == Some(weth.address))
            .filter_map(decode_log::<Deposit>)
            .find(|d| d.dst == owner)
            .map(|d| d.wad)
            .ok_or_else(|| internal("the receipt holds no WETH Deposit to the wallet"))?;
        Ok(
            json!({"action": "wrap", "amount": format_units(wrapped, 18), "amount_base": wrapped.to_string(), "tx_hash": last.tx_hash}),
        )
    }
}

pub struct Unwrap;

impl WriteTool for Unwrap {
    const NAME: &'static str = "wallet_unwrap_weth";
    type Params = WrapParams;

    fn def() -> ToolDef {
        write_def::<WrapParams>(
            Self::NAME,
            Category::Wallet,
            "unwrap",
            RiskTier::Low,
            "Unwrap `amount` WETH into ETH (WETH withdraw). Write: returns a plan.",
        )
    }

    fn plan(p: WrapParams) -> Result<WritePlan, Error> {
        let b = book(p.chain_id)?;
        let owner = wallet(p.chain_id)?;
        let weth = weth_token(p.chain_id, &b)?;
        let amount = amount_of("amount", &p.amount, 18)?;
        erc20::require_balance(p.chain_id, &weth, owner, amount)?;
        let call = PlannedCall {
            call: tx_call(p.chain_id, weth.address, &withdrawCall { wad: amount }),
            description: format!("unwrap {} WETH into ETH", format_units(amount, 18)),
        };
        plan_of(
            vec![call],
            json!({
                "action": "unwrap", "amount": format_units(amount, 18), "amount_base": amount.to_string(),
                "balance_changes": [BalanceChange::spent(&weth, amount), BalanceChange::net(NATIVE, amount, U256::ZERO)],
            }),
        )
    }

    fn verify(p: WrapParams, receipts: Vec<Receipt>) -> Result<Value, Error> {
        let weth = weth_token(p.chain_id, &book(p.chain_id)?)?;
        let (last, owner) = landed(&receipts)?;
        let unwrapped = last
            .logs
            .iter()
            .filter(|l| l.address.parse::<Address>().ok() == Some(weth.address))
            .filter_map(decode_log::<Withdrawal>)
            .find(|w| w.src == owner)
            .map(|w| w.wad)
            .ok_or_else(|| internal("the receipt holds no WETH Withdrawal from the wallet"))?;
        Ok(
            json!({"action": "unwrap", "amount": format_units(unwrapped, 18), "amount_base": unwrapped.to_string(), "tx_hash": last.tx_hash}),
        )
    }
}

/// Params of `wallet_transfer`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TransferParams {
    /// Chain id.
    pub chain_id: ChainId,
    /// The token: a listed symbol, an address, or `ETH` for the native coin.
    pub token: String,
    /// The recipient: an account the operator allowlisted as a `recipient`.
    pub to: String,
    /// Token units, decimal.
    pub amount: String,
}

pub struct Transfer;

impl WriteTool for Transfer {
    const NAME: &'static str = "wallet_transfer";
    type Params = TransferParams;

    fn def() -> ToolDef {
        write_def::<TransferParams>(
            Self::NAME,
            Category::Wallet,
            "transfer",
            RiskTier::High,
            "Send `amount` of a token (or `ETH`) to a recipient the operator allowlisted as a `recipient` \
             (a treasury, a cold wallet); any other recipient is refused. Write: returns a plan.",
        )
    }

    fn plan(p: TransferParams) -> Result<WritePlan, Error> {
        let b = book(p.chain_id)?;
        let owner = wallet(p.chain_id)?;
        let to = parse_address("to", &p.to)?;
        b.require_listed(to, Some("recipient"))?;
        if p.token.trim().eq_ignore_ascii_case("eth") {
            let amount = amount_of("amount", &p.amount, 18)?;
            let have = ether_balance(p.chain_id, owner, None)?;
            if have < amount {
                return Err(invalid_params(format!(
                    "the wallet holds {} ETH; lower the amount",
                    format_units(have, 18)
                )));
            }
            let call = PlannedCall {
                call: TxCall {
                    chain_id: p.chain_id,
                    to: bardo_sdk::abi::wire(&to),
                    data: Vec::new(),
                    value: amount.to_string(),
                },
                description: format!("send {} ETH to {to}", format_units(amount, 18)),
            };
            return plan_of(
                vec![call],
                json!({
                    "action": "transfer", "token": "ETH", "to": to.to_checksum(None),
                    "amount": format_units(amount, 18), "amount_base": amount.to_string(),
                    "balance_changes": [BalanceChange::net(NATIVE, U256::ZERO, amount)],
                }),
            );
        }
        let token = b.token(p.chain_id, "token", &p.token)?;
        let amount = amount_of("amount", &p.amount, token.decimals)?;
        erc20::require_balance(p.chain_id, &token, owner, amount)?;
        let call = PlannedCall {
            call: tx_call(p.chain_id, token.address, &transferCall { to, amount }),
            description: format!("send {} {} to {to}", format_units(amount, token.decimals), token.symbol),
        };
        plan_of(
            vec![call],
            json!({
                "action": "transfer", "token": token, "to": to.to_checksum(None),
                "amount": format_units(amount, token.decimals), "amount_base": amount.to_string(),
                "balance_changes": [BalanceChange::spent(&token, amount)],
            }),
        )
    }

    fn verify(p: TransferParams, receipts: Vec<Receipt>) -> Result<Value, Error> {
        let (last, owner) = landed(&receipts)?;
        let to = parse_address("to", &p.to)?;
        if p.token.trim().eq_ignore_ascii_case("eth") {
            return Ok(
                json!({"action": "transfer", "token": "ETH", "to": to.to_checksum(None), "tx_hash": last.tx_hash,
                "recipient_balance_wei": ether_balance(p.chain_id, to, None)?.to_string()}),
            );
        }
        let token = book(p.chain_id)?.token(p.chain_id, "token", &p.token)?;
        let (_, sent) = transfers(&last.logs, token.address, owner);
        let (received, _) = transfers(&last.logs, token.address, to);
        Ok(json!({
            "action": "transfer", "token": token, "to": to.to_checksum(None), "tx_hash": last.tx_hash,
            "sent": format_units(sent, token.decimals), "sent_base": sent.to_string(),
            "received_base": received.to_string(),
        }))
    }
}
