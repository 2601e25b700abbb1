//! The write path over one generation at a time: preview, commit, cancel, the phase and the
//! halt. Preview, commit, the phase and the broadcast live in submodules of their own; the
//! capability that authorizes a broadcast is minted only in `commit`.

mod broadcast;
pub mod capability;
mod commit;
mod confirmation;
pub use confirmation::Pending;
mod phase;
mod preview;
pub mod sends;
pub use sends::Recovery;
#[cfg(test)]
mod tests;

use crate::audit_log::{self, AuditEvent, AuditLog};
use crate::confirm::ConfirmPolicy;
use crate::generation::{Generation, HookFactory, Hooks};
use crate::hooks::SafetyHook;
use crate::host_key::{self, rand_bytes};
use crate::permit::{ActionPermit, PermitError, Permits};
use crate::planner::Planner;
use crate::valuation;
use bardo_core::error::{ErrorCode, ToolError};
use bardo_core::fabric::{Fabric, GolemEvent};
use bardo_core::sync::{lock, read, write};
use bardo_core::tool::Phase;
use bardo_evm::changes::ChangeSet;
use bardo_runtime::Services;
use bardo_runtime::plugin::Host;
use serde::Serialize;
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, SystemTime};

/// The most calls one write plan may hold.
pub const MAX_PLAN_CALLS: usize = 16;
/// The most call data, in bytes, one write plan may hold.
pub const MAX_PLAN_BYTES: usize = 128 << 10;

/// How long a permit stays valid by default.
pub const DEFAULT_TTL: Duration = Duration::from_secs(60);

/// The clock permits are judged by (injectable, so expiry is testable without waiting).
pub type Clock = Arc<dyn Fn() -> SystemTime + Send + Sync>;

/// What a committed write did: expected by the plugin at preview, actual from the receipts.
#[derive(Debug, Clone, Serialize)]
pub struct WriteResult {
    /// The permit the write executed under.
    pub permit_id: String,
    /// The write tool that planned it.
    pub tool: String,
    /// The tool's schema version, which `expected` and `actual` follow.
    pub schema_version: u32,
    /// The outcome the plugin expected at preview.
    pub expected: serde_json::Value,
    /// The outcome read from the receipts.
    pub actual: serde_json::Value,
    /// Where `actual` is checked against: `receipt` when the host derived the change set from
    /// the receipts and the chain itself, `plugin` when it could not and only the plugin's
    /// reading of the receipts stands.
    pub ground_truth: &'static str,
    /// The transactions sent, in order.
    pub tx_hashes: Vec<String>,
    /// Gas all of them used.
    pub gas_used: u64,
    /// The wallet's change set the host derived from the receipts (none if it could not).
    pub changes: Option<ChangeSet>,
    /// How the executed change set differs from the plan's declaration (empty: it matches).
    pub outcome_mismatch: Vec<String>,
    /// Each bridge deposit it made, followed to its destination (filled, or still pending when
    /// the commit stopped waiting).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub bridge: Vec<crate::hooks::bridge_guard::Fill>,
    /// Records of this execution the audit log could not take in time (its store unreachable
    /// after the transactions were sent): the receipts above stand; empty when all were written.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unrecorded: Vec<String>,
}

/// A plan that passed every check and its fresh re-simulation: what a capability authorizes.
#[derive(Debug)]
pub struct Approved {
    /// The permit being executed.
    pub permit: ActionPermit,
    /// Gas each call used in the commit-time simulation.
    pub gas: Vec<u64>,
}

/// Preview, commit, cancel and halt, over the generation installed last.
pub struct WritePath {
    /// Swapped as a whole on a reload; each preview or commit holds the one it started on.
    current: RwLock<Arc<Generation>>,
    /// Generations a reload replaced, kept while a permit planned on one may still commit
    /// (a permit's TTL), each with when it was replaced.
    retired: Mutex<Vec<(Arc<Generation>, SystemTime)>>,
    /// Builds the next generation's hooks when a reload brings new services.
    hook_factory: Option<HookFactory>,
    /// This write path's id in the permits it issues: a permit planned by another process
    /// names a generation that is not this one's.
    instance: String,
    permits: Permits,
    audit: AuditLog,
    phase: RwLock<Phase>,
    mismatch_phase: Phase,
    ttl: Duration,
    clock: Clock,
    fabric: Option<Arc<Fabric>>,
    /// Executed and blocked writes go to the agent's memory as episodes (write-only).
    episodes: Option<crate::episodes::Episodes>,
    /// Which commits wait for a person (`[safety] confirm`, for this host's profile).
    confirm: ConfirmPolicy,
    /// The channels a person's confirmation counts through (`[safety.confirm] via`).
    via: Vec<crate::confirm::Channel>,
    /// How long a commit waits for a bridge deposit's fill on its destination before it reports
    /// the deposit `pending` (`[safety] bridge_fill_wait_secs`).
    bridge_wait: Duration,
}

