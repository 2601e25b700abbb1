//! Action and outcome records (golem-tools-architecture, "DecisionCycleRecord integration"):
//! what became of every write — executed, blocked or deferred — and, for an executed one, how its
//! outcome compares with what was expected.
//!
//! Records are a view over the audit log, not a second store: the log is already durable, shared
//! by every process that writes and hash-linked, so a record cannot be lost or disagree with it.
//! A permit's `PermitCreated` names its kind and tool; its end is `ActionExecuted` (with
//! `OutcomeRecorded`), `PermitRefused` (blocked at commit), `PermitExpired`, `PermitCancelled` or
//! a `Halted` that revoked it (deferred and never run); a preview refused by a check is
//! `ActionBlocked`. A permit with no end yet is deferred, open.

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
    /// Every transaction sent, in order.
    pub tx_hashes: Vec<String>,
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
                status: ActionStatus::Blocked,
                block_reason: Some(text(e, "reason")),
                gas_cost: None,
                time_ms,
                outcome: None,
            }),
            "ActionExecuted" => {
                if let Some(&i) = by_permit.get(&id) {
                    let r = &mut records[i];
                    let tx = text(e, "tx_hash");
                    r.tx_hashes.push(tx.clone());
                    (r.tx_hash, r.status, r.time_ms) = (Some(tx), ActionStatus::Executed, time_ms);
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
    records
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
}
