//! The health floor: a plan that touches a lending pool may not leave the wallet's account there
//! under `[safety] min_health_factor`, whichever plugin planned it. At an Aave pool the health
//! factor is the pool's own (`getUserAccountData`); in a trusted Morpho Blue market it is the
//! collateral's value at the market's oracle and LLTV over the debt, computed from Morpho's
//! `position` and `market` and the oracle's `price` with Morpho's own math. Both are read on the
//! simulation's state before and after the calls, so a borrow, a withdrawal of collateral and a
//! collateral switch are judged alike. A plan that raises a low health factor (a repay, more
//! collateral) is never refused for being still low.

use super::{Decision, Findings, Proposal, SafetyHook};
use crate::morpho::abi::{marketCall, positionCall, priceCall};
use crate::morpho::{MorphoMarket, TrustedMarkets};
use alloy::primitives::{Address, B256, Bytes, U256};
use alloy::sol_types::SolCall;
use bardo_core::error::ErrorCode;
use bardo_evm::simulate::{Probe, Probed};
use bardo_morpho_math as morpho_math;
use std::collections::{BTreeMap, BTreeSet};

alloy::sol! {
    function getUserAccountData(address user) external view returns (uint256 totalCollateralBase,
        uint256 totalDebtBase, uint256 availableBorrowsBase, uint256 currentLiquidationThreshold,
        uint256 ltv, uint256 healthFactor);
}

/// Default `[safety] min_health_factor`.
pub const DEFAULT_MIN_HEALTH_FACTOR: f64 = 1.5;

/// The health-floor hook (after the simulator; again on the commit's re-simulation).
#[derive(Debug, Clone)]
pub struct HealthFloor {
    /// Aave V3 pools per chain (the allowlist's `aave-v3-pool`s).
    pub pools: BTreeMap<u64, BTreeSet<Address>>,
    /// The lowest health factor a plan may leave, 18 decimals as the pool reports it.
    pub min: U256,
    /// Morpho Blue singletons per chain (the allowlist's `morpho-blue`s).
    pub morphos: BTreeMap<u64, BTreeSet<Address>>,
    /// The trusted Morpho markets, whose positions are watched in every singleton a plan calls.
    pub markets: TrustedMarkets,
}

impl HealthFloor {
    /// A floor of `min` (such as 1.5) over `pools`.
    pub fn new(pools: BTreeMap<u64, BTreeSet<Address>>, min: f64) -> Self {
        Self { pools, min: wad(min), morphos: BTreeMap::new(), markets: BTreeMap::new() }
    }

    /// This floor, over the wallet's positions in `markets` at the Morpho singletons `morphos`.
    pub fn with_morpho(self, morphos: BTreeMap<u64, BTreeSet<Address>>, markets: TrustedMarkets) -> Self {
        Self { morphos, markets, ..self }
    }

    /// The Morpho reads for each trusted market in each singleton the plan calls (none when it
    /// calls none: only a call to Morpho changes a position there).
    fn morpho_reads<'a>(&'a self, p: &Proposal<'_>) -> Vec<MorphoReads<'a>> {
        let Some(morphos) = self.morphos.get(&p.chain_id) else { return Vec::new() };
        let called: BTreeSet<Address> =
            p.plan.calls.iter().map(|c| c.to).filter(|to| morphos.contains(to)).collect();
        let markets = self.markets.get(&p.chain_id).into_iter().flatten();
        let mut reads = Vec::new();
        for (id, market) in markets {
            for morpho in &called {
                let probe = |to, data: Vec<u8>| Probe { to, data: Bytes::from(data) };
                reads.push(MorphoReads {
                    morpho: *morpho,
                    id: *id,
                    market,
                    position: probe(*morpho, positionCall { id: *id, user: p.sender }.abi_encode()),
                    totals: probe(*morpho, marketCall { id: *id }.abi_encode()),
                    price: probe(market.oracle, priceCall {}.abi_encode()),
                });
            }
        }
        reads
    }

    /// The Aave pool's verdict on one probe's answers.
    fn aave(&self, pool: Address, before: &Option<Bytes>, after: &Option<Bytes>) -> Decision {
        let decode = |raw: &Option<Bytes>| {
            raw.as_ref().and_then(|raw| getUserAccountDataCall::abi_decode_returns(raw).ok())
        };
        let Some(now) = decode(after) else {
            return unreadable(&format!("lending pool {pool}"));
        };
        let was = decode(before).map(|b| b.healthFactor);
        self.judge(&format!("lending pool {pool}"), was, now.healthFactor, now.totalDebtBase)
    }

