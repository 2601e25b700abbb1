//! The write plans, all through `PendleRouterV4` and all paying the wallet: buy and sell PT and
//! YT, add and remove liquidity (single-token, or dual with PT), mint and redeem PT+YT (PT alone
//! after maturity), and claim the interest and rewards due. Each is sized by Pendle's static
//! router at the latest block; its minimum out is that quote less `slippage_bps`, set in the
//! call so the chain enforces it; it approves exactly what it spends; no aggregator swap and no
//! limit order (the host's scope refuses both). `verify` reads what moved from the receipt's
//! `Transfer` events.

use crate::abi::{self, Router, RouterStatic, UserMarketInfo, UserPYInfo};
use crate::market::{MarketRef, Venue, venue};
use crate::read::{Action, side_token, sides, static_out};
use alloy_primitives::{Address, U256};
use bardo_sdk::abi::{eth_call, landed, tx_call, wallet};
use bardo_sdk::erc20::{self, Authority, BalanceChange, Token, transfers};
use bardo_sdk::errors::invalid_params;
use bardo_sdk::slippage::{check_slippage, max_in, min_out};
use bardo_sdk::units::{Amount, format_units, parse_units};
use bardo_sdk::{ChainId, Error, PlannedCall, Receipt, WritePlan};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

/// Params of the trade and liquidity writes.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TradeParams {
    /// Chain id.
    pub chain_id: ChainId,
    /// A listed market: its name (`PT-bvUSDC`) or address.
    pub market: String,
    /// Units of what goes in — the token (buys, adds, mints), PT, YT or LP (sells, removes,
    /// redeems) — decimal, or `max` for the wallet's whole balance of it.
    pub amount: String,
    /// The token paid or received: the SY's asset or its yield token, by symbol or address;
    /// default the asset.
    #[serde(default)]
    pub token: Option<String>,
    /// How far below the quote the chain may fill, basis points (1–5000); default 50.
    #[serde(default = "default_slippage")]
    pub slippage_bps: u32,
    /// `pendle_add_liquidity` only: also pay up to this much PT, adding the token and PT in the
    /// market's ratio (dual) instead of swapping part of the token to PT.
    #[serde(default)]
    pub pt_amount: Option<String>,
    /// `pendle_remove_liquidity` only: take the PT out as PT (dual) instead of selling it.
    #[serde(default)]
    pub keep_pt: bool,
}

fn default_slippage() -> u32 {
    50
}

/// A plan being built: the market, who pays, and what it calls and declares.
struct Plan {
    v: Venue,
    m: MarketRef,
    owner: Address,
    calls: Vec<PlannedCall>,
    changes: Vec<BalanceChange>,
    authorities: Vec<Authority>,
}

impl Plan {
    fn new(chain_id: ChainId, market: &str) -> Result<Self, Error> {
        let v = venue(chain_id)?;
        let m = v.find(market)?;
        let owner = wallet(chain_id)?;
        erc20::require_code(chain_id, v.router, "Pendle's router")?;
        Ok(Self { v, m, owner, calls: Vec::new(), changes: Vec::new(), authorities: Vec::new() })
    }

    /// Spend exactly `amount` of `token` through the router: checked against the balance,
    /// approved when short, declared.
    fn spend(&mut self, token: &Token, amount: U256) -> Result<(), Error> {
        let (c, router) = (self.v.chain_id, self.v.router);
        erc20::require_balance(c, token, self.owner, amount)?;
        self.calls.extend(erc20::approval_if_short(c, token, self.owner, router, amount, "Pendle's router")?);
        self.authorities.push(Authority::erc20(token, router, amount));
        self.changes.push(BalanceChange::spent(token, amount));
        Ok(())
    }

    /// Receive at least `min` of `token`, at most the quote `quoted` and a drift of 0.1 % (the
    /// block that mines the plan is later than the quote's, and Pendle's prices move with
    /// time).
    fn receive(&mut self, token: &Token, min: U256, quoted: U256) {
        let most = quoted + quoted / U256::from(1_000u32) + U256::from(1u8);
        self.changes.push(BalanceChange::received(token, min).up_to(most.saturating_sub(min)));
    }

