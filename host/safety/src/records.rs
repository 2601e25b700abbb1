//! Action and outcome records (golem-tools-architecture, "DecisionCycleRecord integration"):
//! what became of every write — executed, blocked or deferred — and, for an executed one, how its
//! outcome compares with what was expected.
//!
//! Records are a view over the audit log, not a second store: the log is already durable, shared
//! by every process that writes and hash-linked, so a record cannot be lost or disagree with it.
//! A permit's `PermitCreated` names its kind and tool; its end is `ActionExecuted` (with
//! `OutcomeRecorded`), `PermitRefused` (blocked at commit), `PermitExpired`, `PermitCancelled` or
//! a `Halted` that revoked it (deferred and never run); a preview refused by a check is
//! `ActionBlocked`. A permit with no end yet is deferred, open (`PermitReopened`: a commit gave
//! it back unsent). Each transaction is recorded before it is sent (`TransactionSigned`) and
//! resolved by its receipt (`ActionExecuted`) or another transaction taking its nonce
//! (`TransactionReplaced`): a plan with some of its transactions mined and not all is
//! partially executed; one with a transaction and no resolution yet, sent.

use serde::Serialize;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;

/// What became of a write.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ActionStatus {
    /// Its transactions were sent and mined.
    Executed,
    /// A check refused it, at preview or at commit.
    Blocked,
    /// Permitted but not run: still open, or expired, cancelled or revoked unused.
    Deferred,
    /// Some of its transactions were mined and succeeded, not all: half a plan is on chain.
    PartiallyExecuted,
    /// A transaction was sent and nothing on record says what became of it yet (`bardo
    /// audit-log verify` resolves it from the chain).
    Sent,
}

/// One transaction of a write, as the log tells it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TransactionRecord {
    /// Its hash.
    pub tx_hash: String,
    /// Which of the plan's transactions (from 0), of how many.
    pub step: u32,
    /// How many the plan sends.
    pub steps: u32,
    /// `sent` (no resolution yet), `mined`, `reverted` or `replaced` (its nonce taken by
    /// another transaction: it never ran).
    pub state: String,
}

/// One write, as the decision cycle records it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ActionRecord {
    /// The action kind asked for (`swap`, `supply`, ...).
    pub action_type: String,
    /// The write tool that planned it (none: no tool serves the kind).
    pub tool_name: Option<String>,
    /// The permit (for a refused preview, the id it would have had).
    pub permit_id: String,
    /// The last transaction sent, if any.
    pub tx_hash: Option<String>,
    /// Every transaction mined, in order.
    pub tx_hashes: Vec<String>,
    /// Every transaction signed to be sent, in order, and what became of it.
    pub transactions: Vec<TransactionRecord>,
    /// Executed, blocked or deferred.
    pub status: ActionStatus,
    /// Why it was blocked, or why a deferred one never ran (`expired`, `cancelled`, ...).
    pub block_reason: Option<String>,
    /// Gas paid, in USD at the block's prices (none: not executed, or not priced).
    pub gas_cost: Option<f64>,
    /// When it ended (or was issued, if still open), Unix milliseconds.
    pub time_ms: u64,
    /// The outcome, for an executed write.
    pub outcome: Option<OutcomeRecord>,
}

/// How an executed write's outcome compares with what it expected.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct OutcomeRecord {
    /// The host read the outcome from the receipts and it matches the declaration.
    pub verified: bool,
    /// What the plan expected (its `expected_outcome`).
    pub expected: Value,
    /// What the plugin read from the receipts.
    pub actual: Value,
    /// How what executed differs from the declaration (empty: it matches).
    pub divergence: Vec<String>,
    /// The wallet's value change, USD, gas included (none: an asset could not be priced).
    pub pnl_impact: Option<f64>,
    /// `receipt` when the host derived the changes from the receipts, `plugin` when it could not.
    pub ground_truth_source: String,
}

/// Every write the audit log at `path` knows of, oldest first. A missing log has none.
pub fn read(path: &Path) -> Result<Vec<ActionRecord>, String> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(format!("reading {}: {e}", path.display())),
    };
    let mut lines = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let v: Value =
            serde_json::from_str(line).map_err(|e| format!("{} line {}: {e}", path.display(), n + 1))?;
        lines.push(v);
    }
    Ok(fold(&lines))
}

fn text(v: &Value, key: &str) -> String {
    v[key].as_str().unwrap_or_default().to_owned()
}

