//! Commit: a permit re-checked against today's policy, re-simulated at its block, its spend
//! counted, the capability minted, broadcast, and the receipts verified against the plan.

use super::broadcast::broadcast;
use super::capability::Capability;
use super::phase::severity;
use super::{Approved, WritePath, WriteResult, denied, permit_error, refusal};
use crate::audit_log::{self, AuditEvent};
use crate::generation::Generation;
use crate::hooks::{Decision, Findings, Proposal, simulation_hash};
use crate::permit::{ActionPermit, PermitError};
use crate::{declared, records};
use alloy::primitives::{Address, I256, U256};
use alloy::providers::Provider;
use alloy::rpc::types::TransactionReceipt;
use bardo_core::error::{ErrorCode, ToolError};
use bardo_core::tool::ToolDef;
use bardo_evm::changes::ChangeSet;
use bardo_runtime::plugin::CallControl;
use std::collections::BTreeSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, SystemTime};

/// How long a sender's claim on a permit it broadcasts holds without renewal (renewed every
/// third of it): the longest a crashed sender's permit stays unreconciled.
const SENDING_LEASE: Duration = Duration::from_secs(30);

/// How long a commit waits for another commit sending for the same wallet to finish.
const WALLET_WAIT: Duration = Duration::from_secs(60);

/// How long an executed commit's records are retried while their store is unavailable before
/// the result is returned without them (`WriteResult::unrecorded`).
const RECORD_AFTER_BROADCAST: Duration = Duration::from_secs(15);

/// An audit event's type, as its record names it.
fn event_kind(event: &AuditEvent) -> String {
    serde_json::to_value(event).ok().and_then(|v| v["type"].as_str().map(str::to_owned)).unwrap_or_default()
}

