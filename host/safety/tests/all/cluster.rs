//! Several hosts, one truth: three write paths (as three `bardo` hosts, each with its own
//! plugins, memory and NATS connection) on one devnet and one real three-node JetStream cluster
//! (replicas 3). A permit executes once fleet-wide, one day's limit holds across hosts, a halt on
//! one host stops the others, a phase an agent lowers holds for all, all of them write one audit
//! chain and one event stream (resumed from a fleet sequence without a gap or a duplicate); a
//! lost node does not stop the fleet, a host cut from NATS fails closed with a retryable error,
//! and a stream subscription survives the death of the host delivering it.

use alloy::primitives::U256;
use bardo_cluster::{Cluster, ClusterConfig};
use bardo_core::fabric::Fabric;
use bardo_core::tool::Phase;
use bardo_core::{ErrorCode, ToolError};
use bardo_devnet::deploy::Deployments;
use bardo_devnet::nats::NatsCluster;
use bardo_devnet::{Anvil, CHAIN_ID};
use bardo_runtime::fleet_events::{self, FleetEnvelope, FleetJournal, Forwarder};
use bardo_safety::WritePath;
use bardo_safety::audit_log::{AuditLog, shared};
use bardo_safety::hooks::spending_limiter::{SpendingLimiter, SpendingLimits};
use bardo_safety::hooks::{AllowlistGuard, ApprovalGuard, PolicyCage, SafetyHook};
use bardo_safety::host_key::HostKey;
use bardo_safety::permit::Permits;
use bardo_test_artifacts::UNISWAP;
use bardo_test_support::devnet;
use bardo_test_support::nats::Intruder;
use bardo_test_support::writes::valuer;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

pub(crate) struct Fleet {
    pub(crate) node: Anvil,
    pub(crate) d: Deployments,
    pub(crate) nats: NatsCluster,
    pub(crate) _dir: tempfile::TempDir,
    /// The fleet's host key: every host holds it.
    pub(crate) key: HostKey,
}

pub(crate) fn fleet() -> Fleet {
    let (node, d) = devnet();
    let dir = tempfile::tempdir().expect("tempdir");
    let nats = NatsCluster::start(dir.path(), 3).expect("a three-node nats-server cluster");
    Fleet { node, d, nats, _dir: dir, key: HostKey::ephemeral() }
}

impl Fleet {
    pub(crate) fn connect(&self, servers: Vec<String>) -> Result<Cluster, bardo_cluster::ClusterError> {
        Cluster::connect(&self.config(servers, None), Arc::new(self.key.clone()))
    }

    /// How a host reaches the fleet through `servers`, anchoring in `anchor` (None: in memory).
    pub(crate) fn config(&self, servers: Vec<String>, anchor: Option<&std::path::Path>) -> ClusterConfig {
        ClusterConfig {
            servers,
            name: "fleet".into(),
            creds: None,
            token: None,
            replicas: 3,
            timeout: Duration::from_secs(3),
            anchor: anchor.map(std::path::Path::to_owned),
        }
    }

    /// A host on the cluster through `servers`: its own plugins and memory; permits, halt, the
    /// spending ledger ($1,000 a transaction, `per_day` a day) and the audit chain in NATS.
    pub(crate) fn host(&self, servers: Vec<String>, per_day: u64) -> WritePath {
        // The first connection creates the streams: JetStream elects their leaders meanwhile.
        let cluster = retry(|| self.connect(servers.clone()));
        self.host_on(cluster, per_day)
    }

    /// A host on `cluster` (see [`Self::host`]).
    pub(crate) fn host_on(&self, cluster: Cluster, per_day: u64) -> WritePath {
        self.host_running(cluster, per_day, false)
    }

