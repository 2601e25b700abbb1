//! Value sanity: whatever a plan declares, it may not give the wallet's value away. The wallet's
//! net USD change in the simulation — what it gains minus what it gives, debts counted against
//! it, deposits into Uniswap V3 and V4 positions it owns counted as kept — must not fall below
//! `-(max_loss_bps × what it gives)`; a swap's (what it gets for what it gives, its effective
//! price) not below `-(max_price_deviation_bps × what it gives)`. Prices are the operator's
//! trusted ones (see [`crate::valuation`]); a deposit is worth what its liquidity would hold at
//! the pool's reference price, not what was paid in (see [`crate::pools`]). A Morpho Blue
//! position is worth its shares at the market's totals in its loan token (a debt against the
//! wallet) and its collateral, at trusted prices, never at the market's own oracle. A deposit into a
//! stranger's position, a trade at a price nobody trusts, a transfer disguised as anything: each
//! loses what it gives, and is refused.

use super::{Decision, Findings, Proposal, SafetyHook};
use crate::evidence::{Evidence, V3_MINT, V4_MODIFY_LIQUIDITY};
use crate::morpho::abi::marketCall;
use crate::pools::{self, PoolRef, Reference};
use crate::valuation::{Valuer, Venue, usd};
use alloy::primitives::{Address, B256, I256, Log, U256, b256};
use alloy::sol_types::SolValue;
use bardo_core::error::ErrorCode;
use bardo_evm::changes::{Change, PositionPart};
use std::collections::{BTreeMap, BTreeSet};

/// `IncreaseLiquidity(uint256 indexed tokenId, uint128 liquidity, uint256 amount0, uint256 amount1)`.
const INCREASE_LIQUIDITY: B256 = b256!("0x3067048beee31b25b2f1681f88dac838c8bba36af25bfb2b7cf7473a5847e35f");
/// ERC-20 `Transfer(address indexed from, address indexed to, uint256 value)`.
const TRANSFER: B256 = b256!("0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef");

/// The value-sanity hook (after the simulator).
#[derive(Debug)]
pub struct ValueGuard {
    /// Prices, from the host's own reads.
    pub valuer: Valuer,
    /// Uniswap V3 position managers per chain (the allowlist's `uniswap-v3-position-manager`s):
    /// deposits into the wallet's positions there are value kept.
    pub position_managers: BTreeMap<u64, BTreeSet<Address>>,
    /// Uniswap V4 PositionManagers per chain (the allowlist's `uniswap-v4-position-manager`s).
    pub v4_position_managers: BTreeMap<u64, BTreeSet<Address>>,
    /// Accounts allowlisted as `recipient` per chain (the operator's treasury, cold wallet):
    /// what the plan pays them is value kept, not lost.
    pub recipients: BTreeMap<u64, BTreeSet<Address>>,
    /// The most a plan may lose, in basis points of what it gives (fees, price impact).
    pub max_loss_bps: u32,
    /// The most a swap may lose, basis points of what it gives: its effective price against the
    /// reference (`[safety] max_price_deviation_bps`); the lower of the two bounds a swap.
    pub max_price_deviation_bps: u32,
    /// The trusted Morpho markets: the wallet's positions in them are value kept.
    pub morpho_markets: crate::morpho::TrustedMarkets,
}

/// An indexed `int24` (a tick) from its topic word.
fn tick(word: &B256) -> i32 {
    I256::from_raw(U256::from_be_bytes(word.0)).as_i32()
}

/// A loss this small (one cent, micro-dollars) is never refused.
const DUST: u128 = 10_000;

/// Default `[safety] max_value_loss_bps`: 3 %.
pub const DEFAULT_MAX_LOSS_BPS: u32 = 300;

fn reject(reason: String) -> Decision {
    Decision::Reject { code: ErrorCode::Denied, reason }
}

