use super::*;

fn event(n: usize) -> AuditEvent {
    AuditEvent::PermitCancelled { permit_id: format!("p{n}") }
}

/// A log of `n` records, `audit.jsonl` in a fresh directory.
fn log_of(n: usize, key: &HostKey) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("audit.jsonl");
    let log = AuditLog::open(&path, key.clone()).expect("open");
    for i in 0..n {
        log.append(event(i)).expect("append");
    }
    (dir, path)
}

/// Write the checkpoint for `tail` as an append would.
fn put_head(path: &Path, key: &HostKey, tail: &Tail) -> Result<(), AuditError> {
    write_head(path, &create_head(path)?, key, tail)
}

fn refusal(verified: Result<(u64, String), AuditError>) -> String {
    verified.expect_err("must be refused").to_string()
}

/// The log's lines with record `n` (1-based) edited and every `prev` recomputed: a chain
/// consistent in itself, as someone who can write the file could produce.
fn rechained(path: &Path, n: usize) -> (String, Tail) {
    let mut tail = genesis();
    let mut text = String::new();
    for (i, line) in std::fs::read_to_string(path).expect("log").lines().enumerate() {
        let mut v: serde_json::Value = serde_json::from_str(line).expect("json");
        if i + 1 == n {
            v["event"]["permit_id"] = "forged".into();
        }
        v["prev"] = tail.1.clone().into();
        let line = v.to_string();
        tail = (tail.0 + 1, hex::encode(Sha256::digest(line.as_bytes())));
        text.push_str(&line);
        text.push('\n');
    }
    (text, tail)
}

#[test]
fn records_written_without_a_sync_chain_with_the_others_and_can_be_found_where_written() {
    let key = HostKey::ephemeral();
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("audit.jsonl");
    let log = AuditLog::open(&path, key.clone()).expect("open");
    log.write_all(&[event(0), event(1)]).expect("write");
    log.append(event(2)).expect("append");
    let at = log.write_all(&[event(3)]).expect("write").expect("a record");
    assert!(at.log.is_absolute());
    assert!(on_disk(&at, "\"p3\"").expect("read"), "{at:?}");
    assert!(!on_disk(&at, "\"p2\"").expect("read"), "another record's id");
    let moved = RecordAt { offset: at.offset - 1, ..at.clone() };
    assert!(!on_disk(&moved, "\"p3\"").expect("read"), "not at that offset");
    let past = RecordAt { offset: 1 << 40, ..at.clone() };
    assert!(!on_disk(&past, "p3").expect("read"), "past the end");
    let elsewhere = RecordAt { log: dir.path().join("other.jsonl"), ..at.clone() };
    assert!(!on_disk(&elsewhere, "\"p3\"").expect("read"), "another log");
    assert_eq!(verify(&path, Some(&key)).expect("intact").0, 4);
    // Another writer in between: the next append reads the file back and chains on from it.
    AuditLog::open(&path, key.clone()).expect("second").append(event(4)).expect("append");
    log.write_all(&[event(5)]).expect("write after the other");
    drop(log);
    assert_eq!(verify(&path, Some(&key)).expect("intact").0, 6);
}

/// Found by the audit_log fuzz target: the checkpoint's MAC in capitals decoded to the same tag
/// and verified; only the checkpoint the writer wrote does now.
#[test]
fn a_checkpoint_is_verified_exactly_as_written() {
    let key = HostKey::ephemeral();
    let (_dir, path) = log_of(2, &key);
    let head = head_path(&path);
    let written = std::fs::read_to_string(&head).expect("checkpoint");
    let v: serde_json::Value = serde_json::from_str(written.trim_end()).expect("json");
    let mac = v["mac"].as_str().expect("mac");
    assert!(mac.chars().any(|c| c.is_ascii_lowercase()), "{mac}");
    std::fs::write(&head, written.replace(mac, &mac.to_uppercase())).expect("edit");
    assert!(refusal(verify(&path, Some(&key))).contains("MAC does not verify"));
    std::fs::write(&head, written).expect("restore");
    assert_eq!(verify(&path, Some(&key)).expect("as written").0, 2);
}

