//! `uniswap_rebalance_position`: move a position the wallet owns to a new range in **one
//! transaction** — V3 through the position manager's `multicall` (decrease all, collect, burn,
//! mint), V4 through one `modifyLiquidities` (burn, mint, close each token). What the old
//! position holds, principal and fees, goes into the new one; with `top_up` (the default) the
//! new position is worth what the old one held at the pool's price, the wallet paying what the
//! new ratio needs more of and keeping what it needs less of — no swap, so no pool to be
//! sandwiched but the one the position is in, whose moves the minimums bound on chain.

use super::{Amounts, check_receipts, default_slippage, json, json_value, owned, write_def};
use crate::abi::*;
use crate::book::{Book, book};
use crate::liquidity_v4::{self as v4p, V4Fields};
use crate::math::{
    MAX_TICK, amounts_for_liquidity, centred_range, check_slippage, liquidity_for_amounts,
    liquidity_for_value, min_out, sqrt_price_at_tick,
};
use crate::pools::{Version, v3_pool};
use crate::read::{deadline, position, position_id};
use alloy_primitives::aliases::{I24, U24};
use alloy_primitives::{Address, Bytes, I256, U256};
use alloy_sol_types::SolCall;
use bardo_sdk::abi::{events as logs_of, simulate_last, tx_call, wallet};
use bardo_sdk::erc20::{self, Authority, BalanceChange, NftChange, Token};
use bardo_sdk::errors::{internal, invalid_params};
use bardo_sdk::units::format_units;
use bardo_sdk::{
    Error, Phase, PlannedCall, Receipt, RiskTier, ToolDef, TxCall, WritePlan, WriteTool, events,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Params of `uniswap_rebalance_position`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RebalanceParams {
    /// Chain id.
    pub chain_id: u64,
    /// The position NFT's id, decimal.
    pub position_id: String,
    /// `v3` (default) or `v4`: which position manager's NFT `position_id` is.
    #[serde(default)]
    pub version: Option<Version>,
    /// The new lower tick, a multiple of the pool's tick spacing (with `tick_upper`).
    #[serde(default)]
    pub tick_lower: Option<i32>,
    /// The new upper tick.
    #[serde(default)]
    pub tick_upper: Option<i32>,
    /// Instead of ticks: a range about this many ticks wide centred on the pool's price now.
    #[serde(default)]
    pub width_ticks: Option<u32>,
    /// Keep the position's value (default true): the wallet pays what the new range needs beyond
    /// what the position holds and keeps the rest. False: only what the position holds goes in.
    #[serde(default = "yes")]
    pub top_up: bool,
    /// Tolerance on the amounts, basis points 1 to 5000 (default 50).
    #[serde(default = "default_slippage")]
    pub slippage_bps: u32,
}

fn yes() -> bool {
    true
}

/// Expected / verified outcome of a rebalance.
#[derive(Debug, Serialize)]
pub struct RebalanceOutcome {
    /// The wallet's net token balance changes (checked by the host against its simulation).
    pub balance_changes: Vec<BalanceChange>,
    /// What the position managers may still pull afterwards.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub authorities: Vec<Authority>,
    /// The old position burned, the new one minted.
    pub nfts: Vec<NftChange>,
    pub old_position_id: String,
    /// The new position (the id it is expected to get, at preview).
    pub position_id: String,
    pub tick_lower: i32,
    pub tick_upper: i32,
    pub liquidity: String,
    /// Everything the old position paid out: principal and fees (V4 receipts show the wallet's
    /// net only: what went from the old position into the new one never left the PoolManager).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub withdrawn: Option<Amounts>,
    /// What the new position took.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deposited: Option<Amounts>,
    /// The transactions the rebalance itself took (approvals aside): one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub transactions: Option<usize>,
    /// V4: the pool's id, tick spacing and hooks.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub v4: Option<V4Fields>,
}

pub struct RebalancePosition;

impl WriteTool for RebalancePosition {
    const NAME: &'static str = "uniswap_rebalance_position";
    type Params = RebalanceParams;

    fn def() -> ToolDef {
        write_def::<RebalanceParams>(
            Self::NAME,
            "Plans moving a Uniswap V3 or V4 position the wallet owns to a new tick range in one transaction: \
             remove all its liquidity, collect its fees, burn it and mint the new range with what came out (V3: \
             the position manager's multicall; V4: one modifyLiquidities). With `top_up` (default) the new \
             position keeps the old one's value at the pool price — the wallet pays the token the new range \
             needs more of and keeps the rest; nothing is swapped. Minimum amounts on chain come from simulating \
             it, less the slippage setting.",
            RiskTier::High,
            "rebalance_liquidity",
            &["read position", "resolve range", "simulate rebalance", "build calls"],
            &[
                (Phase::Thriving, "Re-centre positions that left their range; keep widths you can watch."),
                (Phase::Defensive, "Prefer wider ranges when re-centring."),
                (Phase::Survival, "Do not re-centre; close positions at risk instead."),
            ],
        )
    }

    fn plan(p: RebalanceParams) -> Result<WritePlan, Error> {
        let owner = wallet(p.chain_id)?;
        check_slippage(p.slippage_bps)?;
        let book = book(p.chain_id)?;
        let id = position_id(&p.position_id)?;
        events::progress(0);
        if p.version == Some(Version::V4) {
            return plan_v4(&p, &book, id, owner);
        }
        let pos = owned(p.chain_id, &book, id, owner)?;
        if pos.liquidity == 0 {
            return Err(invalid_params(format!(
                "position {id} holds no liquidity to move; collect its fees with uniswap_collect_fees"
            )));
        }
        let pool = v3_pool(p.chain_id, &book, &pos.token0, &pos.token1, pos.fee)?
            .ok_or_else(|| internal(format!("position {id}'s pool is gone")))?;
        let ticks = range(&p, pool.tick_spacing, pool.tick, (pos.tick_lower, pos.tick_upper))?;
        events::progress(1);
        let (t0, t1) = (&pos.token0, &pos.token1);
        let npm = book.position_manager;
        let deadline = deadline(p.chain_id, 600)?;
        let batch = Batch {
            chain_id: p.chain_id,
            npm,
            id,
            owner,
            liquidity: pos.liquidity,
            ticks,
            deadline,
            pos: &pos,
        };
        // What comes out: the decrease's principal, and the collect's everything.
        let results = simulate_last::<multicallCall>(
            p.chain_id,
            owner,
            &[batch.call(&[Step::Decrease(ZERO), Step::Collect])],
        )?;
        let principal = decoded::<decreaseLiquidityCall>(&results, 0)?;
        let out = decoded::<collectCall>(&results, 1)?;
        let (principal, out) = ((principal.amount0, principal.amount1), (out.amount0, out.amount1));
        let (sa, sb) = (sqrt_price_at_tick(ticks.0)?, sqrt_price_at_tick(ticks.1)?);
        let liquidity = if p.top_up {
            liquidity_for_value(pool.sqrt_price_x96, sa, sb, out.0, out.1)
        } else {
            liquidity_for_amounts(pool.sqrt_price_x96, sa, sb, out.0, out.1)
        }
        .filter(|l| *l > 0)
        .ok_or_else(|| no_liquidity(id, ticks, pool.tick))?;
        let need = amounts_for_liquidity(pool.sqrt_price_x96, sa, sb, liquidity);
        let desired = (rounded(need.0), rounded(need.1));
        let mut calls: Vec<PlannedCall> = Vec::new();
        for (token, want, got) in [(t0, desired.0, out.0), (t1, desired.1, out.1)] {
            if want > got {
                short_of(p.chain_id, token, owner, want - got)?;
            }
            calls.extend(erc20::approval_if_short(
                p.chain_id,
                token,
                owner,
                npm,
                want,
                "the V3 position manager",
            )?);
        }
        events::progress(2);
        let mut sim: Vec<TxCall> = calls.iter().map(|c| c.call.clone()).collect();
        sim.push(batch.call(&[Step::Decrease(ZERO), Step::Collect, Step::Burn, Step::Mint(desired, ZERO)]));
        let results = simulate_last::<multicallCall>(p.chain_id, owner, &sim)?;
        let minted = decoded::<mintCall>(&results, 3)?;
        let used = (minted.amount0, minted.amount1);
        let bound = |a: U256| if a.is_zero() { Ok(U256::ZERO) } else { min_out(a, p.slippage_bps) };
        events::progress(3);
        let steps = [
            Step::Decrease((bound(principal.0)?, bound(principal.1)?)),
            Step::Collect,
            Step::Burn,
            Step::Mint(desired, (bound(used.0)?, bound(used.1)?)),
        ];
        let fmt = |a: U256, t: &Token| format!("{} {}", format_units(a, t.decimals), t.symbol);
        calls.push(PlannedCall {
            call: batch.call(&steps),
            description: format!(
                "move position {id} from ticks {}..{} to {}..{} in one transaction (position manager multicall): \
                 remove it ({} + {} with fees), burn it, mint {} + {}",
                pos.tick_lower,
                pos.tick_upper,
                ticks.0,
                ticks.1,
                fmt(out.0, t0),
                fmt(out.1, t1),
                fmt(used.0, t0),
                fmt(used.1, t1)
            ),
        });
        let expected = RebalanceOutcome {
            balance_changes: vec![
                BalanceChange::net(t0.address, out.0, used.0),
                BalanceChange::net(t1.address, out.1, used.1),
            ],
            authorities: vec![Authority::erc20(t0, npm, desired.0), Authority::erc20(t1, npm, desired.1)],
            nfts: vec![gone(npm, id), NftChange::minted(npm)],
            old_position_id: id.to_string(),
            position_id: minted.tokenId.to_string(),
            tick_lower: ticks.0,
            tick_upper: ticks.1,
            liquidity: minted.liquidity.to_string(),
            withdrawn: Some(Amounts::new(t0, t1, out.0, out.1)),
            deposited: Some(Amounts::new(t0, t1, used.0, used.1)),
            transactions: Some(1),
            v4: None,
        };
        Ok(WritePlan { calls, expected_outcome_json: json(&expected)? })
    }

    fn verify(p: RebalanceParams, receipts: Vec<Receipt>) -> Result<serde_json::Value, Error> {
        check_receipts(&receipts)?;
        let book = book(p.chain_id)?;
        let old = position_id(&p.position_id)?;
        if p.version == Some(Version::V4) {
            return verify_v4(&p, &book, old, &receipts);
        }
        let npm = book.position_manager;
        let collected = logs_of::<Collect>(&receipts, npm)
            .into_iter()
            .find(|e| e.tokenId == old)
            .ok_or_else(|| internal(format!("the receipts hold no Collect of position {old}")))?;
        let added = logs_of::<IncreaseLiquidity>(&receipts, npm)
            .into_iter()
            .find(|e| e.tokenId != old)
            .ok_or_else(|| internal("the receipts hold no new position's IncreaseLiquidity"))?;
        let pos = position(p.chain_id, &book, added.tokenId)?;
        let (t0, t1) = (&pos.token0, &pos.token1);
        json_value(RebalanceOutcome {
            balance_changes: vec![
                BalanceChange::net(t0.address, collected.amount0, added.amount0),
                BalanceChange::net(t1.address, collected.amount1, added.amount1),
            ],
            authorities: Vec::new(),
            nfts: vec![
                gone(npm, old),
                NftChange { collection: npm, id: Some(added.tokenId.to_string()), gained: true },
            ],
            old_position_id: old.to_string(),
            position_id: added.tokenId.to_string(),
            tick_lower: pos.tick_lower,
            tick_upper: pos.tick_upper,
            liquidity: added.liquidity.to_string(),
            withdrawn: Some(Amounts::new(t0, t1, collected.amount0, collected.amount1)),
            deposited: Some(Amounts::new(t0, t1, added.amount0, added.amount1)),
            transactions: Some(rebalance_transactions(&receipts, npm)),
            v4: None,
        })
    }
}

const ZERO: (U256, U256) = (U256::ZERO, U256::ZERO);

/// One call of a V3 rebalance's multicall.
enum Step {
    /// Remove all the liquidity, at least these amounts.
    Decrease((U256, U256)),
    /// Everything the position owes, to the wallet.
    Collect,
    Burn,
    /// Mint the new range: (desired, minimum) amounts.
    Mint((U256, U256), (U256, U256)),
}

/// What a V3 rebalance's multicall is built from.
struct Batch<'a> {
    chain_id: u64,
    npm: Address,
    id: U256,
    owner: Address,
    liquidity: u128,
    ticks: (i32, i32),
    deadline: U256,
    pos: &'a crate::read::Position,
}

