//! Facts nobody can forge. A V4 hook that emits the PoolManager's events, a contract posing as a
//! V2 pair, a swap with no minimum the chain enforces, a deposit at a price the plan itself
//! pushed: each is refused at preview by the hook that names its cause, through the honest
//! plugin and through an attacker's own plan, and the devnet's balances are unchanged. A swap
//! with its honest minimum, sandwiched in the block that mines it, reverts on its own bound.

use super::attacks::{Env, STRANGER, env, refused};
use alloy::network::TransactionBuilder;
use alloy::primitives::aliases::{I24, U24};
use alloy::primitives::{Address, B256, I256, U256, keccak256};
use alloy::providers::ProviderBuilder;
use alloy::rpc::types::TransactionRequest;
use alloy::sol;
use alloy::sol_types::SolCall;
use bardo_core::ErrorCode;
use bardo_core::scope::Role;
use bardo_devnet::CHAIN_ID;
use bardo_test_support::runtime;
use serde_json::{Value, json};

sol! {
    struct PoolKey { address currency0; address currency1; uint24 fee; int24 tickSpacing; address hooks; }
    struct ModifyLiquidityParams { int24 tickLower; int24 tickUpper; int256 liquidityDelta; bytes32 salt; }
    function initialize(PoolKey key, uint160 sqrtPriceX96) external returns (int24 tick);
    function modifyLiquidity(PoolKey key, ModifyLiquidityParams params, bytes hookData) external payable returns (int256 delta);
    function getSlot0(bytes32 poolId) external view returns (uint160 sqrtPriceX96, int24 tick, uint24 protocolFee, uint24 lpFee);
    struct Forgery { bytes32 id; address currency0; address currency1; uint160 sqrtPriceX96; int24 tick; address sender;
        int24 tickLower; int24 tickUpper; int256 liquidityDelta; bytes32 salt; }
    function arm(Forgery f) external;
    function balanceOf(address account) external view returns (uint256);
    struct ExactInputSingleParams { address tokenIn; address tokenOut; uint24 fee; address recipient; uint256 deadline;
        uint256 amountIn; uint256 amountOutMinimum; uint160 sqrtPriceLimitX96; }
    function exactInputSingle(ExactInputSingleParams params) external payable returns (uint256 amountOut);
    function approve(address spender, uint256 amount) external returns (bool);
}

/// Full range at a tick spacing of 60.
const FULL_RANGE: (i32, i32) = (-887_220, 887_220);

impl Env {
    /// Send `data` to `to` from the deployer (the devnet's setup, not a plan).
    fn setup(&self, to: Address, data: Vec<u8>) {
        let provider = ProviderBuilder::new().connect_http(self.node.url().parse().expect("url"));
        let tx = TransactionRequest::default().from(self.d.deployer).to(to).with_input(data);
        let receipt = runtime().block_on(bardo_test_support::send(&provider, tx));
        assert!(receipt.status(), "setup call to {to} reverted");
    }

    fn quote(&self, params: Value) -> U256 {
        let q = self.host.call("uniswap_get_quote", &params.to_string()).result.expect("quote");
        let q: Value = serde_json::from_str(&q).expect("json");
        q["best"]["amount_out_base"].as_str().expect("amount").parse().expect("u256")
    }

    fn balance(&self, token: Address) -> U256 {
        self.view(token, balanceOfCall { account: self.wallet })
    }
}

/// `amount` less `bps`.
fn less(amount: U256, bps: u64) -> U256 {
    amount * U256::from(10_000 - bps) / U256::from(10_000u64)
}

