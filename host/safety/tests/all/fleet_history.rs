//! A fleet that anchors its history, against an admin client with JetStream rights and no key
//! (a real three-node cluster): the state stream deleted while halted, purged of its halt and
//! founding marker, or made again with a used permit's open copy replayed at its old sequence —
//! each halts the hosts that anchored it (fail closed, saying what they saw), and a host that
//! never saw the fleet refuses the permit from the audit chain; nothing executes twice. Only an
//! operator's re-anchoring (with the host key) lets a host run again. A node that hangs
//! (SIGSTOP) during a burst of commits is routed around; a memory feed taken or an events feed
//! sealed stops no write.

use super::cluster::{Fleet, fleet, refused, retry, swap};
use alloy::primitives::U256;
use bardo_cluster::{Cluster, ClusterError};
use bardo_core::{ErrorCode, ToolError};
use bardo_safety::WritePath;
use bardo_test_support::nats::Intruder;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

const STATE: &str = "BARDO_fleet_STATE";

impl Fleet {
    /// A connection anchoring in `anchor`.
    fn anchored(&self, anchor: &Path) -> Result<Cluster, ClusterError> {
        Cluster::connect(&self.config(self.nats.urls(), Some(anchor)), Arc::new(self.key.clone()))
    }

    /// A host anchoring in `anchor`.
    fn host_anchored(&self, anchor: &Path, per_day: u64) -> WritePath {
        self.host_on(retry(|| self.anchored(anchor)), per_day)
    }
}

fn says(e: &dyn std::fmt::Display, what: &str) {
    assert!(e.to_string().contains(what), "{e} should say {what:?}");
}

#[test]
fn a_state_stream_deleted_while_halted_halts_the_hosts_that_anchored_it_until_reanchored() {
    let f = fleet();
    let dir = tempfile::tempdir().expect("tempdir");
    let (anchor_a, anchor_b) = (dir.path().join("a.json"), dir.path().join("b.json"));
    let (a, b) = (f.host_anchored(&anchor_a, 50), f.host_anchored(&anchor_b, 50));
    let permit = a.preview("swap", &swap("40")).expect("preview");
    a.commit(&permit.permit_id).expect("commit");
    a.halt("drill").expect("halt");
    refused(b.preview("swap", &swap("10")), ErrorCode::Denied, "bardo resume");

    // Deleted: made again empty it would be running, its ledger at $0. Host b, starting again
    // with its anchor, sees a stream made at another time and halts itself.
    let intruder = Intruder::connect(&f.nats);
    intruder.delete_stream(STATE);
    let e = f.anchored(&anchor_b).expect_err("tampering");
    says(&e, "made again");
    // Host a, connected all along, reads the new stream and halts too.
    let e = a.preview("swap", &swap("10")).expect_err("halted");
    says(&e, "made again");
    // Kept on disk: a restart does not forget it.
    let e = f.anchored(&anchor_a).expect_err("still halted");
    says(&e, "halted itself");
    // An operator with the host key, having checked the streams, accepts them as they are now.
    let (cluster, before) =
        Cluster::connect_reanchoring(&f.config(f.nats.urls(), Some(&anchor_a)), Arc::new(f.key.clone()))
            .expect("re-anchored");
    assert!(before.contains("made again"), "{before}");
    let a = f.host_on(cluster, 50);
    a.preview("swap", &swap("5")).expect("runs again");
}

#[test]
fn purging_the_halt_and_the_founding_marker_lifts_nothing() {
    let f = fleet();
    let dir = tempfile::tempdir().expect("tempdir");
    let anchor = dir.path().join("a.json");
    let a = f.host_anchored(&anchor, 50);
    a.halt("drill").expect("halt");
    let intruder = Intruder::connect(&f.nats);
    intruder.purge(STATE, "bardo.fleet.state.halt");
    intruder.purge(STATE, "bardo.fleet.state.audit-stream");
    // Running host: the halt it sealed at the founding is missing, which is not "running".
    let e = a.preview("swap", &swap("10")).expect_err("fails closed");
    says(&e, "tampered");
    // Starting again: the fleet is not founded again over a marker this host saw.
    let e = f.anchored(&anchor).expect_err("not founded again");
    says(&e, "founding marker is gone");
    let e = f.anchored(&anchor).expect_err("and it stays halted");
    says(&e, "halted itself");
}

