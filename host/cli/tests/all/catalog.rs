//! The repo's plugins together: every tool has a complete ToolDef, and each profile lists
//! exactly the tools of its categories (the specification's table in `bardo_core::profile`,
//! `data` in every profile, writes only where the profile writes, testnet only in `dev`).

use bardo_core::profile::{PROFILES, Profile};
use bardo_core::tool::{CapabilityTier, Category, RequiredCapability};
use bardo_host::engine::Limits;
use bardo_host::plugin::{Host, WasiPolicy};
use bardo_test_artifacts::{AAVE, HELLO, INTELLIGENCE, SAFETY, STREAMING, TESTNET, UNISWAP, VAULT, WALLET};
use std::collections::BTreeSet;

const PLUGINS: [&str; 9] = [HELLO, UNISWAP, AAVE, STREAMING, WALLET, TESTNET, INTELLIGENCE, SAFETY, VAULT];

fn host(profile: &str) -> Host {
    let profile = Profile::parse(profile).expect("profile").with_capabilities([RequiredCapability::Wallet]);
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
    let h = host("dev");
    let names: BTreeSet<&String> = h.catalog().keys().collect();
    // hello 1, uniswap 10 + data 1, aave 8, streaming 7, wallet 11 + erc20 1, testnet 6, intelligence 6,
    // safety 4, vault 11: 66.
    assert!(names.len() >= 60, "{} tools: {names:?}", names.len());
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
            Category::Dev => Some("testnet"),
            _ => None,
        };
        if let Some(want) = expected_prefix {
            assert_eq!(prefix, want, "{name}: the specification's prefix for {:?}", d.category);
        }
    }
}

#[test]
fn each_profile_lists_exactly_the_tools_of_its_categories() {
    let all = host("dev");
    for (name, _) in PROFILES {
        let h = host(name);
        let profile = Profile::parse(name).expect("profile");
        let mut cats = profile.categories().clone();
        cats.insert(Category::Data);
        let want: BTreeSet<&String> = all
            .catalog()
            .iter()
            .filter(|(_, e)| cats.contains(&e.def.category))
            .filter(|(_, e)| !profile.read_only() || e.def.capability_tier == CapabilityTier::Read)
            .map(|(n, _)| n)
            .collect();
        let got: BTreeSet<&String> = h.catalog().keys().collect();
        assert_eq!(got, want, "profile {name}");
        let has = |prefix: &str| got.iter().any(|t| t.starts_with(prefix));
        match *name {
            "dev" => assert!(has("testnet_")),
            "observatory" => {
                assert!(has("intel_") && !has("testnet_"));
                assert!(h.catalog().values().all(|e| e.def.capability_tier == CapabilityTier::Read));
            }
            "trader" => assert!(has("wallet_") && has("safety_") && has("uniswap_") && !has("intel_")),
            "vault" | "conservative" => assert!(has("wallet_") && has("safety_") && has("aave_")),
            "intelligence" => assert!(has("intel_") && !has("wallet_approve")),
            _ => assert!(!has("testnet_"), "profile {name} lists testnet tools"),
        }
    }
}
