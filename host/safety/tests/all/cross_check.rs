//! The Uniswap cross-check in the write path on the devnet: honest swaps through every version
//! pass it (the SDK's figures equal the simulation's), and a simulation that disagrees with
//! Uniswap's math — a pool paying 1 % more than its state allows, or the wallet getting 1 % less
//! than the pools paid — is refused with both figures. Likewise Morpho plans against Morpho's
//! blue-sdk: an honest supply and withdrawal pass, a position 1 % larger than the SDK computes
//! does not. The disagreements are injected into the
//! simulation by a test hook, because the real simulator, running the real contracts, cannot
//! produce them.

use alloy::primitives::{Address, I256, U256};
use bardo_core::ErrorCode;
use bardo_devnet::deploy::Deployments;
use bardo_devnet::{Anvil, CHAIN_ID};
use bardo_evm::changes::Change;
use bardo_evm::simulate::Simulation;
use bardo_safety::WritePath;
use bardo_safety::audit_log::AuditLog;
use bardo_safety::declared::Declared;
use bardo_safety::hooks::uniswap_cross_check::UniswapBook;
use bardo_safety::hooks::{
    AllowlistGuard, ApprovalGuard, Decision, Findings, PolicyCage, Proposal, SafetyHook,
};
use bardo_safety::hooks::{MorphoCrossCheck, UniswapCrossCheck};
use bardo_safety::host_key::HostKey;
use bardo_sidecar::{Config, Sidecar};
use bardo_test_artifacts::UNISWAP;
use bardo_test_support::devnet;
use bardo_test_support::devnet_host;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

/// A fault the real simulator cannot produce, injected into its result (a test fake, on purpose).
struct Tamper(fn(&mut Simulation));

impl SafetyHook for Tamper {
    fn name(&self) -> &'static str {
        "test-tamper"
    }

    fn check(&self, _: &Proposal<'_>, found: &mut Findings) -> Decision {
        if let Some(sim) = found.simulation.as_mut() {
            (self.0)(sim);
        }
        Decision::Allow
    }
}

/// A plan whose plugin claims 1 % more output than it gets: its declaration, rewritten before
/// the cross-check reads it. (In the write path the hallucination detector, which runs first,
/// refuses such a plan already; this holds the cross-check to its own account of it.)
struct Overstated(UniswapCrossCheck);

impl SafetyHook for Overstated {
    fn name(&self) -> &'static str {
        "uniswap-cross-check"
    }

    fn check(&self, p: &Proposal<'_>, found: &mut Findings) -> Decision {
        let mut expected = p.plan.expected_outcome.clone();
        for change in expected["balance_changes"].as_array_mut().expect("balance_changes") {
            let delta: I256 = change["delta"].as_str().expect("delta").parse().expect("int");
            if delta.is_positive() {
                change["delta"] = json!((delta + delta / I256::try_from(100).expect("i256")).to_string());
            }
        }
        let declared = Declared::parse(&expected);
        self.0.check(&Proposal { declared: &declared, ..*p }, found)
    }
}

struct Checked {
    node: Anvil,
    d: Deployments,
    path: WritePath,
    _dirs: [tempfile::TempDir; 2],
}

fn checked(tamper: Option<fn(&mut Simulation)>) -> Checked {
    checked_with(tamper, false)
}

fn checked_with(tamper: Option<fn(&mut Simulation)>, overstated: bool) -> Checked {
    let (node, d) = devnet();
    let settings = d.uniswap_settings();
    let host = Arc::new(devnet_host(&node.url(), settings.clone(), true, &[UNISWAP]));
    let hooks: Vec<Box<dyn SafetyHook>> = vec![
        Box::new(PolicyCage::default()),
        Box::new(AllowlistGuard::new(BTreeMap::from([(CHAIN_ID, d.write_targets())]))),
        Box::new(ApprovalGuard),
    ];
    let (audit, state) = (tempfile::tempdir().expect("tempdir"), tempfile::tempdir().expect("tempdir"));
    let log = AuditLog::open(&audit.path().join("audit.jsonl"), HostKey::ephemeral()).expect("audit log");
    let sidecar_dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../sidecar");
    let check = UniswapCrossCheck {
        services: host.services().clone(),
        sidecar: Sidecar::new(Config::new(sidecar_dir, state.path())),
        books: UniswapBook::from_settings(&settings).expect("books"),
        valuer: bardo_test_support::writes::valuer(&host, &d),
    };
    let mut after: Vec<Box<dyn SafetyHook>> = Vec::new();
    if let Some(tamper) = tamper {
        after.push(Box::new(Tamper(tamper)));
    }
    after.push(if overstated { Box::new(Overstated(check)) } else { Box::new(check) });
    // The hallucination detector runs right after the simulator, before the tampering: the
    // cross-check is what must see it.
    let path = WritePath::new(host.clone(), host.services().clone(), hooks, log).with_after_simulation(after);
    Checked { node, d, path, _dirs: [audit, state] }
}

