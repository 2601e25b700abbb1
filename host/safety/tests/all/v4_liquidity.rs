//! V4 liquidity through the whole write path on the devnet (scope, simulation, value guard,
//! permit, commit, verify): a position in the WETH/DAI pool from mint to burn, every amount the
//! plan declares what the wallet really pays or receives, every read equal to the
//! PositionManager's own; a hooked pool's mint needs its return-delta hook allowlisted and
//! carries the High risk tier; liquidity for a stranger is refused by the scope.

use alloy::network::TransactionBuilder;
use alloy::primitives::{Address, U256};
use alloy::providers::{Provider, ProviderBuilder};
use alloy::rpc::types::TransactionRequest;
use alloy::sol;
use alloy::sol_types::SolCall;
use bardo_core::scope::Role;
use bardo_core::tool::RiskTier;
use bardo_core::{ErrorCode, ToolError};
use bardo_devnet::deploy::Deployments;
use bardo_devnet::{Anvil, CHAIN_ID};
use bardo_runtime::plugin::Host;
use bardo_safety::audit_log::AuditLog;
use bardo_safety::hooks::{AllowlistGuard, ApprovalGuard, PolicyCage, SafetyHook};
use bardo_safety::host_key::HostKey;
use bardo_safety::{WritePath, WriteResult};
use bardo_test_artifacts::UNISWAP;
use bardo_test_support::devnet_host;
use bardo_test_support::{addr, u256};
use bardo_test_support::{devnet, runtime};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::sync::Arc;

sol! {
    function balanceOf(address account) external view returns (uint256);
    function getPositionLiquidity(uint256 tokenId) external view returns (uint128 liquidity);
    function ownerOf(uint256 id) external view returns (address owner);
}

pub(crate) struct Lp {
    pub(crate) node: Anvil,
    pub(crate) d: Deployments,
    pub(crate) host: Arc<Host>,
    pub(crate) path: WritePath,
    _audit: tempfile::TempDir,
}

pub(crate) fn lp_with(allow: impl FnOnce(&Deployments) -> BTreeMap<Address, Role>) -> Lp {
    let slippage = bardo_safety::hooks::on_chain_bounds::DEFAULT_MAX_SLIPPAGE_BPS;
    lp_allowing(allow, bardo_safety::hooks::value_guard::DEFAULT_MAX_LOSS_BPS, slippage)
}

/// [`lp_with`], the value guard allowing a loss of `max_loss_bps` and the chain's bounds
/// `max_slippage_bps` from what plans simulate.
fn lp_allowing(
    allow: impl FnOnce(&Deployments) -> BTreeMap<Address, Role>,
    max_loss_bps: u32,
    max_slippage_bps: u32,
) -> Lp {
    let (node, d) = devnet();
    let host = Arc::new(devnet_host(&node.url(), d.uniswap_settings(), true, &[UNISWAP]));
    let roles = allow(&d);
    let hooks: Vec<Box<dyn SafetyHook>> = vec![
        Box::new(PolicyCage::default()),
        Box::new(AllowlistGuard::new(BTreeMap::from([(CHAIN_ID, roles.clone())]))),
        Box::new(ApprovalGuard),
    ];
    let audit = tempfile::tempdir().expect("tempdir");
    let log = AuditLog::open(&audit.path().join("audit.jsonl"), HostKey::ephemeral()).expect("audit log");
    let after = bardo_test_support::writes::guards_allowing(
        host.services(),
        &d,
        roles,
        max_loss_bps,
        max_slippage_bps,
    );
    let path = WritePath::new(host.clone(), host.services().clone(), hooks, log).with_after_simulation(after);
    Lp { node, d, host, path, _audit: audit }
}

impl Lp {
    pub(crate) fn read<C: SolCall>(&self, to: Address, call: C) -> Result<C::Return, String> {
        let provider = ProviderBuilder::new().connect_http(self.node.url().parse().expect("url"));
        let tx = TransactionRequest::default().to(to).with_input(call.abi_encode());
        let out = runtime().block_on(provider.call(tx).into_future()).map_err(|e| e.to_string())?;
        Ok(C::abi_decode_returns(&out).expect("decode"))
    }