/// An honest declaration of a USDC → WETH swap through the UniversalRouter: `usdc` paid, at
/// least `min` WETH back, the Permit2 allowances of exactly the amount.
fn swap_outcome(e: &Env, usdc: U256, min: U256) -> Value {
    let (weth, usdc_token) = (e.token("WETH"), e.token("USDC"));
    let (router, permit2) = (e.d.uniswap_v4["universal_router"], e.d.uniswap_v4["permit2"]);
    json!(json!({
        "balance_changes": [
            {"token": usdc_token.to_string(), "delta": format!("-{usdc}")},
            {"token": weth.to_string(), "delta": min.to_string(), "tolerance": (min * U256::from(2u8)).to_string()}],
        "authorities": [
            {"token": usdc_token.to_string(), "spender": permit2.to_string(), "amount": usdc.to_string()},
            {"token": usdc_token.to_string(), "spender": router.to_string(), "amount": usdc.to_string(),
                "permit2": true, "expiration": "281474976710655"}]})
    .to_string())
}

#[test]
fn a_hook_that_forges_the_pool_managers_events_is_no_evidence() {
    let e = env();
    let (weth, usdc) = (e.token("WETH"), e.token("USDC"));
    let (manager, posm) = (e.d.uniswap_v4["pool_manager"], e.d.uniswap_v4["position_manager"]);
    let hook = e.d.fixtures["forging_hook"];
    // The wallet holds a V4 position (minted through the write path): what the forged deposit names.
    let mint = json!({"chain_id": CHAIN_ID, "version": "v4", "token_a": "WETH", "token_b": "USDC", "fee": 3000,
        "amount_a": "0.05", "amount_b": "100", "full_range": true});
    let minted = e.scoped.preview("add-liquidity", &mint).expect("preview a V4 position");
    let minted = e.scoped.commit(&minted.permit_id).expect("mint a V4 position");
    let position: U256 = minted.expected["position_id"].as_str().expect("id").parse().expect("u256");

    // A WETH/USDC pool behind the hook, at the fair price of the plain one, with ~$450 a side.
    let (c0, c1) = (weth.min(usdc), weth.max(usdc));
    let plain = e.d.uniswap_v4_pools.iter().find(|p| p.fee == 3000 && p.hooks.is_zero()).expect("plain pool");
    let fair = e.view(e.d.uniswap_v4["state_view"], getSlot0Call { poolId: plain.id });
    let key = PoolKey {
        currency0: c0,
        currency1: c1,
        fee: U24::from(3000),
        tickSpacing: I24::try_from(60).expect("60"),
        hooks: hook,
    };
    e.setup(manager, initializeCall { key: key.clone(), sqrtPriceX96: fair.sqrtPriceX96 }.abi_encode());
    let thin = ModifyLiquidityParams {
        tickLower: I24::try_from(FULL_RANGE.0).expect("tick"),
        tickUpper: I24::try_from(FULL_RANGE.1).expect("tick"),
        liquidityDelta: I256::try_from(10_000_000_000_000i64).expect("liquidity"),
        salt: B256::ZERO,
    };
    let add = modifyLiquidityCall { key, params: thin, hookData: Default::default() };
    e.setup(e.d.uniswap_v4["modify_liquidity_router"], add.abi_encode());
    // Armed: during every swap it "initialises" a pool at the fair price and "deposits" ~$10,700
    // of liquidity into the wallet's position there, as if the PositionManager had.
    let forgery = Forgery {
        id: keccak256("a pool nobody made"),
        currency0: c0,
        currency1: c1,
        sqrtPriceX96: fair.sqrtPriceX96,
        tick: fair.tick,
        sender: posm,
        tickLower: I24::try_from(FULL_RANGE.0).expect("tick"),
        tickUpper: I24::try_from(FULL_RANGE.1).expect("tick"),
        liquidityDelta: I256::try_from(120_000_000_000_000i64).expect("liquidity"),
        salt: B256::from(position),
    };
    e.setup(hook, armCall { f: forgery }.abi_encode());
    let before = e.state(None);

    // The honest plugin's swap of $10,000 through the hooked pool (afterSwap only, no return
    // delta): the hook is not one the operator trusts.
    let swap = json!({"chain_id": CHAIN_ID, "token_in": "USDC", "token_out": "WETH", "amount": "10000",
        "version": "v4", "fee": 3000, "tick_spacing": 60, "hooks": hook.to_string()});
    refused(&e.scoped, "swap", &swap, "allowlist-guard", "does not trust");
    refused(&e.scoped, "swap", &swap, "allowlist-guard", "grants after-swap)");
    // Trusted as a hook, its events are still not the PoolManager's: the swap gives $10,000
    // for ~$450 and nothing the hook says makes up for it.
    let mut roles = e.d.write_targets();
    roles.insert(hook, Role::V4Hook);
    let trusting = e.path_with("trusting", roles);
    refused(&trusting, "swap", &swap, "value-guard", "it would lose");
    // An attacker's own UniversalRouter plan through the same pool, its minimum honest.
    let quoted = e
        .quote(json!({"chain_id": CHAIN_ID, "token_in": "USDC", "token_out": "WETH", "amount": "10000",
        "version": "v4", "fee": 3000, "tick_spacing": 60, "hooks": hook.to_string()}));
    let amount = U256::from(10_000_000_000u64);
    let mut attack = e.params(
        e.d.uniswap_v4["universal_router"],
        json!({"token": usdc.to_string(), "token_out": weth.to_string(), "amount": amount.to_string(),
            "hooks": hook.to_string(), "minimum": less(quoted, 50).to_string()}),
    );
    attack["outcome"] = swap_outcome(&e, amount, less(quoted, 50));
    refused(&trusting, "attack-hooked", &attack, "value-guard", "it would lose");
    assert_eq!(e.state(None), before, "nothing moved");
}