impl WritePath {
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
        // Single use is the log's word too: a commit recorded since the preview (the store
        // rolled back behind this host) refuses it, and halts the host as tampered.
        let recorded = |at: &audit_log::RecordAt| {
            let store = |e: audit_log::AuditError| PermitError::Store(e.to_string());
            if !self.audit.recorded(at, &format!("\"permit_id\":\"{permit_id}\"")).map_err(store)? {
                return Err(PermitError::Unrecorded(permit_id.to_owned()));
            }
            match self.audit.used_since(at, permit_id).map_err(store)? {
                Some(record) => Err(PermitError::UsedOnRecord { id: permit_id.to_owned(), record }),
                None => Ok(()),
            }
        };
        // Claimed as it is taken, long enough to wait for the wallet and re-simulate: if this
        // process dies before it sends, the next start gives the permit back (see `recover`).
        let claim = (self.instance.as_str(), (self.clock)() + SENDING_LEASE + WALLET_WAIT);
        let permit = match self.permits.take_then(
            permit_id,
            (self.clock)(),
            Some(claim),
            recorded,
            |p| self.holds(p),
            |_| self.settle(permit_id, true),
        ) {
            Ok(p) => p,
            // Still open, waiting for a person: nothing to record yet.
            Err(e @ PermitError::Unconfirmed { .. }) => return Err(permit_error(e)),
            Err(e @ PermitError::UsedOnRecord { .. }) => {
                let error = permit_error(e);
                self.halt_tampered(&error.message);
                let _ = self.log(AuditEvent::PermitRefused {
                    permit_id: permit_id.to_owned(),
                    code: error.code.as_str().into(),
                    reason: error.message.clone(),
                });
                return Err(error);
            }
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
        if let Some(episodes) = &self.episodes {
            // The preview may have run in another process: its episode needs the action.
            episodes.note(permit_id, &permit.kind, &permit.tool);
        }
        // One generation from here to the outcome: the one that planned the permit while this
        // write path holds it, so a reload during the broadcast cannot change who verifies.
        let generation = self.generation_of(&permit);
        // No burn without a send: whatever stops this commit before its first transaction is
        // recorded gives the permit back, open, with its spend released, and says so.
        let give_back = |reason: &str| -> (bool, String) {
            match self.give_back(permit_id) {
                true => {
                    (true, format!("{reason}; nothing was sent: the permit is open again, commit it again"))
                }
                false => (false, format!("{reason}; nothing was sent")),
            }
        };
        let consumed = AuditEvent::PermitConsumed {
            permit_id: permit_id.to_owned(),
            generation: Some(generation.number()),
        };
        if let Err(e) = self.log(consumed) {
            return Err(ToolError { message: give_back(&e.message).1, ..e });
        }
        let refuse = |code: ErrorCode, reason: String| -> Result<WriteResult, ToolError> {
            let (open, reason) = give_back(&reason);
            self.log(AuditEvent::PermitRefused {
                permit_id: permit_id.to_owned(),
                code: code.as_str().into(),
                reason: reason.clone(),
            })?;
            if open {
                self.log(AuditEvent::PermitReopened { permit_id: permit_id.to_owned() })?;
            }
            // An unavailable store may answer the retry, or a fresh preview, later.
            Err(refusal(code, reason))
        };
        let tool = match self.recheck(&generation, &permit) {
            Ok(tool) => tool,
            Err(e) => return refuse(e.code, e.message),
        };
        // One sender per wallet (in the fleet, with `[cluster]`), held from before the
        // re-simulation to the last receipt: the plan checked is the plan sent against that
        // state, and this commit's transactions take consecutive nonces no other commit takes.
        let wallet_until = || SystemTime::now() + SENDING_LEASE;
        // The key that sends (for a Safe, its owner's): whose nonces the transactions take.
        let key = generation.services().evm.signer_of(permit.sender);
        let wallet = match self.permits.wallet_lease(
            permit.chain_id,
            key,
            &self.instance,
            wallet_until,
            WALLET_WAIT,
        ) {
            Ok(lease) => lease,
            Err(e) => {
                let e = permit_error(e);
                return refuse(e.code, e.message);
            }
        };
        // A commit for this wallet that died mid-broadcast is resolved before this one
        // simulates and reads the nonce (its claim lapsed: nobody else is sending it).
        if self.permits.unfinished((self.clock)()).is_ok_and(|u| u.iter().any(|(id, ..)| id != permit_id))
            && let Err(e) = self.recover()
        {
            return refuse(e.code, format!("cannot resolve an interrupted commit first ({})", e.message));
        }
        let declared = declared::Declared::parse(&permit.plan.expected_outcome);
        let proposal = Proposal {
            declared: &declared,
            permit_id: &permit.permit_id,
            kind: &permit.kind.replace('-', "_"),
            tool: &tool,
            chain_id: permit.chain_id,
            sender: permit.sender,
            plan: &permit.plan,
            phase: self.phase(),
            operator: permit.operator,
        };
        if let Some(sealed) = permit.policy_hash {
            let safe =
                generation.services().evm.safe_of(permit.sender).map(|s| s.safe).unwrap_or(permit.sender);
            match crate::cage::read(generation.services(), permit.chain_id, safe, true) {
                Ok(now) if now.hash == sealed => {}
                Ok(_) => {
                    return refuse(
                        ErrorCode::Denied,
                        "the Safe's PolicyCage changed since the preview (its guard or rules differ from the permit's policy_hash); preview the action again".into(),
                    );
                }
                Err(e) => return refuse(ErrorCode::Rpc, format!("cannot read the Safe's PolicyCage: {e}")),
            }
        }
        let hooks = generation.hooks();
        let probes: Vec<_> = hooks.after.iter().flat_map(|h| h.probes(&proposal)).collect();
        // At the preview's timestamp: only a change of state, not the passing of time (interest
        // accruing, oracle slots), makes the re-simulation differ.
        let resimulated =
            hooks.simulator.run(permit.chain_id, permit.sender, &permit.plan, &probes, permit.simulated_at);
        let sim = match resimulated {
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
        // What the logs cannot show (a lending pool's prices) is checked again on this state.
        let mut found = Findings { simulation: Some(sim), probes, ..Findings::default() };
        for hook in hooks.after.iter().filter(|h| h.on_resimulation()) {
            if let Decision::Reject { code, reason } = hook.check(&proposal, &mut found) {
                return refuse(code, format!("{} (at commit): {reason}", hook.name()));
            }
        }
        let Some(sim) = found.simulation else {
            return refuse(ErrorCode::Internal, "the re-simulation was lost by a hook".into());
        };
        // A halt during the re-simulation still stops it: nothing has been sent yet.
        if let Err(e) = self.refuse_if_halted() {
            return refuse(e.code, e.message);
        }
        // A caller's cancel stops the commit until its first transaction is recorded (checked
        // again there): from then on it finishes what it sends.
        let cancelled = || format!("commit of `{permit_id}` cancelled by its caller");
        crate::failpoint::hit(permit_id, "simulated");
        if control.is_cancelled() {
            return refuse(ErrorCode::Cancelled, cancelled());
        }
        let gas = sim.outcomes.iter().map(|o| o.gas_used).collect();
        // Where the receipts' check looks for balances besides the logs' contracts.
        let assets: BTreeSet<Address> = sim
            .changes
            .balances()
            .filter_map(|(asset, _)| asset)
            .chain(permit.plan.calls.iter().map(|c| c.to))
            .collect();
        // Where the wallet's nonce stood, and that this process is sending it: if it dies
        // mid-broadcast, a later start resolves what the log says it sent (see `recover`) once
        // this claim lapses. Nothing is sent without the claim recorded.
        let nonce = match self.pending_nonce(&generation, permit.chain_id, permit.sender) {
            Ok(nonce) => nonce,
            Err(e) => return refuse(e.code, format!("{}; nothing was sent, preview again", e.message)),
        };
        let until = || (self.clock)() + SENDING_LEASE;
        if let Err(e) = self.permits.mark_sending(permit_id, nonce, &self.instance, until()) {
            // Given back by a recovery while this commit waited: it is not this commit's to give.
            if let PermitError::ClaimLost(_) = e {
                return Err(permit_error(e));
            }
            let e = permit_error(e);
            return refuse(
                e.code,
                format!(
                    "cannot record the broadcast's start ({}); nothing was sent, preview again",
                    e.message
                ),
            );
        }
        let capability = Capability::mint(Approved { permit, gas });
        // Whether a transaction of this commit was recorded (and so may have been sent).
        let signed = AtomicBool::new(false);
        let (stop, stopped) = std::sync::mpsc::channel::<()>();
        let held = &wallet;
        let sent = std::thread::scope(|s| {
            // The claim is renewed while the broadcast runs, however long the receipts take.
            s.spawn(move || {
                while let Err(std::sync::mpsc::RecvTimeoutError::Timeout) =
                    stopped.recv_timeout(SENDING_LEASE / 3)
                {
                    if let Err(e) = self.permits.renew_sending(permit_id, &self.instance, until()) {
                        tracing::warn!("{permit_id}: cannot renew the claim on its broadcast ({e})");
                    }
                    if let Err(e) = held.renew(wallet_until()) {
                        tracing::warn!("{permit_id}: cannot renew its wallet's lease ({e})");
                    }
                }
            });
            let stopped_by_caller =
                || control.is_cancelled().then(|| ToolError::new(ErrorCode::Cancelled, cancelled()));
            let sent = broadcast(capability, generation.services(), nonce, &stopped_by_caller, &|e| {
                let signing = matches!(e, AuditEvent::TransactionSigned { .. });
                self.log(e)?;
                signed.store(signing || signed.load(Ordering::SeqCst), Ordering::SeqCst);
                Ok(())
            });
            drop(stop);
            sent
        });
        drop(wallet);
        // The claim stays until the outcome is recorded (a recovery meanwhile would record its
        // own): renewed once more for the records, which are bounded well inside it.
        let finished = || {
            if let Err(e) = self.permits.mark_finished(permit_id) {
                tracing::warn!(
                    "{permit_id}: cannot record the commit's end ({e}); its claim lapses and a later start re-checks it"
                );
            }
        };
        let (permit, receipts, mut unrecorded) = match sent {
            Ok(sent) => sent,
            Err(e) if !signed.load(Ordering::SeqCst) => {
                finished();
                return refuse(e.code, e.message);
            }
            Err(e) => {
                finished();
                if e.code == ErrorCode::PartiallyExecuted {
                    // Half a plan is on chain: audited as a divergence, and the host more careful.
                    let _ = self.log(AuditEvent::OutcomeMismatch {
                        permit_id: permit_id.to_owned(),
                        differences: vec![e.message.clone()],
                    });
                    self.lower_after_divergence();
                }
                // Recorded and perhaps sent: what the chain says of each transaction (and of the
                // plan, if nothing said yet) is recorded now if it can be, else at the next start.
                if let Err(r) = self.recover() {
                    tracing::warn!("{permit_id}: resolving its recorded transactions later ({})", r.message);
                }
                return Err(e);
            }
        };
        if let Err(e) = self.permits.renew_sending(permit_id, &self.instance, until()) {
            tracing::warn!("{permit_id}: cannot renew the claim for its records ({e})");
        }
        crate::failpoint::hit(permit_id, "executed");
        // From here on the transactions are on chain: a store that fails now costs a record,
        // never the caller's receipts (each record is retried while its store is unavailable).
        let deadline = std::time::Instant::now() + RECORD_AFTER_BROADCAST;
        let mut record = |event: AuditEvent| self.record_executed(event, deadline, &mut unrecorded);
        let planner = generation.planner();
        let report = planner.verify(&permit.tool, &permit.params.to_string(), permit.chain_id, &receipts);
        self.publish_end(&permit.tool, report.result.is_ok(), &report.stats);
        record(AuditEvent::ToolCall {
            tool: permit.tool.clone(),
            phase: "verify".into(),
            ok: report.result.is_ok(),
            generation: Some(generation.number()),
        });
        let actual = match report.result {
            Ok(actual) => actual,
            Err(e) => serde_json::json!({"verify_failed": e.to_string()}),
        };
        let checked = self.check_receipts(&generation, &permit, &receipts, &assets, &mut record);
        let schema_version = planner.write_tool_named(&permit.tool).map_or(0, |t| t.def.schema_version);
        let mut result = WriteResult {
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
            unrecorded: Vec::new(),
            bridge: Vec::new(),
        };
        let valuer = generation.hooks().valuer.as_ref();
        record(outcome_event(valuer, permit.chain_id, &result, &receipts));
        // A bridge deposit is done when it arrives: followed to its fill, each recorded.
        for bridged in &permit.bridged {
            let fill = crate::hooks::bridge_guard::follow(
                generation.services(),
                permit.chain_id,
                bridged,
                &receipts,
                self.bridge_wait,
            );
            record(fill.event(&result.permit_id, permit.chain_id));
            result.bridge.push(fill);
        }
        finished();
        result.unrecorded = unrecorded;
        Ok(result)
    }

    /// Audit `event` of a commit whose transactions were sent: retried while the store is
    /// unavailable until `deadline`; what could not be written is added to `unrecorded` (the
    /// caller still gets its receipts, and the operator a log line).
    fn record_executed(&self, event: AuditEvent, deadline: std::time::Instant, unrecorded: &mut Vec<String>) {
        loop {
            match self.log(event.clone()) {
                Ok(()) => return,
                Err(e) if e.retryable && std::time::Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(500));
                }
                Err(e) => {
                    tracing::error!("an executed commit's record was not written: {e}: {event:?}");
                    unrecorded.push(format!("{}: {}", event_kind(&event), e.message));
                    return;
                }
            }
        }
    }

    /// Derive the wallet's change set from the receipts, as a simulation's is derived, and hold
    /// it to what the permit's plan declared. A divergence lowers the phase (to `cautious` by
    /// default) and is audited; a change set the host could not read leaves the plugin's word
    /// as the only account, and says so.
    fn check_receipts(
        &self,
        generation: &Generation,
        permit: &ActionPermit,
        receipts: &[TransactionReceipt],
        assets: &BTreeSet<Address>,
        record: &mut dyn FnMut(AuditEvent),
    ) -> Checked {
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        let chains = &generation.services().evm.chains;
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
                record(AuditEvent::OutcomeMismatch {
                    permit_id: permit.permit_id.clone(),
                    differences: vec![reason.clone()],
                });
                return Checked { changes: None, mismatch: vec![reason] };
            }
        };
        let mut mismatch = match declared::Declared::parse(&permit.expected_outcome) {
            Ok(Some(declared)) => declared.mismatches(&changes),
            Ok(None) => vec!["the plan declared no balance_changes".to_owned()],
            Err(reason) => vec![reason],
        };
        // Worse than the worst case the calls' bounds were to enforce: the chain did not.
        if let Some(valuer) = generation.hooks().valuer.as_ref() {
            let gas: U256 = receipts
                .iter()
                .filter(|r| r.from == permit.sender)
                .map(|r| U256::from(r.gas_used) * U256::from(r.effective_gas_price))
                .sum();
            mismatch.extend(crate::hooks::on_chain_bounds::shortfalls(
                valuer,
                permit.chain_id,
                &permit.worst_case,
                &changes,
                gas,
            ));
        }
        if !mismatch.is_empty() {
            record(AuditEvent::OutcomeMismatch {
                permit_id: permit.permit_id.clone(),
                differences: mismatch.clone(),
            });
            self.lower_after_divergence();
        }
        Checked { changes: Some(changes), mismatch }
    }

    /// Lower the phase to `[safety] mismatch_phase` after an execution diverged from its plan.
    fn lower_after_divergence(&self) {
        // Lowering only: a halted or already more careful host stays as it is.
        let current = self.phase_as_set();
        let to =
            if severity(self.mismatch_phase) > severity(current) { self.mismatch_phase } else { current };
        // Lowering only; a halt refuses it and already stops every write.
        let _ = self.lower_phase(to);
    }

    /// The nonce of the key that sends for `wallet` (a Safe's owner key, else the wallet),
    /// counting transactions the node holds but has not mined.
    fn pending_nonce(&self, generation: &Generation, chain: u64, wallet: Address) -> Result<u64, ToolError> {
        let wallet = generation.services().evm.signer_of(wallet);
        let chains = &generation.services().evm.chains;
        let client =
            chains.get(chain).map_err(|e| ToolError::new(ErrorCode::ChainNotSupported, e.to_string()))?;
        chains
            .block_on(client.provider().get_transaction_count(wallet).pending().into_future())
            .map_err(|e| ToolError::retryable(ErrorCode::Rpc, format!("reading the wallet's nonce: {e}")))
    }

    /// Settle what a crash interrupted (see [`Self::recover`]): the permits whose commit sent
    /// nothing, released.
    pub fn reconcile(&self) -> Result<Vec<String>, ToolError> {
        self.recover().map(|r| r.released)
    }

    /// What a permit must still pass at commit, whoever wrote it into the store: this host's
    /// wallet signs it; its write tool is still served (by the current generation: an operator
    /// who unloads a plugin stops its permits) and, on the generation that executes it, by the
    /// component that planned it; and every hook that runs at commit allows it in the current
    /// phase.
    fn recheck(&self, generation: &Generation, permit: &ActionPermit) -> Result<ToolDef, ToolError> {
        let signer = generation.services().address(permit.chain_id);
        if signer != Some(permit.sender) {
            let signer = signer.map_or_else(|| "no wallet".to_owned(), |a| a.to_string());
            return Err(denied(format!(
                "permit `{}` is for sender {}, but this host signs on chain {} with {signer}; preview again",
                permit.permit_id, permit.sender, permit.chain_id
            )));
        }
        // Why the tool is not served: another profile than the preview's, or an unloaded plugin.
        let running = generation.host().map(|h| h.profile().name().to_owned());
        let previewed = permit.planned_on.as_ref().and_then(|on| on.profile.clone());
        let gone = || match (&previewed, &running) {
            (Some(previewed), Some(running)) if previewed != running => denied(format!(
                "permit `{}` was previewed under profile `{previewed}`, and this host runs `{running}`, \
                 which has no `{}`: commit it under `{previewed}` (`bardo commit` picks it by itself)",
                permit.permit_id, permit.tool
            )),
            _ => denied(format!(
                "write tool `{}` of permit `{}` is no longer loaded (its plugin was unloaded or refused): \
                 this permit cannot be committed; `bardo tools` shows what is served",
                permit.tool, permit.permit_id
            )),
        };
        self.generation().planner().write_tool_named(&permit.tool).ok_or_else(gone)?;
        let tool = generation.planner().write_tool_named(&permit.tool).ok_or_else(gone)?;
        if let Some(on) = &permit.planned_on
            && !tool.plugin.is(&on.plugin)
        {
            return Err(denied(format!(
                "permit `{}` was planned by {}, and `{}` is now served by {}; preview again",
                permit.permit_id,
                on.plugin,
                permit.tool,
                tool.plugin.to_owned_id()
            )));
        }
        let declared = declared::Declared::parse(&permit.plan.expected_outcome);
        let proposal = Proposal {
            declared: &declared,
            permit_id: &permit.permit_id,
            kind: &permit.kind.replace('-', "_"),
            tool: tool.def,
            chain_id: permit.chain_id,
            sender: permit.sender,
            plan: &permit.plan,
            phase: self.phase(),
            operator: permit.operator,
        };
        let mut found = Findings::default();
        for hook in generation.hooks().before.iter().filter(|h| h.at_commit()) {
            if let Decision::Reject { code, reason } = hook.check(&proposal, &mut found) {
                return Err(refusal(code, format!("{} (at commit): {reason}", hook.name())));
            }
        }
        Ok(tool.def.clone())
    }
}