impl Checked {
    fn balance(&self, token: Address) -> U256 {
        bardo_test_support::balance_of(&self.node, token, self.d.deployer)
    }

    /// Preview and commit `params`; what the wallet got of `token`.
    fn swap(&self, params: Value, token: Address) -> U256 {
        let permit = self.path.preview("swap", &params).unwrap_or_else(|e| panic!("preview {params}: {e}"));
        let before = self.balance(token);
        let done = self.path.commit(&permit.permit_id).unwrap_or_else(|e| panic!("commit {params}: {e}"));
        assert!(done.outcome_mismatch.is_empty(), "{:?}", done.outcome_mismatch);
        self.balance(token) - before
    }
}

#[test]
fn honest_swaps_through_every_version_pass_the_sdks_check() {
    let e = checked(None);
    let (usdc, dai) = (e.d.tokens["USDC"].address, e.d.tokens["DAI"].address);
    let swap = |extra: Value| {
        let mut p = json!({"chain_id": CHAIN_ID, "token_in": "WETH", "token_out": "USDC", "amount": "1"});
        for (k, v) in extra.as_object().expect("object") {
            p[k] = v.clone();
        }
        p
    };
    for version in ["v2", "v3", "v4"] {
        assert!(e.swap(swap(json!({"version": version})), usdc) > U256::ZERO, "{version}");
    }
    // Exact-out through two V4 pools, and two pools of different versions exact-in.
    let two = json!({"token_in": "USDC", "token_out": "DAI", "amount": "1000"});
    let mut exact_out = swap(two.clone());
    exact_out["side"] = json!("exact_out");
    exact_out["version"] = json!("v4");
    assert_eq!(e.swap(exact_out, dai), U256::from(1000u64) * U256::from(10u64).pow(U256::from(18u8)));
    assert!(e.swap(swap(two), dai) > U256::ZERO);
    // Ether out: the router unwraps what the pool paid.
    let to_eth = json!({"chain_id": CHAIN_ID, "token_in": "USDC", "token_out": "ETH", "amount": "2000"});
    e.path.preview("swap", &to_eth).expect("ether out passes");
}

/// The first V3 `Swap` log's output, made 1 % larger.
fn pool_pays_more(sim: &mut Simulation) {
    let swap = alloy::primitives::keccak256("Swap(address,address,int256,int256,uint160,uint128,int24)");
    for outcome in &mut sim.outcomes {
        for log in &mut outcome.logs {
            if log.topics().first() == Some(&swap) {
                let mut data = log.data.data.to_vec();
                for word in [0usize, 1] {
                    let at = word * 32;
                    let amount = I256::from_be_bytes::<32>(data[at..at + 32].try_into().expect("word"));
                    if amount.is_negative() {
                        let more = amount + amount / I256::try_from(100).expect("i256");
                        data[at..at + 32].copy_from_slice(&more.to_be_bytes::<32>());
                    }
                }
                log.data = alloy::primitives::LogData::new_unchecked(log.topics().to_vec(), data.into());
                return;
            }
        }
    }
}

/// The wallet's gain of its biggest gain, made 1 % smaller (as if something took a cut).
fn wallet_gets_less(sim: &mut Simulation) {
    let gain = sim.changes.changes.iter_mut().find_map(|c| match c {
        Change::Balance { delta, .. } if delta.is_positive() => Some(delta),
        _ => None,
    });
    if let Some(delta) = gain {
        *delta -= *delta / I256::try_from(100).expect("i256");
    }
}

