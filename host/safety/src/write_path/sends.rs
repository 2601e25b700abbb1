//! Recovery: nothing the host sent goes unrecorded. Every transaction is in the audit log before
//! it leaves the host (`TransactionSigned`, see [`super::broadcast`]); one with no outcome after
//! it — the process died, was stopped, or lost its store mid-broadcast — is resolved against the
//! chain: mined (its receipt recorded, and the plan's outcome, whole or partial), replaced (its
//! nonce taken by another transaction: it never ran), or still pending (its recorded bytes sent
//! again; if still nothing, reported). A permit taken for a commit that signed nothing gets its
//! spend released and is opened again — by what the log shows was sent, not by the wallet's
//! nonce, which anything else may have moved.

use super::{WritePath, audit_error, permit_error};
use crate::audit_log::AuditEvent;
use crate::records::OutcomeRecord;
use alloy::primitives::{Address, B256, Bytes};
use alloy::providers::Provider;
use bardo_core::error::{ErrorCode, ToolError};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

/// How long recovery waits for a recorded transaction it sent again.
const RESEND_WAIT: Duration = Duration::from_secs(20);

/// A transaction the log says was signed to be sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Send {
    /// The permit it executes under.
    pub permit_id: String,
    /// Which of the plan's transactions, of how many.
    pub step: u32,
    /// How many the plan sends.
    pub steps: u32,
    /// Its chain.
    pub chain_id: u64,
    /// The account that signed it.
    pub from: Address,
    /// Its nonce.
    pub nonce: u64,
    /// Its hash.
    pub hash: B256,
    /// Its signed bytes.
    pub raw: Bytes,
}

/// The log's sends with no outcome recorded after them (no `ActionExecuted`, no
/// `TransactionReplaced` naming their hash), in log order.
pub fn unresolved(lines: &[String]) -> Vec<Send> {
    let resolved: BTreeSet<String> = events(lines)
        .filter(|e| matches!(e["type"].as_str(), Some("ActionExecuted" | "TransactionReplaced")))
        .filter_map(|e| e["tx_hash"].as_str().map(str::to_lowercase))
        .collect();
    signed(lines).into_iter().filter(|s| !resolved.contains(&s.hash.to_string())).collect()
}

/// The records' events, in log order (a line that does not parse is not one).
fn events(lines: &[String]) -> impl Iterator<Item = Value> + '_ {
    lines.iter().filter_map(|l| serde_json::from_str::<Value>(l).ok()).map(|mut v| v["event"].take())
}

/// Every send the log records, in log order.
fn signed(lines: &[String]) -> Vec<Send> {
    events(lines)
        .filter(|e| e["type"] == "TransactionSigned")
        .filter_map(|e| {
            Some(Send {
                permit_id: e["permit_id"].as_str()?.to_owned(),
                step: u32::try_from(e["step"].as_u64()?).ok()?,
                steps: u32::try_from(e["steps"].as_u64()?).ok()?,
                chain_id: e["chain_id"].as_u64()?,
                from: e["from"].as_str()?.parse().ok()?,
                nonce: e["nonce"].as_u64()?,
                hash: e["tx_hash"].as_str()?.parse().ok()?,
                raw: e["raw"].as_str()?.parse().ok()?,
            })
        })
        .collect()
}

/// What the log says of the sends: each permit's `(step, steps, hash)`, each mined transaction's
/// success by lowercase hash, and the permits whose outcome is recorded.
#[derive(Debug, Default)]
struct Log {
    sends: BTreeMap<String, Vec<(u32, u32, String)>>,
    executed: BTreeMap<String, bool>,
    outcomes: BTreeSet<String>,
}