impl Batch<'_> {
    fn call(&self, steps: &[Step]) -> TxCall {
        let data: Vec<Bytes> = steps
            .iter()
            .map(|s| match s {
                Step::Decrease(min) => decreaseLiquidityCall {
                    params: DecreaseLiquidityParams {
                        tokenId: self.id,
                        liquidity: self.liquidity,
                        amount0Min: min.0,
                        amount1Min: min.1,
                        deadline: self.deadline,
                    },
                }
                .abi_encode(),
                Step::Collect => collectCall {
                    params: CollectParams {
                        tokenId: self.id,
                        recipient: self.owner,
                        amount0Max: u128::MAX,
                        amount1Max: u128::MAX,
                    },
                }
                .abi_encode(),
                Step::Burn => burnCall { tokenId: self.id }.abi_encode(),
                Step::Mint(desired, min) => mintCall {
                    params: MintParams {
                        token0: self.pos.token0.address,
                        token1: self.pos.token1.address,
                        fee: U24::from(self.pos.fee),
                        tickLower: I24::try_from(self.ticks.0).unwrap_or_default(),
                        tickUpper: I24::try_from(self.ticks.1).unwrap_or_default(),
                        amount0Desired: desired.0,
                        amount1Desired: desired.1,
                        amount0Min: min.0,
                        amount1Min: min.1,
                        recipient: self.owner,
                        deadline: self.deadline,
                    },
                }
                .abi_encode(),
            })
            .map(Bytes::from)
            .collect();
        tx_call(self.chain_id, self.npm, &multicallCall { data })
    }
}

