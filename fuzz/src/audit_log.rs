//! The audit log's reader and `verify`, on a log the writer wrote and the fuzzer then edited:
//! truncations, bit flips, lines swapped, dropped, duplicated, bytes inserted, in the log or in
//! its checkpoint; or, with the first byte odd, on arbitrary bytes as a log (without a key).
//! Oracle: `verify` accepts exactly the chains the writer wrote — every change to the log's
//! bytes is refused, and so is every change to what the checkpoint says.

use arbitrary::{Arbitrary, Unstructured};
use bardo_safety::audit_log::{AuditEvent, AuditLog, verify};
use bardo_safety::host_key::HostKey;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

#[derive(Debug, Arbitrary)]
enum Edit {
    Truncate(u16),
    FlipBit(u16, u8),
    SwapLines(u8, u8),
    DropLine(u8),
    DuplicateLine(u8),
    Insert(u16, Vec<u8>),
}

/// A log of four records and its checkpoint, as the writer left them, and the key file.
struct Written {
    dir: tempfile::TempDir,
    log: Vec<u8>,
    head: Vec<u8>,
}

fn written() -> &'static Written {
    static WRITTEN: OnceLock<Written> = OnceLock::new();
    WRITTEN.get_or_init(|| {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("audit.jsonl");
        let log = AuditLog::open(&path, key(dir.path())).expect("open");
        for (i, allowed) in [true, false, true, true].into_iter().enumerate() {
            let reason = (!allowed).then(|| "refused \"quoted\" \n text".to_owned());
            let event =
                AuditEvent::HookDecision { tool: format!("tool_{i}"), hook: "scope".into(), allowed, reason };
            log.append(event).expect("append");
        }
        drop(log);
        let log = std::fs::read(&path).expect("log");
        let head = std::fs::read(dir.path().join("audit.jsonl.head")).expect("checkpoint");
        Written { dir, log, head }
    })
}

fn key(dir: &Path) -> HostKey {
    HostKey::load_or_create(&dir.join("host.key")).expect("host key")
}

fn edit(bytes: &mut Vec<u8>, e: &Edit) {
    let lines =
        |b: &[u8]| -> Vec<Vec<u8>> { b.split_inclusive(|c| *c == b'\n').map(<[u8]>::to_vec).collect() };
    match e {
        Edit::Truncate(n) => bytes.truncate(*n as usize % (bytes.len() + 1)),
        Edit::FlipBit(at, bit) if !bytes.is_empty() => {
            let at = *at as usize % bytes.len();
            bytes[at] ^= 1 << (bit % 8);
        }
        Edit::SwapLines(a, b) | Edit::DropLine(a @ b) | Edit::DuplicateLine(a @ b) => {
            let mut l = lines(bytes);
            if l.is_empty() {
                return;
            }
            let (a, b) = (*a as usize % l.len(), *b as usize % l.len());
            match e {
                Edit::SwapLines(..) => l.swap(a, b),
                Edit::DropLine(..) => drop(l.remove(a)),
                _ => l.insert(a, l[a].clone()),
            }
            *bytes = l.concat();
        }
        Edit::Insert(at, new) => {
            let at = *at as usize % (bytes.len() + 1);
            bytes.splice(at..at, new.iter().copied());
        }
        Edit::FlipBit(..) => {}
    }
}

/// What a checkpoint says: its seq, hash and MAC (its padding and layout say nothing).
fn says(head: &[u8]) -> Option<(serde_json::Value, serde_json::Value, serde_json::Value)> {
    let v: serde_json::Value = serde_json::from_slice(head.trim_ascii_end()).ok()?;
    Some((v.get("seq")?.clone(), v.get("hash")?.clone(), v.get("mac")?.clone()))
}

thread_local! {
    static SCRATCH: tempfile::TempDir = tempfile::tempdir().expect("scratch dir");
}

fn scratch(name: &str) -> PathBuf {
    SCRATCH.with(|d| d.path().join(name))
}

/// One input; panics when an oracle fails.
pub fn run(data: &[u8]) {
    let Some((&mode, rest)) = data.split_first() else { return };
    if mode & 1 == 1 {
        // Arbitrary bytes as a log without a checkpoint, read without a key: no panic.
        let path = scratch("raw.jsonl");
        std::fs::write(&path, rest).expect("write");
        let _ = std::fs::remove_file(scratch("raw.jsonl.head"));
        let _ = verify(&path, None);
        return;
    }
    let Ok(edits) = Unstructured::new(rest).arbitrary::<Vec<(bool, Edit)>>() else { return };
    let w = written();
    let (mut log, mut head) = (w.log.clone(), w.head.clone());
    for (in_head, e) in edits.iter().take(4) {
        edit(if *in_head { &mut head } else { &mut log }, e);
    }
    let path = scratch("audit.jsonl");
    std::fs::write(&path, &log).expect("write log");
    std::fs::write(scratch("audit.jsonl.head"), &head).expect("write checkpoint");
    let verdict = verify(&path, Some(&key(w.dir.path())));
    if log != w.log {
        assert!(verdict.is_err(), "an edited log verified: {edits:?}");
    } else if head == w.head {
        assert!(verdict.is_ok(), "the writer's own log was refused: {verdict:?}");
    } else if says(&head) != says(&w.head) {
        assert!(verdict.is_err(), "a checkpoint that says something else verified: {edits:?}");
    }
}
