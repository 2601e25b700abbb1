use super::*;
use bardo_core::tool::{RiskTier, WritePlan};

fn permit(id: &str) -> ActionPermit {
    ActionPermit {
        permit_id: id.to_owned(),
        kind: "swap".into(),
        tool: "uniswap_execute_swap".into(),
        params: serde_json::json!({"chain_id": 1, "z": 0.1, "a": [2e30, -1], "amount": "1.5"}),
        chain_id: 1,
        sender: Address::repeat_byte(1),
        plan: WritePlan { calls: Vec::new(), expected_outcome: serde_json::json!({"out": "1"}) },
        simulation_hash: B256::repeat_byte(2),
        simulated_at: Some(7),
        expected_outcome: serde_json::json!({"out": "1"}),
        risk_tier: RiskTier::Medium,
        created_at: SystemTime::now(),
        ttl: Duration::from_secs(60),
        audit_record: None,
        planned_on: None,
        spend_usd: None,
        balance_changes: Vec::new(),
        worst_case: Vec::new(),
        bridged: Vec::new(),
        confirmation: None,
        operator: false,
        policy_hash: None,
    }
}

fn read_json(file: &Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(file).expect("read")).expect("json")
}

/// Permit `id` as the store beside `file` holds it: its own file, else its journal line.
fn stored(file: &Path, id: &str) -> serde_json::Value {
    let own = file.with_file_name(format!("permits.json.d/{id}.json"));
    if own.exists() {
        return read_json(&own);
    }
    let journals = std::fs::read_dir(file.with_file_name("permits.json.d/journal")).expect("journals");
    journals
        .flat_map(|f| {
            std::fs::read_to_string(f.expect("journal").path())
                .expect("read")
                .lines()
                .map(String::from)
                .collect::<Vec<_>>()
        })
        .map(|line| serde_json::from_str::<serde_json::Value>(&line).expect("line"))
        .find(|line| line["id"] == id)
        .map(|line| line["entry"].clone())
        .expect("stored")
}

#[test]
fn only_permits_sealed_by_this_host_can_be_taken() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("permits.json");
    let permits = Permits::open(&file, HostKey::ephemeral());
    let now = SystemTime::now();
    permits.insert(permit("permit-a")).expect("insert");
    permits.insert(permit("permit-b")).expect("insert");
    // Whoever can write the files: a copy of a genuine permit under a new id, and an edit.
    let entry = |id: &str| dir.path().join(format!("permits.json.d/{id}.json"));
    let mut copy = stored(&file, "permit-a");
    copy["permit"]["permit_id"] = "permit-c".into();
    std::fs::write(entry("permit-c"), copy.to_string()).expect("write");
    let mut raw = stored(&file, "permit-b");
    let edited = raw["seal"]["json"].as_str().expect("sealed").replace("swap", "supply");
    raw["seal"]["json"] = edited.into();
    std::fs::write(entry("permit-b"), raw.to_string()).expect("write");
    let forged = |id: &str| PermitError::Forged(id.to_owned());
    assert_eq!(permits.take("permit-c", now).expect_err("copied"), forged("permit-c"));
    assert_eq!(permits.take("permit-b", now).expect_err("edited"), forged("permit-b"));
    assert!(forged("x").to_string().contains("host key"));
    // Another host key on the same file takes none of this host's permits.
    let other = Permits::open(&file, HostKey::ephemeral());
    assert_eq!(other.take("permit-a", now).expect_err("other key"), forged("permit-a"));
    let taken = permits.take("permit-a", now).expect("genuine");
    assert_eq!(taken.params, permit("permit-a").params, "as sealed");
    assert_eq!(permits.take("permit-a", now).expect_err("once"), PermitError::Consumed("permit-a".into()));
}

