//! The safety hooks a write plan passes before it becomes a permit, one file each, declared
//! below in the order of the chain: before the simulation the policy, the allowlist's scopes,
//! the rate and the approvals' calldata; then the simulation, the plan's claims against it, and
//! what the host derives from it — approvals at their worth, spend, value left behind, pool
//! prices, the bounds the chain will enforce, the SDKs' second opinions, value, health. The chain
//! itself is built in one place, [`chain::Policy::hooks`]. Every hook that reads a log takes it
//! through [`crate::evidence`]: a log counts only from the contract that must have emitted it.

use crate::declared::Declared;
use alloy::primitives::Address;
use bardo_core::error::ErrorCode;
use bardo_core::tool::{Phase, ToolDef, WritePlan};
use bardo_evm::simulate::{Probe, Simulation};

pub mod allowlist_guard;
pub mod approval_exposure;
pub mod approval_guard;
pub mod bridge_guard;
pub(crate) mod chain;
pub mod hallucination_detector;
pub mod health_floor;
pub mod morpho_cross_check;
pub mod on_chain_bounds;
pub mod policy_cage;
pub mod price_guard;
pub mod rate_limiter;
pub mod reputation_guard;
pub mod revm_simulator;
pub mod spending_limiter;
pub mod stranded_value;
#[cfg(test)]
mod test_support;
pub mod uniswap_cross_check;
pub mod value_guard;

pub use allowlist_guard::AllowlistGuard;
pub use approval_exposure::ApprovalExposure;
pub use approval_guard::ApprovalGuard;
pub use hallucination_detector::HallucinationDetector;
pub use health_floor::HealthFloor;
pub use morpho_cross_check::MorphoCrossCheck;
pub use on_chain_bounds::OnChainBounds;
pub use policy_cage::{MaxPosition, PolicyCage};
pub use price_guard::PriceGuard;
pub use rate_limiter::RateLimiter;
pub use reputation_guard::{ReputationGuard, ReputationLimits};
pub use revm_simulator::{RevmSimulator, simulation_hash};
pub use spending_limiter::{SpendingLimiter, SpendingLimits};
pub use stranded_value::StrandedValue;
pub use uniswap_cross_check::UniswapCrossCheck;
pub use value_guard::ValueGuard;

/// A plan that declares nothing.
pub(crate) static NOTHING_DECLARED: std::sync::LazyLock<Declared> =
    std::sync::LazyLock::new(Declared::default);

/// What a hook looks at.
pub struct Proposal<'a> {
    /// The id the permit will have if every hook allows it.
    pub permit_id: &'a str,
    /// The action kind asked for (`swap`, `supply`, ...).
    pub kind: &'a str,
    /// The write tool that planned it.
    pub tool: &'a ToolDef,
    /// The chain it runs on.
    pub chain_id: u64,
    /// The wallet that would sign it.
    pub sender: Address,
    /// The plan: calls and expected outcome.
    pub plan: &'a WritePlan,
    /// Its expected outcome's declaration, parsed once for every hook (none: it declares no
    /// `balance_changes`; an error names the malformed entry).
    pub declared: &'a Result<Option<Declared>, String>,
    /// The agent's phase now.
    pub phase: Phase,
    /// Planned at the operator's own command (`bardo identity set-uri`), not through a door an
    /// agent reaches: only such a plan may change an identity (see [`crate::scope::operator_only`]).
    pub operator: bool,
}

/// A hook's verdict.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// The plan may go on to the next hook.
    Allow,
    /// The plan is refused.
    Reject {
        /// The error code the caller sees (`denied`, `limit-exceeded`, ...).
        code: ErrorCode,
        /// Why, naming what to change.
        reason: String,
    },
}

pub(crate) fn reject(code: ErrorCode, reason: impl Into<String>) -> Decision {
    Decision::Reject { code, reason: reason.into() }
}

/// What hooks learn along the chain (the simulation, for the permit's hash).
#[derive(Debug, Default)]
pub struct Findings {
    /// The simulation of the plan, once the simulator has run.
    pub simulation: Option<Simulation>,
    /// What the hooks after the simulation asked it to read before and after the calls.
    pub probes: Vec<Probe>,
    /// What the allowances the plan leaves could move (the approval-exposure hook's finding).
    pub exposure: Option<approval_exposure::Exposure>,
    /// The least the chain lets the plan get, the most it lets it pay (the on-chain-bounds
    /// hook's finding): the permit's worst case.
    pub worst_case: Vec<on_chain_bounds::WorstCase>,
    /// Why the permit must wait for a person whatever its spend (the reputation guard's
    /// finding: the plan speaks for the operator).
    pub hold: Option<String>,
    /// The bridge deposits the bridge guard allowed: what leaves, what arrives where.
    pub bridged: Vec<bridge_guard::Bridged>,
}

impl Findings {
    /// The plan's simulation, for a hook after the simulator; a refusal (`internal`) when the
    /// chain put the hook before it.
    pub fn simulated(&self) -> Result<&Simulation, Decision> {
        self.simulation.as_ref().ok_or_else(|| {
            reject(ErrorCode::Internal, "runs after the simulator; the plan was not simulated")
        })
    }
}

/// One check of the chain.
pub trait SafetyHook: Send + Sync {
    /// Its name in decisions and the audit log.
    fn name(&self) -> &'static str;
    /// Allow, or reject with a code and a reason that says what to do.
    fn check(&self, p: &Proposal<'_>, found: &mut Findings) -> Decision;
    /// The permit a check allowed was executed (`true`) or will never be (`false`: rejected
    /// later in the chain, cancelled, expired, refused at commit). Hooks that reserve release.
    fn settle(&self, permit_id: &str, executed: bool) {
        let _ = (permit_id, executed);
    }
    /// A permit counted as executed at commit was given back unsent (its commit stopped before
    /// its first transaction was recorded) and is open again: what was booked is held again as
    /// it was before the commit, so a retry counts it once and an expiry releases it.
    fn reopen(&self, permit_id: &str) {
        let _ = permit_id;
    }
    /// Whether commit runs this check again before it re-simulates: true for checks that are
    /// pure functions of the plan and the configuration (phase, allowlist, scope, approvals),
    /// so a permit written into the shared file by someone else still meets today's policy.
    fn at_commit(&self) -> bool {
        false
    }
    /// Whether commit runs this check again on its re-simulation (a check after the simulator
    /// that only reads it, such as the health floor: prices can move while the logs do not).
    fn on_resimulation(&self) -> bool {
        false
    }
    /// Views the simulator should answer before and after the calls for this check.
    fn probes(&self, p: &Proposal<'_>) -> Vec<Probe> {
        let _ = p;
        Vec::new()
    }
}