fn denied(message: impl Into<String>) -> ToolError {
    ToolError::new(ErrorCode::Denied, message)
}

fn audit_error(e: audit_log::AuditError) -> ToolError {
    match e {
        audit_log::AuditError::Unavailable(_) => ToolError::retryable(ErrorCode::Unavailable, e.to_string()),
        e => ToolError::new(ErrorCode::Internal, e.to_string()),
    }
}

/// A hook's refusal; one for want of the fleet's shared state may pass on retry.
fn refusal(code: ErrorCode, message: String) -> ToolError {
    match code {
        ErrorCode::Unavailable | ErrorCode::Timeout => ToolError::retryable(code, message),
        code => ToolError::new(code, message),
    }
}

fn permit_error(e: PermitError) -> ToolError {
    if let PermitError::Unavailable(message) = e {
        return ToolError::retryable(ErrorCode::Unavailable, message);
    }
    if let PermitError::Unconfirmed { .. } = e {
        return ToolError::retryable(ErrorCode::ConfirmationRequired, e.to_string());
    }
    let code = match e {
        PermitError::Unknown(_) => ErrorCode::NotFound,
        PermitError::Expired(_) => ErrorCode::Expired,
        PermitError::Store(_) => ErrorCode::Internal,
        _ => ErrorCode::Denied,
    };
    ToolError::new(code, e.to_string())
}

impl WritePath {
    /// A write path planning with `planner` (the runtime's host) and `hooks` (in order; the
    /// simulator runs after them), simulating and signing with `services` (the planner's),
    /// logging to `audit`: its first generation. Its permits (and halt) live in memory, sealed
    /// with a key of this process only; share them between processes with
    /// [`Self::with_permit_file`].
    pub fn new(
        planner: Arc<dyn Planner>,
        services: Arc<Services>,
        hooks: Vec<Box<dyn SafetyHook>>,
        audit: AuditLog,
    ) -> Self {
        let hooks = Hooks::new(&services, hooks);
        Self::over(planner, services, hooks, audit)
    }

    /// [`Self::new`] with a whole hook chain (before and after the simulation, the valuer).
    pub fn over(planner: Arc<dyn Planner>, services: Arc<Services>, hooks: Hooks, audit: AuditLog) -> Self {
        let hooks = Arc::new(hooks);
        let mut instance = [0u8; 16];
        rand_bytes(&mut instance);
        Self {
            current: RwLock::new(Arc::new(Generation::new(1, planner, services, hooks))),
            retired: Mutex::default(),
            hook_factory: None,
            // The process first: on one machine, a claim whose process is gone has lapsed.
            instance: format!("{}-{}", std::process::id(), hex::encode(&instance[..8])),
            permits: Permits::in_memory(host_key::HostKey::ephemeral()),
            audit,
            phase: RwLock::new(Phase::Thriving),
            mismatch_phase: Phase::Cautious,
            ttl: DEFAULT_TTL,
            clock: Arc::new(SystemTime::now),
            confirm: ConfirmPolicy::Never,
            via: crate::confirm::Channel::DEFAULT.to_vec(),
            fabric: None,
            episodes: None,
            bridge_wait: crate::hooks::bridge_guard::DEFAULT_FILL_WAIT,
        }
    }

    /// The first generation's hooks, while the write path is being built (before it is shared).
    fn first_hooks(&mut self) -> &mut Hooks {
        let current = self.current.get_mut().unwrap_or_else(std::sync::PoisonError::into_inner);
        Arc::get_mut(current)
            .and_then(Generation::hooks_mut)
            .expect("a write path's hooks are set while it is built, before any preview holds them")
    }

    /// The phase an executed write whose receipts diverge from its declaration moves the host
    /// to (default `cautious`; never raises it).
    pub fn with_mismatch_phase(mut self, phase: Phase) -> Self {
        self.mismatch_phase = phase;
        self
    }