    pub(crate) fn balance(&self, token: Address) -> U256 {
        self.read(token, balanceOfCall { account: self.d.deployer }).expect("balanceOf")
    }

    pub(crate) fn call(&self, tool: &str, params: Value) -> Result<Value, ToolError> {
        let json = self.host.call(tool, &params.to_string()).result?;
        Ok(serde_json::from_str(&json).expect("json"))
    }

    /// Preview and commit; the wallet's balance changes of `tokens` and the result.
    pub(crate) fn write(&self, kind: &str, params: &Value, tokens: [Address; 2]) -> ([i128; 2], WriteResult) {
        let permit = self.path.preview(kind, params).unwrap_or_else(|e| panic!("preview {kind}: {e}"));
        let before = tokens.map(|t| self.balance(t));
        let done = self.path.commit(&permit.permit_id).unwrap_or_else(|e| panic!("commit {kind}: {e}"));
        assert!(done.outcome_mismatch.is_empty(), "{kind}: {:?}", done.outcome_mismatch);
        let moved = [0, 1].map(|i| {
            let (after, before) = (self.balance(tokens[i]), before[i]);
            if after >= before { (after - before).to::<i128>() } else { -(before - after).to::<i128>() }
        });
        (moved, done)
    }
}

pub(crate) fn int(v: &Value) -> i128 {
    v.as_str().unwrap_or_else(|| panic!("{v} is not a string")).parse().expect("decimal")
}

