//! The write path. A plugin only plans; here a plan is checked by the hook chain, simulated,
//! turned into a single-use permit, and — at commit, after a fresh simulation matches — executed
//! through a [`Capability`] that only this module can mint and only [`broadcast`] consumes.

pub mod audit_log;
mod broadcast;
pub mod capability;
pub mod cross_check;
pub mod declared;
pub mod hooks;
pub mod host_key;
pub mod permit;
pub mod records;
pub mod scope;
pub mod spending;
mod store;
pub mod valuation;
pub mod value_guard;

use crate::plugin::{CallControl, Host};
use crate::services::Services;
use alloy::primitives::Address;
use alloy::providers::Provider;
use alloy::rpc::types::TransactionReceipt;
use audit_log::{AuditEvent, AuditLog};
use bardo_core::error::{ErrorCode, ToolError};
use bardo_core::fabric::{Fabric, GolemEvent};
use bardo_core::tool::{CapabilityTier, Phase, RiskTier, WritePlan};
use bardo_evm::changes::ChangeSet;
use broadcast::broadcast;
use capability::Capability;
use hooks::{
    Decision, Findings, HallucinationDetector, Proposal, RevmSimulator, SafetyHook, simulation_hash,
};
use permit::{ActionPermit, Halt, PermitError, Permits};
use serde::Serialize;
use std::collections::BTreeSet;
use std::sync::{Arc, RwLock};
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
}

/// What the host read from the receipts.
struct Checked {
    changes: Option<ChangeSet>,
    mismatch: Vec<String>,
}

/// A plan that passed every check and its fresh re-simulation: what a capability authorizes.
#[derive(Debug)]
pub struct Approved {
    /// The permit being executed.
    pub permit: ActionPermit,
    /// Gas each call used in the commit-time simulation.
    pub gas: Vec<u64>,
}

/// Preview, commit, cancel and halt over one host.
pub struct WritePath {
    /// Swapped as a whole on a reload; each preview or commit holds the one it started on.
    host: RwLock<Arc<Host>>,
    services: Arc<Services>,
    hooks: Vec<Box<dyn SafetyHook>>,
    after_simulation: Vec<Box<dyn SafetyHook>>,
    simulator: RevmSimulator,
    permits: Permits,
    audit: AuditLog,
    phase: RwLock<Phase>,
    mismatch_phase: Phase,
    ttl: Duration,
    clock: Clock,
    fabric: Option<Arc<Fabric>>,
    valuer: Option<valuation::Valuer>,
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
        ErrorCode::Unavailable => ToolError::retryable(code, message),
        code => ToolError::new(code, message),
    }
}

fn permit_error(e: PermitError) -> ToolError {
    if let PermitError::Unavailable(message) = e {
        return ToolError::retryable(ErrorCode::Unavailable, message);
    }
    let code = match e {
        PermitError::Unknown(_) => ErrorCode::NotFound,
        PermitError::Store(_) => ErrorCode::Internal,
        _ => ErrorCode::Denied,
    };
    ToolError::new(code, e.to_string())
}

