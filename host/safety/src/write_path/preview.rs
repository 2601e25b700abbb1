//! Preview: an action kind routed to its write tool, planned, run through the hook chain and the
//! simulation, and issued as a single-use permit (or refused, with the refusal audited).

use super::{MAX_PLAN_BYTES, MAX_PLAN_CALLS, WritePath, denied, permit_error, refusal};
use crate::audit_log::AuditEvent;
use crate::generation::Generation;
use crate::hooks::{Decision, Findings, HallucinationDetector, Proposal, SafetyHook, simulation_hash};
use crate::host_key::rand_bytes;
use crate::permit::{ActionPermit, BalanceChange, PlannedOn};
use crate::planner::{Planner, WriteTool};
use crate::valuation::Valuer;
use crate::{declared, scope};
use bardo_core::error::{ErrorCode, ToolError};
use bardo_core::fabric::GolemEvent;
use bardo_core::tool::{Phase, RiskTier, WritePlan};
use bardo_evm::changes::{Change, ChangeSet};
use bardo_runtime::plugin::CallControl;
use std::sync::Arc;

impl WritePath {
    /// The write tool that implements action `kind` (`swap`, `add-liquidity`, …) in the profile.
    fn route<'g>(&self, planner: &'g dyn Planner, kind: &str) -> Result<WriteTool<'g>, ToolError> {
        planner.write_tool(kind).ok_or_else(|| {
            let kind = kind.replace('-', "_");
            match planner.unserved(&kind) {
                Some(e) if e.code == ErrorCode::NotFound => ToolError::new(
                    ErrorCode::NotFound,
                    format!("no write tool implements `{kind}` in this profile: {}", e.message),
                ),
                Some(e) => e,
                None => ToolError::new(
                    ErrorCode::NotFound,
                    format!(
                        "no write tool implements `{kind}` in this profile, and no loaded plugin declares one; see `bardo tools`"
                    ),
                ),
            }
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
        self.preview_as(kind, params, control, false)
    }

    /// [`Self::preview`] at the operator's own command (`bardo identity set-uri`): the one way
    /// to plan a change of an identity ([`crate::scope::operator_only`]). No door an agent
    /// reaches calls it.
    pub fn preview_by_operator(
        &self,
        kind: &str,
        params: &serde_json::Value,
    ) -> Result<ActionPermit, ToolError> {
        self.preview_as(kind, params, &Arc::new(CallControl::new()), true)
    }

    fn preview_as(
        &self,
        kind: &str,
        params: &serde_json::Value,
        control: &Arc<CallControl>,
        operator: bool,
    ) -> Result<ActionPermit, ToolError> {
        let permit_id = new_permit_id();
        // One generation from the plan to the permit, whatever a reload does meanwhile.
        let generation = self.generation();
        // The halt is checked again, with the permit's write, when it is stored.
        let phase = match self.controls() {
            Ok((None, phase)) => Ok(phase),
            Ok((Some(halt), _)) => Err(permit_error(halt.refusal())),
            Err(e) => Err(permit_error(e)),
        };
        let phase = match phase {
            Ok(phase) => phase,
            Err(e) => {
                self.log(self.blocked(&generation, &permit_id, kind, &e))?;
                return Err(e);
            }
        };
        let mut trail = Vec::new();
        let result =
            self.check(&generation, &permit_id, kind, params, (phase, operator), control, &mut trail);
        if let Err(e) = &result {
            // Refused for its input (a kind nothing serves, params the host or the plugin
            // rejects) before any plan existed: no write was decided, so nothing is recorded
            // and no permit id given out — `bardo records` lists decisions, not typos.
            let no_plan = trail.iter().all(|r| matches!(r, AuditEvent::ToolCall { ok: false, .. }));
            if no_plan && matches!(e.code, ErrorCode::InvalidParams | ErrorCode::NotFound) {
                return result;
            }
            trail.push(self.blocked(&generation, &permit_id, kind, e));
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
    fn blocked(&self, generation: &Generation, permit_id: &str, kind: &str, e: &ToolError) -> AuditEvent {
        AuditEvent::ActionBlocked {
            permit_id: permit_id.to_owned(),
            kind: kind.to_owned(),
            tool: generation.planner().write_tool(kind).map(|tool| tool.def.name.clone()),
            code: e.code.as_str().into(),
            reason: e.message.clone(),
        }
    }

    #[expect(clippy::too_many_arguments, reason = "one preview's parts, passed down once")]
    fn check(
        &self,
        generation: &Generation,
        permit_id: &str,
        kind: &str,
        params: &serde_json::Value,
        (phase, operator): (Phase, bool),
        control: &Arc<CallControl>,
        trail: &mut Vec<AuditEvent>,
    ) -> Result<ActionPermit, ToolError> {
        let entry = self.route(generation.planner().as_ref(), kind)?;
        let tool = entry.def.name.clone();
        let chain_id = params["chain_id"].as_u64().ok_or_else(|| {
            let message = match params.get("chain_id") {
                None => "`chain_id` is required for a write".to_owned(),
                Some(v) => format!("`chain_id` must be a chain id, a whole number such as 31337 (got {v})"),
            };
            ToolError::new(ErrorCode::InvalidParams, message)
        })?;
        let evm = &generation.services().evm;
        let sender = match (evm.address(chain_id), evm.chains.get(chain_id)) {
            (Some(sender), _) => sender,
            // A wallet, but no node for this chain: the chain is what is missing.
            (None, Err(e)) if evm.wallet.is_some() => {
                let configured: Vec<String> = evm.chains.ids().map(|id| id.to_string()).collect();
                return Err(ToolError::new(
                    ErrorCode::ChainNotSupported,
                    format!("{e} (it is configured for chains [{}])", configured.join(", ")),
                ));
            }
            (None, _) => {
                return Err(ToolError::new(
                    ErrorCode::WalletNotConfigured,
                    format!(
                        "no wallet for chain {chain_id}; set BARDO_PRIVATE_KEY or [signer] in bardo.toml"
                    ),
                ));
            }
        };
        self.publish(|| GolemEvent::ToolExecutionStart {
            tool: tool.clone(),
            total_steps: entry.def.progress_steps.len() as u32,
            tick_budget_ms: entry.def.tick_budget.millis(),
        });
        let report = generation.planner().plan(&tool, &params.to_string(), control);
        // The plugin's progress steps, named from its ToolDef.
        for e in &report.events.events {
            if let bardo_core::tool::ToolEvent::Progress { step, .. } = e {
                let name = bardo_runtime::plugin::step_name(&entry.def.progress_steps, *step);
                self.publish(|| GolemEvent::ToolExecutionUpdate { tool: tool.clone(), step: name.clone() });
            }
        }
        self.publish_end(&tool, report.result.is_ok(), &report.stats);
        trail.push(AuditEvent::ToolCall {
            tool: tool.clone(),
            phase: "plan".into(),
            ok: report.result.is_ok(),
            generation: Some(generation.number()),
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
            tool: entry.def,
            chain_id,
            sender,
            plan: &plan,
            phase,
            operator,
        };
        let hooks = generation.hooks();
        let probes = hooks.after.iter().flat_map(|h| h.probes(&proposal)).collect();
        let mut found = Findings { probes, ..Findings::default() };
        let chain = hooks
            .before
            .iter()
            .map(|h| h.as_ref())
            .chain(std::iter::once(&hooks.simulator as &dyn SafetyHook))
            // Always right after the simulation, whatever the configuration: the plan's claims
            // against the change set derived from it, before anything values or counts them.
            .chain(std::iter::once(&HallucinationDetector as &dyn SafetyHook))
            .chain(hooks.after.iter().map(|h| h.as_ref()));
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
        // Valued at the host's prices, for the confirmation policy and the person it asks.
        let spend_usd = hooks
            .valuer
            .as_ref()
            .and_then(|v| crate::hooks::spending_limiter::valued_spend(v, chain_id, &found).ok())
            .map(|micro| micro as f64 / 1e6);
        let high_risk_approval = found.exposure.as_ref().is_some_and(|e| e.high_risk);
        let worst_case = std::mem::take(&mut found.worst_case);
        let bridged = std::mem::take(&mut found.bridged);
        let hold = found.hold.take();
        let sim = found
            .simulation
            .ok_or_else(|| ToolError::new(ErrorCode::Internal, "the plan was not simulated"))?;
        let balance_changes = balance_changes(hooks.valuer.as_ref(), chain_id, &sim.changes);
        // The Safe's on-chain cage, as the simulation just ran it: sealed into the permit.
        let policy_hash = match generation.services().evm.safe_of(sender) {
            Some(safe) => Some(
                crate::cage::read(generation.services(), chain_id, safe.safe, false)
                    .map_err(|e| {
                        ToolError::new(ErrorCode::Rpc, format!("cannot read the Safe's PolicyCage: {e}"))
                    })?
                    .hash,
            ),
            None => None,
        };
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
            risk_tier: plan_risk(entry.def.risk_tier, &plan, high_risk_approval),
            plan,
            created_at: (self.clock)(),
            ttl: self.ttl,
            audit_record: None,
            planned_on: Some(PlannedOn {
                instance: self.instance.clone(),
                generation: generation.number(),
                plugin: entry.plugin.to_owned_id(),
                profile: generation.host().map(|h| h.profile().name().to_owned()),
            }),
            confirmation: self.holds_spend(spend_usd).or(hold),
            operator,
            policy_hash,
            spend_usd,
            balance_changes,
            worst_case,
            bridged,
        };
        trail.push(AuditEvent::PermitCreated {
            permit_id: permit.permit_id.clone(),
            kind: kind.to_owned(),
            tool,
            simulation_hash: permit.simulation_hash.to_string(),
            generation: Some(generation.number()),
            planned_by: Some(entry.plugin.to_owned_id()),
        });
        Ok(permit)
    }
}

/// The wallet's balance changes in `changes`, each valued where `valuer` can.
fn balance_changes(valuer: Option<&Valuer>, chain_id: u64, changes: &ChangeSet) -> Vec<BalanceChange> {
    changes
        .changes
        .iter()
        .filter_map(|c| match c {
            Change::Balance { asset, delta } => Some((*asset, *delta)),
            _ => None,
        })
        .map(|(asset, delta)| {
            let usd = valuer.and_then(|v| {
                match asset {
                    Some(token) => v.signed_usd(chain_id, token, delta),
                    None => v.signed_native_usd(chain_id, delta),
                }
                .ok()
            });
            let (symbol, decimals) = valuer.map(|v| v.label(chain_id, asset)).unwrap_or_default();
            let usd = usd.map(|micro| micro as f64 / 1e6);
            BalanceChange { asset, delta: delta.to_string(), usd, symbol, decimals }
        })
        .collect()
}

fn new_permit_id() -> String {
    let mut bytes = [0u8; 16];
    rand_bytes(&mut bytes);
    format!("permit-{}", hex::encode(bytes))
}

/// The risk of a plan: its tool's, raised to High when any of its calls goes through a V4 pool
/// with a hook (the specification: "LP … V4 hooks: High") or it leaves approvals worth more than
/// `[safety] approval_high_risk_usd` — read from the calls and the simulation, not from
/// anything the plugin says about them.
fn plan_risk(tool: RiskTier, plan: &WritePlan, high_risk_approval: bool) -> RiskTier {
    if scope::v4_hooks(&plan.calls).is_empty() && !high_risk_approval {
        tool
    } else {
        tool.max(RiskTier::High)
    }
}