#[test]
fn a_simulation_that_disagrees_with_uniswaps_math_is_refused_with_both_figures() {
    let v3 = json!({"chain_id": CHAIN_ID, "token_in": "WETH", "token_out": "USDC", "amount": "1", "version": "v3"});
    let e = checked(Some(pool_pays_more));
    let err = e.path.preview("swap", &v3).expect_err("a pool paying more than its state allows");
    assert_eq!(err.code, ErrorCode::Denied, "{err}");
    assert!(err.message.starts_with("uniswap-cross-check"), "{err}");
    assert!(err.message.contains("Uniswap's SDK says that pool pays"), "{err}");
    drop(e);

    let e = checked(Some(wallet_gets_less));
    let err = e.path.preview("swap", &v3).expect_err("a cut taken in between");
    assert_eq!(err.code, ErrorCode::Denied, "{err}");
    assert!(err.message.contains("something in between takes"), "{err}");
}

#[test]
fn a_plan_that_overstates_its_output_by_one_percent_is_refused_with_the_sdks_figure() {
    let v3 = json!({"chain_id": CHAIN_ID, "token_in": "WETH", "token_out": "USDC", "amount": "1", "version": "v3"});
    let e = checked_with(None, true);
    let err = e.path.preview("swap", &v3).expect_err("a claim 1 % over the pools' payment");
    assert_eq!(err.code, ErrorCode::Denied, "{err}");
    assert!(err.message.starts_with("uniswap-cross-check"), "{err}");
    assert!(err.message.contains("the plan claims the wallet receives"), "{err}");
    assert!(err.message.contains("Uniswap's SDK says the pools pay"), "both figures: {err}");
}

/// The first log of `event` in the simulation: its word at `offset` in the data (an amount),
/// made 1 % larger, or smaller.
fn bump_first(sim: &mut Simulation, event: &str, offset: usize, larger: bool) {
    let topic = alloy::primitives::keccak256(event);
    let log =
        sim.outcomes.iter_mut().flat_map(|o| o.logs.iter_mut()).find(|l| l.topics().first() == Some(&topic));
    if let Some(log) = log {
        let mut data = log.data.data.to_vec();
        let amount = U256::from_be_slice(&data[offset..offset + 32]);
        let bumped =
            if larger { amount + amount / U256::from(100u8) } else { amount - amount / U256::from(100u8) };
        data[offset..offset + 32].copy_from_slice(&bumped.to_be_bytes::<32>());
        log.data = alloy::primitives::LogData::new_unchecked(log.topics().to_vec(), data.into());
    }
}

/// The first V3 `Mint` log's token0 amount, made 1 % larger.
fn mint_takes_more(sim: &mut Simulation) {
    bump_first(sim, "Mint(address,address,int24,int24,uint128,uint256,uint256)", 64, true);
}

#[test]
fn v3_mints_and_burns_are_held_to_the_sdks_position_math() {
    let mint = json!({"chain_id": CHAIN_ID, "token_a": "WETH", "token_b": "USDC", "fee": 3000, "amount_a": "1",
        "amount_b": "2000", "full_range": true});
    let e = checked(None);
    let permit = e.path.preview("add_liquidity", &mint).expect("an honest mint passes");
    let done = e.path.commit(&permit.permit_id).expect("commit");
    let remove = json!({"chain_id": CHAIN_ID, "position_id": done.actual["position_id"], "percent": 100});
    e.path.preview("remove_liquidity", &remove).expect("an honest burn passes");
    drop(e);

    let e = checked(Some(mint_takes_more));
    let err = e.path.preview("add_liquidity", &mint).expect_err("a mint taking 1 % more than the math");
    assert_eq!(err.code, ErrorCode::Denied, "{err}");
    assert!(err.message.contains("mint") && err.message.contains("Uniswap's SDK says"), "{err}");
}

/// The position manager's first `Collect` log's token0 amount, made 1 % larger.
fn collect_pays_more(sim: &mut Simulation) {
    bump_first(sim, "Collect(uint256,address,uint256,uint256)", 32, true);
}