#[test]
fn a_file_of_the_earlier_format_is_read_and_its_unsealed_permits_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("permits.json");
    let legacy = serde_json::json!({"permit-01d": {"permit": permit("permit-01d"), "state": "Open"}});
    std::fs::write(&file, legacy.to_string()).expect("write");
    let permits = Permits::open(&file, HostKey::ephemeral());
    assert_eq!(permits.halted().expect("readable"), None);
    let refused = permits.take("permit-01d", SystemTime::now()).expect_err("unsealed");
    assert_eq!(refused, PermitError::Forged("permit-01d".into()));
    permits.insert(permit("permit-0e")).expect("insert");
    assert!(stored(&file, "permit-0e")["seal"]["mac"].is_string());
    assert!(
        stored(&file, "permit-01d")["permit"].is_object(),
        "moved to its own file, kept while it could be asked about"
    );
    assert!(
        read_json(&file)["permits"].as_object().is_some_and(|p| p.is_empty()),
        "the book keeps the halt only"
    );
}

#[test]
fn a_preview_appends_to_its_journal_and_a_day_later_settled_permits_are_removed() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("permits.json");
    let key = HostKey::ephemeral();
    let permits = Permits::open(&file, key.clone());
    let day_ago = SystemTime::now() - Duration::from_secs(25 * 3600);
    let old = |id: &str| ActionPermit { created_at: day_ago, ..permit(id) };
    for id in ["permit-01", "permit-02", "permit-03"] {
        permits.insert(old(id)).expect("insert");
    }
    let journal_dir = dir.path().join("permits.json.d/journal");
    let journals = || {
        std::fs::read_dir(&journal_dir).expect("journals").map(|f| f.expect("f").path()).collect::<Vec<_>>()
    };
    assert_eq!(journals().len(), 1, "one journal for the process");
    let path = |id: &str| dir.path().join(format!("permits.json.d/{id}.json"));
    assert!(!path("permit-01").exists(), "an open permit is a line, not a file");
    permits.take("permit-01", day_ago).expect("consumed");
    permits.take("permit-03", day_ago).expect("taken");
    permits.mark_sending("permit-03", 5, "a", SystemTime::UNIX_EPOCH).expect("sending, never finished");
    assert!(path("permit-01").exists() && path("permit-03").exists(), "taken: their own files");
    for f in [path("permit-01"), path("permit-03")].into_iter().chain(journals()) {
        let f = std::fs::File::options().append(true).open(f).expect("open");
        f.set_modified(day_ago).expect("age the file");
    }
    // Another process's first preview sweeps: the used and the long-expired permits go, the
    // one whose broadcast never finished stays for the start's reconciliation.
    let later = Permits::open(&file, key);
    later.insert(permit("permit-04")).expect("insert");
    let now = SystemTime::now();
    let unknown = |id: &str| PermitError::Unknown(id.into());
    assert_eq!(later.take("permit-01", now).expect_err("swept"), unknown("permit-01"));
    assert_eq!(later.take("permit-02", now).expect_err("swept"), unknown("permit-02"));
    assert_eq!(later.take("permit-03", now).expect_err("kept"), PermitError::Consumed("permit-03".into()));
    assert_eq!(later.unfinished(SystemTime::now()).expect("read").len(), 1);
    assert_eq!(later.take("permit-04", now).expect("in the new journal").permit_id, "permit-04");
    assert_eq!(journals().len(), 1, "the old journal went, the new one stays");
    // An id is never a path.
    for id in ["permit-../../permits", "../permits", "permit-", "permit-zz"] {
        assert_eq!(later.take(id, now).expect_err(id), PermitError::Unknown(id.into()));
    }
    assert!(matches!(later.insert(permit("../x")), Err(PermitError::Store(e)) if e.contains("cannot name")));
}

#[test]
fn a_permit_issued_in_one_process_is_taken_once_in_another_and_a_cut_line_is_skipped() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("permits.json");
    let key = HostKey::ephemeral();
    let (a, b) = (Permits::open(&file, key.clone()), Permits::open(&file, key));
    let now = SystemTime::now();
    a.insert(permit("permit-0a")).expect("insert");
    let journal = std::fs::read_dir(dir.path().join("permits.json.d/journal"))
        .expect("journal")
        .map(|f| f.expect("f").path())
        .next()
        .expect("one");
    // A crash cut the next line half way (a fault a real disk does not produce on demand).
    let cut = std::fs::read(&journal).expect("read");
    std::fs::write(&journal, [&cut[..], &cut[..cut.len() / 2]].concat()).expect("cut");
    a.insert(permit("permit-0b")).expect("appended after the cut");
    assert_eq!(b.take("permit-0a", now).expect("found in a's journal").permit_id, "permit-0a");
    assert_eq!(a.take("permit-0a", now).expect_err("once"), PermitError::Consumed("permit-0a".into()));
    assert!(b.take("permit-0b", now).is_err(), "a line appended after a cut one is lost with it");
    a.insert(permit("permit-0c")).expect("insert");
    assert_eq!(b.take("permit-0c", now).expect("read past the cut").permit_id, "permit-0c");
}