impl ValueGuard {
    /// Deposits into wallet-owned V3 positions, valued at the reference: for each
    /// `IncreaseLiquidity` of an allowlisted position manager for a position the wallet holds
    /// after the plan, the pool's `Mint` just before it (ticks and liquidity), and what that
    /// liquidity holds of each token at the pool's reference price (see [`deposit_at_reference`]).
    fn deposits(
        &self,
        p: &Proposal<'_>,
        ev: &Evidence<'_>,
        changes: &[Change],
    ) -> Result<Vec<(Address, U256)>, String> {
        let managers = self.position_managers.get(&p.chain_id);
        let mut out = Vec::new();
        for (i, log) in ev.logs().iter().enumerate() {
            let t = log.topics();
            if t.first() != Some(&INCREASE_LIQUIDITY)
                || t.len() != 2
                || !managers.is_some_and(|m| m.contains(&log.address))
            {
                continue;
            }
            let id = U256::from_be_bytes(t[1].0);
            if !self.owned_after(p, log.address, id, changes)? {
                continue;
            }
            // The Mint of a pool of the configured factory, for this position manager, just
            // before it: what a stranger's contract says it minted is not a deposit.
            let mint = ev
                .pool_events()
                .filter(|(j, l, venue)| {
                    *j < i
                        && matches!(venue, Venue::V3 { .. })
                        && l.topics().first() == Some(&V3_MINT)
                        && l.topics().len() == 4
                        && l.topics().get(1) == Some(&log.address.into_word())
                })
                .map(|(_, l, _)| l)
                .last()
                .ok_or_else(|| format!("position {id} grew with no pool Mint before it"))?;
            let (_, liquidity, _, _) = <(Address, u128, U256, U256)>::abi_decode_params(&mint.data.data)
                .map_err(|e| format!("the pool Mint of position {id}: {e}"))?;
            let ticks = (tick(&mint.topics()[2]), tick(&mint.topics()[3]));
            out.extend(self.deposit_at_reference(
                p.chain_id,
                PoolRef::V3(mint.address),
                ticks,
                liquidity,
                ev,
            )?);
        }
        Ok(out)
    }

    /// Deposits into wallet-owned V4 positions, valued at the reference: each `ModifyLiquidity`
    /// of the configured PoolManager with a positive delta from an allowlisted V4
    /// PositionManager (the position's token id as salt) of a position the wallet holds after
    /// the plan. The same event from any other contract — a hook, say — is no deposit.
    fn v4_deposits(
        &self,
        p: &Proposal<'_>,
        ev: &Evidence<'_>,
        changes: &[Change],
    ) -> Result<Vec<(Address, U256)>, String> {
        let Some(managers) = self.v4_position_managers.get(&p.chain_id) else { return Ok(Vec::new()) };
        let mut out = Vec::new();
        for (_, log, venue) in ev.pool_events() {
            let t = log.topics();
            if venue != Venue::V4 || t.first() != Some(&V4_MODIFY_LIQUIDITY) || t.len() != 3 {
                continue;
            }
            let position_manager = Address::from_word(t[2]);
            if !managers.contains(&position_manager) {
                continue;
            }
            let Ok((lower, upper, delta, salt)) =
                <(I256, I256, I256, B256)>::abi_decode_params(&log.data.data)
            else {
                continue;
            };
            if delta <= I256::ZERO
                || !self.owned_after(p, position_manager, U256::from_be_bytes(salt.0), changes)?
            {
                continue;
            }
            let liquidity =
                u128::try_from(delta.unsigned_abs()).map_err(|_| "a V4 liquidity delta over uint128")?;
            let pool = PoolRef::V4 { manager: log.address, id: t[1] };
            let ticks = (lower.as_i32(), upper.as_i32());
            out.extend(self.deposit_at_reference(p.chain_id, pool, ticks, liquidity, ev)?);
        }
        Ok(out)
    }