#[test]
fn a_v4_position_lives_from_mint_to_burn_and_every_amount_is_what_the_wallet_saw() {
    let e = lp_with(Deployments::write_targets);
    let posm = e.d.uniswap_v4["position_manager"];
    let pool = e
        .call(
            "uniswap_get_pool_info",
            json!({"chain_id": CHAIN_ID, "token_a": "WETH", "token_b": "DAI", "version": "v4", "fee": 500}),
        )
        .expect("pool");
    let tokens = [addr(&pool["token0"]["address"]), addr(&pool["token1"]["address"])];
    let tick = pool["tick"].as_i64().expect("tick") as i32;
    let (lower, upper) = (tick.div_euclid(10) * 10 - 200, tick.div_euclid(10) * 10 + 200);

    // Mint: what the wallet pays is what the plan said, and the position holds the liquidity.
    let mint = json!({"chain_id": CHAIN_ID, "version": "v4", "token_a": "WETH", "token_b": "DAI", "fee": 500,
        "amount_a": "1", "amount_b": "2000", "tick_lower": lower, "tick_upper": upper});
    let (paid, done) = e.write("add_liquidity", &mint, tokens);
    let mint_paid = paid;
    let expected = &done.expected;
    assert_eq!(paid, [-int(&expected["amount0_base"]), -int(&expected["amount1_base"])], "{expected}");
    assert!(paid[0] < 0 && paid[1] < 0, "in range: both tokens go in");
    assert_eq!(done.actual["position_id"], expected["position_id"]);
    assert_eq!(done.actual["liquidity_added"], expected["liquidity_added"]);
    let id: U256 = expected["position_id"].as_str().expect("id").parse().expect("id");
    assert_eq!(e.read(posm, ownerOfCall { id }).expect("owner"), e.d.deployer);
    let minted = e.read(posm, getPositionLiquidityCall { tokenId: id }).expect("liquidity");
    assert_eq!(minted.to_string(), expected["liquidity_added"].as_str().expect("liquidity"));
    // Both bounds held: at most the amounts given, less at most the slippage (50 bps).
    let dai_in = paid[1].unsigned_abs() as f64 / 1e18;
    let weth_in = paid[0].unsigned_abs() as f64 / 1e18;
    let (weth_in, dai_in) =
        if tokens[0] == e.d.tokens["WETH"].address { (weth_in, dai_in) } else { (dai_in, weth_in) };
    assert!(weth_in <= 1.0 && dai_in <= 2000.0, "{weth_in} WETH, {dai_in} DAI");
    assert!(weth_in >= 0.99 || dai_in >= 1990.0, "the scarcer side is nearly all used");

    // The read equals the PositionManager's own.
    let read = |id: U256| {
        e.call(
            "uniswap_get_position",
            json!({"chain_id": CHAIN_ID, "position_id": id.to_string(), "version": "v4"}),
        )
    };
    let position = read(id).expect("position");
    assert_eq!(position["liquidity"], json!(minted.to_string()));
    assert_eq!(
        (position["tick_lower"].clone(), position["tick_upper"].clone()),
        (json!(lower), json!(upper))
    );
    assert_eq!(addr(&position["owner"]), e.d.deployer);
    assert_eq!(position["v4"]["pool_id"], pool["pool_id"]);
    assert_eq!(addr(&position["pool"]), e.d.uniswap_v4["pool_manager"]);
    assert_eq!(position["in_range"], true);
    assert_eq!((position["fees0_base"].clone(), position["fees1_base"].clone()), (json!("0"), json!("0")));

    // Increase the same position: its pool and range come from the position.
    let increase = json!({"chain_id": CHAIN_ID, "version": "v4", "token_a": "DAI", "token_b": "WETH", "fee": 500,
        "amount_a": "1000", "amount_b": "0.5", "position_id": id.to_string()});
    let (paid, done) = e.write("add_liquidity", &increase, tokens);
    let increase_paid = paid;
    assert_eq!(paid, [-int(&done.expected["amount0_base"]), -int(&done.expected["amount1_base"])]);
    let grown = e.read(posm, getPositionLiquidityCall { tokenId: id }).expect("liquidity");
    assert_eq!(U256::from(grown), U256::from(minted) + u256(&done.expected["liquidity_added"]));

    // Swaps both ways through this pool earn the position fees in both tokens.
    for (tin, tout, amount) in [("WETH", "DAI", "2"), ("DAI", "WETH", "4000")] {
        let swap = json!({"chain_id": CHAIN_ID, "token_in": tin, "token_out": tout, "amount": amount,
            "version": "v4", "fee": 500});
        e.write("swap", &swap, tokens);
    }
    let position = read(id).expect("position");
    let fees = [int(&position["fees0_base"]), int(&position["fees1_base"])];
    assert!(fees[0] > 0 && fees[1] > 0, "the swaps paid fees: {position}");

    // Collect: exactly the fees the read showed reach the wallet; the liquidity stays.
    let collect = json!({"chain_id": CHAIN_ID, "position_id": id.to_string(), "version": "v4"});
    let (got, done) = e.write("collect_fees", &collect, tokens);
    assert_eq!(got, fees, "fees collected = what reached the wallet = what the read showed");
    assert_eq!([int(&done.actual["amount0_base"]), int(&done.actual["amount1_base"])], fees);
    assert_eq!(e.read(posm, getPositionLiquidityCall { tokenId: id }).expect("liquidity"), grown);
    let position = read(id).expect("position");
    assert_eq!((position["fees0_base"].clone(), position["fees1_base"].clone()), (json!("0"), json!("0")));

    // Its performance from the PoolManager's history: what the mint and the increase paid (the
    // principal at each block's price rounds down, what was paid rounds up: a wei apart), the
    // fees the collect took, nothing owed now, and what it holds.
    let perf = e
        .call(
            "uniswap_get_position_performance",
            json!({"chain_id": CHAIN_ID, "position_id": id.to_string(), "version": "v4"}),
        )
        .expect("performance");
    let units = |v: &Value, i: usize| int(&v[if i == 0 { "amount0_base" } else { "amount1_base" }]);
    for i in 0..2 {
        let (put_in, read_in) = (-(mint_paid[i] + increase_paid[i]), units(&perf["deposited"], i));
        assert!((0..=2).contains(&(put_in - read_in)), "token {i}: paid {put_in}, history {read_in}: {perf}");
        assert_eq!(units(&perf["fees_collected"], i), fees[i], "token {i}: the collect's fees: {perf}");
        assert_eq!(units(&perf["fees_uncollected"], i), 0);
        assert_eq!(
            units(&perf["principal"], i),
            int(&position[if i == 0 { "amount0_base" } else { "amount1_base" }])
        );
    }
    assert!(perf["impermanent_loss"].as_f64().expect("il") <= 1e-9, "{perf}");
    assert!(perf["fees_value"].as_f64().expect("fees") > 0.0, "{perf}");

    // Decrease half: the wallet receives what the plan said.
    let principal = [int(&position["amount0_base"]), int(&position["amount1_base"])];
    let half = json!({"chain_id": CHAIN_ID, "position_id": id.to_string(), "version": "v4", "percent": 50});
    let (got, done) = e.write("remove_liquidity", &half, tokens);
    assert_eq!(
        got,
        [int(&done.expected["collected"]["amount0_base"]), int(&done.expected["collected"]["amount1_base"])]
    );
    assert_eq!(
        [int(&done.actual["collected"]["amount0_base"]), int(&done.actual["collected"]["amount1_base"])],
        got
    );
    for i in 0..2 {
        assert!((got[i] * 2 - principal[i]).abs() <= 2, "half of {} is about {}", principal[i], got[i]);
    }
    let left = e.read(posm, getPositionLiquidityCall { tokenId: id }).expect("liquidity");
    assert_eq!(left, grown - grown / 2, "{}", done.expected["liquidity_removed"]);

    // Burn: the rest comes back and the NFT is gone.
    let burn = json!({"chain_id": CHAIN_ID, "position_id": id.to_string(), "version": "v4", "burn": true});
    let (got, done) = e.write("remove_liquidity", &burn, tokens);
    assert_eq!(
        got,
        [int(&done.expected["collected"]["amount0_base"]), int(&done.expected["collected"]["amount1_base"])]
    );
    assert!(got[0] > 0 && got[1] > 0);
    assert!(e.read(posm, ownerOfCall { id }).is_err(), "burned");
    let gone = read(id).expect_err("burned");
    assert_eq!(gone.code, ErrorCode::NotFound, "{gone}");
}