#[test]
fn a_permit_whose_audit_record_is_not_on_disk_is_refused_and_left_open() {
    let dir = tempfile::tempdir().expect("tempdir");
    let key = HostKey::ephemeral();
    let permits = Permits::open(&dir.path().join("permits.json"), key);
    let at = RecordAt {
        log: dir.path().join("audit.jsonl"),
        offset: 7,
        len: 3,
        hash: "ab".repeat(32),
        stream_seq: None,
    };
    let recorded = ActionPermit { audit_record: Some(at.clone()), ..permit("permit-0a") };
    permits.insert(recorded).expect("insert");
    let now = SystemTime::now();
    // As after a crash that kept the permit file and lost the record (a fault a real disk
    // does not produce on demand): the check answers no.
    let check = |recorded: bool| {
        move |_: &RecordAt| match recorded {
            true => Ok(()),
            false => Err(PermitError::Unrecorded("permit-0a".into())),
        }
    };
    let lost = permits.take_then("permit-0a", now, None, check(false), |_| None, |_| {});
    assert_eq!(lost.expect_err("no record"), PermitError::Unrecorded("permit-0a".into()));
    assert!(PermitError::Unrecorded("x".into()).to_string().contains("preview again"));
    let broken = permits.take_then(
        "permit-0a",
        now,
        None,
        |_| Err(PermitError::Store("log unreadable".into())),
        |_| None,
        |_| {},
    );
    assert!(matches!(broken, Err(PermitError::Store(e)) if e == "log unreadable"));
    let used = permits.take_then(
        "permit-0a",
        now,
        None,
        |_| Err(PermitError::UsedOnRecord { id: "permit-0a".into(), record: 9 }),
        |_| None,
        |_| {},
    );
    assert!(used.expect_err("used on record").to_string().contains("already used"));
    let taken = permits.take_then(
        "permit-0a",
        now,
        None,
        |seen| {
            assert_eq!(seen, &at);
            Ok(())
        },
        |_| None,
        |_| {},
    );
    assert_eq!(taken.expect("recorded").permit_id, "permit-0a", "still open after the refusals");
}

#[test]
fn a_halt_is_shared_through_the_file_and_outlives_the_store() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("permits.json");
    let key = HostKey::ephemeral();
    let (a, b) = (Permits::open(&file, key.clone()), Permits::open(&file, key.clone()));
    let now = SystemTime::now();
    a.insert(permit("permit-a")).expect("insert");
    assert_eq!(a.halt("test", now).expect("halt"), ["permit-a"]);
    let refused = b.insert(permit("permit-b")).expect_err("halted");
    assert!(matches!(&refused, PermitError::Halted { reason, .. } if reason == "test"), "{refused}");
    assert!(refused.to_string().contains("bardo resume"), "{refused}");
    drop((a, b));
    let c = Permits::open(&file, key);
    assert_eq!(c.halted().expect("read").map(|h| h.reason), Some("test".to_owned()));
    assert!(matches!(c.take("permit-a", now), Err(PermitError::Halted { .. })));
    assert_eq!(c.resume().expect("resume").map(|h| h.reason), Some("test".to_owned()));
    assert_eq!(c.resume().expect("resume again"), None);
    assert_eq!(c.take("permit-a", now).expect_err("revoked"), PermitError::Revoked("permit-a".into()));
    c.insert(permit("permit-c")).expect("issued again");
}

#[test]
fn an_in_memory_store_halts_and_resumes_too() {
    let permits = Permits::in_memory(HostKey::ephemeral());
    let now = SystemTime::now();
    permits.insert(permit("permit-a")).expect("insert");
    assert_eq!(permits.halt("test", now).expect("halt"), ["permit-a"]);
    assert!(permits.halted().expect("read").is_some());
    assert!(matches!(permits.insert(permit("permit-b")), Err(PermitError::Halted { .. })));
    assert!(permits.resume().expect("resume").is_some());
    permits.insert(permit("permit-b")).expect("insert");
    assert_eq!(permits.take("permit-b", now).expect("take").permit_id, "permit-b");
}