/// Records from audit records (`{time_ms, event: {type, ...}}`), in log order.
pub fn fold(log: &[Value]) -> Vec<ActionRecord> {
    let mut records: Vec<ActionRecord> = Vec::new();
    let mut by_permit: BTreeMap<String, usize> = BTreeMap::new();
    for line in log {
        let (e, time_ms) = (&line["event"], line["time_ms"].as_u64().unwrap_or_default());
        let id = text(e, "permit_id");
        let mut end = |id: &str, status: ActionStatus, reason: Option<String>| {
            if let Some(&i) = by_permit.get(id) {
                let r = &mut records[i];
                // A permit ends once: a refused second commit of an executed one changes nothing.
                if r.status == ActionStatus::Deferred && r.block_reason.is_none() {
                    (r.status, r.block_reason, r.time_ms) = (status, reason, time_ms);
                }
            }
        };
        match e["type"].as_str().unwrap_or_default() {
            "PermitCreated" => {
                by_permit.insert(id.clone(), records.len());
                records.push(ActionRecord {
                    action_type: text(e, "kind"),
                    tool_name: Some(text(e, "tool")),
                    permit_id: id,
                    tx_hash: None,
                    tx_hashes: Vec::new(),
                    transactions: Vec::new(),
                    status: ActionStatus::Deferred,
                    block_reason: None,
                    gas_cost: None,
                    time_ms,
                    outcome: None,
                });
            }
            "ActionBlocked" => records.push(ActionRecord {
                action_type: text(e, "kind"),
                tool_name: e["tool"].as_str().map(str::to_owned),
                permit_id: id,
                tx_hash: None,
                tx_hashes: Vec::new(),
                transactions: Vec::new(),
                status: ActionStatus::Blocked,
                block_reason: Some(text(e, "reason")),
                gas_cost: None,
                time_ms,
                outcome: None,
            }),
            "TransactionSigned" => {
                if let Some(&i) = by_permit.get(&id) {
                    let n = |k: &str| u32::try_from(e[k].as_u64().unwrap_or_default()).unwrap_or_default();
                    let tx = TransactionRecord {
                        tx_hash: text(e, "tx_hash"),
                        step: n("step"),
                        steps: n("steps"),
                        state: "sent".into(),
                    };
                    records[i].transactions.push(tx);
                }
            }
            "ActionExecuted" => {
                if let Some(&i) = by_permit.get(&id) {
                    let r = &mut records[i];
                    let tx = text(e, "tx_hash");
                    let state = if e["success"].as_bool().unwrap_or_default() { "mined" } else { "reverted" };
                    resolve(r, &tx, state);
                    r.tx_hashes.push(tx.clone());
                    (r.tx_hash, r.status, r.time_ms) = (Some(tx), ActionStatus::Executed, time_ms);
                }
            }
            "TransactionReplaced" => {
                if let Some(&i) = by_permit.get(&id) {
                    resolve(&mut records[i], &text(e, "tx_hash"), "replaced");
                }
            }
            "PermitReopened" => {
                if let Some(&i) = by_permit.get(&id) {
                    let r = &mut records[i];
                    (r.status, r.block_reason, r.time_ms) = (ActionStatus::Deferred, None, time_ms);
                }
            }
            "OutcomeRecorded" => {
                if let Some(&i) = by_permit.get(&id) {
                    records[i].gas_cost = e["gas_cost_usd"].as_f64();
                    records[i].outcome = serde_json::from_value(e["outcome"].clone()).ok();
                }
            }
            "PermitRefused" => end(&id, ActionStatus::Blocked, Some(text(e, "reason"))),
            "PermitExpired" => end(&id, ActionStatus::Deferred, Some("expired unused".into())),
            "PermitCancelled" => end(&id, ActionStatus::Deferred, Some("cancelled".into())),
            "Halted" => {
                let why = format!("revoked by an emergency halt: {}", text(e, "reason"));
                for revoked in e["revoked"].as_array().into_iter().flatten().filter_map(Value::as_str) {
                    end(revoked, ActionStatus::Deferred, Some(why.clone()));
                }
            }
            _ => {}
        }
    }
    for r in &mut records {
        r.status = by_transactions(r);
    }
    records
}

/// Mark transaction `tx` of `r` as `state`.
fn resolve(r: &mut ActionRecord, tx: &str, state: &str) {
    if let Some(t) = r.transactions.iter_mut().find(|t| t.tx_hash.eq_ignore_ascii_case(tx)) {
        t.state = state.into();
    }
}

