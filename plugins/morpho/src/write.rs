//! The write plans — supply, withdraw, supply collateral, withdraw collateral, borrow, repay —
//! each for the wallet (`onBehalf`) and paying the wallet (`receiver`), with no callback, and
//! their verification from the receipts. Amounts are in assets or in shares; what a plan
//! declares comes from Morpho's own math at the market's totals accrued to the latest block,
//! as a range that covers the interest `market::DRIFT_SECS` can add before the plan lands. Approvals are
//! exact. A borrow or a collateral withdrawal beyond the LLTV, or under the operator's health
//! floor, is refused here, and again by the host.

use crate::abi::*;
use crate::market::{MarketRef, State, Venue, venue, wad};
use alloy_primitives::{Address, B256, U256};
use bardo_morpho_math::{self as math, Position, Totals};
use bardo_sdk::abi::{events, landed, tx_call, wallet};
use bardo_sdk::erc20::{self, Authority, BalanceChange, Token, transfers};
use bardo_sdk::errors::{error, internal, invalid_params};
use bardo_sdk::units::{format_units, parse_units};
use bardo_sdk::{ChainId, Error, ErrorCode, PlannedCall, Receipt, WritePlan};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Params of the Morpho writes.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MorphoParams {
    /// Chain id.
    pub chain_id: ChainId,
    /// A listed market: its name (`WETH/USDC`, collateral/loan) or id (`0x…`).
    pub market: String,
    /// Token units, decimal string (`"100.5"`): of the loan token, or of the collateral token
    /// for the collateral tools. `morpho_withdraw`, `morpho_repay` and
    /// `morpho_withdraw_collateral` also take `max`: the whole supply, debt or collateral.
    #[serde(default)]
    pub amount: Option<String>,
    /// Instead of `amount`: shares, a decimal integer (`morpho_preview` converts). Not for the
    /// collateral tools, which have no shares.
    #[serde(default)]
    pub shares: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
enum Action {
    Supply,
    Withdraw,
    SupplyCollateral,
    WithdrawCollateral,
    Borrow,
    Repay,
}

impl Action {
    fn name(self) -> &'static str {
        match self {
            Self::Supply => "supply",
            Self::Withdraw => "withdrawal",
            Self::SupplyCollateral => "collateral supply",
            Self::WithdrawCollateral => "collateral withdrawal",
            Self::Borrow => "borrow",
            Self::Repay => "repay",
        }
    }
}

#[derive(Debug, Clone, Copy)]
enum Amount {
    Assets(U256),
    Shares(U256),
    Max,
}

fn amount(p: &MorphoParams, action: Action, decimals: u8) -> Result<Amount, Error> {
    let collateral = matches!(action, Action::SupplyCollateral | Action::WithdrawCollateral);
    match (&p.amount, &p.shares) {
        (Some(a), None) if a.trim().eq_ignore_ascii_case("max") => match action {
            Action::Withdraw | Action::Repay | Action::WithdrawCollateral => Ok(Amount::Max),
            _ => Err(invalid_params(
                "`max` works only to withdraw, repay or withdraw collateral; give an amount",
            )),
        },
        (Some(a), None) => {
            let v = parse_units("amount", a, decimals)?;
            if v.is_zero() {
                return Err(invalid_params("`amount` must be more than 0"));
            }
            Ok(Amount::Assets(v))
        }
        (None, Some(_)) if collateral => {
            Err(invalid_params("collateral has no shares; give `amount` in collateral-token units"))
        }
        (None, Some(s)) => match s.trim().parse::<U256>() {
            Ok(v) if !v.is_zero() => Ok(Amount::Shares(v)),
            _ => Err(invalid_params("`shares` must be a decimal integer above 0")),
        },
        _ => Err(invalid_params("give exactly one of `amount` and `shares`")),
    }
}

