//! The checkpoint beside the log (`<log>.head`): the last record's seq and line hash under the
//! host key's MAC, rewritten in place after each append, so records deleted from the end or a
//! log rewritten whole are caught.

use super::{AuditError, Tail, broken, chain, io, sibling};
use crate::host_key::HostKey;
use alloy::primitives::B256;
use serde::{Deserialize, Serialize};
use std::fs::{File, OpenOptions};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

/// The checkpoint (`<log>.head`): the last record's seq and the sha256 of its line, with a MAC
/// under the host key over both and the log's file name.
#[derive(Serialize, Deserialize)]
struct Head {
    seq: u64,
    hash: String,
    mac: String,
}

/// What the checkpoint's MAC authenticates (the host key also signs other things).
const HEAD_DOMAIN: &str = "bardo-audit-head";

/// The checkpoint file, created.
pub(super) fn create_head(path: &Path) -> Result<File, AuditError> {
    let head = head_path(path);
    OpenOptions::new().create(true).truncate(false).write(true).open(&head).map_err(|e| io(&head, e))
}

pub(super) fn head_path(path: &Path) -> PathBuf {
    sibling(path, ".head")
}

/// The checkpoint beside the log, if there is one.
fn read_head(path: &Path, seq: u64) -> Result<Option<Head>, AuditError> {
    let head = head_path(path);
    match std::fs::read(&head) {
        Ok(bytes) => serde_json::from_slice::<Head>(bytes.trim_ascii_end())
            .map(Some)
            .map_err(|e| broken(path, seq, format!("its checkpoint {} is not valid: {e}", head.display()))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(io(&head, e)),
    }
}

/// What the checkpoint's MAC covers: the log's file name (a checkpoint is not another log's),
/// the last seq and its line hash.
fn head_message(path: &Path, seq: u64, hash: &str) -> Vec<u8> {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    format!("{name}:{seq}:{hash}").into_bytes()
}

fn mac_ok(path: &Path, key: &HostKey, head: &Head) -> bool {
    let tag = hex::decode(head.mac.as_bytes()).ok().and_then(|t| <[u8; 32]>::try_from(t.as_slice()).ok());
    let message = head_message(path, head.seq, &head.hash);
    // Exactly as written (lowercase hex): a checkpoint the writer did not write is refused,
    // even one that says the same in other letters.
    tag.is_some_and(|tag| hex::encode(tag) == head.mac && key.verify(HEAD_DOMAIN, &message, &B256::from(tag)))
}

/// The checkpoint's size on disk: the JSON padded with spaces to one 512-byte sector.
const HEAD_BYTES: usize = 512;

/// Rewrite the checkpoint for `tail` in place: one sector-sized write at offset 0 (written
/// whole, so a reader sees the old checkpoint or the new one). It is not synced: the records
/// are (and sealed one by one), so a crash can only leave the checkpoint behind the log, which
/// the next append or verify accepts when the record it names is unchanged; a second sync per
/// append would double the write path's disk time (measured 1.21 vs 0.58 ms on tmpfs).
pub(super) fn write_head(path: &Path, file: &File, key: &HostKey, tail: &Tail) -> Result<(), AuditError> {
    let (seq, hash) = (tail.0, tail.1.as_str());
    let mac = hex::encode(key.mac(HEAD_DOMAIN, &head_message(path, seq, hash)).as_slice());
    let mut json = serde_json::to_vec(&Head { seq, hash: hash.to_owned(), mac }).map_err(|e| io(path, e))?;
    let head = head_path(path);
    if json.len() > HEAD_BYTES {
        return Err(io(&head, "the checkpoint does not fit one sector"));
    }
    json.resize(HEAD_BYTES, b' ');
    file.write_all_at(&json, 0).map_err(|e| io(&head, e))
}

/// Check the checkpoint against the chain's last record. With `key`, its MAC must verify and a
/// log with records must have one; without, a log with no checkpoint (from before them) passes.
pub(super) fn check_head(path: &Path, key: Option<&HostKey>, tail: &Tail) -> Result<(), AuditError> {
    let (seq, hash) = (tail.0, tail.1.as_str());
    let Some(head) = read_head(path, seq)? else {
        return match key {
            Some(_) if seq > 0 => Err(broken(
                path,
                seq,
                format!(
                    "no checkpoint ({}): records may have been deleted from the end (a log from \
                     before checkpoints: move it aside to start a new one)",
                    head_path(path).display()
                ),
            )),
            _ => Ok(()),
        };
    };
    if key.is_some_and(|key| !mac_ok(path, key, &head)) {
        return Err(broken(
            path,
            seq,
            "the checkpoint's MAC does not verify: the log or its checkpoint was rewritten without \
             the host key"
                .into(),
        ));
    }
    if head.seq > seq {
        return Err(broken(
            path,
            seq + 1,
            format!(
                "the log ends at record {seq} but its checkpoint says {}: records were deleted from the end",
                head.seq
            ),
        ));
    }
    if head.seq < seq {
        // Records after the checkpoint: a crash between the log's sync and the checkpoint's
        // write (the checkpoint is not synced itself). They stand if the record the checkpoint
        // names is still there unchanged and, with the key, every record is sealed.
        let at = chain(path, key, head.seq)?.and_then(|(_, at)| at);
        if at.as_deref() != Some(head.hash.as_str()) {
            return Err(broken(
                path,
                head.seq,
                format!("record {} is not the one its checkpoint names: the log was rewritten", head.seq),
            ));
        }
        return Ok(());
    }
    if head.hash != hash {
        return Err(broken(
            path,
            seq,
            format!("record {seq} is not the one its checkpoint names: the log was rewritten"),
        ));
    }
    Ok(())
}