/// What `r`'s transactions say of it: sent while one has no resolution, partially executed
/// with some of its steps (not all) mined and successful; else as its events said.
fn by_transactions(r: &ActionRecord) -> ActionStatus {
    let steps = r.transactions.iter().map(|t| t.steps).max().unwrap_or_default() as usize;
    let succeeded = r.transactions.iter().filter(|t| t.state == "mined").count();
    if r.transactions.iter().any(|t| t.state == "sent") {
        ActionStatus::Sent
    } else if succeeded > 0 && succeeded < steps {
        ActionStatus::PartiallyExecuted
    } else {
        r.status
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn at(t: u64, event: Value) -> Value {
        json!({"time_ms": t, "event": event})
    }

    #[test]
    fn each_permit_ends_once_in_the_records() {
        let outcome = json!({"verified": false, "expected": {"out": "5"}, "actual": {"out": "4"},
            "divergence": ["USDC: 4, declared 5"], "pnl_impact": -1.5, "ground_truth_source": "receipt"});
        let log = [
            at(
                1,
                json!({"type": "PermitCreated", "permit_id": "p1", "tool": "uniswap_execute_swap", "kind": "swap"}),
            ),
            at(
                2,
                json!({"type": "ActionExecuted", "permit_id": "p1", "tx_hash": "0xa", "gas_used": 1, "success": true}),
            ),
            at(
                3,
                json!({"type": "OutcomeRecorded", "permit_id": "p1", "gas_cost_usd": 0.25, "outcome": outcome}),
            ),
            at(
                4,
                json!({"type": "PermitRefused", "permit_id": "p1", "code": "denied", "reason": "already used"}),
            ),
            at(
                5,
                json!({"type": "ActionBlocked", "permit_id": "p2", "kind": "supply", "tool": "aave_supply", "reason": "policy-cage: no"}),
            ),
            at(
                6,
                json!({"type": "PermitCreated", "permit_id": "p3", "tool": "uniswap_execute_swap", "kind": "swap"}),
            ),
            at(7, json!({"type": "PermitExpired", "permit_id": "p3"})),
            at(
                8,
                json!({"type": "PermitCreated", "permit_id": "p4", "tool": "uniswap_execute_swap", "kind": "swap"}),
            ),
            at(9, json!({"type": "Halted", "reason": "operator", "revoked": ["p4"]})),
            at(
                10,
                json!({"type": "PermitCreated", "permit_id": "p5", "tool": "uniswap_execute_swap", "kind": "swap"}),
            ),
        ];
        let r = fold(&log);
        assert_eq!(r.len(), 5);
        assert_eq!(
            (r[0].status, r[0].tx_hash.as_deref(), r[0].gas_cost),
            (ActionStatus::Executed, Some("0xa"), Some(0.25))
        );
        let o = r[0].outcome.as_ref().expect("outcome");
        assert!(!o.verified && o.divergence.len() == 1 && o.pnl_impact == Some(-1.5));
        assert_eq!(
            (r[1].status, r[1].block_reason.as_deref()),
            (ActionStatus::Blocked, Some("policy-cage: no"))
        );
        assert_eq!(
            (r[2].status, r[2].block_reason.as_deref(), r[2].time_ms),
            (ActionStatus::Deferred, Some("expired unused"), 7)
        );
        assert!(r[3].block_reason.as_deref().is_some_and(|b| b.contains("emergency halt")));
        assert_eq!((r[4].status, r[4].block_reason.as_deref()), (ActionStatus::Deferred, None), "still open");
    }

    #[test]
    fn a_plan_is_sent_until_resolved_and_partial_with_some_steps_mined() {
        let signed = |id: &str, step: u32, tx: &str| json!({"type": "TransactionSigned", "permit_id": id, "step": step, "steps": 2, "tx_hash": tx});
        let created =
            |id: &str| json!({"type": "PermitCreated", "permit_id": id, "tool": "t", "kind": "swap"});
        let mined = |id: &str, tx: &str, ok: bool| json!({"type": "ActionExecuted", "permit_id": id, "tx_hash": tx, "gas_used": 1, "success": ok});
        let log = [
            at(1, created("p1")),
            at(2, signed("p1", 0, "0xa")),
            at(3, mined("p1", "0xa", true)),
            at(4, signed("p1", 1, "0xb")),
            at(5, created("p2")),
            at(6, signed("p2", 0, "0xc")),
            at(7, mined("p2", "0xc", true)),
            at(8, signed("p2", 1, "0xd")),
            at(9, json!({"type": "TransactionReplaced", "permit_id": "p2", "tx_hash": "0xd", "nonce": 4})),
            at(10, created("p3")),
            at(11, json!({"type": "PermitRefused", "permit_id": "p3", "code": "rpc", "reason": "node down"})),
            at(12, json!({"type": "PermitReopened", "permit_id": "p3"})),
        ];
        let r = fold(&log);
        assert_eq!(r[0].status, ActionStatus::Sent, "0xb has no resolution: {:?}", r[0].transactions);
        assert_eq!(r[1].status, ActionStatus::PartiallyExecuted);
        let states: Vec<_> = r[1].transactions.iter().map(|t| t.state.as_str()).collect();
        assert_eq!(states, ["mined", "replaced"]);
        assert_eq!((r[2].status, r[2].block_reason.as_deref()), (ActionStatus::Deferred, None), "open again");
    }
}
