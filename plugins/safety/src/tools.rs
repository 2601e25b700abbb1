//! The tools: simulate calls, check a token, check the wallet's approvals, check a contract.

use crate::code::{Contract, inspect};
use crate::round_trip::{RoundTrip, measure};
use alloy_primitives::{Address, U256};
use bardo_sdk::abi::{revert_reason, wallet, wire};
use bardo_sdk::approvals::{ApprovalsParams, OpenApproval, scan};
use bardo_sdk::decode::{decode_event, hex};
use bardo_sdk::erc20::{self, Token};
use bardo_sdk::errors::invalid_params;
use bardo_sdk::operator::book;
use bardo_sdk::tokens::parse_address;
use bardo_sdk::{
    Category, ChainId, Error, ReadTool, TickBudget, ToolDef, TxCall, described, events, simulate,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

fn def<P: JsonSchema>(name: &str, description: &str, steps: &[&str]) -> ToolDef {
    ToolDef { tick_budget: TickBudget::Medium, ..described::<P>(name, description, Category::Safety, steps) }
}

/// One call to simulate.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CallParam {
    /// The contract or account called.
    pub to: String,
    /// Call data, `0x` hex (default: none).
    #[serde(default)]
    pub data: Option<String>,
    /// Wei sent, decimal (default 0).
    #[serde(default)]
    pub value: Option<String>,
}

/// Params of `safety_simulate_transaction`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SimulateParams {
    /// Chain id.
    pub chain_id: ChainId,
    /// The calls, in order, from the wallet (1 to 16).
    pub calls: Vec<CallParam>,
}

#[derive(Serialize)]
pub struct CallResult {
    index: usize,
    to: String,
    success: bool,
    gas_used: u64,
    /// The decoded revert reason, when it reverted.
    revert_reason: Option<String>,
    return_data: String,
    /// Each log `{address, decoded}` (decoded: `{event, fields}` with the known ABIs).
    logs: Vec<Value>,
}

#[derive(Serialize)]
pub struct BalanceChange {
    /// The token; none for ether.
    token: Option<String>,
    /// Its symbol on the operator's token list.
    symbol: Option<String>,
    /// Signed base units.
    delta: String,
}

#[derive(Serialize)]
pub struct SimulationReport {
    block_number: u64,
    /// True when every call succeeded.
    success: bool,
    calls: Vec<CallResult>,
    /// The wallet's balance changes over all the calls.
    balance_changes: Vec<BalanceChange>,
}

pub struct SimulateTransaction;

impl ReadTool for SimulateTransaction {
    const NAME: &'static str = "safety_simulate_transaction";
    type Params = SimulateParams;
    type Output = SimulationReport;

    fn def() -> ToolDef {
        def::<SimulateParams>(
            Self::NAME,
            "Simulate any calls as the wallet on the host's fork of the latest block, changing nothing: \
             per call success, gas, revert reason and decoded logs, and the wallet's balance changes. \
             Use it to see what a transaction would do before anyone signs it.",
            &["simulate"],
        )
    }

    fn run(p: SimulateParams) -> Result<SimulationReport, Error> {
        if p.calls.is_empty() || p.calls.len() > 16 {
            return Err(invalid_params("`calls` must hold 1 to 16 calls"));
        }
        let me = wallet(p.chain_id)?;
        let calls =
            p.calls
                .iter()
                .enumerate()
                .map(|(i, c)| {
                    let to = parse_address(&format!("calls[{i}].to"), &c.to)?;
                    let data = match c.data.as_deref().map(|d| d.trim_start_matches("0x")) {
                        Some(d) => hex_bytes(d)
                            .ok_or_else(|| invalid_params(format!("`calls[{i}].data` is not hex")))?,
                        None => Vec::new(),
                    };
                    let value = c.value.clone().unwrap_or_else(|| "0".into());
                    if value.parse::<U256>().is_err() {
                        return Err(invalid_params(format!(
                            "`calls[{i}].value` {value:?} is not a decimal wei amount"
                        )));
                    }
                    Ok(TxCall { chain_id: p.chain_id, to: wire(&to), data, value })
                })
                .collect::<Result<Vec<_>, Error>>()?;
        events::progress(0);
        let sim = simulate::run(p.chain_id, &wire(&me), &calls)?;
        let b = book(p.chain_id).unwrap_or_default();
        let results: Vec<CallResult> = sim
            .outcomes
            .iter()
            .enumerate()
            .map(|(index, o)| CallResult {
                index,
                to: calls[index].to.clone(),
                success: o.success,
                gas_used: o.gas_used,
                revert_reason: (!o.success).then(|| revert_reason(&o.output)),
                return_data: format!("0x{}", hex(&o.output)),
                logs: o
                    .logs
                    .iter()
                    .map(|l| serde_json::json!({"address": l.address, "decoded": decode_event(l)}))
                    .collect(),
            })
            .collect();
        let balance_changes = sim
            .balance_deltas
            .iter()
            .filter(|d| d.delta != "0")
            .map(|d| BalanceChange {
                symbol: d.token.as_deref().and_then(|t| t.parse::<Address>().ok()).and_then(|t| b.name_of(t)),
                token: d.token.clone(),
                delta: d.delta.clone(),
            })
            .collect();
        Ok(SimulationReport {
            block_number: sim.block_number,
            success: results.len() == calls.len() && results.iter().all(|r| r.success),
            calls: results,
            balance_changes,
        })
    }
}

