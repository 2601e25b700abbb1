//! Routes by Uniswap's SDKs on the devnet: `uniswap_get_route` (the host's `bardo:host/uniswap-sdk`
//! over pools the host reads) gives a route and its UniversalRouter calldata; through preview and
//! commit — the scope check, the simulation and the SDK cross-check on the way — the wallet pays
//! and gets exactly the route's amounts. A trade too big for one pool is split; a plugin the
//! operator did not grant the SDK gets `denied`.

use alloy::primitives::{Address, U256};
use bardo_core::ErrorCode;
use bardo_devnet::deploy::Deployments;
use bardo_devnet::{Anvil, CHAIN_ID, DEV_KEY};
use bardo_runtime::plugin::Host;
use bardo_runtime::services::UniswapSdk;
use bardo_safety::WritePath;
use bardo_safety::audit_log::AuditLog;
use bardo_safety::hooks::UniswapCrossCheck;
use bardo_safety::hooks::uniswap_cross_check::UniswapBook;
use bardo_safety::hooks::{AllowlistGuard, ApprovalGuard, PolicyCage, SafetyHook};
use bardo_safety::host_key::HostKey;
use bardo_sidecar::{Config, Sidecar};
use bardo_test_artifacts::UNISWAP;
use bardo_test_support::devnet;
use bardo_test_support::writes::u256;
use bardo_test_support::{devnet_services, host_over};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

struct Routed {
    node: Anvil,
    d: Deployments,
    host: Arc<Host>,
    path: WritePath,
    _dirs: [tempfile::TempDir; 2],
}

/// The devnet with a host whose sidecar is granted to `grants`, and a write path that
/// cross-checks every Uniswap swap with the same sidecar.
fn routed(grants: &[&str]) -> Routed {
    routed_through(grants, None)
}

/// [`routed`] with every request to the node held for `delay` (a slow node).
fn routed_through(grants: &[&str], delay: Option<std::time::Duration>) -> Routed {
    routed_with(grants, delay, None)
}