/// A quantity known to lie in `[lo, hi]` when the plan lands.
#[derive(Debug, Clone, Copy)]
struct Range {
    lo: U256,
    hi: U256,
}

impl Range {
    fn exact(v: U256) -> Self {
        Self { lo: v, hi: v }
    }

    /// From two bounds in either order.
    fn of(a: U256, b: U256) -> Self {
        Self { lo: a.min(b), hi: a.max(b) }
    }

    fn received(self, t: &Token) -> BalanceChange {
        let change = BalanceChange::received(t, self.lo);
        if self.lo == self.hi { change } else { change.up_to(self.hi - self.lo) }
    }

    fn spent(self, t: &Token) -> BalanceChange {
        let change = BalanceChange::spent(t, self.hi);
        if self.lo == self.hi { change } else { change.up_to(self.hi - self.lo) }
    }
}

/// One part of the wallet's Morpho position the plan changes (`"positions": [...]`): the host
/// derives the same from the simulation and the receipts and refuses any other.
#[derive(Debug, Serialize)]
struct PositionChange {
    #[serde(serialize_with = "bardo_sdk::abi::checksummed")]
    venue: Address,
    market: B256,
    part: &'static str,
    delta: String,
    tolerance: String,
}

impl PositionChange {
    fn new(v: &Venue, m: &MarketRef, part: &'static str, grows: bool, r: Range) -> Self {
        let delta = if grows { r.lo.to_string() } else { format!("-{}", r.hi) };
        Self { venue: v.morpho, market: m.id, part, delta, tolerance: (r.hi - r.lo).to_string() }
    }
}

/// What a plan expects and what `verify` reports.
#[derive(Debug, Serialize)]
struct Outcome {
    action: Action,
    market: String,
    id: B256,
    /// The token the action moves.
    token: Token,
    /// Token units: declared (the most a range allows) or executed.
    amount: String,
    amount_base: String,
    /// Shares minted or burned (none for collateral): declared as a range `lo..hi`, or executed.
    #[serde(skip_serializing_if = "Option::is_none")]
    shares: Option<String>,
    /// After the action: computed in the plan, read from the chain in `verify`.
    health_factor_after: String,
    balance_changes: Vec<BalanceChange>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    positions: Vec<PositionChange>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    authorities: Vec<Authority>,
}

fn units(v: U256, t: &Token) -> String {
    format!("{} {}", format_units(v, t.decimals), t.symbol)
}

/// The plan's market, position and state, read once.
struct Ctx {
    v: Venue,
    m: MarketRef,
    s: State,
    late: Totals,
    owner: Address,
    position: Position,
}

/// Refuse a position Morpho would call unhealthy, or one under the operator's floor, saying how
/// much the action could be instead (`most`, already in the action's token).
fn require_health(
    c: &Ctx,
    action: Action,
    after: &Position,
    totals: &Totals,
    most: String,
) -> Result<U256, Error> {
    let hf = math::health_factor(after, totals, c.s.price, c.m.lltv);
    if !math::is_healthy(after, totals, c.s.price, c.m.lltv) {
        return Err(invalid_params(format!(
            "this {} goes beyond the market's LLTV of {} %: it could be at most {most} now; add collateral or use less",
            action.name(),
            c.m.lltv_percent
        )));
    }
    if hf < c.v.min_health_factor {
        return Err(error(
            ErrorCode::Denied,
            format!(
                "this {} would leave the health factor at {}, below the policy minimum {}; use a smaller amount or add collateral",
                action.name(),
                wad(hf),
                wad(c.v.min_health_factor)
            ),
        ));
    }
    Ok(hf)
}