    /// What `liquidity` between `ticks` in `pool` is worth: the token amounts it would hold if
    /// the pool stood at its reference price (the operator's trusted prices), never what the
    /// plan paid in — a deposit into a mispriced pool is worth what an arbitrageur leaves of it.
    fn deposit_at_reference(
        &self,
        chain: u64,
        pool: PoolRef,
        (lower, upper): (i32, i32),
        liquidity: u128,
        ev: &Evidence<'_>,
    ) -> Result<[(Address, U256); 2], String> {
        let state = pools::state(&self.valuer, chain, pool, ev)?;
        let reference = Reference::of(&self.valuer, chain, &state)?;
        let at = |t: i32| bardo_uniswap_math::sqrt_price_at_tick(t).map_err(|e| format!("{pool}: {e}"));
        let (amount0, amount1) = bardo_uniswap_math::amounts_for_liquidity(
            reference.sqrt_price_x96(),
            at(lower)?,
            at(upper)?,
            liquidity,
        );
        Ok([(state.token0, amount0), (state.token1, amount1)])
    }

    /// The wallet's Morpho position changes as token amounts: (token, signed base units) — supply
    /// shares at the market's totals in its loan token, borrow shares the same but owed, and
    /// collateral in its collateral token.
    fn morpho_positions(&self, chain: u64, changes: &[Change]) -> Result<Vec<(Address, I256)>, String> {
        let mut out = Vec::new();
        for change in changes {
            let Change::Position { venue, market: id, part, delta } = change else { continue };
            let market = self
                .morpho_markets
                .get(&chain)
                .and_then(|m| m.get(id))
                .ok_or_else(|| format!("Morpho market {id} is not one the operator trusts"))?;
            let amount = delta.unsigned_abs();
            let sign = |v: U256| {
                let v = I256::try_from(v).unwrap_or(I256::MAX);
                if delta.is_negative() { -v } else { v }
            };
            let totals = || self.valuer.read(chain, *venue, marketCall { id: *id }).map(|m| m.totals());
            out.push(match part {
                PositionPart::Collateral => (market.collateral_token, *delta),
                PositionPart::SupplyShares => {
                    let t = totals()?;
                    (
                        market.loan_token,
                        sign(bardo_morpho_math::to_assets_down(amount, t.supply_assets, t.supply_shares)),
                    )
                }
                PositionPart::BorrowShares => {
                    let t = totals()?;
                    (
                        market.loan_token,
                        -sign(bardo_morpho_math::to_assets_up(amount, t.borrow_assets, t.borrow_shares)),
                    )
                }
            });
        }
        Ok(out)
    }

    /// Payments to the operator's recipients: each ERC-20 `Transfer` from the wallet to one, and
    /// the ether of each call to one (the scope lets such a call carry nothing but ether).
    fn to_recipients(&self, p: &Proposal<'_>, logs: &[&Log]) -> (Vec<(Address, U256)>, U256) {
        let Some(recipients) = self.recipients.get(&p.chain_id) else { return (Vec::new(), U256::ZERO) };
        let tokens = logs
            .iter()
            .filter(|log| {
                let t = log.topics();
                t.first() == Some(&TRANSFER)
                    && t.len() == 3
                    && t[1] == p.sender.into_word()
                    && recipients.contains(&Address::from_word(t[2]))
            })
            .filter_map(|log| U256::abi_decode(&log.data.data).ok().map(|v| (log.address, v)))
            .collect();
        let ether = p.plan.calls.iter().filter(|c| recipients.contains(&c.to)).map(|c| c.value).sum();
        (tokens, ether)
    }

    /// Whether the wallet holds position `id` after the plan: minted to it by the plan, or held
    /// now and not given away.
    fn owned_after(
        &self,
        p: &Proposal<'_>,
        manager: Address,
        id: U256,
        changes: &[Change],
    ) -> Result<bool, String> {
        let moved = changes.iter().find_map(|c| match c {
            Change::Nft { collection, id: n, gained } if *collection == manager && *n == id => Some(*gained),
            _ => None,
        });
        match moved {
            Some(gained) => Ok(gained),
            None => Ok(self.valuer.owner_of(p.chain_id, manager, id)? == Some(p.sender)),
        }
    }
}