    fn call(&mut self, call: impl alloy_sol_types::SolCall, description: String) {
        self.calls.push(PlannedCall { call: tx_call(self.v.chain_id, self.v.router, &call), description });
    }

    fn done(self, outcome: Value) -> WritePlan {
        let mut outcome = outcome;
        outcome["market"] = json!(self.m.name);
        outcome["balance_changes"] = json!(self.changes);
        outcome["authorities"] = json!(self.authorities);
        WritePlan { calls: self.calls, expected_outcome_json: outcome.to_string() }
    }
}

/// `text` base units of `token` (`max`: the wallet's balance of it, capped by `cap`).
fn amount_of(
    c: ChainId,
    token: &Token,
    owner: Address,
    text: &str,
    cap: Option<U256>,
) -> Result<U256, Error> {
    let x = if text.trim().eq_ignore_ascii_case("max") {
        let held = erc20::balance_of(c, token.address, owner)?;
        cap.map_or(held, |cap| held.min(cap))
    } else {
        parse_units("amount", text, token.decimals)?
    };
    if x.is_zero() {
        return Err(invalid_params(format!("the amount of {} is 0; name more than 0", token.symbol)));
    }
    Ok(x)
}

fn show(amount: U256, token: &Token) -> String {
    format!("{} {}", format_units(amount, token.decimals), token.symbol)
}

pub fn plan(action: Action, p: TradeParams) -> Result<WritePlan, Error> {
    check_slippage(p.slippage_bps)?;
    if p.pt_amount.is_some() && action != Action::AddLiquidity {
        return Err(invalid_params("`pt_amount` is only for pendle_add_liquidity"));
    }
    if p.keep_pt && action != Action::RemoveLiquidity {
        return Err(invalid_params("`keep_pt` is only for pendle_remove_liquidity"));
    }
    let c = p.chain_id;
    bardo_sdk::events::progress(0);
    let mut plan = Plan::new(c, &p.market)?;
    let (m, owner) = (plan.m.clone(), plan.owner);
    let token = side_token(&plan.v, &m, p.token.as_deref())?;
    let now = bardo_sdk::chain::block_timestamp(c, None)?;
    let matured = now >= m.expiry;
    let trades = !matches!(action, Action::RemoveLiquidity | Action::RedeemPy);
    if matured && trades {
        return Err(invalid_params(format!(
            "{} matured at {}; it trades no more: redeem PT with pendle_redeem_py or remove liquidity",
            m.name, m.expiry
        )));
    }
    let (token_in, token_out) = sides(&m, action, &token);
    // Before maturity PT redeems only with as much YT.
    let redeem_cap = (action == Action::RedeemPy && !matured)
        .then(|| erc20::balance_of(c, m.yt.address, owner))
        .transpose()?;
    let x = amount_of(c, &token_in, owner, &p.amount, redeem_cap)?;
    bardo_sdk::events::progress(1);
    let s = p.slippage_bps;
    if action == Action::AddLiquidity && p.pt_amount.is_some() {
        return add_dual(plan, &token, x, p.pt_amount.as_deref().unwrap_or_default(), s);
    }
    if action == Action::RemoveLiquidity && p.keep_pt {
        return remove_dual(plan, &token, x, s);
    }
    let (out, fee, impact, _) = static_out(&plan.v, &m, action, x, &token)?;
    let min = min_out(out, s)?;
    plan.spend(&token_in, x)?;
    if action == Action::RedeemPy && !matured {
        plan.spend(&m.yt, x)?;
    }
    plan.receive(&token_out, min, out);
    if action == Action::MintPy {
        plan.receive(&m.yt, min, out);
    }
    let (t, market, yt) = (token.address, m.market, m.yt.address);
    let what = format!("{} for at least {}", show(x, &token_in), show(min, &token_out));
    match action {
        Action::BuyPt => plan.call(
            Router::swapExactTokenForPtSimpleCall {
                receiver: owner,
                market,
                minPtOut: min,
                input: abi::input(t, x),
            },
            format!("buy PT of {}: {what}", m.name),
        ),
        Action::SellPt => plan.call(
            Router::swapExactPtForTokenCall {
                receiver: owner,
                market,
                exactPtIn: x,
                output: abi::output(t, min),
                limit: abi::no_limit_orders(),
            },
            format!("sell PT of {}: {what}", m.name),
        ),
        Action::BuyYt => plan.call(
            Router::swapExactTokenForYtSimpleCall {
                receiver: owner,
                market,
                minYtOut: min,
                input: abi::input(t, x),
            },
            format!("buy YT of {}: {what}", m.name),
        ),
        Action::SellYt => plan.call(
            Router::swapExactYtForTokenCall {
                receiver: owner,
                market,
                exactYtIn: x,
                output: abi::output(t, min),
                limit: abi::no_limit_orders(),
            },
            format!("sell YT of {}: {what}", m.name),
        ),
        Action::AddLiquidity => plan.call(
            Router::addLiquiditySingleTokenSimpleCall {
                receiver: owner,
                market,
                minLpOut: min,
                input: abi::input(t, x),
            },
            format!("add liquidity to {}: {what}", m.name),
        ),
        Action::RemoveLiquidity => plan.call(
            Router::removeLiquiditySingleTokenCall {
                receiver: owner,
                market,
                netLpToRemove: x,
                output: abi::output(t, min),
                limit: abi::no_limit_orders(),
            },
            format!("remove liquidity from {}: {what}", m.name),
        ),
        Action::MintPy => plan.call(
            Router::mintPyFromTokenCall { receiver: owner, YT: yt, minPyOut: min, input: abi::input(t, x) },
            format!("mint PT and YT of {}: {what} of each", m.name),
        ),
        Action::RedeemPy => plan.call(
            Router::redeemPyToTokenCall { receiver: owner, YT: yt, netPyIn: x, output: abi::output(t, min) },
            format!(
                "redeem {}{} of {}: at least {}",
                show(x, &m.pt),
                if matured { "" } else { " and as much YT" },
                m.name,
                show(min, &token_out)
            ),
        ),
    }
    Ok(plan.done(json!({
        "action": action, "token_in": token_in, "amount_in": Amount::of(x, token_in.decimals),
        "token_out": token_out, "quoted_out": Amount::of(out, token_out.decimals),
        "min_out": Amount::of(min, token_out.decimals),
        "fee_sy": fee.map(|f| Amount::of(f, m.sy.decimals)),
        "price_impact": impact.map(|i| format!("{:.4}", f64::from(i) / 1e16)),
    })))
}