fn plan(action: Action, p: MorphoParams) -> Result<WritePlan, Error> {
    let v = venue(p.chain_id)?;
    let owner = wallet(p.chain_id)?;
    bardo_sdk::events::progress(0);
    let m = v.find(&p.market)?;
    let s = v.state(&m)?;
    let position = v.position(&m, owner)?;
    let c = Ctx { late: s.late(), v, m, s, owner, position };
    let token = match action {
        Action::SupplyCollateral | Action::WithdrawCollateral => c.m.collateral.clone(),
        _ => c.m.loan.clone(),
    };
    let amount = amount(&p, action, token.decimals)?;
    bardo_sdk::events::progress(1);
    let built = build(&c, action, amount, &token)?;
    let params = c.m.params();
    let chain = p.chain_id;
    let mut calls = Vec::new();
    let mut authorities = Vec::new();
    if let Some(approve) = built.approve {
        calls.extend(erc20::approval_if_short(chain, &token, owner, c.v.morpho, approve, "Morpho Blue")?);
        authorities.push(Authority::erc20(&token, c.v.morpho, approve));
    }
    let (assets, shares) = built.call_amounts;
    let (morpho, data) = (c.v.morpho, alloy_primitives::Bytes::new());
    let call = match action {
        Action::Supply => tx_call(
            chain,
            morpho,
            &supplyCall { marketParams: params, assets, shares, onBehalf: owner, data },
        ),
        Action::Withdraw => tx_call(
            chain,
            morpho,
            &withdrawCall { marketParams: params, assets, shares, onBehalf: owner, receiver: owner },
        ),
        Action::SupplyCollateral => tx_call(
            chain,
            morpho,
            &supplyCollateralCall { marketParams: params, assets, onBehalf: owner, data },
        ),
        Action::WithdrawCollateral => tx_call(
            chain,
            morpho,
            &withdrawCollateralCall { marketParams: params, assets, onBehalf: owner, receiver: owner },
        ),
        Action::Borrow => tx_call(
            chain,
            morpho,
            &borrowCall { marketParams: params, assets, shares, onBehalf: owner, receiver: owner },
        ),
        Action::Repay => {
            tx_call(chain, morpho, &repayCall { marketParams: params, assets, shares, onBehalf: owner, data })
        }
    };
    calls.push(PlannedCall { call, description: built.description });
    bardo_sdk::events::progress(2);
    let outcome = Outcome {
        action,
        market: c.m.name.clone(),
        id: c.m.id,
        amount: format_units(built.moved.hi, token.decimals),
        amount_base: built.moved.hi.to_string(),
        shares: built.shares.map(|r| format!("{}..{}", r.lo, r.hi)),
        token,
        health_factor_after: wad(built.health_after),
        balance_changes: built.balances,
        positions: built.positions,
        authorities,
    };
    let expected = serde_json::to_string(&outcome).map_err(|e| internal(e.to_string()))?;
    Ok(WritePlan { calls, expected_outcome_json: expected })
}

/// What one action does, before it is encoded.
struct Built {
    /// `(assets, shares)` for Morpho: one of them zero.
    call_amounts: (U256, U256),
    /// Tokens the wallet gives or gets.
    moved: Range,
    /// Shares minted or burned.
    shares: Option<Range>,
    /// The approval the call needs.
    approve: Option<U256>,
    balances: Vec<BalanceChange>,
    positions: Vec<PositionChange>,
    health_after: U256,
    description: String,
}