    /// Use `clock` instead of the system clock.
    pub fn with_clock(mut self, clock: Clock) -> Self {
        self.clock = clock;
        self
    }

    /// Hooks that need the simulation's result (spending), run after the simulator.
    pub fn with_after_simulation(mut self, hooks: Vec<Box<dyn SafetyHook>>) -> Self {
        self.first_hooks().after = hooks;
        self
    }

    /// Build each later generation's hooks with `factory` when a reload brings new services
    /// (without one, such a reload is refused: hooks fed by the old services would price and
    /// cross-check against the wrong chains).
    pub fn with_hook_factory(mut self, factory: HookFactory) -> Self {
        self.hook_factory = Some(factory);
        self
    }

    /// The clock permits are judged by.
    pub fn clock(&self) -> Clock {
        self.clock.clone()
    }

    /// The permit TTL.
    pub fn ttl(&self) -> Duration {
        self.ttl
    }

    /// A permit was executed or will never be: its hooks release or book what they held. The
    /// state they hold (a reservation) outlives a generation, so the current one settles it.
    fn settle(&self, permit_id: &str, executed: bool) {
        for hook in self.generation().hooks().settling() {
            hook.settle(permit_id, executed);
        }
    }

    /// Give back permit `id`, taken for a commit that recorded no transaction (so sent none):
    /// open again until it expires, its spend held as a reservation again; past its TTL,
    /// released; under a halt or with the store out of reach, left taken and counted. Whether
    /// it is open again.
    fn give_back(&self, permit_id: &str) -> bool {
        match self.permits.reopen(permit_id, (self.clock)()) {
            Ok(crate::permit::Reopened::Open) => {
                for hook in self.generation().hooks().settling() {
                    hook.reopen(permit_id);
                }
                true
            }
            Ok(crate::permit::Reopened::Expired) => {
                self.settle(permit_id, false);
                false
            }
            // Kept as it is, its spend counted (never released while it could run again): a
            // halt's resume, or a later start, gives it back.
            Ok(crate::permit::Reopened::Kept) => false,
            Err(e) => {
                tracing::warn!("{permit_id}: cannot open it again now ({e}); a later start gives it back");
                false
            }
        }
    }

    /// Keep permits and the emergency halt in `path`, shared with other `bardo` processes;
    /// permits are sealed with `key`, which every process sharing the file must hold
    /// (`[safety] host_key`): a permit that does not verify under it is refused at commit.
    pub fn with_permit_file(mut self, path: &std::path::Path, key: host_key::HostKey) -> Self {
        self.permits = Permits::open(path, key);
        self
    }

    /// Keep permits and the emergency halt in `permits` (the fleet's cluster, say).
    pub fn with_permits(mut self, permits: Permits) -> Self {
        self.permits = permits;
        self
    }

    /// Permits live this long.
    pub fn with_ttl(mut self, ttl: Duration) -> Self {
        self.ttl = ttl;
        self
    }

    /// Wait at most `wait` for a bridge deposit's fill before reporting it `pending`.
    pub fn with_bridge_wait(mut self, wait: Duration) -> Self {
        self.bridge_wait = wait;
        self
    }

    /// The generation previews start on now.
    pub fn generation(&self) -> Arc<Generation> {
        read(&self.current).clone()
    }

    /// The host it plans with now (the current generation's; none for a fake planner).
    pub fn host(&self) -> Option<Arc<Host>> {
        self.generation().host()
    }

    /// The services it simulates and signs with now.
    pub fn services(&self) -> Arc<Services> {
        self.generation().services().clone()
    }

