//! The health floor: a plan that touches a lending pool may not leave the wallet's account there
//! under `[safety] min_health_factor`, whichever plugin planned it. The health factor is the
//! pool's own (`getUserAccountData`), read on the simulation's state before and after the calls,
//! so a borrow, a withdrawal of collateral and a collateral switch are judged alike. A plan that
//! raises a low health factor (a repay, more collateral) is never refused for being still low.

use super::hooks::{Decision, Findings, Proposal, SafetyHook};
use alloy::primitives::{Address, U256};
use alloy::sol_types::SolCall;
use bardo_core::error::ErrorCode;
use bardo_evm::simulate::{Probe, Probed};
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
}

impl HealthFloor {
    /// A floor of `min` (such as 1.5) over `pools`.
    pub fn new(pools: BTreeMap<u64, BTreeSet<Address>>, min: f64) -> Self {
        Self { pools, min: wad(min) }
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
        pools.map(|pool| Probe { to: *pool, data: data.clone().into() }).collect()
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
            let decode = |raw: &Option<alloy::primitives::Bytes>| {
                raw.as_ref().and_then(|raw| getUserAccountDataCall::abi_decode_returns(raw).ok())
            };
            let Some(now) = decode(after) else {
                return Decision::Reject {
                    code: ErrorCode::Denied,
                    reason: format!(
                        "the plan touches lending pool {} and the wallet's health factor there cannot be read after it; it is refused",
                        probe.to
                    ),
                };
            };
            let was = decode(before).map(|b| b.healthFactor);
            if breaks(self.min, was, now.healthFactor, now.totalDebtBase) {
                return Decision::Reject {
                    code: ErrorCode::Denied,
                    reason: format!(
                        "the plan would leave the wallet's health factor at lending pool {} at {} (from {}), under the floor of {} ([safety] min_health_factor); repay debt or add collateral first, or borrow less",
                        probe.to,
                        text(now.healthFactor),
                        was.map_or_else(|| "unknown".into(), text),
                        text(self.min)
                    ),
                };
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