    /// [`Self::host_on`], with the vault plugin beside Uniswap's if `vault`.
    pub(crate) fn host_running(&self, cluster: Cluster, per_day: u64, vault: bool) -> WritePath {
        let mut settings = BTreeMap::from([("uniswap".to_owned(), self.d.uniswap_settings())]);
        let mut guests = vec![UNISWAP];
        if vault {
            settings.insert("vault".to_owned(), self.d.vault_settings());
            guests.push(bardo_test_artifacts::VAULT);
        }
        let host = Arc::new(bardo_test_support::devnet_host_with(
            &self.node.url(),
            settings,
            Some(bardo_devnet::DEV_KEY),
            &guests,
        ));
        let hooks: Vec<Box<dyn SafetyHook>> = vec![
            Box::new(PolicyCage::default()),
            Box::new(AllowlistGuard::new(BTreeMap::from([(CHAIN_ID, self.d.write_targets())]))),
            Box::new(ApprovalGuard),
        ];
        let log = AuditLog::shared(cluster.clone(), &cluster.audit_label(), self.key.clone());
        let path = WritePath::new(host.clone(), host.services().clone(), hooks, log)
            .with_permits(Permits::shared(cluster.clone(), self.key.clone()));
        let limiter = SpendingLimiter::new(
            SpendingLimits::new(1_000, per_day),
            valuer(&host, &self.d),
            path.ttl(),
            path.clock(),
        )
        .with_cluster(cluster);
        path.with_after_simulation(vec![Box::new(limiter)])
    }

    pub(crate) fn usdc(&self) -> U256 {
        bardo_test_support::balance_of(&self.node, self.d.tokens["USDC"].address, self.d.deployer)
    }
}

/// `f` until it succeeds (at most 30 s): a cluster electing leaders answers "unavailable" (an
/// election after a node's loss takes seconds, more on a loaded machine).
pub(crate) fn retry<T, E: std::fmt::Debug>(mut f: impl FnMut() -> Result<T, E>) -> T {
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    loop {
        match f() {
            Ok(v) => return v,
            Err(e) if std::time::Instant::now() > deadline => panic!("still failing after 30 s: {e:?}"),
            Err(_) => std::thread::sleep(Duration::from_millis(200)),
        }
    }
}

pub(crate) fn swap(amount: &str) -> Value {
    json!({"chain_id": CHAIN_ID, "token_in": "USDC", "token_out": "WETH", "amount": amount})
}

pub(crate) fn refused(r: Result<impl std::fmt::Debug, ToolError>, code: ErrorCode, hint: &str) -> ToolError {
    let e = r.expect_err("must be refused");
    assert_eq!(e.code, code, "{e}");
    assert!(e.message.contains(hint), "{:?} should mention {hint:?}", e.message);
    e
}

