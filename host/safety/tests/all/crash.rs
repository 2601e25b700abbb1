//! Nothing sent goes unrecorded: a commit that dies at any step — its first transaction recorded
//! but not sent, sent but not mined, mined but not recorded, every receipt recorded but not the
//! outcome — is seen to its end by the next process (a second write path on the same files,
//! its clock past the dead one's claim): each transaction it recorded is resolved from the
//! chain and recorded, the plan's outcome too, whole or partial; the log then verifies with no
//! send unresolved, the spend is counted once and nothing is sent twice. A commit stopped
//! before its first transaction is recorded burns nothing: its permit is open again, its spend
//! held once, and the retry goes through. Dying is a panic at a test-only failpoint
//! (`bardo_safety::failpoint`, absent from release builds): the only fault here no real part
//! can produce on cue; `host/cli/tests` kills and interrupts real `bardo` processes.

use alloy::primitives::U256;
use alloy::providers::{Provider, ProviderBuilder};
use bardo_core::ErrorCode;
use bardo_devnet::deploy::Deployments;
use bardo_devnet::{Anvil, CHAIN_ID};
use bardo_safety::audit_log::{AuditLog, verify};
use bardo_safety::hooks::spending_limiter::{SpendingLimiter, SpendingLimits};
use bardo_safety::hooks::{AllowlistGuard, ApprovalGuard, PolicyCage, SafetyHook};
use bardo_safety::host_key::HostKey;
use bardo_safety::records::{self, ActionStatus};
use bardo_safety::{Clock, WritePath, failpoint, sends};
use bardo_test_artifacts::UNISWAP;
use bardo_test_support::{devnet, devnet_host, runtime};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

/// One devnet and the files every `bardo` process of one machine shares: the audit log, the
/// permits, the spending ledger, the host key.
struct Machine {
    node: Anvil,
    d: Deployments,
    dir: tempfile::TempDir,
    key: HostKey,
}

/// Past any claim a process that died just now still holds (a taker's lasts 90 s, a sender's
/// 30 s; on one machine a claim whose process is gone lapses at once, but these processes share
/// the test's).
const LATER: Duration = Duration::from_secs(91);

impl Machine {
    fn new() -> Self {
        let (node, d) = devnet();
        Self { node, d, dir: tempfile::tempdir().expect("tempdir"), key: HostKey::ephemeral() }
    }

