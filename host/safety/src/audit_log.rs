//! The audit chain: append-only JSONL. Each record carries the sha256 of the previous record's
//! line, so an edited, deleted or reordered record breaks the chain at that point, and ends with
//! a `mac` under the [`HostKey`] over the rest of its line, so a record added or rewritten by
//! anyone without the key does not verify.
//!
//! Neither tells a log whose last records were deleted from a shorter one. So beside the log
//! `<name>` (`audit.jsonl`) lives its checkpoint `<name>.head` (`audit.jsonl.head`): the last
//! record's seq and line hash, MAC'd with the key, rewritten in place after every append. Appends
//! from every `bardo` process take an exclusive lock on `<name>.lock` (`audit.jsonl.lock`; a name
//! beside the log's, since `with_extension` would drop `.jsonl`) and chain from the file's last
//! record, never from memory, so processes sharing one log extend one chain.
//!
//! Only the records are synced; a crash can leave the checkpoint behind the log. Records after
//! the checkpoint stand when the record it names is unchanged and each is sealed; the next
//! append catches the checkpoint up. What a crash can expose is the tail written since the last
//! checkpoint that reached the disk: deleting it then is not detected.

mod checkpoint;
mod event;
mod flusher;
mod read_back;
pub mod shared;

use super::host_key::HostKey;
use alloy::primitives::B256;
use checkpoint::{check_head, create_head, head_path, write_head};
pub use event::AuditEvent;
use flusher::Flusher;
pub use read_back::verify;
use read_back::{chain, last_record, next};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::os::unix::fs::{FileExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

#[derive(Serialize)]
struct Record<'a> {
    seq: u64,
    prev: &'a str,
    time_ms: u64,
    event: &'a AuditEvent,
}

/// Where a record was written: the log, its line's byte offset and length (without the
/// newline) and the sha256 hex of the line, so that its presence can be checked without
/// reading the log.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RecordAt {
    /// The log file, absolute.
    pub log: PathBuf,
    /// Byte offset of the line.
    pub offset: u64,
    /// Its length, without the newline.
    pub len: u64,
    /// sha256 hex of the line.
    pub hash: String,
    /// In a fleet's stream (`[cluster]`): the message holding it (`log` then names the stream).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream_seq: Option<u64>,
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
    /// The fleet's stream (`[cluster]`) did not answer: nothing was appended; retry.
    #[error("audit chain: {0}")]
    Unavailable(String),
    /// The chain is broken: a record was edited, removed or reordered, or the log does not end
    /// where its checkpoint says.
    #[error("audit log {path}, record {line}: {reason}")]
    Broken {
        /// The log file.
        path: PathBuf,
        /// The first record that does not follow from the one before, 1-based (for a checkpoint
        /// that disagrees with the log: the first record in dispute).
        line: u64,
        /// What does not match.
        reason: String,
    },
}

/// The genesis `prev` of the first record.
const GENESIS: &str = "0000000000000000000000000000000000000000000000000000000000000000";

/// A log's last record: its seq and the sha256 hex of its line (seq 0 and [`GENESIS`] when empty).
type Tail = (u64, String);

fn genesis() -> Tail {
    (0, GENESIS.to_owned())
}

/// An open audit log: appends only.
#[derive(Debug)]
pub struct AuditLog {
    path: PathBuf,
    /// `path` made absolute, for [`RecordAt`].
    absolute: PathBuf,
    key: HostKey,
    appender: Mutex<Option<Appender>>,
    flusher: Arc<Flusher>,
    /// The fleet's stream, which holds the chain instead of the file (`[cluster]`).
    shared: Option<bardo_cluster::Cluster>,
    /// The fleet chain's head as this host last saw it (see [`shared`]).
    seen: shared::Seen,
}

/// A file's identity: (device, inode).
type FileId = (u64, u64);

fn file_id(meta: &std::fs::Metadata) -> FileId {
    (meta.dev(), meta.ino())
}

/// The files an append uses, kept open between appends (five opens and closes per append were
/// a tenth of a preview), and what the last append left.
#[derive(Debug)]
struct Appender {
    lock: File,
    log: File,
    /// Created by the first append (a checkpoint file must not exist empty).
    head: Option<File>,
    left: Option<Left>,
}

/// The log and checkpoint as this process's last append left them. When both paths still name
/// these files and the log still has this length, no one has appended, truncated or replaced
/// anything since (every appender holds the lock), so the next append chains on from `tail`
/// without reading the log's end and the checkpoint back.
#[derive(Debug)]
struct Left {
    log: FileId,
    head: FileId,
    len: u64,
    tail: Tail,
}

