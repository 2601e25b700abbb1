//! `hallucination-detector`: the plan's claims against the change set derived from its
//! simulation; always right after the simulator.

use super::{Decision, Findings, Proposal, SafetyHook, reject};
use bardo_core::error::ErrorCode;

/// The plugin's claims against the simulation: the wallet's whole change set, derived by the
/// host (balances of every touched contract, the native coin, allowances, operators, NFTs), must
/// be what the plan declares (see [`crate::declared`]) — no undeclared outflow or authority, no
/// invented gain.
pub struct HallucinationDetector;

impl SafetyHook for HallucinationDetector {
    fn name(&self) -> &'static str {
        "hallucination-detector"
    }

    fn check(&self, p: &Proposal<'_>, found: &mut Findings) -> Decision {
        let sim = match found.simulated() {
            Ok(sim) => sim,
            Err(refused) => return refused,
        };
        let declared = match p.declared {
            Ok(Some(declared)) => declared,
            Ok(None) => {
                return reject(
                    ErrorCode::Denied,
                    format!(
                        "`{}` declares no balance_changes in its expected outcome; its effect cannot be checked",
                        p.tool.name
                    ),
                );
            }
            Err(reason) => return reject(ErrorCode::Denied, reason.clone()),
        };
        let off = declared.mismatches(&sim.changes);
        if !off.is_empty() {
            return reject(
                ErrorCode::Denied,
                format!("the plan's claims do not match its simulation: {}", off.join("; ")),
            );
        }
        Decision::Allow
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hooks::test_support::*;
    use alloy::primitives::{I256, U256};
    use bardo_core::tool::Phase;
    use bardo_evm::changes::Change;
    use serde_json::json;

    fn simulated(changes: Vec<Change>) -> Findings {
        let outcome = CallOutcome {
            success: true,
            gas_used: 1,
            output: Bytes::new(),
            logs: Vec::new(),
            native: I256::ZERO,
        };
        let simulation = Simulation {
            block_number: 1,
            timestamp: 1,
            outcomes: vec![outcome],
            changes: ChangeSet { changes },
            native: Vec::new(),
            probes: Vec::new(),
        };
        Findings { simulation: Some(simulation), ..Findings::default() }
    }

    #[test]
    fn the_hallucination_detector_holds_the_plan_to_the_derived_change_set() {
        let i = |v: i64| I256::try_from(v).expect("i256");
        let spend = json!({"balance_changes": [{"token": TOKEN.to_string(), "delta": "-5"}]});
        let d = |expected: serde_json::Value, changes| {
            decide(&HallucinationDetector, "swap", Phase::Thriving, vec![], expected, &mut simulated(changes))
        };
        assert_eq!(
            d(spend.clone(), vec![Change::Balance { asset: Some(TOKEN), delta: i(-5) }]),
            Decision::Allow
        );
        let more = d(spend.clone(), vec![Change::Balance { asset: Some(TOKEN), delta: i(-6) }]);
        assert!(reason(&more).contains("declared -5, moves -6"), "{more:?}");
        let grant =
            Change::Allowance { token: TOKEN, spender: STRANGER, before: U256::ZERO, after: U256::from(1) };
        let hidden = d(spend.clone(), vec![Change::Balance { asset: Some(TOKEN), delta: i(-5) }, grant]);
        assert!(reason(&hidden).contains("undeclared authority"), "{hidden:?}");
        assert!(reason(&d(json!({}), vec![])).contains("declares no balance_changes"));
        let unsimulated =
            decide(&HallucinationDetector, "swap", Phase::Thriving, vec![], spend, &mut Findings::default());
        assert_eq!(code(&unsimulated), Some(ErrorCode::Internal));
    }
}
