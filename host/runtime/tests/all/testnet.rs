//! The testnet plugin and `bardo:host/testnet`: on a chain marked `devnet = true`, under the dev
//! profile, its tools fund accounts, mine, move time, snapshot and revert, and the host's cached
//! reads and warm fork follow; without the dev profile's grant or on a chain not marked a
//! devnet, every cheat is `denied` and the chain is untouched.

use alloy::primitives::{Address, U256, address};
use alloy::providers::{DynProvider, Provider, ProviderBuilder};
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
use bardo_runtime::plugin::Host;
use bardo_runtime::plugin::WasiPolicy;
use bardo_test_artifacts::{TESTNET, WALLET};
use bardo_test_support::{devnet, engine, runtime};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::sync::Arc;

const FRESH: Address = address!("0x00000000000000000000000000000000000b0b00");
const USER_KEY: &str = "0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d";

/// A host over the devnet at `node`; `devnet` marks the chain. With `granted` it runs the dev
/// profile, which grants the cheat codes; without, a profile that lists the testnet tools only
/// through `[tools] enable`, which does not.
fn host(node: &Anvil, d: &Deployments, devnet: bool, granted: bool) -> Host {
    let config = ChainConfig { head_ttl_ms: 250, devnet, ..ChainConfig::new(node.url()) };
    let chains = Chains::new(&BTreeMap::from([(CHAIN_ID, config)]), crate::host_runtime()).expect("chains");
    let settings = BTreeMap::from([
        ("testnet".to_owned(), d.testnet_settings()),
        ("wallet".to_owned(), d.wallet_settings()),
    ]);
    let wallet = Some(Wallet::from_signer(USER_KEY.parse().expect("key")));
    let services = Services::new(Evm::new(chains, wallet)).with_settings(settings, BTreeMap::new());
    let profile = match granted {
        true => Profile::parse("dev").expect("profile"),
        false => {
            let enabled: Vec<String> = CHEATS.iter().map(|t| (*t).to_owned()).collect();
            Profile::parse("data").expect("profile").with_overrides(&enabled, &[])
        }
    };
    let profile = profile.with_capabilities([RequiredCapability::Wallet]);
    let mut host = Host::new(engine(), Arc::new(services), profile, Limits::default(), WasiPolicy::default())
        .expect("host");
    for g in [TESTNET, WALLET] {
        host.load_file(std::path::Path::new(g)).expect("load");
    }
    host
}

/// The testnet plugin's cheat tools.
const CHEATS: [&str; 5] =
    ["testnet_fund_eth", "testnet_fund_token", "testnet_mine", "testnet_increase_time", "testnet_snapshot"];

fn call(h: &Host, tool: &str, params: Value) -> Result<Value, bardo_core::ToolError> {
    h.call(tool, &params.to_string()).result.map(|j| serde_json::from_str(&j).expect("json"))
}

fn provider(node: &Anvil) -> DynProvider {
    ProviderBuilder::new().connect_http(node.url().parse().expect("url")).erased()
}

