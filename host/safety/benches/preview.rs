//! `preview_action` for a V3 swap end to end — plugin plan (fresh instance, chain reads), the
//! hook chain (scopes, the simulation with the wallet's change set, the hallucination detector,
//! stranded value, the price guard, the value guard on trusted prices, the health floor),
//! permit — on a warm cache. Floor p50 <= 1 ms. Measured beside the plan alone, the same preview
//! with the value guard alone and with no value check (what the value checks cost, each), and
//! with every chain read going to the node (head TTL 0);
//! the simulate bench measures the change-set derivation alone, with and without. With a fleet's
//! store (`[cluster]`): the same preview with permits and audit chain on a NATS JetStream
//! cluster (one node; three nodes, three replicas) against the files, and a permit's issue +
//! take alone on each store. And a Morpho Blue supply's preview, with every check. Through a
//! Safe: the dev Safe (no guard) beside the caged Safe, whose PolicyCage is read and simulated.

use bardo_cluster::Cluster;
use bardo_core::profile::Profile;
use bardo_core::tool::RequiredCapability;
use bardo_devnet::nats::NatsCluster;
use bardo_devnet::snapshot::Snapshot;
use bardo_devnet::{CHAIN_ID, DEV_KEY};
use bardo_evm::Evm;
use bardo_evm::chain::{ChainConfig, Chains};
use bardo_evm::signer::Wallet;
use bardo_runtime::Services;
use bardo_runtime::engine::{Engine, Limits};
use bardo_runtime::plugin::{Host, WasiPolicy};
use bardo_safety::WritePath;
use bardo_safety::audit_log::AuditLog;
use bardo_safety::hooks::value_guard::{DEFAULT_MAX_LOSS_BPS, ValueGuard};
use bardo_safety::hooks::{AllowlistGuard, ApprovalGuard, PolicyCage, SafetyHook};
use bardo_safety::host_key::HostKey;
use bardo_safety::permit::{ActionPermit, Permits};
use bardo_safety::valuation::{PricingConfig, Valuer};
use criterion::{Criterion, criterion_group, criterion_main};
use std::collections::BTreeMap;
use std::hint::black_box;
use std::path::Path;
use std::sync::Arc;
use std::time::SystemTime;

// What `bardo` runs on (host/cli/src/main.rs).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Which checks run after the simulation.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Checks {
    /// None: the simulation and the hallucination detector only.
    None,
    /// The value guard alone (the checks before stranded value, the price guard and the floor).
    ValueGuard,
    /// Every check `bardo` runs: stranded value, price guard, value guard, health floor.
    All,
}

fn write_path(url: &str, snapshot: &Snapshot, head_ttl_ms: u64, audit: &Path, checks: Checks) -> WritePath {
    write_path_with(url, snapshot, head_ttl_ms, audit, checks, Store::Memory, None)
}