    /// Install the next generation: plan with `planner` and read, simulate and sign with
    /// `services` (a reload). The hooks are kept when the services are, else built anew for
    /// them by the hook factory. Previews and commits in flight finish on the generation they
    /// started on; a permit planned on the replaced one commits on it while it may still be
    /// committed (its TTL); permits, halt, spend and audit carry over.
    pub fn reload(
        &self,
        planner: Arc<dyn Planner>,
        services: Arc<Services>,
    ) -> Result<Arc<Generation>, ToolError> {
        let mut current = write(&self.current);
        let hooks = if Arc::ptr_eq(current.services(), &services) {
            current.hooks().clone()
        } else {
            let factory = self.hook_factory.as_ref().ok_or_else(|| {
                ToolError::new(
                    ErrorCode::Internal,
                    "this write path's hooks were built by hand for its services; it cannot move to new ones",
                )
            })?;
            Arc::new(factory(&services).map_err(|e| ToolError::new(ErrorCode::Internal, e))?)
        };
        let next = Arc::new(Generation::new(current.number() + 1, planner, services, hooks));
        let replaced = std::mem::replace(&mut *current, next.clone());
        drop(current);
        let now = (self.clock)();
        let mut retired = lock(&self.retired);
        retired.retain(|(_, at)| now.duration_since(*at).unwrap_or_default() <= self.ttl);
        retired.push((replaced, now));
        drop(retired);
        self.log(AuditEvent::Reloaded { generation: next.number() })?;
        Ok(next)
    }

    /// The generation a commit of `permit` runs on: the one that planned it, if this write
    /// path installed it and still holds it; else the current one.
    fn generation_of(&self, permit: &ActionPermit) -> Arc<Generation> {
        let current = self.generation();
        let Some(on) = permit.planned_on.as_ref().filter(|on| on.instance == self.instance) else {
            return current;
        };
        if on.generation == current.number() {
            return current;
        }
        lock(&self.retired)
            .iter()
            .find(|(g, _)| g.number() == on.generation)
            .map_or(current, |(g, _)| g.clone())
    }

    /// Audit `events` (one write, one sync), then publish them on the fabric.
    fn record(&self, events: &[AuditEvent]) -> Result<(), ToolError> {
        self.audit.append_all(events).map_err(audit_error)?;
        self.publish_records(events);
        Ok(())
    }

    /// [`Self::record`] without waiting for the disk (see [`AuditLog::write_all`]): where the
    /// last record was written.
    fn record_written(&self, events: &[AuditEvent]) -> Result<Option<audit_log::RecordAt>, ToolError> {
        let written = self.audit.write_all(events).map_err(audit_error)?;
        self.publish_records(events);
        Ok(written)
    }

    fn publish_records(&self, events: &[AuditEvent]) {
        if let Some(episodes) = &self.episodes {
            episodes.observe(events);
        }
        if let Some(fabric) = &self.fabric {
            for e in events.iter().filter_map(fabric_event) {
                fabric.emit(e);
            }
        }
    }

    /// Audit `event` (and publish it, if there is a fabric): also a front end's own steps,
    /// such as an A2A task's states.
    pub fn log(&self, event: AuditEvent) -> Result<(), ToolError> {
        self.record(std::slice::from_ref(&event))
    }

    /// Publish an event that has no audit record (tool start and progress), if there is a fabric.
    fn publish(&self, event: impl FnOnce() -> GolemEvent) {
        if let Some(fabric) = &self.fabric {
            fabric.emit(event());
        }
    }

    /// Publish a tool call's end with what it cost (its audit record carries neither).
    fn publish_end(&self, tool: &str, ok: bool, stats: &bardo_runtime::plugin::CallStats) {
        self.publish(|| GolemEvent::ToolExecutionEnd {
            tool: tool.to_owned(),
            ok,
            fuel: stats.fuel_consumed,
            duration_ms: stats.wall.as_millis() as u64,
        });
    }

    /// Publish a read tool's call (see [`CallReport::lifecycle`]), if there is a fabric.
    ///
    /// [`CallReport::lifecycle`]: bardo_runtime::plugin::CallReport::lifecycle
    pub fn publish_read<T>(
        &self,
        tool: &str,
        def: Option<&bardo_core::tool::ToolDef>,
        report: &bardo_runtime::plugin::CallReport<T>,
    ) {
        if let Some(fabric) = &self.fabric {
            for event in report.lifecycle(tool, def) {
                fabric.emit(event);
            }
        }
    }

    /// Whether it publishes its steps on a fabric (see [`Self::with_fabric`]).
    pub fn publishes(&self) -> bool {
        self.fabric.is_some()
    }

    /// Publish every step on `fabric` too.
    pub fn with_fabric(mut self, fabric: Arc<Fabric>) -> Self {
        self.fabric = Some(fabric);
        self
    }

    /// Record every executed and blocked write in the agent's memory through `recorder`.
    pub fn with_episodes(mut self, recorder: bardo_memory::Recorder) -> Self {
        self.episodes = Some(crate::episodes::Episodes::new(recorder));
        self
    }