/// Someone with NATS publish rights but without the fleet's key cannot bring a used permit
/// back, lift a halt, raise the phase or reset the day's spend: a document without the fleet's
/// seal, or an older sealed copy written back, is refused as tampered, failing closed.
#[test]
fn fleet_documents_without_the_fleets_seal_or_written_back_are_refused_as_tampered() {
    let f = fleet();
    let host = f.host(f.nats.urls(), 50);
    let intruder = Intruder::connect(&f.nats);
    let state = |doc: &str| format!("bardo.fleet.state.{doc}");
    const STATE: &str = "BARDO_fleet_STATE";

    // A used permit written back as it was while open: executed once only.
    let permit = host.preview("swap", &swap("10")).expect("preview");
    let subject = state(&format!("permit.{}", permit.permit_id));
    let open_copy = intruder.last(STATE, &subject);
    let ledger_copy = intruder.last(STATE, &state("spending"));
    let before = f.usdc();
    host.commit(&permit.permit_id).expect("commit");
    intruder.publish(&subject, &open_copy);
    refused(host.commit(&permit.permit_id), ErrorCode::Denied, "older copy");
    assert_eq!(before - f.usdc(), U256::from(10_000_000u64), "executed once");

    // An empty message where the halt is (how a deletion reads): the fleet stays halted, until
    // the operator's resume seals a new document.
    host.halt("the operator pressed the button").expect("halt");
    intruder.publish(&state("halt"), b"");
    refused(host.preview("swap", &swap("10")), ErrorCode::Denied, "tampered");
    assert!(host.resume().expect("the operator resumes"), "the tampered halt was in force");
    host.preview("swap", &swap("10")).expect("running again");

    // A halt in force removed altogether (admin rights): missing is not "running".
    host.halt("the operator pressed the button again").expect("halt");
    intruder.purge(STATE, &state("halt"));
    refused(host.preview("swap", &swap("10")), ErrorCode::Denied, "missing");
    assert!(host.resume().expect("the operator resumes"), "the missing halt was in force");
    host.preview("swap", &swap("10")).expect("running again");

    // The phase an agent lowered, raised by an unsealed document: held at `terminal`.
    host.lower_phase(Phase::Survival).expect("lowered");
    intruder.publish(&state("phase"), br#""thriving""#);
    assert_eq!(host.phase(), Phase::Terminal, "fail closed");
    refused(host.preview("swap", &swap("10")), ErrorCode::Denied, "");
    assert!(host.resume().expect("the operator resumes"));
    host.preview("swap", &swap("10")).expect("running again");
    host.lower_phase(Phase::Survival).expect("lowered");
    intruder.purge(STATE, &state("phase"));
    assert_eq!(host.phase(), Phase::Terminal, "a missing phase is not the full one");
    assert!(host.resume().expect("the operator resumes"));
    host.preview("swap", &swap("10")).expect("running again");

    // The day's ledger emptied, then an older sealed copy of it written back: nothing is
    // counted on either.
    intruder.publish(&state("spending"), b"{}");
    refused(host.preview("swap", &swap("10")), ErrorCode::Denied, "tampered");
    intruder.publish(&state("spending"), &ledger_copy);
    refused(host.preview("swap", &swap("10")), ErrorCode::Denied, "older copy");
    assert_eq!(before - f.usdc(), U256::from(10_000_000u64), "nothing more left the wallet");
}

/// Every `bardo` command runs `reconcile` at its start: a permit another host is sending is
/// never settled by it. Its spend stays counted while the sender's claim is live; once the claim
/// lapses (the sender died) with nothing sent, the next start gives it back open.
#[test]
fn a_permit_another_host_is_sending_is_not_released_by_a_host_starting_meanwhile() {
    use alloy::providers::{Provider, ProviderBuilder};
    use std::time::SystemTime;
    let f = fleet();
    let (a, b) = (f.host(f.nats.urls(), 50), f.host(f.nats.urls(), 50));
    let permit = a.preview("swap", &swap("10")).expect("preview on a");
    // Host a mid-broadcast, as the store shows it: taken, marked as sending from the wallet's
    // nonce, its claim live for 3 s more.
    let store = Permits::shared(f.connect(f.nats.urls()).expect("connect"), f.key.clone());
    let provider = ProviderBuilder::new().connect_http(f.node.url().parse().expect("url"));
    let nonce = bardo_test_support::runtime()
        .block_on(provider.get_transaction_count(f.d.deployer).pending().into_future())
        .expect("nonce");
    store.take(&permit.permit_id, SystemTime::now()).expect("taken");
    let live_until = SystemTime::now() + Duration::from_secs(3);
    store.mark_sending(&permit.permit_id, nonce, "host-a", live_until).expect("marked");
    assert!(b.reconcile().expect("reconcile on b").is_empty(), "a's live claim is left alone");
    refused(b.preview("swap", &swap("45")), ErrorCode::LimitExceeded, "daily");
    // The claim lapses with nothing sent: the next start gives the permit back, open, its $10
    // no longer spent but held for it, as for any open permit — free once it is cancelled.
    std::thread::sleep(live_until.duration_since(SystemTime::now()).unwrap_or_default());
    assert_eq!(b.reconcile().expect("reconcile on b"), vec![permit.permit_id.clone()]);
    refused(b.preview("swap", &swap("45")), ErrorCode::LimitExceeded, "daily");
    b.cancel(&permit.permit_id).expect("cancel the open permit");
    b.preview("swap", &swap("45")).expect("the $10 is free again");
}

/// The whole cluster stalls (SIGSTOP) while a commit broadcasts, just after its first
/// transaction was recorded: that one is sent and mined; the rest cannot be recorded, so they
/// are not sent, and the commit says the plan is half done. Once the cluster is back, the next
/// start records what the stalled commit could not — the mined transaction's receipt and the
/// plan's partial outcome — so nothing sent is missing from the audit chain.
#[test]
fn a_commit_whose_records_stall_sends_nothing_unrecorded_and_the_next_start_records_the_rest() {
    use alloy::providers::{Provider, ProviderBuilder};
    use bardo_safety::records::ActionStatus;
    use std::time::SystemTime;
    let f = fleet();
    let host = f.host(f.nats.urls(), 4_000);
    let permit = host.preview("swap", &swap("100")).expect("preview");
    assert_eq!(permit.plan.calls.len(), 3, "approval, Permit2, swap");
    let cluster = f.connect(f.nats.urls()).expect("connect");
    let label = cluster.audit_label();
    let signed = || {
        shared::lines_of(&cluster, label.as_ref())
            .map(|lines| lines.iter().filter(|l| l.contains("\"TransactionSigned\"")).count())
            .unwrap_or(0)
    };
    // A block every second from now: the broadcast waits for each receipt.
    let provider = ProviderBuilder::new().connect_http(f.node.url().parse().expect("url"));
    let rt = bardo_test_support::runtime();
    rt.block_on(provider.raw_request::<_, ()>("evm_setAutomine".into(), (false,))).expect("automine off");
    rt.block_on(provider.raw_request::<_, ()>("evm_setIntervalMining".into(), (1,))).expect("interval");
    let nonce = rt.block_on(provider.get_transaction_count(f.d.deployer).into_future()).expect("nonce");
    let result = std::thread::scope(|s| {
        let commit = s.spawn(|| host.commit(&permit.permit_id));
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        while signed() == 0 {
            assert!(std::time::Instant::now() < deadline, "the broadcast never started");
            std::thread::sleep(Duration::from_millis(10));
        }
        (0..3).for_each(|i| f.nats.stall(i));
        let result = commit.join().expect("commit thread");
        f.nats.unstall(&[0, 1, 2]).expect("the cluster back");
        result
    });
    let e = result.expect_err("half a plan");
    assert_eq!(e.code, ErrorCode::PartiallyExecuted, "{e}");
    assert!(e.message.contains("after 1 of 3"), "{e}");
    let sent = rt.block_on(provider.get_transaction_count(f.d.deployer).into_future()).expect("nonce");
    assert_eq!(sent, nonce + 1, "only the recorded transaction was sent");
    // The next start (its clock past the stalled commit's claim) records the rest.
    let later: bardo_safety::Clock = Arc::new(|| SystemTime::now() + Duration::from_secs(31));
    let next = f.host(f.nats.urls(), 4_000).with_clock(later);
    let recovered = retry(|| next.recover());
    assert_eq!(recovered.resolved.len(), 1, "{recovered:?}");
    let lines = retry(|| shared::lines_of(&cluster, label.as_ref()));
    assert!(bardo_safety::sends::unresolved(&lines).is_empty());
    let values: Vec<Value> = lines.iter().map(|l| serde_json::from_str(l).expect("json")).collect();
    let record = bardo_safety::records::fold(&values)
        .into_iter()
        .find(|r| r.permit_id == permit.permit_id)
        .expect("its record");
    assert_eq!(record.status, ActionStatus::PartiallyExecuted, "{record:?}");
    assert_eq!(record.transactions.len(), 1, "{record:?}");
    shared::verify(&cluster, label.as_ref(), Some(&f.key)).expect("the chain verifies");
}

/// Two hosts commit four permits for one wallet at once (swaps pinned to four different pools —
/// the devnet has no DAI/USDC pool, so an unpinned DAI→USDC went through WETH's pools and, now
/// and then, changed another plan's simulation first): the wallet's lease makes one commit at
/// a time its sender, so every plan executes whole and each plan's transactions have
/// consecutive nonces.
#[test]
fn commits_for_one_wallet_on_two_hosts_at_once_each_execute_whole_with_consecutive_nonces() {
    use alloy::consensus::Transaction as _;
    use alloy::providers::{Provider, ProviderBuilder};
    let f = fleet();
    let hosts = [f.host(f.nats.urls(), 4_000), f.host(f.nats.urls(), 4_000)];
    let swaps = [
        ("USDC", "WETH", "20", "v3", 500),
        ("WBTC", "WETH", "0.0005", "v3", 3000),
        ("WETH", "DAI", "0.01", "v4", 500),
        ("DAI", "WETH", "20", "v3", 3000),
    ];
    let permits: Vec<_> = swaps
        .iter()
        .enumerate()
        .map(|(i, (token_in, token_out, amount, version, fee))| {
            let params = json!({"chain_id": CHAIN_ID, "token_in": token_in, "token_out": token_out,
                "amount": amount, "version": version, "fee": fee});
            hosts[i % 2].preview("swap", &params).expect("preview")
        })
        .collect();
    let results: Vec<Result<_, ToolError>> = std::thread::scope(|s| {
        let handles: Vec<_> = permits
            .iter()
            .enumerate()
            .map(|(i, p)| {
                let host = &hosts[(i + 1) % 2];
                s.spawn(move || host.commit(&p.permit_id))
            })
            .collect();
        handles.into_iter().map(|h| h.join().expect("thread")).collect()
    });
    let provider = ProviderBuilder::new().connect_http(f.node.url().parse().expect("url"));
    let rt = bardo_test_support::runtime();
    let mut every = Vec::new();
    for (result, permit) in results.iter().zip(&permits) {
        let result = result.as_ref().unwrap_or_else(|e| panic!("{}: {e}", permit.permit_id));
        assert_eq!(result.tx_hashes.len(), permit.plan.calls.len(), "executed whole: {result:?}");
        let nonces: Vec<u64> = result
            .tx_hashes
            .iter()
            .map(|h| {
                let tx =
                    rt.block_on(provider.get_transaction_by_hash(h.parse().expect("hash"))).expect("rpc");
                tx.expect("mined").nonce()
            })
            .collect();
        assert!(nonces.windows(2).all(|w| w[1] == w[0] + 1), "consecutive: {nonces:?}");
        every.extend(nonces);
    }
    let sent = every.len();
    every.sort_unstable();
    every.dedup();
    assert_eq!(every.len(), sent, "no nonce used twice");
}

/// A sealed audit message copied back to the tail (publish rights) is refused, not chained on
/// from, by a host that saw the chain and by one that did not; `verify` says where. A deleted
/// audit stream (admin rights) is not made again empty.
#[test]
fn a_replayed_audit_message_and_a_deleted_audit_stream_are_refused_as_tampered() {
    let f = fleet();
    let host = f.host(f.nats.urls(), 4_000);
    host.preview("swap", &swap("10")).expect("preview");
    let intruder = Intruder::connect(&f.nats);
    let first = intruder.message("BARDO_fleet_AUDIT", 1);
    intruder.publish("bardo.fleet.audit", &first);
    let e = refused(host.preview("swap", &swap("10")), ErrorCode::Internal, "sequence");
    assert!(e.message.contains("expected"), "{e}");
    let fresh = f.host(f.nats.urls(), 4_000);
    refused(fresh.preview("swap", &swap("10")), ErrorCode::Internal, "sequence");
    let cluster = f.connect(f.nats.urls()).expect("connect");
    let label = cluster.audit_label();
    let broken = shared::verify(&cluster, label.as_ref(), Some(&f.key)).expect_err("verify finds it");
    assert!(broken.to_string().contains("sequence 1 where"), "{broken}");

    intruder.delete_stream("BARDO_fleet_AUDIT");
    let e = f.connect(f.nats.urls()).expect_err("the audit stream is not made again");
    assert!(e.to_string().contains("audit stream is gone"), "{e}");
    assert!(host.preview("swap", &swap("10")).is_err(), "a host connected before refuses too");
}

/// The fault as it was met: one host swaps $10 at a time under a $50 day while another host
/// starts over and over (each start reconciles). The limit holds on chain and no permit that
/// sent is called interrupted.
#[test]
fn a_swap_loop_on_one_host_and_starts_on_another_stay_within_the_day() {
    let f = fleet();
    let (a, b) = (f.host(f.nats.urls(), 50), f.host(f.nats.urls(), 50));
    let before = f.usdc();
    let done = std::sync::atomic::AtomicBool::new(false);
    let (executed, released) = std::thread::scope(|s| {
        let starts = s.spawn(|| {
            let mut released = Vec::new();
            while !done.load(std::sync::atomic::Ordering::Relaxed) {
                released.extend(b.reconcile().unwrap_or_default());
            }
            released
        });
        let mut executed = 0u64;
        for _ in 0..8 {
            let Ok(permit) = a.preview("swap", &swap("10")) else { break };
            a.commit(&permit.permit_id).expect("commit");
            executed += 1;
        }
        done.store(true, std::sync::atomic::Ordering::Relaxed);
        (executed, starts.join().expect("starts"))
    });
    assert_eq!(executed, 5, "five $10 swaps fit $50");
    assert!(released.is_empty(), "no permit a was sending was released: {released:?}");
    assert_eq!(before - f.usdc(), U256::from(50_000_000u64), "$50 spent on chain, no more");
}

#[test]
fn three_hosts_share_one_permit_book_one_day_limit_one_halt_and_one_audit_chain() {
    let f = fleet();
    let urls = f.nats.urls();
    // $4,000 a day for the whole fleet.
    let mut fabrics = Vec::new();
    let hosts = [0, 1, 2].map(|i| {
        let fabric = Arc::new(Fabric::new());
        let cluster = f.connect(vec![f.nats.url(i)]).expect("connect");
        let forwarder = fleet_events::forward(&fabric, FleetJournal::new(cluster, &format!("host-{i}")));
        fabrics.push((fabric.clone(), forwarder));
        f.host(urls.clone(), 4_000).with_fabric(fabric)
    });

    // One permit, committed by two hosts at once: one transaction.
    let permit = hosts[0].preview("swap", &swap("500")).expect("preview on host 0");
    let before = f.usdc();
    let results: Vec<Result<_, ToolError>> = std::thread::scope(|s| {
        let handles: Vec<_> = hosts[1..].iter().map(|h| s.spawn(|| h.commit(&permit.permit_id))).collect();
        handles.into_iter().map(|h| h.join().expect("thread")).collect()
    });
    assert_eq!(results.iter().filter(|r| r.is_ok()).count(), 1, "{results:?}");
    let loser = results.into_iter().find_map(Result::err).expect("one refused");
    assert_eq!(loser.code, ErrorCode::Denied, "{loser}");
    assert!(loser.message.contains("already used"), "{loser}");
    assert_eq!(before - f.usdc(), U256::from(500_000_000u64), "spent once");

    // $500 of the day is spent: eight $500 previews over three hosts, raced, and exactly seven
    // fit the $3,500 left.
    let results: Vec<Result<_, ToolError>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..8)
            .map(|i| {
                let h = &hosts[i % 3];
                s.spawn(move || h.preview("swap", &swap("500")))
            })
            .collect();
        handles.into_iter().map(|h| h.join().expect("thread")).collect()
    });
    let open: Vec<_> = results.iter().filter_map(|r| r.as_ref().ok()).collect();
    assert_eq!(
        open.len(),
        7,
        "{:?}",
        results.iter().map(|r| r.as_ref().map(|p| p.permit_id.clone())).collect::<Vec<_>>()
    );
    let over = results.iter().find_map(|r| r.as_ref().err()).expect("one over the limit");
    assert_eq!(over.code, ErrorCode::LimitExceeded, "{over}");
    assert!(over.message.contains("daily"), "{over}");

    // A halt on host 2: host 0's next preview and host 1's next commit are refused.
    let revoked = hosts[2].halt("fleet operator pressed the button").expect("halt");
    assert_eq!(revoked.len(), 7, "every open permit revoked: {revoked:?}");
    refused(hosts[0].preview("swap", &swap("10")), ErrorCode::Denied, "fleet operator pressed the button");
    refused(hosts[1].commit(&open[0].permit_id), ErrorCode::Denied, "halted");
    assert_eq!(hosts[0].phase(), Phase::Terminal);
    assert_eq!(before - f.usdc(), U256::from(500_000_000u64), "nothing more executed");
    assert!(hosts[1].resume().expect("resume on host 1"), "a halt was in force");
    refused(hosts[0].commit(&open[1].permit_id), ErrorCode::Denied, "revoked");
    // The revoked reservations were released: room for $3,500 again.
    hosts[0].preview("swap", &swap("900")).expect("previews work again");

    // An agent on host 0 lowers the phase: the whole fleet is in it; no host's agent raises it;
    // the operator's resume (on host 2) lifts it everywhere.
    let set = hosts[1].phase();
    hosts[0].lower_phase(Phase::Survival).expect("lowered");
    assert_eq!(hosts[1].phase(), Phase::Survival, "lowered fleet-wide");
    refused(hosts[2].lower_phase(Phase::Cautious), ErrorCode::Denied, "bardo resume");
    hosts[1].lower_phase(Phase::Survival).expect("the same phase again");
    assert!(hosts[2].resume().expect("the operator resumes"), "a lowered phase was in force");
    assert_eq!((hosts[0].phase(), hosts[1].phase()), (set, set), "each host back at its own phase");

    // One chain, written by all three, verifies; a record added by someone with NATS access but
    // without the host key breaks it.
    let cluster = f.connect(urls.clone()).expect("connect");
    let label = cluster.audit_label();
    let (records, _) = shared::verify(&cluster, label.as_ref(), Some(&f.key)).expect("one intact chain");
    let lines = shared::lines_of(&cluster, label.as_ref()).expect("records");
    assert_eq!(lines.len() as u64, records);
    for id in open.iter().map(|p| &p.permit_id) {
        let created = lines.iter().filter(|l| l.contains("PermitCreated") && l.contains(id.as_str())).count();
        assert_eq!(created, 1, "{id}: its preview recorded once");
    }
    assert!(
        lines.iter().any(|l| l.contains("\"Halted\"")) && lines.iter().any(|l| l.contains("\"Resumed\""))
    );
    let intruder = AuditLog::shared(cluster.clone(), &label, HostKey::ephemeral());
    assert!(
        intruder
            .append(bardo_safety::audit_log::AuditEvent::PermitCancelled { permit_id: "permit-00".into() })
            .is_err(),
        "an appender without the key cannot even chain on from a sealed record"
    );
    let forged = format!(
        "{{\"seq\":{},\"prev\":\"{}\",\"time_ms\":0,\"event\":{{\"type\":\"Resumed\",\"reason\":\"x\",\"halted_at_ms\":0}},\"mac\":\"{}\"}}\n",
        records + 1,
        "00".repeat(32),
        "11".repeat(32)
    );
    let (last, _) = cluster.chain_last().expect("tail").expect("records");
    cluster.chain_append(last, forged.into_bytes()).expect("published").expect("at the tail");
    let e = shared::verify(&cluster, label.as_ref(), Some(&f.key)).expect_err("an edit is detected");
    assert!(e.to_string().contains(&format!("record {}", records + 1)), "{e}");
    // The hosts refuse to chain on from it.
    let err = hosts[0].preview("swap", &swap("10")).expect_err("no record chains on from a forged one");
    assert_eq!(err.code, ErrorCode::Internal, "{err}");

    fleet_events_resume_without_a_gap_or_a_duplicate(&cluster, &fabrics, &open);
}