/// Where permits (and, on a cluster, the audit chain) are kept.
enum Store<'a> {
    /// In memory.
    Memory,
    /// In that file, as `bardo` keeps them (shared between processes).
    File(&'a Path),
    /// In the fleet's NATS cluster, as `bardo` with `[cluster]` keeps them, with the audit chain.
    Cluster(&'a Cluster),
}

fn write_path_with(
    url: &str,
    snapshot: &Snapshot,
    head_ttl_ms: u64,
    audit: &Path,
    checks: Checks,
    store: Store<'_>,
    through: Option<bardo_evm::SafeWallet>,
) -> WritePath {
    let config = ChainConfig { head_ttl_ms, ..ChainConfig::new(url) };
    let chains = Chains::new(&BTreeMap::from([(CHAIN_ID, config)]), bardo_test_support::host_runtime())
        .expect("chains");
    let d = &snapshot.deployments;
    let evm = Evm::new(chains, Some(Wallet::from_signer(DEV_KEY.parse().expect("key"))));
    let evm = match through {
        Some(safe) => evm.through(safe),
        None => evm,
    };
    let services = Arc::new(
        Services::new(evm)
            .with_settings(BTreeMap::from([("uniswap".to_owned(), d.uniswap_settings())]), BTreeMap::new()),
    );
    let engine =
        Engine::new(Some(Path::new(env!("CARGO_TARGET_TMPDIR")).join("bench-cache"))).expect("engine");
    let profile = Profile::parse("trader").expect("profile").with_capabilities([RequiredCapability::Wallet]);
    let mut host =
        Host::new(engine, services.clone(), profile, Limits::default(), WasiPolicy::default()).expect("host");
    host.load_file(Path::new(bardo_test_artifacts::UNISWAP)).expect("uniswap");
    let hooks: Vec<Box<dyn SafetyHook>> = vec![
        Box::new(PolicyCage::default()),
        Box::new(AllowlistGuard::new(BTreeMap::from([(CHAIN_ID, d.write_targets())]))),
        Box::new(ApprovalGuard),
    ];
    let key = HostKey::ephemeral();
    let log = match &store {
        Store::Cluster(c) => AuditLog::shared((*c).clone(), &c.audit_label(), key.clone()),
        _ => AuditLog::open(audit, key.clone()).expect("audit log"),
    };
    let valuer = Valuer::new(&services, PricingConfig::from_json(d.pricing_json()).expect("pricing"));
    let value_guard = ValueGuard {
        valuer,
        position_managers: BTreeMap::from([(CHAIN_ID, [d.uniswap_v3["position_manager"]].into())]),
        v4_position_managers: BTreeMap::from([(CHAIN_ID, [d.uniswap_v4["position_manager"]].into())]),
        recipients: BTreeMap::from([(CHAIN_ID, d.treasury().into_iter().collect())]),
        max_loss_bps: DEFAULT_MAX_LOSS_BPS,
        max_price_deviation_bps: bardo_safety::hooks::price_guard::DEFAULT_MAX_PRICE_DEVIATION_BPS,
        morpho_markets: bardo_test_support::writes::morpho_markets(d),
    };
    let after: Vec<Box<dyn SafetyHook>> = match checks {
        Checks::None => Vec::new(),
        Checks::ValueGuard => vec![Box::new(value_guard)],
        Checks::All => bardo_test_support::writes::guards_on(&services, d),
    };
    let path = WritePath::new(Arc::new(host), services, hooks, log).with_after_simulation(after);
    match store {
        Store::Memory => path,
        Store::File(file) => path.with_permit_file(file, key),
        Store::Cluster(c) => path.with_permits(Permits::shared(c.clone(), key)),
    }
}

fn preview(c: &mut Criterion) {
    // As `bardo` runs: no huge pages for mimalloc's heap (each zeroed whole on first touch).
    rustix::thread::disable_transparent_huge_pages(true).expect("prctl(PR_SET_THP_DISABLE)");
    let (snapshot, node) = bardo_test_support::snapshot_and_anvil();
    let dir = tempfile::tempdir().expect("tempdir");
    let warm = write_path(&node.url(), snapshot, 250, &dir.path().join("warm.jsonl"), Checks::All);
    let warm_host = warm.host().expect("a runtime host");
    let guarded =
        write_path(&node.url(), snapshot, 250, &dir.path().join("guarded.jsonl"), Checks::ValueGuard);
    let unvalued = write_path(&node.url(), snapshot, 250, &dir.path().join("unvalued.jsonl"), Checks::None);
    let uncached = write_path(&node.url(), snapshot, 0, &dir.path().join("cold.jsonl"), Checks::All);
    let filed = write_path_with(
        &node.url(),
        snapshot,
        250,
        &dir.path().join("filed.jsonl"),
        Checks::All,
        Store::File(&dir.path().join("permits.json")),
        None,
    );
    // Through the dev Safe (funded for the swap): one Safe transaction of the plan's calls is
    // simulated instead of the calls.
    let dev_safe = bardo_test_support::safe::dev_safe(&snapshot.deployments, bardo_evm::SafeKey::Owner);
    // 100,000 USDC to each Safe (a preview swaps 1,000): the dev account's USDC also funds the
    // devnet's staking incentive, and two Safes at 1,000,000 each took more than it has left.
    let usdc = alloy::primitives::U256::from(100_000_000_000u64);
    bardo_test_support::safe::fund_dev_safe(
        &node.url(),
        &snapshot.deployments,
        Default::default(),
        &[("USDC", usdc)],
    );
    let safe = write_path_with(
        &node.url(),
        snapshot,
        250,
        &dir.path().join("safe.jsonl"),
        Checks::All,
        Store::Memory,
        Some(dev_safe),
    );
    // Through the caged Safe: the same, with its PolicyCage read at preview (the guard slot and
    // `rules()`, cached per block) and run in the simulation (its checks before and after).
    let caged = bardo_test_support::safe::caged_safe(&snapshot.deployments);
    bardo_test_support::safe::fund_safe(
        &node.url(),
        &snapshot.deployments,
        caged.safe,
        Default::default(),
        &[("USDC", usdc)],
    );
    let caged_path = write_path_with(
        &node.url(),
        snapshot,
        250,
        &dir.path().join("caged.jsonl"),
        Checks::All,
        Store::Memory,
        Some(caged),
    );
    let nats_dirs = (tempfile::tempdir().expect("tempdir"), tempfile::tempdir().expect("tempdir"));
    let one = NatsCluster::start(nats_dirs.0.path(), 1).expect("nats-server (run `make setup`)");
    let three = NatsCluster::start(nats_dirs.1.path(), 3).expect("three nats-servers");
    // Anchored in files, as `bardo` with `[cluster]` runs.
    let (c1, c3) = (
        bardo_test_support::nats::connect_anchored(&one, "bench1", 1, &dir.path().join("anchor1.json")),
        bardo_test_support::nats::connect_anchored(&three, "bench3", 3, &dir.path().join("anchor3.json")),
    );
    let fleet1 = write_path_with(
        &node.url(),
        snapshot,
        250,
        &dir.path().join("x.jsonl"),
        Checks::All,
        Store::Cluster(&c1),
        None,
    );
    let fleet3 = write_path_with(
        &node.url(),
        snapshot,
        250,
        &dir.path().join("x.jsonl"),
        Checks::All,
        Store::Cluster(&c3),
        None,
    );
    let params =
        serde_json::json!({"chain_id": CHAIN_ID, "token_in": "USDC", "token_out": "WETH", "amount": "1000"});
    let text = params.to_string();
    let permit = warm.preview("swap", &params).expect("preview");
    assert_eq!(permit.plan.calls.len(), 3, "USDC → Permit2, Permit2 → router, swap");
    // One write through the caged Safe first, as a Safe in use has made: otherwise every
    // preview simulates the day's first write, which values all seven approved positions.
    let first = caged_path.preview("swap", &params).expect("preview through the caged Safe");
    caged_path.commit(&first.permit_id).expect("the day's first write through the caged Safe");

    let mut g = c.benchmark_group("preview_v3_swap");
    g.bench_function("plan_only_warm", |b| {
        b.iter(|| black_box(warm_host.plan("uniswap_execute_swap", &text).result.expect("plan")))
    });
    g.bench_function("preview_warm", |b| {
        b.iter(|| black_box(warm.preview("swap", &params).expect("preview")))
    });
    // `[signer] mode = "safe"`: the same plan as one Safe transaction (execTransaction of a
    // MultiSendCallOnly batch) from the key, the change set the Safe's.
    g.bench_function("preview_warm_through_safe", |b| {
        b.iter(|| black_box(safe.preview("swap", &params).expect("preview through the Safe")))
    });
    g.bench_function("preview_warm_through_caged_safe", |b| {
        b.iter(|| {
            let permit = caged_path.preview("swap", &params).expect("preview through the caged Safe");
            assert!(permit.policy_hash.is_some());
            black_box(permit)
        })
    });
    // The cage read alone, as a preview makes it (cached per block): what the read adds.
    let caged_host = caged_path.host().expect("a runtime host");
    g.bench_function("cage_read", |b| {
        b.iter(|| {
            black_box(
                bardo_safety::cage::read(caged_host.services(), CHAIN_ID, caged.safe, false).expect("read"),
            )
        })
    });
    // As `bardo` runs it: permits in the store shared between processes (a line appended to
    // this process's journal per preview).
    g.bench_function("preview_warm_permit_file", |b| {
        b.iter(|| black_box(filed.preview("swap", &params).expect("preview")))
    });
    // As `bardo` with `[cluster]` runs it: permit and audit records in NATS JetStream.
    g.bench_function("preview_warm_cluster_1_node", |b| {
        b.iter(|| black_box(fleet1.preview("swap", &params).expect("preview")))
    });
    g.bench_function("preview_warm_cluster_3_nodes_r3", |b| {
        b.iter(|| black_box(fleet3.preview("swap", &params).expect("preview")))
    });
    // The value guard alone (its feed and oracle reads): against `preview_warm`, what stranded
    // value, the price guard (a slot0 and the pool's tokens) and the health floor add.
    g.bench_function("preview_warm_value_guard_only", |b| {
        b.iter(|| black_box(guarded.preview("swap", &params).expect("preview")))
    });
    // No value check at all: what host-side valuation costs.
    g.bench_function("preview_warm_without_value_checks", |b| {
        b.iter(|| black_box(unvalued.preview("swap", &params).expect("preview")))
    });
    g.bench_function("preview_every_read_from_the_node", |b| {
        b.iter(|| black_box(uncached.preview("swap", &params).expect("preview")))
    });
    g.finish();

    // What a commit's write-ahead adds per transaction: its record synced before it is sent,
    // against the same record written as a preview's are (a thread syncs them).
    let mut g = c.benchmark_group("write_ahead");
    let log = AuditLog::open(&dir.path().join("ahead.jsonl"), HostKey::ephemeral()).expect("log");
    let signed = || bardo_safety::audit_log::AuditEvent::TransactionSigned {
        permit_id: "permit-00000000000000000000000000000000".into(),
        step: 0,
        steps: 1,
        chain_id: CHAIN_ID,
        from: "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266".into(),
        nonce: 7,
        tx_hash: format!("0x{}", "ab".repeat(32)),
        raw: format!("0x{}", "02".repeat(180)),
    };
    g.bench_function("record_synced", |b| b.iter(|| log.append(signed()).expect("append")));
    g.bench_function("record_unsynced_baseline", |b| b.iter(|| log.write_all(&[signed()]).expect("write")));
    g.finish();

    // A permit issued and taken (sealed, stored, read back, consumed once) on each store.
    let mut g = c.benchmark_group("permit_issue_take");
    let stores = [
        ("file", Permits::open(&dir.path().join("take.json"), HostKey::ephemeral())),
        ("cluster_1_node", Permits::shared(c1.clone(), HostKey::ephemeral())),
        ("cluster_3_nodes_r3", Permits::shared(c3.clone(), HostKey::ephemeral())),
    ];
    for (name, permits) in &stores {
        let mut n = 0u64;
        g.bench_function(*name, |b| {
            b.iter(|| {
                n += 1;
                let id = format!("permit-{n:032x}");
                let fresh = ActionPermit {
                    permit_id: id.clone(),
                    created_at: SystemTime::now(),
                    audit_record: None,
                    ..permit.clone()
                };
                permits.insert(fresh).expect("issue");
                black_box(permits.take(&id, SystemTime::now()).expect("take"))
            })
        });
    }
    g.finish();

    // V4 against V3 on the same pair, both through the UniversalRouter (WETH/DAI, where V4's 0.05 %
    // pool quotes best): the best route across V2+V3+V4, and the preview of each.
    let v4 =
        serde_json::json!({"chain_id": CHAIN_ID, "token_in": "WETH", "token_out": "DAI", "amount": "1.5"});
    let v3 = serde_json::json!({"chain_id": CHAIN_ID, "token_in": "WETH", "token_out": "DAI", "amount": "1.5",
        "version": "v3"});
    let (v4_text, v3_text) = (v4.to_string(), v3.to_string());
    let best = warm_host.call("uniswap_get_quote", &v4_text).result.expect("quote");
    assert!(best.contains(r#""version":"v4""#), "V4 quotes best on WETH/DAI: {best}");
    assert_eq!(warm.preview("swap", &v4).expect("preview").plan.calls.len(), 3, "Permit2 x2 + execute");
    let mut g = c.benchmark_group("v4_weth_dai");
    g.bench_function("quote_best_route_v2_v3_v4", |b| {
        b.iter(|| black_box(warm_host.call("uniswap_get_quote", &v4_text).result.expect("quote")))
    });
    // USDC -> DAI: no pool pairs them; every two-hop route through WETH is quoted too.
    let two_hops =
        serde_json::json!({"chain_id": CHAIN_ID, "token_in": "USDC", "token_out": "DAI", "amount": "1000"})
            .to_string();
    g.bench_function("quote_best_route_two_hops", |b| {
        b.iter(|| black_box(warm_host.call("uniswap_get_quote", &two_hops).result.expect("quote")))
    });
    g.bench_function("quote_v3_only", |b| {
        b.iter(|| black_box(warm_host.call("uniswap_get_quote", &v3_text).result.expect("quote")))
    });
    g.bench_function("preview_v4_universal_router", |b| {
        b.iter(|| black_box(warm.preview("swap", &v4).expect("preview")))
    });
    g.bench_function("preview_v3", |b| b.iter(|| black_box(warm.preview("swap", &v3).expect("preview"))));
    g.finish();

    // Morpho Blue, warm as `preview_warm` (head TTL 250 ms, every check `bardo` runs): a supply
    // planned by the morpho plugin (the market, the IRM's rate, the oracle, the position), its
    // scope, the Morpho position in the change set, its value at trusted prices and the health
    // floor's probes (position, market, price in both states), beside the swap above.
    let d = &snapshot.deployments;
    let config = ChainConfig { head_ttl_ms: 250, ..ChainConfig::new(node.url()) };
    let chains = Chains::new(&BTreeMap::from([(CHAIN_ID, config)]), bardo_test_support::host_runtime())
        .expect("chains");
    let services = Services::new(Evm::new(chains, Some(Wallet::from_signer(DEV_KEY.parse().expect("key")))))
        .with_settings(BTreeMap::from([("morpho".to_owned(), d.morpho_settings())]), BTreeMap::new());
    let host = Arc::new(bardo_test_support::host_over(services, &[bardo_test_artifacts::MORPHO]));
    let (morpho, _audit) =
        bardo_test_support::writes::guarded_path(&host, d, PolicyCage::default(), d.write_targets());
    let supply = serde_json::json!({"chain_id": CHAIN_ID, "market": "WETH/USDC", "amount": "1000"});
    assert_eq!(
        morpho.preview("morpho-supply", &supply).expect("preview").plan.calls.len(),
        2,
        "approve, supply"
    );
    let mut g = c.benchmark_group("preview_morpho");
    g.bench_function("preview_warm_morpho_supply", |b| {
        b.iter(|| black_box(morpho.preview("morpho-supply", &supply).expect("preview")))
    });
    g.finish();
}

criterion_group!(benches, preview);
criterion_main!(benches);