impl Appender {
    fn open(path: &Path) -> Result<Self, AuditError> {
        let lock = lock_file(path)?;
        let (log, head) = open_files(path)?;
        Ok(Self { lock, log, head, left: None })
    }
}

/// The log (appending, created when missing) and its checkpoint (written in place), if it exists.
fn open_files(path: &Path) -> Result<(File, Option<File>), AuditError> {
    let log = OpenOptions::new().create(true).append(true).open(path).map_err(|e| io(path, e))?;
    let head = head_path(path);
    let head = match OpenOptions::new().write(true).open(&head) {
        Ok(file) => Some(file),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(io(&head, e)),
    };
    Ok((log, head))
}

impl Drop for AuditLog {
    fn drop(&mut self) {
        // The thread syncs what was written before it stops.
        self.flusher.stop();
    }
}

impl AuditLog {
    /// Open (or create) the log at `path`, its checkpoint authenticated with `key`. The existing
    /// chain and its checkpoint are verified first (as [`verify`] with the key), under the
    /// append lock so another process's append is not read half-written.
    pub fn open(path: &Path, key: HostKey) -> Result<Self, AuditError> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| io(path, e))?;
        }
        let _lock = write_lock(path)?;
        let tail = chain(path, Some(&key), 0)?.map(|(tail, _)| tail).unwrap_or_else(genesis);
        check_head(path, Some(&key), &tail)?;
        let absolute = std::path::absolute(path).map_err(|e| io(path, e))?;
        Ok(Self {
            path: path.to_owned(),
            absolute,
            key,
            appender: Mutex::new(None),
            flusher: Arc::default(),
            shared: None,
            seen: shared::Seen::default(),
        })
    }

    /// The chain kept in the fleet's NATS stream, which every host appends to (see [`shared`]);
    /// `label` names it in errors and records. Records are sealed with `key`, which every host
    /// of the fleet holds.
    pub fn shared(cluster: bardo_cluster::Cluster, label: &str, key: HostKey) -> Self {
        let path = PathBuf::from(label);
        Self {
            absolute: path.clone(),
            path,
            key,
            appender: Mutex::new(None),
            flusher: Arc::default(),
            shared: Some(cluster),
            seen: shared::Seen::default(),
        }
    }

    /// Keep the fleet chain's head this host saw in `file` as well, so that after a restart too
    /// a stream shorter than it is refused (see [`shared`]).
    pub fn with_checkpoint(mut self, file: &Path) -> Result<Self, AuditError> {
        self.seen = shared::Seen::with_file(file)?;
        Ok(self)
    }

    /// Whether the record written `at`, naming `needle`, is kept: on disk (see [`on_disk`]) or,
    /// for a fleet's chain, in its stream.
    pub fn recorded(&self, at: &RecordAt, needle: &str) -> Result<bool, AuditError> {
        match (&self.shared, at.stream_seq) {
            (Some(cluster), Some(_)) => shared::recorded(cluster, &self.path, at, needle),
            (_, Some(_)) => Ok(false),
            (_, None) => on_disk(at, needle),
        }
    }

    /// The record of permit `permit_id`'s commit after its preview's record `at`, if one is
    /// there not followed by its reopening (a commit that sent nothing): its sequence number.
    /// Permits live minutes, so this reads only the log's end since the preview.
    pub fn used_since(&self, at: &RecordAt, permit_id: &str) -> Result<Option<u64>, AuditError> {
        let lines = match (&self.shared, at.stream_seq) {
            (Some(cluster), Some(seq)) => shared::lines_from(cluster, &self.path, seq)?,
            _ => {
                let mut file = File::open(&at.log).map_err(|e| io(&at.log, e))?;
                file.seek(SeekFrom::Start(at.offset)).map_err(|e| io(&at.log, e))?;
                let mut text = String::new();
                file.read_to_string(&mut text).map_err(|e| io(&at.log, e))?;
                text.lines().map(str::to_owned).collect()
            }
        };
        let needle = format!("\"permit_id\":\"{permit_id}\"");
        let mut used = None;
        for line in lines.iter().filter(|l| l.contains(&needle)) {
            let v: serde_json::Value = serde_json::from_str(line).unwrap_or_default();
            match v["event"]["type"].as_str() {
                Some("PermitConsumed") => used = v["seq"].as_u64(),
                Some("PermitReopened") => used = None,
                _ => {}
            }
        }
        Ok(used)
    }

    /// The fleet's cluster, when the chain is kept there.
    pub fn cluster(&self) -> Option<&bardo_cluster::Cluster> {
        self.shared.as_ref()
    }

    /// Append one record (synced before returning).
    pub fn append(&self, event: AuditEvent) -> Result<(), AuditError> {
        self.append_all(std::slice::from_ref(&event))
    }

    /// Append records in order, written and synced together, then checkpoint them. Under the
    /// lock the chain continues from the file's last record, whichever process wrote it.
    pub fn append_all(&self, events: &[AuditEvent]) -> Result<(), AuditError> {
        self.append_records(events, true).map(drop)
    }

    /// [`Self::append_all`] without waiting for the disk: the records are written (any reader
    /// sees them) and a thread syncs them within 5 ms. Returns where the last was written: what depends
    /// on a record being on disk checks that it is, with [`on_disk`] — the write path does
    /// before executing a permit, so a crash can lose a preview's records only with the use of
    /// its permit.
    pub fn write_all(&self, events: &[AuditEvent]) -> Result<Option<RecordAt>, AuditError> {
        let written = self.append_records(events, false)?;
        if written.is_some() && self.shared.is_none() {
            self.flusher.written(&self.path).map_err(|e| io(&self.path, e))?;
        }
        Ok(written)
    }

    /// Where the last record was written; none when there were no events.
    fn append_records(&self, events: &[AuditEvent], durable: bool) -> Result<Option<RecordAt>, AuditError> {
        if events.is_empty() {
            return Ok(None);
        }
        if let Some(cluster) = &self.shared {
            // Acknowledged by a quorum of the stream's nodes: as durable as the fleet's storage.
            return shared::append(cluster, &self.path, &self.key, &self.seen, events).map(Some);
        }
        let mut slot = self.appender.lock().unwrap_or_else(PoisonError::into_inner);
        let appender = match slot.as_mut() {
            Some(appender) => appender,
            None => slot.insert(Appender::open(&self.path)?),
        };
        appender.lock.lock().map_err(|e| io(&self.path, e))?;
        let result = self.append_locked(appender, events, durable).map(Some);
        // Unlocked by hand: the file stays open for the next append.
        let _ = appender.lock.unlock();
        if result.is_err() {
            // Reopened and read back from the files next time.
            *slot = None;
        }
        result
    }

    fn append_locked(
        &self,
        a: &mut Appender,
        events: &[AuditEvent],
        durable: bool,
    ) -> Result<RecordAt, AuditError> {
        let path = &self.path;
        let now = (std::fs::metadata(path), std::fs::metadata(head_path(path)));
        let unchanged = match (&a.left, &now) {
            (Some(left), (Ok(log), Ok(head))) => {
                (file_id(log), file_id(head), log.len()) == (left.log, left.head, left.len)
            }
            _ => false,
        };
        let tail = match a.left.take() {
            Some(left) if unchanged => left.tail,
            _ => {
                // Another process appended, or a file was changed or replaced: reopen, read back.
                (a.log, a.head) = open_files(path)?;
                let tail = last_record(path)?;
                // Chaining on from a tail the checkpoint does not vouch for would sign a
                // truncation or a rewrite into a fresh, valid checkpoint.
                check_head(path, Some(&self.key), &tail)?;
                tail
            }
        };
        let (text, tail) = lines(path, &self.key, tail, events)?;
        a.log.write_all(text.as_bytes()).map_err(|e| io(path, e))?;
        if durable {
            a.log.sync_data().map_err(|e| io(path, e))?;
        }
        let head = match a.head.take() {
            Some(head) => head,
            None => create_head(path)?,
        };
        write_head(path, &head, &self.key, &tail)?;
        let ids = (a.log.metadata(), head.metadata());
        let (log, head_meta) = (ids.0.map_err(|e| io(path, e))?, ids.1.map_err(|e| io(path, e))?);
        let head_id = file_id(&head_meta);
        a.head = Some(head);
        // The last line ends the file (appends hold the lock); its hash is the new tail's.
        let last = text.trim_end_matches('\n').rsplit('\n').next().unwrap_or_default().len() as u64;
        let at = RecordAt {
            log: self.absolute.clone(),
            offset: log.len() - last - 1,
            len: last,
            hash: tail.1.clone(),
            stream_seq: None,
        };
        a.left = Some(Left { log: file_id(&log), head: head_id, len: log.len(), tail });
        Ok(at)
    }

    /// Where it is.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Every record line, in order: the file's, or the fleet stream's.
    pub fn lines(&self) -> Result<Vec<String>, AuditError> {
        if let Some(cluster) = &self.shared {
            return shared::lines_of(cluster, &self.path);
        }
        match std::fs::read_to_string(&self.path) {
            Ok(text) => Ok(text.lines().map(str::to_owned).collect()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Vec::new()),
            Err(e) => Err(io(&self.path, e)),
        }
    }
}