/// The `i`th result of a simulated multicall, decoded as `C` returns.
fn decoded<C: SolCall>(results: &[Bytes], i: usize) -> Result<C::Return, Error> {
    let raw = results
        .get(i)
        .ok_or_else(|| internal(format!("the multicall returned {} results", results.len())))?;
    C::abi_decode_returns(raw)
        .map_err(|e| internal(format!("{} returned data that does not decode: {e}", C::SIGNATURE)))
}

/// What the mint may take of a token the position math needs `need` of (it rounds up by a wei).
fn rounded(need: U256) -> U256 {
    if need.is_zero() { need } else { need + U256::from(1u8) }
}

/// The wallet must hold the top-up.
fn short_of(chain_id: u64, token: &Token, owner: Address, top_up: U256) -> Result<(), Error> {
    erc20::require_balance(chain_id, token, owner, top_up).map_err(|e| {
        invalid_params(format!(
            "the new range needs {} {} more than the position holds: {}; swap for it first \
             (uniswap_execute_swap), or move only what the position holds (`top_up`: false)",
            format_units(top_up, token.decimals),
            token.symbol,
            e.message
        ))
    })
}

fn no_liquidity(id: U256, ticks: (i32, i32), tick: i32) -> Error {
    invalid_params(format!(
        "what position {id} holds buys no liquidity in ticks {}..{} at the pool's price (tick {tick}); let the \
         wallet pay the other token (`top_up`: true), or pick a range on the held token's side",
        ticks.0, ticks.1
    ))
}

