//! The audit chain: append-only JSONL. Each record carries the sha256 of the previous record's
//! line, so an edited, deleted or reordered record breaks the chain at that point.

use serde::Serialize;
use sha2::{Digest, Sha256};
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// What happened.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "type")]
pub enum AuditEvent {
    /// A preview passed every check and a permit was issued.
    PermitCreated {
        /// The permit.
        permit_id: String,
        /// The write tool that planned it.
        tool: String,
        /// The hash of the simulation it was issued on.
        simulation_hash: String,
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
    },
    /// A permit was taken for execution (once only).
    PermitConsumed {
        /// The permit.
        permit_id: String,
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
    /// An emergency halt: every open permit revoked.
    Halted {
        /// Why, as the agent or operator said.
        reason: String,
        /// The permits it revoked.
        revoked: Vec<String>,
    },
}

#[derive(Serialize)]
struct Record<'a> {
    seq: u64,
    prev: &'a str,
    time_ms: u64,
    event: &'a AuditEvent,
}

/// Audit log failures.
#[derive(Debug, thiserror::Error)]
pub enum AuditError {
    /// The log could not be read or written.
    #[error("audit log {path}: {message}")]
    Io {
        /// The log file.
        path: PathBuf,
        /// What failed.
        message: String,
    },
    /// The chain is broken: a record was edited, removed or reordered.
    #[error("audit log {path}, record {line}: {reason}")]
    Broken {
        /// The log file.
        path: PathBuf,
        /// The first record that does not follow from the one before, 1-based.
        line: u64,
        /// What does not match.
        reason: String,
    },
}

/// The genesis `prev` of the first record.
const GENESIS: &str = "0000000000000000000000000000000000000000000000000000000000000000";

/// An open audit log: appends only.
#[derive(Debug)]
pub struct AuditLog {
    path: PathBuf,
    tail: Mutex<(u64, String)>,
}

impl AuditLog {
    /// Open (or create) the log at `path`, verifying the existing chain first.
    pub fn open(path: &Path) -> Result<Self, AuditError> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| io(path, e))?;
        }
        let tail = if path.exists() { verify(path)? } else { (0, GENESIS.to_owned()) };
        Ok(Self { path: path.to_owned(), tail: Mutex::new(tail) })
    }

    /// Append one record (synced before returning).
    pub fn append(&self, event: AuditEvent) -> Result<(), AuditError> {
        self.append_all(std::slice::from_ref(&event))
    }

    /// Append records in order, written and synced together.
    pub fn append_all(&self, events: &[AuditEvent]) -> Result<(), AuditError> {
        if events.is_empty() {
            return Ok(());
        }
        let mut tail = self.tail.lock().unwrap_or_else(|p| p.into_inner());
        let time_ms = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_millis() as u64)
            .unwrap_or(0);
        let (mut seq, mut prev) = tail.clone();
        let mut text = String::new();
        for event in events {
            let record = Record { seq: seq + 1, prev: &prev, time_ms, event };
            let line = serde_json::to_string(&record).map_err(|e| io(&self.path, e))?;
            (seq, prev) = (seq + 1, hex::encode(Sha256::digest(line.as_bytes())));
            text.push_str(&line);
            text.push('\n');
        }
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.path)
            .map_err(|e| io(&self.path, e))?;
        file.write_all(text.as_bytes()).and_then(|_| file.sync_data()).map_err(|e| io(&self.path, e))?;
        *tail = (seq, prev);
        Ok(())
    }

    /// Where it is.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

fn io(path: &Path, e: impl std::fmt::Display) -> AuditError {
    AuditError::Io { path: path.to_owned(), message: e.to_string() }
}

/// Check the whole chain: sequence numbers 1, 2, 3, … and each `prev` the hash of the line before.
/// Returns (records, hash of the last line).
pub fn verify(path: &Path) -> Result<(u64, String), AuditError> {
    let file = std::fs::File::open(path).map_err(|e| io(path, e))?;
    let mut prev = GENESIS.to_owned();
    let mut seq = 0u64;
    for line in std::io::BufReader::new(file).lines() {
        let line = line.map_err(|e| io(path, e))?;
        let broken = |reason: String| AuditError::Broken { path: path.to_owned(), line: seq + 1, reason };
        let v: serde_json::Value =
            serde_json::from_str(&line).map_err(|e| broken(format!("not JSON: {e}")))?;
        if v["seq"].as_u64() != Some(seq + 1) {
            return Err(broken(format!(
                "sequence {} where {} was expected (deleted or reordered)",
                v["seq"],
                seq + 1
            )));
        }
        if v["prev"].as_str() != Some(prev.as_str()) {
            return Err(broken(
                "its `prev` is not the hash of the record before (edited, deleted or reordered)".into(),
            ));
        }
        seq += 1;
        prev = hex::encode(Sha256::digest(line.as_bytes()));
    }
    Ok((seq, prev))
}