fn hex_bytes(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) {
        return None;
    }
    (0..s.len()).step_by(2).map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok()).collect()
}

/// Params of `safety_check_token`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TokenParams {
    /// Chain id.
    pub chain_id: ChainId,
    /// The token: a listed symbol or an address.
    pub token: String,
}

#[derive(Serialize)]
pub struct TokenReport {
    token: Token,
    /// Whether it is on the operator's token list.
    listed: bool,
    contract: Contract,
    /// The simulated buy / transfer / sell; none when it could not run (why in `round_trip_skipped`).
    round_trip: Option<RoundTrip>,
    round_trip_skipped: Option<String>,
    /// What fails the token: transfer taxes, a honeypot, paused transfers.
    failures: Vec<String>,
    /// What its owner can do (mint, pause, blacklist, upgrade, fees): not failures, but risks.
    warnings: Vec<String>,
    /// No failures.
    passed: bool,
}

/// A tax above this (0.1 %) fails the token; below it is rounding.
const TAX_FLOOR: f64 = 0.001;

pub struct CheckToken;

impl ReadTool for CheckToken {
    const NAME: &'static str = "safety_check_token";
    type Params = TokenParams;
    type Output = TokenReport;

    fn def() -> ToolDef {
        def::<TokenParams>(
            Self::NAME,
            "Check a token before trading it: transfer, buy and sell taxes and honeypot behaviour by a \
             simulated buy / transfer / sell round trip through its Uniswap V2 WETH pair (nothing is \
             sent), and its owner's powers (mint, pause, blacklist, upgrade, fees) and proxy read from \
             its code and storage. `passed` is false on a tax, a honeypot or paused transfers.",
            &["read code", "simulate a round trip"],
        )
    }

    fn run(p: TokenParams) -> Result<TokenReport, Error> {
        let b = book(p.chain_id)?;
        let address = match p.token.trim() {
            t if t.starts_with("0x") || t.starts_with("0X") => parse_address("token", t)?,
            t => b.token(p.chain_id, "token", t)?.address,
        };
        events::progress(0);
        let contract = inspect(p.chain_id, address)?;
        if !contract.has_code {
            return Err(invalid_params(format!(
                "{address} has no code on chain {}: it is not a token",
                p.chain_id
            )));
        }
        let token = erc20::token(p.chain_id, address)?;
        events::progress(1);
        let (round_trip, skipped) = match (b.weth, b.v2_router) {
            (Some(weth), _) if weth == address => (None, Some("the token is WETH itself".to_owned())),
            (Some(weth), Some(router)) => match measure(p.chain_id, address, weth, router) {
                Ok(trip) => (Some(trip), None),
                Err(e) => (None, Some(e.message)),
            },
            _ => (None, Some("no `weth` and `v2_router` in this plugin's settings".to_owned())),
        };
        let mut failures = Vec::new();
        if let Some(t) = &round_trip {
            let mut tax = |what: &str, v: Option<f64>| {
                if let Some(v) = v.filter(|v| *v > TAX_FLOOR) {
                    failures.push(format!("{what} tax of {:.2} %", v * 100.0));
                }
            };
            tax("buy", Some(t.buy_tax));
            tax("transfer", t.transfer_tax);
            tax("sell", t.sell_tax);
            if t.honeypot {
                failures.push(format!(
                    "honeypot: once bought it cannot be moved or sold ({})",
                    t.reverted.as_deref().unwrap_or("nothing arrived")
                ));
            }
        }
        if contract.paused == Some(true) {
            failures.push("transfers are paused".into());
        }
        let warnings = contract
            .powers
            .iter()
            .map(|p| match *p {
                "mint" => "its owner (or anyone) can mint more".to_owned(),
                "pause" => "its owner can pause transfers".to_owned(),
                "blacklist" => "its owner can blacklist holders".to_owned(),
                "upgrade" => "its code can be upgraded".to_owned(),
                "fee" => "its owner can set a transfer fee".to_owned(),
                "roles" => "it grants roles (minter, pauser, admin)".to_owned(),
                other => format!("it has an owner ({other})"),
            })
            .collect();
        Ok(TokenReport {
            listed: b.tokens.iter().any(|t| t.address == address),
            passed: failures.is_empty(),
            token,
            contract,
            round_trip,
            round_trip_skipped: skipped,
            failures,
            warnings,
        })
    }
}

