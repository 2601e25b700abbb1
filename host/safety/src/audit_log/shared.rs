//! The audit chain on the fleet's NATS stream (`[cluster]`): records exactly as in the file,
//! sealed and hash-linked, each append one message holding its batch of lines. A host chains
//! from the stream's last record and publishes at the stream's expected last sequence; when
//! another host appended first it re-reads the tail and chains again, so every host extends one
//! linear chain. The stream denies deletes and purges; JetStream keeps it on a quorum of nodes.
//!
//! Hosts check the sequence as well as the seal: an append chains on only from a tail that
//! links to what this host saw last (each message since, record by record: numbered on, each
//! `prev` the hash of the line before, sealed), so a sealed message copied back to the tail is
//! refused, not chained from; a stream shorter than the head this host saw (deleted and made
//! again) is refused too. The head seen is kept in memory and, with a checkpoint file, across
//! restarts; `bardo_cluster` does not recreate a fleet's audit stream that was deleted.

use super::{AuditError, AuditEvent, RecordAt, Tail, broken, genesis, lines, next, seal_ok};
use crate::host_key::HostKey;
use bardo_cluster::{Cluster, ClusterError};
use bardo_core::sync::lock;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// The chain's head as this host last saw it: the stream's last message and the record it
/// ends with.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(super) struct Head {
    message: u64,
    record: u64,
    hash: String,
}

/// The head seen, in memory and (optionally) in a checkpoint file that outlives the process.
#[derive(Debug, Default)]
pub(super) struct Seen {
    head: Mutex<Option<Head>>,
    file: Option<PathBuf>,
}

impl Seen {
    /// Kept in `file` too: read now (a missing file is a host that saw nothing yet).
    pub(super) fn with_file(file: &Path) -> Result<Self, AuditError> {
        let head: Option<Head> = crate::store::read(file).map_err(|message| AuditError::Io {
            path: file.to_owned(),
            message: format!("the fleet chain's checkpoint: {message}"),
        })?;
        Ok(Self { head: Mutex::new(head), file: Some(file.to_owned()) })
    }

    fn get(&self) -> Option<Head> {
        lock(&self.head).clone()
    }