    fn file(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// A `bardo` process on the shared files, its clock `skew` ahead.
    fn process(&self, skew: Duration) -> WritePath {
        let host = Arc::new(devnet_host(&self.node.url(), self.d.uniswap_settings(), true, &[UNISWAP]));
        let hooks: Vec<Box<dyn SafetyHook>> = vec![
            Box::new(PolicyCage::default()),
            Box::new(AllowlistGuard::new(BTreeMap::from([(CHAIN_ID, self.d.write_targets())]))),
            Box::new(ApprovalGuard),
        ];
        let log = AuditLog::open(&self.file("audit.jsonl"), self.key.clone()).expect("audit log");
        let clock: Clock = Arc::new(move || SystemTime::now() + skew);
        let path = WritePath::new(host.clone(), host.services().clone(), hooks, log)
            .with_clock(clock)
            // Long enough for the later processes, whose clocks run ahead.
            .with_ttl(Duration::from_secs(600))
            .with_permit_file(&self.file("permits.json"), self.key.clone())
            .with_valuer(bardo_test_support::writes::valuer(&host, &self.d));
        let valuer = bardo_test_support::writes::valuer(&host, &self.d);
        let limiter = SpendingLimiter::new(
            SpendingLimits::new(1_000_000, 10_000_000),
            valuer,
            path.ttl(),
            path.clock(),
        )
        .with_ledger_file(&self.file("spending.json"));
        let mut after: Vec<Box<dyn SafetyHook>> = vec![Box::new(limiter)];
        after.extend(bardo_test_support::writes::guards(&host, &self.d));
        path.with_after_simulation(after)
    }

    fn lines(&self) -> Vec<String> {
        let text = std::fs::read_to_string(self.file("audit.jsonl")).expect("audit log");
        text.lines().map(str::to_owned).collect()
    }

    /// Permit `id`'s entry in the spending ledger: its state and micro-dollars.
    fn ledger(&self, id: &str) -> Option<(String, u64)> {
        let v: Value = serde_json::from_slice(&std::fs::read(self.file("spending.json")).ok()?).ok()?;
        let e = &v[id];
        Some((e["state"].as_str()?.to_owned(), e["usd"].as_u64()?))
    }

    fn usdc(&self) -> U256 {
        bardo_test_support::balance_of(&self.node, self.d.tokens["USDC"].address, self.d.deployer)
    }

    fn nonce(&self) -> u64 {
        let provider = ProviderBuilder::new().connect_http(self.node.url().parse().expect("url"));
        runtime().block_on(provider.get_transaction_count(self.d.deployer).into_future()).expect("nonce")
    }

    fn record(&self, id: &str) -> records::ActionRecord {
        let all = records::read(&self.file("audit.jsonl")).expect("records");
        all.into_iter().find(|r| r.permit_id == id).expect("a record of the permit")
    }

    /// The events of permit `id`'s records, by type.
    fn events_of(&self, id: &str, kind: &str) -> Vec<Value> {
        self.lines()
            .iter()
            .map(|l| serde_json::from_str::<Value>(l).expect("json")["event"].clone())
            .filter(|e| e["permit_id"] == id && e["type"] == kind)
            .collect()
    }
}

fn swap(amount: &str) -> Value {
    json!({"chain_id": CHAIN_ID, "token_in": "USDC", "token_out": "WETH", "amount": amount})
}

/// Commit `id` on `path` with failpoint `step` (`step#i`: at transaction `i`) armed to panic:
/// the commit dies there.
fn die_at(path: &WritePath, id: &str, step: &str) {
    failpoint::arm(id, step, "panic");
    let died = std::thread::scope(|s| s.spawn(|| path.commit(id)).join());
    assert!(died.is_err(), "the commit of {id} must die at `{step}`: {died:?}");
}

/// What must hold once a recovery saw `id` to its end: every send resolved, the log intact, the
/// outcome recorded once, the permit used.
fn seen_to_its_end(m: &Machine, later: &WritePath, id: &str) {
    assert!(
        sends::unresolved(&m.lines()).is_empty(),
        "every send resolved: {:#?}",
        sends::unresolved(&m.lines())
    );
    verify(&m.file("audit.jsonl"), Some(&m.key)).expect("the log verifies");
    let outcomes = m.events_of(id, "OutcomeRecorded").len() + m.events_of(id, "OutcomeMismatch").len();
    assert_eq!(outcomes, 1, "one outcome of {id}");
    let again = later.commit(id).expect_err("used");
    assert!(again.message.contains("already used"), "{again}");
    let nothing = later.recover().expect("recover again");
    assert!(nothing.resolved.is_empty() && nothing.outcomes.is_empty(), "recovered once: {nothing:?}");
}

#[test]
fn a_commit_that_dies_at_any_step_is_recorded_whole_by_the_next_process() {
    let m = Machine::new();
    let ten = U256::from(10_000_000u64);

    // A plan of three transactions (USDC → Permit2, Permit2 → router, the swap), sent up to its
    // first: recovery finds it mined, the other two never signed, and says the plan is half done.
    let a = m.process(Duration::ZERO);
    let (usdc, nonce) = (m.usdc(), m.nonce());
    let half = a.preview("swap", &swap("10")).expect("preview");
    assert_eq!(half.plan.calls.len(), 3, "{:?}", half.plan.calls);
    die_at(&a, &half.permit_id, "sent");
    drop(a);
    let b = m.process(LATER);
    let r = b.recover().expect("recover");
    assert_eq!(r.resolved.len(), 1, "{r:?}");
    assert_eq!(r.outcomes, vec![half.permit_id.clone()]);
    let record = m.record(&half.permit_id);
    assert_eq!(record.status, ActionStatus::PartiallyExecuted, "{record:?}");
    let states: Vec<_> = record.transactions.iter().map(|t| (t.step, t.steps, t.state.as_str())).collect();
    assert_eq!(states, [(0, 3, "mined")]);
    let mismatch = m.events_of(&half.permit_id, "OutcomeMismatch");
    assert!(mismatch[0]["differences"][0].as_str().is_some_and(|d| d.contains("1 of its 3")), "{mismatch:?}");
    assert_eq!((m.usdc(), m.nonce()), (usdc, nonce + 1), "the approval only: no USDC moved");
    assert_eq!(m.ledger(&half.permit_id).map(|l| l.0), Some("spent".to_owned()), "counted: it sent");
    seen_to_its_end(&m, &b, &half.permit_id);
    drop(b);

    // Dying at each step of a plan's last transaction: recovery sees it to its end, whole.
    for step in ["signed", "sent", "mined", "executed"] {
        let a = m.process(Duration::ZERO);
        let permit = a.preview("swap", &swap("10")).expect("preview");
        let n = permit.plan.calls.len();
        let (usdc, nonce) = (m.usdc(), m.nonce());
        let at = if step == "executed" { step.to_owned() } else { format!("{step}#{}", n - 1) };
        die_at(&a, &permit.permit_id, &at);
        drop(a);
        let signed = m.events_of(&permit.permit_id, "TransactionSigned");
        assert_eq!(signed.len(), n, "{step}: each recorded before it was sent");
        let b = m.process(LATER);
        let r = b.recover().expect("recover");
        // Recorded by the commit itself only from `executed` on.
        assert_eq!(r.resolved.len(), usize::from(step != "executed"), "{step}: {r:?}");
        assert_eq!(r.outcomes, vec![permit.permit_id.clone()], "{step}");
        let record = m.record(&permit.permit_id);
        assert_eq!(record.status, ActionStatus::Executed, "{step}: {record:?}");
        let hashes: Vec<_> = signed.iter().map(|s| s["tx_hash"].as_str().expect("hash").to_owned()).collect();
        assert_eq!(record.tx_hashes, hashes, "{step}");
        let outcome = record.outcome.expect("an outcome");
        assert_eq!(outcome.ground_truth_source, "recovery", "{step}");
        // Sent once, whatever the step: each transaction once, ten dollars.
        assert_eq!((usdc - m.usdc(), m.nonce()), (ten, nonce + n as u64), "{step}");
        assert_eq!(m.ledger(&permit.permit_id).map(|l| l.0), Some("spent".to_owned()), "{step}");
        seen_to_its_end(&m, &b, &permit.permit_id);
    }
}

/// No burn without a send: a commit stopped before its first transaction is recorded — here its
/// process dies after the re-simulation, and the nonce moves meanwhile (another commit sent) —
/// gives its permit back, open, its spend held once; the retry executes it.
#[test]
fn a_commit_that_dies_before_it_sends_burns_nothing_whatever_the_nonce_did() {
    let m = Machine::new();
    let a = m.process(Duration::ZERO);
    let permit = a.preview("swap", &swap("10")).expect("preview");
    let held = m.ledger(&permit.permit_id).expect("reserved at preview");
    assert_eq!(held.0, "reserved");
    die_at(&a, &permit.permit_id, "simulated");
    drop(a);
    assert_eq!(
        m.ledger(&permit.permit_id).map(|l| l.0),
        Some("spent".to_owned()),
        "counted while it was taken"
    );
    // Another process commits for the wallet first, moving its nonce: as it takes the wallet,
    // it sees the dead commit's claim lapsed and gives the permit back — by what the log shows
    // it sent (nothing), not by the nonce.
    let b = m.process(LATER);
    // Through another pool: the permit's plan still simulates the same.
    let dai = json!({"chain_id": CHAIN_ID, "token_in": "DAI", "token_out": "WETH", "amount": "5"});
    let other = b.preview("swap", &dai).expect("preview");
    let done = b.commit(&other.permit_id).expect("commit");
    assert!(!done.tx_hashes.is_empty());
    let refused = m.events_of(&permit.permit_id, "PermitRefused");
    assert!(refused.iter().any(|e| e["code"] == "interrupted"), "{refused:?}");
    assert_eq!(m.events_of(&permit.permit_id, "PermitReopened").len(), 1);
    assert_eq!(m.ledger(&permit.permit_id), Some(("reserved".to_owned(), held.1)), "held once again");
    assert_eq!(m.record(&permit.permit_id).status, ActionStatus::Deferred, "open again");
    assert!(b.recover().expect("recover").released.is_empty(), "given back once");
    let c = &b;
    let usdc = m.usdc();
    let retried = c.commit(&permit.permit_id).expect("the retry goes through");
    assert_eq!(retried.tx_hashes.len(), 3, "the approvals and the swap");
    assert_eq!(usdc - m.usdc(), U256::from(10_000_000u64));
    assert_eq!(m.ledger(&permit.permit_id), Some(("spent".to_owned(), held.1)), "counted once");
    assert!(sends::unresolved(&m.lines()).is_empty());
    verify(&m.file("audit.jsonl"), Some(&m.key)).expect("the log verifies");
}

/// A commit refused before it sends — its caller cancels it after the re-simulation, or the
/// node fails to give a nonce — leaves the permit open and says so; the retry works.
#[test]
fn a_commit_refused_before_it_sends_leaves_its_permit_open_for_the_retry() {
    let m = Machine::new();
    let a = m.process(Duration::ZERO);
    let permit = a.preview("swap", &swap("10")).expect("preview");
    let control = Arc::new(bardo_core::control::CallControl::new());
    control.cancel();
    let stopped = a.commit_with(&permit.permit_id, &control).expect_err("cancelled");
    assert_eq!(stopped.code, ErrorCode::Cancelled, "{stopped}");
    assert!(
        stopped.message.contains("nothing was sent") && stopped.message.contains("open again"),
        "{stopped}"
    );
    assert_eq!(m.ledger(&permit.permit_id).map(|l| l.0), Some("reserved".to_owned()));
    assert!(m.events_of(&permit.permit_id, "TransactionSigned").is_empty());
    let usdc = m.usdc();
    let done = a.commit(&permit.permit_id).expect("the retry goes through");
    assert_eq!(done.tx_hashes.len(), 3);
    assert_eq!(usdc - m.usdc(), U256::from(10_000_000u64));
    let record = m.record(&permit.permit_id);
    assert_eq!(record.status, ActionStatus::Executed, "{record:?}");
    assert_eq!(record.transactions.len(), 3);
}
