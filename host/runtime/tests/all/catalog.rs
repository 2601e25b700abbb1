//! The repo's plugins together: every tool has a complete ToolDef, and each profile lists
//! exactly the tools of its categories (the specification's table in `bardo_core::profile`,
//! `data` in every profile, writes only where the profile writes, testnet only in `dev`).

use bardo_core::error::ErrorCode;
use bardo_core::profile::{PROFILES, Profile, Writes};
use bardo_core::tool::{CapabilityTier, Category, RequiredCapability, RiskTier};
use bardo_runtime::engine::Limits;
use bardo_runtime::plugin::{Host, WasiPolicy};
use bardo_test_artifacts::{
    AAVE, BOOTSTRAP, HELLO, IDENTITY, INTELLIGENCE, MEMORY, MORPHO, PENDLE, SAFETY, STREAMING, TESTNET,
    UNISWAP, VAULT, WALLET,
};
use std::collections::BTreeSet;

/// The repo's plugins whose tools the profile table covers (the bridge's are checked elsewhere).
pub(super) const PLUGINS: [&str; 14] = [
    HELLO,
    UNISWAP,
    AAVE,
    STREAMING,
    WALLET,
    TESTNET,
    INTELLIGENCE,
    SAFETY,
    VAULT,
    BOOTSTRAP,
    IDENTITY,
    MORPHO,
    PENDLE,
    MEMORY,
];

fn host(profile: &str) -> Host {
    // Memory on: its tools then run exactly where the `learning` profile is part of the spec.
    let profile = Profile::parse(profile)
        .expect("profile")
        .with_capabilities([RequiredCapability::Wallet, RequiredCapability::Memory]);
    let mut h =
        Host::new(super::engine(), super::no_services(), profile, Limits::default(), WasiPolicy::default())
            .expect("host");
    for p in PLUGINS {
        h.load_file(std::path::Path::new(p)).unwrap_or_else(|e| panic!("{p}: {e}"));
    }
    h
}

#[test]
fn every_tool_has_a_complete_definition() {
    let h = host("dev,learning");
    let names: BTreeSet<&String> = h.catalog().keys().collect();
    // hello 1, uniswap 10 + data 1, aave 8, streaming 7, wallet 11 + erc20 1, testnet 6, intelligence 6,
    // safety 4, vault 11, bootstrap 2, identity 5, morpho 10, pendle 13, memory 10 (under `learning`): 106.
    assert!(names.len() >= 94, "{} tools: {names:?}", names.len());
    // Yield: Pendle's markets, positions and quotes, and its nine writes.
    let yields: BTreeSet<&str> = h
        .catalog()
        .iter()
        .filter(|(_, e)| e.def.category == Category::Yield)
        .map(|(n, _)| n.as_str())
        .collect();
    assert_eq!(
        yields,
        BTreeSet::from([
            "pendle_add_liquidity",
            "pendle_buy_pt",
            "pendle_buy_yt",
            "pendle_claim",
            "pendle_get_market",
            "pendle_get_markets",
            "pendle_get_position",
            "pendle_mint_py",
            "pendle_quote",
            "pendle_redeem_py",
            "pendle_remove_liquidity",
            "pendle_sell_pt",
            "pendle_sell_yt",
        ])
    );
    // Lending: Morpho's markets beside Aave's reserves, reads and writes alike.
    let lending: BTreeSet<&str> = h
        .catalog()
        .iter()
        .filter(|(_, e)| e.def.category == Category::Lending)
        .map(|(n, _)| n.split('_').next().expect("prefix"))
        .collect();
    assert_eq!(lending, BTreeSet::from(["aave", "morpho"]));
    for tool in
        ["morpho_get_markets", "morpho_get_position", "morpho_preview", "morpho_borrow", "morpho_repay"]
    {
        assert!(names.iter().any(|n| *n == tool), "{tool}");
    }
    for (name, e) in h.catalog() {
        let d = &e.def;
        let prefix = name.split('_').next().expect("prefix");
        assert!(
            name.split('_').count() >= 2
                && name.chars().all(|c| c.is_ascii_lowercase() || c == '_' || c.is_ascii_digit()),
            "{name}"
        );
        assert!(d.description.len() >= 40, "{name}: a description says when to use it");
        assert!(d.prompt_snippet.starts_with(name.as_str()), "{name}: {}", d.prompt_snippet);
        let schema = &d.input_schema;
        assert_eq!(schema["type"], "object", "{name}");
        assert!(!d.progress_steps.is_empty() || d.capability_tier == CapabilityTier::Read, "{name}");
        if d.capability_tier == CapabilityTier::Write {
            assert!(!d.action_kinds.is_empty(), "{name}: a write tool names its action kinds");
        }
        let expected_prefix = match d.category {
            Category::Intelligence => Some("intel"),
            Category::Safety => Some("safety"),
            Category::Testnet => Some("testnet"),
            Category::Bootstrap => Some("bootstrap"),
            Category::Identity => Some("identity"),
            Category::Memory => Some("memory"),
            _ => None,
        };
        if let Some(want) = expected_prefix {
            assert_eq!(prefix, want, "{name}: the specification's prefix for {:?}", d.category);
        }
    }
}