/// The position NFT `id` of `collection` leaving the wallet (burned).
fn gone(collection: Address, id: U256) -> NftChange {
    NftChange { collection, id: Some(id.to_string()), gained: false }
}

/// The new range: the ticks given, or `width_ticks` centred on the pool's tick; a multiple of
/// the spacing within the widest ticks, and not the range the position already has.
fn range(p: &RebalanceParams, spacing: i32, tick: i32, current: (i32, i32)) -> Result<(i32, i32), Error> {
    let (lower, upper) = match (p.tick_lower, p.tick_upper, p.width_ticks) {
        (Some(l), Some(u), None) => (l, u),
        (None, None, Some(w)) => centred_range(tick, w, spacing)?,
        _ => {
            return Err(invalid_params(
                "give the new range as `tick_lower` and `tick_upper`, or as `width_ticks`",
            ));
        }
    };
    if lower >= upper || lower < -MAX_TICK || upper > MAX_TICK {
        return Err(invalid_params(format!(
            "ticks {lower}..{upper} must satisfy -{MAX_TICK} <= tick_lower < tick_upper <= {MAX_TICK}"
        )));
    }
    if lower % spacing != 0 || upper % spacing != 0 {
        return Err(invalid_params(format!("ticks must be multiples of the pool's tick spacing {spacing}")));
    }
    if (lower, upper) == current {
        return Err(invalid_params(format!(
            "the position is already in ticks {lower}..{upper}; pick another range (the pool is at tick {tick})"
        )));
    }
    Ok((lower, upper))
}