#[test]
fn halt_times_read_as_utc() {
    assert_eq!(utc(0), "1970-01-01 00:00:00 UTC");
    assert_eq!(utc(951_782_400_000 + 3_723_000), "2000-02-29 01:02:03 UTC");
    assert_eq!(utc(1_735_689_599_999), "2024-12-31 23:59:59 UTC");
}

#[test]
fn a_permit_the_policy_holds_is_taken_only_once_a_person_confirmed_it_with_this_hosts_key() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("permits.json");
    let permits = Permits::open(&file, HostKey::ephemeral());
    let now = SystemTime::now();
    permits.insert(permit("permit-0b")).expect("insert");
    let held = |_: &ActionPermit| Some("confirm = \"always\"".to_owned());
    let take = |p: &Permits| p.take_then("permit-0b", now, None, |_| Ok(()), held, |_| {});
    let refused = take(&permits).expect_err("unconfirmed");
    assert!(
        matches!(&refused, PermitError::Unconfirmed { id, policy } if id == "permit-0b" && policy.contains("always"))
    );
    assert!(refused.to_string().contains("bardo confirm permit-0b"), "{refused}");
    assert_eq!(permits.open_permit("permit-0b", now).expect("still open").1, None);
    // A confirmation written into the file by anyone without the host key does not count.
    let entry = dir.path().join("permits.json.d/permit-0b.json");
    let mut raw = stored(&file, "permit-0b");
    raw["confirmed"] = serde_json::json!({"by": "forger", "at_ms": 1, "mac": B256::repeat_byte(7)});
    std::fs::write(&entry, raw.to_string()).expect("write");
    assert!(matches!(take(&permits), Err(PermitError::Unconfirmed { .. })));
    // Another host's key confirms nothing here either.
    Permits::open(&file, HostKey::ephemeral()).confirm("permit-0b", "elsewhere", now).expect_err("other key");
    permits.confirm("permit-0b", "tui", now).expect("confirm");
    assert_eq!(permits.open_permit("permit-0b", now).expect("open").1.as_deref(), Some("tui"));
    assert_eq!(take(&permits).expect("confirmed").permit_id, "permit-0b");
    assert!(matches!(permits.confirm("permit-0b", "tui", now), Err(PermitError::Consumed(_))));
}

/// The in-memory book keeps a permit's seal and, beside it, only the header it reads itself:
/// listing, confirming and taking all give the whole permit back, from the seal.
#[test]
fn the_in_memory_book_keeps_one_copy_of_a_permit_and_gives_it_back_whole() {
    let permits = Permits::in_memory(HostKey::ephemeral());
    let mut whole = permit("permit-m");
    whole.plan.calls = vec![bardo_core::tool::PlannedCall {
        chain_id: 1,
        to: Address::repeat_byte(3),
        data: vec![0xa9, 0x05, 0x9c, 0xbb].into(),
        value: alloy::primitives::U256::ZERO,
        description: "approve".into(),
    }];
    whole.balance_changes = vec![BalanceChange {
        asset: None,
        delta: "-1".into(),
        usd: Some(-2.5),
        symbol: None,
        decimals: None,
    }];
    permits.insert(whole.clone()).expect("insert");
    let kept = permits
        .with_entry("permit-m", |_, entry| entry.as_ref().map(|e| e.permit.clone()))
        .expect("book")
        .expect("kept");
    assert!(kept.params.is_null() && kept.plan.calls.is_empty() && kept.balance_changes.is_empty());
    assert_eq!(
        (kept.chain_id, kept.sender, kept.created_at),
        (whole.chain_id, whole.sender, whole.created_at)
    );
    let now = SystemTime::now();
    let listed = permits.open_permits(now).expect("listed");
    let same = |p: &ActionPermit| {
        serde_json::to_value(p).expect("json") == serde_json::to_value(&whole).expect("json")
    };
    assert!(listed.len() == 1 && same(&listed[0]), "listed whole");
    assert!(same(&permits.take("permit-m", now).expect("taken")), "taken whole");
}