/// Whether the record written `at`, naming `needle`, is in its log and on disk: the log is
/// synced (whichever process wrote to it) and the line read back at its offset.
pub fn on_disk(at: &RecordAt, needle: &str) -> Result<bool, AuditError> {
    let path = &at.log;
    let file = match File::open(path) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(false),
        Err(e) => return Err(io(path, e)),
    };
    file.sync_data().map_err(|e| io(path, e))?;
    let size = file.metadata().map_err(|e| io(path, e))?.len();
    let Some(end) = at.offset.checked_add(at.len).filter(|end| *end < size) else { return Ok(false) };
    let mut line = vec![0u8; (end + 1 - at.offset) as usize];
    file.read_exact_at(&mut line, at.offset).map_err(|e| io(path, e))?;
    let Some(line) = line.strip_suffix(b"\n") else { return Ok(false) };
    Ok(hex::encode(Sha256::digest(line)) == at.hash
        && line.windows(needle.len()).any(|w| w == needle.as_bytes()))
}

fn io(path: &Path, e: impl std::fmt::Display) -> AuditError {
    AuditError::Io { path: path.to_owned(), message: e.to_string() }
}

fn broken(path: &Path, line: u64, reason: String) -> AuditError {
    AuditError::Broken { path: path.to_owned(), line, reason }
}

