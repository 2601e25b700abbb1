//! The write plans — supply, withdraw, borrow (variable rate), repay — and their verification from
//! the receipts. Approvals are exact. Borrows and withdrawals are simulated together with a health
//! factor read, and refused when they would leave it below the operator's floor.

use crate::abi::*;
use crate::market::{Market, Reserve, health_factor, market, ray};
use alloy_primitives::{Address, U256};
use bardo_sdk::abi::{eth_call, events, simulate_last, tx_call, wallet};
use bardo_sdk::erc20::{self, Authority, BalanceChange, Token, transfers};
use bardo_sdk::errors::{error, internal, invalid_params};
use bardo_sdk::units::{format_units, parse_units};
use bardo_sdk::{ChainId, Error, ErrorCode, PlannedCall, Receipt, WritePlan};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Seconds of interest a plan allows for between planning and execution (see `drift`).
const DRIFT_SECS: u64 = 300;
const SECONDS_PER_YEAR: u64 = 31_536_000;
/// Aave's variable interest rate mode.
const VARIABLE: u64 = 2;

/// Params of the lending writes.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LendParams {
    /// Chain id.
    pub chain_id: ChainId,
    /// The reserve's underlying asset: a listed symbol (`USDC`) or its address.
    pub asset: String,
    /// Token units, decimal string (`"100.5"`). `aave_withdraw` and `aave_repay` also take `max`:
    /// everything supplied, or the whole debt with its interest.
    pub amount: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
enum Action {
    Supply,
    Withdraw,
    Borrow,
    Repay,
}

/// What a plan expects and what `verify` reports.
#[derive(Debug, Serialize)]
struct Outcome {
    action: Action,
    asset: Token,
    /// Token units.
    amount: String,
    amount_base: String,
    /// The whole position (`max`).
    max: bool,
    /// After the action: simulated in the plan, read from the chain in `verify`.
    health_factor_after: String,
    /// The wallet's token balance changes: the asset, its aToken, its variable debt token.
    balance_changes: Vec<BalanceChange>,
    /// What the pool may still pull after the action (a `max` repay's unused margin).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    authorities: Vec<Authority>,
}

/// Interest that `balance` earns or owes at `rate` (ray) over `DRIFT_SECS`, rounded up.
fn drift(balance: U256, rate: U256) -> U256 {
    balance * rate * U256::from(DRIFT_SECS) / U256::from(SECONDS_PER_YEAR) / ray() + U256::from(1)
}

/// How much more than its principal movement a scaled-balance token (aToken or variable debt
/// token) may credit the wallet when the action lands: the interest accrued since the wallet's
/// last interaction (Aave mints it with the action), plus `drift`, plus rounding.
fn accrual(c: ChainId, token: Address, owner: Address, rate: U256) -> Result<U256, Error> {
    let balance = erc20::balance_of(c, token, owner)?;
    let scaled = eth_call(c, token, &scaledBalanceOfCall { user: owner })?;
    let previous = eth_call(c, token, &getPreviousIndexCall { user: owner })?;
    let principal = scaled * previous / ray();
    Ok(balance.saturating_sub(principal) + drift(balance, rate) + U256::from(2))
}

fn amount(p: &LendParams, r: &Reserve, action: Action) -> Result<Option<U256>, Error> {
    if p.amount.trim().eq_ignore_ascii_case("max") {
        return match action {
            Action::Withdraw | Action::Repay => Ok(None),
            _ => Err(invalid_params(
                "`amount` `max` works only for aave_withdraw and aave_repay; give an amount",
            )),
        };
    }
    let v = parse_units("amount", &p.amount, r.asset.decimals)?;
    if v.is_zero() {
        return Err(invalid_params("`amount` must be more than 0"));
    }
    Ok(Some(v))
}

fn units(v: U256, t: &Token) -> String {
    format!("{} {}", format_units(v, t.decimals), t.symbol)
}

/// Health factor after `calls`, from a simulation that reads the account at the end.
fn simulated_health(m: &Market, owner: Address, calls: &[PlannedCall]) -> Result<U256, Error> {
    let mut txs: Vec<_> = calls.iter().map(|c| c.call.clone()).collect();
    txs.push(tx_call(m.chain_id, m.pool, &getUserAccountDataCall { user: owner }));
    Ok(simulate_last::<getUserAccountDataCall>(m.chain_id, owner, &txs)?.healthFactor)
}

