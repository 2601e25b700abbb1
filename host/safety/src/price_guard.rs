//! Trades and deposits at the reference price: every Uniswap pool a plan swaps with or adds
//! liquidity to must be priced, before the plan, within `[safety] max_price_deviation_bps` of
//! what the operator's trusted prices say (see [`super::pools`]) — whichever plugin planned it.
//! A pool someone initialised at ten times the market, or a token pooled at a price nobody
//! trusts, is refused here before any value is judged.

use super::hooks::{Decision, Findings, Proposal, SafetyHook};
use super::pools::{self, Reference};
use super::valuation::{Valuer, price_from_sqrt, price_text};
use alloy::primitives::{Log, U512};
use bardo_core::error::ErrorCode;

/// Default `[safety] max_price_deviation_bps`: 2 %.
pub const DEFAULT_MAX_PRICE_DEVIATION_BPS: u32 = 200;

/// The price-guard hook (after the simulator).
#[derive(Debug, Clone)]
pub struct PriceGuard {
    /// Trusted prices.
    pub valuer: Valuer,
    /// The most a pool's price may be from the reference, basis points.
    pub max_bps: u32,
}

fn reject(reason: String) -> Decision {
    Decision::Reject { code: ErrorCode::Denied, reason }
}

impl SafetyHook for PriceGuard {
    fn name(&self) -> &'static str {
        "price-guard"
    }

    fn check(&self, p: &Proposal<'_>, found: &mut Findings) -> Decision {
        let sim = match found.simulated() {
            Ok(sim) => sim,
            Err(refused) => return refused,
        };
        let logs: Vec<&Log> = sim.outcomes.iter().flat_map(|o| &o.logs).collect();
        for pool in pools::touched(&logs) {
            let state = match pools::state(&self.valuer, p.chain_id, pool, &logs) {
                Ok(state) => state,
                Err(e) => return reject(format!("cannot read {pool}, which the plan trades with: {e}")),
            };
            let reference = match Reference::of(&self.valuer, p.chain_id, &state) {
                Ok(reference) => reference,
                Err(e) => {
                    return reject(format!(
                        "{pool} pairs {} with {}, and the host has no trusted price for it: {e}",
                        state.token0, state.token1
                    ));
                }
            };
            let bps = reference.deviation_bps(state.sqrt_price_x96);
            if bps > u64::from(self.max_bps) {
                let ((p0, d0), (p1, d1)) = (reference.token0, reference.token1);
                let implied = price_from_sqrt(U512::from(state.sqrt_price_x96), true, d0, d1, p1)
                    .map_or_else(|| "beyond range".into(), price_text);
                return reject(format!(
                    "{pool} prices {} at {implied} where trusted sources say {} ({bps} bps away, over [safety] max_price_deviation_bps {}); trading with or depositing into a pool off the reference price is refused",
                    state.token0,
                    price_text(p0),
                    self.max_bps
                ));
            }
        }
        Decision::Allow
    }
}