impl WritePath {
    /// A write path over `host`'s write tools with `hooks` (in order; the simulator runs after
    /// them), simulating and signing with `services` (the host's), logging to `audit`. Its
    /// permits (and halt) live in memory, sealed with a key of this process only; share them
    /// between processes with [`Self::with_permit_file`].
    pub fn new(
        host: Arc<Host>,
        services: Arc<Services>,
        hooks: Vec<Box<dyn SafetyHook>>,
        audit: AuditLog,
    ) -> Self {
        let simulator = RevmSimulator { services: services.clone(), budget: Duration::from_secs(5) };
        Self {
            host: RwLock::new(host),
            services,
            hooks,
            after_simulation: Vec::new(),
            simulator,
            permits: Permits::in_memory(host_key::HostKey::ephemeral()),
            audit,
            phase: RwLock::new(Phase::Thriving),
            mismatch_phase: Phase::Cautious,
            ttl: DEFAULT_TTL,
            clock: Arc::new(SystemTime::now),
            fabric: None,
            valuer: None,
        }
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
        self.after_simulation = hooks;
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

    fn settle(&self, permit_id: &str, executed: bool) {
        for hook in self.hooks.iter().chain(&self.after_simulation) {
            hook.settle(permit_id, executed);
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

    /// The host it plans with now.
    pub fn host(&self) -> Arc<Host> {
        self.host.read().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Plan with `host` from now on (a reload: new plugin versions). Previews and commits in
    /// flight finish on the host they started on; permits, halt, spend and audit carry over.
    pub fn swap_host(&self, host: Arc<Host>) {
        *self.host.write().unwrap_or_else(|p| p.into_inner()) = host;
    }

    /// The services it simulates and signs with.
    pub fn services(&self) -> &Arc<Services> {
        &self.services
    }

    /// The current phase: terminal while an emergency halt is in force (here or in another
    /// process sharing the permit file), else the one set.
    pub fn phase(&self) -> Phase {
        match self.controls() {
            Ok((None, phase)) => phase,
            // A store that cannot be read counts as halted: writes fail closed.
            Ok((Some(_), _)) | Err(_) => Phase::Terminal,
        }
    }

    /// The halt in force, if any, and the phase as set (see [`Self::phase_as_set`]): one read
    /// of the store.
    fn controls(&self) -> Result<(Option<Halt>, Phase), PermitError> {
        let (halt, fleet) = self.permits.controls()?;
        let own = *self.phase.read().unwrap_or_else(|p| p.into_inner());
        Ok((halt, fleet.map_or(own, |f| lowest(own, f))))
    }

    /// The phase set by the operator or lowered by an agent (with `[cluster]`, by any host's
    /// agent), whether or not halted. A fleet phase that cannot be read counts as terminal.
    fn phase_as_set(&self) -> Phase {
        self.controls().map_or(Phase::Terminal, |(_, phase)| phase)
    }

    /// Set the phase, in either direction: the operator's (`[safety] phase` in bardo.toml, at
    /// start). An agent only lowers it, through [`Self::lower_phase`].
    pub fn set_phase(&self, phase: Phase) {
        *self.phase.write().unwrap_or_else(|p| p.into_inner()) = phase;
    }

    /// Move the phase towards terminal (thriving → cautious → defensive → survival), as the
    /// agent's directives may. Raising it is refused (`denied`): only the operator raises it.
    /// With `[cluster]` the phase is lowered for the whole fleet (an operator's `bardo resume`
    /// lifts it again).
    pub fn lower_phase(&self, phase: Phase) -> Result<(), ToolError> {
        let mut own = self.phase.write().unwrap_or_else(|p| p.into_inner());
        let (halt, fleet) = self.permits.controls().map_err(permit_error)?;
        if let Some(halt) = halt {
            return Err(permit_error(halt.refusal()));
        }
        let current = fleet.map_or(*own, |f| lowest(*own, f));
        if severity(phase) < severity(current) {
            let how = if fleet.is_some() {
                "run `bardo resume`"
            } else {
                "set `[safety] phase` in bardo.toml and restart"
            };
            return Err(denied(format!(
                "the phase is {} and only the operator can raise it (to {}): {how}",
                phase_name(current),
                phase_name(phase)
            )));
        }
        let shared = self
            .permits
            .change_fleet_phase(|lowered| {
                if lowered.is_none_or(|l| severity(phase) > severity(l)) {
                    *lowered = Some(phase);
                }
            })
            .map_err(permit_error)?;
        if shared.is_none() {
            *own = phase;
        }
        Ok(())
    }

    /// Refuse (`denied`) while an emergency halt is in force, set here or by another process
    /// sharing the permit file.
    fn refuse_if_halted(&self) -> Result<(), ToolError> {
        match self.permits.halted().map_err(permit_error)? {
            Some(halt) => Err(permit_error(halt.refusal())),
            None => Ok(()),
        }
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
    fn publish_end(&self, tool: &str, ok: bool, stats: &crate::plugin::CallStats) {
        self.publish(|| GolemEvent::ToolExecutionEnd {
            tool: tool.to_owned(),
            ok,
            fuel: stats.fuel_consumed,
            duration_ms: stats.wall.as_millis() as u64,
        });
    }

    /// Publish every step on `fabric` too.
    pub fn with_fabric(mut self, fabric: Arc<Fabric>) -> Self {
        self.fabric = Some(fabric);
        self
    }

    /// Price outcome records (gas and P&L in USD) with `valuer`; without one they say `null`.
    pub fn with_valuer(mut self, valuer: valuation::Valuer) -> Self {
        self.valuer = Some(valuer);
        self
    }

    /// The write tool that implements action `kind` (`swap`, `add-liquidity`, …) in the profile.
    fn route<'h>(&self, host: &'h Host, kind: &str) -> Result<&'h crate::plugin::CatalogEntry, ToolError> {
        // Unique by construction: the host refuses to load a second tool claiming a kind.
        let kind = crate::plugin::action_kind(kind);
        host.catalog()
            .values()
            .find(|e| {
                e.def.capability_tier == CapabilityTier::Write
                    && e.def.action_kinds.iter().any(|k| crate::plugin::action_kind(k) == kind)
            })
            .ok_or_else(|| {
                ToolError::new(
                    ErrorCode::NotFound,
                    format!("no write tool implements `{kind}` in this profile; see `bardo tools`"),
                )
            })
    }

    /// Plan action `kind`, run the hook chain and the simulation, and issue a permit. Its audit
    /// records are written together before the permit exists and synced by a thread, not
    /// waited for: the permit keeps where its `PermitCreated` record was written, and a commit
    /// syncs the log and finds the record there before taking it — a crash can lose a
    /// preview's records only together with the use of its permit.
    pub fn preview(&self, kind: &str, params: &serde_json::Value) -> Result<ActionPermit, ToolError> {
        self.preview_with(kind, params, &Arc::new(CallControl::new()))
    }

    /// [`Self::preview`] whose plan call reports progress to, and can be cancelled through,
    /// `control` (a cancelled plan issues no permit).
    pub fn preview_with(
        &self,
        kind: &str,
        params: &serde_json::Value,
        control: &Arc<CallControl>,
    ) -> Result<ActionPermit, ToolError> {
        let permit_id = new_permit_id();
        // The halt is checked again, with the permit's write, when it is stored.
        let phase = match self.controls() {
            Ok((None, phase)) => Ok(phase),
            Ok((Some(halt), _)) => Err(permit_error(halt.refusal())),
            Err(e) => Err(permit_error(e)),
        };
        let phase = match phase {
            Ok(phase) => phase,
            Err(e) => {
                self.log(self.blocked(&permit_id, kind, &e))?;
                return Err(e);
            }
        };
        let mut trail = Vec::new();
        let result = self.check(&permit_id, kind, params, phase, control, &mut trail);
        if let Err(e) = &result {
            trail.push(self.blocked(&permit_id, kind, e));
        }
        let stored = self.record_written(&trail).and_then(|at| {
            let permit = ActionPermit { audit_record: at, ..result? };
            self.permits.insert(permit.clone()).map(|()| permit).map_err(permit_error)
        });
        if stored.is_err() {
            self.settle(&permit_id, false);
        }
        stored
    }

    /// The record of a preview refused before a permit was issued.
    fn blocked(&self, permit_id: &str, kind: &str, e: &ToolError) -> AuditEvent {
        AuditEvent::ActionBlocked {
            permit_id: permit_id.to_owned(),
            kind: kind.to_owned(),
            tool: self.route(&self.host(), kind).ok().map(|entry| entry.def.name.clone()),
            code: e.code.as_str().into(),
            reason: e.message.clone(),
        }
    }

    fn check(
        &self,
        permit_id: &str,
        kind: &str,
        params: &serde_json::Value,
        phase: Phase,
        control: &Arc<CallControl>,
        trail: &mut Vec<AuditEvent>,
    ) -> Result<ActionPermit, ToolError> {
        let host = self.host();
        let entry = self.route(&host, kind)?;
        let tool = entry.def.name.clone();
        let chain_id = params["chain_id"]
            .as_u64()
            .ok_or_else(|| ToolError::new(ErrorCode::InvalidParams, "`chain_id` is required for a write"))?;
        let sender = self.services.address(chain_id).ok_or_else(|| {
            ToolError::new(
                ErrorCode::WalletNotConfigured,
                format!("no wallet for chain {chain_id}; set BARDO_PRIVATE_KEY or [signer] in bardo.toml"),
            )
        })?;
        self.publish(|| GolemEvent::ToolExecutionStart {
            tool: tool.clone(),
            total_steps: entry.def.progress_steps.len() as u32,
            tick_budget_ms: entry.def.tick_budget.millis(),
        });
        let report = host.plan_with(&tool, &params.to_string(), control);
        // The plugin's progress steps, named from its ToolDef.
        for e in &report.events.events {
            if let bardo_core::tool::ToolEvent::Progress { step, .. } = e {
                let name =
                    entry.def.progress_steps.get(*step as usize).cloned().unwrap_or_else(|| step.to_string());
                self.publish(|| GolemEvent::ToolExecutionUpdate { tool: tool.clone(), step: name.clone() });
            }
        }
        self.publish_end(&tool, report.result.is_ok(), &report.stats);
        trail.push(AuditEvent::ToolCall {
            tool: tool.clone(),
            phase: "plan".into(),
            ok: report.result.is_ok(),
        });
        let plan = report.result?;
        // Bounded host work: a plan is a few calls, not a program for the host to run.
        let bytes: usize = plan.calls.iter().map(|c| c.data.len()).sum();
        if plan.calls.len() > MAX_PLAN_CALLS || bytes > MAX_PLAN_BYTES {
            return Err(denied(format!(
                "the plan has {} calls and {bytes} bytes of call data; at most {MAX_PLAN_CALLS} calls and {MAX_PLAN_BYTES} bytes",
                plan.calls.len()
            )));
        }
        if let Some(c) = plan.calls.iter().find(|c| c.chain_id != chain_id) {
            return Err(denied(format!("the plan has a call for chain {}, not {chain_id}", c.chain_id)));
        }
        let declared = declared::Declared::parse(&plan.expected_outcome);
        let proposal = Proposal {
            declared: &declared,
            permit_id,
            kind: &kind.replace('-', "_"),
            tool: &entry.def,
            chain_id,
            sender,
            plan: &plan,
            phase,
        };
        let mut found = Findings::default();
        let chain = self
            .hooks
            .iter()
            .map(|h| h.as_ref())
            .chain(std::iter::once(&self.simulator as &dyn SafetyHook))
            // Always right after the simulation, whatever the configuration: the plan's claims
            // against the change set derived from it, before anything values or counts them.
            .chain(std::iter::once(&HallucinationDetector as &dyn SafetyHook))
            .chain(self.after_simulation.iter().map(|h| h.as_ref()));
        for hook in chain {
            let decision = hook.check(&proposal, &mut found);
            let (allowed, reason) = match &decision {
                Decision::Allow => (true, None),
                Decision::Reject { reason, .. } => (false, Some(reason.clone())),
            };
            trail.push(AuditEvent::HookDecision {
                tool: tool.clone(),
                hook: hook.name().into(),
                allowed,
                reason,
            });
            if let Decision::Reject { code, reason } = decision {
                return Err(refusal(code, format!("{}: {reason}", hook.name())));
            }
        }
        let sim = found
            .simulation
            .ok_or_else(|| ToolError::new(ErrorCode::Internal, "the plan was not simulated"))?;
        let permit = ActionPermit {
            permit_id: permit_id.to_owned(),
            kind: kind.to_owned(),
            tool: tool.clone(),
            params: params.clone(),
            chain_id,
            sender,
            simulation_hash: simulation_hash(chain_id, sender, &plan, &sim),
            simulated_at: Some(sim.timestamp),
            expected_outcome: plan.expected_outcome.clone(),
            risk_tier: plan_risk(entry.def.risk_tier, &plan),
            plan,
            created_at: (self.clock)(),
            ttl: self.ttl,
            audit_record: None,
        };
        trail.push(AuditEvent::PermitCreated {
            permit_id: permit.permit_id.clone(),
            kind: kind.to_owned(),
            tool,
            simulation_hash: permit.simulation_hash.to_string(),
        });
        Ok(permit)
    }

    /// Execute a permit once: check that this host sealed it, that this host's wallet signs it
    /// and that today's policy still allows it; re-simulate on the current block and refuse if
    /// anything changed; count the spend; then sign, broadcast, wait for the receipts and let
    /// the plugin verify the outcome.
    pub fn commit(&self, permit_id: &str) -> Result<WriteResult, ToolError> {
        self.commit_with(permit_id, &Arc::new(CallControl::new()))
    }

    /// [`Self::commit`] that a caller can cancel through `control` until the broadcast starts
    /// (the permit is then used and nothing is sent); from the broadcast on it runs to the end.
    pub fn commit_with(&self, permit_id: &str, control: &Arc<CallControl>) -> Result<WriteResult, ToolError> {
        // A halt is checked by `take`, under the store's lock; the phase, by the policy cage's
        // class gate in `recheck` (terminal still allows a write that closes a position).
        // The spend is counted in the same locked step that takes the permit, before anything
        // is checked or signed: a crash from here on leaves it spent (conservative); a refusal
        // below releases it.
        // Taken only with its preview's record on disk, whichever process and log wrote it.
        let recorded = |at: &audit_log::RecordAt| {
            self.audit.recorded(at, &format!("\"permit_id\":\"{permit_id}\"")).map_err(|e| e.to_string())
        };
        let permit = match self
            .permits
            .take_then(permit_id, (self.clock)(), recorded, |_| self.settle(permit_id, true))
        {
            Ok(p) => p,
            Err(e) => {
                let error = permit_error(e.clone());
                if matches!(e, PermitError::Expired(_)) {
                    self.settle(permit_id, false);
                }
                self.log(match e {
                    PermitError::Expired(_) => AuditEvent::PermitExpired { permit_id: permit_id.to_owned() },
                    _ => AuditEvent::PermitRefused {
                        permit_id: permit_id.to_owned(),
                        code: error.code.as_str().into(),
                        reason: error.message.clone(),
                    },
                })?;
                return Err(error);
            }
        };
        self.log(AuditEvent::PermitConsumed { permit_id: permit_id.to_owned() })?;
        let refuse = |code: ErrorCode, reason: String| -> Result<WriteResult, ToolError> {
            self.settle(permit_id, false);
            self.log(AuditEvent::PermitRefused {
                permit_id: permit_id.to_owned(),
                code: code.as_str().into(),
                reason: reason.clone(),
            })?;
            Err(ToolError::new(code, reason))
        };
        if let Err(e) = self.recheck(&permit) {
            return refuse(e.code, e.message);
        }
        // At the preview's timestamp: only a change of state, not the passing of time (interest
        // accruing, oracle slots), makes the re-simulation differ.
        let sim = match self.simulator.run(permit.chain_id, permit.sender, &permit.plan, permit.simulated_at)
        {
            Ok(sim) => sim,
            Err(e) => return refuse(ErrorCode::Rpc, format!("cannot re-simulate: {e}; preview again")),
        };
        if simulation_hash(permit.chain_id, permit.sender, &permit.plan, &sim) != permit.simulation_hash {
            return refuse(
                ErrorCode::Denied,
                "the chain changed since the preview (the simulation differs); preview the action again"
                    .into(),
            );
        }
        // A halt during the re-simulation still stops it: nothing has been sent yet.
        if let Err(e) = self.refuse_if_halted() {
            return refuse(e.code, e.message);
        }
        // The last point a caller's cancel stops the commit: from here on it is broadcasting.
        if control.is_cancelled() {
            return refuse(
                ErrorCode::Cancelled,
                format!(
                    "commit of `{permit_id}` cancelled by its caller before anything was sent; preview again"
                ),
            );
        }
        let gas = sim.outcomes.iter().map(|o| o.gas_used).collect();
        // Where the receipts' check looks for balances besides the logs' contracts.
        let assets: BTreeSet<Address> = sim
            .changes
            .balances()
            .filter_map(|(asset, _)| asset)
            .chain(permit.plan.calls.iter().map(|c| c.to))
            .collect();
        // Where the wallet's nonce stood: if this process dies mid-broadcast, the next start
        // tells from the chain whether anything was sent (see `reconcile`).
        match self.pending_nonce(permit.chain_id, permit.sender) {
            Ok(nonce) => {
                if let Err(e) = self.permits.mark_sending(permit_id, nonce) {
                    tracing::warn!(
                        "{permit_id}: cannot record the broadcast's start ({e}); a crash now stays spent"
                    );
                }
            }
            Err(e) => {
                tracing::warn!("{permit_id}: cannot read the wallet's nonce ({e}); a crash now stays spent")
            }
        }
        let capability = Capability::mint(Approved { permit, gas });
        let sent = broadcast(capability, &self.services, &|e| self.log(e));
        if let Err(e) = self.permits.mark_finished(permit_id) {
            tracing::warn!(
                "{permit_id}: cannot record the broadcast's end ({e}); the next start re-checks it"
            );
        }
        let (permit, receipts) = sent?;
        let report = self.host().verify(&permit.tool, &permit.params.to_string(), permit.chain_id, &receipts);
        self.publish_end(&permit.tool, report.result.is_ok(), &report.stats);
        self.log(AuditEvent::ToolCall {
            tool: permit.tool.clone(),
            phase: "verify".into(),
            ok: report.result.is_ok(),
        })?;
        let actual = report.result?;
        let checked = self.check_receipts(&permit, &receipts, &assets)?;
        let schema_version = self.host().catalog().get(&permit.tool).map_or(0, |e| e.def.schema_version);
        let result = WriteResult {
            schema_version,
            permit_id: permit.permit_id,
            tool: permit.tool,
            expected: permit.expected_outcome,
            actual,
            ground_truth: if checked.changes.is_some() { "receipt" } else { "plugin" },
            changes: checked.changes,
            outcome_mismatch: checked.mismatch,
            tx_hashes: receipts.iter().map(|r| r.transaction_hash.to_string()).collect(),
            gas_used: receipts.iter().map(|r| r.gas_used).sum(),
        };
        self.log(records::outcome_event(self.valuer.as_ref(), permit.chain_id, &result, &receipts))?;
        Ok(result)
    }

    /// Derive the wallet's change set from the receipts, as a simulation's is derived, and hold
    /// it to what the permit's plan declared. A divergence lowers the phase (to `cautious` by
    /// default) and is audited; a change set the host could not read leaves the plugin's word
    /// as the only account, and says so.
    fn check_receipts(
        &self,
        permit: &ActionPermit,
        receipts: &[TransactionReceipt],
        assets: &BTreeSet<Address>,
    ) -> Result<Checked, ToolError> {
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        let chains = &self.services.chains;
        let derived = bardo_evm::executed::executed_changes(
            chains,
            permit.chain_id,
            permit.sender,
            receipts,
            assets,
            deadline,
        );
        let changes = match derived {
            Ok(changes) => changes,
            Err(e) => {
                let reason = format!("the host could not read what the transactions changed: {e}");
                self.log(AuditEvent::OutcomeMismatch {
                    permit_id: permit.permit_id.clone(),
                    differences: vec![reason.clone()],
                })?;
                return Ok(Checked { changes: None, mismatch: vec![reason] });
            }
        };
        let mismatch = match declared::Declared::parse(&permit.expected_outcome) {
            Ok(Some(declared)) => declared.mismatches(&changes),
            Ok(None) => vec!["the plan declared no balance_changes".to_owned()],
            Err(reason) => vec![reason],
        };
        if !mismatch.is_empty() {
            self.log(AuditEvent::OutcomeMismatch {
                permit_id: permit.permit_id.clone(),
                differences: mismatch.clone(),
            })?;
            // Lowering only: a halted or already more careful host stays as it is.
            let current = self.phase_as_set();
            let to =
                if severity(self.mismatch_phase) > severity(current) { self.mismatch_phase } else { current };
            // Lowering only; a halt refuses it and already stops every write.
            let _ = self.lower_phase(to);
        }
        Ok(Checked { changes: Some(changes), mismatch })
    }

    /// The wallet's nonce counting transactions the node holds but has not mined.
    fn pending_nonce(&self, chain: u64, wallet: Address) -> Result<u64, ToolError> {
        let chains = &self.services.chains;
        let client =
            chains.get(chain).map_err(|e| ToolError::new(ErrorCode::ChainNotSupported, e.to_string()))?;
        chains
            .block_on(client.provider().get_transaction_count(wallet).pending().into_future())
            .map_err(|e| ToolError::retryable(ErrorCode::Rpc, format!("reading the wallet's nonce: {e}")))
    }

    /// Reconcile executions a crash interrupted (run at start): a permit taken for execution
    /// whose wallet nonce has not moved since sent nothing, so its spend is released; any other
    /// stays spent, since something left the wallet. Returns the released permits.
    pub fn reconcile(&self) -> Result<Vec<String>, ToolError> {
        let mut released = Vec::new();
        for (id, chain, wallet, nonce) in self.permits.unfinished().map_err(permit_error)? {
            if self.pending_nonce(chain, wallet)? == nonce {
                self.settle(&id, false);
                self.log(AuditEvent::PermitRefused {
                    permit_id: id.clone(),
                    code: "interrupted".into(),
                    reason: "its execution was interrupted before anything was sent; its spend is released"
                        .into(),
                })?;
                released.push(id.clone());
            }
            self.permits.mark_finished(&id).map_err(permit_error)?;
        }
        Ok(released)
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

    /// Emergency halt: kept in the permit store (seen by every process sharing its file, and
    /// after a restart), every open permit revoked in the same locked step; the phase reads
    /// terminal and previews and commits are refused until an operator runs `bardo resume`.
    pub fn halt(&self, reason: &str) -> Result<Vec<String>, ToolError> {
        let revoked = self.permits.halt(reason, (self.clock)()).map_err(permit_error)?;
        for id in &revoked {
            self.settle(id, false);
        }
        self.log(AuditEvent::Halted { reason: reason.to_owned(), revoked: revoked.clone() })?;
        Ok(revoked)
    }

    /// Lift an emergency halt (the operator's `bardo resume`, never an agent's), and with
    /// `[cluster]` the phase agents lowered fleet-wide; returns whether either was in force.
    /// The phase is again the one set; revoked permits stay revoked.
    pub fn resume(&self) -> Result<bool, ToolError> {
        // With `[cluster]` the phase agents lowered fleet-wide goes too: each host is back at
        // its own `[safety] phase`.
        let lowered =
            self.permits.change_fleet_phase(|lowered| lowered.take().is_some()).map_err(permit_error)?;
        let Some(halt) = self.permits.resume().map_err(permit_error)? else {
            return Ok(lowered == Some(true));
        };
        self.log(AuditEvent::Resumed { reason: halt.reason, halted_at_ms: halt.at_ms })?;
        Ok(true)
    }

    /// What a permit must still pass at commit, whoever wrote it into the store: this host's
    /// wallet signs it, its write tool is still loaded, and every hook that runs at commit
    /// allows it in the current phase.
    fn recheck(&self, permit: &ActionPermit) -> Result<(), ToolError> {
        let signer = self.services.address(permit.chain_id);
        if signer != Some(permit.sender) {
            let signer = signer.map_or_else(|| "no wallet".to_owned(), |a| a.to_string());
            return Err(denied(format!(
                "permit `{}` is for sender {}, but this host signs on chain {} with {signer}; preview again",
                permit.permit_id, permit.sender, permit.chain_id
            )));
        }
        let host = self.host();
        let entry = host
            .catalog()
            .get(&permit.tool)
            .filter(|e| e.def.capability_tier == CapabilityTier::Write)
            .ok_or_else(|| {
                denied(format!(
                    "write tool `{}` of permit `{}` is no longer loaded; preview again",
                    permit.tool, permit.permit_id
                ))
            })?;
        let declared = declared::Declared::parse(&permit.plan.expected_outcome);
        let proposal = Proposal {
            declared: &declared,
            permit_id: &permit.permit_id,
            kind: &permit.kind.replace('-', "_"),
            tool: &entry.def,
            chain_id: permit.chain_id,
            sender: permit.sender,
            plan: &permit.plan,
            phase: self.phase(),
        };
        let mut found = Findings::default();
        for hook in self.hooks.iter().filter(|h| h.at_commit()) {
            if let Decision::Reject { code, reason } = hook.check(&proposal, &mut found) {
                return Err(refusal(code, format!("{} (at commit): {reason}", hook.name())));
            }
        }
        Ok(())
    }
}

/// How far towards terminal a phase is: an agent may only move it up this scale.
fn severity(phase: Phase) -> u8 {
    match phase {
        Phase::Thriving => 0,
        Phase::Cautious => 1,
        Phase::Defensive => 2,
        Phase::Survival => 3,
        Phase::Terminal => 4,
    }
}

/// The nearer to terminal of two phases.
fn lowest(a: Phase, b: Phase) -> Phase {
    if severity(a) >= severity(b) { a } else { b }
}

/// A phase as bardo.toml and directives spell it.
fn phase_name(phase: Phase) -> String {
    format!("{phase:?}").to_lowercase()
}

fn new_permit_id() -> String {
    let mut bytes = [0u8; 16];
    rand_bytes(&mut bytes);
    format!("permit-{}", hex::encode(bytes))
}

/// Unpredictable ids: sha256 of time, a counter and the process id (no extra RNG dependency).
pub(crate) fn rand_bytes(out: &mut [u8; 16]) {
    use sha2::{Digest, Sha256};
    static COUNTER: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let t = SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0);
    let digest = Sha256::new()
        .chain_update(t.to_be_bytes())
        .chain_update(n.to_be_bytes())
        .chain_update(std::process::id().to_be_bytes())
        .finalize();
    out.copy_from_slice(&digest[..16]);
}

impl std::fmt::Debug for WritePath {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WritePath")
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
        AuditEvent::PermitConsumed { permit_id } => GolemEvent::PermitConsumed { permit_id: id(permit_id) },
        AuditEvent::PermitExpired { permit_id } => {
            GolemEvent::PermitRefused { permit_id: id(permit_id), code: "expired".into() }
        }
        AuditEvent::PermitCancelled { permit_id } => {
            GolemEvent::PermitRefused { permit_id: id(permit_id), code: "cancelled".into() }
        }
        AuditEvent::PermitRefused { permit_id, code, .. } => {
            GolemEvent::PermitRefused { permit_id: id(permit_id), code: code.clone() }
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
    })
}

/// The risk of a plan: its tool's, raised to High when any of its calls goes through a V4 pool
/// with a hook (the specification: "LP … V4 hooks: High") — read from the calls themselves, not
/// from anything the plugin says about them.
fn plan_risk(tool: RiskTier, plan: &WritePlan) -> RiskTier {
    if scope::v4_hooks(&plan.calls).is_empty() { tool } else { tool.max(RiskTier::High) }
}