/// The token and PT in the market's ratio: all of the token, and the PT that matches it (at
/// most `pt_text` and the match plus the slippage).
fn add_dual(mut plan: Plan, token: &Token, x: U256, pt_text: &str, s: u32) -> Result<WritePlan, Error> {
    let (c, m, owner) = (plan.v.chain_id, plan.m.clone(), plan.owner);
    let offered = amount_of(c, &m.pt, owner, pt_text, None)?;
    let q = eth_call(
        c,
        plan.v.router_static,
        &RouterStatic::addLiquidityDualTokenAndPtStaticCall {
            market: m.market,
            tokenIn: token.address,
            netTokenDesired: x,
            netPtDesired: offered,
        },
    )?;
    // Pendle's router must use all the SY the token mints.
    if q.netTokenUsed < x {
        return Err(invalid_params(format!(
            "{} of PT matches only {} in {}'s ratio; lower `amount` to that or raise `pt_amount`",
            show(offered, &m.pt),
            show(q.netTokenUsed, token),
            m.name
        )));
    }
    let pt_max = max_in(q.netPtUsed, s).min(offered);
    let lp_min = min_out(q.netLpOut, s)?;
    plan.spend(token, x)?;
    erc20::require_balance(c, &m.pt, owner, pt_max)?;
    plan.calls.extend(erc20::approval_if_short(c, &m.pt, owner, plan.v.router, pt_max, "Pendle's router")?);
    plan.authorities.push(Authority::erc20(&m.pt, plan.v.router, pt_max));
    // The PT the market takes: the match, or up to the slippage more after a trade moves it.
    plan.changes.push(BalanceChange::spent(&m.pt, pt_max).up_to(pt_max));
    plan.receive(&m.lp(), lp_min, q.netLpOut);
    plan.call(
        Router::addLiquidityDualTokenAndPtCall {
            receiver: owner,
            market: m.market,
            input: abi::input(token.address, x),
            netPtDesired: pt_max,
            minLpOut: lp_min,
        },
        format!(
            "add {} and up to {} to {} for at least {} LP",
            show(x, token),
            show(pt_max, &m.pt),
            m.name,
            format_units(lp_min, 18)
        ),
    );
    Ok(plan.done(json!({
        "action": "add_liquidity_dual", "token_in": token, "amount_in": Amount::of(x, token.decimals),
        "pt_in_at_most": Amount::of(pt_max, m.pt.decimals), "quoted_lp_out": Amount::of(q.netLpOut, 18),
        "min_lp_out": Amount::of(lp_min, 18),
    })))
}