#[test]
fn cheats_change_a_devnet_and_the_hosts_reads_follow() {
    let (node, d) = devnet();
    let h = host(&node, &d, true, true);
    let (rt, p) = (runtime(), provider(&node));
    let fresh = FRESH.to_string();
    let read = |token: &str| -> Value {
        call(&h, "wallet_get_token_balance", json!({"chain_id": CHAIN_ID, "token": token, "account": fresh}))
            .expect("balance")
    };
    assert_eq!(read("USDC")["base"], "0", "read (and cached) before the cheat");

    let funded =
        call(&h, "testnet_fund_eth", json!({"chain_id": CHAIN_ID, "account": fresh, "balance": "12.5"}))
            .expect("fund eth");
    assert_eq!(funded["balance"], "12.5");
    let wei = rt.block_on(p.get_balance(FRESH).into_future()).expect("balance");
    assert_eq!(wei, U256::from(125u64) * U256::from(10u64).pow(U256::from(17u8)));

    for (symbol, amount, base) in [
        ("USDC", "2500", "2500000000"),
        ("DAI", "7", "7000000000000000000"),
        ("WETH", "3", "3000000000000000000"),
        ("WBTC", "0.5", "50000000"),
    ] {
        let t = call(
            &h,
            "testnet_fund_token",
            json!({"chain_id": CHAIN_ID, "token": symbol, "account": fresh, "balance": amount}),
        )
        .unwrap_or_else(|e| panic!("fund {symbol}: {e}"));
        assert_eq!(t["balance_base"], base, "{symbol}");
        assert_eq!(read(symbol)["base"], base, "{symbol}: the host's cached read follows the cheat");
    }

    let before = rt.block_on(p.get_block_number().into_future()).expect("head");
    let mined = call(&h, "testnet_mine", json!({"chain_id": CHAIN_ID, "blocks": 5})).expect("mine");
    assert_eq!(mined["block_number"], before + 5);
    let t0 = mined["timestamp"].as_u64().expect("timestamp");
    let moved =
        call(&h, "testnet_increase_time", json!({"chain_id": CHAIN_ID, "seconds": 86_400})).expect("time");
    assert!(moved["timestamp"].as_u64().expect("timestamp") >= t0 + 86_400, "{moved}");

    let snap = call(&h, "testnet_snapshot", json!({"chain_id": CHAIN_ID})).expect("snapshot");
    let id = snap["snapshot_id"].as_str().expect("id").to_owned();
    call(
        &h,
        "testnet_fund_token",
        json!({"chain_id": CHAIN_ID, "token": "USDC", "account": fresh, "balance": "1"}),
    )
    .expect("fund");
    call(&h, "testnet_mine", json!({"chain_id": CHAIN_ID, "blocks": 3})).expect("mine");
    assert_eq!(read("USDC")["base"], "1000000");
    let back = call(&h, "testnet_revert", json!({"chain_id": CHAIN_ID, "snapshot_id": id})).expect("revert");
    assert_eq!(back["reverted"], true);
    assert_eq!(back["block_number"], snap["block_number"]);
    assert_eq!(read("USDC")["base"], "2500000000", "the state and the host's reads are the snapshot's");
    let used =
        call(&h, "testnet_revert", json!({"chain_id": CHAIN_ID, "snapshot_id": id})).expect("revert again");
    assert_eq!(used["reverted"], false, "a snapshot is used up");

    let bad = call(&h, "testnet_mine", json!({"chain_id": CHAIN_ID, "blocks": 0})).expect_err("0 blocks");
    assert_eq!(bad.code, ErrorCode::InvalidParams);
    let bad =
        call(&h, "testnet_revert", json!({"chain_id": CHAIN_ID, "snapshot_id": "soon"})).expect_err("id");
    assert_eq!(bad.code, ErrorCode::InvalidParams);
}

#[test]
fn cheats_are_denied_without_the_grant_or_on_a_chain_not_marked_devnet() {
    let (node, d) = devnet();
    let (rt, p) = (runtime(), provider(&node));
    let fresh = FRESH.to_string();
    for (devnet, granted, hint) in [(true, false, "dev profile"), (false, true, "devnet = true")] {
        let h = host(&node, &d, devnet, granted);
        let head = rt.block_on(p.get_block_number().into_future()).expect("head");
        for (tool, params) in [
            ("testnet_fund_eth", json!({"chain_id": CHAIN_ID, "account": fresh, "balance": "1"})),
            (
                "testnet_fund_token",
                json!({"chain_id": CHAIN_ID, "token": "USDC", "account": fresh, "balance": "1"}),
            ),
            ("testnet_mine", json!({"chain_id": CHAIN_ID})),
            ("testnet_increase_time", json!({"chain_id": CHAIN_ID, "seconds": 60})),
            ("testnet_snapshot", json!({"chain_id": CHAIN_ID})),
        ] {
            let e = call(&h, tool, params).expect_err(tool);
            assert_eq!(e.code, ErrorCode::Denied, "{tool}: {e}");
            assert!(e.message.contains(hint), "{tool}: {e}");
        }
        assert_eq!(rt.block_on(p.get_block_number().into_future()).expect("head"), head, "nothing mined");
        assert!(rt.block_on(p.get_balance(FRESH).into_future()).expect("balance").is_zero());
    }
}

#[test]
fn only_the_dev_profile_lists_the_testnet_tools() {
    use bardo_core::profile::{PROFILES, Profile};
    let h = super::host_with("dev", bardo_runtime::engine::Limits::default(), &[TESTNET]);
    assert_eq!(h.catalog().keys().filter(|t| t.starts_with("testnet_")).count(), 6);
    for name in PROFILES.iter().map(|p| p.name).filter(|n| *n != "dev") {
        let profile = Profile::parse(name).expect("profile");
        let h = super::host_with(profile.name(), bardo_runtime::engine::Limits::default(), &[TESTNET]);
        assert!(h.catalog().is_empty(), "profile {name} lists {:?}", h.catalog().keys().collect::<Vec<_>>());
    }
}