/// Every host's events are in the fleet's stream once, in the host's order, with contiguous
/// fleet sequences; a subscriber that stops and resumes from the next sequence gets the rest.
fn fleet_events_resume_without_a_gap_or_a_duplicate(
    cluster: &Cluster,
    fabrics: &[(Arc<Fabric>, Forwarder)],
    open: &[&bardo_safety::permit::ActionPermit],
) {
    for (fabric, forwarder) in fabrics {
        assert!(forwarder.wait_for(fabric.last_seq(), Duration::from_secs(20)), "published");
    }
    let total: u64 = fabrics.iter().map(|(f, _)| f.last_seq()).sum();
    let (first, last) = cluster.events_bounds().expect("bounds");
    assert_eq!((first, last), (1, total), "every host event once");
    let read = |from: u64, n: u64| -> Vec<FleetEnvelope> {
        let mut feed = cluster.subscribe_events(Some(from)).expect("subscribe");
        (0..n)
            .map(|_| match feed.next(Duration::from_secs(10)).expect("feed") {
                Some(Ok(m)) => fleet_events::decode(&m).expect("decodes"),
                other => panic!("{other:?}"),
            })
            .collect()
    };
    let half = total / 2;
    let mut events = read(1, half);
    events.extend(read(half + 1, total - half));
    assert_eq!(events.iter().map(|e| e.seq).collect::<Vec<_>>(), (1..=total).collect::<Vec<_>>());
    for (i, (fabric, _)) in fabrics.iter().enumerate() {
        let host_seqs: Vec<u64> =
            events.iter().filter(|e| e.host == format!("host-{i}")).filter_map(|e| e.host_seq).collect();
        assert_eq!(host_seqs, (1..=fabric.last_seq()).collect::<Vec<_>>(), "host {i}: each once, in order");
    }
    for permit in open {
        let created = events
            .iter()
            .filter(|e| {
                e.event["type"] == "PermitCreated" && e.event["permit_id"] == permit.permit_id.as_str()
            })
            .count();
        assert_eq!(created, 1, "{}: created once in the fleet's events", permit.permit_id);
    }
    assert!(events.iter().any(|e| e.event["type"] == "Halted"), "the halt is in the fleet's events");
}

