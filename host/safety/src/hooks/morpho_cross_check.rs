//! The Morpho cross-check: after simulation, the plan's Morpho Blue calls in each market the
//! operator trusts are recomputed by Morpho's own SDK (`@morpho-org/blue-sdk`, in the sidecar)
//! from the market as Morpho stored it at the fork block, its IRM's rate and the seconds to the
//! simulated block — interest first, then each call rounded as Morpho rounds it — and the
//! wallet's simulated position change there (supply shares, borrow shares, collateral) is held to
//! the SDK's. A second opinion on what the plan does to the position, independent of both the
//! plugin and the simulator; a disagreement is refused with both figures.

use super::uniswap_cross_check::{differs, read_at, reject, sidecar_refusal};
use super::{Decision, Findings, Proposal, SafetyHook};
use crate::morpho::abi::{borrowRateViewCall, marketCall};
use crate::morpho::{MorphoMarket, TrustedMarkets, decode};
use alloy::primitives::{Address, B256, I256, U256};
use alloy::sol_types::SolCall;
use bardo_core::error::ErrorCode;
use bardo_evm::changes::{Change, PositionPart};
use bardo_runtime::Services;
use bardo_sidecar::{MorphoAction, MorphoDelta, MorphoMarketState, Sidecar};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

/// The hook.
pub struct MorphoCrossCheck {
    /// The chains it reads.
    pub services: Arc<Services>,
    /// Morpho's SDK.
    pub sidecar: Arc<Sidecar>,
    /// Morpho Blue singletons per chain (the allowlist's `morpho-blue`s).
    pub morphos: BTreeMap<u64, BTreeSet<Address>>,
    /// The trusted markets: only their calls pass scope, so only they are recomputed.
    pub markets: TrustedMarkets,
}

/// A call's action for the SDK and the id of its market; none for another function.
fn action(data: &[u8]) -> Option<(B256, MorphoAction)> {
    let call = decode(data).ok()??;
    Some((call.id(), MorphoAction { kind: call.kind, assets: call.assets, shares: call.shares }))
}

/// The wallet's simulated position change in `market` at `venue`.
fn simulated(changes: &[Change], venue: Address, market: B256) -> MorphoDelta {
    let mut delta = MorphoDelta::default();
    for c in changes {
        if let Change::Position { venue: v, market: m, part, delta: d } = c
            && *v == venue
            && *m == market
        {
            match part {
                PositionPart::SupplyShares => delta.supply_shares = *d,
                PositionPart::BorrowShares => delta.borrow_shares = *d,
                PositionPart::Collateral => delta.collateral = *d,
            }
        }
    }
    delta
}

/// The parts where the simulation and the SDK disagree beyond rounding: (part, simulated, SDK).
pub(crate) fn disagreements(sim: &MorphoDelta, sdk: &MorphoDelta) -> Vec<(&'static str, I256, I256)> {
    [
        ("supply shares", sim.supply_shares, sdk.supply_shares),
        ("borrow shares", sim.borrow_shares, sdk.borrow_shares),
        ("collateral", sim.collateral, sdk.collateral),
    ]
    .into_iter()
    .filter(|(_, a, b)| a.is_negative() != b.is_negative() || differs(a.unsigned_abs(), b.unsigned_abs()))
    .collect()
}