#[test]
fn a_contract_posing_as_a_pair_is_no_counterparty() {
    let e = env();
    let (weth, usdc) = (e.token("WETH"), e.token("USDC"));
    let fake = e.d.fixtures["fake_pair"];
    let router = e.d.uniswap_v3["swap_router"];
    // Every contract unscoped, the fake pair too: only what the host derives stands in the way.
    let mut roles: std::collections::BTreeMap<Address, Role> =
        e.d.write_targets().into_keys().map(|a| (a, Role::Unscoped)).collect();
    roles.insert(fake, Role::Unscoped);
    let loose = e.path_with("loose-pair", roles);
    let quoted = e
        .quote(json!({"chain_id": CHAIN_ID, "token_in": "USDC", "token_out": "WETH", "amount": "1000",
        "version": "v3", "fee": 3000}));
    let (amount, skim) = (U256::from(1_000_000_000u64), U256::from(10_000_000u64));
    let min = less(quoted, 50);
    let mut params = e.params(
        router,
        json!({"token": usdc.to_string(), "token_out": weth.to_string(), "amount": amount.to_string(),
            "minimum": min.to_string(), "pair": fake.to_string(), "skim": skim.to_string()}),
    );
    // Declared honestly: $1,010 out, the swap's WETH back. $10 to the "pair" is within every
    // loss tolerance; only the pair's being no pool gives it away.
    params["outcome"] = json!(
        json!({"balance_changes": [
        {"token": usdc.to_string(), "delta": format!("-{}", amount + skim)},
        {"token": weth.to_string(), "delta": min.to_string(), "tolerance": min.to_string()}]})
        .to_string()
    );
    let before = e.state(None);
    refused(
        &loose,
        "attack-fake-pair",
        &params,
        "stranded-value",
        &format!("in {fake}, which gave the wallet nothing"),
    );
    assert_eq!(e.state(None), before, "nothing moved");
    // The same plan without the skim passes the same checks: the swap itself was fair.
    params["skim"] = json!("0");
    params["outcome"] = json!(
        json!({"balance_changes": [
        {"token": usdc.to_string(), "delta": format!("-{amount}")},
        {"token": weth.to_string(), "delta": min.to_string(), "tolerance": min.to_string()}]})
        .to_string()
    );
    let permit = loose.preview("attack-fake-pair", &params).expect("a fair swap with a Sync from nobody");
    loose.cancel(&permit.permit_id).expect("cancel");
}