fn build(c: &Ctx, action: Action, amount: Amount, token: &Token) -> Result<Built, Error> {
    let (t, late, pos) = (&c.s.totals, &c.late, &c.position);
    let (v, m) = (&c.v, &c.m);
    let supplied = pos.supply_assets(t);
    let debt = pos.borrow_assets(t);
    let liquidity = t.supply_assets.saturating_sub(t.borrow_assets);
    let hf_now = math::health_factor(pos, t, c.s.price, m.lltv);
    let shares_part = |part, grows, r| vec![PositionChange::new(v, m, part, grows, r)];
    let built = match (action, amount) {
        (Action::Supply, Amount::Assets(x)) => {
            let minted = Range::of(
                math::to_shares_down(x, late.supply_assets, late.supply_shares),
                math::to_shares_down(x, t.supply_assets, t.supply_shares),
            );
            erc20::require_balance(v.chain_id, token, c.owner, x)?;
            Built {
                call_amounts: (x, U256::ZERO),
                moved: Range::exact(x),
                shares: Some(minted),
                approve: Some(x),
                balances: vec![Range::exact(x).spent(token)],
                positions: shares_part("supply_shares", true, minted),
                health_after: hf_now,
                description: format!("supply {} to Morpho market {}", units(x, token), m.name),
            }
        }
        (Action::Supply, Amount::Shares(sh)) => {
            let cost = Range::of(
                math::to_assets_up(sh, t.supply_assets, t.supply_shares),
                math::to_assets_up(sh, late.supply_assets, late.supply_shares),
            );
            erc20::require_balance(v.chain_id, token, c.owner, cost.hi)?;
            Built {
                call_amounts: (U256::ZERO, sh),
                moved: cost,
                shares: Some(Range::exact(sh)),
                approve: Some(cost.hi),
                balances: vec![cost.spent(token)],
                positions: shares_part("supply_shares", true, Range::exact(sh)),
                health_after: hf_now,
                description: format!(
                    "supply {sh} shares (about {}) to Morpho market {}",
                    units(cost.hi, token),
                    m.name
                ),
            }
        }
        (Action::Withdraw, amount) => {
            if pos.supply_shares.is_zero() {
                return Err(invalid_params(format!(
                    "the wallet supplies nothing to Morpho market {}; nothing to withdraw",
                    m.name
                )));
            }
            let amount = if let Amount::Max = amount { Amount::Shares(pos.supply_shares) } else { amount };
            let (call_amounts, moved, burned) = match amount {
                Amount::Assets(x) => {
                    if x > supplied {
                        return Err(invalid_params(format!(
                            "the wallet supplies {}; withdraw at most that, or `max`",
                            units(supplied, token)
                        )));
                    }
                    let burned = Range::of(
                        math::to_shares_up(x, late.supply_assets, late.supply_shares),
                        math::to_shares_up(x, t.supply_assets, t.supply_shares),
                    );
                    ((x, U256::ZERO), Range::exact(x), burned)
                }
                Amount::Shares(sh) if sh <= pos.supply_shares => {
                    let paid = Range::of(
                        math::to_assets_down(sh, t.supply_assets, t.supply_shares),
                        math::to_assets_down(sh, late.supply_assets, late.supply_shares),
                    );
                    ((U256::ZERO, sh), paid, Range::exact(sh))
                }
                _ => {
                    return Err(invalid_params(format!(
                        "the wallet holds {} supply shares; withdraw at most that, or `max`",
                        pos.supply_shares
                    )));
                }
            };
            if moved.hi > liquidity {
                return Err(invalid_params(format!(
                    "Morpho market {} can pay out only {} now (the rest is borrowed); withdraw less",
                    m.name,
                    units(liquidity, token)
                )));
            }
            Built {
                call_amounts,
                moved,
                shares: Some(burned),
                approve: None,
                balances: vec![moved.received(token)],
                positions: shares_part("supply_shares", false, burned),
                health_after: hf_now,
                description: format!("withdraw {} from Morpho market {}", units(moved.hi, token), m.name),
            }
        }
        (Action::SupplyCollateral, Amount::Assets(x)) => {
            erc20::require_balance(v.chain_id, token, c.owner, x)?;
            let after = Position { collateral: pos.collateral + x, ..*pos };
            Built {
                call_amounts: (x, U256::ZERO),
                moved: Range::exact(x),
                shares: None,
                approve: Some(x),
                balances: vec![Range::exact(x).spent(token)],
                positions: shares_part("collateral", true, Range::exact(x)),
                health_after: math::health_factor(&after, t, c.s.price, m.lltv),
                description: format!("supply {} as collateral to Morpho market {}", units(x, token), m.name),
            }
        }
        (Action::WithdrawCollateral, amount) => {
            let x = match amount {
                Amount::Max => pos.collateral,
                Amount::Assets(x) => x,
                Amount::Shares(_) => return Err(internal("collateral has no shares")),
            };
            if pos.collateral.is_zero() || x > pos.collateral {
                return Err(invalid_params(format!(
                    "the wallet has {} of collateral in Morpho market {}; withdraw at most that",
                    units(pos.collateral, token),
                    m.name
                )));
            }
            let after = Position { collateral: pos.collateral - x, ..*pos };
            // The collateral the debt (by the time the plan lands) needs at the LLTV.
            let needed = math::mul_div_up(
                pos.borrow_assets(late),
                math::oracle_price_scale(),
                math::w_mul_down(c.s.price, m.lltv).max(U256::from(1u8)),
            );
            let most = units(pos.collateral.saturating_sub(needed), token);
            let health_after = require_health(c, action, &after, late, most)?;
            Built {
                call_amounts: (x, U256::ZERO),
                moved: Range::exact(x),
                shares: None,
                approve: None,
                balances: vec![Range::exact(x).received(token)],
                positions: shares_part("collateral", false, Range::exact(x)),
                health_after,
                description: format!(
                    "withdraw {} of collateral from Morpho market {}",
                    units(x, token),
                    m.name
                ),
            }
        }
        (Action::Borrow, amount) => {
            let (call_amounts, moved, minted) = match amount {
                Amount::Assets(x) => {
                    let minted = Range::of(
                        math::to_shares_up(x, late.borrow_assets, late.borrow_shares),
                        math::to_shares_up(x, t.borrow_assets, t.borrow_shares),
                    );
                    ((x, U256::ZERO), Range::exact(x), minted)
                }
                Amount::Shares(sh) => {
                    let paid = Range::of(
                        math::to_assets_down(sh, t.borrow_assets, t.borrow_shares),
                        math::to_assets_down(sh, late.borrow_assets, late.borrow_shares),
                    );
                    ((U256::ZERO, sh), paid, Range::exact(sh))
                }
                Amount::Max => return Err(internal("`max` is refused for borrows")),
            };
            if moved.hi > liquidity {
                return Err(invalid_params(format!(
                    "Morpho market {} has only {} to lend now; borrow less",
                    m.name,
                    units(liquidity, token)
                )));
            }
            // Judged at the latest totals with the most shares the borrow can mint.
            let after = Position { borrow_shares: pos.borrow_shares + minted.hi, ..*pos };
            let totals = Totals {
                borrow_assets: late.borrow_assets + moved.hi,
                borrow_shares: late.borrow_shares + minted.hi,
                supply_assets: late.supply_assets,
                ..*late
            };
            let capacity = math::max_borrow(pos.collateral, c.s.price, m.lltv);
            let most = units(capacity.saturating_sub(pos.borrow_assets(late)), token);
            let health_after = require_health(c, action, &after, &totals, most)?;
            Built {
                call_amounts,
                moved,
                shares: Some(minted),
                approve: None,
                balances: vec![moved.received(token)],
                positions: shares_part("borrow_shares", true, minted),
                health_after,
                description: format!("borrow {} from Morpho market {}", units(moved.hi, token), m.name),
            }
        }
        (Action::Repay, amount) => {
            if pos.borrow_shares.is_zero() {
                return Err(invalid_params(format!(
                    "the wallet owes nothing in Morpho market {}; nothing to repay",
                    m.name
                )));
            }
            let max = matches!(amount, Amount::Max);
            let amount = if max { Amount::Shares(pos.borrow_shares) } else { amount };
            let (call_amounts, moved, burned) = match amount {
                Amount::Assets(x) => {
                    if x > debt {
                        return Err(invalid_params(format!(
                            "the debt is {}; repay at most that, or `max` for all of it",
                            units(debt, token)
                        )));
                    }
                    let burned = Range::of(
                        math::to_shares_down(x, late.borrow_assets, late.borrow_shares),
                        math::to_shares_down(x, t.borrow_assets, t.borrow_shares),
                    );
                    ((x, U256::ZERO), Range::exact(x), burned)
                }
                Amount::Shares(sh) if sh <= pos.borrow_shares => {
                    let cost = Range::of(
                        math::to_assets_up(sh, t.borrow_assets, t.borrow_shares),
                        math::to_assets_up(sh, late.borrow_assets, late.borrow_shares),
                    );
                    ((U256::ZERO, sh), cost, Range::exact(sh))
                }
                _ => {
                    return Err(invalid_params(format!(
                        "the wallet owes {} borrow shares; repay at most that, or `max`",
                        pos.borrow_shares
                    )));
                }
            };
            erc20::require_balance(v.chain_id, token, c.owner, moved.hi)?;
            let after = Position { borrow_shares: pos.borrow_shares.saturating_sub(burned.lo), ..*pos };
            Built {
                call_amounts,
                moved,
                shares: Some(burned),
                approve: Some(moved.hi),
                balances: vec![moved.spent(token)],
                positions: shares_part("borrow_shares", false, burned),
                health_after: math::health_factor(&after, t, c.s.price, m.lltv),
                description: match max {
                    true => format!(
                        "repay the whole debt (about {}) to Morpho market {}",
                        units(moved.hi, token),
                        m.name
                    ),
                    false => format!("repay {} to Morpho market {}", units(moved.hi, token), m.name),
                },
            }
        }
        (Action::Supply | Action::SupplyCollateral, Amount::Max)
        | (Action::SupplyCollateral, Amount::Shares(_)) => {
            return Err(internal("amount checked above"));
        }
    };
    Ok(built)
}