#[test]
fn v3_collects_are_held_to_the_fees_the_sdk_says_the_position_earned() {
    let mint = json!({"chain_id": CHAIN_ID, "token_a": "WETH", "token_b": "USDC", "fee": 3000, "amount_a": "10",
        "amount_b": "20000", "full_range": true});
    let e = checked(None);
    let permit = e.path.preview("add_liquidity", &mint).expect("mint");
    let position = e.path.commit(&permit.permit_id).expect("commit").actual["position_id"].clone();
    // Trades through the pool, both ways: the position earns fees in both tokens.
    for (tin, tout, amount) in [("USDC", "WETH", "50000"), ("WETH", "USDC", "20")] {
        let swap = json!({"chain_id": CHAIN_ID, "token_in": tin, "token_out": tout, "amount": amount, "version": "v3",
            "fee": 3000});
        e.swap(swap, e.d.tokens[tout].address);
    }
    let collect = json!({"chain_id": CHAIN_ID, "position_id": position});
    let permit = e.path.preview("collect_fees", &collect).expect("an honest collect passes");
    let done = e.path.commit(&permit.permit_id).expect("commit");
    assert!(done.outcome_mismatch.is_empty(), "{:?}", done.outcome_mismatch);
    drop(e);

    let e = checked(Some(collect_pays_more));
    let permit = e.path.preview("add_liquidity", &mint).expect("mint");
    let position = e.path.commit(&permit.permit_id).expect("commit").actual["position_id"].clone();
    for (tin, tout, amount) in [("USDC", "WETH", "50000"), ("WETH", "USDC", "20")] {
        let swap = json!({"chain_id": CHAIN_ID, "token_in": tin, "token_out": tout, "amount": amount, "version": "v3",
            "fee": 3000});
        e.swap(swap, e.d.tokens[tout].address);
    }
    let err = e
        .path
        .preview("collect_fees", &json!({"chain_id": CHAIN_ID, "position_id": position}))
        .expect_err("a collect paying 1 % more than the position earned");
    assert_eq!(err.code, ErrorCode::Denied, "{err}");
    assert!(err.message.contains("the position is owed"), "{err}");
}

/// The PoolManager's first `ModifyLiquidity` log's liquidity delta, made 1 % smaller (as if the
/// wallet paid for more liquidity than it got).
fn v4_mint_shrinks(sim: &mut Simulation) {
    bump_first(sim, "ModifyLiquidity(bytes32,address,int24,int24,int256,bytes32)", 64, false);
}

#[test]
fn v4_mints_and_burns_are_held_to_the_sdks_position_math() {
    let mint = json!({"chain_id": CHAIN_ID, "version": "v4", "token_a": "WETH", "token_b": "DAI", "fee": 500,
        "amount_a": "1", "amount_b": "2000", "full_range": true});
    let e = checked(None);
    let permit = e.path.preview("add_liquidity", &mint).expect("an honest V4 mint passes");
    let done = e.path.commit(&permit.permit_id).expect("commit");
    let remove = json!({"chain_id": CHAIN_ID, "position_id": done.actual["position_id"], "version": "v4",
        "percent": 100});
    e.path.preview("remove_liquidity", &remove).expect("an honest V4 burn passes");
    drop(e);

    let e = checked(Some(v4_mint_shrinks));
    let err =
        e.path.preview("add_liquidity", &mint).expect_err("a mint paying 1 % more than its liquidity costs");
    assert_eq!(err.code, ErrorCode::Denied, "{err}");
    assert!(err.message.contains("V4 mint") && err.message.contains("Uniswap's SDK says"), "{err}");
}

/// The morpho plugin behind the Morpho cross-check (Morpho's blue-sdk in the sidecar), after an
/// optional tamper of the simulation; the deployer's wallet.
fn morpho_checked(tamper: Option<fn(&mut Simulation)>) -> Checked {
    let (node, d) = devnet();
    let settings = BTreeMap::from([("morpho".to_owned(), d.morpho_settings())]);
    let host = Arc::new(bardo_test_support::devnet_host_with(
        &node.url(),
        settings,
        Some(bardo_devnet::DEV_KEY),
        &[bardo_test_artifacts::MORPHO],
    ));
    let markets = bardo_test_support::writes::morpho_markets(&d);
    let hooks: Vec<Box<dyn SafetyHook>> = vec![
        Box::new(PolicyCage::default()),
        Box::new(
            AllowlistGuard::new(BTreeMap::from([(CHAIN_ID, d.write_targets())]))
                .with_morpho_markets(bardo_safety::morpho::ids(&markets)),
        ),
        Box::new(ApprovalGuard),
    ];
    let (audit, state) = (tempfile::tempdir().expect("tempdir"), tempfile::tempdir().expect("tempdir"));
    let log = AuditLog::open(&audit.path().join("audit.jsonl"), HostKey::ephemeral()).expect("audit log");
    let sidecar_dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../sidecar");
    let mut after: Vec<Box<dyn SafetyHook>> = Vec::new();
    if let Some(tamper) = tamper {
        after.push(Box::new(Tamper(tamper)));
    }
    after.push(Box::new(MorphoCrossCheck {
        services: host.services().clone(),
        sidecar: Sidecar::new(Config::new(sidecar_dir, state.path())),
        morphos: BTreeMap::from([(CHAIN_ID, [d.morpho.morpho].into())]),
        markets,
    }));
    let path = WritePath::new(host.clone(), host.services().clone(), hooks, log).with_after_simulation(after);
    Checked { node, d, path, _dirs: [audit, state] }
}