/// LP out as the token and PT, each at least its quote less the slippage.
fn remove_dual(mut plan: Plan, token: &Token, lp: U256, s: u32) -> Result<WritePlan, Error> {
    let (c, m, owner) = (plan.v.chain_id, plan.m.clone(), plan.owner);
    let q = eth_call(
        c,
        plan.v.router_static,
        &RouterStatic::removeLiquidityDualTokenAndPtStaticCall {
            market: m.market,
            netLpToRemove: lp,
            tokenOut: token.address,
        },
    )?;
    let (token_min, pt_min) = (min_out(q.netTokenOut, s)?, min_out(q.netPtOut, s)?);
    plan.spend(&m.lp(), lp)?;
    plan.receive(token, token_min, q.netTokenOut);
    plan.receive(&m.pt, pt_min, q.netPtOut);
    plan.call(
        Router::removeLiquidityDualTokenAndPtCall {
            receiver: owner,
            market: m.market,
            netLpToRemove: lp,
            output: abi::output(token.address, token_min),
            minPtOut: pt_min,
        },
        format!(
            "remove {} LP from {} for at least {} and {}",
            format_units(lp, 18),
            m.name,
            show(token_min, token),
            show(pt_min, &m.pt)
        ),
    );
    Ok(plan.done(json!({
        "action": "remove_liquidity_dual", "lp_in": Amount::of(lp, 18),
        "quoted_out": [Amount::of(q.netTokenOut, token.decimals), Amount::of(q.netPtOut, m.pt.decimals)],
        "min_out": [Amount::of(token_min, token.decimals), Amount::of(pt_min, m.pt.decimals)],
    })))
}

/// What the receipt moved in and out of the wallet of each token a trade touches.
pub fn verify(action: Action, p: TradeParams, receipts: Vec<Receipt>) -> Result<Value, Error> {
    let c = p.chain_id;
    let v = venue(c)?;
    let m = v.find(&p.market)?;
    let token = side_token(&v, &m, p.token.as_deref())?;
    let (last, owner) = landed(&receipts)?;
    let mut moved = Vec::new();
    for t in [&token, &m.pt, &m.yt, &m.lp(), &m.sy] {
        let (received, sent) = transfers(&last.logs, t.address, owner);
        if received.is_zero() && sent.is_zero() {
            continue;
        }
        moved.push(json!({
            "token": t, "received": Amount::of(received, t.decimals), "sent": Amount::of(sent, t.decimals),
            "held": Amount::of(erc20::balance_of(c, t.address, owner)?, t.decimals),
        }));
    }
    if moved.is_empty() {
        return Err(bardo_sdk::errors::internal(format!(
            "the receipt {} moves none of {}'s tokens for the wallet",
            last.tx_hash, m.name
        )));
    }
    Ok(json!({"action": action, "market": m.name, "moved": moved, "tx_hash": last.tx_hash}))
}

