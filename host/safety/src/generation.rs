//! One reload's world: the plugins that plan, the services they read through — the same chains,
//! simulator and wallet the write path simulates and signs with — and the hooks those services
//! feed (the valuer's prices, the cross-check's sidecar). A preview and a commit each take one
//! [`Generation`] when they start and keep it to the end, so a reload in between never mixes
//! two: a plan is simulated, signed and verified on the generation that made it.

use crate::hooks::{RevmSimulator, SafetyHook};
use crate::planner::Planner;
use crate::valuation::Valuer;
use bardo_runtime::Services;
use bardo_runtime::plugin::Host;
use std::sync::Arc;
use std::time::Duration;

/// How long the simulator may take for one plan.
const SIMULATION_BUDGET: Duration = Duration::from_secs(5);

/// The hook chain of one generation, in order: the checks before the simulation, the simulator,
/// the hallucination detector (always right after it), then the checks that need the simulation.
pub struct Hooks {
    /// Checks of the plan itself (phase, allowlist, scopes, approvals, rate).
    pub before: Vec<Box<dyn SafetyHook>>,
    /// The fork simulation, on this generation's services.
    pub simulator: RevmSimulator,
    /// Checks of what the simulation showed (spending, cross-check, value).
    pub after: Vec<Box<dyn SafetyHook>>,
    /// Prices outcome records (gas and P&L in USD); without one they say `null`.
    pub valuer: Option<Valuer>,
}

impl Hooks {
    /// `before` and a simulator on `services`; nothing after the simulation yet.
    pub fn new(services: &Arc<Services>, before: Vec<Box<dyn SafetyHook>>) -> Self {
        Self {
            before,
            simulator: RevmSimulator { services: services.clone(), budget: SIMULATION_BUDGET },
            after: Vec::new(),
            valuer: None,
        }
    }

    /// Every hook that may hold something for a permit (a reservation) until it settles.
    pub(crate) fn settling(&self) -> impl Iterator<Item = &dyn SafetyHook> {
        self.before.iter().chain(&self.after).map(|h| h.as_ref())
    }
}

/// Builds the hooks for new services, keeping what must outlive a generation (the spending
/// ledger, the rate limiter's window): set by `setup` from `[safety]`.
pub type HookFactory = Arc<dyn Fn(&Arc<Services>) -> Result<Hooks, String> + Send + Sync>;

/// A planner, its services and their hooks, numbered in the order a write path installed them.
pub struct Generation {
    number: u64,
    planner: Arc<dyn Planner>,
    services: Arc<Services>,
    hooks: Arc<Hooks>,
}

impl Generation {
    pub(crate) fn new(
        number: u64,
        planner: Arc<dyn Planner>,
        services: Arc<Services>,
        hooks: Arc<Hooks>,
    ) -> Self {
        Self { number, planner, services, hooks }
    }

    /// Its number: 1 for the write path's first, one more for each reload.
    pub fn number(&self) -> u64 {
        self.number
    }

    /// The plugins that plan on it.
    pub fn planner(&self) -> &Arc<dyn Planner> {
        &self.planner
    }

    /// The runtime's host, when the planner is one (a real host; a unit test's fake is not):
    /// what the agent's reads run on, so reads and writes see one generation.
    pub fn host(&self) -> Option<Arc<Host>> {
        let any: Arc<dyn std::any::Any + Send + Sync> = self.planner.clone();
        any.downcast::<Host>().ok()
    }

    /// The chains, simulator and wallet it reads, simulates and signs with.
    pub fn services(&self) -> &Arc<Services> {
        &self.services
    }

    /// Its hook chain.
    pub fn hooks(&self) -> &Arc<Hooks> {
        &self.hooks
    }

    pub(crate) fn hooks_mut(&mut self) -> Option<&mut Hooks> {
        Arc::get_mut(&mut self.hooks)
    }
}

impl std::fmt::Debug for Generation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Generation").field("number", &self.number).finish_non_exhaustive()
    }
}
