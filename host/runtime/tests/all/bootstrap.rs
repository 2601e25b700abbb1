//! The bootstrap plugin: on a devnet, a new wallet is reported short of gas and of the
//! operator's targets, funded up to them (never lowered), then reported ready; without a wallet
//! or a chain the gaps say what fixes them; the cheat codes it funds with stay refused on a chain
//! not marked a devnet, and widening the grant to bootstrap plugins gives other plugins nothing.

use alloy::primitives::{Address, U256};
use alloy::providers::{Provider, ProviderBuilder};
use alloy::signers::local::PrivateKeySigner;
use bardo_core::ErrorCode;
use bardo_core::profile::Profile;
use bardo_core::tool::RequiredCapability;
use bardo_devnet::deploy::Deployments;
use bardo_devnet::{Anvil, CHAIN_ID};
use bardo_evm::Evm;
use bardo_evm::chain::{ChainConfig, Chains};
use bardo_evm::signer::Wallet;
use bardo_runtime::Services;
use bardo_runtime::engine::Limits;
use bardo_runtime::plugin::{Host, WasiPolicy};
use bardo_test_artifacts::{BOOTSTRAP, TESTNET};
use bardo_test_support::{devnet, engine, runtime};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::sync::Arc;

/// A host under `profile` over the devnet at `node` (marked a devnet when `devnet`), with the
/// bootstrap and testnet plugins, the devnet's bootstrap settings and `wallet` as its key.
fn host(
    node: &Anvil,
    d: &Deployments,
    profile: Profile,
    devnet: bool,
    wallet: Option<&PrivateKeySigner>,
) -> Host {
    let config = ChainConfig { head_ttl_ms: 250, devnet, ..ChainConfig::new(node.url()) };
    let chains = Chains::new(&BTreeMap::from([(CHAIN_ID, config)]), crate::host_runtime()).expect("chains");
    let settings = BTreeMap::from([
        ("bootstrap".to_owned(), d.bootstrap_settings()),
        ("testnet".to_owned(), d.testnet_settings()),
    ]);
    let wallet = wallet.map(|k| Wallet::from_signer(k.clone()));
    let services = Services::new(Evm::new(chains, wallet)).with_settings(settings, BTreeMap::new());
    let profile = profile.with_capabilities([RequiredCapability::Wallet]);
    let mut host = Host::new(engine(), Arc::new(services), profile, Limits::default(), WasiPolicy::default())
        .expect("host");
    for g in [BOOTSTRAP, TESTNET] {
        host.load_file(std::path::Path::new(g)).expect("load");
    }
    host
}

fn active() -> Profile {
    Profile::parse("active").expect("profile")
}

fn call(h: &Host, tool: &str, params: Value) -> Result<Value, bardo_core::ToolError> {
    h.call(tool, &params.to_string()).result.map(|j| serde_json::from_str(&j).expect("json"))
}

fn items(setup: &Value) -> Vec<(String, bool)> {
    let missing = setup["missing"].as_array().expect("missing");
    missing.iter().map(|m| (m["item"].as_str().expect("item").to_owned(), m["blocking"] == true)).collect()
}

#[test]
fn a_new_wallet_is_found_short_funded_to_the_targets_and_then_ready() {
    let (node, d) = devnet();
    let key = PrivateKeySigner::random();
    let who = key.address();
    let h = host(&node, &d, active(), true, Some(&key));
    let listed: Vec<&String> = h.catalog().keys().filter(|t| t.starts_with("bootstrap_")).collect();
    assert_eq!(listed, ["bootstrap_check_setup", "bootstrap_fund_wallet"], "the active profile lists both");

    let check = || call(&h, "bootstrap_check_setup", json!({"chain_id": CHAIN_ID})).expect("check");
    let before = check();
    assert_eq!(before["ready"], false, "{before}");
    assert_eq!(before["chain"]["reachable"], true, "{before}");
    assert_eq!(before["wallet"]["address"], who.to_checksum(None), "{before}");
    assert_eq!(before["settings"]["configured"], true, "{before}");
    let gaps = items(&before);
    assert!(gaps.contains(&("funds".into(), true)), "no gas is blocking: {before}");
    assert!(gaps.contains(&("funds".into(), false)), "token targets are not: {before}");
    assert!(gaps.iter().all(|(item, _)| item == "funds"), "{before}");
    let fix = before["missing"][0]["fix"].as_str().expect("fix");
    assert!(fix.contains("bootstrap_fund_wallet") && fix.contains(&who.to_checksum(None)), "{fix}");

    let funded = call(&h, "bootstrap_fund_wallet", json!({"chain_id": CHAIN_ID})).expect("fund");
    let assets = funded["assets"].as_array().expect("assets");
    assert_eq!(assets[0]["after"]["amount"], "10", "{funded}");
    assert!(assets.iter().all(|a| a["funded"] == true), "{funded}");
    // What the chain says, not what the tool says.
    let (rt, p) = (runtime(), ProviderBuilder::new().connect_http(node.url().parse().expect("url")));
    let wei = rt.block_on(p.get_balance(who).into_future()).expect("balance");
    assert_eq!(wei, U256::from(10u64) * U256::from(10u64).pow(U256::from(18u8)));
    let usdc = d.tokens["USDC"].address;
    assert_eq!(balance(&rt, &p, usdc, who), U256::from(10_000_000_000u64), "10,000 USDC");

    let after = check();
    assert_eq!(after["ready"], true, "{after}");
    assert_eq!(after["missing"], json!([]), "{after}");
    assert!(after["funds"].as_array().expect("funds").iter().all(|f| f["enough"] == true), "{after}");

    // Never lowered: a smaller target leaves every balance as it is.
    let again =
        call(&h, "bootstrap_fund_wallet", json!({"chain_id": CHAIN_ID, "eth": "1", "tokens": {"USDC": "5"}}))
            .expect("fund again");
    let assets = again["assets"].as_array().expect("assets");
    assert!(assets.iter().all(|a| a["funded"] == false && a["before"] == a["after"]), "{again}");
    assert_eq!(balance(&rt, &p, usdc, who), U256::from(10_000_000_000u64));
    // Bad amounts are refused before anything changes.
    let e = call(
        &h,
        "bootstrap_fund_wallet",
        json!({"chain_id": CHAIN_ID, "eth": "20", "tokens": {"NOPE": "1"}}),
    )
    .expect_err("unknown token");
    assert_eq!(e.code, ErrorCode::NotFound, "{e}");
    assert_eq!(rt.block_on(p.get_balance(who).into_future()).expect("balance"), wei, "ether untouched");
}

