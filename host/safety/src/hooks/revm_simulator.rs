//! `revm-simulator`: the plan run on a fork of the latest block, as the wallet; and the
//! simulation hash a permit carries.

use super::{Decision, Findings, Proposal, SafetyHook, reject};
use alloy::primitives::{Address, B256};
use bardo_core::error::ErrorCode;
use bardo_core::tool::WritePlan;
use bardo_evm::simulate::{Probe, SimCall, Simulation};
use bardo_runtime::Services;
use sha2::{Digest, Sha256};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The plan run on a fork of the latest block, as the wallet: any revert rejects it.
pub struct RevmSimulator {
    /// Chains and the fork simulator.
    pub services: Arc<Services>,
    /// The longest one simulation may take.
    pub budget: Duration,
}

impl RevmSimulator {
    /// Simulate `plan` from `sender`, at the next block's timestamp or at `at`, answering
    /// `probes` before and after it.
    pub fn run(
        &self,
        chain_id: u64,
        sender: Address,
        plan: &WritePlan,
        probes: &[Probe],
        at: Option<u64>,
    ) -> Result<Simulation, bardo_evm::chain::ChainError> {
        let calls: Vec<SimCall> = plan.calls.iter().map(SimCall::from).collect();
        // What will be sent: the calls, or through a Safe one transaction of them all.
        self.services.evm.simulate_sent(chain_id, sender, &calls, probes, at, Instant::now() + self.budget)
    }
}

impl SafetyHook for RevmSimulator {
    fn name(&self) -> &'static str {
        "revm-simulator"
    }

    fn check(&self, p: &Proposal<'_>, found: &mut Findings) -> Decision {
        let sim = match self.run(p.chain_id, p.sender, p.plan, &found.probes, None) {
            Ok(sim) => sim,
            Err(e) => return reject(ErrorCode::Rpc, format!("cannot simulate: {e}")),
        };
        if let Some((i, failed)) = sim.outcomes.iter().enumerate().find(|(_, o)| !o.success) {
            let reason = alloy::sol_types::decode_revert_reason(&failed.output)
                .unwrap_or_else(|| format!("0x{}", hex::encode(&failed.output)));
            if let Some(safe) = self.services.evm.safe_of(p.sender) {
                if let Some(rule) = crate::cage::explain(&failed.output) {
                    return reject(
                        ErrorCode::Denied,
                        format!(
                            "the PolicyCage guarding Safe {} would revert the plan on chain: {rule}",
                            safe.safe
                        ),
                    );
                }
                let why = bardo_evm::safe::explain(&reason).map(|w| format!(" ({w})")).unwrap_or_default();
                return reject(
                    ErrorCode::Reverted,
                    format!(
                        "the Safe transaction of {} calls (Safe {}) reverts in simulation: {reason}{why}",
                        p.plan.calls.len(),
                        safe.safe
                    ),
                );
            }
            return reject(
                ErrorCode::Reverted,
                format!(
                    "call {} of {} ({}) reverts in simulation: {reason}",
                    i + 1,
                    p.plan.calls.len(),
                    p.plan.calls[i].description
                ),
            );
        }
        found.simulation = Some(sim);
        Decision::Allow
    }
}

/// sha256 over the simulated calls and what they did: per call success, output and logs, and the
/// wallet's derived change set. Raw storage diffs are left out on purpose: they include block
/// timestamps (V3 oracle observations), which would change the hash on every block even when
/// the trade itself is unchanged.
pub fn simulation_hash(chain_id: u64, sender: Address, plan: &WritePlan, sim: &Simulation) -> B256 {
    let mut h = Sha256::new();
    h.update(chain_id.to_be_bytes());
    h.update(sender);
    for c in &plan.calls {
        h.update(c.to);
        h.update(&c.data);
        h.update(c.value.to_be_bytes::<32>());
    }
    for o in &sim.outcomes {
        h.update([o.success as u8]);
        h.update(&o.output);
        for log in &o.logs {
            h.update(log.address);
            for t in log.topics() {
                h.update(t);
            }
            h.update(&log.data.data);
        }
    }
    // The derived change set, canonically: sorted, serialized the same way every time.
    h.update(serde_json::to_vec(&sim.changes).unwrap_or_default());
    B256::from_slice(&h.finalize())
}
