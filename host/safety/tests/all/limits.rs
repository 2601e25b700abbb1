//! The write path's limits on the devnet: USD spending per transaction, day and hot lane (raced
//! previews, a ledger shared between processes), the preview rate, approved assets and the
//! position cap — each refusal typed and naming its limit.

use super::write_path::{env_full, swap};
use bardo_core::{ErrorCode, ToolError};
use bardo_devnet::CHAIN_ID;
use bardo_devnet::deploy::Deployments;
use bardo_safety::audit_log::AuditLog;
use bardo_safety::hooks::spending_limiter::{SpendingLimiter, SpendingLimits};
use bardo_safety::hooks::{AllowlistGuard, ApprovalGuard, MaxPosition, PolicyCage, SafetyHook};
use bardo_safety::host_key::HostKey;
use bardo_safety::{Clock, WritePath};
use bardo_test_artifacts::UNISWAP;
use bardo_test_support::writes::valuer;
use bardo_test_support::{devnet, devnet_host};
use serde_json::{Value, json};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime};

#[test]
fn spending_limits_hold_under_concurrent_previews_and_value_tokens_on_chain() {
    let limits = SpendingLimits::new(1_000, 3_000);
    let e = env_full(true, Deployments::write_targets, Some(limits), None);
    e.refused(e.path.preview("swap", &swap("1500")), ErrorCode::LimitExceeded, "per-transaction");
    // WETH is valued at its pool price (~$2,000): 0.6 WETH is over the $1,000 per transaction.
    let weth_swap = json!({"chain_id": CHAIN_ID, "token_in": "WETH", "token_out": "USDC", "amount": "0.6"});
    e.refused(e.path.preview("swap", &weth_swap), ErrorCode::LimitExceeded, "per-transaction");

    // A $3,000 day split into eight $500 previews, raced: exactly six fit.
    let results: Vec<Result<_, ToolError>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..8).map(|_| s.spawn(|| e.path.preview("swap", &swap("500")))).collect();
        handles.into_iter().map(|h| h.join().expect("thread")).collect()
    });
    let ok: Vec<_> = results.iter().filter_map(|r| r.as_ref().ok()).collect();
    assert_eq!(ok.len(), 6, "{results:?}");
    for r in results.iter().filter_map(|r| r.as_ref().err()) {
        assert_eq!(r.code, ErrorCode::LimitExceeded);
        assert!(r.message.contains("daily"), "{r}");
    }
    // Cancelling a permit releases its reservation; committing one makes it spent.
    e.path.cancel(&ok[0].permit_id).expect("cancel");
    let again = e.path.preview("swap", &swap("500")).expect("the released $500 fits again");
    e.path.commit(&again.permit_id).expect("commit");
    e.refused(e.path.preview("swap", &swap("100")), ErrorCode::LimitExceeded, "daily");

    // Wrong decimals: a plan that approves 1000 "USDC" as if USDC had 18 decimals is valued by
    // the token's real 6 decimals: $1e15, refused.
    let usdc = e.d.tokens["USDC"].address.to_checksum(None);
    let router = e.d.uniswap_v3["swap_router"].to_checksum(None);
    let declared = json!({"balance_changes": [],
        "authorities": [{"token": usdc, "spender": router, "amount": "1000000000000000000000"}]});
    let wrong = json!({"chain_id": CHAIN_ID, "mode": "approve", "token": usdc, "target": router,
        "amount": "1000000000000000000000", "outcome": declared.to_string()});
    e.refused(e.path.preview("evil", &wrong), ErrorCode::LimitExceeded, "per-transaction");
}

#[test]
fn the_rate_limiter_stops_a_runaway_loop() {
    let e = env_full(true, Deployments::write_targets, None, Some(2));
    e.path.preview("swap", &swap("1")).expect("first");
    e.path.preview("swap", &swap("1")).expect("second");
    e.refused(e.path.preview("swap", &swap("1")), ErrorCode::LimitExceeded, "in the last minute");
}

#[test]
fn only_approved_assets_can_be_acquired() {
    let (node, d) = devnet();
    let host = Arc::new(devnet_host(&node.url(), d.uniswap_settings(), true, &[UNISWAP]));
    let usdc = d.tokens["USDC"].address;
    let cage = PolicyCage {
        approved_assets: BTreeMap::from([(CHAIN_ID, BTreeSet::from([usdc]))]),
        ..Default::default()
    };
    let hooks: Vec<Box<dyn SafetyHook>> =
        vec![Box::new(cage), Box::new(AllowlistGuard::new(BTreeMap::from([(CHAIN_ID, d.write_targets())])))];
    let dir = tempfile::tempdir().expect("tempdir");
    let path = WritePath::new(
        host.clone(),
        host.services().clone(),
        hooks,
        AuditLog::open(&dir.path().join("a.jsonl"), HostKey::ephemeral()).expect("log"),
    );
    // Buying WETH is refused; selling WETH for the approved USDC is allowed.
    let err = path.preview("swap", &swap("100")).expect_err("WETH is not approved");
    assert_eq!(err.code, ErrorCode::Denied);
    assert!(err.message.contains("not an approved asset"), "{err}");
    let sell = json!({"chain_id": CHAIN_ID, "token_in": "WETH", "token_out": "USDC", "amount": "0.1"});
    path.preview("swap", &sell).expect("acquiring USDC is allowed");
}