alloy::sol! {
    function balanceOf(address account) external view returns (uint256);
}

/// `who`'s balance of `token`, as the chain answers it.
fn balance(rt: &tokio::runtime::Runtime, p: &impl Provider, token: Address, who: Address) -> U256 {
    use alloy::network::TransactionBuilder;
    use alloy::sol_types::SolCall;
    let tx = alloy::rpc::types::TransactionRequest::default()
        .to(token)
        .with_input(balanceOfCall { account: who }.abi_encode());
    let out = rt.block_on(p.call(tx).into_future()).expect("eth_call");
    balanceOfCall::abi_decode_returns(&out).expect("decode")
}

#[test]
fn without_a_wallet_or_a_chain_the_gaps_say_what_fixes_them() {
    let (node, d) = devnet();
    let h = host(&node, &d, active(), true, None);
    let setup = call(&h, "bootstrap_check_setup", json!({"chain_id": CHAIN_ID})).expect("check");
    assert_eq!(setup["ready"], false);
    assert_eq!(items(&setup), [("wallet".to_owned(), true)], "{setup}");
    assert!(setup["missing"][0]["fix"].as_str().expect("fix").contains("bardo init"), "{setup}");
    assert_eq!(setup["funds"], json!([]), "{setup}");
    let e = call(&h, "bootstrap_fund_wallet", json!({"chain_id": CHAIN_ID})).expect_err("no wallet");
    assert_eq!(e.code, ErrorCode::WalletNotConfigured, "{e}");

    let setup = call(&h, "bootstrap_check_setup", json!({"chain_id": 4242})).expect("check");
    let gaps = items(&setup);
    assert!(gaps.contains(&("chain".into(), true)) && gaps.contains(&("settings".into(), false)), "{setup}");
    assert!(setup["missing"][0]["fix"].as_str().expect("fix").contains("bardo devnet up"), "{setup}");
}

#[test]
fn funding_is_refused_off_a_devnet_and_the_grant_reaches_no_other_plugin() {
    let (node, d) = devnet();
    let key = PrivateKeySigner::random();
    let (rt, p) = (runtime(), ProviderBuilder::new().connect_http(node.url().parse().expect("url")));
    let h = host(&node, &d, active(), false, Some(&key));
    let e = call(&h, "bootstrap_fund_wallet", json!({"chain_id": CHAIN_ID})).expect_err("not a devnet");
    assert_eq!(e.code, ErrorCode::Denied, "{e}");
    assert!(e.message.contains("devnet = true"), "{e}");
    assert!(rt.block_on(p.get_balance(key.address()).into_future()).expect("balance").is_zero());

    // The active profile with the testnet plugin's tools enabled by hand: they list, but a
    // plugin that is not all bootstrap tools gets no cheat codes.
    let enabled = vec!["testnet_fund_eth".to_owned()];
    let h = host(&node, &d, active().with_overrides(&enabled, &[]), true, Some(&key));
    let fresh = key.address().to_string();
    let e = call(&h, "testnet_fund_eth", json!({"chain_id": CHAIN_ID, "account": fresh, "balance": "1"}))
        .expect_err("testnet plugin under active");
    assert_eq!(e.code, ErrorCode::Denied, "{e}");
    assert!(e.message.contains("dev profile"), "{e}");
    assert!(rt.block_on(p.get_balance(key.address()).into_future()).expect("balance").is_zero());
    // And a profile without the bootstrap category does not list the bootstrap tools at all.
    let h = host(&node, &d, Profile::parse("trader").expect("profile"), true, Some(&key));
    assert!(h.catalog().keys().all(|t| !t.starts_with("bootstrap_")));
}