impl Log {
    fn read(lines: &[String]) -> Self {
        let mut log = Log::default();
        for e in events(lines) {
            let id = e["permit_id"].as_str().unwrap_or_default().to_owned();
            match e["type"].as_str().unwrap_or_default() {
                "TransactionSigned" => {
                    let n = |k: &str| u32::try_from(e[k].as_u64().unwrap_or_default()).unwrap_or_default();
                    let hash = e["tx_hash"].as_str().unwrap_or_default().to_lowercase();
                    log.sends.entry(id).or_default().push((n("step"), n("steps"), hash));
                }
                "ActionExecuted" => {
                    let hash = e["tx_hash"].as_str().unwrap_or_default().to_lowercase();
                    log.executed.insert(hash, e["success"].as_bool().unwrap_or_default());
                }
                "OutcomeRecorded" | "OutcomeMismatch" => {
                    log.outcomes.insert(id);
                }
                _ => {}
            }
        }
        log
    }
}

/// How a recorded send ended, as the chain tells it.
enum Resolution {
    /// Mined: its receipt's gas and status.
    Mined { gas_used: u64, success: bool },
    /// Its nonce was taken by another transaction.
    Replaced,
    /// Not mined, its nonce not taken: sent again, and still not mined.
    Pending,
}

/// What a recovery did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Recovery {
    /// Sends resolved now: `permit: transaction mined | replaced`.
    pub resolved: Vec<String>,
    /// Sends still pending after being sent again (nothing recorded for them yet).
    pub pending: Vec<String>,
    /// Permits whose interrupted commit sent nothing: spend released, open again until expiry.
    pub released: Vec<String>,
    /// Sends a live commit is making now (left to it): `permit: transaction`.
    pub in_flight: Vec<String>,
    /// Permits whose outcome was recorded now, from what the chain says of their sends.
    pub outcomes: Vec<String>,
}

impl WritePath {
    /// Resolve every send the audit log holds without an outcome, then settle the permits whose
    /// commit was interrupted before anything was sent (see the module's doc). Run at every
    /// start, when a commit takes its wallet and a claim there had lapsed, and by `bardo
    /// audit-log verify`.
    pub fn recover(&self) -> Result<Recovery, ToolError> {
        // Commits live before or after the log is read are theirs to record: one that ends
        // while it is read is in the first set, one that starts, in the second.
        let sending = || self.permits.sending((self.clock)()).map_err(permit_error);
        let mut live = sending()?;
        let lines = self.audit.lines().map_err(audit_error)?;
        live.extend(sending()?);
        let log = Log::read(&lines);
        let mut executed = log.executed.clone();
        let mut out = Recovery::default();
        // Permits with a send still pending: their outcome waits for it.
        let mut waiting: BTreeSet<String> = BTreeSet::new();
        let (in_flight, unresolved): (Vec<Send>, Vec<Send>) =
            unresolved(&lines).into_iter().partition(|s| live.contains(&s.permit_id));
        out.in_flight =
            in_flight.iter().map(|s| format!("{}: transaction {}", s.permit_id, s.hash)).collect();
        for send in unresolved {
            let event = match self.resolve(&send)? {
                Resolution::Mined { gas_used, success } => {
                    executed.insert(send.hash.to_string().to_lowercase(), success);
                    AuditEvent::ActionExecuted {
                        permit_id: send.permit_id.clone(),
                        tx_hash: send.hash.to_string(),
                        gas_used,
                        success,
                    }
                }
                Resolution::Replaced => AuditEvent::TransactionReplaced {
                    permit_id: send.permit_id.clone(),
                    tx_hash: send.hash.to_string(),
                    nonce: send.nonce,
                },
                Resolution::Pending => {
                    waiting.insert(send.permit_id.clone());
                    out.pending.push(format!(
                        "{}: transaction {} (nonce {})",
                        send.permit_id, send.hash, send.nonce
                    ));
                    continue;
                }
            };
            let what = if matches!(event, AuditEvent::ActionExecuted { .. }) { "mined" } else { "replaced" };
            self.log(event)?;
            out.resolved.push(format!("{}: transaction {} {what}", send.permit_id, send.hash));
        }
        // Commits interrupted with their claim lapsed: by what the log shows was signed.
        for (id, ..) in self.permits.unfinished((self.clock)()).map_err(permit_error)? {
            if !log.sends.contains_key(&id) {
                let open = self.give_back(&id);
                self.log(AuditEvent::PermitRefused {
                    permit_id: id.clone(),
                    code: "interrupted".into(),
                    reason: match open {
                        true => "its commit was interrupted before anything was signed; it is open again until it expires".into(),
                        false => "its commit was interrupted before anything was signed".into(),
                    },
                })?;
                if open {
                    self.log(AuditEvent::PermitReopened { permit_id: id.clone() })?;
                }
                out.released.push(id.clone());
            }
            self.permits.mark_finished(&id).map_err(permit_error)?;
        }
        // Each permit that sent, whose commit is over (no claim live) and every send resolved,
        // gets the outcome its commit could not record.
        let over =
            |id: &&String| !live.contains(*id) && !waiting.contains(*id) && !log.outcomes.contains(*id);
        for (id, sends) in log.sends.iter().filter(|(id, _)| over(id)) {
            self.log(recovered_outcome(id, sends, &executed))?;
            out.outcomes.push(id.clone());
        }
        Ok(out)
    }