fn verify(action: Action, p: MorphoParams, receipts: Vec<Receipt>) -> Result<serde_json::Value, Error> {
    let v = venue(p.chain_id)?;
    let m = v.find(&p.market)?;
    let (_, owner) = landed(&receipts)?;
    let (token, other) = match action {
        Action::SupplyCollateral | Action::WithdrawCollateral => (m.collateral.clone(), m.loan.address),
        _ => (m.loan.clone(), m.collateral.address),
    };
    let ours = |id: B256| id == m.id;
    let (assets, shares) = match action {
        Action::Supply => events::<Supply>(&receipts, v.morpho)
            .into_iter()
            .find(|e| ours(e.id))
            .map(|e| (e.assets, Some(e.shares))),
        Action::Withdraw => events::<Withdraw>(&receipts, v.morpho)
            .into_iter()
            .find(|e| ours(e.id))
            .map(|e| (e.assets, Some(e.shares))),
        Action::SupplyCollateral => events::<SupplyCollateral>(&receipts, v.morpho)
            .into_iter()
            .find(|e| ours(e.id))
            .map(|e| (e.assets, None)),
        Action::WithdrawCollateral => events::<WithdrawCollateral>(&receipts, v.morpho)
            .into_iter()
            .find(|e| ours(e.id))
            .map(|e| (e.assets, None)),
        Action::Borrow => events::<Borrow>(&receipts, v.morpho)
            .into_iter()
            .find(|e| ours(e.id))
            .map(|e| (e.assets, Some(e.shares))),
        Action::Repay => events::<Repay>(&receipts, v.morpho)
            .into_iter()
            .find(|e| ours(e.id))
            .map(|e| (e.assets, Some(e.shares))),
    }
    .ok_or_else(|| {
        internal(format!("the receipts hold no Morpho {} event for market {}", action.name(), m.name))
    })?;
    let logs: Vec<_> = receipts.iter().flat_map(|r| r.logs.clone()).collect();
    let balance_changes = [token.address, other]
        .into_iter()
        .map(|t| {
            let (received, sent) = transfers(&logs, t, owner);
            BalanceChange::net(t, received, sent)
        })
        .filter(|c| c.delta != "0")
        .collect();
    let s = v.state(&m)?;
    let position = v.position(&m, owner)?;
    let outcome = Outcome {
        action,
        market: m.name.clone(),
        id: m.id,
        amount: format_units(assets, token.decimals),
        amount_base: assets.to_string(),
        shares: shares.map(|s| s.to_string()),
        token,
        health_factor_after: wad(math::health_factor(&position, &s.totals, s.price, m.lltv)),
        balance_changes,
        positions: Vec::new(),
        authorities: Vec::new(),
    };
    serde_json::to_value(outcome).map_err(|e| internal(e.to_string()))
}