fn plan(action: Action, p: LendParams) -> Result<WritePlan, Error> {
    let m = market(p.chain_id)?;
    let owner = wallet(p.chain_id)?;
    bardo_sdk::events::progress(0);
    let r = m.find(&p.asset)?;
    let asset = &r.asset;
    let c = p.chain_id;
    let amount = amount(&p, &r, action)?;
    let (a_rate, d_rate) = (r.liquidity_rate_ray, r.variable_borrow_rate_ray);
    let a_token =
        Token { address: r.a_token, symbol: format!("a{}", asset.symbol), decimals: asset.decimals };
    let debt_token = Token {
        address: r.variable_debt_token,
        symbol: format!("variableDebt{}", asset.symbol),
        decimals: asset.decimals,
    };
    bardo_sdk::events::progress(1);
    let mut calls = Vec::new();
    let mut authorities = Vec::new();
    let (declared, changes) = match action {
        Action::Supply => {
            r.require_usable(true)?;
            let amount = amount.unwrap_or_default();
            erc20::require_balance(c, asset, owner, amount)?;
            calls.extend(erc20::approval_if_short(c, asset, owner, m.pool, amount, "the Aave pool")?);
            authorities.push(Authority::erc20(asset, m.pool, amount));
            calls.push(PlannedCall {
                call: tx_call(
                    c,
                    m.pool,
                    &supplyCall { asset: asset.address, amount, onBehalfOf: owner, referralCode: 0 },
                ),
                description: format!("supply {} to Aave", units(amount, asset)),
            });
            let a_extra = accrual(c, r.a_token, owner, a_rate)?;
            (
                amount,
                vec![
                    BalanceChange::spent(asset, amount),
                    BalanceChange::received(&a_token, amount).up_to(a_extra).rounding(U256::from(1)),
                ],
            )
        }
        Action::Withdraw => {
            r.require_usable(false)?;
            let supplied = erc20::balance_of(c, r.a_token, owner)?;
            if supplied.is_zero() {
                return Err(invalid_params(format!(
                    "the wallet has no {} supplied to Aave; nothing to withdraw",
                    asset.symbol
                )));
            }
            if amount.is_some_and(|a| a > supplied) {
                return Err(invalid_params(format!(
                    "the wallet has {} supplied; withdraw at most that, or `max`",
                    units(supplied, asset)
                )));
            }
            let declared = amount.unwrap_or(supplied);
            calls.push(PlannedCall {
                call: tx_call(
                    c,
                    m.pool,
                    &withdrawCall { asset: asset.address, amount: amount.unwrap_or(U256::MAX), to: owner },
                ),
                description: match amount {
                    Some(a) => format!("withdraw {} from Aave", units(a, asset)),
                    None => format!(
                        "withdraw all supplied {} (about {}) from Aave",
                        asset.symbol,
                        units(supplied, asset)
                    ),
                },
            });
            let underlying = BalanceChange::received(asset, declared);
            let underlying =
                if amount.is_none() { underlying.up_to(drift(supplied, a_rate)) } else { underlying };
            let a_extra = accrual(c, r.a_token, owner, a_rate)?;
            (
                declared,
                vec![
                    underlying,
                    BalanceChange::spent(&a_token, declared).up_to(a_extra).rounding(U256::from(1)),
                ],
            )
        }
        Action::Borrow => {
            r.require_usable(true)?;
            if !r.borrowing_enabled {
                return Err(invalid_params(format!(
                    "borrowing {} is disabled on Aave; pick another asset",
                    asset.symbol
                )));
            }
            let amount = amount.unwrap_or_default();
            let available = m.account(owner)?.availableBorrowsBase;
            let price = m.price(asset.address)?;
            let value = amount * price / U256::from(10u64).pow(U256::from(asset.decimals));
            if value > available {
                let most = if price.is_zero() {
                    U256::ZERO
                } else {
                    available * U256::from(10u64).pow(U256::from(asset.decimals)) / price
                };
                return Err(invalid_params(format!(
                    "borrowing {} is beyond the account's capacity: it can borrow at most {} now; supply more collateral or borrow less",
                    units(amount, asset),
                    units(most, asset)
                )));
            }
            calls.push(PlannedCall {
                call: tx_call(
                    c,
                    m.pool,
                    &borrowCall {
                        asset: asset.address,
                        amount,
                        interestRateMode: U256::from(VARIABLE),
                        referralCode: 0,
                        onBehalfOf: owner,
                    },
                ),
                description: format!("borrow {} from Aave at the variable rate", units(amount, asset)),
            });
            let d_extra = accrual(c, r.variable_debt_token, owner, d_rate)?;
            (
                amount,
                vec![
                    BalanceChange::received(asset, amount),
                    BalanceChange::received(&debt_token, amount).up_to(d_extra).rounding(U256::from(1)),
                ],
            )
        }
        Action::Repay => {
            r.require_usable(false)?;
            let debt = erc20::balance_of(c, r.variable_debt_token, owner)?;
            if debt.is_zero() {
                return Err(invalid_params(format!(
                    "the wallet owes no {} on Aave; nothing to repay",
                    asset.symbol
                )));
            }
            if amount.is_some_and(|a| a > debt) {
                return Err(invalid_params(format!(
                    "the debt is {}; repay at most that, or `max` for all of it",
                    units(debt, asset)
                )));
            }
            // `max` repays the debt at execution, which grows with time: approve and declare
            // the most it can be, and let the wallet keep what is not needed.
            let most = amount.unwrap_or(debt + drift(debt, d_rate));
            erc20::require_balance(c, asset, owner, most)?;
            calls.extend(erc20::approval_if_short(c, asset, owner, m.pool, most, "the Aave pool")?);
            authorities.push(Authority::erc20(asset, m.pool, most));
            calls.push(PlannedCall {
                call: tx_call(
                    c,
                    m.pool,
                    &repayCall {
                        asset: asset.address,
                        amount: amount.unwrap_or(U256::MAX),
                        interestRateMode: U256::from(VARIABLE),
                        onBehalfOf: owner,
                    },
                ),
                description: match amount {
                    Some(a) => format!("repay {} of Aave debt", units(a, asset)),
                    None => format!("repay all {} debt (about {}) to Aave", asset.symbol, units(debt, asset)),
                },
            });
            let spent = BalanceChange::spent(asset, most);
            let spent = if amount.is_none() { spent.up_to(most - debt) } else { spent };
            let d_extra = accrual(c, r.variable_debt_token, owner, d_rate)?;
            let repaid = amount.unwrap_or(debt);
            (
                repaid,
                vec![spent, BalanceChange::spent(&debt_token, repaid).up_to(d_extra).rounding(U256::from(1))],
            )
        }
    };
    bardo_sdk::events::progress(2);
    let hf = simulated_health(&m, owner, &calls)?;
    if matches!(action, Action::Borrow | Action::Withdraw) && hf < m.min_health_factor {
        return Err(error(
            ErrorCode::Denied,
            format!(
                "this {} would leave the health factor at {}, below the policy minimum {}; use a smaller amount or add collateral",
                match action {
                    Action::Borrow => "borrow",
                    _ => "withdrawal",
                },
                health_factor(hf),
                format_units(m.min_health_factor, 18)
            ),
        ));
    }
    let outcome = Outcome {
        action,
        asset: asset.clone(),
        amount: format_units(declared, asset.decimals),
        amount_base: declared.to_string(),
        max: amount.is_none(),
        health_factor_after: health_factor(hf),
        balance_changes: changes,
        authorities,
    };
    let expected = serde_json::to_string(&outcome).map_err(|e| internal(e.to_string()))?;
    Ok(WritePlan { calls, expected_outcome_json: expected })
}