bardo_sdk::action_tools! {
    params: TradeParams, category: Yield, action: Action, plan: plan, verify: verify,
    steps: &["read the market", "quote with Pendle's static router", "build calls"],
    chains: bardo_sdk::chains::PENDLE;
    (BuyPt, "pendle_buy_pt", BuyPt, "pendle-buy-pt", Medium,
    "Plans buying PT of a listed Pendle market with exactly `amount` of the token (the SY's asset \
     or yield token): a fixed yield to maturity. Minimum PT out: the static router's quote less \
     `slippage_bps`, enforced by the router. Approves exactly `amount` when short.",
    "pendle_buy_pt: plan locking a fixed yield by buying PT",
    [Defensive: "Buy PT only when its implied APY beats the underlying's own yield by a margin."]),
    (SellPt, "pendle_sell_pt", SellPt, "pendle-sell-pt", Medium,
    "Plans selling exactly `amount` of a market's PT (or `max`) for the token before maturity, \
     at least the quote less `slippage_bps`. After maturity redeem PT with pendle_redeem_py.",
    "pendle_sell_pt: plan selling PT before maturity",
    [Survival: "Sell PT only if the cash is needed before maturity; holding it pays the fixed yield."]),
    (BuyYt, "pendle_buy_yt", BuyYt, "pendle-buy-yt", High,
    "Plans buying YT of a listed market with exactly `amount` of the token: the SY's yield until \
     maturity, leveraged; YT is worth nothing at maturity. Minimum YT out enforced by the router.",
    "pendle_buy_yt: plan buying leveraged yield (YT) that expires worthless",
    [Defensive: "Do not buy YT.", Survival: "Do not buy YT."]),
    (SellYt, "pendle_sell_yt", SellYt, "pendle-sell-yt", Medium,
    "Plans selling exactly `amount` of a market's YT (or `max`) for the token, at least the quote \
     less `slippage_bps`.",
    "pendle_sell_yt: plan selling YT for the token",
    []),
    (AddLiquidity, "pendle_add_liquidity", AddLiquidity, "pendle-add-liquidity", Medium,
    "Plans adding exactly `amount` of the token to a listed market for LP (part swapped to PT \
     inside the market), or with `pt_amount` the token and up to that much PT in the market's \
     ratio (dual). Minimum LP out enforced by the router.",
    "pendle_add_liquidity: plan providing liquidity to a Pendle market",
    []),
    (RemoveLiquidity, "pendle_remove_liquidity", RemoveLiquidity, "pendle-remove-liquidity", Low,
    "Plans removing exactly `amount` LP (or `max`) from a market for the token (its PT sold in \
     the market), or with `keep_pt` for the token and the PT (dual); minimums enforced by the router.",
    "pendle_remove_liquidity: plan withdrawing Pendle liquidity",
    []),
    (MintPy, "pendle_mint_py", MintPy, "pendle-mint-py", Medium,
    "Plans minting PT and YT (as much of each) from exactly `amount` of the token through the SY.",
    "pendle_mint_py: plan splitting the token into PT and YT",
    []),
    (RedeemPy, "pendle_redeem_py", RedeemPy, "pendle-redeem-py", Low,
    "Plans redeeming `amount` PT (or `max`) for the token: before maturity with as much YT, after \
     maturity PT alone, one asset unit per PT in value.",
    "pendle_redeem_py: plan redeeming PT (and YT) for the token, or PT after maturity",
    []),
}

/// Params of the claim.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ClaimParams {
    /// Chain id.
    pub chain_id: ChainId,
    /// A listed market (name or address); default: every listed market.
    #[serde(default)]
    pub market: Option<String>,
}

/// What the wallet may claim per token now: the YTs' interest in SY and every reward.
fn due(v: &Venue, markets: &[MarketRef], owner: Address) -> Result<Vec<(Address, U256)>, Error> {
    let c = v.chain_id;
    let mut due: Vec<(Address, U256)> = Vec::new();
    let mut add = |token: Address, amount: U256| match due.iter_mut().find(|(t, _)| *t == token) {
        Some((_, sum)) => *sum += amount,
        None => due.push((token, amount)),
    };
    for m in markets {
        let py: UserPYInfo =
            eth_call(c, v.router_static, &RouterStatic::getUserPYInfoCall { py: m.yt.address, user: owner })?;
        let lp: UserMarketInfo = eth_call(
            c,
            v.router_static,
            &RouterStatic::getUserMarketInfoCall { market: m.market, user: owner },
        )?;
        let sy =
            eth_call(c, v.router_static, &RouterStatic::getUserSYInfoCall { sy: m.sy.address, user: owner })?;
        add(m.sy.address, py.unclaimedInterest.amount);
        for r in py.unclaimedRewards.iter().chain(&lp.unclaimedRewards).chain(&sy.unclaimedRewards) {
            add(r.token, r.amount);
        }
    }
    Ok(due.into_iter().filter(|(_, a)| !a.is_zero()).collect())
}

