//! What the audit chain records: one [`AuditEvent`] per record.

use serde::Serialize;

/// What happened.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "type")]
pub enum AuditEvent {
    /// A preview passed every check and a permit was issued.
    PermitCreated {
        /// The permit.
        permit_id: String,
        /// The action kind asked for.
        kind: String,
        /// The write tool that planned it.
        tool: String,
        /// The hash of the simulation it was issued on.
        simulation_hash: String,
        /// The write path's generation that planned it (see `Reloaded`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        generation: Option<u64>,
        /// The component that planned it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        planned_by: Option<crate::planner::PluginId>,
    },
    /// A safety hook decided on a plan.
    HookDecision {
        /// The write tool whose plan was checked.
        tool: String,
        /// The hook.
        hook: String,
        /// Whether it let the plan through.
        allowed: bool,
        /// Why it rejected the plan, if it did.
        reason: Option<String>,
    },
    /// A plugin call on the write path (`plan` or `verify`).
    ToolCall {
        /// The tool called.
        tool: String,
        /// `plan` or `verify`.
        phase: String,
        /// Whether it answered without an error.
        ok: bool,
        /// The write path's generation it ran on: a verify runs on the one that planned.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        generation: Option<u64>,
    },
    /// A preview was refused before any permit was issued (its action record: blocked).
    ActionBlocked {
        /// The id the permit would have had.
        permit_id: String,
        /// The action kind asked for.
        kind: String,
        /// The write tool that serves the kind, if one does.
        tool: Option<String>,
        /// The error code.
        code: String,
        /// Why.
        reason: String,
    },
    /// An executed write's outcome record: expected against actual, P&L and gas in USD.
    OutcomeRecorded {
        /// The permit it executed under.
        permit_id: String,
        /// Gas paid, USD (none: the host could not price the native coin).
        gas_cost_usd: Option<f64>,
        /// The outcome.
        outcome: crate::records::OutcomeRecord,
    },
    /// A permit was taken for execution (once only).
    PermitConsumed {
        /// The permit.
        permit_id: String,
        /// The write path's generation that executes it: the one that planned it while this
        /// process holds it, else the current one (serving the same component).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        generation: Option<u64>,
    },
    /// A permit's TTL ran out before it was committed.
    PermitExpired {
        /// The permit.
        permit_id: String,
    },
    /// A preview or a commit was refused.
    PermitRefused {
        /// The permit (or the id the preview would have had).
        permit_id: String,
        /// The error code.
        code: String,
        /// Why.
        reason: String,
    },
    /// A permit was cancelled.
    PermitCancelled {
        /// The permit.
        permit_id: String,
    },
    /// An operator with the host key accepted the fleet's streams as they are now, after this
    /// host halted on tampering with them (`bardo fleet reanchor`).
    FleetReanchored {
        /// Why, as the operator said.
        reason: String,
        /// What the host anchored before (and why it had halted), JSON.
        before: String,
        /// What it anchors now, JSON.
        now: String,
    },
    /// A permit taken for a commit that recorded no transaction (refused, cancelled or
    /// interrupted before its first send) is open again until it expires, its spend reserved
    /// again: the refusal just before says why.
    PermitReopened {
        /// The permit.
        permit_id: String,
    },
    /// A human confirmed a permit the confirmation policy holds (`[safety] confirm`).
    PermitConfirmed {
        /// The permit.
        permit_id: String,
        /// Who: the principal as the channel knows it (`operator (bardo confirm, uid 1000)`,
        /// `operator token`, the MCP client's name).
        by: String,
        /// Through which channel of `[safety.confirm] via` (absent in records of earlier
        /// versions, when `by` named the front end).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        channel: Option<String>,
    },
    /// A human declined a permit the confirmation policy holds, or no one answered in time
    /// (`timed_out`: the permit stays open for another front end to confirm).
    ConfirmationDeclined {
        /// The permit.
        permit_id: String,
        /// Where it was asked.
        by: String,
        /// No answer came in time (rather than a decline).
        timed_out: bool,
        /// Why, in the person's words (the approval page asks).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
    },
    /// An A2A task changed state; a write's task names its permit.
    TaskStatus {
        /// The task.
        task_id: String,
        /// Its new state.
        state: String,
        /// The permit it waits on or executed, if it is a write.
        permit_id: Option<String>,
    },
    /// A permitted transaction, signed and recorded before it is sent (write-ahead): the host
    /// sends nothing it has not recorded first. Its receipt's `ActionExecuted` follows, or, after
    /// a crash, recovery resolves it against the chain (`TransactionReplaced`, or the receipt).
    TransactionSigned {
        /// The permit it executes under.
        permit_id: String,
        /// Which of the plan's transactions (0-based) of how many.
        step: u32,
        /// How many transactions the plan sends.
        steps: u32,
        /// The chain it goes to.
        chain_id: u64,
        /// The account that signed it (for a Safe, its owner's key).
        from: String,
        /// Its nonce.
        nonce: u64,
        /// Its hash.
        tx_hash: String,
        /// The signed transaction, EIP-2718 bytes (hex): what recovery can send again.
        raw: String,
    },
    /// Recovery found a recorded transaction's nonce taken by another transaction: it never ran.
    TransactionReplaced {
        /// The permit it was to execute under.
        permit_id: String,
        /// The recorded transaction.
        tx_hash: String,
        /// The nonce another transaction took.
        nonce: u64,
    },
    /// A permitted transaction was sent and its receipt came back.
    ActionExecuted {
        /// The permit it executed under.
        permit_id: String,
        /// The transaction.
        tx_hash: String,
        /// Gas it used.
        gas_used: u64,
        /// Whether it succeeded (a revert is recorded too).
        success: bool,
    },
    /// A bridge deposit the permit made, followed to its destination: filled there (by whom,
    /// in which transaction), or still pending when the commit stopped waiting.
    BridgeFill {
        /// The permit whose deposit it is.
        permit_id: String,
        /// The origin chain and the deposit's id there.
        origin_chain_id: u64,
        /// The deposit's id on the origin's SpokePool.
        deposit_id: String,
        /// The destination chain.
        destination_chain_id: u64,
        /// `filled` or `pending`.
        status: String,
        /// The fill's transaction on the destination, when filled.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        fill_tx: Option<String>,
        /// What the fill delivered, base units of the output token.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        delivered: Option<String>,
    },
    /// What executed differs from what the plan declared (or could not be read).
    OutcomeMismatch {
        /// The permit it executed under.
        permit_id: String,
        /// Each difference, naming the asset or authority.
        differences: Vec<String>,
    },
    /// An emergency halt: every open permit revoked.
    Halted {
        /// Why, as the agent or operator said.
        reason: String,
        /// The permits it revoked.
        revoked: Vec<String>,
    },
    /// A reload installed a new generation: from here on previews plan on it; permits planned
    /// on an earlier one still commit on theirs.
    Reloaded {
        /// The new generation's number.
        generation: u64,
    },
    /// An operator lifted the emergency halt (`bardo resume`).
    Resumed {
        /// Why the host had been halted.
        reason: String,
        /// When it had been halted, Unix milliseconds.
        halted_at_ms: u64,
    },
}