#[test]
fn the_spending_ledger_is_shared_between_processes_and_the_hot_lane_bounds_an_hour() {
    let (node, d) = devnet();
    let dir = tempfile::tempdir().expect("tempdir");
    let skew_ms = Arc::new(AtomicU64::new(0));
    // Permits are sealed with the host key: every process on the file holds the same one.
    let key = HostKey::ephemeral();
    // Two write paths as two `bardo` processes: own hosts and memory; shared permit and ledger files.
    let open = |n: u32| -> WritePath {
        let host = Arc::new(devnet_host(&node.url(), d.uniswap_settings(), true, &[UNISWAP]));
        let hooks: Vec<Box<dyn SafetyHook>> = vec![
            Box::new(PolicyCage::default()),
            Box::new(AllowlistGuard::new(BTreeMap::from([(CHAIN_ID, d.write_targets())]))),
            Box::new(ApprovalGuard),
        ];
        let skew = skew_ms.clone();
        let clock: Clock =
            Arc::new(move || SystemTime::now() + Duration::from_millis(skew.load(Ordering::SeqCst)));
        let log =
            AuditLog::open(&dir.path().join(format!("audit{n}.jsonl")), HostKey::ephemeral()).expect("log");
        let path = WritePath::new(host.clone(), host.services().clone(), hooks, log)
            .with_clock(clock)
            .with_permit_file(&dir.path().join("permits.json"), key.clone());
        let limits = SpendingLimits::new(1_000, 10_000).with_hot_lane(1_500, Duration::from_secs(3600));
        let limiter = SpendingLimiter::new(limits, valuer(&host, &d), path.ttl(), path.clock())
            .with_ledger_file(&dir.path().join("spending.json"));
        path.with_after_simulation(vec![Box::new(limiter)])
    };
    let (a, b) = (open(1), open(2));
    let refused = |r: Result<bardo_safety::permit::ActionPermit, ToolError>, hint: &str| {
        let e = r.expect_err("must be refused");
        assert_eq!(e.code, ErrorCode::LimitExceeded, "{e}");
        assert!(e.message.contains(hint), "{e}");
    };
    let first = a.preview("swap", &swap("800")).expect("first $800");
    // The other process sees the reservation: $1,600 within the hour is over the $1,500 lane.
    refused(b.preview("swap", &swap("800")), "hot lane");
    // Committed elsewhere: now spent, still counted.
    b.commit(&first.permit_id).expect("commit in the other process");
    refused(a.preview("swap", &swap("800")), "hot lane");
    // A cancelled reservation frees its room for both.
    let small = a.preview("swap", &swap("600")).expect("$1,400 fits the lane");
    refused(b.preview("swap", &swap("200")), "hot lane");
    b.cancel(&small.permit_id).expect("cancel in the other process");
    b.preview("swap", &swap("200")).expect("released");
    // An hour later the lane is free again; the day still counts the $800 spent.
    skew_ms.store(3_601_000, Ordering::SeqCst);
    a.preview("swap", &swap("900")).expect("a new hour");
    let ledger: Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("spending.json")).expect("ledger"))
            .expect("json");
    assert_eq!(ledger[&first.permit_id]["state"], "spent");
}

#[test]
fn the_policy_cage_caps_the_value_of_a_position() {
    let (node, d) = devnet();
    let host = Arc::new(devnet_host(&node.url(), d.uniswap_settings(), true, &[UNISWAP]));
    let dir = tempfile::tempdir().expect("tempdir");
    let path = |usd: u64| {
        let cage = PolicyCage {
            max_position: Some(MaxPosition { usd, valuer: valuer(&host, &d) }),
            ..Default::default()
        };
        let hooks: Vec<Box<dyn SafetyHook>> = vec![
            Box::new(cage),
            Box::new(AllowlistGuard::new(BTreeMap::from([(CHAIN_ID, d.write_targets())]))),
            Box::new(ApprovalGuard),
        ];
        WritePath::new(
            host.clone(),
            host.services().clone(),
            hooks,
            AuditLog::open(&dir.path().join(format!("a{usd}.jsonl")), HostKey::ephemeral()).expect("log"),
        )
    };
    // The wallet's WETH after buying more, valued at the pool price, against a $1 cap: refused.
    let err = path(1).preview("swap", &swap("100")).expect_err("over the position cap");
    assert_eq!(err.code, ErrorCode::LimitExceeded, "{err}");
    assert!(err.message.contains("position limit") && err.message.contains("max_position_usd"), "{err}");
    // A cap above the holding allows it.
    path(1_000_000_000_000).preview("swap", &swap("100")).expect("under the cap");
}