#[test]
fn the_fleet_writes_on_with_a_node_down_and_a_host_cut_from_nats_fails_closed() {
    let mut f = fleet();
    let urls = f.nats.urls();
    let a = f.host(urls.clone(), 10_000);
    // Host b knows node 2 only.
    let b = f.host(vec![f.nats.url(2)], 10_000);
    let before = f.usdc();

    // Node 0 dies: two of three remain, a quorum; both hosts write on (once JetStream has moved
    // the streams' leaders, if node 0 led them).
    f.nats.kill(0);
    let permit = retry(|| a.preview("swap", &swap("100")));
    b.commit(&permit.permit_id).expect("committed on the other host");
    assert_eq!(before - f.usdc(), U256::from(100_000_000u64), "executed once");
    f.nats.restart(0).expect("node 0 back");

    // Node 2 dies: b is cut from the cluster. Its previews and commits fail closed, retryable,
    // and nothing executes; a (nodes 0 and 1) goes on.
    let open = retry(|| a.preview("swap", &swap("100")));
    f.nats.kill(2);
    let e = refused(b.preview("swap", &swap("100")), ErrorCode::Unavailable, "retry");
    assert!(e.retryable, "{e}");
    let e = refused(b.commit(&open.permit_id), ErrorCode::Unavailable, "never falls back");
    assert!(e.retryable, "{e}");
    assert_eq!(before - f.usdc(), U256::from(100_000_000u64), "the cut host executed nothing");
    retry(|| a.preview("swap", &swap("1")));
    a.commit(&open.permit_id).expect("the permit b could not take");
    assert_eq!(before - f.usdc(), U256::from(200_000_000u64), "the permit b could not take executed on a");
}