    /// The verdict on one Morpho market from its probes' answers.
    fn morpho(&self, r: &MorphoReads<'_>, answers: &[(Probe, Probed)]) -> Decision {
        let answer = |probe: &Probe| match answers.iter().find(|(asked, _)| asked == probe) {
            Some((_, Probed::Answered { before, after })) => Some((before.clone(), after.clone())),
            _ => None,
        };
        let place = format!("Morpho market {} (at {})", r.id, r.morpho);
        // An oracle the run never read: Morpho checked no health (a borrow or a withdrawal of
        // collateral with debt reads it), so the plan took none of the position's margin.
        let (Some(position), Some(totals), Some(price)) =
            (answer(&r.position), answer(&r.totals), answer(&r.price))
        else {
            return Decision::Allow;
        };
        // The health on the state before (`after` false) or after the calls, and the debt.
        let health = |after: bool| {
            let state = |(before, later): &(Option<Bytes>, Option<Bytes>)| {
                if after { later.clone() } else { before.clone() }
            };
            let position = positionCall::abi_decode_returns(&state(&position)?).ok()?.position();
            let totals = marketCall::abi_decode_returns(&state(&totals)?).ok()?.totals();
            let price = priceCall::abi_decode_returns(&state(&price)?).ok()?;
            let hf = morpho_math::health_factor(&position, &totals, price, r.market.lltv);
            Some((hf, position.borrow_assets(&totals)))
        };
        let Some((now, debt)) = health(true) else {
            return unreadable(&place);
        };
        self.judge(&place, health(false).map(|(hf, _)| hf), now, debt)
    }

    /// Allow unless a plan moving the health factor at `place` from `was` to `now` (with `debt`
    /// after it) breaks the floor.
    fn judge(&self, place: &str, was: Option<U256>, now: U256, debt: U256) -> Decision {
        if !breaks(self.min, was, now, debt) {
            return Decision::Allow;
        }
        Decision::Reject {
            code: ErrorCode::Denied,
            reason: format!(
                "the plan would leave the wallet's health factor at {place} at {} (from {}), under the floor of {} ([safety] min_health_factor); repay debt or add collateral first, or borrow less",
                text(now),
                was.map_or_else(|| "unknown".into(), text),
                text(self.min)
            ),
        }
    }
}

/// The reads that give the wallet's health in one Morpho market.
struct MorphoReads<'a> {
    morpho: Address,
    id: B256,
    market: &'a MorphoMarket,
    position: Probe,
    totals: Probe,
    price: Probe,
}

fn unreadable(place: &str) -> Decision {
    Decision::Reject {
        code: ErrorCode::Denied,
        reason: format!(
            "the plan touches {place} and the wallet's health factor there cannot be read after it; it is refused"
        ),
    }
}

/// `x` with 18 decimals (to the thousandth, which is all a floor needs).
fn wad(x: f64) -> U256 {
    U256::from((x.max(0.0) * 1_000.0).round() as u64) * U256::from(10u64).pow(U256::from(15u64))
}

/// `1.234` from an 18-decimal health factor; `∞` for the pool's "no debt".
fn text(hf: U256) -> String {
    if hf >= U256::from(u128::MAX) {
        return "∞".into();
    }
    let milli = (hf / U256::from(10u64).pow(U256::from(15u64))).saturating_to::<u128>();
    format!("{}.{:03}", milli / 1_000, milli % 1_000)
}

/// Whether a plan moving the health factor from `before` (none: unreadable, or no account) to
/// `after`, with `debt` after it, breaks a floor of `min`.
pub(crate) fn breaks(min: U256, before: Option<U256>, after: U256, debt: U256) -> bool {
    !debt.is_zero() && after < min && before.is_none_or(|b| after < b)
}

impl SafetyHook for HealthFloor {
    fn name(&self) -> &'static str {
        "health-floor"
    }

    fn probes(&self, p: &Proposal<'_>) -> Vec<Probe> {
        let data = getUserAccountDataCall { user: p.sender }.abi_encode();
        let pools = self.pools.get(&p.chain_id).into_iter().flatten();
        let mut probes: Vec<Probe> =
            pools.map(|pool| Probe { to: *pool, data: data.clone().into() }).collect();
        for r in self.morpho_reads(p) {
            probes.extend([r.position, r.totals, r.price]);
        }
        probes
    }

    fn check(&self, p: &Proposal<'_>, found: &mut Findings) -> Decision {
        let sim = match found.simulated() {
            Ok(sim) => sim,
            Err(refused) => return refused,
        };
        let pools = self.pools.get(&p.chain_id);
        for (probe, probed) in &sim.probes {
            if !pools.is_some_and(|pools| pools.contains(&probe.to)) {
                continue;
            }
            let Probed::Answered { before, after } = probed else { continue };
            if let refused @ Decision::Reject { .. } = self.aave(probe.to, before, after) {
                return refused;
            }
        }
        for r in self.morpho_reads(p) {
            if let refused @ Decision::Reject { .. } = self.morpho(&r, &sim.probes) {
                return refused;
            }
        }
        Decision::Allow
    }

    fn on_resimulation(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plan_may_not_lower_health_under_the_floor_but_may_raise_it() {
        let min = wad(1.5);
        let debt = U256::from(1);
        assert_eq!(text(min), "1.500");
        assert_eq!(text(U256::MAX), "∞");
        assert!(breaks(min, Some(wad(2.0)), wad(1.2), debt), "a borrow down to 1.2");
        assert!(breaks(min, None, wad(1.49), debt), "unknown before: judged by after");
        assert!(!breaks(min, Some(wad(2.0)), wad(1.5), debt), "at the floor");
        assert!(!breaks(min, Some(wad(1.1)), wad(1.3), debt), "a repay that raises a low factor");
        assert!(!breaks(min, Some(wad(1.3)), wad(1.3), debt), "unchanged");
        assert!(!breaks(min, Some(wad(2.0)), U256::ZERO, U256::ZERO), "no debt: no floor");
    }
}