/// What the host read from the receipts.
struct Checked {
    changes: Option<ChangeSet>,
    mismatch: Vec<String>,
}

/// The outcome record of an executed write: gas and the wallet's value change in USD at
/// today's prices (none where an asset cannot be priced, or without a valuer: never a guess).
fn outcome_event(
    valuer: Option<&crate::valuation::Valuer>,
    chain: u64,
    result: &WriteResult,
    receipts: &[TransactionReceipt],
) -> AuditEvent {
    let usd = |micro: i128| micro as f64 / 1e6;
    let wei: u128 = receipts.iter().map(|r| u128::from(r.gas_used) * r.effective_gas_price).sum();
    let gas = valuer.and_then(|v| v.signed_native_usd(chain, -I256::try_from(wei).ok()?).ok());
    // The derived change set leaves gas out (it is added back, to compare with simulations).
    let moved = match (valuer, &result.changes) {
        (Some(v), Some(changes)) => changes
            .balances()
            .map(|(asset, delta)| match asset {
                Some(token) => v.signed_usd(chain, token, delta),
                None => v.signed_native_usd(chain, delta),
            })
            .sum::<Result<i128, String>>()
            .ok(),
        _ => None,
    };
    AuditEvent::OutcomeRecorded {
        permit_id: result.permit_id.clone(),
        gas_cost_usd: gas.map(|g| usd(-g)),
        outcome: records::OutcomeRecord {
            verified: result.ground_truth == "receipt" && result.outcome_mismatch.is_empty(),
            expected: result.expected.clone(),
            actual: result.actual.clone(),
            divergence: result.outcome_mismatch.clone(),
            pnl_impact: moved.zip(gas).map(|(moved, gas)| usd(moved + gas)),
            ground_truth_source: result.ground_truth.into(),
        },
    }
}