#[test]
fn a_hooked_pool_needs_a_trusted_hook_and_its_plan_is_high_risk() {
    let hooked = |e: &Lp| {
        json!({"chain_id": CHAIN_ID, "version": "v4", "token_a": "WETH", "token_b": "USDC", "fee": 3000,
            "tick_spacing": 60, "hooks": e.d.uniswap_v4["fee_taking_hook"].to_string(),
            "amount_a": "0.5", "amount_b": "1000", "full_range": true, "slippage_bps": 1000})
    };
    let e = lp_with(Deployments::write_targets);
    // The fee-taking hook may change amounts (return-delta permissions): refused by the scope.
    let e1 = e.path.preview("add_liquidity", &hooked(&e)).expect_err("untrusted hook");
    assert_eq!(e1.code, ErrorCode::Denied, "{e1}");
    assert!(e1.message.contains("may change the amounts"), "{e1}");
    drop(e);

    let trusting = |d: &Deployments| {
        let mut roles = d.write_targets();
        roles.insert(d.uniswap_v4["fee_taking_hook"], Role::V4Hook);
        roles
    };
    // Trusted, the hook still takes its 5.43 %: the deposit is worth what its liquidity holds
    // at the reference price, so the value guard sees the fee as a loss over 3 %. (Its
    // maximums are the amounts offered, ~5.4 % above what it pays after the fee, so the operator
    // lets the chain's bounds be 6 % wide.)
    let e = lp_allowing(trusting, bardo_safety::hooks::value_guard::DEFAULT_MAX_LOSS_BPS, 600);
    let fee = e.path.preview("add_liquidity", &hooked(&e)).expect_err("the hook's fee is a loss");
    assert!(fee.message.starts_with("value-guard: ") && fee.message.contains("300 bps"), "{fee}");
    drop(e);
    // An operator who accepts losses up to 6 % lets it through.
    let e = lp_allowing(trusting, 600, 600);
    let permit = e.path.preview("add_liquidity", &hooked(&e)).expect("trusted hook");
    assert_eq!(permit.risk_tier, RiskTier::High);
    assert_eq!(
        permit.expected_outcome["v4"]["hooks"],
        json!(e.d.uniswap_v4["fee_taking_hook"].to_checksum(None))
    );
    let done = e.path.commit(&permit.permit_id).expect("commit");
    assert!(done.outcome_mismatch.is_empty(), "{:?}", done.outcome_mismatch);
    let id = &done.actual["position_id"];
    let position = e
        .call("uniswap_get_position", json!({"chain_id": CHAIN_ID, "position_id": id, "version": "v4"}))
        .expect("position");
    assert_eq!(addr(&position["v4"]["hooks"]), e.d.uniswap_v4["fee_taking_hook"]);
}