#[test]
fn a_fresh_log_verifies_and_reopens_only_under_its_key() {
    let key = HostKey::ephemeral();
    let (_dir, path) = log_of(3, &key);
    let (records, hash) = verify(&path, Some(&key)).expect("intact");
    assert_eq!(records, 3);
    let text = std::fs::read_to_string(&path).expect("log");
    let last = text.lines().next_back().expect("a record");
    assert_eq!(hash, hex::encode(Sha256::digest(last.as_bytes())));
    assert_eq!(verify(&path, None).expect("intact without the key").0, 3);
    AuditLog::open(&path, key.clone()).expect("reopen").append(event(3)).expect("append");
    assert_eq!(verify(&path, Some(&key)).expect("intact").0, 4);
    let err = AuditLog::open(&path, HostKey::ephemeral()).expect_err("another key");
    assert!(err.to_string().contains("MAC does not verify"), "{err}");
}

#[test]
fn two_logs_on_one_file_extend_one_chain() {
    let key = HostKey::ephemeral();
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("audit.jsonl");
    // Two handles as two processes: each chains from what the file holds, not from memory.
    let a = AuditLog::open(&path, key.clone()).expect("open a");
    let b = AuditLog::open(&path, key.clone()).expect("open b");
    std::thread::scope(|s| {
        for (log, name) in [(&a, "a"), (&b, "b")] {
            s.spawn(move || {
                for i in 0..50 {
                    let event = AuditEvent::PermitCancelled { permit_id: format!("{name}{i}") };
                    log.append(event).expect("append");
                }
            });
        }
    });
    assert_eq!(verify(&path, Some(&key)).expect("one valid chain").0, 100);
    let text = std::fs::read_to_string(&path).expect("log");
    for name in ["a", "b"] {
        let ids: Vec<String> = text
            .lines()
            .filter_map(|l| {
                let v: serde_json::Value = serde_json::from_str(l).expect("json");
                v["event"]["permit_id"].as_str().filter(|id| id.starts_with(name)).map(str::to_owned)
            })
            .collect();
        let expected: Vec<String> = (0..50).map(|i| format!("{name}{i}")).collect();
        assert_eq!(ids, expected, "every record of writer {name}, in its order");
    }
}

#[test]
fn deleting_the_last_records_is_detected_and_never_signed_over() {
    let key = HostKey::ephemeral();
    let (_dir, path) = log_of(3, &key);
    let log = AuditLog::open(&path, key.clone()).expect("open");
    let text = std::fs::read_to_string(&path).expect("log");
    let kept: Vec<&str> = text.lines().take(2).collect();
    std::fs::write(&path, kept.join("\n") + "\n").expect("truncate");
    assert!(chain(&path, None, 0).is_ok(), "the chain alone cannot tell");
    for key in [Some(&key), None] {
        let reason = refusal(verify(&path, key));
        assert!(reason.contains("ends at record 2"), "{reason}");
        assert!(reason.contains("deleted from the end"), "{reason}");
    }
    let err = log.append(event(9)).expect_err("an append must not sign over the deletion");
    assert!(err.to_string().contains("deleted from the end"), "{err}");
    assert!(AuditLog::open(&path, key.clone()).is_err());
    // Deleting the checkpoint as well: a log with records and no checkpoint, refused under
    // the key; without it, taken for a log from before checkpoints.
    std::fs::remove_file(head_path(&path)).expect("remove the checkpoint");
    let reason = refusal(verify(&path, Some(&key)));
    assert!(reason.contains("no checkpoint"), "{reason}");
    assert_eq!(verify(&path, None).expect("an old log, no key").0, 2);
    // Deleting the whole log leaves its checkpoint to say so.
    let (_dir, path) = log_of(2, &key);
    std::fs::remove_file(&path).expect("remove the log");
    assert!(refusal(verify(&path, None)).contains("deleted from the end"));
    assert!(AuditLog::open(&path, key).is_err());
}