/// [`routed_through`] with the sidecar's Node process starting `slow_start` late. (A wrapper
/// that sleeps, then runs the real `node`: a fault a real start does not produce on demand.)
fn routed_with(
    grants: &[&str],
    delay: Option<std::time::Duration>,
    slow_start: Option<std::time::Duration>,
) -> Routed {
    let (node, d) = devnet();
    let url = match delay {
        Some(delay) => {
            let upstream = node.url().trim_start_matches("http://").parse().expect("anvil's address");
            format!("http://{}", bardo_test_support::slow_proxy(upstream, delay))
        }
        None => node.url(),
    };
    let settings = d.uniswap_settings();
    let (audit, state) = (tempfile::tempdir().expect("tempdir"), tempfile::tempdir().expect("tempdir"));
    let mut config =
        Config::new(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../sidecar"), state.path());
    if let Some(late) = slow_start {
        let wrapper = audit.path().join("slow-node");
        std::fs::write(&wrapper, format!("#!/bin/sh\nsleep {}\nexec node \"$@\"\n", late.as_secs_f64()))
            .expect("wrapper");
        std::fs::set_permissions(&wrapper, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .expect("chmod");
        config.node = wrapper;
    }
    let sidecar = Sidecar::new(config);
    let books = UniswapBook::from_settings(&settings).expect("books");
    let services = devnet_services(&url, BTreeMap::from([("uniswap".to_owned(), settings)]), Some(DEV_KEY))
        .with_uniswap_sdk(Some(UniswapSdk::new(
            sidecar.clone(),
            books.clone(),
            grants.iter().map(|g| g.to_string()).collect(),
        )));
    let host = Arc::new(host_over(services, &[UNISWAP]));
    let hooks: Vec<Box<dyn SafetyHook>> = vec![
        Box::new(PolicyCage::default()),
        Box::new(AllowlistGuard::new(BTreeMap::from([(CHAIN_ID, d.write_targets())]))),
        Box::new(ApprovalGuard),
    ];
    let log = AuditLog::open(&audit.path().join("audit.jsonl"), HostKey::ephemeral()).expect("audit log");
    let valuer = bardo_test_support::writes::valuer(&host, &d);
    let check = UniswapCrossCheck { services: host.services().clone(), sidecar, books, valuer };
    let path = WritePath::new(host.clone(), host.services().clone(), hooks, log)
        .with_after_simulation(vec![Box::new(check)]);
    Routed { node, d, host, path, _dirs: [audit, state] }
}

impl Routed {
    fn token(&self, symbol: &str) -> Address {
        self.d.tokens[symbol].address
    }

    fn balance(&self, token: Address) -> U256 {
        bardo_test_support::balance_of(&self.node, token, self.d.deployer)
    }

    fn route(&self, params: Value) -> Result<Value, bardo_core::error::ToolError> {
        let json = self.host.call("uniswap_get_route", &params.to_string()).result?;
        Ok(serde_json::from_str(&json).expect("json"))
    }

    /// Preview and commit a swap of `route` with `params`: what the wallet paid and got.
    fn swap(&self, mut params: Value, route: &Value) -> (U256, U256) {
        let (tin, tout) = (
            self.token(params["token_in"].as_str().expect("in")),
            self.token(params["token_out"].as_str().expect("out")),
        );
        params["route"] = route["route"].clone();
        let permit = self.path.preview("swap", &params).unwrap_or_else(|e| panic!("preview {params}: {e}"));
        let (in_before, out_before) = (self.balance(tin), self.balance(tout));
        let done = self.path.commit(&permit.permit_id).unwrap_or_else(|e| panic!("commit {params}: {e}"));
        assert!(done.outcome_mismatch.is_empty(), "{:?}", done.outcome_mismatch);
        (in_before - self.balance(tin), self.balance(tout) - out_before)
    }
}

fn legs(route: &Value) -> &Vec<Value> {
    route["legs"].as_array().expect("legs")
}

#[test]
fn the_sdks_route_executes_to_its_quoted_amounts_to_the_wei() {
    let e = routed(&["uniswap"]);
    // Exact-in, USDC -> WETH: the pools of every version are candidates.
    let params = json!({"chain_id": CHAIN_ID, "token_in": "USDC", "token_out": "WETH", "amount": "1000"});
    let route = e.route(params.clone()).expect("a route");
    let r = &route["route"];
    assert_eq!(u256(&r["amount_in_base"]), U256::from(1_000_000_000u64));
    assert!(
        r["calldata"].as_str().expect("calldata").starts_with("0x3593564c"),
        "execute(bytes,bytes[],uint256)"
    );
    let (paid, got) = e.swap(params, &route);
    assert_eq!(paid, u256(&r["amount_in_base"]));
    assert_eq!(got, u256(&r["amount_out_base"]), "the wallet gets the SDK's figure to the wei");

    // Exact-out through WETH: USDC -> DAI has no direct pool on the devnet.
    let params = json!({"chain_id": CHAIN_ID, "token_in": "USDC", "token_out": "DAI", "amount": "5000", "side": "exact_out"});
    let route = e.route(params.clone()).expect("a two-hop route");
    let weth = format!("{:#x}", e.token("WETH"));
    for leg in legs(&route) {
        let pools = leg["pools"].as_array().expect("pools");
        assert_eq!(pools.len(), 2, "{leg}");
        assert_eq!(pools[0]["token_out"].as_str().map(str::to_lowercase), Some(weth.clone()), "{leg}");
    }
    let r = &route["route"];
    let (paid, got) = e.swap(params, &route);
    // At least what was asked for; a V2 path, which the router runs forward from the input it
    // computed, pays a few wei more — and the route says so.
    assert!(got >= U256::from(5000u64) * U256::from(10u64).pow(U256::from(18u8)));
    assert_eq!(got, u256(&r["amount_out_base"]), "the wallet gets the SDK's figure to the wei");
    assert_eq!(paid, u256(&r["amount_in_base"]), "the wallet pays the SDK's figure to the wei");
    assert!(paid <= u256(&r["maximum_in_base"]));
}

#[test]
fn a_trade_too_big_for_one_pool_is_split_and_executes_to_its_quote() {
    let e = routed(&["uniswap"]);
    let params = json!({"chain_id": CHAIN_ID, "token_in": "USDC", "token_out": "WETH", "amount": "300000"});
    let mut one_path = params.clone();
    one_path["max_splits"] = json!(1);
    let single = e.route(one_path).expect("a single-path route");
    assert_eq!(legs(&single).len(), 1);
    let split = e.route(params.clone()).expect("a split route");
    assert!(legs(&split).len() >= 2, "300k USDC moves any one pool too far: {split}");
    let percents: u64 = legs(&split).iter().map(|l| l["percent"].as_u64().expect("percent")).sum();
    assert_eq!(percents, 100);
    let (one, many) = (u256(&single["route"]["amount_out_base"]), u256(&split["route"]["amount_out_base"]));
    assert!(many > one, "the split ({many}) beats the best single path ({one})");
    let (paid, got) = e.swap(params, &split);
    assert_eq!(paid, u256(&split["route"]["amount_in_base"]));
    assert_eq!(got, many, "every path pays its share: the wallet gets the sum to the wei");
}

#[test]
fn routes_are_for_granted_plugins_and_held_to_the_params() {
    let e = routed(&[]);
    let params = json!({"chain_id": CHAIN_ID, "token_in": "USDC", "token_out": "WETH", "amount": "1000"});
    let err = e.route(params.clone()).expect_err("not granted");
    assert_eq!(err.code, ErrorCode::Denied, "{err}");
    assert!(err.message.contains("[sidecar] grant"), "names the fix: {err}");
    drop(e);

    let e = routed(&["uniswap"]);
    let route = e.route(params.clone()).expect("a route");
    // A route for another amount, or another router, is not this swap's.
    let mut other = params.clone();
    other["amount"] = json!("999");
    other["route"] = route["route"].clone();
    let err = e.path.preview("swap", &other).expect_err("another amount");
    assert_eq!(err.code, ErrorCode::InvalidParams, "{err}");
    let mut moved = params.clone();
    moved["route"] = route["route"].clone();
    moved["route"]["router"] = json!(format!("{:#x}", e.token("DAI")));
    let err = e.path.preview("swap", &moved).expect_err("another router");
    assert_eq!(err.code, ErrorCode::InvalidParams, "{err}");
    // ETH is not an ERC-20: typed, with the fix.
    let err = e.route(json!({"chain_id": CHAIN_ID, "token_in": "ETH", "token_out": "USDC", "amount": "1"}));
    assert_eq!(err.expect_err("ether").code, ErrorCode::InvalidParams);
}

#[test]
fn a_route_that_runs_out_of_its_time_budget_says_so_not_that_the_node_failed() {
    // Every request held 1 s: the route's rounds of pool reads (each one batch) outlast the
    // tool's 5 s budget.
    let r = routed_through(&["uniswap"], Some(std::time::Duration::from_millis(1000)));
    let params = json!({"chain_id": CHAIN_ID, "token_in": "USDC", "token_out": "DAI", "amount": "250000"});
    let e = r.route(params).expect_err("out of time");
    assert_eq!(e.code, bardo_core::error::ErrorCode::LimitExceeded, "{e:?}");
    assert!(e.message.contains("time budget") && !e.message.contains("within 0 ms"), "{}", e.message);
}

#[test]
fn the_sidecars_start_is_not_charged_to_the_route_it_serves() {
    // Node takes 6 s to start, longer than the tool's whole 5 s budget: the route still runs,
    // its reads and the plugin's own code getting the budget the start did not use.
    let r = routed_with(&["uniswap"], None, Some(std::time::Duration::from_secs(6)));
    let started = std::time::Instant::now();
    let params = json!({"chain_id": CHAIN_ID, "token_in": "USDC", "token_out": "DAI", "amount": "250000"});
    let route = r.route(params.clone()).expect("a route despite the slow start");
    assert!(started.elapsed() >= std::time::Duration::from_secs(6), "the start was slow");
    assert!(!legs(&route).is_empty(), "{route}");
    // Started once; the next route at the same block reads its pools from the kept set.
    let again = r.route(params).expect("a second route");
    assert_eq!(again["amount_out"], route["amount_out"], "{again}");
}
