//! The permit journal's reader: a journal holding one permit the host issued, with the
//! fuzzer's bytes as lines before and after it (a crash's torn line, a stranger's forged ones).
//! Oracles: the reader never panics; the permits it lists are exactly those the host sealed
//! (one); the permit is taken whole, once, whatever surrounds its line.

use alloy::primitives::{Address, B256, Bytes, U256};
use bardo_core::tool::{PlannedCall, RiskTier, WritePlan};
use bardo_safety::host_key::HostKey;
use bardo_safety::permit::{ActionPermit, Permits};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::{Duration, SystemTime};

const ID: &str = "permit-0123456789abcdef0123456789abcdef";

/// The key file and the journal line the host wrote for [`ID`].
struct Issued {
    dir: tempfile::TempDir,
    line: Vec<u8>,
}

fn key(dir: &Path) -> HostKey {
    HostKey::load_or_create(&dir.join("host.key")).expect("host key")
}

fn permit() -> ActionPermit {
    let call = PlannedCall {
        chain_id: 31337,
        to: Address::repeat_byte(0x11),
        data: Bytes::from(vec![0xa9, 0x05, 0x9c, 0xbb]),
        value: U256::ZERO,
        description: "transfer".into(),
    };
    ActionPermit {
        permit_id: ID.into(),
        kind: "swap".into(),
        tool: "uniswap_swap".into(),
        params: serde_json::json!({"amount": "1"}),
        chain_id: 31337,
        sender: Address::repeat_byte(0xaa),
        plan: WritePlan { calls: vec![call], expected_outcome: serde_json::json!({}) },
        simulation_hash: B256::repeat_byte(7),
        simulated_at: Some(1),
        expected_outcome: serde_json::json!({}),
        risk_tier: RiskTier::Low,
        created_at: SystemTime::now(),
        ttl: Duration::from_secs(24 * 3600),
        audit_record: None,
        planned_on: None,
        spend_usd: None,
        balance_changes: Vec::new(),
        worst_case: Vec::new(),
        bridged: Vec::new(),
        confirmation: None,
        operator: false,
        policy_hash: Some(B256::repeat_byte(9)),
    }
}

fn journal_dir(book: &Path) -> PathBuf {
    book.with_file_name("book.d").join("journal")
}

fn issued() -> &'static Issued {
    static ISSUED: OnceLock<Issued> = OnceLock::new();
    ISSUED.get_or_init(|| {
        let dir = tempfile::tempdir().expect("temp dir");
        let book = dir.path().join("book");
        Permits::open(&book, key(dir.path())).insert(permit()).expect("insert");
        let file = std::fs::read_dir(journal_dir(&book)).expect("journal").next().expect("one journal");
        let bytes = std::fs::read(file.expect("entry").path()).expect("journal bytes");
        let line = bytes.strip_suffix(b"\n").expect("a whole line").to_vec();
        assert!(!line.contains(&b'\n'), "one line");
        Issued { dir, line }
    })
}

thread_local! {
    static SCRATCH: tempfile::TempDir = tempfile::tempdir().expect("scratch dir");
}

/// One input; panics when an oracle fails.
pub fn run(data: &[u8]) {
    let issued = issued();
    // The fuzzer's bytes split at the first 0xff: the lines before the permit's, and after.
    let (before, after) = match data.iter().position(|b| *b == 0xff) {
        Some(at) => (&data[..at], &data[at + 1..]),
        None => (data, &[][..]),
    };
    let mut journal = before.to_vec();
    journal.push(b'\n');
    journal.extend_from_slice(&issued.line);
    journal.push(b'\n');
    journal.extend_from_slice(after);
    let book = SCRATCH.with(|d| d.path().join("book"));
    let _ = std::fs::remove_dir_all(book.with_file_name("book.d"));
    std::fs::create_dir_all(journal_dir(&book)).expect("journal dir");
    std::fs::write(journal_dir(&book).join("1-1.jsonl"), &journal).expect("write journal");
    let permits = Permits::open(&book, key(issued.dir.path()));
    let now = SystemTime::now();
    let open: Vec<String> =
        permits.open_permits(now).expect("the journal is read").into_iter().map(|p| p.permit_id).collect();
    // A line after the permit's naming the same id replaces it (a later state of it): then it
    // must not verify, and the permit is neither listed nor taken — but never another.
    let shadowed = after.windows(ID.len()).any(|w| w == ID.as_bytes());
    if shadowed {
        assert!(open.is_empty() || open == [ID], "listed {open:?}");
        return;
    }
    assert_eq!(open, [ID], "exactly the sealed permit is open");
    let taken = permits.take(ID, now).expect("the permit is taken");
    let expected = serde_json::to_value(permit()).expect("json");
    let mut got = serde_json::to_value(&taken).expect("json");
    got["created_at"] = expected["created_at"].clone();
    assert_eq!(got, expected, "taken whole");
    assert!(permits.take(ID, now).is_err(), "and once");
}