/// The wallet's Morpho supply shares in the simulation, made 1 % more.
fn more_supply_shares(sim: &mut Simulation) {
    for change in &mut sim.changes.changes {
        if let Change::Position { delta, .. } = change {
            *delta += *delta / I256::try_from(100).expect("i256");
        }
    }
}

#[test]
fn morpho_plans_are_held_to_morphos_own_sdk() {
    let e = morpho_checked(None);
    let supply = json!({"chain_id": CHAIN_ID, "market": "WETH/USDC", "amount": "1000"});
    let permit =
        e.path.preview("morpho-supply", &supply).unwrap_or_else(|err| panic!("an honest supply: {err}"));
    let done = e.path.commit(&permit.permit_id).expect("commit");
    assert!(done.outcome_mismatch.is_empty(), "{:?}", done.outcome_mismatch);
    // The SDK agrees on a withdrawal by assets (shares rounded up) of part of it, too.
    let withdraw = json!({"chain_id": CHAIN_ID, "market": "WETH/USDC", "amount": "400.123457"});
    e.path.preview("morpho-withdraw", &withdraw).unwrap_or_else(|err| panic!("an honest withdrawal: {err}"));

    let e = morpho_checked(Some(more_supply_shares));
    let err = e.path.preview("morpho-supply", &supply).expect_err("a position the SDK does not compute");
    assert_eq!(err.code, ErrorCode::Denied, "{err}");
    assert!(
        err.message.starts_with("morpho-cross-check") && err.message.contains("by the SDK"),
        "both figures: {err}"
    );
}

#[test]
fn a_migration_is_held_to_the_sdks_position_math_on_both_sides() {
    let mint = json!({"chain_id": CHAIN_ID, "token_a": "WETH", "token_b": "USDC", "fee": 3000,
        "amount_a": "1", "amount_b": "2000", "full_range": true});
    let migrate = |e: &Checked| {
        let permit = e.path.preview("add_liquidity", &mint).expect("a V3 mint");
        let done = e.path.commit(&permit.permit_id).expect("commit");
        e.path.preview(
            "migrate_liquidity",
            &json!({"chain_id": CHAIN_ID, "position_id": done.actual["position_id"]}),
        )
    };
    let e = checked(None);
    migrate(&e).expect("an honest migration passes: the V3 burn and the V4 mint are the SDK's");
    drop(e);
    let e = checked(Some(v4_mint_shrinks));
    let err = migrate(&e).expect_err("a V4 mint paying 1 % more than its liquidity costs");
    assert_eq!(err.code, ErrorCode::Denied, "{err}");
    assert!(err.message.contains("V4 mint") && err.message.contains("Uniswap's SDK says"), "{err}");
    drop(e);
    let e = checked(Some(v3_burn_pays_less));
    let err = migrate(&e).expect_err("a V3 burn paying 1 % less than its liquidity holds");
    assert_eq!(err.code, ErrorCode::Denied, "{err}");
    assert!(err.message.contains("burn") && err.message.contains("Uniswap's SDK says"), "{err}");
}

/// The first V3 pool `Burn` log's token0 amount, made 1 % smaller (the V3 mint before it in the
/// same test logs no `Burn`).
fn v3_burn_pays_less(sim: &mut Simulation) {
    bump_first(sim, "Burn(address,int24,int24,uint128,uint256,uint256)", 32, false);
}