    /// The transactions the log says permit `permit_id`'s commits signed to send, in order.
    pub fn sends_of(&self, permit_id: &str) -> Result<Vec<Send>, ToolError> {
        let lines = self.audit.lines().map_err(audit_error)?;
        let needle = format!("\"permit_id\":\"{permit_id}\"");
        let mine: Vec<String> = lines.into_iter().filter(|l| l.contains(&needle)).collect();
        Ok(signed(&mine).into_iter().filter(|s| s.permit_id == permit_id).collect())
    }

    /// Ask the chain what became of `send`: its receipt; else whether another transaction took
    /// its nonce; else send its bytes again and wait a little.
    fn resolve(&self, send: &Send) -> Result<Resolution, ToolError> {
        let generation = self.generation();
        let chains = &generation.services().evm.chains;
        let client = chains
            .get(send.chain_id)
            .map_err(|e| ToolError::new(ErrorCode::ChainNotSupported, e.to_string()))?;
        let rpc = |e: &dyn std::fmt::Display| {
            ToolError::retryable(ErrorCode::Rpc, format!("resolving transaction {}: {e}", send.hash))
        };
        let receipt = |deadline| chains.block_on(client.receipt(send.hash, deadline));
        let mined = |r: alloy::rpc::types::TransactionReceipt| Resolution::Mined {
            gas_used: r.gas_used,
            success: r.status(),
        };
        if let Some(r) = receipt(Instant::now() + Duration::from_secs(10)).map_err(|e| rpc(&e))? {
            return Ok(mined(r));
        }
        let provider = client.provider();
        let taken = chains
            .block_on(provider.get_transaction_count(send.from).latest().into_future())
            .map_err(|e| rpc(&e))?;
        if taken > send.nonce {
            return Ok(Resolution::Replaced);
        }
        // Never mined and its nonce still free: what the host decided to send, sent.
        if let Err(e) = chains.block_on(provider.send_raw_transaction(&send.raw).into_future()) {
            tracing::warn!("sending recorded transaction {} again: {e}", send.hash);
        }
        let until = Instant::now() + RESEND_WAIT;
        while Instant::now() < until {
            if let Some(r) = receipt(until).map_err(|e| rpc(&e))? {
                return Ok(mined(r));
            }
            std::thread::sleep(Duration::from_millis(250));
        }
        Ok(Resolution::Pending)
    }
}