impl SafetyHook for ValueGuard {
    fn name(&self) -> &'static str {
        "value-guard"
    }

    fn check(&self, p: &Proposal<'_>, found: &mut Findings) -> Decision {
        let sim = match found.simulated() {
            Ok(sim) => sim,
            Err(refused) => return refused,
        };
        let (mut gained, mut given) = (0i128, 0i128);
        let mut add = |v: i128| {
            if v >= 0 { gained = gained.saturating_add(v) } else { given = given.saturating_add(v) }
        };
        for (asset, delta) in sim.changes.balances() {
            let value = match asset {
                Some(token) => self.valuer.signed_usd(p.chain_id, token, delta),
                None => self.valuer.signed_native_usd(p.chain_id, delta),
            };
            match value {
                Ok(v) => add(v),
                Err(reason) => return reject(format!("cannot value the plan's effect: {reason}")),
            }
        }
        let ev = match Evidence::of(&self.valuer, p.chain_id, sim) {
            Ok(ev) => ev,
            Err(reason) => return reject(format!("cannot read the pools the plan touches: {reason}")),
        };
        let deposits = self.deposits(p, &ev, &sim.changes.changes).and_then(|mut v3| {
            v3.extend(self.v4_deposits(p, &ev, &sim.changes.changes)?);
            Ok(v3)
        });
        match deposits {
            Ok(deposits) => {
                for (token, amount) in deposits {
                    match self.valuer.signed_usd(p.chain_id, token, I256::from_raw(amount)) {
                        Ok(v) => add(v),
                        Err(reason) => return reject(format!("cannot value a position deposit: {reason}")),
                    }
                }
            }
            Err(reason) => return reject(format!("cannot value a position deposit: {reason}")),
        }
        match self.morpho_positions(p.chain_id, &sim.changes.changes) {
            Ok(positions) => {
                for (token, amount) in positions {
                    match self.valuer.signed_usd(p.chain_id, token, amount) {
                        Ok(v) => add(v),
                        Err(reason) => return reject(format!("cannot value a Morpho position: {reason}")),
                    }
                }
            }
            Err(reason) => return reject(format!("cannot value a Morpho position: {reason}")),
        }
        let (tokens, ether) = self.to_recipients(p, ev.logs());
        let kept = tokens
            .into_iter()
            .map(|(token, amount)| self.valuer.signed_usd(p.chain_id, token, I256::from_raw(amount)))
            .chain(
                (!ether.is_zero()).then(|| self.valuer.signed_native_usd(p.chain_id, I256::from_raw(ether))),
            );
        for value in kept {
            match value {
                Ok(v) => add(v),
                Err(reason) => return reject(format!("cannot value a payment to a recipient: {reason}")),
            }
        }
        // What a bridge deposit delivers on its destination, at that chain's trusted prices (the
        // bridge guard's finding), where the simulation shows the SpokePool took the deposit.
        for b in found.bridged.iter().filter(|b| b.evidenced(ev.logs())) {
            add(i128::try_from(b.usd_out).unwrap_or(i128::MAX));
        }
        let net = gained.saturating_add(given);
        // A plan that only trades (it swaps in a pool and adds liquidity to none), whatever its
        // kind is called, is held to a swap's bound: its effective price.
        let trades_only = ev.trades() && !ev.deposits();
        let (bps, knob) = if trades_only && self.max_price_deviation_bps < self.max_loss_bps {
            (self.max_price_deviation_bps, "max_price_deviation_bps")
        } else {
            (self.max_loss_bps, "max_value_loss_bps")
        };
        // Plus a cent: dust (rounding, a wei of interest) is not a loss worth refusing.
        let allowed = given.unsigned_abs().saturating_mul(u128::from(bps)) / 10_000 + DUST;
        if net < 0 && net.unsigned_abs() > allowed {
            return reject(format!(
                "the plan gives {} and the wallet gets back {} at trusted prices: it would lose {}, more than the {bps} bps allowed ([safety] {knob}); its proceeds must come back to the wallet at a fair price",
                usd(given.unsigned_abs()),
                usd(gained.unsigned_abs()),
                usd(net.unsigned_abs()),
            ));
        }
        Decision::Allow
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloy::primitives::keccak256;

    #[test]
    fn event_topics_are_the_signatures() {
        assert_eq!(INCREASE_LIQUIDITY, keccak256("IncreaseLiquidity(uint256,uint128,uint256,uint256)"));
        assert_eq!(TRANSFER, keccak256("Transfer(address,address,uint256)"));
    }
}