bardo_sdk::action_tools! {
    params: MorphoParams, category: Lending, action: Action, plan: plan, verify: verify,
    steps: &["read the market", "size the action", "build calls"],
    chains: bardo_sdk::chains::MORPHO;
    (SupplyTool, "morpho_supply", Supply, "morpho-supply", Medium,
    "Plans lending the loan token to a Morpho Blue market the operator lists, from the host's \
     wallet and credited to it: `amount` in token units, or `shares`. Adds an approval of exactly \
     what it spends when the allowance is short. The host checks, simulates, signs and sends it.",
    "morpho_supply: plan lending to a Morpho market (amount or shares)",
    [Defensive: "Supply only to markets with stable collateral.", Survival: "Do not supply; withdraw instead."]),
    (WithdrawTool,
    "morpho_withdraw",
    Withdraw,
    "morpho-withdraw",
    Low,
    "Plans withdrawing lent assets from a Morpho Blue market to the host's wallet: `amount`, \
     `shares`, or `max` for the whole supply with its interest. Refused beyond what the wallet \
     supplies or what the market can pay out now (the rest is borrowed).",
    "morpho_withdraw: plan withdrawing a Morpho supply (amount, shares or max)",
    []),
    (SupplyCollateralTool, "morpho_supply_collateral", SupplyCollateral, "morpho-supply-collateral", Medium,
    "Plans adding collateral to the wallet's position in a Morpho Blue market (`amount` of the \
     collateral token). Collateral earns nothing; it backs borrows and raises the health factor.",
    "morpho_supply_collateral: plan adding collateral to a Morpho position",
    [Survival: "Add collateral or repay to raise the health factor."]),
    (WithdrawCollateralTool, "morpho_withdraw_collateral", WithdrawCollateral, "morpho-withdraw-collateral", Medium,
    "Plans taking collateral back from a Morpho Blue position to the host's wallet: `amount` or \
     `max`. Refused when the debt left would exceed the LLTV (it says the most that can leave) or \
     the health factor would fall below the operator's minimum.",
    "morpho_withdraw_collateral: plan taking collateral out of a Morpho position",
    [Defensive: "Withdraw collateral only with no debt."]),
    (BorrowTool, "morpho_borrow", Borrow, "morpho-borrow", High,
    "Plans borrowing the loan token from a Morpho Blue market against the wallet's collateral \
     there, paid to the wallet: `amount` or `shares`. Refused beyond the market's LLTV (it says the \
     most it can borrow), beyond the market's liquidity, or below the operator's health floor.",
    "morpho_borrow: plan a Morpho borrow within the LLTV and the health floor",
    [Cautious: "Keep the health factor above 2.", Defensive: "Do not borrow.", Survival: "Do not borrow."]),
    (RepayTool, "morpho_repay", Repay, "morpho-repay", Low,
    "Plans repaying the wallet's debt in a Morpho Blue market: `amount`, `shares`, or `max` for \
     the whole debt (repaid by shares, so none is left; the approval covers a few minutes of \
     interest and the rest stays in the wallet).",
    "morpho_repay: plan repaying Morpho debt (amount, shares or max)",
    [Survival: "Repay debt first to raise the health factor."]),
}