#[test]
fn v4_liquidity_inputs_and_foreign_positions_are_refused_with_typed_codes() {
    let e = lp_with(Deployments::write_targets);
    let plan = |params: Value| e.host.plan("uniswap_add_liquidity", &params.to_string()).result.map(|_| ());
    let base = json!({"chain_id": CHAIN_ID, "version": "v4", "token_a": "WETH", "token_b": "DAI", "fee": 500,
        "amount_a": "1", "amount_b": "2000", "full_range": true});
    let with = |k: &str, v: Value| {
        let mut p = base.clone();
        p[k] = v;
        p
    };
    for (params, code, hint) in [
        // A pool key no pool has: WETH/DAI at 0.05 % exists with spacing 10, not 60.
        (with("tick_spacing", json!(60)), ErrorCode::NotFound, "tick spacing 60"),
        (with("fee", json!(1234)), ErrorCode::InvalidParams, "tick_spacing"),
        (with("tick_spacing", json!(0)), ErrorCode::InvalidParams, "1 to 32767"),
        (with("hooks", json!("0x12")), ErrorCode::InvalidParams, "hooks"),
        (
            with("amount_a", json!("0"))
                .as_object()
                .cloned()
                .map(|mut o| {
                    o.insert("amount_b".into(), json!("0"));
                    Value::Object(o)
                })
                .expect("params"),
            ErrorCode::InvalidParams,
            "both zero",
        ),
        (with("amount_a", json!("1000000")), ErrorCode::InvalidParams, "WETH"),
    ] {
        let err = plan(params.clone()).expect_err(&params.to_string());
        assert_eq!(err.code, code, "{params}: {err}");
        assert!(err.message.contains(hint), "{params}: {err}");
    }
    let missing = e
        .call("uniswap_get_position", json!({"chain_id": CHAIN_ID, "position_id": "999999", "version": "v4"}))
        .expect_err("no such position");
    assert_eq!(missing.code, ErrorCode::NotFound, "{missing}");
    let remove =
        json!({"chain_id": CHAIN_ID, "position_id": "1", "percent": 50, "burn": true, "version": "v4"});
    let err = e
        .host
        .plan("uniswap_remove_liquidity", &remove.to_string())
        .result
        .map(|_| ())
        .expect_err("burn half");
    assert_eq!(err.code, ErrorCode::InvalidParams, "{err}");
}

#[test]
fn a_native_ether_v4_swap_passes_the_whole_write_path() {
    let e = lp_with(Deployments::write_targets);
    let usdc = e.d.tokens["USDC"].address;
    let swap = json!({"chain_id": CHAIN_ID, "token_in": "ETH", "token_out": "USDC", "amount": "0.5",
        "version": "v4", "fee": 500, "side": "exact_in"});
    let permit = e.path.preview("swap", &swap).expect("preview");
    assert_eq!(permit.risk_tier, RiskTier::Medium, "no hook: the tool's own tier");
    assert_eq!(permit.expected_outcome["route"]["native"], true);
    let before = e.balance(usdc);
    let done = e.path.commit(&permit.permit_id).expect("commit");
    assert!(done.outcome_mismatch.is_empty(), "{:?}", done.outcome_mismatch);
    assert_eq!(done.ground_truth, "receipt");
    assert_eq!(
        (e.balance(usdc) - before).to_string(),
        done.expected["amount_out_base"].as_str().expect("amount").to_owned(),
        "the wallet got exactly what the permit said"
    );
}