/// The outcome record of a permit whose commit recovery saw to the end: its sends `(step,
/// steps, hash)` and which transactions were mined, with what success.
fn recovered_outcome(
    permit_id: &str,
    sends: &[(u32, u32, String)],
    executed: &BTreeMap<String, bool>,
) -> AuditEvent {
    let steps = sends.iter().map(|s| s.1).max().unwrap_or_default();
    let mined: Vec<&str> =
        sends.iter().filter(|s| executed.contains_key(&s.2)).map(|s| s.2.as_str()).collect();
    let succeeded = sends.iter().filter(|s| executed.get(&s.2) == Some(&true)).count();
    if steps > 0 && succeeded == steps as usize {
        return AuditEvent::OutcomeRecorded {
            permit_id: permit_id.to_owned(),
            gas_cost_usd: None,
            outcome: OutcomeRecord {
                verified: false,
                expected: Value::Null,
                actual: serde_json::json!({"recovered": true, "tx_hashes": mined}),
                divergence: vec![
                    "its commit was interrupted after every transaction was sent; recovery found them mined, and nothing held the outcome to its plan".into(),
                ],
                pnl_impact: None,
                ground_truth_source: "recovery".into(),
            },
        };
    }
    let found = format!(
        "{} of its {steps} transactions mined ({}), {succeeded} succeeded",
        mined.len(),
        if mined.is_empty() { "none".to_owned() } else { mined.join(", ") }
    );
    let difference = match succeeded {
        0 => format!("its commit did not finish: the chain shows {found}; nothing of the plan ran"),
        _ => format!("its commit did not finish: the chain shows {found}; the plan is half done"),
    };
    AuditEvent::OutcomeMismatch { permit_id: permit_id.to_owned(), differences: vec![difference] }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(event: Value) -> String {
        serde_json::json!({"seq": 1, "prev": "", "time_ms": 1, "event": event}).to_string()
    }

    fn signed_event(id: &str, hash: &str) -> Value {
        serde_json::json!({"type": "TransactionSigned", "permit_id": id, "step": 0, "steps": 1, "chain_id": 1,
            "from": "0x00000000000000000000000000000000000000aa", "nonce": 7, "tx_hash": hash, "raw": "0x02"})
    }

    #[test]
    fn a_send_is_unresolved_until_its_receipt_or_its_replacement_is_recorded() {
        let (a, b, c) = (
            "0x00000000000000000000000000000000000000000000000000000000000000aa",
            "0x00000000000000000000000000000000000000000000000000000000000000bb",
            "0x00000000000000000000000000000000000000000000000000000000000000cc",
        );
        let lines = vec![
            line(signed_event("permit-1", a)),
            line(signed_event("permit-1", b)),
            line(signed_event("permit-2", c)),
            line(
                serde_json::json!({"type": "ActionExecuted", "permit_id": "permit-1", "tx_hash": a, "gas_used": 1, "success": true}),
            ),
            line(
                serde_json::json!({"type": "TransactionReplaced", "permit_id": "permit-2", "tx_hash": c, "nonce": 7}),
            ),
        ];
        let open = unresolved(&lines);
        assert_eq!(open.len(), 1);
        assert_eq!(
            (open[0].permit_id.as_str(), open[0].nonce, open[0].hash.to_string()),
            ("permit-1", 7, b.to_owned())
        );
        let log = Log::read(&lines);
        assert_eq!(log.sends.keys().collect::<Vec<_>>(), ["permit-1", "permit-2"]);
        assert_eq!(log.executed.get(a), Some(&true));
    }

    #[test]
    fn a_recovered_commit_is_whole_only_with_every_step_mined() {
        let sends = [(0, 2, "0xa".to_owned()), (1, 2, "0xb".to_owned())];
        let both = BTreeMap::from([("0xa".to_owned(), true), ("0xb".to_owned(), true)]);
        let whole = recovered_outcome("p", &sends, &both);
        assert!(matches!(whole, AuditEvent::OutcomeRecorded { .. }), "{whole:?}");
        let one = BTreeMap::from([("0xa".to_owned(), true)]);
        let AuditEvent::OutcomeMismatch { differences, .. } = recovered_outcome("p", &sends, &one) else {
            panic!("half done")
        };
        assert!(
            differences[0].contains("1 of its 2 transactions mined") && differences[0].contains("half done"),
            "{differences:?}"
        );
    }
}
