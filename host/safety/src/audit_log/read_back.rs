//! Reading the chain back: its last record (an append chains from it), and the whole chain
//! checked record by record against its checkpoint.

use super::checkpoint::{check_head, head_path};
use super::{AuditError, Tail, broken, genesis, io, read_lock, seal_ok};
use crate::host_key::HostKey;
use sha2::{Digest, Sha256};
use std::fs::File;
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom};
use std::path::Path;

/// The file's last record, read backwards from the end: an append costs one record, not the log.
pub(super) fn last_record(path: &Path) -> Result<Tail, AuditError> {
    let mut file = match File::open(path) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(genesis()),
        Err(e) => return Err(io(path, e)),
    };
    let Some((line, ended)) = last_line(&mut file).map_err(|e| io(path, e))? else {
        return Ok(genesis());
    };
    let seq = serde_json::from_slice::<serde_json::Value>(&line).ok().and_then(|v| v["seq"].as_u64());
    match (seq, ended) {
        (Some(seq), true) => Ok((seq, hex::encode(Sha256::digest(line.as_slice())))),
        // Torn or garbled: reading the whole chain names the record.
        _ => {
            let tail = chain(path, None, 0)?.map(|(tail, _)| tail);
            Err(broken(path, tail.map_or(1, |t| t.0), "the last record cannot be read".into()))
        }
    }
}

/// The bytes of the file's last line (without its newline) and whether the newline is there;
/// None for an empty file. Reads backwards in chunks until the newline before that line.
fn last_line(file: &mut File) -> std::io::Result<Option<(Vec<u8>, bool)>> {
    const CHUNK: u64 = 4096;
    let mut start = file.seek(SeekFrom::End(0))?;
    // The file's bytes from `start` to its end.
    let mut buf = Vec::new();
    while start > 0 && line_start(&buf).is_none() {
        let from = start.saturating_sub(CHUNK);
        let mut chunk = vec![0u8; (start - from) as usize];
        file.seek(SeekFrom::Start(from))?;
        file.read_exact(&mut chunk)?;
        chunk.extend_from_slice(&buf);
        buf = chunk;
        start = from;
    }
    if buf.is_empty() {
        return Ok(None);
    }
    let ended = buf.last() == Some(&b'\n');
    let body = if ended { &buf[..buf.len() - 1] } else { &buf[..] };
    let begin = line_start(&buf).unwrap_or(0);
    Ok(Some((body[begin..].to_vec(), ended)))
}

/// Where the last line in `buf` begins, if `buf` reaches back to the newline before it.
fn line_start(buf: &[u8]) -> Option<usize> {
    let body = buf.strip_suffix(b"\n").unwrap_or(buf);
    body.iter().rposition(|&b| b == b'\n').map(|i| i + 1)
}

/// Check the chain: sequence numbers 1, 2, 3, …, every line ended, each `prev` the hash of the
/// line before, and with `key` every record sealed under it. Returns the last record and the
/// line hash of record `at` (if it exists); None when there is no log file.
pub(super) fn chain(
    path: &Path,
    key: Option<&HostKey>,
    at: u64,
) -> Result<Option<(Tail, Option<String>)>, AuditError> {
    let file = match File::open(path) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(io(path, e)),
    };
    let mut reader = BufReader::new(file);
    let (mut seq, mut prev) = genesis();
    let mut hash_at = (at == 0).then(|| prev.clone());
    let mut buf = String::new();
    loop {
        buf.clear();
        if reader.read_line(&mut buf).map_err(|e| io(path, e))? == 0 {
            return Ok(Some(((seq, prev), hash_at)));
        }
        let Some(line) = buf.strip_suffix('\n') else {
            return Err(broken(path, seq + 1, "it does not end its line (an interrupted write)".into()));
        };
        (seq, prev) = next(path, key, (seq, prev), line)?;
        if seq == at {
            hash_at = Some(prev.clone());
        }
    }
}

/// The chain's tail after `line`, which must follow `tail` and, with `key`, carry its seal.
pub(super) fn next(path: &Path, key: Option<&HostKey>, tail: Tail, line: &str) -> Result<Tail, AuditError> {
    let (seq, prev) = tail;
    follows(path, seq, &prev, line)?;
    if key.is_some_and(|key| !seal_ok(key, line)) {
        return Err(broken(
            path,
            seq + 1,
            "its MAC does not verify: it was written or edited without the host key".into(),
        ));
    }
    Ok((seq + 1, hex::encode(Sha256::digest(line.as_bytes()))))
}

/// Whether `line` is the record after record `seq`, whose line hashed to `prev`.
fn follows(path: &Path, seq: u64, prev: &str, line: &str) -> Result<(), AuditError> {
    let v: serde_json::Value =
        serde_json::from_str(line).map_err(|e| broken(path, seq + 1, format!("not JSON: {e}")))?;
    if v["seq"].as_u64() != Some(seq + 1) {
        return Err(broken(
            path,
            seq + 1,
            format!("sequence {} where {} was expected (deleted or reordered)", v["seq"], seq + 1),
        ));
    }
    if v["prev"].as_str() != Some(prev) {
        return Err(broken(
            path,
            seq + 1,
            "its `prev` is not the hash of the record before (edited, deleted or reordered)".into(),
        ));
    }
    Ok(())
}

/// Check the whole chain (sequence numbers 1, 2, 3, …, each `prev` the hash of the line before)
/// and its checkpoint `<log>.head`, which must name the last record: fewer records means some
/// were deleted from the end, another hash that the log was rewritten. With `key`, the
/// checkpoint's MAC must verify and a log with records must have a checkpoint; without a key, a
/// log without one (written before checkpoints) passes on its chain alone.
/// Returns (records, hash of the last line).
pub fn verify(path: &Path, key: Option<&HostKey>) -> Result<(u64, String), AuditError> {
    let _lock = read_lock(path)?;
    let tail = match chain(path, key, 0)?.map(|(tail, _)| tail) {
        Some(tail) => tail,
        // A checkpoint without its log: every record was deleted.
        None if head_path(path).exists() => genesis(),
        None => return Err(io(path, std::io::Error::from(std::io::ErrorKind::NotFound))),
    };
    check_head(path, key, &tail)?;
    Ok(tail)
}