#[test]
fn a_two_pool_v4_exact_out_passes_the_whole_write_path() {
    let e = lp_with(Deployments::write_targets);
    let (usdc, dai) = (e.d.tokens["USDC"].address, e.d.tokens["DAI"].address);
    // No pool pairs USDC with DAI: V4's WETH/USDC, then V4's WETH/DAI, as one set of path keys.
    let swap = json!({"chain_id": CHAIN_ID, "token_in": "USDC", "token_out": "DAI", "amount": "1000",
        "version": "v4", "side": "exact_out"});
    let permit = e.path.preview("swap", &swap).expect("preview");
    assert_eq!(permit.expected_outcome["then"]["route"]["version"], "v4", "{}", permit.expected_outcome);
    let ([usdc_moved, dai_moved], done) = e.write("swap", &swap, [usdc, dai]);
    assert_eq!(done.ground_truth, "receipt");
    assert_eq!(dai_moved, 1000 * 10i128.pow(18), "exactly what was asked");
    assert_eq!(-usdc_moved, int(&done.expected["amount_in_base"]), "exactly what the permit said");
    assert!(
        int(&done.expected["amount_in_base"]) <= int(&done.expected["amount_in_maximum_base"]),
        "within the bound"
    );
}

#[test]
fn a_swap_names_a_hooked_pool_which_needs_a_trusted_hook_and_is_high_risk() {
    let swap = |e: &Lp| {
        json!({"chain_id": CHAIN_ID, "token_in": "USDC", "token_out": "WETH", "amount": "1000", "fee": 3000,
            "hooks": e.d.uniswap_v4["fee_taking_hook"].to_string()})
    };
    let e = lp_with(Deployments::write_targets);
    let hook = e.d.uniswap_v4["fee_taking_hook"];
    // Unnamed, a hooked pool is never a route; named, it is the only one.
    let plain = e
        .call(
            "uniswap_get_quote",
            json!({"chain_id": CHAIN_ID, "token_in": "USDC", "token_out": "WETH",
        "amount": "1000"}),
        )
        .expect("quote");
    let routes = plain["routes"].as_array().expect("routes");
    assert!(
        routes.iter().all(|r| r["route"]["hooks"].is_null() || addr(&r["route"]["hooks"]).is_zero()),
        "{plain}"
    );
    let named = e.call("uniswap_get_quote", swap(&e)).expect("named quote");
    assert_eq!(named["routes"].as_array().expect("routes").len(), 1, "{named}");
    assert_eq!(addr(&named["best"]["route"]["hooks"]), hook);
    for (bad, why) in [
        (json!({"fee": null}), "`fee`"),
        (json!({"version": "v3"}), "`version`"),
        (json!({"tick_spacing": 0}), "`tick_spacing`"),
        (json!({"hooks": "0x12"}), "hooks"),
    ] {
        let mut params = swap(&e);
        for (k, v) in bad.as_object().expect("object") {
            params[k] = v.clone();
        }
        let err = e.call("uniswap_get_quote", params).expect_err("bad key");
        assert_eq!(err.code, ErrorCode::InvalidParams, "{bad}: {err}");
        assert!(err.message.contains(why), "{bad}: {err}");
    }
    // Its hook can change what the swapper receives (afterSwapReturnDelta): refused untrusted.
    let refused = e.path.preview("swap", &swap(&e)).expect_err("untrusted hook");
    assert_eq!(refused.code, ErrorCode::Denied, "{refused}");
    assert!(refused.message.contains("may change the amounts"), "{refused}");
    drop(e);

    let e = lp_with(|d| {
        let mut roles = d.write_targets();
        roles.insert(d.uniswap_v4["fee_taking_hook"], Role::V4Hook);
        roles
    });
    let permit = e.path.preview("swap", &swap(&e)).expect("trusted hook");
    assert_eq!(permit.risk_tier, RiskTier::High, "a hooked pool raises the tool's Medium");
    assert_eq!(addr(&permit.expected_outcome["route"]["hooks"]), hook);
    let (usdc, weth) = (e.d.tokens["USDC"].address, e.d.tokens["WETH"].address);
    let ([usdc_moved, weth_moved], done) = e.write("swap", &swap(&e), [usdc, weth]);
    assert_eq!(usdc_moved, -1000 * 10i128.pow(6));
    assert_eq!(weth_moved, int(&done.expected["amount_out_base"]), "the quote, the hook's cut included");
    assert_eq!(addr(&done.actual["route"]["hooks"]), hook, "verify names the hooked pool");
}