impl MorphoCrossCheck {
    /// The market as Morpho stored it at `block`, its IRM's rate for that state and the seconds
    /// to `timestamp`.
    fn state(
        &self,
        chain: u64,
        block: u64,
        morpho: Address,
        id: B256,
        m: &MorphoMarket,
        timestamp: u64,
    ) -> Result<MorphoMarketState, String> {
        let read = |to, data| read_at(&self.services, chain, block, to, data);
        let raw = marketCall::abi_decode_returns(&read(morpho, marketCall { id }.abi_encode())?)
            .map_err(|e| format!("Morpho's market({id}): {e}"))?;
        let rate = if m.irm.is_zero() {
            U256::ZERO
        } else {
            let call = borrowRateViewCall { marketParams: m.params(), market: raw.clone() };
            borrowRateViewCall::abi_decode_returns(&read(m.irm, call.abi_encode())?)
                .map_err(|e| format!("the IRM's borrowRateView: {e}"))?
        };
        let t = raw.totals();
        Ok(MorphoMarketState {
            total_supply_assets: t.supply_assets,
            total_supply_shares: t.supply_shares,
            total_borrow_assets: t.borrow_assets,
            total_borrow_shares: t.borrow_shares,
            fee: t.fee,
            rate,
            elapsed: timestamp.saturating_sub(t.last_update),
        })
    }
}

impl SafetyHook for MorphoCrossCheck {
    fn name(&self) -> &'static str {
        "morpho-cross-check"
    }

    fn check(&self, p: &Proposal<'_>, found: &mut Findings) -> Decision {
        let Some(morphos) = self.morphos.get(&p.chain_id) else { return Decision::Allow };
        if !p.plan.calls.iter().any(|c| morphos.contains(&c.to)) {
            return Decision::Allow;
        }
        let sim = match found.simulated() {
            Ok(sim) => sim,
            Err(refused) => return refused,
        };
        // Each market's calls, in order.
        let mut runs: BTreeMap<(Address, B256), Vec<MorphoAction>> = BTreeMap::new();
        for call in p.plan.calls.iter().filter(|c| morphos.contains(&c.to)) {
            if let Some((id, action)) = action(&call.data) {
                runs.entry((call.to, id)).or_default().push(action);
            }
        }
        let trusted = self.markets.get(&p.chain_id);
        for ((morpho, id), actions) in runs {
            let Some(market) = trusted.and_then(|m| m.get(&id)) else { continue };
            let state = match self.state(p.chain_id, sim.block_number, morpho, id, market, sim.timestamp) {
                Ok(state) => state,
                Err(e) => {
                    return reject(ErrorCode::Rpc, format!("cannot read the Morpho market to check it: {e}"));
                }
            };
            let sdk = match self.sidecar.morpho_position(&state, &actions) {
                Ok(sdk) => sdk,
                Err(e) => return sidecar_refusal(e),
            };
            let simulated = simulated(&sim.changes.changes, morpho, id);
            let off = disagreements(&simulated, &sdk);
            if !off.is_empty() {
                let figures: Vec<String> = off
                    .iter()
                    .map(|(part, sim, sdk)| format!("{part} {sim:+} simulated, {sdk:+} by the SDK"))
                    .collect();
                return reject(
                    ErrorCode::Denied,
                    format!(
                        "the simulated change of the wallet's position in Morpho market {id} is not what Morpho's SDK computes from the market at block {}: {}",
                        sim.block_number,
                        figures.join("; ")
                    ),
                );
            }
        }
        Decision::Allow
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn i(v: i64) -> I256 {
        I256::try_from(v).expect("i256")
    }

    #[test]
    fn parts_agree_to_the_rounding_and_no_further() {
        let sdk = MorphoDelta { supply_shares: i(1_000_000_000), borrow_shares: i(-5), collateral: i(7) };
        assert!(disagreements(&sdk, &sdk).is_empty());
        let rounding = MorphoDelta { supply_shares: i(1_000_000_001), ..sdk };
        assert!(disagreements(&rounding, &sdk).is_empty(), "a base unit of rounding");
        let more = MorphoDelta { supply_shares: i(1_010_000_000), ..sdk };
        assert_eq!(disagreements(&more, &sdk), [("supply shares", i(1_010_000_000), i(1_000_000_000))]);
        let flipped = MorphoDelta { borrow_shares: i(5), ..sdk };
        assert_eq!(disagreements(&flipped, &sdk).len(), 1, "a repay is not a borrow");
        let none = MorphoDelta::default();
        assert_eq!(disagreements(&none, &sdk).len(), 3, "nothing simulated: every part is off");
    }
}