    /// Price outcome records (gas and P&L in USD) with `valuer`; without one they say `null`.
    pub fn with_valuer(mut self, valuer: valuation::Valuer) -> Self {
        self.first_hooks().valuer = Some(valuer);
        self
    }

    /// The permits waiting for a commit: open, unexpired, sealed by this host's key.
    pub fn open_permits(&self) -> Result<Vec<ActionPermit>, ToolError> {
        self.permits.open_permits((self.clock)()).map_err(permit_error)
    }

    /// Cancel an open permit.
    pub fn cancel(&self, permit_id: &str) -> Result<(), ToolError> {
        self.permits.cancel(permit_id, (self.clock)()).map_err(permit_error)?;
        self.settle(permit_id, false);
        self.log(AuditEvent::PermitCancelled { permit_id: permit_id.to_owned() })
    }
}

impl std::fmt::Debug for WritePath {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WritePath")
            .field("generation", &self.generation().number())
            .field("phase", &self.phase())
            .field("audit", &self.audit.path())
            .finish_non_exhaustive()
    }
}

/// The fabric's view of an audit record (none: records have no event of their own).
fn fabric_event(e: &AuditEvent) -> Option<GolemEvent> {
    let id = |p: &String| p.clone();
    Some(match e {
        // Published when the call returns, with its cost (`publish_end`).
        AuditEvent::ToolCall { .. } => return None,
        AuditEvent::Reloaded { .. } => return None,
        AuditEvent::TaskStatus { task_id, state, permit_id } => GolemEvent::TaskStatusChanged {
            task_id: task_id.clone(),
            state: state.clone(),
            permit_id: permit_id.clone(),
        },
        AuditEvent::HookDecision { tool, hook, allowed, .. } => {
            GolemEvent::HookDecision { tool: tool.clone(), hook: hook.clone(), allowed: *allowed }
        }
        AuditEvent::PermitCreated { permit_id, tool, .. } => {
            GolemEvent::PermitCreated { permit_id: id(permit_id), tool: tool.clone() }
        }
        AuditEvent::PermitConsumed { permit_id, .. } => {
            GolemEvent::PermitConsumed { permit_id: id(permit_id) }
        }
        AuditEvent::PermitExpired { permit_id } => {
            GolemEvent::PermitRefused { permit_id: id(permit_id), code: "expired".into() }
        }
        AuditEvent::PermitCancelled { permit_id } => {
            GolemEvent::PermitRefused { permit_id: id(permit_id), code: "cancelled".into() }
        }
        AuditEvent::PermitRefused { permit_id, code, .. } => {
            GolemEvent::PermitRefused { permit_id: id(permit_id), code: code.clone() }
        }
        // A send's own record: its receipt is the event. A reopened permit's refusal was.
        AuditEvent::TransactionSigned { .. } | AuditEvent::PermitReopened { .. } => return None,
        // An operator's act on the host, not an agent's event.
        AuditEvent::FleetReanchored { .. } => return None,
        AuditEvent::TransactionReplaced { permit_id, .. } => {
            GolemEvent::PermitRefused { permit_id: id(permit_id), code: "replaced".into() }
        }
        AuditEvent::ActionExecuted { permit_id, tx_hash, gas_used, .. } => GolemEvent::ActionExecuted {
            permit_id: id(permit_id),
            tx_hash: tx_hash.clone(),
            gas_used: *gas_used,
        },
        AuditEvent::Halted { reason, .. } => GolemEvent::Halted { reason: reason.clone() },
        AuditEvent::OutcomeMismatch { permit_id, differences } => {
            GolemEvent::OutcomeMismatch { permit_id: id(permit_id), differences: differences.clone() }
        }
        AuditEvent::Resumed { reason, .. } => GolemEvent::Resumed { reason: reason.clone() },
        AuditEvent::ActionBlocked { permit_id, code, .. } => {
            GolemEvent::PermitRefused { permit_id: id(permit_id), code: code.clone() }
        }
        AuditEvent::OutcomeRecorded { .. } => return None,
        // The commit's result carries it; the specification's events name no bridge fill.
        AuditEvent::BridgeFill { .. } => return None,
        // A decline cancels the permit, which is published as such.
        AuditEvent::PermitConfirmed { .. } | AuditEvent::ConfirmationDeclined { .. } => return None,
    })
}