    fn set(&self, head: Head) {
        let mut seen = lock(&self.head);
        // Never backwards: another thread may have appended further meanwhile.
        if seen.as_ref().is_some_and(|s| s.message >= head.message) {
            return;
        }
        if let Some(file) = &self.file
            && let Err(e) = crate::store::replace(file, &head)
        {
            tracing::warn!("cannot keep the fleet chain's checkpoint: {e}");
        }
        *seen = Some(head);
    }
}

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
    seen: &Seen,
    events: &[AuditEvent],
) -> Result<RecordAt, AuditError> {
    const MAX_TRIES: usize = 200;
    for _ in 0..MAX_TRIES {
        let last = cluster.chain_last().map_err(|e| unavailable(label, e))?;
        let at = last.as_ref().map_or(0, |(seq, _)| *seq);
        if let Some(head) = seen.get().filter(|head| at < head.message) {
            // A replica behind the stream's leader may answer the read: the leader's count
            // decides whether the stream is shorter or the read was stale (then read again).
            let len = cluster.chain_len().map_err(|e| unavailable(label, e))?;
            if len < head.message {
                return Err(shorter(label, &head, len));
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
            continue;
        }
        let (expected, tail) = match last {
            None => (0, genesis()),
            Some((seq, bytes)) => (seq, linked_tail(cluster, label, key, seen, seq, &bytes)?),
        };
        let (text, tail) = lines(label, key, tail, events)?;
        let last = text.trim_end_matches('\n').rsplit('\n').next().unwrap_or_default().len() as u64;
        match cluster.chain_append(expected, text.into_bytes()).map_err(|e| unavailable(label, e))? {
            Ok(seq) => {
                seen.set(Head { message: seq, record: tail.0, hash: tail.1.clone() });
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

fn shorter(label: &Path, head: &Head, now: u64) -> AuditError {
    broken(
        label,
        head.record,
        format!(
            "the fleet's audit stream ends at message {now}, but this host saw it at message {} (record {}): it was deleted or cut, and is refused as tampered",
            head.message, head.record
        ),
    )
}

/// The tail of the chain at its last message `seq` (`bytes`), once every message since the head
/// this host saw (or, for a host that saw none, the message before it) links on record by
/// record: a sealed message copied to the tail does not.
fn linked_tail(
    cluster: &Cluster,
    label: &Path,
    key: &HostKey,
    seen: &Seen,
    seq: u64,
    bytes: &[u8],
) -> Result<Tail, AuditError> {
    let base = match seen.get() {
        Some(head) if seq < head.message => return Err(shorter(label, &head, seq)),
        Some(head) => (head.message, (head.record, head.hash)),
        None if seq == 1 => (0, genesis()),
        None => {
            let before = cluster.chain_entry(seq - 1).map_err(|e| unavailable(label, e))?;
            let before =
                before.ok_or_else(|| broken(label, 0, format!("stream message {} was removed", seq - 1)))?;
            (seq - 1, tail_of(label, key, seq - 1, &before)?)
        }
    };
    let (from, mut tail) = base;
    if from == seq {
        let last = std::str::from_utf8(bytes).unwrap_or_default().trim_end_matches('\n').rsplit('\n').next();
        if last.map(|l| hex::encode(Sha256::digest(l.as_bytes()))) != Some(tail.1.clone()) {
            return Err(broken(
                label,
                tail.0,
                format!("stream message {seq} was replaced since this host wrote it"),
            ));
        }
        return Ok(tail);
    }
    for m in from + 1..=seq {
        let owned;
        let message = if m == seq {
            bytes
        } else {
            owned = cluster
                .chain_entry(m)
                .map_err(|e| unavailable(label, e))?
                .ok_or_else(|| broken(label, tail.0 + 1, format!("stream message {m} was removed")))?;
            &owned
        };
        let text = std::str::from_utf8(message).map_err(|_| broken(label, tail.0 + 1, "not UTF-8".into()))?;
        for line in text.lines() {
            tail = next(label, Some(key), tail, line)?;
        }
    }
    seen.set(Head { message: seq, record: tail.0, hash: tail.1.clone() });
    Ok(tail)
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

/// Every record line of message `from` on, in order.
pub(super) fn lines_from(cluster: &Cluster, label: &Path, from: u64) -> Result<Vec<String>, AuditError> {
    let messages = cluster.chain_len().map_err(|e| unavailable(label, e))?;
    let mut out = Vec::new();
    for m in from..=messages {
        if let Some(bytes) = cluster.chain_entry(m).map_err(|e| unavailable(label, e))? {
            out.extend(String::from_utf8_lossy(&bytes).lines().map(str::to_owned));
        }
    }
    Ok(out)
}

/// Every record line in order (for `bardo audit-log show`).
pub fn lines_of(cluster: &Cluster, label: &Path) -> Result<Vec<String>, AuditError> {
    lines_from(cluster, label, 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_head_seen_outlives_the_process_in_its_checkpoint_and_never_goes_back() {
        let dir = tempfile::tempdir().expect("tempdir");
        let file = dir.path().join("audit.fleet-head");
        let seen = Seen::with_file(&file).expect("a missing checkpoint is a host that saw nothing");
        assert_eq!(seen.get(), None);
        let head = |message, record| Head { message, record, hash: format!("h{record}") };
        seen.set(head(3, 7));
        seen.set(head(2, 5));
        assert_eq!(seen.get(), Some(head(3, 7)), "never backwards");
        assert_eq!(Seen::with_file(&file).expect("read").get(), Some(head(3, 7)), "after a restart");
        std::fs::write(&file, b"not json").expect("write");
        assert!(Seen::with_file(&file).is_err(), "an unreadable checkpoint is an error, not a fresh host");
    }
}