/// How many of the receipts are the rebalance itself: those the position manager logged in
/// (approvals are the tokens' and Permit2's; through a Safe everything is one).
fn rebalance_transactions(receipts: &[Receipt], manager: Address) -> usize {
    receipts
        .iter()
        .filter(|r| r.logs.iter().any(|l| l.address.parse::<Address>().ok() == Some(manager)))
        .count()
}

/// `uniswap_rebalance_position` of a V4 position.
fn plan_v4(p: &RebalanceParams, book: &Book, id: U256, owner: Address) -> Result<WritePlan, Error> {
    let pos = v4p::owned(p.chain_id, book, id, owner)?;
    if pos.liquidity == 0 {
        return Err(invalid_params(format!(
            "V4 position {id} holds no liquidity to move; collect its fees with uniswap_collect_fees"
        )));
    }
    let ticks = range(p, pos.pool.key.tick_spacing, pos.pool.tick, (pos.tick_lower, pos.tick_upper))?;
    events::progress(1);
    let m = v4p::Move {
        chain_id: p.chain_id,
        position: &pos,
        ticks,
        top_up: p.top_up,
        slippage_bps: p.slippage_bps,
        deadline: deadline(p.chain_id, 600)?,
    };
    events::progress(2);
    let moved = v4p::move_position(book, &m)?;
    events::progress(3);
    let posm = v4p::manager(p.chain_id, book)?;
    let (t0, t1) = (&pos.pool.token0, &pos.pool.token1);
    let into = |d: I256, out: U256| {
        if d.is_negative() { out + d.unsigned_abs() } else { out.saturating_sub(v4p::inflow(d)) }
    };
    let into = (into(moved.deltas.0, moved.out.0), into(moved.deltas.1, moved.out.1));
    let change = |t: &Token, d: I256| {
        if d.is_negative() {
            BalanceChange::spent(t, d.unsigned_abs())
        } else {
            BalanceChange::received(t, v4p::inflow(d))
        }
    };
    let expected = RebalanceOutcome {
        balance_changes: vec![change(t0, moved.deltas.0), change(t1, moved.deltas.1)],
        authorities: moved.authorities,
        nfts: vec![v4p::burned(posm, id), NftChange::minted(posm)],
        old_position_id: id.to_string(),
        position_id: moved.id.to_string(),
        tick_lower: ticks.0,
        tick_upper: ticks.1,
        liquidity: moved.liquidity.to_string(),
        withdrawn: Some(Amounts::new(t0, t1, moved.out.0, moved.out.1)),
        deposited: Some(Amounts::new(t0, t1, into.0, into.1)),
        transactions: Some(1),
        v4: Some(V4Fields::of(&pos.pool)),
    };
    Ok(WritePlan { calls: moved.calls, expected_outcome_json: json(&expected)? })
}

fn verify_v4(
    p: &RebalanceParams,
    book: &Book,
    old: U256,
    receipts: &[Receipt],
) -> Result<serde_json::Value, Error> {
    let owner = wallet(p.chain_id)?;
    let posm = v4p::manager(p.chain_id, book)?;
    let new = v4p::minted(receipts, posm, owner)
        .ok_or_else(|| internal("the receipts hold no V4 position minted to the wallet"))?;
    let changes = v4p::modifications(receipts, posm);
    let added = changes
        .iter()
        .find(|m| m.salt == new && !m.delta.is_negative())
        .ok_or_else(|| internal(format!("the receipts hold no liquidity added to V4 position {new}")))?;
    let pos = v4p::position(p.chain_id, book, new)?;
    let (t0, t1) = (&pos.pool.token0, &pos.pool.token1);
    let (c0, c1) = (v4p::moved(receipts, t0, owner), v4p::moved(receipts, t1, owner));
    json_value(RebalanceOutcome {
        balance_changes: vec![c0, c1],
        authorities: Vec::new(),
        nfts: vec![
            v4p::burned(posm, old),
            NftChange { collection: posm, id: Some(new.to_string()), gained: true },
        ],
        old_position_id: old.to_string(),
        position_id: new.to_string(),
        tick_lower: pos.tick_lower,
        tick_upper: pos.tick_upper,
        liquidity: added.delta.to_string(),
        withdrawn: None,
        deposited: None,
        transactions: Some(rebalance_transactions(receipts, posm)),
        v4: Some(V4Fields::of(&pos.pool)),
    })
}