/// The specification's chain-support matrix: each protocol's writes declare its chains (and the
/// local devnet), reads declare none; a write named on another chain is refused with
/// `chain-not-supported` before its plugin runs, so before any RPC.
#[test]
fn writes_declare_the_chain_matrix_and_are_refused_elsewhere_before_running() {
    let h = host("dev,learning");
    let chains = |tool: &str| h.catalog()[tool].def.supported_chains.clone();
    assert_eq!(chains("pendle_buy_pt"), [1, 42161, 31337]);
    assert_eq!(chains("pendle_claim"), [1, 42161, 31337]);
    assert_eq!(chains("morpho_supply"), [1, 8453, 31337]);
    assert_eq!(chains("aave_supply"), [1, 8453, 42161, 10, 137, 43114, 31337]);
    assert_eq!(chains("vault_deposit"), [1, 8453, 130, 31337]);
    assert_eq!(chains("uniswap_execute_swap"), [1, 8453, 130, 42161, 10, 137, 56, 43114, 31337]);
    assert_eq!(chains("uniswap_add_liquidity"), chains("uniswap_execute_swap"));
    for (name, e) in h.catalog() {
        if e.def.capability_tier == CapabilityTier::Read {
            assert!(e.def.supported_chains.is_empty(), "{name}: reads work on every configured chain");
        }
    }

    let buy = |chain: u64| format!(r#"{{"chain_id":{chain},"market":"PT-bvUSDC","amount":"100"}}"#);
    for (tool, params) in [
        ("pendle_buy_pt", buy(8453)),
        ("morpho_supply", r#"{"chain_id":42161,"market":"WETH/USDC","amount":"1"}"#.to_owned()),
        ("aave_supply", r#"{"chain_id":130,"asset":"USDC","amount":"1"}"#.to_owned()),
    ] {
        let r = h.plan(tool, &params);
        let e = r.result.expect_err("an unsupported chain");
        assert_eq!(e.code, ErrorCode::ChainNotSupported, "{tool}: {e}");
        assert!(e.message.contains("supported_chains") && e.message.contains("is not one of them"), "{e}");
        assert_eq!(r.stats.fuel_consumed, 0, "{tool}: refused before any plugin code ran");
    }
    // On a chain of the matrix the plugin runs (and learns the host has no node for it).
    let r = h.plan("pendle_buy_pt", &buy(31337));
    assert!(r.stats.fuel_consumed > 0);
    let e = r.result.expect_err("no node");
    assert_eq!(e.code, ErrorCode::ChainNotSupported);
    assert!(e.message.contains("not configured"), "{e}");
    // A read is not held to the matrix: Pendle's markets are read on any configured chain.
    let r = h.call("pendle_get_market", r#"{"chain_id":8453,"market":"PT-bvUSDC"}"#);
    assert!(r.stats.fuel_consumed > 0);
    assert!(r.result.expect_err("no node").message.contains("not configured"));
}

#[test]
fn each_profile_lists_exactly_the_tools_of_its_categories() {
    let all = host("dev,learning");
    for def in PROFILES {
        let name = def.name;
        let h = host(name);
        let want: BTreeSet<&String> = all
            .catalog()
            .iter()
            .filter(|(_, e)| def.categories.contains(&e.def.category))
            // The memory capability counts only with the learning profile (the specification's gating).
            .filter(|(_, e)| e.def.category != Category::Memory || name == "learning")
            .filter(|(_, e)| {
                let read = e.def.capability_tier == CapabilityTier::Read;
                match def.writes {
                    Writes::All => true,
                    Writes::None => read,
                    Writes::NotHighRisk => read || e.def.risk_tier < RiskTier::High,
                }
            })
            .map(|(n, _)| n)
            .collect();
        let got: BTreeSet<&String> = h.catalog().keys().collect();
        assert_eq!(got, want, "profile {name}");
        // What that means for the repo's plugins, spelled out per profile.
        let has = |tool: &str| got.iter().any(|t| t.starts_with(tool));
        let writes = h.catalog().values().any(|e| e.def.capability_tier == CapabilityTier::Write);
        let yes = |tools: &[&str]| tools.iter().for_each(|t| assert!(has(t), "profile {name} lacks {t}"));
        let no = |tools: &[&str]| tools.iter().for_each(|t| assert!(!has(t), "profile {name} lists {t}"));
        assert!(has("uniswap_get_pool_info") && has("data_get_token_price"), "data is in every profile");
        match name {
            "dev" => yes(&[
                "testnet_",
                "aave_borrow",
                "morpho_borrow",
                "vault_deposit",
                "wallet_transfer",
                "stream_",
                "intel_",
            ]),
            "active" | "golem" | "full" => {
                yes(&[
                    "pendle_get_markets",
                    "pendle_quote",
                    "pendle_buy_pt",
                    "aave_borrow",
                    "morpho_borrow",
                    "morpho_get_position",
                    "uniswap_add_liquidity",
                    "vault_deposit",
                    "wallet_transfer",
                    "stream_",
                    "intel_",
                ]);
                no(&["testnet_"]);
            }
            "observatory" | "intelligence" | "dashboard" => {
                yes(&["intel_compare_venues"]);
                no(&["stream_", "wallet_approve", "wallet_transfer", "safety_", "vault_"]);
                assert!(!writes, "{name} runs no writes");
            }
            "data" => {
                yes(&["stream_pool_events", "wallet_get_gas_price", "wallet_get_balances"]);
                no(&["intel_", "uniswap_get_route"]);
                assert!(!writes);
            }
            "conservative" => {
                yes(&[
                    "uniswap_execute_swap",
                    "uniswap_remove_liquidity",
                    "uniswap_collect_fees",
                    "wallet_approve",
                ]);
                no(&["uniswap_add_liquidity", "aave_", "morpho_", "stream_", "wallet_transfer"]);
            }
            "trader" => {
                yes(&["uniswap_execute_swap", "uniswap_get_route", "wallet_approve", "safety_", "stream_"]);
                no(&[
                    "uniswap_add_liquidity",
                    "wallet_transfer",
                    "wallet_wrap_eth",
                    "intel_",
                    "aave_",
                    "morpho_",
                ]);
            }
            "lp" => {
                yes(&["uniswap_add_liquidity", "uniswap_get_position", "safety_", "stream_"]);
                no(&["uniswap_execute_swap", "aave_", "morpho_"]);
            }
            "vault" => {
                yes(&["vault_deposit", "vault_redeem", "safety_"]);
                no(&[
                    "aave_",
                    "morpho_",
                    "wallet_approve",
                    "wallet_transfer",
                    "stream_",
                    "uniswap_execute_swap",
                ]);
            }
            "learning" => {
                yes(&["intel_", "memory_store_episode", "memory_search_episodes", "memory_get_insights"]);
                no(&["uniswap_execute_swap", "stream_"]);
            }
            "identity" | "erc8004" | "fees" => no(&["intel_", "stream_", "uniswap_execute_swap", "vault_"]),
            other => panic!("profile {other} has no expectations here"),
        }
    }
}
