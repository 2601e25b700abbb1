//! The audit chain on the fleet's NATS stream (`[cluster]`): records exactly as in the file,
//! sealed and hash-linked, each append one message holding its batch of lines. A host chains
//! from the stream's last record and publishes at the stream's expected last sequence; when
//! another host appended first it re-reads the tail and chains again, so every host extends one
//! linear chain. The stream denies deletes and purges; JetStream keeps it on a quorum of nodes.
//!
//! No checkpoint file: with deletes and purges denied, records leave the stream only with the
//! whole stream (JetStream admin rights), and a commit checks its preview's record by its
//! stream sequence.

use super::{AuditError, AuditEvent, RecordAt, Tail, broken, genesis, lines, next, seal_ok};
use crate::host_key::HostKey;
use bardo_cluster::{Cluster, ClusterError};
use sha2::{Digest, Sha256};
use std::path::Path;

fn unavailable(label: &Path, e: ClusterError) -> AuditError {
    match e {
        e if e.retryable() => AuditError::Unavailable(e.to_string()),
        e => AuditError::Io { path: label.to_owned(), message: e.to_string() },
    }
}

/// Append `events` (non-empty) as one message; returns where the last record is.
pub(super) fn append(
    cluster: &Cluster,
    label: &Path,
    key: &HostKey,
    events: &[AuditEvent],
) -> Result<RecordAt, AuditError> {
    const MAX_TRIES: usize = 200;
    for _ in 0..MAX_TRIES {
        let (expected, tail) = match cluster.chain_last().map_err(|e| unavailable(label, e))? {
            None => (0, genesis()),
            Some((seq, bytes)) => (seq, tail_of(label, key, seq, &bytes)?),
        };
        let (text, tail) = lines(label, key, tail, events)?;
        let last = text.trim_end_matches('\n').rsplit('\n').next().unwrap_or_default().len() as u64;
        match cluster.chain_append(expected, text.into_bytes()).map_err(|e| unavailable(label, e))? {
            Ok(seq) => {
                return Ok(RecordAt {
                    log: label.to_owned(),
                    offset: 0,
                    len: last,
                    hash: tail.1,
                    stream_seq: Some(seq),
                });
            }
            Err(_conflict) => continue,
        }
    }
    Err(unavailable(label, ClusterError::Contended("the audit chain".into())))
}

/// The chain's tail after message `seq`: its last line's seq and hash. The line must carry the
/// host key's seal: chaining on from a forged record would vouch for it.
fn tail_of(label: &Path, key: &HostKey, seq: u64, bytes: &[u8]) -> Result<Tail, AuditError> {
    let text = std::str::from_utf8(bytes).map_err(|_| broken(label, seq, "message is not UTF-8".into()))?;
    let Some(line) = text.trim_end_matches('\n').rsplit('\n').next().filter(|l| !l.is_empty()) else {
        return Err(broken(label, seq, "message holds no record".into()));
    };
    if !seal_ok(key, line) {
        return Err(broken(
            label,
            seq,
            "the last record's MAC does not verify: it was written without the host key".into(),
        ));
    }
    let v: serde_json::Value =
        serde_json::from_str(line).map_err(|e| broken(label, seq, format!("not JSON: {e}")))?;
    let n = v["seq"].as_u64().ok_or_else(|| broken(label, seq, "record without seq".into()))?;
    Ok((n, hex::encode(Sha256::digest(line.as_bytes()))))
}

/// Whether the record `at` names is in the stream, unchanged, and names `needle`.
pub(super) fn recorded(
    cluster: &Cluster,
    label: &Path,
    at: &RecordAt,
    needle: &str,
) -> Result<bool, AuditError> {
    let Some(seq) = at.stream_seq else { return Ok(false) };
    let Some(bytes) = cluster.chain_entry(seq).map_err(|e| unavailable(label, e))? else { return Ok(false) };
    let text = String::from_utf8_lossy(&bytes);
    Ok(text
        .lines()
        .any(|line| line.contains(needle) && hex::encode(Sha256::digest(line.as_bytes())) == at.hash))
}

/// Check the whole chain as [`super::verify`] checks a file: every message present, records
/// numbered 1, 2, 3, …, each `prev` the hash of the line before and, with `key`, each sealed.
/// Returns (records, hash of the last line).
pub fn verify(cluster: &Cluster, label: &Path, key: Option<&HostKey>) -> Result<(u64, String), AuditError> {
    let mut tail = genesis();
    let messages = cluster.chain_len().map_err(|e| unavailable(label, e))?;
    for m in 1..=messages {
        let Some(bytes) = cluster.chain_entry(m).map_err(|e| unavailable(label, e))? else {
            return Err(broken(label, tail.0 + 1, format!("stream message {m} was removed")));
        };
        let text = String::from_utf8(bytes).map_err(|_| broken(label, tail.0 + 1, "not UTF-8".into()))?;
        for line in text.lines() {
            tail = next(label, key, tail, line)?;
        }
    }
    Ok(tail)
}

/// Every record line in order (for `bardo audit-log show`).
pub fn lines_of(cluster: &Cluster, label: &Path) -> Result<Vec<String>, AuditError> {
    let messages = cluster.chain_len().map_err(|e| unavailable(label, e))?;
    let mut out = Vec::new();
    for m in 1..=messages {
        if let Some(bytes) = cluster.chain_entry(m).map_err(|e| unavailable(label, e))? {
            out.extend(String::from_utf8_lossy(&bytes).lines().map(str::to_owned));
        }
    }
    Ok(out)
}