/// A vault deposit simulates the same after it ran (the vault's price does not move): only
/// single use stands between its open copy replayed and a second deposit.
#[test]
fn a_used_permit_replayed_open_into_a_recreated_stream_never_executes_twice() {
    let f = fleet();
    let dir = tempfile::tempdir().expect("tempdir");
    let anchor = dir.path().join("a.json");
    let a = f.host_running(retry(|| f.anchored(&anchor)), 4_000, true);
    let deposit = serde_json::json!({"chain_id": bardo_devnet::CHAIN_ID, "vault": "bvUSDC", "amount": "20"});
    let permit = a.preview("vault_deposit", &deposit).expect("preview");
    let subject = format!("bardo.fleet.state.permit.{}", permit.permit_id);
    let intruder = Intruder::connect(&f.nats);
    // The open copy, sealed for the sequence it was written at.
    let open_copy = intruder.last(STATE, &subject);
    let head =
        String::from_utf8_lossy(&open_copy[..open_copy.iter().position(|b| *b == b'\n').expect("seal")])
            .into_owned();
    let sealed_at: u64 = head.rsplit(' ').next().and_then(|s| s.parse().ok()).expect("its sequence");
    let before = f.usdc();
    a.commit(&permit.permit_id).expect("commit");
    assert_eq!(before - f.usdc(), U256::from(20_000_000u64));

    // Made again, filled up to just before that sequence, the open copy written back there: its
    // seal verifies where it stands.
    intruder.recreate_stream(STATE);
    for i in intruder.last_seq(STATE) + 1..sealed_at {
        intruder.publish(&format!("bardo.fleet.state.filler-{i}"), b"x");
    }
    intruder.publish(&subject, &open_copy);
    assert_eq!(intruder.last_seq(STATE), sealed_at);

    // The host that anchored the fleet refuses the new stream outright.
    let e = a.commit(&permit.permit_id).expect_err("refused");
    says(&e, "made again");
    // A host that never saw the fleet takes the stream as it finds it, and the permit open in
    // it — but its audit chain records the commit: refused, and that host halts itself.
    let fresh = f.host_running(retry(|| f.connect(f.nats.urls())), 4_000, true);
    let e = fresh.commit(&permit.permit_id).expect_err("used");
    assert_eq!(e.code, ErrorCode::Denied, "{e}");
    says(&e, "already used");
    says(&e, "audit log records its commit");
    let halted = fresh.preview("vault_deposit", &deposit).expect_err("halted");
    says(&halted, "halted");
    assert_eq!(before - f.usdc(), U256::from(20_000_000u64), "deposited once");
}

/// Commit `id` on `host`, again while the fleet answers "retry" (a leader moving).
fn commit_through(host: &WritePath, id: &str) -> Result<(), ToolError> {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        match host.commit(id) {
            Ok(_) => return Ok(()),
            Err(e) if e.retryable && Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(200))
            }
            Err(e) => return Err(e),
        }
    }
}

#[test]
fn a_hung_node_is_routed_around_and_a_feed_taken_stops_no_write() {
    let f = fleet();
    let (a, b) = (f.host(f.nats.urls(), 10_000), f.host(f.nats.urls(), 10_000));
    // The approvals first: each swap after is one transaction.
    let first = a.preview("swap", &swap("1")).expect("preview");
    a.commit(&first.permit_id).expect("commit");
    let before = f.usdc();
    // Node 0 hangs (SIGSTOP: its connections stay open, it answers nothing) during a burst.
    f.nats.stall(0);
    let started = Instant::now();
    let mut took = Vec::new();
    for (i, host) in [&a, &b, &a, &b].into_iter().enumerate() {
        let t = Instant::now();
        let permit = retry(|| host.preview("swap", &swap("1")));
        commit_through(host, &permit.permit_id).unwrap_or_else(|e| panic!("commit {i}: {e}"));
        took.push(t.elapsed());
    }
    f.nats.unstall(&[0]).expect("the cluster back");
    eprintln!("commits with node 0 hung: {took:?}, {:?} in all", started.elapsed());
    assert_eq!(before - f.usdc(), U256::from(4_000_000u64), "each once");
    assert!(took.iter().all(|t| *t < Duration::from_secs(30)), "{took:?}");

    // The memory feed taken by an admin (deleted, its subjects held by another stream: it
    // cannot be made again) and the events feed sealed: a host starting now writes on.
    let intruder = Intruder::connect(&f.nats);
    intruder.seal_stream("BARDO_fleet_EVENTS");
    intruder.squat("BARDO_fleet_MEMORY", "SQUATTER");
    let c = f.host(f.nats.urls(), 10_000);
    let permit = retry(|| c.preview("swap", &swap("1")));
    commit_through(&c, &permit.permit_id).expect("commit");
    assert_eq!(before - f.usdc(), U256::from(5_000_000u64));
}
