//! `approval-exposure`: what the approvals a plan leaves behind are worth, judged from its
//! simulation whatever the action is called. Each allowance the plan raises — an ERC-20's, a
//! Permit2 allowance — lets its spender move, later and without the write path, up to the lesser
//! of its amount and what the wallet holds (what it held before and what the plan gave it). That
//! exposure, at trusted prices, counts as spend (the spending limiter, the confirmation policy)
//! and makes the permit High risk above `[safety] approval_high_risk_usd`. An allowance left
//! unlimited or larger than what the wallet holds is refused, whoever the spender: an approval
//! the same plan spends (Permit2 and routers pulling exactly what they swap) leaves nothing
//! behind, and an approval tool approves what it means to be spent.

use super::approval_guard::UNLIMITED;
use super::{Decision, Findings, Proposal, SafetyHook, reject};
use crate::valuation::{MicroUsd, Valuer, usd};
use alloy::primitives::{Address, I256, U256};
use bardo_core::error::ErrorCode;
use bardo_evm::changes::Change;
use std::collections::BTreeMap;

/// Default `[safety] approval_high_risk_usd`.
pub const DEFAULT_HIGH_RISK_USD: u64 = 1_000;

/// The hook (after the simulator, before the spending limiter, which counts what it finds).
#[derive(Debug, Clone)]
pub struct ApprovalExposure {
    /// Trusted prices and the wallet's holdings.
    pub valuer: Valuer,
    /// Above this many whole USD of exposure a permit is High risk.
    pub high_risk_usd: u64,
}

/// What the allowances a plan leaves could move.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Exposure {
    /// Per token, base units: its allowances left (summed over spenders), at most what the
    /// wallet holds.
    pub units: BTreeMap<Address, U256>,
    /// All of it at trusted prices, micro-USD.
    pub usd: MicroUsd,
    /// Over the High-risk threshold.
    pub high_risk: bool,
}

/// The allowances a change set leaves: (token, spender, amount), Permit2's included.
fn allowances(changes: &[Change]) -> impl Iterator<Item = (Address, Address, U256)> + '_ {
    changes.iter().filter_map(|c| match c {
        Change::Allowance { token, spender, after, .. } => Some((*token, *spender, *after)),
        Change::Permit2Allowance { token, spender, amount, .. } => Some((*token, *spender, *amount)),
        _ => None,
    })
}

impl ApprovalExposure {
    /// The exposure of `changes` for the wallet `sender` on `chain`, or why the plan is refused.
    fn exposure(&self, chain: u64, sender: Address, changes: &[Change]) -> Result<Exposure, String> {
        let mut held: BTreeMap<Address, U256> = BTreeMap::new();
        let mut units: BTreeMap<Address, U256> = BTreeMap::new();
        for (token, spender, amount) in allowances(changes) {
            if amount.is_zero() {
                continue;
            }
            if amount >= UNLIMITED {
                return Err(format!(
                    "the plan leaves {spender} an unlimited allowance of {token} ({amount} base units); approve only what will be spent"
                ));
            }
            let holding = match held.get(&token) {
                Some(h) => *h,
                None => {
                    // What the wallet holds now, plus what the plan gives it.
                    let gained = changes.iter().find_map(|c| match c {
                        Change::Balance { asset: Some(t), delta } if *t == token && delta.is_positive() => {
                            Some(delta.unsigned_abs())
                        }
                        _ => None,
                    });
                    let h =
                        self.valuer.balance(chain, token, sender)?.saturating_add(gained.unwrap_or_default());
                    held.insert(token, h);
                    h
                }
            };
            if amount > holding {
                let worth =
                    self.valuer.usd(chain, token, amount).map(usd).unwrap_or_else(|_| "unvalued".into());
                return Err(format!(
                    "the plan leaves {spender} an allowance of {amount} base units of {token} ({worth}), more than the wallet holds ({holding}): an approval may cover at most what the wallet has; approve what the plan or the next one spends"
                ));
            }
            let e = units.entry(token).or_default();
            *e = e.saturating_add(amount).min(holding);
        }
        let mut total: MicroUsd = 0;
        for (token, amount) in &units {
            let value = self
                .valuer
                .signed_usd(chain, *token, I256::try_from(*amount).unwrap_or(I256::MAX))
                .map_err(|e| format!("cannot value the allowance it leaves: {e}"))?;
            total = total.saturating_add(value.unsigned_abs());
        }
        let high_risk = total > MicroUsd::from(self.high_risk_usd) * 1_000_000;
        Ok(Exposure { units, usd: total, high_risk })
    }
}

impl SafetyHook for ApprovalExposure {
    fn name(&self) -> &'static str {
        "approval-exposure"
    }

    fn check(&self, p: &Proposal<'_>, found: &mut Findings) -> Decision {
        let sim = match found.simulated() {
            Ok(sim) => sim,
            Err(refused) => return refused,
        };
        match self.exposure(p.chain_id, p.sender, &sim.changes.changes) {
            Ok(exposure) => {
                found.exposure = Some(exposure);
                Decision::Allow
            }
            Err(reason) => reject(ErrorCode::Denied, reason),
        }
    }

    fn on_resimulation(&self) -> bool {
        true
    }
}
