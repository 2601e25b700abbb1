//! `price-guard`: trades and deposits at the reference price. Every Uniswap pool a plan swaps
//! with must stand, before the plan, within `[safety] max_price_deviation_bps` of what the
//! operator's trusted prices say (see [`crate::pools`]); every deposit must be made at such a
//! price — where the pool stands when the deposit runs, so a deposit after the plan's own swap
//! pushed the pool is refused here, at that price. Whichever plugin planned it: a pool someone
//! initialised at ten times the market, or a token pooled at a price nobody trusts, is refused
//! before any value is judged. The pools are those of the plan's authenticated events only.

use super::{Decision, Findings, Proposal, SafetyHook};
use crate::evidence::Evidence;
use crate::pools::{self, Reference};
use crate::valuation::{Valuer, price_from_sqrt, price_text};
use alloy::primitives::{U256, U512};
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
        let touches = Evidence::of(&self.valuer, p.chain_id, sim)
            .and_then(|ev| pools::touches(&self.valuer, p.chain_id, &ev));
        let touches = match touches {
            Ok(touches) => touches,
            Err(e) => return reject(format!("cannot read the pools the plan trades with: {e}")),
        };
        for touch in touches {
            let pool = touch.pool;
            let moved = touch.sqrt_price_x96 != touch.before.sqrt_price_x96;
            // A trade is judged where the pool stood before the plan (a route through one pool
            // twice starts its second leg where the first left it); a deposit where it stands.
            if moved && !touch.deposit {
                continue;
            }
            let state = touch.before;
            let reference = match Reference::of(&self.valuer, p.chain_id, &state) {
                Ok(reference) => reference,
                Err(e) => {
                    return reject(format!(
                        "{pool} pairs {} with {}, and the host has no trusted price for it: {e}",
                        state.token0, state.token1
                    ));
                }
            };
            let bps = reference.deviation_bps(touch.sqrt_price_x96);
            if bps <= u64::from(self.max_bps) {
                continue;
            }
            let ((p0, d0), (p1, d1)) = (reference.token0, reference.token1);
            let at = |sqrt: U256| {
                price_from_sqrt(U512::from(sqrt), true, d0, d1, p1)
                    .map_or_else(|| "beyond range".into(), price_text)
            };
            return reject(if moved {
                format!(
                    "the plan deposits into {pool} at {} of {}, a price its own swaps pushed it to from {}, where trusted sources say {} ({bps} bps away, over [safety] max_price_deviation_bps {}); a deposit at a price the plan itself moved is refused: deposit without the swap, or at the reference price",
                    at(touch.sqrt_price_x96),
                    state.token0,
                    at(state.sqrt_price_x96),
                    price_text(p0),
                    self.max_bps
                )
            } else {
                format!(
                    "{pool} prices {} at {} where trusted sources say {} ({bps} bps away, over [safety] max_price_deviation_bps {}); trading with or depositing into a pool off the reference price is refused",
                    state.token0,
                    at(touch.sqrt_price_x96),
                    price_text(p0),
                    self.max_bps
                )
            });
        }
        Decision::Allow
    }
}