#[test]
fn a_swap_the_chain_does_not_bound_is_refused_at_preview() {
    let e = env();
    let (weth, usdc) = (e.token("WETH"), e.token("USDC"));
    let router = e.d.uniswap_v4["universal_router"];
    let quoted = e
        .quote(json!({"chain_id": CHAIN_ID, "token_in": "USDC", "token_out": "WETH", "amount": "1000",
        "version": "v3", "fee": 3000}));
    let amount = U256::from(1_000_000_000u64);
    let with_minimum = |minimum: U256| {
        let mut p = e.params(
            router,
            json!({"token": usdc.to_string(), "token_out": weth.to_string(), "amount": amount.to_string(),
                "minimum": minimum.to_string()}),
        );
        p["outcome"] = swap_outcome(&e, amount, less(quoted, 600));
        p
    };
    let before = e.state(None);
    // No minimum at all: a sandwich takes what it likes; the simulation was fair, which is why
    // the chain must be made to hold it.
    refused(
        &e.scoped,
        "attack-no-minimum",
        &with_minimum(U256::ZERO),
        "on-chain-bounds",
        "as little as 0 of ether or WETH",
    );
    refused(&e.scoped, "attack-no-minimum", &with_minimum(U256::ZERO), "on-chain-bounds", "call 3 of 3");
    refused(
        &e.scoped,
        "attack-no-minimum",
        &with_minimum(U256::ZERO),
        "on-chain-bounds",
        "V3_SWAP_EXACT_IN amountOutMin",
    );
    // 5 % under: looser than [safety] max_slippage_bps.
    refused(
        &e.scoped,
        "attack-no-minimum",
        &with_minimum(less(quoted, 500)),
        "on-chain-bounds",
        "max_slippage_bps 100 below",
    );
    // Half a percent under: what an honest plan sets; the permit records it as the worst case.
    let permit = e.scoped.preview("attack-no-minimum", &with_minimum(less(quoted, 50))).expect("bounded");
    let worst = permit.worst_case.iter().find(|w| w.asset.is_none()).expect("a worst case for ether or WETH");
    assert_eq!(worst.amount, less(quoted, 50).to_string());
    assert!(worst.enforced_by.contains("V3_SWAP_EXACT_IN amountOutMin"), "{worst:?}");
    e.scoped.cancel(&permit.permit_id).expect("cancel");
    assert_eq!(e.state(None), before, "nothing moved");
    let _ = STRANGER;
}

#[test]
fn a_sandwiched_honest_swap_reverts_on_its_own_minimum() {
    let e = env();
    let (usdc, weth) = (e.token("USDC"), e.token("WETH"));
    // The honest plugin's own minimum: half a percent under its quote.
    let params = json!({"chain_id": CHAIN_ID, "token_in": "USDC", "token_out": "WETH", "amount": "1000", "version": "v3"});
    let permit = e.scoped.preview("swap", &params).expect("preview");
    assert!(!permit.worst_case.is_empty(), "the permit records what the chain enforces");
    let before = (e.balance(usdc), e.balance(weth));
    // $50,000 bought ahead of it on every WETH/USDC V3 pool, in the block that mines it.
    let result = e.sandwiched(U256::from(50_000_000_000u64), || e.scoped.commit(&permit.permit_id));
    let err = result.expect_err("the swap reverts on its minimum out");
    assert!(
        matches!(err.code, ErrorCode::Reverted | ErrorCode::PartiallyExecuted),
        "the chain held the bound: {err}"
    );
    let (usdc_after, weth_after) = (e.balance(usdc), e.balance(weth));
    assert_eq!(weth_after, before.1, "no WETH at the sandwiched price");
    assert_eq!(usdc_after, before.0, "no USDC given for it");
}