/// `<log file name><suffix>` beside the log: `audit.jsonl` → `audit.jsonl.lock`.
fn sibling(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(suffix);
    path.with_file_name(name)
}

/// The exclusive lock every append (and open) holds; released when the file is dropped.
fn write_lock(path: &Path) -> Result<File, AuditError> {
    let lock = lock_file(path)?;
    lock.lock().map_err(|e| io(path, e))?;
    Ok(lock)
}

/// `<log>.lock`, opened (created when missing) and not yet locked.
fn lock_file(path: &Path) -> Result<File, AuditError> {
    OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(sibling(path, ".lock"))
        .map_err(|e| io(path, e))
}

/// A shared lock for reading, when an appender has made the lock file: a reader may lack the
/// write access creating it takes, and with no lock file there is no appender to wait for.
fn read_lock(path: &Path) -> Result<Option<File>, AuditError> {
    match File::open(sibling(path, ".lock")) {
        Ok(lock) => {
            lock.lock_shared().map_err(|e| io(path, e))?;
            Ok(Some(lock))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(io(path, e)),
    }
}

/// The JSONL text recording `events` after `tail`, and the tail it leaves.
fn lines(
    path: &Path,
    key: &HostKey,
    tail: Tail,
    events: &[AuditEvent],
) -> Result<(String, Tail), AuditError> {
    let time_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0);
    let (mut seq, mut prev) = tail;
    // A record line is a few hundred bytes: grown once, not by doubling.
    let mut text = String::with_capacity(events.len() * 512);
    for event in events {
        let record = Record { seq: seq + 1, prev: &prev, time_ms, event };
        let line = sealed(key, serde_json::to_string(&record).map_err(|e| io(path, e))?);
        (seq, prev) = (seq + 1, hex::encode(Sha256::digest(line.as_bytes())));
        text.push_str(&line);
        text.push('\n');
    }
    Ok((text, (seq, prev)))
}

/// What a record's MAC authenticates.
const RECORD_DOMAIN: &str = "bardo-audit-record";
/// `,"mac":"` + 64 hex digits + `"}`: how every sealed line ends.
const SEAL_LEN: usize = 8 + 64 + 2;

/// `line` (a JSON object) with a last field `mac`: the HMAC of the line without it, so a record
/// added or edited by anyone without the host key does not verify on its own.
fn sealed(key: &HostKey, mut line: String) -> String {
    let mac = hex::encode(key.mac(RECORD_DOMAIN, line.as_bytes()).as_slice());
    line.pop();
    line.reserve(SEAL_LEN);
    line.push_str(",\"mac\":\"");
    line.push_str(&mac);
    line.push_str("\"}");
    line
}

/// Whether `line` carries a valid seal under `key`.
fn seal_ok(key: &HostKey, line: &str) -> bool {
    let Some(cut) = line.len().checked_sub(SEAL_LEN) else { return false };
    let (body, seal) = (line.get(..cut), line.get(cut..));
    let (Some(body), Some(seal)) = (body, seal) else { return false };
    let Some(hex_mac) = seal.strip_prefix(",\"mac\":\"").and_then(|m| m.strip_suffix("\"}")) else {
        return false;
    };
    let tag = hex::decode(hex_mac).ok().and_then(|t| <[u8; 32]>::try_from(t.as_slice()).ok());
    tag.is_some_and(|tag| key.verify(RECORD_DOMAIN, format!("{body}}}").as_bytes(), &B256::from(tag)))
}

#[cfg(test)]
mod tests;