pub struct Claim;

impl bardo_sdk::WriteTool for Claim {
    const NAME: &'static str = "pendle_claim";
    type Params = ClaimParams;

    fn def() -> bardo_sdk::ToolDef {
        bardo_sdk::ToolDef {
            prompt_snippet: "pendle_claim: plan claiming YT interest and PENDLE/SY rewards".into(),
            supported_chains: bardo_sdk::chains::PENDLE.to_vec(),
            ..bardo_sdk::write_def::<ClaimParams>(
                Self::NAME,
                "Plans claiming what the wallet's Pendle positions have earned in one listed market or all: \
                 the YT's interest (in SY) and the rewards of LP, YT and SY (PENDLE and the SY's own), paid \
                 to the wallet.",
                bardo_sdk::Category::Yield,
                ("pendle-claim", bardo_sdk::RiskTier::Low),
                &["read the positions", "build the call"],
            )
        }
    }

    fn plan(p: ClaimParams) -> Result<WritePlan, Error> {
        let c = p.chain_id;
        let v = venue(c)?;
        let owner = wallet(c)?;
        let markets = match &p.market {
            Some(name) => vec![v.find(name)?],
            None => v.markets()?,
        };
        let due = due(&v, &markets, owner)?;
        if due.is_empty() {
            return Err(invalid_params("the wallet has nothing to claim in these markets"));
        }
        let mut changes = Vec::new();
        let mut claims = Vec::new();
        for (address, amount) in &due {
            let token = erc20::token(c, *address)?;
            // Rewards accrue every second: the block that mines the claim pays a little more.
            let slack = U256::from(10u64).pow(U256::from(token.decimals));
            changes.push(BalanceChange::received(&token, *amount).up_to(*amount + slack));
            claims.push(json!({"token": token, "amount": Amount::of(*amount, token.decimals)}));
        }
        let call = Router::redeemDueInterestAndRewardsCall {
            user: owner,
            sys: markets.iter().map(|m| m.sy.address).collect(),
            yts: markets.iter().map(|m| m.yt.address).collect(),
            markets: markets.iter().map(|m| m.market).collect(),
        };
        let names: Vec<&str> = markets.iter().map(|m| m.name.as_str()).collect();
        Ok(WritePlan {
            calls: vec![PlannedCall {
                call: tx_call(c, v.router, &call),
                description: format!("claim interest and rewards of {}", names.join(", ")),
            }],
            expected_outcome_json: json!({
                "action": "claim", "markets": names, "due": claims, "balance_changes": changes,
            })
            .to_string(),
        })
    }

    fn verify(p: ClaimParams, receipts: Vec<Receipt>) -> Result<Value, Error> {
        let c = p.chain_id;
        let (last, owner) = landed(&receipts)?;
        let mut tokens: Vec<Address> = last.logs.iter().filter_map(|l| l.address.parse().ok()).collect();
        tokens.dedup();
        let mut claimed = Vec::new();
        for address in tokens {
            let (received, _) = transfers(&last.logs, address, owner);
            if received.is_zero() || claimed.iter().any(|(t, _): &(Token, U256)| t.address == address) {
                continue;
            }
            claimed.push((erc20::token(c, address)?, received));
        }
        let claimed: Vec<Value> =
            claimed.iter().map(|(t, a)| json!({"token": t, "amount": Amount::of(*a, t.decimals)})).collect();
        Ok(json!({"action": "claim", "claimed": claimed, "tx_hash": last.tx_hash}))
    }
}