#[test]
fn a_deposit_at_a_price_the_plan_pushed_is_refused_by_the_price_guard() {
    let e = env();
    let (weth, usdc) = (e.token("WETH"), e.token("USDC"));
    let (router, npm) = (e.d.uniswap_v3["swap_router"], e.d.uniswap_v3["position_manager"]);
    // $30,000 into the 0.3 % WETH/USDC pool moves its price ~6 %; then a deposit into it.
    let push = U256::from(30_000_000_000u64);
    let (deposit_usdc, deposit_weth) = (U256::from(1_000_000_000u64), U256::from(500_000_000_000_000_000u64));
    let mut params = e.params(
        router,
        json!({"token": usdc.to_string(), "token_out": weth.to_string(), "amount": push.to_string(),
            "spender": npm.to_string(), "deposit": [deposit_usdc.to_string(), deposit_weth.to_string()]}),
    );
    params["outcome"] = json!(json!({
        "balance_changes": [
            {"token": usdc.to_string(), "delta": format!("-{}", push + deposit_usdc), "tolerance": deposit_usdc.to_string()},
            {"token": weth.to_string(), "delta": format!("-{deposit_weth}"), "tolerance": "100000000000000000000"}],
        "authorities": [
            {"token": usdc.to_string(), "spender": npm.to_string(), "amount": deposit_usdc.to_string()},
            {"token": weth.to_string(), "spender": npm.to_string(), "amount": deposit_weth.to_string()}],
        "nfts": [{"collection": npm.to_string(), "gained": true}]})
    .to_string());
    let before = e.state(None);
    refused(
        &e.scoped,
        "attack-push-then-deposit",
        &params,
        "price-guard",
        "a price its own swaps pushed it to",
    );
    assert_eq!(e.state(None), before, "nothing moved");
}

#[test]
fn a_swap_priced_by_a_stale_feed_is_refused() {
    let e = env();
    // WBTC's feed last answered in 1970.
    let feed = e.d.feeds["WBTC"];
    sol! {
        function updateRoundData(uint80 roundId, int256 answer, uint256 timestamp, uint256 startedAt) external;
    }
    let price = I256::try_from(60_000i64 * 100_000_000).expect("answer");
    let stale = updateRoundDataCall {
        roundId: alloy::primitives::aliases::U80::from(99u64),
        answer: price,
        timestamp: U256::from(1),
        startedAt: U256::from(1),
    };
    e.setup(feed, stale.abi_encode());
    let before = e.state(None);
    let swap = json!({"chain_id": CHAIN_ID, "token_in": "WBTC", "token_out": "WETH", "amount": "0.01"});
    refused(&e.scoped, "swap", &swap, "price-guard", &format!("feed {feed} last answered"));
    assert_eq!(e.state(None), before, "nothing moved");
}

#[test]
fn a_third_partys_approve_tool_is_judged_by_its_calls_not_its_name() {
    let e = env();
    let (usdc, router) = (e.token("USDC"), e.d.uniswap_v4["universal_router"]);
    let approve = |amount: U256| {
        let mut p = e.params(usdc, json!({"spender": router.to_string(), "amount": amount.to_string()}));
        p["outcome"] = json!(
            json!({"balance_changes": [], "authorities": [
            {"token": usdc.to_string(), "spender": router.to_string(), "amount": amount.to_string()}]})
            .to_string()
        );
        p
    };
    // Its kind is not `approve`, and it calls nothing but the approval: a bounded approval to an
    // allowlisted spender, counted at its worth.
    let permit = e.scoped.preview("attack-approve", &approve(U256::from(500_000_000u64))).expect("$500");
    assert_eq!(permit.risk_tier, bardo_core::tool::RiskTier::Low, "the tool's own tier: under the threshold");
    e.scoped.cancel(&permit.permit_id).expect("cancel");
    let permit = e.scoped.preview("attack-approve", &approve(U256::from(5_000_000_000u64))).expect("$5,000");
    assert_eq!(permit.risk_tier, bardo_core::tool::RiskTier::High, "over [safety] approval_high_risk_usd");
    e.scoped.cancel(&permit.permit_id).expect("cancel");
    // 2^128 - 1 and $1B: more than the wallet holds.
    for amount in [(U256::from(1u8) << 128) - U256::from(1u8), U256::from(10u64).pow(U256::from(15u8))] {
        refused(
            &e.scoped,
            "attack-approve",
            &approve(amount),
            "approval-exposure",
            "more than the wallet holds",
        );
    }
}