#[derive(Serialize)]
pub struct RiskyApproval {
    #[serde(flatten)]
    approval: OpenApproval,
    /// Why it is risky: `unlimited`, `not-allowlisted`, `no-code`.
    risks: Vec<&'static str>,
}

#[derive(Serialize)]
pub struct ApprovalsReport {
    account: String,
    from_block: u64,
    to_block: u64,
    /// Open approvals scanned.
    open: usize,
    /// The risky ones, riskiest first; revoke them with wallet_revoke_approval.
    risky: Vec<RiskyApproval>,
}

pub struct CheckApprovals;

impl ReadTool for CheckApprovals {
    const NAME: &'static str = "safety_check_approvals";
    type Params = ApprovalsParams;
    type Output = ApprovalsReport;

    fn def() -> ToolDef {
        def::<ApprovalsParams>(
            Self::NAME,
            "The wallet's risky ERC-20 approvals: open allowances (from Approval logs, re-read now) that \
             are unlimited, go to a spender not on the operator's allowlist, or to an address without \
             code. Revoke them with wallet_revoke_approval.",
            &["scan approval logs", "read allowances"],
        )
    }

    fn run(p: ApprovalsParams) -> Result<ApprovalsReport, Error> {
        let (_, found) = scan(&p)?;
        let account = found.account;
        let open = found.approvals.len();
        let risky = found
            .approvals
            .into_iter()
            .filter_map(|approval| {
                let mut risks = Vec::new();
                if approval.unlimited {
                    risks.push("unlimited");
                }
                if approval.allowlisted.is_none() {
                    risks.push("not-allowlisted");
                }
                if !approval.spender_has_code {
                    risks.push("no-code");
                }
                (!risks.is_empty()).then_some(RiskyApproval { approval, risks })
            })
            .collect();
        Ok(ApprovalsReport {
            account: account.to_checksum(None),
            from_block: found.from_block,
            to_block: found.to_block,
            open,
            risky,
        })
    }
}

/// Params of `safety_check_contract`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ContractParams {
    /// Chain id.
    pub chain_id: ChainId,
    /// The contract's address.
    pub address: String,
}

#[derive(Serialize)]
pub struct ContractReport {
    #[serde(flatten)]
    contract: Contract,
    /// Its role on the operator's allowlist, if it is on it.
    allowlisted: Option<String>,
    /// For a proxy: the implementation's role on the allowlist (an allowlisted proxy whose
    /// implementation changed is still allowlisted: the upgrade is the risk).
    implementation_allowlisted: Option<String>,
    /// What to know before calling it.
    findings: Vec<String>,
}

pub struct CheckContract;

impl ReadTool for CheckContract {
    const NAME: &'static str = "safety_check_contract";
    type Params = ContractParams;
    type Output = ContractReport;

    fn def() -> ToolDef {
        def::<ContractParams>(
            Self::NAME,
            "Check a contract before calling or approving it: whether code is there, whether it is a \
             proxy (EIP-1967, beacon, EIP-1822, EIP-1167) with its implementation and admin, the owner \
             powers in its code, and whether it (and its implementation) is on the operator's allowlist.",
            &["read code"],
        )
    }

    fn run(p: ContractParams) -> Result<ContractReport, Error> {
        let b = book(p.chain_id).unwrap_or_default();
        let address = parse_address("address", &p.address)?;
        let contract = inspect(p.chain_id, address)?;
        let allowlisted = b.role(address).map(str::to_owned);
        let implementation_allowlisted =
            contract.proxy.as_ref().and_then(|x| b.role(x.implementation)).map(str::to_owned);
        let mut findings = Vec::new();
        if !contract.has_code {
            findings.push("no code: an account, not a contract (or not deployed on this chain)".to_owned());
        }
        if let Some(x) = &contract.proxy {
            findings.push(format!(
                "a {} proxy to {}{}: its behaviour can change without its address changing",
                x.kind,
                x.implementation,
                x.admin.as_deref().map(|a| format!(", upgradable by {a}")).unwrap_or_default()
            ));
        }
        if allowlisted.is_none() {
            findings.push(
                "not on the operator's allowlist: the host refuses writes that call or approve it".into(),
            );
        }
        Ok(ContractReport { contract, allowlisted, implementation_allowlisted, findings })
    }
}