fn verify(action: Action, p: LendParams, receipts: Vec<Receipt>) -> Result<serde_json::Value, Error> {
    let m = market(p.chain_id)?;
    let r = m.find(&p.asset)?;
    let last = receipts.last().ok_or_else(|| internal("no receipts to verify"))?;
    if !last.success {
        return Err(error(ErrorCode::Reverted, format!("the Aave transaction {} reverted", last.tx_hash)));
    }
    let owner: Address = last.sender.parse().map_err(|_| internal("receipt sender is not an address"))?;
    let asset = r.asset.address;
    let amount = match action {
        Action::Supply => events::<crate::abi::Supply>(&receipts, m.pool)
            .into_iter()
            .find(|e| e.reserve == asset)
            .map(|e| e.amount),
        Action::Withdraw => events::<crate::abi::Withdraw>(&receipts, m.pool)
            .into_iter()
            .find(|e| e.reserve == asset)
            .map(|e| e.amount),
        Action::Borrow => events::<crate::abi::Borrow>(&receipts, m.pool)
            .into_iter()
            .find(|e| e.reserve == asset)
            .map(|e| e.amount),
        Action::Repay => events::<crate::abi::Repay>(&receipts, m.pool)
            .into_iter()
            .find(|e| e.reserve == asset)
            .map(|e| e.amount),
    }
    .ok_or_else(|| internal(format!("the receipts hold no Aave {action:?} event for {}", r.asset.symbol)))?;
    let logs: Vec<_> = receipts.iter().flat_map(|r| r.logs.clone()).collect();
    let changes = [asset, r.a_token, r.variable_debt_token]
        .into_iter()
        .map(|t| {
            let (received, sent) = transfers(&logs, t, owner);
            BalanceChange::net(t, received, sent)
        })
        .filter(|c| c.delta != "0")
        .collect();
    let outcome = Outcome {
        action,
        amount: format_units(amount, r.asset.decimals),
        amount_base: amount.to_string(),
        max: p.amount.trim().eq_ignore_ascii_case("max"),
        health_factor_after: health_factor(m.account(owner)?.healthFactor),
        balance_changes: changes,
        authorities: Vec::new(),
        asset: r.asset,
    };
    serde_json::to_value(outcome).map_err(|e| internal(e.to_string()))
}