#[test]
fn a_chain_rewritten_or_extended_without_the_key_is_detected() {
    let key = HostKey::ephemeral();
    let (_dir, path) = log_of(3, &key);
    let original = std::fs::read_to_string(&path).expect("log");
    let (forged, tail) = rechained(&path, 2);
    std::fs::write(&path, forged).expect("rewrite");
    assert!(chain(&path, None, 0).is_ok(), "the forged chain is consistent in itself");
    // Its records are not sealed under the host key.
    let reason = refusal(verify(&path, Some(&key)));
    assert!(reason.contains("MAC does not verify"), "{reason}");
    // Nor does a checkpoint for the forgery made without the key help.
    put_head(&path, &HostKey::ephemeral(), &tail).expect("forge the checkpoint");
    assert!(refusal(verify(&path, Some(&key))).contains("MAC does not verify"));
    assert!(AuditLog::open(&path, key.clone()).is_err());
    // A record appended by someone without the key, chained correctly: refused too.
    let last = original.lines().next_back().expect("a record");
    let prev = hex::encode(Sha256::digest(last.as_bytes()));
    let stranger = HostKey::ephemeral();
    let (extra, _) = lines(&path, &stranger, (3, prev), &[event(9)]).expect("a forged record");
    std::fs::write(&path, format!("{original}{extra}")).expect("append");
    let log_head = (3, hex::encode(Sha256::digest(last.as_bytes())));
    put_head(&path, &key, &log_head).expect("the real checkpoint");
    let reason = refusal(verify(&path, Some(&key)));
    assert!(reason.contains("record 4") && reason.contains("MAC does not verify"), "{reason}");
}

#[test]
fn a_checkpoint_left_behind_by_a_crash_is_caught_up_not_refused() {
    let key = HostKey::ephemeral();
    let (_dir, path) = log_of(3, &key);
    let text = std::fs::read_to_string(&path).expect("log");
    let second = text.lines().nth(1).expect("record 2");
    // The checkpoint as it was before the last append (its write lost in a crash).
    put_head(&path, &key, &(2, hex::encode(Sha256::digest(second.as_bytes())))).expect("head");
    assert_eq!(verify(&path, Some(&key)).expect("sealed records after the checkpoint").0, 3);
    AuditLog::open(&path, key.clone()).expect("open").append(event(4)).expect("append");
    assert_eq!(verify(&path, Some(&key)).expect("caught up").0, 4);
    // But a checkpoint naming a record that is no longer there as it was: rewritten.
    put_head(&path, &key, &(2, "00".repeat(32))).expect("head");
    assert!(refusal(verify(&path, Some(&key))).contains("rewritten"));
}

#[test]
fn an_interrupted_write_is_reported_not_chained_on() {
    let key = HostKey::ephemeral();
    let (_dir, path) = log_of(2, &key);
    let log = AuditLog::open(&path, key).expect("open");
    let mut file = OpenOptions::new().append(true).open(&path).expect("open the file");
    file.write_all(b"{\"seq\":3,").expect("a torn record");
    let err = log.append(event(3)).expect_err("must not chain on a torn record").to_string();
    assert!(err.contains("record 3") && err.contains("interrupted"), "{err}");
}

#[test]
fn a_record_longer_than_a_read_chunk_is_chained_on() {
    let key = HostKey::ephemeral();
    let (_dir, path) = log_of(1, &key);
    let log = AuditLog::open(&path, key.clone()).expect("open");
    log.append(AuditEvent::Halted { reason: "x".repeat(10_000), revoked: Vec::new() }).expect("long");
    log.append(event(2)).expect("after the long record");
    assert_eq!(verify(&path, Some(&key)).expect("intact").0, 3);
}