bardo_sdk::action_tools! {
    params: LendParams, category: Lending, action: Action, plan: plan, verify: verify,
    steps: &["read the market", "build calls", "simulate the health factor"],
    chains: bardo_sdk::chains::AAVE;
    (SupplyTool, "aave_supply", Supply, "supply", Medium,
    "Plans supplying an asset to Aave V3 from the host's wallet (it earns the supply APY and counts \
     as collateral). Adds an approval of exactly the amount when the allowance is short. Refuses an \
     asset that is not an active, unfrozen reserve, or more than the wallet holds. The host checks, \
     simulates, signs and sends the plan.",
    "aave_supply: plan supplying an asset to Aave to earn interest or back a borrow",
    [Defensive: "Supply only stable assets.", Survival: "Do not supply; withdraw instead."]),
    (WithdrawTool, "aave_withdraw", Withdraw, "withdraw", Low,
    "Plans withdrawing a supplied asset from Aave V3 to the host's wallet: an amount, or `max` for \
     everything with its interest. Refused when it would leave the health factor below the \
     operator's minimum (checked by simulating the withdrawal).",
    "aave_withdraw: plan withdrawing supplied assets from Aave (an amount or max)",
    [Defensive: "Withdraw only what keeps the health factor well above the minimum."]),
    (BorrowTool, "aave_borrow", Borrow, "borrow", High,
    "Plans a variable-rate borrow from Aave V3 against the wallet's collateral. Refused beyond the \
     account's borrowing capacity, on a frozen or non-borrowable reserve, or when the health factor \
     after the borrow (simulated) would fall below the operator's minimum.",
    "aave_borrow: plan a variable-rate Aave borrow within the health-factor floor",
    [Cautious: "Keep the health factor above 2.", Defensive: "Do not borrow.", Survival: "Do not borrow."]),
    (RepayTool, "aave_repay", Repay, "repay", Low,
    "Plans repaying variable-rate Aave V3 debt from the host's wallet: an amount, or `max` for the \
     whole debt with its interest (the approval covers a few minutes of interest; the unused rest \
     stays in the wallet). Refused when there is no debt or the amount exceeds it.",
    "aave_repay: plan repaying Aave debt (an amount or max)",
    [Survival: "Repay debt first to raise the health factor."]),
}
